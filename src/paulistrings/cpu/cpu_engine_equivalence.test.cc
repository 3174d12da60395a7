// The CPU engine in the engine-equivalence suite (testing/engine_suite.h): the mixed-size cases against
// the reference engine at 2 threads and, where the parallel path is forced, the same terms and statistics
// bit for bit at 1 and 8 threads (work inside a coset runs in a fixed order, docs/design.md §7.2). Suite
// CpuBlocks runs the same cases with blocks of rotations wherever two meet (§7.7): the coefficients of
// one layer at a time bit for bit, and at 1 thread the statistics of 2 bit for bit.

#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/validate.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> cpu_engine(int threads) {
  return engine_runner(
      [threads](auto& sum, const Circuit& circuit, PropagateOptions options, const PartitionOptions&) {
        options.engine = Engine::cpu;
        options.threads = threads;
        options.column_phase.enabled =
            false;  // the coset engine alone (run/propagate_column.test.cc has the phase)
        return propagate(sum, circuit, options);
      });
}

/// The cases that run the parallel path from the first layer (parallel threshold 0), up to 2000 starting
/// terms: elsewhere small sums stay on the calling thread, and the large ones would double the suite's cost.
bool forced_parallel(const PropagateOptions& options, std::size_t start_terms) {
  return options.parallel_threshold == 0 && start_terms <= 2000;
}

/// The CPU engine at the case's settings, taking a block wherever two rotations meet (no size or coset
/// minimum), through the layer driver.
std::shared_ptr<const EngineRunner> cpu_blocks(int threads) {
  return engine_runner([threads]<int W, Coefficient C>(PauliSum<W, C>& sum, const Circuit& circuit,
                                                       PropagateOptions options, const PartitionOptions&) {
    validate_run(sum.num_qubits(), PauliSum<W, C>::kIsComplex, circuit, options);
    CpuEngineOptions cpu;
    cpu.threads = threads;
    cpu.target_bucket_len = options.target_bucket_len;
    cpu.min_buckets = options.min_buckets;
    cpu.parallel_threshold = options.parallel_threshold;
    cpu.in_place_rotations = options.in_place_rotations;
    cpu.general_layer = options.general_layer;
    cpu.block_min_terms = 0;
    cpu.block_min_cosets = 1;
    CpuEngine<W, C> engine(sum, cpu);
    PropagationStats stats = run_layers<W>(engine, circuit, options);
    engine.export_to(sum);
    return stats;
  });
}

PAULISTRINGS_ENGINE_SUITE(CpuBlocks, {mixed_size_cases(MixedSizes::cpu_seeds),
                                      Baseline::cpu_engine,
                                      {{.name = "CPU engine in blocks, 2 threads",
                                        .runner = cpu_blocks(2),
                                        .agreement = Agreement::same_coefficients},
                                       {.name = "CPU engine in blocks, 1 thread",
                                        .runner = cpu_blocks(1),
                                        .same_bits_as = 0,
                                        .runs_on = forced_parallel}}});

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
