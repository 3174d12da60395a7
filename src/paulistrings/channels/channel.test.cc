// Tests of the channel layer: every built-in channel against the dense oracle in both directions,
// the normative conventions as exact coefficients, prepared-table classification, user-defined and
// raw-PTM channels, adjoints, and input validation.

#include "paulistrings/channels/channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <ostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/engine/reference_engine.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

namespace dense = testing::dense;
using testing::apply_circuit_dense;
using testing::dense_operator;
using testing::MakeSum;
using testing::operators_close;

constexpr double kPi = std::numbers::pi;
constexpr double kOracleTolerance = 1e-12;
constexpr Complex kI{0.0, 1.0};
constexpr Direction kDirections[] = {Direction::forward, Direction::heisenberg};

// ---------------------------------------------------------------- helpers

/// A deterministic seed derived from a test name (FNV-1a), so every case draws its own inputs.
std::uint64_t seed_from(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

Circuit one_gate_circuit(std::size_t num_qubits, const Channel& channel) {
  Circuit circuit(num_qubits);
  circuit.append(channel);
  return circuit;
}

/// propagate() options; one CPU thread unless asked (quick on a loaded machine; results do not
/// depend on the thread count).
PropagateOptions options_for(Direction direction, Engine engine = Engine::cpu, int threads = 1) {
  PropagateOptions options;
  options.direction = direction;
  options.engine = engine;
  options.threads = threads;
  return options;
}

template <int W, Coefficient C>
PropagationStats propagate_one(PauliSum<W, C>& sum, const Channel& channel, Direction direction,
                               Engine engine = Engine::cpu, int threads = 1) {
  return propagate(sum, one_gate_circuit(sum.num_qubits(), channel), options_for(direction, engine, threads));
}

/// The library's image (real coefficients) of one Pauli label with coefficient 1.
using Image = std::map<std::string, double>;
Image image_of(const Channel& channel, std::size_t num_qubits, const std::string& label,
               Direction direction) {
  auto sum = PauliSum<1, double>::from_labels(num_qubits, {{label, 1.0}});
  propagate_one(sum, channel, direction);
  Image image;
  for (const auto& term : sum.sorted_terms()) image[term.key.to_label(num_qubits)] = term.coefficient;
  return image;
}

::testing::AssertionResult images_near(const Image& actual, const Image& expected, double tolerance) {
  auto describe = [](const Image& image) {
    std::string text = "{";
    for (const auto& [label, c] : image) text += " " + label + ":" + std::to_string(c);
    return text + " }";
  };
  bool ok = actual.size() == expected.size();
  for (const auto& [label, c] : expected) {
    const auto it = actual.find(label);
    ok = ok && it != actual.end() && std::abs(it->second - c) <= tolerance;
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "actual " << describe(actual) << " vs expected " << describe(expected);
}

/// Calls `body` and checks it throws std::invalid_argument whose message contains every fragment.
void expect_invalid_argument(const std::function<void()>& body, const std::vector<std::string>& fragments) {
  try {
    body();
    ADD_FAILURE() << "no std::invalid_argument thrown";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message \"" << message << "\" lacks \"" << fragment << "\"";
    }
  }
}
#define EXPECT_INVALID_ARGUMENT(statement, ...)                         \
  do {                                                                  \
    SCOPED_TRACE(#statement);                                           \
    expect_invalid_argument([&] { (void)(statement); }, {__VA_ARGS__}); \
  } while (0)

std::vector<double> real_parts(const TransferMatrix& t) {
  std::vector<double> values;
  for (const Complex& v : t.entries) values.push_back(v.real());
  return values;
}

// ---------------------------------------------------------------- the catalogue of built-in kinds

struct ChannelCase {
  std::string name;
  std::size_t arity;  ///< qubits the factory takes
  std::function<Channel(std::mt19937_64&, const std::vector<Qubit>&)> make;
};
void PrintTo(const ChannelCase& c, std::ostream* os) { *os << c.name; }

double random_angle(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(-kPi, kPi)(rng); }
double random_probability(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

std::vector<ChannelCase> unitary_cases() {
  using Qubits = const std::vector<Qubit>&;
  std::vector<ChannelCase> cases;
  auto fixed1 = [&](std::string name, Channel (*factory)(Qubit)) {
    cases.push_back({std::move(name), 1, [factory](std::mt19937_64&, Qubits q) { return factory(q[0]); }});
  };
  auto fixed2 = [&](std::string name, Channel (*factory)(Qubit, Qubit)) {
    cases.push_back(
        {std::move(name), 2, [factory](std::mt19937_64&, Qubits q) { return factory(q[0], q[1]); }});
  };
  fixed1("h", &Channel::h);
  fixed1("s", &Channel::s);
  fixed1("sdg", &Channel::sdg);
  fixed1("x", &Channel::x);
  fixed1("y", &Channel::y);
  fixed1("z", &Channel::z);
  fixed1("sx", &Channel::sx);
  fixed1("sxdg", &Channel::sxdg);
  fixed2("cnot", &Channel::cnot);
  fixed2("cy", &Channel::cy);
  fixed2("cz", &Channel::cz);
  fixed2("swap", &Channel::swap);
  fixed2("iswap", &Channel::iswap);
  fixed2("ecr", &Channel::ecr);

  auto rotation1 = [&](std::string name, Channel (*factory)(double, Qubit)) {
    cases.push_back({std::move(name), 1,
                     [factory](std::mt19937_64& rng, Qubits q) { return factory(random_angle(rng), q[0]); }});
  };
  auto rotation2 = [&](std::string name, Channel (*factory)(double, Qubit, Qubit)) {
    cases.push_back({std::move(name), 2, [factory](std::mt19937_64& rng, Qubits q) {
                       return factory(random_angle(rng), q[0], q[1]);
                     }});
  };
  rotation1("rx", &Channel::rx);
  rotation1("ry", &Channel::ry);
  rotation1("rz", &Channel::rz);
  rotation2("rxx", &Channel::rxx);
  rotation2("ryy", &Channel::ryy);
  rotation2("rzz", &Channel::rzz);
  for (std::size_t weight = 1; weight <= 5; ++weight) {
    cases.push_back(
        {"pauli_rotation_weight" + std::to_string(weight), weight, [](std::mt19937_64& rng, Qubits q) {
           std::string letters;
           for (std::size_t k = 0; k < q.size(); ++k) {
             letters += "XYZ"[std::uniform_int_distribution<int>(0, 2)(rng)];
           }
           return Channel::pauli_rotation(letters, q, random_angle(rng));
         }});
  }
  // Special angles exercise the snapped tables (fanout 1) through the same oracle.
  cases.push_back(
      {"rz_quarter_turn", 1, [](std::mt19937_64&, Qubits q) { return Channel::rz(kPi / 2, q[0]); }});
  cases.push_back({"rxx_minus_quarter_turn", 2,
                   [](std::mt19937_64&, Qubits q) { return Channel::rxx(-kPi / 2, q[0], q[1]); }});
  cases.push_back({"ryy_three_quarter_turn", 2,
                   [](std::mt19937_64&, Qubits q) { return Channel::ryy(3 * kPi / 2, q[0], q[1]); }});
  cases.push_back({"pauli_rotation_weight3_half_turn", 3,
                   [](std::mt19937_64&, Qubits q) { return Channel::pauli_rotation("YXZ", q, kPi); }});
  cases.push_back({"unitary_1q", 1, [](std::mt19937_64& rng, Qubits q) {
                     return Channel::unitary_1q(q[0], testing::random_unitary(rng, 2));
                   }});
  cases.push_back({"unitary_2q", 2, [](std::mt19937_64& rng, Qubits q) {
                     return Channel::unitary_2q(q[0], q[1], testing::random_unitary(rng, 4));
                   }});
  return cases;
}

std::vector<ChannelCase> noise_cases() {
  using Qubits = const std::vector<Qubit>&;
  return {
      {"depolarize", 1,
       [](std::mt19937_64& rng, Qubits q) { return Channel::depolarize(random_probability(rng), q[0]); }},
      {"dephase", 1,
       [](std::mt19937_64& rng, Qubits q) { return Channel::dephase(random_probability(rng), q[0]); }},
      {"pauli_channel", 1,
       [](std::mt19937_64& rng, Qubits q) {
         const double px = 0.4 * random_probability(rng), py = 0.3 * random_probability(rng);
         return Channel::pauli_channel(px, py, 0.3 * random_probability(rng), q[0]);
       }},
      {"depolarize2", 2,
       [](std::mt19937_64& rng, Qubits q) {
         return Channel::depolarize2(random_probability(rng), q[0], q[1]);
       }},
      {"amplitude_damping", 1,
       [](std::mt19937_64& rng, Qubits q) {
         return Channel::amplitude_damping(random_probability(rng), q[0]);
       }},
  };
}

std::vector<ChannelCase> all_cases() {
  std::vector<ChannelCase> cases = unitary_cases();
  for (ChannelCase& c : noise_cases()) cases.push_back(std::move(c));
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<ChannelCase>& info) { return info.param.name; }

/// Where to put a channel of `arity` qubits on an n-qubit register: fixed corner placements
/// (reversed and non-adjacent pairs among them) plus one random ordered choice; only the random
/// one on 6 qubits, where the oracle is costly.
std::vector<std::vector<Qubit>> placements(std::size_t arity, std::size_t n, std::mt19937_64& rng) {
  std::vector<std::vector<Qubit>> result;
  if (n >= 6) {
    // random placement only
  } else if (arity == 1) {
    result = {{0}, {n - 1}};
  } else if (arity == 2) {
    result = {{1, 0}, {n - 1, 0}};
    if (n >= 5) result.push_back({4, 1});
    if (n <= 3) result.push_back({0, 1});
  }
  std::vector<Qubit> all(n);
  std::iota(all.begin(), all.end(), Qubit{0});
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(arity);
  result.push_back(all);
  return result;
}

// ---------------------------------------------------------------- every kind against the oracle

template <Coefficient C>
void check_propagate_against_oracle(const ChannelCase& c, std::mt19937_64& rng, std::size_t n,
                                    const std::vector<Qubit>& qubits, Direction direction,
                                    bool also_two_threads = false) {
  const Channel channel = c.make(rng, qubits);
  const bool complex_values = std::same_as<C, Complex>;
  SCOPED_TRACE(channel.description() + " on " + std::to_string(n) + " qubits, " +
               std::string(to_string(direction)) + (complex_values ? ", complex" : ", real"));
  const auto input = MakeSum<1, C>(n, testing::random_terms(rng, n, 2 * n + 4, complex_values));
  const dense::Matrix expected =
      apply_circuit_dense(dense_operator(input, n), one_gate_circuit(n, channel), direction, n);
  struct Run {
    Engine engine;
    int threads;
  };
  std::vector<Run> runs = {{Engine::cpu, 1}, {Engine::reference, 1}};
  if (also_two_threads) runs.push_back({Engine::cpu, 2});
  for (const Run& run : runs) {
    SCOPED_TRACE(
        std::string(run.engine == Engine::cpu ? "cpu engine, threads " : "reference engine, threads ") +
        std::to_string(run.threads));
    auto sum = input;
    propagate_one(sum, channel, direction, run.engine, run.threads);
    sum.check_invariants();
    EXPECT_TRUE(operators_close(dense_operator(sum, n), expected, kOracleTolerance));
  }
}

/// Width 2, with the channel's qubits placed across the boundary between words 0 and 1: the
/// reference engine driven directly (prepare_channel + apply_layer_reference) and propagate()'s
/// CPU engine.
template <Coefficient C>
void check_across_words(const ChannelCase& c, std::mt19937_64& rng, std::size_t n,
                        const std::vector<Qubit>& local_qubits, Direction direction) {
  constexpr std::size_t kOffset = 61;
  std::vector<Qubit> qubits;
  for (Qubit q : local_qubits) qubits.push_back(q + kOffset);
  const Channel channel = c.make(rng, qubits);
  const bool complex_values = std::same_as<C, Complex>;
  SCOPED_TRACE(channel.description() + " at width 2, " + std::string(to_string(direction)) +
               (complex_values ? ", complex" : ", real"));
  const std::size_t total = kOffset + n;
  const auto input = MakeSum<2, C>(
      total, testing::shift_terms(testing::random_terms(rng, n, 2 * n + 4, complex_values), kOffset));
  const dense::Matrix expected = apply_circuit_dense(dense_operator(input, n, kOffset),
                                                     one_gate_circuit(total, channel), direction, n, kOffset);
  auto reference = input;
  const double discarded =
      apply_layer_reference(reference, prepare_channel<2>(channel, direction), Truncation(), 1024, 1);
  EXPECT_EQ(discarded, 0.0);
  reference.check_invariants();
  EXPECT_TRUE(operators_close(dense_operator(reference, n, kOffset), expected, kOracleTolerance));
  auto cpu = input;
  propagate_one(cpu, channel, direction);
  cpu.check_invariants();
  EXPECT_TRUE(operators_close(dense_operator(cpu, n, kOffset), expected, kOracleTolerance));
}

class ChannelOracleTest : public ::testing::TestWithParam<ChannelCase> {};

TEST_P(ChannelOracleTest, OneLayerMatchesDenseOracleInBothDirections) {
  const ChannelCase& c = GetParam();
  std::mt19937_64 rng(seed_from(c.name));
  for (std::size_t n = std::max<std::size_t>(2, c.arity); n <= 6; ++n) {
    bool first_placement = true;
    for (const std::vector<Qubit>& qubits : placements(c.arity, n, rng)) {
      for (Direction direction : kDirections) {
        check_propagate_against_oracle<double>(c, rng, n, qubits, direction);
        // Two threads once per direction (thread counts must not change results; kept rare because
        // an oversubscribed machine makes OpenMP barriers slow).
        check_propagate_against_oracle<Complex>(c, rng, n, qubits, direction, n == 4 && first_placement);
      }
      first_placement = false;
    }
  }
  const std::size_t n = std::min<std::size_t>(c.arity + 2, 6);
  for (Direction direction : kDirections) {
    for (const std::vector<Qubit>& qubits : placements(c.arity, n, rng)) {
      check_across_words<double>(c, rng, n, qubits, direction);
      check_across_words<Complex>(c, rng, n, qubits, direction);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltinKinds, ChannelOracleTest, ::testing::ValuesIn(all_cases()), case_name);

// ---------------------------------------------------------------- adjoints of unitary kinds

class ChannelAdjointTest : public ::testing::TestWithParam<ChannelCase> {};

TEST_P(ChannelAdjointTest, ChannelThenAdjointIsTheIdentity) {
  const ChannelCase& c = GetParam();
  std::mt19937_64 rng(seed_from("adjoint " + c.name));
  const std::size_t n = std::min<std::size_t>(c.arity + 1, 5);
  for (const std::vector<Qubit>& qubits : placements(c.arity, n, rng)) {
    const Channel channel = c.make(rng, qubits);
    const Channel inverse = channel.adjoint();
    SCOPED_TRACE(channel.description() + " then " + inverse.description());
    EXPECT_FALSE(inverse.is_noise());
    EXPECT_EQ(inverse.qubits(), channel.qubits());
    Circuit round_trip(n);
    round_trip.append(channel).append(inverse);
    for (Direction direction : kDirections) {
      auto sum = MakeSum<1, Complex>(n, testing::random_terms(rng, n, 3 * n, true));
      const dense::Matrix before = dense_operator(sum, n);
      // The oracle agrees that the adjoint undoes the channel ...
      EXPECT_TRUE(
          operators_close(apply_circuit_dense(before, round_trip, direction, n), before, kOracleTolerance));
      // ... and so does the library.
      propagate(sum, round_trip, options_for(direction));
      EXPECT_TRUE(operators_close(dense_operator(sum, n), before, kOracleTolerance));
    }
    // The adjoint gate applied forward is the Heisenberg action of the gate: U† A U.
    auto heisenberg = MakeSum<1, double>(n, testing::random_terms(rng, n, 3 * n, false));
    auto forward_inverse = heisenberg;
    propagate_one(heisenberg, channel, Direction::heisenberg);
    propagate_one(forward_inverse, inverse, Direction::forward);
    EXPECT_TRUE(
        operators_close(dense_operator(forward_inverse, n), dense_operator(heisenberg, n), kOracleTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(UnitaryKinds, ChannelAdjointTest, ::testing::ValuesIn(unitary_cases()), case_name);

TEST(ChannelInverseTest, AdjointKindsAndParameters) {
  EXPECT_EQ(Channel::s(2).adjoint().kind(), ChannelKind::sdg);
  EXPECT_EQ(Channel::sdg(2).adjoint().kind(), ChannelKind::s);
  EXPECT_EQ(Channel::sx(2).adjoint().kind(), ChannelKind::sxdg);
  EXPECT_EQ(Channel::sxdg(2).adjoint().kind(), ChannelKind::sx);
  for (const Channel& self_inverse :
       {Channel::h(1), Channel::x(1), Channel::y(1), Channel::z(1), Channel::cnot(3, 1), Channel::cy(0, 2),
        Channel::cz(1, 2), Channel::swap(0, 3), Channel::ecr(2, 0)}) {
    EXPECT_EQ(self_inverse.adjoint().kind(), self_inverse.kind()) << self_inverse.description();
    EXPECT_EQ(self_inverse.adjoint().qubits(), self_inverse.qubits()) << self_inverse.description();
  }
  const Channel rotation = Channel::pauli_rotation("XZY", {4, 0, 2}, 0.7);
  EXPECT_EQ(rotation.adjoint().theta(), -0.7);
  EXPECT_EQ(rotation.adjoint().pauli(), "XZY");
  EXPECT_EQ(rotation.adjoint().qubits(), (std::vector<Qubit>{4, 0, 2}));
  EXPECT_EQ(Channel::rzz(0.25, 1, 0).adjoint().name(), "rzz");
}

TEST(ChannelInverseTest, NoiseHasNoAdjoint) {
  for (const Channel& noise :
       {Channel::depolarize(0.1, 0), Channel::dephase(0.1, 0), Channel::pauli_channel(0.1, 0.1, 0.1, 0),
        Channel::depolarize2(0.1, 0, 1), Channel::amplitude_damping(0.1, 0)}) {
    EXPECT_TRUE(noise.is_noise());
    EXPECT_INVALID_ARGUMENT(noise.adjoint(), noise.name(), "noise");
  }
}

// ---------------------------------------------------------------- normative conventions, exactly

TEST(ChannelConventionTest, HadamardSwapsXAndZAndNegatesY) {
  for (Direction direction : kDirections) {
    SCOPED_TRACE(to_string(direction));
    EXPECT_EQ(image_of(Channel::h(1), 2, "IX", direction), (Image{{"IZ", 1.0}}));
    EXPECT_EQ(image_of(Channel::h(1), 2, "IZ", direction), (Image{{"IX", 1.0}}));
    EXPECT_EQ(image_of(Channel::h(1), 2, "IY", direction), (Image{{"IY", -1.0}}));
    EXPECT_EQ(image_of(Channel::h(1), 2, "XI", direction), (Image{{"XI", 1.0}}));
    EXPECT_EQ(image_of(Channel::h(1), 2, "II", direction), (Image{{"II", 1.0}}));
  }
}

TEST(ChannelConventionTest, PhaseGateSAndItsAdjoint) {
  // Forward S X S† = Y, S Y S† = −X; Heisenberg S† X S = −Y.
  EXPECT_EQ(image_of(Channel::s(0), 1, "X", Direction::forward), (Image{{"Y", 1.0}}));
  EXPECT_EQ(image_of(Channel::s(0), 1, "Y", Direction::forward), (Image{{"X", -1.0}}));
  EXPECT_EQ(image_of(Channel::s(0), 1, "Z", Direction::forward), (Image{{"Z", 1.0}}));
  EXPECT_EQ(image_of(Channel::s(0), 1, "X", Direction::heisenberg), (Image{{"Y", -1.0}}));
  EXPECT_EQ(image_of(Channel::s(0), 1, "Y", Direction::heisenberg), (Image{{"X", 1.0}}));
  EXPECT_EQ(image_of(Channel::sdg(0), 1, "X", Direction::forward), (Image{{"Y", -1.0}}));
  EXPECT_EQ(image_of(Channel::sdg(0), 1, "Y", Direction::forward), (Image{{"X", 1.0}}));
  EXPECT_EQ(image_of(Channel::sdg(0), 1, "X", Direction::heisenberg), (Image{{"Y", 1.0}}));
}

TEST(ChannelConventionTest, PauliGatesAndSquareRootOfX) {
  EXPECT_EQ(image_of(Channel::x(0), 1, "X", Direction::forward), (Image{{"X", 1.0}}));
  EXPECT_EQ(image_of(Channel::x(0), 1, "Z", Direction::forward), (Image{{"Z", -1.0}}));
  EXPECT_EQ(image_of(Channel::x(0), 1, "Y", Direction::forward), (Image{{"Y", -1.0}}));
  EXPECT_EQ(image_of(Channel::y(0), 1, "X", Direction::forward), (Image{{"X", -1.0}}));
  EXPECT_EQ(image_of(Channel::y(0), 1, "Z", Direction::heisenberg), (Image{{"Z", -1.0}}));
  EXPECT_EQ(image_of(Channel::y(0), 1, "Y", Direction::forward), (Image{{"Y", 1.0}}));
  EXPECT_EQ(image_of(Channel::z(0), 1, "X", Direction::heisenberg), (Image{{"X", -1.0}}));
  EXPECT_EQ(image_of(Channel::z(0), 1, "Y", Direction::forward), (Image{{"Y", -1.0}}));
  // SX = e^{iπ/4} RX(π/2): forward Z → −Y, Y → Z; SX† the reverse.
  EXPECT_EQ(image_of(Channel::sx(0), 1, "Z", Direction::forward), (Image{{"Y", -1.0}}));
  EXPECT_EQ(image_of(Channel::sx(0), 1, "Y", Direction::forward), (Image{{"Z", 1.0}}));
  EXPECT_EQ(image_of(Channel::sx(0), 1, "X", Direction::forward), (Image{{"X", 1.0}}));
  EXPECT_EQ(image_of(Channel::sxdg(0), 1, "Z", Direction::forward), (Image{{"Y", 1.0}}));
  EXPECT_EQ(image_of(Channel::sx(0), 1, "Z", Direction::heisenberg), (Image{{"Y", 1.0}}));
}

TEST(ChannelConventionTest, CnotControlFirst) {
  for (Direction direction : kDirections) {  // CNOT is self-inverse: both directions agree
    SCOPED_TRACE(to_string(direction));
    const Channel cnot = Channel::cnot(0, 1);
    EXPECT_EQ(image_of(cnot, 2, "XI", direction), (Image{{"XX", 1.0}}));
    EXPECT_EQ(image_of(cnot, 2, "IZ", direction), (Image{{"ZZ", 1.0}}));
    EXPECT_EQ(image_of(cnot, 2, "ZI", direction), (Image{{"ZI", 1.0}}));
    EXPECT_EQ(image_of(cnot, 2, "IX", direction), (Image{{"IX", 1.0}}));
    EXPECT_EQ(image_of(cnot, 2, "XZ", direction), (Image{{"YY", -1.0}}));
    EXPECT_EQ(image_of(cnot, 2, "YY", direction), (Image{{"XZ", -1.0}}));
    EXPECT_EQ(image_of(cnot, 2, "YZ", direction), (Image{{"XY", 1.0}}));
    // Reversed and non-adjacent: control 4, target 1 on five qubits.
    const Channel far = Channel::cnot(4, 1);
    EXPECT_EQ(image_of(far, 5, "IIIIX", direction), (Image{{"IXIIX", 1.0}}));
    EXPECT_EQ(image_of(far, 5, "IZIII", direction), (Image{{"IZIIZ", 1.0}}));
    EXPECT_EQ(image_of(far, 5, "IIIIZ", direction), (Image{{"IIIIZ", 1.0}}));
    EXPECT_EQ(image_of(far, 5, "IXIII", direction), (Image{{"IXIII", 1.0}}));
    EXPECT_EQ(image_of(far, 5, "XXZYI", direction), (Image{{"XXZYI", 1.0}}));
  }
}

TEST(ChannelConventionTest, CzAndSwap) {
  for (Direction direction : kDirections) {
    SCOPED_TRACE(to_string(direction));
    for (const Channel& cz : {Channel::cz(0, 1), Channel::cz(1, 0)}) {  // symmetric
      EXPECT_EQ(image_of(cz, 2, "XI", direction), (Image{{"XZ", 1.0}}));
      EXPECT_EQ(image_of(cz, 2, "IX", direction), (Image{{"ZX", 1.0}}));
      EXPECT_EQ(image_of(cz, 2, "ZI", direction), (Image{{"ZI", 1.0}}));
      EXPECT_EQ(image_of(cz, 2, "IZ", direction), (Image{{"IZ", 1.0}}));
      EXPECT_EQ(image_of(cz, 2, "XX", direction), (Image{{"YY", 1.0}}));
    }
    EXPECT_EQ(image_of(Channel::swap(0, 1), 2, "XY", direction), (Image{{"YX", 1.0}}));
    EXPECT_EQ(image_of(Channel::swap(0, 1), 2, "ZI", direction), (Image{{"IZ", 1.0}}));
    EXPECT_EQ(image_of(Channel::swap(3, 0), 4, "XZIY", direction), (Image{{"YZIX", 1.0}}));
    EXPECT_EQ(image_of(Channel::swap(3, 0), 4, "IZXI", direction), (Image{{"IZXI", 1.0}}));
  }
}

TEST(ChannelConventionTest, RotationSignsInBothDirections) {
  const double c = 0.955336489125606, s = 0.29552020666133955;
  constexpr double kTight = 1e-15;
  EXPECT_TRUE(images_near(image_of(Channel::rz(0.3, 0), 1, "X", Direction::heisenberg), {{"X", c}, {"Y", -s}},
                          kTight));
  EXPECT_TRUE(
      images_near(image_of(Channel::rz(0.3, 0), 1, "X", Direction::forward), {{"X", c}, {"Y", s}}, kTight));
  EXPECT_TRUE(images_near(image_of(Channel::rz(0.3, 0), 1, "Z", Direction::forward), {{"Z", 1.0}}, 0.0));
  // Heisenberg R† Q R = cos θ Q + i sin θ P Q: P = X, Q = Z gives i·XZ = Y.
  EXPECT_TRUE(images_near(image_of(Channel::rx(0.3, 0), 1, "Z", Direction::heisenberg), {{"Z", c}, {"Y", s}},
                          kTight));
  EXPECT_TRUE(
      images_near(image_of(Channel::rx(0.3, 0), 1, "Z", Direction::forward), {{"Z", c}, {"Y", -s}}, kTight));
  // Weight 3, letters on unordered qubits: P = X2 Y0 Z1, Q = Z2; i·P·Q = Y0 Z1 Y2.
  const Channel rotation = Channel::pauli_rotation("XYZ", {2, 0, 1}, 0.3);
  EXPECT_TRUE(
      images_near(image_of(rotation, 3, "IIZ", Direction::heisenberg), {{"IIZ", c}, {"YZY", s}}, kTight));
  EXPECT_TRUE(
      images_near(image_of(rotation, 3, "IIZ", Direction::forward), {{"IIZ", c}, {"YZY", -s}}, kTight));
  EXPECT_TRUE(
      images_near(image_of(rotation, 3, "YZX", Direction::forward), {{"YZX", 1.0}}, 0.0));  // commutes
  // rzz(θ) on XI: Z0Z1·X0 = i Y0 Z1, Heisenberg gives cos XI − sin YZ.
  EXPECT_TRUE(images_near(image_of(Channel::rzz(0.3, 0, 1), 2, "XI", Direction::heisenberg),
                          {{"XI", c}, {"YZ", -s}}, kTight));
}

TEST(ChannelConventionTest, SingleQubitPauliNoiseScalings) {
  for (Direction direction : kDirections) {  // Pauli noise is self-adjoint
    SCOPED_TRACE(to_string(direction));
    const double p = 0.3;
    const Channel depolarize = Channel::depolarize(p, 1);
    for (const std::string label : {"IX", "IY", "IZ", "XZ"}) {
      const double factor = label[1] == 'I' ? 1.0 : 1.0 - 4.0 * p / 3.0;
      EXPECT_TRUE(images_near(image_of(depolarize, 2, label, direction), {{label, factor}}, 1e-15)) << label;
    }
    EXPECT_EQ(image_of(depolarize, 2, "ZI", direction), (Image{{"ZI", 1.0}}));
    const Channel dephase = Channel::dephase(0.2, 0);
    EXPECT_TRUE(images_near(image_of(dephase, 1, "X", direction), {{"X", 0.6}}, 1e-15));
    EXPECT_TRUE(images_near(image_of(dephase, 1, "Y", direction), {{"Y", 0.6}}, 1e-15));
    EXPECT_EQ(image_of(dephase, 1, "Z", direction), (Image{{"Z", 1.0}}));
    EXPECT_EQ(image_of(dephase, 1, "I", direction), (Image{{"I", 1.0}}));
    const double px = 0.05, py = 0.1, pz = 0.15;
    const Channel pauli = Channel::pauli_channel(px, py, pz, 0);
    EXPECT_TRUE(images_near(image_of(pauli, 1, "X", direction), {{"X", 1 - 2 * (py + pz)}}, 1e-15));
    EXPECT_TRUE(images_near(image_of(pauli, 1, "Y", direction), {{"Y", 1 - 2 * (px + pz)}}, 1e-15));
    EXPECT_TRUE(images_near(image_of(pauli, 1, "Z", direction), {{"Z", 1 - 2 * (px + py)}}, 1e-15));
    EXPECT_EQ(image_of(pauli, 1, "I", direction), (Image{{"I", 1.0}}));
  }
}

TEST(ChannelConventionTest, PauliChannelSpecialCasesMatchDepolarizeAndDephase) {
  auto sum = MakeSum<1, double>(1, {{"X", 1.0}, {"Y", 2.0}, {"Z", 3.0}, {"I", 4.0}});
  auto via_pauli = sum, via_named = sum;
  propagate_one(via_pauli, Channel::pauli_channel(0.1, 0.1, 0.1, 0), Direction::forward);
  propagate_one(via_named, Channel::depolarize(0.3, 0), Direction::forward);
  EXPECT_TRUE(operators_close(dense_operator(via_pauli, 1), dense_operator(via_named, 1), 1e-15));
  via_pauli = sum, via_named = sum;
  propagate_one(via_pauli, Channel::pauli_channel(0.0, 0.0, 0.2, 0), Direction::forward);
  propagate_one(via_named, Channel::dephase(0.2, 0), Direction::forward);
  EXPECT_TRUE(operators_close(dense_operator(via_pauli, 1), dense_operator(via_named, 1), 1e-15));
}

TEST(ChannelConventionTest, TwoQubitDepolarizingScalesEveryNonIdentityPairPauli) {
  const double p = 0.3, factor = 1.0 - 16.0 * p / 15.0;
  const Channel channel = Channel::depolarize2(p, 2, 0);
  for (Direction direction : kDirections) {
    for (char a : std::string("IXYZ")) {
      for (char b : std::string("IXYZ")) {
        const std::string label = {a, 'Y', b};  // spectator Y on qubit 1
        const double expected = (a == 'I' && b == 'I') ? 1.0 : factor;
        EXPECT_TRUE(images_near(image_of(channel, 3, label, direction), {{label, expected}}, 1e-15)) << label;
      }
    }
  }
}

TEST(ChannelConventionTest, AmplitudeDampingIsNotSelfAdjoint) {
  const double gamma = 0.3, shrink = std::sqrt(1.0 - gamma);
  const Channel channel = Channel::amplitude_damping(gamma, 1);
  constexpr double kTight = 1e-15;
  // Forward (the channel map): I → I + γZ, Z → (1−γ)Z, X,Y → √(1−γ).
  EXPECT_TRUE(
      images_near(image_of(channel, 2, "II", Direction::forward), {{"II", 1.0}, {"IZ", gamma}}, kTight));
  EXPECT_TRUE(images_near(image_of(channel, 2, "XZ", Direction::forward), {{"XZ", 1.0 - gamma}}, kTight));
  EXPECT_TRUE(images_near(image_of(channel, 2, "IX", Direction::forward), {{"IX", shrink}}, kTight));
  EXPECT_TRUE(images_near(image_of(channel, 2, "ZY", Direction::forward), {{"ZY", shrink}}, kTight));
  // Heisenberg (the adjoint map): Z → (1−γ)Z + γI, I → I, X,Y → √(1−γ).
  EXPECT_TRUE(images_near(image_of(channel, 2, "IZ", Direction::heisenberg),
                          {{"IZ", 1.0 - gamma}, {"II", gamma}}, kTight));
  EXPECT_TRUE(images_near(image_of(channel, 2, "XI", Direction::heisenberg), {{"XI", 1.0}}, kTight));
  EXPECT_TRUE(images_near(image_of(channel, 2, "II", Direction::heisenberg), {{"II", 1.0}}, kTight));
  EXPECT_TRUE(images_near(image_of(channel, 2, "IY", Direction::heisenberg), {{"IY", shrink}}, kTight));
}

TEST(ChannelConventionTest, FullDepolarizationLeavesOnlyTheIdentity) {
  // p = 3/4 makes the factor 1 − 4p/3 exactly zero; zero terms are dropped, not stored.
  auto sum = MakeSum<1, double>(2, {{"II", 0.5}, {"XI", 1.0}, {"YZ", 2.0}, {"IZ", 3.0}});
  propagate_one(sum, Channel::depolarize(0.75, 0), Direction::heisenberg);
  ASSERT_EQ(sum.size(), 2u);
  EXPECT_EQ(sum.coefficient("II"), 0.5);
  EXPECT_EQ(sum.coefficient("IZ"), 3.0);
}

// ---------------------------------------------------------------- prepared tables

TEST(PreparedChannelTest, PauliGatesAndPauliNoiseAreKeyPreserving) {
  for (const Channel& channel : {Channel::x(1), Channel::y(3), Channel::z(0), Channel::depolarize(0.1, 2),
                                 Channel::dephase(0.2, 1), Channel::pauli_channel(0.1, 0.05, 0.2, 1),
                                 Channel::depolarize2(0.1, 3, 0), Channel::depolarize2(0.0, 0, 1)}) {
    for (Direction direction : kDirections) {
      SCOPED_TRACE(channel.description() + " " + std::string(to_string(direction)));
      const PreparedChannel<1> table = prepare_channel<1>(channel, direction);
      EXPECT_EQ(table.form, PreparedChannel<1>::Form::local);
      EXPECT_EQ(table.table_class, TableClass::key_preserving);
      EXPECT_EQ(table.max_fanout, 1);
      EXPECT_EQ(table.delta_patterns, (std::vector<std::uint8_t>{0}));
      ASSERT_EQ(table.deltas.size(), 1u);
      EXPECT_TRUE(table.deltas[0].is_identity());
      EXPECT_FALSE(table.complex_amplitudes);
    }
  }
}

TEST(PreparedChannelTest, FullDepolarizationHasZeroFanoutForNonIdentityPatterns) {
  const PreparedChannel<1> table = prepare_channel<1>(Channel::depolarize(0.75, 0), Direction::forward);
  EXPECT_EQ(table.table_class, TableClass::key_preserving);
  EXPECT_EQ(table.fanout[0], 1);
  for (int pattern = 1; pattern < 4; ++pattern) EXPECT_EQ(table.fanout[static_cast<std::size_t>(pattern)], 0);
}

TEST(PreparedChannelTest, RotationsAtWholeTurnsAndHalfTurnsAreKeyPreserving) {
  for (double theta : {0.0, 2 * kPi, -2 * kPi, kPi, -kPi}) {
    for (const Channel& channel : {Channel::rx(theta, 0), Channel::rzz(theta, 2, 1),
                                   Channel::pauli_rotation("XYZZ", {3, 0, 5, 1}, theta)}) {
      for (Direction direction : kDirections) {
        SCOPED_TRACE(channel.description() + " " + std::string(to_string(direction)));
        const PreparedChannel<1> table = prepare_channel<1>(channel, direction);
        EXPECT_EQ(table.form, PreparedChannel<1>::Form::rotation);
        EXPECT_EQ(table.table_class, TableClass::key_preserving);
        EXPECT_EQ(table.max_fanout, 1);
        EXPECT_EQ(table.sin_signed, 0.0);
        EXPECT_EQ(std::abs(table.cos_theta), 1.0);
        EXPECT_EQ(table.deltas.size(), 1u);
      }
    }
  }
  // A half turn multiplies anticommuting strings by exactly −1 and leaves commuting ones alone.
  EXPECT_EQ(image_of(Channel::rz(kPi, 0), 2, "XY", Direction::forward), (Image{{"XY", -1.0}}));
  EXPECT_EQ(image_of(Channel::rz(kPi, 0), 2, "ZY", Direction::forward), (Image{{"ZY", 1.0}}));
  EXPECT_EQ(image_of(Channel::rx(2 * kPi, 0), 1, "Z", Direction::heisenberg), (Image{{"Z", 1.0}}));
}

TEST(PreparedChannelTest, RotationsAtOddQuarterTurnsArePermutations) {
  for (double theta : {kPi / 2, -kPi / 2, 3 * kPi / 2, -3 * kPi / 2}) {
    for (const Channel& channel : {Channel::ry(theta, 1), Channel::rxx(theta, 0, 3),
                                   Channel::pauli_rotation("ZYX", {4, 2, 0}, theta)}) {
      for (Direction direction : kDirections) {
        SCOPED_TRACE(channel.description() + " " + std::string(to_string(direction)));
        const PreparedChannel<1> table = prepare_channel<1>(channel, direction);
        EXPECT_EQ(table.table_class, TableClass::permutation);
        EXPECT_EQ(table.max_fanout, 1);
        EXPECT_EQ(table.cos_theta, 0.0);
        // Heisenberg carries +sin θ, forward −sin θ, snapped to exactly ±1.
        const double sin_theta = std::sin(theta) > 0 ? 1.0 : -1.0;
        EXPECT_EQ(table.sin_signed, direction == Direction::heisenberg ? sin_theta : -sin_theta);
        ASSERT_EQ(table.deltas.size(), 2u);
        EXPECT_TRUE(table.deltas[0].is_identity());
        EXPECT_EQ(table.deltas[1], table.generator);
      }
    }
  }
}

TEST(PreparedChannelTest, QuarterTurnRotationYieldsOneExactTerm) {
  // rz(π/2) on X: exactly one term, coefficient exactly ±1 (forward −i·ZX = Y, Heisenberg −Y).
  EXPECT_EQ(image_of(Channel::rz(kPi / 2, 0), 1, "X", Direction::forward), (Image{{"Y", 1.0}}));
  EXPECT_EQ(image_of(Channel::rz(kPi / 2, 0), 1, "X", Direction::heisenberg), (Image{{"Y", -1.0}}));
  EXPECT_EQ(image_of(Channel::rz(-kPi / 2, 0), 1, "X", Direction::forward), (Image{{"Y", -1.0}}));
  EXPECT_EQ(image_of(Channel::rx(3 * kPi / 2, 2), 3, "IIZ", Direction::heisenberg), (Image{{"IIY", -1.0}}));
  const Image weight4 =
      image_of(Channel::pauli_rotation("XXYZ", {0, 1, 2, 3}, kPi / 2), 4, "ZIII", Direction::forward);
  ASSERT_EQ(weight4.size(), 1u);
  EXPECT_EQ(weight4.begin()->first, "YXYZ");
  EXPECT_EQ(std::abs(weight4.begin()->second), 1.0);
}

TEST(PreparedChannelTest, SnapUnitRoundsOnlyWithinTolerance) {
  EXPECT_EQ(snap_unit(1e-16), 0.0);
  EXPECT_EQ(snap_unit(-9e-16), 0.0);
  EXPECT_EQ(snap_unit(1.0 - 4e-16), 1.0);
  EXPECT_EQ(snap_unit(-1.0 + 4e-16), -1.0);
  EXPECT_EQ(snap_unit(std::cos(kPi / 2)), 0.0);
  EXPECT_EQ(snap_unit(std::sin(kPi)), 0.0);
  EXPECT_EQ(snap_unit(2e-15), 2e-15);
  EXPECT_EQ(snap_unit(1.0 - 4e-15), 1.0 - 4e-15);
  EXPECT_EQ(snap_unit(0.5), 0.5);
  EXPECT_EQ(snap_unit(-0.25), -0.25);
}

TEST(PreparedChannelTest, CliffordsArePermutationsWithUnitAmplitudes) {
  for (const Channel& channel : {Channel::h(2), Channel::s(0), Channel::sdg(1), Channel::sx(3),
                                 Channel::sxdg(0), Channel::cnot(4, 1), Channel::cy(0, 2), Channel::cz(3, 1),
                                 Channel::swap(0, 4), Channel::iswap(2, 3), Channel::ecr(1, 0)}) {
    for (Direction direction : kDirections) {
      SCOPED_TRACE(channel.description() + " " + std::string(to_string(direction)));
      const PreparedChannel<1> table = prepare_channel<1>(channel, direction);
      EXPECT_EQ(table.table_class, TableClass::permutation);
      EXPECT_EQ(table.max_fanout, 1);
      EXPECT_FALSE(table.complex_amplitudes);
      const int dim = table.support_size == 1 ? 4 : 16;
      std::set<int> images;
      for (int in = 0; in < dim; ++in) {
        ASSERT_EQ(table.fanout[static_cast<std::size_t>(in)], 1) << "pattern " << in;
        const auto& output = table.outputs[static_cast<std::size_t>(in)][0];
        EXPECT_EQ(std::abs(output.amplitude.real()), 1.0);
        EXPECT_EQ(output.amplitude.imag(), 0.0);
        images.insert(output.pattern);
      }
      EXPECT_EQ(images.size(), static_cast<std::size_t>(dim));  // a bijection of local patterns
      EXPECT_EQ(table.outputs[0][0].pattern, 0);                // identity stays put
    }
  }
}

TEST(PreparedChannelTest, GenericRotationsUnitariesAndAmplitudeDampingAreGeneral) {
  std::mt19937_64 rng(2024);
  struct Expectation {
    Channel channel;
    int max_fanout;
  };
  const std::vector<Expectation> expectations = {
      {Channel::rz(0.3, 1), 2},
      {Channel::ryy(-1.1, 0, 2), 2},
      {Channel::pauli_rotation("XYZYX", {4, 3, 0, 1, 2}, 2.0), 2},
      {Channel::unitary_1q(1, testing::random_unitary(rng, 2)), 3},
      {Channel::unitary_2q(3, 0, testing::random_unitary(rng, 4)), 15},
      {Channel::amplitude_damping(0.2, 2), 2},
  };
  for (const Expectation& e : expectations) {
    for (Direction direction : kDirections) {
      SCOPED_TRACE(e.channel.description() + " " + std::string(to_string(direction)));
      const PreparedChannel<1> table = prepare_channel<1>(e.channel, direction);
      EXPECT_EQ(table.table_class, TableClass::general);
      EXPECT_EQ(table.max_fanout, e.max_fanout);
      EXPECT_FALSE(table.complex_amplitudes);
    }
  }
  // Amplitude damping: forward I fans out to {I, Z}; Heisenberg Z fans out to {Z, I}.
  const PreparedChannel<1> forward =
      prepare_channel<1>(Channel::amplitude_damping(0.2, 0), Direction::forward);
  EXPECT_EQ(forward.fanout[0], 2);
  EXPECT_EQ(forward.fanout[2], 1);
  const PreparedChannel<1> heisenberg =
      prepare_channel<1>(Channel::amplitude_damping(0.2, 0), Direction::heisenberg);
  EXPECT_EQ(heisenberg.fanout[0], 1);
  EXPECT_EQ(heisenberg.fanout[2], 2);
  EXPECT_EQ(forward.delta_patterns, (std::vector<std::uint8_t>{0, 2}));
}

template <int W>
void check_local_delta_masks(const Channel& channel, Direction direction) {
  SCOPED_TRACE(channel.description() + " at width " + std::to_string(W));
  const PreparedChannel<W> table = prepare_channel<W>(channel, direction);
  const std::vector<Qubit>& qubits = channel.qubits();
  ASSERT_EQ(table.deltas.size(), table.delta_patterns.size());
  EXPECT_TRUE(std::is_sorted(table.delta_patterns.begin(), table.delta_patterns.end()));
  for (std::size_t i = 0; i < table.deltas.size(); ++i) {
    const int pattern = table.delta_patterns[i];
    PauliString<W> expected;
    expected.set_code(qubits[0], pattern & 3);
    if (qubits.size() == 2) expected.set_code(qubits[1], (pattern >> 2) & 3);
    EXPECT_EQ(table.deltas[i], expected) << "delta " << i;
  }
  // Every emitted output is the input XOR its delta mask; spectator qubits are untouched.
  const int dim = qubits.size() == 1 ? 4 : 16;
  std::set<int> realized;
  for (int in = 0; in < dim; ++in) {
    PauliString<W> key = PauliString<W>::from_label("Y2 X63", 64 * W);  // spectators
    for (Qubit q : qubits) key.set_code(q, 0);
    key.set_code(qubits[0], in & 3);
    if (qubits.size() == 2) key.set_code(qubits[1], (in >> 2) & 3);
    EXPECT_EQ(table.pattern_of(key), in);
    table.for_each_output(key, [&](const PauliString<W>& out, Complex, int delta_index) {
      EXPECT_EQ(out, key ^ table.deltas[static_cast<std::size_t>(delta_index)]);
      realized.insert(table.delta_patterns[static_cast<std::size_t>(delta_index)]);
    });
  }
  EXPECT_EQ(realized, std::set<int>(table.delta_patterns.begin(), table.delta_patterns.end()));
}

TEST(PreparedChannelTest, LocalDeltaMasksAndOutputs) {
  // CNOT (control c, target t; pattern = code(c) | code(t) << 2) realizes the deltas I, Z_c, X_t, Z_c X_t.
  for (Direction direction : kDirections) {
    const PreparedChannel<1> table = prepare_channel<1>(Channel::cnot(4, 1), direction);
    EXPECT_EQ(table.delta_patterns, (std::vector<std::uint8_t>{0, 2, 4, 6}));
    EXPECT_EQ(prepare_channel<1>(Channel::cnot(0, 1), direction).delta_patterns, table.delta_patterns);
    check_local_delta_masks<1>(Channel::cnot(4, 1), direction);
    check_local_delta_masks<1>(Channel::h(5), direction);
    check_local_delta_masks<1>(Channel::amplitude_damping(0.4, 0), direction);
    check_local_delta_masks<2>(Channel::cnot(70, 3), direction);
    check_local_delta_masks<2>(Channel::iswap(64, 63), direction);
    std::mt19937_64 rng(7);
    check_local_delta_masks<2>(Channel::unitary_2q(127, 0, testing::random_unitary(rng, 4)), direction);
    check_local_delta_masks<4>(Channel::depolarize2(0.2, 200, 65), direction);
  }
  // A Haar-random two-qubit unitary realizes all 16 local deltas.
  std::mt19937_64 rng(11);
  EXPECT_EQ(prepare_channel<1>(Channel::unitary_2q(1, 0, testing::random_unitary(rng, 4)), Direction::forward)
                .delta_patterns.size(),
            16u);
}

TEST(PreparedChannelTest, ChannelMustFitTheWidth) {
  EXPECT_INVALID_ARGUMENT(prepare_channel<1>(Channel::h(64), Direction::forward), "qubit 64", "out of range");
  EXPECT_INVALID_ARGUMENT(prepare_channel<1>(Channel::cnot(3, 70), Direction::heisenberg), "qubit 70");
  EXPECT_INVALID_ARGUMENT(
      (prepare_channel<1>(Channel::pauli_rotation("XZ", {0, 64}, 0.5), Direction::forward)), "qubit 64");
  EXPECT_NO_THROW(prepare_channel<2>(Channel::h(64), Direction::forward));
}

TEST(PreparedChannelTest, RotationGeneratorMask) {
  const Channel channel = Channel::pauli_rotation("XZY", {70, 2, 64}, 0.4);
  const PreparedChannel<2> table = prepare_channel<2>(channel, Direction::forward);
  EXPECT_EQ(table.form, PreparedChannel<2>::Form::rotation);
  EXPECT_EQ(table.generator, PauliString<2>::from_label("X70 Z2 Y64", 128));
  ASSERT_EQ(table.deltas.size(), 2u);
  EXPECT_TRUE(table.deltas[0].is_identity());
  EXPECT_EQ(table.deltas[1], table.generator);
  EXPECT_EQ(table.cos_theta, std::cos(0.4));
  EXPECT_EQ(table.sin_signed, -std::sin(0.4));
  EXPECT_EQ(prepare_channel<2>(channel, Direction::heisenberg).sin_signed, std::sin(0.4));
}

TEST(PreparedChannelTest, UnitaryTransferMatricesAreRealAndOrthogonal) {
  std::mt19937_64 rng(99);
  std::vector<Channel> channels = {Channel::sx(0),     Channel::cy(1, 0), Channel::iswap(0, 1),
                                   Channel::ecr(1, 0), Channel::s(0),     Channel::h(0)};
  for (int k = 0; k < 3; ++k) {
    channels.push_back(Channel::unitary_1q(0, testing::random_unitary(rng, 2)));
    channels.push_back(Channel::unitary_2q(0, 1, testing::random_unitary(rng, 4)));
  }
  for (const Channel& channel : channels) {
    SCOPED_TRACE(channel.description());
    EXPECT_FALSE(channel.has_complex_transfer());
    EXPECT_FALSE(channel.is_noise());
    const TransferMatrix& forward = channel.transfer(Direction::forward);
    const TransferMatrix& heisenberg = channel.transfer(Direction::heisenberg);
    const int dim = forward.dim;
    ASSERT_EQ(dim, channel.qubits().size() == 1 ? 4 : 16);
    for (int out = 0; out < dim; ++out) {
      for (int in = 0; in < dim; ++in) {
        EXPECT_EQ(forward(out, in).imag(), 0.0);
        EXPECT_EQ(heisenberg(out, in), std::conj(forward(in, out)));  // adjoint = transpose
        double dot = 0.0;                                             // TᵀT = I
        for (int r = 0; r < dim; ++r) dot += forward(r, out).real() * forward(r, in).real();
        EXPECT_NEAR(dot, out == in ? 1.0 : 0.0, 1e-12);
      }
    }
    // Unital and trace preserving: the identity pattern is fixed and nothing else reaches it.
    EXPECT_EQ(forward(0, 0), Complex(1.0));
    for (int p = 1; p < dim; ++p) {
      EXPECT_NEAR(std::abs(forward(0, p)), 0.0, 1e-15);
      EXPECT_NEAR(std::abs(forward(p, 0)), 0.0, 1e-15);
    }
    for (Direction direction : kDirections)
      EXPECT_FALSE(prepare_channel<1>(channel, direction).complex_amplitudes);
  }
}

TEST(PreparedChannelTest, UnitaryTransferMatrixOfHadamardInPatternOrder) {
  // Pattern order I X Z Y; T[out][in]: H maps X(1) ↔ Z(2) and Y(3) → −Y.
  const TransferMatrix t = unitary_transfer_matrix(clifford_matrix(ChannelKind::h), 1);
  ASSERT_EQ(t.dim, 4);
  const double expected[4][4] = {{1, 0, 0, 0}, {0, 0, 1, 0}, {0, 1, 0, 0}, {0, 0, 0, -1}};
  for (int out = 0; out < 4; ++out)
    for (int in = 0; in < 4; ++in) EXPECT_NEAR(std::abs(t(out, in) - expected[out][in]), 0.0, 1e-15);
  // The more significant factor of a two-qubit matrix is support qubit 0 (pattern bits 0–1).
  const TransferMatrix cnot = unitary_transfer_matrix(clifford_matrix(ChannelKind::cnot), 2);
  const int xi = 1, xx = 1 | (1 << 2), iz = 2 << 2, zz = 2 | (2 << 2);
  EXPECT_NEAR(cnot(xx, xi).real(), 1.0, 1e-15);
  EXPECT_NEAR(cnot(zz, iz).real(), 1.0, 1e-15);
}

// ---------------------------------------------------------------- user-defined channels

std::vector<std::pair<std::string, Complex>> hadamard_map(std::string_view label) {
  switch (label[0]) {
    case 'X':
      return {{"Z", 1.0}};
    case 'Z':
      return {{"X", 1.0}};
    case 'Y':
      return {{"Y", -1.0}};
    default:
      return {{"I", 1.0}};
  }
}

/// CNOT written out by hand: local label char 0 = control, char 1 = target.
std::vector<std::pair<std::string, Complex>> cnot_map(std::string_view label) {
  static const std::map<std::string, std::pair<std::string, double>> kTable = {
      {"II", {"II", 1}}, {"XI", {"XX", 1}},  {"ZI", {"ZI", 1}}, {"YI", {"YX", 1}},
      {"IX", {"IX", 1}}, {"XX", {"XI", 1}},  {"ZX", {"ZX", 1}}, {"YX", {"YI", 1}},
      {"IZ", {"ZZ", 1}}, {"XZ", {"YY", -1}}, {"ZZ", {"IZ", 1}}, {"YZ", {"XY", 1}},
      {"IY", {"ZY", 1}}, {"XY", {"YZ", 1}},  {"ZY", {"IY", 1}}, {"YY", {"XZ", -1}},
  };
  const auto& [out, sign] = kTable.at(std::string(label));
  return {{out, sign}};
}

template <Coefficient C>
void expect_same_action(const Channel& actual, const Channel& expected, std::size_t n, std::mt19937_64& rng) {
  for (Direction direction : kDirections) {
    SCOPED_TRACE(actual.description() + " vs " + expected.description() + " " +
                 std::string(to_string(direction)));
    auto a = MakeSum<1, C>(n, testing::random_terms(rng, n, 4 * n, std::same_as<C, Complex>));
    auto b = a;
    propagate_one(a, actual, direction);
    propagate_one(b, expected, direction);
    EXPECT_TRUE(operators_close(dense_operator(a, n), dense_operator(b, n), kOracleTolerance));
  }
}

TEST(CustomChannelTest, HandWrittenHadamardMatchesBuiltin) {
  std::mt19937_64 rng(31);
  for (Qubit q : {Qubit{0}, Qubit{2}, Qubit{3}}) {
    const Channel custom = Channel::custom("my_h", {q}, hadamard_map);
    EXPECT_EQ(custom.kind(), ChannelKind::transfer_matrix);
    EXPECT_EQ(custom.name(), "my_h");
    EXPECT_FALSE(custom.is_noise());
    EXPECT_FALSE(custom.has_complex_transfer());
    for (Direction direction : kDirections) {
      EXPECT_EQ(custom.transfer(direction).entries, Channel::h(q).transfer(direction).entries);
      EXPECT_EQ(prepare_channel<1>(custom, direction).table_class, TableClass::permutation);
      // Identical tables give identical sums, and those match the oracle's Hadamard.
      auto sum = MakeSum<1, double>(4, testing::random_terms(rng, 4, 12, false));
      auto builtin = sum;
      const dense::Matrix before = dense_operator(sum, 4);
      propagate_one(sum, custom, direction);
      propagate_one(builtin, Channel::h(q), direction);
      EXPECT_TRUE(sum == builtin);
      EXPECT_TRUE(
          operators_close(dense_operator(sum, 4),
                          apply_circuit_dense(before, one_gate_circuit(4, Channel::h(q)), direction, 4)));
    }
    expect_same_action<Complex>(custom, Channel::h(q), 4, rng);
  }
}

TEST(CustomChannelTest, HandWrittenCnotMatchesBuiltin) {
  std::mt19937_64 rng(37);
  for (const auto& [control, target] : std::vector<std::pair<Qubit, Qubit>>{{0, 1}, {3, 1}, {0, 4}, {4, 2}}) {
    const Channel custom = Channel::custom("hand_cnot", {control, target}, cnot_map);
    const Channel builtin = Channel::cnot(control, target);
    EXPECT_FALSE(custom.is_noise());
    for (Direction direction : kDirections) {
      EXPECT_EQ(custom.transfer(direction).entries, builtin.transfer(direction).entries);
    }
    expect_same_action<double>(custom, builtin, 5, rng);
    expect_same_action<Complex>(custom, builtin, 5, rng);
  }
}

TEST(CustomChannelTest, ComplexAmplitudesNeedComplexStorage) {
  // A non-Hermitian linear map: X → i·Y, Y → X, Z → Z, I → I.
  const LocalPauliMap map = [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    if (label == "X") return {{"Y", kI}};
    if (label == "Y") return {{"X", 1.0}};
    return {{std::string(label), 1.0}};
  };
  const Channel channel = Channel::custom("twist", {1}, map);
  EXPECT_TRUE(channel.has_complex_transfer());
  EXPECT_TRUE(prepare_channel<1>(channel, Direction::forward).complex_amplitudes);

  auto real_sum = MakeSum<1, double>(2, {{"IX", 2.0}, {"IY", 0.5}, {"IZ", 3.0}, {"XI", 1.0}});
  const auto untouched = real_sum;
  EXPECT_INVALID_ARGUMENT(propagate_one(real_sum, channel, Direction::forward), "complex", "twist");
  EXPECT_TRUE(real_sum == untouched);

  // Forward: 2X + 0.5Y + 3Z + X⊗I → 2i·Y + 0.5X + 3Z + X⊗I on qubit 1.
  auto complex_sum = real_sum.to_complex();
  propagate_one(complex_sum, channel, Direction::forward);
  EXPECT_EQ(complex_sum.size(), 4u);
  EXPECT_EQ(complex_sum.coefficient("IY"), 2.0 * kI);
  EXPECT_EQ(complex_sum.coefficient("IX"), Complex(0.5));
  EXPECT_EQ(complex_sum.coefficient("IZ"), Complex(3.0));
  EXPECT_EQ(complex_sum.coefficient("XI"), Complex(1.0));

  // AnyPauliSum switches a real sum to complex storage by itself; Heisenberg uses the conjugate
  // transpose (X → Y, Y → −i·X).
  const std::vector<std::pair<std::string, Complex>> terms = {{"IX", 2.0}, {"IY", 0.5}, {"IZ", 3.0}};
  for (Direction direction : kDirections) {
    AnyPauliSum any = AnyPauliSum::from_labels(2, terms);
    ASSERT_FALSE(any.is_complex());
    propagate(any, one_gate_circuit(2, channel), options_for(direction));
    EXPECT_TRUE(any.is_complex());
    EXPECT_EQ(any.size(), 3u);
    EXPECT_EQ(any.coefficient("IZ"), Complex(3.0));
    if (direction == Direction::forward) {
      EXPECT_EQ(any.coefficient("IY"), 2.0 * kI);
      EXPECT_EQ(any.coefficient("IX"), Complex(0.5));
    } else {
      EXPECT_EQ(any.coefficient("IY"), Complex(2.0));
      EXPECT_EQ(any.coefficient("IX"), -0.5 * kI);
    }
  }
}

TEST(CustomChannelTest, ExplicitAdjointMapIsUsedForHeisenberg) {
  // Forward is a Hadamard; the adjoint map given (X → 2X) is deliberately not its transpose, so
  // the test can tell which table each direction reads.
  const LocalPauliMap doubled_x = [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    return {{std::string(label), label == "X" ? 2.0 : 1.0}};
  };
  const Channel channel = Channel::custom("h_with_adjoint", {0}, hadamard_map, doubled_x);
  EXPECT_EQ(image_of(channel, 2, "XZ", Direction::forward), (Image{{"ZZ", 1.0}}));
  EXPECT_EQ(image_of(channel, 2, "XZ", Direction::heisenberg), (Image{{"XZ", 2.0}}));
  EXPECT_EQ(image_of(channel, 2, "ZZ", Direction::heisenberg), (Image{{"ZZ", 1.0}}));
  EXPECT_EQ(channel.transfer(Direction::heisenberg)(1, 1), Complex(2.0));
  // Its adjoint swaps the two tables.
  const Channel inverse = channel.adjoint();
  EXPECT_EQ(image_of(inverse, 2, "XZ", Direction::forward), (Image{{"XZ", 2.0}}));
  EXPECT_EQ(image_of(inverse, 2, "XZ", Direction::heisenberg), (Image{{"ZZ", 1.0}}));
}

TEST(CustomChannelTest, MapsMaySumSeveralTermsAndRepeatOutputs) {
  // Outputs naming the same label are summed: here Z → 0.25 Z + 0.25 Z + 0.5 I (a damping-like map).
  const LocalPauliMap map = [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    if (label == "Z") return {{"Z", 0.25}, {"Z", 0.25}, {"I", 0.5}};
    return {{std::string(label), 1.0}};
  };
  const Channel channel = Channel::custom("damp", {0}, map);
  EXPECT_TRUE(channel.is_noise());
  EXPECT_INVALID_ARGUMENT(channel.adjoint(), "damp");
  EXPECT_EQ(image_of(channel, 1, "Z", Direction::forward), (Image{{"Z", 0.5}, {"I", 0.5}}));
  EXPECT_EQ(image_of(channel, 1, "I", Direction::heisenberg), (Image{{"I", 1.0}, {"Z", 0.5}}));
  EXPECT_EQ(prepare_channel<1>(channel, Direction::forward).table_class, TableClass::general);
}

// ---------------------------------------------------------------- raw transfer matrices

TEST(TransferMatrixChannelTest, UnitaryPtmBehavesLikeTheUnitary) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 3; ++trial) {
    const std::vector<Complex> u1 = testing::random_unitary(rng, 2);
    const std::vector<Complex> u2 = testing::random_unitary(rng, 4);
    const Channel ptm1 = Channel::transfer_matrix({2}, real_parts(unitary_transfer_matrix(u1, 1)));
    const Channel ptm2 =
        Channel::transfer_matrix({3, 1}, real_parts(unitary_transfer_matrix(u2, 2)), "my_ptm");
    EXPECT_EQ(ptm1.kind(), ChannelKind::transfer_matrix);
    EXPECT_EQ(ptm1.name(), "transfer_matrix");
    EXPECT_EQ(ptm2.name(), "my_ptm");
    EXPECT_FALSE(ptm1.is_noise());
    EXPECT_FALSE(ptm2.is_noise());
    const Channel unitary1 = Channel::unitary_1q(2, u1);
    const Channel unitary2 = Channel::unitary_2q(3, 1, u2);
    expect_same_action<double>(ptm1, unitary1, 4, rng);
    expect_same_action<Complex>(ptm1, unitary1, 4, rng);
    expect_same_action<double>(ptm2, unitary2, 4, rng);
    expect_same_action<Complex>(ptm2, unitary2, 4, rng);
    // And against the oracle directly (the unitary's dense form stands in for the PTM).
    for (Direction direction : kDirections) {
      auto sum = MakeSum<1, Complex>(4, testing::random_terms(rng, 4, 14, true));
      const dense::Matrix before = dense_operator(sum, 4);
      propagate_one(sum, ptm2, direction);
      EXPECT_TRUE(operators_close(dense_operator(sum, 4),
                                  apply_circuit_dense(before, one_gate_circuit(4, unitary2), direction, 4)));
    }
    // Its adjoint is the inverse.
    auto sum = MakeSum<1, double>(4, testing::random_terms(rng, 4, 10, false));
    const dense::Matrix before = dense_operator(sum, 4);
    Circuit round_trip(4);
    round_trip.append(ptm2).append(ptm2.adjoint());
    propagate(sum, round_trip, options_for(Direction::forward));
    EXPECT_TRUE(operators_close(dense_operator(sum, 4), before));
  }
}

TEST(TransferMatrixChannelTest, NonOrthogonalPtmIsNoise) {
  const std::vector<double> shrink = {1, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5};
  const Channel channel = Channel::transfer_matrix({1}, shrink, "shrink");
  EXPECT_TRUE(channel.is_noise());
  EXPECT_INVALID_ARGUMENT(channel.adjoint(), "shrink", "noise");
  // It is depolarize(3/8): 1 − 4·(3/8)/3 = 1/2, exactly.
  std::mt19937_64 rng(43);
  for (Direction direction : kDirections) {
    auto sum = MakeSum<1, double>(3, testing::random_terms(rng, 3, 12, false));
    auto expected = sum;
    propagate_one(sum, channel, direction);
    propagate_one(expected, Channel::depolarize(0.375, 1), direction);
    EXPECT_TRUE(sum == expected);
    EXPECT_EQ(prepare_channel<1>(channel, direction).table_class, TableClass::key_preserving);
  }
  // A two-qubit one: the depolarize2 table written out.
  std::vector<double> table(256, 0.0);
  for (int p = 0; p < 16; ++p) table[static_cast<std::size_t>(p * 16 + p)] = p == 0 ? 1.0 : 0.25;
  const Channel two = Channel::transfer_matrix({2, 0}, table);
  EXPECT_TRUE(two.is_noise());
  auto sum = MakeSum<1, double>(3, testing::random_terms(rng, 3, 12, false));
  auto expected = sum;
  propagate_one(sum, two, Direction::forward);
  propagate_one(expected, Channel::depolarize2(0.703125, 2, 0), Direction::forward);  // 1 − 16p/15 = 1/4
  EXPECT_TRUE(operators_close(dense_operator(sum, 3), dense_operator(expected, 3), 1e-15));
}

// ---------------------------------------------------------------- metadata

TEST(ChannelMetadataTest, AccessorsAndDescriptions) {
  const Channel rz = Channel::rz(0.3, 5);
  EXPECT_EQ(rz.name(), "rz");
  EXPECT_TRUE(rz.is_rotation());
  EXPECT_EQ(rz.pauli(), "Z");
  EXPECT_EQ(rz.theta(), 0.3);
  EXPECT_EQ(rz.span(), 6u);
  EXPECT_EQ(rz.description(), "rz(theta=0.29999999999999999) [5]");
  const Channel rotation = Channel::pauli_rotation("XY", {7, 2}, 1.0);
  EXPECT_EQ(rotation.description(), "pauli_rotation(pauli=XY, theta=1) [7, 2]");
  EXPECT_EQ(rotation.span(), 8u);
  const Channel pauli = Channel::pauli_channel(0.125, 0.25, 0.5, 1);
  EXPECT_EQ(pauli.parameters(), (std::vector<double>{0.125, 0.25, 0.5}));
  EXPECT_EQ(pauli.description(), "pauli_channel(px=0.125, py=0.25, pz=0.5) [1]");
  EXPECT_EQ(Channel::amplitude_damping(0.5, 0).description(), "amplitude_damping(gamma=0.5) [0]");
  EXPECT_EQ(Channel::cnot(4, 1).description(), "cnot [4, 1]");
  EXPECT_EQ(Channel::cnot(4, 1).qubits(), (std::vector<Qubit>{4, 1}));
  EXPECT_TRUE(Channel::depolarize(0.1, 0).is_noise());
  EXPECT_FALSE(Channel::h(0).is_noise());
  std::mt19937_64 rng(5);
  const std::vector<Complex> u = testing::random_unitary(rng, 4);
  EXPECT_EQ(Channel::unitary_2q(0, 1, u).matrix(), u);
  EXPECT_THROW((void)rz.transfer(Direction::forward), std::logic_error);
}

TEST(ChannelMetadataTest, DirectionNames) {
  EXPECT_EQ(parse_direction("forward"), Direction::forward);
  EXPECT_EQ(parse_direction("Heisenberg"), Direction::heisenberg);
  EXPECT_EQ(parse_direction("FORWARD"), Direction::forward);
  EXPECT_EQ(to_string(Direction::forward), "forward");
  EXPECT_EQ(to_string(Direction::heisenberg), "heisenberg");
  EXPECT_INVALID_ARGUMENT(parse_direction("sideways"), "sideways", "forward", "heisenberg");
  EXPECT_INVALID_ARGUMENT(parse_direction(""), "direction");
}

// ---------------------------------------------------------------- bad input

TEST(ChannelValidationTest, NonFiniteAnglesAreRejectedByEveryRotationFactory) {
  const double kBadAngles[] = {std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()};
  for (double theta : kBadAngles) {
    SCOPED_TRACE(theta);
    EXPECT_INVALID_ARGUMENT(Channel::rx(theta, 0), "rx", "theta", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::ry(theta, 0), "ry", "theta", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::rz(theta, 0), "rz", "theta", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::rxx(theta, 0, 1), "rxx", "theta", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::ryy(theta, 0, 1), "ryy", "theta", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::rzz(theta, 0, 1), "rzz", "theta", "not finite");
    EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("XYZ", {0, 1, 2}, theta)), "pauli_rotation", "theta",
                            "not finite");
  }
}

TEST(ChannelValidationTest, ProbabilitiesOutsideTheUnitIntervalAreRejected) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double p : {-0.1, 1.5, -1e-300}) {
    SCOPED_TRACE(p);
    EXPECT_INVALID_ARGUMENT(Channel::depolarize(p, 0), "depolarize", "p =", "outside [0, 1]");
    EXPECT_INVALID_ARGUMENT(Channel::dephase(p, 0), "dephase", "p =", "outside [0, 1]");
    EXPECT_INVALID_ARGUMENT(Channel::depolarize2(p, 0, 1), "depolarize2", "p =", "outside [0, 1]");
    EXPECT_INVALID_ARGUMENT(Channel::amplitude_damping(p, 0), "amplitude_damping", "gamma", "outside [0, 1]");
    EXPECT_INVALID_ARGUMENT(Channel::pauli_channel(p, 0.0, 0.0, 0), "pauli_channel", "px", "outside [0, 1]");
    EXPECT_INVALID_ARGUMENT(Channel::pauli_channel(0.0, p, 0.0, 0), "pauli_channel", "py", "outside [0, 1]");
    EXPECT_INVALID_ARGUMENT(Channel::pauli_channel(0.0, 0.0, p, 0), "pauli_channel", "pz", "outside [0, 1]");
  }
  EXPECT_INVALID_ARGUMENT(Channel::depolarize(-0.1, 0), "-0.1");
  EXPECT_INVALID_ARGUMENT(Channel::amplitude_damping(1.5, 0), "1.5");
  for (double p : {nan, std::numeric_limits<double>::infinity()}) {
    EXPECT_INVALID_ARGUMENT(Channel::depolarize(p, 0), "depolarize", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::dephase(p, 0), "dephase", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::depolarize2(p, 0, 1), "depolarize2", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::amplitude_damping(p, 0), "amplitude_damping", "not finite");
    EXPECT_INVALID_ARGUMENT(Channel::pauli_channel(0.1, p, 0.1, 0), "pauli_channel", "py", "not finite");
  }
  // The end points are allowed.
  EXPECT_NO_THROW(Channel::depolarize(0.0, 0));
  EXPECT_NO_THROW(Channel::depolarize(1.0, 0));
  EXPECT_NO_THROW(Channel::amplitude_damping(1.0, 0));
  EXPECT_NO_THROW(Channel::depolarize2(1.0, 0, 1));
}

TEST(ChannelValidationTest, PauliChannelProbabilitiesMustSumToAtMostOne) {
  EXPECT_INVALID_ARGUMENT(Channel::pauli_channel(0.5, 0.4, 0.2, 0), "pauli_channel", "exceeds 1");
  EXPECT_INVALID_ARGUMENT(Channel::pauli_channel(0.0, 0.6, 0.6, 0), "pauli_channel", "exceeds 1");
  EXPECT_NO_THROW(Channel::pauli_channel(0.25, 0.25, 0.5, 0));
}

TEST(ChannelValidationTest, RepeatedQubitsAreRejected) {
  std::mt19937_64 rng(3);
  const std::vector<Complex> u = testing::random_unitary(rng, 4);
  EXPECT_INVALID_ARGUMENT(Channel::cnot(3, 3), "cnot", "qubit 3", "twice");
  EXPECT_INVALID_ARGUMENT(Channel::cy(2, 2), "cy", "qubit 2");
  EXPECT_INVALID_ARGUMENT(Channel::cz(0, 0), "cz", "qubit 0");
  EXPECT_INVALID_ARGUMENT(Channel::swap(1, 1), "swap", "qubit 1");
  EXPECT_INVALID_ARGUMENT(Channel::iswap(4, 4), "iswap", "qubit 4");
  EXPECT_INVALID_ARGUMENT(Channel::ecr(5, 5), "ecr", "qubit 5");
  EXPECT_INVALID_ARGUMENT(Channel::rxx(0.1, 2, 2), "rxx", "qubit 2");
  EXPECT_INVALID_ARGUMENT(Channel::rzz(0.1, 7, 7), "rzz", "qubit 7");
  EXPECT_INVALID_ARGUMENT(Channel::depolarize2(0.1, 1, 1), "depolarize2", "qubit 1", "twice");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("XYZ", {0, 2, 0}, 0.3)), "pauli_rotation", "qubit 0",
                          "twice");
  EXPECT_INVALID_ARGUMENT(Channel::unitary_2q(2, 2, u), "unitary_2q", "qubit 2", "twice");
  const std::vector<double> identity16 = [] {
    std::vector<double> t(256, 0.0);
    for (int p = 0; p < 16; ++p) t[static_cast<std::size_t>(p * 17)] = 1.0;
    return t;
  }();
  EXPECT_INVALID_ARGUMENT((Channel::transfer_matrix({6, 6}, identity16)), "qubit 6", "twice");
  EXPECT_INVALID_ARGUMENT((Channel::custom("mine", {1, 1}, cnot_map)), "mine", "qubit 1", "twice");
}

TEST(ChannelValidationTest, BadRotationGeneratorsAreRejected) {
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("XIZ", {0, 1, 2}, 0.3)), "pauli_rotation", "'I'");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("XQ", {0, 1}, 0.3)), "pauli_rotation", "'Q'");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("xz", {0, 1}, 0.3)), "pauli_rotation", "'x'");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("XY", {0, 1, 2}, 0.3)), "pauli_rotation", "2 letters",
                          "3 qubits");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("XYZ", {0}, 0.3)), "3 letters", "1 qubits");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("", {}, 0.3)), "pauli_rotation", "empty");
  EXPECT_INVALID_ARGUMENT((Channel::pauli_rotation("", {0}, 0.3)), "pauli_rotation", "empty");
}

