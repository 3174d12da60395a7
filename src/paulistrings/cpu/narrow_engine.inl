// Template bodies of NarrowEngine (included by narrow_engine.h).

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "paulistrings/core/key_sorter.h"
#include "paulistrings/core/parallel_errors.h"

namespace paulistrings {
namespace narrow_detail {

template <class E>
struct EngineWidth;
template <int V, Coefficient C>
struct EngineWidth<CpuEngine<V, C>> : std::integral_constant<int, V> {};

/// The narrowest width of 1, 2, 4, 8, 16 words (at most W) whose keys hold `labels` qubits.
template <int W>
int width_for(std::size_t labels) {
  int v = 1;
  while (v < W && 64 * static_cast<std::size_t>(v) < labels) v *= 2;
  return v;
}

/// f(std::integral_constant<int, V>{}) for the runtime width v ∈ {1, 2, 4, 8, 16}, v ≤ W.
template <int W, class F>
decltype(auto) with_width(int v, F&& f) {
  if constexpr (W >= 16) {
    if (v == 16) return f(std::integral_constant<int, 16>{});
  }
  if constexpr (W >= 8) {
    if (v == 8) return f(std::integral_constant<int, 8>{});
  }
  if constexpr (W >= 4) {
    if (v == 4) return f(std::integral_constant<int, 4>{});
  }
  if constexpr (W >= 2) {
    if (v == 2) return f(std::integral_constant<int, 2>{});
  }
  return f(std::integral_constant<int, 1>{});
}

/// Byte tables over the labels of a V-word plane (bit l = label l): the entry of byte position p and value
/// b is the OR of value_of(l) over the labels l = 8p + i whose bit i is set in b. A plane's value then
/// costs one lookup and one OR per nonzero byte, not one operation per set bit. Value: a 64-bit word or
/// an array of them.
template <int V, class Value>
class LabelByteTables {
 public:
  /// value_of(l) for every label l < 8 · entries(labels) / 256 (zero for a label on no key).
  template <class ValueOf>
  LabelByteTables(std::size_t labels, ValueOf&& value_of) : positions_(positions(labels)), table_(positions_ * 256) {
    for (std::size_t p = 0; p < positions_; ++p) {
      Value* entries = table_.data() + 256 * p;
      for (unsigned b = 1; b < 256; ++b) {
        entries[b] = entries[b & (b - 1)];  // the value without its lowest bit, filled before b
        or_into(entries[b], value_of(8 * p + static_cast<std::size_t>(std::countr_zero(b))));
      }
    }
  }
  /// Entries in the tables for `labels` labels (a caller compares them with the keys it will look up).
  static std::size_t entries(std::size_t labels) { return 256 * positions(labels); }
  Value operator()(const std::array<std::uint64_t, V>& plane) const {
    Value out{};
    for (int v = 0; v < V; ++v) {
      std::size_t p = 8 * static_cast<std::size_t>(v);
      for (std::uint64_t word = plane[static_cast<std::size_t>(v)]; word != 0; word >>= 8, ++p) {
        if ((word & 0xff) != 0) or_into(out, table_[256 * p + (word & 0xff)]);
      }
    }
    return out;
  }

 private:
  static std::size_t positions(std::size_t labels) { return (std::min(labels, std::size_t{64} * V) + 7) / 8; }
  static void or_into(std::uint64_t& to, std::uint64_t from) { to |= from; }
  template <std::size_t N>
  static void or_into(std::array<std::uint64_t, N>& to, const std::array<std::uint64_t, N>& from) {
    for (std::size_t w = 0; w < N; ++w) to[w] |= from[w];
  }
  std::size_t positions_;
  std::vector<Value> table_;
};

/// Widens keys of V words whose bit l is label l to W words with each label at its qubit.
template <int V, int W>
class LabelWidener {
 public:
  /// qubit_of[l]: the qubit of label l, or `free` (such a label is on no key: its bits map nowhere).
  LabelWidener(const std::vector<Qubit>& qubit_of, Qubit free)
      : tables_(qubit_of.size(), [&](std::size_t label) {
          Plane bit{};
          if (label < qubit_of.size() && qubit_of[label] != free)
            bit[qubit_of[label] / 64] |= std::uint64_t{1} << (qubit_of[label] % 64);
          return bit;
        }) {}
  /// Entries in the tables for `labels` labels (a caller compares them with the keys it will widen).
  static std::size_t entries(std::size_t labels) { return Tables::entries(labels); }
  PauliString<W> operator()(const PauliString<V>& key) const {
    PauliString<W> out;
    out.x = tables_(key.x);
    out.z = tables_(key.z);
    return out;
  }

