// Checkpoint files (docs/design.md §9): encoding, validated decoding, atomic save and load.
//
// Layout, version 1. Every integer is unsigned little-endian; every coefficient is an IEEE-754
// binary64 stored as the little-endian bytes of its bit pattern (so -0.0, subnormals and every
// payload survive bit for bit). Offsets in bytes; T = term count, W = words per string,
// K = 1 for real and 2 for complex coefficients.
//
//   offset  size      field
//        0     8      magic, the ASCII bytes "PSCKPT01"
//        8     4      u32 format version = 1
//       12     4      u32 word width W ∈ {1, 2, 4, 8, 16}: the smallest width holding num_qubits
//                     (1 for 0..64 qubits, 2 up to 128, 4 up to 256, 8 up to 512, 16 up to 1024)
//       16     4      u32 coefficient type: 0 = real double, 1 = complex double
//       20     4      u32 bucket bits b ≤ 30: the sum had 2^b buckets; the reader restores that layout
//                     so that a resumed run sums in exactly the order an uninterrupted one does
//       24     8      u64 num_qubits (≤ 1024)
//       32     8      u64 circuit fingerprint
//       40     8      u64 task fingerprint
//       48     8      u64 layers done
//       56     8      u64 term count T
//       64   8·T·W    x column: term t's word w (qubits 64w..64w+63, qubit q = bit q%64) at
//                     64 + 8·(t·W + w)
//        X   8·T·W    z column, same shape, X = 64 + 8·T·W
//        Z   8·T·K    coefficient column, Z = 64 + 16·T·W: term t's real part at Z + 8·K·t, its
//                     imaginary part (complex only) right after it
//      end-8   8      u64 FNV-1a 64 checksum (offset basis 0xcbf29ce484222325, prime 0x100000001b3)
//                     of every byte before it
//
// The file size is therefore exactly 72 + 8·T·(2W + K). Terms are written in ascending key order
// (lexicographic on x words 0..W-1, then z words 0..W-1 — PauliString's operator<=>), so the bytes
// depend only on the set of (key, coefficient) pairs and the header fields, not on the sum's bucket
// count or hash seed. A reader accepts the terms in any order.
//
// Layout, version 2 (ColumnsCheckpoint: C ≥ 1 coefficient columns a term, a sweep's state). The same
// first 64 bytes with version = 2, then (X, Z as above; K = 1 or 2 doubles a coefficient):
//
//       64     8      u64 column count C (1 ≤ C ≤ 2^32)
//       72   8·W      light cone: W words, bit q % 64 of word q / 64 for each qubit the engine may find on
//                     a term (a superset of every key's support; the engine skips layers outside it)
//   72+8W  8·T·W      x column, then the z column, as in version 1
//        Z  8·T·C·K   coefficients row by row: term t's column j at Z + 8·K·(t·C + j) (its real part,
//                     then its imaginary part when complex); Z = 72 + 8·W + 16·T·W
//      end-8   8      u64 FNV-1a 64 checksum of every byte before it
//
// The file size is exactly 80 + 8·W + 8·T·(2W + C·K). Terms are written in the order given (a sweep
// engine's order: its sums depend on it, so the order is part of the state) and read back in it; a row
// may hold zeros (bit for bit, signs included) but not only zeros. decode_columns_checkpoint checks, in
// this order: the header as for version 1 (any version but 1 and 2 refused); size ≥ 72 bytes; C ≥ 1 and
// ≤ 2^32; the file size; the checksum; no light-cone bit at a qubit ≥ num_qubits; per term: no bit at a
// qubit ≥ num_qubits, every coefficient finite, some coefficient nonzero, its support inside the light
// cone; no two terms with the same key. It reads a version-1 file as C = 1 (its keys' supports as the
// light cone); decode_checkpoint refuses a version-2 file, naming it.
//
// decode_checkpoint checks, in this order, and throws std::invalid_argument("checkpoint NAME: ...")
// at the first failure: size ≥ 64-byte header; magic; version; width ∈ {1,2,4,8,16}; num_qubits ≤
// 1024; width = smallest width for num_qubits; coefficient type; bucket bits ≤ 30; file size = the
// size implied by the term count (the product guarded against overflow); checksum; per term: no
// bit at a qubit ≥ num_qubits, coefficient finite and not exactly zero (a sum never stores one);
// no two terms with the same key. load_checkpoint reads the file in 1 MiB pieces straight into the
// sum's columns (the checksum accumulated on the way, checked before any term is), so a load holds the
// sum once plus 24 bytes a term while the columns are put in canonical order, never the file's bytes.

