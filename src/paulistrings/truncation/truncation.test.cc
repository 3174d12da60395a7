// Tests of the truncation policies (docs/design.md §2.8): coeff / weight per-term tests, topn / approx_topn /
// collapse_sample layer passes and their selection kernels against brute force, the threaded cuts
// against a sorting reference and across thread counts (bitwise), composition with & and |, and
// truncation as propagate() applies it (per layer, discarded weight, exact zeros).

#include "paulistrings/truncation/truncation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/channels/channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

constexpr std::size_t kQubits = 12;
using RealSum = PauliSum<1, double>;
using ComplexSum = PauliSum<1, Complex>;

/// A distinct Pauli string for every index (base-4 digits as qubit codes); index 0 is the identity.
PauliString<1> key_of(std::size_t index) {
  PauliString<1> key;
  for (std::size_t q = 0; index != 0; ++q, index >>= 2) key.set_code(q, static_cast<int>(index & 3));
  return key;
}

/// Term i has key key_of(i) and coefficients[i].
template <Coefficient C>
PauliSum<1, C> indexed_sum(const std::vector<C>& coefficients) {
  std::vector<typename PauliSum<1, C>::Term> terms;
  for (std::size_t i = 0; i < coefficients.size(); ++i) terms.push_back({key_of(i), coefficients[i]});
  return PauliSum<1, C>::from_terms(kQubits, std::move(terms));
}

/// The indices i whose key_of(i) is still in the sum.
template <Coefficient C>
std::vector<std::size_t> surviving_indices(const PauliSum<1, C>& sum, std::size_t original_size) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < original_size; ++i) {
    if (sum.contains(key_of(i))) kept.push_back(i);
  }
  return kept;
}

/// propagate() options for one engine; one CPU thread unless asked (quick on a loaded machine; thread
/// counts do not change results).
PropagateOptions options_for(Engine engine = Engine::cpu, int threads = 1) {
  PropagateOptions options;
  options.engine = engine;
  options.threads = threads;
  return options;
}
constexpr Engine kEngines[] = {Engine::cpu, Engine::reference};
const char* engine_name(Engine engine) { return engine == Engine::cpu ? "cpu engine" : "reference engine"; }

template <Coefficient C>
std::vector<double> magnitudes_in_order(const PauliSum<1, C>& sum) {
  std::vector<double> magnitudes;
  for (const C& c : sum.coefficients()) magnitudes.push_back(magnitude_squared(c));
  return magnitudes;
}

void expect_runtime_error(const std::function<void()>& body, const std::string& fragment) {
  try {
    body();
    ADD_FAILURE() << "no std::runtime_error thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message \"" << e.what() << "\" lacks \"" << fragment << "\"";
  }
}

/// Independent exponent bin of a finite non-negative double: 0 for zero and subnormals, else ilogb + 1023.
int octave_of(double magnitude_squared) {
  if (magnitude_squared < std::numeric_limits<double>::min()) return 0;
  return std::ilogb(magnitude_squared) + 1023;
}

// ---------------------------------------------------------------- coeff and weight

TEST(CoeffTruncationTest, KeepsStrictlyAboveEpsilon) {
  const Truncation policy = Truncation::coeff(0.25);
  const PauliString<1> key = key_of(7);
  EXPECT_FALSE(policy.keep(key, 0.25));  // |c| == ε is dropped
  EXPECT_FALSE(policy.keep(key, -0.25));
  EXPECT_FALSE(policy.keep(key, std::nextafter(0.25, 0.0)));
  EXPECT_TRUE(policy.keep(key, std::nextafter(0.25, 1.0)));
  EXPECT_TRUE(policy.keep(key, 0.5));
  EXPECT_TRUE(policy.keep(key, -0.5));
  EXPECT_FALSE(policy.keep(key, 0.125));
  EXPECT_FALSE(policy.keep(key, 0.0));
}

TEST(CoeffTruncationTest, ComplexCoefficientsAreJudgedByModulus) {
  // (3/8, 1/2) has modulus exactly 5/8.
  const Truncation policy = Truncation::coeff(0.625);
  const PauliString<1> key = key_of(3);
  EXPECT_FALSE(policy.keep(key, Complex(0.375, 0.5)));
  EXPECT_FALSE(policy.keep(key, Complex(-0.5, -0.375)));
  EXPECT_FALSE(policy.keep(key, Complex(0.0, 0.625)));
  EXPECT_TRUE(policy.keep(key, Complex(0.375, 0.5000001)));
  EXPECT_TRUE(policy.keep(key, Complex(0.0, -0.75)));
  EXPECT_TRUE(Truncation::coeff(0.62).keep(key, Complex(0.375, 0.5)));
}

TEST(CoeffTruncationTest, NegativeEpsilonKeepsEverythingAndNanIsRejected) {
  const Truncation keep_all = Truncation::coeff(-1.0);
  EXPECT_TRUE(keep_all.keep(key_of(1), 1e-300));
  EXPECT_TRUE(keep_all.keep(key_of(1), Complex(0.0, 1e-320)));
  EXPECT_TRUE(keep_all.keep(key_of(1), 0.0));
  // coeff(0) compares |c|² > 0, so magnitudes whose square underflows behave as zero (docs/design.md §2.8).
  EXPECT_TRUE(Truncation::coeff(0.0).keep(key_of(1), 1e-150));
  EXPECT_FALSE(Truncation::coeff(0.0).keep(key_of(1), 1e-170));
  try {
    (void)Truncation::coeff(std::numeric_limits<double>::quiet_NaN());
    ADD_FAILURE() << "coeff(NaN) was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos) << e.what();
  }
}

