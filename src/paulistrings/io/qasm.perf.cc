// Reading time of large OpenQASM files, for the linear-time claim (numbers in docs/PERFORMANCE.md): a
// program in the shape transpilers write (rz / sx / cx on a heavy register, a Toffoli now and then,
// measurements at the end) is generated in memory at several sizes and parsed; the time per gate
// should not grow with the size.
//
//   paulistrings-qasm-bench [qubits=1000] [largest=1000000]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

#include "paulistrings/io/qasm.h"

int main(int argc, char** argv) {
  const std::size_t qubits = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000;
  const std::size_t largest = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  for (std::size_t gates = largest / 100; gates <= largest; gates *= 10) {
    std::mt19937_64 rng(1);
    std::string text = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[" + std::to_string(qubits) +
                       "];\ncreg c[" + std::to_string(qubits) + "];\n";
    text.reserve(gates * 24);
    for (std::size_t g = 0; g < gates; ++g) {
      const std::size_t a = rng() % qubits, b = (a + 1 + rng() % (qubits - 1)) % qubits;
      switch (rng() % 8) {
        case 0:
        case 1:
          text += "cx q[" + std::to_string(a) + "],q[" + std::to_string(b) + "];\n";
          break;
        case 2:
          text += "sx q[" + std::to_string(a) + "];\n";
          break;
        case 3: {
          const std::size_t c = (b + 1 + rng() % (qubits - 2)) % qubits;
          if (c == a) {
            text += "x q[" + std::to_string(a) + "];\n";
          } else {
            text += "ccx q[" + std::to_string(a) + "],q[" + std::to_string(b) + "],q[" + std::to_string(c) +
                    "];\n";
          }
          break;
        }
        default:
          text += "rz(" + std::to_string(static_cast<double>(rng() % 100000) / 1e4 - 5.0) + ") q[" +
                  std::to_string(a) + "];\n";
          break;
      }
    }
    text += "measure q -> c;\n";
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    const paulistrings::Circuit circuit = paulistrings::io::read_qasm(text, "generated.qasm");
    const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // CPU time beside wall time: on a shared machine the wall time also counts other processes' turns.
    std::printf("%9zu gates (%6.1f MB, %zu channels): %7.3f s wall, %7.3f s CPU, %6.0f ns CPU per gate\n",
                gates, static_cast<double>(text.size()) / 1e6, circuit.size(), seconds, cpu,
                1e9 * cpu / static_cast<double>(gates));
  }
  return 0;
}
