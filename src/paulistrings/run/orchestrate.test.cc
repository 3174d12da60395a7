// The run orchestration (orchestrate.h) on small circuits: segments with checkpoints give the
// uninterrupted run bitwise, an interrupt stops after the layer with a checkpoint to resume from, a resumed
// run is bitwise the uninterrupted one, the memory limit becomes a term budget, several observables resume
// the right one, and distributed runs over the in-process transport: one part per rank, resumed with
// another rank count or in one process, mixed parts refused, an interrupt on one rank stops all, and a
// rank that cannot start makes every rank refuse; the host memory guard stops before a layer with a
// checkpoint to resume from, and on GPUs the limit is in device bytes.

#include "paulistrings/run/orchestrate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "paulistrings/io/checkpoint.h"
#include "paulistrings/partition/transport.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/temp_dir.h"

namespace paulistrings {
namespace {

namespace fs = std::filesystem;
using testing::ThrowsInvalidArgumentMentioning;

constexpr std::size_t kCircuitQubits = 8;

/// Rotation layers that make the sum grow to a few hundred terms: 3 steps of rx on every qubit and zz
/// on neighbours (45 layers).
Circuit brickwork() {
  Circuit circuit(kCircuitQubits);
  for (int step = 0; step < 3; ++step) {
    for (std::size_t q = 0; q < kCircuitQubits; ++q) circuit.append(Channel::rx(0.4 + 0.1 * step, q));
    for (std::size_t q = 0; q + 1 < kCircuitQubits; ++q) circuit.append(Channel::rzz(0.3, q, q + 1));
  }
  return circuit;
}

AnyPauliSum observable(double scale = 1.0) {
  const std::vector<std::pair<std::string, Complex>> terms = {{"IIIZIIII", scale}, {"XIIIIIIX", 0.5}};
  return AnyPauliSum::from_labels(kCircuitQubits, terms);
}

RunOptions base_options() {
  RunOptions options;
  options.propagate.direction = Direction::heisenberg;
  options.propagate.truncation = Truncation::coeff(1e-6);
  options.propagate.threads = 1;
  options.fingerprint = 42;
  return options;
}

/// The same terms with the same coefficient bits, in any order.
::testing::AssertionResult Bitwise(const AnyPauliSum& actual, const AnyPauliSum& expected) {
  auto a = actual.terms(), b = expected.terms();
  const auto by_label = [](const auto& x, const auto& y) { return x.first < y.first; };
  std::sort(a.begin(), a.end(), by_label);
  std::sort(b.begin(), b.end(), by_label);
  if (a == b) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << a.size() << " vs " << b.size() << " terms, or a coefficient differs";
}

/// Terms that agree to rounding (partitions add equal keys in another order).
::testing::AssertionResult Close(const AnyPauliSum& actual, const AnyPauliSum& expected) {
  auto a = actual.terms(), b = expected.terms();
  const auto by_label = [](const auto& x, const auto& y) { return x.first < y.first; };
  std::sort(a.begin(), a.end(), by_label);
  std::sort(b.begin(), b.end(), by_label);
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " terms";
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first || std::abs(a[i].second - b[i].second) > 1e-12) {
      return ::testing::AssertionFailure() << "term " << a[i].first << " vs " << b[i].first;
    }
  }
  return ::testing::AssertionSuccess();
}

class Orchestrate : public testing::TempDirTest {
 protected:
  /// The uninterrupted run of observable() through brickwork().
  AnyPauliSum Full(RunResult* result = nullptr) {
    AnyPauliSum sum = observable();
    const RunResult run = orchestrate(sum, circuit_, base_options());
    if (result != nullptr) *result = run;
    return sum;
  }
  Circuit circuit_ = brickwork();
};

/// An interrupted() flag that turns true once `layers` layers are done (counted through on_layer).
struct InterruptAfter {
  explicit InterruptAfter(std::size_t layers) : layers(layers) {}
  void install(RunOptions& options) {
    options.propagate.on_layer = [this](const LayerRecord& r) { done = r.application_index + 1; };
    options.interrupted = [this] {
      ++polls;
      return done >= layers;
    };
  }
  std::size_t layers, done = 0, polls = 0;
};

