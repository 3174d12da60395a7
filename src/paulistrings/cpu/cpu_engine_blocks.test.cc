// Blocks in the CPU engine (CpuEngine::apply_block, docs/design.md §7.7) on block-structured circuits —
// Trotter layers of the published workloads, a brickwork of two-qubit rotations with noise layers
// between (runs of rotations and runs of key-preserving channels), a noisy Clifford+T circuit
// (permutations inside blocks) — in both directions under every per-term policy: the coefficients of
// one layer at a time bit for bit, the reference engine's terms to 1e-12, the same for any thread count, and
// checkpoint boundaries respected. The seeded random circuits run in blocks in
// cpu_engine_equivalence.test.cc (suite CpuBlocks).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "paulistrings/circuit/workloads.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"

namespace paulistrings {
namespace {

/// Blocks wherever two rotations meet: no minimum size, one coset is enough.
CpuEngineOptions eager_blocks(int threads) {
  CpuEngineOptions cpu;
  cpu.threads = threads;
  cpu.parallel_threshold = 0;
  cpu.block_min_terms = 0;
  cpu.block_min_cosets = 1;
  cpu.target_bucket_len = 16;
  return cpu;
}

struct Outcome {
  PauliSum<1, double> sum;
  PropagationStats stats;
  std::size_t block_layers = 0;
};

Outcome run(const PauliSum<1, double>& start, const Circuit& circuit, const PropagateOptions& options,
        CpuEngineOptions cpu) {
  CpuEngine<1, double> engine(start, cpu);
  Outcome out{PauliSum<1, double>(start.num_qubits()), run_layers<1>(engine, circuit, options), 0};
  out.block_layers = engine.block_layers();
  engine.export_to(out.sum);
  return out;
}

/// A brickwork of random two-qubit Pauli rotations on a chain of n qubits, `depth` bricks, with a noise
/// layer on every qubit after every second brick and a measurement halfway: blocks of rotations and
/// blocks of key-preserving layers, each ending where the other kind begins.
Circuit noisy_brickwork(std::size_t n, std::size_t depth, std::mt19937_64& rng) {
  static const char* kPaulis[] = {"X", "Y", "Z"};
  Circuit circuit(n);
  std::uniform_real_distribution<double> angle(-1.0, 1.0);
  for (std::size_t layer = 0; layer < depth; ++layer) {
    for (std::size_t q = layer % 2; q + 1 < n; q += 2) {
      const std::string pauli = std::string(kPaulis[rng() % 3]) + kPaulis[rng() % 3];
      circuit.append(Channel::pauli_rotation(pauli, {q, q + 1}, angle(rng)));
    }
    if (layer % 2 == 1) {
      // A noise layer: key-preserving channels only, so one block of its own.
      for (Qubit q = 0; q < n; ++q) {
        if (q % 3 == 0) circuit.append(Channel::depolarize(0.02, q));
        if (q % 3 == 1) circuit.append(Channel::dephase(0.03, q));
        if (q % 3 == 2) circuit.append(Channel::pauli_channel(0.01, 0.02, 0.015, q));
      }
    }
    if (layer == depth / 2) circuit.append(Channel::measure(0));
  }
  return circuit;
}

/// A Clifford+T circuit as benchmark suites write them: single-qubit Cliffords, CNOT / CZ / SWAP /
/// iSWAP bricks, T and random rz, with a depolarizing layer every third brick, an amplitude-damping
/// channel (a general table: it ends a block) halfway, and a measurement. With `noise` false, only
/// the gates.
Circuit clifford_t(std::size_t n, std::size_t depth, bool noise, std::mt19937_64& rng) {
  Circuit circuit(n);
  std::uniform_real_distribution<double> angle(-1.0, 1.0);
  for (std::size_t layer = 0; layer < depth; ++layer) {
    for (Qubit q = 0; q < n; ++q) {
      switch (rng() % 6) {
        case 0: circuit.append(Channel::h(q)); break;
        case 1: circuit.append(Channel::s(q)); break;
        case 2: circuit.append(Channel::sx(q)); break;
        case 3: circuit.append(Channel::rz(M_PI / 4, q)); break;  // T
        case 4: circuit.append(Channel::rz(angle(rng), q)); break;
        default: circuit.append(Channel::sdg(q)); break;
      }
    }
    for (std::size_t q = layer % 2; q + 1 < n; q += 2) {
      switch (rng() % 4) {
        case 0: circuit.append(Channel::cnot(q, q + 1)); break;
        case 1: circuit.append(Channel::cz(q, q + 1)); break;
        case 2: circuit.append(Channel::swap(q, q + 1)); break;
        default: circuit.append(Channel::iswap(q, q + 1)); break;
      }
    }
    if (noise && layer % 3 == 2) {
      for (Qubit q = 0; q < n; ++q) circuit.append(Channel::depolarize(0.01, q));
    }
    if (noise && layer == depth / 2) {
      circuit.append(Channel::amplitude_damping(0.05, 2));
      circuit.append(Channel::measure(0));
    }
  }
  return circuit;
}

struct Case {
  std::string name;
  Circuit circuit;
  std::vector<std::string> observable;
};

std::vector<Case> block_structured_cases() {
  std::mt19937_64 rng(2026);
  std::vector<Case> cases;
  for (const Workload& w : {tfim_2d(3, 3), heisenberg_chain(8, 3, 0.3), tfim_chain(10, 3, 0.4)}) {
    cases.push_back({w.name, w.circuit, w.observable});
  }
  cases.push_back({"noisy_brickwork", noisy_brickwork(10, 8, rng), {"Z4", "X5 X6"}});
  cases.push_back({"clifford_t", clifford_t(10, 8, true, rng), {"Z4", "X5 Y6"}});
  return cases;
}

TEST(CpuEngineBlocks, SameCoefficientsAsOneLayerAtATimeAndTheReferenceTerms) {
  const Truncation policies[] = {Truncation(), Truncation::coeff(1e-4), Truncation::weight(4),
                                 Truncation::coeff(1e-3) & Truncation::weight(5)};
  for (const Case& c : block_structured_cases()) {
    std::vector<std::pair<std::string, double>> terms;
    for (const std::string& label : c.observable) terms.emplace_back(label, 1.0);
    const auto start = PauliSum<1, double>::from_labels(c.circuit.num_qubits(), terms);
    for (Direction direction : {Direction::heisenberg, Direction::forward}) {
      for (const Truncation& policy : policies) {
        SCOPED_TRACE(c.name + (direction == Direction::heisenberg ? ", heisenberg, " : ", forward, ") +
                     policy.description());
        PropagateOptions options;
        options.direction = direction;
        options.truncation = policy;
        const Outcome blocked = run(start, c.circuit, options, eager_blocks(2));
        CpuEngineOptions layered_options = eager_blocks(2);
        layered_options.gate_blocks = false;
        const Outcome layered = run(start, c.circuit, options, layered_options);
        EXPECT_EQ(layered.block_layers, 0u);
        EXPECT_GT(blocked.block_layers, c.circuit.size() / 3) << "blocks were hardly taken";
        EXPECT_TRUE(blocked.sum == layered.sum);
        ASSERT_EQ(blocked.stats.layers.size(), layered.stats.layers.size());
        for (std::size_t k = 0; k < blocked.stats.layers.size(); ++k) {
          const LayerRecord& a = blocked.stats.layers[k];
          const LayerRecord& b = layered.stats.layers[k];
          EXPECT_EQ(a.application_index, b.application_index);
          EXPECT_EQ(a.circuit_index, b.circuit_index);
          EXPECT_EQ(a.terms_in, b.terms_in) << "layer " << k;
          EXPECT_EQ(a.terms_out, b.terms_out) << "layer " << k;
          EXPECT_NEAR(a.discarded_weight, b.discarded_weight, 1e-12) << "layer " << k;
        }
        EXPECT_EQ(blocked.stats.peak_terms, layered.stats.peak_terms);
        auto reference = start;
        PropagateOptions ref = options;
        ref.engine = Engine::reference;
        propagate(reference, c.circuit, ref);
        EXPECT_TRUE(testing::SumsMatch(blocked.sum, reference));
      }
    }
  }
}

TEST(CpuEngineBlocks, CliffordGatesAndNoiseJoinTheBlocksOfRotations) {
  // Permutations (Clifford gates) and key-preserving noise inside blocks of rotations: nearly every
  // layer of a Clifford+T circuit runs in a block, with the coefficients of one layer at a time.
  std::mt19937_64 rng(7);
  for (bool noise : {false, true}) {
    const Circuit circuit = clifford_t(12, 10, noise, rng);
    const auto start = PauliSum<2, Complex>::from_labels(12, {{"Z5", Complex(1.0)}, {"X2 X3", Complex(0.0, 0.5)}});
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = Truncation::coeff(1e-5);
    CpuEngine<2, Complex> blocked(start, eager_blocks(2));
    const PropagationStats blocked_stats = run_layers<2>(blocked, circuit, options);
    CpuEngineOptions layered_options = eager_blocks(2);
    layered_options.gate_blocks = false;
    CpuEngine<2, Complex> layered(start, layered_options);
    const PropagationStats layered_stats = run_layers<2>(layered, circuit, options);
    EXPECT_GT(blocked.block_layers(), circuit.size() * 8 / 10) << (noise ? "noisy" : "gates only");
    PauliSum<2, Complex> a(12), b(12);
    blocked.export_to(a);
    layered.export_to(b);
    EXPECT_TRUE(a == b) << (noise ? "noisy" : "gates only");
    EXPECT_GT(a.size(), 50u);
    ASSERT_EQ(blocked_stats.layers.size(), layered_stats.layers.size());
    for (std::size_t k = 0; k < blocked_stats.layers.size(); ++k)
      EXPECT_EQ(blocked_stats.layers[k].terms_out, layered_stats.layers[k].terms_out) << "layer " << k;
  }
}

TEST(CpuEngineBlocks, BitwiseIdenticalForAnyThreadCount) {
  const Workload w = tfim_2d(4, 2);
  const auto start = PauliSum<1, double>::from_labels(w.circuit.num_qubits(), {{w.observable[0], 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(1e-5);
  const Outcome two = run(start, w.circuit, options, eager_blocks(2));
  EXPECT_GT(two.block_layers, 0u);
  for (int threads : {1, 3, 8}) {
    const Outcome other = run(start, w.circuit, options, eager_blocks(threads));
    EXPECT_EQ(other.block_layers, two.block_layers) << threads << " threads";
    EXPECT_TRUE(other.sum == two.sum) << threads << " threads";
    ASSERT_EQ(other.stats.layers.size(), two.stats.layers.size());
    for (std::size_t k = 0; k < other.stats.layers.size(); ++k) {
      EXPECT_EQ(other.stats.layers[k].discarded_weight, two.stats.layers[k].discarded_weight) << "layer " << k;
      EXPECT_EQ(other.stats.layers[k].terms_out, two.stats.layers[k].terms_out) << "layer " << k;
    }
  }
}

TEST(CpuEngineBlocks, BlocksEndAtTheBoundaryWhereShouldStopLooks) {
  // A checkpoint every 7 layers: should_stop must see every multiple of 7, and a stop there leaves the
  // state of 7·k layers applied one at a time.
  const Workload w = tfim_chain(10, 3, 0.4);
  const auto start = PauliSum<1, double>::from_labels(w.circuit.num_qubits(), {{"Z3", 1.0}, {"Z6", 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(1e-4);
  options.block_boundary = 7;
  std::vector<std::size_t> polled;
  options.should_stop = [&](std::size_t done) {
    polled.push_back(done);
    return done == 28;
  };
  const Outcome stopped = run(start, w.circuit, options, eager_blocks(2));
  EXPECT_TRUE(stopped.stats.stopped);
  EXPECT_EQ(stopped.stats.layers_done, 28u);
  EXPECT_GT(stopped.block_layers, 0u);
  for (std::size_t multiple : {7u, 14u, 21u, 28u}) {
    EXPECT_NE(std::find(polled.begin(), polled.end(), multiple), polled.end()) << "never polled at " << multiple;
  }
  PropagateOptions plain = options;
  plain.block_boundary = 0;
  plain.should_stop = [](std::size_t done) { return done == 28; };
  CpuEngineOptions layered = eager_blocks(2);
  layered.gate_blocks = false;
  const Outcome reference = run(start, w.circuit, plain, layered);
  EXPECT_EQ(reference.stats.layers_done, 28u);
  EXPECT_TRUE(stopped.sum == reference.sum);
}

TEST(CpuEngineBlocks, NotTakenWhereTheyCouldChangeTheResult) {
  const Workload w = tfim_chain(8, 2, 0.4);
  const auto start = PauliSum<1, double>::from_labels(w.circuit.num_qubits(), {{"Z3", 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  // A layer pass between every two layers (topn), and the orbit formulation of rotations.
  options.truncation = Truncation::topn(20);
  EXPECT_EQ(run(start, w.circuit, options, eager_blocks(2)).block_layers, 0u);
  options.truncation = Truncation::coeff(1e-6);
  CpuEngineOptions orbit = eager_blocks(2);
  orbit.in_place_rotations = false;
  EXPECT_EQ(run(start, w.circuit, options, orbit).block_layers, 0u);
  // A memory budget cuts between layers.
  options.max_terms = 1000;
  EXPECT_EQ(run(start, w.circuit, options, eager_blocks(2)).block_layers, 0u);
}

}  // namespace
}  // namespace paulistrings
