// Template bodies of CpuEngine (included by cpu_engine.h).

#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "paulistrings/core/anticommuting_scan.h"
#include "paulistrings/core/parallel_errors.h"

namespace paulistrings {
namespace cpu_detail {

/// The anticommuting scan of a coset step (core/anticommuting_scan.h): ORs the keys' support into
/// `support` only when the caller collects it (`scanned` set), else skips that work.
template <int W>
std::size_t scan_step(const std::array<std::uint64_t, W>* scanned, const PauliString<W>* keys, std::size_t n,
                      const PauliString<W>& generator, std::uint32_t* hits,
                      std::array<std::uint64_t, W>& support) {
  return scanned != nullptr ? anticommuting_scan<W>(keys, n, generator, hits, support)
                            : anticommuting_scan<W, false>(keys, n, generator, hits, support);
}

/// Adds a coset step's support to what the caller collects, if it collects any.
template <int W>
void add_scanned(std::array<std::uint64_t, W>* scanned, const std::array<std::uint64_t, W>& support) {
  if (scanned == nullptr) return;
  for (int w = 0; w < W; ++w) (*scanned)[w] |= support[w];
}

inline std::size_t mix_key_words(std::uint64_t h) {
  h ^= h >> 31;
  h *= 0x7fb5d329728ea185ULL;
  h ^= h >> 27;
  return static_cast<std::size_t>(h);
}

/// Removes the terms of `bucket` with drop(key, c) true, keeping the others in order; returns their Σ|c|².
template <class Bucket, class Predicate>
double remove_from_bucket(Bucket& bucket, Predicate&& drop) {
  std::size_t out = 0;
  double dropped = 0.0;
  for (std::size_t t = 0; t < bucket.size(); ++t) {
    if (drop(bucket.keys[t], bucket.coefficients[t])) {
      dropped += magnitude_squared(bucket.coefficients[t]);
      continue;
    }
    bucket.keys[out] = bucket.keys[t];
    bucket.coefficients[out] = bucket.coefficients[t];
    ++out;
  }
  bucket.keys.resize(out);
  bucket.coefficients.resize(out);
  return dropped;
}

}  // namespace cpu_detail

template <int W, Coefficient C>
struct CpuEngine<W, C>::Group {
  PauliString<W> representative;
  std::uint8_t representative_pattern;
  std::uint8_t representative_local;
  std::uint16_t present;
  std::array<C, 16> in;
};

template <int W, Coefficient C>
struct CpuEngine<W, C>::Scratch {
  std::array<std::vector<PauliString<W>>, 16> out_keys;
  std::array<std::vector<C>, 16> out_coefficients;
  std::vector<std::int32_t> slots;
  std::vector<Group> groups;
  // In-place rotation: anticommuting terms by side of the pivot bit, and the terms to append.
  struct Position {
    std::uint32_t local;
    std::uint32_t index;
  };
  // rotate_coset writes both sides of every anticommuting term and advances one count, so these
  // only grow (their sizes are capacities; the counts are rotate_coset's).
  std::vector<Position> flipped, unflipped;
  std::vector<std::uint32_t> hits;  ///< a bucket's anticommuting terms, by index (rotate_coset's scan)
  std::vector<std::uint32_t> pair_hits;  ///< the same for the other bucket of a pair (permute_rotation_coset)
  std::vector<std::uint32_t> holes[2];   ///< places a pair's buckets lost (permute_rotation_coset)
  std::vector<PauliString<W>> flipped_partners;  ///< per flipped term w: its representative w ⊕ g
  std::vector<char> paired;
  std::vector<Bucket<W, C>*> coset_buckets;  ///< the buckets of the coset at hand, by local index
  struct Pending {
    std::uint32_t local;
    PauliString<W> key;
    C coefficient;
  };
  std::vector<Pending> pending;
  std::array<std::uint64_t, W> support{};  // x | z of the keys this thread scanned in a rotation layer
  // Gather-sort-merge formulation: the output stream of a coset.
  struct Output {
    PauliString<W> key;
    C coefficient;
    std::uint64_t sort_key;  ///< local bucket (top 5 bits) then 59 bits of the key's hash
    std::uint32_t order;     ///< input index × 16 + output: fixes the summation order of duplicates
  };
  std::vector<Output> stream;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> handles;  // (sort key, stream index)

  // apply_out: the outputs that leave, by (export group · 16 + local bucket).
  std::vector<std::vector<PauliString<W>>> leaving_keys;
  std::vector<std::vector<C>> leaving_coefficients;

