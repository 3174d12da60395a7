#pragma once
// Internal to io/task.cc (not part of task.h): the gate vocabulary of task JSON — each gate word, its
// qubits and fields — and the channel a parsed gate object becomes.

#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/channels/channel.h"

namespace paulistrings::io::task_detail {

enum class Arity { one, two, per_letter, broadcast };

struct GateSpec {
  std::string_view name;
  Arity arity;
  std::string_view qubit_roles;  // for messages
  std::vector<std::string_view> numbers;
  bool has_pauli = false;
  int matrix_dim = 0;  // 2 or 4 for unitaries
};

/// Every gate word of the schema, in the order messages list them.
const std::vector<GateSpec>& gate_specs();
/// The gate named `name`, or nullptr.
const GateSpec* find_gate(std::string_view name);
/// The gate words, comma-separated, for "expected one of" messages.
std::string gate_names();
/// Field names of a gate, in the order they are written.
std::vector<std::string_view> gate_fields(const GateSpec& spec);
/// One channel of a parsed gate object (a broadcast noise gate gives one per qubit).
Channel make_channel(const GateSpec& spec, const std::vector<Qubit>& q, const std::vector<double>& v,
                     const std::string& pauli, const std::vector<Complex>& matrix);

}  // namespace paulistrings::io::task_detail
