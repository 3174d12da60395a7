#pragma once
// The driver of one partition of a partitioned run (PartitionRunner) and the helpers it uses:
// the run's shape check, the layer loop with its exchanges, remote plans, layer passes and
// memory-budget cuts, the per-partition stats (docs/partitions.md). Included by
// partitioned_propagate.inl, whose entry points make one runner a partition.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/validate.h"
#include "paulistrings/partition/cpu_local_engine.h"
#include "paulistrings/partition/gpu_local_engine.h"
#include "paulistrings/partition/nccl_exchange.h"
#include "paulistrings/partition/cpu_pinning.h"

namespace paulistrings {
namespace partition_detail {

std::uint64_t hash_text(const std::string& text);

/// One field of the run's shape that every rank must agree on.
struct ShapeField {
  const char* name;
  std::uint64_t value;
};
/// Collective: throws std::runtime_error (the same text on every rank) naming the first field whose
/// value differs between ranks.
void check_shape(Transport& transport, const std::vector<ShapeField>& fields);
/// "partition r of P failed: message".
std::string peer_failure_message(int rank, int size, const std::string& message);

/// Distinct partition offsets s = part(d) ≠ 0 of the layer's realized deltas, ascending (the same list
/// on every partition, so the pairwise exchanges line up).
template <int W>
std::vector<std::uint32_t> remote_offsets(const PreparedChannel<W>& table, const PartitionRows& rows) {
  std::set<std::uint32_t> offsets;
  if (rows.bits() == 0) return {};
  if (table.form == PreparedChannel<W>::Form::rotation) {
    if (table.table_class != TableClass::key_preserving && table.sin_signed != 0.0) {
      const std::uint32_t s = rows.part(table.generator);
      if (s != 0) offsets.insert(s);
    }
  } else {
    for (const PauliString<W>& d : table.deltas) {
      const std::uint32_t s = rows.part(d);
      if (s != 0) offsets.insert(s);
    }
  }
  return {offsets.begin(), offsets.end()};
}

/// Order-independent fingerprint of a sum's terms (replicated inputs must agree).
template <int W, Coefficient C>
std::uint64_t input_fingerprint(const PauliSum<W, C>& sum) {
  std::uint64_t total = splitmix64(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) {
    const PauliString<W>& key = sum.keys()[i];
    std::uint64_t h = 0x51ed'2701'0000'0000ULL;
    for (int w = 0; w < W; ++w) h = splitmix64(h ^ key.x[w]) ^ splitmix64(h + key.z[w]);
    const C c = sum.coefficients()[i];
    if constexpr (std::same_as<C, Complex>) {
      h = splitmix64(h ^ std::bit_cast<std::uint64_t>(c.real())) ^ std::bit_cast<std::uint64_t>(c.imag());
    } else {
      h = splitmix64(h ^ std::bit_cast<std::uint64_t>(c));
    }
    total += splitmix64(h);
  }
  return total;
}

/// A Transport that adds up the wall time spent in its calls (waiting for the partners included).
class TimedTransport final : public Transport {
 public:
  explicit TimedTransport(Transport& inner) : inner_(inner) {}
  double seconds() const { return seconds_; }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string kind() const override { return inner_.kind(); }
  bool shares_address_space() const override { return inner_.shares_address_space(); }
  std::vector<std::byte> exchange(int partner, std::span<const std::byte> send) override {
    return timed([&] { return inner_.exchange(partner, send); });
  }
  std::span<const std::byte> exchange_into(int partner, std::span<const std::byte> send, ByteBuffer& receive) override {
    return timed([&] { return inner_.exchange_into(partner, send, receive); });
  }
  void all_reduce_sum(std::span<std::uint64_t> values) override {
    timed([&] { inner_.all_reduce_sum(values); });
  }
  void all_reduce_max(std::span<std::uint64_t> values) override {
    timed([&] { inner_.all_reduce_max(values); });
  }
  void all_reduce_sum(std::span<double> values) override {
    timed([&] { inner_.all_reduce_sum(values); });
  }

 private:
  template <class F>
  auto timed(F&& f) -> decltype(f()) {
    struct Add {
      double& total;
      std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
      ~Add() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
    } add{seconds_};
    return f();
  }

  Transport& inner_;
  double seconds_ = 0.0;
};

/// Runs one partition of a partitioned propagation against its Transport.
template <int W, Coefficient C>
class PartitionRunner {
 public:
  /// `callbacks`: whether this partition calls options.on_layer / should_stop (in-process: partition 0).
  /// `device`: the CUDA device of this partition's GPU engine, −1 for the CPU engine.
  PartitionRunner(Transport& transport, const PartitionRows& rows, const Circuit& circuit,
                  const PropagateOptions& options, const PartitionOptions& partition_options, bool callbacks,
                  int device = -1)
      : timed_(transport),
        transport_(timed_),
        rows_(rows),
        circuit_(circuit),
        options_(options),
        partition_options_(partition_options),
        callbacks_(callbacks),
        rank_(transport.rank()),
        size_(transport.size()),
        device_(device) {}

