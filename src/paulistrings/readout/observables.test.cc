// Tests the state-free read-outs: overlap and identity_coefficient against dense traces, the
// anticommute histogram against dense commutation checks, rotated_overlap against the dense echo
// 2^-n Tr(A V† A V) and against materialized Heisenberg propagation, diagonal_echo, and bad input.

#include "paulistrings/readout/observables.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/dense_simulator.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

namespace dense = testing::dense;
using Terms = std::vector<std::pair<std::string, Complex>>;
using Sites = std::vector<std::size_t>;

using testing::ComplexClose;
using testing::MakeSum;
using testing::ThrowsInvalidArgumentMentioning;

template <int W, Coefficient C>
PauliSum<W, C> RandomSum(std::mt19937_64& rng, std::size_t num_qubits, std::size_t count) {
  return MakeSum<W, C>(num_qubits, testing::random_terms(rng, num_qubits, count, PauliSum<W, C>::kIsComplex));
}

// Each qubit of 0…n−1 with probability 1/2, in a random order.
Sites RandomSites(std::mt19937_64& rng, std::size_t num_qubits) {
  Sites sites;
  std::bernoulli_distribution keep(0.5);
  for (std::size_t q = 0; q < num_qubits; ++q) {
    if (keep(rng)) sites.push_back(q);
  }
  std::shuffle(sites.begin(), sites.end(), rng);
  return sites;
}

double NormSquared(const std::vector<double>& histogram) {
  double total = 0.0;
  for (double w : histogram) total += w;
  return total;
}

dense::Matrix Identity(std::size_t num_qubits) { return dense::Matrix::identity(1 << num_qubits); }

// tr(M)/2^n.
Complex NormalizedTrace(const dense::Matrix& m) { return dense::trace(m) / static_cast<double>(m.dim()); }

// ---------------------------------------------------------------- overlap

template <int W, Coefficient C1, Coefficient C2>
void ExpectOverlapMatchesDenseTrace(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t n = 1; n <= 5; ++n) {
    // Two independent random sums, then a pair sharing most keys (so the sum is not dominated by misses).
    const auto a = RandomSum<W, C1>(rng, n, 3 * n + 2);
    const auto b = RandomSum<W, C2>(rng, n, 3 * n + 2);
    Terms shared = testing::random_terms(rng, n, 4 * n, true);
    Terms shared_other;
    for (const auto& [label, c] : shared) shared_other.emplace_back(label, Complex(c.imag() + 0.5, c.real()));
    const auto c = MakeSum<W, C1>(n, shared);
    const auto d = MakeSum<W, C2>(n, shared_other);
    for (const auto& [x, y] : {std::pair{&a, &b}, std::pair{&c, &d}}) {
      const dense::Matrix dx = testing::dense_operator(*x, n), dy = testing::dense_operator(*y, n);
      const Complex expected = NormalizedTrace(dense::multiply(dense::adjoint(dx), dy));
      EXPECT_TRUE(ComplexClose(overlap(*x, *y), expected)) << n << " qubits";
    }
    EXPECT_NE(overlap(c, d), Complex(0.0));
  }
}

TEST(OverlapTest, RealSumsMatchDenseTrace) { ExpectOverlapMatchesDenseTrace<1, double, double>(11); }
TEST(OverlapTest, ComplexSumsMatchDenseTrace) { ExpectOverlapMatchesDenseTrace<1, Complex, Complex>(12); }
TEST(OverlapTest, MixedRealAndComplexSumsMatchDenseTrace) {
  ExpectOverlapMatchesDenseTrace<1, double, Complex>(13);
  ExpectOverlapMatchesDenseTrace<1, Complex, double>(14);
}
TEST(OverlapTest, WiderWidthsMatchDenseTrace) {
  ExpectOverlapMatchesDenseTrace<2, Complex, Complex>(15);
  ExpectOverlapMatchesDenseTrace<16, double, Complex>(16);
}

