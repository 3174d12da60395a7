#pragma once
// HostEngine's bodies (host_engine.h) and the choice of host engine that propagate() shares
// (run/propagate.inl). Included only where the engines are compiled: run/propagate_w*.cc.

#include <memory>
#include <type_traits>
#include <utility>

#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/cpu/host_engine.h"
#include "paulistrings/cpu/narrow_engine.h"

namespace paulistrings {

/// The CPU engine's settings for a run's options.
inline CpuEngineOptions cpu_engine_options(const PropagateOptions& options) {
  CpuEngineOptions cpu;
  cpu.threads = options.threads;
  cpu.target_bucket_len = options.target_bucket_len;
  cpu.min_buckets = options.min_buckets;
  cpu.parallel_threshold = options.parallel_threshold;
  cpu.in_place_rotations = options.in_place_rotations;
  cpu.general_layer = options.general_layer;
  cpu.gate_blocks = options.gate_blocks;
  cpu.interrupt = options.interrupt;
  return cpu;
}

/// Whether a host run of width W under `options` runs on the narrowed-key engine.
template <int W>
bool runs_narrowed(const PropagateOptions& options) {
  return W > 1 && options.narrow_keys && narrowable(options);
}

template <int W, Coefficient C>
struct HostEngine<W, C>::Impl {
  // One word has nothing to narrow (propagate() never builds NarrowEngine<1, C>).
  std::unique_ptr<std::conditional_t<(W > 1), NarrowEngine<W, C>, CpuEngine<W, C>>> narrow;
  std::unique_ptr<CpuEngine<W, C>> cpu;

  template <class F>
  decltype(auto) visit(F&& f) {
    if (narrow) return f(*narrow);
    return f(*cpu);
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (narrow) return f(std::as_const(*narrow));
    return f(std::as_const(*cpu));
  }
};

template <int W, Coefficient C>
HostEngine<W, C>::HostEngine(const PauliSum<W, C>& sum, const PropagateOptions& options)
    : impl_(std::make_unique<Impl>()) {
  CpuEngineOptions cpu = cpu_engine_options(options);
  cpu.interrupt = nullptr;
  if constexpr (W > 1) {
    if (runs_narrowed<W>(options)) {
      impl_->narrow = std::make_unique<NarrowEngine<W, C>>(sum, cpu);
      return;
    }
  }
  impl_->cpu = std::make_unique<CpuEngine<W, C>>(sum, cpu);
}

template <int W, Coefficient C>
HostEngine<W, C>::~HostEngine() = default;
template <int W, Coefficient C>
HostEngine<W, C>::HostEngine(HostEngine&&) noexcept = default;
template <int W, Coefficient C>
HostEngine<W, C>& HostEngine<W, C>::operator=(HostEngine&&) noexcept = default;

template <int W, Coefficient C>
std::size_t HostEngine<W, C>::size() const {
  return std::as_const(*impl_).visit([](const auto& engine) { return engine.size(); });
}

template <int W, Coefficient C>
double HostEngine<W, C>::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  return impl_->visit([&](auto& engine) { return engine.apply_layer(table, truncation); });
}

template <int W, Coefficient C>
LayerPassResult HostEngine<W, C>::finalize_layer(const Truncation& truncation) {
  return impl_->visit([&](auto& engine) { return engine.finalize_layer(truncation); });
}

template <int W, Coefficient C>
void HostEngine<W, C>::export_to(PauliSum<W, C>& sum) {
  impl_->visit([&](auto& engine) { engine.export_to(sum); });
}

}  // namespace paulistrings
