// Channel factories, validation, transfer matrices and adjoints.

#include "paulistrings/channels/channel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "paulistrings/core/text.h"

namespace paulistrings {
namespace {

using Matrix = std::vector<Complex>;  // row-major square
constexpr double kUnitarityTolerance = 1e-9;
constexpr double kSnapTolerance = 1e-15;

[[noreturn]] void invalid(const std::string& gate, const std::string& what) {
  throw std::invalid_argument(gate + ": " + what);
}

void check_finite(const std::string& gate, const char* parameter, double value) {
  if (!std::isfinite(value))
    invalid(gate, std::string(parameter) + " = " + format_double(value) + " is not finite");
}

void check_probability(const std::string& gate, const char* parameter, double value) {
  check_finite(gate, parameter, value);
  if (value < 0.0 || value > 1.0) {
    invalid(gate, std::string(parameter) + " = " + format_double(value) + " is outside [0, 1]");
  }
}

void check_distinct(const std::string& gate, const std::vector<Qubit>& qubits) {
  for (std::size_t i = 0; i < qubits.size(); ++i) {
    for (std::size_t j = i + 1; j < qubits.size(); ++j) {
      if (qubits[i] == qubits[j]) invalid(gate, "qubit " + std::to_string(qubits[i]) + " is used twice");
    }
  }
}

Matrix multiply(const Matrix& a, const Matrix& b, int d) {
  Matrix c(static_cast<std::size_t>(d * d));
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k)
      for (int j = 0; j < d; ++j) c[i * d + j] += a[i * d + k] * b[k * d + j];
  return c;
}

Matrix conjugate_transpose(std::span<const Complex> a, int d) {
  Matrix c(static_cast<std::size_t>(d * d));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) c[j * d + i] = std::conj(a[i * d + j]);
  return c;
}

/// Largest |(A A†)_{ij} − δ_ij|.
double unitarity_error(std::span<const Complex> a, int d) {
  const Matrix product = multiply(Matrix(a.begin(), a.end()), conjugate_transpose(a, d), d);
  double error = 0.0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      error = std::max(error, std::abs(product[i * d + j] - Complex(i == j ? 1.0 : 0.0)));
  return error;
}

void check_unitary(const std::string& gate, std::span<const Complex> matrix, int d) {
  if (matrix.size() != static_cast<std::size_t>(d * d)) {
    invalid(gate, "expected a " + std::to_string(d) + "×" + std::to_string(d) + " matrix (" +
                      std::to_string(d * d) + " entries), got " + std::to_string(matrix.size()) + " entries");
  }
  for (const Complex& v : matrix) {
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) invalid(gate, "matrix has a non-finite entry");
  }
  const double error = unitarity_error(matrix, d);
  if (!(error <= kUnitarityTolerance)) {
    invalid(gate, "matrix is not unitary (max |U U† − I| = " + format_double(error) + " > 1e-9)");
  }
}

/// The 2×2 Pauli matrix of a code (I=0 X=1 Z=2 Y=3).
Matrix pauli_2x2(int code) {
  const Complex i(0.0, 1.0);
  switch (code) {
    case 0:
      return {1.0, 0.0, 0.0, 1.0};
    case 1:
      return {0.0, 1.0, 1.0, 0.0};
    case 2:
      return {1.0, 0.0, 0.0, -1.0};
    default:
      return {0.0, -i, i, 0.0};
  }
}

Matrix kron(const Matrix& a, int da, const Matrix& b, int db) {
  const int d = da * db;
  Matrix c(static_cast<std::size_t>(d * d));
  for (int i = 0; i < da; ++i)
    for (int j = 0; j < da; ++j)
      for (int k = 0; k < db; ++k)
        for (int l = 0; l < db; ++l) c[(i * db + k) * d + (j * db + l)] = a[i * da + j] * b[k * db + l];
  return c;
}

/// Pauli operator of a local pattern; qubit 0 of the support is the more significant factor.
Matrix pattern_matrix(int pattern, int num_qubits) {
  if (num_qubits == 1) return pauli_2x2(pattern & 3);
  return kron(pauli_2x2(pattern & 3), 2, pauli_2x2((pattern >> 2) & 3), 2);
}

