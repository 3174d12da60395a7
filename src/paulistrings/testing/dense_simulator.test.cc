// Self-tests of the dense oracle: every convention it promises is pinned here against hand-derived
// textbook results, so the library tests that compare against it rest on checked ground.

#include "paulistrings/testing/dense_simulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace paulistrings::testing::dense {
namespace {

constexpr Complex kI{0.0, 1.0};
constexpr double kTolerance = 1e-12;

std::vector<std::string> all_labels(int num_qubits) {
  std::vector<std::string> labels = {""};
  for (int q = 0; q < num_qubits; ++q) {
    std::vector<std::string> longer;
    for (const std::string& prefix : labels) {
      for (char letter : std::string("IXYZ")) longer.push_back(prefix + letter);
    }
    labels = std::move(longer);
  }
  return labels;
}

// Two Pauli strings anticommute iff they hold different non-identity letters on an odd number of qubits.
bool anticommute(const std::string& a, const std::string& b) {
  int clashes = 0;
  for (std::size_t q = 0; q < a.size(); ++q) clashes += a[q] != 'I' && b[q] != 'I' && a[q] != b[q];
  return clashes % 2 == 1;
}

Matrix random_matrix(int dim, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Matrix result = Matrix::zeros(dim);
  for (int r = 0; r < dim; ++r) {
    for (int c = 0; c < dim; ++c) result(r, c) = Complex(uniform(rng), uniform(rng));
  }
  return result;
}

Matrix apply_to_label(const std::string& label, const DenseGate& gate, bool heisenberg) {
  return apply_gate(pauli_matrix(label), gate, static_cast<int>(label.size()), heisenberg);
}

#define EXPECT_MATRIX_NEAR(actual, expected, tolerance) \
  EXPECT_LE(max_abs_diff((actual), (expected)), (tolerance))

// ---------------------------------------------------------------- Pauli matrices

TEST(DenseSimulatorPauliTest, SingleLettersAreTheTextbookMatrices) {
  EXPECT_MATRIX_NEAR(pauli_matrix("I"), (Matrix{{1, 0}, {0, 1}}), 0.0);
  EXPECT_MATRIX_NEAR(pauli_matrix("X"), (Matrix{{0, 1}, {1, 0}}), 0.0);
  EXPECT_MATRIX_NEAR(pauli_matrix("Y"), (Matrix{{0, -kI}, {kI, 0}}), 0.0);
  EXPECT_MATRIX_NEAR(pauli_matrix("Z"), (Matrix{{1, 0}, {0, -1}}), 0.0);
}

TEST(DenseSimulatorPauliTest, LeftmostCharacterIsQubitZeroIsLeastSignificantBit) {
  // X on qubit 0 maps basis index 0 to basis index 1.
  EXPECT_EQ(pauli_matrix("XI")(1, 0), Complex(1.0));
  EXPECT_EQ(pauli_matrix("IX")(2, 0), Complex(1.0));
  EXPECT_MATRIX_NEAR(pauli_matrix("IZ"), (Matrix{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1}}),
                     0.0);
  // The highest qubit is the most significant tensor factor.
  const Matrix x = single_qubit_pauli('X');
  const Matrix y = single_qubit_pauli('Y');
  const Matrix z = single_qubit_pauli('Z');
  EXPECT_MATRIX_NEAR(pauli_matrix("XYZ"), kron(z, kron(y, x)), 0.0);
}

TEST(DenseSimulatorPauliTest, MultiplicationTable) {
  EXPECT_MATRIX_NEAR(multiply(pauli_matrix("X"), pauli_matrix("Y")), kI * pauli_matrix("Z"), 0.0);
  EXPECT_MATRIX_NEAR(multiply(pauli_matrix("Y"), pauli_matrix("Z")), kI * pauli_matrix("X"), 0.0);
  EXPECT_MATRIX_NEAR(multiply(pauli_matrix("Z"), pauli_matrix("X")), kI * pauli_matrix("Y"), 0.0);
  for (const std::string& label : all_labels(2)) {
    EXPECT_MATRIX_NEAR(multiply(pauli_matrix(label), pauli_matrix(label)), Matrix::identity(4), 0.0) << label;
  }
}

TEST(DenseSimulatorPauliTest, InvalidLabelsThrow) {
  EXPECT_THROW(pauli_matrix("XA"), std::invalid_argument);
  EXPECT_THROW(pauli_matrix("IIIIIIIII"), std::invalid_argument);  // 9 qubits
}

