// Tests of the OpenQASM 2.0 reader: every supported gate checked structurally (kind, qubits,
// angle, matrix) and semantically against textbook matrices through the dense oracle in both
// directions, register layout and broadcasting, user gate definitions, parameter expressions,
// comments, barrier, the num_qubits argument, an end-to-end propagation, and a table of malformed
// programs, each of which must throw io::ParseError located at the offending token.

#include "paulistrings/io/qasm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numbers>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/core/text.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/dense_simulator.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::io {
namespace {

namespace dense = testing::dense;
using testing::apply_circuit_dense;
using testing::operators_close;

constexpr double kPi = std::numbers::pi;
constexpr Complex kI{0.0, 1.0};
constexpr Direction kDirections[] = {Direction::forward, Direction::heisenberg};
const std::string kHeader = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\n";

// ---------------------------------------------------------------- textbook matrices

dense::Matrix mat_x() { return {{0, 1}, {1, 0}}; }
dense::Matrix mat_y() { return {{0, -kI}, {kI, 0}}; }
dense::Matrix mat_z() { return {{1, 0}, {0, -1}}; }
dense::Matrix mat_h() {
  const double r = 1 / std::sqrt(2.0);
  return {{r, r}, {r, -r}};
}
dense::Matrix phase(double lambda) { return {{1, 0}, {0, std::polar(1.0, lambda)}}; }
dense::Matrix mat_sx() { return {{0.5 + 0.5 * kI, 0.5 - 0.5 * kI}, {0.5 - 0.5 * kI, 0.5 + 0.5 * kI}}; }
dense::Matrix mat_rx(double t) {
  return {{std::cos(t / 2), -kI * std::sin(t / 2)}, {-kI * std::sin(t / 2), std::cos(t / 2)}};
}
dense::Matrix mat_ry(double t) {
  return {{std::cos(t / 2), -std::sin(t / 2)}, {std::sin(t / 2), std::cos(t / 2)}};
}
dense::Matrix mat_rz(double t) { return {{std::polar(1.0, -t / 2), 0}, {0, std::polar(1.0, t / 2)}}; }
/// The OpenQASM 2 u3(θ, φ, λ) matrix.
dense::Matrix mat_u3(double t, double phi, double lambda) {
  const double c = std::cos(t / 2), s = std::sin(t / 2);
  return {{c, -std::polar(s, lambda)}, {std::polar(s, phi), std::polar(c, phi + lambda)}};
}
/// |0⟩⟨0| ⊗ I + |1⟩⟨1| ⊗ U, control the more significant factor.
dense::Matrix controlled(const dense::Matrix& u) {
  dense::Matrix m = dense::Matrix::zeros(4);
  m(0, 0) = 1;
  m(1, 1) = 1;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) m(2 + r, 2 + c) = u(r, c);
  return m;
}
dense::Matrix mat_swap() { return {{1, 0, 0, 0}, {0, 0, 1, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}}; }
/// exp(−iθ P⊗P/2).
dense::Matrix two_qubit_rotation(const dense::Matrix& p, double t) {
  return Complex(std::cos(t / 2)) * dense::Matrix::identity(4) +
         Complex(-kI * std::sin(t / 2)) * dense::kron(p, p);
}

// ---------------------------------------------------------------- helpers

Circuit parse(const std::string& body, std::optional<std::size_t> num_qubits = std::nullopt) {
  return read_qasm(kHeader + body, "test.qasm", num_qubits);
}

/// A random (non-Hermitian) operator on n qubits: a generic probe of a conjugation map.
dense::Matrix random_operator(std::mt19937_64& rng, int n) {
  return dense::operator_from_pauli_terms(n,
                                          testing::random_terms(rng, static_cast<std::size_t>(n), 10, true));
}

/// The circuit acts as U·U† forward and U†·U in the Heisenberg picture on random operators.
::testing::AssertionResult acts_as(const Circuit& circuit, const dense::Matrix& full_u, int n,
                                   std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (Direction direction : kDirections) {
    for (int trial = 0; trial < 2; ++trial) {
      const dense::Matrix op = random_operator(rng, n);
      const dense::Matrix actual = apply_circuit_dense(op, circuit, direction, static_cast<std::size_t>(n));
      const dense::Matrix expected = dense::apply_unitary(op, full_u, direction == Direction::heisenberg);
      ::testing::AssertionResult result = operators_close(actual, expected, 1e-11);
      if (!result) return result << " (" << to_string(direction) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

/// Checks that `text` throws ParseError at file:line:column (column 0: any) whose message
/// contains `needle`.
void expect_parse_error(const std::string& text, std::size_t line, std::size_t column,
                        const std::string& needle, std::optional<std::size_t> num_qubits = std::nullopt) {
  const std::string file = "bad.qasm";
  try {
    (void)read_qasm(text, file, num_qubits);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    std::string prefix = file + ":" + std::to_string(line) + ":";
    if (column > 0) prefix += std::to_string(column) + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << "message: " << what << "\nexpected prefix: " << prefix;
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), line) << what;
    if (column > 0) {
      EXPECT_EQ(e.column(), column) << what;
    }
    EXPECT_NE(what.find(needle), std::string::npos)
        << "message: " << what << "\nexpected to contain: " << needle;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "message is not one line: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something else than ParseError: " << e.what();
  }
}

void expect_gate(const Channel& c, ChannelKind kind, std::vector<Qubit> qubits) {
  EXPECT_EQ(c.kind(), kind) << c.description();
  EXPECT_EQ(c.qubits(), qubits) << c.description();
}

void expect_rotation(const Channel& c, const std::string& pauli, double theta, std::vector<Qubit> qubits) {
  EXPECT_EQ(c.kind(), ChannelKind::pauli_rotation) << c.description();
  EXPECT_EQ(c.pauli(), pauli) << c.description();
  EXPECT_NEAR(c.theta(), theta, 1e-15) << c.description();
  EXPECT_EQ(c.qubits(), qubits) << c.description();
}

void expect_matrix(const Channel& c, const dense::Matrix& m) {
  const int d = m.dim();
  ASSERT_EQ(c.matrix().size(), static_cast<std::size_t>(d * d)) << c.description();
  for (int r = 0; r < d; ++r)
    for (int col = 0; col < d; ++col)
      EXPECT_LT(std::abs(c.matrix()[static_cast<std::size_t>(r * d + col)] - m(r, col)), 1e-14)
          << c.description() << " entry (" << r << ", " << col << ")";
}

/// The theta of `rz(<expression>) q[0];`.
double rz_angle(const std::string& expression) {
  const Circuit c = parse("qreg q[1];\nrz(" + expression + ") q[0];\n");
  if (c.size() != 1) throw std::logic_error("expected one gate");
  return c[0].theta();
}

// ---------------------------------------------------------------- structure

TEST(QasmReadTest, HeaderRegistersAndEmptyProgram) {
  const Circuit empty = read_qasm("OPENQASM 2.0;");
  EXPECT_EQ(empty.num_qubits(), 0u);
  EXPECT_TRUE(empty.empty());

  const Circuit c = parse("qreg a[2];\ncreg m[5];\nqreg b[3];\n");
  EXPECT_EQ(c.num_qubits(), 5u);  // cregs take no qubits
  EXPECT_TRUE(c.empty());

  // The include is optional (the gates are built in); version "2" is 2.0; a BOM is skipped.
  const Circuit d = read_qasm("\xEF\xBB\xBFOPENQASM 2;\nqreg q[1];\nh q[0];");
  ASSERT_EQ(d.size(), 1u);
  expect_gate(d[0], ChannelKind::h, {0});
}

TEST(QasmReadTest, CliffordGatesMapToCliffordChannels) {
  const Circuit c = parse(
      "qreg q[3];\n"
      "id q[0];\n"
      "x q[0]; y q[1]; z q[2]; h q[0]; s q[1]; sdg q[2]; sx q[0]; sxdg q[1];\n"
      "cx q[0], q[2]; CX q[2], q[1]; cy q[1], q[0]; cz q[0], q[1]; swap q[2], q[0];\n");
  ASSERT_EQ(c.size(), 13u);  // id is skipped
  expect_gate(c[0], ChannelKind::x, {0});
  expect_gate(c[1], ChannelKind::y, {1});
  expect_gate(c[2], ChannelKind::z, {2});
  expect_gate(c[3], ChannelKind::h, {0});
  expect_gate(c[4], ChannelKind::s, {1});
  expect_gate(c[5], ChannelKind::sdg, {2});
  expect_gate(c[6], ChannelKind::sx, {0});
  expect_gate(c[7], ChannelKind::sxdg, {1});
  expect_gate(c[8], ChannelKind::cnot, {0, 2});
  expect_gate(c[9], ChannelKind::cnot, {2, 1});
  expect_gate(c[10], ChannelKind::cy, {1, 0});
  expect_gate(c[11], ChannelKind::cz, {0, 1});
  expect_gate(c[12], ChannelKind::swap, {2, 0});
}

TEST(QasmReadTest, RotationGatesMapToPauliRotations) {
  const Circuit c = parse(
      "qreg q[3];\n"
      "rx(0.1) q[0]; ry(0.2) q[1]; rz(0.3) q[2]; p(0.4) q[0]; u1(0.5) q[1]; t q[2]; tdg q[0];\n"
      "rxx(0.6) q[0], q[1]; ryy(0.7) q[1], q[2]; rzz(0.8) q[2], q[0];\n");
  ASSERT_EQ(c.size(), 10u);
  expect_rotation(c[0], "X", 0.1, {0});
  expect_rotation(c[1], "Y", 0.2, {1});
  expect_rotation(c[2], "Z", 0.3, {2});
  expect_rotation(c[3], "Z", 0.4, {0});  // p(λ) = rz(λ) up to a global phase
  expect_rotation(c[4], "Z", 0.5, {1});
  expect_rotation(c[5], "Z", kPi / 4, {2});
  expect_rotation(c[6], "Z", -kPi / 4, {0});
  expect_rotation(c[7], "XX", 0.6, {0, 1});
  expect_rotation(c[8], "YY", 0.7, {1, 2});
  expect_rotation(c[9], "ZZ", 0.8, {2, 0});
}

TEST(QasmReadTest, GeneralGatesMapToUnitaries) {
  const Circuit c = parse(
      "qreg q[3];\n"
      "u2(0.1, 0.2) q[0]; u3(0.3, 0.4, 0.5) q[1]; u(0.6, 0.7, 0.8) q[2]; U(0.9, 1.0, 1.1) q[0];\n"
      "ch q[2], q[0]; crx(0.2) q[0], q[1]; cry(0.3) q[1], q[2]; crz(0.4) q[2], q[1];\n"
      "cp(0.5) q[0], q[2]; cu1(0.6) q[1], q[0];\n");
  ASSERT_EQ(c.size(), 10u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(c[k].kind(), ChannelKind::unitary_1q);
  EXPECT_EQ(c[0].qubits(), std::vector<Qubit>{0});
  EXPECT_EQ(c[1].qubits(), std::vector<Qubit>{1});
  EXPECT_EQ(c[2].qubits(), std::vector<Qubit>{2});
  expect_matrix(c[0], mat_u3(kPi / 2, 0.1, 0.2));
  expect_matrix(c[1], mat_u3(0.3, 0.4, 0.5));
  expect_matrix(c[2], mat_u3(0.6, 0.7, 0.8));
  expect_matrix(c[3], mat_u3(0.9, 1.0, 1.1));
  const std::vector<std::vector<Qubit>> qubits = {{2, 0}, {0, 1}, {1, 2}, {2, 1}, {0, 2}, {1, 0}};
  for (std::size_t k = 4; k < 10; ++k) {
    EXPECT_EQ(c[k].kind(), ChannelKind::unitary_2q);
    EXPECT_EQ(c[k].qubits(), qubits[k - 4]);
  }
  expect_matrix(c[4], controlled(mat_h()));
  expect_matrix(c[5], controlled(mat_rx(0.2)));
  expect_matrix(c[6], controlled(mat_ry(0.3)));
  expect_matrix(c[7], controlled(mat_rz(0.4)));
  expect_matrix(c[8], controlled(phase(0.5)));
  expect_matrix(c[9], controlled(phase(0.6)));
}

// ---------------------------------------------------------------- semantics (dense oracle)

TEST(QasmReadTest, EveryGateActsAsItsTextbookMatrix) {
  struct Case {
    std::string statement;
    dense::Matrix local;
    std::vector<int> qubits;
  };
  const double a = 0.73, b = -1.31, g = 2.47;
  const std::vector<Case> cases = {
      {"id q[1];", dense::Matrix::identity(2), {1}},
      {"x q[1];", mat_x(), {1}},
      {"y q[2];", mat_y(), {2}},
      {"z q[0];", mat_z(), {0}},
      {"h q[1];", mat_h(), {1}},
      {"s q[2];", phase(kPi / 2), {2}},
      {"sdg q[0];", phase(-kPi / 2), {0}},
      {"t q[1];", phase(kPi / 4), {1}},
      {"tdg q[2];", phase(-kPi / 4), {2}},
      {"sx q[0];", mat_sx(), {0}},
      {"sxdg q[1];", dense::adjoint(mat_sx()), {1}},
      {"rx(0.73) q[2];", mat_rx(a), {2}},
      {"ry(-1.31) q[0];", mat_ry(b), {0}},
      {"rz(2.47) q[1];", mat_rz(g), {1}},
      {"p(0.73) q[2];", phase(a), {2}},
      {"u1(-1.31) q[0];", phase(b), {0}},
      {"u2(0.73, -1.31) q[1];", mat_u3(kPi / 2, a, b), {1}},
      {"u3(0.73, -1.31, 2.47) q[2];", mat_u3(a, b, g), {2}},
      {"u(2.47, 0.73, -1.31) q[0];", mat_u3(g, a, b), {0}},
      {"U(-1.31, 2.47, 0.73) q[1];", mat_u3(b, g, a), {1}},
      {"cx q[2], q[0];", controlled(mat_x()), {2, 0}},
      {"CX q[0], q[1];", controlled(mat_x()), {0, 1}},
      {"cy q[1], q[2];", controlled(mat_y()), {1, 2}},
      {"cz q[2], q[1];", controlled(mat_z()), {2, 1}},
      {"swap q[0], q[2];", mat_swap(), {0, 2}},
      {"ch q[1], q[0];", controlled(mat_h()), {1, 0}},
      {"crx(0.73) q[0], q[2];", controlled(mat_rx(a)), {0, 2}},
      {"cry(-1.31) q[2], q[1];", controlled(mat_ry(b)), {2, 1}},
      {"crz(2.47) q[1], q[0];", controlled(mat_rz(g)), {1, 0}},
      {"cp(0.73) q[0], q[1];", controlled(phase(a)), {0, 1}},
      {"cu1(-1.31) q[2], q[0];", controlled(phase(b)), {2, 0}},
      {"rxx(0.73) q[1], q[2];", two_qubit_rotation(mat_x(), a), {1, 2}},
      {"ryy(-1.31) q[2], q[0];", two_qubit_rotation(mat_y(), b), {2, 0}},
      {"rzz(2.47) q[0], q[1];", two_qubit_rotation(mat_z(), g), {0, 1}},
  };
  std::uint64_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.statement);
    const Circuit circuit = parse("qreg q[3];\n" + c.statement + "\n");
    EXPECT_TRUE(acts_as(circuit, dense::embed(c.local, c.qubits, 3), 3, seed++));
  }
}

