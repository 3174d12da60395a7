// PhaseProfile's work when it is on (phase_profile.h): a stream synchronization and a clock reading
// per phase, and the report.

#include "paulistrings/gpu/phase_profile.h"

#include <cstdio>

#include "paulistrings/gpu/cuda_check.h"

namespace paulistrings::gpu {

void PhaseProfile::begin_on() {
  last_ = Clock::now();
  started_ = true;
}

void PhaseProfile::start_on(cudaStream_t stream) {
  const bool first = !layers_started_;
  layers_started_ = true;
  if (started_) {
    mark_on(stream, first ? "before 1st layer" : "between layers");
  } else {
    check(cudaStreamSynchronize(stream), "profile synchronization");
    last_ = Clock::now();
    started_ = true;
  }
}

void PhaseProfile::mark_on(cudaStream_t stream, const char* phase) {
  check(cudaStreamSynchronize(stream), "profile synchronization");
  const auto now = Clock::now();
  auto& entry = totals_[phase];
  entry.first += std::chrono::duration<double>(now - last_).count();
  entry.second += 1;
  last_ = now;
}

void PhaseProfile::report(int device) const {
  if (!on_ || totals_.empty()) return;
  double all = 0.0;
  for (const auto& [phase, entry] : totals_) all += entry.first;
  std::fprintf(stderr, "paulistrings GPU %d phases (s, calls, share):\n", device);
  for (const auto& [phase, entry] : totals_) {
    std::fprintf(stderr, "  %-16s %10.4f %9zu %6.1f%%\n", phase.c_str(), entry.first, entry.second,
                 all > 0.0 ? 100.0 * entry.first / all : 0.0);
  }
}

}  // namespace paulistrings::gpu
