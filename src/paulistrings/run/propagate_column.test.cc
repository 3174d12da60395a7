// propagate() with Engine::column (cpu/column_engine.h, docs/design.md §7.5): on the mixed-size cases it
// gives the CPU engine's terms to 1e-12 (both directions, every truncation, W = 1, 2 and 4, real and
// complex), and it is refused where it cannot go — a device, partitions, a sweep.

#include <gtest/gtest.h>

#include <stdexcept>

#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/sweep/propagate_sweep.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/engine_suite.h"

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
