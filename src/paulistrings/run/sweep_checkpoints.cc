// The checkpoints of a parameter sweep: see sweep_checkpoints.h.
#include "paulistrings/run/sweep_checkpoints.h"

#include <algorithm>
#include <bit>
#include <exception>
#include <string_view>
#include <utility>
#include <vector>

#include "paulistrings/io/checkpoint.h"
#include "paulistrings/run/checkpoints.h"
#include "paulistrings/run/orchestrate.h"

namespace paulistrings {
namespace {

/// FNV-1a 64 over the 8 little-endian bytes of `value`, continuing `hash`.
std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) hash = (hash ^ ((value >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  return hash;
}
constexpr std::uint64_t kBasis = 0xcbf29ce484222325ULL;

/// The fingerprint of one channel (a circuit of it alone).
std::uint64_t channel_fingerprint(std::size_t num_qubits, const Channel& channel) {
  Circuit circuit(num_qubits);
  circuit.append(channel);
  return circuit.fingerprint();
}

/// Adds a segment's statistics to the run's (the first segment's are taken whole).
void add_segment(SweepStats& run, SweepStats&& segment, bool first) {
  if (first) {
    run = std::move(segment);
    return;
  }
  add_segment_stats(run.stats, std::move(segment.stats));
  run.groups = segment.groups;
  run.splits += segment.splits;
  run.apart_columns = segment.apart_columns;
  for (std::size_t k = 0; k < run.discarded_weight.size() && k < segment.discarded_weight.size(); ++k)
    run.discarded_weight[k] += segment.discarded_weight[k];
}

}  // namespace

std::uint64_t sweep_circuit_fingerprint(std::span<const Circuit> columns) {
  std::uint64_t hash = mix(kBasis, columns.size());
  for (const Circuit& circuit : columns) hash = mix(hash, circuit.fingerprint());
  return hash;
}

std::uint64_t sweep_task_fingerprint(std::uint64_t base, std::span<const Circuit> columns,
                                     std::span<const SweepGradient> gradients) {
  std::uint64_t hash = mix(mix(mix(kBasis, base), columns.size()), gradients.size());
  const std::size_t num_qubits = columns.empty() ? 0 : columns[0].num_qubits();
  for (const SweepGradient& gradient : gradients) {
    hash = mix(hash, gradient.name.size());
    for (const char c : gradient.name) hash = mix(hash, static_cast<unsigned char>(c));
    hash = mix(hash, gradient.derivatives.size());
    for (const auto& column : gradient.derivatives) {
      hash = mix(hash, column.size());
      for (const LayerDerivative& d : column) {
        hash = mix(hash, d.layer);
        hash = mix(hash, std::bit_cast<std::uint64_t>(d.scale));
        hash = mix(hash, channel_fingerprint(num_qubits, d.plus));
        hash = mix(hash, channel_fingerprint(num_qubits, d.minus));
      }
    }
  }
  return hash;
}

SweepResumePoint load_sweep_resume(const std::filesystem::path& path, std::span<const Circuit> columns,
                                   std::size_t all_columns, std::size_t num_qubits,
                                   std::span<const std::uint64_t> fingerprints,
                                   const std::string& fingerprint_covers) {
  if (!std::filesystem::exists(path)) throw CheckpointNotFound(path);
  // A split sweep's file (version 3) holds every group; any other, the one group.
  std::vector<io::ColumnGroup> groups;
  if (io::checkpoint_version(path) == 3) {
    groups = io::load_groups_checkpoint(path);
  } else {
    groups.emplace_back();
    groups[0].rows = io::load_columns_checkpoint(path);
  }
  const io::ColumnsHeader& header = groups[0].rows.header;
  std::size_t held_columns = 0;
  for (const io::ColumnGroup& group : groups) held_columns += group.rows.header.columns;
  const std::string name = "checkpoint " + path.string();
  if (held_columns != all_columns) {
    throw std::invalid_argument(
        name + " holds " + std::to_string(held_columns) + " coefficient columns a term but this sweep has " +
        std::to_string(all_columns) + " (its values and derivatives); refusing to resume from it");
  }
  SweepResumePoint resume;
  resume.path = path;
  bool matched = false;
  for (std::size_t i = 0; i < fingerprints.size() && !matched; ++i) {
    if (header.task_fingerprint == fingerprints[i]) {
      matched = true;
      resume.match = i;
    }
  }
  const std::size_t layers = columns.empty() ? 0 : columns[0].size();
  if (!matched || header.circuit_fingerprint != sweep_circuit_fingerprint(columns) ||
      header.num_qubits != num_qubits || header.layers_done > layers) {
    throw std::invalid_argument(name + " belongs to a different " + fingerprint_covers +
                                "; refusing to resume from it");
  }
  SweepState& state = resume.state;
  state.layers_done = static_cast<std::size_t>(header.layers_done);
  const auto rows_of = [&](io::ColumnsCheckpoint& checkpoint) {
    return std::visit(
        [&](auto& rows) {
          using Rows = std::decay_t<decltype(rows)>;
          return AnySweepSum(SweepSum<Rows::kWidth, typename Rows::Coeff>(
              checkpoint.header.num_qubits, checkpoint.header.columns, std::move(rows.keys),
              std::move(rows.coefficients)));
        },
        checkpoint.rows);
  };
  if (groups.size() == 1 && groups[0].place.count == 0) {  // a version-1 or -2 file: one group
    state.bucket_bits = header.bucket_bits;
    state.light_cone = header.light_cone;
    state.sum = rows_of(groups[0].rows);
    return resume;
  }
  // resume_sweep checks that the groups are this sweep's columns, each with its derivative columns. The
  // union is not built: `sum` gets no rows, only the sweep's qubits, columns and coefficient type.
  std::visit(
      [&](const auto& rows) {
        using Rows = std::decay_t<decltype(rows)>;
        state.sum = AnySweepSum(
            SweepSum<Rows::kWidth, typename Rows::Coeff>(header.num_qubits, held_columns, {}, {}));
      },
      groups[0].rows.rows);
  for (io::ColumnGroup& group : groups) {
    SweepGroupState part;
    part.first = group.place.first;
    part.count = group.place.count;
    part.next_count = group.place.next_count;
    part.apart = group.place.apart;
    part.bucket_bits = group.rows.header.bucket_bits;
    part.light_cone = group.rows.header.light_cone;
    part.sum = rows_of(group.rows);
    state.groups.push_back(std::move(part));
  }
  return resume;
}

void write_sweep_checkpoint(const std::filesystem::path& path, std::uint64_t circuit_fingerprint,
                            std::uint64_t task_fingerprint, const SweepState& state) {
  const auto header_of = [&](const AnySweepSum& sum, int bucket_bits,
                             const std::vector<std::uint64_t>& cone) {
    io::ColumnsHeader header;
    header.circuit_fingerprint = circuit_fingerprint;
    header.task_fingerprint = task_fingerprint;
    header.layers_done = state.layers_done;
    header.bucket_bits = bucket_bits;
    header.num_qubits = sum.num_qubits();
    header.columns = sum.columns();
    header.light_cone = cone;
    return header;
  };
  if (state.groups.empty()) {
    const io::ColumnsHeader header = header_of(state.sum, state.bucket_bits, state.light_cone);
    state.sum.visit([&](const auto& sum) {
      using Sum = std::decay_t<decltype(sum)>;
      io::save_columns_checkpoint<Sum::kWidth, typename Sum::Coeff>(path, header, sum.keys(),
                                                                    sum.coefficients());
    });
  } else {
    // Split: every group, each with its rows, bucket count and light cone, in one version-3 file.
    state.groups[0].sum.visit([&](const auto& first) {
      using Sum = std::decay_t<decltype(first)>;
      constexpr int W = Sum::kWidth;
      using C = typename Sum::Coeff;
      std::vector<io::ColumnGroupRows<W, C>> groups;
      for (const SweepGroupState& group : state.groups) {
        const auto* rows = group.sum.get_if<W, C>();
        if (rows == nullptr)
          throw std::invalid_argument(
              "write_sweep_checkpoint: the groups' rows differ in width or coefficient type");
        io::ColumnGroupRows<W, C> out;
        out.place = {group.first, group.count, group.next_count, group.apart};
        out.header = header_of(group.sum, group.bucket_bits, group.light_cone);
        out.keys = rows->keys();
        out.coefficients = rows->coefficients();
        groups.push_back(std::move(out));
      }
      io::save_groups_checkpoint<W, C>(path, groups);
    });
  }
  io::remove_other_checkpoints(path, 0);
}

SweepRunResult run_sweep_segments(const AnyPauliSum& observable, std::span<const Circuit> columns,
                                  std::span<const SweepGradient> gradients, const SweepRunOptions& run,
                                  SweepState& state, bool resumed) {
  using Clock = std::chrono::steady_clock;
  const bool checkpointing = run.checkpoint.has_value();
  const std::size_t every = run.checkpoint_every;
  const bool by_time = checkpointing && every == 0 && run.checkpoint_interval.count() > 0;
  Clock::time_point last_saved = Clock::now();
  Clock::duration interval = run.checkpoint_interval;
  const auto interrupted = [&] { return run.interrupted && run.interrupted(); };
  PropagateOptions options = run.propagate;
  options.should_stop = [&](std::size_t done) {
    return interrupted() || (checkpointing && every > 0 && done % every == 0) ||
           (by_time && Clock::now() - last_saved >= interval);
  };
  SweepRunResult result;
  std::optional<std::size_t> saved_layers;  // layers done at the last checkpoint this run wrote
  for (bool first = true;; first = false) {
    SweepStats segment;
    try {
      segment = resumed ? resume_sweep(observable, columns, options, state, gradients)
                        : propagate_sweep(observable, columns, options, state, gradients);
    } catch (const HostMemoryExceeded& e) {
      // As an ordinary run (run/orchestrate.h): the state before the layer the guard refused is kept.
      const HostMemoryExceeded::Details& d = e.details();
      std::string what = e.what();
      if (checkpointing && d.state_kept && d.layers_done > 0 && state.layers_done == d.layers_done &&
          state.sum.columns() > 0 && state.sum.num_qubits() == observable.num_qubits()) {
        try {
          write_sweep_checkpoint(*run.checkpoint, run.circuit_fingerprint, run.task_fingerprint, state);
          what += "; checkpoint " + run.checkpoint->string() + " written after layer " +
                  std::to_string(d.layers_done);
        } catch (const std::exception& failure) {
          what += std::string("; writing the checkpoint failed: ") + failure.what();
        }
      } else if (saved_layers) {
        what += "; the last checkpoint, " + run.checkpoint->string() + ", holds layer " +
                std::to_string(*saved_layers);
      }
      throw HostMemoryExceeded(what, d);
    }
    resumed = true;
    const bool stopped = segment.stats.stopped || interrupted();
    add_segment(result.stats, std::move(segment), first);
    if (!stopped) break;
    if (checkpointing && saved_layers != state.layers_done) {
      const Clock::time_point began = Clock::now();
      write_sweep_checkpoint(*run.checkpoint, run.circuit_fingerprint, run.task_fingerprint, state);
      saved_layers = state.layers_done;
      last_saved = Clock::now();
      interval = std::max<Clock::duration>(run.checkpoint_interval, 10 * (last_saved - began));
    }
    result.checkpoint_written = checkpointing;
    if (interrupted()) {
      result.interrupted = true;
      return result;
    }
  }
  return result;
}

}  // namespace paulistrings
