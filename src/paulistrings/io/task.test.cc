// Tests of the task JSON reader and writer: a literal schema-v1 file with every v1 gate (gate by gate and
// against the dense oracle), v1's noise broadcast, every extension, defaults, exact round trips of random
// circuits and tasks, and a table of malformed tasks with the located messages they give.

#include "paulistrings/io/task.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/stim.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::io {
namespace {

namespace dense = testing::dense;

/// Passes when `action` throws io::ParseError whose message contains every needle.
::testing::AssertionResult ThrowsParseError(const std::function<void()>& action,
                                            const std::vector<std::string>& needles) {
  try {
    action();
  } catch (const ParseError& e) {
    const std::string message = e.what();
    for (const std::string& needle : needles) {
      if (message.find(needle) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << needle << "\"";
      }
    }
    if (message.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "message spans several lines: " << message;
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// A task around a gate list, with the given observable/truncation/run members.
std::string WrapGates(const std::string& gates, std::size_t num_qubits = 5,
                      const std::string& run = R"({"direction": "forward"})") {
  return R"({"version": 1, "n_qubits": )" + std::to_string(num_qubits) + R"(, "circuit": {"gates": )" +
         gates + R"(}, "run": )" + run + "}";
}

// Valid 3-qubit tasks — {"version": 1, "n_qubits": 3, "circuit": {"gates": G}, "run": {"direction":
// "forward"}} — around one gate, with more top-level members, or with another run object.
std::string OneGateTask(const std::string& gate) { return WrapGates("[" + gate + "]", 3); }
std::string TaskWithMembers(const std::string& members) {
  return R"({"version": 1, "n_qubits": 3, "circuit": {"gates": []}, "run": {"direction": "forward"}, )" +
         members + "}";
}
std::string TaskWithRun(const std::string& run) { return WrapGates("[]", 3, run); }

/// Same gate, field by field (doubles bit for bit).
void ExpectSameChannel(const Channel& actual, const Channel& expected, std::size_t index) {
  SCOPED_TRACE("gate " + std::to_string(index) + ": " + expected.description());
  EXPECT_EQ(actual.kind(), expected.kind());
  EXPECT_EQ(actual.name(), expected.name());
  EXPECT_EQ(actual.qubits(), expected.qubits());
  EXPECT_EQ(actual.pauli(), expected.pauli());
  EXPECT_EQ(std::bit_cast<std::uint64_t>(actual.theta()), std::bit_cast<std::uint64_t>(expected.theta()));
  ASSERT_EQ(actual.parameters().size(), expected.parameters().size());
  for (std::size_t k = 0; k < actual.parameters().size(); ++k) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(actual.parameters()[k]),
              std::bit_cast<std::uint64_t>(expected.parameters()[k]));
  }
  EXPECT_EQ(actual.matrix(), expected.matrix());
}

void ExpectSameCircuit(const Circuit& actual, const Circuit& expected) {
  ASSERT_EQ(actual.num_qubits(), expected.num_qubits());
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) ExpectSameChannel(actual[i], expected[i], i);
  EXPECT_EQ(actual.fingerprint(), expected.fingerprint());
}

/// What the schema spells rxx / ryy / rzz: v1's pauli_rotation with the same letters (same map).
Circuit AsWritten(const Circuit& circuit) {
  Circuit out(circuit.num_qubits());
  for (const Channel& c : circuit) {
    const bool two_axis = c.name() == "rxx" || c.name() == "ryy" || c.name() == "rzz";
    out.append(two_axis ? Channel::pauli_rotation(c.pauli(), c.qubits(), c.theta()) : c);
  }
  return out;
}

dense::Matrix RandomDenseOperator(std::mt19937_64& rng, std::size_t num_qubits) {
  return dense::operator_from_pauli_terms(static_cast<int>(num_qubits),
                                          testing::random_terms(rng, num_qubits, 12, true));
}

/// A literal v1 task using every word of v1's gate table.
constexpr const char* kV1Task = R"({
  "version": 1,
  "n_qubits": 4,
  "circuit": {"gates": [
    {"name": "h", "qubits": [0]},
    {"name": "s", "qubits": [1]},
    {"name": "sdg", "qubits": [2]},
    {"name": "x", "qubits": [3]},
    {"name": "y", "qubits": [0]},
    {"name": "z", "qubits": [1]},
    {"name": "cnot", "qubits": [2, 0]},
    {"name": "cz", "qubits": [1, 3]},
    {"name": "swap", "qubits": [3, 0]},
    {"name": "rz", "qubits": [2], "theta": 0.3},
    {"name": "rx", "qubits": [1], "theta": -1.25},
    {"name": "ry", "qubits": [0], "theta": 2},
    {"name": "pauli_rotation", "pauli": "XZY", "qubits": [3, 1, 0], "theta": 0.7},
    {"name": "depolarize", "qubits": [1], "p": 0.01},
    {"name": "dephase", "qubits": [2], "p": 0.02},
    {"name": "amplitude_damping", "qubits": [3], "gamma": 0.05},
    {"name": "pauli_channel", "qubits": [0], "px": 0.01, "py": 0.02, "pz": 0.03},
    {"name": "depolarize2", "qubits": [2, 3], "p": 0.04},
    {"name": "unitary_1q", "qubits": [1], "matrix": [[[0.6, 0], [0, 0.8]], [[0, 0.8], [0.6, 0]]]},
    {"name": "unitary_2q", "qubits": [0, 3], "matrix": [
      [[1, 0], [0, 0], [0, 0], [0, 0]],
      [[0, 0], [0, 1], [0, 0], [0, 0]],
      [[0, 0], [0, 0], [0, 0], [1, 0]],
      [[0, 0], [0, 0], [-1, 0], [0, 0]]]}
  ]},
  "observable": {"ZZII": 1.0, "IXYI": [0.5, -0.25], "IIIZ": -2},
  "truncation": {"max_weight": 3, "min_abs_coeff": 1e-6},
  "run": {"direction": "heisenberg", "threads": 4, "state": "0+r1"}
})";

std::vector<Complex> V1Unitary1q() {
  return {Complex(0.6, 0), Complex(0, 0.8), Complex(0, 0.8), Complex(0.6, 0)};
}
std::vector<Complex> V1Unitary2q() { return {1, 0, 0, 0, 0, Complex(0, 1), 0, 0, 0, 0, 0, 1, 0, 0, -1, 0}; }

TEST(TaskJson, V1FileWithEveryGateMatchesTheFactories) {
  const Task task = parse_task(kV1Task, "v1.json");
  Circuit expected(4);
  expected.append(Channel::h(0)).append(Channel::s(1)).append(Channel::sdg(2)).append(Channel::x(3));
  expected.append(Channel::y(0)).append(Channel::z(1)).append(Channel::cnot(2, 0)).append(Channel::cz(1, 3));
  expected.append(Channel::swap(3, 0)).append(Channel::rz(0.3, 2)).append(Channel::rx(-1.25, 1));
  expected.append(Channel::ry(2.0, 0)).append(Channel::pauli_rotation("XZY", {3, 1, 0}, 0.7));
  expected.append(Channel::depolarize(0.01, 1)).append(Channel::dephase(0.02, 2));
  expected.append(Channel::amplitude_damping(0.05, 3)).append(Channel::pauli_channel(0.01, 0.02, 0.03, 0));
  expected.append(Channel::depolarize2(0.04, 2, 3)).append(Channel::unitary_1q(1, V1Unitary1q()));
  expected.append(Channel::unitary_2q(0, 3, V1Unitary2q()));
  ExpectSameCircuit(task.circuit, expected);

  EXPECT_EQ(task.version, 1);
  EXPECT_EQ(task.num_qubits, 4u);
  ASSERT_EQ(task.observables.size(), 1u);
  EXPECT_EQ(task.observables[0].name, "observable");
  const ObservableTerms expected_terms = {{"ZZII", 1.0}, {"IXYI", Complex(0.5, -0.25)}, {"IIIZ", -2.0}};
  EXPECT_EQ(task.observables[0].terms, expected_terms);
  EXPECT_EQ(task.truncation.max_weight, 3u);
  EXPECT_EQ(task.truncation.min_abs_coeff, 1e-6);
  EXPECT_FALSE(task.truncation.top_n);
  EXPECT_FALSE(task.truncation.approx_top_n);
  EXPECT_EQ(task.truncation.policy().description(), "(weight(3) & coeff(9.9999999999999995e-07))");
  EXPECT_EQ(task.direction, Direction::heisenberg);
  EXPECT_EQ(task.threads, 4);
  EXPECT_EQ(task.state, "0+r1");
  EXPECT_EQ(task.device, "cpu");
  const AnyPauliSum observable = make_observable(task.observables[0].terms, task.num_qubits);
  EXPECT_EQ(observable.coefficient("IIIZ"), Complex(-2.0));
  EXPECT_EQ(observable.coefficient("IXYI"), Complex(0.5, -0.25));
}

TEST(TaskJson, V1FileMeansTheSameAsTheDenseOracleReadingOfIt) {
  // The oracle walks what the file says with its own gate matrices and Kraus operators.
  using Step = std::function<dense::Matrix(const dense::Matrix&, bool)>;
  auto unitary = [](dense::Matrix local, std::vector<int> qubits) -> Step {
    return [=](const dense::Matrix& op, bool heisenberg) {
      return dense::apply_unitary(op, dense::embed(local, qubits, 4), heisenberg);
    };
  };
  auto noise = [](std::string name, std::vector<double> params, std::vector<int> qubits) -> Step {
    return [=](const dense::Matrix& op, bool heisenberg) {
      std::vector<dense::Matrix> full;
      for (const dense::Matrix& k : dense::kraus_operators(name, params))
        full.push_back(dense::embed(k, qubits, 4));
      return dense::apply_kraus(op, full, heisenberg);
    };
  };
  auto named = [&](const char* name, std::vector<int> qubits, std::vector<double> params = {}) {
    return unitary(dense::gate_matrix(name, params), std::move(qubits));
  };
  const Complex i(0, 1);
  const std::vector<Step> steps = {
      named("h", {0}),
      named("s", {1}),
      named("sdg", {2}),
      named("x", {3}),
      named("y", {0}),
      named("z", {1}),
      named("cnot", {2, 0}),
      named("cz", {1, 3}),
      named("swap", {3, 0}),
      named("rz", {2}, {0.3}),
      named("rx", {1}, {-1.25}),
      named("ry", {0}, {2.0}),
      unitary(dense::pauli_rotation_matrix("XZY", 0.7), {3, 1, 0}),
      noise("depolarize", {0.01}, {1}),
      noise("dephase", {0.02}, {2}),
      noise("amplitude_damping", {0.05}, {3}),
      noise("pauli_channel", {0.01, 0.02, 0.03}, {0}),
      noise("depolarize2", {0.04}, {2, 3}),
      unitary(dense::Matrix{{0.6, 0.8 * i}, {0.8 * i, 0.6}}, {1}),
      unitary(dense::Matrix{{1, 0, 0, 0}, {0, i, 0, 0}, {0, 0, 0, 1}, {0, 0, -1, 0}}, {0, 3}),
  };
  const Task task = parse_task(kV1Task);
  ASSERT_EQ(task.circuit.size(), steps.size());
  std::mt19937_64 rng(11);
  const dense::Matrix op = RandomDenseOperator(rng, 4);
  dense::Matrix forward = op, heisenberg = op;
  for (const Step& step : steps) forward = step(forward, false);
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) heisenberg = (*it)(heisenberg, true);
  EXPECT_TRUE(testing::operators_close(testing::apply_circuit_dense(op, task.circuit, Direction::forward, 4),
                                       forward, 1e-11));
  EXPECT_TRUE(testing::operators_close(
      testing::apply_circuit_dense(op, task.circuit, Direction::heisenberg, 4), heisenberg, 1e-11));
}

