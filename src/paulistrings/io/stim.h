#pragma once
// stim circuit reader: the subset of stim's text format a Pauli propagator can represent:
//   H S S_DAG X Y Z → h s sdg x y z;  CX (= CNOT, ZCX) CY (= ZCY) CZ (= ZCZ) SWAP → cnot cy cz swap
//   (targets taken in pairs); DEPOLARIZE1(p) → depolarize; DEPOLARIZE2(p) → depolarize2 (pairs);
//   X_ERROR(p) Y_ERROR(p) Z_ERROR(p) → pauli_channel with one nonzero component; I skipped;
//   measurements whose results are not used, as channels (docs/design.md, "Circuit files"):
//   M / MZ, MX, MY → measure of Z, X, Y per target; MR / MRZ, MRX, MRY → that measurement then a reset
//   to the basis' +1 state; R / RZ, RX, RY → reset; MXX MYY MZZ → two-qubit products (targets in pairs);
//   MPP → one measure_pauli per product (X0*Y1*Z2); inverted results (!5) and result-flip probabilities
//   M(p) are accepted and change nothing; MPAD and DETECTOR (which only read results) are skipped;
//   TICK, QUBIT_COORDS, SHIFT_COORDS ignored; REPEAT n { … } flattened (nested too);
//   OBSERVABLE_INCLUDE(k) with Pauli targets (X3 Y5 Z7) → one observable term per instruction,
//   coefficient 1, duplicates summing.
// Everything else — record targets on gates or observables (rec[-1]), sweep targets, CORRELATED_ERROR/E,
// ELSE_CORRELATED_ERROR, PAULI_CHANNEL_1/2, heralded noise, unknown names — is rejected with an
// io::ParseError located at file:line:column, never skipped.

#include <optional>
#include <string>
#include <string_view>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/io/observable_spec.h"

namespace paulistrings::io {

struct StimProgram {
  Circuit circuit{0};
  /// Sparse labels ("X3 Y5") with coefficient 1, one per OBSERVABLE_INCLUDE instruction; empty
  /// when the program has none.
  ObservableTerms observable;
};

/// Parses stim circuit text. The circuit has max(qubit index)+1 qubits (over gates and observable
/// targets), or `num_qubits` when given (which must cover every index used).
StimProgram read_stim(std::string_view text, const std::string& file = "<stim>",
                      std::optional<std::size_t> num_qubits = std::nullopt);

/// Reads and parses a file (std::runtime_error if it cannot be read).
StimProgram load_stim(const std::string& path, std::optional<std::size_t> num_qubits = std::nullopt);

}  // namespace paulistrings::io
