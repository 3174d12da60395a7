// Tests Circuit (appending, joining, indexing, Python-style slicing, adjoint, fingerprint) and the
// embedded 127-qubit heavy-hex map and kicked-Ising circuit; unitary adjoints are checked against the
// dense oracle.

#include "paulistrings/circuit/circuit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

namespace dense = testing::dense;

using testing::ThrowsInvalidArgumentMentioning;

// A circuit whose gate k is rz(k + 1) on qubit k % num_qubits, so that theta identifies the position.
Circuit NumberedCircuit(std::size_t gates, std::size_t num_qubits = 3) {
  Circuit circuit(num_qubits);
  for (std::size_t k = 0; k < gates; ++k)
    circuit.append(Channel::rz(static_cast<double>(k + 1), k % num_qubits));
  return circuit;
}

std::vector<int> Positions(const Circuit& circuit) {
  std::vector<int> positions;
  for (const Channel& channel : circuit) positions.push_back(static_cast<int>(channel.theta()) - 1);
  return positions;
}

// A random operator on n qubits (complex Pauli coefficients) as a dense matrix.
dense::Matrix RandomOperator(std::mt19937_64& rng, std::size_t n) {
  return dense::operator_from_pauli_terms(static_cast<int>(n), testing::random_terms(rng, n, 12, true));
}

TEST(CircuitTest, AppendValidatesQubitsNamingGateIndexAndQubit) {
  Circuit circuit(4);
  circuit.append(Channel::h(0)).append(Channel::cnot(0, 3));
  EXPECT_EQ(circuit.size(), 2u);
  EXPECT_EQ(circuit.num_qubits(), 4u);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { circuit.append(Channel::cz(1, 4)); },
                                              {"gate 2", "qubit 4", "4 qubits"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { circuit.append(Channel::rx(0.5, 17)); }, {"gate 2", "qubit 17"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] {
        circuit.append(Channel::pauli_rotation("XYZ", {0, 9, 2}, 0.1));
      },
      {"gate 2", "qubit 9"}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { circuit.append(Channel::depolarize(0.1, 4)); }, {"qubit 4"}));
  EXPECT_EQ(circuit.size(), 2u);  // failed appends leave the circuit unchanged
  circuit.append(Channel::x(3));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { circuit.append(Channel::y(5)); }, {"gate 3", "qubit 5"}));
  EXPECT_EQ(circuit[2].name(), "x");

  Circuit empty(0);
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { empty.append(Channel::h(0)); }, {"gate 0", "qubit 0"}));
}

TEST(CircuitTest, MoreThan1024QubitsThrowNaming1024) {
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([] { Circuit circuit(1025); }, {"1024"}));
  EXPECT_NO_THROW(Circuit(1024).append(Channel::h(1023)));
}

TEST(CircuitTest, ExtendAndPlusKeepOrder) {
  Circuit a = NumberedCircuit(4);
  const Circuit full = NumberedCircuit(7);
  const Circuit tail = full.slice(4, std::nullopt);
  EXPECT_EQ(Positions(a + tail), Positions(full));
  EXPECT_EQ((a + tail).fingerprint(), full.fingerprint());
  EXPECT_EQ(Positions(a), (std::vector<int>{0, 1, 2, 3}));  // operator+ leaves its operands alone
  a.extend(tail);
  EXPECT_EQ(Positions(a), Positions(full));

  Circuit self = NumberedCircuit(3);
  self.extend(self);
  EXPECT_EQ(Positions(self), (std::vector<int>{0, 1, 2, 0, 1, 2}));
  self.extend(Circuit(3));
  EXPECT_EQ(self.size(), 6u);
  const Circuit doubled = self + self;
  EXPECT_EQ(doubled.size(), 12u);

  Circuit other(4);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { self.extend(other); }, {"3", "4"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { (void)(other + self); }, {"3", "4"}));
  EXPECT_EQ(self.size(), 6u);
}

