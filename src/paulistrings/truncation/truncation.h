#pragma once
// Truncation: the policies that keep a propagated sum tractable (docs/design.md §2.8, §6).
// Per-term tests run inside a layer on each output's summed coefficient: coeff(ε) keeps
// |c|² > ε² (ε < 0 keeps all), weight(k) keeps popcount(x|z) ≤ k. Layer passes run after the
// layer: topn(n) (exact; a tie group at the cut is kept whole if it fits, else dropped whole),
// approx_topn(n) (octaves of |c|² from the top while they fit), collapse_sample(cache, seed)
// (Monte-Carlo collapse to one string). `a & b` keeps iff both keep and runs a's pass then b's;
// `a | b` keeps iff either keeps and runs neither pass (the seed's semantics).
// Copies share collapse_sample's pass counter, so reusing a policy continues its trajectory.
// The topn / approx_topn cuts run on OpenMP threads when the layer target reports threads(); their
// results, discarded weight included, are the same bits for every thread count.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

struct LayerPassResult {
  double discarded_weight = 0.0;  ///< Σ|c|² removed by the pass
  bool collapsed = false;         ///< collapse_sample replaced the sum
};

class Truncation {
 public:
  enum class Kind : std::uint8_t { none, coeff, weight, topn, approx_topn, collapse_sample, all_of, any_of };

  /// No truncation (only exact zeros are dropped).
  Truncation();
  static Truncation coeff(double epsilon);
  static Truncation weight(std::size_t max_weight);
  static Truncation topn(std::size_t n);
  static Truncation approx_topn(std::size_t n);
  static Truncation collapse_sample(std::size_t cache, std::uint64_t seed);
  friend Truncation operator&(const Truncation& a, const Truncation& b);
  friend Truncation operator|(const Truncation& a, const Truncation& b);

  Kind kind() const { return node_->kind; }
  bool is_none() const { return node_->kind == Kind::none; }
  /// True when some per-term test can drop a term.
  bool has_term_test() const;
  /// Identifies this policy object (copies share it): an engine that has tested every term against
  /// one policy need not test unchanged terms against the same policy again.
  const void* identity() const { return node_.get(); }
  /// True when finalize_layer does anything.
  bool has_layer_pass() const;
  bool contains(Kind kind) const;
  std::string description() const;

  /// One step of the per-term test in postfix order, for engines that evaluate it elsewhere (the GPU):
  /// keep_all pushes true (none and the layer-only policies), coeff pushes |c|² > ε² (ε < 0: true),
  /// weight pushes weight ≤ max_weight, all_of / any_of pop two and push their and / or.
  struct TermTestStep {
    enum class Op : std::uint8_t { keep_all, coeff, weight, all_of, any_of };
    Op op = Op::keep_all;
    double epsilon = 0.0;
    std::size_t max_weight = 0;
  };
  std::vector<TermTestStep> term_test_program() const;
  /// The layer passes finalize_layer runs, in its order: topn / approx_topn with their n (`|` runs
  /// none; collapse_sample is listed too, with its cache size).
  struct LayerPassStep {
    Kind kind = Kind::topn;
    std::size_t count = 0;
  };
  std::vector<LayerPassStep> layer_pass_steps() const;

  /// The per-term test on a summed coefficient.
  template <int W, Coefficient C>
  bool keep(const PauliString<W>& key, const C& coefficient) const {
    // The common policy, a cut-off alone, tested here without the call into the walk.
    if (node_->kind == Kind::coeff) return passes_coeff(*node_, magnitude_squared(coefficient));
    return keep_node(*node_, key, magnitude_squared(coefficient));
  }
  /// The layer passes, in place.
  template <int W, Coefficient C>
  LayerPassResult finalize_layer(PauliSum<W, C>& sum) const;
  /// The layer passes on any storage. Target provides: size(); magnitudes_squared(bool key_order)
  /// → std::vector<double> (ascending key order when asked, else any fixed order); retain(span<const
  /// char>) keeping the terms flagged in the order of the last magnitudes; collapse_to(index)
  /// replacing the sum by that term (same order) with coefficient 1; optionally threads() → int, the
  /// OpenMP threads the topn / approx_topn cuts may use (1 when absent).
  template <class Target>
  LayerPassResult finalize_layer_on(Target& target) const;

