// Tests StabilizerState: signed dense and sparse generators, exact 0/±1 values per term, expectation
// values of random sums in random stabilizer states against the dense oracle (also inside wide
// registers), a hand-computed 300-qubit GHZ state, and the rejection of bad generator sets.

#include "paulistrings/readout/stabilizer_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/dense_simulator.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

namespace dense = testing::dense;
using Terms = std::vector<std::pair<std::string, Complex>>;
using Generators = std::vector<std::string>;

using testing::ComplexClose;
using testing::MakeSum;
using testing::ThrowsInvalidArgumentMentioning;

StabilizerState FromGenerators(const Generators& generators, std::size_t num_qubits) {
  return StabilizerState::from_generators(generators, num_qubits);
}

// ⟨P⟩ of one Pauli string (dense or sparse label) with coefficient 1.
template <int W = 1>
double Value(const StabilizerState& state, const std::string& label) {
  const auto sum = PauliSum<W, double>::from_labels(state.num_qubits(), {{label, 1.0}});
  return state.expectation(sum);
}

// All 4^n dense labels on n qubits.
std::vector<std::string> AllLabels(std::size_t n) {
  std::vector<std::string> labels = {""};
  for (std::size_t q = 0; q < n; ++q) {
    std::vector<std::string> longer;
    for (const std::string& prefix : labels) {
      for (char letter : std::string("IXYZ")) longer.push_back(prefix + letter);
    }
    labels = std::move(longer);
  }
  return labels;
}

// A signed dense generator on `window` qubits, moved to qubit `offset` as a signed sparse label.
std::string ShiftGenerator(const std::string& generator, std::size_t offset) {
  const char sign = generator[0];
  const std::string label = generator.substr(1);
  std::string sparse(1, sign);
  for (std::size_t q = 0; q < label.size(); ++q) {
    if (label[q] == 'I') continue;
    if (sparse.size() > 1) sparse += ' ';
    sparse += label[q] + std::to_string(q + offset);
  }
  return sparse;
}

// Two random stabilizer states per register size, drawn once from a seed fixed per size (so the
// states do not depend on which tests run): random_stabilizer_generators propagates a Clifford
// circuit for every generator, which is slow compared with everything else here.
const std::vector<Generators>& RandomStates(std::size_t num_qubits) {
  static std::map<std::size_t, std::vector<Generators>> cache;
  auto [it, inserted] = cache.try_emplace(num_qubits);
  if (inserted) {
    std::mt19937_64 rng(9000 + num_qubits);
    for (int k = 0; k < 2; ++k) it->second.push_back(testing::random_stabilizer_generators(rng, num_qubits));
  }
  return it->second;
}

