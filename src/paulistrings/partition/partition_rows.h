#pragma once
// PartitionRows: the p extra GF(2) rows R that split a Pauli sum into P = 2^p partitions (docs/design.md §7.4).
// Partition of a key v = (x, z) is part(v) = R·v (bit j = parity of row j AND v). part is linear, so a
// channel delta d sends every output of a term in partition r to partition r ⊕ part(d): a delta with
// part(d) = 0 is local, any other is remote and has exactly one partner per partition.
//
// Three ways to choose the rows:
//  - seeded(p, n, seed): dense pseudo-random rows over the x and z bits of the n qubits;
//  - seeded_excluding(p, n, seed, qubits): the same with the listed qubits left out of every row
//    (gates acting only on those qubits then stay local);
//  - cut(n, blocks, basis): a spatial cut. blocks[b] lists the qubits of block b (P = blocks.size()
//    blocks); row j reads the `basis` bit ('z' by default: the parity of Z/Y factors; 'x': of X/Y
//    factors) of the qubits in the blocks whose index has bit j set. Qubits in no block are read by no
//    row. With basis 'z', X-type deltas (rx kicks) are always local and a ZZ delta is remote only when
//    its edge crosses a block boundary — the heavy-hex kicked-Ising cut.
// Rows are linearly independent (checked), so every partition can be reached.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "paulistrings/core/pauli_string.h"

namespace paulistrings {

inline constexpr int kMaxPartitionBits = 16;  ///< at most 65536 partitions

class PartitionRows {
 public:
  /// One partition (no rows) on num_qubits qubits.
  explicit PartitionRows(std::size_t num_qubits = 0);

  /// `bits` dense random rows from `seed` (bits ≤ kMaxPartitionBits). Throws std::invalid_argument
  /// when num_qubits > 1024 or no independent rows exist (2·num_qubits < bits).
  static PartitionRows seeded(int bits, std::size_t num_qubits, std::uint64_t seed);
  /// Seeded rows that read no bit of the `excluded` qubits (each < num_qubits).
  static PartitionRows seeded_excluding(int bits, std::size_t num_qubits, std::uint64_t seed,
                                        const std::vector<std::size_t>& excluded);
  /// A spatial cut: blocks.size() must be a power of two (≥ 1); every qubit < num_qubits, in at most one
  /// block, and every block non-empty when there are ≥ 2 blocks. basis is 'z' or 'x'.
  static PartitionRows cut(std::size_t num_qubits, const std::vector<std::vector<std::size_t>>& blocks,
                           char basis = 'z');
  /// Number of partition bits p for a partition count (a power of two ≥ 1); std::invalid_argument
  /// naming the count otherwise.
  static int bits_for_count(std::size_t partitions);

  int bits() const { return static_cast<int>(rows_.size()); }
  std::size_t count() const { return std::size_t{1} << rows_.size(); }
  std::size_t num_qubits() const { return num_qubits_; }
  /// A 64-bit fingerprint of the rows (ranks compare it before a distributed run).
  std::uint64_t fingerprint() const;
  std::string description() const { return description_; }

  /// The rows as W-word keys (the first W words of each; the GPU engine evaluates part on the device).
  template <int W>
  std::vector<PauliString<W>> rows_as() const {
    std::vector<PauliString<W>> out(rows_.size());
    for (std::size_t j = 0; j < rows_.size(); ++j) {
      for (int w = 0; w < W; ++w) {
        out[j].x[w] = rows_[j].x[w];
        out[j].z[w] = rows_[j].z[w];
      }
    }
    return out;
  }

  /// part(v) = R·v.
  template <int W>
  std::uint32_t part(const PauliString<W>& key) const {
    return row_parities(rows_, key);
  }

 private:
  using Row = PauliString<16>;  // 1024 qubits; part<W> reads the first W words
  static void check_qubits(std::size_t num_qubits);
  /// Appends `row` when independent of the rows so far; returns whether it did.
  bool add_independent(const Row& row);

  std::size_t num_qubits_ = 0;
  std::vector<Row> rows_;
  std::string description_ = "single";
};

}  // namespace paulistrings
