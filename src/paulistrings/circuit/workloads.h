#pragma once
// The cross-engine workloads other Pauli-propagation engines published timings for, defined exactly
// as they defined them (their times: docs/PERFORMANCE.md): gates are listed in the order they act on
// the observable, each as the Heisenberg map O → U†OU with U = exp(−iθP/2), with |c| < atol truncated
// after every gate.
// As a time-ordered circuit propagated in the Heisenberg direction that list is reversed, which is
// how `circuit` holds it: propagate(observable, circuit, {direction = heisenberg}) applies the
// gates in the published order.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "paulistrings/circuit/circuit.h"

namespace paulistrings {

struct Workload {
  std::string name;
  Circuit circuit{0};                   ///< time order; propagate it in the Heisenberg direction
  std::vector<std::string> observable;  ///< sparse labels, each term with coefficient 1
  double atol = 1e-6;                   ///< per-gate coefficient cutoff
};

/// Open chain of n qubits, `steps` steps; a step applies rx(θ) on sites 0…n−1 ascending, then
/// rzz(θ) on bonds (0,1)…(n−2,n−1) ascending. Observable Σ_i Z_i. Published at n = 64, 10 steps,
/// θ = 0.2 (read-out ⟨0…0|O|0…0⟩ and the final term count).
Workload tfim_chain(std::size_t n = 64, std::size_t steps = 10, double theta = 0.2);

/// Open chain of n qubits, `steps` steps; a step applies, for bond i = 0…n−2 in turn, rxx(θ),
/// ryy(θ), rzz(θ) on (i, i+1), then rz(θ) on sites 0…n−1. Observable Z_0. Published at n = 14,
/// 10 steps, θ = 0.2 (read-out the Z_0 coefficient and the final term count).
Workload heisenberg_chain(std::size_t n = 14, std::size_t steps = 10, double theta = 0.2);

/// Open L×L grid, qubits row-major (idx = row·L + col); bonds enumerated row by row, col by col,
/// the horizontal (idx, idx+1) first when it exists, then the vertical (idx, idx+L). A step applies
/// rx(0.05) on qubits N−1…0, then rz(0.05) on N−1…0, then rzz(0.075) on the bonds in reversed
/// enumeration order. Observable Z⊗Z on (r·L+c, r·L+c+1) with r = L/2, c = L/2 − 1. Published at
/// L = 6…18, 21 steps.
Workload tfim_2d(std::size_t side, std::size_t steps = 21);

/// Not a published workload: a circuit in the shape a transpiler emits for hardware whose native gates
/// are rz, sx and cx — `layers` layers, each rz(a)·sx·rz(b) on every qubit (angles uniform in
/// [−π, π) from the raw bits of std::mt19937_64 seeded with `seed`, drawn qubit by qubit) then CNOTs on the bricks
/// (q, q+1) from q = layer mod 2; listed in time order. Two thirds of its gates are Clifford
/// permutations (sx, cx) between rotations: the case for blocks that run through Clifford gates
/// (docs/design.md §7.7). Observable Z on qubit n/2, |c| < 1e-4 truncated.
Workload transpiled_brickwork(std::size_t n = 40, std::size_t layers = 14, std::uint64_t seed = 5);

}  // namespace paulistrings
