// The GPU engine in the engine-equivalence suite (testing/engine_suite.h): the mixed-size cases (W up to
// 16) on device 0 against the reference engine. Skipped, with the reason, without a CUDA device.

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

PAULISTRINGS_ENGINE_SUITE(Gpu,
                          {mixed_size_cases(MixedSizes::gpu_seeds),
                           Baseline::reference_engine,
                           {{.name = "GPU engine, device 0",
                             .runner = engine_runner([](auto& sum, const Circuit& circuit,
                                                        PropagateOptions options, const PartitionOptions&) {
                               options.device = 0;
                               return propagate(sum, circuit, options);
                             }),
                             .needs_gpu = true}}});

}  // namespace
}  // namespace paulistrings::testing
