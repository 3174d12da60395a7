// Example: ⟨Z62⟩ of the 127-qubit heavy-hex kicked-Ising circuit (Kim et al. 2023), propagated in the
// Heisenberg picture and read out in |0…0⟩. The project's main job until the command-line tool lands.
//
// usage: paulistrings-kicked-ising [steps=5] [theta_h=5π/16] [min_abs_coeff=2^-12] [engine=cpu|reference]
//                                  [threads=0 (all cores)]

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/core/text.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/propagate.h"

int main(int argc, char** argv) {
  using namespace paulistrings;
  try {
    // Strict numbers (core/text.h): "1e3" is 1000; "1.5" steps, "-1" or "0.25x" are errors, never cut short.
    const std::size_t steps = argc > 1 ? parse_count(argv[1]) : 5;
    const double theta_h = argc > 2 ? parse_real(argv[2]) : 5.0 * std::numbers::pi / 16.0;
    const double cutoff = argc > 3 ? parse_real(argv[3]) : std::ldexp(1.0, -12);
    const std::string engine = argc > 4 ? argv[4] : "cpu";
    const int threads =
        argc > 5 ? static_cast<int>(parse_count(argv[5], std::numeric_limits<int>::max())) : 0;
    if (engine != "cpu" && engine != "reference")
      throw std::invalid_argument("engine must be cpu or reference");

    const Circuit circuit = kicked_ising_circuit(steps, theta_h);
    auto observable = PauliSum<2, double>::from_labels(kHeavyHexQubits, {{"Z62", 1.0}});
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = Truncation::coeff(cutoff);
    options.engine = engine == "cpu" ? Engine::cpu : Engine::reference;
    options.threads = threads;
    const auto start = std::chrono::steady_clock::now();
    const PropagationStats stats = propagate(observable, circuit, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double value = ProductState::parse("z+", kHeavyHexQubits).expectation(observable);

    std::printf("127-qubit kicked Ising, %zu steps (%zu channels), theta_h = %.6f, |c| > %.3g, Heisenberg\n",
                steps, circuit.size(), theta_h, cutoff);
    std::printf("<Z62> = %.12f\n", value);
    std::printf(
        "peak terms %zu, final terms %zu, discarded sum|c|^2 = %.3e, wall %.3f s (%s engine, %s threads)\n",
        stats.peak_terms, stats.final_terms, stats.discarded_weight, seconds, engine.c_str(),
        threads > 0 ? std::to_string(threads).c_str() : "all");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
