// Template bodies of SweepEngine (included by sweep_engine.h).

#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "paulistrings/core/anticommuting_scan.h"
#include "paulistrings/sweep/reference_sweep_engine.h"

namespace paulistrings {

/// Per-thread working space, capacity kept across layers.
template <int W, Coefficient C>
struct SweepEngine<W, C>::Scratch {
  /// A small open-addressing index of keys → positions in `keys` (0 = empty slot, else position + 1).
  std::vector<std::uint32_t> slots;
  std::vector<PauliString<W>> keys;
  std::vector<std::uint32_t> where;  // rotation: bucket side (0 a, 1 b) << 31 | row
  std::vector<char> paired;
  std::vector<C> coefficients;        // local tables: the outputs' K coefficients
  std::vector<std::uint64_t> bucket;  // local tables: each output's bucket
  std::vector<PauliString<W>> new_keys[2];
  std::vector<C> new_coefficients[2];
  std::vector<char> removed[2];
  std::vector<std::uint32_t> leaders[2];  // rotation: the anticommuting terms with the pivot bit clear
  std::vector<std::uint32_t> hits[2];     // rotation: the anticommuting terms, by row

  void reset_index(std::size_t expected) {
    const std::size_t size = std::bit_ceil(std::max<std::size_t>(16, 2 * expected));
    slots.assign(size, 0);
    keys.clear();
  }
  /// The position of `key`, inserting it at the end when absent (fresh = true then).
  std::size_t find_or_insert(const PauliString<W>& key, bool& fresh) {
    if (2 * (keys.size() + 1) > slots.size()) grow();
    const std::size_t mask = slots.size() - 1;
    for (std::size_t s = std::hash<PauliString<W>>()(key) & mask;; s = (s + 1) & mask) {
      if (slots[s] == 0) {
        slots[s] = static_cast<std::uint32_t>(keys.size() + 1);
        keys.push_back(key);
        fresh = true;
        return keys.size() - 1;
      }
      if (keys[slots[s] - 1] == key) {
        fresh = false;
        return slots[s] - 1;
      }
    }
  }
  /// The position of `key`, or SIZE_MAX.
  std::size_t find(const PauliString<W>& key) const {
    const std::size_t mask = slots.size() - 1;
    for (std::size_t s = std::hash<PauliString<W>>()(key) & mask;; s = (s + 1) & mask) {
      if (slots[s] == 0) return SIZE_MAX;
      if (keys[slots[s] - 1] == key) return slots[s] - 1;
    }
  }
  void grow() {
    slots.assign(slots.size() * 2, 0);
    const std::size_t mask = slots.size() - 1;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::size_t s = std::hash<PauliString<W>>()(keys[i]) & mask;
      while (slots[s] != 0) s = (s + 1) & mask;
      slots[s] = static_cast<std::uint32_t>(i + 1);
    }
  }
};

template <int W, Coefficient C>
SweepEngine<W, C>::SweepEngine(const SweepSum<W, C>& sum, std::size_t values,
                               const SweepEngineOptions& options, int bucket_bits)
    : options_(options),
      num_qubits_(sum.num_qubits()),
      columns_(sum.columns()),
      values_(values),
      threads_(std::max(1, options.threads)),
      scratch_(static_cast<std::size_t>(std::max(1, options.threads))) {
  bits_ = std::clamp(bucket_bits, 0, kMaxBucketBits);
  while ((std::size_t{1} << bits_) < options_.min_buckets ||
         (bucket_bits < 0 && (sum.size() >> bits_) > options_.target_bucket_len)) {
    if (bits_ >= kMaxBucketBits) break;
    ++bits_;
  }
  buckets_.assign(std::size_t{1} << bits_, Bucket{});
  for (std::size_t i = 0; i < sum.size(); ++i) {
    Bucket& bucket = buckets_[bucket_of(sum.keys()[i])];
    bucket.keys.push_back(sum.keys()[i]);
    const auto r = sum.row(i);
    bucket.coefficients.insert(bucket.coefficients.end(), r.begin(), r.end());
  }
  size_ = sum.size();
  for (const PauliString<W>& key : sum.keys()) {
    for (int w = 0; w < W; ++w) cone_[w] |= key.x[w] | key.z[w];
  }
}