// ---------------------------------------------------------------- gate matrices

TEST(DenseSimulatorGateTest, EveryGateIsUnitary) {
  const std::vector<double> theta = {0.37};
  for (const char* name : {"h", "s", "sdg", "x", "y", "z", "sx", "sxdg", "t", "tdg", "cnot", "cy", "cz",
                           "swap", "iswap", "ecr"}) {
    const Matrix u = gate_matrix(name);
    EXPECT_MATRIX_NEAR(multiply(adjoint(u), u), Matrix::identity(u.dim()), kTolerance) << name;
  }
  for (const char* name : {"rx", "ry", "rz", "rxx", "ryy", "rzz"}) {
    const Matrix u = gate_matrix(name, theta);
    EXPECT_MATRIX_NEAR(multiply(adjoint(u), u), Matrix::identity(u.dim()), kTolerance) << name;
  }
  const Matrix weight3 = pauli_rotation_matrix("XYZ", 0.91);
  EXPECT_MATRIX_NEAR(multiply(adjoint(weight3), weight3), Matrix::identity(8), kTolerance);
}

TEST(DenseSimulatorGateTest, SingleQubitGatesMatchTextbookIdentities) {
  const double r = 1.0 / std::numbers::sqrt2;
  EXPECT_MATRIX_NEAR(gate_matrix("h"), Complex(r) * (pauli_matrix("X") + pauli_matrix("Z")), kTolerance);
  EXPECT_MATRIX_NEAR(multiply(gate_matrix("s"), gate_matrix("s")), pauli_matrix("Z"), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("sdg"), adjoint(gate_matrix("s")), 0.0);
  EXPECT_MATRIX_NEAR(multiply(gate_matrix("sx"), gate_matrix("sx")), pauli_matrix("X"), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("sxdg"), adjoint(gate_matrix("sx")), 0.0);
  EXPECT_MATRIX_NEAR(multiply(gate_matrix("t"), gate_matrix("t")), gate_matrix("s"), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("tdg"), adjoint(gate_matrix("t")), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("x"), pauli_matrix("X"), 0.0);
  EXPECT_MATRIX_NEAR(gate_matrix("y"), pauli_matrix("Y"), 0.0);
  EXPECT_MATRIX_NEAR(gate_matrix("z"), pauli_matrix("Z"), 0.0);
}

TEST(DenseSimulatorGateTest, RotationsMatchExplicitMatrices) {
  const double theta = 0.73;
  const std::vector<double> params = {theta};
  const double c = std::cos(theta / 2);
  const double s = std::sin(theta / 2);
  const Complex minus = std::polar(1.0, -theta / 2);
  const Complex plus = std::polar(1.0, theta / 2);
  EXPECT_MATRIX_NEAR(gate_matrix("rx", params), (Matrix{{c, -kI * s}, {-kI * s, c}}), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("ry", params), (Matrix{{c, -s}, {s, c}}), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("rz", params), (Matrix{{minus, 0}, {0, plus}}), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("rzz", params),
                     (Matrix{{minus, 0, 0, 0}, {0, plus, 0, 0}, {0, 0, plus, 0}, {0, 0, 0, minus}}),
                     kTolerance);
  const Matrix xx = kron(single_qubit_pauli('X'), single_qubit_pauli('X'));
  const Matrix yy = kron(single_qubit_pauli('Y'), single_qubit_pauli('Y'));
  EXPECT_MATRIX_NEAR(gate_matrix("rxx", params), Complex(c) * Matrix::identity(4) - (kI * s) * xx,
                     kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("ryy", params), Complex(c) * Matrix::identity(4) - (kI * s) * yy,
                     kTolerance);
  EXPECT_MATRIX_NEAR(pauli_rotation_matrix("XX", theta), gate_matrix("rxx", params), 0.0);
}

