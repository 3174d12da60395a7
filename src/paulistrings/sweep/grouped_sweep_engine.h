#pragma once
// GroupedSweepEngine: a sweep whose value columns may split into groups of adjacent columns, each group a
// sweep engine of its own (docs/design.md §7.8, sweep/column_groups.h). run_sweep() drives it as one
// engine: every layer goes to every group (its tables, its derivative columns' sources, its dropped
// weights mapped back to the sweep's columns). At the start of a layer — a boundary where every term has
// passed the per-term test — a group of at least `min_terms` terms that has doubled since it was last
// counted is counted: each term's mask of the group's value columns that keep it on their own (the
// column's own test on its own coefficient; a column whose value and derivatives are all zero does not
// hold the term). When choose_column_groups() finds a partition clearly cheaper, the group's rows split:
// each new group holds the rows some column of it keeps, with its value and derivative columns, in the
// engine's order (so bucket layouts and sums stay fixed for a given run). The counts and the choice depend
// on the rows alone, so a run is the same bits for every thread count.
// One group spanning every column passes the layer through untouched: a sweep that never splits is the
// bits of the engine alone.
// Columns apart: without derivative columns, a group counted at `apart_terms` terms or more (and a
// one-column group of a sweep already split) whose columns keep few enough terms on their own to cost
// clearly less apart (apart_pays) gives each of its columns the rows that column keeps on its own, on a
// HostEngine (cpu/host_engine.h: the engine propagate() runs one column on) from then on. Past the caches
// that engine costs less per term than the sweep engine (docs/design.md §7.8).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "paulistrings/cpu/host_engine.h"
#include "paulistrings/sweep/column_groups.h"
#include "paulistrings/sweep/sweep_sum.h"
#include "paulistrings/sweep/sweep_table.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

namespace sweep_detail {

/// The value columns (of `values`, row laid out as values × (1 + gradients)) that keep `key` on their own:
/// bit k when column k's test passes on its own coefficient and column k (value or a derivative) is not
/// zero there.
template <int W, Coefficient C>
std::uint64_t keep_mask(const Truncation& truncation, const PauliString<W>& key, std::span<const C> row,
                        std::size_t values) {
  const std::size_t blocks = row.size() / values;
  std::uint64_t mask = 0;
  for (std::size_t k = 0; k < values; ++k) {
    bool held = row[k] != C(0.0);
    for (std::size_t b = 1; b < blocks && !held; ++b) held = row[b * values + k] != C(0.0);
    if (held && truncation.keep(key, row[k])) mask |= std::uint64_t{1} << k;
  }
  return mask;
}

/// The rows of `engine` (values × blocks columns, in for_each_row's order, masks[i] row i's) whose mask
/// meets [first, first + count), with the value and derivative columns of that range.
template <int W, Coefficient C, class Engine>
SweepSum<W, C> select_group(const Engine& engine, std::size_t num_qubits, std::size_t values,
                            std::size_t blocks, std::span<const std::uint64_t> masks, std::size_t first,
                            std::size_t count) {
  const std::uint64_t range = (count == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1) << first;
  std::vector<PauliString<W>> keys;
  std::vector<C> coefficients;
  std::size_t i = 0;
  engine.for_each_row([&](const PauliString<W>& key, std::span<const C> row) {
    if ((masks[i++] & range) == 0) return;
    keys.push_back(key);
    for (std::size_t b = 0; b < blocks; ++b) {
      const auto from = row.begin() + static_cast<std::ptrdiff_t>(b * values + first);
      coefficients.insert(coefficients.end(), from, from + static_cast<std::ptrdiff_t>(count));
    }
  });
  return SweepSum<W, C>(num_qubits, count * blocks, std::move(keys), std::move(coefficients));
}

/// For each value column k of `engine` (`values` columns, no derivative columns), the rows column k keeps
/// on its own — a nonzero coefficient that passes the per-term test — as a sum of its own, in
/// for_each_row's order.
template <int W, Coefficient C, class Engine>
std::vector<PauliSum<W, C>> select_columns(const Engine& engine, std::size_t num_qubits, std::size_t values,
                                           const Truncation& truncation) {
  std::vector<std::vector<typename PauliSum<W, C>::Term>> terms(values);
  engine.for_each_row([&](const PauliString<W>& key, std::span<const C> row) {
    for (std::size_t k = 0; k < values; ++k) {
      if (row[k] != C(0.0) && truncation.keep(key, row[k])) terms[k].push_back({key, row[k]});
    }
  });
  std::vector<PauliSum<W, C>> sums;
  sums.reserve(values);
  for (auto& column : terms) {
    sums.push_back(PauliSum<W, C>::from_terms(num_qubits, std::move(column)));
    column = {};
  }
  return sums;
}

}  // namespace sweep_detail

