// Tests ProductState: parsing of uniform names and per-qubit labels, label(), expectation values of
// real and complex Pauli sums against the dense oracle at several widths, the per-term rule on
// hand-picked terms, hand-computed sums on 65 and 200 qubits, and bad input.

#include "paulistrings/readout/product_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <initializer_list>
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

using testing::ComplexClose;
using testing::MakeSum;
using testing::ThrowsInvalidArgumentMentioning;

// The Pauli whose +1 or −1 eigenstate a per-qubit state character is.
char AxisLetter(char state) {
  return (state == '0' || state == '1') ? 'Z' : (state == '+' || state == '-') ? 'X' : 'Y';
}

// ⟨state|P|state⟩ of a single Pauli string (coefficient 1) on num_qubits qubits.
double SingleTermValue(const std::string& state, const std::string& label) {
  const auto sum = PauliSum<1, double>::from_labels(label.size(), {{label, 1.0}});
  return ProductState::parse(state, label.size()).expectation(sum);
}

// Random sums on an oracle window of `window` qubits placed at `offset` of a `total`-qubit register,
// against dense::expectation in the product state of the window's part of a random full label.
template <int W, Coefficient C>
void ExpectMatchesOracle(std::size_t window, std::size_t total, std::size_t offset, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 6; ++trial) {
    const std::string label = testing::random_product_label(rng, total);
    // Random strings are mostly zero-valued: add strings made of the state's own axis letters too.
    Terms terms = testing::random_terms(rng, window, 4 * window + 3, PauliSum<W, C>::kIsComplex);
    const Terms axis_weights = testing::random_terms(rng, 1, window, PauliSum<W, C>::kIsComplex);
    for (std::size_t k = 0; k < window; ++k) {
      std::string axis_string(window, 'I');
      for (std::size_t q = k; q < window; q += 1 + k % 2) axis_string[q] = AxisLetter(label[offset + q]);
      terms.emplace_back(axis_string, axis_weights[k].second);
    }
    const auto sum = MakeSum<W, C>(total, testing::shift_terms(terms, offset));
    const ProductState state = ProductState::parse(label, total);
    const Complex expected = dense::expectation(testing::dense_operator(sum, window, offset),
                                                dense::product_state(label.substr(offset, window)));
    const C actual = state.expectation(sum);
    EXPECT_TRUE(ComplexClose(Complex(actual), expected))
        << "W=" << W << " window=" << window << " offset=" << offset << " label=" << label;
    if constexpr (std::same_as<C, double>) {
      EXPECT_NEAR(expected.imag(), 0.0, 1e-12);
    }
  }
}

// ---------------------------------------------------------------- parsing

TEST(ProductStateParseTest, UniformNamesAreCaseInsensitive) {
  EXPECT_EQ(ProductState::parse("z+", 3).label(), "000");
  EXPECT_EQ(ProductState::parse("Z+", 3).label(), "000");
  EXPECT_EQ(ProductState::parse("x+", 4).label(), "++++");
  EXPECT_EQ(ProductState::parse("X+", 4).label(), "++++");
  EXPECT_EQ(ProductState::parse("y+", 2).label(), "rr");
  EXPECT_EQ(ProductState::parse("Y+", 2).label(), "rr");
  EXPECT_EQ(ProductState::parse("z+", 5).num_qubits(), 5u);
}

TEST(ProductStateParseTest, UniformNameOnManyQubitsCoversEveryWord) {
  const ProductState state = ProductState::parse("y+", 1024);
  EXPECT_EQ(state.num_qubits(), 1024u);
  EXPECT_EQ(state.label(), std::string(1024, 'r'));
}

TEST(ProductStateParseTest, UniformNameWinsOverAPerQubitReadingOfTwoCharacters) {
  // On two qubits "x+" could be read per qubit, but 'x' is not in the alphabet: it is the name.
  EXPECT_EQ(ProductState::parse("x+", 2).label(), "++");
  EXPECT_EQ(ProductState::parse("z+", 2).label(), "00");
}

TEST(ProductStateParseTest, PerQubitLabelsOverTheQiskitAlphabetRoundTrip) {
  for (const std::string label : {"0", "1", "+", "-", "r", "l", "01+-rl", "lr-+10", "rrr111---"}) {
    const ProductState state = ProductState::parse(label, label.size());
    EXPECT_EQ(state.label(), label);
    EXPECT_EQ(state.num_qubits(), label.size());
  }
}

