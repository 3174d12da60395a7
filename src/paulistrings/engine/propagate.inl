// Template body of propagate (included by propagate.h).

#include <chrono>
#include <stdexcept>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/engine/reference_engine.h"

namespace paulistrings {

template <int W, Coefficient C>
PropagationStats propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options) {
  if (sum.num_qubits() != circuit.num_qubits()) {
    throw std::invalid_argument("the Pauli sum has " + std::to_string(sum.num_qubits()) +
                                " qubits but the circuit has " + std::to_string(circuit.num_qubits()));
  }
  if constexpr (!PauliSum<W, C>::kIsComplex) {
    for (std::size_t k = 0; k < circuit.size(); ++k) {
      if (circuit[k].has_complex_transfer()) {
        throw std::invalid_argument("gate " + std::to_string(k) + " (" + circuit[k].description() +
                                    ") has complex transfer amplitudes: propagate a complex-coefficient sum");
      }
    }
  }
  using Clock = std::chrono::steady_clock;
  PropagationStats stats;
  stats.peak_terms = sum.size();
  sum.refine_to_fit(options.target_bucket_len, options.min_buckets);
  const std::size_t layers = circuit.size();
  if (options.keep_layer_records) stats.layers.reserve(layers);
  for (std::size_t step = 0; step < layers; ++step) {
    const std::size_t index = options.direction == Direction::forward ? step : layers - 1 - step;
    const Channel& channel = circuit[index];
    const auto start = Clock::now();
    LayerRecord record;
    record.application_index = step;
    record.circuit_index = index;
    record.gate_name = channel.name();
    record.terms_in = sum.size();
    const PreparedChannel<W> table = prepare_channel<W>(channel, options.direction);
    record.discarded_weight =
        apply_layer_reference(sum, table, options.truncation, options.target_bucket_len, options.min_buckets);
    const LayerPassResult pass = options.truncation.finalize_layer(sum);
    record.discarded_weight += pass.discarded_weight;
    record.collapsed = pass.collapsed;
    record.terms_out = sum.size();
    record.wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    stats.peak_terms = std::max(stats.peak_terms, record.terms_out);
    stats.discarded_weight += record.discarded_weight;
    stats.collapses += record.collapsed;
    if (options.on_layer) options.on_layer(record);
    if (options.keep_layer_records) stats.layers.push_back(std::move(record));
  }
  stats.final_terms = sum.size();
  return stats;
}

}  // namespace paulistrings
