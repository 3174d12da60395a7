// MPI tests of the partitioned propagation (run by ctest under mpirun -np 1, 2, 4): the
// engine-equivalence suite's MPI cases against the single-process result on every rank (gathered),
// local results, scattered input, mismatched ranks, a rank that throws, and (with --exit-rank R) a rank
// that dies mid-run. Its own main initializes MPI at
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
#include "paulistrings/testing/engine_suite.h"

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

using testing::EngineEquivalence;

/// One partition per rank over MPI_COMM_WORLD (the communicator duplicated for each run).
PAULISTRINGS_ENGINE_SUITE(Mpi, {testing::mpi_cases(),
                                testing::Baseline::cpu_engine,
                                {{.name = "MPI ranks",
                                  .runner = testing::engine_runner([](auto& sum, const Circuit& circuit,
                                                                      const PropagateOptions& options,
                                                                      PartitionOptions partition) {
                                    MpiTransport transport(MPI_COMM_WORLD);
                                    partition.transport = &transport;
                                    return propagate_partitioned(sum, circuit, options, partition);
                                  }),
                                  // One rank is the unpartitioned engine, bit for bit.
                                  .agreement = world_size() == 1 ? testing::Agreement::same_bits
                                                                 : testing::Agreement::summed_in_any_order,
                                  .partitions = static_cast<std::size_t>(world_size()),
                                  .transport = "mpi"}}});

// Local results: this rank's share only, and the shares add up to the whole.
TEST(PartitionMpi, LocalResultsAreThisRanksShare) {
  MpiTransport transport(MPI_COMM_WORLD);
  for (int seed = 0; seed < 40; ++seed) {
    const testing::EngineCase<1, Complex> c = testing::mpi_case(seed);
    PauliSum<1, Complex> expected = c.start;
    propagate(expected, c.circuit, c.run_options());
    PartitionOptions partition = c.partition;
    partition.transport = &transport;
    partition.result = PartitionResult::local;
    PauliSum<1, Complex> local = c.start;
    propagate_partitioned(local, c.circuit, c.run_options(), partition);
    const PartitionRows rows = make_partition_rows(partition, 8, static_cast<std::size_t>(world_size()));
    for (const PauliString<1>& key : local.keys())
      EXPECT_EQ(rows.part(key), static_cast<std::uint32_t>(world_rank())) << "seed " << seed;
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
    const testing::EngineCase<1, Complex> c = testing::mpi_case(seed);
    PauliSum<1, Complex> expected = c.start;
    propagate(expected, c.circuit, c.run_options());
    std::vector<PauliSum<1, Complex>::Term> mine;
    const std::vector<PauliSum<1, Complex>::Term> all = c.start.sorted_terms();
    for (std::size_t i = static_cast<std::size_t>(world_rank()); i < all.size();
         i += static_cast<std::size_t>(world_size()))
      mine.push_back(all[i]);
    PauliSum<1, Complex> gathered = PauliSum<1, Complex>::from_terms(8, mine);
    PartitionOptions partition;
    partition.transport = &transport;
    partition.input = PartitionInput::scattered;
    propagate_partitioned(gathered, c.circuit, c.run_options(), partition);
    EXPECT_TRUE(testing::TermsMatchSummedInAnyOrder(gathered, expected)) << "seed " << seed;
  }
}

TEST(PartitionMpi, MismatchedRanksFailWithTheDocumentedError) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  MpiTransport transport(MPI_COMM_WORLD);
  const testing::EngineCase<1, Complex> c = testing::mpi_case(3);
  const testing::EngineCase<1, Complex> other = testing::mpi_case(4);
  PartitionOptions partition;
  partition.transport = &transport;
  PauliSum<1, Complex> sum = c.start;
  try {
    propagate_partitioned(sum, world_rank() == 1 ? other.circuit : c.circuit, c.run_options(), partition);
    ADD_FAILURE() << "no error on rank " << world_rank();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::strstr(e.what(), "the ranks disagree on the circuit fingerprint"), nullptr) << e.what();
  }
}

TEST(PartitionMpi, ARankThatThrowsStopsTheOthersNamingIt) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  MpiTransport transport(MPI_COMM_WORLD);
  const testing::EngineCase<1, Complex> c = testing::mpi_case(5);
  const int failing = world_size() - 1;
  PartitionOptions partition;
  partition.transport = &transport;
  partition.before_layer = [failing](int rank, std::size_t step) {
    if (rank == failing && step == 4) throw std::runtime_error("injected fault");
  };
  PauliSum<1, Complex> sum = c.start;
  try {
    propagate_partitioned(sum, c.circuit, c.run_options(), partition);
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
  const testing::EngineCase<1, Complex> c = testing::mpi_case(6);
  PartitionOptions partition;
  partition.transport = &transport;
  partition.before_layer = [exit_rank](int rank, std::size_t step) {
    if (rank == exit_rank && step == 3) std::_Exit(3);
  };
  PauliSum<1, Complex> sum = c.start;
  propagate_partitioned(sum, c.circuit, c.run_options(), partition);
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
