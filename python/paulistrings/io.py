"""Saving and loading Pauli sums: the original's ``.npz`` format, version 1.

A file holds the arrays ``format`` (the string ``"paulistrings-npz-v1"``), ``num_qubits`` (int64),
``x`` and ``z`` (uint64, shape ``(n_terms, width)``, column j = qubits 64j…64j+63) and
``coefficients`` (complex128), written with ``numpy.savez_compressed`` and read back without
pickle. Files written by the original load here and the other way round.
"""

from __future__ import annotations

import os

import numpy as np

from ._sum import PauliSum
from ._util import type_name

__all__ = ["FORMAT", "save", "load"]

FORMAT = "paulistrings-npz-v1"


def save(path, pauli_sum) -> None:
    """Write ``pauli_sum`` to ``path`` (``numpy.savez_compressed``, which appends ``.npz`` to a
    name without that suffix)."""
    if not isinstance(pauli_sum, PauliSum):
        raise TypeError(f"io.save expects a PauliSum, got {type_name(pauli_sum)}")
    x, z, c = pauli_sum._arrays()
    np.savez_compressed(
        path,
        format=np.array(FORMAT),
        num_qubits=np.int64(pauli_sum.num_qubits),
        x=x,
        z=z,
        coefficients=c.astype(np.complex128, copy=False),
    )


def load(path) -> PauliSum:
    """Read a sum written by ``save`` (or by the original). A missing or unknown ``format`` field
    is a ``ValueError``; nothing is unpickled."""
    with np.load(os.fspath(path) if isinstance(path, os.PathLike) else path, allow_pickle=False) as data:
        if "format" not in data.files:
            raise ValueError(f"{os.fspath(path)}: not a paulistrings file (missing 'format' field)")
        found = str(data["format"])
        if found != FORMAT:
            raise ValueError(f"{os.fspath(path)}: unsupported format {found!r} (expected {FORMAT!r})")
        for key in ("num_qubits", "x", "z", "coefficients"):
            if key not in data.files:
                raise ValueError(f"{os.fspath(path)}: {FORMAT} file is missing the {key!r} field")
        num_qubits = _count(data["num_qubits"], path, "num_qubits")
        x = _words(data["x"], path, "x")
        z = _words(data["z"], path, "z")
        coefficients = np.ascontiguousarray(data["coefficients"])
    if coefficients.dtype not in (np.complex128, np.float64):
        coefficients = coefficients.astype(np.complex128)
    if x.ndim == 1 and x.size == 0:
        x = x.reshape(0, 1)
        z = z.reshape(0, 1)
    return PauliSum.from_arrays(x, z, coefficients, num_qubits)


def _count(value, path, key) -> int:
    """A stored count: an integer scalar ≥ 0, never a float rounded down (3.7 qubits is no file of ours)."""
    value = np.asarray(value)
    if value.shape != () or not np.issubdtype(value.dtype, np.integer) or int(value) < 0:
        raise ValueError(f"{os.fspath(path)}: {key!r} must be a non-negative integer, got {value!r}")
    return int(value)


def _words(value, path, key):
    """Stored Pauli words: unsigned 64-bit, or integers ≥ 0 that convert to them exactly."""
    value = np.asarray(value)
    if value.size == 0 and np.issubdtype(value.dtype, np.number):
        return np.zeros(value.shape, np.uint64)  # no word to round or wrap
    if not np.issubdtype(value.dtype, np.integer) or (np.issubdtype(value.dtype, np.signedinteger)
                                                      and int(value.min()) < 0):
        raise ValueError(f"{os.fspath(path)}: {key!r} must hold unsigned 64-bit words, got dtype {value.dtype}")
    return np.ascontiguousarray(value, dtype=np.uint64)
