// Sweeps against separate runs (sweep/propagate_sweep.h): every column of a sweep without truncation is its
// own run; with truncation a column keeps every term its own run keeps at a gate, identical columns are
// their own run, and a column's error obeys its discarded weight.

#include "paulistrings/sweep/propagate_sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

/// Draws one structure and K parameter sets: column k is `build(rng_k)` with rng_k seeded alike for the
/// structure and apart for the values.
struct RandomSweep {
  std::size_t qubits;
  std::vector<Circuit> columns;
};

/// A random circuit on `qubits` qubits whose gate kinds and qubits depend on `seed` only and whose
/// parameters depend on (seed, column); `unitary_only` leaves out noise, measurement and reset.
RandomSweep random_sweep(std::uint64_t seed, std::size_t K, bool unitary_only) {
  std::mt19937_64 shape(seed);
  RandomSweep sweep;
  sweep.qubits = 2 + shape() % 5;
  const std::size_t gates = 8 + shape() % 16;
  struct Gate {
    int kind;
    Qubit a, b;
  };
  std::vector<Gate> plan;
  for (std::size_t g = 0; g < gates; ++g) {
    const int kinds = unitary_only ? 9 : 14;
    Gate gate{static_cast<int>(shape() % kinds), static_cast<Qubit>(shape() % sweep.qubits), 0};
    gate.b = static_cast<Qubit>((gate.a + 1 + shape() % (sweep.qubits - 1)) % sweep.qubits);
    plan.push_back(gate);
  }
  for (std::size_t k = 0; k < K; ++k) {
    std::mt19937_64 values(seed * 1000 + k);
    std::uniform_real_distribution<double> angle(-std::numbers::pi, std::numbers::pi), p(0.0, 0.3);
    Circuit circuit(sweep.qubits);
    for (const Gate& g : plan) {
      switch (g.kind) {
        case 0:
          circuit.append(Channel::rx(angle(values), g.a));
          break;
        case 1:
          circuit.append(Channel::ry(angle(values), g.a));
          break;
        case 2:
          circuit.append(Channel::rz(angle(values), g.a));
          break;
        case 3:
          circuit.append(Channel::rzz(angle(values), g.a, g.b));
          break;
        case 4:
          circuit.append(Channel::rxx(angle(values), g.a, g.b));
          break;
        case 5:
          circuit.append(Channel::cnot(g.a, g.b));
          break;
        case 6:
          circuit.append(Channel::h(g.a));
          break;
        case 7:
          circuit.append(Channel::iswap(g.a, g.b));
          break;
        case 8:
          circuit.append(Channel::pauli_rotation("XY", {g.a, g.b}, angle(values)));
          break;
        case 9:
          circuit.append(Channel::depolarize(p(values), g.a));
          break;
        case 10:
          circuit.append(Channel::amplitude_damping(p(values), g.a));
          break;
        case 11:
          circuit.append(Channel::dephase(p(values), g.a));
          break;
        case 12:
          circuit.append(Channel::depolarize2(p(values), g.a, g.b));
          break;
        default:
          circuit.append(Channel::reset(g.a));
          break;
      }
    }
    sweep.columns.push_back(std::move(circuit));
  }
  return sweep;
}

AnyPauliSum random_observable(std::uint64_t seed, std::size_t qubits) {
  std::mt19937_64 rng(seed ^ 0xabcdef);
  std::normal_distribution<double> normal;
  const char letters[] = "IXYZ";
  std::vector<std::pair<std::string, Complex>> terms;
  for (int t = 0; t < 1 + static_cast<int>(rng() % 6); ++t) {
    std::string label;
    for (std::size_t q = 0; q < qubits; ++q) label += letters[rng() % 4];
    terms.emplace_back(label, Complex(normal(rng), seed % 3 == 0 ? normal(rng) : 0.0));
  }
  return AnyPauliSum::from_labels(qubits, terms);
}

using Terms = std::map<std::string, Complex>;
Terms terms_of(const AnyPauliSum& sum) {
  Terms out;
  for (const auto& [label, c] : sum.terms()) out[label] = c;
  return out;
}

/// Largest |a − b| over the union of keys.
double distance(const Terms& a, const Terms& b) {
  double worst = 0.0;
  for (const auto& [label, c] : a)
    worst = std::max(worst, std::abs(c - (b.count(label) ? b.at(label) : Complex(0.0))));
  for (const auto& [label, c] : b)
    worst = std::max(worst, std::abs(c - (a.count(label) ? a.at(label) : Complex(0.0))));
  return worst;
}

double l2_distance(const Terms& a, const Terms& b) {
  double total = 0.0;
  Terms all = a;
  for (const auto& [label, c] : b) all.emplace(label, Complex(0.0));
  for (const auto& [label, ignored] : all) {
    const Complex x = a.count(label) ? a.at(label) : Complex(0.0),
                  y = b.count(label) ? b.at(label) : Complex(0.0);
    total += std::norm(x - y);
  }
  return std::sqrt(total);
}

Terms own_run(const AnyPauliSum& observable, const Circuit& circuit, PropagateOptions options) {
  AnyPauliSum sum = observable;
  options.engine = Engine::reference;
  propagate(sum, circuit, options);
  return terms_of(sum);
}

class SweepEngines : public ::testing::TestWithParam<Engine> {};

TEST_P(SweepEngines, EveryColumnIsItsOwnRunWithoutTruncation) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::size_t K = 1 + seed % 7;
    const RandomSweep sweep = random_sweep(seed, K, false);
    const AnyPauliSum observable = random_observable(seed, sweep.qubits);
    PropagateOptions options;
    options.engine = GetParam();
    options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
    options.threads = 1 + static_cast<int>(seed % 2);
    AnySweepSum result;
    const SweepStats stats = propagate_sweep(observable, sweep.columns, options, result);
    ASSERT_EQ(result.columns(), K);
    ASSERT_EQ(stats.discarded_weight.size(), K);
    const ProductState zero = ProductState::parse("z+", sweep.qubits);
    const std::vector<Complex> values = result.expectations(zero);
    for (std::size_t k = 0; k < K; ++k) {
      const Terms own = own_run(observable, sweep.columns[k], options);
      EXPECT_LT(distance(terms_of(result.column(k)), own), 1e-12) << "seed " << seed << " column " << k;
      AnyPauliSum own_sum = observable;
      PropagateOptions reference = options;
      reference.engine = Engine::reference;
      propagate(own_sum, sweep.columns[k], reference);
      const Complex expected = own_sum.visit([&](const auto& s) { return Complex(zero.expectation(s)); });
      EXPECT_LT(std::abs(values[k] - expected), 1e-12) << "seed " << seed << " column " << k;
      EXPECT_EQ(stats.discarded_weight[k], 0.0);
    }
  }
}