TEST(CircuitTest, AtAcceptsNegativeIndices) {
  const Circuit circuit = NumberedCircuit(5);
  for (std::ptrdiff_t i = 0; i < 5; ++i) {
    EXPECT_EQ(circuit.at(i).theta(), static_cast<double>(i + 1));
    EXPECT_EQ(circuit.at(i - 5).theta(), static_cast<double>(i + 1));
    EXPECT_EQ(circuit[static_cast<std::size_t>(i)].theta(), static_cast<double>(i + 1));
  }
  for (std::ptrdiff_t bad :
       {std::ptrdiff_t{5}, std::ptrdiff_t{6}, std::ptrdiff_t{-6}, std::ptrdiff_t{-100},
        std::numeric_limits<std::ptrdiff_t>::min(), std::numeric_limits<std::ptrdiff_t>::max()}) {
    EXPECT_THROW((void)circuit.at(bad), std::out_of_range) << bad;
  }
  try {
    (void)circuit.at(-6);
    ADD_FAILURE() << "did not throw";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("-6"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Circuit(2).at(0), std::out_of_range);
  EXPECT_THROW((void)Circuit(2).at(-1), std::out_of_range);
}

struct SliceCase {
  std::optional<std::ptrdiff_t> start, stop;
  std::ptrdiff_t step;
  std::vector<int> expected;
};

TEST(CircuitTest, SliceFollowsPythonSemantics) {
  // Expected positions are list(range(7))[start:stop:step] as Python evaluates it.
  const std::vector<SliceCase> cases = {
      {std::nullopt, std::nullopt, 1, {0, 1, 2, 3, 4, 5, 6}},
      {std::nullopt, std::nullopt, -1, {6, 5, 4, 3, 2, 1, 0}},
      {std::nullopt, std::nullopt, 2, {0, 2, 4, 6}},
      {std::nullopt, std::nullopt, -2, {6, 4, 2, 0}},
      {std::nullopt, std::nullopt, 3, {0, 3, 6}},
      {1, std::nullopt, 1, {1, 2, 3, 4, 5, 6}},
      {std::nullopt, 4, 1, {0, 1, 2, 3}},
      {2, 5, 1, {2, 3, 4}},
      {5, 2, 1, {}},
      {-3, std::nullopt, 1, {4, 5, 6}},
      {std::nullopt, -2, 1, {0, 1, 2, 3, 4}},
      {-5, -1, 2, {2, 4}},
      {-1, -5, -1, {6, 5, 4, 3}},
      {-1, -5, -2, {6, 4}},
      {6, std::nullopt, -3, {6, 3, 0}},
      {std::nullopt, 1, -1, {6, 5, 4, 3, 2}},
      {std::nullopt, 0, -1, {6, 5, 4, 3, 2, 1}},
      {std::nullopt, -8, -1, {6, 5, 4, 3, 2, 1, 0}},
      {10, std::nullopt, -1, {6, 5, 4, 3, 2, 1, 0}},
      {10, -10, -2, {6, 4, 2, 0}},
      {-10, 10, 3, {0, 3, 6}},
      {-100, 100, 1, {0, 1, 2, 3, 4, 5, 6}},
      {3, 3, 1, {}},
      {3, 3, -1, {}},
      {0, 7, 7, {0}},
      {0, 7, 8, {0}},
      {6, -8, -7, {6}},
      {6, -100, -100, {6}},
      {std::nullopt, std::nullopt, 100, {0}},
      {1, std::nullopt, -1, {1, 0}},
      {-7, std::nullopt, 1, {0, 1, 2, 3, 4, 5, 6}},
      {-8, std::nullopt, 1, {0, 1, 2, 3, 4, 5, 6}},
      {7, std::nullopt, 1, {}},
      {7, std::nullopt, -1, {6, 5, 4, 3, 2, 1, 0}},
      {std::nullopt, -7, -1, {6, 5, 4, 3, 2, 1}},
      {2, -2, 1, {2, 3, 4}},
      {-2, 2, -1, {5, 4, 3}},
      {4, std::nullopt, -2, {4, 2, 0}},
      {std::nullopt, 3, 2, {0, 2}},
  };
  const Circuit circuit = NumberedCircuit(7);
  for (const SliceCase& c : cases) {
    const Circuit sliced = circuit.slice(c.start, c.stop, c.step);
    EXPECT_EQ(Positions(sliced), c.expected)
        << "[" << (c.start ? std::to_string(*c.start) : "") << ":" << (c.stop ? std::to_string(*c.stop) : "")
        << ":" << c.step << "]";
    EXPECT_EQ(sliced.num_qubits(), circuit.num_qubits());
  }
  // A negative step reverses the order; it does not take the adjoint.
  EXPECT_EQ(circuit.slice(std::nullopt, std::nullopt, -1)[0].theta(), 7.0);
  // Slices of the empty circuit are empty.
  for (std::ptrdiff_t step : {1, -1, 3})
    EXPECT_TRUE(Circuit(2).slice(std::nullopt, std::nullopt, step).empty());
  EXPECT_TRUE(Circuit(2).slice(-1, 5, 1).empty());
}

TEST(CircuitTest, SliceStepZeroThrows) {
  const Circuit circuit = NumberedCircuit(4);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { circuit.slice(std::nullopt, std::nullopt, 0); },
                                              {"step", "zero"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { circuit.slice(1, 3, 0); }, {"step"}));
}

