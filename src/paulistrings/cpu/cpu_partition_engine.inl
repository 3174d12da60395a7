// Template bodies of CpuPartitionEngine (included by cpu_partition_engine.h).

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/core/anticommuting_scan.h"
#include "paulistrings/core/parallel_errors.h"

namespace paulistrings {
namespace cpu_detail {

/// apply_term_truncation's drop rule: exact zeros, and what the policy's per-term test rejects.
template <int W, Coefficient C>
auto fails_term_test(const Truncation& truncation) {
  return [&truncation, test_terms = truncation.has_term_test()](const PauliString<W>& key, const C& c) {
    return c == C(0.0) || (test_terms && !truncation.keep(key, c));
  };
}

/// merge_by_bucket's finish hook that leaves a merged bucket as it is (removes nothing).
struct KeepBucket {
  template <class Bucket>
  std::size_t operator()(std::size_t, Bucket&) const {
    return 0;
  }
};
inline constexpr KeepBucket kKeepBucket{};

}  // namespace cpu_detail

/// The export group of an output, by the partition offset of its delta: [0, groups) leaves for that
/// group, `groups` stays. counts[g · B + b] receives the rows of group g left at the end of bucket b.
template <int W, Coefficient C>
struct CpuPartitionEngine<W, C>::ExportRoute {
  static constexpr bool kRoutes = true;
  std::uint32_t groups = 0;
  std::array<std::uint32_t, 16> pattern_group{};  // local tables: by delta pattern
  std::uint32_t generator_group = 0;               // rotations: the delta g
  /// apply_out_final on a general table: every orbit is whole here (export_orbit_members), so an output
  /// is routed by its delta from the orbit's representative, not from an input.
  bool orbits_owned = false;
  std::uint64_t* counts = nullptr;
  std::size_t buckets = 0;
};

template <int W, Coefficient C>
template <class F>
void CpuPartitionEngine<W, C>::for_each_term(F&& f) const {
  for (std::size_t b = 0; b < store_.num_buckets(); ++b) {
    const Bucket<W, C>& bucket = store_.bucket(b);
    for (std::size_t t = 0; t < bucket.size(); ++t) f(bucket.keys[t], bucket.coefficients[t]);
  }
}

template <int W, Coefficient C>
template <class Predicate>
double CpuPartitionEngine<W, C>::remove_if(Predicate&& drop) {
  const std::size_t buckets = store_.num_buckets();
  std::vector<double> discarded(buckets, 0.0);
  std::size_t total = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) reduction(+ : total) if (parallel_worthwhile())
  for (std::size_t b = 0; b < buckets; ++b) {
    Bucket<W, C>& bucket = store_.bucket(b);
    discarded[b] = cpu_detail::remove_from_bucket(bucket, drop);
    total += bucket.size();
  }
  size_ = total;
  double sum = 0.0;
  for (double d : discarded) sum += d;
  return sum;
}

template <int W, Coefficient C>
void CpuPartitionEngine<W, C>::merge_terms(std::span<const PauliString<W>> keys, std::span<const C> coefficients) {
  if (keys.size() != coefficients.size()) {
    std::string message("merge_terms: ");
    message.append(std::to_string(keys.size())).append(" keys but ");
    throw std::invalid_argument(message.append(std::to_string(coefficients.size())).append(" coefficients"));
  }
  if (keys.empty()) return;
  // Rows grouped by bucket (a counting sort that keeps their order), then each touched bucket merged
  // through a small open-addressing index of its keys.
  const std::size_t buckets = store_.num_buckets();
  std::vector<std::uint32_t> bucket_of(keys.size());
  std::vector<std::size_t> start(buckets + 1, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    bucket_of[i] = static_cast<std::uint32_t>(store_.hash()(keys[i], store_.bits()));
    ++start[bucket_of[i] + 1];
  }
  for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<std::uint32_t> order(keys.size());
  {
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < keys.size(); ++i) order[next[bucket_of[i]]++] = static_cast<std::uint32_t>(i);
  }
  merge_by_bucket(
      layer_threads(), [&](std::size_t b) { return start[b + 1] - start[b]; },
      [&](std::size_t b, auto&& add) {
        for (std::size_t r = start[b]; r < start[b + 1]; ++r) add(keys[order[r]], coefficients[order[r]]);
      },
      cpu_detail::kKeepBucket);
  refine_if_needed();
}