template <int W, Coefficient C>
void SweepEngine<W, C>::restore(const std::array<std::uint64_t, W>& cone, const Truncation* tested) {
  for (int w = 0; w < W; ++w) cone_[w] |= cone[w];
  if (tested != nullptr) tested_.remember(*tested);
}

template <int W, Coefficient C>
void SweepEngine<W, C>::recount() {
  size_ = 0;
  for (const Bucket& bucket : buckets_) size_ += bucket.keys.size();
}

template <int W, Coefficient C>
int SweepEngine<W, C>::threads_for_layer() const {
  // A row carries K coefficients: about 1 + K/8 terms' work of the CPU engine (docs/PERFORMANCE.md,
  // "sweeps against the CPU engine per term").
  return layer_threads(size_, 1 + columns_ / 8, options_.parallel_threshold, threads_);
}

template <int W, Coefficient C>
void SweepEngine<W, C>::refine_if_needed() {
  // Grow-only: bucket β splits into β and β | 2^b by the new hash row (core/bucket_hash.h).
  while ((size_ >> bits_) > options_.target_bucket_len && bits_ < kMaxBucketBits) {
    const std::size_t old = buckets_.size();
    buckets_.resize(2 * old);
    const int bit = bits_;
    ++bits_;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_for_layer())
    for (std::size_t b = 0; b < old; ++b) {
      Bucket& low = buckets_[b];
      Bucket& high = buckets_[b | old];
      Bucket kept;
      for (std::size_t i = 0; i < low.keys.size(); ++i) {
        Bucket& to = ((hash_(low.keys[i], bit + 1) >> bit) & 1) ? high : kept;
        to.keys.push_back(low.keys[i]);
        to.coefficients.insert(to.coefficients.end(), low.coefficients.begin() + i * columns_,
                               low.coefficients.begin() + (i + 1) * columns_);
      }
      low = std::move(kept);
    }
  }
}

template <int W, Coefficient C>
template <class Work>
void SweepEngine<W, C>::for_each_unit(std::size_t units, std::span<double> dropped, Work&& work) {
  std::vector<double> unit_dropped(units * columns_, 0.0);
  const int threads = threads_for_layer();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t u = 0; u < units; ++u) {
    work(scratch_[static_cast<std::size_t>(omp_get_thread_num())], u, unit_dropped.data() + u * columns_);
  }
  for (std::size_t u = 0; u < units; ++u) {
    for (std::size_t k = 0; k < columns_; ++k) dropped[k] += unit_dropped[u * columns_ + k];
  }
}

template <int W, Coefficient C>
void SweepEngine<W, C>::remove_rows(Bucket& bucket, const std::vector<char>& removed, double* dropped) {
  // From the end, each removed row taking the last row's place: O(removed) row moves instead of moving
  // every row after the first removed one (a row is K coefficients).
  std::size_t size = bucket.keys.size();
  for (std::size_t i = size; i-- > 0;) {
    if (removed[i] == kKeptRow) continue;
    C* r = row(bucket, i);
    if (removed[i] == kDroppedRow) {
      for (std::size_t k = 0; k < columns_; ++k) dropped[k] += magnitude_squared(r[k]);
    }
    --size;
    if (i != size) {
      bucket.keys[i] = bucket.keys[size];
      std::copy(row(bucket, size), row(bucket, size) + columns_, r);
    }
  }
  bucket.keys.resize(size);
  bucket.coefficients.resize(size * columns_);
}

