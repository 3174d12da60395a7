#include "paulistrings/core/text.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <clocale>
#include <cmath>
#include <cstdio>
#include <limits>
#include <locale>
#include <string>
#include <thread>
#include <vector>

namespace paulistrings {
namespace {

std::string printf_g17(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

TEST(FormatDouble, WritesWhatPrintfG17Writes) {
  const double values[] = {0.0, -0.0, 1.0, -2.5, 1e-4, 1e-5, 0.1, 1.0 / 3.0, 123456789.125, 1e300, -4.9e-324,
                           std::numeric_limits<double>::max(), std::numeric_limits<double>::min()};
  for (double v : values) EXPECT_EQ(format_double(v), printf_g17(v)) << v;
  EXPECT_EQ(format_double(1e-4), "0.0001");
  EXPECT_EQ(format_double(1e-5), "1.0000000000000001e-05");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_double(std::nan("")), "nan");
}

TEST(FormatBytes, BinaryUnitsWithTwoDecimals) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(std::size_t{3} << 19), "1.50 MiB");
  EXPECT_EQ(format_bytes((std::size_t{1} << 30) * 24 + (std::size_t{1} << 28)), "24.25 GiB");
  EXPECT_EQ(format_bytes(std::size_t{1} << 50), "1.00 PiB");
  EXPECT_EQ(format_bytes(~std::size_t{0}), "16.00 EiB");
}

TEST(FormatDouble, RoundTripsEveryValue) {
  for (double v : {0.1, 2.0 / 3.0, 1e-300, 6.02214076e23, -1.0 / 7.0}) {
    EXPECT_EQ(std::stod(format_double(v)), v);
  }
}

TEST(FormatDouble, IgnoresTheGlobalLocale) {
  // A locale with a decimal comma, where the machine has one; the C++ global locale otherwise stays.
  const std::string expected = printf_g17(-1.25e-7);
  const std::locale before = std::locale::global(std::locale::classic());
  for (const char* name : {"de_DE.UTF-8", "fr_FR.UTF-8"}) {
    try {
      std::locale::global(std::locale(name));
      std::setlocale(LC_ALL, name);
      break;
    } catch (const std::runtime_error&) {
    }
  }
  EXPECT_EQ(format_double(0.5), "0.5");
  EXPECT_EQ(format_double(-1.25e-7), expected);
  std::setlocale(LC_ALL, "C");
  std::locale::global(before);
}

TEST(FormatDouble, SameTextOnManyThreadsAtOnce) {
  std::vector<std::string> out(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < out.size(); ++t) {
    threads.emplace_back([&out, t] { out[t] = format_double(1e-4 * static_cast<double>(t + 1)); });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t t = 0; t < out.size(); ++t) EXPECT_EQ(out[t], printf_g17(1e-4 * static_cast<double>(t + 1)));
}

