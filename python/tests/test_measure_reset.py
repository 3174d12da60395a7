"""Measurement and reset built in code (Circuit.measure / measure_pauli / reset and the gates
factories) against the dense oracle of test_dense_oracle (Kraus maps on explicit matrices): random
circuits with measurements and resets mid-circuit, both directions; the API's checks and round trips.
"""


import numpy as np
import pytest

import paulistrings
from paulistrings import Circuit, PauliSum, gates
from test_dense_oracle import PAULI, dense_of, dense_propagate, embed, kron_all, labels_of, pauli_coefficients
from test_dense_oracle import random_circuit as random_gate_circuit

I2 = np.eye(2, dtype=complex)


def measure_kraus(letters):
    p = kron_all(PAULI[ch] for ch in letters)
    eye = np.eye(p.shape[0], dtype=complex)
    return [(eye + p) / 2, (eye - p) / 2]


def reset_kraus(basis):
    _, vectors = np.linalg.eigh(PAULI[basis])
    minus, plus = vectors[:, 0], vectors[:, 1]  # eigh sorts the eigenvalues: −1 first
    return [np.outer(plus, plus.conj()), np.outer(plus, minus.conj())]


def with_measurements(n, length, rng):
    """A random gate circuit with measurements and resets spliced in mid-circuit."""
    gates_only, ops = random_gate_circuit(n, length, rng, noisy=False)
    c = Circuit(n)
    out = []
    for k in range(len(gates_only)):
        c.append(gates_only[k])
        out.append(ops[k])
        choice = int(rng.integers(6))
        q = int(rng.integers(n))
        if choice == 0:
            c.measure(q)
            out.append(("K", [embed(m, [q], n) for m in measure_kraus("Z")]))
        elif choice == 1:
            w = int(rng.integers(1, n + 1))
            qs = [int(v) for v in rng.choice(n, size=w, replace=False)]
            letters = "".join(rng.choice(list("XYZ"), size=w))
            c.measure_pauli(letters, qs)
            out.append(("K", [embed(m, qs, n) for m in measure_kraus(letters)]))
        elif choice == 2:
            basis = str(rng.choice(list("XYZ")))
            c.reset(q, basis)
            out.append(("K", [embed(m, [q], n) for m in reset_kraus(basis)]))
    return c, out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("direction", ["heisenberg", "forward"])
def test_random_circuits_with_measure_and_reset_match_the_oracle(seed, direction):
    rng = np.random.default_rng(1000 + seed)
    n = 4
    circuit, ops = with_measurements(n, 14, rng)
    terms = {"".join(rng.choice(list("IXYZ"), size=n)): float(rng.normal()) for _ in range(10)}
    result = PauliSum.from_strings(terms, num_qubits=n).propagate(circuit, direction=direction)
    expected = pauli_coefficients(dense_propagate(dense_of(terms, n), ops, direction), n)
    actual = labels_of(result)
    for label in set(expected) | set(actual):
        assert abs(actual.get(label, 0) - expected.get(label, 0)) < 1e-10, label


def test_trailing_measurement_keeps_z_and_removes_x():
    c = Circuit(2)
    c.h(0)
    c.cnot(0, 1)
    c.measure([0, 1])
    zz = PauliSum.from_strings({"ZZ": 1.0}, num_qubits=2).propagate(c, direction="heisenberg")
    assert zz.expectation("z+") == pytest.approx(1.0)
    xx = PauliSum.from_strings({"XX": 1.0}, num_qubits=2).propagate(c, direction="heisenberg")
    assert len(xx) == 0


def test_factories_and_channel_properties():
    m = gates.measure(3)
    assert m._ch.name == "measure" and m._ch.is_measurement and not m._ch.is_reset
    mp = gates.measure_pauli("XYZ", [0, 2, 5])
    assert mp._ch.name == "measure_pauli" and mp._ch.pauli == "XYZ"
    r = gates.reset(1, "X")
    assert r._ch.name == "reset_x" and r._ch.is_reset
    c = Circuit(6)
    for ch in (m, mp, r):
        c.append(ch)
    c.reset([0, 4])
    assert len(c) == 5
    assert [g["name"] for g in c.gates] == ["measure", "measure_pauli", "reset_x", "reset", "reset"]
    back = paulistrings.interop.circuit_from_json({"gates": c.gates}, 6)
    assert back.gates == c.gates


def test_bad_arguments_and_no_adjoint():
    c = Circuit(3)
    with pytest.raises(ValueError, match="basis"):
        c.reset(0, "Q")
    with pytest.raises(ValueError, match="same length"):
        c.measure_pauli("XZ", [0])
    with pytest.raises(ValueError, match="used twice"):
        c.measure_pauli("XZ", [1, 1])
    with pytest.raises(ValueError, match="out of range"):
        c.measure(3)
    c.measure(0)
    with pytest.raises(ValueError, match="measurement"):
        c.adjoint()