TEST(OverlapTest, ConjugatesTheFirstArgument) {
  const auto a = PauliSum<1, Complex>::from_labels(2, {{"XI", Complex(1.0, 2.0)}, {"ZZ", Complex(0.0, 1.0)}});
  const auto b = PauliSum<1, Complex>::from_labels(2, {{"XI", Complex(3.0, 0.0)}, {"YY", Complex(5.0, 5.0)}});
  // conj(1 + 2i)·3 = 3 − 6i; ZZ and YY are not shared.
  EXPECT_EQ(overlap(a, b), Complex(3.0, -6.0));
  EXPECT_EQ(overlap(b, a), Complex(3.0, 6.0));
  // ⟨a, a⟩ = Σ|a|².
  EXPECT_EQ(overlap(a, a), Complex(6.0, 0.0));
  const auto real = PauliSum<1, double>::from_labels(2, {{"ZZ", 2.0}, {"XI", -1.0}});
  EXPECT_EQ(overlap(real, a), Complex(-1.0, 0.0));  // 2·i − (1 + 2i)
  EXPECT_EQ(overlap(a, real), Complex(-1.0, 0.0));  // conj(i)·2 − conj(1 + 2i)
  const auto imaginary = PauliSum<1, Complex>::from_labels(2, {{"ZZ", Complex(0.0, 2.0)}});
  EXPECT_EQ(overlap(real, imaginary), Complex(0.0, 4.0));   // 2·2i
  EXPECT_EQ(overlap(imaginary, real), Complex(0.0, -4.0));  // conj(2i)·2
}

TEST(OverlapTest, HandComputedAcrossWords) {
  const auto a = PauliSum<4, double>::from_labels(200, {{"X0 Z64", 2.0}, {"Y199", 3.0}, {"I", 1.0}});
  const auto b = PauliSum<4, Complex>::from_labels(
      200, {{"X0 Z64", Complex(0.0, 1.0)}, {"Y199", Complex(-1.0, 0.0)}, {"Z64", Complex(7.0, 0.0)}});
  EXPECT_EQ(overlap(a, b), Complex(-3.0, 2.0));
  EXPECT_EQ(overlap(b, a), Complex(-3.0, -2.0));
  const PauliSum<4, double> empty(200);
  EXPECT_EQ(overlap(a, empty), Complex(0.0));
  EXPECT_EQ(overlap(empty, b), Complex(0.0));
}

