// Sweep checkpoints (run/sweep_checkpoints.h, sweep/propagate_sweep.h's SweepState): a sweep stopped after
// any layer, saved, loaded and resumed — or run in checkpointed segments — ends in the uninterrupted run's
// bits, rows in the same order, with both sweep engines, with gradients and under truncations with and
// without a layer pass; a split sweep's checkpoint holds every group and resumes to the split run's bits;
// a checkpoint of another sweep (circuit, values, gradients, column count) is refused.

#include "paulistrings/run/sweep_checkpoints.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/io/checkpoint.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/checkpoints.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/temp_dir.h"

namespace paulistrings {
namespace {

using testing::ThrowsInvalidArgumentMentioning;

constexpr std::size_t kSweepQubits = 6;

/// Column k of a sweep over the angle of every rx (and the strength of the noise): rotations, Cliffords,
/// a general two-qubit unitary (its outputs merge), amplitude damping, depolarizing, a reset; column 0 at
/// angle 0 (its sines vanish: rows other columns make hold ±0 there).
Circuit column(double theta, double p) {
  Circuit c(kSweepQubits);
  const double s = std::sqrt(0.5);
  const std::vector<Complex> swap_like = {1, 0, 0, 0, 0, Complex(0, s), s, 0, 0, s, Complex(0, s),
                                          0, 0, 0, 0, 1};
  // Applied last (the sweeps here run in the Heisenberg direction, the circuit from its end): qubit 5
  // leaves every key while the light cone keeps it, so the noise on it is applied — to the zero entries
  // (±0) that column 0's rotations (sine 0) leave in rows — though no key is there; only rotations follow,
  // which keep those signs to the end.
  c.append(Channel::rx(theta * 0.5, 2));
  c.append(Channel::dephase(p, 5));
  c.append(Channel::rx(theta * 0.7, 3));
  c.append(Channel::depolarize(p, 5));
  c.append(Channel::rx(theta * 1.3, 1));
  c.append(Channel::reset(5));
  for (int round = 0; round < 3; ++round) {
    for (Qubit q = 0; q < kSweepQubits; ++q) c.append(Channel::rx(theta * (1 + 0.1 * q), q));
    for (Qubit q = 0; q + 1 < kSweepQubits; q += 2) c.append(Channel::rzz(0.7, q, q + 1));
    c.append(Channel::cnot(1, 2));
    c.append(Channel::unitary_2q(3, 4, swap_like));
    c.append(Channel::amplitude_damping(p, 5));
    c.append(Channel::depolarize(p / 2, 0));
    c.append(Channel::reset(5));  // the sum shrinks; the engine keeps its buckets
    c.append(Channel::h(4));
  }
  return c;
}

struct Sweep {
  std::vector<Circuit> columns;
  std::vector<SweepGradient> gradients;
  AnyPauliSum observable;
};

Sweep make_sweep(bool gradient, std::vector<double> thetas = {0.0, 0.9, -2.2}) {
  Sweep sweep;
  for (std::size_t k = 0; k < thetas.size(); ++k) sweep.columns.push_back(column(thetas[k], 0.05 + 0.05 * k));
  if (gradient) {
    SweepGradient g{"theta", std::vector<std::vector<LayerDerivative>>(thetas.size())};
    for (std::size_t k = 0; k < thetas.size(); ++k) {
      const Circuit& c = sweep.columns[k];
      for (std::size_t l = 0; l < c.size(); ++l) {
        if (c[l].kind() != ChannelKind::pauli_rotation || c[l].qubits().size() != 1 || c[l].pauli() != "X")
          continue;
        // ∂/∂(a shift of every rx angle): each rx layer's derivative at its own angle.
        const Qubit q = c[l].qubits()[0];
        g.derivatives[k].push_back(sweep_derivative(
            l, [q](double t) { return Channel::rx(t, q); }, c[l].theta(), true));
      }
    }
    sweep.gradients.push_back(std::move(g));
  }
  sweep.observable = AnyPauliSum::from_labels(
      kSweepQubits,
      std::vector<std::pair<std::string, Complex>>{{"ZZIIII", 1.0}, {"IIXYII", 0.5}, {"IIIIZZ", -0.25}});
  return sweep;
}

/// Equal bits: the same rows in the same order, every coefficient bit for bit (±0 included), and the
/// same engine layout (the reference engine keeps no light cone: a file holds the keys' supports).
::testing::AssertionResult SameState(const SweepState& a, const SweepState& b) {
  const bool cones = a.light_cone.empty() || b.light_cone.empty() || a.light_cone == b.light_cone;
  if (a.layers_done != b.layers_done || a.bucket_bits != b.bucket_bits || !cones)
    return ::testing::AssertionFailure() << "layers/bucket bits/light cone differ: " << a.layers_done << " "
                                         << b.layers_done << ", " << a.bucket_bits << " " << b.bucket_bits;
  bool same = false;
  a.sum.visit([&](const auto& x) {
    using Sum = std::decay_t<decltype(x)>;
    const auto* y = b.sum.get_if<Sum::kWidth, typename Sum::Coeff>();
    same = y != nullptr && x.columns() == y->columns() && x.size() == y->size() &&
           std::equal(x.keys().begin(), x.keys().end(), y->keys().begin()) &&
           std::memcmp(x.coefficients().data(), y->coefficients().data(), x.coefficients().size_bytes()) == 0;
  });
  if (!same)
    return ::testing::AssertionFailure() << "rows differ (" << a.sum.size() << " vs " << b.sum.size() << ")";
  return ::testing::AssertionSuccess();
}

PropagateOptions options(Engine engine, const Truncation& truncation) {
  PropagateOptions o;
  o.direction = Direction::heisenberg;
  o.truncation = truncation;
  o.engine = engine;
  o.threads = 2;
  // Small buckets and a low parallel threshold: refinement and the threads both happen in a small sweep.
  o.target_bucket_len = 2;
  o.parallel_threshold = 8;
  return o;
}

/// The state of `sweep` after `layers` steps (0: the observable in every value column).
SweepState stopped_at(const Sweep& sweep, PropagateOptions o, std::size_t layers) {
  SweepState state;
  if (layers == 0) {
    o.should_stop = [](std::size_t) { return true; };  // after the first layer: then resumed from 0 below
  } else {
    o.should_stop = [layers](std::size_t done) { return done == layers; };
  }
  propagate_sweep(sweep.observable, sweep.columns, o, state, sweep.gradients);
  return state;
}

/// Segments of `sweep` under `o` writing a checkpoint at `path` every `every` layers (task fingerprint 9).
SweepRunOptions checkpointed(const Sweep& sweep, const PropagateOptions& o, std::filesystem::path path,
                             std::size_t every) {
  SweepRunOptions run;
  run.propagate = o;
  run.checkpoint = std::move(path);
  run.checkpoint_every = every;
  run.circuit_fingerprint = sweep_circuit_fingerprint(sweep.columns);
  run.task_fingerprint = 9;
  return run;
}

class SweepCheckpoint : public testing::TempDirTest {};

TEST_F(SweepCheckpoint, ResumingAfterAnyLayerGivesTheUninterruptedBits) {
  for (const bool gradient : {false, true}) {
    const Sweep sweep = make_sweep(gradient);
    const std::size_t layers = sweep.columns[0].size();
    const std::size_t all_columns = 3 * (gradient ? 2 : 1);
    for (const Engine engine : {Engine::cpu, Engine::reference}) {
      for (const Truncation& truncation : {Truncation::coeff(1e-3), Truncation::topn(40)}) {
        SCOPED_TRACE(std::string(gradient ? "gradient " : "") +
                     (engine == Engine::cpu ? "cpu " : "reference ") + truncation.description());
        const PropagateOptions o = options(engine, truncation);
        SweepState full;
        propagate_sweep(sweep.observable, sweep.columns, o, full, sweep.gradients);
        ASSERT_EQ(full.layers_done, layers);
        ASSERT_GT(full.sum.size(), 20u);
        // For one engine, truncation and gradient after every layer of the part the light cone matters
        // in (the last seven) and every third before; after a few for the others.
        std::vector<std::size_t> stops = {1, 2, layers / 2, layers - 5, layers - 1, layers};
        if (gradient && engine == Engine::cpu && truncation.has_term_test()) {
          stops.clear();
          for (std::size_t at = 1; at <= layers; ++at) {
            if (at % 3 == 1 || at + 7 >= layers) stops.push_back(at);
          }
        }
        for (const std::size_t at : stops) {
          SCOPED_TRACE("stopped after layer " + std::to_string(at));
          SweepState state = at == layers ? full : stopped_at(sweep, o, at);
          ASSERT_EQ(state.layers_done, at);
          const auto path = dir_ / "s.ckpt";
          write_sweep_checkpoint(path, sweep_circuit_fingerprint(sweep.columns), 42, state);
          const std::uint64_t fingerprints[] = {41, 42};
          SweepResumePoint point =
              load_sweep_resume(path, sweep.columns, all_columns, kSweepQubits, fingerprints, "sweep");
          EXPECT_EQ(point.match, 1u);
          ASSERT_TRUE(SameState(point.state, state));  // the file holds the state bit for bit
          SweepState resumed = std::move(point.state);
          const SweepStats rest = resume_sweep(sweep.observable, sweep.columns, o, resumed, sweep.gradients);
          EXPECT_EQ(rest.stats.layers_done, layers);
          EXPECT_TRUE(SameState(resumed, full));
          // In memory, without a file: the same.
          resume_sweep(sweep.observable, sweep.columns, o, state, sweep.gradients);
          EXPECT_TRUE(SameState(state, full));
        }
        // From the state before any layer: the observable in every value column, derivatives zero.
        SweepState zero;
        sweep.observable.visit([&](const auto& obs) {
          using Obs = std::decay_t<decltype(obs)>;
          std::vector<PauliString<Obs::kWidth>> keys(obs.keys().begin(), obs.keys().end());
          std::vector<typename Obs::Coeff> coefficients;
          for (std::size_t i = 0; i < obs.size(); ++i) {
            for (std::size_t j = 0; j < all_columns; ++j)
              coefficients.push_back(j < 3 ? obs.coefficients()[i] : typename Obs::Coeff(0.0));
          }
          zero.sum = AnySweepSum(
              SweepSum<Obs::kWidth, typename Obs::Coeff>(kSweepQubits, all_columns, keys, coefficients));
        });
        ASSERT_FALSE(full.sum.is_complex());
        resume_sweep(sweep.observable, sweep.columns, o, zero, sweep.gradients);
        EXPECT_TRUE(SameState(zero, full));
      }
    }
  }
}

TEST_F(SweepCheckpoint, SegmentsWithCheckpointsAndAnInterruptGiveTheUninterruptedBits) {
  const Sweep sweep = make_sweep(true);
  const PropagateOptions o = options(Engine::cpu, Truncation::coeff(1e-3));
  SweepState full;
  const SweepStats plain = propagate_sweep(sweep.observable, sweep.columns, o, full, sweep.gradients);
  SweepRunOptions run = checkpointed(sweep, o, dir_ / "run.ckpt", 4);
  SweepState state;
  SweepRunResult result =
      run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, run, state, false);
  EXPECT_FALSE(result.interrupted);
  EXPECT_TRUE(SameState(state, full));
  EXPECT_EQ(result.stats.stats.final_terms, plain.stats.final_terms);
  EXPECT_EQ(result.stats.discarded_weight.size(), plain.discarded_weight.size());
  // The last checkpoint is after the last multiple of 4 before the end.
  const std::size_t layers = sweep.columns[0].size();
  EXPECT_EQ(io::load_columns_checkpoint(*run.checkpoint).header.layers_done, (layers - 1) / 4 * 4);
  // Interrupted after layer 10: the checkpoint holds it; resumed from the file, the uninterrupted bits.
  int polls = 0;
  run.checkpoint_every = 0;
  run.interrupted = [&] { return ++polls >= 10; };  // a flag that stays set, as a signal's
  SweepState stopped;
  result = run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, run, stopped, false);
  EXPECT_TRUE(result.interrupted);
  EXPECT_TRUE(result.checkpoint_written);
  EXPECT_EQ(stopped.layers_done, 10u);
  const std::uint64_t fingerprint[] = {9};
  SweepResumePoint point =
      load_sweep_resume(*run.checkpoint, sweep.columns, 6, kSweepQubits, fingerprint, "sweep");
  run.interrupted = nullptr;
  result = run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, run, point.state, true);
  EXPECT_FALSE(result.interrupted);
  EXPECT_TRUE(SameState(point.state, full));
}

