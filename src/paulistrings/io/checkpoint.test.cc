// Tests checkpoint files: the documented byte layout, bit-exact round trips at every width (real
// and complex, empty and 10^4-term sums), deterministic bytes, atomic save/load, and refusal of
// every kind of damage (flipped bytes, truncation, and each header/body check with its message).

#include "paulistrings/io/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint_bytes.test.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/sanitizers.h"

namespace paulistrings::io {
namespace {

namespace fs = std::filesystem;
using namespace test_bytes;
using testing::ThrowsInvalidArgumentMentioning;

// ---- sums ----

std::uint64_t QubitMask(std::size_t num_qubits, int word) {
  const std::size_t first = 64 * static_cast<std::size_t>(word);
  if (num_qubits >= first + 64) return ~std::uint64_t{0};
  if (num_qubits <= first) return 0;
  return (std::uint64_t{1} << (num_qubits - first)) - 1;
}

double RandomFiniteNonzero(std::mt19937_64& rng) {
  for (;;) {
    const double d = std::bit_cast<double>(rng());  // every exponent, subnormals included
    if (std::isfinite(d) && d != 0.0) return d;
  }
}

template <Coefficient C>
C RandomCoefficient(std::mt19937_64& rng) {
  if constexpr (std::same_as<C, double>) {
    return RandomFiniteNonzero(rng);
  } else {
    double re = RandomFiniteNonzero(rng), im = RandomFiniteNonzero(rng);
    switch (rng() % 8) {
      case 0:
        re = -0.0;
        break;
      case 1:
        im = -0.0;
        break;
      case 2:
        im = 0.0;
        break;
      default:
        break;
    }
    return C(re, im);
  }
}

template <Coefficient C>
std::vector<C> SpecialCoefficients() {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double big = std::numeric_limits<double>::max();
  const double largest_subnormal = std::bit_cast<double>(std::uint64_t{0x000FFFFFFFFFFFFF});
  if constexpr (std::same_as<C, double>) {
    return {tiny, -tiny,      largest_subnormal,       std::numeric_limits<double>::min(), big, -big,
            1.0,  -1.0 / 3.0, std::nextafter(1.0, 2.0)};
  } else {
    return {C(-0.0, 1.0),
            C(1.0, -0.0),
            C(tiny, -0.0),
            C(-0.0, -tiny),
            C(big, -big),
            C(0.0, -1.0),
            C(-0.0, largest_subnormal),
            C(1.0 / 3.0, 0.0)};
  }
}

// A sum of `count` distinct random terms (fewer when 4^n is smaller), with the identity, a string
// on the top qubit and the special coefficients among them. Keys are unique, so from_terms keeps
// every coefficient bit for bit.
AnyPauliSum RandomSum(std::size_t num_qubits, bool complex, std::size_t count, std::uint64_t seed) {
  if (num_qubits < 16) count = std::min<std::size_t>(count, std::size_t{1} << (2 * num_qubits));
  AnyPauliSum result(num_qubits, complex);
  result.visit([&](auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    using Key = typename Sum::Key;
    using C = typename Sum::Coeff;
    std::mt19937_64 rng(seed);
    std::set<Key> seen;
    std::vector<typename Sum::Term> terms;
    const auto specials = SpecialCoefficients<C>();
    auto add = [&](const Key& key) {
      if (terms.size() >= count || !seen.insert(key).second) return;
      const std::size_t i = terms.size();
      terms.push_back({key, i < specials.size() ? specials[i] : RandomCoefficient<C>(rng)});
    };
    add(Key{});
    if (num_qubits > 0) add(Key::single('Y', num_qubits - 1));
    while (terms.size() < count) {
      Key key;
      for (int w = 0; w < Sum::kWidth; ++w) {
        key.x[w] = rng() & QubitMask(num_qubits, w);
        key.z[w] = rng() & QubitMask(num_qubits, w);
      }
      add(key);
    }
    sum = Sum::from_terms(num_qubits, std::move(terms));
    EXPECT_EQ(sum.size(), count);
  });
  return result;
}

// (dense label, bits of the real part, bits of the imaginary part), sorted: equal exactly when
// the two sums hold the same (key, coefficient) set bit for bit.
using BitTerm = std::tuple<std::string, std::uint64_t, std::uint64_t>;
std::vector<BitTerm> BitwiseTerms(const AnyPauliSum& any) {
  std::vector<BitTerm> out;
  any.visit([&](const auto& sum) {
    for (std::size_t i = 0; i < sum.size(); ++i) {
      const auto c = sum.coefficients()[i];
      std::uint64_t re = 0, im = 0;
      if constexpr (std::decay_t<decltype(sum)>::kIsComplex) {
        re = std::bit_cast<std::uint64_t>(c.real());
        im = std::bit_cast<std::uint64_t>(c.imag());
      } else {
        re = std::bit_cast<std::uint64_t>(c);
      }
      out.emplace_back(sum.keys()[i].to_label(sum.num_qubits()), re, im);
    }
  });
  std::sort(out.begin(), out.end());
  return out;
}

Checkpoint MakeCheckpoint(AnyPauliSum sum, std::uint64_t salt = 0) {
  Checkpoint c;
  c.circuit_fingerprint = 0x0123456789abcdefULL ^ salt;
  c.task_fingerprint = 0xfedcba9876543210ULL + salt;
  c.layers_done = 4242 + salt;
  c.sum = std::move(sum);
  return c;
}

::testing::AssertionResult SameCheckpoint(const Checkpoint& actual, const Checkpoint& expected) {
  if (actual.circuit_fingerprint != expected.circuit_fingerprint ||
      actual.task_fingerprint != expected.task_fingerprint || actual.layers_done != expected.layers_done) {
    return ::testing::AssertionFailure() << "header fields differ";
  }
  if (actual.sum.num_qubits() != expected.sum.num_qubits() || actual.sum.width() != expected.sum.width() ||
      actual.sum.is_complex() != expected.sum.is_complex()) {
    return ::testing::AssertionFailure() << "qubits/width/coefficient type differ";
  }
  try {
    actual.sum.visit([](const auto& s) { s.check_invariants(); });
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  const auto a = BitwiseTerms(actual.sum), b = BitwiseTerms(expected.sum);
  if (a != b)
    return ::testing::AssertionFailure() << "terms differ (" << a.size() << " vs " << b.size() << ")";
  return ::testing::AssertionSuccess();
}

// Three terms on 65 qubits (width 2), complex: a small file for the corruption tests.
Checkpoint SmallCheckpoint() {
  const std::vector<std::pair<std::string, Complex>> terms = {
      {"X0", {1.5, -0.0}}, {"Z64", {-2.0, 0.25}}, {"Y3 X64", {0.0, 1.0}}};
  return MakeCheckpoint(AnyPauliSum::from_labels(65, terms, /*force_complex=*/true));
}

// ---- layout ----

TEST(CheckpointTest, LayoutMatchesTheDocumentedFormatByteForByte) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<std::pair<std::string, Complex>> terms = {{"X0", {1.5, -0.0}}, {"Z64", {-2.0, tiny}}};
  Checkpoint c = MakeCheckpoint(AnyPauliSum::from_labels(65, terms));
  c.circuit_fingerprint = 0x0102030405060708ULL;
  ASSERT_TRUE(c.sum.is_complex());  // tiny is a nonzero imaginary part
  const std::string bytes = encode_checkpoint(c);

  ASSERT_EQ(bytes.size(), 72u + 2 * 8 * (2 * 2 + 2));
  EXPECT_EQ(bytes.substr(0, 8), "PSCKPT01");
  EXPECT_EQ(bytes.substr(kVersion, 4), std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ(GetU32(bytes, kWidth), 2u);
  EXPECT_EQ(GetU32(bytes, kType), 1u);
  EXPECT_EQ(GetU32(bytes, kReserved), static_cast<std::uint32_t>(std::countr_zero(c.sum.num_buckets())));
  EXPECT_EQ(GetU64(bytes, kQubits), 65u);
  EXPECT_EQ(bytes.substr(kCircuit, 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));  // little-endian
  EXPECT_EQ(GetU64(bytes, kTask), c.task_fingerprint);
  EXPECT_EQ(GetU64(bytes, kLayers), 4242u);
  EXPECT_EQ(GetU64(bytes, kCount), 2u);
  // Ascending key order (x words first): Z64 (x = 0) precedes X0 (x[0] = 1).
  const std::size_t x = kHeader, z = x + 2 * 2 * 8, coeffs = z + 2 * 2 * 8;
  EXPECT_EQ(GetU64(bytes, x + 0), 0u);  // Z64 x words
  EXPECT_EQ(GetU64(bytes, x + 8), 0u);
  EXPECT_EQ(GetU64(bytes, x + 16), 1u);  // X0 x words
  EXPECT_EQ(GetU64(bytes, x + 24), 0u);
  EXPECT_EQ(GetU64(bytes, z + 0), 0u);  // Z64 z words: qubit 64 = bit 0 of word 1
  EXPECT_EQ(GetU64(bytes, z + 8), 1u);
  EXPECT_EQ(GetU64(bytes, z + 16), 0u);  // X0 z words
  EXPECT_EQ(GetU64(bytes, z + 24), 0u);
  EXPECT_EQ(GetU64(bytes, coeffs + 0), std::bit_cast<std::uint64_t>(-2.0));
  EXPECT_EQ(GetU64(bytes, coeffs + 8), std::bit_cast<std::uint64_t>(tiny));
  EXPECT_EQ(GetU64(bytes, coeffs + 16), std::bit_cast<std::uint64_t>(1.5));
  EXPECT_EQ(GetU64(bytes, coeffs + 24), std::bit_cast<std::uint64_t>(-0.0));
  EXPECT_EQ(GetU64(bytes, bytes.size() - 8), Fnv1a64(std::string_view(bytes).substr(0, bytes.size() - 8)));
}

TEST(CheckpointTest, ChecksumHelperMatchesPublishedFnv1aVectors) {
  // Guards the test's own helper (used to check and reseal files) against the reference values.
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

// ---- round trips ----

TEST(CheckpointTest, RoundTripIsBitExactAtEveryWidthRealAndComplex) {
  const std::vector<std::pair<std::size_t, int>> cases = {{0, 1},   {1, 1},    {63, 1},   {64, 1},
                                                          {65, 2},  {127, 2},  {128, 2},  {129, 4},
                                                          {300, 8}, {600, 16}, {1000, 16}};
  std::uint64_t seed = 1;
  for (const auto& [qubits, width] : cases) {
    for (const bool complex : {false, true}) {
      SCOPED_TRACE(std::to_string(qubits) + (complex ? " qubits, complex" : " qubits, real"));
      const Checkpoint original = MakeCheckpoint(RandomSum(qubits, complex, 150, seed), seed);
      ++seed;
      ASSERT_EQ(original.sum.width(), width);
      ASSERT_EQ(original.sum.is_complex(), complex);
      const std::string bytes = encode_checkpoint(original);
      EXPECT_EQ(bytes.size(), 72 + 8 * original.sum.size() * (2 * width + (complex ? 2 : 1)));
      const Checkpoint decoded = decode_checkpoint(bytes, "rt");
      EXPECT_TRUE(SameCheckpoint(decoded, original));
      EXPECT_EQ(encode_checkpoint(decoded), bytes);  // re-encoding reproduces the file
    }
  }
}

TEST(CheckpointTest, SpecialCoefficientsSurviveBitForBit) {
  // -0.0 parts, smallest and largest subnormals, extremes: checked by value bits, not by ==.
  for (const bool complex : {false, true}) {
    const Checkpoint original = MakeCheckpoint(RandomSum(70, complex, 12, 99));
    const Checkpoint decoded = decode_checkpoint(encode_checkpoint(original));
    ASSERT_TRUE(SameCheckpoint(decoded, original));
    const auto bits = BitwiseTerms(decoded.sum);
    auto has = [&](std::uint64_t re, std::uint64_t im) {
      return std::any_of(bits.begin(), bits.end(),
                         [&](const BitTerm& t) { return std::get<1>(t) == re && std::get<2>(t) == im; });
    };
    const auto denorm = std::bit_cast<std::uint64_t>(std::numeric_limits<double>::denorm_min());
    const auto negative_zero = std::bit_cast<std::uint64_t>(-0.0);
    if (complex) {
      EXPECT_TRUE(has(negative_zero, std::bit_cast<std::uint64_t>(1.0)));
      EXPECT_TRUE(has(denorm, negative_zero));
    } else {
      EXPECT_TRUE(has(denorm, 0));
      EXPECT_TRUE(has(denorm | (std::uint64_t{1} << 63), 0));
      EXPECT_TRUE(has(0x000FFFFFFFFFFFFFULL, 0));
    }
  }
}

TEST(CheckpointTest, EmptySumsRoundTrip) {
  for (const auto& [qubits, complex] : std::vector<std::pair<std::size_t, bool>>{
           {0, false}, {5, true}, {64, false}, {1000, true}, {1024, false}}) {
    const Checkpoint original = MakeCheckpoint(AnyPauliSum(qubits, complex));
    const std::string bytes = encode_checkpoint(original);
    EXPECT_EQ(bytes.size(), 72u);
    EXPECT_EQ(GetU64(bytes, kCount), 0u);
    const Checkpoint decoded = decode_checkpoint(bytes);
    EXPECT_TRUE(SameCheckpoint(decoded, original));
    EXPECT_EQ(decoded.sum.size(), 0u);
  }
}

TEST(CheckpointTest, LargeRandomSumsRoundTrip) {
  for (const auto& [qubits, complex] :
       std::vector<std::pair<std::size_t, bool>>{{64, false}, {129, true}, {1000, true}}) {
    SCOPED_TRACE(qubits);
    const Checkpoint original = MakeCheckpoint(RandomSum(qubits, complex, 10000, 7 + qubits));
    ASSERT_EQ(original.sum.size(), 10000u);
    const Checkpoint decoded = decode_checkpoint(encode_checkpoint(original));
    EXPECT_TRUE(SameCheckpoint(decoded, original));
    EXPECT_TRUE(decoded.sum == original.sum);
  }
}

TEST(CheckpointTest, BytesAreDeterministicAndIndependentOfTermOrderAndHashSeed) {
  const Checkpoint a = MakeCheckpoint(RandomSum(200, true, 500, 3));
  const std::string bytes = encode_checkpoint(a);
  EXPECT_EQ(encode_checkpoint(a), bytes);

  // The same terms, given in reverse order, with another hash seed: the same bytes.
  Checkpoint b = a;
  b.sum.visit([](auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    auto terms = sum.sorted_terms();
    std::reverse(terms.begin(), terms.end());
    const int bits = sum.bucket_bits();
    sum = Sum::from_terms(sum.num_qubits(), std::move(terms), /*hash_seed=*/0x5eed);
    sum.refine(bits);
  });
  ASSERT_EQ(b.sum.num_buckets(), a.sum.num_buckets());
  EXPECT_EQ(encode_checkpoint(b), bytes);

  // A finer bucketing is recorded (bucket bits field) and restored on load.
  Checkpoint fine = a;
  fine.sum.visit([](auto& sum) { sum.refine(10); });
  const std::string fine_bytes = encode_checkpoint(fine);
  EXPECT_EQ(GetU32(fine_bytes, kReserved), 10u);
  ASSERT_EQ(fine_bytes.size(), bytes.size());
  const std::size_t between =
      bytes.size() - 8 - (kReserved + 4);  // everything after the field, before the checksum
  EXPECT_EQ(fine_bytes.substr(kReserved + 4, between), bytes.substr(kReserved + 4, between));
  EXPECT_EQ(decode_checkpoint(fine_bytes).sum.num_buckets(), 1024u);
  EXPECT_EQ(decode_checkpoint(bytes).sum.num_buckets(), a.sum.num_buckets());

  // Any field change changes the bytes.
  Checkpoint c = a;
  c.layers_done += 1;
  EXPECT_NE(encode_checkpoint(c), bytes);
}

// ---- save / load ----

class CheckpointFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("paulistrings-checkpoint-") + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(dir_, ignored);
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

TEST_F(CheckpointFileTest, SaveThenLoadRoundTripsAndOverwrites) {
  const fs::path path = dir_ / "run.ckpt";
  const Checkpoint first = MakeCheckpoint(RandomSum(129, true, 300, 11), 1);
  save_checkpoint(path, first);
  EXPECT_EQ(read_file(path), encode_checkpoint(first));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(path), first));

  const Checkpoint second = MakeCheckpoint(RandomSum(40, false, 50, 12), 2);
  save_checkpoint(path, second);
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(path), second));
  EXPECT_EQ(Entries(), std::vector<std::string>{"run.ckpt"});  // no temporary left behind
}

