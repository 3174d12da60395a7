// _core.propagate: the host sum's propagation, one call into the library's run orchestration
// (run/orchestrate.h: resume, memory budget, checkpoint schedule and parts, segments) with a RunOptions
// object built by PauliSum.propagate (_sum.py). The options classes are bound here field by field; the
// Python-only parts of a call — an mpi4py communicator, the layer callback and Ctrl-C polling
// (propagate_run.h) — are keyword arguments. The result dict carries "partition" for partitioned runs.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <locale>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mpi_comm.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/orchestrate.h"
#include "propagate_run.h"

namespace py = pybind11;

namespace paulistrings::python {

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
  return py::cast(
      std::vector<int>{devices.size() == 1 ? devices[0] : devices[static_cast<std::size_t>(*rank)]});
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

const char* result_name(PartitionResult result) {
  return result == PartitionResult::local ? "local" : "gather";
}

PartitionResult parse_result(const std::string& name) {
  if (name == "gather") return PartitionResult::gather;
  if (name == "local") return PartitionResult::local;
  throw std::invalid_argument("result must be 'gather' or 'local', got '" + name + "'");
}

const char* input_name(PartitionInput input) {
  switch (input) {
    case PartitionInput::share:
      return "share";
    case PartitionInput::scattered:
      return "scattered";
    case PartitionInput::replicated:
      break;
  }
  return "replicated";
}

PartitionInput parse_input(const std::string& name) {
  if (name == "replicated") return PartitionInput::replicated;
  if (name == "share") return PartitionInput::share;
  if (name == "scattered") return PartitionInput::scattered;
  throw std::invalid_argument("input must be 'replicated', 'scattered' or 'share', got '" + name + "'");
}

const char* row_policy_name(PartitionRowPolicy policy) {
  switch (policy) {
    case PartitionRowPolicy::seeded_excluding:
      return "seeded_excluding";
    case PartitionRowPolicy::cut:
      return "cut";
    case PartitionRowPolicy::seeded:
      break;
  }
  return "seeded";
}

/// A std::optional<std::filesystem::path> field as str | None.
template <class Class>
void path_field(py::class_<Class>& c, const char* name, std::optional<std::filesystem::path> Class::*field) {
  c.def_property(
      name,
      [field](const Class& o) -> std::optional<std::string> {
        if (!(o.*field)) return std::nullopt;
        return (o.*field)->string();
      },
      [field](Class& o, const std::optional<std::string>& path) {
        if (path) {
          o.*field = std::filesystem::path(*path);
        } else {
          o.*field = std::nullopt;
        }
      });
}

void register_options(py::module_& m) {
  py::class_<PropagateOptions>(m, "PropagateOptions", "A segment's propagation options (internal).")
      .def(py::init<>())
      .def_property(
          "direction", [](const PropagateOptions& o) { return std::string(to_string(o.direction)); },
          [](PropagateOptions& o, const std::string& d) { o.direction = parse_direction(d); })
      .def_readwrite("truncation", &PropagateOptions::truncation)
      .def_readwrite("target_bucket_len", &PropagateOptions::target_bucket_len)
      .def_readwrite("min_buckets", &PropagateOptions::min_buckets)
      .def_readwrite("threads", &PropagateOptions::threads)
      .def_readwrite("device", &PropagateOptions::device)
      .def_property(
          "column_engine", [](const PropagateOptions& o) { return o.engine == Engine::column; },
          [](PropagateOptions& o, bool column) { o.engine = column ? Engine::column : Engine::cpu; })
      .def_readwrite("keep_layer_records", &PropagateOptions::keep_layer_records)
      .def_readwrite("auto_truncate", &PropagateOptions::auto_truncate)
      .def_readwrite("sweep_split", &PropagateOptions::sweep_split)
      .def_readwrite("sweep_split_min_terms", &PropagateOptions::sweep_split_min_terms);

  py::class_<PartitionOptions>(m, "PartitionOptions", "A run's partitions (internal).")
      .def(py::init<>())
      .def_readwrite("partitions", &PartitionOptions::partitions)
      .def_property(
          "row_policy", [](const PartitionOptions& o) { return std::string(row_policy_name(o.row_policy)); },
          [](PartitionOptions& o, const std::string& name) { o.row_policy = parse_row_policy(name); })
      .def_readwrite("row_seed", &PartitionOptions::row_seed)
      .def_readwrite("excluded_qubits", &PartitionOptions::excluded_qubits)
      .def_readwrite("cut_blocks", &PartitionOptions::cut_blocks)
      .def_readwrite("cpu_lists", &PartitionOptions::cpu_lists)
      .def_readwrite("devices", &PartitionOptions::devices)
      .def_readwrite("use_nccl", &PartitionOptions::use_nccl)
      .def_readwrite("route_orbits_from", &PartitionOptions::route_orbits_from)
      .def_property(
          "result", [](const PartitionOptions& o) { return std::string(result_name(o.result)); },
          [](PartitionOptions& o, const std::string& name) { o.result = parse_result(name); })
      .def_property(
          "input", [](const PartitionOptions& o) { return std::string(input_name(o.input)); },
          [](PartitionOptions& o, const std::string& name) { o.input = parse_input(name); });

  py::class_<RunOptions> run(
      m, "RunOptions",
      "A run's options (internal; run/run_options.h): propagate, partition, checkpoint, "
      "checkpoint_every, resume, fingerprint, memory_limit, memory_guard, memory_guard_bytes.");
  run.def(py::init([] {
       RunOptions options;
       // The Python package's words in the messages of a refused run.
       options.memory_limit_name = "memory_limit";
       options.stricter_truncation_name = "a stricter policy, e.g. truncation.coeff";
       options.fingerprint_covers = "run (circuit, direction, policy or starting observable differ)";
       options.distributed_budget = DistributedBudget::per_rank;  // docs/python.md
       return options;
     }))
      .def_readwrite("propagate", &RunOptions::propagate)
      .def_readwrite("partition", &RunOptions::partition)
      .def_readwrite("checkpoint_every", &RunOptions::checkpoint_every)
      .def_readwrite("fingerprint", &RunOptions::fingerprint)
      .def_readwrite("memory_limit", &RunOptions::memory_limit)
      .def_readwrite("memory_guard", &RunOptions::memory_guard)
      .def_readwrite("memory_guard_bytes", &RunOptions::memory_guard_bytes);
  path_field(run, "checkpoint", &RunOptions::checkpoint);
  path_field(run, "resume", &RunOptions::resume);
}

}  // namespace

