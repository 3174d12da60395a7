#pragma once
// Numbers, byte counts and index lists as text.
//
// format_double: numbers in descriptions and error messages, written without iostreams: the same text
// as printf's "%.17g" (round-trips every double), independent of the global C++ and C locales, and safe
// on any thread. Descriptions feed the partition shape check's fingerprint, so every rank must write the
// same bytes whatever its locale; and formatting a double through an ostream on a partition thread
// crashed the Python module on the GPU machine (docs/PERFORMANCE.md, 2026-12-01).

#include <charconv>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace paulistrings {

/// `value` with 17 significant digits, trailing zeros dropped ("0.0001", "1e-05", "-2.5", "inf", "nan").
inline std::string format_double(double value) {
  char buffer[32];  // "%.17g" needs at most 24 characters: sign, 17 digits, point, "e-308"
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 17);
  if (r.ec != std::errc{}) return "?";  // cannot happen with 32 characters
  return std::string(buffer, r.ptr);
}

/// "512 bytes", "37.50 MiB", "1.50 GiB": a byte count for messages (binary units, two decimals; as
/// format_double, independent of the locale).
inline std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  const std::to_chars_result r =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 2);
  return std::string(buffer, r.ptr).append(" ").append(kUnits[unit]);
}

/// "42" → 42: a decimal index of 1 to 9 digits and nothing else (no sign, no spaces); nullopt otherwise.
std::optional<std::size_t> parse_index(std::string_view text);

/// "3,5,10-12" → {3, 5, 10, 11, 12}: comma-separated indices (decimal, at most 9 digits) and inclusive
/// ranges, in the order written, repeats kept — the syntax of qubit lists on the command line and of the
/// kernel's CPU lists (/sys/devices/system/node/node*/cpulist). Throws std::invalid_argument with the
/// reason ("'x' is not an index", "range '9-3' runs backwards"); the caller adds where the text came from.
std::vector<std::size_t> parse_index_list(std::string_view text);

}  // namespace paulistrings
