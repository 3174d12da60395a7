// The task JSON gate vocabulary: task_gates.h.

#include "paulistrings/io/task_gates.h"

#include <stdexcept>

namespace paulistrings::io::task_detail {

const std::vector<GateSpec>& gate_specs() {
  static const std::vector<GateSpec> specs = {
      {"h", Arity::one, "[q]", {}},
      {"s", Arity::one, "[q]", {}},
      {"sdg", Arity::one, "[q]", {}},
      {"x", Arity::one, "[q]", {}},
      {"y", Arity::one, "[q]", {}},
      {"z", Arity::one, "[q]", {}},
      {"sx", Arity::one, "[q]", {}},
      {"sxdg", Arity::one, "[q]", {}},
      {"cnot", Arity::two, "[control, target]", {}},
      {"cy", Arity::two, "[control, target]", {}},
      {"cz", Arity::two, "[q0, q1]", {}},
      {"swap", Arity::two, "[q0, q1]", {}},
      {"iswap", Arity::two, "[q0, q1]", {}},
      {"iswapdg", Arity::two, "[q0, q1]", {}},
      {"ecr", Arity::two, "[q0, q1]", {}},
      {"rz", Arity::one, "[q]", {"theta"}},
      {"rx", Arity::one, "[q]", {"theta"}},
      {"ry", Arity::one, "[q]", {"theta"}},
      {"rxx", Arity::two, "[q0, q1]", {"theta"}},
      {"ryy", Arity::two, "[q0, q1]", {"theta"}},
      {"rzz", Arity::two, "[q0, q1]", {"theta"}},
      {"pauli_rotation", Arity::per_letter, "", {"theta"}, true},
      {"depolarize", Arity::broadcast, "", {"p"}},
      {"dephase", Arity::broadcast, "", {"p"}},
      {"amplitude_damping", Arity::broadcast, "", {"gamma"}},
      {"pauli_channel", Arity::broadcast, "", {"px", "py", "pz"}},
      {"depolarize2", Arity::two, "[q0, q1]", {"p"}},
      {"unitary_1q", Arity::one, "[q]", {}, false, 2},
      {"unitary_2q", Arity::two, "[q0, q1]", {}, false, 4},
      {"measure", Arity::broadcast, "", {}},
      {"measure_pauli", Arity::per_letter, "", {}, true},
      {"reset", Arity::broadcast, "", {}},
      {"reset_x", Arity::broadcast, "", {}},
      {"reset_y", Arity::broadcast, "", {}},
  };
  return specs;
}

const GateSpec* find_gate(std::string_view name) {
  for (const GateSpec& spec : gate_specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string gate_names() {
  std::string out;
  for (const GateSpec& spec : gate_specs()) {
    if (!out.empty()) out += ", ";
    out += spec.name;
  }
  return out;
}

/// Field names of a gate, in the order they are written.
std::vector<std::string_view> gate_fields(const GateSpec& spec) {
  std::vector<std::string_view> fields = {"name"};
  if (spec.has_pauli) fields.push_back("pauli");
  fields.push_back("qubits");
  fields.insert(fields.end(), spec.numbers.begin(), spec.numbers.end());
  if (spec.matrix_dim) fields.push_back("matrix");
  return fields;
}

/// One channel of a parsed gate object (a broadcast noise gate gives one per qubit).
Channel make_channel(const GateSpec& spec, const std::vector<Qubit>& q, const std::vector<double>& v,
                     const std::string& pauli, const std::vector<Complex>& matrix) {
  const std::string_view n = spec.name;
  if (n == "h") return Channel::h(q[0]);
  if (n == "s") return Channel::s(q[0]);
  if (n == "sdg") return Channel::sdg(q[0]);
  if (n == "x") return Channel::x(q[0]);
  if (n == "y") return Channel::y(q[0]);
  if (n == "z") return Channel::z(q[0]);
  if (n == "sx") return Channel::sx(q[0]);
  if (n == "sxdg") return Channel::sxdg(q[0]);
  if (n == "cnot") return Channel::cnot(q[0], q[1]);
  if (n == "cy") return Channel::cy(q[0], q[1]);
  if (n == "cz") return Channel::cz(q[0], q[1]);
  if (n == "swap") return Channel::swap(q[0], q[1]);
  if (n == "iswap") return Channel::iswap(q[0], q[1]);
  if (n == "iswapdg") return Channel::iswapdg(q[0], q[1]);
  if (n == "ecr") return Channel::ecr(q[0], q[1]);
  if (n == "rz") return Channel::rz(v[0], q[0]);
  if (n == "rx") return Channel::rx(v[0], q[0]);
  if (n == "ry") return Channel::ry(v[0], q[0]);
  if (n == "rxx") return Channel::rxx(v[0], q[0], q[1]);
  if (n == "ryy") return Channel::ryy(v[0], q[0], q[1]);
  if (n == "rzz") return Channel::rzz(v[0], q[0], q[1]);
  if (n == "pauli_rotation") return Channel::pauli_rotation(pauli, q, v[0]);
  if (n == "depolarize") return Channel::depolarize(v[0], q[0]);
  if (n == "dephase") return Channel::dephase(v[0], q[0]);
  if (n == "amplitude_damping") return Channel::amplitude_damping(v[0], q[0]);
  if (n == "pauli_channel") return Channel::pauli_channel(v[0], v[1], v[2], q[0]);
  if (n == "depolarize2") return Channel::depolarize2(v[0], q[0], q[1]);
  if (n == "unitary_1q") return Channel::unitary_1q(q[0], matrix);
  if (n == "unitary_2q") return Channel::unitary_2q(q[0], q[1], matrix);
  if (n == "measure") return Channel::measure(q[0]);
  if (n == "measure_pauli") return Channel::measure_pauli(pauli, q);
  if (n == "reset") return Channel::reset(q[0], 'Z');
  if (n == "reset_x") return Channel::reset(q[0], 'X');
  if (n == "reset_y") return Channel::reset(q[0], 'Y');
  throw std::logic_error("task: gate table and factories disagree");
}

}  // namespace paulistrings::io::task_detail
