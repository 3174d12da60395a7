// Template bodies of PauliSum<W, C> (included by pauli_sum.h).

#include <algorithm>
#include <numeric>
#include <stdexcept>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "paulistrings/core/key_sorter.h"
#include "paulistrings/core/parallel_errors.h"
#include "paulistrings/core/text.h"

namespace paulistrings {

template <int W, Coefficient C>
PauliSum<W, C>::PauliSum(std::size_t num_qubits, std::uint64_t hash_seed)
    : num_qubits_(num_qubits), hash_(hash_seed) {
  check_num_qubits(num_qubits);
  if (num_qubits > Key::kMaxQubits) throw_too_many_qubits_for_width(num_qubits, W);
}

template <int W, Coefficient C>
PauliSum<W, C>::PauliSum(std::size_t num_qubits, const BucketHash<W>& hash) : PauliSum(num_qubits, hash.seed()) {
  hash_ = hash;
}

template <int W, Coefficient C>
PauliSum<W, C> PauliSum<W, C>::from_labels(std::size_t num_qubits,
                                           std::span<const std::pair<std::string, C>> terms) {
  std::vector<Term> parsed;
  parsed.reserve(terms.size());
  for (const auto& [label, coefficient] : terms)
    parsed.push_back({Key::from_label(label, num_qubits), coefficient});
  return from_terms(num_qubits, std::move(parsed));
}

template <int W, Coefficient C>
PauliSum<W, C> PauliSum<W, C>::from_terms(std::size_t num_qubits, std::vector<Term> terms,
                                          std::uint64_t hash_seed) {
  PauliSum sum(num_qubits, hash_seed);
  for (const Term& term : terms) sum.validate_key(term.key);
  const std::size_t n = terms.size();
  sum.assign_terms(std::move(terms), bits_to_fit(n, 1024, 1));
  return sum;
}

template <int W, Coefficient C>
PauliSum<W, C> PauliSum<W, C>::from_arrays(std::size_t num_qubits, std::span<const std::uint64_t> x,
                                           std::span<const std::uint64_t> z, std::size_t words_per_row,
                                           std::span<const C> coefficients) {
  if (words_per_row < 1 || words_per_row > static_cast<std::size_t>(W)) {
    throw std::invalid_argument("from_arrays: rows have " + std::to_string(words_per_row) +
                                " words but this width holds 1 to " + std::to_string(W));
  }
  const std::size_t rows = coefficients.size();
  if (x.size() != rows * words_per_row || z.size() != rows * words_per_row) {
    throw std::invalid_argument("from_arrays: x has " + std::to_string(x.size()) + " and z has " +
                                std::to_string(z.size()) + " words, expected " + std::to_string(rows) +
                                " rows × " + std::to_string(words_per_row) + " words for " +
                                std::to_string(rows) + " coefficients");
  }
  PauliSum sum(num_qubits);
  std::vector<Term> terms(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t w = 0; w < words_per_row; ++w) {
      terms[r].key.x[w] = x[r * words_per_row + w];
      terms[r].key.z[w] = z[r * words_per_row + w];
    }
    terms[r].coefficient = coefficients[r];
    try {
      sum.validate_key(terms[r].key);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("from_arrays: row " + std::to_string(r) + ": " + e.what());
    }
  }
  sum.assign_terms(std::move(terms), bits_to_fit(rows, 1024, 1));
  return sum;
}

template <int W, Coefficient C>
void PauliSum<W, C>::validate_key(const Key& key) const {
  const std::size_t span = key.span();
  if (span > num_qubits_) {
    throw std::invalid_argument("Pauli string has a non-identity factor on qubit " +
                                std::to_string(span - 1) + ", out of range for " +
                                std::to_string(num_qubits_) + " qubits");
  }
}

template <int W, Coefficient C>
int PauliSum<W, C>::bits_to_fit(std::size_t terms, std::size_t target_bucket_len, std::size_t min_buckets) {
  if (target_bucket_len == 0) target_bucket_len = 1;
  int bits = 0;
  while (bits < kMaxBucketBits &&
         ((std::size_t{1} << bits) < min_buckets || terms > (target_bucket_len << bits))) {
    ++bits;
  }
  return bits;
}

namespace pauli_sum_detail {

inline constexpr int kIndexBits = 64 - kMaxBucketBits;
inline constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kIndexBits) - 1;

/// A parallel step's team: `threads`, or OpenMP's default for 0 (or less).
inline int team_size(int threads) {
#ifdef _OPENMP
  return threads > 0 ? threads : omp_get_max_threads();
#else
  return 1;
#endif
}

