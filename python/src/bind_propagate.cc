// _core.propagate: the driver call behind PauliSum.propagate / propagate_with_stats (on the CPU, or
// with device ≥ 0 on that CUDA device: upload, propagate, download; with partitions > 1, a device list
// (GPU partitions: PartitionOptions::devices) or an mpi4py communicator through propagate_partitioned,
// the result dict then carrying "partition"); run_propagation is shared with the resident GPU sum
// (bind_gpu.cc).
//
// The GIL is released for the whole run. Python is re-entered from the driver thread only
//  - per layer, when the caller passes a layer callback (DEBUG logging of `paulistrings.propagate`
//    is on: the Python side checks the level once per call, so logging off costs nothing), and
//  - between layers, at most every kPollInterval, to run PyErr_CheckSignals when the call came
//    from the main thread (Ctrl-C). A pending KeyboardInterrupt (or an exception raised by the
//    callback) stops the run after the current layer; it is handed back to Python in the result
//    (key "exception") so that the caller can write a checkpoint before raising it.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mpi_comm.h"
#include "paulistrings/engine/propagate.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "propagate_run.h"

namespace py = pybind11;

namespace paulistrings::python {

namespace {

/// One field of every record, as a list for Python (the per-layer columns of the stats dicts).
template <class Record, class Field>
auto column(const std::vector<Record>& records, Field field) {
  std::vector<std::decay_t<decltype(field(records.front()))>> out;
  out.reserve(records.size());
  for (const Record& r : records) out.push_back(field(r));
  return out;
}

}  // namespace
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

py::dict run_propagation(const Circuit& circuit, const Truncation& policy, const RunArguments& args,
                         const std::function<PropagationStats(const PropagateOptions&)>& engine) {
  PropagateOptions options;
  options.direction = parse_direction(args.direction);
  options.truncation = policy;
  options.target_bucket_len = args.target_bucket_len;
  options.min_buckets = args.min_buckets;
  options.threads = args.threads;
  options.device = args.device;
  options.keep_layer_records = args.keep_records;
  options.start_layer = args.start_layer;
  options.max_terms = args.max_terms;
  options.auto_truncate = args.auto_truncate;

  // Python objects touched while the GIL is released live here and are only used under it.
  py::object pending = py::none();
  bool failed = false;
  const bool has_callback = !args.layer_callback.is_none();
  const std::size_t layers = circuit.size();
  if (has_callback) {
    options.on_layer = [&](const LayerRecord& r) {
      if (failed) return;
      py::gil_scoped_acquire gil;
      try {
        args.layer_callback(r.application_index + 1, layers, seed_type_name(circuit[r.circuit_index]),
                            r.terms_in, r.terms_out, r.wall_ns, r.discarded_weight);
      } catch (py::error_already_set& e) {
        pending = e.value();
        failed = true;
      }
    };
  }
  auto last_poll = Clock::now() - kPollInterval;
  options.should_stop = [&](std::size_t done) {
    if (failed) return true;
    if (args.stop_every > 0 && done % args.stop_every == 0) return true;
    if (args.poll_signals) {
      const auto now = Clock::now();
      if (now - last_poll >= kPollInterval) {
        last_poll = now;
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          py::error_already_set e;
          pending = e.value();
          failed = true;
          return true;
        }
      }
    }
    return false;
  };

  PropagationStats stats;
  {
    py::gil_scoped_release release;
    stats = engine(options);
  }

  py::dict result;
  const std::vector<LayerRecord>& records = stats.layers;
  result["terms_in"] = column(records, [](const LayerRecord& r) { return r.terms_in; });
  result["terms_out"] = column(records, [](const LayerRecord& r) { return r.terms_out; });
  result["circuit_index"] = column(records, [](const LayerRecord& r) { return r.circuit_index; });
  result["application_index"] = column(records, [](const LayerRecord& r) { return r.application_index; });
  result["gate_name"] =
      column(records, [&](const LayerRecord& r) { return std::string(seed_type_name(circuit[r.circuit_index])); });
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
  result["budget_truncations"] = stats.budget_truncations;
  result["budget_discarded_weight"] = stats.budget_discarded_weight;
  result["exception"] = pending;
  return result;
}

namespace {

std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  return h;
}

/// What must match for a Python checkpoint to be resumed: the circuit, direction, truncation and
/// the starting observable (every term, order-independent).
std::uint64_t run_fingerprint(const AnyPauliSum& observable, const Circuit& circuit,
                              const std::string& direction, const Truncation& policy) {
  std::string text = "paulistrings-python run circuit " + std::to_string(circuit.fingerprint()) + " qubits " +
                     std::to_string(circuit.num_qubits()) + " direction " +
                     std::string(to_string(parse_direction(direction))) + " truncation " +
                     policy.description() + " observable " + std::to_string(observable.size());
  std::uint64_t h = fnv1a(text.data(), text.size(), 0xcbf29ce484222325ULL);
  std::vector<std::pair<std::string, Complex>> terms = observable.terms();
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [label, c] : terms) {
    h = fnv1a(label.data(), label.size(), h);
    const double parts[2] = {c.real(), c.imag()};
    h = fnv1a(parts, sizeof parts, h);
  }
  return h;
}

