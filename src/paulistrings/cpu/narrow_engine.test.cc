// Narrowed keys beyond the engine-equivalence suite (narrow_engine_equivalence.test.cc, whose cases stay
// on one word of qubits): widening as the sum spreads over more qubits, layers skipped on qubits no term
// uses, a non-unital channel that puts factors on unused qubits, when propagate() narrows, and a resume
// from a checkpoint that gives the uninterrupted run bit for bit.

#include "paulistrings/cpu/narrow_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/engine/driver.h"
#include "paulistrings/run/propagate.h"

namespace paulistrings {
namespace {

/// A staircase from `first` to `last`: rx on a qubit, then rzz with the next. Applied forward to Z(first),
/// the sum spreads one qubit per step.
Circuit staircase(std::size_t num_qubits, Qubit first, Qubit last) {
  Circuit circuit(num_qubits);
  for (Qubit q = first; q < last; ++q) {
    circuit.append(Channel::rx(0.4, q));
    circuit.append(Channel::rzz(0.3, q, q + 1));
  }
  return circuit;
}

PropagateOptions forward(const Truncation& truncation) {
  PropagateOptions options;
  options.direction = Direction::forward;
  options.truncation = truncation;
  options.threads = 2;
  return options;
}

/// The plain CPU engine at width W on the same run.
template <int W, Coefficient C>
PauliSum<W, C> at_full_width(const PauliSum<W, C>& start, const Circuit& circuit, PropagateOptions options,
                             PropagationStats* stats = nullptr) {
  PauliSum<W, C> sum = start;
  options.narrow_keys = false;
  const PropagationStats s = propagate(sum, circuit, options);
  if (stats != nullptr) *stats = s;
  return sum;
}

TEST(NarrowEngine, WidensAsTheSumSpreadsAndKeepsTheCoefficientsBitForBit) {
  // 300 qubits (8 words). A staircase on qubits 140…290 spreads a local term along it (few qubits at a
  // time: labels are given back behind it); CNOTs then copy an X string on 0…69 onto 100…169, and the
  // sum holds 141 qubits at once: 2 → 4 words.
  const std::size_t n = 300;
  Circuit circuit = staircase(n, 140, 290);
  for (Qubit q = 0; q < 70; ++q) circuit.append(Channel::cnot(q, q + 100));
  for (Qubit q = 0; q < 70; q += 7) circuit.append(Channel::rz(0.2, q + 100));
  std::string string_x;
  for (Qubit q = 0; q < 70; ++q) {  // appended piece by piece: "X" + std::to_string(q) trips GCC 12's -Wrestrict
    string_x += 'X';
    string_x += std::to_string(q);
    string_x += ' ';
  }
  const auto start = PauliSum<8, double>::from_labels(n, {{"Z140", 1.0}, {"X141", 0.5}, {string_x, 0.25}});
  const PropagateOptions options = forward(Truncation::coeff(1e-4));
  CpuEngineOptions cpu;
  cpu.threads = 2;
  NarrowEngine<8, double> engine(start, cpu);
  EXPECT_EQ(engine.width(), 2);
  EXPECT_EQ(engine.qubits_in_use(), 72u);
  std::size_t most_in_use = 0;
  PropagateOptions watched = options;
  watched.on_layer = [&](const LayerRecord& record) {
    most_in_use = std::max(most_in_use, engine.qubits_in_use());
    if (record.application_index + 1 == 300) {
      EXPECT_EQ(engine.width(), 2) << "the staircase alone needs no more than 2 words";
    }
  };
  const PropagationStats stats = run_layers<8>(engine, circuit, watched);
  EXPECT_EQ(engine.width(), 4);
  EXPECT_GE(engine.qubits_in_use(), 140u);  // the X string on 0…69 and 100…169
  EXPECT_LT(most_in_use, 160u);  // the staircase's 151 qubits were never all held at once
  PauliSum<8, double> narrowed(n);
  engine.export_to(narrowed);
  narrowed.check_invariants();

  PropagationStats wide_stats;
  const PauliSum<8, double> wide = at_full_width(start, circuit, options, &wide_stats);
  EXPECT_GT(wide.size(), 20u);
  EXPECT_TRUE(narrowed == wide);
  ASSERT_EQ(stats.layers.size(), wide_stats.layers.size());
  for (std::size_t k = 0; k < stats.layers.size(); ++k) {
    EXPECT_EQ(stats.layers[k].terms_out, wide_stats.layers[k].terms_out) << "layer " << k;
    EXPECT_NEAR(stats.layers[k].discarded_weight, wide_stats.layers[k].discarded_weight, 1e-12) << "layer " << k;
  }
}

TEST(NarrowEngine, TheWidenersTablesPlaceEveryLabelAtItsQubit) {
  // 100 labels of 128 (2 words) on distinct qubits of 256 (4 words), every tenth label free; random keys
  // on the labels in use, widened bit by bit and by the tables.
  std::mt19937_64 rng(7);
  std::vector<Qubit> qubits(256);
  std::iota(qubits.begin(), qubits.end(), Qubit{0});
  std::shuffle(qubits.begin(), qubits.end(), rng);
  const Qubit free = ~Qubit{0};
  std::vector<Qubit> qubit_of(qubits.begin(), qubits.begin() + 100);
  for (std::size_t l = 0; l < qubit_of.size(); l += 10) qubit_of[l] = free;
  const narrow_detail::LabelWidener<2, 4> widener(qubit_of, free);
  EXPECT_EQ(widener.entries(100), 13u * 256);
  for (int trial = 0; trial < 2000; ++trial) {
    PauliString<2> key;
    PauliString<4> expected;
    for (std::size_t l = 0; l < qubit_of.size(); ++l) {
      const std::uint8_t code = static_cast<std::uint8_t>(rng() % 4);
      if (qubit_of[l] == free || code == 0 || rng() % 3 == 0) continue;
      key.set_code(l, code);
      expected.set_code(qubit_of[l], code);
    }
    ASSERT_EQ(widener(key), expected) << "trial " << trial;
  }
}

TEST(NarrowEngine, RanksSortKeysAsTheirWidenedKeysCompare) {
  // At most 64 labels in use, some of them above 64 (2 words) and some free, on qubits of 256 (4 words)
  // spread over every word: the radix sort by rank gives the order of the widened keys.
  std::mt19937_64 rng(5);
  for (const std::size_t in_use : {std::size_t{1}, std::size_t{7}, std::size_t{33}, std::size_t{64}}) {
    std::vector<Qubit> qubits(256);
    std::iota(qubits.begin(), qubits.end(), Qubit{0});
    std::shuffle(qubits.begin(), qubits.end(), rng);
    const Qubit free = ~Qubit{0};
    std::vector<Qubit> qubit_of(128, free);
    std::vector<std::size_t> labels(128);
    std::iota(labels.begin(), labels.end(), std::size_t{0});
    std::shuffle(labels.begin(), labels.end(), rng);
    for (std::size_t i = 0; i < in_use; ++i) qubit_of[labels[i]] = qubits[i];
    ASSERT_TRUE(narrow_detail::LabelRanker<2>::fits(qubit_of, free));
    const narrow_detail::LabelRanker<2> ranker(qubit_of, free);
    EXPECT_EQ(ranker.bits(), static_cast<int>(2 * in_use));
    const narrow_detail::LabelWidener<2, 4> widener(qubit_of, free);
    std::vector<PauliString<2>> keys;
    std::vector<narrow_detail::Ranked> ranked;
    for (std::uint32_t t = 0; t < 3000; ++t) {
      PauliString<2> key;
      for (std::size_t i = 0; i < in_use; ++i) {
        if (rng() % 4 != 0) key.set_code(labels[i], static_cast<std::uint8_t>(rng() % 4));
      }
      const auto rank = ranker(key);
      keys.push_back(key);
      ranked.push_back({rank.high, rank.low, t});
    }
    std::vector<narrow_detail::Ranked> scratch;
    narrow_detail::radix_sort(ranked, scratch, ranker.bits());
    for (std::size_t i = 1; i < ranked.size(); ++i) {
      const PauliString<4> before = widener(keys[ranked[i - 1].index]),
                           after = widener(keys[ranked[i].index]);
      ASSERT_TRUE(before <= after) << in_use << " labels, item " << i;
      // Equal ranks only for equal keys; the sort is stable, so equal keys keep their order.
      if (before == after) {
        ASSERT_LT(ranked[i - 1].index, ranked[i].index);
      }
    }
  }
  EXPECT_FALSE(narrow_detail::LabelRanker<2>::fits(std::vector<Qubit>(65, Qubit{3}), ~Qubit{0}));
}

TEST(NarrowEngine, AnExportWidenedByTablesIsTheFullWidthRun) {
  // 1,500 terms on 8 qubits scattered over 200 (4 words): the export sorts them by rank and widens them
  // by the tables (more keys than the tables' 256 entries) and must give the full-width run bit for bit.
  const std::size_t n = 200;
  const std::vector<Qubit> used = {3, 41, 64, 90, 127, 128, 150, 199};
  std::mt19937_64 rng(11);
  std::vector<std::pair<std::string, double>> terms;
  std::vector<std::uint32_t> patterns(1u << 16);
  std::iota(patterns.begin(), patterns.end(), 0u);
  std::shuffle(patterns.begin(), patterns.end(), rng);
  for (std::size_t t = 0; t < 1500; ++t) {
    std::string label;
    for (std::size_t i = 0; i < used.size(); ++i) {
      const char factor = "IXYZ"[(patterns[t] >> (2 * i)) & 3];
      if (factor == 'I') continue;
      label += factor;
      label += std::to_string(used[i]);
      label += ' ';
    }
    terms.emplace_back(label.empty() ? "I" : label, std::ldexp(1.0, -1 - static_cast<int>(t % 7)) + 1e-3 * t);
  }
  const auto start = PauliSum<4, double>::from_labels(n, terms);
  Circuit circuit(n);
  for (std::size_t i = 0; i + 1 < used.size(); ++i) {
    circuit.append(Channel::rx(0.3 + 0.1 * i, used[i]));
    circuit.append(Channel::rzz(0.7, used[i], used[i + 1]));
  }
  const PropagateOptions options = forward(Truncation::coeff(1e-6));
  CpuEngineOptions cpu;
  cpu.threads = 2;
  NarrowEngine<4, double> engine(start, cpu);
  EXPECT_EQ(engine.width(), 1);
  run_layers<4>(engine, circuit, options);
  ASSERT_GE(engine.size(), 256u);
  PauliSum<4, double> narrowed(n);
  engine.export_to(narrowed);
  narrowed.check_invariants();
  EXPECT_TRUE(narrowed == at_full_width(start, circuit, options));
}

TEST(NarrowEngine, SkipsLayersOnQubitsNoTermUses) {
  const std::size_t n = 200;
  Circuit circuit(n);
  // The first layer tests every term against the policy (a new one), so it acts on the sum's qubit.
  circuit.append(Channel::rx(0.3, 3));
  circuit.append(Channel::rx(0.3, 150));          // no term has a factor on 150
  circuit.append(Channel::depolarize(0.1, 151));  // fixes the identity on 151
  circuit.append(Channel::rzz(0.2, 160, 161));
  const auto start = PauliSum<4, double>::from_labels(n, {{"Z3", 1.0}});
  CpuEngineOptions cpu;
  cpu.threads = 1;
  NarrowEngine<4, double> engine(start, cpu);
  const PropagationStats stats = run_layers<4>(engine, circuit, forward(Truncation::coeff(1e-9)));
  EXPECT_EQ(engine.skipped_layers(), 3u);
  EXPECT_EQ(engine.qubits_in_use(), 1u);
  EXPECT_EQ(engine.width(), 1);
  PauliSum<4, double> out(n);
  engine.export_to(out);
  EXPECT_TRUE(out == at_full_width(start, circuit, forward(Truncation::coeff(1e-9))));
  EXPECT_EQ(out.size(), 2u);  // Z3 and Y3
  EXPECT_EQ(stats.final_terms, 2u);
}

TEST(NarrowEngine, LabelsTheQubitsOfAChannelThatMovesTheIdentity) {
  // Forward amplitude damping maps I to I + γZ: the identity term gains a factor on an unused qubit.
  const std::size_t n = 130;
  Circuit circuit(n);
  circuit.append(Channel::amplitude_damping(0.25, 120));
  circuit.append(Channel::reset(70, 'X'));
  circuit.append(Channel::rx(0.5, 120));
  const auto start = PauliSum<4, Complex>::from_labels(n, {{"", Complex(1.0)}, {"Z5", Complex(0.5, 0.25)}});
  CpuEngineOptions cpu;
  cpu.threads = 1;
  NarrowEngine<4, Complex> engine(start, cpu);
  run_layers<4>(engine, circuit, forward(Truncation()));
  EXPECT_EQ(engine.skipped_layers(), 0u);
  EXPECT_EQ(engine.qubits_in_use(), 3u);
  PauliSum<4, Complex> out(n);
  engine.export_to(out);
  const PauliSum<4, Complex> wide = at_full_width(start, circuit, forward(Truncation()));
  EXPECT_TRUE(out == wide);
  EXPECT_NE(out.coefficient("Y120"), Complex(0.0));
}

TEST(NarrowEngine, AFirstLayerOnUnusedQubitsStillTestsEveryTermAgainstTheNewPolicy) {
  // Z70's coefficient is under the cut-off: the first layer drops it, wherever that layer acts.
  const std::size_t n = 100;
  Circuit circuit(n);
  for (Qubit q = 10; q < 14; ++q) circuit.append(Channel::rx(0.3, q));
  circuit.append(Channel::rzz(0.3, 3, 4));
  const auto start = PauliSum<2, double>::from_labels(n, {{"X3", 1.0}, {"Z70", 1e-9}});
  for (bool blocks : {true, false}) {
    PropagateOptions options = forward(Truncation::coeff(1e-6));
    options.gate_blocks = blocks;
    auto sum = start;
    propagate(sum, circuit, options);
    EXPECT_EQ(sum.coefficient("Z70"), 0.0);
    EXPECT_TRUE(sum == at_full_width(start, circuit, options));
  }
}

TEST(NarrowEngine, PropagateNarrowsOnlyWhereTheResultCannotDependOnKeyOrder) {
  PropagateOptions options = forward(Truncation::coeff(1e-3));
  EXPECT_TRUE(narrowable(options));
  options.truncation = Truncation::coeff(1e-3) & Truncation::weight(4);
  EXPECT_TRUE(narrowable(options));
  for (const Truncation& ranked : {Truncation::topn(10), Truncation::approx_topn(10),
                                   Truncation::collapse_sample(10, 1), Truncation::topn(5) | Truncation::coeff(1e-2)}) {
    options.truncation = ranked;
    EXPECT_FALSE(narrowable(options)) << ranked.description();
  }
  options.truncation = Truncation::coeff(1e-3);
  options.max_terms = 1000;
  EXPECT_FALSE(narrowable(options));
  options.max_terms = 0;
  options.general_layer = GeneralLayer::sort_merge;
  EXPECT_FALSE(narrowable(options));
  options.general_layer = GeneralLayer::orbit;
  options.in_place_rotations = false;
  EXPECT_FALSE(narrowable(options));
}

TEST(NarrowEngine, ResumeFromACheckpointGivesTheUninterruptedRunBitForBit) {
  // Heisenberg: the last gates act first. The resumed run labels the qubits of the checkpoint's sum,
  // in another order than the uninterrupted run; the coefficients cannot tell.
  const std::size_t n = 256;
  const Circuit circuit = staircase(n, 60, 200);
  const auto start = PauliSum<4, double>::from_labels(n, {{"X200", 1.0}});
  PropagateOptions options = forward(Truncation::coeff(1e-6) & Truncation::weight(8));
  options.direction = Direction::heisenberg;
  PauliSum<4, double> whole = start;
  const PropagationStats whole_stats = propagate(whole, circuit, options);

  PauliSum<4, double> part = start;
  PropagateOptions first = options;
  first.should_stop = [](std::size_t done) { return done == 117; };
  const PropagationStats stopped = propagate(part, circuit, first);
  ASSERT_TRUE(stopped.stopped);
  ASSERT_EQ(stopped.layers_done, 117u);
  PropagateOptions rest = options;
  rest.start_layer = 117;
  const PropagationStats resumed = propagate(part, circuit, rest);
  EXPECT_TRUE(part == whole);
  EXPECT_EQ(resumed.final_terms, whole_stats.final_terms);
  EXPECT_GT(whole.size(), 10u) << whole.size();
  EXPECT_TRUE(whole == at_full_width(start, circuit, options));
}

}  // namespace
}  // namespace paulistrings
