#pragma once
// SweepEngine<W, C>: the CPU engine of sweeps (sweep/propagate_sweep.h, docs/design.md §7.8). Terms live
// in 2^b buckets of the linear bucket hash (core/bucket_hash.h), each term a key and K coefficients side
// by side, so a gate's key work — the commutation test, the partner's lookup, the merge — is done once
// for all K columns and the coefficient work is one short loop over them.
//  - A rotation about g pairs bucket β with β ⊕ h(g) (partners Q, Q ⊕ g lie there): each pair of buckets
//    is one task, updated in place — anticommuting terms on one side of a pivot bit of g are indexed, the
//    other side looks its partners up; a pair present is rotated together, a missing partner appended.
//  - A key-preserving table (dephasing, depolarizing) rescales every term in place.
//  - Any other local table works on the cosets of its buckets' delta span (cpu/coset_plan.h): all outputs
//    of a coset's terms are merged in a local index and written back into the coset's buckets.
// Tasks are closed and run in parallel (OpenMP); work inside one is sequential in a fixed order, so the
// results and the dropped weights are the same bits for every thread count.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/bucket_hash.h"
#include "paulistrings/cpu/coset_plan.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/sweep/sweep_sum.h"
#include "paulistrings/sweep/sweep_table.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

struct SweepEngineOptions {
  int threads = 0;                       ///< 0 = every core the process may run on
  std::size_t target_bucket_len = 1024;  ///< refine when the mean bucket length passes this
  std::size_t min_buckets = 64;
  std::size_t parallel_threshold = kParallelGrain;  ///< rows a thread takes at least (layer_threads)
};

template <int W, Coefficient C>
class SweepEngine {
 public:
  /// `values`: the value columns (the first ones; the rest are derivative columns, sweep/propagate_sweep.h).
  /// `bucket_bits` ≥ 0: a state this engine handed back (SweepState) — its 2^bucket_bits buckets, the rows
  /// in each bucket in `sum`'s order, so the layout is the one the engine had (the sums of a local table
  /// and the ranks of a layer pass follow it); refinement waits for the next layer, as it would have.
  SweepEngine(const SweepSum<W, C>& sum, std::size_t values, const SweepEngineOptions& options,
              int bucket_bits = -1);

  std::size_t size() const { return size_; }
  std::size_t columns() const { return columns_; }
  int bucket_bits() const { return bits_; }
  /// A superset of the qubits the terms act on (bit q % 64 of word q / 64); a layer outside it is skipped.
  const std::array<std::uint64_t, W>& light_cone() const { return cone_; }
  /// Continuing a state (SweepState): the light cone the engine had, and — after a layer — the per-term
  /// truncation every term has passed, so the next layers are skipped or retested exactly as the
  /// uninterrupted run's are.
  void restore(const std::array<std::uint64_t, W>& cone, const Truncation* tested);

  /// Applies the layer (column j under layer.table_of(j), plus its source term) with the sweep's per-term
  /// truncation; adds each column's dropped Σ|c|² to dropped[j].
  void apply_layer(const SweepLayer<W>& layer, const Truncation& truncation, std::span<double> dropped);
  /// The truncation's layer passes (terms ranked by their largest |c|² over the value columns).
  LayerPassResult finalize_layer(const Truncation& truncation, std::span<double> dropped);
  SweepSum<W, C> result() const;
  /// f(key, row) for every term in result()'s order (row: columns() coefficients), without copying them.
  template <class F>
  void for_each_row(F&& f) const {
    for (const Bucket& bucket : buckets_) {
      for (std::size_t i = 0; i < bucket.keys.size(); ++i)
        f(bucket.keys[i], std::span<const C>(bucket.coefficients.data() + i * columns_, columns_));
    }
  }

 private:
  struct Bucket {
    std::vector<PauliString<W>> keys;
    std::vector<C> coefficients;  // keys.size() × columns_
  };
  struct Scratch;
  class PassTarget;

  C* row(Bucket& bucket, std::size_t i) { return bucket.coefficients.data() + i * columns_; }
  std::uint64_t bucket_of(const PauliString<W>& key) const { return hash_(key, bits_); }
  void refine_if_needed();
  int threads_for_layer() const;
  /// Runs work(scratch, unit, dropped_of_unit) for every unit in parallel; adds the units' drops to
  /// `dropped` in unit order.
  template <class Work>
  void for_each_unit(std::size_t units, std::span<double> dropped, Work&& work);
  void rotation_layer(const SweepTable<W>& table, const Truncation& truncation, std::span<double> dropped);
  void rotate_pair(const SweepTable<W>& table, std::uint64_t a, std::uint64_t b, const Truncation& truncation,
                   bool retest, Scratch& scratch, double* dropped);
  void rescale_layer(const SweepTable<W>& table, const Truncation& truncation, std::span<double> dropped);
  void local_layer(const SweepTable<W>& table, const Truncation& truncation, std::span<double> dropped);
  /// Row flags of remove_rows: kept; dropped by the truncation; moved to another bucket.
  static constexpr char kKeptRow = 0, kDroppedRow = 1, kMovedRow = 2;
  /// Takes the flagged rows out of `bucket`, adding the Σ|c|² of the dropped ones to dropped[k].
  void remove_rows(Bucket& bucket, const std::vector<char>& removed, double* dropped);
  void recount();

  SweepEngineOptions options_;
  std::size_t num_qubits_;
  std::size_t columns_;
  std::size_t values_;
  int threads_;
  BucketHash<W> hash_;
  int bits_ = 0;
  std::vector<Bucket> buckets_;
  std::size_t size_ = 0;
  std::vector<Scratch> scratch_;
  TestedPolicy tested_;
  /// A superset of the qubits some term acts on (bit q of word q / 64), grown by every layer applied.
  std::array<std::uint64_t, W> cone_{};
};

}  // namespace paulistrings

#include "paulistrings/sweep/sweep_engine.inl"
