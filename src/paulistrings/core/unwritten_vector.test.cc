// UnwrittenVector (core/unwritten_vector.h): sized with a value, copied or assigned it is a std::vector;
// sized without one, every element written before it is read holds what was written.

#include "paulistrings/core/unwritten_vector.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include "paulistrings/core/pauli_string.h"

namespace paulistrings {
namespace {

TEST(UnwrittenVector, SizedWithAValueHoldsIt) {
  UnwrittenVector<double> v(1000, 2.5);
  EXPECT_EQ(v.size(), 1000u);
  for (double x : v) EXPECT_EQ(x, 2.5);
  v.resize(1500, -1.0);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], i < 1000 ? 2.5 : -1.0);
  const UnwrittenVector<PauliString<2>> keys(7, PauliString<2>::from_label("XYZ", 3));
  for (const auto& key : keys) EXPECT_EQ(key, PauliString<2>::from_label("XYZ", 3));
}

TEST(UnwrittenVector, ElementsWrittenAfterSizingKeepTheirValuesThroughGrowthAndCopies) {
  UnwrittenVector<std::uint64_t> v(1 << 16);
  std::iota(v.begin(), v.end(), std::uint64_t{3});
  v.resize(v.size() * 3);  // grows: the written elements move with it
  for (std::size_t i = 0; i < (1u << 16); ++i) ASSERT_EQ(v[i], i + 3);
  for (std::size_t i = 1 << 16; i < v.size(); ++i) v[i] = 7 * i;
  const UnwrittenVector<std::uint64_t> copy = v;
  ASSERT_EQ(copy.size(), v.size());
  EXPECT_TRUE(std::equal(copy.begin(), copy.end(), v.begin()));
  UnwrittenVector<std::complex<double>> c;
  c.resize(3);
  c[0] = {1.0, 2.0};
  c[1] = {-3.0, 0.5};
  c[2] = 4.0;
  c.push_back({0.0, -1.0});
  EXPECT_EQ(c.back(), std::complex<double>(0.0, -1.0));
  EXPECT_EQ(c[1], std::complex<double>(-3.0, 0.5));
  const std::vector<std::complex<double>> plain(c.begin(), c.end());
  EXPECT_EQ(plain[2], std::complex<double>(4.0, 0.0));
}

}  // namespace
}  // namespace paulistrings