TEST_F(CheckpointFileTest, ALiveSumSavesTheSameBytesInPiecesOfAMebibyte) {
  // 60 000 terms at W = 2, complex: 2.9 MB, so the streamed save passes several pieces.
  const Checkpoint checkpoint = MakeCheckpoint(RandomSum(100, true, 60000, 21), 7);
  const fs::path path = dir_ / "live.ckpt";
  save_checkpoint(path, checkpoint.circuit_fingerprint, checkpoint.task_fingerprint, checkpoint.layers_done,
                  checkpoint.sum);
  const std::string bytes = read_file(path);
  EXPECT_GT(bytes.size(), std::size_t{2} << 20);
  EXPECT_EQ(bytes, encode_checkpoint(checkpoint));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(path), checkpoint));
  // Ordered on the run's threads (one, or three) instead of OpenMP's default: the same sum.
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(path, 1), checkpoint));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(path, 3), checkpoint));
}

TEST_F(CheckpointFileTest, AWriterThatThrowsLeavesThePreviousFileAndNoTemporary) {
  const fs::path path = dir_ / "out.bin";
  write_file_atomically(path, "previous");
  EXPECT_THROW(write_file_atomically(path,
                                     [](const ByteSink& sink) {
                                       sink("partial");
                                       throw std::runtime_error("writer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read_file(path), "previous");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
  write_file_atomically(path, [](const ByteSink& sink) {
    sink("one ");
    sink("two");
  });
  EXPECT_EQ(read_file(path), "one two");
}

TEST_F(CheckpointFileTest, SaveIntoAMissingDirectoryThrowsAndLeavesNothing) {
  const fs::path path = dir_ / "missing" / "run.ckpt";
  EXPECT_THROW(save_checkpoint(path, SmallCheckpoint()), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(CheckpointFileTest, FailedReplaceLeavesNeighboursIntactAndNoTemporary) {
  // The target is a directory, so the final rename fails (even as root): the temporary must be
  // removed and the checkpoint beside it untouched.
  const fs::path previous = dir_ / "previous.ckpt";
  const Checkpoint kept = SmallCheckpoint();
  save_checkpoint(previous, kept);
  fs::create_directory(dir_ / "target.ckpt");
  EXPECT_THROW(save_checkpoint(dir_ / "target.ckpt", MakeCheckpoint(RandomSum(10, false, 20, 5))),
               std::runtime_error);
  EXPECT_EQ(Entries(), (std::vector<std::string>{"previous.ckpt", "target.ckpt"}));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(previous), kept));
}

TEST_F(CheckpointFileTest, FailedSaveKeepsThePreviousFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write into a read-only directory";
  const fs::path path = dir_ / "run.ckpt";
  const Checkpoint kept = SmallCheckpoint();
  save_checkpoint(path, kept);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
  EXPECT_THROW(save_checkpoint(path, MakeCheckpoint(RandomSum(10, false, 20, 5))), std::runtime_error);
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_TRUE(SameCheckpoint(load_checkpoint(path), kept));
  EXPECT_EQ(Entries(), std::vector<std::string>{"run.ckpt"});
}

TEST_F(CheckpointFileTest, LoadNamesThePathInErrors) {
  EXPECT_THROW(load_checkpoint(dir_ / "absent.ckpt"), std::runtime_error);
  const fs::path path = dir_ / "bad.ckpt";
  std::string bytes = encode_checkpoint(SmallCheckpoint());
  bytes[bytes.size() / 2] ^= 0x10;
  write_file_atomically(path, bytes);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { load_checkpoint(path); },
                                              {std::string("checkpoint ") + path.string() +
                                               ": checksum mismatch: the file is corrupted or truncated"}));
}

TEST_F(CheckpointFileTest, PartsAreFoundCheckedAndReplaced) {
  const fs::path path = dir_ / "run.ckpt";
  EXPECT_EQ(checkpoint_part_path(path, 1, 4), dir_ / "run.ckpt.part-1-of-4");
  EXPECT_EQ(checkpoint_parts(path), 0u);  // nothing there
  save_checkpoint(path, SmallCheckpoint());
  EXPECT_EQ(checkpoint_parts(path), 0u);  // a single file
  // Names that only look like parts of this checkpoint are never read nor removed.
  for (const char* name : {"run.ckpt.part-x-of-2", "run.ckpt.part-2-of-2", "run.ckpt.part-0-of-", "other.ckpt.part-0-of-1"})
    write_file_atomically(dir_ / name, "not a part");
  EXPECT_EQ(checkpoint_parts(path), 0u);

  for (std::size_t r = 0; r < 2; ++r) save_checkpoint(checkpoint_part_path(path, r, 2), SmallCheckpoint());
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { checkpoint_parts(path); },
                                              {"checkpoint " + path.string() + ": both the file and 2 parts (",
                                               "remove the stale one"}));
  remove_other_checkpoints(path, 2);  // a 2-rank run wrote its parts: the single file goes
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(checkpoint_parts(path), 2u);

  save_checkpoint(checkpoint_part_path(path, 0, 4), SmallCheckpoint());  // a 4-rank run, part 0 written
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { checkpoint_parts(path); },
                                              {"parts of runs with 2 and 4 ranks", "remove the stale ones"}));
  remove_other_checkpoints(path, 4);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { checkpoint_parts(path); },
      {"part 1 of 4 (" + checkpoint_part_path(path, 1, 4).string() + ") is missing"}));

  remove_other_checkpoints(path, 0);  // a single-file writer: every part goes, the look-alikes stay
  EXPECT_EQ(Entries(), (std::vector<std::string>{"other.ckpt.part-0-of-1", "run.ckpt.part-0-of-",
                                                 "run.ckpt.part-2-of-2", "run.ckpt.part-x-of-2"}));
  EXPECT_EQ(checkpoint_parts(path), 0u);
}

