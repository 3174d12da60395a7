// The memory budget of a run and the host memory guard's allowance: see memory_budget.h.
#include "paulistrings/run/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/core/text.h"

namespace paulistrings {

namespace {

/// The decimal digits that start `text`, removed from it. std::from_chars, never a stream's `>>`: that
/// goes through the global C++ locale's num_get facet, which the program that loads the library (a
/// Python process, say) may have replaced.
std::optional<std::size_t> take_digits(std::string_view& text) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

/// The number at the start of `text` after blanks ("   123 kB", a field of /proc/self/statm), removed
/// from it.
std::optional<std::size_t> leading_number(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return take_digits(text);
}

/// A file's whole content as one number (cgroup files: "4294967296\n"); none if anything else is there.
std::optional<std::size_t> number(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  const std::optional<std::size_t> value = take_digits(text);
  return text.empty() ? value : std::nullopt;
}

/// "Key:   N kB" lines (/proc/meminfo, /proc/self/status): N × 1024.
std::optional<std::size_t> kib_value(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::string_view rest = std::string_view(line).substr(key.size() + 1);
    if (const std::optional<std::size_t> kib = leading_number(rest)) return *kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::string line;
  std::getline(statm, line);
  std::string_view fields = line;
  leading_number(fields);  // the total size, then the resident pages
  const std::size_t pages_resident = leading_number(fields).value_or(0);
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t peak_resident_bytes() { return kib_value("/proc/self/status", "VmHWM").value_or(0); }

void check_budget_room(std::size_t limit, std::size_t baseline, const std::string& option_name) {
  if (limit <= baseline + (std::size_t{1} << 20)) {
    throw std::invalid_argument(option_name + " " + std::to_string(limit) +
                                " bytes is below what the process already uses (" + std::to_string(baseline) +
                                " bytes)");
  }
}

namespace {

// A layer's output of up to twice the budget (the driver's cap) in bucket vectors that grow by
// doubling — 4 × (key + coefficient) per budget term — plus what that leaves out: the threads' pending
// outputs and scratch, and freed memory the allocator keeps in its per-thread arenas. The measured peak
// reaches 4.3 × on 8–16 threads (docs/PERFORMANCE.md, "Memory budget (CLI)"); 5 × bounds it.
constexpr std::size_t kWorkingSetFactor = 5;

/// The room above `baseline` under `limit` over `bytes_per_term`, at least 1, the room checked first.
std::size_t terms_in_room(std::size_t limit, std::size_t baseline, std::size_t bytes_per_term,
                          const std::string& option_name) {
  check_budget_room(limit, baseline, option_name);
  return std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(limit - baseline) /
                                                           static_cast<double>(bytes_per_term)));
}

}  // namespace

std::size_t budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients,
                         const std::string& option_name, std::size_t columns) {
  return terms_in_room(limit, baseline, sweep_bytes_per_term(width, complex_coefficients, columns),
                       option_name);
}

std::size_t column_budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients,
                                const std::string& option_name) {
  return terms_in_room(limit, baseline, column_bytes_per_budget_term(width, complex_coefficients),
                       option_name);
}

std::size_t column_bytes_per_budget_term(int width, bool complex_coefficients) {
  const std::size_t key = 16 * static_cast<std::size_t>(width);
  const std::size_t coefficient = complex_coefficients ? 16 : 8;
  const std::size_t column_bits = 16 * static_cast<std::size_t>(width);  // 2 bits × 64 qubits a key word
  // The orbit path's entry, orbit and hash-map node per row it reads: about two keys and a coefficient.
  return 6 * (key + coefficient) + 6 * column_bits + 2 * key + coefficient + 96;
}

std::size_t column_host_bytes_per_term(int width, bool complex_coefficients) {
  return column_bytes_per_budget_term(width, complex_coefficients) / 2;
}

