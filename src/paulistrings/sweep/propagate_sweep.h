#pragma once
// Parameter sweeps in one propagation (docs/design.md §7.8): K circuits of one gate structure — the
// circuit under K assignments of its parameters (angles, noise strengths) — propagate one observable
// together. Every term holds K coefficients, one per column, so the key work (products, hashing,
// merging) is done once for all columns.
//
// Semantics (what the tests check): without truncation every column equals its own run to rounding.
// The per-term truncation keeps a term while ANY column keeps it (each test is monotone in |c|, so this is
// the test of the column of largest |c|): a column never loses a term that its own run would keep at
// that gate, and may carry extra terms that its own run would have dropped (smaller than the cut-off).
// topn / approx_topn rank the terms by their largest |c|² over the columns. collapse_sample has no sweep
// meaning and is refused.
//
// The circuits' layers are paired index by index; in each layer every column's channel must have the
// same form and place (a Pauli rotation about the same generator, or a local table on the same qubits):
// std::invalid_argument names the first layer that differs.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/sweep/sweep_sum.h"

namespace paulistrings {

/// A sweep's result at the runtime width: a SweepSum<W, C> for the smallest W that fits the qubits.
class AnySweepSum {
 public:
  using Variant =
      std::variant<SweepSum<1, double>, SweepSum<2, double>, SweepSum<4, double>, SweepSum<8, double>,
                   SweepSum<16, double>, SweepSum<1, Complex>, SweepSum<2, Complex>, SweepSum<4, Complex>,
                   SweepSum<8, Complex>, SweepSum<16, Complex>>;

  AnySweepSum() = default;
  template <int W, Coefficient C>
  explicit AnySweepSum(SweepSum<W, C> sum) : sum_(std::move(sum)) {}

  std::size_t num_qubits() const;
  std::size_t size() const;     ///< terms (keys) with some nonzero column
  std::size_t columns() const;  ///< every column: K values, then K per gradient parameter
  bool is_complex() const { return sum_.index() >= 5; }
  /// ⟨state|O_k|state⟩ for every column k.
  std::vector<Complex> expectations(const ProductState& state) const;
  /// Σ|c|² of every column.
  std::vector<double> norms_squared() const;
  /// Column k as a sum of its own (the terms whose column-k coefficient is nonzero).
  AnyPauliSum column(std::size_t k) const;

  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), sum_);
  }
  /// The sum at width W and coefficient type C, or null when it has another.
  template <int W, Coefficient C>
  const SweepSum<W, C>* get_if() const {
    return std::get_if<SweepSum<W, C>>(&sum_);
  }
  template <int W, Coefficient C>
  SweepSum<W, C>* get_if() {
    return std::get_if<SweepSum<W, C>>(&sum_);
  }

 private:
  Variant sum_;
};

/// One layer's derivative with respect to one parameter under one column's values, as the difference of
/// two channels of that layer's structure: ∂A/∂θ = scale · (A(plus) − A(minus)). Exact for an angle of a
/// Pauli rotation (plus, minus at θ ± π/2, scale = dθ/dparameter / 2: the transfer amplitudes are 1, cos θ
/// and sin θ) and for a strength on which the transfer depends affinely (depolarizing, dephasing, Pauli
/// channels: plus, minus at two strengths s₁, s₂, scale = dθ/dparameter / (s₁ − s₂)). sweep_derivative()
/// builds it.
struct LayerDerivative {
  std::size_t layer;  ///< the layer's index in the circuit as written
  Channel plus, minus;
  double scale;
};

/// ∂/∂(one parameter) of every column: derivatives[k] lists the layers of column k's circuit that depend
/// on the parameter (any order, each layer at most once).
struct SweepGradient {
  std::string name;
  std::vector<std::vector<LayerDerivative>> derivatives;
};

/// The LayerDerivative of a layer built by `make(value)` at parameter value `value`, for a parameter that
/// is an angle (`angle` true: make(value ± π/2)) or a strength on which the transfer depends affinely
/// (make at two strengths inside its valid range: value and the first of value ∓ 0.25, 1/32, 1/256 that make
/// accepts).
/// `chain` is d(value)/d(parameter) (1 when the layer's argument is the parameter itself).
LayerDerivative sweep_derivative(std::size_t layer, const std::function<Channel(double)>& make, double value,
                                 bool angle, double chain = 1.0);

/// What a sweep did. stats: one LayerRecord per layer, terms counting keys (shared by the columns), a
/// record's discarded_weight the largest value column's; discarded_weight: Σ|c|² each column lost (value
/// columns, then derivative columns).
struct SweepStats {
  PropagationStats stats;
  std::vector<double> discarded_weight;
  /// Groups of columns at the end (1: never split) and splits made (options.sweep_split, docs/design.md
  /// §7.8). While split, a record's terms count every group's (a key held by two groups counts twice).
  std::size_t groups = 1;
  std::size_t splits = 0;
  /// Of the groups at the end, the columns run apart (SweepTuning::apart_terms).
  std::size_t apart_columns = 0;
};

/// Whether a sweep of `observable` through `columns` (with `gradients`) carries complex coefficients: the
/// observable's are, or some channel of a column or of a gradient has complex transfer amplitudes. The
/// engine's coefficient type, and so what a term costs the memory budget (run/memory_budget.h).
bool sweep_is_complex(const AnyPauliSum& observable, std::span<const Circuit> columns,
                      std::span<const SweepGradient> gradients = {});