TEST(OverlapTest, MismatchedQubitCountsThrow) {
  const auto a = PauliSum<1, double>::from_labels(3, {{"XII", 1.0}});
  const auto b = PauliSum<1, Complex>::from_labels(4, {{"XIII", 1.0}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { overlap(a, b); }, {"3", "4 qubits"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { overlap(b, a); }, {"4", "3 qubits"}));
}

// ---------------------------------------------------------------- identity coefficient

TEST(IdentityCoefficientTest, MatchesNormalizedDenseTrace) {
  std::mt19937_64 rng(21);
  for (std::size_t n = 1; n <= 6; ++n) {
    auto real = RandomSum<1, double>(rng, n, 4 * n);
    real += PauliSum<1, double>::from_labels(n, {{"I", 0.75}});
    const auto complex = RandomSum<1, Complex>(rng, n, 4 * n) +
                         PauliSum<1, Complex>::from_labels(n, {{"I", Complex(-0.5, 0.25)}});
    EXPECT_TRUE(ComplexClose(real.identity_coefficient(), NormalizedTrace(testing::dense_operator(real, n))));
    EXPECT_TRUE(
        ComplexClose(complex.identity_coefficient(), NormalizedTrace(testing::dense_operator(complex, n))));
    EXPECT_NE(real.identity_coefficient(), 0.0);
  }
  const auto traceless = PauliSum<2, double>::from_labels(70, {{"X69", 1.0}, {"Z0", 2.0}});
  EXPECT_EQ(traceless.identity_coefficient(), 0.0);
  const auto wide = PauliSum<2, Complex>::from_labels(70, {{"X69", 1.0}, {"I", Complex(0.0, 3.0)}});
  EXPECT_EQ(wide.identity_coefficient(), Complex(0.0, 3.0));
}

// ---------------------------------------------------------------- anticommute histogram

// w[k] from dense matrices: a string anticommutes with G_q iff P·G_q = −G_q·P.
std::vector<double> DenseHistogram(const PauliSum<1, Complex>& sum, const Sites& sites, char axis) {
  const std::size_t n = sum.num_qubits();
  std::vector<dense::Matrix> generators;
  for (std::size_t q : sites) {
    std::string g_label(n, 'I');
    g_label[q] = axis == 'x' ? 'X' : 'Z';
    generators.push_back(dense::pauli_matrix(g_label));
  }
  std::vector<double> histogram(sites.size() + 1, 0.0);
  for (std::size_t t = 0; t < sum.size(); ++t) {
    const dense::Matrix p = dense::pauli_matrix(sum.keys()[t].to_label(n));
    std::size_t count = 0;
    for (const dense::Matrix& g : generators) {
      const dense::Matrix pg = dense::multiply(p, g), gp = dense::multiply(g, p);
      const bool anticommutes = dense::max_abs_diff(pg, Complex(-1.0) * gp) < 1e-12;
      EXPECT_TRUE(anticommutes || dense::max_abs_diff(pg, gp) < 1e-12);
      count += anticommutes;
    }
    histogram[count] += std::norm(sum.coefficients()[t]);
  }
  return histogram;
}

TEST(AnticommuteHistogramTest, MatchesDenseCommutationOnRandomSums) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 1 + trial % 5;
    const auto sum = RandomSum<1, Complex>(rng, n, 3 * n + 4);
    const Sites sites = RandomSites(rng, n);
    for (const char axis : {'x', 'z'}) {
      const std::string name(1, axis);
      const std::vector<double> actual = anticommute_histogram(sum, sites, name);
      const std::vector<double> expected = DenseHistogram(sum, sites, axis);
      ASSERT_EQ(actual.size(), sites.size() + 1);
      for (std::size_t k = 0; k < actual.size(); ++k) {
        EXPECT_NEAR(actual[k], expected[k], 1e-12 * std::max(1.0, expected[k]))
            << "axis " << axis << " k=" << k;
      }
      EXPECT_NEAR(NormSquared(actual), sum.norm_squared(), 1e-12 * sum.norm_squared());
      // The axis name is case-insensitive.
      const std::string upper(1, static_cast<char>(std::toupper(axis)));
      EXPECT_EQ(anticommute_histogram(sum, sites, upper), actual);
    }
  }
}

TEST(AnticommuteHistogramTest, RealSumsUseSquaredCoefficients) {
  std::mt19937_64 rng(32);
  for (std::size_t n = 2; n <= 5; ++n) {
    const auto real = RandomSum<1, double>(rng, n, 4 * n);
    const Sites sites = RandomSites(rng, n);
    const std::vector<double> from_real = anticommute_histogram(real, sites, "z");
    const std::vector<double> expected = DenseHistogram(real.to_complex(), sites, 'z');
    for (std::size_t k = 0; k < expected.size(); ++k) EXPECT_NEAR(from_real[k], expected[k], 1e-12) << k;
  }
}

