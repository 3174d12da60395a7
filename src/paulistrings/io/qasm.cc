// OpenQASM 2.0 reader: a hand-written lexer and recursive-descent parser for the subset documented
// in qasm.h. Gate applications become Channels in program order; user `gate` definitions are
// parsed once (their parameter expressions kept as small trees) and expanded inline at each call.
// Every problem in the text is reported as an io::ParseError located at the offending token; the
// parser bounds its recursion (expression nesting, user-gate nesting) and the total number of gate
// applications, so no input can overflow the stack or exhaust memory through expansion.

#include "paulistrings/io/qasm.h"

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
#include <utility>
#include <vector>

#include "paulistrings/core/text.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/parse_error.h"

namespace paulistrings::io {
namespace {

constexpr std::size_t kMaxQubits = 1024;               // Circuit's own limit
constexpr int kMaxExpressionNesting = 256;             // parentheses, unary signs, function calls, '^'
constexpr int kMaxExpressionDepth = 1024;              // tree depth of an expression over gate parameters
constexpr std::size_t kMaxGateNesting = 256;           // user gates calling user gates
constexpr std::size_t kMaxGateApplications = 4000000;  // channels in the expanded program
constexpr std::size_t kMaxShownChars = 40;             // of a token quoted in a message
constexpr double kPi = std::numbers::pi;

// ------------------------------------------------------------------------------------------ text

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_char(char c) { return is_letter(c) || is_digit(c); }

/// `text` made safe for a one-line message: control and non-ASCII bytes as \xNN, long text cut.
std::string printable(std::string_view text) {
  std::string out;
  const std::size_t shown = std::min(text.size(), kMaxShownChars);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02X", static_cast<unsigned>(byte));
      out += buffer;
    }
  }
  if (shown < text.size()) out += "...";
  return out;
}

std::string in_quotes(std::string_view text) {
  std::string out = "'";
  out += printable(text);
  out += "'";
  return out;
}

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

// ----------------------------------------------------------------------------------------- lexer