#include "paulistrings/io/checkpoint.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/core/text.h"
#include "paulistrings/io/atomic_file.h"

namespace paulistrings::io {
namespace {

constexpr std::string_view kMagic = "PSCKPT01";
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kColumnsVersion = 2;  // C coefficient columns a term (ColumnsCheckpoint)
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
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Explicit little-endian byte order, whatever the host's (compilers turn these into plain loads
// and stores on little-endian machines); ChunkWriter below writes the same way.
std::uint32_t get_u32(std::string_view in, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::uint32_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}
std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}
double get_f64(std::string_view in, std::size_t at) { return std::bit_cast<double>(get_u64(in, at)); }

std::size_t coefficient_doubles(bool complex) { return complex ? 2 : 1; }

template <Coefficient C>
C get_coefficient(std::string_view in, std::size_t at) {
  if constexpr (std::same_as<C, double>) {
    return get_f64(in, at);
  } else {
    return C(get_f64(in, at), get_f64(in, at + 8));
  }
}

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
void append_piece(std::string& out, std::string_view text) { out.append(text); }
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
               std::vector<PauliString<W>>& keys, std::vector<C>& coefficients, std::size_t per_term,
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
      const double value = std::bit_cast<double>(word);
      Complex& c = coefficients[i / 2];
      c = i % 2 == 0 ? Complex(value, c.imag()) : Complex(c.real(), value);
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
void check_distinct(const std::vector<PauliString<W>>& keys, const std::string& name) {
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

// The columns of a version-1 checkpoint whose header and size are valid (read_body), every term checked,
// then the sum in canonical order (in place, with the bucket count of the file).
template <int W, Coefficient C, class Read>
AnyPauliSum decode_columns(Read&& read, std::string_view header_bytes, std::size_t num_qubits,
                           std::size_t count, int bucket_bits, const std::string& name) {
  using Sum = PauliSum<W, C>;
  using Key = PauliString<W>;
  std::vector<Key> keys(count);
  std::vector<C> coefficients(count);
  read_body<W, C>(
      read, header_bytes, 0, [](std::size_t, std::uint64_t) {}, keys, coefficients, 1, name);
  const std::array<std::uint64_t, W> allowed = qubit_masks<W>(num_qubits);
  bool ascending = true;  // as save_checkpoint writes them: then no key can repeat
  for (std::size_t t = 0; t < count; ++t) {
    const Key& key = keys[t];
    check_key_bits<W>(key, allowed, t, num_qubits, name);
    if (!is_finite(coefficients[t])) {
      fail(name, "term ", t, " has a coefficient that is not finite: ", describe(coefficients[t]));
    }
    if (coefficients[t] == C(0.0)) {
      fail(name, "term ", t, " has an exactly zero coefficient (a sum never stores one)");
    }
    if (t > 0 && !(keys[t - 1] < key)) ascending = false;
  }
  if (!ascending) check_distinct<W>(keys, name);  // another writer's order
  // Distinct keys and nonzero coefficients: every coefficient is kept bit for bit. The bucket count is
  // what from_terms then refine(bucket_bits) gave: a resumed run is bitwise the uninterrupted one.
  Sum sum(num_qubits);
  const int bits = std::min(std::max(Sum::bits_to_fit(count, 1024, 1), bucket_bits), paulistrings::kMaxBucketBits);
  sum.assign_distinct_columns(std::move(keys), std::move(coefficients), bits);
  return AnyPauliSum(std::move(sum));
}

template <Coefficient C, class Read>
AnyPauliSum decode_columns_of_width(std::uint32_t width, Read&& read, std::string_view header_bytes,
                                    std::size_t num_qubits, std::size_t count, int bucket_bits,
                                    const std::string& name) {
  switch (width) {
    case 1:
      return decode_columns<1, C>(read, header_bytes, num_qubits, count, bucket_bits, name);
    case 2:
      return decode_columns<2, C>(read, header_bytes, num_qubits, count, bucket_bits, name);
    case 4:
      return decode_columns<4, C>(read, header_bytes, num_qubits, count, bucket_bits, name);
    case 8:
      return decode_columns<8, C>(read, header_bytes, num_qubits, count, bucket_bits, name);
    default:
      return decode_columns<16, C>(read, header_bytes, num_qubits, count, bucket_bits, name);
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

/// The file's bytes, streamed: the terms in ascending key order through an index sorted beside the
/// sum (4 or 8 bytes a term), never a copy of the terms.
template <class Sum, class Index>
void write_terms(const Sum& sum, ChunkWriter& out) {
  constexpr std::size_t W = Sum::kWidth;
  const auto keys = sum.keys();
  const auto coefficients = sum.coefficients();
  std::vector<Index> order(sum.size());
  std::iota(order.begin(), order.end(), Index{0});
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return keys[a] < keys[b]; });
  out.u64(order.size());
  for (const Index i : order) {
    for (std::size_t w = 0; w < W; ++w) out.u64(keys[i].x[w]);
  }
  for (const Index i : order) {
    for (std::size_t w = 0; w < W; ++w) out.u64(keys[i].z[w]);
  }
  for (const Index i : order) {
    if constexpr (Sum::kIsComplex) {
      out.f64(coefficients[i].real());
      out.f64(coefficients[i].imag());
    } else {
      out.f64(coefficients[i]);
    }
  }
}

void write_checkpoint(const ByteSink& sink, std::uint64_t circuit_fingerprint, std::uint64_t task_fingerprint,
                      std::uint64_t layers_done, const AnyPauliSum& any) {
  any.visit([&](const auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    ChunkWriter out(sink);
    out.bytes(kMagic);
    out.u32(kFormatVersion);
    out.u32(static_cast<std::uint32_t>(Sum::kWidth));
    out.u32(Sum::kIsComplex ? kComplexCoefficients : kRealCoefficients);
    out.u32(static_cast<std::uint32_t>(sum.bucket_bits()));
    out.u64(sum.num_qubits());
    out.u64(circuit_fingerprint);
    out.u64(task_fingerprint);
    out.u64(layers_done);
    if (sum.size() <= std::numeric_limits<std::uint32_t>::max()) {
      write_terms<Sum, std::uint32_t>(sum, out);
    } else {
      write_terms<Sum, std::size_t>(sum, out);
    }
    out.finish();
  });
}

}  // namespace

std::string encode_checkpoint(const Checkpoint& checkpoint) {
  std::string out;
  checkpoint.sum.visit([&](const auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    out.reserve(kHeaderBytes + 8 * sum.size() * (2 * Sum::kWidth + coefficient_doubles(Sum::kIsComplex)) +
                kChecksumBytes);
  });
  write_checkpoint([&](std::string_view bytes) { out.append(bytes); }, checkpoint.circuit_fingerprint,
                   checkpoint.task_fingerprint, checkpoint.layers_done, checkpoint.sum);
  return out;
}

namespace {

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

/// `columns_reader`: read for load_columns_checkpoint (versions 1 and 2), else for load_checkpoint (1).
Header decode_header(std::string_view bytes, const std::string& name, bool columns_reader = false) {
  if (bytes.size() < kHeaderBytes) {
    fail(name, "truncated: the file has ", bytes.size(), " bytes, less than the ", kHeaderBytes,
         "-byte header");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    fail(name, "not a paulistrings checkpoint (the file does not start with \"PSCKPT01\")");
  }
  const std::uint32_t version = get_u32(bytes, kVersionOffset);
  if (version == kColumnsVersion && !columns_reader) {
    fail(name,
         "format version 2 holds several coefficient columns a term (a sweep's checkpoint); a run of "
         "one observable resumes from version 1");
  }
  if (version != kFormatVersion && version != kColumnsVersion) {
    if (columns_reader)
      fail(name, "format version ", version, " is not supported (this build reads 1 and 2)");
    fail(name, "format version ", version, " is not supported (this build reads ", kFormatVersion, ")");
  }
  const std::uint32_t width = get_u32(bytes, kWidthOffset);
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16) {
    fail(name, "word width ", width, " is not one of 1, 2, 4, 8, 16");
  }
  const std::uint64_t num_qubits = get_u64(bytes, kQubitsOffset);
  if (num_qubits > kMaxQubits) {
    fail(name, "qubit count ", num_qubits, " exceeds the maximum ", kMaxQubits);
  }
  const int expected_width = width_for_qubits(static_cast<std::size_t>(num_qubits));
  if (width != static_cast<std::uint32_t>(expected_width)) {
    fail(name, "word width ", width, " does not match ", num_qubits, " qubits (expected width ",
         expected_width, ")");
  }
  const std::uint32_t coefficient_type = get_u32(bytes, kCoefficientTypeOffset);
  if (coefficient_type != kRealCoefficients && coefficient_type != kComplexCoefficients) {
    fail(name, "coefficient type ", coefficient_type, " is not 0 (real double) or 1 (complex double)");
  }
  const std::uint32_t bucket_bits = get_u32(bytes, kReservedOffset);
  if (bucket_bits > kMaxBucketBits) fail(name, "bucket bits ", bucket_bits, " exceed ", kMaxBucketBits);
  Header header;
  header.version = version;
  header.width = width;
  header.num_qubits = num_qubits;
  header.complex = coefficient_type == kComplexCoefficients;
  header.bucket_bits = bucket_bits;
  header.count = get_u64(bytes, kCountOffset);
  header.circuit_fingerprint = get_u64(bytes, kCircuitFingerprintOffset);
  header.task_fingerprint = get_u64(bytes, kTaskFingerprintOffset);
  header.layers_done = get_u64(bytes, kLayersOffset);
  return header;
}

/// A checkpoint file's header alone (the first 64 bytes read), with an empty sum of its qubit count and
/// coefficient type: what a rank that resumes no part needs.
Checkpoint load_header_only(const std::filesystem::path& path) {
  const Header header = decode_header(read_file(path, kHeaderBytes), path.string());
  Checkpoint checkpoint;
  checkpoint.circuit_fingerprint = header.circuit_fingerprint;
  checkpoint.task_fingerprint = header.task_fingerprint;
  checkpoint.layers_done = header.layers_done;
  checkpoint.sum = AnyPauliSum(static_cast<std::size_t>(header.num_qubits), header.complex);
  return checkpoint;
}

}  // namespace

