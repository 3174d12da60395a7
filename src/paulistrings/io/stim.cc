// stim circuit reader: a hand-written, line-oriented parser of stim's circuit text for the subset a
// Pauli propagator can represent (see stim.h). Every instruction line is split into a name, an
// optional parenthesized argument list and whitespace-separated targets; REPEAT blocks are kept on
// an explicit stack (no recursion, so no depth limit is needed) and flattened when they close, with
// a cap on the flattened size. Every problem becomes an io::ParseError at file:line:column.

#include "paulistrings/io/stim.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "paulistrings/core/label.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/parse_error.h"

namespace paulistrings::io {
namespace {

/// The most channels (and, separately, observable terms) a flattened program may have.
constexpr std::size_t kMaxFlattenedSize = 10'000'000;
/// The deepest REPEAT nesting accepted (real programs nest two or three deep). It bounds the work of
/// splicing blocks repeated once into their parents (at most this many moves per instruction).
constexpr std::size_t kMaxRepeatNesting = 32;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
char ToUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

/// `text` quoted for a one-line message: at most 40 characters, unprintable bytes as \xNN.
std::string Quote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  const std::size_t shown = std::min<std::size_t>(text.size(), 40);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  if (shown < text.size()) out += "...";
  out += "'";
  return out;
}

/// A piece of a line and its 1-based column.
struct Token {
  std::string_view text;
  std::size_t column = 0;
};

/// One numeric argument of an instruction.
struct Argument {
  double value = 0.0;
  std::string_view text;  ///< as written, for messages
  std::size_t column = 0;
};

// clang-format off
enum class Op {
  h, s, sdg, x, y, z,                   // one-qubit Cliffords
  cx, cy, cz, swap,                     // two-qubit Cliffords
  depolarize1, depolarize2, x_error, y_error, z_error,
  identity, tick, qubit_coords, shift_coords, observable_include, repeat,
  measure, measure_reset, reset, measure_pair, measure_product, measure_pad, detector,
};
// clang-format on

struct OpName {
  std::string_view name;
  Op op;
};

// clang-format off
constexpr OpName kOps[] = {
    {"H", Op::h}, {"S", Op::s}, {"S_DAG", Op::sdg}, {"X", Op::x}, {"Y", Op::y}, {"Z", Op::z},
    {"CX", Op::cx}, {"CNOT", Op::cx}, {"ZCX", Op::cx}, {"CY", Op::cy}, {"ZCY", Op::cy},
    {"CZ", Op::cz}, {"ZCZ", Op::cz}, {"SWAP", Op::swap},
    {"DEPOLARIZE1", Op::depolarize1}, {"DEPOLARIZE2", Op::depolarize2},
    {"X_ERROR", Op::x_error}, {"Y_ERROR", Op::y_error}, {"Z_ERROR", Op::z_error},
    {"I", Op::identity}, {"TICK", Op::tick}, {"QUBIT_COORDS", Op::qubit_coords},
    {"SHIFT_COORDS", Op::shift_coords}, {"OBSERVABLE_INCLUDE", Op::observable_include},
    {"REPEAT", Op::repeat},
    {"M", Op::measure}, {"MZ", Op::measure}, {"MX", Op::measure}, {"MY", Op::measure},
    {"MR", Op::measure_reset}, {"MRZ", Op::measure_reset}, {"MRX", Op::measure_reset}, {"MRY", Op::measure_reset},
    {"R", Op::reset}, {"RZ", Op::reset}, {"RX", Op::reset}, {"RY", Op::reset},
    {"MXX", Op::measure_pair}, {"MYY", Op::measure_pair}, {"MZZ", Op::measure_pair},
    {"MPP", Op::measure_product}, {"MPAD", Op::measure_pad}, {"DETECTOR", Op::detector},
};
// clang-format on

constexpr std::string_view kSupportedList =
    "H S S_DAG X Y Z CX CNOT ZCX CY ZCY CZ ZCZ SWAP DEPOLARIZE1 DEPOLARIZE2 X_ERROR Y_ERROR Z_ERROR I "
    "M MZ MX MY MR MRZ MRX MRY R RZ RX RY MXX MYY MZZ MPP MPAD DETECTOR "
    "TICK QUBIT_COORDS SHIFT_COORDS OBSERVABLE_INCLUDE REPEAT";

/// Why an instruction outside the supported subset is rejected (upper-case name).
std::string UnsupportedMessage(const std::string& name) {
  std::string message = name;
  if (name == "HERALDED_ERASE" || name == "HERALDED_PAULI_CHANNEL_1") {
    message +=
        " is not supported: heralded noise records a result that the circuit would then have to act on";
  } else if (name == "CORRELATED_ERROR" || name == "E" || name == "ELSE_CORRELATED_ERROR") {
    message += " is not supported: correlated errors are not in the propagatable subset";
  } else if (name == "PAULI_CHANNEL_1" || name == "PAULI_CHANNEL_2") {
    message +=
        " is not supported: the supported noise is DEPOLARIZE1, DEPOLARIZE2, X_ERROR, Y_ERROR and Z_ERROR";
  } else {
    message = std::string("instruction ") + Quote(name) + " is not supported; supported: ";
    message += kSupportedList;
  }
  return message;
}

/// The basis letter of a measurement or reset name: MX, MRX, RX → 'X'; M, MZ, MR, R → 'Z'.
char BasisOf(const std::string& name) {
  const char last = name.back();
  return last == 'X' || last == 'Y' ? last : 'Z';
}

class StimParser {
 public:
  StimParser(std::string_view text, const std::string& file, std::optional<std::size_t> num_qubits)
      : text_(text), file_(file), num_qubits_(num_qubits) {
    blocks_.push_back(std::make_unique<Block>());
  }

