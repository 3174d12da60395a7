// The command's OpenMP wait policy: see wait_policy.h.
#include "paulistrings/cli/wait_policy.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>

namespace paulistrings::cli {
namespace {

// The CPUs the process was started on (room for 8,192), recorded before libgomp is initialised: under
// OMP_PROC_BIND or OMP_PLACES libgomp binds this thread to one place when it loads, and a re-executed
// image would inherit that one place and run every thread on it.
cpu_set_t start_cpus[8];
bool start_cpus_known = false;

void record_start_cpus(int, char**, char**) {
  start_cpus_known = ::sched_getaffinity(0, sizeof start_cpus, start_cpus) == 0;
}

// The executable's .preinit_array runs before the constructors of every shared library, libgomp's too.
[[gnu::used,
  gnu::section(".preinit_array")]] void (*const record_start_cpus_entry)(int, char**,
                                                                         char**) = record_start_cpus;

}  // namespace

void choose_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  // Set now, it also ends the recursion: the new image finds it and returns.
  if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  if (start_cpus_known) ::sched_setaffinity(0, sizeof start_cpus, start_cpus);
  ::execv("/proc/self/exe", argv);
}

}  // namespace paulistrings::cli
