// Checkpoints of several coefficient columns (io/checkpoint.h, format version 2): the documented layout,
// bit-exact round trips in the writer's row order (real and complex, widths 1 and 2, signed zeros inside a
// row), every check of the reader naming what failed, and version-1 files read as one column while the
// one-column reader refuses a version-2 file. Version 3 (every group of a split sweep): round trips of
// every group, the layout, the checks of reader and writer, and each reader refusing the others' versions.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/io/checkpoint_bytes.test.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/temp_dir.h"

namespace paulistrings::io {
namespace {

using testing::ThrowsInvalidArgumentMentioning;

using namespace test_bytes;

constexpr std::size_t kColumns = 64, kCone = 72;

template <Coefficient C>
std::uint64_t Bits(const C& c, int part) {
  if constexpr (std::same_as<C, double>) {
    return std::bit_cast<std::uint64_t>(c);
  } else {
    return std::bit_cast<std::uint64_t>(part == 0 ? c.real() : c.imag());
  }
}

/// `count` distinct random keys on `qubits` qubits (in random order) and `columns` coefficients each, some
/// of them ±0 but never a whole row.
template <int W, Coefficient C>
ColumnRows<W, C> RandomRows(std::size_t qubits, std::size_t count, std::size_t columns, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ColumnRows<W, C> rows;
  while (rows.keys.size() < count) {
    PauliString<W> key;
    for (std::size_t q = 0; q < qubits; ++q) {
      const auto letter = rng() % 4;
      if (letter & 1) key.x[q / 64] |= std::uint64_t{1} << (q % 64);
      if (letter & 2) key.z[q / 64] |= std::uint64_t{1} << (q % 64);
    }
    if (std::find(rows.keys.begin(), rows.keys.end(), key) == rows.keys.end()) rows.keys.push_back(key);
  }
  std::normal_distribution<double> normal;
  for (std::size_t t = 0; t < count; ++t) {
    for (std::size_t j = 0; j < columns; ++j) {
      const double re =
          j == 0 ? normal(rng) + 3.0 : (rng() % 3 == 0 ? (rng() % 2 ? -0.0 : 0.0) : normal(rng));
      if constexpr (std::same_as<C, double>) {
        rows.coefficients.push_back(re);
      } else {
        rows.coefficients.push_back(C(re, rng() % 2 ? -0.0 : normal(rng)));
      }
    }
  }
  return rows;
}

ColumnsHeader Header(std::size_t qubits, std::size_t columns) {
  ColumnsHeader h;
  h.circuit_fingerprint = 0x0123456789abcdefULL;
  h.task_fingerprint = 0xfedcba9876543210ULL;
  h.layers_done = 77;
  h.bucket_bits = 9;
  h.num_qubits = qubits;
  h.columns = columns;
  return h;
}

template <int W, Coefficient C>
void ExpectRoundTrip(std::size_t qubits, std::size_t columns) {
  SCOPED_TRACE("W=" + std::to_string(W) + " complex=" + std::to_string(std::same_as<C, Complex>) +
               " columns=" + std::to_string(columns));
  const ColumnRows<W, C> rows = RandomRows<W, C>(qubits, 40, columns, qubits * 31 + columns);
  const ColumnsHeader header = Header(qubits, columns);
  const std::string bytes = encode_columns_checkpoint<W, C>(header, rows.keys, rows.coefficients);
  const std::size_t K = std::same_as<C, Complex> ? 2 : 1;
  ASSERT_EQ(bytes.size(), 80 + 8 * W + 8 * 40 * (2 * W + columns * K));
  EXPECT_EQ(GetU64(bytes, kColumns), columns);
  const ColumnsCheckpoint back = decode_columns_checkpoint(bytes, "rt");
  EXPECT_EQ(back.header.circuit_fingerprint, header.circuit_fingerprint);
  EXPECT_EQ(back.header.task_fingerprint, header.task_fingerprint);
  EXPECT_EQ(back.header.layers_done, 77u);
  EXPECT_EQ(back.header.bucket_bits, 9);
  EXPECT_EQ(back.header.num_qubits, qubits);
  EXPECT_EQ(back.header.columns, columns);
  // The light cone written for an empty one: the keys' supports.
  ASSERT_EQ(back.header.light_cone.size(), static_cast<std::size_t>(W));
  for (int w = 0; w < W; ++w) {
    std::uint64_t support = 0;
    for (const auto& key : rows.keys) support |= key.x[w] | key.z[w];
    EXPECT_EQ(back.header.light_cone[w], support);
  }
  const auto* got = std::get_if<ColumnRows<W, C>>(&back.rows);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->keys, rows.keys);  // the writer's order, not key order
  ASSERT_EQ(got->coefficients.size(), rows.coefficients.size());
  for (std::size_t i = 0; i < rows.coefficients.size(); ++i) {
    for (int part = 0; part < static_cast<int>(K); ++part)
      ASSERT_EQ(Bits(got->coefficients[i], part), Bits(rows.coefficients[i], part)) << i;  // ±0 too
  }
  // Written again from what was read: the same bytes.
  EXPECT_EQ((encode_columns_checkpoint<W, C>(back.header, got->keys, got->coefficients)), bytes);
}

TEST(ColumnsCheckpoint, RoundTripIsBitExactInTheWritersOrder) {
  ExpectRoundTrip<1, double>(7, 1);
  ExpectRoundTrip<1, double>(7, 6);
  ExpectRoundTrip<1, Complex>(40, 4);
  ExpectRoundTrip<2, double>(100, 3);
  ExpectRoundTrip<2, Complex>(65, 9);
}

TEST(ColumnsCheckpoint, LayoutMatchesTheDocumentedFormat) {
  ColumnRows<1, double> rows;
  PauliString<1> a, b;
  a.x[0] = 0b01;  // X0
  b.z[0] = 0b10;  // Z1
  rows.keys = {b, a};
  rows.coefficients = {0.5, -0.0, 2.0, 0.25};
  ColumnsHeader header = Header(3, 2);
  header.light_cone = {0b111};
  const std::string bytes = encode_columns_checkpoint<1, double>(header, rows.keys, rows.coefficients);
  ASSERT_EQ(bytes.size(), 80u + 8 + 2 * 8 * (2 + 2));
  EXPECT_EQ(bytes.substr(0, 8), "PSCKPT01");
  EXPECT_EQ(GetU64(bytes, kVersion) & 0xffffffff, 2u);
  EXPECT_EQ(GetU64(bytes, 12) & 0xffffffff, 1u);  // width
  EXPECT_EQ(GetU64(bytes, 16) & 0xffffffff, 0u);  // real
  EXPECT_EQ(GetU64(bytes, 20) & 0xffffffff, 9u);  // bucket bits
  EXPECT_EQ(GetU64(bytes, 24), 3u);
  EXPECT_EQ(GetU64(bytes, 48), 77u);
  EXPECT_EQ(GetU64(bytes, kCount), 2u);
  EXPECT_EQ(GetU64(bytes, kColumns), 2u);
  EXPECT_EQ(GetU64(bytes, kCone), 0b111u);
  EXPECT_EQ(GetU64(bytes, 80), 0u);   // x of row 0 (Z1)
  EXPECT_EQ(GetU64(bytes, 88), 1u);   // x of row 1 (X0)
  EXPECT_EQ(GetU64(bytes, 96), 2u);   // z of row 0
  EXPECT_EQ(GetU64(bytes, 104), 0u);  // z of row 1
  EXPECT_EQ(GetU64(bytes, 112), std::bit_cast<std::uint64_t>(0.5));
  EXPECT_EQ(GetU64(bytes, 120), std::bit_cast<std::uint64_t>(-0.0));
  EXPECT_EQ(GetU64(bytes, 128), std::bit_cast<std::uint64_t>(2.0));
  EXPECT_EQ(GetU64(bytes, 136), std::bit_cast<std::uint64_t>(0.25));
  EXPECT_EQ(GetU64(bytes, 144), Fnv1a64(std::string_view(bytes).substr(0, 144)));
}

std::string SmallFile() {
  const ColumnRows<2, Complex> rows = RandomRows<2, Complex>(70, 3, 4, 5);
  return encode_columns_checkpoint<2, Complex>(Header(70, 4), rows.keys, rows.coefficients);
}

/// The message of the std::invalid_argument `decode` throws, or "no error".
template <class Decode>
std::string DecodeErrorOf(Decode&& decode) {
  try {
    decode();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

std::string ColumnsDecodeError(const std::string& bytes) {
  return DecodeErrorOf([&] { decode_columns_checkpoint(bytes, "f"); });
}

TEST(ColumnsCheckpoint, EveryByteFlipAndEveryTruncationIsRefused) {
  const std::string good = SmallFile();
  ASSERT_EQ(good.size(), 80u + 16 + 3 * 8 * (4 + 8));
  for (std::size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x40);
    ASSERT_NE(ColumnsDecodeError(bad).find("checkpoint f: "), std::string::npos) << at;
  }
  for (std::size_t length = 0; length < good.size(); ++length) {
    const std::string error = ColumnsDecodeError(good.substr(0, length));
    if (length < 64) {
      ASSERT_NE(error.find("truncated: the file has " + std::to_string(length) + " bytes, less than the 64"),
                std::string::npos)
          << error;
    } else if (length < 72) {
      ASSERT_EQ(error, "checkpoint f: truncated: the file has " + std::to_string(length) +
                           " bytes, less than the 72-byte header of format version 2");
    } else {
      ASSERT_EQ(error, "checkpoint f: term count 3 needs a file of " + std::to_string(good.size()) +
                           " bytes but it has " + std::to_string(length) + " (truncated or corrupted)");
    }
  }
  std::string flipped = good;
  flipped[200] ^= 1;
  EXPECT_EQ(ColumnsDecodeError(flipped),
            "checkpoint f: checksum mismatch: the file is corrupted or truncated");
}

TEST(ColumnsCheckpoint, HeaderAndBodyChecksNameWhatFailed) {
  const std::string good = SmallFile();
  const auto with = [&](auto&& change) {
    std::string bytes = good;
    change(bytes);
    Reseal(bytes);
    return ColumnsDecodeError(bytes);
  };
  EXPECT_EQ(with([](std::string& b) { PutU32(b, kVersion, 7); }),
            "checkpoint f: format version 7 is not supported (this build reads 1 and 2)");
  EXPECT_EQ(with([](std::string& b) { PutU64(b, kColumns, 0); }),
            "checkpoint f: column count 0: a checkpoint holds at least one coefficient column");
  EXPECT_EQ(with([](std::string& b) { PutU64(b, kColumns, ~std::uint64_t{0}); }),
            "checkpoint f: column count 18446744073709551615 exceeds the maximum 4294967296");
  EXPECT_EQ(with([](std::string& b) { PutU64(b, kColumns, 5); }),
            "checkpoint f: term count 3 needs a file of " + std::to_string(good.size() + 3 * 16) +
                " bytes but it has " + std::to_string(good.size()) + " (truncated or corrupted)");
  EXPECT_EQ(with([](std::string& b) {
              PutU64(b, kCount, std::uint64_t{1} << 62);
            }).find("checkpoint f: term count 4611686018427387904 is impossible"),
            0u);
  // Rows start after the header and the light cone (2 words): x at 88, z at 136, coefficients at 184.
  EXPECT_EQ(with([](std::string& b) { PutU64(b, 88 + 8, GetU64(b, 88 + 8) | (std::uint64_t{1} << 10)); }),
            "checkpoint f: term 0 sets the x bit of qubit 74, beyond the 70 qubits");
  EXPECT_EQ(with([](std::string& b) { PutU64(b, kCone + 8, ~std::uint64_t{0}); }),
            "checkpoint f: the light cone names qubit 70, beyond the 70 qubits");
  EXPECT_EQ(with([](std::string& b) { PutU64(b, kCone, 0); }).find("checkpoint f: term 0 acts on qubit "),
            0u);
  EXPECT_EQ(with([](std::string& b) {
              PutU64(b, 184 + 16 * 5, std::bit_cast<std::uint64_t>(std::numeric_limits<double>::infinity()));
            }).find("checkpoint f: term 1, column 1 has a coefficient that is not finite: (inf,"),
            0u);
  EXPECT_EQ(
      with([](std::string& b) {
        for (int i = 0; i < 8; ++i) PutU64(b, 184 + 8 * i, 0);
      }),
      "checkpoint f: term 0 has every coefficient zero (a checkpoint holds only terms some column has)");
  EXPECT_EQ(with([](std::string& b) {
              for (std::size_t at : {88, 136}) {  // row 1's key := row 0's
                PutU64(b, at + 16, GetU64(b, at));
                PutU64(b, at + 24, GetU64(b, at + 8));
              }
            }).find("checkpoint f: terms 0 and 1 have the same key "),
            0u);
}

TEST(ColumnsCheckpoint, AWriterRefusesSizesThatDisagree) {
  const ColumnRows<1, double> rows = RandomRows<1, double>(5, 3, 2, 1);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { encode_columns_checkpoint<1, double>(Header(5, 0), rows.keys, rows.coefficients); },
      {"at least one column"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { encode_columns_checkpoint<1, double>(Header(5, 4), rows.keys, rows.coefficients); },
      {"6 coefficients for 3 keys × 4 columns"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { encode_columns_checkpoint<1, double>(Header(65, 2), rows.keys, rows.coefficients); },
      {"word width 1 does not match 65 qubits"}));
}

TEST(ColumnsCheckpoint, VersionOneFilesReadAsOneColumnAndTheOrdinaryReaderRefusesVersionTwo) {
  Checkpoint one;
  one.circuit_fingerprint = 5;
  one.task_fingerprint = 6;
  one.layers_done = 7;
  one.sum =
      AnyPauliSum::from_labels(70, std::vector<std::pair<std::string, Complex>>{
                                       {"Z69", {2.0, 0.0}}, {"X0 Y1", {-0.5, 0.0}}, {"Z3", {0.25, 0.0}}});
  const std::string v1 = encode_checkpoint(one);
  const ColumnsCheckpoint read = decode_columns_checkpoint(v1, "v1");
  EXPECT_EQ(read.header.columns, 1u);
  EXPECT_EQ(read.header.layers_done, 7u);
  EXPECT_EQ(read.header.task_fingerprint, 6u);
  const auto* rows = std::get_if<ColumnRows<2, double>>(&read.rows);
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->keys.size(), 3u);
  EXPECT_TRUE(std::is_sorted(rows->keys.begin(), rows->keys.end()));  // version 1 is in key order
  EXPECT_EQ(read.header.light_cone, (std::vector<std::uint64_t>{0b1011, std::uint64_t{1} << 5}));
  // The one-column reader: version 1 exactly as before, version 2 refused naming it.
  EXPECT_EQ(encode_checkpoint(decode_checkpoint(v1)), v1);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { decode_checkpoint(SmallFile(), "s"); },
                                              {"checkpoint s: format version 2 holds several coefficient "
                                               "columns a term (a sweep's checkpoint)"}));
}

