// propagate_partitioned beyond the engine-equivalence suite (partitioned_equivalence.test.cc: the seeded
// cases at P = 1, 2 and 4 on CPU and GPU partitions): the memory budget and stop callback, statistics,
// cut rows, orbit routing, fused exports, the distributed entry over an in-process transport (gather /
// local results, mismatched ranks, a failing rank), and bad options. GPU partitions (PartitionGpu*):
// partition r on device r mod the device count, so one GPU runs them all, and ranks with one device
// each; skipped with the reason on a machine without a GPU.

#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/run/propagate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/cpu/bench_cells.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/partition/nccl_exchange.h"
#include "paulistrings/partition/row_buffers.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/engine_cases.h"
#include "paulistrings/testing/gpu.h"
#include "paulistrings/testing/oracle_bridge.h"
#include "paulistrings/testing/sanitizers.h"

namespace paulistrings {
namespace {

/// A Heisenberg ⟨Z⟩ run of a small random circuit on the whole register, used by the tests below.
struct SmallRun {
  Circuit circuit{8};
  PauliSum<1, double> start{8};
  PropagateOptions options;
};

SmallRun small_run(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::RandomChannelOptions kinds;
  kinds.unitaries = false;  // real coefficients
  SmallRun run;
  run.circuit = testing::random_circuit(rng, 8, 30, kinds);
  run.start = testing::random_window_sum<1, double>(rng, 50, 8, 0, 8);
  run.options.direction = Direction::heisenberg;
  run.options.truncation = Truncation::topn(200) & Truncation::coeff(1e-8);
  run.options.threads = 1;
  return run;
}

TEST(PartitionedPropagate, MemoryBudgetAndStopCallbackBehaveAsPropagate) {
  SmallRun run = small_run(5);
  run.options.max_terms = 120;
  std::size_t polled = 0;
  run.options.should_stop = [&polled](std::size_t done) {
    ++polled;
    return done == 20;
  };
  std::vector<std::size_t> traced;
  run.options.on_layer = [&traced](const LayerRecord& r) { traced.push_back(r.terms_out); };
  PauliSum<1, double> expected = run.start;
  const PropagationStats single = propagate(expected, run.circuit, run.options);
  ASSERT_TRUE(single.stopped);
  const std::vector<std::size_t> single_trace = traced;
  traced.clear();
  polled = 0;
  PauliSum<1, double> actual = run.start;
  PartitionOptions partition_options;
  partition_options.partitions = 4;
  const PartitionedPropagation partitioned =
      propagate_partitioned(actual, run.circuit, run.options, partition_options);
  EXPECT_TRUE(partitioned.stats.stopped);
  EXPECT_EQ(partitioned.stats.layers_done, 20u);
  EXPECT_EQ(polled, 20u);  // once per layer, not once per partition
  EXPECT_EQ(traced, single_trace);
  EXPECT_EQ(partitioned.stats.budget_truncations, single.budget_truncations);
  EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected));
}

TEST(PartitionedPropagate, StatisticsCountExportedRowsAndImbalance) {
  SmallRun run = small_run(6);
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  PauliSum<1, double> actual = run.start;
  const PartitionedPropagation result =
      propagate_partitioned(actual, run.circuit, run.options, partition_options);
  const PartitionStats& stats = result.partitions;
  ASSERT_EQ(stats.layers.size(), run.circuit.size());
  std::size_t rows = 0, remote = 0;
  for (const PartitionLayerStats& layer : stats.layers) {
    rows += layer.rows_exported;
    remote += layer.remote;
    // Bytes = the rows plus, per buffer (one per partner and partition), the bucketed layout's header of
    // 3 words and 2^bits + 1 bucket offsets, with the bits agreed by every partition (≥ 7: min_buckets).
    const std::size_t row_bytes = layer.rows_exported * (sizeof(PauliString<1>) + sizeof(double));
    if (!layer.remote) {
      EXPECT_EQ(layer.rows_exported, 0u);
      EXPECT_EQ(layer.bytes_exported, 0u);
    } else {
      ASSERT_GT(layer.bytes_exported, row_bytes);
      const std::size_t buffers = (layer.orbits_routed ? 4 : 2) * layer.partners;  // inputs first, then outputs
      const std::size_t overhead = layer.bytes_exported - row_bytes;
      ASSERT_EQ(overhead % (8 * buffers), 0u);
      const std::size_t offsets = overhead / (8 * buffers) - 4;  // 2^bits buckets
      EXPECT_TRUE(std::has_single_bit(offsets) && offsets >= 128) << offsets;
    }
    EXPECT_GE(layer.imbalance, 1.0);
    EXPECT_LE(layer.imbalance, 2.0);
  }
  EXPECT_EQ(rows, stats.rows_exported);
  EXPECT_EQ(remote, stats.remote_layers);
  EXPECT_GT(stats.remote_layers, 0u);
  EXPECT_GT(stats.rows_exported, 0u);
  EXPECT_EQ(stats.transport, "in-process");
  // The remote-layer count is a property of the circuit and the rows alone.
  EXPECT_EQ(stats.remote_layers,
            count_remote_layers(run.circuit, make_partition_rows(partition_options, 8, 2)));
}

TEST(PartitionedPropagate, AnyPauliSumDispatchesAndMatches) {
  std::mt19937_64 rng(17);
  const Circuit circuit = testing::random_circuit(rng, 6, 20);
  const std::vector<std::pair<std::string, Complex>> terms = testing::random_terms(rng, 6, 30, true);
  AnyPauliSum expected = AnyPauliSum::from_labels(6, terms);
  AnyPauliSum actual = expected;
  PropagateOptions options;
  options.truncation = Truncation::approx_topn(100);
  propagate(expected, circuit, options);
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  propagate_partitioned(actual, circuit, options, partition_options);
  ASSERT_TRUE(expected.is_complex());
  ASSERT_TRUE(actual.is_complex());
  const auto& a = std::get<PauliSum<1, Complex>>(actual.variant());
  const auto& b = std::get<PauliSum<1, Complex>>(expected.variant());
  EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(a, b));
}

TEST(PartitionedPropagate, KickedIsingCutRowsMakeFewerRemoteLayers) {
  const Circuit step = kicked_ising_circuit(1, 0.3);
  ASSERT_EQ(step.size(), 271u);
  // Two blocks split at a bridge row of the heavy-hex lattice: qubits 0…51 and 52…126.
  std::vector<std::size_t> top, bottom;
  for (std::size_t q = 0; q < kHeavyHexQubits; ++q) (q < 52 ? top : bottom).push_back(q);
  const PartitionRows cut = PartitionRows::cut(kHeavyHexQubits, {top, bottom});
  const PartitionRows random = PartitionRows::seeded(1, kHeavyHexQubits, kDefaultPartitionSeed);
  std::size_t crossing = 0;
  for (const auto& [a, b] : heavy_hex_127_edges()) crossing += (a < 52) != (b < 52);
  EXPECT_EQ(count_remote_layers(step, cut), crossing);  // only the rzz layers on cut edges
  EXPECT_LE(crossing, 4u);
  EXPECT_GT(count_remote_layers(step, random), 100u);  // about half of all 271 layers
}