TEST_F(CheckpointFileTest, ShareOfARankIsItsPartsAddedWithAnyRankCount) {
  const fs::path path = dir_ / "run.ckpt";
  std::vector<AnyPauliSum> sums;
  for (std::uint64_t r = 0; r < 4; ++r) sums.push_back(RandomSum(70, true, 40, 20 + r));
  for (std::size_t r = 0; r < 4; ++r) save_checkpoint(checkpoint_part_path(path, r, 4), MakeCheckpoint(sums[r]));
  // 4 parts on 2 ranks: rank 1 reads parts 1 and 3; on 1 rank, all four; each the header of its parts.
  const Checkpoint rank1 = load_checkpoint_share(path, 4, 1, 2);
  EXPECT_TRUE(SameCheckpoint(rank1, MakeCheckpoint(sums[1] + sums[3])));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint_share(path, 4, 0, 1), MakeCheckpoint(sums[0] + sums[1] + sums[2] + sums[3])));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint_share(path, 4, 2, 4), MakeCheckpoint(sums[2])));
  // More ranks than parts: rank 5 of 8 starts empty, with part 0's header and coefficient type.
  const Checkpoint empty = load_checkpoint_share(path, 4, 5, 8);
  EXPECT_TRUE(SameCheckpoint(empty, MakeCheckpoint(AnyPauliSum(70, true))));
  EXPECT_TRUE(empty.sum.is_complex());
  // Such a rank reads part 0's header only: a body it never reads may be damaged (its owner finds it).
  const std::string part0 = read_file(checkpoint_part_path(path, 0, 4));
  write_file_atomically(checkpoint_part_path(path, 0, 4), std::string_view(part0).substr(0, 64 + 10));
  EXPECT_TRUE(SameCheckpoint(load_checkpoint_share(path, 4, 5, 8), MakeCheckpoint(AnyPauliSum(70, true))));
  EXPECT_THROW(load_checkpoint_share(path, 4, 0, 8), std::invalid_argument);
  write_file_atomically(checkpoint_part_path(path, 0, 4), part0);
  // A part of another checkpoint among those a rank reads: refused, naming it.
  save_checkpoint(checkpoint_part_path(path, 3, 4), MakeCheckpoint(sums[3], 1));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { load_checkpoint_share(path, 4, 1, 2); },
      {"checkpoint " + path.string() + ": part 3 of 4 was written after another layer or for another task than part 1"}));
  EXPECT_THROW(load_checkpoint_share(path, 4, 2, 2), std::invalid_argument);  // rank ≥ ranks
}

