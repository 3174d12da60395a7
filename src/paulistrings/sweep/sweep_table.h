#pragma once
// SweepTable<W>: one layer of a sweep as a fast sweep engine reads it (sweep/sweep_engine.h): the K
// columns' prepared tables of one structure folded into one — a rotation's generator with K cosines and
// signed sines, or a local table whose outputs per input pattern are the union of the columns' outputs,
// each with K amplitudes (zero where a column has no such output).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"

namespace paulistrings {

template <int W>
struct SweepTable {
  using Form = typename PreparedChannel<W>::Form;
  Form form = Form::local;
  std::size_t columns = 0;
  /// Every column's table is key-preserving (rescale in place); or maps each input to at most one output.
  bool key_preserving = false;
  /// Rotation form: the generator and, per column, cos θ and the signed sine (PreparedChannel's).
  PauliString<W> generator;
  std::vector<double> cos_theta, sin_signed;
  /// Local form: pattern_of / pattern_mask of the support (column 0's table), and per input pattern its
  /// union outputs: out_pattern[in][j] for j < fanout[in], amplitudes at ((in·16 + j)·columns + k).
  PreparedChannel<W> shape;
  std::array<std::uint8_t, 16> fanout{};
  std::array<std::array<std::uint8_t, 16>, 16> out_pattern{};
  std::vector<Complex> amplitudes;
  /// The full-width mask of every local delta pattern (in ⊕ out).
  std::array<PauliString<W>, 16> delta_mask{};
  /// The distinct realized delta patterns (0 included when realized).
  std::vector<std::uint8_t> deltas;

  std::span<const Complex> amplitudes_of(int in, int j) const {
    return std::span<const Complex>(amplitudes).subspan((static_cast<std::size_t>(in) * 16 + j) * columns, columns);
  }
};

/// Folds the columns' tables (one structure: sweep_driver.h checks it) into one.
template <int W>
SweepTable<W> make_sweep_table(std::span<const PreparedChannel<W>> tables) {
  SweepTable<W> t;
  const PreparedChannel<W>& first = tables[0];
  t.form = first.form;
  t.columns = tables.size();
  if (first.form == SweepTable<W>::Form::rotation) {
    t.generator = first.generator;
    for (const PreparedChannel<W>& table : tables) {
      t.cos_theta.push_back(table.cos_theta);
      t.sin_signed.push_back(table.sin_signed);
    }
    return t;
  }
  t.shape = first;
  const int patterns = 1 << (2 * first.support_size);
  t.amplitudes.assign(static_cast<std::size_t>(patterns) * 16 * t.columns, Complex(0.0));
  std::array<bool, 16> realized{};
  t.key_preserving = true;
  for (int in = 0; in < patterns; ++in) {
    for (std::size_t k = 0; k < tables.size(); ++k) {
      const PreparedChannel<W>& table = tables[k];
      for (int o = 0; o < table.fanout[in]; ++o) {
        const auto& output = table.outputs[in][o];
        int j = 0;
        while (j < t.fanout[in] && t.out_pattern[in][j] != output.pattern) ++j;
        if (j == t.fanout[in]) t.out_pattern[in][t.fanout[in]++] = output.pattern;
        t.amplitudes[(static_cast<std::size_t>(in) * 16 + j) * t.columns + k] += output.amplitude;
        realized[in ^ output.pattern] = true;
        if (output.pattern != in) t.key_preserving = false;
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
