// The memory budget's arithmetic: bytes a term costs by width and coefficient type on the host and on a
// GPU, the room check and its message, at least one term; the host memory guard's allowance: the
// limits read from a fake /proc and /sys (cgroup v2 and v1 with their parents, no cgroup limit), the
// smallest room less the margin, the test override, the bytes an output term costs.

#include "paulistrings/run/memory_budget.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <locale>
#include <string>

#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/temp_dir.h"

namespace paulistrings {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(MemoryBudget, TermsAreTheRoomOverFiveTimesKeyAndCoefficient) {
  const std::size_t baseline = 100 * kMiB;
  // One word (16 bytes of key) and a real coefficient: 5 × 24 = 120 bytes a term.
  EXPECT_EQ(budget_terms(baseline + 120 * 100000, baseline, 1, false, "limit"), 100000u);
  // Rounded down:
  EXPECT_EQ(budget_terms(baseline + 120 * 100000 + 119, baseline, 1, false, "limit"), 100000u);
  // Complex coefficients: 5 × 32 = 160; two words: 5 × 40 = 200; sixteen words, complex: 5 × 272.
  EXPECT_EQ(budget_terms(baseline + 160 * 50000, baseline, 1, true, "limit"), 50000u);
  EXPECT_EQ(budget_terms(baseline + 200 * 50000, baseline, 2, false, "limit"), 50000u);
  EXPECT_EQ(budget_terms(baseline + 1360 * 10000, baseline, 16, true, "limit"), 10000u);
}

TEST(MemoryBudget, ASweepTermIsFiveTimesTheKeyAndOneCoefficientPerColumn) {
  EXPECT_EQ(sweep_bytes_per_term(1, false, 1), 120u);  // budget_terms' term
  EXPECT_EQ(sweep_bytes_per_term(1, false, 20), 5 * (16 + 8 * 20u));
  EXPECT_EQ(sweep_bytes_per_term(8, true, 3), 5 * (128 + 16 * 3u));
}

TEST(MemoryBudget, ALimitWithoutAMebibyteOfRoomIsRefusedNamingTheOption) {
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning(
      [] { check_budget_room(5 * kMiB, 4 * kMiB, "--memory-limit"); },
      {"--memory-limit 5242880 bytes is below what the process already uses (4194304 bytes)"}));
  EXPECT_THROW(budget_terms(kMiB, 2 * kMiB, 1, false, "memory_limit"), std::invalid_argument);
  EXPECT_NO_THROW(check_budget_room(5 * kMiB + 1, 4 * kMiB, "memory_limit"));
  // Just above the check: the budget is still at least one term... of the mebibyte's worth.
  EXPECT_EQ(budget_terms(5 * kMiB + 1, 4 * kMiB, 1, false, "memory_limit"), (kMiB + 1) / 120);
  EXPECT_EQ(budget_terms(5 * kMiB + 1, 4 * kMiB, 1 << 20, true, "memory_limit"), 1u);
}

TEST(MemoryBudget, DeviceTermsAreTheLimitOverSixTimesKeyAndCoefficientPlus64) {
  // One word, real: 6 × 24 + 64 = 208; two words, real: 304; two words, complex: 352; sixteen, complex.
  EXPECT_EQ(device_bytes_per_budget_term(1, false), 208u);
  EXPECT_EQ(device_bytes_per_budget_term(2, false), 304u);
  EXPECT_EQ(device_bytes_per_budget_term(2, true), 352u);
  EXPECT_EQ(device_bytes_per_budget_term(16, true), 6u * 272 + 64);
  EXPECT_EQ(device_budget_terms(304 * 100000, 2, false, "--memory-limit"), 100000u);
  EXPECT_EQ(device_budget_terms(304 * 100000 + 303, 2, false, "--memory-limit"), 100000u);
  // No baseline on a device: only the mebibyte's floor.
  EXPECT_TRUE(
      testing::ThrowsInvalidArgumentMentioning([] { device_budget_terms(kMiB, 2, false, "--memory-limit"); },
                                               {"--memory-limit 1048576 bytes leaves a GPU run no room"}));
  EXPECT_EQ(device_budget_terms(kMiB + 1, 1 << 20, true, "memory_limit"), 1u);
}

