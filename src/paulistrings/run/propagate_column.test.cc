// propagate() with Engine::column (cpu/column_engine.h, docs/design.md §7.5): on the mixed-size cases it
// gives the CPU engine's terms to 1e-12 (both directions, every truncation, W = 1, 2 and 4, real and
// complex), and it is refused where it cannot go — a device, partitions, a sweep.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/sweep/propagate_sweep.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/engine_cases.h"
#include "paulistrings/testing/engine_suite.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::testing {
namespace {

std::shared_ptr<const EngineRunner> column_through_propagate() {
  return engine_runner(
      [](auto& sum, const Circuit& circuit, PropagateOptions options, const PartitionOptions& partition) {
        options.engine = Engine::column;
        const Propagation run = propagate(sum, circuit, options, partition);
        if (run.engine != EngineKind::column)
          throw std::logic_error("propagate() did not choose the column engine");
        return run.stats;
      });
}

// The cases of up to 5000 starting terms: the Column suite runs the column engine on all of them
// against the reference engine; this checks the path through propagate() against the CPU engine.
PAULISTRINGS_ENGINE_SUITE(PropagateColumn, {mixed_size_cases(MixedSizes::cpu_seeds),
                                            Baseline::cpu_engine,
                                            {{.name = "propagate(), Engine::column",
                                              .runner = column_through_propagate(),
                                              .runs_on = [](const PropagateOptions&, std::size_t terms) {
                                                return terms <= 5000;
                                              }}}});

/// Engine::cpu on one thread with its column phase under `rule`. `exact`: the phase must take exactly
/// min(rule.max_layers, layers applied) layers wherever it starts; otherwise at least one.
std::shared_ptr<const EngineRunner> cpu_with_column_phase(ColumnPhase rule, bool exact) {
  return engine_runner([rule, exact](auto& sum, const Circuit& circuit, PropagateOptions options,
                                     const PartitionOptions& partition) {
    options.engine = Engine::cpu;
    options.threads = 1;
    options.column_phase = rule;
    const bool starts = options.in_place_rotations && options.general_layer == GeneralLayer::orbit &&
                        options.max_terms == 0 && options.start_layer < circuit.size();
    const Propagation run = propagate(sum, circuit, options, partition);
    if (run.engine != EngineKind::cpu) throw std::logic_error("propagate() did not choose the CPU engine");
    const std::size_t applied = run.stats.layers_done - options.start_layer;
    const std::size_t taken = run.stats.column_layers;
    const bool right = !starts ? taken == 0
                       : exact ? taken == std::min(rule.max_layers, applied)
                               : taken >= 1 && taken <= applied;
    if (!right) {
      throw std::logic_error("the column phase took " + std::to_string(taken) + " of " +
                             std::to_string(applied) + " layers");
    }
    return run.stats;
  });
}

// The CPU engine with its column phase gives the CPU engine's coefficients bit for bit whichever layer the
// phase ends at: by the rule (with no floor on the rows, so that small cases end it too), or forced after
// 1 and 5 layers. Cases with the CPU engine's alternative formulations or a memory budget never start it.
PAULISTRINGS_ENGINE_SUITE(
    ColumnPhase,
    {mixed_size_cases(MixedSizes::cpu_seeds),
     Baseline::cpu_engine,
     {{.name = "column phase by its rule (any row count)",
       .runner = cpu_with_column_phase(ColumnPhase{.fraction = 0.125, .rows = 1}, false),
       .agreement = Agreement::same_coefficients},
      {.name = "column phase of 1 layer",
       .runner = cpu_with_column_phase(ColumnPhase{.fraction = 2.0, .rows = SIZE_MAX, .max_layers = 1}, true),
       .agreement = Agreement::same_coefficients},
      {.name = "column phase of 5 layers",
       .runner = cpu_with_column_phase(ColumnPhase{.fraction = 2.0, .rows = SIZE_MAX, .max_layers = 5}, true),
       .agreement = Agreement::same_coefficients}}});

Circuit small_circuit() {
  Circuit circuit(3);
  circuit.append(Channel::h(0));
  circuit.append(Channel::cnot(0, 1));
  circuit.append(Channel::rz(0.3, 2));
  return circuit;
}

TEST(PropagateColumn, ChooseEngineNamesIt) {
  PropagateOptions options;
  options.engine = Engine::column;
  EXPECT_EQ(choose_engine(options), EngineKind::column);
  EXPECT_STREQ(engine_kind_name(EngineKind::column), "column");
  PartitionOptions two;
  two.partitions = 2;
  EXPECT_EQ(choose_engine(options, two), EngineKind::partitioned);
}

TEST(PropagateColumn, RunsOnOneThreadWhateverThreadsSays) {
  PauliSum<1, double> a = MakeSum<1, double>(3, {{"ZZZ", 1.0}, {"XIY", 0.5}});
  PauliSum<1, double> b = a;
  PropagateOptions options;
  options.engine = Engine::column;
  options.threads = 7;
  propagate(a, small_circuit(), options);
  options.engine = Engine::cpu;
  options.threads = 1;
  propagate(b, small_circuit(), options);
  EXPECT_TRUE(SumsMatch(a, b));
}

TEST(PropagateColumn, IsRefusedOnADevice) {
  PauliSum<1, double> sum = MakeSum<1, double>(3, {{"ZZZ", 1.0}});
  PropagateOptions options;
  options.engine = Engine::column;
  options.device = 0;
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { propagate(sum, small_circuit(), options); },
                                      {"the column engine runs on the host; it cannot run on device 0"}));
}

