// Strict numbers and index lists (text.h).

#include "paulistrings/core/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace paulistrings {
namespace {

/// The token in quotes for a message, cut after 80 characters.
std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 80;
  std::string out = "'";
  out.append(text.substr(0, kShown));
  if (text.size() > kShown) out += "...";
  return out += "'";
}

[[noreturn]] void refuse(std::string_view text, std::string_view reason) {
  throw std::invalid_argument(quoted(text) + " " + std::string(reason));
}

/// A decimal number as written: value = (negative ? -1 : 1) × digits × 10^exponent, exactly.
struct Decimal {
  bool negative = false;
  std::string digits;  // the mantissa's digits, integer part then fraction, leading zeros dropped
  std::int64_t exponent = 0;
};

/// Reads [+-] (D+ [. D*] | . D+) [(e|E) [+-] D+] at the start of `text`; returns how many characters
/// that took (0: no number there). An "e" without digits after it is not part of the number.
std::size_t scan_decimal(std::string_view text, Decimal& out) {
  constexpr std::int64_t kExponentCap = 1'000'000'000'000'000;  // beyond any token's digits
  std::size_t at = 0;
  const auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  out = Decimal{};
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) out.negative = text[at++] == '-';
  std::size_t mantissa_digits = 0;
  std::int64_t fraction_digits = 0;
  const auto take = [&](bool fraction) {
    for (; digit(at); ++at, ++mantissa_digits) {
      if (out.digits.empty() && text[at] == '0') {
        if (fraction) ++fraction_digits;  // a leading zero of the fraction still scales the rest
        continue;
      }
      out.digits.push_back(text[at]);
      if (fraction) ++fraction_digits;
    }
  };
  take(false);
  if (at < text.size() && text[at] == '.') {
    ++at;
    take(true);
  }
  if (mantissa_digits == 0) return 0;
  std::int64_t exponent = 0;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    std::size_t e = at + 1;
    bool negative_exponent = false;
    if (e < text.size() && (text[e] == '+' || text[e] == '-')) negative_exponent = text[e++] == '-';
    if (digit(e)) {
      for (; digit(e); ++e) exponent = std::min(exponent * 10 + (text[e] - '0'), kExponentCap);
      if (negative_exponent) exponent = -exponent;
      at = e;
    }
  }
  out.exponent = exponent - fraction_digits;
  return at;
}

/// The whole token as a Decimal; refuses an empty token, no number, or text after the number.
Decimal whole_decimal(std::string_view text) {
  Decimal value;
  const std::size_t used = scan_decimal(text, value);
  if (used == 0) refuse(text, "is not a number");
  if (used < text.size()) refuse(text, "is not a number (" + quoted(text.substr(used)) + " after it)");
  return value;
}

/// value × 2^shift as a whole number up to `max`; refuses a negative, fractional or too large one.
std::uint64_t whole_value(std::string_view text, Decimal value, unsigned shift, std::uint64_t max) {
  if (value.digits.empty()) return 0;  // zero, whatever its sign or exponent
  if (value.negative) refuse(text, "is negative");
  for (unsigned i = 0; i < shift; ++i) {  // doubling the decimal digits keeps the value exact
    int carry = 0;
    for (auto d = value.digits.rbegin(); d != value.digits.rend(); ++d) {
      const int twice = 2 * (*d - '0') + carry;
      *d = static_cast<char>('0' + twice % 10);
      carry = twice / 10;
    }
    if (carry != 0) value.digits.insert(value.digits.begin(), '1');
  }
  while (value.digits.back() == '0') {
    value.digits.pop_back();
    ++value.exponent;
  }
  if (value.exponent < 0) refuse(text, "is not a whole number");
  const std::string too_large = "is too large (at most " + std::to_string(max) + ")";
  if (static_cast<std::int64_t>(value.digits.size()) + value.exponent > 20) refuse(text, too_large);
  unsigned __int128 whole = 0;  // at most 10^20 < 2^67
  for (const char d : value.digits) whole = whole * 10 + static_cast<unsigned>(d - '0');
  for (std::int64_t i = 0; i < value.exponent; ++i) whole *= 10;
  if (whole > max) refuse(text, too_large);
  return static_cast<std::uint64_t>(whole);
}

}  // namespace

std::uint64_t parse_count(std::string_view text, std::uint64_t max) {
  return whole_value(text, whole_decimal(text), 0, max);
}

double parse_real(std::string_view text) {
  whole_decimal(text);
  const std::string_view digits = text.front() == '+' ? text.substr(1) : text;  // from_chars takes no '+'
  double value = 0.0;
  const std::from_chars_result r = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (r.ec == std::errc::result_out_of_range) refuse(text, "is out of range (beyond a double's range)");
  if (r.ec != std::errc{} || r.ptr != digits.data() + digits.size() || !std::isfinite(value))
    refuse(text, "is not a number");  // cannot happen after whole_decimal
  return value;
}

std::uint64_t parse_byte_size(std::string_view text) {
  Decimal value;
  const std::size_t used = scan_decimal(text, value);
  const std::string expected = "is not a byte size (expected a number with an optional K, M, G or T suffix)";
  if (used == 0) refuse(text, expected);
  std::string_view suffix = text.substr(used);
  if (suffix == "B" || suffix == "b") suffix = {};
  for (std::string_view unit : {"iB", "ib", "B", "b", "i"}) {  // "MiB", "Mib", "MB", "Mb", "Mi" → "M"
    if (suffix.size() == unit.size() + 1 && suffix.ends_with(unit)) {
      suffix.remove_suffix(unit.size());
      break;
    }
  }
  unsigned shift = 0;
  if (suffix.size() > 1) refuse(text, expected);
  if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        refuse(text, expected);
    }
  }
  return whole_value(text, value, shift, std::numeric_limits<std::uint64_t>::max());
}

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