bool is_unitary_transfer(const TransferMatrix& t) {
  return unitarity_error(t.entries, t.dim) <= kUnitarityTolerance;
}

std::string local_label(int pattern, int num_qubits) {
  std::string label;
  for (int j = 0; j < num_qubits; ++j) label += "IXZY"[(pattern >> (2 * j)) & 3];
  return label;
}

TransferMatrix probe_local_map(const std::string& gate, const LocalPauliMap& map, int num_qubits) {
  const int dim = 1 << (2 * num_qubits);
  TransferMatrix t{dim, std::vector<Complex>(static_cast<std::size_t>(dim * dim))};
  for (int in = 0; in < dim; ++in) {
    const std::string label = local_label(in, num_qubits);
    for (const auto& [out_label, amplitude] : map(label)) {
      if (static_cast<int>(out_label.size()) != num_qubits) {
        invalid(gate, "map of '" + label + "' returned label '" + out_label + "' of length " +
                          std::to_string(out_label.size()) + ", expected " + std::to_string(num_qubits));
      }
      int out = 0;
      for (int j = 0; j < num_qubits; ++j) {
        const char c = out_label[static_cast<std::size_t>(j)];
        const int code = c == 'I' ? 0 : c == 'X' ? 1 : c == 'Z' ? 2 : c == 'Y' ? 3 : -1;
        if (code < 0) invalid(gate, "map of '" + label + "' returned invalid label '" + out_label + "'");
        out |= code << (2 * j);
      }
      if (!std::isfinite(amplitude.real()) || !std::isfinite(amplitude.imag())) {
        invalid(gate, "map of '" + label + "' returned a non-finite amplitude");
      }
      t.entries[static_cast<std::size_t>(out * dim + in)] += amplitude;
    }
  }
  return t;
}

}  // namespace

double snap_unit(double value) {
  if (std::abs(value) < kSnapTolerance) return 0.0;
  if (std::abs(value - 1.0) < kSnapTolerance) return 1.0;
  if (std::abs(value + 1.0) < kSnapTolerance) return -1.0;
  return value;
}

std::string_view to_string(Direction direction) {
  return direction == Direction::forward ? "forward" : "heisenberg";
}

Direction parse_direction(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "forward") return Direction::forward;
  if (lower == "heisenberg") return Direction::heisenberg;
  throw std::invalid_argument("direction must be \"forward\" or \"heisenberg\", got \"" + std::string(text) +
                              "\"");
}

TransferMatrix TransferMatrix::adjoint() const { return {dim, conjugate_transpose(entries, dim)}; }

TransferMatrix unitary_transfer_matrix(std::span<const Complex> unitary, int num_qubits) {
  const int d = 1 << num_qubits;
  const int dim = d * d;
  const Matrix u(unitary.begin(), unitary.end());
  const Matrix u_dagger = conjugate_transpose(unitary, d);
  TransferMatrix t{dim, std::vector<Complex>(static_cast<std::size_t>(dim * dim))};
  for (int in = 0; in < dim; ++in) {
    const Matrix image = multiply(multiply(u, pattern_matrix(in, num_qubits), d), u_dagger, d);
    for (int out = 0; out < dim; ++out) {
      const Matrix p = pattern_matrix(out, num_qubits);
      Complex trace = 0.0;
      for (int i = 0; i < d; ++i)
        for (int k = 0; k < d; ++k) trace += p[i * d + k] * image[k * d + i];
      // A unitary conjugation maps Hermitian to Hermitian, so the PTM is real.
      t.entries[static_cast<std::size_t>(out * dim + in)] = snap_unit(trace.real() / d);
    }
  }
  return t;
}