 private:
  using Plane = std::array<std::uint64_t, W>;
  using Tables = LabelByteTables<V, Plane>;
  Tables tables_;
};

/// Ranks of narrowed keys that order them as their widened keys compare, for at most 64 labels in use.
/// The full-width order compares the x plane before the z plane, and within a plane an earlier word
/// before a later one and a higher bit before a lower one. Label l gets the position p(l) of its qubit in
/// that order among the L labels in use, and a plane's value has bit L − 1 − p(l) for each label set in
/// it; a key's rank is x value · 2^L + z value (2L ≤ 128 bits). Every qubit without a label is the
/// identity on every key, so ranks compare as the widened keys do.
template <int V>
class LabelRanker {
 public:
  struct Rank {
    std::uint64_t high, low;
  };
  /// Whether ranks fit: at most 64 labels in use.
  static bool fits(const std::vector<Qubit>& qubit_of, Qubit free) { return in_use(qubit_of, free) <= 64; }
  LabelRanker(const std::vector<Qubit>& qubit_of, Qubit free)
      : labels_(static_cast<int>(in_use(qubit_of, free))),
        tables_(qubit_of.size(), [bits = rank_bits(qubit_of, free)](std::size_t label) {
          return label < bits.size() ? bits[label] : std::uint64_t{0};
        }) {}
  /// Bits of a rank: 2L.
  int bits() const { return 2 * labels_; }
  Rank operator()(const PauliString<V>& key) const {
    const std::uint64_t x = tables_(key.x), z = tables_(key.z);
    if (labels_ == 64) return {x, z};
    if (labels_ == 0) return {0, 0};
    return {x >> (64 - labels_), (x << labels_) | z};
  }

 private:
  static std::size_t in_use(const std::vector<Qubit>& qubit_of, Qubit free) {
    return static_cast<std::size_t>(
        std::count_if(qubit_of.begin(), qubit_of.end(), [&](Qubit q) { return q != free; }));
  }
  /// Per label: its bit in a plane's value (0 for a free label).
  static std::vector<std::uint64_t> rank_bits(const std::vector<Qubit>& qubit_of, Qubit free) {
    std::vector<std::size_t> order;  // labels in use, by their qubits' place in the full-width order
    for (std::size_t l = 0; l < qubit_of.size() && l < std::size_t{64} * V; ++l) {
      if (qubit_of[l] != free) order.push_back(l);
    }
    const auto weight = [&](std::size_t l) { return (qubit_of[l] / 64) * 64 + (63 - qubit_of[l] % 64); };
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weight(a) < weight(b); });
    std::vector<std::uint64_t> bits(qubit_of.size(), 0);
    for (std::size_t p = 0; p < order.size(); ++p) bits[order[p]] = std::uint64_t{1} << (order.size() - 1 - p);
    return bits;
  }
  int labels_;
  LabelByteTables<V, std::uint64_t> tables_;
};

/// An item to sort by rank: the rank and where its term is.
struct Ranked {
  std::uint64_t high, low;
  std::uint32_t index;
};

/// Sorts `items` ascending by (high, low), of which only the low `bits` bits may differ: least
/// significant byte first, a pass per byte (a byte equal in every item costs its count only), stable.
/// `scratch` is the second buffer.
inline void radix_sort(std::vector<Ranked>& items, std::vector<Ranked>& scratch, int bits) {
  const std::size_t n = items.size();
  if (n < 2) return;
  scratch.resize(n);
  for (int digit = 0; 8 * digit < bits; ++digit) {
    const auto byte_of = [digit](const Ranked& item) {
      const std::uint64_t word = digit < 8 ? item.low : item.high;
      return static_cast<std::size_t>((word >> (8 * (digit % 8))) & 0xff);
    };
    std::array<std::size_t, 256> count{};
    for (const Ranked& item : items) ++count[byte_of(item)];
    if (count[byte_of(items[0])] == n) continue;
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    for (const Ranked& item : items) scratch[count[byte_of(item)]++] = item;
    items.swap(scratch);
  }
}

}  // namespace narrow_detail

