// Tests PauliSum<W, C> for real and complex coefficients at several widths: construction from labels,
// terms and word arrays, the canonical bucket order and its invariants, refinement, look-ups,
// arithmetic against a std::map model, equality, real/complex conversion and bad input.

#include "paulistrings/core/pauli_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/testing/assertions.h"

namespace paulistrings {
namespace {

using testing::ThrowsInvalidArgumentMentioning;

template <class Sum>
::testing::AssertionResult InvariantsHold(const Sum& sum) {
  try {
    sum.check_invariants();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  return ::testing::AssertionSuccess();
}

template <Coefficient C>
C MakeCoefficient(double re, double im) {
  if constexpr (std::same_as<C, double>) {
    return re;
  } else {
    return C(re, im);
  }
}

// Small nonzero integers (exact under any summation order), complex ones for complex C.
template <Coefficient C>
C RandomCoefficient(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> value(-8, 8);
  int re = 0, im = 0;
  while (re == 0 && im == 0) {
    re = value(rng);
    im = std::same_as<C, double> ? 0 : value(rng);
  }
  return MakeCoefficient<C>(re, im);
}

// A key with up to max_weight factors anywhere on qubits 0…num_qubits−1 (or a dense random one).
template <int W>
PauliString<W> RandomKey(std::mt19937_64& rng, std::size_t num_qubits, int max_weight = 4) {
  PauliString<W> key;
  std::uniform_int_distribution<std::size_t> qubit(0, num_qubits - 1);
  const int weight = static_cast<int>(rng() % static_cast<std::uint64_t>(max_weight + 1));
  for (int k = 0; k < weight; ++k) key.set_code(qubit(rng), static_cast<int>(rng() % 4));
  return key;
}

template <int W, Coefficient C>
using Model = std::map<PauliString<W>, C>;

template <int W, Coefficient C>
void AddToModel(Model<W, C>& model, const PauliString<W>& key, C value) {
  model[key] += value;
  if (model[key] == C(0.0)) model.erase(key);
}

template <int W, Coefficient C>
::testing::AssertionResult MatchesModel(const PauliSum<W, C>& sum, const Model<W, C>& model) {
  if (sum.size() != model.size()) {
    return ::testing::AssertionFailure() << "size " << sum.size() << " but the model has " << model.size();
  }
  for (const auto& [key, value] : model) {
    if (sum.coefficient(key) != value) {
      return ::testing::AssertionFailure() << "coefficient of " << key.to_sparse_label() << " is "
                                           << sum.coefficient(key) << ", expected " << value;
    }
  }
  return InvariantsHold(sum);
}

template <int W_, Coefficient C_, std::size_t N_>
struct Config {
  static constexpr int W = W_;
  using C = C_;
  static constexpr std::size_t kQubits = N_;
  using Sum = PauliSum<W_, C_>;
};

template <class T>
class PauliSumTest : public ::testing::Test {};

using Configs = ::testing::Types<Config<1, double, 60>, Config<1, Complex, 64>, Config<2, double, 128>,
                                 Config<2, Complex, 100>, Config<4, double, 200>, Config<8, Complex, 300>,
                                 Config<16, double, 1024>, Config<16, Complex, 1000>>;
TYPED_TEST_SUITE(PauliSumTest, Configs);

TYPED_TEST(PauliSumTest, EmptySumIsTheZeroOperator) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  const Sum sum(TypeParam::kQubits);
  EXPECT_EQ(sum.num_qubits(), TypeParam::kQubits);
  EXPECT_EQ(sum.size(), 0u);
  EXPECT_TRUE(sum.empty());
  EXPECT_EQ(sum.num_buckets(), 1u);
  EXPECT_EQ(sum.bucket_bits(), 0);
  EXPECT_EQ(sum.identity_coefficient(), C(0.0));
  EXPECT_EQ(sum.norm_squared(), 0.0);
  EXPECT_EQ(sum.hash().seed(), kDefaultHashSeed);
  EXPECT_TRUE(InvariantsHold(sum));
  EXPECT_EQ(sum, Sum(TypeParam::kQubits));
}

TYPED_TEST(PauliSumTest, FromLabelsSumsDuplicatesAndDropsExactZeros) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  const std::size_t n = TypeParam::kQubits;
  const std::string last = std::to_string(n - 1);
  const Sum cancelled = Sum::from_labels(n, {{"X0 Z1", C(1.0)}, {"X0 Z1", C(-1.0)}});
  EXPECT_TRUE(cancelled.empty());
  EXPECT_TRUE(InvariantsHold(cancelled));

