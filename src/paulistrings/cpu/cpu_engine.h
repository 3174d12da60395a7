#pragma once
// CpuEngine<W, C>: the fast CPU engine (DESIGN §3.4). A layer is split into the cosets of its delta
// hash span (CosetPlan); cosets are closed, write-disjoint tasks run in parallel with OpenMP dynamic
// scheduling, each reading and rewriting only its own buckets (no locks, no atomics). Per table class:
//  - key-preserving: coefficients rescaled in place, per bucket;
//  - permutation: every term scattered to its one image, no sort or merge;
//  - general: the orbit grouping — input terms are grouped by the representative of their orbit
//    under the realized delta span (a hash join inside the coset), and each group's outputs are
//    the small matrix-vector product over that orbit; orbits never collide, so there is no output
//    sort and no duplicate merge.
// The per-term truncation sees every final coefficient; exact zeros are dropped. Work inside a coset
// is sequential and its order is fixed, so results are bitwise identical for any thread count.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/cpu/bucket_store.h"
#include "paulistrings/cpu/coset_plan.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

/// Formulation of general (non-rotation, non-permutation) layers: (b) orbit grouping — inputs
/// grouped by orbit representative, a small matrix-vector product per orbit, no sort or merge — or
/// (a) gather-sort-merge — every output into one stream per coset, sorted, duplicates summed.
enum class GeneralLayer : std::uint8_t { orbit, sort_merge };

struct CpuEngineOptions {
  int threads = 0;                       ///< 0 = every core the process may run on
  std::size_t target_bucket_len = 1024;  ///< refine when the mean bucket length exceeds this
  std::size_t min_buckets = 128;
  std::size_t parallel_threshold = 4096;  ///< terms below which a layer stays on one thread
  /// Rotations update the anticommuting terms in place (unchanged terms are not rewritten); off =
  /// the orbit path that rewrites every bucket (kept for measurement).
  bool in_place_rotations = true;
  GeneralLayer general_layer = GeneralLayer::orbit;
  /// Polled between the cosets (buckets) of a layer, from any thread: when it returns true the layer is
  /// abandoned and apply_layer throws LayerInterrupted; the engine's contents are then unspecified
  /// (discard it). Empty: never. Lets Ctrl-C stop a long layer at once (cli/runner.cc).
  std::function<bool()> interrupt;
};

/// Thrown by CpuEngine::apply_layer when CpuEngineOptions::interrupt asked it to stop inside the layer.
class LayerInterrupted : public std::runtime_error {
 public:
  LayerInterrupted() : std::runtime_error("the layer was interrupted") {}
};

/// Number of CPUs in the process's affinity mask (at least 1).
int available_cpus();

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
class CpuEngine {
 public:
  CpuEngine(const PauliSum<W, C>& sum, const CpuEngineOptions& options);

  std::size_t size() const { return size_; }
  int threads() const { return threads_; }
  int bucket_bits() const { return store_.bits(); }
  /// Layers skipped because no term lies in their light cone (see support_).
  std::size_t skipped_layers() const { return skipped_layers_; }

  /// Applies one layer in place; returns the Σ|c|² dropped by the per-term truncation.
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Runs the truncation's layer passes.
  LayerPassResult finalize_layer(const Truncation& truncation);
  /// Writes the current sum into `sum` in canonical order.
  void export_to(PauliSum<W, C>& sum);

  // ---- Hooks for the partitioned driver (partition/). propagate() does not call them; they change
  // nothing for it. A partitioned layer applies the channel with Truncation() (no per-term test), moves
  // the outputs owned by other partitions out (extract_grouped), adds the rows it receives (merge_bucketed),
  // and
  // only then runs the per-term test on the final summed coefficients (apply_term_truncation).

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
  struct Group;
  struct Scratch;
  class PassTarget;

  bool interrupted() const { return options_.interrupt && options_.interrupt(); }
  void throw_if_interrupted() const {
    if (interrupted()) throw LayerInterrupted();
  }
  double rescale_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Where coset_layer sends an output: everything stays (apply_layer), or routed by the partition
  /// offset of its delta (apply_out).
  struct StayRoute;
  struct ExportRoute;
  template <class Route>
  double coset_layer(const PreparedChannel<W>& table, const Truncation& truncation, const Route& route);
  /// apply_out and apply_out_final: `final_outputs` = the per-term test on every output and, for a
  /// general table, outputs routed by their delta from the orbit's representative.
  template <class Part, class Place>
  double apply_out_routed(const PreparedChannel<W>& table, Part&& part, std::span<const std::uint32_t> group_of_offset,
                          std::uint32_t groups, const Truncation& truncation, bool final_outputs, Place&& place);
  double rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  void refine_if_needed();
  /// Adds rows bucket by bucket (buckets in parallel when `parallel`): count(b) rows go to bucket b, and
  /// rows(b, add) calls add(key, c) for each of them in order; each touched bucket is merged through a
  /// slot index of its keys. New keys widen the light cone; merged coefficients are untested.
  /// finish(b, bucket) then runs on every bucket, rows or none (right after its merge, while it is in
  /// cache), and returns how many terms it removed from it.
  template <class Count, class Rows, class Finish>
  void merge_by_bucket(bool parallel, Count&& count, Rows&& rows, Finish&& finish);
  /// merge_bucketed with merge_by_bucket's finish hook (cpu_detail::kKeepBucket: none; any other hook
  /// runs on every bucket).
  template <class Finish>
  void merge_bucketed(std::span<const BucketedRows> runs, Finish&& finish);
  /// Below this many terms a layer runs on the calling thread: a parallel region costs more than
  /// the work (the small-sum direct path).
  bool parallel_worthwhile() const { return threads_ > 1 && size_ >= options_.parallel_threshold; }

  CpuEngineOptions options_;
  int threads_;
  BucketStore<W, C> store_;
  std::size_t size_ = 0;
  std::vector<Scratch> scratch_;  // one per thread, capacity kept across layers
  /// Light cone: a superset of the qubits some term acts on (x | z of every key, word by word).
  /// Rotation layers refresh it exactly from the keys they scan; other layers add their support.
  /// A layer whose support misses it, and which maps the identity on its support to itself, changes
  /// no term and is skipped.
  std::array<std::uint64_t, W> support_{};
  bool skips_layer(const PreparedChannel<W>& table, const Truncation& truncation) const;
  void add_support(const PreparedChannel<W>& table);
  /// The policy every current term is known to pass (held, so its identity stays unique).
  Truncation tested_truncation_;
  std::size_t skipped_layers_ = 0;
  bool tested_valid_ = false;
  void remember_tested(const Truncation& truncation) {
    tested_truncation_ = truncation;
    tested_valid_ = true;
  }
};

}  // namespace paulistrings

#include "paulistrings/cpu/cpu_engine.inl"
