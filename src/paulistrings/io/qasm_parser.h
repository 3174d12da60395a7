#pragma once
// Internal to the OpenQASM reader (io/qasm.cc; not part of qasm.h): the parser's limits, the records it
// keeps (modifiers, user gate definitions, registers, qubit arguments) and the Parser class. Its member
// functions are defined by job: qasm_parser.cc (program structure, declarations, measure and reset, qubit
// arguments), qasm_parser_gates.cc (gate definitions, calls, modifiers, expansion into channels) and
// qasm_parser_expressions.cc (parameter expressions).

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "paulistrings/circuit/gate_library.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/io/qasm_expression.h"
#include "paulistrings/io/qasm_lexer.h"

namespace paulistrings::io::qasm_detail {

inline constexpr std::size_t kMaxQubits = 1024;      // Circuit's own limit
inline constexpr int kMaxExpressionNesting = 256;    // parentheses, unary signs, function calls, powers
inline constexpr int kMaxExpressionDepth = 1024;     // tree depth of an expression over gate parameters
inline constexpr std::size_t kMaxGateNesting = 256;  // user gates calling user gates
inline constexpr std::size_t kMaxGateApplications = 16000000;  // channels in the expanded program
inline constexpr std::size_t kMaxModifiedQubits = 5;           // a ctrl @ / fractional pow @ gate's qubits
inline constexpr double kPi = std::numbers::pi;

// ------------------------------------------------------------------------------------------ text

/// "1 qubit", "3 qubits": a count and its word, plural unless the count is 1.
std::string count_of(std::size_t n, std::string_view word);

/// a + b, or the largest std::size_t when that overflows.
inline std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max() : a + b;
}
/// a × b, or the largest std::size_t when that overflows.
inline std::size_t saturating_multiply(std::size_t a, std::size_t b) {
  if (a == 0 || b == 0) return 0;
  return a > std::numeric_limits<std::size_t>::max() / b ? std::numeric_limits<std::size_t>::max() : a * b;
}

// ------------------------------------------------------------------------------------------ gates

/// Why an OpenQASM 3 construct outside the subset is refused ("" when the word starts no such construct).
std::string refused_construct(std::string_view word);

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

/// A user gate definition, kept to be expanded at each call.
struct GateDef {
  std::string name;
  std::vector<std::string> params, args;
  std::vector<BodyOp> body;
  std::size_t line = 0, column = 0;
  std::size_t depth = 0;         ///< user-gate nesting below and including this one
  std::size_t applications = 0;  ///< channels one call expands to, at most (saturating; pow counted once)
};

/// A qubit or bit register (a qubit register's qubits are offset … offset + size - 1 of the circuit).
struct Register {
  std::string name;
  std::size_t offset = 0, size = 0, line = 0;
  bool quantum = true;
};

/// A qubit (or bit) argument as written: a whole register, one element (index) or a hardware qubit.
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

/// One reading of one program: OpenQASM text to a QasmProgram, or an io::ParseError at the offending token.
class Parser {
 public:
  /// Reads `text`, named `file` in messages, with `options`; parse() does the work.
  Parser(std::string_view text, const std::string& file, const QasmOptions& options)
      : lexer_(text, file), file_(file), options_(options) {}
  /// The whole program, then the check that every given input is declared: the circuit in program order.
  QasmProgram parse();

 private:
  /// What a gate name calls, and the parameters and qubit arguments it takes.
  struct GateRef {
    const StandardGate* standard = nullptr;
    bool phase = false;  ///< OpenQASM 3's gphase
    std::size_t user = 0;
    std::size_t params = 0, qubits = 0;
  };

  // ---- tokens and errors

