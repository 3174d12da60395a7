#pragma once
// Channel: one gate or noise channel of a circuit, width-independent (qubit indices, parameters
// and, for channels on ≤ 2 qubits, their local Pauli transfer matrix). Factories validate their
// input and throw std::invalid_argument naming the gate and the offending value.
//
// Local Pauli patterns: a qubit's Pauli is coded I=0 X=1 Z=2 Y=3 (x | z<<1); on a support
// (q0, q1) the pattern is code(q0) | code(q1) << 2. A transfer matrix T (d²×d², d = 2^k) maps
// input pattern `in` to Σ_out T[out·d² + in]·P_out, phase folded in (docs/design.md §2.7).

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paulistrings {

using Complex = std::complex<double>;
using Qubit = std::size_t;

/// Forward = Schrödinger (U A U†, channel map E), Heisenberg = adjoint (U† A U, E†): docs/design.md §2.4.
enum class Direction : std::uint8_t { forward, heisenberg };
std::string_view to_string(Direction direction);
/// "forward" or "heisenberg" (case-insensitive); throws std::invalid_argument otherwise.
Direction parse_direction(std::string_view text);

// clang-format off
enum class ChannelKind : std::uint8_t {
  h, s, sdg, x, y, z, sx, sxdg, cnot, cy, cz, swap, iswap, iswapdg, ecr,  // Cliffords
  pauli_rotation,                                                          // rx ry rz rxx ryy rzz, any weight
  unitary_1q, unitary_2q,                                                  // general unitaries via their PTM
  transfer_matrix,                                                         // raw PTM or a user-defined map
  depolarize, dephase, pauli_channel, depolarize2, amplitude_damping,      // noise
  measure, reset,                                                          // measurement and reset
};
// clang-format on

/// A square local transfer matrix over Pauli patterns, row-major (dim × dim, dim = 4 or 16).
struct TransferMatrix {
  int dim = 0;
  std::vector<Complex> entries;
  Complex operator()(int out, int in) const { return entries[static_cast<std::size_t>(out * dim + in)]; }
  /// Conjugate transpose: the transfer matrix of the adjoint map (Pauli basis is orthonormal).
  TransferMatrix adjoint() const;
};

/// A user-defined map on a local Pauli string: label over the support (char j = qubit j of the
/// support, alphabet IXYZ) → terms as (local label, amplitude).
using LocalPauliMap =
    std::function<std::vector<std::pair<std::string, Complex>>(std::string_view local_label)>;

class Channel {
 public:
  // Cliffords.
  static Channel h(Qubit q);
  static Channel s(Qubit q);
  static Channel sdg(Qubit q);
  static Channel x(Qubit q);
  static Channel y(Qubit q);
  static Channel z(Qubit q);
  static Channel sx(Qubit q);
  static Channel sxdg(Qubit q);
  static Channel cnot(Qubit control, Qubit target);
  static Channel cy(Qubit control, Qubit target);
  static Channel cz(Qubit q0, Qubit q1);
  static Channel swap(Qubit q0, Qubit q1);
  static Channel iswap(Qubit q0, Qubit q1);
  static Channel iswapdg(Qubit q0, Qubit q1);
  static Channel ecr(Qubit q0, Qubit q1);
  // Pauli rotations R_P(θ) = exp(−iθP/2).
  static Channel rx(double theta, Qubit q);
  static Channel ry(double theta, Qubit q);
  static Channel rz(double theta, Qubit q);
  static Channel rxx(double theta, Qubit q0, Qubit q1);
  static Channel ryy(double theta, Qubit q0, Qubit q1);
  static Channel rzz(double theta, Qubit q0, Qubit q1);
  /// pauli[k] (X, Y or Z) acts on qubits[k]; any weight ≥ 1, distinct qubits.
  static Channel pauli_rotation(std::string_view pauli, std::vector<Qubit> qubits, double theta);
  // General unitaries, row-major; unitary_2q acts on |q0 q1⟩ with q0 the more significant factor.
  static Channel unitary_1q(Qubit q, std::span<const Complex> matrix);
  static Channel unitary_2q(Qubit q0, Qubit q1, std::span<const Complex> matrix);
  /// A raw real Pauli transfer matrix on 1 or 2 qubits (4×4 or 16×16, row-major, pattern basis).
  static Channel transfer_matrix(std::vector<Qubit> qubits, std::span<const double> ptm,
                                 std::string name = "transfer_matrix");
  /// A user-defined channel on 1 or 2 qubits given only its forward action on one string; its
  /// table is derived by probing the local basis strings. Without `adjoint_map` the Heisenberg
  /// table is the conjugate transpose of the forward one.
  static Channel custom(std::string name, std::vector<Qubit> qubits, const LocalPauliMap& forward_map,
                        const LocalPauliMap& adjoint_map = {});
  // Noise (parameters as in the original crate and QuEST: docs/design.md §2.6).
  static Channel depolarize(double p, Qubit q);
  static Channel dephase(double p, Qubit q);
  static Channel pauli_channel(double px, double py, double pz, Qubit q);
  static Channel depolarize2(double p, Qubit q0, Qubit q1);
  static Channel amplitude_damping(double gamma, Qubit q);
  // Measurement and reset, as the channels they are when no outcome is used afterwards (docs/design.md,
  // "Circuit files"). A non-selective measurement of the Pauli product P keeps every Pauli string that
  // commutes with P and removes every one that anticommutes (both directions: the map is self-adjoint).
  /// Measurement of Z on q (OpenQASM's `measure q -> c`).
  static Channel measure(Qubit q);
  /// Measurement of the product pauli[0]@qubits[0] · pauli[1]@qubits[1] · …, any weight ≥ 1 (stim's MPP,
  /// MX MY MZ, MXX …). Up to two qubits it is a local table; above, the rotation form with cos = sin = 0.
  static Channel measure_pauli(std::string_view pauli, std::vector<Qubit> qubits);
  /// Reset of q to the +1 eigenstate of `basis` (Z: |0⟩, X: |+⟩, Y: |+i⟩). Forward: I → I + B and every
  /// other Pauli → 0; Heisenberg: B → I, I → I, the other two → 0.
  static Channel reset(Qubit q, char basis = 'Z');

  ChannelKind kind() const { return data_->kind; }
  /// Task-JSON vocabulary name: "h", "cnot", "rz", "pauli_rotation", "depolarize", ...
  const std::string& name() const { return data_->name; }
  const std::vector<Qubit>& qubits() const { return data_->qubits; }
  /// Rotation letters (one per qubit) for pauli_rotation, measured letters for measure, the basis letter
  /// for reset; empty otherwise.
  const std::string& pauli() const { return data_->pauli; }
  /// θ for rotations; 0 otherwise.
  double theta() const { return data_->theta; }
  /// Noise parameters (p; px py pz; gamma); empty otherwise.
  const std::vector<double>& parameters() const { return data_->parameters; }
  /// Row-major unitary matrix for unitary_1q / unitary_2q; empty otherwise.
  const std::vector<Complex>& matrix() const { return data_->matrix; }
  bool is_rotation() const { return data_->kind == ChannelKind::pauli_rotation; }
  /// Non-unitary: noise, measurement or reset (no adjoint gate).
  bool is_noise() const { return data_->is_noise; }
  bool is_measurement() const { return data_->kind == ChannelKind::measure; }
  bool is_reset() const { return data_->kind == ChannelKind::reset; }
  /// True when the channel is applied in the rotation form (rotations, and measurements of more than two
  /// qubits): it has no local transfer matrix.
  bool uses_rotation_form() const { return is_rotation() || (is_measurement() && data_->qubits.size() > 2); }
  /// Largest qubit index used + 1.
  Qubit span() const;
  /// Local transfer matrix of the given direction (not for channels in the rotation form).
  const TransferMatrix& transfer(Direction direction) const;
  /// True when the transfer matrices have a nonzero imaginary entry (only user-defined maps can).
  bool has_complex_transfer() const { return data_->complex_transfer; }
  /// The inverse gate (rotations negate θ, s↔sdg, unitaries are conjugate-transposed, ...);
  /// throws std::invalid_argument for noise and non-unitary maps.
  Channel adjoint() const;
  /// Human-readable form for messages and traces, e.g. "rz(theta=0.3) [5]".
  std::string description() const;

 private:
  struct Data {
    Data(ChannelKind k, std::string n, std::vector<Qubit> q)
        : kind(k), name(std::move(n)), qubits(std::move(q)) {}
    ChannelKind kind;
    std::string name;
    std::vector<Qubit> qubits;
    std::string pauli;
    double theta = 0.0;
    std::vector<double> parameters;
    std::vector<Complex> matrix;
    TransferMatrix forward, heisenberg;  ///< filled by the factories; make() moves them into `tables`
    /// Both tables, shared: every Clifford of one kind points at the same pair (a circuit of a million
    /// CNOTs holds one 16×16 table, not a million).
    std::shared_ptr<const std::pair<TransferMatrix, TransferMatrix>> tables;
    bool is_noise = false;
    bool complex_transfer = false;
  };
  explicit Channel(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  static Channel make(Data data);
  static Channel clifford(ChannelKind kind, std::string name, std::vector<Qubit> qubits);
  static Channel rotation(std::string name, std::string pauli, std::vector<Qubit> qubits, double theta);

  std::shared_ptr<const Data> data_;
};

/// Pauli transfer matrix of a local unitary (2×2 or 4×4 row-major): T[out][in] = tr(P_out U P_in U†)/d.
TransferMatrix unitary_transfer_matrix(std::span<const Complex> unitary, int num_qubits);
/// Values within 1e-15 of 0 or ±1 become exactly 0 or ±1 (so quarter turns stay one term).
double snap_unit(double value);
/// Row-major matrix of a named Clifford gate on 1 or 2 qubits (as used for its table).
std::vector<Complex> clifford_matrix(ChannelKind kind);

}  // namespace paulistrings
