#pragma once
// The `paulistrings` command: argument parsing for the subcommands run, kicked-ising and demo, and
// the mapping of every failure to its exit code (2 bad input with one located line, 1 runtime).

namespace paulistrings::cli {

/// The whole program; returns the process exit code.
int main_entry(int argc, char** argv);

}  // namespace paulistrings::cli
