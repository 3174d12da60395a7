// Toffoli: one native three-qubit Pauli transfer against the library's exact decomposition (H, seven
// quarter-turn Z-type rotations, H), measured (docs/design.md, "Circuit files"; numbers in
// docs/PERFORMANCE.md). The same simple sort-and-merge layer (the reference engine's method) applies
// both forms to the same random sums, so the comparison is of the work each form causes: outputs emitted
// and terms alive between layers; the CPU engine then runs the decomposition, beside one CNOT and one
// dense two-qubit unitary layer for scale.
//
//   paulistrings-toffoli-bench [terms=200000] [qubits=24] [repeats=3]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/circuit/gate_library.h"
#include "paulistrings/run/propagate.h"

using namespace paulistrings;

namespace {

using Clock = std::chrono::steady_clock;
using Key = PauliString<1>;
struct Term {
  Key key;
  double c;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Sorts by key and sums equal keys, dropping exact zeros (the reference engine's merge).
std::vector<Term> merge(std::vector<Term> outputs) {
  std::sort(outputs.begin(), outputs.end(), [](const Term& a, const Term& b) { return a.key < b.key; });
  std::vector<Term> out;
  for (std::size_t i = 0; i < outputs.size();) {
    double total = 0.0;
    std::size_t j = i;
    for (; j < outputs.size() && outputs[j].key == outputs[i].key; ++j) total += outputs[j].c;
    if (total != 0.0) out.push_back({outputs[i].key, total});
    i = j;
  }
  return out;
}

/// The Toffoli's Pauli transfer on qubits (0, 1, 2): for each input pattern (2 bits per qubit, I X Z Y),
/// its output patterns and amplitudes.
std::vector<std::vector<std::pair<int, double>>> toffoli_table() {
  const SmallMatrix paulis[4] = {
      {1, 0, 0, 1}, {0, 1, 1, 0}, {1, 0, 0, -1}, {0, Complex(0, -1), Complex(0, 1), 0}};
  auto pattern_matrix = [&](int p) {
    return matrix_kron(paulis[p & 3], matrix_kron(paulis[(p >> 2) & 3], paulis[(p >> 4) & 3]));
  };
  const ControlledGate ccx{{false, false}, 1, {0, 1, 1, 0}};
  const SmallMatrix u = controlled_matrix(ccx);
  std::vector<std::vector<std::pair<int, double>>> table(64);
  for (int in = 0; in < 64; ++in) {
    const SmallMatrix image = matrix_multiply(matrix_adjoint(u), matrix_multiply(pattern_matrix(in), u));
    for (int out = 0; out < 64; ++out) {
      const SmallMatrix product = matrix_multiply(pattern_matrix(out), image);
      Complex trace = 0;
      for (int k = 0; k < 8; ++k) trace += product[static_cast<std::size_t>(k * 8 + k)];
      const double amplitude = trace.real() / 8;
      if (std::abs(amplitude) > 1e-12) table[static_cast<std::size_t>(in)].emplace_back(out, amplitude);
    }
  }
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t terms = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  const std::size_t qubits = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 24;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  std::mt19937_64 rng(7);
  std::vector<Term> start;
  for (std::size_t t = 0; t < terms; ++t) {
    Key key;
    for (std::size_t q = 0; q < qubits; ++q) key.set_code(q, static_cast<int>(rng() % 4));
    start.push_back({key, std::normal_distribution<double>()(rng)});
  }
  start = merge(start);

  const auto table = toffoli_table();
  double fanout = 0;
  int max_fanout = 0;
  for (const auto& row : table) {
    fanout += static_cast<double>(row.size());
    max_fanout = std::max(max_fanout, static_cast<int>(row.size()));
  }
  std::printf("Toffoli Pauli transfer: %.2f outputs per input pattern on average, at most %d\n", fanout / 64,
              max_fanout);

  // Native: one layer through the 64-pattern table.
  double native_seconds = 1e300;
  std::size_t native_outputs = 0, native_terms = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    std::vector<Term> outputs;
    outputs.reserve(start.size() * 4);
    for (const Term& term : start) {
      const int in = term.key.code(0) | term.key.code(1) << 2 | term.key.code(2) << 4;
      for (const auto& [out, amplitude] : table[static_cast<std::size_t>(in)]) {
        Key key = term.key;
        key.set_code(0, out & 3);
        key.set_code(1, (out >> 2) & 3);
        key.set_code(2, (out >> 4) & 3);
        outputs.push_back({key, term.c * amplitude});
      }
    }
    native_outputs = outputs.size();
    native_terms = merge(std::move(outputs)).size();
    native_seconds = std::min(native_seconds, seconds_since(t0));
  }

  // Decomposed: the library's channels, one sort-and-merge layer each.
  std::vector<Channel> channels;
  const Qubit q[] = {0, 1, 2};
  append_standard_gate(*find_standard_gate("ccx", GateLibrary::qelib1), {}, q, channels);
  double decomposed_seconds = 1e300;
  std::size_t decomposed_outputs = 0, peak = 0, decomposed_terms = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    std::vector<Term> sum = start;
    decomposed_outputs = 0;
    peak = sum.size();
    for (const Channel& channel : channels) {
      const PreparedChannel<1> prepared = prepare_channel<1>(channel, Direction::heisenberg);
      std::vector<Term> outputs;
      outputs.reserve(sum.size() * 2);
      for (const Term& term : sum) {
        prepared.for_each_output(term.key, [&](const Key& key, Complex amplitude, int) {
          outputs.push_back({key, term.c * amplitude.real()});
        });
      }
      decomposed_outputs += outputs.size();
      sum = merge(std::move(outputs));
      peak = std::max(peak, sum.size());
    }
    decomposed_terms = sum.size();
    decomposed_seconds = std::min(decomposed_seconds, seconds_since(t0));
  }
  std::printf("%zu terms on %zu qubits, uniformly random on the Toffoli's three:\n", start.size(), qubits);
  std::printf("  native 3-qubit table : %9zu outputs emitted, %8zu terms after, %7.3f s\n", native_outputs,
              native_terms, native_seconds);
  std::printf(
      "  decomposed (%zu layers): %9zu outputs emitted, %8zu terms after (peak %zu between layers), %7.3f "
      "s\n",
      channels.size(), decomposed_outputs, decomposed_terms, peak, decomposed_seconds);

