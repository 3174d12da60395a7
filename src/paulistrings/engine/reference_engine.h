#pragma once
// The reference engine: one layer applied the obvious way, single-threaded. Every input term is
// expanded through the prepared table; outputs are sorted by (key, delta index) and equal keys are
// summed in delta order (so the result does not depend on bucket layout or qubit placement); the
// per-term truncation sees each summed coefficient; exact zeros are dropped. Kept simple on
// purpose: it is the oracle the fast engines are checked against (docs/design.md §7.1).

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/layer_engine.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

/// Applies one layer in place; returns the Σ|c|² dropped by the per-term truncation.
template <int W, Coefficient C>
double apply_layer_reference(PauliSum<W, C>& sum, const PreparedChannel<W>& table,
                             const Truncation& truncation, std::size_t target_bucket_len,
                             std::size_t min_buckets) {
  struct Output {
    PauliString<W> key;
    C coefficient;
    std::uint8_t delta_index;
  };
  std::vector<Output> outputs;
  outputs.reserve(sum.size() * static_cast<std::size_t>(table.max_fanout));
  for (std::size_t i = 0; i < sum.size(); ++i) {
    const C c = sum.coefficients()[i];
    table.for_each_output(sum.keys()[i], [&](const PauliString<W>& key, Complex amplitude, int delta_index) {
      C value;
      if constexpr (PauliSum<W, C>::kIsComplex) {
        value = c * amplitude;
      } else {
        if (amplitude.imag() != 0.0) throw std::logic_error("complex amplitude applied to a real sum");
        value = c * amplitude.real();
      }
      outputs.push_back({key, value, static_cast<std::uint8_t>(delta_index)});
    });
  }
  std::sort(outputs.begin(), outputs.end(), [](const Output& a, const Output& b) {
    if (a.key != b.key) return a.key < b.key;
    return a.delta_index < b.delta_index;
  });
  std::vector<typename PauliSum<W, C>::Term> kept;
  kept.reserve(outputs.size());
  double discarded = 0.0;
  for (std::size_t i = 0; i < outputs.size();) {
    C total = outputs[i].coefficient;
    std::size_t j = i + 1;
    for (; j < outputs.size() && outputs[j].key == outputs[i].key; ++j) total += outputs[j].coefficient;
    if (total != C(0.0)) {
      if (truncation.keep(outputs[i].key, total)) {
        kept.push_back({outputs[i].key, total});
      } else {
        discarded += magnitude_squared(total);
      }
    }
    i = j;
  }
  const int bits = PauliSum<W, C>::bits_to_fit(kept.size(), target_bucket_len, min_buckets);
  sum.assign_terms(std::move(kept), bits);
  return discarded;
}

/// The reference engine as a LayerEngine over a sum it works on in place.
template <int W, Coefficient C>
class ReferenceEngine {
 public:
  ReferenceEngine(PauliSum<W, C>& sum, std::size_t target_bucket_len, std::size_t min_buckets)
      : sum_(sum), target_bucket_len_(target_bucket_len), min_buckets_(min_buckets) {
    sum_.refine_to_fit(target_bucket_len, min_buckets);
  }
  std::size_t size() const { return sum_.size(); }
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
    return apply_layer_reference(sum_, table, truncation, target_bucket_len_, min_buckets_);
  }
  LayerPassResult finalize_layer(const Truncation& truncation) { return truncation.finalize_layer(sum_); }

 private:
  PauliSum<W, C>& sum_;
  std::size_t target_bucket_len_;
  std::size_t min_buckets_;
};

static_assert(LayerEngine<ReferenceEngine<2, double>, 2>);

}  // namespace paulistrings