  StimProgram Parse() {
    std::size_t start = 0;
    while (start <= text_.size()) {
      std::size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) end = text_.size();
      ++line_;
      ParseLine(text_.substr(start, end - start));
      start = end + 1;
    }
    if (blocks_.size() > 1) {
      const Block& open = *blocks_.back();
      throw ParseError(file_, open.line, open.column, "REPEAT block is never closed (missing '}')");
    }
    const std::size_t n = num_qubits_ ? *num_qubits_ : (max_qubit_ ? *max_qubit_ + 1 : 0);
    StimProgram program{Circuit(n), {}};
    Flatten(*blocks_.front(), program);
    return program;
  }

 private:
  /// The program or a REPEAT block: its channels, observable labels and nested blocks in order,
  /// and the sizes it flattens to (both at most kMaxFlattenedSize). Nested blocks are kept as they
  /// are and expanded once, straight into the circuit, by Flatten(); a block repeated once is
  /// spliced into its parent when it closes, and an empty one is dropped.
  struct Block;
  using Item = std::variant<Channel, std::string, std::unique_ptr<Block>>;
  struct Block {
    std::vector<Item> items;
    std::uint64_t repetitions = 1;
    std::size_t line = 0, column = 0;  ///< where REPEAT was written
    std::size_t flat_channels = 0, flat_terms = 0;
  };

  [[noreturn]] void Fail(std::size_t column, const std::string& message) const {
    throw ParseError(file_, line_, column, message);
  }

  void ParseLine(std::string_view line) {
    line = line.substr(0, line.find('#'));  // a comment runs to the end of the line
    line_text_ = line;
    std::size_t pos = SkipSpace(0);
    if (pos == line.size()) return;
    if (line[pos] == '}') {
      const std::size_t brace_column = pos + 1;
      pos = SkipSpace(pos + 1);
      if (pos < line.size()) {
        Fail(pos + 1,
             std::string("unexpected ") + Quote(NextWord(pos)) + " after '}' (it must be alone on its line)");
      }
      CloseBlock(brace_column);
      return;
    }
    if (!IsAlpha(line[pos])) {
      Fail(pos + 1, std::string("expected an instruction name, got ") + Quote(NextWord(pos)));
    }
    const std::size_t name_start = pos;
    while (pos < line.size() && (IsAlpha(line[pos]) || IsDigit(line[pos]) || line[pos] == '_')) ++pos;
    Token name_token{line.substr(name_start, pos - name_start), name_start + 1};
    std::string name;
    for (char c : name_token.text) name += ToUpper(c);
    if (pos < line.size() && line[pos] == '[') {
      Fail(pos + 1, std::string("instruction tags (as in ") + Quote(name + "[...]") + ") are not supported");
    }
    if (pos < line.size() && !IsSpace(line[pos]) && line[pos] != '(') {
      Fail(pos + 1, std::string("expected whitespace or '(' after the instruction name ") + Quote(name) +
                        ", got " + Quote(line.substr(pos, 1)));
    }
    pos = SkipSpace(pos);

    // Look the name up first, so that unsupported instructions are reported at their name whatever
    // their arguments and targets look like.
    const OpName* found = nullptr;
    for (const OpName& entry : kOps) {
      if (entry.name == name) found = &entry;
    }
    if (found == nullptr) Fail(name_token.column, UnsupportedMessage(name));

    std::vector<Argument> arguments;
    std::size_t paren_column = 0;
    if (pos < line.size() && line[pos] == '(') {
      paren_column = pos + 1;
      pos = ParseArguments(pos, arguments);
    }
    std::vector<Token> targets;
    while (true) {
      pos = SkipSpace(pos);
      if (pos == line.size()) break;
      const std::size_t begin = pos;
      while (pos < line.size() && !IsSpace(line[pos])) ++pos;
      targets.push_back(Token{line.substr(begin, pos - begin), begin + 1});
    }
    Execute(found->op, name, name_token, paren_column, arguments, targets);
  }