template <int W, Coefficient C>
template <class Count, class Rows, class Finish>
void CpuPartitionEngine<W, C>::merge_by_bucket(int threads, Count&& count, Rows&& rows, Finish&& finish) {
  const std::size_t buckets = store_.num_buckets();
  std::size_t added = 0, removed = 0;
  std::array<std::uint64_t, W> support{};
  ParallelErrors errors;
#pragma omp parallel num_threads(threads) reduction(+ : added, removed) if (threads > 1)
  {
    Scratch& scratch = scratch_[static_cast<std::size_t>(omp_get_thread_num())];
    std::array<std::uint64_t, W> seen{};  // x | z of the new keys this thread added
#pragma omp for schedule(dynamic, 16)
    for (std::size_t b = 0; b < buckets; ++b) {
      if (errors.failed()) continue;
      try {
        const std::size_t incoming = count(b);
        Bucket<W, C>& bucket = store_.bucket(b);
        if (incoming == 0) {
          removed += finish(b, bucket);
          continue;
        }
        scratch.reset_slots(bucket.size() + incoming);
        for (std::size_t t = 0; t < bucket.size(); ++t)
          scratch.insert_slot(bucket.keys[t], static_cast<std::int32_t>(t));
        rows(b, [&](const PauliString<W>& key, const C& c) {
          const std::int32_t found = scratch.find_slot(
              key, [&](std::int32_t t) { return bucket.keys[static_cast<std::size_t>(t)] == key; });
          if (found >= 0) {
            bucket.coefficients[static_cast<std::size_t>(found)] += c;
            return;
          }
          scratch.insert_slot(key, static_cast<std::int32_t>(bucket.size()));
          bucket.keys.push_back(key);
          bucket.coefficients.push_back(c);
          for (int w = 0; w < W; ++w) seen[static_cast<std::size_t>(w)] |= key.x[w] | key.z[w];
          ++added;
        });
        removed += finish(b, bucket);
      } catch (...) {
        errors.capture();
      }
    }
#pragma omp critical(paulistrings_merge_support)
    for (int w = 0; w < W; ++w) support[static_cast<std::size_t>(w)] |= seen[static_cast<std::size_t>(w)];
  }
  errors.rethrow();
  for (int w = 0; w < W; ++w) support_[w] |= support[static_cast<std::size_t>(w)];
  size_ = size_ + added - removed;
  tested_.forget();  // merged coefficients were never tested against any policy
}

template <int W, Coefficient C>
template <class GroupOf, class Place>
void CpuPartitionEngine<W, C>::extract_grouped(std::uint32_t groups, GroupOf&& group, Place&& place) {
  const std::size_t buckets = store_.num_buckets();
  // Pass 1: terms per (group, bucket); the prefix sums then give every bucket's place in its group.
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(groups) * buckets, 0);
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) if (parallel_worthwhile())
  for (std::size_t b = 0; b < buckets; ++b) {
    const Bucket<W, C>& bucket = store_.bucket(b);
    for (std::size_t t = 0; t < bucket.size(); ++t) {
      const std::uint32_t g = group(bucket.keys[t]);
      if (g < groups) ++counts[g * buckets + b];
    }
  }
  const std::vector<GroupDestination> destinations = place(std::span<const std::uint64_t>(counts));
  if (destinations.size() != groups) throw std::logic_error("extract_grouped: one destination per group");
  std::vector<std::uint64_t>& next = counts;  // becomes the write position of every (group, bucket)
  for (std::size_t g = 0; g < groups; ++g) {
    std::uint64_t running = 0;
    for (std::size_t b = 0; b < buckets; ++b) running += std::exchange(next[g * buckets + b], running);
  }
  // Pass 2: leaving terms written to their places, staying terms compacted in place.
  std::size_t total = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) reduction(+ : total) if (parallel_worthwhile())
  for (std::size_t b = 0; b < buckets; ++b) {
    Bucket<W, C>& bucket = store_.bucket(b);
    std::size_t out = 0;
    for (std::size_t t = 0; t < bucket.size(); ++t) {
      const std::uint32_t g = group(bucket.keys[t]);
      if (g < groups) {
        const std::uint64_t at = next[g * buckets + b]++;
        std::memcpy(destinations[g].keys + at * sizeof(PauliString<W>), &bucket.keys[t], sizeof(PauliString<W>));
        std::memcpy(destinations[g].coefficients + at * sizeof(C), &bucket.coefficients[t], sizeof(C));
        continue;
      }
      bucket.keys[out] = bucket.keys[t];
      bucket.coefficients[out] = bucket.coefficients[t];
      ++out;
    }
    bucket.keys.resize(out);
    bucket.coefficients.resize(out);
    total += out;
  }
  size_ = total;
}

