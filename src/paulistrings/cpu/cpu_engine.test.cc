// The fast CPU engine beyond the engine-equivalence suite (cpu_engine_equivalence.test.cc): bitwise
// determinism across thread counts on a growing sum and layers skipped outside the light cone.

#include "paulistrings/cpu/cpu_engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <span>

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/engine_cases.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

/// The reference engine applied channel by channel (forward), the policy after every layer.
template <int W, Coefficient C>
void apply_circuit_reference(PauliSum<W, C>& sum, const Circuit& circuit, const Truncation& policy) {
  PropagateOptions options;
  options.engine = Engine::reference;
  options.truncation = policy;
  propagate(sum, circuit, options);
}

// Bitwise determinism on one run that grows past the parallel threshold (the engine-equivalence suite
// compares 1, 2 and 8 threads on its seeded cases, cpu_engine_equivalence.test.cc).
TEST(CpuEngine, BitwiseIdenticalForAnyThreadCount) {
  std::mt19937_64 rng(77);
  const std::size_t n = 10;
  const Circuit circuit = testing::random_circuit(rng, n, 40);
  auto start = AnyPauliSum::from_labels(n, testing::random_terms(rng, n, 3000, false));
  std::vector<std::pair<std::string, Complex>> first;
  PropagationStats first_stats;
  for (int threads : {1, 2, 3, 8}) {
    auto sum = start;
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = Truncation::coeff(1e-4);
    options.threads = threads;
    options.parallel_threshold = 0;
    options.min_buckets = 64;
    const PropagationStats stats = propagate(sum, circuit, options);
    if (threads == 1) {
      first = sum.terms();
      first_stats = stats;
      continue;
    }
    EXPECT_EQ(sum.terms(), first) << threads << " threads";  // exact, in canonical order
    EXPECT_EQ(stats.discarded_weight, first_stats.discarded_weight) << threads << " threads";
  }
}

// Gates outside the light cone of every term are skipped — but never a non-unital channel, whose
// identity pattern grows a new term, and never before the terms have passed the policy once.
TEST(CpuEngine, SkipsLayersOutsideTheLightConeWithTheReferenceResult) {
  constexpr std::size_t kQubits = 200;
  Circuit circuit(kQubits);
  for (Qubit q = kQubits - 1; q >= 100; --q) circuit.append(Channel::rx(0.3, q));  // far away: skipped
  circuit.append(Channel::rzz(0.4, 0, 1)).append(Channel::rx(0.7, 1)).append(Channel::h(1));
  circuit.append(Channel::amplitude_damping(0.2, 150));  // forward: I → I + γZ, must run
  circuit.append(Channel::cnot(2, 3)).append(Channel::depolarize(0.1, 120)).append(Channel::ry(0.2, 150));
  const auto start = PauliSum<4, double>::from_labels(kQubits, {{"Z0", 1.0}, {"X0 Y1", 0.5}, {"Z1", 1e-9}});
  for (const bool truncate : {false, true}) {
    SCOPED_TRACE(truncate ? "coeff(1e-6)" : "no truncation");
    const Truncation policy = truncate ? Truncation::coeff(1e-6) : Truncation();
    auto expected = start;
    apply_circuit_reference(expected, circuit, policy);
    CpuEngine<4, double> engine(start, CpuEngineOptions{});
    for (const Channel& channel : circuit)
      engine.apply_layer(prepare_channel<4>(channel, Direction::forward), policy);
    PauliSum<4, double> actual(kQubits);
    engine.export_to(actual);
    EXPECT_TRUE(testing::SumsMatch(actual, expected));
    // Skipped: the 100 far rotations, cnot(2, 3) and depolarize(120); with a term test the first
    // far rotation runs (it drops the 1e-9 term) and the 99 after it are skipped.
    EXPECT_EQ(engine.skipped_layers(), truncate ? 101u : 102u);
  }
}

