// Checkpoints of format version 2: C coefficient columns a term, the rows in the engine's order, the
// bucket count and the light cone (ColumnsCheckpoint; a sweep's state, run/sweep_checkpoints.h). The
// layout is described at the top of checkpoint.cc; what both versions share is checkpoint_format.h.

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

}  // namespace paulistrings::io
