// The CPU engine in the engine-equivalence suite (testing/engine_suite.h): the mixed-size cases against
// the reference engine at 2 threads and, where the parallel path is forced, the same terms and statistics
// bit for bit at 1 and 8 threads (work inside a coset runs in a fixed order, docs/design.md §7.2).

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> cpu_engine(int threads) {
  return engine_runner(
      [threads](auto& sum, const Circuit& circuit, PropagateOptions options, const PartitionOptions&) {
        options.engine = Engine::cpu;
        options.threads = threads;
        return propagate(sum, circuit, options);
      });
}

/// The cases that run the parallel path from the first layer (parallel threshold 0), up to 2000 starting
/// terms: elsewhere small sums stay on the calling thread, and the large ones would double the suite's cost.
bool forced_parallel(const PropagateOptions& options, std::size_t start_terms) {
  return options.parallel_threshold == 0 && start_terms <= 2000;
}

PAULISTRINGS_ENGINE_SUITE(Cpu, {mixed_size_cases(MixedSizes::cpu_seeds),
                                Baseline::reference_engine,
                                {{.name = "CPU engine, 2 threads", .runner = cpu_engine(2)},
                                 {.name = "CPU engine, 1 thread",
                                  .runner = cpu_engine(1),
                                  .same_bits_as = 0,
                                  .runs_on = forced_parallel},
                                 {.name = "CPU engine, 8 threads",
                                  .runner = cpu_engine(8),
                                  .same_bits_as = 0,
                                  .runs_on = forced_parallel}}});

}  // namespace
}  // namespace paulistrings::testing
