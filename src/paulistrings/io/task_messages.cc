// Message helpers shared by the task reader (task.cc) and writer (task_writer.cc): task_messages.h.

#include "paulistrings/io/task_messages.h"

#include "paulistrings/io/parse_error.h"

namespace paulistrings::io::task_detail {

namespace {

constexpr std::size_t kMaxShown = 120;
constexpr const char* kTopLevel = "(top level)";

}  // namespace

/// Messages are single lines: control characters are shown as \xNN, very long text is cut.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      static const char* const kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string shorten(std::string_view text) {
  if (text.size() <= kMaxShown) return std::string(text);
  std::string out(text.substr(0, kMaxShown));
  out += "...";
  return out;
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  out += shorten(text);
  out += '"';
  return out;
}

std::string join(const std::string& path, std::string_view key) {
  std::string out = path;
  if (!out.empty()) out += '.';
  out += shorten(key);
  return out;
}

std::string indexed(const std::string& path, std::size_t index) {
  std::string out = path;
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

[[noreturn]] void throw_at(const std::string& file, const std::string& path, const std::string& message) {
  throw ParseError(file, printable(path.empty() ? std::string(kTopLevel) : path), printable(message));
}

}  // namespace paulistrings::io::task_detail
