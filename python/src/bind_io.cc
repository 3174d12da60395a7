// _core readers: task JSON (schema v1 and extensions), stim circuit text and OpenQASM 2 — the same
// readers the command line uses, so Python and the CLI agree on every file — and the byte sizes of
// --memory-limit (core/text.h's strict numbers).

#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <optional>
#include <string>

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
}

}  // namespace paulistrings::python
