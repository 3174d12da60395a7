// CPU pinning of in-process partitions (see cpu_pinning.h).
#include "paulistrings/partition/cpu_pinning.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "paulistrings/core/text.h"

namespace paulistrings {
namespace {

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

std::vector<std::vector<int>> numa_cpu_lists() {
  const std::vector<int> allowed = allowed_cpus();
  std::vector<std::pair<int, std::vector<int>>> nodes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", error)) {
    const std::string name = entry.path().filename().string();
    const std::optional<std::size_t> node =
        name.rfind("node", 0) == 0 ? parse_index(std::string_view(name).substr(4)) : std::nullopt;
    if (!node) continue;
    std::ifstream file(entry.path() / "cpulist");
    std::string text;
    if (!std::getline(file, text)) continue;
    // "0-3,8-11": ranges and single CPUs (core/text.h). A list that does not parse (or a node without
    // CPUs: an empty line) leaves the node out, as one this process may not use.
    std::vector<int> cpus;
    try {
      for (const std::size_t c : parse_index_list(text)) {
        if (std::binary_search(allowed.begin(), allowed.end(), static_cast<int>(c))) cpus.push_back(static_cast<int>(c));
      }
    } catch (const std::invalid_argument&) {
      cpus.clear();
    }
    if (!cpus.empty()) nodes.emplace_back(static_cast<int>(*node), std::move(cpus));
  }
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::vector<int>> lists;
  for (auto& node : nodes) lists.push_back(std::move(node.second));
  if (lists.empty() && !allowed.empty()) lists.push_back(allowed);
  return lists;
}

std::vector<std::vector<int>> numa_partition_lists(const std::vector<std::vector<int>>& nodes,
                                                   std::size_t partitions) {
  if (nodes.size() <= 1 || partitions <= 1) return {};
  std::vector<std::vector<int>> lists(partitions);
  if (partitions <= nodes.size()) {
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      std::vector<int>& list = lists[n % partitions];
      list.insert(list.end(), nodes[n].begin(), nodes[n].end());
    }
    for (std::vector<int>& list : lists) std::sort(list.begin(), list.end());
  } else {
    for (std::size_t r = 0; r < partitions; ++r) lists[r] = nodes[r % nodes.size()];
  }
  return lists;
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
  previous_ = calling_thread_cpus();
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
