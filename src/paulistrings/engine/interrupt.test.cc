// PropagateOptions::interrupt: the CPU engine polls it between the cosets of a layer; when it says stop,
// propagate() throws LayerInterrupted and the caller's sum is left as it was (the engine works on a copy);
// when it never says stop, the run is the same as without it.

#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/engine_cases.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

TEST(Interrupt, AStopInsideALayerThrowsAndLeavesTheSumAsItWas) {
  std::mt19937_64 rng(4);
  const Circuit circuit = testing::random_circuit(rng, 6, 24);
  const PauliSum<1, Complex> start = testing::random_window_sum<1, Complex>(rng, 200, 6, 0, 6);
  for (const int threads : {1, 2}) {  // one thread, and a team polling from both
    PropagateOptions options;
    options.threads = threads;
    options.parallel_threshold = 0;
    std::atomic<int> polls{0};
    options.interrupt = [&] { return polls.fetch_add(1) >= 20; };
    PauliSum<1, Complex> sum = start;
    EXPECT_THROW(propagate(sum, circuit, options), LayerInterrupted);
    EXPECT_GT(polls.load(), 20);
    ASSERT_EQ(sum.size(), start.size());
    for (std::size_t i = 0; i < sum.size(); ++i) {
      EXPECT_EQ(sum.keys()[i], start.keys()[i]);
      EXPECT_EQ(sum.coefficients()[i], start.coefficients()[i]);
    }
    // Never stopping: the same result as a run without the hook.
    PauliSum<1, Complex> hooked = start, plain = start;
    options.interrupt = [] { return false; };
    propagate(hooked, circuit, options);
    options.interrupt = nullptr;
    propagate(plain, circuit, options);
    ASSERT_EQ(hooked.size(), plain.size());
    for (std::size_t i = 0; i < plain.size(); ++i)
      EXPECT_EQ(hooked.coefficients()[i], plain.coefficients()[i]);
  }
}

}  // namespace
}  // namespace paulistrings
