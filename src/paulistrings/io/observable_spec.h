#pragma once
// ObservableTerms: an observable as written in a file — (label, coefficient) pairs with dense
// ("IXYZ…") or sparse ("X0 Y5 Z62") labels — before it becomes a PauliSum. Duplicated labels sum.

#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/core/any_pauli_sum.h"

namespace paulistrings::io {

using ObservableTerms = std::vector<std::pair<std::string, std::complex<double>>>;

/// The PauliSum of these terms on `num_qubits` qubits (real storage when every coefficient is
/// real). Throws std::invalid_argument for a bad label.
inline AnyPauliSum make_observable(const ObservableTerms& terms, std::size_t num_qubits) {
  return AnyPauliSum::from_labels(num_qubits, terms);
}

}  // namespace paulistrings::io