  void clear_outputs(std::size_t locals) {
    for (std::size_t l = 0; l < locals; ++l) {
      out_keys[l].clear();
      out_coefficients[l].clear();
    }
  }
  void clear_leaving(std::size_t groups) {
    leaving_keys.resize(16 * groups);
    leaving_coefficients.resize(16 * groups);
    for (auto& v : leaving_keys) v.clear();
    for (auto& v : leaving_coefficients) v.clear();
  }
  void emit(unsigned local, const PauliString<W>& key, const C& c) {
    out_keys[local].push_back(key);
    out_coefficients[local].push_back(c);
  }
  void emit_leaving(std::uint32_t group, unsigned local, const PauliString<W>& key, const C& c) {
    leaving_keys[16 * group + local].push_back(key);
    leaving_coefficients[16 * group + local].push_back(c);
  }
  void reset_groups(std::size_t inputs) {
    std::size_t capacity = 16;
    while (capacity < 2 * inputs) capacity <<= 1;
    slots.assign(capacity, -1);
    groups.clear();
  }
  static std::size_t key_hash(const PauliString<W>& key) {
    std::uint64_t h = 0;
    for (int w = 0; w < W; ++w) h = (h ^ key.x[w]) * 0x9e3779b97f4a7c15ULL ^ key.z[w];
    return cpu_detail::mix_key_words(h);
  }
  /// An empty open-addressing table for `entries` values (load ≤ 1/2).
  void reset_slots(std::size_t entries) {
    std::size_t capacity = 16;
    while (capacity < 2 * entries) capacity <<= 1;
    slots.assign(capacity, -1);
  }
  void insert_slot(const PauliString<W>& key, std::int32_t value) {
    const std::size_t mask = slots.size() - 1;
    std::size_t i = key_hash(key) & mask;
    while (slots[i] >= 0) i = (i + 1) & mask;
    slots[i] = value;
  }
  /// The value stored under `key` (`matches(value)` confirms a candidate), or −1.
  template <class Matches>
  std::int32_t find_slot(const PauliString<W>& key, Matches&& matches) const {
    const std::size_t mask = slots.size() - 1;
    for (std::size_t i = key_hash(key) & mask;; i = (i + 1) & mask) {
      const std::int32_t slot = slots[i];
      if (slot < 0) return -1;
      if (matches(slot)) return slot;
    }
  }
  /// The group of `representative`, created on first sight.
  Group& group_of(const PauliString<W>& representative, std::uint8_t pattern, unsigned local) {
    const std::size_t mask = slots.size() - 1;
    for (std::size_t i = key_hash(representative) & mask;; i = (i + 1) & mask) {
      const std::int32_t slot = slots[i];
      if (slot < 0) {
        slots[i] = static_cast<std::int32_t>(groups.size());
        Group& g = groups.emplace_back();
        g.representative = representative;
        g.representative_pattern = pattern;
        g.representative_local = static_cast<std::uint8_t>(local);
        g.present = 0;
        return g;
      }
      if (groups[static_cast<std::size_t>(slot)].representative == representative)
        return groups[static_cast<std::size_t>(slot)];
    }
  }
};

template <int W, Coefficient C>
struct CpuEngine<W, C>::StayRoute {
  static constexpr bool kRoutes = false;
};

template <int W, Coefficient C>
CpuEngine<W, C>::CpuEngine(const PauliSum<W, C>& sum, const CpuEngineOptions& options)
    : options_(options),
      threads_(options.threads > 0 ? options.threads : available_cpus()),
      store_(sum, PauliSum<W, C>::bits_to_fit(sum.size(), options.target_bucket_len, options.min_buckets)),
      size_(sum.size()),
      scratch_(static_cast<std::size_t>(threads_)) {
  for (std::size_t i = 0; i < sum.size(); ++i) {
    for (int w = 0; w < W; ++w) support_[w] |= sum.keys()[i].x[w] | sum.keys()[i].z[w];
  }
}

template <int W, Coefficient C>
bool CpuEngine<W, C>::skips_layer(const PreparedChannel<W>& table, const Truncation& truncation) const {
  // Unchanged terms must already pass this policy (the reference engine re-tests every term).
  return !tested_.must_retest(truncation) && skips_outside(table, support_);
}

template <int W, Coefficient C>
bool CpuEngine<W, C>::skips_outside(const PreparedChannel<W>& table, const std::array<std::uint64_t, W>& cone) {
  if (table.form == PreparedChannel<W>::Form::rotation) return !touches(table.generator, cone);
  // A local table changes no term whose factors on its support are all the identity when it maps the
  // identity pattern to itself alone, with amplitude exactly 1.
  if (table.fanout[0] != 1 || table.outputs[0][0].pattern != 0 || table.outputs[0][0].amplitude != Complex(1.0))
    return false;
  for (int i = 0; i < table.support_size; ++i) {
    const Qubit q = table.qubits[static_cast<std::size_t>(i)];
    if ((cone[q / 64] >> (q % 64)) & 1) return false;
  }
  return true;
}

template <int W, Coefficient C>
void CpuEngine<W, C>::add_support(const PreparedChannel<W>& table) {
  grow_cone(support_, table);
}

template <int W, Coefficient C>
void CpuEngine<W, C>::grow_cone(std::array<std::uint64_t, W>& cone, const PreparedChannel<W>& table) {
  if (table.form == PreparedChannel<W>::Form::rotation) {
    for (int w = 0; w < W; ++w) cone[w] |= table.generator.x[w] | table.generator.z[w];
    return;
  }
  for (int i = 0; i < table.support_size; ++i) {
    const Qubit q = table.qubits[static_cast<std::size_t>(i)];
    cone[q / 64] |= std::uint64_t{1} << (q % 64);
  }
}

template <int W, Coefficient C>
void CpuEngine<W, C>::append_pending(const CosetPlan& plan, std::uint64_t rep, const Scratch& scratch) {
  for (const auto& p : scratch.pending) {
    Bucket<W, C>& bucket = store_.bucket(plan.member(rep, p.local));
    bucket.keys.push_back(p.key);
    bucket.coefficients.push_back(p.coefficient);
  }
}

template <int W, Coefficient C>
void CpuEngine<W, C>::refresh_support(const PreparedChannel<W>& last) {
  support_.fill(0);
  for (const Scratch& scratch : scratch_) {
    for (int w = 0; w < W; ++w) support_[w] |= scratch.support[w];
  }
  add_support(last);
}

template <int W, Coefficient C>
double CpuEngine<W, C>::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  double discarded = 0.0;
  if (skips_layer(table, truncation)) {
    ++skipped_layers_;
    return 0.0;
  }
  if (table.table_class == TableClass::key_preserving) {
    discarded = rescale_layer(table, truncation);
    remember_tested(truncation);
  } else if (table.form == PreparedChannel<W>::Form::rotation && table.table_class == TableClass::general &&
             options_.in_place_rotations) {
    discarded = rotation_layer(table, truncation);  // tests unchanged terms too when needed
    remember_tested(truncation);
  } else if (table.table_class == TableClass::permutation && options_.in_place_rotations &&
             !tested_.must_retest(truncation)) {
    discarded = permutation_layer(table, truncation);  // in place: the terms it fixes are not rewritten
    remember_tested(truncation);
    add_support(table);
  } else {
    layer_weight_ = table.table_class == TableClass::general ? 4 : 1;  // orbit grouping
    discarded = coset_layer(table, truncation, StayRoute{});
    layer_weight_ = 1;  // what runs between layers (refining, exports, blocks) weighs as a rotation
    remember_tested(truncation);
    add_support(table);
  }
  refine_if_needed();
  return discarded;
}

