"""Argument conversion shared by the public classes.

The original extension converts arguments the way PyO3 does: integers where an unsigned index is
expected (``TypeError`` for a float or a string, ``OverflowError`` for a negative number), floats
where a real parameter is expected (``TypeError`` for a string), and so on. These helpers give the
same behaviour so scripts see the same exceptions.
"""

from __future__ import annotations

import math
import numbers
import operator

_U32_MAX = 2**32 - 1
_U64_MAX = 2**64 - 1


def type_name(value) -> str:
    return type(value).__name__


def index(value, what: str = "value", *, limit: int = _U64_MAX) -> int:
    """A non-negative integer (``operator.index`` semantics, like PyO3's unsigned extraction)."""
    if isinstance(value, bool):
        return int(value)
    try:
        result = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{what}: '{type_name(value)}' object cannot be interpreted as an integer"
        ) from None
    if result < 0:
        raise OverflowError(f"{what}: can't convert negative int to unsigned")
    if result > limit:
        raise OverflowError(f"{what}: out of range integral type conversion attempted")
    return result


def qubit(value, what: str = "qubit") -> int:
    return index(value, what, limit=_U32_MAX)


def qubit_list(values, what: str = "qubits") -> list:
    if isinstance(values, (str, bytes)) or not _iterable(values):
        raise TypeError(f"{what}: expected a sequence of qubit indices, got {type_name(values)}")
    return [qubit(v, what) for v in values]


def real(value, what: str = "value") -> float:
    """A float, as PyO3 extracts f64 (no strings)."""
    if isinstance(value, float):
        return value
    if isinstance(value, (str, bytes)) or isinstance(value, complex):
        raise TypeError(f"{what}: must be real number, not {type_name(value)}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: must be real number, not {type_name(value)}") from None


def coefficient(value) -> complex:
    """A coefficient: complex, float or int (numpy scalars included)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError("expected complex, float, or int coefficient")
    if isinstance(value, complex):
        return value
    if isinstance(value, numbers.Number) or hasattr(type(value), "__complex__") or hasattr(
        type(value), "__float__"
    ):
        try:
            return complex(value)
        except (TypeError, ValueError):
            pass
    raise TypeError("expected complex, float, or int coefficient")


def _iterable(values) -> bool:
    try:
        iter(values)
    except TypeError:
        return False
    return True


def rust_float(value: float) -> str:
    """How Rust's ``{:?}`` prints an f64 (the original's reprs): ``0.3``, ``2.0``, ``1e-8``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(float(value))
    if "e" in text:
        mantissa, exponent = text.split("e")
        exponent = int(exponent)
        return f"{mantissa}e{exponent}"
    return text


def rust_display(value: float) -> str:
    """How Rust's ``{}`` prints an f64 in the original's messages (``2`` rather than ``2.0``)."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))