TEST(QasmReadTest, BuiltinsAgreeWithDecompositionsIntoSimplerGates) {
  // Each built-in gate against a user-defined decomposition (derived independently from the
  // textbook identities), parsed in the same program: both must act identically.
  const std::string definitions =
      "gate my_rzz(t) a, b { cx a, b; rz(t) b; cx a, b; }\n"
      "gate my_rxx(t) a, b { h a; h b; my_rzz(t) a, b; h a; h b; }\n"
      "gate my_ryy(t) a, b { rx(pi/2) a; rx(pi/2) b; my_rzz(t) a, b; rx(-pi/2) a; rx(-pi/2) b; }\n"
      "gate my_crz(l) c, t { rz(l/2) t; cx c, t; rz(-l/2) t; cx c, t; }\n"
      "gate my_crx(l) c, t { h t; my_crz(l) c, t; h t; }\n"
      "gate my_cry(l) c, t { sdg t; my_crx(l) c, t; s t; }\n"
      "gate my_cp(l) c, t { p(l/2) c; cx c, t; p(-l/2) t; cx c, t; p(l/2) t; }\n"
      "gate my_ch c, t { ry(-pi/4) t; cz c, t; ry(pi/4) t; }\n"
      "gate my_u3(th, ph, la) q { rz(la) q; ry(th) q; rz(ph) q; }\n"
      "gate my_u2(ph, la) q { my_u3(pi/2, ph, la) q; }\n"
      "gate my_cy c, t { sdg t; cx c, t; s t; }\n"
      "gate my_swap a, b { cx a, b; cx b, a; cx a, b; }\n"
      "gate my_t q { p(pi/4) q; }\n"
      "qreg q[3];\n";
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"rzz(0.9) q[0], q[2];", "my_rzz(0.9) q[0], q[2];"},
      {"rxx(-0.4) q[2], q[1];", "my_rxx(-0.4) q[2], q[1];"},
      {"ryy(1.7) q[1], q[0];", "my_ryy(1.7) q[1], q[0];"},
      {"crz(0.6) q[0], q[1];", "my_crz(0.6) q[0], q[1];"},
      {"crx(-2.1) q[2], q[0];", "my_crx(-2.1) q[2], q[0];"},
      {"cry(1.1) q[1], q[2];", "my_cry(1.1) q[1], q[2];"},
      {"cp(0.8) q[2], q[1];", "my_cp(0.8) q[2], q[1];"},
      {"ch q[0], q[2];", "my_ch q[0], q[2];"},
      {"u3(0.3, -1.2, 2.2) q[1];", "my_u3(0.3, -1.2, 2.2) q[1];"},
      {"u2(0.5, 1.5) q[0];", "my_u2(0.5, 1.5) q[0];"},
      {"cy q[1], q[0];", "my_cy q[1], q[0];"},
      {"swap q[0], q[1];", "my_swap q[0], q[1];"},
      {"t q[2];", "my_t q[2];"},
  };
  std::mt19937_64 rng(77);
  for (const auto& [builtin, decomposed] : pairs) {
    SCOPED_TRACE(builtin);
    const Circuit lhs = parse(definitions + builtin + "\n");
    const Circuit rhs = parse(definitions + decomposed + "\n");
    ASSERT_EQ(lhs.size(), 1u);
    EXPECT_GT(rhs.size(), 0u);
    for (Direction direction : kDirections) {
      const dense::Matrix op = random_operator(rng, 3);
      EXPECT_TRUE(operators_close(apply_circuit_dense(op, rhs, direction, 3),
                                  apply_circuit_dense(op, lhs, direction, 3), 1e-11));
    }
  }
}

TEST(QasmReadTest, PropagationOfAParsedProgramMatchesTheDenseOracle) {
  const Circuit circuit = parse(
      "qreg a[2];\nqreg b[1];\n"
      "h a; cx a[0], b[0]; rzz(0.4) a[1], b[0]; u3(0.3, 0.2, 0.1) b[0]; crx(0.7) b[0], a[0];\n"
      "t a[1]; ryy(-0.5) a[0], a[1]; sx b;\n");
  ASSERT_EQ(circuit.size(), 9u);
  // The whole program as one textbook unitary, later gates on the left.
  const std::vector<std::pair<dense::Matrix, std::vector<int>>> gates = {
      {mat_h(), {0}},
      {mat_h(), {1}},
      {controlled(mat_x()), {0, 2}},
      {two_qubit_rotation(mat_z(), 0.4), {1, 2}},
      {mat_u3(0.3, 0.2, 0.1), {2}},
      {controlled(mat_rx(0.7)), {2, 0}},
      {phase(kPi / 4), {1}},
      {two_qubit_rotation(mat_y(), -0.5), {0, 1}},
      {mat_sx(), {2}},
  };
  dense::Matrix u = dense::Matrix::identity(8);
  for (const auto& [local, qubits] : gates) u = dense::multiply(dense::embed(local, qubits, 3), u);

  std::mt19937_64 rng(5);
  for (Direction direction : kDirections) {
    SCOPED_TRACE(to_string(direction));
    const auto terms = testing::random_terms(rng, 3, 6, true);
    auto sum = testing::MakeSum<1, Complex>(3, terms);
    PropagateOptions options;
    options.direction = direction;
    options.engine = Engine::reference;
    options.threads = 1;
    propagate(sum, circuit, options);
    const dense::Matrix expected = dense::apply_unitary(dense::operator_from_pauli_terms(3, terms), u,
                                                        direction == Direction::heisenberg);
    EXPECT_TRUE(operators_close(testing::dense_operator(sum, 3), expected, 1e-10));
  }
}

