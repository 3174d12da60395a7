"""Parameter sweeps from Python: ``PauliSum.propagate(circuit, sweep={name: values})`` binds a template
circuit (one holding ``Parameter``s) at K value sets into K concrete circuits of one gate structure and
runs them in one propagation (the library's ``propagate_sweep``, sweep/propagate_sweep.h); the result is
a ``SweptPauliSum``: K coefficient columns per Pauli string.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from . import _core
from ._circuit import Circuit, _check_names
from ._util import type_name

__all__ = ["SweptPauliSum"]


def _values_of(name: str, values):
    """One entry of ``sweep=``: a 1-D float64 array of finite values, or a float (a real number: the same
    value in every column)."""
    what = f"sweep[{name!r}]"
    if isinstance(values, (str, bytes, bool, complex)) or values is None:
        raise TypeError(f"{what}: expected a list or 1-D array of real numbers, got {type_name(values)}")
    if isinstance(values, numbers.Real) or (isinstance(values, np.generic) and np.ndim(values) == 0):
        array = np.asarray(values)
        scalar = True
    else:
        try:
            array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values)
        except TypeError:
            raise TypeError(
                f"{what}: expected a list or 1-D array of real numbers, got {type_name(values)}"
            ) from None
        scalar = False
    if array.dtype.kind not in "iuf":
        kind = {"b": "booleans", "c": "complex numbers", "O": "objects"}.get(array.dtype.kind, str(array.dtype))
        raise TypeError(f"{what}: expected real numbers, got {kind}")
    array = array.astype(np.float64)
    if scalar or array.ndim == 0:
        value = float(array)
        if not np.isfinite(value):
            raise ValueError(f"{what}: the value {value!r} is not finite")
        return value
    if array.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D list of values, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{what}: the list of values is empty (a sweep needs at least one value)")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{what}: value {array[bad[0]]!r} at index {int(bad[0])} is not finite")
    return array


def sweep_plan(circuit: Circuit, sweep):
    """``(K, {name: array of K values})`` of a ``sweep=`` argument, checked against ``circuit``."""
    if not isinstance(sweep, Mapping):
        raise TypeError(f"sweep must be a dict {{parameter name: list of values}}, got {type_name(sweep)}")
    if not sweep:
        raise ValueError("sweep: the dict is empty; name at least one Parameter of the circuit with its values")
    values = {}
    for name, entry in sweep.items():
        if not isinstance(name, str):
            raise TypeError(f"sweep: parameter names must be str, got {type_name(name)}")
        values[name] = _values_of(name, entry)
    lengths = {name: len(v) for name, v in values.items() if isinstance(v, np.ndarray)}
    counts = set(lengths.values())
    if len(counts) > 1:
        (a, la), (b, lb) = sorted(lengths.items(), key=lambda item: item[1])[:: len(lengths) - 1]
        raise ValueError(
            f"sweep: the value lists differ in length ({a!r} has {la} values, {b!r} has {lb}); "
            "every parameter needs one value per column"
        )
    _check_names(circuit, values, "sweep")
    count = counts.pop() if counts else 1
    return count, {name: v if isinstance(v, np.ndarray) else np.full(count, v) for name, v in values.items()}


def sweep_columns(circuit: Circuit, count: int, values) -> list:
    """The K concrete _core circuits of a sweep."""
    columns = []
    for k in range(count):
        assignment = {name: float(v[k]) for name, v in values.items()}
        try:
            columns.append(circuit._bound(assignment))
        except ValueError as e:
            raise ValueError(f"sweep column {k}: {e}") from None
    return columns


class SweptPauliSum:
    """The result of ``PauliSum.propagate(circuit, sweep=...)``: one Pauli sum per column of the sweep
    (column k: the circuit under the k-th value of every swept parameter), held together — every
    Pauli string with K coefficients.

    ``columns`` is K, ``len()`` the Pauli strings held (by any column), ``parameters`` the swept
    values (``{name: array of K values}``); ``expectation(state)`` and ``expectation_stabilizer``
    return NumPy arrays of K complex values, ``norms_squared()`` K floats, and ``column(k)`` column k
    as an ordinary ``PauliSum``. Everything else of ``PauliSum`` (arithmetic, arrays, ``propagate``,
    ``overlap``, …) is not defined on a swept sum: take a column first.
    """

    __slots__ = ("_w", "_values")

    def __init__(self, *args, **kwargs):
        raise TypeError("SweptPauliSum has no public constructor; it is what PauliSum.propagate(..., sweep=) returns")

    @classmethod
    def _wrap(cls, core, values) -> "SweptPauliSum":
        obj = object.__new__(cls)
        obj._w = core
        obj._values = values
        return obj

    @property
    def num_qubits(self) -> int:
        return self._w.num_qubits

    @property
    def columns(self) -> int:
        """K, the number of columns (value sets) of the sweep."""
        return self._w.columns

    @property
    def parameters(self) -> dict:
        """The swept values: ``{name: array of K values}`` (copies)."""
        return {name: v.copy() for name, v in self._values.items()}

    @property
    def is_complex(self) -> bool:
        return self._w.is_complex

    def __len__(self) -> int:
        return len(self._w)

    def __repr__(self) -> str:
        return f"SweptPauliSum(num_qubits={self.num_qubits}, columns={self.columns}, terms={len(self)})"

    def _index(self, k) -> int:
        if isinstance(k, bool) or not hasattr(k, "__index__"):
            raise TypeError(f"column: the index must be an int, got {type_name(k)}")
        i = k.__index__()
        n = self.columns
        if i < -n or i >= n:
            raise IndexError(f"column {i} is out of range for a sweep of {n} columns")
        return i % n

    def column(self, k):
        """Column ``k`` (negative counts from the end) as an ordinary ``PauliSum``."""
        from ._sum import PauliSum  # _sum imports this module

        return PauliSum._wrap(self._w.column(self._index(k)))

    def expectation(self, state="x+") -> np.ndarray:
        """⟨s|O_k|s⟩ of every column k in a product state (``PauliSum.expectation``'s states): a complex128
        array of K values."""
        if not isinstance(state, str):
            raise TypeError(f"expectation: state must be a str, got {type_name(state)}")
        return self._w.expectations(state)

    def expectation_stabilizer(self, generators) -> np.ndarray:
        """``PauliSum.expectation_stabilizer`` of every column: a complex128 array of K values."""
        return np.array([self.column(k).expectation_stabilizer(generators) for k in range(self.columns)],
                        dtype=np.complex128)

    def norms_squared(self) -> np.ndarray:
        """Σ|c|² of every column: a float64 array of K values."""
        return np.asarray(self._w.norms_squared(), dtype=np.float64)

    def __getattr__(self, name):
        from ._sum import PauliSum

        if not name.startswith("_") and hasattr(PauliSum, name):
            raise AttributeError(
                f"SweptPauliSum has no {name!r}: a swept sum holds {self.columns} columns; take one as a "
                f"PauliSum with .column(k) (e.g. result.column(0).{name})"
            )
        raise AttributeError(f"'SweptPauliSum' object has no attribute {name!r}")


def run_sweep(observable, circuit: Circuit, sweep, options, *, memory_limit, memory_guard, memory_guard_bytes,
              layer_callback, poll_signals):
    """Runs a sweep: ``(SweptPauliSum, the run's record dict)``; raises the exception that stopped it."""
    count, values = sweep_plan(circuit, sweep)
    columns = sweep_columns(circuit, count, values)
    result, res = _core.propagate_sweep(observable, columns, options, memory_limit=memory_limit,
                                        memory_guard=memory_guard, memory_guard_bytes=memory_guard_bytes,
                                        layer_callback=layer_callback, poll_signals=poll_signals)
    if res["exception"] is not None:
        raise res["exception"]
    return SweptPauliSum._wrap(result, values), res