  // The same string written densely, sparsely and with commas is one term.
  std::string dense(n, 'I');
  dense[0] = 'X';
  dense[n - 1] = 'Y';
  const Sum merged = Sum::from_labels(n, {{dense, C(1.5)},
                                          {"X0 Y" + last, C(2.0)},
                                          {"Y" + last + ",X0", C(0.5)},
                                          {"Z3", C(0.0)},
                                          {"I", C(3.0)},
                                          {"", C(-1.0)}});
  EXPECT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged.coefficient(dense), C(4.0));
  EXPECT_EQ(merged.identity_coefficient(), C(2.0));
  EXPECT_FALSE(merged.contains(PauliString<TypeParam::W>::single('Z', 3)));
  EXPECT_TRUE(InvariantsHold(merged));
}

TYPED_TEST(PauliSumTest, DuplicatesAreSummedInInputOrder) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  const std::size_t n = TypeParam::kQubits;
  // (1e16 + 1) rounds back to 1e16, so the order of the additions is observable.
  const Sum first_big =
      Sum::from_labels(n, {{"Z2", C(1e16)}, {"X1", C(5.0)}, {"Z2", C(1.0)}, {"Z2", C(-1e16)}});
  EXPECT_EQ(first_big.size(), 1u);
  EXPECT_FALSE(first_big.contains(PauliString<TypeParam::W>::single('Z', 2)));
  const Sum cancel_first =
      Sum::from_labels(n, {{"Z2", C(1e16)}, {"Z2", C(-1e16)}, {"X1", C(5.0)}, {"Z2", C(1.0)}});
  EXPECT_EQ(cancel_first.size(), 2u);
  EXPECT_EQ(cancel_first.coefficient("Z2"), C(1.0));
  // Many copies of one key interleaved with other keys, in both orders.
  std::vector<typename Sum::Term> terms;
  const auto key = PauliString<TypeParam::W>::single('Y', n - 1);
  for (int i = 0; i < 50; ++i) {
    terms.push_back({PauliString<TypeParam::W>::single('X', static_cast<std::size_t>(i) % n), C(1.0)});
    terms.push_back({key, C(i == 0 ? 1e16 : 1.0)});
  }
  terms.push_back({key, C(-1e16)});
  EXPECT_FALSE(Sum::from_terms(n, terms).contains(key));
}

TYPED_TEST(PauliSumTest, FromTermsValidatesQubits) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  if (n < PauliString<W>::kMaxQubits) {
    std::vector<typename Sum::Term> terms = {{PauliString<W>::single('X', 0), C(1.0)},
                                             {PauliString<W>::single('Z', n), C(2.0)}};
    EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
        [&] { Sum::from_terms(n, terms); }, {"qubit " + std::to_string(n), std::to_string(n) + " qubits"}));
  }
  std::vector<typename Sum::Term> fine = {{PauliString<W>::single('X', n - 1), C(1.0)}};
  EXPECT_EQ(Sum::from_terms(n, fine).size(), 1u);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Sum::from_terms(n / 2, fine); },
                                              {"qubit " + std::to_string(n - 1)}));
}

TYPED_TEST(PauliSumTest, FromArraysReadsRowMajorWordsAndPadsNarrowRows) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(31 + W);
  constexpr std::size_t kRows = 40;
  // Full-width rows.
  std::vector<std::uint64_t> x, z;
  std::vector<C> coefficients;
  std::vector<typename Sum::Term> terms;
  for (std::size_t r = 0; r < kRows; ++r) {
    const PauliString<W> key = RandomKey<W>(rng, n, 6);
    x.insert(x.end(), key.x.begin(), key.x.end());
    z.insert(z.end(), key.z.begin(), key.z.end());
    coefficients.push_back(RandomCoefficient<C>(rng));
    terms.push_back({key, coefficients.back()});
  }
  const Sum from_arrays = Sum::from_arrays(n, x, z, W, coefficients);
  EXPECT_EQ(from_arrays, Sum::from_terms(n, terms));
  EXPECT_TRUE(InvariantsHold(from_arrays));

  // One-word rows fill word 0 and leave the others zero.
  std::vector<std::uint64_t> x1, z1;
  std::vector<typename Sum::Term> narrow_terms;
  const std::uint64_t low_mask = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  for (std::size_t r = 0; r < kRows; ++r) {
    PauliString<W> key;
    key.x[0] = rng() & low_mask;
    key.z[0] = rng() & low_mask;
    x1.push_back(key.x[0]);
    z1.push_back(key.z[0]);
    narrow_terms.push_back({key, coefficients[r]});
  }
  const Sum narrow = Sum::from_arrays(n, x1, z1, 1, coefficients);
  EXPECT_EQ(narrow, Sum::from_terms(n, narrow_terms));
  EXPECT_TRUE(InvariantsHold(narrow));
}

