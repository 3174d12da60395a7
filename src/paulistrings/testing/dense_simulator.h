// Dense-matrix oracle for testing the Pauli-propagation library.
//
// Everything here is written straight from textbook definitions on explicit 2^n x 2^n complex matrices
// (at most kMaxQubits qubits) so that tests have an independent ground truth to compare the library
// against. It deliberately depends on no other paulistrings header: labels are plain strings and
// operators are plain dense matrices. Speed is irrelevant; obviousness is the point.
//
// Conventions (normative; the library must agree with them):
//   * Qubit q of an n-qubit register is bit q of the computational-basis index (little-endian).
//   * In a Pauli label, character q is the Pauli on qubit q (leftmost = qubit 0), alphabet I X Y Z,
//     with Y = [[0,-i],[i,0]] and no extra phase.
//   * A k-qubit local matrix given for qubits (q_0, ..., q_{k-1}) has q_0 as its MOST significant
//     tensor factor: local index = sum_j b(q_j) 2^(k-1-j). E.g. cnot(control, target).
//   * R_P(theta) = exp(-i theta P / 2).
//   * Forward (Schrodinger) action on an operator: U A U^dag, sum_j K_j A K_j^dag.
//     Heisenberg (adjoint) action: U^dag A U, sum_j K_j^dag A K_j.

#ifndef PAULISTRINGS_TESTING_DENSE_SIMULATOR_H_
#define PAULISTRINGS_TESTING_DENSE_SIMULATOR_H_

#include <complex>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paulistrings::testing::dense {

using Complex = std::complex<double>;

/// Largest register the oracle accepts (256 x 256 operators).
inline constexpr int kMaxQubits = 8;

/// Square dense complex matrix, stored row-major.
class Matrix {
 public:
  /// The empty 0 x 0 matrix.
  Matrix() = default;
  /// Literal matrix from its rows, e.g. Matrix{{0, 1}, {1, 0}}; throws std::invalid_argument if not square.
  Matrix(std::initializer_list<std::initializer_list<Complex>> rows);

  /// dim x dim matrix of zeros.
  static Matrix zeros(int dim);
  /// dim x dim identity.
  static Matrix identity(int dim);

  int dim() const { return dim_; }
  Complex& operator()(int row, int col) { return entries_[index(row, col)]; }
  const Complex& operator()(int row, int col) const { return entries_[index(row, col)]; }

 private:
  std::size_t index(int row, int col) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(dim_) + static_cast<std::size_t>(col);
  }

  int dim_ = 0;
  std::vector<Complex> entries_;
};

/// Matrix product a * b.
Matrix multiply(const Matrix& a, const Matrix& b);
/// Conjugate transpose.
Matrix adjoint(const Matrix& a);
/// Tensor product with `a` the more significant factor: (a (x) b)(ra*db+rb, ca*db+cb) = a(ra,ca) b(rb,cb).
Matrix kron(const Matrix& a, const Matrix& b);
Complex trace(const Matrix& a);
Matrix operator+(const Matrix& a, const Matrix& b);
Matrix operator-(const Matrix& a, const Matrix& b);
Matrix operator*(Complex scale, const Matrix& a);
/// Largest entrywise |a - b|; throws std::invalid_argument if the dimensions differ.
double max_abs_diff(const Matrix& a, const Matrix& b);

/// 2 x 2 matrix of one Pauli letter (I, X, Y or Z).
Matrix single_qubit_pauli(char letter);

/// Full 2^n x 2^n matrix of an n-character Pauli label (character q acts on qubit q = bit q).
Matrix pauli_matrix(std::string_view label);

/// Local gate matrix (2x2 or 4x4; two-qubit gates have their first qubit as the more significant factor).
/// Names: h s sdg x y z sx sxdg t tdg cnot cy cz swap iswap ecr, and rx ry rz rxx ryy rzz taking
/// params = {theta}. Throws std::invalid_argument on an unknown name or a wrong parameter count.
Matrix gate_matrix(std::string_view name, std::span<const double> params = {});