/// Records (bucket << kIndexBits | index) sorted by bucket, indices ascending within a bucket: an LSD
/// radix sort of 8-byte records (8-bit digits, 256 output streams a pass, stable), and the start of
/// every bucket; the records are made on up to `threads` threads (0: OpenMP's default). A fresh large
/// allocation is paid for page by page on first touch (slowly on the VMs we measure: docs/PERFORMANCE.md,
/// "2026-11-30 (morning)"), so this works on 8-byte records rather than on the terms themselves.
template <class BucketOf>
std::vector<std::uint64_t> order_by_bucket(std::size_t n, int bits, BucketOf&& bucket_of,
                                           std::vector<std::size_t>& start, int threads) {
  if (n >> kIndexBits) throw std::length_error("a Pauli sum holds at most 2^34 terms");
  std::vector<std::uint64_t> order(n), scratch(n);
#pragma omp parallel for schedule(static) num_threads(team_size(threads)) if (n >= (std::size_t{1} << 16))
  for (std::size_t i = 0; i < n; ++i) order[i] = (static_cast<std::uint64_t>(bucket_of(i)) << kIndexBits) | i;
  for (int shift = kIndexBits; shift < kIndexBits + bits; shift += 8) {
    std::size_t count[257] = {};
    for (std::uint64_t v : order) ++count[((v >> shift) & 0xff) + 1];
    std::partial_sum(count, count + 257, count);
    for (std::uint64_t v : order) scratch[count[(v >> shift) & 0xff]++] = v;
    order.swap(scratch);
  }
  start.assign((std::size_t{1} << bits) + 1, 0);
  for (std::uint64_t v : order) ++start[(v >> kIndexBits) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  return order;
}

}  // namespace pauli_sum_detail

template <int W, Coefficient C>
void PauliSum<W, C>::assign_terms(std::vector<Term>&& terms, int bits, int threads) {
  // Order by bucket (pauli_sum_detail::order_by_bucket), then per bucket: gather its terms in input
  // order, sort them by key (stable: equal keys are summed in input order, whatever the thread count),
  // sum runs of equal keys, drop exact zeros. Buckets are independent and run in parallel for large
  // inputs: several times faster than one indirect stable_sort over all terms (docs/PERFORMANCE.md,
  // "2026-11-30 (morning) — GPU join without a count pass; sm_90 build", the download).
  using namespace pauli_sum_detail;
  bits = std::max(bits, bucket_bits_);
  const std::size_t n = terms.size();
  const std::size_t buckets = std::size_t{1} << bits;
  std::vector<std::size_t> start;
  const std::vector<std::uint64_t> order =
      order_by_bucket(n, bits, [&](std::size_t i) { return hash_(terms[i].key, bits); }, start, threads);
  keys_.resize(n);
  coefficients_.resize(n);
  std::vector<std::size_t> kept(buckets + 1, 0);
  ParallelErrors errors;  // an exception must not leave the parallel region (std::bad_alloc of a run)
#pragma omp parallel num_threads(team_size(threads)) if (n >= (std::size_t{1} << 16))
  {
    std::vector<Term> run;
#pragma omp for schedule(dynamic, 64)
    for (std::size_t b = 0; b < buckets; ++b) {
      if (errors.failed()) continue;
      try {
        run.clear();
        for (std::size_t k = start[b]; k < start[b + 1]; ++k) run.push_back(terms[order[k] & kIndexMask]);
        std::stable_sort(run.begin(), run.end(), [](const Term& a, const Term& c) { return a.key < c.key; });
        std::size_t out = start[b];
        for (auto it = run.begin(); it != run.end();) {
          C total = it->coefficient;
          const Key key = it->key;
          for (++it; it != run.end() && it->key == key; ++it) total += it->coefficient;
          if (total != C(0.0)) {
            keys_[out] = key;
            coefficients_[out] = total;
            ++out;
          }
        }
        kept[b + 1] = out - start[b];
      } catch (...) {
        errors.capture();
      }
    }
  }
  errors.rethrow();
  terms = {};
  // Close the gaps left by merged keys and zeros (moves only ever go left).
  std::partial_sum(kept.begin(), kept.end(), kept.begin());
  for (std::size_t b = 0; b < buckets && kept[buckets] != n; ++b) {
    if (kept[b] == start[b]) continue;
    const std::size_t len = kept[b + 1] - kept[b];
    std::copy_n(keys_.begin() + static_cast<std::ptrdiff_t>(start[b]), len,
                keys_.begin() + static_cast<std::ptrdiff_t>(kept[b]));
    std::copy_n(coefficients_.begin() + static_cast<std::ptrdiff_t>(start[b]), len,
                coefficients_.begin() + static_cast<std::ptrdiff_t>(kept[b]));
  }
  keys_.resize(kept[buckets]);
  coefficients_.resize(kept[buckets]);
  bucket_bits_ = bits;
  bucket_offsets_ = std::move(kept);
  debug_check();
}

