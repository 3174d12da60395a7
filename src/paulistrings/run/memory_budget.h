#pragma once
// What memory a run may use, in one place for the command line and Python alike:
//  - the memory limit (--memory-limit, memory_limit=) as a term budget (PropagateOptions::max_terms):
//    on the host, the limit minus the process's resident size at the start over the bytes a term costs
//    the CPU engine; on a GPU, the limit in device bytes over the bytes a term costs the GPU engine;
//  - the host memory guard (PropagateOptions::memory_guard), on by default: what the process may add
//    before the host runs out — the cgroup's limit, the memory available at the start, the
//    address-space limit — less a margin, and what one output term of a layer costs a host engine.
// docs/design.md §2.8 (memory budget, guard); the GPU's bytes per term: docs/gpu-engine.md.

#include <cstddef>
#include <filesystem>
#include <optional>
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
/// over the bytes a term costs in an engine (key and `columns` coefficients — one, or a sweep's —
/// times the engine's working-set factor: sweep_bytes_per_term), at least 1. Checks the room first
/// (check_budget_room).
std::size_t budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients,
                         const std::string& option_name, std::size_t columns = 1);

/// budget_terms for the column engine (cpu/column_engine.h): the room over
/// column_bytes_per_budget_term.
std::size_t column_budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients,
                                const std::string& option_name);

/// Bytes one budget term B costs the column engine at its peak (docs/design.md §7.5): its rows (key and
/// coefficient) reach 3B — B live and up to B holes before a layer, B appended in it — in vectors that
/// grow by doubling and copy on growth (6B touched at the worst moment); its x/z column bitsets, at
/// 2 bits per row and qubit (16 bytes a row at 64 qubits per key word), grow by doubling zero-filled (6B
/// rows); the orbit path's per-row entries, orbits and hash-map nodes (two keys and a coefficient) and
/// the other scratch (row lists, the pairing table, the layer pass's order and magnitudes) and the export
/// add 2 × key + coefficient + 96 bytes.
std::size_t column_bytes_per_budget_term(int width, bool complex_coefficients);

/// Bytes one term of a sweep of `columns` columns (sweep/propagate_sweep.h) costs at the working-set factor
/// of budget_terms: its key and one coefficient per column. A sweep's term budget is the limit's room over
/// this, and its memory guard's bytes_per_term.
std::size_t sweep_bytes_per_term(int width, bool complex_coefficients, std::size_t columns);

/// Device bytes one budget term costs the GPU engine at its peak (docs/gpu-engine.md, "Memory"): the
/// term arrays hold up to two budgets mid-layer with 1.5× growth headroom and, while one array grows,
/// its old copy; the join table and the scan buffers add a fixed amount per term.
std::size_t device_bytes_per_budget_term(int width, bool complex_coefficients);
/// Terms a limit of `limit` device bytes allows one device (the device holds nothing of the run before
/// it starts), at least 1; std::invalid_argument naming `option_name` below 1 MiB.
std::size_t device_budget_terms(std::size_t limit, int width, bool complex_coefficients,
                                const std::string& option_name);

/// What the host lets this process use, as read at the start of a run (read_host_memory).
struct HostMemory {
  /// The smallest room (limit − working set, the working set being usage less inactive file pages)
  /// over the process's memory cgroup and its parents (v2 memory.max / memory.current, v1
  /// memory.limit_in_bytes / memory.usage_in_bytes); none where no limit is set.
  std::optional<std::size_t> cgroup_room;
  /// MemAvailable of /proc/meminfo: what the kernel can give without swapping.
  std::optional<std::size_t> available;
  /// RLIMIT_AS (soft) less the process's virtual size (VmSize); none when unlimited.
  std::optional<std::size_t> address_space_room;
};

/// Reads the host's limits. `root` replaces "/" in every path read (/proc/self/cgroup,
/// /proc/self/mountinfo, the cgroup files, /proc/meminfo, /proc/self/status), for tests; the
/// address-space limit (getrlimit) is read only with the real root.
HostMemory read_host_memory(const std::filesystem::path& root = "/");

/// The bytes a run may add to the process, and which limit they come from.
struct HostAllowance {
  std::size_t bytes = 0;  ///< 0: nothing known (no guard)
  std::string source;  ///< "the memory available at the start, 22.88 GiB, less a margin" (or the cgroup's, …)
};

/// The smallest room in `memory` less a margin (a tenth of it and 64 MiB: other processes, and what
/// the estimate of a term's bytes misses).
HostAllowance host_allowance(const HostMemory& memory);

/// The guard's allowance for a run starting now: host_allowance(read_host_memory()). (A front end that
/// is given the allowance — RunOptions::memory_guard_bytes — does not call it.)
HostAllowance host_allowance_now();

/// Bytes one output term of a layer costs a host engine (the guard's bytes_per_term): the CPU engine
/// writes its outputs into vectors that grow by doubling — 2 × (key + coefficient); the reference
/// engine keeps its output records, the merged terms and the new sum — 4 × (key + coefficient).
std::size_t host_bytes_per_term(int width, bool complex_coefficients, bool reference_engine);
/// host_bytes_per_term for the column engine: half its budget term's bytes (a layer's output of 2B terms
/// peaks at column_bytes_per_budget_term × B).
std::size_t column_host_bytes_per_term(int width, bool complex_coefficients);

}  // namespace paulistrings
