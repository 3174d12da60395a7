// Template bodies of ColumnIndex and ColumnEngine (included by column_engine.h).

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "paulistrings/core/key_sorter.h"

namespace paulistrings {
namespace column_detail {

/// Calls f(row) for every set bit of a row bitset, in ascending row order.
template <class F>
inline void for_each_row(const std::vector<std::uint64_t>& bits, std::size_t words, F&& f) {
  for (std::size_t w = 0; w < words; ++w) {
    for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
      f(64 * w + static_cast<std::size_t>(std::countr_zero(word)));
    }
  }
}

/// An amplitude in the storage type (real tables only ever meet real sums; validate_run checks).
template <Coefficient C>
inline C amplitude_in(const Complex& amplitude) {
  if constexpr (std::same_as<C, Complex>) {
    return amplitude;
  } else {
    return amplitude.real();
  }
}

}  // namespace column_detail

// ---- ColumnIndex ----

namespace column_detail {

/// In place: bit j of a[b] becomes bit b of the old a[j] (a 64 × 64 bit-matrix transpose, bit 0 first).
inline void transpose64(std::array<std::uint64_t, 64>& a) {
  std::uint64_t m = 0x00000000ffffffffULL;
  for (int j = 32; j != 0; j >>= 1, m ^= (m << j)) {
    for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
      const std::uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
      a[k | j] ^= t;
      a[k] ^= t << j;
    }
  }
}

}  // namespace column_detail

template <int W>
void ColumnIndex<W>::grow_to(std::size_t words) {
  if (words <= capacity_words_) return;
  capacity_words_ = std::max({words, 2 * capacity_words_, std::size_t{16}});
  live_.resize(capacity_words_, 0);
  for (auto& column : columns_) {
    if (!column.empty()) column.resize(capacity_words_, 0);
  }
}

template <int W>
std::vector<std::uint64_t>& ColumnIndex<W>::column_for_write(std::size_t qubit, int plane) {
  auto& column = columns_[2 * qubit + static_cast<std::size_t>(plane)];
  if (column.empty()) column.assign(capacity_words_, 0);
  return column;
}

template <int W>
void ColumnIndex<W>::add(std::size_t row, const PauliString<W>& key) {
  const std::size_t w = row / 64;
  const std::uint64_t bit = std::uint64_t{1} << (row % 64);
  grow_to(w + 1);
  used_words_ = std::max(used_words_, w + 1);
  live_[w] |= bit;
  for_each_qubit<W>(key.x, [&](std::size_t q) { column_for_write(q, 0)[w] |= bit; });
  for_each_qubit<W>(key.z, [&](std::size_t q) { column_for_write(q, 1)[w] |= bit; });
}

template <int W>
void ColumnIndex<W>::add_rows(std::size_t first, std::span<const PauliString<W>> keys) {
  if (keys.empty()) return;
  const std::size_t end = first + keys.size();
  grow_to((end + 63) / 64);
  used_words_ = std::max(used_words_, (end + 63) / 64);
  std::array<std::uint64_t, 64> block;
  for (std::size_t w = first / 64; 64 * w < end; ++w) {
    const std::size_t lo = std::max(first, 64 * w), hi = std::min(end, 64 * w + 64);
    const std::size_t bits = hi - lo;
    live_[w] |= (bits == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1)) << (lo - 64 * w);
    for (int plane = 0; plane < 2; ++plane) {
      for (int i = 0; i < W; ++i) {
        block.fill(0);
        std::uint64_t any = 0;
        for (std::size_t r = lo; r < hi; ++r) {
          const std::uint64_t word = plane == 0 ? keys[r - first].x[i] : keys[r - first].z[i];
          block[r - 64 * w] = word;
          any |= word;
        }
        if (any == 0) continue;
        column_detail::transpose64(block);
        for (int b = 0; b < 64; ++b) {
          if (block[b] != 0) column_for_write(64 * static_cast<std::size_t>(i) + b, plane)[w] |= block[b];
        }
      }
    }
  }
}

