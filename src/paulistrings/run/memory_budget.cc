// The memory budget of a run: see memory_budget.h.
#include "paulistrings/run/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

namespace paulistrings {

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

void check_budget_room(std::size_t limit, std::size_t baseline, const std::string& option_name) {
  if (limit <= baseline + (std::size_t{1} << 20)) {
    throw std::invalid_argument(option_name + " " + std::to_string(limit) +
                                " bytes is below what the process already uses (" + std::to_string(baseline) +
                                " bytes)");
  }
}

std::size_t budget_terms(std::size_t limit, std::size_t baseline, int width, bool complex_coefficients,
                         const std::string& option_name) {
  // Buckets plus a layer's output (the driver caps a layer at 2× the budget), vector growth slack
  // and the export copy: 4 × (key + coefficient) bytes per budget term bounds the measured peak
  // (docs/PERFORMANCE.md, "Memory budget (CLI)").
  constexpr double kWorkingSetFactor = 4.0;
  const double per_term = (16.0 * width + (complex_coefficients ? 16.0 : 8.0)) * kWorkingSetFactor;
  check_budget_room(limit, baseline, option_name);
  return std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(limit - baseline) / per_term));
}

}  // namespace paulistrings
