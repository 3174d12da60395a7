"""paulistrings: Pauli propagation — evolve an observable, written as a weighted sum of Pauli
strings, through quantum gates and noise channels, truncating what does not matter.

A drop-in replacement for the Python API of the original ``paulistrings`` package (the Rust crate
``paulistrings-rs``): ``from paulistrings import Circuit, PauliSum`` and the same names,
signatures, defaults and errors, on a C++20 engine.

    >>> import math
    >>> from paulistrings import Circuit, PauliSum
    >>> obs = PauliSum.from_strings({"XIII": 0.25, "IXII": 0.25, "IIXI": 0.25, "IIIX": 0.25}, num_qubits=4)
    >>> c = Circuit(4); c.rz(math.pi / 8, 0); c.cnot(0, 1); c.h(2)
    >>> print(f'{obs.propagate(c, direction="heisenberg").expectation("x+").real:.6f}')
    0.730970

Logging: the logger ``paulistrings.propagate`` gets an INFO line at the start and end of every
propagate call and a DEBUG line per layer (only computed when DEBUG is enabled).
"""

import os as _os

# libgomp reads the OpenMP wait policy once, when it is loaded — by the import of _core just below. Its
# default lets idle threads spin after every parallel region, which on a machine whose cores other
# processes also want makes a run on N threads far slower than on one (docs/design.md §7.2); unless
# the user chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT),
# waiting threads sleep at once. The environment is given back as it was after the import. (No effect
# when another module has loaded libgomp first.)
_choose_wait_policy = "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ
if _choose_wait_policy:
    _os.environ["OMP_WAIT_POLICY"] = "passive"
try:
    from . import _core
finally:
    if _choose_wait_policy:
        del _os.environ["OMP_WAIT_POLICY"]
from ._circuit import Channel, Circuit
from ._parameter import Parameter
from ._gpu_sum import GpuPauliSum
from ._pauli_string import PauliString, p
from ._stats import PartitionStats, PropagationStats, SweepStats
from ._sum import PauliSum
from ._sweep import SweptPauliSum
from ._system import cuda_available, mpi_available, numa_nodes, reset_log_cache
from .truncation import Truncation
from . import gates, noise, truncation, io, interop, workloads

__version__ = _core.__version__

#: Raised (a ``MemoryError``) when a run stops for want of host memory: the memory guard found that the
#: next layer could grow the sum past what the process may use (the cgroup's limit, the memory available
#: at the start, the address-space limit, less a margin), or an allocation was refused inside a layer.
#: The message names the layer, the terms and the bytes; ``memory_limit=`` or a stricter policy avoids it.
HostMemoryExceeded = _core.HostMemoryExceeded

#: Kept for the original's API (its hash-map "direct" engine threshold, removed there later);
#: this engine picks its small-sum path on its own and ignores ``small_sum_threshold=`` and the original's
#: ``engine=`` values (``engine="column"`` chooses the column-index engine: docs/python.md).
DEFAULT_SMALL_SUM_THRESHOLD = 2048


def diagonal_echo(hist, delta) -> float:
    """Σ_n w[n]·cos(2δ)^n / Σ_n w[n] of an ``anticommute_histogram`` (``nan`` when all are zero)."""
    from ._util import real

    values = [real(w, "hist") for w in hist]
    return float(_core.diagonal_echo(values, real(delta, "delta")))


__all__ = [
    "Channel",
    "Circuit",
    "DEFAULT_SMALL_SUM_THRESHOLD",
    "GpuPauliSum",
    "HostMemoryExceeded",
    "Parameter",
    "PartitionStats",
    "PauliString",
    "PauliSum",
    "PropagationStats",
    "SweepStats",
    "SweptPauliSum",
    "Truncation",
    "cuda_available",
    "diagonal_echo",
    "gates",
    "interop",
    "io",
    "mpi_available",
    "noise",
    "numa_nodes",
    "p",
    "reset_log_cache",
    "truncation",
    "workloads",
]