// Random stabilizer states on `window` qubits at `offset` of a `total`-qubit register (the other
// qubits in |0⟩, stabilized by +Z_q) and random sums on the window, against the oracle.
template <int W, Coefficient C>
void ExpectMatchesOracle(std::size_t window, std::size_t total, std::size_t offset, std::uint64_t seed,
                         int trials) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const Generators& local = RandomStates(window)[static_cast<std::size_t>(trial) % 2];
    Generators generators;
    for (std::size_t q = 0; q < offset; ++q) generators.push_back("+Z" + std::to_string(q));
    for (const std::string& g : local) {
      generators.push_back(offset == 0 && total == window ? g : ShiftGenerator(g, offset));
    }
    for (std::size_t q = offset + window; q < total; ++q) generators.push_back("+Z" + std::to_string(q));
    const StabilizerState state = StabilizerState::from_generators(generators, total);
    const std::vector<Complex> psi = dense::stabilizer_state(static_cast<int>(window), local);

    // Group elements up to sign: each generator and the product of each pair (never the identity,
    // the generators being independent).
    std::vector<std::string> group_elements;
    const auto bits = [](char c) { return c == 'X' ? 1 : c == 'Z' ? 2 : c == 'Y' ? 3 : 0; };
    for (std::size_t i = 0; i < local.size(); ++i) {
      for (std::size_t j = i; j < local.size(); ++j) {
        std::string product(window, 'I');
        for (std::size_t q = 0; q < window; ++q) {
          product[q] = "IXZY"[bits(local[i][q + 1]) ^ (i == j ? 0 : bits(local[j][q + 1]))];
        }
        group_elements.push_back(product);
      }
    }

    // A random sum (mostly zero-valued strings) plus every group element with a random coefficient.
    Terms terms = testing::random_terms(rng, window, 5 * window, PauliSum<W, C>::kIsComplex);
    const Terms weights = testing::random_terms(rng, 1, group_elements.size(), PauliSum<W, C>::kIsComplex);
    for (std::size_t k = 0; k < group_elements.size(); ++k) {
      terms.emplace_back(group_elements[k], weights[k].second);
    }
    const auto sum = MakeSum<W, C>(total, testing::shift_terms(terms, offset));
    const Complex expected = dense::expectation(testing::dense_operator(sum, window, offset), psi);
    EXPECT_TRUE(ComplexClose(Complex(state.expectation(sum)), expected))
        << "W=" << W << " window=" << window << " offset=" << offset << " trial " << trial;

    // Each group element alone reads exactly ±1, as the oracle says.
    for (const std::string& element : group_elements) {
      const auto single = MakeSum<W, double>(total, testing::shift_terms({{element, 1.0}}, offset));
      const double value = state.expectation(single);
      EXPECT_TRUE(value == 1.0 || value == -1.0) << element << " -> " << value;
      EXPECT_NEAR(value, dense::expectation(testing::dense_operator(single, window, offset), psi).real(),
                  1e-12)
          << element;
    }
  }
}

// ---------------------------------------------------------------- hand-checked small states

TEST(StabilizerStateTest, BellPairValues) {
  const StabilizerState bell = FromGenerators({"+XX", "+ZZ"}, 2);
  EXPECT_EQ(bell.num_qubits(), 2u);
  EXPECT_EQ(Value(bell, "XX"), 1.0);
  EXPECT_EQ(Value(bell, "ZZ"), 1.0);
  EXPECT_EQ(Value(bell, "YY"), -1.0);
  EXPECT_EQ(Value(bell, "II"), 1.0);
  EXPECT_EQ(Value(bell, "XI"), 0.0);
  EXPECT_EQ(Value(bell, "IZ"), 0.0);
  EXPECT_EQ(Value(bell, "XY"), 0.0);
  EXPECT_EQ(Value(bell, "ZX"), 0.0);
  const auto sum = PauliSum<1, Complex>::from_labels(2, {{"XX", Complex(1.0, 2.0)},
                                                         {"YY", Complex(3.0, 0.0)},
                                                         {"ZZ", Complex(0.0, -1.0)},
                                                         {"XZ", 9.0},
                                                         {"II", 0.5}});
  // (1+2i) − 3 − i + 0 + 0.5
  EXPECT_EQ(bell.expectation(sum), Complex(-1.5, 1.0));
}

TEST(StabilizerStateTest, BareGeneratorsMeanPlus) {
  const StabilizerState bare = FromGenerators({"XX", "ZZ"}, 2);
  for (const std::string label : {"XX", "YY", "ZZ", "XI", "IY"}) {
    EXPECT_EQ(Value(bare, label), Value(FromGenerators({"+XX", "+ZZ"}, 2), label)) << label;
  }
}