TEST(ProductStateParseTest, LongRandomLabelsRoundTripAcrossWordBoundaries) {
  std::mt19937_64 rng(101);
  for (std::size_t n : {63u, 64u, 65u, 127u, 128u, 129u, 300u, 1024u}) {
    const std::string label = testing::random_product_label(rng, n);
    EXPECT_EQ(ProductState::parse(label, n).label(), label) << n << " qubits";
  }
}

TEST(ProductStateParseTest, ZeroQubits) {
  EXPECT_EQ(ProductState::parse("z+", 0).label(), "");
  EXPECT_EQ(ProductState::parse("", 0).label(), "");
}

// ---------------------------------------------------------------- the per-term rule

TEST(ProductStateExpectationTest, IdentityContributesItsCoefficient) {
  EXPECT_EQ(SingleTermValue("01+-rl", "IIIIII"), 1.0);
  const auto sum = PauliSum<1, double>::from_labels(3, {{"III", -2.5}});
  EXPECT_EQ(ProductState::parse("l-1", 3).expectation(sum), -2.5);
}

TEST(ProductStateExpectationTest, EachQubitGivesPlusMinusOneOnItsAxisAndZeroOtherwise) {
  // Per single qubit: ⟨P⟩ for every (state, Pauli) pair.
  struct Case {
    char state;
    double x, y, z;
  };
  for (const Case& c : {Case{'0', 0, 0, 1}, Case{'1', 0, 0, -1}, Case{'+', 1, 0, 0}, Case{'-', -1, 0, 0},
                        Case{'r', 0, 1, 0}, Case{'l', 0, -1, 0}}) {
    const std::string s(1, c.state);
    EXPECT_EQ(SingleTermValue(s, "I"), 1.0) << s;
    EXPECT_EQ(SingleTermValue(s, "X"), c.x) << s;
    EXPECT_EQ(SingleTermValue(s, "Y"), c.y) << s;
    EXPECT_EQ(SingleTermValue(s, "Z"), c.z) << s;
  }
}

TEST(ProductStateExpectationTest, HandPickedMultiQubitTerms) {
  EXPECT_EQ(SingleTermValue("0+r", "ZXY"), 1.0);
  EXPECT_EQ(SingleTermValue("0+r", "ZII"), 1.0);
  EXPECT_EQ(SingleTermValue("0+r", "IXI"), 1.0);
  EXPECT_EQ(SingleTermValue("0+r", "XXY"), 0.0);  // X on a Z-axis qubit
  EXPECT_EQ(SingleTermValue("0+r", "ZXX"), 0.0);  // X on a Y-axis qubit
  EXPECT_EQ(SingleTermValue("1-l", "ZXY"), -1.0);
  EXPECT_EQ(SingleTermValue("1-l", "ZXI"), 1.0);
  EXPECT_EQ(SingleTermValue("1-l", "IIY"), -1.0);
  EXPECT_EQ(SingleTermValue("1-l", "IZI"), 0.0);
  EXPECT_EQ(SingleTermValue("x+", "XXXX"), 1.0);
  EXPECT_EQ(SingleTermValue("x+", "XXZX"), 0.0);
  EXPECT_EQ(SingleTermValue("y+", "YIY"), 1.0);
  EXPECT_EQ(SingleTermValue("z+", "ZZZ"), 1.0);
  EXPECT_EQ(SingleTermValue("z+", "ZYZ"), 0.0);
}

TEST(ProductStateExpectationTest, SumOfHandPickedTermsIsLinear) {
  // State "0+r1": Z0 → 1, X1 → 1, Y2 → 1, Z3 → −1.
  const auto sum = PauliSum<1, double>::from_labels(
      4, {{"ZIII", 2.0}, {"ZXYZ", 3.0}, {"IIIZ", 5.0}, {"XIII", 7.0}, {"IIII", 0.5}, {"IXYI", -4.0}});
  // 2 + 3·(−1) + 5·(−1) + 0 + 0.5 − 4 = −9.5
  EXPECT_EQ(ProductState::parse("0+r1", 4).expectation(sum), -9.5);
}