TEST(DenseSimulatorGateTest, TwoQubitGatesHaveTheFirstQubitMostSignificant) {
  const Matrix id = Matrix::identity(2);
  const Matrix x = single_qubit_pauli('X');
  const Matrix y = single_qubit_pauli('Y');
  const Matrix z = single_qubit_pauli('Z');
  const Matrix p0 = Complex(0.5) * (id + z);
  const Matrix p1 = Complex(0.5) * (id - z);
  EXPECT_MATRIX_NEAR(gate_matrix("cnot"), (Matrix{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}, {0, 0, 1, 0}}),
                     0.0);
  EXPECT_MATRIX_NEAR(gate_matrix("cnot"), kron(p0, id) + kron(p1, x), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("cy"), kron(p0, id) + kron(p1, y), kTolerance);
  EXPECT_MATRIX_NEAR(gate_matrix("cz"), kron(p0, id) + kron(p1, z), kTolerance);
  // ecr = (IX - XY) / sqrt2 with the first factor on the first qubit.
  EXPECT_MATRIX_NEAR(gate_matrix("ecr"), Complex(1.0 / std::numbers::sqrt2) * (kron(id, x) - kron(x, y)),
                     kTolerance);
  // iswap = exp(i pi/4 (XX + YY)); XX and YY commute, so it factorizes into two rotations.
  EXPECT_MATRIX_NEAR(gate_matrix("iswap"),
                     multiply(pauli_rotation_matrix("XX", -std::numbers::pi / 2),
                              pauli_rotation_matrix("YY", -std::numbers::pi / 2)),
                     kTolerance);
  const Matrix swap = gate_matrix("swap");
  for (const std::string& label : all_labels(2)) {
    const std::string swapped = {label[1], label[0]};
    EXPECT_MATRIX_NEAR(apply_unitary(pauli_matrix(label), swap, false), pauli_matrix(swapped), 0.0) << label;
  }
}

TEST(DenseSimulatorGateTest, BadNamesAndParametersThrow) {
  const std::vector<double> theta = {0.1};
  EXPECT_THROW(gate_matrix("foo"), std::invalid_argument);
  EXPECT_THROW(gate_matrix("rz"), std::invalid_argument);
  EXPECT_THROW(gate_matrix("h", theta), std::invalid_argument);
  EXPECT_THROW(pauli_rotation_matrix("", 0.1), std::invalid_argument);
  EXPECT_THROW(pauli_rotation_matrix("XQ", 0.1), std::invalid_argument);
}

// ---------------------------------------------------------------- embedding

TEST(DenseSimulatorEmbedTest, FirstListedQubitIsMostSignificantLocalFactor) {
  const std::vector<int> qubits = {3, 1};
  const Matrix full_cnot = embed(gate_matrix("cnot"), qubits, 4);
  for (int column = 0; column < 16; ++column) {
    const int control = (column >> 3) & 1;
    const int expected_row = column ^ (control << 1);
    for (int row = 0; row < 16; ++row) {
      EXPECT_EQ(full_cnot(row, column), Complex(row == expected_row ? 1.0 : 0.0)) << row << "," << column;
    }
  }
  // X on qubits[0] = 3 and Z on qubits[1] = 1.
  EXPECT_MATRIX_NEAR(embed(kron(single_qubit_pauli('X'), single_qubit_pauli('Z')), qubits, 4),
                     pauli_matrix("IZIX"), 0.0);
}

TEST(DenseSimulatorEmbedTest, GeneralLocalMatrixLandsOnTheRightEntries) {
  std::mt19937 rng(7);
  const Matrix local = random_matrix(4, rng);
  const std::vector<int> qubits = {3, 1};
  const Matrix full = embed(local, qubits, 4);
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 16; ++c) {
      const bool spectators_agree = (r & 0b0101) == (c & 0b0101);
      const int local_r = 2 * ((r >> 3) & 1) + ((r >> 1) & 1);
      const int local_c = 2 * ((c >> 3) & 1) + ((c >> 1) & 1);
      EXPECT_EQ(full(r, c), spectators_agree ? local(local_r, local_c) : Complex(0.0));
    }
  }
}

TEST(DenseSimulatorEmbedTest, PauliRotationLettersFollowTheQubitList) {
  const std::vector<int> qubits = {2, 0, 3};
  const double theta = 0.58;
  const Matrix expected =
      Complex(std::cos(theta / 2)) * Matrix::identity(16) - (kI * std::sin(theta / 2)) * pauli_matrix("YIXZ");
  EXPECT_MATRIX_NEAR(embed(pauli_rotation_matrix("XYZ", theta), qubits, 4), expected, kTolerance);
}

TEST(DenseSimulatorEmbedTest, InvalidQubitListsThrow) {
  const std::vector<int> repeated = {1, 1};
  const std::vector<int> out_of_range = {0, 4};
  const std::vector<int> too_few = {0};
  EXPECT_THROW(embed(gate_matrix("cnot"), repeated, 4), std::invalid_argument);
  EXPECT_THROW(embed(gate_matrix("cnot"), out_of_range, 4), std::invalid_argument);
  EXPECT_THROW(embed(gate_matrix("cnot"), too_few, 4), std::invalid_argument);
}