/// The message parse(text) throws, or "no error".
template <class Parse>
std::string refusal(Parse&& parse, std::string_view text) {
  try {
    parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

TEST(ParseCount, WholeNumbersInDecimalOrScientificNotation) {
  EXPECT_EQ(parse_count("0"), 0u);
  EXPECT_EQ(parse_count("42"), 42u);
  EXPECT_EQ(parse_count("007"), 7u);  // decimal, never octal
  EXPECT_EQ(parse_count("+5"), 5u);
  EXPECT_EQ(parse_count("-0"), 0u);
  EXPECT_EQ(parse_count("0.0"), 0u);
  EXPECT_EQ(parse_count("0e999999999999999999999"), 0u);
  EXPECT_EQ(parse_count("1e7"), 10'000'000u);  // never 1
  EXPECT_EQ(parse_count("1E7"), 10'000'000u);
  EXPECT_EQ(parse_count("1e+7"), 10'000'000u);
  EXPECT_EQ(parse_count("2.5e3"), 2500u);
  EXPECT_EQ(parse_count("10.0"), 10u);
  EXPECT_EQ(parse_count("1.000"), 1u);
  EXPECT_EQ(parse_count(".5e1"), 5u);
  EXPECT_EQ(parse_count("5."), 5u);
  EXPECT_EQ(parse_count("100e-2"), 1u);
  EXPECT_EQ(parse_count("18446744073709551615"), kU64Max);
  EXPECT_EQ(parse_count("1.8446744073709551615e19"), kU64Max);
  EXPECT_EQ(parse_count("000000000000000000000000000000042"), 42u);
  EXPECT_EQ(parse_count("64", 64), 64u);
}

TEST(ParseCount, RefusesEverythingElseQuotingTheToken) {
  const auto reason = [](std::string_view text) {
    return refusal([](std::string_view t) { parse_count(t); }, text);
  };
  EXPECT_EQ(reason(""), "'' is not a number");
  EXPECT_EQ(reason("abc"), "'abc' is not a number");
  EXPECT_EQ(reason("12abc"), "'12abc' is not a number ('abc' after it)");
  EXPECT_EQ(reason(" 5"), "' 5' is not a number");
  EXPECT_EQ(reason("5 "), "'5 ' is not a number (' ' after it)");
  EXPECT_EQ(reason("1,000"), "'1,000' is not a number (',000' after it)");
  EXPECT_EQ(reason("1e"), "'1e' is not a number ('e' after it)");
  EXPECT_EQ(reason("e5"), "'e5' is not a number");
  EXPECT_EQ(reason("."), "'.' is not a number");
  EXPECT_EQ(reason("--5"), "'--5' is not a number");
  EXPECT_EQ(reason("0x10"), "'0x10' is not a number ('x10' after it)");
  EXPECT_EQ(reason("nan"), "'nan' is not a number");
  EXPECT_EQ(reason("inf"), "'inf' is not a number");
  EXPECT_EQ(reason("-inf"), "'-inf' is not a number");
  EXPECT_EQ(reason("1.5"), "'1.5' is not a whole number");
  EXPECT_EQ(reason("1e-3"), "'1e-3' is not a whole number");
  EXPECT_EQ(reason("1e-999999999999999999999"), "'1e-999999999999999999999' is not a whole number");
  EXPECT_EQ(reason("-3"), "'-3' is negative");
  EXPECT_EQ(reason("-1e7"), "'-1e7' is negative");
  EXPECT_EQ(reason("18446744073709551616"),
            "'18446744073709551616' is too large (at most 18446744073709551615)");
  EXPECT_EQ(reason("1e20"), "'1e20' is too large (at most 18446744073709551615)");
  EXPECT_EQ(reason("1e999999999999999999999"),
            "'1e999999999999999999999' is too large (at most 18446744073709551615)");
  EXPECT_EQ(refusal([](std::string_view t) { parse_count(t, 64); }, "65"), "'65' is too large (at most 64)");
  EXPECT_EQ(refusal([](std::string_view t) { parse_count(t, 2147483647); }, "1e10"),
            "'1e10' is too large (at most 2147483647)");
  const std::string long_token(200, '7');
  EXPECT_EQ(reason(long_token + "x"), "'" + std::string(80, '7') + "...' is not a number ('x' after it)");
}

TEST(ParseReal, FiniteDecimalsOnly) {
  EXPECT_EQ(parse_real("0.5"), 0.5);
  EXPECT_EQ(parse_real("-2"), -2.0);
  EXPECT_EQ(parse_real(".5"), 0.5);
  EXPECT_EQ(parse_real("5."), 5.0);
  EXPECT_EQ(parse_real("1e-3"), 1e-3);
  EXPECT_EQ(parse_real("+1E6"), 1e6);
  EXPECT_EQ(parse_real("6.1e-5"), 6.1e-5);
  EXPECT_EQ(parse_real("1.7976931348623157e308"), std::numeric_limits<double>::max());
  EXPECT_EQ(parse_real("0.1"), 0.1);  // correctly rounded
  EXPECT_EQ(parse_real("4.9e-324"), std::numeric_limits<double>::denorm_min());
  const auto reason = [](std::string_view text) {
    return refusal([](std::string_view t) { parse_real(t); }, text);
  };
  EXPECT_EQ(reason(""), "'' is not a number");
  EXPECT_EQ(reason("nan"), "'nan' is not a number");
  EXPECT_EQ(reason("inf"), "'inf' is not a number");
  EXPECT_EQ(reason("-infinity"), "'-infinity' is not a number");
  EXPECT_EQ(reason("0x1p3"), "'0x1p3' is not a number ('x1p3' after it)");
  EXPECT_EQ(reason("1.5abc"), "'1.5abc' is not a number ('abc' after it)");
  EXPECT_EQ(reason(" 1"), "' 1' is not a number");
  EXPECT_EQ(reason("1,5"), "'1,5' is not a number (',5' after it)");
  EXPECT_EQ(reason("1e999"), "'1e999' is out of range (beyond a double's range)");
  EXPECT_EQ(reason("-1e999"), "'-1e999' is out of range (beyond a double's range)");
  EXPECT_EQ(reason("1e-999"), "'1e-999' is out of range (beyond a double's range)");  // not rounded to 0
}

TEST(ParseByteSize, BytesWithBinaryMultiples) {
  EXPECT_EQ(parse_byte_size("1500000"), 1'500'000u);
  EXPECT_EQ(parse_byte_size("100B"), 100u);
  EXPECT_EQ(parse_byte_size("64K"), 65'536u);
  EXPECT_EQ(parse_byte_size("64k"), 65'536u);
  EXPECT_EQ(parse_byte_size("1KB"), 1024u);
  EXPECT_EQ(parse_byte_size("1KiB"), 1024u);
  EXPECT_EQ(parse_byte_size("1Ki"), 1024u);
  EXPECT_EQ(parse_byte_size("512M"), 512u << 20);
  EXPECT_EQ(parse_byte_size("2G"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_size("1T"), std::uint64_t{1} << 40);
  EXPECT_EQ(parse_byte_size("1.5G"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("0.5K"), 512u);
  EXPECT_EQ(parse_byte_size("1e9"), 1'000'000'000u);  // never 1
  EXPECT_EQ(parse_byte_size("16777215T"), std::uint64_t{16777215} << 40);
  const auto reason = [](std::string_view text) {
    return refusal([](std::string_view t) { parse_byte_size(t); }, text);
  };
  const std::string expected = " is not a byte size (expected a number with an optional K, M, G or T suffix)";
  for (const char* bad : {"", "K", "12Q", "1GG", "1 G", "1iB", "1E", "nanG", "0x10"})
    EXPECT_EQ(reason(bad), std::string("'") + bad + "'" + expected);
  EXPECT_EQ(reason("1.3K"), "'1.3K' is not a whole number");
  EXPECT_EQ(reason("-1G"), "'-1G' is negative");
  EXPECT_EQ(reason("16777216T"), "'16777216T' is too large (at most 18446744073709551615)");
}

TEST(ParseIndex, DecimalDigitsOnly) {
  EXPECT_EQ(parse_index("0"), std::optional<std::size_t>(0));
  EXPECT_EQ(parse_index("42"), std::optional<std::size_t>(42));
  EXPECT_EQ(parse_index("007"), std::optional<std::size_t>(7));
  EXPECT_EQ(parse_index("999999999"), std::optional<std::size_t>(999999999));
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1000000000", "3-4", "a"}) {
    EXPECT_FALSE(parse_index(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(ParseIndexList, IndicesAndRangesInTheOrderWritten) {
  EXPECT_EQ(parse_index_list("3"), (std::vector<std::size_t>{3}));
  EXPECT_EQ(parse_index_list("3,5,10-12"), (std::vector<std::size_t>{3, 5, 10, 11, 12}));
  EXPECT_EQ(parse_index_list("0-3,8-11"), (std::vector<std::size_t>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(parse_index_list("7,2,7,4-4"), (std::vector<std::size_t>{7, 2, 7, 4}));
  EXPECT_EQ(parse_index_list("999999999"), (std::vector<std::size_t>{999999999}));
}

TEST(ParseIndexList, RefusesWhatIsNotAListWithTheReason) {
  const auto reason = [](std::string_view text) {
    try {
      parse_index_list(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(reason(""), "'' is not an index");
  EXPECT_EQ(reason("0-9,x"), "'x' is not an index");
  EXPECT_EQ(reason("1,,2"), "'' is not an index");
  EXPECT_EQ(reason("3,"), "'' is not an index");
  EXPECT_EQ(reason(" 3"), "' 3' is not an index");
  EXPECT_EQ(reason("-3"), "'' is not an index");
  EXPECT_EQ(reason("1-2-3"), "'2-3' is not an index");
  EXPECT_EQ(reason("1000000000"), "'1000000000' is not an index");
  EXPECT_EQ(reason("9-3"), "range '9-3' runs backwards");
}

}  // namespace
}  // namespace paulistrings
