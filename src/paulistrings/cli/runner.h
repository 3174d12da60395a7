#pragma once
// The command line's execution core: one RunSpec (a circuit, named observables, truncation,
// direction, state, threads) run to a results JSON document, with the conveniences of a long
// simulation — a progress bar, a per-layer trace file, periodic and on-signal checkpoints, resume,
// and a memory budget (the last three by the library's run orchestration, run/orchestrate.h). Front
// ends (task files, QASM, stim, kicked Ising) only build the RunSpec.
// Under mpirun (several ranks) every rank calls execute() alike and the run is distributed.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "paulistrings/channels/channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/io/task.h"

namespace paulistrings::cli {

class Launch;

/// Exit codes: 0 success, 1 runtime failure, 2 bad input, 130 interrupted (after checkpointing).
inline constexpr int kExitOk = 0, kExitRuntime = 1, kExitBadInput = 2, kExitInterrupted = 130;

/// Thrown for bad input found while running (bad labels, unusable device, bad resume file): exit 2.
class BadInput : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct RunSpec {
  std::string source;  ///< what the run came from (for results and messages)
  io::Task task;       ///< circuit, observables, truncation, direction, threads, device, state
};

struct RunControl {
  std::optional<std::string> out_path;         ///< results file (stdout when empty)
  std::optional<std::string> trace_path;       ///< .csv or .jsonl
  std::optional<std::string> checkpoint_path;  ///< written every `every` layers and on SIGINT/SIGTERM
  std::size_t every = 0;
  std::optional<std::string> resume_path;
  std::optional<std::size_t> memory_limit_bytes;
  bool auto_truncate = true;
  bool memory_guard = true;  ///< RunOptions::memory_guard (--no-memory-guard turns it off)
  std::optional<std::size_t> memory_guard_bytes;  ///< RunOptions::memory_guard_bytes (--host-memory)
  bool quiet = false;
  /// The launch (launch.h; not owned). Several ranks: one distributed run over them, partitions =
  /// ranks, with rank 0 alone writing stdout and files. nullptr: this process alone.
  Launch* launch = nullptr;
};

/// Runs the spec; writes results JSON (to out_path or stdout). Returns the exit code. Throws
/// BadInput / io::ParseError / std::invalid_argument for bad input, std::runtime_error otherwise.
int execute(const RunSpec& spec, const RunControl& control);

/// A fingerprint of everything that must match to resume a run: circuit, direction, truncation,
/// state and the observable being propagated.
std::uint64_t task_fingerprint(const io::Task& task, std::size_t observable_index);

}  // namespace paulistrings::cli