TEST(CoeffTruncationTest, InsideALayerDropsExactlyTheSmallTerms) {
  // z(0) only flips signs, so every magnitude survives the layer and only the policy removes terms.
  const std::vector<double> coefficients = {0.5, 0.25, -0.25, 0.125, 0.75, -1.0, 0.2500000001};
  auto sum = indexed_sum(coefficients);
  Circuit circuit(kQubits);
  circuit.append(Channel::z(0));
  PropagateOptions options = options_for();
  options.truncation = Truncation::coeff(0.25);
  const PropagationStats stats = propagate(sum, circuit, options);
  EXPECT_EQ(surviving_indices(sum, coefficients.size()), (std::vector<std::size_t>{0, 4, 5, 6}));
  ASSERT_EQ(stats.layers.size(), 1u);
  EXPECT_EQ(stats.layers[0].discarded_weight, 0.0625 + 0.0625 + 0.015625);
  EXPECT_EQ(stats.discarded_weight, stats.layers[0].discarded_weight);
  EXPECT_EQ(stats.layers[0].terms_in, 7u);
  EXPECT_EQ(stats.layers[0].terms_out, 4u);

  const std::vector<Complex> complex_coefficients = {Complex(0.375, 0.5), Complex(0.0, 0.75),
                                                     Complex(0.5, 0.5), Complex(-0.625, 0.0)};
  auto complex_sum = indexed_sum(complex_coefficients);
  options.truncation = Truncation::coeff(0.625);
  const PropagationStats complex_stats = propagate(complex_sum, circuit, options);
  EXPECT_EQ(surviving_indices(complex_sum, complex_coefficients.size()), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(complex_stats.layers[0].discarded_weight, 0.390625 + 0.390625);
}

TEST(WeightTruncationTest, KeepsPopcountOfXOrZAtMostK) {
  const Truncation policy = Truncation::weight(2);
  EXPECT_TRUE(policy.keep(PauliString<1>{}, 1.0));
  EXPECT_TRUE(policy.keep(PauliString<1>::from_label("Y0 Y1", 64), 1.0));  // Y counts once
  EXPECT_TRUE(policy.keep(PauliString<1>::from_label("X5 Z63", 64), 1e-9));
  EXPECT_FALSE(policy.keep(PauliString<1>::from_label("Y0 Y1 X2", 64), 100.0));
  EXPECT_FALSE(policy.keep(PauliString<1>::from_label("ZZZZZZ", 6), 1.0));
  const Truncation identity_only = Truncation::weight(0);
  EXPECT_TRUE(identity_only.keep(PauliString<1>{}, 1.0));
  EXPECT_FALSE(identity_only.keep(PauliString<1>::single('Z', 3), 1.0));
  const PauliString<4> wide = PauliString<4>::from_label("X1 Y100 Z200", 256);
  EXPECT_TRUE(Truncation::weight(3).keep(wide, 1.0));
  EXPECT_FALSE(Truncation::weight(2).keep(wide, Complex(1.0)));
}

TEST(WeightTruncationTest, InsideALayerTheTestSeesOutputKeys) {
  // CNOT(0,1) maps XI → XX (weight 1 → 2) and IX → IX; weight(1) then drops the grown string.
  auto sum = PauliSum<1, double>::from_labels(2, {{"XI", 0.5}, {"IX", 2.0}, {"II", 1.0}, {"ZZ", 3.0}});
  Circuit circuit(2);
  circuit.append(Channel::cnot(0, 1));
  PropagateOptions options = options_for();
  options.truncation = Truncation::weight(1);
  const PropagationStats stats = propagate(sum, circuit, options);
  // ZZ → IZ (weight 2 → 1) survives, XI → XX is dropped.
  EXPECT_TRUE(sum == RealSum::from_labels(2, {{"IX", 2.0}, {"II", 1.0}, {"IZ", 3.0}}));
  EXPECT_EQ(stats.layers[0].discarded_weight, 0.25);
}

// ---------------------------------------------------------------- topn

TEST(TopnTruncationTest, SumsNoLargerThanNAreUntouched) {
  const std::vector<double> coefficients = {0.5, -2.0, 2.0, 1e-12, 3.0};
  for (std::size_t n : {5u, 6u, 100u}) {
    auto sum = indexed_sum(coefficients);
    const auto original = sum;
    const LayerPassResult result = Truncation::topn(n).finalize_layer(sum);
    EXPECT_TRUE(sum == original) << n;
    EXPECT_EQ(result.discarded_weight, 0.0);
    EXPECT_FALSE(result.collapsed);
  }
}

TEST(TopnTruncationTest, ZeroClears) {
  auto sum = indexed_sum(std::vector<double>{0.5, -2.0, 1.0});
  const LayerPassResult result = Truncation::topn(0).finalize_layer(sum);
  EXPECT_TRUE(sum.empty());
  EXPECT_EQ(result.discarded_weight, 0.25 + 4.0 + 1.0);
}

TEST(TopnTruncationTest, TieGroupAtTheCutIsKeptWholeOrDroppedWhole) {
  const std::vector<double> coefficients = {4.0, -3.0, 3.0, 3.0, 1.0};
  struct Case {
    std::size_t n;
    std::vector<std::size_t> kept;
    double discarded;
  };
  for (const Case& c : std::vector<Case>{{4, {0, 1, 2, 3}, 1.0},  // the tie group fits
                                         {3, {0}, 28.0},          // it does not: dropped whole, 1 < 3 remain
                                         {2, {0}, 28.0},
                                         {1, {0}, 28.0}}) {
    auto sum = indexed_sum(coefficients);
    const LayerPassResult result = Truncation::topn(c.n).finalize_layer(sum);
    EXPECT_EQ(surviving_indices(sum, coefficients.size()), c.kept) << "topn(" << c.n << ")";
    EXPECT_EQ(result.discarded_weight, c.discarded) << "topn(" << c.n << ")";
    EXPECT_LE(sum.size(), c.n);
    for (std::size_t i : c.kept) EXPECT_EQ(sum.coefficient(key_of(i)), coefficients[i]);  // values untouched
  }
}

TEST(TopnTruncationTest, AllTiedSumLargerThanNIsWiped) {
  auto sum = indexed_sum(std::vector<double>{2.0, -2.0, 2.0, 2.0});
  const LayerPassResult result = Truncation::topn(3).finalize_layer(sum);
  EXPECT_TRUE(sum.empty());
  EXPECT_EQ(result.discarded_weight, 16.0);
  // Complex moduli tie with real ones: |3 + 4i| = 5.
  auto complex_sum = indexed_sum(std::vector<Complex>{Complex(3, 4), 5.0, Complex(0, -5), 1.0});
  EXPECT_EQ(Truncation::topn(2).finalize_layer(complex_sum).discarded_weight, 76.0);
  EXPECT_TRUE(complex_sum.empty());
  complex_sum = indexed_sum(std::vector<Complex>{Complex(3, 4), 5.0, Complex(0, -5), 1.0});
  EXPECT_EQ(Truncation::topn(3).finalize_layer(complex_sum).discarded_weight, 1.0);
  EXPECT_EQ(surviving_indices(complex_sum, 4), (std::vector<std::size_t>{0, 1, 2}));
}

/// The largest upper set {i : m_i ≥ t} with at most n members (everything when size ≤ n).
std::vector<char> brute_force_topn(const std::vector<double>& magnitudes, std::size_t n) {
  if (magnitudes.size() <= n) return std::vector<char>(magnitudes.size(), 1);
  std::vector<char> best(magnitudes.size(), 0);
  std::size_t best_count = 0;
  for (double threshold : magnitudes) {
    std::size_t count = 0;
    for (double v : magnitudes) count += v >= threshold;
    if (count <= n && count > best_count) {
      best_count = count;
      for (std::size_t i = 0; i < magnitudes.size(); ++i) best[i] = magnitudes[i] >= threshold;
    }
  }
  return best;
}

TEST(TopnTruncationTest, SelectTopnMatchesBruteForceWithManyTies) {
  std::mt19937_64 rng(1234);
  const double kLevels[] = {0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.5};
  for (int trial = 0; trial < 600; ++trial) {
    const std::size_t m = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 45)(rng);
    const bool continuous = trial % 5 == 0;
    const std::size_t levels = std::uniform_int_distribution<std::size_t>(1, 7)(rng);
    std::vector<double> magnitudes(m);
    for (double& v : magnitudes) {
      v = continuous ? std::uniform_real_distribution<double>(0.0, 2.0)(rng)
                     : kLevels[std::uniform_int_distribution<std::size_t>(0, levels - 1)(rng)];
    }
    std::vector<char> keep = {42};
    const std::size_t kept = select_topn(magnitudes, n, keep);
    const std::vector<char> expected = brute_force_topn(magnitudes, n);
    ASSERT_EQ(keep, expected) << "trial " << trial << " m=" << m << " n=" << n;
    EXPECT_EQ(kept, static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1)));
    EXPECT_LE(kept, n);
  }
}

TEST(TopnTruncationTest, LayerPassOnRandomSumsNeverExceedsNAndReportsRemovedWeight) {
  std::mt19937_64 rng(99);
  const double kLevels[] = {-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0};
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t m = std::uniform_int_distribution<std::size_t>(1, 30)(rng);
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 32)(rng);
    std::vector<double> coefficients(m);
    for (double& c : coefficients) c = kLevels[std::uniform_int_distribution<int>(0, 6)(rng)];
    auto sum = indexed_sum(coefficients);
    const double before = sum.norm_squared();
    std::vector<double> magnitudes(m);
    for (std::size_t i = 0; i < m; ++i) magnitudes[i] = coefficients[i] * coefficients[i];
    const std::vector<char> expected = brute_force_topn(magnitudes, n);
    const LayerPassResult result = Truncation::topn(n).finalize_layer(sum);
    EXPECT_LE(sum.size(), n);
    double removed = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      EXPECT_EQ(sum.contains(key_of(i)), expected[i] != 0) << "trial " << trial << " term " << i;
      if (!expected[i]) removed += magnitudes[i];
    }
    EXPECT_NEAR(result.discarded_weight, removed, 1e-12);
    EXPECT_NEAR(before - sum.norm_squared(), result.discarded_weight, 1e-12);
    sum.check_invariants();
  }
}

// ---------------------------------------------------------------- approx_topn

TEST(ApproxTopnTruncationTest, ExponentBinIsTheBiasedExponent) {
  EXPECT_EQ(exponent_bin(1.0), 1023);
  EXPECT_EQ(exponent_bin(1.999), 1023);
  EXPECT_EQ(exponent_bin(2.0), 1024);
  EXPECT_EQ(exponent_bin(0.5), 1022);
  EXPECT_EQ(exponent_bin(0.0), 0);
  EXPECT_EQ(exponent_bin(std::numeric_limits<double>::denorm_min()), 0);
  EXPECT_EQ(exponent_bin(std::numeric_limits<double>::max()), 2046);
  EXPECT_EQ(exponent_bin(std::ldexp(1.5, -100)), 923);
}

TEST(ApproxTopnTruncationTest, KeepsWholeOctavesFromTheTopWhileTheyFit) {
  // |c|²: 2.25 | 1.44 1.21 | 0.81 0.64 0.5625 | 0.25 — octaves [2,4) [1,2) [0.5,1) [0.25,0.5).
  const std::vector<double> coefficients = {1.5, -1.2, 1.1, 0.9, -0.8, 0.75, 0.5};
  struct Case {
    std::size_t n;
    std::vector<std::size_t> kept;
  };
  for (const Case& c : std::vector<Case>{{0, {}},
                                         {1, {0}},
                                         {2, {0}},  // shortfall 1 < 2 (the next octave's population)
                                         {3, {0, 1, 2}},
                                         {5, {0, 1, 2}},
                                         {6, {0, 1, 2, 3, 4, 5}},
                                         {7, {0, 1, 2, 3, 4, 5, 6}}}) {
    auto sum = indexed_sum(coefficients);
    const double before = sum.norm_squared();
    const LayerPassResult result = Truncation::approx_topn(c.n).finalize_layer(sum);
    EXPECT_EQ(surviving_indices(sum, coefficients.size()), c.kept) << "approx_topn(" << c.n << ")";
    EXPECT_NEAR(result.discarded_weight, before - sum.norm_squared(), 1e-14) << "approx_topn(" << c.n << ")";
    EXPECT_FALSE(result.collapsed);
  }
}

