#pragma once
// LayerKernel: a prepared table (channels/prepared_channel.h) in the form the CPU engine's coset loops
// read — a rotation's pivot bit and coset coordinate, a local table's pattern masks, delta span and
// incoming lists in the reference engine's summation order — and the per-term maps of the layer kinds
// that give each term one image (key-preserving and permutation tables). Shared by the layer paths
// (cpu_engine.inl) and the blocks (cpu_engine_blocks.inl); docs/design.md §7.2, §7.7.

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <span>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/bucket_hash.h"
#include "paulistrings/core/pauli_string.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/cpu/coset_plan.h"

namespace paulistrings::cpu_detail {

/// c × amplitude in the storage type (real tables only ever meet real sums; propagate checks).
template <Coefficient C>
inline C amplitude_as(const Complex& amplitude) {
  if constexpr (std::same_as<C, Complex>) {
    return amplitude;
  } else {
    return amplitude.real();
  }
}

/// The per-layer form of a prepared table that the coset kernels read.
template <int W, Coefficient C>
struct LayerKernel {
  bool rotation = false;
  TableClass table_class = TableClass::general;
  // Rotation form.
  PauliString<W> generator;
  double cos_theta = 1.0, sin_signed = 0.0;
  int pivot_word = 0;
  bool pivot_on_z = false;
  std::uint64_t pivot_bit = 0;
  unsigned generator_local = 0;
  // Local form.
  const PreparedChannel<W>* table = nullptr;
  std::array<PauliString<W>, 16> pattern_mask{};  // full-width mask of a local pattern
  std::array<std::uint8_t, 16> representative{};  // p reduced by the echelon basis of the delta span
  std::array<unsigned, 16> local_of_pattern{};    // coset coordinate of h(mask(s)), s in the span
  std::vector<std::uint8_t> span_patterns;        // the delta span, ascending
  struct Incoming {
    std::uint8_t pattern;
    C amplitude;
  };
  // incoming[q]: the inputs p that reach q, ascending by p ⊕ q (the reference engine's summation order).
  std::array<std::array<Incoming, 16>, 16> incoming{};
  std::array<std::uint8_t, 16> incoming_count{};
  std::array<std::uint8_t, 16> image{};  // permutation / key-preserving: the one output of p
  std::array<C, 16> image_amplitude{};
  std::array<bool, 16> has_image{};
  std::array<bool, 16> fixed{};  // permutation / key-preserving: p maps to itself, amplitude exactly 1