template <int W>
void ColumnIndex<W>::flip(std::size_t row, const PauliString<W>& delta) {
  const std::size_t w = row / 64;
  const std::uint64_t bit = std::uint64_t{1} << (row % 64);
  for_each_qubit<W>(delta.x, [&](std::size_t q) { column_for_write(q, 0)[w] ^= bit; });
  for_each_qubit<W>(delta.z, [&](std::size_t q) { column_for_write(q, 1)[w] ^= bit; });
}

template <int W>
void ColumnIndex<W>::clear() {
  std::fill(live_.begin(), live_.begin() + static_cast<std::ptrdiff_t>(used_words_), 0);
  for (auto& column : columns_) {
    if (!column.empty())
      std::fill(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(used_words_), 0);
  }
  used_words_ = 0;
}

template <int W>
std::span<const std::uint64_t> ColumnIndex<W>::column(std::size_t qubit, int plane) const {
  const auto& column = columns_[2 * qubit + static_cast<std::size_t>(plane)];
  if (column.empty()) return {};
  return {column.data(), used_words_};
}

template <int W>
void ColumnIndex<W>::anticommuting(const PauliString<W>& generator, std::vector<std::uint64_t>& out) const {
  // M anticommutes with G iff Σ_q M.z_q·G.x_q + M.x_q·G.z_q is odd: an X or Y of G on q reads q's z
  // column, a Z or Y its x column.
  out.assign(used_words_, 0);
  const std::size_t words = used_words_;
  auto xor_in = [&](std::size_t q, int plane) {
    const auto& column = columns_[2 * q + static_cast<std::size_t>(plane)];
    if (column.empty()) return;
    const std::uint64_t* c = column.data();
    std::uint64_t* o = out.data();
    for (std::size_t w = 0; w < words; ++w) o[w] ^= c[w];
  };
  for_each_qubit<W>(generator.x, [&](std::size_t q) { xor_in(q, 1); });
  for_each_qubit<W>(generator.z, [&](std::size_t q) { xor_in(q, 0); });
  for (std::size_t w = 0; w < words; ++w) out[w] &= live_[w];
}

template <int W>
void ColumnIndex<W>::touching(const PauliString<W>& support, std::vector<std::uint64_t>& out) const {
  out.assign(used_words_, 0);
  const std::size_t words = used_words_;
  std::array<std::uint64_t, W> qubits{};
  for (int i = 0; i < W; ++i) qubits[i] = support.x[i] | support.z[i];
  for_each_qubit<W>(qubits, [&](std::size_t q) {
    for (int plane = 0; plane < 2; ++plane) {
      const auto& column = columns_[2 * q + static_cast<std::size_t>(plane)];
      if (column.empty()) continue;
      for (std::size_t w = 0; w < words; ++w) out[w] |= column[w];
    }
  });
  for (std::size_t w = 0; w < words; ++w) out[w] &= live_[w];
}

// ---- ColumnEngine: rows ----

template <int W, Coefficient C>
ColumnEngine<W, C>::ColumnEngine(const PauliSum<W, C>& sum, const ColumnEngineOptions& options)
    : options_(options) {
  keys_.reserve(sum.size());
  coefficients_.reserve(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) append(sum.keys()[i], sum.coefficients()[i]);
  index_appended();
  counters_ = {};
}

template <int W, Coefficient C>
std::uint64_t ColumnEngine<W, C>::key_hash(const PauliString<W>& key) {
  // Independent products (no chain of multiplies a key waits on), folded so that the low bits a
  // table's slot uses see every input bit; the high half is the slot's tag.
  std::uint64_t h = 0;
  for (int i = 0; i < W; ++i)
    h ^= std::rotl(key.x[i] * 0x9e3779b97f4a7c15ULL + key.z[i] * 0xc2b2ae3d27d4eb4fULL, 23 * i);
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  return h ^ (h >> 29);
}

