// The GPU allocation fault injector's bookkeeping (no GPU needed): which allocation fails, counting
// only while armed, disarming, and one number per allocation when several threads allocate at once.

#include "paulistrings/gpu/allocation_faults.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace paulistrings::gpu {
namespace {

TEST(AllocationFaults, UnarmedNothingFailsAndNothingIsCounted) {
  AllocationFaults::disarm();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(AllocationFaults::next());
  AllocationFaults::fail_from(2);
  EXPECT_EQ(AllocationFaults::seen(), 0u);
  AllocationFaults::disarm();
}

TEST(AllocationFaults, FromTheKthAllocationOnEveryOneFails) {
  ScopedAllocationFault fault(3);
  EXPECT_TRUE(AllocationFaults::armed());
  EXPECT_FALSE(AllocationFaults::next());
  EXPECT_FALSE(AllocationFaults::next());
  EXPECT_FALSE(AllocationFaults::fired());
  EXPECT_TRUE(AllocationFaults::next());
  EXPECT_TRUE(AllocationFaults::fired());
  EXPECT_TRUE(AllocationFaults::next());
  EXPECT_EQ(AllocationFaults::seen(), 4u);
}

TEST(AllocationFaults, FailOnlyFailsTheKthAlone) {
  ScopedAllocationFault fault(2, false);
  EXPECT_FALSE(AllocationFaults::next());
  EXPECT_TRUE(AllocationFaults::next());
  EXPECT_TRUE(AllocationFaults::fired());
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(AllocationFaults::next());
  EXPECT_TRUE(AllocationFaults::fired());
  AllocationFaults::fail_from(1);  // switching modes rearms
  EXPECT_TRUE(AllocationFaults::next());
  EXPECT_TRUE(AllocationFaults::next());
}

TEST(AllocationFaults, RearmingStartsTheCountAgainAndTheScopeDisarms) {
  {
    ScopedAllocationFault fault(1);
    EXPECT_TRUE(AllocationFaults::next());
    AllocationFaults::fail_from(2);
    EXPECT_FALSE(AllocationFaults::fired());
    EXPECT_EQ(AllocationFaults::seen(), 0u);
    EXPECT_FALSE(AllocationFaults::next());
    EXPECT_TRUE(AllocationFaults::next());
  }
  EXPECT_FALSE(AllocationFaults::armed());
  EXPECT_FALSE(AllocationFaults::next());
  AllocationFaults::fail_from(0);  // k = 0 disarms too
  EXPECT_FALSE(AllocationFaults::armed());
}

TEST(AllocationFaults, ThreadsAllocatingAtOnceGetOneNumberEach) {
  constexpr int kThreads = 4, kEach = 1000;
  ScopedAllocationFault fault(kThreads * kEach - 9);  // the last 10 allocations fail, whoever makes them
  std::vector<int> failed(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&failed, t] {
      for (int i = 0; i < kEach; ++i) failed[static_cast<std::size_t>(t)] += AllocationFaults::next() ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  int total = 0;
  for (int f : failed) total += f;
  EXPECT_EQ(total, 10);
  EXPECT_EQ(AllocationFaults::seen(), static_cast<std::uint64_t>(kThreads * kEach));
}

}  // namespace
}  // namespace paulistrings::gpu