template <int W, Coefficient C>
void SweepEngine<W, C>::apply_layer(const SweepLayer<W>& layer, const Truncation& truncation,
                                    std::span<double> dropped) {
  refine_if_needed();
  const SweepTable<W> table = make_sweep_table<W>(layer);
  // The light cone: a layer acting only on qubits no term touches, and fixing the identity there,
  // changes nothing (terms tested against this policy need no retest).
  std::array<std::uint64_t, W> support{};
  bool fixes_identity = true;
  if (table.form == SweepTable<W>::Form::rotation) {
    for (int w = 0; w < W; ++w) support[w] = table.generator.x[w] | table.generator.z[w];
  } else {
    for (int q = 0; q < table.shape.support_size; ++q)
      support[table.shape.qubits[q] / 64] |= std::uint64_t{1} << (table.shape.qubits[q] % 64);
    const std::span<const Complex> identity = table.amplitudes_of(0, 0);
    const std::span<const Complex> identity_source = table.source_amplitudes_of(0, 0);
    fixes_identity =
        table.fanout[0] == 1 && table.out_pattern[0][0] == 0 &&
        std::all_of(identity.begin(), identity.end(), [](const Complex& a) { return a == Complex(1.0); }) &&
        std::all_of(identity_source.begin(), identity_source.end(),
                    [](const Complex& a) { return a == Complex(0.0); });
  }
  bool touches = false;
  for (int w = 0; w < W; ++w) touches = touches || (support[w] & cone_[w]) != 0;
  if (!touches && fixes_identity && !tested_.must_retest(truncation)) return;
  for (int w = 0; w < W; ++w) cone_[w] |= support[w];
  if (table.form == SweepTable<W>::Form::rotation) {
    rotation_layer(table, truncation, dropped);
  } else if (table.key_preserving) {
    rescale_layer(table, truncation, dropped);
  } else {
    local_layer(table, truncation, dropped);
  }
  tested_.remember(truncation);
  recount();
}

template <int W, Coefficient C>
void SweepEngine<W, C>::rotation_layer(const SweepTable<W>& table, const Truncation& truncation,
                                       std::span<double> dropped) {
  const std::uint64_t d = bucket_of(table.generator);
  const bool retest = tested_.must_retest(truncation);
  // Units: bucket pairs {β, β ⊕ d} named by the member whose top bit of d is clear (β alone when d = 0).
  const std::uint64_t top = d == 0 ? 0 : std::bit_floor(d);
  const std::size_t units = d == 0 ? buckets_.size() : buckets_.size() / 2;
  for_each_unit(units, dropped, [&](Scratch& scratch, std::size_t u, double* unit_dropped) {
    std::uint64_t a = u;
    if (d != 0) {  // insert a zero at the bit position of `top`
      const std::uint64_t low = u & (top - 1);
      a = ((u ^ low) << 1) | low;
    }
    rotate_pair(table, a, a ^ d, truncation, retest, scratch, unit_dropped);
  });
}

