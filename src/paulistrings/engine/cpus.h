#pragma once
// The CPUs this process may run on: what a run's "threads = 0" (every CPU) means, and what in-process
// partitions' CPU lists are checked against (partition/cpu_pinning.h).

#include <vector>

namespace paulistrings {

/// The CPUs this process may run on, ascending: the union of the OpenMP places when OpenMP binds its
/// threads (OMP_PROC_BIND, OMP_PLACES: the calling thread itself is then bound to one place), otherwise
/// the calling thread's affinity mask (sched_getaffinity).
std::vector<int> allowed_cpus();

/// The CPUs of the calling thread's affinity mask, ascending (empty when it cannot be read).
std::vector<int> calling_thread_cpus();

/// How many CPUs allowed_cpus() lists (at least 1): the thread count of a run that asks for every CPU.
int available_cpus();

}  // namespace paulistrings