// ---------------------------------------------------------------- registers and broadcasting

TEST(QasmReadTest, RegistersAreLaidOutInDeclarationOrder) {
  const Circuit c = parse(
      "qreg a[2];\ncreg c[3];\nqreg b[3];\nqreg z[1];\n"
      "x a[1]; x b[0]; x b[2]; x z[0];\n");
  EXPECT_EQ(c.num_qubits(), 6u);
  ASSERT_EQ(c.size(), 4u);
  expect_gate(c[0], ChannelKind::x, {1});
  expect_gate(c[1], ChannelKind::x, {2});
  expect_gate(c[2], ChannelKind::x, {4});
  expect_gate(c[3], ChannelKind::x, {5});
}

TEST(QasmReadTest, RegisterArgumentsBroadcast) {
  const Circuit c = parse(
      "qreg a[3];\nqreg b[3];\n"
      "h a;\n"                // 0..2: h on a[0], a[1], a[2]
      "cx a, b;\n"            // 3..5: element-wise
      "cz a[1], b;\n"         // 6..8: the indexed qubit against each of b
      "rzz(0.5) b, a[0];\n"   // 9..11
      "rx(0.25) b;\n"         // 12..14
      "barrier a, b[1];\n");  // nothing
  ASSERT_EQ(c.size(), 15u);
  for (Qubit j = 0; j < 3; ++j) {
    expect_gate(c[j], ChannelKind::h, {j});
    expect_gate(c[3 + j], ChannelKind::cnot, {j, 3 + j});
    expect_gate(c[6 + j], ChannelKind::cz, {1, 3 + j});
    expect_rotation(c[9 + j], "ZZ", 0.5, {3 + j, 0});
    expect_rotation(c[12 + j], "X", 0.25, {3 + j});
  }
  // A user gate broadcasts like a built-in one.
  const Circuit d = parse("gate pair x, y { cx x, y; h y; }\nqreg a[2];\nqreg b[2];\npair a, b;\n");
  ASSERT_EQ(d.size(), 4u);
  expect_gate(d[0], ChannelKind::cnot, {0, 2});
  expect_gate(d[1], ChannelKind::h, {2});
  expect_gate(d[2], ChannelKind::cnot, {1, 3});
  expect_gate(d[3], ChannelKind::h, {3});
  // Broadcast errors are located at the offending argument.
  expect_parse_error(kHeader + "qreg a[2];\nqreg b[3];\ncx b, a;", 5, 7, "'a' has 2 qubits but 'b' has 3");
  expect_parse_error(kHeader + "qreg a[3];\ncz a[2], a;", 4, 10, "qubit a[2] is used twice in one 'cz' gate");
}

TEST(QasmReadTest, NumQubitsArgument) {
  const Circuit wide = parse("qreg q[2];\ncx q[0], q[1];\n", 10);
  EXPECT_EQ(wide.num_qubits(), 10u);
  ASSERT_EQ(wide.size(), 1u);
  expect_gate(wide[0], ChannelKind::cnot, {0, 1});
  EXPECT_EQ(parse("qreg q[2];\n", 2).num_qubits(), 2u);
  EXPECT_EQ(read_qasm("OPENQASM 2.0;", "x", 7).num_qubits(), 7u);
  // Smaller than the registers: an error at the register that goes past it.
  expect_parse_error(kHeader + "qreg a[2];\nqreg b[2];\n", 4, 8, "need 4 qubits but num_qubits is 3", 3);
  expect_parse_error(kHeader + "qreg a[2];\n", 3, 8, "need 2 qubits but num_qubits is 1", 1);
  // Beyond the library's limit: an argument error, not a parse error.
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([] { (void)read_qasm("OPENQASM 2.0;", "x", 5000); },
                                                       {"1024"}));
}

// ---------------------------------------------------------------- user gates

TEST(QasmReadTest, UserGatesExpandInlineWithSubstitutedParameters) {
  const Circuit c = parse(
      "gate rot(a, b) x, y { rz(2*a + b) x; cx x, y; rx(-a) y; barrier x, y; id x; }\n"
      "gate twice(t) q, r { rot(t, t/2) r, q; rot(t^2, 0) q, r; }\n"
      "gate empty q { }\n"
      "gate noparams() q { h q; }\n"
      "qreg q[3];\n"
      "rot(0.5, 0.25) q[0], q[2];\n"
      "twice(pi) q[1], q[0];\n"
      "empty q[2];\n"
      "noparams() q[2];\n"
      "noparams q[1];\n");
  ASSERT_EQ(c.size(), 3u + 6u + 2u);
  expect_rotation(c[0], "Z", 1.25, {0});
  expect_gate(c[1], ChannelKind::cnot, {0, 2});
  expect_rotation(c[2], "X", -0.5, {2});
  // twice(pi) q[1], q[0] → rot(pi, pi/2) q[0], q[1]; rot(pi^2, 0) q[1], q[0].
  expect_rotation(c[3], "Z", 2 * kPi + kPi / 2, {0});
  expect_gate(c[4], ChannelKind::cnot, {0, 1});
  expect_rotation(c[5], "X", -kPi, {1});
  expect_rotation(c[6], "Z", 2 * kPi * kPi, {1});
  expect_gate(c[7], ChannelKind::cnot, {1, 0});
  expect_rotation(c[8], "X", -kPi * kPi, {0});
  expect_gate(c[9], ChannelKind::h, {2});
  expect_gate(c[10], ChannelKind::h, {1});
}

TEST(QasmReadTest, QelibNamesMayBeDefinedWhenQelibIsNotIncluded) {
  // Without the include, a program may define its own h (the spec's style); it shadows the built-in.
  const Circuit c = read_qasm(
      "OPENQASM 2.0;\n"
      "gate h a { U(pi/2, 0, pi) a; }\n"
      "gate ccx a, b, c { h c; cx b, c; cx a, c; }\n"  // not built in: any program may define it
      "qreg q[3];\nh q[1];\nccx q[0], q[1], q[2];\n");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].kind(), ChannelKind::unitary_1q);
  expect_matrix(c[0], mat_u3(kPi / 2, 0, kPi));
  EXPECT_EQ(c[1].kind(), ChannelKind::unitary_1q);  // the user's h, expanded inside ccx
  expect_gate(c[2], ChannelKind::cnot, {1, 2});
  expect_gate(c[3], ChannelKind::cnot, {0, 2});

  // ryy is not in qelib1.inc, so exporters define it next to the include: the definition wins.
  const Circuit exported = parse(
      "gate ryy(param0) q0, q1 { rx(pi/2) q0; rx(pi/2) q1; cx q0, q1; rz(param0) q1; cx q0, q1; "
      "rx(-pi/2) q0; rx(-pi/2) q1; }\n"
      "qreg q[2];\nryy(0.3) q[1], q[0];\n");
  ASSERT_EQ(exported.size(), 7u);
  EXPECT_TRUE(
      acts_as(exported, dense::embed(two_qubit_rotation(mat_y(), 0.3), std::vector<int>{1, 0}, 2), 2, 9));
  // A qelib1 gate may not be redefined once qelib1.inc is included (see the error table), nor may
  // a program that defined one include it afterwards.
  expect_parse_error(kHeader + "gate rzz(t) a, b { cx a, b; rz(t) b; cx a, b; }", 3, 6,
                     "gate 'rzz' is already defined by qelib1.inc");
}

TEST(QasmReadTest, GateNestingAndExpansionSizeAreCapped) {
  // A chain of 200 nested gates is fine and expands to one gate.
  std::string chain = "gate g0 a { x a; }\n";
  for (int k = 1; k < 200; ++k)
    chain += "gate g" + std::to_string(k) + " a { g" + std::to_string(k - 1) + " a; }\n";
  const Circuit c = parse(chain + "qreg q[1];\ng199 q[0];\n");
  ASSERT_EQ(c.size(), 1u);
  expect_gate(c[0], ChannelKind::x, {0});

  // Nesting deeper than 256 levels is rejected at the definition that goes past it.
  std::string deep = "gate g0 a { x a; }\n";
  for (int k = 1; k < 300; ++k)
    deep += "gate g" + std::to_string(k) + " a { g" + std::to_string(k - 1) + " a; }\n";
  expect_parse_error(kHeader + deep, 3 + 256, 6, "nests user gates more than 256 levels deep");

  // Exponential expansion (10^8 gates) is refused at the call, before anything is built.
  std::string blowup = "gate e0 a { x a; x a; x a; x a; x a; x a; x a; x a; x a; x a; }\n";
  for (int k = 1; k < 8; ++k) {
    const std::string prev = "e" + std::to_string(k - 1) + " a; ";
    blowup += "gate e" + std::to_string(k) + " a { ";
    for (int r = 0; r < 10; ++r) blowup += prev;
    blowup += "}\n";
  }
  expect_parse_error(kHeader + blowup + "qreg q[1];\nh q[0];\ne7 q[0];\n", 13, 1,
                     "expands to more than 16000000 gate applications");
}

// ---------------------------------------------------------------- expressions, comments, barrier

