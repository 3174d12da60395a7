// BucketStore: refinement puts every term in the bucket its key hashes to at the new count, keeps every
// term once with its coefficient and, within a target bucket, the source bucket's order; a refinement
// of more than 8 bits (done in passes) gives what one bit at a time gives.

#include "paulistrings/cpu/bucket_store.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace paulistrings {
namespace {

PauliSum<2, double> random_sum(std::size_t terms, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PauliSum<2, double>::Term> list;
  for (std::size_t i = 0; i < terms; ++i) {
    PauliString<2> key;
    key.x[0] = rng() & rng();
    key.z[0] = rng() & rng();
    key.x[1] = rng() & 0xffff;
    list.push_back({key, static_cast<double>(i % 997) + 0.25});
  }
  return PauliSum<2, double>::from_terms(128, std::move(list));
}

void expect_refined(const BucketStore<2, double>& store, const PauliSum<2, double>& sum, int bits) {
  ASSERT_EQ(store.bits(), bits);
  ASSERT_EQ(store.num_buckets(), std::size_t{1} << bits);
  std::map<PauliString<2>, double> seen;
  for (std::size_t b = 0; b < store.num_buckets(); ++b) {
    const Bucket<2, double>& bucket = store.bucket(b);
    for (std::size_t t = 0; t < bucket.size(); ++t) {
      EXPECT_EQ(store.hash()(bucket.keys[t], bits), b);
      EXPECT_TRUE(seen.emplace(bucket.keys[t], bucket.coefficients[t]).second) << "a key twice";
      if (t > 0) {
        EXPECT_LT(bucket.keys[t - 1], bucket.keys[t]) << "a source bucket's (sorted) order kept";
      }
    }
  }
  ASSERT_EQ(seen.size(), sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) EXPECT_EQ(seen.at(sum.keys()[i]), sum.coefficients()[i]);
}

TEST(BucketStore, RefinementPutsEveryTermInItsNewBucket) {
  const PauliSum<2, double> sum = random_sum(5000, 3);
  for (int threads : {1, 2}) {
    BucketStore<2, double> store(sum, 2);  // the sum's own buckets (sorted within) at 2 bits or more
    const int start = store.bits();
    store.refine(start + 3, threads);
    expect_refined(store, sum, start + 3);
    store.refine(start + 3 + 11, threads);  // 11 more bits: passes of 8 and 3
    expect_refined(store, sum, start + 14);
    store.refine(start, threads);  // grow-only
    EXPECT_EQ(store.bits(), start + 14);
  }
}

}  // namespace
}  // namespace paulistrings
