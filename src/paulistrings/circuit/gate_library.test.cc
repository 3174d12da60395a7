// The gate library checked gate by gate against unitaries written here from their textbook
// definitions: the product of a gate's channels (each channel's matrix from the dense oracle) equals
// the gate's unitary up to a global phase, for every standard gate with random parameters; the forms
// used by OpenQASM 3's modifiers equal the textbook matrices exactly (phase included); the controlled
// construction for random cores, controls and negations; diagonals; powers on the principal branch.

#include "paulistrings/circuit/gate_library.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

namespace dense = testing::dense;
using testing::dense::Matrix;
constexpr double kPi = std::numbers::pi;
const Complex kI(0.0, 1.0);

Matrix from_small(const SmallMatrix& m) {
  const int d = static_cast<int>(std::lround(std::sqrt(static_cast<double>(m.size()))));
  Matrix out = Matrix::zeros(d);
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) out(r, c) = m[static_cast<std::size_t>(r * d + c)];
  return out;
}

/// The unitary of a channel sequence on qubits 0..n−1, each channel's local matrix from the oracle.
Matrix unitary_of(const std::vector<Channel>& channels, int n) {
  Matrix u = Matrix::identity(1 << n);
  for (const Channel& channel : channels) {
    const dense::DenseGate g = testing::to_dense_gate(channel);
    Matrix local;
    if (g.name == "pauli_rotation") {
      local = dense::pauli_rotation_matrix(g.pauli, g.params.at(0));
    } else if (g.name == "unitary_1q" || g.name == "unitary_2q") {
      local = g.matrix;
    } else {
      local = dense::gate_matrix(g.name, g.params);
    }
    u = dense::multiply(dense::embed(local, g.qubits, n), u);
  }
  return u;
}

/// The full matrix of a local one (its qubit 0 the most significant factor) on qubits 0..n−1.
Matrix on_register(const Matrix& local, int n) {
  std::vector<int> qubits(static_cast<std::size_t>(n));
  for (int q = 0; q < n; ++q) qubits[static_cast<std::size_t>(q)] = q;
  return dense::embed(local, qubits, n);
}

