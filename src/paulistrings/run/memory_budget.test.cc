// The memory budget's arithmetic: bytes a term costs by width and coefficient type, the room check and
// its message, at least one term.

#include "paulistrings/run/memory_budget.h"

#include <gtest/gtest.h>

#include "paulistrings/testing/assertions.h"

namespace paulistrings {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(MemoryBudget, TermsAreTheRoomOverFourTimesKeyAndCoefficient) {
  const std::size_t baseline = 100 * kMiB;
  // One word (16 bytes of key) and a real coefficient: 4 × 24 = 96 bytes a term.
  EXPECT_EQ(budget_terms(baseline + 96 * 100000, baseline, 1, false, "limit"), 100000u);
  EXPECT_EQ(budget_terms(baseline + 96 * 100000 + 95, baseline, 1, false, "limit"), 100000u);  // rounded down
  // Complex coefficients: 4 × 32 = 128; two words: 4 × 40 = 160; sixteen words, complex: 4 × 272.
  EXPECT_EQ(budget_terms(baseline + 128 * 50000, baseline, 1, true, "limit"), 50000u);
  EXPECT_EQ(budget_terms(baseline + 160 * 50000, baseline, 2, false, "limit"), 50000u);
  EXPECT_EQ(budget_terms(baseline + 1088 * 10000, baseline, 16, true, "limit"), 10000u);
}

TEST(MemoryBudget, ALimitWithoutAMebibyteOfRoomIsRefusedNamingTheOption) {
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [] { check_budget_room(5 * kMiB, 4 * kMiB, "--memory-limit"); },
      {"--memory-limit 5242880 bytes is below what the process already uses (4194304 bytes)"}));
  EXPECT_THROW(budget_terms(kMiB, 2 * kMiB, 1, false, "memory_limit"), std::invalid_argument);
  EXPECT_NO_THROW(check_budget_room(5 * kMiB + 1, 4 * kMiB, "memory_limit"));
  // Just above the check: the budget is still at least one term... of the mebibyte's worth.
  EXPECT_EQ(budget_terms(5 * kMiB + 1, 4 * kMiB, 1, false, "memory_limit"), (kMiB + 1) / 96);
  EXPECT_EQ(budget_terms(5 * kMiB + 1, 4 * kMiB, 1 << 20, true, "memory_limit"), 1u);
}

TEST(MemoryBudget, ResidentBytesAreMeasured) {
  EXPECT_GT(resident_bytes(), 0u);
  EXPECT_GE(peak_resident_bytes(), resident_bytes() / 2);
}

}  // namespace
}  // namespace paulistrings
