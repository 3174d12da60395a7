#include "paulistrings/testing/dense_simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace paulistrings::testing::dense {
namespace {

constexpr Complex kI{0.0, 1.0};

[[noreturn]] void fail(const std::string& message) {
  throw std::invalid_argument("dense simulator: " + message);
}

void check_num_qubits(int num_qubits) {
  if (num_qubits < 0 || num_qubits > kMaxQubits) {
    fail("number of qubits " + std::to_string(num_qubits) + " outside [0, " + std::to_string(kMaxQubits) +
         "]");
  }
}

int dim_of(int num_qubits) { return 1 << num_qubits; }

void check_pauli_letters(std::string_view letters) {
  for (char letter : letters) {
    if (letter != 'I' && letter != 'X' && letter != 'Y' && letter != 'Z') {
      fail("invalid Pauli letter '" + std::string(1, letter) + "' in \"" + std::string(letters) + "\"");
    }
  }
}

void check_same_dim(const Matrix& a, const Matrix& b) {
  if (a.dim() != b.dim())
    fail("dimension mismatch " + std::to_string(a.dim()) + " vs " + std::to_string(b.dim()));
}

// A Pauli string as the signed permutation it is: P|column> = i^k(column) |column ^ flip_mask>, with the
// flips and phases read off the 2x2 matrices of single_qubit_pauli(). Decompositions evaluate this
// 4^n 2^n times, so the per-qubit lookups are done once per label and phases are kept as quarter turns.
class PauliAction {
 public:
  explicit PauliAction(std::string_view label) : quarter_turns_(label.size()) {
    for (std::size_t q = 0; q < label.size(); ++q) {
      const Matrix sigma = single_qubit_pauli(label[q]);
      for (int bit_in = 0; bit_in < 2; ++bit_in) {
        // Each column of a single-qubit Pauli holds exactly one nonzero entry, a power of i.
        const int bit_out = sigma(0, bit_in) != 0.0 ? 0 : 1;
        if (bit_out != bit_in) flip_mask_ |= std::size_t{1} << q;
        const Complex entry = sigma(bit_out, bit_in);
        quarter_turns_[q][static_cast<std::size_t>(bit_in)] =
            static_cast<int>(std::find(kPowersOfI.begin(), kPowersOfI.end(), entry) - kPowersOfI.begin());
      }
    }
  }

  std::size_t row(std::size_t column) const { return column ^ flip_mask_; }

  Complex amplitude(std::size_t column) const {
    int total_turns = 0;
    for (std::size_t q = 0; q < quarter_turns_.size(); ++q)
      total_turns += quarter_turns_[q][(column >> q) & 1U];
    return kPowersOfI[static_cast<std::size_t>(total_turns % 4)];
  }

 private:
  static constexpr std::array<Complex, 4> kPowersOfI = {Complex(1, 0), Complex(0, 1), Complex(-1, 0),
                                                        Complex(0, -1)};
  std::size_t flip_mask_ = 0;
  std::vector<std::array<int, 2>> quarter_turns_;  // per qubit, indexed by that qubit's input bit
};

Matrix pauli_string_as_local_matrix(std::string_view letters) {
  // Letter 0 is the most significant local factor, so it goes leftmost in the tensor product.
  Matrix product = Matrix::identity(1);
  for (char letter : letters) product = kron(product, single_qubit_pauli(letter));
  return product;
}

double single_param(std::string_view name, std::span<const double> params) {
  if (params.size() != 1) fail(std::string(name) + " takes exactly one parameter");
  return params[0];
}

double probability(std::string_view name, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    fail(std::string(name) + ": probability " + std::to_string(p) + " outside [0, 1]");
  return p;
}

std::vector<Complex> apply_signed_pauli(std::string_view label, double sign,
                                        const std::vector<Complex>& state) {
  std::vector<Complex> result(state.size(), 0.0);
  const PauliAction pauli(label);
  for (std::size_t column = 0; column < state.size(); ++column) {
    result[pauli.row(column)] += sign * pauli.amplitude(column) * state[column];
  }
  return result;
}

double norm_squared(const std::vector<Complex>& state) {
  double total = 0.0;
  for (const Complex& amplitude : state) total += std::norm(amplitude);
  return total;
}

}  // namespace

