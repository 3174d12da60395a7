// Tests AnyPauliSum: width chosen from the qubit count, real-versus-complex storage, conversions,
// arithmetic with promotion, read-outs, equality and visit().

#include "paulistrings/core/any_pauli_sum.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/testing/assertions.h"

namespace paulistrings {
namespace {

using Terms = std::vector<std::pair<std::string, Complex>>;

using testing::ThrowsInvalidArgumentMentioning;

::testing::AssertionResult InvariantsHold(const AnyPauliSum& sum) {
  try {
    sum.visit([](const auto& s) { s.check_invariants(); });
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  return ::testing::AssertionSuccess();
}

std::string Sparse(char letter, std::size_t qubit) { return letter + std::to_string(qubit); }

TEST(AnyPauliSumTest, WidthIsTheSmallestThatFits) {
  const std::vector<std::pair<std::size_t, int>> expected = {{0, 1},   {1, 1},    {64, 1},    {65, 2},
                                                             {128, 2}, {129, 4},  {256, 4},   {257, 8},
                                                             {512, 8}, {513, 16}, {1000, 16}, {1024, 16}};
  for (const auto& [qubits, width] : expected) {
    for (bool complex : {false, true}) {
      const AnyPauliSum sum(qubits, complex);
      EXPECT_EQ(sum.width(), width) << qubits;
      EXPECT_EQ(sum.num_qubits(), qubits);
      EXPECT_EQ(sum.is_complex(), complex);
      EXPECT_EQ(sum.size(), 0u);
      EXPECT_EQ(sum.num_buckets(), 1u);
      const int visited_width = sum.visit([](const auto& s) { return std::decay_t<decltype(s)>::kWidth; });
      EXPECT_EQ(visited_width, width);
    }
    if (qubits > 0) {
      const AnyPauliSum from_labels = AnyPauliSum::from_labels(qubits, Terms{{Sparse('Z', qubits - 1), 1.0}});
      EXPECT_EQ(from_labels.width(), width) << qubits;
      EXPECT_EQ(from_labels.coefficient(Sparse('Z', qubits - 1)), Complex(1.0));
    }
  }
}

TEST(AnyPauliSumTest, MoreThan1024QubitsThrowNaming1024) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { AnyPauliSum sum(1025); }, {"1024", "1025"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { AnyPauliSum sum(1025, true); }, {"1024"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] {
        AnyPauliSum::from_labels(2000, Terms{{"X0", 1.0}});
      },
      {"1024"}));
  const std::vector<std::uint64_t> words(16, 0);
  const std::vector<Complex> one = {1.0};
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { AnyPauliSum::from_arrays(1025, words, words, 16, one); },
                                              {"1024"}));
}

TEST(AnyPauliSumTest, StorageIsRealUnlessAnImaginaryPartIsNonzero) {
  const AnyPauliSum real = AnyPauliSum::from_labels(5, Terms{{"XIZII", 1.0}, {"Y4", Complex(-2.0, 0.0)}});
  EXPECT_FALSE(real.is_complex());
  EXPECT_TRUE((std::holds_alternative<PauliSum<1, double>>(real.variant())));
  const AnyPauliSum negative_zero = AnyPauliSum::from_labels(5, Terms{{"X0", Complex(1.0, -0.0)}});
  EXPECT_FALSE(negative_zero.is_complex());
  const AnyPauliSum complex = AnyPauliSum::from_labels(5, Terms{{"X0", 1.0}, {"Z1", Complex(0.0, 0.5)}});
  EXPECT_TRUE(complex.is_complex());
  EXPECT_TRUE((std::holds_alternative<PauliSum<1, Complex>>(complex.variant())));
  EXPECT_EQ(complex.coefficient("Z1"), Complex(0.0, 0.5));
  const AnyPauliSum forced = AnyPauliSum::from_labels(5, Terms{{"X0", 1.0}}, /*force_complex=*/true);
  EXPECT_TRUE(forced.is_complex());
  EXPECT_EQ(forced, AnyPauliSum::from_labels(5, Terms{{"X0", 1.0}}));
  // An imaginary part that sums away still selects complex storage (the rule looks at the input).
  const AnyPauliSum cancelled =
      AnyPauliSum::from_labels(5, Terms{{"X0", Complex(1, 1)}, {"X0", Complex(0, -1)}});
  EXPECT_TRUE(cancelled.is_complex());
  EXPECT_EQ(cancelled.coefficient("X0"), Complex(1.0));
}

