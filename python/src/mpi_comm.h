#pragma once
// comm= of PauliSum.propagate: the MPI communicator of an mpi4py object, as a Transport for
// propagate_partitioned (bind_mpi.cc). Compiled for real only when the library has MPI
// (PAULISTRINGS_HAS_MPI) and CMake found mpi4py's C headers (PAULISTRINGS_PYTHON_MPI4PY); otherwise
// every entry point says so with a RuntimeError.

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>

#include "paulistrings/partition/transport.h"

namespace paulistrings::python {

/// Whether this build can run comm= (MPI transport + mpi4py C API compiled in).
bool mpi4py_support();

/// With the GIL held: checks that `comm` is an mpi4py intracommunicator of the MPI library this module
/// is linked with, and returns a factory that, called without the GIL (collectively on every rank),
/// duplicates it into a Transport. Throws pybind11::type_error for other objects and
/// std::runtime_error when the build has no MPI/mpi4py support or the libraries differ.
std::function<std::unique_ptr<Transport>()> mpi_transport_factory(pybind11::handle comm);

}  // namespace paulistrings::python
