// Template bodies of CpuEngine's blocks (docs/design.md §7.7; included by cpu_engine.h after
// cpu_engine.inl): a run of Pauli rotations coset by coset over their combined delta span, and a run of
// key-preserving layers term by term, each in one pass over memory.

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "paulistrings/core/parallel_errors.h"

namespace paulistrings {

template <int W, Coefficient C>
bool CpuEngine<W, C>::takes_blocks(const Truncation& truncation) const {
  // Only where a block pays and changes nothing but the order of work: a sum past the caches, in-place
  // rotations, and a policy every term has already passed (no layer re-tests them all).
  return options_.gate_blocks && options_.in_place_rotations && size_ >= options_.block_min_terms &&
         !truncation.has_layer_pass() &&
         !tested_.must_retest(truncation);
}

template <int W, Coefficient C>
std::size_t CpuEngine<W, C>::apply_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                                         std::span<BlockLayer> out) {
  if (tables.size() < 2 || out.size() < 2 || !takes_blocks(truncation)) return 0;
  if (tables[0].table_class == TableClass::key_preserving) return rescale_block(tables, truncation, out);
  // The block's span may have dimension d while 2^(bits − d) ≥ block_min_cosets cosets remain
  // (whatever the thread count: blocks must not depend on it) and a coset's terms fit in block_bytes.
  // At most 6 (the dirty-bucket mask of a coset is 64 bits).
  const int bits = store_.bits();
  const double term_bytes = static_cast<double>(sizeof(PauliString<W>) + sizeof(C));
  const double bucket_bytes = static_cast<double>(size_) * term_bytes / std::ldexp(1.0, bits);
  int max_dimension = std::min(6, bits);
  while (max_dimension > 0 && (std::size_t{1} << (bits - max_dimension)) < options_.block_min_cosets) --max_dimension;
  while (max_dimension > 0 && bucket_bytes * std::ldexp(1.0, max_dimension) > static_cast<double>(options_.block_bytes))
    --max_dimension;
  if (max_dimension < 1) return 0;
  // Walk the layers: general rotations join while the span allows; a rotation outside the light cone
  // (grown by the block's earlier generators) changes nothing and is skipped where it stands.
  std::array<std::uint64_t, W> cone = support_;
  std::vector<std::uint64_t> hashes;   // of the rotations that run
  std::vector<std::size_t> runs;       // their indices in `tables`
  std::vector<std::uint64_t> basis;    // reduced span of `hashes`, pivots = top bits
  std::size_t taken = 0;
  for (; taken < tables.size() && taken < out.size(); ++taken) {
    const PreparedChannel<W>& table = tables[taken];
    if (table.form != PreparedChannel<W>::Form::rotation || table.table_class != TableClass::general) break;
    if (!touches(table.generator, cone)) continue;
    const std::uint64_t h = store_.hash()(table.generator, bits);
    std::uint64_t r = h;
    for (std::uint64_t b : basis) r = std::min(r, r ^ b);  // reduce by the top bit of each basis vector
    if (r != 0) {
      if (static_cast<int>(basis.size()) == max_dimension) break;
      basis.push_back(r);
      std::sort(basis.begin(), basis.end(), std::greater<>());
    }
    for (int w = 0; w < W; ++w) cone[w] |= table.generator.x[w] | table.generator.z[w];
    hashes.push_back(h);
    runs.push_back(taken);
  }
  if (runs.size() < 2) return 0;  // one rotation: the layer path is as good
  const CosetPlan plan(bits, hashes);
  const std::size_t cosets = plan.num_cosets();
  const std::size_t gates = runs.size();
  std::vector<cpu_detail::LayerKernel<W, C>> kernels;
  std::vector<unsigned> generator_local;
  kernels.reserve(gates);
  for (std::size_t j = 0; j < gates; ++j) {
    CosetPlan own;
    kernels.push_back(cpu_detail::make_kernel<W, C>(tables[runs[j]], store_.hash(), bits, own));
    generator_local.push_back(plan.coordinates(hashes[j]));
  }
  std::vector<double> discarded(gates * cosets, 0.0);  // [gate][coset], summed in coset order below
  std::vector<std::ptrdiff_t> changes(static_cast<std::size_t>(threads_) * gates, 0);
  for (Scratch& scratch : scratch_) scratch.support.fill(0);
  ParallelErrors errors;
#pragma omp parallel num_threads(threads_) if (parallel_worthwhile())
  {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    Scratch& scratch = scratch_[thread];
    std::array<std::uint64_t, W> ignored{};
#pragma omp for schedule(dynamic, 1)
    for (std::size_t coset = 0; coset < cosets; ++coset) {
      if (errors.failed() || interrupted()) continue;  // a failure or an interrupt abandons the block
      try {
        const std::uint64_t rep = plan.representative(coset);
        for (std::size_t j = 0; j < gates; ++j) {
          // The light cone after the block: the keys the last rotation scanned, plus its generator.
          rotate_coset(kernels[j], generator_local[j], plan, rep, scratch, truncation, false,
                       j + 1 == gates ? scratch.support : ignored, discarded[j * cosets + coset],
                       changes[thread * gates + j]);
        }
      } catch (...) {
        errors.capture();
      }
    }
  }
  errors.rethrow();
  throw_if_interrupted();
  std::size_t terms = size_;
  std::size_t j = 0;
  for (std::size_t i = 0; i < taken; ++i) {
    out[i] = {};
    if (j < gates && runs[j] == i) {
      std::ptrdiff_t change = 0;
      for (std::size_t t = 0; t < static_cast<std::size_t>(threads_); ++t) change += changes[t * gates + j];
      terms = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(terms) + change);
      for (std::size_t coset = 0; coset < cosets; ++coset) out[i].discarded_weight += discarded[j * cosets + coset];
      ++j;
    } else {
      ++skipped_layers_;
    }
    out[i].terms_out = terms;
  }
  size_ = terms;
  block_layers_ += taken;
  refresh_support(tables[runs.back()]);
  remember_tested(truncation);
  refine_if_needed();
  return taken;
}

template <int W, Coefficient C>
std::size_t CpuEngine<W, C>::rescale_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                                           std::span<BlockLayer> out) {
  // The run of key-preserving layers ahead (noise that only rescales: depolarizing, dephasing, Pauli
  // channels, measurements) in one pass, as rescale_layer takes one.
  std::size_t layers = 0;
  while (layers < tables.size() && layers < out.size() && tables[layers].table_class == TableClass::key_preserving)
    ++layers;
  if (layers < 2) return 0;
  rescale_run(tables.first(layers), truncation, out.first(layers));
  block_layers_ += layers;
  remember_tested(truncation);
  return layers;
}

}  // namespace paulistrings
