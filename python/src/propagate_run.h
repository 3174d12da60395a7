#pragma once
// The Python side of a propagation call, shared by the host sum (bind_propagate.cc: the library's run
// orchestration) and the resident GPU sum (bind_gpu.cc): the per-layer callback and Ctrl-C polling as the
// library's callbacks, and the statistics handed back as a dict.
//
// The GIL is released for the whole run. Python is re-entered from the driver thread only
//  - per layer, when the caller passes a layer callback (DEBUG logging of `paulistrings.propagate`
//    is on: the Python side checks the level once per call, so logging off costs nothing), and
//  - between layers, at most every 20 ms, to run PyErr_CheckSignals when the call came from the main
//    thread (Ctrl-C). A pending KeyboardInterrupt (or an exception raised by the callback) stops the run
//    after the current layer; it is handed back to Python (pending(), the key "exception" of the dict)
//    so that the caller raises it once the run has written its checkpoint.

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::python {

/// The Python callbacks of one run; the functions it hands out take the GIL themselves (call them with
/// it released) and live as long as this object.
class PythonHooks {
 public:
  PythonHooks(const Circuit& circuit, pybind11::object layer_callback, bool poll_signals);
  PythonHooks(const PythonHooks&) = delete;
  PythonHooks& operator=(const PythonHooks&) = delete;

  /// PropagateOptions::on_layer: the layer callback with (layer, layers, type name, terms in, terms out,
  /// nanoseconds, discarded weight); empty when there is no callback.
  std::function<void(const LayerRecord&)> on_layer();
  /// RunOptions::interrupted: true once the callback raised or a signal handler raised (Ctrl-C).
  std::function<bool()> interrupted();
  /// The exception that stopped the run, or None. With the GIL.
  pybind11::object pending() const { return pending_; }

 private:
  const Circuit& circuit_;
  pybind11::object callback_;
  bool poll_signals_;
  pybind11::object pending_ = pybind11::none();  ///< set and read only with the GIL
  bool failed_ = false;
  std::chrono::steady_clock::time_point last_poll_;
};

/// One field of every record, as a list for Python (the per-layer columns of the stats dicts).
template <class Record, class Field>
auto column(const std::vector<Record>& records, Field field) {
  std::vector<std::decay_t<decltype(field(records.front()))>> out;
  out.reserve(records.size());
  for (const Record& r : records) out.push_back(field(r));
  return out;
}

/// A run's statistics as the dict _sum._stats reads: per-layer lists, totals, and "exception" (None).
pybind11::dict stats_dict(const PropagationStats& stats, const Circuit& circuit);

struct RunArguments {
  std::string direction = "forward";
  std::size_t target_bucket_len = 1024;
  std::size_t min_buckets = 128;
  bool keep_records = true;
  pybind11::object layer_callback = pybind11::none();
  bool poll_signals = false;
};

/// Runs `engine(options)` with the GIL released (the resident GPU sum: no checkpoints or partitions) and
/// returns stats_dict with "exception" the one that stopped the run after its current layer, else None.
pybind11::dict run_propagation(const Circuit& circuit, const Truncation& policy, const RunArguments& args,
                               const std::function<PropagationStats(const PropagateOptions&)>& engine);

}  // namespace paulistrings::python