template <int W, Coefficient C>
double CpuEngine<W, C>::permutation_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  CosetPlan plan;
  const auto kernel = cpu_detail::make_kernel<W, C>(table, store_.hash(), store_.bits(), plan);
  return coset_pass(plan, [&](Scratch& scratch, std::uint64_t rep, double& dropped, std::ptrdiff_t& change) {
    permute_coset(kernel, plan, rep, scratch, truncation, nullptr, dropped, change);  // the cone grows below
  });
}

template <int W, Coefficient C>
template <class Work>
double CpuEngine<W, C>::coset_pass(const CosetPlan& plan, Work&& work) {
  const std::size_t cosets = plan.num_cosets();
  std::vector<double> discarded(cosets, 0.0);
  std::ptrdiff_t change = 0;
  ParallelErrors errors;
#pragma omp parallel num_threads(layer_threads()) reduction(+ : change) if (parallel_worthwhile())
  {
    Scratch& scratch = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
    for (std::size_t coset = 0; coset < cosets; ++coset) {
      if (errors.failed() || interrupted()) continue;  // a failure or an interrupt abandons the layer
      try {
        work(scratch, plan.representative(coset), discarded[coset], change);
      } catch (...) {
        errors.capture();
      }
    }
  }
  errors.rethrow();
  throw_if_interrupted();
  size_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(size_) + change);
  double sum = 0.0;
  for (double d : discarded) sum += d;
  return sum;
}

