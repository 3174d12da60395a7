#pragma once
// The byte layouts of rows crossing partitions: plain rows (a key then a coefficient, packed: the GPU
// engine's host exchange, gathers) and the CPU engine's bucketed buffer (a header, the bucket offsets,
// the keys, then the coefficients, laid out by bucket of the bucket count the partitions agreed on, so
// the receiver merges bucket by bucket without hashing). BucketedView checks a received buffer before
// anything reads it.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/cpu/cpu_partition_engine.h"

namespace paulistrings::partition_detail {

template <int W, Coefficient C>
constexpr std::size_t kRowBytes = sizeof(PauliString<W>) + sizeof(C);

template <int W, Coefficient C>
void append_rows(std::vector<std::byte>& buffer, std::span<const PauliString<W>> keys,
                 std::span<const C> values) {
  const std::size_t start = buffer.size();
  buffer.resize(start + keys.size() * kRowBytes<W, C>);
  std::byte* out = buffer.data() + start;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(out, &keys[i], sizeof(PauliString<W>));
    std::memcpy(out + sizeof(PauliString<W>), &values[i], sizeof(C));
    out += kRowBytes<W, C>;
  }
}

template <int W, Coefficient C>
void read_rows(std::span<const std::byte> buffer, std::vector<PauliString<W>>& keys, std::vector<C>& values) {
  if (buffer.size() % kRowBytes<W, C> != 0) {
    throw std::runtime_error(std::string("partition exchange: received ")
                                 .append(std::to_string(buffer.size()))
                                 .append(" bytes, not a whole number of rows"));
  }
  const std::size_t rows = buffer.size() / kRowBytes<W, C>;
  const std::byte* in = buffer.data();
  for (std::size_t i = 0; i < rows; ++i, in += kRowBytes<W, C>) {
    PauliString<W> key;
    C value;
    std::memcpy(&key, in, sizeof(PauliString<W>));
    std::memcpy(&value, in + sizeof(PauliString<W>), sizeof(C));
    keys.push_back(key);
    values.push_back(value);
  }
}

/// The CPU engine's exchange buffer: rows laid out by bucket of the sender's (agreed) bucket count —
/// a header {tag, bits, rows}, 2^bits + 1 bucket offsets (uint64), the keys, then the coefficients —
/// so the receiver merges bucket by bucket without hashing a row.
inline constexpr std::uint64_t kBucketedRowsTag = 0x7073'726f'7773'0001ULL;
inline constexpr std::size_t kBucketedHeaderWords = 3;

template <int W, Coefficient C>
std::size_t bucketed_bytes(int bits, std::uint64_t rows) {
  return 8 * (kBucketedHeaderWords + (std::size_t{1} << bits) + 1) + rows * kRowBytes<W, C>;
}

/// Writes the header and the offsets of a buffer for `counts` (rows per bucket, 2^bits entries, stride
/// `stride` apart) and returns where its keys and coefficients go.
template <int W, Coefficient C>
GroupDestination write_bucketed_header(std::byte* buffer, int bits, std::uint64_t rows, const std::uint64_t* counts,
                                       std::size_t stride) {
  const std::size_t buckets = std::size_t{1} << bits;
  const std::uint64_t header[kBucketedHeaderWords] = {kBucketedRowsTag, static_cast<std::uint64_t>(bits), rows};
  std::memcpy(buffer, header, sizeof(header));
  std::byte* offsets = buffer + sizeof(header);
  std::uint64_t running = 0;
  for (std::size_t b = 0; b <= buckets; ++b) {
    std::memcpy(offsets + 8 * b, &running, 8);
    if (b < buckets) running += counts[b * stride];
  }
  std::byte* keys = offsets + 8 * (buckets + 1);
  return {keys, keys + rows * sizeof(PauliString<W>)};
}

/// A received buffer read back: the offsets copied out, the rows left in place. Throws
/// std::runtime_error for a buffer that is not one (wrong tag, sizes that do not add up).
template <int W, Coefficient C>
class BucketedView {
 public:
  explicit BucketedView(std::span<const std::byte> buffer) {
    std::uint64_t header[kBucketedHeaderWords] = {};
    if (buffer.size() < sizeof(header)) fail(buffer.size());
    std::memcpy(header, buffer.data(), sizeof(header));
    if (header[0] != kBucketedRowsTag || header[1] > 40) fail(buffer.size());
    const int bits = static_cast<int>(header[1]);
    if (buffer.size() != bucketed_bytes<W, C>(bits, header[2])) fail(buffer.size());
    offsets_.resize((std::size_t{1} << bits) + 1);
    std::memcpy(offsets_.data(), buffer.data() + sizeof(header), 8 * offsets_.size());
    for (std::size_t b = 1; b < offsets_.size(); ++b) {
      if (offsets_[b] < offsets_[b - 1]) fail(buffer.size());
    }
    if (offsets_.front() != 0 || offsets_.back() != header[2]) fail(buffer.size());
    rows_.bits = bits;
    rows_.offsets = offsets_.data();
    rows_.keys = buffer.data() + sizeof(header) + 8 * offsets_.size();
    rows_.coefficients = rows_.keys + header[2] * sizeof(PauliString<W>);
  }
  const BucketedRows& rows() const { return rows_; }

 private:
  [[noreturn]] static void fail(std::size_t bytes) {
    throw std::runtime_error(std::string("partition exchange: a received buffer of ")
                                 .append(std::to_string(bytes))
                                 .append(" bytes is not a bucketed row buffer of this run's width"));
  }
  std::vector<std::uint64_t> offsets_;
  BucketedRows rows_;
};

}  // namespace paulistrings::partition_detail