namespace {

/// Refuses a file of `size` bytes unless it is `fixed` bytes plus `count` terms of `bytes_per_term` (the
/// product guarded against overflow).
void check_size(std::uint64_t count, std::uint64_t bytes_per_term, std::uint64_t fixed, std::uint64_t size,
                const std::string& name) {
  if (count > (std::numeric_limits<std::uint64_t>::max() - fixed) / bytes_per_term) {
    fail(name, "term count ", count, " is impossible: at ", bytes_per_term,
         " bytes per term the file would exceed 2^64 bytes (it has ", size, ")");
  }
  const std::uint64_t expected_size = fixed + count * bytes_per_term;
  if (expected_size != size) {
    fail(name, "term count ", count, " needs a file of ", expected_size, " bytes but it has ", size,
         " (truncated or corrupted)");
  }
}

/// A checkpoint of `size` bytes whose 64-byte header is `header_bytes`, its columns from `read` (the
/// bytes after the header, in order): the size checked against the header's term count, then the
/// columns decoded (decode_columns).
template <class Read>
Checkpoint decode_from(std::string_view header_bytes, std::uint64_t size, Read&& read, const std::string& name) {
  const Header header = decode_header(header_bytes, name);
  const std::uint32_t width = header.width;
  const std::uint64_t count = header.count;
  const bool complex = header.complex;
  check_size(count, 8 * (2 * std::uint64_t{width} + coefficient_doubles(complex)),
             kHeaderBytes + kChecksumBytes, size, name);
  Checkpoint checkpoint;
  checkpoint.circuit_fingerprint = header.circuit_fingerprint;
  checkpoint.task_fingerprint = header.task_fingerprint;
  checkpoint.layers_done = header.layers_done;
  const auto n = static_cast<std::size_t>(header.num_qubits);
  const auto terms = static_cast<std::size_t>(count);
  const int bits = static_cast<int>(header.bucket_bits);
  checkpoint.sum = complex ? decode_columns_of_width<Complex>(width, read, header_bytes, n, terms, bits, name)
                           : decode_columns_of_width<double>(width, read, header_bytes, n, terms, bits, name);
  return checkpoint;
}

}  // namespace

Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name) {
  std::size_t at = std::min(bytes.size(), kHeaderBytes);
  return decode_from(bytes.substr(0, at), bytes.size(),
                     [&](char* out, std::size_t n) {
                       std::memcpy(out, bytes.data() + at, n);  // within the size checked against the header
                       at += n;
                     },
                     name);
}

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  save_checkpoint(path, checkpoint.circuit_fingerprint, checkpoint.task_fingerprint, checkpoint.layers_done,
                  checkpoint.sum);
}