TEST(QasmReadTest, ParameterExpressions) {
  const std::vector<std::pair<std::string, double>> cases = {
      {"1", 1.0},
      {"-1", -1.0},
      {"+1", 1.0},
      {"--1", 1.0},
      {"1.5", 1.5},
      {"2.", 2.0},
      {".25", 0.25},
      {"1e3", 1000.0},
      {"1.5E-2", 0.015},
      {"2e+1", 20.0},
      {"007", 7.0},
      {"pi", kPi},
      {"-pi/2", -kPi / 2},
      {"2*pi/4", kPi / 2},
      {"1+2*3", 7.0},
      {"(1+2)*3", 9.0},
      {"1-2-3", -4.0},
      {"8/4/2", 1.0},
      {"2^3^2", 512.0},  // right-associative
      {"2^-1", 0.5},
      {"-2^2", -4.0},  // '^' binds tighter than unary minus
      {"(-2)^2", 4.0},
      {"2*-3", -6.0},
      {"-(-(3))", 3.0},
      {"sin(pi/2)", 1.0},
      {"cos(0)", 1.0},
      {"tan(pi/4)", 1.0},
      {"exp(1)", std::exp(1.0)},
      {"ln(exp(2))", 2.0},
      {"sqrt(16)", 4.0},
      {"sqrt(2)^2", 2.0},
      {"cos(pi)*sin(pi/6) + 1/3", -0.5 + 1.0 / 3},
      {" ( ( ( 1 ) ) ) ", 1.0},
      {"1 /* inline */ + // to the end of the line\n 1", 2.0},
  };
  for (const auto& [expression, value] : cases) {
    SCOPED_TRACE(expression);
    EXPECT_NEAR(rz_angle(expression), value, 1e-12 * std::max(1.0, std::abs(value)));
  }
  // 200 nested parentheses are within the cap of 256.
  EXPECT_DOUBLE_EQ(rz_angle(std::string(200, '(') + "0.5" + std::string(200, ')')), 0.5);
  EXPECT_DOUBLE_EQ(rz_angle(std::string(200, '-') + "0.5"), 0.5);
}

TEST(QasmReadTest, CommentsWhitespaceAndLineEndings) {
  const Circuit c = read_qasm(
      "// leading comment\r\n"
      "/* block\r\n comment */ OPENQASM /* inside */ 2.0 ; // trailing\r\n"
      "include\t\"qelib1.inc\";\r\n"
      "qreg /* a */ q [ 2 ] ;\r\n"
      "\n\n   cx q[0],/*x*/q[1];h\nq[1];// no newline at the end");
  ASSERT_EQ(c.size(), 2u);
  expect_gate(c[0], ChannelKind::cnot, {0, 1});
  expect_gate(c[1], ChannelKind::h, {1});
  // Lines keep counting through block comments and CRLF.
  expect_parse_error("OPENQASM 2.0;\r\n/* one\r\ntwo\r\nthree */ qreg q[1];\r\nfoo q[0];", 5, 1,
                     "unknown gate 'foo'");
}

TEST(QasmReadTest, BarrierIsIgnored) {
  const Circuit c = parse(
      "qreg q[3];\nqreg r[2];\n"
      "h q[0];\nbarrier q;\nbarrier q[0], r, q[2];\nbarrier r[1];\nx q[1];\n"
      "gate g a, b { h a; barrier a, b; x b; }\ng q[0], r[0];\n");
  ASSERT_EQ(c.size(), 4u);
  expect_gate(c[0], ChannelKind::h, {0});
  expect_gate(c[1], ChannelKind::x, {1});
  expect_gate(c[2], ChannelKind::h, {0});
  expect_gate(c[3], ChannelKind::x, {3});
}

TEST(QasmReadTest, UnsupportedStatementsAreRejectedWithTheReason) {
  expect_parse_error(kHeader + "qreg q[1]; creg c[1];\nif (c == 1) x q[0];\n", 4, 1,
                     "classical control 'if' is not supported");
  expect_parse_error(kHeader + "opaque magic(a) q;\n", 3, 1, "opaque gate 'magic' is not supported");
}

// ---------------------------------------------------------------- files

