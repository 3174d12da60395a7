// paulistrings-sweep-bench: a θh sweep of the 127-qubit kicked Ising (⟨Z62⟩, Heisenberg, |0…0⟩) as one
// sweep against K separate runs of the CPU engine, on the same threads (docs/PERFORMANCE.md).
//
// usage: paulistrings-sweep-bench [--steps S] [--columns K] [--coeff EPS] [--weight W] [--threads T]
//                                 [--separate on|off] [--gradient on|off] [--split on|off]
//                                 [--apart-terms N] [--split-min-terms N] [--parallel-threshold N]
//   θh takes K values from 0 to π/2, both ends included (K = 1: π/4); θzz = −π/2. Defaults: 20 steps,
//   K = 20, EPS = 2^-14, no weight cut, every core, separate runs on. --gradient on also runs the sweep
//   with ∂⟨Z62⟩/∂θh (K derivative columns beside the K values) and prints its cost against the values alone.
//   --split off keeps the columns in one group (PropagateOptions::sweep_split; on by default).
//   --apart-terms N: a group counted at N terms or more runs its columns apart where that costs clearly
//   less (SweepTuning::apart_terms; 0: never, the library's default).
//   --split-min-terms N: a group is counted for a split from N terms on, and a group costs what N keys
//   cost (PropagateOptions::sweep_split_min_terms).
//   --parallel-threshold N: terms below which a layer stays on one thread
//   (PropagateOptions::parallel_threshold), for the sweep and the separate runs alike.
// Prints the seconds of the sweep and of the separate runs (all, and the slowest one), the sweep's cost
// against the mean and the slowest run, the largest |⟨Z62⟩ sweep − separate| over the columns (the
// sweep keeps more terms: docs/design.md §7.8), the sweep's final and peak terms and the separate runs'
// largest final terms.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/sweep/propagate_sweep.h"

using namespace paulistrings;

