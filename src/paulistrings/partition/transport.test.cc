// The in-process transport: pairwise exchange, reductions in rank order, error agreement, and an aborted
// rank waking the others with a message naming it.

#include "paulistrings/partition/transport.h"

#include <gtest/gtest.h>

#include <thread>

namespace paulistrings {
namespace {

template <class Body>
void on_ranks(InProcessGroup& group, Body body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < group.size(); ++r) threads.emplace_back([&, r] { body(r, group.transport(r)); });
  for (auto& t : threads) t.join();
}

TEST(PartitionTransport, ExchangeAndReductionsAcrossFourRanks) {
  InProcessGroup group(4);
  std::vector<std::vector<std::byte>> received(4);
  std::vector<std::uint64_t> sums(4), maxima(4);
  std::vector<double> weights(4);
  on_ranks(group, [&](int rank, Transport& t) {
    EXPECT_EQ(t.size(), 4);
    EXPECT_EQ(t.kind(), "in-process");
    const std::vector<std::byte> mine(static_cast<std::size_t>(rank) + 1, std::byte(rank));
    received[static_cast<std::size_t>(rank)] = t.exchange(rank ^ 3, mine);
    std::uint64_t value = static_cast<std::uint64_t>(rank) + 1;
    t.all_reduce_sum(std::span<std::uint64_t>(&value, 1));
    sums[static_cast<std::size_t>(rank)] = value;
    std::uint64_t high = static_cast<std::uint64_t>(10 * rank);
    t.all_reduce_max(std::span<std::uint64_t>(&high, 1));
    maxima[static_cast<std::size_t>(rank)] = high;
    double w = 0.1 * rank;
    t.all_reduce_sum(std::span<double>(&w, 1));
    weights[static_cast<std::size_t>(rank)] = w;
  });
  for (int r = 0; r < 4; ++r) {
    const int partner = r ^ 3;
    EXPECT_EQ(received[static_cast<std::size_t>(r)],
              std::vector<std::byte>(static_cast<std::size_t>(partner) + 1, std::byte(partner)));
    EXPECT_EQ(sums[static_cast<std::size_t>(r)], 10u);
    EXPECT_EQ(maxima[static_cast<std::size_t>(r)], 30u);
    EXPECT_EQ(weights[static_cast<std::size_t>(r)], ((0.0 + 0.1) + 0.2) + 0.30000000000000004);  // rank order
  }
}

// exchange_into: the partner's bytes land in the caller's ByteBuffer, which is reused (and grows) from
// call to call; an empty message gives an empty span.
TEST(PartitionTransport, ExchangeIntoReusesTheReceiveBuffer) {
  InProcessGroup group(2);
  std::vector<std::vector<std::vector<std::byte>>> seen(2);
  on_ranks(group, [&](int rank, Transport& t) {
    ByteBuffer buffer;
    for (std::size_t size : {std::size_t{5}, std::size_t{3000}, std::size_t{0}, std::size_t{17}}) {
      std::vector<std::byte> mine(size + static_cast<std::size_t>(rank));
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = std::byte(static_cast<unsigned char>(i * 7 + rank));
      const std::span<const std::byte> got = t.exchange_into(rank ^ 1, mine, buffer);
      EXPECT_EQ(got.data(), buffer.bytes().data());
      seen[static_cast<std::size_t>(rank)].emplace_back(got.begin(), got.end());
    }
  });
  for (int r = 0; r < 2; ++r) {
    const int partner = r ^ 1;
    const auto& got = seen[static_cast<std::size_t>(r)];
    ASSERT_EQ(got.size(), 4u);
    std::size_t k = 0;
    for (std::size_t size : {std::size_t{5}, std::size_t{3000}, std::size_t{0}, std::size_t{17}}) {
      std::vector<std::byte> expected(size + static_cast<std::size_t>(partner));
      for (std::size_t i = 0; i < expected.size(); ++i)
        expected[i] = std::byte(static_cast<unsigned char>(i * 7 + partner));
      EXPECT_EQ(got[k], expected) << "call " << k << ", rank " << r;
      ++k;
    }
  }
}

TEST(PartitionTransport, ErrorAgreementNamesTheLowestFailingRank) {
  InProcessGroup group(4);
  std::vector<std::optional<AgreedError>> agreed(4);
  on_ranks(group, [&](int rank, Transport& t) {
    const std::string error = rank == 1 || rank == 3 ? "rank " + std::to_string(rank) + " broke" : "";
    agreed[static_cast<std::size_t>(rank)] = agree_on_error(t, error);
    EXPECT_FALSE(agree_on_error(t, ""));  // the next round starts clean
  });
  for (const auto& a : agreed) {
    ASSERT_TRUE(a);
    EXPECT_EQ(a->rank, 1);
    EXPECT_EQ(a->message, "rank 1 broke");
  }
}

TEST(PartitionTransport, AnAbortedRankWakesTheWaitingOnes) {
  InProcessGroup group(3);
  std::vector<std::string> messages(3);
  on_ranks(group, [&](int rank, Transport& t) {
    if (rank == 2) {
      group.abort(2, "out of memory");
      return;
    }
    try {
      std::uint64_t v = 1;
      t.all_reduce_sum(std::span<std::uint64_t>(&v, 1));  // rank 2 never arrives
    } catch (const PartitionPeerFailure& e) {
      EXPECT_EQ(e.failed_rank(), 2);
      messages[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  EXPECT_EQ(messages[0], "partition 2 of 3 failed: out of memory");
  EXPECT_EQ(messages[1], "partition 2 of 3 failed: out of memory");
  EXPECT_THROW(InProcessGroup(0), std::invalid_argument);
}

}  // namespace
}  // namespace paulistrings
