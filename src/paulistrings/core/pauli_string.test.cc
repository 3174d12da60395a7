// Tests PauliString<W> (every width): dense and sparse label parsing and printing, bit codes, weight,
// span, ordering, hashing, width selection, and commutation and product phases checked against the
// dense oracle's Pauli matrices.

#include "paulistrings/core/pauli_string.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/dense_simulator.h"

namespace paulistrings {
namespace {

namespace dense = testing::dense;
using dense::Complex;

using testing::ThrowsInvalidArgumentMentioning;

std::string RandomDenseLabel(std::mt19937_64& rng, std::size_t num_qubits) {
  std::uniform_int_distribution<int> letter(0, 3);
  std::string label(num_qubits, 'I');
  for (char& c : label) c = "IXYZ"[letter(rng)];
  return label;
}

// Qubit positions that straddle every word boundary of width W (used to place small oracle labels).
template <int W>
std::vector<std::size_t> SpreadQubits(std::size_t count) {
  const std::size_t n = PauliString<W>::kMaxQubits;
  const std::vector<std::size_t> candidates = {0, n - 1, n / 2, 63 % n, (n / 2 + 1) % n, 1, n - 2, 5};
  std::vector<std::size_t> qubits;
  for (std::size_t q : candidates) {
    if (qubits.size() == count) break;
    if (std::find(qubits.begin(), qubits.end(), q) == qubits.end()) qubits.push_back(q);
  }
  return qubits;
}

// Places character k of `small_label` on qubit qubits[k] of a width-W string.
template <int W>
PauliString<W> Place(const std::string& small_label, const std::vector<std::size_t>& qubits) {
  PauliString<W> p;
  for (std::size_t k = 0; k < small_label.size(); ++k) p.set_code(qubits[k], pauli_code(small_label[k]));
  return p;
}

// Reads the letters of `p` on `qubits` back into a small label.
template <int W>
std::string Gather(const PauliString<W>& p, const std::vector<std::size_t>& qubits) {
  std::string label;
  for (std::size_t q : qubits) label += p.letter(q);
  return label;
}

constexpr std::array<Complex, 4> kPowersOfI = {Complex(1, 0), Complex(0, 1), Complex(-1, 0), Complex(0, -1)};

template <class T>
class PauliStringTest : public ::testing::Test {};

template <int W>
struct StringWidth {
  static constexpr int kValue = W;
};
using StringWidths =
    ::testing::Types<StringWidth<1>, StringWidth<2>, StringWidth<4>, StringWidth<8>, StringWidth<16>>;
TYPED_TEST_SUITE(PauliStringTest, StringWidths);

TYPED_TEST(PauliStringTest, StorageIsTwoWordArraysPerWidth) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  static_assert(std::is_trivially_copyable_v<P>);
  EXPECT_EQ(sizeof(P), 16u * W);
  EXPECT_EQ(P::kMaxQubits, 64u * W);
  const P identity;
  EXPECT_TRUE(identity.is_identity());
  EXPECT_EQ(identity.weight(), 0);
  EXPECT_EQ(identity.span(), 0u);
}

TYPED_TEST(PauliStringTest, DenseLabelSetsTheDocumentedBits) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  std::string label(n, 'I');
  label[0] = 'X';
  label[1] = 'Z';
  label[2] = 'Y';
  label[n - 1] = 'Y';
  if (n > 64) label[64] = 'X';
  const P p = P::from_label(label, n);
  EXPECT_EQ(p.x[0] & 0b111, 0b101u);
  EXPECT_EQ(p.z[0] & 0b111, 0b110u);
  EXPECT_EQ(p.x[W - 1] >> 63, 1u);
  EXPECT_EQ(p.z[W - 1] >> 63, 1u);
  if (n > 64) {
    EXPECT_EQ(p.x[1] & 1, 1u);
    EXPECT_EQ(p.z[1] & 1, 0u);
  }
  EXPECT_EQ(p.code(0), 1);
  EXPECT_EQ(p.code(1), 2);
  EXPECT_EQ(p.code(2), 3);
  EXPECT_EQ(p.code(3), 0);
  EXPECT_EQ(p.letter(2), 'Y');
  EXPECT_EQ(p.to_label(n), label);
}

