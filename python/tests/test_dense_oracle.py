"""Python results against an independent dense calculation.

The oracle below is written from the textbook definitions only: gate matrices, Kraus operators,
operators as 2^n × 2^n matrices (qubit 0 = the most significant tensor factor, so that
``unitary_2q(q0, q1, M)`` acts on |q0 q1⟩ as documented), forward = U·A·U† / Σ K·A·K† in circuit
order, Heisenberg = U†·A·U / Σ K†·A·K from the last gate to the first. Every gate and noise
channel of the API appears in the random circuits, in both directions, and the read-outs
(product and stabilizer states, overlap, anticommute histogram, rotated overlap) are checked too.
"""

import itertools
import math

import numpy as np
import pytest

import paulistrings
from paulistrings import Circuit, PauliSum

I2 = np.eye(2, dtype=complex)
X = np.array([[0, 1], [1, 0]], dtype=complex)
Y = np.array([[0, -1j], [1j, 0]], dtype=complex)
Z = np.array([[1, 0], [0, -1]], dtype=complex)
PAULI = {"I": I2, "X": X, "Y": Y, "Z": Z}
H = np.array([[1, 1], [1, -1]], dtype=complex) / math.sqrt(2)
S = np.diag([1, 1j])
CNOT = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=complex)
CZ = np.diag([1, 1, 1, -1]).astype(complex)
SWAP = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]], dtype=complex)


def kron_all(factors):
    out = np.eye(1, dtype=complex)
    for f in factors:
        out = np.kron(out, f)
    return out


def pauli_matrix(label):
    return kron_all(PAULI[ch] for ch in label)


def embed(matrix, qubits, n):
    """A k-qubit matrix acting on `qubits` (first = most significant local factor) as 2^n × 2^n."""
    k = len(qubits)
    dim = 2**n
    full = np.zeros((dim, dim), dtype=complex)
    others = [q for q in range(n) if q not in qubits]
    for rest in itertools.product([0, 1], repeat=len(others)):
        for a in range(2**k):
            for b in range(2**k):
                value = matrix[a, b]
                if value == 0:
                    continue
                row = [0] * n
                col = [0] * n
                for q, bit in zip(others, rest):
                    row[q] = col[q] = bit
                for j, q in enumerate(qubits):
                    row[q] = (a >> (k - 1 - j)) & 1
                    col[q] = (b >> (k - 1 - j)) & 1
                r = int("".join(map(str, row)), 2)
                c = int("".join(map(str, col)), 2)
                full[r, c] += value
    return full


def rotation(paulis, theta):
    p = kron_all(PAULI[ch] for ch in paulis)
    return math.cos(theta / 2) * np.eye(p.shape[0]) - 1j * math.sin(theta / 2) * p


def random_unitary(dim, rng):
    m = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    q, r = np.linalg.qr(m)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def depolarize_kraus(p):
    return [math.sqrt(1 - p) * I2] + [math.sqrt(p / 3) * P for P in (X, Y, Z)]


def pauli_channel_kraus(px, py, pz):
    return [math.sqrt(1 - px - py - pz) * I2, math.sqrt(px) * X, math.sqrt(py) * Y, math.sqrt(pz) * Z]


def depolarize2_kraus(p):
    ops = [math.sqrt(1 - p) * np.eye(4)]
    for a, b in itertools.product("IXYZ", repeat=2):
        if a + b != "II":
            ops.append(math.sqrt(p / 15) * np.kron(PAULI[a], PAULI[b]))
    return ops


def amplitude_damping_kraus(g):
    return [np.array([[1, 0], [0, math.sqrt(1 - g)]], dtype=complex), np.array([[0, math.sqrt(g)], [0, 0]], dtype=complex)]