TEST(QasmLoadTest, LoadsAFileAndNamesItInErrors) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("qasm_test_" + std::to_string(std::random_device{}()) + "_" +
                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.qasm").string();
  const std::string bad = (dir / "bad.qasm").string();
  {
    std::ofstream(good) << kHeader << "qreg q[2];\nh q;\n";
    std::ofstream(bad) << kHeader << "qreg q[2];\nh q[2];\n";
  }
  const Circuit c = load_qasm(good);
  EXPECT_EQ(c.num_qubits(), 2u);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(load_qasm(good, 4).num_qubits(), 4u);
  try {
    (void)load_qasm(bad);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ":4:5: qubit index 2 out of range for register q[2]", 0), 0u)
        << e.what();
  }
  EXPECT_THROW((void)load_qasm((dir / "missing.qasm").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------- malformed programs

TEST(QasmErrorTest, MalformedProgramsAreLocatedAndExplained) {
  struct Case {
    std::string text;
    std::size_t line;
    std::size_t column;  // 0: not checked
    std::string needle;
  };
  const std::string& H = kHeader;  // two lines: statements start on line 3
  const std::vector<Case> cases = {
      // header
      {"", 1, 1, "empty program: expected the header 'OPENQASM 2.0;'"},
      {"  \n// only a comment\n", 3, 1, "empty program"},
      {"\xEF\xBB\xBF", 1, 1, "empty program"},
      {"openqasm 2.0;", 1, 1, "expected the header 'OPENQASM 2.0;'"},
      {"OPENQASM 1.0;", 1, 10, "unsupported OpenQASM version '1.0': expected 2.0 or 3.0"},
      {"OPENQASM;", 1, 9, "expected a version number after OPENQASM, got ';'"},
      {"OPENQASM 2.0", 1, 13, "expected ';' after the OPENQASM header, got end of file"},
      {"OPENQASM 2.0;;", 1, 14, "expected a statement"},
      {H + "OPENQASM 2.0;", 3, 1, "may appear only once"},
      // include
      {"OPENQASM 2.0;\ninclude \"qelib1.inc;\n", 2, 9, "unterminated string"},
      {"OPENQASM 2.0;\ninclude \"other.inc\";", 2, 9, "cannot include \"other.inc\": only \"qelib1.inc\""},
      {"OPENQASM 2.0;\ninclude qelib1.inc;", 2, 9, "expected a file name string after include, got 'qelib1'"},
      {"OPENQASM 2.0;\ninclude \"qelib1.inc\"", 2, 21, "expected ';' after include, got end of file"},
      {"OPENQASM 2.0;\ngate h a { U(pi/2, 0, pi) a; }\ninclude \"qelib1.inc\";", 3, 9,
       "would redefine gate 'h' defined at line 2"},
      // declarations
      {H + "qreg q[2]\nh q;", 4, 1, "expected ';' after qreg declaration, got 'h'"},
      {"OPENQASM 2.0;\nqreg q[1]\n", 3, 1, "expected ';' after qreg declaration, got end of file"},
      {H + "qreg q[];", 3, 8, "expected an integer register size, got ']'"},
      {H + "qreg q[0];", 3, 8, "register size must be at least 1, got 0"},
      {H + "creg c[0];", 3, 8, "register size must be at least 1"},
      {H + "qreg q[1.5];", 3, 8, "expected an integer register size, got number '1.5'"},
      {H + "qreg [2];", 3, 6, "expected a register name, got '['"},
      {H + "qreg q(2);", 3, 7, "expected '[' after the register name"},
      {H + "qreg q[2;", 3, 9, "expected ']' after the register size"},
      {H + "qreg q[2]; qreg q[3];", 3, 17, "register 'q' is already declared at line 3"},
      {H + "qreg q[2];\ncreg q[3];", 4, 6, "register 'q' is already declared"},
      {H + "qreg q[1025];", 3, 8, "too many qubits"},
      {H + "qreg a[1000];\nqreg b[25];", 4, 8, "too many qubits"},
      {H + "qreg q[99999999999999999999999];", 3, 8, "too many qubits"},
      {H + "qreg measure[1];", 3, 6, "'measure' is a reserved word"},
      // gate applications
      {H + "qreg q[2];\nh q\nx q;", 5, 1, "expected ';' after gate arguments, got 'x'"},
      {H + "qreg q[2];\nh q[0]", 4, 7, "expected ';' after gate arguments, got end of file"},
      {H + "qreg q[2];\ncx q[0] q[1];", 4, 9, "expected ';' after gate arguments, got 'q'"},
      {H + "qreg q[1];\nh q[0][0];", 4, 7, "expected ';' after gate arguments, got '['"},
      {H + "qreg q[1]; creg c[1];\nh q[0] -> c[0];", 4, 8, "expected ';' after gate arguments, got '->'"},
      {H + "qreg q[2];\nfoo q[0];", 4, 1, "unknown gate 'foo'"},
      {H + "qreg q[2];\necr q[0], q[1];", 4, 1, "unknown gate 'ecr'"},
      {H + "qreg q[2];\nh r[0];", 4, 3, "undeclared qubit register 'r'"},
      {H + "qreg q[2]; creg c[2];\nh c[0];", 4, 3, "'c' is a classical register"},
      {H + "qreg q[3];\nh q[5];", 4, 5, "qubit index 5 out of range for register q[3]"},
      {H + "qreg q[1];\nh q[99999999999999999999];", 4, 5,
       "qubit index 99999999999999999999 out of range for register q[1]"},
      {H + "qreg q[3];\nh q[-1];", 4, 5, "expected an integer qubit index, got '-'"},
      {H + "qreg q[3];\nh q[1.0];", 4, 5, "expected an integer qubit index, got number '1.0'"},
      {H + "qreg q[3];\nh q[1;", 4, 6, "expected ']' after the qubit index, got ';'"},
      {H + "qreg q[2];\nh ;", 4, 3, "expected a qubit argument for 'h', got ';'"},
      {H + "qreg q[2];\nh q[0],;", 4, 8, "expected a qubit argument for 'h'"},
      {H + "qreg q[3];\ncx q[0];", 4, 1, "gate 'cx' takes 2 qubit arguments, got 1"},
      {H + "qreg q[3];\nh q[0], q[1];", 4, 1, "gate 'h' takes 1 qubit argument, got 2"},
      {H + "qreg q[3];\nrx(0.1, 0.2) q[0];", 4, 1, "gate 'rx' takes 1 parameter, got 2"},
      {H + "qreg q[3];\nrx q[0];", 4, 1, "gate 'rx' takes 1 parameter, got 0"},
      {H + "qreg q[3];\nrx() q[0];", 4, 1, "gate 'rx' takes 1 parameter, got 0"},
      {H + "qreg q[3];\nh(0.5) q[0];", 4, 1, "gate 'h' takes 0 parameters, got 1"},
      {H + "qreg q[3];\nu3(1, 2) q[0];", 4, 1, "gate 'u3' takes 3 parameters, got 2"},
      {H + "qreg q[1];\nU(0, 0) q[0];", 4, 1, "gate 'U' takes 3 parameters, got 2"},
      {H + "qreg q[3];\ncx q[1], q[1];", 4, 10, "qubit q[1] is used twice in one 'cx' gate"},
      {H + "qreg q[2];\nswap q[0], q[0];", 4, 12, "is used twice"},
      {H + "qreg q[3];\ncx q[0], q;", 4, 10, "qubit q[0] is used twice in one 'cx' gate"},
      {H + "qreg a[2]; qreg b[3];\ncx a, b;", 4, 7, "registers in one gate must have equal sizes"},
      // expressions
      {H + "qreg q[2];\nrx(1/0) q[0];", 4, 5, "division by zero"},
      {H + "qreg q[1];\nrx(1/(pi-pi)) q[0];", 4, 5, "division by zero"},
      {H + "qreg q[2];\nrx(ln(0)) q[0];", 4, 4, "ln gives a non-finite value (-inf)"},
      {H + "qreg q[2];\nrx(sqrt(-1)) q[0];", 4, 4, "sqrt gives a non-finite value"},
      {H + "qreg q[1];\nrx(exp(1000)) q[0];", 4, 4, "exp gives a non-finite value (inf)"},
      {H + "qreg q[2];\nrx(10^400) q[0];", 4, 6, "'^' gives a non-finite value (inf)"},
      {H + "qreg q[1];\nrx(-(2^2000)) q[0];", 4, 7, "'^' gives a non-finite value"},
      {H + "qreg q[1];\nrx(1e308*10) q[0];", 4, 9, "'*' gives a non-finite value (inf)"},
      {H + "qreg q[2];\nrx(1e999) q[0];", 4, 4, "number '1e999' is out of the range of a double"},
      {H + "qreg q[2];\nrx(1.2.3) q[0];", 4, 4, "malformed number '1.2.3'"},
      {H + "qreg q[2];\nrx(1e) q[0];", 4, 4, "malformed number '1e'"},
      {H + "qreg q[1];\nrx(2.0e+) q[0];", 4, 4, "malformed number '2.0e+'"},
      {H + "qreg q[1];\nrx(12abc) q[0];", 4, 4, "malformed number '12abc'"},
      {H + "qreg q[2];\nrx((0.5) q[0];", 4, 10, "expected ',' or ')' in the parameter list, got 'q'"},
      {H + "qreg q[2];\nrx(0.5 q[0];", 4, 8, "expected ',' or ')' in the parameter list, got 'q'"},
      {H + "qreg q[1];\nrx(pi pi) q[0];", 4, 7, "expected ',' or ')' in the parameter list"},
      {H + "qreg q[2];\nrx(0.5)) q[0];", 4, 8, "expected a qubit argument for 'rx', got ')'"},
      {H + "qreg q[2];\nrx(1)(2) q[0];", 4, 6, "expected a qubit argument for 'rx', got '('"},
      {H + "qreg q[2];\nrx(2*) q[0];", 4, 6, "expected an expression, got ')'"},
      {H + "qreg q[1];\nrx(1 + ) q[0];", 4, 8, "expected an expression, got ')'"},
      {H + "qreg q[2];\nrx(1,) q[0];", 4, 6, "expected an expression, got ')'"},
      {H + "qreg q[1];\nrx(\"a\") q[0];", 4, 4, "expected an expression, got string \"a\""},
      {H + "qreg q[1];\nrx(", 4, 4, "expected an expression, got end of file"},
      {H + "qreg q[2];\nrx(theta) q[0];", 4, 4, "unknown identifier 'theta' in expression"},
      {H + "qreg q[2];\nrx(foo(1)) q[0];", 4, 4, "unknown identifier 'foo'"},
      {H + "qreg q[2];\nrx(sin 1) q[0];", 4, 8, "expected '(' after 'sin', got number '1'"},
      {H + "qreg q[2];\nrx(cos(1) q[0];", 4, 11, "expected ',' or ')' in the parameter list"},
      {H + "qreg q[1];\nrx(" + std::string(300, '(') + "1" + std::string(300, ')') + ") q[0];", 4, 260,
       "expression nested too deeply (more than 256 levels)"},
      {H + "qreg q[1];\nrx(" + std::string(300, '-') + "1) q[0];", 4, 260, "nested too deeply"},
      {H + "qreg q[1];\nrx(" + std::string(100000, '(') + ") q[0];", 4, 260, "nested too deeply"},
      {H + "gate g(a) q { rx(" +
           [] {
             std::string sum;
             for (int k = 0; k < 1100; ++k) sum += "a+";
             return sum;
           }() +
           "a) q; }",
       3, 17 + 2 * 1024, "expression too long (more than 1024 nested operations)"},
      // gate definitions
      {H + "gate g a { h a; }\ngate g a { x a; }", 4, 6, "gate 'g' is already defined at line 3"},
      {H + "gate h a { x a; }", 3, 6, "gate 'h' is already defined by qelib1.inc"},
      {H + "gate U(a, b, c) q { x q; }", 3, 6, "'U' is a built-in gate and cannot be redefined"},
      {H + "gate measure a { x a; }", 3, 6, "'measure' is a reserved word"},
      {H + "gate g a { foo a; }", 3, 12, "unknown gate 'foo'"},
      {H + "gate g a { g a; }", 3, 12, "gate 'g' cannot use itself"},
      {H + "gate g a { h b; }", 3, 14, "unknown qubit argument 'b' in gate 'g'"},
      {H + "gate g(t) a { h t; }", 3, 17, "'t' is a parameter of gate 'g', not a qubit argument"},
      {H + "gate g a { h a[0]; }", 3, 15, "qubit arguments inside a gate body cannot be indexed"},
      {H + "gate g(t) a { rx(s) a; }", 3, 18, "unknown identifier 's' in expression"},
      {H + "gate g a { rx(t) a; }", 3, 15, "unknown identifier 't'"},
      {H + "gate g(t) a { rx(t) a; ", 3, 24, "expected a gate application or '}' in the body of gate 'g'"},
      {H + "gate g a {\n  h a;\n", 5, 1, "got end of file"},
      {H + "gate g a, a { h a; }", 3, 11, "'a' is declared twice in gate 'g'"},
      {H + "gate g(a) a { h a; }", 3, 11, "'a' is declared twice"},
      {H + "gate g(pi) a { rx(pi) a; }", 3, 8, "'pi' is a reserved word"},
      {H + "gate g(t a { }", 3, 10, "expected ',' or ')' in the parameter list of gate 'g'"},
      {H + "gate g { h a; }", 3, 8, "expected a qubit argument name for gate 'g', got '{'"},
      {H + "gate g a h a; }", 3, 10, "expected '{' to open the body of gate 'g', got 'h'"},
      {H + "gate g a { cx a, a; }", 3, 18, "qubit argument 'a' is used twice in one 'cx' gate"},
      {H + "gate g a { cx a; }", 3, 12, "gate 'cx' takes 2 qubit arguments, got 1"},
      {H + "gate g a { rx(1, 2) a; }", 3, 12, "gate 'rx' takes 1 parameter, got 2"},
      {H + "gate g a { qreg r[1]; }", 3, 12, "'qreg' is not allowed inside a gate body"},
      {H + "gate g a { measure a; }", 3, 12, "'measure' is not allowed inside a gate body"},
      {H + "gate g a { h a }", 3, 16, "expected ';' after gate arguments, got '}'"},
      {H + "gate g(t) a { rx(1/t) a; }\nqreg q[1];\ng(0) q[0];", 5, 1,
       "division by zero in the expansion of gate 'g' (expression at line 3, column 19)"},
      {H + "gate g(t) a { rx(t) a; }\nqreg q[1];\ng q[0];", 5, 1, "gate 'g' takes 1 parameter, got 0"},
      {H + "gate g a { h a; }\nqreg q[1];\ng(pi) q[0];", 5, 1, "gate 'g' takes 0 parameters, got 1"},
      {H + "qreg q[2];\ngate g a, b { cx a, b; }\ng q[0];", 5, 1, "gate 'g' takes 2 qubit arguments, got 1"},
      // unsupported statements
      {H + "qreg q[1];\nmeasure q[0] -> d[0];", 4, 17, "undeclared classical register 'd'"},
      {H + "qreg q[2]; creg c[1];\nmeasure q -> c;", 4, 14, "measure: 2 qubits into 1 bit"},
      {H + "qreg q[2]; creg c[2];\nmeasure q[0] -> q[1];", 4, 17, "'q' is a qubit register"},
      {H + "qreg q[2]; creg c[2];\nmeasure q[0];", 4, 13, "expected '->'"},
      {H + "qreg q[2]; creg c[2];\nmeasure q[0] -> c[2];", 4, 19,
       "bit index 2 out of range for register c[2]"},
      {H + "qreg q[2];\nreset r;", 4, 7, "undeclared qubit register 'r'"},
      {H + "qreg q[1]; creg c[1];\nif(c==1) x q[0];", 4, 1, "classical control 'if' is not supported"},
      {H + "opaque magic q;", 3, 1, "opaque gate 'magic' is not supported"},
      // barrier
      {H + "qreg q[2];\nbarrier r;", 4, 9, "undeclared qubit register 'r'"},
      {H + "qreg q[2];\nbarrier q", 4, 10, "expected ';' after barrier arguments, got end of file"},
      {H + "qreg q[2];\nbarrier q[2];", 4, 11, "qubit index 2 out of range for register q[2]"},
      // lexical problems
      {H + "qreg q[2];\n/* unterminated\nh q;", 4, 1, "unterminated block comment (missing '*/')"},
      {H + "qreg q[1];\nh q[0]; /* a\ncomment */ x q[0]", 5, 18, "expected ';' after gate arguments"},
      {H + "qreg q[1];\n@", 4, 1, "unexpected character '@'"},
      {H + "qreg q[1];\nh q[0] = 1;", 4, 8, "unexpected character '='"},
      {"OPENQASM 2.0;\n\x01\x02\xff", 2, 1, "unexpected byte 0x01"},
      {std::string("\xff\xfe\x00garbage", 10), 1, 1, "unexpected byte 0xFF"},
      {std::string("OPENQASM 2.0;\nqreg q[1];\nh\0q[0];", 32), 3, 2, "unexpected byte 0x00"},
      {H + "}", 3, 1,
       "expected a statement (a gate application, qreg, creg, gate, include or barrier), got '}'"},
  };
  ASSERT_GE(cases.size(), 60u);
  std::set<std::string> distinct;
  for (const Case& c : cases) {
    SCOPED_TRACE("program: " + c.text.substr(0, 200));
    EXPECT_TRUE(distinct.insert(c.text).second) << "duplicate case";
    expect_parse_error(c.text, c.line, c.column, c.needle);
  }
}

TEST(QasmErrorTest, MutatedProgramsThrowOnlyParseErrors) {
  // Random byte edits and truncations of a valid program: each result either parses or throws a
  // located ParseError — never another exception, never a crash.
  const std::string base =
      kHeader +
      "// comment\nqreg q[3];\ncreg c[3];\n"
      "gate g(a, b) x, y { rz(a*2 - b/3) x; cx x, y; u3(a, b, -pi) y; }\n"
      "h q; cx q[0], q[1]; g(0.5, sin(pi/3)^2) q[2], q[0]; /* block */ rzz(1e-2) q[1], q[2];\n"
      "barrier q; crx(-0.25) q[2], q[0]; u2(0, pi) q[1];\n";
  ASSERT_NO_THROW((void)read_qasm(base));
  std::mt19937_64 rng(2024);
  const std::string alphabet = "qh[](){};,+-*/^.e0123456789\"/* \n\x00\xff";
  std::size_t parsed = 0, rejected = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 4) {
        case 0:
          if (at < text.size()) text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 2:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          text.resize(at);
          break;
      }
    }
    try {
      (void)read_qasm(text, "fuzz.qasm");
      ++parsed;
    } catch (const ParseError& e) {
      ++rejected;
      const std::string what = e.what();
      ASSERT_EQ(what.rfind("fuzz.qasm:", 0), 0u) << what;
      ASSERT_GE(e.line(), 1u);
      ASSERT_GE(e.column(), 1u);
      ASSERT_EQ(what.find('\n'), std::string::npos) << what;
    } catch (const std::exception& e) {
      FAIL() << "unexpected exception " << e.what() << " for program:\n" << text;
    }
  }
  EXPECT_GT(parsed, 0u);
  EXPECT_GT(rejected, 300u) << parsed << " parsed";
}

