#pragma once
// PauliSum<W, C>: a weighted sum of distinct Pauli strings, the operator every engine evolves.
//
// Storage (docs/design.md §4.1): two flat columns — keys (x and z words of a term side by side) and
// coefficients — partitioned into 2^b buckets by the linear BucketHash; bucket β occupies
// [offset[β], offset[β+1]). Invariants (checked by check_invariants(), and in debug builds after
// every mutation): keys are unique; every key's bucket is h(key); inside a bucket keys ascend
// lexicographically; no bit at a qubit ≥ num_qubits is set; no coefficient is exactly zero.
// This (bucket, key) order is the canonical iteration order. C is double or std::complex<double>.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/core/bucket_hash.h"
#include "paulistrings/core/pauli_string.h"
#include "paulistrings/core/unwritten_vector.h"

namespace paulistrings {

using Complex = std::complex<double>;

template <class C>
concept Coefficient = std::same_as<C, double> || std::same_as<C, Complex>;

inline double magnitude_squared(double c) { return c * c; }
inline double magnitude_squared(const Complex& c) { return std::norm(c); }

template <int W, Coefficient C>
class PauliSum {
 public:
  using Key = PauliString<W>;
  using Coeff = C;
  static constexpr int kWidth = W;
  static constexpr bool kIsComplex = std::same_as<C, Complex>;
  /// The storage of the two columns: sized without a value, their elements are left unwritten, so that
  /// an engine's export writes (and first touches) them once, in parallel (core/unwritten_vector.h).
  using KeyColumn = UnwrittenVector<Key>;
  using CoefficientColumn = UnwrittenVector<C>;

  struct Term {
    Key key;
    C coefficient;
  };

  /// The empty sum (the zero operator) on num_qubits qubits.
  explicit PauliSum(std::size_t num_qubits = 0, std::uint64_t hash_seed = kDefaultHashSeed);
  /// An empty sum bucketed by `hash` (a narrowed engine's: BucketHash::copy_column).
  PauliSum(std::size_t num_qubits, const BucketHash<W>& hash);

  /// From (label, coefficient) pairs; labels dense or sparse. Duplicates are summed in input order,
  /// exact zeros dropped.
  static PauliSum from_labels(std::size_t num_qubits, std::span<const std::pair<std::string, C>> terms);
  static PauliSum from_labels(std::size_t num_qubits,
                              std::initializer_list<std::pair<std::string, C>> terms) {
    return from_labels(num_qubits, std::span<const std::pair<std::string, C>>(terms.begin(), terms.size()));
  }
  /// From terms (validated against num_qubits); duplicates summed in input order, exact zeros dropped.
  static PauliSum from_terms(std::size_t num_qubits, std::vector<Term> terms,
                             std::uint64_t hash_seed = kDefaultHashSeed);
  /// From row-major x/z word arrays of shape (n_terms, words_per_row), 1 ≤ words_per_row ≤ W
  /// (narrower rows are zero-padded), and one coefficient per row.
  static PauliSum from_arrays(std::size_t num_qubits, std::span<const std::uint64_t> x,
                              std::span<const std::uint64_t> z, std::size_t words_per_row,
                              std::span<const C> coefficients);

  std::size_t num_qubits() const { return num_qubits_; }
  std::size_t size() const { return coefficients_.size(); }
  bool empty() const { return coefficients_.empty(); }
  int bucket_bits() const { return bucket_bits_; }
  std::size_t num_buckets() const { return bucket_offsets_.size() - 1; }
  const BucketHash<W>& hash() const { return hash_; }

  std::span<const Key> keys() const { return keys_; }
  std::span<const C> coefficients() const { return coefficients_; }
  /// Coefficients in place (an engine's key-preserving rescale); zeros written here must be
  /// removed with drop_zeros() before the sum is used again.
  std::span<C> mutable_coefficients() { return coefficients_; }
  std::span<const std::size_t> bucket_offsets() const { return bucket_offsets_; }

  /// Coefficient of `key` (zero when absent).
  C coefficient(const Key& key) const;
  C coefficient(std::string_view label) const { return coefficient(Key::from_label(label, num_qubits_)); }
  bool contains(const Key& key) const;
  /// Coefficient of I…I, i.e. tr(O)/2^n.
  C identity_coefficient() const { return coefficient(Key{}); }
  /// Σ|c|².
  double norm_squared() const;
  /// Terms sorted by key alone (independent of the bucket count): for comparisons and printing.
  std::vector<Term> sorted_terms() const;