template <int W, Coefficient C>
void PauliSum<W, C>::sort_bucket_ranges(KeyColumn& keys, CoefficientColumn& coefficients,
                                        const std::vector<std::size_t>& start, int threads) {
  const std::size_t buckets = start.size() - 1;
  const std::size_t n = keys.size();
  threads = pauli_sum_detail::team_size(threads);
  ParallelErrors errors;  // std::bad_alloc of a bucket's scratch must not leave the region
#pragma omp parallel num_threads(threads) if (threads > 1 && n >= (std::size_t{1} << 16))
  {
    KeySorter<Key, C> sorter;
#pragma omp for schedule(dynamic, 64)
    for (std::size_t b = 0; b < buckets; ++b) {
      if (errors.failed()) continue;
      try {
        sorter.sort(keys.data() + start[b], coefficients.data() + start[b], start[b + 1] - start[b]);
      } catch (...) {
        errors.capture();
      }
    }
  }
  errors.rethrow();
}

template <int W, Coefficient C>
void PauliSum<W, C>::assign_distinct_columns(KeyColumn&& keys, CoefficientColumn&& coefficients, int bits,
                                             int threads) {
  // In place: zeros compacted away, the columns permuted into bucket order by following the
  // permutation's cycles, then each bucket sorted by key where it stands, and the columns adopted as
  // the sum's own. Extra memory: 24 bytes a term, plus a bucket's worth per thread. Sorting after the
  // move keeps a bucket's keys in cache while it is sorted; sorting indices into the unmoved columns
  // read two random keys per comparison.
  using namespace pauli_sum_detail;
  check_column_lengths("assign_distinct_columns", keys, coefficients);
  std::size_t n = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (coefficients[i] == C(0.0)) continue;
    keys[n] = keys[i];
    coefficients[n] = coefficients[i];
    ++n;
  }
  keys.resize(n);
  coefficients.resize(n);
  bits = std::max(bits, bucket_bits_);
  std::vector<std::size_t> start;
  {
    std::vector<std::uint64_t> order =
        order_by_bucket(n, bits, [&](std::size_t i) { return hash_(keys[i], bits); }, start, threads);
    // Position k receives term order[k]: follow each cycle once, marking the positions written.
    std::vector<bool> done(n, false);
    for (std::size_t k = 0; k < n; ++k) {
      if (done[k]) continue;
      const Key key = keys[k];
      const C coefficient = coefficients[k];
      std::size_t j = k;
      for (;;) {
        done[j] = true;
        const std::size_t from = static_cast<std::size_t>(order[j] & kIndexMask);
        if (from == k) {
          keys[j] = key;
          coefficients[j] = coefficient;
          break;
        }
        keys[j] = keys[from];
        coefficients[j] = coefficients[from];
        j = from;
      }
    }
  }
  sort_bucket_ranges(keys, coefficients, start, threads);
  assign_canonical(std::move(keys), std::move(coefficients), std::move(start), bits);
}

template <int W, Coefficient C>
void PauliSum<W, C>::assign_bucketed_columns(KeyColumn&& keys, CoefficientColumn&& coefficients,
                                             std::vector<std::size_t>&& start, int bits, int threads) {
  check_column_lengths("assign_bucketed_columns", keys, coefficients);
  if (bits < 0 || bits > kMaxBucketBits || start.size() != (std::size_t{1} << bits) + 1 ||
      start.front() != 0 || start.back() != keys.size() || !std::is_sorted(start.begin(), start.end())) {
    throw std::invalid_argument("assign_bucketed_columns: " + std::to_string(start.size()) +
                                " bucket offsets do not cover " + std::to_string(keys.size()) +
                                " terms in 2^" + std::to_string(bits) + " buckets");
  }
  sort_bucket_ranges(keys, coefficients, start, threads);
  assign_canonical(std::move(keys), std::move(coefficients), std::move(start), bits);
}

