// The reference engine and the propagate() driver beyond the engine-equivalence suite
// (reference_engine_equivalence.test.cc: random circuits against the dense oracle): direction
// identities, width independence, exact Clifford round trips on 500+ qubits, the trace, and published
// kicked-Ising term counts.

#include "paulistrings/engine/reference_engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

// ---- direction identities ----

TEST(ReferenceEngine, HeisenbergEqualsForwardOfAdjoint) {
  std::mt19937_64 rng(4242);
  testing::RandomChannelOptions unitary_only;
  unitary_only.noise = false;
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 3 + trial % 4;
    const Circuit circuit = testing::random_circuit(rng, n, 15, unitary_only);
    auto a = AnyPauliSum::from_labels(n, testing::random_terms(rng, n, 6, trial % 2 == 0));
    auto b = a;
    PropagateOptions heisenberg;
    heisenberg.direction = Direction::heisenberg;
    propagate(a, circuit, heisenberg);
    propagate(b, circuit.adjoint(), PropagateOptions{});
    auto difference = a - b;
    EXPECT_LT(difference.norm_squared(), 1e-24) << "trial " << trial;
  }
}

// ---- width independence ----

TEST(ReferenceEngine, SameCircuitAtAnyQubitOffsetGivesIdenticalResults) {
  std::mt19937_64 rng(99);
  const std::size_t n = 6;
  for (int trial = 0; trial < 6; ++trial) {
    const std::uint64_t circuit_seed = rng();
    const auto terms = testing::random_terms(rng, n, 5, trial % 2 == 1);
    const Truncation truncations[] = {Truncation(), Truncation::coeff(0.05), Truncation::weight(3),
                                      Truncation::topn(20) & Truncation::coeff(1e-3),
                                      Truncation::approx_topn(25)};
    const Truncation& truncation = truncations[trial % 5];
    std::vector<std::pair<std::string, Complex>> reference_terms;
    Complex reference_value;
    for (std::size_t offset : {0, 63, 64, 127, 128, 1000}) {
      SCOPED_TRACE("offset " + std::to_string(offset));
      std::mt19937_64 circuit_rng(circuit_seed);
      const std::size_t total = offset + n;
      const Circuit circuit = testing::random_circuit(circuit_rng, n, 30, {}, total, offset);
      auto sum = AnyPauliSum::from_labels(total, testing::shift_terms(terms, offset));
      PropagateOptions options;
      options.direction = trial % 2 ? Direction::heisenberg : Direction::forward;
      options.truncation = truncation;
      propagate(sum, circuit, options);
      // Shift the result back to qubits 0…n−1 and compare exactly (no tolerance).
      std::vector<std::pair<std::string, Complex>> shifted;
      for (const auto& [label, c] : sum.terms()) shifted.emplace_back(label.substr(offset), c);
      std::sort(shifted.begin(), shifted.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string state(total, '0');
      for (std::size_t q = 0; q < n; ++q) state[offset + q] = "0+r1-l"[q % 6];
      const Complex value =
          sum.visit([&](const auto& s) { return Complex(ProductState::parse(state, total).expectation(s)); });
      if (offset == 0) {
        reference_terms = shifted;
        reference_value = value;
        continue;
      }
      EXPECT_EQ(shifted, reference_terms);
      EXPECT_NEAR(value.real(), reference_value.real(), 1e-14);
      EXPECT_NEAR(value.imag(), reference_value.imag(), 1e-14);
    }
  }
}

// ---- exact Clifford round trips on many qubits ----

TEST(ReferenceEngine, CliffordCircuitThenAdjointReturnsExactlyOn600Qubits) {
  std::mt19937_64 rng(2026);
  const std::size_t n = 600;
  testing::RandomChannelOptions cliffords_only;
  cliffords_only.rotations = cliffords_only.unitaries = cliffords_only.noise = false;
  const Circuit circuit = testing::random_circuit(rng, n, 2000, cliffords_only);
  std::vector<std::pair<std::string, double>> terms;
  for (const auto& [label, c] : testing::random_terms(rng, n, 300, false))
    terms.emplace_back(label, c.real());
  const auto original = PauliSum<16, double>::from_labels(n, terms);
  for (Direction direction : {Direction::forward, Direction::heisenberg}) {
    auto sum = original;
    PropagateOptions options;
    options.direction = direction;
    options.min_buckets = 1;
    propagate(sum, circuit, options);
    EXPECT_EQ(sum.size(), original.size());
    EXPECT_FALSE(sum == original);  // the circuit did something
    propagate(sum, circuit.adjoint(), options);
    EXPECT_TRUE(sum == original);  // bitwise: Clifford tables are exact signed permutations
  }
}

// ---- the driver: trace, order, errors ----

TEST(ReferenceEngine, TraceRecordsEveryLayerInApplicationOrder) {
  Circuit circuit(3);
  circuit.append(Channel::h(0))
      .append(Channel::rz(0.4, 0))
      .append(Channel::cnot(0, 1))
      .append(Channel::depolarize(0.1, 2));
  auto sum = PauliSum<1, double>::from_labels(3, {{"ZZI", 1.0}, {"IXX", 0.5}});
  std::vector<LayerRecord> seen;
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.on_layer = [&](const LayerRecord& r) { seen.push_back(r); };
  const PropagationStats stats = propagate(sum, circuit, options);
  ASSERT_EQ(stats.layers.size(), 4u);
  ASSERT_EQ(seen.size(), 4u);
  const char* names[] = {"depolarize", "cnot", "rz", "h"};
  std::size_t peak = 2;
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(stats.layers[k].application_index, k);
    EXPECT_EQ(stats.layers[k].circuit_index, 3 - k);
    EXPECT_EQ(stats.layers[k].gate_name, names[k]);
    EXPECT_EQ(seen[k].terms_out, stats.layers[k].terms_out);
    if (k > 0) {
      EXPECT_EQ(stats.layers[k].terms_in, stats.layers[k - 1].terms_out);
    }
    peak = std::max(peak, stats.layers[k].terms_out);
  }
  EXPECT_EQ(stats.layers[0].terms_in, 2u);
  EXPECT_EQ(stats.peak_terms, peak);
  EXPECT_EQ(stats.final_terms, sum.size());
}