TEST(AnticommuteHistogramTest, HandPickedTerms) {
  const auto sum =
      PauliSum<1, double>::from_labels(3, {{"ZII", 1.0}, {"YZI", 2.0}, {"XXX", 3.0}, {"IIY", 0.5}});
  const Sites sites = {0, 1};
  // Axis x: Z0 → 1, Y0 Z1 → 2, X… → 0, Y2 (off site) → 0.
  EXPECT_EQ(anticommute_histogram(sum, sites), (std::vector<double>{9.25, 1.0, 4.0}));
  EXPECT_EQ(anticommute_histogram(sum, sites, "x"), (std::vector<double>{9.25, 1.0, 4.0}));
  // Axis z: Z0 → 0, Y0 Z1 → 1, X0 X1 → 2, Y2 → 0.
  EXPECT_EQ(anticommute_histogram(sum, sites, "z"), (std::vector<double>{1.25, 4.0, 9.0}));
  // No sites: one bin holding Σ|c|².
  EXPECT_EQ(anticommute_histogram(sum, Sites{}, "x"), (std::vector<double>{14.25}));
  // Complex coefficients enter as |c|².
  const auto complex =
      PauliSum<1, Complex>::from_labels(2, {{"ZZ", Complex(3.0, 4.0)}, {"XI", Complex(0.0, 1.0)}});
  EXPECT_EQ(anticommute_histogram(complex, Sites{1, 0}, "x"), (std::vector<double>{1.0, 0.0, 25.0}));
  const PauliSum<1, double> empty(3);
  EXPECT_EQ(anticommute_histogram(empty, sites, "z"), (std::vector<double>{0.0, 0.0, 0.0}));
}

TEST(AnticommuteHistogramTest, SitesAcrossWordBoundaries) {
  const auto sum = PauliSum<4, double>::from_labels(
      200, {{"Z63 Z64 Z65", 1.0}, {"Y63 X64 Y199", 2.0}, {"X128 Z127", 3.0}, {"Z0 Z1 Z2", 4.0}});
  const Sites sites = {63, 64, 65, 127, 128, 199};
  // Axis x counts Z/Y on sites: 3, 2 (Y63, Y199), 1 (Z127), 0.
  EXPECT_EQ(anticommute_histogram(sum, sites, "x"),
            (std::vector<double>{16.0, 9.0, 4.0, 1.0, 0.0, 0.0, 0.0}));
  // Axis z counts X/Y on sites: 0, 3 (Y63, X64, Y199), 1 (X128), 0.
  EXPECT_EQ(anticommute_histogram(sum, sites, "z"),
            (std::vector<double>{17.0, 9.0, 0.0, 4.0, 0.0, 0.0, 0.0}));
}

TEST(AnticommuteHistogramTest, BadInputThrows) {
  const auto sum = PauliSum<1, double>::from_labels(3, {{"ZII", 1.0}});
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { anticommute_histogram(sum, Sites{0}, "y"); }, {"axis", "\"y\""}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { anticommute_histogram(sum, Sites{0}, ""); }, {"axis"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { anticommute_histogram(sum, Sites{0}, "xz"); },
                                              {"axis", "\"xz\""}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        anticommute_histogram(sum, Sites{0, 2, 0}, "x");
      },
      {"site 0", "twice"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        anticommute_histogram(sum, Sites{1, 3}, "z");
      },
      {"site 3", "3 qubits"}));
  const auto wide = PauliSum<2, double>::from_labels(70, {{"Z69", 1.0}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        anticommute_histogram(wide, Sites{69, 70}, "x");
      },
      {"site 70", "70 qubits"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        anticommute_histogram(wide, Sites{64, 64}, "x");
      },
      {"site 64", "twice"}));
}

// ---------------------------------------------------------------- rotated overlap

// 2^-n Tr(A V† A V), V = Π_{q∈sites} exp(−iδG_q) = Π rx(2δ) or rz(2δ).
Complex DenseRotatedOverlap(const dense::Matrix& a, std::size_t n, const Sites& sites, double delta,
                            char axis) {
  dense::Matrix v = Identity(n);
  const double angle[] = {2.0 * delta};
  const dense::Matrix local = dense::gate_matrix(axis == 'x' ? "rx" : "rz", angle);
  for (std::size_t q : sites) {
    const int qubit[] = {static_cast<int>(q)};
    v = dense::multiply(dense::embed(local, qubit, static_cast<int>(n)), v);
  }
  const dense::Matrix rotated = dense::multiply(dense::adjoint(v), dense::multiply(a, v));
  return NormalizedTrace(dense::multiply(a, rotated));
}

