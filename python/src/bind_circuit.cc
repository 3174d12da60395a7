// _core.Channel, _core.Circuit and _core.Truncation: thin handles on the library's types. The
// public classes of the same names in paulistrings wrap them and add the original's argument
// handling and messages.

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/channels/channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/io/task.h"
#include "paulistrings/truncation/truncation.h"

namespace py = pybind11;

namespace paulistrings::python {
namespace {

std::vector<Complex> matrix_entries(
    const py::array_t<Complex, py::array::c_style | py::array::forcecast>& matrix, std::size_t dim,
    const char* gate) {
  if (matrix.ndim() != 2 || static_cast<std::size_t>(matrix.shape(0)) != dim ||
      static_cast<std::size_t>(matrix.shape(1)) != dim) {
    std::string shape = "(";
    for (py::ssize_t k = 0; k < matrix.ndim(); ++k)
      shape += (k ? ", " : "") + std::to_string(matrix.shape(k));
    shape += matrix.ndim() == 1 ? ",)" : ")";
    throw std::invalid_argument(std::string(gate) + " expects a " + std::to_string(dim) + "x" +
                                std::to_string(dim) + " complex matrix, got shape " + shape);
  }
  return {matrix.data(), matrix.data() + dim * dim};
}

const char* kind_name(Truncation::Kind kind) {
  switch (kind) {
    case Truncation::Kind::none:
      return "none";
    case Truncation::Kind::coeff:
      return "coeff";
    case Truncation::Kind::weight:
      return "weight";
    case Truncation::Kind::topn:
      return "topn";
    case Truncation::Kind::approx_topn:
      return "approx_topn";
    case Truncation::Kind::collapse_sample:
      return "collapse_sample";
    case Truncation::Kind::all_of:
      return "and";
    case Truncation::Kind::any_of:
      return "or";
  }
  return "?";
}

}  // namespace

void register_circuit(py::module_& m) {
  using Q = Qubit;
  using MatrixArg = py::array_t<Complex, py::array::c_style | py::array::forcecast>;
  py::class_<Channel>(m, "Channel", "One gate or noise channel (internal; use paulistrings.Channel).")
      .def_static("h", &Channel::h)
      .def_static("s", &Channel::s)
      .def_static("sdg", &Channel::sdg)
      .def_static("x", &Channel::x)
      .def_static("y", &Channel::y)
      .def_static("z", &Channel::z)
      .def_static("sx", &Channel::sx)
      .def_static("sxdg", &Channel::sxdg)
      .def_static("cnot", &Channel::cnot)
      .def_static("cy", &Channel::cy)
      .def_static("cz", &Channel::cz)
      .def_static("swap", &Channel::swap)
      .def_static("iswap", &Channel::iswap)
      .def_static("iswapdg", &Channel::iswapdg)
      .def_static("ecr", &Channel::ecr)
      .def_static("rx", &Channel::rx)
      .def_static("ry", &Channel::ry)
      .def_static("rz", &Channel::rz)
      .def_static("rxx", &Channel::rxx)
      .def_static("ryy", &Channel::ryy)
      .def_static("rzz", &Channel::rzz)
      .def_static("pauli_rotation",
                  [](const std::string& pauli, std::vector<Q> qubits, double theta) {
                    return Channel::pauli_rotation(pauli, std::move(qubits), theta);
                  })
      .def_static("unitary_1q",
                  [](Q q, const MatrixArg& matrix) {
                    return Channel::unitary_1q(q, matrix_entries(matrix, 2, "unitary_1q"));
                  })
      .def_static("unitary_2q",
                  [](Q q0, Q q1, const MatrixArg& matrix) {
                    return Channel::unitary_2q(q0, q1, matrix_entries(matrix, 4, "unitary_2q"));
                  })
      .def_static("depolarize", &Channel::depolarize)
      .def_static("dephase", &Channel::dephase)
      .def_static("pauli_channel", &Channel::pauli_channel)
      .def_static("depolarize2", &Channel::depolarize2)
      .def_static("amplitude_damping", &Channel::amplitude_damping)
      .def_static("measure", &Channel::measure)
      .def_static("measure_pauli",
                  [](const std::string& pauli, std::vector<Q> qubits) {
                    return Channel::measure_pauli(pauli, std::move(qubits));
                  })
      .def_static("reset", &Channel::reset, py::arg("q"), py::arg("basis") = 'Z')
      .def_property_readonly("name", &Channel::name)
      .def_property_readonly("qubits", &Channel::qubits)
      .def_property_readonly("pauli", &Channel::pauli)
      .def_property_readonly("theta", &Channel::theta)
      .def_property_readonly("parameters", &Channel::parameters)
      .def_property_readonly("matrix",
                             [](const Channel& c) -> py::object {
                               if (c.matrix().empty()) return py::none();
                               const std::size_t dim = c.matrix().size() == 4 ? 2 : 4;
                               py::array_t<Complex> out({dim, dim});
                               std::copy(c.matrix().begin(), c.matrix().end(), out.mutable_data());
                               return out;
                             })
      .def_property_readonly("is_noise", &Channel::is_noise)
      .def_property_readonly("is_rotation", &Channel::is_rotation)
      .def_property_readonly("is_measurement", &Channel::is_measurement)
      .def_property_readonly("is_reset", &Channel::is_reset)
      .def_property_readonly("span", &Channel::span)
      .def("adjoint", &Channel::adjoint)
      .def("description", &Channel::description);

  py::class_<Circuit>(m, "Circuit",
                      "Ordered channels on a fixed qubit count (internal; use paulistrings.Circuit).")
      .def(py::init<std::size_t>(), py::arg("num_qubits"))
      .def_property_readonly("num_qubits", &Circuit::num_qubits)
      .def("__len__", &Circuit::size)
      .def("append", [](Circuit& c, const Channel& ch) { c.append(ch); })
      .def("extend", [](Circuit& c, const Circuit& other) { c.extend(other); })
      .def("at", [](const Circuit& c, std::ptrdiff_t i) { return c.at(i); })
      .def("slice", &Circuit::slice)
      .def("adjoint", &Circuit::adjoint)
      .def("copy", [](const Circuit& c) { return Circuit(c); })
      .def("fingerprint", &Circuit::fingerprint)
      .def("gates_json", [](const Circuit& c) { return io::gates_to_json(c); })
      .def("has_noise", [](const Circuit& c) {
        for (const Channel& ch : c)
          if (ch.is_noise()) return true;
        return false;
      });

  py::class_<Truncation>(m, "Truncation", "A truncation policy (internal; use paulistrings.truncation).")
      .def(py::init<>())
      .def_static("coeff", &Truncation::coeff)
      .def_static("weight", &Truncation::weight)
      .def_static("topn", &Truncation::topn)
      .def_static("approx_topn", &Truncation::approx_topn)
      .def_static("collapse_sample", &Truncation::collapse_sample)
      .def("and_", [](const Truncation& a, const Truncation& b) { return a & b; })
      .def("or_", [](const Truncation& a, const Truncation& b) { return a | b; })
      .def_property_readonly("kind", [](const Truncation& t) { return kind_name(t.kind()); })
      .def("contains",
           [](const Truncation& t, const std::string& kind) {
             for (auto k : {Truncation::Kind::coeff, Truncation::Kind::weight, Truncation::Kind::topn,
                            Truncation::Kind::approx_topn, Truncation::Kind::collapse_sample}) {
               if (kind == kind_name(k)) return t.contains(k);
             }
             throw std::invalid_argument("unknown truncation kind '" + kind + "'");
           })
      .def("description", &Truncation::description);

  m.def("kicked_ising_circuit", &kicked_ising_circuit, py::arg("steps"), py::arg("theta_h"),
        py::arg("theta_zz") = -1.5707963267948966);
  m.def("heavy_hex_127_edges", &heavy_hex_127_edges);
}

}  // namespace paulistrings::python
