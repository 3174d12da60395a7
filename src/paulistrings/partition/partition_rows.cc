// PartitionRows: seeded, seeded-excluding and cut rows, with their validation.

#include "paulistrings/partition/partition_rows.h"

#include <stdexcept>

#include "paulistrings/core/bucket_hash.h"

namespace paulistrings {

namespace {

std::invalid_argument partition_error(const std::string& what) {
  return std::invalid_argument(std::string("partition rows: ").append(what));
}

}  // namespace

PartitionRows::PartitionRows(std::size_t num_qubits) : num_qubits_(num_qubits) { check_qubits(num_qubits); }

void PartitionRows::check_qubits(std::size_t num_qubits) {
  if (num_qubits > PauliString<16>::kMaxQubits) {
    throw partition_error(
        std::string("num_qubits ").append(std::to_string(num_qubits)).append(" is over 1024"));
  }
}

int PartitionRows::bits_for_count(std::size_t partitions) {
  if (partitions == 0 || (partitions & (partitions - 1)) != 0 ||
      partitions > (std::size_t{1} << kMaxPartitionBits)) {
    throw partition_error(std::string("the partition count must be a power of two from 1 to ")
                              .append(std::to_string(std::size_t{1} << kMaxPartitionBits))
                              .append(", got ")
                              .append(std::to_string(partitions)));
  }
  return std::countr_zero(partitions);
}

bool PartitionRows::add_independent(const Row& row) {
  // Rank test by Gaussian elimination over the (x, z) bits (p ≤ 16 rows, so a copy is cheap).
  std::vector<Row> all = rows_;
  all.push_back(row);
  std::size_t rank = 0;
  for (int w = 0; w < 16; ++w) {
    for (int half = 0; half < 2; ++half) {
      for (int bit = 0; bit < 64; ++bit) {
        const std::uint64_t mask = std::uint64_t{1} << bit;
        auto has = [&](const Row& r) { return ((half ? r.z[w] : r.x[w]) & mask) != 0; };
        std::size_t pivot = rank;
        while (pivot < all.size() && !has(all[pivot])) ++pivot;
        if (pivot == all.size()) continue;
        std::swap(all[rank], all[pivot]);
        for (std::size_t i = 0; i < all.size(); ++i) {
          if (i != rank && has(all[i])) all[i] ^= all[rank];
        }
        ++rank;
      }
    }
  }
  if (rank < all.size()) return false;
  rows_.push_back(row);
  return true;
}

PartitionRows PartitionRows::seeded(int bits, std::size_t num_qubits, std::uint64_t seed) {
  return seeded_excluding(bits, num_qubits, seed, {});
}

PartitionRows PartitionRows::seeded_excluding(int bits, std::size_t num_qubits, std::uint64_t seed,
                                              const std::vector<std::size_t>& excluded) {
  check_qubits(num_qubits);
  if (bits < 0 || bits > kMaxPartitionBits) {
    throw partition_error(std::string("partition bits must be 0..")
                              .append(std::to_string(kMaxPartitionBits))
                              .append(", got ")
                              .append(std::to_string(bits)));
  }
  Row allowed;
  for (std::size_t q = 0; q < num_qubits; ++q) {
    allowed.x[q / 64] |= std::uint64_t{1} << (q % 64);
    allowed.z[q / 64] |= std::uint64_t{1} << (q % 64);
  }
  for (std::size_t q : excluded) {
    if (q >= num_qubits) {
      throw partition_error(std::string("excluded qubit ")
                                .append(std::to_string(q))
                                .append(" is out of range for ")
                                .append(std::to_string(num_qubits))
                                .append(" qubits"));
    }
    allowed.x[q / 64] &= ~(std::uint64_t{1} << (q % 64));
    allowed.z[q / 64] &= ~(std::uint64_t{1} << (q % 64));
  }
  PartitionRows rows(num_qubits);
  // Candidate k is a pure function of (seed, k); dependent candidates are skipped, so the rows are a
  // deterministic function of (bits, num_qubits, seed, excluded).
  constexpr int kAttempts = 256;
  int attempt = 0;
  while (rows.bits() < bits) {
    if (attempt == kAttempts) {
      throw partition_error(std::string("cannot draw ")
                                .append(std::to_string(bits))
                                .append(" independent rows over ")
                                .append(std::to_string(num_qubits))
                                .append(" qubits minus ")
                                .append(std::to_string(excluded.size()))
                                .append(" excluded"));
    }
    Row row;
    const std::uint64_t row_seed =
        splitmix64(seed ^ splitmix64(0x9a27'0000ULL + static_cast<std::uint64_t>(attempt)));
    for (int w = 0; w < 16; ++w) {
      row.x[w] = splitmix64(row_seed ^ splitmix64(2 * static_cast<std::uint64_t>(w))) & allowed.x[w];
      row.z[w] = splitmix64(row_seed ^ splitmix64(2 * static_cast<std::uint64_t>(w) + 1)) & allowed.z[w];
    }
    ++attempt;
    rows.add_independent(row);
  }
  rows.description_ = std::string("seeded(").append(std::to_string(seed)).append(")");
  if (!excluded.empty()) {
    rows.description_.append(" excluding ").append(std::to_string(excluded.size())).append(" qubits");
  }
  return rows;
}

PartitionRows PartitionRows::cut(std::size_t num_qubits, const std::vector<std::vector<std::size_t>>& blocks,
                                 char basis) {
  check_qubits(num_qubits);
  if (basis != 'z' && basis != 'x') {
    throw partition_error(std::string("cut basis must be 'z' or 'x', got '").append(1, basis).append("'"));
  }
  const int bits = bits_for_count(blocks.size());
  std::vector<int> block_of(num_qubits, -1);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (blocks.size() > 1 && blocks[b].empty()) {
      throw partition_error(std::string("cut block ").append(std::to_string(b)).append(" is empty"));
    }
    for (std::size_t q : blocks[b]) {
      if (q >= num_qubits) {
        throw partition_error(std::string("cut block ")
                                  .append(std::to_string(b))
                                  .append(" names qubit ")
                                  .append(std::to_string(q))
                                  .append(", out of range for ")
                                  .append(std::to_string(num_qubits))
                                  .append(" qubits"));
      }
      if (block_of[q] >= 0) {
        throw partition_error(std::string("qubit ")
                                  .append(std::to_string(q))
                                  .append(" is in cut blocks ")
                                  .append(std::to_string(block_of[q]))
                                  .append(" and ")
                                  .append(std::to_string(b)));
      }
      block_of[q] = static_cast<int>(b);
    }
  }
  PartitionRows rows(num_qubits);
  for (int j = 0; j < bits; ++j) {
    Row row;
    for (std::size_t q = 0; q < num_qubits; ++q) {
      if (block_of[q] < 0 || !((block_of[q] >> j) & 1)) continue;
      auto& words = basis == 'z' ? row.z : row.x;
      words[q / 64] |= std::uint64_t{1} << (q % 64);
    }
    // Non-empty blocks make the rows independent: block 2^j is read by row j alone.
    if (!rows.add_independent(row)) throw std::logic_error("partition rows: dependent cut rows");
  }
  rows.description_ = std::string("cut(").append(std::to_string(blocks.size())).append(" blocks, ");
  rows.description_.append(1, basis).append(")");
  return rows;
}

std::uint64_t PartitionRows::fingerprint() const {
  std::uint64_t h = splitmix64(num_qubits_ ^ (static_cast<std::uint64_t>(rows_.size()) << 32));
  for (const Row& r : rows_) {
    for (int w = 0; w < 16; ++w) {
      h = splitmix64(h ^ r.x[w]);
      h = splitmix64(h ^ r.z[w]);
    }
  }
  return h;
}

}  // namespace paulistrings
