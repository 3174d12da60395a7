#pragma once
// OpenQASM 2.0 reader: turns a program over qelib1.inc's gates into a Circuit (one channel per
// gate application, in program order). Supported: OPENQASM 2.0 header, include "qelib1.inc",
// qreg declarations (several registers are laid out one after another in declaration order),
// creg declarations (accepted, unused), user `gate` definitions (expanded inline), register
// broadcasting (`h q;`, `cx a, b;` over equal-size registers), parameter expressions (pi, + - * / ^,
// unary minus, sin cos tan exp ln sqrt), comments, and the gates
//   id x y z h s sdg t tdg sx sxdg rx ry rz p u1 u2 u3 u cx cy cz swap ch crx cry crz cp rxx ryy rzz
// (also CX and U). `barrier` is ignored. `measure`, `reset`, `if` and `opaque` are rejected with a
// message saying the propagator cannot represent them. Any error throws io::ParseError located at
// file:line:column.
//
// Conventions: rz(θ) = exp(−iθZ/2); u3(θ,φ,λ) = Rz(φ)Ry(θ)Rz(λ) up to global phase (OpenQASM 2 spec);
// p(λ) = u1(λ) = rz(λ) up to a global phase, which a Pauli propagator cannot see; t = rz(π/4),
// tdg = rz(−π/4) likewise; the first argument of a two-qubit gate is `q0` of Channel::unitary_2q.

#include <optional>
#include <string>
#include <string_view>

#include "paulistrings/circuit/circuit.h"

namespace paulistrings::io {

/// Parses an OpenQASM 2.0 program. `file` is only used in error messages. The circuit has as many
/// qubits as all qreg declarations together, or `num_qubits` when given (which must be at least that).
Circuit read_qasm(std::string_view text, const std::string& file = "<qasm>",
                  std::optional<std::size_t> num_qubits = std::nullopt);

/// Reads and parses a file (std::runtime_error if it cannot be read).
Circuit load_qasm(const std::string& path, std::optional<std::size_t> num_qubits = std::nullopt);

}  // namespace paulistrings::io
