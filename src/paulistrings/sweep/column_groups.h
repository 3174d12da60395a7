#pragma once
// Which groups of adjacent columns a sweep whose columns diverge splits into (docs/design.md §7.8).
// ColumnCounts takes, for every term, the mask of the value columns that keep it on their own (bit k:
// column k's own per-term test passes on its own coefficient) and answers how many terms each range of
// adjacent columns keeps; choose_column_groups() picks the cheapest partition of the columns into ranges,
// pricing a range as its terms × (key bytes + its columns' coefficient bytes). Counts only: the choice is
// the same for every thread count and every timing.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace paulistrings {

/// The most value columns a group may have to be counted (one bit a column in a 64-bit mask).
inline constexpr std::size_t kMaxCountedColumns = 64;

/// A split must bring the cost under this share of the unsplit cost (docs/design.md §7.8 says why).
inline constexpr double kSplitCostShare = 0.75;

class ColumnCounts {
 public:
  /// `columns`: 1 to kMaxCountedColumns (std::invalid_argument otherwise).
  explicit ColumnCounts(std::size_t columns);

  std::size_t columns() const { return columns_; }
  std::uint64_t terms() const { return terms_; }
  /// One term, kept on their own by the columns whose bits `mask` sets (bits past columns() ignored; 0:
  /// by none).
  void add(std::uint64_t mask);
  /// Another count's terms (the same columns).
  void merge(const ColumnCounts& other);
  /// kept[first · (columns + 1) + last]: the terms kept by some column of [first, last) (first < last).
  std::vector<std::uint64_t> kept_table() const;

 private:
  std::size_t columns_;
  std::uint64_t terms_ = 0;
  /// runs_[s · (columns + 1) + e]: terms whose mask is clear on [s, e) and set (or the edge) at s − 1 and e.
  /// A term is missing from a range exactly when the range lies inside one of its clear runs.
  std::vector<std::uint64_t> runs_;
};

struct ColumnPartition {
  std::vector<std::size_t> starts;  ///< each group's first column, ascending, starting with 0
  /// Σ over groups of kept terms × (key + the group's coefficient bytes) + each group's fixed cost.
  double cost = 0.0;
  /// Every term × (key + every column's coefficient bytes) + one group's fixed cost.
  double whole_cost = 0.0;
  bool split = false;               ///< more than one group, and cost < kSplitCostShare · whole_cost
};

/// The cheapest partition of the counted columns into ranges of adjacent columns: a range [a, b) costs
/// kept(a, b) × (key_bytes + (b − a) × column_bytes) + group_bytes, column_bytes being one value column's
/// coefficient bytes with its derivative columns', group_bytes what a group costs whatever it holds. Of
/// equal costs the one whose last range starts first wins (one group when it ties). The whole costs
/// counts.terms() × (key_bytes + columns × column_bytes) + group_bytes.
ColumnPartition choose_column_groups(const ColumnCounts& counts, double key_bytes, double column_bytes,
                                     double group_bytes = 0.0);

}  // namespace paulistrings
