// Non-template parts of the CPU engine.

#include "paulistrings/cpu/cpu_engine.h"

#include <sched.h>

namespace paulistrings {

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return std::max(1, omp_get_num_procs());
}

}  // namespace paulistrings
