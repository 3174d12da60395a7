// The command line's execution core (see runner.h): the task and flags as RunOptions, its observables one
// after another through the library's run orchestration (run/orchestrate.h: checkpoints on a schedule
// and on SIGINT/SIGTERM, resume, the memory budget), with progress, trace and the results JSON.
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
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "paulistrings/cli/launch.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/orchestrate.h"
#include "paulistrings/sweep/propagate_sweep.h"

namespace paulistrings::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

std::atomic<int> g_signal{0};
extern "C" void remember_signal(int signal_number) { g_signal.store(signal_number); }

/// SIGINT/SIGTERM only set a flag; the driver stops after the current layer.
class SignalScope {
 public:
  SignalScope() {
    g_signal.store(0);
    struct sigaction action {};
    action.sa_handler = remember_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string format_seconds(double s) {
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%.1fs", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(text, sizeof text, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  }
  return text;
}

/// One line on stderr, redrawn at most 10 times a second, only when stderr is a terminal.
class Progress {
 public:
  Progress(bool enabled, std::size_t layers_per_observable, std::size_t observables)
      : enabled_(enabled && ::isatty(STDERR_FILENO)),
        layers_(layers_per_observable),
        observables_(observables),
        start_(Clock::now()) {}
  ~Progress() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void begin_observable(std::size_t index, std::size_t start_layer) {
    observable_ = index;
    first_layer_ = start_layer;
    observable_start_ = Clock::now();
  }
  void update(const LayerRecord& record) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const bool last = record.application_index + 1 == layers_;
    if (!last && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double in_observable = std::chrono::duration<double>(now - observable_start_).count();
    const std::size_t done = record.application_index + 1 - first_layer_;
    const std::size_t left = layers_ - record.application_index - 1;
    const double eta = done > 0 ? in_observable / static_cast<double>(done) * static_cast<double>(left) : 0.0;
    std::string prefix;
    if (observables_ > 1)
      prefix = "observable " + std::to_string(observable_ + 1) + "/" + std::to_string(observables_) + " ";
    std::fprintf(stderr, "\r\033[K%slayer %zu/%zu  %zu terms  elapsed %s  remaining ~%s", prefix.c_str(),
                 record.application_index + 1, layers_, record.terms_out, format_seconds(elapsed).c_str(),
                 format_seconds(eta).c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  bool enabled_;
  std::size_t layers_, observables_;
  std::size_t observable_ = 0, first_layer_ = 0;
  Clock::time_point start_, observable_start_, last_draw_{};
  bool drawn_ = false;
};

/// Per-layer rows, written atomically at the end (CSV, or JSON lines for .jsonl/.json). A partitioned
/// run adds what crossed partitions in each layer (attach_partitions, after the run): remote, partners,
/// rows_exported, bytes_exported, max_partition_terms, imbalance (CSV columns empty otherwise).
class Trace {
 public:
  explicit Trace(const std::optional<std::string>& path) : path_(path) {
    if (!path_) return;
    const std::string& p = *path_;
    json_lines_ = p.size() >= 5 && (p.ends_with(".jsonl") || p.ends_with(".json"));
  }
  bool enabled() const { return path_.has_value(); }
  void add(const std::string& observable, const LayerRecord& r) {
    rows_.push_back({observable, r, resident_bytes(), std::nullopt});
  }
  /// Adds a partitioned run's per-layer statistics to this observable's rows of the same layers.
  void attach_partitions(const std::string& observable, const std::vector<PartitionLayerStats>& layers) {
    std::size_t next = 0;
    for (Row& row : rows_) {
      if (row.observable != observable || row.partition) continue;
      while (next < layers.size() && layers[next].application_index < row.record.application_index) ++next;
      if (next < layers.size() && layers[next].application_index == row.record.application_index)
        row.partition = layers[next];
    }
  }
  void write() const {
    if (!path_) return;
    std::string text;
    if (!json_lines_) {
      text =
          "observable,layer,circuit_index,gate,terms_in,terms_out,discarded_weight,budget_discarded_weight,"
          "wall_ns,resident_bytes,remote,partners,rows_exported,bytes_exported,max_partition_terms,"
          "imbalance\n";
    }
    for (const Row& row : rows_) text += json_lines_ ? json_line(row) : csv_line(row);
    io::write_file_atomically(*path_, text);
  }

 private:
  struct Row {
    std::string observable;
    LayerRecord record;
    std::size_t resident_bytes = 0;
    std::optional<PartitionLayerStats> partition;
  };

  static std::string json_line(const Row& row) {
    const LayerRecord& r = row.record;
    Json line = {{"observable", row.observable},
                 {"layer", r.application_index},
                 {"circuit_index", r.circuit_index},
                 {"gate", r.gate_name},
                 {"terms_in", r.terms_in},
                 {"terms_out", r.terms_out},
                 {"discarded_weight", r.discarded_weight},
                 {"budget_discarded_weight", r.budget_discarded_weight},
                 {"wall_ns", r.wall_ns},
                 {"resident_bytes", row.resident_bytes}};
    if (row.partition) {
      const PartitionLayerStats& p = *row.partition;
      line["partition"] = {{"remote", p.remote},
                           {"partners", p.partners},
                           {"rows_exported", p.rows_exported},
                           {"bytes_exported", p.bytes_exported},
                           {"max_partition_terms", p.max_terms},
                           {"imbalance", p.imbalance}};
    }
    return line.dump() + "\n";
  }
  static std::string csv_line(const Row& row) {
    const LayerRecord& r = row.record;
    char line[640];
    int used = std::snprintf(line, sizeof line, "%s,%zu,%zu,%s,%zu,%zu,%.17g,%.17g,%llu,%zu,", row.observable.c_str(),
                             r.application_index, r.circuit_index, r.gate_name.c_str(), r.terms_in, r.terms_out,
                             r.discarded_weight, r.budget_discarded_weight,
                             static_cast<unsigned long long>(r.wall_ns), row.resident_bytes);
    used = std::max(0, std::min(used, static_cast<int>(sizeof line) - 1));
    if (row.partition) {
      const PartitionLayerStats& p = *row.partition;
      std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), "%d,%zu,%zu,%zu,%zu,%.6g\n",
                    p.remote ? 1 : 0, p.partners, p.rows_exported, p.bytes_exported, p.max_terms, p.imbalance);
    } else {
      std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), ",,,,,\n");
    }
    return line;
  }