  std::size_t SkipSpace(std::size_t pos) const {
    while (pos < line_text_.size() && IsSpace(line_text_[pos])) ++pos;
    return pos;
  }

  /// The non-space run starting at pos (for messages).
  std::string_view NextWord(std::size_t pos) const {
    std::size_t end = pos;
    while (end < line_text_.size() && !IsSpace(line_text_[end])) ++end;
    return line_text_.substr(pos, std::max<std::size_t>(end - pos, 1));
  }

  /// Reads "(a, b, ...)" starting at the '(' at pos; returns the position after ')'.
  std::size_t ParseArguments(std::size_t pos, std::vector<Argument>& arguments) {
    const std::size_t open_column = pos + 1;
    const std::size_t close = line_text_.find(')', pos);
    if (close == std::string_view::npos) Fail(open_column, "missing ')' to close this argument list");
    std::size_t piece_start = pos + 1;
    // "()" and "( )" are an empty list.
    if (SkipSpace(piece_start) == close) return close + 1;
    while (true) {
      std::size_t piece_end = line_text_.find(',', piece_start);
      if (piece_end == std::string_view::npos || piece_end > close) piece_end = close;
      std::size_t begin = SkipSpace(piece_start);
      std::size_t end = piece_end;
      while (end > begin && IsSpace(line_text_[end - 1])) --end;
      if (begin == end) Fail(begin + 1, "expected a number in the argument list");
      const Token token{line_text_.substr(begin, end - begin), begin + 1};
      arguments.push_back(Argument{ParseNumber(token), token.text, token.column});
      if (piece_end == close) break;
      piece_start = piece_end + 1;
    }
    return close + 1;
  }