TEST(ApproxTopnTruncationTest, TopOctaveAloneLargerThanNWipesTheSum) {
  auto sum = indexed_sum(std::vector<double>{1.5, -1.6, 1.7, 0.1});  // 2.25 2.56 2.89 share [2, 4)
  const double total = sum.norm_squared();
  const LayerPassResult result = Truncation::approx_topn(2).finalize_layer(sum);
  EXPECT_TRUE(sum.empty());
  EXPECT_DOUBLE_EQ(result.discarded_weight, total);
  auto complex_sum =
      indexed_sum(std::vector<Complex>{Complex(1.0, 1.0), Complex(-1.2, 0.0), Complex(0.0, 1.3)});
  Truncation::approx_topn(1).finalize_layer(complex_sum);  // |c|² = 2, 1.44, 1.69: the top octave holds one
  EXPECT_EQ(surviving_indices(complex_sum, 3), (std::vector<std::size_t>{0}));
}

int brute_force_lowest_bin(const std::vector<double>& magnitudes, std::size_t n) {
  std::vector<int> bins;
  for (double v : magnitudes) bins.push_back(octave_of(v));
  for (int lowest = 0; lowest < 2048; ++lowest) {
    std::size_t count = 0;
    for (int b : bins) count += b >= lowest;
    if (count <= n) return lowest;
  }
  return 2048;
}

TEST(ApproxTopnTruncationTest, LowestBinMatchesBruteForceAndKeepsItsPromises) {
  std::mt19937_64 rng(4321);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t m = std::uniform_int_distribution<std::size_t>(0, 60)(rng);
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 70)(rng);
    const int spread = std::uniform_int_distribution<int>(0, 6)(rng);
    std::vector<double> magnitudes(m);
    for (double& v : magnitudes) {
      const double mantissa =
          trial % 3 == 0 ? 1.0 : 1.0 + std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      v = std::ldexp(mantissa, std::uniform_int_distribution<int>(-spread, spread)(rng));
    }
    if (trial % 7 == 0 && m > 0) magnitudes[0] = 0.0;
    const int lowest = approx_topn_lowest_bin(magnitudes, n);
    ASSERT_EQ(lowest, brute_force_lowest_bin(magnitudes, n)) << "trial " << trial;
    std::size_t kept = 0;
    int first_excluded = -1;
    for (double v : magnitudes) {
      EXPECT_EQ(exponent_bin(v), octave_of(v));
      if (octave_of(v) >= lowest)
        ++kept;
      else
        first_excluded = std::max(first_excluded, octave_of(v));
    }
    EXPECT_LE(kept, n);
    if (kept < m) {
      // The shortfall is smaller than the population of the first octave left out.
      const auto population = static_cast<std::size_t>(std::count_if(
          magnitudes.begin(), magnitudes.end(), [&](double v) { return octave_of(v) == first_excluded; }));
      EXPECT_LT(n - kept, population) << "trial " << trial;
    }
  }
}

TEST(ApproxTopnTruncationTest, LayerPassOnRandomSumsKeepsTheFittingOctaves) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 100; ++trial) {
    const std::size_t m = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    std::vector<Complex> coefficients(m);
    for (Complex& c : coefficients) {
      c = std::polar(std::ldexp(1.0 + std::uniform_real_distribution<double>(0.0, 1.0)(rng),
                                std::uniform_int_distribution<int>(-3, 3)(rng)),
                     std::uniform_real_distribution<double>(-3.0, 3.0)(rng));
    }
    auto sum = indexed_sum(coefficients);
    std::vector<double> magnitudes;
    for (const Complex& c : coefficients) magnitudes.push_back(std::norm(c));
    const int lowest = brute_force_lowest_bin(magnitudes, n);
    const LayerPassResult result = Truncation::approx_topn(n).finalize_layer(sum);
    double removed = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      const bool expected = m <= n || octave_of(magnitudes[i]) >= lowest;
      EXPECT_EQ(sum.contains(key_of(i)), expected) << "trial " << trial << " term " << i;
      if (!expected) removed += magnitudes[i];
    }
    EXPECT_LE(sum.size(), n);
    EXPECT_NEAR(result.discarded_weight, removed, 1e-12);
  }
}

// ---------------------------------------------------------------- parallel topn / approx_topn cuts

constexpr int kThreadCounts[] = {1, 2, 3, 8};

/// topn's cut by sorting (independent of the radix select): the pivot is the n-th largest of a sorted
/// copy; the tie group at it is kept when every value ≥ pivot fits in n.
class SortedTopnReference {
 public:
  explicit SortedTopnReference(const std::vector<double>& magnitudes)
      : magnitudes_(magnitudes), sorted_(magnitudes) {
    std::sort(sorted_.begin(), sorted_.end(), std::greater<double>());
  }
  std::vector<char> keep(std::size_t n) const {
    const std::size_t m = magnitudes_.size();
    if (m <= n) return std::vector<char>(m, 1);
    std::vector<char> flags(m, 0);
    if (n == 0) return flags;
    const double pivot = sorted_[n - 1];
    const auto at_least = static_cast<std::size_t>(
        std::count_if(magnitudes_.begin(), magnitudes_.end(), [&](double v) { return v >= pivot; }));
    const bool keep_ties = at_least <= n;
    for (std::size_t i = 0; i < m; ++i)
      flags[i] = magnitudes_[i] > pivot || (keep_ties && magnitudes_[i] == pivot);
    return flags;
  }
  /// The magnitudes, largest first.
  const std::vector<double>& sorted() const { return sorted_; }

 private:
  std::vector<double> magnitudes_, sorted_;
};

enum class Spread {
  uniform,
  wide,
  three_values,
  all_equal,
  half_zeros,
  all_zeros,
  subnormal,
  extreme,
  last_bits,
  shared_high_bits
};
constexpr Spread kSpreads[] = {
    Spread::uniform,   Spread::wide,      Spread::three_values, Spread::all_equal, Spread::half_zeros,
    Spread::all_zeros, Spread::subnormal, Spread::extreme,      Spread::last_bits, Spread::shared_high_bits};

/// m non-negative magnitudes drawn the way `spread` says.
std::vector<double> draw_magnitudes(std::mt19937_64& rng, std::size_t m, Spread spread) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal;
  const auto pick = [&](int count) { return std::uniform_int_distribution<int>(0, count - 1)(rng); };
  const double denorm = std::numeric_limits<double>::denorm_min();
  std::vector<double> magnitudes(m);
  for (double& v : magnitudes) {
    switch (spread) {
      case Spread::uniform:
        v = unit(rng);
        break;
      case Spread::wide: {  // |c|² of Gaussian coefficients spread over ~120 octaves
        const double c = std::ldexp(normal(rng), -pick(60));
        v = c * c;
        break;
      }
      case Spread::three_values:
        v = std::array<double, 3>{0.25, 1.0 / 3.0, 7.0}[static_cast<std::size_t>(pick(3))];
        break;
      case Spread::all_equal:
        v = 0.75;
        break;
      case Spread::half_zeros:
        v = pick(2) == 0 ? 0.0 : unit(rng);
        break;
      case Spread::all_zeros:
        v = 0.0;
        break;
      case Spread::subnormal:  // mostly subnormals, some zeros, a few normals
        v = pick(10) == 0 ? 0.0 : pick(50) == 0 ? unit(rng) : denorm * pick(1000);
        break;
      case Spread::extreme:  // every exponent, with the largest finite and +∞ now and then
        v = pick(500) == 0   ? std::numeric_limits<double>::infinity()
            : pick(500) == 0 ? std::numeric_limits<double>::max()
                             : std::ldexp(1.0 + unit(rng), pick(2098) - 1074);
        break;
      case Spread::last_bits:  // one octave, values a few ulps apart (the last digits decide)
        v = 1.0 + std::numeric_limits<double>::epsilon() * pick(7);
        break;
      case Spread::shared_high_bits:  // two clusters whose bits agree down to bit 12
        v = std::bit_cast<double>(std::bit_cast<std::uint64_t>(0.5) + (std::uint64_t{1} << 12) * pick(2) +
                                  static_cast<std::uint64_t>(pick(5)));
        break;
    }
  }
  return magnitudes;
}

std::string describe(std::size_t m, Spread spread, int seed = -1) {
  std::string text("m=");
  text.append(std::to_string(m)).append(" spread ").append(std::to_string(static_cast<int>(spread)));
  if (seed >= 0) text.append(" seed ").append(std::to_string(seed));
  return text;
}

