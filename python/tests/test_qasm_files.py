"""OpenQASM programs against an independent density-matrix simulation.

Random programs over every gate of qelib1.inc and its extensions, with measurements and resets in the
middle, are written out as text; the density matrix is evolved here with numpy from the gates'
textbook matrices (Kraus maps for measure and reset), and ⟨Z⟩, ⟨ZZ⟩, ⟨X⟩, ⟨Y⟩ observables from it are
compared with the library's Heisenberg propagation of the parsed file (no truncation) to 1e-10, and
once through the command line. PAULISTRINGS_QASM_CHECK_QUBITS=12 runs the same check on 12 qubits
(CI uses 6).
"""

import json
import math
import os
import subprocess

import numpy as np
import pytest

from paulistrings import PauliSum, interop

I2 = np.eye(2, dtype=complex)
X = np.array([[0, 1], [1, 0]], dtype=complex)
Y = np.array([[0, -1j], [1j, 0]], dtype=complex)
Z = np.diag([1, -1]).astype(complex)
H = np.array([[1, 1], [1, -1]], dtype=complex) / math.sqrt(2)
SX = 0.5 * np.array([[1 + 1j, 1 - 1j], [1 - 1j, 1 + 1j]])
PAULI = {"X": X, "Y": Y, "Z": Z}


def u3(t, p, l):
    return np.array([[math.cos(t / 2), -np.exp(1j * l) * math.sin(t / 2)],
                     [np.exp(1j * p) * math.sin(t / 2), np.exp(1j * (p + l)) * math.cos(t / 2)]])


def phase(l):
    return np.diag([1, np.exp(1j * l)])


def rot(p, t):
    return math.cos(t / 2) * np.eye(p.shape[0]) - 1j * math.sin(t / 2) * p


def controlled(k, u):
    m = np.eye(u.shape[0] << k, dtype=complex)
    m[-u.shape[0]:, -u.shape[0]:] = u
    return m


def sequence(n, steps):
    """The unitary of (matrix, local qubits) steps on n qubits, first qubit most significant."""
    u = np.eye(2**n, dtype=complex)
    for m, qs in steps:
        u = embed(m, qs, n) @ u
    return u


def embed(m, qs, n):
    k = len(qs)
    t = m.reshape([2] * (2 * k))
    full = np.eye(2**n, dtype=complex).reshape([2] * (2 * n))
    full = np.tensordot(t, full, axes=(list(range(k, 2 * k)), list(qs)))
    full = np.moveaxis(full, list(range(k)), list(qs))
    return full.reshape(2**n, 2**n)


CX = controlled(1, X)
RCCX = sequence(3, [(H, [2]), (phase(math.pi / 4), [2]), (CX, [1, 2]), (phase(-math.pi / 4), [2]), (CX, [0, 2]),
                    (phase(math.pi / 4), [2]), (CX, [1, 2]), (phase(-math.pi / 4), [2]), (H, [2])])
T, TD = phase(math.pi / 4), phase(-math.pi / 4)
RC3X = sequence(4, [(H, [3]), (T, [3]), (CX, [2, 3]), (TD, [3]), (H, [3]), (CX, [0, 3]), (T, [3]), (CX, [1, 3]),
                    (TD, [3]), (CX, [0, 3]), (T, [3]), (CX, [1, 3]), (TD, [3]), (H, [3]), (T, [3]), (CX, [2, 3]),
                    (TD, [3]), (H, [3])])
SWAP = np.eye(4)[[0, 2, 1, 3]].astype(complex)

GATES = {  # name: (parameters, qubits, matrix of the parameters)
    "ccx": (0, 3, lambda v: controlled(2, X)),
    "cswap": (0, 3, lambda v: controlled(1, SWAP)),
    "c3x": (0, 4, lambda v: controlled(3, X)),
    "c4x": (0, 5, lambda v: controlled(4, X)),
    "rccx": (0, 3, lambda v: RCCX),
    "rc3x": (0, 4, lambda v: RC3X),
    "c3sqrtx": (0, 4, lambda v: controlled(3, SX)),
    "cu3": (3, 2, lambda v: controlled(1, u3(*v))),
    "cu": (4, 2, lambda v: controlled(1, np.exp(1j * v[3]) * u3(*v[:3]))),
    "cu1": (1, 2, lambda v: controlled(1, phase(v[0]))),
    "cp": (1, 2, lambda v: controlled(1, phase(v[0]))),
    "crx": (1, 2, lambda v: controlled(1, rot(X, v[0]))),
    "cry": (1, 2, lambda v: controlled(1, rot(Y, v[0]))),
    "crz": (1, 2, lambda v: controlled(1, rot(Z, v[0]))),
    "csx": (0, 2, lambda v: controlled(1, SX)),
    "cy": (0, 2, lambda v: controlled(1, Y)),
    "ch": (0, 2, lambda v: controlled(1, H)),
    "cz": (0, 2, lambda v: controlled(1, Z)),
    "cx": (0, 2, lambda v: CX),
    "swap": (0, 2, lambda v: SWAP),
    "iswap": (0, 2, lambda v: np.array([[1, 0, 0, 0], [0, 0, 1j, 0], [0, 1j, 0, 0], [0, 0, 0, 1]])),
    "rxx": (1, 2, lambda v: rot(np.kron(X, X), v[0])),
    "ryy": (1, 2, lambda v: rot(np.kron(Y, Y), v[0])),
    "rzz": (1, 2, lambda v: rot(np.kron(Z, Z), v[0])),
    "rzx": (1, 2, lambda v: rot(np.kron(Z, X), v[0])),
    "u0": (1, 1, lambda v: I2),
    "u1": (1, 1, lambda v: phase(v[0])),
    "u2": (2, 1, lambda v: u3(math.pi / 2, v[0], v[1])),
    "u3": (3, 1, lambda v: u3(*v)),
    "u": (3, 1, lambda v: u3(*v)),
    "p": (1, 1, lambda v: phase(v[0])),
    "sx": (0, 1, lambda v: SX),
    "sxdg": (0, 1, lambda v: SX.conj().T),
    "id": (0, 1, lambda v: I2),
    "h": (0, 1, lambda v: H),
    "t": (0, 1, lambda v: T),
    "rx": (1, 1, lambda v: rot(X, v[0])),
    "ry": (1, 1, lambda v: rot(Y, v[0])),
}
MEASURE = [np.diag([1, 0]).astype(complex), np.diag([0, 1]).astype(complex)]
RESET = [np.diag([1, 0]).astype(complex), np.array([[0, 1], [0, 0]], dtype=complex)]


