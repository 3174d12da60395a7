// Measurement and reset channels on every engine: the reference engine, the CPU engine in each
// formulation, the GPU engine and CPU / GPU partitions against the dense oracle, on seeded random
// circuits with measurements (single Z, Pauli products of weight 1–4) and resets (Z, X, Y bases)
// mid-circuit, in both directions; the density-matrix check (⟨O⟩ after a circuit with mid-circuit
// measurements and resets, read in the Heisenberg picture from a product state, equals tr(ρ O) for the
// oracle's evolved density matrix); and the removed terms really leave the sum (no zero-coefficient
// terms stay behind in any engine). GPU cases skip with the reason on a machine without a GPU.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

constexpr std::size_t kQubits = 5;

struct EngineCase {
  std::string name;
  PropagateOptions options;
  std::size_t partitions = 1;  ///< > 1: propagate_partitioned
  bool gpu = false;
};

std::vector<EngineCase> engine_cases() {
  std::vector<EngineCase> cases;
  auto add = [&](std::string name, auto tweak, std::size_t partitions = 1, bool gpu = false) {
    EngineCase c{std::move(name), {}, partitions, gpu};
    c.options.threads = 2;
    c.options.parallel_threshold = 0;  // the parallel paths even for small sums
    c.options.min_buckets = 4;
    c.options.target_bucket_len = 4;
    tweak(c.options);
    cases.push_back(std::move(c));
  };
  add("reference", [](PropagateOptions& o) { o.engine = Engine::reference; });
  add("cpu", [](PropagateOptions&) {});
  add("cpu sort-merge, orbit rotations", [](PropagateOptions& o) {
    o.general_layer = GeneralLayer::sort_merge;
    o.in_place_rotations = false;
  });
  add(
      "cpu, 2 partitions", [](PropagateOptions&) {}, 2);
  add(
      "cpu, 4 partitions", [](PropagateOptions&) {}, 4);
  if (gpu::device_count() > 0) {
    add("gpu", [](PropagateOptions& o) { o.device = 0; });
    add(
        "gpu, 2 partitions", [](PropagateOptions&) {}, 2, true);
  }
  return cases;
}

template <Coefficient C>
PropagationStats run_case(const EngineCase& c, PauliSum<1, C>& sum, const Circuit& circuit,
                          Direction direction) {
  PropagateOptions options = c.options;
  options.direction = direction;
  if (c.partitions == 1) return propagate(sum, circuit, options);
  PartitionOptions partition;
  partition.partitions = c.partitions;
  if (c.gpu) {
    for (std::size_t r = 0; r < c.partitions; ++r)
      partition.devices.push_back(static_cast<int>(r) % gpu::device_count());
  }
  return propagate_partitioned(sum, circuit, options, partition).stats;
}

/// Every term of the sum has a nonzero coefficient (a removed term must leave, not stay as a zero).
template <Coefficient C>
::testing::AssertionResult no_zero_terms(const PauliSum<1, C>& sum) {
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (sum.coefficients()[i] == C(0.0))
      return ::testing::AssertionFailure() << "term " << i << " is an exact zero";
  }
  return ::testing::AssertionSuccess();
}

PauliSum<1, double> real_sum(std::size_t n, const std::vector<std::pair<std::string, Complex>>& terms) {
  std::vector<std::pair<std::string, double>> real;
  for (const auto& [label, c] : terms) real.emplace_back(label, c.real());
  return PauliSum<1, double>::from_labels(n, real);
}

PropagateOptions heisenberg_options() {
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  return options;
}

class MeasureResetAgainstOracle : public ::testing::TestWithParam<int> {};