TYPED_TEST(PauliStringTest, DenseLabelsRoundTripOnAnyLength) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  std::mt19937_64 rng(11 + W);
  for (std::size_t n :
       {std::size_t{1}, std::size_t{7}, std::size_t{63}, std::size_t{64}, P::kMaxQubits - 1, P::kMaxQubits}) {
    for (int trial = 0; trial < 20; ++trial) {
      const std::string label = RandomDenseLabel(rng, n);
      const P p = P::from_label(label, n);
      EXPECT_EQ(p.to_label(n), label);
      EXPECT_EQ(p.weight(), static_cast<int>(n - std::count(label.begin(), label.end(), 'I')));
      for (std::size_t q = 0; q < n; ++q) ASSERT_EQ(p.letter(q), label[q]) << "qubit " << q;
      EXPECT_LE(p.span(), n);
    }
  }
}

TYPED_TEST(PauliStringTest, SparseLabelsParseWithSpacesCommasAndIdentityFactors) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  const P expected = [] {
    P p;
    p.set_code(0, 1);   // X0
    p.set_code(5, 3);   // Y5
    p.set_code(62, 2);  // Z62
    return p;
  }();
  for (const char* label : {"X0 Y5 Z62", "Z62 X0 Y5", "X0,Y5,Z62", "X0, Y5, Z62", "  X0  Y5\tZ62 ",
                            "X0 I7 Y5 Z62", "X0,,Y5 , Z62"}) {
    EXPECT_EQ(P::from_label(label, n), expected) << label;
  }
  EXPECT_EQ(P::from_label("X0 Y5 Z62", n).to_sparse_label(), "X0 Y5 Z62");
  std::string top = "Y";
  top += std::to_string(n - 1);
  const P high = P::from_label(top, n);
  EXPECT_EQ(high.code(n - 1), 3);
  EXPECT_EQ(high.weight(), 1);
  EXPECT_EQ(high.span(), n);
  EXPECT_EQ(high.to_sparse_label(), top);
}

TYPED_TEST(PauliStringTest, IdentityLabels) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, P::kMaxQubits}) {
    EXPECT_TRUE(P::from_label("", n).is_identity()) << n;
    EXPECT_TRUE(P::from_label("I", n).is_identity()) << n;
  }
  EXPECT_TRUE(P::from_label("IIII", 4).is_identity());
  EXPECT_TRUE(P::from_label("I3", 4).is_identity());
  EXPECT_EQ(P().to_sparse_label(), "I");
  EXPECT_EQ(P().to_label(3), "III");
  EXPECT_EQ(P().to_label(0), "");
}

TYPED_TEST(PauliStringTest, SparseLabelsRoundTripForRandomStrings) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  std::mt19937_64 rng(100 + W);
  for (int trial = 0; trial < 50; ++trial) {
    P p;
    for (int w = 0; w < W; ++w) {
      // Sparse-ish words: AND of two random words leaves a quarter of the bits set.
      p.x[w] = rng() & rng();
      p.z[w] = rng() & rng();
    }
    const std::string sparse = p.to_sparse_label();
    EXPECT_EQ(P::from_label(sparse, n), p) << sparse;
    EXPECT_EQ(P::from_label(p.to_label(n), n), p);
    int expected_weight = 0;
    for (std::size_t q = 0; q < n; ++q) expected_weight += p.code(q) != 0;
    EXPECT_EQ(p.weight(), expected_weight);
    EXPECT_EQ(static_cast<int>(std::count(sparse.begin(), sparse.end(), ' ')) + 1,
              std::max(expected_weight, 1));
  }
}