TEST_F(Orchestrate, SegmentsWithCheckpointsGiveTheUninterruptedRunBitwise) {
  RunResult full_result;
  const AnyPauliSum full = Full(&full_result);
  RunOptions options = base_options();
  options.checkpoint = dir_ / "run.ckpt";
  options.checkpoint_every = 10;
  io::save_checkpoint(dir_ / "run.ckpt.part-0-of-2", io::Checkpoint{1, 2, 3, AnyPauliSum(kCircuitQubits)});
  AnyPauliSum sum = observable();
  const RunResult result = orchestrate(sum, circuit_, options);
  EXPECT_TRUE(Bitwise(sum, full));
  EXPECT_FALSE(result.interrupted);
  EXPECT_TRUE(result.checkpoint_written);
  // The whole run's statistics: every layer once, in order, as the run in one piece.
  ASSERT_EQ(result.stats.layers.size(), circuit_.size());
  for (std::size_t i = 0; i < circuit_.size(); ++i) {
    EXPECT_EQ(result.stats.layers[i].application_index, i);
    EXPECT_EQ(result.stats.layers[i].terms_out, full_result.stats.layers[i].terms_out);
  }
  EXPECT_EQ(result.stats.layers_done, circuit_.size());
  EXPECT_EQ(result.stats.peak_terms, full_result.stats.peak_terms);
  EXPECT_EQ(result.stats.final_terms, full.size());
  EXPECT_DOUBLE_EQ(result.stats.discarded_weight, full_result.stats.discarded_weight);
  // The last checkpoint (after layer 40 of 45) replaced the stale part of another run.
  EXPECT_EQ(Entries(), std::vector<std::string>{"run.ckpt"});
  const io::Checkpoint last = io::load_checkpoint(dir_ / "run.ckpt");
  EXPECT_EQ(last.layers_done, 40u);
  EXPECT_EQ(last.task_fingerprint, 42u);
  EXPECT_EQ(last.circuit_fingerprint, circuit_.fingerprint());
}

TEST_F(Orchestrate, TheColumnPhaseEndsOnceAcrossSegments) {
  const AnyPauliSum full = Full();
  for (const std::size_t phase_layers : {std::size_t{3}, std::size_t{15}}) {
    SCOPED_TRACE(phase_layers);
    RunOptions options = base_options();
    options.propagate.column_phase.fraction = 2.0;  // the phase ends after phase_layers layers of a segment
    options.propagate.column_phase.max_layers = phase_layers;
    options.checkpoint = dir_ / "phase.ckpt";
    options.checkpoint_every = 10;
    AnyPauliSum sum = observable();
    const RunResult result = orchestrate(sum, circuit_, options);
    EXPECT_TRUE(Bitwise(sum, full));
    // 3: the first segment's first 3 layers, and the coset engine from there on. 15: no segment of 10
    // layers reaches it, so every layer stays in the phase.
    EXPECT_EQ(result.stats.column_layers, phase_layers == 3 ? 3u : circuit_.size());
  }
}

TEST_F(Orchestrate, AnInterruptStopsAfterTheLayerAndTheResumedRunIsBitwiseTheWhole) {
  const AnyPauliSum full = Full();
  RunOptions options = base_options();
  options.checkpoint = dir_ / "run.ckpt";
  InterruptAfter interrupt(17);
  interrupt.install(options);
  AnyPauliSum sum = observable();
  const RunResult stopped = orchestrate(sum, circuit_, options);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_TRUE(stopped.stats.stopped);
  EXPECT_TRUE(stopped.checkpoint_written);
  EXPECT_EQ(stopped.stats.layers_done, 17u);
  EXPECT_EQ(stopped.stats.layers.size(), 17u);
  EXPECT_GT(interrupt.polls, 0u);
  EXPECT_TRUE(Bitwise(io::load_checkpoint(dir_ / "run.ckpt").sum, sum));  // the state after layer 17

  RunOptions resume = base_options();
  resume.resume = dir_ / "run.ckpt";
  AnyPauliSum resumed = observable();
  const RunResult rest = orchestrate(resumed, circuit_, resume);
  EXPECT_TRUE(Bitwise(resumed, full));
  EXPECT_FALSE(rest.interrupted);
  ASSERT_EQ(rest.stats.layers.size(), circuit_.size() - 17);
  EXPECT_EQ(rest.stats.layers.front().application_index, 17u);
}

