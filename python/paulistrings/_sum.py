"""``PauliString``, ``PauliSum`` and the propagation front end (``PropagationStats``)."""

from __future__ import annotations

import logging
import math
import operator
import os
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _core
from ._circuit import TOO_WIDE, Circuit
from ._system import numa_nodes
from ._util import coefficient, index, qubit, qubit_list, real, type_name
from .truncation import Truncation

__all__ = ["PauliString", "p", "PauliSum", "PropagationStats", "PartitionStats", "GpuPauliSum"]

_log = logging.getLogger("paulistrings.propagate")
_PHASES = (1 + 0j, 1j, -1 + 0j, -1j)


def _popcount(value: int) -> int:
    return bin(value).count("1")


# =============================================================================
# PauliString
# =============================================================================


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


# =============================================================================
# Statistics
# =============================================================================


@dataclass(frozen=True, repr=False)
class PartitionStats:
    """What a partitioned run (``partitions=`` of 2 or more, a list of several devices, or ``comm=``)
    exchanged; ``None`` in ``PropagationStats.partition`` for an unpartitioned run.

    The original's fields: ``partitions`` (P, a power of two; the communicator's size under
    ``comm=``), ``rank``/``size`` (this rank and the group size under ``comm=``, else ``None``),
    ``devices`` (the CUDA ordinal of each partition of a GPU run: the ``device=`` list in-process,
    ``[this rank's device]`` under ``comm=``; ``None`` for a CPU run), and per applied layer k:
    ``local[k]`` (no row crossed a partition boundary), ``rows_exported[k]`` and
    ``bytes_exported[k]`` (summed over all partitions, also under ``comm=``), ``imbalance[k]``
    (largest over mean partition size after the layer; 1.0 = perfect, global also under
    ``comm=``). ``terms_in``, ``terms_out`` and ``nanos`` are ``None``: this engine does not record
    per-partition term counts or times (``PropagationStats`` has the global counts per layer, and
    ``max_terms`` below the largest partition).

    Added by this implementation: ``rows`` (how the partition rows were chosen, e.g.
    ``"seeded(SEED)"``, ``"seeded(SEED) excluding 3 qubits"`` or ``"cut(4 blocks, z)"``),
    ``transport`` (``"in-process"`` or ``"mpi"``), ``remote_layers`` / ``local_layers`` (layers
    with and without an exchange), ``orbit_routed_layers`` (remote layers of a dense general table that
    first moved each orbit's members to one partition: two exchanges, outputs appended, not summed),
    ``total_rows_exported``, ``total_bytes_exported``, ``max_imbalance``, and per layer
    ``partners[k]`` (distinct partner offsets, i.e. exchanges per partition) and ``max_terms[k]``
    (terms of the largest partition after the layer); and per partition r (index = rank):
    ``final_terms[r]`` (its terms at the end), ``transport_seconds[r]`` (wall time in exchanges and
    reductions, waiting for partners included) and ``work_seconds[r]`` (the rest of its wall time),
    summed over checkpoint segments.
    """

    partitions: int
    rank: Optional[int]
    size: Optional[int]
    devices: Optional[list]
    local: list
    rows_exported: list
    bytes_exported: list
    terms_in: Optional[list]
    terms_out: Optional[list]
    imbalance: list
    nanos: Optional[list]
    rows: str
    transport: str
    remote_layers: int
    local_layers: int
    orbit_routed_layers: int
    total_rows_exported: int
    total_bytes_exported: int
    max_imbalance: float
    partners: list
    max_terms: list
    final_terms: list
    transport_seconds: list
    work_seconds: list

    def __repr__(self) -> str:
        where = f", rank={self.rank}, size={self.size}" if self.rank is not None else ""
        return (
            f"PartitionStats(partitions={self.partitions}{where}, rows={self.rows!r}, "
            f"transport={self.transport!r}, remote_layers={self.remote_layers}, local_layers={self.local_layers}, "
            f"rows_exported={self.total_rows_exported}, bytes_exported={self.total_bytes_exported}, "
            f"max_imbalance={self.max_imbalance:.3f})"
        )


@dataclass(frozen=True, repr=False)
class PropagationStats:
    """Per-layer record of one ``propagate_with_stats`` call (read-only).

    One entry per applied layer (one channel), in application order — reversed circuit order
    under ``direction="heisenberg"``. ``terms_in[k]`` counts the terms before layer k and
    ``terms_out[k]`` after its truncation (``terms_in[k+1] == terms_out[k]``); ``peak_terms`` is
    the largest of ``terms_in[0]`` and every ``terms_out``. ``gate_name`` uses the original's
    channel type names (``Clifford1Q``, ``PauliRotation``, ``Depolarizing``, …), ``nanos`` is
    wall time per layer, ``collapses`` counts ``collapse_sample`` collapses (``None`` without
    that policy). Added by this implementation: ``discarded_weight`` (Σ|c|² removed by
    truncation in each layer), ``total_discarded_weight``, ``budget_truncations`` and
    ``budget_discarded_weight`` (cuts made by ``memory_limit``), ``gates`` (task-JSON names).
    """

    layers: int
    terms_in: list
    terms_out: list
    peak_terms: int
    final_terms: int
    partition: Optional[PartitionStats]
    circuit_index: list
    application_index: list
    gate_name: list
    nanos: list
    collapses: Optional[int]
    discarded_weight: list
    total_discarded_weight: float
    budget_truncations: int
    budget_discarded_weight: float
    gates: list

    def __repr__(self) -> str:
        return (
            f"PropagationStats(layers={self.layers}, terms_in={self.terms_in}, terms_out={self.terms_out}, "
            f"peak_terms={self.peak_terms}, final_terms={self.final_terms})"
        )


_NO_MPI = (
    "{what}: this build of paulistrings has no MPI support (mpi_available() is False: it needs the MPI "
    "build of the library and mpi4py's headers at configure time); distributed propagation is not available"
)
_NO_COLLECTIVE_READOUT = (
    "{what}: collective read-outs over MPI are not implemented in this build; propagate with "
    'result="gather" (every rank then holds the whole sum) and call it without comm='
)


# =============================================================================
# PauliSum
# =============================================================================


def _format_coefficient(c: complex) -> str:
    if c.imag == 0.0:
        return repr(float(c.real))
    sign = "-" if math.copysign(1.0, c.imag) < 0 else "+"
    return f"({float(c.real)!r}{sign}{abs(float(c.imag))!r}j)"


