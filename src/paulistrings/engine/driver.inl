// Template body of run_layers (included by driver.h).

#include <algorithm>
#include <chrono>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/text.h"

namespace paulistrings {

namespace engine_detail {

/// The circuit index of application step `step` (forward: first to last; Heisenberg: last to first).
inline std::size_t circuit_index(Direction direction, std::size_t layers, std::size_t step) {
  return direction == Direction::forward ? step : layers - 1 - step;
}

/// After a memory-budget cut: gives the pages the allocator holds free back to the system. glibc keeps
/// what a thread freed in that thread's arena, where no other thread reuses it, so the growth up to the
/// next cut would add it to the budget's working set (docs/design.md §2.8). A few milliseconds a call,
/// against the cut's pass over the sum; elsewhere than glibc a no-op.
inline void release_free_memory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

/// The memory-budget cut: approx_topn down to `limit` terms when the sum holds more, then
/// release_free_memory.
template <int W, class E>
double budget_cut(E& engine, std::size_t limit, std::size_t next_fanout, const PropagateOptions& options,
                  PropagationStats& stats) {
  if (engine.size() <= limit) return 0.0;
  if (!options.auto_truncate) {
    throw MemoryBudgetExceeded("memory budget: the sum would grow to " +
                               std::to_string(engine.size() * next_fanout) + " terms, over the limit of " +
                               std::to_string(options.max_terms) + " (auto-truncation is off)");
  }
  const LayerPassResult cut = engine.finalize_layer(Truncation::approx_topn(limit));
  release_free_memory();
  ++stats.budget_truncations;
  stats.budget_discarded_weight += cut.discarded_weight;
  return cut.discarded_weight;
}

/// "layer 38 of 120 (rz)".
inline std::string layer_name(std::size_t step, std::size_t layers, const Channel& channel) {
  return "layer " + std::to_string(step + 1) + " of " + std::to_string(layers) + " (" + channel.name() + ")";
}

/// The guard's stop before layer `step`: its output could reach `predicted` terms.
[[noreturn]] inline void stop_for_host_memory(std::size_t step, std::size_t layers, const Channel& channel,
                                              std::size_t terms, std::size_t predicted,
                                              const MemoryGuard& guard) {
  HostMemoryExceeded::Details d;
  d.layers_done = step;
  d.gate = channel.name();
  d.terms = terms;
  d.predicted_terms = predicted;
  d.bytes_needed = predicted * guard.bytes_per_term;
  d.bytes_allowed = guard.allowed_bytes;
  d.state_kept = true;
  throw HostMemoryExceeded("memory guard: " + layer_name(step, layers, channel) + " could grow the sum from " +
                               std::to_string(terms) + " to " + std::to_string(predicted) + " terms, about " +
                               format_bytes(d.bytes_needed) + ", and the process may use " +
                               format_bytes(guard.allowed_bytes) + " more (" +
                               (guard.source.empty() ? std::string("the memory guard") : guard.source) +
                               "); the run stopped before it",
                           std::move(d));
}

/// std::bad_alloc inside layer `step`: the engine's state is not trusted any more.
[[noreturn]] inline void refused_allocation(std::size_t step, std::size_t layers, const Channel& channel,
                                            std::size_t terms) {
  HostMemoryExceeded::Details d;
  d.layers_done = step;
  d.gate = channel.name();
  d.terms = terms;
  d.state_kept = false;
  throw HostMemoryExceeded("out of host memory: an allocation was refused in " + layer_name(step, layers, channel) +
                               " with " + std::to_string(terms) + " terms (std::bad_alloc); the layer was left half done",
                           std::move(d));
}

/// Adds a finished layer's record to the run's statistics (peak terms, discarded weight, layers done),
/// hands it to options.on_layer and keeps it when options.keep_layer_records asks. Every layer driver
/// (run_layers, run_block, sweep/sweep_driver.h) closes its layers here.
inline void record_layer(LayerRecord&& record, const PropagateOptions& options, PropagationStats& stats) {
  stats.peak_terms = std::max(stats.peak_terms, record.terms_out);
  stats.discarded_weight += record.discarded_weight;
  stats.layers_done = record.application_index + 1;
  if (options.on_layer) options.on_layer(record);
  if (options.keep_layer_records) stats.layers.push_back(std::move(record));
}

/// Whether a run of `layers` stops after `done` of them: options.should_stop, polled between layers only.
inline bool stop_after(std::size_t done, std::size_t layers, const PropagateOptions& options) {
  return done < layers && options.should_stop && options.should_stop(done);
}

/// The prepared tables of the layers ahead of the walk: run_block fills it, the walk takes from its front.
/// Its front is an index, so that taking a table moves none of the others (a prepared table is several
/// KiB, and a run whose sum is too small for blocks takes one table a layer from a full queue).
template <int W>
class TablesAhead {
 public:
  std::size_t size() const { return tables_.size() - first_; }
  bool empty() const { return size() == 0; }
  const PreparedChannel<W>& back() const { return tables_.back(); }
  /// The first n tables, in order.
  std::span<const PreparedChannel<W>> front(std::size_t n) const {
    return std::span<const PreparedChannel<W>>(tables_.data() + first_, n);
  }
  void push_back(PreparedChannel<W>&& table) {
    if (first_ > 0 && (first_ == tables_.size() || first_ >= kCompactFrom)) {
      tables_.erase(tables_.begin(), tables_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
    }
    tables_.push_back(std::move(table));
  }
  PreparedChannel<W> take_front() { return std::move(tables_[first_++]); }
  void drop_front(std::size_t n) { first_ += n; }

 private:
  static constexpr std::size_t kCompactFrom = 32;  // taken tables kept before the queue moves down
  std::vector<PreparedChannel<W>> tables_;
  std::size_t first_ = 0;  // tables_[0, first_) were taken
};

/// Offers the engine a block of layers from `step` (BlockEngine, engine/layer_engine.h): the rotations,
/// permutations and key-preserving layers ahead, up to kMaxBlock, not past options.block_boundary, and no more than the host memory guard
/// allows if every layer doubled the sum. Records each layer it takes; returns how many (0: none, the
/// caller applies layer `step` alone, its table left at the front of `ahead`).
template <int W, class E>
std::size_t run_block(E& engine, const Circuit& circuit, const PropagateOptions& options, std::size_t step,
                      std::size_t guard_terms, TablesAhead<W>& ahead,
                      std::vector<BlockLayer>& out, PropagationStats& stats) {
  constexpr std::size_t kMaxBlock = 32;
  const std::size_t layers = circuit.size();
  auto index = [&](std::size_t s) { return circuit_index(options.direction, layers, s); };
  std::size_t limit = std::min(kMaxBlock, layers - step);
  if (options.block_boundary > 0) limit = std::min(limit, options.block_boundary - step % options.block_boundary);
  std::size_t grown = engine.size();
  std::size_t guarded = 0;
  while (guarded < limit && grown <= guard_terms / 2) {
    grown *= 2;
    ++guarded;
  }
  limit = std::min(limit, guarded);
  if (limit < 2) return 0;
  // Prepare the tables ahead up to the first that no block takes (it stays for the layer path): blocks
  // are runs of rotations, permutations (one output per term) and key-preserving layers.
  auto blockable = [](const PreparedChannel<W>& table) {
    return table.form == PreparedChannel<W>::Form::rotation || table.table_class != TableClass::general;
  };
  while (ahead.size() < limit) {
    if (!ahead.empty() && !blockable(ahead.back())) break;
    ahead.push_back(prepare_channel<W>(circuit[index(step + ahead.size())], options.direction));
  }
  const std::size_t offered = std::min(limit, ahead.size());
  if (offered < 2) return 0;
  out.assign(offered, BlockLayer{});
  const std::size_t terms_in = engine.size();
  const auto start = std::chrono::steady_clock::now();
  std::size_t taken = 0;
  try {
    taken = engine.apply_block(ahead.front(offered), options.truncation,
                               std::span<BlockLayer>(out.data(), offered));
  } catch (const std::bad_alloc&) {
    refused_allocation(step, layers, circuit[index(step)], terms_in);
  }
  if (taken == 0) return 0;
  const auto wall = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  std::size_t before = terms_in;
  for (std::size_t i = 0; i < taken; ++i) {
    LayerRecord record;
    record.application_index = step + i;
    record.circuit_index = index(step + i);
    record.gate_name = circuit[record.circuit_index].name();
    record.terms_in = before;
    record.terms_out = out[i].terms_out;
    record.discarded_weight = out[i].discarded_weight;
    record.wall_ns = wall / taken + (i + 1 == taken ? wall % taken : 0);  // the block's time, shared
    before = record.terms_out;
    record_layer(std::move(record), options, stats);
  }
  ahead.drop_front(taken);
  // should_stop is polled at the block's end only (blocks end at options.block_boundary).
  if (stop_after(step + taken, layers, options)) stats.stopped = true;
  return taken;
}

}  // namespace engine_detail

template <int W, class E>
  requires LayerEngine<E, W>
PropagationStats run_layers(E& engine, const Circuit& circuit, const PropagateOptions& options) {
  using Clock = std::chrono::steady_clock;
  PropagationStats stats;
  stats.peak_terms = engine.size();
  const std::size_t layers = circuit.size();
  if (options.start_layer > layers) {
    throw std::invalid_argument("start_layer " + std::to_string(options.start_layer) +
                                " is past the circuit's " + std::to_string(layers) + " layers");
  }
  stats.layers_done = options.start_layer;
  if (options.keep_layer_records) stats.layers.reserve(layers - options.start_layer);
  // The guard in terms: a layer of largest fanout f may run when terms · f stays within it.
  const MemoryGuard& guard = options.memory_guard;
  const std::size_t guard_terms = guard.allowed_terms();
  // Blocks (BlockEngine): the prepared tables of the layers ahead, the front for `step`.
  engine_detail::TablesAhead<W> ahead;
  std::vector<BlockLayer> block_out;
  const bool blocks = options.max_terms == 0 && !options.truncation.has_layer_pass();
  for (std::size_t step = options.start_layer; step < layers; ++step) {
    if constexpr (BlockEngine<E, W>) {
      if (blocks) {
        const std::size_t taken =
            engine_detail::run_block<W>(engine, circuit, options, step, guard_terms, ahead, block_out, stats);
        if (taken > 0) {
          step += taken - 1;
          if (stats.stopped) break;
          continue;
        }
      }
    }
    const std::size_t index = engine_detail::circuit_index(options.direction, layers, step);
    const Channel& channel = circuit[index];
    const auto start = Clock::now();
    LayerRecord record;
    record.application_index = step;
    record.circuit_index = index;
    record.gate_name = channel.name();
    record.terms_in = engine.size();
    PreparedChannel<W> table;
    if (ahead.empty()) {
      table = prepare_channel<W>(channel, options.direction);
    } else {
      table = ahead.take_front();
    }
    const std::size_t fanout = static_cast<std::size_t>(std::max(table.max_fanout, 1));
    try {
      if (options.max_terms > 0) {
        // Make room first so that even a layer whose every term branches fully (size × fanout) stays
        // within twice the budget mid-layer; rotations (fanout 2) never need this cut.
        const std::size_t room = std::max<std::size_t>(2 * options.max_terms / fanout, 1);
        if (engine.size() > room) {
          record.budget_discarded_weight += engine_detail::budget_cut<W>(engine, room, fanout, options, stats);
        }
      }
      // Only layers that branch can grow the sum.
      if (fanout > 1 && engine.size() * fanout > guard_terms) {
        engine_detail::stop_for_host_memory(step, layers, channel, engine.size(), engine.size() * fanout, guard);
      }
      record.discarded_weight = engine.apply_layer(table, options.truncation);
      const LayerPassResult pass = engine.finalize_layer(options.truncation);
      record.discarded_weight += pass.discarded_weight;
      record.collapsed = pass.collapsed;
      if (options.max_terms > 0) {
        record.budget_discarded_weight += engine_detail::budget_cut<W>(engine, options.max_terms, 1, options, stats);
      }
    } catch (const std::bad_alloc&) {
      engine_detail::refused_allocation(step, layers, channel, record.terms_in);
    }
    record.discarded_weight += record.budget_discarded_weight;
    record.terms_out = engine.size();
    record.wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    stats.collapses += record.collapsed;
    engine_detail::record_layer(std::move(record), options, stats);
    if (engine_detail::stop_after(step + 1, layers, options)) {
      stats.stopped = true;
      break;
    }
  }
  stats.final_terms = engine.size();
  return stats;
}

}  // namespace paulistrings
