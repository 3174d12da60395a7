#pragma once
// ColumnEngine<W, C>: the column-index CPU engine (experimental; docs/design.md §7.5). Terms live in
// append-only rows (a removed row is a hole until the next compaction), indexed by column: one bitset
// of rows per (qubit, plane). A Pauli rotation reads only the columns of its generator's qubits — the
// rows that anticommute with it are an XOR of at most two columns per qubit — and then touches only
// those rows: the partner v ⊕ g of an anticommuting row anticommutes too, so pairs are found by a
// small hash of the anticommuting rows built per layer, and rows that commute are never read. No
// hash of all the keys is kept: keeping one up to date cost more than the rotations themselves
// (docs/PERFORMANCE.md). Other channels touch the rows with a non-identity factor on their support (an
// OR of columns), grouped by what they hold off the support.
// Single-threaded. Results are those of the reference engine to rounding: every output is summed in
// the reference engine's order (delta index) with the same operations.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/layer_engine.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

/// The column index of a row store: a live bitset and, per qubit and plane (x, z), the bitset of the
/// rows whose key has that bit. Columns of qubits no row ever used stay unallocated (all zero). A
/// removed row keeps its column bits (clearing them would cost a cache miss per factor of its key):
/// every query is masked by the live set, and clear() forgets them.
template <int W>
class ColumnIndex {
 public:
  static constexpr std::size_t kQubits = PauliString<W>::kMaxQubits;

  /// Words that cover every row added so far (rows 0 … 64·words()−1).
  std::size_t words() const { return used_words_; }
  /// Marks `row` live with `key`; rows are added in ascending order after a clear() (append-only).
  void add(std::size_t row, const PauliString<W>& key);
  /// add() for rows first … first + keys.size() − 1, 64 rows at a time: one bit-matrix transpose per
  /// (plane, key word) instead of one column write per factor of every key.
  void add_rows(std::size_t first, std::span<const PauliString<W>> keys);
  /// Marks `row` dead.
  void remove(std::size_t row) { live_[row / 64] &= ~(std::uint64_t{1} << (row % 64)); }
  /// A live row's key changes by XOR with `delta`: only the delta's columns are touched.
  void flip(std::size_t row, const PauliString<W>& delta);
  /// Forgets every row (allocated columns are kept, zeroed).
  void clear();
  bool live(std::size_t row) const { return row / 64 < used_words_ && (live_[row / 64] >> (row % 64)) & 1; }
  std::span<const std::uint64_t> live_words() const { return {live_.data(), used_words_}; }
  /// Bit r of out[r / 64]: row r is live and its key anticommutes with `generator`.
  void anticommuting(const PauliString<W>& generator, std::vector<std::uint64_t>& out) const;
  /// Bit r: row r is live and its key has a non-identity factor on some qubit of `support` (x | z).
  void touching(const PauliString<W>& support, std::vector<std::uint64_t>& out) const;
  /// The column of (qubit, plane 0 = x, 1 = z), or empty when never allocated; bits of dead rows are
  /// unspecified.
  std::span<const std::uint64_t> column(std::size_t qubit, int plane) const;

 private:
  std::vector<std::uint64_t>& column_for_write(std::size_t qubit, int plane);
  void grow_to(std::size_t words);

  std::size_t used_words_ = 0;      // words covering the highest row added
  std::size_t capacity_words_ = 0;  // allocated length of live_ and every allocated column
  std::vector<std::uint64_t> live_;
  std::array<std::vector<std::uint64_t>, 2 * kQubits> columns_;  // [2·qubit + plane]
};

struct ColumnEngineOptions {
  std::size_t target_bucket_len = 1024;  ///< the exported sum's bucket count (PauliSum::bits_to_fit)
  std::size_t min_buckets = 128;
};

/// What the layers read, for the benchmark's bytes-per-gate accounting (docs/PERFORMANCE.md).
struct ColumnEngineCounters {
  std::uint64_t layers = 0;
  std::uint64_t column_words = 0;  ///< 64-bit column words read to find the rows a layer touches
  std::uint64_t rows_visited = 0;  ///< rows a layer read (anticommuting, or touching the support)
  std::uint64_t rows_appended = 0;
  std::uint64_t compactions = 0;
};

template <int W, Coefficient C>
class ColumnEngine {
 public:
  explicit ColumnEngine(const PauliSum<W, C>& sum, const ColumnEngineOptions& options = {});

  std::size_t size() const { return live_rows_; }
  /// Applies one layer in place; returns the Σ|c|² dropped by the per-term truncation.
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Runs the truncation's layer passes.
  LayerPassResult finalize_layer(const Truncation& truncation);
  /// Writes the current sum into `sum` (canonical order, the options' bucket count).
  void export_to(PauliSum<W, C>& sum) const;

  // Inspection, for tests.
  std::size_t rows() const { return keys_.size(); }  ///< rows including holes
  const ColumnIndex<W>& index() const { return index_; }
  const ColumnEngineCounters& counters() const { return counters_; }
  /// Throws std::logic_error when the columns or the live set disagree with the rows, or a key repeats.
  void check_invariants() const;

 private:
  class PassTarget;
  /// An entry of the per-layer pairing table: a flipped row (+ 1; 0 is an empty slot) and 32 bits of
  /// its partner's hash. The row itself, not its place in flipped_: a lookup then loads one key, not
  /// flipped_ first.
  struct Slot {
    std::uint32_t row_plus_one = 0;
    std::uint32_t tag = 0;
  };

  static std::uint64_t key_hash(const PauliString<W>& key);
  /// A new row, indexed by the next index_appended() (a layer's appends are indexed together).
  std::size_t append(const PauliString<W>& key, const C& value);
  void index_appended();
  /// Removes a row: a hole in the arrays (coefficient 0), dead in the index.
  void erase(std::size_t row);
  /// Gives a row the key key ⊕ delta (absent from the sum) and `value`, where it stands.
  void move(std::size_t row, const PauliString<W>& delta, const C& value);
  /// Drops the holes (keeping the live rows' order) when they outnumber the live rows.
  void compact_if_sparse();

  double rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation, bool test_unchanged);
  double local_layer(const PreparedChannel<W>& table, const Truncation& truncation, bool test_unchanged);
  /// The unchanged rows (not flagged in `changed`) against a policy they were not tested with yet.
  double test_unchanged_rows(const std::vector<std::uint64_t>& changed, const Truncation& truncation);

  ColumnEngineOptions options_;
  ColumnEngineCounters counters_;
  std::vector<PauliString<W>> keys_;
  std::vector<C> coefficients_;
  ColumnIndex<W> index_;
  std::size_t live_rows_ = 0;
  std::size_t indexed_rows_ = 0;  // rows past this one are appended but not yet in index_
  // Scratch kept across layers.
  std::vector<std::uint64_t> flags_;                // the rows a layer reads
  std::vector<std::uint32_t> to_erase_;             // rows removed at the end of a layer
  std::vector<std::uint32_t> unflipped_, flipped_;  // anticommuting rows by the side of g's pivot bit
  std::vector<Slot> pairing_;                       // flipped_ by the key of their partner
  std::vector<std::uint64_t> hashes_, unflipped_hashes_;  // of flipped_'s partners, of unflipped_'s keys
  std::vector<char> paired_;  // by row: a flipped row found by its partner (all 0 between layers)
  /// The policy every live row is known to pass (held, so its identity stays unique).
  TestedPolicy tested_;
};

static_assert(LayerEngine<ColumnEngine<2, double>, 2>);

}  // namespace paulistrings

#include "paulistrings/cpu/column_engine.inl"