std::vector<Complex> clifford_matrix(ChannelKind kind) {
  const Complex i(0.0, 1.0);
  const double r = 1.0 / std::sqrt(2.0);
  switch (kind) {
    case ChannelKind::h:
      return {r, r, r, -r};
    case ChannelKind::s:
      return {1.0, 0.0, 0.0, i};
    case ChannelKind::sdg:
      return {1.0, 0.0, 0.0, -i};
    case ChannelKind::x:
      return {0.0, 1.0, 1.0, 0.0};
    case ChannelKind::y:
      return {0.0, -i, i, 0.0};
    case ChannelKind::z:
      return {1.0, 0.0, 0.0, -1.0};
    case ChannelKind::sx:
      return {0.5 * (1.0 + i), 0.5 * (1.0 - i), 0.5 * (1.0 - i), 0.5 * (1.0 + i)};
    case ChannelKind::sxdg:
      return {0.5 * (1.0 - i), 0.5 * (1.0 + i), 0.5 * (1.0 + i), 0.5 * (1.0 - i)};
    case ChannelKind::cnot:
      return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0};
    case ChannelKind::cy:
      return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, -i, 0, 0, i, 0};
    case ChannelKind::cz:
      return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1};
    case ChannelKind::swap:
      return {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1};
    case ChannelKind::iswap:
      return {1, 0, 0, 0, 0, 0, i, 0, 0, i, 0, 0, 0, 0, 0, 1};
    case ChannelKind::iswapdg:
      return {1, 0, 0, 0, 0, 0, -i, 0, 0, -i, 0, 0, 0, 0, 0, 1};
    case ChannelKind::ecr:
      return {0, r, 0, i * r, r, 0, -i * r, 0, 0, i * r, 0, r, -i * r, 0, r, 0};
    default:
      throw std::logic_error("clifford_matrix: not a Clifford kind");
  }
}

Channel Channel::make(Data data) {
  const bool rotation_form = data.kind == ChannelKind::pauli_rotation ||
                             (data.kind == ChannelKind::measure && data.qubits.size() > 2);
  if (!data.tables && !rotation_form) {  // the rotation form has no tables
    if (data.heisenberg.dim == 0) data.heisenberg = data.forward.adjoint();
    data.tables = std::make_shared<const std::pair<TransferMatrix, TransferMatrix>>(
        std::move(data.forward), std::move(data.heisenberg));
  }
  data.forward = {};
  data.heisenberg = {};
  if (data.tables) {
    for (const TransferMatrix* t : {&data.tables->first, &data.tables->second}) {
      for (const Complex& v : t->entries) data.complex_transfer |= v.imag() != 0.0;
    }
  }
  return Channel(std::make_shared<const Data>(std::move(data)));
}

Channel Channel::clifford(ChannelKind kind, std::string name, std::vector<Qubit> qubits) {
  check_distinct(name, qubits);
  // One pair of tables per Clifford kind, computed once and shared by every channel of that kind.
  static const auto tables = [] {
    std::array<std::shared_ptr<const std::pair<TransferMatrix, TransferMatrix>>,
               static_cast<std::size_t>(ChannelKind::ecr) + 1>
        all;
    for (int k = 0; k <= static_cast<int>(ChannelKind::ecr); ++k) {
      const auto c = static_cast<ChannelKind>(k);
      const int qubits = c < ChannelKind::cnot ? 1 : 2;
      TransferMatrix t = unitary_transfer_matrix(clifford_matrix(c), qubits);
      // Clifford tables are signed permutations: make them exact.
      for (Complex& v : t.entries) {
        const double rounded = std::round(v.real());
        if (std::abs(v.real() - rounded) > 1e-12) throw std::logic_error("Clifford table is not integral");
        v = rounded;
      }
      TransferMatrix adjoint = t.adjoint();
      all[static_cast<std::size_t>(k)] =
          std::make_shared<const std::pair<TransferMatrix, TransferMatrix>>(std::move(t), std::move(adjoint));
    }
    return all;
  }();
  Data data{kind, std::move(name), std::move(qubits)};
  data.tables = tables[static_cast<std::size_t>(kind)];
  return make(std::move(data));
}

