// The reference engine in the engine-equivalence suite (testing/engine_suite.h): the oracle cases in both
// directions against the dense oracle, operator and expectation values — for the reference engine and for
// propagate() as a caller gets it by default (the CPU engine).

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> engine(Engine which) {
  return engine_runner(
      [which](auto& sum, const Circuit& circuit, PropagateOptions options, const PartitionOptions&) {
        options.engine = which;
        return propagate(sum, circuit, options);
      });
}

PAULISTRINGS_ENGINE_SUITE(Reference,
                          {oracle_cases(),
                           Baseline::dense_oracle,
                           {{.name = "reference engine", .runner = engine(Engine::reference)},
                            {.name = "propagate() defaults", .runner = engine(PropagateOptions{}.engine)}}});

}  // namespace
}  // namespace paulistrings::testing
