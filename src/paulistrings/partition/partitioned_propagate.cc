// propagate_partitioned's runtime-width front, the shape check and the row helpers (the compiled
// instances are in partitioned_propagate_w1.cc … _w16.cc, one unit a width).

#include "paulistrings/partition/partitioned_propagate.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace paulistrings {

namespace partition_detail {

std::uint64_t hash_text(const std::string& text) {
  std::uint64_t h = splitmix64(text.size());
  for (unsigned char c : text) h = splitmix64(h ^ c);
  return h;
}

void check_shape(Transport& transport, const std::vector<ShapeField>& fields) {
  // max over values and over complements gives every field's max and min in one reduction.
  std::vector<std::uint64_t> values(2 * fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    values[i] = fields[i].value;
    values[fields.size() + i] = ~fields[i].value;
  }
  transport.all_reduce_max(std::span<std::uint64_t>(values));
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::uint64_t high = values[i], low = ~values[fields.size() + i];
    if (high == low) continue;
    char range[64];
    std::snprintf(range, sizeof range, "%#llx to %#llx", static_cast<unsigned long long>(low),
                  static_cast<unsigned long long>(high));
    std::string message("partitioned propagation: the ranks disagree on the ");
    message.append(fields[i].name).append(" (values from ").append(range).append("; this is rank ");
    message.append(std::to_string(transport.rank())).append(" of ").append(std::to_string(transport.size()));
    message.append(" with ");
    std::snprintf(range, sizeof range, "%#llx", static_cast<unsigned long long>(fields[i].value));
    throw std::runtime_error(message.append(range).append("): every rank must pass the same run"));
  }
}

std::string peer_failure_message(int rank, int size, const std::string& message) {
  return std::string("partitioned propagation stopped: partition ")
      .append(std::to_string(rank))
      .append(" of ")
      .append(std::to_string(size))
      .append(" failed: ")
      .append(message);
}

}  // namespace partition_detail

PartitionRowPolicy parse_row_policy(std::string_view name) {
  if (name == "seeded") return PartitionRowPolicy::seeded;
  if (name == "seeded_excluding") return PartitionRowPolicy::seeded_excluding;
  if (name == "cut") return PartitionRowPolicy::cut;
  throw std::invalid_argument("partition row policy must be 'seeded', 'seeded_excluding' or 'cut', got '" +
                              std::string(name) + "'");
}

PartitionRows make_partition_rows(const PartitionOptions& options, std::size_t num_qubits,
                                  std::size_t partitions) {
  const int bits = PartitionRows::bits_for_count(partitions);
  switch (options.row_policy) {
    case PartitionRowPolicy::seeded:
      return PartitionRows::seeded(bits, num_qubits, options.row_seed);
    case PartitionRowPolicy::seeded_excluding:
      return PartitionRows::seeded_excluding(bits, num_qubits, options.row_seed, options.excluded_qubits);
    case PartitionRowPolicy::cut:
      if (options.cut_blocks.size() != partitions) {
        throw std::invalid_argument(std::string("partition rows: a cut for ")
                                        .append(std::to_string(partitions))
                                        .append(" partitions needs ")
                                        .append(std::to_string(partitions))
                                        .append(" blocks, got ")
                                        .append(std::to_string(options.cut_blocks.size())));
      }
      return PartitionRows::cut(num_qubits, options.cut_blocks, options.cut_basis);
  }
  throw std::invalid_argument("partition rows: unknown row policy");
}

std::size_t count_remote_layers(const Circuit& circuit, const PartitionRows& rows) {
  std::size_t remote = 0;
  for (const Channel& channel : circuit) {
    // Realized deltas are the same in both directions (E† has the transposed transfer matrix).
    const PreparedChannel<16> table = prepare_channel<16>(channel, Direction::heisenberg);
    remote += !partition_detail::remote_offsets(table, rows).empty();
  }
  return remote;
}

PartitionedPropagation propagate_partitioned(AnyPauliSum& sum, const Circuit& circuit,
                                             const PropagateOptions& options,
                                             const PartitionOptions& partition_options) {
  for (const Channel& channel : circuit) {
    if (channel.has_complex_transfer()) {
      sum.make_complex();
      break;
    }
  }
  return sum.visit(
      [&](auto& typed) { return propagate_partitioned(typed, circuit, options, partition_options); });
}

}  // namespace paulistrings
