// The column-index engine in the engine-equivalence suite (testing/engine_suite.h): the mixed-size cases
// against the reference engine (every truncation, both directions) and the oracle cases against the dense
// oracle, driven through run_layers like any LayerEngine; and the same cases against the CPU engine's
// default formulations, whose coefficients it gives bit for bit (docs/design.md §7.5).

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

// Bit for bit against the CPU engine (whose bits do not depend on its thread count) wherever the CPU engine
// runs its default formulations — in-place rotations, orbit-grouped general layers. Its alternatives
// (GeneralLayer::sort_merge, rotations through the orbit path: every third block of seeds) round
// differently and are left to the reference comparison above.
PAULISTRINGS_ENGINE_SUITE(ColumnBits, {mixed_size_cases(MixedSizes::cpu_seeds),
                                       Baseline::cpu_engine,
                                       {{.name = "column engine",
                                         .runner = column_engine(),
                                         .agreement = Agreement::same_coefficients,
                                         .runs_on = [](const PropagateOptions& options, std::size_t) {
                                           return options.in_place_rotations &&
                                                  options.general_layer == GeneralLayer::orbit;
                                         }}}});

PAULISTRINGS_ENGINE_SUITE(ColumnOracle, {oracle_cases(),
                                         Baseline::dense_oracle,
                                         {{.name = "column engine", .runner = column_engine()}}});

}  // namespace
}  // namespace paulistrings::testing
