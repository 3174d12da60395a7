// The published cross-engine workloads (see workloads.h): each is built as the list of gates in the
// order they act on the observable, then reversed into a time-ordered circuit.
#include "paulistrings/circuit/workloads.h"

#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

namespace paulistrings {
namespace {

/// The time-ordered circuit whose Heisenberg propagation applies `applied` first to last.
Circuit heisenberg_order(std::size_t num_qubits, const std::vector<Channel>& applied) {
  Circuit circuit(num_qubits);
  for (auto it = applied.rbegin(); it != applied.rend(); ++it) circuit.append(*it);
  return circuit;
}

std::string site_label(char pauli, std::size_t q) {
  std::string label(1, pauli);
  label += std::to_string(q);
  return label;
}

}  // namespace

Workload tfim_chain(std::size_t n, std::size_t steps, double theta) {
  if (n < 2) throw std::invalid_argument("tfim_chain: need at least 2 sites, got " + std::to_string(n));
  std::vector<Channel> applied;
  for (std::size_t step = 0; step < steps; ++step) {
    for (Qubit q = 0; q < n; ++q) applied.push_back(Channel::rx(theta, q));
    for (Qubit q = 0; q + 1 < n; ++q) applied.push_back(Channel::rzz(theta, q, q + 1));
  }
  std::vector<std::string> observable;
  for (std::size_t q = 0; q < n; ++q) observable.push_back(site_label('Z', q));
  return {"tfim_chain", heisenberg_order(n, applied), observable, 1e-6};
}

Workload heisenberg_chain(std::size_t n, std::size_t steps, double theta) {
  if (n < 2) throw std::invalid_argument("heisenberg_chain: need at least 2 sites, got " + std::to_string(n));
  std::vector<Channel> applied;
  for (std::size_t step = 0; step < steps; ++step) {
    for (Qubit q = 0; q + 1 < n; ++q) {
      applied.push_back(Channel::rxx(theta, q, q + 1));
      applied.push_back(Channel::ryy(theta, q, q + 1));
      applied.push_back(Channel::rzz(theta, q, q + 1));
    }
    for (Qubit q = 0; q < n; ++q) applied.push_back(Channel::rz(theta, q));
  }
  return {"heisenberg_chain", heisenberg_order(n, applied), {"Z0"}, 1e-6};
}

Workload tfim_2d(std::size_t side, std::size_t steps) {
  if (side < 2)
    throw std::invalid_argument("tfim_2d: need a side of at least 2, got " + std::to_string(side));
  const std::size_t n = side * side;
  std::vector<std::pair<Qubit, Qubit>> bonds;
  for (std::size_t row = 0; row < side; ++row) {
    for (std::size_t col = 0; col < side; ++col) {
      const Qubit idx = row * side + col;
      if (col + 1 < side) bonds.emplace_back(idx, idx + 1);
      if (row + 1 < side) bonds.emplace_back(idx, idx + side);
    }
  }
  std::vector<Channel> applied;
  for (std::size_t step = 0; step < steps; ++step) {
    for (Qubit q = n; q-- > 0;) applied.push_back(Channel::rx(0.05, q));
    for (Qubit q = n; q-- > 0;) applied.push_back(Channel::rz(0.05, q));
    for (auto it = bonds.rbegin(); it != bonds.rend(); ++it)
      applied.push_back(Channel::rzz(0.075, it->first, it->second));
  }
  const std::size_t r = side / 2, c = side / 2 - 1;
  const std::size_t a = r * side + c;
  std::string observable = site_label('Z', a);
  observable += ' ';
  observable += site_label('Z', a + 1);
  return {"tfim_2d", heisenberg_order(n, applied), {observable}, 1e-6};
}

Workload transpiled_brickwork(std::size_t n, std::size_t layers, std::uint64_t seed) {
  if (n < 2) throw std::invalid_argument("transpiled_brickwork: need at least 2 qubits, got " + std::to_string(n));
  std::mt19937_64 rng(seed);
  // From the generator's raw bits (std::mt19937_64 is the same everywhere; the standard distributions
  // are not): 53 bits, scaled to [−π, π).
  auto angle = [&rng] { return (static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0) * std::numbers::pi; };
  Circuit circuit(n);
  for (std::size_t layer = 0; layer < layers; ++layer) {
    for (Qubit q = 0; q < n; ++q) {
      const double a = angle();
      const double b = angle();
      circuit.append(Channel::rz(a, q));
      circuit.append(Channel::sx(q));
      circuit.append(Channel::rz(b, q));
    }
    for (Qubit q = layer % 2; q + 1 < n; q += 2) circuit.append(Channel::cnot(q, q + 1));
  }
  return {"transpiled_brickwork", std::move(circuit), {site_label('Z', n / 2)}, 1e-4};
}

}  // namespace paulistrings