TEST_F(Orchestrate, WithoutALayerScheduleCheckpointsAreWrittenByTime) {
  // An interval shorter than any layer: a checkpoint at the first boundary (and at later ones once the
  // interval, at least ten times the last write's time, has passed), and still the uninterrupted run's bits.
  const AnyPauliSum full = Full();
  RunOptions options = base_options();
  options.checkpoint = dir_ / "run.ckpt";
  options.checkpoint_interval = std::chrono::nanoseconds(1);
  AnyPauliSum sum = observable();
  const RunResult result = orchestrate(sum, circuit_, options);
  EXPECT_TRUE(Bitwise(sum, full));
  EXPECT_FALSE(result.interrupted);
  EXPECT_TRUE(result.checkpoint_written);
  EXPECT_EQ(result.stats.layers.size(), circuit_.size());
  // The first boundary always stops; later ones as the interval (at least ten times a write) allows.
  const io::Checkpoint last = io::load_checkpoint(dir_ / "run.ckpt");
  EXPECT_GE(last.layers_done, 1u);
  EXPECT_LT(last.layers_done, circuit_.size());

  // The default interval (ten minutes) writes nothing in a run this short.
  RunOptions quick = base_options();
  quick.checkpoint = dir_ / "quick.ckpt";
  AnyPauliSum again = observable();
  EXPECT_FALSE(orchestrate(again, circuit_, quick).checkpoint_written);
  EXPECT_FALSE(fs::exists(dir_ / "quick.ckpt"));
}

TEST_F(Orchestrate, AStopInsideALayerKeepsTheStateOfTheLastCheckpointAndResumesBitwise) {
  const AnyPauliSum full = Full();
  RunOptions options = base_options();
  options.checkpoint = dir_ / "run.ckpt";
  options.checkpoint_every = 10;
  options.propagate.parallel_threshold = 0;  // the engine polls between cosets even on small sums
  std::atomic<std::size_t> done{0};
  options.propagate.on_layer = [&](const LayerRecord& r) { done = r.application_index + 1; };
  std::atomic<bool> stop{false};
  options.interrupted = [&] { return stop.load(); };
  options.propagate.interrupt = [&] {
    if (done.load() >= 23) stop = true;  // a signal arriving inside layer 24
    return stop.load();
  };
  AnyPauliSum sum = observable();
  const RunResult stopped = orchestrate(sum, circuit_, options);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_TRUE(stopped.abandoned_layer);
  EXPECT_TRUE(stopped.checkpoint_written);
  EXPECT_EQ(stopped.stats.layers_done, 20u);  // the segment that began after layer 20 was abandoned
  const io::Checkpoint saved = io::load_checkpoint(dir_ / "run.ckpt");
  EXPECT_EQ(saved.layers_done, 20u);
  EXPECT_TRUE(Bitwise(saved.sum, sum));

  RunOptions resume = base_options();
  resume.resume = dir_ / "run.ckpt";
  AnyPauliSum resumed = observable();
  orchestrate(resumed, circuit_, resume);
  EXPECT_TRUE(Bitwise(resumed, full));
}

TEST_F(Orchestrate, ASignalDuringTheLastLayerIsAnInterruptionNotACompletedRun) {
  RunOptions options = base_options();
  options.checkpoint = dir_ / "run.ckpt";
  std::size_t done = 0;
  options.propagate.on_layer = [&](const LayerRecord& r) { done = r.application_index + 1; };
  options.interrupted = [&] { return done == circuit_.size(); };  // raised while the last layer ran
  AnyPauliSum sum = observable();
  const RunResult result = orchestrate(sum, circuit_, options);
  EXPECT_TRUE(result.interrupted);
  EXPECT_TRUE(result.checkpoint_written);
  EXPECT_EQ(io::load_checkpoint(dir_ / "run.ckpt").layers_done, circuit_.size());
  EXPECT_TRUE(Bitwise(io::load_checkpoint(dir_ / "run.ckpt").sum, sum));
}

