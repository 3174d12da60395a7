// Task JSON reader: the original crate's schema v1 read unchanged, plus this
// project's extensions (named observables, sparse labels, top_n / approx_top_n, run.device, state lists, the
// gates beyond v1, stim_file circuits). JSON syntax errors are located by line:column, schema errors by field
// path ("circuit.gates[3].theta"); both are io::ParseError. The JSON syntax is task_json.cc; the writer
// task_writer.cc; the gate vocabulary task_gates.h; the message helpers both share task_messages.h.

#include "paulistrings/io/task.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "paulistrings/core/label.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/io/stim.h"
#include "paulistrings/io/task_gates.h"
#include "paulistrings/io/task_json.h"
#include "paulistrings/io/task_messages.h"
#include "paulistrings/readout/product_state.h"

namespace paulistrings::io {

Truncation TaskTruncation::policy() const {
  std::optional<Truncation> combined;
  auto add = [&combined](const Truncation& next) { combined = combined ? (*combined & next) : next; };
  if (max_weight) add(Truncation::weight(*max_weight));
  if (min_abs_coeff) add(Truncation::coeff(*min_abs_coeff));
  if (top_n) add(Truncation::topn(*top_n));
  if (approx_top_n) add(Truncation::approx_topn(*approx_top_n));
  return combined ? *combined : Truncation();
}

namespace {

using task_detail::got;
using task_detail::Json;
using task_detail::parse_json;
using task_detail::Arity;
using task_detail::find_gate;
using task_detail::gate_fields;
using task_detail::gate_names;
using task_detail::GateSpec;
using task_detail::indexed;
using task_detail::join;
using task_detail::make_channel;
using task_detail::printable;
using task_detail::quote;
using task_detail::throw_at;

// ---- schema -------------------------------------------------------------------------------------

class TaskReader {
 public:
  TaskReader(const std::string& file, const std::filesystem::path& base_dir)
      : file_(file), base_dir_(base_dir) {}

  Task read(const Json& root) {
    if (!root.is_object()) {
      fail("", std::string("expected a JSON object {\"version\": 1, \"n_qubits\": ..., ...}") + got(root));
    }
    if (const Json* version = find(root, "version")) read_version(*version);
    check_keys(root, "",
               {"version", "n_qubits", "circuit", "observable", "observables", "truncation", "run", "sweep",
                "gradient"},
               "the task");
    require(root, "", "version", "the integer 1");
    const Json& n_qubits = require(root, "", "n_qubits", "a positive integer");
    const Json& circuit =
        require(root, "", "circuit", "{\"gates\": [...]}, {\"stim_file\": \"path\"} or {\"qasm_file\": \"path\"}");
    const Json& run = require(root, "", "run", "an object with at least \"direction\"");

    Task task;
    task.version = 1;
    task.num_qubits = read_num_qubits(n_qubits);
    num_qubits_ = task.num_qubits;
    const bool has_v1_observable = root.contains("observable");
    std::optional<ObservableTerms> stim_observable;
    if (const Json* sweep = find(root, "sweep")) task.sweep = read_sweep(*sweep);
    sweep_ = &task.sweep;
    task.circuit = read_circuit(circuit, stim_observable, task);
    check_sweep_used(task);
    if (const Json* gradient = find(root, "gradient")) task.gradient = read_gradient(*gradient, task);
    if (has_v1_observable) {
      task.observables.push_back({"observable", read_observable(root.at("observable"), "observable")});
    }
    if (const Json* named = find(root, "observables")) {
      read_named_observables(*named, has_v1_observable, task.observables);
    }
    const bool observable_given =
        std::any_of(task.observables.begin(), task.observables.end(),
                    [](const NamedObservable& o) { return o.name == "observable"; });
    if (stim_observable && !stim_observable->empty() && !observable_given) {
      task.observables.insert(task.observables.begin(), {"observable", std::move(*stim_observable)});
    }
    if (const Json* truncation = find(root, "truncation")) task.truncation = read_truncation(*truncation);
    read_run(run, task);
    return task;
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw_at(file_, path, message);
  }

  static const Json* find(const Json& object, std::string_view key) {
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  const Json& require(const Json& object, const std::string& path, std::string_view key,
                      std::string_view expected) const {
    const Json* value = find(object, key);
    if (!value)
      fail(join(path, key), std::string("missing required field (expected ") + std::string(expected) + ")");
    return *value;
  }

  void check_keys(const Json& object, const std::string& path, const std::vector<std::string_view>& allowed,
                  std::string_view context) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string expected;
      for (std::string_view key : allowed) {
        if (!expected.empty()) expected += ", ";
        expected += key;
      }
      fail(join(path, it.key()), std::string("unknown key ") + quote(it.key()) + " for " +
                                     std::string(context) + " (expected one of: " + expected + ")");
    }
  }