  std::optional<std::string> path_;
  bool json_lines_ = false;
  std::vector<Row> rows_;
};

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

Json complex_value(Complex v) {
  if (v.imag() == 0.0) return v.real();
  return Json::array({v.real(), v.imag()});
}

/// Test hook: PAULISTRINGS_FAULT="SIGNAL@LAYER" (SIGKILL, SIGINT or SIGTERM) makes the process
/// signal itself right after that layer, so tests can kill a run mid-way deterministically;
/// "SIGNAL@LAYER:mid" signals inside the next layer instead (at its first interrupt poll).
struct FaultInjection {
  int signal = 0;
  std::size_t layer = 0;
  bool mid_layer = false;
};

FaultInjection fault_injection() {
  const char* text = std::getenv("PAULISTRINGS_FAULT");
  if (text == nullptr) return {};
  const std::string spec = text;
  const std::size_t at = spec.find('@');
  if (at == std::string::npos) return {};
  const std::string name = spec.substr(0, at);
  FaultInjection fault;
  fault.signal = name == "SIGKILL" ? SIGKILL : name == "SIGINT" ? SIGINT : name == "SIGTERM" ? SIGTERM : 0;
  std::string layer = spec.substr(at + 1);
  if (layer.ends_with(":mid")) {
    fault.mid_layer = true;
    layer.resize(layer.size() - 4);
  }
  try {
    fault.layer = static_cast<std::size_t>(parse_count(layer));
  } catch (const std::invalid_argument&) {
    fault.signal = 0;
  }
  return fault;
}

}  // namespace

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
    throw std::runtime_error(std::string("device ").append(device).append(": ").append(gpu::unavailable_reason()));
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
  for (std::size_t r = 0; r < partitions; ++r) devices[r] = static_cast<int>(r % static_cast<std::size_t>(count));
  return devices;
}

/// The task's product state (BadInput when it does not parse).
ProductState task_state(const io::Task& task) {
  try {
    return ProductState::parse(task.state, task.num_qubits);
  } catch (const std::invalid_argument& e) {
    throw BadInput(std::string("state: ") + e.what());
  }
}

