// The command line's execution core (see runner.h): observables one after another through the
// shared propagate() driver, with progress, trace, checkpoints on a schedule and on SIGINT/SIGTERM,
// resume, and the memory budget mapped to the driver's term budget.
#include "paulistrings/cli/runner.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <stdexcept>

#include "paulistrings/cli/launch.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/propagate.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/readout/product_state.h"

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

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

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

/// Throws BadInput when the limit leaves no room above what the process already holds.
void check_budget_room(std::size_t limit, std::size_t baseline) {
  if (limit <= baseline + (std::size_t{1} << 20)) {
    throw BadInput("--memory-limit " + std::to_string(limit) +
                   " bytes is below what the process already uses (" + std::to_string(baseline) + " bytes)");
  }
}

/// Terms the budget allows: the limit minus what the process already holds, over the bytes a
/// term costs in the engine (key + coefficient, times the engine's working-set factor).
std::size_t budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients) {
  // Buckets plus a layer's output (the driver caps a layer at 2× the budget), vector growth slack
  // and the export copy: measured peak ≈ 3–4 × (key + coefficient) bytes per budget term.
  constexpr double kWorkingSetFactor = 4.0;
  const double per_term = (16.0 * width + (complex_coefficients ? 16.0 : 8.0)) * kWorkingSetFactor;
  check_budget_room(limit, baseline);
  return std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(limit - baseline) / per_term));
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
    fault.layer = std::stoul(layer);
  } catch (const std::exception&) {
    fault.signal = 0;
  }
  return fault;
}

}  // namespace

std::size_t parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0)
    throw BadInput("bad size '" + text + "': expected a number with an optional K, M or G suffix");
  std::string suffix = text.substr(digits);
  if (suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b' || suffix[1] == 'i')) suffix.pop_back();
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B" || suffix == "b") {
    shift = 0;
  } else if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g") {
    shift = 30;
  } else if (suffix == "T" || suffix == "t") {
    shift = 40;
  } else {
    throw BadInput("bad size '" + text + "': expected a number with an optional K, M or G suffix");
  }
  if (digits > 15) throw BadInput("bad size '" + text + "': too large");
  const std::size_t value = std::stoull(text.substr(0, digits));
  if (shift > 0 && value > (~std::size_t{0} >> shift)) throw BadInput("bad size '" + text + "': too large");
  return value << shift;
}

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
  const int ordinal = device == "gpu" ? 0 : std::stoi(device);
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
    const int rank = local != nullptr ? std::atoi(local) : launch->rank();
    return {rank % count};
  }
  std::vector<int> devices(partitions);
  for (std::size_t r = 0; r < partitions; ++r) devices[r] = static_cast<int>(r % static_cast<std::size_t>(count));
  return devices;
}