TEST(PropagateColumn, IsRefusedWithPartitions) {
  PauliSum<1, double> sum = MakeSum<1, double>(3, {{"ZZZ", 1.0}});
  PropagateOptions options;
  options.engine = Engine::column;
  PartitionOptions two;
  two.partitions = 2;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { propagate(sum, small_circuit(), options, two); },
                                              {"the column engine runs in one process on one partition"}));
}

TEST(PropagateColumn, IsRefusedInASweep) {
  const AnyPauliSum observable(MakeSum<1, double>(3, {{"ZZZ", 1.0}}));
  const std::vector<Circuit> columns{small_circuit(), small_circuit()};
  PropagateOptions options;
  options.engine = Engine::column;
  AnySweepSum result;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { propagate_sweep(observable, columns, options, result); },
                                              {"the column engine has no sweep"}));
}

/// A 6-qubit random circuit of 40 channels and a 200-term start, for the column phase's own rules.
struct PhaseRun {
  std::mt19937_64 rng{11};
  Circuit circuit = random_circuit(rng, 6, 40);
  PauliSum<1, Complex> start = random_window_sum<1, Complex>(rng, 200, 6, 0, 6);
  /// The coset engine alone, from the same start.
  PauliSum<1, Complex> cpu_alone(PropagateOptions options) const {
    options.column_phase.enabled = false;
    PauliSum<1, Complex> sum = start;
    propagate(sum, circuit, options);
    return sum;
  }
};

TEST(PropagateColumn, TheColumnPhaseRunsOnlyWhileALayerFitsOneThread) {
  const PhaseRun run;
  PropagateOptions options;
  options.threads = 2;
  options.parallel_threshold = 128;  // the coset engine gives a layer of 256 terms or more two threads
  options.column_phase.fraction = 2.0;
  PauliSum<1, Complex> sum = run.start;
  PropagateOptions one = options;
  one.keep_layer_records = true;
  const PropagationStats stats = propagate(sum, run.circuit, one);
  ASSERT_GT(stats.column_layers, 0u);
  ASSERT_LT(stats.column_layers, run.circuit.size());
  if (stats.column_layers >= 2) {
    EXPECT_LT(stats.layers[stats.column_layers - 2].terms_out, 256u);
  }
  EXPECT_GE(stats.layers[stats.column_layers - 1].terms_out, 256u);
  EXPECT_TRUE(SumsMatch(sum, run.cpu_alone(options), 0.0));
  // A start the coset engine would already split over threads never starts it.
  options.parallel_threshold = 64;
  PauliSum<1, Complex> big = run.start;
  EXPECT_EQ(propagate(big, run.circuit, options).column_layers, 0u);
}