/// One of the task's observables as a sum (BadInput naming it when a label is bad).
AnyPauliSum observable_sum(const io::Task& task, const io::NamedObservable& observable) {
  try {
    return io::make_observable(observable.terms, task.num_qubits);
  } catch (const std::invalid_argument& e) {
    throw BadInput("observable '" + observable.name + "': " + e.what());
  }
}

/// The results' first members: what ran (source, qubits, layers, measurements, direction, state, truncation).
Json results_head(const RunSpec& spec) {
  const io::Task& task = spec.task;
  Json results;
  results["paulistrings"] = PAULISTRINGS_VERSION_STRING;
  results["source"] = spec.source;
  results["num_qubits"] = task.num_qubits;
  results["layers"] = task.circuit.size();
  std::size_t measurements = task.ignored_measurements, resets = 0;
  for (const Channel& channel : task.circuit) {
    measurements += channel.is_measurement() ? 1 : 0;
    resets += channel.is_reset() ? 1 : 0;
  }
  results["measurements"] = measurements;
  results["resets"] = resets;
  if (task.ignore_measure) results["ignore_measure"] = true;
  results["direction"] = task.direction == Direction::forward ? "forward" : "heisenberg";
  results["state"] = task.state;
  results["truncation"] = task.truncation.policy().description();
  return results;
}

/// The results' per-observable members and the run's totals, time, memory and (wait_policy.h) the OpenMP
/// wait policy the process started with.
void add_totals(Json& results, Json observables, std::size_t final_terms, std::size_t peak, Json discarded,
                double wall) {
  results["observables"] = std::move(observables);
  results["final_terms"] = final_terms;
  results["peak_terms"] = peak;
  results["discarded_weight"] = std::move(discarded);
  results["wall_time_s"] = wall;
  results["peak_resident_bytes"] = peak_resident_bytes();
  if (const char* policy = std::getenv("OMP_WAIT_POLICY")) {
    results["openmp_wait_policy"] = policy;
  } else if (const char* spins = std::getenv("GOMP_SPINCOUNT")) {
    results["openmp_wait_policy"] = std::string("GOMP_SPINCOUNT=") + spins;
  }
}

Json memory_budget_json(const RunControl& control, std::size_t max_terms, std::size_t cuts,
                        double discarded) {
  return {{"limit_bytes", *control.memory_limit_bytes},
          {"max_terms", max_terms},
          {"auto_truncate", control.auto_truncate},
          {"truncations", cuts},
          {"discarded_weight", discarded}};
}

