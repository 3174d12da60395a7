// The GPU engine out of device memory, by fault injection (allocation_faults.h): for every k, the k-th
// allocation of a run that grows fails — alone (the paths that retry smaller or do without: growth
// headroom, compaction into smaller arrays) and with every later one (the paths that give up). Each
// time the error must be GpuOutOfMemory naming the bytes and the terms, the resident sum must be exactly
// as it was before the failing layer, and the device must be usable: the same sum then finishes the run
// with the fault-free result, and a fresh upload runs. The same for the host entry point and for GPU
// partitions of one process (export, import and merge buffers). Without a CUDA device every test is
// skipped with the reason.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "paulistrings/engine/driver.h"
#include "paulistrings/gpu/allocation_faults.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/engine_cases.h"
#include "paulistrings/testing/gpu.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

constexpr std::size_t kQubits = 12;
constexpr Qubit kFirst = 60;  // qubits 60…71: the keys straddle the word boundary of W = 2

/// A circuit whose sum grows from a few hundred to tens of thousands of terms (and is cut back at the end,
/// so that holes pile up and compaction gives memory back), with every kind of layer the engine treats
/// apart: rotations, dense and sparse general tables, Cliffords, a permutation that makes terms vanish,
/// noise.
Circuit growing_circuit() {
  std::mt19937_64 rng(20261203);
  Circuit circuit(128);
  const auto q = [](std::size_t i) { return static_cast<Qubit>(kFirst + i); };
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i + 1 < kQubits; i += 2)
      circuit.append(Channel::rzz(0.3 + 0.1 * double(i), q(i), q(i + 1)));
    for (std::size_t i = 0; i < kQubits; ++i) circuit.append(Channel::rx(0.7, q(i)));
    const std::vector<Complex> u = testing::random_unitary(rng, 4);
    circuit.append(Channel::unitary_2q(q(1), q(2), u));
    circuit.append(Channel::cnot(q(3), q(4)));
    circuit.append(Channel::amplitude_damping(0.2, q(5)));
    circuit.append(Channel::depolarize(0.05, q(6)));
  }
  // Two Paulis swapped, the third sent to 0: each input has at most one image, one has none.
  const std::array<double, 16> vanishing = {1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  circuit.append(Channel::transfer_matrix({q(7)}, vanishing, "swap_and_drop"));
  for (std::size_t i = 0; i < kQubits; ++i) circuit.append(Channel::ry(0.4, q(i)));
  return circuit;
}

PauliSum<2, double> starting_sum() {
  std::mt19937_64 rng(7);
  return testing::random_window_sum<2, double>(rng, 300, 128, kFirst, kQubits);
}

/// The run of the tests: keep terms above 0.03 (the sum grows from 300 to tens of thousands of terms; at
/// 1e-7 it grew to all 16.6 million keys of 12 qubits, and every allocation k is a run of its own), then
/// keep the 500 largest after the last layers (cuts that leave holes).
Truncation policy() { return Truncation::coeff(0.03); }

/// Layer by layer on a resident sum, as run_layers does, from `start` on; returns the layer that threw
/// GpuOutOfMemory (or circuit.size() when none did), with `before` the sum before that layer.
std::size_t run_until_failure(gpu::DeviceSum<2, double>& sum, const Circuit& circuit, std::size_t start,
                              PauliSum<2, double>& before, std::string& message) {
  const Truncation truncation = policy();
  const Truncation cut = Truncation::topn(500);
  for (std::size_t k = start; k < circuit.size(); ++k) {
    before = sum.download();
    try {
      const PreparedChannel<2> table = prepare_channel<2>(circuit[k], Direction::forward);
      sum.apply_layer(table, truncation);
      sum.finalize_layer(truncation);
      if (k + 3 >= circuit.size()) sum.finalize_layer(cut);
    } catch (const gpu::GpuOutOfMemory& e) {
      message = e.what();
      return k;
    }
  }
  return circuit.size();
}

