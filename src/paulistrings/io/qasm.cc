// OpenQASM reader: a recursive-descent parser for the OpenQASM 2 language and the
// OpenQASM 3 subset documented in qasm.h, over the tokens of qasm_lexer.h. Gate applications become Channels
// in program order (the gate library, circuit/gate_library.h, says which); user `gate` definitions are parsed
// once (parameter expressions kept as small trees) and expanded inline at each call; a call with OpenQASM 3
// modifiers is expanded as a channel sequence (inv, integer pow) or through the gate's exact controlled form
// (ctrl, fractional pow). Every problem in the text is an io::ParseError at the offending token; the parser
// bounds its recursion (expression nesting, user-gate nesting) and the number of channels a program
// expands to, so no input can overflow the stack or exhaust memory through expansion. Reading is linear
// in the text's length (identical gate applications share one channel).

#include "paulistrings/io/qasm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "paulistrings/circuit/gate_library.h"
#include "paulistrings/core/text.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm_expression.h"
#include "paulistrings/io/qasm_lexer.h"

namespace paulistrings::io {
namespace {

using namespace qasm_detail;  // the lexer (qasm_lexer.h) and parameter expressions (qasm_expression.h)

constexpr std::size_t kMaxQubits = 1024;                // Circuit's own limit
constexpr int kMaxExpressionNesting = 256;              // parentheses, unary signs, function calls, powers
constexpr int kMaxExpressionDepth = 1024;               // tree depth of an expression over gate parameters
constexpr std::size_t kMaxGateNesting = 256;            // user gates calling user gates
constexpr std::size_t kMaxGateApplications = 16000000;  // channels in the expanded program
constexpr std::size_t kMaxModifiedQubits = 5;           // a ctrl @ / fractional pow @ gate's qubits
constexpr double kPi = std::numbers::pi;

// ------------------------------------------------------------------------------------------ text

std::string count_of(std::size_t n, std::string_view word) {
  std::string out = std::to_string(n);
  out += ' ';
  out += word;
  if (n != 1) out += 's';
  return out;
}

/// Decimal digits to an integer; values that do not fit saturate to the largest std::size_t.
std::size_t parse_count(std::string_view digits) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return std::numeric_limits<std::size_t>::max();
  return static_cast<std::size_t>(value);
}

std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max() : a + b;
}
std::size_t saturating_multiply(std::size_t a, std::size_t b) {
  if (a == 0 || b == 0) return 0;
  return a > std::numeric_limits<std::size_t>::max() / b ? std::numeric_limits<std::size_t>::max() : a * b;
}

// ------------------------------------------------------------------------------------------ gates

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

/// Why an OpenQASM 3 construct outside the subset is refused ("" when the word starts no such construct).
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

/// Upper bound of the channels one application of a standard gate expands to.
std::size_t channel_bound(const StandardGate& gate) {
  switch (gate.id) {
    case StandardGateId::id:
    case StandardGateId::u0:
      return 0;
    case StandardGateId::ccx:
    case StandardGateId::rccx:
      return 9;
    case StandardGateId::cswap:
      return 11;
    case StandardGateId::c3x:
    case StandardGateId::c3sqrtx:
      return 17;
    case StandardGateId::rc3x:
      return 18;
    case StandardGateId::c4x:
      return 33;
    default:
      return 1;
  }
}

/// A modifier as written: inv, pow(k), ctrl(n) or negctrl(n) (n evaluated when parsed).
struct Modifier {
  enum class Kind : std::uint8_t { inv, pow, ctrl } kind = Kind::inv;
  bool negated = false;
  std::size_t count = 1;  ///< controls added (ctrl, negctrl)
  ExprPtr exponent;       ///< pow
  std::size_t line = 0, column = 0;
};

/// A modifier with its exponent evaluated.
struct AppliedModifier {
  Modifier::Kind kind;
  bool negated;
  std::size_t count;
  double exponent;
};

/// One statement of a user gate body, already resolved.
struct BodyOp {
  const StandardGate* standard = nullptr;  ///< either a standard gate…
  bool phase = false;                      ///< …or gphase…
  std::size_t gate = 0;                    ///< …or this index into the user gates
  std::vector<Modifier> modifiers;
  std::vector<ExprPtr> params;
  std::vector<std::size_t> args;  ///< indices into the gate's qubit arguments (controls first)
  std::size_t line = 0, column = 0;
};

struct GateDef {
  std::string name;
  std::vector<std::string> params, args;
  std::vector<BodyOp> body;
  std::size_t line = 0, column = 0;
  std::size_t depth = 0;         ///< user-gate nesting below and including this one
  std::size_t applications = 0;  ///< channels one call expands to, at most (saturating; pow counted once)
};

struct Register {
  std::string name;
  std::size_t offset = 0, size = 0, line = 0;
  bool quantum = true;
};

struct QubitArg {
  std::optional<std::size_t> index;
  std::optional<std::size_t> hardware;  ///< $n
  Token token;
};

/// Where an expansion started (errors inside user gates are reported at the outermost call).
struct CallSite {
  std::size_t line = 0, column = 0;
  std::string_view gate;
};

/// What a gate call resolves to for the modifiers: a global phase (gphase, no controls yet) or a
/// controlled gate.
struct Resolved {
  bool is_phase = false;
  double phase = 0.0;
  ControlledGate form;
};

