// KeySorter: a run of distinct keys comes out ascending with each coefficient still beside its key,
// whatever the run's length, and one sorter reused across runs of different lengths.

#include "paulistrings/core/key_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "paulistrings/core/pauli_string.h"

namespace paulistrings {
namespace {

template <int W>
std::vector<PauliString<W>> distinct_keys(std::mt19937_64& rng, std::size_t n) {
  std::set<PauliString<W>> seen;
  std::vector<PauliString<W>> keys;
  while (keys.size() < n) {
    PauliString<W> key;
    for (int w = 0; w < W; ++w) {
      key.x[w] = rng() & rng();  // sparse words: keys that differ in a few bits only
      key.z[w] = rng() & rng();
    }
    if (seen.insert(key).second) keys.push_back(key);
  }
  return keys;
}

template <int W, class C>
void check_runs(KeySorter<PauliString<W>, C>& sorter, std::mt19937_64& rng) {
  for (std::size_t n : {0, 1, 2, 3, 17, 200, 5000, 64}) {
    std::vector<PauliString<W>> keys = distinct_keys<W>(rng, n);
    std::vector<C> coefficients(n);
    std::map<PauliString<W>, C> expected;
    for (std::size_t t = 0; t < n; ++t) {
      coefficients[t] = C(static_cast<double>(t) + 0.5);
      expected[keys[t]] = coefficients[t];
    }
    sorter.sort(keys.data(), coefficients.data(), n);
    ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end())) << "n = " << n;
    std::size_t t = 0;
    for (const auto& [key, coefficient] : expected) {
      ASSERT_EQ(keys[t], key) << "n = " << n << ", t = " << t;
      EXPECT_EQ(coefficients[t], coefficient) << "n = " << n << ", t = " << t;
      ++t;
    }
  }
}

TEST(KeySorter, SortsKeysWithTheirCoefficientsForEveryLength) {
  std::mt19937_64 rng(7);
  KeySorter<PauliString<1>, double> real_one;
  check_runs<1>(real_one, rng);
  KeySorter<PauliString<2>, std::complex<double>> complex_two;
  check_runs<2>(complex_two, rng);
  KeySorter<PauliString<4>, double> real_four;
  check_runs<4>(real_four, rng);
}

TEST(KeySorter, SortsOnlyTheRangeItIsGiven) {
  std::mt19937_64 rng(11);
  std::vector<PauliString<1>> keys = distinct_keys<1>(rng, 40);
  std::vector<double> coefficients(40);
  for (std::size_t t = 0; t < 40; ++t) coefficients[t] = static_cast<double>(t);
  const std::vector<PauliString<1>> before = keys;
  KeySorter<PauliString<1>, double> sorter;
  sorter.sort(keys.data() + 10, coefficients.data() + 10, 20);
  EXPECT_TRUE(std::is_sorted(keys.begin() + 10, keys.begin() + 30));
  for (std::size_t t : {0, 9, 30, 39}) {
    EXPECT_EQ(keys[t], before[t]);
    EXPECT_EQ(coefficients[t], static_cast<double>(t));
  }
  for (std::size_t t = 10; t < 30; ++t) {
    const auto it = std::find(before.begin(), before.end(), keys[t]);
    ASSERT_NE(it, before.end());
    EXPECT_EQ(coefficients[t], static_cast<double>(it - before.begin()));
  }
}

}  // namespace
}  // namespace paulistrings
