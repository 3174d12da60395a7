// Tests of the published cross-engine workloads (and the transpiler-shaped brickwork): the gate order
// they act on the observable in (the definitions are order-sensitive), their observables, and a small
// instance against the dense oracle.
#include "paulistrings/circuit/workloads.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "paulistrings/run/propagate.h"
#include "paulistrings/testing/assertions.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings {
namespace {

/// "name(theta)@q0,q1" for each gate in the order it acts on the observable (the circuit reversed).
std::vector<std::string> applied_order(const Circuit& circuit) {
  std::vector<std::string> out;
  for (std::size_t k = circuit.size(); k-- > 0;) {
    const Channel& c = circuit[k];
    std::string text = c.name() + "(" + std::to_string(c.theta()) + ")@";
    for (std::size_t i = 0; i < c.qubits().size(); ++i) {
      if (i > 0) text += ',';
      text += std::to_string(c.qubits()[i]);
    }
    out.push_back(text);
  }
  return out;
}

TEST(Workloads, TfimChainAppliesFieldThenBondsAscending) {
  const Workload w = tfim_chain(3, 2, 0.2);
  const std::vector<std::string> step = {"rx(0.200000)@0", "rx(0.200000)@1", "rx(0.200000)@2",
                                         "rzz(0.200000)@0,1", "rzz(0.200000)@1,2"};
  std::vector<std::string> expected = step;
  expected.insert(expected.end(), step.begin(), step.end());
  EXPECT_EQ(applied_order(w.circuit), expected);
  EXPECT_EQ(w.observable, (std::vector<std::string>{"Z0", "Z1", "Z2"}));
  EXPECT_EQ(w.circuit.num_qubits(), 3u);
  EXPECT_EQ(w.atol, 1e-6);
  EXPECT_EQ(tfim_chain().circuit.size(), 10u * (64 + 63));
}

TEST(Workloads, HeisenbergChainAppliesXxYyZzPerBondThenRz) {
  const Workload w = heisenberg_chain(3, 1, 0.2);
  const std::vector<std::string> expected = {"rxx(0.200000)@0,1", "ryy(0.200000)@0,1", "rzz(0.200000)@0,1",
                                             "rxx(0.200000)@1,2", "ryy(0.200000)@1,2", "rzz(0.200000)@1,2",
                                             "rz(0.200000)@0",    "rz(0.200000)@1",    "rz(0.200000)@2"};
  EXPECT_EQ(applied_order(w.circuit), expected);
  EXPECT_EQ(w.observable, (std::vector<std::string>{"Z0"}));
  EXPECT_EQ(heisenberg_chain().circuit.size(), 10u * (3 * 13 + 14));
}

TEST(Workloads, Tfim2dReversesSitesAndBondEnumeration) {
  // 2×2 grid: bonds enumerated (0,1) (0,2) (1,3) (2,3); applied in reverse.
  const Workload w = tfim_2d(2, 1);
  const std::vector<std::string> expected = {"rx(0.050000)@3",    "rx(0.050000)@2",    "rx(0.050000)@1",
                                             "rx(0.050000)@0",    "rz(0.050000)@3",    "rz(0.050000)@2",
                                             "rz(0.050000)@1",    "rz(0.050000)@0",    "rzz(0.075000)@2,3",
                                             "rzz(0.075000)@1,3", "rzz(0.075000)@0,2", "rzz(0.075000)@0,1"};
  EXPECT_EQ(applied_order(w.circuit), expected);
  EXPECT_EQ(w.observable, (std::vector<std::string>{"Z2 Z3"}));  // r = 1, c = 0: qubits 2, 3
  // L = 18: the published size — 324 qubits, observable on (9·18+8, 9·18+9).
  const Workload big = tfim_2d(18, 21);
  EXPECT_EQ(big.circuit.num_qubits(), 324u);
  EXPECT_EQ(big.observable, (std::vector<std::string>{"Z170 Z171"}));
  EXPECT_EQ(big.circuit.size(), 21u * (2 * 324 + 2 * 18 * 17));
}

TEST(Workloads, TranspiledBrickworkIsRzSxRzThenCnotBricks) {
  const Workload w = transpiled_brickwork(4, 2, 11);
  ASSERT_EQ(w.circuit.size(), 2u * 12u + 2u + 1u);  // 3 gates a qubit a layer; bricks (0,1),(2,3) then (1,2)
  for (std::size_t layer = 0, k = 0; layer < 2; ++layer) {
    for (Qubit q = 0; q < 4; ++q, k += 3) {
      EXPECT_EQ(w.circuit[k].name(), "rz");
      EXPECT_EQ(w.circuit[k + 1].name(), "sx");
      EXPECT_EQ(w.circuit[k + 2].name(), "rz");
      EXPECT_EQ(w.circuit[k + 1].qubits(), (std::vector<Qubit>{q}));
      EXPECT_LT(std::abs(w.circuit[k].theta()), M_PI + 1e-15);
    }
    for (Qubit q = layer; q + 1 < 4; q += 2, ++k) {
      EXPECT_EQ(w.circuit[k].name(), "cnot");
      EXPECT_EQ(w.circuit[k].qubits(), (std::vector<Qubit>{q, q + 1}));
    }
  }
  EXPECT_EQ(w.observable, (std::vector<std::string>{"Z2"}));
  // The seed decides the angles, and only the seed.
  EXPECT_EQ(transpiled_brickwork(4, 2, 11).circuit[0].theta(), w.circuit[0].theta());
  EXPECT_NE(transpiled_brickwork(4, 2, 12).circuit[0].theta(), w.circuit[0].theta());
}

TEST(Workloads, RejectsDegenerateSizes) {
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([] { tfim_chain(1); }, {"tfim_chain", "2 sites"}));
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([] { heisenberg_chain(0); }, {"heisenberg_chain"}));
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([] { tfim_2d(1); }, {"tfim_2d", "side"}));
  EXPECT_TRUE(testing::ThrowsInvalidArgumentMentioning([] { transpiled_brickwork(1); }, {"transpiled_brickwork"}));
}

/// Propagating a workload in the Heisenberg direction equals U†OU computed densely.
TEST(Workloads, SmallInstancesMatchTheDenseOracle) {
  for (const Workload& w :
       {tfim_chain(4, 2, 0.2), heisenberg_chain(4, 2, 0.3), tfim_2d(2, 2), transpiled_brickwork(4, 3)}) {
    SCOPED_TRACE(w.name);
    std::vector<std::pair<std::string, Complex>> terms;
    for (const std::string& label : w.observable) terms.emplace_back(label, 1.0);
    auto sum = testing::MakeSum<1, double>(w.circuit.num_qubits(), terms);
    const testing::dense::Matrix start = testing::dense_operator(sum, w.circuit.num_qubits());
    PropagateOptions options;
    options.direction = Direction::heisenberg;
    propagate(sum, w.circuit, options);
    const testing::dense::Matrix expected =
        testing::apply_circuit_dense(start, w.circuit, Direction::heisenberg, w.circuit.num_qubits());
    EXPECT_TRUE(
        testing::operators_close(testing::dense_operator(sum, w.circuit.num_qubits()), expected, 1e-12));
  }
}

}  // namespace
}  // namespace paulistrings