TEST(PartitionedPropagate, KickedIsingTwoStepsWithCutRowsMatchesSingle) {
  const Circuit circuit = kicked_ising_circuit(2, 0.3);
  std::vector<std::size_t> top, bottom;
  for (std::size_t q = 0; q < kHeavyHexQubits; ++q) (q < 52 ? top : bottom).push_back(q);
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(1e-4);
  options.threads = 1;
  auto expected = PauliSum<2, double>::from_labels(kHeavyHexQubits, {{"Z62", 1.0}, {"Z13 Z14", 0.5}});
  auto actual = expected;
  propagate(expected, circuit, options);
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  partition_options.row_policy = PartitionRowPolicy::cut;
  partition_options.cut_blocks = {top, bottom};
  const PartitionedPropagation run = propagate_partitioned(actual, circuit, options, partition_options);
  EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected));
  EXPECT_LE(run.partitions.remote_layers, 8u);
}

// ---- the distributed entry (options.transport), over the in-process transport ----

/// Runs body(rank, transport) on `size` threads sharing one in-process group; returns each rank's
/// exception message ("" when it returned normally).
template <class Body>
std::vector<std::string> on_ranks(int size, Body body) {
  InProcessGroup group(size);
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, group.transport(r));
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = std::string("error: ") + e.what();
        group.abort(r, e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

TEST(PartitionedDistributed, GatherAndLocalResultsOverATransport) {
  const SmallRun run = small_run(7);
  PauliSum<1, double> expected = run.start;
  propagate(expected, run.circuit, run.options);
  std::vector<PauliSum<1, double>> gathered(4, PauliSum<1, double>(8)), local(4, PauliSum<1, double>(8));
  const auto errors = on_ranks(4, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    gathered[static_cast<std::size_t>(rank)] = run.start;
    propagate_partitioned(gathered[static_cast<std::size_t>(rank)], run.circuit, run.options,
                          partition_options);
    partition_options.result = PartitionResult::local;
    local[static_cast<std::size_t>(rank)] = run.start;
    propagate_partitioned(local[static_cast<std::size_t>(rank)], run.circuit, run.options, partition_options);
  });
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  PauliSum<1, double> united(8);
  const PartitionRows rows = PartitionRows::seeded(2, 8, kDefaultPartitionSeed);
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(gathered[static_cast<std::size_t>(r)], expected))
        << "rank " << r;
    for (const PauliString<1>& key : local[static_cast<std::size_t>(r)].keys())
      EXPECT_EQ(rows.part(key), static_cast<std::uint32_t>(r));
    united += local[static_cast<std::size_t>(r)];
  }
  EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(united, expected));
}

TEST(PartitionedDistributed, CpuListsAreForInProcessPartitionsOnly) {
  const SmallRun run = small_run(18);
  const int cpu = allowed_cpus().front();
  const auto errors = on_ranks(2, [&](int, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    partition_options.cpu_lists = {{cpu}, {cpu}};
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : errors) EXPECT_NE(e.find("cpu_lists"), std::string::npos) << e;
}

TEST(PartitionedDistributed, ShareInputIsTheDistributedLoadPath) {
  const SmallRun run = small_run(8);
  PauliSum<1, double> expected = run.start;
  propagate(expected, run.circuit, run.options);
  const PartitionRows rows = PartitionRows::seeded(1, 8, kDefaultPartitionSeed);
  std::vector<PauliSum<1, double>> results(2, PauliSum<1, double>(8));
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    std::vector<PauliSum<1, double>::Term> mine;
    for (const auto& t : run.start.sorted_terms()) {
      if (rows.part(t.key) == static_cast<std::uint32_t>(rank)) mine.push_back(t);
    }
    auto& sum = results[static_cast<std::size_t>(rank)];
    sum = PauliSum<1, double>::from_terms(8, mine);
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    partition_options.input = PartitionInput::share;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  for (const auto& r : results) EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(r, expected));
}

// Scattered input: each rank passes an arbitrary slice of the input (every P-th term, plus one key that
// two ranks both hold, whose coefficients must add); the library routes the terms to their owners.
TEST(PartitionedDistributed, ScatteredInputIsRoutedToTheOwners) {
  const SmallRun run = small_run(18);
  const std::vector<PauliSum<1, double>::Term> all = run.start.sorted_terms();
  ASSERT_GT(all.size(), 8u);
  for (const int ranks : {1, 2, 4}) {
    SCOPED_TRACE(ranks);
    // The whole input: every term once, the first term's coefficient split between ranks 0 and last.
    PauliSum<1, double> expected = run.start;
    propagate(expected, run.circuit, run.options);
    std::vector<PauliSum<1, double>> results(static_cast<std::size_t>(ranks), PauliSum<1, double>(8));
    std::vector<PartitionedPropagation> stats(static_cast<std::size_t>(ranks));
    const auto errors = on_ranks(ranks, [&](int rank, Transport& transport) {
      std::vector<PauliSum<1, double>::Term> mine;
      for (std::size_t i = static_cast<std::size_t>(rank); i < all.size(); i += static_cast<std::size_t>(ranks))
        mine.push_back(all[i]);
      if (ranks > 1 && (rank == 0 || rank == ranks - 1)) {
        if (rank == 0) mine.front().coefficient *= 0.25;
        if (rank == ranks - 1) mine.push_back({all.front().key, 0.75 * all.front().coefficient});
      }
      auto& sum = results[static_cast<std::size_t>(rank)];
      sum = PauliSum<1, double>::from_terms(8, mine);
      PartitionOptions partition_options;
      partition_options.transport = &transport;
      partition_options.input = PartitionInput::scattered;
      stats[static_cast<std::size_t>(rank)] = propagate_partitioned(sum, run.circuit, run.options, partition_options);
    });
    for (const std::string& e : errors) EXPECT_EQ(e, "");
    for (const auto& r : results) EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(r, expected));
    EXPECT_EQ(stats[0].stats.final_terms, expected.size());
  }
  // A rank that scatters while another replicates is a shape mismatch, reported before any routing.
  const auto mixed = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    partition_options.input = rank == 0 ? PartitionInput::scattered : PartitionInput::replicated;
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : mixed) EXPECT_NE(e.find("the ranks disagree on the input mode"), std::string::npos) << e;
}