TEST(PropagateColumn, TheColumnPhaseEndsWhereItsMemoryGuardWouldBind) {
  const PhaseRun run;
  PropagateOptions options;
  options.threads = 1;
  options.column_phase.fraction = 2.0;
  options.keep_layer_records = true;
  // The column engine's guard allows 4^k × 300 terms, k the widest channel's qubits: the phase ends once
  // the sum passes 300 terms, where a layer could outgrow that guard. (A byte a term keeps the coset
  // engine's own guard out of reach.)
  std::size_t widest = 1;
  for (const Channel& channel : run.circuit) widest = std::max(widest, channel.qubits().size());
  options.memory_guard.allowed_bytes =
      (std::size_t{1} << (2 * widest)) * 300 * column_host_bytes_per_term(1, true);
  options.memory_guard.bytes_per_term = 1;
  PauliSum<1, Complex> sum = run.start;
  const PropagationStats stats = propagate(sum, run.circuit, options);
  ASSERT_GT(stats.column_layers, 0u);
  ASSERT_LT(stats.column_layers, run.circuit.size());
  EXPECT_GT(stats.layers[stats.column_layers - 1].terms_out, 300u);
  EXPECT_TRUE(SumsMatch(sum, run.cpu_alone(options), 0.0));
}

TEST(PropagateColumn, AnInterruptInTheColumnPhaseLeavesTheSumAsItWas) {
  const PhaseRun run;
  PropagateOptions options;
  options.threads = 1;
  options.column_phase.fraction = 2.0;  // every layer in the phase
  int polls = 0;
  options.interrupt = [&] { return ++polls >= 3; };
  PauliSum<1, Complex> sum = run.start;
  EXPECT_THROW(propagate(sum, run.circuit, options), LayerInterrupted);
  EXPECT_EQ(polls, 3);
  EXPECT_TRUE(SumsMatch(sum, run.start, 0.0));
}

TEST(PropagateColumn, TheColumnPhaseStopsWhereTheCallerStopsAndResumesToTheSameBits) {
  const PhaseRun run;
  PropagateOptions options;
  options.threads = 1;
  options.column_phase.fraction = 2.0;
  options.should_stop = [](std::size_t done) { return done == 7; };
  PauliSum<1, Complex> sum = run.start;
  const PropagationStats first = propagate(sum, run.circuit, options);
  EXPECT_TRUE(first.stopped);
  EXPECT_EQ(first.layers_done, 7u);
  EXPECT_EQ(first.column_layers, 7u);
  options.should_stop = nullptr;
  options.start_layer = 7;
  options.column_phase.max_layers = 4;  // and the rest moves to the coset engine after 4 more
  const PropagationStats rest = propagate(sum, run.circuit, options);
  EXPECT_EQ(rest.column_layers, 4u);
  EXPECT_EQ(rest.layers_done, run.circuit.size());
  options.start_layer = 0;
  EXPECT_TRUE(SumsMatch(sum, run.cpu_alone(options), 0.0));
}

TEST(PropagateColumn, ATermCostsMoreThanOnTheCpuEngine) {
  // Rows up to 3 budget terms, growing by doubling, and the column bitsets (memory_budget.h).
  EXPECT_EQ(column_bytes_per_budget_term(1, false), 6u * 24 + 6u * 16 + 2 * 16 + 8 + 96);
  EXPECT_EQ(column_bytes_per_budget_term(2, true), 6u * 48 + 6u * 32 + 2 * 32 + 16 + 96);
  EXPECT_EQ(column_host_bytes_per_term(1, false), column_bytes_per_budget_term(1, false) / 2);
  const std::size_t limit = std::size_t{64} << 20, baseline = std::size_t{8} << 20;
  EXPECT_EQ(column_budget_terms(limit, baseline, 1, false, "--memory-limit"),
            (limit - baseline) / column_bytes_per_budget_term(1, false));
  EXPECT_LT(column_budget_terms(limit, baseline, 1, false, "--memory-limit"),
            budget_terms(limit, baseline, 1, false, "--memory-limit"));
}

}  // namespace
}  // namespace paulistrings::testing
