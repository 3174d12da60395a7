#pragma once
// GPU tests skip, with the reason, on a machine or build without a usable CUDA device (CI has none).

#include <gtest/gtest.h>

#include "paulistrings/gpu/device_sum.h"

#define SKIP_WITHOUT_GPU()                                                                          \
  do {                                                                                              \
    if (::paulistrings::gpu::device_count() == 0)                                                   \
      GTEST_SKIP() << "no GPU: " << ::paulistrings::gpu::unavailable_reason();                      \
  } while (false)
