// The GPU engine beyond the engine-equivalence suite (device_sum_equivalence.test.cc): every channel
// kind alone against the reference engine, the resident DeviceSum API, the device layer passes (topn
// tie rule, approx_topn), large sums (10^6–10^7 terms) against the fast CPU engine, and the errors of a
// machine or build without a GPU. Without a CUDA device every GPU test is skipped with the reason (CI
// has no GPU).

#include "paulistrings/gpu/device_sum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "paulistrings/circuit/workloads.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/engine_cases.h"
#include "paulistrings/testing/gpu.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

// Every channel kind on its own, both directions, on a sum that fills the local space (so every orbit
// member is present) and on one that does not (so new keys are appended).
TEST(GpuEngine, EveryChannelKindAloneMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(5);
  const std::vector<Channel> channels = {
      Channel::h(3),
      Channel::s(4),
      Channel::cnot(3, 70),
      Channel::cz(70, 4),
      Channel::swap(3, 4),
      Channel::rx(0.3, 3),
      Channel::rzz(0.7, 3, 70),
      Channel::pauli_rotation("XYZ", {3, 4, 70}, 1.1),
      Channel::unitary_1q(3, testing::random_unitary(rng, 2)),
      Channel::unitary_2q(3, 70, testing::random_unitary(rng, 4)),
      Channel::depolarize(0.1, 3),
      Channel::dephase(0.2, 70),
      Channel::pauli_channel(0.05, 0.1, 0.15, 4),
      Channel::depolarize2(0.1, 3, 4),
      Channel::amplitude_damping(0.3, 3),
  };
  for (const Channel& channel : channels) {
    for (const Direction direction : {Direction::forward, Direction::heisenberg}) {
      for (const std::size_t terms : {std::size_t{50}, std::size_t{4000}}) {
        SCOPED_TRACE(channel.description());
        Circuit circuit(130);
        circuit.append(channel);
        auto start = testing::random_window_sum<4, Complex>(rng, terms, 130, 0, 6);
        start += testing::random_window_sum<4, Complex>(rng, terms / 10 + 1, 130, 66, 6);
        PropagateOptions options;
        options.direction = direction;
        auto expected = start;
        options.engine = Engine::reference;
        propagate(expected, circuit, options);
        auto actual = start;
        options.device = 0;
        propagate(actual, circuit, options);
        EXPECT_TRUE(testing::SumsMatch(actual, expected));
      }
    }
  }
}

TEST(GpuEngine, ResidentSumAcrossSeveralPropagations) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(9);
  const Circuit first = testing::random_circuit(rng, 8, 30);
  const Circuit second = testing::random_circuit(rng, 8, 30);
  const auto start = testing::random_window_sum<1, Complex>(rng, 500, 8, 0, 8);
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(1e-5);
  gpu::DeviceSum<1, Complex> resident(start, 0);
  EXPECT_EQ(resident.size(), start.size());
  EXPECT_EQ(resident.device(), 0);
  gpu::propagate(resident, first, options);
  gpu::propagate(resident, second, options);
  auto expected = start;
  options.engine = Engine::reference;
  propagate(expected, first, options);
  propagate(expected, second, options);
  EXPECT_EQ(resident.size(), expected.size());
  EXPECT_TRUE(testing::SumsMatch(resident.download(), expected));
  // Ordered on one host thread or on three: the same sum, bit for bit.
  EXPECT_TRUE(testing::SumsMatch(resident.download(1), resident.download(3), 0.0));
  EXPECT_GT(resident.device_bytes(), 0u);
  EXPECT_GE(resident.peak_device_bytes(), resident.device_bytes());
}

