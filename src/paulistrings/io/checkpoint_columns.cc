// Checkpoints of format version 2: C coefficient columns a term, the rows in the engine's order, the
// bucket count and the light cone (ColumnsCheckpoint; a sweep's state, run/sweep_checkpoints.h). The
// layout is described at the top of checkpoint.cc; what the versions share is checkpoint_format.h.
//
// And format version 3: every column group of a split sweep (docs/design.md §7.8), each a version-2 file
// inside it. Integers little-endian, as in the other versions; offsets in bytes.
//
//   offset  size      field
//        0     8      magic, the ASCII bytes "PSCKPT01"
//        8     4      u32 format version = 3
//       12     4      u32 word width W (as version 1: the smallest width holding num_qubits)
//       16     4      u32 coefficient type: 0 = real double, 1 = complex double
//       20     4      u32 group count G, 1 ≤ G ≤ 2^20
//       24     8      u64 num_qubits (≤ 1024)
//       32     8      u64 circuit fingerprint
//       40     8      u64 task fingerprint
//       48     8      u64 layers done
//       56     8      u64 value columns: the last group's first + count
//       64            G group records, each:
//                       +0   8  u64 first value column
//                       +8   8  u64 value columns (≥ 1)
//                       +16  8  u64 next count (the terms at which the group is counted again)
//                       +24  4  u32 apart: 0, or 1 for one column run apart (then its count is 1)
//                       +28  4  u32 reserved, 0
//                       +32  8  u64 L, the bytes of the group's file
//                       +40  L  a version-2 file of the group's rows, whose width, coefficient type,
//                               qubit count, fingerprints and layers done are the ones above
//    end-8     8      u64 FNV-1a 64 checksum of every byte before it
//
// The groups' records follow in column order: the first starts at column 0 and each next one where the
// last ended. decode_groups_checkpoint checks, in this order: the header as the other readers check theirs
// (magic, version, width for the qubit count, coefficient type), the group count, then per group its record
// (first, count, apart, reserved, L within what is left of the file) and its file as
// decode_columns_checkpoint checks one, with the header's fields; then that the value columns are the
// header's, the checksum, and that nothing follows it.

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/core/text.h"
#include "paulistrings/io/atomic_file.h"
#include "paulistrings/io/checkpoint.h"
#include "paulistrings/io/checkpoint_format.h"

