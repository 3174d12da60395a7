#pragma once
// Transport: how the partitions of a distributed propagation talk (docs/design.md §7.4). The partitioned driver
// only ever needs
//  - exchange(partner, bytes): a pairwise, symmetric swap of one byte buffer with one partner (the
//    partner calls exchange with this rank at the same point of the run);
//  - small all-reductions (sum / max of u64 or double arrays), used for sizes, histograms, the
//    k-th selection of topn, statistics and error agreement.
// Every call is collective over the ranks involved and must be made in the same order on each of them.
// Implementations: InProcessGroup (P partitions as threads of one process, below) and MpiTransport
// (partition/mpi_transport.h, MPI builds only). The driver cannot tell them apart.
//
// Error agreement (agree_on_error) is one max-reduction, not a barrier protocol: every rank reports
// whether it failed, and all learn the lowest failing rank and its message, so a rank that throws makes
// the others stop with a message naming it instead of leaving them waiting in the next exchange.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace paulistrings {

/// A byte buffer that keeps its capacity from use to use and is not zero-filled when it grows (its
/// contents are not kept then): the partitions' export and receive buffers. A fresh std::vector per
/// exchange would cost a memset of every byte and, above malloc's mmap threshold, a page fault per 4 KiB.
class ByteBuffer {
 public:
  std::byte* resize(std::size_t bytes) {
    if (bytes > capacity_) {
      capacity_ = std::max(bytes, capacity_ + capacity_ / 4);
      data_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
    }
    size_ = bytes;
    return data_.get();
  }
  std::span<const std::byte> bytes() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "in-process" or "mpi".
  virtual std::string kind() const = 0;
  /// True when every rank lives in this process (addresses, device pointers included, mean the same
  /// thing to all ranks): GPU partitions then exchange rows device to device.
  virtual bool shares_address_space() const { return false; }

  /// Sends `send` to `partner` and returns what `partner` sent to this rank (partner ≠ rank()).
  virtual std::vector<std::byte> exchange(int partner, std::span<const std::byte> send) = 0;
  /// exchange() into `receive`, whose capacity is kept from call to call; returns receive.bytes(). The
  /// default calls exchange() and copies; MpiTransport receives in place.
  virtual std::span<const std::byte> exchange_into(int partner, std::span<const std::byte> send, ByteBuffer& receive);
  /// Element-wise reductions in place. Sums of doubles add the ranks' values in rank order, so their
  /// bits do not depend on timing.
  virtual void all_reduce_sum(std::span<std::uint64_t> values) = 0;
  virtual void all_reduce_max(std::span<std::uint64_t> values) = 0;
  virtual void all_reduce_sum(std::span<double> values) = 0;
};

/// Thrown on the ranks that did not fail themselves when another rank reported an error.
class PartitionPeerFailure : public std::runtime_error {
 public:
  PartitionPeerFailure(int failed_rank, const std::string& message)
      : std::runtime_error(message), failed_rank_(failed_rank) {}
  int failed_rank() const { return failed_rank_; }

 private:
  int failed_rank_;
};

struct AgreedError {
  int rank = -1;        ///< the lowest failing rank
  std::string message;  ///< its message (at most kAgreedMessageBytes bytes)
};
inline constexpr std::size_t kAgreedMessageBytes = 480;

/// Collective. `local_error` empty = this rank is fine. Returns the lowest failing rank and its message,
/// or nullopt when no rank failed (one max-reduction of one word; a second of 60 words on failure).
/// `maxima`, when given, is max-reduced in the same first reduction (a value agreed at no extra call).
std::optional<AgreedError> agree_on_error(Transport& transport, const std::string& local_error,
                                          std::span<std::uint64_t> maxima = {});

/// P partitions in one process, each driven by its own thread (which runs its own OpenMP team). The
/// group is shared by those threads; transport(r) is partition r's view. When a partition's thread
/// ends with an exception outside the agreed protocol (abort(r, what)), every rank blocked in or later
/// entering a call gets a PartitionPeerFailure naming it instead of waiting forever.
class InProcessGroup {
 public:
  /// size ≥ 1.
  explicit InProcessGroup(int size);
  ~InProcessGroup();
  InProcessGroup(const InProcessGroup&) = delete;
  InProcessGroup& operator=(const InProcessGroup&) = delete;

  int size() const;
  Transport& transport(int rank);
  /// Marks rank `rank` failed with `what`: wakes every waiting rank with a PartitionPeerFailure.
  void abort(int rank, const std::string& what);

 private:
  struct Shared;
  class Member;
  std::unique_ptr<Shared> shared_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace paulistrings