TEST(PartitionedDistributed, MismatchedRanksFailWithTheSameClearError) {
  const SmallRun run = small_run(9);
  const SmallRun other = small_run(10);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, rank == 1 ? other.circuit : run.circuit, run.options, partition_options);
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("the ranks disagree on the circuit fingerprint"), std::string::npos) << e;
  }
  // Different replicated inputs are caught too.
  const auto input_errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    PauliSum<1, double> sum = rank == 1 ? other.start : run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : input_errors) EXPECT_NE(e.find("input terms"), std::string::npos) << e;
  // Options that change how many exchanges a remote layer makes must match.
  const auto routing_errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    partition_options.route_orbits_from = rank == 1 ? 0 : SIZE_MAX;
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : routing_errors) EXPECT_NE(e.find("route_orbits_from"), std::string::npos) << e;
  const auto formulation_errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    PropagateOptions options = run.options;
    if (rank == 1) options.general_layer = GeneralLayer::sort_merge;
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, options, partition_options);
  });
  for (const std::string& e : formulation_errors) {
    EXPECT_NE(e.find("general-layer formulation"), std::string::npos) << e;
  }
}

TEST(PartitionedDistributed, InvalidInputOnOneRankStopsEveryRank) {
  const SmallRun run = small_run(11);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    PauliSum<1, double> sum = rank == 1 ? PauliSum<1, double>(7) : run.start;  // wrong qubit count
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  EXPECT_NE(errors[1].find("the Pauli sum has 7 qubits"), std::string::npos) << errors[1];
  EXPECT_NE(errors[0].find("partition 1 of 2 failed"), std::string::npos) << errors[0];
}

TEST(PartitionedDistributed, ARankThatThrowsMidRunStopsTheOthersNamingIt) {
  const SmallRun run = small_run(12);
  const auto errors = on_ranks(4, [&](int, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    partition_options.before_layer = [](int partition, std::size_t step) {
      if (partition == 2 && step == 7) throw std::runtime_error("injected fault");
    };
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  EXPECT_NE(errors[2].find("injected fault"), std::string::npos) << errors[2];
  for (int r : {0, 1, 3}) {
    const std::string& e = errors[static_cast<std::size_t>(r)];
    EXPECT_NE(e.find("partition 2 of 4 failed: layer 7"), std::string::npos) << e;
    EXPECT_NE(e.find("injected fault"), std::string::npos) << e;
  }
}

TEST(PartitionedPropagate, InProcessFailureRethrowsTheOriginalException) {
  SmallRun run = small_run(13);
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  partition_options.before_layer = [](int partition, std::size_t step) {
    if (partition == 1 && step == 3) throw std::domain_error("injected");
  };
  PauliSum<1, double> sum = run.start;
  EXPECT_THROW(propagate_partitioned(sum, run.circuit, run.options, partition_options), std::domain_error);
}

TEST(PartitionedPropagate, BadOptionsGiveClearErrors) {
  SmallRun run = small_run(14);
  PauliSum<1, double> sum = run.start;
  PartitionOptions three;
  three.partitions = 3;
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, three); }, {"power of two", "3"}));
  PartitionOptions cut;
  cut.partitions = 2;
  cut.row_policy = PartitionRowPolicy::cut;
  cut.cut_blocks = {{0, 1, 2}, {3, 9}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, cut); }, {"qubit 9", "out of range"}));
  cut.cut_blocks = {{0, 1, 2}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, cut); }, {"2 blocks, got 1"}));
  PartitionOptions two;
  two.partitions = 2;
  PropagateOptions collapse = run.options;
  collapse.truncation = Truncation::collapse_sample(10, 1);
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, collapse, two); }, {"collapse_sample", "2 partitions"}));
  PauliSum<1, double> wrong(5);
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(wrong, run.circuit, run.options, two); }, {"5 qubits", "8"}));
  PartitionOptions excluded;
  excluded.partitions = 2;
  excluded.row_policy = PartitionRowPolicy::seeded_excluding;
  excluded.excluded_qubits = {8};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, excluded); }, {"excluded qubit 8"}));
}

// cpu_lists: every partition's thread runs on its own CPUs while it works, the result is the single
// partition's, and the calling thread (partition 0's) gets its own binding back. On a machine that lets
// this process use one CPU, both lists name it.
TEST(PartitionedPropagate, CpuListsPinEachPartitionAndRestoreTheCaller) {
  SmallRun run = small_run(16);
  const std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const std::vector<std::vector<int>> lists = {{allowed.front()}, {allowed.back()}};
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  partition_options.cpu_lists = lists;
  std::mutex seen_mutex;
  std::map<int, std::vector<int>> seen;  // partition → CPUs its thread may use, at some layer
  partition_options.before_layer = [&](int partition, std::size_t) {
    const std::vector<int> now = allowed_cpus();
    std::lock_guard<std::mutex> lock(seen_mutex);
    if (!seen.count(partition) || seen[partition] != now) seen[partition] = now;
  };
  run.options.threads = 0;  // one engine thread per listed CPU
  PauliSum<1, double> expected = run.start;
  propagate(expected, run.circuit, run.options);
  PauliSum<1, double> actual = run.start;
  propagate_partitioned(actual, run.circuit, run.options, partition_options);
  EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], lists[0]);
  EXPECT_EQ(seen[1], lists[1]);
  EXPECT_EQ(allowed_cpus(), allowed);  // the caller's binding is back
}

TEST(PartitionedPropagate, BadCpuListsGiveClearErrors) {
  SmallRun run = small_run(17);
  PauliSum<1, double> sum = run.start;
  const int cpu = allowed_cpus().front();
  PartitionOptions options;
  options.partitions = 2;
  options.cpu_lists = {{cpu}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, options); }, {"one CPU list per partition (2)", "got 1"}));
  options.cpu_lists = {{cpu}, {}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, options); }, {"partition 1", "empty"}));
  options.cpu_lists = {{cpu}, {100000}};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, options); }, {"CPU 100000", "partition 1"}));
  EXPECT_EQ(sum, run.start);  // refused before anything ran
}

TEST(PartitionedPropagate, OnePartitionKeepsCollapseSampleBitwise) {
  SmallRun run = small_run(15);
  run.options.truncation = Truncation::collapse_sample(40, 99);
  PauliSum<1, double> expected = run.start;
  propagate(expected, run.circuit, run.options);
  run.options.truncation = Truncation::collapse_sample(40, 99);
  PauliSum<1, double> actual = run.start;
  propagate_partitioned(actual, run.circuit, run.options, PartitionOptions{});
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual.keys()[i], expected.keys()[i]);
    EXPECT_EQ(actual.coefficients()[i], expected.coefficients()[i]);
  }
}

// ---- GPU partitions ----