TYPED_TEST(PauliStringTest, SingleBuildsOneFactor) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  for (std::size_t q : {std::size_t{0}, std::size_t{63}, n / 2, n - 1}) {
    for (char letter : std::string("IXYZ")) {
      const P p = P::single(letter, q);
      EXPECT_EQ(p.letter(q), letter);
      EXPECT_EQ(p.weight(), letter == 'I' ? 0 : 1);
      EXPECT_EQ(p.span(), letter == 'I' ? 0 : q + 1);
    }
  }
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { P::single('X', n); }, {std::to_string(n)}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { P::single('Q', 0); }, {"'Q'"}));
}

TYPED_TEST(PauliStringTest, CodeAndSetCodeAreInverseAndTouchOnlyOneQubit) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  std::mt19937_64 rng(7 * W);
  std::vector<int> codes(n);
  P p;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t q = 0; q < n; ++q) {
      codes[q] = static_cast<int>(rng() & 3);
      p.set_code(q, codes[q]);
    }
    for (std::size_t q = 0; q < n; ++q) {
      ASSERT_EQ(p.code(q), codes[q]) << "qubit " << q;
      ASSERT_EQ((p.x[q / 64] >> (q % 64)) & 1, static_cast<std::uint64_t>(codes[q] & 1));
      ASSERT_EQ((p.z[q / 64] >> (q % 64)) & 1, static_cast<std::uint64_t>(codes[q] >> 1));
      ASSERT_EQ(p.letter(q), "IXZY"[codes[q]]);
    }
  }
  // Overwriting with the identity clears exactly that qubit.
  const P before = p;
  p.set_code(n - 1, 0);
  EXPECT_EQ(p.code(n - 1), 0);
  for (std::size_t q = 0; q + 1 < n; ++q) ASSERT_EQ(p.code(q), before.code(q));
}

TYPED_TEST(PauliStringTest, SpanIsOnePastTheHighestFactor) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  for (std::size_t q = 0; q < n; q += (q < 70 ? 1 : 37)) {
    P p = P::single('Z', q);
    EXPECT_EQ(p.span(), q + 1);
    p.set_code(0, 1);
    EXPECT_EQ(p.span(), q + 1);
  }
  EXPECT_EQ(P::single('X', n - 1).span(), n);
}

TYPED_TEST(PauliStringTest, XorIsTheKeyProduct) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  const P a = P::from_label("X0 Y1 Z2 X" + std::to_string(n - 1), n);
  const P b = P::from_label("X0 Z1 Z2 Y3", n);
  const P c = a ^ b;
  EXPECT_EQ(c.to_sparse_label(), "X1 Y3 X" + std::to_string(n - 1));
  P d = a;
  d ^= b;
  EXPECT_EQ(d, c);
  d ^= b;
  EXPECT_EQ(d, a);
  EXPECT_TRUE((a ^ a).is_identity());
}

TYPED_TEST(PauliStringTest, CommutationAgreesWithDenseMatrices) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  std::mt19937_64 rng(1234 + W);
  for (std::size_t small = 1; small <= 5; ++small) {
    const std::vector<std::size_t> qubits = SpreadQubits<W>(small);
    for (int trial = 0; trial < 30; ++trial) {
      const std::string la = RandomDenseLabel(rng, small), lb = RandomDenseLabel(rng, small);
      const P a = Place<W>(la, qubits), b = Place<W>(lb, qubits);
      const dense::Matrix ma = dense::pauli_matrix(la), mb = dense::pauli_matrix(lb);
      const dense::Matrix ab = dense::multiply(ma, mb), ba = dense::multiply(mb, ma);
      const bool dense_commute = dense::max_abs_diff(ab, ba) < 1e-12;
      const bool dense_anticommute = dense::max_abs_diff(ab, Complex(-1.0) * ba) < 1e-12;
      ASSERT_NE(dense_commute, dense_anticommute) << la << " " << lb;
      EXPECT_EQ(a.commutes_with(b), dense_commute) << la << " vs " << lb;
      EXPECT_EQ(b.commutes_with(a), dense_commute) << lb << " vs " << la;
    }
  }
}