  /// `validation_error`: what this rank found wrong with its inputs (empty = fine), agreed on first.
  /// On return `share` holds this partition's result share (canonical order).
  PartitionedPropagation run(PauliSum<W, C>& share, const std::string& validation_error,
                             std::uint64_t input_fp) {
    if (auto agreed = agree_on_error(transport_, validation_error)) {
      if (agreed->rank == rank_) throw std::invalid_argument(validation_error);
      throw PartitionPeerFailure(agreed->rank, peer_failure_message(agreed->rank, size_, agreed->message));
    }
    check_shape(transport_, shape_fields(share, input_fp));
    if (partition_options_.input == PartitionInput::scattered) route_to_owners(share);
    passes_ = options_.truncation.layer_pass_steps();

    CpuEngineOptions cpu_options;
    const int all_threads = options_.threads > 0 ? options_.threads : available_cpus();
    cpu_options.threads = size_ == 1 ? options_.threads : std::max(1, all_threads / size_);
    if (partition_options_.transport != nullptr) cpu_options.threads = options_.threads;
    if (!partition_options_.cpu_lists.empty() && options_.threads == 0) {
      cpu_options.threads = static_cast<int>(partition_options_.cpu_lists[static_cast<std::size_t>(rank_)].size());
    }
    cpu_options.target_bucket_len = options_.target_bucket_len;
    cpu_options.min_buckets = options_.min_buckets;
    cpu_options.parallel_threshold = options_.parallel_threshold;
    cpu_options.in_place_rotations = options_.in_place_rotations;
    cpu_options.general_layer = options_.general_layer;
    std::unique_ptr<LocalEngine<W, C>> engine;
    guard("setup", [&] {
      if (device_ >= 0) {
        engine = std::make_unique<GpuLocalEngine<W, C>>(share, device_, options_.gpu);
        share = PauliSum<W, C>(share.num_qubits(), share.hash().seed());  // the device holds the share now
      } else {
        engine = std::make_unique<CpuLocalEngine<W, C>>(share, cpu_options);
      }
    });
    sync_errors();
    engine_ = engine.get();
    // The engine's capabilities, stated by the interfaces its type inherits (local_engine.h).
    bucketed_ = dynamic_cast<BucketedLayout<W>*>(engine_);
    device_exchange_ = dynamic_cast<DeviceExchange<W, C>*>(engine_);
    std::unique_ptr<NcclExchange> nccl;
    if (device_ >= 0 && partition_options_.use_nccl && size_ > 1 && !transport_.shares_address_space()) {
      guard("NCCL setup", [&] { nccl = std::make_unique<NcclExchange>(transport_, device_); });
      sync_errors();
      nccl_ = nccl.get();
    }

    result_.partitions.partitions = static_cast<std::size_t>(size_);
    result_.partitions.rows = rows_.description();
    result_.partitions.transport = transport_.kind() + (nccl_ != nullptr ? "+nccl" : "");
    PropagationStats& stats = result_.stats;
    stats.peak_terms = global_terms();
    const std::size_t layers = circuit_.size();
    stats.layers_done = options_.start_layer;
    for (std::size_t step = options_.start_layer; step < layers; ++step) {
      if (run_layer(step)) break;
    }
    flush();
    stats.final_terms = global_terms();
    per_partition_stats(Clock::now());
    engine_->export_to(share);
    return std::move(result_);
  }

 private:
  using Clock = std::chrono::steady_clock;

  struct Pending {
    LayerRecord record;
    PartitionLayerStats partition;
    std::uint64_t terms_in = 0, terms_out = 0, rows = 0, bytes = 0;
    double discarded = 0.0, budget = 0.0;
  };

  std::vector<ShapeField> shape_fields(const PauliSum<W, C>& share, std::uint64_t input_fp) const {
    const bool replicated = partition_options_.input == PartitionInput::replicated;
    return {
        {"circuit fingerprint", circuit_.fingerprint()},
        {"direction", static_cast<std::uint64_t>(options_.direction)},
        {"qubit count", share.num_qubits()},
        {"width", static_cast<std::uint64_t>(W)},
        {"coefficient type", std::same_as<C, Complex> ? 1u : 0u},
        {"partition rows", rows_.fingerprint()},
        {"truncation", hash_text(options_.truncation.description())},
        {"start layer", options_.start_layer},
        {"memory budget", options_.max_terms * 2 + (options_.auto_truncate ? 1 : 0)},
        {"should_stop presence", options_.should_stop ? 1u : 0u},
        {"input mode", static_cast<std::uint64_t>(partition_options_.input)},
        {"result mode", static_cast<std::uint64_t>(partition_options_.result)},
        {"hash seed", share.hash().seed()},
        {"engine (CPU or GPU)", static_cast<std::uint64_t>(device_ >= 0 ? LocalEngineKind::gpu : LocalEngineKind::cpu)},
        {"NCCL exchange (use_nccl)", partition_options_.use_nccl ? 1u : 0u},
        {"orbit routing threshold (route_orbits_from)", partition_options_.route_orbits_from},
        // The formulation decides how many exchanges a remote general layer makes (RemotePlan).
        {"general-layer formulation", static_cast<std::uint64_t>(options_.general_layer)},
        {"input terms (replicated input differs)", replicated ? input_fp : 0},
    };
  }

