#pragma once
// Checkpoints (docs/design.md §9): a versioned little-endian binary file holding a propagation in
// progress — magic "PSCKPT01", format version, word width W, coefficient type (real/complex),
// bucket count (restored on load, so a resumed run is bitwise the uninterrupted one), qubit count, circuit
// fingerprint, task fingerprint (what else must match to resume: direction, truncation, observable), the
// number of layers already applied, term count, then the columns (x words, z words, coefficients) and an
// FNV-1a 64 checksum of everything before it. Written with write_file_atomically; read back with every field
// validated, so a truncated, corrupted or foreign file is refused with a message saying which check failed.
// Format version 2 (ColumnsCheckpoint) holds C ≥ 1 coefficient columns a term — a sweep's state
// (docs/design.md §7.8): the same header plus the column count and the engine's light cone, the rows in the
// order the writer gives them (the order is part of the state). Format version 3 holds every group of a
// split sweep, each as a version-2 file. The byte layouts: checkpoint.cc, checkpoint_columns.cc.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "paulistrings/core/any_pauli_sum.h"

namespace paulistrings::io {

struct Checkpoint {
  std::uint64_t circuit_fingerprint = 0;
  std::uint64_t task_fingerprint = 0;
  std::uint64_t layers_done = 0;
  AnyPauliSum sum;
};

/// Serializes to bytes (the exact file content).
std::string encode_checkpoint(const Checkpoint& checkpoint);
/// Parses bytes; throws std::invalid_argument("checkpoint <name>: <which check failed>").
Checkpoint decode_checkpoint(std::string_view bytes, const std::string& name = "<checkpoint>");

/// encode + write_file_atomically, streamed: the bytes go to the file in ~1 MiB pieces, the terms in key
/// order through a sorted index (4 bytes a term below 2^32 terms, else 8), so a save holds neither a
/// copy of the sum nor the file's bytes.
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
/// The same for a live sum, without building a Checkpoint (which would copy it).
void save_checkpoint(const std::filesystem::path& path, std::uint64_t circuit_fingerprint,
                     std::uint64_t task_fingerprint, std::uint64_t layers_done, const AnyPauliSum& sum);
/// decode_checkpoint of the file, read in 1 MiB pieces straight into the sum's columns: the load holds
/// the sum once (plus 24 bytes a term while it is put in canonical order, on up to `threads` threads;
/// 0: OpenMP's default), not the file's bytes.
Checkpoint load_checkpoint(const std::filesystem::path& path, int threads = 0);

// ---- checkpoints of several coefficient columns (format version 2) ----
// What a sweep stopped at a layer boundary holds (sweep/propagate_sweep.h, SweepState): every term's key
// and its C coefficients (a sweep's K values and K derivatives per gradient parameter), the rows in the
// engine's order — its sums depend on that order, so a resumed sweep gives the uninterrupted one's bits —
// and what else the engine needs to continue as it would have: its bucket count and its light cone.

/// Everything but the rows.
struct ColumnsHeader {
  std::uint64_t circuit_fingerprint = 0;
  std::uint64_t task_fingerprint = 0;
  std::uint64_t layers_done = 0;
  int bucket_bits = 0;  ///< 0..30: the engine had 2^bucket_bits buckets
  std::size_t num_qubits = 0;
  std::size_t columns = 1;  ///< C ≥ 1 coefficients a term
  /// W words, bit q % 64 of word q / 64: a superset of the qubits the terms act on (the engine skips a
  /// layer outside it). Writing, empty stands for the keys' supports; loaded, always W words.
  std::vector<std::uint64_t> light_cone;
};

/// The rows of a ColumnsCheckpoint: keys (distinct), coefficients row-major (keys.size() × columns; a row
/// may hold zeros, never only zeros).
template <int W, Coefficient C>
struct ColumnRows {
  static constexpr int kWidth = W;
  using Coeff = C;
  std::vector<PauliString<W>> keys;
  std::vector<C> coefficients;
};
using AnyColumnRows =
    std::variant<ColumnRows<1, double>, ColumnRows<2, double>, ColumnRows<4, double>, ColumnRows<8, double>,
                 ColumnRows<16, double>, ColumnRows<1, Complex>, ColumnRows<2, Complex>,
                 ColumnRows<4, Complex>, ColumnRows<8, Complex>, ColumnRows<16, Complex>>;

struct ColumnsCheckpoint {
  ColumnsHeader header;
  AnyColumnRows rows;  ///< at the width of header.num_qubits
};

/// The bytes of a version-2 file (the rows in the order given). Throws std::invalid_argument when the
/// sizes disagree (coefficients ≠ keys × columns, columns = 0, W not the width of num_qubits).
template <int W, Coefficient C>
std::string encode_columns_checkpoint(const ColumnsHeader& header, std::span<const PauliString<W>> keys,
                                      std::span<const C> coefficients);
/// encode_columns_checkpoint + write_file_atomically, streamed from the rows (no copy of them).
template <int W, Coefficient C>
void save_columns_checkpoint(const std::filesystem::path& path, const ColumnsHeader& header,
                             std::span<const PauliString<W>> keys, std::span<const C> coefficients);
/// Parses a version-2 file, or a version-1 file as one column (rows in key order, the keys' supports as
/// the light cone); throws std::invalid_argument("checkpoint <name>: <which check failed>").
ColumnsCheckpoint decode_columns_checkpoint(std::string_view bytes, const std::string& name = "<checkpoint>");
/// decode_columns_checkpoint of the file, read in 1 MiB pieces straight into the rows.
ColumnsCheckpoint load_columns_checkpoint(const std::filesystem::path& path);

// ---- checkpoints of a split sweep (format version 3) ----
// A sweep whose columns have split into groups (docs/design.md §7.8, "Column groups") is one state per
// group. Version 3 holds every group in one file, written atomically: a header (what every group shares),
// then per group its place among the columns and a complete version-2 file of its rows — its bucket
// count, light cone and rows in its engine's order. The byte layout: checkpoint_columns.cc.

/// A group's place among a split sweep's value columns.
struct ColumnGroupPlace {
  std::size_t first = 0;       ///< its first value column
  std::size_t count = 0;       ///< its value columns (≥ 1); its rows hold count × (1 + gradients) columns
  std::size_t next_count = 0;  ///< the terms at which its columns are counted again for a split
  bool apart = false;          ///< one column run apart on the host engine (count = 1)
};

/// A group to write: its place, and its rows as save_columns_checkpoint takes them. Every group's header
/// has the same fingerprints, layers done and qubit count.
template <int W, Coefficient C>
struct ColumnGroupRows {
  ColumnGroupPlace place;
  ColumnsHeader header;
  std::span<const PauliString<W>> keys;
  std::span<const C> coefficients;
};

/// A group read back: its place and its version-2 file.
struct ColumnGroup {
  ColumnGroupPlace place;
  ColumnsCheckpoint rows;
};

/// The bytes of a version-3 file. Throws std::invalid_argument when a group's rows are refused as
/// encode_columns_checkpoint refuses them, when there is no group, when the groups do not cover adjacent
/// value columns from 0 in order (first of each = the end of the last, count ≥ 1), an apart group has more
/// than one column, or the groups' fingerprints, layers done or qubit counts differ.
template <int W, Coefficient C>
std::string encode_groups_checkpoint(std::span<const ColumnGroupRows<W, C>> groups);
/// encode_groups_checkpoint + write_file_atomically, streamed from the rows.
template <int W, Coefficient C>
void save_groups_checkpoint(const std::filesystem::path& path, std::span<const ColumnGroupRows<W, C>> groups);
/// Parses a version-3 file: its groups in column order. A file of another version is refused, naming the
/// reader that takes it; checks as the writer's, each group's file as decode_columns_checkpoint's, and the
/// whole file's checksum; throws std::invalid_argument("checkpoint <name>: <which check failed>").
std::vector<ColumnGroup> decode_groups_checkpoint(std::string_view bytes,
                                                  const std::string& name = "<checkpoint>");
/// decode_groups_checkpoint of the file, read in 1 MiB pieces straight into the rows.
std::vector<ColumnGroup> load_groups_checkpoint(const std::filesystem::path& path);

/// The format version of the checkpoint file at `path` (1, 2 or 3), from its header alone. Throws
/// std::invalid_argument when the file is not a paulistrings checkpoint or is of another version, and what
/// FileSource throws when it cannot be read.
std::uint32_t checkpoint_version(const std::filesystem::path& path);

// ---- checkpoints in parts ----
// A distributed run (K MPI ranks) checkpoints without gathering: rank r writes its share of the sum,
// an ordinary checkpoint file, to "<path>.part-<r>-of-<K>". The K parts together are the checkpoint at
// <path>; the shares are disjoint, so the whole sum is their sum. Writing a checkpoint at <path> replaces
// whatever checkpoint was there, single or in parts (remove_other_checkpoints).

/// "<path>.part-<part>-of-<parts>".
std::filesystem::path checkpoint_part_path(const std::filesystem::path& path, std::size_t part, std::size_t parts);

/// How the checkpoint at `path` is stored: 0 when no part file exists (a single file, or nothing), K when
/// parts 0..K-1 of K all exist. Throws std::invalid_argument naming the files when parts of several
/// counts exist, when one of the K is missing, or when the single file and parts both exist.
std::size_t checkpoint_parts(const std::filesystem::path& path);

/// What rank `rank` of `ranks` resumes from, of the checkpoint at `path` in `parts` parts: parts rank,
/// rank + ranks, … added (any rank count works: the run routes the terms to their owners); where
/// rank ≥ parts, an empty sum of part 0's qubit count and coefficient type, with part 0's header. Throws
/// std::invalid_argument when the parts read disagree on the fingerprints, layers done or qubit count
/// (naming the part), and what load_checkpoint throws. `threads` as load_checkpoint's.
Checkpoint load_checkpoint_share(const std::filesystem::path& path, std::size_t parts, std::size_t rank,
                                 std::size_t ranks, int threads = 0);

/// Removes every checkpoint file at `path` but the single file (keep_parts = 0) or the K-part set
/// (keep_parts = K): what a previous run with another rank count left there. Missing files are no error.
void remove_other_checkpoints(const std::filesystem::path& path, std::size_t keep_parts);

}  // namespace paulistrings::io
