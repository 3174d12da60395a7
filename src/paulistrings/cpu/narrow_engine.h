#pragma once
// NarrowEngine<W, C>: the CPU engine (cpu_engine.h) run on keys only as wide as the qubits the sum has
// used (docs/design.md §7.6). A circuit on a large register whose observable stays local — a 2D lattice
// under a coefficient cut-off, a heavy-hex device with a single-site observable — keeps its terms on a
// small set of qubits; every byte of a key outside that set is a zero the engine would read on every
// gate. This engine gives each qubit a label when a layer can put a non-identity factor on it, takes the
// label back when the CPU engine's light cone says no term uses the qubit any more, and holds the keys
// at the narrowest width (1, 2, 4, … words) that fits the labels, widening when more qubits are in use
// at once. A layer whose qubits carry no label changes no term (every term is the identity there) and
// is skipped.
//
// The coefficients are those of the CPU engine at width W, bit for bit: the engine computes every
// output from its inputs' values alone, whatever their position. Key order is relabelled, so the
// policies whose layer passes look at key order (topn, approx_topn, collapse_sample) and the memory
// budget's cut are left to the plain CPU engine (narrowable() below). The discarded weight of a layer
// is summed over buckets in another order, so it agrees to rounding.

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/layer_engine.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

/// Whether a run with these options may use NarrowEngine: its per-term tests (coeff, weight) do not
/// depend on where a qubit sits in the key, no layer pass ranks keys (no topn, approx_topn,
/// collapse_sample, memory budget), and the CPU engine runs its default formulations (gather-sort-merge
/// sums equal keys in key order, which relabelling changes).
bool narrowable(const PropagateOptions& options);

namespace narrow_detail {

/// The CPU engines at every width up to W (1, 2, 4, 8, 16 words).
template <int W, Coefficient C>
struct Engines;
template <Coefficient C>
struct Engines<1, C> {
  using type = std::variant<CpuEngine<1, C>>;
};
template <Coefficient C>
struct Engines<2, C> {
  using type = std::variant<CpuEngine<1, C>, CpuEngine<2, C>>;
};
template <Coefficient C>
struct Engines<4, C> {
  using type = std::variant<CpuEngine<1, C>, CpuEngine<2, C>, CpuEngine<4, C>>;
};
template <Coefficient C>
struct Engines<8, C> {
  using type = std::variant<CpuEngine<1, C>, CpuEngine<2, C>, CpuEngine<4, C>, CpuEngine<8, C>>;
};
template <Coefficient C>
struct Engines<16, C> {
  using type =
      std::variant<CpuEngine<1, C>, CpuEngine<2, C>, CpuEngine<4, C>, CpuEngine<8, C>, CpuEngine<16, C>>;
};

template <int V>
class LabelRanker;

}  // namespace narrow_detail

template <int W, Coefficient C>
class NarrowEngine {
 public:
  NarrowEngine(const PauliSum<W, C>& sum, const CpuEngineOptions& options);

  std::size_t size() const;
  /// Applies one layer in place; returns the Σ|c|² dropped by the per-term truncation.
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Applies a block (the BlockEngine contract, engine/layer_engine.h): the layers on labelled qubits go
  /// to the CPU engine as one block, the others are skipped.
  std::size_t apply_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                          std::span<BlockLayer> out);
  /// Runs the truncation's layer passes.
  LayerPassResult finalize_layer(const Truncation& truncation);
  /// Writes the current sum into `sum` in canonical order, at width W with the start sum's hash.
  void export_to(PauliSum<W, C>& sum);

  // Inspection, for tests and benchmarks.
  /// Words of the keys the engine holds now (1, 2, 4, … ≤ W).
  int width() const;
  /// Qubits that carry a label (at most 64 · width()).
  std::size_t qubits_in_use() const { return in_use_; }
  /// Layers skipped because none of their qubits carries a label.
  std::size_t skipped_layers() const { return skipped_layers_; }

 private:
  using Engines = typename narrow_detail::Engines<W, C>::type;

  /// Labels every qubit of `mask` (x | z) that has none; widens the keys when the labels outgrow them.
  void label(const PauliString<W>& mask);
  /// Labels the support of a layer that can change a term; false when it changes none (skip it).
  bool label_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Gives back the labels of qubits outside the CPU engine's light cone.
  template <int V>
  void release_labels(const CpuEngine<V, C>& engine);
  /// Labels the qubits `sum` uses and builds the engine at the narrowest width that holds them.
  Engines first_engine(const PauliSum<W, C>& sum);
  /// Replaces the engine by one at width V over `sum` (keys already narrowed).
  template <int V>
  void start(const PauliSum<V, C>& sum);
  template <int V>
  PauliString<V> narrow(const PauliString<W>& key) const;
  template <int V>
  PauliString<W> widen(const PauliString<V>& key) const;
  template <int V>
  PreparedChannel<V> narrow(const PreparedChannel<W>& table) const;
  /// hash_ on narrowed keys of V words: column l is column qubit_of_[l] of hash_ for every label in use.
  template <int V>
  BucketHash<V> narrow_hash() const;
  /// The engine's terms as a sum of U words bucketed by `hash`, each key mapped by `map`, each bucket
  /// copied where it lies (the hash gives every mapped key its engine bucket) and sorted there: by the
  /// ranks of `ranker` (which must order keys as `map`'s images compare) when given, else by the images.
  template <int U, int V, class Map>
  PauliSum<U, C> copy_out(const CpuEngine<V, C>& engine, std::size_t num_qubits, const BucketHash<U>& hash,
                          Map&& map, const narrow_detail::LabelRanker<V>* ranker = nullptr) const;

  CpuEngineOptions options_;
  std::size_t num_qubits_;
  /// The start sum's hash. The engine's hash gives each label its qubit's column of it, so a narrowed
  /// key lies in the bucket of its full-width key: export and widening keep every term's bucket.
  BucketHash<W> hash_;
  // Declared before engine_, which first_engine() builds from them.
  static constexpr Qubit kNoQubit = ~Qubit{0};
  std::vector<std::int32_t> label_of_;  ///< per qubit: its label, or −1
  std::vector<Qubit> qubit_of_;         ///< per label: its qubit, or kNoQubit when the label is free
  std::vector<std::int32_t> free_labels_;  ///< labels given back, reused before new ones
  std::size_t in_use_ = 0;
  Engines engine_;
  /// The policy the inner engine last tested every term with (it re-tests when a new one comes).
  TestedPolicy tested_;
  std::size_t skipped_layers_ = 0;
};

static_assert(BlockEngine<NarrowEngine<2, double>, 2>);

}  // namespace paulistrings

#include "paulistrings/cpu/narrow_engine.inl"