  double ParseNumber(const Token& token) const {
    std::string_view text = token.text;
    if (text.size() > 1 && text[0] == '+' && (IsDigit(text[1]) || text[1] == '.')) text.remove_prefix(1);
    double value = 0.0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      Fail(token.column, std::string("number ") + Quote(token.text) + " is out of range");
    }
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      Fail(token.column, std::string("expected a number, got ") + Quote(token.text));
    }
    if (!std::isfinite(value))
      Fail(token.column, std::string("expected a finite number, got ") + Quote(token.text));
    return value;
  }

  /// A non-negative decimal integer filling the whole of `digits` (nullopt when it is not one);
  /// fails with `too_large` when it overflows 64 bits.
  std::optional<std::uint64_t> ParseUnsigned(std::string_view digits, std::size_t column,
                                             const std::string& too_large) const {
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), IsDigit)) return std::nullopt;
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) Fail(column, too_large);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
    return value;
  }

  /// Rejects the target forms stim has but this reader does not support.
  void RejectSpecialTarget(const Token& target) const {
    const std::string_view t = target.text;
    if (t[0] == '!') {
      Fail(target.column, std::string("inverted targets like ") + Quote(t) + " are not supported");
    }
    if (const std::size_t star = t.find('*'); star != std::string_view::npos) {
      Fail(target.column + star, "Pauli product combiners ('*') are not supported");
    }
    std::string lower;
    for (char c : t.substr(0, 6)) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower.starts_with("rec[")) {
      Fail(target.column, std::string("measurement record targets like ") + Quote(t) +
                              " are not supported here: gates controlled by results and observables made of "
                              "results are outside the propagatable subset");
    }
    if (lower.starts_with("sweep[")) {
      Fail(target.column, std::string("sweep targets like ") + Quote(t) + " are not supported");
    }
    if (t == "{" || t == "}") {
      Fail(target.column, std::string("unexpected ") + Quote(t) + " (only REPEAT opens a block, and '}' " +
                              "must be alone on its line)");
    }
  }

  /// A qubit index checked against num_qubits (or the library's 1024-qubit limit) and recorded.
  Qubit CheckQubit(std::uint64_t index, std::size_t column) {
    if (num_qubits_ && index >= *num_qubits_) {
      Fail(column,
           "qubit " + std::to_string(index) + " does not fit in num_qubits=" + std::to_string(*num_qubits_));
    }
    if (index >= kMaxSupportedQubits) {
      Fail(column, "qubit " + std::to_string(index) + " is beyond the supported maximum of " +
                       std::to_string(kMaxSupportedQubits) + " qubits (largest index " +
                       std::to_string(kMaxSupportedQubits - 1) + ")");
    }
    const auto qubit = static_cast<Qubit>(index);
    if (!max_qubit_ || qubit > *max_qubit_) max_qubit_ = qubit;
    return qubit;
  }

  std::string TooLarge(const Token& target) const {
    return std::string("qubit index ") + Quote(target.text) + " is too large";
  }

  /// A plain qubit target of `name`. With check_range false only the syntax is checked (for
  /// QUBIT_COORDS, whose targets are ignored) and the qubit is not counted.
  Qubit QubitTarget(const std::string& name, const Token& target, bool check_range = true) {
    RejectSpecialTarget(target);
    return PlainQubit(name, target, check_range);
  }

  /// A measurement's qubit target: an inverted result ('!5') is allowed (it changes nothing here: the
  /// result is not used).
  Qubit MeasuredQubit(const std::string& name, Token target) {
    if (target.text.size() > 1 && target.text[0] == '!') {
      target.text.remove_prefix(1);
      ++target.column;
    }
    return QubitTarget(name, target);
  }

  Qubit PlainQubit(const std::string& name, const Token& target, bool check_range) {
    const std::optional<std::uint64_t> index = ParseUnsigned(target.text, target.column, TooLarge(target));
    if (!index) {
      const char first = ToUpper(target.text[0]);
      if ((first == 'X' || first == 'Y' || first == 'Z') && target.text.size() > 1 &&
          IsDigit(target.text[1])) {
        Fail(target.column, name + " takes qubit indices, not Pauli targets like " + Quote(target.text));
      }
      Fail(target.column,
           std::string("expected a qubit index (a non-negative integer), got ") + Quote(target.text));
    }
    if (!check_range) return 0;
    return CheckQubit(*index, target.column);
  }

  /// A Pauli target "X5" / "y3" of OBSERVABLE_INCLUDE: (letter, qubit).
  std::pair<char, Qubit> PauliTarget(const Token& target) {
    RejectSpecialTarget(target);
    const char letter = ToUpper(target.text[0]);
    if (letter != 'X' && letter != 'Y' && letter != 'Z') {
      if (IsDigit(target.text[0])) {
        Fail(target.column,
             std::string("expected a Pauli target like 'X5', not the plain qubit ") + Quote(target.text));
      }
      Fail(target.column, std::string("expected a Pauli target like 'X5', got ") + Quote(target.text));
    }
    const std::string_view digits = target.text.substr(1);
    const std::optional<std::uint64_t> index = ParseUnsigned(digits, target.column, TooLarge(target));
    if (!index) {
      Fail(target.column, std::string("expected a qubit index after '") + letter +
                              "' in the Pauli target, got " + Quote(target.text));
    }
    return {letter, CheckQubit(*index, target.column)};
  }

  /// Qubits of a two-qubit instruction, in pairs.
  std::vector<std::pair<Qubit, Qubit>> QubitPairs(const std::string& name,
                                                  const std::vector<Token>& targets) {
    std::vector<std::pair<Qubit, Qubit>> pairs;
    for (std::size_t i = 0; i < targets.size(); i += 2) {
      const Qubit a = QubitTarget(name, targets[i]);
      if (i + 1 == targets.size()) {
        Fail(targets[i].column, name + " takes targets in pairs, but " + Quote(targets[i].text) +
                                    " has no partner (" + std::to_string(targets.size()) + " targets)");
      }
      const Qubit b = QubitTarget(name, targets[i + 1]);
      if (a == b) {
        Fail(targets[i + 1].column, name + " pair uses qubit " + std::to_string(a) + " twice");
      }
      pairs.emplace_back(a, b);
    }
    return pairs;
  }

  void ExpectArguments(const std::string& name, const Token& name_token, std::size_t paren_column,
                       const std::vector<Argument>& arguments, std::size_t expected, const char* what) const {
    if (arguments.size() == expected) return;
    std::string message = name;
    if (expected == 0) {
      message += " takes no arguments";
    } else {
      message += " takes exactly " + std::to_string(expected) + " argument (" + what + ")";
    }
    message += ", got " + std::to_string(arguments.size());
    Fail(paren_column != 0 ? paren_column : name_token.column, message);
  }

  double Probability(const std::string& name, const Token& name_token, std::size_t paren_column,
                     const std::vector<Argument>& arguments) const {
    ExpectArguments(name, name_token, paren_column, arguments, 1, "a probability");
    const Argument& p = arguments[0];
    if (!(p.value >= 0.0 && p.value <= 1.0)) {
      Fail(p.column, name + " probability must be in [0, 1], got " + std::string(p.text));
    }
    return p.value;
  }

  void ExpectNoTargets(const std::string& name, const std::vector<Token>& targets) const {
    if (!targets.empty()) Fail(targets[0].column, name + " takes no targets, got " + Quote(targets[0].text));
  }

  /// Appends a channel built by `make` (factory errors, which validation above should prevent,
  /// still become located ParseErrors).
  template <class F>
  void Add(const Token& name_token, F&& make) {
    Block& block = *blocks_.back();
    if (block.flat_channels >= kMaxFlattenedSize) {
      Fail(name_token.column,
           "the flattened program would have more than " + std::to_string(kMaxFlattenedSize) + " channels");
    }
    try {
      block.items.emplace_back(make());
      ++block.flat_channels;
    } catch (const std::invalid_argument& e) {
      Fail(name_token.column, e.what());
    }
  }

  void Execute(Op op, const std::string& name, const Token& name_token, std::size_t paren_column,
               const std::vector<Argument>& arguments, const std::vector<Token>& targets) {
    switch (op) {
      case Op::h:
      case Op::s:
      case Op::sdg:
      case Op::x:
      case Op::y:
      case Op::z: {
        ExpectArguments(name, name_token, paren_column, arguments, 0, "");
        Channel (*factory)(Qubit) = op == Op::h     ? &Channel::h
                                    : op == Op::s   ? &Channel::s
                                    : op == Op::sdg ? &Channel::sdg
                                    : op == Op::x   ? &Channel::x
                                    : op == Op::y   ? &Channel::y
                                                    : &Channel::z;
        for (const Token& target : targets) {
          const Qubit q = QubitTarget(name, target);
          Add(name_token, [&] { return factory(q); });
        }
        return;
      }
      case Op::cx:
      case Op::cy:
      case Op::cz:
      case Op::swap: {
        ExpectArguments(name, name_token, paren_column, arguments, 0, "");
        Channel (*factory)(Qubit, Qubit) = op == Op::cx   ? &Channel::cnot
                                           : op == Op::cy ? &Channel::cy
                                           : op == Op::cz ? &Channel::cz
                                                          : &Channel::swap;
        for (const auto& [a, b] : QubitPairs(name, targets)) {
          Add(name_token, [&, a = a, b = b] { return factory(a, b); });  // clang 14: no binding captures
        }
        return;
      }
      case Op::depolarize1: {
        const double p = Probability(name, name_token, paren_column, arguments);
        for (const Token& target : targets) {
          const Qubit q = QubitTarget(name, target);
          Add(name_token, [&] { return Channel::depolarize(p, q); });
        }
        return;
      }
      case Op::depolarize2: {
        const double p = Probability(name, name_token, paren_column, arguments);
        for (const auto& [a, b] : QubitPairs(name, targets)) {
          Add(name_token, [&, a = a, b = b] { return Channel::depolarize2(p, a, b); });
        }
        return;
      }
      case Op::x_error:
      case Op::y_error:
      case Op::z_error: {
        const double p = Probability(name, name_token, paren_column, arguments);
        const double px = op == Op::x_error ? p : 0.0;
        const double py = op == Op::y_error ? p : 0.0;
        const double pz = op == Op::z_error ? p : 0.0;
        for (const Token& target : targets) {
          const Qubit q = QubitTarget(name, target);
          Add(name_token, [&] { return Channel::pauli_channel(px, py, pz, q); });
        }
        return;
      }
      case Op::identity:
        // Skipped, but its qubits count towards the circuit's width (stim programs use "I 9" to
        // declare qubits).
        ExpectArguments(name, name_token, paren_column, arguments, 0, "");
        for (const Token& target : targets) QubitTarget(name, target);
        return;
      case Op::tick:
        ExpectArguments(name, name_token, paren_column, arguments, 0, "");
        ExpectNoTargets(name, targets);
        return;
      case Op::qubit_coords:
        // Coordinates are ignored; the targets are checked for syntax only and do not count.
        for (const Token& target : targets) QubitTarget(name, target, /*check_range=*/false);
        return;
      case Op::shift_coords:
        ExpectNoTargets(name, targets);
        return;
      case Op::observable_include:
        ObservableInclude(name, name_token, paren_column, arguments, targets);
        return;
      case Op::repeat:
        OpenBlock(name, name_token, paren_column, arguments, targets);
        return;
      case Op::measure:
      case Op::measure_reset:
      case Op::reset: {
        if (op == Op::reset) {
          ExpectArguments(name, name_token, paren_column, arguments, 0, "");
        } else {
          MeasurementArguments(name, name_token, paren_column, arguments);
        }
        const char basis = BasisOf(name);
        const std::string letter(1, basis);
        for (const Token& target : targets) {
          const Qubit q = op == Op::reset ? QubitTarget(name, target) : MeasuredQubit(name, target);
          if (op != Op::reset) Add(name_token, [&] { return Channel::measure_pauli(letter, {q}); });
          if (op != Op::measure) Add(name_token, [&] { return Channel::reset(q, basis); });
        }
        return;
      }
      case Op::measure_pair: {
        MeasurementArguments(name, name_token, paren_column, arguments);
        const std::string letters(2, name[1]);
        if (targets.size() % 2 != 0) {
          Fail(targets.back().column, name + " takes targets in pairs, but " + Quote(targets.back().text) +
                                          " has no partner (" + std::to_string(targets.size()) + " targets)");
        }
        for (std::size_t i = 0; i < targets.size(); i += 2) {
          const Qubit a = MeasuredQubit(name, targets[i]), b = MeasuredQubit(name, targets[i + 1]);
          if (a == b) Fail(targets[i + 1].column, name + " pair uses qubit " + std::to_string(a) + " twice");
          Add(name_token, [&] { return Channel::measure_pauli(letters, {a, b}); });
        }
        return;
      }
      case Op::measure_product:
        MeasurementArguments(name, name_token, paren_column, arguments);
        for (const Token& target : targets) MeasureProduct(name_token, target);
        return;
      case Op::measure_pad:
        // Pads the measurement record with fixed bits: no effect on the qubits.
        MeasurementArguments(name, name_token, paren_column, arguments);
        for (const Token& target : targets) {
          if (target.text != "0" && target.text != "1") {
            Fail(target.column, "MPAD takes bits 0 or 1, got " + Quote(target.text));
          }
        }
        return;
      case Op::detector:
        // A detector declares a parity of measurement results; it does not act on the qubits, and the
        // propagated observable does not depend on it. Its targets are checked and it is skipped.
        for (const Token& target : targets) RecordTarget(name, target);
        return;
    }
  }

  /// M(p), MPP(p), …: an optional result-flip probability, which does not act on the qubits.
  void MeasurementArguments(const std::string& name, const Token& name_token, std::size_t paren_column,
                            const std::vector<Argument>& arguments) const {
    if (arguments.empty()) return;
    Probability(name, name_token, paren_column, arguments);
  }

  /// rec[-k], k ≥ 1.
  void RecordTarget(const std::string& name, const Token& target) const {
    const std::string_view t = target.text;
    if (!(t.starts_with("rec[-") && t.ends_with("]") && t.size() > 6)) {
      Fail(target.column, name + " takes measurement record targets like 'rec[-1]', got " + Quote(t));
    }
    const std::optional<std::uint64_t> k = ParseUnsigned(t.substr(5, t.size() - 6), target.column + 5,
                                                         "record index " + Quote(t) + " is too large");
    if (!k || *k == 0) Fail(target.column, "expected a record target like 'rec[-1]', got " + Quote(t));
  }

  /// One MPP product, "X0*Y3*!Z5": a measurement of that Pauli product.
  void MeasureProduct(const Token& name_token, const Token& target) {
    std::string letters;
    std::vector<Qubit> qubits;
    std::size_t start = 0;
    while (start <= target.text.size()) {
      std::size_t end = target.text.find('*', start);
      if (end == std::string_view::npos) end = target.text.size();
      Token factor{target.text.substr(start, end - start), target.column + start};
      if (factor.text.empty()) Fail(factor.column, "empty factor in the Pauli product " + Quote(target.text));
      if (factor.text[0] == '!') {
        factor.text.remove_prefix(1);
        ++factor.column;
        if (factor.text.empty()) Fail(factor.column, "expected a Pauli target after '!'");
      }
      const auto [letter, qubit] = PauliTarget(factor);
      if (std::find(qubits.begin(), qubits.end(), qubit) != qubits.end()) {
        Fail(factor.column,
             "MPP product " + Quote(target.text) + " names qubit " + std::to_string(qubit) + " twice");
      }
      letters += letter;
      qubits.push_back(qubit);
      start = end + 1;
    }
    Add(name_token, [&] { return Channel::measure_pauli(letters, qubits); });
  }

  void ObservableInclude(const std::string& name, const Token& name_token, std::size_t paren_column,
                         const std::vector<Argument>& arguments, const std::vector<Token>& targets) {
    ExpectArguments(name, name_token, paren_column, arguments, 1, "the observable index");
    // The observable index k is validated as stim does (a non-negative integer) and then ignored:
    // every OBSERVABLE_INCLUDE, whatever its k, adds one term to the single observable.
    const Argument& k = arguments[0];
    if (!(k.value >= 0.0 && k.value <= 4294967295.0 && k.value == std::floor(k.value))) {
      Fail(k.column, "OBSERVABLE_INCLUDE index must be a non-negative integer, got " + std::string(k.text));
    }
    if (targets.empty())
      Fail(name_token.column, "OBSERVABLE_INCLUDE needs at least one Pauli target like 'X5'");
    std::vector<bool> seen(kMaxSupportedQubits, false);
    std::string label;
    for (const Token& target : targets) {
      const auto [letter, qubit] = PauliTarget(target);
      if (seen[qubit]) {
        Fail(target.column, "OBSERVABLE_INCLUDE names qubit " + std::to_string(qubit) + " twice");
      }
      seen[qubit] = true;
      if (!label.empty()) label += ' ';
      label += letter;
      label += std::to_string(qubit);
    }
    Block& block = *blocks_.back();
    if (block.flat_terms >= kMaxFlattenedSize) {
      Fail(name_token.column, "the flattened program would have more than " +
                                  std::to_string(kMaxFlattenedSize) + " observable terms");
    }
    block.items.emplace_back(std::move(label));
    ++block.flat_terms;
  }

  void OpenBlock(const std::string& name, const Token& name_token, std::size_t paren_column,
                 const std::vector<Argument>& arguments, std::vector<Token> targets) {
    if (paren_column != 0) Fail(paren_column, "REPEAT takes no parenthesized arguments");
    (void)arguments;
    (void)name;
    if (targets.empty())
      Fail(name_token.column, "REPEAT needs a repetition count and '{', as in 'REPEAT 10 {'");
    // "REPEAT 3{" is read like "REPEAT 3 {".
    if (targets.size() == 1 && targets[0].text.size() > 1 && targets[0].text.ends_with('{')) {
      const Token count = targets[0];
      targets = {Token{count.text.substr(0, count.text.size() - 1), count.column},
                 Token{count.text.substr(count.text.size() - 1), count.column + count.text.size() - 1}};
    }
    const Token& count_token = targets[0];
    const std::optional<std::uint64_t> count =
        ParseUnsigned(count_token.text, count_token.column,
                      std::string("REPEAT count ") + Quote(count_token.text) + " is too large");
    if (!count) {
      Fail(count_token.column,
           std::string("REPEAT count must be a positive integer, got ") + Quote(count_token.text));
    }
    if (*count == 0) Fail(count_token.column, "REPEAT count must be at least 1 (stim rejects REPEAT 0)");
    if (targets.size() == 1) {
      Fail(count_token.column + count_token.text.size(), "expected '{' after the REPEAT count");
    }
    if (targets[1].text != "{") {
      Fail(targets[1].column,
           std::string("expected '{' after the REPEAT count, got ") + Quote(targets[1].text));
    }
    if (targets.size() > 2) {
      Fail(targets[2].column, std::string("unexpected ") + Quote(targets[2].text) +
                                  " after '{' (the block's instructions start on the next line)");
    }
    if (blocks_.size() > kMaxRepeatNesting) {
      Fail(name_token.column,
           "REPEAT blocks nested more than " + std::to_string(kMaxRepeatNesting) + " deep are not supported");
    }
    auto block = std::make_unique<Block>();
    block->repetitions = *count;
    block->line = line_;
    block->column = name_token.column;
    blocks_.push_back(std::move(block));
  }

  void CloseBlock(std::size_t brace_column) {
    if (blocks_.size() == 1) Fail(brace_column, "unexpected '}' without an open REPEAT block");
    std::unique_ptr<Block> body = std::move(blocks_.back());
    blocks_.pop_back();
    Block& parent = *blocks_.back();
    const std::uint64_t n = body->repetitions;
    const auto too_large = [n](std::size_t have, std::size_t add) {
      return add != 0 && n > (kMaxFlattenedSize - have) / add;
    };
    if (too_large(parent.flat_channels, body->flat_channels) ||
        too_large(parent.flat_terms, body->flat_terms)) {
      throw ParseError(file_, body->line, body->column,
                       "REPEAT " + std::to_string(n) + " would flatten the program to more than " +
                           std::to_string(kMaxFlattenedSize) + " channels or observable terms");
    }
    // Within the cap, so these products fit.
    parent.flat_channels += body->flat_channels * static_cast<std::size_t>(n);
    parent.flat_terms += body->flat_terms * static_cast<std::size_t>(n);
    if (body->items.empty()) return;  // REPEAT 1000000000 {} costs nothing
    if (n == 1) {
      parent.items.insert(parent.items.end(), std::make_move_iterator(body->items.begin()),
                          std::make_move_iterator(body->items.end()));
    } else {
      parent.items.emplace_back(std::move(body));
    }
  }

  /// Expands the program into `program`. Every block in the tree is nonempty and repeated at least
  /// twice, so the walk costs O(flattened size) however the blocks nest.
  static void Flatten(const Block& root, StimProgram& program) {
    struct Frame {
      const Block* block;
      std::size_t next;
      std::uint64_t remaining;
    };
    std::vector<Frame> stack = {{&root, 0, 1}};
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next == frame.block->items.size()) {
        frame.next = 0;
        if (--frame.remaining == 0) stack.pop_back();
        continue;
      }
      const Item& item = frame.block->items[frame.next++];
      if (const auto* channel = std::get_if<Channel>(&item)) {
        program.circuit.append(*channel);
      } else if (const auto* label = std::get_if<std::string>(&item)) {
        program.observable.emplace_back(*label, 1.0);
      } else {
        const Block& child = *std::get<std::unique_ptr<Block>>(item);
        stack.push_back(Frame{&child, 0, child.repetitions});
      }
    }
  }

  std::string_view text_;
  const std::string& file_;
  std::optional<std::size_t> num_qubits_;
  std::size_t line_ = 0;
  std::string_view line_text_;
  std::vector<std::unique_ptr<Block>> blocks_;  ///< the program, then each open REPEAT block
  std::optional<Qubit> max_qubit_;
};

}  // namespace

StimProgram read_stim(std::string_view text, const std::string& file, std::optional<std::size_t> num_qubits) {
  // An impossible width is a bad argument, not bad text: std::invalid_argument from the library.
  if (num_qubits) check_num_qubits(*num_qubits);
  return StimParser(text, file, num_qubits).Parse();
}

StimProgram load_stim(const std::string& path, std::optional<std::size_t> num_qubits) {
  return read_stim(read_file(path), path, num_qubits);
}

}  // namespace paulistrings::io
