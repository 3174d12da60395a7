// validate_run(): see validate.h.

#include "paulistrings/engine/validate.h"

#include <stdexcept>

namespace paulistrings {

std::string run_problem(std::size_t sum_qubits, bool complex_coefficients, const Circuit& circuit,
                        const PropagateOptions& options) {
  if (sum_qubits != circuit.num_qubits()) {
    return "the Pauli sum has " + std::to_string(sum_qubits) + " qubits but the circuit has " +
           std::to_string(circuit.num_qubits());
  }
  if (!complex_coefficients) {
    for (std::size_t k = 0; k < circuit.size(); ++k) {
      if (circuit[k].has_complex_transfer()) {
        return "gate " + std::to_string(k) + " (" + circuit[k].description() +
               ") has complex transfer amplitudes: propagate a complex-coefficient sum";
      }
    }
  }
  if (options.threads < 0) return "threads must be ≥ 0 (0 = all available cores)";
  if (options.device < -1) {
    return "device must be −1 (CPU) or a CUDA device ordinal ≥ 0, got " + std::to_string(options.device);
  }
  if (options.engine == Engine::column && options.device >= 0) {
    return "the column engine runs on the host; it cannot run on device " + std::to_string(options.device);
  }
  if (options.start_layer > circuit.size()) {
    return "start_layer " + std::to_string(options.start_layer) + " is past the circuit's " +
           std::to_string(circuit.size()) + " layers";
  }
  return {};
}

void validate_run(std::size_t sum_qubits, bool complex_coefficients, const Circuit& circuit,
                  const PropagateOptions& options) {
  if (std::string problem = run_problem(sum_qubits, complex_coefficients, circuit, options); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
}

}  // namespace paulistrings