// ---------------------------------------------------------------- Matrix

Matrix::Matrix(std::initializer_list<std::initializer_list<Complex>> rows)
    : dim_(static_cast<int>(rows.size())) {
  entries_.reserve(rows.size() * rows.size());
  for (const auto& row : rows) {
    if (row.size() != rows.size()) fail("matrix literal is not square");
    entries_.insert(entries_.end(), row.begin(), row.end());
  }
}

Matrix Matrix::zeros(int dim) {
  if (dim < 0) fail("negative matrix dimension");
  Matrix result;
  result.dim_ = dim;
  result.entries_.assign(static_cast<std::size_t>(dim) * static_cast<std::size_t>(dim), 0.0);
  return result;
}

Matrix Matrix::identity(int dim) {
  Matrix result = zeros(dim);
  for (int i = 0; i < dim; ++i) result(i, i) = 1.0;
  return result;
}

Matrix multiply(const Matrix& a, const Matrix& b) {
  check_same_dim(a, b);
  const int dim = a.dim();
  Matrix result = Matrix::zeros(dim);
  for (int r = 0; r < dim; ++r) {
    for (int k = 0; k < dim; ++k) {
      const Complex a_rk = a(r, k);
      if (a_rk == 0.0) continue;
      for (int c = 0; c < dim; ++c) result(r, c) += a_rk * b(k, c);
    }
  }
  return result;
}

Matrix adjoint(const Matrix& a) {
  Matrix result = Matrix::zeros(a.dim());
  for (int r = 0; r < a.dim(); ++r) {
    for (int c = 0; c < a.dim(); ++c) result(c, r) = std::conj(a(r, c));
  }
  return result;
}

Matrix kron(const Matrix& a, const Matrix& b) {
  const int db = b.dim();
  Matrix result = Matrix::zeros(a.dim() * db);
  for (int ra = 0; ra < a.dim(); ++ra) {
    for (int ca = 0; ca < a.dim(); ++ca) {
      for (int rb = 0; rb < db; ++rb) {
        for (int cb = 0; cb < db; ++cb) result(ra * db + rb, ca * db + cb) = a(ra, ca) * b(rb, cb);
      }
    }
  }
  return result;
}

Complex trace(const Matrix& a) {
  Complex total = 0.0;
  for (int i = 0; i < a.dim(); ++i) total += a(i, i);
  return total;
}

Matrix operator+(const Matrix& a, const Matrix& b) {
  check_same_dim(a, b);
  Matrix result = a;
  for (int r = 0; r < a.dim(); ++r) {
    for (int c = 0; c < a.dim(); ++c) result(r, c) += b(r, c);
  }
  return result;
}

Matrix operator-(const Matrix& a, const Matrix& b) { return a + Complex(-1.0) * b; }

Matrix operator*(Complex scale, const Matrix& a) {
  Matrix result = a;
  for (int r = 0; r < a.dim(); ++r) {
    for (int c = 0; c < a.dim(); ++c) result(r, c) *= scale;
  }
  return result;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  check_same_dim(a, b);
  double largest = 0.0;
  for (int r = 0; r < a.dim(); ++r) {
    for (int c = 0; c < a.dim(); ++c) largest = std::max(largest, std::abs(a(r, c) - b(r, c)));
  }
  return largest;
}

// ---------------------------------------------------------------- Paulis, gates, channels

Matrix single_qubit_pauli(char letter) {
  switch (letter) {
    case 'I':
      return Matrix{{1, 0}, {0, 1}};
    case 'X':
      return Matrix{{0, 1}, {1, 0}};
    case 'Y':
      return Matrix{{0, -kI}, {kI, 0}};
    case 'Z':
      return Matrix{{1, 0}, {0, -1}};
  }
  fail("invalid Pauli letter '" + std::string(1, letter) + "'");
}