TEST_F(Orchestrate, AnInterruptWithoutACheckpointLeavesTheStateItReached) {
  InterruptAfter interrupt(5);
  RunOptions options = base_options();
  interrupt.install(options);
  AnyPauliSum sum = observable();
  const RunResult stopped = orchestrate(sum, circuit_, options);
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_FALSE(stopped.checkpoint_written);
  Circuit first(kCircuitQubits);
  for (std::size_t i = circuit_.size() - 5; i < circuit_.size(); ++i)
    first.append(circuit_[i]);  // heisenberg
  AnyPauliSum expected = observable();
  orchestrate(expected, first, base_options());
  EXPECT_TRUE(Bitwise(sum, expected));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(Orchestrate, TheMemoryLimitBecomesATermBudget) {
  // Unbounded, Z⊗10 grows past 20 000 terms in these 3 steps; the smallest limit the room check allows
  // (1 MiB above the baseline) is a budget of about 11 000 terms of 96 bytes.
  Circuit circuit(10);
  for (std::size_t step = 0; step < 3; ++step) {
    for (std::size_t q = 0; q < 10; ++q) circuit.append(Channel::rx(0.7, q));
    for (std::size_t q = step % 2; q + 1 < 10; q += 2) circuit.append(Channel::rzz(0.9, q, q + 1));
  }
  const std::vector<std::pair<std::string, Complex>> z = {{"ZZZZZZZZZZ", 1.0}};
  RunOptions options = base_options();
  options.propagate.truncation = Truncation();
  AnyPauliSum free = AnyPauliSum::from_labels(10, z);
  const RunResult unbounded = orchestrate(free, circuit, options);
  ASSERT_GT(unbounded.stats.peak_terms, 20000u);
  EXPECT_EQ(unbounded.max_terms, 0u);

  // Measured just before each run: a run leaves the process larger.
  const auto limit_from_now = [] {
    return resident_bytes() + (std::size_t{1} << 20) + (std::size_t{1} << 18);
  };
  options.memory_limit = limit_from_now();
  AnyPauliSum sum = AnyPauliSum::from_labels(10, z);
  const RunResult result = orchestrate(sum, circuit, options);
  EXPECT_GT(result.max_terms, 10000u);
  EXPECT_LT(result.max_terms, 20000u);
  EXPECT_LE(sum.size(), result.max_terms);
  EXPECT_GT(result.stats.budget_truncations, 0u);
  EXPECT_GT(result.stats.budget_discarded_weight, 0.0);

  options.propagate.auto_truncate = false;
  AnyPauliSum strict = AnyPauliSum::from_labels(10, z);
  options.memory_limit = limit_from_now();
  EXPECT_THROW(orchestrate(strict, circuit, options), MemoryBudgetExceeded);

  options.memory_limit = 1024;
  options.memory_limit_name = "--memory-limit";
  EXPECT_TRUE(
      ThrowsInvalidArgumentMentioning([&] { orchestrate(strict, circuit, options); },
                                      {"--memory-limit 1024 bytes", "below what the process already uses"}));
}

TEST_F(Orchestrate, TheMemoryGuardStopsBeforeALayerWithACheckpointToResumeFrom) {
  const AnyPauliSum full = Full();
  RunOptions options = base_options();
  // 150 output terms of 48 bytes (one word, real: 2 × 24): the first rotation on more than 75 terms.
  options.memory_guard_bytes = 150 * 48;
  options.checkpoint = dir_ / "run.ckpt";
  options.memory_limit_name = "--memory-limit";
  options.stricter_truncation_name = "--coeff";
  AnyPauliSum sum = observable();
  std::size_t stopped_at = 0;
  try {
    orchestrate(sum, circuit_, options);
    ADD_FAILURE() << "the guard did not stop the run";
  } catch (const HostMemoryExceeded& e) {
    const HostMemoryExceeded::Details& d = e.details();
    stopped_at = d.layers_done;
    EXPECT_TRUE(d.state_kept);
    EXPECT_EQ(d.predicted_terms, 2 * d.terms);  // rotations: fanout 2
    EXPECT_GT(d.predicted_terms, 150u);
    EXPECT_LE(d.terms, 150u);  // the layer before ran: at most 150 outputs
    EXPECT_EQ(d.bytes_needed, d.predicted_terms * 48);
    EXPECT_EQ(d.bytes_allowed, 150u * 48);
    const std::string message = e.what();
    const std::vector<std::string> parts = {
        "memory guard: layer " + std::to_string(stopped_at + 1) + " of 45 (",
        std::to_string(d.terms) + " to " + std::to_string(d.predicted_terms) + " terms",
        "checkpoint " + (dir_ / "run.ckpt").string() + " written after layer " + std::to_string(stopped_at),
        "--memory-limit", "--coeff"};
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << ""
                                                          " << part << "
                                                          " not in: "
                                                       << message;
    }
  }
  ASSERT_GT(stopped_at, 0u);
  ASSERT_LT(stopped_at, circuit_.size());
  EXPECT_EQ(io::load_checkpoint(dir_ / "run.ckpt").layers_done, stopped_at);
  // The checkpoint holds the state before that layer: the run resumed without the guard is the whole.
  options.resume = dir_ / "run.ckpt";
  options.memory_guard = false;
  AnyPauliSum resumed = observable();
  orchestrate(resumed, circuit_, options);
  EXPECT_TRUE(Bitwise(resumed, full));
}

