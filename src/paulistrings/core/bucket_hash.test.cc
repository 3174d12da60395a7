// Tests BucketHash<W> and splitmix64: GF(2) linearity, bucket splitting under growth, determinism
// from the seed, seed sensitivity, width independence of the rows, and bucket balance.

#include "paulistrings/core/bucket_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace paulistrings {
namespace {

static_assert(splitmix64(0) == 0xe220a8397b1dcdafULL, "splitmix64 must be the standard mixer");

template <int W>
PauliString<W> RandomKey(std::mt19937_64& rng) {
  PauliString<W> key;
  for (int w = 0; w < W; ++w) {
    key.x[w] = rng();
    key.z[w] = rng();
  }
  return key;
}

// h(v) computed straight from the definition: bit j is the GF(2) inner product of row j and v.
template <int W>
std::uint64_t HashFromRows(std::uint64_t seed, const PauliString<W>& key, int bits) {
  std::uint64_t h = 0;
  for (int j = 0; j < bits; ++j) {
    const PauliString<W> row = BucketHash<W>::row(seed, j);
    int parity = 0;
    for (int w = 0; w < W; ++w) parity ^= std::popcount((row.x[w] & key.x[w]) ^ (row.z[w] & key.z[w])) & 1;
    h |= static_cast<std::uint64_t>(parity) << j;
  }
  return h;
}

template <class T>
class BucketHashTest : public ::testing::Test {};

template <int W>
struct Width {
  static constexpr int kValue = W;
};
using Widths = ::testing::Types<Width<1>, Width<2>, Width<4>, Width<8>, Width<16>>;
TYPED_TEST_SUITE(BucketHashTest, Widths);

TYPED_TEST(BucketHashTest, IsLinearOverGf2) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> hash;
  std::mt19937_64 rng(1000 + W);
  const PauliString<W> zero;
  for (int bits : {0, 1, 2, 7, 10, 16, 23, kMaxBucketBits}) {
    EXPECT_EQ(hash(zero, bits), 0u) << bits;
    for (int trial = 0; trial < 100; ++trial) {
      const PauliString<W> a = RandomKey<W>(rng), b = RandomKey<W>(rng);
      const std::uint64_t ha = hash(a, bits), hb = hash(b, bits);
      ASSERT_EQ(hash(a ^ b, bits), ha ^ hb) << "bits " << bits;
      ASSERT_LT(ha, std::uint64_t{1} << bits);
    }
  }
}

TYPED_TEST(BucketHashTest, MatchesTheRowDefinition) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> hash(42);
  std::mt19937_64 rng(2000 + W);
  for (int trial = 0; trial < 50; ++trial) {
    const PauliString<W> key = RandomKey<W>(rng);
    EXPECT_EQ(hash(key, kMaxBucketBits), HashFromRows<W>(42, key, kMaxBucketBits));
  }
  // The hash of a single X (or Z) bit reads that bit of every row.
  for (std::size_t q : {std::size_t{0}, std::size_t{63}, PauliString<W>::kMaxQubits - 1}) {
    const std::uint64_t hx = hash(PauliString<W>::single('X', q), kMaxBucketBits);
    const std::uint64_t hz = hash(PauliString<W>::single('Z', q), kMaxBucketBits);
    for (int j = 0; j < kMaxBucketBits; ++j) {
      const PauliString<W> row = BucketHash<W>::row(42, j);
      EXPECT_EQ((hx >> j) & 1, (row.x[q / 64] >> (q % 64)) & 1);
      EXPECT_EQ((hz >> j) & 1, (row.z[q / 64] >> (q % 64)) & 1);
    }
  }
}

TYPED_TEST(BucketHashTest, GrowingByOneBitSplitsEveryBucket) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> hash;
  std::mt19937_64 rng(3000 + W);
  for (int trial = 0; trial < 100; ++trial) {
    const PauliString<W> key = RandomKey<W>(rng);
    for (int b = 0; b < kMaxBucketBits; ++b) {
      const std::uint64_t low = hash(key, b), high = hash(key, b + 1);
      ASSERT_EQ(high & ((std::uint64_t{1} << b) - 1), low) << "b " << b;
      ASSERT_TRUE(high == low || high == (low | (std::uint64_t{1} << b))) << "b " << b;
    }
  }
}

