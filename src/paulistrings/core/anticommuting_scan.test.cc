// Tests the anticommuting scan (anticommuting_scan.h): the portable loop against commutes_with key by key
// at W = 1, 2, 4, the AVX-512 form of one-word keys against the portable loop (where the processor has
// it), and the dispatcher against both — every length around the vector width, sparse and dense hits,
// the support ORed into what it held (or left alone when the caller asks for none).

#include "paulistrings/core/anticommuting_scan.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace paulistrings {
namespace {

/// A key whose factors are non-identity with probability `density` each, on the first `qubits` qubits.
template <int W>
PauliString<W> ScanTestKey(std::mt19937_64& rng, std::size_t qubits, double density) {
  std::bernoulli_distribution busy(density);
  std::uniform_int_distribution<int> letter(1, 3);
  PauliString<W> key;
  for (std::size_t q = 0; q < qubits; ++q) {
    if (!busy(rng)) continue;
    const int code = letter(rng);
    if (code & 1) key.x[q / 64] |= std::uint64_t{1} << (q % 64);
    if (code & 2) key.z[q / 64] |= std::uint64_t{1} << (q % 64);
  }
  return key;
}

/// What a scan gave: the listed indices and the support.
template <int W>
struct ScanOutcome {
  std::vector<std::uint32_t> hits;
  std::array<std::uint64_t, W> support{};
};

/// The expected outcome, key by key: support starting from `initial`.
template <int W>
ScanOutcome<W> DirectScan(const std::vector<PauliString<W>>& keys, const PauliString<W>& g,
                          const std::array<std::uint64_t, W>& initial) {
  ScanOutcome<W> out;
  out.support = initial;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (int w = 0; w < W; ++w) out.support[w] |= keys[i].x[w] | keys[i].z[w];
    if (!keys[i].commutes_with(g)) out.hits.push_back(static_cast<std::uint32_t>(i));
  }
  return out;
}

/// Runs `scan` with a hits buffer of exactly keys.size() entries (a write past it is a sanitizer error).
template <int W, class Scan>
ScanOutcome<W> RunScan(const std::vector<PauliString<W>>& keys, const PauliString<W>& g,
                       const std::array<std::uint64_t, W>& initial, Scan scan) {
  std::vector<std::uint32_t> buffer(keys.size());
  ScanOutcome<W> out;
  out.support = initial;
  const std::size_t count = scan(keys.data(), keys.size(), g, buffer.data(), out.support);
  EXPECT_LE(count, keys.size());
  out.hits.assign(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(count));
  return out;
}

/// The generators the engines meet: one qubit, two neighbours, two neighbours in the last word (a
/// generator within one word other than the first when W > 1), two far apart (other words when W > 1),
/// and a dense random string.
template <int W>
std::vector<PauliString<W>> ScanTestGenerators(std::mt19937_64& rng) {
  const std::size_t n = 64 * W;
  std::vector<PauliString<W>> out;
  out.push_back(PauliString<W>::from_label("X3", n));
  out.push_back(PauliString<W>::from_label("Z10 Z11", n));
  out.push_back(PauliString<W>::from_label("X" + std::to_string(n - 3) + " Y" + std::to_string(n - 2), n));
  out.push_back(PauliString<W>::from_label("Y0 X" + std::to_string(n - 1), n));
  out.push_back(ScanTestKey<W>(rng, n, 0.7));
  return out;
}

template <int W, class Scan>
void ExpectScanMatchesDirect(Scan scan, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<std::size_t> lengths = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099};
  for (const double density : {0.02, 0.3, 0.9}) {
    for (const PauliString<W>& g : ScanTestGenerators<W>(rng)) {
      for (const std::size_t length : lengths) {
        std::vector<PauliString<W>> keys;
        for (std::size_t i = 0; i < length; ++i) keys.push_back(ScanTestKey<W>(rng, 64 * W, density));
        std::array<std::uint64_t, W> initial{};
        initial[0] = std::uint64_t{1} << 63;  // the support is ORed into, not overwritten
        const ScanOutcome<W> expected = DirectScan<W>(keys, g, initial);
        const ScanOutcome<W> actual = RunScan<W>(keys, g, initial, scan);
        EXPECT_EQ(actual.hits, expected.hits) << "length " << length << ", density " << density;
        EXPECT_EQ(actual.support, expected.support) << "length " << length << ", density " << density;
      }
    }
  }
}

