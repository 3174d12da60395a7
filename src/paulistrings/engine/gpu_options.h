#pragma once
// GpuEngineOptions: the switches of the GPU engine (gpu/), held by PropagateOptions::gpu and passed to
// every gpu::DeviceSum a run creates (one, or one per partition). No includes, so engine/options.h
// can hold it without knowing the engine.

namespace paulistrings {

struct GpuEngineOptions {
  /// Each device sum prints to stderr, when destroyed, where its layers' time went: insert, room,
  /// write, settle, compact, between layers, and a partitioned run's export, exchange, merge and
  /// term-test phases. The stream is synchronized after each phase, which costs time of its own: compare
  /// phases with each other, not the total with an unprofiled run.
  bool profile = false;
  /// Host threads for what a device sum does on the host inside a run — collapse_sample's pass, with
  /// its download and upload (0: OpenMP's default). propagate_on_device passes the run's
  /// PropagateOptions::threads.
  int host_threads = 0;
  /// Blocks of rotations: 2 to 4 consecutive rotations with independent generators as one join
  /// (docs/gpu-engine.md, "Blocks of rotations"). propagate_on_device turns it off with
  /// PropagateOptions::gate_blocks.
  bool blocks = true;
};

}  // namespace paulistrings