TEST_F(Orchestrate, WithoutACheckpointTheGuardNamesNoneAndTheGuardCanBeTurnedOff) {
  RunOptions options = base_options();
  options.memory_guard_bytes = 150 * 48;
  AnyPauliSum sum = observable();
  try {
    orchestrate(sum, circuit_, options);
    ADD_FAILURE() << "the guard did not stop the run";
  } catch (const HostMemoryExceeded& e) {
    EXPECT_EQ(std::string(e.what()).find("checkpoint"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("memory limit"), std::string::npos) << e.what();
  }
  options.memory_guard = false;
  AnyPauliSum free = observable();
  orchestrate(free, circuit_, options);
  EXPECT_TRUE(Bitwise(free, Full()));
  // The default: the host's real allowance, far above this run.
  RunOptions defaults = base_options();
  AnyPauliSum guarded = observable();
  Orchestration run(circuit_, kCircuitQubits, defaults);
  EXPECT_GT(run.memory_guard().bytes, std::size_t{64} << 20);
  run.propagate(0, guarded);
  EXPECT_TRUE(Bitwise(guarded, Full()));
}

TEST_F(Orchestrate, OnGpusTheLimitIsInDeviceBytesAndTheHostIsNotGuarded) {
  RunOptions options = base_options();
  options.propagate.device = 0;
  // Below what the process holds on the host, but device memory: accepted (no GPU is touched yet).
  options.memory_limit = 2 << 20;
  Orchestration run(circuit_, kCircuitQubits, options);
  EXPECT_EQ(run.baseline_bytes(), 0u);
  EXPECT_EQ(run.memory_guard().bytes, 0u);
  options.memory_limit = 1 << 20;
  options.memory_limit_name = "--memory-limit";
  EXPECT_TRUE(ThrowsInvalidArgumentMentioning([&] { Orchestration(circuit_, kCircuitQubits, options); },
                                              {"--memory-limit 1048576 bytes leaves a GPU run no room"}));
}

TEST_F(Orchestrate, ATaskOfSeveralObservablesResumesTheOneItsCheckpointCarries) {
  const std::vector<std::uint64_t> fingerprints = {7, 8, 9};
  const auto make = [](std::size_t i) { return observable(1.0 + static_cast<double>(i)); };
  RunOptions options = base_options();
  options.checkpoint = dir_ / "task.ckpt";
  InterruptAfter interrupt(SIZE_MAX);  // observable 0: never
  {
    RunOptions first = options;
    interrupt.install(first);
    Orchestration run(circuit_, kCircuitQubits, first, fingerprints);
    run.join(nullptr);
    AnyPauliSum sum = make(0);
    EXPECT_FALSE(run.propagate(0, sum).interrupted);
    interrupt.layers = 12;  // observable 1 is interrupted after layer 12
    sum = make(1);
    EXPECT_TRUE(run.propagate(1, sum).interrupted);
  }
  EXPECT_EQ(io::load_checkpoint(dir_ / "task.ckpt").task_fingerprint, 8u);

  options.resume = dir_ / "task.ckpt";
  Orchestration run(circuit_, kCircuitQubits, options, fingerprints);
  run.join(nullptr);
  ASSERT_TRUE(run.resume().has_value());
  EXPECT_EQ(run.resume()->match, 1u);
  EXPECT_EQ(run.start_layer(0), 0u);
  EXPECT_EQ(run.start_layer(1), 12u);
  for (std::size_t i = 0; i < fingerprints.size(); ++i) {
    AnyPauliSum sum = make(i);
    const RunResult result = run.propagate(i, sum);
    AnyPauliSum expected = make(i);
    orchestrate(expected, circuit_, base_options());
    EXPECT_TRUE(Bitwise(sum, expected)) << "observable " << i;
    EXPECT_EQ(result.stats.layers.front().application_index, i == 1 ? 12u : 0u);
    // Observable 0 runs before the resumed one: it must not replace the checkpoint being resumed.
    if (i == 0) {
      EXPECT_EQ(io::load_checkpoint(dir_ / "task.ckpt").layers_done, 12u);
    }
  }
}

// ---- distributed runs over the in-process transport ----

/// Runs body(rank, transport) on `size` threads of one in-process group; each rank's exception (or null).
template <class Body>
std::vector<std::exception_ptr> on_ranks(int size, Body body) {
  InProcessGroup group(size);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      try {
        body(r, group.transport(r));
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        group.abort(r, "failed");
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  return errors;
}

std::string message(const std::exception_ptr& error) {
  if (!error) return "";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST_F(Orchestrate, DistributedRunsWriteOnePartPerRankAndResumeWithAnyRankCount) {
  const AnyPauliSum full = Full();
  io::save_checkpoint(dir_ / "run.ckpt",
                      io::Checkpoint{1, 2, 3, AnyPauliSum(kCircuitQubits)});  // a stale single file
  std::vector<AnyPauliSum> gathered(2);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    RunOptions options = base_options();
    options.partition.transport = &transport;
    options.checkpoint = dir_ / "run.ckpt";
    options.checkpoint_every = 20;
    AnyPauliSum sum = observable();
    const RunResult result = orchestrate(sum, circuit_, options);
    EXPECT_EQ(result.engine, EngineKind::distributed);
    EXPECT_EQ(result.stats.layers.size(), circuit_.size());
    EXPECT_EQ(result.partitions.partitions, 2u);
    gathered[static_cast<std::size_t>(rank)] = std::move(sum);  // gathered once at the end
  });
  for (const auto& e : errors) EXPECT_EQ(message(e), "");
  for (const AnyPauliSum& sum : gathered) EXPECT_TRUE(Close(sum, full));
  EXPECT_EQ(Entries(), (std::vector<std::string>{"run.ckpt.part-0-of-2", "run.ckpt.part-1-of-2"}));

  // In one process: the parts added.
  RunOptions options = base_options();
  options.resume = dir_ / "run.ckpt";
  AnyPauliSum one = observable();
  EXPECT_EQ(orchestrate(one, circuit_, options).stats.layers.front().application_index, 40u);
  EXPECT_TRUE(Close(one, full));
  // Four ranks (two read no part), each keeping its share: the shares add up to the result.
  std::vector<AnyPauliSum> shares(4);
  const auto four = on_ranks(4, [&](int rank, Transport& transport) {
    RunOptions resume = options;
    resume.partition.transport = &transport;
    resume.partition.result = PartitionResult::local;
    AnyPauliSum sum = observable();
    orchestrate(sum, circuit_, resume);
    shares[static_cast<std::size_t>(rank)] = std::move(sum);
  });
  for (const auto& e : four) EXPECT_EQ(message(e), "");
  AnyPauliSum united(kCircuitQubits);
  for (const AnyPauliSum& share : shares) united += share;
  EXPECT_TRUE(Close(united, full));
}

TEST_F(Orchestrate, PartsOfTwoCheckpointsAreRefusedByEveryRank) {
  for (const std::size_t every : {10, 20}) {
    on_ranks(2, [&](int, Transport& transport) {
      RunOptions options = base_options();
      options.partition.transport = &transport;
      options.checkpoint = dir_ / (every == 10 ? "a.ckpt" : "b.ckpt");
      options.checkpoint_every = every;
      InterruptAfter interrupt(every);
      interrupt.install(options);
      AnyPauliSum sum = observable();
      orchestrate(sum, circuit_, options);
    });
  }
  fs::copy_file(dir_ / "b.ckpt.part-1-of-2", dir_ / "a.ckpt.part-1-of-2",
                fs::copy_options::overwrite_existing);
  std::atomic<int> shared_endings{0};
  const auto errors = on_ranks(2, [&](int, Transport& transport) {
    RunOptions options = base_options();
    options.partition.transport = &transport;
    options.resume = dir_ / "a.ckpt";
    options.on_shared_ending = [&] { ++shared_endings; };
    AnyPauliSum sum = observable();
    orchestrate(sum, circuit_, options);
  });
  for (const auto& e : errors) {
    EXPECT_NE(message(e).find("its parts were written after different layers (a run stopped"),
              std::string::npos)
        << message(e);
  }
  EXPECT_EQ(shared_endings.load(), 2);
}

TEST_F(Orchestrate, AnInterruptOnOneRankStopsEveryRankWithItsCheckpoint) {
  std::vector<RunResult> results(2);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    RunOptions options = base_options();
    options.partition.transport = &transport;
    options.checkpoint = dir_ / "run.ckpt";
    InterruptAfter interrupt(rank == 1 ? 9 : circuit_.size());
    interrupt.install(options);
    AnyPauliSum sum = observable();
    results[static_cast<std::size_t>(rank)] = orchestrate(sum, circuit_, options);
  });
  for (const auto& e : errors) EXPECT_EQ(message(e), "");
  for (const RunResult& result : results) {
    EXPECT_TRUE(result.interrupted);
    EXPECT_TRUE(result.checkpoint_written);
    EXPECT_EQ(result.stats.layers_done, 9u);
  }
  EXPECT_EQ(Entries(), (std::vector<std::string>{"run.ckpt.part-0-of-2", "run.ckpt.part-1-of-2"}));
}

TEST_F(Orchestrate, ARankThatCannotStartMakesEveryRankRefuse) {
  RunOptions write = base_options();
  write.checkpoint = dir_ / "run.ckpt";
  InterruptAfter interrupt(3);
  interrupt.install(write);
  AnyPauliSum sum = observable();
  orchestrate(sum, circuit_, write);
  const auto errors = on_ranks(2, [&](int rank, Transport& transport) {
    RunOptions options = base_options();
    options.partition.transport = &transport;
    options.resume = dir_ / (rank == 0 ? "run.ckpt" : "missing.ckpt");
    AnyPauliSum start = observable();
    orchestrate(start, circuit_, options);
  });
  ASSERT_TRUE(errors[0] && errors[1]);
  EXPECT_NE(message(errors[0]).find("another rank could not resume from it"), std::string::npos)
      << message(errors[0]);
  EXPECT_THROW(std::rethrow_exception(errors[1]), CheckpointNotFound);
}

}  // namespace
}  // namespace paulistrings
