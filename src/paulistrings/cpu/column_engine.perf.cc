// paulistrings-column-bench: the column-index engine (column_engine.h) against the CPU engine on one
// thread, on the Pauli-rotation workloads of docs/PERFORMANCE.md: tfim_chain (n = 64, 10 steps),
// heisenberg_chain (n = 14, 10 steps), tfim_2d (L = 18, 21 steps) and the 127-qubit kicked Ising (5 steps,
// θh = 5π/16, |c| > 2^-12, observable Z62).
//
// usage: paulistrings-column-bench WORKLOAD [both|column|cpu|narrow]
// WORKLOAD: tfim_chain, heisenberg_chain, tfim_2d, tfim_2d:L (side L), kicked_ising. `narrow` runs the CPU
// engine on narrowed keys (narrow_engine.h) and prints the width it ended at.
// Prints one line per engine: wall seconds (propagation only), final and peak terms, ⟨0…0|O|0…0⟩, and for
// the column engine what its layers read (column words, rows visited per gate). With both engines, the
// final term counts and read-outs are compared (exit 1 when they differ).

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/circuit/workloads.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/column_engine.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/cpu/narrow_engine.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/readout/product_state.h"

namespace {

using namespace paulistrings;

struct Outcome {
  double seconds = 0.0;
  std::size_t final_terms = 0, peak_terms = 0;
  double readout = 0.0;
};

template <int W>
Outcome run(const std::string& engine, const Workload& workload) {
  const std::size_t n = workload.circuit.num_qubits();
  std::vector<std::pair<std::string, double>> terms;
  for (const std::string& label : workload.observable) terms.emplace_back(label, 1.0);
  auto sum = PauliSum<W, double>::from_labels(n, terms);
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(workload.atol);
  options.threads = 1;
  options.keep_layer_records = true;  // for the mean sum a gate sees
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  PropagationStats stats;
  if (engine == "narrow") {
    CpuEngineOptions cpu;
    cpu.threads = 1;
    NarrowEngine<W, double> narrow(sum, cpu);
    std::size_t most = 0;  // the most qubits holding a label after a layer
    options.on_layer = [&](const LayerRecord&) { most = std::max(most, narrow.qubits_in_use()); };
    stats = run_layers<W>(narrow, workload.circuit, options);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    narrow.export_to(sum);
    std::printf("  narrowed keys: %d of %d words at the end, at most %zu qubits labelled, %zu gates skipped\n",
                narrow.width(), W, most, narrow.skipped_layers());
  } else if (engine == "column") {
    ColumnEngine<W, double> column(sum);
    stats = run_layers<W>(column, workload.circuit, options);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    column.export_to(sum);
    const ColumnEngineCounters& c = column.counters();
    const double layers = static_cast<double>(std::max<std::uint64_t>(c.layers, 1));
    const double words = static_cast<double>(c.column_words) / layers;
    const double visited = static_cast<double>(c.rows_visited) / layers;
    // Bytes a gate reads: the CPU engine every key; this engine its columns and, per visited row, the
    // key and coefficient (the partner's are another visited row's).
    std::size_t in = 0;
    for (const LayerRecord& r : stats.layers) in += r.terms_in;
    const double mean =
        static_cast<double>(in) / static_cast<double>(std::max<std::size_t>(stats.layers.size(), 1));
    std::printf(
        "  column engine: %.1f column words and %.1f rows visited per gate (a gate sees %.0f terms on "
        "average), "
        "%llu rows appended, %llu compactions; bytes read per gate: every key %.0f KB, columns + visited "
        "rows %.0f KB\n",
        words, visited, mean, static_cast<unsigned long long>(c.rows_appended),
        static_cast<unsigned long long>(c.compactions), mean * sizeof(PauliString<W>) / 1024,
        (8 * words + visited * (sizeof(PauliString<W>) + sizeof(double))) / 1024);
  } else {
    CpuEngineOptions cpu;
    cpu.threads = 1;
    CpuEngine<W, double> engine_cpu(sum, cpu);
    std::size_t widest = 0;  // the most qubits the light cone held after a layer
    options.on_layer = [&](const LayerRecord&) {
      std::size_t qubits = 0;
      for (std::uint64_t word : engine_cpu.light_cone()) qubits += static_cast<std::size_t>(std::popcount(word));
      widest = std::max(widest, qubits);
    };
    stats = run_layers<W>(engine_cpu, workload.circuit, options);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    engine_cpu.export_to(sum);
    std::printf("  cpu engine: %zu of %zu gates skipped (no term on their support), light cone at most %zu qubits\n",
                engine_cpu.skipped_layers(), workload.circuit.size(), widest);
  }
  out.final_terms = stats.final_terms;
  out.peak_terms = stats.peak_terms;
  out.readout = ProductState::parse("z+", n).expectation(sum);
  return out;
}

/// The workloads by name, at their published sizes (kicked_ising: docs/PERFORMANCE.md's 5-step run).
Workload workload_named(const std::string& name) {
  if (name == "tfim_chain") return tfim_chain(64, 10);
  if (name == "heisenberg_chain") return heisenberg_chain(14, 10);
  if (name == "tfim_2d") return tfim_2d(18, 21);
  if (name.starts_with("tfim_2d:")) return tfim_2d(parse_count(name.substr(8), 4096), 21);
  if (name != "kicked_ising") throw std::invalid_argument("unknown workload '" + name + "'");
  Workload kicked;
  kicked.name = name;
  kicked.circuit = kicked_ising_circuit(5, 5 * std::numbers::pi / 16);
  kicked.observable = {"Z62"};
  kicked.atol = std::ldexp(1.0, -12);  // coeff(ε) keeps |c| > ε
  return kicked;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string engine = argc > 2 ? argv[2] : "both";
  if (argc < 2 || (engine != "both" && engine != "column" && engine != "cpu" && engine != "narrow")) {
    std::fputs(
        "usage: paulistrings-column-bench tfim_chain|heisenberg_chain|tfim_2d|kicked_ising "
        "[both|column|cpu|narrow]\n",
        stderr);
    return 2;
  }
  Workload workload;
  try {
    workload = workload_named(argv[1]);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const std::size_t n = workload.circuit.num_qubits();
  std::vector<std::string> engines =
      engine == "both" ? std::vector<std::string>{"cpu", "column"} : std::vector<std::string>{engine};
  std::vector<Outcome> outcomes;
  for (const std::string& e : engines) {
    const Outcome o = n <= 64 ? run<1>(e, workload) : n <= 128 ? run<2>(e, workload) : run<8>(e, workload);
    std::printf(
        "%s n=%zu gates=%zu engine=%s threads=1 wall_s=%.4f final_terms=%zu peak_terms=%zu <0|O|0>=%.12f\n",
        workload.name.c_str(), n, workload.circuit.size(), e.c_str(), o.seconds, o.final_terms, o.peak_terms,
        o.readout);
    outcomes.push_back(o);
  }
  if (outcomes.size() == 2) {
    const bool same = outcomes[0].final_terms == outcomes[1].final_terms &&
                      std::abs(outcomes[0].readout - outcomes[1].readout) <= 1e-10;
    std::printf("%s: column/cpu wall %.2f×, results %s\n", workload.name.c_str(),
                outcomes[1].seconds / outcomes[0].seconds, same ? "agree" : "DIFFER");
    return same ? 0 : 1;
  }
  return 0;
}
