#pragma once
// The engine-equivalence suite (docs/design.md §7): one test, written once here, that runs engines on
// seeded cases (testing/engine_cases.h) and compares each with a baseline — the dense oracle, the
// reference engine or the CPU engine. An engine joins through one thin file beside it that says how to
// run it, on which cases and against what (gpu/device_sum_equivalence.test.cc in full):
//
//   PAULISTRINGS_ENGINE_SUITE(Gpu, {mixed_size_cases(MixedSizes::gpu_seeds), Baseline::reference_engine,
//                                   {{.name = "GPU engine, device 0",
//                                     .runner = engine_runner([](auto& sum, const Circuit& circuit,
//                                                                PropagateOptions options,
//                                                                const PartitionOptions&) {
//                                       options.device = 0;
//                                       return propagate(sum, circuit, options);
//                                     }),
//                                     .needs_gpu = true}}});
//
// Each seed is one test, PREFIX/EngineEquivalence.SameResultAsTheBaseline/SEED. The engines of one
// instantiation share each case and its baseline (computed once); one may instead have to give bit for
// bit what an earlier one gave (the CPU engine at other thread counts).

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/engine/validate.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/testing/engine_cases.h"

namespace paulistrings::testing {

/// What one run of an engine reports: its statistics and, for partitioned and distributed runs, what
/// crossed partitions.
struct EngineResult {
  EngineResult() = default;
  // Implicit: a runner returns what its entry point returns.
  EngineResult(PropagationStats propagation) : stats(std::move(propagation)) {}
  EngineResult(PartitionedPropagation run)
      : stats(std::move(run.stats)), partitions(std::move(run.partitions)) {}

  PropagationStats stats;
  std::optional<PartitionStats> partitions;
};

/// An engine under test: evolves `sum` in place through `circuit` (options carry the case's truncation;
/// `partition` the case's rows and routing, for partitioned runs).
class EngineRunner {
 public:
  virtual ~EngineRunner() = default;
#define PAULISTRINGS_ENGINE_RUNNER_RUN(W, C)                                                             \
  virtual EngineResult run(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options, \
                           const PartitionOptions& partition) const = 0;
  PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_ENGINE_RUNNER_RUN)
#undef PAULISTRINGS_ENGINE_RUNNER_RUN
};

/// An EngineRunner from a generic callable f(PauliSum<W, C>&, const Circuit&, PropagateOptions,
/// const PartitionOptions&) returning something an EngineResult is made from.
template <class F>
class CallableRunner final : public EngineRunner {
 public:
  explicit CallableRunner(F f) : f_(std::move(f)) {}
#define PAULISTRINGS_ENGINE_RUNNER_CALL(W, C)                                                    \
  EngineResult run(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options, \
                   const PartitionOptions& partition) const override {                           \
    return EngineResult(f_(sum, circuit, options, partition));                                   \
  }
  PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_ENGINE_RUNNER_CALL)
#undef PAULISTRINGS_ENGINE_RUNNER_CALL

 private:
  F f_;
};

template <class F>
std::shared_ptr<const EngineRunner> engine_runner(F f) {
  return std::make_shared<const CallableRunner<F>>(std::move(f));
}

/// An EngineRunner for any LayerEngine (engine/layer_engine.h) that propagate() does not choose:
/// make(sum) builds the engine over the start sum, run_layers drives it, and its export_to(sum) writes
/// the result back — the path propagate() takes for its own engines.
template <class Make>
std::shared_ptr<const EngineRunner> layer_engine_runner(Make make) {
  return engine_runner(
      [make](auto& sum, const Circuit& circuit, PropagateOptions options, const PartitionOptions&) {
        using Sum = std::remove_cvref_t<decltype(sum)>;
        validate_run(sum.num_qubits(), Sum::kIsComplex, circuit, options);
        auto engine = make(sum);
        PropagationStats stats = run_layers<Sum::kWidth>(engine, circuit, options);
        engine.export_to(sum);
        return stats;
      });
}