// ---------------------------------------------------------------- Clifford conventions

struct CliffordImage {
  const char* gate;
  std::vector<int> qubits;
  const char* input;
  double sign;
  const char* output;
};

TEST(DenseSimulatorCliffordTest, ForwardImagesWithSigns) {
  const std::vector<CliffordImage> cases = {
      {"h", {0}, "X", 1, "Z"},         {"h", {0}, "Z", 1, "X"},         {"h", {0}, "Y", -1, "Y"},
      {"s", {0}, "X", 1, "Y"},         {"s", {0}, "Y", -1, "X"},        {"s", {0}, "Z", 1, "Z"},
      {"sdg", {0}, "X", -1, "Y"},      {"sdg", {0}, "Y", 1, "X"},       {"x", {0}, "Z", -1, "Z"},
      {"cnot", {0, 1}, "XI", 1, "XX"}, {"cnot", {0, 1}, "IZ", 1, "ZZ"}, {"cnot", {0, 1}, "ZI", 1, "ZI"},
      {"cnot", {0, 1}, "IX", 1, "IX"}, {"cnot", {1, 0}, "IX", 1, "XX"}, {"cnot", {1, 0}, "ZI", 1, "ZZ"},
      {"cz", {0, 1}, "XI", 1, "XZ"},   {"cz", {0, 1}, "IX", 1, "ZX"},   {"cz", {0, 1}, "ZI", 1, "ZI"},
      {"swap", {0, 1}, "XZ", 1, "ZX"}, {"swap", {0, 1}, "YI", 1, "IY"}, {"cnot", {2, 0}, "IIX", 1, "XIX"},
  };
  for (const CliffordImage& c : cases) {
    const DenseGate gate{.name = c.gate, .qubits = c.qubits};
    EXPECT_MATRIX_NEAR(apply_to_label(c.input, gate, false), Complex(c.sign) * pauli_matrix(c.output),
                       kTolerance)
        << c.gate << " " << c.input;
  }
}

TEST(DenseSimulatorCliffordTest, HeisenbergSConjugation) {
  // S^dag X S = -Y, the inverse of the forward image S X S^dag = Y.
  EXPECT_MATRIX_NEAR(apply_to_label("X", DenseGate{.name = "s", .qubits = {0}}, true),
                     Complex(-1.0) * pauli_matrix("Y"), kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("Y", DenseGate{.name = "s", .qubits = {0}}, true), pauli_matrix("X"),
                     kTolerance);
}

TEST(DenseSimulatorCliffordTest, HeisenbergUndoesForwardForEveryGate) {
  std::mt19937 rng(11);
  const Matrix op = random_matrix(8, rng);
  const std::vector<DenseGate> gates = {
      {.name = "h", .qubits = {1}},
      {.name = "sx", .qubits = {2}},
      {.name = "t", .qubits = {0}},
      {.name = "cy", .qubits = {2, 0}},
      {.name = "iswap", .qubits = {0, 2}},
      {.name = "ecr", .qubits = {1, 0}},
      {.name = "ry", .qubits = {1}, .params = {0.4}},
      {.name = "ryy", .qubits = {2, 1}, .params = {1.3}},
      {.name = "pauli_rotation", .qubits = {0, 1, 2}, .params = {0.8}, .pauli = "ZXY"},
  };
  for (const DenseGate& gate : gates) {
    const Matrix round_trip = apply_gate(apply_gate(op, gate, 3, false), gate, 3, true);
    EXPECT_MATRIX_NEAR(round_trip, op, kTolerance) << gate.name;
  }
}

// ---------------------------------------------------------------- rotations

TEST(DenseSimulatorRotationTest, RzOnXExactNumbers) {
  const DenseGate rz{.name = "rz", .qubits = {0}, .params = {0.3}};
  for (const bool heisenberg : {true, false}) {
    const auto terms = pauli_terms_from_operator(apply_to_label("X", rz, heisenberg), 1e-14);
    ASSERT_EQ(terms.size(), 2U);
    EXPECT_EQ(terms[0].first, "X");
    EXPECT_NEAR(terms[0].second.real(), 0.955336489125606, 1e-15);
    EXPECT_NEAR(terms[0].second.imag(), 0.0, 1e-15);
    EXPECT_EQ(terms[1].first, "Y");
    EXPECT_NEAR(terms[1].second.real(), heisenberg ? -0.29552020666133955 : 0.29552020666133955, 1e-15);
    EXPECT_NEAR(terms[1].second.imag(), 0.0, 1e-15);
  }
}