// ---- damage ----

TEST(CheckpointTest, EverySingleByteFlipIsRefused) {
  const std::string good = encode_checkpoint(MakeCheckpoint(RandomSum(129, true, 20, 21)));
  ASSERT_EQ(good.size(), 72u + 20 * 8 * (2 * 4 + 2));
  // Every byte of the header; past it (where the checksum catches everything) every seventh byte under
  // the sanitizers (testing/sanitizers.h).
  const std::size_t body_step = testing::kUnderSanitizers ? 7 : 1;
  for (std::size_t at = 0; at < good.size(); at += at < kHeader ? 1 : body_step) {
    for (const unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ mask);
      SCOPED_TRACE(std::string("byte ") + std::to_string(at) + " xor " + std::to_string(mask));
      // Header damage may be caught by an earlier check; anything after the header by the checksum.
      const std::string expected =
          at < kHeader ? "checkpoint flip: " : "checkpoint flip: checksum mismatch: the file is corrupted";
      ASSERT_TRUE(ThrowsInvalidArgumentMentioning([&] { decode_checkpoint(bad, "flip"); }, {expected}));
    }
  }
}

TEST(CheckpointTest, EveryTruncationAndAnExtensionAreRefused) {
  const std::string good = encode_checkpoint(SmallCheckpoint());
  for (std::size_t length = 0; length < good.size(); ++length) {
    SCOPED_TRACE(length);
    const std::string cut = good.substr(0, length);
    if (length < kHeader) {
      ASSERT_TRUE(ThrowsInvalidArgumentMentioning([&] { decode_checkpoint(cut, "cut"); },
                                                  {std::string("checkpoint cut: truncated: the file has ") +
                                                   std::to_string(length) + " bytes, less than the 64"}));
    } else {
      ASSERT_TRUE(ThrowsInvalidArgumentMentioning(
          [&] { decode_checkpoint(cut, "cut"); },
          {std::string("checkpoint cut: term count 3 needs a file of ") + std::to_string(good.size()) +
           " bytes but it has " + std::to_string(length) + " (truncated or corrupted)"}));
    }
  }
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { decode_checkpoint(good + '\0'); },
                                              {"checkpoint <checkpoint>: term count 3 needs a file of"}));
}