template <int W, Coefficient C>
void SweepEngine<W, C>::rotate_pair(const SweepTable<W>& table, std::uint64_t a, std::uint64_t b,
                                    const Truncation& truncation, bool retest, Scratch& scratch,
                                    double* dropped) {
  const PauliString<W>& g = table.generator;
  // The pivot: g's lowest set bit; Q and Q ⊕ g differ there, the side with it clear leads.
  int pivot_word = 0;
  bool pivot_z = false;
  std::uint64_t pivot_bit = 0;
  for (int w = 0; w < W && pivot_bit == 0; ++w) {
    if (g.x[w] != 0) {
      pivot_word = w;
      pivot_bit = g.x[w] & (~g.x[w] + 1);
    } else if (g.z[w] != 0) {
      pivot_word = w;
      pivot_z = true;
      pivot_bit = g.z[w] & (~g.z[w] + 1);
    }
  }
  auto follower = [&](const PauliString<W>& key) {
    return ((pivot_z ? key.z[pivot_word] : key.x[pivot_word]) & pivot_bit) != 0;
  };
  const std::size_t K = columns_;
  const double* cosine = table.cos_theta.data();
  const double* sine = table.sin_signed.data();
  Bucket* side[2] = {&buckets_[a], &buckets_[b]};
  const int sides = a == b ? 1 : 2;
  if (side[0]->keys.empty() && side[1]->keys.empty()) return;
  bool any_removed[2] = {false, false};
  auto test = [&](int s, std::size_t i) {
    const PauliString<W>& key = side[s]->keys[i];
    const std::span<const C> r(row(*side[s], i), K);
    if (!sweep_detail::keeps(truncation, key, r, values_)) {
      scratch.removed[s][i] = kDroppedRow;
      any_removed[s] = true;
    }
  };
  // One scan of the keys lists the anticommuting terms (core/anticommuting_scan.h); commuting terms
  // (unchanged) are retested only when the policy asks.
  std::size_t anticommuting = 0;
  std::size_t hit_count[2] = {0, 0};
  for (int s = 0; s < sides; ++s) {
    scratch.removed[s].assign(side[s]->keys.size(), 0);
    scratch.new_keys[s].clear();
    scratch.new_coefficients[s].clear();
    scratch.leaders[s].clear();
    const auto& keys = side[s]->keys;
    auto& hits = scratch.hits[s];
    if (hits.size() < keys.size()) hits.resize(keys.size());
    std::array<std::uint64_t, W> unused{};  // (a sweep keeps no light cone)
    const std::size_t count =
        anticommuting_scan<W, false>(keys.data(), keys.size(), g, hits.data(), unused);
    if (retest) for_each_unlisted(hits.data(), count, keys.size(), [&](std::size_t i) { test(s, i); });
    hit_count[s] = count;
    anticommuting += count;
  }
  // Removes the flagged rows of each side and appends the side's new rows.
  auto finish = [&] {
    for (int s = 0; s < sides; ++s) {
      Bucket& bucket = *side[s];
      if (any_removed[s]) remove_rows(bucket, scratch.removed[s], dropped);
      bucket.keys.insert(bucket.keys.end(), scratch.new_keys[s].begin(), scratch.new_keys[s].end());
      bucket.coefficients.insert(bucket.coefficients.end(), scratch.new_coefficients[s].begin(),
                                 scratch.new_coefficients[s].end());
    }
  };
  if (table.permutation) {
    // cos θ = 0 in every column: Q becomes g⊕Q, its row times the signed sine — what the pairing below
    // computes (0·x + s·y), without looking partners up or making rows that are then dropped. Each term
    // is transformed where it stands and tested; with two buckets, g⊕Q lies in the other one, so every
    // survivor moves there.
    for (int s = 0; s < sides; ++s) {
      Bucket& bucket = *side[s];
      const int to = sides == 1 ? 0 : 1 - s;
      for (std::size_t h = 0; h < hit_count[s]; ++h) {
        const std::uint32_t i = scratch.hits[s][h];
        PauliString<W>& key = bucket.keys[i];
        const double sign = product_phase(g, key) == 3 ? 1.0 : -1.0;
        key = key ^ g;
        C* q = row(bucket, i);
        for (std::size_t k = 0; k < K; ++k) q[k] = (sign * sine[k]) * q[k];
        if (!sweep_detail::keeps(truncation, key, std::span<const C>(q, K), values_)) {
          scratch.removed[s][i] = kDroppedRow;
          any_removed[s] = true;
        } else if (sides == 2) {
          scratch.new_keys[to].push_back(key);
          scratch.new_coefficients[to].insert(scratch.new_coefficients[to].end(), q, q + K);
          scratch.removed[s][i] = kMovedRow;
          any_removed[s] = true;
        }
      }
    }
    finish();
    return;
  }
  // Followers indexed (the table sized by the anticommuting terms, not the buckets), leaders listed.
  scratch.reset_index(anticommuting / 2);
  scratch.where.clear();
  for (int s = 0; s < sides; ++s) {
    const auto& keys = side[s]->keys;
    for (std::size_t h = 0; h < hit_count[s]; ++h) {
      const std::uint32_t i = scratch.hits[s][h];
      if (!follower(keys[i])) {
        scratch.leaders[s].push_back(i);
        continue;
      }
      bool fresh = false;
      scratch.find_or_insert(keys[i], fresh);
      scratch.where.push_back(static_cast<std::uint32_t>(s) << 31 | i);
    }
  }
  scratch.paired.assign(scratch.where.size(), 0);
  // A missing partner of `key` (coefficients c): appended to the other side when it passes the test.
  // Most partners made from small coefficients fail the test: the largest |sin·c| decides before
  // anything is written.
  const std::size_t* source = table.source.data();
  const double* source_cos = table.source_cos.data();
  const double* source_sin = table.source_sin.data();
  auto append_partner = [&](int s, const PauliString<W>& key, const C* c) {
    if (K != values_) {
      // Derivative columns: partner = σ·(sin·c + source_sin·c_source); the whole row is made, then tested.
      const PauliString<W> partner = key ^ g;
      const double sign = product_phase(g, key) == 3 ? 1.0 : -1.0;
      const int to = sides == 1 ? 0 : 1 - s;
      const std::size_t at = scratch.new_coefficients[to].size();
      scratch.new_coefficients[to].resize(at + K);
      C* out = scratch.new_coefficients[to].data() + at;
      for (std::size_t k = 0; k < K; ++k) {
        C v = sine[k] * c[k];
        if (source[k] != kNoSource) v += source_sin[k] * c[source[k]];
        out[k] = sign * v;
      }
      if (sweep_detail::keeps(truncation, partner, std::span<const C>(out, K), values_)) {
        scratch.new_keys[to].push_back(partner);
      } else {
        for (std::size_t k = 0; k < K; ++k) dropped[k] += magnitude_squared(out[k]);
        scratch.new_coefficients[to].resize(at);
      }
      return;
    }
    std::size_t largest = 0;
    double largest_magnitude = -1.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double m = sine[k] * sine[k] * magnitude_squared(c[k]);
      if (m > largest_magnitude) {
        largest_magnitude = m;
        largest = k;
      }
    }
    const PauliString<W> partner = key ^ g;
    const double sign = product_phase(g, key) == 3 ? 1.0 : -1.0;
    const C top = (sign * sine[largest]) * c[largest];
    if (top == C(0.0) || !truncation.keep(partner, top)) {
      for (std::size_t k = 0; k < K; ++k) dropped[k] += magnitude_squared(sine[k] * c[k]);
      return;
    }
    const int to = sides == 1 ? 0 : 1 - s;
    const std::size_t at = scratch.new_coefficients[to].size();
    scratch.new_coefficients[to].resize(at + K);
    C* out = scratch.new_coefficients[to].data() + at;
    for (std::size_t k = 0; k < K; ++k) out[k] = (sign * sine[k]) * c[k];
    scratch.new_keys[to].push_back(partner);
  };
  // An unpaired term keeps cos·c (plus its source's share); derivative columns first, reading the value
  // columns before they change.
  auto scale_alone = [&](C* q) {
    if (table.has_sources) {
      for (std::size_t k = K; k-- > 0;) {
        C v = cosine[k] * q[k];
        if (source[k] != kNoSource) v += source_cos[k] * q[source[k]];
        q[k] = v;
      }
    } else {
      for (std::size_t k = 0; k < K; ++k) q[k] *= cosine[k];
    }
  };
  for (int s = 0; s < sides; ++s) {
    Bucket& bucket = *side[s];
    for (const std::uint32_t leader : scratch.leaders[s]) {
      const std::size_t i = leader;
      const PauliString<W>& key = bucket.keys[i];
      C* q = row(bucket, i);
      const std::size_t p = scratch.find(key ^ g);
      if (p != SIZE_MAX) {
        scratch.paired[p] = 1;
        const std::uint32_t w = scratch.where[p];
        const int ps = static_cast<int>(w >> 31);
        const std::size_t pi = w & 0x7fffffffu;
        C* r = row(*side[ps], pi);
        const double to_partner = product_phase(g, key) == 3 ? 1.0 : -1.0;
        const double to_leader = product_phase(g, side[ps]->keys[pi]) == 3 ? 1.0 : -1.0;
        if (table.has_sources) {
          for (std::size_t k = K; k-- > 0;) {
            const C x = q[k], y = r[k];
            C nq = cosine[k] * x + (to_leader * sine[k]) * y;
            C nr = cosine[k] * y + (to_partner * sine[k]) * x;
            if (source[k] != kNoSource) {
              const C vx = q[source[k]], vy = r[source[k]];
              nq += source_cos[k] * vx + (to_leader * source_sin[k]) * vy;
              nr += source_cos[k] * vy + (to_partner * source_sin[k]) * vx;
            }
            q[k] = nq;
            r[k] = nr;
          }
        } else {
          for (std::size_t k = 0; k < K; ++k) {
            const C x = q[k], y = r[k];
            q[k] = cosine[k] * x + (to_leader * sine[k]) * y;
            r[k] = cosine[k] * y + (to_partner * sine[k]) * x;
          }
        }
        test(ps, pi);
      } else {
        append_partner(s, key, q);
        scale_alone(q);
      }
      test(s, i);
    }
  }
  // Followers whose leader is absent.
  for (std::size_t p = 0; p < scratch.where.size(); ++p) {
    if (scratch.paired[p]) continue;
    const std::uint32_t w = scratch.where[p];
    const int s = static_cast<int>(w >> 31);
    const std::size_t i = w & 0x7fffffffu;
    C* q = row(*side[s], i);
    append_partner(s, side[s]->keys[i], q);
    scale_alone(q);
    test(s, i);
  }
  finish();
}