/// The checkpoint to resume from (--resume PATH): the file at PATH; or, for a checkpoint written in K parts
/// (io::checkpoint_parts), in one process the K parts added, and as rank r of R under mpirun the parts
/// j ≡ r (mod R) added — an empty sum where R > K — which the run then routes to their owners, so K and
/// R need not match. `in_parts` says which.
io::Checkpoint load_resume(const std::string& path, const Launch* launch, bool& in_parts) {
  try {
    const std::size_t parts = io::checkpoint_parts(path);
    in_parts = parts > 0;
    if (parts == 0) return io::load_checkpoint(path);
    const std::size_t ranks = launch != nullptr ? static_cast<std::size_t>(launch->size()) : 1;
    const std::size_t rank = launch != nullptr ? static_cast<std::size_t>(launch->rank()) : 0;
    return io::load_checkpoint_share(path, parts, rank, ranks);
  } catch (const std::invalid_argument& e) {
    throw BadInput(e.what());
  } catch (const std::runtime_error& e) {
    throw BadInput(e.what());
  }
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
  const ProductState state = [&] {
    try {
      return ProductState::parse(task.state, task.num_qubits);
    } catch (const std::invalid_argument& e) {
      throw BadInput(std::string("state: ") + e.what());
    }
  }();

  std::optional<io::Checkpoint> resume;
  std::size_t resume_index = 0;
  bool resume_in_parts = false;  // the checkpoint was written in parts (by the ranks of a distributed run)
  if (control.resume_path) {
    resume = load_resume(*control.resume_path, launch, resume_in_parts);
    bool matched = false;
    for (std::size_t i = 0; i < task.observables.size() && !matched; ++i) {
      if (resume->task_fingerprint == task_fingerprint(task, i)) {
        matched = true;
        resume_index = i;
      }
    }
    if (!matched || resume->circuit_fingerprint != task.circuit.fingerprint() ||
        resume->sum.num_qubits() != task.num_qubits || resume->layers_done > task.circuit.size()) {
      throw BadInput(
          "checkpoint " + *control.resume_path +
          " belongs to a different task (circuit, direction, truncation, state or observable differ); "
          "refusing to resume from it");
    }
  }

  auto make_sum = [&](const io::NamedObservable& observable) {
    try {
      return io::make_observable(observable.terms, task.num_qubits);
    } catch (const std::invalid_argument& e) {
      throw BadInput("observable '" + observable.name + "': " + e.what());
    }
  };
  // Every observable is checked before the first one runs, so that bad input ends every rank of a
  // distributed launch before the run (where the ranks agree on it), not in the middle of it.
  for (const io::NamedObservable& observable : task.observables) make_sum(observable);
  std::size_t baseline_rss = resident_bytes();
  if (control.memory_limit_bytes) check_budget_room(*control.memory_limit_bytes, baseline_rss);

  Transport* const transport = launch != nullptr ? &launch->join() : nullptr;
  if (transport != nullptr && resume_in_parts) {
    // Each rank read its own parts: they must all be of the same observable, after the same layer (a run
    // stopped while its ranks were writing leaves parts of two checkpoints).
    std::uint64_t seen[4] = {resume->layers_done, ~resume->layers_done, resume_index, ~std::uint64_t{resume_index}};
    transport->all_reduce_max(std::span<std::uint64_t>(seen, 4));
    if (seen[0] != ~seen[1] || seen[2] != ~seen[3]) {
      launch->note_shared_ending();
      throw BadInput("checkpoint " + *control.resume_path +
                     ": its parts were written after different layers or for different observables (a run stopped "
                     "while writing them?); refusing to resume from it");
    }
  }
  if (transport != nullptr && control.memory_limit_bytes) {
    // The term budget is part of the run's shape every rank must agree on, and each rank measured its
    // own baseline: all take the largest (every rank passed the room check with its own, so it passes).
    std::uint64_t largest = baseline_rss;
    transport->all_reduce_max(std::span<std::uint64_t>(&largest, 1));
    baseline_rss = largest;
  }
  const int threads = task.threads == 0 ? available_cpus() : task.threads;
  SignalScope signals;
  const FaultInjection fault = fault_injection();
  Progress progress(!control.quiet && writer, task.circuit.size(), task.observables.size());
  Trace trace(writer ? control.trace_path : std::nullopt);
  const auto start = Clock::now();

  Json observables = Json::object();
  std::size_t total_final = 0, peak = 0, budget_cuts = 0, max_terms_used = 0;
  double discarded = 0.0, budget_discarded = 0.0;
  for (std::size_t i = 0; i < task.observables.size(); ++i) {
    const io::NamedObservable& observable = task.observables[i];
    AnyPauliSum sum = make_sum(observable);
    PropagateOptions options;
    options.direction = task.direction;
    options.truncation = task.truncation.policy();
    options.threads = threads;
    options.device = device;
    // Partition statistics per layer are kept only for the trace (the layer records come with them).
    options.keep_layer_records = partitions > 1 && trace.enabled();
    options.auto_truncate = control.auto_truncate;
    if (resume && i == resume_index) {
      sum = resume->sum;
      options.start_layer = resume->layers_done;
    }
    if (control.memory_limit_bytes) {
      bool complex_coefficients = sum.is_complex();
      for (const Channel& c : task.circuit)
        complex_coefficients = complex_coefficients || c.has_complex_transfer();
      options.max_terms =
          budget_terms(*control.memory_limit_bytes, baseline_rss, sum.width(), complex_coefficients);
      max_terms_used = options.max_terms;
    }
    progress.begin_observable(i, options.start_layer);
    std::atomic<std::size_t> layers_done_now{options.start_layer};
    std::atomic<bool> fault_raised{false};
    options.on_layer = [&](const LayerRecord& record) {
      progress.update(record);
      if (trace.enabled()) trace.add(observable.name, record);
      layers_done_now.store(record.application_index + 1);
      if (fault.signal != 0 && !fault.mid_layer && record.application_index + 1 == fault.layer) ::raise(fault.signal);
    };
    // A signal stops a long layer at once (the CPU engine polls this between cosets); the run then keeps
    // the state it had before the layer.
    options.interrupt = [&] {
      if (fault.signal != 0 && fault.mid_layer && layers_done_now.load() == fault.layer && !fault_raised.exchange(true))
        ::raise(fault.signal);
      return g_signal.load() != 0;
    };
    const bool checkpointing = control.checkpoint_path.has_value() && (!resume || i >= resume_index);
    options.should_stop = [&](std::size_t done) {
      return g_signal.load() != 0 || (checkpointing && control.every > 0 && done % control.every == 0);
    };
    std::vector<PartitionStats> partition_stats;  // one per propagate call (checkpoint segments)
    // Under mpirun every rank passes the whole observable first; a rank resuming from a checkpoint in parts
    // passes the parts it read (the run routes each term to its owner); after a checkpoint segment each
    // rank holds exactly its own share.
    PartitionInput input = transport != nullptr && resume && i == resume_index && resume_in_parts
                               ? PartitionInput::scattered
                               : PartitionInput::replicated;
    std::size_t observable_peak = 0;
    double observable_discarded = 0.0;
    std::size_t observable_cuts = 0;
    double observable_budget_discarded = 0.0;
    std::size_t final_terms = 0;
    bool abandoned_layer = false;  // a signal stopped the run inside a layer
    std::size_t saved_layers = SIZE_MAX;  // layers done at the last checkpoint this run wrote
    while (true) {
      PropagationStats stats;
      if (partitions > 1) {
        PartitionOptions partition;
        partition.partitions = task.partitions;
        partition.devices = devices;
        partition.cpu_lists = cpu_lists;  // in-process CPU partitions: NUMA nodes (empty otherwise)
        // Distributed: partitions = ranks. The result stays distributed: each rank keeps its share, writes
        // it as its part of a checkpoint, and the read-out below adds the shares' expectation values.
        // In-process partitions gather the result for a checkpoint (one file).
        const io::TaskPartitionRows& rows = task.partition_rows;
        partition.row_policy = parse_row_policy(rows.policy);
        if (rows.seed) partition.row_seed = *rows.seed;
        partition.excluded_qubits = rows.excluded_qubits;
        partition.cut_blocks = rows.blocks;
        partition.cut_basis = rows.basis;
        partition.use_nccl = task.nccl;
        if (task.route_orbits_from) partition.route_orbits_from = static_cast<std::size_t>(*task.route_orbits_from);
        partition.transport = transport;
        partition.input = input;
        partition.result = checkpointing && transport == nullptr ? PartitionResult::gather : PartitionResult::local;
        PartitionedPropagation run = [&] {
          try {
            return propagate_partitioned(sum, task.circuit, options, partition);
          } catch (...) {
            // The driver agrees on errors: every rank throws here together and may end normally.
            if (launch != nullptr) launch->note_shared_ending();
            throw;
          }
        }();
        stats = std::move(run.stats);
        if (trace.enabled()) trace.attach_partitions(observable.name, run.partitions.layers);
        partition_stats.push_back(std::move(run.partitions));
      } else {
        try {
          stats = propagate(sum, task.circuit, options);
        } catch (const LayerInterrupted&) {
          // Stopped inside a layer: `sum` still holds the state after options.start_layer layers.
          stats = PropagationStats{};
          stats.layers_done = options.start_layer;
          stats.stopped = true;
          stats.final_terms = sum.size();
          abandoned_layer = true;
        }
      }
      observable_peak = std::max(observable_peak, stats.peak_terms);
      final_terms = stats.final_terms;  // over every partition (a local result holds only this rank's)
      observable_discarded += stats.discarded_weight;
      observable_cuts += stats.budget_truncations;
      observable_budget_discarded += stats.budget_discarded_weight;
      // A signal during the last layer is an interruption too (not a completed run), except under mpirun,
      // where the ranks would have to agree on it first.
      if (!stats.stopped && (transport != nullptr || g_signal.load() == 0)) break;
      if (transport != nullptr) input = PartitionInput::share;
      // After an abandoned layer the state is the one last saved when this segment began from a checkpoint.
      const bool already_saved = abandoned_layer && saved_layers == stats.layers_done;
      if (checkpointing && !already_saved) {
        // Saved from the live sum (a Checkpoint would copy it).
        const auto save = [&](const std::filesystem::path& path) {
          io::save_checkpoint(path, task.circuit.fingerprint(), task_fingerprint(task, i), stats.layers_done, sum);
        };
        if (transport != nullptr) {
          // Every rank writes its share; once all are written, rank 0 removes what an earlier run left at
          // the path (the single file, parts of another rank count). A rank failing to write ends the job
          // (Launch::finish: MPI_Abort), as any failure of one rank after the run began.
          save(io::checkpoint_part_path(*control.checkpoint_path, static_cast<std::size_t>(launch->rank()), partitions));
          std::uint64_t written = 1;
          transport->all_reduce_max(std::span<std::uint64_t>(&written, 1));
          if (writer) io::remove_other_checkpoints(*control.checkpoint_path, partitions);
        } else if (writer) {
          save(*control.checkpoint_path);
          io::remove_other_checkpoints(*control.checkpoint_path, 0);
        }
        saved_layers = stats.layers_done;
      }
      bool interrupted = g_signal.load() != 0;
      if (transport != nullptr) {
        // Every rank stopped at this layer (the stop vote is shared), but maybe only some got the signal:
        // all must leave or all go on.
        std::uint64_t any = interrupted ? 1 : 0;
        transport->all_reduce_max(std::span<std::uint64_t>(&any, 1));
        interrupted = any != 0;
      }
      if (interrupted) {
        if (launch != nullptr) launch->note_shared_ending();
        trace.write();
        const std::string when =
            abandoned_layer ? "interrupted inside layer " + std::to_string(layers_done_now.load() + 1) + " of " +
                                  std::to_string(task.circuit.size())
                            : "interrupted after layer " + std::to_string(stats.layers_done) + " of " +
                                  std::to_string(task.circuit.size());
        if (writer && checkpointing) {  // rank 0 tells, once for the run
          const std::string where =
              transport != nullptr ? io::checkpoint_part_path(*control.checkpoint_path, 0, partitions).string() +
                                         " … " +
                                         io::checkpoint_part_path(*control.checkpoint_path, partitions - 1, partitions)
                                             .string() +
                                         " (one part per rank)"
                                   : *control.checkpoint_path;
          std::fprintf(stderr, "\npaulistrings: %s; checkpoint after layer %zu written to %s (continue with --resume %s)\n",
                       when.c_str(), stats.layers_done, where.c_str(), control.checkpoint_path->c_str());
        } else if (writer) {
          std::fprintf(stderr, "\npaulistrings: %s (no --checkpoint given)\n", when.c_str());
        }
        return kExitInterrupted;
      }
      options.start_layer = stats.layers_done;
    }
    Complex value = sum.visit([&](const auto& typed) -> Complex { return state.expectation(typed); });
    if (transport != nullptr) {
      // Each rank read out its own share: ⟨O⟩ is the sum of the shares' values (added in rank order).
      double parts[2] = {value.real(), value.imag()};
      transport->all_reduce_sum(std::span<double>(parts, 2));
      value = Complex(parts[0], parts[1]);
    }
    observables[observable.name] = {{"value", complex_value(value)},
                                    {"final_terms", final_terms},
                                    {"peak_terms", observable_peak},
                                    {"discarded_weight", observable_discarded}};
    if (!partition_stats.empty()) {
      std::size_t remote = 0, routed = 0, exported = 0, bytes = 0;
      double imbalance = 1.0;
      std::vector<double> transport_seconds(partitions, 0.0), work_seconds(partitions, 0.0);
      for (const PartitionStats& p : partition_stats) {
        remote += p.remote_layers;
        routed += p.orbit_routed_layers;
        exported += p.rows_exported;
        bytes += p.bytes_exported;
        imbalance = std::max(imbalance, p.max_imbalance);
        for (std::size_t r = 0; r < p.transport_seconds.size() && r < partitions; ++r) {
          transport_seconds[r] += p.transport_seconds[r];
          work_seconds[r] += p.work_seconds[r];
        }
      }
      observables[observable.name]["partitions"] = {{"count", partitions},
                                                    {"transport", partition_stats.front().transport},
                                                    {"rows", partition_stats.front().rows},
                                                    {"remote_layers", remote},
                                                    {"orbit_routed_layers", routed},
                                                    {"rows_exported", exported},
                                                    {"bytes_exported", bytes},
                                                    {"max_imbalance", imbalance},
                                                    {"numa_pinned", !cpu_lists.empty()},
                                                    {"final_terms_by_partition", partition_stats.back().final_terms},
                                                    {"transport_seconds", transport_seconds},
                                                    {"work_seconds", work_seconds}};
    }
    if (control.memory_limit_bytes) {
      observables[observable.name]["budget_truncations"] = observable_cuts;
      observables[observable.name]["budget_discarded_weight"] = observable_budget_discarded;
    }
    total_final += final_terms;
    peak = std::max(peak, observable_peak);
    discarded += observable_discarded;
    budget_cuts += observable_cuts;
    budget_discarded += observable_budget_discarded;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (!writer) return kExitOk;  // every rank holds the read-out; rank 0 reports it

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
  results["observables"] = observables;
  results["final_terms"] = total_final;
  results["peak_terms"] = peak;
  results["discarded_weight"] = discarded;
  results["wall_time_s"] = wall;
  results["peak_resident_bytes"] = peak_resident_bytes();
  results["engine"] = device >= 0 || !devices.empty() ? "gpu" : "cpu";
  results["device"] = device >= 0 ? gpu::describe_device(device) : "cpu";
  results["threads"] = threads;  // per rank in a distributed run
  results["partitions"] = partitions;
  if (control.memory_limit_bytes) {
    results["memory_budget"] = {{"limit_bytes", *control.memory_limit_bytes},
                                {"max_terms", max_terms_used},
                                {"auto_truncate", control.auto_truncate},
                                {"truncations", budget_cuts},
                                {"discarded_weight", budget_discarded}};
  }
  if (resume) results["resumed_from_layer"] = resume->layers_done;
  trace.write();
  const std::string text = results.dump(2) + "\n";
  if (control.out_path) {
    io::write_file_atomically(*control.out_path, text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace paulistrings::cli
