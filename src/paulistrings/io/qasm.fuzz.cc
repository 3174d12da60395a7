// Fuzz target "qasm" (testing/fuzz_target.h): OpenQASM 2 and 3 text through read_qasm_program. Documented:
// io::ParseError (file:line:column) for any bad program. Each `input TYPE[W] NAME;` the text seems to
// declare is given a value, so that programs with OpenQASM 3 inputs get past their declarations (a wrongly
// guessed name is refused like any other bad program). What the reader accepts must hold together: its
// registers lie one after another inside the circuit, and its inputs are the ones given.
#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>

#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings::io {
namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// The names after each "input": the word after the type (and its optional [width]).
QasmOptions guessed_inputs(std::string_view text) {
  QasmOptions options;
  for (std::size_t at = text.find("input"); at != std::string_view::npos; at = text.find("input", at + 1)) {
    std::size_t i = at + 5;
    const auto skip_spaces = [&] {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    skip_spaces();
    while (i < text.size() && identifier_char(text[i])) ++i;  // the type
    if (i < text.size() && text[i] == '[') {
      const std::size_t close = text.find(']', i);
      if (close == std::string_view::npos) continue;
      i = close + 1;
    }
    skip_spaces();
    const std::size_t start = i;
    while (i < text.size() && identifier_char(text[i])) ++i;
    if (i > start && options.inputs.size() < 8) options.inputs[std::string(text.substr(start, i - start))] = 0.375;
  }
  return options;
}

void require(bool condition, const char* what) {
  if (!condition) throw std::logic_error(what);
}

void fuzz_qasm(std::string_view input) {
  QasmOptions options = guessed_inputs(input);
  QasmProgram program;
  try {
    program = read_qasm_program(input, "fuzz.qasm", options);
  } catch (const ParseError&) {
    return;
  } catch (const std::invalid_argument&) {
    // Documented (qasm.h) for a value given to a name that is no input — a guess that was wrong, e.g. a
    // word after "input" in a comment. Then the program read without values must be refused with a
    // ParseError (an input without a value) or declare no inputs at all.
    if (options.inputs.empty()) throw;
    options.inputs.clear();
    try {
      program = read_qasm_program(input, "fuzz.qasm", options);
    } catch (const ParseError&) {
      return;
    }
    require(program.inputs.empty(), "a declared input was refused as undeclared");
  }
  require(program.version == 2 || program.version == 3, "a version other than 2 or 3");
  std::size_t next = 0;
  for (const QasmRegister& r : program.registers) {
    require(r.offset == next, "registers do not lie one after another");
    next = r.offset + r.size;
  }
  require(next <= program.circuit.num_qubits(), "a register past the circuit's qubits");
  for (const std::string& name : program.inputs)
    require(options.inputs.count(name) == 1, "an input that was not given");
}

}  // namespace
}  // namespace paulistrings::io

PAULISTRINGS_FUZZ_TARGET(qasm, paulistrings::io::fuzz_qasm)
