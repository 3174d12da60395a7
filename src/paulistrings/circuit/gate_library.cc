// The standard gate libraries as channels, and the small dense linear algebra behind controlled gates
// and OpenQASM 3's modifiers (a Hermitian Jacobi eigensolver, unitary eigenvectors and powers, the
// Walsh expansion of a diagonal into Z-type rotations).

#include "paulistrings/circuit/gate_library.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace paulistrings {
namespace {

constexpr double kPi = std::numbers::pi;
const Complex kI(0.0, 1.0);

int dim_of(const SmallMatrix& m) {
  return static_cast<int>(std::lround(std::sqrt(static_cast<double>(m.size()))));
}

Complex& at(SmallMatrix& m, int dim, int r, int c) { return m[static_cast<std::size_t>(r * dim + c)]; }
Complex at(const SmallMatrix& m, int dim, int r, int c) { return m[static_cast<std::size_t>(r * dim + c)]; }

SmallMatrix scaled(Complex factor, SmallMatrix m) {
  for (Complex& v : m) v *= factor;
  return m;
}

/// OpenQASM's U(θ, φ, λ).
SmallMatrix u_matrix(double theta, double phi, double lambda) {
  const double c = std::cos(theta / 2), s = std::sin(theta / 2);
  return {Complex(c), -std::polar(s, lambda), std::polar(s, phi), std::polar(c, phi + lambda)};
}

SmallMatrix diagonal2(Complex a, Complex b) { return {a, 0.0, 0.0, b}; }

SmallMatrix pauli2(char letter) {
  switch (letter) {
    case 'X':
      return {0.0, 1.0, 1.0, 0.0};
    case 'Y':
      return {0.0, -kI, kI, 0.0};
    case 'Z':
      return {1.0, 0.0, 0.0, -1.0};
    default:
      return {1.0, 0.0, 0.0, 1.0};
  }
}

/// exp(−iθ/2 · P⊗Q).
SmallMatrix two_axis_rotation(char p, char q, double theta) {
  const SmallMatrix pq = matrix_kron(pauli2(p), pauli2(q));
  SmallMatrix out = matrix_identity(4);
  for (std::size_t k = 0; k < 16; ++k)
    out[k] = std::cos(theta / 2) * out[k] - kI * std::sin(theta / 2) * pq[k];
  return out;
}

const SmallMatrix& hadamard() {
  static const SmallMatrix h = {std::numbers::sqrt2 / 2, std::numbers::sqrt2 / 2, std::numbers::sqrt2 / 2,
                                -std::numbers::sqrt2 / 2};
  return h;
}
const SmallMatrix& sqrt_x() {
  static const SmallMatrix m = {0.5 * (1.0 + kI), 0.5 * (1.0 - kI), 0.5 * (1.0 - kI), 0.5 * (1.0 + kI)};
  return m;
}
const SmallMatrix& swap_matrix() {
  static const SmallMatrix m = {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  return m;
}

double off_diagonal_norm(const SmallMatrix& m, int dim) {
  double sum = 0.0;
  for (int r = 0; r < dim; ++r)
    for (int c = 0; c < dim; ++c)
      if (r != c) sum += std::norm(at(m, dim, r, c));
  return std::sqrt(sum);
}

bool is_diagonal(const SmallMatrix& m, double tolerance = 1e-12) {
  return off_diagonal_norm(m, dim_of(m)) <= tolerance;
}

/// Cyclic Jacobi on a Hermitian matrix: `vectors` (columns) and real eigenvalues.
void hermitian_eigen(SmallMatrix a, SmallMatrix& vectors, std::vector<double>& values) {
  const int n = dim_of(a);
  vectors = matrix_identity(n);
  double scale = 0.0;
  for (const Complex& v : a) scale = std::max(scale, std::abs(v));
  const double negligible = 1e-17 * std::max(scale, 1e-300);
  for (int sweep = 0; sweep < 64; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) {
        const Complex b = at(a, n, p, q);
        const double magnitude = std::abs(b);
        if (magnitude <= negligible) continue;
        rotated = true;
        // Phase the pair so that the off-diagonal entry is real, then a real Jacobi rotation.
        const Complex phase = b / magnitude;
        const double tau = (at(a, n, q, q).real() - at(a, n, p, p).real()) / (2 * magnitude);
        const double t = (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t), s = t * c;
        SmallMatrix j = matrix_identity(n);
        at(j, n, p, p) = c;
        at(j, n, p, q) = s;
        at(j, n, q, p) = -s * std::conj(phase);
        at(j, n, q, q) = c * std::conj(phase);
        a = matrix_multiply(matrix_adjoint(j), matrix_multiply(a, j));
        vectors = matrix_multiply(vectors, j);
      }
    }
    if (!rotated) break;
  }
  values.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) values[static_cast<std::size_t>(k)] = at(a, n, k, k).real();
}