// ----------------------------------------------------------------------------------------- parser

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const QasmOptions& options)
      : lexer_(text, file), file_(file), options_(options) {}

  QasmProgram parse() {
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

 private:
  struct GateRef {
    const StandardGate* standard = nullptr;
    bool phase = false;  ///< OpenQASM 3's gphase
    std::size_t user = 0;
    std::size_t params = 0, qubits = 0;
  };

  // ---- tokens and errors

  void advance() { tok_ = lexer_.next(); }
  bool is_symbol(std::string_view s) const { return tok_.kind == TokenKind::symbol && tok_.text == s; }
  bool is_word(std::string_view w) const { return tok_.kind == TokenKind::identifier && tok_.text == w; }

  [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& message) const {
    throw ParseError(file_, line, column, message);
  }
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    fail(at.line, at.column, message);
  }
  [[noreturn]] void fail(const CallSite& site, const std::string& message) const {
    fail(site.line, site.column, message);
  }
  [[noreturn]] void fail_expected(std::string_view what) const {
    std::string message = "expected ";
    message += what;
    message += ", got ";
    message += describe(tok_);
    fail(tok_, message);
  }

  void expect_symbol(std::string_view symbol, std::string_view context) {
    if (!is_symbol(symbol)) {
      std::string what = "'";
      what += symbol;
      what += "' ";
      what += context;
      fail_expected(what);
    }
    advance();
  }

  Token expect_identifier(std::string_view what) {
    if (tok_.kind != TokenKind::identifier) fail_expected(what);
    Token token = tok_;
    advance();
    return token;
  }

  bool is_keyword(std::string_view name) const {
    if (version_ == 3)
      return std::find(std::begin(kKeywords3), std::end(kKeywords3), name) != std::end(kKeywords3);
    return std::find(std::begin(kKeywords2), std::end(kKeywords2), name) != std::end(kKeywords2);
  }

  void check_not_keyword(const Token& name, std::string_view what) const {
    if (is_keyword(name.text)) {
      std::string message = in_quotes(name.text);
      message += " is a reserved word and cannot be used as ";
      message += what;
      fail(name, message);
    }
  }

  /// A new name for a register or a constant: not a keyword, not taken.
  void check_new_name(const Token& name, std::string_view what) const {
    check_not_keyword(name, what);
    if (auto it = registers_.find(name.text); it != registers_.end()) {
      fail(name, "register " + in_quotes(name.text) + " is already declared at line " +
                     std::to_string(it->second.line));
    }
    if (constants_.count(std::string(name.text))) fail(name, in_quotes(name.text) + " is already declared");
  }

  [[noreturn]] void fail_opaque(const Token& keyword) {
    std::string name;
    advance();
    if (tok_.kind == TokenKind::identifier) name = " " + in_quotes(tok_.text);
    fail(keyword, "opaque gate" + name + " is not supported: a gate without a definition cannot be applied");
  }

  // ---- program structure

  void parse_header() {
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

  void build_gate_index() {
    for (const std::string_view name :
         {"id",  "u0",   "x",   "y",      "z",   "h",   "s",       "sdg",   "t",     "tdg",
          "sx",  "sxdg", "rx",  "ry",     "rz",  "p",   "u1",      "phase", "u2",    "u3",
          "u",   "U",    "cx",  "CX",     "cy",  "cz",  "ch",      "swap",  "iswap", "crx",
          "cry", "crz",  "cp",  "cphase", "cu1", "cu3", "cu",      "csx",   "rxx",   "ryy",
          "rzz", "rzx",  "ccx", "cswap",  "c3x", "c4x", "c3sqrtx", "rccx",  "rc3x",  "rcccx"}) {
      if (const StandardGate* gate = find_standard_gate(name, library_)) standard_.emplace(name, gate);
    }
  }

  void parse_statement() {
    if (version_ == 3 && is_symbol("@")) fail(tok_, "annotations ('@' before a statement) are not supported");
    if (tok_.kind != TokenKind::identifier) {
      fail_expected(
          version_ == 3
              ? "a statement (a gate application, qubit, bit, gate, include, measure, reset or barrier)"
              : "a statement (a gate application, qreg, creg, gate, include or barrier)");
    }
    const Token head = tok_;
    const std::string_view word = head.text;
    if (word == "OPENQASM")
      fail(head, "the OPENQASM header may appear only once, at the start of the program");
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

  void parse_include() {
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

  /// qreg/creg name[size];
  void parse_register(bool quantum) {
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

  /// OpenQASM 3: qubit[n] name; / qubit name; / bit[n] name; / bit name;
  void parse_declaration(bool quantum) {
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

  void add_register(const Token& name, const Token& size_token, std::size_t size, bool quantum) {
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
                             " brings the total above " + std::to_string(kMaxQubits) +
                             ", the most supported");
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

  /// OpenQASM 3: input float[64] name; (or angle): the value comes from QasmOptions::inputs.
  void parse_input() {
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

  /// OpenQASM 3: const float[64] name = expression; (also int, uint, angle)
  void parse_const() {
    const Token type = expect_identifier("a type after 'const'");
    if (type.text != "float" && type.text != "int" && type.text != "uint" && type.text != "angle") {
      fail(type,
           "constant of type " + in_quotes(type.text) + " is not supported (float, int, uint or angle)");
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

  void skip_type_width() {
    if (!is_symbol("[")) return;
    advance();
    if (tok_.kind != TokenKind::integer) fail_expected("an integer width");
    advance();
    expect_symbol("]", "after the width");
  }

  // ---- measurement and reset

  /// measure q -> c;  measure q;  (the keyword already read)
  void parse_measure(const Token& head) {
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

  /// OpenQASM 3: c[i] = measure q[i];  c = measure q;
  void parse_assignment() {
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

  void emit_measure(const QubitArg& qubit, const std::optional<QubitArg>& bit, const Token& head) {
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

  /// One channel per qubit of `arg` (`qubits` of them), each made once per qubit by make(q) and kept in
  /// `cache`: identical applications share one channel (reading stays linear in the text).
  template <class Make>
  void push_per_qubit(const QubitArg& arg, std::size_t qubits, std::unordered_map<Qubit, Channel>& cache,
                      Make make, const CallSite& site) {
    for (std::size_t j = 0; j < qubits; ++j) {
      const Qubit q = qubit_of(arg, j);
      auto it = cache.find(q);
      if (it == cache.end()) it = cache.emplace(q, make(q)).first;
      push(it->second, site);
    }
  }

  void parse_reset(const Token& head) {
    const QubitArg qubit = parse_qubit_arg(head);
    expect_symbol(";", "after reset's argument");
    const std::size_t qubits = qubit.index || qubit.hardware ? 1 : register_of(qubit).size;
    push_per_qubit(
        qubit, qubits, reset_cache_, [](Qubit q) { return Channel::reset(q); },
        CallSite{head.line, head.column, "reset"});
  }

  QubitArg parse_bit_arg() {
    QubitArg arg;
    arg.token = tok_;
    if (tok_.kind != TokenKind::identifier) fail_expected("a classical register");
    auto it = registers_.find(tok_.text);
    if (it == registers_.end()) fail(tok_, "undeclared classical register " + in_quotes(tok_.text));
    if (it->second.quantum) {
      fail(tok_,
           in_quotes(tok_.text) + " is a qubit register: measurement results go to a classical register");
    }
    advance();
    if (is_symbol("[")) arg.index = parse_index(it->second);
    return arg;
  }

  // ---- qubit arguments

  const Register& register_of(const QubitArg& arg) const { return registers_.find(arg.token.text)->second; }

  Qubit qubit_of(const QubitArg& arg, std::size_t j) const {
    if (arg.hardware) return *arg.hardware;
    return register_of(arg).offset + arg.index.value_or(j);
  }

  std::string qubit_name(const QubitArg& arg, std::size_t j) const {
    if (arg.hardware) return "$" + std::to_string(*arg.hardware);
    return register_of(arg).name + "[" + std::to_string(arg.index.value_or(j)) + "]";
  }

  /// [index] after a register name (OpenQASM 3: negative indices count from the end).
  std::size_t parse_index(const Register& reg) {
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

  QubitArg parse_qubit_arg(const Token& gate) {
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

  std::vector<QubitArg> parse_qubit_args(const Token& gate) {
    std::vector<QubitArg> args;
    while (true) {
      args.push_back(parse_qubit_arg(gate));
      if (!is_symbol(",")) break;
      advance();
    }
    return args;
  }

  // ---- gate lookup

  GateRef lookup_gate(const Token& name) const {
    if (auto it = gate_index_.find(name.text); it != gate_index_.end()) {
      const GateDef& def = *gates_[it->second];
      return {nullptr, false, it->second, def.params.size(), def.args.size()};
    }
    if (version_ == 3 && name.text == "gphase") return {nullptr, true, 0, 1, 0};
    if (auto it = standard_.find(name.text); it != standard_.end()) {
      const StandardGate* gate = it->second;
      return {gate, false, 0, static_cast<std::size_t>(gate->params), static_cast<std::size_t>(gate->qubits)};
    }
    if (version_ == 3 && find_standard_gate(name.text, GateLibrary::qelib1) != nullptr) {
      fail(name, "unknown gate " + in_quotes(name.text) +
                     " (OpenQASM 2's qelib1.inc has it, stdgates.inc does not: define it with 'gate')");
    }
    fail(name, "unknown gate " + in_quotes(name.text));
  }

  static GateRef ref_of(const BodyOp& op, const std::vector<std::unique_ptr<GateDef>>& gates) {
    if (op.phase) return {nullptr, true, 0, 1, 0};
    if (op.standard) {
      return {op.standard, false, 0, static_cast<std::size_t>(op.standard->params),
              static_cast<std::size_t>(op.standard->qubits)};
    }
    return {nullptr, false, op.gate, gates[op.gate]->params.size(), gates[op.gate]->args.size()};
  }

  static std::size_t controls_of(const std::vector<Modifier>& modifiers) {
    std::size_t n = 0;
    for (const Modifier& m : modifiers) n += m.kind == Modifier::Kind::ctrl ? m.count : 0;
    return n;
  }

  void check_counts(const Token& name, const GateRef& gate, std::size_t params, std::size_t qubits,
                    std::size_t controls) const {
    if (params != gate.params) {
      fail(name, "gate " + in_quotes(name.text) + " takes " + count_of(gate.params, "parameter") + ", got " +
                     std::to_string(params));
    }
    if (qubits != gate.qubits + controls) {
      if (controls == 0) {
        fail(name, "gate " + in_quotes(name.text) + " takes " + count_of(gate.qubits, "qubit argument") +
                       ", got " + std::to_string(qubits));
      }
      fail(name, "gate " + in_quotes(name.text) + " with " + count_of(controls, "control") + " takes " +
                     count_of(gate.qubits + controls, "qubit argument") + ", got " + std::to_string(qubits));
    }
  }

  /// Channels one application expands to, at most (pow counted once; the expansion checks the rest).
  std::size_t applications_of(const GateRef& gate, const std::vector<Modifier>& modifiers) const {
    std::size_t base = gate.phase      ? 0
                       : gate.standard ? channel_bound(*gate.standard)
                                       : gates_[gate.user]->applications;
    bool reshaped = false;  // expanded through a controlled form
    for (const Modifier& m : modifiers) reshaped |= m.kind != Modifier::Kind::inv;
    if (!reshaped) return base;
    const std::size_t qubits = gate.qubits + controls_of(modifiers);
    return std::max(base, (std::size_t{1} << std::min<std::size_t>(qubits, 20)) + 4);
  }

  // ---- modifiers (OpenQASM 3)

  std::vector<Modifier> parse_modifiers(const std::vector<std::string>* scope) {
    std::vector<Modifier> modifiers;
    while (version_ == 3 && (is_word("inv") || is_word("pow") || is_word("ctrl") || is_word("negctrl"))) {
      Modifier m;
      m.line = tok_.line;
      m.column = tok_.column;
      const std::string_view word = tok_.text;
      advance();
      if (word == "inv") {
        m.kind = Modifier::Kind::inv;
      } else if (word == "pow") {
        m.kind = Modifier::Kind::pow;
        expect_symbol("(", "after pow");
        scope_ = scope;
        m.exponent = parse_expression();
        expect_symbol(")", "to close pow's exponent");
      } else {
        m.kind = Modifier::Kind::ctrl;
        m.negated = word == "negctrl";
        if (is_symbol("(")) {
          const Token open = tok_;
          advance();
          scope_ = nullptr;
          const ExprPtr count = parse_expression();
          expect_symbol(")", "to close the control count");
          if (!(count->value >= 1 && count->value <= 8 && count->value == std::floor(count->value))) {
            fail(open, std::string(word) + "(n): n must be an integer constant from 1 to 8, got " +
                           format_double(count->value));
          }
          m.count = static_cast<std::size_t>(count->value);
        }
      }
      expect_symbol("@", "after the modifier");
      modifiers.push_back(std::move(m));
    }
    return modifiers;
  }

  std::vector<AppliedModifier> applied(const std::vector<Modifier>& modifiers, std::span<const double> params,
                                       const CallSite& site) const {
    std::vector<AppliedModifier> out;
    for (const Modifier& m : modifiers) {
      out.push_back({m.kind, m.negated, m.count, m.exponent ? evaluate(*m.exponent, params, site) : 0.0});
    }
    return out;
  }

  /// The gate with its modifiers as a phase or a controlled form (ctrl @ and fractional pow @).
  Resolved resolve(const GateRef& gate, std::span<const AppliedModifier> modifiers,
                   std::span<const double> values, const CallSite& site) const {
    Resolved r;
    if (gate.phase) {
      r.is_phase = true;
      r.phase = values[0];
    } else if (gate.standard) {
      std::optional<ControlledGate> form = standard_gate_form(*gate.standard, values);
      if (!form) {
        fail(site, "gate " + in_quotes(gate.standard->name) +
                       " is defined only up to relative phases: ctrl @ and non-integer pow @ are not "
                       "supported on it");
      }
      r.form = std::move(*form);
    } else {
      const GateDef& def = *gates_[gate.user];
      if (def.args.size() > 2) {
        fail(site, "ctrl @ and non-integer pow @ need the matrix of gate " + in_quotes(def.name) +
                       ", which acts on " + count_of(def.args.size(), "qubit") +
                       ": they are supported on defined gates of at most two");
      }
      r.form.targets = static_cast<int>(def.args.size());
      r.form.core = user_matrix(def, values, site);
    }
    for (auto it = modifiers.rbegin(); it != modifiers.rend(); ++it) {
      switch (it->kind) {
        case Modifier::Kind::inv:
          if (r.is_phase) {
            r.phase = -r.phase;
          } else {
            r.form.core = matrix_adjoint(r.form.core);
          }
          break;
        case Modifier::Kind::pow:
          if (r.is_phase) {
            r.phase *= it->exponent;
          } else {
            r.form.core = unitary_power(r.form.core, it->exponent);
          }
          break;
        case Modifier::Kind::ctrl: {
          std::vector<bool> added(it->count, it->negated);
          if (r.is_phase) {
            // The last new control becomes the target of a phase gate: e^{iθ} where the controls hold.
            const Complex phase = std::polar(1.0, r.phase);
            r.form.targets = 1;
            r.form.core = it->negated ? SmallMatrix{phase, 0.0, 0.0, 1.0} : SmallMatrix{1.0, 0.0, 0.0, phase};
            added.pop_back();
            r.is_phase = false;
          }
          r.form.negated.insert(r.form.negated.begin(), added.begin(), added.end());
          break;
        }
      }
    }
    if (!r.is_phase && r.form.num_qubits() > kMaxModifiedQubits) {
      fail(site, "the modified gate acts on " + count_of(r.form.num_qubits(), "qubit") +
                     ": ctrl @ is supported up to " + std::to_string(kMaxModifiedQubits));
    }
    return r;
  }

  /// The unitary of a defined gate of at most two qubits (its first argument the most significant factor),
  /// global phases included.
  SmallMatrix user_matrix(const GateDef& def, std::span<const double> params, const CallSite& site) const {
    const int k = static_cast<int>(def.args.size());
    SmallMatrix m = matrix_identity(1 << k);
    for (const BodyOp& op : def.body) {
      std::vector<double> values;
      for (const ExprPtr& e : op.params) values.push_back(evaluate(*e, params, site));
      const std::vector<AppliedModifier> modifiers = applied(op.modifiers, params, site);
      const Resolved r = resolve(ref_of(op, gates_), modifiers, values, site);
      if (r.is_phase) {
        for (Complex& v : m) v *= std::polar(1.0, r.phase);
        continue;
      }
      std::vector<int> positions;
      for (std::size_t a : op.args) positions.push_back(static_cast<int>(a));
      m = matrix_multiply(embed_matrix(controlled_matrix(r.form), positions, k), m);
    }
    return m;
  }

  // ---- gate definitions

  void parse_gate_definition() {
    const Token name = expect_identifier("a gate name after 'gate'");
    check_not_keyword(name, "a gate name");
    if (auto it = gate_index_.find(name.text); it != gate_index_.end()) {
      fail(name, "gate " + in_quotes(name.text) + " is already defined at line " +
                     std::to_string(gates_[it->second]->line));
    }
    if (auto it = standard_.find(name.text); it != standard_.end()) {
      if (it->second->origin == GateOrigin::language) {
        fail(name, in_quotes(name.text) + " is a built-in gate and cannot be redefined");
      }
      if (it->second->origin == GateOrigin::library && included_) {
        fail(name, "gate " + in_quotes(name.text) + " is already defined by " +
                       (version_ == 3 ? "stdgates.inc" : "qelib1.inc"));
      }
    }
    auto def = std::make_unique<GateDef>();
    def->name = std::string(name.text);
    def->line = name.line;
    def->column = name.column;
    auto declare = [&](const Token& id, std::vector<std::string>& list, std::string_view what) {
      check_not_keyword(id, what);
      for (const auto* names : {&def->params, &def->args}) {
        for (const std::string& existing : *names) {
          if (existing == id.text)
            fail(id, in_quotes(id.text) + " is declared twice in gate " + in_quotes(def->name));
        }
      }
      list.emplace_back(id.text);
    };
    if (is_symbol("(")) {
      advance();
      if (!is_symbol(")")) {
        while (true) {
          const Token param = expect_identifier("a parameter name");
          if (param.text == "pi" || is_function(param.text)) {
            fail(param, in_quotes(param.text) + " is a reserved word and cannot be used as a parameter name");
          }
          declare(param, def->params, "a parameter name");
          if (is_symbol(",")) {
            advance();
            continue;
          }
          if (!is_symbol(")"))
            fail_expected("',' or ')' in the parameter list of gate " + in_quotes(def->name));
          break;
        }
      }
      advance();
    }
    while (true) {
      const Token arg = expect_identifier("a qubit argument name for gate " + in_quotes(def->name));
      declare(arg, def->args, "a qubit argument name");
      if (!is_symbol(",")) break;
      advance();
    }
    expect_symbol("{", "to open the body of gate " + in_quotes(def->name));
    while (!is_symbol("}")) parse_body_statement(*def);
    advance();

    std::size_t depth = 0, applications = 0;
    for (const BodyOp& op : def->body) {
      const GateRef ref = ref_of(op, gates_);
      if (!op.standard && !op.phase) depth = std::max(depth, gates_[op.gate]->depth);
      applications = saturating_add(applications, applications_of(ref, op.modifiers));
    }
    def->depth = depth + 1;
    def->applications = applications;
    if (def->depth > kMaxGateNesting) {
      fail(name, "gate " + in_quotes(def->name) + " nests user gates more than " +
                     std::to_string(kMaxGateNesting) + " levels deep");
    }
    if (auto it = standard_.find(def->name);
        it != standard_.end() && it->second->origin == GateOrigin::library) {
      shadowed_.emplace_back(def->name, def->line);
    }
    gate_index_.emplace(def->name, gates_.size());
    gates_.push_back(std::move(def));
  }

  static bool is_function(std::string_view name) {
    for (const FunctionName& f : kFunctions)
      if (f.name == name) return true;
    return false;
  }

  void parse_body_statement(GateDef& def) {
    if (tok_.kind != TokenKind::identifier) {
      fail_expected("a gate application or '}' in the body of gate " + in_quotes(def.name));
    }
    const Token head = tok_;
    if (head.text == "measure" || head.text == "reset") {
      fail(head, in_quotes(head.text) + " is not allowed inside a gate body (gates are unitary)");
    }
    if (head.text == "if") fail(head, "classical control 'if' is not supported");
    if (head.text == "opaque") fail_opaque(head);
    if (head.text == "barrier") {
      advance();
      parse_body_args(def, head);
      expect_symbol(";", "after barrier arguments");
      return;
    }
    std::vector<Modifier> modifiers = parse_modifiers(&def.params);
    if (tok_.kind != TokenKind::identifier) fail_expected("a gate name after the modifiers");
    const Token name = tok_;
    if (name.text == def.name) {
      fail(name, "gate " + in_quotes(def.name) + " cannot use itself (recursive gates are not allowed)");
    }
    if (is_keyword(name.text) && name.text != "U" && name.text != "gphase") {
      if (const std::string refused = refused_construct(name.text); version_ == 3 && !refused.empty())
        fail(name, refused);
      fail(name, in_quotes(name.text) + " is not allowed inside a gate body");
    }
    const GateRef gate = lookup_gate(name);
    advance();
    BodyOp op;
    op.standard = gate.standard;
    op.phase = gate.phase;
    op.gate = gate.user;
    op.line = name.line;
    op.column = name.column;
    op.modifiers = std::move(modifiers);
    if (is_symbol("(")) op.params = parse_parameter_list(&def.params);
    if (!(gate.phase && is_symbol(";"))) op.args = parse_body_args(def, name);
    if (!is_symbol(";")) fail_expected("';' after gate arguments");
    check_counts(name, gate, op.params.size(), op.args.size(), controls_of(op.modifiers));
    advance();
    def.body.push_back(std::move(op));
  }

  std::vector<std::size_t> parse_body_args(const GateDef& def, const Token& gate) {
    std::vector<std::size_t> args;
    while (true) {
      if (tok_.kind != TokenKind::identifier) fail_expected("a qubit argument for " + in_quotes(gate.text));
      const Token arg = tok_;
      std::size_t k = 0;
      while (k < def.args.size() && def.args[k] != arg.text) ++k;
      if (k == def.args.size()) {
        bool is_param = false;
        for (const std::string& p : def.params) is_param |= p == arg.text;
        fail(arg, is_param
                      ? in_quotes(arg.text) + " is a parameter of gate " + in_quotes(def.name) +
                            ", not a qubit argument"
                      : "unknown qubit argument " + in_quotes(arg.text) + " in gate " + in_quotes(def.name));
      }
      if (gate.text != "barrier") {
        for (std::size_t used : args) {
          if (used == k) {
            fail(arg, "qubit argument " + in_quotes(arg.text) + " is used twice in one " +
                          in_quotes(gate.text) + " gate");
          }
        }
      }
      args.push_back(k);
      advance();
      if (is_symbol("[")) fail(tok_, "qubit arguments inside a gate body cannot be indexed");
      if (!is_symbol(",")) break;
      advance();
    }
    return args;
  }

  // ---- gate applications

  void parse_gate_call() {
    std::vector<Modifier> modifiers = parse_modifiers(nullptr);
    if (tok_.kind != TokenKind::identifier) fail_expected("a gate name after the modifiers");
    const Token name = tok_;
    const GateRef gate = lookup_gate(name);
    advance();
    std::vector<double> values;
    if (is_symbol("(")) {
      for (const ExprPtr& e : parse_parameter_list(nullptr)) values.push_back(e->value);
    }
    std::vector<QubitArg> args;
    if (!(gate.phase && is_symbol(";"))) args = parse_qubit_args(name);
    if (!is_symbol(";")) fail_expected("';' after gate arguments");
    const std::size_t controls = controls_of(modifiers);
    check_counts(name, gate, values.size(), args.size(), controls);

    // Broadcasting: whole registers go element by element; their sizes must agree.
    std::size_t repeats = 1;
    const QubitArg* first_register = nullptr;
    for (const QubitArg& arg : args) {
      if (arg.index || arg.hardware) continue;
      const Register& reg = register_of(arg);
      if (first_register && register_of(*first_register).size != reg.size) {
        const Register& first = register_of(*first_register);
        fail(arg.token, "register " + in_quotes(reg.name) + " has " + count_of(reg.size, "qubit") + " but " +
                            in_quotes(first.name) + " has " + std::to_string(first.size) +
                            ": registers in one gate must have equal sizes");
      }
      if (!first_register) first_register = &arg;
      repeats = reg.size;
    }
    const std::size_t added = saturating_multiply(applications_of(gate, modifiers), repeats);
    if (saturating_add(channels_.size(), added) > kMaxGateApplications) {
      fail(name,
           "the program expands to more than " + std::to_string(kMaxGateApplications) + " gate applications");
    }

    const CallSite site{name.line, name.column, name.text};
    const std::vector<AppliedModifier> applied_modifiers = applied(modifiers, {}, site);
    std::vector<Qubit> qubits(args.size());
    for (std::size_t j = 0; j < repeats; ++j) {
      for (std::size_t k = 0; k < args.size(); ++k) {
        qubits[k] = qubit_of(args[k], j);
        for (std::size_t l = 0; l < k; ++l) {
          if (qubits[l] == qubits[k]) {
            fail(args[k].token, "qubit " + qubit_name(args[k], j) + " is used twice in one " +
                                    in_quotes(name.text) + " gate");
          }
        }
      }
      if (modifiers.empty()) {
        emit_call(gate, values, qubits, site);
      } else {
        emit_modified(gate, applied_modifiers, values, qubits, site);
      }
    }
    advance();
  }

  // ---- expansion and channels

  double evaluate(const Expr& e, std::span<const double> params, const CallSite& site) const {
    if (e.op == Op::constant) return e.value;
    if (e.op == Op::parameter) return params[e.parameter];
    const double a = evaluate(*e.a, params, site);
    const double b = e.b ? evaluate(*e.b, params, site) : 0.0;
    double out = 0.0;
    std::string error;
    if (!compute(e.op, a, b, out, error)) {
      if (version_ == 3) error = spell_power(error);
      fail(site, error + " in the expansion of gate " + in_quotes(site.gate) + " (expression at line " +
                     std::to_string(e.line) + ", column " + std::to_string(e.column) + ")");
    }
    return out;
  }

  void push(const Channel& channel, const CallSite& site) {
    if (out_->size() >= kMaxGateApplications) {
      fail(site,
           "the program expands to more than " + std::to_string(kMaxGateApplications) + " gate applications");
    }
    out_->push_back(channel);
  }

  /// A gate without modifiers on these qubits.
  void emit_call(const GateRef& gate, std::span<const double> values, std::span<const Qubit> qubits,
                 const CallSite& site) {
    if (gate.phase) return;  // a global phase
    if (gate.standard) {
      emit_standard(*gate.standard, values, qubits, site);
    } else {
      expand(*gates_[gate.user], values, qubits, site);
    }
  }

  void expand(const GateDef& def, std::span<const double> params, std::span<const Qubit> qubits,
              const CallSite& site) {
    for (const BodyOp& op : def.body) {
      std::vector<double> values;
      values.reserve(op.params.size());
      for (const ExprPtr& e : op.params) values.push_back(evaluate(*e, params, site));
      std::vector<Qubit> local;
      local.reserve(op.args.size());
      for (std::size_t k : op.args) local.push_back(qubits[k]);
      const GateRef ref = ref_of(op, gates_);
      if (op.modifiers.empty()) {
        emit_call(ref, values, local, site);
      } else {
        emit_modified(ref, applied(op.modifiers, params, site), values, local, site);
      }
    }
  }

  /// A gate with modifiers: inv and integer pow on the gate's own channels; ctrl and fractional pow
  /// through its exact controlled form.
  void emit_modified(const GateRef& gate, std::span<const AppliedModifier> modifiers,
                     std::span<const double> values, std::span<const Qubit> qubits, const CallSite& site) {
    bool reshaped = gate.phase;
    for (const AppliedModifier& m : modifiers) {
      reshaped |= m.kind == Modifier::Kind::ctrl ||
                  (m.kind == Modifier::Kind::pow && m.exponent != std::nearbyint(m.exponent));
    }
    std::vector<Channel> sequence;
    std::vector<Channel>* const saved = out_;
    out_ = &sequence;
    try {
      if (reshaped) {
        const Resolved r = resolve(gate, modifiers, values, site);
        if (!r.is_phase) append_controlled(r.form, qubits, sequence);
      } else {
        emit_call(gate, values, qubits, site);
        for (auto it = modifiers.rbegin(); it != modifiers.rend(); ++it) {
          const bool invert = it->kind == Modifier::Kind::inv || it->exponent < 0;
          if (invert) {
            std::reverse(sequence.begin(), sequence.end());
            for (Channel& c : sequence) c = c.adjoint();
          }
          if (it->kind == Modifier::Kind::pow) {
            const double times = std::abs(it->exponent);
            if (times * static_cast<double>(sequence.size()) > static_cast<double>(kMaxGateApplications)) {
              fail(site, "pow(" + format_double(it->exponent) + ") expands the program to more than " +
                             std::to_string(kMaxGateApplications) + " gate applications");
            }
            const std::vector<Channel> once = std::move(sequence);
            sequence.clear();
            for (std::size_t k = 0; k < static_cast<std::size_t>(times); ++k)
              sequence.insert(sequence.end(), once.begin(), once.end());
          }
        }
      }
    } catch (const std::invalid_argument& e) {
      out_ = saved;
      if (dynamic_cast<const ParseError*>(&e)) throw;
      fail(site, "gate " + in_quotes(site.gate) + " cannot be built: " + e.what());
    } catch (...) {
      out_ = saved;
      throw;
    }
    out_ = saved;
    for (const Channel& c : sequence) push(c, site);
  }

  static bool is_rotation_gate(StandardGateId id) {
    switch (id) {
      case StandardGateId::rx:
      case StandardGateId::ry:
      case StandardGateId::rz:
      case StandardGateId::p:
      case StandardGateId::u1:
      case StandardGateId::rxx:
      case StandardGateId::ryy:
      case StandardGateId::rzz:
      case StandardGateId::rzx:
        return true;
      default:
        return false;
    }
  }

  void emit_standard(const StandardGate& gate, std::span<const double> values, std::span<const Qubit> qubits,
                     const CallSite& site) {
    if (gate.qubits > 5) throw std::logic_error("qasm: a standard gate of more than five qubits");
    // Identical applications share their channels: a decomposition is worth keeping, as is a unitary's
    // table (kilobytes); Cliffords (whose tables are shared anyway) and rotations are cheap to build.
    const bool cached = gate.qubits >= 3 || (values.size() > 0 && !is_rotation_gate(gate.id));
    CacheKey key{};
    if (cached) {
      key.gate = static_cast<std::uint8_t>(gate.id);
      for (std::size_t k = 0; k < qubits.size(); ++k)
        key.qubits[k] = static_cast<std::uint32_t>(qubits[k] + 1);
      for (std::size_t k = 0; k < values.size(); ++k) key.params[k] = std::bit_cast<std::uint64_t>(values[k]);
      if (auto it = cache_.find(key); it != cache_.end()) {
        for (const Channel& c : it->second) push(c, site);
        return;
      }
    }
    std::vector<Channel> channels;
    std::vector<Channel>& into = cached ? channels : *out_;  // uncached: straight into the program
    try {
      append_standard_gate(gate, values, qubits, into);
    } catch (const std::invalid_argument& e) {
      fail(site, "gate " + in_quotes(gate.name) + " cannot be built: " + e.what());
    }
    if (!cached) {
      if (out_->size() > kMaxGateApplications) {
        fail(site, "the program expands to more than " + std::to_string(kMaxGateApplications) +
                       " gate applications");
      }
      return;
    }
    for (const Channel& c : channels) push(c, site);
    cache_.emplace(key, std::move(channels));
  }

  // ---- expressions

  std::vector<ExprPtr> parse_parameter_list(const std::vector<std::string>* scope) {
    scope_ = scope;
    advance();  // '('
    std::vector<ExprPtr> list;
    if (is_symbol(")")) {
      advance();
      return list;
    }
    while (true) {
      list.push_back(parse_expression());
      if (is_symbol(",")) {
        advance();
        continue;
      }
      if (!is_symbol(")")) fail_expected("',' or ')' in the parameter list");
      advance();
      return list;
    }
  }

  class Nesting {
   public:
    Nesting(Parser& parser, const Token& at) : parser_(parser) {
      if (++parser_.nesting_ > kMaxExpressionNesting) {
        parser_.fail(at, "expression nested too deeply (more than " + std::to_string(kMaxExpressionNesting) +
                             " levels)");
      }
    }
    ~Nesting() { --parser_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& parser_;
  };

  ExprPtr constant(double value, const Token& at) const {
    auto e = std::make_unique<Expr>();
    e->value = value;
    e->line = at.line;
    e->column = at.column;
    return e;
  }

  /// A unary (b empty) or binary node; folded to a constant when its operands are constants.
  ExprPtr combine(Op op, const Token& at, ExprPtr a, ExprPtr b) const {
    if (a->op == Op::constant && (!b || b->op == Op::constant)) {
      double out = 0.0;
      std::string error;
      if (!compute(op, a->value, b ? b->value : 0.0, out, error))
        fail(at, version_ == 3 ? spell_power(error) : error);
      return constant(out, at);
    }
    auto e = std::make_unique<Expr>();
    e->op = op;
    e->line = at.line;
    e->column = at.column;
    e->depth = 1 + std::max(a->depth, b ? b->depth : 0);
    if (e->depth > kMaxExpressionDepth) {
      fail(at,
           "expression too long (more than " + std::to_string(kMaxExpressionDepth) + " nested operations)");
    }
    e->a = std::move(a);
    e->b = std::move(b);
    return e;
  }

  ExprPtr parse_expression() {
    ExprPtr lhs = parse_term();
    while (is_symbol("+") || is_symbol("-")) {
      const Token op = tok_;
      advance();
      lhs = combine(op.text == "+" ? Op::add : Op::subtract, op, std::move(lhs), parse_term());
    }
    return lhs;
  }

  ExprPtr parse_term() {
    ExprPtr lhs = parse_unary();
    while (is_symbol("*") || is_symbol("/")) {
      const Token op = tok_;
      advance();
      lhs = combine(op.text == "*" ? Op::multiply : Op::divide, op, std::move(lhs), parse_unary());
    }
    return lhs;
  }

  ExprPtr parse_unary() {
    if (is_symbol("-") || is_symbol("+")) {
      const Token op = tok_;
      Nesting nesting(*this, op);
      advance();
      ExprPtr operand = parse_unary();
      return op.text == "-" ? combine(Op::negate, op, std::move(operand), nullptr) : std::move(operand);
    }
    return parse_power();
  }

  /// OpenQASM 2's '^' and OpenQASM 3's '**' (right-associative); in OpenQASM 3 '^' is a bitwise XOR.
  ExprPtr parse_power() {
    ExprPtr base = parse_primary();
    if (version_ == 3 && is_symbol("^"))
      fail(tok_, "'^' is a bitwise XOR in OpenQASM 3, not a power (use '**')");
    if (!is_symbol(version_ == 3 ? "**" : "^")) return base;
    const Token op = tok_;
    Nesting nesting(*this, op);
    advance();
    return combine(Op::power, op, std::move(base), parse_unary());
  }

  ExprPtr parse_primary() {
    const Token token = tok_;
    if (token.kind == TokenKind::integer || token.kind == TokenKind::real) {
      double value = 0.0;
      const auto [end, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
      if (ec != std::errc() || end != token.text.data() + token.text.size() || !std::isfinite(value)) {
        fail(token, "number " + in_quotes(token.text) + " is out of the range of a double");
      }
      advance();
      return constant(value, token);
    }
    if (token.kind == TokenKind::identifier) {
      if (token.text == "pi" || (version_ == 3 && token.text == "π")) {
        advance();
        return constant(kPi, token);
      }
      if (version_ == 3 && (token.text == "tau" || token.text == "τ")) {
        advance();
        return constant(2 * kPi, token);
      }
      if (version_ == 3 && (token.text == "euler" || token.text == "ℇ")) {
        advance();
        return constant(std::numbers::e, token);
      }
      for (const FunctionName& f : kFunctions) {
        if (f.name != token.text || (f.version3_only && version_ != 3)) continue;
        Nesting nesting(*this, token);
        advance();
        expect_symbol("(", "after " + in_quotes(token.text));
        ExprPtr argument = parse_expression();
        expect_symbol(")", "to close the argument of " + in_quotes(token.text));
        return combine(f.op, token, std::move(argument), nullptr);
      }
      if (scope_) {
        for (std::size_t k = 0; k < scope_->size(); ++k) {
          if ((*scope_)[k] == token.text) {
            advance();
            auto e = constant(0.0, token);
            e->op = Op::parameter;
            e->parameter = k;
            return e;
          }
        }
      }
      if (auto it = constants_.find(std::string(token.text)); it != constants_.end()) {
        advance();
        return constant(it->second, token);
      }
      fail(token, "unknown identifier " + in_quotes(token.text) + " in expression (expected a number, pi, " +
                      (version_ == 3 ? "a constant or input, " : "") + "sin cos tan exp ln sqrt" +
                      (scope_ ? ", or a parameter of the gate)" : ")"));
    }
    if (is_symbol("(")) {
      Nesting nesting(*this, token);
      advance();
      ExprPtr inner = parse_expression();
      expect_symbol(")", "to close the '(' at line " + std::to_string(token.line) + ", column " +
                             std::to_string(token.column));
      return inner;
    }
    fail_expected("an expression");
  }

  // ---- state

  struct CacheKey {
    std::uint8_t gate = 0;
    std::array<std::uint32_t, 5> qubits{};
    std::array<std::uint64_t, 4> params{};
    bool operator==(const CacheKey&) const = default;
  };
  struct CacheHash {
    std::size_t operator()(const CacheKey& k) const {
      std::uint64_t h = k.gate;
      for (std::uint32_t q : k.qubits) h = (h ^ q) * 0x100000001b3ULL;
      for (std::uint64_t p : k.params) h = (h ^ p) * 0x100000001b3ULL;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };

  Lexer lexer_;
  const std::string& file_;
  const QasmOptions& options_;
  Token tok_;
  int version_ = 2;
  GateLibrary library_ = GateLibrary::qelib1;
  std::unordered_map<std::string_view, const StandardGate*> standard_;
  std::map<std::string, Register, std::less<>> registers_;  ///< qubit and bit registers share one namespace
  std::vector<Register> quantum_registers_;                 ///< in declaration order
  std::size_t total_qubits_ = 0;
  std::size_t hardware_top_ = 0;  ///< largest hardware qubit used + 1
  std::map<std::string, double, std::less<>> constants_;
  std::vector<std::string> inputs_;
  std::vector<std::string> warnings_;
  std::vector<std::unique_ptr<GateDef>> gates_;
  std::map<std::string, std::size_t, std::less<>> gate_index_;
  std::vector<std::pair<std::string, std::size_t>> shadowed_;  ///< library names defined by the program
  bool included_ = false;
  const std::vector<std::string>* scope_ = nullptr;  ///< parameters visible in expressions
  int nesting_ = 0;
  std::unordered_map<CacheKey, std::vector<Channel>, CacheHash> cache_;
  std::unordered_map<Qubit, Channel> measure_cache_, reset_cache_;
  std::vector<Channel> channels_;
  std::vector<Channel>* out_ = &channels_;  ///< where channels go (a modified call collects its own first)
};

}  // namespace

QasmProgram read_qasm_program(std::string_view text, const std::string& file, const QasmOptions& options) {
  if (options.num_qubits) {
    const Circuit check(*options.num_qubits);  // std::invalid_argument above the library's qubit limit
  }
  return Parser(text, file, options).parse();
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