def random_circuit(n, length, rng, noisy=True, kinds=None):
    """(Circuit, list of oracle ops): every op is ('U', full) or ('K', [full Kraus])."""
    c = Circuit(n)
    ops = []
    all_kinds = ["h", "s", "sdg", "x", "y", "z", "cnot", "cz", "swap", "rz", "rx", "ry", "pauli_rotation",
                 "unitary_1q", "unitary_2q"]
    if noisy:
        all_kinds += ["depolarize", "dephase", "amplitude_damping", "pauli_channel", "depolarize2"]
    kinds = kinds or all_kinds
    for step in range(length):
        kind = kinds[step] if step < len(kinds) and length >= len(kinds) else rng.choice(kinds)
        q = int(rng.integers(n))
        q0, q1 = (int(v) for v in rng.choice(n, size=2, replace=False))
        theta = float(rng.uniform(-math.pi, math.pi))
        p = float(rng.uniform(0.0, 0.3))
        single = {"h": H, "s": S, "sdg": S.conj().T, "x": X, "y": Y, "z": Z}
        if kind in single:
            getattr(c, kind)(q)
            ops.append(("U", embed(single[kind], [q], n)))
        elif kind in ("cnot", "cz", "swap"):
            getattr(c, kind)(q0, q1)
            ops.append(("U", embed({"cnot": CNOT, "cz": CZ, "swap": SWAP}[kind], [q0, q1], n)))
        elif kind in ("rz", "rx", "ry"):
            getattr(c, kind)(theta, q)
            ops.append(("U", embed(rotation(kind[1].upper(), theta), [q], n)))
        elif kind == "pauli_rotation":
            k = int(rng.integers(1, n + 1))
            qs = [int(v) for v in rng.choice(n, size=k, replace=False)]
            letters = "".join(rng.choice(list("XYZ"), size=k))
            c.pauli_rotation(letters, qs, theta)
            ops.append(("U", embed(rotation(letters, theta), qs, n)))
        elif kind == "unitary_1q":
            u = random_unitary(2, rng)
            c.unitary_1q(q, u)
            ops.append(("U", embed(u, [q], n)))
        elif kind == "unitary_2q":
            u = random_unitary(4, rng)
            c.unitary_2q(q0, q1, u)
            ops.append(("U", embed(u, [q0, q1], n)))
        elif kind == "depolarize":
            c.depolarize(p, [q])
            ops.append(("K", [embed(k_, [q], n) for k_ in depolarize_kraus(p)]))
        elif kind == "dephase":
            c.dephase(p, [q])
            ops.append(("K", [embed(k_, [q], n) for k_ in pauli_channel_kraus(0, 0, p)]))
        elif kind == "amplitude_damping":
            c.amplitude_damping(p, [q])
            ops.append(("K", [embed(k_, [q], n) for k_ in amplitude_damping_kraus(p)]))
        elif kind == "pauli_channel":
            px, py, pz = (float(v) for v in rng.uniform(0, 0.1, size=3))
            c.pauli_channel(px, py, pz, [q])
            ops.append(("K", [embed(k_, [q], n) for k_ in pauli_channel_kraus(px, py, pz)]))
        elif kind == "depolarize2":
            c.depolarize2(p, [(q0, q1)])
            ops.append(("K", [embed(k_, [q0, q1], n) for k_ in depolarize2_kraus(p)]))
    return c, ops


def dense_propagate(a, ops, direction):
    if direction == "forward":
        for kind, op in ops:
            if kind == "U":
                a = op @ a @ op.conj().T
            else:
                a = sum(k @ a @ k.conj().T for k in op)
    else:
        for kind, op in reversed(ops):
            if kind == "U":
                a = op.conj().T @ a @ op
            else:
                a = sum(k.conj().T @ a @ k for k in op)
    return a


def dense_of(terms, n):
    a = np.zeros((2**n, 2**n), dtype=complex)
    for label, c in terms.items():
        a += c * pauli_matrix(label)
    return a


def pauli_coefficients(a, n):
    out = {}
    for letters in itertools.product("IXYZ", repeat=n):
        label = "".join(letters)
        c = np.trace(pauli_matrix(label) @ a) / 2**n
        if abs(c) > 1e-13:
            out[label] = complex(c)
    return out