void expect_names_bytes_and_terms(const std::string& message) {
  EXPECT_NE(message.find("out of"), std::string::npos) << message;
  EXPECT_NE(message.find("GiB"), std::string::npos) << message;
  EXPECT_NE(message.find("terms"), std::string::npos) << message;
}

/// The device allocations (and pinned host ones) of a fault-free upload and run, counted by arming a
/// fault that never comes.
std::uint64_t allocations_of_a_run(const Circuit& circuit, const PauliSum<2, double>& start) {
  gpu::ScopedAllocationFault counting(std::numeric_limits<std::uint64_t>::max());
  gpu::DeviceSum<2, double> sum(start, 0);
  PauliSum<2, double> before;
  std::string message;
  EXPECT_EQ(run_until_failure(sum, circuit, 0, before, message), circuit.size()) << message;
  return gpu::AllocationFaults::seen();
}

/// For every k in both modes: the failure, the unchanged sum, the same sum finishing the run to the
/// fault-free result, a fresh run afterwards.
void every_failing_allocation(bool sticky) {
  const Circuit circuit = growing_circuit();
  const PauliSum<2, double> start = starting_sum();
  PauliSum<2, double> expected;
  {
    gpu::DeviceSum<2, double> sum(start, 0);
    PauliSum<2, double> before;
    std::string message;
    ASSERT_EQ(run_until_failure(sum, circuit, 0, before, message), circuit.size()) << message;
    expected = sum.download();
  }
  ASSERT_GT(expected.size(), 500u / 2);
  const std::uint64_t allocations = allocations_of_a_run(circuit, start);
  ASSERT_GT(allocations, 4u);
  std::size_t failures = 0;
  for (std::uint64_t k = 1;; ++k) {
    SCOPED_TRACE("allocation " + std::to_string(k) + (sticky ? " and every later one" : " alone"));
    gpu::ScopedAllocationFault fault(k, sticky);
    std::optional<gpu::DeviceSum<2, double>> sum;
    try {
      sum.emplace(start, 0);
    } catch (const gpu::GpuOutOfMemory& e) {
      expect_names_bytes_and_terms(e.what());
      ++failures;
      gpu::AllocationFaults::disarm();
      sum.emplace(start, 0);  // the device is usable
    }
    PauliSum<2, double> before;
    std::string message;
    const std::size_t failed = run_until_failure(*sum, circuit, 0, before, message);
    const bool fired = gpu::AllocationFaults::fired();
    gpu::AllocationFaults::disarm();
    if (failed < circuit.size()) {
      ++failures;
      expect_names_bytes_and_terms(message);
      EXPECT_TRUE(testing::SumsMatch(sum->download(), before)) << "layer " << failed << " changed the sum";
      EXPECT_EQ(sum->download().size(), sum->size());
      ASSERT_EQ(run_until_failure(*sum, circuit, failed, before, message), circuit.size()) << message;
    }
    EXPECT_TRUE(testing::SumsMatch(sum->download(), expected));
    // The run's allocations are the same each time: the k-th fires exactly while k is one of them.
    ASSERT_EQ(fired, k <= allocations);
    if (!fired) break;
  }
  EXPECT_GT(failures, 0u);
  std::printf("[ faults   ] %llu allocations in the run, each failed%s: %zu runs ended in GpuOutOfMemory\n",
              static_cast<unsigned long long>(allocations), sticky ? " with every later one" : " alone",
              failures);
  // And a fresh upload and run afterwards.
  gpu::DeviceSum<2, double> fresh(start, 0);
  PauliSum<2, double> before;
  std::string message;
  ASSERT_EQ(run_until_failure(fresh, circuit, 0, before, message), circuit.size()) << message;
  EXPECT_TRUE(testing::SumsMatch(fresh.download(), expected));
}

