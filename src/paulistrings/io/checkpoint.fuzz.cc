// Fuzz target "checkpoint" (testing/fuzz_target.h): checkpoint bytes through decode_checkpoint,
// decode_columns_checkpoint and decode_groups_checkpoint (format versions 1, 2 and 3). Documented:
// std::invalid_argument naming the check that failed. Each input is decoded twice: as given, and with its
// last 8 bytes replaced by the right checksum (checkpoint.cc's layout), so that mutations reach the checks
// behind the checksum instead of all stopping at it. A checkpoint the reader accepts must encode to bytes
// that decode to the same sum and encode to themselves again (the format is canonical: terms in key order);
// one the columns reader accepts must encode (as version 2, rows in their order) to bytes that decode to
// the same header and rows; one the groups reader accepts must encode (as version 3) to itself.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "paulistrings/io/checkpoint.h"
#include "paulistrings/testing/fuzz_target.h"

namespace paulistrings::io {
namespace {

void decode_and_check(std::string_view bytes) {
  Checkpoint checkpoint;
  try {
    checkpoint = decode_checkpoint(bytes, "fuzz");
  } catch (const std::invalid_argument&) {
    return;
  }
  const std::string encoded = encode_checkpoint(checkpoint);
  const Checkpoint again = decode_checkpoint(encoded, "re-encoded");
  if (!(again.sum == checkpoint.sum) || again.layers_done != checkpoint.layers_done ||
      again.circuit_fingerprint != checkpoint.circuit_fingerprint ||
      again.task_fingerprint != checkpoint.task_fingerprint || encode_checkpoint(again) != encoded) {
    throw std::logic_error("a decoded checkpoint does not encode and decode back to itself");
  }
}

/// The columns reader: what it accepts encodes (version 2) to bytes it reads back the same.
void decode_columns_and_check(std::string_view bytes) {
  ColumnsCheckpoint checkpoint;
  try {
    checkpoint = decode_columns_checkpoint(bytes, "fuzz");
  } catch (const std::invalid_argument&) {
    return;
  }
  std::visit(
      [&](const auto& rows) {
        using Rows = std::decay_t<decltype(rows)>;
        constexpr int W = Rows::kWidth;
        using C = typename Rows::Coeff;
        const std::string encoded =
            encode_columns_checkpoint<W, C>(checkpoint.header, rows.keys, rows.coefficients);
        const ColumnsCheckpoint again = decode_columns_checkpoint(encoded, "re-encoded");
        const auto* same = std::get_if<Rows>(&again.rows);
        if (same == nullptr || same->keys != rows.keys ||
            again.header.light_cone != checkpoint.header.light_cone ||
            again.header.columns != checkpoint.header.columns ||
            again.header.layers_done != checkpoint.header.layers_done ||
            encode_columns_checkpoint<W, C>(again.header, same->keys, same->coefficients) != encoded) {
          throw std::logic_error("a decoded columns checkpoint does not encode and decode back to itself");
        }
      },
      checkpoint.rows);
}

/// The groups reader: what it accepts encodes (version 3) to the very bytes it was read from.
void decode_groups_and_check(std::string_view bytes) {
  std::vector<ColumnGroup> groups;
  try {
    groups = decode_groups_checkpoint(bytes, "fuzz");
  } catch (const std::invalid_argument&) {
    return;
  }
  std::visit(
      [&](const auto& first) {
        using Rows = std::decay_t<decltype(first)>;
        constexpr int W = Rows::kWidth;
        using C = typename Rows::Coeff;
        std::vector<ColumnGroupRows<W, C>> out;
        for (const ColumnGroup& group : groups) {
          const auto* rows = std::get_if<Rows>(&group.rows.rows);
          if (rows == nullptr) throw std::logic_error("a groups checkpoint's groups differ in width or type");
          out.push_back({group.place, group.rows.header, rows->keys, rows->coefficients});
        }
        if (encode_groups_checkpoint<W, C>(out) != bytes) {
          throw std::logic_error("a decoded groups checkpoint does not encode back to its bytes");
        }
      },
      groups.at(0).rows.rows);
}

// The header's bucket bits (checkpoint.cc: offset 20) are honoured up to 2^30 buckets, an 8 GiB index, as a
// run with --min-buckets near 2^30 had: a resumed run is bitwise the saved one only with the same bucket
// count. That allocation is the format's, not a bug, so the target caps the field at 2^20 buckets and the
// fuzzer explores the rest instead of stopping on out-of-memory (tests/fuzz/checkpoint/bucket_bits_40.ckpt).
constexpr std::size_t kBucketBitsOffset = 20;
constexpr unsigned char kMaxFuzzedBucketBits = 20;

void fuzz_checkpoint(std::string_view given) {
  std::string capped(given);
  if (capped.size() >= kBucketBitsOffset + 4) {
    const bool large = capped[kBucketBitsOffset + 1] != 0 || capped[kBucketBitsOffset + 2] != 0 ||
                       capped[kBucketBitsOffset + 3] != 0 ||
                       static_cast<unsigned char>(capped[kBucketBitsOffset]) > kMaxFuzzedBucketBits;
    if (large) capped.replace(kBucketBitsOffset, 4, std::string{char(kMaxFuzzedBucketBits), 0, 0, 0});
  }
  const std::string_view input = capped;
  decode_and_check(input);
  decode_columns_and_check(input);
  decode_groups_and_check(input);
  if (input.size() < 8) return;
  std::string fixed(input);
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64 of every byte before the checksum
  for (std::size_t i = 0; i + 8 < fixed.size(); ++i) {
    hash ^= static_cast<unsigned char>(fixed[i]);
    hash *= 0x100000001b3ULL;
  }
  for (int i = 0; i < 8; ++i) fixed[fixed.size() - 8 + i] = static_cast<char>((hash >> (8 * i)) & 0xff);
  if (fixed != input) {
    decode_and_check(fixed);
    decode_columns_and_check(fixed);
    decode_groups_and_check(fixed);
  }
}

}  // namespace
}  // namespace paulistrings::io

PAULISTRINGS_FUZZ_TARGET(checkpoint, paulistrings::io::fuzz_checkpoint)
