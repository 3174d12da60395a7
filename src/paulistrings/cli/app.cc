// Argument parsing (CLI11) for `paulistrings run | kicked-ising | demo`; each builds a RunSpec for
// the runner. Bad input of any kind ends with exit code 2 and one line on stderr.
#include "paulistrings/cli/app.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/cli/launch.h"
#include "paulistrings/cli/runner.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/io/stim.h"
#include "paulistrings/io/task.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/sweep/propagate_sweep.h"

namespace paulistrings::cli {
namespace {

/// CLI11 transforms for numbers (docs/cli.md, "Numbers"): the token must be what core/text.h's strict
/// parsers accept, and goes on to CLI11 in plain form. CLI11 alone reads "-1" as 2^64 − 1 for an unsigned
/// option, "010" as 8, "0x10" as 16 and "99999999999999999999" as 2^64 − 1; a refusal here is a one-line
/// "--flag: 'token' ..." message and exit 2.
CLI::Validator count_value(std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        try {
          text = std::to_string(parse_count(text, max));
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "", "count");
}

CLI::Validator real_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          text = format_double(parse_real(text));  // 17 digits: the same double after CLI11 reads it back
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "", "real");
}

constexpr std::uint64_t kMaxInt = std::numeric_limits<int>::max();

/// Options shared by every subcommand that runs something.
struct CommonOptions {
  std::optional<std::string> out, trace, checkpoint, resume, memory_limit, host_memory, device, engine,
      column_phase;
  std::size_t every = 0;
  std::optional<int> threads;
  std::optional<std::size_t> partitions;
  std::optional<std::string> partition_rows;
  bool nccl = false;
  std::optional<std::uint64_t> route_orbits_from;
  bool no_auto_truncate = false;
  bool no_memory_guard = false;
  bool quiet = false;
};

void add_common(CLI::App& command, CommonOptions& o) {
  command.add_option("--out", o.out, "write the results JSON here instead of stdout");
  command.add_option("--trace", o.trace, "per-layer trace file (.csv, or .jsonl for JSON lines)");
  command.add_option("--threads", o.threads, "CPU threads (0 = every core allowed)")
      ->transform(count_value(kMaxInt));
  command.add_option("--device", o.device, "cpu | gpu | auto | N (GPU index)");
  command.add_option("--engine", o.engine,
                     "host engine: cpu (default, multi-threaded) | column (one thread; for many light gates "
                     "that each touch few terms; docs/design.md 7.5)");
  command.add_option(
      "--column-phase", o.column_phase,
      "on (default) | off: whether the cpu engine starts on the column engine while layers touch "
      "few terms (same results; docs/design.md 7.5)");
  command
      .add_option("--partitions", o.partitions,
                  "in-process partitions (a power of two; on GPUs with --device gpu | N)")
      ->transform(count_value());
  command.add_option("--partition-rows", o.partition_rows,
                     "rows of a partitioned run: seeded[:SEED] | exclude:QUBITS | cut:BLOCK/BLOCK/... | cutx:... "
                     "(QUBITS and BLOCK: comma-separated qubits and ranges A-B; one block per partition)");
  command.add_flag("--nccl", o.nccl, "GPU ranks under mpirun swap rows with NCCL (every rank alike)");
  command
      .add_option("--route-orbits-from", o.route_orbits_from,
                  "partitioned runs: remote dense two-qubit layers move whole orbits to one partition first "
                  "from this many terms in the largest partition (0 = always; default 8192)")
      ->transform(count_value());
  command.add_option("--checkpoint", o.checkpoint,
                     "checkpoint file, written every --every layers and on SIGINT/SIGTERM (under mpirun "
                     "one part per rank, FILE.part-R-of-K)");
  command.add_option("--every", o.every, "layers between checkpoints")->transform(count_value());
  command.add_option("--resume", o.resume, "continue the same run from this checkpoint (a file or its parts)");
  command.add_option("--memory-limit", o.memory_limit,
                     "stay under this many bytes (K/M/G/T suffixes, e.g. 1.5G)");
  command.add_flag("--no-auto-truncate", o.no_auto_truncate,
                   "with --memory-limit: stop with a message instead of truncating to fit");
  command.add_flag("--no-memory-guard", o.no_memory_guard,
                   "do not stop before a layer that could outgrow the host's memory (docs/cli.md)");
  command.add_option("--host-memory", o.host_memory,
                     "the memory guard lets the run use this many bytes (K/M/G suffixes) instead of what "
                     "the host has free at the start");
  command.add_flag("--quiet,-q", o.quiet, "no progress bar");
}