/// A transport that hides that its ranks share the process: GPU partitions then exchange through host
/// memory, as over MPI.
class HostStaged final : public Transport {
 public:
  explicit HostStaged(Transport& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string kind() const override { return inner_.kind(); }
  std::vector<std::byte> exchange(int partner, std::span<const std::byte> send) override {
    return inner_.exchange(partner, send);
  }
  void all_reduce_sum(std::span<std::uint64_t> values) override { inner_.all_reduce_sum(values); }
  void all_reduce_max(std::span<std::uint64_t> values) override { inner_.all_reduce_max(values); }
  void all_reduce_sum(std::span<double> values) override { inner_.all_reduce_sum(values); }

 private:
  Transport& inner_;
};

TEST(PartitionGpu, RanksWithOneDeviceEachGatherTheCpuResult) {
  SKIP_WITHOUT_GPU();
  const SmallRun run = small_run(11);
  PauliSum<1, double> expected = run.start;
  propagate(expected, run.circuit, run.options);
  // Device to device (ranks of one process), then through host memory (as between MPI ranks).
  for (int size : {2, 4, -2, -4}) {
    const bool staged = size < 0;
    size = std::abs(size);
    std::vector<PauliSum<1, double>> gathered(static_cast<std::size_t>(size), PauliSum<1, double>(8));
    std::vector<PartitionedPropagation> results(static_cast<std::size_t>(size));
    const auto errors = on_ranks(size, [&](int rank, Transport& transport) {
      HostStaged host_staged(transport);
      PartitionOptions partition_options;
      partition_options.transport = staged ? static_cast<Transport*>(&host_staged) : &transport;
      partition_options.devices = {rank % gpu::device_count()};
      auto& sum = gathered[static_cast<std::size_t>(rank)];
      sum = run.start;
      results[static_cast<std::size_t>(rank)] = propagate_partitioned(sum, run.circuit, run.options, partition_options);
    });
    for (int r = 0; r < size; ++r) {
      EXPECT_EQ(errors[static_cast<std::size_t>(r)], "");
      EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(gathered[static_cast<std::size_t>(r)], expected))
          << size << " ranks, rank " << r << (staged ? ", host-staged" : ", device to device");
      EXPECT_GT(results[static_cast<std::size_t>(r)].partitions.rows_exported, 0u);
    }
  }
}

TEST(PartitionGpu, RanksOnTwoGpusSwapRowsOverNccl) {
  SKIP_WITHOUT_GPU();
  if (!nccl_available()) GTEST_SKIP() << "this build has no NCCL";
  if (gpu::device_count() < 2) GTEST_SKIP() << "NCCL needs one GPU per rank: this machine has one";
  SmallRun run = small_run(14);
  // A random sum (both ranks send and receive), then one string: a rank starts empty, so early remote
  // layers send one way only — the swap must still run on the rank that receives nothing.
  for (const bool one_string : {false, true}) {
    SCOPED_TRACE(one_string ? "one string" : "random sum");
    if (one_string) run.start = PauliSum<1, double>::from_labels(8, {{"Z3", 1.0}});
    PauliSum<1, double> expected = run.start;
    propagate(expected, run.circuit, run.options);
    std::vector<PauliSum<1, double>> gathered(2, PauliSum<1, double>(8));
    std::vector<PartitionedPropagation> results(2);
    const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
      HostStaged separate(transport);  // as if the ranks were processes
      PartitionOptions partition_options;
      partition_options.transport = &separate;
      partition_options.devices = {rank};
      partition_options.use_nccl = true;
      auto& sum = gathered[static_cast<std::size_t>(rank)];
      sum = run.start;
      results[static_cast<std::size_t>(rank)] = propagate_partitioned(sum, run.circuit, run.options, partition_options);
    });
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(errors[r], "");
      EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(gathered[r], expected)) << "rank " << r;
      EXPECT_EQ(results[r].partitions.transport, "in-process+nccl");
      EXPECT_GT(results[r].partitions.rows_exported, 0u);
    }
  }
}

TEST(PartitionGpu, RanksMustAgreeOnNccl) {
  // The shape check runs before any engine or communicator exists: this needs no GPU.
  const SmallRun run = small_run(15);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    partition_options.use_nccl = rank == 0;
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("the ranks disagree on the NCCL exchange (use_nccl)"), std::string::npos) << e;
  }
}

/// Real W = 1 sums on 10 qubits under coeff(1e-4), four partitions, with and without a should_stop poll
/// (the Python binding always sets one): the per-term test drops terms after the exchange. The seeded
/// cases above give W = 1 real sums only policies that drop nothing there; this is the Python test that
/// crashed on the H200 (test_device_partitions_truncation_match_cpu[coeff]) in C++ form.
void check_w1_coeff_partitions(const std::vector<int>& devices) {
  const std::uint64_t seeds = testing::kUnderSanitizers ? 2 : 6;
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    std::mt19937_64 rng(seed);
    const Circuit circuit = testing::random_circuit(rng, 10, 60);
    const auto start = testing::random_window_sum<1, double>(rng, 8, 10, 0, 10);
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = Truncation::coeff(1e-4);
    PauliSum<1, double> expected = start;
    propagate(expected, circuit, options);
    // threads 4: one engine thread per partition; 0: every core shared out (the binding's default).
    for (const int threads : {4, 0}) {
      for (const bool poll : {false, true}) {
        PropagateOptions polled = options;
        polled.threads = threads;
        polled.keep_layer_records = poll;
        if (poll) polled.should_stop = [](std::size_t) { return false; };
        PartitionOptions partition_options;
        partition_options.partitions = 4;
        partition_options.devices = devices;
        PauliSum<1, double> actual = start;
        propagate_partitioned(actual, circuit, polled, partition_options);
        actual.check_invariants();
        ASSERT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected))
            << "seed " << seed << " threads " << threads << " poll " << poll;
      }
    }
  }
}

TEST(PartitionedPropagate, RealW1CoeffDropsAfterTheExchangeMatchTheSingleEngine) { check_w1_coeff_partitions({}); }

TEST(PartitionGpu, RealW1CoeffDropsAfterTheExchangeMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  check_w1_coeff_partitions({0, 0, 0, 0});
}

// A Pauli rotation on 1 + attempt % 3 distinct qubits of window .. window + 7, angle 0.3 + 0.17·attempt.
Channel random_window_rotation(std::mt19937_64& rng, std::size_t window, int attempt) {
  std::uniform_int_distribution<std::size_t> qubit(0, 7);
  std::uniform_int_distribution<int> letter(0, 2);
  std::string pauli;
  std::vector<Qubit> qubits;
  while (qubits.size() < static_cast<std::size_t>(1 + attempt % 3)) {
    const Qubit q = window + qubit(rng);
    if (std::find(qubits.begin(), qubits.end(), q) != qubits.end()) continue;
    qubits.push_back(q);
    pauli += "XYZ"[letter(rng)];
  }
  return Channel::pauli_rotation(pauli, qubits, 0.3 + 0.17 * attempt);
}