template <int W, Coefficient C>
std::size_t ColumnEngine<W, C>::append(const PauliString<W>& key, const C& value) {
  const std::size_t row = keys_.size();
  keys_.push_back(key);
  coefficients_.push_back(value);
  ++counters_.rows_appended;
  ++live_rows_;
  return row;
}

template <int W, Coefficient C>
void ColumnEngine<W, C>::index_appended() {
  index_.add_rows(indexed_rows_, std::span<const PauliString<W>>(keys_).subspan(indexed_rows_));
  indexed_rows_ = keys_.size();
}

template <int W, Coefficient C>
void ColumnEngine<W, C>::move(std::size_t row, const PauliString<W>& delta, const C& value) {
  keys_[row] ^= delta;
  coefficients_[row] = value;
  index_.flip(row, delta);
}

template <int W, Coefficient C>
void ColumnEngine<W, C>::erase(std::size_t row) {
  index_.remove(row);
  coefficients_[row] = C(0.0);
  --live_rows_;
}

template <int W, Coefficient C>
void ColumnEngine<W, C>::compact_if_sparse() {
  const std::size_t holes = keys_.size() - live_rows_;
  if (holes <= live_rows_ || holes < 64) return;
  ++counters_.compactions;
  std::size_t out = 0;
  for (std::size_t r = 0; r < keys_.size(); ++r) {
    if (!index_.live(r)) continue;
    keys_[out] = keys_[r];
    coefficients_[out] = coefficients_[r];
    ++out;
  }
  keys_.resize(out);
  coefficients_.resize(out);
  index_.clear();
  indexed_rows_ = 0;
  index_appended();
}

// ---- ColumnEngine: layers ----

template <int W, Coefficient C>
double ColumnEngine<W, C>::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  // Unchanged rows passed this policy's test in an earlier layer unless the policy is new (the
  // reference engine re-tests every term; the test depends on the key and coefficient only).
  const bool test_unchanged = tested_.must_retest(truncation);
  to_erase_.clear();
  const double discarded = table.form == PreparedChannel<W>::Form::rotation
                               ? rotation_layer(table, truncation, test_unchanged)
                               : local_layer(table, truncation, test_unchanged);
  index_appended();
  for (std::uint32_t row : to_erase_) erase(row);
  to_erase_.clear();
  ++counters_.layers;
  tested_.remember(truncation);
  compact_if_sparse();
  return discarded;
}

template <int W, Coefficient C>
double ColumnEngine<W, C>::test_unchanged_rows(const std::vector<std::uint64_t>& changed,
                                               const Truncation& truncation) {
  double dropped = 0.0;
  const auto live = index_.live_words();
  for (std::size_t w = 0; w < live.size(); ++w) {
    const std::uint64_t unchanged = live[w] & ~(w < changed.size() ? changed[w] : 0);
    for (std::uint64_t word = unchanged; word != 0; word &= word - 1) {
      const std::size_t r = 64 * w + static_cast<std::size_t>(std::countr_zero(word));
      if (truncation.keep(keys_[r], coefficients_[r])) continue;
      dropped += magnitude_squared(coefficients_[r]);
      coefficients_[r] = C(0.0);
      to_erase_.push_back(static_cast<std::uint32_t>(r));
    }
  }
  return dropped;
}

