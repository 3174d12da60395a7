// Tests the stim circuit reader: every supported instruction (kinds, qubits, parameters), its
// meaning against the dense oracle and stim's own definitions, REPEAT flattening and its size guard,
// comments and case-insensitivity, observables, the num_qubits argument, load_stim, and a table of
// malformed programs that must each throw a ParseError located at the offending token.

#include "paulistrings/io/stim.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/run/propagate.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::io {
namespace {

namespace dense = paulistrings::testing::dense;

using K = ChannelKind;

// One expected channel: kind, qubits and noise parameters.
struct Expected {
  ChannelKind kind;
  std::vector<Qubit> qubits;
  std::vector<double> parameters = {};
};

void ExpectChannels(const Circuit& circuit, const std::vector<Expected>& expected) {
  ASSERT_EQ(circuit.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("channel " + std::to_string(i) + ": " + circuit[i].description());
    EXPECT_EQ(circuit[i].kind(), expected[i].kind);
    EXPECT_EQ(circuit[i].qubits(), expected[i].qubits);
    EXPECT_EQ(circuit[i].parameters(), expected[i].parameters);
    EXPECT_EQ(circuit[i].theta(), 0.0);
  }
}

// A random Hermitian-or-not operator on n qubits with complex Pauli coefficients.
dense::Matrix RandomOperator(std::mt19937_64& rng, std::size_t n) {
  return dense::operator_from_pauli_terms(static_cast<int>(n), testing::random_terms(rng, n, 10, true));
}

// Σ_k w_k P_k A P_k with weight 1 − Σ w_k on the identity: stim's definition of a Pauli noise channel.
dense::Matrix PauliMixture(const dense::Matrix& op,
                           const std::vector<std::pair<double, std::string>>& terms) {
  double rest = 1.0;
  dense::Matrix out = dense::Matrix::zeros(op.dim());
  for (const auto& [weight, label] : terms) {
    const dense::Matrix p = dense::pauli_matrix(label);
    out = out + dense::Complex(weight) * dense::multiply(dense::multiply(p, op), p);
    rest -= weight;
  }
  return out + dense::Complex(rest) * op;
}

// Passes when read_stim(text) throws a ParseError whose message starts with "file:line:column: "
// and contains `needle`.
::testing::AssertionResult ThrowsParseErrorAt(const std::string& text, std::size_t line, std::size_t column,
                                              const std::string& needle,
                                              std::optional<std::size_t> num_qubits = std::nullopt) {
  const std::string file = "bad.stim";
  try {
    read_stim(text, file, num_qubits);
  } catch (const ParseError& e) {
    const std::string message = e.what();
    const std::string prefix = file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
    if (message.rfind(prefix, 0) != 0) {
      return ::testing::AssertionFailure()
             << "message \"" << message << "\" does not start with \"" << prefix << "\"";
    }
    if (message.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message \"" << message << "\" does not mention \"" << needle << "\"";
    }
    if (e.file() != file || e.line() != line || e.column() != column) {
      return ::testing::AssertionFailure() << "accessors disagree with the message \"" << message << "\"";
    }
    if (message.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "message spans several lines: \"" << message << "\"";
    }
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something other than ParseError: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TEST(StimTest, OneQubitCliffordsBroadcastOverTargets) {
  const StimProgram program = read_stim("H 0\nS 1\nS_DAG 2\nX 0 1\nY 2\nZ 3 0\n");
  EXPECT_EQ(program.circuit.num_qubits(), 4u);
  EXPECT_TRUE(program.observable.empty());
  ExpectChannels(program.circuit, {{K::h, {0}},
                                   {K::s, {1}},
                                   {K::sdg, {2}},
                                   {K::x, {0}},
                                   {K::x, {1}},
                                   {K::y, {2}},
                                   {K::z, {3}},
                                   {K::z, {0}}});
  EXPECT_EQ(program.circuit[2].name(), "sdg");
}

TEST(StimTest, TwoQubitGatesAndAliasesTakeTargetsInPairs) {
  const StimProgram program =
      read_stim("CX 0 1 2 3\nCNOT 1 0\nZCX 2 1\nCY 0 3\nZCY 3 0\nCZ 1 2\nZCZ 2 0\nSWAP 3 1 0 2\n");
  EXPECT_EQ(program.circuit.num_qubits(), 4u);
  ExpectChannels(program.circuit, {{K::cnot, {0, 1}},
                                   {K::cnot, {2, 3}},
                                   {K::cnot, {1, 0}},
                                   {K::cnot, {2, 1}},
                                   {K::cy, {0, 3}},
                                   {K::cy, {3, 0}},
                                   {K::cz, {1, 2}},
                                   {K::cz, {2, 0}},
                                   {K::swap, {3, 1}},
                                   {K::swap, {0, 2}}});
}

TEST(StimTest, NoiseChannelsCarryTheirProbabilities) {
  const StimProgram program = read_stim(
      "DEPOLARIZE1(0.01) 0 2\nDEPOLARIZE2(0.02) 0 1 2 3\nX_ERROR(0.1) 1\nY_ERROR(0.2) 1\nZ_ERROR(0.3) 1\n"
      "X_ERROR(0) 0\nZ_ERROR(1) 0\nY_ERROR(1e-3) 3\nDEPOLARIZE1( +0.5 ) 1\n");
  ExpectChannels(program.circuit, {{K::depolarize, {0}, {0.01}},
                                   {K::depolarize, {2}, {0.01}},
                                   {K::depolarize2, {0, 1}, {0.02}},
                                   {K::depolarize2, {2, 3}, {0.02}},
                                   {K::pauli_channel, {1}, {0.1, 0.0, 0.0}},
                                   {K::pauli_channel, {1}, {0.0, 0.2, 0.0}},
                                   {K::pauli_channel, {1}, {0.0, 0.0, 0.3}},
                                   {K::pauli_channel, {0}, {0.0, 0.0, 0.0}},
                                   {K::pauli_channel, {0}, {0.0, 0.0, 1.0}},
                                   {K::pauli_channel, {3}, {0.0, 1e-3, 0.0}},
                                   {K::depolarize, {1}, {0.5}}});
}

// The noise instructions act as stim defines them: X_ERROR(p) applies X with probability p,
// DEPOLARIZE1(p) one of X, Y, Z with probability p/3 each, DEPOLARIZE2(p) one of the 15
// non-identity two-qubit Paulis with probability p/15 each.
TEST(StimTest, NoiseFollowsStimDefinitionsOnTheDenseOracle) {
  std::mt19937_64 rng(11);
  const dense::Matrix op = RandomOperator(rng, 3);
  const auto check = [&](const std::string& text, const std::vector<std::pair<double, std::string>>& terms) {
    SCOPED_TRACE(text);
    const StimProgram program = read_stim(text, "<stim>", 3);
    EXPECT_TRUE(dense::max_abs_diff(testing::apply_circuit_dense(op, program.circuit, Direction::forward, 3),
                                    PauliMixture(op, terms)) < 1e-12);
  };
  check("X_ERROR(0.1) 1", {{0.1, "IXI"}});
  check("Y_ERROR(0.25) 0", {{0.25, "YII"}});
  check("Z_ERROR(0.4) 2", {{0.4, "IIZ"}});
  check("DEPOLARIZE1(0.3) 2", {{0.1, "IIX"}, {0.1, "IIY"}, {0.1, "IIZ"}});
  std::vector<std::pair<double, std::string>> pairs;
  for (char a : std::string("IXYZ")) {
    for (char b : std::string("IXYZ")) {
      if (a != 'I' || b != 'I') pairs.emplace_back(0.45 / 15, std::string{a, 'I', b});
    }
  }
  check("DEPOLARIZE2(0.45) 0 2", pairs);
}

// Stim's Clifford conventions (CX's first target is the control, CY's too; S maps X to Y) on
// explicit Pauli operators, propagated forward through the parsed circuit by the dense oracle.
TEST(StimTest, CliffordsFollowStimConventions) {
  const auto forward = [](const std::string& text, const std::string& in) {
    const StimProgram program = read_stim(text, "<stim>", in.size());
    return testing::apply_circuit_dense(dense::pauli_matrix(in), program.circuit, Direction::forward,
                                        in.size());
  };
  const auto pauli = [](const std::string& label, double sign = 1.0) {
    return dense::Complex(sign) * dense::pauli_matrix(label);
  };
  EXPECT_TRUE(testing::operators_close(forward("CX 0 1", "XI"), pauli("XX")));
  EXPECT_TRUE(testing::operators_close(forward("CNOT 0 1", "IZ"), pauli("ZZ")));
  EXPECT_TRUE(testing::operators_close(forward("ZCX 1 0", "IX"), pauli("XX")));
  EXPECT_TRUE(testing::operators_close(forward("CY 0 1", "XI"), pauli("XY")));
  EXPECT_TRUE(testing::operators_close(forward("ZCY 0 1", "IZ"), pauli("ZZ")));
  EXPECT_TRUE(testing::operators_close(forward("CY 1 0", "ZI"), pauli("ZZ")));
  EXPECT_TRUE(testing::operators_close(forward("CY 0 1", "IX"), pauli("ZX")));
  EXPECT_TRUE(testing::operators_close(forward("CZ 0 1", "XI"), pauli("XZ")));
  EXPECT_TRUE(testing::operators_close(forward("ZCZ 0 1", "IX"), pauli("ZX")));
  EXPECT_TRUE(testing::operators_close(forward("SWAP 0 1", "XZ"), pauli("ZX")));
  EXPECT_TRUE(testing::operators_close(forward("H 0", "X"), pauli("Z")));
  EXPECT_TRUE(testing::operators_close(forward("H 0", "Y"), pauli("Y", -1.0)));
  EXPECT_TRUE(testing::operators_close(forward("S 0", "X"), pauli("Y")));
  EXPECT_TRUE(testing::operators_close(forward("S_DAG 0", "X"), pauli("Y", -1.0)));
  EXPECT_TRUE(testing::operators_close(forward("X 0", "Z"), pauli("Z", -1.0)));
  EXPECT_TRUE(testing::operators_close(forward("Y 0", "X"), pauli("X", -1.0)));
  EXPECT_TRUE(testing::operators_close(forward("Z 0", "Y"), pauli("Y", -1.0)));
}

// A whole program against the oracle's own textbook gates and Kraus maps, both directions.
TEST(StimTest, ProgramMatchesDenseGateListInBothDirections) {
  const std::string text =
      "H 0 1\nCX 0 2\nS 2\nCY 1 3\nZ_ERROR(0.05) 3\n"
      "REPEAT 2 {\n  CZ 2 3\n  S_DAG 0\n  DEPOLARIZE1(0.1) 1\n}\n"
      "SWAP 0 3\nDEPOLARIZE2(0.2) 1 2\nX 2\nY 3\nX_ERROR(0.3) 0\nY_ERROR(0.15) 2\n";
  std::vector<dense::DenseGate> gates = {{"h", {0}},       {"h", {1}},
                                         {"cnot", {0, 2}}, {"s", {2}},
                                         {"cy", {1, 3}},   {"pauli_channel", {3}, {0.0, 0.0, 0.05}}};
  for (int r = 0; r < 2; ++r) {
    gates.push_back({"cz", {2, 3}});
    gates.push_back({"sdg", {0}});
    gates.push_back({"depolarize", {1}, {0.1}});
  }
  const std::vector<dense::DenseGate> tail = {
      {"swap", {0, 3}}, {"depolarize2", {1, 2}, {0.2}},          {"x", {2}},
      {"y", {3}},       {"pauli_channel", {0}, {0.3, 0.0, 0.0}}, {"pauli_channel", {2}, {0.0, 0.15, 0.0}}};
  gates.insert(gates.end(), tail.begin(), tail.end());

  const StimProgram program = read_stim(text);
  ASSERT_EQ(program.circuit.num_qubits(), 4u);
  ASSERT_EQ(program.circuit.size(), gates.size());
  std::mt19937_64 rng(5);
  for (const Direction direction : {Direction::forward, Direction::heisenberg}) {
    SCOPED_TRACE(std::string(to_string(direction)));
    const dense::Matrix op = RandomOperator(rng, 4);
    dense::Matrix expected = op;
    const bool heisenberg = direction == Direction::heisenberg;
    for (std::size_t k = 0; k < gates.size(); ++k) {
      const dense::DenseGate& gate = heisenberg ? gates[gates.size() - 1 - k] : gates[k];
      expected = dense::apply_gate(expected, gate, 4, heisenberg);
    }
    EXPECT_TRUE(
        testing::operators_close(testing::apply_circuit_dense(op, program.circuit, direction, 4), expected));
  }
}

TEST(StimTest, RepeatBlocksFlattenInOrderAndNest) {
  const StimProgram program = read_stim(
      "H 0\nREPEAT 3 {\n  CX 0 1\n  REPEAT 2 {\n    X_ERROR(0.1) 1\n  }\n  S 1\n}\nZ 0\n"
      "repeat 2{\n  Repeat 1 {\n    SWAP 1 0\n  }\n}\n");
  Circuit expected(2);
  expected.append(Channel::h(0));
  for (int r = 0; r < 3; ++r) {
    expected.append(Channel::cnot(0, 1));
    expected.append(Channel::pauli_channel(0.1, 0, 0, 1)).append(Channel::pauli_channel(0.1, 0, 0, 1));
    expected.append(Channel::s(1));
  }
  expected.append(Channel::z(0)).append(Channel::swap(1, 0)).append(Channel::swap(1, 0));
  ASSERT_EQ(program.circuit.size(), 16u);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(program.circuit[i].kind(), expected[i].kind());
    EXPECT_EQ(program.circuit[i].qubits(), expected[i].qubits());
    EXPECT_EQ(program.circuit[i].parameters(), expected[i].parameters());
  }
  EXPECT_EQ(program.circuit.fingerprint(), expected.fingerprint());
  // An empty body costs nothing however often it repeats.
  EXPECT_EQ(read_stim("REPEAT 18446744073709551615 {\n}\nH 0").circuit.size(), 1u);
  EXPECT_EQ(read_stim("REPEAT 20000 {\n  H 0\n}\n").circuit.size(), 20000u);
  // 32 levels of nesting are accepted (33 are not: see the malformed-program table).
  std::string deep;
  for (int d = 0; d < 31; ++d) deep += "REPEAT 1 {\n";
  deep += "REPEAT 2 {\nZ 0\n}\n";
  for (int d = 0; d < 31; ++d) deep += "}\n";
  ExpectChannels(read_stim(deep).circuit, {{K::z, {0}}, {K::z, {0}}});
}

TEST(StimTest, RepeatExpansionIsCappedBeforeAnythingIsBuilt) {
  EXPECT_TRUE(ThrowsParseErrorAt("REPEAT 10000001 {\n  H 0\n}\n", 1, 1, "more than 10000000"));
  // The innermost blocks flatten (2, then 200 channels); the outermost would make 2·10^7.
  EXPECT_TRUE(
      ThrowsParseErrorAt("H 0\n  REPEAT 100000 {\n    REPEAT 100 {\n      REPEAT 2 {\n        H 0\n"
                         "      }\n    }\n  }\n",
                         2, 3, "REPEAT 100000 would flatten the program to more than 10000000"));
  EXPECT_TRUE(ThrowsParseErrorAt("REPEAT 18446744073709551615 {\n  OBSERVABLE_INCLUDE(0) X0\n}\n", 1, 1,
                                 "observable terms"));
  // Two channels per iteration: 5000001 iterations are just over the cap.
  EXPECT_TRUE(ThrowsParseErrorAt("REPEAT 5000001 {\n  H 0 1\n}\n", 1, 1, "more than 10000000"));
}

TEST(StimTest, CommentsBlankLinesWhitespaceAndCaseInsensitivity) {
  const StimProgram program = read_stim(
      "# a header comment\n\n  h 0 # trailing comment\n\tcX 0\t1\r\ns_dag 1\r\nDePoLaRiZe1 (0.5) 0\n"
      "   # indented comment\nH 0#no space before the comment\nx_error(0.125)1\n   \n#\n");
  ExpectChannels(program.circuit, {{K::h, {0}},
                                   {K::cnot, {0, 1}},
                                   {K::sdg, {1}},
                                   {K::depolarize, {0}, {0.5}},
                                   {K::h, {0}},
                                   {K::pauli_channel, {1}, {0.125, 0.0, 0.0}}});
}

TEST(StimTest, IgnoredInstructionsAddNothingButIdentityDeclaresQubits) {
  const StimProgram program = read_stim(
      "TICK\nQUBIT_COORDS(1, 2.5) 7 8\nSHIFT_COORDS(0, 0, 1)\nI 5\nH 0\ntick\nI\nqubit_coords(0) 900000\n");
  // I 5 counts towards the width (stim programs use it to declare qubits); coordinates do not.
  EXPECT_EQ(program.circuit.num_qubits(), 6u);
  ExpectChannels(program.circuit, {{K::h, {0}}});
  EXPECT_TRUE(program.observable.empty());
}

TEST(StimTest, MeasurementsAndResetsBecomeChannels) {
  const StimProgram program = read_stim(
      "H 0\nM 0 !1\nMX(0.01) 2\nMY 3\nMZ 0\nMR 1\nMRX 2\nMRY 3\nR 0\nRX 1\nRY 2\nRZ 3\n"
      "MXX 0 1\nMYY 2 3\nMZZ !0 3\nMPP X0*Y1*!Z2 Z3\nMPAD 0 1\nDETECTOR(1, 2) rec[-1] rec[-2]\n"
      "OBSERVABLE_INCLUDE(0) Z0\n");
  std::vector<std::string> seen;
  for (const Channel& c : program.circuit) seen.push_back(c.description());
  EXPECT_EQ(seen, (std::vector<std::string>{"h [0]",
                                            "measure [0]",
                                            "measure [1]",
                                            "measure_pauli(pauli=X) [2]",
                                            "measure_pauli(pauli=Y) [3]",
                                            "measure [0]",
                                            "measure [1]",
                                            "reset [1]",
                                            "measure_pauli(pauli=X) [2]",
                                            "reset_x [2]",
                                            "measure_pauli(pauli=Y) [3]",
                                            "reset_y [3]",
                                            "reset [0]",
                                            "reset_x [1]",
                                            "reset_y [2]",
                                            "reset [3]",
                                            "measure_pauli(pauli=XX) [0, 1]",
                                            "measure_pauli(pauli=YY) [2, 3]",
                                            "measure_pauli(pauli=ZZ) [0, 3]",
                                            "measure_pauli(pauli=XYZ) [0, 1, 2]",
                                            "measure [3]"}));
  EXPECT_EQ(program.observable, (ObservableTerms{{"Z0", 1.0}}));
}

TEST(StimTest, MeasurementsFollowTheDenseOracle) {
  // A Bell pair measured in X X: ⟨XX⟩ survives, ⟨ZI⟩ is removed; a reset to |+⟩ sets ⟨X⟩ = 1.
  const StimProgram program = read_stim("H 0\nCX 0 1\nMXX 0 1\nMPP Z0*Z1\nRX 2\nM 3\n");
  for (const Direction direction : {Direction::forward, Direction::heisenberg}) {
    const dense::Matrix op = dense::operator_from_pauli_terms(
        4, {{"XXII", 1.0}, {"ZIII", 0.5}, {"IIXI", 0.25}, {"IIZZ", 0.7}, {"IIIX", 0.3}, {"YYII", 0.2}});
    const dense::Matrix expected = testing::apply_circuit_dense(op, program.circuit, direction, 4);
    auto sum = PauliSum<1, Complex>::from_labels(
        4, {{"XXII", 1.0}, {"ZIII", 0.5}, {"IIXI", 0.25}, {"IIZZ", 0.7}, {"IIIX", 0.3}, {"YYII", 0.2}});
    PropagateOptions options;
    options.direction = direction;
    propagate(sum, program.circuit, options);
    EXPECT_TRUE(testing::operators_close(testing::dense_operator(sum, 4), expected, 1e-12));
  }
}

TEST(StimTest, ObservableIncludeGivesOneTermPerInstruction) {
  const StimProgram program = read_stim(
      "H 1\nOBSERVABLE_INCLUDE(0) X3 Y5\nobservable_include(1) z0\nOBSERVABLE_INCLUDE(0) X3 Y5\n"
      "REPEAT 2 {\n  OBSERVABLE_INCLUDE(2) Z1 x2\n}\n");
  EXPECT_EQ(program.circuit.num_qubits(), 6u);  // observable targets count towards the width
  const ObservableTerms expected = {
      {"X3 Y5", 1.0}, {"Z0", 1.0}, {"X3 Y5", 1.0}, {"Z1 X2", 1.0}, {"Z1 X2", 1.0}};
  EXPECT_EQ(program.observable, expected);
  // Duplicates sum when the terms become a PauliSum.
  const AnyPauliSum sum = make_observable(program.observable, program.circuit.num_qubits());
  EXPECT_EQ(sum.size(), 3u);
  EXPECT_TRUE(testing::ComplexClose(sum.coefficient("X3 Y5"), 2.0));
  EXPECT_TRUE(testing::ComplexClose(sum.coefficient("ZIIIII"), 1.0));
  EXPECT_TRUE(testing::ComplexClose(sum.coefficient("IZXIII"), 2.0));
  // Only observable targets: the width comes from them alone.
  EXPECT_EQ(read_stim("OBSERVABLE_INCLUDE(0) Z9").circuit.num_qubits(), 10u);
}

TEST(StimTest, NumQubitsArgumentSetsTheWidthAndMustCoverEveryIndex) {
  EXPECT_EQ(read_stim("H 2", "f.stim", 5).circuit.num_qubits(), 5u);
  EXPECT_EQ(read_stim("CX 4 0", "f.stim", 5).circuit.num_qubits(), 5u);
  EXPECT_EQ(read_stim("", "f.stim", 7).circuit.num_qubits(), 7u);
  EXPECT_TRUE(ThrowsParseErrorAt("H 0\nCX 1 5", 2, 6, "qubit 5 does not fit in num_qubits=5", 5));
  EXPECT_TRUE(ThrowsParseErrorAt("OBSERVABLE_INCLUDE(0) X0 Z7", 1, 26, "num_qubits=3", 3));
  EXPECT_TRUE(ThrowsParseErrorAt("I 3", 1, 3, "num_qubits=3", 3));
  // An impossible width is a bad argument (std::invalid_argument from the library), not bad text.
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([] { read_stim("H 0", "f.stim", 2000); }, {"2000"}));
}

TEST(StimTest, EmptyAndCommentOnlyProgramsGiveAnEmptyCircuit) {
  for (const char* text : {"", "\n", "# nothing\n\n   \n", "TICK\n"}) {
    SCOPED_TRACE(text);
    const StimProgram program = read_stim(text);
    EXPECT_EQ(program.circuit.num_qubits(), 0u);
    EXPECT_TRUE(program.circuit.empty());
    EXPECT_TRUE(program.observable.empty());
  }
}

TEST(StimTest, LoadStimReadsTheFileAndNamesItInErrors) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("paulistrings-stim-test-" + std::to_string(std::random_device{}()) +
                                     "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  const std::filesystem::path good = dir / "good.stim";
  const std::filesystem::path bad = dir / "bad.stim";
  std::ofstream(good) << "H 0\nCX 0 1\nOBSERVABLE_INCLUDE(0) Z1\n";
  std::ofstream(bad) << "H 0\n  FOO 1\n";
  const StimProgram program = load_stim(good.string());
  ExpectChannels(program.circuit, {{K::h, {0}}, {K::cnot, {0, 1}}});
  EXPECT_EQ(program.observable, (ObservableTerms{{"Z1", 1.0}}));
  EXPECT_EQ(load_stim(good.string(), 4).circuit.num_qubits(), 4u);
  try {
    load_stim(bad.string());
    ADD_FAILURE() << "did not throw";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad.string() + ":2:3: ", 0), 0u) << e.what();
    EXPECT_EQ(e.file(), bad.string());
  }
  EXPECT_THROW(load_stim((dir / "missing.stim").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}

struct BadCase {
  std::string text;
  std::size_t line;
  std::size_t column;
  std::string needle;
};

TEST(StimTest, MalformedProgramsThrowLocatedParseErrors) {
  const std::vector<BadCase> cases = {
      // Unsupported instructions, reported at their name with the reason.
      {"M 0 X1", 1, 5, "M takes qubit indices, not Pauli targets like 'X1'"},
      {"H 0\nMR(2) 0 1", 2, 4, "probability must be in [0, 1]"},
      {"  mx 0 !", 1, 8, "inverted targets like '!'"},
      {"MPP X0*X0", 1, 8, "names qubit 0 twice"},
      {"MPP X0**X1", 1, 8, "empty factor"},
      {"MPP X0*5", 1, 8, "not the plain qubit '5'"},
      {"MPP 0", 1, 5, "not the plain qubit '0'"},
      {"R(0.1) 0", 1, 2, "R takes no arguments"},
      {"H 0\n\nRX rec[-1]", 3, 4, "measurement record targets"},
      {"MZZ 0 1 2", 1, 9, "no partner"},
      {"MXX 3 3", 1, 7, "pair uses qubit 3 twice"},
      {"MPAD 2", 1, 6, "MPAD takes bits 0 or 1"},
      {"H 0\nDETECTOR 0", 2, 10, "DETECTOR takes measurement record targets like 'rec[-1]'"},
      {"DETECTOR rec[-0]", 1, 10, "expected a record target"},
      {"HERALDED_PAULI_CHANNEL_1(0.1, 0, 0, 0) 0", 1, 1, "heralded noise"},
      {"CORRELATED_ERROR(0.1) X1 Y2", 1, 1, "correlated errors"},
      {"E(0.1) X1", 1, 1, "E is not supported"},
      {"ELSE_CORRELATED_ERROR(0.1) Z1", 1, 1, "ELSE_CORRELATED_ERROR is not supported"},
      {"PAULI_CHANNEL_1(0.1, 0.1, 0.1) 0", 1, 1, "PAULI_CHANNEL_1 is not supported"},
      {"PAULI_CHANNEL_2(0,0,0,0,0,0,0,0,0,0,0,0,0,0,0.1) 0 1", 1, 1, "PAULI_CHANNEL_2 is not supported"},
      {"HERALDED_ERASE(0.1) 0", 1, 1, "heralded noise"},
      {"FOO 0", 1, 1, "instruction 'FOO' is not supported; supported: H S S_DAG"},
      {"H 0\n\tsqrt_x 0", 2, 2, "'SQRT_X' is not supported"},
      // Target forms stim has and this reader rejects.
      {"CX rec[-1] 0", 1, 4, "measurement record targets like 'rec[-1]'"},
      {"H sweep[0]", 1, 3, "sweep targets"},
      {"X_ERROR(0.1) 0 !5", 1, 16, "inverted targets like '!5'"},
      {"OBSERVABLE_INCLUDE(0) X1*X2", 1, 25, "combiners ('*')"},
      {"OBSERVABLE_INCLUDE(0) rec[-1]", 1, 23, "measurement record"},
      {"H X5", 1, 3, "H takes qubit indices, not Pauli targets like 'X5'"},
      // Arguments.
      {"H(0.1) 0", 1, 2, "H takes no arguments, got 1"},
      {"CZ(1) 0 1", 1, 3, "CZ takes no arguments"},
      {"DEPOLARIZE1 0", 1, 1, "DEPOLARIZE1 takes exactly 1 argument (a probability), got 0"},
      {"DEPOLARIZE1(0.1, 0.2) 0", 1, 12, "got 2"},
      {"DEPOLARIZE2() 0 1", 1, 12, "got 0"},
      {"X_ERROR(1.5) 0", 1, 9, "probability must be in [0, 1]"},
      {"Z_ERROR(-0.1) 0", 1, 9, "probability must be in [0, 1]"},
      {"Y_ERROR(nan) 0", 1, 9, "finite"},
      {"DEPOLARIZE2(inf) 0 1", 1, 13, "finite"},
      {"X_ERROR(abc) 0", 1, 9, "expected a number, got 'abc'"},
      {"X_ERROR(0.1 0", 1, 8, "missing ')'"},
      {"X_ERROR(0.1,) 0", 1, 13, "expected a number"},
      {"X_ERROR( , 0.1) 0", 1, 10, "expected a number"},
      {"X_ERROR(1e999) 0", 1, 9, "out of range"},
      {"X_ERROR(0.1)) 0", 1, 13, "expected a qubit index"},
      {"OBSERVABLE_INCLUDE X0", 1, 1, "takes exactly 1 argument (the observable index)"},
      {"OBSERVABLE_INCLUDE(0.5) X0", 1, 20, "non-negative integer"},
      {"OBSERVABLE_INCLUDE(-1) X0", 1, 20, "non-negative integer"},
      // Pairs.
      {"CX 0 1 2", 1, 8, "CX takes targets in pairs, but '2' has no partner (3 targets)"},
      {"SWAP 0", 1, 6, "pairs"},
      {"CZ 3 3", 1, 6, "CZ pair uses qubit 3 twice"},
      {"DEPOLARIZE2(0.1) 0 1 4 4", 1, 24, "uses qubit 4 twice"},
      // Qubit indices.
      {"H 99999999999999999999", 1, 3, "qubit index '99999999999999999999' is too large"},
      {"H 1024", 1, 3, "beyond the supported maximum of 1024 qubits"},
      {"H -1", 1, 3, "expected a qubit index (a non-negative integer), got '-1'"},
      {"H 1.5", 1, 3, "got '1.5'"},
      {"H 5x", 1, 3, "got '5x'"},
      {"QUBIT_COORDS(0) q", 1, 17, "expected a qubit index"},
      {"OBSERVABLE_INCLUDE(0) 5", 1, 23, "not the plain qubit '5'"},
      {"OBSERVABLE_INCLUDE(0) X1 Z1", 1, 26, "names qubit 1 twice"},
      {"OBSERVABLE_INCLUDE(0)", 1, 1, "at least one Pauli target"},
      {"OBSERVABLE_INCLUDE(0) Xa", 1, 23, "expected a qubit index after 'X'"},
      {"OBSERVABLE_INCLUDE(0) Q3", 1, 23, "expected a Pauli target like 'X5', got 'Q3'"},
      {"OBSERVABLE_INCLUDE(0) Z99999999999999999999", 1, 23, "too large"},
      // Targets on instructions that take none.
      {"TICK 0", 1, 6, "TICK takes no targets"},
      {"SHIFT_COORDS(1) 3", 1, 17, "SHIFT_COORDS takes no targets"},
      {"TICK(1)", 1, 5, "TICK takes no arguments"},
      // REPEAT blocks.
      {"REPEAT 0 {\n}", 1, 8, "at least 1"},
      {"REPEAT -2 {\n}", 1, 8, "positive integer, got '-2'"},
      {"REPEAT 2.5 {\n}", 1, 8, "positive integer"},
      {"REPEAT {\n}", 1, 8, "positive integer, got '{'"},
      {"REPEAT\n}", 1, 1, "REPEAT needs a repetition count"},
      {"REPEAT 3\nH 0\n}", 1, 9, "expected '{' after the REPEAT count"},
      {"REPEAT 3 [\nH 0\n}", 1, 10, "expected '{' after the REPEAT count, got '['"},
      {"H 0\nREPEAT 3 {\nH 0\n", 2, 1, "never closed"},
      {"REPEAT 2 {\n  REPEAT 3 {\n    H 0\n  }\n", 1, 1, "never closed"},
      {"H 0\n}", 2, 1, "without an open REPEAT block"},
      {"REPEAT 3 { H 0\n}", 1, 12, "unexpected 'H' after '{'"},
      {"REPEAT 99999999999999999999 {\n}", 1, 8, "REPEAT count '99999999999999999999' is too large"},
      {"REPEAT(2) 3 {\n}", 1, 7, "REPEAT takes no parenthesized arguments"},
      {"REPEAT 2 {\n  H 0\n} H 1", 3, 3, "after '}'"},
      {"H 0 }", 1, 5, "unexpected '}'"},
      {std::string("H 0\n") +
           [] {
             std::string nested;
             for (int d = 0; d < 33; ++d) nested += "REPEAT 1 {\n";
             return nested;
           }(),
       34, 1, "REPEAT blocks nested more than 32 deep are not supported"},
      {"H {", 1, 3, "only REPEAT opens a block"},
      // Line structure.
      {"5 H", 1, 1, "expected an instruction name, got '5'"},
      {"(0.1) 0", 1, 1, "expected an instruction name"},
      {"H[tag] 0", 1, 2, "instruction tags"},
      {"H-0", 1, 2, "expected whitespace or '(' after the instruction name 'H'"},
      {"\xff\x01 0", 1, 1, "got '\\xff\\x01'"},
      {"H\t0\nCX 0\t1 2", 2, 8, "no partner"},
      {"H 0\r\nM 1 Y\r\n", 2, 5, "expected a qubit index"},
      {"X_ERROR(0.1) 0 # comment (with parens\nX_ERROR(2) 1", 2, 9, "got 2"},
  };
  ASSERT_GE(cases.size(), 40u);
  for (const BadCase& c : cases) {
    SCOPED_TRACE("program: \"" + c.text + "\"");
    EXPECT_TRUE(ThrowsParseErrorAt(c.text, c.line, c.column, c.needle));
  }
}

// Random edits of a valid program either parse or throw ParseError: never another exception, a
// crash or a hang (the suite runs this under ASan/UBSan too).
TEST(StimTest, RandomEditsOnlyEverThrowParseError) {
  const std::string base =
      "# header\nH 0 1\nCX 0 1\nREPEAT 2 {\n  DEPOLARIZE1(0.1) 0\n  REPEAT 2 {\n    CZ 1 2\n  }\n}\n"
      "X_ERROR(0.2) 2\nOBSERVABLE_INCLUDE(0) X0 Z2\nS_DAG 1\nTICK\n";
  const std::string alphabet = "0123456789XYZHMRxyz_(){}[]!*#-+.,e \t\n\r\xff";
  std::mt19937_64 rng(2024);
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(at, 1, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
          break;
      }
    }
    try {
      const StimProgram program = read_stim(text, "fuzz.stim");
      EXPECT_LE(program.circuit.num_qubits(), 1024u);
      ++parsed;
    } catch (const ParseError& e) {
      ++rejected;
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.stim:", 0), 0u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception for \"" << text << "\": " << e.what();
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace paulistrings::io
