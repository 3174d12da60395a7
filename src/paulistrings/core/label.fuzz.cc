// Fuzz target "label" (testing/fuzz_target.h): Pauli labels through parse_label, PauliString<W>::from_label
// and AnyPauliSum::from_labels. The first two input bytes choose the qubit count (0 to 1099, past the
// 1024 supported), the rest is the label. Documented: std::invalid_argument. What is accepted must be
// factors ascending and distinct, on qubits below the count, over X, Y, Z; and the string must read back
// the same from its dense and its sparse label.
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/core/label.h"
#include "paulistrings/core/pauli_string.h"
#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings {
namespace {

void require(bool condition, const char* what) {
  if (!condition) throw std::logic_error(what);
}

template <int W>
void check_string(std::string_view label, std::size_t num_qubits, const std::vector<LabelFactor>& factors) {
  const PauliString<W> p = PauliString<W>::from_label(label, num_qubits);
  require(static_cast<std::size_t>(p.weight()) == factors.size(),
          "from_label's weight differs from parse_label's factors");
  for (const LabelFactor& f : factors)
    require(p.letter(f.qubit) == f.pauli, "from_label sets another letter");
  require(PauliString<W>::from_label(p.to_label(num_qubits), num_qubits) == p,
          "the dense label reads back differently");
  require(PauliString<W>::from_label(p.to_sparse_label(), num_qubits) == p,
          "the sparse label reads back differently");
}

void fuzz_label(std::string_view input) {
  if (input.size() < 2) return;
  const std::size_t num_qubits =
      (static_cast<unsigned char>(input[0]) | std::size_t{static_cast<unsigned char>(input[1])} << 8) % 1100;
  const std::string_view label = input.substr(2);
  std::vector<LabelFactor> factors;
  try {
    factors = parse_label(label, num_qubits);
  } catch (const std::invalid_argument&) {
    return;
  }
  for (std::size_t i = 0; i < factors.size(); ++i) {
    require(factors[i].qubit < num_qubits, "a factor on a qubit past the count");
    require(factors[i].pauli == 'X' || factors[i].pauli == 'Y' || factors[i].pauli == 'Z',
            "a factor not X, Y or Z");
    require(i == 0 || factors[i - 1].qubit < factors[i].qubit, "factors not ascending and distinct");
  }
  switch (width_for_qubits(num_qubits)) {
    case 1:
      check_string<1>(label, num_qubits, factors);
      break;
    case 2:
      check_string<2>(label, num_qubits, factors);
      break;
    case 4:
      check_string<4>(label, num_qubits, factors);
      break;
    case 8:
      check_string<8>(label, num_qubits, factors);
      break;
    default:
      check_string<16>(label, num_qubits, factors);
  }
  const std::vector<std::pair<std::string, Complex>> terms = {{std::string(label), Complex(0.5, -1.0)}};
  const AnyPauliSum sum = AnyPauliSum::from_labels(num_qubits, terms);
  require(sum.size() == 1 && sum.coefficient(label) == Complex(0.5, -1.0), "from_labels lost the term");
}

}  // namespace
}  // namespace paulistrings

PAULISTRINGS_FUZZ_TARGET(label, paulistrings::fuzz_label)