TEST(TaskJson, V1NoiseGatesBroadcastOverTheirQubits) {
  // v1 hands "qubits" to the original's broadcasting noise methods: one channel per listed qubit.
  const Task task = parse_task(WrapGates(R"([
      {"name": "depolarize", "qubits": [0, 2, 1], "p": 0.1},
      {"name": "dephase", "qubits": [4, 3], "p": 0.2},
      {"name": "amplitude_damping", "qubits": [1, 1], "gamma": 0.3},
      {"name": "pauli_channel", "qubits": [2, 0], "px": 0.1, "py": 0.0, "pz": 0.2},
      {"name": "depolarize", "qubits": [], "p": 0.5}])"));
  Circuit expected(5);
  expected.append(Channel::depolarize(0.1, 0))
      .append(Channel::depolarize(0.1, 2))
      .append(Channel::depolarize(0.1, 1));
  expected.append(Channel::dephase(0.2, 4)).append(Channel::dephase(0.2, 3));
  expected.append(Channel::amplitude_damping(0.3, 1)).append(Channel::amplitude_damping(0.3, 1));
  expected.append(Channel::pauli_channel(0.1, 0.0, 0.2, 2)).append(Channel::pauli_channel(0.1, 0.0, 0.2, 0));
  ExpectSameCircuit(task.circuit, expected);
}

TEST(TaskJson, ExtensionGatesMatchFactoriesAndOracle) {
  const Task task = parse_task(WrapGates(R"([
      {"name": "sx", "qubits": [0]},
      {"name": "sxdg", "qubits": [1]},
      {"name": "cy", "qubits": [2, 0]},
      {"name": "iswap", "qubits": [1, 2]},
      {"name": "iswapdg", "qubits": [0, 1]},
      {"name": "ecr", "qubits": [2, 1]},
      {"name": "rxx", "qubits": [0, 2], "theta": 0.4},
      {"name": "ryy", "qubits": [1, 0], "theta": -0.9},
      {"name": "rzz", "qubits": [2, 1], "theta": 1.3}])",
                                         3));
  Circuit expected(3);
  expected.append(Channel::sx(0))
      .append(Channel::sxdg(1))
      .append(Channel::cy(2, 0))
      .append(Channel::iswap(1, 2));
  expected.append(Channel::iswapdg(0, 1)).append(Channel::ecr(2, 1)).append(Channel::rxx(0.4, 0, 2));
  expected.append(Channel::ryy(-0.9, 1, 0)).append(Channel::rzz(1.3, 2, 1));
  ExpectSameCircuit(task.circuit, expected);

  std::mt19937_64 rng(5);
  const dense::Matrix op = RandomDenseOperator(rng, 3);
  dense::Matrix want = op;
  auto apply = [&](const dense::Matrix& local, std::vector<int> qubits) {
    want = dense::apply_unitary(want, dense::embed(local, qubits, 3), false);
  };
  apply(dense::gate_matrix("sx"), {0});
  apply(dense::gate_matrix("sxdg"), {1});
  apply(dense::gate_matrix("cy"), {2, 0});
  apply(dense::gate_matrix("iswap"), {1, 2});
  apply(dense::adjoint(dense::gate_matrix("iswap")), {0, 1});
  apply(dense::gate_matrix("ecr"), {2, 1});
  const std::vector<double> a = {0.4}, b = {-0.9}, c = {1.3};
  apply(dense::gate_matrix("rxx", a), {0, 2});
  apply(dense::gate_matrix("ryy", b), {1, 0});
  apply(dense::gate_matrix("rzz", c), {2, 1});
  EXPECT_TRUE(testing::operators_close(testing::apply_circuit_dense(op, task.circuit, Direction::forward, 3),
                                       want, 1e-12));
}

TEST(TaskJson, DefaultsOfOptionalFields) {
  const Task task = parse_task(WrapGates("[]", 3));
  EXPECT_EQ(task.version, 1);
  EXPECT_EQ(task.num_qubits, 3u);
  EXPECT_EQ(task.circuit.num_qubits(), 3u);
  EXPECT_TRUE(task.circuit.empty());
  EXPECT_TRUE(task.observables.empty());
  EXPECT_FALSE(task.truncation.max_weight || task.truncation.min_abs_coeff || task.truncation.top_n ||
               task.truncation.approx_top_n);
  EXPECT_TRUE(task.truncation.policy().is_none());
  EXPECT_EQ(task.direction, Direction::forward);
  EXPECT_EQ(task.threads, 1);
  EXPECT_EQ(task.state, "z+");
  EXPECT_EQ(task.device, "cpu");
}

TEST(TaskJson, RunExtensionsThreadsDeviceAndStateForms) {
  auto run = [](const std::string& run_json) { return parse_task(WrapGates("[]", 4, run_json)); };
  EXPECT_EQ(run(R"({"direction": "forward", "threads": 0})").threads, 0);
  EXPECT_EQ(run(R"({"direction": "forward", "device": "gpu"})").device, "gpu");
  EXPECT_EQ(run(R"({"direction": "forward", "device": "auto"})").device, "auto");
  EXPECT_EQ(run(R"({"direction": "forward", "device": "cpu"})").device, "cpu");
  EXPECT_EQ(run(R"({"direction": "forward", "device": 3})").device, "3");
  EXPECT_EQ(run(R"({"direction": "forward"})").partitions, 1u);
  EXPECT_EQ(run(R"({"direction": "forward", "partitions": 4})").partitions, 4u);
  EXPECT_EQ(run(R"({"direction": "forward"})").partition_rows, TaskPartitionRows{});
  EXPECT_FALSE(run(R"({"direction": "forward"})").nccl);
  EXPECT_TRUE(run(R"({"direction": "forward", "nccl": true})").nccl);
  EXPECT_FALSE(run(R"({"direction": "forward"})").route_orbits_from.has_value());
  EXPECT_EQ(run(R"({"direction": "forward", "route_orbits_from": 0})").route_orbits_from, 0u);
  EXPECT_EQ(run(R"({"direction": "forward", "route_orbits_from": 100000})").route_orbits_from, 100000u);
  const TaskPartitionRows cut =
      run(R"({"direction": "forward", "partition_rows": {"policy": "cut", "blocks": [[0, 1], [2, 3]], "basis": "x"}})")
          .partition_rows;
  EXPECT_EQ(cut.policy, "cut");
  EXPECT_EQ(cut.blocks, (std::vector<std::vector<std::size_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(cut.basis, 'x');
  const TaskPartitionRows excluding =
      run(R"({"direction": "forward", "partition_rows": {"policy": "seeded_excluding", "seed": 9, "excluded_qubits": [3]}})")
          .partition_rows;
  EXPECT_EQ(excluding.policy, "seeded_excluding");
  EXPECT_EQ(excluding.seed, std::optional<std::uint64_t>(9));
  EXPECT_EQ(excluding.excluded_qubits, std::vector<std::size_t>{3});
  EXPECT_EQ(run(R"({"direction": "forward", "state": "X+"})").state, "X+");
  EXPECT_EQ(run(R"({"direction": "forward", "state": "y+"})").state, "y+");
  EXPECT_EQ(run(R"({"direction": "forward", "state": "01-l"})").state, "01-l");
  EXPECT_EQ(run(R"({"direction": "heisenberg", "state": ["r", "+", "1", "0"]})").state, "r+10");
  EXPECT_EQ(run(R"({"direction": "heisenberg"})").direction, Direction::heisenberg);
}

TEST(TaskJson, RunEngineIsCpuOrColumnAndRoundTrips) {
  auto run = [](const std::string& run_json) { return parse_task(WrapGates("[]", 4, run_json)); };
  EXPECT_EQ(run(R"({"direction": "forward"})").engine, "cpu");
  EXPECT_EQ(run(R"({"direction": "forward", "engine": "cpu"})").engine, "cpu");
  const Task column = run(R"({"direction": "forward", "engine": "column"})");
  EXPECT_EQ(column.engine, "column");
  EXPECT_EQ(parse_task(task_to_json(column)).engine, "column");
  EXPECT_EQ(task_to_json(run(R"({"direction": "forward"})")).find("engine"), std::string::npos);
  for (const char* bad : {R"("gpu")", "1", R"("Column")"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
        [&] { run(std::string(R"({"direction": "forward", "engine": )") + bad + "}"); },
        {"run.engine", "expected \"cpu\" or \"column\""}));
  }
  Task unwritable = column;
  unwritable.engine = "sorted";
  EXPECT_TRUE(
      testing::ThrowsInvalidArgumentMentioning([&] { task_to_json(unwritable); }, {"engine", "sorted"}));
}

TEST(TaskJson, TruncationExtensionsCombineInOrder) {
  auto policy = [](const std::string& truncation) {
    const std::string text = R"({"version": 1, "n_qubits": 2, "circuit": {"gates": []}, "truncation": )" +
                             truncation + R"(, "run": {"direction": "forward"}})";
    return parse_task(text).truncation;
  };
  const TaskTruncation all =
      policy(R"({"approx_top_n": 20, "top_n": 10, "min_abs_coeff": 0.5, "max_weight": 3})");
  EXPECT_EQ(all.max_weight, 3u);
  EXPECT_EQ(all.min_abs_coeff, 0.5);
  EXPECT_EQ(all.top_n, 10u);
  EXPECT_EQ(all.approx_top_n, 20u);
  EXPECT_EQ(all.policy().description(), "(((weight(3) & coeff(0.5)) & topn(10)) & approx_topn(20))");
  EXPECT_EQ(policy(R"({"top_n": 7})").policy().description(), "topn(7)");
  EXPECT_EQ(policy(R"({"min_abs_coeff": 0})").policy().description(), "coeff(0)");
  EXPECT_EQ(policy(R"({"approx_top_n": 4, "max_weight": 0})").policy().description(),
            "(weight(0) & approx_topn(4))");
  EXPECT_TRUE(policy("{}").policy().is_none());
}

TEST(TaskJson, NamedObservablesSparseLabelsAndComplexCoefficients) {
  const Task task = parse_task(R"({"version": 1, "n_qubits": 70, "circuit": {"gates": []},
      "observables": {"zz": {"Z0 Z69": 1.5}, "mixed": {"X3, Y64": [0, 2], "Z5": -1}},
      "observable": {"Z62": 0.25},
      "run": {"direction": "forward"}})");
  ASSERT_EQ(task.observables.size(), 3u);
  EXPECT_EQ(task.observables[0].name,
            "observable");  // v1's observable first, whatever the key order
  EXPECT_EQ(task.observables[1].name, "zz");
  EXPECT_EQ(task.observables[2].name, "mixed");
  EXPECT_EQ(task.observables[0].terms, (ObservableTerms{{"Z62", 0.25}}));
  EXPECT_EQ(task.observables[2].terms, (ObservableTerms{{"X3, Y64", Complex(0, 2)}, {"Z5", -1.0}}));
  const AnyPauliSum mixed = make_observable(task.observables[2].terms, 70);
  EXPECT_TRUE(mixed.is_complex());
  std::string label(70, 'I');
  label[3] = 'X';
  label[64] = 'Y';
  EXPECT_EQ(mixed.coefficient(label), Complex(0, 2));

  // Only named observables: file order, no "observable".
  const Task named = parse_task(R"({"version": 1, "n_qubits": 2, "circuit": {"gates": []},
      "observables": {"b": {"ZI": 1}, "a": {"IZ": 1}, "observable": {"XX": 1}},
      "run": {"direction": "forward"}})");
  ASSERT_EQ(named.observables.size(), 3u);
  EXPECT_EQ(named.observables[0].name, "b");
  EXPECT_EQ(named.observables[1].name, "a");
  EXPECT_EQ(named.observables[2].name, "observable");
}