TYPED_TEST(PauliSumTest, FromArraysRejectsBadShapesAndBitsNamingTheRow) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  const std::vector<C> two = {C(1.0), C(2.0)};
  const std::vector<std::uint64_t> words(2 * W, 0), short_words(2 * W - 1, 0);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Sum::from_arrays(n, short_words, words, W, two); },
                                              {"x has " + std::to_string(2 * W - 1)}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Sum::from_arrays(n, words, short_words, W, two); },
                                              {"z has " + std::to_string(2 * W - 1)}));
  const std::vector<C> three = {C(1.0), C(2.0), C(3.0)};
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { Sum::from_arrays(n, words, words, W, three); }, {"3 rows"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { Sum::from_arrays(n, words, words, 0, two); }, {"0 words"}));
  const std::vector<std::uint64_t> wide(2 * (W + 1), 0);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Sum::from_arrays(n, wide, wide, W + 1, two); },
                                              {std::to_string(W + 1) + " words"}));
  if (n < PauliString<W>::kMaxQubits) {
    // Row 1 sets a z bit on qubit n (out of range); row 0 is fine.
    std::vector<std::uint64_t> x(2 * W, 0), z(2 * W, 0);
    x[0] = 1;
    z[W + n / 64] = std::uint64_t{1} << (n % 64);
    EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Sum::from_arrays(n, x, z, W, two); },
                                                {"row 1", "qubit " + std::to_string(n)}));
  }
  // Empty arrays give the empty sum.
  EXPECT_TRUE(Sum::from_arrays(n, {}, {}, W, std::span<const C>{}).empty());
}

TYPED_TEST(PauliSumTest, IterationIsBucketAscendingThenKeyAscending) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(41 + W);
  std::vector<typename Sum::Term> terms;
  for (int i = 0; i < 5000; ++i) terms.push_back({RandomKey<W>(rng, n, 5), RandomCoefficient<C>(rng)});
  Sum sum = Sum::from_terms(n, terms);
  for (int extra_bits : {0, 2, 5}) {
    sum.refine(sum.bucket_bits() + extra_bits);
    ASSERT_TRUE(InvariantsHold(sum));
    const int bits = sum.bucket_bits();
    ASSERT_EQ(sum.num_buckets(), std::size_t{1} << bits);
    ASSERT_EQ(sum.bucket_offsets().size(), sum.num_buckets() + 1);
    ASSERT_EQ(sum.bucket_offsets().front(), 0u);
    ASSERT_EQ(sum.bucket_offsets().back(), sum.size());
    // Independently of check_invariants: the key column is sorted by (h(key), key) and offsets agree.
    std::vector<std::pair<std::uint64_t, PauliString<W>>> expected;
    for (const auto& key : sum.keys()) expected.emplace_back(sum.hash()(key, bits), key);
    std::sort(expected.begin(), expected.end());
    for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(expected[i].second, sum.keys()[i]) << i;
    for (std::size_t b = 0; b < sum.num_buckets(); ++b) {
      for (std::size_t i = sum.bucket_offsets()[b]; i < sum.bucket_offsets()[b + 1]; ++i) {
        ASSERT_EQ(sum.hash()(sum.keys()[i], bits), b);
        if (i > sum.bucket_offsets()[b]) {
          ASSERT_LT(sum.keys()[i - 1], sum.keys()[i]);
        }
      }
    }
  }
}

TYPED_TEST(PauliSumTest, RefineIsGrowOnlyAndPreservesTerms) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(51 + W);
  std::vector<typename Sum::Term> terms;
  for (int i = 0; i < 3000; ++i) terms.push_back({RandomKey<W>(rng, n, 3), RandomCoefficient<C>(rng)});
  Sum sum = Sum::from_terms(n, terms);
  const Sum original = sum;
  const auto original_terms = original.sorted_terms();
  EXPECT_GE(sum.bucket_bits(), Sum::bits_to_fit(sum.size(), 1024, 1));  // ≤ 1024 terms a bucket on average

  sum.refine(6);
  EXPECT_EQ(sum.bucket_bits(), 6);
  EXPECT_EQ(sum.num_buckets(), 64u);
  EXPECT_TRUE(InvariantsHold(sum));
  EXPECT_EQ(sum, original);
  sum.refine(3);  // never shrinks
  EXPECT_EQ(sum.bucket_bits(), 6);
  sum.refine(6);
  EXPECT_EQ(sum.bucket_bits(), 6);

  sum.refine_to_fit(10, 1);  // ≤ 10 terms a bucket
  const int bits = sum.bucket_bits();
  EXPECT_LE(sum.size(), 10u << bits);
  EXPECT_GT(sum.size(), 10u << (bits - 1));  // the smallest such count
  EXPECT_TRUE(InvariantsHold(sum));
  sum.refine_to_fit(100000, 1);  // asks for fewer buckets: no change
  EXPECT_EQ(sum.bucket_bits(), bits);
  sum.refine_to_fit(100000, std::size_t{1} << (bits + 1));  // min_buckets wins
  EXPECT_EQ(sum.bucket_bits(), bits + 1);
  EXPECT_TRUE(InvariantsHold(sum));

  const auto refined_terms = sum.sorted_terms();
  ASSERT_EQ(refined_terms.size(), original_terms.size());
  for (std::size_t i = 0; i < refined_terms.size(); ++i) {
    ASSERT_EQ(refined_terms[i].key, original_terms[i].key);
    ASSERT_EQ(refined_terms[i].coefficient, original_terms[i].coefficient);
    ASSERT_EQ(sum.coefficient(original_terms[i].key), original_terms[i].coefficient);
  }
  // Refinement of the empty sum works too.
  Sum empty(n);
  empty.refine(4);
  EXPECT_EQ(empty.num_buckets(), 16u);
  EXPECT_TRUE(InvariantsHold(empty));
}