TEST(DenseSimulatorRotationTest, Weight3RotationOnRandomPaulis) {
  // P = X on qubit 2, Y on qubit 0, Z on qubit 3 of 4 qubits.
  const DenseGate rotation{.name = "pauli_rotation", .qubits = {2, 0, 3}, .params = {0}, .pauli = "XYZ"};
  const std::string p_label = "YIXZ";
  const Matrix p = pauli_matrix(p_label);
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> letter(0, 3);
  std::uniform_real_distribution<double> angle(-std::numbers::pi, std::numbers::pi);
  int anticommuting_checked = 0;
  int commuting_checked = 0;
  while (anticommuting_checked < 12 || commuting_checked < 4) {
    std::string q_label;
    for (int q = 0; q < 4; ++q) q_label += "IXYZ"[letter(rng)];
    const double theta = angle(rng);
    DenseGate gate = rotation;
    gate.params = {theta};
    const Matrix q = pauli_matrix(q_label);
    const Matrix pq = multiply(p, q);
    if (anticommute(p_label, q_label)) {
      // R^dag Q R = cos(theta) Q + i sin(theta) P Q; forward has the opposite sign.
      EXPECT_MATRIX_NEAR(apply_to_label(q_label, gate, true),
                         Complex(std::cos(theta)) * q + (kI * std::sin(theta)) * pq, kTolerance)
          << q_label;
      EXPECT_MATRIX_NEAR(apply_to_label(q_label, gate, false),
                         Complex(std::cos(theta)) * q - (kI * std::sin(theta)) * pq, kTolerance)
          << q_label;
      ++anticommuting_checked;
    } else {
      EXPECT_MATRIX_NEAR(apply_to_label(q_label, gate, true), q, kTolerance) << q_label;
      EXPECT_MATRIX_NEAR(apply_to_label(q_label, gate, false), q, kTolerance) << q_label;
      ++commuting_checked;
    }
  }
}

// ---------------------------------------------------------------- noise channels

struct ScalingCase {
  const char* channel;
  std::vector<double> params;
  const char* pauli;
  double factor;
};

TEST(DenseSimulatorChannelTest, PauliChannelsScalePaulisInBothDirections) {
  const double p = 0.12;
  const double px = 0.05, py = 0.1, pz = 0.15;
  const std::vector<ScalingCase> cases = {
      {"depolarize", {p}, "I", 1},
      {"depolarize", {p}, "X", 1 - 4 * p / 3},
      {"depolarize", {p}, "Y", 1 - 4 * p / 3},
      {"depolarize", {p}, "Z", 1 - 4 * p / 3},
      {"dephase", {p}, "I", 1},
      {"dephase", {p}, "X", 1 - 2 * p},
      {"dephase", {p}, "Y", 1 - 2 * p},
      {"dephase", {p}, "Z", 1},
      {"pauli_channel", {px, py, pz}, "I", 1},
      {"pauli_channel", {px, py, pz}, "X", 1 - 2 * (py + pz)},
      {"pauli_channel", {px, py, pz}, "Y", 1 - 2 * (px + pz)},
      {"pauli_channel", {px, py, pz}, "Z", 1 - 2 * (px + py)},
  };
  for (const ScalingCase& c : cases) {
    // Act on qubit 1 of 2 so the embedding is exercised too.
    const DenseGate gate{.name = c.channel, .qubits = {1}, .params = c.params};
    const std::string label = std::string("I") + c.pauli;
    for (const bool heisenberg : {false, true}) {
      EXPECT_MATRIX_NEAR(apply_to_label(label, gate, heisenberg), Complex(c.factor) * pauli_matrix(label),
                         kTolerance)
          << c.channel << " " << c.pauli << (heisenberg ? " heisenberg" : " forward");
    }
  }
}

TEST(DenseSimulatorChannelTest, Depolarize2ScalesEveryNonIdentityPauli) {
  const double p = 0.3;
  const DenseGate gate{.name = "depolarize2", .qubits = {2, 0}, .params = {p}};
  for (const std::string& pair : all_labels(2)) {
    // Letters on qubits 2 and 0 of 3; qubit 1 idle.
    const std::string label = {pair[1], 'I', pair[0]};
    const double factor = pair == "II" ? 1.0 : 1 - 16 * p / 15;
    for (const bool heisenberg : {false, true}) {
      EXPECT_MATRIX_NEAR(apply_to_label(label, gate, heisenberg), Complex(factor) * pauli_matrix(label),
                         kTolerance)
          << label;
    }
  }
}

