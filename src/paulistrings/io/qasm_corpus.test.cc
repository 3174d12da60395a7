// The corpus of circuit files in testdata/qasm (written here from the OpenQASM 2 and 3 specifications,
// in the shapes Qiskit's qasm2.dumps / qasm3.dumps and benchmark suites write them): each file either
// runs as it is — the reference and CPU engines agreeing in both directions, and known values where the
// circuit computes something classical — or is refused with the file, line, column and the construct.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/io/parse_error.h"
#include "paulistrings/io/qasm.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/testing/oracle_bridge.h"

namespace paulistrings::io {
namespace {

const std::filesystem::path kCorpus = std::filesystem::path(PAULISTRINGS_TEST_DATA) / "qasm";

QasmProgram load(const std::string& name) {
  QasmOptions options;
  if (name == "qiskit3_params.qasm") options.inputs = {{"theta", 0.37}, {"phi", -1.1}};
  return load_qasm_program((kCorpus / name).string(), options);
}

/// ⟨z+| O |z+⟩ after the circuit (Heisenberg) for O given as a sparse label.
double expectation(const Circuit& circuit, const std::string& label, Engine engine = Engine::cpu) {
  auto sum = PauliSum<2, Complex>::from_labels(circuit.num_qubits(), {{label, 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.engine = engine;
  propagate(sum, circuit, options);
  return ProductState::parse("z+", circuit.num_qubits()).expectation(sum).real();
}

TEST(QasmCorpus, EveryFileRunsOrIsRefusedWithALocatedReason) {
  const std::map<std::string, std::string> refusals = {
      {"refused_if.qasm", ":7:1: classical control 'if' is not supported"},
      {"refused_opaque.qasm", ":3:1: opaque gate 'pulse' is not supported"},
      {"refused_undeclared_register.qasm", ":7:17: undeclared classical register 'm'"},
      {"refused_qasm3_loop.qasm", ":4:1: loop 'for' is not supported"},
  };
  std::size_t ran = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    if (auto it = refusals.find(name); it != refusals.end()) {
      try {
        (void)load(name);
        ADD_FAILURE() << "not refused";
      } catch (const ParseError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(entry.path().string() + it->second, 0), 0u) << e.what();
        ++refused;
      }
      continue;
    }
    const QasmProgram program = load(name);
    const Circuit& c = program.circuit;
    ASSERT_GT(c.size(), 0u);
    // Both engines, both directions, on a random observable: the same operator.
    // Low-weight terms, so that the larger files stay quick in both directions.
    std::mt19937_64 rng(ran);
    std::vector<std::pair<std::string, Complex>> terms;
    for (int t = 0; t < 8; ++t) {
      const std::size_t q0 = rng() % c.num_qubits(), q1 = rng() % c.num_qubits();
      std::string label = std::string(1, "XYZ"[rng() % 3]) + std::to_string(q0);
      if (q1 != q0) label += std::string(" ") + "XYZ"[rng() % 3] + std::to_string(q1);
      terms.emplace_back(label, Complex(0.1 * t + 0.3, 0.05 * t));
    }
    for (const Direction direction : {Direction::heisenberg, Direction::forward}) {
      if (direction == Direction::forward && c.num_qubits() > 5) continue;  // the adder's forward run is long
      auto reference = PauliSum<2, Complex>::from_labels(c.num_qubits(), terms);
      auto cpu = reference;
      PropagateOptions options;
      options.direction = direction;
      options.engine = Engine::reference;
      propagate(reference, c, options);
      options.engine = Engine::cpu;
      propagate(cpu, c, options);
      ASSERT_EQ(cpu.size(), reference.size());
      for (std::size_t i = 0; i < reference.size(); ++i) {
        EXPECT_NEAR(std::abs(cpu.coefficient(reference.keys()[i]) - reference.coefficients()[i]), 0.0, 1e-12);
      }
    }
    ++ran;
  }
  EXPECT_EQ(refused, refusals.size());
  EXPECT_GE(ran, 9u);
}

TEST(QasmCorpus, KnownValues) {
  // Bell pair measured in Z: ZZ correlations survive, XX ones are removed by the measurements.
  const Circuit bell = load("qiskit2_bell.qasm").circuit;
  EXPECT_NEAR(expectation(bell, "Z0 Z1"), 1.0, 1e-14);
  EXPECT_NEAR(expectation(bell, "X0 X1"), 0.0, 1e-14);
  EXPECT_NEAR(expectation(bell, "Z0"), 0.0, 1e-14);

  // The adder computes 11 + 6 = 17 on basis states: every ⟨Z⟩ is ±1, bit by bit (registers in
  // declaration order: cin 0, a 1–4, b 5–8, cout 9).
  const QasmProgram adder = load("bench_adder.qasm");
  ASSERT_EQ(adder.registers.size(), 4u);
  const std::size_t sum = 11 + 6;
  for (std::size_t bit = 0; bit < 4; ++bit) {
    const double expected_b = (sum >> bit) & 1 ? -1.0 : 1.0;
    const double expected_a = (11 >> bit) & 1 ? -1.0 : 1.0;
    const std::size_t b = register_qubit(adder.registers, "b", bit),
                      a = register_qubit(adder.registers, "a", bit);
    // std::string(1, 'Z') + …: "Z" + std::to_string(…) trips GCC 12's -Wrestrict.
    EXPECT_NEAR(expectation(adder.circuit, std::string(1, 'Z') + std::to_string(b)), expected_b, 1e-12)
        << "b[" << bit << "]";
    EXPECT_NEAR(expectation(adder.circuit, std::string(1, 'Z') + std::to_string(a)), expected_a, 1e-12)
        << "a[" << bit << "]";
  }
  EXPECT_NEAR(expectation(adder.circuit, "Z9"), -1.0, 1e-12);  // the carry out
  EXPECT_NEAR(expectation(adder.circuit, "Z0"), 1.0, 1e-12);   // cin restored

  // The ancilla is reset after each syndrome measurement: it ends in |0⟩.
  const Circuit qec = load("bench_mid_measure_reset.qasm").circuit;
  EXPECT_NEAR(expectation(qec, "Z2"), 1.0, 1e-12);
  std::size_t measurements = 0, resets = 0;
  for (const Channel& channel : qec) {
    measurements += channel.is_measurement();
    resets += channel.is_reset();
  }
  EXPECT_EQ(measurements, 4u);
  EXPECT_EQ(resets, 2u);

  // A file without a version line: read as OpenQASM 2.0, with a warning naming the file.
  const QasmProgram old = load("no_version_line.qasm");
  ASSERT_EQ(old.warnings.size(), 1u);
  EXPECT_EQ(old.warnings[0].rfind((kCorpus / "no_version_line.qasm").string() + ":1:1: warning:", 0), 0u);
  EXPECT_NEAR(expectation(old.circuit, "Z2"), 0.0, 1e-12);  // (|000⟩ + |111⟩)/√2
  EXPECT_NEAR(expectation(old.circuit, "Z0 Z2"), 1.0, 1e-12);
}

TEST(QasmCorpus, OpenQasm3Files) {
  const QasmProgram hardware = load("qiskit3_hardware.qasm");
  EXPECT_EQ(hardware.circuit.num_qubits(), 4u);
  EXPECT_TRUE(hardware.registers.empty());
  const QasmProgram params = load("qiskit3_params.qasm");
  EXPECT_EQ(params.inputs, (std::vector<std::string>{"theta", "phi"}));
  EXPECT_EQ(params.version, 3);
}

}  // namespace
}  // namespace paulistrings::io