template <int W, Coefficient C>
double ColumnEngine<W, C>::rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation,
                                          bool test_unchanged) {
  const PauliString<W> generator = table.generator;
  const double cos_theta = table.cos_theta, sin_signed = table.sin_signed;
  const bool test_terms = truncation.has_term_test();
  index_.anticommuting(generator, flags_);
  const std::size_t words = flags_.size();
  counters_.column_words += words * static_cast<std::size_t>(generator.weight() + [&] {
                              int y = 0;  // a Y reads both of its qubit's columns
                              for (int i = 0; i < W; ++i) y += std::popcount(generator.x[i] & generator.z[i]);
                              return y;
                            }());
  std::size_t anticommuting = 0;
  for (std::uint64_t word : flags_) anticommuting += static_cast<std::size_t>(std::popcount(word));
  counters_.rows_visited += anticommuting;
  double dropped = test_unchanged ? test_unchanged_rows(flags_, truncation) : 0.0;
  // A new value for an existing row: kept, or zeroed and removed at the end of the layer.
  auto store = [&](std::size_t row, const C& value) {
    if (value != C(0.0) && (!test_terms || truncation.keep(keys_[row], value))) {
      coefficients_[row] = value;
      return;
    }
    dropped += magnitude_squared(value);
    coefficients_[row] = C(0.0);
    to_erase_.push_back(static_cast<std::uint32_t>(row));
  };
  auto add = [&](const PauliString<W>& key, const C& value) {
    if (value == C(0.0)) return;
    if (test_terms && !truncation.keep(key, value)) {
      dropped += magnitude_squared(value);
      return;
    }
    append(key, value);
  };
  if (sin_signed == 0.0) {
    // Key-preserving (a measurement's rotation form, or θ = 0 mod π): anticommuting rows × cos θ.
    column_detail::for_each_row(flags_, words,
                                [&](std::size_t r) { store(r, coefficients_[r] * cos_theta); });
    return dropped;
  }
  // The pair {v, w = v ⊕ g} is handled from v, the member without g's pivot bit (the first bit of g,
  // x before z), or from w when v is absent (the CPU engine's rule, docs/design.md §7.2).
  int pivot_word = 0;
  bool pivot_on_z = false;
  std::uint64_t pivot_bit = 0;
  for (int w = 0; w < W && pivot_bit == 0; ++w) {
    for (bool on_z : {false, true}) {
      const std::uint64_t word = on_z ? generator.z[w] : generator.x[w];
      if (word != 0 && pivot_bit == 0) {
        pivot_word = w;
        pivot_on_z = on_z;
        pivot_bit = word & (~word + 1);
      }
    }
  }
  // Both members of a pair anticommute with g, so the pairs are found among the rows just read: the
  // flipped side (with g's pivot bit) indexed by its partner v, then looked up from the unflipped side.
  // Each key is hashed as it is read here (the flipped ones as their partner), not in a second pass.
  // Without a branch on the pivot bit (a coin flip per row): each row is written to both sides and
  // one side's count advances; both sides hash v, the member without the pivot bit.
  unflipped_.resize(anticommuting);
  flipped_.resize(anticommuting);
  hashes_.resize(anticommuting);
  unflipped_hashes_.resize(anticommuting);
  std::size_t flipped_count = 0, unflipped_count = 0;
  column_detail::for_each_row(flags_, words, [&](std::size_t r) {
    const PauliString<W>& key = keys_[r];
    const std::uint64_t side = ((pivot_on_z ? key.z[pivot_word] : key.x[pivot_word]) & pivot_bit) != 0;
    PauliString<W> v = key;
    for (int i = 0; i < W; ++i) {
      v.x[i] ^= generator.x[i] & (0 - side);
      v.z[i] ^= generator.z[i] & (0 - side);
    }
    const std::uint64_t h = key_hash(v);
    flipped_[flipped_count] = static_cast<std::uint32_t>(r);
    hashes_[flipped_count] = h;
    unflipped_[unflipped_count] = static_cast<std::uint32_t>(r);
    unflipped_hashes_[unflipped_count] = h;
    flipped_count += side;
    unflipped_count += 1 - side;
  });
  flipped_.resize(flipped_count);
  hashes_.resize(flipped_count);
  unflipped_.resize(unflipped_count);
  unflipped_hashes_.resize(unflipped_count);
  // The table outgrows the caches on large layers: each slot (then the key it names) is fetched a few
  // rows before it is read.
  constexpr std::size_t kAhead = 16;
  std::size_t capacity = 16;
  while (capacity < 2 * flipped_.size()) capacity <<= 1;
  pairing_.assign(capacity, Slot{});
  const std::size_t mask = capacity - 1;
  for (std::size_t i = 0; i < flipped_.size(); ++i) {
    if (i + kAhead < flipped_.size()) __builtin_prefetch(&pairing_[hashes_[i + kAhead] & mask], 1);
    std::size_t j = hashes_[i] & mask;
    while (pairing_[j].row_plus_one != 0) j = (j + 1) & mask;
    pairing_[j] = {flipped_[i] + 1, static_cast<std::uint32_t>(hashes_[i] >> 32)};
  }
  if (paired_.size() < keys_.size()) paired_.resize(keys_.size(), 0);
  const bool permutation = cos_theta == 0.0;
  // A row whose partner is absent: it keeps cos θ of its coefficient and the partner appears.
  auto alone = [&](std::size_t r) {
    const PauliString<W> key = keys_[r];
    const C c = coefficients_[r];
    const double sign = product_phase(generator, key) == 3 ? 1.0 : -1.0;
    C out_kept = C(0.0), out_new = C(0.0);
    out_kept += c * cos_theta;
    out_new += c * (sign * sin_signed);
    if (permutation && out_kept == C(0.0) && out_new != C(0.0) &&
        (!test_terms || truncation.keep(key ^ generator, out_new))) {
      move(r, generator, out_new);  // cos θ = 0: the row becomes its partner where it stands
      return;
    }
    store(r, out_kept);
    add(key ^ generator, out_new);
  };
  for (std::size_t i = 0; i < unflipped_.size(); ++i) {
    if (i + kAhead < unflipped_.size()) __builtin_prefetch(&pairing_[unflipped_hashes_[i + kAhead] & mask]);
    if (i + kAhead / 2 < unflipped_.size()) {
      const Slot ahead = pairing_[unflipped_hashes_[i + kAhead / 2] & mask];
      if (ahead.row_plus_one != 0) {
        __builtin_prefetch(&keys_[ahead.row_plus_one - 1]);
        __builtin_prefetch(&coefficients_[ahead.row_plus_one - 1]);
      }
    }
    const std::size_t r = unflipped_[i];
    const PauliString<W> v = keys_[r];
    const std::uint64_t h = unflipped_hashes_[i];
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    std::uint32_t found = 0;  // the partner's row + 1
    for (std::size_t j = h & mask; pairing_[j].row_plus_one != 0; j = (j + 1) & mask) {
      const Slot slot = pairing_[j];
      if (slot.tag == tag && (keys_[slot.row_plus_one - 1] ^ generator) == v) {
        found = slot.row_plus_one;
        break;
      }
    }
    if (found == 0) {
      alone(r);
      continue;
    }
    const std::size_t s = found - 1;
    paired_[s] = 1;
    // v = key, w = partner: out_v = cos·c_v + σ(w)·sin·c_w, out_w = cos·c_w + σ(v)·sin·c_v.
    const double sign = product_phase(generator, v) == 3 ? 1.0 : -1.0;
    const C c = coefficients_[r], c_w = coefficients_[s];
    C out_v = C(0.0), out_w = C(0.0);
    out_v += c * cos_theta;
    out_v += c_w * (-sign * sin_signed);
    out_w += c_w * cos_theta;
    out_w += c * (sign * sin_signed);
    store(r, out_v);
    store(s, out_w);
  }
  for (const std::uint32_t r : flipped_) {
    if (paired_[r]) {
      paired_[r] = 0;
    } else {
      alone(r);
    }
  }
  return dropped;
}