  void expect_object(const Json& value, const std::string& path, std::string_view what) const {
    if (!value.is_object()) fail(path, std::string("expected ") + std::string(what) + got(value));
  }

  double read_number(const Json& value, const std::string& path) const {
    // JSON has no NaN or infinity, and overflowing literals are rejected while parsing; the check stays as
    // the guarantee that every number handed on is finite.
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      fail(path, std::string("expected a finite number") + got(value));
    }
    return value.get<double>();
  }

  /// A non-negative integer written as one (3, not 3.0 or true). A count is never rounded: 2.5 is refused,
  /// and so are 1e6 and 3.0 (the v1 schema's integers are integers), with the integer to write instead;
  /// integers past 2^64 − 1 reach here as floats and are refused too.
  std::uint64_t read_unsigned(const Json& value, const std::string& path, std::string_view what) const {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>();
    if (value.is_number_integer() && value.get<std::int64_t>() == 0) return 0;  // "-0"
    std::string message = std::string("expected ") + std::string(what) + got(value);
    if (value.is_number_float()) {
      const double d = value.get<double>();
      if (d >= 0.0 && d < 0x1p64 && d == std::floor(d))
        message += " (write it as the integer " + std::to_string(static_cast<std::uint64_t>(d)) + ")";
    }
    fail(path, message);
  }

  const std::string& read_string(const Json& value, const std::string& path, std::string_view what) const {
    if (!value.is_string()) fail(path, std::string("expected ") + std::string(what) + got(value));
    return value.get_ref<const std::string&>();
  }

  void read_version(const Json& value) const {
    if (!value.is_number_integer()) fail("version", std::string("expected the integer 1") + got(value));
    if (value != 1) {
      fail("version", std::string("unsupported schema version ") + value.dump() + " (expected 1)");
    }
  }

  std::size_t read_num_qubits(const Json& value) const {
    const std::string what =
        std::string("a positive integer qubit count (1 to ") + std::to_string(kMaxSupportedQubits) + ")";
    const std::uint64_t n = read_unsigned(value, "n_qubits", what);
    if (n == 0 || n > kMaxSupportedQubits) fail("n_qubits", std::string("expected ") + what + got(value));
    return static_cast<std::size_t>(n);
  }

  Circuit read_circuit(const Json& value, std::optional<ObservableTerms>& stim_observable, Task& task) {
    expect_object(value, "circuit",
                  "an object {\"gates\": [...]}, {\"stim_file\": \"path\"} or {\"qasm_file\": \"path\"}");
    check_keys(value, "circuit", {"gates", "stim_file", "qasm_file", "params"}, "the circuit");
    const Json* gates = find(value, "gates");
    const Json* stim_file = find(value, "stim_file");
    const Json* qasm_file = find(value, "qasm_file");
    if ((gates ? 1 : 0) + (stim_file ? 1 : 0) + (qasm_file ? 1 : 0) > 1) {
      fail("circuit", "expected exactly one of \"gates\", \"stim_file\" and \"qasm_file\", got more");
    }
    if (find(value, "params") && !qasm_file) fail("circuit.params", "parameters belong to a \"qasm_file\" circuit");
    if (stim_file && !sweep_->empty()) {
      fail("sweep",
           "a sweep sets the parameters of \"gates\" or a \"qasm_file\"'s \"params\"; it cannot be "
           "combined with a \"stim_file\" circuit");
    }
    if (stim_file) return read_stim_circuit(*stim_file, stim_observable);
    if (qasm_file) return read_qasm_circuit(*qasm_file, find(value, "params"), task);
    if (!gates) {
      fail("circuit.gates", "missing required field (expected a list of gate objects, or \"stim_file\")");
    }
    if (!gates->is_array())
      fail("circuit.gates", std::string("expected a list of gate objects") + got(*gates));
    // One circuit per sweep column (just one without a sweep); column 0 is the task's circuit.
    std::vector<Circuit> columns(std::max<std::size_t>(1, sweep_->columns()), Circuit(num_qubits_));
    for (std::size_t i = 0; i < gates->size(); ++i) {
      read_gate((*gates)[i], indexed("circuit.gates", i), columns, task.sweep_bindings);
    }
    if (!sweep_->empty()) task.sweep_circuits = columns;
    return std::move(columns[0]);
  }

