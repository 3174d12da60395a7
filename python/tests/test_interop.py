"""paulistrings.interop: task JSON, stim, OpenQASM and qiskit importers (no CLI needed)."""

import json
import math
import types

import numpy as np
import pytest

from paulistrings import Circuit, PauliSum, interop


def v1_task(**overrides):
    task = {
        "version": 1,
        "n_qubits": 2,
        "circuit": {"gates": [{"name": "h", "qubits": [0]}, {"name": "cnot", "qubits": [0, 1]},
                              {"name": "rz", "qubits": [1], "theta": 0.25}]},
        "observable": {"ZZ": 1.0, "XI": [0.5, -0.5]},
        "truncation": {"max_weight": 2, "min_abs_coeff": 1e-9},
        "run": {"direction": "heisenberg"},
    }
    task.update(overrides)
    return task


def test_load_task_from_dict_and_path(tmp_path):
    raw = v1_task()
    task = interop.load_task(raw)
    assert isinstance(task, interop.Task)
    assert task.n_qubits == 2 and len(task.circuit) == 3
    assert task.direction == "heisenberg" and task.threads == 1 and task.state is None
    assert repr(task.truncation) == "Truncation(And(Weight(2), Coeff(1e-9)))"
    assert sorted(task.observable.coefficients(), key=abs) == [0.5 - 0.5j, 1.0]
    assert task.raw is raw
    with pytest.raises(AttributeError):
        task.n_qubits = 3  # frozen
    path = tmp_path / "t.json"
    path.write_text(json.dumps(v1_task(run={"direction": "forward", "threads": 4, "state": "0+"})))
    from_path = interop.load_task(path)
    assert from_path.direction == "forward" and from_path.threads == 4 and from_path.state == "0+"
    assert from_path.circuit.gates == task.circuit.gates
    assert interop.load_task(str(path)).n_qubits == 2
    no_trunc = interop.load_task(v1_task(truncation={}))
    assert no_trunc.truncation is None
    bare = dict(v1_task())
    del bare["observable"], bare["truncation"]
    t = interop.load_task(bare)
    assert t.observable is None and t.truncation is None


def test_load_task_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown"):
        interop.load_task(v1_task(extra=1))
    with pytest.raises(ValueError, match="version"):
        interop.load_task(v1_task(version=2))
    with pytest.raises(ValueError, match="direction"):
        interop.load_task(v1_task(run={}))
    with pytest.raises(ValueError, match="direction"):
        interop.load_task(v1_task(run={"direction": "sideways"}))
    bad_gate = v1_task()
    bad_gate["circuit"]["gates"].append({"name": "toffoli", "qubits": [0, 1]})
    with pytest.raises(ValueError, match="toffoli"):
        interop.load_task(bad_gate)
    missing = v1_task()
    del missing["run"]
    with pytest.raises(ValueError, match="run"):
        interop.load_task(missing)
    out_of_range = v1_task()
    out_of_range["circuit"]["gates"].append({"name": "h", "qubits": [5]})
    with pytest.raises(ValueError):
        interop.load_task(out_of_range)
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    with pytest.raises(ValueError):
        interop.load_task(broken)
    with pytest.raises(FileNotFoundError):
        interop.load_task(tmp_path / "missing.json")


def test_circuit_from_json_and_stim_file(tmp_path):
    c = interop.circuit_from_json({"gates": [{"name": "sdg", "qubits": [2]},
                                             {"name": "pauli_rotation", "pauli": "XY", "qubits": [0, 2],
                                              "theta": np.float64(0.5)}]}, 3)
    assert isinstance(c, Circuit) and c.num_qubits == 3 and len(c) == 2
    (tmp_path / "prog.stim").write_text("H 0\nCX 0 1\nOBSERVABLE_INCLUDE(0) Z1\n")
    from_file = interop.circuit_from_json({"stim_file": "prog.stim"}, 2, base_dir=tmp_path)
    assert [g["name"] for g in from_file.gates] == ["h", "cnot"]
    task_path = tmp_path / "stim_task.json"
    task_path.write_text(json.dumps({"version": 1, "n_qubits": 2, "circuit": {"stim_file": "prog.stim"},
                                     "run": {"direction": "heisenberg"}}))
    task = interop.load_task(task_path)
    assert task.observable.coefficients() == [1.0]  # the stim file's OBSERVABLE_INCLUDE
    with pytest.raises(ValueError):
        interop.circuit_from_json({"gates": [], "stim_file": "prog.stim"}, 2, base_dir=tmp_path)
    with pytest.raises(ValueError):
        interop.circuit_from_json({}, 2)
    with pytest.raises(ValueError):
        interop.circuit_from_json([], 2)
    with pytest.raises(ValueError, match="theta"):
        interop.circuit_from_json({"gates": [{"name": "rx", "qubits": [0]}]}, 2)