TEST(ChannelValidationTest, NonUnitaryMatricesAreRejected) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Complex> not_unitary = {1.0, 0.0, 0.0, 2.0};
  EXPECT_INVALID_ARGUMENT(Channel::unitary_1q(0, not_unitary), "unitary_1q", "not unitary");
  const std::vector<Complex> projector = {1.0, 0.0, 0.0, 0.0};
  EXPECT_INVALID_ARGUMENT(Channel::unitary_1q(0, projector), "unitary_1q", "not unitary");
  const std::vector<Complex> three = {1.0, 0.0, 0.0};
  EXPECT_INVALID_ARGUMENT(Channel::unitary_1q(0, three), "unitary_1q", "got 3 entries");
  const std::vector<Complex> with_nan = {1.0, 0.0, 0.0, Complex(nan, 0.0)};
  EXPECT_INVALID_ARGUMENT(Channel::unitary_1q(0, with_nan), "unitary_1q", "non-finite");
  const std::vector<Complex> with_inf = {1.0, 0.0, 0.0,
                                         Complex(0.0, std::numeric_limits<double>::infinity())};
  EXPECT_INVALID_ARGUMENT(Channel::unitary_1q(0, with_inf), "unitary_1q", "non-finite");

  std::mt19937_64 rng(17);
  std::vector<Complex> u = testing::random_unitary(rng, 4);
  EXPECT_INVALID_ARGUMENT(Channel::unitary_2q(0, 1, std::vector<Complex>(u.begin(), u.begin() + 4)),
                          "unitary_2q", "got 4 entries");
  EXPECT_INVALID_ARGUMENT(Channel::unitary_2q(0, 1, std::vector<Complex>(16, 0.25)), "unitary_2q",
                          "not unitary");
  std::vector<Complex> bad = u;
  bad[5] = Complex(nan, nan);
  EXPECT_INVALID_ARGUMENT(Channel::unitary_2q(0, 1, bad), "unitary_2q", "non-finite");
  // Unitarity is checked to 1e-9: a 1e-7 error is refused, a 1e-12 one accepted.
  bad = u;
  bad[0] += 1e-7;
  EXPECT_INVALID_ARGUMENT(Channel::unitary_2q(0, 1, bad), "not unitary");
  bad = u;
  bad[0] += 1e-12;
  EXPECT_NO_THROW(Channel::unitary_2q(0, 1, bad));
  // A 2×2 matrix for a two-qubit gate is the wrong size.
  EXPECT_INVALID_ARGUMENT(Channel::unitary_2q(0, 1, clifford_matrix(ChannelKind::h)), "unitary_2q",
                          "got 4 entries");
}

