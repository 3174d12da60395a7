"""Truncation policies: what to drop after every layer (channel) of a propagation.

Factories (the original's ``paulistrings.truncation`` submodule):

- ``coeff(epsilon)``: keep a term iff ``|c| > epsilon`` (``|c| == epsilon`` is dropped).
- ``weight(k)``: keep a term iff its Pauli weight (non-identity factors) is at most ``k``.
- ``topn(n)``: after each layer keep the ``n`` largest ``|c|`` (a tie group at the cut is kept
  whole if it fits, else dropped whole, so at most ``n`` remain).
- ``approx_topn(n)``: after each layer keep whole octaves of ``|c|²`` from the top while they fit
  in ``n`` (at most ``n`` remain; cheaper than ``topn``).
- ``collapse_sample(cache, seed)``: after a layer leaving more than ``cache`` terms, replace the
  sum by one string drawn with probability ``|c|²/Σ|c|²`` (coefficient 1); the draw at the k-th
  layer pass depends only on ``(seed, k)``. Reusing the same policy object continues its
  trajectory; call the factory again to restart it.

Compose with ``a & b`` (keep iff both keep; both layer passes run, ``a`` first) and ``a | b``
(keep iff either keeps; neither child's layer pass runs — the original's semantics).
"""

from __future__ import annotations

from . import _core
from ._util import index, real, rust_float

__all__ = ["Truncation", "coeff", "weight", "topn", "approx_topn", "collapse_sample"]


class Truncation:
    """An opaque truncation policy; build one with the factories of this module."""

    __slots__ = ("_t", "_spec")

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "Truncation has no public constructor; use paulistrings.truncation.coeff, weight, "
            "topn, approx_topn or collapse_sample"
        )

    @classmethod
    def _make(cls, core, spec: str) -> "Truncation":
        obj = object.__new__(cls)
        obj._t = core
        obj._spec = spec
        return obj

    def __and__(self, other):
        if not isinstance(other, Truncation):
            return NotImplemented
        return Truncation._make(self._t.and_(other._t), f"And({self._spec}, {other._spec})")

    def __or__(self, other):
        if not isinstance(other, Truncation):
            return NotImplemented
        return Truncation._make(self._t.or_(other._t), f"Or({self._spec}, {other._spec})")

    def __repr__(self) -> str:
        return f"Truncation({self._spec})"

    def _contains(self, kind: str) -> bool:
        return self._t.contains(kind)


def coeff(epsilon) -> Truncation:
    """Keep a term iff ``|c| > epsilon`` (compared as ``|c|² > epsilon²``; ``epsilon < 0`` keeps all)."""
    eps = real(epsilon, "coeff")
    return Truncation._make(_core.Truncation.coeff(eps), f"Coeff({rust_float(eps)})")


def weight(k) -> Truncation:
    """Keep a term iff its Pauli weight is at most ``k``."""
    k = index(k, "weight", limit=2**32 - 1)
    return Truncation._make(_core.Truncation.weight(k), f"Weight({k})")


def topn(n) -> Truncation:
    """Keep at most ``n`` terms by magnitude after each layer (tie groups kept or dropped whole)."""
    n = index(n, "topn")
    return Truncation._make(_core.Truncation.topn(n), f"TopN({n})")


def approx_topn(n) -> Truncation:
    """Keep approximately (at most) ``n`` terms: whole octaves of ``|c|²`` from the top."""
    n = index(n, "approx_topn")
    return Truncation._make(_core.Truncation.approx_topn(n), f"ApproxTopN({n})")


def collapse_sample(cache, seed) -> Truncation:
    """Monte-Carlo collapse to one string once a layer leaves more than ``cache`` terms."""
    cache = index(cache, "collapse_sample")
    seed = index(seed, "collapse_sample")
    return Truncation._make(
        _core.Truncation.collapse_sample(cache, seed), f"CollapseSample {{ cache: {cache}, seed: {seed} }}"
    )
