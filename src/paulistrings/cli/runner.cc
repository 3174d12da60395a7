// The command line's execution core (see runner.h): the task and flags as RunOptions, its observables one
// after another through the library's run orchestration (run/orchestrate.h: checkpoints on a schedule
// and on SIGINT/SIGTERM, resume, the memory budget), with progress, trace and the results JSON
// (run_output.h); a task with a sweep goes to runner_sweep.cc.
#include "paulistrings/cli/runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "paulistrings/cli/launch.h"
#include "paulistrings/cli/run_output.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/orchestrate.h"

namespace paulistrings::cli {

using namespace detail;

std::uint64_t task_fingerprint(const io::Task& task, std::size_t observable_index) {
  std::ostringstream canonical;
  canonical.precision(17);
  canonical << "circuit " << task.circuit.fingerprint() << " qubits " << task.num_qubits << " direction "
            << (task.direction == Direction::forward ? "forward" : "heisenberg") << " state " << task.state
            << " truncation " << task.truncation.policy().description() << " observable " << observable_index;
  if (observable_index < task.observables.size()) {
    const io::NamedObservable& o = task.observables[observable_index];
    canonical << " name " << o.name;
    for (const auto& [label, c] : o.terms) canonical << " " << label << " " << c.real() << " " << c.imag();
  }
  return fnv1a(canonical.str());
}

/// "cpu" → −1; "auto" → GPU 0 when there is one, else −1; "gpu" → 0; "N" → N. A GPU that is asked for
/// and missing is a runtime failure (exit 1) with the reason, not bad input.
int resolve_device(const std::string& device) {
  if (device == "cpu") return -1;
  const int count = gpu::device_count();
  if (device == "auto") return count > 0 ? 0 : -1;
  int ordinal = 0;
  if (device != "gpu") {
    try {
      ordinal = static_cast<int>(parse_count(device, std::numeric_limits<int>::max()));
    } catch (const std::invalid_argument& e) {
      throw BadInput("device: " + std::string(e.what()) + " (expected cpu, gpu, auto or a GPU index)");
    }
  }
  if (count == 0) {
    throw std::runtime_error(
        std::string("device ").append(device).append(": ").append(gpu::unavailable_reason()));
  }
  if (ordinal >= count) {
    throw std::runtime_error(std::string("device ")
                                 .append(device)
                                 .append(": no such GPU (this machine has ")
                                 .append(std::to_string(count))
                                 .append(")"));
  }
  return ordinal;
}

namespace {

/// The devices of a partitioned run (PartitionOptions::devices; empty = the CPU engine). "gpu" spreads
/// the partitions over every visible GPU (partition r, or the rank with node-local rank r, on GPU
/// r mod count); "N" puts them all on GPU N; "auto" is "gpu" when there is a GPU, else the CPU.
std::vector<int> partition_devices(const std::string& device, std::size_t partitions, const Launch* launch) {
  if (device == "cpu") return {};
  const int count = gpu::device_count();
  if (device == "auto" && count == 0) return {};
  if (device != "auto" && device != "gpu") {
    const int ordinal = resolve_device(device);
    return launch != nullptr ? std::vector<int>{ordinal} : std::vector<int>(partitions, ordinal);
  }
  resolve_device("gpu");  // the reason when there is no GPU
  if (launch != nullptr) {
    // OpenMPI names the rank's place on its node; elsewhere the world rank stands in.
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    std::uint64_t rank = static_cast<std::uint64_t>(launch->rank());
    try {
      if (local != nullptr) rank = parse_count(local);
    } catch (const std::invalid_argument&) {  // not OpenMPI's number: the world rank stands in
    }
    return {static_cast<int>(rank % static_cast<std::uint64_t>(count))};
  }
  std::vector<int> devices(partitions);
  for (std::size_t r = 0; r < partitions; ++r)
    devices[r] = static_cast<int>(r % static_cast<std::size_t>(count));
  return devices;
}

}  // namespace

int execute(const RunSpec& spec, const RunControl& control) {
  const io::Task& task = spec.task;
  // A distributed launch: every rank runs this alike, partitions = ranks; rank 0 writes.
  Launch* const launch =
      control.launch != nullptr && control.launch->distributed() ? control.launch : nullptr;
  const bool writer = control.launch == nullptr || control.launch->writer();
  const std::size_t partitions =
      launch != nullptr ? static_cast<std::size_t>(launch->size()) : task.partitions;
  if (task.observables.empty()) {
    throw BadInput(spec.source +
                   ": no observable given (add \"observable\" to the task or pass --observable)");
  }
  if (!task.sweep.empty()) return execute_sweep(spec, control);
  const std::vector<int> devices =
      partitions > 1 ? partition_devices(task.device, partitions, launch) : std::vector<int>{};
  const bool column = task.engine == "column";
  if (column && (partitions > 1 || (task.device != "cpu" && task.device != "auto"))) {
    throw BadInput(
        "the column engine (--engine column or run.engine) runs in one process on the host: not with " +
        (partitions > 1 ? std::to_string(partitions) + " partitions" : "device " + task.device));
  }
  // "auto" picks a GPU when there is one; the column engine takes the host.
  const int device = partitions > 1 || column ? -1 : resolve_device(task.device);
  if (partitions == 1 && task.partition_rows != io::TaskPartitionRows{}) {
    throw BadInput(
        "partition rows (--partition-rows or run.partition_rows) need a partitioned run "
        "(--partitions N, run.partitions or mpirun -np N)");
  }
  if (partitions == 1 && task.route_orbits_from) {
    throw BadInput(
        "orbit routing (--route-orbits-from or run.route_orbits_from) is for partitioned runs "
        "(--partitions N, run.partitions or mpirun -np N)");
  }
  if (task.nccl && (launch == nullptr || devices.empty())) {
    throw BadInput(
        "NCCL (--nccl or run.nccl) swaps rows between GPU ranks: run under mpirun with --device gpu | N");
  }
  const std::vector<std::vector<int>> cpu_lists = launch == nullptr && devices.empty()
                                                      ? numa_partition_lists(numa_cpu_lists(), partitions)
                                                      : std::vector<std::vector<int>>{};
  if (control.every > 0 && !control.checkpoint_path) throw BadInput("--every needs --checkpoint FILE");
  const ProductState state = task_state(task);

  // The column engine runs on one thread (docs/design.md §7.5).
  const int threads = column ? 1 : task.threads == 0 ? available_cpus() : task.threads;
  const bool tracing = writer && control.trace_path.has_value();
  // Set once the progress bar and the trace exist (after the ranks have joined).
  std::function<void(const LayerRecord&)> on_layer;

  RunOptions options;
  options.propagate.direction = task.direction;
  options.propagate.truncation = task.truncation.policy();
  options.propagate.threads = threads;
  options.propagate.device = device;
  options.propagate.engine = column ? Engine::column : Engine::cpu;
  options.propagate.column_phase.enabled = task.column_phase;
  // Partition statistics per layer are kept only for the trace (the layer records come with them).
  options.propagate.keep_layer_records = partitions > 1 && tracing;
  options.propagate.auto_truncate = control.auto_truncate;
  options.propagate.on_layer = [&](const LayerRecord& record) { on_layer(record); };
  if (partitions > 1) {
    PartitionOptions& partition = options.partition;
    partition.partitions = task.partitions;
    partition.devices = devices;
    partition.cpu_lists = cpu_lists;  // in-process CPU partitions: NUMA nodes (empty otherwise)
    // Distributed: partitions = ranks. The result stays distributed: each rank keeps its share, writes it
    // as its part of a checkpoint, and the read-out below adds the shares' expectation values.
    // In-process partitions always gather the result.
    const io::TaskPartitionRows& rows = task.partition_rows;
    partition.row_policy = parse_row_policy(rows.policy);
    if (rows.seed) partition.row_seed = *rows.seed;
    partition.excluded_qubits = rows.excluded_qubits;
    partition.cut_blocks = rows.blocks;
    partition.cut_basis = rows.basis;
    partition.use_nccl = task.nccl;
    if (task.route_orbits_from)
      partition.route_orbits_from = static_cast<std::size_t>(*task.route_orbits_from);
    partition.result = PartitionResult::local;
  }
  options.checkpoint = control.checkpoint_path;
  options.checkpoint_every = control.every;
  options.resume = control.resume_path;
  options.memory_limit = control.memory_limit_bytes;
  options.distributed_budget = DistributedBudget::whole_run;  // docs/cli.md
  options.interrupted = [] { return g_signal.load() != 0; };
  if (launch != nullptr) options.on_shared_ending = [launch] { launch->note_shared_ending(); };
  options.memory_limit_name = "--memory-limit";
  options.stricter_truncation_name = "--coeff, or a larger min_abs_coeff in the task";
  options.memory_guard = control.memory_guard;
  options.memory_guard_bytes = control.memory_guard_bytes;
  options.fingerprint_covers = "task (circuit, direction, truncation, state or observable differ)";
  std::vector<std::uint64_t> fingerprints;
  for (std::size_t i = 0; i < task.observables.size(); ++i) fingerprints.push_back(task_fingerprint(task, i));

  // Before the ranks join (Launch agrees on failures there): the resume checkpoint — under mpirun, this
  // rank's share of one in parts — and the memory baseline. A checkpoint that cannot be read is bad input.
  Orchestration run = [&] {
    try {
      return Orchestration(task.circuit, task.num_qubits, options, fingerprints,
                           launch != nullptr ? static_cast<std::size_t>(launch->rank()) : 0,
                           launch != nullptr ? static_cast<std::size_t>(launch->size()) : 1);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw BadInput(e.what());
    }
  }();
  auto make_sum = [&](const io::NamedObservable& observable) { return observable_sum(task, observable); };
  // Every observable is checked before the first one runs, so that bad input ends every rank of a
  // distributed launch before the run (where the ranks agree on it), not in the middle of it.
  for (const io::NamedObservable& observable : task.observables) make_sum(observable);

  Transport* const transport = launch != nullptr ? &launch->join() : nullptr;
  run.join(transport);
  SignalScope signals;
  const FaultInjection fault = fault_injection();
  Progress progress(!control.quiet && writer, task.circuit.size(), task.observables.size());
  Trace trace(writer ? control.trace_path : std::nullopt);
  const io::NamedObservable* current = nullptr;
  std::atomic<std::size_t> layers_done_now{0};  // the last layer finished, for the interruption message
  std::atomic<bool> fault_raised{false};
  on_layer = [&](const LayerRecord& record) {
    progress.update(record);
    if (trace.enabled()) trace.add(current->name, record);
    layers_done_now.store(record.application_index + 1);
    if (fault.signal != 0 && !fault.mid_layer && record.application_index + 1 == fault.layer)
      ::raise(fault.signal);
  };
  // A signal stops a long layer at once (the CPU engine polls this between cosets); the run then keeps
  // the state it had when the segment began (run/orchestrate.h).
  run.set_layer_interrupt([&] {
    if (fault.signal != 0 && fault.mid_layer && layers_done_now.load() == fault.layer &&
        !fault_raised.exchange(true))
      ::raise(fault.signal);
    return g_signal.load() != 0;
  });
  const auto start = Clock::now();

  Json observables = Json::object();
  std::size_t total_final = 0, peak = 0, budget_cuts = 0, max_terms_used = 0;
  double discarded = 0.0, budget_discarded = 0.0;
  for (std::size_t i = 0; i < task.observables.size(); ++i) {
    const io::NamedObservable& observable = task.observables[i];
    AnyPauliSum sum = make_sum(observable);
    current = &observable;
    layers_done_now.store(run.start_layer(i));
    progress.begin_observable(i, run.start_layer(i));
    // Under mpirun every rank passes the whole observable; a rank resuming from a checkpoint in parts
    // passes the parts it read; after a checkpoint segment each rank holds exactly its own share.
    const RunResult result = run.propagate(i, sum);
    const PropagationStats& stats = result.stats;
    if (partitions > 1 && trace.enabled()) trace.attach_partitions(observable.name, result.partitions.layers);
    if (result.interrupted) {
      trace.write();
      const std::string when =
          result.abandoned_layer ? "interrupted inside layer " + std::to_string(layers_done_now.load() + 1) +
                                       " of " + std::to_string(task.circuit.size())
                                 : "interrupted after layer " + std::to_string(stats.layers_done) + " of " +
                                       std::to_string(task.circuit.size());
      if (writer && result.checkpoint_written) {  // rank 0 tells, once for the run
        const std::string where =
            transport != nullptr
                ? io::checkpoint_part_path(*control.checkpoint_path, 0, partitions).string() + " … " +
                      io::checkpoint_part_path(*control.checkpoint_path, partitions - 1, partitions)
                          .string() +
                      " (one part per rank)"
                : *control.checkpoint_path;
        std::fprintf(
            stderr,
            "\npaulistrings: %s; checkpoint after layer %zu written to %s (continue with --resume %s)\n",
            when.c_str(), stats.layers_done, where.c_str(), control.checkpoint_path->c_str());
      } else if (writer) {
        std::fprintf(stderr, "\npaulistrings: %s (no --checkpoint given)\n", when.c_str());
      }
      return kExitInterrupted;
    }
    Complex value = sum.visit([&](const auto& typed) -> Complex { return state.expectation(typed); });
    if (transport != nullptr) {
      // Each rank read out its own share: ⟨O⟩ is the sum of the shares' values (added in rank order).
      double parts[2] = {value.real(), value.imag()};
      transport->all_reduce_sum(std::span<double>(parts, 2));
      value = Complex(parts[0], parts[1]);
    }
    observables[observable.name] = {{"value", complex_value(value)},
                                    {"final_terms", stats.final_terms},
                                    {"peak_terms", stats.peak_terms},
                                    {"discarded_weight", stats.discarded_weight}};
    // The layers the CPU engine's column phase applied (engine/options.h ColumnPhase), when it ran.
    if (stats.column_layers > 0) observables[observable.name]["column_layers"] = stats.column_layers;
    if (partitions > 1) {
      const PartitionStats& p = result.partitions;
      std::vector<double> transport_seconds(partitions, 0.0), work_seconds(partitions, 0.0);
      for (std::size_t r = 0; r < p.transport_seconds.size() && r < partitions; ++r) {
        transport_seconds[r] = p.transport_seconds[r];
        work_seconds[r] = p.work_seconds[r];
      }
      observables[observable.name]["partitions"] = {{"count", partitions},
                                                    {"transport", p.transport},
                                                    {"rows", p.rows},
                                                    {"remote_layers", p.remote_layers},
                                                    {"orbit_routed_layers", p.orbit_routed_layers},
                                                    {"rows_exported", p.rows_exported},
                                                    {"bytes_exported", p.bytes_exported},
                                                    {"max_imbalance", std::max(1.0, p.max_imbalance)},
                                                    {"numa_pinned", !cpu_lists.empty()},
                                                    {"final_terms_by_partition", p.final_terms},
                                                    {"transport_seconds", transport_seconds},
                                                    {"work_seconds", work_seconds}};
    }
    if (control.memory_limit_bytes) {
      observables[observable.name]["budget_truncations"] = stats.budget_truncations;
      observables[observable.name]["budget_discarded_weight"] = stats.budget_discarded_weight;
      max_terms_used = result.max_terms;
    }
    total_final += stats.final_terms;
    peak = std::max(peak, stats.peak_terms);
    discarded += stats.discarded_weight;
    budget_cuts += stats.budget_truncations;
    budget_discarded += stats.budget_discarded_weight;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (!writer) return kExitOk;  // every rank holds the read-out; rank 0 reports it

  Json results = results_head(spec);
  add_totals(results, std::move(observables), total_final, peak, discarded, wall);
  results["engine"] = device >= 0 || !devices.empty() ? "gpu" : column ? "column" : "cpu";
  results["device"] = device >= 0 ? gpu::describe_device(device) : "cpu";
  results["threads"] = threads;  // per rank in a distributed run
  results["partitions"] = partitions;
  if (control.memory_limit_bytes)
    results["memory_budget"] = memory_budget_json(control, max_terms_used, budget_cuts, budget_discarded);
  if (run.resume()) results["resumed_from_layer"] = run.resume()->checkpoint.layers_done;
  trace.write();
  write_results(results, control);
  return kExitOk;
}

}  // namespace paulistrings::cli