/// Runs of single- and two-qubit rotations as circuits have them: Trotter steps of the workloads, and a
/// brickwork whose consecutive rotations share qubits (anticommuting generators, and a generator that
/// repeats an earlier one, which ends a block).
std::vector<std::pair<std::string, Circuit>> rotation_runs() {
  std::mt19937_64 rng(2027);
  std::uniform_real_distribution<double> angle(-1.0, 1.0);
  std::vector<std::pair<std::string, Circuit>> circuits;
  for (const Workload& w : {tfim_2d(3, 3), heisenberg_chain(8, 3, 0.3), tfim_chain(10, 3, 0.4)}) {
    circuits.emplace_back(w.name, w.circuit);
  }
  static const char* kPaulis[] = {"X", "Y", "Z"};
  Circuit brickwork(10);
  for (std::size_t layer = 0; layer < 8; ++layer) {
    for (std::size_t q = layer % 2; q + 1 < 10; q += 2) {
      brickwork.append(Channel::pauli_rotation(std::string(kPaulis[rng() % 3]) + kPaulis[rng() % 3],
                                               {q, q + 1}, angle(rng)));
      brickwork.append(Channel::rx(angle(rng), static_cast<Qubit>(q)));
      brickwork.append(Channel::rz(angle(rng), static_cast<Qubit>(q)));
      if (rng() % 3 == 0) brickwork.append(Channel::rx(angle(rng), static_cast<Qubit>(q)));
    }
    if (layer == 4) brickwork.append(Channel::depolarize(0.02, 3));
  }
  circuits.emplace_back("brickwork", brickwork);
  return circuits;
}

// Blocks of rotations (DeviceSum::apply_block): the same coefficients bit for bit and the same term
// counts per layer as one layer at a time, and the reference engine's terms, in both directions under
// every per-term policy.
TEST(GpuEngine, BlocksOfRotationsMatchOneLayerAtATimeAndTheReference) {
  SKIP_WITHOUT_GPU();
  const Truncation policies[] = {Truncation(), Truncation::coeff(1e-4), Truncation::weight(4),
                                 Truncation::coeff(1e-3) & Truncation::weight(5)};
  for (const auto& [name, circuit] : rotation_runs()) {
    const std::size_t n = circuit.num_qubits();
    const auto start = PauliSum<1, double>::from_labels(n, {{"Z1", 1.0}, {"X2 X3", 0.5}});
    for (Direction direction : {Direction::heisenberg, Direction::forward}) {
      for (const Truncation& policy : policies) {
        SCOPED_TRACE(name + (direction == Direction::heisenberg ? ", heisenberg, " : ", forward, ") +
                     policy.description());
        PropagateOptions options;
        options.direction = direction;
        options.truncation = policy;
        GpuEngineOptions on, off;
        off.blocks = false;
        gpu::DeviceSum<1, double> blocked(start, 0, on), layered(start, 0, off);
        const PropagationStats a = gpu::propagate(blocked, circuit, options);
        const PropagationStats b = gpu::propagate(layered, circuit, options);
        EXPECT_EQ(layered.block_layers(), 0u);
        EXPECT_GT(blocked.block_layers(), circuit.size() / 4) << "blocks were hardly taken";
        EXPECT_TRUE(blocked.download() == layered.download());
        ASSERT_EQ(a.layers.size(), b.layers.size());
        for (std::size_t k = 0; k < a.layers.size(); ++k) {
          EXPECT_EQ(a.layers[k].terms_in, b.layers[k].terms_in) << "layer " << k;
          EXPECT_EQ(a.layers[k].terms_out, b.layers[k].terms_out) << "layer " << k;
          EXPECT_NEAR(a.layers[k].discarded_weight, b.layers[k].discarded_weight, 1e-12) << "layer " << k;
        }
        EXPECT_EQ(a.peak_terms, b.peak_terms);
        auto reference = start;
        PropagateOptions ref = options;
        ref.engine = Engine::reference;
        propagate(reference, circuit, ref);
        EXPECT_TRUE(testing::SumsMatch(blocked.download(), reference));
        EXPECT_EQ(blocked.size(), reference.size());
      }
    }
  }
}