TEST(ReferenceEngine, MismatchedQubitCountsAreRejected) {
  Circuit circuit(5);
  circuit.append(Channel::h(4));
  auto sum = PauliSum<1, double>::from_labels(4, {{"XIII", 1.0}});
  try {
    propagate(sum, circuit);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("4 qubits"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("5"), std::string::npos) << e.what();
  }
}

TEST(ReferenceEngine, ExactZerosAreDroppedWithoutTruncation) {
  // Heisenberg rx(θ): Z → cos θ·Z + sin θ·Y and Y → cos θ·Y − sin θ·Z. From sin θ·Z + cos θ·Y the Z
  // coefficient is sin θ·cos θ − cos θ·sin θ, exactly zero in floating point: it must not survive,
  // in either engine, even with no truncation policy.
  const double theta = 0.7;
  Circuit circuit(1);
  circuit.append(Channel::rx(theta, 0));
  for (Engine engine : {Engine::reference, Engine::cpu}) {
    auto sum = PauliSum<1, double>::from_labels(1, {{"Z", std::sin(theta)}, {"Y", std::cos(theta)}});
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.engine = engine;
    propagate(sum, circuit, options);
    ASSERT_EQ(sum.size(), 1u);
    EXPECT_EQ(sum.keys()[0], PauliString<1>::from_label("Y", 1));
    EXPECT_NEAR(sum.coefficients()[0], 1.0, 1e-15);
  }
}

// ---- the 127-qubit kicked Ising workload ----

TEST(KickedIsing, OneStepGivesCosThetaH) {
  const double theta_h = 0.37;
  auto sum = PauliSum<2, double>::from_labels(127, {{"Z62", 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  propagate(sum, kicked_ising_circuit(1, theta_h), options);
  const double value = ProductState::parse("z+", 127).expectation(sum);
  EXPECT_NEAR(value, std::cos(theta_h), 1e-15);
}

TEST(KickedIsing, ZeroKickKeepsZ62Exactly) {
  auto sum = PauliSum<2, double>::from_labels(127, {{"Z62", 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  propagate(sum, kicked_ising_circuit(3, 0.0), options);
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum.coefficient("Z62"), 1.0);
}

TEST(KickedIsing, PeakTermsMatchTheSeedsPublishedCounts) {
  // The original crate's published counts: 5 steps, θh = 5π/16, |c| > 2^-8 → 6 311 peak terms; 2^-10 → 79 029.
  for (const auto& [exponent, expected_peak] : {std::pair{-8, 6311u}, std::pair{-10, 79029u}}) {
    auto sum = PauliSum<2, double>::from_labels(127, {{"Z62", 1.0}});
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = Truncation::coeff(std::ldexp(1.0, exponent));
    options.keep_layer_records = false;
    const PropagationStats stats =
        propagate(sum, kicked_ising_circuit(5, 5 * std::numbers::pi / 16), options);
    EXPECT_EQ(stats.peak_terms, expected_peak) << "cutoff 2^" << exponent;
  }
}

}  // namespace
}  // namespace paulistrings