  /// Runs f unless this partition has already failed; an exception marks it failed (reported at the
  /// next communication point, where every partition learns of it).
  template <class F>
  void guard(std::string_view where, F&& f) {
    if (error_) return;
    try {
      f();
    } catch (const std::exception& e) {
      error_ = std::current_exception();
      error_text_ = std::string(where).append(": ").append(e.what());
    } catch (...) {
      error_ = std::current_exception();
      error_text_ = std::string(where).append(": unknown exception");
    }
  }

  /// Error agreement; `maxima` are max-reduced in the same reduction.
  void sync_errors(std::span<std::uint64_t> maxima = {}) {
    const std::optional<AgreedError> agreed = agree_on_error(transport_, error_text_, maxima);
    if (!agreed) return;
    if (error_ && agreed->rank == rank_) std::rethrow_exception(error_);
    throw PartitionPeerFailure(agreed->rank, peer_failure_message(agreed->rank, size_, agreed->message));
  }

  std::uint64_t global_terms() {
    sync_errors();
    std::uint64_t terms = engine_ ? engine_->size() : 0;
    transport_.all_reduce_sum(std::span<std::uint64_t>(&terms, 1));
    return terms;
  }

  /// Scattered input: in round j every rank sends its partner rank ⊕ 2^j the terms whose partition
  /// differs from its own rank in bit j; after log2 P rounds every term is with its owner (a term moves
  /// at most once per bit). Equal keys that met are summed (in arrival order).
  void route_to_owners(PauliSum<W, C>& share) {
    using Term = typename PauliSum<W, C>::Term;
    std::vector<Term> held = share.sorted_terms();
    for (int j = 0; (1 << j) < size_; ++j) {
      std::vector<PauliString<W>> send_keys;
      std::vector<C> send_values;
      std::vector<Term> kept;
      for (const Term& t : held) {
        if (((rows_.part(t.key) ^ static_cast<std::uint32_t>(rank_)) >> j) & 1u) {
          send_keys.push_back(t.key);
          send_values.push_back(t.coefficient);
        } else {
          kept.push_back(t);
        }
      }
      std::vector<std::byte> outgoing;
      append_rows<W, C>(outgoing, send_keys, send_values);
      const std::vector<std::byte> incoming = transport_.exchange(rank_ ^ (1 << j), outgoing);
      std::vector<PauliString<W>> keys;
      std::vector<C> values;
      read_rows<W, C>(incoming, keys, values);
      for (std::size_t i = 0; i < keys.size(); ++i) kept.push_back({keys[i], values[i]});
      held = std::move(kept);
    }
    share = PauliSum<W, C>::from_terms(share.num_qubits(), std::move(held), share.hash().seed());
  }

  /// Every partition's final terms and time split (one slot per rank, filled by its owner, summed).
  void per_partition_stats(Clock::time_point end) {
    const std::size_t P = static_cast<std::size_t>(size_), me = static_cast<std::size_t>(rank_);
    const double transport_seconds = timed_.seconds();
    const double total = std::chrono::duration<double>(end - started_).count();
    std::vector<std::uint64_t> terms(P, 0);
    std::vector<double> seconds(2 * P, 0.0);
    terms[me] = engine_->size();
    seconds[me] = transport_seconds;
    seconds[P + me] = std::max(0.0, total - transport_seconds);
    transport_.all_reduce_sum(std::span<std::uint64_t>(terms));
    transport_.all_reduce_sum(std::span<double>(seconds));
    PartitionStats& partitions = result_.partitions;
    partitions.final_terms.assign(terms.begin(), terms.end());
    partitions.transport_seconds.assign(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(P));
    partitions.work_seconds.assign(seconds.begin() + static_cast<std::ptrdiff_t>(P), seconds.end());
  }