/// Local 2^k x 2^k matrix of exp(-i theta P / 2) for the k-letter Pauli P; letter 0 is the most
/// significant local factor (so it acts on qubits[0] after embed()).
Matrix pauli_rotation_matrix(std::string_view letters, double theta);

/// Local Kraus operators of a noise channel: depolarize {p}, dephase {p}, pauli_channel {px, py, pz},
/// amplitude_damping {gamma} (2x2 each) and depolarize2 {p} (4x4). Throws std::invalid_argument on an
/// unknown name, a wrong parameter count or probabilities outside [0, 1].
std::vector<Matrix> kraus_operators(std::string_view name, std::span<const double> params);

/// Full 2^n x 2^n operator acting as `local` on `qubits` (qubits[0] = most significant local factor) and
/// as the identity on every other qubit.
Matrix embed(const Matrix& local, std::span<const int> qubits, int num_qubits);

/// U A U^dag (forward) or U^dag A U (Heisenberg); `full_u` is already embedded.
Matrix apply_unitary(const Matrix& op, const Matrix& full_u, bool heisenberg);

/// sum_j K_j A K_j^dag (forward) or sum_j K_j^dag A K_j (Heisenberg); the Kraus operators are embedded.
Matrix apply_kraus(const Matrix& op, const std::vector<Matrix>& full_kraus, bool heisenberg);

/// sum_P c_P P over the given (label, coefficient) terms; every label must have num_qubits characters.
Matrix operator_from_pauli_terms(int num_qubits, const std::vector<std::pair<std::string, Complex>>& terms);

/// Pauli decomposition c_P = tr(P op) / 2^n over all 4^n labels, in lexicographic label order
/// (I < X < Y < Z, qubit 0 first), omitting terms with |c_P| <= drop_below.
std::vector<std::pair<std::string, Complex>> pauli_terms_from_operator(const Matrix& op,
                                                                       double drop_below = 0.0);

/// Product state vector; character q is qubit q's state: 0, 1, + , -, r = (|0> + i|1>)/sqrt2,
/// l = (|0> - i|1>)/sqrt2.
std::vector<Complex> product_state(std::string_view per_qubit_labels);

/// The unique state stabilized by n independent commuting signed generators such as "+XZI", "-ZZI"
/// (no sign means +). Computed as the normalized projection prod_j (I + g_j)/2 of the basis state with
/// the largest overlap, so its global phase is arbitrary. Throws std::invalid_argument when the
/// generators have no common +1 eigenstate or do not determine it uniquely.
std::vector<Complex> stabilizer_state(int num_qubits, const std::vector<std::string>& signed_generators);

/// <psi| op |psi>.
Complex expectation(const Matrix& op, const std::vector<Complex>& state);

/// One circuit instruction for apply_gate().
struct DenseGate {
  /// A gate_matrix() name, "pauli_rotation", "unitary_1q", "unitary_2q", a kraus_operators() name, "id",
  /// "measure" (non-selective measurement of the Pauli product `pauli`: Kraus operators (I ± P)/2) or
  /// "reset" (to the +1 eigenstate of the one-letter basis `pauli`: Kraus |b+⟩⟨b+| and |b+⟩⟨b−|).
  std::string name = {};
  /// Qubits in the gate's own order (cnot: control first).
  std::vector<int> qubits = {};
  /// Angle {theta} for rotations, probabilities for noise channels.
  std::vector<double> params = {};
  /// Pauli letters for "pauli_rotation" and "measure" (letter k acts on qubits[k]); the basis for "reset".
  std::string pauli = {};
  /// Local matrix for "unitary_1q" / "unitary_2q".
  Matrix matrix = {};
};

/// Applies one instruction to an operator on num_qubits qubits, forward or in the Heisenberg picture.
/// Throws std::invalid_argument on a malformed instruction.
Matrix apply_gate(const Matrix& op, const DenseGate& gate, int num_qubits, bool heisenberg);

}  // namespace paulistrings::testing::dense

#endif  // PAULISTRINGS_TESTING_DENSE_SIMULATOR_H_
