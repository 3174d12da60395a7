// Label parsing and the shared qubit-count checks.

#include "paulistrings/core/label.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "paulistrings/core/pauli_string.h"
#include "paulistrings/core/text.h"

namespace paulistrings {
namespace {

std::string quoted(std::string_view label) {
  constexpr std::size_t kShown = 80;
  std::string text(label.substr(0, kShown));
  if (label.size() > kShown) text += "...";
  return "'" + text + "'";
}

std::vector<LabelFactor> parse_dense(std::string_view label) {
  std::vector<LabelFactor> factors;
  for (std::size_t q = 0; q < label.size(); ++q) {
    const char c = label[q];
    if (c == 'I') continue;
    if (c != 'X' && c != 'Y' && c != 'Z') {
      throw std::invalid_argument("invalid Pauli label " + quoted(label) + ": character '" +
                                  std::string(1, c) + "' at position " + std::to_string(q) +
                                  " is not one of I, X, Y, Z");
    }
    factors.push_back({q, c});
  }
  return factors;
}

std::vector<LabelFactor> parse_sparse(std::string_view label, std::size_t num_qubits) {
  std::vector<LabelFactor> factors;
  std::size_t pos = 0;
  auto is_separator = [](char c) { return c == ' ' || c == ',' || c == '\t'; };
  while (pos < label.size()) {
    if (is_separator(label[pos])) {
      ++pos;
      continue;
    }
    const std::size_t start = pos;
    const char letter = label[pos++];
    if (letter != 'I' && letter != 'X' && letter != 'Y' && letter != 'Z') {
      throw std::invalid_argument("invalid Pauli label " + quoted(label) +
                                  ": expected a Pauli letter I, X, Y or Z at position " +
                                  std::to_string(start) + ", found '" + std::string(1, letter) + "'");
    }
    const std::size_t digits_start = pos;
    while (pos < label.size() && std::isdigit(static_cast<unsigned char>(label[pos]))) ++pos;
    if (pos == digits_start) {
      if (letter == 'I' && (pos == label.size() || is_separator(label[pos]))) continue;  // a lone "I"
      throw std::invalid_argument("invalid Pauli label " + quoted(label) + ": Pauli '" +
                                  std::string(1, letter) + "' at position " + std::to_string(start) +
                                  " has no qubit index");
    }
    if (pos < label.size() && !is_separator(label[pos])) {
      throw std::invalid_argument("invalid Pauli label " + quoted(label) + ": unexpected character '" +
                                  std::string(1, label[pos]) + "' at position " + std::to_string(pos));
    }
    const std::string_view digits = label.substr(digits_start, pos - digits_start);
    std::uint64_t qubit = std::numeric_limits<std::uint64_t>::max();
    try {
      qubit = parse_count(digits);
    } catch (const std::invalid_argument&) {  // beyond 2^64 − 1: out of range like any other too large index
    }
    if (qubit >= num_qubits) {
      throw std::invalid_argument("invalid Pauli label " + quoted(label) + ": qubit " + std::string(digits) +
                                  " is out of range for " + std::to_string(num_qubits) + " qubits");
    }
    if (letter == 'I') continue;
    factors.push_back({qubit, letter});
  }
  std::sort(factors.begin(), factors.end(),
            [](const LabelFactor& a, const LabelFactor& b) { return a.qubit < b.qubit; });
  for (std::size_t i = 1; i < factors.size(); ++i) {
    if (factors[i].qubit == factors[i - 1].qubit) {
      throw std::invalid_argument("invalid Pauli label " + quoted(label) + ": qubit " +
                                  std::to_string(factors[i].qubit) + " appears more than once");
    }
  }
  return factors;
}

}  // namespace

bool is_sparse_label(std::string_view label) {
  return std::any_of(label.begin(), label.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::vector<LabelFactor> parse_label(std::string_view label, std::size_t num_qubits) {
  check_num_qubits(num_qubits);
  if (is_sparse_label(label)) return parse_sparse(label, num_qubits);
  if (label.empty() || label == "I") return {};
  if (label.size() != num_qubits) {
    // Not a dense label of the right length: report the most useful problem.
    for (std::size_t q = 0; q < label.size(); ++q) {
      const char c = label[q];
      if (c != 'I' && c != 'X' && c != 'Y' && c != 'Z') parse_dense(label);  // throws with the position
    }
    throw std::invalid_argument("invalid Pauli label " + quoted(label) + ": has " +
                                std::to_string(label.size()) + " characters for " +
                                std::to_string(num_qubits) +
                                " qubits (use a full-length label or the sparse form \"X0 Z5\")");
  }
  return parse_dense(label);
}

int pauli_code(char pauli) {
  switch (pauli) {
    case 'I':
      return 0;
    case 'X':
      return 1;
    case 'Z':
      return 2;
    case 'Y':
      return 3;
    default:
      throw std::invalid_argument("'" + std::string(1, pauli) +
                                  "' is not a Pauli letter (expected I, X, Y or Z)");
  }
}

void check_num_qubits(std::size_t num_qubits) {
  if (num_qubits > kMaxSupportedQubits) {
    throw std::invalid_argument("num_qubits = " + std::to_string(num_qubits) +
                                " exceeds the largest supported width (1024 qubits)");
  }
}

void throw_qubit_out_of_range(std::size_t qubit, std::size_t num_qubits) {
  throw std::invalid_argument(
      "qubit " + (qubit == static_cast<std::size_t>(-1) ? std::string("index") : std::to_string(qubit)) +
      " is out of range for " + std::to_string(num_qubits) + " qubits");
}

void throw_too_many_qubits_for_width(std::size_t num_qubits, int width) {
  throw std::invalid_argument(std::to_string(num_qubits) + " qubits do not fit a Pauli string of width " +
                              std::to_string(width) + " (" + std::to_string(64 * width) + " qubits)");
}

int width_for_qubits(std::size_t num_qubits) {
  check_num_qubits(num_qubits);
  for (int w : {1, 2, 4, 8}) {
    if (num_qubits <= 64 * static_cast<std::size_t>(w)) return w;
  }
  return 16;
}

}  // namespace paulistrings
