"""``GpuPauliSum``: a Pauli sum resident on one CUDA device (a wrapper of ``_core.DeviceSum``),
uploaded from a ``PauliSum`` and propagated in place there, so chained runs pay for one upload;
``to_host`` copies it back. Its ``propagate`` checks the same arguments as ``PauliSum.propagate``
(``_run_args.py``) and reports the same ``PropagationStats`` and log lines (``_stats.py``).
"""

from __future__ import annotations

import logging
import threading
import time

from . import _core
from ._circuit import Circuit, _require_bound
from ._run_args import _device_ordinal, _direction, _parse_size, _positive, _require_cuda
from ._stats import PropagationStats, _log, _log_layer, _stats
from ._sum import PauliSum
from ._util import type_name
from .truncation import Truncation

__all__ = ["GpuPauliSum"]


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
        _require_bound(circuit, "GpuPauliSum.propagate")  # sweeps run on the CPU (PauliSum.propagate)

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
