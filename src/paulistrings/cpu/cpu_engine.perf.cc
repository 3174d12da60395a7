// paulistrings-bench: the CPU engine's cells (docs/design.md §8) at W = 2 (128 qubits), real coefficients, in
// steady state (every orbit of the layer's delta span already present, so a layer maps m terms to m
// terms), plus the machine's streaming bandwidth measured in the same run.
//
// usage: paulistrings-bench [--terms N[,N...]] [--threads T[,T...]] [--cells a,b,...] [--repeat R]
//                           [--compare] [--bucket-len L] [--min-buckets B] [--parallel-threshold G]
// --compare adds the alternative formulations: gu2q and su4 by gather-sort-merge (a) beside the
// orbit grouping (b), rotation_zz through the orbit path beside the in-place update.
// Prints one row per (cell, terms, threads): ns per input term per layer, bytes moved per term
// (input read + output written, 40 B per real W=2 term), the bandwidth that implies, and its fraction
// of the measured triad bandwidth for the same thread count. --parallel-threshold sets the grain of
// threads a layer takes (CpuEngineOptions::parallel_threshold; 0: every thread on every layer).

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/bench_cells.h"
#include "paulistrings/cpu/cpu_engine.h"

namespace paulistrings {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using namespace bench;

struct Row {
  std::string cell;
  std::size_t terms;
  int threads;
  double ns_per_term;
  double bytes_per_term;
};

std::size_t g_bucket_len = CpuEngineOptions{}.target_bucket_len;
std::size_t g_min_buckets = CpuEngineOptions{}.min_buckets;
std::size_t g_parallel_threshold = CpuEngineOptions{}.parallel_threshold;

CpuEngineOptions engine_options(int threads, const std::string& variant) {
  CpuEngineOptions options;
  options.threads = threads;
  options.target_bucket_len = g_bucket_len;
  options.min_buckets = g_min_buckets;
  options.parallel_threshold = g_parallel_threshold;
  if (variant == "sort_merge") options.general_layer = GeneralLayer::sort_merge;
  if (variant == "orbit_rotation") options.in_place_rotations = false;
  return options;
}

Row run_layer_cell(const std::string& name, const std::string& variant, const Channel& channel,
                   const Sum& sum, int threads, int repeat) {
  CpuEngine<kWidth, double> engine(sum, engine_options(threads, variant));
  const LayerTiming timing = time_layers(engine, prepare_channel<kWidth>(channel, Direction::heisenberg), repeat);
  return {variant.empty() ? name : name + "/" + variant, sum.size(), threads, timing.ns_per_term,
          timing.bytes_per_term};
}

/// One Trotter step (`per_step` channels of `step`, in Heisenberg order) timed per layer on the sum
/// that earlier steps produced with the cutoff: steps run until the sum holds `min_terms` (or
/// `max_steps` steps are done), then the next step is timed. Reports ns per input term per layer.
Row run_step_cell(const std::string& name, const Circuit& step, const std::string& label, double cutoff_value,
                  std::size_t min_terms, std::size_t max_steps, int threads) {
  auto observable = Sum::from_labels(step.num_qubits(), {{label, 1.0}});
  CpuEngine<kWidth, double> engine(observable, engine_options(threads, ""));
  const Truncation cutoff = Truncation::coeff(cutoff_value);
  std::vector<PreparedChannel<kWidth>> tables;
  for (std::size_t k = step.size(); k-- > 0;)
    tables.push_back(prepare_channel<kWidth>(step[k], Direction::heisenberg));
  for (std::size_t s = 0; s < max_steps && engine.size() < min_terms; ++s) {
    for (const auto& table : tables) engine.apply_layer(table, cutoff);
  }
  std::size_t terms_in = 0, terms_out = 0;
  const auto start = Clock::now();
  for (const auto& table : tables) {
    terms_in += engine.size();
    engine.apply_layer(table, cutoff);
    terms_out += engine.size();
  }
  const double timed = seconds_since(start);
  return {name, terms_in / tables.size(), threads, timed * 1e9 / static_cast<double>(terms_in),
          kTermBytes * static_cast<double>(terms_in + terms_out) / static_cast<double>(terms_in)};
}

/// The fifth step of the 127-qubit kicked Ising (θh = 5π/16, |c| > 2^-14).
Row run_heavyhex_step(int threads) {
  const Circuit step = kicked_ising_circuit(1, 5 * std::numbers::pi / 16);
  return run_step_cell("heavyhex_step", step, "Z62", std::ldexp(1.0, -14), ~std::size_t{0}, 4, threads);
}

/// A step of the 2D transverse-field Ising model on an 8×16 open grid (128 qubits; the tfim_2d
/// workload's step: rx(0.05), rz(0.05) on every site, rzz(0.075) on every bond), observable Z⊗Z at
/// the centre, |c| > 1e-6, timed once the sum holds 10^6 terms.
Row run_tfim_step(int threads) {
  constexpr std::size_t kRows = 8, kCols = 16;
  Circuit step(kQubits);
  for (Qubit q = 0; q < kQubits; ++q) step.append(Channel::rx(0.05, q));
  for (Qubit q = 0; q < kQubits; ++q) step.append(Channel::rz(0.05, q));
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t c = 0; c < kCols; ++c) {
      const Qubit idx = r * kCols + c;
      if (c + 1 < kCols) step.append(Channel::rzz(0.075, idx, idx + 1));
      if (r + 1 < kRows) step.append(Channel::rzz(0.075, idx, idx + kCols));
    }
  }
  return run_step_cell("tfim_step", step, "Z71 Z72", 1e-6, 1000000, 60, threads);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

}  // namespace
}  // namespace paulistrings