TEST(StabilizerStateTest, SignsOfGeneratorsAreApplied) {
  // YY = −XX·ZZ.
  const StabilizerState minus_x = FromGenerators({"-XX", "+ZZ"}, 2);
  EXPECT_EQ(Value(minus_x, "XX"), -1.0);
  EXPECT_EQ(Value(minus_x, "ZZ"), 1.0);
  EXPECT_EQ(Value(minus_x, "YY"), 1.0);
  const StabilizerState minus_z = FromGenerators({"+XX", "-ZZ"}, 2);
  EXPECT_EQ(Value(minus_z, "ZZ"), -1.0);
  EXPECT_EQ(Value(minus_z, "YY"), 1.0);
  const StabilizerState both = FromGenerators({"-XX", "-ZZ"}, 2);
  EXPECT_EQ(Value(both, "YY"), -1.0);
  // |1 0 1⟩ and |+ − r⟩.
  const StabilizerState basis = FromGenerators({"-ZII", "+IZI", "-IIZ"}, 3);
  EXPECT_EQ(Value(basis, "ZZZ"), 1.0);
  EXPECT_EQ(Value(basis, "ZZI"), -1.0);
  EXPECT_EQ(Value(basis, "XII"), 0.0);
  const StabilizerState mixed = FromGenerators({"+XII", "-IXI", "IIY"}, 3);
  EXPECT_EQ(Value(mixed, "XXY"), -1.0);
  EXPECT_EQ(Value(mixed, "IXY"), -1.0);
  EXPECT_EQ(Value(mixed, "IIZ"), 0.0);
}

TEST(StabilizerStateTest, SparseGeneratorLabelsEqualDenseOnes) {
  const StabilizerState dense_labels = FromGenerators({"+XXX", "-ZZI", "+IZZ"}, 3);
  const StabilizerState sparse_labels = FromGenerators({"+X0 X1 X2", "-Z0 Z1", "Z1 Z2"}, 3);
  const std::vector<Complex> psi = dense::stabilizer_state(3, {"+XXX", "-ZZI", "+IZZ"});
  for (const std::string& label : AllLabels(3)) {
    EXPECT_EQ(Value(dense_labels, label), Value(sparse_labels, label)) << label;
    EXPECT_NEAR(Value(sparse_labels, label), dense::expectation(dense::pauli_matrix(label), psi).real(),
                1e-12)
        << label;
  }
  EXPECT_EQ(Value(sparse_labels, "ZZI"), -1.0);
  EXPECT_EQ(Value(sparse_labels, "Z0 Z2"), -1.0);
  EXPECT_EQ(Value(sparse_labels, "XXX"), 1.0);
}

TEST(StabilizerStateTest, EquivalentGeneratingSetsGiveTheSameState) {
  // {+XX, +ZZ} and {−YY, +ZZ} generate the same group; generator order does not matter either.
  const StabilizerState a = FromGenerators({"+XX", "+ZZ"}, 2);
  const StabilizerState b = FromGenerators({"-YY", "+ZZ"}, 2);
  const StabilizerState c = FromGenerators({"+ZZ", "+XX"}, 2);
  for (const std::string& label : AllLabels(2)) {
    EXPECT_EQ(Value(a, label), Value(b, label)) << label;
    EXPECT_EQ(Value(a, label), Value(c, label)) << label;
  }
}

TEST(StabilizerStateTest, EveryPauliValueIsExactlyZeroOrPlusMinusOneAndMatchesTheOracle) {
  for (std::size_t n : {2u, 3u, 4u}) {
    for (const Generators& generators : RandomStates(n)) {
      const StabilizerState state = FromGenerators(generators, n);
      const std::vector<Complex> psi = dense::stabilizer_state(static_cast<int>(n), generators);
      std::size_t nonzero = 0;
      for (const std::string& label : AllLabels(n)) {
        const double value = Value(state, label);
        EXPECT_TRUE(value == 0.0 || value == 1.0 || value == -1.0) << label << " -> " << value;
        EXPECT_NEAR(value, dense::expectation(dense::pauli_matrix(label), psi).real(), 1e-12) << label;
        nonzero += value != 0.0;
      }
      // The stabilizer group has exactly 2^n elements (up to sign), the identity included.
      EXPECT_EQ(nonzero, std::size_t{1} << n);
      for (const std::string& g : generators) {
        EXPECT_EQ(Value(state, g.substr(1)), g[0] == '-' ? -1.0 : 1.0) << g;
      }
    }
  }
}

