#pragma once
// ParallelErrors: how an exception leaves an OpenMP parallel region. It must not propagate out of the
// region — the runtime would call std::terminate, and a run that ran out of memory (std::bad_alloc)
// would end with a signal instead of an error. Each iteration's body runs in a try block whose handler
// calls capture(): the first exception is kept and the remaining iterations skip their work (they test
// failed(), one relaxed load); after the region, rethrow() throws it on the calling thread:
//
//   ParallelErrors errors;
//   #pragma omp parallel for
//   for (std::size_t i = 0; i < n; ++i) {
//     if (errors.failed()) continue;
//     try { work(i); } catch (...) { errors.capture(); }
//   }
//   errors.rethrow();

#include <atomic>
#include <exception>
#include <mutex>
#include <utility>

namespace paulistrings {

class ParallelErrors {
 public:
  /// In a catch handler: keeps the exception being handled if it is the first.
  void capture() noexcept { keep(std::current_exception()); }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  /// Throws the first exception a body threw, if any (call after the region, on one thread).
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void keep(std::exception_ptr error) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::move(error);
    failed_.store(true, std::memory_order_relaxed);
  }

  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace paulistrings