TEST(DenseSimulatorChannelTest, AmplitudeDampingForwardAndHeisenberg) {
  const double gamma = 0.3;
  const DenseGate gate{.name = "amplitude_damping", .qubits = {0}, .params = {gamma}};
  const Matrix id = pauli_matrix("I");
  const Matrix x = pauli_matrix("X");
  const Matrix y = pauli_matrix("Y");
  const Matrix z = pauli_matrix("Z");
  const Complex shrink(std::sqrt(1 - gamma));
  // Forward: |1> decays to |0>, so the identity picks up a Z component.
  EXPECT_MATRIX_NEAR(apply_to_label("I", gate, false), id + Complex(gamma) * z, kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("Z", gate, false), Complex(1 - gamma) * z, kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("X", gate, false), shrink * x, kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("Y", gate, false), shrink * y, kTolerance);
  // Heisenberg: the map is unital, and Z picks up an identity component.
  EXPECT_MATRIX_NEAR(apply_to_label("I", gate, true), id, kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("Z", gate, true), Complex(1 - gamma) * z + Complex(gamma) * id,
                     kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("X", gate, true), shrink * x, kTolerance);
  EXPECT_MATRIX_NEAR(apply_to_label("Y", gate, true), shrink * y, kTolerance);
}

const std::vector<std::pair<std::string, std::vector<double>>>& all_channels() {
  static const std::vector<std::pair<std::string, std::vector<double>>> kChannels = {
      {"depolarize", {0.2}},        {"depolarize", {1.0}},
      {"dephase", {0.35}},          {"pauli_channel", {0.1, 0.2, 0.3}},
      {"depolarize2", {0.25}},      {"amplitude_damping", {0.4}},
      {"amplitude_damping", {1.0}},
  };
  return kChannels;
}

TEST(DenseSimulatorChannelTest, KrausOperatorsAreComplete) {
  for (const auto& [name, params] : all_channels()) {
    const std::vector<Matrix> kraus = kraus_operators(name, params);
    Matrix sum = Matrix::zeros(kraus.front().dim());
    for (const Matrix& k : kraus) sum = sum + multiply(adjoint(k), k);
    EXPECT_MATRIX_NEAR(sum, Matrix::identity(sum.dim()), kTolerance) << name;
  }
}

TEST(DenseSimulatorChannelTest, HeisenbergIsTheAdjointMap) {
  // tr(A E(B)) = tr(E^dag(A) B) for all A, B.
  std::mt19937 rng(5);
  for (const auto& [name, params] : all_channels()) {
    const DenseGate gate{.name = name,
                         .qubits = name == "depolarize2" ? std::vector<int>{0, 2} : std::vector<int>{1},
                         .params = params};
    const Matrix a = random_matrix(8, rng);
    const Matrix b = random_matrix(8, rng);
    const Complex forward = trace(multiply(a, apply_gate(b, gate, 3, false)));
    const Complex backward = trace(multiply(apply_gate(a, gate, 3, true), b));
    EXPECT_LE(std::abs(forward - backward), 1e-11) << name;
  }
}

TEST(DenseSimulatorChannelTest, BadChannelParametersThrow) {
  const std::vector<double> too_large = {1.5};
  const std::vector<double> negative = {-0.1};
  const std::vector<double> oversum = {0.5, 0.4, 0.3};
  const std::vector<double> two = {0.1, 0.1};
  EXPECT_THROW(kraus_operators("depolarize", too_large), std::invalid_argument);
  EXPECT_THROW(kraus_operators("dephase", negative), std::invalid_argument);
  EXPECT_THROW(kraus_operators("pauli_channel", oversum), std::invalid_argument);
  EXPECT_THROW(kraus_operators("amplitude_damping", two), std::invalid_argument);
  EXPECT_THROW(kraus_operators("bitflip", negative), std::invalid_argument);
}

// ---------------------------------------------------------------- states