::testing::AssertionResult equal_up_to_phase(const Matrix& actual, const Matrix& expected,
                                             double tolerance = 1e-12) {
  int br = 0, bc = 0;
  for (int r = 0; r < expected.dim(); ++r)
    for (int c = 0; c < expected.dim(); ++c)
      if (std::abs(expected(r, c)) > std::abs(expected(br, bc))) br = r, bc = c;
  const Complex phase = actual(br, bc) / expected(br, bc);
  if (std::abs(std::abs(phase) - 1.0) > tolerance)
    return ::testing::AssertionFailure() << "|phase| = " << std::abs(phase);
  const double difference = dense::max_abs_diff(actual, phase * expected);
  if (difference <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |actual − phase·expected| = " << difference;
}

// ---- textbook matrices, written here independently of the library

Matrix u3(double t, double p, double l) {
  return Matrix{{std::cos(t / 2), -std::polar(std::sin(t / 2), l)},
                {std::polar(std::sin(t / 2), p), std::polar(std::cos(t / 2), p + l)}};
}
Matrix x() { return Matrix{{0, 1}, {1, 0}}; }
Matrix y() { return Matrix{{0, -kI}, {kI, 0}}; }
Matrix z() { return Matrix{{1, 0}, {0, -1}}; }
Matrix h() { return Complex(1 / std::sqrt(2.0)) * Matrix{{1, 1}, {1, -1}}; }
Matrix phase(double l) { return Matrix{{1, 0}, {0, std::polar(1.0, l)}}; }
Matrix sx() { return Complex(0.5) * Matrix{{1.0 + kI, 1.0 - kI}, {1.0 - kI, 1.0 + kI}}; }
Matrix rx(double t) {
  return Matrix{{std::cos(t / 2), -kI * std::sin(t / 2)}, {-kI * std::sin(t / 2), std::cos(t / 2)}};
}
Matrix ry(double t) {
  return Matrix{{std::cos(t / 2), -std::sin(t / 2)}, {std::sin(t / 2), std::cos(t / 2)}};
}
Matrix rz(double t) { return Matrix{{std::polar(1.0, -t / 2), 0}, {0, std::polar(1.0, t / 2)}}; }
Matrix pauli_pair(char a, char b) {
  return dense::kron(dense::single_qubit_pauli(a), dense::single_qubit_pauli(b));
}
Matrix two_axis(char a, char b, double t) {
  return Complex(std::cos(t / 2)) * Matrix::identity(4) - Complex(0.0, std::sin(t / 2)) * pauli_pair(a, b);
}
/// k controls (on |1⟩, the most significant factors) over u.
Matrix controlled(int k, const Matrix& u) {
  const int dim = u.dim() << k;
  Matrix m = Matrix::identity(dim);
  const int offset = dim - u.dim();
  for (int r = 0; r < u.dim(); ++r)
    for (int c = 0; c < u.dim(); ++c) m(offset + r, offset + c) = u(r, c);
  return m;
}
Matrix swap() { return Matrix{{1, 0, 0, 0}, {0, 0, 1, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}}; }

struct Case {
  std::string name;
  std::vector<double> params;
  Matrix unitary;  ///< textbook, exact phase (used for the forms)
};

std::vector<Case> cases(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> angle(-kPi, kPi);
  const double a = angle(rng), b = angle(rng), c = angle(rng), d = angle(rng);
  return {
      {"id", {}, Matrix::identity(2)},
      {"u0", {a}, Matrix::identity(2)},
      {"x", {}, x()},
      {"y", {}, y()},
      {"z", {}, z()},
      {"h", {}, h()},
      {"s", {}, phase(kPi / 2)},
      {"sdg", {}, phase(-kPi / 2)},
      {"t", {}, phase(kPi / 4)},
      {"tdg", {}, phase(-kPi / 4)},
      {"sx", {}, sx()},
      {"sxdg", {}, dense::adjoint(sx())},
      {"rx", {a}, rx(a)},
      {"ry", {a}, ry(a)},
      {"rz", {a}, rz(a)},
      {"p", {a}, phase(a)},
      {"u1", {a}, phase(a)},
      {"u2", {a, b}, std::polar(1.0, -(a + b) / 2) * u3(kPi / 2, a, b)},
      {"u3", {a, b, c}, std::polar(1.0, -(b + c) / 2) * u3(a, b, c)},
      {"u", {a, b, c}, u3(a, b, c)},
      {"U", {a, b, c}, u3(a, b, c)},
      {"u3", {0.0, b, c}, std::polar(1.0, -(b + c) / 2) * u3(0.0, b, c)},
      {"cx", {}, controlled(1, x())},
      {"CX", {}, controlled(1, x())},
      {"cy", {}, controlled(1, y())},
      {"cz", {}, controlled(1, z())},
      {"ch", {}, controlled(1, h())},
      {"swap", {}, swap()},
      {"iswap", {}, Matrix{{1, 0, 0, 0}, {0, 0, kI, 0}, {0, kI, 0, 0}, {0, 0, 0, 1}}},
      {"crx", {a}, controlled(1, rx(a))},
      {"cry", {a}, controlled(1, ry(a))},
      {"crz", {a}, controlled(1, rz(a))},
      {"cp", {a}, controlled(1, phase(a))},
      {"cu1", {a}, controlled(1, phase(a))},
      {"cu3", {a, b, c}, controlled(1, u3(a, b, c))},
      {"cu", {a, b, c, d}, controlled(1, std::polar(1.0, d) * u3(a, b, c))},
      {"csx", {}, controlled(1, sx())},
      {"rxx", {a}, two_axis('X', 'X', a)},
      {"ryy", {a}, two_axis('Y', 'Y', a)},
      {"rzz", {a}, two_axis('Z', 'Z', a)},
      {"rzx", {a}, two_axis('Z', 'X', a)},
      {"ccx", {}, controlled(2, x())},
      {"cswap", {}, controlled(1, swap())},
      {"c3x", {}, controlled(3, x())},
      {"c4x", {}, controlled(4, x())},
      {"c3sqrtx", {}, controlled(3, sx())},
      {"rccx", {}, Matrix{}},
      {"rc3x", {}, Matrix{}},
  };
}

TEST(GateLibrary, EveryGateIsItsUnitary) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 4; ++round) {
    for (const Case& c : cases(rng)) {
      SCOPED_TRACE(c.name);
      const StandardGate* gate = find_standard_gate(c.name, GateLibrary::qelib1);
      ASSERT_NE(gate, nullptr);
      ASSERT_EQ(static_cast<std::size_t>(gate->params), c.params.size());
      if (c.unitary.dim() == 0) continue;  // rccx, rc3x: below
      std::vector<Qubit> qubits;
      for (int q = 0; q < gate->qubits; ++q) qubits.push_back(static_cast<Qubit>(q));
      std::vector<Channel> channels;
      append_standard_gate(*gate, c.params, qubits, channels);
      EXPECT_TRUE(
          equal_up_to_phase(unitary_of(channels, gate->qubits), on_register(c.unitary, gate->qubits)));
      // The form (what ctrl @, inv @ and pow @ build on) has the exact phase.
      const std::optional<ControlledGate> form = standard_gate_form(*gate, c.params);
      ASSERT_TRUE(form.has_value());
      EXPECT_LE(dense::max_abs_diff(from_small(controlled_matrix(*form)), c.unitary), 1e-14);
    }
  }
}