TEST(TaskJson, GatesToJsonSpellsEveryKindInTheV1Vocabulary) {
  Circuit circuit(4);
  circuit.append(Channel::rz(0.25, 2))
      .append(Channel::rxx(0.5, 0, 1))
      .append(Channel::pauli_rotation("Y", {3}, 1.0));
  circuit.append(Channel::cnot(3, 1))
      .append(Channel::depolarize(0.125, 0))
      .append(Channel::pauli_channel(0.5, 0.25, 0, 1));
  circuit.append(Channel::amplitude_damping(0.75, 2)).append(Channel::unitary_1q(0, V1Unitary1q()));
  EXPECT_EQ(gates_to_json(circuit),
            "[\n"
            R"(  {"name":"rz","qubits":[2],"theta":0.25},)"
            "\n"
            R"(  {"name":"pauli_rotation","pauli":"XX","qubits":[0,1],"theta":0.5},)"
            "\n"
            R"(  {"name":"pauli_rotation","pauli":"Y","qubits":[3],"theta":1.0},)"
            "\n"
            R"(  {"name":"cnot","qubits":[3,1]},)"
            "\n"
            R"(  {"name":"depolarize","qubits":[0],"p":0.125},)"
            "\n"
            R"(  {"name":"pauli_channel","qubits":[1],"px":0.5,"py":0.25,"pz":0.0},)"
            "\n"
            R"(  {"name":"amplitude_damping","qubits":[2],"gamma":0.75},)"
            "\n"
            R"(  {"name":"unitary_1q","qubits":[0],"matrix":[[[0.6,0.0],[0.0,0.8]],[[0.0,0.8],[0.6,0.0]]]})"
            "\n"
            "]");
  EXPECT_EQ(gates_to_json(Circuit(3)), "[]");
}

TEST(TaskJson, GatesToJsonRoundTripsRandomCircuitsExactly) {
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Circuit circuit = testing::random_circuit(rng, 4, 40);
    circuit.append(Channel::iswapdg(1, 3)).append(Channel::pauli_rotation("Z", {2}, -0.5));
    const std::string gates = gates_to_json(circuit);
    const Task task = parse_task(WrapGates(gates, 4), "roundtrip.json");
    ExpectSameCircuit(task.circuit, AsWritten(circuit));
    EXPECT_EQ(gates_to_json(task.circuit), gates);
    // Same map, gate for gate, on the oracle (a few seeds: the oracle is slow under sanitizers).
    if (seed >= 4) continue;
    const dense::Matrix op = RandomDenseOperator(rng, 4);
    EXPECT_TRUE(
        testing::operators_close(testing::apply_circuit_dense(op, task.circuit, Direction::heisenberg, 4),
                                 testing::apply_circuit_dense(op, circuit, Direction::heisenberg, 4), 1e-12));
  }
}

TEST(TaskJson, MeasureAndResetGatesReadAndWriteBack) {
  const Task task = parse_task(WrapGates(R"([
    {"name": "h", "qubits": [0]},
    {"name": "measure", "qubits": [0, 1]},
    {"name": "measure_pauli", "pauli": "XYZ", "qubits": [4, 2, 0]},
    {"name": "reset", "qubits": [3]},
    {"name": "reset_x", "qubits": [1]},
    {"name": "reset_y", "qubits": [2]}
  ])"));
  ASSERT_EQ(task.circuit.size(), 7u);
  EXPECT_EQ(task.circuit[1].description(), "measure [0]");
  EXPECT_EQ(task.circuit[2].description(), "measure [1]");
  EXPECT_EQ(task.circuit[3].description(), "measure_pauli(pauli=XYZ) [4, 2, 0]");
  EXPECT_TRUE(task.circuit[4].is_reset());
  EXPECT_EQ(task.circuit[5].pauli(), "X");
  EXPECT_EQ(task.circuit[6].pauli(), "Y");
  const Task back = parse_task(WrapGates(gates_to_json(task.circuit)));
  ExpectSameCircuit(back.circuit, task.circuit);
  EXPECT_EQ(back.circuit.fingerprint(), task.circuit.fingerprint());
  EXPECT_THROW(parse_task(WrapGates(R"([{"name": "measure_pauli", "pauli": "XQ", "qubits": [0, 1]}])")),
               ParseError);
  EXPECT_THROW(parse_task(WrapGates(R"([{"name": "measure_pauli", "pauli": "XX", "qubits": [0]}])")),
               ParseError);
}

TEST(TaskJson, DoublesRoundTripBitForBit) {
  std::mt19937_64 rng(99);
  std::vector<double> values = {0.1,
                                -0.0,
                                1.0 / 3.0,
                                std::numbers::pi,
                                5e-324,
                                2.2250738585072014e-308,
                                1e-300,
                                1e300,
                                -1e-7,
                                std::nextafter(1.0, 2.0),
                                std::numeric_limits<double>::max()};
  while (values.size() < 400) {
    const double v = std::bit_cast<double>(rng());
    if (std::isfinite(v)) values.push_back(v);
  }
  Circuit circuit(2);
  for (double v : values) circuit.append(Channel::rz(v, 0));
  const Task task = parse_task(WrapGates(gates_to_json(circuit), 2));
  ASSERT_EQ(task.circuit.size(), values.size());
  for (std::size_t k = 0; k < values.size(); ++k) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(task.circuit[k].theta()), std::bit_cast<std::uint64_t>(values[k]))
        << values[k];
  }
  // Coefficients and thresholds go through task_to_json the same way.
  Task t;
  t.num_qubits = 2;
  t.circuit = Circuit(2);
  for (std::size_t k = 0; k + 1 < 40; k += 2) {
    std::string name(1, 'o');  // not "o" + …: GCC 12 -O3 warns falsely (-Wrestrict) on that
    name += std::to_string(k);
    t.observables.push_back({name, {{"ZI", Complex(values[k], values[k + 1])}}});
  }
  t.truncation.min_abs_coeff = 0.1 + 0.2;
  const Task back = parse_task(task_to_json(t));
  ASSERT_EQ(back.observables.size(), t.observables.size());
  for (std::size_t k = 0; k < t.observables.size(); ++k) {
    const Complex a = back.observables[k].terms.at(0).second, b = t.observables[k].terms.at(0).second;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.real()), std::bit_cast<std::uint64_t>(b.real()));
    // -0.0 as an imaginary part is written as a real coefficient and reads back as +0.0.
    EXPECT_EQ(a.imag(), b.imag());
  }
  EXPECT_EQ(back.truncation.min_abs_coeff, 0.1 + 0.2);
}

/// A random task using every feature; labels within one observable are distinct.
Task RandomTask(std::mt19937_64& rng) {
  const std::size_t n = 3 + rng() % 5;
  Task t;
  t.num_qubits = n;
  t.circuit = AsWritten(testing::random_circuit(rng, n, 25));
  auto terms = [&](bool complex_values, bool sparse) {
    ObservableTerms out;
    for (const auto& term : testing::random_terms(rng, n, 4, complex_values)) {
      if (std::none_of(out.begin(), out.end(), [&](const auto& o) { return o.first == term.first; })) {
        out.push_back(term);
      }
    }
    return sparse ? testing::shift_terms(out, 0) : out;
  };
  if (rng() % 2) t.observables.push_back({"observable", terms(rng() % 2, false)});
  for (int k = 0, count = static_cast<int>(rng() % 3); k < count; ++k) {
    t.observables.push_back({"obs" + std::to_string(k), terms(true, k % 2 == 0)});
  }
  if (rng() % 2) t.truncation.max_weight = rng() % 5;
  if (rng() % 2) t.truncation.min_abs_coeff = std::ldexp(static_cast<double>(rng() % 1000), -20);
  if (rng() % 2) t.truncation.top_n = 1 + rng() % 1000;
  if (rng() % 2) t.truncation.approx_top_n = 1 + rng() % 1000;
  t.direction = rng() % 2 ? Direction::forward : Direction::heisenberg;
  t.threads = static_cast<int>(rng() % 9);
  const char* devices[] = {"cpu", "gpu", "auto", "0", "7"};
  t.device = devices[rng() % 5];
  t.state = rng() % 2 ? testing::random_product_label(rng, n) : std::string("x+");
  return t;
}