// A random real transfer matrix (half its entries zero) on one (attempt % 6 == 2) or two distinct qubits
// of window .. window + 7: a general table of many deltas.
Channel random_window_transfer_matrix(std::mt19937_64& rng, std::size_t window, int attempt) {
  std::uniform_int_distribution<std::size_t> qubit(0, 7);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution present(0.5);
  std::vector<Qubit> qubits{window + qubit(rng)};
  while (attempt % 6 != 2 && qubits.size() < 2) {
    const Qubit q = window + qubit(rng);
    if (q != qubits[0]) qubits.push_back(q);
  }
  const std::size_t dim = qubits.size() == 1 ? 4 : 16;
  std::vector<double> ptm(dim * dim);
  for (double& entry : ptm) entry = present(rng) ? normal(rng) : 0.0;
  return Channel::transfer_matrix(qubits, ptm);
}

// The terms of `all` in partition `self`.
template <int W, Coefficient C>
PauliSum<W, C> share_of(const PauliSum<W, C>& all, const PartitionRows& rows, std::uint32_t self) {
  std::vector<typename PauliSum<W, C>::Term> mine;
  for (const auto& term : all.sorted_terms()) {
    if (rows.part(term.key) == self) mine.push_back(term);
  }
  return PauliSum<W, C>::from_terms(all.num_qubits(), mine);
}

