// ColumnCounts and choose_column_groups on hand-made masks: the kept counts and the chosen partitions
// exactly.

#include "paulistrings/sweep/column_groups.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace paulistrings {
namespace {

/// kept(a, b) by brute force: masks with some bit in [a, b).
std::uint64_t brute_kept(const std::vector<std::uint64_t>& masks, std::size_t a, std::size_t b) {
  std::uint64_t range = 0;
  for (std::size_t k = a; k < b; ++k) range |= std::uint64_t{1} << k;
  std::uint64_t kept = 0;
  for (const std::uint64_t m : masks) kept += (m & range) != 0;
  return kept;
}

TEST(ColumnCounts, KeptMatchesBruteForceForEveryRange) {
  for (const std::size_t K : {1, 2, 5, 20, 63, 64}) {
    std::mt19937_64 rng(K);
    std::vector<std::uint64_t> masks;
    ColumnCounts counts(K), half(K);
    for (int i = 0; i < 300; ++i) {
      // Sparse, dense, contiguous and empty masks.
      std::uint64_t m = rng();
      if (i % 4 == 1) m &= rng();
      if (i % 4 == 2) m = (m >> (rng() % 64)) | (std::uint64_t{1} << (rng() % 64));
      if (i % 17 == 0) m = 0;
      masks.push_back(m & (K == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << K) - 1));
      (i % 2 == 0 ? counts : half).add(m);
    }
    counts.merge(half);
    EXPECT_EQ(counts.terms(), 300u);
    const std::vector<std::uint64_t> kept = counts.kept_table();
    for (std::size_t a = 0; a < K; ++a) {
      for (std::size_t b = a + 1; b <= K; ++b)
        ASSERT_EQ(kept[a * (K + 1) + b], brute_kept(masks, a, b))
            << "K " << K << " [" << a << ", " << b << ")";
    }
  }
}

TEST(ColumnCounts, RefusesColumnCountsOutsideOneToSixtyFour) {
  EXPECT_THROW(ColumnCounts(0), std::invalid_argument);
  EXPECT_THROW(ColumnCounts(65), std::invalid_argument);
  ColumnCounts a(3), b(4);
  EXPECT_THROW(a.merge(b), std::invalid_argument);
}

TEST(ChooseColumnGroups, DisjointHalvesSplitInTwo) {
  // Four columns; 100 terms kept by columns 0-1 only, 100 by columns 2-3 only. Key 16 bytes, 8 a column.
  ColumnCounts counts(4);
  for (int i = 0; i < 100; ++i) counts.add(0b0011);
  for (int i = 0; i < 100; ++i) counts.add(0b1100);
  const ColumnPartition p = choose_column_groups(counts, 16.0, 8.0);
  EXPECT_EQ(p.starts, (std::vector<std::size_t>{0, 2}));
  EXPECT_DOUBLE_EQ(p.cost, 2 * 100 * (16.0 + 2 * 8.0));    // 6400
  EXPECT_DOUBLE_EQ(p.whole_cost, 200 * (16.0 + 4 * 8.0));  // 9600
  EXPECT_TRUE(p.split);                                    // 6400 < 0.75 · 9600 = 7200
}

TEST(ChooseColumnGroups, WhatAGroupCostsWhateverItHoldsKeepsSmallGroupsTogether) {
  // The halves above: 6400 split against 9600 whole. A group that costs 1000 bytes besides its terms:
  // 8400 against 10600, over 0.75 · 10600 = 7950, so no split.
  ColumnCounts counts(4);
  for (int i = 0; i < 100; ++i) counts.add(0b0011);
  for (int i = 0; i < 100; ++i) counts.add(0b1100);
  const ColumnPartition p = choose_column_groups(counts, 16.0, 8.0, 1000.0);
  EXPECT_DOUBLE_EQ(p.cost, 2 * (100 * (16.0 + 2 * 8.0) + 1000.0));  // 8400
  EXPECT_DOUBLE_EQ(p.whole_cost, 200 * (16.0 + 4 * 8.0) + 1000.0);  // 10600
  EXPECT_FALSE(p.split);
  // Ten times the terms: the same fixed cost no longer keeps them together (66000 < 0.75 · 97000).
  ColumnCounts more(4);
  for (int i = 0; i < 1000; ++i) more.add(0b0011);
  for (int i = 0; i < 1000; ++i) more.add(0b1100);
  const ColumnPartition q = choose_column_groups(more, 16.0, 8.0, 1000.0);
  EXPECT_EQ(q.starts, (std::vector<std::size_t>{0, 2}));
  EXPECT_TRUE(q.split);
  // Eight groups of one column would each pay it (7680 + 8000): four groups of two are cheaper
  // (4 · (80 · 32 + 1000) = 14240).
  ColumnCounts eight(8);
  for (int k = 0; k < 8; ++k)
    for (int i = 0; i < 40; ++i) eight.add(std::uint64_t{1} << k);
  EXPECT_EQ(choose_column_groups(eight, 16.0, 8.0).starts.size(), 8u);
  EXPECT_EQ(choose_column_groups(eight, 16.0, 8.0, 1000.0).starts, (std::vector<std::size_t>{0, 2, 4, 6}));
}

