// The OpenQASM parser's program structure (qasm_parser.h declares the class): the version line, the
// statements of a program and their dispatch, includes, register / qubit / bit declarations, OpenQASM 3
// inputs and constants, measure and reset, and qubit arguments (indices, hardware qubits).

#include "paulistrings/io/qasm_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace paulistrings::io::qasm_detail {
namespace {

/// Decimal digits to an integer; values that do not fit saturate to the largest std::size_t.
std::size_t parse_count(std::string_view digits) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return std::numeric_limits<std::size_t>::max();
  return static_cast<std::size_t>(value);
}

constexpr std::string_view kKeywords2[] = {"OPENQASM", "include", "qreg",    "creg",  "gate",
                                           "opaque",   "barrier", "measure", "reset", "if"};
/// OpenQASM 3's keywords and type names (reserved: not usable as register, gate or parameter names).
constexpr std::string_view kKeywords3[] = {
    "OPENQASM", "include",  "qreg",     "creg",          "gate",     "opaque",  "barrier", "measure",
    "reset",    "if",       "else",     "for",           "while",    "in",      "switch",  "case",
    "default",  "def",      "defcal",   "defcalgrammar", "cal",      "extern",  "box",     "let",
    "return",   "break",    "continue", "end",           "qubit",    "bit",     "int",     "uint",
    "float",    "angle",    "complex",  "bool",          "duration", "stretch", "array",   "const",
    "mutable",  "readonly", "input",    "output",        "delay",    "gphase",  "inv",     "pow",
    "ctrl",     "negctrl",  "pi",       "tau",           "euler",    "true",    "false",   "U"};

}  // namespace

std::string count_of(std::size_t n, std::string_view word) {
  std::string out = std::to_string(n);
  out += ' ';
  out += word;
  if (n != 1) out += 's';
  return out;
}

std::string refused_construct(std::string_view word) {
  const std::string quoted = in_quotes(word);
  if (word == "if" || word == "else" || word == "switch")
    return "classical control " + quoted + " is not supported";
  if (word == "for" || word == "while") return "loop " + quoted + " is not supported";
  if (word == "def" || word == "extern" || word == "return")
    return "subroutine " + quoted + " is not supported";
  if (word == "break" || word == "continue" || word == "end")
    return "control flow " + quoted + " is not supported";
  if (word == "box" || word == "delay" || word == "duration" || word == "stretch")
    return "timing " + quoted + " is not supported";
  if (word == "defcal" || word == "defcalgrammar" || word == "cal")
    return "pulse calibration " + quoted + " is not supported";
  if (word == "int" || word == "uint" || word == "float" || word == "angle" || word == "complex" ||
      word == "bool" || word == "array" || word == "let" || word == "output" || word == "mutable" ||
      word == "readonly")
    return "classical declaration " + quoted +
           " is not supported (only bit registers, const numbers and input floats)";
  return {};
}

QasmProgram Parser::parse() {
  advance();
  parse_header();
  while (tok_.kind != TokenKind::end) parse_statement();
  for (const auto& [name, value] : options_.inputs) {
    if (std::find(inputs_.begin(), inputs_.end(), name) == inputs_.end()) {
      std::string known;
      for (const std::string& input : inputs_) known += (known.empty() ? "" : ", ") + input;
      throw std::invalid_argument(
          "parameter " + in_quotes(name) + ": " + file_ + " has no input of that name (" +
          (known.empty() ? std::string("it declares no inputs") : "its inputs: " + known) + ")");
    }
  }
  QasmProgram program;
  program.version = version_;
  program.circuit = Circuit(options_.num_qubits.value_or(std::max(total_qubits_, hardware_top_)));
  for (Channel& channel : channels_) program.circuit.append(std::move(channel));
  for (const Register& reg : quantum_registers_)
    program.registers.push_back({reg.name, reg.offset, reg.size});
  program.inputs = inputs_;
  program.warnings = std::move(warnings_);
  return program;
}

void Parser::fail_expected(std::string_view what) const {
  std::string message = "expected ";
  message += what;
  message += ", got ";
  message += describe(tok_);
  fail(tok_, message);
}

