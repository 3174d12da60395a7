#pragma once
// The OpenMP wait policy of the command. libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when it
// is loaded — before main() runs — so setting them from main() has no effect. By default its idle
// threads spin for a while after every parallel region and at every barrier; on a machine whose cores
// other processes also want (a build beside the run, a laptop, an oversubscribed node) a spinning
// thread holds a core that a worker of the same layer needs, so N threads run slower than one
// (docs/design.md §7.2). When the user set neither variable, the command starts itself once more with
// OMP_WAIT_POLICY=passive: waiting threads then sleep at once.

namespace paulistrings::cli {

/// Re-executes the program (/proc/self/exe, the same arguments) with OMP_WAIT_POLICY=passive when
/// neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set; returns when one is, or when the re-execution
/// fails (the run then goes on with libgomp's default). Call first thing in main().
void choose_openmp_wait_policy(char** argv);

}  // namespace paulistrings::cli