def test_circuit_from_stim_text_path_and_object(tmp_path):
    text = "H 0\nS_DAG 1\nCNOT 0 1 1 2\nX_ERROR(0.1) 2\nI 0\nTICK\nOBSERVABLE_INCLUDE(0) X0 Y2\nOBSERVABLE_INCLUDE(3) X0 Y2\n"
    circuit, observable = interop.circuit_from_stim(text)
    assert [g["name"] for g in circuit.gates] == ["h", "sdg", "cnot", "cnot", "pauli_channel"]
    assert circuit.gates[4] == {"name": "pauli_channel", "qubits": [2], "px": 0.1, "py": 0.0, "pz": 0.0}
    assert observable.coefficients() == [2.0]  # duplicates add up
    path = tmp_path / "c.stim"
    path.write_text(text)
    assert interop.circuit_from_stim(path)[0].gates == circuit.gates
    assert interop.circuit_from_stim(str(path))[0].gates == circuit.gates
    fake_stim_circuit = type("Circuit", (), {"__module__": "stim", "__str__": lambda self: "H 0\nH 1"})()
    c2, obs2 = interop.circuit_from_stim(fake_stim_circuit)
    assert len(c2) == 2 and obs2 is None
    with pytest.raises(ValueError, match="record targets"):
        interop.circuit_from_stim("H 0\nM 0\nCX rec[-1] 1\n")
    with pytest.raises(ValueError):
        interop.circuit_from_stim("DETECTOR 0\n")
    with pytest.raises(ValueError):
        interop.circuit_from_stim("CX 0\n")
    with pytest.raises(TypeError):
        interop.circuit_from_stim(42)


def test_circuit_from_qasm(tmp_path):
    text = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg a[1];\nqreg b[2];\nh a[0];\ncx a[0], b[1];\nrx(pi/2) b[0];\n'
    c = interop.circuit_from_qasm(text)
    assert c.num_qubits == 3
    assert c.gates == [{"name": "h", "qubits": [0]}, {"name": "cnot", "qubits": [0, 2]},
                       {"name": "rx", "qubits": [1], "theta": math.pi / 2}]
    assert interop.circuit_from_qasm(text, num_qubits=5).num_qubits == 5
    path = tmp_path / "c.qasm"
    path.write_text(text)
    assert interop.circuit_from_qasm(path).gates == c.gates
    measured = interop.circuit_from_qasm('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[1];\nmeasure q[0] -> c[0];\n')
    assert measured.gates == [{"name": "measure", "qubits": [0]}]
    with pytest.raises(ValueError, match="classical control 'if'"):
        interop.circuit_from_qasm('OPENQASM 2.0;\nqreg q[1];\ncreg c[1];\nif (c == 1) x q[0];\n')
    with pytest.raises(ValueError):
        interop.circuit_from_qasm(text, num_qubits=2)


class FakeBit:
    def __init__(self, index):
        self.index = index


class FakeInstruction:
    def __init__(self, name, qubits, params=()):
        self.operation = types.SimpleNamespace(name=name, params=list(params), condition=None)
        self.qubits = qubits


class FakeQuantumCircuit:
    """Just enough of qiskit's QuantumCircuit for the named-gate mapping."""

    def __init__(self, n, data):
        self.num_qubits = n
        self.data = data

    def find_bit(self, q):
        return FakeBit(q)


def test_circuit_from_qiskit_named_gates():
    qc = FakeQuantumCircuit(3, [
        FakeInstruction("h", [0]), FakeInstruction("sdg", [1]), FakeInstruction("cx", [0, 2]),
        FakeInstruction("rz", [1], [0.5]), FakeInstruction("barrier", [0, 1, 2]),
        FakeInstruction("rzz", [1, 2], [0.25]), FakeInstruction("swap", [0, 1]),
    ])
    c = interop.circuit_from_qiskit(qc)
    assert [g["name"] for g in c.gates] == ["h", "sdg", "cnot", "rz", "pauli_rotation", "swap"]
    assert c.gates[4] == {"name": "pauli_rotation", "qubits": [1, 2], "pauli": "ZZ", "theta": 0.25}
    measured = interop.circuit_from_qiskit(
        FakeQuantumCircuit(2, [FakeInstruction("measure", [1]), FakeInstruction("reset", [0]),
                               FakeInstruction("delay", [0], [100])]))
    assert measured.gates == [{"name": "measure", "qubits": [1]}, {"name": "reset", "qubits": [0]}]
    with pytest.raises(ValueError, match="acts on 3 qubits"):
        interop.circuit_from_qiskit(FakeQuantumCircuit(3, [FakeInstruction("mystery", [0, 1, 2])]))
    with pytest.raises(ValueError, match="classically controlled"):
        interop.circuit_from_qiskit(FakeQuantumCircuit(1, [FakeInstruction("if_else", [0])]))


def _propagated(circuit, terms, n):
    from test_dense_oracle import labels_of

    return labels_of(PauliSum.from_strings(terms, num_qubits=n).propagate(circuit, direction="heisenberg"))