def labels_of(s):
    x, z, c = s.x_array(), s.z_array(), s.coefficients_array()
    out = {}
    for row in range(len(s)):
        label = ""
        for q in range(s.num_qubits):
            xb = (int(x[row, q // 64]) >> (q % 64)) & 1
            zb = (int(z[row, q // 64]) >> (q % 64)) & 1
            label += "IXZY"[xb | (zb << 1)]
        out[label] = complex(c[row])
    return out


def assert_matches(actual, expected, tol=1e-11):
    keys = set(actual) | set(expected)
    for k in keys:
        assert abs(actual.get(k, 0) - expected.get(k, 0)) < tol, (k, actual.get(k), expected.get(k))


def random_observable(n, rng, count=4, complex_coefficients=False):
    terms = {}
    for _ in range(count):
        label = "".join(rng.choice(list("IXYZ"), size=n))
        c = float(rng.normal())
        if complex_coefficients:
            c = complex(c, float(rng.normal()))
        terms[label] = terms.get(label, 0) + c
    return terms


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("direction", ["forward", "heisenberg"])
def test_random_noisy_circuits_match_dense(seed, direction):
    rng = np.random.default_rng(1000 + seed)
    n = 3 if seed % 2 else 4
    circuit, ops = random_circuit(n, 24, rng)
    terms = random_observable(n, rng, complex_coefficients=seed % 3 == 0)
    observable = PauliSum.from_strings(terms, num_qubits=n)
    evolved = observable.propagate(circuit, direction=direction)
    expected = pauli_coefficients(dense_propagate(dense_of(terms, n), ops, direction), n)
    assert_matches(labels_of(evolved), expected)


def test_every_gate_kind_in_one_circuit_both_directions():
    rng = np.random.default_rng(7)
    kinds = ["h", "s", "sdg", "x", "y", "z", "cnot", "cz", "swap", "rz", "rx", "ry", "pauli_rotation",
             "unitary_1q", "unitary_2q", "depolarize", "dephase", "amplitude_damping", "pauli_channel",
             "depolarize2"]
    circuit, ops = random_circuit(3, len(kinds), rng, kinds=kinds)
    assert [g["name"] for g in circuit.gates] == kinds
    terms = {"XYZ": 0.7, "ZIZ": -0.4, "IYI": 0.25, "III": 0.1}
    observable = PauliSum.from_strings(terms)
    for direction in ("forward", "heisenberg"):
        evolved = observable.propagate(circuit, direction=direction)
        expected = pauli_coefficients(dense_propagate(dense_of(terms, 3), ops, direction), 3)
        assert_matches(labels_of(evolved), expected)


def product_state_vector(label):
    vectors = {
        "0": np.array([1, 0], dtype=complex),
        "1": np.array([0, 1], dtype=complex),
        "+": np.array([1, 1], dtype=complex) / math.sqrt(2),
        "-": np.array([1, -1], dtype=complex) / math.sqrt(2),
        "r": np.array([1, 1j], dtype=complex) / math.sqrt(2),
        "l": np.array([1, -1j], dtype=complex) / math.sqrt(2),
    }
    return kron_all(vectors[ch].reshape(2, 1) for ch in label).reshape(-1)


@pytest.mark.parametrize("seed", range(4))
def test_expectation_after_heisenberg_equals_state_evolution(seed):
    """⟨s|U†OU|s⟩ (Heisenberg result read out in s) = ⟨O⟩ in the state U|s⟩ (noiseless)."""
    rng = np.random.default_rng(50 + seed)
    n = 4
    circuit, ops = random_circuit(n, 20, rng, noisy=False)
    terms = random_observable(n, rng, count=6)
    observable = PauliSum.from_strings(terms, num_qubits=n)
    evolved = observable.propagate(circuit, direction="heisenberg")
    state_label = "".join(rng.choice(list("01+-rl"), size=n))
    psi = product_state_vector(state_label)
    for kind, u in ops:
        psi = u @ psi
    expected = np.vdot(psi, dense_of(terms, n) @ psi)
    assert abs(evolved.expectation(state_label) - expected) < 1e-11
    for uniform, single in (("x+", "+"), ("y+", "r"), ("z+", "0"), ("Z+", "0")):
        psi0 = product_state_vector(single * n)
        expected = np.vdot(psi0, dense_of(labels_of(evolved), n) @ psi0)
        assert abs(evolved.expectation(uniform) - expected) < 1e-11


def test_noisy_heisenberg_expectation_equals_density_matrix_evolution():
    rng = np.random.default_rng(99)
    n = 3
    circuit, ops = random_circuit(n, 30, rng)
    terms = random_observable(n, rng, count=5)
    evolved = PauliSum.from_strings(terms, num_qubits=n).propagate(circuit, direction="heisenberg")
    psi = product_state_vector("0+1")
    rho = np.outer(psi, psi.conj())
    rho = dense_propagate(rho, ops, "forward")  # the state evolves forward through the channels
    expected = np.trace(dense_of(terms, n) @ rho)
    assert abs(evolved.expectation("0+1") - expected) < 1e-11


def test_stabilizer_expectation_matches_dense():
    # GHZ-like state prepared by H, CNOTs, then an S on qubit 2: stabilizers conjugated forward.
    n = 3
    prep = [("U", embed(H, [0], n)), ("U", embed(CNOT, [0, 1], n)), ("U", embed(CNOT, [1, 2], n)),
            ("U", embed(S, [2], n))]
    psi = product_state_vector("000")
    for _, u in prep:
        psi = u @ psi
    # Generators of the same state: conjugate Z_q forward through the preparation with the library.
    gens = []
    c = Circuit(n)
    c.h(0)
    c.cnot(0, 1)
    c.cnot(1, 2)
    c.s(2)
    for q in range(n):
        zq = PauliSum.from_strings({"I" * q + "Z" + "I" * (n - q - 1): 1.0}).propagate(c)
        (label, coeff), = labels_of(zq).items()
        gens.append(("+" if coeff.real > 0 else "-") + label)
    rng = np.random.default_rng(3)
    terms = random_observable(n, rng, count=10)
    terms.update({"XXY": 0.5, "ZZI": -0.3, "YYY": 0.2})
    observable = PauliSum.from_strings(terms, num_qubits=n)
    expected = np.vdot(psi, dense_of(terms, n) @ psi)
    assert abs(observable.expectation_stabilizer(gens) - expected) < 1e-12


def test_overlap_identity_coefficient_and_histograms_match_dense():
    rng = np.random.default_rng(11)
    n = 3
    a_terms = random_observable(n, rng, count=6, complex_coefficients=True)
    b_terms = random_observable(n, rng, count=6, complex_coefficients=True)
    a = PauliSum.from_strings(a_terms, num_qubits=n)
    b = PauliSum.from_strings(b_terms, num_qubits=n)
    da, db = dense_of(a_terms, n), dense_of(b_terms, n)
    assert abs(a.overlap(b) - np.trace(da.conj().T @ db) / 2**n) < 1e-12
    assert abs(a.identity_coefficient() - np.trace(da) / 2**n) < 1e-12

    # anticommute histogram: weight of strings anticommuting with exactly k of X_q on the sites.
    h_terms = random_observable(n, rng, count=8)
    h = PauliSum.from_strings(h_terms, num_qubits=n)
    sites = [0, 2]
    for axis, G in (("x", X), ("z", Z)):
        hist = h.anticommute_histogram(sites, axis=axis)
        expected = [0.0] * (len(sites) + 1)
        for label, c in labels_of(h).items():
            k = sum(1 for q in sites if not np.allclose(PAULI[label[q]] @ G, G @ PAULI[label[q]]))
            expected[k] += abs(c) ** 2
        assert np.allclose(hist, expected, atol=1e-12)
        # rotated overlap 2^-n Tr(A V† A V), V = Π exp(-iδ G_q) on the sites.
        delta = 0.37
        v = kron_all(
            (math.cos(delta) * I2 - 1j * math.sin(delta) * G) if q in sites else I2 for q in range(n)
        )
        dh = dense_of(h_terms, n)
        expected_overlap = np.trace(dh @ v.conj().T @ dh @ v).real / 2**n
        assert abs(h.rotated_overlap(sites, delta, axis=axis) - expected_overlap) < 1e-12
        echo = paulistrings.diagonal_echo(hist, delta)
        assert abs(echo - sum(w * math.cos(2 * delta) ** k for k, w in enumerate(hist)) / sum(hist)) < 1e-12
