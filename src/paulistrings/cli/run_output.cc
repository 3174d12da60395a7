// The command line's run output and shared pieces: see run_output.h.

#include "paulistrings/cli/run_output.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "paulistrings/core/text.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/observable_spec.h"
#include "paulistrings/run/memory_budget.h"

namespace paulistrings::cli::detail {

extern "C" void remember_signal(int signal_number) { g_signal.store(signal_number); }

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

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

Json complex_value(Complex v) {
  if (v.imag() == 0.0) return v.real();
  return Json::array({v.real(), v.imag()});
}

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

}  // namespace paulistrings::cli::detail
