// Template bodies of CpuEngine's blocks (docs/design.md §7.7; included by cpu_engine.h after
// cpu_engine.inl): a run of Pauli rotations, permutations and key-preserving layers coset by coset over
// their combined delta span, and a run of key-preserving layers term by term, each in one pass over
// memory.

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
  // Walk the layers: general rotations, permutations (Clifford gates: one output per term) and
  // key-preserving layers join while the combined span of their deltas allows. A layer outside the
  // light cone (grown by the block's earlier layers) that maps the identity to itself changes nothing
  // and is skipped where it stands.
  std::array<std::uint64_t, W> cone = support_;
  std::vector<BlockStep> steps;
  std::vector<std::uint64_t> hashes;  // of every delta of the steps
  std::vector<std::uint64_t> basis;   // reduced span of `hashes`, pivots = top bits
  std::size_t taken = 0;
  for (; taken < tables.size() && taken < out.size(); ++taken) {
    const PreparedChannel<W>& table = tables[taken];
    const bool rotation = table.form == PreparedChannel<W>::Form::rotation;
    BlockStep step;
    step.layer = taken;
    if (rotation && table.table_class == TableClass::general) {
      step.kind = BlockStep::Kind::rotate;
    } else if (table.table_class == TableClass::permutation) {
      step.kind = BlockStep::Kind::permute;
    } else if (table.table_class == TableClass::key_preserving) {
      step.kind = BlockStep::Kind::rescale;
    } else {
      break;  // a general local table (branching noise, a general two-qubit unitary)
    }
    if (skips_outside(table, cone)) continue;
    CosetPlan own;
    step.kernel = cpu_detail::make_kernel<W, C>(table, store_.hash(), bits, own);
    std::vector<std::uint64_t> step_hashes;
    if (step.kind != BlockStep::Kind::rescale) {
      if (rotation) {
        step_hashes.push_back(store_.hash()(table.generator, bits));
      } else {
        for (std::uint8_t s : step.kernel.span_patterns) step_hashes.push_back(store_.hash()(step.kernel.pattern_mask[s], bits));
      }
    }
    std::vector<std::uint64_t> grown = basis;
    for (std::uint64_t h : step_hashes) {
      std::uint64_t r = h;
      for (std::uint64_t b : grown) r = std::min(r, r ^ b);  // reduce by the top bit of each basis vector
      if (r != 0) {
        grown.push_back(r);
        std::sort(grown.begin(), grown.end(), std::greater<>());
      }
    }
    if (static_cast<int>(grown.size()) > max_dimension) break;
    basis = std::move(grown);
    grow_cone(cone, table);
    hashes.insert(hashes.end(), step_hashes.begin(), step_hashes.end());
    steps.push_back(std::move(step));
  }
  // One layer, or no delta at all (key-preserving layers only: rescale_block's kind): the layer path
  // is as good.
  if (steps.size() < 2 || hashes.empty()) return 0;
  const CosetPlan plan(bits, hashes);
  for (BlockStep& step : steps) {  // the steps' deltas in the coordinates of the block's cosets
    const PreparedChannel<W>& table = tables[step.layer];
    if (step.kind == BlockStep::Kind::rescale) continue;  // no delta
    if (table.form == PreparedChannel<W>::Form::rotation) {
      step.kernel.generator_local = plan.coordinates(store_.hash()(table.generator, bits));
    } else {
      for (std::uint8_t s : step.kernel.span_patterns)
        step.kernel.local_of_pattern[s] = plan.coordinates(store_.hash()(step.kernel.pattern_mask[s], bits));
    }
  }
  const std::size_t cosets = plan.num_cosets();
  const std::size_t gates = steps.size();
  std::vector<double> discarded(gates * cosets, 0.0);  // [step][coset], summed in coset order below
  std::vector<std::ptrdiff_t> changes(static_cast<std::size_t>(threads_) * gates, 0);
  for (Scratch& scratch : scratch_) scratch.support.fill(0);
  ParallelErrors errors;
