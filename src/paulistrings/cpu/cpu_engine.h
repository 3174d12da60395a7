#pragma once
// CpuEngine<W, C>: the fast CPU engine (docs/design.md §7.2). A layer is split into the cosets of its delta
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
#include "paulistrings/cpu/layer_kernel.h"
#include "paulistrings/engine/cpus.h"  // available_cpus()
#include "paulistrings/engine/layer_engine.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

struct CpuEngineOptions {
  int threads = 0;                       ///< 0 = every core the process may run on
  std::size_t target_bucket_len = 1024;  ///< refine when the mean bucket length exceeds this
  std::size_t min_buckets = 128;
  std::size_t parallel_threshold = kParallelGrain;  ///< terms a thread takes at least (layer_threads)
  /// Rotations update the anticommuting terms in place (unchanged terms are not rewritten); off =
  /// the orbit path that rewrites every bucket (kept for measurement).
  bool in_place_rotations = true;
  GeneralLayer general_layer = GeneralLayer::orbit;
  /// Blocks of layers (apply_block, docs/design.md §7.7): taken when the sum holds at least
  /// block_min_terms terms, with at least block_min_cosets cosets (tasks) per block, each holding at
  /// most about block_bytes of terms. None of these depends on the thread count, so neither do blocks.
  bool gate_blocks = true;
  std::size_t block_min_terms = std::size_t{1} << 16;
  std::size_t block_min_cosets = 256;
  std::size_t block_bytes = std::size_t{512} << 10;
  /// Polled between the cosets (buckets) of a layer, from any thread: when it returns true the layer is
  /// abandoned and apply_layer throws LayerInterrupted; the engine's contents are then unspecified
  /// (discard it). Empty: never. Lets Ctrl-C stop a long layer at once (cli/runner.cc).
  std::function<bool()> interrupt;
};

template <int W, Coefficient C>
class CpuEngine {
 public:
  CpuEngine(const PauliSum<W, C>& sum, const CpuEngineOptions& options);

  std::size_t size() const { return size_; }
  int threads() const { return threads_; }
  int bucket_bits() const { return store_.bits(); }
  /// Column `label` of the bucket hash becomes column `qubit` of `wide` (BucketHash::copy_column): for
  /// NarrowEngine, as it gives `label`, which no term carries, to `qubit`.
  template <int W2>
  void copy_hash_column(std::size_t label, const BucketHash<W2>& wide, std::size_t qubit) {
    store_.copy_hash_column(label, wide, qubit);
  }
  /// Layers skipped because no term lies in their light cone (see support_).
  std::size_t skipped_layers() const { return skipped_layers_; }
  /// Layers applied inside blocks (apply_block), skipped ones included.
  std::size_t block_layers() const { return block_layers_; }
  /// A superset of the qubits some term acts on (bit q of word q / 64): exact after a rotation layer,
  /// grown by the support of other layers.
  const std::array<std::uint64_t, W>& light_cone() const { return support_; }

  /// Applies one layer in place; returns the Σ|c|² dropped by the per-term truncation.
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Applies a block of consecutive layers in one pass over memory (the BlockEngine contract,
  /// engine/layer_engine.h): a run of Pauli rotations, every coset of their combined delta span taking
  /// each in turn while its buckets are in cache; or a run of key-preserving layers (rescaling noise),
  /// each term taking each in turn. Returns how many layers it took (0: none).
  std::size_t apply_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                          std::span<BlockLayer> out);
  /// Whether apply_block would take a block under this policy now (options, size, policy tested).
  bool takes_blocks(const Truncation& truncation) const;
  /// Runs the truncation's layer passes.
  LayerPassResult finalize_layer(const Truncation& truncation);
  /// Writes the current sum into `sum` in canonical order.
  void export_to(PauliSum<W, C>& sum);
  /// Calls f(key, coefficient) for every term of bucket `bucket` (of 2^bucket_bits()), in the engine's
  /// own order (not sorted; the same on every call while no layer runs): for NarrowEngine's export,
  /// which maps every key and sorts each bucket at its new width.
  template <class F>
  void for_each_term_of_bucket(std::size_t bucket, F&& f) const {
    const Bucket<W, C>& b = store_.bucket(bucket);
    for (std::size_t t = 0; t < b.size(); ++t) f(b.keys[t], b.coefficients[t]);
  }

 protected:
  // Shared with CpuPartitionEngine (cpu_partition_engine.h), which adds the partition hooks.
  struct Group;
  struct Scratch;
  class PassTarget;

