// NcclExchange with NCCL (see nccl_exchange.h). Compiled only when cmake/Cuda.cmake finds NCCL.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "paulistrings/partition/nccl_exchange.h"
#include "paulistrings/partition/transport.h"

namespace paulistrings {

namespace {

void check(ncclResult_t status, const char* what) {
  if (status == ncclSuccess) return;
  throw std::runtime_error(std::string("NCCL: ").append(what).append(" failed: ").append(ncclGetErrorString(status)));
}

}  // namespace

struct NcclExchange::Impl {
  ncclComm_t comm = nullptr;
  int device = 0;
};

bool nccl_available() { return true; }

NcclExchange::NcclExchange(Transport& transport, int device) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  // Rank 0's id, and whether it got one, to every rank: the others add zeros to a max-reduction.
  constexpr std::size_t kWords = NCCL_UNIQUE_ID_BYTES / sizeof(std::uint64_t);
  std::array<std::uint64_t, kWords + 1> words{};
  std::string failure;
  if (transport.rank() == 0) {
    ncclUniqueId id;
    const ncclResult_t status = ncclGetUniqueId(&id);
    if (status == ncclSuccess) {
      std::memcpy(words.data(), &id, sizeof id);
    } else {
      words[kWords] = 1;
      failure = ncclGetErrorString(status);
    }
  }
  transport.all_reduce_max(std::span<std::uint64_t>(words));
  if (words[kWords] != 0) {
    throw std::runtime_error("NCCL: ncclGetUniqueId failed on rank 0" + (failure.empty() ? "" : ": " + failure));
  }
  ncclUniqueId id;
  std::memcpy(&id, words.data(), sizeof id);
  if (cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("NCCL: cannot select CUDA device " + std::to_string(device));
  }
  check(ncclCommInitRank(&impl_->comm, transport.size(), id, transport.rank()), "ncclCommInitRank");
}

NcclExchange::~NcclExchange() {
  if (impl_ && impl_->comm) ncclCommDestroy(impl_->comm);
}

void NcclExchange::swap(int partner, const void* keys_out, const void* coef_out, std::size_t count_out,
                        void* keys_in, void* coef_in, std::size_t count_in, std::size_t key_bytes,
                        std::size_t coef_bytes, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  check(ncclGroupStart(), "ncclGroupStart");
  if (count_out > 0) {
    check(ncclSend(keys_out, count_out * key_bytes, ncclUint8, partner, impl_->comm, s), "ncclSend (keys)");
    check(ncclSend(coef_out, count_out * coef_bytes, ncclUint8, partner, impl_->comm, s), "ncclSend (coefficients)");
  }
  if (count_in > 0) {
    check(ncclRecv(keys_in, count_in * key_bytes, ncclUint8, partner, impl_->comm, s), "ncclRecv (keys)");
    check(ncclRecv(coef_in, count_in * coef_bytes, ncclUint8, partner, impl_->comm, s), "ncclRecv (coefficients)");
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
}

}  // namespace paulistrings