std::size_t sweep_bytes_per_term(int width, bool complex_coefficients, std::size_t columns) {
  const std::size_t key = 16 * static_cast<std::size_t>(width);
  const std::size_t coefficient = complex_coefficients ? 16 : 8;
  return (key + coefficient * columns) * kWorkingSetFactor;
}

std::size_t device_bytes_per_budget_term(int width, bool complex_coefficients) {
  // Per budget term B (the sum holds ≤ B between layers, ≤ 2B mid-layer, holes at most 1/8 of it):
  // the term arrays ≤ 3B (2B with 1.5× headroom) plus the old copy of the array that grows — about
  // 6 × (key + coefficient) at the peak; the join table (owner and group list, 8 B a slot, and orbit
  // members, 4 B per orbit entry, at ≤ 3.4 slots per term of a layer the driver has cut to 2B / fanout)
  // and the compaction's scan buffers (8 B per stored term) add at most 64 B.
  const std::size_t key = 16 * static_cast<std::size_t>(width);
  const std::size_t coefficient = complex_coefficients ? 16 : 8;
  return 6 * (key + coefficient) + 64;
}

std::size_t device_budget_terms(std::size_t limit, int width, bool complex_coefficients,
                                const std::string& option_name) {
  if (limit <= (std::size_t{1} << 20)) {
    throw std::invalid_argument(option_name + " " + std::to_string(limit) +
                                " bytes leaves a GPU run no room (at least 1 MiB of device memory)");
  }
  return std::max<std::size_t>(1, limit / device_bytes_per_budget_term(width, complex_coefficients));
}

namespace {

std::filesystem::path under(const std::filesystem::path& root, const std::string& absolute) {
  return root / std::filesystem::path(absolute).relative_path();
}

std::optional<std::string> first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

/// "key value" lines (memory.stat): the value of `key`.
std::optional<std::size_t> stat_value(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ' ')
      return number(std::string_view(line).substr(key.size() + 1));
  }
  return std::nullopt;
}

/// A cgroup hierarchy this process belongs to: the directory of its group, and the mount point above
/// which the limits stop.
struct CgroupDirectory {
  std::filesystem::path group, mount;
  bool v2 = false;
};

/// The memory cgroups of this process: from /proc/self/cgroup (v2 "0::/path", v1 "N:...memory...:/path")
/// and the mount points of /proc/self/mountinfo ("cgroup2", or "cgroup" with the memory option).
std::vector<CgroupDirectory> memory_cgroups(const std::filesystem::path& root) {
  std::optional<std::string> v2_path, v1_path;
  {
    std::ifstream in(under(root, "/proc/self/cgroup"));
    for (std::string line; std::getline(in, line);) {
      const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string controllers = line.substr(a + 1, b - a - 1);
      const std::string path = line.substr(b + 1);
      if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
      std::istringstream list(controllers);
      for (std::string c; std::getline(list, c, ',');) {
        if (c == "memory") v1_path = path;
      }
    }
  }
  std::vector<CgroupDirectory> out;
  std::ifstream in(under(root, "/proc/self/mountinfo"));
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root mount-point options [optional fields] - type source super-options
    std::istringstream fields(line);
    std::string id, parent, device, mount_root, mount_point;
    fields >> id >> parent >> device >> mount_root >> mount_point;
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string type, source, options;
    tail >> type >> source >> options;
    const bool v2 = type == "cgroup2";
    bool v1 = false;
    if (type == "cgroup") {
      std::istringstream list(options);
      for (std::string o; std::getline(list, o, ',');) v1 = v1 || o == "memory";
    }
    const std::optional<std::string>& path = v2 ? v2_path : v1_path;
    if ((!v2 && !v1) || !path) continue;
    // The group's path is relative to the hierarchy's root; the mount shows that root's mount_root.
    std::string relative = *path;
    if (mount_root != "/" && relative.rfind(mount_root, 0) == 0)
      relative = relative.substr(mount_root.size());
    const std::filesystem::path mount = under(root, mount_point);
    const std::filesystem::path inside = std::filesystem::path(relative).relative_path();
    std::filesystem::path group = inside.empty() ? mount : mount / inside;
    if (!std::filesystem::exists(group)) group = mount;  // a namespace that shows its own group at the mount
    out.push_back({group, mount, v2});
  }
  return out;
}