void register_propagate(py::module_& m) {
  register_options(m);
  m.def(
      "propagate",
      [](AnyPauliSum& sum, const Circuit& circuit, RunOptions options, py::object comm,
         py::object layer_callback, bool poll_signals) {
        // One choice for every engine (run/propagate.h): a device ≥ 0 alone runs the single-GPU engine;
        // partitions > 1, a device list, CPU lists or an mpi4py communicator `comm` (collective: one
        // partition per rank) run partitioned; the library checks the options.
        std::function<std::unique_ptr<Transport>()> make_transport;
        if (!comm.is_none()) make_transport = mpi_transport_factory(comm);  // GIL held: reads the object
        PythonHooks hooks(circuit, std::move(layer_callback), poll_signals);
        options.propagate.on_layer = hooks.on_layer();
        options.interrupted = hooks.interrupted();
        const std::vector<int> devices = options.partition.devices;
        const int device = options.propagate.device;
        RunResult run;
        std::optional<int> rank, size;
        {
          py::gil_scoped_release release;
          std::unique_ptr<Transport> transport;
          if (make_transport) {
            transport = make_transport();  // MPI_Comm_dup: collective, without the GIL
            options.partition.transport = transport.get();
            rank = transport->rank();
            size = transport->size();
          }
          run = orchestrate(sum, circuit, std::move(options));
        }
        py::dict out = stats_dict(run.stats, circuit);
        out["interrupted"] = run.interrupted;
        out["exception"] = hooks.pending();
        if (run.engine != EngineKind::partitioned && run.engine != EngineKind::distributed) return out;
        py::dict stats = partition_dict(run.partitions);
        if (rank) {
          stats["rank"] = *rank;
          stats["size"] = *size;
        }
        stats["devices"] = partition_devices(devices, device, run.partitions.partitions, rank);
        out["partition"] = stats;
        return out;
      },
      py::arg("sum"), py::arg("circuit"), py::arg("options"), py::kw_only(), py::arg("comm") = py::none(),
      py::arg("layer_callback") = py::none(), py::arg("poll_signals") = false);

  m.def("mpi4py_support", &mpi4py_support);

  m.def("run_fingerprint", &run_fingerprint);
  m.def("resident_bytes", [] { return resident_bytes(); });
  m.def("available_cpus", &available_cpus);
  m.def("allowed_cpus", &allowed_cpus,
        "The CPUs this process may run on (partition/cpu_pinning.h: the OpenMP places when OpenMP binds).");
  // What the host memory guard reads at the start of a run (run/memory_budget.h), for diagnostics: the
  // three limits it considers (None where there is none) and the allowance it takes from them.
  m.def("_host_memory", [] {
    const HostMemory memory = read_host_memory();
    const HostAllowance allowance = host_allowance(memory);
    py::dict out;
    out["available"] = memory.available;
    out["cgroup_room"] = memory.cgroup_room;
    out["address_space_room"] = memory.address_space_room;
    out["allowance"] = allowance.bytes;
    out["source"] = allowance.source;
    out["cxx_locale"] = std::locale().name();  // the global C++ locale the process runs under
    return out;
  });
  // Checkpoints in parts (io/checkpoint.h): the name of one rank's part (for messages).
  m.def("checkpoint_part_path", [](const std::string& path, std::size_t part, std::size_t parts) {
    return io::checkpoint_part_path(path, part, parts).string();
  });
}

}  // namespace paulistrings::python