  /// Reads the next token into tok_.
  void advance() { tok_ = lexer_.next(); }
  /// Whether the current token is the symbol `s`.
  bool is_symbol(std::string_view s) const { return tok_.kind == TokenKind::symbol && tok_.text == s; }
  /// Whether the current token is the identifier `w`.
  bool is_word(std::string_view w) const { return tok_.kind == TokenKind::identifier && tok_.text == w; }
  /// Throws a ParseError at line:column of the file.
  [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& message) const {
    throw ParseError(file_, line, column, message);
  }
  /// Throws a ParseError at the token.
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    fail(at.line, at.column, message);
  }
  /// Throws a ParseError at the outermost call of an expansion.
  [[noreturn]] void fail(const CallSite& site, const std::string& message) const {
    fail(site.line, site.column, message);
  }
  /// Throws "expected WHAT, got <the current token>" at the current token.
  [[noreturn]] void fail_expected(std::string_view what) const;
  /// Reads past `symbol`, or fails with "expected 'SYMBOL' CONTEXT, got …".
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
  /// The current token, read past, when it is an identifier; else fails with "expected WHAT".
  Token expect_identifier(std::string_view what) {
    if (tok_.kind != TokenKind::identifier) fail_expected(what);
    Token token = tok_;
    advance();
    return token;
  }
  /// Whether `name` is a reserved word of this program's OpenQASM version.
  bool is_keyword(std::string_view name) const;
  /// Fails when `name` is a reserved word (it cannot be used as `what`).
  void check_not_keyword(const Token& name, std::string_view what) const;
  /// A new name for a register or a constant: not a keyword, not taken.
  void check_new_name(const Token& name, std::string_view what) const;
  /// Refuses an `opaque` declaration, naming its gate when the next token is a name.
  [[noreturn]] void fail_opaque(const Token& keyword);

  // ---- program structure

  /// The version line (OPENQASM 2.0 or 3.0; none reads as 2.0, with a warning), then the gate index.
  void parse_header();
  /// The standard gates of this version's library (qelib1.inc or stdgates.inc) by name.
  void build_gate_index();
  /// One top-level statement, dispatched on its first word.
  void parse_statement();
  /// include "qelib1.inc"; / include "stdgates.inc"; (the keyword already read; its gates are built in)
  void parse_include();
  /// qreg/creg name[size];
  void parse_register(bool quantum);
  /// OpenQASM 3: qubit[n] name; / qubit name; / bit[n] name; / bit name;
  void parse_declaration(bool quantum);
  /// Declares a qubit or bit register, within num_qubits and the qubit limit.
  void add_register(const Token& name, const Token& size_token, std::size_t size, bool quantum);
  /// OpenQASM 3: input float[64] name; (or angle): the value comes from QasmOptions::inputs.
  void parse_input();
  /// OpenQASM 3: const float[64] name = expression; (also int, uint, angle)
  void parse_const();
  /// An optional [width] after a type name, read and ignored.
  void skip_type_width();

  // ---- measurement and reset

  /// measure q -> c;  measure q;  (the keyword already read)
  void parse_measure(const Token& head);
  /// OpenQASM 3: c[i] = measure q[i];  c = measure q;
  void parse_assignment();
  /// The measurement channels of `qubit` (one qubit or a register); `bit`'s size must match.
  void emit_measure(const QubitArg& qubit, const std::optional<QubitArg>& bit, const Token& head);
  /// One channel per qubit of `arg` (`qubits` of them), each made once per qubit by make(q) and kept in
  /// `cache`: identical applications share one channel (reading stays linear in the text).
  template <class Make>
  void push_per_qubit(const QubitArg& arg, std::size_t qubits, std::unordered_map<Qubit, Channel>& cache,
                      Make make, const CallSite& site);
  /// reset q;  reset q[i];  (the keyword already read)
  void parse_reset(const Token& head);
  /// A classical register or one of its bits: c, c[i].
  QubitArg parse_bit_arg();

  // ---- qubit arguments

  /// The register an argument names (checked to exist when the argument was read).
  const Register& register_of(const QubitArg& arg) const { return registers_.find(arg.token.text)->second; }
  /// The qubit of `arg` at broadcast position `j` (its own index or hardware qubit when it has one).
  Qubit qubit_of(const QubitArg& arg, std::size_t j) const {
    if (arg.hardware) return *arg.hardware;
    return register_of(arg).offset + arg.index.value_or(j);
  }
  /// How messages name that qubit: q[3], $3.
  std::string qubit_name(const QubitArg& arg, std::size_t j) const;
  /// [index] after a register name (OpenQASM 3: negative indices count from the end).
  std::size_t parse_index(const Register& reg);
  /// A qubit argument of `gate`: a qubit register, one of its qubits, or a hardware qubit $n.
  QubitArg parse_qubit_arg(const Token& gate);
  /// A comma-separated list of qubit arguments of `gate`.
  std::vector<QubitArg> parse_qubit_args(const Token& gate);

  // ---- gate lookup

  /// The gate a name calls: a user gate, gphase (OpenQASM 3) or a library gate; fails on other names.
  GateRef lookup_gate(const Token& name) const;
  /// The gate a body statement calls.
  static GateRef ref_of(const BodyOp& op, const std::vector<std::unique_ptr<GateDef>>& gates);
  /// The controls that ctrl @ and negctrl @ modifiers add.
  static std::size_t controls_of(const std::vector<Modifier>& modifiers);
  /// Fails unless a call gives the gate's parameters and qubit arguments (controls included).
  void check_counts(const Token& name, const GateRef& gate, std::size_t params, std::size_t qubits,
                    std::size_t controls) const;
  /// Channels one application expands to, at most (pow counted once; the expansion checks the rest).
  std::size_t applications_of(const GateRef& gate, const std::vector<Modifier>& modifiers) const;

  // ---- modifiers (OpenQASM 3)

  /// OpenQASM 3 modifiers before a gate name (inv, pow(k), ctrl(n), negctrl(n)); `scope` for pow's exponent.
  std::vector<Modifier> parse_modifiers(const std::vector<std::string>* scope);
  /// The modifiers with their exponents evaluated for these gate parameters.
  std::vector<AppliedModifier> applied(const std::vector<Modifier>& modifiers, std::span<const double> params,
                                       const CallSite& site) const;
  /// The gate with its modifiers as a phase or a controlled form (ctrl @ and fractional pow @).
  Resolved resolve(const GateRef& gate, std::span<const AppliedModifier> modifiers,
                   std::span<const double> values, const CallSite& site) const;
  /// The unitary of a defined gate of at most two qubits (its first argument the most significant factor),
  /// global phases included.
  SmallMatrix user_matrix(const GateDef& def, std::span<const double> params, const CallSite& site) const;

  // ---- gate definitions

  /// gate name(params) args { body } (the keyword already read): checked and kept for expansion.
  void parse_gate_definition();
  /// Whether `name` is a function of expressions (sin, cos, …).
  static bool is_function(std::string_view name);
  /// One statement of a gate body: a gate application, with its modifiers, or a barrier.
  void parse_body_statement(GateDef& def);
  /// Qubit arguments inside a gate body, as indices into `def`'s arguments.
  std::vector<std::size_t> parse_body_args(const GateDef& def, const Token& gate);

  // ---- gate applications

  /// A top-level gate application, broadcast over whole-register arguments, as channels.
  void parse_gate_call();

  // ---- expansion and channels

  /// An expression's value for these gate parameters; an arithmetic error is reported at `site`.
  double evaluate(const Expr& e, std::span<const double> params, const CallSite& site) const;
  /// Appends a channel to where channels go now, within the program's limit on channels.
  void push(const Channel& channel, const CallSite& site) {
    if (out_->size() >= kMaxGateApplications) {
      fail(site,
           "the program expands to more than " + std::to_string(kMaxGateApplications) + " gate applications");
    }
    out_->push_back(channel);
  }
  /// A gate without modifiers on these qubits.
  void emit_call(const GateRef& gate, std::span<const double> values, std::span<const Qubit> qubits,
                 const CallSite& site);
  /// A user gate's body on these qubits, its parameters bound to `params`.
  void expand(const GateDef& def, std::span<const double> params, std::span<const Qubit> qubits,
              const CallSite& site);
  /// A gate with modifiers: inv and integer pow on the gate's own channels; ctrl and fractional pow
  /// through its exact controlled form.
  void emit_modified(const GateRef& gate, std::span<const AppliedModifier> modifiers,
                     std::span<const double> values, std::span<const Qubit> qubits, const CallSite& site);
  /// Whether a standard gate is a one-parameter rotation (cheap to build, so not cached).
  static bool is_rotation_gate(StandardGateId id);
  /// A standard gate's channels on these qubits; applications of costly gates share cached channels.
  void emit_standard(const StandardGate& gate, std::span<const double> values, std::span<const Qubit> qubits,
                     const CallSite& site);

  // ---- expressions

  /// ( expression, … ) after a gate name; `scope` names the gate parameters expressions may use.
  std::vector<ExprPtr> parse_parameter_list(const std::vector<std::string>* scope);

  /// Counts one level of expression nesting while alive; fails past kMaxExpressionNesting.
  class Nesting;

  /// A constant leaf at the token's position.
  ExprPtr constant(double value, const Token& at) const;
  /// A unary (b empty) or binary node; folded to a constant when its operands are constants.
  ExprPtr combine(Op op, const Token& at, ExprPtr a, ExprPtr b) const;
  /// term (('+' | '-') term)*
  ExprPtr parse_expression();
  /// unary (('*' | '/') unary)*
  ExprPtr parse_term();
  /// ('-' | '+') unary, or a power.
  ExprPtr parse_unary();
  /// OpenQASM 2's '^' and OpenQASM 3's '**' (right-associative); in OpenQASM 3 '^' is a bitwise XOR.
  ExprPtr parse_power();
  /// A number, pi / tau / euler, a function call, a gate parameter, a constant or input, or ( expression ).
  ExprPtr parse_primary();

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

}  // namespace paulistrings::io::qasm_detail