/// The smallest room of one hierarchy: limit − (usage − inactive file pages) at the group and each
/// parent up to the mount.
std::optional<std::size_t> hierarchy_room(const CgroupDirectory& cgroup) {
  // v1 writes "no limit" as a huge page-aligned number.
  constexpr std::size_t kNoLimit = std::size_t{1} << 62;
  std::optional<std::size_t> room;
  std::filesystem::path dir = cgroup.group;
  for (;;) {
    std::optional<std::size_t> limit, usage, inactive;
    if (cgroup.v2) {
      if (const auto text = first_line(dir / "memory.max"); text && *text != "max") limit = number(*text);
      if (const auto text = first_line(dir / "memory.current")) usage = number(*text);
      inactive = stat_value(dir / "memory.stat", "inactive_file");
    } else {
      if (const auto text = first_line(dir / "memory.limit_in_bytes")) limit = number(*text);
      if (const auto text = first_line(dir / "memory.usage_in_bytes")) usage = number(*text);
      inactive = stat_value(dir / "memory.stat", "total_inactive_file");
    }
    if (limit && *limit < kNoLimit) {
      const std::size_t working = usage ? *usage - std::min(*usage, inactive.value_or(0)) : 0;
      const std::size_t here = *limit - std::min(*limit, working);
      room = room ? std::min(*room, here) : here;
    }
    if (dir == cgroup.mount || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
    if (dir.string().size() < cgroup.mount.string().size()) break;
  }
  return room;
}

}  // namespace

HostMemory read_host_memory(const std::filesystem::path& root) {
  HostMemory memory;
  for (const CgroupDirectory& cgroup : memory_cgroups(root)) {
    if (const std::optional<std::size_t> room = hierarchy_room(cgroup)) {
      memory.cgroup_room = memory.cgroup_room ? std::min(*memory.cgroup_room, *room) : *room;
    }
  }
  memory.available = kib_value(under(root, "/proc/meminfo"), "MemAvailable");
  if (root == std::filesystem::path("/")) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const std::size_t size = kib_value("/proc/self/status", "VmSize").value_or(0);
      const auto cap = static_cast<std::size_t>(limit.rlim_cur);
      memory.address_space_room = cap - std::min(cap, size);
    }
  }
  return memory;
}

HostAllowance host_allowance(const HostMemory& memory) {
  HostAllowance allowance;
  std::optional<std::size_t> room;
  const auto consider = [&](const std::optional<std::size_t>& bytes, const char* source) {
    if (!bytes || (room && *room <= *bytes)) return;
    room = *bytes;
    allowance.source = source;
  };
  consider(memory.available, "the memory available at the start");
  consider(memory.cgroup_room, "the room under the cgroup's memory limit at the start");
  consider(memory.address_space_room, "the room under the address-space limit (ulimit -v) at the start");
  if (!room) return allowance;
  constexpr std::size_t kMarginFloor = std::size_t{64} << 20;
  const std::size_t margin = *room / 10 + kMarginFloor;
  allowance.bytes = *room > margin ? *room - margin : 1;  // 1: no room at all, yet a guard
  allowance.source += ", " + format_bytes(*room) + ", less a margin";
  return allowance;
}

HostAllowance host_allowance_now() { return host_allowance(read_host_memory()); }

std::size_t host_bytes_per_term(int width, bool complex_coefficients, bool reference_engine) {
  const std::size_t term = 16 * static_cast<std::size_t>(width) + (complex_coefficients ? 16 : 8);
  return (reference_engine ? 4 : 2) * term;
}

}  // namespace paulistrings