int main(int argc, char** argv) {
  using namespace paulistrings;
  std::vector<std::size_t> sizes = {1000000, 10000000};
  std::vector<int> thread_counts = {1, available_cpus()};
  std::vector<std::string> cells = {"rotation_zz", "cnot",      "gu2q",         "su4",
                                    "depolarize",  "tfim_step", "heavyhex_step"};
  int repeat = 5;
  bool compare = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--compare") {
      compare = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "missing value after %s\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[i + 1];
    try {  // strict numbers (core/text.h): "--terms 1e7" is 10^7 terms, "1.5" or "-1" an error
      if (flag == "--terms") {
        sizes.clear();
        for (const auto& v : split(value)) sizes.push_back(parse_count(v));
      } else if (flag == "--threads") {
        thread_counts.clear();
        for (const auto& v : split(value)) thread_counts.push_back(static_cast<int>(parse_count(v, INT_MAX)));
      } else if (flag == "--cells") {
        cells = split(value);
      } else if (flag == "--bucket-len") {
        g_bucket_len = parse_count(value);
      } else if (flag == "--min-buckets") {
        g_min_buckets = parse_count(value);
      } else if (flag == "--parallel-threshold") {
        g_parallel_threshold = parse_count(value);
      } else if (flag == "--repeat") {
        repeat = static_cast<int>(parse_count(value, INT_MAX));
      } else {
        std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
        return 2;
      }
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "%s: %s\n", flag.c_str(), e.what());
      return 2;
    }
  }
  std::mt19937_64 rng(20261129);
  const std::map<std::string, Channel> layer_cells = bench::layer_cells(rng);
  std::printf(
      "# paulistrings-bench: W=2 (128 qubits), real coefficients, %zu B/term, steady state, "
      "target_bucket_len %zu, min_buckets %zu, parallel_threshold %zu\n",
      static_cast<std::size_t>(kTermBytes), g_bucket_len, g_min_buckets, g_parallel_threshold);
  std::map<int, double> bandwidth;
  for (int t : thread_counts) {
    bandwidth[t] = triad_bandwidth(t);
    std::printf("# triad bandwidth, %d threads: %.1f GB/s\n", t, bandwidth[t]);
  }
  std::printf("%-14s %10s %7s %10s %10s %9s %9s\n", "cell", "terms", "threads", "ns/term", "bytes/term",
              "GB/s", "of_triad");
  auto print = [&](const Row& r) {
    const double gbs = r.bytes_per_term / r.ns_per_term;
    std::printf("%-14s %10zu %7d %10.2f %10.1f %9.2f %9.3f\n", r.cell.c_str(), r.terms, r.threads,
                r.ns_per_term, r.bytes_per_term, gbs, gbs / bandwidth[r.threads]);
    std::fflush(stdout);
  };
  for (const std::string& cell : cells) {
    if (cell == "heavyhex_step" || cell == "tfim_step") {
      for (int t : thread_counts) print(cell == "tfim_step" ? run_tfim_step(t) : run_heavyhex_step(t));
      continue;
    }
    if (!layer_cells.count(cell)) {
      std::fprintf(stderr, "unknown cell %s\n", cell.c_str());
      return 2;
    }
    for (std::size_t m : sizes) {
      const Sum sum = steady_state_sum(layer_cells.at(cell), m, rng);  // built once, shared by thread counts
      std::vector<std::string> variants = {""};
      if (compare && (cell == "gu2q" || cell == "su4")) variants.push_back("sort_merge");
      if (compare && cell == "rotation_zz") variants.push_back("orbit_rotation");
      for (const std::string& variant : variants)
        for (int t : thread_counts)
          print(run_layer_cell(cell, variant, layer_cells.at(cell), sum, t, repeat));
    }
  }
  return 0;
}
