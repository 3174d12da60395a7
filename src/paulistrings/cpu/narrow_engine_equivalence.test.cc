// Narrowed keys (narrow_engine.h) in the engine-equivalence suite: on the mixed-size cases, the CPU
// engine with its keys narrowed to the qubits in use gives the coefficients of the CPU engine at the
// sum's width bit for bit, with the same term counts after every layer (the Cpu suite checks both
// against the reference engine). Cases whose truncation ranks keys run the CPU engine unnarrowed.

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> narrowed(int threads) {
  return engine_runner(
      [threads](auto& sum, const Circuit& circuit, PropagateOptions options, const PartitionOptions&) {
        options.engine = Engine::cpu;
        options.narrow_keys = true;
        options.threads = threads;
        options.column_phase.enabled = false;
        return propagate(sum, circuit, options);
      });
}

PAULISTRINGS_ENGINE_SUITE(Narrow, {mixed_size_cases(MixedSizes::cpu_seeds),
                                   Baseline::cpu_engine,
                                   {{.name = "CPU engine, narrowed keys, 2 threads",
                                     .runner = narrowed(2),
                                     .agreement = Agreement::same_coefficients}}});

}  // namespace
}  // namespace paulistrings::testing
