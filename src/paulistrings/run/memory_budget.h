#pragma once
// What memory a run may use: the process's resident size, and the term budget a memory limit leaves
// (PropagateOptions::max_terms). The one place that turns bytes into terms, for the command line's
// --memory-limit and Python's memory_limit= alike; a guard of the host's free memory belongs here too.

#include <cstddef>
#include <string>

namespace paulistrings {

/// The process's resident bytes now (/proc/self/statm; 0 where it cannot be read).
std::size_t resident_bytes();
/// The process's peak resident bytes so far (VmHWM of /proc/self/status; 0 where it cannot be read).
std::size_t peak_resident_bytes();

/// Throws std::invalid_argument ("<option_name> L bytes is below what the process already uses (B
/// bytes)") when the limit leaves less than 1 MiB above the baseline.
void check_budget_room(std::size_t limit, std::size_t baseline, const std::string& option_name);

/// Terms a budget of `limit` bytes allows when the process already holds `baseline` bytes: the rest
/// over the bytes a term costs in an engine (key and coefficient, times the engine's working-set
/// factor), at least 1. Checks the room first (check_budget_room).
std::size_t budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients,
                         const std::string& option_name);

}  // namespace paulistrings
