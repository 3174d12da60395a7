#pragma once
// OpenQASM reader: turns an OpenQASM 2 program, or a program in the OpenQASM 3 subset that Qiskit's
// qasm3.dumps writes for circuits without control flow, into a Circuit (the channels of each statement
// in program order).
//
// OpenQASM 2: the header (a file without one is read as 2.0, with a warning), include "qelib1.inc",
// qreg / creg (qubit registers laid out one after another in declaration order), every gate of
// qelib1.inc and its common extensions (circuit/gate_library.h), user `gate` definitions (nested, with
// parameter expressions: pi, + - * / ^, unary minus, sin cos tan exp ln sqrt), register broadcasting,
// `measure q -> c` (a measurement of Z whose outcome is not used: docs/design.md, "Circuit files"),
// `reset`, `barrier` (no effect). Classical control (`if`) and `opaque` gates are refused.
//
// OpenQASM 3 (header OPENQASM 3 / 3.0): include "stdgates.inc", qubit[n] / bit[n] (and qreg / creg),
// `c[i] = measure q[i];`, `c = measure q;`, `measure q;`, reset, barrier, gate definitions, gphase,
// `const` numbers, `input float[64] name;` (values from QasmOptions::inputs), expressions with ** and
// the constants pi/π, tau/τ, euler/ℇ (plus arcsin arccos arctan), hardware qubits $n, and the gate
// modifiers ctrl @, ctrl(n) @, negctrl @, inv @, pow(k) @ — exactly, on any standard gate and on
// defined gates of up to two qubits (ctrl @ and non-integer pow @); inv @ and integer pow @ on any gate.
// Control flow, subroutines, classical declarations and arithmetic, timing and calibration are refused.
//
// Every refusal and every error in the program is an io::ParseError "file:line:column: message" at the
// offending token. A mistake in the options rather than the program — a value in QasmOptions::inputs for
// a name the program does not declare as an input — is a std::invalid_argument naming the parameter.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/io/observable_spec.h"

namespace paulistrings::io {

struct QasmOptions {
  /// The circuit's width (at least the qubits the program declares); default: what it declares.
  std::optional<std::size_t> num_qubits;
  /// Values of the program's OpenQASM 3 `input` parameters, by name (every input needs one).
  std::map<std::string, double, std::less<>> inputs;
};

/// A qubit register of the program and its place among the circuit's qubits.
using QasmRegister = QubitRegister;

struct QasmProgram {
  Circuit circuit{0};
  int version = 2;  ///< 2 or 3
  /// Qubit registers in declaration order (register r's qubit i is circuit qubit offset + i).
  std::vector<QasmRegister> registers;
  /// The program's `input` parameter names, in declaration order.
  std::vector<std::string> inputs;
  /// Located one-line warnings ("file:line:column: warning: …"), e.g. a missing version line.
  std::vector<std::string> warnings;
};

/// Parses an OpenQASM program. `file` names it in messages.
QasmProgram read_qasm_program(std::string_view text, const std::string& file = "<qasm>",
                              const QasmOptions& options = {});
/// Reads and parses a file (std::runtime_error if it cannot be read).
QasmProgram load_qasm_program(const std::string& path, const QasmOptions& options = {});

/// The circuit of read_qasm_program (warnings dropped).
Circuit read_qasm(std::string_view text, const std::string& file = "<qasm>",
                  std::optional<std::size_t> num_qubits = std::nullopt);
Circuit load_qasm(const std::string& path, std::optional<std::size_t> num_qubits = std::nullopt);

}  // namespace paulistrings::io