class ColumnsCheckpointFile : public testing::TempDirTest {};

TEST_F(ColumnsCheckpointFile, SaveAndLoadMatchTheBytesAndReplaceTheFile) {
  const ColumnRows<1, Complex> rows = RandomRows<1, Complex>(9, 50, 3, 8);
  const auto path = dir_ / "s.ckpt";
  save_columns_checkpoint<1, Complex>(path, Header(9, 3), rows.keys, rows.coefficients);
  save_columns_checkpoint<1, Complex>(path, Header(9, 3), rows.keys, rows.coefficients);
  EXPECT_EQ(Entries(), std::vector<std::string>{"s.ckpt"});
  EXPECT_EQ(read_file(path),
            (encode_columns_checkpoint<1, Complex>(Header(9, 3), rows.keys, rows.coefficients)));
  const ColumnsCheckpoint back = load_columns_checkpoint(path);
  EXPECT_EQ((std::get<ColumnRows<1, Complex>>(back.rows).keys), rows.keys);
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { load_checkpoint(path); },
                                              {path.string() + ": format version 2"}));
}

// ---- version 3: every group of a split sweep ----

/// Three groups of a sweep of 6 value columns with one gradient (a group of n columns holds 2n): columns
/// 0–1, column 2 run apart, columns 3–5; each its own rows, bucket count and light cone.
template <int W, Coefficient C>
struct ThreeGroups {
  std::vector<ColumnRows<W, C>> rows;
  std::vector<ColumnGroupRows<W, C>> groups;
  explicit ThreeGroups(std::size_t qubits) {
    const std::vector<ColumnGroupPlace> places = {
        {0, 2, 40, false}, {2, 1, 0, true}, {3, 3, 1u << 20, false}};
    for (std::size_t g = 0; g < places.size(); ++g) {
      rows.push_back(RandomRows<W, C>(qubits, 5 + 7 * g, 2 * places[g].count, 100 + g));
    }
    for (std::size_t g = 0; g < places.size(); ++g) {
      ColumnGroupRows<W, C> group;
      group.place = places[g];
      group.header = Header(qubits, 2 * places[g].count);
      group.header.bucket_bits = static_cast<int>(3 + g);
      if (g == 0) {  // every qubit; the others get their keys' supports
        for (std::size_t w = 0; w < static_cast<std::size_t>(W); ++w) {
          const std::size_t left = qubits > 64 * w ? qubits - 64 * w : 0;
          group.header.light_cone.push_back(left >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left) - 1);
        }
      }
      group.keys = rows[g].keys;
      group.coefficients = rows[g].coefficients;
      groups.push_back(group);
    }
  }
  std::string bytes() const { return encode_groups_checkpoint<W, C>(groups); }
};

