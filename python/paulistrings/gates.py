"""Gate factories: each returns a width-agnostic ``Channel`` for ``Circuit.append``.

Conventions: ``rz/rx/ry(theta, qubit)`` and ``pauli_rotation(pauli, qubits, theta)`` are
``exp(-iθP/2)``; ``cnot(control, target)``; ``unitary_2q(q0, q1, matrix)`` acts on ``|q0 q1⟩``
with ``q0`` the more significant factor. Qubit indices are checked when the channel is appended.
"""

from __future__ import annotations

from ._circuit import (
    Channel,
    make_cnot,
    make_measure,
    make_measure_pauli,
    make_pair,
    make_pauli_rotation,
    make_reset,
    make_rotation,
    make_single,
    make_unitary_1q,
    make_unitary_2q,
)

__all__ = [
    "h", "s", "sdg", "x", "y", "z", "cnot", "cz", "swap", "rz", "rx", "ry",
    "pauli_rotation", "unitary_1q", "unitary_2q", "measure", "measure_pauli", "reset",
]


def h(qubit) -> Channel:
    """Hadamard: X↔Z, Y→−Y."""
    return make_single("h", qubit)


def s(qubit) -> Channel:
    """S = diag(1, i): X→Y, Y→−X (forward)."""
    return make_single("s", qubit)


def sdg(qubit) -> Channel:
    """S†: X→−Y, Y→X (forward)."""
    return make_single("sdg", qubit)


def x(qubit) -> Channel:
    return make_single("x", qubit)


def y(qubit) -> Channel:
    return make_single("y", qubit)


def z(qubit) -> Channel:
    return make_single("z", qubit)


def cnot(control, target) -> Channel:
    """CNOT: XI→XX, IZ→ZZ (first factor = control)."""
    return make_cnot(control, target)


def cz(q0, q1) -> Channel:
    return make_pair("cz", q0, q1)


def swap(q0, q1) -> Channel:
    return make_pair("swap", q0, q1)


def rz(theta, qubit) -> Channel:
    """exp(-iθZ/2)."""
    return make_rotation("rz", theta, qubit)


def rx(theta, qubit) -> Channel:
    """exp(-iθX/2)."""
    return make_rotation("rx", theta, qubit)


def ry(theta, qubit) -> Channel:
    """exp(-iθY/2)."""
    return make_rotation("ry", theta, qubit)


def pauli_rotation(pauli, qubits, theta) -> Channel:
    """exp(-iθP/2) about ``P = pauli[0]`` on ``qubits[0]`` ⊗ ``pauli[1]`` on ``qubits[1]`` ⊗ …
    (letters X/Y/Z, distinct qubits, any weight)."""
    return make_pauli_rotation(pauli, qubits, theta)


def unitary_1q(qubit, matrix) -> Channel:
    """An arbitrary 2×2 unitary (checked to 1e-9)."""
    return make_unitary_1q(qubit, matrix)


def unitary_2q(q0, q1, matrix) -> Channel:
    """An arbitrary 4×4 unitary on ``|q0 q1⟩`` (q0 the more significant factor)."""
    return make_unitary_2q(q0, q1, matrix)


def measure(qubit) -> Channel:
    """Measurement of Z on ``qubit`` whose outcome is not used: keeps I and Z there, removes X and Y."""
    return make_measure(qubit)


def measure_pauli(pauli, qubits) -> Channel:
    """Measurement of the product ``pauli[0]`` on ``qubits[0]`` ⊗ … (any weight): removes every Pauli
    string that anticommutes with it and keeps the rest."""
    return make_measure_pauli(pauli, qubits)


def reset(qubit, basis="Z") -> Channel:
    """Reset of ``qubit`` to the +1 eigenstate of ``basis`` (Z: |0⟩, X: |+⟩, Y: |+i⟩)."""
    return make_reset(qubit, basis)