// ---------------------------------------------------------------- measurement, reset, every gate

/// k controls (on |1⟩, the most significant factors) over u.
dense::Matrix controlled_k(int k, const dense::Matrix& u) {
  const int dim = u.dim() << k;
  dense::Matrix m = dense::Matrix::identity(dim);
  const int offset = dim - u.dim();
  for (int r = 0; r < u.dim(); ++r)
    for (int c = 0; c < u.dim(); ++c) m(offset + r, offset + c) = u(r, c);
  return m;
}

dense::Matrix pauli_product(char a, char b) {
  return dense::kron(dense::single_qubit_pauli(a), dense::single_qubit_pauli(b));
}
dense::Matrix two_axis(char a, char b, double t) {
  return Complex(std::cos(t / 2)) * dense::Matrix::identity(4) -
         Complex(0.0, std::sin(t / 2)) * pauli_product(a, b);
}

/// One step of a program as the oracle sees it: a unitary or Kraus operators on some qubits.
struct DenseStep {
  std::vector<dense::Matrix> kraus;  ///< one entry: a unitary
  std::vector<int> qubits;
};

dense::Matrix evolve(dense::Matrix op, const std::vector<DenseStep>& steps, Direction direction, int n) {
  const bool heisenberg = direction == Direction::heisenberg;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const DenseStep& step = steps[heisenberg ? steps.size() - 1 - s : s];
    std::vector<dense::Matrix> full;
    for (const dense::Matrix& k : step.kraus) full.push_back(dense::embed(k, step.qubits, n));
    op = full.size() == 1 ? dense::apply_unitary(op, full[0], heisenberg)
                          : dense::apply_kraus(op, full, heisenberg);
  }
  return op;
}

struct GateSpec {
  std::string name;
  int params;
  int qubits;
  std::function<dense::Matrix(const std::vector<double>&)> matrix;
};

std::vector<GateSpec> every_gate() {
  using V = const std::vector<double>&;
  const auto u3 = [](V v) { return mat_u3(v[0], v[1], v[2]); };
  // rccx / rc3x: their definitions in qelib1.inc, multiplied out here.
  const auto rccx = [](V) {
    // Local qubit j is the (k−1−j)-th bit: the gate's first qubit the most significant factor.
    auto on = [](const dense::Matrix& m, std::vector<int> q) {
      for (int& j : q) j = 2 - j;
      return dense::embed(m, q, 3);
    };
    const dense::Matrix h = on(mat_h(), {2}), t = on(phase(kPi / 4), {2}), td = on(phase(-kPi / 4), {2});
    const dense::Matrix cx_bc = on(controlled(mat_x()), {1, 2}), cx_ac = on(controlled(mat_x()), {0, 2});
    dense::Matrix u = dense::Matrix::identity(8);
    for (const dense::Matrix* g : {&h, &t, &cx_bc, &td, &cx_ac, &t, &cx_bc, &td, &h})
      u = dense::multiply(*g, u);
    return u;
  };
  const auto rc3x = [](V) {
    auto on = [](const dense::Matrix& m, std::vector<int> q) {
      for (int& j : q) j = 3 - j;
      return dense::embed(m, q, 4);
    };
    const dense::Matrix h = on(mat_h(), {3}), t = on(phase(kPi / 4), {3}), td = on(phase(-kPi / 4), {3});
    const dense::Matrix cx_cd = on(controlled(mat_x()), {2, 3}), cx_ad = on(controlled(mat_x()), {0, 3}),
                        cx_bd = on(controlled(mat_x()), {1, 3});
    dense::Matrix u = dense::Matrix::identity(16);
    for (const dense::Matrix* g :
         {&h, &t, &cx_cd, &td, &h, &cx_ad, &t, &cx_bd, &td, &cx_ad, &t, &cx_bd, &td, &h, &t, &cx_cd, &td, &h})
      u = dense::multiply(*g, u);
    return u;
  };
  return {
      {"ccx", 0, 3, [](V) { return controlled_k(2, mat_x()); }},
      {"cswap", 0, 3, [](V) { return controlled_k(1, mat_swap()); }},
      {"c3x", 0, 4, [](V) { return controlled_k(3, mat_x()); }},
      {"c4x", 0, 5, [](V) { return controlled_k(4, mat_x()); }},
      {"rccx", 0, 3, rccx},
      {"rc3x", 0, 4, rc3x},
      {"c3sqrtx", 0, 4, [](V) { return controlled_k(3, mat_sx()); }},
      {"cu3", 3, 2, [=](V v) { return controlled(u3(v)); }},
      {"cu", 4, 2, [=](V v) { return controlled(std::polar(1.0, v[3]) * u3(v)); }},
      {"cu1", 1, 2, [](V v) { return controlled(phase(v[0])); }},
      {"cp", 1, 2, [](V v) { return controlled(phase(v[0])); }},
      {"crx", 1, 2, [](V v) { return controlled(mat_rx(v[0])); }},
      {"cry", 1, 2, [](V v) { return controlled(mat_ry(v[0])); }},
      {"crz", 1, 2, [](V v) { return controlled(mat_rz(v[0])); }},
      {"csx", 0, 2, [](V) { return controlled(mat_sx()); }},
      {"cy", 0, 2, [](V) { return controlled(mat_y()); }},
      {"ch", 0, 2, [](V) { return controlled(mat_h()); }},
      {"cz", 0, 2, [](V) { return controlled(mat_z()); }},
      {"cx", 0, 2, [](V) { return controlled(mat_x()); }},
      {"swap", 0, 2, [](V) { return mat_swap(); }},
      {"iswap", 0, 2,
       [](V) {
         return dense::Matrix{{1, 0, 0, 0}, {0, 0, kI, 0}, {0, kI, 0, 0}, {0, 0, 0, 1}};
       }},
      {"rxx", 1, 2, [](V v) { return two_axis('X', 'X', v[0]); }},
      {"ryy", 1, 2, [](V v) { return two_axis('Y', 'Y', v[0]); }},
      {"rzz", 1, 2, [](V v) { return two_axis('Z', 'Z', v[0]); }},
      {"rzx", 1, 2, [](V v) { return two_axis('Z', 'X', v[0]); }},
      {"u0", 1, 1, [](V) { return dense::Matrix::identity(2); }},
      {"u1", 1, 1, [](V v) { return phase(v[0]); }},
      {"u2", 2, 1, [](V v) { return mat_u3(kPi / 2, v[0], v[1]); }},
      {"u3", 3, 1, u3},
      {"u", 3, 1, u3},
      {"p", 1, 1, [](V v) { return phase(v[0]); }},
      {"sx", 0, 1, [](V) { return mat_sx(); }},
      {"sxdg", 0, 1, [](V) { return dense::adjoint(mat_sx()); }},
      {"id", 0, 1, [](V) { return dense::Matrix::identity(2); }},
      {"h", 0, 1, [](V) { return mat_h(); }},
      {"t", 0, 1, [](V) { return phase(kPi / 4); }},
      {"rx", 1, 1, [](V v) { return mat_rx(v[0]); }},
  };
}

std::vector<dense::Matrix> measure_kraus() {
  return {dense::Matrix{{1, 0}, {0, 0}}, dense::Matrix{{0, 0}, {0, 1}}};
}
std::vector<dense::Matrix> reset_kraus() {
  return {dense::Matrix{{1, 0}, {0, 0}}, dense::Matrix{{0, 1}, {0, 0}}};
}

TEST(QasmMeasureTest, MeasureResetAndBarrierBecomeChannels) {
  const Circuit c = parse(
      "qreg q[3]; creg c[3]; creg d[1];\n"
      "h q[0];\nmeasure q[0] -> c[0];\nbarrier q;\nmeasure q -> c;\nreset q[1];\nreset q;\nmeasure q[2] -> "
      "d[0];\n");
  ASSERT_EQ(c.size(), 10u);
  EXPECT_EQ(c[1].description(), "measure [0]");
  for (std::size_t k = 2; k < 5; ++k)
    EXPECT_EQ(c[k].description(), "measure [" + std::to_string(k - 2) + "]");
  EXPECT_EQ(c[5].description(), "reset [1]");
  for (std::size_t k = 6; k < 9; ++k) EXPECT_EQ(c[k].description(), "reset [" + std::to_string(k - 6) + "]");
  EXPECT_EQ(c[9].description(), "measure [2]");
  EXPECT_TRUE(c[1].is_measurement());
  EXPECT_TRUE(c[5].is_reset());
}