template <int W, Coefficient C>
void CpuEngine<W, C>::rotate_coset(const cpu_detail::LayerKernel<W, C>& kernel, unsigned generator_local,
                                   const CosetPlan& plan, std::uint64_t rep, Scratch& scratch,
                                   const Truncation& truncation, bool test_unchanged,
                                   std::array<std::uint64_t, W>* scanned, double& dropped,
                                   std::ptrdiff_t& change) {
  const unsigned locals = static_cast<unsigned>(plan.buckets_per_coset());
  const bool test_terms = truncation.has_term_test();
  const PauliString<W> generator = kernel.generator;
  const double cos_theta = kernel.cos_theta, sin_signed = kernel.sin_signed;
  std::uint64_t dirty = 0;  // locals whose bucket holds a removed (zeroed) term
  std::ptrdiff_t removed = 0;
  // A new value for the term at (local, index): kept, or zeroed to be compacted away.
  auto store_value = [&](unsigned local, C& slot, const PauliString<W>& key, const C& value)
      __attribute__((always_inline)) {
    if (value != C(0.0) && (!test_terms || truncation.keep(key, value))) {
      slot = value;
      return;
    }
    dropped += magnitude_squared(value);
    slot = C(0.0);
    dirty |= std::uint64_t{1} << local;
    ++removed;
  };
  auto append = [&](unsigned local, const PauliString<W>& key, const C& value) {
    if (value == C(0.0)) return;
    if (test_terms && !truncation.keep(key, value)) {
      dropped += magnitude_squared(value);
      return;
    }
    scratch.pending.push_back({local, key, value});
  };
  scratch.pending.clear();
  // The coset's buckets, found once: plan.member walks the plan's basis.
  scratch.coset_buckets.resize(locals);
  Bucket<W, C>** const buckets = scratch.coset_buckets.data();
  for (unsigned local = 0; local < locals; ++local) buckets[local] = &store_.bucket(plan.member(rep, local));
  // Kernel fields in locals: the stores below could alias them, which would force a reload
  // of every field (and of the support accumulator) per term.
  const bool pivot_on_z = kernel.pivot_on_z;
  const int pivot_word = kernel.pivot_word;
  const std::uint64_t pivot_bit = kernel.pivot_bit;
  // σ(v) = +1 when g·v = −i·(g ⊕ v), else −1 (v anticommutes with g).
  auto sign_of = [&](const PauliString<W>& v) { return product_phase(generator, v) == 3 ? 1.0 : -1.0; };
  std::array<std::uint64_t, W> support{};
  std::size_t flipped = 0, unflipped = 0;
  for (unsigned local = 0; local < locals; ++local) {
    Bucket<W, C>& bucket = *buckets[local];
    const std::size_t size = bucket.size();
    const PauliString<W>* keys = bucket.keys.data();
    // Most terms commute with g: list the others (core/anticommuting_scan.h), then sort that short list
    // by side. Commuting terms are unchanged; they are tested again only under a new policy.
    if (scratch.hits.size() < size) scratch.hits.resize(size);
    std::uint32_t* hits = scratch.hits.data();
    const std::size_t count = cpu_detail::scan_step<W>(scanned, keys, size, generator, hits, support);
    if (test_unchanged) {
      for_each_unlisted(hits, count, size, [&](std::size_t t) {
        store_value(local, bucket.coefficients[t], keys[t], bucket.coefficients[t]);
      });
    }
    // Each term is written to both sides and counted on one: the side is a coin flip per term, which a
    // branch would mispredict half the time. A flipped term w is kept with its representative w ⊕ g.
    if (scratch.flipped.size() < flipped + count) {
      scratch.flipped.resize(flipped + count);
      scratch.flipped_partners.resize(flipped + count);
    }
    if (scratch.unflipped.size() < unflipped + count) scratch.unflipped.resize(unflipped + count);
    auto* const flipped_at = scratch.flipped.data();
    auto* const unflipped_at = scratch.unflipped.data();
    PauliString<W>* const partners = scratch.flipped_partners.data();
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t index = hits[i];
      const PauliString<W> key = keys[index];
      const std::uint64_t word = pivot_on_z ? key.z[pivot_word] : key.x[pivot_word];
      const std::size_t side = (word & pivot_bit) != 0 ? 1 : 0;
      flipped_at[flipped] = {local, index};
      partners[flipped] = key ^ generator;
      unflipped_at[unflipped] = {local, index};
      flipped += side;
      unflipped += 1 - side;
    }
  }
  // Index the flipped side w by its representative v = w ⊕ g.
  // The representatives are kept beside the table, so a probe compares keys without finding buckets.
  const PauliString<W>* const partners = scratch.flipped_partners.data();
  scratch.reset_slots(flipped);
  scratch.paired.assign(flipped, 0);
  for (std::size_t i = 0; i < flipped; ++i) scratch.insert_slot(partners[i], static_cast<std::int32_t>(i));
  // v = representative, w = v ⊕ g: out_v = cos·c_v + σ(w)·sin·c_w, out_w = cos·c_w + σ(v)·sin·c_v.
  for (std::size_t u = 0; u < unflipped; ++u) {
    const auto [local, index] = scratch.unflipped[u];
    Bucket<W, C>& bucket = *buckets[local];
    const PauliString<W> v = bucket.keys[index];
    const C c_v = bucket.coefficients[index];
    const double sign_v = sign_of(v);
    const std::int32_t found = scratch.find_slot(v, [&](std::int32_t i) { return partners[i] == v; });
    if (found >= 0) {
      scratch.paired[static_cast<std::size_t>(found)] = 1;
      const auto& w = scratch.flipped[static_cast<std::size_t>(found)];
      Bucket<W, C>& w_bucket = *buckets[w.local];
      const C c_w = w_bucket.coefficients[w.index];
      C out_v = C(0.0), out_w = C(0.0);
      out_v += c_v * cos_theta;
      out_v += c_w * (-sign_v * sin_signed);
      out_w += c_w * cos_theta;
      out_w += c_v * (sign_v * sin_signed);
      store_value(local, bucket.coefficients[index], v, out_v);
      store_value(w.local, w_bucket.coefficients[w.index], w_bucket.keys[w.index], out_w);
    } else {
      C out_v = C(0.0);
      out_v += c_v * cos_theta;
      store_value(local, bucket.coefficients[index], v, out_v);
      C out_w = C(0.0);
      out_w += c_v * (sign_v * sin_signed);
      append(local ^ generator_local, v ^ generator, out_w);
    }
  }
  for (std::size_t i = 0; i < flipped; ++i) {
    if (scratch.paired[i]) continue;
    const auto [local, index] = scratch.flipped[i];
    Bucket<W, C>& bucket = *buckets[local];
    const PauliString<W> w = bucket.keys[index];
    const C c_w = bucket.coefficients[index];
    const double sign_w = sign_of(w);
    C out_w = C(0.0);
    out_w += c_w * cos_theta;
    store_value(local, bucket.coefficients[index], w, out_w);
    C out_v = C(0.0);
    out_v += c_w * (sign_w * sin_signed);
    append(local ^ generator_local, w ^ generator, out_v);
  }
  for (unsigned local = 0; dirty != 0 && local < locals; ++local) {
    if ((dirty >> local) & 1)
      cpu_detail::remove_from_bucket(*buckets[local],
                                     [](const PauliString<W>&, const C& c) { return c == C(0.0); });
  }
  append_pending(plan, rep, scratch);
  change += static_cast<std::ptrdiff_t>(scratch.pending.size()) - removed;
  cpu_detail::add_scanned<W>(scanned, support);
}