TEST(CircuitTest, SliceWithHugeStepsTakesOneElement) {
  // Python: list(range(7))[1::2**62] == [1], [5::-2**62] == [5], [0::2**63-1] == [0], [0::-2**63] == [0].
  const Circuit circuit = NumberedCircuit(7);
  constexpr std::ptrdiff_t kHuge = std::numeric_limits<std::ptrdiff_t>::max();
  EXPECT_EQ(Positions(circuit.slice(0, std::nullopt, kHuge)), (std::vector<int>{0}));
  EXPECT_EQ(Positions(circuit.slice(std::nullopt, std::nullopt, -kHuge)), (std::vector<int>{6}));
  EXPECT_EQ(Positions(circuit.slice(1, std::nullopt, std::ptrdiff_t{1} << 62)), (std::vector<int>{1}));
  EXPECT_EQ(Positions(circuit.slice(0, std::nullopt, std::numeric_limits<std::ptrdiff_t>::min())),
            (std::vector<int>{0}));
  EXPECT_EQ(Positions(circuit.slice(5, std::nullopt, -(std::ptrdiff_t{1} << 62))), (std::vector<int>{5}));
}

// Regression: slice once advanced with `i += step`, which overflowed std::ptrdiff_t for start > 0 and a step
// near PTRDIFF_MAX and read out of bounds. Python gives [1] and [6].
TEST(CircuitTest, SliceWithHugeStepFromANonzeroStartDoesNotOverflow) {
  const Circuit circuit = NumberedCircuit(7);
  constexpr std::ptrdiff_t kHuge = std::numeric_limits<std::ptrdiff_t>::max();
  EXPECT_EQ(Positions(circuit.slice(1, std::nullopt, kHuge)), (std::vector<int>{1}));
  EXPECT_EQ(Positions(circuit.slice(6, 7, kHuge)), (std::vector<int>{6}));
}

TEST(CircuitTest, AdjointReversesAndDaggersEachGate) {
  Circuit circuit(3);
  const std::vector<Complex> u1 = {Complex(0.6, 0.0), Complex(0.0, 0.8), Complex(0.0, 0.8),
                                   Complex(0.6, 0.0)};
  std::mt19937_64 rng(5);
  const std::vector<Complex> u2 = testing::random_unitary(rng, 4);
  circuit.append(Channel::h(0))
      .append(Channel::s(1))
      .append(Channel::sdg(2))
      .append(Channel::sx(0))
      .append(Channel::sxdg(1))
      .append(Channel::rx(0.3, 2))
      .append(Channel::rzz(-1.25, 0, 2))
      .append(Channel::pauli_rotation("XYZ", {2, 0, 1}, 0.7))
      .append(Channel::unitary_1q(1, u1))
      .append(Channel::unitary_2q(2, 0, u2))
      .append(Channel::cnot(1, 2));
  const Circuit adjoint = circuit.adjoint();
  ASSERT_EQ(adjoint.size(), circuit.size());
  EXPECT_EQ(adjoint.num_qubits(), 3u);
  const std::vector<std::string> expected_names = {
      "cnot", "unitary_2q", "unitary_1q", "pauli_rotation", "rzz", "rx", "sx", "sxdg", "s", "sdg", "h"};
  for (std::size_t k = 0; k < adjoint.size(); ++k) {
    const Channel& original = circuit[circuit.size() - 1 - k];
    EXPECT_EQ(adjoint[k].name(), expected_names[k]) << k;
    EXPECT_EQ(adjoint[k].qubits(), original.qubits()) << k;
    EXPECT_EQ(adjoint[k].theta(), -original.theta()) << k;
    EXPECT_EQ(adjoint[k].pauli(), original.pauli()) << k;
  }
  EXPECT_EQ(adjoint[4].theta(), 1.25);
  EXPECT_EQ(adjoint[3].pauli(), "XYZ");
  // Unitaries are conjugate-transposed.
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) EXPECT_EQ(adjoint[2].matrix()[r * 2 + c], std::conj(u1[c * 2 + r]));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(adjoint[1].matrix()[r * 4 + c], std::conj(u2[c * 4 + r]));
  // The original is untouched.
  EXPECT_EQ(circuit[1].name(), "s");
  EXPECT_EQ(Circuit(5).adjoint().size(), 0u);
}

