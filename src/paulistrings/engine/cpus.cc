// The CPUs this process may run on (see cpus.h).
#include "paulistrings/engine/cpus.h"

#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>

namespace paulistrings {

std::vector<int> allowed_cpus() {
#ifdef _OPENMP
  // Under OMP_PROC_BIND or OMP_PLACES, libgomp binds the thread that loads it to one place, so the
  // calling thread's mask can be a single CPU; the places were built from the mask the process started
  // with, and together they are the CPUs it may use.
  const int places = omp_get_num_places();
  if (places > 0) {
    std::vector<int> cpus;
    for (int p = 0; p < places; ++p) {
      std::vector<int> ids(static_cast<std::size_t>(omp_get_place_num_procs(p)));
      if (!ids.empty()) omp_get_place_proc_ids(p, ids.data());
      cpus.insert(cpus.end(), ids.begin(), ids.end());
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    if (!cpus.empty()) return cpus;
  }
#endif
  return calling_thread_cpus();
}

std::vector<int> calling_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

int available_cpus() { return std::max(1, static_cast<int>(allowed_cpus().size())); }

}  // namespace paulistrings