TEST(MemoryGuard, TheAllowanceIsTheSmallestRoomLessATenthAnd64MiB) {
  HostMemory memory;
  EXPECT_EQ(host_allowance(memory).bytes, 0u);  // nothing known: no guard
  memory.available = 10240 * kMiB;
  HostAllowance a = host_allowance(memory);
  EXPECT_EQ(a.bytes, 10240 * kMiB - 1024 * kMiB - 64 * kMiB);
  EXPECT_EQ(a.source, "the memory available at the start, 10.00 GiB, less a margin");
  memory.cgroup_room = 2048 * kMiB;
  a = host_allowance(memory);
  EXPECT_EQ(a.bytes, 2048 * kMiB - 2048 * kMiB / 10 - 64 * kMiB);
  EXPECT_NE(a.source.find("cgroup"), std::string::npos) << a.source;
  memory.address_space_room = 640 * kMiB;
  a = host_allowance(memory);
  EXPECT_EQ(a.bytes, 640 * kMiB - 64 * kMiB - 64 * kMiB);
  EXPECT_NE(a.source.find("address-space limit"), std::string::npos) << a.source;
  memory.address_space_room = 10 * kMiB;  // less than the margin: a guard that stops every growth
  EXPECT_EQ(host_allowance(memory).bytes, 1u);
}

TEST(MemoryGuard, AnOutputTermCostsTwiceKeyAndCoefficientOnTheCpuFourTimesOnTheReference) {
  EXPECT_EQ(host_bytes_per_term(1, false, false), 48u);
  EXPECT_EQ(host_bytes_per_term(2, false, false), 80u);
  EXPECT_EQ(host_bytes_per_term(2, true, false), 96u);
  EXPECT_EQ(host_bytes_per_term(2, false, true), 160u);
}

TEST(MemoryGuard, TheAllowanceNowComesFromThisHost) {
  ::setenv("PAULISTRINGS_TEST_HOST_MEMORY", "123456", 1);  // the old test hook: no longer read
  const HostAllowance real = host_allowance_now();  // this machine: MemAvailable at least
  ::unsetenv("PAULISTRINGS_TEST_HOST_MEMORY");
  EXPECT_NE(real.bytes, 123456u);
  EXPECT_GT(real.bytes, 0u);
  EXPECT_NE(real.source.find("less a margin"), std::string::npos) << real.source;
}

class HostMemoryFiles : public testing::TempDirTest {
 protected:
  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path file = dir_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  void Meminfo(std::size_t available_kib) {
    Write("proc/meminfo", "MemTotal:       24683784 kB\nMemFree:         1000000 kB\nMemAvailable:   " +
                              std::to_string(available_kib) + " kB\n");
  }
};