void ExpectSameTask(const Task& actual, const Task& expected) {
  EXPECT_EQ(actual.version, expected.version);
  EXPECT_EQ(actual.num_qubits, expected.num_qubits);
  ExpectSameCircuit(actual.circuit, expected.circuit);
  ASSERT_EQ(actual.observables.size(), expected.observables.size());
  for (std::size_t k = 0; k < actual.observables.size(); ++k) {
    EXPECT_EQ(actual.observables[k].name, expected.observables[k].name);
    EXPECT_EQ(actual.observables[k].terms, expected.observables[k].terms);
  }
  EXPECT_EQ(actual.truncation.max_weight, expected.truncation.max_weight);
  EXPECT_EQ(actual.truncation.min_abs_coeff, expected.truncation.min_abs_coeff);
  EXPECT_EQ(actual.truncation.top_n, expected.truncation.top_n);
  EXPECT_EQ(actual.truncation.approx_top_n, expected.truncation.approx_top_n);
  EXPECT_EQ(actual.truncation.policy().description(), expected.truncation.policy().description());
  EXPECT_EQ(actual.direction, expected.direction);
  EXPECT_EQ(actual.threads, expected.threads);
  EXPECT_EQ(actual.device, expected.device);
  EXPECT_EQ(actual.state, expected.state);
  EXPECT_EQ(actual.gradient, expected.gradient);
}

TEST(TaskJson, TaskToJsonRoundTripsRandomTasks) {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const Task task = RandomTask(rng);
    const std::string text = task_to_json(task);
    const Task back = parse_task(text, "written.json");
    ExpectSameTask(back, task);
    EXPECT_EQ(task_to_json(back), text);
  }
  // The literal v1 file too.
  const Task v1 = parse_task(kV1Task);
  ExpectSameTask(parse_task(task_to_json(v1)), v1);
}

TEST(TaskJson, TaskToJsonWritesPlainV1WhenNoExtensionIsUsed) {
  const Task v1 = parse_task(kV1Task);
  const std::string text = task_to_json(v1);
  for (const char* extension : {"observables", "device", "top_n", "approx_top_n", "stim_file"}) {
    EXPECT_EQ(text.find(extension), std::string::npos) << extension << " in\n" << text;
  }
  EXPECT_NE(text.find(R"("observable": {"ZZII":1.0,"IXYI":[0.5,-0.25],"IIIZ":-2.0})"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("truncation": {"max_weight":3,"min_abs_coeff":1e-06})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("run": {"direction":"heisenberg","threads":4,"state":"0+r1"})"), std::string::npos)
      << text;
  EXPECT_EQ(text.rfind("{\n  \"version\": 1,\n  \"n_qubits\": 4,\n  \"circuit\": {\"gates\": [\n", 0), 0u)
      << text;

  Task gpu = v1;
  gpu.device = "2";
  EXPECT_NE(task_to_json(gpu).find(R"("device":2)"), std::string::npos);
  EXPECT_EQ(text.find("partitions"), std::string::npos);
  Task partitioned = v1;
  partitioned.partitions = 8;
  EXPECT_NE(task_to_json(partitioned).find(R"("partitions":8)"), std::string::npos);
  EXPECT_EQ(parse_task(task_to_json(partitioned)).partitions, 8u);
  // Partition rows and NCCL round-trip; the defaults are not written.
  EXPECT_EQ(text.find("partition_rows"), std::string::npos);
  EXPECT_EQ(text.find("nccl"), std::string::npos);
  EXPECT_EQ(text.find("route_orbits_from"), std::string::npos);
  for (const TaskPartitionRows& rows :
       {TaskPartitionRows{"seeded", 5, {}, {}, 'z'}, TaskPartitionRows{"seeded_excluding", {}, {1, 2}, {}, 'z'},
        TaskPartitionRows{"cut", {}, {}, {{0}, {1, 2, 3}}, 'x'}}) {
    Task with_rows = partitioned;
    with_rows.partition_rows = rows;
    with_rows.nccl = true;
    with_rows.route_orbits_from = 4096;
    const Task back = parse_task(task_to_json(with_rows));
    EXPECT_EQ(back.partition_rows, rows) << task_to_json(with_rows);
    EXPECT_TRUE(back.nccl);
    EXPECT_EQ(back.route_orbits_from, 4096u);
  }
}

TEST(TaskJson, WritersRejectWhatTheSchemaCannotHold) {
  Circuit raw(2);
  const std::vector<double> identity = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  raw.append(Channel::h(0)).append(Channel::transfer_matrix({1}, identity, "my_map"));
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { gates_to_json(raw); }, {"gate 1", "my_map"}));
  Circuit custom(2);
  custom.append(Channel::custom("flip", {0}, [](std::string_view label) {
    return std::vector<std::pair<std::string, Complex>>{{std::string(label), 1.0}};
  }));
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { gates_to_json(custom); }, {"gate 0", "flip"}));

  Task t;
  t.num_qubits = 2;
  t.circuit = Circuit(2);
  t.observables = {{"a", {{"ZI", 1.0}, {"ZI", 2.0}}}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { task_to_json(t); }, {"\"ZI\"", "twice"}));
  t.observables = {{"a", {{"ZI", 1.0}}}, {"observable", {{"IZ", 1.0}}}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { task_to_json(t); }, {"\"observable\""}));
  t.observables = {{"a", {{"ZI", 1.0}}}, {"a", {{"IZ", 1.0}}}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { task_to_json(t); }, {"\"a\""}));
  t.observables.clear();
  t.device = "tpu";
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { task_to_json(t); }, {"device", "tpu"}));
  t.device = "cpu";
  t.circuit = Circuit(3);
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { task_to_json(t); }, {"3 qubits"}));
}

TEST(TaskJson, SyntaxErrorsAreLocatedByLineAndColumn) {
  struct Case {
    std::string text;
    std::size_t line, column;
  };
  const std::vector<Case> cases = {
      {"{\n  \"version\": 1,\n  \"n_qubits\": 3,,\n}", 3, 17},  // the second comma
      {"{\"version\": 1", 1, 14},                               // end of input after the 1
      {"{\"version\": tru}", 1, 16},                            // the literal breaks at '}'
      {"", 1, 1},
      // nlohmann reports the last character it read: the end of an unexpected token.
      {"{\n\t\"a\": 1\n\t\"b\": 2}", 3, 4},   // missing comma: the string "b" ends at column 4
      {"{\"n_qubits\": 3} trailing", 1, 19},  // "tra" is where the literal stops making sense
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_task(c.text, "bad.json");
      ADD_FAILURE() << "no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "bad.json");
      EXPECT_EQ(e.line(), c.line);
      EXPECT_EQ(e.column(), c.column);
      const std::string prefix =
          "bad.json:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": invalid JSON: ";
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos) << e.what();
    }
  }
}