  /// Completes the buffered layer records with global counts, calls on_layer, records them.
  void flush() {
    sync_errors();
    const std::size_t n = pending_.size();
    if (n == 0) return;
    std::vector<std::uint64_t> sums(4 * n), maxima(n);
    std::vector<double> weights(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const Pending& p = pending_[i];
      sums[4 * i] = p.terms_in;
      sums[4 * i + 1] = p.terms_out;
      sums[4 * i + 2] = p.rows;
      sums[4 * i + 3] = p.bytes;
      maxima[i] = p.terms_out;
      weights[2 * i] = p.discarded;
      weights[2 * i + 1] = p.budget;
    }
    transport_.all_reduce_sum(std::span<std::uint64_t>(sums));
    transport_.all_reduce_max(std::span<std::uint64_t>(maxima));
    transport_.all_reduce_sum(std::span<double>(weights));
    PropagationStats& stats = result_.stats;
    PartitionStats& partitions = result_.partitions;
    for (std::size_t i = 0; i < n; ++i) {
      Pending& p = pending_[i];
      LayerRecord& record = p.record;
      record.terms_in = sums[4 * i];
      record.terms_out = sums[4 * i + 1];
      record.discarded_weight = weights[2 * i];
      record.budget_discarded_weight = weights[2 * i + 1];
      PartitionLayerStats& layer = p.partition;
      layer.rows_exported = sums[4 * i + 2];
      layer.bytes_exported = sums[4 * i + 3];
      layer.max_terms = maxima[i];
      const double mean = static_cast<double>(record.terms_out) / size_;
      layer.imbalance = record.terms_out == 0 ? 1.0 : static_cast<double>(layer.max_terms) / mean;
      stats.peak_terms = std::max(stats.peak_terms, record.terms_out);
      stats.discarded_weight += record.discarded_weight;
      stats.collapses += record.collapsed;
      stats.budget_discarded_weight += record.budget_discarded_weight;
      partitions.remote_layers += layer.remote;
      partitions.local_layers += !layer.remote;
      partitions.orbit_routed_layers += layer.orbits_routed;
      partitions.rows_exported += layer.rows_exported;
      partitions.bytes_exported += layer.bytes_exported;
      partitions.max_imbalance = std::max(partitions.max_imbalance, layer.imbalance);
      if (callbacks_ && options_.on_layer) guard("on_layer", [&] { options_.on_layer(record); });
      if (options_.keep_layer_records) {
        stats.layers.push_back(std::move(record));
        partitions.layers.push_back(layer);
      }
    }
    pending_.clear();
  }

  /// The global approx_topn(limit) of the memory budget; returns this partition's dropped Σ|c|².
  double budget_cut(std::size_t limit, std::size_t next_fanout) {
    const std::uint64_t terms = global_terms();
    if (terms <= limit) return 0.0;
    if (!options_.auto_truncate) {
      throw MemoryBudgetExceeded(std::string("memory budget: the sum would grow to ")
                                     .append(std::to_string(terms * next_fanout))
                                     .append(" terms, over the limit of ")
                                     .append(std::to_string(options_.max_terms))
                                     .append(" (auto-truncation is off)"));
    }
    ++result_.stats.budget_truncations;
    double dropped = 0.0;
    if (size_ == 1) {
      guard("memory budget",
            [&] { dropped = engine_->finalize_layer(Truncation::approx_topn(limit)).discarded_weight; });
    } else {
      dropped = approx_topn(limit);
    }
    engine_detail::release_free_memory();
    return dropped;
  }

  double approx_topn(std::size_t n) {
    std::vector<std::uint64_t> histogram(2048, 0);
    guard("approx_topn", [&] { engine_->exponent_histogram(histogram); });
    transport_.all_reduce_sum(std::span<std::uint64_t>(histogram));
    std::uint64_t running = 0;
    int lowest = 2048;
    for (int bin = 2047; bin >= 0; --bin) {
      running += histogram[static_cast<std::size_t>(bin)];
      if (running > n) break;
      lowest = bin;
    }
    double dropped = 0.0;
    guard("approx_topn", [&] { dropped = engine_->drop_below_exponent(lowest); });
    return dropped;
  }

  /// Exact topn(n) over all partitions, fewer than the global term count: a radix select of the n-th
  /// largest |c|² bit pattern (8 bits a round, one 256-bin all-reduce each), then topn_cut's tie rule.
  /// |c|² is ≥ +0 or NaN, so for non-NaN values the bit order is the value order.
  double topn(std::size_t n) {
    double pivot = -std::numeric_limits<double>::infinity();
    bool keep_ties = true;
    if (n == 0) {
      pivot = std::numeric_limits<double>::infinity();
      keep_ties = false;
    } else {
      std::uint64_t rank = n, larger = 0, ties = 0, prefix = 0, mask = 0;
      std::vector<std::uint64_t> histogram(256);
      bool all_fit = false;
      for (int shift = 56; shift >= 0; shift -= 8) {
        std::fill(histogram.begin(), histogram.end(), 0);
        guard("topn", [&] { engine_->digit_histogram(prefix, mask, shift, histogram); });
        transport_.all_reduce_sum(std::span<std::uint64_t>(histogram));
        if (shift == 56) {
          std::uint64_t finite = 0;
          for (std::uint64_t count : histogram) finite += count;
          if (finite <= n) {  // every non-NaN term fits
            all_fit = true;
            break;
          }
        }
        std::size_t digit = 255;
        for (; digit > 0; --digit) {  // the counts add up to at least rank
          if (histogram[digit] >= rank) break;
          rank -= histogram[digit];
          larger += histogram[digit];
        }
        prefix |= static_cast<std::uint64_t>(digit) << shift;
        mask |= std::uint64_t{0xff} << shift;
        ties = histogram[digit];
      }
      if (!all_fit) {
        pivot = std::bit_cast<double>(prefix);
        keep_ties = larger + ties <= n;  // the tie group at the pivot fits whole
      }
    }
    double dropped = 0.0;
    guard("topn", [&] { dropped = engine_->drop_below(pivot, keep_ties); });
    return dropped;
  }