/// A byte count given to `flag` (parse_byte_size), its errors naming the flag.
std::size_t size_option(const std::string& text, const std::string& flag) {
  try {
    return parse_byte_size(text);
  } catch (const std::invalid_argument& e) {
    throw BadInput(flag + ": " + e.what());
  }
}

RunControl control_from(const CommonOptions& o) {
  RunControl control;
  control.out_path = o.out;
  control.trace_path = o.trace;
  control.checkpoint_path = o.checkpoint;
  control.every = o.every;
  control.resume_path = o.resume;
  if (o.memory_limit) control.memory_limit_bytes = size_option(*o.memory_limit, "--memory-limit");
  control.auto_truncate = !o.no_auto_truncate;
  control.memory_guard = !o.no_memory_guard;
  if (o.host_memory) {
    if (o.no_memory_guard) throw BadInput("--host-memory sets the memory guard's allowance: not with --no-memory-guard");
    control.memory_guard_bytes = size_option(*o.host_memory, "--host-memory");
    if (*control.memory_guard_bytes == 0) throw BadInput("--host-memory must be more than 0 bytes");
  }
  control.quiet = o.quiet;
  if (o.no_auto_truncate && !o.memory_limit) throw BadInput("--no-auto-truncate needs --memory-limit");
  return control;
}

/// "3,5,10-12" → {3, 5, 10, 11, 12} (core/text.h; BadInput naming `flag` otherwise).
std::vector<std::size_t> parse_qubit_list(const std::string& text, const std::string& flag) {
  try {
    return parse_index_list(text);
  } catch (const std::invalid_argument& e) {
    throw BadInput(flag + ": " + e.what() + " in '" + text + "' (expected qubits and ranges such as 0,3,5-9)");
  }
}

/// --partition-rows: seeded[:SEED] | exclude:QUBITS | cut:BLOCK/BLOCK/… | cutx:…
io::TaskPartitionRows parse_partition_rows(const std::string& spec) {
  const std::string flag = "--partition-rows";
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  io::TaskPartitionRows rows;
  if (kind == "seeded") {
    if (colon != std::string::npos) {
      try {
        rows.seed = parse_count(rest);
      } catch (const std::invalid_argument& e) {
        throw BadInput(flag + ": seed " + e.what());
      }
    }
    return rows;
  }
  if (colon == std::string::npos || rest.empty())
    throw BadInput(flag + ": '" + spec + "' names no qubits (seeded[:SEED] | exclude:QUBITS | cut:BLOCK/BLOCK/...)");
  if (kind == "exclude") {
    rows.policy = "seeded_excluding";
    rows.excluded_qubits = parse_qubit_list(rest, flag);
    return rows;
  }
  if (kind == "cut" || kind == "cutx") {
    rows.policy = "cut";
    rows.basis = kind == "cutx" ? 'x' : 'z';
    std::size_t start = 0;
    while (start <= rest.size()) {
      const std::size_t slash = std::min(rest.find('/', start), rest.size());
      rows.blocks.push_back(parse_qubit_list(rest.substr(start, slash - start), flag));
      start = slash + 1;
    }
    return rows;
  }
  throw BadInput(flag + ": unknown policy '" + kind + "' (seeded[:SEED] | exclude:QUBITS | cut:BLOCK/BLOCK/... | cutx:...)");
}

