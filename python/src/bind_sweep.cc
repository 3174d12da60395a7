// _core.SweepSum and _core.propagate_sweep: parameter sweeps (sweep/propagate_sweep.h) for the Python
// package. PauliSum.propagate(..., sweep=) binds its template circuit into K concrete circuits (_circuit.py)
// and calls propagate_sweep here; the result, K coefficient columns per term, is wrapped by
// paulistrings.SweptPauliSum (_sweep.py). Circuit.substituted builds those circuits: a copy of the template
// with the channels at some positions replaced. With gradient=, _sweep.py builds each parameterized layer's
// LayerDerivative (sweep_derivative for angles) and propagate_sweep carries the derivative columns. With
// checkpoint= / resume= the sweep runs in segments and resumes (run/sweep_checkpoints.h).

#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/sweep_checkpoints.h"
#include "paulistrings/sweep/propagate_sweep.h"
#include "propagate_run.h"

namespace py = pybind11;

namespace paulistrings::python {

namespace {

/// `circuit` with channel positions[j] replaced by channels[j] (positions ascending, in range).
Circuit substituted(const Circuit& circuit, const std::vector<std::size_t>& positions,
                    const std::vector<Channel>& channels) {
  if (positions.size() != channels.size()) {
    throw std::invalid_argument("substituted: " + std::to_string(positions.size()) + " positions but " +
                                std::to_string(channels.size()) + " channels");
  }
  Circuit out(circuit.num_qubits());
  std::size_t next = 0;
  for (std::size_t i = 0; i < circuit.size(); ++i) {
    if (next < positions.size() && positions[next] == i) {
      out.append(channels[next++]);
    } else {
      out.append(circuit[i]);
    }
  }
  if (next != positions.size())
    throw std::invalid_argument("substituted: positions out of order or out of range");
  return out;
}

py::array_t<Complex> expectations_of(const AnySweepSum& sum, const std::string& state) {
  const std::vector<Complex> values = sum.expectations(ProductState::parse(state, sum.num_qubits()));
  py::array_t<Complex> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

}  // namespace

void register_sweep(py::module_& m) {
  py::class_<AnySweepSum>(m, "SweepSum",
                          "A sweep's result, K coefficients a term (internal; use "
                          "paulistrings.SweptPauliSum).")
      .def_property_readonly("num_qubits", &AnySweepSum::num_qubits)
      .def_property_readonly("columns", &AnySweepSum::columns)
      .def_property_readonly("is_complex", &AnySweepSum::is_complex)
      .def("__len__", &AnySweepSum::size)
      .def("expectations", &expectations_of)
      .def("norms_squared", &AnySweepSum::norms_squared)
      .def("column", [](const AnySweepSum& s, std::size_t k) {
        if (k >= s.columns()) {
          throw std::out_of_range("column " + std::to_string(k) + " is out of range for a sweep of " +
                                  std::to_string(s.columns()) + " columns");
        }
        return s.column(k);
      });

  m.def("substituted", &substituted, py::arg("circuit"), py::arg("positions"), py::arg("channels"));

  py::class_<LayerDerivative>(m, "LayerDerivative",
                              "One layer's derivative: scale * (A(plus) - A(minus)) (internal; built by "
                              "paulistrings' gradient=).")
      .def(py::init([](std::size_t layer, Channel plus, Channel minus, double scale) {
             return LayerDerivative{layer, std::move(plus), std::move(minus), scale};
           }),
           py::arg("layer"), py::arg("plus"), py::arg("minus"), py::arg("scale"))
      .def_readonly("layer", &LayerDerivative::layer)
      .def_readonly("plus", &LayerDerivative::plus)
      .def_readonly("minus", &LayerDerivative::minus)
      .def_readonly("scale", &LayerDerivative::scale);

  // `make` is a Python callable (GIL held: this call never releases it).
  m.def("sweep_derivative", &sweep_derivative, py::arg("layer"), py::arg("make"), py::arg("value"),
        py::arg("angle"), py::arg("chain") = 1.0);

  m.def(
      "propagate_sweep",
      [](const AnyPauliSum& observable, const std::vector<Circuit>& columns, PropagateOptions options,
         std::optional<std::size_t> memory_limit, bool memory_guard,
         std::optional<std::size_t> memory_guard_bytes, py::object layer_callback, bool poll_signals,
         const std::vector<std::pair<std::string, std::vector<std::vector<LayerDerivative>>>>& gradient,
         std::optional<std::string> checkpoint, std::size_t checkpoint_every,
         std::optional<std::string> resume, std::uint64_t fingerprint) {
        if (columns.empty()) throw std::invalid_argument("a sweep needs at least one column (one circuit)");
        std::vector<SweepGradient> gradients;
        for (const auto& [name, derivatives] : gradient)
          gradients.push_back(SweepGradient{name, derivatives});
        const bool complex_coefficients = sweep_is_complex(observable, columns, gradients);
        // Each gradient parameter adds K derivative columns to every term (run/memory_budget.h).
        const std::size_t all_columns = columns.size() * (1 + gradients.size());
        const std::size_t bytes_per_term =
            sweep_bytes_per_term(observable.width(), complex_coefficients, all_columns);
        if (memory_limit) {
          options.max_terms = budget_terms(*memory_limit, resident_bytes(), observable.width(),
                                           complex_coefficients, "memory_limit", all_columns);
        }
        if (memory_guard) {
          const HostAllowance allowance =
              memory_guard_bytes ? HostAllowance{*memory_guard_bytes, "the memory guard's allowance"}
                                 : host_allowance_now();
          options.memory_guard.allowed_bytes = allowance.bytes;
          options.memory_guard.bytes_per_term = bytes_per_term;
          options.memory_guard.source = allowance.source;
        }
        PythonHooks hooks(columns[0], std::move(layer_callback), poll_signals);
        SweepRunOptions run;
        run.propagate = options;
        run.propagate.on_layer = hooks.on_layer();
        if (checkpoint) {
          run.checkpoint = *checkpoint;
          run.checkpoint_every = checkpoint_every;
        }
        // What must match to resume: the ordinary run's fingerprint (`fingerprint`: direction, policy,
        // observable) with every column's circuit and the gradients.
        run.circuit_fingerprint = sweep_circuit_fingerprint(columns);
        run.task_fingerprint = sweep_task_fingerprint(fingerprint, columns, gradients);
        run.interrupted = hooks.interrupted();
        SweepState state;
        py::object resumed_from = py::none();
        if (resume) {
          const std::uint64_t fingerprints[] = {run.task_fingerprint};
          SweepResumePoint point =
              load_sweep_resume(*resume, columns, all_columns, observable.num_qubits(), fingerprints,
                                "run (circuit, sweep values, gradient, direction, policy or starting "
                                "observable differ)");
          state = std::move(point.state);
          resumed_from = py::int_(state.layers_done);
        }
        SweepRunResult outcome;
        {
          py::gil_scoped_release release;
          outcome = run_sweep_segments(observable, columns, gradients, run, state, resume.has_value());
        }
        py::dict out = stats_dict(outcome.stats.stats, columns[0]);
        out["column_discarded_weight"] = outcome.stats.discarded_weight;
        out["column_groups"] = outcome.stats.groups;
        out["column_splits"] = outcome.stats.splits;
        out["exception"] = hooks.pending();
        out["interrupted"] = outcome.interrupted;
        out["resumed_from_layer"] = resumed_from;
        return py::make_tuple(std::move(state.sum), out);
      },
      py::arg("observable"), py::arg("columns"), py::arg("options"), py::kw_only(),
      py::arg("memory_limit") = py::none(), py::arg("memory_guard") = true,
      py::arg("memory_guard_bytes") = py::none(), py::arg("layer_callback") = py::none(),
      py::arg("poll_signals") = false, py::arg("gradient") = py::list(), py::arg("checkpoint") = py::none(),
      py::arg("checkpoint_every") = 0, py::arg("resume") = py::none(), py::arg("fingerprint") = 0);
}

}  // namespace paulistrings::python