TYPED_TEST(PauliSumTest, LookupsAndNorm) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  const std::string last = std::to_string(n - 1);
  const C a = MakeCoefficient<C>(0.5, -2.0), b = MakeCoefficient<C>(-3.0, 0.25), i0 = C(0.75);
  const Sum sum = Sum::from_labels(n, {{"X0 Z" + last, a}, {"Y7", b}, {"I", i0}});
  EXPECT_EQ(sum.coefficient("X0 Z" + last), a);
  EXPECT_EQ(sum.coefficient("Z" + last + " X0"), a);
  EXPECT_EQ(sum.coefficient(PauliString<W>::single('Y', 7)), b);
  EXPECT_EQ(sum.coefficient("Y8"), C(0.0));
  EXPECT_EQ(sum.coefficient("X7"), C(0.0));
  EXPECT_TRUE(sum.contains(PauliString<W>::single('Y', 7)));
  EXPECT_FALSE(sum.contains(PauliString<W>::single('Z', 7)));
  EXPECT_EQ(sum.identity_coefficient(), i0);
  EXPECT_TRUE(sum.contains(PauliString<W>()));
  EXPECT_DOUBLE_EQ(sum.norm_squared(), magnitude_squared(a) + magnitude_squared(b) + magnitude_squared(i0));
  std::string beyond_last_qubit = "X";
  beyond_last_qubit += std::to_string(n);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { (void)sum.coefficient(beyond_last_qubit); },
                                              {"qubit " + std::to_string(n)}));
  // sorted_terms is ordered by key alone.
  const auto sorted = sum.sorted_terms();
  ASSERT_EQ(sorted.size(), 3u);
  EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end(),
                             [](const auto& p, const auto& q) { return p.key < q.key; }));
}

TYPED_TEST(PauliSumTest, ArithmeticMatchesAMapModel) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(61 + W);
  auto random_sum = [&](std::size_t count, Model<W, C>& model) {
    std::vector<typename Sum::Term> terms;
    for (std::size_t i = 0; i < count; ++i) {
      // Weight ≤ 2 on few qubits so that two random sums overlap a lot.
      terms.push_back({RandomKey<W>(rng, std::min<std::size_t>(n, 12), 2), RandomCoefficient<C>(rng)});
      AddToModel(model, terms.back().key, terms.back().coefficient);
    }
    return Sum::from_terms(n, terms);
  };
  for (int round = 0; round < 5; ++round) {
    Model<W, C> ma, mb;
    const Sum a = random_sum(400, ma), b = random_sum(3000, mb);
    ASSERT_TRUE(MatchesModel(a, ma));
    ASSERT_TRUE(MatchesModel(b, mb));

    Model<W, C> sum_model = ma, difference_model = ma;
    for (const auto& [key, value] : mb) {
      AddToModel(sum_model, key, value);
      AddToModel(difference_model, key, -value);
    }
    EXPECT_TRUE(MatchesModel(a + b, sum_model));
    EXPECT_TRUE(MatchesModel(b + a, sum_model));
    EXPECT_TRUE(MatchesModel(a - b, difference_model));

    const C scale = MakeCoefficient<C>(-2.0, 3.0);
    Model<W, C> scaled_model, negated_model;
    for (const auto& [key, value] : ma) {
      scaled_model[key] = value * scale;
      negated_model[key] = -value;
    }
    EXPECT_TRUE(MatchesModel(a * scale, scaled_model));
    EXPECT_TRUE(MatchesModel(scale * a, scaled_model));
    EXPECT_TRUE(MatchesModel(-a, negated_model));
    EXPECT_EQ(-a, a * C(-1.0));
    EXPECT_TRUE((a * C(0.0)).empty());
    EXPECT_TRUE(InvariantsHold(a * C(0.0)));

    Sum c = a;
    c += b;
    EXPECT_TRUE(MatchesModel(c, sum_model));
    c -= b;
    EXPECT_EQ(c, a);
    EXPECT_TRUE(InvariantsHold(c));
    c *= scale;
    EXPECT_TRUE(MatchesModel(c, scaled_model));

    // Aliasing: a sum plus or minus itself.
    Sum doubled = a;
    doubled += doubled;
    EXPECT_EQ(doubled, a * C(2.0));
    EXPECT_TRUE(InvariantsHold(doubled));
    Sum zero = a;
    zero -= zero;
    EXPECT_TRUE(zero.empty());
    EXPECT_TRUE(InvariantsHold(zero));
    EXPECT_TRUE((a - a).empty());
  }
}