TEST(TaskJson, MalformedTasksNameTheFieldAndWhatWasExpected) {
  const auto gates = OneGateTask;
  const auto top = TaskWithMembers;
  const auto run = TaskWithRun;
  auto circuit = [](const std::string& c) {
    return R"({"version": 1, "n_qubits": 3, "circuit": )" + c + R"(, "run": {"direction": "forward"}})";
  };
  struct Case {
    std::string text;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      // JSON syntax and shape.
      {R"({"version": 1, "n_qubits": 3)", {"t.json:1:", "invalid JSON"}},
      {"[1, 2]", {"t.json: (top level): expected a JSON object", "got an array"}},
      {R"({"version": 1, "version": 1})", {"version: duplicate key \"version\""}},
      // Required fields.
      {R"({"n_qubits": 3, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"t.json: version: missing required field", "the integer 1"}},
      {R"({"version": 1, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"n_qubits: missing required field", "positive integer"}},
      {R"({"version": 1, "n_qubits": 3, "run": {"direction": "forward"}})",
       {"circuit: missing required field", "\"gates\""}},
      {R"({"version": 1, "n_qubits": 3, "circuit": {"gates": []}})", {"run: missing required field"}},
      {run("{}"), {"run.direction: missing required field", "\"forward\" or \"heisenberg\""}},
      {R"({"version": 1, "n_qubits": 3, "circuit": {}, "run": {"direction": "forward"}})",
       {"circuit.gates: missing required field", "list of gate objects"}},
      {gates(R"({"qubits": [0]})"), {"circuit.gates[0].name: missing required field", "gate name"}},
      {gates(R"({"name": "h"})"),
       {"circuit.gates[0].qubits: missing required field", "list of qubit indices"}},
      {gates(R"({"name": "h", "qubits": [0]}, {"name": "rz", "qubits": [0]})"),
       {"circuit.gates[1].theta: missing required field", "finite number for gate \"rz\""}},
      {gates(R"({"name": "pauli_channel", "qubits": [0], "px": 0.1, "py": 0.1})"),
       {"circuit.gates[0].pz: missing required field"}},
      {gates(R"({"name": "unitary_1q", "qubits": [0]})"),
       {"circuit.gates[0].matrix: missing required field"}},
      // Unknown keys at each level.
      {top(R"("partitions": 4)"),
       {"partitions: unknown key \"partitions\" for the task", "expected one of: version"}},
      {circuit(R"({"gates": [], "layers": []})"), {"circuit.layers: unknown key", "gates, stim_file"}},
      {run(R"({"direction": "forward", "seed": 4})"),
       {"run.seed: unknown key", "direction, threads, state, device"}},
      {top(R"("truncation": {"max_weight": 2, "top_k": 3})"),
       {"truncation.top_k: unknown key", "max_weight, min_abs_coeff, top_n, approx_top_n"}},
      {gates(R"({"name": "h", "qubits": [0], "theta": 0.1})"),
       {"circuit.gates[0].theta: unknown key \"theta\" for gate \"h\" (expected one of: name, qubits)"}},
      {gates(R"({"name": "toffoli", "qubits": [0, 1, 2]})"),
       {"circuit.gates[0].name: unknown gate \"toffoli\"", "h, s, sdg"}},
      // Wrong types and values.
      {R"({"version": 2, "n_qubits": 3, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"version: unsupported schema version 2 (expected 1)"}},
      {R"({"version": "1", "n_qubits": 3, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"version: expected the integer 1, got the string \"1\""}},
      {R"({"version": 1.0, "n_qubits": 3, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"version: expected the integer 1, got the number 1.0"}},
      {WrapGates("[]", 0), {"n_qubits: expected a positive integer", "got the integer 0"}},
      {R"({"version": 1, "n_qubits": 3.0, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"n_qubits: expected a positive integer", "got the number 3.0"}},
      {R"({"version": 1, "n_qubits": true, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"n_qubits: expected a positive integer", "got the boolean true"}},
      {WrapGates("[]", 5000), {"n_qubits: expected a positive integer qubit count (1 to 1024)"}},
      {R"({"version": 1, "n_qubits": -2, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"n_qubits: expected a positive integer", "got the integer -2"}},
      {R"({"version": 1, "n_qubits": 3, "circuit": {"gates": {}}, "run": {"direction": "forward"}})",
       {"circuit.gates: expected a list of gate objects, got an object"}},
      {R"({"version": 1, "n_qubits": 3, "circuit": [], "run": {"direction": "forward"}})",
       {"circuit: expected an object"}},
      {gates("3"), {"circuit.gates[0]: expected a gate object", "got the integer 3"}},
      {gates(R"({"name": "rz", "qubits": [0], "theta": "0.5"})"),
       {"circuit.gates[0].theta: expected a finite number, got the string \"0.5\""}},
      {gates(R"({"name": "rx", "qubits": [0], "theta": true})"),
       {"circuit.gates[0].theta: expected a finite number, got the boolean true"}},
      {gates(R"({"name": "rx", "qubits": [0], "theta": 1e999})"),
       {"circuit.gates[0].theta: number overflow", "1e999", "expected a finite number"}},
      {gates(R"({"name": 5, "qubits": [0]})"),
       {"circuit.gates[0].name: expected a gate name, got the integer 5"}},
      {circuit(R"({"gates": [], "stim_file": "a.stim"})"),
       {"circuit: expected exactly one of \"gates\", \"stim_file\" and \"qasm_file\""}},
      {circuit(R"({"gates": [], "params": {"t": 1}})"),
       {"circuit.params: parameters belong to a \"qasm_file\""}},
      {run(R"({"direction": "forward", "ignore_measure": 1})"),
       {"run.ignore_measure: expected true or false"}},
      {R"({"version": 1, "n_qubits": 3, "circuit": {"stim_file": 3}, "run": {"direction": "forward"}})",
       {"circuit.stim_file: expected a path to a .stim file", "got the integer 3"}},
      {run(R"({"direction": "backward"})"),
       {"run.direction: expected \"forward\" or \"heisenberg\", got the string \"backward\""}},
      {run(R"({"direction": "Forward"})"), {"run.direction: expected \"forward\" or \"heisenberg\""}},
      {run(R"({"direction": "forward", "threads": -1})"),
       {"run.threads: expected a non-negative integer", "-1"}},
      {run(R"({"direction": "forward", "threads": 2.5})"),
       {"run.threads: expected a non-negative integer", "2.5"}},
      {run(R"({"direction": "forward", "state": "z-"})"), {"run.state: state 'z-'", "per-qubit label"}},
      {run(R"({"direction": "forward", "state": 0})"),
       {"run.state: expected a state name", "got the integer 0"}},
      {run(R"({"direction": "forward", "state": ["0", "x", "1"]})"),
       {"run.state[1]: expected one of \"0\", \"1\", \"+\", \"-\", \"r\", \"l\", got the string \"x\""}},
      {run(R"({"direction": "forward", "state": ["0", "1"]})"), {"run.state: state '01'", "3-character"}},
      {run(R"({"direction": "forward", "device": "tpu"})"),
       {"run.device: expected \"cpu\", \"gpu\", \"auto\" or a device index"}},
      {run(R"({"direction": "forward", "device": -1})"), {"run.device: expected", "got the integer -1"}},
      {run(R"({"direction": "forward", "partitions": 3})"),
       {"run.partitions: expected a power of two", "got the integer 3"}},
      {run(R"({"direction": "forward", "partitions": 0})"), {"run.partitions: expected a power of two"}},
      {run(R"({"direction": "forward", "partitions": "2"})"), {"run.partitions: expected"}},
      {run(R"({"direction": "forward", "nccl": 1})"), {"run.nccl: expected true or false"}},
      {run(R"({"direction": "forward", "route_orbits_from": -1})"),
       {"run.route_orbits_from: expected a non-negative term count"}},
      {run(R"({"direction": "forward", "route_orbits_from": "never"})"), {"run.route_orbits_from: expected"}},
      {run(R"({"direction": "forward", "partition_rows": "cut"})"), {"run.partition_rows: expected an object"}},
      {run(R"({"direction": "forward", "partition_rows": {"seed": 3}})"),
       {"run.partition_rows.policy: missing required field"}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "diagonal"}})"),
       {"run.partition_rows.policy: expected \"seeded\"", "\"diagonal\""}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "cut", "seed": 3, "blocks": [[0]]}})"),
       {"run.partition_rows.seed: only a seeded or seeded_excluding policy"}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "cut"}})"),
       {"run.partition_rows.blocks: missing required field"}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "cut", "blocks": [[0], [1, -1]]}})"),
       {"run.partition_rows.blocks[1][1]: expected a qubit index"}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "cut", "blocks": [[0]], "basis": "y"}})"),
       {"run.partition_rows.basis: expected \"z\" or \"x\""}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "seeded", "excluded_qubits": [1]}})"),
       {"run.partition_rows.excluded_qubits: only a seeded_excluding policy"}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "seeded", "colour": 1}})"),
       {"unknown key \"colour\""}},
      {R"({"version": 1, "n_qubits": 3, "circuit": {"gates": []}, "run": "forward"})",
       {"run: expected an object"}},
      // Labels and coefficients.
      {top(R"("observable": {"ZQI": 1})"), {"observable.ZQI: invalid Pauli label", "'Q'"}},
      {top(R"("observable": {"ZZ": 1})"),
       {"observable.ZZ: invalid Pauli label", "2 characters for 3 qubits"}},
      {top(R"("observable": {"Z7": 1})"), {"observable.Z7: invalid Pauli label", "out of range"}},
      {top(R"("observable": {"ZZI": "1"})"),
       {"observable.ZZI: expected a coefficient: a number or [re, im]"}},
      {top(R"("observable": {"ZZI": [1, 2, 3]})"),
       {"observable.ZZI: expected a coefficient", "got an array"}},
      {top(R"("observable": {"ZZI": [1, "x"]})"), {"observable.ZZI[1]: expected a finite number"}},
      {top(R"("observable": {"ZZI": 1e999})"),
       {"observable.ZZI: number overflow", "expected a finite number"}},
      {top(R"("observable": ["ZZI"])"), {"observable: expected an object"}},
      {top(R"("observable": {"ZII": 1}, "observables": {"observable": {"IZI": 1}})"),
       {"observables.observable: the name \"observable\" is already taken"}},
      {top(R"("observables": {"zz": {"ZZII": 1}})"), {"observables.zz.ZZII: invalid Pauli label"}},
      {top(R"("observables": {"a": {"ZII": 1}, "a": {"IZI": 1}})"), {"observables.a: duplicate key \"a\""}},
      {top(R"("observables": {"a": {"ZII": 1, "ZII": 2}})"), {"observables.a.ZII: duplicate key"}},
      // Qubits.
      {gates(R"({"name": "cnot", "qubits": [0]})"),
       {"circuit.gates[0].qubits: gate \"cnot\" expects 2 qubits [control, target], got 1"}},
      {gates(R"({"name": "rz", "qubits": [0, 1], "theta": 1})"),
       {"circuit.gates[0].qubits: gate \"rz\" expects 1 qubit"}},
      {gates(R"({"name": "depolarize2", "qubits": [0, 1, 2], "p": 0.1})"),
       {"gate \"depolarize2\" expects 2 qubits"}},
      {gates(R"({"name": "pauli_rotation", "pauli": "XY", "qubits": [0], "theta": 1})"),
       {"circuit.gates[0].qubits: gate \"pauli_rotation\" expects 2 qubits (one per letter"}},
      {gates(R"({"name": "pauli_rotation", "pauli": "XI", "qubits": [0, 1], "theta": 1})"),
       {"circuit.gates[0].pauli: pauli \"XI\" has 'I' at position 1 (expected only X, Y, Z)"}},
      {gates(R"({"name": "h", "qubits": [0]}, {"name": "h", "qubits": [3]})"),
       {"circuit.gates[1].qubits[0]: qubit 3 is out of range (expected 0 to 2 for n_qubits = 3)"}},
      {gates(R"({"name": "depolarize", "qubits": [0, 5], "p": 0.1})"),
       {"circuit.gates[0].qubits[1]: qubit 5 is out of range"}},
      {gates(R"({"name": "h", "qubits": [-1]})"),
       {"circuit.gates[0].qubits[0]: expected a qubit index", "-1"}},
      {gates(R"({"name": "h", "qubits": [1.0]})"),
       {"circuit.gates[0].qubits[0]: expected a qubit index", "1.0"}},
      {gates(R"({"name": "h", "qubits": 0})"), {"circuit.gates[0].qubits: expected a list of qubit indices"}},
      {gates(R"({"name": "cnot", "qubits": [1, 1]})"), {"circuit.gates[0]: cnot: qubit 1 is used twice"}},
      // Matrices.
      {gates(R"({"name": "unitary_1q", "qubits": [0], "matrix": [[[1, 0], [0, 0]]]})"),
       {"circuit.gates[0].matrix: expected a 2x2 matrix", "got 1 rows"}},
      {gates(R"({"name": "unitary_1q", "qubits": [0], "matrix": [[[1, 0], [0, 0]], [[0, 0]]]})"),
       {"circuit.gates[0].matrix[1]: expected a row of 2 [re, im] entries, got 1 entries"}},
      {gates(R"({"name": "unitary_1q", "qubits": [0], "matrix": [[1, 0], [0, 1]]})"),
       {"circuit.gates[0].matrix[0][0]: expected an entry [re, im], got the integer 1"}},
      {gates(R"({"name": "unitary_1q", "qubits": [0], "matrix": [[[1, 0], [1, 0]], [[0, 0], [1, 0]]]})"),
       {"circuit.gates[0]: unitary_1q: matrix is not unitary"}},
      {gates(R"({"name": "unitary_2q", "qubits": [0, 1], "matrix": [[[1, 0], [0, 0]], [[0, 0], [1, 0]]]})"),
       {"circuit.gates[0].matrix: expected a 4x4 matrix"}},
      // Noise parameters.
      {gates(R"({"name": "depolarize", "qubits": [0], "p": -0.1})"),
       {"circuit.gates[0]: depolarize: p = -0.1", "[0, 1]"}},
      {gates(R"({"name": "amplitude_damping", "qubits": [0], "gamma": 1.5})"),
       {"circuit.gates[0]: amplitude_damping: gamma = 1.5 is outside [0, 1]"}},
      {gates(R"({"name": "pauli_channel", "qubits": [0], "px": 0.5, "py": 0.5, "pz": 0.5})"),
       {"circuit.gates[0]: pauli_channel: px + py + pz = 1.5 exceeds 1"}},
      // Truncation.
      {top(R"("truncation": {"min_abs_coeff": -1})"),
       {"truncation.min_abs_coeff: expected a non-negative number"}},
      {top(R"("truncation": {"max_weight": 2.5})"),
       {"truncation.max_weight: expected a non-negative integer"}},
      {top(R"("truncation": {"top_n": 0})"),
       {"truncation.top_n: expected a positive integer term count, got 0"}},
      {top(R"("truncation": {"approx_top_n": "5"})"),
       {"truncation.approx_top_n: expected a positive integer"}},
      {top(R"("truncation": 3)"), {"truncation: expected an object"}},
  };
  EXPECT_GE(cases.size(), 40u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_TRUE(ThrowsParseError([&] { parse_task(c.text, "t.json"); }, c.needles));
  }
}