void save_checkpoint(const std::filesystem::path& path, std::uint64_t circuit_fingerprint,
                     std::uint64_t task_fingerprint, std::uint64_t layers_done, const AnyPauliSum& sum) {
  write_file_atomically(path, [&](const ByteSink& sink) {
    write_checkpoint(sink, circuit_fingerprint, task_fingerprint, layers_done, sum);
  });
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  FileSource file(path);
  std::string header(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kHeaderBytes)), '\0');
  file.read(header.data(), header.size());
  return decode_from(header, file.size(), [&](char* out, std::size_t n) { file.read(out, n); }, path.string());
}

// ---- version 2: C coefficient columns a term (ColumnsCheckpoint) ----

namespace {

/// Every word a version-2 file holds after its header and light cone, written in the rows' order.
template <int W, Coefficient C>
void write_columns_checkpoint(const ByteSink& sink, const ColumnsHeader& header,
                              std::span<const PauliString<W>> keys, std::span<const C> coefficients) {
  const std::string what = "save_columns_checkpoint: ";
  if (header.columns == 0) throw std::invalid_argument(what + "a checkpoint holds at least one column");
  if (header.columns > kMaxColumns || coefficients.size() / header.columns != keys.size() ||
      coefficients.size() % header.columns != 0) {
    throw std::invalid_argument(what + std::to_string(coefficients.size()) + " coefficients for " +
                                std::to_string(keys.size()) + " keys × " + std::to_string(header.columns) +
                                " columns");
  }
  if (header.num_qubits > kMaxQubits || width_for_qubits(header.num_qubits) != W)
    throw std::invalid_argument(what + "word width " + std::to_string(W) + " does not match " +
                                std::to_string(header.num_qubits) + " qubits");
  if (header.bucket_bits < 0 || header.bucket_bits > static_cast<int>(kMaxBucketBits))
    throw std::invalid_argument(what + "bucket bits " + std::to_string(header.bucket_bits) + " out of range");
  if (!header.light_cone.empty() && header.light_cone.size() != W)
    throw std::invalid_argument(what + "the light cone has " + std::to_string(header.light_cone.size()) +
                                " words, not " + std::to_string(W));
  std::array<std::uint64_t, W> cone{};
  if (header.light_cone.empty()) {
    for (const PauliString<W>& key : keys) {
      for (int w = 0; w < W; ++w) cone[w] |= key.x[w] | key.z[w];
    }
  } else {
    std::copy(header.light_cone.begin(), header.light_cone.end(), cone.begin());
  }
  ChunkWriter out(sink);
  out.bytes(kMagic);
  out.u32(kColumnsVersion);
  out.u32(static_cast<std::uint32_t>(W));
  out.u32(std::same_as<C, Complex> ? kComplexCoefficients : kRealCoefficients);
  out.u32(static_cast<std::uint32_t>(header.bucket_bits));
  out.u64(header.num_qubits);
  out.u64(header.circuit_fingerprint);
  out.u64(header.task_fingerprint);
  out.u64(header.layers_done);
  out.u64(keys.size());
  out.u64(header.columns);
  for (const std::uint64_t word : cone) out.u64(word);
  for (const PauliString<W>& key : keys) {
    for (int w = 0; w < W; ++w) out.u64(key.x[w]);
  }
  for (const PauliString<W>& key : keys) {
    for (int w = 0; w < W; ++w) out.u64(key.z[w]);
  }
  for (const C& c : coefficients) {
    if constexpr (std::same_as<C, Complex>) {
      out.f64(c.real());
      out.f64(c.imag());
    } else {
      out.f64(c);
    }
  }
  out.finish();
}

/// The rows of a version-1 or -2 file whose header and size are valid (read_body), every term checked; a
/// version-1 file (no light cone) gets its keys' supports as its light cone.
template <int W, Coefficient C, class Read>
void decode_rows(Read&& read, std::string_view header_bytes, std::size_t num_qubits, std::size_t count,
                 std::size_t columns, bool has_cone, ColumnsCheckpoint& out, const std::string& name) {
  ColumnRows<W, C> rows;
  rows.keys.resize(count);
  rows.coefficients.resize(count * columns);
  std::array<std::uint64_t, W> cone{};
  read_body<W, C>(
      read, header_bytes, has_cone ? W : 0, [&](std::size_t i, std::uint64_t word) { cone[i] = word; },
      rows.keys, rows.coefficients, columns, name);
  const std::array<std::uint64_t, W> allowed = qubit_masks<W>(num_qubits);
  for (int w = 0; w < W; ++w) {
    if (const std::uint64_t stray = cone[w] & ~allowed[w]; stray != 0) {
      fail(name, "the light cone names qubit ", 64 * static_cast<std::size_t>(w) + std::countr_zero(stray),
           ", beyond the ", num_qubits, " qubits");
    }
  }
  bool ascending = true;
  for (std::size_t t = 0; t < count; ++t) {
    const PauliString<W>& key = rows.keys[t];
    check_key_bits<W>(key, allowed, t, num_qubits, name);
    bool any = false;
    for (std::size_t j = 0; j < columns; ++j) {
      const C& c = rows.coefficients[t * columns + j];
      if (!is_finite(c)) {
        fail(name, "term ", t, ", column ", j, " has a coefficient that is not finite: ", describe(c));
      }
      any = any || c != C(0.0);
    }
    if (!any)
      fail(name, "term ", t, " has every coefficient zero (a checkpoint holds only terms some column has)");
    for (int w = 0; w < W; ++w) {
      const std::uint64_t support = key.x[w] | key.z[w];
      if (!has_cone) {
        cone[w] |= support;
      } else if ((support & ~cone[w]) != 0) {
        fail(name, "term ", t, " acts on qubit ",
             64 * static_cast<std::size_t>(w) + std::countr_zero(support & ~cone[w]),
             ", outside the light cone");
      }
    }
    if (t > 0 && !(rows.keys[t - 1] < key)) ascending = false;
  }
  if (!ascending) check_distinct<W>(rows.keys, name);
  out.header.light_cone.assign(cone.begin(), cone.end());
  out.rows = std::move(rows);
}

template <Coefficient C, class Read>
void decode_rows_of_width(std::uint32_t width, Read&& read, std::string_view header_bytes,
                          std::size_t num_qubits, std::size_t count, std::size_t columns, bool has_cone,
                          ColumnsCheckpoint& out, const std::string& name) {
  switch (width) {
    case 1:
      return decode_rows<1, C>(read, header_bytes, num_qubits, count, columns, has_cone, out, name);
    case 2:
      return decode_rows<2, C>(read, header_bytes, num_qubits, count, columns, has_cone, out, name);
    case 4:
      return decode_rows<4, C>(read, header_bytes, num_qubits, count, columns, has_cone, out, name);
    case 8:
      return decode_rows<8, C>(read, header_bytes, num_qubits, count, columns, has_cone, out, name);
    default:
      return decode_rows<16, C>(read, header_bytes, num_qubits, count, columns, has_cone, out, name);
  }
}

/// A version-1 or -2 checkpoint of `size` bytes whose first 64 bytes are `header_bytes`, the rest from
/// `read` in order: the header (and version 2's column count) checked, the size against the term count,
/// then the rows (decode_rows).
template <class Read>
ColumnsCheckpoint decode_columns_from(std::string header_bytes, std::uint64_t size, Read&& read,
                                      const std::string& name) {
  const Header header = decode_header(header_bytes, name, true);
  const bool version2 = header.version == kColumnsVersion;
  std::uint64_t columns = 1;
  if (version2) {
    if (size < kColumnsHeaderBytes) {
      fail(name, "truncated: the file has ", size, " bytes, less than the ", kColumnsHeaderBytes,
           "-byte header of format version 2");
    }
    header_bytes.resize(kColumnsHeaderBytes);
    read(header_bytes.data() + kHeaderBytes, kColumnsHeaderBytes - kHeaderBytes);
    columns = get_u64(header_bytes, kColumnsOffset);
    if (columns == 0) fail(name, "column count 0: a checkpoint holds at least one coefficient column");
    if (columns > kMaxColumns) fail(name, "column count ", columns, " exceeds the maximum ", kMaxColumns);
  }
  const std::uint64_t width = header.width, count = header.count;
  check_size(count, 8 * (2 * width + columns * coefficient_doubles(header.complex)),
             header_bytes.size() + (version2 ? 8 * width : 0) + kChecksumBytes, size, name);
  ColumnsCheckpoint checkpoint;
  ColumnsHeader& h = checkpoint.header;
  h.circuit_fingerprint = header.circuit_fingerprint;
  h.task_fingerprint = header.task_fingerprint;
  h.layers_done = header.layers_done;
  h.bucket_bits = static_cast<int>(header.bucket_bits);
  h.num_qubits = static_cast<std::size_t>(header.num_qubits);
  h.columns = static_cast<std::size_t>(columns);
  const auto terms = static_cast<std::size_t>(count);
  if (header.complex) {
    decode_rows_of_width<Complex>(header.width, read, header_bytes, h.num_qubits, terms, h.columns, version2,
                                  checkpoint, name);
  } else {
    decode_rows_of_width<double>(header.width, read, header_bytes, h.num_qubits, terms, h.columns, version2,
                                 checkpoint, name);
  }
  return checkpoint;
}

}  // namespace