TYPED_TEST(PauliSumTest, ArithmeticKeepsTheLargerBucketCount) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  const std::size_t n = TypeParam::kQubits;
  Sum a = Sum::from_labels(n, {{"X0", C(1.0)}, {"Z1", C(2.0)}});
  Sum b = Sum::from_labels(n, {{"X0", C(-1.0)}, {"Y2", C(4.0)}});
  b.refine(5);
  const Sum c = a + b;
  EXPECT_EQ(c.bucket_bits(), 5);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_TRUE(InvariantsHold(c));
  a.refine(7);
  a += b;
  EXPECT_EQ(a.bucket_bits(), 7);
  EXPECT_EQ(a, c);
  EXPECT_TRUE(InvariantsHold(a));
}

TYPED_TEST(PauliSumTest, ScalingDropsUnderflowedTerms) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  const std::size_t n = TypeParam::kQubits;
  Sum sum = Sum::from_labels(n, {{"X0", C(1e-200)}, {"Z1", C(1.0)}});
  sum *= C(1e-200);
  EXPECT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum.coefficient("Z1"), C(1e-200));
  EXPECT_TRUE(InvariantsHold(sum));
}

TYPED_TEST(PauliSumTest, InPlaceZerosClearAndReassign) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(71 + W);
  std::vector<typename Sum::Term> terms;
  for (int i = 0; i < 2000; ++i) terms.push_back({RandomKey<W>(rng, n, 4), RandomCoefficient<C>(rng)});
  Sum sum = Sum::from_terms(n, terms);
  sum.refine(4);
  Model<W, C> model;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (i % 3 == 0) {
      sum.mutable_coefficients()[i] = C(0.0);
    } else {
      model[sum.keys()[i]] = sum.coefficients()[i];
    }
  }
  sum.drop_zeros();
  EXPECT_TRUE(MatchesModel(sum, model));
  EXPECT_EQ(sum.bucket_bits(), 4);

  Sum reassigned(n);
  std::vector<typename Sum::Term> copy = terms;
  reassigned.assign_terms(std::move(copy), 3);
  EXPECT_EQ(reassigned, Sum::from_terms(n, terms));
  EXPECT_GE(reassigned.bucket_bits(), 3);
  EXPECT_TRUE(InvariantsHold(reassigned));

  sum.clear();
  EXPECT_TRUE(sum.empty());
  EXPECT_TRUE(InvariantsHold(sum));
  EXPECT_EQ(sum, Sum(n));
}

// assign_distinct_columns (the GPU engine's download): distinct keys in any order, zeros among them,
// come out as the canonical sum from_terms builds — the same columns, not just the same operator.
TYPED_TEST(PauliSumTest, DistinctColumnsSortInPlaceIntoTheCanonicalLayout) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(83 + W);
  Model<W, C> model;
  typename Sum::KeyColumn keys;
  typename Sum::CoefficientColumn coefficients;
  std::vector<typename Sum::Term> nonzero;
  for (int i = 0; i < 3000; ++i) {
    const auto key = RandomKey<W>(rng, n, 6);
    if (model.count(key)) continue;
    const C c = i % 5 == 0 ? C(0.0) : RandomCoefficient<C>(rng);
    model[key] = c;
    keys.push_back(key);
    coefficients.push_back(c);
    if (c != C(0.0)) nonzero.push_back({key, c});
  }
  Sum sum(n);
  sum.assign_distinct_columns(std::move(keys), std::move(coefficients), 3);
  const Sum expected = Sum::from_terms(n, nonzero);
  EXPECT_TRUE(InvariantsHold(sum));
  EXPECT_EQ(sum, expected);
  Sum same_bits = expected;
  same_bits.refine(sum.bucket_bits());
  ASSERT_EQ(sum.bucket_bits(), same_bits.bucket_bits());
  EXPECT_TRUE(std::equal(sum.keys().begin(), sum.keys().end(), same_bits.keys().begin(), same_bits.keys().end()));
  EXPECT_TRUE(std::equal(sum.coefficients().begin(), sum.coefficients().end(), same_bits.coefficients().begin(),
                         same_bits.coefficients().end()));

  Sum bad(n);
  typename Sum::KeyColumn two(2, typename Sum::Key{});
  typename Sum::CoefficientColumn one(1, C(1.0));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { bad.assign_distinct_columns(std::move(two), std::move(one), 1); },
                                              {"2 keys", "1 coefficients"}));
}

