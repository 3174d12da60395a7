// The host memory guard in the layer driver (engine/driver.h) and propagate(): it stops before the first
// layer whose output could pass the allowance (terms × fanout × bytes per term), with the state after
// the layers before it handed back, on the CPU and reference engines alike; layers that cannot grow the
// sum (fanout 1) never stop; std::bad_alloc inside a layer becomes HostMemoryExceeded without the state.

#include <gtest/gtest.h>

#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "paulistrings/core/text.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"

namespace paulistrings {
namespace {

constexpr std::size_t kQubits = 10;

/// Forward layers that grow Z⊗10 to thousands of terms: ry on every qubit, then xx between neighbours,
/// three times.
Circuit growing() {
  Circuit circuit(kQubits);
  for (std::size_t round = 0; round < 3; ++round) {
    for (std::size_t q = 0; q < kQubits; ++q) circuit.append(Channel::ry(0.6, q));
    for (std::size_t q = round % 2; q + 1 < kQubits; q += 2) circuit.append(Channel::rxx(1.1, q, q + 1));
  }
  return circuit;
}

PauliSum<1, double> start() {
  return testing::MakeSum<1, double>(kQubits, {{"ZZZZZZZZZZ", 1.0}, {"XIIIIIIIIY", 0.5}});
}

Circuit first_layers(const Circuit& circuit, std::size_t layers) {
  Circuit prefix(circuit.num_qubits());
  for (std::size_t k = 0; k < layers; ++k) prefix.append(circuit[k]);
  return prefix;
}

PropagateOptions guarded(Engine engine, std::size_t output_terms) {
  PropagateOptions options;
  options.engine = engine;
  options.threads = 2;
  options.parallel_threshold = 16;  // parallel regions even on these small sums
  options.truncation = Truncation::coeff(1e-9);
  options.memory_guard.bytes_per_term = 48;
  options.memory_guard.allowed_bytes = output_terms * 48;
  options.memory_guard.source = "the test's allowance";
  return options;
}

TEST(MemoryGuard, StopsBeforeTheFirstLayerThatCouldOutgrowItWithTheStateBeforeIt) {
  const Circuit circuit = growing();
  for (const Engine engine : {Engine::cpu, Engine::reference}) {
    SCOPED_TRACE(engine == Engine::cpu ? "cpu" : "reference");
    PauliSum<1, double> sum = start();
    const PropagateOptions options = guarded(engine, 1000);
    std::size_t done = 0;
    try {
      propagate(sum, circuit, options);
      ADD_FAILURE() << "the guard did not stop the run";
    } catch (const HostMemoryExceeded& e) {
      const HostMemoryExceeded::Details& d = e.details();
      done = d.layers_done;
      EXPECT_TRUE(d.state_kept);
      EXPECT_EQ(d.terms, sum.size());
      EXPECT_EQ(d.predicted_terms, 2 * d.terms);
      EXPECT_GT(d.predicted_terms, 1000u);
      EXPECT_EQ(d.bytes_needed, 48 * d.predicted_terms);
      EXPECT_EQ(d.bytes_allowed, 48000u);
      EXPECT_EQ(d.gate, circuit[done].name());
      const std::string message = e.what();
      EXPECT_NE(message.find("memory guard: layer " + std::to_string(done + 1) + " of " +
                             std::to_string(circuit.size())),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("the test's allowance"), std::string::npos) << message;
      EXPECT_NE(message.find("46.88 KiB more"), std::string::npos) << message;
    }
    ASSERT_GT(done, 0u);
    // The layers before it ran, no more.
    PauliSum<1, double> expected = start();
    PropagateOptions free = options;
    free.memory_guard = {};
    propagate(expected, first_layers(circuit, done), free);
    EXPECT_TRUE(testing::SumsMatch(sum, expected));
    EXPECT_LE(sum.size(), 1000u);
  }
}

TEST(MemoryGuard, LayersThatCannotGrowTheSumNeverStop) {
  // A sum far above the allowance through Cliffords and Pauli noise (fanout 1).
  Circuit circuit(kQubits);
  for (std::size_t q = 0; q + 1 < kQubits; ++q) circuit.append(Channel::cnot(q, q + 1));
  for (std::size_t q = 0; q < kQubits; ++q) circuit.append(Channel::depolarize(0.1, q));
  PauliSum<1, double> sum = start();
  propagate(sum, first_layers(growing(), 20), guarded(Engine::cpu, std::size_t{1} << 30));
  ASSERT_GT(sum.size(), 100u);
  EXPECT_NO_THROW(propagate(sum, circuit, guarded(Engine::cpu, 1)));
}

/// An engine whose layers throw std::bad_alloc from the `failing`-th on.
struct AllocationFails {
  std::size_t failing = 0, calls = 0;
  std::size_t size() const { return 10; }
  double apply_layer(const PreparedChannel<1>&, const Truncation&) {
    if (++calls > failing) throw std::bad_alloc();
    return 0.0;
  }
  LayerPassResult finalize_layer(const Truncation&) { return {}; }
};
static_assert(LayerEngine<AllocationFails, 1>);

TEST(MemoryGuard, BadAllocInALayerIsHostMemoryExceededWithoutTheState) {
  AllocationFails engine{3};
  const Circuit circuit = growing();
  try {
    run_layers<1>(engine, circuit, PropagateOptions());
    ADD_FAILURE() << "no exception";
  } catch (const HostMemoryExceeded& e) {
    EXPECT_EQ(e.details().layers_done, 3u);
    EXPECT_FALSE(e.details().state_kept);
    EXPECT_EQ(e.details().terms, 10u);
    EXPECT_NE(std::string(e.what()).find("allocation was refused in layer 4 of"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace paulistrings