// Counts, indices and sizes are JSON integers, read exactly: a float is refused (with the integer to write
// when it is whole, never rounded or cut to a prefix), and so are negative, overflowing and non-finite ones.
TEST(TaskJson, CountsAreIntegersNeverRoundedOrWrapped) {
  const auto gates = OneGateTask;
  const auto top = TaskWithMembers;
  const auto run = TaskWithRun;
  struct Case {
    std::string text;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {top(R"("truncation": {"top_n": 1e6})"),
       {"truncation.top_n: expected a positive integer term count, got the number 1000000.0",
        "(write it as the integer 1000000)"}},
      {top(R"("truncation": {"approx_top_n": 2.5e3})"), {"write it as the integer 2500"}},
      {top(R"("truncation": {"top_n": 1.5})"), {"truncation.top_n: expected", "got the number 1.5"}},
      {top(R"("truncation": {"top_n": -3})"), {"truncation.top_n: expected", "got the integer -3"}},
      {top(R"("truncation": {"top_n": 18446744073709551616})"),
       {"truncation.top_n: expected a positive integer term count", "got the number 1.8446744073709552e+19"}},
      {top(R"("truncation": {"max_weight": 1e400})"), {"truncation.max_weight: number overflow"}},
      {top(R"("truncation": {"max_weight": NaN})"), {"invalid JSON"}},
      {top(R"("truncation": {"max_weight": Infinity})"), {"invalid JSON"}},
      {R"({"version": 1, "n_qubits": 1e1, "circuit": {"gates": []}, "run": {"direction": "forward"}})",
       {"n_qubits: expected a positive integer", "write it as the integer 10"}},
      {run(R"({"direction": "forward", "threads": 4294967297})"),
       {"run.threads: expected a non-negative integer thread count", "got the integer 4294967297"}},
      {run(R"({"direction": "forward", "threads": 4e0})"),
       {"run.threads: expected", "write it as the integer 4"}},
      {run(R"({"direction": "forward", "device": 2147483648})"), {"run.device: expected"}},
      {run(R"({"direction": "forward", "device": 1.0})"), {"run.device: expected", "got the number 1.0"}},
      {run(R"({"direction": "forward", "device": "1"})"), {"run.device: expected", "got the string \"1\""}},
      {run(R"({"direction": "forward", "partitions": 2e0})"),
       {"run.partitions: expected", "got the number 2.0"}},
      {run(R"({"direction": "forward", "route_orbits_from": 1e4})"), {"write it as the integer 10000"}},
      {run(R"({"direction": "forward", "partition_rows": {"policy": "seeded", "seed": -1}})"),
       {"run.partition_rows.seed: expected a seed", "got the integer -1"}},
      {gates(R"({"name": "h", "qubits": [1e0]})"),
       {"circuit.gates[0].qubits[0]: expected a qubit index", "write it as the integer 1"}},
      {gates(R"({"name": "h", "qubits": [18446744073709551615]})"), {"circuit.gates[0].qubits[0]"}},
      {gates(R"({"name": "h", "qubits": [0.5]})"), {"circuit.gates[0].qubits[0]: expected a qubit index"}},
      {top(R"("observable": {"X99999999999999999999": 1})"),
       {"qubit 99999999999999999999 is out of range for 3 qubits"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_TRUE(ThrowsParseError([&] { parse_task(c.text, "t.json"); }, c.needles));
  }
  // No hint for what no integer spells.
  try {
    parse_task(top(R"("truncation": {"top_n": 1.5})"));
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).find("write it as"), std::string::npos) << e.what();
  }
}

TEST(TaskJson, HostileDocumentsFailCleanly) {
  // Deep nesting is refused while parsing, before anything recursive sees it.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(ThrowsParseError([&] { parse_task(deep); }, {"nests deeper than 64 levels"}));
  const std::string deep_in_field = R"({"version": 1, "observable": )" + std::string(70, '[');
  EXPECT_TRUE(ThrowsParseError([&] { parse_task(deep_in_field); }, {"observable", "nests deeper"}));
  // Control characters and long keys never break the one-line message.
  const std::string key = "bad\\nkey" + std::string(500, 'k');
  EXPECT_TRUE(ThrowsParseError([&] { parse_task(R"({"version": 1, ")" + key + R"(": 1})"); },
                               {"unknown key \"bad\\x0akey", "..."}));
  // Invalid UTF-8 inside a string is a located syntax error.
  EXPECT_TRUE(ThrowsParseError([&] { parse_task("{\"version\": \"\xff\"}", "u.json"); },
                               {"u.json:1:", "invalid JSON"}));
}

/// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("paulistrings_task_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

TEST(TaskJson, StimFileCircuitsResolveAgainstTheTaskFile) {
  const TempDir dir("stim");
  const std::string stim_text =
      "H 0\nCX 0 1\nDEPOLARIZE1(0.01) 2\nOBSERVABLE_INCLUDE(0) Z0 Z1\nOBSERVABLE_INCLUDE(1) X3\n";
  WriteText(dir.path() / "sub" / "c.stim", stim_text);
  const StimProgram direct = read_stim(stim_text, "c.stim", 5);
  ASSERT_FALSE(direct.observable.empty());

  auto task_with = [](const std::string& members) {
    return R"({"version": 1, "n_qubits": 5, "circuit": {"stim_file": "sub/c.stim"}, )" + members +
           R"("run": {"direction": "heisenberg"}})";
  };
  // The stim observable becomes "observable", ahead of the named ones.
  WriteText(dir.path() / "task.json", task_with(R"("observables": {"x": {"X4": 1}}, )"));
  const Task task = load_task(dir.path() / "task.json");
  Circuit expected(5);
  expected.append(Channel::h(0)).append(Channel::cnot(0, 1)).append(Channel::depolarize(0.01, 2));
  ExpectSameCircuit(task.circuit, expected);
  ASSERT_EQ(task.observables.size(), 2u);
  EXPECT_EQ(task.observables[0].name, "observable");
  EXPECT_EQ(task.observables[0].terms, direct.observable);
  EXPECT_EQ(task.observables[1].name, "x");

  // A task's own observable wins over the stim file's.
  WriteText(dir.path() / "own.json", task_with(R"("observable": {"ZIIII": 2}, )"));
  const Task own = load_task(dir.path() / "own.json");
  ASSERT_EQ(own.observables.size(), 1u);
  EXPECT_EQ(own.observables[0].terms, (ObservableTerms{{"ZIIII", 2.0}}));

  // The stim reader's located errors pass through unchanged; a missing file names the field.
  WriteText(dir.path() / "sub" / "c.stim", "H 0\nM X1\n");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "own.json"); }, {"c.stim:2:"}));
  WriteText(dir.path() / "sub" / "c.stim", "H 7\n");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "own.json"); }, {"c.stim:1:", "7"}));
  std::filesystem::remove(dir.path() / "sub" / "c.stim");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "own.json"); },
                               {"own.json: circuit.stim_file:", "c.stim"}));
  // Only a regular file is read: a directory, or a device that never ends (/dev/zero would be read until
  // memory runs out), is refused before reading.
  std::filesystem::create_directories(dir.path() / "sub" / "c.stim");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "own.json"); },
                               {"own.json: circuit.stim_file:", "c.stim is not a regular file"}));
  if (std::filesystem::exists("/dev/zero")) {
    const std::string zero =
        R"({"version": 1, "n_qubits": 5, "circuit": {"stim_file": "/dev/zero"}, "run": {"direction": "heisenberg"}})";
    EXPECT_TRUE(ThrowsParseError([&] { parse_task(zero, "z.json"); },
                                 {"z.json: circuit.stim_file: /dev/zero is not a regular file"}));
  }
}

TEST(TaskJson, LoadTaskNamesTheFileAndResolvesNothingElse) {
  const TempDir temp("load");
  const std::filesystem::path& dir = temp.path();
  const std::filesystem::path good = dir / "good.json";
  WriteText(good, kV1Task);
  const Task task = load_task(good);
  ExpectSameCircuit(task.circuit, parse_task(kV1Task).circuit);

  const std::filesystem::path bad = dir / "bad.json";
  WriteText(bad,
            "{\n  \"version\": 1,\n  \"n_qubits\": 3,\n  \"circuit\": {\"gates\": []},\n  \"run\": "
            "{\"direction\": \"sideways\"}\n}\n");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(bad); }, {bad.string() + ": run.direction: expected"}));
  WriteText(bad, "{\n  \"version\": 1,\n  oops\n}");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(bad); }, {bad.string() + ":3:3: invalid JSON"}));
  EXPECT_THROW(load_task(dir / "missing.json"), std::runtime_error);
}

