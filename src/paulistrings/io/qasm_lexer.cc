// The OpenQASM reader's lexer: see qasm_lexer.h.
#include "paulistrings/io/qasm_lexer.h"

#include <algorithm>
#include <cstdio>

#include "paulistrings/io/parse_error.h"

namespace paulistrings::io::qasm_detail {
namespace {

constexpr std::size_t kMaxShownChars = 40;  // of a token quoted in a message

}  // namespace

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

Token Lexer::next() {
  skip_space_and_comments();
  Token token;
  token.line = line_;
  token.column = column_;
  if (pos_ >= text_.size()) return token;
  const std::size_t start = pos_;
  const char c = text_[pos_];
  if (is_letter(c) || (version3_ && is_high(c))) {
    while (pos_ < text_.size() && identifier_char(text_[pos_])) advance();
    token.kind = TokenKind::identifier;
  } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
    token.kind = lex_number(token);
  } else if (c == '"' || (version3_ && c == '\'')) {
    advance();
    while (pos_ < text_.size() && text_[pos_] != c && text_[pos_] != '\n') advance();
    if (pos_ >= text_.size() || text_[pos_] != c) {
      throw ParseError(file_, token.line, token.column,
                       std::string("unterminated string (missing closing '") + c + "')");
    }
    advance();
    token.kind = TokenKind::string;
    token.text = text_.substr(start + 1, pos_ - start - 2);
    return token;
  } else if (version3_ && c == '$' && is_digit(peek(1))) {
    advance();
    while (pos_ < text_.size() && is_digit(text_[pos_])) advance();
    token.kind = TokenKind::hardware;
  } else if (const std::size_t two = two_char_symbol(); two != 0) {
    advance();
    advance();
    token.kind = TokenKind::symbol;
  } else if (std::string_view(version3_ ? ";,()[]{}+-*/^@=:<>!~&|%." : ";,()[]{}+-*/^").find(c) !=
             std::string_view::npos) {
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

std::size_t Lexer::two_char_symbol() const {
  const char a = peek(0), b = peek(1);
  if ((a == '-' && b == '>') || (a == '=' && b == '=')) return 2;
  if (!version3_) return 0;
  static constexpr std::string_view kPairs[] = {"**", "!=", "<=", ">=", "&&", "||", "<<",
                                                ">>", "+=", "-=", "*=", "/=", "++"};
  for (std::string_view pair : kPairs) {
    if (a == pair[0] && b == pair[1]) return 2;
  }
  return 0;
}

void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') advance();
    } else if (version3_ && c == '#' && text_.substr(pos_, 7) == "#pragma") {
      while (pos_ < text_.size() && text_[pos_] != '\n') advance();  // a hint to other tools
    } else if (c == '/' && peek(1) == '*') {
      const std::size_t line = line_, column = column_;
      advance();
      advance();
      while (pos_ < text_.size() && !(text_[pos_] == '*' && peek(1) == '/')) advance();
      if (pos_ >= text_.size())
        throw ParseError(file_, line, column, "unterminated block comment (missing '*/')");
      advance();
      advance();
    } else {
      return;
    }
  }
}

TokenKind Lexer::lex_number(const Token& token) {
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
  if (pos_ < text_.size() && (identifier_char(text_[pos_]) || text_[pos_] == '.')) {
    while (pos_ < text_.size() && (identifier_char(text_[pos_]) || text_[pos_] == '.' ||
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

}  // namespace paulistrings::io::qasm_detail
