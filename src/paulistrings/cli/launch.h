#pragma once
// How the `paulistrings` process was started: on its own, or as one rank of `mpirun -np K`. The library
// never initializes MPI; the command does, and only when the environment shows a launch by mpirun
// (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE), so a plain run never touches MPI. With K > 1 ranks the
// run is one distributed propagation (partitions = ranks, MpiTransport, replicated input, each rank
// keeping its share of the result); rank 0 alone writes stdout and files, every rank its checkpoint part. K = 1 is an ordinary run.
//
// Ending without a hang. Ranks run the same arguments on the same files, so bad input normally fails on
// every rank alike before the run; the run itself (propagate_partitioned) agrees on errors. What is left
// is a rank failing on its own:
//  - before the run: every rank meets once in one agreement, either in join() (ready to run) or in
//    finish() (it ended before the run); a rank that ended makes the others end too, with its exit code;
//  - during or after the run (writing a checkpoint or the results on rank 0, say): the others may be
//    waiting for it in a collective call, so finish() ends the job with MPI_Abort.
// Otherwise finish() calls MPI_Finalize. MPI builds only (PAULISTRINGS_HAS_MPI); without MPI a launch by
// mpirun with several processes is refused (every copy would run the whole task).

#include <memory>
#include <stdexcept>
#include <string>

#include "paulistrings/partition/transport.h"

namespace paulistrings::cli {

/// Thrown by Launch::join() when another rank ended before the run: exit with its code.
class RankEndedBeforeRun : public std::runtime_error {
 public:
  RankEndedBeforeRun(const std::string& message, int exit_code)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class Launch {
 public:
  /// Initializes MPI (MPI_Init_thread, MPI_THREAD_SERIALIZED) when launched by mpirun in an MPI build.
  /// Ranks other than 0 of a distributed launch get stdout redirected to /dev/null.
  Launch(int& argc, char**& argv);
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Several ranks: the run is distributed over them.
  bool distributed() const { return size_ > 1; }
  /// This process writes stdout and files (rank 0, or the only process).
  bool writer() const { return rank_ == 0; }
  /// Why this process cannot run (MPI missing or unusable); empty when it can.
  const std::string& error() const { return error_; }

  /// Distributed launches only. Collective: this rank is ready to run. Throws RankEndedBeforeRun when
  /// some rank ended before the run; otherwise returns the transport over all ranks (valid until
  /// finish()). Called at most once.
  Transport& join();
  /// The run is ending with a failure or a stop every rank shares (an error agreed by the partitioned
  /// driver, an agreed interrupt): finish() may end normally even after join().
  void note_shared_ending() { shared_ending_ = true; }
  /// Ends MPI as the file comment says and returns the process exit code (does not return after
  /// MPI_Abort).
  int finish(int exit_code);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;  ///< this process initialized MPI
  bool joined_ = false;
  bool shared_ending_ = false;
  std::string error_;
  std::unique_ptr<Transport> transport_;
};

}  // namespace paulistrings::cli
