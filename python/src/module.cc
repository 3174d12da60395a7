// paulistrings._core: the compiled half of the Python package. The public API lives in the
// pure-Python modules of python/paulistrings, which wrap the handles registered here.
//
// Exceptions: std::invalid_argument (and io::ParseError, which derives from it) → ValueError,
// std::out_of_range → IndexError, std::runtime_error and other std::exception → RuntimeError
// (pybind11's defaults), MemoryBudgetExceeded → MemoryError, HostMemoryExceeded → HostMemoryExceeded (a
// MemoryError), std::bad_alloc → MemoryError; from the GPU
// engine gpu::GpuOutOfMemory → MemoryError, gpu::GpuUnavailable (no CUDA build, no device, no such
// ordinal; the message says which) and gpu::GpuError → RuntimeError; CheckpointNotFound (nothing at a
// resume path) → FileNotFoundError.

#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>
#include <string>

#include "mpi_comm.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/run/checkpoints.h"
#include "paulistrings/run/propagate.h"

namespace py = pybind11;

namespace paulistrings::python {
void register_sum(py::module_& m);
void register_circuit(py::module_& m);
void register_propagate(py::module_& m);
void register_io(py::module_& m);
void register_gpu(py::module_& m);
void register_sweep(py::module_& m);
}  // namespace paulistrings::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "paulistrings compiled core (internal; import paulistrings instead)";
  m.attr("__version__") = PAULISTRINGS_VERSION_STRING;
  // comm= support: the MPI transport and mpi4py's C API compiled in (bind_mpi.cc).
  m.attr("mpi") = paulistrings::python::mpi4py_support();

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const paulistrings::CheckpointNotFound& e) {
      const std::string path = py::repr(py::str(e.path().string()));
      PyErr_SetString(PyExc_FileNotFoundError, ("resume: no checkpoint file at " + path).c_str());
    } catch (const paulistrings::MemoryBudgetExceeded& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const paulistrings::gpu::GpuOutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const paulistrings::gpu::GpuUnavailable& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const paulistrings::gpu::GpuError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  // A MemoryError subclass: paulistrings.HostMemoryExceeded (the host memory guard, or std::bad_alloc in
  // a layer); the message names the layer, the terms, the bytes and the ways out.
  py::register_exception<paulistrings::HostMemoryExceeded>(m, "HostMemoryExceeded", PyExc_MemoryError);

  paulistrings::python::register_sum(m);
  paulistrings::python::register_circuit(m);
  paulistrings::python::register_propagate(m);
  paulistrings::python::register_io(m);
  paulistrings::python::register_gpu(m);
  paulistrings::python::register_sweep(m);
}
