#pragma once
// Test helpers that connect the library to the dense oracle: library channels as oracle gates,
// Pauli sums as dense operators (and back), random channels, circuits, sums and states drawn from
// a seeded generator, and a tolerance comparison of operators.

#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <string>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/testing/dense_simulator.h"

namespace paulistrings::testing {

/// The oracle's description of a library channel (transfer-matrix channels have none: throws).
/// Qubit q of the channel becomes oracle qubit q − offset.
dense::DenseGate to_dense_gate(const Channel& channel, std::size_t offset = 0);
/// Applies a whole circuit to a dense operator on num_qubits oracle qubits (circuit qubits
/// offset…offset+num_qubits−1) in the given direction (Heisenberg walks backwards).
dense::Matrix apply_circuit_dense(const dense::Matrix& op, const Circuit& circuit, Direction direction,
                                  std::size_t num_qubits, std::size_t offset = 0);

/// Σ c_P P as a dense 2^n × 2^n matrix (n ≤ 8), reading qubits offset…offset+n−1 of each key.
template <int W, Coefficient C>
dense::Matrix dense_operator(const PauliSum<W, C>& sum, std::size_t num_qubits, std::size_t offset = 0);
/// The Pauli coefficients c_P = tr(P A)/2^n of a dense operator, |c| > drop_below, as a complex sum
/// placed at qubit `offset` of a sum on total_qubits qubits.
template <int W>
PauliSum<W, Complex> sum_from_dense(const dense::Matrix& op, std::size_t num_qubits, std::size_t total_qubits,
                                    std::size_t offset = 0, double drop_below = 1e-14);

/// Passes when max |a − b| ≤ tolerance·max(1, max|b|).
::testing::AssertionResult operators_close(const dense::Matrix& actual, const dense::Matrix& expected,
                                           double tolerance = 1e-12);

/// The kinds random_channel draws from.
struct RandomChannelOptions {
  bool cliffords = true;
  bool rotations = true;
  bool unitaries = true;
  bool noise = true;
  /// Measurements (single-qubit Z, Pauli products of weight 1 to 4) and resets (Z, X or Y basis).
  bool measurements = false;
  double special_angle_probability = 0.2;  ///< θ a multiple of π/2 (exercises snapping)
};
/// One random channel on qubits offset…offset+num_qubits−1 (num_qubits ≥ 2).
Channel random_channel(std::mt19937_64& rng, std::size_t num_qubits, const RandomChannelOptions& options = {},
                       std::size_t offset = 0);
/// `depth` random channels on a circuit of total_qubits qubits, acting on offset…offset+num_qubits−1.
Circuit random_circuit(std::mt19937_64& rng, std::size_t num_qubits, std::size_t depth,
                       const RandomChannelOptions& options = {}, std::size_t total_qubits = 0,
                       std::size_t offset = 0);
/// A Haar-random d×d unitary (row-major), d = 2 or 4.
std::vector<Complex> random_unitary(std::mt19937_64& rng, int dim);
/// Random (label, coefficient) terms on num_qubits qubits; real coefficients unless complex_values.
std::vector<std::pair<std::string, Complex>> random_terms(std::mt19937_64& rng, std::size_t num_qubits,
                                                          std::size_t count, bool complex_values);
/// Dense labels of `terms` shifted to start at qubit `offset` of a total_qubits register (sparse form).
std::vector<std::pair<std::string, Complex>> shift_terms(
    const std::vector<std::pair<std::string, Complex>>& terms, std::size_t offset);
/// A random per-qubit product-state label over 0 1 + - r l.
std::string random_product_label(std::mt19937_64& rng, std::size_t num_qubits);
/// n signed generators of a random stabilizer state (random Clifford circuit applied to |0…0⟩).
std::vector<std::string> random_stabilizer_generators(std::mt19937_64& rng, std::size_t num_qubits);

}  // namespace paulistrings::testing

#include "paulistrings/testing/oracle_bridge.inl"