template <int W, Coefficient C>
double CpuEngine<W, C>::rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  CosetPlan plan;
  const auto kernel = cpu_detail::make_kernel<W, C>(table, store_.hash(), store_.bits(), plan);
  // Unchanged (commuting) terms passed this policy's test in an earlier layer unless the policy is new.
  const bool test_unchanged = tested_.must_retest(truncation);
  for (Scratch& scratch : scratch_) scratch.support.fill(0);
  const double discarded =
      coset_pass(plan, [&](Scratch& scratch, std::uint64_t rep, double& dropped, std::ptrdiff_t& change) {
        rotate_coset(kernel, kernel.generator_local, plan, rep, scratch, truncation, test_unchanged,
                     &scratch.support, dropped, change);
      });
  refresh_support(table);
  return discarded;
}

template <int W, Coefficient C>
double CpuEngine<W, C>::rescale_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  BlockLayer record;
  rescale_run(std::span<const PreparedChannel<W>>(&table, 1), truncation, std::span<BlockLayer>(&record, 1));
  return record.discarded_weight;
}

template <int W, Coefficient C>
void CpuEngine<W, C>::rescale_run(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                                  std::span<BlockLayer> out) {
  // Each term takes the key-preserving layers in turn in one pass, with the per-term test after each
  // (a layer outside the light cone rescales by 1 and re-tests a policy the term passed: no change,
  // so a run needs no skip).
  const std::size_t layers = tables.size();
  std::vector<cpu_detail::LayerKernel<W, C>> kernels;
  kernels.reserve(layers);
  for (const PreparedChannel<W>& table : tables) {
    CosetPlan unused;
    kernels.push_back(cpu_detail::make_kernel<W, C>(table, store_.hash(), 0, unused));
  }
  const std::size_t buckets = store_.num_buckets();
  const bool test_terms = truncation.has_term_test();
  // [layer][bucket]: summed over buckets in bucket order below, whatever the thread count.
  std::vector<double> discarded(layers * buckets, 0.0);
  std::vector<std::size_t> removed(layers * buckets, 0);
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) if (parallel_worthwhile())
  for (std::size_t b = 0; b < buckets; ++b) {
    if (interrupted()) continue;  // the run is abandoned (throw_if_interrupted below)
    Bucket<W, C>& bucket = store_.bucket(b);
    std::size_t kept = 0;
    for (std::size_t t = 0; t < bucket.size(); ++t) {
      const PauliString<W>& key = bucket.keys[t];
      C value = bucket.coefficients[t];
      std::size_t gone = layers;  // the layer that removes the term, if any
      for (std::size_t j = 0; j < layers; ++j) {
        if (!cpu_detail::rescale_term(kernels[j], key, value) || value == C(0.0)) {
          gone = j;
          break;
        }
        if (test_terms && !truncation.keep(key, value)) {
          discarded[j * buckets + b] += magnitude_squared(value);
          gone = j;
          break;
        }
      }
      if (gone < layers) {
        ++removed[gone * buckets + b];
        continue;
      }
      bucket.keys[kept] = key;
      bucket.coefficients[kept] = value;
      ++kept;
    }
    bucket.keys.resize(kept);
    bucket.coefficients.resize(kept);
  }
  throw_if_interrupted();
  std::size_t terms = size_;
  for (std::size_t j = 0; j < layers; ++j) {
    out[j] = {};
    for (std::size_t b = 0; b < buckets; ++b) {
      out[j].discarded_weight += discarded[j * buckets + b];
      terms -= removed[j * buckets + b];
    }
    out[j].terms_out = terms;
  }
  size_ = terms;
}