  int pattern_of(const PauliString<W>& key) const { return table->pattern_of(key); }
};

template <int W, Coefficient C>
LayerKernel<W, C> make_kernel(const PreparedChannel<W>& table, const BucketHash<W>& hash, int bits,
                              CosetPlan& plan) {
  LayerKernel<W, C> kernel;
  kernel.table_class = table.table_class;
  kernel.table = &table;
  if (table.form == PreparedChannel<W>::Form::rotation) {
    kernel.rotation = true;
    kernel.generator = table.generator;
    kernel.cos_theta = table.cos_theta;
    kernel.sin_signed = table.sin_signed;
    bool found = false;
    for (int w = 0; w < W && !found; ++w) {
      for (bool on_z : {false, true}) {
        const std::uint64_t word = on_z ? table.generator.z[w] : table.generator.x[w];
        if (word != 0 && !found) {
          kernel.pivot_word = w;
          kernel.pivot_on_z = on_z;
          kernel.pivot_bit = word & (~word + 1);
          found = true;
        }
      }
    }
    const std::uint64_t h = hash(table.generator, bits);
    plan = CosetPlan(bits, std::span<const std::uint64_t>(&h, 1));
    kernel.generator_local = plan.coordinates(h);
    return kernel;
  }
  // Local form: masks of every local pattern, the echelon basis of the realized delta span.
  for (int s = 0; s < 16; ++s) {
    kernel.pattern_mask[s] = table.pattern_mask(s);
  }
  std::vector<int> basis, pivots;
  for (std::uint8_t d : table.delta_patterns) {
    int v = d;
    for (std::size_t i = 0; i < basis.size(); ++i) {
      if ((v >> pivots[i]) & 1) v ^= basis[i];
    }
    if (v == 0) continue;
    const int pivot = 31 - std::countl_zero(static_cast<unsigned>(v));
    for (int& b : basis) {
      if ((b >> pivot) & 1) b ^= v;
    }
    basis.push_back(v);
    pivots.push_back(pivot);
  }
  const int dim = table.support_size == 2 ? 16 : 4;
  for (int p = 0; p < dim; ++p) {
    int r = p;
    for (std::size_t i = 0; i < basis.size(); ++i) {
      if ((r >> pivots[i]) & 1) r ^= basis[i];
    }
    kernel.representative[p] = static_cast<std::uint8_t>(r);
  }
  for (int s = 0; s < dim; ++s) {
    if (kernel.representative[s] == 0) kernel.span_patterns.push_back(static_cast<std::uint8_t>(s));
  }
  std::vector<std::uint64_t> delta_hashes;
  for (std::uint8_t s : kernel.span_patterns) delta_hashes.push_back(hash(kernel.pattern_mask[s], bits));
  plan = CosetPlan(bits, delta_hashes);
  for (std::size_t i = 0; i < kernel.span_patterns.size(); ++i) {
    kernel.local_of_pattern[kernel.span_patterns[i]] = plan.coordinates(delta_hashes[i]);
  }
  for (int p = 0; p < dim; ++p) {
    for (int k = 0; k < table.fanout[p]; ++k) {
      const auto& o = table.outputs[p][k];
      auto& list = kernel.incoming[o.pattern];
      list[kernel.incoming_count[o.pattern]++] = {static_cast<std::uint8_t>(p), amplitude_as<C>(o.amplitude)};
    }
    if (table.fanout[p] == 1) {
      kernel.has_image[p] = true;
      kernel.image[p] = table.outputs[p][0].pattern;
      kernel.image_amplitude[p] = amplitude_as<C>(table.outputs[p][0].amplitude);
      kernel.fixed[p] = kernel.image[p] == p && table.outputs[p][0].amplitude == Complex(1.0);
    }
  }
  for (int q = 0; q < dim; ++q) {
    auto& list = kernel.incoming[q];
    std::sort(list.begin(), list.begin() + kernel.incoming_count[q],
              [q](const auto& a, const auto& b) { return (a.pattern ^ q) < (b.pattern ^ q); });
  }
  return kernel;
}

/// A key-preserving layer on one term: its new coefficient in `value`; false when the layer maps the
/// term to zero.
template <int W, Coefficient C>
inline bool rescale_term(const LayerKernel<W, C>& kernel, const PauliString<W>& key, C& value) {
  if (kernel.rotation) {
    if (!key.commutes_with(kernel.generator)) value = value * kernel.cos_theta;
    return true;
  }
  const int p = kernel.pattern_of(key);
  if (!kernel.has_image[p]) return false;
  value = value * kernel.image_amplitude[p];
  return true;
}

/// A rotation with cos θ = 0 (a permutation) on a term Q that anticommutes with its generator g: the
/// coefficient of g ⊕ Q, c·σ(Q)·sin θ, where σ(Q) = +1 when g·Q = −i·(g ⊕ Q), else −1.
template <int W, Coefficient C>
inline C quarter_turn_value(const LayerKernel<W, C>& kernel, const PauliString<W>& key, const C& c) {
  const double sign = product_phase(kernel.generator, key) == 3 ? 1.0 : -1.0;
  return c * (sign * kernel.sin_signed);
}

/// A permutation layer's one output of a term: which delta moved it (for a rotation, 1 = the
/// generator; for a local table, the delta pattern), its key and its coefficient; delta < 0 when the
/// layer maps the term to zero. `unchanged`: the layer leaves the term as it is (it commutes with the
/// rotation, or the table maps its pattern to itself with amplitude exactly 1).
template <int W, Coefficient C>
struct Image {
  int delta;
  PauliString<W> key;
  C value;
  bool unchanged;
};
template <int W, Coefficient C>
inline Image<W, C> permutation_image(const LayerKernel<W, C>& kernel, const PauliString<W>& key, const C& c) {
  if (kernel.rotation) {
    if (key.commutes_with(kernel.generator)) return {0, key, c, true};
    return {1, key ^ kernel.generator, quarter_turn_value(kernel, key, c), false};
  }
  const int p = kernel.pattern_of(key);
  if (!kernel.has_image[p]) return {-1, key, c, false};
  const int d = p ^ kernel.image[p];
  return {d, key ^ kernel.pattern_mask[d], c * kernel.image_amplitude[p], kernel.fixed[p]};
}

}  // namespace paulistrings::cpu_detail