TEST(ProductStateExpectationTest, ComplexCoefficientsAreSummedWithoutConjugation) {
  const auto sum = PauliSum<1, Complex>::from_labels(2, {{"ZI", Complex(1.0, 2.0)},
                                                         {"IX", Complex(0.0, -3.0)},
                                                         {"ZX", Complex(4.0, 1.0)},
                                                         {"XX", Complex(9.0, 9.0)}});
  // State "1+": Z0 → −1, X1 → 1.  −(1+2i) − 3i − (4+i) = −5 − 6i.
  EXPECT_EQ(ProductState::parse("1+", 2).expectation(sum), Complex(-5.0, -6.0));
}

TEST(ProductStateExpectationTest, EmptySumIsZero) {
  const PauliSum<2, Complex> sum(100);
  EXPECT_EQ(ProductState::parse("x+", 100).expectation(sum), Complex(0.0));
}

// ---------------------------------------------------------------- against the dense oracle

TEST(ProductStateOracleTest, RandomRealSumsMatchDenseExpectationW1) {
  for (std::size_t n = 1; n <= 6; ++n) ExpectMatchesOracle<1, double>(n, n, 0, 1000 + n);
}

TEST(ProductStateOracleTest, RandomComplexSumsMatchDenseExpectationW1) {
  for (std::size_t n = 1; n <= 6; ++n) ExpectMatchesOracle<1, Complex>(n, n, 0, 2000 + n);
}

TEST(ProductStateOracleTest, RandomSumsAcrossTheFirstWordBoundaryMatchDenseExpectation) {
  // Oracle qubits 60…65 of a 70-qubit register straddle words 0 and 1.
  ExpectMatchesOracle<2, double>(6, 70, 60, 3001);
  ExpectMatchesOracle<2, Complex>(6, 70, 60, 3002);
  ExpectMatchesOracle<2, double>(5, 128, 123, 3003);
}

TEST(ProductStateOracleTest, RandomSumsOnWideRegistersMatchDenseExpectation) {
  ExpectMatchesOracle<4, double>(6, 200, 125, 4001);
  ExpectMatchesOracle<4, Complex>(5, 256, 251, 4002);
  ExpectMatchesOracle<8, Complex>(4, 300, 190, 4003);
  ExpectMatchesOracle<16, double>(4, 1024, 1020, 4004);
}

TEST(ProductStateOracleTest, UniformNamesMatchDenseExpectation) {
  std::mt19937_64 rng(5001);
  for (const auto& [name, letter] : {std::pair{"z+", '0'}, std::pair{"X+", '+'}, std::pair{"y+", 'r'}}) {
    for (std::size_t n = 2; n <= 5; ++n) {
      const auto sum = MakeSum<1, Complex>(n, testing::random_terms(rng, n, 20, true));
      const Complex expected =
          dense::expectation(testing::dense_operator(sum, n), dense::product_state(std::string(n, letter)));
      EXPECT_TRUE(ComplexClose(ProductState::parse(name, n).expectation(sum), expected))
          << name << " on " << n;
    }
  }
}

TEST(ProductStateOracleTest, AxisStringsOfTheStateAreMatchedAgainstTheOracle) {
  // Sums made of the state's own axis letters (all nonzero values): signs must agree exactly.
  std::mt19937_64 rng(5002);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 2 + trial % 5;
    const std::string label = testing::random_product_label(rng, n);
    Terms terms;
    std::bernoulli_distribution keep(0.5);
    for (int t = 0; t < 8; ++t) {
      std::string pauli(n, 'I');
      for (std::size_t q = 0; q < n; ++q) {
        if (!keep(rng)) continue;
        pauli[q] = AxisLetter(label[q]);
      }
      terms.emplace_back(pauli, Complex(t + 1.0, 0.0));
    }
    const auto sum = MakeSum<1, double>(n, terms);
    const Complex expected = dense::expectation(testing::dense_operator(sum, n), dense::product_state(label));
    EXPECT_TRUE(ComplexClose(ProductState::parse(label, n).expectation(sum), expected)) << label;
  }
}

// ---------------------------------------------------------------- large registers (hand-computed)