TEST_P(SweepEngines, IdenticalColumnsAreTheOwnRunUnderEveryTruncation) {
  const std::vector<Truncation> policies = {Truncation::coeff(0.05),
                                            Truncation::weight(2),
                                            Truncation::topn(5),
                                            Truncation::approx_topn(6),
                                            Truncation::coeff(0.02) & Truncation::weight(3),
                                            Truncation::topn(4) | Truncation::coeff(0.1)};
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    const RandomSweep one = random_sweep(seed, 1, false);
    const std::vector<Circuit> columns(3, one.columns[0]);
    const AnyPauliSum observable = random_observable(seed, one.qubits);
    PropagateOptions options;
    options.engine = GetParam();
    options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
    options.truncation = policies[seed % policies.size()];
    AnySweepSum result;
    const SweepStats stats = propagate_sweep(observable, columns, options, result);
    PropagateOptions own = options;
    own.truncation = policies[seed % policies.size()];
    AnyPauliSum own_sum = observable;
    own.engine = Engine::reference;
    const PropagationStats own_stats = propagate(own_sum, one.columns[0], own);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_LT(distance(terms_of(result.column(k)), terms_of(own_sum)), 1e-12) << "seed " << seed;
      EXPECT_NEAR(stats.discarded_weight[k], own_stats.discarded_weight, 1e-12) << "seed " << seed;
    }
  }
}

TEST_P(SweepEngines, AColumnKeepsEveryTermItsOwnRunKeepsAtAGate) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const std::size_t K = 2 + seed % 4;
    RandomSweep sweep = random_sweep(seed, K, false);
    // One gate from a rich start: the sum of several layers run untruncated.
    const AnyPauliSum observable = random_observable(seed, sweep.qubits);
    std::vector<AnyPauliSum> starts;
    PropagateOptions options;
    options.engine = GetParam();
    const double epsilon = 0.08;
    options.truncation = Truncation::coeff(epsilon);
    // Column-wise the same input: a one-gate sweep from the observable.
    std::vector<Circuit> gate;
    for (std::size_t k = 0; k < K; ++k) {
      Circuit c(sweep.qubits);
      c.append(sweep.columns[k][seed % sweep.columns[k].size()]);
      gate.push_back(std::move(c));
    }
    AnySweepSum result;
    propagate_sweep(observable, gate, options, result);
    for (std::size_t k = 0; k < K; ++k) {
      const Terms own = own_run(observable, gate[k], options);
      const Terms mine = terms_of(result.column(k));
      for (const auto& [label, c] : own) {
        ASSERT_TRUE(mine.count(label)) << "seed " << seed << " column " << k << " lost " << label;
        EXPECT_LT(std::abs(mine.at(label) - c), 1e-12);
      }
      for (const auto& [label, c] : mine) {
        if (!own.count(label)) {
          EXPECT_LE(std::abs(c), epsilon * (1 + 1e-12)) << "seed " << seed << " " << label;
        }
      }
    }
  }
}

TEST_P(SweepEngines, AUnitaryColumnsErrorIsBoundedByItsDiscardedWeight) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const std::size_t K = 2 + seed % 5;
    const RandomSweep sweep = random_sweep(seed, K, true);
    const AnyPauliSum observable = random_observable(seed, sweep.qubits);
    PropagateOptions options;
    options.engine = GetParam();
    options.truncation = Truncation::coeff(0.05);
    AnySweepSum result;
    const SweepStats stats = propagate_sweep(observable, sweep.columns, options, result);
    PropagateOptions exact;
    for (std::size_t k = 0; k < K; ++k) {
      // Unitary layers keep the Pauli 2-norm, so the layers' errors add: ‖ΔO‖ ≤ Σ_l √d_l ≤ √(L·Σ_l d_l).
      const double bound =
          std::sqrt(static_cast<double>(sweep.columns[k].size()) * stats.discarded_weight[k]);
      EXPECT_LE(l2_distance(terms_of(result.column(k)), own_run(observable, sweep.columns[k], exact)),
                bound + 1e-12)
          << "seed " << seed << " column " << k;
    }
  }
}

TEST_P(SweepEngines, RefusesWhatASweepCannotMean) {
  Circuit a(2), b(2), c(3);
  a.append(Channel::rx(0.3, 0));
  b.append(Channel::ry(0.3, 0));
  c.append(Channel::rx(0.3, 0));
  const std::vector<std::pair<std::string, Complex>> terms = {{"ZI", Complex(1.0)}};
  const AnyPauliSum z = AnyPauliSum::from_labels(2, terms);
  PropagateOptions options;
  options.engine = GetParam();
  AnySweepSum result;
  std::vector<Circuit> different = {a, b};
  EXPECT_THROW(propagate_sweep(z, different, options, result), std::invalid_argument);
  std::vector<Circuit> wider = {a, c};
  EXPECT_THROW(propagate_sweep(z, wider, options, result), std::invalid_argument);
  EXPECT_THROW(propagate_sweep(z, std::span<const Circuit>(), options, result), std::invalid_argument);
  std::vector<Circuit> same = {a, a};
  options.truncation = Truncation::collapse_sample(4, 1);
  EXPECT_THROW(propagate_sweep(z, same, options, result), std::invalid_argument);
  options.truncation = Truncation();
  options.device = 0;
  EXPECT_THROW(propagate_sweep(z, same, options, result), std::invalid_argument);
}

/// Terms of every column, exactly (for comparing thread counts bit for bit).
std::vector<Terms> all_columns(const AnySweepSum& sum) {
  std::vector<Terms> out;
  for (std::size_t k = 0; k < sum.columns(); ++k) out.push_back(terms_of(sum.column(k)));
  return out;
}

/// A wide start: `count` random strings on every qubit (real coefficients), so buckets fill and refine.
AnyPauliSum wide_observable(std::uint64_t seed, std::size_t qubits, int count) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<std::pair<std::string, Complex>> terms;
  const char letters[] = "IXYZ";
  for (int t = 0; t < count; ++t) {
    std::string label;
    for (std::size_t q = 0; q < qubits; ++q) label += letters[rng() % 4];
    terms.emplace_back(label, Complex(normal(rng), 0.0));
  }
  return AnyPauliSum::from_labels(qubits, terms);
}

/// The CPU sweep engine (`options`, engine and threads set here) on 1 and 3 threads against the reference
/// engine: the same bits and dropped weights for both thread counts, every column within 1e-12 of the
/// reference, the same final terms. Returns the one-thread run's statistics.
SweepStats expect_cpu_matches_reference(const AnyPauliSum& observable, std::span<const Circuit> columns,
                                        PropagateOptions options) {
  AnySweepSum reference, one, three;
  options.engine = Engine::reference;
  const SweepStats reference_stats = propagate_sweep(observable, columns, options, reference);
  options.engine = Engine::cpu;
  options.threads = 1;
  const SweepStats one_stats = propagate_sweep(observable, columns, options, one);
  options.threads = 3;
  const SweepStats three_stats = propagate_sweep(observable, columns, options, three);
  EXPECT_EQ(all_columns(one), all_columns(three));
  EXPECT_EQ(one_stats.discarded_weight, three_stats.discarded_weight);
  const std::vector<Terms> expected = all_columns(reference), got = all_columns(one);
  for (std::size_t k = 0; k < columns.size(); ++k) {
    EXPECT_LT(distance(got[k], expected[k]), 1e-12) << "column " << k;
    EXPECT_NEAR(one_stats.discarded_weight[k], reference_stats.discarded_weight[k], 1e-9) << "column " << k;
  }
  EXPECT_EQ(one_stats.stats.final_terms, reference_stats.stats.final_terms);
  return one_stats;
}

