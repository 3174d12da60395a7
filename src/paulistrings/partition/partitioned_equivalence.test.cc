// Partitions in the engine-equivalence suite (testing/engine_suite.h): the partition cases through
// propagate_partitioned at P = 1, 2 and 4 against the CPU engine in one partition — one partition bit for
// bit, more to rounding — and the same on GPU partitions (partition r on device r mod the device count,
// so one GPU runs them all; every P to rounding), skipped with the reason without a CUDA device.

#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> partitions(std::size_t count, bool gpu) {
  return engine_runner([count, gpu](auto& sum, const Circuit& circuit, const PropagateOptions& options,
                                    PartitionOptions partition) {
    partition.partitions = count;
    if (gpu) {
      for (std::size_t r = 0; r < count; ++r)
        partition.devices.push_back(static_cast<int>(r) % gpu::device_count());
    }
    return propagate_partitioned(sum, circuit, options, partition);
  });
}

/// P = 1, 2 and 4; on the CPU one partition gives the CPU engine's bits.
std::vector<EngineVariant> one_two_four(bool gpu) {
  const std::string where = gpu ? " GPU partitions" : " partitions";
  std::vector<EngineVariant> variants;
  for (const std::size_t count : {1, 2, 4}) {
    variants.push_back(
        {.name = std::to_string(count) + where,
         .runner = partitions(count, gpu),
         .agreement = count == 1 && !gpu ? Agreement::same_bits : Agreement::summed_in_any_order,
         .partitions = count,
         .needs_gpu = gpu});
  }
  return variants;
}

PAULISTRINGS_ENGINE_SUITE(Partition, {partition_cases(false), Baseline::cpu_engine, one_two_four(false)});
PAULISTRINGS_ENGINE_SUITE(PartitionGpu, {partition_cases(true), Baseline::cpu_engine, one_two_four(true)});

}  // namespace
}  // namespace paulistrings::testing
