// The task file's JSON syntax: see task_json.h.

#include "paulistrings/io/task_json.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/task_messages.h"

namespace paulistrings::io::task_detail {

namespace {

/// Far deeper than any valid task (the deepest is a unitary matrix entry, 7 levels); the cap only bounds the
/// work a hostile file can cause.
constexpr std::size_t kMaxNesting = 64;

/// Follows the parser through the document (object keys and array indices) so that problems found while
/// parsing — duplicate keys, excessive nesting, numbers out of range — name their field.
class ParsePosition {
 public:
  explicit ParsePosition(const std::string& file) : file_(file) {}

  bool on_event(Json::parse_event_t event, const Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (frames_.size() >= kMaxNesting) {
          throw_at(file_, path(),
                   std::string("the document nests deeper than ") + std::to_string(kMaxNesting) + " levels");
        }
        frames_.push_back({event == Json::parse_event_t::array_start, 0, {}, {}});
        break;
      case Json::parse_event_t::key: {
        Frame& frame = frames_.back();
        frame.key = parsed.get<std::string>();
        if (!frame.keys.insert(frame.key).second) {
          throw_at(file_, path(),
                   std::string("duplicate key ") + quote(frame.key) + " (each key may appear only once)");
        }
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames_.pop_back();
        element_done();
        break;
      case Json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  }

  /// The field being parsed now.
  std::string path() const {
    std::string out;
    for (const Frame& frame : frames_)
      out = frame.is_array ? indexed(out, frame.index) : join(out, frame.key);
    return out;
  }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;  // arrays: the element being parsed
    std::string key;    // objects: the member being parsed
    std::set<std::string> keys;
  };

  void element_done() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  const std::string& file_;
  std::vector<Frame> frames_;
};

/// nlohmann's message without its "[json.exception...]" tag and its own location prefix.
std::string nlohmann_reason(const char* what) {
  std::string text(what);
  const std::size_t tag_end = text.find("] ");
  if (text.rfind("[json.exception.", 0) == 0 && tag_end != std::string::npos) text.erase(0, tag_end + 2);
  if (text.rfind("parse error", 0) == 0) {
    const std::size_t colon = text.find(": ");
    if (colon != std::string::npos) text.erase(0, colon + 2);
  }
  return text;
}

}  // namespace

/// What a JSON value is, for "expected X, got Y" messages.
std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return std::string("the boolean ") + (value.get<bool>() ? "true" : "false");
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return std::string("the integer ") += value.dump();
    case Json::value_t::number_float:
      return std::string("the number ") += value.dump();
    case Json::value_t::string:
      return std::string("the string ") += quote(value.get_ref<const std::string&>());
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

std::string got(const Json& value) { return std::string(", got ") += describe(value); }

Json parse_json(std::string_view text, const std::string& file) {
  ParsePosition position(file);
  const Json::parser_callback_t callback = [&position](int /*depth*/, Json::parse_event_t event,
                                                       Json& parsed) {
    return position.on_event(event, parsed);
  };
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::parse_error& e) {
    // e.byte counts the characters read, the offending one included.
    const std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const std::string_view before = text.substr(0, offset);
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t newline = before.rfind('\n');
    const std::size_t column = newline == std::string_view::npos ? offset + 1 : offset - newline;
    throw ParseError(file, line, column,
                     printable(std::string("invalid JSON: ") + nlohmann_reason(e.what())));
  } catch (const Json::out_of_range& e) {
    throw_at(file, position.path(), nlohmann_reason(e.what()) + " (expected a finite number)");
  } catch (const Json::exception& e) {
    throw_at(file, position.path(), std::string("invalid JSON: ") + nlohmann_reason(e.what()));
  }
}

}  // namespace paulistrings::io::task_detail