TEST(SweepEngine, LargeSumsMatchTheReferenceAndAreTheSameBitsForAnyThreadCount) {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::size_t K = 1 + seed % 4;
    RandomSweep sweep = random_sweep(seed + 100, K, seed % 2 == 0);
    const AnyPauliSum observable = wide_observable(seed, sweep.qubits, 3000);
    PropagateOptions options;
    options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
    options.truncation = seed % 3 == 0   ? Truncation()
                         : seed % 3 == 1 ? Truncation::coeff(0.01)
                                         : Truncation::topn(200);
    options.target_bucket_len = 4;
    options.parallel_threshold = 1;
    expect_cpu_matches_reference(observable, sweep.columns, options);
  }
}

TEST(SweepEngine, CliffordAnglesInEveryColumnMoveTermsAsTheReferenceDoes) {
  // Layers whose every column has cos θ = 0 (rzz(±π/2), rx(π/2), ry(−π/2), multi-qubit rotations) take the
  // engine's permutation path: each anticommuting term becomes g⊕Q where it stands, or in the paired
  // bucket. Mixed with general rotations and a layer that is Clifford in some columns only, under weight
  // and coefficient truncation, in both directions; many small buckets, so most pairs span two.
  const std::size_t n = 9;
  const AnyPauliSum observable = wide_observable(7, n, 300);
  const double half = std::numbers::pi / 2;
  const std::vector<double> angles = {0.3, 1.1, half};  // the last column is Clifford on the mixed layer
  std::vector<Circuit> columns;
  for (const double angle : angles) {
    Circuit c(n);
    for (std::size_t step = 0; step < 2; ++step) {
      for (Qubit q = 0; q + 1 < n; ++q) c.append(Channel::rzz(q % 2 ? half : -half, q, q + 1));
      for (Qubit q = 0; q < n; q += 2) c.append(Channel::rx(half, q));
      c.append(Channel::ry(-half, 1));
      c.append(Channel::pauli_rotation("XZY", {2, 4, 6}, half));
      for (Qubit q = 0; q < n; ++q) c.append(Channel::rx(angle + 0.1 * q, q));
      c.append(Channel::rz(angle, 3));
    }
    columns.push_back(std::move(c));
  }
  for (const Direction direction : {Direction::heisenberg, Direction::forward}) {
    for (const Truncation& truncation :
         {Truncation::weight(6), Truncation::coeff(0.02), Truncation::weight(5) & Truncation::coeff(1e-3)}) {
      SCOPED_TRACE(truncation.description());
      PropagateOptions options;
      options.direction = direction;
      options.truncation = truncation;
      options.target_bucket_len = 4;
      options.parallel_threshold = 1;
      options.sweep_split = false;
      const SweepStats stats = expect_cpu_matches_reference(observable, columns, options);
      EXPECT_GT(stats.stats.final_terms, 20u) << "too few terms left to test anything";
    }
  }
}

/// A circuit in which parameter th enters several gates as a·th + b (angles) or as a strength 0.05 + 0.2·th
/// (noise), with the derivative descriptors of every such gate.
struct ParameterizedCircuit {
  std::size_t qubits = 0;
  struct Gate {
    int kind;
    Qubit a, b;
    double slope, offset;  // angle = slope·th + offset; kind ≥ 6: strength = 0.05 + 0.2·th
    bool uses;             // depends on th
  };
  std::vector<Gate> gates;

  static Channel make(const Gate& g, double argument) {
    switch (g.kind) {
      case 0:
        return Channel::rx(argument, g.a);
      case 1:
        return Channel::rz(argument, g.a);
      case 2:
        return Channel::rzz(argument, g.a, g.b);
      case 3:
        return Channel::pauli_rotation("XY", {g.a, g.b}, argument);
      case 4:
        return Channel::cnot(g.a, g.b);
      case 5:
        return Channel::h(g.a);
      case 6:
        return Channel::depolarize(argument, g.a);
      case 7:
        return Channel::dephase(argument, g.a);
      default:
        return Channel::depolarize2(argument, g.a, g.b);
    }
  }
  static double argument(const Gate& g, double th) {
    return g.kind >= 6 ? (g.uses ? 0.05 + 0.2 * th : 0.1) : (g.uses ? g.slope * th + g.offset : g.offset);
  }
  Circuit build(double th) const {
    Circuit c(qubits);
    for (const Gate& g : gates) c.append(make(g, argument(g, th)));
    return c;
  }
  std::vector<LayerDerivative> derivatives(double th) const {
    std::vector<LayerDerivative> out;
    for (std::size_t l = 0; l < gates.size(); ++l) {
      const Gate& g = gates[l];
      if (!g.uses || g.kind == 4 || g.kind == 5) continue;
      const bool angle = g.kind < 6;
      out.push_back(sweep_derivative(
          l, [&](double v) { return make(g, v); }, argument(g, th), angle, angle ? g.slope : 0.2));
    }
    return out;
  }
};

ParameterizedCircuit parameterized(std::uint64_t seed, bool noise) {
  std::mt19937_64 rng(seed);
  ParameterizedCircuit p;
  p.qubits = 2 + rng() % 4;
  const std::size_t gates = 6 + rng() % 14;
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  for (std::size_t i = 0; i < gates; ++i) {
    ParameterizedCircuit::Gate g{static_cast<int>(rng() % (noise ? 9 : 6)),
                                 static_cast<Qubit>(rng() % p.qubits),
                                 0,
                                 real(rng),
                                 real(rng),
                                 rng() % 3 != 0};
    g.b = static_cast<Qubit>((g.a + 1 + rng() % (p.qubits - 1)) % p.qubits);
    p.gates.push_back(g);
  }
  return p;
}

/// The circuit at each value of th, and ∂/∂th of each.
std::pair<std::vector<Circuit>, SweepGradient> columns_and_gradient(const ParameterizedCircuit& p,
                                                                    const std::vector<double>& values) {
  std::vector<Circuit> columns;
  SweepGradient gradient{"th", {}};
  for (double th : values) {
    columns.push_back(p.build(th));
    gradient.derivatives.push_back(p.derivatives(th));
  }
  return {std::move(columns), std::move(gradient)};
}

/// (A − B) / h term by term.
Terms difference_quotient(const Terms& a, const Terms& b, double h) {
  Terms out;
  for (const auto& [label, c] : a) out[label] += c / h;
  for (const auto& [label, c] : b) out[label] -= c / h;
  return out;
}