Channel Channel::h(Qubit q) { return clifford(ChannelKind::h, "h", {q}); }
Channel Channel::s(Qubit q) { return clifford(ChannelKind::s, "s", {q}); }
Channel Channel::sdg(Qubit q) { return clifford(ChannelKind::sdg, "sdg", {q}); }
Channel Channel::x(Qubit q) { return clifford(ChannelKind::x, "x", {q}); }
Channel Channel::y(Qubit q) { return clifford(ChannelKind::y, "y", {q}); }
Channel Channel::z(Qubit q) { return clifford(ChannelKind::z, "z", {q}); }
Channel Channel::sx(Qubit q) { return clifford(ChannelKind::sx, "sx", {q}); }
Channel Channel::sxdg(Qubit q) { return clifford(ChannelKind::sxdg, "sxdg", {q}); }
Channel Channel::cnot(Qubit control, Qubit target) {
  return clifford(ChannelKind::cnot, "cnot", {control, target});
}
Channel Channel::cy(Qubit control, Qubit target) {
  return clifford(ChannelKind::cy, "cy", {control, target});
}
Channel Channel::cz(Qubit q0, Qubit q1) { return clifford(ChannelKind::cz, "cz", {q0, q1}); }
Channel Channel::swap(Qubit q0, Qubit q1) { return clifford(ChannelKind::swap, "swap", {q0, q1}); }
Channel Channel::iswap(Qubit q0, Qubit q1) { return clifford(ChannelKind::iswap, "iswap", {q0, q1}); }
Channel Channel::iswapdg(Qubit q0, Qubit q1) { return clifford(ChannelKind::iswapdg, "iswapdg", {q0, q1}); }
Channel Channel::ecr(Qubit q0, Qubit q1) { return clifford(ChannelKind::ecr, "ecr", {q0, q1}); }

Channel Channel::rotation(std::string name, std::string pauli, std::vector<Qubit> qubits, double theta) {
  check_finite(name, "theta", theta);
  if (pauli.empty()) invalid(name, "the rotation generator is empty");
  if (pauli.size() != qubits.size()) {
    invalid(name, "generator '" + pauli + "' has " + std::to_string(pauli.size()) + " letters but " +
                      std::to_string(qubits.size()) + " qubits are given");
  }
  for (char c : pauli) {
    if (c != 'X' && c != 'Y' && c != 'Z') {
      invalid(name, "generator '" + pauli + "' contains '" + std::string(1, c) + "' (only X, Y, Z allowed)");
    }
  }
  check_distinct(name, qubits);
  Data data{ChannelKind::pauli_rotation, std::move(name), std::move(qubits)};
  data.pauli = std::move(pauli);
  data.theta = theta;
  return make(std::move(data));
}

Channel Channel::rx(double theta, Qubit q) { return rotation("rx", "X", {q}, theta); }
Channel Channel::ry(double theta, Qubit q) { return rotation("ry", "Y", {q}, theta); }
Channel Channel::rz(double theta, Qubit q) { return rotation("rz", "Z", {q}, theta); }
Channel Channel::rxx(double theta, Qubit q0, Qubit q1) { return rotation("rxx", "XX", {q0, q1}, theta); }
Channel Channel::ryy(double theta, Qubit q0, Qubit q1) { return rotation("ryy", "YY", {q0, q1}, theta); }
Channel Channel::rzz(double theta, Qubit q0, Qubit q1) { return rotation("rzz", "ZZ", {q0, q1}, theta); }
Channel Channel::pauli_rotation(std::string_view pauli, std::vector<Qubit> qubits, double theta) {
  return rotation("pauli_rotation", std::string(pauli), std::move(qubits), theta);
}

Channel Channel::unitary_1q(Qubit q, std::span<const Complex> matrix) {
  check_unitary("unitary_1q", matrix, 2);
  Data data{ChannelKind::unitary_1q, "unitary_1q", {q}};
  data.matrix.assign(matrix.begin(), matrix.end());
  data.forward = unitary_transfer_matrix(matrix, 1);
  return make(std::move(data));
}