TEST(AnticommutingScan, ThePortableLoopListsWhatCommutesWithRejects) {
  ExpectScanMatchesDirect<1>(anticommuting_scan_portable<1>, 1);
  ExpectScanMatchesDirect<2>(anticommuting_scan_portable<2>, 2);
  ExpectScanMatchesDirect<4>(anticommuting_scan_portable<4>, 4);
}

TEST(AnticommutingScan, TheAvx512FormOfOneWordKeysListsTheSame) {
  if (!anticommuting_scan_has_avx512()) {
    GTEST_SKIP() << "this processor has no AVX-512 F/VL/VPOPCNTDQ: the portable loop runs instead";
  }
  ExpectScanMatchesDirect<1>(anticommuting_scan_avx512, 11);
}

TEST(AnticommutingScan, TheDispatcherListsTheSameAtEveryWidth) {
  ExpectScanMatchesDirect<1>(anticommuting_scan<1>, 21);
  ExpectScanMatchesDirect<2>(anticommuting_scan<2>, 22);
  ExpectScanMatchesDirect<4>(anticommuting_scan<4>, 24);
}

TEST(AnticommutingScan, WithoutTheSupportTheListIsTheSameAndTheSupportUntouched) {
  std::mt19937_64 rng(31);
  std::vector<PauliString<2>> keys;
  for (int i = 0; i < 301; ++i) keys.push_back(ScanTestKey<2>(rng, 128, 0.1));
  const PauliString<2> g = PauliString<2>::from_label("X5 Z70", 128);
  const std::array<std::uint64_t, 2> initial = {7, 9};
  const ScanOutcome<2> expected = DirectScan<2>(keys, g, initial);
  const ScanOutcome<2> actual = RunScan<2>(keys, g, initial, anticommuting_scan<2, false>);
  EXPECT_EQ(actual.hits, expected.hits);
  EXPECT_EQ(actual.support, initial);
}

TEST(AnticommutingScan, TheUnlistedIndicesAreTheCommutingKeys) {
  std::mt19937_64 rng(41);
  std::vector<PauliString<1>> keys;
  for (int i = 0; i < 203; ++i) keys.push_back(ScanTestKey<1>(rng, 64, 0.2));
  const PauliString<1> g = PauliString<1>::from_label("Z1 X2", 64);
  const ScanOutcome<1> listed = RunScan<1>(keys, g, {}, anticommuting_scan<1>);
  std::vector<std::uint32_t> expected;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].commutes_with(g)) expected.push_back(static_cast<std::uint32_t>(i));
  }
  std::vector<std::uint32_t> unlisted;
  for_each_unlisted(listed.hits.data(), listed.hits.size(), keys.size(),
                    [&](std::size_t i) { unlisted.push_back(static_cast<std::uint32_t>(i)); });
  EXPECT_EQ(unlisted, expected);
  EXPECT_FALSE(expected.empty());
  EXPECT_FALSE(listed.hits.empty());
}

TEST(AnticommutingScan, AllHitsAndNoHitsFillOrLeaveTheList) {
  // Every key anticommutes (Z against X on qubit 0), then none does (identity generator).
  const PauliString<1> x0 = PauliString<1>::single('X', 0);
  const std::vector<PauliString<1>> keys(37, PauliString<1>::single('Z', 0));
  const ScanOutcome<1> all = RunScan<1>(keys, x0, {}, anticommuting_scan<1>);
  ASSERT_EQ(all.hits.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(all.hits[i], i);
  EXPECT_EQ(all.support[0], 1u);
  const ScanOutcome<1> none = RunScan<1>(keys, PauliString<1>{}, {}, anticommuting_scan<1>);
  EXPECT_TRUE(none.hits.empty());
}

}  // namespace
}  // namespace paulistrings
