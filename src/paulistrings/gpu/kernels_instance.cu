// One explicit instantiation of the GPU engine's launchers, Launch<PAULISTRINGS_KERNELS_WIDTH,
// PAULISTRINGS_KERNELS_COMPLEX>: cmake/Cuda.cmake compiles this file once per width (1, 2, 4, 8, 16) and
// coefficient type (real, complex), each an object library of its own, so nvcc's ten compilations run
// in parallel.

#include "paulistrings/gpu/kernels.cuh"

#if !defined(PAULISTRINGS_KERNELS_WIDTH) || !defined(PAULISTRINGS_KERNELS_COMPLEX)
#error "kernels_instance.cu needs PAULISTRINGS_KERNELS_WIDTH and PAULISTRINGS_KERNELS_COMPLEX (see cmake/Cuda.cmake)"
#endif

namespace paulistrings::gpu::kernels {
template struct Launch<PAULISTRINGS_KERNELS_WIDTH, PAULISTRINGS_KERNELS_COMPLEX>;
}  // namespace paulistrings::gpu::kernels
