#include "paulistrings/core/text.h"

#include <gtest/gtest.h>

#include <cstddef>
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
