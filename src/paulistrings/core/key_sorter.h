#pragma once
// KeySorter<Key, C>: sorts a run of keys by key, with their coefficients alongside, in place — the
// canonical order inside a bucket (docs/design.md §4.2). It sorts indices, gathers keys and
// coefficients into its scratch in that order and copies them back, so one sorter per thread keeps its
// scratch across runs. Both a PauliSum's buckets and the CPU engine's buckets are sorted with it.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace paulistrings {

template <class Key, class C>
class KeySorter {
 public:
  /// Sorts keys[0, n) ascending, coefficients[0, n) moved with them. Keys are distinct (the order of
  /// equal keys is unspecified). A run already in order is left untouched after one scan.
  void sort(Key* keys, C* coefficients, std::size_t n) {
    if (n < 2) return;
    bool in_order = true;
    for (std::size_t t = 1; t < n && in_order; ++t) in_order = keys[t - 1] < keys[t];
    if (in_order) return;
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::sort(order_.begin(), order_.end(),
              [keys](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    keys_.resize(n);
    coefficients_.resize(n);
    for (std::size_t t = 0; t < n; ++t) {
      keys_[t] = keys[order_[t]];
      coefficients_[t] = coefficients[order_[t]];
    }
    std::copy(keys_.begin(), keys_.end(), keys);
    std::copy(coefficients_.begin(), coefficients_.end(), coefficients);
  }

 private:
  std::vector<std::size_t> order_;
  std::vector<Key> keys_;
  std::vector<C> coefficients_;
};

}  // namespace paulistrings
