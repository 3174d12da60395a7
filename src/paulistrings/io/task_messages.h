#pragma once
// Internal to io/task*.cc (not part of task.h): how the task reader and writer show user text in their
// messages. Messages are single lines naming a field path ("circuit.gates[3].theta").

#include <cstddef>
#include <string>
#include <string_view>

namespace paulistrings::io::task_detail {

/// `text` with control characters shown as \xNN, so a message stays on one line.
std::string printable(std::string_view text);
/// `text` cut after 120 characters ("...").
std::string shorten(std::string_view text);
/// shorten(text) in double quotes.
std::string quote(std::string_view text);
/// The field path `path.key` (just `key` at the top level).
std::string join(const std::string& path, std::string_view key);
/// The field path `path[index]`.
std::string indexed(const std::string& path, std::size_t index);
/// io::ParseError for `file` at field `path` ("(top level)" when empty).
[[noreturn]] void throw_at(const std::string& file, const std::string& path, const std::string& message);

}  // namespace paulistrings::io::task_detail
