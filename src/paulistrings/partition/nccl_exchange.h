#pragma once
// NcclExchange: GPU partitions in different processes (one CUDA device per MPI rank) swapping rows with
// NCCL send/recv on the devices' streams, instead of through host memory (download, MPI_Sendrecv,
// upload). The communicator is built over the run's Transport: rank 0's NCCL id reaches every rank by
// one max-reduction (the other ranks contribute zeros), so no MPI call is made here. Opt-in
// (PartitionOptions::use_nccl); without NCCL in the build, nccl_available() is false and the constructor
// throws.

#include <cstddef>
#include <memory>

namespace paulistrings {

class Transport;

/// True when the library was built with NCCL (found beside the CUDA toolkit).
bool nccl_available();

class NcclExchange {
 public:
  /// Collective over `transport` (every rank at the same point): one NCCL communicator of
  /// transport.size() ranks on CUDA device `device`. Throws std::runtime_error with NCCL's reason.
  NcclExchange(Transport& transport, int device);
  ~NcclExchange();
  NcclExchange(const NcclExchange&) = delete;
  NcclExchange& operator=(const NcclExchange&) = delete;

  /// One NCCL group enqueued on `stream` (a cudaStream_t): sends count_out rows (key_bytes and
  /// coef_bytes a row, from two device buffers) to `partner` and receives count_in rows from it into
  /// keys_in / coef_in. The partner makes the matching call.
  void swap(int partner, const void* keys_out, const void* coef_out, std::size_t count_out, void* keys_in,
            void* coef_in, std::size_t count_in, std::size_t key_bytes, std::size_t coef_bytes, void* stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace paulistrings