template <int W, Coefficient C>
NarrowEngine<W, C>::NarrowEngine(const PauliSum<W, C>& sum, const CpuEngineOptions& options)
    : options_(options),
      num_qubits_(sum.num_qubits()),
      hash_(sum.hash()),
      label_of_(PauliString<W>::kMaxQubits, -1),
      engine_(first_engine(sum)) {}

template <int W, Coefficient C>
typename NarrowEngine<W, C>::Engines NarrowEngine<W, C>::first_engine(const PauliSum<W, C>& sum) {
  // Labels in ascending qubit order: the union of every key's factors.
  PauliString<W> used;
  for (const auto& key : sum.keys()) {
    for (int i = 0; i < W; ++i) used.x[i] |= key.x[i] | key.z[i];
  }
  for_each_factor<W>(used, [&](Qubit q) {
    label_of_[q] = static_cast<std::int32_t>(qubit_of_.size());
    qubit_of_.push_back(q);
  });
  in_use_ = qubit_of_.size();
  return narrow_detail::with_width<W>(narrow_detail::width_for<W>(qubit_of_.size()), [&](auto v) -> Engines {
    constexpr int V = decltype(v)::value;
    typename PauliSum<V, C>::KeyColumn keys;
    keys.reserve(sum.size());
    for (const auto& key : sum.keys()) keys.push_back(narrow<V>(key));
    typename PauliSum<V, C>::CoefficientColumn coefficients(sum.coefficients().begin(),
                                                            sum.coefficients().end());
    PauliSum<V, C> narrowed(64 * static_cast<std::size_t>(V), narrow_hash<V>());
    narrowed.assign_distinct_columns(std::move(keys), std::move(coefficients), sum.bucket_bits(),
                                     options_.threads > 0 ? options_.threads : available_cpus());
    return Engines(std::in_place_type<CpuEngine<V, C>>, narrowed, options_);
  });
}

template <int W, Coefficient C>
template <int V>
void NarrowEngine<W, C>::start(const PauliSum<V, C>& sum) {
  engine_.template emplace<CpuEngine<V, C>>(sum, options_);
}

template <int W, Coefficient C>
template <int V>
BucketHash<V> NarrowEngine<W, C>::narrow_hash() const {
  BucketHash<V> hash(hash_.seed());  // the columns of free labels are never used: they stay as they are
  for (std::size_t l = 0; l < qubit_of_.size() && l < 64 * static_cast<std::size_t>(V); ++l) {
    if (qubit_of_[l] != kNoQubit) hash.copy_column(l, hash_, qubit_of_[l]);
  }
  return hash;
}