TEST(ChannelValidationTest, BadTransferMatricesAreRejected) {
  const std::vector<double> fifteen(15, 0.0);
  EXPECT_INVALID_ARGUMENT((Channel::transfer_matrix({0}, fifteen)), "transfer_matrix", "got 15 entries");
  const std::vector<double> sixteen(16, 0.0);
  EXPECT_INVALID_ARGUMENT((Channel::transfer_matrix({0, 1}, sixteen)), "transfer_matrix", "got 16 entries");
  const std::vector<double> big(64 * 64, 0.0);
  EXPECT_INVALID_ARGUMENT((Channel::transfer_matrix({0, 1, 2}, big)), "transfer_matrix", "1 or 2 qubits",
                          "got 3");
  EXPECT_INVALID_ARGUMENT((Channel::transfer_matrix({}, sixteen)), "1 or 2 qubits", "got 0");
  std::vector<double> with_nan(16, 0.0);
  with_nan[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_INVALID_ARGUMENT((Channel::transfer_matrix({0}, with_nan, "nanny")), "nanny", "not finite");
}

TEST(ChannelValidationTest, BadCustomMapsAreRejected) {
  EXPECT_INVALID_ARGUMENT((Channel::custom("wide", {0, 1, 2}, hadamard_map)), "wide", "1 or 2 qubits",
                          "got 3");
  EXPECT_INVALID_ARGUMENT((Channel::custom("none", {}, hadamard_map)), "none", "1 or 2 qubits");
  EXPECT_INVALID_ARGUMENT((Channel::custom("empty", {0}, LocalPauliMap{})), "empty", "no map");
  const LocalPauliMap bad_letter =
      [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    if (label == "Z") return {{"Q", 1.0}};
    return {{std::string(label), 1.0}};
  };
  EXPECT_INVALID_ARGUMENT((Channel::custom("letters", {0}, bad_letter)), "letters", "'Q'");
  const LocalPauliMap too_long = [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    return {{std::string(label) + "I", 1.0}};
  };
  EXPECT_INVALID_ARGUMENT((Channel::custom("long", {3}, too_long)), "long", "length 2", "expected 1");
  EXPECT_INVALID_ARGUMENT((Channel::custom("short", {3, 4}, hadamard_map)), "short", "length 1",
                          "expected 2");
  const LocalPauliMap lower_case = [](std::string_view) -> std::vector<std::pair<std::string, Complex>> {
    return {{"x", 1.0}};
  };
  EXPECT_INVALID_ARGUMENT((Channel::custom("lower", {0}, lower_case)), "lower", "'x'");
  const LocalPauliMap infinite = [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    return {{std::string(label), std::numeric_limits<double>::infinity()}};
  };
  EXPECT_INVALID_ARGUMENT((Channel::custom("inf", {0}, infinite)), "inf", "non-finite");
  // A bad adjoint map is rejected as well.
  EXPECT_INVALID_ARGUMENT((Channel::custom("adj", {0}, hadamard_map, bad_letter)), "adj", "'Q'");
}

TEST(ChannelValidationTest, RealSumMeetingComplexChannelNamesTheGate) {
  const LocalPauliMap map = [](std::string_view label) -> std::vector<std::pair<std::string, Complex>> {
    return {{std::string(label), label == "Z" ? kI : Complex(1.0)}};
  };
  Circuit circuit(3);
  circuit.append(Channel::h(0)).append(Channel::custom("phase_z", {2}, map));
  auto sum = MakeSum<1, double>(3, {{"ZZZ", 1.0}});
  EXPECT_INVALID_ARGUMENT(propagate(sum, circuit), "gate 1", "phase_z", "complex");
}

// ---- measurement and reset

/// The local table of a channel on ≤ 2 qubits as (input label → {output label: amplitude}).
std::map<std::string, std::map<std::string, double>> table_of(const Channel& channel, Direction direction) {
  const TransferMatrix& t = channel.transfer(direction);
  const int k = t.dim == 4 ? 1 : 2;
  auto label = [k](int pattern) {
    std::string out;
    for (int j = 0; j < k; ++j) out += "IXZY"[(pattern >> (2 * j)) & 3];
    return out;
  };
  std::map<std::string, std::map<std::string, double>> out;
  for (int in = 0; in < t.dim; ++in) {
    out[label(in)];
    for (int o = 0; o < t.dim; ++o) {
      if (t(o, in) != Complex(0.0)) out[label(in)][label(o)] = t(o, in).real();
    }
  }
  return out;
}

TEST(MeasureResetChannelTest, MeasureZKeepsIAndZAndRemovesXAndY) {
  const Channel m = Channel::measure(3);
  EXPECT_EQ(m.name(), "measure");
  EXPECT_EQ(m.pauli(), "Z");
  EXPECT_TRUE(m.is_measurement());
  EXPECT_TRUE(m.is_noise());
  EXPECT_FALSE(m.uses_rotation_form());
  EXPECT_EQ(m.description(), "measure [3]");
  for (const Direction d : {Direction::forward, Direction::heisenberg}) {
    const auto table = table_of(m, d);
    EXPECT_EQ(table.at("I"), (std::map<std::string, double>{{"I", 1.0}}));
    EXPECT_EQ(table.at("Z"), (std::map<std::string, double>{{"Z", 1.0}}));
    EXPECT_TRUE(table.at("X").empty());
    EXPECT_TRUE(table.at("Y").empty());
    const PreparedChannel<1> prepared = prepare_channel<1>(m, d);
    EXPECT_EQ(prepared.table_class, TableClass::key_preserving);
  }
  // measure_pauli("Z", {q}) is the same channel under the same name.
  EXPECT_EQ(Channel::measure_pauli("Z", {3}).name(), "measure");
}

TEST(MeasureResetChannelTest, TwoQubitProductKeepsTheCommutingPatterns) {
  const Channel m = Channel::measure_pauli("XZ", {0, 2});
  EXPECT_EQ(m.name(), "measure_pauli");
  EXPECT_EQ(m.description(), "measure_pauli(pauli=XZ) [0, 2]");
  const auto table = table_of(m, Direction::heisenberg);
  int kept = 0;
  for (const auto& [in, outs] : table) {
    // Commutes with X⊗Z when the number of anticommuting positions is even.
    const int anti = (in[0] == 'Y' || in[0] == 'Z') + (in[1] == 'X' || in[1] == 'Y');
    if (anti % 2 == 0) {
      EXPECT_EQ(outs, (std::map<std::string, double>{{in, 1.0}})) << in;
      ++kept;
    } else {
      EXPECT_TRUE(outs.empty()) << in;
    }
  }
  EXPECT_EQ(kept, 8);
  EXPECT_EQ(table_of(m, Direction::forward), table);
}

TEST(MeasureResetChannelTest, HighWeightProductUsesTheRotationFormWithNoBranch) {
  const Channel m = Channel::measure_pauli("XYZX", {4, 1, 7, 2});
  EXPECT_TRUE(m.uses_rotation_form());
  EXPECT_FALSE(m.is_rotation());
  EXPECT_THROW(m.transfer(Direction::forward), std::logic_error);
  for (const Direction d : {Direction::forward, Direction::heisenberg}) {
    const PreparedChannel<1> t = prepare_channel<1>(m, d);
    EXPECT_EQ(t.form, PreparedChannel<1>::Form::rotation);
    EXPECT_EQ(t.table_class, TableClass::key_preserving);
    EXPECT_EQ(t.cos_theta, 0.0);
    EXPECT_EQ(t.sin_signed, 0.0);
    EXPECT_EQ(t.max_fanout, 1);
    int outputs = 0;
    t.for_each_output(PauliString<1>::from_label("X2 Z4", 8), [&](auto&&...) { ++outputs; });
    EXPECT_EQ(outputs, 0);  // X on 2 commutes with X there, Z on 4 anticommutes with X: removed
    outputs = 0;
    t.for_each_output(PauliString<1>::from_label("Y1 Z2 X4 Y7", 8), [&](auto&&...) { ++outputs; });
    EXPECT_EQ(outputs, 1);  // Y on 1 and X on 4 commute, Z on 2 and Y on 7 do not: an even count, kept
  }
}

TEST(MeasureResetChannelTest, ResetTablesInBothDirections) {
  for (const char basis : {'X', 'Y', 'Z'}) {
    const Channel r = Channel::reset(5, basis);
    const std::string b(1, basis);
    EXPECT_TRUE(r.is_reset());
    EXPECT_TRUE(r.is_noise());
    EXPECT_EQ(r.pauli(), b);
    EXPECT_EQ(r.name(), basis == 'Z' ? "reset" : basis == 'X' ? "reset_x" : "reset_y");
    // Forward: I → I + B, the rest → 0.
    const auto forward = table_of(r, Direction::forward);
    EXPECT_EQ(forward.at("I"), (std::map<std::string, double>{{"I", 1.0}, {b, 1.0}}));
    // Heisenberg: I → I, B → I, the rest → 0.
    const auto heisenberg = table_of(r, Direction::heisenberg);
    EXPECT_EQ(heisenberg.at("I"), (std::map<std::string, double>{{"I", 1.0}}));
    EXPECT_EQ(heisenberg.at(b), (std::map<std::string, double>{{"I", 1.0}}));
    for (const char other : std::string("XYZ")) {
      if (other == basis) continue;
      EXPECT_TRUE(forward.at(std::string(1, other)).empty());
      EXPECT_TRUE(heisenberg.at(std::string(1, other)).empty());
    }
    EXPECT_EQ(prepare_channel<1>(r, Direction::forward).table_class, TableClass::general);
    EXPECT_EQ(prepare_channel<1>(r, Direction::heisenberg).table_class, TableClass::general);
  }
  EXPECT_EQ(Channel::reset(0).description(), "reset [0]");
}

TEST(MeasureResetChannelTest, AgreeWithTheOracleOnEveryBasisString) {
  const std::vector<Channel> channels = {Channel::measure(1),
                                         Channel::measure_pauli("YX", {2, 0}),
                                         Channel::measure_pauli("ZZZ", {0, 1, 2}),
                                         Channel::measure_pauli("XYZ", {2, 0, 1}),
                                         Channel::reset(0),
                                         Channel::reset(2, 'X'),
                                         Channel::reset(1, 'Y')};
  for (const Channel& channel : channels) {
    Circuit circuit(3);
    circuit.append(channel);
    for (int p = 0; p < 64; ++p) {
      std::string label;
      for (int j = 0; j < 3; ++j) label += "IXZY"[(p >> (2 * j)) & 3];
      for (const Direction d : {Direction::forward, Direction::heisenberg}) {
        auto sum = MakeSum<1, double>(3, {{label, 1.0}});
        PropagateOptions options;
        options.direction = d;
        options.engine = Engine::reference;
        propagate(sum, circuit, options);
        const dense::Matrix expected = apply_circuit_dense(dense::pauli_matrix(label), circuit, d, 3);
        EXPECT_TRUE(testing::operators_close(testing::dense_operator(sum, 3), expected, 1e-14))
            << channel.description() << " on " << label << " " << to_string(d);
      }
    }
  }
}

TEST(MeasureResetChannelTest, NoAdjointAndValidatedInput) {
  EXPECT_INVALID_ARGUMENT(Channel::measure(0).adjoint(), "measurement", "no adjoint");
  EXPECT_INVALID_ARGUMENT(Channel::reset(0).adjoint(), "reset", "no adjoint");
  Circuit circuit(2);
  circuit.append(Channel::h(0)).append(Channel::measure(1));
  EXPECT_INVALID_ARGUMENT(circuit.adjoint(), "gate 1", "is a measurement");
  EXPECT_INVALID_ARGUMENT(Channel::measure_pauli("", {}), "empty");
  EXPECT_INVALID_ARGUMENT(Channel::measure_pauli("XQ", {0, 1}), "'Q'");
  EXPECT_INVALID_ARGUMENT(Channel::measure_pauli("XZ", {0}), "2 letters", "1 qubits");
  EXPECT_INVALID_ARGUMENT(Channel::measure_pauli("XZZ", {0, 1, 0}), "qubit 0 is used twice");
  EXPECT_INVALID_ARGUMENT(Channel::reset(0, 'Q'), "basis 'Q'");
}

TEST(ChannelTablesTest, CliffordsOfOneKindShareTheirTables) {
  // A file of a million CNOTs holds one 16×16 table, not a million.
  const Channel a = Channel::cnot(0, 1), b = Channel::cnot(7, 3);
  EXPECT_EQ(&a.transfer(Direction::forward), &b.transfer(Direction::forward));
  EXPECT_EQ(&a.transfer(Direction::heisenberg), &b.transfer(Direction::heisenberg));
  EXPECT_NE(&Channel::h(0).transfer(Direction::forward), &Channel::s(0).transfer(Direction::forward));
}

TEST(ChannelTablesTest, QuarterTurnHalvesHaveEqualCosineAndSine) {
  // cos(π/4) and sin(π/4) differ by one ulp in double; the table makes them equal so that branches
  // cancelling in exact arithmetic (the Toffoli's decomposition) cancel exactly.
  for (const double theta : {kPi / 4, -kPi / 4, 3 * kPi / 4, -3 * kPi / 4}) {
    const PreparedChannel<1> t = prepare_channel<1>(Channel::rz(theta, 0), Direction::heisenberg);
    EXPECT_EQ(std::abs(t.cos_theta), std::abs(t.sin_signed)) << theta;
    EXPECT_EQ(std::abs(t.cos_theta), std::numbers::sqrt2 / 2);
    EXPECT_EQ(std::signbit(t.cos_theta), std::cos(theta) < 0);
  }
  const PreparedChannel<1> other = prepare_channel<1>(Channel::rz(0.3, 0), Direction::heisenberg);
  EXPECT_EQ(other.cos_theta, std::cos(0.3));
}

}  // namespace
}  // namespace paulistrings