TEST(DenseSimulatorStateTest, ProductStateSingleQubitExpectations) {
  struct Case {
    const char* state;
    double x, y, z;
  };
  for (const Case& c : {Case{"0", 0, 0, 1}, Case{"1", 0, 0, -1}, Case{"+", 1, 0, 0}, Case{"-", -1, 0, 0},
                        Case{"r", 0, 1, 0}, Case{"l", 0, -1, 0}}) {
    const std::vector<Complex> psi = product_state(c.state);
    EXPECT_NEAR(std::abs(expectation(pauli_matrix("X"), psi) - c.x), 0.0, kTolerance) << c.state;
    EXPECT_NEAR(std::abs(expectation(pauli_matrix("Y"), psi) - c.y), 0.0, kTolerance) << c.state;
    EXPECT_NEAR(std::abs(expectation(pauli_matrix("Z"), psi) - c.z), 0.0, kTolerance) << c.state;
  }
}

TEST(DenseSimulatorStateTest, ProductStateQubitOrderAndMultiQubitExpectations) {
  const std::vector<Complex> one_on_qubit0 = product_state("1000");
  for (std::size_t i = 0; i < one_on_qubit0.size(); ++i)
    EXPECT_EQ(one_on_qubit0[i], Complex(i == 1 ? 1.0 : 0.0));

  const std::vector<Complex> psi = product_state("0+rl");
  EXPECT_NEAR(expectation(pauli_matrix("IIII"), psi).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("ZIII"), psi).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("IXII"), psi).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("IIYI"), psi).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("IIIY"), psi).real(), -1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("ZXYY"), psi).real(), -1.0, kTolerance);
  EXPECT_NEAR(std::abs(expectation(pauli_matrix("XIII"), psi)), 0.0, kTolerance);
  EXPECT_THROW(product_state("0x"), std::invalid_argument);
}

TEST(DenseSimulatorStateTest, BellPairStabilizerState) {
  const std::vector<Complex> bell = stabilizer_state(2, {"+XX", "+ZZ"});
  EXPECT_NEAR(expectation(pauli_matrix("XX"), bell).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("ZZ"), bell).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("YY"), bell).real(), -1.0, kTolerance);
  EXPECT_NEAR(std::abs(expectation(pauli_matrix("ZI"), bell)), 0.0, kTolerance);
  EXPECT_NEAR(std::abs(bell[0]), 1.0 / std::numbers::sqrt2, kTolerance);
  EXPECT_NEAR(std::abs(bell[3]), 1.0 / std::numbers::sqrt2, kTolerance);
}

TEST(DenseSimulatorStateTest, SignedAndLargerStabilizerStates) {
  // -Z on qubit 0 puts qubit 0 in |1>, i.e. basis index 1.
  const std::vector<Complex> one_zero = stabilizer_state(2, {"-ZI", "IZ"});
  EXPECT_NEAR(std::abs(one_zero[1]), 1.0, kTolerance);

  const std::vector<Complex> ghz = stabilizer_state(3, {"XXX", "ZZI", "IZZ"});
  EXPECT_NEAR(expectation(pauli_matrix("XXX"), ghz).real(), 1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("YYX"), ghz).real(), -1.0, kTolerance);
  EXPECT_NEAR(expectation(pauli_matrix("ZIZ"), ghz).real(), 1.0, kTolerance);

  EXPECT_NEAR(expectation(pauli_matrix("Y"), stabilizer_state(1, {"-Y"})).real(), -1.0, kTolerance);
}

TEST(DenseSimulatorStateTest, InvalidStabilizerGeneratorsThrow) {
  EXPECT_THROW(stabilizer_state(2, {"XI", "ZI"}), std::invalid_argument);   // anticommuting
  EXPECT_THROW(stabilizer_state(2, {"ZZ", "-ZZ"}), std::invalid_argument);  // contradictory
  EXPECT_THROW(stabilizer_state(2, {"ZZ", "ZZ"}), std::invalid_argument);   // dependent
  EXPECT_THROW(stabilizer_state(2, {"ZZ"}), std::invalid_argument);         // too few
  EXPECT_THROW(stabilizer_state(2, {"ZZ", "XXX"}), std::invalid_argument);  // wrong length
}

// ---------------------------------------------------------------- Pauli decomposition

TEST(DenseSimulatorDecompositionTest, RoundTripsPauliTerms) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::map<std::string, Complex> expected;
  for (const std::string& label : all_labels(3)) {
    if (uniform(rng) > 0.3) continue;  // keep a sparse random subset
    expected[label] = Complex(uniform(rng), uniform(rng));
  }
  ASSERT_FALSE(expected.empty());
  const std::vector<std::pair<std::string, Complex>> terms(expected.begin(), expected.end());
  const auto decomposed = pauli_terms_from_operator(operator_from_pauli_terms(3, terms), 1e-12);
  ASSERT_EQ(decomposed.size(), terms.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    EXPECT_EQ(decomposed[i].first, terms[i].first);
    EXPECT_NEAR(std::abs(decomposed[i].second - terms[i].second), 0.0, kTolerance) << terms[i].first;
  }
}