template <int W, Coefficient C>
template <int U, int V, class Map>
PauliSum<U, C> NarrowEngine<W, C>::copy_out(const CpuEngine<V, C>& engine, std::size_t num_qubits,
                                            const BucketHash<U>& hash, Map&& map,
                                            const narrow_detail::LabelRanker<V>* ranker) const {
  const int bits = engine.bucket_bits();
  const std::size_t buckets = std::size_t{1} << bits;
  const bool parallel = engine.threads() > 1 && engine.size() >= (std::size_t{1} << 16);
  std::vector<std::size_t> offsets(buckets + 1, 0);
#pragma omp parallel for schedule(static) num_threads(engine.threads()) if (parallel)
  for (std::size_t b = 0; b < buckets; ++b) {
    std::size_t count = 0;
    engine.for_each_term_of_bucket(b, [&](const PauliString<V>&, const C& c) { count += c != C(0.0) ? 1 : 0; });
    offsets[b + 1] = count;
  }
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  // Unwritten until each bucket's terms are written below (in parallel: each page's first touch there).
  typename PauliSum<U, C>::KeyColumn keys(offsets.back());
  typename PauliSum<U, C>::CoefficientColumn coefficients(offsets.back());
  ParallelErrors errors;  // std::bad_alloc of a bucket's sort must not leave the region
#pragma omp parallel num_threads(engine.threads()) if (parallel)
  {
    KeySorter<PauliString<U>, C> sorter;
    std::vector<narrow_detail::Ranked> ranked, scratch;
    std::vector<std::pair<const PauliString<V>*, C>> terms;
#pragma omp for schedule(dynamic, 64)
    for (std::size_t b = 0; b < buckets; ++b) {
      if (errors.failed()) continue;
      try {
        std::size_t at = offsets[b];
        if (ranker != nullptr) {  // sorted by rank, then mapped in that order
          ranked.clear();
          terms.clear();
          engine.for_each_term_of_bucket(b, [&](const PauliString<V>& key, const C& c) {
            if (c == C(0.0)) return;
            const auto rank = (*ranker)(key);
            ranked.push_back({rank.high, rank.low, static_cast<std::uint32_t>(terms.size())});
            terms.emplace_back(&key, c);
          });
          narrow_detail::radix_sort(ranked, scratch, ranker->bits());
          for (const narrow_detail::Ranked& item : ranked) {
            keys[at] = map(*terms[item.index].first);
            coefficients[at] = terms[item.index].second;
            ++at;
          }
          continue;
        }
        engine.for_each_term_of_bucket(b, [&](const PauliString<V>& key, const C& c) {
          if (c == C(0.0)) return;
          keys[at] = map(key);
          coefficients[at] = c;
          ++at;
        });
        sorter.sort(keys.data() + offsets[b], coefficients.data() + offsets[b], offsets[b + 1] - offsets[b]);
      } catch (...) {
        errors.capture();
      }
    }
  }
  errors.rethrow();
  PauliSum<U, C> out(num_qubits, hash);
  out.assign_canonical(std::move(keys), std::move(coefficients), std::move(offsets), bits);
  return out;
}

template <int W, Coefficient C>
template <int V>
PauliString<V> NarrowEngine<W, C>::narrow(const PauliString<W>& key) const {
  PauliString<V> out;
  for_each_factor<W>(key, [&](Qubit q) {
    out.set_code(static_cast<std::size_t>(label_of_[q]), key.code(q));
  });
  return out;
}

template <int W, Coefficient C>
template <int V>
PauliString<W> NarrowEngine<W, C>::widen(const PauliString<V>& key) const {
  PauliString<W> out;
  for_each_factor<V>(key, [&](Qubit label) { out.set_code(qubit_of_[label], key.code(label)); });
  return out;
}

template <int W, Coefficient C>
template <int V>
PreparedChannel<V> NarrowEngine<W, C>::narrow(const PreparedChannel<W>& table) const {
  PreparedChannel<V> out;
  out.form = table.form == PreparedChannel<W>::Form::rotation ? PreparedChannel<V>::Form::rotation
                                                               : PreparedChannel<V>::Form::local;
  out.table_class = table.table_class;
  out.complex_amplitudes = table.complex_amplitudes;
  out.max_fanout = table.max_fanout;
  out.support_size = table.support_size;
  for (int i = 0; i < table.support_size; ++i) {
    out.qubits[static_cast<std::size_t>(i)] =
        static_cast<Qubit>(label_of_[table.qubits[static_cast<std::size_t>(i)]]);
  }
  out.fanout = table.fanout;
  for (std::size_t in = 0; in < table.outputs.size(); ++in) {
    for (std::size_t k = 0; k < table.outputs[in].size(); ++k) {
      const auto& o = table.outputs[in][k];
      out.outputs[in][k] = {o.pattern, o.delta_index, o.amplitude};
    }
  }
  out.delta_patterns = table.delta_patterns;
  out.deltas.reserve(table.deltas.size());
  for (const auto& delta : table.deltas) out.deltas.push_back(narrow<V>(delta));
  out.generator = narrow<V>(table.generator);
  out.cos_theta = table.cos_theta;
  out.sin_signed = table.sin_signed;
  return out;
}

template <int W, Coefficient C>
int NarrowEngine<W, C>::width() const {
  return std::visit([](const auto& e) { return narrow_detail::EngineWidth<std::decay_t<decltype(e)>>::value; },
                    engine_);
}

template <int W, Coefficient C>
std::size_t NarrowEngine<W, C>::size() const {
  return std::visit([](const auto& e) { return e.size(); }, engine_);
}