TEST_P(MeasureResetAgainstOracle, EveryEngineBothDirections) {
  const int seed = GetParam();
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 7919 + 3);
  testing::RandomChannelOptions kinds;
  kinds.measurements = true;
  kinds.noise = seed % 3 == 0;
  const Circuit circuit = testing::random_circuit(rng, kQubits, 36, kinds);
  const auto terms = testing::random_terms(rng, kQubits, 24, /*complex_values=*/false);
  const PauliSum<1, double> start = real_sum(kQubits, terms);
  const testing::dense::Matrix input = testing::dense_operator(start, kQubits);
  for (const Direction direction : {Direction::heisenberg, Direction::forward}) {
    const testing::dense::Matrix expected = testing::apply_circuit_dense(input, circuit, direction, kQubits);
    for (const EngineCase& c : engine_cases()) {
      SCOPED_TRACE(c.name + ", " + std::string(to_string(direction)));
      PauliSum<1, double> actual = start;
      run_case(c, actual, circuit, direction);
      actual.check_invariants();
      EXPECT_TRUE(no_zero_terms(actual));
      EXPECT_TRUE(testing::operators_close(testing::dense_operator(actual, kQubits), expected, 1e-10));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Measure, MeasureResetAgainstOracle, ::testing::Range(0, 12));

TEST(MeasureReset, ComplexSumsToo) {
  std::mt19937_64 rng(11);
  testing::RandomChannelOptions kinds;
  kinds.measurements = true;
  const Circuit circuit = testing::random_circuit(rng, kQubits, 30, kinds);
  const auto terms = testing::random_terms(rng, kQubits, 20, /*complex_values=*/true);
  const PauliSum<1, Complex> start = PauliSum<1, Complex>::from_labels(kQubits, terms);
  const testing::dense::Matrix input = testing::dense_operator(start, kQubits);
  for (const Direction direction : {Direction::heisenberg, Direction::forward}) {
    const testing::dense::Matrix expected = testing::apply_circuit_dense(input, circuit, direction, kQubits);
    for (const EngineCase& c : engine_cases()) {
      SCOPED_TRACE(c.name + ", " + std::string(to_string(direction)));
      PauliSum<1, Complex> actual = start;
      run_case(c, actual, circuit, direction);
      EXPECT_TRUE(no_zero_terms(actual));
      EXPECT_TRUE(testing::operators_close(testing::dense_operator(actual, kQubits), expected, 1e-10));
    }
  }
}

TEST(MeasureReset, DensityMatrixExpectationWithMidCircuitMeasureAndReset) {
  // ⟨O⟩ = tr(E(ρ) O): ρ a product state evolved by the oracle's Kraus maps, O read back through the library
  // in the Heisenberg picture and evaluated on the product state.
  for (int seed = 0; seed < 6; ++seed) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed) + 101);
    testing::RandomChannelOptions kinds;
    kinds.measurements = true;
    kinds.noise = false;
    Circuit circuit = testing::random_circuit(rng, kQubits, 20, kinds);
    // Make sure this circuit measures and resets mid-circuit.
    Circuit with_both(kQubits);
    for (std::size_t k = 0; k < circuit.size(); ++k) {
      with_both.append(circuit[k]);
      if (k == 6) with_both.append(Channel::measure(static_cast<Qubit>(seed % kQubits)));
      if (k == 12) with_both.append(Channel::reset(static_cast<Qubit>((seed + 2) % kQubits)));
    }
    const std::string state = testing::random_product_label(rng, kQubits);
    const std::vector<Complex> psi = testing::dense::product_state(state);
    testing::dense::Matrix rho = testing::dense::Matrix::zeros(1 << kQubits);
    for (int r = 0; r < rho.dim(); ++r)
      for (int c = 0; c < rho.dim(); ++c) rho(r, c) = psi[r] * std::conj(psi[c]);
    const testing::dense::Matrix evolved =
        testing::apply_circuit_dense(rho, with_both, Direction::forward, kQubits);
    const auto terms = testing::random_terms(rng, kQubits, 6, false);
    const PauliSum<1, double> observable = real_sum(kQubits, terms);
    const Complex expected = testing::dense::trace(
        testing::dense::multiply(evolved, testing::dense_operator(observable, kQubits)));
    for (const EngineCase& c : engine_cases()) {
      SCOPED_TRACE(c.name + ", seed " + std::to_string(seed));
      PauliSum<1, double> sum = observable;
      run_case(c, sum, with_both, Direction::heisenberg);
      const double value = ProductState::parse(state, kQubits).expectation(sum);
      EXPECT_NEAR(value, expected.real(), 1e-10);
      EXPECT_NEAR(expected.imag(), 0.0, 1e-12);
    }
  }
}