TEST(AnyPauliSumTest, FromArraysFollowsTheSameStorageRule) {
  // 65 qubits: width 2, rows of two words; qubit 64 is bit 0 of word 1.
  const std::vector<std::uint64_t> x = {0b1, 0, 0, 0b1};
  const std::vector<std::uint64_t> z = {0, 0, 0b10, 0b1};
  const std::vector<Complex> real_values = {2.0, -1.0};
  const AnyPauliSum real = AnyPauliSum::from_arrays(65, x, z, 2, real_values);
  EXPECT_EQ(real.width(), 2);
  EXPECT_FALSE(real.is_complex());
  EXPECT_EQ(real.coefficient("X0"), Complex(2.0));
  EXPECT_EQ(real.coefficient("Z1 Y64"), Complex(-1.0));
  const std::vector<Complex> complex_values = {2.0, Complex(0, 1)};
  EXPECT_TRUE(AnyPauliSum::from_arrays(65, x, z, 2, complex_values).is_complex());
  EXPECT_TRUE(AnyPauliSum::from_arrays(65, x, z, 2, real_values, true).is_complex());
  // Narrow rows are padded; bits beyond the qubit count are rejected naming the row.
  const std::vector<std::uint64_t> x1 = {0b1, 0}, z1 = {0, std::uint64_t{1} << 63};
  EXPECT_EQ(AnyPauliSum::from_arrays(65, x1, z1, 1, real_values).coefficient("Z63"), Complex(-1.0));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { AnyPauliSum::from_arrays(63, x1, z1, 1, real_values); },
                                              {"row 1", "qubit 63"}));
}

TEST(AnyPauliSumTest, MakeComplexAndMakeReal) {
  AnyPauliSum sum = AnyPauliSum::from_labels(130, Terms{{"X0 Z129", 1.5}, {"Y64", -2.0}});
  EXPECT_EQ(sum.width(), 4);
  const AnyPauliSum original = sum;
  sum.make_complex();
  EXPECT_TRUE(sum.is_complex());
  EXPECT_TRUE((std::holds_alternative<PauliSum<4, Complex>>(sum.variant())));
  EXPECT_EQ(sum, original);
  EXPECT_TRUE(InvariantsHold(sum));
  sum.make_complex();  // idempotent
  EXPECT_TRUE(sum.is_complex());
  sum.make_real();
  EXPECT_FALSE(sum.is_complex());
  EXPECT_EQ(sum, original);
  EXPECT_EQ(sum.terms(), original.terms());
  sum.make_real();  // idempotent
  EXPECT_FALSE(sum.is_complex());

  AnyPauliSum imaginary = AnyPauliSum::from_labels(130, Terms{{"X0", 1.0}, {"Z100", Complex(1.0, -3.0)}});
  const AnyPauliSum before = imaginary;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { imaginary.make_real(); }, {"Z100", "imaginary"}));
  EXPECT_TRUE(imaginary.is_complex());  // unchanged after the failed conversion
  EXPECT_EQ(imaginary, before);
}

