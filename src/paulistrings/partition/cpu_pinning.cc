// CPU pinning of in-process partitions (see cpu_pinning.h).
#include "paulistrings/partition/cpu_pinning.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace paulistrings {
namespace {

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

void bind(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  const int status = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (status != 0) {
    throw std::runtime_error(std::string("cannot pin a partition's thread to its CPUs: ").append(std::strerror(status)));
  }
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  return cpus_of(set);
}

std::string cpu_lists_problem(const std::vector<std::vector<int>>& lists, std::size_t partitions) {
  if (lists.empty()) return {};
  if (lists.size() != partitions) {
    return "cpu_lists: expected one CPU list per partition (" + std::to_string(partitions) + "), got " +
           std::to_string(lists.size());
  }
  const std::vector<int> allowed = allowed_cpus();
  for (std::size_t r = 0; r < lists.size(); ++r) {
    if (lists[r].empty()) return "cpu_lists: the list of partition " + std::to_string(r) + " is empty";
    for (int c : lists[r]) {
      bool ok = c >= 0 && c < CPU_SETSIZE;
      if (ok) {
        ok = false;
        for (int a : allowed) ok |= a == c;
      }
      if (!ok) {
        return "cpu_lists: CPU " + std::to_string(c) + " (partition " + std::to_string(r) +
               ") is not one this process may run on";
      }
    }
  }
  return {};
}

ScopedCpuPin::ScopedCpuPin(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0) previous_ = cpus_of(set);
  bind(cpus);
  pinned_ = true;
}

ScopedCpuPin::~ScopedCpuPin() {
  if (!pinned_ || previous_.empty()) return;
  try {
    bind(previous_);
  } catch (...) {
    // Restoring a binding the thread had a moment ago cannot fail for lack of rights; nothing to do.
  }
}

}  // namespace paulistrings
