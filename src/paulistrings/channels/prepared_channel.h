#pragma once
// PreparedChannel<W>: a channel turned, once per layer, into the table an engine reads with no
// virtual calls and no trigonometry per term (docs/design.md §5). Two forms:
//  - local: for each input pattern on the ≤2-qubit support, its output patterns and amplitudes
//    (phase folded in), plus the realized deltas as full-width XOR masks;
//  - rotation: the generator g of any weight and cos θ / ±sin θ (direction folded into the sign).
// The classification picks an engine's fast path: key-preserving (only the identity delta:
// rescale in place), permutation (each input has at most one output and distinct inputs stay
// distinct: scatter, no merge), general.

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "paulistrings/channels/channel.h"
#include "paulistrings/core/pauli_string.h"

namespace paulistrings {

enum class TableClass : std::uint8_t { key_preserving, permutation, general };
std::string_view to_string(TableClass table_class);

template <int W>
struct PreparedChannel {
  enum class Form : std::uint8_t { local, rotation };
  struct Output {
    std::uint8_t pattern;
    std::uint8_t delta_index;  ///< index into `deltas` of pattern ⊕ input
    Complex amplitude;
  };

  Form form = Form::local;
  TableClass table_class = TableClass::general;
  bool complex_amplitudes = false;
  int max_fanout = 1;

  // Local form.
  int support_size = 0;
  std::array<Qubit, 2> qubits{};
  std::array<std::uint8_t, 16> fanout{};
  std::array<std::array<Output, 16>, 16> outputs{};
  std::vector<std::uint8_t> delta_patterns;  ///< distinct local deltas, ascending (0 first when realized)
  std::vector<PauliString<W>> deltas;        ///< the same deltas as full-width masks

  // Rotation form: Q anticommuting with g → cos·Q + sin_signed·(k==3 ? 1 : −1)·(g⊕Q), with
  // g·Q = i^k (g⊕Q) (docs/design.md §2.3: Heisenberg cos θ Q + i sin θ g Q, forward with −sin θ).
  PauliString<W> generator;
  double cos_theta = 1.0;
  double sin_signed = 0.0;

  /// Local pattern of `key` on the support.
  int pattern_of(const PauliString<W>& key) const {
    int pattern = key.code(qubits[0]);
    if (support_size == 2) pattern |= key.code(qubits[1]) << 2;
    return pattern;
  }
  /// The full-width key of local pattern `pattern` on the support (pattern_of's inverse; I elsewhere):
  /// XOR it into a key to apply that local delta.
  PauliString<W> pattern_mask(int pattern) const {
    PauliString<W> mask;
    mask.set_code(qubits[0], pattern & 3);
    if (support_size == 2) mask.set_code(qubits[1], (pattern >> 2) & 3);
    return mask;
  }

  /// Calls emit(output_key, amplitude, delta_index) for every output of `key` (coefficient 1).
  template <class Emit>
  void for_each_output(const PauliString<W>& key, Emit&& emit) const {
    if (form == Form::rotation) {
      if (key.commutes_with(generator)) {
        emit(key, Complex(1.0), 0);
        return;
      }
      if (cos_theta != 0.0) emit(key, Complex(cos_theta), 0);
      if (sin_signed != 0.0) {
        const double sign = product_phase(generator, key) == 3 ? 1.0 : -1.0;
        emit(key ^ generator, Complex(sign * sin_signed), 1);
      }
      return;
    }
    const int in = pattern_of(key);
    for (int k = 0; k < fanout[in]; ++k) {
      const Output& o = outputs[in][k];
      emit(key ^ deltas[o.delta_index], o.amplitude, o.delta_index);
    }
  }
};

/// Builds the table of `channel` for `direction` at width W (the channel must fit in 64·W qubits).
template <int W>
PreparedChannel<W> prepare_channel(const Channel& channel, Direction direction);

}  // namespace paulistrings

#include "paulistrings/channels/prepared_channel.inl"