  /// Applies the layer passes of the policy over all partitions.
  LayerPassResult layer_pass() {
    LayerPassResult result;
    if (size_ == 1) {
      guard("layer truncation", [&] { result = engine_->finalize_layer(options_.truncation); });
      return result;
    }
    for (const Truncation::LayerPassStep& pass : passes_) {
      if (global_terms() <= pass.count) continue;
      result.discarded_weight +=
          pass.kind == Truncation::Kind::topn ? topn(pass.count) : approx_topn(pass.count);
    }
    return result;
  }

  /// Returns true when should_stop ended the run.
  bool run_layer(std::size_t step) {
    const std::size_t layers = circuit_.size();
    const std::size_t index = options_.direction == Direction::forward ? step : layers - 1 - step;
    const Channel& channel = circuit_[index];
    const auto start = Clock::now();
    Pending p;
    p.record.application_index = step;
    p.record.circuit_index = index;
    p.record.gate_name = channel.name();
    p.partition.application_index = step;
    p.terms_in = engine_->size();
    const PreparedChannel<W> table = prepare_channel<W>(channel, options_.direction);
    const std::vector<std::uint32_t> offsets = remote_offsets(table, rows_);
    p.partition.remote = !offsets.empty();
    p.partition.partners = offsets.size();
    bool communicated = p.partition.remote;
    if (options_.max_terms > 0) {
      const std::size_t fanout = static_cast<std::size_t>(std::max(table.max_fanout, 1));
      const std::size_t room = std::max<std::size_t>(2 * options_.max_terms / fanout, 1);
      p.budget += budget_cut(room, fanout);
      communicated = true;
    }
    double discarded = 0.0;
    if (offsets.empty()) {
      guard(layer_context(step, channel), [&] {
        if (partition_options_.before_layer) partition_options_.before_layer(rank_, step);
        discarded = engine_->apply_layer(table, options_.truncation);
      });
    } else if (device_exchange_ != nullptr && transport_.shares_address_space()) {
      discarded = device_exchange(p, table, offsets, step, channel);
    } else if (nccl_ != nullptr) {
      discarded = nccl_layer(p, table, offsets, step, channel);
    } else {
      discarded = host_exchange(p, table, offsets, step, channel);
    }
    LayerPassResult pass;
    if (options_.truncation.has_layer_pass()) {
      pass = layer_pass();
      communicated = communicated || size_ > 1;
    }
    // The same additions, in the same order, as the single-engine driver (P = 1 gives its bits).
    p.discarded = discarded;
    p.discarded += pass.discarded_weight;
    p.record.collapsed = pass.collapsed;
    if (options_.max_terms > 0) p.budget += budget_cut(options_.max_terms, 1);
    p.discarded += p.budget;
    p.terms_out = engine_->size();
    p.record.wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    pending_.push_back(std::move(p));
    result_.stats.layers_done = step + 1;
    const bool polls = static_cast<bool>(options_.should_stop);
    if (communicated || polls) flush();
    if (polls && step + 1 < layers) {
      std::uint64_t stop = 0;
      if (callbacks_) guard("should_stop", [&] { stop = options_.should_stop(step + 1) ? 1 : 0; });
      transport_.all_reduce_max(std::span<std::uint64_t>(&stop, 1));
      if (stop != 0) {
        result_.stats.stopped = true;
        return true;
      }
    }
    return false;
  }