template <int W, Coefficient C>
void NarrowEngine<W, C>::label(const PauliString<W>& mask) {
  for_each_factor<W>(mask, [&](Qubit q) {
    if (label_of_[q] >= 0) return;
    std::int32_t l;
    if (free_labels_.empty()) {
      l = static_cast<std::int32_t>(qubit_of_.size());
      qubit_of_.push_back(q);
    } else {
      l = free_labels_.back();
      free_labels_.pop_back();
      qubit_of_[static_cast<std::size_t>(l)] = q;
    }
    label_of_[q] = l;
    ++in_use_;
    std::visit(
        [&](auto& engine) {
          constexpr int V = narrow_detail::EngineWidth<std::decay_t<decltype(engine)>>::value;
          // A label past the engine's width comes with the wider engine below, its hash made whole.
          if (static_cast<std::size_t>(l) < 64 * static_cast<std::size_t>(V)) engine.copy_hash_column(l, hash_, q);
        },
        engine_);
  });
  const int needed = narrow_detail::width_for<W>(qubit_of_.size());
  if (needed <= width()) return;
  // Widen: the keys keep their labels and gain words (one pass over the sum, at most log2 W times a run),
  // and their buckets: the wider hash agrees with the engine's on every label the keys use.
  std::visit(
      [&](auto& engine) {
        constexpr int V = narrow_detail::EngineWidth<std::decay_t<decltype(engine)>>::value;
        narrow_detail::with_width<W>(needed, [&](auto v) {
          constexpr int U = decltype(v)::value;
          if constexpr (U > V) {
            start<U>(copy_out<U>(engine, 64 * static_cast<std::size_t>(U), narrow_hash<U>(),
                                 [&](const PauliString<V>& key) {
                                   PauliString<U> wide;
                                   for (int i = 0; i < V; ++i) {
                                     wide.x[i] = key.x[i];
                                     wide.z[i] = key.z[i];
                                   }
                                   return wide;
                                 }));
          }
        });
      },
      engine_);
}

template <int W, Coefficient C>
bool NarrowEngine<W, C>::label_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  // The layer's support, and whether it can change a term that is the identity on all of it.
  PauliString<W> support;
  bool identity_fixed = true;
  if (table.form == PreparedChannel<W>::Form::rotation) {
    support = table.generator;  // the identity commutes with every generator
  } else {
    support = table.pattern_mask(table.support_size == 2 ? 15 : 3);
    identity_fixed = table.fanout[0] == 1 && table.outputs[0][0].pattern == 0 &&
                     table.outputs[0][0].amplitude == Complex(1.0);
  }
  bool touches = false;
  for_each_factor<W>(support, [&](Qubit q) { touches = touches || label_of_[q] >= 0; });
  const bool retest = tested_.must_retest(truncation);
  if (!touches && identity_fixed && !retest) return false;  // every term is the identity on the support
  // Terms that are not the identity on a labelled qubit of the support can gain factors on the rest
  // of it (and a layer that moves the identity gives every term factors there): label all of it.
  label(support);
  tested_.remember(truncation);
  return true;
}

template <int W, Coefficient C>
template <int V>
void NarrowEngine<W, C>::release_labels(const CpuEngine<V, C>& engine) {
  // A label outside the inner engine's light cone is on no key: its qubit gives it back, at no cost
  // (the light cone is exact after a rotation layer, a superset otherwise).
  const auto& cone = engine.light_cone();
  for (std::size_t l = 0; l < qubit_of_.size(); ++l) {
    const Qubit q = qubit_of_[l];
    if (q == kNoQubit || (cone[l / 64] >> (l % 64)) & 1) continue;
    label_of_[q] = -1;
    qubit_of_[l] = kNoQubit;
    free_labels_.push_back(static_cast<std::int32_t>(l));
    --in_use_;
  }
}

template <int W, Coefficient C>
double NarrowEngine<W, C>::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  if (!label_layer(table, truncation)) {
    ++skipped_layers_;
    return 0.0;
  }
  return std::visit(
      [&](auto& engine) {
        constexpr int V = narrow_detail::EngineWidth<std::decay_t<decltype(engine)>>::value;
        const double discarded = engine.apply_layer(narrow<V>(table), truncation);
        release_labels(engine);
        return discarded;
      },
      engine_);
}