// collapse_sample runs on the host (download, draw in key order, upload) on the run's host threads
// (GpuEngineOptions::host_threads, set from PropagateOptions::threads): one thread or three, the same draw
// and the same bits, and the reference engine's result.
TEST(GpuEngine, CollapseSampleOnTheHostIsTheSameForAnyHostThreadCount) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(21);
  const Circuit circuit = testing::random_circuit(rng, 8, 24);
  const auto start = testing::random_window_sum<1, double>(rng, 400, 8, 0, 8);
  // A fresh policy per run: a collapse_sample policy counts its passes, and its draws follow the count.
  const auto policy = [] { return Truncation::coeff(1e-6) & Truncation::collapse_sample(64, 13); };
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = policy();
  auto expected = start;
  options.engine = Engine::reference;
  propagate(expected, circuit, options);
  options.engine = Engine::cpu;
  options.device = 0;
  std::vector<PauliSum<1, double>> on_device;
  for (const int threads : {1, 3}) {
    auto sum = start;
    options.threads = threads;
    options.truncation = policy();
    propagate(sum, circuit, options);
    on_device.push_back(std::move(sum));
  }
  EXPECT_TRUE(testing::SumsMatch(on_device[0], on_device[1], 0.0));
  EXPECT_TRUE(testing::SumsMatch(on_device[0], expected));
}

// The tie rule of topn on the device: a group of equal magnitudes at the cut is kept whole when it
// fits, dropped whole otherwise; NaN is never kept.
TEST(GpuEngine, TopnTieRuleAndApproxTopnMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  std::vector<PauliSum<1, double>::Term> terms;
  for (int i = 0; i < 40; ++i) {
    PauliString<1> key;
    key.x[0] = static_cast<std::uint64_t>(i + 1);
    const double c = i < 10 ? 4.0 : (i < 25 ? -2.0 : 0.5 + 0.01 * i);
    terms.push_back({key, c});
  }
  const auto start = PauliSum<1, double>::from_terms(64, terms);
  for (const std::size_t n : {std::size_t{5}, std::size_t{10}, std::size_t{20}, std::size_t{25}, std::size_t{26},
                              std::size_t{39}, std::size_t{0}}) {
    for (const bool approx : {false, true}) {
      const Truncation policy = approx ? Truncation::approx_topn(n) : Truncation::topn(n);
      SCOPED_TRACE(policy.description());
      auto expected = start;
      const LayerPassResult cpu = policy.finalize_layer(expected);
      gpu::DeviceSum<1, double> device(start, 0);
      const LayerPassResult gpu_result = device.finalize_layer(policy);
      EXPECT_TRUE(testing::SumsMatch(device.download(), expected));
      EXPECT_NEAR(gpu_result.discarded_weight, cpu.discarded_weight, 1e-12 * std::max(1.0, cpu.discarded_weight));
    }
  }
}

// Large random sums on 128 qubits through dense and sparse layers against the fast CPU engine.
void check_large_sum(std::size_t terms, const std::vector<Truncation>& policies) {
  std::mt19937_64 rng(21);
  Circuit circuit(128);
  circuit.append(Channel::rzz(0.37, 10, 90));
  circuit.append(Channel::cnot(10, 90));
  circuit.append(Channel::unitary_2q(11, 12, testing::random_unitary(rng, 4)));
  circuit.append(Channel::depolarize(0.01, 13));
  circuit.append(Channel::rx(0.2, 90));
  circuit.append(Channel::amplitude_damping(0.1, 14));
  std::vector<PauliSum<2, double>::Term> list;
  std::uniform_int_distribution<std::uint64_t> bits;
  std::normal_distribution<double> normal;
  for (std::size_t t = 0; t < terms; ++t) {
    PauliString<2> key;
    key.x[0] = bits(rng) & bits(rng);
    key.z[0] = bits(rng) & bits(rng);
    key.x[1] = bits(rng) & bits(rng);
    key.z[1] = bits(rng) & bits(rng);
    list.push_back({key, normal(rng)});
  }
  const auto start = PauliSum<2, double>::from_terms(128, list);
  for (const Truncation& policy : policies) {
    SCOPED_TRACE(policy.description());
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    options.truncation = policy;
    auto expected = start;
    const PropagationStats cpu = propagate(expected, circuit, options);
    auto actual = start;
    options.device = 0;
    const PropagationStats gpu_stats = propagate(actual, circuit, options);
    EXPECT_TRUE(testing::SumsMatch(actual, expected));
    EXPECT_NEAR(gpu_stats.discarded_weight, cpu.discarded_weight, 1e-9 * std::max(1.0, cpu.discarded_weight));
  }
}