template <int W, Coefficient C>
template <class Place>
void CpuPartitionEngine<W, C>::rotate_out(const PreparedChannel<W>& table, Place&& place) {
  if (table.form != PreparedChannel<W>::Form::rotation) throw std::logic_error("rotate_out: not a rotation");
  const std::size_t buckets = store_.num_buckets();
  const std::size_t flip = static_cast<std::size_t>(store_.hash()(table.generator, store_.bits()));
  const PauliString<W> generator = table.generator;
  const double cos_theta = table.cos_theta, sin_signed = table.sin_signed;
  const Truncation none;
  const bool skipped = skips_layer(table, none);
  // The partner of a term, as rotation_layer computes it.
  const auto partner_of = [&](const PauliString<W>& key, const C& c) {
    const double sign = product_phase(generator, key) == 3 ? 1.0 : -1.0;
    C out = C(0.0);
    out += c * (sign * sin_signed);
    return out;
  };
  // A bucket's anticommuting terms (core/anticommuting_scan.h), listed in the calling thread's scratch.
  const auto scan = [&](const Bucket<W, C>& bucket) -> std::span<const std::uint32_t> {
    std::vector<std::uint32_t>& hits = scratch_[static_cast<std::size_t>(omp_get_thread_num())].hits;
    if (hits.size() < bucket.size()) hits.resize(bucket.size());
    std::array<std::uint64_t, W> unused{};
    const std::size_t count =
        anticommuting_scan<W, false>(bucket.keys.data(), bucket.size(), generator, hits.data(), unused);
    return {hits.data(), count};
  };
  // Pass 1: partners per destination bucket (the source bucket b's all land in b ⊕ flip).
  std::vector<std::uint64_t> counts(buckets, 0);
  if (!skipped) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) if (parallel_worthwhile())
    for (std::size_t b = 0; b < buckets; ++b) {
      const Bucket<W, C>& bucket = store_.bucket(b);
      std::uint64_t n = 0;
      for (const std::uint32_t t : scan(bucket))
        n += partner_of(bucket.keys[t], bucket.coefficients[t]) != C(0.0) ? 1 : 0;
      counts[b ^ flip] = n;
    }
  }
  const GroupDestination destination = place(std::span<const std::uint64_t>(counts));
  if (skipped) {
    ++skipped_layers_;
    return;
  }
  std::vector<std::uint64_t>& next = counts;  // becomes the write position of every destination bucket
  std::uint64_t running = 0;
  for (std::size_t b = 0; b < buckets; ++b) running += std::exchange(next[b], running);
  // Pass 2: partners written out, the anticommuting terms rescaled in place (exact zeros removed);
  // commuting terms are not touched.
  std::size_t total = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) reduction(+ : total) if (parallel_worthwhile())
  for (std::size_t b = 0; b < buckets; ++b) {
    Bucket<W, C>& bucket = store_.bucket(b);
    std::uint64_t at = next[b ^ flip];
    bool zeroed = false;
    for (const std::uint32_t t : scan(bucket)) {
      const PauliString<W> key = bucket.keys[t];
      const C c = bucket.coefficients[t];
      const C partner = partner_of(key, c);
      if (partner != C(0.0)) {
        const PauliString<W> moved = key ^ generator;
        std::memcpy(destination.keys + at * sizeof(PauliString<W>), &moved, sizeof(PauliString<W>));
        std::memcpy(destination.coefficients + at * sizeof(C), &partner, sizeof(C));
        ++at;
      }
      C kept = C(0.0);
      kept += c * cos_theta;
      bucket.coefficients[t] = kept;
      zeroed |= kept == C(0.0);
    }
    if (zeroed)
      cpu_detail::remove_from_bucket(bucket, [](const PauliString<W>&, const C& c) { return c == C(0.0); });
    total += bucket.size();
  }
  size_ = total;
  remember_tested(none);
}