Channel Channel::unitary_2q(Qubit q0, Qubit q1, std::span<const Complex> matrix) {
  check_distinct("unitary_2q", {q0, q1});
  check_unitary("unitary_2q", matrix, 4);
  Data data{ChannelKind::unitary_2q, "unitary_2q", {q0, q1}};
  data.matrix.assign(matrix.begin(), matrix.end());
  data.forward = unitary_transfer_matrix(matrix, 2);
  return make(std::move(data));
}

Channel Channel::transfer_matrix(std::vector<Qubit> qubits, std::span<const double> ptm, std::string name) {
  if (qubits.empty() || qubits.size() > 2) {
    invalid(name, "a transfer matrix acts on 1 or 2 qubits, got " + std::to_string(qubits.size()));
  }
  check_distinct(name, qubits);
  const int dim = qubits.size() == 1 ? 4 : 16;
  if (ptm.size() != static_cast<std::size_t>(dim * dim)) {
    invalid(name, "expected a " + std::to_string(dim) + "×" + std::to_string(dim) + " transfer matrix for " +
                      std::to_string(qubits.size()) + " qubit(s), got " + std::to_string(ptm.size()) +
                      " entries");
  }
  for (double v : ptm) check_finite(name, "transfer matrix entry", v);
  Data data{ChannelKind::transfer_matrix, std::move(name), std::move(qubits)};
  data.forward = {dim, std::vector<Complex>(ptm.begin(), ptm.end())};
  data.is_noise = !is_unitary_transfer(data.forward);
  return make(std::move(data));
}

Channel Channel::custom(std::string name, std::vector<Qubit> qubits, const LocalPauliMap& forward_map,
                        const LocalPauliMap& adjoint_map) {
  if (qubits.empty() || qubits.size() > 2) {
    invalid(name, "a user-defined channel acts on 1 or 2 qubits, got " + std::to_string(qubits.size()));
  }
  check_distinct(name, qubits);
  if (!forward_map) invalid(name, "no map given");
  const int k = static_cast<int>(qubits.size());
  Data data{ChannelKind::transfer_matrix, name, std::move(qubits)};
  data.forward = probe_local_map(name, forward_map, k);
  if (adjoint_map) data.heisenberg = probe_local_map(name, adjoint_map, k);
  data.is_noise = !is_unitary_transfer(data.forward);
  return make(std::move(data));
}

Channel Channel::depolarize(double p, Qubit q) {
  check_probability("depolarize", "p", p);
  const double f = 1.0 - 4.0 * p / 3.0;
  Data data{ChannelKind::depolarize, "depolarize", {q}};
  data.parameters = {p};
  data.forward = {4, {1, 0, 0, 0, 0, f, 0, 0, 0, 0, f, 0, 0, 0, 0, f}};
  data.is_noise = true;
  return make(std::move(data));
}

Channel Channel::dephase(double p, Qubit q) {
  check_probability("dephase", "p", p);
  const double f = 1.0 - 2.0 * p;
  Data data{ChannelKind::dephase, "dephase", {q}};
  data.parameters = {p};
  // Pattern order I X Z Y: X and Y shrink, Z survives.
  data.forward = {4, {1, 0, 0, 0, 0, f, 0, 0, 0, 0, 1, 0, 0, 0, 0, f}};
  data.is_noise = true;
  return make(std::move(data));
}

Channel Channel::pauli_channel(double px, double py, double pz, Qubit q) {
  check_probability("pauli_channel", "px", px);
  check_probability("pauli_channel", "py", py);
  check_probability("pauli_channel", "pz", pz);
  if (px + py + pz > 1.0 + 1e-12) {
    invalid("pauli_channel", "px + py + pz = " + format_double(px + py + pz) + " exceeds 1");
  }
  const double fx = 1.0 - 2.0 * (py + pz), fy = 1.0 - 2.0 * (px + pz), fz = 1.0 - 2.0 * (px + py);
  Data data{ChannelKind::pauli_channel, "pauli_channel", {q}};
  data.parameters = {px, py, pz};
  data.forward = {4, {1, 0, 0, 0, 0, fx, 0, 0, 0, 0, fz, 0, 0, 0, 0, fy}};
  data.is_noise = true;
  return make(std::move(data));
}