  /// A remote layer whose rows cross in host memory (CPU partitions; GPU ranks without NCCL), by the
  /// engine's RemotePlan:
  ///  - merge: the channel without the per-term test (a coefficient is final only once the partners'
  ///    rows are in), the outputs owned by each partner rank ⊕ s exported, swapped, added to the
  ///    receiver's terms (equal keys sum), then the per-term test. GPU ranks export in the same step as
  ///    the channel (LocalEngine::apply_and_export); CPU partitions agree on the bucket count first (the
  ///    largest, in the error agreement's reduction) and export laid out by bucket, fused with the
  ///    channel for every table but the sort-merge formulation's (then after it, the count agreed between).
  ///  - append (permutations): the outputs are final where computed, so they are tested before they leave
  ///    and the receiver appends them.
  ///  - route_orbits (general tables, when the largest partition holds route_orbits_from terms or more,
  ///    agreed in the same reduction as the bucket count): the inputs move to their orbit's partition
  ///    first (one exchange), then as append.
  /// Partitions of one process swap the buffers' addresses and read the partner's buffer in place (a
  /// second swap keeps it unchanged until the reader is done); ranks swap the bytes.
  double host_exchange(Pending& p, const PreparedChannel<W>& table, const std::vector<std::uint32_t>& offsets,
                       std::size_t step, const Channel& channel) {
    std::vector<ExportedRows> outgoing;
    const auto count = [&] {
      for (const ExportedRows& rows : outgoing) {
        p.bytes += rows.bytes.size();
        p.rows += rows.rows;
      }
    };
    const auto self = static_cast<std::uint32_t>(rank_);
    RemotePlan plan = engine_->remote_plan(table, rows_, offsets);
    double discarded = 0.0;
    if (plan == RemotePlan::merge && device_exchange_ == nullptr &&
        !(bucketed_ != nullptr && bucketed_->fuses_with_export(table, rows_, offsets))) {
      // Two steps (the sort-merge formulation's general tables): the layer may refine the store, so the
      // bucket count is agreed between the layer and the export.
      apply_without_term_test(table, step, channel);
      std::uint64_t bits = static_cast<std::uint64_t>(bucket_bits());
      sync_errors(std::span<std::uint64_t>(&bits, 1));
      guard(layer_context(step, channel), [&] {
        if (bucketed_ != nullptr) bucketed_->refine_to(static_cast<int>(bits));
        outgoing = engine_->export_rows(rows_, self, offsets);
        count();
      });
      sync_errors();  // a partition that failed above must not leave its partners waiting
      exchange_rows(offsets, outgoing, step, channel, [&](std::span<const std::span<const std::byte>> incoming) {
        discarded = engine_->merge_rows_and_test(incoming, options_.truncation);
      });
      return discarded;
    }
    // One step (GPU ranks: no bucket layout, the layer may fuse with its export; CPU partitions: every
    // layer fused with its export, which does not refine the store, so the bucket count is agreed
    // before it, with the largest partition's size for the plan).
    std::uint64_t agreed[2] = {static_cast<std::uint64_t>(bucket_bits()), engine_->size()};
    if (device_exchange_ == nullptr) sync_errors(agreed);  // GPU partitions: the size plays no part
    if (plan == RemotePlan::route_orbits && !orbit_routing_pays(table, agreed[1])) plan = RemotePlan::merge;
    p.partition.orbits_routed = plan == RemotePlan::route_orbits;
    guard(layer_context(step, channel), [&] {
      if (partition_options_.before_layer) partition_options_.before_layer(rank_, step);
      if (bucketed_ != nullptr) bucketed_->refine_to(static_cast<int>(agreed[0]));
      if (plan == RemotePlan::route_orbits) {
        outgoing = engine_->export_orbit_members(table, rows_, self, offsets);
        count();
      }
    });
    if (plan == RemotePlan::route_orbits) {
      sync_errors();
      exchange_rows(offsets, outgoing, step, channel, [&](std::span<const std::span<const std::byte>> incoming) {
        engine_->append_rows(incoming, false);  // the agreed bucket count stays until the outputs leave
      });
    }
    guard(layer_context(step, channel), [&] {
      if (plan == RemotePlan::merge) {
        outgoing = engine_->apply_and_export(table, rows_, self, offsets);
      } else {
        outgoing = engine_->apply_and_export_final(table, rows_, self, offsets, options_.truncation, discarded);
      }
      count();
    });
    sync_errors();  // a partition that failed above must not leave its partners waiting
    exchange_rows(offsets, outgoing, step, channel, [&](std::span<const std::span<const std::byte>> incoming) {
      if (plan == RemotePlan::merge) {
        discarded = engine_->merge_rows_and_test(incoming, options_.truncation);
      } else {
        engine_->append_rows(incoming, true);
      }
    });
    return discarded;
  }

  /// Whether a remote general table routes its orbits (PartitionOptions::route_orbits_from): 0 = always;
  /// otherwise when the largest partition holds that many terms and the table is dense — a mean fanout
  /// of 8 or more outputs per input pattern, where a half orbit costs nearly a whole one (a Haar two-qubit
  /// unitary: ~16); a sparse table (gu2q: fanout ≤ 4) is cheaper on the merge plan. GPU partitions route
  /// only with 0: there routing was no faster than the merge plan. Why: docs/PERFORMANCE.md,
  /// "2026-12-02 — CPU partitions: orbits routed to one partition before a remote general layer"
  /// and "2026-12-02 — GPU partitions: orbits routed vs the merge plan".
  static bool dense_table(const PreparedChannel<W>& table) {
    const int patterns = table.support_size == 2 ? 16 : 4;
    int outputs = 0;
    for (int p = 0; p < patterns; ++p) outputs += table.fanout[static_cast<std::size_t>(p)];
    return outputs >= 8 * patterns;
  }
  /// `largest_partition`: agreed by the CPU partitions; GPU partitions do not read it.
  bool orbit_routing_pays(const PreparedChannel<W>& table, std::uint64_t largest_partition) const {
    const std::size_t from = partition_options_.route_orbits_from;
    if (from == 0) return true;
    return device_exchange_ == nullptr && largest_partition >= from && dense_table(table);
  }