template <int W, Coefficient C>
void ExpectGroupsRoundTrip(std::size_t qubits) {
  SCOPED_TRACE("W=" + std::to_string(W) + " complex=" + std::to_string(std::same_as<C, Complex>));
  const ThreeGroups<W, C> three(qubits);
  const std::string bytes = three.bytes();
  EXPECT_EQ(GetU32(bytes, kVersion), 3u);
  EXPECT_EQ(GetU32(bytes, kReserved), 3u);  // the group count
  EXPECT_EQ(GetU64(bytes, kCount), 6u);     // the value columns
  // Each group's record, then its version-2 file, exactly what encode_columns_checkpoint gives.
  std::size_t at = 64;
  for (const auto& group : three.groups) {
    const std::string file = encode_columns_checkpoint<W, C>(group.header, group.keys, group.coefficients);
    EXPECT_EQ(GetU64(bytes, at), group.place.first);
    EXPECT_EQ(GetU64(bytes, at + 8), group.place.count);
    EXPECT_EQ(GetU64(bytes, at + 16), group.place.next_count);
    EXPECT_EQ(GetU32(bytes, at + 24), group.place.apart ? 1u : 0u);
    ASSERT_EQ(GetU64(bytes, at + 32), file.size());
    EXPECT_EQ(bytes.substr(at + 40, file.size()), file);
    at += 40 + file.size();
  }
  ASSERT_EQ(bytes.size(), at + 8);
  EXPECT_EQ(GetU64(bytes, at), Fnv1a64(std::string_view(bytes).substr(0, at)));
  const std::vector<ColumnGroup> back = decode_groups_checkpoint(bytes, "rt");
  ASSERT_EQ(back.size(), 3u);
  for (std::size_t g = 0; g < 3; ++g) {
    const auto& wrote = three.groups[g];
    EXPECT_EQ(back[g].place.first, wrote.place.first);
    EXPECT_EQ(back[g].place.count, wrote.place.count);
    EXPECT_EQ(back[g].place.next_count, wrote.place.next_count);
    EXPECT_EQ(back[g].place.apart, wrote.place.apart);
    EXPECT_EQ(back[g].rows.header.bucket_bits, wrote.header.bucket_bits);
    EXPECT_EQ(back[g].rows.header.columns, wrote.header.columns);
    EXPECT_EQ(back[g].rows.header.layers_done, 77u);
    if (!wrote.header.light_cone.empty()) {
      EXPECT_EQ(back[g].rows.header.light_cone, wrote.header.light_cone);
    }
    const auto* got = std::get_if<ColumnRows<W, C>>(&back[g].rows.rows);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->keys, three.rows[g].keys);  // the writer's order
    ASSERT_EQ(got->coefficients.size(), three.rows[g].coefficients.size());
    for (std::size_t i = 0; i < got->coefficients.size(); ++i) {
      for (int part = 0; part < (std::same_as<C, Complex> ? 2 : 1); ++part) {
        ASSERT_EQ(Bits(got->coefficients[i], part), Bits(three.rows[g].coefficients[i], part))
            << g << " " << i;
      }
    }
  }
}

