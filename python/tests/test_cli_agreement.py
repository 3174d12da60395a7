"""Python and the C++ command line agree on the same task files (every gate kind, both
directions, every truncation, product states, several widths), stim programs and OpenQASM files.

Runs the command named by the environment variable PAULISTRINGS_CLI (ctest sets it to the built
``paulistrings``); without it these tests are skipped with that reason.
"""

import json
import math
import os
import subprocess

import numpy as np
import pytest

from paulistrings import PauliSum, interop

CLI = os.environ.get("PAULISTRINGS_CLI")
pytestmark = pytest.mark.skipif(
    not CLI, reason="PAULISTRINGS_CLI is not set (point it at the built `paulistrings` command to compare with the CLI)"
)

GATE_KINDS = ["h", "s", "sdg", "x", "y", "z", "cnot", "cz", "swap", "rz", "rx", "ry", "pauli_rotation",
              "unitary_1q", "unitary_2q", "depolarize", "dephase", "amplitude_damping", "pauli_channel",
              "depolarize2"]


def unitary(dim, rng):
    m = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    q, r = np.linalg.qr(m)
    q = q * (np.diag(r) / np.abs(np.diag(r)))
    return [[[float(v.real), float(v.imag)] for v in row] for row in q]


def random_gate(kind, n, rng):
    q = int(rng.integers(n))
    a, b = (int(v) for v in rng.choice(n, 2, replace=False))
    theta = float(rng.uniform(-math.pi, math.pi))
    p = float(rng.uniform(0, 0.2))
    if kind in ("h", "s", "sdg", "x", "y", "z"):
        return {"name": kind, "qubits": [q]}
    if kind in ("cnot", "cz", "swap"):
        return {"name": kind, "qubits": [a, b]}
    if kind in ("rz", "rx", "ry"):
        return {"name": kind, "qubits": [q], "theta": theta}
    if kind == "pauli_rotation":
        k = int(rng.integers(1, min(n, 4) + 1))
        qs = [int(v) for v in rng.choice(n, k, replace=False)]
        return {"name": kind, "pauli": "".join(rng.choice(list("XYZ"), k)), "qubits": qs, "theta": theta}
    if kind == "unitary_1q":
        return {"name": kind, "qubits": [q], "matrix": unitary(2, rng)}
    if kind == "unitary_2q":
        return {"name": kind, "qubits": [a, b], "matrix": unitary(4, rng)}
    if kind in ("depolarize", "dephase"):
        return {"name": kind, "qubits": [q], "p": p}
    if kind == "amplitude_damping":
        return {"name": kind, "qubits": [q], "gamma": p}
    if kind == "pauli_channel":
        return {"name": kind, "qubits": [q], "px": p / 3, "py": p / 4, "pz": p / 5}
    return {"name": "depolarize2", "qubits": [a, b], "p": p}


def random_task(seed, n, direction, truncation, state, length=40):
    rng = np.random.default_rng(seed)
    kinds = GATE_KINDS + list(rng.choice(GATE_KINDS, length - len(GATE_KINDS)))
    rng.shuffle(kinds)
    gates = [random_gate(k, n, rng) for k in kinds]
    observable = {}
    for _ in range(4):
        label = "".join(rng.choice(list("IXYZ"), n))
        observable[label] = float(rng.normal())
    task = {"version": 1, "n_qubits": n, "circuit": {"gates": gates}, "observable": observable,
            "run": {"direction": direction, "state": state}}
    if truncation:
        task["truncation"] = truncation
    return task