  /// Sends outgoing[i] to partner rank ⊕ offsets[i] and hands what the partners sent to consume (inside
  /// the error guard). Partitions of one process swap the buffers' addresses and consume reads the
  /// partners' buffers in place; a second swap afterwards keeps each buffer unchanged until its reader
  /// is done. Ranks swap the bytes.
  template <class Consume>
  void exchange_rows(const std::vector<std::uint32_t>& offsets, const std::vector<ExportedRows>& outgoing,
                     std::size_t step, const Channel& channel, Consume&& consume) {
    if (transport_.shares_address_space()) {
      struct Address {
        const std::byte* data;
        std::size_t size;
      };
      std::vector<Address> mine(offsets.size());
      for (std::size_t i = 0; i < offsets.size(); ++i) mine[i] = {outgoing[i].bytes.data(), outgoing[i].bytes.size()};
      const std::vector<Address> theirs = swap_with_partners(offsets, mine, "in-process exchange");
      std::vector<std::span<const std::byte>> incoming;
      for (const Address& a : theirs) incoming.emplace_back(a.data, a.size);
      guard(layer_context(step, channel), [&] { consume(std::span<const std::span<const std::byte>>(incoming)); });
      release_exports(offsets);
    } else {
      // Received into buffers kept across layers (valid until the next exchange_rows).
      if (received_.size() < offsets.size()) received_.resize(offsets.size());
      std::vector<std::span<const std::byte>> incoming(offsets.size());
      for (std::size_t i = 0; i < offsets.size(); ++i) {
        incoming[i] = transport_.exchange_into(rank_ ^ static_cast<int>(offsets[i]), outgoing[i].bytes, received_[i]);
      }
      guard(layer_context(step, channel), [&] { consume(std::span<const std::span<const std::byte>>(incoming)); });
    }
  }

  /// The first step of every remote layer: the channel without the per-term test (a coefficient is final
  /// only once the partners' rows are in).
  void apply_without_term_test(const PreparedChannel<W>& table, std::size_t step, const Channel& channel) {
    guard(layer_context(step, channel), [&] {
      if (partition_options_.before_layer) partition_options_.before_layer(rank_, step);
      engine_->apply_layer(table, Truncation());
    });
  }

  /// Partitions of one process read their partners' exports in place: one empty swap per partner after
  /// the merges keeps every export unchanged until its readers are done.
  void release_exports(const std::vector<std::uint32_t>& offsets) {
    for (std::size_t i = 0; i < offsets.size(); ++i) transport_.exchange(rank_ ^ static_cast<int>(offsets[i]), {});
  }

  /// The plan of a remote layer whose rows stay on the device (GPU partitions): the engine's, with
  /// route_orbits kept only where it pays (orbit_routing_pays: for GPU partitions only when asked for
  /// every layer, whatever the sizes, so no reduction is needed to agree on it).
  RemotePlan device_plan(Pending& p, const PreparedChannel<W>& table, const std::vector<std::uint32_t>& offsets) {
    RemotePlan plan = engine_->remote_plan(table, rows_, offsets);
    if (plan == RemotePlan::route_orbits && !orbit_routing_pays(table, engine_->size())) plan = RemotePlan::merge;
    p.partition.orbits_routed = plan == RemotePlan::route_orbits;
    return plan;
  }

  /// One export of a remote GPU layer into this engine's device buffers (counted in `p`), by `plan`:
  /// merge — the channel without the per-term test and the outputs owned by other partitions, in one
  /// step where the engine fuses them (apply_and_export_on_device); route_orbits with `members` — its
  /// first step, the orbit members (export_orbit_members_on_device); append, and route_orbits without
  /// `members` — the tested outputs (apply_and_export_final_on_device, `discarded` set). before_layer
  /// runs once a layer, before its first export. Errors are agreed on before returning, so no partition
  /// is left waiting for a failed partner.
  std::vector<gpu::PeerRows> export_on_device(Pending& p, const PreparedChannel<W>& table,
                                              const std::vector<std::uint32_t>& offsets, std::size_t step,
                                              const Channel& channel, RemotePlan plan, bool members,
                                              double& discarded) {
    std::vector<gpu::PeerRows> outgoing;
    const auto self = static_cast<std::uint32_t>(rank_);
    guard(layer_context(step, channel), [&] {
      const bool first = plan != RemotePlan::route_orbits || members;
      if (first && partition_options_.before_layer) partition_options_.before_layer(rank_, step);
      if (plan == RemotePlan::merge) {
        outgoing = device_exchange_->apply_and_export_on_device(table, rows_, self, offsets);
      } else if (members) {
        outgoing = device_exchange_->export_orbit_members_on_device(table, rows_, self, offsets);
      } else {
        outgoing = device_exchange_->apply_and_export_final_on_device(table, rows_, self, offsets, options_.truncation,
                                                             discarded);
      }
      for (const gpu::PeerRows& rows : outgoing) {
        p.rows += rows.count;
        p.bytes += rows.count * kRowBytes<W, C>;
      }
    });
    sync_errors();
    return outgoing;
  }

  /// The exports of a remote GPU layer, in order, by plan: merge — one (the receiver merges, then
  /// tests); append — one (final outputs, appended); route_orbits — the orbit members (appended), then
  /// the final outputs (appended). exchange(outgoing, arrival) swaps one export with the partners and
  /// takes in what arrives. Returns the Σ|c|² the per-term test dropped on the sending side.
  template <class Exchange>
  double device_plan_steps(Pending& p, const PreparedChannel<W>& table, const std::vector<std::uint32_t>& offsets,
                           std::size_t step, const Channel& channel, Exchange&& exchange) {
    const RemotePlan plan = device_plan(p, table, offsets);
    double discarded = 0.0;
    if (plan == RemotePlan::route_orbits) {
      exchange(export_on_device(p, table, offsets, step, channel, plan, true, discarded), gpu::RowArrival::append);
    }
    const gpu::RowArrival arrival = plan == RemotePlan::merge ? gpu::RowArrival::merge : gpu::RowArrival::append;
    exchange(export_on_device(p, table, offsets, step, channel, plan, false, discarded), arrival);
    if (plan == RemotePlan::merge) {
      guard(layer_context(step, channel), [&] { discarded = engine_->apply_term_truncation(options_.truncation); });
    }
    return discarded;
  }