// The GPU engine fuses a rotation layer whose generator crosses partitions with its export
// (DeviceSum::apply_and_export): the same rows leave and the same terms stay, bit for bit, as with the
// layer then the export. With `foreign_holes`, each engine first exported a few of other partitions'
// terms (about 1 in 16 of a partner's, too few to compact), so holes with other partitions' keys sit among the orbits —
// as after a layer run in two steps: a fused join must take the outputs' deltas from a live member and
// send a hole's own output to its owner.
template <int W, Coefficient C>
std::vector<std::pair<PauliString<W>, C>> exported_terms(std::span<const std::byte> buffer) {
  const std::size_t n = buffer.size() / (sizeof(PauliString<W>) + sizeof(C));
  std::vector<std::pair<PauliString<W>, C>> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(&out[i].first, buffer.data() + i * sizeof(PauliString<W>), sizeof(PauliString<W>));
    std::memcpy(&out[i].second, buffer.data() + n * sizeof(PauliString<W>) + i * sizeof(C), sizeof(C));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

template <int W, Coefficient C>
std::vector<std::pair<PauliString<W>, C>> stored_terms(const gpu::DeviceSum<W, C>& sum) {
  std::vector<std::pair<PauliString<W>, C>> out;
  for (const auto& term : sum.download().sorted_terms()) out.emplace_back(term.key, term.coefficient);
  return out;
}

// A remote layer's channel for the fused-export tests: random_channel (Cliffords, rotations, unitaries
// for complex sums, noise), a random rotation, or a random real transfer matrix, by attempt % 3.
template <Coefficient C>
Channel random_remote_candidate(std::mt19937_64& rng, std::size_t window, int attempt) {
  testing::RandomChannelOptions kinds;
  if constexpr (!std::same_as<C, Complex>) kinds.unitaries = false;  // complex tables need complex sums
  return attempt % 3 == 0   ? testing::random_channel(rng, 8, kinds, window)
         : attempt % 3 == 1 ? random_window_rotation(rng, window, attempt)
                            : random_window_transfer_matrix(rng, window, attempt);
}

template <int W, Coefficient C>
void check_fused_remote_layers(std::uint64_t seed, int bits, bool foreign_holes = false) {
  std::mt19937_64 rng(seed);
  constexpr std::size_t kQubits = 64 * W;
  const std::size_t window = W == 1 ? 0 : kQubits / 2 - 4;  // straddles a word boundary for W > 1
  const auto all = testing::random_window_sum<W, C>(rng, 20000, kQubits, window, 8);
  const PartitionRows rows = PartitionRows::seeded(bits, kQubits, seed);
  const std::vector<PauliString<W>> row_keys = rows.rows_as<W>();
  int rotations = 0, general = 0;
  for (int attempt = 0; attempt < 400 && rotations + general < 12; ++attempt) {
    const Channel channel = random_remote_candidate<C>(rng, window, attempt);
    if (!std::same_as<C, Complex> && channel.has_complex_transfer()) continue;
    const PreparedChannel<W> table = prepare_channel<W>(channel, Direction::heisenberg);
    const std::vector<std::uint32_t> offsets = partition_detail::remote_offsets(table, rows);
    if (offsets.empty() || !gpu::DeviceSum<W, C>::fuses_with_export(table, row_keys, offsets)) continue;
    (table.form == PreparedChannel<W>::Form::rotation ? rotations : general) += 1;
    for (std::uint32_t self = 0; self < rows.count(); ++self) {
      auto share = share_of(all, rows, self);
      std::vector<std::uint32_t> every_partner;
      if (foreign_holes) {
        auto terms = share.sorted_terms();
        const auto theirs = all.sorted_terms();
        const std::size_t step = 16 * (rows.count() - 1);  // holes stay under 1/8 of the terms: no compaction
        for (std::size_t i = 0; i < theirs.size(); i += step) {
          if (rows.part(theirs[i].key) != self) terms.push_back(theirs[i]);
        }
        share = PauliSum<W, C>::from_terms(kQubits, terms);
        for (std::uint32_t o = 1; o < rows.count(); ++o) every_partner.push_back(o);
      }
      gpu::DeviceSum<W, C> two_steps(share, 0), one_step(share, 0);
      if (foreign_holes) {
        two_steps.export_partition_rows(row_keys, self, every_partner);
        one_step.export_partition_rows(row_keys, self, every_partner);
      }
      two_steps.apply_layer(table, Truncation());
      const auto expected = two_steps.export_partition_rows(row_keys, self, offsets);
      const auto actual = one_step.apply_and_export(table, row_keys, self, offsets);
      ASSERT_EQ(actual.size(), offsets.size());
      ASSERT_EQ(expected.size(), offsets.size());
      for (std::size_t k = 0; k < offsets.size(); ++k) {
        EXPECT_EQ((exported_terms<W, C>(actual[k])), (exported_terms<W, C>(expected[k])))
            << channel.description() << ", partition " << self << ", partner offset " << offsets[k];
      }
      EXPECT_EQ(one_step.size(), two_steps.size());
      EXPECT_EQ((stored_terms<W, C>(one_step)), (stored_terms<W, C>(two_steps)))
          << channel.description() << ", partition " << self;
    }
  }
  EXPECT_GE(rotations, 3);
  EXPECT_GE(general, 3);
}

// The CPU engine fuses every remote layer with its export (CpuEngine::rotate_out for a rotation whose
// generator crosses, CpuEngine::apply_out for any other table): the same terms stay and the same rows
// leave as with the layer then the export, and the rows come laid out by the bucket of their own key
// (the receiver merges them bucket by bucket without hashing). `bits` partition bits (2 bits: a
// two-qubit table can send rows to up to three partners at once); channels drawn from random
// rotations, random_channel (Cliffords, rotations, unitaries, noise) and random transfer matrices on an
// 8-qubit window.
template <int W, Coefficient C>
void check_cpu_fused_remote_layers(std::uint64_t seed, int threads, int bits, const CpuEngineOptions& base) {
  using partition_detail::BucketedView;
  using partition_detail::CpuLocalEngine;
  std::mt19937_64 rng(seed);
  constexpr std::size_t kQubits = 64 * W;
  const std::size_t window = W == 1 ? 0 : kQubits / 2 - 4;
  const auto all =
      testing::random_window_sum<W, C>(rng, testing::kUnderSanitizers ? 10000 : 30000, kQubits, window, 8);
  const PartitionRows rows = PartitionRows::seeded(bits, kQubits, seed);
  CpuEngineOptions options = base;
  options.threads = threads;
  options.parallel_threshold = 1000;
  const auto rows_of = [](std::span<const std::byte> buffer) {
    const BucketedView<W, C> view(buffer);
    const BucketedRows& run = view.rows();
    std::vector<std::pair<PauliString<W>, C>> out;
    const BucketHash<W> hash;
    for (std::size_t b = 0; b < (std::size_t{1} << run.bits); ++b) {
      for (std::uint64_t i = run.offsets[b]; i < run.offsets[b + 1]; ++i) {
        std::pair<PauliString<W>, C> row;
        std::memcpy(&row.first, run.keys + i * sizeof(PauliString<W>), sizeof(PauliString<W>));
        std::memcpy(&row.second, run.coefficients + i * sizeof(C), sizeof(C));
        EXPECT_EQ(hash(row.first, run.bits), b) << "a row outside its bucket";
        out.push_back(row);
      }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  };
  int fused = 0, rotations = 0, general = 0, several = 0;
  for (int attempt = 0; attempt < 400 && fused < 18; ++attempt) {
    const Channel channel = random_remote_candidate<C>(rng, window, attempt);
    if (!std::same_as<C, Complex> && channel.has_complex_transfer()) continue;
    const PreparedChannel<W> table = prepare_channel<W>(channel, Direction::heisenberg);
    const std::vector<std::uint32_t> offsets = partition_detail::remote_offsets(table, rows);
    if (offsets.empty()) continue;  // a local layer: nothing to fuse
    ++fused;
    const bool is_rotation = table.form == PreparedChannel<W>::Form::rotation;
    rotations += is_rotation ? 1 : 0;
    general += !is_rotation && table.table_class == TableClass::general ? 1 : 0;
    several += offsets.size() > 1 ? 1 : 0;
    for (std::uint32_t self = 0; self < rows.count(); ++self) {
      const auto share = share_of(all, rows, self);
      CpuLocalEngine<W, C> two_steps(share, options), one_step(share, options);
      ASSERT_TRUE(one_step.fuses_with_export(table, rows, offsets)) << channel.description();
      two_steps.apply_layer(table, Truncation());
      const auto expected = two_steps.export_rows(rows, self, offsets);
      const auto actual = one_step.apply_and_export(table, rows, self, offsets);
      ASSERT_EQ(actual.size(), offsets.size());
      for (std::size_t k = 0; k < offsets.size(); ++k) {
        EXPECT_EQ(actual[k].rows, expected[k].rows) << channel.description() << ", partition " << self;
        EXPECT_EQ(rows_of(actual[k].bytes), rows_of(expected[k].bytes))
            << channel.description() << ", partition " << self << ", partner offset " << offsets[k];
      }
      PauliSum<W, C> left(kQubits), right(kQubits);
      one_step.export_to(left);
      two_steps.export_to(right);
      EXPECT_EQ(left.size(), one_step.size());
      EXPECT_TRUE(left == right) << channel.description() << ", partition " << self;
    }
  }
  EXPECT_GE(fused, 8);
  EXPECT_GE(rotations, 2);
  EXPECT_GE(general, 2);
  if (bits > 1) {
    EXPECT_GE(several, 1);
  }
}

TEST(PartitionedPropagate, RemoteLayersFusedWithTheirExportMatchTheTwoSteps) {
  const CpuEngineOptions defaults;
  check_cpu_fused_remote_layers<2, double>(5, 1, 1, defaults);
  check_cpu_fused_remote_layers<2, double>(8, 2, 2, defaults);
  check_cpu_fused_remote_layers<1, Complex>(6, 2, 1, defaults);
  check_cpu_fused_remote_layers<1, Complex>(9, 1, 2, defaults);
  check_cpu_fused_remote_layers<4, double>(7, 1, 1, defaults);
  CpuEngineOptions orbit_rotations;  // rotations through the coset path's orbits, routed there
  orbit_rotations.in_place_rotations = false;
  check_cpu_fused_remote_layers<2, double>(10, 2, 2, orbit_rotations);
}

// Remote two-qubit unitaries with every orbit moved to one partition first (route_orbits_from = 0): each
// output is computed once, from its whole orbit, in the single engine's order, and received outputs are
// appended, never summed — so every coefficient is the single engine's, bit for bit (local layers are
// too), and so is every truncation decision. With the routing off (one exchange of half-orbit outputs,
// summed by the receiver) the same terms to rounding. The statistics count the routed layers, whose
// exchanges move inputs and outputs (two buffers per partner and partition each).
TEST(PartitionedPropagate, OrbitsRoutedToOnePartitionGiveTheSingleEnginesBits) {
  std::mt19937_64 rng(17);
  constexpr std::size_t kQubits = 8;
  Circuit circuit(kQubits);
  for (int layer = 0; layer < 12; ++layer) {
    const std::size_t a = rng() % kQubits;
    std::size_t b = rng() % (kQubits - 1);
    if (b >= a) ++b;
    circuit.append(Channel::unitary_2q(a, b, testing::random_unitary(rng, 4)));
  }
  const auto start = testing::random_window_sum<1, Complex>(rng, 100, kQubits, 0, kQubits);
  for (const Truncation& truncation : {Truncation(), Truncation::coeff(1e-2), Truncation::topn(2000)}) {
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = truncation;
    options.threads = 2;
    options.parallel_threshold = 0;  // the engines' parallel paths, the exchange hooks included
    PauliSum<1, Complex> expected = start;
    propagate(expected, circuit, options);
    ASSERT_GT(expected.size(), 1000u);
    for (std::size_t partitions : {2, 4}) {
      for (const std::size_t from : {std::size_t{0}, SIZE_MAX}) {
        SCOPED_TRACE(truncation.description() + ", P = " + std::to_string(partitions) +
                     (from == 0 ? ", orbits routed" : ", half orbits summed"));
        PartitionOptions partition_options;
        partition_options.partitions = partitions;
        partition_options.route_orbits_from = from;
        PauliSum<1, Complex> actual = start;
        const PartitionedPropagation run = propagate_partitioned(actual, circuit, options, partition_options);
        actual.check_invariants();
        const PartitionStats& stats = run.partitions;
        EXPECT_GT(stats.remote_layers, 4u);
        if (from == 0) {
          EXPECT_EQ(stats.orbit_routed_layers, stats.remote_layers);
          const auto left = actual.sorted_terms(), right = expected.sorted_terms();
          ASSERT_EQ(left.size(), right.size());
          for (std::size_t i = 0; i < left.size(); ++i) {
            ASSERT_EQ(left[i].key, right[i].key);
            ASSERT_EQ(left[i].coefficient, right[i].coefficient);
          }
        } else {
          EXPECT_EQ(stats.orbit_routed_layers, 0u);
          EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected));
        }
        for (const PartitionLayerStats& layer : stats.layers) {
          EXPECT_EQ(layer.orbits_routed, layer.remote && from == 0);
          if (!layer.remote) continue;
          const std::size_t buffers = (layer.orbits_routed ? 4 : 2) * layer.partners * partitions / 2;
          EXPECT_GE(layer.bytes_exported, buffers * 8 * (4 + 128) + layer.rows_exported * (8 + 16));
        }
      }
    }
  }
}