enum class TokenKind : std::uint8_t { end, identifier, integer, real, string, symbol };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view text;  ///< for strings: the contents without the quotes
  std::size_t line = 1;
  std::size_t column = 1;
};

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::end:
      return "end of file";
    case TokenKind::string: {
      std::string out = "string \"";
      out += printable(token.text);
      out += '"';
      return out;
    }
    case TokenKind::integer:
    case TokenKind::real: {
      std::string out = "number ";
      out += in_quotes(token.text);
      return out;
    }
    default:
      return in_quotes(token.text);
  }
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte-order mark
  }

  Token next() {
    skip_space_and_comments();
    Token token;
    token.line = line_;
    token.column = column_;
    if (pos_ >= text_.size()) return token;
    const std::size_t start = pos_;
    const char c = text_[pos_];
    if (is_letter(c)) {
      while (pos_ < text_.size() && is_identifier_char(text_[pos_])) advance();
      token.kind = TokenKind::identifier;
    } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      token.kind = lex_number(token);
    } else if (c == '"') {
      advance();
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') advance();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        throw ParseError(file_, token.line, token.column, "unterminated string (missing closing '\"')");
      }
      advance();
      token.kind = TokenKind::string;
      token.text = text_.substr(start + 1, pos_ - start - 2);
      return token;
    } else if ((c == '-' && peek(1) == '>') || (c == '=' && peek(1) == '=')) {
      advance();
      advance();
      token.kind = TokenKind::symbol;
    } else if (std::string_view(";,()[]{}+-*/^").find(c) != std::string_view::npos) {
      advance();
      token.kind = TokenKind::symbol;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      std::string message;
      if (byte >= 0x20 && byte < 0x7f) {
        message = "unexpected character ";
        message += in_quotes(std::string_view(&c, 1));
      } else {
        char buffer[48];
        std::snprintf(buffer, sizeof buffer, "unexpected byte 0x%02X (not OpenQASM text)",
                      static_cast<unsigned>(byte));
        message = buffer;
      }
      throw ParseError(file_, token.line, token.column, message);
    }
    token.text = text_.substr(start, pos_ - start);
    return token;
  }

 private:
  char peek(std::size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        const std::size_t line = line_, column = column_;
        advance();
        advance();
        while (pos_ < text_.size() && !(text_[pos_] == '*' && peek(1) == '/')) advance();
        if (pos_ >= text_.size()) {
          throw ParseError(file_, line, column, "unterminated block comment (missing '*/')");
        }
        advance();
        advance();
      } else {
        return;
      }
    }
  }

  /// digits [. digits] [e|E [+|-] digits], or . digits [exponent]; anything glued on is an error.
  TokenKind lex_number(const Token& token) {
    const std::size_t start = pos_;
    bool real = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      real = true;
      advance();
      while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      const char after = peek(1);
      if (is_digit(after) || ((after == '+' || after == '-') && is_digit(peek(2)))) {
        real = true;
        advance();
        if (!is_digit(text_[pos_])) advance();
        while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
      }
    }
    if (pos_ < text_.size() && (is_identifier_char(text_[pos_]) || text_[pos_] == '.')) {
      while (pos_ < text_.size() && (is_identifier_char(text_[pos_]) || text_[pos_] == '.' ||
                                     ((text_[pos_] == '+' || text_[pos_] == '-') &&
                                      (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
        advance();
      }
      std::string message = "malformed number ";
      message += in_quotes(text_.substr(start, pos_ - start));
      throw ParseError(file_, token.line, token.column, message);
    }
    return real ? TokenKind::real : TokenKind::integer;
  }

  std::string_view text_;
  const std::string& file_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t column_ = 1;
};

// ----------------------------------------------------------------------------------- expressions

// clang-format off
enum class Op : std::uint8_t {
  constant, parameter, negate, add, subtract, multiply, divide, power, sin, cos, tan, exp, ln, sqrt
};
// clang-format on

struct Expr {
  Op op = Op::constant;
  double value = 0.0;
  std::size_t parameter = 0;
  std::unique_ptr<Expr> a, b;
  std::size_t line = 0, column = 0;  ///< the operator's (or leaf's) token
  int depth = 1;
};
using ExprPtr = std::unique_ptr<Expr>;

struct FunctionName {
  std::string_view name;
  Op op;
};
constexpr FunctionName kFunctions[] = {{"sin", Op::sin}, {"cos", Op::cos}, {"tan", Op::tan},
                                       {"exp", Op::exp}, {"ln", Op::ln},   {"sqrt", Op::sqrt}};

std::string_view op_name(Op op) {
  switch (op) {
    case Op::negate:
      return "unary '-'";
    case Op::add:
      return "'+'";
    case Op::subtract:
      return "'-'";
    case Op::multiply:
      return "'*'";
    case Op::divide:
      return "'/'";
    case Op::power:
      return "'^'";
    case Op::sin:
      return "sin";
    case Op::cos:
      return "cos";
    case Op::tan:
      return "tan";
    case Op::exp:
      return "exp";
    case Op::ln:
      return "ln";
    case Op::sqrt:
      return "sqrt";
    default:
      return "expression";
  }
}

/// Applies one operator; on a zero divisor or a non-finite result returns false with `error` set.
bool compute(Op op, double a, double b, double& out, std::string& error) {
  switch (op) {
    case Op::negate:
      out = -a;
      break;
    case Op::add:
      out = a + b;
      break;
    case Op::subtract:
      out = a - b;
      break;
    case Op::multiply:
      out = a * b;
      break;
    case Op::divide:
      if (b == 0.0) {
        error = "division by zero";
        return false;
      }
      out = a / b;
      break;
    case Op::power:
      out = std::pow(a, b);
      break;
    case Op::sin:
      out = std::sin(a);
      break;
    case Op::cos:
      out = std::cos(a);
      break;
    case Op::tan:
      out = std::tan(a);
      break;
    case Op::exp:
      out = std::exp(a);
      break;
    case Op::ln:
      out = std::log(a);
      break;
    case Op::sqrt:
      out = std::sqrt(a);
      break;
    default:
      out = a;
      break;
  }
  if (std::isfinite(out)) return true;
  error = std::string(op_name(op));
  error += " gives a non-finite value (";
  error += format_double(out);
  error += ") where a finite number is expected";
  return false;
}

// ------------------------------------------------------------------------------------------ gates

// clang-format off
enum class Builtin : std::uint8_t {
  id, x, y, z, h, s, sdg, t, tdg, sx, sxdg, rx, ry, rz, p, u2, u3,
  cx, cy, cz, swap, ch, crx, cry, crz, cp, rxx, ryy, rzz
};
// clang-format on

/// Who defines a built-in name, which decides whether a program may define a gate of that name.
enum class Origin : std::uint8_t {
  language,   ///< U and CX: never redefinable
  qelib1,     ///< in qelib1.inc: redefinable only by a program that does not include it
  extension,  ///< built in here but absent from qelib1.inc (ryy): a program's definition wins
};

struct BuiltinInfo {
  std::string_view name;
  Builtin gate;
  std::size_t params;
  std::size_t qubits;
  Origin origin;
};

constexpr Origin L = Origin::language, Q = Origin::qelib1, E = Origin::extension;
// clang-format off
constexpr BuiltinInfo kBuiltins[] = {
    {"id", Builtin::id, 0, 1, Q},     {"x", Builtin::x, 0, 1, Q},       {"y", Builtin::y, 0, 1, Q},
    {"z", Builtin::z, 0, 1, Q},       {"h", Builtin::h, 0, 1, Q},       {"s", Builtin::s, 0, 1, Q},
    {"sdg", Builtin::sdg, 0, 1, Q},   {"t", Builtin::t, 0, 1, Q},       {"tdg", Builtin::tdg, 0, 1, Q},
    {"sx", Builtin::sx, 0, 1, Q},     {"sxdg", Builtin::sxdg, 0, 1, Q}, {"rx", Builtin::rx, 1, 1, Q},
    {"ry", Builtin::ry, 1, 1, Q},     {"rz", Builtin::rz, 1, 1, Q},     {"p", Builtin::p, 1, 1, Q},
    {"u1", Builtin::p, 1, 1, Q},      {"u2", Builtin::u2, 2, 1, Q},     {"u3", Builtin::u3, 3, 1, Q},
    {"u", Builtin::u3, 3, 1, Q},      {"U", Builtin::u3, 3, 1, L},      {"cx", Builtin::cx, 0, 2, Q},
    {"CX", Builtin::cx, 0, 2, L},     {"cy", Builtin::cy, 0, 2, Q},     {"cz", Builtin::cz, 0, 2, Q},
    {"swap", Builtin::swap, 0, 2, Q}, {"ch", Builtin::ch, 0, 2, Q},     {"crx", Builtin::crx, 1, 2, Q},
    {"cry", Builtin::cry, 1, 2, Q},   {"crz", Builtin::crz, 1, 2, Q},   {"cp", Builtin::cp, 1, 2, Q},
    {"cu1", Builtin::cp, 1, 2, Q},    {"rxx", Builtin::rxx, 1, 2, Q},   {"ryy", Builtin::ryy, 1, 2, E},
    {"rzz", Builtin::rzz, 1, 2, Q},
};
// clang-format on

/// qelib1.inc gates this reader does not provide (three or more qubits, or outside the subset).
constexpr std::string_view kUnsupportedQelib[] = {"ccx", "cswap", "cu3",  "cu",    "csx", "c3x", "c3sqrtx",
                                                  "c4x", "rccx",  "rc3x", "rcccx", "u0",  "cu0"};

constexpr std::string_view kKeywords[] = {"OPENQASM", "include", "qreg",    "creg",  "gate",
                                          "opaque",   "barrier", "measure", "reset", "if"};

const BuiltinInfo* find_builtin(std::string_view name) {
  for (const BuiltinInfo& info : kBuiltins)
    if (info.name == name) return &info;
  return nullptr;
}

bool is_keyword(std::string_view name) {
  for (std::string_view k : kKeywords)
    if (k == name) return true;
  return false;
}

bool is_function(std::string_view name) {
  for (const FunctionName& f : kFunctions)
    if (f.name == name) return true;
  return false;
}

using Matrix2 = std::array<Complex, 4>;

Matrix2 u3_matrix(double theta, double phi, double lambda) {
  const double c = std::cos(theta / 2), s = std::sin(theta / 2);
  return {Complex(c), -std::polar(s, lambda), std::polar(s, phi), std::polar(c, phi + lambda)};
}

/// |0⟩⟨0| ⊗ I + |1⟩⟨1| ⊗ U on |control target⟩ (control = the more significant factor).
std::array<Complex, 16> controlled(const Matrix2& u) {
  std::array<Complex, 16> m{};
  m[0] = 1.0;
  m[5] = 1.0;
  m[10] = u[0];
  m[11] = u[1];
  m[14] = u[2];
  m[15] = u[3];
  return m;
}

Channel make_channel(Builtin gate, std::span<const double> v, std::span<const Qubit> q) {
  const Complex i(0.0, 1.0);
  switch (gate) {
    case Builtin::x:
      return Channel::x(q[0]);
    case Builtin::y:
      return Channel::y(q[0]);
    case Builtin::z:
      return Channel::z(q[0]);
    case Builtin::h:
      return Channel::h(q[0]);
    case Builtin::s:
      return Channel::s(q[0]);
    case Builtin::sdg:
      return Channel::sdg(q[0]);
    case Builtin::t:
      return Channel::rz(kPi / 4, q[0]);
    case Builtin::tdg:
      return Channel::rz(-kPi / 4, q[0]);
    case Builtin::sx:
      return Channel::sx(q[0]);
    case Builtin::sxdg:
      return Channel::sxdg(q[0]);
    case Builtin::rx:
      return Channel::rx(v[0], q[0]);
    case Builtin::ry:
      return Channel::ry(v[0], q[0]);
    case Builtin::rz:
    case Builtin::p:
      return Channel::rz(v[0], q[0]);
    case Builtin::u2:
      return Channel::unitary_1q(q[0], u3_matrix(kPi / 2, v[0], v[1]));
    case Builtin::u3:
      return Channel::unitary_1q(q[0], u3_matrix(v[0], v[1], v[2]));
    case Builtin::cx:
      return Channel::cnot(q[0], q[1]);
    case Builtin::cy:
      return Channel::cy(q[0], q[1]);
    case Builtin::cz:
      return Channel::cz(q[0], q[1]);
    case Builtin::swap:
      return Channel::swap(q[0], q[1]);
    case Builtin::ch: {
      const double r = std::numbers::sqrt2 / 2;
      return Channel::unitary_2q(q[0], q[1], controlled({r, r, r, -r}));
    }
    case Builtin::crx: {
      const double c = std::cos(v[0] / 2), s = std::sin(v[0] / 2);
      return Channel::unitary_2q(q[0], q[1], controlled({c, -i * s, -i * s, c}));
    }
    case Builtin::cry: {
      const double c = std::cos(v[0] / 2), s = std::sin(v[0] / 2);
      return Channel::unitary_2q(q[0], q[1], controlled({c, -s, s, c}));
    }
    case Builtin::crz:
      return Channel::unitary_2q(
          q[0], q[1], controlled({std::polar(1.0, -v[0] / 2), 0.0, 0.0, std::polar(1.0, v[0] / 2)}));
    case Builtin::cp:
      return Channel::unitary_2q(q[0], q[1], controlled({1.0, 0.0, 0.0, std::polar(1.0, v[0])}));
    case Builtin::rxx:
      return Channel::rxx(v[0], q[0], q[1]);
    case Builtin::ryy:
      return Channel::ryy(v[0], q[0], q[1]);
    case Builtin::rzz:
      return Channel::rzz(v[0], q[0], q[1]);
    case Builtin::id:
      break;
  }
  throw std::logic_error("qasm: no channel for the identity");
}

/// One statement of a user gate body, already resolved.
struct BodyOp {
  const BuiltinInfo* builtin = nullptr;  ///< either this…
  std::size_t gate = 0;                  ///< …or this index into the user gates
  std::vector<ExprPtr> params;
  std::vector<std::size_t> args;  ///< indices into the gate's qubit arguments
  std::size_t line = 0, column = 0;
};

struct GateDef {
  std::string name;
  std::vector<std::string> params, args;
  std::vector<BodyOp> body;
  std::size_t line = 0, column = 0;
  std::size_t depth = 0;         ///< user-gate nesting below and including this one
  std::size_t applications = 0;  ///< channels one call expands to (saturating)
};

struct Register {
  std::string name;
  std::size_t offset = 0, size = 0, line = 0;
  bool quantum = true;
};

struct QubitArg {
  std::optional<std::size_t> index;
  Token token;
};

/// Where an expansion started (errors inside user gates are reported at the outermost call).
struct CallSite {
  std::size_t line = 0, column = 0;
  std::string_view gate;
};

// ----------------------------------------------------------------------------------------- parser

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, std::optional<std::size_t> num_qubits)
      : lexer_(text, file), file_(file), num_qubits_(num_qubits) {}

  Circuit parse() {
    advance();
    parse_header();
    while (tok_.kind != TokenKind::end) parse_statement();
    Circuit circuit(num_qubits_.value_or(total_qubits_));
    for (Channel& channel : channels_) circuit.append(std::move(channel));
    return circuit;
  }

 private:
  // ---- tokens and errors

  void advance() { tok_ = lexer_.next(); }
  bool is_symbol(std::string_view s) const { return tok_.kind == TokenKind::symbol && tok_.text == s; }

  [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& message) const {
    throw ParseError(file_, line, column, message);
  }
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    fail(at.line, at.column, message);
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

  void check_not_keyword(const Token& name, std::string_view what) const {
    if (is_keyword(name.text)) {
      std::string message = in_quotes(name.text);
      message += " is a reserved word and cannot be used as ";
      message += what;
      fail(name, message);
    }
  }

  [[noreturn]] void fail_unsupported(const Token& keyword) const {
    std::string message;
    if (keyword.text == "measure") {
      message = "measure is not supported: a Pauli propagator has no mid-circuit measurement";
    } else if (keyword.text == "reset") {
      message = "reset is not supported: a Pauli propagator cannot represent a non-unitary reset";
    } else if (keyword.text == "if") {
      message = "if is not supported: a Pauli propagator has no classical control";
    } else {
      message = "opaque is not supported: a gate without a definition cannot be propagated";
    }
    fail(keyword, message);
  }

  bool is_unsupported_statement(const Token& token) const {
    return token.text == "measure" || token.text == "reset" || token.text == "if" || token.text == "opaque";
  }

  // ---- program structure

  void parse_header() {
    if (tok_.kind == TokenKind::end) fail(tok_, "empty program: expected the header 'OPENQASM 2.0;'");
    if (tok_.kind != TokenKind::identifier || tok_.text != "OPENQASM") {
      fail_expected("the header 'OPENQASM 2.0;' at the start of the program");
    }
    advance();
    if (tok_.kind != TokenKind::integer && tok_.kind != TokenKind::real) {
      fail_expected("a version number after OPENQASM");
    }
    double version = 0.0;
    std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), version);
    if (version != 2.0) {
      std::string message;
      if (version >= 3.0 && version < 4.0) {
        message = "OpenQASM 3 is not supported: this reader accepts OPENQASM 2.0 only";
      } else {
        message = "unsupported OpenQASM version ";
        message += in_quotes(tok_.text);
        message += ": expected 2.0";
      }
      fail(tok_, message);
    }
    advance();
    expect_symbol(";", "after the OPENQASM header");
  }

  void parse_statement() {
    if (tok_.kind != TokenKind::identifier) {
      fail_expected("a statement (a gate application, qreg, creg, gate, include or barrier)");
    }
    const Token head = tok_;
    if (head.text == "OPENQASM") {
      fail(head, "the OPENQASM header may appear only once, at the start of the program");
    } else if (head.text == "include") {
      advance();
      parse_include();
    } else if (head.text == "qreg" || head.text == "creg") {
      advance();
      parse_register(head.text == "qreg");
    } else if (head.text == "gate") {
      advance();
      parse_gate_definition();
    } else if (head.text == "barrier") {
      advance();
      parse_qubit_args(head);
      expect_symbol(";", "after barrier arguments");
    } else if (is_unsupported_statement(head)) {
      fail_unsupported(head);
    } else {
      parse_gate_call();
    }
  }

  void parse_include() {
    if (tok_.kind != TokenKind::string) fail_expected("a file name string after include");
    const Token name = tok_;
    if (name.text != "qelib1.inc") {
      std::string message = "cannot include \"";
      message += printable(name.text);
      message += "\": only \"qelib1.inc\" is available (its gates are built in)";
      fail(name, message);
    }
    if (!shadowed_.empty()) {
      std::string message = "include \"qelib1.inc\" would redefine gate ";
      message += in_quotes(shadowed_.front().first);
      message += " defined at line ";
      message += std::to_string(shadowed_.front().second);
      fail(name, message);
    }
    included_ = true;
    advance();
    expect_symbol(";", "after include");
  }

  void parse_register(bool quantum) {
    const Token name = expect_identifier("a register name");
    check_not_keyword(name, "a register name");
    if (auto it = registers_.find(name.text); it != registers_.end()) {
      std::string message = "register ";
      message += in_quotes(name.text);
      message += " is already declared at line ";
      message += std::to_string(it->second.line);
      fail(name, message);
    }
    expect_symbol("[", "after the register name");
    if (tok_.kind != TokenKind::integer) fail_expected("an integer register size");
    const Token size_token = tok_;
    const std::size_t size = parse_count(size_token.text);
    if (size == 0) fail(size_token, "register size must be at least 1, got 0");
    if (quantum) {
      const std::size_t needed = saturating_add(total_qubits_, size);
      if (num_qubits_ && needed > *num_qubits_) {
        fail(size_token, "the qubit registers need " + std::to_string(needed) + " qubits but num_qubits is " +
                             std::to_string(*num_qubits_));
      }
      if (needed > kMaxQubits) {
        fail(size_token, "too many qubits: a register of size " + printable(size_token.text) +
                             " brings the total above " + std::to_string(kMaxQubits) +
                             ", the most supported");
      }
    } else if (size == std::numeric_limits<std::size_t>::max()) {
      fail(size_token, "register size " + printable(size_token.text) + " is too large");
    }
    advance();
    expect_symbol("]", "after the register size");
    expect_symbol(";", quantum ? "after qreg declaration" : "after creg declaration");
    std::string key(name.text);
    registers_.emplace(key, Register{key, quantum ? total_qubits_ : 0, size, name.line, quantum});
    if (quantum) total_qubits_ += size;
  }

  // ---- gate lookup

  struct GateRef {
    const BuiltinInfo* builtin = nullptr;
    std::size_t user = 0;
    std::size_t params = 0, qubits = 0;
  };

  GateRef lookup_gate(const Token& name) const {
    if (auto it = gate_index_.find(name.text); it != gate_index_.end()) {
      const GateDef& def = *gates_[it->second];
      return {nullptr, it->second, def.params.size(), def.args.size()};
    }
    if (const BuiltinInfo* info = find_builtin(name.text)) return {info, 0, info->params, info->qubits};
    for (std::string_view unsupported : kUnsupportedQelib) {
      if (unsupported == name.text) {
        fail(name, "gate " + in_quotes(name.text) +
                       " from qelib1.inc is not supported (only the one- and two-qubit gates listed in "
                       "qasm.h are built in; define it with 'gate' to use it)");
      }
    }
    fail(name, "unknown gate " + in_quotes(name.text));
  }

  void check_counts(const Token& name, const GateRef& gate, std::size_t params, std::size_t qubits) const {
    if (params != gate.params) {
      fail(name, "gate " + in_quotes(name.text) + " takes " + count_of(gate.params, "parameter") + ", got " +
                     std::to_string(params));
    }
    if (qubits != gate.qubits) {
      fail(name, "gate " + in_quotes(name.text) + " takes " + count_of(gate.qubits, "qubit argument") +
                     ", got " + std::to_string(qubits));
    }
  }

  std::size_t applications_of(const GateRef& gate) const {
    if (gate.builtin) return gate.builtin->gate == Builtin::id ? 0 : 1;
    return gates_[gate.user]->applications;
  }

  // ---- gate definitions

  void parse_gate_definition() {
    const Token name = expect_identifier("a gate name after 'gate'");
    check_not_keyword(name, "a gate name");
    if (auto it = gate_index_.find(name.text); it != gate_index_.end()) {
      fail(name, "gate " + in_quotes(name.text) + " is already defined at line " +
                     std::to_string(gates_[it->second]->line));
    }
    if (const BuiltinInfo* info = find_builtin(name.text)) {
      if (info->origin == Origin::language) {
        fail(name, in_quotes(name.text) + " is a built-in gate and cannot be redefined");
      }
      if (info->origin == Origin::qelib1 && included_) {
        fail(name, "gate " + in_quotes(name.text) + " is already defined by qelib1.inc");
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
          if (existing == id.text) {
            fail(id, in_quotes(id.text) + " is declared twice in gate " + in_quotes(def->name));
          }
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
      if (op.builtin) {
        applications = saturating_add(applications, op.builtin->gate == Builtin::id ? 0 : 1);
      } else {
        depth = std::max(depth, gates_[op.gate]->depth);
        applications = saturating_add(applications, gates_[op.gate]->applications);
      }
    }
    def->depth = depth + 1;
    def->applications = applications;
    if (def->depth > kMaxGateNesting) {
      fail(name, "gate " + in_quotes(def->name) + " nests user gates more than " +
                     std::to_string(kMaxGateNesting) + " levels deep");
    }
    if (const BuiltinInfo* info = find_builtin(def->name); info && info->origin == Origin::qelib1) {
      shadowed_.emplace_back(def->name, def->line);
    }
    gate_index_.emplace(def->name, gates_.size());
    gates_.push_back(std::move(def));
  }

  void parse_body_statement(GateDef& def) {
    if (tok_.kind != TokenKind::identifier) {
      fail_expected("a gate application or '}' in the body of gate " + in_quotes(def.name));
    }
    const Token head = tok_;
    if (is_unsupported_statement(head)) fail_unsupported(head);
    if (head.text == "barrier") {
      advance();
      parse_body_args(def, head);
      expect_symbol(";", "after barrier arguments");
      return;
    }
    if (is_keyword(head.text)) fail(head, in_quotes(head.text) + " is not allowed inside a gate body");
    if (head.text == def.name) {
      fail(head, "gate " + in_quotes(def.name) + " cannot use itself (recursive gates are not allowed)");
    }
    const GateRef gate = lookup_gate(head);
    advance();
    BodyOp op;
    op.builtin = gate.builtin;
    op.gate = gate.user;
    op.line = head.line;
    op.column = head.column;
    if (is_symbol("(")) op.params = parse_parameter_list(&def.params);
    op.args = parse_body_args(def, head);
    if (!is_symbol(";")) fail_expected("';' after gate arguments");
    check_counts(head, gate, op.params.size(), op.args.size());
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
    const Token name = tok_;
    const GateRef gate = lookup_gate(name);
    advance();
    std::vector<double> values;
    if (is_symbol("(")) {
      for (const ExprPtr& e : parse_parameter_list(nullptr)) values.push_back(e->value);
    }
    const std::vector<QubitArg> args = parse_qubit_args(name);
    if (!is_symbol(";")) fail_expected("';' after gate arguments");
    check_counts(name, gate, values.size(), args.size());

    // Broadcasting: whole registers go element by element; their sizes must agree.
    std::size_t repeats = 1;
    const QubitArg* first_register = nullptr;
    for (const QubitArg& arg : args) {
      if (arg.index) continue;
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
    const std::size_t added = saturating_multiply(applications_of(gate), repeats);
    if (saturating_add(applications_, added) > kMaxGateApplications) {
      fail(name,
           "the program expands to more than " + std::to_string(kMaxGateApplications) + " gate applications");
    }
    applications_ += added;

    const CallSite site{name.line, name.column, name.text};
    std::vector<Qubit> qubits(args.size());
    for (std::size_t j = 0; j < repeats; ++j) {
      for (std::size_t k = 0; k < args.size(); ++k) {
        const Register& reg = register_of(args[k]);
        const std::size_t index = args[k].index.value_or(j);
        qubits[k] = reg.offset + index;
        for (std::size_t l = 0; l < k; ++l) {
          if (qubits[l] == qubits[k]) {
            fail(args[k].token, "qubit " + reg.name + "[" + std::to_string(index) +
                                    "] is used twice in one " + in_quotes(name.text) + " gate");
          }
        }
      }
      if (gate.builtin) {
        emit(*gate.builtin, values, qubits, site);
      } else {
        expand(*gates_[gate.user], values, qubits, site);
      }
    }
    advance();
  }

  const Register& register_of(const QubitArg& arg) const { return registers_.find(arg.token.text)->second; }

  std::vector<QubitArg> parse_qubit_args(const Token& gate) {
    std::vector<QubitArg> args;
    while (true) {
      if (tok_.kind != TokenKind::identifier) fail_expected("a qubit argument for " + in_quotes(gate.text));
      QubitArg arg;
      arg.token = tok_;
      auto it = registers_.find(tok_.text);
      if (it == registers_.end()) fail(tok_, "undeclared qubit register " + in_quotes(tok_.text));
      if (!it->second.quantum) {
        fail(tok_, in_quotes(tok_.text) + " is a classical register: gates act on qubit registers");
      }
      advance();
      if (is_symbol("[")) {
        advance();
        if (tok_.kind != TokenKind::integer) fail_expected("an integer qubit index");
        const std::size_t index = parse_count(tok_.text);
        if (index >= it->second.size) {
          fail(tok_, "qubit index " + printable(tok_.text) + " out of range for register " + it->second.name +
                         "[" + std::to_string(it->second.size) + "]");
        }
        arg.index = index;
        advance();
        expect_symbol("]", "after the qubit index");
      }
      args.push_back(arg);
      if (!is_symbol(",")) break;
      advance();
    }
    return args;
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
      fail(site.line, site.column,
           error + " in the expansion of gate " + in_quotes(site.gate) + " (expression at line " +
               std::to_string(e.line) + ", column " + std::to_string(e.column) + ")");
    }
    return out;
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
      if (op.builtin) {
        emit(*op.builtin, values, local, site);
      } else {
        expand(*gates_[op.gate], values, local, site);
      }
    }
  }

  void emit(const BuiltinInfo& info, std::span<const double> values, std::span<const Qubit> qubits,
            const CallSite& site) {
    if (info.gate == Builtin::id) return;
    // Identical applications share one immutable Channel (a table per gate would cost kilobytes).
    CacheKey key{static_cast<int>(info.gate), qubits[0], qubits.size() > 1 ? qubits[1] : qubits[0], 0, 0, 0};
    if (values.size() > 0) std::get<3>(key) = std::bit_cast<std::uint64_t>(values[0]);
    if (values.size() > 1) std::get<4>(key) = std::bit_cast<std::uint64_t>(values[1]);
    if (values.size() > 2) std::get<5>(key) = std::bit_cast<std::uint64_t>(values[2]);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      try {
        it = cache_.emplace(key, make_channel(info.gate, values, qubits)).first;
      } catch (const std::invalid_argument& e) {
        fail(site.line, site.column, "gate " + in_quotes(info.name) + " cannot be built: " + e.what());
      }
    }
    channels_.push_back(it->second);
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
      if (!compute(op, a->value, b ? b->value : 0.0, out, error)) fail(at, error);
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

  ExprPtr parse_power() {
    ExprPtr base = parse_primary();
    if (!is_symbol("^")) return base;
    const Token op = tok_;
    Nesting nesting(*this, op);
    advance();
    return combine(Op::power, op, std::move(base), parse_unary());  // right-associative
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
      if (token.text == "pi") {
        advance();
        return constant(kPi, token);
      }
      for (const FunctionName& f : kFunctions) {
        if (f.name != token.text) continue;
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
      fail(token, "unknown identifier " + in_quotes(token.text) +
                      " in expression (expected a number, pi, sin cos tan exp ln sqrt" +
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

  using CacheKey = std::tuple<int, Qubit, Qubit, std::uint64_t, std::uint64_t, std::uint64_t>;

  Lexer lexer_;
  const std::string& file_;
  std::optional<std::size_t> num_qubits_;
  Token tok_;
  std::map<std::string, Register, std::less<>> registers_;  ///< qreg and creg share one namespace
  std::size_t total_qubits_ = 0;
  std::vector<std::unique_ptr<GateDef>> gates_;
  std::map<std::string, std::size_t, std::less<>> gate_index_;
  std::vector<std::pair<std::string, std::size_t>> shadowed_;  ///< qelib1 names defined by the user
  bool included_ = false;
  const std::vector<std::string>* scope_ = nullptr;  ///< parameters visible in expressions
  int nesting_ = 0;
  std::size_t applications_ = 0;
  std::map<CacheKey, Channel> cache_;
  std::vector<Channel> channels_;
};

}  // namespace

Circuit read_qasm(std::string_view text, const std::string& file, std::optional<std::size_t> num_qubits) {
  if (num_qubits) {
    const Circuit check(*num_qubits);  // std::invalid_argument above the library's qubit limit
  }
  return Parser(text, file, num_qubits).parse();
}

Circuit load_qasm(const std::string& path, std::optional<std::size_t> num_qubits) {
  const std::string text = read_file(path);
  return read_qasm(text, path, num_qubits);
}

}  // namespace paulistrings::io