TYPED_TEST(PauliStringTest, ProductPhaseAgreesWithDenseMatrices) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  std::mt19937_64 rng(99 + W);
  for (std::size_t small = 1; small <= 5; ++small) {
    const std::vector<std::size_t> qubits = SpreadQubits<W>(small);
    for (int trial = 0; trial < 30; ++trial) {
      const std::string la = RandomDenseLabel(rng, small), lb = RandomDenseLabel(rng, small);
      const P a = Place<W>(la, qubits), b = Place<W>(lb, qubits);
      const PauliProduct<W> product = multiply(a, b);
      EXPECT_EQ(product.phase, product_phase(a, b));
      ASSERT_GE(product.phase, 0);
      ASSERT_LT(product.phase, 4);
      EXPECT_EQ(product.string, a ^ b);
      const dense::Matrix expected = dense::multiply(dense::pauli_matrix(la), dense::pauli_matrix(lb));
      const dense::Matrix actual =
          kPowersOfI[product.phase] * dense::pauli_matrix(Gather<W>(product.string, qubits));
      EXPECT_LT(dense::max_abs_diff(actual, expected), 1e-12)
          << la << " * " << lb << " phase " << product.phase;
      // Commuting strings multiply with a real phase, anticommuting ones with an imaginary one.
      EXPECT_EQ(product.phase % 2 == 0, a.commutes_with(b)) << la << " " << lb;
    }
  }
}

TYPED_TEST(PauliStringTest, SingleQubitProductTable) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t q = P::kMaxQubits - 1;
  auto phase = [&](char a, char b) { return product_phase(P::single(a, q), P::single(b, q)); };
  EXPECT_EQ(phase('X', 'Y'), 1);  // XY = iZ
  EXPECT_EQ(phase('Y', 'X'), 3);  // YX = -iZ
  EXPECT_EQ(phase('Y', 'Z'), 1);  // YZ = iX
  EXPECT_EQ(phase('Z', 'Y'), 3);
  EXPECT_EQ(phase('Z', 'X'), 1);  // ZX = iY
  EXPECT_EQ(phase('X', 'Z'), 3);
  for (char a : std::string("IXYZ")) {
    EXPECT_EQ(phase(a, a), 0);
    EXPECT_EQ(phase('I', a), 0);
    EXPECT_EQ(phase(a, 'I'), 0);
  }
  // Phases add across qubits and words: (X⊗X)(Y⊗Y) = (iZ)(iZ) = −ZZ.
  const P xx = P::from_label("X0 X" + std::to_string(q), q + 1);
  const P yy = P::from_label("Y0 Y" + std::to_string(q), q + 1);
  EXPECT_EQ(product_phase(xx, yy), 2);
}

TYPED_TEST(PauliStringTest, EqualityAndLexicographicOrderOnXThenZWords) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  std::mt19937_64 rng(5 + W);
  auto flatten = [](const P& p) {
    std::array<std::uint64_t, 2 * W> words;
    std::copy(p.x.begin(), p.x.end(), words.begin());
    std::copy(p.z.begin(), p.z.end(), words.begin() + W);
    return words;
  };
  std::vector<P> strings;
  for (int i = 0; i < 60; ++i) {
    P p;
    for (int w = 0; w < W; ++w) {
      // Few distinct word values, so that ties on early words are common.
      p.x[w] = rng() % 3;
      p.z[w] = rng() % 3;
    }
    strings.push_back(p);
  }
  for (const P& a : strings) {
    for (const P& b : strings) {
      const auto fa = flatten(a), fb = flatten(b);
      const bool less = std::lexicographical_compare(fa.begin(), fa.end(), fb.begin(), fb.end());
      ASSERT_EQ(a < b, less);
      ASSERT_EQ(a == b, fa == fb);
      ASSERT_EQ(a != b, fa != fb);
      ASSERT_EQ(a > b, b < a);
    }
  }
  // x words dominate z words: any x difference decides before the z words are looked at.
  P small_x, large_x;
  small_x.z.fill(~std::uint64_t{0});
  large_x.x[W - 1] = 1;
  EXPECT_LT(small_x, large_x);
  // Within the x words, word 0 is most significant.
  P low_word, high_word;
  low_word.x[0] = 2;
  high_word.x[0] = 1;
  high_word.x[W - 1] |= std::uint64_t{1} << 63;
  if (W > 1) {
    EXPECT_LT(high_word, low_word);
  }
}

