// Truncation factories, combinators and the width-independent selection kernels.

#include "paulistrings/truncation/truncation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace paulistrings {

Truncation::Truncation() : node_(std::make_shared<const Node>()) {}

Truncation Truncation::coeff(double epsilon) {
  if (std::isnan(epsilon)) throw std::invalid_argument("coeff: epsilon is NaN");
  Node node;
  node.kind = Kind::coeff;
  node.epsilon = epsilon;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::weight(std::size_t max_weight) {
  Node node;
  node.kind = Kind::weight;
  node.count = max_weight;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::topn(std::size_t n) {
  Node node;
  node.kind = Kind::topn;
  node.count = n;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::approx_topn(std::size_t n) {
  Node node;
  node.kind = Kind::approx_topn;
  node.count = n;
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation Truncation::collapse_sample(std::size_t cache, std::uint64_t seed) {
  Node node;
  node.kind = Kind::collapse_sample;
  node.count = cache;
  node.seed = seed;
  node.state = std::make_shared<CollapseState>();
  return Truncation(std::make_shared<const Node>(std::move(node)));
}

Truncation operator&(const Truncation& a, const Truncation& b) {
  Truncation::Node node;
  node.kind = Truncation::Kind::all_of;
  node.left = a.node_;
  node.right = b.node_;
  return Truncation(std::make_shared<const Truncation::Node>(std::move(node)));
}

Truncation operator|(const Truncation& a, const Truncation& b) {
  Truncation::Node node;
  node.kind = Truncation::Kind::any_of;
  node.left = a.node_;
  node.right = b.node_;
  return Truncation(std::make_shared<const Truncation::Node>(std::move(node)));
}

namespace {

template <class Node, class Predicate>
bool any_node(const Node& node, Predicate&& predicate) {
  if (predicate(node)) return true;
  return (node.left && any_node(*node.left, predicate)) || (node.right && any_node(*node.right, predicate));
}

}  // namespace

bool Truncation::has_term_test() const {
  // Under `|` a term test only matters when every branch can drop; the conservative answer is fine.
  return any_node(*node_, [](const Node& n) { return n.kind == Kind::coeff || n.kind == Kind::weight; });
}

bool Truncation::has_layer_pass() const {
  // `|` disables its children's passes, so only paths made of `&` nodes count.
  auto walk = [](auto&& self, const Node& n) -> bool {
    switch (n.kind) {
      case Kind::topn:
      case Kind::approx_topn:
      case Kind::collapse_sample:
        return true;
      case Kind::all_of:
        return self(self, *n.left) || self(self, *n.right);
      default:
        return false;
    }
  };
  return walk(walk, *node_);
}

bool Truncation::contains(Kind kind) const {
  return any_node(*node_, [kind](const Node& n) { return n.kind == kind; });
}

std::string Truncation::description() const {
  auto walk = [](auto&& self, const Node& n) -> std::string {
    std::ostringstream out;
    out.precision(17);
    switch (n.kind) {
      case Kind::none:
        return "none";
      case Kind::coeff:
        out << "coeff(" << n.epsilon << ")";
        break;
      case Kind::weight:
        out << "weight(" << n.count << ")";
        break;
      case Kind::topn:
        out << "topn(" << n.count << ")";
        break;
      case Kind::approx_topn:
        out << "approx_topn(" << n.count << ")";
        break;
      case Kind::collapse_sample:
        out << "collapse_sample(" << n.count << ", " << n.seed << ")";
        break;
      case Kind::all_of:
        out << "(" << self(self, *n.left) << " & " << self(self, *n.right) << ")";
        break;
      case Kind::any_of:
        out << "(" << self(self, *n.left) << " | " << self(self, *n.right) << ")";
        break;
    }
    return out.str();
  };
  return walk(walk, *node_);
}

std::size_t select_topn(std::span<const double> magnitudes_squared, std::size_t n, std::vector<char>& keep) {
  const std::size_t m = magnitudes_squared.size();
  keep.assign(m, 0);
  if (m <= n) {
    std::fill(keep.begin(), keep.end(), 1);
    return m;
  }
  if (n == 0) return 0;
  std::vector<double> sorted(magnitudes_squared.begin(), magnitudes_squared.end());
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n - 1), sorted.end(),
                   std::greater<double>());
  const double pivot = sorted[n - 1];  // the n-th largest |c|²
  std::size_t at_least = 0;
  for (double v : magnitudes_squared) at_least += v >= pivot;
  // The tie group at the pivot is kept whole when it fits, otherwise dropped whole.
  const bool keep_ties = at_least <= n;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double v = magnitudes_squared[i];
    keep[i] = v > pivot || (keep_ties && v == pivot);
    kept += keep[i];
  }
  return kept;
}

int approx_topn_lowest_bin(std::span<const double> magnitudes_squared, std::size_t n) {
  std::array<std::size_t, 2048> histogram{};
  for (double v : magnitudes_squared) ++histogram[static_cast<std::size_t>(exponent_bin(v))];
  std::size_t running = 0;
  int lowest = 2048;  // nothing kept yet
  for (int bin = 2047; bin >= 0; --bin) {
    running += histogram[static_cast<std::size_t>(bin)];
    if (running > n) break;
    lowest = bin;
  }
  return lowest;
}

std::size_t collapse_pick(std::span<const double> magnitudes_squared, std::uint64_t seed,
                          std::uint64_t pass) {
  double total = 0.0;
  for (double v : magnitudes_squared) total += v;
  if (!(total > 0.0) || !std::isfinite(total)) {
    throw std::runtime_error("collapse_sample: the sum's total weight Σ|c|² is zero or not finite");
  }
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(pass + 0x243f6a8885a308d3ULL));
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  const double target = u * total;
  double running = 0.0;
  for (std::size_t i = 0; i < magnitudes_squared.size(); ++i) {
    running += magnitudes_squared[i];
    if (running > target) return i;
  }
  // Rounding can leave target ≥ running at the end: take the last term of nonzero weight.
  for (std::size_t i = magnitudes_squared.size(); i-- > 0;) {
    if (magnitudes_squared[i] > 0.0) return i;
  }
  return 0;
}

}  // namespace paulistrings