template <int W, Coefficient C>
void PauliSum<W, C>::check_column_lengths(const char* caller, const KeyColumn& keys,
                                          const CoefficientColumn& coefficients) {
  if (keys.size() != coefficients.size()) {
    throw std::invalid_argument(std::string(caller) + ": " + std::to_string(keys.size()) + " keys but " +
                                std::to_string(coefficients.size()) + " coefficients");
  }
}

template <int W, Coefficient C>
void PauliSum<W, C>::assign_canonical(KeyColumn&& keys, CoefficientColumn&& coefficients,
                                      std::vector<std::size_t>&& bucket_offsets, int bits) {
  keys_ = std::move(keys);
  coefficients_ = std::move(coefficients);
  bucket_offsets_ = std::move(bucket_offsets);
  bucket_bits_ = bits;
  debug_check();
}

template <int W, Coefficient C>
void PauliSum<W, C>::refine(int bits) {
  if (bits <= bucket_bits_) return;
  if (bits > kMaxBucketBits) bits = kMaxBucketBits;
  const std::size_t n = size();
  const std::size_t buckets = std::size_t{1} << bits;
  std::vector<std::uint32_t> bucket(n);
  std::vector<std::size_t> offsets(buckets + 1, 0);
  // A key of old bucket b keeps b as its low bits: only the hash rows the refinement adds are computed.
  const int old_bits = bucket_bits_;
  for (std::size_t b = 0; b + 1 < bucket_offsets_.size(); ++b) {
    for (std::size_t i = bucket_offsets_[b]; i < bucket_offsets_[b + 1]; ++i) {
      bucket[i] = static_cast<std::uint32_t>(b | (hash_.bits_between(keys_[i], old_bits, bits) << old_bits));
      ++offsets[bucket[i] + 1];
    }
  }
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  // A stable counting sort: each new bucket draws from one old bucket, so keys stay ascending.
  KeyColumn keys(n);
  CoefficientColumn coefficients(n);
  std::vector<std::size_t> cursor(offsets.begin(), offsets.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = cursor[bucket[i]]++;
    keys[at] = keys_[i];
    coefficients[at] = coefficients_[i];
  }
  assign_canonical(std::move(keys), std::move(coefficients), std::move(offsets), bits);
}

template <int W, Coefficient C>
void PauliSum<W, C>::refine_to_fit(std::size_t target_bucket_len, std::size_t min_buckets) {
  refine(bits_to_fit(size(), target_bucket_len, min_buckets));
}

template <int W, Coefficient C>
void PauliSum<W, C>::clear() {
  keys_.clear();
  coefficients_.clear();
  std::fill(bucket_offsets_.begin(), bucket_offsets_.end(), 0);
}

template <int W, Coefficient C>
void PauliSum<W, C>::drop_zeros() {
  std::size_t out = 0;
  std::size_t bucket_start = 0;
  for (std::size_t b = 0; b + 1 < bucket_offsets_.size(); ++b) {
    const std::size_t end = bucket_offsets_[b + 1];
    for (std::size_t i = bucket_start; i < end; ++i) {
      if (coefficients_[i] != C(0.0)) {
        keys_[out] = keys_[i];
        coefficients_[out] = coefficients_[i];
        ++out;
      }
    }
    bucket_start = end;
    bucket_offsets_[b + 1] = out;
  }
  keys_.resize(out);
  coefficients_.resize(out);
  debug_check();
}

template <int W, Coefficient C>
C PauliSum<W, C>::coefficient(const Key& key) const {
  const std::size_t b = bucket_of(key);
  const auto first = keys_.begin() + static_cast<std::ptrdiff_t>(bucket_offsets_[b]);
  const auto last = keys_.begin() + static_cast<std::ptrdiff_t>(bucket_offsets_[b + 1]);
  const auto it = std::lower_bound(first, last, key);
  if (it == last || *it != key) return C(0.0);
  return coefficients_[static_cast<std::size_t>(it - keys_.begin())];
}

template <int W, Coefficient C>
bool PauliSum<W, C>::contains(const Key& key) const {
  return coefficient(key) != C(0.0);
}

template <int W, Coefficient C>
double PauliSum<W, C>::norm_squared() const {
  double total = 0.0;
  for (const C& c : coefficients_) total += magnitude_squared(c);
  return total;
}

template <int W, Coefficient C>
std::vector<typename PauliSum<W, C>::Term> PauliSum<W, C>::sorted_terms() const {
  std::vector<Term> terms(size());
  for (std::size_t i = 0; i < size(); ++i) terms[i] = {keys_[i], coefficients_[i]};
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.key < b.key; });
  return terms;
}