namespace paulistrings::io {

using namespace checkpoint_format;

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
  const Header header = decode_header(header_bytes, name, HeaderFor::columns);
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

namespace {

constexpr std::uint32_t kMaxGroups = std::uint32_t{1} << 20;
constexpr std::size_t kGroupRecordBytes = 40;

/// The exact bytes of a version-2 file of `count` rows of `columns` coefficients.
std::uint64_t columns_file_bytes(int W, bool complex, std::uint64_t count, std::uint64_t columns) {
  return kColumnsHeaderBytes + 8 * static_cast<std::uint64_t>(W) +
         8 * count * (2 * W + columns * coefficient_doubles(complex)) + kChecksumBytes;
}

template <int W, Coefficient C>
void write_groups_checkpoint(const ByteSink& sink, std::span<const ColumnGroupRows<W, C>> groups) {
  const std::string what = "save_groups_checkpoint: ";
  if (groups.empty()) throw std::invalid_argument(what + "a checkpoint of groups holds at least one group");
  if (groups.size() > kMaxGroups)
    throw std::invalid_argument(what + std::to_string(groups.size()) + " groups exceed the maximum " +
                                std::to_string(kMaxGroups));
  const ColumnsHeader& first = groups[0].header;
  std::size_t next = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ColumnGroupPlace& place = groups[g].place;
    const ColumnsHeader& header = groups[g].header;
    const std::string whose = what + "group " + std::to_string(g) + " ";
    if (place.first != next || place.count == 0)
      throw std::invalid_argument(whose + "starts at value column " + std::to_string(place.first) + " with " +
                                  std::to_string(place.count) +
                                  " columns; the groups cover adjacent columns from 0, "
                                  "this one from " +
                                  std::to_string(next));
    if (place.apart && place.count != 1)
      throw std::invalid_argument(whose + "runs apart with " + std::to_string(place.count) +
                                  " columns; only a one-column group runs apart");
    if (header.circuit_fingerprint != first.circuit_fingerprint ||
        header.task_fingerprint != first.task_fingerprint || header.layers_done != first.layers_done ||
        header.num_qubits != first.num_qubits)
      throw std::invalid_argument(whose + "has other fingerprints, layers done or qubits than group 0");
    next = place.first + place.count;
  }
  ChunkWriter out(sink);
  out.bytes(kMagic);
  out.u32(kGroupsVersion);
  out.u32(static_cast<std::uint32_t>(W));
  out.u32(std::same_as<C, Complex> ? kComplexCoefficients : kRealCoefficients);
  out.u32(static_cast<std::uint32_t>(groups.size()));
  out.u64(first.num_qubits);
  out.u64(first.circuit_fingerprint);
  out.u64(first.task_fingerprint);
  out.u64(first.layers_done);
  out.u64(next);
  for (const ColumnGroupRows<W, C>& group : groups) {
    out.u64(group.place.first);
    out.u64(group.place.count);
    out.u64(group.place.next_count);
    out.u32(group.place.apart ? 1 : 0);
    out.u32(0);
    const std::uint64_t columns = group.header.columns;
    // The size write_columns_checkpoint will give (it refuses rows whose counts disagree, before any byte).
    out.u64(columns == 0 ? 0 : columns_file_bytes(W, std::same_as<C, Complex>, group.keys.size(), columns));
    std::uint64_t written = 0;
    write_columns_checkpoint<W, C>(
        [&](std::string_view bytes) {
          out.bytes(bytes);
          written += bytes.size();
        },
        group.header, group.keys, group.coefficients);
    if (written != columns_file_bytes(W, std::same_as<C, Complex>, group.keys.size(), columns))
      throw std::logic_error(what + "a group's file has another size than its record says");
  }
  out.finish();
}

/// A version-3 file of `size` bytes, read in order from `read`; every byte read goes into the checksum.
template <class Read>
std::vector<ColumnGroup> decode_groups_from(std::uint64_t size, Read&& read_raw, const std::string& name) {
  std::uint64_t hash = fnv1a64({});
  std::uint64_t consumed = 0;
  const auto read = [&](char* out, std::size_t n) {
    read_raw(out, n);
    hash = fnv1a64(std::string_view(out, n), hash);
    consumed += n;
  };
  if (size < kHeaderBytes + kChecksumBytes) {
    fail(name, "truncated: the file has ", size, " bytes, less than the ", kHeaderBytes + kChecksumBytes,
         " bytes of a header and a checksum");
  }
  std::string header_bytes(kHeaderBytes, '\0');
  read(header_bytes.data(), header_bytes.size());
  const Header header = decode_header(header_bytes, name, HeaderFor::groups);
  const std::uint32_t count = get_u32(header_bytes, kReservedOffset);
  if (count == 0 || count > kMaxGroups)
    fail(name, "group count ", count, " is not between 1 and ", kMaxGroups);
  const std::uint64_t num_qubits = header.num_qubits, circuit = header.circuit_fingerprint,
                      task = header.task_fingerprint, layers = header.layers_done, values = header.count;
  std::vector<ColumnGroup> groups;
  std::uint64_t next = 0;
  std::string record(kGroupRecordBytes, '\0');
  for (std::uint32_t g = 0; g < count; ++g) {
    const std::string group_name = name + ", group " + std::to_string(g);
    if (size - consumed < kGroupRecordBytes + kChecksumBytes) {
      fail(name, "truncated: the file ends before group ", g, "'s record");
    }
    read(record.data(), record.size());
    ColumnGroup group;
    const std::uint64_t first = get_u64(record, 0), columns = get_u64(record, 8);
    const std::uint32_t apart = get_u32(record, 24), reserved = get_u32(record, 28);
    const std::uint64_t bytes = get_u64(record, 32);
    if (first != next || columns == 0 || columns > kMaxColumns) {
      fail(name, "group ", g, " starts at value column ", first, " with ", columns,
           " columns; the groups cover adjacent columns from 0, this one from ", next);
    }
    if (apart > 1 || (apart == 1 && columns != 1)) {
      fail(name, "group ", g, " has apart = ", apart, " with ", columns, " columns (0, or 1 for one column)");
    }
    if (reserved != 0) fail(name, "group ", g, "'s reserved field is ", reserved, ", not 0");
    if (bytes > size - consumed - kChecksumBytes) {
      fail(name, "group ", g, "'s file of ", bytes, " bytes runs past the end of the file");
    }
    group.place.first = static_cast<std::size_t>(first);
    group.place.count = static_cast<std::size_t>(columns);
    group.place.next_count = static_cast<std::size_t>(get_u64(record, 16));
    group.place.apart = apart == 1;
    std::uint64_t left = bytes;
    const auto read_group = [&](char* out, std::size_t n) {
      if (n > left) fail(group_name, "reads past the group's ", bytes, " bytes");
      left -= n;
      read(out, n);
    };
    std::string group_header(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kHeaderBytes)), '\0');
    read_group(group_header.data(), group_header.size());
    if (bytes >= kHeaderBytes && get_u32(group_header, kVersionOffset) != kColumnsVersion) {
      fail(group_name, "format version ", get_u32(group_header, kVersionOffset),
           " inside a version-3 file (each group is version 2)");
    }
    group.rows = decode_columns_from(std::move(group_header), bytes, read_group, group_name);
    if (left != 0) fail(group_name, left, " bytes of the group's file were not read");
    const ColumnsHeader& h = group.rows.header;
    if (h.num_qubits != num_qubits || h.circuit_fingerprint != circuit || h.task_fingerprint != task ||
        h.layers_done != layers) {
      fail(group_name, "has other qubits, fingerprints or layers done than the file's header");
    }
    const bool complex = std::visit(
        [](const auto& rows) { return std::same_as<typename std::decay_t<decltype(rows)>::Coeff, Complex>; },
        group.rows.rows);
    if (complex != header.complex) fail(group_name, "has another coefficient type than the file's header");
    next = first + columns;
    groups.push_back(std::move(group));
  }
  if (next != values) fail(name, "the groups cover ", next, " value columns but the header says ", values);
  if (size - consumed != kChecksumBytes) {
    fail(name, size - consumed - kChecksumBytes, " bytes follow the last group (corrupted)");
  }
  const std::uint64_t expected = hash;
  std::string checksum(kChecksumBytes, '\0');
  read_raw(checksum.data(), checksum.size());
  if (expected != get_u64(checksum, 0)) fail(name, "checksum mismatch: the file is corrupted or truncated");
  return groups;
}

}  // namespace