/// The n values the radix tests try for m magnitudes: 0, 1, m/2, m − 1, m, m + 5.
std::vector<std::size_t> cut_sizes(std::size_t m) {
  std::vector<std::size_t> sizes = {0, 1, m / 2, m == 0 ? 0 : m - 1, m, m + 5};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// cut_sizes plus the n at which the tie group at the median ends exactly (kept whole), and one less
/// (dropped whole).
std::vector<std::size_t> cut_sizes_with_exact_fits(const SortedTopnReference& reference) {
  const std::vector<double>& sorted = reference.sorted();
  std::vector<std::size_t> sizes = cut_sizes(sorted.size());
  if (!sorted.empty()) {
    const double median = sorted[sorted.size() / 2];
    const auto fit = static_cast<std::size_t>(
        std::upper_bound(sorted.begin(), sorted.end(), median, std::greater<double>()) - sorted.begin());
    sizes.push_back(fit);
    sizes.push_back(fit - 1);
  }
  return sizes;
}

void expect_select_topn_matches_reference(const std::vector<double>& magnitudes, const std::string& context) {
  const SortedTopnReference reference(magnitudes);
  for (std::size_t n : cut_sizes_with_exact_fits(reference)) {
    const std::vector<char> expected = reference.keep(n);
    const auto expected_count = static_cast<std::size_t>(std::count(expected.begin(), expected.end(), 1));
    for (int threads : kThreadCounts) {
      std::vector<char> keep(3, 7);  // stale contents are replaced
      const std::size_t kept = select_topn(magnitudes, n, keep, threads);
      ASSERT_EQ(keep, expected) << context << " n=" << n << " threads=" << threads;
      ASSERT_EQ(kept, expected_count) << context << " n=" << n << " threads=" << threads;
    }
  }
}

TEST(ParallelTopnTest, SelectTopnMatchesSortedReferenceOnSmallInputs) {
  std::mt19937_64 rng(2024);
  for (int seed = 0; seed < 40; ++seed) {
    for (std::size_t m : {0, 1, 2, 100}) {
      for (Spread spread : kSpreads) {
        expect_select_topn_matches_reference(draw_magnitudes(rng, m, spread), describe(m, spread, seed));
      }
    }
  }
}

TEST(ParallelTopnTest, SelectTopnMatchesSortedReferenceOnLargeInputs) {
  // Every spread at 10^5; the tie-heavy ones also at 2^14 (the smallest radix input, serial for any
  // thread count) and 40000 (just past the parallel threshold, 2^15).
  std::mt19937_64 rng(31337);
  for (Spread spread : kSpreads) {
    expect_select_topn_matches_reference(draw_magnitudes(rng, 100000, spread), describe(100000, spread));
  }
  for (std::size_t m : {std::size_t{1} << 14, std::size_t{40000}}) {
    for (Spread spread : {Spread::three_values, Spread::last_bits, Spread::shared_high_bits}) {
      expect_select_topn_matches_reference(draw_magnitudes(rng, m, spread), describe(m, spread));
    }
  }
  // Once at 10^6, where the gathered candidates themselves are counted on several threads.
  const std::vector<double> magnitudes = draw_magnitudes(rng, 1000000, Spread::uniform);
  const SortedTopnReference reference(magnitudes);
  for (std::size_t n : {std::size_t{1}, std::size_t{500000}, std::size_t{999999}}) {
    const std::vector<char> expected = reference.keep(n);
    for (int threads : {1, 3, 8}) {
      std::vector<char> keep;
      EXPECT_EQ(select_topn(magnitudes, n, keep, threads), n);  // distinct values: exactly n
      ASSERT_EQ(keep, expected) << "m=10^6 n=" << n << " threads=" << threads;
    }
  }
}

TEST(ParallelTopnTest, NegativeAndSignedZeroMagnitudesFollowTheComparisonRule) {
  // Not |c|² of anything, but select_topn still ranks them by value (−0 ties with +0).
  std::mt19937_64 rng(5);
  const double kLevels[] = {-1.0, -0.0, 0.0, 0.5, 2.0};
  for (std::size_t m : {std::size_t{50}, std::size_t{100000}}) {
    std::vector<double> magnitudes(m);
    for (double& v : magnitudes) v = kLevels[std::uniform_int_distribution<int>(0, 4)(rng)];
    expect_select_topn_matches_reference(magnitudes, std::string("signed m=").append(std::to_string(m)));
  }
}

TEST(ParallelTopnTest, NanMagnitudesAreNeverKeptAndDoNotCount) {
  std::mt19937_64 rng(6);
  for (std::size_t m : {std::size_t{60}, std::size_t{100000}}) {
    std::vector<double> magnitudes = draw_magnitudes(rng, m, Spread::three_values);
    std::vector<double> numbers;  // the non-NaN magnitudes, in order
    std::vector<std::size_t> positions;
    for (std::size_t i = 0; i < m; ++i) {
      if (i % 7 == 3) {
        magnitudes[i] = std::numeric_limits<double>::quiet_NaN();
      } else {
        numbers.push_back(magnitudes[i]);
        positions.push_back(i);
      }
    }
    const SortedTopnReference reference(numbers);
    for (std::size_t n : {std::size_t{1}, m / 3, numbers.size(), m - 1, m}) {
      std::vector<char> expected(m, m <= n ? 1 : 0);  // every term, NaN included, when nothing is cut
      if (m > n) {
        const std::vector<char> numbers_kept = reference.keep(n);
        for (std::size_t j = 0; j < numbers.size(); ++j) expected[positions[j]] = numbers_kept[j];
      }
      for (int threads : kThreadCounts) {
        std::vector<char> keep;
        const std::size_t kept = select_topn(magnitudes, n, keep, threads);
        ASSERT_EQ(keep, expected) << "m=" << m << " n=" << n << " threads=" << threads;
        EXPECT_EQ(kept, static_cast<std::size_t>(std::count(expected.begin(), expected.end(), 1)));
      }
    }
  }
}

/// How many magnitudes (finite or +∞, non-negative) each octave holds, the highest octave first.
using OctaveCounts = std::map<int, std::size_t, std::greater<int>>;
OctaveCounts count_octaves(const std::vector<double>& magnitudes) {
  OctaveCounts octaves;
  for (double v : magnitudes) ++octaves[std::isinf(v) ? 2047 : octave_of(v)];
  return octaves;
}

/// approx_topn's octave cut from the octave counts.
int map_lowest_bin(const OctaveCounts& octaves, std::size_t n) {
  std::size_t running = 0;
  for (const auto& [octave, count] : octaves) {
    running += count;
    if (running > n) return octave + 1;  // the octaves above this one fit
  }
  return 0;  // everything fits
}

TEST(ParallelApproxTopnTest, LowestBinIsTheSameForEveryThreadCount) {
  std::mt19937_64 rng(8080);
  for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{100000}}) {
    for (Spread spread : {Spread::uniform, Spread::wide, Spread::three_values, Spread::half_zeros,
                          Spread::subnormal, Spread::extreme}) {
      const std::vector<double> magnitudes = draw_magnitudes(rng, m, spread);
      const OctaveCounts octaves = count_octaves(magnitudes);
      std::vector<std::size_t> sizes = cut_sizes(m);
      sizes.push_back(m / 10);
      for (std::size_t n : sizes) {
        const int expected = map_lowest_bin(octaves, n);
        for (int threads : kThreadCounts) {
          ASSERT_EQ(approx_topn_lowest_bin(magnitudes, n, threads), expected)
              << "m=" << m << " n=" << n << " spread " << static_cast<int>(spread) << " threads=" << threads;
        }
      }
    }
  }
}

/// Σ magnitudes[i] over !keep[i], in index order.
double naive_discarded(const std::vector<double>& magnitudes, std::span<const char> keep) {
  double total = 0.0;
  for (std::size_t i = 0; i < magnitudes.size(); ++i) total += keep[i] ? 0.0 : magnitudes[i];
  return total;
}

TEST(ParallelCutTest, CutsReportTheSameKeptCountAndDiscardedBitsForEveryThreadCount) {
  std::mt19937_64 rng(99);
  const std::size_t m = 3 * kDiscardedSumChunk + 1234;  // several chunks, the last one short
  const std::vector<double> magnitudes = draw_magnitudes(rng, m, Spread::wide);
  for (std::size_t n : {std::size_t{0}, std::size_t{1000}, m / 2, m - 1, m}) {
    for (bool exact : {true, false}) {
      std::vector<char> first_keep;
      LayerCut first;
      for (int threads : kThreadCounts) {
        std::vector<char> keep(m, 9);
        const LayerCut cut =
            exact ? topn_cut(magnitudes, n, keep, threads) : approx_topn_cut(magnitudes, n, keep, threads);
        EXPECT_EQ(cut.kept, static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1)));
        EXPECT_EQ(static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 0)), m - cut.kept);
        const double naive = naive_discarded(magnitudes, keep);
        EXPECT_NEAR(cut.discarded_weight, naive, 1e-13 * naive) << "n=" << n << " threads=" << threads;
        if (threads == 1) {
          first_keep = keep;
          first = cut;
          continue;
        }
        EXPECT_EQ(keep, first_keep) << "n=" << n << " threads=" << threads;
        EXPECT_EQ(cut.kept, first.kept);
        EXPECT_EQ(std::bit_cast<std::uint64_t>(cut.discarded_weight),
                  std::bit_cast<std::uint64_t>(first.discarded_weight))
            << (exact ? "topn" : "approx_topn") << " n=" << n << " threads=" << threads;
      }
      if (exact) {
        EXPECT_EQ(first_keep, SortedTopnReference(magnitudes).keep(n)) << "n=" << n;
      } else {
        const int lowest = map_lowest_bin(count_octaves(magnitudes), n);
        for (std::size_t i = 0; i < m; ++i)
          ASSERT_EQ(first_keep[i] != 0, octave_of(magnitudes[i]) >= lowest) << i;
      }
    }
  }
  std::vector<char> wrong_size(m - 1);
  EXPECT_THROW(topn_cut(magnitudes, 10, wrong_size), std::invalid_argument);
}

