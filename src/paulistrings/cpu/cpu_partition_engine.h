#pragma once
// CpuPartitionEngine<W, C>: the CPU engine with the hooks the partitioned driver (partition/) composes
// into a partitioned layer. A partitioned layer applies the channel with Truncation() (no per-term
// test), moves the outputs owned by other partitions out (extract_grouped, or fused with the layer:
// rotate_out, apply_out), adds the rows it receives (merge_bucketed), and only then runs the per-term
// test on the final summed coefficients (apply_term_truncation); remote layers whose outputs are final
// where computed are appended instead (apply_out_final, append_bucketed). Rows cross partitions laid out
// by bucket of the agreed bucket count (BucketedRows), so the receiver merges bucket by bucket without
// hashing (docs/design.md §7.4). A plain propagation uses CpuEngine and never these hooks.

#include <cstddef>
#include <cstdint>
#include <span>

#include "paulistrings/cpu/cpu_engine.h"

namespace paulistrings {

/// Rows laid out by bucket of a 2^bits-bucket hash (the partition exchange's layout): the rows of bucket
/// b are [offsets[b], offsets[b + 1]) of `keys` (PauliString<W> objects, packed) and `coefficients` (C,
/// packed), read with memcpy so that any byte buffer (e.g. one received over MPI) can hold them.
struct BucketedRows {
  int bits = 0;
  const std::uint64_t* offsets = nullptr;  ///< 2^bits + 1 entries, offsets[0] = 0
  const std::byte* keys = nullptr;
  const std::byte* coefficients = nullptr;
  std::uint64_t rows() const { return offsets[std::size_t{1} << bits]; }
};

/// Where extract_grouped writes group g's rows: keys[offset] and coefficients[offset] (bytes, packed).
struct GroupDestination {
  std::byte* keys = nullptr;
  std::byte* coefficients = nullptr;
};

template <int W, Coefficient C>
class CpuPartitionEngine : public CpuEngine<W, C> {
 public:
  CpuPartitionEngine(const PauliSum<W, C>& sum, const CpuEngineOptions& options) : CpuEngine<W, C>(sum, options) {}

  /// Calls f(key, coefficient) for every term, bucket by bucket in storage order.
  template <class F>
  void for_each_term(F&& f) const;
  /// Moves every term with group(key) < groups out of the engine (group(key) == groups: the term stays),
  /// laid out bucket by bucket: first counts[g · B + b] = terms of group g in bucket b (B = 2^bucket_bits())
  /// is handed to place(counts), which returns one GroupDestination per group; then the terms of group
  /// g are written there in (bucket, storage) order, packed. Buckets run in parallel (group may be called
  /// from several threads at once, twice per term); the layout does not depend on the thread count.
  template <class GroupOf, class Place>
  void extract_grouped(std::uint32_t groups, GroupOf&& group, Place&& place);
  /// A rotation layer whose generator g lies in another partition, fused with its export (partition/):
  /// no orbit {k, k ⊕ g} meets here, so each term k anticommuting with g keeps cos θ·c (removed when that
  /// is exactly zero) and its partner k ⊕ g, with ±sin θ·c, leaves. place(counts) receives counts[b] =
  /// partners whose key lies in bucket b of this engine's 2^bucket_bits() buckets — the bucket of k ⊕ g
  /// is the bucket of k XOR that of g (the hash is GF(2)-linear), so no key is hashed — and returns where
  /// they go (packed by bucket, then storage order). The arithmetic is rotation_layer's; no truncation
  /// (as apply_layer(table, Truncation())). Buckets run in parallel; the layout does not depend on threads.
  template <class Place>
  void rotate_out(const PreparedChannel<W>& table, Place&& place);
  /// Any other remote layer fused with its export (partition/): the channel as apply_layer(table,
  /// Truncation()), except that an output whose partition differs from its input's goes out instead of
  /// into the store. Every term must lie in one partition (the driver's invariant between layers), so an
  /// output's partition offset is part(its delta): part (GF(2)-linear, called only on the layer's deltas)
  /// and group_of_offset[offset] (size 2^partition bits; `groups` = stays, offset 0 must stay, anything
  /// above `groups` = a partition the caller did not name: std::logic_error, nothing exported) route it.
  /// The rows come laid out as extract_grouped lays them out (place(counts) with counts[g · B + b], then
  /// by bucket of this engine's current bucket count; the store is not refined in the layer). The
  /// general tables' orbits never collide, so a key leaves at most once and no row is summed.
  /// Whether apply_out takes this table (the sort-merge formulation of general tables does not route).
  bool applies_out(const PreparedChannel<W>& table) const {
    return !(options_.general_layer == GeneralLayer::sort_merge && table.form != PreparedChannel<W>::Form::rotation &&
             table.table_class == TableClass::general);
  }
  template <class Part, class Place>
  void apply_out(const PreparedChannel<W>& table, Part&& part, std::span<const std::uint32_t> group_of_offset,
                 std::uint32_t groups, Place&& place);
  /// Remote layers whose outputs are final where they are computed, so that the receiver appends them
  /// (append_bucketed: no key index, no sum) and the per-term test runs before they leave:
  ///  - a permutation table (each input has one image and no two inputs share one: a received key can
  ///    meet no key of the receiver's);
  ///  - a general table on the orbit path (not a rotation, not the sort-merge formulation), once every
  ///    orbit of its delta span is whole on one partition (export_orbit_members, then the partners'
  ///    members appended): each output is then computed once, from all of its orbit, and orbits are
  ///    disjoint cosets, so what one partition sends meets nothing the receiver holds or receives.
  /// apply_out_final is apply_out with `truncation`'s per-term test applied to every output, staying or
  /// leaving (returns the Σ|c|² it dropped), and, for a general table, each output routed by its delta
  /// from its orbit's representative (whose partition is this one's after the routing).
  bool finalizes_out(const PreparedChannel<W>& table) const {
    return table.table_class == TableClass::permutation || routes_orbits(table);
  }
  bool routes_orbits(const PreparedChannel<W>& table) const {
    return table.form != PreparedChannel<W>::Form::rotation && table.table_class == TableClass::general &&
           options_.general_layer == GeneralLayer::orbit;
  }
  /// For a routes_orbits table: moves out every term whose orbit belongs to another partition — the
  /// partition of the orbit's representative (the member whose pattern is reduced by the delta span),
  /// part(key) ⊕ part(the key's delta from it), so every partition names the same owner — laid out as
  /// extract_grouped lays them out, grouped by group_of_offset[that partition offset]. Every offset in the
  /// delta span must be named (std::logic_error otherwise, nothing moved).
  template <class Part, class Place>
  void export_orbit_members(const PreparedChannel<W>& table, Part&& part,
                            std::span<const std::uint32_t> group_of_offset, std::uint32_t groups, Place&& place);
  template <class Part, class Place>
  double apply_out_final(const PreparedChannel<W>& table, Part&& part, std::span<const std::uint32_t> group_of_offset,
                         std::uint32_t groups, const Truncation& truncation, Place&& place);
  /// Adds rows whose keys the store does not hold (a partner's export_orbit_members or apply_out_final
  /// rows: unchecked), laid out by this engine's bucket hash, by appending each bucket's rows (buckets in
  /// parallel; a coarser run is hashed row by row). Rows keep the tested state of the store (they passed
  /// the same policy on the partner). `refine`: refine afterwards when the mean bucket grew too long
  /// (false between export_orbit_members and apply_out_final, whose export is laid out by the agreed count).
  void append_bucketed(std::span<const BucketedRows> runs, bool refine);
  /// Removes every term with drop(key, coefficient) true (drop may be called from several threads at
  /// once); returns their Σ|c|² (summed per bucket, then in bucket order, so the bits do not depend on the
  /// thread count).
  template <class Predicate>
  double remove_if(Predicate&& drop);
  /// Adds rows: a key already present gets the row's coefficient added (rows in the given order);
  /// a new key is appended to its bucket. Exact zeros may result (apply_term_truncation drops them).
  /// Widens the light cone by the keys and refines the buckets when the mean bucket grows too long.
  void merge_terms(std::span<const PauliString<W>> keys, std::span<const C> coefficients);
  /// merge_terms for rows laid out by this engine's bucket hash (the same seed): the engine first
  /// refines to the largest `bits` of the runs, then merges every bucket's rows straight from the runs in
  /// parallel (runs in the given order, rows in order); a run with fewer bits than the engine is re-hashed
  /// (merge_terms). Equal keys within one run are allowed.
  void merge_bucketed(std::span<const BucketedRows> runs);
  /// merge_bucketed then apply_term_truncation(truncation), in one pass: each bucket is tested right
  /// after its merge (every bucket, rows or none). The same terms and order; returns the Σ|c|² removed.
  double merge_bucketed_and_test(std::span<const BucketedRows> runs, const Truncation& truncation);
  /// Grow-only refinement to at least 2^bits buckets (the partitions' agreed bucket count).
  void refine_to(int bits);
  /// The per-term truncation test on every term plus the exact-zero drop; returns the Σ|c|² removed.
  double apply_term_truncation(const Truncation& truncation);