std::string DecodeError(const std::string& bytes) {
  try {
    decode_checkpoint(bytes, "f");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CheckpointTest, HeaderChecksGiveTheirMessages) {
  const std::string good = encode_checkpoint(SmallCheckpoint());
  auto with_u32 = [&](std::size_t at, std::uint32_t value) {
    std::string bytes = good;
    PutU32(bytes, at, value);
    Reseal(bytes);
    return bytes;
  };
  auto with_u64 = [&](std::size_t at, std::uint64_t value) {
    std::string bytes = good;
    PutU64(bytes, at, value);
    Reseal(bytes);
    return bytes;
  };
  std::string foreign = good;
  foreign[7] = '2';
  Reseal(foreign);
  EXPECT_EQ(DecodeError(foreign),
            "checkpoint f: not a paulistrings checkpoint (the file does not start with "
            "\"PSCKPT01\")");
  EXPECT_EQ(DecodeError(with_u32(kVersion, 7)),
            "checkpoint f: format version 7 is not supported (this build reads 1)");
  EXPECT_EQ(DecodeError(with_u32(kWidth, 3)), "checkpoint f: word width 3 is not one of 1, 2, 4, 8, 16");
  EXPECT_EQ(DecodeError(with_u32(kWidth, 4)),
            "checkpoint f: word width 4 does not match 65 qubits (expected width 2)");
  EXPECT_EQ(DecodeError(with_u64(kQubits, 64)),
            "checkpoint f: word width 2 does not match 64 qubits (expected width 1)");
  EXPECT_EQ(DecodeError(with_u64(kQubits, 1025)), "checkpoint f: qubit count 1025 exceeds the maximum 1024");
  EXPECT_EQ(DecodeError(with_u64(kQubits, ~std::uint64_t{0})),
            "checkpoint f: qubit count 18446744073709551615 exceeds the maximum 1024");
  EXPECT_EQ(DecodeError(with_u32(kType, 2)),
            "checkpoint f: coefficient type 2 is not 0 (real double) or 1 (complex double)");
  EXPECT_EQ(DecodeError(with_u32(kReserved, 41)), "checkpoint f: bucket bits 41 exceed 30");
  EXPECT_EQ(DecodeError(with_u32(kReserved, 31)), "checkpoint f: bucket bits 31 exceed 30");  // no sum has more
}

TEST(CheckpointTest, TermCountMustMatchTheSizeWithoutOverflow) {
  const std::string good = encode_checkpoint(SmallCheckpoint());  // 3 terms of 48 bytes: 216 bytes
  ASSERT_EQ(good.size(), 216u);
  auto with_count = [&](std::uint64_t count) {
    std::string bytes = good;
    PutU64(bytes, kCount, count);
    Reseal(bytes);
    return DecodeError(bytes);
  };
  EXPECT_EQ(with_count(std::uint64_t{1} << 63),
            "checkpoint f: term count 9223372036854775808 is impossible: at 48 bytes per term the file would "
            "exceed 2^64 bytes (it has 216)");
  EXPECT_EQ(
      with_count(~std::uint64_t{0}),
      "checkpoint f: term count 18446744073709551615 is impossible: at 48 bytes per term the file would "
      "exceed 2^64 bytes (it has 216)");
  // Just below the overflow guard: the product fits, so the size comparison refuses it.
  const std::uint64_t largest = (~std::uint64_t{0} - 72) / 48;
  std::string expected = "checkpoint f: term count ";
  expected.append(std::to_string(largest))
      .append(" needs a file of ")
      .append(std::to_string(72 + largest * 48));
  expected.append(" bytes but it has 216 (truncated or corrupted)");
  EXPECT_EQ(with_count(largest), expected);
  EXPECT_EQ(with_count(4),
            "checkpoint f: term count 4 needs a file of 264 bytes but it has 216 (truncated or "
            "corrupted)");
  EXPECT_EQ(with_count(2),
            "checkpoint f: term count 2 needs a file of 168 bytes but it has 216 (truncated or "
            "corrupted)");
  // Declaring the coefficients real changes the implied size too (40 bytes per term).
  std::string real_type = good;
  PutU32(real_type, kType, 0);
  Reseal(real_type);
  EXPECT_EQ(DecodeError(real_type),
            "checkpoint f: term count 3 needs a file of 192 bytes but it has 216 "
            "(truncated or corrupted)");
}

TEST(CheckpointTest, ChecksumMismatchIsReported) {
  std::string bytes = encode_checkpoint(SmallCheckpoint());
  bytes[kHeader + 3] ^= 0x04;  // a key bit, checksum left stale
  EXPECT_EQ(DecodeError(bytes), "checkpoint f: checksum mismatch: the file is corrupted or truncated");
  std::string stale = encode_checkpoint(SmallCheckpoint());
  stale.back() ^= 0x01;  // the checksum itself
  EXPECT_EQ(DecodeError(stale), "checkpoint f: checksum mismatch: the file is corrupted or truncated");
  std::string layers = encode_checkpoint(SmallCheckpoint());
  layers[kLayers] ^= 0x01;  // a header field the structural checks cannot see
  EXPECT_EQ(DecodeError(layers), "checkpoint f: checksum mismatch: the file is corrupted or truncated");
}

TEST(CheckpointTest, BodyChecksGiveTheirMessages) {
  // SmallCheckpoint's sorted terms: Z64 (x=0,0 z=0,1), X0 (x=1,0), X64 Y3 (x=8,1 z=8,0); 3 terms × 2 words.
  const std::string good = encode_checkpoint(SmallCheckpoint());
  const std::size_t x = kHeader, z = x + 3 * 2 * 8, coeffs = z + 3 * 2 * 8;
  auto corrupted = [&](auto&& edit) {
    std::string bytes = good;
    edit(bytes);
    Reseal(bytes);
    return DecodeError(bytes);
  };
  EXPECT_EQ(corrupted([&](std::string& b) { PutU64(b, x + 8, GetU64(b, x + 8) | 2); }),
            "checkpoint f: term 0 sets the x bit of qubit 65, beyond the 65 qubits");
  EXPECT_EQ(corrupted([&](std::string& b) { PutU64(b, z + 2 * 16 + 8, std::uint64_t{1} << 63); }),
            "checkpoint f: term 2 sets the z bit of qubit 127, beyond the 65 qubits");
  EXPECT_EQ(corrupted([&](std::string& b) {
              PutU64(b, coeffs + 16 + 8,
                     std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()));
            }),
            "checkpoint f: term 1 has a coefficient that is not finite: (1.5,nan)");
  EXPECT_EQ(corrupted([&](std::string& b) {
              PutU64(b, coeffs, std::bit_cast<std::uint64_t>(-std::numeric_limits<double>::infinity()));
            }),
            "checkpoint f: term 0 has a coefficient that is not finite: (-inf,0.25)");
  EXPECT_EQ(corrupted([&](std::string& b) {
              PutU64(b, coeffs + 2 * 16, 0);
              PutU64(b, coeffs + 2 * 16 + 8, std::bit_cast<std::uint64_t>(-0.0));
            }),
            "checkpoint f: term 2 has an exactly zero coefficient (a sum never stores one)");
  EXPECT_EQ(corrupted([&](std::string& b) {  // term 2's key becomes X0, term 1's
              PutU64(b, x + 2 * 16, 1);
              PutU64(b, x + 2 * 16 + 8, 0);
              PutU64(b, z + 2 * 16, 0);
            }),
            "checkpoint f: terms 1 and 2 have the same key X0 (duplicate keys)");
}

