"""``Channel`` and ``Circuit``: gates and noise channels, and ordered lists of them."""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Mapping

import numpy as np

from . import _core
from ._parameter import Parameter
from ._util import qubit, qubit_list, real, rust_display, rust_float, type_name

__all__ = ["Channel", "Circuit"]

TOO_WIDE = "num_qubits exceeds largest monomorphized width (1024)"


class Channel:
    """One gate or noise channel, independent of any circuit width.

    Built by the ``paulistrings.gates`` and ``paulistrings.noise`` factories or read back with
    ``circuit[i]``; qubit indices are checked against the circuit when it is appended.
    """

    __slots__ = ("_ch",)

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "Channel has no public constructor; use the paulistrings.gates and paulistrings.noise factories"
        )

    @classmethod
    def _wrap(cls, core) -> "Channel":
        obj = object.__new__(cls)
        obj._ch = core
        return obj

    def __repr__(self) -> str:
        return f"Channel({_debug_spec(self._ch)})"


class _TemplateChannel(Channel):
    """A channel with a ``Parameter`` among its angles or strengths: ``_ch`` is a placeholder (each
    Parameter at 0) that fixes the kind and the qubits; ``_tpl`` = ``(maker, args, adjoint)`` builds
    the real channel once the values are known (``_bind_template``)."""

    __slots__ = ("_tpl",)

    @classmethod
    def _of(cls, core, template) -> "_TemplateChannel":
        obj = object.__new__(cls)
        obj._ch = core
        obj._tpl = template
        return obj

    def __repr__(self) -> str:
        maker, args, adjoint = self._tpl
        name = maker.__name__.removeprefix("make_")
        if name == "rotation":  # make_rotation(name, theta, q)
            name, args = args[0], args[1:]
        text = f"{name}({', '.join(repr(a) for a in args)})"
        return f"Channel({text}{'.adjoint()' if adjoint else ''})"


def _template_names(template) -> set:
    return {a.name for a in template[1] if isinstance(a, Parameter)}


def _deferred(maker, args) -> _TemplateChannel:
    """The channel ``maker(*args)`` where some args are Parameters: checked now with each Parameter at 0
    (qubits and fixed values), built for real by ``_bind_template``."""
    placeholder = maker(*[0.0 if isinstance(a, Parameter) else a for a in args])
    return _TemplateChannel._of(placeholder._ch, (maker, tuple(args), False))


def _bind_template(template, values):
    """The _core channel of a template under ``values`` ({name: float})."""
    maker, args, adjoint = template
    ch = maker(*[a._value(values) if isinstance(a, Parameter) else a for a in args])._ch
    return ch.adjoint() if adjoint else ch


_SINGLE = {"h": "H", "s": "S", "sdg": "Sdg", "x": "X", "y": "Y", "z": "Z"}
_PAIR = {"cz": "Cz", "swap": "Swap"}
_ROTATION = {"rz": ("Rz", "Z"), "rx": ("Rx", "X"), "ry": ("Ry", "Y")}


def _rust_complex(value: complex) -> str:
    return f"Complex {{ re: {rust_float(value.real)}, im: {rust_float(value.imag)} }}"