/// Past the caches, a row of the sweep engine holding K columns costs about kSweepRowCost +
/// kSweepColumnCost · K terms of the host engine's own run (K identical columns, measured: docs/design.md
/// §7.8, "Columns apart"); columns go apart when that saves enough (Settings::apart_cost_share: by default
/// more than a quarter, as the rows are copied and every column then holds its own copy of the keys it
/// shares).
inline constexpr double kSweepRowCost = 1.35;
inline constexpr double kSweepColumnCost = 0.145;

template <int W, Coefficient C, class Engine>
class GroupedSweepEngine {
 public:
  struct Group {
    std::size_t first = 0;  ///< the group's first value column
    std::size_t count = 0;  ///< its value columns (its derivative columns: the same ones of every block)
    std::unique_ptr<Engine> engine;  ///< the group's sweep engine, or null when it runs apart
    /// A one-column group run apart (no derivative columns): its column on the host engine.
    std::unique_ptr<HostEngine<W, C>> apart;
    std::size_t next_count = 0;  ///< count the group again once it holds this many terms

    std::size_t size() const { return apart ? apart->size() : engine->size(); }
  };
  /// make(rows, values, parent): the engine of a new group holding `rows` (`values` value columns), split
  /// from `parent` at a layer boundary.
  using Make = std::function<std::unique_ptr<Engine>(const SweepSum<W, C>&, std::size_t, const Engine&)>;
  /// make_apart(column): the host engine of a column run apart, over the rows it keeps.
  using MakeApart = std::function<std::unique_ptr<HostEngine<W, C>>(const PauliSum<W, C>&)>;
  struct Settings {
    bool split = true;          ///< false: the groups never split
    std::size_t min_terms = 0;  ///< a group is counted from this many terms on
    bool tested = false;        ///< every term has passed the per-term test (a state after a layer)
    /// A group counted at this many terms or more runs its columns apart (0: never; needs make_apart and
    /// no derivative columns).
    std::size_t apart_terms = 0;
    double apart_cost_share = 0.75;  ///< apart_pays' share
    /// What a group costs whatever it holds, in keys — its tables, its parallel region and its buckets at
    /// every layer — which choose_column_groups weighs (group_bytes = group_terms key bytes). The sweep
    /// takes min_terms (PropagateOptions::sweep_split_min_terms), the size below which a layer costs
    /// little.
    std::size_t group_terms = 0;
  };

  /// `groups`: contiguous, covering the K value columns in order.
  GroupedSweepEngine(std::size_t num_qubits, std::size_t values, std::size_t blocks,
                     std::vector<Group> groups, Make make, Settings settings, MakeApart make_apart = {})
      : num_qubits_(num_qubits),
        values_(values),
        blocks_(blocks),
        groups_(std::move(groups)),
        make_(std::move(make)),
        make_apart_(std::move(make_apart)),
        settings_(settings) {
    if (!make_apart_ || blocks_ != 1) settings_.apart_terms = 0;
  }

  std::size_t size() const {
    std::size_t n = 0;
    for (const Group& g : groups_) n += g.size();
    return n;
  }
  const std::vector<Group>& groups() const { return groups_; }
  std::size_t splits() const { return splits_; }
  /// Columns run apart.
  std::size_t apart_columns() const {
    return static_cast<std::size_t>(
        std::count_if(groups_.begin(), groups_.end(), [](const Group& g) { return g.apart != nullptr; }));
  }

