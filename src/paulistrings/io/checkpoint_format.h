#pragma once
// What the two checkpoint readers and writers share (io/checkpoint.cc: format version 1 and the parts;
// io/checkpoint_columns.cc: version 2): the layout's constants, little-endian words, the checksum, the
// messages, the streamed body reader, the key checks, the chunked writer and the header. The layout
// itself is described at the top of checkpoint.cc. Internal to io/.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/core/bucket_hash.h"
#include "paulistrings/core/pauli_string.h"
#include "paulistrings/io/atomic_file.h"

namespace paulistrings::io::checkpoint_format {

constexpr std::string_view kMagic = "PSCKPT01";
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kColumnsVersion = 2;  // C coefficient columns a term (ColumnsCheckpoint)
constexpr std::uint32_t kGroupsVersion = 3;   // every group of a split sweep, each a version-2 file
constexpr std::uint32_t kRealCoefficients = 0;
constexpr std::uint32_t kComplexCoefficients = 1;
constexpr std::size_t kMaxQubits = 1024;
constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kChecksumBytes = 8;

constexpr std::size_t kVersionOffset = 8;
constexpr std::size_t kWidthOffset = 12;
constexpr std::size_t kCoefficientTypeOffset = 16;
constexpr std::size_t kReservedOffset = 20;  // bucket bits
// A sum never has more than 2^30 buckets (core/bucket_hash.h), so no checkpoint records more.
constexpr std::uint32_t kMaxBucketBits = paulistrings::kMaxBucketBits;
constexpr std::size_t kQubitsOffset = 24;
constexpr std::size_t kCircuitFingerprintOffset = 32;
constexpr std::size_t kTaskFingerprintOffset = 40;
constexpr std::size_t kLayersOffset = 48;
constexpr std::size_t kCountOffset = 56;
constexpr std::size_t kColumnsOffset = 64;  // version 2: u64 column count, then the light cone
constexpr std::size_t kColumnsHeaderBytes = 72;
// A bound that keeps every size computation far from overflow (no sweep comes near it).
constexpr std::uint64_t kMaxColumns = std::uint64_t{1} << 32;

/// FNV-1a 64 of `bytes`, continuing from `hash` (the offset basis for a fresh one).
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Explicit little-endian byte order, whatever the host's (compilers turn these into plain loads
// and stores on little-endian machines); ChunkWriter below writes the same way.
inline std::uint32_t get_u32(std::string_view in, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::uint32_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}
inline std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}
inline double get_f64(std::string_view in, std::size_t at) { return std::bit_cast<double>(get_u64(in, at)); }

inline std::size_t coefficient_doubles(bool complex) { return complex ? 2 : 1; }

template <Coefficient C>
bool is_finite(const C& value) {
  if constexpr (std::same_as<C, double>) {
    return std::isfinite(value);
  } else {
    return std::isfinite(value.real()) && std::isfinite(value.imag());
  }
}

template <Coefficient C>
std::string describe(const C& value) {
  std::ostringstream text;
  text.precision(17);
  text << value;  // a complex prints as (re,im)
  return text.str();
}

// Appends one piece of a message: text as is, integers in decimal.
inline void append_piece(std::string& out, std::string_view text) { out.append(text); }
template <std::integral I>
void append_piece(std::string& out, I value) {
  out.append(std::to_string(value));
}

// Throws std::invalid_argument("checkpoint NAME: " + the pieces concatenated).
template <class... Pieces>
[[noreturn]] void fail(const std::string& name, const Pieces&... pieces) {
  std::string message = "checkpoint ";
  message.append(name).append(": ");
  (append_piece(message, pieces), ...);
  throw std::invalid_argument(message);
}

constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

// The body of a checkpoint whose header and size are valid, read piece by piece from `read` (read(out, n)
// fills n bytes) after the header (`header_bytes`, already read, and `more_words` words after it —
// version 2's light cone — handed to store_more), straight into the key columns and `per_term`
// coefficients a term: a load holds the columns once plus a 1 MiB piece, never the file's bytes. Then,
// as before any term is looked at, the checksum.
template <int W, Coefficient C, class Read, class StoreMore>
void read_body(Read&& read, std::string_view header_bytes, std::size_t more_words, StoreMore&& store_more,
               std::span<PauliString<W>> keys, std::span<C> coefficients, std::size_t per_term,
               const std::string& name) {
  const std::size_t count = keys.size();
  std::uint64_t hash = fnv1a64(header_bytes);
  std::string piece(kPieceBytes, '\0');
  // `words` little-endian 64-bit words, handed to store(index, word) in order.
  const auto column = [&](std::size_t words, auto&& store) {
    for (std::size_t done = 0; done < words;) {
      const std::size_t n = std::min(words - done, kPieceBytes / 8);
      read(piece.data(), 8 * n);
      const std::string_view bytes(piece.data(), 8 * n);
      hash = fnv1a64(bytes, hash);
      for (std::size_t i = 0; i < n; ++i) store(done + i, get_u64(bytes, 8 * i));
      done += n;
    }
  };
  column(more_words, store_more);
  column(count * W, [&](std::size_t i, std::uint64_t word) { keys[i / W].x[i % W] = word; });
  column(count * W, [&](std::size_t i, std::uint64_t word) { keys[i / W].z[i % W] = word; });
  if constexpr (std::same_as<C, Complex>) {
    column(2 * count * per_term, [&](std::size_t i, std::uint64_t word) {
      // The real or the imaginary part alone (std::complex is an array of two doubles): the other may
      // not be written yet.
      reinterpret_cast<double(&)[2]>(coefficients[i / 2])[i % 2] = std::bit_cast<double>(word);
    });
  } else {
    column(count * per_term,
           [&](std::size_t i, std::uint64_t word) { coefficients[i] = std::bit_cast<double>(word); });
  }
  read(piece.data(), kChecksumBytes);
  if (hash != get_u64(std::string_view(piece.data(), kChecksumBytes), 0)) {
    fail(name, "checksum mismatch: the file is corrupted or truncated");
  }
}

