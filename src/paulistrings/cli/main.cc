// The `paulistrings` executable (see app.h). Under mpirun it is one rank of a distributed run; Launch
// starts and ends MPI around the whole program (launch.h). First of all the OpenMP wait policy, which
// can only be chosen by starting again (wait_policy.h).
#include "paulistrings/cli/app.h"
#include "paulistrings/cli/launch.h"
#include "paulistrings/cli/wait_policy.h"

int main(int argc, char** argv) {
  paulistrings::cli::choose_openmp_wait_policy(argv);
  paulistrings::cli::Launch launch(argc, argv);
  return launch.finish(paulistrings::cli::main_entry(argc, argv, launch));
}
