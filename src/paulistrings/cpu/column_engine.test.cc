// The column-index engine beyond the engine-equivalence suite (column_engine_equivalence.test.cc): the
// column index's anticommuting and touching rows against a direct check, and the index and the
// rows kept consistent through appends, removals and compactions, layer by layer against the reference.

#include "paulistrings/cpu/column_engine.h"

#include <gtest/gtest.h>

#include <numbers>
#include <random>
#include <span>
#include <vector>

#include "paulistrings/engine/reference_engine.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

template <int W>
PauliString<W> random_key(std::mt19937_64& rng, std::size_t qubits, double identity_probability) {
  std::uniform_real_distribution<double> uniform;
  std::uniform_int_distribution<int> letter(1, 3);
  PauliString<W> key;
  for (std::size_t q = 0; q < qubits; ++q) {
    if (uniform(rng) >= identity_probability) key.set_code(q, letter(rng));
  }
  return key;
}

std::vector<std::size_t> rows_of(const std::vector<std::uint64_t>& bits) {
  std::vector<std::size_t> rows;
  for (std::size_t w = 0; w < bits.size(); ++w)
    for (int b = 0; b < 64; ++b)
      if ((bits[w] >> b) & 1) rows.push_back(64 * w + static_cast<std::size_t>(b));
  return rows;
}

// Rows added and removed at random (a generator of weight 1 to 4, keys straddling a word boundary):
// after every change the anticommuting and touching rows are exactly the live rows a direct test finds.
template <int W>
void check_index_against_direct_test(std::size_t qubits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ColumnIndex<W> index;
  std::vector<PauliString<W>> keys;
  std::vector<char> live;
  std::vector<std::uint64_t> bits;
  for (int step = 0; step < 400; ++step) {
    if (keys.empty() || rng() % 3 != 0) {
      keys.push_back(random_key<W>(rng, qubits, 0.6));
      live.push_back(1);
      index.add(keys.size() - 1, keys.back());
    } else {
      const std::size_t r = rng() % keys.size();
      if (live[r]) {
        index.remove(r);
        live[r] = 0;
      }
    }
    if (step % 7 != 0) continue;
    PauliString<W> generator;
    const int weight = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < weight; ++k) generator.set_code(rng() % qubits, 1 + static_cast<int>(rng() % 3));
    std::vector<std::size_t> anticommuting, touching;
    for (std::size_t r = 0; r < keys.size(); ++r) {
      EXPECT_EQ(index.live(r), live[r] != 0) << "row " << r;
      if (!live[r]) continue;
      if (!keys[r].commutes_with(generator)) anticommuting.push_back(r);
      bool touches = false;
      for (int i = 0; i < W; ++i)
        touches |= ((keys[r].x[i] | keys[r].z[i]) & (generator.x[i] | generator.z[i])) != 0;
      if (touches) touching.push_back(r);
    }
    index.anticommuting(generator, bits);
    ASSERT_EQ(rows_of(bits), anticommuting)
        << "step " << step << ", generator " << generator.to_sparse_label();
    index.touching(generator, bits);
    ASSERT_EQ(rows_of(bits), touching) << "step " << step << ", support " << generator.to_sparse_label();
  }
}

TEST(ColumnIndex, AnticommutingAndTouchingRowsMatchADirectTest) {
  check_index_against_direct_test<1>(20, 1);
  check_index_against_direct_test<2>(128, 2);
  check_index_against_direct_test<4>(200, 3);
}