/// What the engines of a suite are compared with.
enum class Baseline : std::uint8_t {
  dense_oracle,      ///< the operator and expectation values to 1e-12 (cases with OracleInputs)
  reference_engine,  ///< propagate() with Engine::reference
  cpu_engine,        ///< propagate() with the CPU engine at the sum's width and the case's options
};

/// How closely an engine must agree with the baseline engine.
enum class Agreement : std::uint8_t {
  /// Same keys, every coefficient to 1e-12·max(1, |c|), the same term count after every layer and the
  /// discarded weight of every layer to 1e-9 (engines that sum equal keys in the baseline's order).
  same_terms,
  /// The baseline's sum bit for bit, in storage order and bucket layout, and its exact statistics.
  same_bits,
  /// The baseline's keys and coefficient bits in any storage order, the same term counts into and out of
  /// every layer, discarded weights to 1e-9 (the same terms held in another layout: narrowed keys).
  same_coefficients,
  /// Terms to rounding with equal keys summed in any order (TermsMatchSummedInAnyOrder), the same term
  /// counts into and out of every layer, discarded weights to 1e-9 (partitions).
  summed_in_any_order,
};

/// One engine configuration of a suite.
struct EngineVariant {
  std::string name{};
  std::shared_ptr<const EngineRunner> runner{};
  Agreement agreement = Agreement::same_terms;
  /// ≥ 0: instead of the baseline, this variant must give exactly the terms and statistics of that
  /// earlier variant (same keys and coefficient bits, in any storage order).
  int same_bits_as = -1;
  /// Partitioned and distributed runs: the partition count (0: not partitioned). Their PartitionStats
  /// are checked: the partition count, every layer counted local or remote, per-partition terms adding
  /// up to the result, nothing exported by one partition.
  std::size_t partitions = 0;
  /// The partitions' transport kind, when checked ("mpi").
  std::string transport{};
  /// Skipped, with the reason, without a usable CUDA device.
  bool needs_gpu = false;
  /// Runs only on the cases this accepts, by their options and starting term count (every case when
  /// empty): a second look that need not pay for every case.
  std::function<bool(const PropagateOptions& options, std::size_t start_terms)> runs_on{};
};

/// The seeded cases, the baseline and the engines of one instantiation.
struct EngineSuite {
  CaseFamily cases;
  Baseline baseline = Baseline::reference_engine;
  std::vector<EngineVariant> engines;
};

/// A test's parameter: a registered suite and one of its seeds.
struct EngineSuiteCase {
  const EngineSuite* suite = nullptr;
  int seed = 0;
};
void PrintTo(const EngineSuiteCase& c, std::ostream* os);

/// Keeps `suite` for the life of the program and lists one parameter per seed.
std::vector<EngineSuiteCase> engine_suite_cases(EngineSuite suite);
/// The seed, so that PREFIX/EngineEquivalence.SameResultAsTheBaseline/17 is seed 17.
std::string engine_suite_case_name(const ::testing::TestParamInfo<EngineSuiteCase>& info);

class EngineEquivalence : public ::testing::TestWithParam<EngineSuiteCase> {};

}  // namespace paulistrings::testing

/// Instantiates the suite for the engines of an EngineSuite expression (braces allowed). Use at namespace
/// scope inside namespace paulistrings::testing or after `using paulistrings::testing::EngineEquivalence;`.
#define PAULISTRINGS_ENGINE_SUITE(prefix, ...)                                              \
  INSTANTIATE_TEST_SUITE_P(prefix, EngineEquivalence,                                       \
                           ::testing::ValuesIn(::paulistrings::testing::engine_suite_cases( \
                               ::paulistrings::testing::EngineSuite __VA_ARGS__)),          \
                           ::paulistrings::testing::engine_suite_case_name)