// ---------------------------------------------------------------- against the dense oracle

TEST(StabilizerStateOracleTest, RandomRealSumsInRandomStatesW1) {
  for (std::size_t n = 2; n <= 6; ++n) ExpectMatchesOracle<1, double>(n, n, 0, 8000 + n, 4);
}

TEST(StabilizerStateOracleTest, RandomComplexSumsInRandomStatesW1) {
  for (std::size_t n = 2; n <= 6; ++n) ExpectMatchesOracle<1, Complex>(n, n, 0, 8100 + n, 4);
}

TEST(StabilizerStateOracleTest, RandomStatesInsideWideRegisters) {
  // Windows straddling word boundaries; the rest of the register is |0…0⟩.
  ExpectMatchesOracle<2, double>(5, 70, 61, 8201, 3);
  ExpectMatchesOracle<2, Complex>(4, 128, 62, 8202, 3);
  ExpectMatchesOracle<4, Complex>(5, 200, 126, 8203, 3);
  ExpectMatchesOracle<16, double>(4, 1024, 1020, 8204, 2);
}

// ---------------------------------------------------------------- a large hand-computed state

class StabilizerGhzTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kQubits = 300;

  // +X…X (or −X…X) and +Z_i Z_{i+1}: n independent commuting generators of GHZ±.
  static Generators Ghz(char sign) {
    Generators generators = {std::string(1, sign) + std::string(kQubits, 'X')};
    for (std::size_t i = 0; i + 1 < kQubits; ++i) {
      generators.push_back("+Z" + std::to_string(i) + " Z" + std::to_string(i + 1));
    }
    return generators;
  }

  // X on every qubit except Y on `y_qubits`.
  static std::string XWithYOn(std::initializer_list<std::size_t> y_qubits) {
    std::string label(kQubits, 'X');
    for (std::size_t q : y_qubits) label[q] = 'Y';
    return label;
  }
};

TEST_F(StabilizerGhzTest, HandComputedValuesOnThreeHundredQubits) {
  const StabilizerState ghz = StabilizerState::from_generators(Ghz('+'), kQubits);
  EXPECT_EQ(ghz.num_qubits(), kQubits);
  EXPECT_EQ(Value<8>(ghz, std::string(kQubits, 'X')), 1.0);
  EXPECT_EQ(Value<8>(ghz, "Z0 Z299"), 1.0);
  EXPECT_EQ(Value<8>(ghz, "Z63 Z64"), 1.0);
  EXPECT_EQ(Value<8>(ghz, "Z5 Z100 Z200 Z299"), 1.0);
  EXPECT_EQ(Value<8>(ghz, "Z0"), 0.0);
  EXPECT_EQ(Value<8>(ghz, "Z0 Z1 Z2"), 0.0);
  EXPECT_EQ(Value<8>(ghz, "X0"), 0.0);
  EXPECT_EQ(Value<8>(ghz, "X0 X299"), 0.0);
  // X…X · Z_a Z_b = (XZ)(XZ) X… = (−i)² Y_a Y_b X… = −Y_a Y_b X…, so ⟨Y_a Y_b X…⟩ = −1; with four Ys +1.
  EXPECT_EQ(Value<8>(ghz, XWithYOn({0, 1})), -1.0);
  EXPECT_EQ(Value<8>(ghz, XWithYOn({63, 64})), -1.0);
  EXPECT_EQ(Value<8>(ghz, XWithYOn({7, 255, 256, 299})), 1.0);
  EXPECT_EQ(Value<8>(ghz, XWithYOn({7})), 0.0);
  EXPECT_EQ(Value<8>(ghz, XWithYOn({1, 2, 3})), 0.0);

  const auto sum =
      PauliSum<16, Complex>::from_labels(kQubits, {{std::string(kQubits, 'X'), Complex(2.0, 1.0)},
                                                   {XWithYOn({10, 200}), Complex(0.0, 3.0)},
                                                   {"Z0 Z299", Complex(-4.0, 0.0)},
                                                   {"Z150", Complex(100.0, 100.0)},
                                                   {"I", Complex(0.5, 0.0)}});
  // (2 + i) − 3i − 4 + 0 + 0.5
  EXPECT_EQ(ghz.expectation(sum), Complex(-1.5, -2.0));
}