def _debug_spec(ch) -> str:
    """The original's ``Channel.__repr__`` body: the Rust ``Debug`` form of its channel spec."""
    name, qubits = ch.name, list(ch.qubits)
    if name in _SINGLE:
        return f"{_SINGLE[name]} {{ qubit: {qubits[0]} }}"
    if name == "cnot":
        return f"Cnot {{ control: {qubits[0]}, target: {qubits[1]} }}"
    if name in _PAIR:
        return f"{_PAIR[name]} {{ q0: {qubits[0]}, q1: {qubits[1]} }}"
    if ch.is_rotation:
        if name in _ROTATION and ch.pauli == _ROTATION[name][1] and len(qubits) == 1:
            return f"{_ROTATION[name][0]} {{ theta: {rust_float(ch.theta)}, qubit: {qubits[0]} }}"
        paulis = ", ".join(f"({q}, {p})" for q, p in zip(qubits, ch.pauli))
        return f"PauliRotationN {{ theta: {rust_float(ch.theta)}, paulis: [{paulis}] }}"
    if name in ("unitary_1q", "unitary_2q"):
        rows = ", ".join("[" + ", ".join(_rust_complex(complex(v)) for v in row) + "]" for row in ch.matrix)
        if name == "unitary_1q":
            return f"Unitary1Q {{ qubit: {qubits[0]}, matrix: [{rows}] }}"
        return f"Unitary2Q {{ q0: {qubits[0]}, q1: {qubits[1]}, matrix: [{rows}] }}"
    params = [rust_float(p) for p in ch.parameters]
    if name == "depolarize":
        return f"Depolarize {{ p: {params[0]}, qubit: {qubits[0]} }}"
    if name == "dephase":
        return f"Dephase {{ p: {params[0]}, qubit: {qubits[0]} }}"
    if name == "amplitude_damping":
        return f"AmplitudeDamping {{ gamma: {params[0]}, qubit: {qubits[0]} }}"
    if name == "pauli_channel":
        return f"PauliChannel {{ px: {params[0]}, py: {params[1]}, pz: {params[2]}, qubit: {qubits[0]} }}"
    if name == "depolarize2":
        return f"Depolarize2 {{ p: {params[0]}, q0: {qubits[0]}, q1: {qubits[1]} }}"
    return ch.description()


# ---- factories shared by paulistrings.gates, paulistrings.noise and the Circuit methods ----


def _distinct(name: str, q0: int, q1: int) -> None:
    if q0 == q1:
        raise ValueError(f"{name}: the two qubit indices must differ (both are {q0})")


def _matrix(matrix, dim: int, name: str) -> np.ndarray:
    try:
        m = np.asarray(matrix, dtype=np.complex128)
    except (TypeError, ValueError):
        raise TypeError(f"{name} expects a {dim}x{dim} complex matrix, got {type_name(matrix)}") from None
    if m.shape != (dim, dim):
        raise ValueError(f"{name} expects a {dim}x{dim} complex matrix, got shape {list(m.shape)}")
    return np.ascontiguousarray(m)


def make_single(name: str, q) -> Channel:
    return Channel._wrap(getattr(_core.Channel, name)(qubit(q)))


def make_cnot(control, target) -> Channel:
    control, target = qubit(control, "control"), qubit(target, "target")
    _distinct("cnot", control, target)
    return Channel._wrap(_core.Channel.cnot(control, target))


def make_pair(name: str, q0, q1) -> Channel:
    q0, q1 = qubit(q0, "q0"), qubit(q1, "q1")
    _distinct(name, q0, q1)
    return Channel._wrap(getattr(_core.Channel, name)(q0, q1))


def make_rotation(name: str, theta, q) -> Channel:
    if isinstance(theta, Parameter):
        return _deferred(make_rotation, (name, theta, q))
    return Channel._wrap(getattr(_core.Channel, name)(real(theta, "theta"), qubit(q)))


def make_pauli_rotation(pauli, qubits, theta) -> Channel:
    if isinstance(theta, Parameter):
        return _deferred(make_pauli_rotation, (pauli, qubit_list(qubits, "pauli_rotation"), theta))
    if not isinstance(pauli, str):
        raise TypeError(f"pauli_rotation: pauli must be a str, got {type_name(pauli)}")
    qs = qubit_list(qubits, "pauli_rotation")
    theta = real(theta, "theta")
    if len(pauli) != len(qs):
        raise ValueError(
            "pauli_rotation: pauli and qubits must have the same length "
            f"(got {len(pauli)} characters and {len(qs)} qubits)"
        )
    if not qs:
        raise ValueError("pauli_rotation: pauli and qubits must be non-empty")
    for ch in pauli:
        if ch not in "XYZ":
            raise ValueError(
                f"pauli_rotation: unexpected Pauli character '{ch}' "
                "(expected X/Y/Z; identity positions are expressed by omission)"
            )
    seen = set()
    for q in qs:
        if q in seen:
            raise ValueError(f"pauli_rotation: qubits must be distinct (index {q} appears twice)")
        seen.add(q)
    return Channel._wrap(_core.Channel.pauli_rotation(pauli, qs, theta))


def make_unitary_1q(q, matrix) -> Channel:
    q = qubit(q)
    return Channel._wrap(_core.Channel.unitary_1q(q, _matrix(matrix, 2, "unitary_1q")))


