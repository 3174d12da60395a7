// OpenQASM reader, the entry points of qasm.h. The reader is a recursive-descent parser (qasm_parser.h; its
// member functions by job in qasm_parser.cc, qasm_parser_gates.cc and qasm_parser_expressions.cc) for the
// OpenQASM 2 language and the OpenQASM 3 subset documented in qasm.h, over the tokens of qasm_lexer.h. Gate
// applications become Channels in program order (the gate library, circuit/gate_library.h, says which); user
// `gate` definitions are parsed once (parameter expressions kept as small trees) and expanded inline at each
// call; a call with OpenQASM 3 modifiers is expanded as a channel sequence (inv, integer pow) or through the
// gate's exact controlled form (ctrl, fractional pow). Every problem in the text is an io::ParseError at the
// offending token; the parser bounds its recursion (expression nesting, user-gate nesting) and the number of
// channels a program expands to, so no input can overflow the stack or exhaust memory through expansion.
// Reading is linear in the text's length (identical gate applications share one channel).

#include "paulistrings/io/qasm.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/qasm_parser.h"

namespace paulistrings::io {

QasmProgram read_qasm_program(std::string_view text, const std::string& file, const QasmOptions& options) {
  if (options.num_qubits) {
    const Circuit check(*options.num_qubits);  // std::invalid_argument above the library's qubit limit
  }
  return qasm_detail::Parser(text, file, options).parse();
}

QasmProgram load_qasm_program(const std::string& path, const QasmOptions& options) {
  const std::string text = read_file(path);
  return read_qasm_program(text, path, options);
}

Circuit read_qasm(std::string_view text, const std::string& file, std::optional<std::size_t> num_qubits) {
  QasmOptions options;
  options.num_qubits = num_qubits;
  return std::move(read_qasm_program(text, file, options).circuit);
}

Circuit load_qasm(const std::string& path, std::optional<std::size_t> num_qubits) {
  QasmOptions options;
  options.num_qubits = num_qubits;
  return std::move(load_qasm_program(path, options).circuit);
}

}  // namespace paulistrings::io