  // The CPU engine on the decomposition, and single layers for scale (one thread, best of repeats).
  auto engine_seconds = [&](const std::vector<Channel>& layer) {
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
      std::vector<PauliSum<1, double>::Term> list;
      for (const Term& t : start) list.push_back({t.key, t.c});
      PauliSum<1, double> sum = PauliSum<1, double>::from_terms(qubits, list);
      Circuit circuit(qubits);
      for (const Channel& c : layer) circuit.append(c);
      PropagateOptions options;
      options.direction = Direction::heisenberg;
      options.threads = 1;
      const auto t0 = Clock::now();
      propagate(sum, circuit, options);
      best = std::min(best, seconds_since(t0));
    }
    return best;
  };
  std::mt19937_64 unitary_rng(3);
  std::vector<Complex> haar(16);
  {
    // A dense two-qubit unitary: exp(i·(random Hermitian)), through the library's eigensolver.
    SmallMatrix h(16);
    std::normal_distribution<double> normal;
    for (int r = 0; r < 4; ++r)
      for (int c = r; c < 4; ++c) {
        const Complex v =
            r == c ? Complex(normal(unitary_rng)) : Complex(normal(unitary_rng), normal(unitary_rng));
        h[static_cast<std::size_t>(r * 4 + c)] = v;
        h[static_cast<std::size_t>(c * 4 + r)] = std::conj(v);
      }
    SmallMatrix u = matrix_identity(4);
    for (int k = 0; k < 30; ++k) {  // exp(iH/30)^30 by a short series: unitary to rounding
      SmallMatrix step = matrix_identity(4), power = matrix_identity(4);
      for (int n = 1; n < 12; ++n) {
        power = matrix_multiply(power, h);
        double f = 1;
        for (int m = 1; m <= n; ++m) f *= 30.0 * m;
        for (std::size_t e = 0; e < 16; ++e) step[e] += std::pow(Complex(0, 1), n) * power[e] / f;
      }
      u = matrix_multiply(u, step);
    }
    haar.assign(u.begin(), u.end());
  }
  std::printf("CPU engine, one thread:\n");
  std::printf("  Toffoli decomposed   : %7.3f s\n", engine_seconds(channels));
  std::printf("  one CNOT layer       : %7.3f s\n", engine_seconds({Channel::cnot(0, 1)}));
  std::printf("  one dense 2q unitary : %7.3f s\n", engine_seconds({Channel::unitary_2q(0, 1, haar)}));
  return 0;
}