template <int W, Coefficient C>
double ColumnEngine<W, C>::local_layer(const PreparedChannel<W>& table, const Truncation& truncation,
                                       bool test_unchanged) {
  const bool test_terms = truncation.has_term_test();
  const int dim = table.support_size == 2 ? 16 : 4;
  const PauliString<W> support = table.pattern_mask(dim - 1);  // Y on every support qubit
  // When I on the support maps to itself alone with amplitude 1, rows that are I there are unchanged
  // (unless another pattern feeds I); otherwise every row is an input.
  const bool identity_fixed = table.fanout[0] == 1 && table.outputs[0][0].pattern == 0 &&
                              table.outputs[0][0].amplitude == Complex(1.0);
  if (identity_fixed) {
    index_.touching(support, flags_);
    counters_.column_words += 2 * flags_.size() * static_cast<std::size_t>(table.support_size);
  } else {
    const auto live = index_.live_words();
    flags_.assign(live.begin(), live.end());
  }
  const std::size_t words = flags_.size();
  for (std::uint64_t word : flags_) counters_.rows_visited += static_cast<std::uint64_t>(std::popcount(word));
  double dropped = 0.0;
  auto store = [&](std::size_t row, const C& value) {
    if (value != C(0.0) && (!test_terms || truncation.keep(keys_[row], value))) {
      coefficients_[row] = value;
      return;
    }
    dropped += magnitude_squared(value);
    coefficients_[row] = C(0.0);
    to_erase_.push_back(static_cast<std::uint32_t>(row));
  };

  if (table.table_class == TableClass::key_preserving) {
    if (test_unchanged) dropped += test_unchanged_rows(flags_, truncation);
    column_detail::for_each_row(flags_, words, [&](std::size_t r) {
      const int p = table.pattern_of(keys_[r]);
      // No output: the channel maps this Pauli to zero (removed, not counted as truncated).
      const C value = table.fanout[p] == 0
                          ? C(0.0)
                          : coefficients_[r] * column_detail::amplitude_in<C>(table.outputs[p][0].amplitude);
      store(r, value);
    });
    return dropped;
  }

  // Orbits: the inputs that agree off the support, by their key there (the base); outputs of an orbit
  // stay in it. incoming[q]: the inputs p reaching q, ascending by p ⊕ q (the delta index order in
  // which the reference engine sums an output).
  struct Incoming {
    int pattern;
    C amplitude;
  };
  std::array<std::vector<Incoming>, 16> incoming;
  for (int p = 0; p < dim; ++p) {
    for (int k = 0; k < table.fanout[p]; ++k) {
      const auto& o = table.outputs[p][k];
      incoming[o.pattern].push_back({p, column_detail::amplitude_in<C>(o.amplitude)});
    }
  }
  for (int q = 0; q < dim; ++q) {
    std::sort(incoming[q].begin(), incoming[q].end(),
              [q](const Incoming& a, const Incoming& b) { return (a.pattern ^ q) < (b.pattern ^ q); });
  }
  std::array<PauliString<W>, 16> masks;
  for (int p = 0; p < dim; ++p) masks[p] = table.pattern_mask(p);
  // An orbit keeps its members as a list of entries (row, pattern, input) threaded through one array:
  // a layer costs a few dozen bytes per row it reads whatever the support's size (the layer's transient
  // peak, which the memory budget counts: docs/design.md §7.5). Both arrays are reserved for every row
  // the columns flag, so they copy only when a non-unital channel's pass adds the rows that are I there.
  constexpr std::uint32_t kEnd = ~std::uint32_t{0};
  struct Orbit {
    PauliString<W> base;
    std::uint32_t present = 0;
    std::uint32_t first = kEnd;  // its first entry
  };
  struct Entry {
    std::uint32_t row;
    std::uint32_t next;  // the orbit's next entry, or kEnd
    C in;
    int pattern;
  };
  std::size_t flagged = 0;
  for (std::uint64_t word : flags_) flagged += static_cast<std::size_t>(std::popcount(word));
  std::vector<Orbit> orbits;
  std::vector<Entry> entries;
  orbits.reserve(flagged);
  entries.reserve(flagged);
  std::unordered_map<PauliString<W>, std::uint32_t> orbit_of;
  orbit_of.reserve(flagged);
  auto join = [&](Orbit& orbit, std::size_t r, int p) {
    orbit.present |= 1u << p;
    entries.push_back({static_cast<std::uint32_t>(r), orbit.first, coefficients_[r], p});
    orbit.first = static_cast<std::uint32_t>(entries.size() - 1);
  };
  column_detail::for_each_row(flags_, words, [&](std::size_t r) {
    const int p = table.pattern_of(keys_[r]);
    const auto [it, inserted] =
        orbit_of.try_emplace(keys_[r] ^ masks[p], static_cast<std::uint32_t>(orbits.size()));
    if (inserted) orbits.push_back(Orbit{keys_[r] ^ masks[p]});
    join(orbits[it->second], r, p);
  });
  // Rows that are I on the support join their orbit when another pattern feeds I (a non-unital
  // channel): found by one pass over the rows the columns did not flag.
  if (identity_fixed && incoming[0].size() > 1 && !orbits.empty()) {
    const std::vector<std::uint64_t> touched = flags_;
    const auto live = index_.live_words();
    for (std::size_t w = 0; w < live.size(); ++w) {
      for (std::uint64_t word = live[w] & ~touched[w]; word != 0; word &= word - 1) {
        const std::size_t r = 64 * w + static_cast<std::size_t>(std::countr_zero(word));
        const auto it = orbit_of.find(keys_[r]);
        if (it == orbit_of.end()) continue;
        join(orbits[it->second], r, 0);
        flags_[w] |= std::uint64_t{1} << (r % 64);
      }
    }
  }
  if (test_unchanged) dropped += test_unchanged_rows(flags_, truncation);
  std::array<std::uint32_t, 16> rows{};
  std::array<C, 16> in{};
  for (const Orbit& orbit : orbits) {
    for (std::uint32_t e = orbit.first; e != kEnd; e = entries[e].next) {
      rows[entries[e].pattern] = entries[e].row;
      in[entries[e].pattern] = entries[e].in;
    }
    for (int q = 0; q < dim; ++q) {
      C total = C(0.0);
      bool reached = false;
      for (const Incoming& from : incoming[q]) {
        if (!((orbit.present >> from.pattern) & 1)) continue;
        const C term = in[from.pattern] * from.amplitude;
        total = reached ? total + term : term;
        reached = true;
      }
      if ((orbit.present >> q) & 1) {
        store(rows[q], total);  // zero when nothing reaches q: removed, not counted
      } else if (reached && total != C(0.0)) {
        const PauliString<W> key = orbit.base ^ masks[q];
        if (test_terms && !truncation.keep(key, total)) {
          dropped += magnitude_squared(total);
        } else {
          append(key, total);
        }
      }
    }
  }
  return dropped;
}

