"""Machine and build facts: NUMA placement targets and the optional engines of this build."""

from __future__ import annotations

import os

__all__ = ["numa_nodes", "mpi_available", "cuda_available", "reset_log_cache"]

_NODE_DIR = "/sys/devices/system/node"


def _parse_cpulist(text: str) -> list:
    """``"0-3,8,10-11"`` → ``[0, 1, 2, 3, 8, 10, 11]`` (the sysfs cpulist format)."""
    cpus = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.extend(range(int(low), int(high) + 1))
        else:
            cpus.append(int(part))
    return cpus


def _allowed_cpus() -> set:
    """The CPUs this process may run on. Not ``os.sched_getaffinity(0)`` alone: under OMP_PROC_BIND
    the OpenMP runtime binds the main thread to one CPU as the extension loads, and the library then
    reads the CPUs from the OpenMP places."""
    from . import _core

    cpus = set(_core.allowed_cpus())
    if cpus:
        return cpus
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def numa_nodes() -> list:
    """One CPU list per NUMA node (ascending), intersected with this process's affinity mask.

    Read from ``/sys/devices/system/node/node*/cpulist``; nodes with no allowed CPU are left out.
    A machine without NUMA information gives a single node holding every allowed CPU.
    """
    allowed = _allowed_cpus()
    nodes = []
    try:
        ids = sorted(int(name[4:]) for name in os.listdir(_NODE_DIR)
                     if name.startswith("node") and name[4:].isdigit())
    except OSError:
        ids = []
    for node in ids:
        try:
            with open(os.path.join(_NODE_DIR, f"node{node}", "cpulist")) as f:
                cpus = _parse_cpulist(f.read())
        except (OSError, ValueError):
            continue
        cpus = sorted(c for c in cpus if c in allowed)
        if cpus:
            nodes.append(cpus)
    if not nodes:
        nodes = [sorted(allowed)]
    return nodes


def mpi_available() -> bool:
    """Whether distributed propagation over MPI (``comm=``) can run: the build has the library's MPI
    transport and mpi4py's C API compiled in, and mpi4py is installed (it is not imported here)."""
    import importlib.util

    from . import _core

    return bool(_core.mpi) and importlib.util.find_spec("mpi4py") is not None


def cuda_available() -> bool:
    """Whether GPU propagation (``device=``, ``PauliSum.to_device``) can run: the build has the
    CUDA engine and at least one CUDA device is usable. When it is False,
    ``paulistrings._core.cuda_unavailable_reason()`` says why."""
    from . import _core

    return _core.cuda_device_count() > 0


def reset_log_cache() -> None:
    """Kept for the original's API: there, logger levels were cached by the Rust→Python log bridge
    and this cleared the cache. Here each propagate call reads the level of the
    ``paulistrings.propagate`` logger afresh, so there is nothing to clear."""
    return None
