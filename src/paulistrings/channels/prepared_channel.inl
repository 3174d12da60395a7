// Template body of prepare_channel (included by prepared_channel.h).

#include <algorithm>
#include <numbers>
#include <stdexcept>

namespace paulistrings {

template <int W>
PreparedChannel<W> prepare_channel(const Channel& channel, Direction direction) {
  if (channel.span() > PauliString<W>::kMaxQubits)
    throw_qubit_out_of_range(channel.span() - 1, PauliString<W>::kMaxQubits);
  PreparedChannel<W> table;
  if (channel.is_measurement() && channel.uses_rotation_form()) {
    // A measurement of a product of more than two Paulis: the rotation form with cos θ = sin θ = 0 keeps
    // the commuting terms and removes the anticommuting ones (every engine rescales a key-preserving
    // rotation by cos θ and drops exact zeros; docs/design.md, "Circuit files").
    table.form = PreparedChannel<W>::Form::rotation;
    for (std::size_t k = 0; k < channel.qubits().size(); ++k) {
      table.generator.set_code(channel.qubits()[k], pauli_code(channel.pauli()[k]));
    }
    table.cos_theta = 0.0;
    table.sin_signed = 0.0;
    table.deltas = {PauliString<W>{}};
    table.table_class = TableClass::key_preserving;
    table.max_fanout = 1;
    return table;
  }
  if (channel.is_rotation()) {
    table.form = PreparedChannel<W>::Form::rotation;
    for (std::size_t k = 0; k < channel.qubits().size(); ++k) {
      table.generator.set_code(channel.qubits()[k], pauli_code(channel.pauli()[k]));
    }
    table.cos_theta = snap_unit(std::cos(channel.theta()));
    double sin_theta = snap_unit(std::sin(channel.theta()));
    // At odd multiples of π/4 (T gates, the Toffoli's decomposition) |cos θ| and |sin θ| differ by one
    // ulp in double; made equal, branches that cancel in exact arithmetic (c² − s²) cancel exactly.
    if (std::abs(std::abs(table.cos_theta) - std::abs(sin_theta)) < 1e-15) {
      table.cos_theta = std::copysign(std::numbers::sqrt2 / 2, table.cos_theta);
      sin_theta = std::copysign(std::numbers::sqrt2 / 2, sin_theta);
    }
    table.sin_signed = direction == Direction::heisenberg ? sin_theta : -sin_theta;
    table.deltas = {PauliString<W>{}, table.generator};
    if (table.sin_signed == 0.0) {
      table.table_class = TableClass::key_preserving;
      table.deltas.resize(1);
    } else if (table.cos_theta == 0.0) {
      table.table_class = TableClass::permutation;
    } else {
      table.table_class = TableClass::general;
    }
    table.max_fanout = table.table_class == TableClass::general ? 2 : 1;
    return table;
  }

  const TransferMatrix& t = channel.transfer(direction);
  table.form = PreparedChannel<W>::Form::local;
  table.support_size = static_cast<int>(channel.qubits().size());
  table.qubits[0] = channel.qubits()[0];
  if (table.support_size == 2) table.qubits[1] = channel.qubits()[1];
  const int dim = t.dim;

  // Realized deltas, ascending by local pattern, so delta indices do not depend on qubit placement.
  std::array<bool, 16> realized{};
  for (int in = 0; in < dim; ++in)
    for (int out = 0; out < dim; ++out)
      if (t(out, in) != Complex(0.0)) realized[static_cast<std::size_t>(in ^ out)] = true;
  std::array<std::uint8_t, 16> delta_index{};
  for (int d = 0; d < dim; ++d) {
    if (!realized[static_cast<std::size_t>(d)]) continue;
    delta_index[static_cast<std::size_t>(d)] = static_cast<std::uint8_t>(table.delta_patterns.size());
    table.delta_patterns.push_back(static_cast<std::uint8_t>(d));
    table.deltas.push_back(table.pattern_mask(d));
  }

  bool key_preserving = true, injective = true;
  std::array<int, 16> hit_count{};
  table.max_fanout = 0;
  for (int in = 0; in < dim; ++in) {
    int n = 0;
    for (int out = 0; out < dim; ++out) {
      const Complex amplitude = t(out, in);
      if (amplitude == Complex(0.0)) continue;
      table.outputs[static_cast<std::size_t>(in)][static_cast<std::size_t>(n++)] = {
          static_cast<std::uint8_t>(out), delta_index[static_cast<std::size_t>(in ^ out)], amplitude};
      table.complex_amplitudes |= amplitude.imag() != 0.0;
      key_preserving &= out == in;
      ++hit_count[static_cast<std::size_t>(out)];
    }
    table.fanout[static_cast<std::size_t>(in)] = static_cast<std::uint8_t>(n);
    table.max_fanout = std::max(table.max_fanout, n);
    injective &= n <= 1;
  }
  for (int out = 0; out < dim; ++out) injective &= hit_count[static_cast<std::size_t>(out)] <= 1;
  table.table_class = key_preserving ? TableClass::key_preserving
                      : injective    ? TableClass::permutation
                                     : TableClass::general;
  return table;
}

}  // namespace paulistrings