void apply_overrides(io::Task& task, const CommonOptions& o) {
  if (o.threads) task.threads = *o.threads;  // ≥ 0: count_value
  if (o.partitions) {
    const std::size_t n = *o.partitions;
    if (n == 0 || (n & (n - 1)) != 0 || n > 64)
      throw BadInput("--partitions must be a power of two from 1 to 64, got " + std::to_string(n));
    task.partitions = n;
  }
  if (o.partition_rows) task.partition_rows = parse_partition_rows(*o.partition_rows);
  if (o.nccl) task.nccl = true;
  if (o.route_orbits_from) task.route_orbits_from = *o.route_orbits_from;
  if (o.engine) {
    if (*o.engine != "cpu" && *o.engine != "column")
      throw BadInput("--engine: unknown engine '" + *o.engine + "' (expected cpu or column)");
    task.engine = *o.engine;
  }
  if (o.column_phase) {
    if (*o.column_phase != "on" && *o.column_phase != "off")
      throw BadInput("--column-phase: expected on or off, got '" + *o.column_phase + "'");
    task.column_phase = *o.column_phase == "on";
  }
  if (o.device) {
    const std::string& d = *o.device;
    if (d == "cpu" || d == "gpu" || d == "auto") {
      task.device = d;
    } else {
      try {
        task.device = std::to_string(parse_count(d, kMaxInt));
      } catch (const std::invalid_argument& e) {
        throw BadInput("--device: " + std::string(e.what()) + " (expected cpu, gpu, auto or a GPU index)");
      }
    }
  }
}

