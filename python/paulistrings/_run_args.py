"""The argument checks of ``PauliSum.propagate``, ``GpuPauliSum.propagate`` and the read-outs
(direction, positive counts, sites, axis, threads, checkpoints, byte sizes), and the distribution
plan they resolve to: ``partitions=``, ``comm=``, ``device=`` and the partition-row options checked
together into a ``_Partitioning`` (partition count, CPU lists, devices, rows, communicator), which
``PauliSum._run`` copies into the library's ``RunOptions``. Errors here are the ones the user sees.
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from . import _core
from ._system import numa_nodes
from ._util import index, qubit, qubit_list, type_name

_NO_MPI = (
    "{what}: this build of paulistrings has no MPI support (mpi_available() is False: it needs the MPI "
    "build of the library and mpi4py's headers at configure time); distributed propagation is not available"
)


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


def _check_engine(engine, small_sum_threshold) -> bool:
    """True for engine="column" (the single-threaded column-index engine, docs/design.md §7.5). The
    original's early engine= values "sorted", "auto", "direct" and small_sum_threshold= (removed there
    later) are accepted and validated for old scripts and mean the default engine, as "cpu" does."""
    if engine is not None and engine not in ("cpu", "column", "sorted", "auto", "direct"):
        raise ValueError(
            f"engine must be 'cpu', 'column' (or the original's 'sorted', 'auto', 'direct'), got {engine!r}"
        )
    if small_sum_threshold is not None:
        index(small_sum_threshold, "small_sum_threshold")
    return engine == "column"


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
