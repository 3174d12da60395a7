// The engine-equivalence test, written once: a seed's cases through the baseline and then through
// every engine of the suite, each compared as its EngineVariant says.

#include "paulistrings/testing/engine_suite.h"

#include <algorithm>
#include <cmath>
#include <concepts>
#include <deque>
#include <optional>
#include <string>
#include <variant>

#include "paulistrings/readout/product_state.h"
#include "paulistrings/readout/stabilizer_state.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/gpu.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::testing {
namespace {

/// A run's result: the evolved sum and what the engine reported.
template <int W, Coefficient C>
struct Outcome {
  PauliSum<W, C> sum;
  EngineResult result;
};

template <int W, Coefficient C>
Outcome<W, C> run_baseline(Baseline baseline, const EngineCase<W, C>& c) {
  Outcome<W, C> out{c.start, {}};
  PropagateOptions options = c.run_options();
  options.engine = baseline == Baseline::reference_engine ? Engine::reference : Engine::cpu;
  options.device = -1;
  // The CPU engine at the sum's width, one layer at a time: the partitioned engines claim its statistics
  // bit for bit, and narrowed keys and blocks sum the discarded weight in another order.
  options.narrow_keys = false;
  options.gate_blocks = false;
  options.column_phase.enabled = false;
  out.result = propagate(out.sum, c.circuit, options);
  return out;
}

/// Per layer: the same term count out (and in, when asked) and the discarded weight to 1e-9.
void expect_same_layers(const PropagationStats& actual, const PropagationStats& expected,
                        const Circuit& circuit, bool terms_in) {
  ASSERT_EQ(actual.layers.size(), expected.layers.size());
  for (std::size_t k = 0; k < actual.layers.size(); ++k) {
    const LayerRecord& a = actual.layers[k];
    const LayerRecord& b = expected.layers[k];
    const std::string where = "layer " + std::to_string(k) + " " + circuit[b.circuit_index].description();
    if (terms_in) {
      EXPECT_EQ(a.terms_in, b.terms_in) << where;
    }
    EXPECT_EQ(a.terms_out, b.terms_out) << where;
    EXPECT_NEAR(a.discarded_weight, b.discarded_weight, 1e-9 * std::max(1.0, b.discarded_weight)) << where;
  }
}

/// The statistics bit for bit: every layer's term counts and discarded weight, and the totals.
void expect_same_stats_exactly(const PropagationStats& actual, const PropagationStats& expected) {
  ASSERT_EQ(actual.layers.size(), expected.layers.size());
  for (std::size_t k = 0; k < actual.layers.size(); ++k) {
    EXPECT_EQ(actual.layers[k].discarded_weight, expected.layers[k].discarded_weight) << "layer " << k;
    EXPECT_EQ(actual.layers[k].terms_out, expected.layers[k].terms_out) << "layer " << k;
  }
  EXPECT_EQ(actual.discarded_weight, expected.discarded_weight);
  EXPECT_EQ(actual.peak_terms, expected.peak_terms);
  EXPECT_EQ(actual.final_terms, expected.final_terms);
}

template <int W, Coefficient C>
void expect_agreement(Agreement agreement, const Outcome<W, C>& actual, const Outcome<W, C>& expected,
                      const Circuit& circuit) {
  const PropagationStats& stats = actual.result.stats;
  const PropagationStats& want = expected.result.stats;
  switch (agreement) {
    case Agreement::same_terms:
      EXPECT_TRUE(SumsMatch(actual.sum, expected.sum));
      EXPECT_EQ(stats.peak_terms, want.peak_terms);
      expect_same_layers(stats, want, circuit, false);
      return;
    case Agreement::same_bits:
      ASSERT_EQ(actual.sum.size(), expected.sum.size());
      EXPECT_EQ(actual.sum.bucket_bits(), expected.sum.bucket_bits());
      for (std::size_t i = 0; i < actual.sum.size(); ++i) {
        ASSERT_EQ(actual.sum.keys()[i], expected.sum.keys()[i]) << "term " << i;
        ASSERT_EQ(actual.sum.coefficients()[i], expected.sum.coefficients()[i]) << "term " << i;
      }
      expect_same_stats_exactly(stats, want);
      if (actual.result.partitions) {
        EXPECT_EQ(actual.result.partitions->remote_layers, 0u);
        EXPECT_EQ(actual.result.partitions->rows_exported, 0u);
      }
      return;
    case Agreement::same_coefficients:
      EXPECT_TRUE(actual.sum == expected.sum) << "not the baseline's coefficients bit for bit";
      expect_same_layers(stats, want, circuit, true);
      EXPECT_EQ(stats.peak_terms, want.peak_terms);
      EXPECT_EQ(stats.final_terms, want.final_terms);
      EXPECT_NEAR(stats.discarded_weight, want.discarded_weight, 1e-9 * std::max(1.0, want.discarded_weight));
      return;
    case Agreement::summed_in_any_order:
      EXPECT_TRUE(TermsMatchSummedInAnyOrder(actual.sum, expected.sum));
      expect_same_layers(stats, want, circuit, true);
      EXPECT_EQ(stats.final_terms, expected.sum.size());
      EXPECT_EQ(stats.peak_terms, want.peak_terms);
      EXPECT_NEAR(stats.discarded_weight, want.discarded_weight, 1e-9 * std::max(1.0, want.discarded_weight));
      return;
  }
}

/// What a partitioned run reports about its partitions, against the result it gave.
void expect_partition_stats(const EngineVariant& variant, const EngineResult& result,
                            std::size_t result_terms, const Circuit& circuit) {
  ASSERT_TRUE(result.partitions.has_value()) << "a partitioned run reported no partition statistics";
  const PartitionStats& stats = *result.partitions;
  EXPECT_EQ(stats.partitions, variant.partitions);
  if (!variant.transport.empty()) {
    EXPECT_EQ(stats.transport, variant.transport);
  }
  EXPECT_EQ(stats.remote_layers + stats.local_layers, circuit.size());
  // Per partition: the final terms add up to the result, and every partition's time is accounted.
  ASSERT_EQ(stats.final_terms.size(), variant.partitions);
  std::size_t terms = 0;
  for (std::size_t r = 0; r < variant.partitions; ++r) {
    terms += stats.final_terms[r];
    EXPECT_GE(stats.transport_seconds[r], 0.0);
    EXPECT_GE(stats.work_seconds[r], 0.0);
  }
  EXPECT_EQ(terms, result_terms);
  if (variant.partitions == 1) {
    EXPECT_EQ(stats.rows_exported, 0u);
  }
}

/// The operator to 1e-12 of its largest entry, and ⟨ψ|O|ψ⟩ to 1e-12 for every state of the case.
template <int W, Coefficient C>
void expect_matches_oracle(const PauliSum<W, C>& actual, const PropagationStats& stats,
                           const EngineCase<W, C>& c, const dense::Matrix& expected) {
  const OracleInputs& oracle = *c.oracle;
  const std::size_t n = oracle.qubits;
  EXPECT_EQ(stats.layers.size(), c.circuit.size());
  EXPECT_TRUE(operators_close(dense_operator(actual, n), expected));
  for (const auto& [spec, label] : oracle.product_states) {
    const Complex value = ProductState::parse(spec, n).expectation(actual);
    const Complex want = dense::expectation(expected, dense::product_state(label));
    EXPECT_NEAR(value.real(), want.real(), 1e-12) << "state " << spec;
    EXPECT_NEAR(value.imag(), want.imag(), 1e-12) << "state " << spec;
  }
  const Complex value = StabilizerState::from_generators(oracle.stabilizers, n).expectation(actual);
  const Complex want =
      dense::expectation(expected, dense::stabilizer_state(static_cast<int>(n), oracle.stabilizers));
  EXPECT_NEAR(value.real(), want.real(), 1e-12) << "stabilizer state";
  EXPECT_NEAR(value.imag(), want.imag(), 1e-12) << "stabilizer state";
}

template <int W, Coefficient C>
void check_case(const EngineSuite& suite, const EngineCase<W, C>& c) {
  SCOPED_TRACE(std::string(to_string(c.options.direction)) + ", truncation " + c.truncation().description() +
               ", " + std::to_string(c.start.size()) + " terms on " + std::to_string(c.circuit.num_qubits()) +
               " qubits, " + std::to_string(c.circuit.size()) + " channels, W = " + std::to_string(W) +
               (std::same_as<C, Complex> ? ", complex" : ", real"));
  std::optional<Outcome<W, C>> baseline;
  dense::Matrix dense_expected;
  if (suite.baseline == Baseline::dense_oracle) {
    ASSERT_TRUE(c.oracle) << "a case without oracle inputs in a suite checked against the dense oracle";
    dense_expected = apply_circuit_dense(c.oracle->start, c.circuit, c.options.direction, c.oracle->qubits);
  } else {
    baseline = run_baseline(suite.baseline, c);
  }
  std::vector<std::optional<Outcome<W, C>>> outcomes(suite.engines.size());
  for (std::size_t v = 0; v < suite.engines.size(); ++v) {
    const EngineVariant& variant = suite.engines[v];
    if (variant.runs_on && !variant.runs_on(c.options, c.start.size())) continue;
    SCOPED_TRACE(variant.name);
    Outcome<W, C>& out = outcomes[v].emplace(Outcome<W, C>{c.start, {}});
    out.result = variant.runner->run(out.sum, c.circuit, c.run_options(), c.partition);
    out.sum.check_invariants();
    if (variant.same_bits_as >= 0) {
      const auto other = static_cast<std::size_t>(variant.same_bits_as);
      ASSERT_LT(other, v) << "same_bits_as names a later variant";
      ASSERT_TRUE(outcomes[other]) << suite.engines[other].name << " did not run on this case";
      EXPECT_TRUE(out.sum == outcomes[other]->sum) << "not bit for bit " << suite.engines[other].name;
      expect_same_stats_exactly(out.result.stats, outcomes[other]->result.stats);
    } else if (baseline) {
      expect_agreement(variant.agreement, out, *baseline, c.circuit);
    } else {
      expect_matches_oracle(out.sum, out.result.stats, c, dense_expected);
    }
    if (variant.partitions > 0) expect_partition_stats(variant, out.result, out.sum.size(), c.circuit);
  }
}

std::deque<EngineSuite>& registered_suites() {
  static std::deque<EngineSuite> suites;  // a deque: parameters point into it
  return suites;
}

}  // namespace

// The seed alone: ctest's discovered names end in the printed value (PREFIX/…/17, as before the suite).
void PrintTo(const EngineSuiteCase& c, std::ostream* os) { *os << c.seed; }

std::vector<EngineSuiteCase> engine_suite_cases(EngineSuite suite) {
  const EngineSuite& kept = registered_suites().emplace_back(std::move(suite));
  std::vector<EngineSuiteCase> cases;
  for (int seed = 0; seed < kept.cases.seeds; ++seed) cases.push_back({&kept, seed});
  return cases;
}

std::string engine_suite_case_name(const ::testing::TestParamInfo<EngineSuiteCase>& info) {
  return std::to_string(info.param.seed);
}

TEST_P(EngineEquivalence, SameResultAsTheBaseline) {
  const EngineSuite& suite = *GetParam().suite;
  if (std::any_of(suite.engines.begin(), suite.engines.end(),
                  [](const EngineVariant& v) { return v.needs_gpu; })) {
    SKIP_WITHOUT_GPU();
  }
  for (const AnyEngineCase& any : suite.cases.cases(GetParam().seed)) {
    std::visit([&suite](const auto& c) { check_case(suite, c); }, any);
  }
}

}  // namespace paulistrings::testing