/// The whole of `text` as a finite number (core/text.h), or nothing.
std::optional<double> parse_finite(const std::string& text) {
  try {
    return parse_real(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

/// "0.5", "-pi/2", "5pi/16", "5*pi/16", "pi": a number or a rational multiple of π.
double parse_angle(const std::string& text) {
  const std::size_t at = text.find("pi");
  auto number = [&](const std::string& s, double fallback) -> double {
    if (s.empty()) return fallback;
    if (s == "-") return -fallback;
    const std::optional<double> v = parse_finite(s);
    if (!v) throw BadInput("bad angle '" + text + "': expected a number or k*pi/m");
    return *v;
  };
  if (at == std::string::npos) {  // no π: the whole token is the number ("" and "-" are not 0)
    const std::optional<double> v = parse_finite(text);
    if (!v) throw BadInput("bad angle '" + text + "': expected a number or k*pi/m");
    return *v;
  }
  std::string head = text.substr(0, at), tail = text.substr(at + 2);
  if (!head.empty() && head.back() == '*') head.pop_back();
  double value = number(head, 1.0) * std::numbers::pi;
  if (!tail.empty()) {
    if (tail[0] != '/') throw BadInput("bad angle '" + text + "': expected a number or k*pi/m");
    const double divisor = number(tail.substr(1), 0.0);
    if (divisor == 0.0) throw BadInput("bad angle '" + text + "': division by zero");
    value /= divisor;
  }
  return value;
}

/// --theta-h: one angle, or START:STOP:K — K ≥ 1 angles from START to STOP, both ends included (K = 1:
/// START alone).
std::vector<double> parse_theta_h(const std::string& text) {
  if (text.find(':') == std::string::npos) return {parse_angle(text)};
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() != 3)
    throw BadInput("--theta-h: '" + text + "' is neither an angle nor START:STOP:K (e.g. 0:pi/2:20)");
  double first = 0.0, last = 0.0;
  std::uint64_t points = 0;
  try {
    first = parse_angle(parts[0]);
    last = parse_angle(parts[1]);
    points = parse_count(parts[2], 4096);
  } catch (const std::invalid_argument& e) {
    throw BadInput("--theta-h: '" + text + "' (START:STOP:K): " + e.what());
  }
  if (points == 0) throw BadInput("--theta-h: '" + text + "' asks for 0 points (K ≥ 1)");
  std::vector<double> angles(points, first);
  for (std::uint64_t k = 1; k < points; ++k)
    angles[k] = first + (last - first) * static_cast<double>(k) / static_cast<double>(points - 1);
  if (points > 1) angles.back() = last;
  return angles;
}

/// "[COEFF*]LABEL" with a dense or sparse label.
std::pair<std::string, Complex> parse_term(const std::string& text) {
  const std::size_t star = text.find('*');
  if (star == std::string::npos) return {text, 1.0};
  const std::optional<double> c = parse_finite(text.substr(0, star));
  if (!c) throw BadInput("bad --observable term '" + text + "': expected [COEFF*]LABEL, e.g. 0.5*Z0 Z1");
  return {text.substr(star + 1), *c};
}

/// --param NAME=VALUE (repeatable; VALUE a number or k*pi/m).
std::map<std::string, double, std::less<>> parse_params(const std::vector<std::string>& params) {
  std::map<std::string, double, std::less<>> out;
  for (const std::string& p : params) {
    const std::size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw BadInput("bad --param '" + p + "': expected NAME=VALUE, e.g. theta=0.5");
    const std::string name = p.substr(0, eq);
    if (out.count(name)) throw BadInput("--param " + name + " is given twice");
    out[name] = parse_angle(p.substr(eq + 1));
  }
  return out;
}

/// Runs a file reader; a file that cannot be read is bad input (exit 2), like a malformed one.
template <class Read>
auto reading(Read&& read) {
  try {
    return read();
  } catch (const io::ParseError&) {
    throw;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw BadInput(e.what());
  }
}

/// Refuses what a launch by mpirun cannot run: a rank count that is not a power of two (the ranks are
/// the partitions), and the demo (one process; every rank would run the whole sweep).
void check_launch(const Launch& launch, bool demo) {
  if (!launch.distributed()) return;
  const int ranks = launch.size();
  if ((ranks & (ranks - 1)) != 0) {
    throw BadInput("mpirun -np " + std::to_string(ranks) +
                   ": the ranks are the partitions of the run, so their number must be a power of two "
                   "(1, 2, 4, 8, ...)");
  }
  if (demo) throw BadInput("demo runs in one process: start it without mpirun (or with -np 1)");
}

int run_spec(RunSpec spec, const CommonOptions& common, Launch& launch) {
  // Under mpirun the ranks are the partitions; a second partition count (flag or task file) is a
  // contradiction, not something to pick one of silently.
  if (launch.distributed() && (common.partitions || spec.task.partitions > 1)) {
    throw BadInput("--partitions (or run.partitions in the task) cannot be combined with mpirun -np " +
                   std::to_string(launch.size()) + ": the ranks are the partitions");
  }
  apply_overrides(spec.task, common);
  RunControl control = control_from(common);
  control.launch = &launch;
  return execute(spec, control);
}

/// A θh scan of ⟨Z62⟩ on the 127-qubit kicked Ising (20 steps, |c| > 2^-12, θh = 0…π/2 in steps of π/16),
/// sized to finish in seconds on a laptop. One run per angle: a sweep in one propagation
/// (kicked-ising --theta-h START:STOP:K) carries every angle's terms with every angle's coefficient, which
/// across 0…π/2 — from one term at θh = 0 to millions near π/2 — costs more than the runs alone
/// (docs/design.md §7.8, docs/PERFORMANCE.md "Sweeps").
int run_demo(int threads, bool quiet, std::size_t steps, int points) {
  const double cutoff = std::ldexp(1.0, -12);
  std::printf("paulistrings demo: 127-qubit kicked Ising on IBM's heavy-hex map, %zu Trotter steps,\n",
              steps);
  if (threads < 0) throw BadInput("--threads must be ≥ 0");
  std::printf("<Z62> in |0...0> (Heisenberg picture, |c| > 2^-12), rzz(-pi/2) on every edge each step\n\n");
  std::printf("%10s %12s %12s %10s\n", "theta_h", "<Z62>", "peak_terms", "seconds");
  const auto total_start = std::chrono::steady_clock::now();
  for (int k = 0; k < points; ++k) {
    const double theta = k * std::numbers::pi / 16;
    const Circuit circuit = kicked_ising_circuit(steps, theta);
    AnyPauliSum sum =
        AnyPauliSum::from_labels(kHeavyHexQubits, std::vector<std::pair<std::string, Complex>>{{"Z62", 1.0}});
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = Truncation::coeff(cutoff);
    options.threads = threads;
    options.keep_layer_records = false;
    const auto start = std::chrono::steady_clock::now();
    const PropagationStats stats = propagate(sum, circuit, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Complex value = sum.visit(
        [](const auto& s) { return Complex(ProductState::parse("z+", kHeavyHexQubits).expectation(s)); });
    std::printf("%4d*pi/16 %12.6f %12zu %10.2f\n", k, value.real(), stats.peak_terms, seconds);
    std::fflush(stdout);
  }
  if (!quiet) {
    std::printf(
        "\ntotal %.1f s on %d threads. Finer: paulistrings kicked-ising --steps 20 --theta-h 7pi/32 --coeff "
        "6.1e-5\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - total_start).count(),
        threads == 0 ? available_cpus() : threads);
  }
  return kExitOk;
}

}  // namespace

int main_entry(int argc, char** argv, Launch& launch) {
  CLI::App app{"paulistrings: Pauli propagation of observables through quantum circuits", "paulistrings"};
  app.set_version_flag("--version", std::string("paulistrings ") + PAULISTRINGS_VERSION_STRING);

  // run
  CLI::App* run = app.add_subcommand("run", "run a task file, an OpenQASM 2 or 3 program or a stim circuit");
  std::optional<std::string> task_path, qasm_path, stim_path, state, direction;
  std::vector<std::string> observable_terms, params;
  bool ignore_measure = false;
  std::optional<double> coeff;
  std::optional<std::size_t> weight, top_n, approx_top_n;
  CommonOptions common;
  run->add_option("task", task_path, "task JSON file (schema v1 and extensions)");
  run->add_option("--qasm", qasm_path, "OpenQASM 2 or 3 program");
  run->add_option("--stim", stim_path, "stim circuit");
  run->add_option(
      "--observable", observable_terms,
      "observable term [COEFF*]LABEL (dense or sparse label, repeatable; terms add up; a qubit of an "
      "OpenQASM register as Zq[3])");
  run->add_option("--param", params, "value of an OpenQASM 3 input parameter, NAME=VALUE (repeatable)");
  run->add_flag("--ignore-measure", ignore_measure,
                "propagate the unmeasured observable: drop the circuit's measurements (resets stay)");
  run->add_option("--state", state, "product state: z+ x+ y+ or one of 0 1 + - r l per qubit (default z+)");
  run->add_option("--direction", direction, "heisenberg (default for --qasm/--stim) or forward");
  run->add_option("--coeff", coeff, "drop terms with |c| below this after every gate")
      ->transform(real_value());
  run->add_option("--weight", weight, "drop terms of Pauli weight above this")->transform(count_value());
  run->add_option("--top-n", top_n, "keep the N largest terms after every gate")->transform(count_value());
  run->add_option("--approx-top-n", approx_top_n,
                  "keep about N largest terms (whole octaves) after every gate")
      ->transform(count_value());
  add_common(*run, common);

  // kicked-ising
  CLI::App* kicked = app.add_subcommand("kicked-ising", "the 127-qubit heavy-hex kicked-Ising workload");
  std::size_t steps = 0;
  std::string theta_h_text, kicked_observable = "Z62";
  std::optional<std::string> write_task, kicked_gradient;
  std::optional<double> kicked_coeff;
  std::optional<std::size_t> kicked_weight;
  CommonOptions kicked_common;
  kicked->add_option("--steps", steps, "Trotter steps")->required()->transform(count_value());
  kicked
      ->add_option("--theta-h", theta_h_text,
                   "rx angle: a number or k*pi/m, e.g. 5pi/16; or a sweep START:STOP:K (K angles, both ends "
                   "included, in one run), e.g. 0:pi/2:20")
      ->required();
  kicked->add_option(
      "--gradient", kicked_gradient,
      "theta_h: also d<O>/d(theta_h) at every angle (a single angle runs as a one-column sweep)");
  kicked->add_option("--observable", kicked_observable, "Z62 (default), mz (mean magnetization) or a label");
  kicked->add_option("--write-task", write_task, "also write the workload as a task JSON file");
  kicked->add_option("--coeff", kicked_coeff, "coefficient cutoff (default 2^-12)")->transform(real_value());
  kicked->add_option("--weight", kicked_weight, "Pauli weight cutoff")->transform(count_value());
  add_common(*kicked, kicked_common);

  // demo
  CLI::App* demo =
      app.add_subcommand("demo", "θh scan of <Z62> on the 127-qubit kicked Ising (about ten seconds on 2 cores)");
  int demo_threads = 0;
  bool demo_quiet = false;
  std::size_t demo_steps = 20;
  int demo_points = 9;
  demo->add_option("--steps", demo_steps, "Trotter steps (default 20)")->transform(count_value());
  demo->add_option("--points", demo_points, "angles k·π/16, k = 0…points−1 (default 9: up to π/2)")
      ->transform(count_value(kMaxInt))
      ->check(CLI::Range(1, 64));
  demo->add_option("--threads", demo_threads, "CPU threads (0 = every core allowed)")
      ->transform(count_value(kMaxInt));
  demo->add_flag("--quiet,-q", demo_quiet, "table only");

  if (!launch.error().empty()) {  // before parsing: even --help would print where it must not
    std::fprintf(stderr, "paulistrings: error: %s\n", launch.error().c_str());
    return kExitRuntime;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "paulistrings: %s (see paulistrings --help)\n", e.what());
    return kExitBadInput;
  }

  try {
    check_launch(launch, !*run && !*kicked);
    if (*run) {
      const int sources = (task_path ? 1 : 0) + (qasm_path ? 1 : 0) + (stim_path ? 1 : 0);
      if (sources != 1) throw BadInput("run: give exactly one of TASK.json, --qasm FILE or --stim FILE");
      RunSpec spec;
      if (!params.empty() && !qasm_path) {
        throw BadInput(
            "--param gives OpenQASM 3 inputs with --qasm (a task file has them in circuit.params)");
      }
      if (task_path) {
        if (state || direction || coeff || weight || top_n || approx_top_n) {
          throw BadInput("run TASK.json: --state, --direction and truncation flags belong in the task file");
        }
        spec.source = *task_path;
        spec.task = reading([&] { return io::load_task(*task_path); });
      } else {
        spec.source = qasm_path ? *qasm_path : *stim_path;
        io::Task& task = spec.task;
        if (qasm_path) {
          io::QasmOptions options;
          options.inputs = parse_params(params);
          io::QasmProgram program = reading([&] { return io::load_qasm_program(*qasm_path, options); });
          task.circuit = std::move(program.circuit);
          task.registers = std::move(program.registers);
          task.warnings = std::move(program.warnings);
        } else {
          io::StimProgram program = reading([&] { return io::load_stim(*stim_path); });
          task.circuit = std::move(program.circuit);
          if (!program.observable.empty()) task.observables.push_back({"observable", program.observable});
        }
        task.num_qubits = task.circuit.num_qubits();
        task.direction = direction ? parse_direction(*direction) : Direction::heisenberg;
        if (state) task.state = *state;
        task.truncation.min_abs_coeff = coeff;
        task.truncation.max_weight = weight;
        task.truncation.top_n = top_n;
        task.truncation.approx_top_n = approx_top_n;
        if (coeff && !(*coeff >= 0.0)) throw BadInput("--coeff must be ≥ 0");
        task.threads = 0;
      }
      if (!observable_terms.empty()) {
        io::ObservableTerms terms;
        for (const std::string& t : observable_terms) {
          auto [label, coefficient] = parse_term(t);
          try {
            label = io::resolve_register_label(label, spec.task.registers);
          } catch (const std::invalid_argument& e) {
            throw BadInput("bad --observable term '" + t + "': " + e.what());
          }
          terms.emplace_back(std::move(label), coefficient);
        }
        spec.task.observables = {{"observable", terms}};
      }
      spec.task.ignore_measure = spec.task.ignore_measure || ignore_measure;
      io::apply_ignore_measure(spec.task);
      if (launch.writer()) {
        for (const std::string& warning : spec.task.warnings) std::fprintf(stderr, "%s\n", warning.c_str());
      }
      return run_spec(std::move(spec), common, launch);
    }
    if (*kicked) {
      const std::vector<double> theta_h = parse_theta_h(theta_h_text);
      RunSpec spec;
      spec.source = "kicked-ising";
      io::Task& task = spec.task;
      task.num_qubits = kHeavyHexQubits;
      task.circuit = kicked_ising_circuit(steps, theta_h[0]);
      if (kicked_gradient && *kicked_gradient != "theta_h") {
        throw BadInput("--gradient '" + *kicked_gradient + "': kicked-ising has one parameter, theta_h");
      }
      if (theta_h_text.find(':') != std::string::npos || kicked_gradient) {
        // A sweep of θh: column k is the circuit at θh_k; its rx gates name the parameter "theta_h". A
        // gradient at one angle is a sweep of one column.
        task.sweep = {{"theta_h"}, {theta_h}};
        for (double theta : theta_h) task.sweep_circuits.push_back(kicked_ising_circuit(steps, theta));
        for (std::size_t i = 0; i < task.circuit.size(); ++i) {
          if (task.circuit[i].name() == "rx") task.sweep_bindings.push_back({i, "theta", "theta_h"});
        }
        if (kicked_gradient) task.gradient = {"theta_h"};
      }
      task.direction = Direction::heisenberg;
      task.threads = 0;
      if (kicked_coeff && !(*kicked_coeff >= 0.0)) throw BadInput("--coeff must be ≥ 0");
      task.truncation.min_abs_coeff = kicked_coeff ? *kicked_coeff : std::ldexp(1.0, -12);
      task.truncation.max_weight = kicked_weight;
      io::ObservableTerms terms;
      if (kicked_observable == "mz") {
        for (std::size_t q = 0; q < kHeavyHexQubits; ++q) {
          std::string label(1, 'Z');
          label += std::to_string(q);
          terms.emplace_back(label, 1.0 / static_cast<double>(kHeavyHexQubits));
        }
      } else {
        terms.push_back(parse_term(kicked_observable));
      }
      task.observables = {{kicked_observable, terms}};
      if (write_task && launch.writer()) io::write_file_atomically(*write_task, io::task_to_json(task));
      return run_spec(std::move(spec), kicked_common, launch);
    }
    if (*demo) return run_demo(demo_threads, demo_quiet, demo_steps, demo_points);
    return run_demo(0, false, 20, 9);  // no subcommand: the built-in demo
  } catch (const RankEndedBeforeRun& e) {
    // Another rank's failure (that rank printed its message): end with its exit code.
    std::fprintf(stderr, "paulistrings: %s\n", e.what());
    return e.exit_code();
  } catch (const io::ParseError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {  // BadInput and library argument errors
    std::fprintf(stderr, "paulistrings: %s\n", e.what());
    return kExitBadInput;
  } catch (const MemoryBudgetExceeded& e) {
    std::fprintf(stderr, "paulistrings: %s\n", e.what());
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "paulistrings: error: %s\n", e.what());
    return kExitRuntime;
  }
}

}  // namespace paulistrings::cli