// assign_bucketed_columns (the GPU engine's download after grouping on the device): nonzero terms
// grouped by bucket, in a shuffled order inside each bucket, come out as the canonical columns.
TYPED_TEST(PauliSumTest, BucketedColumnsSortEachBucketIntoTheCanonicalLayout) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(97 + W);
  std::vector<typename Sum::Term> terms;
  Model<W, C> model;
  for (int i = 0; i < 3000; ++i) {
    const auto key = RandomKey<W>(rng, n, 6);
    if (model.count(key)) continue;
    model[key] = RandomCoefficient<C>(rng);
    terms.push_back({key, model[key]});
  }
  const int bits = 5;
  Sum expected = Sum::from_terms(n, terms);
  expected.refine(bits);
  ASSERT_EQ(expected.bucket_bits(), bits);
  // Group by bucket (counting sort), then shuffle inside each bucket.
  std::shuffle(terms.begin(), terms.end(), rng);
  std::vector<std::size_t> start((std::size_t{1} << bits) + 1, 0);
  for (const auto& t : terms) ++start[expected.hash()(t.key, bits) + 1];
  for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  typename Sum::KeyColumn keys(terms.size());
  typename Sum::CoefficientColumn coefficients(terms.size());
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (const auto& t : terms) {
    const std::size_t at = next[expected.hash()(t.key, bits)]++;
    keys[at] = t.key;
    coefficients[at] = t.coefficient;
  }
  Sum sum(n);
  sum.assign_bucketed_columns(std::move(keys), std::move(coefficients), std::vector<std::size_t>(start), bits,
                              2);
  EXPECT_TRUE(InvariantsHold(sum));
  EXPECT_EQ(sum, expected);
  EXPECT_TRUE(
      std::equal(sum.keys().begin(), sum.keys().end(), expected.keys().begin(), expected.keys().end()));
  EXPECT_TRUE(std::equal(sum.coefficients().begin(), sum.coefficients().end(),
                         expected.coefficients().begin(), expected.coefficients().end()));

  Sum bad(n);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        bad.assign_bucketed_columns(typename Sum::KeyColumn(2, typename Sum::Key{}),
                                    typename Sum::CoefficientColumn(1), {0, 1}, 0);
      },
      {"2 keys", "1 coefficients"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        bad.assign_bucketed_columns(typename Sum::KeyColumn(2, typename Sum::Key{}),
                                    typename Sum::CoefficientColumn(2, C(1.0)), {0, 1, 1}, 1);
      },
      {"do not cover 2 terms"}));
}

TYPED_TEST(PauliSumTest, EqualityIgnoresBucketCountAndHashSeed) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(81 + W);
  std::vector<typename Sum::Term> terms;
  for (int i = 0; i < 2000; ++i) terms.push_back({RandomKey<W>(rng, n, 4), RandomCoefficient<C>(rng)});
  const Sum a = Sum::from_terms(n, terms);
  Sum refined = a;
  refined.refine(a.bucket_bits() + 3);
  const Sum other_seed = Sum::from_terms(n, terms, 0x1234);
  EXPECT_EQ(other_seed.hash().seed(), 0x1234u);
  EXPECT_TRUE(InvariantsHold(other_seed));
  EXPECT_EQ(a, refined);
  EXPECT_EQ(refined, a);
  EXPECT_EQ(a, other_seed);
  // Arithmetic between sums hashed with different seeds.
  EXPECT_EQ(other_seed - a, Sum(n));
  EXPECT_EQ(a + other_seed, a * C(2.0));
  EXPECT_TRUE(InvariantsHold(other_seed + a));

  // A single changed coefficient, a missing term or another qubit count breaks equality.
  std::vector<typename Sum::Term> changed = terms;
  changed.push_back({terms[0].key, C(1.0)});
  EXPECT_NE(a, Sum::from_terms(n, changed));
  std::vector<typename Sum::Term> extra = terms;
  const auto absent = PauliString<W>::from_label("Y0 Y1 Y2 Y3 Y4 Y5", n);  // weight 6: never drawn above
  ASSERT_FALSE(a.contains(absent));
  extra.push_back({absent, C(1e-300)});
  EXPECT_NE(a, Sum::from_terms(n, extra));
  EXPECT_NE(Sum(n), Sum(n - 1));
}