template <int W, Coefficient C>
template <class Part, class Place>
void CpuPartitionEngine<W, C>::apply_out(const PreparedChannel<W>& table, Part&& part,
                                std::span<const std::uint32_t> group_of_offset, std::uint32_t groups, Place&& place) {
  apply_out_routed(table, part, group_of_offset, groups, Truncation(), false, place);
}

template <int W, Coefficient C>
template <class Part, class Place>
double CpuPartitionEngine<W, C>::apply_out_final(const PreparedChannel<W>& table, Part&& part,
                                        std::span<const std::uint32_t> group_of_offset, std::uint32_t groups,
                                        const Truncation& truncation, Place&& place) {
  if (!finalizes_out(table)) throw std::logic_error("apply_out_final: the outputs of this table are not final");
  return apply_out_routed(table, part, group_of_offset, groups, truncation, true, place);
}

template <int W, Coefficient C>
template <class Part, class Place>
void CpuPartitionEngine<W, C>::export_orbit_members(const PreparedChannel<W>& table, Part&& part,
                                           std::span<const std::uint32_t> group_of_offset, std::uint32_t groups,
                                           Place&& place) {
  if (!routes_orbits(table)) throw std::logic_error("export_orbit_members: not a general table on the orbit path");
  if (group_of_offset.empty() || group_of_offset[0] != groups) {
    throw std::logic_error("export_orbit_members: offset 0 must stay");
  }
  CosetPlan unused;
  const auto kernel = cpu_detail::make_kernel<W, C>(table, store_.hash(), 0, unused);
  // A term's group by its pattern p: the partition offset of its delta p ⊕ representative[p] from its
  // orbit's representative (in the span, so named: checked before anything moves).
  std::array<std::uint32_t, 16> group_of_pattern{};
  for (int p = 0; p < (table.support_size == 2 ? 16 : 4); ++p) {
    const std::uint32_t offset = part(table.pattern_mask(p ^ kernel.representative[static_cast<std::size_t>(p)]));
    const std::uint32_t group = offset < group_of_offset.size() ? group_of_offset[offset] : groups + 1;
    if (group > groups) throw std::logic_error("export_orbit_members: a partition of the delta span is not named");
    group_of_pattern[static_cast<std::size_t>(p)] = group;
  }
  extract_grouped(
      groups, [&](const PauliString<W>& key) { return group_of_pattern[static_cast<std::size_t>(table.pattern_of(key))]; },
      place);
}