/// The bits each word of a key may set: the qubits of word w below num_qubits.
template <int W>
std::array<std::uint64_t, W> qubit_masks(std::size_t num_qubits) {
  std::array<std::uint64_t, W> allowed{};
  for (int w = 0; w < W; ++w) {
    const std::size_t first = 64 * static_cast<std::size_t>(w);
    allowed[w] = num_qubits >= first + 64 ? ~std::uint64_t{0}
                 : num_qubits <= first    ? std::uint64_t{0}
                                          : (std::uint64_t{1} << (num_qubits - first)) - 1;
  }
  return allowed;
}

/// Refuses term t's key when it sets a bit at a qubit ≥ num_qubits.
template <int W>
void check_key_bits(const PauliString<W>& key, const std::array<std::uint64_t, W>& allowed, std::size_t t,
                    std::size_t num_qubits, const std::string& name) {
  for (int w = 0; w < W; ++w) {
    const std::uint64_t stray = (key.x[w] | key.z[w]) & ~allowed[w];
    if (stray != 0) {
      const std::size_t qubit = 64 * static_cast<std::size_t>(w) + std::countr_zero(stray);
      const std::uint64_t lowest = stray & (~stray + 1);
      const std::string_view which = (key.x[w] & lowest) != 0 ? "x" : "z";
      fail(name, "term ", t, " sets the ", which, " bit of qubit ", qubit, ", beyond the ", num_qubits,
           " qubits");
    }
  }
}

/// Refuses repeated keys, found through a sorted index (keys in any order).
template <int W>
void check_distinct(std::span<const PauliString<W>> keys, const std::string& name) {
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (keys[a] != keys[b]) return keys[a] < keys[b];
    return a < b;
  });
  for (std::size_t i = 1; i < keys.size(); ++i) {
    if (keys[order[i - 1]] == keys[order[i]]) {
      fail(name, "terms ", order[i - 1], " and ", order[i], " have the same key ",
           keys[order[i]].to_sparse_label(), " (duplicate keys)");
    }
  }
}

/// Collects a file's bytes in chunks of ~1 MiB for a sink, with the FNV-1a 64 of everything passed.
class ChunkWriter {
 public:
  explicit ChunkWriter(const ByteSink& sink) : sink_(sink) { buffer_.reserve(kChunk + 64); }
  void u32(std::uint32_t value) { put(value, 4); }
  void u64(std::uint64_t value) { put(value, 8); }
  void f64(double value) { u64(std::bit_cast<std::uint64_t>(value)); }
  void bytes(std::string_view data) {
    buffer_.append(data);
    if (buffer_.size() >= kChunk) flush();
  }
  /// Passes what is buffered, then the checksum of everything (not itself checksummed).
  void finish() {
    flush();
    const std::uint64_t checksum = hash_;
    put(checksum, 8);
    sink_(buffer_);
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  void put(std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) buffer_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    if (buffer_.size() >= kChunk) flush();
  }
  void flush() {
    hash_ = fnv1a64(buffer_, hash_);
    sink_(buffer_);
    buffer_.clear();
  }
  const ByteSink& sink_;
  std::string buffer_;
  std::uint64_t hash_ = fnv1a64({});
};

/// The 64-byte header's fields, checked as decode_checkpoint checks them.
struct Header {
  std::uint32_t version = 0;
  std::uint32_t width = 0;
  std::uint64_t num_qubits = 0;
  bool complex = false;
  std::uint32_t bucket_bits = 0;
  std::uint64_t count = 0;
  std::uint64_t circuit_fingerprint = 0, task_fingerprint = 0, layers_done = 0;
};

/// Which reader a header is checked for: load_checkpoint (version 1 only), load_columns_checkpoint
/// (versions 1 and 2) or load_groups_checkpoint (version 3, whose field at offset 20 is the group count,
/// left to that reader, and whose field at offset 56 is the value columns).
enum class HeaderFor { one_column, columns, groups };

/// The 64-byte header checked field by field for `reader`.
Header decode_header(std::string_view bytes, const std::string& name,
                     HeaderFor reader = HeaderFor::one_column);

/// Refuses a file of `size` bytes unless it is `fixed` bytes plus `count` terms of `bytes_per_term` (the
/// product guarded against overflow).
void check_size(std::uint64_t count, std::uint64_t bytes_per_term, std::uint64_t fixed, std::uint64_t size,
                const std::string& name);

}  // namespace paulistrings::io::checkpoint_format