def run_cli(args, tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run([CLI, "run", *map(str, args), "--quiet", "--out", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def cli_value(result, name="observable"):
    v = result["observables"][name]["value"]
    return complex(v[0], v[1]) if isinstance(v, list) else complex(v)


CASES = [
    (1, 5, "heisenberg", None, "z+"),
    (2, 5, "forward", None, "x+"),
    (3, 6, "heisenberg", {"min_abs_coeff": 1e-3}, "0+r1-l"),
    (4, 6, "forward", {"max_weight": 3}, "y+"),
    (5, 6, "heisenberg", {"max_weight": 4, "min_abs_coeff": 1e-4}, "Z+"),
    (6, 5, "heisenberg", {"top_n": 40}, "+-+-+"),
    (7, 5, "forward", {"approx_top_n": 50}, "z+"),
    (8, 70, "heisenberg", {"min_abs_coeff": 1e-5}, "z+"),
    (9, 130, "forward", {"min_abs_coeff": 1e-4}, "x+"),
]


@pytest.mark.parametrize("seed,n,direction,truncation,state", CASES)
def test_task_files_agree(tmp_path, seed, n, direction, truncation, state):
    task = random_task(seed, n, direction, truncation, state)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    result = run_cli([path], tmp_path)
    loaded = interop.load_task(path)
    assert loaded.n_qubits == n and loaded.direction == direction and loaded.state == state
    assert [g["name"] for g in loaded.circuit.gates] == [g["name"] for g in task["circuit"]["gates"]]
    out, stats = loaded.observable.propagate_with_stats(loaded.circuit, loaded.truncation,
                                                        direction=loaded.direction)
    value = out.expectation(loaded.state)
    assert abs(value - cli_value(result)) < 1e-12
    assert len(out) == result["observables"]["observable"]["final_terms"]
    assert stats.peak_terms == result["observables"]["observable"]["peak_terms"]
    assert stats.total_discarded_weight == pytest.approx(result["observables"]["observable"]["discarded_weight"],
                                                         rel=1e-9, abs=1e-15)


def test_gates_written_by_python_run_the_same_in_the_cli(tmp_path):
    task = random_task(11, 4, "heisenberg", {"min_abs_coeff": 1e-9}, "0+1-")
    circuit = interop.circuit_from_json(task["circuit"], 4)
    rewritten = dict(task, circuit={"gates": circuit.gates})
    path = tmp_path / "rewritten.json"
    path.write_text(json.dumps(rewritten))
    original = tmp_path / "original.json"
    original.write_text(json.dumps(task))
    a = run_cli([path], tmp_path)
    b = run_cli([original], tmp_path)
    assert cli_value(a) == cli_value(b)


def test_kicked_ising_task_written_by_the_cli(tmp_path):
    task_path = tmp_path / "ki.json"
    out = tmp_path / "ki_results.json"
    proc = subprocess.run([CLI, "kicked-ising", "--steps", "2", "--theta-h", "0.6", "--coeff", "1e-3",
                           "--write-task", str(task_path), "--quiet", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    loaded = interop.load_task(task_path)
    assert loaded.n_qubits == 127 and list(loaded.observables) == ["Z62"]
    assert loaded.observable is loaded.observables["Z62"]
    evolved = loaded.observable.propagate(loaded.circuit, loaded.truncation, direction=loaded.direction)
    assert abs(evolved.expectation(loaded.state or "z+") - cli_value(result, "Z62")) < 1e-12
    assert len(evolved) == result["observables"]["Z62"]["final_terms"]


STIM = """
H 0
CNOT 0 1
S 2
S_DAG 1
REPEAT 2 {
    CZ 1 2
    X_ERROR(0.01) 0
    TICK
}
SWAP 0 2
DEPOLARIZE1(0.02) 1 2
DEPOLARIZE2(0.03) 0 1
Y_ERROR(0.01) 2
Z_ERROR(0.02) 1
X 0
Y 1
Z 2
OBSERVABLE_INCLUDE(0) Z0 Z1
OBSERVABLE_INCLUDE(1) X2
"""


def test_stim_programs_agree(tmp_path):
    path = tmp_path / "c.stim"
    path.write_text(STIM)
    result = run_cli(["--stim", path, "--state", "0+1"], tmp_path)
    circuit, observable = interop.circuit_from_stim(path)
    assert circuit.num_qubits == 3 and observable is not None
    value = observable.propagate(circuit, direction="heisenberg").expectation("0+1")
    assert abs(value - cli_value(result)) < 1e-12
    from_text, obs2 = interop.circuit_from_stim(STIM)
    assert from_text.gates == circuit.gates and obs2.coefficients() == observable.coefficients()


QASM = """OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
creg c[3];
h q[0];
cx q[0], q[1];
rz(pi/4) q[1];
u3(0.1, 0.2, 0.3) q[2];
rzz(0.5) q[1], q[2];
t q[0];
sx q[2];
cz q[0], q[2];
barrier q;
"""


def test_qasm_programs_agree(tmp_path):
    path = tmp_path / "c.qasm"
    path.write_text(QASM)
    result = run_cli(["--qasm", path, "--observable", "Z0 Z1", "--observable", "0.5*X2", "--state", "+0r"],
                     tmp_path)
    circuit = interop.circuit_from_qasm(path)
    observable = PauliSum.from_strings({"Z0 Z1": 1.0, "X2": 0.5}, num_qubits=3)
    value = observable.propagate(circuit, direction="heisenberg").expectation("+0r")
    assert abs(value - cli_value(result)) < 1e-12
    assert interop.circuit_from_qasm(QASM).gates == circuit.gates


def test_bad_task_is_rejected_by_both(tmp_path):
    task = random_task(12, 3, "heisenberg", None, "z+")
    task["circuit"]["gates"][3] = {"name": "rz", "qubits": [0]}  # theta missing
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(task))
    proc = subprocess.run([CLI, "run", str(path), "--quiet"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    with pytest.raises(ValueError, match=r"circuit\.gates\[3\]"):
        interop.load_task(path)