// Σ_P a_P b_P (no conjugation) with B = V† A V materialized by Heisenberg propagation.
template <int W, Coefficient C>
Complex MaterializedRotatedOverlap(const PauliSum<W, C>& a, const Sites& sites, double delta, char axis) {
  Circuit circuit(a.num_qubits());
  for (std::size_t q : sites) {
    circuit.append(axis == 'x' ? Channel::rx(2.0 * delta, q) : Channel::rz(2.0 * delta, q));
  }
  PauliSum<W, C> b = a;
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.threads = 1;  // tiny sums: one thread avoids OpenMP start-up per layer on a shared machine
  propagate(b, circuit, options);
  Complex total = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    total += Complex(a.coefficients()[i]) * Complex(b.coefficient(a.keys()[i]));
  }
  return total;
}

// Σ a_P² (no conjugation).
template <int W, Coefficient C>
Complex SumOfSquares(const PauliSum<W, C>& a) {
  Complex total = 0.0;
  for (C c : a.coefficients()) total += Complex(c) * Complex(c);
  return total;
}

template <Coefficient C>
void ExpectRotatedOverlapMatchesDense(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> angle(-2.0, 2.0);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 1 + trial % 6;
    // Random strings plus their Z↔Y / X↔Y partners so that groups with several members occur.
    Terms terms = testing::random_terms(rng, n, 2 * n + 2, PauliSum<1, C>::kIsComplex);
    const std::size_t base = terms.size();
    for (std::size_t t = 0; t < base; t += 2) {
      std::string partner = terms[t].first;
      for (char& letter : partner) {
        letter = letter == 'Z' ? 'Y' : letter == 'Y' ? (trial % 2 ? 'X' : 'Z') : letter;
      }
      terms.emplace_back(partner, terms[t + 1 < base ? t + 1 : 0].second * 0.7);
    }
    const auto sum = MakeSum<1, C>(n, terms);
    const dense::Matrix a = testing::dense_operator(sum, n);
    const Sites sites = RandomSites(rng, n);
    const double delta = trial < 2 ? std::numbers::pi / 8 : angle(rng);
    for (char axis : {'x', 'z'}) {
      const std::string axis_name(1, axis);
      const Complex actual = rotated_overlap(sum, sites, delta, axis_name);
      EXPECT_TRUE(ComplexClose(actual, DenseRotatedOverlap(a, n, sites, delta, axis)))
          << "trial " << trial << " axis " << axis << " delta " << delta;
      EXPECT_TRUE(ComplexClose(actual, MaterializedRotatedOverlap(sum, sites, delta, axis)))
          << "trial " << trial << " axis " << axis << " delta " << delta;
    }
  }
}

TEST(RotatedOverlapTest, RealSumsMatchDenseEcho) { ExpectRotatedOverlapMatchesDense<double>(41); }
TEST(RotatedOverlapTest, ComplexSumsMatchDenseEcho) { ExpectRotatedOverlapMatchesDense<Complex>(42); }

TEST(RotatedOverlapTest, AllSitesOnSixQubitsMatchDenseEcho) {
  std::mt19937_64 rng(43);
  const Sites sites = {5, 0, 3, 1, 4, 2};
  for (const double delta : {0.3, -1.1, std::numbers::pi / 4, std::numbers::pi / 2}) {
    const auto sum = RandomSum<1, Complex>(rng, 6, 30);
    const dense::Matrix a = testing::dense_operator(sum, 6);
    for (char axis : {'x', 'z'}) {
      EXPECT_TRUE(ComplexClose(rotated_overlap(sum, sites, delta, std::string(1, axis)),
                               DenseRotatedOverlap(a, 6, sites, delta, axis)))
          << "axis " << axis << " delta " << delta;
    }
  }
}