/// The argument of an eigenvalue on the principal branch (−π, π]; −π (from rounding) reads as π.
double principal_argument(Complex value) {
  const double argument = std::arg(value);
  return argument <= -kPi + 1e-12 ? kPi : argument;
}

Channel unitary_channel(std::span<const Qubit> qubits, const SmallMatrix& m) {
  if (qubits.size() == 1) {
    if (is_diagonal(m)) return Channel::rz(principal_argument(m[3] / m[0]), qubits[0]);
    return Channel::unitary_1q(qubits[0], m);
  }
  return Channel::unitary_2q(qubits[0], qubits[1], m);
}

const StandardGate kGates[] = {
    // clang-format off
    {StandardGateId::id, "id", 0, 1, GateOrigin::library},
    {StandardGateId::u0, "u0", 1, 1, GateOrigin::library},
    {StandardGateId::x, "x", 0, 1, GateOrigin::library},
    {StandardGateId::y, "y", 0, 1, GateOrigin::library},
    {StandardGateId::z, "z", 0, 1, GateOrigin::library},
    {StandardGateId::h, "h", 0, 1, GateOrigin::library},
    {StandardGateId::s, "s", 0, 1, GateOrigin::library},
    {StandardGateId::sdg, "sdg", 0, 1, GateOrigin::library},
    {StandardGateId::t, "t", 0, 1, GateOrigin::library},
    {StandardGateId::tdg, "tdg", 0, 1, GateOrigin::library},
    {StandardGateId::sx, "sx", 0, 1, GateOrigin::library},
    {StandardGateId::sxdg, "sxdg", 0, 1, GateOrigin::library},
    {StandardGateId::rx, "rx", 1, 1, GateOrigin::library},
    {StandardGateId::ry, "ry", 1, 1, GateOrigin::library},
    {StandardGateId::rz, "rz", 1, 1, GateOrigin::library},
    {StandardGateId::p, "p", 1, 1, GateOrigin::library},
    {StandardGateId::u1, "u1", 1, 1, GateOrigin::library},
    {StandardGateId::u1, "phase", 1, 1, GateOrigin::library},
    {StandardGateId::u2, "u2", 2, 1, GateOrigin::library},
    {StandardGateId::u3, "u3", 3, 1, GateOrigin::library},
    {StandardGateId::u, "u", 3, 1, GateOrigin::library},
    {StandardGateId::U, "U", 3, 1, GateOrigin::language},
    {StandardGateId::cx, "cx", 0, 2, GateOrigin::library},
    {StandardGateId::cx, "CX", 0, 2, GateOrigin::language},
    {StandardGateId::cy, "cy", 0, 2, GateOrigin::library},
    {StandardGateId::cz, "cz", 0, 2, GateOrigin::library},
    {StandardGateId::ch, "ch", 0, 2, GateOrigin::library},
    {StandardGateId::swap, "swap", 0, 2, GateOrigin::library},
    {StandardGateId::iswap, "iswap", 0, 2, GateOrigin::extension},
    {StandardGateId::crx, "crx", 1, 2, GateOrigin::library},
    {StandardGateId::cry, "cry", 1, 2, GateOrigin::library},
    {StandardGateId::crz, "crz", 1, 2, GateOrigin::library},
    {StandardGateId::cp, "cp", 1, 2, GateOrigin::library},
    {StandardGateId::cp, "cphase", 1, 2, GateOrigin::library},
    {StandardGateId::cu1, "cu1", 1, 2, GateOrigin::library},
    {StandardGateId::cu3, "cu3", 3, 2, GateOrigin::library},
    {StandardGateId::cu, "cu", 4, 2, GateOrigin::library},
    {StandardGateId::csx, "csx", 0, 2, GateOrigin::library},
    {StandardGateId::rxx, "rxx", 1, 2, GateOrigin::library},
    {StandardGateId::ryy, "ryy", 1, 2, GateOrigin::extension},
    {StandardGateId::rzz, "rzz", 1, 2, GateOrigin::library},
    {StandardGateId::rzx, "rzx", 1, 2, GateOrigin::extension},
    {StandardGateId::ccx, "ccx", 0, 3, GateOrigin::library},
    {StandardGateId::cswap, "cswap", 0, 3, GateOrigin::library},
    {StandardGateId::c3x, "c3x", 0, 4, GateOrigin::library},
    {StandardGateId::c4x, "c4x", 0, 5, GateOrigin::library},
    {StandardGateId::c3sqrtx, "c3sqrtx", 0, 4, GateOrigin::library},
    {StandardGateId::rccx, "rccx", 0, 3, GateOrigin::library},
    {StandardGateId::rc3x, "rc3x", 0, 4, GateOrigin::library},
    {StandardGateId::rc3x, "rcccx", 0, 4, GateOrigin::library},
    // clang-format on
};

