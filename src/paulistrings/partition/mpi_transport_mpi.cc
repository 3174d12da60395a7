// MpiTransport: pairwise exchanges by MPI_Sendrecv (chunked below 2^31 bytes), reductions by
// MPI_Allreduce / MPI_Allgather.

#include "paulistrings/partition/mpi_transport.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace paulistrings {

namespace {

constexpr int kSizeTag = 0x5a10;
constexpr int kDataTag = 0x5a11;
constexpr std::size_t kChunkBytes = std::size_t{1} << 30;  // MPI counts are int

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(
      std::string("MPI: ").append(what).append(" failed: ").append(text, static_cast<std::size_t>(length)));
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw std::runtime_error(
        "MpiTransport: MPI is not initialized (the application must call MPI_Init_thread with "
        "MPI_THREAD_SERIALIZED or better first; the library never initializes MPI)");
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    throw std::runtime_error(
        std::string("MpiTransport: MPI was initialized with ")
            .append(thread_level_name(provided))
            .append("; paulistrings needs MPI_THREAD_SERIALIZED or better (use MPI_Init_thread, "
                    "or mpi4py.rc.thread_level = \"serialized\" before importing mpi4py.MPI)"));
  }
  if (comm == MPI_COMM_NULL) throw std::runtime_error("MpiTransport: the communicator is MPI_COMM_NULL");
  check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::vector<std::byte> MpiTransport::exchange(int partner, std::span<const std::byte> send) {
  std::vector<std::byte> received;
  swap_bytes(partner, send, [&](std::size_t bytes) {
    received.resize(bytes);
    return received.data();
  });
  return received;
}

std::span<const std::byte> MpiTransport::exchange_into(int partner, std::span<const std::byte> send,
                                                       ByteBuffer& receive) {
  swap_bytes(partner, send, [&](std::size_t bytes) { return receive.resize(bytes); });
  return receive.bytes();
}

template <class Room>
void MpiTransport::swap_bytes(int partner, std::span<const std::byte> send, Room&& room) {
  if (partner < 0 || partner >= size_ || partner == rank_) {
    throw std::invalid_argument(std::string("MpiTransport::exchange: bad partner ")
                                    .append(std::to_string(partner))
                                    .append(" for rank ")
                                    .append(std::to_string(rank_)));
  }
  std::uint64_t send_size = send.size(), receive_size = 0;
  check(MPI_Sendrecv(&send_size, 1, MPI_UINT64_T, partner, kSizeTag, &receive_size, 1, MPI_UINT64_T, partner,
                     kSizeTag, comm_, MPI_STATUS_IGNORE),
        "MPI_Sendrecv (sizes)");
  std::byte* received = room(static_cast<std::size_t>(receive_size));
  // Both sides compute the same chunk count from the two sizes, so the calls pair up.
  const std::size_t chunks = (std::max<std::size_t>(send_size, receive_size) + kChunkBytes - 1) / kChunkBytes;
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t begin = c * kChunkBytes;
    const std::size_t out = begin < send_size ? std::min(kChunkBytes, send_size - begin) : 0;
    const std::size_t in = begin < receive_size ? std::min(kChunkBytes, receive_size - begin) : 0;
    check(MPI_Sendrecv(out ? send.data() + begin : nullptr, static_cast<int>(out), MPI_BYTE, partner,
                       kDataTag, in ? received + begin : nullptr, static_cast<int>(in), MPI_BYTE,
                       partner, kDataTag, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv (rows)");
  }
}

void MpiTransport::all_reduce_sum(std::span<std::uint64_t> values) {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM,
                      comm_),
        "MPI_Allreduce (sum)");
}

void MpiTransport::all_reduce_max(std::span<std::uint64_t> values) {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_MAX,
                      comm_),
        "MPI_Allreduce (max)");
}

void MpiTransport::all_reduce_sum(std::span<double> values) {
  const std::size_t n = values.size();
  std::vector<double> all(n * static_cast<std::size_t>(size_));
  check(MPI_Allgather(values.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n),
                      MPI_DOUBLE, comm_),
        "MPI_Allgather");
  for (std::size_t i = 0; i < n; ++i) {
    double total = all[i];
    for (int r = 1; r < size_; ++r) total += all[static_cast<std::size_t>(r) * n + i];
    values[i] = total;
  }
}

}  // namespace paulistrings