Matrix pauli_matrix(std::string_view label) {
  const int num_qubits = static_cast<int>(label.size());
  check_num_qubits(num_qubits);
  check_pauli_letters(label);
  const int dim = dim_of(num_qubits);
  Matrix result = Matrix::zeros(dim);
  const PauliAction pauli(label);
  for (int column = 0; column < dim; ++column) {
    const auto c = static_cast<std::size_t>(column);
    result(static_cast<int>(pauli.row(c)), column) = pauli.amplitude(c);
  }
  return result;
}

Matrix pauli_rotation_matrix(std::string_view letters, double theta) {
  if (letters.empty()) fail("pauli_rotation needs at least one letter");
  check_num_qubits(static_cast<int>(letters.size()));
  check_pauli_letters(letters);
  const Matrix pauli = pauli_string_as_local_matrix(letters);
  // exp(-i theta P / 2) = cos(theta/2) I - i sin(theta/2) P because P^2 = I.
  return Complex(std::cos(theta / 2)) * Matrix::identity(pauli.dim()) + (-kI * std::sin(theta / 2)) * pauli;
}

Matrix gate_matrix(std::string_view name, std::span<const double> params) {
  static const std::vector<std::pair<std::string_view, std::string_view>> kRotationAxes = {
      {"rx", "X"}, {"ry", "Y"}, {"rz", "Z"}, {"rxx", "XX"}, {"ryy", "YY"}, {"rzz", "ZZ"}};
  for (const auto& [rotation_name, axis] : kRotationAxes) {
    if (name == rotation_name) return pauli_rotation_matrix(axis, single_param(name, params));
  }
  if (!params.empty()) fail(std::string(name) + " takes no parameters");

  const double r = 1.0 / std::numbers::sqrt2;
  const Complex t_phase = std::polar(1.0, std::numbers::pi / 4);
  if (name == "h") return Matrix{{r, r}, {r, -r}};
  if (name == "s") return Matrix{{1, 0}, {0, kI}};
  if (name == "sdg") return Matrix{{1, 0}, {0, -kI}};
  if (name == "x") return single_qubit_pauli('X');
  if (name == "y") return single_qubit_pauli('Y');
  if (name == "z") return single_qubit_pauli('Z');
  if (name == "sx") return Complex(0.5) * Matrix{{1.0 + kI, 1.0 - kI}, {1.0 - kI, 1.0 + kI}};
  if (name == "sxdg") return adjoint(gate_matrix("sx"));
  if (name == "t") return Matrix{{1, 0}, {0, t_phase}};
  if (name == "tdg") return Matrix{{1, 0}, {0, std::conj(t_phase)}};

  // Two-qubit gates: row/column index = 2 b(first qubit) + b(second qubit).
  const Matrix projector0{{1, 0}, {0, 0}};
  const Matrix projector1{{0, 0}, {0, 1}};
  const Matrix id2 = Matrix::identity(2);
  if (name == "cnot") return kron(projector0, id2) + kron(projector1, single_qubit_pauli('X'));
  if (name == "cy") return kron(projector0, id2) + kron(projector1, single_qubit_pauli('Y'));
  if (name == "cz") return Matrix{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, -1}};
  if (name == "swap") return Matrix{{1, 0, 0, 0}, {0, 0, 1, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}};
  if (name == "iswap") return Matrix{{1, 0, 0, 0}, {0, 0, kI, 0}, {0, kI, 0, 0}, {0, 0, 0, 1}};
  if (name == "ecr") {
    return Complex(r) * Matrix{{0, 1, 0, kI}, {1, 0, -kI, 0}, {0, kI, 0, 1}, {-kI, 0, 1, 0}};
  }
  fail("unknown gate \"" + std::string(name) + "\"");
}