TEST(GroupsCheckpoint, RoundTripKeepsEveryGroupBitForBitInTheDocumentedLayout) {
  ExpectGroupsRoundTrip<1, double>(40);
  ExpectGroupsRoundTrip<2, Complex>(127);
  ExpectGroupsRoundTrip<4, double>(200);
}

std::string GroupsDecodeError(const std::string& bytes) {
  return DecodeErrorOf([&] { decode_groups_checkpoint(bytes, "f"); });
}

TEST(GroupsCheckpoint, EveryTruncationAndEveryByteFlipIsRefused) {
  const std::string good = ThreeGroups<1, double>(20).bytes();
  ASSERT_EQ(GroupsDecodeError(good), "no error");
  for (std::size_t length = 0; length < good.size(); ++length) {
    ASSERT_NE(GroupsDecodeError(good.substr(0, length)).find("checkpoint f"), std::string::npos) << length;
  }
  for (std::size_t at = 0; at < good.size(); at += 7) {
    std::string bad = good;
    bad[at] ^= 0x10;
    ASSERT_NE(GroupsDecodeError(bad).find("checkpoint f"), std::string::npos) << at;
  }
}

TEST(GroupsCheckpoint, ChecksNameWhatFailed) {
  const std::string good = ThreeGroups<1, double>(20).bytes();
  const std::size_t second = 64 + 40 + GetU64(good, 64 + 32);  // group 1's record
  const auto with = [&](auto&& change) {
    std::string bytes = good;
    change(bytes);
    Reseal(bytes);
    return GroupsDecodeError(bytes);
  };
  EXPECT_EQ(with([](std::string& b) { PutU32(b, kReserved, 0); }),
            "checkpoint f: group count 0 is not between 1 and 1048576");
  EXPECT_EQ(with([](std::string& b) { PutU32(b, kWidth, 2); }),
            "checkpoint f: word width 2 does not match 20 qubits (expected width 1)");
  EXPECT_EQ(with([](std::string& b) { PutU64(b, kCount, 7); }),
            "checkpoint f: the groups cover 6 value columns but the header says 7");
  EXPECT_EQ(
      with([&](std::string& b) { PutU64(b, second, 3); }),
      "checkpoint f: group 1 starts at value column 3 with 1 columns; the groups cover adjacent columns "
      "from 0, this one from 2");
  EXPECT_EQ(with([&](std::string& b) { PutU64(b, second + 8, 2); }),
            "checkpoint f: group 1 has apart = 1 with 2 columns (0, or 1 for one column)");
  EXPECT_EQ(with([&](std::string& b) { PutU32(b, second + 28, 5); }),
            "checkpoint f: group 1's reserved field is 5, not 0");
  EXPECT_EQ(with([&](std::string& b) { PutU64(b, second + 32, b.size()); }),
            "checkpoint f: group 1's file of " + std::to_string(good.size()) +
                " bytes runs past the end of the file");
  EXPECT_EQ(with([&](std::string& b) { PutU64(b, kLayers, 78); }),
            "checkpoint f, group 0: has other qubits, fingerprints or layers done than the file's header");
  // Inside a group's file its own checks speak, naming the group.
  EXPECT_EQ(with([&](std::string& b) { b[second + 40 + 100] ^= 1; }),
            "checkpoint f, group 1: checksum mismatch: the file is corrupted or truncated");
  // Not resealed: the whole file's checksum.
  std::string flipped = good;
  flipped[second + 16] ^= 1;  // group 1's next count: no check of its own
  EXPECT_EQ(GroupsDecodeError(flipped),
            "checkpoint f: checksum mismatch: the file is corrupted or truncated");
  EXPECT_EQ(GroupsDecodeError(good + "x"), "checkpoint f: 1 bytes follow the last group (corrupted)");
}