TEST(CheckpointTest, TermsInAnotherOrderAreAcceptedAndRepeatsStillFound) {
  // The writer's order is ascending by key; a reader takes any order (another writer's file).
  const Checkpoint original = SmallCheckpoint();
  std::string bytes = encode_checkpoint(original);
  const std::size_t x = kHeader, z = x + 3 * 2 * 8, coeffs = z + 3 * 2 * 8;
  const auto swap_terms = [&](std::size_t a, std::size_t b) {
    for (const auto& [column, stride] : {std::pair{x, std::size_t{16}}, {z, 16}, {coeffs, 16}}) {
      for (std::size_t k = 0; k < stride; ++k) std::swap(bytes[column + a * stride + k], bytes[column + b * stride + k]);
    }
  };
  swap_terms(0, 2);
  Reseal(bytes);
  EXPECT_TRUE(SameCheckpoint(decode_checkpoint(bytes), original));
  // Terms 0 and 1 now both X64 Y3 (out of order: the repeat is found through the sorted index).
  PutU64(bytes, x + 16, GetU64(bytes, x));
  PutU64(bytes, x + 16 + 8, GetU64(bytes, x + 8));
  PutU64(bytes, z + 16, GetU64(bytes, z));
  PutU64(bytes, z + 16 + 8, GetU64(bytes, z + 8));
  Reseal(bytes);
  EXPECT_EQ(DecodeError(bytes), "checkpoint f: terms 0 and 1 have the same key Y3 X64 (duplicate keys)");
}