template <int W, Coefficient C>
std::string encode_columns_checkpoint(const ColumnsHeader& header, std::span<const PauliString<W>> keys,
                                      std::span<const C> coefficients) {
  std::string out;
  write_columns_checkpoint<W, C>([&](std::string_view bytes) { out.append(bytes); }, header, keys,
                                 coefficients);
  return out;
}

template <int W, Coefficient C>
void save_columns_checkpoint(const std::filesystem::path& path, const ColumnsHeader& header,
                             std::span<const PauliString<W>> keys, std::span<const C> coefficients) {
  write_file_atomically(
      path, [&](const ByteSink& sink) { write_columns_checkpoint<W, C>(sink, header, keys, coefficients); });
}

ColumnsCheckpoint decode_columns_checkpoint(std::string_view bytes, const std::string& name) {
  std::size_t at = std::min(bytes.size(), kHeaderBytes);
  return decode_columns_from(
      std::string(bytes.substr(0, at)), bytes.size(),
      [&](char* out, std::size_t n) {
        std::memcpy(out, bytes.data() + at, n);  // within the size checked
        at += n;
      },
      name);
}

ColumnsCheckpoint load_columns_checkpoint(const std::filesystem::path& path) {
  FileSource file(path);
  std::string header(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kHeaderBytes)), '\0');
  file.read(header.data(), header.size());
  return decode_columns_from(
      std::move(header), file.size(), [&](char* out, std::size_t n) { file.read(out, n); }, path.string());
}

