// layer_threads: the threads a CPU engine gives a layer (docs/design.md §7.2, "Threads a layer takes").

#include "paulistrings/engine/options.h"

#include <gtest/gtest.h>

namespace paulistrings {
namespace {

TEST(LayerThreads, OneThreadPerGrainOfWeightedTerms) {
  constexpr std::size_t grain = 16384;
  EXPECT_EQ(layer_threads(0, 1, grain, 16), 1);
  EXPECT_EQ(layer_threads(2 * grain - 1, 1, grain, 16), 1);  // below twice the grain: the calling thread
  EXPECT_EQ(layer_threads(2 * grain, 1, grain, 16), 2);
  EXPECT_EQ(layer_threads(5 * grain + 7, 1, grain, 16), 5);
  EXPECT_EQ(layer_threads(std::size_t{1} << 30, 1, grain, 16), 16);  // at most the engine's threads
  // A general table's term weighs four of a rotation's.
  EXPECT_EQ(layer_threads(grain / 2, 4, grain, 16), 2);
  EXPECT_EQ(layer_threads(grain / 2 - 1, 4, grain, 16), 1);
}

TEST(LayerThreads, OneThreadOrGrainZero) {
  EXPECT_EQ(layer_threads(std::size_t{1} << 30, 4, 16384, 1), 1);
  EXPECT_EQ(layer_threads(std::size_t{1} << 30, 4, 16384, 0), 1);
  EXPECT_EQ(layer_threads(0, 1, 0, 8), 8);  // grain 0: every thread on every layer
  EXPECT_EQ(layer_threads(3, 1, 0, 2), 2);
}

TEST(LayerThreads, TheDefaultGrain) {
  EXPECT_EQ(PropagateOptions{}.parallel_threshold, kParallelGrain);
  EXPECT_EQ(kParallelGrain, 4096u);
}

}  // namespace
}  // namespace paulistrings
