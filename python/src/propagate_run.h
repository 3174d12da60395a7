#pragma once
// The propagation call shared by the host sum (bind_propagate.cc) and the resident GPU sum
// (bind_gpu.cc): options from the Python arguments, the GIL released for the run, the per-layer
// callback and Ctrl-C polling, and the trace handed back as a dict.

#include <pybind11/pybind11.h>

#include <cstddef>
#include <functional>
#include <string>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::python {

struct RunArguments {
  std::string direction = "forward";
  std::size_t target_bucket_len = 1024;
  std::size_t min_buckets = 128;
  int threads = 0;
  int device = -1;  ///< PropagateOptions::device: −1 = CPU, ≥ 0 = CUDA ordinal
  bool keep_records = true;
  pybind11::object layer_callback = pybind11::none();
  bool poll_signals = false;
  std::size_t start_layer = 0;
  std::size_t stop_every = 0;
  std::size_t max_terms = 0;
  bool auto_truncate = true;
};

/// Runs `engine(options)` with the GIL released (the engine owns the sum it propagates) and returns
/// the trace: per-layer lists, totals, and "exception" (a KeyboardInterrupt or a callback's exception
/// that stopped the run after the current layer, else None).
pybind11::dict run_propagation(const Circuit& circuit, const Truncation& policy, const RunArguments& args,
                               const std::function<PropagationStats(const PropagateOptions&)>& engine);

}  // namespace paulistrings::python