// Rows added in blocks of any length and offset (the layer's appends, transposed 64 rows at a time) give
// the columns that adding them one by one gives.
template <int W>
void check_blocks_against_single_adds(std::size_t qubits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PauliString<W>> keys;
  for (int k = 0; k < 700; ++k) keys.push_back(random_key<W>(rng, qubits, 0.5));
  ColumnIndex<W> single, blocks;
  for (std::size_t r = 0; r < keys.size(); ++r) single.add(r, keys[r]);
  for (std::size_t first = 0; first < keys.size();) {
    const std::size_t length = std::min<std::size_t>(1 + rng() % 150, keys.size() - first);
    blocks.add_rows(first, std::span<const PauliString<W>>(keys).subspan(first, length));
    first += length;
  }
  ASSERT_EQ(blocks.words(), single.words());
  for (std::size_t q = 0; q < qubits; ++q) {
    for (int plane = 0; plane < 2; ++plane) {
      const auto a = single.column(q, plane), b = blocks.column(q, plane);
      ASSERT_EQ(a.size(), b.size()) << "qubit " << q << " plane " << plane;
      for (std::size_t w = 0; w < a.size(); ++w) ASSERT_EQ(a[w], b[w]) << "qubit " << q << " plane " << plane;
    }
  }
  for (std::size_t r = 0; r < keys.size() + 64; ++r)
    ASSERT_EQ(blocks.live(r), r < keys.size()) << "row " << r;
}

TEST(ColumnIndex, RowsAddedInBlocksMatchRowsAddedOneByOne) {
  check_blocks_against_single_adds<1>(64, 21);
  check_blocks_against_single_adds<2>(128, 22);
  check_blocks_against_single_adds<4>(256, 23);
}

TEST(ColumnIndex, ClearForgetsEveryRow) {
  ColumnIndex<1> index;
  const auto key = PauliString<1>::from_label("XZY", 3);
  for (std::size_t r = 0; r < 100; ++r) index.add(r, key);
  index.clear();
  std::vector<std::uint64_t> bits;
  index.anticommuting(PauliString<1>::from_label("ZII", 3), bits);
  EXPECT_TRUE(rows_of(bits).empty());
  index.add(3, key);
  index.anticommuting(PauliString<1>::from_label("ZII", 3), bits);
  EXPECT_EQ(rows_of(bits), std::vector<std::size_t>{3});
}

// Layer by layer against the reference engine, the engine's invariants checked after every layer: random
// channels of every kind (appends, removals, merges into existing rows) under a coefficient cut that
// removes many rows (holes, tombstones and compactions).
template <int W, Coefficient C>
void check_layers_against_reference(std::size_t qubits, std::size_t offset, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::RandomChannelOptions channel_options;
  channel_options.measurements = true;
  const Circuit circuit = testing::random_circuit(rng, qubits, 60, channel_options, offset + qubits, offset);
  const auto labels =
      testing::shift_terms(testing::random_terms(rng, qubits, 300, std::same_as<C, Complex>), offset);
  std::vector<std::pair<std::string, C>> typed;
  for (const auto& [label, c] : labels) {
    if constexpr (std::same_as<C, Complex>) {
      typed.emplace_back(label, c);
    } else {
      typed.emplace_back(label, c.real());
    }
  }
  PauliSum<W, C> expected = PauliSum<W, C>::from_labels(offset + qubits, typed);
  ColumnEngine<W, C> engine(expected);
  const Truncation policy = Truncation::coeff(0.02);
  for (Direction direction : {Direction::heisenberg, Direction::forward}) {
    for (std::size_t k = 0; k < circuit.size(); ++k) {
      SCOPED_TRACE("layer " + std::to_string(k) + " " + circuit[k].description());
      const PreparedChannel<W> table = prepare_channel<W>(circuit[k], direction);
      const double want = apply_layer_reference(expected, table, policy, 1024, 1);
      const double got = engine.apply_layer(table, policy);
      ASSERT_NO_THROW(engine.check_invariants());
      EXPECT_NEAR(got, want, 1e-12);
      ASSERT_EQ(engine.size(), expected.size());
    }
    PauliSum<W, C> actual(offset + qubits);
    engine.export_to(actual);
    EXPECT_TRUE(testing::SumsMatch(actual, expected));
  }
}