TEST(QasmMeasureTest, MissingVersionLineIsReadAsOpenQasm2WithAWarning) {
  const QasmProgram program =
      read_qasm_program("include \"qelib1.inc\";\nqreg q[2];\ncx q[0], q[1];\n", "old.qasm");
  EXPECT_EQ(program.version, 2);
  ASSERT_EQ(program.warnings.size(), 1u);
  EXPECT_EQ(program.warnings[0].rfind("old.qasm:1:1: warning: no 'OPENQASM' version line", 0), 0u)
      << program.warnings[0];
  EXPECT_EQ(program.circuit.size(), 1u);
  EXPECT_TRUE(read_qasm_program(kHeader + "qreg q[1];").warnings.empty());
}

TEST(QasmMeasureTest, RegistersAreReportedForObservables) {
  const QasmProgram program = read_qasm_program(kHeader + "qreg a[2];\ncreg c[4];\nqreg b[3];\n");
  ASSERT_EQ(program.registers.size(), 2u);
  EXPECT_EQ(register_qubit(program.registers, "a", 1), 1u);
  EXPECT_EQ(register_qubit(program.registers, "b", 0), 2u);
  EXPECT_EQ(register_qubit(program.registers, "b", 2), 4u);
  EXPECT_THROW(register_qubit(program.registers, "b", 3), std::invalid_argument);
  EXPECT_THROW(register_qubit(program.registers, "c", 0), std::invalid_argument);
}

/// Random programs over every gate of the list, with measurements and resets mid-circuit, against the
/// oracle's density-matrix evolution (Kraus maps) in both directions, on the reference and CPU engines.
TEST(QasmMeasureTest, RandomProgramsWithEveryGateMatchTheDensityMatrixOracle) {
  const int n = 5;
  const std::vector<GateSpec> gates = every_gate();
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> angle(-kPi, kPi);
  for (int round = 0; round < 6; ++round) {
    std::string text = kHeader + "qreg q[" + std::to_string(n) + "];\ncreg c[" + std::to_string(n) + "];\n";
    std::vector<DenseStep> steps;
    for (int k = 0; k < 40; ++k) {
      const int pick = static_cast<int>(rng() % (gates.size() + 4));
      std::vector<int> qubits(static_cast<std::size_t>(n));
      std::iota(qubits.begin(), qubits.end(), 0);
      std::shuffle(qubits.begin(), qubits.end(), rng);
      if (pick >= static_cast<int>(gates.size())) {  // measure or reset
        const bool measure = pick % 2 == 0;
        text += measure ? "measure q[" + std::to_string(qubits[0]) + "] -> c[" + std::to_string(qubits[1]) +
                              "];\n"
                        : "reset q[" + std::to_string(qubits[0]) + "];\n";
        steps.push_back({measure ? measure_kraus() : reset_kraus(), {qubits[0]}});
        continue;
      }
      const GateSpec& g = gates[static_cast<std::size_t>(pick)];
      std::vector<double> params;
      for (int p = 0; p < g.params; ++p) params.push_back(angle(rng));
      text += g.name;
      if (g.params > 0) {
        text += "(";
        for (int p = 0; p < g.params; ++p)
          text += (p ? ", " : "") + format_double(params[static_cast<std::size_t>(p)]);
        text += ")";
      }
      for (int q = 0; q < g.qubits; ++q)
        text += (q ? ", q[" : " q[") + std::to_string(qubits[static_cast<std::size_t>(q)]) + "]";
      text += ";\n";
      qubits.resize(static_cast<std::size_t>(g.qubits));
      steps.push_back({{g.matrix(params)}, qubits});
    }
    SCOPED_TRACE(text);
    const Circuit circuit = read_qasm(text);
    const auto terms = testing::random_terms(rng, n, 12, false);
    std::vector<std::pair<std::string, double>> real;
    for (const auto& [label, c] : terms) real.emplace_back(label, c.real());
    const PauliSum<1, double> start = PauliSum<1, double>::from_labels(n, real);
    for (const Direction direction : kDirections) {
      const dense::Matrix expected = evolve(testing::dense_operator(start, n), steps, direction, n);
      for (const Engine engine : {Engine::reference, Engine::cpu}) {
        PauliSum<1, double> sum = start;
        PropagateOptions options;
        options.direction = direction;
        options.engine = engine;
        propagate(sum, circuit, options);
        EXPECT_TRUE(operators_close(testing::dense_operator(sum, n), expected, 1e-10))
            << to_string(direction) << (engine == Engine::cpu ? " cpu" : " reference");
      }
    }
  }
}

// ---------------------------------------------------------------- OpenQASM 3

const std::string kHeader3 = "OPENQASM 3.0;\ninclude \"stdgates.inc\";\n";

QasmProgram parse3(const std::string& body, std::map<std::string, double, std::less<>> inputs = {}) {
  QasmOptions options;
  options.inputs = std::move(inputs);
  return read_qasm_program(kHeader3 + body, "test3.qasm", options);
}

/// The unitary `local` on the given qubits of an n-qubit register (qubits[0] the most significant factor).
::testing::AssertionResult program3_acts_as(const std::string& body, const dense::Matrix& local,
                                            std::vector<int> qubits, int n) {
  const Circuit c = parse3(body).circuit;
  return acts_as(c, dense::embed(local, qubits, n), n, 7);
}

TEST(Qasm3Test, QiskitShapedProgramWithInputsMeasurementsAndReset) {
  const QasmProgram program = parse3(
      "input float[64] theta;\n"
      "bit[3] c;\n"
      "qubit[3] q;\n"
      "h q[0];\ncx q[0], q[1];\nrz(theta) q[1];\nccx q[0], q[1], q[2];\nbarrier q[0], q[1];\nbarrier;\n"
      "c[0] = measure q[0];\nc = measure q;\nmeasure q[2];\nmeasure q[1] -> c[1];\nreset q[2];\n",
      {{"theta", 0.25}});
  EXPECT_EQ(program.version, 3);
  EXPECT_EQ(program.inputs, std::vector<std::string>{"theta"});
  const Circuit& c = program.circuit;
  ASSERT_EQ(c.num_qubits(), 3u);
  ASSERT_EQ(c.size(), 3u + 9u + 7u);  // h cx rz, the Toffoli, 6 measurements and a reset
  expect_rotation(c[2], "Z", 0.25, {1});
  std::size_t measurements = 0, resets = 0;
  for (const Channel& channel : c) {
    measurements += channel.is_measurement();
    resets += channel.is_reset();
  }
  EXPECT_EQ(measurements, 6u);
  EXPECT_EQ(resets, 1u);
}