TEST_P(SweepEngines, GradientColumnsAreTheDerivativeOfEveryColumn) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const ParameterizedCircuit p = parameterized(seed, seed % 2 == 0);
    const std::vector<double> values = {0.1, 0.37, 0.8};
    const auto [columns, gradient] = columns_and_gradient(p, values);
    const AnyPauliSum observable = random_observable(seed, p.qubits);
    PropagateOptions options;
    options.engine = GetParam();
    options.direction = seed % 3 == 0 ? Direction::forward : Direction::heisenberg;
    AnySweepSum result;
    const std::vector<SweepGradient> gradients = {gradient};
    const SweepStats stats = propagate_sweep(observable, columns, options, result, gradients);
    ASSERT_EQ(result.columns(), 2 * values.size());
    ASSERT_EQ(stats.discarded_weight.size(), 2 * values.size());
    for (std::size_t k = 0; k < values.size(); ++k) {
      const double h = 1e-5;
      const Terms fd = difference_quotient(own_run(observable, p.build(values[k] + h), options),
                                           own_run(observable, p.build(values[k] - h), options), 2 * h);
      const Terms derivative = terms_of(result.column(values.size() + k));
      EXPECT_LT(distance(derivative, fd), 1e-6) << "seed " << seed << " column " << k;
      EXPECT_LT(distance(terms_of(result.column(k)), own_run(observable, columns[k], options)), 1e-12);
    }
  }
}

TEST_P(SweepEngines, AGradientIsExactWhereTheParameterEntersOnce) {
  // One gate uses th: the angle's parameter shift (or the strength's affine slope) is exact, so the
  // derivative column equals it to rounding.
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    ParameterizedCircuit p = parameterized(seed + 500, true);
    std::size_t user = SIZE_MAX;
    for (std::size_t l = 0; l < p.gates.size(); ++l) {
      auto& g = p.gates[l];
      if (g.kind == 4 || g.kind == 5) continue;
      g.uses = user == SIZE_MAX;
      if (g.uses) user = l;
    }
    if (user == SIZE_MAX) continue;
    const auto& g = p.gates[user];
    const double th = 0.3;
    const AnyPauliSum observable = random_observable(seed, p.qubits);
    PropagateOptions options;
    options.engine = GetParam();
    options.direction = seed % 2 ? Direction::forward : Direction::heisenberg;
    AnySweepSum result;
    const std::vector<Circuit> columns = {p.build(th)};
    const std::vector<SweepGradient> gradients = {SweepGradient{"th", {p.derivatives(th)}}};
    propagate_sweep(observable, columns, options, result, gradients);
    Terms exact;
    if (g.kind < 6) {
      const double shift = std::numbers::pi / 2 / g.slope;  // th ± shift moves the angle by ± π/2
      exact = difference_quotient(own_run(observable, p.build(th + shift), options),
                                  own_run(observable, p.build(th - shift), options), 2 / g.slope);
    } else {
      exact = difference_quotient(own_run(observable, p.build(th + 0.5), options),
                                  own_run(observable, p.build(th), options), 0.5);
    }
    EXPECT_LT(distance(terms_of(result.column(1)), exact), 1e-12) << "seed " << seed << " kind " << g.kind;
  }
}

TEST_P(SweepEngines, AskingForAGradientChangesNoValue) {
  const std::vector<Truncation> policies = {Truncation::coeff(0.03), Truncation::topn(6),
                                            Truncation::weight(2),
                                            Truncation::approx_topn(8) & Truncation::coeff(0.01)};
  for (std::uint64_t seed = 0; seed < 24; ++seed) {
    const ParameterizedCircuit p = parameterized(seed + 300, seed % 2 == 0);
    const std::vector<double> values = {0.0, 0.45, 1.0};
    const auto [columns, gradient] = columns_and_gradient(p, values);
    const AnyPauliSum observable = random_observable(seed, p.qubits);
    PropagateOptions options;
    options.engine = GetParam();
    options.truncation = policies[seed % policies.size()];
    AnySweepSum plain, with_gradient;
    const SweepStats plain_stats = propagate_sweep(observable, columns, options, plain);
    const std::vector<SweepGradient> gradients = {gradient};
    const SweepStats gradient_stats = propagate_sweep(observable, columns, options, with_gradient, gradients);
    for (std::size_t k = 0; k < values.size(); ++k) {
      EXPECT_EQ(terms_of(plain.column(k)), terms_of(with_gradient.column(k)))
          << "seed " << seed << " column " << k;
      EXPECT_EQ(plain_stats.discarded_weight[k], gradient_stats.discarded_weight[k]) << "seed " << seed;
    }
  }
}

TEST(SweepDerivative, FindsASecondStrengthNearTheEdgeOfItsRange) {
  // px + py + pz ≤ 1 and py ≥ 0: at py = 0.1 beside px + pz = 0.85 neither py − 0.25 nor py + 0.25 is a
  // channel; py − 1/32 is.
  auto make = [](double py) { return Channel::pauli_channel(0.45, py, 0.4, 0); };
  const LayerDerivative d = sweep_derivative(3, make, 0.1, false);
  EXPECT_EQ(d.layer, 3u);
  EXPECT_DOUBLE_EQ(d.scale, 32.0);
  EXPECT_DOUBLE_EQ(d.minus.parameters()[1], 0.1 - 1.0 / 32);
  EXPECT_THROW(sweep_derivative(
                   0, [](double p) { return Channel::depolarize(p, 0); }, 0.2, false,
                   std::numeric_limits<double>::infinity()),
               std::invalid_argument);
  const LayerDerivative angle = sweep_derivative(
      1, [](double t) { return Channel::rx(t, 0); }, 0.3, true, 2.0);
  EXPECT_DOUBLE_EQ(angle.scale, 1.0);
  EXPECT_DOUBLE_EQ(angle.plus.theta(), 0.3 + std::numbers::pi / 2);
  EXPECT_DOUBLE_EQ(angle.minus.theta(), 0.3 - std::numbers::pi / 2);
}

