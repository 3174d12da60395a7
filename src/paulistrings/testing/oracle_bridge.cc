// The oracle bridge: library channels as dense gates, and seeded random test inputs.

#include "paulistrings/testing/oracle_bridge.h"

#include <numbers>
#include <utility>

#include "paulistrings/run/propagate.h"

namespace paulistrings::testing {

dense::DenseGate to_dense_gate(const Channel& channel, std::size_t offset) {
  dense::DenseGate gate;
  for (Qubit q : channel.qubits()) gate.qubits.push_back(static_cast<int>(q - offset));
  switch (channel.kind()) {
    case ChannelKind::pauli_rotation:
      gate.name = "pauli_rotation";
      gate.pauli = channel.pauli();
      gate.params = {channel.theta()};
      return gate;
    case ChannelKind::unitary_1q:
    case ChannelKind::unitary_2q: {
      gate.name = channel.name();
      const int d = channel.kind() == ChannelKind::unitary_1q ? 2 : 4;
      gate.matrix = dense::Matrix::zeros(d);
      for (int r = 0; r < d; ++r)
        for (int c = 0; c < d; ++c) gate.matrix(r, c) = channel.matrix()[static_cast<std::size_t>(r * d + c)];
      return gate;
    }
    case ChannelKind::iswapdg:
      // The oracle knows iswap; its adjoint is taken there, independently of the library's table.
      gate.name = "unitary_2q";
      gate.matrix = dense::adjoint(dense::gate_matrix("iswap"));
      return gate;
    case ChannelKind::measure:
    case ChannelKind::reset:
      gate.name = channel.is_measurement() ? "measure" : "reset";
      gate.pauli = channel.pauli();
      return gate;
    case ChannelKind::transfer_matrix:
      throw std::invalid_argument("the oracle has no form for transfer-matrix channel " + channel.name());
    default:
      gate.name = channel.name();
      gate.params = channel.parameters();
      return gate;
  }
}

dense::Matrix apply_circuit_dense(const dense::Matrix& op, const Circuit& circuit, Direction direction,
                                  std::size_t num_qubits, std::size_t offset) {
  dense::Matrix result = op;
  const bool heisenberg = direction == Direction::heisenberg;
  for (std::size_t step = 0; step < circuit.size(); ++step) {
    const std::size_t k = heisenberg ? circuit.size() - 1 - step : step;
    result = dense::apply_gate(result, to_dense_gate(circuit[k], offset), static_cast<int>(num_qubits),
                               heisenberg);
  }
  return result;
}

::testing::AssertionResult operators_close(const dense::Matrix& actual, const dense::Matrix& expected,
                                           double tolerance) {
  if (actual.dim() != expected.dim()) {
    return ::testing::AssertionFailure() << "dimension " << actual.dim() << " vs " << expected.dim();
  }
  double scale = 1.0;
  for (int r = 0; r < expected.dim(); ++r)
    for (int c = 0; c < expected.dim(); ++c) scale = std::max(scale, std::abs(expected(r, c)));
  const double difference = dense::max_abs_diff(actual, expected);
  if (difference <= tolerance * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "max |actual − expected| = " << difference << " > " << tolerance * scale;
}

std::vector<Complex> random_unitary(std::mt19937_64& rng, int dim) {
  // Gram–Schmidt on a complex Gaussian matrix gives a Haar-random unitary.
  std::normal_distribution<double> normal;
  std::vector<Complex> m(static_cast<std::size_t>(dim * dim));
  for (Complex& v : m) v = Complex(normal(rng), normal(rng));
  for (int r = 0; r < dim; ++r) {
    for (int p = 0; p < r; ++p) {
      Complex dot = 0.0;
      for (int c = 0; c < dim; ++c) dot += std::conj(m[p * dim + c]) * m[r * dim + c];
      for (int c = 0; c < dim; ++c) m[r * dim + c] -= dot * m[p * dim + c];
    }
    double norm = 0.0;
    for (int c = 0; c < dim; ++c) norm += std::norm(m[r * dim + c]);
    norm = std::sqrt(norm);
    for (int c = 0; c < dim; ++c) m[r * dim + c] /= norm;
  }
  return m;
}

Channel random_channel(std::mt19937_64& rng, std::size_t num_qubits, const RandomChannelOptions& options,
                       std::size_t offset) {
  std::uniform_int_distribution<std::size_t> pick_qubit(0, num_qubits - 1);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const Qubit a = offset + pick_qubit(rng);
  Qubit b = a;
  while (b == a) b = offset + pick_qubit(rng);
  auto angle = [&] {
    if (uniform(rng) < options.special_angle_probability) {
      return std::uniform_int_distribution<int>(-4, 4)(rng) * std::numbers::pi / 2.0;
    }
    return std::uniform_real_distribution<double>(-std::numbers::pi, std::numbers::pi)(rng);
  };
  // A Pauli product of 1 to max_weight distinct qubits: its letters and its qubits.
  auto random_pauli = [&](std::size_t max_weight) {
    const std::size_t weight =
        std::uniform_int_distribution<std::size_t>(1, std::min<std::size_t>(num_qubits, max_weight))(rng);
    std::vector<Qubit> qubits;
    while (qubits.size() < weight) {
      const Qubit q = offset + pick_qubit(rng);
      if (std::find(qubits.begin(), qubits.end(), q) == qubits.end()) qubits.push_back(q);
    }
    std::string letters;
    for (std::size_t k = 0; k < weight; ++k) letters += "XYZ"[std::uniform_int_distribution<int>(0, 2)(rng)];
    return std::pair{letters, qubits};
  };
  std::vector<int> families;
  if (options.cliffords) families.push_back(0);
  if (options.rotations) families.push_back(1);
  if (options.unitaries) families.push_back(2);
  if (options.noise) families.push_back(3);
  if (options.measurements) families.push_back(4);
  if (families.empty()) throw std::invalid_argument("random_channel: no family enabled");
  const int family = families[std::uniform_int_distribution<std::size_t>(0, families.size() - 1)(rng)];
  switch (family) {
    case 0: {
      switch (std::uniform_int_distribution<int>(0, 14)(rng)) {
        case 0:
          return Channel::h(a);
        case 1:
          return Channel::s(a);
        case 2:
          return Channel::sdg(a);
        case 3:
          return Channel::x(a);
        case 4:
          return Channel::y(a);
        case 5:
          return Channel::z(a);
        case 6:
          return Channel::sx(a);
        case 7:
          return Channel::sxdg(a);
        case 8:
          return Channel::cnot(a, b);
        case 9:
          return Channel::cy(a, b);
        case 10:
          return Channel::cz(a, b);
        case 11:
          return Channel::swap(a, b);
        case 12:
          return Channel::iswap(a, b);
        default:
          return Channel::ecr(a, b);
      }
    }
    case 1: {
      switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
        case 0:
          return Channel::rx(angle(), a);
        case 1:
          return Channel::ry(angle(), a);
        case 2:
          return Channel::rz(angle(), a);
        case 3:
          return Channel::rxx(angle(), a, b);
        case 4:
          return Channel::ryy(angle(), a, b);
        case 5:
          return Channel::rzz(angle(), a, b);
        default: {
          const auto [letters, qubits] = random_pauli(5);
          return Channel::pauli_rotation(letters, qubits, angle());
        }
      }
    }
    case 2:
      if (uniform(rng) < 0.5) return Channel::unitary_1q(a, random_unitary(rng, 2));
      return Channel::unitary_2q(a, b, random_unitary(rng, 4));
    case 4: {
      const int pick = std::uniform_int_distribution<int>(0, 3)(rng);
      if (pick == 0) return Channel::measure(a);
      if (pick == 1) return Channel::reset(a, "XYZ"[std::uniform_int_distribution<int>(0, 2)(rng)]);
      const auto [letters, qubits] = random_pauli(4);
      return Channel::measure_pauli(letters, qubits);
    }
    default: {
      const double p = uniform(rng) * 0.3;
      switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
        case 0:
          return Channel::depolarize(p, a);
        case 1:
          return Channel::dephase(p, a);
        case 2:
          return Channel::pauli_channel(p / 3.0, uniform(rng) * 0.2, uniform(rng) * 0.2, a);
        case 3:
          return Channel::depolarize2(p, a, b);
        default:
          return Channel::amplitude_damping(uniform(rng), a);
      }
    }
  }
}

