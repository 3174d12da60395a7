"""``Parameter``: a named placeholder for a gate angle or a noise strength. A circuit built with
Parameters is a template: ``PauliSum.propagate(circuit, sweep={"th": values})`` runs it at K value
sets in one propagation (``_sweep.py``), ``Circuit.bind({"th": 0.3})`` makes one ordinary circuit.
"""

from __future__ import annotations

import math

from ._util import real, type_name

__all__ = ["Parameter"]


class Parameter:
    """A named placeholder for a real number: the angle of ``rx/ry/rz/pauli_rotation`` or the
    probability / strength of ``depolarize``, ``dephase``, ``amplitude_damping``, ``pauli_channel``,
    ``depolarize2`` (the Circuit methods and the ``gates``/``noise`` factories alike).

    An affine expression of one parameter is a Parameter too: ``2 * th``, ``-th``, ``th / 2 + 0.1``
    (the value is ``scale * value + offset``; the sweep gives values by ``name``). Two Parameters of
    the same name are the same parameter.
    """

    __slots__ = ("_name", "_scale", "_offset")
    __array_ufunc__ = None  # numpy scalars defer to our __rmul__ / __radd__

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Parameter: the name must be a str, got {type_name(name)}")
        if not name:
            raise ValueError("Parameter: the name must not be empty")
        self._name = name
        self._scale = 1.0
        self._offset = 0.0

    @property
    def name(self) -> str:
        return self._name

    def _affine(self, scale: float, offset: float) -> "Parameter":
        out = object.__new__(Parameter)
        out._name = self._name
        out._scale = scale
        out._offset = offset
        return out

    def _value(self, values) -> float:
        """Its value when its name has the value ``values[name]``."""
        return self._scale * values[self._name] + self._offset

    @staticmethod
    def _number(value):
        if isinstance(value, (Parameter, bool)):
            return None
        try:
            number = real(value)
        except TypeError:
            return None
        return number if math.isfinite(number) else None

    def __mul__(self, value):
        c = self._number(value)
        if c is None:
            return NotImplemented
        return self._affine(self._scale * c, self._offset * c)

    __rmul__ = __mul__

    def __truediv__(self, value):
        c = self._number(value)
        if c is None or c == 0.0:
            return NotImplemented
        return self._affine(self._scale / c, self._offset / c)

    def __add__(self, value):
        c = self._number(value)
        if c is None:
            return NotImplemented
        return self._affine(self._scale, self._offset + c)

    __radd__ = __add__

    def __sub__(self, value):
        c = self._number(value)
        if c is None:
            return NotImplemented
        return self._affine(self._scale, self._offset - c)

    def __rsub__(self, value):
        c = self._number(value)
        if c is None:
            return NotImplemented
        return self._affine(-self._scale, c - self._offset)

    def __neg__(self):
        return self._affine(-self._scale, -self._offset)

    def __pos__(self):
        return self

    def __repr__(self) -> str:
        text = f"Parameter({self._name!r})"
        if self._scale != 1.0:
            text = f"{self._scale!r}*{text}"
        if self._offset != 0.0:
            text += f" {'-' if self._offset < 0 else '+'} {abs(self._offset)!r}"
        return text