template <int W, Coefficient C>
std::size_t NarrowEngine<W, C>::apply_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                                            std::span<BlockLayer> out) {
  // The layers that act go to the inner engine as one block; those on unlabelled qubits are skipped
  // here. Labelling stops at the first layer no block takes (the inner engine would stop there).
  // Nothing is labelled for a block the inner engine would not take (a new policy must first be
  // tested on every term by a layer).
  if (!std::visit([&](const auto& engine) { return engine.takes_blocks(truncation); }, engine_)) return 0;
  std::vector<std::size_t> acting;  // indices into tables
  std::size_t considered = 0;
  const std::size_t capacity = 64 * static_cast<std::size_t>(width());
  for (; considered < tables.size() && considered < out.size(); ++considered) {
    const PreparedChannel<W>& table = tables[considered];
    const bool rotation = table.form == PreparedChannel<W>::Form::rotation;
    if (!rotation && table.table_class == TableClass::general) break;  // no block takes a general local table
    // A block never widens the keys: the layers it looks ahead at could label qubits the inner engine
    // never reaches (it takes as many as its span allows); the layer path widens when it must.
    std::size_t unlabelled = 0;
    const PauliString<W> support =
        rotation ? table.generator : table.pattern_mask(table.support_size == 2 ? 15 : 3);
    for_each_factor<W>(support, [&](Qubit q) { unlabelled += label_of_[q] < 0 ? 1 : 0; });
    if (in_use_ + unlabelled > capacity) break;
    if (label_layer(table, truncation)) acting.push_back(considered);
  }
  if (acting.size() < 2) return 0;  // labels taken stay until the light cone gives them back
  const std::size_t terms_in = size();
  return std::visit(
      [&](auto& engine) -> std::size_t {
        constexpr int V = narrow_detail::EngineWidth<std::decay_t<decltype(engine)>>::value;
        std::vector<PreparedChannel<V>> narrowed;
        narrowed.reserve(acting.size());
        for (std::size_t i : acting) narrowed.push_back(narrow<V>(tables[i]));
        std::vector<BlockLayer> inner(acting.size());
        const std::size_t done = engine.apply_block(narrowed, truncation, inner);
        if (done == 0) return 0;
        // Layers up to the last acting one the inner engine took; a skipped one keeps the count.
        const std::size_t taken = acting[done - 1] + 1;
        std::size_t terms = terms_in;
        for (std::size_t i = 0, k = 0; i < taken; ++i) {
          if (k < done && acting[k] == i) {
            out[i] = inner[k++];
            terms = out[i].terms_out;
          } else {
            ++skipped_layers_;
            out[i] = {0.0, terms};
          }
        }
        release_labels(engine);
        return taken;
      },
      engine_);
}

template <int W, Coefficient C>
LayerPassResult NarrowEngine<W, C>::finalize_layer(const Truncation& truncation) {
  return std::visit([&](auto& engine) { return engine.finalize_layer(truncation); }, engine_);
}

template <int W, Coefficient C>
void NarrowEngine<W, C>::export_to(PauliSum<W, C>& sum) {
  std::visit(
      [&](auto& engine) {
        constexpr int V = narrow_detail::EngineWidth<std::decay_t<decltype(engine)>>::value;
        // The widener's tables pay for themselves when the keys outnumber their entries.
        if (engine.size() >= narrow_detail::LabelWidener<V, W>::entries(qubit_of_.size())) {
          // Buckets sorted by their keys' ranks where they fit (a radix sort), else by the widened keys.
          std::optional<narrow_detail::LabelRanker<V>> ranker;
          if (narrow_detail::LabelRanker<V>::fits(qubit_of_, kNoQubit)) ranker.emplace(qubit_of_, kNoQubit);
          sum = copy_out<W>(engine, num_qubits_, hash_, narrow_detail::LabelWidener<V, W>(qubit_of_, kNoQubit),
                            ranker ? &*ranker : nullptr);
        } else {
          sum = copy_out<W>(engine, num_qubits_, hash_, [&](const PauliString<V>& key) { return widen<V>(key); });
        }
      },
      engine_);
}

}  // namespace paulistrings