bool Parser::is_keyword(std::string_view name) const {
  if (version_ == 3)
    return std::find(std::begin(kKeywords3), std::end(kKeywords3), name) != std::end(kKeywords3);
  return std::find(std::begin(kKeywords2), std::end(kKeywords2), name) != std::end(kKeywords2);
}

void Parser::check_not_keyword(const Token& name, std::string_view what) const {
  if (is_keyword(name.text)) {
    std::string message = in_quotes(name.text);
    message += " is a reserved word and cannot be used as ";
    message += what;
    fail(name, message);
  }
}

void Parser::check_new_name(const Token& name, std::string_view what) const {
  check_not_keyword(name, what);
  if (auto it = registers_.find(name.text); it != registers_.end()) {
    fail(name, "register " + in_quotes(name.text) + " is already declared at line " +
                   std::to_string(it->second.line));
  }
  if (constants_.count(std::string(name.text))) fail(name, in_quotes(name.text) + " is already declared");
}

void Parser::fail_opaque(const Token& keyword) {
  std::string name;
  advance();
  if (tok_.kind == TokenKind::identifier) name = " " + in_quotes(tok_.text);
  fail(keyword, "opaque gate" + name + " is not supported: a gate without a definition cannot be applied");
}

void Parser::parse_header() {
  if (tok_.kind == TokenKind::end) fail(tok_, "empty program: expected the header 'OPENQASM 2.0;'");
  if (tok_.kind != TokenKind::identifier || tok_.text != "OPENQASM") {
    std::string upper(tok_.text);
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    if (tok_.kind == TokenKind::identifier && upper == "OPENQASM") {
      fail_expected("the header 'OPENQASM 2.0;' (the keyword is upper case)");
    }
    // Lenient readers take a program without a version line as OpenQASM 2.0; so does this one, saying so.
    warnings_.push_back(file_ + ":" + std::to_string(tok_.line) + ":" + std::to_string(tok_.column) +
                        ": warning: no 'OPENQASM' version line; reading the program as OpenQASM 2.0");
    build_gate_index();
    return;
  }
  advance();
  if (tok_.kind != TokenKind::integer && tok_.kind != TokenKind::real)
    fail_expected("a version number after OPENQASM");
  double version = 0.0;
  std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), version);
  if (version >= 3.0 && version < 4.0) {
    version_ = 3;
    library_ = GateLibrary::stdgates;
    lexer_.use_version_3();  // before the next token is read
  } else if (version != 2.0) {
    fail(tok_, "unsupported OpenQASM version " + in_quotes(tok_.text) + ": expected 2.0 or 3.0");
  }
  build_gate_index();
  advance();
  expect_symbol(";", "after the OPENQASM header");
}

void Parser::build_gate_index() {
  for (const std::string_view name :
       {"id",  "u0",   "x",   "y",      "z",   "h",   "s",       "sdg",   "t",     "tdg",
        "sx",  "sxdg", "rx",  "ry",     "rz",  "p",   "u1",      "phase", "u2",    "u3",
        "u",   "U",    "cx",  "CX",     "cy",  "cz",  "ch",      "swap",  "iswap", "crx",
        "cry", "crz",  "cp",  "cphase", "cu1", "cu3", "cu",      "csx",   "rxx",   "ryy",
        "rzz", "rzx",  "ccx", "cswap",  "c3x", "c4x", "c3sqrtx", "rccx",  "rc3x",  "rcccx"}) {
    if (const StandardGate* gate = find_standard_gate(name, library_)) standard_.emplace(name, gate);
  }
}