TEST(RotatedOverlapTest, ZeroDeltaGivesSumOfSquares) {
  std::mt19937_64 rng(44);
  for (std::size_t n = 1; n <= 6; ++n) {
    const auto real = RandomSum<1, double>(rng, n, 3 * n);
    const auto complex = RandomSum<1, Complex>(rng, n, 3 * n);
    const Sites sites = RandomSites(rng, n);
    for (const char* axis : {"x", "z"}) {
      EXPECT_TRUE(ComplexClose(rotated_overlap(real, sites, 0.0, axis), Complex(real.norm_squared())));
      // For a non-Hermitian A it is Σ a_P², not Σ|a_P|².
      EXPECT_TRUE(ComplexClose(rotated_overlap(complex, sites, 0.0, axis), SumOfSquares(complex)));
    }
  }
}

TEST(RotatedOverlapTest, HandComputedSingleQubit) {
  // A = Z on one qubit, axis x: V†ZV = cos2δ Z + sin2δ Y, so Tr(A V†AV)/2 = cos 2δ.
  const auto z = PauliSum<1, double>::from_labels(1, {{"Z", 1.0}});
  const Sites site = {0};
  EXPECT_NEAR(rotated_overlap(z, site, 0.3, "x").real(), std::cos(0.6), 1e-15);
  EXPECT_NEAR(rotated_overlap(z, site, 0.3, "z").real(), 1.0, 1e-15);
  // A = Z + Y, axis x: V†AV = (c − s) Z + (s + c) Y, so the overlap is (c − s) + (s + c) = 2c.
  const auto zy = PauliSum<1, double>::from_labels(1, {{"Z", 1.0}, {"Y", 1.0}});
  EXPECT_NEAR(rotated_overlap(zy, site, 0.3, "x").real(), 2.0 * std::cos(0.6), 1e-15);
  // A = X + 2Y, axis z: V†XV = cX − sY, V†YV = cY + sX → overlap = (c + 2s) + 2(2c − s) = 5c.
  const auto xy = PauliSum<1, double>::from_labels(1, {{"X", 1.0}, {"Y", 2.0}});
  EXPECT_NEAR(rotated_overlap(xy, site, 0.3, "z").real(), 5.0 * std::cos(0.6), 1e-15);
  EXPECT_NEAR(rotated_overlap(xy, site, 0.3, "z").imag(), 0.0, 1e-15);
}

TEST(RotatedOverlapTest, WideRegistersMatchMaterializedPropagationAndTheOracle) {
  std::mt19937_64 rng(45);
  std::uniform_real_distribution<double> angle(-2.0, 2.0);
  for (int trial = 0; trial < 4; ++trial) {
    // Six-qubit random sums on qubits 61…66 of a 130-qubit register (across the first word
    // boundary); sites 0 and 129 lie outside the sum's support and change nothing.
    const Terms terms = testing::shift_terms(testing::random_terms(rng, 6, 40, trial % 2 == 1), 61);
    const auto real = MakeSum<4, double>(130, terms);
    const auto complex = MakeSum<4, Complex>(130, terms);
    const Sites sites = {61, 62, 63, 64, 65, 66, 0, 129};
    const Sites window_sites = {0, 1, 2, 3, 4, 5};
    const double delta = angle(rng);
    for (char axis : {'x', 'z'}) {
      const std::string name(1, axis);
      const Complex real_value = rotated_overlap(real, sites, delta, name);
      const Complex complex_value = rotated_overlap(complex, sites, delta, name);
      EXPECT_TRUE(ComplexClose(real_value, MaterializedRotatedOverlap(real, sites, delta, axis)));
      EXPECT_TRUE(ComplexClose(complex_value, MaterializedRotatedOverlap(complex, sites, delta, axis)));
      EXPECT_TRUE(ComplexClose(complex_value, DenseRotatedOverlap(testing::dense_operator(complex, 6, 61), 6,
                                                                  window_sites, delta, axis)));
      EXPECT_TRUE(ComplexClose(real_value, DenseRotatedOverlap(testing::dense_operator(real, 6, 61), 6,
                                                               window_sites, delta, axis)));
    }
  }
}

