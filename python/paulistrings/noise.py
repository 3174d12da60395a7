"""Noise-channel factories: each returns a width-agnostic ``Channel`` for ``Circuit.append``.

Parameters as in the original (and QuEST): ``depolarize(p)`` scales X, Y, Z by 1−4p/3;
``dephase(p)`` scales X, Y by 1−2p; ``pauli_channel(px, py, pz)`` scales X by 1−2(py+pz), Y by
1−2(px+pz), Z by 1−2(px+py); ``depolarize2(p)`` scales every non-identity two-qubit Pauli by
1−16p/15; ``amplitude_damping(gamma)`` maps I→I+γZ, Z→(1−γ)Z, X,Y→√(1−γ)·X,Y forward (its
adjoint in the Heisenberg direction).
"""

from __future__ import annotations

from ._circuit import (
    Channel,
    make_amplitude_damping,
    make_dephase,
    make_depolarize,
    make_depolarize2,
    make_pauli_channel,
)

__all__ = ["depolarize", "dephase", "amplitude_damping", "pauli_channel", "depolarize2"]


def depolarize(p, qubit) -> Channel:
    """Single-qubit depolarizing noise with probability ``p`` ∈ [0, 1]."""
    return make_depolarize(p, qubit)


def dephase(p, qubit) -> Channel:
    """Dephasing (Z error) with probability ``p`` ∈ [0, 1]."""
    return make_dephase(p, qubit)


def amplitude_damping(gamma, qubit) -> Channel:
    """Amplitude damping with decay probability ``gamma`` ∈ [0, 1]."""
    return make_amplitude_damping(gamma, qubit)


def pauli_channel(px, py, pz, qubit) -> Channel:
    """E(ρ) = (1−px−py−pz)ρ + px·XρX + py·YρY + pz·ZρZ (each ≥ 0, sum ≤ 1)."""
    return make_pauli_channel(px, py, pz, qubit)


def depolarize2(p, q0, q1) -> Channel:
    """Two-qubit depolarizing noise: ``p`` spread over the 15 non-identity two-qubit Paulis."""
    return make_depolarize2(p, q0, q1)