TEST(SweepEngine, KeysOfSeveralWordsAndGeneratorsAcrossThem) {
  // 100 qubits (two words a key): rotations inside one word and across the word boundary, local tables on
  // either side of it, against the reference and the separate runs.
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t qubits = 100;
    std::vector<Qubit> active = {3, 40, 62, 63, 64, 65, 90, 99};
    auto pick = [&] { return active[rng() % active.size()]; };
    struct Gate {
      int kind;
      Qubit a, b;
    };
    std::vector<Gate> plan;
    for (int g = 0; g < 24; ++g) {
      Gate gate{static_cast<int>(rng() % 5), pick(), 0};
      do {
        gate.b = pick();
      } while (gate.b == gate.a);
      plan.push_back(gate);
    }
    std::vector<Circuit> columns;
    for (double th : {0.3, 1.1, 2.0}) {
      Circuit c(qubits);
      for (const Gate& g : plan) {
        switch (g.kind) {
          case 0:
            c.append(Channel::rzz(th, g.a, g.b));
            break;
          case 1:
            c.append(Channel::rx(th * 0.7, g.a));
            break;
          case 2:
            c.append(Channel::pauli_rotation("XY", {g.a, g.b}, th));
            break;
          case 3:
            c.append(Channel::cnot(g.a, g.b));
            break;
          default:
            c.append(Channel::depolarize2(0.05 * th, g.a, g.b));
            break;
        }
      }
      columns.push_back(std::move(c));
    }
    const std::vector<std::pair<std::string, Complex>> terms = {
        {"Z3 X64", Complex(1.0)}, {"Y40 Z63 X90", Complex(0.5)}, {"X62 Z65 Y99", Complex(-0.7)}};
    const AnyPauliSum observable = AnyPauliSum::from_labels(qubits, terms);
    ASSERT_EQ(observable.width(), 2);
    PropagateOptions options;
    options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
    options.truncation = seed % 3 == 0 ? Truncation() : Truncation::coeff(0.01);
    options.parallel_threshold = 1;
    options.threads = 2;
    AnySweepSum reference, fast;
    options.engine = Engine::reference;
    propagate_sweep(observable, columns, options, reference);
    options.engine = Engine::cpu;
    propagate_sweep(observable, columns, options, fast);
    const std::vector<Terms> expected = all_columns(reference), got = all_columns(fast);
    for (std::size_t k = 0; k < columns.size(); ++k) {
      EXPECT_LT(distance(got[k], expected[k]), 1e-12) << "seed " << seed << " column " << k;
      if (options.truncation.is_none()) {
        EXPECT_LT(distance(got[k], own_run(observable, columns[k], options)), 1e-12) << "seed " << seed;
      }
    }
  }
}

TEST(SweepEngine, GradientsAgreeWithTheDenseOracle) {
  // The oracle's derivative by the product rule: for every gate that uses th, the circuit with that gate
  // alone moved — its parameter shift (angles) or its exact slope (affine strengths) — times the chain.
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    const ParameterizedCircuit p = parameterized(seed + 700, seed % 2 == 0);
    const double th = 0.35;
    const AnyPauliSum observable = random_observable(seed, p.qubits);
    const Direction direction = seed % 3 == 0 ? Direction::forward : Direction::heisenberg;
    PropagateOptions options;
    options.direction = direction;
    AnySweepSum result;
    const std::vector<Circuit> columns = {p.build(th)};
    const std::vector<SweepGradient> gradients = {SweepGradient{"th", {p.derivatives(th)}}};
    propagate_sweep(observable, columns, options, result, gradients);
    const testing::dense::Matrix start =
        observable.visit([&](const auto& s) { return testing::dense_operator(s, p.qubits); });
    auto with_gate = [&](std::size_t moved, double argument) {
      Circuit c(p.qubits);
      for (std::size_t l = 0; l < p.gates.size(); ++l) {
        const auto& g = p.gates[l];
        c.append(
            ParameterizedCircuit::make(g, l == moved ? argument : ParameterizedCircuit::argument(g, th)));
      }
      return testing::apply_circuit_dense(start, c, direction, p.qubits);
    };
    testing::dense::Matrix expected = testing::dense::Matrix::zeros(start.dim());
    for (std::size_t l = 0; l < p.gates.size(); ++l) {
      const auto& g = p.gates[l];
      if (!g.uses || g.kind == 4 || g.kind == 5) continue;
      const double a = ParameterizedCircuit::argument(g, th);
      if (g.kind < 6) {
        expected = expected + Complex(g.slope / 2) * (with_gate(l, a + std::numbers::pi / 2) -
                                                      with_gate(l, a - std::numbers::pi / 2));
      } else {
        expected = expected + Complex(0.2 / 0.05) * (with_gate(l, a) - with_gate(l, a - 0.05));
      }
    }
    const testing::dense::Matrix derivative =
        result.column(1).visit([&](const auto& s) { return testing::dense_operator(s, p.qubits); });
    EXPECT_TRUE(testing::operators_close(derivative, expected, 1e-10)) << "seed " << seed;
  }
}

TEST(SweepEngine, GradientsMatchTheReferenceUnderTruncationOnLargeSums) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const ParameterizedCircuit p = parameterized(seed + 900, seed % 2 == 0);
    const std::vector<double> values = {0.2, 0.6};
    const auto [columns, gradient] = columns_and_gradient(p, values);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    std::vector<std::pair<std::string, Complex>> terms;
    const char letters[] = "IXYZ";
    for (int t = 0; t < 400; ++t) {
      std::string label;
      for (std::size_t q = 0; q < p.qubits; ++q) label += letters[rng() % 4];
      terms.emplace_back(label, Complex(normal(rng), 0.0));
    }
    const AnyPauliSum observable = AnyPauliSum::from_labels(p.qubits, terms);
    PropagateOptions options;
    options.truncation = seed % 2 ? Truncation::coeff(0.02) : Truncation::topn(40);
    options.target_bucket_len = 2;
    options.parallel_threshold = 1;
    options.threads = 3;
    const std::vector<SweepGradient> gradients = {gradient};
    AnySweepSum reference, fast;
    options.engine = Engine::reference;
    const SweepStats reference_stats = propagate_sweep(observable, columns, options, reference, gradients);
    options.engine = Engine::cpu;
    const SweepStats fast_stats = propagate_sweep(observable, columns, options, fast, gradients);
    const std::vector<Terms> expected = all_columns(reference), got = all_columns(fast);
    for (std::size_t k = 0; k < expected.size(); ++k) {
      EXPECT_LT(distance(got[k], expected[k]), 1e-12) << "seed " << seed << " column " << k;
      EXPECT_NEAR(fast_stats.discarded_weight[k], reference_stats.discarded_weight[k], 1e-9);
    }
  }
}

// ---- columns that diverge split into groups (docs/design.md §7.8, sweep/grouped_sweep_engine.h) ----

