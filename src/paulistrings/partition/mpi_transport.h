#pragma once
// MpiTransport: the Transport of a distributed propagation over MPI (OpenMPI). Include this header only
// from code built with MPI (PAULISTRINGS_HAS_MPI): it includes <mpi.h>. The library never calls
// MPI_Init or MPI_Finalize: the application initializes MPI with MPI_Init_thread at
// MPI_THREAD_SERIALIZED or better (the driver calls MPI from one thread at a time, which need not be
// the main thread, e.g. under Python), and passes a communicator; the transport duplicates it
// (MPI_Comm_dup, collective) so its messages never mix with the application's.
//
//   MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
//   {
//     paulistrings::MpiTransport transport(MPI_COMM_WORLD);
//     paulistrings::PartitionOptions partition;
//     partition.transport = &transport;  // partitions = ranks (a power of two)
//     paulistrings::propagate_partitioned(sum, circuit, options, partition);
//   }  // destroy the transport before MPI_Finalize
//   MPI_Finalize();
//
// Errors of MPI itself keep the communicator's default handler (MPI_ERRORS_ARE_FATAL): a dead rank or a
// broken link ends the whole job through mpirun, which names the rank, rather than leaving a rank
// waiting. Errors raised by the library on one rank reach the others through error agreement.

#include <mpi.h>

#include "paulistrings/partition/transport.h"

namespace paulistrings {

class MpiTransport : public Transport {
 public:
  /// Collective over `comm`. Throws std::runtime_error when MPI is not initialized (or already
  /// finalized) or was initialized below MPI_THREAD_SERIALIZED.
  explicit MpiTransport(MPI_Comm comm);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }
  /// The duplicated communicator.
  MPI_Comm communicator() const { return comm_; }

  std::vector<std::byte> exchange(int partner, std::span<const std::byte> send) override;
  /// Receives straight into `receive` (no zero fill, capacity kept across calls).
  std::span<const std::byte> exchange_into(int partner, std::span<const std::byte> send, ByteBuffer& receive) override;
  void all_reduce_sum(std::span<std::uint64_t> values) override;
  void all_reduce_max(std::span<std::uint64_t> values) override;
  /// Gathers every rank's values and adds them in rank order (MPI_Allreduce does not fix the order).
  void all_reduce_sum(std::span<double> values) override;

 private:
  /// The sizes, then the bytes (chunked below 2^31) into room(received size).
  template <class Room>
  void swap_bytes(int partner, std::span<const std::byte> send, Room&& room);
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace paulistrings