TYPED_TEST(PauliSumTest, ComplexAndRealConversions) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(91 + W);
  std::vector<typename PauliSum<W, double>::Term> real_terms;
  for (int i = 0; i < 1500; ++i)
    real_terms.push_back({RandomKey<W>(rng, n, 4), RandomCoefficient<double>(rng)});
  const auto real = PauliSum<W, double>::from_terms(n, real_terms);
  const PauliSum<W, Complex> complex = real.to_complex();
  EXPECT_TRUE(InvariantsHold(complex));
  ASSERT_EQ(complex.size(), real.size());
  for (std::size_t i = 0; i < real.size(); ++i) {
    ASSERT_EQ(complex.keys()[i], real.keys()[i]);
    ASSERT_EQ(complex.coefficients()[i], Complex(real.coefficients()[i], 0.0));
  }
  EXPECT_EQ(complex.bucket_bits(), real.bucket_bits());
  const PauliSum<W, double> back = complex.to_real();
  EXPECT_EQ(back, real);
  EXPECT_TRUE(InvariantsHold(back));
  EXPECT_EQ(real.to_real(), real);

  if constexpr (std::same_as<C, Complex>) {
    const Sum with_imaginary = Sum::from_labels(
        n, {{"X0", Complex(1.0, 0.0)}, {"Z3 Y5", Complex(2.0, 1e-300)}, {"Y1", Complex(-1.0, 0.0)}});
    EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { with_imaginary.to_real(); }, {"Y5", "imaginary"}));
    EXPECT_EQ(with_imaginary.to_complex(), with_imaginary);
  }
}

TYPED_TEST(PauliSumTest, QubitCountsAreChecked) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  Sum a = Sum::from_labels(n, {{"X0", C(1.0)}});
  const Sum b = Sum::from_labels(n - 1, {{"X0", C(1.0)}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { a += b; }, {std::to_string(n), std::to_string(n - 1)}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { (void)(a - b); }, {std::to_string(n), std::to_string(n - 1)}));
  EXPECT_EQ(a.size(), 1u);
  EXPECT_TRUE(InvariantsHold(a));
  const std::size_t too_many = PauliString<W>::kMaxQubits + 1;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Sum s(too_many); }, {std::to_string(too_many)}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        Sum::from_labels(too_many, {{"X0", C(1.0)}});
      },
      {std::to_string(too_many)}));
}

TYPED_TEST(PauliSumTest, LargeRandomSumsBuiltTwoWaysAreEqual) {
  using Sum = typename TypeParam::Sum;
  using C = typename TypeParam::C;
  constexpr int W = TypeParam::W;
  const std::size_t n = TypeParam::kQubits;
  std::mt19937_64 rng(101 + W);
  // 10^5 terms up to 128 qubits; wider keys get proportionally fewer terms (same bytes, bounded test time).
  constexpr std::size_t kTerms = W <= 2 ? 100000 : 200000 / W;
  std::vector<typename Sum::Term> terms;
  terms.reserve(kTerms);
  Model<W, C> model;
  for (std::size_t i = 0; i < kTerms; ++i) {
    // Weight ≤ 3 on 20 qubits (spread over the register) gives many duplicates and some cancellations.
    PauliString<W> key;
    const int weight = static_cast<int>(rng() % 4);
    for (int k = 0; k < weight; ++k) key.set_code((rng() % 20) * (n / 20), static_cast<int>(rng() % 4));
    terms.push_back({key, RandomCoefficient<C>(rng)});
    AddToModel(model, key, terms.back().coefficient);
  }
  const Sum all_at_once = Sum::from_terms(n, terms);
  EXPECT_TRUE(MatchesModel(all_at_once, model));

  // Second way: shuffled rows through from_arrays.
  std::vector<typename Sum::Term> shuffled = terms;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::vector<std::uint64_t> x, z;
  std::vector<C> coefficients;
  for (const auto& term : shuffled) {
    x.insert(x.end(), term.key.x.begin(), term.key.x.end());
    z.insert(z.end(), term.key.z.begin(), term.key.z.end());
    coefficients.push_back(term.coefficient);
  }
  const Sum from_arrays = Sum::from_arrays(n, x, z, W, coefficients);
  EXPECT_TRUE(InvariantsHold(from_arrays));
  EXPECT_EQ(from_arrays, all_at_once);

  // Third way: four chunk sums (with their own, smaller bucket counts) added pairwise.
  std::vector<Sum> chunks;
  for (std::size_t start = 0; start < kTerms; start += kTerms / 4) {
    chunks.push_back(Sum::from_terms(
        n, std::vector<typename Sum::Term>(shuffled.begin() + start, shuffled.begin() + start + kTerms / 4)));
  }
  const Sum accumulated = (chunks[0] + chunks[1]) + (chunks[2] + chunks[3]);
  EXPECT_TRUE(InvariantsHold(accumulated));
  EXPECT_EQ(accumulated, all_at_once);
  EXPECT_EQ(accumulated.size(), model.size());
}