def make_unitary_2q(q0, q1, matrix) -> Channel:
    q0, q1 = qubit(q0, "q0"), qubit(q1, "q1")
    if q0 == q1:
        raise ValueError("unitary_2q: q0 and q1 must differ")
    return Channel._wrap(_core.Channel.unitary_2q(q0, q1, _matrix(matrix, 4, "unitary_2q")))


def make_depolarize(p, q) -> Channel:
    if isinstance(p, Parameter):
        return _deferred(make_depolarize, (p, q))
    return Channel._wrap(_core.Channel.depolarize(real(p, "p"), qubit(q)))


def make_dephase(p, q) -> Channel:
    if isinstance(p, Parameter):
        return _deferred(make_dephase, (p, q))
    return Channel._wrap(_core.Channel.dephase(real(p, "p"), qubit(q)))


def make_amplitude_damping(gamma, q) -> Channel:
    if isinstance(gamma, Parameter):
        return _deferred(make_amplitude_damping, (gamma, q))
    return Channel._wrap(_core.Channel.amplitude_damping(real(gamma, "gamma"), qubit(q)))


def make_pauli_channel(px, py, pz, q) -> Channel:
    if isinstance(px, Parameter) or isinstance(py, Parameter) or isinstance(pz, Parameter):
        return _deferred(make_pauli_channel, (px, py, pz, q))
    values = [("px", real(px, "px")), ("py", real(py, "py")), ("pz", real(pz, "pz"))]
    q = qubit(q)
    for name, p in values:
        if p < 0.0:
            raise ValueError(f"pauli_channel: {name} must be non-negative (got {rust_display(p)})")
    total = values[0][1] + values[1][1] + values[2][1]
    if total > 1.0:
        raise ValueError(f"pauli_channel: px + py + pz must be at most 1 (got {rust_display(total)})")
    return Channel._wrap(_core.Channel.pauli_channel(values[0][1], values[1][1], values[2][1], q))


def make_depolarize2(p, q0, q1) -> Channel:
    if isinstance(p, Parameter):
        return _deferred(make_depolarize2, (p, q0, q1))
    p = real(p, "p")
    q0, q1 = qubit(q0, "q0"), qubit(q1, "q1")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"depolarize2: p must be between 0 and 1 (got {rust_display(p)})")
    if q0 == q1:
        raise ValueError(f"depolarize2: the two qubit indices must differ (both are {q0})")
    return Channel._wrap(_core.Channel.depolarize2(p, q0, q1))


def make_measure(q) -> Channel:
    return Channel._wrap(_core.Channel.measure(qubit(q)))


def make_measure_pauli(pauli, qubits) -> Channel:
    if not isinstance(pauli, str):
        raise TypeError(f"measure_pauli: pauli must be a str, got {type_name(pauli)}")
    qs = qubit_list(qubits, "measure_pauli")
    if len(pauli) != len(qs):
        raise ValueError(
            "measure_pauli: pauli and qubits must have the same length "
            f"(got {len(pauli)} characters and {len(qs)} qubits)"
        )
    return Channel._wrap(_core.Channel.measure_pauli(pauli, qs))


def make_reset(q, basis="Z") -> Channel:
    if not isinstance(basis, str) or basis not in ("X", "Y", "Z"):
        raise ValueError(f"reset: basis must be 'X', 'Y' or 'Z', got {basis!r}")
    return Channel._wrap(_core.Channel.reset(qubit(q), basis))