void Parser::parse_statement() {
  if (version_ == 3 && is_symbol("@")) fail(tok_, "annotations ('@' before a statement) are not supported");
  if (tok_.kind != TokenKind::identifier) {
    fail_expected(
        version_ == 3
            ? "a statement (a gate application, qubit, bit, gate, include, measure, reset or barrier)"
            : "a statement (a gate application, qreg, creg, gate, include or barrier)");
  }
  const Token head = tok_;
  const std::string_view word = head.text;
  if (word == "OPENQASM") fail(head, "the OPENQASM header may appear only once, at the start of the program");
  if (word == "include") {
    advance();
    parse_include();
  } else if (word == "qreg" || word == "creg") {
    advance();
    parse_register(word == "qreg");
  } else if (word == "gate") {
    advance();
    parse_gate_definition();
  } else if (word == "barrier") {
    advance();
    if (!(version_ == 3 && is_symbol(";"))) parse_qubit_args(head);
    expect_symbol(";", "after barrier arguments");
  } else if (word == "measure") {
    advance();
    parse_measure(head);
  } else if (word == "reset") {
    advance();
    parse_reset(head);
  } else if (word == "opaque") {
    fail_opaque(head);
  } else if (word == "if") {
    fail(head,
         "classical control 'if' is not supported (a propagated circuit has no measurement results to "
         "test)");
  } else if (version_ == 3 && (word == "qubit" || word == "bit")) {
    advance();
    parse_declaration(word == "qubit");
  } else if (version_ == 3 && word == "input") {
    advance();
    parse_input();
  } else if (version_ == 3 && word == "const") {
    advance();
    parse_const();
  } else if (const std::string refused = version_ == 3 ? refused_construct(word) : std::string();
             !refused.empty()) {
    fail(head, refused);
  } else if (auto it = registers_.find(word);
             version_ == 3 && it != registers_.end() && !it->second.quantum) {
    parse_assignment();
  } else {
    parse_gate_call();
  }
}

void Parser::parse_include() {
  if (tok_.kind != TokenKind::string) fail_expected("a file name string after include");
  const Token name = tok_;
  const std::string_view library = version_ == 3 ? "stdgates.inc" : "qelib1.inc";
  if (name.text != library) {
    fail(name, "cannot include \"" + printable(name.text) + "\": only \"" + std::string(library) +
                   "\" is available (its gates are built in)");
  }
  if (!shadowed_.empty()) {
    fail(name, "include \"" + std::string(library) + "\" would redefine gate " +
                   in_quotes(shadowed_.front().first) + " defined at line " +
                   std::to_string(shadowed_.front().second));
  }
  included_ = true;
  advance();
  expect_symbol(";", "after include");
}

void Parser::parse_register(bool quantum) {
  const Token name = expect_identifier("a register name");
  check_new_name(name, "a register name");
  expect_symbol("[", "after the register name");
  if (tok_.kind != TokenKind::integer) fail_expected("an integer register size");
  const Token size_token = tok_;
  advance();
  expect_symbol("]", "after the register size");
  expect_symbol(";", quantum ? "after qreg declaration" : "after creg declaration");
  add_register(name, size_token, parse_count(size_token.text), quantum);
}

void Parser::parse_declaration(bool quantum) {
  Token size_token = tok_;
  std::size_t size = 1;
  if (is_symbol("[")) {
    advance();
    if (tok_.kind != TokenKind::integer) fail_expected("an integer register size");
    size_token = tok_;
    size = parse_count(tok_.text);
    advance();
    expect_symbol("]", "after the register size");
  }
  const Token name = expect_identifier("a register name");
  check_new_name(name, "a register name");
  if (is_symbol("=")) fail(tok_, "initialized declarations are not supported");
  expect_symbol(";", quantum ? "after qubit declaration" : "after bit declaration");
  add_register(name, size_token, size, quantum);
}

void Parser::add_register(const Token& name, const Token& size_token, std::size_t size, bool quantum) {
  if (size == 0) fail(size_token, "register size must be at least 1, got 0");
  if (quantum) {
    if (hardware_top_ > 0)
      fail(name, "qubit registers cannot be declared in a program that uses hardware qubits ($n)");
    const std::size_t needed = saturating_add(total_qubits_, size);
    if (options_.num_qubits && needed > *options_.num_qubits) {
      fail(size_token, "the qubit registers need " + std::to_string(needed) + " qubits but num_qubits is " +
                           std::to_string(*options_.num_qubits));
    }
    if (needed > kMaxQubits) {
      fail(size_token, "too many qubits: a register of size " + printable(size_token.text) +
                           " brings the total above " + std::to_string(kMaxQubits) + ", the most supported");
    }
  } else if (size == std::numeric_limits<std::size_t>::max()) {
    fail(size_token, "register size " + printable(size_token.text) + " is too large");
  }
  std::string key(name.text);
  Register reg{key, quantum ? total_qubits_ : 0, size, name.line, quantum};
  registers_.emplace(key, reg);
  if (quantum) {
    total_qubits_ += size;
    quantum_registers_.push_back(reg);
  }
}