template <int W, Coefficient C>
std::string encode_groups_checkpoint(std::span<const ColumnGroupRows<W, C>> groups) {
  std::string out;
  write_groups_checkpoint<W, C>([&](std::string_view bytes) { out.append(bytes); }, groups);
  return out;
}

template <int W, Coefficient C>
void save_groups_checkpoint(const std::filesystem::path& path,
                            std::span<const ColumnGroupRows<W, C>> groups) {
  write_file_atomically(path, [&](const ByteSink& sink) { write_groups_checkpoint<W, C>(sink, groups); });
}

std::vector<ColumnGroup> decode_groups_checkpoint(std::string_view bytes, const std::string& name) {
  std::size_t at = 0;
  return decode_groups_from(
      bytes.size(),
      [&](char* out, std::size_t n) {
        if (n > bytes.size() - at) fail(name, "truncated");
        std::memcpy(out, bytes.data() + at, n);
        at += n;
      },
      name);
}

std::vector<ColumnGroup> load_groups_checkpoint(const std::filesystem::path& path) {
  FileSource file(path);
  return decode_groups_from(
      file.size(), [&](char* out, std::size_t n) { file.read(out, n); }, path.string());
}

std::uint32_t checkpoint_version(const std::filesystem::path& path) {
  FileSource file(path);
  std::string header(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kVersionOffset + 4)),
                     '\0');
  file.read(header.data(), header.size());
  if (header.size() < kVersionOffset + 4 || std::string_view(header).substr(0, kMagic.size()) != kMagic) {
    fail(path.string(), "not a paulistrings checkpoint (the file does not start with \"PSCKPT01\")");
  }
  const std::uint32_t version = get_u32(header, kVersionOffset);
  if (version != kFormatVersion && version != kColumnsVersion && version != kGroupsVersion) {
    fail(path.string(), "format version ", version, " is not supported (this build reads 1, 2 and 3)");
  }
  return version;
}

#define PAULISTRINGS_COLUMNS_CHECKPOINT(W, C)                                                                \
  template std::string encode_columns_checkpoint<W, C>(const ColumnsHeader&,                                 \
                                                       std::span<const PauliString<W>>, std::span<const C>); \
  template void save_columns_checkpoint<W, C>(const std::filesystem::path&, const ColumnsHeader&,            \
                                              std::span<const PauliString<W>>, std::span<const C>);          \
  template std::string encode_groups_checkpoint<W, C>(std::span<const ColumnGroupRows<W, C>>);               \
  template void save_groups_checkpoint<W, C>(const std::filesystem::path&,                                   \
                                             std::span<const ColumnGroupRows<W, C>>);
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

}  // namespace paulistrings::io
