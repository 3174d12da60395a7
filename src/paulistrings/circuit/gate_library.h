#pragma once
// The standard gate libraries of circuit files — OpenQASM 2's qelib1.inc with Qiskit's extensions and
// OpenQASM 3's stdgates.inc — as exact channels, and the small dense linear algebra that OpenQASM 3's
// gate modifiers need (controlled gates, inverses, powers). Gates of one or two qubits become one
// channel; a gate of three or more qubits is a controlled core unitary V on one or two targets, applied
// exactly as W† · (controlled diagonal as Z-type Pauli rotations) · W with V = W D W† (docs/design.md,
// "Circuit files", says why this and not a native three-qubit table).
//
// Matrices are row-major; on a gate's qubits (q0, q1, …) q0 is the most significant tensor factor.

#include <complex>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "paulistrings/channels/channel.h"

namespace paulistrings {

/// A dense 2^k × 2^k matrix, row-major.
using SmallMatrix = std::vector<Complex>;

/// A gate as k controls (each on |1⟩, or on |0⟩ when negated) over a core unitary of one or two target
/// qubits; its qubits are the controls, then the targets. The core carries the gate's exact phase
/// (a controlled gate turns the core's global phase into a relative one).
struct ControlledGate {
  std::vector<bool> negated;  ///< one entry per control
  int targets = 1;            ///< 1 or 2
  SmallMatrix core;           ///< 2×2 or 4×4
  std::size_t num_qubits() const { return negated.size() + static_cast<std::size_t>(targets); }
};

/// Which library a file's gate names come from.
enum class GateLibrary : std::uint8_t { qelib1, stdgates };

// clang-format off
enum class StandardGateId : std::uint8_t {
  id, u0, x, y, z, h, s, sdg, t, tdg, sx, sxdg, rx, ry, rz, p, u1, u2, u3, u, U,
  cx, cy, cz, ch, swap, iswap, crx, cry, crz, cp, cu1, cu3, cu, csx, rxx, ryy, rzz, rzx,
  ccx, cswap, c3x, c4x, c3sqrtx, rccx, rc3x,
};
// clang-format on

/// Who defines a gate, which decides whether a file may define a gate of that name: never (the
/// language's U and CX), only when it does not include the library (library), or always, the file's
/// definition then winning (extension: gates Qiskit writes out in the files it exports).
enum class GateOrigin : std::uint8_t { language, library, extension };

struct StandardGate {
  StandardGateId id;
  std::string_view name;
  int params;
  int qubits;
  GateOrigin origin;
};

/// A gate of the library (or of the language, or an extension) by name, or nullptr.
const StandardGate* find_standard_gate(std::string_view name, GateLibrary library);

/// Appends the exact channels of `gate` with these parameters on these distinct qubits. Identity gates
/// (id, u0) append nothing. Throws std::invalid_argument for non-finite parameters.
void append_standard_gate(const StandardGate& gate, std::span<const double> params,
                          std::span<const Qubit> qubits, std::vector<Channel>& out);

/// The gate as a ControlledGate with OpenQASM 3's phases (stdgates.inc: u2 and u3 carry
/// exp(−i(φ+λ)/2), rz exp(−iλ/2)); nullopt for the relative-phase gates rccx and rc3x, which have none.
std::optional<ControlledGate> standard_gate_form(const StandardGate& gate, std::span<const double> params);

/// Appends the channels of a controlled gate (qubits: controls, then targets). Up to two qubits in all:
/// one unitary channel; more: the basis change of the core's eigenvectors, the controlled diagonal as
/// Z-type rotations (append_diagonal), and back. Exact up to rounding.
void append_controlled(const ControlledGate& gate, std::span<const Qubit> qubits, std::vector<Channel>& out);

/// The diagonal unitary exp(i·phases[x])|x⟩ on these qubits (x's most significant bit is qubits[0]) as
/// Z-type Pauli rotations, one per nonzero Walsh coefficient of the phases; the global phase is dropped.
void append_diagonal(std::span<const Qubit> qubits, std::span<const double> phases,
                     std::vector<Channel>& out);

// ---- small matrices (for modifiers and tests)

SmallMatrix matrix_identity(int dim);
SmallMatrix matrix_multiply(const SmallMatrix& a, const SmallMatrix& b);
SmallMatrix matrix_adjoint(const SmallMatrix& a);
/// a ⊗ b, a the more significant factor.
SmallMatrix matrix_kron(const SmallMatrix& a, const SmallMatrix& b);
/// The full matrix of a controlled gate (controls first).
SmallMatrix controlled_matrix(const ControlledGate& gate);
/// The matrix of `local` (on `positions` of an n-qubit support, positions[0] most significant) on all n.
SmallMatrix embed_matrix(const SmallMatrix& local, std::span<const int> positions, int num_qubits);
/// U^exponent through U's eigenvalues on their principal branch (arguments in (−π, π]), as OpenQASM 3's
/// pow modifier defines it.
SmallMatrix unitary_power(const SmallMatrix& u, double exponent);
/// A unitary W whose columns are eigenvectors of the unitary `u` (u = W D W†) and the eigenvalues D.
void unitary_eigen(const SmallMatrix& u, SmallMatrix& vectors, std::vector<Complex>& values);

}  // namespace paulistrings