TEST(CheckpointTest, RealBodyChecksAndZeroQubitSums) {
  // Real coefficients: a NaN is refused; on 0 qubits every key bit is out of range.
  const std::vector<std::pair<std::string, Complex>> terms = {{"XZ", 2.0}, {"YI", -1.0}};
  const std::string good = encode_checkpoint(MakeCheckpoint(AnyPauliSum::from_labels(2, terms)));
  ASSERT_EQ(GetU32(good, kType), 0u);
  std::string nan = good;
  PutU64(nan, kHeader + 2 * 2 * 8 + 8,
         std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()));
  Reseal(nan);
  EXPECT_EQ(DecodeError(nan), "checkpoint f: term 1 has a coefficient that is not finite: nan");
  std::string high = good;
  PutU64(high, kHeader + 2 * 8, std::uint64_t{1} << 2);  // z column, term 0: qubit 2 of 2
  Reseal(high);
  EXPECT_EQ(DecodeError(high), "checkpoint f: term 0 sets the z bit of qubit 2, beyond the 2 qubits");

  const std::vector<std::pair<std::string, Complex>> identity = {{"", 3.0}};
  std::string zero_qubits = encode_checkpoint(MakeCheckpoint(AnyPauliSum::from_labels(0, identity)));
  ASSERT_EQ(zero_qubits.size(), 72u + 24);
  EXPECT_TRUE(
      SameCheckpoint(decode_checkpoint(zero_qubits), MakeCheckpoint(AnyPauliSum::from_labels(0, identity))));
  PutU64(zero_qubits, kHeader, 1);
  Reseal(zero_qubits);
  EXPECT_EQ(DecodeError(zero_qubits), "checkpoint f: term 0 sets the x bit of qubit 0, beyond the 0 qubits");
}

}  // namespace
}  // namespace paulistrings::io
