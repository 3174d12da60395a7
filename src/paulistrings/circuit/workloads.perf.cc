// paulistrings-workloads: end-to-end timings of the published cross-engine workloads (workloads.h)
// on the CPU engine, one process per call so that the peak resident memory belongs to one run.
//
// usage: paulistrings-workloads WORKLOAD [--side L] [--steps S] [--threads T] [--engine cpu|reference]
//                               [--rotations in_place|orbit] [--keys narrow|wide] [--blocks on|off]
//                               [--noise P] [--column-phase on|off] [--device D]
//   WORKLOAD: tfim_chain (n = 64, 10 steps), heisenberg_chain (n = 14, 10 steps), tfim_2d (--side L,
//   default 18, 21 steps), transpiled_brickwork (--qubits N, default 40; --steps = layers, default 14;
//   not published: rz·sx·rz and CNOT bricks, workloads.h).
// --noise P adds a depolarizing channel of strength P on every qubit after every step (not a published
// workload: the rescaling-noise blocks' case; the name gets "+noise").
// --blocks off applies one layer at a time (default: runs of rotations and of rescaling noise in
// blocks, docs/design.md §7.7).
// --column-phase off runs the CPU engine's coset engine from the first layer (default: the column phase,
// engine/options.h ColumnPhase; the line then says how many layers it took).
// --keys wide keeps the CPU engine's keys at the sum's width (default: narrowed to the qubits in use,
// cpu/narrow_engine.h). --device D runs on CUDA device D (wall seconds then include the upload and the
// download); PAULISTRINGS_GPU_PROFILE (set) then prints the device sum's phase times
// (GpuEngineOptions::profile). Prints one line: workload, threads, wall seconds (propagation only), the
// published read-out (⟨0…0|O|0…0⟩, and the Z_0 coefficient for heisenberg_chain), final and peak terms, peak
// RSS.

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/circuit/workloads.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/propagate.h"