template <int W, Coefficient C>
void SweepEngine<W, C>::rescale_layer(const SweepTable<W>& table, const Truncation& truncation,
                                      std::span<double> dropped) {
  const std::size_t K = columns_;
  for_each_unit(buckets_.size(), dropped, [&](Scratch& scratch, std::size_t u, double* unit_dropped) {
    Bucket& bucket = buckets_[u];
    scratch.removed[0].assign(bucket.keys.size(), 0);
    bool any = false;
    for (std::size_t i = 0; i < bucket.keys.size(); ++i) {
      const int in = table.shape.pattern_of(bucket.keys[i]);
      C* r = row(bucket, i);
      if (table.fanout[in] == 0) {
        // Every column maps this pattern to nothing: the term is gone (not a truncation).
        std::fill(r, r + K, C(0.0));
      } else {
        const std::span<const Complex> amplitude = table.amplitudes_of(in, 0);
        const std::span<const Complex> source_amplitude = table.source_amplitudes_of(in, 0);
        // Derivative columns first: their source terms read the value columns before they change.
        for (std::size_t k = K; k-- > 0;) {
          C v = C(0.0);
          sweep_detail::add_scaled(v, amplitude[k], r[k]);
          if (table.source[k] != kNoSource)
            sweep_detail::add_scaled(v, source_amplitude[k], r[table.source[k]]);
          r[k] = v;
        }
      }
      if (!sweep_detail::keeps(truncation, bucket.keys[i], std::span<const C>(r, K), values_)) {
        scratch.removed[0][i] = kDroppedRow;
        any = true;
      }
    }
    if (any) remove_rows(bucket, scratch.removed[0], unit_dropped);
  });
}