/// Whether a library file defines the name: stdgates.inc has the gates of OpenQASM 3's standard header
/// (and the language's U); qelib1.inc (Qiskit's) the rest but not phase, cphase.
bool in_library(const StandardGate& gate, GateLibrary library) {
  if (gate.origin == GateOrigin::extension) return true;
  if (library == GateLibrary::qelib1) return gate.name != "phase" && gate.name != "cphase";
  switch (gate.id) {
    case StandardGateId::u0:
    case StandardGateId::sxdg:
    case StandardGateId::u:
    case StandardGateId::cu1:
    case StandardGateId::cu3:
    case StandardGateId::csx:
    case StandardGateId::rxx:
    case StandardGateId::rzz:
    case StandardGateId::c3x:
    case StandardGateId::c4x:
    case StandardGateId::c3sqrtx:
    case StandardGateId::rccx:
    case StandardGateId::rc3x:
      return false;
    default:
      return true;
  }
}

ControlledGate controlled(std::size_t controls, SmallMatrix core) {
  ControlledGate g;
  g.negated.assign(controls, false);
  g.targets = core.size() == 4 ? 1 : 2;
  g.core = std::move(core);
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------------- small matrices

SmallMatrix matrix_identity(int dim) {
  SmallMatrix m(static_cast<std::size_t>(dim * dim));
  for (int k = 0; k < dim; ++k) at(m, dim, k, k) = 1.0;
  return m;
}

SmallMatrix matrix_multiply(const SmallMatrix& a, const SmallMatrix& b) {
  const int n = dim_of(a);
  SmallMatrix c(a.size());
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const Complex v = at(a, n, i, k);
      if (v == Complex(0.0)) continue;
      for (int j = 0; j < n; ++j) at(c, n, i, j) += v * at(b, n, k, j);
    }
  return c;
}

SmallMatrix matrix_adjoint(const SmallMatrix& a) {
  const int n = dim_of(a);
  SmallMatrix c(a.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) at(c, n, j, i) = std::conj(at(a, n, i, j));
  return c;
}

SmallMatrix matrix_kron(const SmallMatrix& a, const SmallMatrix& b) {
  const int da = dim_of(a), db = dim_of(b), d = da * db;
  SmallMatrix c(static_cast<std::size_t>(d * d));
  for (int i = 0; i < da; ++i)
    for (int j = 0; j < da; ++j)
      for (int k = 0; k < db; ++k)
        for (int l = 0; l < db; ++l) at(c, d, i * db + k, j * db + l) = at(a, da, i, j) * at(b, db, k, l);
  return c;
}

