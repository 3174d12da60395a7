#pragma once
// BucketStore<W, C>: the CPU engine's working form of a Pauli sum. Each of the 2^b hash buckets owns
// its own key and coefficient vectors, so a coset task writes its buckets directly, in place, with no
// global compaction; vectors keep their capacity across layers (no allocation in the steady state).
// Inside a bucket the order is the engine's deterministic emission order, not sorted; export to a
// PauliSum sorts each bucket into the canonical order.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "paulistrings/core/key_sorter.h"
#include "paulistrings/core/parallel_errors.h"
#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

template <int W, Coefficient C>
struct Bucket {
  std::vector<PauliString<W>> keys;
  std::vector<C> coefficients;
  std::size_t size() const { return keys.size(); }
  void clear() {
    keys.clear();
    coefficients.clear();
  }
};

template <int W, Coefficient C>
class BucketStore {
 public:
  BucketStore(const PauliSum<W, C>& sum, int bits)
      : num_qubits_(sum.num_qubits()), hash_(sum.hash()), bits_(std::max(bits, sum.bucket_bits())) {
    buckets_.resize(std::size_t{1} << bits_);
    for (std::size_t i = 0; i < sum.size(); ++i) {
      Bucket<W, C>& b = buckets_[hash_(sum.keys()[i], bits_)];
      b.keys.push_back(sum.keys()[i]);
      b.coefficients.push_back(sum.coefficients()[i]);
    }
  }

  std::size_t num_qubits() const { return num_qubits_; }
  int bits() const { return bits_; }
  std::size_t num_buckets() const { return buckets_.size(); }
  const BucketHash<W>& hash() const { return hash_; }
  /// BucketHash::copy_column on the store's hash: only for a position no key in the store uses.
  template <int W2>
  void copy_hash_column(std::size_t position, const BucketHash<W2>& other, std::size_t from) {
    hash_.copy_column(position, other, from);
  }
  Bucket<W, C>& bucket(std::size_t index) { return buckets_[index]; }
  const Bucket<W, C>& bucket(std::size_t index) const { return buckets_[index]; }

  /// Sorts every bucket by key: the canonical (bucket, key) order. `threads` ≥ 1 here and below.
  void sort_buckets(int threads) {
    ParallelErrors errors;  // std::bad_alloc of a bucket's sort must not leave the region
#pragma omp parallel num_threads(threads)
    {
      KeySorter<PauliString<W>, C> sorter;
#pragma omp for schedule(dynamic, 16)
      for (std::size_t i = 0; i < buckets_.size(); ++i) {
        if (errors.failed()) continue;
        try {
          Bucket<W, C>& b = buckets_[i];
          sorter.sort(b.keys.data(), b.coefficients.data(), b.size());
        } catch (...) {
          errors.capture();
        }
      }
    }
    errors.rethrow();
  }

  /// Grow-only refinement to 2^bits buckets: bucket β splits into β | (new bits) by the new rows. Each
  /// bucket's terms are counted by target first, so every target is allocated once at its size; only
  /// the new rows of the hash are computed (the low bits_ bits of a term's bucket are β). At most 8 bits
  /// a pass (256 targets a bucket).
  void refine(int bits, int threads) {
    while (bits_ < bits) refine_by(std::min(bits, bits_ + 8), threads);
  }

  /// Writes the contents into `sum` in canonical order (sorting the buckets first).
  void export_to(PauliSum<W, C>& sum, int threads) {
    sort_buckets(threads);
    std::vector<std::size_t> offsets(buckets_.size() + 1, 0);
    for (std::size_t i = 0; i < buckets_.size(); ++i) offsets[i + 1] = offsets[i] + buckets_[i].size();
    // Unwritten until the copy below writes (and first touches) them, bucket by bucket in parallel.
    typename PauliSum<W, C>::KeyColumn keys(offsets.back());
    typename PauliSum<W, C>::CoefficientColumn coefficients(offsets.back());
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      std::copy(buckets_[i].keys.begin(), buckets_[i].keys.end(),
                keys.begin() + static_cast<std::ptrdiff_t>(offsets[i]));
      std::copy(buckets_[i].coefficients.begin(), buckets_[i].coefficients.end(),
                coefficients.begin() + static_cast<std::ptrdiff_t>(offsets[i]));
    }
    sum.assign_canonical(std::move(keys), std::move(coefficients), std::move(offsets), bits_);
  }

 private:
  void refine_by(int bits, int threads) {
    const int added = bits - bits_;
    std::vector<Bucket<W, C>> refined(std::size_t{1} << bits);
    const std::size_t old_count = buckets_.size();
    ParallelErrors errors;
#pragma omp parallel num_threads(threads)
    {
      std::vector<std::uint8_t> high;  // per term of the bucket: its new bits
      std::array<std::size_t, 256> count{};
#pragma omp for schedule(dynamic, 16)
      for (std::size_t i = 0; i < old_count; ++i) {
        if (errors.failed()) continue;
        try {
          Bucket<W, C>& source = buckets_[i];
          const std::size_t n = source.size();
          high.resize(n);
          std::fill_n(count.begin(), std::size_t{1} << added, 0);
          for (std::size_t t = 0; t < n; ++t) {
            high[t] = static_cast<std::uint8_t>(hash_.bits_between(source.keys[t], bits_, bits));
            ++count[high[t]];
          }
          for (std::size_t k = 0; k < (std::size_t{1} << added); ++k) {
            Bucket<W, C>& target = refined[i | (k << bits_)];
            target.keys.reserve(count[k]);
            target.coefficients.reserve(count[k]);
          }
          for (std::size_t t = 0; t < n; ++t) {
            Bucket<W, C>& target = refined[i | (static_cast<std::size_t>(high[t]) << bits_)];
            target.keys.push_back(source.keys[t]);
            target.coefficients.push_back(source.coefficients[t]);
          }
          source = Bucket<W, C>();
        } catch (...) {
          errors.capture();
        }
      }
    }
    errors.rethrow();
    buckets_ = std::move(refined);
    bits_ = bits;
  }

  std::size_t num_qubits_;
  BucketHash<W> hash_;
  int bits_;
  std::vector<Bucket<W, C>> buckets_;
};

}  // namespace paulistrings