int main(int argc, char** argv) {
  std::size_t steps = 20, columns = 20;
  double epsilon = std::ldexp(1.0, -14);
  std::optional<std::size_t> weight;
  int threads = 0;
  bool separate = true, gradient = false, split = true;
  std::optional<std::size_t> apart_terms, split_min_terms;
  std::optional<std::size_t> parallel_threshold;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument("option " + arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--steps") {
        steps = parse_count(value);
      } else if (arg == "--columns") {
        columns = parse_count(value);
        if (columns == 0) throw std::invalid_argument("--columns must be ≥ 1");
      } else if (arg == "--coeff") {
        epsilon = parse_real(value);
      } else if (arg == "--weight") {
        weight = parse_count(value);
      } else if (arg == "--threads") {
        threads = static_cast<int>(parse_count(value, 4096));
      } else if (arg == "--separate") {
        if (value != "on" && value != "off") throw std::invalid_argument("--separate takes on or off");
        separate = value == "on";
      } else if (arg == "--gradient") {
        if (value != "on" && value != "off") throw std::invalid_argument("--gradient takes on or off");
        gradient = value == "on";
      } else if (arg == "--split") {
        if (value != "on" && value != "off") throw std::invalid_argument("--split takes on or off");
        split = value == "on";
      } else if (arg == "--apart-terms") {
        apart_terms = parse_count(value);
      } else if (arg == "--split-min-terms") {
        split_min_terms = parse_count(value);
      } else if (arg == "--parallel-threshold") {
        parallel_threshold = parse_count(value);
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(
        stderr,
        "error: %s\nusage: paulistrings-sweep-bench [--steps S] [--columns K] [--coeff EPS] [--weight W] "
        "[--threads T] [--separate on|off] [--gradient on|off] [--split on|off] [--apart-terms N] "
        "[--split-min-terms N]\n"
        "       [--parallel-threshold N]\n",
        e.what());
    return 2;
  }
  std::vector<Circuit> circuits;
  std::vector<double> angles;
  for (std::size_t k = 0; k < columns; ++k) {
    const double theta =
        columns == 1 ? std::numbers::pi / 4
                     : std::numbers::pi / 2 * static_cast<double>(k) / static_cast<double>(columns - 1);
    angles.push_back(theta);
    circuits.push_back(kicked_ising_circuit(steps, theta));
  }
  const std::vector<std::pair<std::string, Complex>> z62 = {{"Z62", Complex(1.0)}};
  const AnyPauliSum observable = AnyPauliSum::from_labels(kHeavyHexQubits, z62);
  const ProductState zero = ProductState::parse("z+", kHeavyHexQubits);
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(epsilon);
  if (weight) options.truncation = options.truncation & Truncation::weight(*weight);
  options.threads = threads;
  options.keep_layer_records = false;
  options.sweep_split = split;
  if (parallel_threshold) options.parallel_threshold = *parallel_threshold;
  SweepTuning tuning;
  if (apart_terms) tuning.apart_terms = *apart_terms;
  if (split_min_terms) options.sweep_split_min_terms = *split_min_terms;
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  AnySweepSum swept;
  const SweepStats stats = propagate_sweep(observable, circuits, options, swept, {}, tuning);
  const double sweep_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::vector<Complex> values = swept.expectations(zero);
  double separate_seconds = 0.0, slowest_seconds = 0.0, worst = 0.0;
  std::size_t separate_terms = 0;
  if (separate) {
    start = Clock::now();
    for (std::size_t k = 0; k < columns; ++k) {
      AnyPauliSum sum = observable;
      const auto one_start = Clock::now();
      const PropagationStats own = propagate(sum, circuits[k], options);
      slowest_seconds =
          std::max(slowest_seconds, std::chrono::duration<double>(Clock::now() - one_start).count());
      separate_terms = std::max(separate_terms, own.final_terms);
      const Complex value = sum.visit([&](const auto& s) { return Complex(zero.expectation(s)); });
      worst = std::max(worst, std::abs(value - values[k]));
    }
    separate_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  std::printf(
      "kicked_ising steps=%zu K=%zu eps=%g%s threads=%d: sweep %.3f s (final %zu, peak %zu terms; %zu groups "
      "after %zu splits, %zu columns apart)",
      steps, columns, epsilon, weight ? (" weight<=" + std::to_string(*weight)).c_str() : "",
      threads == 0 ? available_cpus() : threads, sweep_seconds, stats.stats.final_terms,
      stats.stats.peak_terms, stats.groups, stats.splits, stats.apart_columns);
  if (separate) {
    std::printf(
        "; separate %.3f s (largest final %zu terms, slowest run %.3f s); sweep/mean run %.2f, "
        "sweep/slowest run %.2f; max |diff| %.3g",
        separate_seconds, separate_terms, slowest_seconds,
        sweep_seconds / separate_seconds * static_cast<double>(columns), sweep_seconds / slowest_seconds,
        worst);
  }
  std::printf("\n");
  if (gradient) {
    // ∂/∂θh: every rx layer of column k (the first kHeavyHexQubits of each step's layers).
    SweepGradient d{"theta_h", {}};
    const std::size_t per_step = circuits[0].size() / std::max<std::size_t>(steps, 1);
    for (std::size_t k = 0; k < columns; ++k) {
      std::vector<LayerDerivative> layers;
      for (std::size_t step = 0; step < steps; ++step) {
        for (std::size_t q = 0; q < kHeavyHexQubits; ++q) {
          layers.push_back(sweep_derivative(
              step * per_step + q, [&](double v) { return Channel::rx(v, static_cast<Qubit>(q)); }, angles[k],
              true));
        }
      }
      d.derivatives.push_back(std::move(layers));
    }
    const std::vector<SweepGradient> gradients = {d};
    start = Clock::now();
    AnySweepSum with_gradient;
    const SweepStats gradient_stats =
        propagate_sweep(observable, circuits, options, with_gradient, gradients, tuning);
    const double gradient_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::vector<Complex> all = with_gradient.expectations(zero);
    std::printf(
        "  with d/dtheta_h: %.3f s (final %zu terms, %zu groups): %.2f x the values alone; a gradient column "
        "costs %.2f x a value column\n",
        gradient_seconds, gradient_stats.stats.final_terms, gradient_stats.groups,
        gradient_seconds / sweep_seconds, (gradient_seconds - sweep_seconds) / sweep_seconds);
    for (std::size_t k = 0; k < columns && k < 3; ++k)
      std::printf("  theta_h=%.6f d<Z62>/dtheta_h=%.9f\n", angles[k], all[columns + k].real());
  }
  for (std::size_t k = 0; k < columns && k < 3; ++k)
    std::printf("  theta_h=%.6f <Z62>=%.9f\n", angles[k], values[k].real());
  return 0;
}