SmallMatrix controlled_matrix(const ControlledGate& gate) {
  const int controls = static_cast<int>(gate.negated.size());
  const int core_dim = 1 << gate.targets;
  const int dim = core_dim << controls;
  SmallMatrix m = matrix_identity(dim);
  int on = 0;  // the control bits that select the core
  for (int k = 0; k < controls; ++k) {
    if (!gate.negated[static_cast<std::size_t>(k)]) on |= 1 << (controls - 1 - k);
  }
  for (int r = 0; r < core_dim; ++r)
    for (int c = 0; c < core_dim; ++c)
      at(m, dim, on * core_dim + r, on * core_dim + c) = at(gate.core, core_dim, r, c);
  return m;
}

SmallMatrix embed_matrix(const SmallMatrix& local, std::span<const int> positions, int num_qubits) {
  const int k = static_cast<int>(positions.size());
  const int local_dim = 1 << k, dim = 1 << num_qubits;
  SmallMatrix m(static_cast<std::size_t>(dim * dim));
  auto local_index = [&](int x) {
    int index = 0;
    for (int j = 0; j < k; ++j)
      index |= ((x >> (num_qubits - 1 - positions[static_cast<std::size_t>(j)])) & 1) << (k - 1 - j);
    return index;
  };
  int mask = 0;
  for (int j = 0; j < k; ++j) mask |= 1 << (num_qubits - 1 - positions[static_cast<std::size_t>(j)]);
  for (int r = 0; r < dim; ++r)
    for (int c = 0; c < dim; ++c) {
      if ((r & ~mask) != (c & ~mask)) continue;
      at(m, dim, r, c) = at(local, local_dim, local_index(r), local_index(c));
    }
  return m;
}

void unitary_eigen(const SmallMatrix& u, SmallMatrix& vectors, std::vector<Complex>& values) {
  const int n = dim_of(u);
  // u = H1 + i·H2 with commuting Hermitian H1, H2: the eigenvectors of H1 + t·H2 for a generic t are
  // eigenvectors of u. A t that makes two of u's eigenvalues collide shows as a non-diagonal result.
  const SmallMatrix ud = matrix_adjoint(u);
  for (const double t : {0.5772156649015329, 1.4142135623730951, -2.718281828459045, 0.3183098861837907}) {
    SmallMatrix m(u.size());
    for (std::size_t k = 0; k < u.size(); ++k) {
      const Complex h1 = 0.5 * (u[k] + ud[k]);
      const Complex h2 = (u[k] - ud[k]) / (2.0 * kI);
      m[k] = h1 + t * h2;
    }
    std::vector<double> real_values;
    hermitian_eigen(m, vectors, real_values);
    const SmallMatrix d = matrix_multiply(matrix_adjoint(vectors), matrix_multiply(u, vectors));
    if (off_diagonal_norm(d, n) > 1e-10) continue;
    values.resize(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) values[static_cast<std::size_t>(k)] = at(d, n, k, k);
    return;
  }
  throw std::logic_error("unitary_eigen: no eigenbasis found (is the matrix unitary?)");
}

SmallMatrix unitary_power(const SmallMatrix& u, double exponent) {
  const int n = dim_of(u);
  SmallMatrix w;
  std::vector<Complex> values;
  unitary_eigen(u, w, values);
  SmallMatrix d(u.size());
  for (int k = 0; k < n; ++k) {
    const Complex v = values[static_cast<std::size_t>(k)];
    at(d, n, k, k) = std::polar(std::pow(std::abs(v), exponent), exponent * principal_argument(v));
  }
  return matrix_multiply(w, matrix_multiply(d, matrix_adjoint(w)));
}

// ------------------------------------------------------------------------------ channels of gates

void append_diagonal(std::span<const Qubit> qubits, std::span<const double> phases,
                     std::vector<Channel>& out) {
  const int n = static_cast<int>(qubits.size());
  const std::size_t size = std::size_t{1} << n;
  if (phases.size() != size) throw std::logic_error("append_diagonal: 2^n phases expected");
  // exp(iφ(x)) = Π_S exp(i·a_S·Z_S) with a_S = 2^−n Σ_x φ(x)(−1)^{|x∧S|}, and exp(i·a·Z_S) = R_{Z_S}(−2a).
  for (std::size_t set = 1; set < size; ++set) {
    double a = 0.0;
    for (std::size_t x = 0; x < size; ++x) a += (std::popcount(x & set) % 2 ? -1.0 : 1.0) * phases[x];
    double theta = std::remainder(-2.0 * a / static_cast<double>(size), 2.0 * kPi);  // θ + 2π: a global sign
    if (std::abs(theta) < 1e-12) continue;
    std::vector<Qubit> support;
    for (int j = 0; j < n; ++j) {
      if ((set >> (n - 1 - j)) & 1) support.push_back(qubits[static_cast<std::size_t>(j)]);
    }
    if (support.size() == 1) {
      out.push_back(Channel::rz(theta, support[0]));
    } else if (support.size() == 2) {
      out.push_back(Channel::rzz(theta, support[0], support[1]));
    } else {
      out.push_back(Channel::pauli_rotation(std::string(support.size(), 'Z'), support, theta));
    }
  }
}