 private:
  using Base = CpuEngine<W, C>;
  using Base::add_support;
  using Base::coset_layer;
  using Base::layer_threads;
  using Base::options_;
  using Base::parallel_worthwhile;
  using Base::refine_if_needed;
  using Base::remember_tested;
  using Base::rescale_layer;
  using Base::rotation_layer;
  using Base::scratch_;
  using Base::size_;
  using Base::skipped_layers_;
  using Base::skips_layer;
  using Base::store_;
  using Base::support_;
  using Base::tested_;
  using Base::threads_;
  using Base::threads_for;
  using typename Base::Group;
  using typename Base::Scratch;
  /// coset_layer's route for apply_out: outputs leave by the partition offset of their delta.
  struct ExportRoute;
  /// apply_out and apply_out_final: `final_outputs` = the per-term test on every output and, for a
  /// general table, outputs routed by their delta from the orbit's representative.
  template <class Part, class Place>
  double apply_out_routed(const PreparedChannel<W>& table, Part&& part, std::span<const std::uint32_t> group_of_offset,
                          std::uint32_t groups, const Truncation& truncation, bool final_outputs, Place&& place);
  /// Adds rows bucket by bucket (buckets on `threads` threads): count(b) rows go to bucket b, and
  /// rows(b, add) calls add(key, c) for each of them in order; each touched bucket is merged through a
  /// slot index of its keys. New keys widen the light cone; merged coefficients are untested.
  /// finish(b, bucket) then runs on every bucket, rows or none (right after its merge, while it is in
  /// cache), and returns how many terms it removed from it.
  template <class Count, class Rows, class Finish>
  void merge_by_bucket(int threads, Count&& count, Rows&& rows, Finish&& finish);
  /// merge_bucketed with merge_by_bucket's finish hook (cpu_detail::kKeepBucket: none; any other hook
  /// runs on every bucket).
  template <class Finish>
  void merge_bucketed(std::span<const BucketedRows> runs, Finish&& finish);
};

static_assert(LayerEngine<CpuPartitionEngine<2, double>, 2>);

}  // namespace paulistrings

#include "paulistrings/cpu/cpu_partition_engine.inl"