std::vector<Matrix> kraus_operators(std::string_view name, std::span<const double> params) {
  const auto scaled_pauli = [](double weight, char letter) {
    return Complex(std::sqrt(weight)) * single_qubit_pauli(letter);
  };
  if (name == "depolarize") {
    const double p = probability(name, single_param(name, params));
    return {scaled_pauli(1 - p, 'I'), scaled_pauli(p / 3, 'X'), scaled_pauli(p / 3, 'Y'),
            scaled_pauli(p / 3, 'Z')};
  }
  if (name == "dephase") {
    const double p = probability(name, single_param(name, params));
    return {scaled_pauli(1 - p, 'I'), scaled_pauli(p, 'Z')};
  }
  if (name == "pauli_channel") {
    if (params.size() != 3) fail("pauli_channel takes exactly three parameters");
    const double px = probability(name, params[0]);
    const double py = probability(name, params[1]);
    const double pz = probability(name, params[2]);
    const double p_identity = 1 - px - py - pz;
    // Allow rounding noise in a sum that is meant to be exactly 1.
    if (p_identity < -1e-12) fail("pauli_channel probabilities sum to more than 1");
    return {scaled_pauli(std::max(p_identity, 0.0), 'I'), scaled_pauli(px, 'X'), scaled_pauli(py, 'Y'),
            scaled_pauli(pz, 'Z')};
  }
  if (name == "depolarize2") {
    const double p = probability(name, single_param(name, params));
    std::vector<Matrix> kraus;
    for (char first : std::string_view("IXYZ")) {
      for (char second : std::string_view("IXYZ")) {
        const bool is_identity = first == 'I' && second == 'I';
        const double weight = is_identity ? 1 - p : p / 15;
        kraus.push_back(Complex(std::sqrt(weight)) *
                        kron(single_qubit_pauli(first), single_qubit_pauli(second)));
      }
    }
    return kraus;
  }
  if (name == "amplitude_damping") {
    const double gamma = probability(name, single_param(name, params));
    return {Matrix{{1, 0}, {0, std::sqrt(1 - gamma)}}, Matrix{{0, std::sqrt(gamma)}, {0, 0}}};
  }
  fail("unknown channel \"" + std::string(name) + "\"");
}

// ---------------------------------------------------------------- register-level operations

Matrix embed(const Matrix& local, std::span<const int> qubits, int num_qubits) {
  check_num_qubits(num_qubits);
  const int num_local = static_cast<int>(qubits.size());
  if (num_local > num_qubits || local.dim() != dim_of(num_local)) {
    fail("embed: a " + std::to_string(local.dim()) + "x" + std::to_string(local.dim()) +
         " matrix cannot act on " + std::to_string(num_local) + " qubits of " + std::to_string(num_qubits));
  }
  std::size_t local_mask = 0;
  for (int q : qubits) {
    if (q < 0 || q >= num_qubits) fail("embed: qubit " + std::to_string(q) + " out of range");
    if (local_mask & (std::size_t{1} << q)) fail("embed: repeated qubit " + std::to_string(q));
    local_mask |= std::size_t{1} << q;
  }
  // qubits[0] supplies the most significant bit of the local index.
  const auto local_index = [&](std::size_t full_index) {
    int index = 0;
    for (int q : qubits) index = (index << 1) | static_cast<int>((full_index >> q) & 1U);
    return index;
  };
  const int dim = dim_of(num_qubits);
  Matrix full = Matrix::zeros(dim);
  for (int r = 0; r < dim; ++r) {
    for (int c = 0; c < dim; ++c) {
      // Identity on the other qubits: their bits must agree between row and column.
      const bool spectators_agree =
          (static_cast<std::size_t>(r) & ~local_mask) == (static_cast<std::size_t>(c) & ~local_mask);
      if (spectators_agree) full(r, c) = local(local_index(r), local_index(c));
    }
  }
  return full;
}