/// Equal groups: the same places and layouts, each group's rows bit for bit.
::testing::AssertionResult SameGroups(const SweepState& a, const SweepState& b) {
  if (a.groups.size() != b.groups.size())
    return ::testing::AssertionFailure() << a.groups.size() << " groups against " << b.groups.size();
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    const SweepGroupState &x = a.groups[g], &y = b.groups[g];
    if (x.first != y.first || x.count != y.count || x.next_count != y.next_count || x.apart != y.apart ||
        x.bucket_bits != y.bucket_bits || x.light_cone != y.light_cone)
      return ::testing::AssertionFailure() << "group " << g << "'s place or layout differs";
    SweepState rows_x, rows_y;
    rows_x.sum = x.sum;
    rows_y.sum = y.sum;
    if (!SameState(rows_x, rows_y)) return ::testing::AssertionFailure() << "group " << g << "'s rows differ";
  }
  return ::testing::AssertionSuccess();
}

TEST_F(SweepCheckpoint, ASplitSweepsCheckpointHoldsEveryGroupAndResumesToTheSplitRunsBits) {
  // Columns that diverge (angle 0 keeps few terms), counted from the first term: the sweep splits.
  const Sweep sweep = make_sweep(true, {0.0, 0.05, 0.9, -2.2});
  PropagateOptions o = options(Engine::cpu, Truncation::coeff(1e-2));
  o.sweep_split_min_terms = 1;
  o.threads = 1;  // (the thread counts' bits: sweep/propagate_sweep.test.cc)
  SweepState split;
  const SweepStats split_stats = propagate_sweep(sweep.observable, sweep.columns, o, split, sweep.gradients);
  ASSERT_GE(split_stats.splits, 1u);
  ASSERT_GE(split.groups.size(), 2u);
  // In segments that write a checkpoint every 3 layers: the split run's bits, its groups included.
  SweepRunOptions run = checkpointed(sweep, o, dir_ / "split.ckpt", 3);
  SweepState state;
  SweepRunResult result =
      run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, run, state, false);
  EXPECT_EQ(result.stats.groups, split.groups.size());
  EXPECT_TRUE(SameState(state, split));
  EXPECT_TRUE(SameGroups(state, split));
  EXPECT_EQ(io::checkpoint_version(*run.checkpoint), 3u);  // the last stop was after the split
  // Stopped after each layer once the columns have split, written, read back and resumed from the file.
  const std::size_t layers = sweep.columns[0].size();
  const std::uint64_t fingerprint[] = {9};
  SweepRunOptions plain = run;
  plain.checkpoint.reset();
  std::size_t checked = 0;
  for (std::size_t stop = 1; stop < layers; ++stop) {
    SCOPED_TRACE("stopped after layer " + std::to_string(stop));
    const SweepState stopped = stopped_at(sweep, o, stop);
    if (stopped.groups.empty()) continue;
    ++checked;
    const auto path = dir_ / "stop.ckpt";
    write_sweep_checkpoint(path, run.circuit_fingerprint, 9, stopped);
    ASSERT_EQ(io::checkpoint_version(path), 3u);
    SweepResumePoint point = load_sweep_resume(path, sweep.columns, 8, kSweepQubits, fingerprint, "sweep");
    EXPECT_EQ(point.state.layers_done, stop);
    EXPECT_TRUE(SameGroups(point.state, stopped));
    run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, plain, point.state, true);
    ASSERT_TRUE(SameState(point.state, split));
    ASSERT_TRUE(SameGroups(point.state, split));
  }
  EXPECT_GT(checked, 5u);
  // Interrupted in memory after the split and resumed from the state's groups: the same bits.
  std::size_t polls = 0;
  plain.interrupted = [&] { return ++polls >= layers - 2; };
  SweepState stopped;
  result = run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, plain, stopped, false);
  ASSERT_TRUE(result.interrupted);
  EXPECT_FALSE(stopped.groups.empty());
  plain.interrupted = nullptr;
  run_sweep_segments(sweep.observable, sweep.columns, sweep.gradients, plain, stopped, true);
  EXPECT_TRUE(SameState(stopped, split));
  EXPECT_TRUE(SameGroups(stopped, split));
  // A split checkpoint of another column count is refused, counting every group's columns.
  const auto path = dir_ / "stop.ckpt";
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { load_sweep_resume(path, sweep.columns, 6, kSweepQubits, fingerprint, "sweep"); },
      {"holds 8 coefficient columns a term but this sweep has 6"}));
}

