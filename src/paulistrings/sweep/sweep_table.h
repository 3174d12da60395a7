#pragma once
// One layer of a sweep, as the driver hands it to an engine (SweepLayer) and as the fast engine reads it
// (SweepTable, sweep/sweep_engine.h).
//  - SweepLayer<W>: the K value columns' prepared tables (one structure), and for each derivative column
//    (sweep/propagate_sweep.h) its source term: scale · (plus − minus) applied to its value column, where
//    the layer depends on the column's parameter. Column j propagates under tables[j % K].
//  - SweepTable<W>: the same folded into one table — a rotation's generator with per-column cosines and
//    signed sines (and the source's differences), or a local table whose outputs per input pattern are
//    the union of every column's outputs, each with per-column amplitudes (zero where a column has no
//    such output) and source amplitudes.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"

namespace paulistrings {

inline constexpr std::size_t kNoSource = static_cast<std::size_t>(-1);

template <int W>
struct SweepLayer {
  struct Source {
    std::size_t from = kNoSource;  ///< the value column the term reads; kNoSource: none
    const PreparedChannel<W>* plus = nullptr;
    const PreparedChannel<W>* minus = nullptr;
    double scale = 0.0;
  };
  std::span<const PreparedChannel<W>> tables;  ///< the K value columns' tables
  std::size_t columns = 0;                     ///< every column, derivatives included (a multiple of K)
  std::span<const Source> sources;             ///< one per column, or empty (no derivative columns)

  const PreparedChannel<W>& table_of(std::size_t column) const { return tables[column % tables.size()]; }
  const Source* source_of(std::size_t column) const {
    return column < sources.size() && sources[column].from != kNoSource ? &sources[column] : nullptr;
  }
};

template <int W>
struct SweepTable {
  using Form = typename PreparedChannel<W>::Form;
  Form form = Form::local;
  std::size_t columns = 0;
  /// Every column's output is its input's key (rescale in place).
  bool key_preserving = false;
  /// Per column: the value column its source term reads (kNoSource: none). Sources read value columns,
  /// which precede the derivative columns, so a pass over the columns from last to first reads them
  /// before they change.
  std::vector<std::size_t> source;
  bool has_sources = false;
  /// Rotation form: the generator and, per column, cos θ and the signed sine (PreparedChannel's), and the
  /// source's scale·(plus − minus) of each.
  PauliString<W> generator;
  std::vector<double> cos_theta, sin_signed, source_cos, source_sin;
  /// Rotation form: cos θ = 0 in every column and no source term (a Clifford angle such as rzz(±π/2)
  /// everywhere): each anticommuting term Q becomes g⊕Q with its row times the signed sine — a key
  /// permutation, which nothing merges into.
  bool permutation = false;
  /// Local form: pattern_of / pattern_mask of the support (column 0's table), and per input pattern its
  /// union outputs: out_pattern[in][j] for j < fanout[in], amplitudes at ((in·16 + j)·columns + column).
  PreparedChannel<W> shape;
  std::array<std::uint8_t, 16> fanout{};
  std::array<std::array<std::uint8_t, 16>, 16> out_pattern{};
  std::vector<Complex> amplitudes, source_amplitudes;
  /// The full-width mask of every local delta pattern (in ⊕ out).
  std::array<PauliString<W>, 16> delta_mask{};
  /// The distinct realized delta patterns (0 included when realized).
  std::vector<std::uint8_t> deltas;

  std::span<const Complex> amplitudes_of(int in, int j) const {
    return std::span<const Complex>(amplitudes)
        .subspan((static_cast<std::size_t>(in) * 16 + j) * columns, columns);
  }
  std::span<const Complex> source_amplitudes_of(int in, int j) const {
    return std::span<const Complex>(source_amplitudes)
        .subspan((static_cast<std::size_t>(in) * 16 + j) * columns, columns);
  }
};

/// Folds a layer's tables (one structure: sweep_driver.h checks it) into one.
template <int W>
SweepTable<W> make_sweep_table(const SweepLayer<W>& layer) {
  SweepTable<W> t;
  const PreparedChannel<W>& first = layer.tables[0];
  t.form = first.form;
  t.columns = layer.columns;
  t.source.assign(t.columns, kNoSource);
  for (std::size_t c = 0; c < t.columns; ++c) {
    if (const auto* source = layer.source_of(c)) {
      t.source[c] = source->from;
      t.has_sources = true;
    }
  }
  if (first.form == SweepTable<W>::Form::rotation) {
    t.generator = first.generator;
    t.source_cos.assign(t.columns, 0.0);
    t.source_sin.assign(t.columns, 0.0);
    for (std::size_t c = 0; c < t.columns; ++c) {
      const PreparedChannel<W>& table = layer.table_of(c);
      t.cos_theta.push_back(table.cos_theta);
      t.sin_signed.push_back(table.sin_signed);
      if (const auto* source = layer.source_of(c)) {
        t.source_cos[c] = source->scale * (source->plus->cos_theta - source->minus->cos_theta);
        t.source_sin[c] = source->scale * (source->plus->sin_signed - source->minus->sin_signed);
      }
    }
    t.permutation = !t.has_sources &&
                    std::all_of(t.cos_theta.begin(), t.cos_theta.end(), [](double c) { return c == 0.0; });
    return t;
  }
  t.shape = first;
  const int patterns = 1 << (2 * first.support_size);
  t.amplitudes.assign(static_cast<std::size_t>(patterns) * 16 * t.columns, Complex(0.0));
  t.source_amplitudes.assign(t.amplitudes.size(), Complex(0.0));
  std::array<bool, 16> realized{};
  t.key_preserving = true;
  // Adds `factor` × every output of `table` for input `in` to column c's (source) amplitudes.
  auto add = [&](const PreparedChannel<W>& table, int in, std::size_t c, std::vector<Complex>& into,
                 double factor) {
    for (int o = 0; o < table.fanout[in]; ++o) {
      const auto& output = table.outputs[in][o];
      int j = 0;
      while (j < t.fanout[in] && t.out_pattern[in][j] != output.pattern) ++j;
      if (j == t.fanout[in]) t.out_pattern[in][t.fanout[in]++] = output.pattern;
      into[(static_cast<std::size_t>(in) * 16 + j) * t.columns + c] += factor * output.amplitude;
      realized[in ^ output.pattern] = true;
      if (output.pattern != in) t.key_preserving = false;
    }
  };
  for (int in = 0; in < patterns; ++in) {
    for (std::size_t c = 0; c < t.columns; ++c) {
      add(layer.table_of(c), in, c, t.amplitudes, 1.0);
      if (const auto* source = layer.source_of(c)) {
        add(*source->plus, in, c, t.source_amplitudes, source->scale);
        add(*source->minus, in, c, t.source_amplitudes, -source->scale);
      }
    }
  }
  for (int d = 0; d < patterns; ++d) {
    t.delta_mask[d] = first.pattern_mask(d);
    if (realized[d]) t.deltas.push_back(static_cast<std::uint8_t>(d));
  }
  return t;
}

}  // namespace paulistrings