TEST(AnyPauliSumTest, ArithmeticPromotesToComplex) {
  const AnyPauliSum real = AnyPauliSum::from_labels(70, Terms{{"X0", 1.0}, {"Z69", 2.0}});
  const AnyPauliSum complex = AnyPauliSum::from_labels(70, Terms{{"X0", Complex(0, 1)}, {"Y3", 4.0}});

  const AnyPauliSum sum = real + complex;
  EXPECT_TRUE(sum.is_complex());
  EXPECT_EQ(sum.width(), 2);
  EXPECT_EQ(sum.size(), 3u);
  EXPECT_EQ(sum.coefficient("X0"), Complex(1, 1));
  EXPECT_EQ(sum.coefficient("Z69"), Complex(2, 0));
  EXPECT_EQ(sum.coefficient("Y3"), Complex(4, 0));
  EXPECT_TRUE(InvariantsHold(sum));
  EXPECT_EQ(complex + real, sum);

  const AnyPauliSum difference = real - complex;
  EXPECT_TRUE(difference.is_complex());
  EXPECT_EQ(difference.coefficient("X0"), Complex(1, -1));
  EXPECT_EQ(difference.coefficient("Y3"), Complex(-4, 0));

  const AnyPauliSum real_sum = real + real;
  EXPECT_FALSE(real_sum.is_complex());
  EXPECT_EQ(real_sum.coefficient("Z69"), Complex(4.0));
  EXPECT_TRUE((real - real).size() == 0);

  const AnyPauliSum scaled_real = real * Complex(3.0, 0.0);
  EXPECT_FALSE(scaled_real.is_complex());
  EXPECT_EQ(scaled_real.coefficient("X0"), Complex(3.0));
  const AnyPauliSum scaled_imaginary = Complex(0.0, 2.0) * real;
  EXPECT_TRUE(scaled_imaginary.is_complex());
  EXPECT_EQ(scaled_imaginary.coefficient("Z69"), Complex(0.0, 4.0));
  EXPECT_EQ(scaled_imaginary.norm_squared(), 4.0 * real.norm_squared());
  EXPECT_EQ((real * Complex(0.0)).size(), 0u);

  AnyPauliSum accumulated(70);
  accumulated += real;
  accumulated -= complex;
  accumulated *= Complex(0, 1);
  EXPECT_EQ(accumulated, (real - complex) * Complex(0, 1));
  EXPECT_TRUE(InvariantsHold(accumulated));

  AnyPauliSum other_count(71);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { accumulated += other_count; }, {"70", "71"}));
}

TEST(AnyPauliSumTest, TermsAreDenseLabelsInCanonicalOrder) {
  std::mt19937_64 rng(3);
  Terms input;
  for (int i = 0; i < 3000; ++i) {
    std::string label(20, 'I');
    for (int k = 0; k < 3; ++k) label[rng() % 20] = "IXYZ"[rng() % 4];
    input.emplace_back(label, static_cast<double>(static_cast<int>(rng() % 9) - 4));
  }
  const AnyPauliSum sum = AnyPauliSum::from_labels(20, input);
  const auto terms = sum.terms();
  ASSERT_EQ(terms.size(), sum.size());
  EXPECT_GT(sum.num_buckets(), 1u);
  const auto& underlying = std::get<PauliSum<1, double>>(sum.variant());
  double norm = 0.0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    ASSERT_EQ(terms[i].first.size(), 20u);
    ASSERT_EQ(terms[i].first, underlying.keys()[i].to_label(20));
    ASSERT_EQ(terms[i].second, Complex(underlying.coefficients()[i]));
    ASSERT_EQ(sum.coefficient(terms[i].first), terms[i].second);
    norm += std::norm(terms[i].second);
  }
  EXPECT_EQ(sum.norm_squared(), norm);
  // Rebuilding from its own terms gives the same sum.
  EXPECT_EQ(AnyPauliSum::from_labels(20, terms), sum);
}

TEST(AnyPauliSumTest, CoefficientAcceptsDenseAndSparseLabels) {
  const AnyPauliSum sum =
      AnyPauliSum::from_labels(6, Terms{{"XIIIIZ", Complex(1, 2)}, {"I", 0.25}, {"Y2,Y3", -1.0}});
  EXPECT_EQ(sum.coefficient("XIIIIZ"), Complex(1, 2));
  EXPECT_EQ(sum.coefficient("X0 Z5"), Complex(1, 2));
  EXPECT_EQ(sum.coefficient("IIYYII"), Complex(-1));
  EXPECT_EQ(sum.coefficient("Z5"), Complex(0));
  EXPECT_EQ(sum.identity_coefficient(), Complex(0.25));
  EXPECT_EQ(sum.coefficient(""), Complex(0.25));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { (void)sum.coefficient("X6"); }, {"qubit 6"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { (void)sum.coefficient("XQ"); }, {"'Q'"}));
}

