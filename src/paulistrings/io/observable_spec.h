#pragma once
// ObservableTerms: an observable as written in a file — (label, coefficient) pairs with dense
// ("IXYZ…") or sparse ("X0 Y5 Z62") labels — before it becomes a PauliSum. Duplicated labels sum.
// Where the circuit came from a file with named qubit registers (OpenQASM), a sparse label may name a
// qubit by register and index instead: "Zq[0] Zq[1] Xanc[2]"; the registers are laid out one after
// another in declaration order, so q[i] is qubit offset(q) + i.

#include <complex>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/core/any_pauli_sum.h"

namespace paulistrings::io {

using ObservableTerms = std::vector<std::pair<std::string, std::complex<double>>>;

/// A named qubit register and its place among the circuit's qubits.
struct QubitRegister {
  std::string name;
  std::size_t offset = 0;
  std::size_t size = 0;
};

/// The PauliSum of these terms on `num_qubits` qubits (real storage when every coefficient is
/// real). Throws std::invalid_argument for a bad label.
inline AnyPauliSum make_observable(const ObservableTerms& terms, std::size_t num_qubits) {
  return AnyPauliSum::from_labels(num_qubits, terms);
}

/// The global qubit index of `register_name[index]` (std::invalid_argument naming the register and the
/// registers there are, or the index and the register's size).
std::size_t register_qubit(std::span<const QubitRegister> registers, std::string_view register_name,
                           std::size_t index);

/// `label` with every factor written by register ("Zq[3]") turned into its global index ("Z5"); labels
/// without '[' are returned unchanged. std::invalid_argument quoting the factor for a bad one.
std::string resolve_register_label(std::string_view label, std::span<const QubitRegister> registers);

/// resolve_register_label on every term.
ObservableTerms resolve_register_labels(ObservableTerms terms, std::span<const QubitRegister> registers);

}  // namespace paulistrings::io