template <int W, Coefficient C>
void CpuPartitionEngine<W, C>::append_bucketed(std::span<const BucketedRows> runs, bool refine) {
  int bits = store_.bits();
  for (const BucketedRows& run : runs) bits = std::max(bits, run.bits);
  refine_to(bits);
  std::vector<const BucketedRows*> direct;
  std::size_t incoming = 0;
  for (const BucketedRows& run : runs) {
    incoming += run.rows();
    if (run.bits == store_.bits()) direct.push_back(&run);
  }
  std::array<std::uint64_t, W> support{};
  const std::size_t buckets = store_.num_buckets();
  ParallelErrors errors;
  const int threads = threads_for(size_ + incoming);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::array<std::uint64_t, W> seen{};  // x | z of the keys this thread appended
#pragma omp for schedule(dynamic, 16)
    for (std::size_t b = 0; b < buckets; ++b) {
      if (errors.failed()) continue;
      try {
        Bucket<W, C>& bucket = store_.bucket(b);
        for (const BucketedRows* run : direct) {
          const std::size_t first = run->offsets[b], n = run->offsets[b + 1] - first;
          if (n == 0) continue;
          const std::size_t at = bucket.size();
          bucket.keys.resize(at + n);
          bucket.coefficients.resize(at + n);
          std::memcpy(bucket.keys.data() + at, run->keys + first * sizeof(PauliString<W>), n * sizeof(PauliString<W>));
          std::memcpy(bucket.coefficients.data() + at, run->coefficients + first * sizeof(C), n * sizeof(C));
          for (std::size_t t = at; t < at + n; ++t) {
            for (int w = 0; w < W; ++w) seen[static_cast<std::size_t>(w)] |= bucket.keys[t].x[w] | bucket.keys[t].z[w];
          }
        }
      } catch (...) {
        errors.capture();
      }
    }
#pragma omp critical(paulistrings_append_support)
    for (int w = 0; w < W; ++w) support[static_cast<std::size_t>(w)] |= seen[static_cast<std::size_t>(w)];
  }
  errors.rethrow();
  // A coarser run (a partner that had not refined yet): every row hashed.
  for (const BucketedRows& run : runs) {
    if (run.bits == store_.bits()) continue;
    for (std::uint64_t i = 0; i < run.rows(); ++i) {
      PauliString<W> key;
      C c;
      std::memcpy(&key, run.keys + i * sizeof(PauliString<W>), sizeof(PauliString<W>));
      std::memcpy(&c, run.coefficients + i * sizeof(C), sizeof(C));
      Bucket<W, C>& bucket = store_.bucket(store_.hash()(key, store_.bits()));
      bucket.keys.push_back(key);
      bucket.coefficients.push_back(c);
      for (int w = 0; w < W; ++w) support[static_cast<std::size_t>(w)] |= key.x[w] | key.z[w];
    }
  }
  for (int w = 0; w < W; ++w) support_[w] |= support[static_cast<std::size_t>(w)];
  size_ += incoming;
  if (refine) refine_if_needed();
}

