#pragma once
// The OpenQASM reader's lexer (io/qasm_parser.h is the parser): tokens with their line and column, OpenQASM 2
// rules by default and OpenQASM 3's once the version line asks for them; every lexical error is an
// io::ParseError at its position. Also the quoting of user text in messages, which parser and lexer share.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace paulistrings::io::qasm_detail {

inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_high(char c) { return static_cast<unsigned char>(c) >= 0x80; }

/// `text` made safe for a one-line message: control and non-ASCII bytes as \xNN, long text cut.
std::string printable(std::string_view text);
/// printable(text) in single quotes.
std::string in_quotes(std::string_view text);

enum class TokenKind : std::uint8_t { end, identifier, integer, real, string, symbol, hardware };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view text;  ///< for strings: the contents without the quotes
  std::size_t line = 1;
  std::size_t column = 1;
};

/// A token as a message names it: "end of file", "number '1.5'", "'cx'".
std::string describe(const Token& token);

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte-order mark
  }

  /// OpenQASM 3's lexical rules from here on: UTF-8 letters in identifiers (θ, π), its operators, '…'
  /// strings, hardware qubits $n, #pragma lines.
  void use_version_3() { version3_ = true; }

  Token next();

 private:
  char peek(std::size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool identifier_char(char c) const { return is_letter(c) || is_digit(c) || (version3_ && is_high(c)); }

  /// 2 when a two-character operator starts here, else 0.
  std::size_t two_char_symbol() const;

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void skip_space_and_comments();

  /// digits [. digits] [e|E [+|-] digits], or . digits [exponent]; anything glued on is an error.
  TokenKind lex_number(const Token& token);

  std::string_view text_;
  const std::string& file_;
  bool version3_ = false;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t column_ = 1;
};

}  // namespace paulistrings::io::qasm_detail
