"""``PauliString`` (one Pauli string, no coefficient: immutable, hashable, with products and
commutation tests done on its x/z bit masks in Python) and ``p(label)``, its shorthand constructor.
``ps * c`` makes the one-term ``PauliSum`` c·ps (``_sum.py``), imported where it is used because
``_sum.py`` imports this module.
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._circuit import TOO_WIDE
from ._util import coefficient, index, type_name

__all__ = ["PauliString", "p"]

_PHASES = (1 + 0j, 1j, -1 + 0j, -1j)


def _popcount(value: int) -> int:
    return bin(value).count("1")


class PauliString:
    """One Pauli string (no coefficient): immutable and hashable.

    Constructors: ``PauliString.identity(n)``, ``.x(qubit, n)``, ``.y(qubit, n)``, ``.z(qubit, n)``,
    ``.from_label("XIZY")`` and ``paulistrings.p(label)``. Character i of a label is qubit i.
    ``str``/``repr`` print the label; ``==`` compares label and qubit count. ``ps * c`` is the
    one-term ``PauliSum`` c·ps.
    """

    __slots__ = ("_n", "_x", "_z")

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "PauliString has no public constructor; use PauliString.from_label, identity, x, y, z "
            "or paulistrings.p"
        )

    @classmethod
    def _make(cls, num_qubits: int, x: int, z: int) -> "PauliString":
        obj = object.__new__(cls)
        obj._n, obj._x, obj._z = num_qubits, x, z
        return obj

    @staticmethod
    def _check_n(num_qubits) -> int:
        n = index(num_qubits, "num_qubits")
        if n > 1024:
            raise ValueError(TOO_WIDE)
        return n

    @classmethod
    def identity(cls, num_qubits) -> "PauliString":
        return cls._make(cls._check_n(num_qubits), 0, 0)

    @classmethod
    def _single(cls, letter: str, q, num_qubits) -> "PauliString":
        q = index(q, "qubit")
        n = index(num_qubits, "num_qubits")
        if q >= n:
            raise ValueError(f"qubit index {q} is out of range for a {n}-qubit Pauli string")
        n = cls._check_n(n)
        bit = 1 << q
        return cls._make(n, bit if letter in "XY" else 0, bit if letter in "ZY" else 0)

    @classmethod
    def x(cls, qubit, num_qubits) -> "PauliString":
        return cls._single("X", qubit, num_qubits)

    @classmethod
    def y(cls, qubit, num_qubits) -> "PauliString":
        return cls._single("Y", qubit, num_qubits)

    @classmethod
    def z(cls, qubit, num_qubits) -> "PauliString":
        return cls._single("Z", qubit, num_qubits)

    @classmethod
    def from_label(cls, label) -> "PauliString":
        if not isinstance(label, str):
            raise TypeError(f"PauliString.from_label expects a str, got {type_name(label)}")
        n = len(label)
        if n > 1024:
            raise ValueError(TOO_WIDE)
        x = z = 0
        for q, ch in enumerate(label):
            if ch == "X":
                x |= 1 << q
            elif ch == "Z":
                z |= 1 << q
            elif ch == "Y":
                x |= 1 << q
                z |= 1 << q
            elif ch != "I":
                raise ValueError(f"unexpected Pauli character '{ch}' (expected I/X/Y/Z)")
        return cls._make(n, x, z)

    @property
    def num_qubits(self) -> int:
        return self._n

    @property
    def weight(self) -> int:
        return _popcount(self._x | self._z)

    @property
    def label(self) -> str:
        x, z = self._x, self._z
        return "".join("IXZY"[((x >> q) & 1) | (((z >> q) & 1) << 1)] for q in range(self._n))

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return self.label

    def __eq__(self, other) -> bool:
        if not isinstance(other, PauliString):
            return False
        return self._n == other._n and self._x == other._x and self._z == other._z

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self._n, self._x, self._z))

    def _other(self, other, what: str) -> "PauliString":
        if not isinstance(other, PauliString):
            raise TypeError(f"{what}: expected a PauliString, got {type_name(other)}")
        if other._n != self._n:
            raise ValueError(f"{what}: num_qubits mismatch ({self._n} vs {other._n})")
        return other

    def commutes_with(self, other) -> bool:
        o = self._other(other, "commutes_with")
        return _popcount((self._x & o._z) ^ (self._z & o._x)) % 2 == 0

    def anticommutes_with(self, other) -> bool:
        o = self._other(other, "anticommutes_with")
        return not self.commutes_with(o)

    def _product(self, o: "PauliString"):
        x3, z3 = self._x ^ o._x, self._z ^ o._z
        k = (
            _popcount(self._x & self._z)
            + _popcount(o._x & o._z)
            - _popcount(x3 & z3)
            + 2 * _popcount(self._z & o._x)
        ) % 4
        return _PHASES[k], PauliString._make(self._n, x3, z3)

    def mul(self, other):
        """``self · other`` as ``(i^k, product)``, e.g. X·Z = (−i, Y)."""
        return self._product(self._other(other, "mul"))

    def commutator(self, other):
        """``[self, other]`` as ``(coefficient, product)``: 2·i^k when they anticommute, else 0."""
        o = self._other(other, "commutator")
        phase, product = self._product(o)
        return (0j if self.commutes_with(o) else 2 * phase), product

    def anticommutator(self, other):
        """``{self, other}`` as ``(coefficient, product)``: 2·i^k when they commute, else 0."""
        o = self._other(other, "anticommutator")
        phase, product = self._product(o)
        return (2 * phase if self.commutes_with(o) else 0j), product

    def __mul__(self, coeff):
        from ._sum import PauliSum  # _sum imports this module

        if isinstance(coeff, (PauliString, PauliSum)):
            return NotImplemented
        try:
            c = coefficient(coeff)
        except TypeError:
            return NotImplemented
        words = max(1, (self._n + 63) // 64)
        mask = (1 << 64) - 1
        x = np.array([[(self._x >> (64 * w)) & mask for w in range(words)]], dtype=np.uint64)
        z = np.array([[(self._z >> (64 * w)) & mask for w in range(words)]], dtype=np.uint64)
        if c.imag == 0.0:
            core = _core.Sum.from_arrays_real(self._n, x, z, np.array([c.real], dtype=np.float64))
        else:
            core = _core.Sum.from_arrays_complex(self._n, x, z, np.array([c], dtype=np.complex128))
        return PauliSum._wrap(core)

    __rmul__ = __mul__


def p(label) -> PauliString:
    """Shorthand for ``PauliString.from_label(label)``."""
    return PauliString.from_label(label)
