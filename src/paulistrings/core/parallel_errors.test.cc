// ParallelErrors: an exception thrown inside an OpenMP loop reaches the caller after the region (no
// std::terminate), the first one wins, and a region without an exception rethrows nothing.

#include "paulistrings/core/parallel_errors.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>

namespace paulistrings {
namespace {

TEST(ParallelErrors, AnExceptionInAnIterationReachesTheCallerAfterTheRegion) {
  ParallelErrors errors;
  std::atomic<int> ran{0};
#pragma omp parallel for num_threads(4) schedule(dynamic, 1)
  for (int i = 0; i < 1000; ++i) {
    if (errors.failed()) continue;
    try {
      if (i == 37) throw std::bad_alloc();
      ran.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      errors.capture();
    }
  }
  EXPECT_TRUE(errors.failed());
  EXPECT_THROW(errors.rethrow(), std::bad_alloc);
  EXPECT_LE(ran.load(), 999);
}

TEST(ParallelErrors, TheFirstExceptionIsKept) {
  ParallelErrors errors;
  try {
    throw std::runtime_error("first");
  } catch (...) {
    errors.capture();
  }
  try {
    throw std::bad_alloc();
  } catch (...) {
    errors.capture();
  }
  EXPECT_THROW(errors.rethrow(), std::runtime_error);
}

TEST(ParallelErrors, WithoutAnExceptionNothingIsThrown) {
  ParallelErrors errors;
  int sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
  for (int i = 0; i < 100; ++i) {
    if (errors.failed()) continue;
    try {
      sum += i;
    } catch (...) {
      errors.capture();
    }
  }
  EXPECT_FALSE(errors.failed());
  EXPECT_NO_THROW(errors.rethrow());
  EXPECT_EQ(sum, 4950);
}

}  // namespace
}  // namespace paulistrings