Channel Channel::depolarize2(double p, Qubit q0, Qubit q1) {
  check_probability("depolarize2", "p", p);
  check_distinct("depolarize2", {q0, q1});
  const double f = 1.0 - 16.0 * p / 15.0;
  Data data{ChannelKind::depolarize2, "depolarize2", {q0, q1}};
  data.parameters = {p};
  data.forward = {16, std::vector<Complex>(256)};
  for (int in = 0; in < 16; ++in)
    data.forward.entries[static_cast<std::size_t>(in * 16 + in)] = in == 0 ? 1.0 : f;
  data.is_noise = true;
  return make(std::move(data));
}

Channel Channel::amplitude_damping(double gamma, Qubit q) {
  check_probability("amplitude_damping", "gamma", gamma);
  const double shrink = std::sqrt(1.0 - gamma);
  Data data{ChannelKind::amplitude_damping, "amplitude_damping", {q}};
  data.parameters = {gamma};
  // Forward: I → I + γZ, Z → (1−γ)Z, X,Y → √(1−γ)·X,Y. Row = output pattern, column = input.
  data.forward = {4, {1, 0, 0, 0, 0, shrink, 0, 0, gamma, 0, 1.0 - gamma, 0, 0, 0, 0, shrink}};
  data.is_noise = true;
  return make(std::move(data));
}

Channel Channel::measure(Qubit q) { return measure_pauli("Z", {q}); }

Channel Channel::measure_pauli(std::string_view pauli, std::vector<Qubit> qubits) {
  const bool plain = pauli == "Z" && qubits.size() == 1;
  const std::string name = plain ? "measure" : "measure_pauli";
  if (pauli.empty()) invalid(name, "the measured Pauli product is empty");
  if (pauli.size() != qubits.size()) {
    invalid(name, "Pauli product '" + std::string(pauli) + "' has " + std::to_string(pauli.size()) +
                      " letters but " + std::to_string(qubits.size()) + " qubits are given");
  }
  for (char c : pauli) {
    if (c != 'X' && c != 'Y' && c != 'Z') {
      invalid(name, "Pauli product '" + std::string(pauli) + "' contains '" + std::string(1, c) +
                        "' (only X, Y, Z allowed)");
    }
  }
  check_distinct(name, qubits);
  Data data{ChannelKind::measure, name, std::move(qubits)};
  data.pauli = std::string(pauli);
  data.is_noise = true;
  if (data.qubits.size() <= 2) {
    // Diagonal: a local pattern survives (amplitude 1) when it commutes with the measured one.
    const int k = static_cast<int>(data.qubits.size());
    const int dim = 1 << (2 * k);
    int measured = 0;
    for (int j = 0; j < k; ++j) {
      const char c = data.pauli[static_cast<std::size_t>(j)];
      measured |= (c == 'X' ? 1 : c == 'Z' ? 2 : 3) << (2 * j);
    }
    data.forward = {dim, std::vector<Complex>(static_cast<std::size_t>(dim * dim))};
    for (int in = 0; in < dim; ++in) {
      int anticommuting = 0;  // qubits where both patterns are non-identity and differ
      for (int j = 0; j < k; ++j) {
        const int a = (in >> (2 * j)) & 3, b = (measured >> (2 * j)) & 3;
        anticommuting += a != 0 && b != 0 && a != b;
      }
      if (anticommuting % 2 == 0) data.forward.entries[static_cast<std::size_t>(in * dim + in)] = 1.0;
    }
  }
  return make(std::move(data));
}