  /// Sends mine[i] to partner rank ⊕ offsets[i] and returns what each partner sent (one small value of
  /// a trivially copyable type per partner, through the transport).
  template <class T>
  std::vector<T> swap_with_partners(const std::vector<std::uint32_t>& offsets, const std::vector<T>& mine,
                                    const char* what) {
    std::vector<T> theirs(offsets.size());
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const std::vector<std::byte> received = transport_.exchange(
          rank_ ^ static_cast<int>(offsets[i]), std::as_bytes(std::span<const T>(&mine[i], 1)));
      if (received.size() != sizeof(T)) throw std::logic_error(std::string(what) + ": bad message size");
      std::memcpy(&theirs[i], received.data(), sizeof(T));
    }
    return theirs;
  }

  /// A remote layer of GPU partitions in one process: the partners swap the device addresses of their
  /// exports (a few bytes through the transport) and each merge reads the partners' rows on the device.
  /// A second swap after the merges keeps every export buffer unchanged until its readers are done.
  double device_exchange(Pending& p, const PreparedChannel<W>& table, const std::vector<std::uint32_t>& offsets,
                         std::size_t step, const Channel& channel) {
    return device_plan_steps(p, table, offsets, step, channel,
                             [&](const std::vector<gpu::PeerRows>& outgoing, gpu::RowArrival arrival) {
                               const std::vector<gpu::PeerRows> incoming =
                                   swap_with_partners(offsets, outgoing, "device exchange");
                               guard(layer_context(step, channel),
                                     [&] { device_exchange_->merge_rows_on_device(incoming, arrival); });
                               release_exports(offsets);
                             });
  }

  /// A remote layer of GPU ranks over NCCL: the row counts cross through the transport, then each pair
  /// swaps the rows device to device (one NCCL group per partner, on the sum's stream) and merges them.
  /// Room for the received rows is made, and agreed on, before any rank starts an NCCL call.
  double nccl_layer(Pending& p, const PreparedChannel<W>& table, const std::vector<std::uint32_t>& offsets,
                    std::size_t step, const Channel& channel) {
    return device_plan_steps(
        p, table, offsets, step, channel, [&](const std::vector<gpu::PeerRows>& outgoing, gpu::RowArrival arrival) {
          std::vector<std::uint64_t> mine(offsets.size());
          for (std::size_t i = 0; i < offsets.size(); ++i) mine[i] = outgoing[i].count;
          const std::vector<std::uint64_t> counts = swap_with_partners(offsets, mine, "NCCL exchange");
          guard(layer_context(step, channel), [&] { device_exchange_->prepare_merge(counts, arrival); });
          sync_errors();  // every rank has room: the NCCL calls below all find their partners
          guard(layer_context(step, channel), [&] {
            device_exchange_->merge_received(
                counts,
                [&](std::size_t k, void* keys, void* coefficients, void* stream) {
                  nccl_->swap(rank_ ^ static_cast<int>(offsets[k]), outgoing[k].keys, outgoing[k].coefficients,
                              outgoing[k].count, keys, coefficients, counts[k], sizeof(PauliString<W>), sizeof(C),
                              stream);
                },
                arrival);
          });
        });
  }

  static std::string layer_context(std::size_t step, const Channel& channel) {
    return std::string("layer ").append(std::to_string(step)).append(" (").append(channel.name()).append(")");
  }

  TimedTransport timed_;
  Transport& transport_;
  const PartitionRows& rows_;
  const Circuit& circuit_;
  const PropagateOptions& options_;
  const PartitionOptions& partition_options_;
  const bool callbacks_;
  const int rank_;
  const int size_;
  Clock::time_point started_ = Clock::now();
  std::vector<Truncation::LayerPassStep> passes_;  // the policy's layer passes, in finalize order
  const int device_;
  LocalEngine<W, C>* engine_ = nullptr;
  BucketedLayout<W>* bucketed_ = nullptr;           // the CPU engine: exports laid out by agreed buckets
  /// The bucket count (log2) the partitions agree on before a bucketed export; 0 for other engines.
  int bucket_bits() const { return bucketed_ != nullptr ? bucketed_->bucket_bits() : 0; }
  DeviceExchange<W, C>* device_exchange_ = nullptr;  // the GPU engine: rows cross in device memory
  NcclExchange* nccl_ = nullptr;
  std::exception_ptr error_;
  std::string error_text_;
  std::vector<Pending> pending_;
  std::vector<ByteBuffer> received_;  // rows from each partner (exchange_rows), capacity kept across layers
  PartitionedPropagation result_;
};

}  // namespace partition_detail
}  // namespace paulistrings
