// The command line's sweeps (docs/cli.md "Sweeps"): a task with a sweep through propagate_sweep, its
// gradients, checkpoints and resume (run/sweep_checkpoints.h), the text lines and the results JSON
// (run_output.h).

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "paulistrings/cli/launch.h"
#include "paulistrings/cli/run_output.h"
#include "paulistrings/run/checkpoints.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/sweep_checkpoints.h"
#include "paulistrings/sweep/propagate_sweep.h"

namespace paulistrings::cli::detail {

namespace {

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
}  // namespace

int execute_sweep(const RunSpec& spec, const RunControl& control) {
  const io::Task& task = spec.task;
  const std::size_t K = task.sweep.columns();
  const auto refuse = [](const std::string& what) {
    throw BadInput(what + ": a sweep runs in one process on the CPU");
  };
  if (control.launch != nullptr && control.launch->distributed())
    refuse("mpirun -np " + std::to_string(control.launch->size()));
  if (task.partitions > 1)
    refuse(std::to_string(task.partitions) + " partitions (--partitions or run.partitions)");
  if (task.partition_rows != io::TaskPartitionRows{})
    refuse("partition rows (--partition-rows or run.partition_rows)");
  if (task.route_orbits_from) refuse("orbit routing (--route-orbits-from or run.route_orbits_from)");
  if (task.nccl) refuse("NCCL (--nccl or run.nccl)");
  if (task.engine == "column") refuse("the column engine (--engine column or run.engine)");
  if (task.device != "cpu" && task.device != "auto")
    refuse("device " + task.device + " (--device or run.device)");
  if (control.every > 0 && !control.checkpoint_path) throw BadInput("--every needs --checkpoint FILE");
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
  // What must match to resume: the ordinary run's fingerprint of each observable (direction, truncation,
  // state, observable) with every column's circuit and the gradients (run/sweep_checkpoints.h).
  const std::uint64_t circuit_fingerprint = sweep_circuit_fingerprint(task.sweep_circuits);
  std::vector<std::uint64_t> fingerprints;
  for (std::size_t i = 0; i < task.observables.size(); ++i)
    fingerprints.push_back(sweep_task_fingerprint(task_fingerprint(task, i), task.sweep_circuits, gradients));
  std::optional<SweepResumePoint> resume;
  if (control.resume_path) {
    try {
      resume = load_sweep_resume(*control.resume_path, task.sweep_circuits, K * (1 + G), task.num_qubits,
                                 fingerprints,
                                 "sweep (circuit, sweep values, gradients, direction, truncation, state or "
                                 "observable differ)");
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw BadInput(e.what());
    }
  }
  const std::size_t resumed_from = resume ? resume->state.layers_done : 0;

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
    const bool resumed = resume && resume->match == i;
    progress.begin_observable(i, resumed ? resumed_from : 0);
    const bool complex_coefficients = sweep_is_complex(sum, task.sweep_circuits, gradients);
    const std::size_t bytes_per_term = sweep_bytes_per_term(sum.width(), complex_coefficients, K * (1 + G));
    if (control.memory_limit_bytes) {
      options.max_terms = max_terms_used = budget_terms(*control.memory_limit_bytes, baseline, sum.width(),
                                                        complex_coefficients, limit_name, K * (1 + G));
    }
    if (guard.bytes > 0) options.memory_guard = {guard.bytes, bytes_per_term, guard.source};
    SweepRunOptions run;
    run.propagate = options;
    // Not for observables before the resumed one: that would replace the checkpoint being resumed.
    if (control.checkpoint_path && !(resume && i < resume->match)) {
      run.checkpoint = *control.checkpoint_path;
      run.checkpoint_every = control.every;
    }
    run.circuit_fingerprint = circuit_fingerprint;
    run.task_fingerprint = fingerprints[i];
    run.interrupted = [] { return g_signal.load() != 0; };
    SweepState reached;
    if (resumed) reached = std::move(resume->state);
    const SweepRunResult outcome =
        run_sweep_segments(sum, task.sweep_circuits, gradients, run, reached, resumed);
    const SweepStats& sweep = outcome.stats;
    const PropagationStats& stats = sweep.stats;
    if (outcome.interrupted) {
      trace.write();
      const std::string when = "interrupted after layer " + std::to_string(reached.layers_done) + " of " +
                               std::to_string(task.circuit.size());
      if (outcome.checkpoint_written) {
        std::fprintf(
            stderr,
            "\npaulistrings: %s; checkpoint after layer %zu written to %s (continue with --resume %s)\n",
            when.c_str(), reached.layers_done, control.checkpoint_path->c_str(),
            control.checkpoint_path->c_str());
      } else {
        std::fprintf(stderr, "\npaulistrings: %s (no --checkpoint given)\n", when.c_str());
      }
      return kExitInterrupted;
    }
    const AnySweepSum& result = reached.sum;
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
                                    {"discarded_weight", part(sweep.discarded_weight, 0)},
                                    {"column_groups", sweep.groups},
                                    {"column_splits", sweep.splits}};
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
  if (resume) results["resumed_from_layer"] = resumed_from;
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

}  // namespace paulistrings::cli::detail