// Inputs of ≥ 2^16 terms take the parallel path of assign_terms and assign_distinct_columns: the result
// must not depend on it, nor on the thread count asked for (duplicates still summed in input order, bit
// for bit).
TEST(PauliSumSmallTest, LargeAssignmentsMatchTheSequentialModel) {
  using Sum = PauliSum<2, Complex>;
  std::mt19937_64 rng(97);
  std::vector<Sum::Term> terms;
  std::map<Sum::Key, Complex> model;
  for (int i = 0; i < 150000; ++i) {
    Sum::Key key;
    key.x[0] = rng() & 0xfff;  // 2^16 distinct keys at most: many duplicates
    key.z[1] = rng() & 0xf;
    const Complex c(static_cast<double>(rng() % 2001) - 1000.0, std::ldexp(static_cast<double>(rng() % 97), -7));
    terms.push_back({key, c});
    model[key] += c;
  }
  Sum sum(128);
  sum.assign_terms(std::vector<Sum::Term>(terms), 6);
  EXPECT_NO_THROW(sum.check_invariants());
  std::size_t nonzero = 0;
  for (const auto& [key, c] : model) nonzero += c != Complex(0.0);
  ASSERT_EQ(sum.size(), nonzero);
  for (std::size_t i = 0; i < sum.size(); ++i) EXPECT_EQ(sum.coefficients()[i], model.at(sum.keys()[i]));
  for (int threads : {1, 3}) {
    Sum again(128);
    again.assign_terms(std::vector<Sum::Term>(terms), 6, threads);
    EXPECT_TRUE(std::equal(again.keys().begin(), again.keys().end(), sum.keys().begin(), sum.keys().end()));
    EXPECT_TRUE(std::equal(again.coefficients().begin(), again.coefficients().end(),
                           sum.coefficients().begin(), sum.coefficients().end()))
        << threads << " threads";
  }

  std::vector<Sum::Key> keys;
  std::vector<Complex> coefficients;
  for (const auto& [key, c] : model) {
    keys.push_back(key);
    coefficients.push_back(c);
  }
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(5));
  for (std::size_t i = 0; i < keys.size(); ++i) coefficients[i] = model.at(keys[i]);
  for (int threads : {0, 1}) {
    Sum columns(128);
    columns.assign_distinct_columns(Sum::KeyColumn(keys.begin(), keys.end()),
                                    Sum::CoefficientColumn(coefficients.begin(), coefficients.end()), 6,
                                    threads);
    EXPECT_TRUE(
        std::equal(columns.keys().begin(), columns.keys().end(), sum.keys().begin(), sum.keys().end()));
    EXPECT_TRUE(std::equal(columns.coefficients().begin(), columns.coefficients().end(),
                           sum.coefficients().begin(), sum.coefficients().end()))
        << threads << " threads";
  }
}

TEST(PauliSumSmallTest, OppositeDuplicatesCancelToTheEmptySum) {
  const auto sum = PauliSum<1, double>::from_labels(2, {{"XZ", 1.0}, {"XZ", -1.0}});
  EXPECT_TRUE(sum.empty());
  EXPECT_NO_THROW(sum.check_invariants());
  const auto complex =
      PauliSum<1, Complex>::from_labels(2, {{"XZ", Complex(1, 2)}, {"X0 Z1", Complex(-1, -2)}});
  EXPECT_TRUE(complex.empty());
  const auto kept = PauliSum<1, double>::from_labels(2, {{"XZ", 1.0}, {"ZX", -1.0}});
  EXPECT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept.coefficient("ZX"), -1.0);
}

TEST(PauliSumSmallTest, MoreThan1024QubitsThrowNaming1024) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PauliSum<16, double> s(1025); }, {"1024"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PauliSum<16, Complex> s(5000); }, {"1024"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { PauliSum<1, double> s(65); }, {"65", "width 1"}));
  EXPECT_NO_THROW((PauliSum<16, double>(1024)));
}

TEST(PauliSumSmallTest, BitsToFitChoosesTheSmallestBucketCount) {
  using Sum = PauliSum<2, double>;
  EXPECT_EQ(Sum::bits_to_fit(0, 1024, 1), 0);
  EXPECT_EQ(Sum::bits_to_fit(1024, 1024, 1), 0);
  EXPECT_EQ(Sum::bits_to_fit(1025, 1024, 1), 1);
  EXPECT_EQ(Sum::bits_to_fit(2048, 1024, 1), 1);
  EXPECT_EQ(Sum::bits_to_fit(2049, 1024, 1), 2);
  EXPECT_EQ(Sum::bits_to_fit(10, 1024, 8), 3);
  EXPECT_EQ(Sum::bits_to_fit(10, 1024, 9), 4);
  EXPECT_EQ(Sum::bits_to_fit(100, 0, 1), 7);  // a target of 0 means 1 term per bucket
  EXPECT_EQ(Sum::bits_to_fit(std::size_t{1} << 40, 1, 1), kMaxBucketBits);
}

TEST(PauliSumSmallTest, ToRealNamesATinyImaginaryPartExactly) {
  // The message must show the offending value, not a rounded "0.000000".
  const auto sum = PauliSum<1, Complex>::from_labels(3, {{"XYZ", Complex(1.0, 1e-300)}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { (void)sum.to_real(); }, {"X0 Y1 Z2", "1e-300"}));
}

}  // namespace
}  // namespace paulistrings