Circuit random_circuit(std::mt19937_64& rng, std::size_t num_qubits, std::size_t depth,
                       const RandomChannelOptions& options, std::size_t total_qubits, std::size_t offset) {
  Circuit circuit(total_qubits == 0 ? num_qubits + offset : total_qubits);
  for (std::size_t k = 0; k < depth; ++k) circuit.append(random_channel(rng, num_qubits, options, offset));
  return circuit;
}

std::vector<std::pair<std::string, Complex>> random_terms(std::mt19937_64& rng, std::size_t num_qubits,
                                                          std::size_t count, bool complex_values) {
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> letter(0, 3);
  std::vector<std::pair<std::string, Complex>> terms;
  for (std::size_t t = 0; t < count; ++t) {
    std::string label(num_qubits, 'I');
    for (char& c : label) c = "IXYZ"[letter(rng)];
    terms.emplace_back(label, Complex(normal(rng), complex_values ? normal(rng) : 0.0));
  }
  return terms;
}

std::vector<std::pair<std::string, Complex>> shift_terms(
    const std::vector<std::pair<std::string, Complex>>& terms, std::size_t offset) {
  std::vector<std::pair<std::string, Complex>> shifted;
  for (const auto& [label, c] : terms) {
    std::string sparse;
    for (std::size_t q = 0; q < label.size(); ++q) {
      if (label[q] == 'I') continue;
      if (!sparse.empty()) sparse += ' ';
      sparse += label[q] + std::to_string(q + offset);
    }
    shifted.emplace_back(sparse.empty() ? "I" : sparse, c);
  }
  return shifted;
}

std::string random_product_label(std::mt19937_64& rng, std::size_t num_qubits) {
  std::uniform_int_distribution<int> pick(0, 5);
  std::string label(num_qubits, '0');
  for (char& c : label) c = "01+-rl"[pick(rng)];
  return label;
}

std::vector<std::string> random_stabilizer_generators(std::mt19937_64& rng, std::size_t num_qubits) {
  RandomChannelOptions cliffords_only{
      .cliffords = true, .rotations = false, .unitaries = false, .noise = false};
  const Circuit circuit = random_circuit(rng, num_qubits, 6 * num_qubits, cliffords_only);
  std::vector<std::string> generators;
  for (std::size_t q = 0; q < num_qubits; ++q) {
    std::string label(num_qubits, 'I');
    label[q] = 'Z';
    auto sum = PauliSum<16, double>::from_labels(num_qubits, {{label, 1.0}});
    PropagateOptions options;
    options.direction = Direction::forward;
    options.threads = 1;
    propagate(sum, circuit, options);
    if (sum.size() != 1) throw std::logic_error("a Clifford circuit did not map a Pauli to one Pauli");
    std::string generator(1, sum.coefficients()[0] > 0 ? '+' : '-');
    generator += sum.keys()[0].to_label(num_qubits);
    generators.push_back(std::move(generator));
  }
  return generators;
}

}  // namespace paulistrings::testing