// ---- ColumnEngine: layer passes, export, invariants ----

/// The layer-pass target (see Truncation::finalize_layer_on) over the live rows.
template <int W, Coefficient C>
class ColumnEngine<W, C>::PassTarget {
 public:
  explicit PassTarget(ColumnEngine& engine) : engine_(engine) {}
  std::size_t size() const { return engine_.live_rows_; }
  std::vector<double> magnitudes_squared(bool key_order) {
    order_.clear();
    for (std::size_t r = 0; r < engine_.keys_.size(); ++r) {
      if (engine_.index_.live(r)) order_.push_back(r);
    }
    if (key_order) {
      std::sort(order_.begin(), order_.end(),
                [this](std::size_t a, std::size_t b) { return engine_.keys_[a] < engine_.keys_[b]; });
    }
    std::vector<double> magnitudes(order_.size());
    for (std::size_t i = 0; i < order_.size(); ++i)
      magnitudes[i] = magnitude_squared(engine_.coefficients_[order_[i]]);
    return magnitudes;
  }
  void retain(std::span<const char> keep) {
    for (std::size_t i = 0; i < order_.size(); ++i) {
      if (!keep[i]) engine_.erase(order_[i]);
    }
  }
  void collapse_to(std::size_t index) {
    const PauliString<W> key = engine_.keys_[order_[index]];
    engine_.keys_.clear();
    engine_.coefficients_.clear();
    engine_.index_.clear();
    engine_.live_rows_ = 0;
    engine_.indexed_rows_ = 0;
    engine_.append(key, C(1.0));
    engine_.index_appended();
  }