/// A kicked-Ising θh sweep on a ring of n qubits from ⟨Z0⟩: θh = 0 leaves Z0 alone while larger angles
/// spread it, so the columns diverge. `gradient`: ∂/∂θh of every column (its rx layers).
struct IsingSweep {
  std::vector<Circuit> columns;
  std::vector<SweepGradient> gradients;
  AnyPauliSum observable;
};
IsingSweep ising_sweep(std::size_t n, std::size_t steps, std::size_t K, bool gradient,
                       double top = std::numbers::pi / 2) {
  IsingSweep sweep;
  SweepGradient d{"theta_h", {}};
  for (std::size_t k = 0; k < K; ++k) {
    const double theta = K == 1 ? top : top * static_cast<double>(k) / static_cast<double>(K - 1);
    Circuit circuit(n);
    std::vector<LayerDerivative> layers;
    for (std::size_t step = 0; step < steps; ++step) {
      for (std::size_t q = 0; q < n; ++q)
        circuit.append(
            Channel::rzz(-std::numbers::pi / 2, static_cast<Qubit>(q), static_cast<Qubit>((q + 1) % n)));
      for (std::size_t q = 0; q < n; ++q) {
        const auto qubit = static_cast<Qubit>(q);
        layers.push_back(sweep_derivative(
            circuit.size(), [qubit](double v) { return Channel::rx(v, qubit); }, theta, true));
        circuit.append(Channel::rx(theta, qubit));
      }
    }
    sweep.columns.push_back(std::move(circuit));
    d.derivatives.push_back(std::move(layers));
  }
  if (gradient) sweep.gradients.push_back(std::move(d));
  const std::vector<std::pair<std::string, Complex>> z0 = {{"Z" + std::string(n - 1, 'I'), Complex(1.0)}};
  sweep.observable = AnyPauliSum::from_labels(n, z0);
  return sweep;
}

/// Options that split as soon as the columns diverge (every group counted from its first term).
PropagateOptions splitting(Engine engine, double epsilon) {
  PropagateOptions options;
  options.engine = engine;
  options.truncation = Truncation::coeff(epsilon);
  options.sweep_split_min_terms = 1;
  options.target_bucket_len = 4;
  options.parallel_threshold = 1;
  return options;
}

/// Columns [first, first + count) of every block (values, then each gradient's) of `sweep`'s gradients.
std::vector<SweepGradient> gradient_part(const std::vector<SweepGradient>& gradients, std::size_t first,
                                         std::size_t count) {
  std::vector<SweepGradient> part;
  for (const SweepGradient& g : gradients) {
    SweepGradient p{g.name, {}};
    p.derivatives.assign(g.derivatives.begin() + static_cast<std::ptrdiff_t>(first),
                         g.derivatives.begin() + static_cast<std::ptrdiff_t>(first + count));
    part.push_back(std::move(p));
  }
  return part;
}

/// The state of group [first, first + count) split from the one-group state `whole` (values K, `blocks`
/// blocks of columns), written out plainly: the rows on which some column of the group holds a nonzero
/// value or derivative and keeps its value on its own, with the group's columns, in `whole`'s order and
/// layout.
SweepState expected_group(const SweepState& whole, std::size_t K, std::size_t blocks, std::size_t first,
                          std::size_t count, const Truncation& truncation) {
  SweepState group;
  group.layers_done = whole.layers_done;
  group.bucket_bits = whole.bucket_bits;
  group.light_cone = whole.light_cone;
  whole.sum.visit([&](const auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    std::vector<PauliString<Sum::kWidth>> keys;
    std::vector<typename Sum::Coeff> coefficients;
    for (std::size_t i = 0; i < sum.size(); ++i) {
      const auto row = sum.row(i);
      bool kept = false;
      for (std::size_t k = first; k < first + count; ++k) {
        bool held = false;
        for (std::size_t b = 0; b < blocks; ++b) held = held || std::abs(Complex(row[b * K + k])) != 0.0;
        kept = kept || (held && truncation.keep(sum.keys()[i], row[k]));
      }
      if (!kept) continue;
      keys.push_back(sum.keys()[i]);
      for (std::size_t b = 0; b < blocks; ++b)
        for (std::size_t k = first; k < first + count; ++k) coefficients.push_back(row[b * K + k]);
    }
    group.next_count = 2 * keys.size();
    group.sum = AnySweepSum(Sum(sum.num_qubits(), count * blocks, std::move(keys), std::move(coefficients)));
  });
  return group;
}

TEST_P(SweepEngines, DivergingColumnsSplitIntoTheRowsTheirColumnsKeepAndResumeToTheSameBits) {
  for (const bool gradient : {false, true}) {
    const std::size_t K = 8;
    const IsingSweep sweep = ising_sweep(6, 4, K, gradient);
    const std::size_t blocks = 1 + sweep.gradients.size();
    PropagateOptions options = splitting(GetParam(), 0.01);
    SweepState whole;
    const SweepStats stats =
        propagate_sweep(sweep.observable, sweep.columns, options, whole, sweep.gradients);
    ASSERT_GE(stats.splits, 1u) << "gradient " << gradient;
    ASSERT_EQ(stats.groups, whole.groups.size());
    ASSERT_EQ(stats.discarded_weight.size(), K * blocks);
    // One layer at a time: the same bits; where the first split happens, each group is the rows of the
    // state before it that some column of the group keeps.
    options.should_stop = [](std::size_t) { return true; };
    SweepState state;
    propagate_sweep(sweep.observable, sweep.columns, options, state, sweep.gradients);
    bool checked = false;
    while (state.layers_done < sweep.columns[0].size()) {
      const SweepState before = state;
      resume_sweep(sweep.observable, sweep.columns, options, state, sweep.gradients);
      if (checked || state.groups.empty()) continue;
      checked = true;
      ASSERT_TRUE(before.groups.empty());
      for (const SweepGroupState& group : state.groups) {
        SweepState expected = expected_group(before, K, blocks, group.first, group.count, options.truncation);
        const std::vector<Circuit> part(
            sweep.columns.begin() + static_cast<std::ptrdiff_t>(group.first),
            sweep.columns.begin() + static_cast<std::ptrdiff_t>(group.first + group.count));
        resume_sweep(sweep.observable, part, options, expected,
                     gradient_part(sweep.gradients, group.first, group.count));
        // The group may have split again at once (its own count): compare its columns.
        EXPECT_EQ(all_columns(expected.sum), all_columns(group.sum))
            << "gradient " << gradient << " group from " << group.first;
      }
    }
    EXPECT_TRUE(checked);
    EXPECT_EQ(all_columns(state.sum), all_columns(whole.sum)) << "gradient " << gradient;
    ASSERT_EQ(state.groups.size(), whole.groups.size());
    for (std::size_t g = 0; g < whole.groups.size(); ++g) {
      EXPECT_EQ(state.groups[g].first, whole.groups[g].first);
      EXPECT_EQ(all_columns(state.groups[g].sum), all_columns(whole.groups[g].sum));
    }
  }
}

