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
  /// When the device sum starts to be built (before its device is made current, which may create the
  /// CUDA context): the marks of its construction and upload then count from here, and the first
  /// layer's start() books the host's time since the upload as "before the first layer".
  void begin() {
    if (on_) begin_on();
  }
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
  void begin_on();
  void start_on(cudaStream_t stream);
  void mark_on(cudaStream_t stream, const char* phase);

  bool on_ = false;
  bool started_ = false;
  bool layers_started_ = false;
  Clock::time_point last_{};
  std::map<std::string, std::pair<double, std::size_t>> totals_;
};

}  // namespace paulistrings::gpu
