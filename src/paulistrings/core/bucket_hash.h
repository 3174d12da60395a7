#pragma once
// BucketHash<W>: the GF(2)-linear bucket function h(v) = H·v (docs/design.md §4.2). Row j of H is a dense
// pseudo-random vector of GF(2)^{2·64W} derived from (seed, j) alone, so h(v ⊕ d) = h(v) ⊕ h(d) and
// growing from b to b+1 rows splits every bucket β into β and β | 2^b (grow-only refinement).

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
  std::uint64_t operator()(const PauliString<W>& key, int bits) const {
    std::uint64_t h = 0;
    for (int j = 0; j < bits; ++j) {
      int parity = 0;
      for (int w = 0; w < W; ++w)
        parity += std::popcount((rows_[j].x[w] & key.x[w]) ^ (rows_[j].z[w] & key.z[w]));
      h |= static_cast<std::uint64_t>(parity & 1) << j;
    }
    return h;
  }

  friend bool operator==(const BucketHash& a, const BucketHash& b) { return a.seed_ == b.seed_; }

 private:
  std::uint64_t seed_;
  std::array<PauliString<W>, kMaxBucketBits> rows_;  // row(seed_, j), precomputed
};

}  // namespace paulistrings
