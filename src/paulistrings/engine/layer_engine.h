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

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

template <class E, int W>
concept LayerEngine = requires(E& engine, const E& view, const PreparedChannel<W>& table, const Truncation& truncation) {
  { view.size() } -> std::convertible_to<std::size_t>;
  { engine.apply_layer(table, truncation) } -> std::same_as<double>;
  { engine.finalize_layer(truncation) } -> std::same_as<LayerPassResult>;
};

}  // namespace paulistrings
