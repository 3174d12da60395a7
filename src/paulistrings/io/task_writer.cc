// Task JSON writer: a Task written back as schema v1 JSON that parse_task reads as the same task, one gate
// per line; what the schema cannot spell is std::invalid_argument.

#include "paulistrings/io/task.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/io/task_gates.h"
#include "paulistrings/io/task_messages.h"

namespace paulistrings::io {

namespace {

using Json = nlohmann::ordered_json;
using task_detail::quote;

[[noreturn]] void cannot_write(const std::string& what) {
  throw std::invalid_argument(std::string("task_to_json: ") + what);
}

Json qubits_json(const Channel& channel) {
  Json qubits = Json::array();
  for (Qubit q : channel.qubits()) qubits.push_back(static_cast<std::uint64_t>(q));
  return qubits;
}

Json complex_json(Complex value) { return Json::array({value.real(), value.imag()}); }

std::string_view clifford_word(ChannelKind kind) {
  switch (kind) {
    case ChannelKind::h:
      return "h";
    case ChannelKind::s:
      return "s";
    case ChannelKind::sdg:
      return "sdg";
    case ChannelKind::x:
      return "x";
    case ChannelKind::y:
      return "y";
    case ChannelKind::z:
      return "z";
    case ChannelKind::sx:
      return "sx";
    case ChannelKind::sxdg:
      return "sxdg";
    case ChannelKind::cnot:
      return "cnot";
    case ChannelKind::cy:
      return "cy";
    case ChannelKind::cz:
      return "cz";
    case ChannelKind::swap:
      return "swap";
    case ChannelKind::iswap:
      return "iswap";
    case ChannelKind::iswapdg:
      return "iswapdg";
    case ChannelKind::ecr:
      return "ecr";
    default:
      return {};
  }
}

Json gate_json(const Channel& channel, std::size_t index) {
  Json gate = Json::object();
  const std::string_view clifford = clifford_word(channel.kind());
  if (!clifford.empty()) {
    gate["name"] = std::string(clifford);
    gate["qubits"] = qubits_json(channel);
    return gate;
  }
  switch (channel.kind()) {
    case ChannelKind::pauli_rotation: {
      const std::string& name = channel.name();
      const bool single_axis = channel.qubits().size() == 1 && name.size() == 2 && name[0] == 'r' &&
                               channel.pauli().size() == 1 &&
                               channel.pauli()[0] == static_cast<char>(std::toupper(name[1]));
      if (single_axis) {
        gate["name"] = name;  // v1's rx / ry / rz
      } else {
        // v1 has no rxx / ryy / rzz words: they and every other axis are pauli_rotation.
        gate["name"] = "pauli_rotation";
        gate["pauli"] = channel.pauli();
      }
      gate["qubits"] = qubits_json(channel);
      gate["theta"] = channel.theta();
      return gate;
    }
    case ChannelKind::unitary_1q:
    case ChannelKind::unitary_2q: {
      const std::size_t dim = channel.kind() == ChannelKind::unitary_1q ? 2 : 4;
      Json rows = Json::array();
      for (std::size_t r = 0; r < dim; ++r) {
        Json row = Json::array();
        for (std::size_t c = 0; c < dim; ++c) row.push_back(complex_json(channel.matrix()[r * dim + c]));
        rows.push_back(std::move(row));
      }
      gate["name"] = channel.kind() == ChannelKind::unitary_1q ? "unitary_1q" : "unitary_2q";
      gate["qubits"] = qubits_json(channel);
      gate["matrix"] = std::move(rows);
      return gate;
    }
    case ChannelKind::depolarize:
    case ChannelKind::dephase:
    case ChannelKind::depolarize2:
    case ChannelKind::amplitude_damping: {
      const char* name = channel.kind() == ChannelKind::depolarize    ? "depolarize"
                         : channel.kind() == ChannelKind::dephase     ? "dephase"
                         : channel.kind() == ChannelKind::depolarize2 ? "depolarize2"
                                                                      : "amplitude_damping";
      gate["name"] = name;
      gate["qubits"] = qubits_json(channel);
      gate[channel.kind() == ChannelKind::amplitude_damping ? "gamma" : "p"] = channel.parameters().at(0);
      return gate;
    }
    case ChannelKind::measure:
      gate["name"] = channel.name();  // "measure" (Z on one qubit) or "measure_pauli"
      if (channel.name() == "measure_pauli") gate["pauli"] = channel.pauli();
      gate["qubits"] = qubits_json(channel);
      return gate;
    case ChannelKind::reset:
      gate["name"] = channel.name();  // "reset", "reset_x" or "reset_y"
      gate["qubits"] = qubits_json(channel);
      return gate;
    case ChannelKind::pauli_channel:
      gate["name"] = "pauli_channel";
      gate["qubits"] = qubits_json(channel);
      gate["px"] = channel.parameters().at(0);
      gate["py"] = channel.parameters().at(1);
      gate["pz"] = channel.parameters().at(2);
      return gate;
    default:
      break;
  }
  throw std::invalid_argument(
      std::string("gates_to_json: gate ") + std::to_string(index) + " (" + channel.description() +
      ") is a raw transfer matrix or user-defined channel, which the task JSON schema cannot express");
}

/// The gates as a JSON array, one gate per line, each line indented by `indent`; the fields in `bindings`
/// (in circuit order) name their sweep parameters instead of a number.
std::string gates_text(const Circuit& circuit, std::string_view indent,
                       const std::vector<SweepBinding>& bindings = {}) {
  if (circuit.empty()) return "[]";
  std::string out = "[\n";
  std::size_t next = 0;
  for (std::size_t i = 0; i < circuit.size(); ++i) {
    out += indent;
    out += "  ";
    Json gate = gate_json(circuit[i], i);
    for (; next < bindings.size() && bindings[next].channel == i; ++next) {
      const SweepBinding& binding = bindings[next];
      if (!gate.contains(binding.field) || !gate[binding.field].is_number()) {
        cannot_write(std::string("gate ") + std::to_string(i) + " (" + circuit[i].description() +
                     ") has no field " + quote(binding.field) + " to name sweep parameter " +
                     quote(binding.parameter));
      }
      gate[binding.field] = binding.parameter;
    }
    out += gate.dump();
    out += i + 1 < circuit.size() ? ",\n" : "\n";
  }
  out += indent;
  out += ']';
  return out;
}

Json terms_json(const NamedObservable& observable) {
  Json terms = Json::object();
  for (const auto& [label, coefficient] : observable.terms) {
    if (terms.contains(label)) {
      cannot_write(std::string("observable ") + quote(observable.name) + " lists label " + quote(label) +
                   " twice (a JSON object holds each label once)");
    }
    if (!std::isfinite(coefficient.real()) || !std::isfinite(coefficient.imag())) {
      cannot_write(std::string("observable ") + quote(observable.name) +
                   " has a non-finite coefficient for " + quote(label));
    }
    terms[label] = coefficient.imag() == 0.0 ? Json(coefficient.real()) : complex_json(coefficient);
  }
  return terms;
}

/// The task's "gradient" list, after checking that it can be read back: sweep parameters that gates name,
/// each once.
std::string gradient_json(const Task& task) {
  if (task.sweep.empty()) cannot_write("the task asks for a gradient but has no sweep");
  for (std::size_t i = 0; i < task.gradient.size(); ++i) {
    const std::string& name = task.gradient[i];
    if (std::find(task.sweep.names.begin(), task.sweep.names.end(), name) == task.sweep.names.end())
      cannot_write(std::string("the gradient names ") + quote(name) + ", which the sweep does not list");
    if (std::find(task.gradient.begin(), task.gradient.begin() + static_cast<std::ptrdiff_t>(i), name) !=
        task.gradient.begin() + static_cast<std::ptrdiff_t>(i))
      cannot_write(std::string("the gradient names ") + quote(name) + " twice");
  }
  return Json(task.gradient).dump();
}

/// The task's "sweep" object, after checking that the sweep and its bindings can be read back as written.
std::string sweep_json(const Task& task) {
  const TaskSweep& sweep = task.sweep;
  if (sweep.values.size() != sweep.names.size())
    cannot_write("the sweep has " + std::to_string(sweep.names.size()) + " names but " +
                 std::to_string(sweep.values.size()) + " value lists");
  Json object = Json::object();
  for (std::size_t i = 0; i < sweep.names.size(); ++i) {
    const std::string& name = sweep.names[i];
    if (name.empty()) cannot_write("a sweep parameter has an empty name");
    if (object.contains(name)) cannot_write(std::string("two sweep parameters are named ") + quote(name));
    if (sweep.values[i].empty() || sweep.values[i].size() != sweep.values[0].size())
      cannot_write(std::string("sweep parameter ") + quote(name) + " needs one value per column (" +
                   std::to_string(sweep.values[0].size()) + "), has " +
                   std::to_string(sweep.values[i].size()));
    for (double v : sweep.values[i]) {
      if (!std::isfinite(v))
        cannot_write(std::string("sweep parameter ") + quote(name) + " has a non-finite value");
    }
    const bool used = std::any_of(task.sweep_bindings.begin(), task.sweep_bindings.end(),
                                  [&](const SweepBinding& b) { return b.parameter == name; });
    if (!used) cannot_write(std::string("no gate names sweep parameter ") + quote(name));
    object[name] = sweep.values[i];
  }
  for (std::size_t b = 0; b < task.sweep_bindings.size(); ++b) {
    const SweepBinding& binding = task.sweep_bindings[b];
    if (!object.contains(binding.parameter))
      cannot_write(std::string("a gate names ") + quote(binding.parameter) +
                   ", which the sweep does not list");
    if (binding.channel >= task.circuit.size() ||
        (b > 0 && binding.channel < task.sweep_bindings[b - 1].channel))
      cannot_write("the sweep bindings are not in circuit order");
  }
  return object.dump();
}

}  // namespace

std::string gates_to_json(const Circuit& circuit) { return gates_text(circuit, ""); }

Channel with_gate_fields(const Channel& channel, std::span<const std::string> fields, double value) {
  // Through the gate's task JSON form: its word names the GateSpec that rebuilds it from its numbers.
  Json gate = gate_json(channel, 0);
  const task_detail::GateSpec* spec = task_detail::find_gate(gate["name"].get<std::string>());
  for (const std::string& field : fields) {
    if (!gate.contains(field) || !gate[field].is_number()) {
      throw std::invalid_argument(std::string("gate ") + quote(gate["name"].get<std::string>()) + " (" +
                                  channel.description() + ") has no field " + quote(field));
    }
    gate[field] = value;
  }
  std::vector<double> numbers;
  for (std::string_view field : spec->numbers) numbers.push_back(gate[std::string(field)].get<double>());
  const std::string pauli = gate.contains("pauli") ? gate["pauli"].get<std::string>() : std::string();
  return task_detail::make_channel(*spec, channel.qubits(), numbers, pauli, channel.matrix());
}

std::string task_to_json(const Task& task) {
  if (task.version != 1)
    cannot_write(std::string("only schema version 1 can be written, got ") + std::to_string(task.version));
  if (!task.swept_params.empty()) {
    cannot_write(
        "the sweep sets inputs of a qasm_file circuit (circuit.params), which the gates written "
        "cannot name");
  }
  if (task.sweep.empty() && !task.sweep_bindings.empty())
    cannot_write("gates name sweep parameters but the task has no sweep");
  if (task.circuit.num_qubits() != task.num_qubits) {
    cannot_write(std::string("the circuit has ") + std::to_string(task.circuit.num_qubits()) +
                 " qubits but the task has " + std::to_string(task.num_qubits));
  }
  std::vector<std::pair<std::string, std::string>> members;  // key, JSON text
  members.emplace_back("version", "1");
  members.emplace_back("n_qubits", std::to_string(task.num_qubits));
  if (!task.sweep.empty()) members.emplace_back("sweep", sweep_json(task));
  if (!task.gradient.empty()) members.emplace_back("gradient", gradient_json(task));
  members.emplace_back(
      "circuit", std::string("{\"gates\": ") + gates_text(task.circuit, "  ", task.sweep_bindings) + "}");

  Json named = Json::object();
  for (std::size_t i = 0; i < task.observables.size(); ++i) {
    const NamedObservable& observable = task.observables[i];
    if (observable.name.empty())
      cannot_write(std::string("observable ") + std::to_string(i) + " has an empty name");
    if (i == 0 && observable.name == "observable") {
      members.emplace_back("observable", terms_json(observable).dump());
      continue;
    }
    if (observable.name == "observable") {
      cannot_write(
          "only the first observable may be named \"observable\" (it is written as v1's \"observable\")");
    }
    if (named.contains(observable.name))
      cannot_write(std::string("two observables are named ") + quote(observable.name));
    named[observable.name] = terms_json(observable);
  }
  if (!named.empty()) members.emplace_back("observables", named.dump());

  const TaskTruncation& t = task.truncation;
  Json truncation = Json::object();
  if (t.max_weight) truncation["max_weight"] = static_cast<std::uint64_t>(*t.max_weight);
  if (t.min_abs_coeff) {
    if (!(*t.min_abs_coeff >= 0.0) || !std::isfinite(*t.min_abs_coeff)) {
      cannot_write("min_abs_coeff must be a finite non-negative number");
    }
    truncation["min_abs_coeff"] = *t.min_abs_coeff;
  }
  if (t.top_n) {
    if (*t.top_n == 0) cannot_write("top_n must be positive");
    truncation["top_n"] = static_cast<std::uint64_t>(*t.top_n);
  }
  if (t.approx_top_n) {
    if (*t.approx_top_n == 0) cannot_write("approx_top_n must be positive");
    truncation["approx_top_n"] = static_cast<std::uint64_t>(*t.approx_top_n);
  }
  if (!truncation.empty()) members.emplace_back("truncation", truncation.dump());

  Json run = Json::object();
  run["direction"] = std::string(to_string(task.direction));
  if (task.threads < 0)
    cannot_write(std::string("threads must be non-negative, got ") + std::to_string(task.threads));
  run["threads"] = task.threads;
  run["state"] = task.state;
  if (task.device == "gpu" || task.device == "auto") {
    run["device"] = task.device;
  } else if (task.device != "cpu") {
    const bool index =
        !task.device.empty() && task.device.size() <= 9 &&
        std::all_of(task.device.begin(), task.device.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!index)
      cannot_write(std::string("device must be \"cpu\", \"gpu\", \"auto\" or an index, got ") +
                   quote(task.device));
    run["device"] = std::stoull(task.device);
  }
  if (task.engine == "column") {
    run["engine"] = task.engine;
  } else if (task.engine != "cpu") {
    cannot_write(std::string("engine must be \"cpu\" or \"column\", got ") + quote(task.engine));
  }
  if (task.partitions != 1) run["partitions"] = task.partitions;
  if (task.partition_rows != TaskPartitionRows{}) {
    const TaskPartitionRows& rows = task.partition_rows;
    Json object = Json::object();
    object["policy"] = rows.policy;
    if (rows.seed) object["seed"] = *rows.seed;
    if (rows.policy == "seeded_excluding") object["excluded_qubits"] = rows.excluded_qubits;
    if (rows.policy == "cut") {
      object["blocks"] = rows.blocks;
      object["basis"] = std::string(1, rows.basis);
    }
    run["partition_rows"] = object;
  }
  if (task.nccl) run["nccl"] = true;
  if (task.route_orbits_from) run["route_orbits_from"] = *task.route_orbits_from;
  if (task.ignore_measure) run["ignore_measure"] = true;
  members.emplace_back("run", run.dump());

  std::string out = "{\n";
  for (std::size_t i = 0; i < members.size(); ++i) {
    out += "  \"";
    out += members[i].first;
    out += "\": ";
    out += members[i].second;
    out += i + 1 < members.size() ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

}  // namespace paulistrings::io