TEST(ProductStateLargeTest, SixtyFiveQubits) {
  const auto sum = PauliSum<2, double>::from_labels(65, {{"Z0 Z64", 2.0},
                                                         {"X3", 5.0},
                                                         {"Z64", -1.5},
                                                         {"I", 0.25},
                                                         {"Y10 Z20", 7.0},
                                                         {"X63", 3.0},
                                                         {"Z63", 4.0}});
  // |0…0⟩: 2 − 1.5 + 0.25 + 4 (Z63) = 4.75.
  EXPECT_EQ(ProductState::parse("z+", 65).expectation(sum), 4.75);
  // Qubit 63 is |−⟩ and qubit 64 is |1⟩: −2 + 1.5 + 0.25 − 3 = −3.25.
  std::string label(65, '0');
  label[63] = '-';
  label[64] = '1';
  EXPECT_EQ(ProductState::parse(label, 65).expectation(sum), -3.25);
  // |+…+⟩: only X3, X63 and the identity survive: 5 + 3 + 0.25.
  EXPECT_EQ(ProductState::parse("x+", 65).expectation(sum), 8.25);
}

TEST(ProductStateLargeTest, TwoHundredQubits) {
  const auto x_sum = PauliSum<4, double>::from_labels(
      200, {{"X0 X63 X64 X127 X128 X199", 1.5}, {"X199 Z5", 9.0}, {"I", -0.5}});
  EXPECT_EQ(ProductState::parse("x+", 200).expectation(x_sum), 1.0);
  EXPECT_EQ(ProductState::parse("z+", 200).expectation(x_sum), -0.5);

  const auto y_sum = PauliSum<4, double>::from_labels(200, {{"Y0 Y199", 2.0}, {"X0", 1.0}, {"Y150", -3.0}});
  EXPECT_EQ(ProductState::parse("Y+", 200).expectation(y_sum), -1.0);

  // Per-qubit label cycling 0 1 + - r l: qubits with q % 6 odd are negative eigenstates (100 of them).
  std::string label(200, '0');
  std::string full_axis(200, 'I');
  for (std::size_t q = 0; q < 200; ++q) {
    label[q] = "01+-rl"[q % 6];
    full_axis[q] = "ZZXXYY"[q % 6];
  }
  const auto mixed = PauliSum<4, Complex>::from_labels(200, {{full_axis, Complex(2.0, 3.0)},
                                                             {"Z1 X3 Y5", Complex(1.0, -1.0)},
                                                             {"X0", Complex(100.0, 0.0)},
                                                             {"Z199", Complex(0.0, 8.0)},
                                                             {"Z4", Complex(50.0, 50.0)}});
  // full_axis: (−1)^100 = +1; Z1 X3 Y5: (−1)^3; X0 on |0⟩ and Z4 on |r⟩: 0; Z199 on qubit 199 = '1' (199 % 6
  // = 1): −1. (2 + 3i) − (1 − i) + 0 − 8i = 1 − 4i.
  EXPECT_EQ(ProductState::parse(label, 200).expectation(mixed), Complex(1.0, -4.0));
}

// ---------------------------------------------------------------- bad input

TEST(ProductStateBadInputTest, WrongLengthIsRejected) {
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { ProductState::parse("01+", 4); }, {"'01+'", "4-character"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { ProductState::parse("01+-r", 4); }, {"'01+-r'", "4-character"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("", 3); }, {"3-character"}));
}

TEST(ProductStateBadInputTest, BadCharacterIsRejectedWithItsQubit) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("01x-", 4); }, {"'x'", "qubit 2"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("0Z", 2); }, {"'Z'", "qubit 1"}));
  // The per-qubit alphabet is case-sensitive.
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("R0", 2); }, {"'R'", "qubit 0"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("0L", 2); }, {"'L'", "qubit 1"}));
}

TEST(ProductStateBadInputTest, UnknownNameIsRejected) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("z-", 5); }, {"'z-'", "z+"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("w+", 3); }, {"'w+'", "x+"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("zero", 3); }, {"'zero'"}));
  // A two-character unknown name on two qubits is read per qubit and fails on its character.
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("w+", 2); }, {"'w'", "qubit 0"}));
}

TEST(ProductStateBadInputTest, TooManyQubitsIsRejected) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { ProductState::parse("z+", 1025); }, {"1025", "1024"}));
}

TEST(ProductStateBadInputTest, QubitCountMismatchWithTheSumIsRejected) {
  const ProductState state = ProductState::parse("z+", 3);
  const auto sum = PauliSum<1, double>::from_labels(4, {{"ZIII", 1.0}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { state.expectation(sum); }, {"3 qubits", "sum has 4"}));
  const auto wide = PauliSum<2, Complex>::from_labels(70, {{"Z69", 1.0}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { state.expectation(wide); }, {"3 qubits", "sum has 70"}));
}

}  // namespace
}  // namespace paulistrings