template <int W, Coefficient C>
void SweepEngine<W, C>::local_layer(const SweepTable<W>& table, const Truncation& truncation,
                                    std::span<double> dropped) {
  const std::size_t K = columns_;
  // The bucket deltas of the realized local deltas; each coset of their span is one task (cpu/coset_plan.h).
  std::array<std::uint64_t, 16> bucket_delta{};
  std::vector<std::uint64_t> hashes;
  for (std::uint8_t delta : table.deltas) {
    bucket_delta[delta] = bucket_of(table.delta_mask[delta]);
    hashes.push_back(bucket_delta[delta]);
  }
  const CosetPlan plan(bits_, hashes);
  const unsigned members = static_cast<unsigned>(plan.buckets_per_coset());
  for_each_unit(plan.num_cosets(), dropped, [&](Scratch& scratch, std::size_t u, double* unit_dropped) {
    const std::uint64_t rep = plan.representative(u);
    std::size_t inputs = 0;
    for (unsigned m = 0; m < members; ++m) inputs += buckets_[plan.member(rep, m)].keys.size();
    if (inputs == 0) return;
    scratch.reset_index(inputs);
    scratch.coefficients.clear();
    scratch.bucket.clear();
    for (unsigned m = 0; m < members; ++m) {
      const std::uint64_t beta = plan.member(rep, m);
      Bucket& bucket = buckets_[beta];
      for (std::size_t i = 0; i < bucket.keys.size(); ++i) {
        const PauliString<W>& key = bucket.keys[i];
        const C* c = row(bucket, i);
        const int in = table.shape.pattern_of(key);
        for (int j = 0; j < table.fanout[in]; ++j) {
          const int delta = in ^ table.out_pattern[in][j];
          bool fresh = false;
          const std::size_t at = scratch.find_or_insert(key ^ table.delta_mask[delta], fresh);
          if (fresh) {
            scratch.coefficients.resize(scratch.coefficients.size() + K, C(0.0));
            scratch.bucket.push_back(beta ^ bucket_delta[delta]);
          }
          C* out = scratch.coefficients.data() + at * K;
          const std::span<const Complex> amplitude = table.amplitudes_of(in, j);
          for (std::size_t k = 0; k < K; ++k) sweep_detail::add_scaled(out[k], amplitude[k], c[k]);
          if (table.has_sources) {
            const std::span<const Complex> source_amplitude = table.source_amplitudes_of(in, j);
            for (std::size_t k = 0; k < K; ++k) {
              if (table.source[k] != kNoSource)
                sweep_detail::add_scaled(out[k], source_amplitude[k], c[table.source[k]]);
            }
          }
        }
      }
      bucket.keys.clear();
      bucket.coefficients.clear();
    }
    for (std::size_t at = 0; at < scratch.keys.size(); ++at) {
      const C* c = scratch.coefficients.data() + at * K;
      const std::span<const C> r(c, K);
      if (!sweep_detail::keeps(truncation, scratch.keys[at], r, values_)) {
        for (std::size_t k = 0; k < K; ++k) unit_dropped[k] += magnitude_squared(c[k]);
        continue;
      }
      Bucket& to = buckets_[scratch.bucket[at]];
      to.keys.push_back(scratch.keys[at]);
      to.coefficients.insert(to.coefficients.end(), c, c + K);
    }
  });
}

