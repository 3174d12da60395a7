// _core readers: task JSON (schema v1 and extensions), stim circuit text and OpenQASM 2 — the same
// readers the command line uses, so Python and the CLI agree on every file — and the byte sizes of
// --memory-limit (core/text.h's strict numbers).

#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "paulistrings/circuit/gate_library.h"
#include "paulistrings/core/text.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/io/stim.h"
#include "paulistrings/io/task.h"

namespace py = pybind11;

namespace paulistrings::python {
namespace {

py::dict task_dict(const io::Task& task) {
  py::dict out;
  out["num_qubits"] = task.num_qubits;
  out["circuit"] = task.circuit;
  py::list observables;
  for (const io::NamedObservable& o : task.observables) observables.append(py::make_tuple(o.name, o.terms));
  out["observables"] = observables;
  const io::TaskTruncation& t = task.truncation;
  const bool any = t.max_weight || t.min_abs_coeff || t.top_n || t.approx_top_n;
  out["truncation"] = any ? py::cast(t.policy()) : py::none();
  out["direction"] = std::string(to_string(task.direction));
  out["threads"] = task.threads;
  out["state"] = task.state;
  out["device"] = task.device;
  return out;
}

/// (circuit, [(register, offset, size)], [warning]) of an OpenQASM program.
py::tuple qasm_result(io::QasmProgram program) {
  py::list registers;
  for (const io::QasmRegister& r : program.registers)
    registers.append(py::make_tuple(r.name, r.offset, r.size));
  return py::make_tuple(std::move(program.circuit), registers, program.warnings);
}

io::QasmOptions qasm_options(std::optional<std::size_t> num_qubits,
                             const std::map<std::string, double>& inputs) {
  io::QasmOptions options;
  options.num_qubits = num_qubits;
  options.inputs.insert(inputs.begin(), inputs.end());
  return options;
}

py::tuple stim_result(io::StimProgram program) {
  return py::make_tuple(std::move(program.circuit), std::move(program.observable));
}

}  // namespace

void register_io(py::module_& m) {
  m.def(
      "parse_task",
      [](const std::string& text, const std::string& file, const std::filesystem::path& base_dir) {
        return task_dict(io::parse_task(text, file, base_dir));
      },
      py::arg("text"), py::arg("file") = "<task>", py::arg("base_dir") = std::filesystem::path("."));
  m.def("load_task", [](const std::filesystem::path& path) { return task_dict(io::load_task(path)); });
  m.def(
      "read_stim",
      [](const std::string& text, const std::string& file, std::optional<std::size_t> num_qubits) {
        return stim_result(io::read_stim(text, file, num_qubits));
      },
      py::arg("text"), py::arg("file") = "<stim>", py::arg("num_qubits") = py::none());
  m.def(
      "load_stim",
      [](const std::string& path, std::optional<std::size_t> num_qubits) {
        return stim_result(io::load_stim(path, num_qubits));
      },
      py::arg("path"), py::arg("num_qubits") = py::none());
  m.def("read_qasm", &io::read_qasm, py::arg("text"), py::arg("file") = "<qasm>",
        py::arg("num_qubits") = py::none());
  m.def("load_qasm", &io::load_qasm, py::arg("path"), py::arg("num_qubits") = py::none());
  m.def(
      "parse_size", [](const std::string& text) { return parse_byte_size(text); }, py::arg("text"));
  m.def(
      "read_qasm_program",
      [](const std::string& text, const std::string& file, std::optional<std::size_t> num_qubits,
         const std::map<std::string, double>& inputs) {
        return qasm_result(io::read_qasm_program(text, file, qasm_options(num_qubits, inputs)));
      },
      py::arg("text"), py::arg("file") = "<qasm>", py::arg("num_qubits") = py::none(),
      py::arg("inputs") = std::map<std::string, double>{});
  m.def(
      "load_qasm_program",
      [](const std::string& path, std::optional<std::size_t> num_qubits,
         const std::map<std::string, double>& inputs) {
        return qasm_result(io::load_qasm_program(path, qasm_options(num_qubits, inputs)));
      },
      py::arg("path"), py::arg("num_qubits") = py::none(),
      py::arg("inputs") = std::map<std::string, double>{});
  // The gate library, for importers of circuit objects (qiskit): a standard gate's channels, and the
  // channels of k controls (negated where asked) over a 1- or 2-qubit core matrix.
  m.def(
      "standard_gate_channels",
      [](const std::string& name, const std::vector<double>& params, const std::vector<Qubit>& qubits) {
        const StandardGate* gate = find_standard_gate(name, GateLibrary::qelib1);
        if (gate == nullptr) throw std::invalid_argument("unknown gate '" + name + "'");
        if (params.size() != static_cast<std::size_t>(gate->params) ||
            qubits.size() != static_cast<std::size_t>(gate->qubits)) {
          throw std::invalid_argument("gate '" + name + "' takes " + std::to_string(gate->params) +
                                      " parameters and " + std::to_string(gate->qubits) + " qubits");
        }
        std::vector<Channel> out;
        append_standard_gate(*gate, params, qubits, out);
        return out;
      },
      py::arg("name"), py::arg("params"), py::arg("qubits"));
  m.def(
      "controlled_gate_channels",
      [](const std::vector<bool>& negated, const std::vector<Complex>& core,
         const std::vector<Qubit>& qubits) {
        ControlledGate gate;
        gate.negated = negated;
        if (core.size() != 4 && core.size() != 16)
          throw std::invalid_argument("the core must be a 2x2 or 4x4 matrix");
        gate.targets = core.size() == 4 ? 1 : 2;
        gate.core = core;
        if (qubits.size() != gate.num_qubits())
          throw std::invalid_argument("wrong number of qubits for the gate");
        for (std::size_t i = 0; i < qubits.size(); ++i)
          for (std::size_t j = i + 1; j < qubits.size(); ++j)
            if (qubits[i] == qubits[j])
              throw std::invalid_argument("qubit " + std::to_string(qubits[i]) + " is used twice");
        std::vector<Channel> out;
        append_controlled(gate, qubits, out);
        return out;
      },
      py::arg("negated"), py::arg("core"), py::arg("qubits"));
}

}  // namespace paulistrings::python