/// The CUDA ordinal of each partition this process ran (PartitionStats.devices): in-process the device
/// list (every partition on `device` when the list is empty), under a transport this rank's entry; None
/// for a CPU run. The library's own rules (partitioned_propagate.h: PartitionOptions::devices).
py::object partition_devices(const std::vector<int>& devices, int device, std::size_t partitions,
                             std::optional<int> rank) {
  if (devices.empty()) {
    if (device < 0) return py::none();
    return py::cast(std::vector<int>(rank ? 1 : partitions, device));
  }
  if (!rank) return py::cast(devices);
  return py::cast(std::vector<int>{devices.size() == 1 ? devices[0] : devices[static_cast<std::size_t>(*rank)]});
}

/// PartitionStats as a dict (per-layer lists only when the run kept layer records); rank, size and
/// devices are None here (the caller sets them for an MPI run or a GPU run).
py::dict partition_dict(const PartitionStats& p) {
  py::dict d;
  d["partitions"] = p.partitions;
  d["rows"] = p.rows;
  d["transport"] = p.transport;
  d["remote_layers"] = p.remote_layers;
  d["local_layers"] = p.local_layers;
  d["orbit_routed_layers"] = p.orbit_routed_layers;
  d["rows_exported"] = p.rows_exported;
  d["bytes_exported"] = p.bytes_exported;
  d["max_imbalance"] = p.max_imbalance;
  d["rank"] = py::none();
  d["size"] = py::none();
  d["devices"] = py::none();
  d["final_terms"] = p.final_terms;
  d["transport_seconds"] = p.transport_seconds;
  d["work_seconds"] = p.work_seconds;
  using Layer = PartitionLayerStats;
  d["layer_application_index"] = column(p.layers, [](const Layer& l) { return l.application_index; });
  d["layer_remote"] = column(p.layers, [](const Layer& l) { return l.remote; });
  d["layer_partners"] = column(p.layers, [](const Layer& l) { return l.partners; });
  d["layer_rows_exported"] = column(p.layers, [](const Layer& l) { return l.rows_exported; });
  d["layer_bytes_exported"] = column(p.layers, [](const Layer& l) { return l.bytes_exported; });
  d["layer_max_terms"] = column(p.layers, [](const Layer& l) { return l.max_terms; });
  d["layer_imbalance"] = column(p.layers, [](const Layer& l) { return l.imbalance; });
  return d;
}