TEST(CircuitTest, AdjointOfNoiseThrowsNamingTheGate) {
  Circuit circuit(2);
  circuit.append(Channel::h(0))
      .append(Channel::rx(0.2, 1))
      .append(Channel::dephase(0.1, 1))
      .append(Channel::cz(0, 1));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { circuit.adjoint(); }, {"gate 2", "dephase", "noise"}));
  for (const Channel& noise : {Channel::depolarize(0.1, 0), Channel::pauli_channel(0.1, 0.0, 0.05, 1),
                               Channel::depolarize2(0.2, 0, 1), Channel::amplitude_damping(0.3, 0)}) {
    Circuit noisy(2);
    noisy.append(noise).append(Channel::x(0));
    EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { noisy.adjoint(); }, {"gate 0", noise.name()}));
  }
}

TEST(CircuitTest, DoubleAdjointKeepsTheFingerprint) {
  const testing::RandomChannelOptions kNoNoise{.noise = false};
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    std::mt19937_64 rng(seed);
    Circuit circuit(6);
    while (circuit.size() < 40) circuit.append(testing::random_channel(rng, 6, kNoNoise));
    const Circuit twice = circuit.adjoint().adjoint();
    EXPECT_EQ(twice.fingerprint(), circuit.fingerprint()) << "seed " << seed;
    EXPECT_NE(circuit.adjoint().fingerprint(), circuit.fingerprint()) << "seed " << seed;
  }
}

// Regression: iswap's adjoint was once a unitary_2q, so the double adjoint of iswap had another name and
// fingerprint than the original.
TEST(CircuitTest, DoubleAdjointOfIswapKeepsTheFingerprint) {
  Circuit circuit(2);
  circuit.append(Channel::iswap(0, 1));
  EXPECT_EQ(circuit.adjoint()[0].name(), "iswapdg");
  EXPECT_EQ(circuit.adjoint().adjoint()[0].name(), "iswap");
  EXPECT_EQ(circuit.adjoint().adjoint().fingerprint(), circuit.fingerprint());
}

TEST(CircuitTest, TripleAdjointEqualsSingleAdjoint) {
  // Holds for every gate family, iswap included.
  for (std::uint64_t seed = 100; seed < 105; ++seed) {
    std::mt19937_64 rng(seed);
    const Circuit circuit =
        testing::random_circuit(rng, 5, 40, testing::RandomChannelOptions{.noise = false});
    EXPECT_EQ(circuit.adjoint().adjoint().adjoint().fingerprint(), circuit.adjoint().fingerprint()) << seed;
  }
}

// A rotation is its axis, qubits and angle, whatever factory built it: the task-JSON writer spells
// rzz as a v1 pauli_rotation, and a checkpoint of one must resume the other.
TEST(CircuitTest, FingerprintOfARotationIgnoresItsSpelling) {
  Circuit named(3), generic(3);
  named.append(Channel::rzz(0.3, 0, 2)).append(Channel::rx(-0.1, 1));
  generic.append(Channel::pauli_rotation("ZZ", {0, 2}, 0.3)).append(Channel::pauli_rotation("X", {1}, -0.1));
  EXPECT_EQ(named.fingerprint(), generic.fingerprint());
  Circuit other_axis(3);
  other_axis.append(Channel::rxx(0.3, 0, 2)).append(Channel::rx(-0.1, 1));
  EXPECT_NE(other_axis.fingerprint(), named.fingerprint());
}