#define PAULISTRINGS_COLUMNS_CHECKPOINT(W, C)                                                                \
  template std::string encode_columns_checkpoint<W, C>(const ColumnsHeader&,                                 \
                                                       std::span<const PauliString<W>>, std::span<const C>); \
  template void save_columns_checkpoint<W, C>(const std::filesystem::path&, const ColumnsHeader&,            \
                                              std::span<const PauliString<W>>, std::span<const C>);
PAULISTRINGS_COLUMNS_CHECKPOINT(1, double)
PAULISTRINGS_COLUMNS_CHECKPOINT(2, double)
PAULISTRINGS_COLUMNS_CHECKPOINT(4, double)
PAULISTRINGS_COLUMNS_CHECKPOINT(8, double)
PAULISTRINGS_COLUMNS_CHECKPOINT(16, double)
PAULISTRINGS_COLUMNS_CHECKPOINT(1, Complex)
PAULISTRINGS_COLUMNS_CHECKPOINT(2, Complex)
PAULISTRINGS_COLUMNS_CHECKPOINT(4, Complex)
PAULISTRINGS_COLUMNS_CHECKPOINT(8, Complex)
PAULISTRINGS_COLUMNS_CHECKPOINT(16, Complex)
#undef PAULISTRINGS_COLUMNS_CHECKPOINT

