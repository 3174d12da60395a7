"""``PauliSum``, the host-resident weighted sum of Pauli strings (a wrapper of ``_core.Sum``):
its constructors, accessors, arithmetic, read-outs and the propagation front end
(``propagate``/``propagate_with_stats``), which checks its arguments (``_run_args.py``), fills the
library's ``RunOptions``, runs it and returns the evolved sum and its ``PropagationStats``
(``_stats.py``). ``to_device`` makes a ``GpuPauliSum`` (``_gpu_sum.py``, imported where it is used
because that module imports this one).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from . import _core
from ._circuit import TOO_WIDE, Circuit, _require_bound
from ._pauli_string import PauliString
from ._run_args import (
    _NO_MPI,
    _axis,
    _check_distribution,
    _check_engine,
    _checkpoint_every,
    _combine_fingerprints,
    _direction,
    _is_int,
    _parse_size,
    _positive,
    _sites,
    _threads,
)
from ._stats import _log, _log_layer, _stats, _sweep_stats
from ._sweep import run_sweep
from ._util import coefficient, index, real, type_name
from .truncation import Truncation

# The stats records (and PauliString, imported above) were defined in this module before it was split
# by job; pickles written then name them paulistrings._sum.*, so they stay importable from here.
from ._stats import PartitionStats, PropagationStats  # noqa: F401

if TYPE_CHECKING:
    from ._gpu_sum import GpuPauliSum

__all__ = ["PauliSum"]

_NO_COLLECTIVE_READOUT = (
    "{what}: collective read-outs over MPI are not implemented in this build; propagate with "
    'result="gather" (every rank then holds the whole sum) and call it without comm='
)


def _format_coefficient(c: complex) -> str:
    if c.imag == 0.0:
        return repr(float(c.real))
    sign = "-" if math.copysign(1.0, c.imag) < 0 else "+"
    return f"({float(c.real)!r}{sign}{abs(float(c.imag))!r}j)"


def _memory_guard(memory_guard):
    """``(on, allowance bytes or None)`` of the memory_guard= argument."""
    if isinstance(memory_guard, bool):
        return memory_guard, None
    if isinstance(memory_guard, (int, str)):
        allowance = _parse_size(memory_guard, "memory_guard")
        if allowance <= 0:
            raise ValueError(f"memory_guard: the allowance must be more than 0 bytes, got {memory_guard!r}")
        return True, allowance
    raise TypeError(f"memory_guard must be a bool or a byte count, got {type_name(memory_guard)}")


def _check_sweep_options(policy, partitions, row_seed, row_blocks, row_exclude, comm, result, device, nccl, input,
                         route_orbits_from) -> None:
    """ValueError naming the first option that a sweep (sweep=) cannot take."""
    refused = [
        ("device=", device is not None, "sweeps run on the CPU engines"),
        ("partitions=", partitions is not None, "a sweep runs unpartitioned"),
        ("comm=", comm is not None, "a sweep runs in one process"),
        ("partition_row_seed=", row_seed is not None, "a sweep runs unpartitioned"),
        ("partition_row_blocks=", row_blocks is not None, "a sweep runs unpartitioned"),
        ("partition_row_exclude=", row_exclude is not None, "a sweep runs unpartitioned"),
        ('result="local"', result != "gather", "a sweep runs in one process"),
        ("nccl=True", nccl is not False, "a sweep runs in one process"),
        (f"input={input!r}", input != "replicated", "a sweep runs in one process"),
        ("route_orbits_from=", route_orbits_from is not None, "a sweep runs unpartitioned"),
    ]
    for option, given, why in refused:
        if given:
            raise ValueError(f"propagate: {option} cannot be combined with sweep= ({why})")
    if policy is not None and policy._contains("collapse_sample"):
        raise ValueError("propagate: the collapse_sample truncation cannot be combined with sweep= (each column "
                         "would collapse differently)")


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
        from ._gpu_sum import GpuPauliSum  # _gpu_sum imports this module

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
        sweep=None,
        gradient=None,
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
        or ``"8G"``, is the memory the guard lets the run use instead of what the host has free);
        ``engine="column"``: the single-threaded column-index engine (docs/design.md §7.5; one thread
        whatever ``threads`` says; not with devices, partitions, ``comm=`` or ``sweep=``); the default
        CPU engine starts on it by itself while layers touch few terms (the same result;
        ``PropagationStats.column_layers`` says for how many layers).

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

        ``sweep={name: values, ...}`` (``circuit`` holding ``paulistrings.Parameter``s; each ``values`` a
        list or 1-D array, all of one length K, or one number for every column): runs the K circuits
        — column k binds every Parameter to its k-th value — in one propagation and returns a
        ``SweptPauliSum`` (``expectation`` gives K values, ``column(k)`` column k as a PauliSum).
        Without truncation each column equals its own run to rounding; a truncation keeps a Pauli string
        while any column keeps it (``topn`` ranks by the largest |c| over the columns). A sweep runs on
        the CPU, unpartitioned: ``device=``, ``partitions=``, ``comm=`` and ``collapse_sample`` are
        ``ValueError``s with it; ``checkpoint``/``checkpoint_every``/``resume`` work as for one observable
        (the checkpoint holds every column). docs/python.md, "Parameter sweeps".

        ``gradient=["th", ...]`` (with ``sweep=``; each name a Parameter of the circuit) also propagates
        ∂O_k/∂th of every column, exactly (rotation angles and the strengths of depolarize, dephase,
        pauli_channel, depolarize2; amplitude_damping's gamma is a ``ValueError``), summed over every gate
        the parameter enters: ``result.expectation_gradient("th", state)``, ``result.gradient_column("th",
        k)``. Truncation decides on the values alone, so asking for a gradient changes no value.
        """
        out, _ = self._run(circuit, policy, direction, target_bucket_len, min_buckets, partitions, pin_memory,
                           partition_row_seed, partition_row_blocks, partition_row_exclude, comm, result, device,
                           threads, checkpoint, checkpoint_every, resume, memory_limit, auto_truncate, engine,
                           small_sum_threshold, keep_records=False, nccl=nccl, input=input,
                           route_orbits_from=route_orbits_from, memory_guard=memory_guard, sweep=sweep,
                           gradient=gradient)
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
        sweep=None,
        gradient=None,
    ):
        """``propagate`` plus a ``PropagationStats`` record: returns ``(PauliSum, PropagationStats)``; with
        ``sweep=``, ``(SweptPauliSum, SweepStats)`` (``SweepStats.column_discarded_weight``: the Σ|c|² each
        column lost; ``gradient_discarded_weight[name]`` that of each column's derivative)."""
        return self._run(circuit, policy, direction, target_bucket_len, min_buckets, partitions, pin_memory,
                         partition_row_seed, partition_row_blocks, partition_row_exclude, comm, result, device,
                         threads, checkpoint, checkpoint_every, resume, memory_limit, auto_truncate, engine,
                         small_sum_threshold, keep_records=True, nccl=nccl, input=input,
                         route_orbits_from=route_orbits_from, memory_guard=memory_guard, sweep=sweep,
                         gradient=gradient)

    def _run(self, circuit, policy, direction, target_bucket_len, min_buckets, partitions, pin_memory,
             partition_row_seed, partition_row_blocks, partition_row_exclude, comm, result, device, threads,
             checkpoint, checkpoint_every, resume, memory_limit, auto_truncate, engine, small_sum_threshold,
             keep_records, nccl=False, input="replicated", route_orbits_from=None, memory_guard=True,
             sweep=None, gradient=None):
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
        column = _check_engine(engine, small_sum_threshold)
        if gradient is not None and sweep is None:
            raise ValueError("propagate: gradient= needs sweep= (the parameter values to differentiate at; "
                             "for one point, sweep={name: value, ...})")
        if sweep is not None:
            _check_sweep_options(policy, partitions, partition_row_seed, partition_row_blocks,
                                 partition_row_exclude, comm, result, device, nccl, input, route_orbits_from)
        elif circuit._p is not None:
            _require_bound(circuit, "propagate")
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
        guard, guard_bytes = _memory_guard(memory_guard)
        run = _core.PropagateOptions()
        run.direction = direction
        run.truncation = core_policy
        run.target_bucket_len = target_bucket_len
        run.min_buckets = min_buckets
        run.threads = threads
        run.column_engine = column  # one thread, whatever threads= says; refused with devices, partitions, sweeps
        run.keep_layer_records = keep_records
        run.auto_truncate = bool(auto_truncate)
        if sweep is not None:
            return self._run_sweep(circuit, sweep, gradient, run, policy, memory_limit, guard, guard_bytes,
                                   checkpoint, every, resume)

        # One RunOptions for the library's run orchestration (run/orchestrate.h: resume, memory budget,
        # checkpoint schedule and parts, segments).
        run.device = ordinal
        options = _core.RunOptions()
        options.propagate = run
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
        options.memory_guard = guard
        if guard_bytes is not None:
            options.memory_guard_bytes = guard_bytes
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

    def _run_sweep(self, circuit, sweep, gradient, options, policy, memory_limit, guard, guard_bytes, checkpoint,
                   every, resume):
        """The sweep= branch of propagate (arguments checked by _run, PropagateOptions filled):
        (SweptPauliSum, SweepStats). checkpoint=/resume= as for an ordinary run: the library writes the
        sweep's state (every column of every term) and resumes it bit for bit."""
        limit = _parse_size(memory_limit) if memory_limit is not None else None
        info = _log.isEnabledFor(logging.INFO)
        callback = _log_layer if _log.isEnabledFor(logging.DEBUG) else None
        began = time.perf_counter()
        if info:
            _log.info("propagate: sweep of %s: %d terms on %d qubits through %d layers (%s, policy %s, %s threads)",
                      ", ".join(sorted(sweep)), len(self), self.num_qubits, len(circuit), options.direction,
                      policy if policy is not None else "None", options.threads or "all")
        out, res = run_sweep(self._s, circuit, sweep, options, memory_limit=limit, memory_guard=guard,
                             memory_guard_bytes=guard_bytes, layer_callback=callback,
                             poll_signals=threading.current_thread() is threading.main_thread(),
                             gradient=gradient, checkpoint=os.fspath(checkpoint) if checkpoint is not None else None,
                             checkpoint_every=every, resume=os.fspath(resume) if resume is not None else None)
        stats = _sweep_stats(res, policy, out.gradients)
        if info:
            _log.info("propagate: done, %d columns, %d terms (peak %d) in %.3f s", stats.columns, stats.final_terms,
                      stats.peak_terms, time.perf_counter() - began)
        return out, stats