TEST(Qasm3Test, ModifiersActAsTheirTextbookMatrices) {
  const std::string q = "qubit[3] q;\n";
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ x q[0], q[1];", controlled(mat_x()), {0, 1}, 3));
  // negctrl: X on the target when the control is |0⟩.
  dense::Matrix neg = dense::Matrix::identity(4);
  neg(0, 0) = 0;
  neg(1, 1) = 0;
  neg(0, 1) = 1;
  neg(1, 0) = 1;
  EXPECT_TRUE(program3_acts_as(q + "negctrl @ x q[2], q[0];", neg, {2, 0}, 3));
  EXPECT_TRUE(program3_acts_as(q + "inv @ s q[1];", phase(-kPi / 2), {1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "pow(2) @ s q[1];", mat_z(), {1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "pow(0.5) @ x q[1];", mat_sx(), {1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "pow(-1) @ t q[1];", phase(-kPi / 4), {1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ gphase(0.4) q[2];", phase(0.4), {2}, 3));
  EXPECT_TRUE(program3_acts_as(q + "ctrl(2) @ x q[2], q[0], q[1];", controlled_k(2, mat_x()), {2, 0, 1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ ctrl @ ry(0.3) q[1], q[2], q[0];", controlled_k(2, mat_ry(0.3)),
                               {1, 2, 0}, 3));
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ pow(0.5) @ cx q[0], q[1], q[2];", controlled_k(2, mat_sx()),
                               {0, 1, 2}, 3));
  EXPECT_TRUE(
      program3_acts_as(q + "pow(0.5) @ ccx q[0], q[1], q[2];", controlled_k(2, mat_sx()), {0, 1, 2}, 3));
  EXPECT_TRUE(
      program3_acts_as(q + "ctrl @ swap q[1], q[0], q[2];", controlled_k(1, mat_swap()), {1, 0, 2}, 3));
  EXPECT_TRUE(
      program3_acts_as(q + "inv @ cswap q[1], q[0], q[2];", controlled_k(1, mat_swap()), {1, 0, 2}, 3));
  EXPECT_TRUE(
      program3_acts_as(q + "pow(2) @ ccx q[1], q[0], q[2];", dense::Matrix::identity(8), {0, 1, 2}, 3));
  // stdgates.inc's u3 carries exp(−i(φ+λ)/2): a relative phase once controlled.
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ u3(0.3, 0.5, -0.9) q[0], q[1];",
                               controlled(std::polar(1.0, -(0.5 - 0.9) / 2) * mat_u3(0.3, 0.5, -0.9)), {0, 1},
                               3));
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ rz(0.3) q[0], q[1];", controlled(mat_rz(0.3)), {0, 1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "ctrl @ U(0.3, 0.5, -0.9) q[0], q[1];", controlled(mat_u3(0.3, 0.5, -0.9)),
                               {0, 1}, 3));
  EXPECT_TRUE(program3_acts_as(q + "cu(0.3, 0.5, -0.9, 0.2) q[0], q[1];",
                               controlled(std::polar(1.0, 0.2) * mat_u3(0.3, 0.5, -0.9)), {0, 1}, 3));
}

TEST(Qasm3Test, ModifiersOnDefinedGates) {
  // A defined two-qubit gate with a global phase, controlled: the phase becomes relative.
  const std::string defs =
      "gate g(t) a, b { h a; cx a, b; rz(t) b; gphase(t / 2); }\n"
      "gate three a, b, c { h a; ccx a, b, c; }\n"
      "qubit[3] q;\n";
  const dense::Matrix g =
      Complex(std::polar(1.0, 0.35)) *
      dense::multiply(dense::kron(dense::Matrix::identity(2), mat_rz(0.7)),
                      dense::multiply(controlled(mat_x()), dense::kron(mat_h(), dense::Matrix::identity(2))));
  EXPECT_TRUE(program3_acts_as(defs + "ctrl @ g(0.7) q[2], q[0], q[1];", controlled_k(1, g), {2, 0, 1}, 3));
  EXPECT_TRUE(program3_acts_as(defs + "inv @ g(0.7) q[0], q[1];", dense::adjoint(g), {0, 1}, 3));
  // pow(0.5) twice is g itself.
  const Circuit root = parse3(defs + "pow(0.5) @ g(0.7) q[0], q[1];\npow(0.5) @ g(0.7) q[0], q[1];").circuit;
  EXPECT_TRUE(acts_as(root, dense::embed(g, std::vector<int>{0, 1}, 3), 3, 11));
  // inv and integer pow work on a gate of any size through its channels.
  const dense::Matrix three =
      dense::multiply(controlled_k(2, mat_x()), dense::kron(mat_h(), dense::Matrix::identity(4)));
  EXPECT_TRUE(program3_acts_as(defs + "inv @ three q[0], q[1], q[2];", dense::adjoint(three), {0, 1, 2}, 3));
  EXPECT_TRUE(program3_acts_as(defs + "pow(-2) @ three q[0], q[1], q[2];",
                               dense::adjoint(dense::multiply(three, three)), {0, 1, 2}, 3));
}

TEST(Qasm3Test, ConstantsUnicodeHardwareQubitsAndPowers) {
  const QasmProgram program = read_qasm_program(
      "OPENQASM 3;\ninclude 'stdgates.inc';\nconst float[64] a = π / 4;\nconst int n = 2;\n"
      "gate r(θ) x { rz(θ) x; }\n"
      "rx(a) $0;\nr(τ / 8) $2;\nrz(2 ** n) $1;\nry(euler - ℇ + arccos(0)) $0;\n#pragma anything\n",
      "hw.qasm");
  const Circuit& c = program.circuit;
  EXPECT_EQ(c.num_qubits(), 3u);
  EXPECT_TRUE(program.registers.empty());
  ASSERT_EQ(c.size(), 4u);
  expect_rotation(c[0], "X", kPi / 4, {0});
  expect_rotation(c[1], "Z", kPi / 4, {2});
  expect_rotation(c[2], "Z", 4.0, {1});
  expect_rotation(c[3], "Y", kPi / 2, {0});
}

TEST(Qasm3Test, OldStyleRegistersAndNegativeIndices) {
  const Circuit c = parse3("qreg q[3];\ncreg m[3];\nx q[-1];\nmeasure q -> m;\n").circuit;
  ASSERT_EQ(c.size(), 4u);
  expect_gate(c[0], ChannelKind::x, {2});
}

void expect_parse_error3(const std::string& body, std::size_t line, std::size_t column,
                         const std::string& needle, std::map<std::string, double, std::less<>> inputs = {}) {
  try {
    (void)parse3(body, std::move(inputs));
    ADD_FAILURE() << "no error for " << body;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    if (column) {
      EXPECT_EQ(e.column(), column) << e.what();
    }
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what() << "\nexpected: " << needle;
  }
}

TEST(Qasm3Test, EverythingOutsideTheSubsetIsRefusedAndLocated) {
  const std::string q = "qubit[3] q;\nbit[3] c;\n";
  expect_parse_error3(q + "for int i in [0:2] { x q[0]; }", 5, 1, "loop 'for' is not supported");
  expect_parse_error3(q + "while (true) { }", 5, 1, "loop 'while' is not supported");
  expect_parse_error3(q + "if (c[0]) x q[0];", 5, 1, "classical control 'if' is not supported");
  expect_parse_error3(q + "def f(qubit a) { x a; }", 5, 1, "subroutine 'def' is not supported");
  expect_parse_error3(q + "int[32] k = 3;", 5, 1, "classical declaration 'int' is not supported");
  expect_parse_error3(q + "delay[100ns] q[0];", 5, 1, "timing 'delay' is not supported");
  expect_parse_error3(q + "box { x q[0]; }", 5, 1, "timing 'box' is not supported");
  expect_parse_error3(q + "defcal x $0 { }", 5, 1, "pulse calibration 'defcal'");
  expect_parse_error3(q + "c[0] = c[1];", 5, 8, "classical assignment is not supported");
  expect_parse_error3(q + "rz(2 ^ 3) q[0];", 5, 6, "'^' is a bitwise XOR in OpenQASM 3");
  expect_parse_error3(q + "x q[0:1];", 5, 6, "index ranges are not supported");
  expect_parse_error3(q + "x q[{0, 1}];", 5, 5, "index sets and ranges are not supported");
  expect_parse_error3(q + "rccx q[0], q[1], q[2];", 5, 1,
                      "unknown gate 'rccx' (OpenQASM 2's qelib1.inc has it");
  expect_parse_error3(q + "ctrl(8) @ x q[0], q[1], q[2];", 5, 11, "takes 9 qubit arguments, got 3");
  expect_parse_error3("qubit[6] q;\nctrl(5) @ x q[0], q[1], q[2], q[3], q[4], q[5];", 4, 11,
                      "acts on 6 qubits");
  expect_parse_error3(q + "ctrl(0) @ x q[0];", 5, 5, "ctrl(n): n must be an integer constant from 1 to 8");
  expect_parse_error3(
      "qubit[4] q;\ngate three a, b, c { ccx a, b, c; }\nctrl @ three q[0], q[1], q[2], q[3];", 5, 8,
      "supported on defined gates of at most two");
  expect_parse_error3(q + "gate three a, b, c { ccx a, b, c; }\npow(0.5) @ three q[0], q[1], q[2];", 6, 12,
                      "need the matrix of gate 'three'");
  expect_parse_error3("input float[64] theta;\nqubit q;\nrz(theta) q;", 3, 17, "input 'theta' has no value");
  expect_parse_error3("input int n;", 3, 7, "input of type 'int' is not supported");
  expect_parse_error3(q + "@annotation\nx q[0];", 5, 1, "annotations");
  expect_parse_error3(q + "x $0;", 5, 3, "hardware qubit '$0' in a program that declares qubit registers");
  expect_parse_error3(q + "measure q[0] -> d[0];", 5, 17, "undeclared classical register 'd'");
  expect_parse_error3(q + "c = measure q[0];", 5, 1, "measure: 1 qubit into 3 bits");
  expect_parse_error3(q + "opaque g a;", 5, 1, "opaque gate 'g' is not supported");
  expect_parse_error3("include \"qelib1.inc\";", 3, 9, "only \"stdgates.inc\"");
  expect_parse_error3("gate x a { U(pi, 0, pi) a; }", 3, 6, "already defined by stdgates.inc");
  // An input given on the command line that the program does not declare.
  QasmOptions options;
  options.inputs = {{"phi", 1.0}};
  EXPECT_THROW((void)read_qasm_program(kHeader3 + "qubit q;", "x.qasm", options), std::invalid_argument);
}

TEST(Qasm3Test, MutatedProgramsThrowOnlyParseErrors) {
  const std::string base = kHeader3 +
                           "input float[64] theta;\nconst float[64] a = π / 2;\nqubit[3] q;\nbit[3] c;\n"
                           "gate g(t) x, y { ctrl @ rz(t) x, y; gphase(-t / 2); }\n"
                           "h q[0]; ctrl @ x q[0], q[1]; inv @ pow(2) @ s q[2]; g(theta ** 2) q[1], q[2];\n"
                           "negctrl @ ctrl @ ry(a) q[0], q[1], q[2]; c[0] = measure q[0]; reset q[1];\n"
                           "c = measure q; barrier q; ccx q[2], q[0], q[1]; rz(τ) q[0];\n";
  QasmOptions options;
  options.inputs = {{"theta", 0.3}};
  ASSERT_NO_THROW((void)read_qasm_program(base, "fuzz3.qasm", options));
  std::mt19937_64 rng(77);
  const std::string alphabet = "q@[](){};,=+-*/.e0123$\"' \n\xcf\x80\xff";
  std::size_t parsed = 0, rejected = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string text = base;
    for (int e = 0, edits = 1 + static_cast<int>(rng() % 3); e < edits; ++e) {
      const std::size_t at = rng() % (text.size() + 1);
      const char ch = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          if (at < text.size()) text[at] = ch;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), ch);
          break;
        default:
          if (at < text.size()) text.erase(at, 1);
          break;
      }
    }
    try {
      (void)read_qasm_program(text, "fuzz3.qasm", options);
      ++parsed;
    } catch (const ParseError& e) {
      ++rejected;
      ASSERT_EQ(std::string(e.what()).rfind("fuzz3.qasm:", 0), 0u) << e.what();
      ASSERT_GE(e.line(), 1u);
      ASSERT_GE(e.column(), 1u);
    } catch (const std::exception& e) {
      FAIL() << "unexpected exception " << e.what() << " for program:\n" << text;
    }
  }
  EXPECT_GT(parsed, 0u);
  EXPECT_GT(rejected, 100u);
}

TEST(QasmReadTest, AGeneratedLargeProgramReadsCompletely) {
  // The 10^6-gate timing is a benchmark (io/qasm.perf.cc, docs/PERFORMANCE.md); here a small file of
  // the same shape checks that everything in it arrives.
  std::string text = kHeader + "qreg q[100];\ncreg c[100];\n";
  std::size_t expected = 0;
  for (int g = 0; g < 20000; ++g) {
    const int a = g % 100, b = (g * 7 + 1) % 100, c = (g * 13 + 2) % 100;
    if (g % 10 == 0 && a != b && b != c && a != c) {
      text += "ccx q[" + std::to_string(a) + "],q[" + std::to_string(b) + "],q[" + std::to_string(c) + "];\n";
      expected += 9;
    } else if (g % 2 == 0 && a != b) {
      text += "cx q[" + std::to_string(a) + "],q[" + std::to_string(b) + "];\n";
      ++expected;
    } else {
      text += "rz(" + std::to_string(g * 1e-3) + ") q[" + std::to_string(a) + "];\n";
      ++expected;
    }
  }
  text += "measure q -> c;\n";
  expected += 100;
  EXPECT_EQ(read_qasm(text).size(), expected);
}

}  // namespace
}  // namespace paulistrings::io