/// The results JSON to --out (atomically) or stdout.
void write_results(const Json& results, const RunControl& control) {
  const std::string text = results.dump(2) + "\n";
  if (control.out_path) {
    io::write_file_atomically(*control.out_path, text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
}

/// "0.5" or "0.5+0.25i": a value of the sweep's text lines.
std::string format_value(Complex v) {
  char text[64];
  if (v.imag() == 0.0) {
    std::snprintf(text, sizeof text, "%.12g", v.real());
  } else {
    std::snprintf(text, sizeof text, "%.12g%+.12gi", v.real(), v.imag());
  }
  return text;
}

/// The SweepGradient of every "gradient" parameter (io::Task::gradient): for each column, the
/// LayerDerivative of every layer whose gate fields name the parameter — the layer rebuilt with those
/// fields set to the argument (several fields of one gate, as pauli_channel's px and pz both "p", move
/// together: the transfer stays affine along that line) — at the column's value (docs/cli.md, "Sweeps").
std::vector<SweepGradient> sweep_gradients(const io::Task& task) {
  std::vector<SweepGradient> gradients;
  const std::size_t K = task.sweep.columns();
  for (const std::string& name : task.gradient) {
    const auto found = std::find(task.sweep.names.begin(), task.sweep.names.end(), name);
    if (found == task.sweep.names.end())
      throw BadInput("gradient: \"" + name + "\" is not a parameter of the sweep");
    if (std::any_of(gradients.begin(), gradients.end(),
                    [&](const SweepGradient& g) { return g.name == name; }))
      throw BadInput("gradient: \"" + name + "\" is named twice");
    const std::vector<double>& values =
        task.sweep.values[static_cast<std::size_t>(found - task.sweep.names.begin())];
    std::map<std::size_t, std::vector<std::string>> layers;  // layer → its fields naming the parameter
    for (const io::SweepBinding& binding : task.sweep_bindings) {
      if (binding.parameter != name) continue;
      if (binding.field == "gamma") {
        throw BadInput(
            "gradient: \"" + name + "\" sets amplitude_damping's gamma (layer " +
            std::to_string(binding.channel) +
            "), whose transfer (sqrt(1 - gamma)) is not affine in gamma: no exact gradient is taken there");
      }
      layers[binding.channel].push_back(binding.field);
    }
    if (layers.empty()) {
      throw BadInput(
          "gradient: no gate field names \"" + name +
          "\" (a gradient needs the gates that use the parameter; a qasm_file's params do not name them)");
    }
    SweepGradient gradient{name, std::vector<std::vector<LayerDerivative>>(K)};
    for (std::size_t k = 0; k < K; ++k) {
      for (const auto& [layer, fields] : layers) {
        const Channel& at = task.sweep_circuits[k].at(layer);
        const auto make = [&](double argument) { return io::with_gate_fields(at, fields, argument); };
        // A rotation's only field is its angle; every other field is a strength on which the transfer is
        // affine.
        const bool angle = fields.front() == "theta";
        try {
          gradient.derivatives[k].push_back(sweep_derivative(layer, make, values[k], angle));
        } catch (const std::invalid_argument& e) {
          throw BadInput("gradient \"" + name + "\", sweep column " + std::to_string(k) + ", layer " +
                         std::to_string(layer) + ": " + e.what());
        }
      }
    }
    gradients.push_back(std::move(gradient));
  }
  return gradients;
}

/// A task with a sweep (io::Task::sweep): each observable through propagate_sweep, all K columns in one
/// propagation (docs/cli.md, "Sweeps"). What a sweep cannot honour is refused, never ignored.
int execute_sweep(const RunSpec& spec, const RunControl& control) {
  const io::Task& task = spec.task;
  const std::size_t K = task.sweep.columns();
  const auto refuse = [](const std::string& what) {
    throw BadInput(what + ": a sweep runs in one process on the CPU, without checkpoints");
  };
  if (control.launch != nullptr && control.launch->distributed())
    refuse("mpirun -np " + std::to_string(control.launch->size()));
  if (task.partitions > 1)
    refuse(std::to_string(task.partitions) + " partitions (--partitions or run.partitions)");
  if (task.partition_rows != io::TaskPartitionRows{})
    refuse("partition rows (--partition-rows or run.partition_rows)");
  if (task.route_orbits_from) refuse("orbit routing (--route-orbits-from or run.route_orbits_from)");
  if (task.nccl) refuse("NCCL (--nccl or run.nccl)");
  if (task.device != "cpu" && task.device != "auto")
    refuse("device " + task.device + " (--device or run.device)");
  if (control.checkpoint_path) refuse("--checkpoint");
  if (control.every > 0) refuse("--every");
  if (control.resume_path) refuse("--resume");
  if (task.sweep_circuits.size() != K || K == 0)
    throw BadInput(spec.source + ": the sweep lists " + std::to_string(K) + " columns but the task has " +
                   std::to_string(task.sweep_circuits.size()) + " column circuits");
  const ProductState state = task_state(task);
  auto make_sum = [&](const io::NamedObservable& observable) { return observable_sum(task, observable); };
  for (const io::NamedObservable& observable : task.observables) make_sum(observable);
  const std::vector<SweepGradient> gradients = sweep_gradients(task);
  const std::size_t G = gradients.size();

  const int threads = task.threads == 0 ? available_cpus() : task.threads;
  PropagateOptions options;
  options.direction = task.direction;
  options.truncation = task.truncation.policy();
  options.threads = threads;
  options.device = -1;
  options.keep_layer_records = false;
  options.auto_truncate = control.auto_truncate;
  std::function<void(const LayerRecord&)> on_layer;
  options.on_layer = [&](const LayerRecord& record) { on_layer(record); };
  options.should_stop = [](std::size_t) { return g_signal.load() != 0; };
  // The memory limit and the guard as an ordinary run sets them (run/orchestrate.h), a term holding K
  // coefficients (run/memory_budget.h: sweep_bytes_per_term).
  const std::string limit_name = "--memory-limit";
  std::size_t baseline = 0;
  if (control.memory_limit_bytes) {
    baseline = resident_bytes();
    check_budget_room(*control.memory_limit_bytes, baseline, limit_name);
  }
  HostAllowance guard;
  if (control.memory_guard) {
    guard = control.memory_guard_bytes
                ? HostAllowance{*control.memory_guard_bytes, "the memory guard's allowance"}
                : host_allowance_now();
  }
  bool complex_transfer = false;
  for (const Circuit& column : task.sweep_circuits) {
    for (const Channel& channel : column)
      complex_transfer = complex_transfer || channel.has_complex_transfer();
  }

  SignalScope signals;
  Progress progress(!control.quiet, task.circuit.size(), task.observables.size());
  Trace trace(control.trace_path);
  const io::NamedObservable* current = nullptr;
  const FaultInjection fault = fault_injection();
  on_layer = [&](const LayerRecord& record) {
    progress.update(record);
    if (trace.enabled()) trace.add(current->name, record);
    if (fault.signal != 0 && record.application_index + 1 == fault.layer) ::raise(fault.signal);
  };
  const auto start = Clock::now();

  Json observables = Json::object();
  std::vector<std::vector<Complex>> values;
  std::vector<double> discarded(K, 0.0);
  std::size_t total_final = 0, peak = 0, budget_cuts = 0, max_terms_used = 0;
  double budget_discarded = 0.0;
  for (std::size_t i = 0; i < task.observables.size(); ++i) {
    const io::NamedObservable& observable = task.observables[i];
    const AnyPauliSum sum = make_sum(observable);
    current = &observable;
    progress.begin_observable(i, 0);
    const bool complex_coefficients = sum.is_complex() || complex_transfer;
    const std::size_t bytes_per_term = sweep_bytes_per_term(sum.width(), complex_coefficients, K * (1 + G));
    if (control.memory_limit_bytes)
      options.max_terms = max_terms_used =
          std::max<std::size_t>(1, (*control.memory_limit_bytes - baseline) / bytes_per_term);
    if (guard.bytes > 0) options.memory_guard = {guard.bytes, bytes_per_term, guard.source};
    AnySweepSum result;
    const SweepStats sweep = propagate_sweep(sum, task.sweep_circuits, options, result, gradients);
    const PropagationStats& stats = sweep.stats;
    if (stats.stopped) {
      trace.write();
      std::fprintf(stderr,
                   "\npaulistrings: interrupted after layer %zu of %zu (a sweep keeps no checkpoint)\n",
                   stats.layers_done, task.circuit.size());
      return kExitInterrupted;
    }
    // Columns: K values, then K derivatives per gradient parameter (column K·(1 + g) + k); the discarded
    // weight in the same layout.
    values.push_back(result.expectations(state));
    const auto part = [&](const auto& all, std::size_t block) {
      using Item = typename std::decay_t<decltype(all)>::value_type;
      return std::vector<Item>(all.begin() + static_cast<std::ptrdiff_t>(block * K),
                               all.begin() + static_cast<std::ptrdiff_t>((block + 1) * K));
    };
    const auto numbers = [](const std::vector<Complex>& column_values) {
      Json list = Json::array();
      for (const Complex& v : column_values) list.push_back(complex_value(v));
      return list;
    };
    observables[observable.name] = {{"values", numbers(part(values.back(), 0))},
                                    {"final_terms", stats.final_terms},
                                    {"peak_terms", stats.peak_terms},
                                    {"discarded_weight", part(sweep.discarded_weight, 0)}};
    if (G > 0) {
      Json derivatives = Json::object(), derivative_discarded = Json::object();
      for (std::size_t g = 0; g < G; ++g) {
        derivatives[gradients[g].name] = numbers(part(values.back(), 1 + g));
        derivative_discarded[gradients[g].name] = part(sweep.discarded_weight, 1 + g);
      }
      observables[observable.name]["gradients"] = std::move(derivatives);
      observables[observable.name]["gradient_discarded_weight"] = std::move(derivative_discarded);
    }
    if (control.memory_limit_bytes) {
      observables[observable.name]["budget_truncations"] = stats.budget_truncations;
      observables[observable.name]["budget_discarded_weight"] = stats.budget_discarded_weight;
    }
    for (std::size_t k = 0; k < K; ++k) discarded[k] += sweep.discarded_weight[k];
    total_final += stats.final_terms;
    peak = std::max(peak, stats.peak_terms);
    budget_cuts += stats.budget_truncations;
    budget_discarded += stats.budget_discarded_weight;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();

  Json sweep = Json::object();
  for (std::size_t p = 0; p < task.sweep.names.size(); ++p) sweep[task.sweep.names[p]] = task.sweep.values[p];
  Json results = results_head(spec);
  results["sweep"] = sweep;
  results["columns"] = K;
  add_totals(results, std::move(observables), total_final, peak, discarded, wall);
  results["engine"] = "cpu";
  results["device"] = "cpu";
  results["threads"] = threads;
  results["partitions"] = 1;
  if (control.memory_limit_bytes)
    results["memory_budget"] = memory_budget_json(control, max_terms_used, budget_cuts, budget_discarded);
  trace.write();
  if (!control.quiet) {
    // One line per column: its parameter values and every observable's value.
    for (std::size_t k = 0; k < K; ++k) {
      std::string line;
      for (std::size_t p = 0; p < task.sweep.names.size(); ++p) {
        char value[48];
        std::snprintf(value, sizeof value, "%.10g", task.sweep.values[p][k]);
        line += (line.empty() ? "" : " ") + task.sweep.names[p] + "=" + value;
      }
      line += ":";
      for (std::size_t i = 0; i < task.observables.size(); ++i) {
        line += " <" + task.observables[i].name + ">=" + format_value(values[i][k]);
        for (std::size_t g = 0; g < G; ++g) {
          line += " d<" + task.observables[i].name + ">/d" + gradients[g].name + "=" +
                  format_value(values[i][K * (1 + g) + k]);
        }
      }
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  write_results(results, control);
  return kExitOk;
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
  const int device = partitions > 1 ? -1 : resolve_device(task.device);
  if (partitions == 1 && task.partition_rows != io::TaskPartitionRows{}) {
    throw BadInput("partition rows (--partition-rows or run.partition_rows) need a partitioned run "
                   "(--partitions N, run.partitions or mpirun -np N)");
  }
  if (partitions == 1 && task.route_orbits_from) {
    throw BadInput("orbit routing (--route-orbits-from or run.route_orbits_from) is for partitioned runs "
                   "(--partitions N, run.partitions or mpirun -np N)");
  }
  if (task.nccl && (launch == nullptr || devices.empty())) {
    throw BadInput("NCCL (--nccl or run.nccl) swaps rows between GPU ranks: run under mpirun with --device gpu | N");
  }
  const std::vector<std::vector<int>> cpu_lists =
      launch == nullptr && devices.empty() ? numa_partition_lists(numa_cpu_lists(), partitions)
                                           : std::vector<std::vector<int>>{};
  if (control.every > 0 && !control.checkpoint_path) throw BadInput("--every needs --checkpoint FILE");
  const ProductState state = task_state(task);

  const int threads = task.threads == 0 ? available_cpus() : task.threads;
  const bool tracing = writer && control.trace_path.has_value();
  // Set once the progress bar and the trace exist (after the ranks have joined).
  std::function<void(const LayerRecord&)> on_layer;

  RunOptions options;
  options.propagate.direction = task.direction;
  options.propagate.truncation = task.truncation.policy();
  options.propagate.threads = threads;
  options.propagate.device = device;
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
    if (fault.signal != 0 && !fault.mid_layer && record.application_index + 1 == fault.layer) ::raise(fault.signal);
  };
  // A signal stops a long layer at once (the CPU engine polls this between cosets); the run then keeps
  // the state it had when the segment began (run/orchestrate.h).
  run.set_layer_interrupt([&] {
    if (fault.signal != 0 && fault.mid_layer && layers_done_now.load() == fault.layer && !fault_raised.exchange(true))
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
          result.abandoned_layer
              ? "interrupted inside layer " + std::to_string(layers_done_now.load() + 1) + " of " +
                    std::to_string(task.circuit.size())
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
        std::fprintf(stderr,
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
  results["engine"] = device >= 0 || !devices.empty() ? "gpu" : "cpu";
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