class Circuit:
    """An ordered list of channels on ``num_qubits`` qubits.

    Every gate method pushes exactly one channel; the noise methods broadcast (one channel per
    listed qubit or pair). ``circuit[i]`` is a ``Channel`` (negative indices count from the end),
    ``circuit[a:b:s]`` a new ``Circuit`` (a negative step reverses the order; it is not the
    adjoint); ``a + b`` concatenates, ``a.extend(b)`` appends in place, ``adjoint()`` gives the
    inverse circuit and ``gates`` the task-JSON (schema v1) gate list.

    A ``Parameter`` in place of an angle or a noise strength makes the circuit a template: it runs
    with ``PauliSum.propagate(circuit, sweep={name: values})`` (K value sets in one propagation) or,
    bound to one value set, as ``circuit.bind({name: value})``; ``parameters`` names them.
    """

    # _p: None for an ordinary circuit; for a template {position: (maker, args, adjoint)} of its
    # channels that hold Parameters, whose _c channels are placeholders (_TemplateChannel).
    __slots__ = ("_c", "_p")

    def __init__(self, num_qubits):
        n = qubit(num_qubits, "num_qubits")
        if n > 1024:
            raise ValueError(TOO_WIDE)
        self._c = _core.Circuit(n)
        self._p = None

    @classmethod
    def _wrap(cls, core, templates=None) -> "Circuit":
        obj = object.__new__(cls)
        obj._c = core
        obj._p = templates or None
        return obj

    def __copy__(self) -> "Circuit":
        return Circuit._wrap(self._c.copy(), self._templates())

    def __deepcopy__(self, memo) -> "Circuit":
        return Circuit._wrap(self._c.copy(), self._templates())

    def _templates(self, offset: int = 0):
        """A copy of the template records with positions moved by ``offset`` (None when there are none)."""
        if self._p is None:
            return None
        return {i + offset: t for i, t in self._p.items()}

    # ---- parameters ----

    @property
    def parameters(self) -> list:
        """The names of the Parameters its channels hold, sorted (empty for an ordinary circuit)."""
        if self._p is None:
            return []
        return sorted(set().union(*(_template_names(t) for t in self._p.values())))

    def bind(self, values) -> "Circuit":
        """An ordinary circuit: every Parameter replaced by its value (``values``: ``{name: number}``,
        naming each parameter of the circuit and no other)."""
        if not isinstance(values, Mapping):
            raise TypeError(f"bind expects a dict {{name: value}}, got {type_name(values)}")
        numbers = {}
        for name, value in values.items():
            if not isinstance(name, str):
                raise TypeError(f"bind: parameter names must be str, got {type_name(name)}")
            numbers[name] = _parameter_value(value, f"bind: {name!r}")
        _check_names(self, numbers, "bind")
        return Circuit._wrap(self._bound(numbers))

    def _bound(self, values):
        """The _core circuit under ``values`` ({name: float}, every parameter named)."""
        if self._p is None:
            return self._c.copy()
        positions = sorted(self._p)
        try:
            channels = [_bind_template(self._p[i], values) for i in positions]
        except ValueError as e:
            shown = ", ".join(f"{name}={value!r}" for name, value in sorted(values.items()))
            raise ValueError(f"parameters {shown}: {e}") from None
        return _core.substituted(self._c, positions, channels)

    # ---- introspection ----

    @property
    def num_qubits(self) -> int:
        return self._c.num_qubits

    def __len__(self) -> int:
        return len(self._c)

    def __repr__(self) -> str:
        if self._p is not None:
            return f"Circuit(num_qubits={self.num_qubits}, channels={len(self)}, parameters={self.parameters})"
        return f"Circuit(num_qubits={self.num_qubits}, channels={len(self)})"

    def __getitem__(self, key):
        if isinstance(key, slice):
            if key.step == 0:
                raise ValueError("slice step cannot be zero")
            start = None if key.start is None else _signed(key.start)
            stop = None if key.stop is None else _signed(key.stop)
            step = 1 if key.step is None else _signed(key.step)
            core = self._c.slice(start, stop, step)
            if self._p is None:
                return Circuit._wrap(core)
            kept = range(len(self._c))[slice(start, stop, step)]
            return Circuit._wrap(core, {j: self._p[i] for j, i in enumerate(kept) if i in self._p})
        try:
            i = _signed(key)
        except TypeError:
            raise TypeError(f"Circuit indices must be integers or slices, not {type_name(key)}") from None
        n = len(self._c)
        if i < -n or i >= n:
            raise IndexError(f"Circuit index {i} is out of range for a circuit of {n} channels")
        if self._p is not None and i % n in self._p:
            return _TemplateChannel._of(self._c.at(i), self._p[i % n])
        return Channel._wrap(self._c.at(i))

    @property
    def gates(self) -> list:
        """The channels as task-JSON schema-v1 gate dicts (round-trips through
        ``interop.circuit_from_json``). A ValueError while the circuit holds Parameters (``bind``
        them first)."""
        _require_bound(self, "Circuit.gates")
        return json.loads(self._c.gates_json())

    # ---- composition ----

    def _push(self, channel: Channel) -> None:
        ch = channel._ch
        n = self._c.num_qubits
        top = max(ch.qubits)
        if top >= n:
            raise ValueError(f"qubit index {top} is out of range for a {n}-qubit circuit")
        self._c.append(ch)
        if channel.__class__ is _TemplateChannel:
            self._record(len(self._c) - 1, channel._tpl)

    def _record(self, position: int, template) -> None:
        if self._p is None:
            self._p = {}
        self._p[position] = template

    def _push_all(self, channels) -> None:
        for channel in channels:  # validate every channel before appending any
            top = max(channel._ch.qubits)
            if top >= self._c.num_qubits:
                raise ValueError(f"qubit index {top} is out of range for a {self._c.num_qubits}-qubit circuit")
        for channel in channels:
            self._c.append(channel._ch)
            if channel.__class__ is _TemplateChannel:
                self._record(len(self._c) - 1, channel._tpl)

    def append(self, channel) -> None:
        """Append a ``Channel`` made by the ``gates``/``noise`` factories."""
        if not isinstance(channel, Channel):
            raise TypeError(
                f"Circuit.append expects a Channel (from paulistrings.gates or paulistrings.noise), "
                f"got {type_name(channel)}"
            )
        self._push(channel)

    def extend(self, other) -> None:
        """Append every channel of ``other`` in place (``c.extend(c)`` doubles ``c``)."""
        if not isinstance(other, Circuit):
            raise TypeError(f"Circuit.extend expects a Circuit, got {type_name(other)}")
        if other.num_qubits != self.num_qubits:
            raise ValueError(f"extend: num_qubits mismatch ({self.num_qubits} vs {other.num_qubits})")
        added = other._templates(len(self._c))
        self._c.extend(other._c)
        if added:
            self._p = {**(self._p or {}), **added}

    def __add__(self, other):
        if not isinstance(other, Circuit):
            return NotImplemented
        if other.num_qubits != self.num_qubits:
            raise ValueError(f"Circuit +: num_qubits mismatch ({self.num_qubits} vs {other.num_qubits})")
        result = Circuit._wrap(self._c.copy(), self._templates())
        result.extend(other)
        return result

    def adjoint(self) -> "Circuit":
        """The inverse circuit: reversed order, each gate daggered (rotations negate θ, s↔sdg,
        unitaries conjugate-transposed; a Parameter's rotation is daggered once bound). Any noise
        channel is a ValueError."""
        core = self._c.adjoint()
        if self._p is None:
            return Circuit._wrap(core)
        last = len(self._c) - 1
        return Circuit._wrap(core, {last - i: (m, a, not adj) for i, (m, a, adj) in self._p.items()})

    # ---- gates ----

    def h(self, qubit) -> None:
        self._push(make_single("h", qubit))

    def s(self, qubit) -> None:
        self._push(make_single("s", qubit))

    def sdg(self, qubit) -> None:
        self._push(make_single("sdg", qubit))

    def x(self, qubit) -> None:
        self._push(make_single("x", qubit))

    def y(self, qubit) -> None:
        self._push(make_single("y", qubit))

    def z(self, qubit) -> None:
        self._push(make_single("z", qubit))

    def cnot(self, control, target) -> None:
        self._push(make_cnot(control, target))

    def cz(self, q0, q1) -> None:
        self._push(make_pair("cz", q0, q1))

    def swap(self, q0, q1) -> None:
        self._push(make_pair("swap", q0, q1))

    def rz(self, theta, qubit) -> None:
        self._push(make_rotation("rz", theta, qubit))

    def rx(self, theta, qubit) -> None:
        self._push(make_rotation("rx", theta, qubit))

    def ry(self, theta, qubit) -> None:
        self._push(make_rotation("ry", theta, qubit))

    def pauli_rotation(self, pauli, qubits, theta) -> None:
        """``exp(-iθP/2)`` with ``pauli[k]`` (X, Y or Z) on ``qubits[k]``."""
        self._push(make_pauli_rotation(pauli, qubits, theta))

    def unitary_1q(self, qubit, matrix) -> None:
        self._push(make_unitary_1q(qubit, matrix))

    def unitary_2q(self, q0, q1, matrix) -> None:
        """A 4×4 unitary acting on ``|q0 q1⟩`` (``q0`` the more significant factor)."""
        self._push(make_unitary_2q(q0, q1, matrix))

    # ---- measurement and reset (docs/design.md, "Circuit files") ----

    def measure(self, qubits) -> None:
        """Measure Z on each listed qubit (one qubit or a list), the outcome unused: Pauli strings
        with X or Y there are removed, the rest kept (both directions)."""
        self._push_all([make_measure(q) for q in _one_or_many(qubits, "measure")])

    def measure_pauli(self, pauli, qubits) -> None:
        """Measure the product ``pauli[0]`` on ``qubits[0]`` ⊗ ``pauli[1]`` on ``qubits[1]`` ⊗ … (any
        weight), the outcome unused: every string that anticommutes with it is removed."""
        self._push(make_measure_pauli(pauli, qubits))

    def reset(self, qubits, basis="Z") -> None:
        """Reset each listed qubit to the +1 eigenstate of ``basis`` (Z: |0⟩, X: |+⟩, Y: |+i⟩)."""
        self._push_all([make_reset(q, basis) for q in _one_or_many(qubits, "reset")])

    # ---- noise (one channel per listed qubit / pair) ----

    def depolarize(self, p, qubits) -> None:
        self._push_all([make_depolarize(p, q) for q in qubit_list(qubits)])

    def dephase(self, p, qubits) -> None:
        self._push_all([make_dephase(p, q) for q in qubit_list(qubits)])

    def amplitude_damping(self, gamma, qubits) -> None:
        self._push_all([make_amplitude_damping(gamma, q) for q in qubit_list(qubits)])

    def pauli_channel(self, px, py, pz, qubits) -> None:
        self._push_all([make_pauli_channel(px, py, pz, q) for q in qubit_list(qubits)])

    def depolarize2(self, p, pairs) -> None:
        channels = []
        if isinstance(pairs, (str, bytes)):
            raise TypeError(f"depolarize2: expected a sequence of (q0, q1) pairs, got {type_name(pairs)}")
        for pair in pairs:
            q0, q1 = _pair(pair)
            channels.append(make_depolarize2(p, q0, q1))
        self._push_all(channels)