/// A layer-pass target over a plain vector that lends the cuts `threads` threads and records every
/// retain.
class ThreadedVectorTarget {
 public:
  ThreadedVectorTarget(std::vector<double> magnitudes, int threads)
      : magnitudes_(std::move(magnitudes)), threads_(threads) {}
  std::size_t size() const { return magnitudes_.size(); }
  std::vector<double> magnitudes_squared(bool) const { return magnitudes_; }
  void retain(std::span<const char> keep) {
    retained_.emplace_back(keep.begin(), keep.end());
    std::vector<double> kept;
    for (std::size_t i = 0; i < keep.size(); ++i) {
      if (keep[i]) kept.push_back(magnitudes_[i]);
    }
    magnitudes_ = std::move(kept);
  }
  void collapse_to(std::size_t index) { magnitudes_ = {magnitudes_.at(index)}; }
  int threads() const { return threads_; }
  const std::vector<std::vector<char>>& retained() const { return retained_; }

 private:
  std::vector<double> magnitudes_;
  int threads_;
  std::vector<std::vector<char>> retained_;
};

struct SerialVectorTarget {
  std::size_t size() const { return 0; }
};

TEST(ParallelCutTest, LayerPassThreadsComeFromTheTarget) {
  ThreadedVectorTarget seven({1.0}, 7), none({1.0}, 0);
  SerialVectorTarget serial;
  EXPECT_EQ(layer_pass_threads(seven), 7);
  EXPECT_EQ(layer_pass_threads(none), 1);
  EXPECT_EQ(layer_pass_threads(serial), 1);
}

TEST(ParallelCutTest, FinalizeLayerOnIsBitwiseIdenticalForAnyTargetThreadCount) {
  std::mt19937_64 rng(4242);
  const std::size_t m = 200000;
  std::vector<double> magnitudes = draw_magnitudes(rng, m, Spread::wide);
  for (std::size_t i = 0; i < m; i += 97) magnitudes[i] = 0.015625;  // a tie group
  const std::size_t n = 70000;
  const Truncation policies[] = {Truncation::topn(n), Truncation::approx_topn(n),
                                 Truncation::approx_topn(3 * n) & Truncation::topn(n)};
  for (const Truncation& policy : policies) {
    std::vector<std::vector<char>> first_retained;
    LayerPassResult first;
    for (int threads : {1, 2, 7}) {
      ThreadedVectorTarget target(magnitudes, threads);
      const LayerPassResult result = policy.finalize_layer_on(target);
      EXPECT_FALSE(result.collapsed);
      EXPECT_LE(target.size(), n) << policy.description();
      if (threads == 1) {
        first_retained = target.retained();
        first = result;
        // The flags are the serial cuts', and the weight is what they drop (up to rounding).
        ASSERT_FALSE(first_retained.empty());
        std::vector<double> remaining = magnitudes;
        double removed = 0.0;
        for (const std::vector<char>& keep : first_retained) {
          removed += naive_discarded(remaining, keep);
          std::vector<double> kept;
          for (std::size_t i = 0; i < keep.size(); ++i) {
            if (keep[i]) kept.push_back(remaining[i]);
          }
          remaining = std::move(kept);
        }
        EXPECT_NEAR(result.discarded_weight, removed, 1e-13 * removed) << policy.description();
        if (policy.kind() == Truncation::Kind::topn) {
          EXPECT_EQ(first_retained[0], SortedTopnReference(magnitudes).keep(n));
        }
        continue;
      }
      EXPECT_EQ(target.retained(), first_retained) << policy.description() << " threads=" << threads;
      EXPECT_EQ(std::bit_cast<std::uint64_t>(result.discarded_weight),
                std::bit_cast<std::uint64_t>(first.discarded_weight))
          << policy.description() << " threads=" << threads;
    }
  }
}

// ---------------------------------------------------------------- collapse_sample

TEST(CollapseSampleTest, SumsWithinTheCacheAreUntouched) {
  auto sum = indexed_sum(std::vector<double>{0.5, -2.0, 1.0});
  const auto original = sum;
  const LayerPassResult result = Truncation::collapse_sample(3, 7).finalize_layer(sum);
  EXPECT_TRUE(sum == original);
  EXPECT_FALSE(result.collapsed);
  EXPECT_EQ(result.discarded_weight, 0.0);
}

TEST(CollapseSampleTest, LargerSumsCollapseToOneStringWithCoefficientOne) {
  for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xdeadbeefULL}) {
    const std::vector<double> coefficients = {0.5, -2.0, 1.0, 0.25, 3.0};
    auto sum = indexed_sum(coefficients);
    const std::vector<double> magnitudes = magnitudes_in_order(sum);
    const std::size_t pick = collapse_pick(magnitudes, seed, 0);
    const PauliString<1> picked = sum.keys()[pick];
    const double total = sum.norm_squared();
    const LayerPassResult result = Truncation::collapse_sample(4, seed).finalize_layer(sum);
    EXPECT_TRUE(result.collapsed);
    ASSERT_EQ(sum.size(), 1u);
    EXPECT_EQ(sum.keys()[0], picked);
    EXPECT_EQ(sum.coefficients()[0], 1.0);
    EXPECT_DOUBLE_EQ(result.discarded_weight, total - magnitudes[pick]);
    sum.check_invariants();
  }
  auto complex_sum = indexed_sum(std::vector<Complex>{Complex(0, 1), Complex(1, 1), Complex(-2, 0)});
  const LayerPassResult result = Truncation::collapse_sample(2, 5).finalize_layer(complex_sum);
  EXPECT_TRUE(result.collapsed);
  ASSERT_EQ(complex_sum.size(), 1u);
  EXPECT_EQ(complex_sum.coefficients()[0], Complex(1.0, 0.0));
}

TEST(CollapseSampleTest, PickIsAFunctionOfSeedAndPassIndex) {
  const std::vector<double> coefficients = {0.5, -2.0, 1.0, 0.25, 3.0, 1.5, -0.75, 2.5};
  const auto input = indexed_sum(coefficients);
  const std::vector<double> magnitudes = magnitudes_in_order(input);
  auto pick_key = [&](std::uint64_t seed, std::uint64_t pass) {
    return input.keys()[collapse_pick(magnitudes, seed, pass)];
  };
  auto collapse_with = [&](const Truncation& policy) {
    auto sum = input;
    EXPECT_TRUE(policy.finalize_layer(sum).collapsed);
    return sum.keys()[0];
  };
  const Truncation policy = Truncation::collapse_sample(1, 2024);
  const Truncation copy = policy;  // copies share the pass counter
  EXPECT_EQ(collapse_with(policy), pick_key(2024, 0));
  EXPECT_EQ(collapse_with(copy), pick_key(2024, 1));
  EXPECT_EQ(collapse_with(policy), pick_key(2024, 2));
  // A pass that leaves a small sum untouched still counts.
  auto small = indexed_sum(std::vector<double>{1.0});
  EXPECT_FALSE(copy.finalize_layer(small).collapsed);
  EXPECT_EQ(collapse_with(policy), pick_key(2024, 4));
  // A fresh factory call restarts the trajectory; another seed gives another stream.
  EXPECT_EQ(collapse_with(Truncation::collapse_sample(1, 2024)), pick_key(2024, 0));
  EXPECT_EQ(collapse_with(Truncation::collapse_sample(1, 7)), pick_key(7, 0));
  // The pick itself is deterministic.
  for (std::uint64_t pass = 0; pass < 20; ++pass) {
    EXPECT_EQ(collapse_pick(magnitudes, 99, pass), collapse_pick(magnitudes, 99, pass));
  }
}

/// Pearson's χ² of observed counts against probabilities.
double chi_square(const std::vector<std::size_t>& counts, const std::vector<double>& probabilities,
                  std::size_t draws) {
  double chi2 = 0.0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double expected = probabilities[i] * static_cast<double>(draws);
    chi2 +=
        (static_cast<double>(counts[i]) - expected) * (static_cast<double>(counts[i]) - expected) / expected;
  }
  return chi2;
}

