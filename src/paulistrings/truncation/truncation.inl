// Template bodies of Truncation (included by truncation.h).

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

template <int W, Coefficient C>
void Truncation::finalize_node(const Node& node, PauliSum<W, C>& sum, LayerPassResult& result) {
  switch (node.kind) {
    case Kind::all_of:
      finalize_node(*node.left, sum, result);
      finalize_node(*node.right, sum, result);
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
  if (sum.size() <= limit) return;
  std::vector<double> magnitudes(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) magnitudes[i] = magnitude_squared(sum.coefficients()[i]);
  std::span<C> coefficients = sum.mutable_coefficients();

  if (node.kind == Kind::collapse_sample) {
    const std::size_t pick = collapse_pick(magnitudes, node.seed, node.state->passes - 1);
    double total = 0.0;
    for (double m : magnitudes) total += m;
    result.discarded_weight += total - magnitudes[pick];
    result.collapsed = true;
    const typename PauliSum<W, C>::Key key = sum.keys()[pick];
    sum.assign_terms({{key, C(1.0)}}, sum.bucket_bits());
    return;
  }

  std::vector<char> keep(sum.size(), 0);
  if (node.kind == Kind::topn) {
    select_topn(magnitudes, limit, keep);
  } else {
    const int lowest = approx_topn_lowest_bin(magnitudes, limit);
    for (std::size_t i = 0; i < magnitudes.size(); ++i) keep[i] = exponent_bin(magnitudes[i]) >= lowest;
  }
  for (std::size_t i = 0; i < magnitudes.size(); ++i) {
    if (!keep[i]) {
      result.discarded_weight += magnitudes[i];
      coefficients[i] = C(0.0);
    }
  }
  sum.drop_zeros();
}

template <int W, Coefficient C>
LayerPassResult Truncation::finalize_layer(PauliSum<W, C>& sum) const {
  LayerPassResult result;
  finalize_node(*node_, sum, result);
  return result;
}

}  // namespace paulistrings
