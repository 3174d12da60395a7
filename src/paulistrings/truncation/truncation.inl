// Template bodies of Truncation (included by truncation.h).

#include <algorithm>
#include <concepts>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

namespace paulistrings {

template <int W>
bool Truncation::keep_node(const Node& node, const PauliString<W>& key, double magnitude_squared) {
  switch (node.kind) {
    case Kind::coeff:
      return passes_coeff(node, magnitude_squared);
    case Kind::weight:
      return static_cast<std::size_t>(key.weight()) <= node.count;
    case Kind::all_of:
      return keep_node(*node.left, key, magnitude_squared) && keep_node(*node.right, key, magnitude_squared);
    case Kind::any_of:
      return keep_node(*node.left, key, magnitude_squared) || keep_node(*node.right, key, magnitude_squared);
    default:
      return true;  // none and the layer-only policies
  }
}

/// The layer-pass target of a PauliSum.
template <int W, Coefficient C>
class PauliSumPassTarget {
 public:
  explicit PauliSumPassTarget(PauliSum<W, C>& sum) : sum_(sum) {}
  std::size_t size() const { return sum_.size(); }
  std::vector<double> magnitudes_squared(bool key_order) {
    order_.resize(sum_.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    if (key_order) {
      std::sort(order_.begin(), order_.end(),
                [&](std::size_t a, std::size_t b) { return sum_.keys()[a] < sum_.keys()[b]; });
    }
    std::vector<double> magnitudes(sum_.size());
    for (std::size_t i = 0; i < sum_.size(); ++i)
      magnitudes[i] = magnitude_squared(sum_.coefficients()[order_[i]]);
    return magnitudes;
  }
  void retain(std::span<const char> keep) {
    std::span<C> coefficients = sum_.mutable_coefficients();
    for (std::size_t i = 0; i < keep.size(); ++i) {
      if (!keep[i]) coefficients[order_[i]] = C(0.0);
    }
    sum_.drop_zeros();
  }
  void collapse_to(std::size_t index) {
    const PauliString<W> key = sum_.keys()[order_[index]];
    sum_.assign_terms({{key, C(1.0)}}, sum_.bucket_bits());
  }

 private:
  PauliSum<W, C>& sum_;
  std::vector<std::size_t> order_;  // position i of the magnitudes ↔ term order_[i]
};

/// The OpenMP threads a layer target lends the topn / approx_topn cuts: its threads() when it has one.
template <class Target>
int layer_pass_threads(Target& target) {
  if constexpr (requires {
                  { target.threads() } -> std::convertible_to<int>;
                }) {
    return std::max(1, static_cast<int>(target.threads()));
  } else {
    return 1;
  }
}

template <class Target>
void Truncation::finalize_node(const Node& node, Target& target, LayerPassResult& result) {
  switch (node.kind) {
    case Kind::all_of:
      finalize_node(*node.left, target, result);
      finalize_node(*node.right, target, result);
      return;
    case Kind::topn:
    case Kind::approx_topn:
    case Kind::collapse_sample:
      break;
    default:
      return;  // per-term policies and `|` have no layer pass
  }
  if (node.kind == Kind::collapse_sample) ++node.state->passes;
  const std::size_t limit = node.count;
  if (target.size() <= limit) return;

  if (node.kind == Kind::collapse_sample) {
    // The draw walks the terms in key order, so the trajectory depends on neither the engine, the
    // thread count nor the bucket layout.
    const std::vector<double> magnitudes = target.magnitudes_squared(true);
    const std::size_t pick = collapse_pick(magnitudes, node.seed, node.state->passes - 1);
    double total = 0.0;
    for (double m : magnitudes) total += m;
    result.discarded_weight += total - magnitudes[pick];
    result.collapsed = true;
    target.collapse_to(pick);
    return;
  }

  const std::vector<double> magnitudes = target.magnitudes_squared(false);
  const int threads = layer_pass_threads(target);
  // Every flag is written by the cut, so the buffer is not zeroed first (a serial pass at 10^9 terms).
  const std::unique_ptr<char[]> flags = std::make_unique_for_overwrite<char[]>(magnitudes.size());
  const std::span<char> keep(flags.get(), magnitudes.size());
  const LayerCut cut = node.kind == Kind::topn ? topn_cut(magnitudes, limit, keep, threads)
                                               : approx_topn_cut(magnitudes, limit, keep, threads);
  result.discarded_weight += cut.discarded_weight;
  target.retain(keep);
}

template <class Target>
LayerPassResult Truncation::finalize_layer_on(Target& target) const {
  LayerPassResult result;
  finalize_node(*node_, target, result);
  return result;
}

template <int W, Coefficient C>
LayerPassResult Truncation::finalize_layer(PauliSum<W, C>& sum) const {
  PauliSumPassTarget<W, C> target(sum);
  return finalize_layer_on(target);
}

}  // namespace paulistrings