  void apply_layer(const SweepLayer<W>& layer, const Truncation& truncation, std::span<double> dropped) {
    if (settings_.tested && settings_.split && truncation.has_term_test()) split_groups(truncation);
    settings_.tested = true;
    if (whole()) {
      groups_[0].engine->apply_layer(layer, truncation, dropped);
      return;
    }
    for (Group& g : groups_) {
      if (g.apart) {
        dropped[g.first] += g.apart->apply_layer(layer.tables[g.first], truncation);
        continue;
      }
      std::vector<typename SweepLayer<W>::Source> sources;
      if (!layer.sources.empty()) {
        sources.resize(g.count * blocks_);
        for (std::size_t j = 0; j < sources.size(); ++j) {
          sources[j] = layer.sources[global_column(g, j)];
          if (sources[j].from != kNoSource) sources[j].from -= g.first;
        }
      }
      SweepLayer<W> part;
      part.tables = layer.tables.subspan(g.first, g.count);
      part.columns = g.count * blocks_;
      part.sources = std::span<const typename SweepLayer<W>::Source>(sources);
      std::vector<double> part_dropped(part.columns, 0.0);
      g.engine->apply_layer(part, truncation, std::span<double>(part_dropped));
      add_dropped(g, part_dropped, dropped);
    }
  }

  /// The truncation's layer passes, in each group (topn keeps n terms a group, as a sweep of the group's
  /// columns would).
  LayerPassResult finalize_layer(const Truncation& truncation, std::span<double> dropped) {
    if (whole()) return groups_[0].engine->finalize_layer(truncation, dropped);
    LayerPassResult total;
    for (Group& g : groups_) {
      if (g.apart) {
        const double cut = g.apart->finalize_layer(truncation).discarded_weight;
        total.discarded_weight += cut;
        dropped[g.first] += cut;
        continue;
      }
      std::vector<double> part_dropped(g.count * blocks_, 0.0);
      const LayerPassResult r = g.engine->finalize_layer(truncation, std::span<double>(part_dropped));
      total.discarded_weight += r.discarded_weight;
      add_dropped(g, part_dropped, dropped);
    }
    return total;
  }

  /// The memory budget's cut to `limit` terms in all: each group keeps its share, limit × its terms / all
  /// terms (at least one).
  void budget_cut(std::size_t limit, std::span<double> dropped) {
    if (whole()) {
      groups_[0].engine->finalize_layer(Truncation::approx_topn(limit), dropped);
      return;
    }
    const std::size_t all = size();
    for (Group& g : groups_) {
      const auto share =
          static_cast<std::size_t>(static_cast<long double>(limit) * static_cast<long double>(g.size()) /
                                   static_cast<long double>(std::max<std::size_t>(all, 1)));
      const Truncation cut = Truncation::approx_topn(std::max<std::size_t>(share, 1));
      if (g.apart) {
        dropped[g.first] += g.apart->finalize_layer(cut).discarded_weight;
        continue;
      }
      std::vector<double> part_dropped(g.count * blocks_, 0.0);
      g.engine->finalize_layer(cut, std::span<double>(part_dropped));
      add_dropped(g, part_dropped, dropped);
    }
  }

  /// Group g's rows as its engine has them; the engine is let go (a run hands its groups back one at a
  /// time, so that the end of a run holds one engine's copy at most beside the rows).
  SweepSum<W, C> release(std::size_t g) {
    if (groups_[g].apart) {
      SweepSum<W, C> rows;
      {
        PauliSum<W, C> column(num_qubits_);
        groups_[g].apart->export_to(column);
        groups_[g].apart.reset();
        rows = SweepSum<W, C>(num_qubits_, 1,
                              std::vector<PauliString<W>>(column.keys().begin(), column.keys().end()),
                              std::vector<C>(column.coefficients().begin(), column.coefficients().end()));
      }
      return rows;
    }
    SweepSum<W, C> rows = groups_[g].engine->result();
    groups_[g].engine.reset();
    return rows;
  }