/// finalize_layer_on's target: the terms in bucket order.
template <int W, Coefficient C>
class SweepEngine<W, C>::PassTarget {
 public:
  PassTarget(SweepEngine& engine, std::span<double> dropped) : engine_(engine), dropped_(dropped) {}
  std::size_t size() const { return engine_.size_; }
  int threads() const { return engine_.threads_for_layer(); }
  std::vector<double> magnitudes_squared(bool key_order) {
    if (key_order) throw std::invalid_argument("a sweep's layer passes do not order terms by key");
    std::vector<double> m;
    m.reserve(engine_.size_);
    for (Bucket& bucket : engine_.buckets_) {
      for (std::size_t i = 0; i < bucket.keys.size(); ++i) {
        m.push_back(magnitude_squared(
            sweep_detail::largest(std::span<const C>(engine_.row(bucket, i), engine_.values_))));
      }
    }
    return m;
  }
  void retain(std::span<const char> keep) {
    std::size_t at = 0;
    std::vector<char> removed;
    for (Bucket& bucket : engine_.buckets_) {
      removed.assign(bucket.keys.size(), 0);
      bool any = false;
      for (std::size_t i = 0; i < bucket.keys.size(); ++i, ++at) {
        if (!keep[at]) {
          removed[i] = kDroppedRow;
          any = true;
        }
      }
      if (any) engine_.remove_rows(bucket, removed, dropped_.data());
    }
    engine_.recount();
  }
  void collapse_to(std::size_t) { throw std::invalid_argument("collapse_sample has no meaning in a sweep"); }

 private:
  SweepEngine& engine_;
  std::span<double> dropped_;
};

template <int W, Coefficient C>
LayerPassResult SweepEngine<W, C>::finalize_layer(const Truncation& truncation, std::span<double> dropped) {
  PassTarget target(*this, dropped);
  return truncation.finalize_layer_on(target);
}

template <int W, Coefficient C>
SweepSum<W, C> SweepEngine<W, C>::result() const {
  std::vector<PauliString<W>> keys;
  std::vector<C> coefficients;
  keys.reserve(size_);
  coefficients.reserve(size_ * columns_);
  for (const Bucket& bucket : buckets_) {
    keys.insert(keys.end(), bucket.keys.begin(), bucket.keys.end());
    coefficients.insert(coefficients.end(), bucket.coefficients.begin(), bucket.coefficients.end());
  }
  return SweepSum<W, C>(num_qubits_, columns_, std::move(keys), std::move(coefficients));
}

}  // namespace paulistrings