namespace {

/// a·b as (b†·a†)†. multiply skips the zero entries of its left factor, so with an embedded gate as `b`
/// (a few nonzeros per row) this costs dim² × (nonzeros per row) instead of dim³; every entry is the
/// same sum of the same products, in the same order.
Matrix multiply_by_sparse(const Matrix& a, const Matrix& b) {
  return adjoint(multiply(adjoint(b), adjoint(a)));
}

}  // namespace

Matrix apply_unitary(const Matrix& op, const Matrix& full_u, bool heisenberg) {
  if (heisenberg) return multiply(adjoint(full_u), multiply_by_sparse(op, full_u));
  return multiply(full_u, multiply_by_sparse(op, adjoint(full_u)));
}

Matrix apply_kraus(const Matrix& op, const std::vector<Matrix>& full_kraus, bool heisenberg) {
  Matrix result = Matrix::zeros(op.dim());
  for (const Matrix& kraus : full_kraus) result = result + apply_unitary(op, kraus, heisenberg);
  return result;
}

Matrix operator_from_pauli_terms(int num_qubits, const std::vector<std::pair<std::string, Complex>>& terms) {
  check_num_qubits(num_qubits);
  Matrix result = Matrix::zeros(dim_of(num_qubits));
  for (const auto& [label, coefficient] : terms) {
    if (static_cast<int>(label.size()) != num_qubits) {
      fail("label \"" + label + "\" does not have " + std::to_string(num_qubits) + " characters");
    }
    result = result + coefficient * pauli_matrix(label);
  }
  return result;
}

std::vector<std::pair<std::string, Complex>> pauli_terms_from_operator(const Matrix& op, double drop_below) {
  int num_qubits = 0;
  while (dim_of(num_qubits) < op.dim() && num_qubits < kMaxQubits) ++num_qubits;
  if (dim_of(num_qubits) != op.dim())
    fail("operator dimension " + std::to_string(op.dim()) + " is not 2^n, n <= 8");

  std::vector<std::pair<std::string, Complex>> terms;
  const std::size_t num_labels = std::size_t{1} << (2 * num_qubits);
  std::string label(static_cast<std::size_t>(num_qubits), 'I');
  for (std::size_t label_index = 0; label_index < num_labels; ++label_index) {
    // Base-4 digits with qubit 0 most significant give lexicographic order, since I < X < Y < Z.
    for (int q = 0; q < num_qubits; ++q) {
      label[static_cast<std::size_t>(q)] = "IXYZ"[(label_index >> (2 * (num_qubits - 1 - q))) & 3U];
    }
    // Column c of P has its only nonzero entry P(row_c, c) = amplitude_c, so
    // tr(P op) = sum_{r,c} P(r, c) op(c, r) = sum_c amplitude_c op(c, row_c).
    const PauliAction pauli(label);
    Complex pauli_trace = 0.0;
    for (int column = 0; column < op.dim(); ++column) {
      const auto c = static_cast<std::size_t>(column);
      pauli_trace += pauli.amplitude(c) * op(column, static_cast<int>(pauli.row(c)));
    }
    const Complex coefficient = pauli_trace / static_cast<double>(op.dim());
    if (std::abs(coefficient) > drop_below) terms.emplace_back(label, coefficient);
  }
  return terms;
}

// ---------------------------------------------------------------- states

