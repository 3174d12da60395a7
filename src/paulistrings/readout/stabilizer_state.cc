// Validation and row reduction of stabilizer generators.

#include "paulistrings/readout/stabilizer_state.h"

#include <stdexcept>

namespace paulistrings {
namespace {

bool column_bit(const PauliString<16>& key, int column, std::size_t num_qubits) {
  const std::size_t c = static_cast<std::size_t>(column);
  const std::size_t q = c % num_qubits;
  const auto& words = c >= num_qubits ? key.z : key.x;
  return (words[q >> 6] >> (q & 63)) & 1;
}

}  // namespace

StabilizerState StabilizerState::from_generators(std::span<const std::string> generators,
                                                 std::size_t num_qubits) {
  check_num_qubits(num_qubits);
  if (generators.size() != num_qubits) {
    throw std::invalid_argument("expectation_stabilizer: expected " + std::to_string(num_qubits) +
                                " generators for " + std::to_string(num_qubits) + " qubits, got " +
                                std::to_string(generators.size()));
  }
  StabilizerState state;
  state.num_qubits_ = num_qubits;
  std::vector<Row> rows;
  for (const std::string& text : generators) {
    std::string_view label = text;
    int phase = 0;
    if (!label.empty() && (label[0] == '+' || label[0] == '-')) {
      phase = label[0] == '-' ? 2 : 0;
      label.remove_prefix(1);
    }
    if (!label.empty() && (label[0] == 'i' || label[0] == 'j')) {
      throw std::invalid_argument("stabilizer generator '" + text +
                                  "' is not Hermitian (only + and − signs allowed)");
    }
    Row row{PauliString<16>::from_label(label, num_qubits), phase, -1};
    if (row.key.is_identity()) {
      throw std::invalid_argument("stabilizer generator '" + text + "' is the identity");
    }
    rows.push_back(row);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      if (!rows[i].key.commutes_with(rows[j].key)) {
        throw std::invalid_argument("stabilizer generators '" + generators[i] + "' and '" + generators[j] +
                                    "' anticommute");
      }
    }
  }
  // Gauss–Jordan elimination over the 2n columns, multiplying group elements (phases tracked).
  const int columns = static_cast<int>(2 * num_qubits);
  std::size_t rank = 0;
  for (int column = 0; column < columns && rank < rows.size(); ++column) {
    std::size_t pivot = rank;
    while (pivot < rows.size() && !column_bit(rows[pivot].key, column, num_qubits)) ++pivot;
    if (pivot == rows.size()) continue;
    std::swap(rows[rank], rows[pivot]);
    rows[rank].pivot = column;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (r == rank || !column_bit(rows[r].key, column, num_qubits)) continue;
      rows[r].phase = (rows[r].phase + rows[rank].phase + product_phase(rows[r].key, rows[rank].key)) & 3;
      rows[r].key ^= rows[rank].key;
    }
    ++rank;
  }
  if (rank < rows.size()) {
    throw std::invalid_argument("stabilizer generators are not independent (rank " + std::to_string(rank) +
                                " < " + std::to_string(rows.size()) + ")");
  }
  for (const Row& r : rows) {
    if (r.phase & 1) throw std::logic_error("stabilizer row acquired an imaginary phase");
  }
  state.rows_ = std::move(rows);
  return state;
}

}  // namespace paulistrings
