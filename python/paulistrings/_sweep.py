"""Parameter sweeps from Python: ``PauliSum.propagate(circuit, sweep={name: values})`` binds a template
circuit (one holding ``Parameter``s) at K value sets into K concrete circuits of one gate structure and
runs them in one propagation (the library's ``propagate_sweep``, sweep/propagate_sweep.h); the result is
a ``SweptPauliSum``: K coefficient columns per Pauli string. ``gradient=[names]`` adds, per named parameter,
K derivative columns (∂O_k/∂name) propagated beside the values: every layer whose argument depends on the
parameter gets a ``LayerDerivative`` per column (built here, see ``gradient_derivatives``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from . import _core
from ._circuit import (
    Circuit,
    _bind_template,
    _check_names,
    make_amplitude_damping,
    make_pauli_rotation,
    make_rotation,
)
from ._parameter import Parameter
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


def gradient_plan(circuit: Circuit, gradient) -> list:
    """The names of a ``gradient=`` argument (a str or a list of str), each a Parameter of ``circuit``."""
    names = [gradient] if isinstance(gradient, str) else gradient
    if isinstance(names, (bytes, Mapping)) or not hasattr(names, "__iter__"):
        raise TypeError(f"gradient must be a list of parameter names, got {type_name(gradient)}")
    names = list(names)
    used = set(circuit.parameters)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"gradient: parameter names must be str, got {type_name(name)}")
        if name not in used:
            raise ValueError(f"gradient: no channel of the circuit uses the parameter {name!r} "
                             f"(its parameters: {sorted(used)})")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"gradient: the parameter {repeated[0]!r} is named twice")
    return names


_ANGLE_MAKERS = (make_rotation, make_pauli_rotation)
# Second points of a strength's slope, in units of a quarter over the largest |d strength / d parameter|:
# the first whose channel is valid (a quarter apart keeps the rounding of the difference small).
_STRENGTH_STEPS = (1.0, -1.0, 0.125, -0.125, 1.0 / 64, -1.0 / 64)


def _uses(template, name: str) -> list:
    """The indices of a template's arguments that are expressions of the parameter ``name``."""
    return [j for j, a in enumerate(template[1]) if isinstance(a, Parameter) and a.name == name]


def _layer_derivative(position: int, template, uses, name: str, values):
    """The LayerDerivative of the template channel at ``position``, whose arguments ``uses`` depend on
    ``name``, with respect to ``name`` at ``values`` ({name: float})."""
    maker, args, adjoint = template
    if maker in _ANGLE_MAKERS:
        # A Pauli rotation's transfer is 1, cos θ, sin θ: the library's difference at θ ± π/2 is exact;
        # chain = dθ/d(name), the Parameter's scale (an adjoint rotation negates θ inside make).
        (j,) = uses
        angle = args[j]

        def make(theta):
            return _bind_template((maker, args[:j] + (theta,) + args[j + 1:], adjoint), values)

        return _core.sweep_derivative(position, make, angle._value(values), True, angle._scale)
    # A noise strength: the transfer is affine in every strength, so in the parameter too (each strength
    # an affine expression of it): the slope between the column's value and a second valid value is exact.
    value = values[name]
    steepest = max(abs(args[j]._scale) for j in uses)
    unit = 0.25 / steepest if steepest > 0.0 else 0.25
    at_value = _bind_template(template, values)
    for step in _STRENGTH_STEPS:
        h = step * unit
        try:
            other = _bind_template(template, {**values, name: value - h})
        except ValueError:
            continue
        return _core.LayerDerivative(position, at_value, other, 1.0 / h)
    raise ValueError(f"gradient: layer {position}'s channel takes no value of {name!r} near {value!r} but this one, "
                     "so its slope cannot be taken there")


def gradient_derivatives(circuit: Circuit, name: str, count: int, values) -> list:
    """For each of the K columns, the LayerDerivatives of every layer whose argument depends on ``name`` (the
    library sums their contributions: the product rule)."""
    layers = []
    for position in sorted(circuit._p):
        template = circuit._p[position]
        uses = _uses(template, name)
        if not uses:
            continue
        if template[0] is make_amplitude_damping:
            raise ValueError(
                f"gradient: amplitude_damping's gamma at layer {position} depends on {name!r}; its transfer "
                "(sqrt(1 - gamma)) is not affine in gamma, so gradient= does not take it"
            )
        layers.append((position, template, uses))
    derivatives = []
    for k in range(count):
        assignment = {n: float(v[k]) for n, v in values.items()}
        try:
            derivatives.append([_layer_derivative(p, t, uses, name, assignment) for p, t, uses in layers])
        except ValueError as e:
            raise ValueError(f"sweep column {k}: {e}") from None
    return derivatives


