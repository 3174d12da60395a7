#pragma once
// The LayerEngine concept: what the layer driver (engine/driver.h) needs of an engine. Every engine —
// the reference engine, the CPU coset engine (cpu/), the GPU engine (gpu/) — models it and says so
// with a static_assert beside its class, so a change to the seam fails to compile where it breaks.
//
// An engine owns (or wraps) the sum it propagates. apply_layer applies one prepared channel to every
// term with the per-term truncation fused in, on the merged coefficients, and returns the Σ|c|² it
// dropped; finalize_layer runs the truncation's layer passes (topn, approx_topn, collapse_sample)
// and drops exact zeros (docs/design.md §2.8).

#include <concepts>
#include <cstddef>
#include <span>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

template <class E, int W>
concept LayerEngine = requires(E& engine, const E& view, const PreparedChannel<W>& table, const Truncation& truncation) {
  { view.size() } -> std::convertible_to<std::size_t>;
  { engine.apply_layer(table, truncation) } -> std::same_as<double>;
  { engine.finalize_layer(truncation) } -> std::same_as<LayerPassResult>;
};

/// What one layer of a block did (see BlockEngine).
struct BlockLayer {
  double discarded_weight = 0.0;  ///< Σ|c|² its per-term truncation dropped
  std::size_t terms_out = 0;      ///< terms after it
};

/// An engine that can take several consecutive layers in one pass over memory (docs/design.md §7.7):
/// apply_block(tables, truncation, out) applies tables[0], tables[1], … in order, as many as it takes
/// at once (0 when it takes none, and then changes nothing), with exactly the semantics of one
/// apply_layer each — the per-term truncation after every layer — and fills out[i] for each layer it
/// took. The driver offers blocks only when the truncation has no layer pass (finalize_layer would do
/// nothing between the layers).
template <class E, int W>
concept BlockEngine = LayerEngine<E, W> && requires(E& engine, std::span<const PreparedChannel<W>> tables,
                                                    const Truncation& truncation, std::span<BlockLayer> out) {
  { engine.apply_block(tables, truncation, out) } -> std::same_as<std::size_t>;
};

}  // namespace paulistrings