TEST(CollapseSampleTest, PickFrequenciesFollowSquaredMagnitudes) {
  const std::vector<double> magnitudes = {1.0, 2.0, 3.0, 4.0};
  const std::vector<double> probabilities = {0.1, 0.2, 0.3, 0.4};
  constexpr double kChiSquare3DofAt1e4 = 21.11;  // P(χ²₃ > 21.11) = 1e-4
  constexpr std::size_t kDraws = 20000;
  std::vector<std::size_t> by_seed(4, 0), by_pass(4, 0);
  for (std::size_t k = 0; k < kDraws; ++k) {
    ++by_seed[collapse_pick(magnitudes, k, 0)];
    ++by_pass[collapse_pick(magnitudes, 12345, k)];
  }
  EXPECT_LT(chi_square(by_seed, probabilities, kDraws), kChiSquare3DofAt1e4);
  EXPECT_LT(chi_square(by_pass, probabilities, kDraws), kChiSquare3DofAt1e4);

  // Zero-weight entries are never picked.
  const std::vector<double> with_zeros = {0.0, 1.0, 0.0, 3.0, 0.0};
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    const std::size_t pick = collapse_pick(with_zeros, seed, seed % 3);
    EXPECT_TRUE(pick == 1 || pick == 3) << "seed " << seed;
  }

  // Through the layer pass on a sum: the picked key's frequency follows |c|²/Σ|c|².
  const auto input = indexed_sum(std::vector<double>{1.0, -std::sqrt(2.0), std::sqrt(3.0), 2.0});
  std::map<PauliString<1>, std::size_t> counts;
  constexpr std::size_t kSums = 4000;
  for (std::uint64_t seed = 0; seed < kSums; ++seed) {
    auto sum = input;
    Truncation::collapse_sample(3, seed * 7919 + 1).finalize_layer(sum);
    ++counts[sum.keys()[0]];
  }
  std::vector<std::size_t> observed;
  std::vector<double> expected;
  for (std::size_t i = 0; i < 4; ++i) {
    observed.push_back(counts[key_of(i)]);
    expected.push_back(std::norm(input.coefficient(key_of(i))) / 10.0);
  }
  EXPECT_LT(chi_square(observed, expected, kSums), kChiSquare3DofAt1e4);
}

TEST(CollapseSampleTest, ZeroOrNonFiniteTotalWeightThrows) {
  const std::vector<double> zeros = {0.0, 0.0, 0.0};
  expect_runtime_error([&] { (void)collapse_pick(zeros, 1, 0); }, "zero or not finite");
  expect_runtime_error([&] { (void)collapse_pick(std::vector<double>{}, 1, 0); }, "zero or not finite");
  const std::vector<double> infinite = {1.0, std::numeric_limits<double>::infinity()};
  expect_runtime_error([&] { (void)collapse_pick(infinite, 1, 0); }, "not finite");
  const std::vector<double> nan = {1.0, std::numeric_limits<double>::quiet_NaN()};
  expect_runtime_error([&] { (void)collapse_pick(nan, 1, 0); }, "not finite");
}

// ---------------------------------------------------------------- composition

TEST(TruncationCompositionTest, AndKeepsIffBothKeepOrKeepsIfEitherKeeps) {
  const Truncation small = Truncation::coeff(0.5), light = Truncation::weight(1);
  const PauliString<1> weight1 = PauliString<1>::single('X', 2),
                       weight2 = PauliString<1>::from_label("X0 Z1", 4);
  const Truncation both = small & light, either = small | light;
  EXPECT_TRUE(both.keep(weight1, 1.0));
  EXPECT_FALSE(both.keep(weight1, 0.25));
  EXPECT_FALSE(both.keep(weight2, 1.0));
  EXPECT_FALSE(both.keep(weight2, 0.25));
  EXPECT_TRUE(either.keep(weight1, 1.0));
  EXPECT_TRUE(either.keep(weight1, 0.25));
  EXPECT_TRUE(either.keep(weight2, 1.0));
  EXPECT_FALSE(either.keep(weight2, 0.25));
  EXPECT_FALSE(either.keep(weight2, Complex(0.0, 0.5)));
}

TEST(TruncationCompositionTest, AndRunsBothLayerPassesInOrder) {
  const std::vector<double> coefficients = {4.0, 3.0, 2.0, 1.0};
  const auto input = indexed_sum(coefficients);
  const std::vector<double> magnitudes = magnitudes_in_order(input);
  // collapse first: four terms exceed the cache of 2, so the sum collapses; topn(1) then finds one term.
  auto collapse_then_topn = input;
  const LayerPassResult first =
      (Truncation::collapse_sample(2, 11) & Truncation::topn(1)).finalize_layer(collapse_then_topn);
  EXPECT_TRUE(first.collapsed);
  ASSERT_EQ(collapse_then_topn.size(), 1u);
  const std::size_t pick = collapse_pick(magnitudes, 11, 0);
  EXPECT_EQ(collapse_then_topn.keys()[0], input.keys()[pick]);
  EXPECT_EQ(collapse_then_topn.coefficients()[0], 1.0);
  EXPECT_DOUBLE_EQ(first.discarded_weight, 30.0 - magnitudes[pick]);
  // topn first: one term is left, within the cache, so nothing collapses.
  auto topn_then_collapse = input;
  const LayerPassResult second =
      (Truncation::topn(1) & Truncation::collapse_sample(2, 11)).finalize_layer(topn_then_collapse);
  EXPECT_FALSE(second.collapsed);
  EXPECT_TRUE(topn_then_collapse == indexed_sum(std::vector<double>{4.0}));
  EXPECT_EQ(second.discarded_weight, 9.0 + 4.0 + 1.0);
  // Two passes chained: topn(3) then approx_topn(1) (1.0 octave alone fits), weights add.
  auto chained = indexed_sum(std::vector<double>{1.0, 0.7, 0.6, 0.1});
  const LayerPassResult both = (Truncation::topn(3) & Truncation::approx_topn(1)).finalize_layer(chained);
  EXPECT_EQ(surviving_indices(chained, 4), (std::vector<std::size_t>{0}));
  EXPECT_NEAR(both.discarded_weight, 0.49 + 0.36 + 0.01, 1e-15);
}

TEST(TruncationCompositionTest, OrRunsNeitherLayerPass) {
  // topn(1) | coeff(10): topn's term test keeps everything, and its pass does not run.
  const Truncation policy = Truncation::topn(1) | Truncation::coeff(10.0);
  auto sum = indexed_sum(std::vector<double>{0.5, -2.0, 1.0});
  const auto original = sum;
  EXPECT_EQ(policy.finalize_layer(sum).discarded_weight, 0.0);
  EXPECT_TRUE(sum == original);
  Circuit circuit(kQubits);
  circuit.append(Channel::z(0)).append(Channel::h(1));
  PropagateOptions options = options_for();
  options.truncation = policy;
  const PropagationStats stats = propagate(sum, circuit, options);
  EXPECT_EQ(sum.size(), 3u);
  EXPECT_EQ(stats.discarded_weight, 0.0);
  // A collapse_sample under | neither collapses nor advances its pass counter.
  const Truncation collapse = Truncation::collapse_sample(1, 5);
  auto big = indexed_sum(std::vector<double>{1.0, 2.0, 3.0});
  const std::vector<double> magnitudes = magnitudes_in_order(big);
  const auto keys = std::vector<PauliString<1>>(big.keys().begin(), big.keys().end());
  EXPECT_FALSE((collapse | Truncation::weight(0)).finalize_layer(big).collapsed);
  EXPECT_EQ(big.size(), 3u);
  EXPECT_TRUE(collapse.finalize_layer(big).collapsed);
  EXPECT_EQ(big.keys()[0], keys[collapse_pick(magnitudes, 5, 0)]);
}

TEST(TruncationCompositionTest, NestedCombinations) {
  // ((coeff(0.3) | weight(1)) & topn(2)): the term test of the | and the pass of the outer &.
  const Truncation nested = (Truncation::coeff(0.3) | Truncation::weight(1)) & Truncation::topn(2);
  const PauliString<1> heavy = PauliString<1>::from_label("X0 Y1 Z2", 4),
                       light = PauliString<1>::single('Z', 3);
  EXPECT_TRUE(nested.keep(heavy, 0.5));
  EXPECT_FALSE(nested.keep(heavy, 0.25));
  EXPECT_TRUE(nested.keep(light, 0.25));
  auto sum = indexed_sum(std::vector<double>{3.0, 2.0, 1.0, 0.5});
  EXPECT_EQ(nested.finalize_layer(sum).discarded_weight, 1.25);
  EXPECT_EQ(surviving_indices(sum, 4), (std::vector<std::size_t>{0, 1}));
  // topn(3) & (approx_topn(1) | topn(1)): only the outer topn(3) runs.
  const Truncation inner_or = Truncation::topn(3) & (Truncation::approx_topn(1) | Truncation::topn(1));
  sum = indexed_sum(std::vector<double>{3.0, 2.0, 1.0, 0.5});
  inner_or.finalize_layer(sum);
  EXPECT_EQ(surviving_indices(sum, 4), (std::vector<std::size_t>{0, 1, 2}));
  // (weight(2) & coeff(0.1)) & weight(1): all three term tests apply.
  const Truncation chain = (Truncation::weight(2) & Truncation::coeff(0.1)) & Truncation::weight(1);
  EXPECT_TRUE(chain.keep(light, 0.2));
  EXPECT_FALSE(chain.keep(light, 0.05));
  EXPECT_FALSE(chain.keep(PauliString<1>::from_label("X0 X1", 2), 0.2));
  // A three-deep & of passes runs them left to right: topn(3), topn(2), topn(1).
  sum = indexed_sum(std::vector<double>{4.0, 3.0, 3.0, 1.0});
  const LayerPassResult result =
      (Truncation::topn(3) & (Truncation::topn(2) & Truncation::topn(1))).finalize_layer(sum);
  EXPECT_EQ(surviving_indices(sum, 4), (std::vector<std::size_t>{0}));
  EXPECT_EQ(result.discarded_weight, 19.0);
}

