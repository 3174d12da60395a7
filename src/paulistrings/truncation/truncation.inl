// Template bodies of Truncation (included by truncation.h).

#include <algorithm>
#include <numeric>
#include <vector>

namespace paulistrings {

template <int W>
bool Truncation::keep_node(const Node& node, const PauliString<W>& key, double magnitude_squared) {
  switch (node.kind) {
    case Kind::coeff:
      return node.epsilon < 0.0 || magnitude_squared > node.epsilon * node.epsilon;
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
  std::vector<char> keep(magnitudes.size(), 0);
  if (node.kind == Kind::topn) {
    select_topn(magnitudes, limit, keep);
  } else {
    const int lowest = approx_topn_lowest_bin(magnitudes, limit);
    for (std::size_t i = 0; i < magnitudes.size(); ++i) keep[i] = exponent_bin(magnitudes[i]) >= lowest;
  }
  for (std::size_t i = 0; i < magnitudes.size(); ++i) {
    if (!keep[i]) result.discarded_weight += magnitudes[i];
  }
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
