// comm=: an mpi4py communicator → MpiTransport (see mpi_comm.h). The MPI_Comm is read with mpi4py's C
// API (PyMPIComm_Get). mpi4py.MPI is imported here only when a communicator is passed, so importing
// paulistrings never imports mpi4py (nor initializes MPI): mpi4py initializes MPI when the application
// imports mpi4py.MPI, and the library never calls MPI_Init or MPI_Finalize.

#include "mpi_comm.h"

#include <stdexcept>
#include <string>

#if defined(PAULISTRINGS_HAS_MPI) && defined(PAULISTRINGS_PYTHON_MPI4PY)
#include <mpi4py/mpi4py.h>

#include "paulistrings/partition/mpi_transport.h"
#define PAULISTRINGS_PYTHON_COMM 1
#endif

namespace py = pybind11;

namespace paulistrings::python {

#ifdef PAULISTRINGS_PYTHON_COMM

bool mpi4py_support() { return true; }

namespace {

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

/// First line of an MPI library version string ("Open MPI v4.1.4, package: …").
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::function<std::unique_ptr<Transport>()> mpi_transport_factory(py::handle comm) {
  static bool imported = false;
  if (!imported) {
    if (import_mpi4py() < 0) throw py::error_already_set();
    imported = true;
    // mpi4py must drive the MPI library this module is linked with (an MPI_Comm of another
    // implementation is meaningless here).
    const std::string theirs =
        py::str(py::module_::import("mpi4py.MPI").attr("Get_library_version")()).cast<std::string>();
    const std::string ours = library_version();
    if (first_line(theirs) != first_line(ours)) {
      imported = false;
      throw std::runtime_error("comm=: mpi4py is built with another MPI library (" + first_line(theirs) +
                               ") than paulistrings (" + first_line(ours) +
                               "); install the mpi4py of the same MPI (Debian: python3-mpi4py with openmpi)");
    }
  }
  const py::object intracomm = py::module_::import("mpi4py.MPI").attr("Intracomm");
  if (!py::isinstance(comm, intracomm)) {
    throw py::type_error("comm must be an mpi4py intracommunicator (e.g. mpi4py.MPI.COMM_WORLD), got " +
                         std::string(py::str(py::type::of(comm).attr("__name__"))));
  }
  MPI_Comm* handle = PyMPIComm_Get(comm.ptr());
  if (handle == nullptr) throw py::error_already_set();
  if (*handle == MPI_COMM_NULL) throw py::value_error("comm= is MPI.COMM_NULL");
  const MPI_Comm value = *handle;
  return [value]() -> std::unique_ptr<Transport> { return std::make_unique<MpiTransport>(value); };
}

#else

bool mpi4py_support() { return false; }

std::function<std::unique_ptr<Transport>()> mpi_transport_factory(py::handle) {
#ifdef PAULISTRINGS_HAS_MPI
  throw std::runtime_error(
      "comm=: this build of paulistrings has no mpi4py support (mpi_available() is False): its MPI "
      "transport is built, but mpi4py's C headers were not found when the Python module was configured "
      "(install python3-mpi4py and reconfigure)");
#else
  throw std::runtime_error(
      "comm=: this build of paulistrings has no MPI support (mpi_available() is False): configure with "
      "MPI (libopenmpi-dev) and mpi4py (python3-mpi4py) installed");
#endif
}

#endif

}  // namespace paulistrings::python