 private:
  ColumnEngine& engine_;
  std::vector<std::size_t> order_;  // row of the i-th magnitude
};

template <int W, Coefficient C>
LayerPassResult ColumnEngine<W, C>::finalize_layer(const Truncation& truncation) {
  if (!truncation.has_layer_pass()) return {};
  PassTarget target(*this);
  const LayerPassResult result = truncation.finalize_layer_on(target);
  compact_if_sparse();
  return result;
}

template <int W, Coefficient C>
void ColumnEngine<W, C>::export_to(PauliSum<W, C>& sum) const {
  // Live rows hold distinct nonzero keys: placed by bucket straight into the sum's columns (a counting
  // sort), each bucket then sorted by key where it stands, and the columns adopted as they are.
  const int bits =
      std::max(PauliSum<W, C>::bits_to_fit(live_rows_, options_.target_bucket_len, options_.min_buckets),
               sum.bucket_bits());
  const BucketHash<W>& hash = sum.hash();
  std::vector<std::uint32_t> bucket(keys_.size());
  std::vector<std::size_t> offsets((std::size_t{1} << bits) + 1, 0);
  for (std::size_t r = 0; r < keys_.size(); ++r) {
    if (!index_.live(r)) continue;
    bucket[r] = static_cast<std::uint32_t>(hash(keys_[r], bits));
    ++offsets[bucket[r] + 1];
  }
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  typename PauliSum<W, C>::KeyColumn keys(live_rows_);  // every row written below
  typename PauliSum<W, C>::CoefficientColumn coefficients(live_rows_);
  {
    std::vector<std::size_t> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t r = 0; r < keys_.size(); ++r) {
      if (!index_.live(r)) continue;
      const std::size_t t = next[bucket[r]]++;
      keys[t] = keys_[r];
      coefficients[t] = coefficients_[r];
    }
  }
  KeySorter<PauliString<W>, C> sorter;
  for (std::size_t b = 0; b + 1 < offsets.size(); ++b)
    sorter.sort(keys.data() + offsets[b], coefficients.data() + offsets[b], offsets[b + 1] - offsets[b]);
  sum.assign_canonical(std::move(keys), std::move(coefficients), std::move(offsets), bits);
}