// The default plan choice: a remote dense table (Haar two-qubit unitaries, ~16 outputs per input) routes
// its orbits from the layer on which the largest partition holds route_orbits_from terms; a sparse one
// (XX·YY rotations as one unitary: at most 4 outputs per input) never does. Results as the single engine.
TEST(PartitionedPropagate, OrbitRoutingIsChosenBySizeAndDensity) {
  std::mt19937_64 rng(23);
  constexpr std::size_t kQubits = 8;
  constexpr std::size_t kFrom = 2000;
  Circuit dense(kQubits), sparse(kQubits);
  for (int layer = 0; layer < 10; ++layer) {
    const std::size_t a = rng() % kQubits;
    std::size_t b = rng() % (kQubits - 1);
    if (b >= a) ++b;
    dense.append(Channel::unitary_2q(a, b, testing::random_unitary(rng, 4)));
    sparse.append(Channel::unitary_2q(a, b, bench::sparse_two_qubit_unitary(0.3 + 0.1 * layer, 0.7)));
  }
  const auto start = testing::random_window_sum<1, Complex>(rng, 100, kQubits, 0, kQubits);
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.threads = 2;
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  partition_options.route_orbits_from = kFrom;
  for (const bool is_dense : {true, false}) {
    SCOPED_TRACE(is_dense ? "dense" : "sparse");
    const Circuit& circuit = is_dense ? dense : sparse;
    PauliSum<1, Complex> expected = start;
    propagate(expected, circuit, options);
    PauliSum<1, Complex> actual = start;
    const PartitionedPropagation run = propagate_partitioned(actual, circuit, options, partition_options);
    EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected));
    const std::vector<PartitionLayerStats>& layers = run.partitions.layers;
    ASSERT_EQ(layers.size(), circuit.size());
    std::size_t largest_before = start.size();  // an upper bound for layer 0 (100 < kFrom)
    for (std::size_t k = 0; k < layers.size(); ++k) {
      EXPECT_EQ(layers[k].orbits_routed, is_dense && layers[k].remote && largest_before >= kFrom) << "layer " << k;
      largest_before = layers[k].max_terms;
    }
    EXPECT_GT(run.partitions.remote_layers, 3u);
    if (is_dense) {
      EXPECT_GT(run.partitions.orbit_routed_layers, 0u);
      EXPECT_LT(run.partitions.orbit_routed_layers, run.partitions.remote_layers);  // the first layers are small
    } else {
      EXPECT_EQ(run.partitions.orbit_routed_layers, 0u);
    }
  }
}

TEST(PartitionedPropagate, SortMergeGeneralLayersAreNotFused) {
  CpuEngineOptions options;
  options.general_layer = GeneralLayer::sort_merge;
  const PartitionRows rows = PartitionRows::seeded(1, 64, 3);
  std::mt19937_64 rng(3);
  const auto sum = testing::random_window_sum<1, Complex>(rng, 100, 64, 0, 8);
  partition_detail::CpuLocalEngine<1, Complex> engine(sum, options);
  std::vector<Complex> u = testing::random_unitary(rng, 4);
  const auto table = prepare_channel<1>(Channel::unitary_2q(0, 1, u), Direction::heisenberg);
  ASSERT_EQ(table.table_class, TableClass::general);
  const std::vector<std::uint32_t> offsets{1};
  EXPECT_FALSE(engine.fuses_with_export(table, rows, offsets));
  const auto rotation = prepare_channel<1>(Channel::rzz(0.4, 0, 1), Direction::heisenberg);
  EXPECT_TRUE(engine.fuses_with_export(rotation, rows, offsets));
}

TEST(PartitionGpu, RemoteLayersFusedWithTheirExportMatchTheTwoSteps) {
  SKIP_WITHOUT_GPU();
  check_fused_remote_layers<2, double>(5, 1);
  check_fused_remote_layers<1, Complex>(6, 1);
  check_fused_remote_layers<1, Complex>(9, 2);
  check_fused_remote_layers<4, double>(7, 2);
  check_fused_remote_layers<2, double>(11, 1, true);
  check_fused_remote_layers<1, Complex>(12, 2, true);
}

