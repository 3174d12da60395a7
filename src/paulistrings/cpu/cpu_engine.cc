// Non-template parts of the CPU engine.

#include "paulistrings/cpu/cpu_engine.h"

#include <omp.h>

#include <algorithm>

namespace paulistrings {

int available_cpus() {
  // libgomp's count: the CPUs this process may use when it started. The calling thread's own mask is
  // one place only once OMP_PROC_BIND or OMP_PLACES has bound it.
  return std::max(1, omp_get_num_procs());
}

}  // namespace paulistrings
