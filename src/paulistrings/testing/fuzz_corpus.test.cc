// Replays the fuzz corpus (tests/fuzz/<target>/: seeds and every fixed finding) through the fuzz targets'
// entries (testing/fuzz_target.h), compiled here by the ordinary build: each file must be read or refused
// with a documented exception — anything else fails the test naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings::testing {
namespace {

namespace fs = std::filesystem;

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, EveryFileIsReadOrRefusedAsDocumented) {
  const std::string& name = GetParam();
  const auto target = fuzz_targets().find(name);
  ASSERT_NE(target, fuzz_targets().end()) << "no fuzz target registered as '" << name << "'";
  const fs::path directory = fs::path(PAULISTRINGS_FUZZ_CORPUS) / name;
  ASSERT_TRUE(fs::is_directory(directory)) << directory;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 3u) << "a corpus needs a few valid inputs to start from";
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      target->second(input);
    } catch (const std::exception& e) {
      ADD_FAILURE() << file << ": undocumented exception: " << e.what();
    } catch (...) {
      ADD_FAILURE() << file << ": an exception that is not a std::exception";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus,
                         ::testing::Values("task", "checkpoint", "label", "qasm", "stim"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(FuzzCorpus, EveryRegisteredTargetIsReplayed) {
  for (const auto& [name, entry] : fuzz_targets()) {
    EXPECT_TRUE(fs::is_directory(fs::path(PAULISTRINGS_FUZZ_CORPUS) / name)) << name << " has no corpus";
  }
  EXPECT_EQ(fuzz_targets().size(), 5u) << "a new fuzz target belongs in the replay list above";
}

}  // namespace
}  // namespace paulistrings::testing
