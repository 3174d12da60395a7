#pragma once
// Pinning an in-process partition to a list of CPUs (PartitionOptions::cpu_lists). A partition's thread
// is bound to its CPUs before its engine starts, so the OpenMP team that thread creates inherits the
// binding (unless OMP_PROC_BIND / OMP_PLACES ask OpenMP to place its threads itself) and the memory the
// partition allocates and first touches lands on those CPUs' NUMA node. Linux only (sched affinity).

#include <string>
#include <vector>

#include "paulistrings/engine/cpus.h"  // allowed_cpus(), calling_thread_cpus()

namespace paulistrings {

/// One CPU list per NUMA node (ascending node order), intersected with allowed_cpus(); nodes with no
/// allowed CPU are left out. Read from /sys/devices/system/node/node*/cpulist; a machine without that
/// information gives one node holding every allowed CPU.
std::vector<std::vector<int>> numa_cpu_lists();

/// CPU lists that place `partitions` in-process partitions on NUMA nodes: with P ≤ nodes, partition r
/// gets nodes r, r + P, r + 2P, … (every node used, none shared); with P > nodes, partition r shares
/// node r mod nodes. Empty (no pinning) for one node or one partition.
std::vector<std::vector<int>> numa_partition_lists(const std::vector<std::vector<int>>& nodes, std::size_t partitions);

/// What is wrong with `lists` as one CPU list per partition for `partitions` partitions (empty = fine):
/// a count that differs, an empty list, a CPU this process may not use.
std::string cpu_lists_problem(const std::vector<std::vector<int>>& lists, std::size_t partitions);

/// Binds the calling thread to `cpus` for its lifetime and restores the previous binding after (the
/// calling thread may be the user's). Throws std::runtime_error when the kernel refuses.
class ScopedCpuPin {
 public:
  explicit ScopedCpuPin(const std::vector<int>& cpus);
  ~ScopedCpuPin();
  ScopedCpuPin(const ScopedCpuPin&) = delete;
  ScopedCpuPin& operator=(const ScopedCpuPin&) = delete;

 private:
  std::vector<int> previous_;
  bool pinned_ = false;
};

}  // namespace paulistrings