template <int W, Coefficient C>
template <class Part, class Place>
double CpuPartitionEngine<W, C>::apply_out_routed(const PreparedChannel<W>& table, Part&& part,
                                         std::span<const std::uint32_t> group_of_offset, std::uint32_t groups,
                                         const Truncation& truncation, bool final_outputs, Place&& place) {
  const auto group_of = [&](const PauliString<W>& delta) {
    const std::uint32_t offset = part(delta);
    return offset < group_of_offset.size() ? group_of_offset[offset] : groups + 1;
  };
  if (group_of_offset.empty() || group_of_offset[0] != groups) {
    throw std::logic_error("apply_out: offset 0 must stay");
  }
  const std::size_t buckets = store_.num_buckets();
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(groups) * buckets, 0);
  const bool rotation = table.form == PreparedChannel<W>::Form::rotation;
  // Every realized delta must name a group or stay (checked before anything changes).
  ExportRoute route;
  route.groups = groups;
  route.counts = counts.data();
  route.buckets = buckets;
  route.pattern_group.fill(groups);
  route.orbits_owned = final_outputs && routes_orbits(table);
  if (rotation) {
    route.generator_group = group_of(table.generator);
    if (route.generator_group > groups) throw std::logic_error("apply_out: the generator's partition is not named");
  } else {
    for (int d = 0; d < (table.support_size == 2 ? 16 : 4); ++d) {
      route.pattern_group[static_cast<std::size_t>(d)] = group_of(table.pattern_mask(d));
    }
    for (const std::uint8_t d : table.delta_patterns) {
      if (route.pattern_group[d] > groups) throw std::logic_error("apply_out: a delta's partition is not named");
    }
    if (route.orbits_owned) {
      // Outputs are routed by their delta from the representative: any element of the span.
      CosetPlan unused;
      for (const std::uint8_t s : cpu_detail::make_kernel<W, C>(table, store_.hash(), 0, unused).span_patterns) {
        if (route.pattern_group[s] > groups) throw std::logic_error("apply_out: a partition of the delta span is not named");
      }
    }
    // Span elements that are no realized delta carry only exact zeros (the inputs share a partition).
    for (std::uint32_t& g : route.pattern_group) g = std::min(g, groups);
  }
  if (rotation && table.table_class == TableClass::general && options_.in_place_rotations) {
    if (final_outputs) throw std::logic_error("apply_out: a rotation's outputs are not final");
    if (groups != 1 || route.generator_group != 0) throw std::logic_error("apply_out: a rotation that stays");
    rotate_out(table, [&](std::span<const std::uint64_t> rotation_counts) {
      const std::vector<GroupDestination> destinations = place(rotation_counts);
      if (destinations.size() != 1) throw std::logic_error("apply_out: one destination per group");
      return destinations[0];
    });
    return 0.0;
  }
  if (options_.general_layer == GeneralLayer::sort_merge && !rotation && table.table_class == TableClass::general) {
    throw std::logic_error("apply_out: the sort-merge formulation does not route its outputs");
  }
  if (skips_layer(table, truncation)) {
    ++skipped_layers_;
    place(std::span<const std::uint64_t>(counts));
    return 0.0;
  }
  double discarded = 0.0;
  if (table.table_class == TableClass::key_preserving) {
    discarded = rescale_layer(table, truncation);  // no delta: nothing leaves
  } else {
    discarded = coset_layer(table, truncation, route);
    add_support(table);
  }
  remember_tested(truncation);
  const std::vector<GroupDestination> destinations = place(std::span<const std::uint64_t>(counts));
  if (destinations.size() != groups) throw std::logic_error("apply_out: one destination per group");
  // The leaving rows wait at each bucket's end, group by group: move them to their places.
  std::vector<std::uint64_t> next(counts);
  for (std::size_t g = 0; g < groups; ++g) {
    std::uint64_t running = 0;
    for (std::size_t b = 0; b < buckets; ++b) running += std::exchange(next[g * buckets + b], running);
  }
#pragma omp parallel for schedule(dynamic, 16) num_threads(layer_threads()) if (parallel_worthwhile())
  for (std::size_t b = 0; b < buckets; ++b) {
    Bucket<W, C>& bucket = store_.bucket(b);
    std::size_t leaving = 0;
    for (std::size_t g = 0; g < groups; ++g) leaving += counts[g * buckets + b];
    if (leaving == 0) continue;
    std::size_t from = bucket.size() - leaving;
    const std::size_t stays = from;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t n = counts[g * buckets + b];
      const std::uint64_t at = next[g * buckets + b];
      std::memcpy(destinations[g].keys + at * sizeof(PauliString<W>), bucket.keys.data() + from,
                  n * sizeof(PauliString<W>));
      std::memcpy(destinations[g].coefficients + at * sizeof(C), bucket.coefficients.data() + from, n * sizeof(C));
      from += n;
    }
    bucket.keys.resize(stays);
    bucket.coefficients.resize(stays);
  }
  return discarded;
}

template <int W, Coefficient C>
void CpuPartitionEngine<W, C>::refine_to(int bits) {
  if (bits > store_.bits()) store_.refine(bits, parallel_worthwhile() ? threads_ : 1);
}

template <int W, Coefficient C>
void CpuPartitionEngine<W, C>::merge_bucketed(std::span<const BucketedRows> runs) {
  merge_bucketed(runs, cpu_detail::kKeepBucket);
}

