// Parsing of product-state specifications.

#include "paulistrings/readout/product_state.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace paulistrings {

ProductState ProductState::parse(std::string_view spec, std::size_t num_qubits) {
  check_num_qubits(num_qubits);
  std::string lower(spec);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string per_qubit;
  if (lower == "z+" || lower == "x+" || lower == "y+") {
    const char c = lower[0] == 'z' ? '0' : lower[0] == 'x' ? '+' : 'r';
    per_qubit.assign(num_qubits, c);
  } else {
    if (spec.size() != num_qubits) {
      throw std::invalid_argument("state '" + std::string(spec) +
                                  "' is neither \"z+\", \"x+\", \"y+\" nor a " + std::to_string(num_qubits) +
                                  "-character per-qubit label over 0 1 + - r l");
    }
    per_qubit = std::string(spec);
  }
  ProductState state;
  state.num_qubits_ = num_qubits;
  const std::size_t words = std::max<std::size_t>(16, (num_qubits + 63) / 64);
  state.axis_x_.assign(words, 0);
  state.axis_z_.assign(words, 0);
  state.negative_.assign(words, 0);
  for (std::size_t q = 0; q < num_qubits; ++q) {
    const std::uint64_t bit = std::uint64_t{1} << (q & 63);
    const std::size_t w = q >> 6;
    switch (per_qubit[q]) {
      case '0':
        state.axis_z_[w] |= bit;
        break;
      case '1':
        state.axis_z_[w] |= bit;
        state.negative_[w] |= bit;
        break;
      case '+':
        state.axis_x_[w] |= bit;
        break;
      case '-':
        state.axis_x_[w] |= bit;
        state.negative_[w] |= bit;
        break;
      case 'r':
        state.axis_x_[w] |= bit;
        state.axis_z_[w] |= bit;
        break;
      case 'l':
        state.axis_x_[w] |= bit;
        state.axis_z_[w] |= bit;
        state.negative_[w] |= bit;
        break;
      default:
        throw std::invalid_argument("state '" + std::string(spec) + "': character '" +
                                    std::string(1, per_qubit[q]) + "' for qubit " + std::to_string(q) +
                                    " is not one of 0 1 + - r l");
    }
  }
  return state;
}

std::string ProductState::label() const {
  std::string text(num_qubits_, '0');
  for (std::size_t q = 0; q < num_qubits_; ++q) {
    const std::size_t w = q >> 6;
    const int b = static_cast<int>(q & 63);
    const bool x = (axis_x_[w] >> b) & 1, z = (axis_z_[w] >> b) & 1, minus = (negative_[w] >> b) & 1;
    text[q] = x && z ? (minus ? 'l' : 'r') : x ? (minus ? '-' : '+') : (minus ? '1' : '0');
  }
  return text;
}

}  // namespace paulistrings