template <int W, Coefficient C>
template <class Route>
double CpuEngine<W, C>::coset_layer(const PreparedChannel<W>& table, const Truncation& truncation,
                                    const Route& route) {
  CosetPlan plan;
  const auto kernel = cpu_detail::make_kernel<W, C>(table, store_.hash(), store_.bits(), plan);
  const std::size_t cosets = plan.num_cosets();
  const unsigned locals = static_cast<unsigned>(plan.buckets_per_coset());
  const bool permutation = table.table_class == TableClass::permutation;
  const bool test_terms = truncation.has_term_test();
  // apply_out's routing, in locals (all 0 and unused when everything stays).
  std::uint32_t stays = 0, generator_group = 0;
  std::array<std::uint32_t, 16> pattern_group{};
  bool orbits_owned = false;
  if constexpr (Route::kRoutes) {
    stays = route.groups;
    generator_group = route.generator_group;
    pattern_group = route.pattern_group;
    orbits_owned = route.orbits_owned;
  }
  std::vector<double> discarded(cosets, 0.0);
  std::size_t total = 0;
  ParallelErrors errors;
#pragma omp parallel num_threads(layer_threads()) reduction(+ : total) if (parallel_worthwhile())
  {
    Scratch& scratch = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
    for (std::size_t coset = 0; coset < cosets; ++coset) {
      if (errors.failed() || interrupted()) continue;  // a failure or an interrupt abandons the layer
      try {
        const std::uint64_t rep = plan.representative(coset);
        scratch.clear_outputs(locals);
        if constexpr (Route::kRoutes) scratch.clear_leaving(route.groups);
        double dropped = 0.0;
        // `group`: the output's export group under an ExportRoute (ignored otherwise).
        // The per-term test sees leaving outputs too (only apply_out_final passes a policy with a test).
        auto emit = [&](unsigned local, const PauliString<W>& key, const C& value, std::uint32_t group) {
          if (value == C(0.0)) return;
          if (test_terms && !truncation.keep(key, value)) {
            dropped += magnitude_squared(value);
            return;
          }
          if constexpr (Route::kRoutes) {
            if (group < route.groups) {
              scratch.emit_leaving(group, local, key, value);
              return;
            }
          }
          scratch.emit(local, key, value);
        };
        std::size_t inputs = 0;
        for (unsigned local = 0; local < locals; ++local)
          inputs += store_.bucket(plan.member(rep, local)).size();

        if (permutation) {
          for (unsigned local = 0; local < locals; ++local) {
            const Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
            for (std::size_t t = 0; t < bucket.size(); ++t) {
              const auto image = cpu_detail::permutation_image(kernel, bucket.keys[t], bucket.coefficients[t]);
              if (image.delta < 0) continue;
              if (kernel.rotation) {
                emit(image.delta ? local ^ kernel.generator_local : local, image.key, image.value,
                     image.delta ? generator_group : stays);
              } else {
                emit(local ^ kernel.local_of_pattern[image.delta], image.key, image.value,
                     pattern_group[image.delta]);
              }
            }
          }
        } else if (kernel.rotation) {
          scratch.reset_groups(inputs);
          for (unsigned local = 0; local < locals; ++local) {
            const Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
            for (std::size_t t = 0; t < bucket.size(); ++t) {
              const PauliString<W>& key = bucket.keys[t];
              if (key.commutes_with(kernel.generator)) {
                emit(local, key, bucket.coefficients[t], stays);
                continue;
              }
              const std::uint64_t word =
                  kernel.pivot_on_z ? key.z[kernel.pivot_word] : key.x[kernel.pivot_word];
              const bool flipped = (word & kernel.pivot_bit) != 0;
              Group& g = scratch.group_of(flipped ? key ^ kernel.generator : key, 0,
                                          flipped ? local ^ kernel.generator_local : local);
              g.in[flipped] = bucket.coefficients[t];
              g.present |= static_cast<std::uint16_t>(1u << flipped);
            }
          }
          for (const Group& g : scratch.groups) {
            // v = representative, w = v ⊕ g: out_v = cos·c_v + σ(w)·sin·c_w, out_w = cos·c_w + σ(v)·sin·c_v.
            const double sign_v = product_phase(kernel.generator, g.representative) == 3 ? 1.0 : -1.0;
            const double sign_w = -sign_v;
            C out_v = C(0.0), out_w = C(0.0);
            if (g.present & 1) out_v += g.in[0] * kernel.cos_theta;
            if (g.present & 2) out_v += g.in[1] * (sign_w * kernel.sin_signed);
            if (g.present & 2) out_w += g.in[1] * kernel.cos_theta;
            if (g.present & 1) out_w += g.in[0] * (sign_v * kernel.sin_signed);
            // Every input lies in one partition: the member present decides which output crosses.
            const bool v_here = (g.present & 1) != 0;
            emit(g.representative_local, g.representative, out_v, v_here ? stays : generator_group);
            emit(g.representative_local ^ kernel.generator_local, g.representative ^ kernel.generator, out_w,
                 v_here ? generator_group : stays);
          }
        } else if (options_.general_layer == GeneralLayer::sort_merge) {
          // Formulation (a): every output of every input into one stream, sorted by (bucket, key),
          // duplicates summed in input order.
          auto& stream = scratch.stream;
          stream.clear();
          std::uint32_t order = 0;
          for (unsigned local = 0; local < locals; ++local) {
            const Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
            for (std::size_t t = 0; t < bucket.size(); ++t, order += 16) {
              const PauliString<W>& key = bucket.keys[t];
              const int p = kernel.pattern_of(key);
              for (int k = 0; k < table.fanout[p]; ++k) {
                const auto& o = table.outputs[p][k];
                const int d = p ^ o.pattern;
                const PauliString<W> out = key ^ kernel.pattern_mask[d];
                stream.push_back(
                    {out, bucket.coefficients[t] * cpu_detail::amplitude_as<C>(o.amplitude),
                     (std::uint64_t{local ^ kernel.local_of_pattern[d]} << 59) | (Scratch::key_hash(out) >> 5),
                     order + static_cast<std::uint32_t>(k)});
              }
            }
          }
          // Sort (bucket ⧺ key hash, stream index) handles, not the 56-byte records: one integer
          // compare each, and the index (= input order) fixes the summation order of duplicates. Runs
          // of equal hash are checked key by key; a hash collision between different keys (rare)
          // sorts that run by key, keeping the index order inside each key.
          auto& handles = scratch.handles;
          handles.resize(stream.size());
          for (std::size_t i = 0; i < stream.size(); ++i)
            handles[i] = {stream[i].sort_key, static_cast<std::uint32_t>(i)};
          std::sort(handles.begin(), handles.end());
          for (std::size_t i = 0; i < handles.size();) {
            std::size_t end = i + 1;
            bool one_key = true;
            while (end < handles.size() && handles[end].first == handles[i].first) {
              one_key = one_key && stream[handles[end].second].key == stream[handles[i].second].key;
              ++end;
            }
            if (!one_key) {
              std::sort(handles.begin() + static_cast<std::ptrdiff_t>(i),
                        handles.begin() + static_cast<std::ptrdiff_t>(end),
                        [&stream](const auto& a, const auto& b) {
                          const auto& x = stream[a.second].key;
                          const auto& y = stream[b.second].key;
                          return x != y ? x < y : a.second < b.second;
                        });
            }
            while (i < end) {
              const auto& head = stream[handles[i].second];
              C value = head.coefficient;
              std::size_t j = i + 1;
              for (; j < end && stream[handles[j].second].key == head.key; ++j)
                value += stream[handles[j].second].coefficient;
              emit(static_cast<unsigned>(handles[i].first >> 59), head.key, value, stays);
              i = j;
            }
          }
        } else {
          scratch.reset_groups(inputs);
          for (unsigned local = 0; local < locals; ++local) {
            const Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
            for (std::size_t t = 0; t < bucket.size(); ++t) {
              const PauliString<W>& key = bucket.keys[t];
              const int p = kernel.pattern_of(key);
              const std::uint8_t r = kernel.representative[p];
              const int s = p ^ r;
              Group& g = scratch.group_of(key ^ kernel.pattern_mask[s], r, local ^ kernel.local_of_pattern[s]);
              g.in[p] = bucket.coefficients[t];
              g.present |= static_cast<std::uint16_t>(1u << p);
            }
          }
          for (const Group& g : scratch.groups) {
            // An output's delta from any present input routes it when all inputs lie in one partition
            // (apply_out), its delta s from the representative when the orbit is owned (apply_out_final).
            const int p0 = orbits_owned ? g.representative_pattern : std::countr_zero(static_cast<unsigned>(g.present));
            for (std::uint8_t s : kernel.span_patterns) {
              const int q = g.representative_pattern ^ s;
              C value = C(0.0);
              const auto& list = kernel.incoming[q];
              for (int k = 0; k < kernel.incoming_count[q]; ++k) {
                if ((g.present >> list[k].pattern) & 1) value += g.in[list[k].pattern] * list[k].amplitude;
              }
              emit(g.representative_local ^ kernel.local_of_pattern[s],
                   g.representative ^ kernel.pattern_mask[s], value, pattern_group[q ^ p0]);
            }
          }
        }
        // Every read of this coset is done: rewrite its buckets in place.
        std::size_t written = 0;
        for (unsigned local = 0; local < locals; ++local) {
          Bucket<W, C>& bucket = store_.bucket(plan.member(rep, local));
          // Swap, not copy: the bucket takes the freshly written vectors and the scratch keeps the old
          // ones (with their capacity) for the next coset.
          bucket.keys.swap(scratch.out_keys[local]);
          bucket.coefficients.swap(scratch.out_coefficients[local]);
          written += bucket.size();
          if constexpr (Route::kRoutes) {
            // The leaving rows wait at the bucket's end, group by group, for apply_out's second pass.
            const std::size_t b = static_cast<std::size_t>(plan.member(rep, local));
            for (std::uint32_t group = 0; group < route.groups; ++group) {
              const auto& keys = scratch.leaving_keys[16 * group + local];
              const auto& values = scratch.leaving_coefficients[16 * group + local];
              bucket.keys.insert(bucket.keys.end(), keys.begin(), keys.end());
              bucket.coefficients.insert(bucket.coefficients.end(), values.begin(), values.end());
              route.counts[group * route.buckets + b] = keys.size();
            }
          }
        }
        total += written;
        discarded[coset] = dropped;
      } catch (...) {
        errors.capture();
      }
    }
  }
  errors.rethrow();
  throw_if_interrupted();
  size_ = total;
  double sum = 0.0;
  for (double d : discarded) sum += d;
  return sum;
}

