// The in-process transport (mailboxes and reductions under one mutex) and error agreement.

#include "paulistrings/partition/transport.h"

#include <algorithm>
#include <array>
#include <bit>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

namespace paulistrings {

std::span<const std::byte> Transport::exchange_into(int partner, std::span<const std::byte> send,
                                                   ByteBuffer& receive) {
  const std::vector<std::byte> received = exchange(partner, send);
  std::byte* data = receive.resize(received.size());
  if (!received.empty()) std::memcpy(data, received.data(), received.size());
  return receive.bytes();
}

std::optional<AgreedError> agree_on_error(Transport& transport, const std::string& local_error,
                                          std::span<std::uint64_t> maxima) {
  const int size = transport.size();
  const int rank = transport.rank();
  // Lowest failing rank r is reported as size − r, so a max finds it (0 = nobody failed).
  std::uint64_t code = local_error.empty() ? 0 : static_cast<std::uint64_t>(size - rank);
  if (maxima.empty()) {
    transport.all_reduce_max(std::span<std::uint64_t>(&code, 1));
  } else {
    std::vector<std::uint64_t> words(maxima.size() + 1);
    words[0] = code;
    std::copy(maxima.begin(), maxima.end(), words.begin() + 1);
    transport.all_reduce_max(std::span<std::uint64_t>(words));
    code = words[0];
    std::copy(words.begin() + 1, words.end(), maxima.begin());
  }
  if (code == 0) return std::nullopt;
  AgreedError agreed;
  agreed.rank = size - static_cast<int>(code);
  // Only the named rank contributes its message bytes; a max over words then carries them to all.
  constexpr std::size_t kWords = kAgreedMessageBytes / 8;
  std::array<std::uint64_t, kWords> words{};
  if (rank == agreed.rank) {
    std::memcpy(words.data(), local_error.data(), std::min(local_error.size(), kAgreedMessageBytes));
  }
  transport.all_reduce_max(words);
  const char* text = reinterpret_cast<const char*>(words.data());
  agreed.message.assign(text, strnlen(text, kAgreedMessageBytes));
  return agreed;
}

// ---------------------------------------------------------------- in-process group

struct InProcessGroup::Shared {
  enum class Op : std::uint8_t { sum_u64, max_u64, sum_double };

  explicit Shared(int size)
      : size(size), contributions(static_cast<std::size_t>(size)), ops(static_cast<std::size_t>(size)) {}

  const int size;
  std::mutex mutex;
  std::condition_variable changed;
  bool aborted = false;
  int aborted_rank = -1;
  std::string aborted_what;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mailboxes;  // (from, to)
  // The reduction in progress: each rank's contribution (doubles as bit patterns), combined in rank
  // order by the last rank to arrive.
  std::vector<std::vector<std::uint64_t>> contributions;
  std::vector<Op> ops;
  std::vector<std::uint64_t> result;
  int arrived = 0;
  std::uint64_t generation = 0;

  [[noreturn]] void throw_aborted() const {
    std::string message("partition ");
    message.append(std::to_string(aborted_rank)).append(" of ").append(std::to_string(size));
    message.append(" failed: ").append(aborted_what);
    throw PartitionPeerFailure(aborted_rank, message);
  }

  void reduce(int rank, Op op, std::span<std::uint64_t> values) {
    std::unique_lock lock(mutex);
    if (aborted) throw_aborted();
    contributions[static_cast<std::size_t>(rank)].assign(values.begin(), values.end());
    ops[static_cast<std::size_t>(rank)] = op;
    const std::uint64_t round = generation;
    if (++arrived == size) {
      result = contributions[0];
      for (int r = 1; r < size; ++r) {
        const auto& c = contributions[static_cast<std::size_t>(r)];
        if (ops[static_cast<std::size_t>(r)] != ops[0] || c.size() != result.size()) {
          aborted = true;
          aborted_rank = r;
          aborted_what = "collective call mismatch (a different reduction than partition 0)";
          changed.notify_all();
          throw_aborted();
        }
        for (std::size_t i = 0; i < result.size(); ++i) {
          switch (op) {
            case Op::sum_u64:
              result[i] += c[i];
              break;
            case Op::max_u64:
              result[i] = std::max(result[i], c[i]);
              break;
            case Op::sum_double:
              result[i] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(result[i]) +
                                                       std::bit_cast<double>(c[i]));
              break;
          }
        }
      }
      arrived = 0;
      ++generation;
      changed.notify_all();
    } else {
      changed.wait(lock, [&] { return generation != round || aborted; });
      if (generation == round) throw_aborted();
    }
    std::copy(result.begin(), result.end(), values.begin());
  }

  std::vector<std::byte> exchange(int rank, int partner, std::span<const std::byte> send) {
    if (partner < 0 || partner >= size || partner == rank) {
      throw std::invalid_argument(std::string("exchange: bad partner ")
                                      .append(std::to_string(partner))
                                      .append(" for rank ")
                                      .append(std::to_string(rank)));
    }
    std::unique_lock lock(mutex);
    if (aborted) throw_aborted();
    mailboxes[{rank, partner}].emplace_back(send.begin(), send.end());
    changed.notify_all();
    auto& inbox = mailboxes[{partner, rank}];
    changed.wait(lock, [&] { return !inbox.empty() || aborted; });
    if (inbox.empty()) throw_aborted();
    std::vector<std::byte> received = std::move(inbox.front());
    inbox.pop_front();
    return received;
  }
};

class InProcessGroup::Member : public Transport {
 public:
  Member(Shared& shared, int rank) : shared_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return shared_.size; }
  std::string kind() const override { return "in-process"; }
  bool shares_address_space() const override { return true; }
  std::vector<std::byte> exchange(int partner, std::span<const std::byte> send) override {
    return shared_.exchange(rank_, partner, send);
  }
  void all_reduce_sum(std::span<std::uint64_t> values) override {
    shared_.reduce(rank_, Shared::Op::sum_u64, values);
  }
  void all_reduce_max(std::span<std::uint64_t> values) override {
    shared_.reduce(rank_, Shared::Op::max_u64, values);
  }
  void all_reduce_sum(std::span<double> values) override {
    std::vector<std::uint64_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = std::bit_cast<std::uint64_t>(values[i]);
    shared_.reduce(rank_, Shared::Op::sum_double, bits);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::bit_cast<double>(bits[i]);
  }

 private:
  Shared& shared_;
  int rank_;
};

InProcessGroup::InProcessGroup(int size) {
  if (size < 1) {
    throw std::invalid_argument(
        std::string("in-process group size must be ≥ 1, got ").append(std::to_string(size)));
  }
  shared_ = std::make_unique<Shared>(size);
  for (int r = 0; r < size; ++r) members_.push_back(std::make_unique<Member>(*shared_, r));
}

InProcessGroup::~InProcessGroup() = default;

int InProcessGroup::size() const { return shared_->size; }

Transport& InProcessGroup::transport(int rank) { return *members_.at(static_cast<std::size_t>(rank)); }

void InProcessGroup::abort(int rank, const std::string& what) {
  std::lock_guard lock(shared_->mutex);
  if (shared_->aborted) return;
  shared_->aborted = true;
  shared_->aborted_rank = rank;
  shared_->aborted_what = what;
  shared_->changed.notify_all();
}

}  // namespace paulistrings