TEST(DenseSimulatorDecompositionTest, DenseOperatorDecomposesCompletelyInLabelOrder) {
  std::mt19937 rng(3);
  const Matrix op = random_matrix(8, rng);
  const auto terms = pauli_terms_from_operator(op, -1.0);
  ASSERT_EQ(terms.size(), 64U);
  for (std::size_t i = 0; i + 1 < terms.size(); ++i) EXPECT_LT(terms[i].first, terms[i + 1].first);
  EXPECT_MATRIX_NEAR(operator_from_pauli_terms(3, terms), op, kTolerance);
}

TEST(DenseSimulatorDecompositionTest, EightQubitRoundTrip) {
  const std::vector<std::pair<std::string, Complex>> terms = {
      {"IIIIIIII", 0.5}, {"XYZIIZYX", Complex(0.0, -0.25)}, {"ZZZZZZZZ", 1.5}};
  const auto decomposed = pauli_terms_from_operator(operator_from_pauli_terms(8, terms), 1e-12);
  ASSERT_EQ(decomposed.size(), terms.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    EXPECT_EQ(decomposed[i].first, terms[i].first);
    EXPECT_NEAR(std::abs(decomposed[i].second - terms[i].second), 0.0, kTolerance);
  }
}

// ---------------------------------------------------------------- apply_gate

TEST(DenseSimulatorApplyGateTest, CustomUnitariesAndRotationsMatchNamedGates) {
  std::mt19937 rng(17);
  const Matrix op = random_matrix(8, rng);
  const DenseGate custom_cnot{.name = "unitary_2q", .qubits = {2, 0}, .matrix = gate_matrix("cnot")};
  const DenseGate cnot{.name = "cnot", .qubits = {2, 0}};
  const DenseGate custom_h{.name = "unitary_1q", .qubits = {1}, .matrix = gate_matrix("h")};
  const DenseGate h{.name = "h", .qubits = {1}};
  const DenseGate rzz{.name = "rzz", .qubits = {0, 2}, .params = {0.6}};
  const DenseGate pauli_zz{.name = "pauli_rotation", .qubits = {0, 2}, .params = {0.6}, .pauli = "ZZ"};
  for (const bool heisenberg : {false, true}) {
    EXPECT_MATRIX_NEAR(apply_gate(op, custom_cnot, 3, heisenberg), apply_gate(op, cnot, 3, heisenberg), 0.0);
    EXPECT_MATRIX_NEAR(apply_gate(op, custom_h, 3, heisenberg), apply_gate(op, h, 3, heisenberg), 0.0);
    EXPECT_MATRIX_NEAR(apply_gate(op, pauli_zz, 3, heisenberg), apply_gate(op, rzz, 3, heisenberg), 0.0);
  }
  EXPECT_MATRIX_NEAR(apply_gate(op, DenseGate{.name = "id", .qubits = {1}}, 3, false), op, 0.0);
}

TEST(DenseSimulatorApplyGateTest, MalformedInstructionsThrow) {
  const Matrix op = Matrix::identity(4);
  EXPECT_THROW(apply_gate(op, DenseGate{.name = "bogus", .qubits = {0}}, 2, false), std::invalid_argument);
  EXPECT_THROW(apply_gate(op, DenseGate{.name = "cnot", .qubits = {0}}, 2, false), std::invalid_argument);
  EXPECT_THROW(apply_gate(op, DenseGate{.name = "h", .qubits = {2}}, 2, false), std::invalid_argument);
  EXPECT_THROW(apply_gate(op, DenseGate{.name = "h", .qubits = {0}}, 3, false), std::invalid_argument);
  EXPECT_THROW(
      apply_gate(op, DenseGate{.name = "unitary_2q", .qubits = {0, 1}, .matrix = gate_matrix("h")}, 2, false),
      std::invalid_argument);
  EXPECT_THROW(
      apply_gate(op, DenseGate{.name = "pauli_rotation", .qubits = {0, 1}, .params = {0.1}, .pauli = "X"}, 2,
                 false),
      std::invalid_argument);
}

}  // namespace
}  // namespace paulistrings::testing::dense
