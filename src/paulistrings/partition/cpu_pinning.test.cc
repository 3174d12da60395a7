// NUMA placement of in-process partitions: the node lists this machine reports and how partitions are
// spread over nodes (numa_partition_lists, checked on made-up topologies).

#include "paulistrings/partition/cpu_pinning.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

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
