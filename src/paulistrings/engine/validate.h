#pragma once
// validate_run(): the checks every engine makes of a run before its first layer, in one place, so that
// the same bad input gets the same message whichever engine runs it.

#include <cstddef>
#include <string>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/engine/options.h"

namespace paulistrings {

/// What is wrong with propagating a sum of `sum_qubits` qubits (complex coefficients or real) through
/// `circuit` with `options`: qubit counts differ, a real sum meets complex transfer amplitudes, a
/// negative thread count, a device ordinal below −1, the column engine with a device, a start layer past
/// the circuit. Empty when
/// nothing is. (Partitioned runs agree on this text across ranks before they throw.)
std::string run_problem(std::size_t sum_qubits, bool complex_coefficients, const Circuit& circuit,
                        const PropagateOptions& options);

/// Throws std::invalid_argument with run_problem()'s text when it is not empty.
void validate_run(std::size_t sum_qubits, bool complex_coefficients, const Circuit& circuit,
                  const PropagateOptions& options);

}  // namespace paulistrings