void append_controlled(const ControlledGate& gate, std::span<const Qubit> qubits, std::vector<Channel>& out) {
  if (qubits.size() != gate.num_qubits()) throw std::logic_error("append_controlled: wrong qubit count");
  if (gate.num_qubits() <= 2) {
    out.push_back(unitary_channel(qubits, controlled_matrix(gate)));
    return;
  }
  const std::size_t controls = gate.negated.size();
  const std::span<const Qubit> targets = qubits.subspan(controls);
  // The core's eigenbasis W (core = W D W†): a Clifford where one fits (clean tables), else computed.
  SmallMatrix w, d;
  std::vector<Channel> into, back;  // W† before the diagonal, W after it
  if (is_diagonal(gate.core)) {
    d = gate.core;
  } else if (gate.targets == 1) {
    const SmallMatrix sh = matrix_multiply(diagonal2(1.0, kI), hadamard());
    for (const SmallMatrix* candidate : {&hadamard(), &sh}) {
      const SmallMatrix rotated =
          matrix_multiply(matrix_adjoint(*candidate), matrix_multiply(gate.core, *candidate));
      if (!is_diagonal(rotated)) continue;
      d = rotated;
      if (candidate == &hadamard()) {
        into = {Channel::h(targets[0])};
        back = {Channel::h(targets[0])};
      } else {  // W = S·H: W† = H·S† (S† first), W = S·H (H first)
        into = {Channel::sdg(targets[0]), Channel::h(targets[0])};
        back = {Channel::h(targets[0]), Channel::s(targets[0])};
      }
      break;
    }
  }
  if (d.empty()) {
    std::vector<Complex> values;
    unitary_eigen(gate.core, w, values);
    d = SmallMatrix(gate.core.size());
    const int n = dim_of(d);
    for (int k = 0; k < n; ++k) at(d, n, k, k) = values[static_cast<std::size_t>(k)];
    into = {unitary_channel(targets, matrix_adjoint(w))};
    back = {unitary_channel(targets, w)};
  }
  const int core_dim = 1 << gate.targets;
  const std::size_t size = std::size_t{1} << qubits.size();
  std::vector<double> phases(size, 0.0);
  for (std::size_t x = 0; x < size; ++x) {
    bool selected = true;
    for (std::size_t k = 0; k < controls; ++k) {
      const bool bit = (x >> (qubits.size() - 1 - k)) & 1;
      selected &= bit != gate.negated[k];
    }
    if (selected) {
      const int t = static_cast<int>(x & static_cast<std::size_t>(core_dim - 1));
      phases[x] = principal_argument(at(d, core_dim, t, t));
    }
  }
  out.insert(out.end(), into.begin(), into.end());
  append_diagonal(qubits, phases, out);
  out.insert(out.end(), back.begin(), back.end());
}

const StandardGate* find_standard_gate(std::string_view name, GateLibrary library) {
  for (const StandardGate& gate : kGates) {
    if (gate.name == name && in_library(gate, library)) return &gate;
  }
  return nullptr;
}