TYPED_TEST(BucketHashTest, BitsBetweenAreTheHashsBitsShiftedDown) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> hash(2468);
  std::mt19937_64 rng(6000 + W);
  for (int trial = 0; trial < 100; ++trial) {
    const PauliString<W> key = RandomKey<W>(rng);
    const std::uint64_t all = hash(key, kMaxBucketBits);
    for (const auto& [from, to] : {std::pair{0, 0}, std::pair{0, 5}, std::pair{7, 8}, std::pair{3, 11},
                                   std::pair{12, kMaxBucketBits}}) {
      const std::uint64_t expected = (all >> from) & ((std::uint64_t{1} << (to - from)) - 1);
      ASSERT_EQ(hash.bits_between(key, from, to), expected) << from << ".." << to;
    }
  }
}

TYPED_TEST(BucketHashTest, IsDeterminedBySeedAlone) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> first(12345), second(12345);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.seed(), 12345u);
  EXPECT_EQ(BucketHash<W>().seed(), kDefaultHashSeed);
  std::mt19937_64 rng(4000 + W);
  for (int trial = 0; trial < 100; ++trial) {
    const PauliString<W> key = RandomKey<W>(rng);
    ASSERT_EQ(first(key, kMaxBucketBits), second(key, kMaxBucketBits));
  }
  for (int j = 0; j < kMaxBucketBits; ++j) EXPECT_EQ(BucketHash<W>::row(7, j), BucketHash<W>::row(7, j));
}

TYPED_TEST(BucketHashTest, DifferentSeedsGiveDifferentFunctions) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> a(1), b(2), c(kDefaultHashSeed);
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == c);
  std::mt19937_64 rng(5000 + W);
  int differ_ab = 0, differ_ac = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    const PauliString<W> key = RandomKey<W>(rng);
    differ_ab += a(key, kMaxBucketBits) != b(key, kMaxBucketBits);
    differ_ac += a(key, kMaxBucketBits) != c(key, kMaxBucketBits);
  }
  // Independent random 30-bit functions agree on a key with probability 2^-30.
  EXPECT_EQ(differ_ab, kTrials);
  EXPECT_EQ(differ_ac, kTrials);
  // The rows differ as well, for every row index.
  for (int j = 0; j < kMaxBucketBits; ++j) EXPECT_NE(BucketHash<W>::row(1, j), BucketHash<W>::row(2, j)) << j;
}

TYPED_TEST(BucketHashTest, RowsAreDistinctAndDense) {
  constexpr int W = TypeParam::kValue;
  for (int j = 0; j < kMaxBucketBits; ++j) {
    const PauliString<W> row = BucketHash<W>::row(kDefaultHashSeed, j);
    // A dense random row has about half of its 128·W bits set.
    int set_bits = 0;
    for (int w = 0; w < W; ++w) set_bits += std::popcount(row.x[w]) + std::popcount(row.z[w]);
    EXPECT_GT(set_bits, 128 * W / 4) << j;
    EXPECT_LT(set_bits, 3 * 128 * W / 4) << j;
    for (int k = 0; k < j; ++k) EXPECT_NE(row, BucketHash<W>::row(kDefaultHashSeed, k)) << j << " " << k;
  }
}

TYPED_TEST(BucketHashTest, BucketsAreBalanced) {
  constexpr int W = TypeParam::kValue;
  const BucketHash<W> hash;
  std::mt19937_64 rng(6000 + W);
  constexpr int kBits = 4;
  constexpr int kKeys = 16000;
  std::vector<int> counts(1 << kBits, 0);
  // Low-weight keys (one or two factors) are the common case in propagation: they must spread too.
  for (int i = 0; i < kKeys; ++i) {
    PauliString<W> key;
    std::uniform_int_distribution<std::size_t> qubit(0, PauliString<W>::kMaxQubits - 1);
    key.set_code(qubit(rng), static_cast<int>(rng() % 3) + 1);
    if (i % 2 == 0) key.set_code(qubit(rng), static_cast<int>(rng() % 3) + 1);
    ++counts[hash(key, kBits)];
  }
  for (int b = 0; b < (1 << kBits); ++b) {
    EXPECT_GT(counts[b], kKeys / 16 * 6 / 10) << "bucket " << b;
    EXPECT_LT(counts[b], kKeys / 16 * 14 / 10) << "bucket " << b;
  }
}

