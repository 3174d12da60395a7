// CpuPartitionEngine's hooks: rows moved out and merged by bucket, as the partitioned driver uses them.

#include "paulistrings/cpu/cpu_partition_engine.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <span>

#include "paulistrings/testing/engine_cases.h"

namespace paulistrings {
namespace {

/// The terms of a sum (or an engine's export) by key.
template <int W>
std::map<PauliString<W>, double> terms_by_key(const PauliSum<W, double>& sum) {
  std::map<PauliString<W>, double> out;
  for (std::size_t i = 0; i < sum.size(); ++i) out[sum.keys()[i]] = sum.coefficients()[i];
  return out;
}

// The partition hooks: extract_grouped moves the chosen terms out laid out by bucket; merge_bucketed
// adds such runs to an engine with fewer buckets (it refines up, then merges bucket by bucket) and to
// one with more buckets (the rehashing path), with the same result as adding the terms one by one.
TEST(CpuPartitionEngine, HooksMoveRowsByBucketAndMergeThem) {
  std::mt19937_64 rng(4242);
  const auto source = testing::random_window_sum<2, double>(rng, 20000, 128, 30, 40);
  CpuEngineOptions options;
  options.threads = 2;
  options.parallel_threshold = 0;
  options.target_bucket_len = 16;  // 2^11 buckets for 20 000 terms
  CpuPartitionEngine<2, double> engine(source, options);
  const int bits = engine.bucket_bits();
  const std::size_t buckets = std::size_t{1} << bits;
  // Groups by two key bits: 0 stays, 1..3 leave into groups 0..2.
  const auto group = [](const PauliString<2>& key) {
    const std::uint32_t g = static_cast<std::uint32_t>((key.x[0] >> 31) & 3);
    return g == 0 ? 3u : g - 1;
  };
  std::vector<std::vector<std::uint64_t>> offsets(3, std::vector<std::uint64_t>(buckets + 1, 0));
  std::vector<std::vector<std::byte>> keys(3), coefficients(3);
  engine.extract_grouped(3, group, [&](std::span<const std::uint64_t> counts) {
    std::vector<GroupDestination> destinations(3);
    for (std::size_t g = 0; g < 3; ++g) {
      for (std::size_t b = 0; b < buckets; ++b) offsets[g][b + 1] = offsets[g][b] + counts[g * buckets + b];
      keys[g].resize(offsets[g][buckets] * sizeof(PauliString<2>));
      coefficients[g].resize(offsets[g][buckets] * sizeof(double));
      destinations[g] = {keys[g].data(), coefficients[g].data()};
    }
    return destinations;
  });
  std::vector<BucketedRows> runs(3);
  const std::map<PauliString<2>, double> all = terms_by_key(source);
  std::map<PauliString<2>, double> moved;
  for (std::size_t g = 0; g < 3; ++g) {
    runs[g] = {bits, offsets[g].data(), keys[g].data(), coefficients[g].data()};
    for (std::size_t b = 0; b < buckets; ++b) {
      for (std::uint64_t i = offsets[g][b]; i < offsets[g][b + 1]; ++i) {
        PauliString<2> key;
        double c;
        std::memcpy(&key, keys[g].data() + i * sizeof(key), sizeof(key));
        std::memcpy(&c, coefficients[g].data() + i * sizeof(c), sizeof(c));
        EXPECT_EQ(group(key), g);
        EXPECT_EQ(source.hash()(key, bits), b);  // laid out by bucket
        EXPECT_EQ(all.at(key), c);
        moved[key] = c;
      }
    }
  }
  PauliSum<2, double> kept(128);
  engine.export_to(kept);
  EXPECT_EQ(kept.size() + moved.size(), source.size());
  EXPECT_EQ(engine.size(), kept.size());
  for (const auto& [key, c] : terms_by_key(kept)) EXPECT_EQ(group(key), 3u);

  // Receivers: a small sum (fewer buckets than the runs) and a large one (more), sharing some keys.
  for (const std::size_t receiver_terms : {500u, 200000u}) {
    SCOPED_TRACE(receiver_terms);
    auto receiver_sum = testing::random_window_sum<2, double>(rng, receiver_terms, 128, 30, 40);
    std::vector<PauliSum<2, double>::Term> shared;
    for (const auto& [key, c] : moved) {
      if (shared.size() < 300) shared.push_back({key, shared.size() % 3 == 0 ? -c : 0.5});  // some cancel exactly
    }
    receiver_sum += PauliSum<2, double>::from_terms(128, std::move(shared));
    std::map<PauliString<2>, double> expected = terms_by_key(receiver_sum);
    for (std::size_t g = 0; g < 3; ++g) {
      for (std::uint64_t i = 0; i < offsets[g][buckets]; ++i) {
        PauliString<2> key;
        double c;
        std::memcpy(&key, keys[g].data() + i * sizeof(key), sizeof(key));
        std::memcpy(&c, coefficients[g].data() + i * sizeof(c), sizeof(c));
        expected[key] += c;
      }
    }
    CpuPartitionEngine<2, double> receiver(receiver_sum, options);
    const int receiver_bits = receiver.bucket_bits();
    receiver.merge_bucketed(runs);
    EXPECT_GE(receiver.bucket_bits(), std::max(bits, receiver_bits));
    EXPECT_EQ(receiver.size(), expected.size());
    receiver.apply_term_truncation(Truncation());  // the exact zeros of the cancelled keys go
    for (auto it = expected.begin(); it != expected.end();) it = it->second == 0.0 ? expected.erase(it) : ++it;
    EXPECT_EQ(receiver.size(), expected.size());
    PauliSum<2, double> merged(128);
    receiver.export_to(merged);
    merged.check_invariants();
    EXPECT_EQ(terms_by_key(merged), expected);

    // merge_bucketed_and_test: the merge and the per-term test in one pass, same terms as the two steps.
    for (const Truncation& truncation : {Truncation(), Truncation::coeff(0.8)}) {
      CpuPartitionEngine<2, double> two_steps(receiver_sum, options), fused(receiver_sum, options);
      two_steps.merge_bucketed(runs);
      const double expected_dropped = two_steps.apply_term_truncation(truncation);
      const double dropped = fused.merge_bucketed_and_test(runs, truncation);
      EXPECT_NEAR(dropped, expected_dropped, 1e-9 * std::max(1.0, expected_dropped));
      EXPECT_EQ(fused.size(), two_steps.size());
      PauliSum<2, double> left(128), right(128);
      fused.export_to(left);
      two_steps.export_to(right);
      EXPECT_TRUE(left == right);
      if (truncation.has_term_test()) {
        EXPECT_GT(dropped, 0.0);
      }
    }
  }
  // No rows at all: every bucket is still tested.
  CpuPartitionEngine<2, double> lone(source, options);
  const double dropped = lone.merge_bucketed_and_test({}, Truncation::coeff(0.8));
  PauliSum<2, double> left(128);
  lone.export_to(left);
  double expected_dropped = 0.0;
  std::size_t expected_kept = 0;
  for (const auto& [key, c] : terms_by_key(source)) {
    if (c * c > 0.8 * 0.8) {  // coeff(ε) keeps |c|² > ε²
      ++expected_kept;
    } else {
      expected_dropped += c * c;
    }
  }
  EXPECT_EQ(left.size(), expected_kept);
  EXPECT_NEAR(dropped, expected_dropped, 1e-9 * expected_dropped);
}

}  // namespace
}  // namespace paulistrings