 private:
  struct CollapseState {
    std::uint64_t passes = 0;
  };
  struct Node {
    Kind kind = Kind::none;
    double epsilon = 0.0;
    std::size_t count = 0;  ///< max_weight, n or cache
    std::uint64_t seed = 0;
    std::shared_ptr<CollapseState> state;
    std::shared_ptr<const Node> left, right;
  };
  explicit Truncation(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

  static bool passes_coeff(const Node& node, double magnitude_squared) {
    return node.epsilon < 0.0 || magnitude_squared > node.epsilon * node.epsilon;
  }
  template <int W>
  static bool keep_node(const Node& node, const PauliString<W>& key, double magnitude_squared);
  template <class Target>
  static void finalize_node(const Node& node, Target& target, LayerPassResult& result);

  std::shared_ptr<const Node> node_;
};

/// The per-term policy every current term of an engine is known to pass. A layer that leaves a term
/// unchanged need not test it again against that policy (the reference engine re-tests every term;
/// the test depends on the key and the coefficient only); merged or loaded coefficients were never
/// tested (forget).
class TestedPolicy {
 public:
  /// True when terms a layer leaves unchanged must be tested against `truncation`.
  bool must_retest(const Truncation& truncation) const {
    return truncation.has_term_test() && !(valid_ && held_.identity() == truncation.identity());
  }
  void remember(const Truncation& truncation) {
    held_ = truncation;  // held, so its identity stays unique
    valid_ = true;
  }
  void forget() { valid_ = false; }

 private:
  Truncation held_;
  bool valid_ = false;
};

/// What a layer cut did: terms kept, and Σ|c|² of the terms dropped. The sum runs over fixed chunks of
/// kDiscardedSumChunk terms (each summed alone, then the chunk sums in chunk order), so its bits depend
/// on the magnitudes and their order but not on the thread count.
struct LayerCut {
  std::size_t kept = 0;
  double discarded_weight = 0.0;
};
inline constexpr std::size_t kDiscardedSumChunk = std::size_t{1} << 16;

/// The magnitude cut of topn(n): returns the number of terms kept (tie rule applied) and marks
/// them in `keep` (resized to the input); magnitudes are |c|². An exact radix select on the bit
/// patterns (nth_element below 2^14 terms), on `threads` OpenMP threads from 2^15 terms; the flags do
/// not depend on `threads`. NaN magnitudes are never kept when there are more than n terms, and n then
/// counts only the others.
std::size_t select_topn(std::span<const double> magnitudes_squared, std::size_t n, std::vector<char>& keep,
                        int threads = 1);
/// topn(n)'s cut into keep (one flag per magnitude; std::invalid_argument when the sizes differ), with
/// the discarded weight.
LayerCut topn_cut(std::span<const double> magnitudes_squared, std::size_t n, std::span<char> keep,
                  int threads = 1);
/// The octave cut of approx_topn(n): the lowest exponent bin kept (2048 = keep nothing).
int approx_topn_lowest_bin(std::span<const double> magnitudes_squared, std::size_t n, int threads = 1);
/// approx_topn(n)'s cut into keep (as topn_cut), with the discarded weight.
LayerCut approx_topn_cut(std::span<const double> magnitudes_squared, std::size_t n, std::span<char> keep,
                         int threads = 1);
/// Exponent bin of |c|² (its 11 biased exponent bits).
inline int exponent_bin(double magnitude_squared) {
  return static_cast<int>((std::bit_cast<std::uint64_t>(magnitude_squared) >> 52) & 0x7ff);
}
/// Index picked by collapse_sample for pass `pass` (terms in ascending key order, so the trajectory
/// does not depend on bucket layout, engine or threads): the first term whose running |c|² exceeds
/// u·Σ|c|², with u = uniform(seed, pass). Throws std::runtime_error when Σ|c|² is 0 or not finite.
std::size_t collapse_pick(std::span<const double> magnitudes_squared, std::uint64_t seed, std::uint64_t pass);

}  // namespace paulistrings

#include "paulistrings/truncation/truncation.inl"