TEST_F(StabilizerGhzTest, NegativeGhzFlipsTheOddParitySectorsOnly) {
  const StabilizerState ghz = StabilizerState::from_generators(Ghz('-'), kQubits);
  EXPECT_EQ(Value<8>(ghz, std::string(kQubits, 'X')), -1.0);
  EXPECT_EQ(Value<8>(ghz, XWithYOn({0, 1})), 1.0);
  EXPECT_EQ(Value<8>(ghz, XWithYOn({7, 255, 256, 299})), -1.0);
  EXPECT_EQ(Value<8>(ghz, "Z0 Z299"), 1.0);
  EXPECT_EQ(Value<8>(ghz, "Z17"), 0.0);
}

// ---------------------------------------------------------------- bad input

TEST(StabilizerStateBadInputTest, WrongNumberOfGenerators) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { FromGenerators({"+XX"}, 2); }, {"expected 2", "got 1"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XI", "+IX", "+XX"}, 2);
      },
      {"expected 2", "got 3"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { FromGenerators({}, 3); }, {"expected 3", "got 0"}));
}

TEST(StabilizerStateBadInputTest, AnticommutingGenerators) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XI", "+ZI"}, 2);
      },
      {"'+XI'", "'+ZI'", "anticommute"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+ZZI", "+IIX", "+XIZ"}, 3);
      },
      {"'+ZZI'", "'+XIZ'", "anticommute"}));
}

TEST(StabilizerStateBadInputTest, DependentGenerators) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XX", "+XX"}, 2);
      },
      {"not independent"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XXI", "+ZZI", "-YYI"}, 3);
      },
      {"not independent"}));
  // Contradictory signs: +ZZ and −ZZ (their product is −I).
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+ZZ", "-ZZ"}, 2);
      },
      {"not independent"}));
}

TEST(StabilizerStateBadInputTest, IdentityGenerator) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XX", "+II"}, 2);
      },
      {"'+II'", "identity"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"-II", "+ZZ"}, 2);
      },
      {"'-II'", "identity"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { FromGenerators({"+ZZ", "I"}, 2); }, {"'I'", "identity"}));
}

TEST(StabilizerStateBadInputTest, NonHermitianSign) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+iXX", "+ZZ"}, 2);
      },
      {"'+iXX'", "Hermitian"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XX", "-iZZ"}, 2);
      },
      {"'-iZZ'", "Hermitian"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"iXX", "+ZZ"}, 2);
      },
      {"'iXX'", "Hermitian"}));
}

TEST(StabilizerStateBadInputTest, MalformedLabels) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { FromGenerators({"+XQ", "+ZZ"}, 2); }, {"'XQ'", "'Q'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+XXX", "+ZZ"}, 2);
      },
      {"'XXX'", "3 characters"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+X0 X5", "+Z0 Z1"}, 2);
      },
      {"qubit 5", "out of range"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        FromGenerators({"+X0 X0", "+Z0 Z1"}, 2);
      },
      {"more than once"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { FromGenerators({"+-XX", "+ZZ"}, 2); }, {"'-'"}));
}

TEST(StabilizerStateBadInputTest, QubitCountMismatchWithTheSum) {
  const StabilizerState bell = FromGenerators({"+XX", "+ZZ"}, 2);
  const auto sum = PauliSum<1, double>::from_labels(3, {{"XXI", 1.0}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { bell.expectation(sum); }, {"2 qubits", "sum has 3"}));
}

}  // namespace
}  // namespace paulistrings
