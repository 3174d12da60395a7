// ColumnCounts and choose_column_groups(): see column_groups.h.

#include "paulistrings/sweep/column_groups.h"

#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

namespace paulistrings {

ColumnCounts::ColumnCounts(std::size_t columns) : columns_(columns) {
  if (columns == 0 || columns > kMaxCountedColumns) {
    throw std::invalid_argument("ColumnCounts: " + std::to_string(columns) + " columns (1 to " +
                                std::to_string(kMaxCountedColumns) + ")");
  }
  runs_.assign((columns + 1) * (columns + 1), 0);
}

void ColumnCounts::add(std::uint64_t mask) {
  ++terms_;
  const std::uint64_t all = columns_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << columns_) - 1;
  std::uint64_t clear = ~mask & all;
  while (clear != 0) {
    const auto s = static_cast<std::size_t>(std::countr_zero(clear));
    const auto e = s + static_cast<std::size_t>(std::countr_one(clear >> s));
    ++runs_[s * (columns_ + 1) + e];
    clear = e >= 64 ? 0 : clear & ~((std::uint64_t{1} << e) - 1);
  }
}

void ColumnCounts::merge(const ColumnCounts& other) {
  if (other.columns_ != columns_) throw std::invalid_argument("ColumnCounts::merge: other column counts");
  terms_ += other.terms_;
  for (std::size_t i = 0; i < runs_.size(); ++i) runs_[i] += other.runs_[i];
}

std::vector<std::uint64_t> ColumnCounts::kept_table() const {
  // missing(a, b) = Σ runs[s][e] over s ≤ a, e ≥ b: a two-dimensional prefix (in s) and suffix (in e) sum.
  const std::size_t n = columns_ + 1;
  std::vector<std::uint64_t> missing(n * n, 0);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = n; b-- > a;) {
      std::uint64_t m = runs_[a * n + b];
      if (a > 0) m += missing[(a - 1) * n + b];
      if (b + 1 < n) m += missing[a * n + b + 1];
      if (a > 0 && b + 1 < n) m -= missing[(a - 1) * n + b + 1];
      missing[a * n + b] = m;
    }
  }
  std::vector<std::uint64_t> kept(n * n, 0);
  for (std::size_t a = 0; a < columns_; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) kept[a * n + b] = terms_ - missing[a * n + b];
  }
  return kept;
}

ColumnPartition choose_column_groups(const ColumnCounts& counts, double key_bytes, double column_bytes,
                                     double group_bytes) {
  const std::size_t K = counts.columns();
  const std::size_t n = K + 1;
  const std::vector<std::uint64_t> kept = counts.kept_table();
  const auto range_cost = [&](std::size_t a, std::size_t b) {
    return static_cast<double>(kept[a * n + b]) * (key_bytes + static_cast<double>(b - a) * column_bytes) +
           group_bytes;
  };
  // best[b]: the cheapest partition of [0, b); from[b]: where its last range starts.
  std::vector<double> best(n, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> from(n, 0);
  best[0] = 0.0;
  for (std::size_t b = 1; b < n; ++b) {
    for (std::size_t a = 0; a < b; ++a) {
      const double cost = best[a] + range_cost(a, b);
      if (cost < best[b]) {
        best[b] = cost;
        from[b] = a;
      }
    }
  }
  ColumnPartition partition;
  for (std::size_t b = K; b > 0; b = from[b]) partition.starts.insert(partition.starts.begin(), from[b]);
  partition.cost = best[K];
  partition.whole_cost =
      static_cast<double>(counts.terms()) * (key_bytes + static_cast<double>(K) * column_bytes) + group_bytes;
  partition.split = partition.starts.size() > 1 && partition.cost < kSplitCostShare * partition.whole_cost;
  return partition;
}

}  // namespace paulistrings