TEST(ChooseColumnGroups, IdenticalColumnsNeverSplit) {
  ColumnCounts counts(20);
  for (int i = 0; i < 1000; ++i) counts.add((std::uint64_t{1} << 20) - 1);
  for (int i = 0; i < 10; ++i) counts.add(0);  // kept by none: in the whole, in no range
  const ColumnPartition p = choose_column_groups(counts, 16.0, 8.0);
  EXPECT_EQ(p.starts, (std::vector<std::size_t>{0}));
  EXPECT_FALSE(p.split);
  EXPECT_DOUBLE_EQ(p.cost, 1000 * (16.0 + 20 * 8.0));
  EXPECT_DOUBLE_EQ(p.whole_cost, 1010 * (16.0 + 20 * 8.0));
}

TEST(ChooseColumnGroups, AGrowingLastColumnSplitsOffAlone) {
  // Nested columns as in the kicked-Ising θh sweep: column k keeps 10·(k + 1) terms, the last one 1000.
  // Terms kept by columns k.. only (masks of the top columns).
  ColumnCounts counts(4);
  for (int i = 0; i < 10; ++i) counts.add(0b1111);
  for (int i = 0; i < 10; ++i) counts.add(0b1110);
  for (int i = 0; i < 10; ++i) counts.add(0b1100);
  for (int i = 0; i < 970; ++i) counts.add(0b1000);
  const ColumnPartition p = choose_column_groups(counts, 16.0, 16.0);
  // {3} keeps 1000 terms at 16 + 16 bytes (32000); of the first three, {0} keeps 10 at 32 (320) and {1, 2}
  // 30 at 48 (1440): 33760 against 1000 · 80 = 80000. ({0, 1, 2} together: 30 · 64 = 1920.)
  EXPECT_EQ(p.starts, (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_DOUBLE_EQ(p.cost, 33760.0);
  EXPECT_DOUBLE_EQ(p.whole_cost, 80000.0);
  EXPECT_TRUE(p.split);
}

TEST(ChooseColumnGroups, EqualCostsKeepTheLongerLastRange) {
  // Columns 0 and 1 keep the same 10 terms: apart 2 · 10 · (0 + 8) = 160, together 10 · (0 + 16) = 160.
  ColumnCounts counts(2);
  for (int i = 0; i < 10; ++i) counts.add(0b11);
  const ColumnPartition p = choose_column_groups(counts, 0.0, 8.0);
  EXPECT_EQ(p.starts, (std::vector<std::size_t>{0}));
  EXPECT_FALSE(p.split);
}

TEST(ChooseColumnGroups, ASavingUnderAQuarterDoesNotSplit) {
  // Two columns sharing most terms: {0} 100, {1} 100, 60 of them shared → union 140. Key 8, column 8:
  // apart 100·16 + 100·16 = 3200 against 140·24 = 3360 — cheaper, but by under a quarter.
  ColumnCounts counts(2);
  for (int i = 0; i < 60; ++i) counts.add(0b11);
  for (int i = 0; i < 40; ++i) counts.add(0b01);
  for (int i = 0; i < 40; ++i) counts.add(0b10);
  const ColumnPartition p = choose_column_groups(counts, 8.0, 8.0);
  EXPECT_EQ(p.starts, (std::vector<std::size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(p.cost, 3200.0);
  EXPECT_DOUBLE_EQ(p.whole_cost, 3360.0);
  EXPECT_FALSE(p.split);
}

TEST(ChooseColumnGroups, SixtyFourColumnsOfDisjointTermsSplitIntoEveryColumn) {
  ColumnCounts counts(64);
  for (int k = 0; k < 64; ++k) {
    for (int i = 0; i < 10; ++i) counts.add(std::uint64_t{1} << k);
  }
  const ColumnPartition p = choose_column_groups(counts, 16.0, 8.0);
  ASSERT_EQ(p.starts.size(), 64u);
  for (std::size_t k = 0; k < 64; ++k) EXPECT_EQ(p.starts[k], k);
  EXPECT_DOUBLE_EQ(p.cost, 640 * 24.0);
  EXPECT_TRUE(p.split);
}

}  // namespace
}  // namespace paulistrings