Channel Channel::reset(Qubit q, char basis) {
  if (basis != 'X' && basis != 'Y' && basis != 'Z') {
    invalid("reset", "basis '" + std::string(1, basis) + "' is not X, Y or Z");
  }
  Data data{ChannelKind::reset, basis == 'Z' ? "reset" : basis == 'X' ? "reset_x" : "reset_y", {q}};
  data.pauli = std::string(1, basis);
  data.is_noise = true;
  const int b = basis == 'X' ? 1 : basis == 'Z' ? 2 : 3;  // pattern code I=0 X=1 Z=2 Y=3
  // Forward: ρ → tr(ρ)·|b⟩⟨b| = tr(ρ)·(I + B)/2, so I → I + B and X, Y, Z → 0. Row = output, column = input.
  data.forward = {4, std::vector<Complex>(16)};
  data.forward.entries[0] = 1.0;
  data.forward.entries[static_cast<std::size_t>(b * 4)] = 1.0;
  return make(std::move(data));
}

Qubit Channel::span() const {
  Qubit top = 0;
  for (Qubit q : data_->qubits) top = std::max(top, q + 1);
  return top;
}

const TransferMatrix& Channel::transfer(Direction direction) const {
  if (uses_rotation_form()) throw std::logic_error(description() + " has no local transfer matrix");
  return direction == Direction::forward ? data_->tables->first : data_->tables->second;
}

Channel Channel::adjoint() const {
  const Data& d = *data_;
  if (d.kind == ChannelKind::measure || d.kind == ChannelKind::reset) {
    invalid(d.name, description() + " is a " + (d.kind == ChannelKind::measure ? "measurement" : "reset") +
                        " and has no adjoint gate (circuit adjoint needs unitary gates)");
  }
  if (d.is_noise) {
    invalid(d.name, "noise channel on " + description() +
                        " has no adjoint gate (circuit adjoint needs unitary gates)");
  }
  switch (d.kind) {
    case ChannelKind::s:
      return sdg(d.qubits[0]);
    case ChannelKind::sdg:
      return s(d.qubits[0]);
    case ChannelKind::sx:
      return sxdg(d.qubits[0]);
    case ChannelKind::sxdg:
      return sx(d.qubits[0]);
    case ChannelKind::iswap:
      return iswapdg(d.qubits[0], d.qubits[1]);
    case ChannelKind::iswapdg:
      return iswap(d.qubits[0], d.qubits[1]);
    case ChannelKind::pauli_rotation:
      return rotation(d.name, d.pauli, d.qubits, -d.theta);
    case ChannelKind::unitary_1q:
      return unitary_1q(d.qubits[0], conjugate_transpose(d.matrix, 2));
    case ChannelKind::unitary_2q:
      return unitary_2q(d.qubits[0], d.qubits[1], conjugate_transpose(d.matrix, 4));
    case ChannelKind::transfer_matrix: {
      Data inverse{d.kind, d.name + "_adjoint", d.qubits};
      inverse.tables = std::make_shared<const std::pair<TransferMatrix, TransferMatrix>>(d.tables->second,
                                                                                         d.tables->first);
      return make(std::move(inverse));
    }
    default:
      return *this;  // h x y z cnot cy cz swap ecr are self-inverse
  }
}

std::string Channel::description() const {
  const Data& d = *data_;
  std::string text = d.name;
  if (d.kind == ChannelKind::measure && d.name == "measure_pauli") {
    text += "(pauli=" + d.pauli + ")";
  } else if (d.kind == ChannelKind::pauli_rotation) {
    text += "(";
    if (d.name == "pauli_rotation") text += "pauli=" + d.pauli + ", ";
    text += "theta=" + format_double(d.theta) + ")";
  } else if (!d.parameters.empty()) {
    static const char* const kNames[] = {"px", "py", "pz"};
    text += "(";
    for (std::size_t i = 0; i < d.parameters.size(); ++i) {
      if (i) text += ", ";
      if (d.parameters.size() == 3)
        text += std::string(kNames[i]) + "=";
      else
        text += d.kind == ChannelKind::amplitude_damping ? "gamma=" : "p=";
      text += format_double(d.parameters[i]);
    }
    text += ")";
  }
  text += " [";
  for (std::size_t i = 0; i < d.qubits.size(); ++i) text += (i ? ", " : "") + std::to_string(d.qubits[i]);
  return text + "]";
}

}  // namespace paulistrings