def _words_array(a, name: str) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_arrays: {name} must be a numpy.ndarray of dtype uint64, got {type_name(a)}")
    if a.dtype != np.uint64:
        raise TypeError(f"from_arrays: {name} must have dtype uint64, got {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"from_arrays: {name} must have shape (n_terms, words), got shape {a.shape}")
    return np.ascontiguousarray(a)


class PauliSum:
    """A weighted sum of distinct Pauli strings on ``num_qubits`` qubits (up to 1024).

    Coefficients multiply the Hermitian Pauli strings themselves (Y carries no hidden phase), so a
    Hermitian observable has real coefficients; such sums are stored with real coefficients (8
    bytes a term less), while every accessor returns complex values as the original does.
    """

    __slots__ = ("_s",)
    __array_ufunc__ = None  # numpy scalars defer to our __rmul__

    def __init__(self, num_qubits):
        n = index(num_qubits, "num_qubits")
        if n > 1024:
            raise ValueError(TOO_WIDE)
        self._s = _core.Sum(n)

    @classmethod
    def _wrap(cls, core) -> "PauliSum":
        obj = object.__new__(cls)
        obj._s = core
        return obj

    def __copy__(self) -> "PauliSum":
        return PauliSum._wrap(self._s.copy())

    def __deepcopy__(self, memo) -> "PauliSum":
        return PauliSum._wrap(self._s.copy())

    # ---- constructors ----

    @classmethod
    def from_strings(cls, terms, coefficients=None, *, num_qubits=None) -> "PauliSum":
        """From ``{label: coefficient}`` or from two sequences ``(labels, coefficients)``.

        Labels are ``IXYZ`` strings with character i = qubit i (or sparse, ``"X0 Z5"``).
        ``num_qubits`` defaults to the length of the first label. Repeated labels add up; exact
        zeros are dropped.
        """
        if isinstance(terms, Mapping):
            if coefficients is not None:
                if num_qubits is None and not isinstance(coefficients, bool) and _is_int(coefficients):
                    num_qubits = coefficients  # the original's early signature from_strings(terms, num_qubits)
                else:
                    raise TypeError(
                        "PauliSum.from_strings: pass either a {label: coefficient} dict or two sequences "
                        "(labels, coefficients), not a dict plus coefficients"
                    )
            labels = list(terms.keys())
            values = list(terms.values())
        else:
            if isinstance(terms, (str, bytes)):
                raise TypeError(
                    "PauliSum.from_strings expects a {label: coefficient} dict or a sequence of labels "
                    "plus a sequence of coefficients, got a single str"
                )
            if coefficients is None:
                raise TypeError(
                    "PauliSum.from_strings: a sequence of labels needs a matching sequence of coefficients "
                    "(or pass a {label: coefficient} dict)"
                )
            try:
                labels = list(terms)
                values = list(coefficients)
            except TypeError:
                raise TypeError(
                    "PauliSum.from_strings expects a {label: coefficient} dict or two sequences "
                    f"(labels, coefficients), got {type_name(terms)} and {type_name(coefficients)}"
                ) from None
            if len(labels) != len(values):
                raise ValueError(
                    f"PauliSum.from_strings: {len(labels)} labels but {len(values)} coefficients "
                    "(the two sequences must have the same length)"
                )
        for label in labels:
            if not isinstance(label, str):
                raise TypeError("PauliSum.from_strings keys must be str")
        values = [coefficient(v) for v in values]
        if num_qubits is None:
            if not labels:
                raise ValueError(
                    "PauliSum.from_strings: cannot infer num_qubits from an empty input; pass num_qubits="
                )
            first = labels[0]
            if any(ch.isdigit() for ch in first):
                raise ValueError(
                    "PauliSum.from_strings: cannot infer num_qubits from a sparse label; pass num_qubits="
                )
            num_qubits = len(first)
        n = index(num_qubits, "num_qubits")
        return cls._wrap(_core.Sum.from_labels(n, labels, values))

    @classmethod
    def from_arrays(cls, x, z, coefficients, num_qubits) -> "PauliSum":
        """From ``x``/``z`` uint64 arrays of shape ``(n_terms, w)`` (1 ≤ w ≤ ``width``, narrower
        rows zero-padded; column j holds qubits 64j…64j+63) and 1-D complex128 or float64
        coefficients — the inverse of ``x_array``/``z_array``/``coefficients_array``. Duplicate
        rows add up, exact zeros are dropped."""
        x = _words_array(x, "x")
        z = _words_array(z, "z")
        if not isinstance(coefficients, np.ndarray):
            raise TypeError(
                "from_arrays: coefficients must be a numpy.ndarray of dtype complex128 or float64, "
                f"got {type_name(coefficients)}"
            )
        if coefficients.dtype not in (np.complex128, np.float64):
            raise TypeError(f"from_arrays: coefficients must have dtype complex128 or float64, got {coefficients.dtype}")
        if coefficients.ndim != 1:
            raise ValueError(f"from_arrays: coefficients must be 1-D, got shape {coefficients.shape}")
        n = index(num_qubits, "num_qubits")
        c = np.ascontiguousarray(coefficients)
        if c.dtype == np.float64:
            return cls._wrap(_core.Sum.from_arrays_real(n, x, z, c))
        return cls._wrap(_core.Sum.from_arrays_complex(n, x, z, c))

    # ---- accessors ----

    @property
    def num_qubits(self) -> int:
        return self._s.num_qubits

    @property
    def width(self) -> int:
        """64-bit words per term (1, 2, 4, 8 or 16): the columns of ``x_array``/``z_array``."""
        return self._s.width

    @property
    def num_buckets(self) -> int:
        """Realized bucket count of the hashed storage (grow-only)."""
        return self._s.num_buckets

    @property
    def is_complex(self) -> bool:
        """Whether coefficients are stored as complex numbers (``False``: real storage)."""
        return self._s.is_complex

    def __len__(self) -> int:
        return len(self._s)

    def coefficients(self) -> list:
        """The coefficients as Python complex numbers, in the order of ``x_array``/``z_array``."""
        return self._s.export(False, False, True)[2].tolist()

    def coefficients_array(self) -> np.ndarray:
        """The coefficients as a 1-D complex128 array (ascending key order)."""
        return self._s.export(False, False, True)[2]

    def x_array(self) -> np.ndarray:
        """X bits as a uint64 array of shape ``(len, width)``; column j holds qubits 64j…64j+63."""
        return self._s.export(True, False, False)[0]

    def z_array(self) -> np.ndarray:
        """Z bits as a uint64 array of shape ``(len, width)``."""
        return self._s.export(False, True, False)[1]

    def _arrays(self):
        return self._s.export(True, True, True)

    def __repr__(self) -> str:
        count = len(self._s)
        if count == 0:
            return "0"
        parts = [f"{_format_coefficient(c)}*{label}" for label, c in self._s.head(4)]
        text = " + ".join(parts)
        if count > 4:
            text += f" + ... ({count - 4} more terms)"
        return text

    __str__ = __repr__

    # ---- arithmetic ----

    def _check_other(self, other) -> None:
        if other.num_qubits != self.num_qubits:
            raise ValueError(f"num_qubits mismatch ({self.num_qubits} vs {other.num_qubits})")

    def __add__(self, other):
        if not isinstance(other, PauliSum):
            return NotImplemented
        self._check_other(other)
        result = self._s.copy()
        result.iadd(other._s)
        return PauliSum._wrap(result)

    def __sub__(self, other):
        if not isinstance(other, PauliSum):
            return NotImplemented
        self._check_other(other)
        result = self._s.copy()
        result.isub(other._s)
        return PauliSum._wrap(result)

    def __iadd__(self, other):
        if not isinstance(other, PauliSum):
            return NotImplemented
        self._check_other(other)
        self._s.iadd(other._s)
        return self

    def __isub__(self, other):
        if not isinstance(other, PauliSum):
            return NotImplemented
        self._check_other(other)
        self._s.isub(other._s)
        return self

    def _scalar(self, value):
        if isinstance(value, (PauliSum, PauliString)):
            raise TypeError(
                "PauliSum can only be multiplied by a scalar (complex, float or int); "
                "there is no operator product of two sums"
            )
        try:
            return coefficient(value)
        except TypeError:
            return None

    def __mul__(self, value):
        c = self._scalar(value)
        if c is None:
            return NotImplemented
        result = self._s.copy()
        result.iscale(c)
        return PauliSum._wrap(result)

    __rmul__ = __mul__

    def __imul__(self, value):
        c = self._scalar(value)
        if c is None:
            return NotImplemented
        self._s.iscale(c)
        return self

    def __neg__(self):
        return self * -1.0

    # ---- read-outs ----

    def expectation(self, state="x+") -> complex:
        """⟨s|O|s⟩ in a product state: ``"x+"``, ``"y+"``, ``"z+"`` (every qubit; ``"z+"`` =
        |0…0⟩) or one character per qubit over ``0 1 + - r l`` (qiskit's ``from_label``)."""
        if not isinstance(state, str):
            raise TypeError(f"expectation: state must be a str, got {type_name(state)}")
        return complex(self._s.expectation(state))

    def expectation_stabilizer(self, generators) -> complex:
        """⟨ψ|O|ψ⟩ in the stabilizer state of ``num_qubits`` signed, commuting, independent
        generators (``"+XX"``, ``"-ZZ"``, bare = +)."""
        if isinstance(generators, (str, bytes)):
            raise TypeError("expectation_stabilizer expects a sequence of generator strings, got a single str")
        gens = list(generators)
        for g in gens:
            if not isinstance(g, str):
                raise TypeError(f"expectation_stabilizer: generators must be str, got {type_name(g)}")
        return complex(self._s.expectation_stabilizer(gens))

    def overlap(self, other) -> complex:
        """tr(self† · other)/2^n = Σ conj(a_i)·b_i over shared strings."""
        if not isinstance(other, PauliSum):
            raise TypeError(f"overlap expects a PauliSum, got {type_name(other)}")
        return complex(self._s.overlap(other._s))

    def identity_coefficient(self) -> complex:
        """The coefficient of I…I, i.e. tr(O)/2^n."""
        return complex(self._s.identity_coefficient())

    def anticommute_histogram(self, sites, axis="x", comm=None) -> list:
        """w[k] = Σ|c|² of the strings anticommuting with exactly k of the G_q (G = X or Z) on
        ``sites``; ``len(sites) + 1`` floats summing to Σ|c|²."""
        if comm is not None:
            if not _core.mpi:
                raise RuntimeError(_NO_MPI.format(what="anticommute_histogram(comm=...)"))
            raise NotImplementedError(_NO_COLLECTIVE_READOUT.format(what="anticommute_histogram(comm=...)"))
        return list(self._s.anticommute_histogram(_sites(sites), _axis(axis)))

    def rotated_overlap(self, sites, delta, axis="x", comm=None) -> float:
        """Operator Loschmidt echo 2^-n Tr(A V† A V) with V = Π_{q∈sites} exp(−iδG_q), exact."""
        if comm is not None:
            if not _core.mpi:
                raise RuntimeError(_NO_MPI.format(what="rotated_overlap(comm=...)"))
            raise NotImplementedError(_NO_COLLECTIVE_READOUT.format(what="rotated_overlap(comm=...)"))
        value = self._s.rotated_overlap(_sites(sites), real(delta, "delta"), _axis(axis))
        return float(complex(value).real)

    # ---- devices ----

    def to_device(self, device=0, *, complex_coefficients=False) -> "GpuPauliSum":
        """Copy to CUDA device ``device`` (an ordinal) as a resident ``GpuPauliSum``; ``self`` is
        unchanged. ``complex_coefficients=True`` uploads a real-coefficient sum with complex storage
        (every channel built from Python has real transfer amplitudes, so this is never needed for
        them; see ``GpuPauliSum``).
        Raises ``RuntimeError`` with the reason when no GPU is usable (``cuda_available()`` is False)
        or the device does not exist, ``MemoryError`` when the device has too little free memory."""
        return GpuPauliSum(self, device, complex_coefficients=complex_coefficients)

    # ---- propagation ----

    def propagate(
        self,
        circuit,
        policy=None,
        direction=None,
        target_bucket_len=None,
        min_buckets=None,
        partitions=None,
        pin_memory=True,
        partition_row_seed=None,
        partition_row_blocks=None,
        partition_row_exclude=None,
        comm=None,
        result="gather",
        device=None,
        *,
        threads=None,
        checkpoint=None,
        checkpoint_every=None,
        resume=None,
        memory_limit=None,
        auto_truncate=True,
        memory_guard=True,
        engine=None,
        small_sum_threshold=None,
        nccl=False,
        input="replicated",
        route_orbits_from=None,
    ) -> "PauliSum":
        """Propagate through ``circuit`` and return the evolved sum (``self`` is unchanged).

        ``direction`` is ``"forward"`` (default: U·O·U†, gates in written order) or
        ``"heisenberg"`` (U†·O·U, last gate first). ``policy`` is a ``truncation`` policy (None:
        only exact zeros are dropped). See docs/python.md for every option; added by this
        implementation: ``threads`` (0 = every core), ``checkpoint``/``checkpoint_every``/
        ``resume``, ``memory_limit``/``auto_truncate`` (on a GPU, in bytes of device memory) and
        ``memory_guard`` (default True: a run on the CPU stops with ``HostMemoryExceeded``, a
        ``MemoryError``, before a layer that could outgrow the memory the process may use, writing its
        checkpoint when one is asked for; False turns the guard off; a byte count, such as 4_000_000
        or ``"8G"``, is the memory the guard lets the run use instead of what the host has free).

        Partitioned runs (the library's ``propagate_partitioned``): ``partitions=P`` (a power of two
        up to 64) splits the sum into P partitions run as threads of this process, each with
        ``threads / P`` engine threads, exchanging only the rows that cross partitions; results
        agree with the unpartitioned run to rounding. ``"auto"`` is the NUMA node count rounded
        down to a power of two, partition r pinned to node r's CPUs; a list of CPU lists gives P =
        its length and pins
        partition r (its thread and engine threads, and so the memory it first touches) to list r,
        with as many engine threads as CPUs listed unless ``threads=`` is given (``pin_memory`` is
        accepted and ignored: first touch places the memory). ``comm=`` (an mpi4py
        intracommunicator of power-of-two size; collective: every rank passes the same sum,
        circuit and options) runs one partition per rank; ``result="gather"`` returns the whole
        sum on every rank, ``"local"`` only this rank's share (the shares are disjoint and add up to
        the whole). Rows: ``partition_row_seed`` (seeded random rows), ``partition_row_blocks``
        (one block of qubits per partition: a cut reading Z/Y parities), ``partition_row_exclude``
        (``{"x": [...], "z": [...]}``: seeded rows reading no bit of the listed qubits — both the
        x and z bits of each listed qubit are left out). Exact ``topn`` runs partitioned (a
        distributed selection); ``collapse_sample`` needs one partition (``ValueError``);
        ``checkpoint``/``resume`` work with ``partitions=`` and with ``comm=``: there every rank writes its
        share to ``PATH.part-R-of-K`` (no gather; a gathered result is gathered once at the end), and a
        checkpoint of K ranks resumes with any number of ranks, or without ``comm=`` (the parts added).

        ``device=``: None runs on the CPU; an int k (or ``[k]``) on CUDA device k (upload, propagate,
        download). A list of P ordinals (P a power of two up to 64; repeats share a device, e.g.
        ``[0, 0]``) runs P GPU partitions in this process, partition r on ``device[r]``, rows
        crossing partitions exchanged device to device; results agree with the CPU to rounding.
        ``"auto"`` is devices 0..k−1, k the largest power of two ≤ the visible devices (one device:
        the single-device engine), and the CPU when ``cuda_available()`` is False. Under ``comm=``,
        ``device=k`` (or ``[k]``) runs this rank's partition on device k, a list of one device per
        rank puts rank r on ``device[r]``; ``"auto"`` is a ``ValueError`` there. ``device=`` with
        ``partitions=`` is a ``ValueError`` (the device list sets the partition count). Without a
        usable GPU every device value but None and ``"auto"`` raises ``RuntimeError`` with the reason.
        ``nccl=True`` (under ``comm=`` with ``device=``, every rank alike): the ranks swap rows device to
        device with NCCL instead of through host memory (faster on large remote layers, slower on many
        small ones; a ``ValueError`` elsewhere, ``RuntimeError`` from a build without NCCL).
        ``input=`` under ``comm=`` says what each rank passes: ``"replicated"`` (default) the whole sum,
        ``"scattered"`` any part of it (the parts add up to the whole, e.g. the lines of a file each rank
        read; the library routes every term to its owner first), ``"share"`` exactly its own partition's
        terms. The last two are the distributed load path: no rank holds the whole input.
        ``route_orbits_from=N`` (partitioned runs; default 8192): from N terms in the largest partition, a
        remote dense two-qubit layer (~16 outputs an input, e.g. a Haar unitary) first moves every orbit
        whole to one partition, so each output is computed once and appended by its owner instead of
        summed from two halves (two exchanges instead of one; faster on large sums, see
        docs/PERFORMANCE.md); 0 routes every routable layer, a huge value never; a ``ValueError`` without
        partitions.
        """
        out, _ = self._run(circuit, policy, direction, target_bucket_len, min_buckets, partitions, pin_memory,
                           partition_row_seed, partition_row_blocks, partition_row_exclude, comm, result, device,
                           threads, checkpoint, checkpoint_every, resume, memory_limit, auto_truncate, engine,
                           small_sum_threshold, keep_records=False, nccl=nccl, input=input,
                           route_orbits_from=route_orbits_from, memory_guard=memory_guard)
        return out

    def propagate_with_stats(
        self,
        circuit,
        policy=None,
        direction=None,
        target_bucket_len=None,
        min_buckets=None,
        partitions=None,
        pin_memory=True,
        partition_row_seed=None,
        partition_row_blocks=None,
        partition_row_exclude=None,
        comm=None,
        result="gather",
        device=None,
        *,
        threads=None,
        checkpoint=None,
        checkpoint_every=None,
        resume=None,
        memory_limit=None,
        auto_truncate=True,
        memory_guard=True,
        engine=None,
        small_sum_threshold=None,
        nccl=False,
        input="replicated",
        route_orbits_from=None,
    ):
        """``propagate`` plus a ``PropagationStats`` record: returns ``(PauliSum, PropagationStats)``."""
        return self._run(circuit, policy, direction, target_bucket_len, min_buckets, partitions, pin_memory,
                         partition_row_seed, partition_row_blocks, partition_row_exclude, comm, result, device,
                         threads, checkpoint, checkpoint_every, resume, memory_limit, auto_truncate, engine,
                         small_sum_threshold, keep_records=True, nccl=nccl, input=input,
                         route_orbits_from=route_orbits_from, memory_guard=memory_guard)

    def _run(self, circuit, policy, direction, target_bucket_len, min_buckets, partitions, pin_memory,
             partition_row_seed, partition_row_blocks, partition_row_exclude, comm, result, device, threads,
             checkpoint, checkpoint_every, resume, memory_limit, auto_truncate, engine, small_sum_threshold,
             keep_records, nccl=False, input="replicated", route_orbits_from=None, memory_guard=True):
        if not isinstance(circuit, Circuit):
            raise TypeError(f"propagate expects a Circuit, got {type_name(circuit)}")
        if policy is not None and not isinstance(policy, Truncation):
            raise TypeError(
                f"policy must be a Truncation (from paulistrings.truncation) or None, got {type_name(policy)}"
            )
        direction = _direction(direction)
        if self.num_qubits != circuit.num_qubits:
            raise ValueError(
                f"PauliSum.num_qubits ({self.num_qubits}) != Circuit.num_qubits ({circuit.num_qubits})"
            )
        target_bucket_len = 1024 if target_bucket_len is None else _positive(target_bucket_len, "target_bucket_len")
        min_buckets = 128 if min_buckets is None else _positive(min_buckets, "min_buckets")
        _check_engine(engine, small_sum_threshold)
        ordinal, plan = _check_distribution(policy, partitions, pin_memory, partition_row_seed,
                                            partition_row_blocks, partition_row_exclude, comm, result, device)
        threads = _threads(threads)
        if not isinstance(nccl, bool):
            raise TypeError(f"nccl must be a bool, got {type_name(nccl)}")
        if nccl and (plan.comm is None or plan.devices is None):
            raise ValueError("nccl=True swaps rows between GPU ranks: it needs comm= and device=")
        if not isinstance(input, str) or input not in ("replicated", "scattered", "share"):
            raise ValueError(f"input must be 'replicated', 'scattered' or 'share', got {input!r}")
        if input != "replicated" and plan.comm is None:
            raise ValueError(f"input={input!r} says what each MPI rank passes: it needs comm=")
        if route_orbits_from is not None:
            route_orbits_from = index(route_orbits_from, "route_orbits_from")
            if not plan.partitioned:
                raise ValueError("route_orbits_from is for partitioned runs (partitions=, comm= or a device list)")
        every = _checkpoint_every(checkpoint, checkpoint_every)
        core_policy = policy._t if policy is not None else _core.Truncation()

        # One RunOptions for the library's run orchestration (run/orchestrate.h: resume, memory budget,
        # checkpoint schedule and parts, segments).
        options = _core.RunOptions()
        run = options.propagate
        run.direction = direction
        run.truncation = core_policy
        run.target_bucket_len = target_bucket_len
        run.min_buckets = min_buckets
        run.threads = threads
        run.device = ordinal
        run.keep_layer_records = keep_records
        run.auto_truncate = bool(auto_truncate)
        if plan.partitioned:
            part = options.partition
            part.partitions = plan.count
            part.row_policy = plan.row_policy
            if plan.row_seed is not None:
                part.row_seed = plan.row_seed
            part.excluded_qubits = plan.excluded or []
            part.cut_blocks = plan.blocks or []
            part.result = plan.result
            part.cpu_lists = plan.cpu_lists or []
            part.devices = plan.devices or []
            part.use_nccl = nccl
            part.input = input
            if route_orbits_from is not None:
                part.route_orbits_from = route_orbits_from
        if checkpoint is not None or resume is not None:
            fingerprint = _core.run_fingerprint(self._s, circuit._c, direction, core_policy)
            if plan.comm is not None and input != "replicated":
                # Each rank passed its own part of the observable: the run is the one of all the parts.
                fingerprint = _combine_fingerprints(plan.comm.allgather(fingerprint))
            options.fingerprint = fingerprint
        if checkpoint is not None:
            options.checkpoint = os.fspath(checkpoint)
            options.checkpoint_every = every
        if resume is not None:
            options.resume = os.fspath(resume)
        if memory_limit is not None:
            options.memory_limit = _parse_size(memory_limit)
        if isinstance(memory_guard, bool):
            options.memory_guard = memory_guard
        elif isinstance(memory_guard, (int, str)):
            allowance = _parse_size(memory_guard, "memory_guard")
            if allowance <= 0:
                raise ValueError(f"memory_guard: the allowance must be more than 0 bytes, got {memory_guard!r}")
            options.memory_guard = True
            options.memory_guard_bytes = allowance
        else:
            raise TypeError(f"memory_guard must be a bool or a byte count, got {type_name(memory_guard)}")
        # The run replaces it with the checkpoint's sum when it resumes.
        work = self._s.copy() if resume is None else _core.Sum(self.num_qubits)

        info = _log.isEnabledFor(logging.INFO)
        callback = _log_layer if _log.isEnabledFor(logging.DEBUG) else None
        poll = threading.current_thread() is threading.main_thread()
        if info:
            runs_on = f"{threads or 'all'} threads"
            if plan.devices is not None and plan.comm is None:
                runs_on = f"CUDA devices {plan.devices}"
            elif plan.devices is not None:
                runs_on = f"CUDA device {plan.devices[plan.rank if len(plan.devices) > 1 else 0]}"
            if plan.comm is not None:
                where = f"rank {plan.rank} of {plan.count} (MPI), {runs_on}"
            elif plan.count > 1:
                where = f"{plan.count} partitions, {runs_on}"
            elif ordinal >= 0:
                where = f"CUDA device {ordinal}"
            else:
                where = f"{threads or 'all'} threads"
            _log.info(
                "propagate: %d terms on %d qubits through %d layers (%s, policy %s, %s)",
                len(self), self.num_qubits, len(circuit), direction,
                policy if policy is not None else "None", where,
            )
        began = time.perf_counter()
        gates = circuit._c.copy()  # a snapshot: other threads may keep editing `circuit` meanwhile
        res = _core.propagate(work, gates, options, comm=plan.comm, layer_callback=callback, poll_signals=poll)
        exception = res["exception"]
        if res["interrupted"] or exception is not None:
            # Ctrl-C or a failed logging callback, here or (under comm=) on another rank; the run has
            # written its checkpoint.
            if info:
                written = os.fspath(checkpoint) if checkpoint is not None else None
                if written is not None and plan.comm is not None:
                    written = (_core.checkpoint_part_path(written, 0, plan.count)
                               + f" … (one part per rank, {plan.count} parts)")
                _log.info("propagate: interrupted after layer %d of %d%s", res["layers_done"], len(circuit),
                          f"; checkpoint written to {written}" if written is not None else "")
            if exception is not None:
                raise exception
            # That rank raises its own exception, the others this one.
            raise RuntimeError(
                f"propagate(comm=...): another rank stopped the run after layer {res['layers_done']} of "
                f"{len(circuit)} (interrupted, or its logging callback raised); this is rank {plan.rank}"
            )
        stats = _stats(res, policy)
        if info:
            _log.info("propagate: done, %d terms (peak %d) in %.3f s", stats.final_terms, stats.peak_terms,
                      time.perf_counter() - began)
        return PauliSum._wrap(work), stats


# =============================================================================
# GpuPauliSum
# =============================================================================


class GpuPauliSum:
    """A Pauli sum resident on one CUDA device.

    ``PauliSum.to_device(device)`` (or ``GpuPauliSum(sum, device)``) uploads a copy; ``propagate``
    evolves it in place without leaving the device, so chained calls pay for one upload;
    ``to_host()`` copies it back and it stays resident. The device memory is freed when the object
    is garbage-collected. Raises ``RuntimeError`` with the reason when no GPU is usable
    (``cuda_available()`` is False) or the ordinal does not exist, ``MemoryError`` when the device
    runs out of memory (the sum then still holds the last completed layer's output).

    Coefficients keep the host sum's storage (``is_complex``). Every gate and noise channel built
    from Python, ``unitary_1q``/``unitary_2q`` included, has real Pauli transfer amplitudes, so a
    real resident sum takes any such circuit. A channel with complex amplitudes (a user-defined C++
    channel) is refused on a real resident sum with ``ValueError`` naming the gate, before any layer
    runs: upload with ``to_device(device, complex_coefficients=True)`` for it.
    """

    __slots__ = ("_d", "__weakref__")

    def __init__(self, sum, device=0, *, complex_coefficients=False):
        if not isinstance(sum, PauliSum):
            raise TypeError(f"GpuPauliSum expects a PauliSum to upload, got {type_name(sum)}")
        ordinal = _device_ordinal(device)
        _require_cuda(f"to_device(device={ordinal})")
        self._d = _core.DeviceSum(sum._s, ordinal, bool(complex_coefficients))

    # ---- accessors ----

    @property
    def num_qubits(self) -> int:
        return self._d.num_qubits

    @property
    def device(self) -> int:
        """The CUDA device ordinal the sum lives on."""
        return self._d.device

    @property
    def width(self) -> int:
        """64-bit words per term (1, 2, 4, 8 or 16), as the host sum's."""
        return self._d.width

    @property
    def is_complex(self) -> bool:
        """Whether coefficients are stored as complex numbers on the device."""
        return self._d.is_complex

    @property
    def num_buckets(self) -> int:
        """Always 1: the GPU engine keeps one unbucketed table per device (it sizes its hash join
        per layer), kept for the original's API."""
        return 1

    @property
    def device_bytes(self) -> int:
        """Device memory the sum holds now (bytes)."""
        return self._d.device_bytes

    @property
    def peak_device_bytes(self) -> int:
        """The most device memory the sum held at once since the upload (bytes)."""
        return self._d.peak_device_bytes

    def __len__(self) -> int:
        return len(self._d)

    def __repr__(self) -> str:
        return f"GpuPauliSum({len(self._d)} terms on {self.num_qubits} qubits, CUDA device {self.device})"

    def to_host(self) -> PauliSum:
        """A host copy (``PauliSum``); the sum stays resident."""
        return PauliSum._wrap(self._d.download())

    # ---- propagation ----

    def propagate(self, circuit, policy=None, direction=None, target_bucket_len=None, min_buckets=None, *,
                  memory_limit=None, auto_truncate=True) -> None:
        """Propagate through ``circuit`` in place on the device (returns None). ``policy`` and
        ``direction`` as in ``PauliSum.propagate``; ``target_bucket_len`` and ``min_buckets`` are
        checked and ignored (the GPU engine has no buckets). ``memory_limit`` (bytes of device memory,
        or ``"512M"``) and ``auto_truncate`` as in ``PauliSum.propagate(device=...)``. Ctrl-C stops after
        the current layer, leaving that layer's output on the device; ``MemoryError`` when the device
        runs out of memory leaves the output of the layer before the one that could not run."""
        self._run(circuit, policy, direction, target_bucket_len, min_buckets, keep_records=False,
                  memory_limit=memory_limit, auto_truncate=auto_truncate)

    def propagate_with_stats(self, circuit, policy=None, direction=None, target_bucket_len=None,
                             min_buckets=None, *, memory_limit=None, auto_truncate=True) -> PropagationStats:
        """``propagate`` in place, returning its ``PropagationStats``."""
        return self._run(circuit, policy, direction, target_bucket_len, min_buckets, keep_records=True,
                         memory_limit=memory_limit, auto_truncate=auto_truncate)

    def _run(self, circuit, policy, direction, target_bucket_len, min_buckets, keep_records, memory_limit=None,
             auto_truncate=True) -> PropagationStats:
        if not isinstance(circuit, Circuit):
            raise TypeError(f"propagate expects a Circuit, got {type_name(circuit)}")
        if policy is not None and not isinstance(policy, Truncation):
            raise TypeError(
                f"policy must be a Truncation (from paulistrings.truncation) or None, got {type_name(policy)}"
            )
        direction = _direction(direction)
        if self.num_qubits != circuit.num_qubits:
            raise ValueError(
                f"GpuPauliSum.num_qubits ({self.num_qubits}) != Circuit.num_qubits ({circuit.num_qubits})"
            )
        target_bucket_len = 1024 if target_bucket_len is None else _positive(target_bucket_len, "target_bucket_len")
        min_buckets = 128 if min_buckets is None else _positive(min_buckets, "min_buckets")
        core_policy = policy._t if policy is not None else _core.Truncation()

        info = _log.isEnabledFor(logging.INFO)
        callback = _log_layer if _log.isEnabledFor(logging.DEBUG) else None
        poll = threading.current_thread() is threading.main_thread()
        if info:
            _log.info(
                "propagate: %d terms on %d qubits through %d layers (%s, policy %s, resident on CUDA device %d)",
                len(self._d), self.num_qubits, len(circuit), direction,
                policy if policy is not None else "None", self.device,
            )
        began = time.perf_counter()
        gates = circuit._c.copy()  # a snapshot: other threads may keep editing `circuit` meanwhile
        limit = None if memory_limit is None else _parse_size(memory_limit)
        res = self._d.propagate(gates, core_policy, direction, target_bucket_len, min_buckets, keep_records,
                                callback, poll, limit, bool(auto_truncate))
        if res["exception"] is not None:
            if info:
                _log.info("propagate: interrupted after layer %d of %d", res["layers_done"], len(circuit))
            raise res["exception"]
        stats = _stats(res, policy)
        if info:
            _log.info("propagate: done, %d terms (peak %d) in %.3f s", stats.final_terms, stats.peak_terms,
                      time.perf_counter() - began)
        return stats


# =============================================================================
# helpers of propagate
# =============================================================================


def _is_int(value) -> bool:
    try:
        operator.index(value)
        return True
    except TypeError:
        return False


def _direction(direction) -> str:
    if direction is None:
        return "forward"
    if not isinstance(direction, str):
        raise TypeError(f"direction must be a str ('forward' or 'heisenberg'), got {type_name(direction)}")
    if direction not in ("forward", "heisenberg"):
        raise ValueError(f"direction must be 'forward' or 'heisenberg', got \"{direction}\"")
    return direction


def _positive(value, what: str) -> int:
    n = index(value, what)
    if n == 0:
        raise ValueError(f"{what} must be at least 1")
    return n


def _sites(sites) -> list:
    if isinstance(sites, (str, bytes)):
        raise TypeError("sites must be a sequence of qubit indices, got a str")
    try:
        return [qubit(q, "sites") for q in sites]
    except TypeError as e:
        if "object cannot be interpreted" in str(e):
            raise
        raise TypeError(f"sites must be a sequence of qubit indices, got {type_name(sites)}") from None


def _axis(axis) -> str:
    if not isinstance(axis, str):
        raise TypeError(f"axis must be 'x' or 'z', got {type_name(axis)}")
    return axis


def _check_engine(engine, small_sum_threshold) -> None:
    # The original's early engine= / small_sum_threshold= knobs (removed there later): accepted and
    # validated for old scripts; this engine chooses its small-sum path by itself.
    if engine is not None and engine not in ("sorted", "auto", "direct"):
        raise ValueError(f"engine must be 'sorted', 'auto' or 'direct', got {engine!r}")
    if small_sum_threshold is not None:
        index(small_sum_threshold, "small_sum_threshold")


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _power_of_two_at_most(n: int) -> int:
    """The largest power of two ≤ n and ≤ 64 (the most partitions a run takes); 1 when n < 2."""
    count = 1
    while count * 2 <= min(n, 64):
        count *= 2
    return count


@dataclass
class _Partitioning:
    """How a propagate call is partitioned (``_check_distribution``); ``count == 1`` and no comm:
    unpartitioned."""

    count: int = 1
    cpus: int = 0  # CPUs in the partitions= CPU lists (0: not given)
    cpu_lists: list = None  # partitions= as CPU lists: partition r is pinned to cpu_lists[r]
    row_policy: str = "seeded"
    row_seed: Optional[int] = None
    excluded: list = None
    blocks: list = None
    comm: object = None
    mpi: object = None  # the mpi4py.MPI module under comm=
    rank: int = 0
    result: str = "gather"
    # GPU partitions (the library's PartitionOptions::devices): in-process partition r on devices[r];
    # under comm= this rank's device, or one per rank. None: the CPU engine.
    devices: list = None

    @property
    def partitioned(self) -> bool:
        return self.count > 1 or self.comm is not None or bool(self.cpu_lists) or bool(self.devices)


def _check_distribution(policy, partitions, pin_memory, row_seed, row_blocks, row_exclude, comm, result,
                        device):
    """Checks the distribution arguments; returns ``(ordinal, partitioning)``: the CUDA ordinal of an
    unpartitioned device run (−1: the CPU, or partitions) and a ``_Partitioning`` (its ``devices``:
    the GPU partitions)."""
    if not isinstance(result, str) or result not in ("gather", "local"):
        raise ValueError(f"result must be 'gather' or 'local', got {result!r}")
    if not isinstance(pin_memory, bool):
        raise TypeError(f"pin_memory must be a bool, got {type_name(pin_memory)}")
    if comm is not None and partitions is not None:
        raise ValueError("comm= and partitions= are mutually exclusive (under comm= each rank is one partition)")
    if device is not None and partitions is not None:
        raise ValueError(_device_with_partitions(device, partitions))

    plan = _Partitioning(result=result)
    plan.count, plan.cpus = _partition_count(partitions)
    if isinstance(partitions, (list, tuple)):
        plan.cpu_lists = [[operator.index(c) for c in cpus] for cpus in partitions]
    elif isinstance(partitions, str) and plan.count > 1:
        plan.cpu_lists = numa_nodes()[: plan.count]  # "auto": partition r on NUMA node r's CPUs
    ordinal, devices = _resolve_device(device, distributed=comm is not None)
    if devices is not None and comm is None:
        plan.count, plan.devices = len(devices), devices  # in-process GPU partitions: the list sets P
    if (row_seed is not None or row_blocks is not None or row_exclude is not None) and not (
        plan.count > 1 or comm is not None
    ):
        raise ValueError(
            "partition_row_seed / partition_row_blocks / partition_row_exclude need a partitioned run "
            "(partitions= of 2 or more, comm=, or several devices)"
        )
    if row_seed is not None:
        plan.row_seed = index(row_seed, "partition_row_seed")
    if row_blocks is not None:
        if row_seed is not None or row_exclude is not None:
            raise ValueError("partition_row_blocks chooses the rows itself: it cannot be combined with "
                             "partition_row_seed or partition_row_exclude")
        if isinstance(row_blocks, (str, bytes, Mapping)) or not hasattr(row_blocks, "__iter__"):
            raise TypeError(f"partition_row_blocks must be a list of qubit lists, got {type_name(row_blocks)}")
        plan.blocks = [qubit_list(block, "partition_row_blocks") for block in row_blocks]
        plan.row_policy = "cut"
    if row_exclude is not None:
        if not isinstance(row_exclude, Mapping) or not set(row_exclude) <= {"x", "z"}:
            raise ValueError('partition_row_exclude must be a dict {"x": [...], "z": [...]}')
        excluded = set()
        for axis in ("x", "z"):
            if row_exclude.get(axis) is not None:
                excluded |= set(qubit_list(row_exclude[axis], f"partition_row_exclude[{axis!r}]"))
        plan.excluded = sorted(excluded)
        plan.row_policy = "seeded_excluding"

    if comm is not None:
        plan.mpi, size, plan.rank = _mpi_comm(comm)
        if not _power_of_two(size) or size > 64:
            raise ValueError(f"comm=: the communicator must have a power-of-two size up to 64 (one partition "
                             f"per rank), got {size} ranks")
        plan.comm, plan.count = comm, size
        if devices is not None and len(devices) not in (1, size):
            raise ValueError(f"device={device!r} with comm=: give one device (this rank's) or one per rank "
                             f"({size} ranks), got {len(devices)} devices")
        plan.devices = devices
    if plan.blocks is not None and plan.partitioned and len(plan.blocks) != plan.count:
        raise ValueError(f"partition_row_blocks: expected {plan.count} blocks (one per partition), "
                         f"got {len(plan.blocks)}")
    if plan.count > 1 and policy is not None and policy._contains("collapse_sample"):
        raise ValueError(
            f"collapse_sample needs one partition (its sampling pass is sequential), got {plan.count} "
            "partitions; run unpartitioned or use another truncation"
        )
    if ordinal >= 0 or devices is not None:
        # Last, so that a bad combination of arguments is reported as such on any machine.
        _require_cuda(f"device={device!r}")
    return ordinal, plan


def _mpi_comm(comm):
    """``(mpi4py.MPI, size, rank)`` of an mpi4py communicator; RuntimeError without MPI support."""
    if not _core.mpi:
        raise RuntimeError(_NO_MPI.format(what="comm="))
    mpi = sys.modules.get("mpi4py.MPI")  # never imported here: a communicator implies it is loaded
    if mpi is None or not isinstance(comm, mpi.Intracomm):
        raise TypeError(f"comm must be an mpi4py intracommunicator (e.g. mpi4py.MPI.COMM_WORLD), "
                        f"got {type_name(comm)}")
    return mpi, comm.Get_size(), comm.Get_rank()


def _partition_count(partitions):
    """``(P, cpus)``: the partition count of ``partitions=`` and the CPUs its CPU lists name (0
    when not given as CPU lists)."""
    if partitions is None:
        return 1, 0
    if isinstance(partitions, bool):
        raise TypeError("partitions must be None, 'auto', a power-of-two int or a list of CPU lists, got bool")
    if isinstance(partitions, str):
        if partitions != "auto":
            raise ValueError(f"partitions must be None, 'auto', a power-of-two int or a list of CPU lists, "
                             f"got {partitions!r}")
        return _power_of_two_at_most(len(numa_nodes())), 0
    if _is_int(partitions):
        k = operator.index(partitions)
        if not _power_of_two(k) or k > 64:
            raise ValueError(f"partitions must be a power of two between 1 and 64, got {k}")
        return k, 0
    if isinstance(partitions, (list, tuple)):
        if not partitions:
            raise ValueError("partitions: the list of CPU lists is empty")
        seen = set()
        for cpus in partitions:
            if isinstance(cpus, (str, bytes)) or not hasattr(cpus, "__iter__"):
                raise TypeError("partitions: expected a list of CPU lists (lists of ints)")
            cpus = [index(c, "partitions") for c in cpus]
            if not cpus:
                raise ValueError("partitions: every CPU list must be non-empty")
            if seen & set(cpus):
                raise ValueError("partitions: CPU lists must be disjoint")
            seen |= set(cpus)
        if not _power_of_two(len(partitions)) or len(partitions) > 64:
            raise ValueError(f"partitions: the number of CPU lists must be a power of two up to 64, "
                             f"got {len(partitions)}")
        return len(partitions), len(seen)
    raise TypeError(f"partitions must be None, 'auto', a power-of-two int or a list of CPU lists, "
                    f"got {type_name(partitions)}")


_DEVICE_KINDS = "None, an int, a list of ints or 'auto'"


def _device_ordinal(value, what: str = "device") -> int:
    """One CUDA device ordinal (an int ≥ 0)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be a CUDA device ordinal (an int), got bool")
    if not _is_int(value):
        raise TypeError(f"{what} must be a CUDA device ordinal (an int), got {type_name(value)}")
    ordinal = operator.index(value)
    if ordinal < 0:
        raise OverflowError(f"{what} must be a CUDA device ordinal ≥ 0, got {ordinal} (device=None runs on the CPU)")
    if ordinal > 2**31 - 1:
        raise OverflowError(f"{what}: CUDA device ordinal {ordinal} is out of range")
    return ordinal


def _require_cuda(what: str) -> None:
    """Raises RuntimeError with the reason when no CUDA device is usable."""
    if _core.cuda_device_count() == 0:
        raise RuntimeError(f"{what}: GPU propagation is not available: {_core.cuda_unavailable_reason()}")


def _resolve_device(device, distributed: bool = False):
    """The ``device=`` argument of propagate as ``(ordinal, devices)``: ``ordinal`` the CUDA device of an
    unpartitioned run (−1: the CPU, or a partitioned run), ``devices`` the ordinals of GPU partitions
    (the library's ``PartitionOptions::devices``; None: the CPU engine).

    None → the CPU. An int k or [k] → device k: in-process the single-device engine (unpartitioned),
    under comm= (``distributed``) this rank's device. A list of P ordinals (P a power of two up to
    64, repeats share a device) → P GPU partitions in this process, or under comm= one device per
    rank. 'auto' → devices 0..k−1, k the largest power of two ≤ the visible devices (k = 1: the
    single-device engine); the CPU when ``cuda_available()`` is False, as before device lists.
    Checks the values only: the caller requires CUDA (``_require_cuda``) once every argument is checked."""
    if device is None:
        return -1, None
    if isinstance(device, bool):
        raise TypeError(f"device must be {_DEVICE_KINDS}, got bool")
    if isinstance(device, str):
        if device != "auto":
            raise ValueError(f"device must be {_DEVICE_KINDS}, got {device!r}")
        if distributed:
            # Which GPU is this rank's depends on how ranks are placed on nodes: the caller knows.
            raise ValueError("device='auto' cannot be combined with comm=: pass this rank's CUDA device "
                             "(device=k, e.g. the node-local rank) or one device per rank")
        visible = _core.cuda_device_count()
        if visible == 0:
            return -1, None  # no usable GPU: the CPU, as "auto" has always meant
        count = _power_of_two_at_most(visible)
        return (0, None) if count == 1 else (-1, list(range(count)))
    if _is_int(device):
        ids = [_device_ordinal(device)]
    elif isinstance(device, (list, tuple)):
        ids = [_device_ordinal(d, f"device[{i}]") for i, d in enumerate(device)]
        if not _power_of_two(len(ids)) or len(ids) > 64:
            raise ValueError(f"device: a list of devices must have a power-of-two length up to 64 (one device "
                             f"per partition), got {len(ids)}")
    else:
        raise TypeError(f"device must be {_DEVICE_KINDS}, got {type_name(device)}")
    if len(ids) == 1 and not distributed:
        return ids[0], None
    return -1, ids


def _device_with_partitions(device, partitions) -> str:
    """The ValueError message of device= together with partitions=: GPU partitions are a device list."""
    count = operator.index(partitions) if _is_int(partitions) and not isinstance(partitions, bool) else None
    first = operator.index(device) if _is_int(device) and not isinstance(device, bool) else 0
    example = f"device=[{first}] * {count}" if count is not None else f"device=[{first}, {first}]"
    return (f"device= and partitions= are mutually exclusive: for GPU partitions pass a list of devices, one "
            f"per partition (the list sets the partition count; repeats share a device), e.g. {example}")


def _threads(threads) -> int:
    if threads is None:
        # The original's thread-count variable, read as rayon reads it: a count, anything else (a
        # sign, a fraction, "4_0", spaces) is ignored and every core is used.
        env = os.environ.get("RAYON_NUM_THREADS", "")
        return int(env) if env.isascii() and env.isdigit() and int(env) <= 2**31 - 1 else 0
    if isinstance(threads, bool):
        raise TypeError("threads must be an int (0 = every core)")
    n = index(threads, "threads", limit=2**31 - 1)
    return n


def _checkpoint_every(checkpoint, every) -> int:
    if every is None:
        return 0
    if checkpoint is None:
        raise ValueError("checkpoint_every needs checkpoint=PATH")
    return _positive(every, "checkpoint_every")


def _combine_fingerprints(fingerprints) -> int:
    """One 64-bit fingerprint of a run whose observable came in parts (one per rank, in rank order)."""
    h = 0xCBF29CE484222325
    for f in fingerprints:
        h = ((h ^ f) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _parse_size(value, name="memory_limit") -> int:
    """Bytes: an int, or a str the way --memory-limit reads it ("2G", "1.5G", "1e9"; core/text.h)."""
    if isinstance(value, str):
        try:
            return _core.parse_size(value)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int (bytes) or a str like '2G'")
    return index(value, name)


def _log_layer(k, n, name, terms_in, terms_out, nanos, discarded):
    _log.debug("layer %d/%d [%s]: %d -> %d terms, %.3f ms", k, n, name, terms_in, terms_out, nanos / 1e6)


def _partition_stats(res) -> Optional[PartitionStats]:
    """PartitionStats of a partitioned run's record (the whole run: the library merges its segments)."""
    p = res.get("partition")
    if p is None:
        return None
    return PartitionStats(
        partitions=p["partitions"],
        rank=p["rank"],
        size=p["size"],
        devices=p["devices"],
        local=[not remote for remote in p["layer_remote"]],
        rows_exported=list(p["layer_rows_exported"]),
        bytes_exported=list(p["layer_bytes_exported"]),
        terms_in=None,
        terms_out=None,
        imbalance=list(p["layer_imbalance"]),
        nanos=None,
        rows=p["rows"],
        transport=p["transport"],
        remote_layers=p["remote_layers"],
        local_layers=p["local_layers"],
        orbit_routed_layers=p["orbit_routed_layers"],
        total_rows_exported=p["rows_exported"],
        total_bytes_exported=p["bytes_exported"],
        max_imbalance=p["max_imbalance"],
        partners=list(p["layer_partners"]),
        max_terms=list(p["layer_max_terms"]),
        final_terms=list(p["final_terms"]),
        transport_seconds=list(p["transport_seconds"]),
        work_seconds=list(p["work_seconds"]),
    )


def _stats(res, policy) -> PropagationStats:
    """PropagationStats of a run's record (_core.propagate's dict: the whole run)."""
    has_collapse = policy is not None and policy._contains("collapse_sample")
    return PropagationStats(
        layers=len(res["terms_in"]),
        terms_in=list(res["terms_in"]),
        terms_out=list(res["terms_out"]),
        peak_terms=res["peak_terms"],
        final_terms=res["final_terms"],
        partition=_partition_stats(res),
        circuit_index=list(res["circuit_index"]),
        application_index=list(res["application_index"]),
        gate_name=list(res["gate_name"]),
        nanos=list(res["nanos"]),
        collapses=res["collapses"] if has_collapse else None,
        discarded_weight=list(res["discarded_weight"]),
        total_discarded_weight=float(res["total_discarded_weight"]),
        budget_truncations=res["budget_truncations"],
        budget_discarded_weight=float(res["budget_discarded_weight"]),
        gates=list(res["gate"]),
    )
