#pragma once
// The command line's run output and the pieces both of its executions share (runner.cc: ordinary runs,
// runner_sweep.cc: sweeps): the signal flag, the progress line, the trace, the results JSON, the
// fault-injection test hook. Internal to cli/.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <signal.h>

#include "paulistrings/cli/runner.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/task.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/memory_budget.h"

namespace paulistrings::cli::detail {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

/// The last SIGINT/SIGTERM received while a SignalScope was alive (0: none).
inline std::atomic<int> g_signal{0};
extern "C" void remember_signal(int signal_number);

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

std::string format_seconds(double s);

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
    int used =
        std::snprintf(line, sizeof line, "%s,%zu,%zu,%s,%zu,%zu,%.17g,%.17g,%llu,%zu,",
                      row.observable.c_str(), r.application_index, r.circuit_index, r.gate_name.c_str(),
                      r.terms_in, r.terms_out, r.discarded_weight, r.budget_discarded_weight,
                      static_cast<unsigned long long>(r.wall_ns), row.resident_bytes);
    used = std::max(0, std::min(used, static_cast<int>(sizeof line) - 1));
    if (row.partition) {
      const PartitionLayerStats& p = *row.partition;
      std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), "%d,%zu,%zu,%zu,%zu,%.6g\n",
                    p.remote ? 1 : 0, p.partners, p.rows_exported, p.bytes_exported, p.max_terms,
                    p.imbalance);
    } else {
      std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), ",,,,,\n");
    }
    return line;
  }

  std::optional<std::string> path_;
  bool json_lines_ = false;
  std::vector<Row> rows_;
};

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL);
Json complex_value(Complex v);

/// Test hook: PAULISTRINGS_FAULT="SIGNAL@LAYER" (SIGKILL, SIGINT or SIGTERM) makes the process
/// signal itself right after that layer, so tests can kill a run mid-way deterministically;
/// "SIGNAL@LAYER:mid" signals inside the next layer instead (at its first interrupt poll).
struct FaultInjection {
  int signal = 0;
  std::size_t layer = 0;
  bool mid_layer = false;
};

FaultInjection fault_injection();

/// The task's product state (BadInput when it does not parse).
ProductState task_state(const io::Task& task);

/// One of the task's observables as a sum (BadInput naming it when a label is bad).
AnyPauliSum observable_sum(const io::Task& task, const io::NamedObservable& observable);

/// The results' first members: what ran (source, qubits, layers, measurements, direction, state, truncation).
Json results_head(const RunSpec& spec);

/// The results' per-observable members and the run's totals, time, memory and (wait_policy.h) the OpenMP
/// wait policy the process started with.
void add_totals(Json& results, Json observables, std::size_t final_terms, std::size_t peak, Json discarded,
                double wall);

Json memory_budget_json(const RunControl& control, std::size_t max_terms, std::size_t cuts, double discarded);

/// The results JSON to --out (atomically) or stdout.
void write_results(const Json& results, const RunControl& control);

/// A task with a sweep (io::Task::sweep): each observable through propagate_sweep (runner_sweep.cc).
int execute_sweep(const RunSpec& spec, const RunControl& control);

}  // namespace paulistrings::cli::detail
