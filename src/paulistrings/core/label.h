#pragma once
// Width-independent parsing of Pauli labels, shared by every PauliString<W> and by the front ends.
// Dense labels: char i = qubit i over "IXYZ". Sparse labels: "X0 Y5 Z62" (letter + qubit index,
// separated by spaces or commas; "I" or "" is the identity). Errors are std::invalid_argument
// messages that quote the label and name the problem.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace paulistrings {

inline constexpr std::size_t kMaxSupportedQubits = 1024;

struct LabelFactor {
  std::size_t qubit;
  char pauli;  ///< 'X', 'Y' or 'Z'
};

/// Non-identity factors of `label` on num_qubits qubits, ascending by qubit. A label of exactly
/// num_qubits characters over IXYZ is dense; anything else is read as sparse. Throws
/// std::invalid_argument for unknown letters, qubits out of range, repeated qubits and bad syntax.
std::vector<LabelFactor> parse_label(std::string_view label, std::size_t num_qubits);

/// True when `label` uses the sparse "X0 Y5" form (contains a digit).
bool is_sparse_label(std::string_view label);

/// 0=I 1=X 2=Z 3=Y for a Pauli letter (upper case); throws std::invalid_argument otherwise.
int pauli_code(char pauli);

/// Throws std::invalid_argument when num_qubits exceeds 1024 (the widest instantiated width).
void check_num_qubits(std::size_t num_qubits);

[[noreturn]] void throw_qubit_out_of_range(std::size_t qubit, std::size_t num_qubits);
[[noreturn]] void throw_too_many_qubits_for_width(std::size_t num_qubits, int width);

}  // namespace paulistrings