TEST_P(SweepEngines, NothingSplitsWithoutTruncationOrForIdenticalColumns) {
  const std::size_t K = 6;
  const IsingSweep sweep = ising_sweep(6, 3, K, false);
  PropagateOptions options = splitting(GetParam(), 0.0);
  options.truncation = Truncation();
  AnySweepSum result;
  SweepStats stats = propagate_sweep(sweep.observable, sweep.columns, options, result);
  EXPECT_EQ(stats.splits, 0u);
  EXPECT_EQ(stats.groups, 1u);
  for (std::size_t k = 0; k < K; ++k) {
    EXPECT_LT(distance(terms_of(result.column(k)), own_run(sweep.observable, sweep.columns[k], options)),
              1e-12)
        << "column " << k;
  }
  // Identical columns keep the same terms: one group, each column its own run.
  const IsingSweep one = ising_sweep(6, 3, 1, false, 0.7);
  const std::vector<Circuit> same(4, one.columns[0]);
  options.truncation = Truncation::coeff(1.0 / 64);
  stats = propagate_sweep(one.observable, same, options, result);
  EXPECT_EQ(stats.splits, 0u);
  for (std::size_t k = 0; k < same.size(); ++k)
    EXPECT_LT(distance(terms_of(result.column(k)), own_run(one.observable, same[k], options)), 1e-12);
  // sweep_split off: one group however the columns diverge.
  options.sweep_split = false;
  stats = propagate_sweep(sweep.observable, sweep.columns, options, result);
  EXPECT_EQ(stats.splits, 0u);
  EXPECT_EQ(stats.groups, 1u);
}

TEST_P(SweepEngines, ASplitColumnKeepsEveryTermItsOwnRunKeepsAtAGate) {
  // From a split state, one more gate: every column holds every term its own run would keep from the
  // column's own rows there (the split dropped only terms that no column of the group keeps).
  const std::size_t K = 8;
  const IsingSweep sweep = ising_sweep(6, 4, K, false);
  PropagateOptions options = splitting(GetParam(), 0.01);
  const std::size_t layers = sweep.columns[0].size();
  options.should_stop = [&](std::size_t done) { return done == layers - 1; };
  SweepState state;
  propagate_sweep(sweep.observable, sweep.columns, options, state);
  ASSERT_FALSE(state.groups.empty());
  const SweepState before = state;
  options.should_stop = nullptr;
  resume_sweep(sweep.observable, sweep.columns, options, state);
  for (std::size_t k = 0; k < K; ++k) {
    // The column's own run holds, before the gate, the column's terms that pass its own test.
    std::vector<std::pair<std::string, Complex>> kept;
    for (const auto& [label, c] : terms_of(before.sum.column(k)))
      if (std::abs(c) > 0.01) kept.emplace_back(label, c);
    Circuit last(6);
    last.append(sweep.columns[k][layers - 1]);
    const Terms own = own_run(AnyPauliSum::from_labels(6, kept), last, options);
    const Terms mine = terms_of(state.sum.column(k));
    // The column's other terms (carried for its group, each under the cut-off) add to the coefficients, so
    // only the keys are compared.
    for (const auto& [label, c] : own) ASSERT_TRUE(mine.count(label)) << "column " << k << " lost " << label;
  }
}

TEST_P(SweepEngines, ASplitSweepSharesTheMemoryBudgetAmongItsGroups) {
  const IsingSweep sweep = ising_sweep(6, 4, 8, false);
  PropagateOptions options = splitting(GetParam(), 0.01);
  options.max_terms = 200;
  SweepState state;
  const SweepStats stats = propagate_sweep(sweep.observable, sweep.columns, options, state);
  EXPECT_GE(stats.splits, 1u);
  EXPECT_GT(stats.stats.budget_truncations, 0u);
  // Each group keeps its share of the limit (rounded down): the groups' terms together stay within it.
  std::size_t held = 0;
  for (const SweepGroupState& group : state.groups) held += group.sum.size();
  EXPECT_LE(held, options.max_terms);
  EXPECT_EQ(held, stats.stats.final_terms);
}

TEST_P(SweepEngines, AStateWhoseGroupsDoNotCoverTheColumnsIsRefused) {
  const IsingSweep sweep = ising_sweep(6, 4, 8, false);
  PropagateOptions options = splitting(GetParam(), 0.01);
  const std::size_t stop = sweep.columns[0].size() - 2;  // after the split
  options.should_stop = [stop](std::size_t done) { return done == stop; };
  SweepState state;
  propagate_sweep(sweep.observable, sweep.columns, options, state);
  ASSERT_GE(state.groups.size(), 2u);
  SweepState gap = state;
  gap.groups.erase(gap.groups.begin());  // the first columns in no group
  EXPECT_THROW(resume_sweep(sweep.observable, sweep.columns, options, gap), std::invalid_argument);
  SweepState short_of = state;
  short_of.groups.pop_back();  // the last columns in no group
  EXPECT_THROW(resume_sweep(sweep.observable, sweep.columns, options, short_of), std::invalid_argument);
  SweepState wide = state;
  wide.groups[0].count += 1;  // its rows have fewer columns than it claims
  EXPECT_THROW(resume_sweep(sweep.observable, sweep.columns, options, wide), std::invalid_argument);
  resume_sweep(sweep.observable, sweep.columns, options, state);  // the state itself resumes
  EXPECT_EQ(state.layers_done, stop + 2);
}

TEST(SweepEngine, ASplitSweepIsTheSameBitsForAnyThreadCount) {
  const IsingSweep sweep = ising_sweep(6, 4, 8, true);
  PropagateOptions options = splitting(Engine::cpu, 0.01);
  AnySweepSum one, two;
  options.threads = 1;
  const SweepStats one_stats =
      propagate_sweep(sweep.observable, sweep.columns, options, one, sweep.gradients);
  options.threads = 2;
  const SweepStats two_stats =
      propagate_sweep(sweep.observable, sweep.columns, options, two, sweep.gradients);
  EXPECT_GE(one_stats.splits, 1u);
  EXPECT_EQ(one_stats.splits, two_stats.splits);
  EXPECT_EQ(one_stats.groups, two_stats.groups);
  EXPECT_EQ(one_stats.discarded_weight, two_stats.discarded_weight);
  EXPECT_EQ(all_columns(one), all_columns(two));
}

// ---- columns run apart (SweepTuning::apart_terms, docs/design.md §7.8) ----

/// Columns go apart at the first count (from one term on, whatever they share), or never.
const SweepTuning kApartAtOnce{1, 1e9};
const SweepTuning kNeverApart{0};

/// Column k of a one-group state: the rows on which it has a nonzero coefficient that passes its own test,
/// in the state's order.
AnyPauliSum kept_column(const SweepState& state, std::size_t k, const Truncation& truncation) {
  return state.sum.visit([&](const auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    using Column = PauliSum<Sum::kWidth, typename Sum::Coeff>;
    std::vector<typename Column::Term> terms;
    for (std::size_t i = 0; i < sum.size(); ++i) {
      const auto c = sum.row(i)[k];
      if (c != typename Sum::Coeff(0.0) && truncation.keep(sum.keys()[i], c))
        terms.push_back({sum.keys()[i], c});
    }
    return AnyPauliSum(Column::from_terms(sum.num_qubits(), std::move(terms)));
  });
}