  /// "sweep": {"name": [v1, …, vK], …}, every list of one length K ≥ 1.
  TaskSweep read_sweep(const Json& value) const {
    expect_object(value, "sweep", "an object {\"name\": [v1, ..., vK], ...}");
    if (value.empty()) fail("sweep", "expected at least one parameter {\"name\": [v1, ..., vK]}, got {}");
    TaskSweep sweep;
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string path = join("sweep", it.key());
      if (it.key().empty()) fail(path, "sweep parameter names must not be empty");
      const Json& list = it.value();
      if (!list.is_array() || list.empty())
        fail(path, std::string("expected a non-empty list of numbers [v1, ..., vK]") + got(list));
      std::vector<double> values;
      for (std::size_t k = 0; k < list.size(); ++k) values.push_back(read_number(list[k], indexed(path, k)));
      if (!sweep.values.empty() && values.size() != sweep.values[0].size()) {
        fail(path, std::string("has ") + std::to_string(values.size()) + " values but " +
                       quote(sweep.names[0]) + " has " + std::to_string(sweep.values[0].size()) +
                       " (every sweep parameter lists one value per column)");
      }
      sweep.names.push_back(it.key());
      sweep.values.push_back(std::move(values));
    }
    return sweep;
  }

  /// Every sweep parameter must be named by some gate (an unused one is most likely a typo).
  void check_sweep_used(const Task& task) const {
    for (const std::string& name : task.sweep.names) {
      const bool used = std::any_of(task.sweep_bindings.begin(), task.sweep_bindings.end(),
                                    [&](const SweepBinding& b) { return b.parameter == name; }) ||
                        std::any_of(task.swept_params.begin(), task.swept_params.end(),
                                    [&](const auto& input) { return input.second == name; });
      if (!used) fail(join("sweep", name), std::string("no gate uses sweep parameter ") + quote(name));
    }
  }

  /// "gradient": ["name", …], sweep parameters that gate fields name, each once (after the circuit).
  std::vector<std::string> read_gradient(const Json& value, const Task& task) const {
    if (!value.is_array() || value.empty())
      fail("gradient",
           std::string("expected a non-empty list of sweep parameter names [\"th\", ...]") + got(value));
    if (task.sweep.empty())
      fail("gradient",
           "a gradient is taken along a sweep, but the task has no \"sweep\": {\"name\": [v1, ..., vK]}");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string path = indexed("gradient", i);
      if (!value[i].is_string()) fail(path, std::string("expected a sweep parameter name") + got(value[i]));
      const std::string& name = value[i].get_ref<const std::string&>();
      sweep_parameter(name, path);  // a located error unless the sweep has it
      if (std::find(names.begin(), names.end(), name) != names.end())
        fail(path, std::string("sweep parameter ") + quote(name) + " is named twice");
      for (const auto& [input, parameter] : task.swept_params) {
        if (parameter == name) {
          fail(path,
               std::string("sweep parameter ") + quote(name) + " sets input " + quote(input) +
                   " of the qasm_file circuit (circuit.params); a gradient needs the gates that use it, "
                   "which an OpenQASM expression does not name (write the gates in \"gates\" instead)");
        }
      }
      for (const SweepBinding& binding : task.sweep_bindings) {
        if (binding.parameter == name && binding.field == "gamma") {
          fail(path, std::string("sweep parameter ") + quote(name) +
                         " sets amplitude_damping's gamma (layer " + std::to_string(binding.channel) +
                         " of the circuit), whose transfer (sqrt(1 - gamma)) is not affine in gamma: no "
                         "exact gradient is taken there");
        }
      }
      names.push_back(name);
    }
    return names;
  }

  /// Index of the sweep parameter a gate field names (`path`: the field), or a located error.
  std::size_t sweep_parameter(const std::string& name, const std::string& path) const {
    if (sweep_->empty()) {
      fail(path, std::string("expected a finite number, got the string ") + quote(name) +
                     " (a string names a sweep parameter, but the task has no \"sweep\": {" + quote(name) +
                     ": [v1, ..., vK]})");
    }
    const auto it = std::find(sweep_->names.begin(), sweep_->names.end(), name);
    if (it == sweep_->names.end()) {
      std::string known;
      for (const std::string& n : sweep_->names) known += (known.empty() ? "" : ", ") + quote(n);
      fail(path, std::string("unknown sweep parameter ") + quote(name) + " (the sweep has " + known + ")");
    }
    return static_cast<std::size_t>(it - sweep_->names.begin());
  }

  /// A circuit file named by the task, relative to the task file. Only a regular file: a device such as
  /// /dev/zero would be read until memory ran out.
  std::filesystem::path circuit_file(const std::string& relative, const std::string& field) const {
    const std::filesystem::path path = base_dir_ / std::filesystem::path(relative);
    std::error_code error;
    if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error))
      fail(field, path.string() + " is not a regular file");
    return path;
  }

  /// An OpenQASM file (relative to the task file), its input parameters from "params"; its registers name
  /// qubits in the task's observables.
  Circuit read_qasm_circuit(const Json& value, const Json* params, Task& task) {
    const std::string& relative =
        read_string(value, "circuit.qasm_file", "a path to an OpenQASM file, relative to the task file");
    if (relative.empty()) fail("circuit.qasm_file", "expected a path to an OpenQASM file, got an empty string");
    QasmOptions options;
    options.num_qubits = num_qubits_;
    if (params) {
      expect_object(*params, "circuit.params", "an object {\"name\": number | \"sweep parameter\", ...}");
      for (auto it = params->begin(); it != params->end(); ++it) {
        const std::string path = join("circuit.params", it.key());
        if (it.value().is_string()) {
          sweep_parameter(it.value().get<std::string>(), path);  // a located error unless the sweep has it
          task.swept_params[it.key()] = it.value().get<std::string>();
          continue;
        }
        options.inputs[it.key()] = read_number(it.value(), path);
        task.params[it.key()] = options.inputs[it.key()];
      }
    }
    const std::filesystem::path path = circuit_file(relative, "circuit.qasm_file");
    // With swept inputs, the file once per column with that column's values (column 0: the task's circuit).
    const std::size_t columns = task.swept_params.empty() ? 1 : sweep_->columns();
    QasmProgram program;
    for (std::size_t k = columns; k-- > 0;) {
      for (const auto& [input, parameter] : task.swept_params)
        options.inputs[input] = sweep_->values[sweep_parameter(parameter, "circuit.params")][k];
      try {
        program = load_qasm_program(path.string(), options);
      } catch (const ParseError&) {
        throw;  // already located in the OpenQASM file
      } catch (const std::exception& e) {
        fail("circuit.qasm_file", std::string(e.what()));
      }
      if (!task.swept_params.empty()) {
        if (!task.sweep_circuits.empty() && program.circuit.size() != task.sweep_circuits.front().size()) {
          fail("circuit.qasm_file", "sweep column " + std::to_string(k) + " has " +
                                        std::to_string(program.circuit.size()) + " gates but column " +
                                        std::to_string(k + 1) + " has " +
                                        std::to_string(task.sweep_circuits.front().size()) +
                                        " (a sweep's columns share one gate structure)");
        }
        task.sweep_circuits.insert(task.sweep_circuits.begin(), program.circuit);
      }
    }
    task.registers = program.registers;
    task.warnings = program.warnings;
    registers_ = program.registers;
    return std::move(program.circuit);
  }

  Circuit read_stim_circuit(const Json& value, std::optional<ObservableTerms>& stim_observable) const {
    const std::string& relative =
        read_string(value, "circuit.stim_file", "a path to a .stim file, relative to the task file");
    if (relative.empty()) fail("circuit.stim_file", "expected a path to a .stim file, got an empty string");
    const std::filesystem::path path = circuit_file(relative, "circuit.stim_file");
    StimProgram program{Circuit(0), {}};
    try {
      program = load_stim(path.string(), num_qubits_);
    } catch (const ParseError&) {
      throw;  // already located in the stim file
    } catch (const std::exception& e) {
      fail("circuit.stim_file", std::string(e.what()));
    }
    if (program.circuit.num_qubits() != num_qubits_) {
      fail("circuit.stim_file", std::string("the stim circuit has ") +
                                    std::to_string(program.circuit.num_qubits()) +
                                    " qubits, expected n_qubits = " + std::to_string(num_qubits_));
    }
    stim_observable = std::move(program.observable);
    return std::move(program.circuit);
  }

  /// One gate appended to every sweep column (`columns`: one circuit without a sweep); fields naming a sweep
  /// parameter take column k's value in column k and are recorded in `bindings`.
  void read_gate(const Json& gate, const std::string& path, std::vector<Circuit>& columns,
                 std::vector<SweepBinding>& bindings) const {
    expect_object(gate, path, "a gate object {\"name\": ..., \"qubits\": [...], ...}");
    const std::string& name =
        read_string(require(gate, path, "name", "a gate name"), join(path, "name"), "a gate name");
    const GateSpec* spec = find_gate(name);
    if (!spec)
      fail(join(path, "name"),
           std::string("unknown gate ") + quote(name) + " (expected one of: " + gate_names() + ")");
    const std::vector<std::string_view> fields = gate_fields(*spec);
    const std::string context = std::string("gate ") + quote(name);
    check_keys(gate, path, fields, context);
    for (std::string_view field : fields) {
      std::string expected = field == "qubits"   ? "a list of qubit indices"
                             : field == "pauli"  ? "a string over X, Y, Z"
                             : field == "matrix" ? "a matrix as rows of [re, im]"
                                                 : "a finite number";
      require(gate, path, field, expected + " for " + context);
    }

    std::string pauli;
    if (spec->has_pauli) {
      const std::string pauli_path = join(path, "pauli");
      pauli = read_string(gate.at("pauli"), pauli_path, "a string over X, Y, Z (one letter per qubit)");
      if (pauli.empty()) fail(pauli_path, "expected a string over X, Y, Z (one letter per qubit), got \"\"");
      for (std::size_t k = 0; k < pauli.size(); ++k) {
        if (pauli[k] != 'X' && pauli[k] != 'Y' && pauli[k] != 'Z') {
          fail(pauli_path, std::string("pauli ") + quote(pauli) + " has '" + std::string(1, pauli[k]) +
                               "' at position " + std::to_string(k) + " (expected only X, Y, Z)");
        }
      }
    }
    const std::vector<Qubit> qubits =
        read_qubits(gate.at("qubits"), join(path, "qubits"), *spec, pauli.size());
    // numbers[k]: the gate's numbers in column k.
    std::vector<std::vector<double>> numbers(columns.size());
    std::vector<std::pair<std::string_view, std::string>> named;  // field, sweep parameter
    for (std::string_view field : spec->numbers) {
      const Json& value = gate.at(field);
      const std::string field_path = join(path, field);
      if (value.is_string()) {
        const std::string& name = value.get_ref<const std::string&>();
        const std::size_t p = sweep_parameter(name, field_path);
        for (std::size_t k = 0; k < columns.size(); ++k) numbers[k].push_back(sweep_->values[p][k]);
        named.emplace_back(field, name);
      } else {
        const double number = read_number(value, field_path);
        for (std::vector<double>& column : numbers) column.push_back(number);
      }
    }
    std::vector<Complex> matrix;
    if (spec->matrix_dim) matrix = read_matrix(gate.at("matrix"), join(path, "matrix"), spec->matrix_dim);

    const std::size_t first = columns[0].size();
    for (std::size_t k = 0; k < columns.size(); ++k) {
      try {
        if (spec->arity == Arity::broadcast) {
          for (Qubit q : qubits) columns[k].append(make_channel(*spec, {q}, numbers[k], pauli, matrix));
        } else {
          columns[k].append(make_channel(*spec, qubits, numbers[k], pauli, matrix));
        }
      } catch (const std::invalid_argument& e) {
        if (named.empty()) fail(path, e.what());
        std::string where = " (sweep column " + std::to_string(k);
        for (const auto& [field, name] : named) where += ", " + std::string(field) + " = " + quote(name);
        fail(path, e.what() + where + ")");
      }
    }
    for (std::size_t c = first; c < columns[0].size(); ++c) {
      for (const auto& [field, name] : named) bindings.push_back({c, std::string(field), name});
    }
  }

  std::vector<Qubit> read_qubits(const Json& value, const std::string& path, const GateSpec& spec,
                                 std::size_t letters) const {
    if (!value.is_array()) fail(path, std::string("expected a list of qubit indices") + got(value));
    std::size_t expected = 0;
    switch (spec.arity) {
      case Arity::one:
        expected = 1;
        break;
      case Arity::two:
        expected = 2;
        break;
      case Arity::per_letter:
        expected = letters;
        break;
      case Arity::broadcast:
        expected = value.size();
        break;
    }
    if (value.size() != expected) {
      std::string message = std::string("gate ") + quote(spec.name) + " expects " + std::to_string(expected) +
                            (expected == 1 ? " qubit " : " qubits ");
      message += spec.arity == Arity::per_letter ? "(one per letter of its pauli string)"
                                                 : std::string(spec.qubit_roles);
      message += std::string(", got ") + std::to_string(value.size());
      fail(path, message);
    }
    std::vector<Qubit> qubits;
    for (std::size_t k = 0; k < value.size(); ++k) {
      const std::string element = indexed(path, k);
      const std::uint64_t q = read_unsigned(value[k], element, "a qubit index (a non-negative integer)");
      if (q >= num_qubits_) {
        fail(element, std::string("qubit ") + std::to_string(q) + " is out of range (expected 0 to " +
                          std::to_string(num_qubits_ - 1) + " for n_qubits = " + std::to_string(num_qubits_) +
                          ")");
      }
      qubits.push_back(static_cast<Qubit>(q));
    }
    return qubits;
  }

  std::vector<Complex> read_matrix(const Json& value, const std::string& path, int dim) const {
    const std::string shape = std::to_string(dim) + "x" + std::to_string(dim) + " matrix as " +
                              std::to_string(dim) + " rows of " + std::to_string(dim) + " [re, im] entries";
    const auto d = static_cast<std::size_t>(dim);
    if (!value.is_array() || value.size() != d) {
      fail(path, std::string("expected a ") + shape +
                     (value.is_array() ? std::string(", got ") + std::to_string(value.size()) + " rows"
                                       : got(value)));
    }
    std::vector<Complex> matrix;
    for (std::size_t r = 0; r < d; ++r) {
      const std::string row_path = indexed(path, r);
      const Json& row = value[r];
      if (!row.is_array() || row.size() != d) {
        fail(row_path, std::string("expected a row of ") + std::to_string(dim) + " [re, im] entries" +
                           (row.is_array() ? std::string(", got ") + std::to_string(row.size()) + " entries"
                                           : got(row)));
      }
      for (std::size_t c = 0; c < d; ++c) {
        const std::string entry_path = indexed(row_path, c);
        const Json& entry = row[c];
        if (!entry.is_array() || entry.size() != 2)
          fail(entry_path, std::string("expected an entry [re, im]") + got(entry));
        matrix.emplace_back(read_number(entry[0], indexed(entry_path, 0)),
                            read_number(entry[1], indexed(entry_path, 1)));
      }
    }
    return matrix;
  }

  Complex read_coefficient(const Json& value, const std::string& path) const {
    if (value.is_number()) return {read_number(value, path), 0.0};
    if (value.is_array() && value.size() == 2) {
      return {read_number(value[0], indexed(path, 0)), read_number(value[1], indexed(path, 1))};
    }
    fail(path, std::string("expected a coefficient: a number or [re, im]") + got(value));
  }

  ObservableTerms read_observable(const Json& value, const std::string& path) const {
    expect_object(value, path, "an object {\"label\": coefficient, ...}");
    ObservableTerms terms;
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string term_path = join(path, it.key());
      std::string label;
      try {
        label = resolve_register_label(it.key(), registers_);  // "Zq[3]" names a qubit of a qasm_file register
        parse_label(label, num_qubits_);
      } catch (const std::invalid_argument& e) {
        fail(term_path, e.what());
      }
      terms.emplace_back(label, read_coefficient(it.value(), term_path));
    }
    return terms;
  }

  void read_named_observables(const Json& value, bool has_v1_observable,
                              std::vector<NamedObservable>& observables) const {
    expect_object(value, "observables", "an object {\"name\": {\"label\": coefficient, ...}, ...}");
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key().empty()) fail("observables", "observable names must not be empty");
      if (has_v1_observable && it.key() == "observable") {
        fail(join("observables", it.key()),
             "the name \"observable\" is already taken by the top-level \"observable\" (expected another "
             "name)");
      }
      observables.push_back({it.key(), read_observable(it.value(), join("observables", it.key()))});
    }
  }

  TaskTruncation read_truncation(const Json& value) const {
    expect_object(value, "truncation", "an object {\"max_weight\": ..., \"min_abs_coeff\": ...}");
    check_keys(value, "truncation", {"max_weight", "min_abs_coeff", "top_n", "approx_top_n"},
               "the truncation");
    TaskTruncation truncation;
    if (const Json* v = find(value, "max_weight")) {
      truncation.max_weight =
          read_unsigned(*v, "truncation.max_weight", "a non-negative integer Pauli weight");
    }
    if (const Json* v = find(value, "min_abs_coeff")) {
      const double epsilon = read_number(*v, "truncation.min_abs_coeff");
      if (epsilon < 0.0)
        fail("truncation.min_abs_coeff", std::string("expected a non-negative number") + got(*v));
      truncation.min_abs_coeff = epsilon;
    }
    for (const char* key : {"top_n", "approx_top_n"}) {
      const Json* v = find(value, key);
      if (!v) continue;
      const std::string path = join("truncation", key);
      const std::uint64_t n = read_unsigned(*v, path, "a positive integer term count");
      if (n == 0) fail(path, "expected a positive integer term count, got 0");
      (std::string_view(key) == "top_n" ? truncation.top_n : truncation.approx_top_n) = n;
    }
    return truncation;
  }

  void read_run(const Json& value, Task& task) const {
    expect_object(value, "run", "an object {\"direction\": ..., \"threads\": ..., \"state\": ...}");
    check_keys(value, "run",
               {"direction", "threads", "state", "device", "engine", "partitions", "partition_rows", "nccl",
                "route_orbits_from", "ignore_measure"},
               "the run object");
    const Json& direction = require(value, "run", "direction", "\"forward\" or \"heisenberg\"");
    if (direction == "forward") {
      task.direction = Direction::forward;
    } else if (direction == "heisenberg") {
      task.direction = Direction::heisenberg;
    } else {
      fail("run.direction", std::string("expected \"forward\" or \"heisenberg\"") + got(direction));
    }
    if (const Json* threads = find(value, "threads")) {
      const char* what = "a non-negative integer thread count (0 = all cores)";
      const std::uint64_t n = read_unsigned(*threads, "run.threads", what);
      if (n > static_cast<std::uint64_t>(INT_MAX))
        fail("run.threads", std::string("expected ") + what + got(*threads));
      task.threads = static_cast<int>(n);
    }
    if (const Json* state = find(value, "state")) task.state = read_state(*state);
    if (const Json* partitions = find(value, "partitions")) {
      const char* what = "a power of two from 1 to 64 (in-process partitions)";
      const std::uint64_t n = read_unsigned(*partitions, "run.partitions", what);
      if (n == 0 || (n & (n - 1)) != 0 || n > 64)
        fail("run.partitions", std::string("expected ") + what + got(*partitions));
      task.partitions = static_cast<std::size_t>(n);
    }
    if (const Json* rows = find(value, "partition_rows")) task.partition_rows = read_partition_rows(*rows);
    if (const Json* ignore = find(value, "ignore_measure")) {
      if (!ignore->is_boolean()) fail("run.ignore_measure", std::string("expected true or false") + got(*ignore));
      task.ignore_measure = ignore->get<bool>();
    }
    if (const Json* nccl = find(value, "nccl")) {
      if (!nccl->is_boolean()) fail("run.nccl", std::string("expected true or false") + got(*nccl));
      task.nccl = nccl->get<bool>();
    }
    if (const Json* from = find(value, "route_orbits_from")) {
      task.route_orbits_from =
          read_unsigned(*from, "run.route_orbits_from", "a non-negative term count (0 = route every orbit)");
    }
    if (const Json* engine = find(value, "engine")) {
      if (*engine == "cpu" || *engine == "column") {
        task.engine = engine->get<std::string>();
      } else {
        fail("run.engine", std::string("expected \"cpu\" or \"column\"") + got(*engine));
      }
    }
    if (const Json* device = find(value, "device")) {
      const char* what = "\"cpu\", \"gpu\", \"auto\" or a device index (a non-negative integer)";
      if (*device == "cpu" || *device == "gpu" || *device == "auto") {
        task.device = device->get<std::string>();
      } else if (device->is_number_unsigned() && device->get<std::uint64_t>() <= INT_MAX) {
        task.device = std::to_string(device->get<std::uint64_t>());
      } else {
        fail("run.device", std::string("expected ") + what + got(*device));
      }
    }
  }

  TaskPartitionRows read_partition_rows(const Json& value) const {
    const std::string path = "run.partition_rows";
    expect_object(value, path, "an object {\"policy\": \"seeded\" | \"seeded_excluding\" | \"cut\", ...}");
    check_keys(value, path, {"policy", "seed", "excluded_qubits", "blocks", "basis"}, "the partition_rows object");
    TaskPartitionRows rows;
    const char* policies = "\"seeded\", \"seeded_excluding\" or \"cut\"";
    rows.policy = read_string(require(value, path, "policy", policies), join(path, "policy"), policies);
    if (rows.policy != "seeded" && rows.policy != "seeded_excluding" && rows.policy != "cut")
      fail(join(path, "policy"), std::string("expected ") + policies + ", got " + quote(rows.policy));
    const bool cut = rows.policy == "cut";
    const auto only_for = [&](const char* key, bool allowed, const char* policy) {
      if (find(value, key) && !allowed)
        fail(join(path, key), std::string("only a ") + policy + " policy takes \"" + key + "\"");
    };
    only_for("seed", !cut, "seeded or seeded_excluding");
    only_for("excluded_qubits", rows.policy == "seeded_excluding", "seeded_excluding");
    only_for("blocks", cut, "cut");
    only_for("basis", cut, "cut");
    if (const Json* seed = find(value, "seed")) rows.seed = read_unsigned(*seed, join(path, "seed"), "a seed (a non-negative integer)");
    const auto qubit_list = [&](const Json& list, const std::string& at) {
      if (!list.is_array()) fail(at, std::string("expected a list of qubit indices") + got(list));
      std::vector<std::size_t> qubits;
      for (std::size_t k = 0; k < list.size(); ++k)
        qubits.push_back(read_unsigned(list[k], indexed(at, k), "a qubit index (a non-negative integer)"));
      return qubits;
    };
    if (rows.policy == "seeded_excluding") {
      rows.excluded_qubits = qubit_list(require(value, path, "excluded_qubits", "a list of qubit indices"),
                                        join(path, "excluded_qubits"));
    }
    if (cut) {
      const Json& blocks = require(value, path, "blocks", "a list of qubit blocks, one per partition");
      const std::string at = join(path, "blocks");
      if (!blocks.is_array() || blocks.empty())
        fail(at, std::string("expected a non-empty list of qubit blocks, one per partition") + got(blocks));
      for (std::size_t b = 0; b < blocks.size(); ++b) rows.blocks.push_back(qubit_list(blocks[b], indexed(at, b)));
      if (const Json* basis = find(value, "basis")) {
        if (*basis != "z" && *basis != "x") fail(join(path, "basis"), std::string("expected \"z\" or \"x\"") + got(*basis));
        rows.basis = basis->get<std::string>()[0];
      }
    }
    return rows;
  }

  std::string read_state(const Json& value) const {
    std::string state;
    if (value.is_string()) {
      state = value.get<std::string>();
    } else if (value.is_array()) {
      for (std::size_t q = 0; q < value.size(); ++q) {
        const Json& item = value[q];
        const bool valid =
            item.is_string() && item.get_ref<const std::string&>().size() == 1 &&
            std::string_view("01+-rl").find(item.get_ref<const std::string&>()[0]) != std::string_view::npos;
        if (!valid)
          fail(indexed("run.state", q),
               std::string("expected one of \"0\", \"1\", \"+\", \"-\", \"r\", \"l\"") + got(item));
        state += item.get_ref<const std::string&>();
      }
    } else {
      fail("run.state", std::string("expected a state name (\"z+\", \"x+\", \"y+\"), a per-qubit label over "
                                    "0 1 + - r l, or a list of per-qubit characters") +
                            got(value));
    }
    try {
      ProductState::parse(state, num_qubits_);
    } catch (const std::invalid_argument& e) {
      fail("run.state", e.what());
    }
    return state;
  }

  const std::string& file_;
  std::filesystem::path base_dir_;
  std::size_t num_qubits_ = 0;
  std::vector<QubitRegister> registers_;  ///< of a qasm_file circuit
  const TaskSweep* sweep_ = nullptr;      ///< the task's sweep (read before the circuit)
};

}  // namespace