// GPU partitions: remote two-qubit unitaries with every orbit moved to one partition first
// (route_orbits_from = 0) and remote permutations (CNOT, H) tested before they leave, both appended by
// the receiver — each output computed once, as the single GPU engine computes it, so the result has its
// bits, truncation decisions included. With the routing off, the unitaries' half-orbit outputs are
// summed by the receiver: the same terms to rounding. Device to device (partitions of one process) and
// through host memory (ranks, as over MPI).
TEST(PartitionGpu, OrbitsRoutedOnGpuPartitionsGiveTheSingleGpuEnginesBits) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(29);
  constexpr std::size_t kQubits = 8;
  Circuit circuit(kQubits);
  std::size_t unitaries = 0;
  for (int layer = 0; layer < 16; ++layer) {
    const std::size_t a = rng() % kQubits;
    std::size_t b = rng() % (kQubits - 1);
    if (b >= a) ++b;
    if (layer % 4 == 3) {
      circuit.append(Channel::cnot(a, b));
    } else if (layer % 7 == 5) {
      circuit.append(Channel::h(a));
    } else {
      circuit.append(Channel::unitary_2q(a, b, testing::random_unitary(rng, 4)));
      ++unitaries;
    }
  }
  const auto start = testing::random_window_sum<1, Complex>(rng, 100, kQubits, 0, kQubits);
  const auto same_bits = [](const PauliSum<1, Complex>& actual, const PauliSum<1, Complex>& expected) {
    const auto left = actual.sorted_terms(), right = expected.sorted_terms();
    ASSERT_EQ(left.size(), right.size());
    for (std::size_t i = 0; i < left.size(); ++i) {
      ASSERT_EQ(left[i].key, right[i].key);
      ASSERT_EQ(left[i].coefficient, right[i].coefficient);
    }
  };
  for (const Truncation& truncation : {Truncation(), Truncation::coeff(1e-2), Truncation::topn(2000)}) {
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = truncation;
    options.device = 0;
    PauliSum<1, Complex> expected = start;
    propagate(expected, circuit, options);
    ASSERT_GT(expected.size(), 1000u);
    options.device = -1;  // the partitions name their devices
    for (const std::size_t partitions : {2, 4}) {
      for (const std::size_t from : {std::size_t{0}, SIZE_MAX}) {
        for (const bool ranks : {false, true}) {
          SCOPED_TRACE(truncation.description() + ", P = " + std::to_string(partitions) +
                       (from == 0 ? ", orbits routed" : ", half orbits summed") +
                       (ranks ? ", host-staged ranks" : ", partitions of one process"));
          PartitionOptions partition_options;
          partition_options.route_orbits_from = from;
          PauliSum<1, Complex> actual = start;
          PartitionedPropagation run;
          if (ranks) {
            const auto size = static_cast<int>(partitions);
            std::vector<PauliSum<1, Complex>> gathered(partitions, start);
            std::vector<PartitionedPropagation> results(partitions);
            const auto errors = on_ranks(size, [&](int rank, Transport& transport) {
              HostStaged staged(transport);
              PartitionOptions mine = partition_options;
              mine.transport = &staged;
              mine.devices = {rank % gpu::device_count()};
              const auto r = static_cast<std::size_t>(rank);
              results[r] = propagate_partitioned(gathered[r], circuit, options, mine);
            });
            for (const std::string& e : errors) ASSERT_EQ(e, "");
            for (std::size_t r = 1; r < partitions; ++r) same_bits(gathered[r], gathered[0]);
            actual = gathered[0];
            run = results[0];
          } else {
            partition_options.partitions = partitions;
            for (std::size_t r = 0; r < partitions; ++r) {
              partition_options.devices.push_back(static_cast<int>(r) % gpu::device_count());
            }
            run = propagate_partitioned(actual, circuit, options, partition_options);
          }
          actual.check_invariants();
          const PartitionStats& stats = run.partitions;
          EXPECT_GT(stats.remote_layers, 4u);
          if (from == 0) {
            EXPECT_GT(stats.orbit_routed_layers, 2u);
            EXPECT_LE(stats.orbit_routed_layers, unitaries);
            same_bits(actual, expected);
          } else {
            EXPECT_EQ(stats.orbit_routed_layers, 0u);
            EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected));
          }
        }
      }
    }
  }
}

TEST(PartitionGpu, KickedIsingOnTwoGpuPartitionsMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const Circuit circuit = kicked_ising_circuit(2, 0.3);
  std::vector<std::size_t> top, bottom;
  for (std::size_t q = 0; q < kHeavyHexQubits; ++q) (q < 52 ? top : bottom).push_back(q);
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(1e-5);
  const auto start = PauliSum<2, double>::from_labels(kHeavyHexQubits, {{"Z62", 1.0}, {"Z13 Z14", 0.5}});
  auto expected = start;
  propagate(expected, circuit, options);
  for (PartitionRowPolicy policy : {PartitionRowPolicy::seeded, PartitionRowPolicy::cut}) {
    auto actual = start;
    PartitionOptions partition_options;
    partition_options.devices = {0, 1 % gpu::device_count()};
    partition_options.row_policy = policy;
    if (policy == PartitionRowPolicy::cut) partition_options.cut_blocks = {top, bottom};
    const PartitionedPropagation run = propagate_partitioned(actual, circuit, options, partition_options);
    EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(actual, expected)) << run.partitions.rows;
    EXPECT_EQ(run.stats.final_terms, expected.size());
    EXPECT_GT(run.partitions.remote_layers, 0u);
  }
}

TEST(PartitionGpu, CpuAndGpuRanksCannotBeMixed) {
  // The shape check runs before any engine exists: this needs no GPU.
  const SmallRun run = small_run(12);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    PartitionOptions partition_options;
    partition_options.transport = &transport;
    if (rank == 1) partition_options.devices = {0};
    PauliSum<1, double> sum = run.start;
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("the ranks disagree on the engine (CPU or GPU)"), std::string::npos) << e;
  }
}

TEST(PartitionGpu, BadDeviceListsGiveClearErrors) {
  const SmallRun run = small_run(13);
  PauliSum<1, double> sum = run.start;
  PartitionOptions partition_options;
  partition_options.partitions = 2;
  partition_options.devices = {0, 0, 0, 0};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, partition_options); },
      {"partitions = 2 but 4 devices are listed", "the device list sets the partition count"}));
  partition_options.partitions = 1;
  partition_options.devices = {0, 0, 0};
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [&] { propagate_partitioned(sum, run.circuit, run.options, partition_options); }, {"3"}));
  // A device that does not exist (or no GPU at all): the partition's own GpuUnavailable, sum untouched.
  partition_options.devices = {0, 64};
  try {
    propagate_partitioned(sum, run.circuit, run.options, partition_options);
    ADD_FAILURE() << "device 64 did not throw";
  } catch (const gpu::GpuUnavailable& e) {
    const std::string message = e.what();
    EXPECT_TRUE(gpu::device_count() == 0 ? message == gpu::unavailable_reason()
                                         : message.find("device 64 does not exist") != std::string::npos)
        << message;
  }
  EXPECT_TRUE(testing::SumsMatch(sum, run.start));
  // Distributed: one device per rank, or one for every rank.
  const auto errors = on_ranks(2, [&](int, Transport& transport) {
    PartitionOptions options;
    options.transport = &transport;
    options.devices = {0, 0, 0};
    PauliSum<1, double> mine = run.start;
    propagate_partitioned(mine, run.circuit, run.options, options);
  });
  EXPECT_NE(errors[0].find("devices: give one device (this rank's) or one per rank (2), not 3"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("partition 0 of 2 failed"), std::string::npos) << errors[1];
}

}  // namespace
}  // namespace paulistrings