  PauliSum& operator+=(const PauliSum& other);
  PauliSum& operator-=(const PauliSum& other);
  PauliSum& operator*=(C scalar);
  friend PauliSum operator+(PauliSum a, const PauliSum& b) { return a += b; }
  friend PauliSum operator-(PauliSum a, const PauliSum& b) { return a -= b; }
  friend PauliSum operator*(PauliSum a, C s) { return a *= s; }
  friend PauliSum operator*(C s, PauliSum a) { return a *= s; }
  friend PauliSum operator-(PauliSum a) { return a *= C(-1.0); }
  /// Same qubit count and same (key, coefficient) set, whatever the bucket counts.
  friend bool operator==(const PauliSum& a, const PauliSum& b) {
    return a.num_qubits_ == b.num_qubits_ && a.sorted_terms_equal(b);
  }

  /// Complex copy (always exact).
  PauliSum<W, Complex> to_complex() const;
  /// Real copy; throws std::invalid_argument when any imaginary part is nonzero.
  PauliSum<W, double> to_real() const;

  /// Grow-only: raises the bucket count to 2^bits (no-op when already ≥).
  void refine(int bits);
  /// Grow-only: the smallest bucket count ≥ min_buckets with size()/buckets ≤ target_bucket_len.
  void refine_to_fit(std::size_t target_bucket_len, std::size_t min_buckets);
  /// Bucket count that refine_to_fit would choose for `terms` terms.
  static int bits_to_fit(std::size_t terms, std::size_t target_bucket_len, std::size_t min_buckets);

  void clear();
  /// Removes exact zeros left by in-place coefficient writes.
  void drop_zeros();

  /// Replaces the contents with unsorted terms (summed in input order, zeros dropped), keeping
  /// the bucket count at ≥ bits; terms are trusted to fit num_qubits. The engines' assembly step.
  /// Large inputs are ordered on up to `threads` threads (0: OpenMP's default), here and below.
  void assign_terms(std::vector<Term>&& terms, int bits, int threads = 0);
  /// Replaces the contents with columns of distinct keys in any order (exact zeros dropped), sorting
  /// them in place: 24 extra bytes a term instead of a second copy (the GPU engine's download).
  /// Distinctness is the caller's promise, checked in debug builds.
  void assign_distinct_columns(KeyColumn&& keys, CoefficientColumn&& coefficients, int bits, int threads = 0);
  /// Replaces the contents with columns of distinct nonzero terms already grouped by bucket: bucket b
  /// (of 2^bits, this sum's hash) holds positions [start[b], start[b + 1]) in any order. Each bucket is
  /// sorted where it stands (the GPU engine's download, which groups the terms on the device).
  /// std::invalid_argument for columns of different lengths or offsets that do not cover them; the
  /// grouping and distinctness are the caller's promise, checked in debug builds.
  void assign_bucketed_columns(KeyColumn&& keys, CoefficientColumn&& coefficients,
                               std::vector<std::size_t>&& start, int bits, int threads = 0);
  /// Replaces the contents with already canonical columns (an engine's output). Checked in debug.
  void assign_canonical(KeyColumn&& keys, CoefficientColumn&& coefficients,
                        std::vector<std::size_t>&& bucket_offsets, int bits);

  /// Throws std::logic_error naming the first broken invariant.
  void check_invariants() const;

 private:
  template <int W2, Coefficient C2>
  friend class PauliSum;

  bool sorted_terms_equal(const PauliSum& other) const;
  /// std::invalid_argument, naming `caller`, unless the columns have one length.
  static void check_column_lengths(const char* caller, const KeyColumn& keys,
                                   const CoefficientColumn& coefficients);
  /// Sorts keys[start[b], start[b + 1]) by key for every bucket b, coefficients alongside, in place
  /// (buckets on up to `threads` threads for large sums; 0: OpenMP's default).
  static void sort_bucket_ranges(KeyColumn& keys, CoefficientColumn& coefficients,
                                 const std::vector<std::size_t>& start, int threads = 0);
  void validate_key(const Key& key) const;
  std::size_t bucket_of(const Key& key) const { return hash_(key, bucket_bits_); }
  void debug_check() const {
#ifndef NDEBUG
    check_invariants();
#endif
  }

  std::size_t num_qubits_;
  BucketHash<W> hash_;
  int bucket_bits_ = 0;
  KeyColumn keys_;
  CoefficientColumn coefficients_;
  std::vector<std::size_t> bucket_offsets_{0, 0};
};

/// Every (width, coefficient type) pair the library compiles, for explicit instantiations: X(W, C) for each.
#define PAULISTRINGS_FOR_EACH_SUM_TYPE(X) \
  X(1, double)                            \
  X(2, double)                            \
  X(4, double)                            \
  X(8, double) X(16, double) X(1, Complex) X(2, Complex) X(4, Complex) X(8, Complex) X(16, Complex)

}  // namespace paulistrings

#include "paulistrings/core/pauli_sum.inl"

namespace paulistrings {
// Every sum type's members are compiled once, in core/pauli_sum.cc; other units only call them.
#define PAULISTRINGS_DECLARE_PAULI_SUM(W, C) extern template class PauliSum<W, C>;
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_PAULI_SUM)
#undef PAULISTRINGS_DECLARE_PAULI_SUM
}  // namespace paulistrings
