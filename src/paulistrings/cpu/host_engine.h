#pragma once
// HostEngine<W, C>: the engine propagate() runs one sum on in the host — the narrowed-key engine
// (narrow_engine.h) when the options allow it, else the CPU engine (cpu_engine.h) — behind a fixed,
// compiled interface, for drivers that step it layer by layer themselves (a sweep's columns run apart,
// sweep/grouped_sweep_engine.h) without compiling the engines again. Its instances are compiled with
// propagate()'s, one width a unit (run/propagate_w*.cc).

#include <cstddef>
#include <memory>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

template <int W, Coefficient C>
class HostEngine {
 public:
  /// Over `sum`, with the engine and the settings propagate() would choose for `options` on the host
  /// (threads, buckets, formulations, narrowed keys, blocks); options.interrupt is not polled.
  HostEngine(const PauliSum<W, C>& sum, const PropagateOptions& options);
  ~HostEngine();
  HostEngine(HostEngine&&) noexcept;
  HostEngine& operator=(HostEngine&&) noexcept;

  std::size_t size() const;
  /// Applies one layer in place; returns the Σ|c|² dropped by the per-term truncation.
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  /// Runs the truncation's layer passes.
  LayerPassResult finalize_layer(const Truncation& truncation);
  /// Writes the current sum into `sum` in canonical order.
  void export_to(PauliSum<W, C>& sum);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

#define PAULISTRINGS_DECLARE_HOST_ENGINE(W, C) extern template class HostEngine<W, C>;
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_HOST_ENGINE)
#undef PAULISTRINGS_DECLARE_HOST_ENGINE

}  // namespace paulistrings
