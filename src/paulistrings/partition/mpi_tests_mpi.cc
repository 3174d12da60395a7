// MPI tests of the partitioned propagation (run by ctest under mpirun -np 1, 2, 4): random circuits
// against the single-process result on every rank, gather and local results, mismatched ranks, a rank
// that throws, and (with --exit-rank R) a rank that dies mid-run. Its own main initializes MPI at
// MPI_THREAD_SERIALIZED, as an application must.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include "paulistrings/partition/mpi_transport.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

Truncation make_truncation(int which) {
  switch (which % 6) {
    case 0:
      return Truncation();
    case 1:
      return Truncation::coeff(1e-3);
    case 2:
      return Truncation::topn(200);
    case 3:
      return Truncation::approx_topn(200);
    case 4:
      return Truncation::weight(4) & Truncation::coeff(1e-5);
    default:
      return Truncation::topn(60) & Truncation::coeff(1e-6);
  }
}


struct Case {
  Circuit circuit{8};
  PauliSum<1, Complex> start{8};
  PropagateOptions options;
};

Case make_case(int seed) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 6151 + 5);
  Case c;
  const std::size_t active = 6 + static_cast<std::size_t>(seed) % 3;
  c.circuit = testing::random_circuit(rng, active, 10 + static_cast<std::size_t>(seed) % 15, {}, 8);
  const auto terms = testing::random_terms(rng, active, 1 + static_cast<std::size_t>(seed) % 200, true);
  std::vector<PauliSum<1, Complex>::Term> typed;
  for (const auto& [label, value] : terms)
    typed.push_back({PauliString<1>::from_label(label, active), value});
  c.start = PauliSum<1, Complex>::from_terms(8, typed);
  c.options.direction = seed % 2 ? Direction::heisenberg : Direction::forward;
  c.options.truncation = make_truncation(seed);
  c.options.threads = 1;
  c.options.min_buckets = 4;
  c.options.target_bucket_len = 16;
  return c;
}

TEST(PartitionMpi, RandomCircuitsMatchTheSingleProcessResult) {
  MpiTransport transport(MPI_COMM_WORLD);
  for (int seed = 0; seed < 40; ++seed) {
    const Case c = make_case(seed);
    PauliSum<1, Complex> expected = c.start;
    const PropagationStats single = propagate(expected, c.circuit, c.options);
    PartitionOptions partition;
    partition.transport = &transport;
    partition.row_seed = static_cast<std::uint64_t>(seed);
    // Odd seeds move the inputs of remote general layers to their orbit's rank first (two exchanges).
    partition.route_orbits_from = seed % 2 ? 0 : SIZE_MAX;
    PauliSum<1, Complex> gathered = c.start;
    const PartitionedPropagation run = propagate_partitioned(gathered, c.circuit, c.options, partition);
    EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(gathered, expected))
        << "seed " << seed << " " << c.options.truncation.description();
    EXPECT_EQ(run.stats.final_terms, expected.size()) << "seed " << seed;
    ASSERT_EQ(run.stats.layers.size(), single.layers.size());
    for (std::size_t k = 0; k < single.layers.size(); ++k)
      EXPECT_EQ(run.stats.layers[k].terms_out, single.layers[k].terms_out)
          << "seed " << seed << " layer " << k;
    EXPECT_EQ(run.partitions.partitions, static_cast<std::size_t>(world_size()));
    EXPECT_EQ(run.partitions.transport, "mpi");
    if (world_size() == 1) {
      // One rank is the unpartitioned engine, bit for bit.
      ASSERT_EQ(gathered.size(), expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i)
        ASSERT_EQ(gathered.coefficients()[i], expected.coefficients()[i]) << "seed " << seed;
    }
    // Local results: this rank's share only, and the shares add up to the whole.
    partition.result = PartitionResult::local;
    PauliSum<1, Complex> local = c.start;
    propagate_partitioned(local, c.circuit, c.options, partition);
    const PartitionRows rows = make_partition_rows(partition, 8, static_cast<std::size_t>(world_size()));
    for (const PauliString<1>& key : local.keys())
      EXPECT_EQ(rows.part(key), static_cast<std::uint32_t>(world_rank()));
    std::uint64_t total = local.size();
    transport.all_reduce_sum(std::span<std::uint64_t>(&total, 1));
    EXPECT_EQ(total, expected.size()) << "seed " << seed;
  }
}