class SweptPauliSum:
    """The result of ``PauliSum.propagate(circuit, sweep=...)``: one Pauli sum per column of the sweep
    (column k: the circuit under the k-th value of every swept parameter), held together — every
    Pauli string with K coefficients.

    ``columns`` is K, ``len()`` the Pauli strings held (by any column), ``parameters`` the swept
    values (``{name: array of K values}``); ``expectation(state)`` and ``expectation_stabilizer``
    return NumPy arrays of K complex values, ``norms_squared()`` K floats, and ``column(k)`` column k
    as an ordinary ``PauliSum``. Everything else of ``PauliSum`` (arithmetic, arrays, ``propagate``,
    ``overlap``, …) is not defined on a swept sum: take a column first.

    With ``gradient=[names]``: ``gradients`` lists the names, ``expectation_gradient(name, state)`` gives
    ∂⟨s|O_k|s⟩/∂name of every column k (K complex values) and ``gradient_column(name, k)`` ∂O_k/∂name
    as a ``PauliSum``. (Inside, column K·(1 + g) + k holds ∂O_k/∂gradients[g].)
    """

    __slots__ = ("_w", "_values", "_count", "_gradients")

    def __init__(self, *args, **kwargs):
        raise TypeError("SweptPauliSum has no public constructor; it is what PauliSum.propagate(..., sweep=) returns")

    @classmethod
    def _wrap(cls, core, values, gradients=()) -> "SweptPauliSum":
        obj = object.__new__(cls)
        obj._w = core
        obj._values = values
        obj._count = core.columns // (1 + len(gradients))
        obj._gradients = tuple(gradients)
        return obj

    @property
    def num_qubits(self) -> int:
        return self._w.num_qubits

    @property
    def columns(self) -> int:
        """K, the number of columns (value sets) of the sweep."""
        return self._count

    @property
    def gradients(self) -> list:
        """The parameters whose derivatives it holds (``gradient=``, in that order; empty without)."""
        return list(self._gradients)

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
        gradients = f", gradients={list(self._gradients)}" if self._gradients else ""
        return f"SweptPauliSum(num_qubits={self.num_qubits}, columns={self.columns}, terms={len(self)}{gradients})"

    def _index(self, k, what="column") -> int:
        if isinstance(k, bool) or not hasattr(k, "__index__"):
            raise TypeError(f"{what}: the index must be an int, got {type_name(k)}")
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
        return self._expectations(state, "expectation")[: self.columns]

    def _expectations(self, state, what) -> np.ndarray:
        """⟨s|·|s⟩ of every column held, values and derivatives."""
        if not isinstance(state, str):
            raise TypeError(f"{what}: state must be a str, got {type_name(state)}")
        return self._w.expectations(state)

    def _gradient_offset(self, name, what) -> int:
        """The first internal column of the derivatives with respect to ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"{what}: the parameter name must be a str, got {type_name(name)}")
        if name not in self._gradients:
            held = f"it holds the gradients of {list(self._gradients)}" if self._gradients else "it holds none"
            raise ValueError(f"{what}: the sweep holds no gradient with respect to {name!r} ({held}; "
                             "ask for it with propagate(..., gradient=[name]))")
        return self.columns * (1 + self._gradients.index(name))

    def expectation_gradient(self, name, state="x+") -> np.ndarray:
        """∂⟨s|O_k|s⟩/∂name of every column k in a product state (``expectation``'s states): a complex128
        array of K values."""
        start = self._gradient_offset(name, "expectation_gradient")
        return self._expectations(state, "expectation_gradient")[start: start + self.columns]

    def gradient_column(self, name, k):
        """∂O_k/∂name, the derivative of column ``k`` (negative counts from the end), as a ``PauliSum``."""
        from ._sum import PauliSum

        start = self._gradient_offset(name, "gradient_column")
        return PauliSum._wrap(self._w.column(start + self._index(k, "gradient_column")))

    def expectation_stabilizer(self, generators) -> np.ndarray:
        """``PauliSum.expectation_stabilizer`` of every column: a complex128 array of K values."""
        return np.array([self.column(k).expectation_stabilizer(generators) for k in range(self.columns)],
                        dtype=np.complex128)

    def norms_squared(self) -> np.ndarray:
        """Σ|c|² of every column: a float64 array of K values."""
        return np.asarray(self._w.norms_squared(), dtype=np.float64)[: self.columns]

    def __getattr__(self, name):
        from ._sum import PauliSum

        if not name.startswith("_") and hasattr(PauliSum, name):
            raise AttributeError(
                f"SweptPauliSum has no {name!r}: a swept sum holds {self.columns} columns; take one as a "
                f"PauliSum with .column(k) (e.g. result.column(0).{name})"
            )
        raise AttributeError(f"'SweptPauliSum' object has no attribute {name!r}")


def run_sweep(observable, circuit: Circuit, sweep, options, *, memory_limit, memory_guard, memory_guard_bytes,
              layer_callback, poll_signals, gradient=None, checkpoint=None, checkpoint_every=0, resume=None):
    """Runs a sweep: ``(SweptPauliSum, the run's record dict)``; raises the exception that stopped it (after
    writing the checkpoint, with ``checkpoint``). ``checkpoint``/``resume``: paths (str) or None."""
    count, values = sweep_plan(circuit, sweep)
    names = gradient_plan(circuit, gradient) if gradient is not None else []
    columns = sweep_columns(circuit, count, values)
    derivatives = [(name, gradient_derivatives(circuit, name, count, values)) for name in names]
    fingerprint = 0
    if checkpoint is not None or resume is not None:
        # The ordinary run's fingerprint (direction, policy, starting observable); the library adds every
        # column's circuit and the gradients.
        fingerprint = _core.run_fingerprint(observable, columns[0], options.direction, options.truncation)
    result, res = _core.propagate_sweep(observable, columns, options, memory_limit=memory_limit,
                                        memory_guard=memory_guard, memory_guard_bytes=memory_guard_bytes,
                                        layer_callback=layer_callback, poll_signals=poll_signals,
                                        gradient=derivatives, checkpoint=checkpoint,
                                        checkpoint_every=checkpoint_every, resume=resume, fingerprint=fingerprint)
    if res["exception"] is not None:
        raise res["exception"]
    return SweptPauliSum._wrap(result, values, names), res
