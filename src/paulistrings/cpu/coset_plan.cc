// Echelon basis of the delta-hash span and coset enumeration.

#include "paulistrings/cpu/coset_plan.h"

#include <bit>
#include <cassert>
#include <stdexcept>

namespace paulistrings {

CosetPlan::CosetPlan(int bits, std::span<const std::uint64_t> delta_hashes) : bits_(bits) {
  for (std::uint64_t h : delta_hashes) {
    // Reduce h by the current basis; a nonzero remainder joins the basis with its top bit as pivot.
    for (std::size_t i = 0; i < basis_.size(); ++i) {
      if ((h >> pivots_[i]) & 1) h ^= basis_[i];
    }
    if (h == 0) continue;
    const int pivot = 63 - std::countl_zero(h);
    // Keep the basis fully reduced: clear the new pivot from the older vectors.
    for (std::uint64_t& b : basis_) {
      if ((b >> pivot) & 1) b ^= h;
    }
    basis_.push_back(h);
    pivots_.push_back(pivot);
  }
  std::uint64_t pivot_mask = 0;
  for (int p : pivots_) pivot_mask |= std::uint64_t{1} << p;
  for (int bit = 0; bit < bits; ++bit) {
    if (!((pivot_mask >> bit) & 1)) free_bits_.push_back(bit);
  }
  offsets_.assign(std::size_t{1} << basis_.size(), 0);
  for (std::size_t local = 0; local < offsets_.size(); ++local) {
    for (std::size_t i = 0; i < basis_.size(); ++i) {
      if ((local >> i) & 1) offsets_[local] ^= basis_[i];
    }
  }
}

std::uint64_t CosetPlan::representative(std::size_t index) const {
  std::uint64_t rep = 0;
  for (std::size_t j = 0; j < free_bits_.size(); ++j)
    rep |= static_cast<std::uint64_t>((index >> j) & 1) << free_bits_[j];
  return rep;
}

unsigned CosetPlan::coordinates(std::uint64_t element) const {
  unsigned local = 0;
  for (std::size_t i = 0; i < basis_.size(); ++i) {
    if ((element >> pivots_[i]) & 1) {
      element ^= basis_[i];
      local |= 1u << i;
    }
  }
  if (element != 0) throw std::logic_error("CosetPlan::coordinates: element outside the span");
  return local;
}

}  // namespace paulistrings