std::vector<Complex> product_state(std::string_view per_qubit_labels) {
  const int num_qubits = static_cast<int>(per_qubit_labels.size());
  check_num_qubits(num_qubits);
  const double r = 1.0 / std::numbers::sqrt2;
  std::vector<std::pair<Complex, Complex>> factors;  // (amplitude of |0>, amplitude of |1>) per qubit
  for (char label : per_qubit_labels) {
    switch (label) {
      case '0':
        factors.emplace_back(1.0, 0.0);
        break;
      case '1':
        factors.emplace_back(0.0, 1.0);
        break;
      case '+':
        factors.emplace_back(r, r);
        break;
      case '-':
        factors.emplace_back(r, -r);
        break;
      case 'r':
        factors.emplace_back(r, kI * r);
        break;
      case 'l':
        factors.emplace_back(r, -kI * r);
        break;
      default:
        fail("invalid product-state label '" + std::string(1, label) + "'");
    }
  }
  std::vector<Complex> state(static_cast<std::size_t>(dim_of(num_qubits)));
  for (std::size_t index = 0; index < state.size(); ++index) {
    Complex amplitude = 1.0;
    for (int q = 0; q < num_qubits; ++q) {
      const auto& [zero, one] = factors[static_cast<std::size_t>(q)];
      amplitude *= ((index >> q) & 1U) ? one : zero;
    }
    state[index] = amplitude;
  }
  return state;
}

std::vector<Complex> stabilizer_state(int num_qubits, const std::vector<std::string>& signed_generators) {
  check_num_qubits(num_qubits);
  if (static_cast<int>(signed_generators.size()) != num_qubits) {
    fail("need exactly " + std::to_string(num_qubits) + " stabilizer generators");
  }
  std::vector<std::pair<double, std::string>> generators;  // (sign, label)
  for (const std::string& generator : signed_generators) {
    std::string_view label = generator;
    double sign = 1.0;
    if (!label.empty() && (label.front() == '+' || label.front() == '-')) {
      sign = label.front() == '-' ? -1.0 : 1.0;
      label.remove_prefix(1);
    }
    check_pauli_letters(label);
    if (static_cast<int>(label.size()) != num_qubits)
      fail("generator \"" + generator + "\" has the wrong length");
    generators.emplace_back(sign, std::string(label));
  }

  const auto project = [&](std::vector<Complex> state) {
    for (const auto& [sign, label] : generators) {
      const std::vector<Complex> flipped = apply_signed_pauli(label, sign, state);
      for (std::size_t i = 0; i < state.size(); ++i) state[i] = 0.5 * (state[i] + flipped[i]);
    }
    return state;
  };

  // For commuting generators the product of (I + g_j)/2 is the projector onto their joint +1 eigenspace,
  // whose trace is its rank: 1 exactly when the state exists and is unique.
  const std::size_t dim = static_cast<std::size_t>(dim_of(num_qubits));
  double projector_trace = 0.0;
  std::vector<Complex> best;
  double best_norm_squared = 0.0;
  for (std::size_t basis = 0; basis < dim; ++basis) {
    std::vector<Complex> state(dim, 0.0);
    state[basis] = 1.0;
    std::vector<Complex> projected = project(std::move(state));
    projector_trace += projected[basis].real();
    const double projected_norm_squared = norm_squared(projected);
    if (projected_norm_squared > best_norm_squared) {
      best_norm_squared = projected_norm_squared;
      best = std::move(projected);
    }
  }
  if (best_norm_squared < 1e-12) fail("stabilizer generators have no common +1 eigenstate");
  if (std::abs(projector_trace - 1.0) > 1e-9) fail("stabilizer generators do not fix a unique state");
  const double norm = std::sqrt(best_norm_squared);
  for (Complex& amplitude : best) amplitude /= norm;

  // Anticommuting generators pass the checks above without a common eigenstate; reject them here.
  for (const auto& [sign, label] : generators) {
    const std::vector<Complex> image = apply_signed_pauli(label, sign, best);
    for (std::size_t i = 0; i < dim; ++i) {
      if (std::abs(image[i] - best[i]) > 1e-9) fail("stabilizer generators have no common +1 eigenstate");
    }
  }
  return best;
}

Complex expectation(const Matrix& op, const std::vector<Complex>& state) {
  if (static_cast<std::size_t>(op.dim()) != state.size())
    fail("expectation: operator and state sizes differ");
  Complex total = 0.0;
  for (int r = 0; r < op.dim(); ++r) {
    for (int c = 0; c < op.dim(); ++c) {
      total += std::conj(state[static_cast<std::size_t>(r)]) * op(r, c) * state[static_cast<std::size_t>(c)];
    }
  }
  return total;
}