Task parse_task(std::string_view json_text, const std::string& file, const std::filesystem::path& base_dir) {
  const Json root = parse_json(json_text, file);
  return TaskReader(file, base_dir).read(root);
}

Task load_task(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  const std::filesystem::path parent = path.parent_path();
  return parse_task(text, path.string(), parent.empty() ? std::filesystem::path(".") : parent);
}

void apply_ignore_measure(Task& task) {
  if (!task.ignore_measure) return;
  // Measurements have no parameters: the bindings only move to their channels' new places.
  std::vector<std::size_t> new_index(task.circuit.size());
  Circuit kept(task.circuit.num_qubits());
  for (std::size_t i = 0; i < task.circuit.size(); ++i) {
    const Channel& channel = task.circuit[i];
    new_index[i] = kept.size();
    if (channel.is_measurement()) {
      ++task.ignored_measurements;
    } else {
      kept.append(channel);
    }
  }
  for (Circuit& column : task.sweep_circuits) {
    Circuit kept_column(column.num_qubits());
    for (const Channel& channel : column) {
      if (!channel.is_measurement()) kept_column.append(channel);
    }
    column = std::move(kept_column);
  }
  for (SweepBinding& binding : task.sweep_bindings) binding.channel = new_index[binding.channel];
  task.circuit = std::move(kept);
}

}  // namespace paulistrings::io