TEST(TaskJson, QasmFileCircuitsWithParametersRegistersAndIgnoreMeasure) {
  const TempDir dir("qasm");
  WriteText(dir.path() / "c.qasm",
            "OPENQASM 3;\ninclude \"stdgates.inc\";\ninput float[64] t;\nqubit[2] a;\nqubit[1] b;\n"
            "rz(t) b[0];\nmeasure a[1];\nreset a[0];\n");
  WriteText(dir.path() / "t.json", R"({"version": 1, "n_qubits": 4,
    "circuit": {"qasm_file": "c.qasm", "params": {"t": 0.25}},
    "observable": {"Zb[0] Xa[1]": 1.0, "Z3": 0.5},
    "run": {"direction": "heisenberg", "ignore_measure": true}})");
  Task task = load_task(dir.path() / "t.json");
  EXPECT_EQ(task.circuit.num_qubits(), 4u);
  ASSERT_EQ(task.circuit.size(), 3u);
  EXPECT_EQ(task.circuit[0].theta(), 0.25);
  ASSERT_EQ(task.registers.size(), 2u);
  EXPECT_EQ(task.observables[0].terms, (ObservableTerms{{"Z2 X1", 1.0}, {"Z3", 0.5}}));
  EXPECT_TRUE(task.ignore_measure);
  apply_ignore_measure(task);
  EXPECT_EQ(task.ignored_measurements, 1u);
  ASSERT_EQ(task.circuit.size(), 2u);
  EXPECT_TRUE(task.circuit[1].is_reset());
  const Task back = parse_task(task_to_json(task));
  EXPECT_TRUE(back.ignore_measure);
  ExpectSameCircuit(back.circuit, task.circuit);
  // Located errors of the OpenQASM file pass through; a missing input names the file's line.
  WriteText(dir.path() / "u.json", R"({"version": 1, "n_qubits": 4, "circuit": {"qasm_file": "c.qasm"},
    "run": {"direction": "heisenberg"}})");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "u.json"); },
                               {"c.qasm:3:17:", "input 't' has no value"}));
  // Parameters are JSON numbers, not text; the file is a regular file (like circuit.stim_file).
  WriteText(dir.path() / "s.json", R"({"version": 1, "n_qubits": 4,
    "circuit": {"qasm_file": "c.qasm", "params": {"t": "0.25"}}, "run": {"direction": "heisenberg"}})");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "s.json"); },
                               {"circuit.params.t: expected a finite number"}));
  std::filesystem::create_directories(dir.path() / "d.qasm");
  WriteText(dir.path() / "d.json", R"({"version": 1, "n_qubits": 4, "circuit": {"qasm_file": "d.qasm"},
    "run": {"direction": "heisenberg"}})");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "d.json"); },
                               {"circuit.qasm_file:", "d.qasm is not a regular file"}));
}

// ---- sweeps ----------------------------------------------------------------------------------

constexpr const char* kSweepTask = R"({"version": 1, "n_qubits": 3,
  "sweep": {"th": [0.1, 0.2, 0.3], "p": [0.0, 0.01, 0.02]},
  "circuit": {"gates": [
    {"name": "h", "qubits": [0]}, {"name": "rx", "qubits": [1], "theta": "th"},
    {"name": "depolarize", "qubits": [0, 2], "p": "p"}, {"name": "ry", "qubits": [2], "theta": 0.7},
    {"name": "pauli_channel", "qubits": [1], "px": "p", "py": 0.01, "pz": "p"},
    {"name": "pauli_rotation", "pauli": "XY", "qubits": [0, 2], "theta": "th"}]},
  "observable": {"ZZI": 1.0},
  "run": {"direction": "heisenberg"}})";

TEST(TaskJsonSweep, ColumnsTakeEachParametersValueAndColumnZeroIsTheCircuit) {
  const Task task = parse_task(kSweepTask);
  EXPECT_EQ(task.sweep.names, (std::vector<std::string>{"th", "p"}));
  EXPECT_EQ(task.sweep.columns(), 3u);
  ASSERT_EQ(task.sweep_circuits.size(), 3u);
  const std::vector<double> th = {0.1, 0.2, 0.3}, p = {0.0, 0.01, 0.02};
  for (std::size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE("column " + std::to_string(k));
    Circuit expected(3);
    expected.append(Channel::h(0));
    expected.append(Channel::rx(th[k], 1));
    expected.append(Channel::depolarize(p[k], 0));
    expected.append(Channel::depolarize(p[k], 2));
    expected.append(Channel::ry(0.7, 2));
    expected.append(Channel::pauli_channel(p[k], 0.01, p[k], 1));
    expected.append(Channel::pauli_rotation("XY", {0, 2}, th[k]));
    ExpectSameCircuit(task.sweep_circuits[k], expected);
  }
  ExpectSameCircuit(task.circuit, task.sweep_circuits[0]);
  const std::vector<SweepBinding> bindings = {{1, "theta", "th"}, {2, "p", "p"},  {3, "p", "p"},
                                              {5, "px", "p"},     {5, "pz", "p"}, {6, "theta", "th"}};
  EXPECT_EQ(task.sweep_bindings, bindings);
  // Without "sweep" a task is as before: no columns, no bindings.
  const Task plain = parse_task(kV1Task);
  EXPECT_TRUE(plain.sweep.empty());
  EXPECT_TRUE(plain.sweep_circuits.empty());
  EXPECT_TRUE(plain.sweep_bindings.empty());
  // One column is a sweep too.
  const Task one = parse_task(
      WrapGates(R"([{"name": "rz", "qubits": [0], "theta": "a"}])", 1).insert(1, R"("sweep": {"a": [2]}, )"));
  ASSERT_EQ(one.sweep_circuits.size(), 1u);
  EXPECT_EQ(one.circuit[0].theta(), 2.0);
}

TEST(TaskJsonSweep, TaskToJsonKeepsTheParameterNamesAndRoundTrips) {
  const Task task = parse_task(kSweepTask);
  const std::string text = task_to_json(task);
  EXPECT_NE(text.find(R"("sweep": {"th":[0.1,0.2,0.3],"p":[0.0,0.01,0.02]})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"name":"rx","qubits":[1],"theta":"th"})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("px":"p","py":0.01,"pz":"p")"), std::string::npos) << text;
  const Task back = parse_task(text, "written.json");
  ExpectSameTask(back, task);
  EXPECT_EQ(back.sweep, task.sweep);
  EXPECT_EQ(back.sweep_bindings, task.sweep_bindings);
  ASSERT_EQ(back.sweep_circuits.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) ExpectSameCircuit(back.sweep_circuits[k], task.sweep_circuits[k]);
  EXPECT_EQ(task_to_json(back), text);
  // A binding the circuit cannot hold is refused, not written as a number.
  Task broken = task;
  broken.sweep_bindings[0].field = "gamma";
  EXPECT_THROW(task_to_json(broken), std::invalid_argument);
  broken = task;
  broken.sweep.names.clear();
  broken.sweep.values.clear();
  EXPECT_THROW(task_to_json(broken), std::invalid_argument);
}

TEST(TaskJsonSweep, IgnoreMeasureKeepsTheBindingsOnTheirGates) {
  std::string text = kSweepTask;
  text.replace(text.find(R"({"name": "h", "qubits": [0]},)"), 29,
               R"({"name": "measure", "qubits": [2]}, {"name": "h", "qubits": [0]},)");
  text.replace(text.find(R"("direction": "heisenberg")"), 25,
               R"("direction": "heisenberg", "ignore_measure": true)");
  Task task = parse_task(text);
  apply_ignore_measure(task);
  const Task plain = parse_task(kSweepTask);
  EXPECT_EQ(task.ignored_measurements, 1u);
  EXPECT_EQ(task.sweep_bindings, plain.sweep_bindings);
  ASSERT_EQ(task.sweep_circuits.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) ExpectSameCircuit(task.sweep_circuits[k], plain.sweep_circuits[k]);
  ExpectSameCircuit(task.circuit, plain.circuit);
}

TEST(TaskJsonSweep, MalformedSweepsNameTheFieldAndWhatWasExpected) {
  auto with = [](const std::string& sweep, const std::string& theta) {
    return R"({"version": 1, "n_qubits": 2, )" + sweep +
           R"("circuit": {"gates": [{"name": "rx", "qubits": [0], "theta": )" + theta +
           R"(}]}, "run": {"direction": "forward"}})";
  };
  struct Case {
    std::string text;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {with("", R"("th")"),
       {"circuit.gates[0].theta: expected a finite number, got the string \"th\"", "no \"sweep\""}},
      {with(R"("sweep": {"a": [1, 2]}, )", R"("th")"),
       {"circuit.gates[0].theta: unknown sweep parameter \"th\" (the sweep has \"a\")"}},
      {with(R"("sweep": {"th": [1, 2], "b": [3, 4]}, )", R"("th")"),
       {"sweep.b: no gate uses sweep parameter \"b\""}},
      {with(R"("sweep": {"th": [1, 2], "b": [3]}, )", R"("th")"), {"sweep.b: has 1 values but \"th\" has 2"}},
      {with(R"("sweep": {"th": []}, )", R"("th")"),
       {"sweep.th: expected a non-empty list of numbers", "got an array"}},
      {with(R"("sweep": {"th": 0.5}, )", R"("th")"),
       {"sweep.th: expected a non-empty list of numbers", "got the number 0.5"}},
      {with(R"("sweep": {"th": [0.5, "x"]}, )", R"("th")"),
       {"sweep.th[1]: expected a finite number", "\"x\""}},
      {with(R"("sweep": {"th": [0.5, 1e999]}, )", R"("th")"), {"sweep.th[1]: number overflow"}},
      {with(R"("sweep": {"th": [0.5, null]}, )", R"("th")"),
       {"sweep.th[1]: expected a finite number, got null"}},
      {with(R"("sweep": {}, )", R"("th")"), {"sweep: expected at least one parameter"}},
      {with(R"("sweep": [1, 2], )", R"("th")"), {"sweep: expected an object"}},
      {with(R"("sweep": {"": [1]}, )", R"("")"), {"sweep parameter names must not be empty"}},
      {with(R"("sweep": {"th": [1, 2]}, )", R"(0.5)"), {"sweep.th: no gate uses sweep parameter \"th\""}},
      {R"({"version": 1, "n_qubits": 2, "sweep": {"p": [0.1, 1.5]}, "circuit": {"gates": [
          {"name": "depolarize", "qubits": [0], "p": "p"}]}, "run": {"direction": "forward"}})",
       {"circuit.gates[0]:", "sweep column 1, p = \"p\""}},
      {R"({"version": 1, "n_qubits": 2, "sweep": {"t": [0.1]}, "circuit": {"stim_file": "a.stim"},
          "run": {"direction": "forward"}})",
       {"sweep: a sweep sets the parameters of \"gates\"", "\"stim_file\""}},
      {R"({"version": 1, "n_qubits": 2, "sweep": {"t": [0.1]}, "circuit": {"qasm_file": "a.qasm",
          "params": {"a": "tx"}}, "run": {"direction": "forward"}})",
       {"circuit.params.a: unknown sweep parameter \"tx\" (the sweep has \"t\")"}},
      {R"({"version": 1, "n_qubits": 2, "circuit": {"qasm_file": "a.qasm", "params": {"a": "t"}},
          "run": {"direction": "forward"}})",
       {"circuit.params.a: expected a finite number, got the string \"t\"", "no \"sweep\""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_TRUE(ThrowsParseError([&] { parse_task(c.text, "t.json"); }, c.needles));
  }
}