template <int W, Coefficient C>
void ColumnEngine<W, C>::check_invariants() const {
  auto fail = [](const std::string& what) { throw std::logic_error("ColumnEngine: " + what); };
  if (coefficients_.size() != keys_.size()) fail("keys and coefficients differ in length");
  std::size_t live = 0;
  for (std::size_t r = 0; r < keys_.size(); ++r) {
    const bool is_live = index_.live(r);
    if (!is_live) {
      if (coefficients_[r] != C(0.0)) fail("hole " + std::to_string(r) + " holds a coefficient");
      continue;
    }
    ++live;
    if (coefficients_[r] == C(0.0)) fail("row " + std::to_string(r) + " is live with a zero coefficient");
    for (std::size_t q = 0; q < ColumnIndex<W>::kQubits; ++q) {
      const int code = keys_[r].code(q);
      for (int plane = 0; plane < 2; ++plane) {
        const auto column = index_.column(q, plane);
        const bool bit = !column.empty() && (column[r / 64] >> (r % 64)) & 1;
        if (bit != (((code >> plane) & 1) != 0)) {
          fail("column (" + std::to_string(q) + ", " + (plane ? "z" : "x") + ") wrong at row " +
               std::to_string(r));
        }
      }
    }
  }
  if (live != live_rows_)
    fail("live count " + std::to_string(live_rows_) + " but " + std::to_string(live) + " live rows");
  // No row beyond the rows array is live or has column bits.
  for (std::size_t r = keys_.size(); r < 64 * index_.words(); ++r) {
    if (index_.live(r)) fail("row " + std::to_string(r) + " past the rows is live");
  }
  std::vector<PauliString<W>> keys;
  for (std::size_t r = 0; r < keys_.size(); ++r) {
    if (index_.live(r)) keys.push_back(keys_[r]);
  }
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) fail("a key is held by two rows");
}

}  // namespace paulistrings