TEST(CircuitTest, FingerprintSeesEveryDetail) {
  auto build = [](double angle, Qubit rx_qubit, bool use_cz, std::size_t qubits, double noise) {
    Circuit circuit(qubits);
    circuit.append(Channel::h(0)).append(Channel::rx(angle, rx_qubit));
    circuit.append(use_cz ? Channel::cz(0, 1) : Channel::cnot(0, 1));
    circuit.append(Channel::depolarize(noise, 1));
    return circuit;
  };
  const std::uint64_t base = build(0.5, 1, true, 3, 0.01).fingerprint();
  EXPECT_EQ(build(0.5, 1, true, 3, 0.01).fingerprint(), base);  // deterministic
  std::set<std::uint64_t> fingerprints = {base};
  fingerprints.insert(
      build(std::nextafter(0.5, 1.0), 1, true, 3, 0.01).fingerprint());  // last bit of an angle
  fingerprints.insert(build(0.5, 2, true, 3, 0.01).fingerprint());       // a qubit
  fingerprints.insert(build(0.5, 1, false, 3, 0.01).fingerprint());      // a gate
  fingerprints.insert(build(0.5, 1, true, 4, 0.01).fingerprint());       // the qubit count
  fingerprints.insert(build(0.5, 1, true, 3, 0.02).fingerprint());       // a noise parameter
  fingerprints.insert(Circuit(3).fingerprint());
  fingerprints.insert(Circuit(4).fingerprint());
  EXPECT_EQ(fingerprints.size(), 8u);

  // Order, control/target, rotation axis and unitary entries all count.
  Circuit ab(2), ba(2), cnot01(2), cnot10(2), rx(2), ry(2);
  ab.append(Channel::h(0)).append(Channel::s(1));
  ba.append(Channel::s(1)).append(Channel::h(0));
  cnot01.append(Channel::cnot(0, 1));
  cnot10.append(Channel::cnot(1, 0));
  rx.append(Channel::rx(0.3, 0));
  ry.append(Channel::ry(0.3, 0));
  EXPECT_NE(ab.fingerprint(), ba.fingerprint());
  EXPECT_NE(cnot01.fingerprint(), cnot10.fingerprint());
  EXPECT_NE(rx.fingerprint(), ry.fingerprint());
  std::mt19937_64 rng(9);
  std::vector<Complex> u = testing::random_unitary(rng, 2);
  Circuit u_a(1), u_b(1);
  u_a.append(Channel::unitary_1q(0, u));
  u[0] *= std::polar(1.0, 1e-3);  // rephasing a whole row keeps it unitary
  u[1] *= std::polar(1.0, 1e-3);
  u_b.append(Channel::unitary_1q(0, u));
  EXPECT_NE(u_a.fingerprint(), u_b.fingerprint());
}

TEST(CircuitTest, AdjointAgreesWithTheDenseOracle) {
  // Forward through c† equals Heisenberg through c (both are U† A U), and c followed by c† is the identity.
  const testing::RandomChannelOptions kNoNoise{.noise = false};
  for (std::size_t n = 2; n <= 5; ++n) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      std::mt19937_64 rng(1000 * n + seed);
      const Circuit circuit = testing::random_circuit(rng, n, 10, kNoNoise);
      const dense::Matrix op = RandomOperator(rng, n);
      const dense::Matrix heisenberg = testing::apply_circuit_dense(op, circuit, Direction::heisenberg, n);
      const dense::Matrix forward_adjoint =
          testing::apply_circuit_dense(op, circuit.adjoint(), Direction::forward, n);
      EXPECT_TRUE(testing::operators_close(forward_adjoint, heisenberg, 1e-11))
          << "n " << n << " seed " << seed;
      const dense::Matrix round_trip =
          testing::apply_circuit_dense(testing::apply_circuit_dense(op, circuit, Direction::forward, n),
                                       circuit.adjoint(), Direction::forward, n);
      EXPECT_TRUE(testing::operators_close(round_trip, op, 1e-11)) << "n " << n << " seed " << seed;
    }
  }
}

