#pragma once
// CosetPlan: the write-disjoint task decomposition of one layer (docs/design.md §4.2). The hashes h(d) of
// a layer's deltas span a subspace S of the bucket space GF(2)^b; every output bucket of a coset
// β ⊕ S reads only input buckets of that coset. With a fully reduced echelon basis of S (pivot
// bits exclusive), each coset is named by its representative (pivot bits clear) and its members by
// a local index c ∈ [0, 2^k): member(c) = representative ⊕ Σ_{i: bit i of c} basis[i].

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace paulistrings {

class CosetPlan {
 public:
  CosetPlan() = default;
  /// Plan for 2^bits buckets and the given delta hashes (each < 2^bits).
  CosetPlan(int bits, std::span<const std::uint64_t> delta_hashes);

  int dimension() const { return static_cast<int>(basis_.size()); }
  std::size_t num_cosets() const { return std::size_t{1} << (bits_ - dimension()); }
  std::size_t buckets_per_coset() const { return std::size_t{1} << dimension(); }

  /// Representative of coset number `index` ∈ [0, num_cosets()).
  std::uint64_t representative(std::size_t index) const;
  /// Bucket of local index `local` in the coset of `representative`.
  std::uint64_t member(std::uint64_t representative, unsigned local) const {
    return representative ^ offsets_[local];
  }
  /// Local coordinates of an element of S (asserted in debug builds).
  unsigned coordinates(std::uint64_t element_of_span) const;

 private:
  int bits_ = 0;
  std::vector<std::uint64_t> basis_;  // fully reduced; basis_[i] has pivot bit pivots_[i]
  std::vector<int> pivots_;
  std::vector<int> free_bits_;          // non-pivot bit positions, ascending
  std::vector<std::uint64_t> offsets_;  // Σ basis[i] over the set bits i of each local index
};

}  // namespace paulistrings