// The size of the tests' run, on the CPU engine (no GPU needed): big enough for the device sum to grow
// its arrays and join table several times, small enough that a run for every allocation stays cheap.
TEST(GpuOutOfMemoryRun, GrowsFromHundredsToTensOfThousandsAndIsCutBack) {
  const Circuit circuit = growing_circuit();
  PauliSum<2, double> sum = starting_sum();
  PropagateOptions options;
  options.truncation = policy();
  options.threads = 1;
  const PropagationStats stats = propagate(sum, circuit, options);
  EXPECT_GE(stats.peak_terms, 20 * starting_sum().size());
  EXPECT_LE(stats.peak_terms, 100000u);
  EXPECT_LT(sum.size(), stats.peak_terms / 4);
}

TEST(GpuOutOfMemory, EveryAllocationFailingFromThereOnLeavesTheSumAsItWas) {
  SKIP_WITHOUT_GPU();
  every_failing_allocation(true);
}

TEST(GpuOutOfMemory, EveryAllocationFailingAloneIsRetriedOrLeavesTheSumAsItWas) {
  SKIP_WITHOUT_GPU();
  every_failing_allocation(false);
}

TEST(GpuOutOfMemory, TheHostEntryPointNamesTheLayerAndLeavesTheHostSum) {
  SKIP_WITHOUT_GPU();
  const Circuit circuit = growing_circuit();
  const PauliSum<2, double> start = starting_sum();
  PropagateOptions options;
  options.device = 0;
  options.truncation = policy();
  PauliSum<2, double> expected = start;
  propagate(expected, circuit, options);
  for (std::uint64_t k = 1;; ++k) {
    SCOPED_TRACE("allocation " + std::to_string(k));
    PauliSum<2, double> sum = start;
    bool threw = false;
    {
      gpu::ScopedAllocationFault fault(k);
      try {
        propagate(sum, circuit, options);
      } catch (const gpu::GpuOutOfMemory& e) {
        threw = true;
        expect_names_bytes_and_terms(e.what());
      }
      if (!gpu::AllocationFaults::fired()) break;
    }
    // Only allocations the engine can do without may have failed (compaction): then the run is whole.
    EXPECT_TRUE(testing::SumsMatch(sum, threw ? start : expected));
    sum = start;
    propagate(sum, circuit, options);  // the device is usable
    EXPECT_TRUE(testing::SumsMatch(sum, expected));
    ASSERT_LT(k, 10000u);
  }
}

TEST(GpuOutOfMemory, GpuPartitionsOfOneProcessFailTogetherAndLeaveTheHostSum) {
  SKIP_WITHOUT_GPU();
  const Circuit circuit = growing_circuit();
  const PauliSum<2, double> start = starting_sum();
  PropagateOptions options;
  options.truncation = policy();
  PartitionOptions partition;
  partition.devices = {0, 0};  // two partitions on one device: exports, imports and merges
  PauliSum<2, double> expected = start;
  propagate(expected, circuit, options, partition);
  for (const bool sticky : {true, false}) {
    for (std::uint64_t k = 1;; ++k) {
      SCOPED_TRACE("allocation " + std::to_string(k) + (sticky ? " and every later one" : " alone"));
      PauliSum<2, double> sum = start;
      bool threw = false;
      {
        gpu::ScopedAllocationFault fault(k, sticky);
        try {
          propagate(sum, circuit, options, partition);
        } catch (const gpu::GpuOutOfMemory& e) {
          threw = true;
          expect_names_bytes_and_terms(e.what());
        }
        if (!gpu::AllocationFaults::fired()) break;
      }
      if (threw) {
        EXPECT_TRUE(testing::SumsMatch(sum, start));
      } else {
        EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(sum, expected));
      }
      sum = start;
      propagate(sum, circuit, options, partition);  // the device is usable
      EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(sum, expected));
      ASSERT_LT(k, 10000u);
    }
  }
}

}  // namespace
}  // namespace paulistrings