TEST(GroupsCheckpoint, EachReaderRefusesTheVersionsItDoesNotRead) {
  const std::string groups = ThreeGroups<2, Complex>(70).bytes();
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { decode_columns_checkpoint(groups, "g"); },
      {"checkpoint g: format version 3 holds every column group of a split sweep", "not as one group"}));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { decode_checkpoint(groups, "g"); },
      {"checkpoint g: format version 3 holds every column group of a split sweep",
       "not a run of one observable"}));
  EXPECT_EQ(
      GroupsDecodeError(SmallFile()),
      "checkpoint f: format version 2 is not a split sweep's groups (version 3); load_columns_checkpoint "
      "reads it");
}

TEST(GroupsCheckpoint, AWriterRefusesGroupsThatDoNotFit) {
  ThreeGroups<1, double> three(20);
  const auto refused = [&](std::vector<ColumnGroupRows<1, double>> groups, std::string mentions) {
    return ThrowsInvalidArgumentMentioning([&] { encode_groups_checkpoint<1, double>(groups); }, {mentions});
  };
  EXPECT_TRUE(refused({}, "at least one group"));
  auto gap = three.groups;
  gap.erase(gap.begin() + 1);
  EXPECT_TRUE(refused(gap, "group 1 starts at value column 3 with 3 columns"));
  auto wide_apart = three.groups;
  wide_apart[2].place.apart = true;
  EXPECT_TRUE(refused(wide_apart, "group 2 runs apart with 3 columns"));
  auto other = three.groups;
  other[1].header.layers_done = 5;
  EXPECT_TRUE(refused(other, "group 1 has other fingerprints, layers done or qubits than group 0"));
  auto short_rows = three.groups;
  short_rows[0].coefficients = short_rows[0].coefficients.subspan(1);
  EXPECT_TRUE(refused(short_rows, "coefficients for"));
}

TEST_F(ColumnsCheckpointFile, GroupsSaveAndLoadMatchTheBytesAndTheVersionIsReadFromTheHeader) {
  const ThreeGroups<2, double> three(100);
  const auto path = dir_ / "g.ckpt";
  save_groups_checkpoint<2, double>(path, three.groups);
  EXPECT_EQ(read_file(path), three.bytes());
  EXPECT_EQ(checkpoint_version(path), 3u);
  const std::vector<ColumnGroup> back = load_groups_checkpoint(path);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ((std::get<ColumnRows<2, double>>(back[2].rows.rows).keys), three.rows[2].keys);
  const ColumnRows<2, double> rows = RandomRows<2, double>(100, 4, 2, 3);
  save_columns_checkpoint<2, double>(path, Header(100, 2), rows.keys, rows.coefficients);
  EXPECT_EQ(checkpoint_version(path), 2u);
  write_file_atomically(path, [](const ByteSink& sink) { sink(std::string_view("PSCKPT01\x09\0\0\0", 12)); });
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { checkpoint_version(path); },
                                      {"format version 9 is not supported (this build reads 1, 2 and 3)"}));
}

}  // namespace
}  // namespace paulistrings::io