TYPED_TEST(PauliStringTest, StdHashIsConsistentWithEquality) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t n = P::kMaxQubits;
  std::hash<P> hasher;
  std::mt19937_64 rng(77 + W);
  std::unordered_set<std::size_t> hashes;
  std::unordered_set<P> set;
  for (int i = 0; i < 500; ++i) {
    P p;
    for (int w = 0; w < W; ++w) {
      p.x[w] = rng();
      p.z[w] = rng();
    }
    const P copy = P::from_label(p.to_sparse_label(), n);
    ASSERT_EQ(copy, p);
    EXPECT_EQ(hasher(copy), hasher(p));
    hashes.insert(hasher(p));
    set.insert(p);
    set.insert(copy);
  }
  EXPECT_EQ(set.size(), 500u);
  EXPECT_EQ(hashes.size(), 500u);  // a 64-bit hash has no collision among 500 random keys
  // Strings differing in a single bit (x or z, any word) hash differently.
  std::unordered_set<std::size_t> single_bits;
  for (std::size_t q = 0; q < n; ++q) {
    single_bits.insert(hasher(P::single('X', q)));
    single_bits.insert(hasher(P::single('Z', q)));
  }
  EXPECT_EQ(single_bits.size(), 2 * n);
}

TYPED_TEST(PauliStringTest, MalformedLabelsNameTheProblem) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("XQZ", 3); }, {"XQZ", "'Q'", "position 1"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("xyz", 3); }, {"'x'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("X Y5", 10); }, {"'X'", "no qubit index"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("X70", 64); }, {"qubit 70", "64 qubits"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("Z1 X64", 64); }, {"qubit 64"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { P::from_label("X5 Z5", 10); }, {"qubit 5", "more than once"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { P::from_label("X5,Y2,X5", 10); }, {"qubit 5", "more than once"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { P::from_label("XYZ", 5); }, {"XYZ", "3 characters", "5 qubits"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { P::from_label("XYZZZZ", 5); }, {"6 characters", "5 qubits"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("X5a", 10); }, {"X5a", "'a'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("Q3", 10); }, {"'Q'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("X-1", 10); }, {"'X'", "no qubit index"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([] { P::from_label("X99999999999999999999", 10); }, {"out of range"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("X 0", 10); }, {"'X'", "no qubit index"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { P::from_label("X Z", 3); }, {"' '"}));
}

TYPED_TEST(PauliStringTest, QubitCountsBeyondTheWidthAreRejected) {
  constexpr int W = TypeParam::kValue;
  using P = PauliString<W>;
  const std::size_t too_many = P::kMaxQubits + 1;
  if (too_many <= kMaxSupportedQubits) {
    EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { P::from_label("X0", too_many); },
                                                {std::to_string(too_many), "width " + std::to_string(W)}));
  } else {
    EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { P::from_label("X0", too_many); }, {"1024"}));
  }
}

TEST(WidthForQubitsTest, PicksTheSmallestWidthAtEveryBoundary) {
  EXPECT_EQ(width_for_qubits(0), 1);
  EXPECT_EQ(width_for_qubits(1), 1);
  EXPECT_EQ(width_for_qubits(64), 1);
  EXPECT_EQ(width_for_qubits(65), 2);
  EXPECT_EQ(width_for_qubits(128), 2);
  EXPECT_EQ(width_for_qubits(129), 4);
  EXPECT_EQ(width_for_qubits(256), 4);
  EXPECT_EQ(width_for_qubits(257), 8);
  EXPECT_EQ(width_for_qubits(512), 8);
  EXPECT_EQ(width_for_qubits(513), 16);
  EXPECT_EQ(width_for_qubits(1024), 16);
  for (std::size_t n = 1; n <= 1024; ++n) {
    const int w = width_for_qubits(n);
    ASSERT_GE(64u * static_cast<std::size_t>(w), n) << n;
    if (w > 1) {
      ASSERT_LT(32u * static_cast<std::size_t>(w), n) << n;  // half the width would not fit
    }
  }
}

