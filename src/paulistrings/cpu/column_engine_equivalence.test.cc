// The column-index engine in the engine-equivalence suite (testing/engine_suite.h): the mixed-size cases
// against the reference engine (every truncation, both directions) and the oracle cases against the dense
// oracle, driven through run_layers like any LayerEngine.

#include "paulistrings/cpu/column_engine.h"
#include "paulistrings/testing/engine_suite.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> column_engine() {
  return layer_engine_runner([](const auto& sum) { return ColumnEngine(sum); });
}

PAULISTRINGS_ENGINE_SUITE(Column, {mixed_size_cases(MixedSizes::cpu_seeds),
                                   Baseline::reference_engine,
                                   {{.name = "column engine", .runner = column_engine()}}});

PAULISTRINGS_ENGINE_SUITE(ColumnOracle, {oracle_cases(),
                                         Baseline::dense_oracle,
                                         {{.name = "column engine", .runner = column_engine()}}});

}  // namespace
}  // namespace paulistrings::testing