def _parameter_value(value, what: str) -> float:
    """One parameter value: a finite real number."""
    if isinstance(value, (bool, Parameter)):
        raise TypeError(f"{what}: expected a real number, got {type_name(value)}")
    number = real(value, what)
    if not math.isfinite(number):
        raise ValueError(f"{what}: the value {number!r} is not finite")
    return number


def _check_names(circuit: Circuit, names, what: str) -> None:
    """ValueError unless ``names`` are exactly the circuit's parameters."""
    used = set(circuit.parameters)
    unused = sorted(set(names) - used)
    if unused:
        has = f"its parameters: {sorted(used)}" if used else "it has no Parameter"
        raise ValueError(f"{what}: no channel of the circuit uses the parameter {unused[0]!r} ({has})")
    missing = sorted(used - set(names))
    if missing:
        raise ValueError(f"{what}: the circuit's Parameter {missing[0]!r} has no value (unbound Parameter)")


def _require_bound(circuit: Circuit, what: str) -> None:
    if circuit._p is not None:
        names = ", ".join(repr(n) for n in circuit.parameters)
        raise ValueError(
            f"{what}: the circuit holds unbound Parameters ({names}); bind them with circuit.bind({{...}}) "
            "or, to propagate, pass their values with sweep={...}"
        )


def _one_or_many(qubits, what: str) -> list:
    """A qubit index (anything with ``__index__``) or a sequence of them, as a list."""
    if hasattr(qubits, "__index__"):
        return [qubit(qubits, what)]
    return qubit_list(qubits, what)


def _signed(value) -> int:
    return operator.index(value)


def _pair(pair):
    if isinstance(pair, (str, bytes)):
        raise TypeError(f"depolarize2: expected a (q0, q1) pair, got {type_name(pair)}")
    try:
        q0, q1 = pair
    except (TypeError, ValueError):
        raise TypeError(f"depolarize2: expected a (q0, q1) pair, got {pair!r}") from None
    return q0, q1