void Parser::parse_input() {
  const Token type = expect_identifier("a type after 'input' (float or angle)");
  if (type.text != "float" && type.text != "angle") {
    fail(type, "input of type " + in_quotes(type.text) + " is not supported (only float and angle inputs)");
  }
  skip_type_width();
  const Token name = expect_identifier("an input name");
  check_new_name(name, "an input name");
  expect_symbol(";", "after the input declaration");
  const auto it = options_.inputs.find(name.text);
  if (it == options_.inputs.end()) {
    fail(name, "input " + in_quotes(name.text) + " has no value (give one, e.g. --param " +
                   printable(name.text) + "=0.5)");
  }
  if (!std::isfinite(it->second))
    fail(name, "input " + in_quotes(name.text) + " is given a non-finite value");
  inputs_.emplace_back(name.text);
  constants_[std::string(name.text)] = it->second;
}

void Parser::parse_const() {
  const Token type = expect_identifier("a type after 'const'");
  if (type.text != "float" && type.text != "int" && type.text != "uint" && type.text != "angle") {
    fail(type, "constant of type " + in_quotes(type.text) + " is not supported (float, int, uint or angle)");
  }
  skip_type_width();
  const Token name = expect_identifier("a constant name");
  check_new_name(name, "a constant name");
  expect_symbol("=", "after the constant's name");
  scope_ = nullptr;
  const ExprPtr value = parse_expression();
  expect_symbol(";", "after the constant's value");
  constants_[std::string(name.text)] = value->value;
}

void Parser::skip_type_width() {
  if (!is_symbol("[")) return;
  advance();
  if (tok_.kind != TokenKind::integer) fail_expected("an integer width");
  advance();
  expect_symbol("]", "after the width");
}

void Parser::parse_measure(const Token& head) {
  const QubitArg qubit = parse_qubit_arg(head);
  std::optional<QubitArg> bit;
  if (is_symbol("->")) {
    advance();
    bit = parse_bit_arg();
  } else if (version_ == 2) {
    fail_expected("'->' and a classical register after the measured qubits");
  }
  expect_symbol(";", "after the measurement");
  emit_measure(qubit, bit, head);
}

void Parser::parse_assignment() {
  const Token head = tok_;
  const QubitArg bit = parse_bit_arg();
  if (!is_symbol("=")) fail_expected("'=' (the only classical statement supported is 'c = measure q;')");
  advance();
  if (!is_word("measure")) {
    fail(tok_, "classical assignment is not supported (only 'c = measure q;')");
  }
  const Token keyword = tok_;
  advance();
  const QubitArg qubit = parse_qubit_arg(keyword);
  expect_symbol(";", "after the measurement");
  emit_measure(qubit, bit, head);
}

void Parser::emit_measure(const QubitArg& qubit, const std::optional<QubitArg>& bit, const Token& head) {
  const std::size_t qubits = qubit.index || qubit.hardware ? 1 : register_of(qubit).size;
  if (bit) {
    const std::size_t bits = bit->index ? 1 : register_of(*bit).size;
    if (bits != qubits) {
      fail(bit->token, "measure: " + count_of(qubits, "qubit") + " into " + count_of(bits, "bit") +
                           " (the sizes must match)");
    }
  }
  push_per_qubit(qubit, qubits, measure_cache_, Channel::measure,
                 CallSite{head.line, head.column, "measure"});
}

template <class Make>
void Parser::push_per_qubit(const QubitArg& arg, std::size_t qubits,
                            std::unordered_map<Qubit, Channel>& cache, Make make, const CallSite& site) {
  for (std::size_t j = 0; j < qubits; ++j) {
    const Qubit q = qubit_of(arg, j);
    auto it = cache.find(q);
    if (it == cache.end()) it = cache.emplace(q, make(q)).first;
    push(it->second, site);
  }
}