TEST(TruncationCompositionTest, Introspection) {
  const Truncation none;
  EXPECT_TRUE(none.is_none());
  EXPECT_EQ(none.kind(), Truncation::Kind::none);
  EXPECT_FALSE(none.has_term_test());
  EXPECT_FALSE(none.has_layer_pass());
  EXPECT_EQ(none.description(), "none");

  const Truncation coeff = Truncation::coeff(0.25), weight = Truncation::weight(3),
                   topn = Truncation::topn(5);
  const Truncation approx = Truncation::approx_topn(7), collapse = Truncation::collapse_sample(100, 7);
  EXPECT_EQ(coeff.kind(), Truncation::Kind::coeff);
  EXPECT_EQ(collapse.kind(), Truncation::Kind::collapse_sample);
  EXPECT_EQ((coeff & weight).kind(), Truncation::Kind::all_of);
  EXPECT_EQ((coeff | weight).kind(), Truncation::Kind::any_of);
  EXPECT_FALSE(coeff.is_none());
  // The text feeds run fingerprints (checkpoints, the partition shape check): "%.17g" numbers.
  EXPECT_EQ(coeff.description(), "coeff(0.25)");
  EXPECT_EQ(Truncation::coeff(1e-5).description(), "coeff(1.0000000000000001e-05)");
  EXPECT_EQ(weight.description(), "weight(3)");
  EXPECT_EQ(topn.description(), "topn(5)");
  EXPECT_EQ(approx.description(), "approx_topn(7)");
  EXPECT_EQ(collapse.description(), "collapse_sample(100, 7)");
  EXPECT_EQ(((coeff & weight) | topn).description(), "((coeff(0.25) & weight(3)) | topn(5))");

  EXPECT_TRUE(coeff.has_term_test());
  EXPECT_TRUE(weight.has_term_test());
  EXPECT_FALSE(topn.has_term_test());
  EXPECT_FALSE(approx.has_term_test());
  EXPECT_FALSE(collapse.has_term_test());
  EXPECT_TRUE((topn & coeff).has_term_test());
  EXPECT_TRUE((coeff | weight).has_term_test());

  EXPECT_FALSE(coeff.has_layer_pass());
  EXPECT_TRUE(topn.has_layer_pass());
  EXPECT_TRUE(approx.has_layer_pass());
  EXPECT_TRUE(collapse.has_layer_pass());
  EXPECT_FALSE((topn | coeff).has_layer_pass());
  EXPECT_TRUE(((topn | coeff) & approx).has_layer_pass());
  EXPECT_TRUE((coeff & (weight & topn)).has_layer_pass());
  EXPECT_FALSE(((topn & coeff) | weight).has_layer_pass());

  EXPECT_TRUE((topn | coeff).contains(Truncation::Kind::topn));
  EXPECT_TRUE((weight & (coeff | collapse)).contains(Truncation::Kind::collapse_sample));
  EXPECT_FALSE((topn | coeff).contains(Truncation::Kind::collapse_sample));
  EXPECT_TRUE((topn | coeff).contains(Truncation::Kind::any_of));

  EXPECT_EQ(coeff.description(), "coeff(0.25)");
  EXPECT_EQ(weight.description(), "weight(3)");
  EXPECT_EQ(topn.description(), "topn(5)");
  EXPECT_EQ(approx.description(), "approx_topn(7)");
  EXPECT_EQ(collapse.description(), "collapse_sample(100, 7)");
  EXPECT_EQ((coeff & weight).description(), "(coeff(0.25) & weight(3))");
  EXPECT_EQ((Truncation::topn(1) | Truncation::coeff(10)).description(), "(topn(1) | coeff(10))");
  EXPECT_EQ(((Truncation::coeff(0.5) | Truncation::weight(1)) & topn).description(),
            "((coeff(0.5) | weight(1)) & topn(5))");
}

// ---------------------------------------------------------------- truncation inside propagate()

TEST(TruncationInPropagateTest, CliffordLayerDiscardedWeightIsTheNormLost) {
  // A Clifford layer preserves Σ|c|², so the norm lost is exactly what coeff(0.25) removed.
  for (Engine engine : kEngines) {
    SCOPED_TRACE(engine_name(engine));
    auto sum = RealSum::from_labels(
        3, {{"XIZ", 0.5}, {"ZZI", 0.25}, {"YXY", -0.125}, {"IIX", 1.0}, {"XYZ", -0.25}, {"III", 2.0}});
    const double before = sum.norm_squared();
    Circuit circuit(3);
    circuit.append(Channel::cnot(2, 0));
    PropagateOptions options = options_for(engine);
    options.truncation = Truncation::coeff(0.25);
    const PropagationStats stats = propagate(sum, circuit, options);
    ASSERT_EQ(stats.layers.size(), 1u);
    EXPECT_EQ(stats.layers[0].discarded_weight, 0.0625 + 0.015625 + 0.0625);
    EXPECT_EQ(before - sum.norm_squared(), stats.layers[0].discarded_weight);
    EXPECT_EQ(stats.layers[0].terms_in, 6u);
    EXPECT_EQ(stats.layers[0].terms_out, 3u);
    EXPECT_EQ(sum.size(), 3u);
    for (const double c : sum.coefficients()) EXPECT_GT(std::abs(c), 0.25);
  }
}

struct PolicyCase {
  std::string name;
  std::function<Truncation()> make;
  std::function<void(const RealSum&)> check_after_layer;
};

std::vector<PolicyCase> policy_cases() {
  return {
      {"coeff", [] { return Truncation::coeff(0.05); },
       [](const RealSum& s) {
         for (double c : s.coefficients()) EXPECT_GT(std::abs(c), 0.05);
       }},
      {"weight", [] { return Truncation::weight(2); },
       [](const RealSum& s) {
         for (const auto& key : s.keys()) EXPECT_LE(key.weight(), 2);
       }},
      {"topn", [] { return Truncation::topn(20); }, [](const RealSum& s) { EXPECT_LE(s.size(), 20u); }},
      {"approx_topn", [] { return Truncation::approx_topn(20); },
       [](const RealSum& s) { EXPECT_LE(s.size(), 20u); }},
      {"collapse_sample", [] { return Truncation::collapse_sample(30, 9); },
       [](const RealSum& s) { EXPECT_LE(s.size(), 30u); }},
      {"coeff_and_topn", [] { return Truncation::coeff(0.02) & Truncation::topn(25); },
       [](const RealSum& s) {
         EXPECT_LE(s.size(), 25u);
         for (double c : s.coefficients()) EXPECT_GT(std::abs(c), 0.02);
       }},
  };
}

TEST(TruncationInPropagateTest, DiscardedWeightEqualsNormLostInEveryLayer) {
  // Unitary layers preserve Σ|c|², so each layer's norm loss is what its truncation removed (for a
  // collapse: everything but the picked string, whose coefficient becomes 1).
  std::mt19937_64 rng(555);
  const testing::RandomChannelOptions unitary_only{.noise = false};
  const Circuit circuit = testing::random_circuit(rng, 5, 24, unitary_only);
  const RealSum input = [&] {
    std::vector<std::pair<std::string, double>> terms;
    for (const auto& [label, c] : testing::random_terms(rng, 5, 24, false))
      terms.emplace_back(label, c.real());
    return RealSum::from_labels(5, terms);
  }();
  for (Engine engine : kEngines) {
    for (const PolicyCase& c : policy_cases()) {
      SCOPED_TRACE(c.name + ", " + engine_name(engine));
      // One layer at a time, measuring the norm around each.
      PropagateOptions options = options_for(engine);
      options.truncation = c.make();
      RealSum stepwise = input;
      std::vector<double> discarded;
      std::vector<bool> collapsed;
      double total_discarded = 0.0;
      std::size_t collapses = 0;
      for (const Channel& channel : circuit) {
        Circuit one(circuit.num_qubits());
        one.append(channel);
        const double before = stepwise.norm_squared();
        RealSum untruncated = stepwise;
        propagate(untruncated, one, options_for(engine));
        const double tolerance = 1e-12 * std::max(1.0, before);
        EXPECT_NEAR(untruncated.norm_squared(), before, tolerance);  // a unitary layer
        const PropagationStats stats = propagate(stepwise, one, options);
        ASSERT_EQ(stats.layers.size(), 1u);
        const LayerRecord& record = stats.layers[0];
        if (record.collapsed) {
          // A collapse keeps one string at coefficient 1 and reports the weight of all the others.
          ASSERT_EQ(stepwise.size(), 1u);
          EXPECT_EQ(stepwise.coefficients()[0], 1.0);
          const double picked = std::norm(untruncated.coefficient(stepwise.keys()[0]));
          EXPECT_GT(picked, 0.0);
          EXPECT_NEAR(record.discarded_weight, before - picked, tolerance) << channel.description();
        } else {
          EXPECT_NEAR(record.discarded_weight, before - stepwise.norm_squared(), tolerance)
              << channel.description();
        }
        EXPECT_GE(record.discarded_weight, 0.0);
        EXPECT_EQ(record.terms_out, stepwise.size());
        c.check_after_layer(stepwise);
        discarded.push_back(record.discarded_weight);
        collapsed.push_back(record.collapsed);
        collapses += record.collapsed;
        total_discarded += record.discarded_weight;
      }
      EXPECT_GT(total_discarded, 0.0);  // the policy did bite somewhere
      if (c.name == "collapse_sample") {
        EXPECT_GT(collapses, 0u);
      }
      // The whole circuit in one call (fresh policy; two threads once) truncates after every channel
      // the same way. Discarded weights are sums over differently laid-out buckets: equal to rounding.
      options = options_for(engine, c.name == "coeff_and_topn" ? 2 : 1);
      options.truncation = c.make();
      RealSum whole = input;
      const PropagationStats stats = propagate(whole, circuit, options);
      EXPECT_TRUE(whole == stepwise);
      ASSERT_EQ(stats.layers.size(), circuit.size());
      double sum_of_layers = 0.0;
      for (std::size_t k = 0; k < circuit.size(); ++k) {
        EXPECT_NEAR(stats.layers[k].discarded_weight, discarded[k], 1e-12 * std::max(1.0, discarded[k]))
            << "layer " << k;
        EXPECT_EQ(stats.layers[k].collapsed, collapsed[k]) << "layer " << k;
        EXPECT_EQ(stats.layers[k].application_index, k);
        EXPECT_EQ(stats.layers[k].circuit_index, k);
        sum_of_layers += stats.layers[k].discarded_weight;
      }
      EXPECT_NEAR(stats.discarded_weight, sum_of_layers, 1e-12 * std::max(1.0, sum_of_layers));
      EXPECT_EQ(stats.final_terms, whole.size());
      EXPECT_EQ(stats.collapses, collapses);
    }
  }
}

