// Index lists (text.h).

#include "paulistrings/core/text.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

namespace paulistrings {

std::optional<std::size_t> parse_index(std::string_view text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  std::size_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::vector<std::size_t> parse_index_list(std::string_view text) {
  const auto number = [](std::string_view item) {
    const std::optional<std::size_t> value = parse_index(item);
    if (!value) throw std::invalid_argument("'" + std::string(item) + "' is not an index");
    return *value;
  };
  std::vector<std::size_t> indices;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    if (const std::size_t dash = item.find('-'); dash != std::string_view::npos) {
      const std::size_t first = number(item.substr(0, dash)), last = number(item.substr(dash + 1));
      if (last < first) throw std::invalid_argument("range '" + std::string(item) + "' runs backwards");
      for (std::size_t i = first; i <= last; ++i) indices.push_back(i);
    } else {
      indices.push_back(number(item));
    }
    start = comma + 1;
  }
  return indices;
}

}  // namespace paulistrings