void Parser::parse_reset(const Token& head) {
  const QubitArg qubit = parse_qubit_arg(head);
  expect_symbol(";", "after reset's argument");
  const std::size_t qubits = qubit.index || qubit.hardware ? 1 : register_of(qubit).size;
  push_per_qubit(
      qubit, qubits, reset_cache_, [](Qubit q) { return Channel::reset(q); },
      CallSite{head.line, head.column, "reset"});
}

QubitArg Parser::parse_bit_arg() {
  QubitArg arg;
  arg.token = tok_;
  if (tok_.kind != TokenKind::identifier) fail_expected("a classical register");
  auto it = registers_.find(tok_.text);
  if (it == registers_.end()) fail(tok_, "undeclared classical register " + in_quotes(tok_.text));
  if (it->second.quantum) {
    fail(tok_, in_quotes(tok_.text) + " is a qubit register: measurement results go to a classical register");
  }
  advance();
  if (is_symbol("[")) arg.index = parse_index(it->second);
  return arg;
}

std::string Parser::qubit_name(const QubitArg& arg, std::size_t j) const {
  if (arg.hardware) return "$" + std::to_string(*arg.hardware);
  return register_of(arg).name + "[" + std::to_string(arg.index.value_or(j)) + "]";
}

std::size_t Parser::parse_index(const Register& reg) {
  advance();  // '['
  bool negative = false;
  if (version_ == 3 && is_symbol("-")) {
    negative = true;
    advance();
  }
  if (version_ == 3 && (is_symbol("{") || is_symbol(":"))) {
    fail(tok_, "index sets and ranges are not supported: index one qubit, or name the whole register");
  }
  if (tok_.kind != TokenKind::integer)
    fail_expected(reg.quantum ? "an integer qubit index" : "an integer bit index");
  const Token index_token = tok_;
  std::size_t index = parse_count(tok_.text);
  if (negative)
    index = index == 0 || index > reg.size ? std::numeric_limits<std::size_t>::max() : reg.size - index;
  if (index >= reg.size) {
    fail(index_token, std::string(reg.quantum ? "qubit" : "bit") + " index " + (negative ? "-" : "") +
                          printable(index_token.text) + " out of range for register " + reg.name + "[" +
                          std::to_string(reg.size) + "]");
  }
  advance();
  if (version_ == 3 && is_symbol(":"))
    fail(tok_, "index ranges are not supported: index one qubit, or name the whole register");
  expect_symbol("]", reg.quantum ? "after the qubit index" : "after the bit index");
  return index;
}

QubitArg Parser::parse_qubit_arg(const Token& gate) {
  QubitArg arg;
  arg.token = tok_;
  if (tok_.kind == TokenKind::hardware) {
    if (!quantum_registers_.empty()) {
      fail(tok_, "hardware qubit " + in_quotes(tok_.text) + " in a program that declares qubit registers");
    }
    const std::size_t index = parse_count(tok_.text.substr(1));
    const std::size_t limit = options_.num_qubits.value_or(kMaxQubits);
    if (index >= limit) {
      fail(tok_, "hardware qubit " + in_quotes(tok_.text) + " is beyond the " +
                     (options_.num_qubits ? "num_qubits of " : "most supported, ") + std::to_string(limit));
    }
    arg.hardware = index;
    hardware_top_ = std::max(hardware_top_, index + 1);
    advance();
    return arg;
  }
  if (tok_.kind != TokenKind::identifier) fail_expected("a qubit argument for " + in_quotes(gate.text));
  auto it = registers_.find(tok_.text);
  if (it == registers_.end()) fail(tok_, "undeclared qubit register " + in_quotes(tok_.text));
  if (!it->second.quantum)
    fail(tok_, in_quotes(tok_.text) + " is a classical register: gates act on qubit registers");
  advance();
  if (is_symbol("[")) arg.index = parse_index(it->second);
  return arg;
}

std::vector<QubitArg> Parser::parse_qubit_args(const Token& gate) {
  std::vector<QubitArg> args;
  while (true) {
    args.push_back(parse_qubit_arg(gate));
    if (!is_symbol(",")) break;
    advance();
  }
  return args;
}

}  // namespace paulistrings::io::qasm_detail