template <int W, Coefficient C>
void CpuEngine<W, C>::refine_if_needed() {
  const int bits = PauliSum<W, C>::bits_to_fit(size_, options_.target_bucket_len, options_.min_buckets);
  if (bits > store_.bits()) store_.refine(bits, layer_threads());
}

/// The layer-pass target (see Truncation::finalize_layer_on) over the engine's buckets.
template <int W, Coefficient C>
class CpuEngine<W, C>::PassTarget {
 public:
  explicit PassTarget(CpuEngine& engine) : engine_(engine) {}
  std::size_t size() const { return engine_.size_; }
  int threads() const { return engine_.layer_threads(); }
  std::vector<double> magnitudes_squared(bool key_order) {
    BucketStore<W, C>& store = engine_.store_;
    offsets_.assign(store.num_buckets() + 1, 0);
    for (std::size_t b = 0; b < store.num_buckets(); ++b)
      offsets_[b + 1] = offsets_[b] + store.bucket(b).size();
    std::vector<double> magnitudes(offsets_.back());
    key_order_.clear();
    if (key_order) {
      // Position i ↔ the i-th term in ascending key order (collapse_sample walks this order).
      std::vector<std::pair<std::size_t, std::size_t>> positions;
      positions.reserve(offsets_.back());
      for (std::size_t b = 0; b < store.num_buckets(); ++b)
        for (std::size_t t = 0; t < store.bucket(b).size(); ++t) positions.emplace_back(b, t);
      std::sort(positions.begin(), positions.end(), [&](const auto& x, const auto& y) {
        return store.bucket(x.first).keys[x.second] < store.bucket(y.first).keys[y.second];
      });
      for (std::size_t i = 0; i < positions.size(); ++i) {
        magnitudes[i] = magnitude_squared(store.bucket(positions[i].first).coefficients[positions[i].second]);
        key_order_.push_back(offsets_[positions[i].first] + positions[i].second);
      }
      return magnitudes;
    }
#pragma omp parallel for schedule(dynamic, 16) \
    num_threads(engine_.layer_threads()) if (engine_.parallel_worthwhile())
    for (std::size_t b = 0; b < store.num_buckets(); ++b) {
      const Bucket<W, C>& bucket = store.bucket(b);
      for (std::size_t t = 0; t < bucket.size(); ++t)
        magnitudes[offsets_[b] + t] = magnitude_squared(bucket.coefficients[t]);
    }
    return magnitudes;
  }
  void retain(std::span<const char> keep_in_order) {
    BucketStore<W, C>& store = engine_.store_;
    std::vector<char> by_key;
    std::span<const char> keep = keep_in_order;
    if (!key_order_.empty()) {  // translate key-order flags to storage positions
      by_key.assign(keep_in_order.size(), 0);
      for (std::size_t i = 0; i < key_order_.size(); ++i) by_key[key_order_[i]] = keep_in_order[i];
      keep = by_key;
    }
    std::size_t total = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(engine_.layer_threads()) reduction(+ : total) if (engine_.parallel_worthwhile())
    for (std::size_t b = 0; b < store.num_buckets(); ++b) {
      Bucket<W, C>& bucket = store.bucket(b);
      std::size_t out = 0;
      for (std::size_t t = 0; t < bucket.size(); ++t) {
        if (!keep[offsets_[b] + t]) continue;
        bucket.keys[out] = bucket.keys[t];
        bucket.coefficients[out] = bucket.coefficients[t];
        ++out;
      }
      bucket.keys.resize(out);
      bucket.coefficients.resize(out);
      total += out;
    }
    engine_.size_ = total;
  }
  void collapse_to(std::size_t index) {
    BucketStore<W, C>& store = engine_.store_;
    if (!key_order_.empty()) index = key_order_[index];
    std::size_t b = 0;
    while (offsets_[b + 1] <= index) ++b;
    const PauliString<W> key = store.bucket(b).keys[index - offsets_[b]];
    for (std::size_t i = 0; i < store.num_buckets(); ++i) store.bucket(i).clear();
    Bucket<W, C>& target = store.bucket(store.hash()(key, store.bits()));
    target.keys.push_back(key);
    target.coefficients.push_back(C(1.0));
    engine_.size_ = 1;
  }

 private:
  CpuEngine& engine_;
  std::vector<std::size_t> offsets_;    // storage position of each bucket's first term
  std::vector<std::size_t> key_order_;  // when asked for key order: storage position of the i-th key
};

template <int W, Coefficient C>
LayerPassResult CpuEngine<W, C>::finalize_layer(const Truncation& truncation) {
  if (!truncation.has_layer_pass()) return {};
  PassTarget target(*this);
  return truncation.finalize_layer_on(target);
}

template <int W, Coefficient C>
void CpuEngine<W, C>::export_to(PauliSum<W, C>& sum) {
  store_.export_to(sum, layer_threads());
}

}  // namespace paulistrings