PartitionResult parse_result(const std::string& name) {
  if (name == "gather") return PartitionResult::gather;
  if (name == "local") return PartitionResult::local;
  throw std::invalid_argument("result must be 'gather' or 'local', got '" + name + "'");
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t total = 0, resident = 0;
  statm >> total >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

void register_propagate(py::module_& m) {
  m.def(
      "propagate",
      [](AnyPauliSum& sum, const Circuit& circuit, const Truncation& policy, const std::string& direction,
         std::size_t target_bucket_len, std::size_t min_buckets, int threads, bool keep_records,
         py::object layer_callback, bool poll_signals, std::size_t start_layer, std::size_t stop_every,
         std::size_t max_terms, bool auto_truncate, int device, std::size_t partitions,
         const std::string& row_policy, std::optional<std::uint64_t> row_seed,
         std::vector<std::size_t> excluded_qubits, std::vector<std::vector<std::size_t>> cut_blocks,
         py::object comm, const std::string& result, std::vector<std::vector<int>> cpu_lists,
         std::vector<int> devices, bool use_nccl, const std::string& input,
         std::optional<std::size_t> route_orbits_from) {
        RunArguments args;
        args.direction = direction;
        args.target_bucket_len = target_bucket_len;
        args.min_buckets = min_buckets;
        args.threads = threads;
        args.device = device;
        args.keep_records = keep_records;
        args.layer_callback = std::move(layer_callback);
        args.poll_signals = poll_signals;
        args.start_layer = start_layer;
        args.stop_every = stop_every;
        args.max_terms = max_terms;
        args.auto_truncate = auto_truncate;
        if (partitions <= 1 && comm.is_none() && cpu_lists.empty() && devices.empty()) {
          // device ≥ 0: propagate() uploads, runs on that CUDA device and downloads into `sum`.
          return run_propagation(circuit, policy, args, [&](const PropagateOptions& options) {
            return propagate(sum, circuit, options);
          });
        }
        // Partitioned: in-process partitions (threads of this process), or one partition per MPI rank
        // of the mpi4py communicator `comm` (collective). Each partition runs the CPU engine, or the GPU
        // engine on devices[r] (in-process: the list sets the partition count; under comm one entry for
        // this rank or one per rank), or on `device` for every partition when the list is empty; the
        // library checks the list against the partition count.
        PartitionOptions partition;
        partition.partitions = partitions;
        partition.row_policy = parse_row_policy(row_policy);
        if (row_seed) partition.row_seed = *row_seed;
        partition.excluded_qubits = std::move(excluded_qubits);
        partition.cut_blocks = std::move(cut_blocks);
        partition.cpu_lists = std::move(cpu_lists);
        partition.result = parse_result(result);
        partition.devices = devices;
        partition.use_nccl = use_nccl;
        if (route_orbits_from) partition.route_orbits_from = *route_orbits_from;
        partition.input = input == "scattered" ? PartitionInput::scattered
                          : input == "share"   ? PartitionInput::share
                                               : PartitionInput::replicated;
        std::function<std::unique_ptr<Transport>()> make_transport;
        if (!comm.is_none()) make_transport = mpi_transport_factory(comm);  // GIL held: reads the object
        PartitionStats partition_stats;
        std::optional<int> rank, size;
        py::dict out = run_propagation(circuit, policy, args, [&](const PropagateOptions& options) {
          std::unique_ptr<Transport> transport;
          if (make_transport) {
            transport = make_transport();  // MPI_Comm_dup: collective, without the GIL
            partition.transport = transport.get();
            rank = transport->rank();
            size = transport->size();
          }
          PartitionedPropagation run = propagate_partitioned(sum, circuit, options, partition);
          partition_stats = std::move(run.partitions);
          return std::move(run.stats);
        });
        py::dict stats = partition_dict(partition_stats);
        if (rank) {
          stats["rank"] = *rank;
          stats["size"] = *size;
        }
        stats["devices"] = partition_devices(devices, device, partition_stats.partitions, rank);
        out["partition"] = stats;
        return out;
      },
      py::arg("sum"), py::arg("circuit"), py::arg("policy"), py::arg("direction"),
      py::arg("target_bucket_len"), py::arg("min_buckets"), py::arg("threads"), py::arg("keep_records"),
      py::arg("layer_callback"), py::arg("poll_signals"), py::arg("start_layer"), py::arg("stop_every"),
      py::arg("max_terms"), py::arg("auto_truncate"), py::arg("device") = -1, py::arg("partitions") = 1,
      py::arg("row_policy") = "seeded", py::arg("row_seed") = py::none(),
      py::arg("excluded_qubits") = std::vector<std::size_t>{},
      py::arg("cut_blocks") = std::vector<std::vector<std::size_t>>{}, py::arg("comm") = py::none(),
      py::arg("result") = "gather", py::arg("cpu_lists") = std::vector<std::vector<int>>{},
      py::arg("devices") = std::vector<int>{}, py::arg("use_nccl") = false,
      py::arg("input") = "replicated", py::arg("route_orbits_from") = py::none());

  m.def("mpi4py_support", &mpi4py_support);

  m.def("run_fingerprint", &run_fingerprint);
  m.def("resident_bytes", &resident_bytes);
  m.def("available_cpus", &available_cpus);

  m.def("save_checkpoint",
        [](const std::string& path, const AnyPauliSum& sum, std::uint64_t circuit_fingerprint,
           std::uint64_t task_fingerprint, std::uint64_t layers_done) {
          // Streamed from the sum itself (no copy); like propagate, the sum must not change meanwhile.
          py::gil_scoped_release release;
          io::save_checkpoint(path, circuit_fingerprint, task_fingerprint, layers_done, sum);
        });
  // Checkpoints in parts (io/checkpoint.h): one file per rank of a comm= run.
  m.def("checkpoint_part_path", [](const std::string& path, std::size_t part, std::size_t parts) {
    return io::checkpoint_part_path(path, part, parts).string();
  });
  m.def("checkpoint_parts", [](const std::string& path) { return io::checkpoint_parts(path); });
  m.def("remove_other_checkpoints", [](const std::string& path, std::size_t keep_parts) {
    io::remove_other_checkpoints(path, keep_parts);
  });
  // A checkpoint as (sum, circuit fingerprint, task fingerprint, layers done), read without the GIL.
  const auto loaded = [](const std::function<io::Checkpoint()>& load) {
    io::Checkpoint checkpoint;
    {
      py::gil_scoped_release release;
      checkpoint = load();
    }
    return py::make_tuple(std::move(checkpoint.sum), checkpoint.circuit_fingerprint,
                          checkpoint.task_fingerprint, checkpoint.layers_done);
  };
  m.def("load_checkpoint", [loaded](const std::string& path) { return loaded([&] { return io::load_checkpoint(path); }); });
  m.def("load_checkpoint_share", [loaded](const std::string& path, std::size_t parts, std::size_t rank, std::size_t ranks) {
    return loaded([&] { return io::load_checkpoint_share(path, parts, rank, ranks); });
  });
}

}  // namespace paulistrings::python