TEST(TruncationInPropagateTest, TruncationRunsAfterEveryChannel) {
  // rx(θ) then rx(−θ) returns Z exactly; with coeff(0.2) the small Y term is cut after each layer,
  // leaving cos²θ·Z. Truncating only at the end would leave Z.
  const double theta = 0.1;
  for (Engine engine : kEngines) {
    SCOPED_TRACE(engine_name(engine));
    for (Direction direction : {Direction::forward, Direction::heisenberg}) {
      auto sum = RealSum::from_labels(1, {{"Z", 1.0}});
      Circuit circuit(1);
      circuit.append(Channel::rx(theta, 0)).append(Channel::rx(-theta, 0));
      PropagateOptions options = options_for(engine);
      options.direction = direction;
      options.truncation = Truncation::coeff(0.2);
      const PropagationStats stats = propagate(sum, circuit, options);
      ASSERT_EQ(sum.size(), 1u);
      EXPECT_NEAR(sum.coefficient("Z"), std::cos(theta) * std::cos(theta), 1e-15);
      ASSERT_EQ(stats.layers.size(), 2u);
      EXPECT_NEAR(stats.layers[0].discarded_weight, std::pow(std::sin(theta), 2), 1e-15);
      EXPECT_NEAR(stats.layers[1].discarded_weight, std::pow(std::cos(theta) * std::sin(theta), 2), 1e-15);
      EXPECT_EQ(stats.layers[0].terms_out, 1u);
    }
    // A layer pass too: topn(1) cuts right after the first layer.
    auto sum = RealSum::from_labels(3, {{"ZII", 3.0}, {"IZI", 2.0}, {"IIZ", 1.0}});
    Circuit circuit(3);
    circuit.append(Channel::h(0)).append(Channel::h(1));
    PropagateOptions options = options_for(engine);
    options.truncation = Truncation::topn(1);
    const PropagationStats stats = propagate(sum, circuit, options);
    EXPECT_TRUE(sum == RealSum::from_labels(3, {{"XII", 3.0}}));
    EXPECT_EQ(stats.layers[0].terms_out, 1u);
    EXPECT_EQ(stats.layers[0].discarded_weight, 5.0);
    EXPECT_EQ(stats.layers[1].discarded_weight, 0.0);
    EXPECT_EQ(stats.discarded_weight, 5.0);
  }
}

TEST(TruncationInPropagateTest, TermTestSeesTheSummedCoefficient) {
  // Amplitude damping (γ = 1/2) forward: 0.25·I + 0.25·Z → 0.25·I + (0.125 + 0.125)·Z. Each
  // contribution to Z is below 0.2, their sum is not.
  for (Engine engine : kEngines) {
    SCOPED_TRACE(engine_name(engine));
    auto sum = RealSum::from_labels(1, {{"I", 0.25}, {"Z", 0.25}});
    Circuit circuit(1);
    circuit.append(Channel::amplitude_damping(0.5, 0));
    PropagateOptions options = options_for(engine);
    options.truncation = Truncation::coeff(0.2);
    const PropagationStats stats = propagate(sum, circuit, options);
    EXPECT_TRUE(sum == RealSum::from_labels(1, {{"I", 0.25}, {"Z", 0.25}}));
    EXPECT_EQ(stats.layers[0].discarded_weight, 0.0);
  }
}

TEST(TruncationInPropagateTest, ExactZerosAreDroppedWhateverThePolicy) {
  // Amplitude damping (γ = 1/2) on qubit 1, forward: I − Z → I + (0.5 − 0.5)·Z = I; X → √½·X.
  for (Engine engine : kEngines) {
    for (const Truncation& policy : {Truncation(), Truncation::coeff(-1.0), Truncation::weight(10),
                                     Truncation::topn(10), Truncation::topn(1) | Truncation::coeff(-1.0)}) {
      SCOPED_TRACE(policy.description() + ", " + engine_name(engine));
      auto sum = RealSum::from_labels(2, {{"II", 1.0}, {"IZ", -1.0}, {"IX", 0.5}});
      Circuit circuit(2);
      circuit.append(Channel::amplitude_damping(0.5, 1));
      PropagateOptions options = options_for(engine);
      options.truncation = policy;
      const PropagationStats stats = propagate(sum, circuit, options);
      EXPECT_TRUE(sum == RealSum::from_labels(2, {{"II", 1.0}, {"IX", 0.5 * std::sqrt(0.5)}}));
      EXPECT_FALSE(sum.contains(PauliString<1>::from_label("IZ", 2)));
      EXPECT_EQ(stats.layers[0].terms_out, 2u);
      EXPECT_EQ(stats.layers[0].discarded_weight, 0.0);
      sum.check_invariants();
    }
    // A channel that scales to exactly zero (depolarize(3/4)) leaves nothing but the identity.
    auto sum = ComplexSum::from_labels(2, {{"II", Complex(0, 1)}, {"XY", 1.0}, {"ZI", 2.0}});
    Circuit circuit(2);
    circuit.append(Channel::depolarize(0.75, 0)).append(Channel::depolarize(0.75, 1));
    propagate(sum, circuit, options_for(engine));
    EXPECT_TRUE(sum == ComplexSum::from_labels(2, {{"II", Complex(0, 1)}}));
  }
}

TEST(TruncationInPropagateTest, CollapseTrajectoriesAreReproducibleAndContinue) {
  Circuit circuit(3);
  for (int step = 0; step < 3; ++step) {
    for (Qubit q = 0; q < 3; ++q) circuit.append(Channel::rx(0.7, q));
    circuit.append(Channel::cnot(0, 2));
  }
  const RealSum input = RealSum::from_labels(3, {{"ZII", 1.0}, {"IZI", 0.5}, {"IIZ", -0.25}});
  for (Engine engine : kEngines) {
    SCOPED_TRACE(engine_name(engine));
    auto run = [&](const Truncation& policy, RealSum sum) {
      PropagateOptions options = options_for(engine);
      options.truncation = policy;
      options.direction = Direction::heisenberg;
      const PropagationStats stats = propagate(sum, circuit, options);
      std::vector<bool> collapsed;
      std::size_t collapses = 0;
      for (const LayerRecord& record : stats.layers) {
        collapsed.push_back(record.collapsed);
        collapses += record.collapsed;
        if (record.collapsed) {
          EXPECT_EQ(record.terms_out, 1u);
        }
      }
      EXPECT_EQ(stats.collapses, collapses);
      EXPECT_GT(collapses, 0u);
      return std::make_pair(sum, collapsed);
    };
    const Truncation policy = Truncation::collapse_sample(1, 31337);
    const auto first = run(policy, input);
    // Same seed, fresh object: the same trajectory.
    const auto again = run(Truncation::collapse_sample(1, 31337), input);
    EXPECT_TRUE(first.first == again.first);
    EXPECT_EQ(first.second, again.second);
    // Reusing the object continues from pass circuit.size(): the same as a fresh policy advanced by one run.
    const auto continued = run(policy, input);
    const Truncation advanced = Truncation::collapse_sample(1, 31337);
    run(advanced, input);
    const auto reference = run(advanced, input);
    EXPECT_TRUE(continued.first == reference.first);
    EXPECT_EQ(continued.second, reference.second);
    // After a collapse Σ|c|² = 1, and the unitary layers that follow keep it.
    EXPECT_NEAR(first.first.norm_squared(), 1.0, 1e-12);
  }
}

}  // namespace
}  // namespace paulistrings