/// One group of a split sweep: value columns [first, first + count) and the same columns of every
/// derivative block, as the group's engine left them (fields as SweepState's).
struct SweepGroupState {
  std::size_t first = 0;
  std::size_t count = 0;
  AnySweepSum sum;  ///< count × (1 + gradients) columns, the rows in the engine's order
  int bucket_bits = 0;
  std::vector<std::uint64_t> light_cone;
  std::size_t next_count = 0;
  /// One column run apart on the host engine (SweepTuning::apart_terms): its rows in that engine's
  /// canonical order, over which the engine is rebuilt (bucket_bits and light_cone unused).
  bool apart = false;
};

/// A sweep at a layer boundary: what propagate_sweep and resume_sweep hand back — after every layer, or
/// where options.should_stop stopped them — and what resume_sweep continues from. Checkpoints save it
/// (run/sweep_checkpoints.h). With the same observable, circuits, gradients and options, resuming a state
/// gives the bits of the uninterrupted run: the rows keep the engine's order and the engine gets back its
/// bucket count and light cone (and, split, every group's).
struct SweepState {
  /// Every column. One group: the rows in the engine's order. Several: their union (groups in order, each
  /// one's rows in its order, zero where a group lacks the key), for reading; `groups` is what resumes.
  AnySweepSum sum;
  std::size_t layers_done = 0;  ///< application steps applied
  int bucket_bits = 0;          ///< SweepEngine's 2^bucket_bits buckets (0 from the reference engine)
  /// The engine's light cone, num_qubits rounded up to 64-bit words (bit q % 64 of word q / 64); empty: the
  /// qubits the terms act on.
  std::vector<std::uint64_t> light_cone;
  /// One group: the terms at which its columns are counted again for a split (0: at
  /// options.sweep_split_min_terms; docs/design.md §7.8).
  std::size_t next_count = 0;
  /// Empty: one group (sum, bucket_bits, light_cone, next_count above). Otherwise the sweep has split:
  /// every group in column order, each as its engine left it (checkpoint files hold one group only).
  std::vector<SweepGroupState> groups;
};

/// What a sweep does beyond PropagateOptions (docs/design.md §7.8, "Columns apart").
struct SweepTuning {
  /// A sweep without gradients on the cpu engine, with options.sweep_split on: a group of columns counted
  /// at this many terms or more (and a one-column group of a sweep already split) whose columns cost
  /// clearly less apart runs each of its columns apart from then on, on the engine propagate() runs one
  /// column on (0: never, the default: faster on some sweeps and slower on others, docs/design.md §7.8
  /// "Columns apart").
  std::size_t apart_terms = 0;
  /// Columns go apart when the terms they keep on their own cost less than this share of the group's rows
  /// priced as the sweep engine's (sweep/grouped_sweep_engine.h, apart_pays); larger goes apart sooner.
  double apart_cost_share = 0.75;
};

/// Propagates `observable` through `columns` (K ≥ 1 circuits of one structure, each on the observable's
/// qubits) under `options`: direction, truncation (no collapse_sample), threads, should_stop, on_layer,
/// keep_layer_records, max_terms / auto_truncate (cuts rank by the largest |c| over the columns),
/// memory_guard, sweep_split / sweep_split_min_terms, and `tuning` (docs/design.md §7.8: a split
/// drops, from each group, only terms that no column of the group keeps on its own; a column run apart
/// goes on as its own run from the rows it keeps). The CPU runs sweeps: options.device ≥ 0 and
/// options.start_layer > 0 are refused (std::invalid_argument; resume_sweep continues from a layer).
/// Coefficients are complex when the observable is or some channel has complex transfer amplitudes. Throws
/// what run_layers throws (HostMemoryExceeded, MemoryBudgetExceeded).
///
/// Gradients: for every SweepGradient g, K derivative columns follow the K value columns (column
/// K·(1 + g) + k is ∂O_k/∂(g.name)): each propagates as D' = A·D + A'·C (the product rule over every layer
/// that uses the parameter; A' from the LayerDerivative, C the value column). Truncation decides on the
/// value columns alone — a term goes when its largest value fails the per-term test (or every column is
/// zero), and topn ranks by values — so asking for a gradient changes no value (unless the columns split:
/// the groups' cost counts derivative columns, docs/design.md §7.8), and a derivative column is
/// the exact derivative of its value column's run with the kept terms held fixed; without truncation it
/// is the exact derivative.
SweepStats propagate_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                           const PropagateOptions& options, AnySweepSum& result,
                           std::span<const SweepGradient> gradients = {}, const SweepTuning& tuning = {});
/// The same, handing back the state reached (stats.stats.stopped: where should_stop stopped it). When the
/// memory guard stops the sweep before a layer (HostMemoryExceeded, details().state_kept), `state` holds
/// the state before that layer if there was room to copy it out (state.layers_done ==
/// details().layers_done; otherwise `state` is empty).
SweepStats propagate_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                           const PropagateOptions& options, SweepState& state,
                           std::span<const SweepGradient> gradients = {}, const SweepTuning& tuning = {});
/// Continues the sweep of `observable` from `state` (taken after state.layers_done steps, by
/// propagate_sweep or resume_sweep, or read from a checkpoint) and leaves the state reached in it; the
/// statistics count the layers run here (a memory-guard stop hands back the state as propagate_sweep
/// does). Throws std::invalid_argument when the state cannot be this
/// sweep's: another qubit count, column count (K values × (1 + gradients)) or coefficient type, more
/// layers done than the circuits have, a light cone of the wrong size. That the state comes from the same
/// circuits, gradients, direction and truncation is the caller's to know (checkpoints: fingerprints).
SweepStats resume_sweep(const AnyPauliSum& observable, std::span<const Circuit> columns,
                        const PropagateOptions& options, SweepState& state,
                        std::span<const SweepGradient> gradients = {}, const SweepTuning& tuning = {});

}  // namespace paulistrings
