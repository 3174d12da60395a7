#pragma once
// Numbers, byte counts and index lists as text.
//
// Strict numbers (docs/cli.md, "Numbers"): every count, size and real that a reader or a program takes
// from text goes through parse_count, parse_byte_size or parse_real, so one token means one thing
// everywhere. The whole token is the number (no spaces, no trailing text); counts are exact ("1e7" is
// 10^7, "2.5e3" is 2500, "1.5" and "1e-3" are refused, never rounded); negative, NaN, infinite and
// overflowing values are refused. The messages quote the token; the caller adds where it came from.
//
// format_double: numbers in descriptions and error messages, written without iostreams: the same text
// as printf's "%.17g" (round-trips every double), independent of the global C++ and C locales, and safe
// on any thread. Descriptions feed the partition shape check's fingerprint, so every rank must write the
// same bytes whatever its locale; and formatting a double through an ostream on a partition thread
// crashed the Python module on the GPU machine (docs/PERFORMANCE.md, 2026-12-01).

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
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

/// A count: a whole number from 0 to `max`, in decimal ("42", "007", "+5") or in scientific notation
/// when its value is whole ("1e7", "2.5e3", "1E+6", "10.0"). Throws std::invalid_argument quoting the
/// token: "'' is empty", "'12abc' is not a number", "'nan' is not a number", "'1.5' is not a whole
/// number", "'-3' is negative", "'1e30' is too large (at most 2147483647)".
std::uint64_t parse_count(std::string_view text,
                          std::uint64_t max = std::numeric_limits<std::uint64_t>::max());

/// A finite real in decimal or scientific notation ("0.5", "-2", ".5", "1e-3", "+1E6"); the whole token.
/// Refuses, quoting the token: empty, trailing text, "nan", "inf", hexadecimal, and magnitudes a double
/// cannot hold ("1e999", "1e-999": out of range, not rounded to infinity or zero).
double parse_real(std::string_view text);

/// A byte count with an optional binary multiple: "1500000", "64K", "512M", "2G", "1T" (also "MB",
/// "MiB", lower case), "1.5G" and "1e9" when the bytes come out whole. Throws std::invalid_argument
/// quoting the token, like parse_count.
std::uint64_t parse_byte_size(std::string_view text);
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
