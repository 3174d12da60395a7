// NcclExchange in a build without NCCL (cmake/Cuda.cmake adds nccl_exchange_nccl.cc instead when the
// toolkit has NCCL).
#include "paulistrings/partition/nccl_exchange.h"

#ifndef PAULISTRINGS_HAS_NCCL

#include <stdexcept>

namespace paulistrings {

struct NcclExchange::Impl {};

bool nccl_available() { return false; }

NcclExchange::NcclExchange(Transport&, int) {
  throw std::runtime_error("this build of paulistrings has no NCCL (it is looked for beside the CUDA toolkit)");
}
NcclExchange::~NcclExchange() = default;
void NcclExchange::swap(int, const void*, const void*, std::size_t, void*, void*, std::size_t, std::size_t, std::size_t,
                        void*) {
  throw std::runtime_error("this build of paulistrings has no NCCL");
}

}  // namespace paulistrings

#endif
