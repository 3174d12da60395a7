// The orchestration of a long run: see orchestrate.h.
#include "paulistrings/run/orchestrate.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "paulistrings/run/memory_budget.h"

namespace paulistrings {
namespace {

/// Adds a segment's partition statistics to the run's (the first segment's are taken whole).
void merge_partition_stats(PartitionStats& run, PartitionStats&& segment, bool first) {
  if (first) {
    run = std::move(segment);
    return;
  }
  run.remote_layers += segment.remote_layers;
  run.local_layers += segment.local_layers;
  run.orbit_routed_layers += segment.orbit_routed_layers;
  run.rows_exported += segment.rows_exported;
  run.bytes_exported += segment.bytes_exported;
  run.max_imbalance = std::max(run.max_imbalance, segment.max_imbalance);
  run.layers.insert(run.layers.end(), segment.layers.begin(), segment.layers.end());
  run.final_terms = std::move(segment.final_terms);
  const auto add = [](std::vector<double>& into, const std::vector<double>& more) {
    if (into.size() < more.size()) into.resize(more.size(), 0.0);
    for (std::size_t r = 0; r < more.size(); ++r) into[r] += more[r];
  };
  add(run.transport_seconds, segment.transport_seconds);
  add(run.work_seconds, segment.work_seconds);
}

/// Adds a segment (one propagate call) to the run's result.
void add_segment(RunResult& result, Propagation&& segment, bool first) {
  // final_terms: over every partition (a local result holds only this rank's).
  add_segment_stats(result.stats, std::move(segment.stats));
  result.engine = segment.engine;
  if (segment.engine == EngineKind::partitioned || segment.engine == EngineKind::distributed) {
    merge_partition_stats(result.partitions, std::move(segment.partitions), first);
  }
}

bool has_complex_transfer(const Circuit& circuit) {
  return std::any_of(circuit.begin(), circuit.end(),
                     [](const Channel& c) { return c.has_complex_transfer(); });
}

/// Whether the layers run on GPUs (the memory limit is then in device bytes, and the host guard is off).
bool on_devices(const RunOptions& options) {
  return options.propagate.device >= 0 || !options.partition.devices.empty();
}

/// The devices of one process's run that a memory limit applies to, each (a device shared by several
/// partitions counts once).
std::size_t distinct_devices(const RunOptions& options) {
  std::vector<int> devices = options.partition.devices;
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return std::max<std::size_t>(1, devices.size());
}

}  // namespace

Orchestration::Orchestration(const Circuit& circuit, std::size_t num_qubits, RunOptions options,
                             std::vector<std::uint64_t> fingerprints, std::size_t rank, std::size_t ranks)
    : circuit_(circuit), options_(std::move(options)), fingerprints_(std::move(fingerprints)) {
  options_.partition.transport = nullptr;  // join() sets it
  if (fingerprints_.empty()) fingerprints_.push_back(options_.fingerprint);
  if (options_.resume) {
    resume_ = load_resume(*options_.resume, circuit_, num_qubits, fingerprints_, options_.fingerprint_covers,
                          rank, ranks, options_.propagate.threads);
  }
  // What the process holds now (the resumed sum included) is not the run's to use. On GPUs the limit is
  // in device bytes, of which the run holds none yet.
  if (options_.memory_limit && !on_devices(options_)) {
    baseline_ = resident_bytes();
    check_budget_room(*options_.memory_limit, baseline_, options_.memory_limit_name);
  } else if (options_.memory_limit) {
    device_budget_terms(*options_.memory_limit, 1, false, options_.memory_limit_name);  // the room check
  }
  if (options_.memory_guard && !on_devices(options_)) {
    guard_ = options_.memory_guard_bytes
                 ? HostAllowance{*options_.memory_guard_bytes, "the memory guard's allowance"}
                 : host_allowance_now();
  }
}

void Orchestration::join(Transport* transport) {
  if (transport == nullptr) return;
  options_.partition.transport = transport;
  ranks_ = static_cast<std::size_t>(transport->size());
  if (resume_ && resume_->in_parts) {
    // Each rank read its own parts.
    try {
      agree_on_resume_parts(*transport, *resume_, fingerprints_.size() > 1);
    } catch (const std::invalid_argument&) {
      if (options_.on_shared_ending) options_.on_shared_ending();
      throw;
    }
  }
  if (options_.memory_limit) {
    // Every rank passed the room check with its own baseline, so it passes with the largest.
    std::uint64_t largest = baseline_;
    transport->all_reduce_max(std::span<std::uint64_t>(&largest, 1));
    baseline_ = largest;
  }
}

std::size_t Orchestration::start_layer(std::size_t index) const {
  return resume_ && resume_->match == index ? resume_->checkpoint.layers_done : 0;
}

std::size_t Orchestration::term_budget(const AnyPauliSum& sum) const {
  const bool complex_coefficients = sum.is_complex() || has_complex_transfer(circuit_);
  std::size_t terms = 0;
  if (on_devices(options_)) {
    terms = device_budget_terms(*options_.memory_limit, sum.width(), complex_coefficients,
                                options_.memory_limit_name) *
            distinct_devices(options_);
  } else if (choose_engine(options_.propagate, options_.partition) == EngineKind::column) {
    terms = column_budget_terms(*options_.memory_limit, baseline_, sum.width(), complex_coefficients,
                                options_.memory_limit_name);
  } else {
    terms = budget_terms(*options_.memory_limit, baseline_, sum.width(), complex_coefficients,
                         options_.memory_limit_name);
  }
  // A global count: per_rank lets every rank hold a limit's worth.
  if (options_.partition.transport != nullptr && options_.distributed_budget == DistributedBudget::per_rank) {
    terms *= ranks_;
  }
  return terms;
}

RunResult Orchestration::propagate(std::size_t index, AnyPauliSum& sum) {
  Transport* const transport = options_.partition.transport;
  const bool resumed = resume_ && resume_->match == index;
  const bool checkpointing = options_.checkpoint.has_value() && !(resume_ && index < resume_->match);
  PropagateOptions options = options_.propagate;
  PartitionOptions partition = options_.partition;
  options.start_layer = 0;
  if (resumed) {
    sum = std::move(resume_->checkpoint.sum);
    options.start_layer = resume_->checkpoint.layers_done;
    // A checkpoint in parts: this rank holds the parts it read (the run routes each term to its owner);
    // a single file: every rank holds the whole sum.
    if (transport != nullptr)
      partition.input = resume_->in_parts ? PartitionInput::scattered : PartitionInput::replicated;
  }
  RunResult result;
  if (options_.memory_limit) options.max_terms = result.max_terms = term_budget(sum);
  const EngineKind engine = choose_engine(options, partition);
  if (guard_.bytes > 0 &&
      (engine == EngineKind::cpu || engine == EngineKind::reference || engine == EngineKind::column)) {
    const bool complex_coefficients = sum.is_complex() || has_complex_transfer(circuit_);
    options.memory_guard.allowed_bytes = guard_.bytes;
    options.memory_guard.bytes_per_term =
        engine == EngineKind::column
            ? column_host_bytes_per_term(sum.width(), complex_coefficients)
            : host_bytes_per_term(sum.width(), complex_coefficients, engine == EngineKind::reference);
    options.memory_guard.source = guard_.source;
  }
  // The latest checkpoint of this observable and its layer (named when memory runs out and the state
  // is lost).
  std::optional<LastCheckpoint> checkpoint_layer;
  if (resumed) checkpoint_layer = LastCheckpoint{*options_.resume, resume_->checkpoint.layers_done};
  using Clock = std::chrono::steady_clock;
  const std::size_t every = options_.checkpoint_every;
  const bool by_time = checkpointing && every == 0 && options_.checkpoint_interval.count() > 0;
  Clock::time_point last_saved = Clock::now();
  Clock::duration interval = options_.checkpoint_interval;
  if (checkpointing && every > 0) options.block_boundary = every;  // should_stop sees every multiple
  options.should_stop = [&](std::size_t done) {
    return (options_.interrupted && options_.interrupted()) ||
           (checkpointing && every > 0 && done % every == 0) || (by_time && Clock::now() - last_saved >= interval);
  };
  // A distributed run that checkpoints keeps its result distributed between segments: each rank writes
  // its share as its part and passes exactly that share to the next segment; a gathered result is
  // gathered once at the end.
  const bool in_segments = transport != nullptr && checkpointing;
  const PartitionResult wanted = partition.result;
  if (in_segments) partition.result = PartitionResult::local;

  std::optional<std::size_t> saved_layers;  // layers done at the last checkpoint this run wrote
  for (bool first = true;; first = false) {
    Propagation segment = [&] {
      try {
        try {
          return paulistrings::propagate(sum, circuit_, options, partition);
        } catch (const HostMemoryExceeded& e) {
          stop_for_memory(e, index, sum, checkpointing, checkpoint_layer);
        } catch (const std::bad_alloc&) {
          HostMemoryExceeded::Details details;
          details.layers_done = options.start_layer;
          details.state_kept = false;
          stop_for_memory(HostMemoryExceeded("out of host memory: an allocation was refused (std::bad_alloc) "
                                             "outside the layers, in the run from layer " +
                                                 std::to_string(options.start_layer),
                                             std::move(details)),
                          index, sum, checkpointing, checkpoint_layer);
        }
      } catch (const LayerInterrupted&) {
        // Stopped inside a layer: `sum` still holds the state the segment began with.
        Propagation abandoned;
        abandoned.engine = choose_engine(options, partition);
        abandoned.stats.layers_done = options.start_layer;
        abandoned.stats.stopped = true;
        abandoned.stats.final_terms = sum.size();
        result.abandoned_layer = true;
        return abandoned;
      } catch (...) {
        // The partitioned driver agrees on errors: every rank throws here together.
        if (transport != nullptr && options_.on_shared_ending) options_.on_shared_ending();
        throw;
      }
    }();
    const std::size_t layers_done = segment.stats.layers_done;
    // Once the CPU engine's column phase has ended, the segments after it start on the coset engine
    // (the phase would end again at once, after a layer and a rebuild of the sum).
    const bool phase_ended = segment.stats.column_layers < layers_done - options.start_layer;
    // A signal in the last layer is an interruption too, not a completed run (in one process: under a
    // transport the ranks would first have to agree on it).
    const bool stopped =
        segment.stats.stopped || (transport == nullptr && options_.interrupted && options_.interrupted());
    add_segment(result, std::move(segment), first);
    if (!stopped) break;
    if (transport != nullptr) partition.input = PartitionInput::share;  // each rank now holds its share
    // After an abandoned layer the state may be the one this run saved when the segment began.
    if (checkpointing && saved_layers != layers_done) {
      const Clock::time_point began = Clock::now();
      write_checkpoint(*options_.checkpoint, circuit_, fingerprints_[index], layers_done, sum, transport);
      checkpoint_layer = LastCheckpoint{*options_.checkpoint, layers_done};
      saved_layers = layers_done;
      last_saved = Clock::now();
      interval = std::max<Clock::duration>(options_.checkpoint_interval, 10 * (last_saved - began));
    }
    result.checkpoint_written = checkpointing;
    bool interrupted = options_.interrupted && options_.interrupted();
    if (transport != nullptr) {
      // Every rank stopped at this layer (the stop vote is shared), but maybe only some were interrupted:
      // all must leave or all go on.
      std::uint64_t any = interrupted ? 1 : 0;
      transport->all_reduce_max(std::span<std::uint64_t>(&any, 1));
      interrupted = any != 0;
    }
    if (interrupted) {
      if (transport != nullptr && options_.on_shared_ending) options_.on_shared_ending();
      result.interrupted = true;
      return result;
    }
    options.start_layer = layers_done;
    if (phase_ended) options.column_phase.enabled = false;
  }
  if (in_segments && wanted == PartitionResult::gather) {
    // No layer: only the gather of the shares (every rank then holds the whole sum).
    PropagateOptions gather = options_.propagate;
    gather.start_layer = 0;
    gather.max_terms = 0;
    gather.keep_layer_records = false;
    gather.on_layer = nullptr;
    gather.should_stop = nullptr;
    partition.input = PartitionInput::share;
    partition.result = PartitionResult::gather;
    try {
      paulistrings::propagate(sum, Circuit(circuit_.num_qubits()), gather, partition);
    } catch (...) {
      if (options_.on_shared_ending) options_.on_shared_ending();
      throw;
    }
  }
  return result;
}

void Orchestration::stop_for_memory(const HostMemoryExceeded& stop, std::size_t index, const AnyPauliSum& sum,
                                    bool checkpointing, const std::optional<LastCheckpoint>& last) const {
  const HostMemoryExceeded::Details& d = stop.details();
  std::string what = stop.what();
  if (checkpointing && d.state_kept && d.layers_done > 0) {
    // The sum holds the state after the layers done (propagate() handed it back): keep the work.
    try {
      write_checkpoint(*options_.checkpoint, circuit_, fingerprints_[index], d.layers_done, sum, nullptr);
      what += "; checkpoint " + options_.checkpoint->string() + " written after layer " +
              std::to_string(d.layers_done);
    } catch (const std::exception& e) {
      what += std::string("; writing the checkpoint failed: ") + e.what();
    }
  } else if (last) {
    what += "; the last checkpoint, " + last->path.string() + ", holds layer " + std::to_string(last->layer);
  }
  what += "; to run within the host's memory, set " + options_.memory_limit_name +
          " (the sum is then cut to fit, and the cuts reported) or truncate harder (" +
          options_.stricter_truncation_name + ")";
  throw HostMemoryExceeded(what, d);
}

RunResult orchestrate(AnyPauliSum& sum, const Circuit& circuit, RunOptions options) {
  Transport* const transport = options.partition.transport;
  const std::size_t rank = transport != nullptr ? static_cast<std::size_t>(transport->rank()) : 0;
  const std::size_t ranks = transport != nullptr ? static_cast<std::size_t>(transport->size()) : 1;
  const std::optional<std::filesystem::path> resume = options.resume;
  const std::function<void()> on_shared_ending = options.on_shared_ending;
  std::optional<Orchestration> run;
  std::exception_ptr error;
  try {
    run.emplace(circuit, sum.num_qubits(), std::move(options), std::vector<std::uint64_t>{}, rank, ranks);
  } catch (...) {
    if (transport == nullptr) throw;
    error = std::current_exception();
  }
  if (transport != nullptr) {
    // A rank that cannot start must not leave the others waiting in the run's first collective call.
    std::uint64_t failed = error ? 1 : 0;
    transport->all_reduce_max(std::span<std::uint64_t>(&failed, 1));
    if (failed != 0) {
      if (on_shared_ending) on_shared_ending();
      if (error) std::rethrow_exception(error);
      if (resume) {
        throw std::invalid_argument("checkpoint " + resume->string() +
                                    ": another rank could not resume from it; refusing to resume");
      }
      throw std::invalid_argument(
          "another rank could not start the run (its memory limit); refusing to start");
    }
  }
  run->join(transport);
  return run->propagate(0, sum);
}

}  // namespace paulistrings