template <int W, Coefficient C>
double CpuPartitionEngine<W, C>::merge_bucketed_and_test(std::span<const BucketedRows> runs, const Truncation& truncation) {
  int bits = store_.bits();
  for (const BucketedRows& run : runs) bits = std::max(bits, run.bits);
  refine_to(bits);
  for (const BucketedRows& run : runs) {
    if (run.bits != store_.bits()) {  // a coarser run is re-hashed by merge_terms: the two steps
      merge_bucketed(runs);
      return apply_term_truncation(truncation);
    }
  }
  // Every bucket tested right after its merge (apply_term_truncation's test, bucket by bucket), while
  // its terms are in cache: the separate pass over every term is gone. The Σ|c|² dropped is summed per
  // bucket, then in bucket order, as remove_if sums it.
  const auto drop = cpu_detail::fails_term_test<W, C>(truncation);
  std::vector<double> dropped(store_.num_buckets(), 0.0);
  merge_bucketed(runs, [&](std::size_t b, Bucket<W, C>& bucket) {
    const std::size_t before = bucket.size();
    dropped[b] = cpu_detail::remove_from_bucket(bucket, drop);
    return before - bucket.size();
  });
  remember_tested(truncation);
  double sum = 0.0;
  for (double d : dropped) sum += d;
  return sum;
}

template <int W, Coefficient C>
template <class Finish>
void CpuPartitionEngine<W, C>::merge_bucketed(std::span<const BucketedRows> runs, Finish&& finish) {
  int bits = store_.bits();
  for (const BucketedRows& run : runs) bits = std::max(bits, run.bits);
  refine_to(bits);
  // Row i of a run, read from its bytes.
  const auto row = [](const BucketedRows& run, std::uint64_t i, auto&& add) {
    PauliString<W> key;
    C c;
    std::memcpy(&key, run.keys + i * sizeof(PauliString<W>), sizeof(PauliString<W>));
    std::memcpy(&c, run.coefficients + i * sizeof(C), sizeof(C));
    add(key, c);
  };
  // Runs with the engine's bucket count merge bucket by bucket straight from their bytes; a coarser run
  // (a partner that had not refined yet) goes through merge_terms, which hashes every row.
  std::vector<const BucketedRows*> direct;
  std::vector<PauliString<W>> rehashed_keys;
  std::vector<C> rehashed_coefficients;
  std::size_t incoming = 0;
  for (const BucketedRows& run : runs) {
    if (run.bits == store_.bits()) {
      direct.push_back(&run);
      incoming += run.rows();
      continue;
    }
    for (std::uint64_t i = 0; i < run.rows(); ++i) {
      row(run, i, [&](const PauliString<W>& key, const C& c) {
        rehashed_keys.push_back(key);
        rehashed_coefficients.push_back(c);
      });
    }
  }
  // A finish hook other than kKeepBucket must see every bucket, even when no row arrived.
  constexpr bool kEveryBucket = !std::is_same_v<std::decay_t<Finish>, cpu_detail::KeepBucket>;
  if (incoming > 0 || kEveryBucket) {
    merge_by_bucket(
        threads_for(size_ + incoming),
        [&](std::size_t b) {
          std::size_t count = 0;
          for (const BucketedRows* run : direct) count += run->offsets[b + 1] - run->offsets[b];
          return count;
        },
        [&](std::size_t b, auto&& add) {
          for (const BucketedRows* run : direct) {
            for (std::uint64_t i = run->offsets[b]; i < run->offsets[b + 1]; ++i) row(*run, i, add);
          }
        },
        finish);
  }
  if (!rehashed_keys.empty()) {
    merge_terms(rehashed_keys, rehashed_coefficients);
  } else {
    refine_if_needed();
  }
}

template <int W, Coefficient C>
double CpuPartitionEngine<W, C>::apply_term_truncation(const Truncation& truncation) {
  const double discarded = remove_if(cpu_detail::fails_term_test<W, C>(truncation));
  remember_tested(truncation);
  return discarded;
}

}  // namespace paulistrings