TEST(RotatedOverlapTest, BadInputThrows) {
  const auto sum = PauliSum<1, double>::from_labels(3, {{"ZII", 1.0}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { rotated_overlap(sum, Sites{0}, nan, "x"); }, {"delta"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { rotated_overlap(sum, Sites{0}, inf, "z"); }, {"delta"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { rotated_overlap(sum, Sites{0}, -inf, "z"); }, {"delta"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { rotated_overlap(sum, Sites{0}, 0.1, "y"); }, {"axis", "\"y\""}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        rotated_overlap(sum, Sites{1, 1}, 0.1, "x");
      },
      {"site 1", "twice"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { rotated_overlap(sum, Sites{5}, 0.1, "z"); },
                                              {"site 5", "3 qubits"}));
}

// ---------------------------------------------------------------- diagonal echo

TEST(DiagonalEchoTest, HandComputedValues) {
  const std::vector<double> histogram = {1.0, 2.0, 3.0};
  EXPECT_DOUBLE_EQ(diagonal_echo(histogram, 0.0), 1.0);
  // cos(2·π/6) = 1/2: (1 + 2·1/2 + 3·1/4) / 6 = 2.75 / 6.
  EXPECT_NEAR(diagonal_echo(histogram, std::numbers::pi / 6), 2.75 / 6.0, 1e-15);
  // cos(2·π/2) = −1: (1 − 2 + 3) / 6.
  EXPECT_NEAR(diagonal_echo(histogram, std::numbers::pi / 2), 2.0 / 6.0, 1e-15);
  // cos(2·π/4) ≈ 0: only w[0] survives.
  EXPECT_NEAR(diagonal_echo(histogram, std::numbers::pi / 4), 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(diagonal_echo(std::vector<double>{0.0, 0.0, 4.0}, 0.2), std::pow(std::cos(0.4), 2), 1e-15);
  EXPECT_NEAR(diagonal_echo(std::vector<double>{5.0}, 0.7), 1.0, 1e-15);
  const double c = std::cos(2.0 * 0.37);
  EXPECT_NEAR(diagonal_echo(std::vector<double>{0.5, 0.0, 1.5, 2.0}, 0.37),
              (0.5 + 1.5 * c * c + 2.0 * c * c * c) / 4.0, 1e-15);
}

TEST(DiagonalEchoTest, NaNWhenEveryWeightIsZero) {
  EXPECT_TRUE(std::isnan(diagonal_echo(std::vector<double>{0.0, 0.0, 0.0}, 0.3)));
  EXPECT_TRUE(std::isnan(diagonal_echo(std::vector<double>{}, 0.3)));
  EXPECT_TRUE(std::isnan(diagonal_echo(std::vector<double>{0.0}, 0.0)));
}

TEST(DiagonalEchoTest, EqualsRotatedOverlapWhenNoTwoStringsMix) {
  // Without Y letters no two strings of a sum fall into one rotation group, so the echo is diagonal:
  // rotated_overlap = Σ_P a_P² cos(2δ)^{k_P} = Σw · diagonal_echo(w, δ).
  std::mt19937_64 rng(51);
  std::uniform_real_distribution<double> angle(-2.0, 2.0);
  for (int trial = 0; trial < 12; ++trial) {
    const std::size_t n = 2 + trial % 5;
    Terms terms = testing::random_terms(rng, n, 3 * n, false);
    for (auto& [label, c] : terms) {
      for (char& letter : label) letter = letter == 'Y' ? 'Z' : letter;
    }
    const auto sum = MakeSum<1, double>(n, terms);
    const Sites sites = RandomSites(rng, n);
    const double delta = angle(rng);
    for (const char* axis : {"x", "z"}) {
      const std::vector<double> histogram = anticommute_histogram(sum, sites, axis);
      const double echo = diagonal_echo(histogram, delta);
      EXPECT_TRUE(ComplexClose(rotated_overlap(sum, sites, delta, axis), NormSquared(histogram) * echo));
      EXPECT_TRUE(
          ComplexClose(NormSquared(histogram) * echo,
                       DenseRotatedOverlap(testing::dense_operator(sum, n), n, sites, delta, axis[0])));
    }
  }
}

}  // namespace
}  // namespace paulistrings
