// The README's C++ example, compiled and run as a test so it cannot go stale.

#include <cmath>
#include <cstdio>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/readout/product_state.h"

int main() {
  using namespace paulistrings;

  Circuit circuit(3);
  circuit.append(Channel::h(0))
      .append(Channel::cnot(0, 1))
      .append(Channel::rz(0.3, 1))
      .append(Channel::depolarize(0.01, 2));

  // An observable on 3 qubits: labels are dense ("ZZI") or sparse ("Z0 Z1").
  auto observable = PauliSum<1, double>::from_labels(3, {{"Z0 Z1", 1.0}, {"X2", 0.5}});

  PropagateOptions options;
  options.direction = Direction::heisenberg;  // U† O U, walking the circuit backwards
  options.truncation = Truncation::coeff(1e-8) & Truncation::weight(6);
  PropagationStats stats = propagate(observable, circuit, options);

  double value = ProductState::parse("z+", 3).expectation(observable);  // ⟨000| U† O U |000⟩
  std::printf("<Z0 Z1 + 0.5 X2> = %.15f after %zu layers (%zu terms)\n", value, stats.layers.size(),
              stats.final_terms);
  // H then CNOT make a Bell pair on (0, 1): ⟨Z0 Z1⟩ = 1 (rz commutes with it); ⟨X2⟩ = 0 in |0⟩.
  return std::abs(value - 1.0) < 1e-12 ? 0 : 1;
}
