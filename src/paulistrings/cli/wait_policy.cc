// The command's OpenMP wait policy: see wait_policy.h.
#include "paulistrings/cli/wait_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace paulistrings::cli {

void choose_openmp_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  // Set now, it also ends the recursion: the new image finds it and returns.
  if (::setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
}

}  // namespace paulistrings::cli