TEST_F(HostMemoryFiles, CgroupV2TakesTheSmallestRoomOfTheGroupAndItsParents) {
  Meminfo(16 * 1024 * 1024);
  Write("proc/self/cgroup", "0::/user.slice/job\n");
  Write("proc/self/mountinfo",
        "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        "31 1 0:27 / /proc rw - proc proc rw\n");
  // The job: 4 GiB, 1 GiB used of which 256 MiB inactive file pages → 3.25 GiB of room.
  Write("sys/fs/cgroup/user.slice/job/memory.max", "4294967296\n");
  Write("sys/fs/cgroup/user.slice/job/memory.current", "1073741824\n");
  Write("sys/fs/cgroup/user.slice/job/memory.stat",
        "anon 805306368\nfile 268435456\ninactive_file 268435456\n");
  // Its parent: no limit. Another setting above would count too.
  Write("sys/fs/cgroup/user.slice/memory.max", "max\n");
  Write("sys/fs/cgroup/user.slice/memory.current", "2147483648\n");
  HostMemory m = read_host_memory(dir_);
  ASSERT_TRUE(m.cgroup_room.has_value());
  EXPECT_EQ(*m.cgroup_room, 4096 * kMiB - 768 * kMiB);
  ASSERT_TRUE(m.available.has_value());
  EXPECT_EQ(*m.available, std::size_t{16} << 30);
  EXPECT_FALSE(m.address_space_room.has_value());  // read only with the real root
  // A parent with less room wins: 3 GiB limit, 2.5 GiB working set.
  Write("sys/fs/cgroup/user.slice/memory.max", "3221225472\n");
  Write("sys/fs/cgroup/user.slice/memory.current", "2684354560\n");
  m = read_host_memory(dir_);
  EXPECT_EQ(*m.cgroup_room, 512 * kMiB);
  // A group over its limit (page cache counted) has no room, not a huge one.
  Write("sys/fs/cgroup/user.slice/job/memory.current", "8589934592\n");
  m = read_host_memory(dir_);
  EXPECT_EQ(*m.cgroup_room, 0u);
}

TEST_F(HostMemoryFiles, CgroupV1ReadsTheMemoryControllerAndIgnoresItsNoLimitValue) {
  Meminfo(8 * 1024 * 1024);
  Write("proc/self/cgroup", "4:memory:/process_api/abc\n3:cpuset:/\n0::/\n");
  Write("proc/self/mountinfo",
        "25 24 0:22 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
        "26 24 0:23 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n");
  Write("sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", "9223372036854771712\n");
  Write("sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes", "441896960\n");
  Write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  HostMemory m = read_host_memory(dir_);
  EXPECT_FALSE(m.cgroup_room.has_value());  // no limit anywhere: MemAvailable decides
  EXPECT_EQ(host_allowance(m).source, "the memory available at the start, 8.00 GiB, less a margin");
  Write("sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes", "1073741824\n");
  Write("sys/fs/cgroup/memory/process_api/abc/memory.stat",
        "cache 298594304\ntotal_inactive_file 126259200\n");
  m = read_host_memory(dir_);
  ASSERT_TRUE(m.cgroup_room.has_value());
  EXPECT_EQ(*m.cgroup_room, std::size_t{1073741824} - (441896960u - 126259200u));
}

TEST_F(HostMemoryFiles, NothingReadableIsNothingKnown) {
  const HostMemory m = read_host_memory(dir_);
  EXPECT_FALSE(m.cgroup_room.has_value());
  EXPECT_FALSE(m.available.has_value());
  EXPECT_EQ(host_allowance(m).bytes, 0u);
}

/// A num_get facet that reads every unsigned number as 0: a stand-in for whatever the program that loads
/// the library does to the global C++ locale (under pytest on the GPU machine the guard once read
/// MemAvailable as 0 bytes through `>>`).
struct ZeroNumbers : std::num_get<char> {
  iter_type do_get(iter_type in, iter_type end, std::ios_base& io, std::ios_base::iostate& err,
                   unsigned long& value) const override {
    in = std::num_get<char>::do_get(in, end, io, err, value);
    value = 0;
    return in;
  }
};

TEST_F(HostMemoryFiles, NumbersAreReadWhateverTheGlobalLocale) {
  Meminfo(8 * 1024 * 1024);
  const std::locale previous = std::locale::global(std::locale(std::locale::classic(), new ZeroNumbers));
  const HostMemory m = read_host_memory(dir_);
  const std::size_t resident = resident_bytes(), peak = peak_resident_bytes();
  std::locale::global(previous);
  ASSERT_TRUE(m.available.has_value());
  EXPECT_EQ(*m.available, std::size_t{8} << 30);
  EXPECT_GT(resident, 0u);
  EXPECT_GT(peak, 0u);
}

TEST(MemoryBudget, ResidentBytesAreMeasured) {
  EXPECT_GT(resident_bytes(), 0u);
  EXPECT_GE(peak_resident_bytes(), resident_bytes() / 2);
}

}  // namespace
}  // namespace paulistrings
