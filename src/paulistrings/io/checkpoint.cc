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

#include "paulistrings/io/checkpoint_format.h"

namespace paulistrings::io {

using namespace checkpoint_format;

namespace {

// The columns of a version-1 checkpoint whose header and size are valid (read_body), every term checked,
// then the sum in canonical order (in place, with the bucket count of the file).
template <int W, Coefficient C, class Read>
AnyPauliSum decode_columns(Read&& read, std::string_view header_bytes, std::size_t num_qubits,
                           std::size_t count, int bucket_bits, const std::string& name, int threads) {
  using Sum = PauliSum<W, C>;
  using Key = PauliString<W>;
  typename Sum::KeyColumn keys(count);  // written in full by read_body
  typename Sum::CoefficientColumn coefficients(count);
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
  sum.assign_distinct_columns(std::move(keys), std::move(coefficients), bits, threads);
  return AnyPauliSum(std::move(sum));
}

template <Coefficient C, class Read>
AnyPauliSum decode_columns_of_width(std::uint32_t width, Read&& read, std::string_view header_bytes,
                                    std::size_t num_qubits, std::size_t count, int bucket_bits,
                                    const std::string& name, int threads) {
  switch (width) {
    case 1:
      return decode_columns<1, C>(read, header_bytes, num_qubits, count, bucket_bits, name, threads);
    case 2:
      return decode_columns<2, C>(read, header_bytes, num_qubits, count, bucket_bits, name, threads);
    case 4:
      return decode_columns<4, C>(read, header_bytes, num_qubits, count, bucket_bits, name, threads);
    case 8:
      return decode_columns<8, C>(read, header_bytes, num_qubits, count, bucket_bits, name, threads);
    default:
      return decode_columns<16, C>(read, header_bytes, num_qubits, count, bucket_bits, name, threads);
  }
}

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

namespace checkpoint_format {

Header decode_header(std::string_view bytes, const std::string& name, HeaderFor reader) {
  if (bytes.size() < kHeaderBytes) {
    fail(name, "truncated: the file has ", bytes.size(), " bytes, less than the ", kHeaderBytes,
         "-byte header");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    fail(name, "not a paulistrings checkpoint (the file does not start with \"PSCKPT01\")");
  }
  const std::uint32_t version = get_u32(bytes, kVersionOffset);
  const bool columns_reader = reader == HeaderFor::columns;
  if (reader == HeaderFor::groups) {
    if (version != kGroupsVersion) {
      fail(name, "format version ", version, " is not a split sweep's groups (version 3)",
           version == kFormatVersion || version == kColumnsVersion ? "; load_columns_checkpoint reads it"
                                                                   : "");
    }
  } else if (version == kGroupsVersion) {
    fail(name,
         "format version 3 holds every column group of a split sweep; a sweep resumes from it "
         "(load_groups_checkpoint), ",
         columns_reader ? "not as one group" : "not a run of one observable");
  } else if (version == kColumnsVersion && !columns_reader) {
    fail(name,
         "format version 2 holds several coefficient columns a term (a sweep's checkpoint); a run of "
         "one observable resumes from version 1");
  } else if (version != kFormatVersion && version != kColumnsVersion) {
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
  const std::uint32_t bucket_bits = reader == HeaderFor::groups ? 0 : get_u32(bytes, kReservedOffset);
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

}  // namespace checkpoint_format

namespace {

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

/// A checkpoint of `size` bytes whose 64-byte header is `header_bytes`, its columns from `read` (the
/// bytes after the header, in order): the size checked against the header's term count, then the
/// columns decoded (decode_columns).
template <class Read>
Checkpoint decode_from(std::string_view header_bytes, std::uint64_t size, Read&& read,
                       const std::string& name, int threads = 0) {
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
  checkpoint.sum =
      complex ? decode_columns_of_width<Complex>(width, read, header_bytes, n, terms, bits, name, threads)
              : decode_columns_of_width<double>(width, read, header_bytes, n, terms, bits, name, threads);
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

Checkpoint load_checkpoint(const std::filesystem::path& path, int threads) {
  FileSource file(path);
  std::string header(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kHeaderBytes)), '\0');
  file.read(header.data(), header.size());
  return decode_from(
      header, file.size(), [&](char* out, std::size_t n) { file.read(out, n); }, path.string(), threads);
}

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
                                 std::size_t ranks, int threads) {
  if (parts == 0 || ranks == 0 || rank >= ranks)
    throw std::invalid_argument("load_checkpoint_share: needs parts > 0 and rank < ranks");
  if (rank >= parts) return load_header_only(checkpoint_part_path(path, 0, parts));
  Checkpoint share = load_checkpoint(checkpoint_part_path(path, rank, parts), threads);
  for (std::size_t j = rank + ranks; j < parts; j += ranks) {
    const Checkpoint part = load_checkpoint(checkpoint_part_path(path, j, parts), threads);
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