// ---------------------------------------------------------------- circuits

Matrix apply_gate(const Matrix& op, const DenseGate& gate, int num_qubits, bool heisenberg) {
  check_num_qubits(num_qubits);
  if (op.dim() != dim_of(num_qubits))
    fail("apply_gate: operator does not act on " + std::to_string(num_qubits) + " qubits");
  if (gate.name == "id") return op;

  const auto local_matrix = [&]() -> Matrix {
    if (gate.name == "pauli_rotation") {
      if (gate.pauli.size() != gate.qubits.size())
        fail("pauli_rotation: letters and qubits differ in number");
      return pauli_rotation_matrix(gate.pauli, single_param(gate.name, gate.params));
    }
    if (gate.name == "unitary_1q" || gate.name == "unitary_2q") {
      const int expected_dim = gate.name == "unitary_1q" ? 2 : 4;
      if (gate.matrix.dim() != expected_dim) fail(gate.name + ": matrix has the wrong size");
      return gate.matrix;
    }
    return gate_matrix(gate.name, gate.params);
  };

  if (gate.name == "measure") {
    if (gate.pauli.empty() || gate.pauli.size() != gate.qubits.size())
      fail("measure: letters and qubits differ in number");
    Matrix product = single_qubit_pauli(gate.pauli[0]);
    for (std::size_t k = 1; k < gate.pauli.size(); ++k)
      product = kron(product, single_qubit_pauli(gate.pauli[k]));
    const Matrix identity = Matrix::identity(product.dim());
    const Matrix plus = Complex(0.5) * (identity + product), minus = Complex(0.5) * (identity - product);
    return apply_kraus(op, {embed(plus, gate.qubits, num_qubits), embed(minus, gate.qubits, num_qubits)},
                       heisenberg);
  }
  if (gate.name == "reset") {
    if (gate.qubits.size() != 1 || gate.pauli.size() > 1)
      fail("reset: one qubit and at most one basis letter");
    // Eigenvectors of the basis Pauli: |b+⟩ and |b−⟩ as columns.
    const double r = 1.0 / std::sqrt(2.0);
    const Complex i(0.0, 1.0);
    const char basis = gate.pauli.empty() ? 'Z' : gate.pauli[0];
    std::vector<Complex> up, down;
    if (basis == 'Z') {
      up = {1.0, 0.0};
      down = {0.0, 1.0};
    } else if (basis == 'X') {
      up = {r, r};
      down = {r, -r};
    } else if (basis == 'Y') {
      up = {r, i * r};
      down = {r, -i * r};
    } else {
      fail("reset: basis must be X, Y or Z");
    }
    Matrix keep = Matrix::zeros(2), flip = Matrix::zeros(2);
    for (int a = 0; a < 2; ++a) {
      for (int b = 0; b < 2; ++b) {
        keep(a, b) = up[a] * std::conj(up[b]);
        flip(a, b) = up[a] * std::conj(down[b]);
      }
    }
    return apply_kraus(op, {embed(keep, gate.qubits, num_qubits), embed(flip, gate.qubits, num_qubits)},
                       heisenberg);
  }
  static const std::vector<std::string_view> kChannels = {"depolarize", "dephase", "pauli_channel",
                                                          "depolarize2", "amplitude_damping"};
  if (std::find(kChannels.begin(), kChannels.end(), gate.name) != kChannels.end()) {
    std::vector<Matrix> full_kraus;
    for (const Matrix& kraus : kraus_operators(gate.name, gate.params)) {
      full_kraus.push_back(embed(kraus, gate.qubits, num_qubits));
    }
    return apply_kraus(op, full_kraus, heisenberg);
  }
  return apply_unitary(op, embed(local_matrix(), gate.qubits, num_qubits), heisenberg);
}

}  // namespace paulistrings::testing::dense