def apply(rho, kraus, qs, n):
    """Σ K ρ K† with each K on qubits qs (first most significant), ρ as a 2n-axis tensor."""
    k = len(qs)
    out = np.zeros_like(rho)
    for m in kraus:
        t = m.reshape([2] * (2 * k))
        r = np.tensordot(t, rho, axes=(list(range(k, 2 * k)), list(qs)))
        r = np.moveaxis(r, list(range(k)), list(qs))
        r = np.tensordot(r, t.conj(), axes=([n + q for q in qs], list(range(k, 2 * k))))
        r = np.moveaxis(r, list(range(2 * n - k, 2 * n)), [n + q for q in qs])
        out += r
    return out


def random_program(n, length, rng):
    text = ['OPENQASM 2.0;', 'include "qelib1.inc";', f"qreg q[{n}];", f"creg c[{n}];"]
    rho = np.zeros([2] * (2 * n), dtype=complex)
    rho[(0,) * (2 * n)] = 1.0
    names = sorted(GATES)
    for _ in range(length):
        qs = [int(v) for v in rng.permutation(n)]
        pick = int(rng.integers(len(names) + 4))
        if pick >= len(names):
            if pick % 2:
                text.append(f"measure q[{qs[0]}] -> c[{qs[1]}];")
                rho = apply(rho, MEASURE, [qs[0]], n)
            else:
                text.append(f"reset q[{qs[0]}];")
                rho = apply(rho, RESET, [qs[0]], n)
            continue
        name = names[pick]
        count, arity, matrix = GATES[name]
        values = [float(v) for v in rng.uniform(-math.pi, math.pi, size=count)]
        args = ", ".join(repr(v) for v in values)
        text.append(f"{name}{'(' + args + ')' if count else ''} " + ", ".join(f"q[{q}]" for q in qs[:arity]) + ";")
        rho = apply(rho, [matrix(values)], qs[:arity], n)
    return "\n".join(text) + "\n", rho.reshape(2**n, 2**n)


def dense_pauli(label, n):
    factors = [I2] * n
    for factor in label.split():
        factors[int(factor[1:])] = PAULI[factor[0]]
    out = np.eye(1, dtype=complex)
    for f in factors:
        out = np.kron(out, f)
    return out


def observables(n, rng):
    labels = []
    for _ in range(3):
        a, b = (int(v) for v in rng.choice(n, size=2, replace=False))
        labels += [f"Z{a}", f"Z{a} Z{b}", f"X{a}", f"Y{b}"]
    return labels


@pytest.mark.parametrize("seed", range(3))
def test_random_programs_match_a_density_matrix(seed):
    n = int(os.environ.get("PAULISTRINGS_QASM_CHECK_QUBITS", "6"))
    rng = np.random.default_rng(500 + seed)
    text, rho = random_program(n, 14 * n // 2, rng)
    circuit = interop.circuit_from_qasm(text)
    worst = 0.0
    for label in observables(n, rng):
        expected = np.trace(rho @ dense_pauli(label, n))
        evolved = PauliSum.from_strings({label: 1.0}, num_qubits=n).propagate(circuit, direction="heisenberg")
        worst = max(worst, abs(evolved.expectation("z+") - expected))
    assert worst < 1e-10, (worst, text)


def test_command_line_agrees_with_the_density_matrix(tmp_path):
    cli = os.environ.get("PAULISTRINGS_CLI")
    if not cli:
        pytest.skip("PAULISTRINGS_CLI is not set")
    n = 6
    rng = np.random.default_rng(77)
    text, rho = random_program(n, 40, rng)
    path = tmp_path / "random.qasm"
    path.write_text(text)
    label = "Z1 Z4"
    out = subprocess.run([cli, "run", "--qasm", str(path), "--observable", label, "-q"], check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out)
    value = result["observables"]["observable"]["value"]
    value = complex(*value) if isinstance(value, list) else value
    assert abs(value - np.trace(rho @ dense_pauli(label, n))) < 1e-10
    assert result["measurements"] == text.count("measure ")
    assert result["resets"] == text.count("reset ")