#pragma omp parallel num_threads(layer_threads()) if (parallel_worthwhile())
  {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    Scratch& scratch = scratch_[thread];
#pragma omp for schedule(dynamic, 1)
    for (std::size_t coset = 0; coset < cosets; ++coset) {
      if (errors.failed() || interrupted()) continue;  // a failure or an interrupt abandons the block
      try {
        const std::uint64_t rep = plan.representative(coset);
        for (std::size_t j = 0; j < gates; ++j) {
          // The light cone after the block: the keys the last step scanned, plus its support. The steps
          // before it compute none (their scans skip the support).
          std::array<std::uint64_t, W>* const scanned = j + 1 == gates ? &scratch.support : nullptr;
          double& dropped = discarded[j * cosets + coset];
          std::ptrdiff_t& change = changes[thread * gates + j];
          const auto& kernel = steps[j].kernel;
          switch (steps[j].kind) {
            case BlockStep::Kind::rotate:
              rotate_coset(kernel, kernel.generator_local, plan, rep, scratch, truncation, false, scanned, dropped,
                           change);
              break;
            case BlockStep::Kind::permute:
              permute_coset(kernel, plan, rep, scratch, truncation, scanned, dropped, change);
              break;
            case BlockStep::Kind::rescale:
              rescale_coset(kernel, plan, rep, truncation, scanned, dropped, change);
              break;
          }
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
    if (j < gates && steps[j].layer == i) {
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
  refresh_support(tables[steps.back().layer]);
  remember_tested(truncation);
  refine_if_needed();
  return taken;
}

template <int W, Coefficient C>
void CpuEngine<W, C>::permute_coset(const cpu_detail::LayerKernel<W, C>& kernel, const CosetPlan& plan,
                                    std::uint64_t rep, Scratch& scratch, const Truncation& truncation,
                                    std::array<std::uint64_t, W>* scanned, double& dropped,
                                    std::ptrdiff_t& change) {
  if (kernel.rotation) {
    permute_rotation_coset(kernel, plan, rep, scratch, truncation, scanned, dropped, change);
    return;
  }
  // Each term has one image: kept in place when it stays in its bucket, else moved once every bucket
  // of the coset has been read. A permutation never maps two terms to one key, so nothing merges.
  const unsigned locals = static_cast<unsigned>(plan.buckets_per_coset());
  const bool test_terms = truncation.has_term_test();
  std::array<std::uint64_t, W> support{};
  std::ptrdiff_t removed = 0;
  scratch.pending.clear();
  for (unsigned local = 0; local < locals; ++local) {
    Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
    std::size_t kept = 0;
    for (std::size_t t = 0; t < bucket.size(); ++t) {
      const PauliString<W> key = bucket.keys[t];
      for (int w = 0; w < W; ++w) support[w] |= key.x[w] | key.z[w];
      const auto image = cpu_detail::permutation_image(kernel, key, bucket.coefficients[t]);
      // A term the layer leaves as it is passed this policy already (the callers' condition): kept
      // untested.
      if (image.unchanged) {
        bucket.keys[kept] = key;
        bucket.coefficients[kept] = bucket.coefficients[t];
        ++kept;
        continue;
      }
      if (image.delta < 0 || image.value == C(0.0)) continue;
      if (test_terms && !truncation.keep(image.key, image.value)) {
        dropped += magnitude_squared(image.value);
        continue;
      }
      const unsigned moved = kernel.local_of_pattern[image.delta];  // (rotations: permute_rotation_coset)
      if (moved == 0) {
        bucket.keys[kept] = image.key;
        bucket.coefficients[kept] = image.value;
        ++kept;
      } else {
        scratch.pending.push_back({local ^ moved, image.key, image.value});
      }
    }
    removed += static_cast<std::ptrdiff_t>(bucket.size() - kept);  // dropped or moved (the moved arrive below)
    bucket.keys.resize(kept);
    bucket.coefficients.resize(kept);
  }
  append_pending(plan, rep, scratch);
  change += static_cast<std::ptrdiff_t>(scratch.pending.size()) - removed;
  cpu_detail::add_scanned<W>(scanned, support);
}

template <int W, Coefficient C>
void CpuEngine<W, C>::permute_rotation_coset(const cpu_detail::LayerKernel<W, C>& kernel,
                                             const CosetPlan& plan, std::uint64_t rep, Scratch& scratch,
                                             const Truncation& truncation,
                                             std::array<std::uint64_t, W>* scanned, double& dropped,
                                             std::ptrdiff_t& change) {
  // cos θ = 0: a term Q that anticommutes with g becomes g ⊕ Q, its coefficient times σ(Q)·sin θ
  // (cpu_detail::quarter_turn_value); the others are unchanged. The images of bucket A's anticommuting terms
  // lie in B = A ⊕ d (d: the generator's coset coordinate) and B's in A, so per pair the scan lists both
  // buckets' anticommuting terms (core/anticommuting_scan.h) and only those are written: the i-th image
  // of each side takes the place of the other side's i-th term, the excess of one side is appended to
  // the other, and each place left empty takes its bucket's last term. Order inside a bucket changes;
  // no output depends on it (each is computed from its inputs' values alone, docs/design.md §7.2).
  // Unchanged terms are not tested: the callers run this under a policy every term has passed.
  const unsigned locals = static_cast<unsigned>(plan.buckets_per_coset());
  const unsigned d = kernel.generator_local;
  const bool test_terms = truncation.has_term_test();
  const PauliString<W> generator = kernel.generator;
  std::array<std::uint64_t, W> support{};
  std::ptrdiff_t removed = 0;
  scratch.pending.clear();
  // Q's image, into (key, value); false when it is dropped (zero, or cut by the per-term test).
  auto image = [&](const PauliString<W>& q, const C& c, PauliString<W>& key, C& value) {
    key = q ^ generator;
    value = cpu_detail::quarter_turn_value(kernel, q, c);
    if (value == C(0.0)) return false;
    if (test_terms && !truncation.keep(key, value)) {
      dropped += magnitude_squared(value);
      return false;
    }
    return true;
  };
  // Takes the places in `holes` (ascending) out of `bucket`, the last term filling each.
  auto fill_holes = [&](Bucket<W, C>& bucket, const std::vector<std::uint32_t>& holes) {
    std::size_t size = bucket.size();
    for (std::size_t h = holes.size(); h-- > 0;) {
      const std::size_t at = holes[h];
      --size;
      if (at != size) {
        bucket.keys[at] = bucket.keys[size];
        bucket.coefficients[at] = bucket.coefficients[size];
      }
    }
    removed += static_cast<std::ptrdiff_t>(holes.size());
    bucket.keys.resize(size);
    bucket.coefficients.resize(size);
  };
  auto scan = [&](const Bucket<W, C>& bucket, std::vector<std::uint32_t>& hits) {
    if (hits.size() < bucket.size()) hits.resize(bucket.size());
    return cpu_detail::scan_step<W>(scanned, bucket.keys.data(), bucket.size(), generator, hits.data(),
                                    support);
  };
  for (unsigned a = 0; a < locals; ++a) {
    const unsigned b = a ^ d;
    if (b < a) continue;  // each pair once
    Bucket<W, C>& first = store_.bucket(plan.member(rep, a));
    const std::size_t na = scan(first, scratch.hits);
    std::vector<std::uint32_t>& holes_a = scratch.holes[0];
    holes_a.clear();
    PauliString<W> key;
    C value;
    if (b == a) {  // the images stay in this bucket: each where its term was
      for (std::size_t i = 0; i < na; ++i) {
        const std::uint32_t t = scratch.hits[i];
        if (image(first.keys[t], first.coefficients[t], key, value)) {
          first.keys[t] = key;
          first.coefficients[t] = value;
        } else {
          holes_a.push_back(t);
        }
      }
      if (!holes_a.empty()) fill_holes(first, holes_a);
      continue;
    }
    Bucket<W, C>& second = store_.bucket(plan.member(rep, b));
    const std::size_t nb = scan(second, scratch.pair_hits);
    std::vector<std::uint32_t>& holes_b = scratch.holes[1];
    holes_b.clear();
    const std::size_t both = std::min(na, nb);
    for (std::size_t i = 0; i < both; ++i) {
      const std::uint32_t s = scratch.hits[i], t = scratch.pair_hits[i];
      PauliString<W> key_b;
      C value_b;
      const bool keep_a = image(first.keys[s], first.coefficients[s], key, value);        // goes to second[t]
      const bool keep_b = image(second.keys[t], second.coefficients[t], key_b, value_b);  // to first[s]
      if (keep_a) {
        second.keys[t] = key;
        second.coefficients[t] = value;
      } else {
        holes_b.push_back(t);
      }
      if (keep_b) {
        first.keys[s] = key_b;
        first.coefficients[s] = value_b;
      } else {
        holes_a.push_back(s);
      }
    }
    // One side's terms past the other's count: their images appended to the other bucket (local `to`),
    // their places emptied.
    auto move_excess = [&](const Bucket<W, C>& from, const std::vector<std::uint32_t>& hits,
                           std::size_t count, unsigned to, std::vector<std::uint32_t>& holes) {
      for (std::size_t i = both; i < count; ++i) {
        const std::uint32_t s = hits[i];
        if (image(from.keys[s], from.coefficients[s], key, value))
          scratch.pending.push_back({to, key, value});
        holes.push_back(s);
      }
    };
    move_excess(first, scratch.hits, na, b, holes_a);
    move_excess(second, scratch.pair_hits, nb, a, holes_b);
    if (!holes_a.empty()) fill_holes(first, holes_a);
    if (!holes_b.empty()) fill_holes(second, holes_b);
  }
  append_pending(plan, rep, scratch);
  change += static_cast<std::ptrdiff_t>(scratch.pending.size()) - removed;
  cpu_detail::add_scanned<W>(scanned, support);
}

template <int W, Coefficient C>
void CpuEngine<W, C>::rescale_coset(const cpu_detail::LayerKernel<W, C>& kernel, const CosetPlan& plan,
                                    std::uint64_t rep, const Truncation& truncation,
                                    std::array<std::uint64_t, W>* scanned, double& dropped,
                                    std::ptrdiff_t& change) {
  const unsigned locals = static_cast<unsigned>(plan.buckets_per_coset());
  const bool test_terms = truncation.has_term_test();
  std::array<std::uint64_t, W> support{};
  for (unsigned local = 0; local < locals; ++local) {
    Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
    std::size_t kept = 0;
    for (std::size_t t = 0; t < bucket.size(); ++t) {
      const PauliString<W> key = bucket.keys[t];
      for (int w = 0; w < W; ++w) support[w] |= key.x[w] | key.z[w];
      C value = bucket.coefficients[t];
      if (!cpu_detail::rescale_term(kernel, key, value) || value == C(0.0)) continue;
      if (test_terms && !truncation.keep(key, value)) {
        dropped += magnitude_squared(value);
        continue;
      }
      bucket.keys[kept] = key;
      bucket.coefficients[kept] = value;
      ++kept;
    }
    change -= static_cast<std::ptrdiff_t>(bucket.size() - kept);
    bucket.keys.resize(kept);
    bucket.coefficients.resize(kept);
  }
  cpu_detail::add_scanned<W>(scanned, support);
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