  /// The sweep's columns from every group's rows (`parts[g]`: group g's, as its engine has them): the
  /// largest group's rows first (the first of equal ones), then the other groups' keys it lacks in group
  /// order, each group's rows in its order; zero where a group lacks the key. The largest group's keys
  /// are looked up in an index of the others', which is small when the split paid.
  SweepSum<W, C> merge(const std::vector<SweepSum<W, C>>& parts) const {
    const std::size_t columns = values_ * blocks_;
    std::size_t largest = 0, others = 0;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].size() > parts[largest].size()) largest = p;
    }
    for (std::size_t p = 0; p < parts.size(); ++p) others += p == largest ? 0 : parts[p].size();
    // The other groups' distinct keys in an open-addressed index (slot: position in `distinct` + 1; 0:
    // empty), at most half full.
    std::size_t slots = 16;
    while (slots < 2 * others) slots *= 2;
    std::vector<std::size_t> index(slots, 0);
    const std::hash<PauliString<W>> hash;
    std::vector<PauliString<W>> distinct;
    const auto slot_of = [&](const PauliString<W>& key) {
      std::size_t slot = hash(key) & (slots - 1);
      while (index[slot] != 0 && !(distinct[index[slot] - 1] == key)) slot = (slot + 1) & (slots - 1);
      return slot;
    };
    std::vector<std::vector<std::size_t>> position(parts.size());  // a row's place among `distinct`
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (p == largest) continue;
      for (const PauliString<W>& key : parts[p].keys()) {
        const std::size_t slot = slot_of(key);
        if (index[slot] == 0) {
          distinct.push_back(key);
          index[slot] = distinct.size();
        }
        position[p].push_back(index[slot] - 1);
      }
    }
    // Where each distinct key goes: the largest group's row, or after its rows in `distinct`'s order.
    const SweepSum<W, C>& big = parts[largest];
    std::vector<std::size_t> row_of(distinct.size(), static_cast<std::size_t>(-1));
    for (std::size_t i = 0; i < big.size() && !distinct.empty(); ++i) {
      const std::size_t slot = slot_of(big.keys()[i]);
      if (index[slot] != 0) row_of[index[slot] - 1] = i;
    }
    std::vector<PauliString<W>> keys(big.keys().begin(), big.keys().end());
    for (std::size_t d = 0; d < distinct.size(); ++d) {
      if (row_of[d] != static_cast<std::size_t>(-1)) continue;
      row_of[d] = keys.size();
      keys.push_back(distinct[d]);
    }
    std::vector<C> coefficients(keys.size() * columns, C(0.0));
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const Group& g = groups_[p];
      for (std::size_t i = 0; i < parts[p].size(); ++i) {
        const std::size_t row = p == largest ? i : row_of[position[p][i]];
        C* out = coefficients.data() + row * columns;
        const auto in = parts[p].row(i);
        for (std::size_t j = 0; j < in.size(); ++j) out[global_column(g, j)] = in[j];
      }
    }
    return SweepSum<W, C>(num_qubits_, columns, std::move(keys), std::move(coefficients));
  }

 private:
  bool whole() const { return groups_.size() == 1; }
  /// The sweep's column of a group's column j (block j / count, value column first + j % count).
  std::size_t global_column(const Group& g, std::size_t j) const {
    return (j / g.count) * values_ + g.first + j % g.count;
  }
  void add_dropped(const Group& g, const std::vector<double>& part, std::span<double> dropped) const {
    for (std::size_t j = 0; j < part.size(); ++j) dropped[global_column(g, j)] += part[j];
  }

  /// Whether group g's columns cost clearly less apart: the terms its columns keep on their own, Σ_k
  /// kept_k, against its rows priced at kSweepRowCost + kSweepColumnCost · columns terms of the host
  /// engine each (docs/design.md §7.8, "Columns apart").
  bool apart_pays(const Group& g, const Truncation& truncation) const {
    std::size_t kept = 0;
    g.engine->for_each_row([&](const PauliString<W>& key, std::span<const C> row) {
      for (std::size_t k = 0; k < g.count; ++k) kept += row[k] != C(0.0) && truncation.keep(key, row[k]);
    });
    const double rows = static_cast<double>(g.engine->size());
    return static_cast<double>(kept) < settings_.apart_cost_share * rows *
                                           (kSweepRowCost + kSweepColumnCost * static_cast<double>(g.count));
  }

  /// Each column of group g apart, over the rows it keeps on its own, appended to `next`.
  void go_apart(Group& g, std::vector<Group>& next, const Truncation& truncation) {
    ++splits_;
    std::vector<PauliSum<W, C>> columns =
        sweep_detail::select_columns<W, C>(*g.engine, num_qubits_, g.count, truncation);
    g.engine.reset();
    for (std::size_t k = 0; k < g.count; ++k) {
      Group part;
      part.first = g.first + k;
      part.count = 1;
      part.apart = make_apart_(columns[k]);
      columns[k] = PauliSum<W, C>();
      next.push_back(std::move(part));
    }
  }

  void split_groups(const Truncation& truncation) {
    std::vector<Group> next;
    const bool several = groups_.size() > 1;
    for (Group& g : groups_) {
      const std::size_t n = g.size();
      if (!g.apart && settings_.apart_terms > 0 && (g.count >= 2 || several) &&
          n >= std::max({settings_.min_terms, g.next_count, settings_.apart_terms})) {
        if (apart_pays(g, truncation)) {
          go_apart(g, next, truncation);
          continue;
        }
        // Asked again once the group has doubled (a group of 2 to 64 columns is counted below, which sets
        // that too).
        if (g.count < 2 || g.count > kMaxCountedColumns) g.next_count = 2 * n;
      }
      if (g.apart || g.count < 2 || g.count > kMaxCountedColumns ||
          n < std::max(settings_.min_terms, g.next_count)) {
        next.push_back(std::move(g));
        continue;
      }
      g.next_count = 2 * n;
      // The masks in the engine's order, read in place (most counts split nothing).
      std::vector<std::uint64_t> masks;
      masks.reserve(n);
      g.engine->for_each_row([&](const PauliString<W>& key, std::span<const C> row) {
        masks.push_back(sweep_detail::keep_mask(truncation, key, row, g.count));
      });
      ColumnCounts counts(g.count);
      for (const std::uint64_t m : masks) counts.add(m);
      const auto key_bytes = static_cast<double>(sizeof(PauliString<W>));
      const ColumnPartition partition =
          choose_column_groups(counts, key_bytes, static_cast<double>(blocks_ * sizeof(C)),
                               static_cast<double>(settings_.group_terms) * key_bytes);
      if (!partition.split) {
        next.push_back(std::move(g));
        continue;
      }
      ++splits_;
      for (std::size_t p = 0; p < partition.starts.size(); ++p) {
        const std::size_t a = partition.starts[p];
        const std::size_t b = p + 1 < partition.starts.size() ? partition.starts[p + 1] : g.count;
        Group part;
        part.first = g.first + a;
        part.count = b - a;
        {
          const SweepSum<W, C> selected =
              sweep_detail::select_group<W, C>(*g.engine, num_qubits_, g.count, blocks_, masks, a, b - a);
          part.engine = make_(selected, b - a, *g.engine);
          part.next_count = 2 * selected.size();
        }
        next.push_back(std::move(part));
      }
      g.engine.reset();  // the parent's rows are all in its parts now
    }
    groups_ = std::move(next);
  }

  std::size_t num_qubits_;
  std::size_t values_;
  std::size_t blocks_;
  std::vector<Group> groups_;
  Make make_;
  MakeApart make_apart_;
  Settings settings_;
  std::size_t splits_ = 0;
};

}  // namespace paulistrings