TEST(WidthForQubitsTest, MoreThan1024QubitsThrowNaming1024) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { width_for_qubits(1025); }, {"1024", "1025"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { width_for_qubits(1u << 20); }, {"1024"}));
}

TEST(LabelTest, ParseLabelReturnsFactorsAscending) {
  const std::vector<LabelFactor> factors = parse_label("Z9, X2 Y4", 10);
  ASSERT_EQ(factors.size(), 3u);
  EXPECT_EQ(factors[0].qubit, 2u);
  EXPECT_EQ(factors[0].pauli, 'X');
  EXPECT_EQ(factors[1].qubit, 4u);
  EXPECT_EQ(factors[1].pauli, 'Y');
  EXPECT_EQ(factors[2].qubit, 9u);
  EXPECT_EQ(factors[2].pauli, 'Z');
  EXPECT_TRUE(is_sparse_label("X0"));
  EXPECT_FALSE(is_sparse_label("XYZ"));
  EXPECT_EQ(pauli_code('I'), 0);
  EXPECT_EQ(pauli_code('X'), 1);
  EXPECT_EQ(pauli_code('Z'), 2);
  EXPECT_EQ(pauli_code('Y'), 3);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { pauli_code('y'); }, {"'y'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { parse_label("X0", 1025); }, {"1024"}));
}

// Qubit indices in sparse labels are decimal digits only, read exactly: leading zeros are decimal, and an
// index past 2^64 is out of range like any other (quoted as written), never wrapped or cut.
TEST(LabelTest, QubitIndicesAreStrictDecimals) {
  const std::vector<LabelFactor> factors = parse_label("X007 Z0010", 11);
  ASSERT_EQ(factors.size(), 2u);
  EXPECT_EQ(factors[0].qubit, 7u);
  EXPECT_EQ(factors[1].qubit, 10u);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [] { parse_label("X99999999999999999999999", 10); },
      {"'X99999999999999999999999'", "qubit 99999999999999999999999", "out of range for 10 qubits"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { parse_label("Z1 X18446744073709551616", 10); },
                                              {"qubit 18446744073709551616", "out of range"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { parse_label("X1e3", 10); }, {"'X1e3'", "'e'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { parse_label("X1.0", 10); }, {"'X1.0'", "'.'"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { parse_label("X+1", 10); }, {"'X+1'", "no qubit index"}));
}

TEST(PauliString, RowParitiesReadTheKeysWordsOfWiderRowsAndAreLinear) {
  // Row 0 reads x of qubit 3 and z of qubit 70; row 1 reads x of qubit 130 (beyond W = 2: never seen).
  std::vector<PauliString<16>> rows(2);
  rows[0].x[0] = std::uint64_t{1} << 3;
  rows[0].z[1] = std::uint64_t{1} << 6;
  rows[1].x[2] = std::uint64_t{1} << 2;
  rows[1].z[0] = std::uint64_t{1} << 5;
  const auto key = [](const char* label) { return PauliString<2>::from_label(label, 128); };
  EXPECT_EQ(row_parities(rows, key("X3")), 1u);
  EXPECT_EQ(row_parities(rows, key("Y3 Z70")), 0u);  // x of 3 and z of 70: even
  EXPECT_EQ(row_parities(rows, key("Z5")), 2u);
  EXPECT_EQ(row_parities(rows, key("Y5 X3")), 3u);
  EXPECT_EQ(row_parities(rows, key("I")), 0u);
  const auto a = key("X3 Y5 Z70 X100"), b = key("Y3 Z5 Y70");
  EXPECT_EQ(row_parities(rows, a ^ b), row_parities(rows, a) ^ row_parities(rows, b));
}

}  // namespace
}  // namespace paulistrings
