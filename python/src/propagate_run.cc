// The Python side of a propagation call: see propagate_run.h.
#include "propagate_run.h"

#include <pybind11/stl.h>

#include <type_traits>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace paulistrings::python {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(20);

/// The original's names for channel types (PropagationStats.gate_name, DEBUG log lines).
const char* seed_type_name(const Channel& channel) {
  switch (channel.kind()) {
    case ChannelKind::h:
    case ChannelKind::s:
    case ChannelKind::sdg:
    case ChannelKind::x:
    case ChannelKind::y:
    case ChannelKind::z:
    case ChannelKind::sx:
    case ChannelKind::sxdg:
      return "Clifford1Q";
    case ChannelKind::cnot:
    case ChannelKind::cy:
    case ChannelKind::cz:
    case ChannelKind::swap:
    case ChannelKind::iswap:
    case ChannelKind::iswapdg:
    case ChannelKind::ecr:
      return "Clifford2Q";
    case ChannelKind::pauli_rotation:
      return "PauliRotation";
    case ChannelKind::unitary_1q:
      return "GeneralUnitary1Q";
    case ChannelKind::unitary_2q:
      return "GeneralUnitary2Q";
    case ChannelKind::transfer_matrix:
      return "TransferMatrix";
    case ChannelKind::depolarize:
      return "Depolarizing";
    case ChannelKind::dephase:
      return "Dephasing";
    case ChannelKind::pauli_channel:
      return "PauliChannel";
    case ChannelKind::depolarize2:
      return "Depolarizing2Q";
    case ChannelKind::amplitude_damping:
      return "AmplitudeDamping";
    case ChannelKind::measure:
      return "Measurement";
    case ChannelKind::reset:
      return "Reset";
  }
  return "Channel";
}

}  // namespace

PythonHooks::PythonHooks(const Circuit& circuit, py::object layer_callback, bool poll_signals)
    : circuit_(circuit),
      callback_(std::move(layer_callback)),
      poll_signals_(poll_signals),
      last_poll_(Clock::now() - kPollInterval) {}

std::function<void(const LayerRecord&)> PythonHooks::on_layer() {
  if (callback_.is_none()) return {};
  return [this](const LayerRecord& r) {
    if (failed_) return;
    py::gil_scoped_acquire gil;
    try {
      callback_(r.application_index + 1, circuit_.size(), seed_type_name(circuit_[r.circuit_index]),
                r.terms_in, r.terms_out, r.wall_ns, r.discarded_weight);
    } catch (py::error_already_set& e) {
      pending_ = e.value();
      failed_ = true;
    }
  };
}

std::function<bool()> PythonHooks::interrupted() {
  return [this] {
    if (failed_ || !poll_signals_) return failed_;
    const auto now = Clock::now();
    if (now - last_poll_ >= kPollInterval) {
      last_poll_ = now;
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        py::error_already_set e;
        pending_ = e.value();
        failed_ = true;
      }
    }
    return failed_;
  };
}

py::dict stats_dict(const PropagationStats& stats, const Circuit& circuit) {
  py::dict result;
  const std::vector<LayerRecord>& records = stats.layers;
  result["terms_in"] = column(records, [](const LayerRecord& r) { return r.terms_in; });
  result["terms_out"] = column(records, [](const LayerRecord& r) { return r.terms_out; });
  result["circuit_index"] = column(records, [](const LayerRecord& r) { return r.circuit_index; });
  result["application_index"] = column(records, [](const LayerRecord& r) { return r.application_index; });
  result["gate_name"] = column(
      records, [&](const LayerRecord& r) { return std::string(seed_type_name(circuit[r.circuit_index])); });
  result["gate"] = column(records, [](const LayerRecord& r) { return r.gate_name; });
  result["nanos"] = column(records, [](const LayerRecord& r) { return r.wall_ns; });
  result["discarded_weight"] = column(records, [](const LayerRecord& r) { return r.discarded_weight; });
  result["collapsed"] = column(records, [](const LayerRecord& r) { return r.collapsed; });
  result["layers_done"] = stats.layers_done;
  result["stopped"] = stats.stopped;
  result["peak_terms"] = stats.peak_terms;
  result["final_terms"] = stats.final_terms;
  result["total_discarded_weight"] = stats.discarded_weight;
  result["collapses"] = stats.collapses;
  result["column_layers"] = stats.column_layers;
  result["budget_truncations"] = stats.budget_truncations;
  result["budget_discarded_weight"] = stats.budget_discarded_weight;
  result["exception"] = py::none();
  return result;
}

py::dict run_propagation(const Circuit& circuit, const Truncation& policy, const RunArguments& args,
                         const std::function<PropagationStats(const PropagateOptions&)>& engine) {
  PropagateOptions options;
  options.direction = parse_direction(args.direction);
  options.truncation = policy;
  options.target_bucket_len = args.target_bucket_len;
  options.min_buckets = args.min_buckets;
  options.keep_layer_records = args.keep_records;
  PythonHooks hooks(circuit, args.layer_callback, args.poll_signals);
  options.on_layer = hooks.on_layer();
  options.should_stop = [interrupted = hooks.interrupted()](std::size_t) { return interrupted(); };
  PropagationStats stats;
  {
    py::gil_scoped_release release;
    stats = engine(options);
  }
  py::dict result = stats_dict(stats, circuit);
  result["exception"] = hooks.pending();
  return result;
}

}  // namespace paulistrings::python
