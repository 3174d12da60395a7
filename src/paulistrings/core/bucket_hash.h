#pragma once
// BucketHash<W>: the GF(2)-linear bucket function h(v) = H·v (docs/design.md §4.2). Row j of H is a dense
// pseudo-random vector of GF(2)^{2·64W} derived from (seed, j) alone, so h(v ⊕ d) = h(v) ⊕ h(d) and
// growing from b to b+1 rows splits every bucket β into β and β | 2^b (grow-only refinement). A hash
// may also take columns of another hash (copy_column): a narrowed engine's keys, whose positions are
// labels of the full-width qubits, then fall in the buckets their full-width keys fall in (§7.6).

#include <array>
#include <bit>
#include <cstdint>

#include "paulistrings/core/pauli_string.h"

namespace paulistrings {

inline constexpr std::uint64_t kDefaultHashSeed = 0x5eed'c0de'2026'0001ULL;
inline constexpr int kMaxBucketBits = 30;

/// splitmix64: the project's stateless mixer for hash rows and counter-based random draws.
constexpr std::uint64_t splitmix64(std::uint64_t v) {
  v += 0x9e3779b97f4a7c15ULL;
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  return v ^ (v >> 31);
}

template <int W>
class BucketHash {
 public:
  explicit BucketHash(std::uint64_t seed = kDefaultHashSeed) : seed_(seed) {
    for (int j = 0; j < kMaxBucketBits; ++j) rows_[j] = row(seed, j);
  }

  std::uint64_t seed() const { return seed_; }

  /// Row j of H (x words then z words); word w of row j depends only on (seed, j, w).
  static PauliString<W> row(std::uint64_t seed, int j) {
    PauliString<W> r;
    for (int w = 0; w < W; ++w) {
      r.x[w] = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(j) * 64 + 2 * w));
      r.z[w] = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(j) * 64 + 2 * w + 1));
    }
    return r;
  }

  /// The low `bits` bits of h(key), bits ≤ kMaxBucketBits.
  std::uint64_t operator()(const PauliString<W>& key, int bits) const { return bits_between(key, 0, bits); }

  /// Bits [from, to) of h(key), shifted down to bit 0 (0 ≤ from ≤ to ≤ kMaxBucketBits): what a bucket
  /// refined from 2^from to 2^to buckets adds to its index.
  std::uint64_t bits_between(const PauliString<W>& key, int from, int to) const {
    std::uint64_t h = 0;
    for (int j = from; j < to; ++j) {
      int parity = 0;
      for (int w = 0; w < W; ++w)
        parity += std::popcount((rows_[j].x[w] & key.x[w]) ^ (rows_[j].z[w] & key.z[w]));
      h |= static_cast<std::uint64_t>(parity & 1) << (j - from);
    }
    return h;
  }

  /// Column `position` of H (what the x and z bits at qubit `position` add to h) becomes column `from`
  /// of `other`. With every position a key uses so assigned, h(key) = other.h(the key with each position
  /// moved to the qubit its column came from). It moves every key with a factor at `position` to
  /// another bucket, so a store that holds keys calls it only for a position none of them uses.
  template <int W2>
  void copy_column(std::size_t position, const BucketHash<W2>& other, std::size_t from) {
    const std::size_t w = position / 64, w2 = from / 64;
    const std::uint64_t bit = std::uint64_t{1} << (position % 64);
    for (int j = 0; j < kMaxBucketBits; ++j) {
      const bool x = (other.rows_[j].x[w2] >> (from % 64)) & 1;
      const bool z = (other.rows_[j].z[w2] >> (from % 64)) & 1;
      rows_[j].x[w] = x ? rows_[j].x[w] | bit : rows_[j].x[w] & ~bit;
      rows_[j].z[w] = z ? rows_[j].z[w] | bit : rows_[j].z[w] & ~bit;
    }
  }

  friend bool operator==(const BucketHash& a, const BucketHash& b) {
    return a.seed_ == b.seed_ && a.rows_ == b.rows_;
  }

 private:
  template <int W2>
  friend class BucketHash;

  std::uint64_t seed_;
  std::array<PauliString<W>, kMaxBucketBits> rows_;  // row(seed_, j), precomputed
};

}  // namespace paulistrings
