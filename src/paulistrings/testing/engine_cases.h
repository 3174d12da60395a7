#pragma once
// The inputs of the engine-equivalence suite (testing/engine_suite.h): seeded cases — a start sum, a
// circuit, the run's options and, for partitioned runs, the partition rows — drawn by families that
// differ in size and shape: small circuits checked against the dense oracle, sums of 1 to 10^5 terms
// for the CPU and GPU engines, small sums cut into partitions, and the MPI ranks' cases. Every case of
// a seed is the same on every run, so a failure names its seed and repeats.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/testing/dense_simulator.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::testing {

inline constexpr int kTruncationCases = 9;

/// A fresh policy per run (collapse_sample carries a pass counter), chosen by which % 9: none, coeff,
/// weight, topn, approx_topn, collapse_sample, coeff & weight, topn | coeff, approx_topn & coeff.
Truncation truncation_case(int which, std::uint64_t seed);

/// `terms` random strings on qubits offset…offset+active−1 of a total-qubit register, with normal
/// (complex: normal real and imaginary parts) coefficients; duplicates summed.
template <int W, Coefficient C>
PauliSum<W, C> random_window_sum(std::mt19937_64& rng, std::size_t terms, std::size_t total,
                                 std::size_t offset, std::size_t active) {
  std::vector<typename PauliSum<W, C>::Term> list;
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> letter(0, 3);
  for (std::size_t t = 0; t < terms; ++t) {
    PauliString<W> key;
    for (std::size_t q = 0; q < active; ++q) key.set_code(offset + q, letter(rng));
    C c;
    if constexpr (std::same_as<C, Complex>) {
      c = Complex(normal(rng), normal(rng));
    } else {
      c = normal(rng);
    }
    list.push_back({key, c});
  }
  return PauliSum<W, C>::from_terms(total, list);
}

/// What the dense oracle needs besides the circuit: the start operator on `qubits` qubits and the
/// states whose expectation values are compared (product states by label, one stabilizer state).
struct OracleInputs {
  std::size_t qubits = 0;
  dense::Matrix start;
  /// Product states as ProductState::parse reads them ("z+", or one of 0 1 + - r l per qubit) and as
  /// the same state's per-qubit label for the oracle.
  std::vector<std::pair<std::string, std::string>> product_states;
  std::vector<std::string> stabilizers;  ///< signed generators
};

/// One seeded input of the suite.
template <int W, Coefficient C>
struct EngineCase {
  Circuit circuit{1};
  PauliSum<W, C> start{1};
  /// Everything a run is given but the truncation (engine-specific tuning included: an engine that
  /// does not know an option ignores it).
  PropagateOptions options;
  /// The policy, made afresh for every run: copies of a collapse_sample policy share its pass counter.
  std::function<Truncation()> truncation = [] { return Truncation(); };
  /// Partitioned runs: this case's rows and routing (a runner sets the partition count and devices).
  PartitionOptions partition;
  /// Cases checked against the dense oracle.
  std::shared_ptr<const OracleInputs> oracle;

  /// The options of one run: `options` with a fresh truncation.
  PropagateOptions run_options() const {
    PropagateOptions run = options;
    run.truncation = truncation();
    return run;
  }
};

using AnyEngineCase =
    std::variant<EngineCase<1, double>, EngineCase<2, double>, EngineCase<4, double>, EngineCase<8, double>,
                 EngineCase<16, double>, EngineCase<1, Complex>, EngineCase<2, Complex>,
                 EngineCase<4, Complex>, EngineCase<8, Complex>, EngineCase<16, Complex>>;

/// A family of seeded inputs: seeds 0…seeds−1, each giving one or more cases.
struct CaseFamily {
  std::string name;
  int seeds = 0;
  std::function<std::vector<AnyEngineCase>(int seed)> cases;
};

/// 240 seeds of 2–8 qubits (mostly 2–6; every 25th seed 7 or 8), 6–25 random channels of every kind,
/// 1–12 terms (complex every third seed), each run forward and Heisenberg (two cases per seed), small
/// buckets; with the dense start operator, three uniform product states, a random one and a random
/// stabilizer state for the oracle.
CaseFamily oracle_cases();

/// Which seed set of the mixed-size family: the CPU engine's (W = 1, 2, 4 real and complex, bucket
/// counts and lengths and the CPU engine's thread count, parallel threshold and alternative
/// formulations varied by seed) or the GPU engine's (also W = 16, default tuning).
enum class MixedSizes : std::uint8_t { cpu_seeds, gpu_seeds };

/// 300 seeds: sums of 1 to 10^5 terms (most small, some bucketed, a few large with shallow circuits)
/// on a window of 4–9 qubits that straddles a word boundary for W > 1, 3–24 random channels of every
/// kind, both directions, every truncation (truncation_case).
CaseFamily mixed_size_cases(MixedSizes seeds);

/// Seeds for partitioned runs (120 on CPU partitions; 100 with W = 16 complex on GPU partitions): sums
/// of 1 to 1500 terms on 4–8 qubits, 8–24 random channels, both directions, nine truncations (exact topn
/// and approx_topn among them, no collapse_sample), partition rows seeded by the seed (every fifth
/// excluding two qubits), remote general layers routed by orbit or summed by the receiver, and the
/// engines' parallel paths forced on every fourth seed.
CaseFamily partition_cases(bool gpu_seeds);

/// The MPI ranks' cases: W = 1 complex on 8 qubits (6–8 active), 1–200 terms, 10–24 channels, both
/// directions, six truncations, one thread, rows seeded by the seed, odd seeds routing orbits.
EngineCase<1, Complex> mpi_case(int seed);
/// mpi_case for seeds 0…39.
CaseFamily mpi_cases();

}  // namespace paulistrings::testing