namespace {

/// Peak resident set size of this process in bytes (VmHWM), 0 when unavailable.
std::size_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

int usage(const char* message) {
  std::fprintf(
      stderr,
      "%s\nusage: paulistrings-workloads tfim_chain|heisenberg_chain|tfim_2d|transpiled_brickwork [--side L] "
      "[--qubits N] [--steps S] "
      "[--threads T] [--engine cpu|reference] [--rotations in_place|orbit] [--keys narrow|wide] "
      "[--blocks on|off] [--noise P] [--column-phase on|off] [--device D]\n",
      message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace paulistrings;
  if (argc < 2) return usage("missing workload");
  const std::string name = argv[1];
  std::size_t side = 18;
  std::size_t qubits = 40;
  long steps = -1;
  int threads = 1;
  Engine engine = Engine::cpu;
  bool in_place = true;
  bool narrow = true;
  bool blocks = true;
  bool column_phase = true;
  double noise = 0.0;
  int device = -1;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage(("missing value after " + flag).c_str());
    const std::string value = argv[i + 1];
    // Strict numbers (core/text.h): "--steps 1e3" is 1000 steps, "1.5" or "-1" an error.
    const auto count = [&](std::uint64_t max) {
      try {
        return parse_count(value, max);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s: %s\n", flag.c_str(), e.what());
        std::exit(2);
      }
    };
    if (flag == "--side") {
      side = count(SIZE_MAX);
    } else if (flag == "--qubits") {
      qubits = count(SIZE_MAX);
    } else if (flag == "--steps") {
      steps = static_cast<long>(count(LONG_MAX));
    } else if (flag == "--threads") {
      threads = static_cast<int>(count(INT_MAX));
    } else if (flag == "--device") {
      device = static_cast<int>(count(INT_MAX));
    } else if (flag == "--rotations") {
      if (value != "in_place" && value != "orbit") return usage("bad --rotations");
      in_place = value == "in_place";
    } else if (flag == "--keys") {
      if (value != "narrow" && value != "wide") return usage("bad --keys");
      narrow = value == "narrow";
    } else if (flag == "--noise") {
      try {
        noise = parse_real(value);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "%s: %s\n", flag.c_str(), e.what());
        return 2;
      }
    } else if (flag == "--blocks") {
      if (value != "on" && value != "off") return usage("bad --blocks");
      blocks = value == "on";
    } else if (flag == "--column-phase") {
      if (value != "on" && value != "off") return usage("bad --column-phase");
      column_phase = value == "on";
    } else if (flag == "--engine") {
      if (value != "cpu" && value != "reference") return usage("bad --engine");
      engine = value == "cpu" ? Engine::cpu : Engine::reference;
    } else {
      return usage(("unknown flag " + flag).c_str());
    }
  }
  Workload workload;
  const std::size_t default_steps = name == "tfim_2d" ? 21 : name == "transpiled_brickwork" ? 14 : 10;
  if (name == "tfim_chain") {
    workload = tfim_chain(64, steps < 0 ? 10 : static_cast<std::size_t>(steps));
  } else if (name == "heisenberg_chain") {
    workload = heisenberg_chain(14, steps < 0 ? 10 : static_cast<std::size_t>(steps));
  } else if (name == "tfim_2d") {
    workload = tfim_2d(side, steps < 0 ? 21 : static_cast<std::size_t>(steps));
  } else if (name == "transpiled_brickwork") {
    workload = transpiled_brickwork(qubits, steps < 0 ? 14 : static_cast<std::size_t>(steps));
  } else {
    return usage(("unknown workload " + name).c_str());
  }
  const std::size_t n = workload.circuit.num_qubits();
  if (noise > 0.0) {
    // Steps are contiguous runs of equal length in the time-ordered circuit; noise follows each.
    const std::size_t step_count = steps < 0 ? default_steps : static_cast<std::size_t>(steps);
    const std::size_t per_step = workload.circuit.size() / std::max<std::size_t>(step_count, 1);
    Circuit noisy(n);
    for (std::size_t i = 0; i < workload.circuit.size(); ++i) {
      noisy.append(workload.circuit[i]);
      if ((i + 1) % per_step == 0) {
        for (Qubit q = 0; q < n; ++q) noisy.append(Channel::depolarize(noise, q));
      }
    }
    workload.circuit = std::move(noisy);
    workload.name += "+noise";
  }
  std::vector<std::pair<std::string, Complex>> terms;
  for (const std::string& label : workload.observable) terms.emplace_back(label, 1.0);
  AnyPauliSum sum = AnyPauliSum::from_labels(n, terms);

  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(workload.atol);
  options.engine = engine;
  options.threads = threads;
  options.keep_layer_records = false;
  options.in_place_rotations = in_place;
  options.narrow_keys = narrow;
  options.gate_blocks = blocks;
  options.column_phase.enabled = column_phase;
  options.device = device;
  options.gpu.profile = std::getenv("PAULISTRINGS_GPU_PROFILE") != nullptr;
  const auto start = std::chrono::steady_clock::now();
  const PropagationStats stats = propagate(sum, workload.circuit, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const Complex value =
      sum.visit([&](const auto& s) -> Complex { return ProductState::parse("z+", n).expectation(s); });
  std::printf("%s n=%zu threads=%d engine=%s keys=%s blocks=%s wall_s=%.4f <0|O|0>=%.12f", workload.name.c_str(), n,
              threads == 0 ? available_cpus() : threads,
              device >= 0 ? std::string("gpu").append(std::to_string(device)).c_str()
              : engine == Engine::cpu ? "cpu"
                                      : "reference",
              narrow ? "narrow" : "wide", blocks ? "on" : "off", seconds,
              value.real());
  if (name == "heisenberg_chain") std::printf(" c_Z0=%.12f", sum.coefficient("Z0").real());
  std::printf(" final_terms=%zu peak_terms=%zu column_layers=%zu peak_rss_mb=%.1f\n", stats.final_terms,
              stats.peak_terms, stats.column_layers, static_cast<double>(peak_resident_bytes()) / (1 << 20));
  return 0;
}