// Rotations at odd quarter turns (cos θ = 0) are permutations: each anticommuting term becomes g ⊕ Q in
// the paired bucket, swapped there into the place of a term moving the other way (permute_coset). Among
// general rotations and Clifford gates, in both directions, under every per-term policy, with and
// without blocks: the reference engine's terms, and the same bits on 1 and 3 threads.
template <int W>
void expect_clifford_rotations_as_the_reference(std::size_t n) {
  constexpr double kQuarter = 1.5707963267948966;
  std::mt19937_64 rng(300 + n);
  std::uniform_int_distribution<Qubit> qubit(0, static_cast<Qubit>(n - 1));
  std::uniform_real_distribution<double> angle(-3.0, 3.0);
  Circuit circuit(n);
  int general = 0;  // at most 8 general rotations: the untruncated sums stay small
  for (int l = 0; l < 60; ++l) {
    const Qubit a = qubit(rng);
    Qubit b = qubit(rng), c = qubit(rng);
    while (b == a) b = qubit(rng);
    while (c == a || c == b) c = qubit(rng);
    const double quarter = (rng() % 2 ? 1.0 : -1.0) * (rng() % 2 ? kQuarter : 3 * kQuarter);
    std::uint64_t kind = rng() % 7;
    if ((kind == 4 || kind == 5) && ++general > 8) kind = 0;
    switch (kind) {
      case 0:
        circuit.append(Channel::rzz(quarter, a, b));
        break;
      case 1:
        circuit.append(Channel::rx(quarter, a));
        break;
      case 2:
        circuit.append(Channel::pauli_rotation("XYZ", {a, b, c}, quarter));
        break;
      case 3:
        circuit.append(Channel::ryy(quarter, a, b));
        break;
      case 4:
        circuit.append(Channel::rzz(angle(rng), a, b));
        break;
      case 5:
        circuit.append(Channel::rx(angle(rng), a));
        break;
      default:
        circuit.append(l % 2 ? Channel::h(a) : Channel::cnot(a, b));
        break;
    }
  }
  std::vector<std::pair<std::string, double>> terms;
  for (const auto& [label, c] : testing::random_terms(rng, n, 3000, false))
    terms.emplace_back(label, c.real());
  const auto start = PauliSum<W, double>::from_labels(n, terms);
  for (const Direction direction : {Direction::heisenberg, Direction::forward}) {
    for (const Truncation& policy : {Truncation(), Truncation::coeff(1e-3), Truncation::weight(4),
                                     Truncation::coeff(1e-4) & Truncation::weight(5)}) {
      PropagateOptions options;
      options.direction = direction;
      options.truncation = policy;
      options.column_phase.enabled = false;  // the coset engine throughout
      options.parallel_threshold = 0;
      options.min_buckets = 64;
      auto expected = start;  // the reference's terms, once for both ways below
      options.engine = Engine::reference;
      propagate(expected, circuit, options);
      options.engine = Engine::cpu;
      for (const bool blocks : {true, false}) {
        SCOPED_TRACE(std::to_string(n) + " qubits, " + std::string(to_string(direction)) + ", " +
                     policy.description() + (blocks ? ", blocks" : ", one layer at a time"));
        options.gate_blocks = blocks;
        PauliSum<W, double> first(n);
        double first_discarded = 0.0;
        for (const int threads : {1, 3}) {
          auto sum = start;
          options.threads = threads;
          const PropagationStats stats = propagate(sum, circuit, options);
          EXPECT_TRUE(testing::SumsMatch(sum, expected));
          if (threads == 1) {
            first = sum;
            first_discarded = stats.discarded_weight;
          } else {
            EXPECT_TRUE(testing::SumsMatch(sum, first, 0.0));
            EXPECT_EQ(stats.discarded_weight, first_discarded);
          }
        }
      }
    }
  }
}

TEST(CpuEngine, CliffordRotationsSwapTermsBetweenBucketsAsTheReferenceMovesThem) {
  expect_clifford_rotations_as_the_reference<1>(12);
  expect_clifford_rotations_as_the_reference<2>(70);
}

TEST(CpuEngine, ThreadsOptionIsValidated) {
  auto sum = PauliSum<1, double>::from_labels(2, {{"XZ", 1.0}});
  Circuit circuit(2);
  circuit.append(Channel::h(0));
  PropagateOptions options;
  options.threads = -1;
  EXPECT_THROW(propagate(sum, circuit, options), std::invalid_argument);
  EXPECT_GE(available_cpus(), 1);
}

}  // namespace
}  // namespace paulistrings