// The distributed load path: each rank passes every world_size()-th term only (no rank holds the
// whole input); the library routes the terms to their owners and the gathered result is the same.
TEST(PartitionMpi, ScatteredInputMatchesTheSingleProcessResult) {
  MpiTransport transport(MPI_COMM_WORLD);
  for (int seed = 40; seed < 55; ++seed) {
    const Case c = make_case(seed);
    PauliSum<1, Complex> expected = c.start;
    propagate(expected, c.circuit, c.options);
    std::vector<PauliSum<1, Complex>::Term> mine;
    const std::vector<PauliSum<1, Complex>::Term> all = c.start.sorted_terms();
    for (std::size_t i = static_cast<std::size_t>(world_rank()); i < all.size();
         i += static_cast<std::size_t>(world_size()))
      mine.push_back(all[i]);
    PauliSum<1, Complex> gathered = PauliSum<1, Complex>::from_terms(8, mine);
    PartitionOptions partition;
    partition.transport = &transport;
    partition.input = PartitionInput::scattered;
    propagate_partitioned(gathered, c.circuit, c.options, partition);
    EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(gathered, expected)) << "seed " << seed;
  }
}

TEST(PartitionMpi, MismatchedRanksFailWithTheDocumentedError) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  MpiTransport transport(MPI_COMM_WORLD);
  const Case c = make_case(3);
  const Case other = make_case(4);
  PartitionOptions partition;
  partition.transport = &transport;
  PauliSum<1, Complex> sum = c.start;
  try {
    propagate_partitioned(sum, world_rank() == 1 ? other.circuit : c.circuit, c.options, partition);
    ADD_FAILURE() << "no error on rank " << world_rank();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::strstr(e.what(), "the ranks disagree on the circuit fingerprint"), nullptr) << e.what();
  }
}

TEST(PartitionMpi, ARankThatThrowsStopsTheOthersNamingIt) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  MpiTransport transport(MPI_COMM_WORLD);
  const Case c = make_case(5);
  const int failing = world_size() - 1;
  PartitionOptions partition;
  partition.transport = &transport;
  partition.before_layer = [failing](int rank, std::size_t step) {
    if (rank == failing && step == 4) throw std::runtime_error("injected fault");
  };
  PauliSum<1, Complex> sum = c.start;
  try {
    propagate_partitioned(sum, c.circuit, c.options, partition);
    ADD_FAILURE() << "no error on rank " << world_rank();
  } catch (const PartitionPeerFailure& e) {
    EXPECT_NE(world_rank(), failing);
    EXPECT_EQ(e.failed_rank(), failing);
    const std::string expected =
        "partition " + std::to_string(failing) + " of " + std::to_string(world_size()) + " failed: layer 4";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(world_rank(), failing);
    EXPECT_STREQ(e.what(), "injected fault");
  }
  // The transport is still usable afterwards: every rank left the run at the same point.
  std::uint64_t one = 1;
  transport.all_reduce_sum(std::span<std::uint64_t>(&one, 1));
  EXPECT_EQ(one, static_cast<std::uint64_t>(world_size()));
}

TEST(PartitionMpi, ThreadLevelAndPartitionCountAreChecked) {
  MpiTransport transport(MPI_COMM_WORLD);
  EXPECT_EQ(transport.size(), world_size());
  EXPECT_EQ(transport.rank(), world_rank());
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(transport.communicator(), MPI_COMM_WORLD, &result);
  EXPECT_EQ(result, MPI_CONGRUENT);  // a duplicate, not the application's communicator
}

/// --exit-rank R: rank R ends its process abruptly in layer 3 of a run; mpirun must end the job and
/// name the rank (checked by ctest's PASS_REGULAR_EXPRESSION), not hang.
int run_exit_case(int exit_rank) {
  MpiTransport transport(MPI_COMM_WORLD);
  const Case c = make_case(6);
  PartitionOptions partition;
  partition.transport = &transport;
  partition.before_layer = [exit_rank](int rank, std::size_t step) {
    if (rank == exit_rank && step == 3) std::_Exit(3);
  };
  PauliSum<1, Complex> sum = c.start;
  propagate_partitioned(sum, c.circuit, c.options, partition);
  return 0;
}

}  // namespace
}  // namespace paulistrings

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int status = 0;
  if (argc == 3 && std::strcmp(argv[1], "--exit-rank") == 0) {
    status = paulistrings::run_exit_case(std::atoi(argv[2]));
  } else {
    ::testing::InitGoogleTest(&argc, argv);
    status = RUN_ALL_TESTS();
    // Any rank failing fails the job on every rank.
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return status;
}