std::optional<ControlledGate> standard_gate_form(const StandardGate& gate, std::span<const double> v) {
  using G = StandardGateId;
  const double r = std::numbers::sqrt2 / 2;
  switch (gate.id) {
    case G::id:
    case G::u0:
      return controlled(0, matrix_identity(2));
    case G::x:
      return controlled(0, pauli2('X'));
    case G::y:
      return controlled(0, pauli2('Y'));
    case G::z:
      return controlled(0, pauli2('Z'));
    case G::h:
      return controlled(0, hadamard());
    case G::s:
      return controlled(0, diagonal2(1.0, kI));
    case G::sdg:
      return controlled(0, diagonal2(1.0, -kI));
    case G::t:
      return controlled(0, diagonal2(1.0, Complex(r, r)));
    case G::tdg:
      return controlled(0, diagonal2(1.0, Complex(r, -r)));
    case G::sx:
      return controlled(0, sqrt_x());
    case G::sxdg:
      return controlled(0, matrix_adjoint(sqrt_x()));
    case G::rx:
      return controlled(0, u_matrix(v[0], -kPi / 2, kPi / 2));
    case G::ry:
      return controlled(0, u_matrix(v[0], 0.0, 0.0));
    case G::rz:
      return controlled(0, diagonal2(std::polar(1.0, -v[0] / 2), std::polar(1.0, v[0] / 2)));
    case G::p:
    case G::u1:
      return controlled(0, diagonal2(1.0, std::polar(1.0, v[0])));
    case G::u2:
      return controlled(0, scaled(std::polar(1.0, -(v[0] + v[1]) / 2), u_matrix(kPi / 2, v[0], v[1])));
    case G::u3:
      return controlled(0, scaled(std::polar(1.0, -(v[1] + v[2]) / 2), u_matrix(v[0], v[1], v[2])));
    case G::u:
    case G::U:
      return controlled(0, u_matrix(v[0], v[1], v[2]));
    case G::cx:
      return controlled(1, pauli2('X'));
    case G::cy:
      return controlled(1, pauli2('Y'));
    case G::cz:
      return controlled(1, pauli2('Z'));
    case G::ch:
      return controlled(1, hadamard());
    case G::swap:
      return controlled(0, swap_matrix());
    case G::iswap:
      return controlled(0, {1, 0, 0, 0, 0, 0, kI, 0, 0, kI, 0, 0, 0, 0, 0, 1});
    case G::crx:
      return controlled(1, u_matrix(v[0], -kPi / 2, kPi / 2));
    case G::cry:
      return controlled(1, u_matrix(v[0], 0.0, 0.0));
    case G::crz:
      return controlled(1, diagonal2(std::polar(1.0, -v[0] / 2), std::polar(1.0, v[0] / 2)));
    case G::cp:
    case G::cu1:
      return controlled(1, diagonal2(1.0, std::polar(1.0, v[0])));
    case G::cu3:
      return controlled(1, u_matrix(v[0], v[1], v[2]));
    case G::cu:
      return controlled(1, scaled(std::polar(1.0, v[3]), u_matrix(v[0], v[1], v[2])));
    case G::csx:
      return controlled(1, sqrt_x());
    case G::rxx:
      return controlled(0, two_axis_rotation('X', 'X', v[0]));
    case G::ryy:
      return controlled(0, two_axis_rotation('Y', 'Y', v[0]));
    case G::rzz:
      return controlled(0, two_axis_rotation('Z', 'Z', v[0]));
    case G::rzx:
      return controlled(0, two_axis_rotation('Z', 'X', v[0]));
    case G::ccx:
      return controlled(2, pauli2('X'));
    case G::cswap:
      return controlled(1, swap_matrix());
    case G::c3x:
      return controlled(3, pauli2('X'));
    case G::c4x:
      return controlled(4, pauli2('X'));
    case G::c3sqrtx:
      return controlled(3, sqrt_x());
    case G::rccx:
    case G::rc3x:
      return std::nullopt;
  }
  return std::nullopt;
}