// A narrowed key (position l standing for qubit qubit_of[l] of a wider register) hashes, under a hash
// given those qubits' columns, to the bucket of its full-width key: what keeps a narrowed engine's
// buckets those of the full-width sum (docs/design.md §7.6).
TEST(BucketHashWidthTest, CopiedColumnsHashARelabelledKeyAsItsFullWidthKey) {
  std::mt19937_64 rng(77);
  const BucketHash<4> wide(31337);
  std::vector<std::size_t> qubit_of(256);
  for (std::size_t q = 0; q < qubit_of.size(); ++q) qubit_of[q] = q;
  std::shuffle(qubit_of.begin(), qubit_of.end(), rng);
  qubit_of.resize(128);  // 128 labels on 128 of the 256 qubits, in no order
  BucketHash<2> narrow(31337);
  for (std::size_t l = 0; l < qubit_of.size(); ++l) narrow.copy_column(l, wide, qubit_of[l]);
  EXPECT_FALSE(narrow == BucketHash<2>(31337));  // the copied columns are not the seed's own
  for (int trial = 0; trial < 200; ++trial) {
    const PauliString<2> key = RandomKey<2>(rng);
    PauliString<4> full;
    for (std::size_t l = 0; l < 128; ++l) {
      const std::size_t q = qubit_of[l];
      full.x[q / 64] |= ((key.x[l / 64] >> (l % 64)) & 1) << (q % 64);
      full.z[q / 64] |= ((key.z[l / 64] >> (l % 64)) & 1) << (q % 64);
    }
    for (int bits : {1, 7, 16, kMaxBucketBits})
      ASSERT_EQ(narrow(key, bits), wide(full, bits)) << trial << " " << bits;
  }
  // Copying a column back from the seed's own hash restores it.
  const BucketHash<2> own(31337);
  for (std::size_t l = 0; l < 128; ++l) narrow.copy_column(l, own, l);
  EXPECT_TRUE(narrow == own);
}

TEST(BucketHashWidthTest, RowWordsDependOnlyOnSeedRowAndWord) {
  // A key that fits 64 qubits hashes the same at every width.
  std::mt19937_64 rng(7000);
  const BucketHash<1> h1(99);
  const BucketHash<2> h2(99);
  const BucketHash<16> h16(99);
  for (int trial = 0; trial < 50; ++trial) {
    PauliString<1> k1;
    k1.x[0] = rng();
    k1.z[0] = rng();
    PauliString<2> k2;
    k2.x[0] = k1.x[0];
    k2.z[0] = k1.z[0];
    PauliString<16> k16;
    k16.x[0] = k1.x[0];
    k16.z[0] = k1.z[0];
    EXPECT_EQ(h1(k1, kMaxBucketBits), h2(k2, kMaxBucketBits));
    EXPECT_EQ(h1(k1, kMaxBucketBits), h16(k16, kMaxBucketBits));
  }
  for (int j = 0; j < kMaxBucketBits; ++j) {
    EXPECT_EQ(BucketHash<2>::row(99, j).x[1], BucketHash<16>::row(99, j).x[1]);
    EXPECT_EQ(BucketHash<2>::row(99, j).z[1], BucketHash<16>::row(99, j).z[1]);
  }
}

TEST(SplitMix64Test, IsABijectiveLookingMixer) {
  // Consecutive inputs give well-spread, distinct outputs.
  std::vector<std::uint64_t> outputs;
  for (std::uint64_t v = 0; v < 1000; ++v) outputs.push_back(splitmix64(v));
  std::sort(outputs.begin(), outputs.end());
  EXPECT_EQ(std::adjacent_find(outputs.begin(), outputs.end()), outputs.end());
  int total_bits = 0;
  for (std::uint64_t v = 0; v < 1000; ++v) total_bits += std::popcount(splitmix64(v) ^ splitmix64(v + 1));
  EXPECT_NEAR(total_bits / 1000.0, 32.0, 2.0);
}

}  // namespace
}  // namespace paulistrings