TEST(KickedIsingTest, HeavyHexMapHas144DistinctEdgesOfDegreeAtMostThree) {
  const auto& edges = heavy_hex_127_edges();
  ASSERT_EQ(edges.size(), 144u);
  EXPECT_EQ(kHeavyHexQubits, 127u);
  std::set<std::pair<Qubit, Qubit>> unordered;
  std::vector<int> degree(kHeavyHexQubits, 0);
  for (const auto& [a, b] : edges) {
    ASSERT_LT(a, kHeavyHexQubits);
    ASSERT_LT(b, kHeavyHexQubits);
    EXPECT_NE(a, b);
    EXPECT_TRUE(unordered.insert(std::minmax(a, b)).second) << "repeated edge " << a << "-" << b;
    ++degree[a];
    ++degree[b];
  }
  for (Qubit q = 0; q < kHeavyHexQubits; ++q) {
    EXPECT_GE(degree[q], 1) << "qubit " << q << " is isolated";
    EXPECT_LE(degree[q], 3) << "qubit " << q;
  }
  EXPECT_EQ(std::count(degree.begin(), degree.end(), 3), 36);
  // File order: the first edges of each layer (red, blue, green).
  EXPECT_EQ(edges[0], (std::pair<Qubit, Qubit>{2, 1}));
  EXPECT_EQ(edges[48], (std::pair<Qubit, Qubit>{53, 60}));
  EXPECT_EQ(edges[96], (std::pair<Qubit, Qubit>{10, 11}));
  EXPECT_EQ(edges[143], (std::pair<Qubit, Qubit>{18, 19}));
}

TEST(KickedIsingTest, TheThreeLayersAreMatchings) {
  // data/heavy_hex_127.json holds three layers of 48 edges each; within a layer no qubit repeats.
  const auto& edges = heavy_hex_127_edges();
  ASSERT_EQ(edges.size(), 144u);
  for (std::size_t layer = 0; layer < 3; ++layer) {
    std::set<Qubit> used;
    for (std::size_t e = 48 * layer; e < 48 * (layer + 1); ++e) {
      EXPECT_TRUE(used.insert(edges[e].first).second)
          << "layer " << layer << " reuses qubit " << edges[e].first;
      EXPECT_TRUE(used.insert(edges[e].second).second)
          << "layer " << layer << " reuses qubit " << edges[e].second;
    }
    EXPECT_EQ(used.size(), 96u);
  }
}

TEST(KickedIsingTest, CircuitIsRxOnEveryQubitThenRzzOnEveryEdge) {
  const auto& edges = heavy_hex_127_edges();
  const double theta_h = 5 * std::numbers::pi / 16;
  const Circuit circuit = kicked_ising_circuit(3, theta_h);
  EXPECT_EQ(circuit.num_qubits(), 127u);
  ASSERT_EQ(circuit.size(), 3u * (127 + 144));
  std::size_t k = 0;
  for (int step = 0; step < 3; ++step) {
    for (Qubit q = 0; q < 127; ++q, ++k) {
      ASSERT_EQ(circuit[k].name(), "rx") << k;
      ASSERT_EQ(circuit[k].qubits(), std::vector<Qubit>{q}) << k;
      ASSERT_EQ(circuit[k].theta(), theta_h) << k;
    }
    for (const auto& [a, b] : edges) {
      ASSERT_EQ(circuit[k].name(), "rzz") << k;
      ASSERT_EQ(circuit[k].qubits(), (std::vector<Qubit>{a, b})) << k;
      ASSERT_EQ(circuit[k].theta(), -std::numbers::pi / 2) << k;
      ++k;
    }
  }
  EXPECT_TRUE(kicked_ising_circuit(0, 0.1).empty());
  const Circuit custom_zz = kicked_ising_circuit(1, 0.1, 0.25);
  EXPECT_EQ(custom_zz.at(-1).theta(), 0.25);
  EXPECT_EQ(custom_zz.size(), 271u);
  EXPECT_NE(custom_zz.fingerprint(), kicked_ising_circuit(1, 0.1).fingerprint());
  EXPECT_EQ(kicked_ising_circuit(2, 0.1).fingerprint(),
            (kicked_ising_circuit(1, 0.1) + kicked_ising_circuit(1, 0.1)).fingerprint());
}

}  // namespace
}  // namespace paulistrings