void append_standard_gate(const StandardGate& gate, std::span<const double> v, std::span<const Qubit> q,
                          std::vector<Channel>& out) {
  using G = StandardGateId;
  for (double value : v) {
    if (!std::isfinite(value))
      throw std::invalid_argument(std::string(gate.name) + ": a parameter is not finite");
  }
  switch (gate.id) {
    case G::id:
    case G::u0:
      return;
    case G::x:
      out.push_back(Channel::x(q[0]));
      return;
    case G::y:
      out.push_back(Channel::y(q[0]));
      return;
    case G::z:
      out.push_back(Channel::z(q[0]));
      return;
    case G::h:
      out.push_back(Channel::h(q[0]));
      return;
    case G::s:
      out.push_back(Channel::s(q[0]));
      return;
    case G::sdg:
      out.push_back(Channel::sdg(q[0]));
      return;
    case G::t:
      out.push_back(Channel::rz(kPi / 4, q[0]));
      return;
    case G::tdg:
      out.push_back(Channel::rz(-kPi / 4, q[0]));
      return;
    case G::sx:
      out.push_back(Channel::sx(q[0]));
      return;
    case G::sxdg:
      out.push_back(Channel::sxdg(q[0]));
      return;
    case G::rx:
      out.push_back(Channel::rx(v[0], q[0]));
      return;
    case G::ry:
      out.push_back(Channel::ry(v[0], q[0]));
      return;
    case G::rz:
    case G::p:
    case G::u1:
      out.push_back(Channel::rz(v[0], q[0]));
      return;
    case G::u2:
      out.push_back(Channel::unitary_1q(q[0], u_matrix(kPi / 2, v[0], v[1])));
      return;
    case G::u3:
    case G::u:
    case G::U:
      out.push_back(v[0] == 0.0 ? Channel::rz(v[1] + v[2], q[0])
                                : Channel::unitary_1q(q[0], u_matrix(v[0], v[1], v[2])));
      return;
    case G::cx:
      out.push_back(Channel::cnot(q[0], q[1]));
      return;
    case G::cy:
      out.push_back(Channel::cy(q[0], q[1]));
      return;
    case G::cz:
      out.push_back(Channel::cz(q[0], q[1]));
      return;
    case G::swap:
      out.push_back(Channel::swap(q[0], q[1]));
      return;
    case G::iswap:
      out.push_back(Channel::iswap(q[0], q[1]));
      return;
    case G::rxx:
      out.push_back(Channel::rxx(v[0], q[0], q[1]));
      return;
    case G::ryy:
      out.push_back(Channel::ryy(v[0], q[0], q[1]));
      return;
    case G::rzz:
      out.push_back(Channel::rzz(v[0], q[0], q[1]));
      return;
    case G::rzx:
      out.push_back(Channel::pauli_rotation("ZX", {q[0], q[1]}, v[0]));
      return;
    case G::cswap: {
      // cswap(c; a, b) = cx(b, a) · ccx(c, a; b) · cx(b, a).
      out.push_back(Channel::cnot(q[2], q[1]));
      const Qubit toffoli[] = {q[0], q[1], q[2]};
      append_controlled(controlled(2, pauli2('X')), toffoli, out);
      out.push_back(Channel::cnot(q[2], q[1]));
      return;
    }
    case G::rccx: {
      // qelib1.inc's definition: the Toffoli up to a relative phase, with three CNOTs.
      const Qubit a = q[0], b = q[1], c = q[2];
      out.insert(out.end(), {Channel::h(c), Channel::rz(kPi / 4, c), Channel::cnot(b, c),
                             Channel::rz(-kPi / 4, c), Channel::cnot(a, c), Channel::rz(kPi / 4, c),
                             Channel::cnot(b, c), Channel::rz(-kPi / 4, c), Channel::h(c)});
      return;
    }
    case G::rc3x: {
      const Qubit a = q[0], b = q[1], c = q[2], d = q[3];
      out.insert(out.end(),
                 {Channel::h(d), Channel::rz(kPi / 4, d), Channel::cnot(c, d), Channel::rz(-kPi / 4, d),
                  Channel::h(d), Channel::cnot(a, d), Channel::rz(kPi / 4, d), Channel::cnot(b, d),
                  Channel::rz(-kPi / 4, d), Channel::cnot(a, d), Channel::rz(kPi / 4, d), Channel::cnot(b, d),
                  Channel::rz(-kPi / 4, d), Channel::h(d), Channel::rz(kPi / 4, d), Channel::cnot(c, d),
                  Channel::rz(-kPi / 4, d), Channel::h(d)});
      return;
    }
    default: {
      // The controlled gates: one unitary channel on two qubits, the exact decomposition above.
      const std::optional<ControlledGate> form = standard_gate_form(gate, v);
      append_controlled(*form, q, out);
      return;
    }
  }
}

}  // namespace paulistrings
