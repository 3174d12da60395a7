// The resume point: nothing at the path, damaged files, and checkpoints of another run (fingerprint,
// circuit, qubit count, past the end) are refused with clear errors; the fingerprint picks the
// observable; a rank reads its share of a checkpoint in parts.

#include "paulistrings/run/checkpoints.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/io/atomic_file.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/temp_dir.h"

namespace paulistrings {
namespace {

namespace fs = std::filesystem;
using testing::ThrowsInvalidArgumentMentioning;

class ResumePoints : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    circuit_.append(Channel::h(0)).append(Channel::cnot(0, 1)).append(Channel::rz(0.3, 2));
  }

  /// A checkpoint of `circuit_` after `layers` steps, with task fingerprint `fingerprint`, at `name`.
  fs::path Save(const std::string& name, std::uint64_t fingerprint, std::uint64_t layers = 2,
                std::size_t qubits = 3, const std::string& label = "XZI") {
    const std::vector<std::pair<std::string, Complex>> terms = {{label.substr(0, qubits), 0.5}};
    io::save_checkpoint(dir_ / name, io::Checkpoint{circuit_.fingerprint(), fingerprint, layers,
                                                    AnyPauliSum::from_labels(qubits, terms)});
    return dir_ / name;
  }
  ResumePoint Load(const fs::path& path, std::vector<std::uint64_t> fingerprints = {7}, std::size_t rank = 0,
                   std::size_t ranks = 1) {
    return load_resume(path, circuit_, 3, fingerprints, "run (circuit or observable differ)", rank, ranks);
  }

  Circuit circuit_{3};
};

TEST_F(ResumePoints, ACheckpointOfTheRunIsReadWithItsLayerAndObservable) {
  const ResumePoint one = Load(Save("a.ckpt", 7));
  EXPECT_EQ(one.checkpoint.layers_done, 2u);
  EXPECT_EQ(one.match, 0u);
  EXPECT_FALSE(one.in_parts);
  EXPECT_EQ(one.checkpoint.sum.size(), 1u);
  EXPECT_EQ(Load(Save("b.ckpt", 9), {7, 8, 9}).match, 2u);
  EXPECT_EQ(Load(Save("end.ckpt", 7, 3)).checkpoint.layers_done, 3u);  // at the end: nothing left to do
}

TEST_F(ResumePoints, NothingAtThePathIsCheckpointNotFound) {
  try {
    Load(dir_ / "missing.ckpt");
    FAIL() << "did not throw";
  } catch (const CheckpointNotFound& e) {
    EXPECT_EQ(e.path(), dir_ / "missing.ckpt");
    EXPECT_EQ(std::string(e.what()),
              "cannot open " + (dir_ / "missing.ckpt").string() + ": No such file or directory");
  }
}

TEST_F(ResumePoints, DamagedFilesAreRefusedSayingWhatIsWrong) {
  io::write_file_atomically(dir_ / "text.ckpt", "not a checkpoint");
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { Load(dir_ / "text.ckpt"); }, {"checkpoint", "text.ckpt"}));
  std::string bytes = io::read_file(Save("flipped.ckpt", 7));
  bytes[bytes.size() / 2] ^= 0x10;
  io::write_file_atomically(dir_ / "flipped.ckpt", bytes);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Load(dir_ / "flipped.ckpt"); }, {"checksum"}));
}

TEST_F(ResumePoints, ACheckpointOfAnotherRunIsRefused) {
  const std::string refusal =
      "belongs to a different run (circuit or observable differ); refusing to resume from it";
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Load(Save("a.ckpt", 6), {7, 8}); }, {"a.ckpt", refusal}));
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { Load(Save("b.ckpt", 7, 4)); }, {refusal}));  // past the end
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { Load(Save("c.ckpt", 7, 1, 2)); }, {refusal}));  // 2 qubits
  const fs::path path = Save("d.ckpt", 7);
  circuit_.append(Channel::h(1));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Load(path); }, {refusal}));  // another circuit
}

TEST_F(ResumePoints, ARankReadsItsShareOfACheckpointInParts) {
  const std::vector<std::string> labels = {"XII", "IXI", "IIX", "ZZZ"};
  for (std::size_t part = 0; part < 4; ++part) {
    Save(io::checkpoint_part_path("run.ckpt", part, 4).string(), 7, 2, 3, labels[part]);
  }
  const ResumePoint whole = Load(dir_ / "run.ckpt");
  EXPECT_TRUE(whole.in_parts);
  EXPECT_EQ(whole.checkpoint.sum.size(), 4u);
  const ResumePoint share = Load(dir_ / "run.ckpt", {7}, 1, 2);  // parts 1 and 3
  EXPECT_EQ(share.checkpoint.sum.size(), 2u);
  EXPECT_EQ(share.checkpoint.sum.coefficient("ZZZ"), Complex(0.5));
  EXPECT_EQ(Load(dir_ / "run.ckpt", {7}, 5, 8).checkpoint.sum.size(), 0u);  // more ranks than parts
  fs::remove(dir_ / "run.ckpt.part-2-of-4");
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Load(dir_ / "run.ckpt"); }, {"part 2 of 4", "missing"}));
}

}  // namespace
}  // namespace paulistrings
