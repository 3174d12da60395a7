#pragma once
// Fault injection for the GPU engine's memory allocations, for tests only: a test arms a countdown and
// the k-th device (or pinned host) allocation of the GPU engine from then on fails as if the device had
// no memory left — that one only (fail_only: the paths that retry or do without), or it and every later
// one until the test disarms it (fail_from: the paths that give up). The engine's allocator asks next()
// before each allocation; unarmed, that is one relaxed atomic load. Header-only and free of CUDA, so
// that its bookkeeping is tested on machines without a GPU (allocation_faults.test.cc); the tests that
// inject the faults into real runs are gpu/out_of_memory.test.cc.

#include <atomic>
#include <cstdint>

namespace paulistrings::gpu {

class AllocationFaults {
 public:
  /// From the k-th allocation after this call on (k ≥ 1; k = 0 disarms), every allocation fails.
  static void fail_from(std::uint64_t k) { arm(k, true); }
  /// The k-th allocation after this call fails (k ≥ 1; k = 0 disarms), the others succeed.
  static void fail_only(std::uint64_t k) { arm(k, false); }
  static void disarm() { armed_.store(false, std::memory_order_release); }
  static bool armed() { return armed_.load(std::memory_order_acquire); }
  /// Allocations asked for since fail_from (counted only while armed).
  static std::uint64_t seen() { return seen_.load(std::memory_order_relaxed); }
  /// Whether an allocation has been failed since fail_from.
  static bool fired() { return fired_.load(std::memory_order_relaxed); }

  /// The allocator's question before each allocation: true when this one must fail. Thread-safe (the
  /// partitions of a run allocate from several threads; each allocation gets its own number).
  static bool next() {
    if (!armed_.load(std::memory_order_acquire)) return false;
    const std::uint64_t n = seen_.fetch_add(1, std::memory_order_relaxed) + 1;
    const std::uint64_t first = first_.load(std::memory_order_relaxed);
    if (n < first || (n > first && !sticky_.load(std::memory_order_relaxed))) return false;
    fired_.store(true, std::memory_order_relaxed);
    return true;
  }

 private:
  static void arm(std::uint64_t k, bool sticky) {
    armed_.store(false, std::memory_order_release);
    seen_.store(0, std::memory_order_relaxed);
    fired_.store(false, std::memory_order_relaxed);
    first_.store(k, std::memory_order_relaxed);
    sticky_.store(sticky, std::memory_order_relaxed);
    armed_.store(k != 0, std::memory_order_release);
  }

  static inline std::atomic<bool> armed_{false};
  static inline std::atomic<bool> fired_{false};
  static inline std::atomic<bool> sticky_{true};
  static inline std::atomic<std::uint64_t> seen_{0};
  static inline std::atomic<std::uint64_t> first_{0};
};

/// Arms AllocationFaults::fail_from(k) (or fail_only(k) when not `sticky`) for a scope; disarms when it
/// ends (also when a test fails).
class ScopedAllocationFault {
 public:
  explicit ScopedAllocationFault(std::uint64_t k, bool sticky = true) {
    if (sticky) {
      AllocationFaults::fail_from(k);
    } else {
      AllocationFaults::fail_only(k);
    }
  }
  ~ScopedAllocationFault() { AllocationFaults::disarm(); }
  ScopedAllocationFault(const ScopedAllocationFault&) = delete;
  ScopedAllocationFault& operator=(const ScopedAllocationFault&) = delete;
};

}  // namespace paulistrings::gpu