TEST(GateLibrary, RelativePhaseToffolisAreToffolisUpToADiagonal) {
  for (const auto& [name, k] : {std::pair<std::string, int>{"rccx", 2}, {"rc3x", 3}}) {
    SCOPED_TRACE(name);
    const StandardGate* gate = find_standard_gate(name, GateLibrary::qelib1);
    ASSERT_NE(gate, nullptr);
    std::vector<Qubit> qubits;
    for (int q = 0; q <= k; ++q) qubits.push_back(static_cast<Qubit>(q));
    std::vector<Channel> channels;
    append_standard_gate(*gate, {}, qubits, channels);
    // U · C^k X† must be diagonal with unit-modulus entries.
    const Matrix product =
        dense::multiply(unitary_of(channels, k + 1), dense::adjoint(on_register(controlled(k, x()), k + 1)));
    for (int r = 0; r < product.dim(); ++r)
      for (int c = 0; c < product.dim(); ++c)
        EXPECT_NEAR(std::abs(product(r, c)), r == c ? 1.0 : 0.0, 1e-12) << r << "," << c;
    EXPECT_FALSE(standard_gate_form(*gate, {}).has_value());
  }
  EXPECT_EQ(find_standard_gate("rcccx", GateLibrary::qelib1)->id, StandardGateId::rc3x);
}

TEST(GateLibrary, LibrariesNameTheirOwnGates) {
  EXPECT_NE(find_standard_gate("c3x", GateLibrary::qelib1), nullptr);
  EXPECT_EQ(find_standard_gate("c3x", GateLibrary::stdgates), nullptr);
  EXPECT_NE(find_standard_gate("cphase", GateLibrary::stdgates), nullptr);
  EXPECT_EQ(find_standard_gate("cphase", GateLibrary::qelib1), nullptr);
  EXPECT_EQ(find_standard_gate("rzx", GateLibrary::stdgates)->origin, GateOrigin::extension);
  EXPECT_EQ(find_standard_gate("U", GateLibrary::qelib1)->origin, GateOrigin::language);
  EXPECT_EQ(find_standard_gate("nope", GateLibrary::qelib1), nullptr);
}

TEST(GateLibrary, ToffoliIsAHadamardPairAroundSevenQuarterTurnRotations) {
  std::vector<Channel> channels;
  const Qubit q[] = {4, 7, 2};
  append_standard_gate(*find_standard_gate("ccx", GateLibrary::qelib1), {}, q, channels);
  ASSERT_EQ(channels.size(), 9u);
  EXPECT_EQ(channels.front().description(), "h [2]");
  EXPECT_EQ(channels.back().description(), "h [2]");
  for (std::size_t k = 1; k + 1 < channels.size(); ++k) {
    EXPECT_TRUE(channels[k].is_rotation());
    EXPECT_NEAR(std::abs(channels[k].theta()), kPi / 4, 1e-15) << channels[k].description();
  }
}

