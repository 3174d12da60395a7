#pragma once
// ParseError: the one exception every reader in io/ throws for bad input. Its message is a single
// line that locates the problem the way compilers do — "file:line:column: what was expected" for
// text formats, "file: field.path: what was expected" for JSON — so the CLI can print it as is and
// exit with code 2, and Python maps it to ValueError (it derives from std::invalid_argument).

#include <cstddef>
#include <stdexcept>
#include <string>

namespace paulistrings::io {

class ParseError : public std::invalid_argument {
 public:
  /// A located error in a text file; line and column count from 1.
  ParseError(const std::string& file, std::size_t line, std::size_t column, const std::string& message)
      : std::invalid_argument(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                              message),
        file_(file),
        line_(line),
        column_(column) {}
  /// An error at a field of a structured document (JSON): `field_path` like "circuit.gates[3].theta".
  ParseError(const std::string& file, const std::string& field_path, const std::string& message)
      : std::invalid_argument(file + ": " + field_path + ": " + message), file_(file) {}

  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }      ///< 0 for field-located errors
  std::size_t column() const { return column_; }  ///< 0 for field-located errors

 private:
  std::string file_;
  std::size_t line_ = 0;
  std::size_t column_ = 0;
};

}  // namespace paulistrings::io
