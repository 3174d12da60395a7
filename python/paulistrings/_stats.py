"""What a propagate call reports: the read-only records ``PropagationStats`` (per layer) and
``PartitionStats`` (what a partitioned run exchanged), built from the run's record (the dict of
``_core.propagate`` or of the resident GPU sum) by ``_stats``, and the ``paulistrings.propagate``
logger with its per-layer DEBUG line. Shared by ``PauliSum`` and ``GpuPauliSum``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["PropagationStats", "PartitionStats", "SweepStats"]

_log = logging.getLogger("paulistrings.propagate")


@dataclass(frozen=True, repr=False)
class PartitionStats:
    """What a partitioned run (``partitions=`` of 2 or more, a list of several devices, or ``comm=``)
    exchanged; ``None`` in ``PropagationStats.partition`` for an unpartitioned run.

    The original's fields: ``partitions`` (P, a power of two; the communicator's size under
    ``comm=``), ``rank``/``size`` (this rank and the group size under ``comm=``, else ``None``),
    ``devices`` (the CUDA ordinal of each partition of a GPU run: the ``device=`` list in-process,
    ``[this rank's device]`` under ``comm=``; ``None`` for a CPU run), and per applied layer k:
    ``local[k]`` (no row crossed a partition boundary), ``rows_exported[k]`` and
    ``bytes_exported[k]`` (summed over all partitions, also under ``comm=``), ``imbalance[k]``
    (largest over mean partition size after the layer; 1.0 = perfect, global also under
    ``comm=``). ``terms_in``, ``terms_out`` and ``nanos`` are ``None``: this engine does not record
    per-partition term counts or times (``PropagationStats`` has the global counts per layer, and
    ``max_terms`` below the largest partition).

    Added by this implementation: ``rows`` (how the partition rows were chosen, e.g.
    ``"seeded(SEED)"``, ``"seeded(SEED) excluding 3 qubits"`` or ``"cut(4 blocks, z)"``),
    ``transport`` (``"in-process"`` or ``"mpi"``), ``remote_layers`` / ``local_layers`` (layers
    with and without an exchange), ``orbit_routed_layers`` (remote layers of a dense general table that
    first moved each orbit's members to one partition: two exchanges, outputs appended, not summed),
    ``total_rows_exported``, ``total_bytes_exported``, ``max_imbalance``, and per layer
    ``partners[k]`` (distinct partner offsets, i.e. exchanges per partition) and ``max_terms[k]``
    (terms of the largest partition after the layer); and per partition r (index = rank):
    ``final_terms[r]`` (its terms at the end), ``transport_seconds[r]`` (wall time in exchanges and
    reductions, waiting for partners included) and ``work_seconds[r]`` (the rest of its wall time),
    summed over checkpoint segments.
    """

    partitions: int
    rank: Optional[int]
    size: Optional[int]
    devices: Optional[list]
    local: list
    rows_exported: list
    bytes_exported: list
    terms_in: Optional[list]
    terms_out: Optional[list]
    imbalance: list
    nanos: Optional[list]
    rows: str
    transport: str
    remote_layers: int
    local_layers: int
    orbit_routed_layers: int
    total_rows_exported: int
    total_bytes_exported: int
    max_imbalance: float
    partners: list
    max_terms: list
    final_terms: list
    transport_seconds: list
    work_seconds: list

    def __repr__(self) -> str:
        where = f", rank={self.rank}, size={self.size}" if self.rank is not None else ""
        return (
            f"PartitionStats(partitions={self.partitions}{where}, rows={self.rows!r}, "
            f"transport={self.transport!r}, remote_layers={self.remote_layers}, local_layers={self.local_layers}, "
            f"rows_exported={self.total_rows_exported}, bytes_exported={self.total_bytes_exported}, "
            f"max_imbalance={self.max_imbalance:.3f})"
        )


@dataclass(frozen=True, repr=False)
class PropagationStats:
    """Per-layer record of one ``propagate_with_stats`` call (read-only).

    One entry per applied layer (one channel), in application order — reversed circuit order
    under ``direction="heisenberg"``. ``terms_in[k]`` counts the terms before layer k and
    ``terms_out[k]`` after its truncation (``terms_in[k+1] == terms_out[k]``); ``peak_terms`` is
    the largest of ``terms_in[0]`` and every ``terms_out``. ``gate_name`` uses the original's
    channel type names (``Clifford1Q``, ``PauliRotation``, ``Depolarizing``, …), ``nanos`` is
    wall time per layer, ``collapses`` counts ``collapse_sample`` collapses (``None`` without
    that policy). Added by this implementation: ``discarded_weight`` (Σ|c|² removed by
    truncation in each layer), ``total_discarded_weight``, ``budget_truncations`` and
    ``budget_discarded_weight`` (cuts made by ``memory_limit``), ``gates`` (task-JSON names),
    ``column_layers`` (how many of the layers the CPU engine ran on its column index before moving to
    its coset engine, docs/design.md §7.5: on one thread while layers touch few terms; 0 otherwise —
    the result is the same either way).
    """

    layers: int
    terms_in: list
    terms_out: list
    peak_terms: int
    final_terms: int
    partition: Optional[PartitionStats]
    circuit_index: list
    application_index: list
    gate_name: list
    nanos: list
    collapses: Optional[int]
    discarded_weight: list
    total_discarded_weight: float
    budget_truncations: int
    budget_discarded_weight: float
    gates: list
    column_layers: int

    def __repr__(self) -> str:
        return (
            f"PropagationStats(layers={self.layers}, terms_in={self.terms_in}, terms_out={self.terms_out}, "
            f"peak_terms={self.peak_terms}, final_terms={self.final_terms})"
        )


@dataclass(frozen=True, repr=False)
class SweepStats(PropagationStats):
    """``PropagationStats`` of a sweep (``propagate_with_stats(..., sweep=...)``). The per-layer fields
    count Pauli strings (shared by the columns: a string is kept while any column keeps it), and a
    layer's ``discarded_weight`` is the largest Σ|c|² a column lost there (``total_discarded_weight``
    their sum); ``columns`` is K and ``column_discarded_weight[k]`` the Σ|c|² column k lost in the
    whole run. With ``gradient=``, ``gradient_discarded_weight[name][k]`` is the Σ|c|² the derivative of
    column k lost (truncation decides on the values alone: a Pauli string goes with its derivatives),
    and a layer's ``discarded_weight`` is the largest over the value and derivative columns. When the
    columns diverge the sweep may split them into groups of adjacent columns (docs/design.md §7.8):
    ``column_groups`` is how many groups it ended with (1: never split), ``column_splits`` how many
    splits it made; while split, the per-layer terms count every group's."""

    columns: int
    column_discarded_weight: list
    gradient_discarded_weight: dict = field(default_factory=dict)
    column_groups: int = 1
    column_splits: int = 0

    def __repr__(self) -> str:
        return (
            f"SweepStats(columns={self.columns}, layers={self.layers}, peak_terms={self.peak_terms}, "
            f"final_terms={self.final_terms}, column_discarded_weight={self.column_discarded_weight})"
        )


def _log_layer(k, n, name, terms_in, terms_out, nanos, discarded):
    _log.debug("layer %d/%d [%s]: %d -> %d terms, %.3f ms", k, n, name, terms_in, terms_out, nanos / 1e6)


def _partition_stats(res) -> Optional[PartitionStats]:
    """PartitionStats of a partitioned run's record (the whole run: the library merges its segments)."""
    p = res.get("partition")
    if p is None:
        return None
    return PartitionStats(
        partitions=p["partitions"],
        rank=p["rank"],
        size=p["size"],
        devices=p["devices"],
        local=[not remote for remote in p["layer_remote"]],
        rows_exported=list(p["layer_rows_exported"]),
        bytes_exported=list(p["layer_bytes_exported"]),
        terms_in=None,
        terms_out=None,
        imbalance=list(p["layer_imbalance"]),
        nanos=None,
        rows=p["rows"],
        transport=p["transport"],
        remote_layers=p["remote_layers"],
        local_layers=p["local_layers"],
        orbit_routed_layers=p["orbit_routed_layers"],
        total_rows_exported=p["rows_exported"],
        total_bytes_exported=p["bytes_exported"],
        max_imbalance=p["max_imbalance"],
        partners=list(p["layer_partners"]),
        max_terms=list(p["layer_max_terms"]),
        final_terms=list(p["final_terms"]),
        transport_seconds=list(p["transport_seconds"]),
        work_seconds=list(p["work_seconds"]),
    )


def _sweep_stats(res, policy, gradients=()) -> SweepStats:
    """SweepStats of a sweep's record (_core.propagate_sweep's dict: K value columns, then K derivative
    columns per name of ``gradients``)."""
    fields = _stats(res, policy).__dict__
    weights = list(res["column_discarded_weight"])
    k = len(weights) // (1 + len(gradients))
    return SweepStats(**fields, columns=k, column_discarded_weight=weights[:k],
                      gradient_discarded_weight={name: weights[k * (1 + g): k * (2 + g)]
                                                 for g, name in enumerate(gradients)},
                      column_groups=res.get("column_groups", 1), column_splits=res.get("column_splits", 0))


def _stats(res, policy) -> PropagationStats:
    """PropagationStats of a run's record (_core.propagate's dict: the whole run)."""
    has_collapse = policy is not None and policy._contains("collapse_sample")
    return PropagationStats(
        layers=len(res["terms_in"]),
        terms_in=list(res["terms_in"]),
        terms_out=list(res["terms_out"]),
        peak_terms=res["peak_terms"],
        final_terms=res["final_terms"],
        partition=_partition_stats(res),
        circuit_index=list(res["circuit_index"]),
        application_index=list(res["application_index"]),
        gate_name=list(res["gate_name"]),
        nanos=list(res["nanos"]),
        collapses=res["collapses"] if has_collapse else None,
        discarded_weight=list(res["discarded_weight"]),
        total_discarded_weight=float(res["total_discarded_weight"]),
        budget_truncations=res["budget_truncations"],
        budget_discarded_weight=float(res["budget_discarded_weight"]),
        gates=list(res["gate"]),
        column_layers=res["column_layers"],
    )