TEST(GateLibrary, ControlledRandomCoresWithNegatedControls) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 24; ++round) {
    ControlledGate gate;
    gate.targets = round % 2 ? 2 : 1;
    const int controls = 1 + round % 3;
    if (gate.targets == 2 && controls > 1) continue;  // at most 3 qubits besides c3x-like cases
    for (int k = 0; k < controls; ++k) gate.negated.push_back((rng() & 1) != 0);
    const std::vector<Complex> core = testing::random_unitary(rng, 1 << gate.targets);
    gate.core.assign(core.begin(), core.end());
    const int n = static_cast<int>(gate.num_qubits());
    std::vector<Qubit> qubits;
    for (int q = 0; q < n; ++q) qubits.push_back(static_cast<Qubit>(q));
    std::vector<Channel> channels;
    append_controlled(gate, qubits, channels);
    // The textbook matrix: X on the negated controls around the plain controlled core.
    Matrix flips = Matrix::identity(1);
    for (int k = 0; k < controls; ++k)
      flips = dense::kron(flips, gate.negated[static_cast<std::size_t>(k)] ? x() : Matrix::identity(2));
    flips = dense::kron(flips, Matrix::identity(1 << gate.targets));
    const Matrix expected =
        dense::multiply(flips, dense::multiply(controlled(controls, from_small(gate.core)), flips));
    EXPECT_TRUE(equal_up_to_phase(unitary_of(channels, n), on_register(expected, n), 1e-11))
        << "round " << round;
    EXPECT_LE(dense::max_abs_diff(from_small(controlled_matrix(gate)), expected), 1e-14);
  }
}

TEST(GateLibrary, DiagonalsBecomeZRotations) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> angle(-kPi, kPi);
  for (int n = 1; n <= 4; ++n) {
    std::vector<double> phases(std::size_t{1} << n);
    for (double& p : phases) p = angle(rng);
    std::vector<Qubit> qubits;
    for (int q = 0; q < n; ++q) qubits.push_back(static_cast<Qubit>(q));
    std::vector<Channel> channels;
    append_diagonal(qubits, phases, channels);
    EXPECT_EQ(channels.size(), (std::size_t{1} << n) - 1);
    Matrix expected = Matrix::zeros(1 << n);
    for (int x = 0; x < (1 << n); ++x) expected(x, x) = std::polar(1.0, phases[static_cast<std::size_t>(x)]);
    EXPECT_TRUE(equal_up_to_phase(unitary_of(channels, n), on_register(expected, n)));
  }
  // A constant phase is a global phase: nothing to do.
  std::vector<Channel> none;
  const Qubit two[] = {0, 1};
  append_diagonal(two, std::vector<double>(4, 0.7), none);
  EXPECT_TRUE(none.empty());
}

TEST(GateLibrary, PowersOnThePrincipalBranch) {
  const SmallMatrix z_gate = {1.0, 0.0, 0.0, -1.0};
  const SmallMatrix s_gate = unitary_power(z_gate, 0.5);
  EXPECT_LE(dense::max_abs_diff(from_small(s_gate), phase(kPi / 2)), 1e-14);  // √Z = S, not S†
  const SmallMatrix x_gate = {0.0, 1.0, 1.0, 0.0};
  EXPECT_LE(dense::max_abs_diff(from_small(unitary_power(x_gate, 0.5)), sx()), 1e-14);
  std::mt19937_64 rng(3);
  for (int dim : {2, 4}) {
    const std::vector<Complex> v = testing::random_unitary(rng, dim);
    const SmallMatrix u(v.begin(), v.end());
    const SmallMatrix root = unitary_power(u, 0.5);
    EXPECT_LE(dense::max_abs_diff(from_small(matrix_multiply(root, root)), from_small(u)), 1e-12);
    EXPECT_LE(dense::max_abs_diff(from_small(unitary_power(u, -1.0)), from_small(matrix_adjoint(u))), 1e-12);
    EXPECT_LE(dense::max_abs_diff(from_small(unitary_power(u, 3.0)),
                                  from_small(matrix_multiply(u, matrix_multiply(u, u)))),
              1e-12);
  }
  // Degenerate eigenvalues (SWAP: 1, 1, 1, −1).
  const SmallMatrix sw = {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  const SmallMatrix root = unitary_power(sw, 0.5);
  EXPECT_LE(dense::max_abs_diff(from_small(matrix_multiply(root, root)), from_small(sw)), 1e-12);
}

}  // namespace
}  // namespace paulistrings