TEST(MeasureReset, HighWeightMeasurementRemovesExactlyTheAnticommutingTerms) {
  // All 4^3 strings on qubits 0..2 (plus identity elsewhere), measured in XYZ: 32 commute, 32 go.
  std::vector<std::pair<std::string, double>> terms;
  for (int p = 0; p < 64; ++p) {
    std::string label(kQubits, 'I');
    for (int j = 0; j < 3; ++j) label[static_cast<std::size_t>(j)] = "IXZY"[(p >> (2 * j)) & 3];
    terms.emplace_back(label, 1.0 + p);
  }
  const PauliSum<1, double> start = PauliSum<1, double>::from_labels(kQubits, terms);
  Circuit circuit(kQubits);
  circuit.append(Channel::measure_pauli("XYZ", {0, 1, 2}));
  const PauliString<1> measured = PauliString<1>::from_label("XYZII", kQubits);
  for (const EngineCase& c : engine_cases()) {
    for (const Direction direction : {Direction::heisenberg, Direction::forward}) {
      SCOPED_TRACE(c.name + ", " + std::string(to_string(direction)));
      PauliSum<1, double> sum = start;
      run_case(c, sum, circuit, direction);
      ASSERT_EQ(sum.size(), 32u);
      for (std::size_t i = 0; i < sum.size(); ++i) {
        EXPECT_TRUE(sum.keys()[i].commutes_with(measured));
        EXPECT_NE(sum.coefficients()[i], 0.0);
      }
    }
  }
}

TEST(MeasureReset, TrailingMeasurementLeavesAZObservableAlone) {
  // The usual file ends with `measure q -> c`: a Z-type observable is unchanged, an X-type one vanishes.
  Circuit circuit(3);
  circuit.append(Channel::h(0));
  circuit.append(Channel::cnot(0, 1));
  for (Qubit q = 0; q < 3; ++q) circuit.append(Channel::measure(q));
  PauliSum<1, double> zz = PauliSum<1, double>::from_labels(3, {{"ZZI", 1.0}});
  propagate(zz, circuit, heisenberg_options());
  EXPECT_DOUBLE_EQ(ProductState::parse("z+", 3).expectation(zz), 1.0);
  PauliSum<1, double> xx = PauliSum<1, double>::from_labels(3, {{"XXI", 1.0}});
  propagate(xx, circuit, heisenberg_options());
  EXPECT_EQ(xx.size(), 0u);
}

TEST(MeasureReset, ResetPreparesTheBasisState) {
  // Whatever the state before, after reset to |+⟩ (X basis) ⟨X⟩ = 1 and ⟨Z⟩ = 0; likewise Y and Z bases.
  for (const char basis : {'X', 'Y', 'Z'}) {
    Circuit circuit(1);
    circuit.append(Channel::ry(0.7, 0));
    circuit.append(Channel::reset(0, basis));
    for (const char letter : {'X', 'Y', 'Z'}) {
      PauliSum<1, double> sum = PauliSum<1, double>::from_labels(1, {{std::string(1, letter), 1.0}});
      propagate(sum, circuit, heisenberg_options());
      EXPECT_DOUBLE_EQ(ProductState::parse("1", 1).expectation(sum), letter == basis ? 1.0 : 0.0)
          << "basis " << basis << ", observable " << letter;
    }
  }
}

}  // namespace
}  // namespace paulistrings