TEST(SweepEngine, ColumnsRunApartAreTheirOwnRunsFromTheRowsTheyKeep) {
  const std::size_t K = 6;
  const IsingSweep sweep = ising_sweep(6, 4, K, false);
  PropagateOptions options = splitting(Engine::cpu, 0.01);
  AnySweepSum result;
  const SweepStats stats =
      propagate_sweep(sweep.observable, sweep.columns, options, result, {}, kApartAtOnce);
  EXPECT_EQ(stats.apart_columns, K);
  EXPECT_EQ(stats.groups, K);
  EXPECT_EQ(stats.splits, 1u);
  // One layer at a time up to the state before the columns go apart: from there each column goes on as
  // an ordinary run (the CPU engine, from that layer) over the rows it keeps, to the same bits.
  options.should_stop = [](std::size_t) { return true; };
  SweepState state, before;
  propagate_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
  while (state.groups.empty()) {
    ASSERT_LT(state.layers_done, sweep.columns[0].size());
    before = state;
    resume_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
  }
  ASSERT_EQ(state.groups.size(), K);
  for (const SweepGroupState& group : state.groups) ASSERT_TRUE(group.apart);
  for (std::size_t k = 0; k < K; ++k) {
    AnyPauliSum own = kept_column(before, k, options.truncation);
    PropagateOptions run = options;
    run.should_stop = nullptr;
    run.start_layer = before.layers_done;
    propagate(own, sweep.columns[k], run);
    EXPECT_EQ(terms_of(result.column(k)), terms_of(own)) << "column " << k;
  }
  // Kept together, the columns are not their own runs (they carry each other's terms): the check above
  // tells the two apart.
  options.should_stop = nullptr;
  AnySweepSum shared;
  EXPECT_EQ(propagate_sweep(sweep.observable, sweep.columns, options, shared, {}, kNeverApart).apart_columns,
            0u);
  EXPECT_NE(all_columns(shared), all_columns(result));
}

TEST(SweepEngine, ColumnsRunApartResumeToTheSameBitsForAnyThreadCount) {
  const std::size_t K = 5;
  const IsingSweep sweep = ising_sweep(6, 4, K, false);
  PropagateOptions options = splitting(Engine::cpu, 0.01);
  AnySweepSum whole, two;
  options.threads = 1;
  const SweepStats one_stats =
      propagate_sweep(sweep.observable, sweep.columns, options, whole, {}, kApartAtOnce);
  options.threads = 2;
  const SweepStats two_stats =
      propagate_sweep(sweep.observable, sweep.columns, options, two, {}, kApartAtOnce);
  EXPECT_EQ(all_columns(two), all_columns(whole));
  EXPECT_EQ(one_stats.discarded_weight, two_stats.discarded_weight);
  // One layer at a time, through states whose groups run apart.
  options.should_stop = [](std::size_t) { return true; };
  SweepState state;
  propagate_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
  std::size_t apart_states = 0;
  while (state.layers_done < sweep.columns[0].size()) {
    resume_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
    if (!state.groups.empty() && state.groups[0].apart) ++apart_states;
  }
  EXPECT_GT(apart_states, 1u);
  ASSERT_EQ(state.groups.size(), K);
  for (const SweepGroupState& group : state.groups) EXPECT_TRUE(group.apart);
  EXPECT_EQ(all_columns(state.sum), all_columns(whole));
}

TEST(SweepEngine, ColumnsGoApartOnlyWhenLargeAndCheaperAndNeverWithGradients) {
  const std::size_t K = 4;
  PropagateOptions options = splitting(Engine::cpu, 0.01);
  // Gradients: derivative columns have no engine of their own, so the columns stay in the sweep.
  const IsingSweep with_gradient = ising_sweep(6, 4, K, true);
  AnySweepSum a, b;
  EXPECT_EQ(propagate_sweep(with_gradient.observable, with_gradient.columns, options, a,
                            with_gradient.gradients, kApartAtOnce)
                .apart_columns,
            0u);
  propagate_sweep(with_gradient.observable, with_gradient.columns, options, b, with_gradient.gradients,
                  kNeverApart);
  EXPECT_EQ(all_columns(a), all_columns(b));
  // Identical columns keep the same terms: apart they would repeat every key's work, so at the default
  // cost share they stay (forced, they go apart all the same).
  const IsingSweep one = ising_sweep(6, 4, 1, false, 0.7);
  const std::vector<Circuit> same(K, one.columns[0]);
  EXPECT_EQ(propagate_sweep(one.observable, same, options, a, {}, SweepTuning{1}).apart_columns, 0u);
  EXPECT_EQ(propagate_sweep(one.observable, same, options, a, {}, kApartAtOnce).apart_columns, K);
  // By default nothing goes apart; a threshold above the sum's size: neither.
  const IsingSweep sweep = ising_sweep(6, 4, 6, false);
  EXPECT_EQ(propagate_sweep(sweep.observable, sweep.columns, options, a).apart_columns, 0u);
  EXPECT_EQ(
      propagate_sweep(sweep.observable, sweep.columns, options, a, {}, SweepTuning{1 << 20}).apart_columns,
      0u);
  // sweep_split off: nothing splits, so nothing goes apart.
  PropagateOptions unsplit = options;
  unsplit.sweep_split = false;
  EXPECT_EQ(propagate_sweep(sweep.observable, sweep.columns, unsplit, a, {}, kApartAtOnce).apart_columns, 0u);
  // The reference engine never runs columns apart, and a state that does is refused there.
  options.should_stop = [](std::size_t) { return true; };
  SweepState state;
  propagate_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
  while (state.groups.empty() && state.layers_done < sweep.columns[0].size())
    resume_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
  ASSERT_FALSE(state.groups.empty());
  ASSERT_TRUE(state.groups[0].apart);
  PropagateOptions reference = options;
  reference.engine = Engine::reference;
  SweepState copy = state;
  EXPECT_THROW(resume_sweep(sweep.observable, sweep.columns, reference, copy, {}, kApartAtOnce),
               std::invalid_argument);
  reference.should_stop = nullptr;
  EXPECT_EQ(propagate_sweep(sweep.observable, sweep.columns, reference, a, {}, kApartAtOnce).apart_columns,
            0u);
}

TEST(SweepEngine, ColumnsRunApartShareTheMemoryBudget) {
  const IsingSweep sweep = ising_sweep(6, 4, 8, false);
  PropagateOptions options = splitting(Engine::cpu, 0.01);
  options.max_terms = 200;
  SweepState state;
  const SweepStats stats = propagate_sweep(sweep.observable, sweep.columns, options, state, {}, kApartAtOnce);
  EXPECT_EQ(stats.apart_columns, 8u);
  EXPECT_GT(stats.stats.budget_truncations, 0u);
  std::size_t held = 0;
  for (const SweepGroupState& group : state.groups) held += group.sum.size();
  EXPECT_LE(held, options.max_terms);
  EXPECT_EQ(held, stats.stats.final_terms);
}

INSTANTIATE_TEST_SUITE_P(Sweep, SweepEngines, ::testing::Values(Engine::reference, Engine::cpu),
                         [](const auto& info) {
                           return info.param == Engine::reference ? "reference" : "cpu";
                         });

}  // namespace
}  // namespace paulistrings
