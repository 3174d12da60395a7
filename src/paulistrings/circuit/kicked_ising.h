#pragma once
// The standard utility-scale workload: the 127-qubit IBM Eagle heavy-hex coupling map (embedded in
// the library from data/heavy_hex_127.json, three edge-disjoint layers, 144 edges) and the
// kicked-Ising Trotter circuit on it (Kim et al., Nature 618, 500 (2023)).

#include <cstddef>
#include <utility>
#include <vector>

#include "paulistrings/circuit/circuit.h"

namespace paulistrings {

inline constexpr std::size_t kHeavyHexQubits = 127;

/// The 144 edges of the heavy-hex map, layer by layer in file order (red, blue, green).
const std::vector<std::pair<Qubit, Qubit>>& heavy_hex_127_edges();

/// `steps` Trotter steps; one step = rx(theta_h) on every qubit 0…126, then rzz(theta_zz) on every
/// edge (theta_zz = −π/2 in the experiment).
Circuit kicked_ising_circuit(std::size_t steps, double theta_h, double theta_zz = -1.5707963267948966);

}  // namespace paulistrings
