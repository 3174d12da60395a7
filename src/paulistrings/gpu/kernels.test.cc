// The kernels' error path, on a machine without a device: a CUDA call or a kernel launch that fails
// throws gpu::GpuError naming it (cuda_check.h) instead of going on with a sum the kernel never touched.
// With a device the launch would run, so that case skips there; built without CUDA there are no
// kernels, and both skip.

#include <gtest/gtest.h>

#include <string>

#include "paulistrings/gpu/device_sum.h"
#ifdef PAULISTRINGS_HAS_CUDA
#include "paulistrings/gpu/cuda_check.h"
#include "paulistrings/gpu/kernels.h"
#endif

namespace paulistrings {
namespace {

TEST(GpuKernels, AFailedCudaCallThrowsGpuErrorNamingIt) {
#ifndef PAULISTRINGS_HAS_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  gpu::check(cudaSuccess, "nothing");
  try {
    gpu::check(cudaErrorInvalidValue, "the test's call");
    FAIL() << "no GpuError";
  } catch (const gpu::GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("the test's call"), std::string::npos) << e.what();
  }
#endif
}

TEST(GpuKernels, ALaunchWithoutADeviceThrowsGpuError) {
#ifndef PAULISTRINGS_HAS_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  if (gpu::device_count() > 0) GTEST_SKIP() << "a device is present: the launch would run";
  using RealLaunch = gpu::kernels::Launch<1, false>;
  using ComplexLaunch = gpu::kernels::Launch<2, true>;
  gpu::kernels::LayerArgs<1> args;
  args.size = 1;  // one term: an empty sum launches nothing
  gpu::kernels::LocalTable table;
  EXPECT_THROW(RealLaunch::rescale(args, table, nullptr), gpu::GpuError);
  gpu::kernels::LayerArgs<2> wide;
  wide.size = 1;
  EXPECT_THROW(ComplexLaunch::term_test(wide, nullptr), gpu::GpuError);
#endif
}

}  // namespace
}  // namespace paulistrings
