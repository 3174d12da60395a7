#pragma once
// The `paulistrings` command: argument parsing for the subcommands run, kicked-ising and demo, and
// the mapping of every failure to its exit code (2 bad input with one located line, 1 runtime).

namespace paulistrings::cli {

class Launch;

/// The whole program on this process (every rank under mpirun; see launch.h); returns the exit code.
int main_entry(int argc, char** argv, Launch& launch);

}  // namespace paulistrings::cli