  bool interrupted() const { return options_.interrupt && options_.interrupt(); }
  void throw_if_interrupted() const {
    if (interrupted()) throw LayerInterrupted();
  }
  double rescale_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Key-preserving layers in one pass, a record each (rescale_layer: one; rescale_block: a run).
  void rescale_run(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                   std::span<BlockLayer> out);
  /// One layer of a coset block (apply_block): its kernel, deltas in the block's coset coordinates.
  struct BlockStep {
    enum class Kind : std::uint8_t { rotate, permute, rescale };
    Kind kind = Kind::rotate;
    std::size_t layer = 0;  ///< index in the block's tables
    cpu_detail::LayerKernel<W, C> kernel;
  };
  /// True when `table` changes no term whose support lies inside the light cone `cone` (a rotation
  /// whose generator misses it; a local table that fixes the identity, on qubits outside it).
  static bool skips_outside(const PreparedChannel<W>& table, const std::array<std::uint64_t, W>& cone);
  /// A permutation layer (each term has one image) on the buckets of the coset `rep` of `plan`, whose
  /// deltas are in the kernel's coordinates of `plan`; as rotate_coset for the rest.
  void permute_coset(const cpu_detail::LayerKernel<W, C>& kernel, const CosetPlan& plan, std::uint64_t rep,
                     Scratch& scratch, const Truncation& truncation, std::array<std::uint64_t, W>* scanned,
                     double& dropped, std::ptrdiff_t& change);
  /// permute_coset for a rotation with cos θ = 0: only the terms the scan lists as anticommuting are
  /// written, their images swapped between the two buckets of each pair {A, A ⊕ d}.
  void permute_rotation_coset(const cpu_detail::LayerKernel<W, C>& kernel, const CosetPlan& plan,
                              std::uint64_t rep, Scratch& scratch, const Truncation& truncation,
                              std::array<std::uint64_t, W>* scanned, double& dropped, std::ptrdiff_t& change);
  /// A key-preserving layer on the buckets of the coset `rep` of `plan`; as rotate_coset for the rest.
  void rescale_coset(const cpu_detail::LayerKernel<W, C>& kernel, const CosetPlan& plan, std::uint64_t rep,
                     const Truncation& truncation, std::array<std::uint64_t, W>* scanned, double& dropped,
                     std::ptrdiff_t& change);
  /// A run of key-preserving layers in one pass (apply_block's other kind of block).
  std::size_t rescale_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                            std::span<BlockLayer> out);
  /// Where coset_layer sends an output: everything stays (apply_layer); CpuPartitionEngine routes
  /// outputs by the partition offset of their delta (its ExportRoute).
  struct StayRoute;
  template <class Route>
  double coset_layer(const PreparedChannel<W>& table, const Truncation& truncation, const Route& route);
  double rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// A permutation layer in place (permute_coset per coset of its own plan), under a policy every
  /// term has passed.
  double permutation_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// One Pauli rotation on the buckets of the coset `rep` of `plan` (closed under the generator's
  /// delta, whose coset coordinate is `generator_local`), in place: the anticommuting terms paired by a
  /// table of one side of the pivot bit, missing partners appended, removed terms compacted. Adds the
  /// Σ|c|² it drops to `dropped`, the change in terms to `change`, and the support (x | z) of the keys it
  /// scanned to `*scanned` — or, with scanned = nullptr (a step of a block before its last), computes no
  /// support.
  void rotate_coset(const cpu_detail::LayerKernel<W, C>& kernel, unsigned generator_local,
                    const CosetPlan& plan, std::uint64_t rep, Scratch& scratch, const Truncation& truncation,
                    bool test_unchanged, std::array<std::uint64_t, W>* scanned, double& dropped,
                    std::ptrdiff_t& change);
  void refine_if_needed();
  /// The threads of the layer now running: one per parallel_threshold terms weighted by the layer's
  /// work per term (layer_weight_), at most threads_ (engine/options.h layer_threads).
  int layer_threads() const { return threads_for(size_); }
  int threads_for(std::size_t terms) const {
    return paulistrings::layer_threads(terms, layer_weight_, options_.parallel_threshold, threads_);
  }
  bool parallel_worthwhile() const { return layer_threads() > 1; }

  CpuEngineOptions options_;
  int threads_;
  /// The running layer's work per term against a rotation's: 4 for general tables (orbit grouping), else 1.
  std::size_t layer_weight_ = 1;
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
  /// Adds the qubits `table` can act on to `cone` (a rotation's generator, a local table's support).
  static void grow_cone(std::array<std::uint64_t, W>& cone, const PreparedChannel<W>& table);
  /// Appends the coset's pending terms (scratch.pending) to their buckets.
  void append_pending(const CosetPlan& plan, std::uint64_t rep, const Scratch& scratch);
  /// One in-place pass over the cosets of `plan` on the engine's threads: work(scratch, rep, dropped,
  /// change) per coset; updates the size, returns the Σ|c|² dropped, summed in coset order.
  template <class Work>
  double coset_pass(const CosetPlan& plan, Work&& work);
  TestedPolicy tested_;
  std::size_t skipped_layers_ = 0;
  std::size_t block_layers_ = 0;
  void remember_tested(const Truncation& truncation) { tested_.remember(truncation); }
  /// True when the rotation `generator` can act on some term: it touches the light cone `cone`.
  static bool touches(const PauliString<W>& generator, const std::array<std::uint64_t, W>& cone) {
    for (int w = 0; w < W; ++w) {
      if ((generator.x[w] | generator.z[w]) & cone[w]) return true;
    }
    return false;
  }
  /// After a rotation pass: the light cone is the keys the threads scanned (a superset of those
  /// kept) plus the support of the last rotation (its appended partners).
  void refresh_support(const PreparedChannel<W>& last);
};

static_assert(BlockEngine<CpuEngine<2, double>, 2>);

}  // namespace paulistrings

#include "paulistrings/cpu/cpu_engine.inl"
#include "paulistrings/cpu/cpu_engine_blocks.inl"
#include "paulistrings/engine/driver.h"

namespace paulistrings {

// The library compiles the engine and its driver once per width and coefficient type
// (cpu_engine_instances.cc); every other unit uses those instances instead of compiling its own.
#define PAULISTRINGS_DECLARE_CPU_ENGINE(W, C)                                                       \
  extern template class CpuEngine<W, C>;                                                            \
  extern template PropagationStats run_layers<W, CpuEngine<W, C>>(CpuEngine<W, C>&, const Circuit&, \
                                                                  const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_CPU_ENGINE)
#undef PAULISTRINGS_DECLARE_CPU_ENGINE

}  // namespace paulistrings
