// NUMA placement of in-process partitions: the node lists this machine reports and how partitions are
// spread over nodes (numa_partition_lists, checked on made-up topologies).

#include "paulistrings/partition/cpu_pinning.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

namespace paulistrings {
namespace {

TEST(CpuPinning, NumaListsCoverOnlyAllowedCpusOnce) {
  const std::vector<int> allowed = allowed_cpus();
  const std::vector<std::vector<int>> nodes = numa_cpu_lists();
  ASSERT_FALSE(nodes.empty());
  std::set<int> seen;
  for (const std::vector<int>& node : nodes) {
    EXPECT_FALSE(node.empty());
    EXPECT_TRUE(std::is_sorted(node.begin(), node.end()));
    for (int c : node) {
      EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), c)) << "CPU " << c;
      EXPECT_TRUE(seen.insert(c).second) << "CPU " << c << " in two nodes";
    }
  }
  EXPECT_EQ(seen.size(), allowed.size());  // every allowed CPU belongs to some node
}

// Run only as the child of the test below (--gtest_also_run_disabled_tests): prints the CPUs it sees.
TEST(CpuPinning, DISABLED_PrintAllowedCpusForTheTestBelow) {
  std::printf("allowed:");
  for (int c : allowed_cpus()) std::printf(" %d", c);
  std::printf("\navailable: %d\n", available_cpus());
}

/// What the test above prints in a child of this test binary run under the environment `bind`.
std::string child_output(const std::string& bind) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "env " + bind + " '" + self +
                              "' --gtest_filter=CpuPinning.DISABLED_PrintAllowedCpusForTheTestBelow "
                              "--gtest_also_run_disabled_tests 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (::pclose(pipe) != 0) output += "\n(the child failed)";
  return output;
}

// Under OMP_PROC_BIND libgomp binds the main thread to one CPU as it loads; the process may still use
// every CPU it was started with, and CPU lists naming them must not be refused (cpu_lists_problem).
TEST(CpuPinning, OpenMpBindingDoesNotShrinkTheAllowedCpus) {
  const std::vector<int> allowed = allowed_cpus();
  if (allowed.size() < 2) GTEST_SKIP() << "one CPU: nothing to lose";
  EXPECT_EQ(available_cpus(), static_cast<int>(allowed.size()));
  for (const std::string bind :
       {"OMP_PROC_BIND=close OMP_PLACES=cores", "OMP_PROC_BIND=true", "OMP_PLACES=threads"}) {
    SCOPED_TRACE(bind);
    const std::string output = child_output(bind);
    std::string expected = "allowed:";
    for (int c : allowed) expected.append(" ").append(std::to_string(c));
    expected.append("\navailable: ").append(std::to_string(allowed.size())).append("\n");
    EXPECT_NE(output.find(expected), std::string::npos) << output;
  }
}

// A place list narrower than the CPUs the process started with is what OpenMP may use: a run asking
// for every CPU (threads = 0) gets one thread per CPU of the places, not one per CPU of the machine.
TEST(CpuPinning, AnOpenMpPlaceListNarrowsTheAvailableCpus) {
  const std::vector<int> allowed = allowed_cpus();
  if (allowed.size() < 2) GTEST_SKIP() << "one CPU: nothing to narrow";
  const std::string first = std::to_string(allowed[0]);
  const std::string output = child_output("OMP_PLACES='{" + first + "}'");
  EXPECT_NE(output.find("allowed: " + first + "\navailable: 1\n"), std::string::npos) << output;
}

TEST(CpuPinning, PartitionsSpreadOverNodes) {
  const std::vector<std::vector<int>> four = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  // Fewer partitions than nodes: every node used, none shared.
  EXPECT_EQ(numa_partition_lists(four, 2), (std::vector<std::vector<int>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(numa_partition_lists(four, 4), four);
  // More partitions than nodes: partition r on node r mod nodes.
  EXPECT_EQ(numa_partition_lists({{0, 1}, {2, 3}}, 4),
            (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {0, 1}, {2, 3}}));
  // One node or one partition: nothing to place.
  EXPECT_TRUE(numa_partition_lists({{0, 1, 2, 3}}, 4).empty());
  EXPECT_TRUE(numa_partition_lists(four, 1).empty());
  // Whatever it gives is a valid set of lists for this process when built from its own nodes.
  const std::vector<std::vector<int>> here = numa_partition_lists(numa_cpu_lists(), 2);
  EXPECT_EQ(cpu_lists_problem(here, 2), "");
}

}  // namespace
}  // namespace paulistrings