def test_circuit_from_qiskit_three_qubit_and_controlled_gates_match_the_qasm_library():
    terms = {"XIZY": 0.7, "ZZXI": -0.4, "IYYX": 0.25, "XXXX": 0.5}
    header = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[4];\n'
    # ccx and cswap by name, mcx by its control count, a negated control through ctrl_state.
    ccx = FakeInstruction("ccx", [2, 0, 3])
    mcx = FakeInstruction("mcx", [0, 1, 2, 3])
    mcx.operation.num_ctrl_qubits = 3
    negated = FakeInstruction("mcx", [1, 3, 0])
    negated.operation.num_ctrl_qubits = 2
    negated.operation.ctrl_state = 0b01  # control 1 (qubit 3) on |0⟩
    qc = FakeQuantumCircuit(4, [ccx, FakeInstruction("cswap", [1, 2, 0]), mcx, negated])
    expected = interop.circuit_from_qasm(
        header + "ccx q[2], q[0], q[3];\ncswap q[1], q[2], q[0];\nc3x q[0], q[1], q[2], q[3];\n"
        "x q[3];\nccx q[1], q[3], q[0];\nx q[3];\n")
    actual = _propagated(interop.circuit_from_qiskit(qc), terms, 4)
    reference = _propagated(expected, terms, 4)
    assert set(actual) == set(reference)
    for label in reference:
        assert abs(actual[label] - reference[label]) < 1e-12


def test_circuit_from_qasm_reads_openqasm3_with_params_and_registers():
    text = ('OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] theta;\nqubit[2] a;\nqubit[1] b;\n'
            "bit[3] c;\nrz(theta) a[1];\nctrl @ x a[0], b[0];\nc[0] = measure a[0];\nreset b;\n")
    c = interop.circuit_from_qasm(text, params={"theta": 0.5})
    assert c.num_qubits == 3
    assert c.gates[0] == {"name": "rz", "qubits": [1], "theta": 0.5}
    assert [g["name"] for g in c.gates[-2:]] == ["measure", "reset"]
    assert interop.qasm_registers(text, params={"theta": 0.0}) == {"a": [0, 1], "b": [2]}
    with pytest.raises(ValueError, match="input 'theta' has no value"):
        interop.circuit_from_qasm(text)
    with pytest.raises(ValueError, match="no input of that name"):
        interop.circuit_from_qasm(text, params={"theta": 0.1, "phi": 2.0})
    # Input values are finite numbers, never text that happens to parse.
    with pytest.raises(TypeError, match=r"params\['theta'\]: must be real number, not str"):
        interop.circuit_from_qasm(text, params={"theta": "0.5"})
    with pytest.raises(ValueError, match=r"params\['theta'\]: nan is not a finite number"):
        interop.circuit_from_qasm(text, params={"theta": float("nan")})
    with pytest.raises(TypeError, match="params: expected a mapping"):
        interop.circuit_from_qasm(text, params=[("theta", 0.5)])
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        interop.circuit_from_qasm(text, num_qubits=3.0, params={"theta": 0.5})
    assert interop.circuit_from_qasm(text, params={"theta": np.float64(0.5)}).gates[0]["theta"] == 0.5
    with pytest.raises(ValueError, match=r"<qasm>:3:1: loop 'for' is not supported"):
        interop.circuit_from_qasm('OPENQASM 3;\nqubit q;\nfor int i in [0:1] { x q; }\n')
    with pytest.warns(UserWarning, match="no 'OPENQASM' version line"):
        old = interop.circuit_from_qasm('include "qelib1.inc";\nqreg q[1];\nh q[0];\n')
    assert old.gates == [{"name": "h", "qubits": [0]}]


def test_circuit_from_stim_measurements():
    c, obs = interop.circuit_from_stim("H 0\nCX 0 1\nM 0\nMPP X0*X1\nR 1\nDETECTOR rec[-1]\nOBSERVABLE_INCLUDE(0) Z0\n")
    assert [g["name"] for g in c.gates] == ["h", "cnot", "measure", "measure_pauli", "reset"]
    assert obs is not None


def test_circuit_from_qiskit_real_qiskit():
    qiskit = pytest.importorskip("qiskit", reason="qiskit is not installed")
    qc = qiskit.QuantumCircuit(2)
    qc.h(0)
    qc.t(1)
    qc.cx(0, 1)
    qc.cy(1, 0)
    c = interop.circuit_from_qiskit(qc)
    obs = PauliSum.from_strings({"ZZ": 1.0, "XI": 0.5})
    from qiskit.quantum_info import Operator, SparsePauliOp

    u = Operator(qc).data
    # qiskit labels are little-endian (rightmost = qubit 0)
    op = SparsePauliOp.from_list([("ZZ", 1.0), ("IX", 0.5)]).to_matrix()
    expected = u.conj().T @ op @ u
    got = obs.propagate(c, direction="heisenberg")
    assert abs(got.expectation("z+") - expected[0, 0]) < 1e-12


def test_stabilizers_from_stim():
    try:
        import stim  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="stim"):
            interop.stabilizers_from_stim("H 0\nCNOT 0 1")
        return
    gens = interop.stabilizers_from_stim("H 0\nCNOT 0 1", num_qubits=3)
    assert len(gens) == 3 and gens[-1] == "+IIZ"
    obs = PauliSum.from_strings({"XXI": 1.0, "ZZI": 1.0, "IIZ": 1.0})
    assert obs.expectation_stabilizer(gens) == 3.0