TEST(AnyPauliSumTest, EqualityComparesValuesAcrossStorage) {
  const AnyPauliSum real = AnyPauliSum::from_labels(10, Terms{{"X0", 1.0}, {"Z9", -2.0}});
  const AnyPauliSum complex = AnyPauliSum::from_labels(10, Terms{{"Z9", -2.0}, {"X0", 1.0}}, true);
  EXPECT_EQ(real, complex);
  EXPECT_EQ(complex, real);
  EXPECT_NE(real, AnyPauliSum::from_labels(10, Terms{{"X0", 1.0}}));
  EXPECT_NE(real, AnyPauliSum::from_labels(10, Terms{{"X0", 1.0}, {"Z9", Complex(-2.0, 1e-12)}}));
  EXPECT_NE(real, AnyPauliSum::from_labels(11, Terms{{"X0", 1.0}, {"Z9", -2.0}}));
  EXPECT_EQ(AnyPauliSum(4), AnyPauliSum(4, true));
  EXPECT_NE(AnyPauliSum(4), AnyPauliSum(5));
}

TEST(AnyPauliSumTest, VisitReachesTheStoredSum) {
  AnyPauliSum sum = AnyPauliSum::from_labels(300, Terms{{"X299", 1.0}});
  EXPECT_EQ(sum.width(), 8);
  const bool complex = sum.visit([](const auto& s) { return std::decay_t<decltype(s)>::kIsComplex; });
  EXPECT_FALSE(complex);
  // Mutating through visit changes the stored sum.
  sum.visit([](auto& s) {
    using Sum = std::decay_t<decltype(s)>;
    s += Sum::from_labels(300, {{"Z0", typename Sum::Coeff(2.0)}});
  });
  EXPECT_EQ(sum.size(), 2u);
  EXPECT_EQ(sum.coefficient("Z0"), Complex(2.0));
  const std::size_t visited_size = std::as_const(sum).visit([](const auto& s) { return s.size(); });
  EXPECT_EQ(visited_size, 2u);
}

TEST(AnyPauliSumTest, WrapsATypedSum) {
  const auto typed = PauliSum<2, Complex>::from_labels(100, {{"X99", Complex(0, 1)}});
  const AnyPauliSum wrapped(typed);
  EXPECT_EQ(wrapped.width(), 2);
  EXPECT_TRUE(wrapped.is_complex());
  EXPECT_EQ(wrapped.coefficient("X99"), Complex(0, 1));
  EXPECT_EQ(wrapped, AnyPauliSum::from_labels(100, Terms{{"X99", Complex(0, 1)}}));
}

// Regression: the converting constructor once kept a wider-than-needed width, after which += silently
// did nothing and == was false for equal operators.
TEST(AnyPauliSumTest, WrappedSumOfWiderWidthCombinesWithOthers) {
  // The converting constructor accepts a PauliSum whose width is larger than the qubit count needs.
  const AnyPauliSum wide(PauliSum<2, double>::from_labels(10, {{"X0", 1.0}}));
  const AnyPauliSum narrow = AnyPauliSum::from_labels(10, Terms{{"Z1", 2.0}});
  EXPECT_EQ(wide.width(), 1);  // re-packed to the smallest width
  EXPECT_EQ(wide.coefficient("X0"), Complex(1.0));
  AnyPauliSum total = wide;
  total += narrow;
  EXPECT_EQ(total.size(), 2u);
  EXPECT_EQ(total.coefficient("Z1"), Complex(2.0));
  EXPECT_EQ(wide, AnyPauliSum::from_labels(10, Terms{{"X0", 1.0}}));
}

}  // namespace
}  // namespace paulistrings
