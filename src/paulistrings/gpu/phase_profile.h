#pragma once
// PhaseProfile: where a device sum's layer time goes, phase by phase (GpuEngineOptions::profile).
// Private to the GPU engine (a member of DeviceSum<W, C>::Impl, device_sum_impl.h).

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

namespace paulistrings::gpu {

/// On: mark() synchronizes the stream and adds the wall time since the previous mark to a phase, and
/// the totals go to stderr when the sum is destroyed (report). The synchronizations cost time of their
/// own, so compare phases with each other, not the total with an unprofiled run. Off: mark() is one
/// branch.
class PhaseProfile {
 public:
  explicit PhaseProfile(bool on = false) : on_(on) {}
  bool on() const { return on_; }
  /// At the start of a layer: what happened since the previous layer ended (the driver, channel
  /// preparation, layer passes on the host) goes to "between layers".
  void start(cudaStream_t stream) {
    if (on_) start_on(stream);
  }
  void mark(cudaStream_t stream, const char* phase) {
    if (on_) mark_on(stream, phase);
  }
  void report(int device) const;

 private:
  using Clock = std::chrono::steady_clock;
  void start_on(cudaStream_t stream);
  void mark_on(cudaStream_t stream, const char* phase);

  bool on_ = false;
  bool started_ = false;
  Clock::time_point last_{};
  std::map<std::string, std::pair<double, std::size_t>> totals_;
};

}  // namespace paulistrings::gpu
