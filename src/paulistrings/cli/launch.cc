// Launch (launch.h): MPI start and end for `mpirun paulistrings`, and the agreement of the ranks before
// the run. Everything MPI is inside PAULISTRINGS_HAS_MPI (defined by cmake/Partition.cmake on the
// library target, so this file sees it through the link).
#include "paulistrings/cli/launch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "paulistrings/core/text.h"

#if PAULISTRINGS_HAS_MPI
#include <mpi.h>

#include "paulistrings/partition/mpi_transport.h"
#endif

namespace paulistrings::cli {
namespace {

/// Whether mpirun (OpenMPI, a PMIx launcher, or a PMI one such as MPICH's hydra) started this process.
bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

#if PAULISTRINGS_HAS_MPI
struct Ending {
  int exit_code = 0;  ///< the largest code given (0: every rank is ready to run)
  int rank = 0;       ///< the lowest rank that gave it
};

/// Collective over MPI_COMM_WORLD, made exactly once by every rank of a distributed launch: 0 from a rank
/// ready to run (join), its exit code from a rank that ended before the run (finish).
Ending agree_on_ending(int exit_code, int rank) {
  struct {
    int value;
    int rank;
  } mine{exit_code, rank}, worst{0, 0};
  MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
  return {worst.value, worst.rank};
}
#else
/// An environment variable as a number, or -1 when unset or not a number.
long env_number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  try {
    return static_cast<long>(parse_count(text, std::numeric_limits<int>::max()));
  } catch (const std::invalid_argument&) {
    return -1;
  }
}
#endif

}  // namespace

Launch::Launch([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
  if (!launched_by_mpirun()) return;
#if PAULISTRINGS_HAS_MPI
  // SERIALIZED: the partitioned driver calls MPI from one thread at a time, not always the main one.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_SERIALIZED) {
    error_ = "MPI: the library provides thread level " + std::to_string(provided) +
             ", below MPI_THREAD_SERIALIZED which the distributed run needs";
  }
  // The results are printed once, by rank 0; this also keeps --help and --version to one copy.
  if (rank_ != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) {
    error_ = "rank " + std::to_string(rank_) + ": cannot redirect stdout to /dev/null";
  }
#else
  long size = env_number("OMPI_COMM_WORLD_SIZE");
  if (size < 0) size = env_number("PMI_SIZE");
  const long rank = std::max(env_number("OMPI_COMM_WORLD_RANK"), env_number("PMIX_RANK"));
  if (size > 1 || rank > 0) {
    error_ =
        "this paulistrings was built without MPI (PAULISTRINGS_MPI=OFF), so it cannot run distributed "
        "under mpirun: run it without mpirun, or rebuild with MPI";
  }
#endif
}

Transport& Launch::join() {
#if PAULISTRINGS_HAS_MPI
  if (!distributed() || joined_) {
    throw std::logic_error("Launch::join: not a distributed launch, or joined twice");
  }
  joined_ = true;
  const Ending ending = agree_on_ending(0, rank_);
  if (ending.exit_code != 0) {
    shared_ending_ = true;  // every rank ends here or has ended in finish()
    throw RankEndedBeforeRun("rank " + std::to_string(ending.rank) + " of " + std::to_string(size_) +
                                 " ended before the run with exit code " + std::to_string(ending.exit_code) +
                                 " (see its own message)",
                             ending.exit_code);
  }
  transport_ = std::make_unique<MpiTransport>(MPI_COMM_WORLD);
  return *transport_;
#else
  throw std::logic_error("Launch::join: built without MPI");
#endif
}

int Launch::finish(int exit_code) {
#if PAULISTRINGS_HAS_MPI
  if (!mpi_) return exit_code;
  if (distributed()) {
    if (!joined_) {
      // Ended before the run (bad input, --help): the others meet this in join() or here. A rank that
      // ended without a failure (exit 0) still cannot be run without, so it reports 1 to them.
      agree_on_ending(exit_code != 0 ? exit_code : 1, rank_);
    } else if (exit_code != 0 && !shared_ending_) {
      // Failed on its own after the run began: the others may wait for it in a collective call, where
      // MPI_Finalize would wait for them in turn. mpirun ends the job and reports this exit code.
      std::fflush(stdout);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, exit_code);
    }
  }
  transport_.reset();  // MPI_Comm_free before MPI_Finalize
  MPI_Finalize();
  mpi_ = false;
#endif
  return exit_code;
}

}  // namespace paulistrings::cli
