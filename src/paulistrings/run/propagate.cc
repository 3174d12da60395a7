// choose_engine() and propagate() of an AnyPauliSum: see propagate.h. The typed propagate() is in
// propagate.inl, compiled one width a unit (propagate_w*.cc).

#include "paulistrings/run/propagate.h"

namespace paulistrings {

const char* engine_kind_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::reference:
      return "reference";
    case EngineKind::cpu:
      return "cpu";
    case EngineKind::gpu:
      return "gpu";
    case EngineKind::partitioned:
      return "partitioned";
    case EngineKind::distributed:
      return "distributed";
    case EngineKind::column:
      return "column";
  }
  return "unknown";
}

EngineKind choose_engine(const PropagateOptions& options, const PartitionOptions& partition) {
  if (partition.transport != nullptr) return EngineKind::distributed;
  if (partition.partitions > 1 || !partition.devices.empty() || !partition.cpu_lists.empty()) {
    return EngineKind::partitioned;
  }
  if (options.device >= 0) return EngineKind::gpu;
  switch (options.engine) {
    case Engine::reference:
      return EngineKind::reference;
    case Engine::column:
      return EngineKind::column;
    case Engine::cpu:
      break;
  }
  return EngineKind::cpu;
}

namespace {

/// A real sum meeting a channel with complex amplitudes is switched to complex storage first.
void make_complex_if_needed(AnyPauliSum& sum, const Circuit& circuit) {
  for (const Channel& channel : circuit) {
    if (channel.has_complex_transfer()) {
      sum.make_complex();
      return;
    }
  }
}

}  // namespace

PropagationStats propagate(AnyPauliSum& sum, const Circuit& circuit, const PropagateOptions& options) {
  make_complex_if_needed(sum, circuit);
  return sum.visit([&](auto& typed) { return propagate(typed, circuit, options); });
}

Propagation propagate(AnyPauliSum& sum, const Circuit& circuit, const PropagateOptions& options,
                      const PartitionOptions& partition) {
  make_complex_if_needed(sum, circuit);
  return sum.visit([&](auto& typed) { return propagate(typed, circuit, options, partition); });
}

}  // namespace paulistrings
