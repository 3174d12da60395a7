#pragma once
// Internal to io/task*.cc (not part of task.h): the task file's JSON syntax — parsing with errors located
// by line:column, or by field path for what the parser finds inside a value (duplicate keys, nesting,
// numbers out of range) — and how a JSON value is named in "expected X, got Y" messages.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace paulistrings::io::task_detail {

using Json = nlohmann::ordered_json;

/// The document in `text` (of `file`, for messages); io::ParseError when it is not JSON.
Json parse_json(std::string_view text, const std::string& file);
/// What a JSON value is: "the integer 3", "the string \"x\"", "an array", ….
std::string describe(const Json& value);
/// ", got " + describe(value).
std::string got(const Json& value);

}  // namespace paulistrings::io::task_detail