TEST_F(SweepCheckpoint, ACheckpointOfAnotherSweepIsRefused) {
  const Sweep sweep = make_sweep(true);
  const PropagateOptions o = options(Engine::cpu, Truncation::coeff(1e-3));
  const SweepState state = stopped_at(sweep, o, 5);
  const auto path = dir_ / "s.ckpt";
  const std::uint64_t base = 1234;
  const std::uint64_t task = sweep_task_fingerprint(base, sweep.columns, sweep.gradients);
  write_sweep_checkpoint(path, sweep_circuit_fingerprint(sweep.columns), task, state);
  const std::uint64_t mine[] = {task};
  EXPECT_NO_THROW(load_sweep_resume(path, sweep.columns, 6, kSweepQubits, mine, "sweep"));
  // Another value in one column: another circuit fingerprint.
  const Sweep moved = make_sweep(true, {0.0, 0.9, -2.1});
  EXPECT_NE(sweep_circuit_fingerprint(moved.columns), sweep_circuit_fingerprint(sweep.columns));
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { load_sweep_resume(path, moved.columns, 6, kSweepQubits, mine, "sweep (values differ)"); },
      {"checkpoint " + path.string() + " belongs to a different sweep (values differ); refusing to resume"}));
  // No gradient, another base (direction, truncation, observable): other task fingerprints.
  const Sweep plain = make_sweep(false);
  EXPECT_NE(sweep_task_fingerprint(base, plain.columns, plain.gradients), task);
  EXPECT_NE(sweep_task_fingerprint(base + 1, sweep.columns, sweep.gradients), task);
  EXPECT_NE(sweep_task_fingerprint(base, moved.columns, moved.gradients), task);  // the derivatives moved
  const std::uint64_t other[] = {sweep_task_fingerprint(base + 1, sweep.columns, sweep.gradients)};
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { load_sweep_resume(path, sweep.columns, 6, kSweepQubits, other, "sweep"); },
      {"belongs to a different sweep"}));
  // Another column count: said as such.
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { load_sweep_resume(path, plain.columns, 3, kSweepQubits, mine, "sweep"); },
      {"holds 6 coefficient columns a term but this sweep has 3"}));
  EXPECT_THROW(load_sweep_resume(dir_ / "missing.ckpt", sweep.columns, 6, kSweepQubits, mine, "sweep"),
               CheckpointNotFound);
  // The library's own checks of a state.
  SweepState copy = state;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { resume_sweep(plain.observable, plain.columns, o, copy, plain.gradients); },
      {"resume_sweep: the state holds 6 columns but this sweep 3 (3 values × (1 + 0 gradients))"}));
  copy = state;
  copy.layers_done = 1000;
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { resume_sweep(sweep.observable, sweep.columns, o, copy, sweep.gradients); },
      {"is after 1000 layers but the circuits have"}));
  copy = state;
  const AnyPauliSum complex_observable = AnyPauliSum::from_labels(
      kSweepQubits, std::vector<std::pair<std::string, Complex>>{{"ZZIIII", Complex(1.0, 0.5)}});
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning(
      [&] { resume_sweep(complex_observable, sweep.columns, o, copy, sweep.gradients); },
      {"has real coefficients but this sweep's are complex"}));
}

}  // namespace
}  // namespace paulistrings
