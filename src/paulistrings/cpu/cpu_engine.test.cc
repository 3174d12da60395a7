// The fast CPU engine against the reference engine on seeded random circuits (every channel kind,
// both directions, every truncation, W = 1, 2, 4, real and complex, sums from 1 to 10^5 terms so
// that the small, bucketed and refined-mid-run paths all run), bitwise determinism across thread
// counts.

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

template <int W, Coefficient C>
void check_against_reference(int seed) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 104729 + 3);
  constexpr std::size_t kMaxQubits = 64 * W;
  const int which_truncation = seed % 9;
  // Sizes from 1 to 10^5: most small, some bucketed, a few large (shallow circuits there).
  static constexpr std::size_t kSizes[] = {1, 3, 40, 300, 2000, 20000, 100000};
  const std::size_t size_class = static_cast<std::size_t>(seed) % 10 < 7
                                     ? static_cast<std::size_t>(seed) % 5
                                     : 5 + static_cast<std::size_t>(seed) % 2;
  const std::size_t initial_terms = kSizes[size_class];
  // Qubits the circuit touches: without a bounding truncation (none, or `|` which keeps all) the
  // sum can fill 4^active strings, so those runs stay on few qubits; large inputs use 9 (≤ 4^9).
  const bool bounded = which_truncation != 0 && which_truncation != 7;
  const std::size_t active = initial_terms >= 20000 ? 9
                             : bounded              ? 6 + static_cast<std::size_t>(seed) % 4
                                                    : 4 + static_cast<std::size_t>(seed) % 3;
  const std::size_t offset = W == 1 ? 0 : kMaxQubits / 2 - active / 2;  // straddle a word boundary
  const std::size_t total = std::min(kMaxQubits, offset + active + 3);
  const std::size_t depth = initial_terms >= 20000 ? 3 : 8 + static_cast<std::size_t>(seed) % 17;
  const Circuit circuit = testing::random_circuit(rng, active, depth, {}, total, offset);
  const auto start = testing::random_window_sum<W, C>(rng, initial_terms, total, offset, active);
  const std::uint64_t collapse_seed = rng();

  PropagateOptions options;
  options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
  options.min_buckets = std::size_t{1} << (seed % 4 * 2);  // 1, 4, 16, 64 buckets
  options.target_bucket_len = 8 << (seed % 3);             // small buckets: refinement mid-run
  auto expected = start;
  options.engine = Engine::reference;
  options.truncation = testing::truncation_case(which_truncation, collapse_seed);
  const PropagationStats reference_stats = propagate(expected, circuit, options);
  auto actual = start;
  options.engine = Engine::cpu;
  options.threads = 2;
  options.parallel_threshold = seed % 2 ? 0 : 4096;  // force the parallel path on small sums too
  // Every third seed runs the alternative formulations: gather-sort-merge general layers and
  // rotations through the orbit path instead of in place.
  if ((seed / 6) % 3 == 1) {
    options.general_layer = GeneralLayer::sort_merge;
    options.in_place_rotations = false;
  }
  options.truncation = testing::truncation_case(which_truncation, collapse_seed);
  const PropagationStats cpu_stats = propagate(actual, circuit, options);

  actual.check_invariants();
  EXPECT_TRUE(testing::SumsMatch(actual, expected)) << "truncation " << options.truncation.description();
  EXPECT_EQ(cpu_stats.peak_terms, reference_stats.peak_terms);
  ASSERT_EQ(cpu_stats.layers.size(), reference_stats.layers.size());
  for (std::size_t k = 0; k < cpu_stats.layers.size(); ++k) {
    EXPECT_EQ(cpu_stats.layers[k].terms_out, reference_stats.layers[k].terms_out) << "layer " << k;
    EXPECT_NEAR(cpu_stats.layers[k].discarded_weight, reference_stats.layers[k].discarded_weight,
                1e-9 * std::max(1.0, reference_stats.layers[k].discarded_weight))
        << "layer " << k;
  }
}

class CpuEngineAgainstReference : public ::testing::TestWithParam<int> {};

TEST_P(CpuEngineAgainstReference, SameTermsAsTheReferenceEngine) {
  const int seed = GetParam();
  switch (seed % 6) {
    case 0:
      check_against_reference<1, double>(seed);
      break;
    case 1:
      check_against_reference<2, double>(seed);
      break;
    case 2:
      check_against_reference<4, double>(seed);
      break;
    case 3:
      check_against_reference<1, Complex>(seed);
      break;
    case 4:
      check_against_reference<2, Complex>(seed);
      break;
    default:
      check_against_reference<4, Complex>(seed);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, CpuEngineAgainstReference, ::testing::Range(0, 300));

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