template <int W, Coefficient C>
bool PauliSum<W, C>::sorted_terms_equal(const PauliSum& other) const {
  if (size() != other.size()) return false;
  const auto a = sorted_terms();
  const auto b = other.sorted_terms();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].coefficient != b[i].coefficient) return false;
  }
  return true;
}

template <int W, Coefficient C>
PauliSum<W, C>& PauliSum<W, C>::operator+=(const PauliSum& other) {
  if (other.num_qubits_ != num_qubits_) {
    throw std::invalid_argument("cannot add Pauli sums on " + std::to_string(num_qubits_) + " and " +
                                std::to_string(other.num_qubits_) + " qubits");
  }
  std::vector<Term> terms;
  terms.reserve(size() + other.size());
  for (std::size_t i = 0; i < size(); ++i) terms.push_back({keys_[i], coefficients_[i]});
  for (std::size_t i = 0; i < other.size(); ++i) terms.push_back({other.keys_[i], other.coefficients_[i]});
  const int bits = std::max({bucket_bits_, other.bucket_bits_, bits_to_fit(terms.size(), 1024, 1)});
  assign_terms(std::move(terms), bits);
  return *this;
}

template <int W, Coefficient C>
PauliSum<W, C>& PauliSum<W, C>::operator-=(const PauliSum& other) {
  PauliSum negated = other;
  negated *= C(-1.0);
  return *this += negated;
}

template <int W, Coefficient C>
PauliSum<W, C>& PauliSum<W, C>::operator*=(C scalar) {
  if (scalar == C(0.0)) {
    clear();
    return *this;
  }
  for (C& c : coefficients_) c *= scalar;
  drop_zeros();  // products may underflow to zero
  return *this;
}

template <int W, Coefficient C>
PauliSum<W, Complex> PauliSum<W, C>::to_complex() const {
  PauliSum<W, Complex> result(num_qubits_, hash_.seed());
  KeyColumn keys = keys_;
  typename PauliSum<W, Complex>::CoefficientColumn coefficients(coefficients_.begin(), coefficients_.end());
  std::vector<std::size_t> offsets = bucket_offsets_;
  result.assign_canonical(std::move(keys), std::move(coefficients), std::move(offsets), bucket_bits_);
  return result;
}

template <int W, Coefficient C>
PauliSum<W, double> PauliSum<W, C>::to_real() const {
  PauliSum<W, double> result(num_qubits_, hash_.seed());
  typename PauliSum<W, double>::CoefficientColumn coefficients(size());
  for (std::size_t i = 0; i < size(); ++i) {
    if constexpr (kIsComplex) {
      if (coefficients_[i].imag() != 0.0) {
        throw std::invalid_argument("cannot convert to real coefficients: term " + keys_[i].to_sparse_label() +
                                    " has imaginary part " + format_double(coefficients_[i].imag()));
      }
      coefficients[i] = coefficients_[i].real();
    } else {
      coefficients[i] = coefficients_[i];
    }
  }
  KeyColumn keys = keys_;
  std::vector<std::size_t> offsets = bucket_offsets_;
  result.assign_canonical(std::move(keys), std::move(coefficients), std::move(offsets), bucket_bits_);
  return result;
}

template <int W, Coefficient C>
void PauliSum<W, C>::check_invariants() const {
  auto fail = [](const std::string& what) { throw std::logic_error("PauliSum invariant broken: " + what); };
  if (keys_.size() != coefficients_.size()) fail("key and coefficient columns differ in length");
  if (bucket_offsets_.size() != (std::size_t{1} << bucket_bits_) + 1) fail("bucket offset count");
  if (bucket_offsets_.front() != 0 || bucket_offsets_.back() != keys_.size())
    fail("bucket offsets do not cover");
  for (std::size_t b = 0; b + 1 < bucket_offsets_.size(); ++b) {
    if (bucket_offsets_[b] > bucket_offsets_[b + 1])
      fail("bucket offsets decrease at bucket " + std::to_string(b));
    for (std::size_t i = bucket_offsets_[b]; i < bucket_offsets_[b + 1]; ++i) {
      if (bucket_of(keys_[i]) != b) fail("term " + keys_[i].to_sparse_label() + " in the wrong bucket");
      if (i > bucket_offsets_[b] && !(keys_[i - 1] < keys_[i])) fail("keys not strictly ascending in bucket");
      if (coefficients_[i] == C(0.0)) fail("exact zero coefficient stored");
      if (keys_[i].span() > num_qubits_) fail("bit set beyond num_qubits");
    }
  }
}

}  // namespace paulistrings