namespace {

/// The part files beside `path`: (part, parts) of every "<name>.part-<r>-of-<K>" with r < K.
std::vector<std::pair<std::size_t, std::size_t>> part_files(const std::filesystem::path& path) {
  const std::filesystem::path directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string prefix = path.filename().string() + ".part-";
  std::vector<std::pair<std::size_t, std::size_t>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string_view rest = std::string_view(name).substr(prefix.size());  // "<r>-of-<K>"
    const std::size_t of = rest.find("-of-");
    if (of == std::string_view::npos) continue;
    const std::optional<std::size_t> part = parse_index(rest.substr(0, of)), parts = parse_index(rest.substr(of + 4));
    if (!part || !parts || *part >= *parts) continue;
    found.emplace_back(*part, *parts);
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::filesystem::path checkpoint_part_path(const std::filesystem::path& path, std::size_t part, std::size_t parts) {
  std::filesystem::path out = path;
  out += ".part-" + std::to_string(part) + "-of-" + std::to_string(parts);
  return out;
}

std::size_t checkpoint_parts(const std::filesystem::path& path) {
  const std::vector<std::pair<std::size_t, std::size_t>> found = part_files(path);
  if (found.empty()) return 0;
  std::vector<std::size_t> counts;
  for (const auto& [part, parts] : found) counts.push_back(parts);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  const std::string name = "checkpoint " + path.string();
  if (counts.size() > 1) {
    throw std::invalid_argument(name + ": parts of runs with " + std::to_string(counts[0]) + " and " +
                                std::to_string(counts[1]) + " ranks lie beside it (" +
                                checkpoint_part_path(path, 0, counts[0]).string() + ", " +
                                checkpoint_part_path(path, 0, counts[1]).string() +
                                ", …); remove the stale ones");
  }
  const std::size_t parts = counts[0];
  for (std::size_t r = 0; r < parts; ++r) {
    if (r >= found.size() || found[r].first != r) {
      throw std::invalid_argument(name + ": part " + std::to_string(r) + " of " + std::to_string(parts) + " (" +
                                  checkpoint_part_path(path, r, parts).string() + ") is missing");
    }
  }
  std::error_code error;
  if (std::filesystem::exists(path, error)) {
    throw std::invalid_argument(name + ": both the file and " + std::to_string(parts) + " parts (" +
                                checkpoint_part_path(path, 0, parts).string() +
                                ", …) exist; remove the stale one");
  }
  return parts;
}

Checkpoint load_checkpoint_share(const std::filesystem::path& path, std::size_t parts, std::size_t rank,
                                 std::size_t ranks) {
  if (parts == 0 || ranks == 0 || rank >= ranks)
    throw std::invalid_argument("load_checkpoint_share: needs parts > 0 and rank < ranks");
  if (rank >= parts) return load_header_only(checkpoint_part_path(path, 0, parts));
  Checkpoint share = load_checkpoint(checkpoint_part_path(path, rank, parts));
  for (std::size_t j = rank + ranks; j < parts; j += ranks) {
    const Checkpoint part = load_checkpoint(checkpoint_part_path(path, j, parts));
    if (part.circuit_fingerprint != share.circuit_fingerprint || part.task_fingerprint != share.task_fingerprint ||
        part.layers_done != share.layers_done || part.sum.num_qubits() != share.sum.num_qubits()) {
      throw std::invalid_argument("checkpoint " + path.string() + ": part " + std::to_string(j) + " of " +
                                  std::to_string(parts) + " was written after another layer or for another task than part " +
                                  std::to_string(rank) + "; refusing to resume from it");
    }
    share.sum += part.sum;
  }
  return share;
}

void remove_other_checkpoints(const std::filesystem::path& path, std::size_t keep_parts) {
  std::error_code ignored;
  if (keep_parts != 0) std::filesystem::remove(path, ignored);
  for (const auto& [part, parts] : part_files(path)) {
    if (parts != keep_parts) std::filesystem::remove(checkpoint_part_path(path, part, parts), ignored);
  }
}

}  // namespace paulistrings::io
