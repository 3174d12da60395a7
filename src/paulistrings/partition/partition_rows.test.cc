// PartitionRows: linearity of part(), determinism and independence of seeded rows, excluded qubits,
// spatial cuts, and clear errors for bad counts, blocks and qubits.

#include "paulistrings/partition/partition_rows.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "paulistrings/testing/assertions.h"

namespace paulistrings {
namespace {

PauliString<2> random_key(std::mt19937_64& rng, std::size_t num_qubits) {
  PauliString<2> key;
  std::uniform_int_distribution<int> letter(0, 3);
  for (std::size_t q = 0; q < num_qubits; ++q) key.set_code(q, letter(rng));
  return key;
}

TEST(PartitionRows, PartIsLinearAndReachesEveryPartition) {
  std::mt19937_64 rng(1);
  const PartitionRows rows = PartitionRows::seeded(3, 100, 42);
  EXPECT_EQ(rows.count(), 8u);
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 200; ++i) {
    const PauliString<2> a = random_key(rng, 100), b = random_key(rng, 100);
    EXPECT_EQ(rows.part(a ^ b), rows.part(a) ^ rows.part(b));
    EXPECT_LT(rows.part(a), 8u);
    seen.insert(rows.part(a));
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(rows.part(PauliString<2>{}), 0u);
}

TEST(PartitionRows, SeededRowsAreAFunctionOfTheSeed) {
  EXPECT_EQ(PartitionRows::seeded(2, 50, 7).fingerprint(), PartitionRows::seeded(2, 50, 7).fingerprint());
  EXPECT_NE(PartitionRows::seeded(2, 50, 7).fingerprint(), PartitionRows::seeded(2, 50, 8).fingerprint());
  EXPECT_NE(PartitionRows::seeded(1, 50, 7).fingerprint(), PartitionRows::seeded(2, 50, 7).fingerprint());
  // One qubit has only two bits: two rows must still come out independent.
  const PartitionRows tiny = PartitionRows::seeded(2, 1, 3);
  std::set<std::uint32_t> parts;
  for (int code = 0; code < 4; ++code) {
    PauliString<1> key;
    key.set_code(0, code);
    parts.insert(tiny.part(key));
  }
  EXPECT_EQ(parts.size(), 4u);
  EXPECT_EQ(PartitionRows(10).count(), 1u);
}

TEST(PartitionRows, ExcludedQubitsAreReadByNoRow) {
  const PartitionRows rows = PartitionRows::seeded_excluding(2, 20, 5, {3, 17});
  for (char p : {'X', 'Y', 'Z'}) {
    EXPECT_EQ(rows.part(PauliString<1>::single(p, 3)), 0u);
    EXPECT_EQ(rows.part(PauliString<1>::single(p, 17)), 0u);
  }
  std::uint32_t any = 0;
  for (std::size_t q = 0; q < 20; ++q) any |= rows.part(PauliString<1>::single('Y', q));
  EXPECT_NE(any, 0u);
}

TEST(PartitionRows, CutRowsFollowTheBlocks) {
  // Four blocks of a 12-qubit chain; basis z: X factors never matter, Z on a qubit of block b gives b.
  const PartitionRows rows = PartitionRows::cut(12, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}});
  EXPECT_EQ(rows.count(), 4u);
  for (std::size_t q = 0; q < 12; ++q) {
    EXPECT_EQ(rows.part(PauliString<1>::single('X', q)), 0u);
    EXPECT_EQ(rows.part(PauliString<1>::single('Z', q)), q / 3);
    EXPECT_EQ(rows.part(PauliString<1>::single('Y', q)), q / 3);
  }
  // A ZZ delta inside a block is local; across a boundary it is remote.
  EXPECT_EQ(rows.part(PauliString<1>::from_label("Z0 Z2", 12)), 0u);
  EXPECT_NE(rows.part(PauliString<1>::from_label("Z2 Z3", 12)), 0u);
  const PartitionRows x_rows = PartitionRows::cut(4, {{0, 1}, {2, 3}}, 'x');
  EXPECT_EQ(x_rows.part(PauliString<1>::single('Z', 3)), 0u);
  EXPECT_EQ(x_rows.part(PauliString<1>::single('X', 3)), 1u);
}

TEST(PartitionRows, BadInputsGiveClearErrors) {
  using testing::ThrowsInvalidArgumentMentioning;
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { PartitionRows::bits_for_count(6); }, {"power of two", "6"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::bits_for_count(0); }, {"got 0"}));
  EXPECT_EQ(PartitionRows::bits_for_count(8), 3);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::cut(4, {{0}, {1}, {2}}); }, {"got 3"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        PartitionRows::cut(4, {{0, 1}, {4}});
      },
      {"block 1", "qubit 4", "out of range"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        PartitionRows::cut(4, {{0, 1}, {1, 2}});
      },
      {"qubit 1", "blocks 0 and 1"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        PartitionRows::cut(4, {{0, 1}, {}});
      },
      {"block 1 is empty"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::cut(4, {{0}, {1}}, 'y'); }, {"'y'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::seeded(17, 100, 1); }, {"17"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::seeded(3, 1, 1); }, {"independent rows"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::seeded_excluding(1, 5, 1, {5}); },
                                              {"excluded qubit 5"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PartitionRows::seeded(1, 1025, 1); }, {"1025"}));
}

}  // namespace
}  // namespace paulistrings