TEST(GpuEngine, LargeSumsMatchTheCpuEngine) {
  SKIP_WITHOUT_GPU();
  check_large_sum(1'000'000, {Truncation(), Truncation::coeff(0.3), Truncation::approx_topn(700'000),
                              Truncation::topn(900'000) & Truncation::weight(60)});
}

TEST(GpuEngine, TenMillionTermSumsMatchTheCpuEngine) {
  SKIP_WITHOUT_GPU();
  check_large_sum(10'000'000, {Truncation::coeff(0.1), Truncation::topn(8'000'000)});
}

TEST(GpuEngine, BadDeviceOrdinalsAreClearErrors) {
  auto sum = PauliSum<1, double>::from_labels(2, {{"XZ", 1.0}});
  Circuit circuit(2);
  circuit.append(Channel::h(0));
  PropagateOptions options;
  options.device = -2;
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([&] { propagate(sum, circuit, options); }, {"device"}));
  options.device = 4096;
  try {
    propagate(sum, circuit, options);
    ADD_FAILURE() << "device 4096 was accepted";
  } catch (const gpu::GpuUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(gpu::device_count() == 0 ? "" : "4096"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sum.coefficient("XZ"), 1.0);  // untouched
}

// Always runs: says which GPU engine this build has, so a CI log shows why the GPU tests skipped.
TEST(GpuEngine, ReportsWhatThisMachineHas) {
  if (gpu::device_count() == 0) {
    EXPECT_FALSE(gpu::unavailable_reason().empty());
    std::cout << "[ GPU      ] none: " << gpu::unavailable_reason() << " — GPU tests are skipped\n";
    EXPECT_THROW(gpu::describe_device(0), gpu::GpuUnavailable);
  } else {
    std::cout << "[ GPU      ] device 0: " << gpu::describe_device(0) << "\n";
    EXPECT_TRUE(gpu::built_with_cuda());
  }
}

// The benchmarks' reference for the partition exchange: a copy between devices (or on one) has a
// positive measured rate; a device that does not exist, or no GPU at all, is GpuUnavailable.
TEST(GpuEngine, PeerBandwidthIsMeasuredOrUnavailable) {
  if (gpu::device_count() == 0) {
    EXPECT_THROW(gpu::measure_peer_bandwidth(0, 1, 1 << 20), gpu::GpuUnavailable);
    return;
  }
  const int other = gpu::device_count() > 1 ? 1 : 0;
  const gpu::PeerBandwidth one = gpu::measure_peer_bandwidth(0, other, 64 << 20, 2);
  const gpu::PeerBandwidth both = gpu::measure_peer_bandwidth(0, other, 64 << 20, 2, true);
  EXPECT_GT(one.bytes_per_second, 1e9);
  EXPECT_GT(both.bytes_per_second, 1e9);
  std::cout << "[ GPU      ] copy 0 -> " << other << ": " << one.bytes_per_second / 1e9 << " GB/s one way, "
            << both.bytes_per_second / 1e9 << " GB/s both ways\n";
  EXPECT_THROW(gpu::measure_peer_bandwidth(0, gpu::device_count(), 1 << 20), gpu::GpuUnavailable);
  EXPECT_THROW(gpu::measure_peer_bandwidth(0, other, 0), std::invalid_argument);
}

}  // namespace
}  // namespace paulistrings