TEST(TaskJsonSweep, QasmFileParamsMayNameSweepParameters) {
  const TempDir dir("qasm-sweep");
  WriteText(dir.path() / "c.qasm",
            "OPENQASM 3;\ninclude \"stdgates.inc\";\ninput float[64] t;\ninput float[64] u;\nqubit[2] q;\n"
            "rz(2 * t) q[0];\nmeasure q[1];\nrx(u) q[1];\nry(t + u) q[0];\n");
  WriteText(dir.path() / "t.json", R"({"version": 1, "n_qubits": 2, "sweep": {"th": [0.1, 0.2, 0.3]},
    "circuit": {"qasm_file": "c.qasm", "params": {"t": "th", "u": 0.5}},
    "observable": {"Zq[0]": 1.0}, "run": {"direction": "heisenberg", "ignore_measure": true}})");
  Task task = load_task(dir.path() / "t.json");
  ASSERT_EQ(task.sweep_circuits.size(), 3u);
  EXPECT_EQ(task.swept_params, (std::map<std::string, std::string>{{"t", "th"}}));
  EXPECT_EQ(task.params, (std::map<std::string, double>{{"u", 0.5}}));
  const std::vector<double> th = {0.1, 0.2, 0.3};
  for (std::size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(task.sweep_circuits[k].size(), 4u);
    EXPECT_EQ(task.sweep_circuits[k][0].theta(), 2 * th[k]);
    EXPECT_EQ(task.sweep_circuits[k][2].theta(), 0.5);
    EXPECT_EQ(task.sweep_circuits[k][3].theta(), th[k] + 0.5);
  }
  ExpectSameCircuit(task.circuit, task.sweep_circuits[0]);
  apply_ignore_measure(task);
  ASSERT_EQ(task.sweep_circuits[2].size(), 3u);
  EXPECT_EQ(task.sweep_circuits[2][2].theta(), 0.3 + 0.5);
  // Gates cannot name what the inputs became (2 * t): the writer refuses rather than drop the sweep.
  EXPECT_THROW(task_to_json(task), std::invalid_argument);
  // A swept input that changes the gate count (pow(n) @ x: n gates) is refused, naming the columns.
  WriteText(dir.path() / "loop.qasm",
            "OPENQASM 3;\ninclude \"stdgates.inc\";\ninput float[64] n;\nqubit[1] q;\npow(n) @ x q[0];\n");
  WriteText(dir.path() / "l.json", R"({"version": 1, "n_qubits": 1, "sweep": {"n": [1, 2]},
    "circuit": {"qasm_file": "loop.qasm", "params": {"n": "n"}}, "run": {"direction": "heisenberg"}})");
  EXPECT_TRUE(ThrowsParseError([&] { load_task(dir.path() / "l.json"); },
                               {"circuit.qasm_file: sweep column 0 has 1 gates but column 1 has 2"}));
}

// ---- gradients ----------------------------------------------------------------------------------

/// kSweepTask asking for gradients (`list`: the JSON of "gradient").
std::string WithGradient(const std::string& list, std::string text = kSweepTask) {
  return text.insert(text.find(R"("circuit")"), R"("gradient": )" + list + ", ");
}

TEST(TaskJsonGradient, TheListIsReadInOrderAndRoundTrips) {
  const Task task = parse_task(WithGradient(R"(["p", "th"])"));
  EXPECT_EQ(task.gradient, (std::vector<std::string>{"p", "th"}));
  EXPECT_TRUE(parse_task(kSweepTask).gradient.empty());
  const std::string text = task_to_json(task);
  EXPECT_NE(text.find(R"("gradient": ["p","th"])"), std::string::npos) << text;
  const Task back = parse_task(text, "written.json");
  ExpectSameTask(back, task);
  EXPECT_EQ(back.sweep_bindings, task.sweep_bindings);
  EXPECT_EQ(task_to_json(back), text);
  EXPECT_EQ(task_to_json(parse_task(kSweepTask)).find("gradient"), std::string::npos);
  // What could not be read back is refused.
  Task broken = task;
  broken.gradient = {"q"};
  EXPECT_THROW(task_to_json(broken), std::invalid_argument);
  broken.gradient = {"th", "th"};
  EXPECT_THROW(task_to_json(broken), std::invalid_argument);
  broken = task;
  broken.sweep = {};
  broken.sweep_circuits.clear();
  broken.sweep_bindings.clear();
  EXPECT_THROW(task_to_json(broken), std::invalid_argument);
}

TEST(TaskJsonGradient, MalformedGradientsNameTheField) {
  struct Case {
    std::string text;
    std::vector<std::string> needles;
  };
  const std::string gamma =
      R"({"version": 1, "n_qubits": 2, "sweep": {"g": [0.1, 0.2]}, "circuit": {"gates": [
      {"name": "h", "qubits": [0]}, {"name": "amplitude_damping", "qubits": [0, 1], "gamma": "g"}]},
      "gradient": ["g"], "run": {"direction": "forward"}})";
  const std::vector<Case> cases = {
      {WithGradient(R"("th")"),
       {"gradient: expected a non-empty list of sweep parameter names", "got the string"}},
      {WithGradient("[]"), {"gradient: expected a non-empty list of sweep parameter names"}},
      {WithGradient(R"({"th": 1})"), {"gradient: expected a non-empty list"}},
      {WithGradient(R"(["th", 2])"), {"gradient[1]: expected a sweep parameter name, got the integer 2"}},
      {WithGradient(R"(["th", "q"])"),
       {"gradient[1]: unknown sweep parameter \"q\" (the sweep has \"th\", \"p\")"}},
      {WithGradient(R"(["th", "p", "th"])"), {"gradient[2]: sweep parameter \"th\" is named twice"}},
      {WithGradient(R"(["th"])", std::string(kV1Task)),
       {"gradient: a gradient is taken along a sweep, but the task has no \"sweep\""}},
      {gamma,
       {"gradient[0]: sweep parameter \"g\" sets amplitude_damping's gamma (layer 1 of the circuit)",
        "not affine"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_TRUE(ThrowsParseError([&] { parse_task(c.text, "t.json"); }, c.needles));
  }
}

TEST(TaskJsonGradient, AQasmFilesSweptInputHasNoGatesToDifferentiate) {
  const TempDir dir("qasm-gradient");
  WriteText(dir.path() / "c.qasm",
            "OPENQASM 3;\ninclude \"stdgates.inc\";\ninput float[64] t;\nqubit[1] q;\nrz(2 * t) q[0];\n");
  WriteText(dir.path() / "t.json", R"({"version": 1, "n_qubits": 1, "sweep": {"th": [0.1, 0.2]},
    "gradient": ["th"], "circuit": {"qasm_file": "c.qasm", "params": {"t": "th"}},
    "run": {"direction": "heisenberg"}})");
  EXPECT_TRUE(
      ThrowsParseError([&] { load_task(dir.path() / "t.json"); },
                       {"gradient[0]: sweep parameter \"th\" sets input \"t\" of the qasm_file circuit"}));
}

TEST(TaskJsonGradient, WithGateFieldsRebuildsTheGateWithTheFieldsSet) {
  const std::vector<std::string> theta = {"theta"}, p = {"p"}, px_pz = {"px", "pz"};
  ExpectSameChannel(with_gate_fields(Channel::rx(0.3, 2), theta, -1.25), Channel::rx(-1.25, 2), 0);
  ExpectSameChannel(with_gate_fields(Channel::rzz(0.3, 1, 4), theta, 2.0),
                    Channel::pauli_rotation("ZZ", {1, 4}, 2.0), 1);
  ExpectSameChannel(with_gate_fields(Channel::pauli_rotation("XYZ", {0, 3, 1}, 0.1), theta, 0.7),
                    Channel::pauli_rotation("XYZ", {0, 3, 1}, 0.7), 2);
  ExpectSameChannel(with_gate_fields(Channel::depolarize(0.1, 3), p, 0.25), Channel::depolarize(0.25, 3), 3);
  ExpectSameChannel(with_gate_fields(Channel::depolarize2(0.1, 0, 3), p, 0.5),
                    Channel::depolarize2(0.5, 0, 3), 4);
  ExpectSameChannel(with_gate_fields(Channel::pauli_channel(0.1, 0.2, 0.05, 1), px_pz, 0.3),
                    Channel::pauli_channel(0.3, 0.2, 0.3, 1), 5);
  ExpectSameChannel(with_gate_fields(Channel::ry(0.0, 0), theta, 0.9), Channel::ry(0.9, 0), 6);
  EXPECT_THROW(with_gate_fields(Channel::h(0), theta, 1.0), std::invalid_argument);
  EXPECT_THROW(with_gate_fields(Channel::rx(0.1, 0), p, 1.0), std::invalid_argument);
  EXPECT_THROW(with_gate_fields(Channel::depolarize(0.1, 0), p, 2.0), std::invalid_argument);
  EXPECT_THROW(with_gate_fields(Channel::pauli_channel(0.1, 0.2, 0.05, 1), px_pz, 0.45),
               std::invalid_argument);
}

}  // namespace
}  // namespace paulistrings::io