TEST(ColumnEngine, RowsAndIndexStayConsistentLayerByLayer) {
  check_layers_against_reference<1, double>(7, 0, 11);
  check_layers_against_reference<2, double>(6, 61, 12);
  check_layers_against_reference<2, Complex>(6, 60, 13);
}

// A policy the rows were not tested with yet tests the rows a layer leaves unchanged too (as the
// reference engine does), and only then.
TEST(ColumnEngine, UnchangedRowsAreTestedAgainstANewPolicy) {
  auto sum = PauliSum<1, double>::from_labels(3, {{"ZII", 1.0}, {"IIZ", 1e-3}});
  ColumnEngine<1, double> engine(sum);
  const PreparedChannel<1> rx = prepare_channel<1>(Channel::rx(0.3, 0), Direction::heisenberg);
  const Truncation loose = Truncation::coeff(1e-6);
  EXPECT_EQ(engine.apply_layer(rx, loose), 0.0);
  EXPECT_EQ(engine.size(), 3u);  // Z0 → cos·Z0 + sin·Y0
  const Truncation tight = Truncation::coeff(1e-2);
  const double dropped =
      engine.apply_layer(prepare_channel<1>(Channel::rx(0.3, 1), Direction::heisenberg), tight);
  EXPECT_DOUBLE_EQ(dropped, 1e-6);  // IIZ commutes with X1 and fails the new policy
  EXPECT_EQ(engine.size(), 2u);
  engine.check_invariants();
}

// cos θ = 0 turns a row into its partner where it stands; a non-unital channel feeds the rows that are I
// on its support, which the columns do not flag.
TEST(ColumnEngine, PermutationRotationsMoveRowsAndNonUnitalChannelsReachIdentityRows) {
  auto expected =
      PauliSum<1, double>::from_labels(3, {{"ZII", 1.0}, {"YIZ", 0.5}, {"III", 0.25}, {"IIX", 2.0}});
  ColumnEngine<1, double> engine(expected);
  const Truncation none;
  for (const Channel& channel :
       {Channel::rx(std::numbers::pi / 2, 0), Channel::amplitude_damping(0.3, 0),
        Channel::amplitude_damping(0.4, 2), Channel::rzz(-std::numbers::pi / 2, 0, 2)}) {
    SCOPED_TRACE(channel.description());
    const PreparedChannel<1> table = prepare_channel<1>(channel, Direction::heisenberg);
    const std::size_t rows = engine.rows();
    apply_layer_reference(expected, table, none, 1024, 1);
    engine.apply_layer(table, none);
    engine.check_invariants();
    if (table.form == PreparedChannel<1>::Form::rotation) {
      EXPECT_EQ(engine.rows(), rows);  // moved in place: no row appended
    }
    PauliSum<1, double> actual(3);
    engine.export_to(actual);
    EXPECT_TRUE(testing::SumsMatch(actual, expected));
  }
}

TEST(ColumnEngine, CollapseAndTopnPassesKeepTheIndexConsistent) {
  std::mt19937_64 rng(5);
  const auto labels = testing::random_terms(rng, 6, 200, false);
  std::vector<std::pair<std::string, double>> typed;
  for (const auto& [label, c] : labels) typed.emplace_back(label, c.real());
  auto sum = PauliSum<1, double>::from_labels(6, typed);
  ColumnEngine<1, double> engine(sum);
  const std::size_t before = engine.size();
  engine.finalize_layer(Truncation::topn(before / 3));
  engine.check_invariants();
  EXPECT_LE(engine.size(), before / 3);
  engine.finalize_layer(Truncation::collapse_sample(1, 9));
  engine.check_invariants();
  EXPECT_EQ(engine.size(), 1u);
  engine.apply_layer(prepare_channel<1>(Channel::rx(0.3, 0), Direction::heisenberg), Truncation());
  engine.check_invariants();
}

}  // namespace
}  // namespace paulistrings
