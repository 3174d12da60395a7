#pragma once
// The cells of docs/design.md §8, shared by the CPU and GPU benchmarks (cpu_engine.perf.cc, gpu/device_sum.perf.cc):
// W = 2 (128 qubits), real coefficients, a two-qubit support straddling the word boundary, and sums in
// steady state (every orbit of the layer's delta span already present, so a layer maps m terms to m).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::bench {

constexpr int kWidth = 2;
constexpr std::size_t kQubits = 128;
constexpr Qubit kQubitA = 5, kQubitB = 70;  // a two-qubit support straddling the word boundary
using Sum = PauliSum<kWidth, double>;
using Key = PauliString<kWidth>;
constexpr double kTermBytes = sizeof(Key) + sizeof(double);

inline std::vector<Complex> haar_unitary(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<Complex> m(16);
  for (Complex& v : m) v = Complex(normal(rng), normal(rng));
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < r; ++p) {
      Complex dot = 0.0;
      for (int c = 0; c < 4; ++c) dot += std::conj(m[p * 4 + c]) * m[r * 4 + c];
      for (int c = 0; c < 4; ++c) m[r * 4 + c] -= dot * m[p * 4 + c];
    }
    double norm = 0.0;
    for (int c = 0; c < 4; ++c) norm += std::norm(m[r * 4 + c]);
    for (int c = 0; c < 4; ++c) m[r * 4 + c] /= std::sqrt(norm);
  }
  return m;
}

/// exp(−i(a·XX + b·YY)/2): a two-qubit unitary whose PTM is sparse (orbits of 4).
inline std::vector<Complex> sparse_two_qubit_unitary(double a, double b) {
  const Complex i(0.0, 1.0);
  auto multiply = [](const std::vector<Complex>& x, const std::vector<Complex>& y) {
    std::vector<Complex> z(16);
    for (int r = 0; r < 4; ++r)
      for (int k = 0; k < 4; ++k)
        for (int c = 0; c < 4; ++c) z[r * 4 + c] += x[r * 4 + k] * y[k * 4 + c];
    return z;
  };
  const std::vector<Complex> xx = {0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0};
  const std::vector<Complex> yy = {0, 0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, 0};
  std::vector<Complex> ua(16), ub(16);
  for (int k = 0; k < 16; ++k) {
    const double identity = (k % 5 == 0) ? 1.0 : 0.0;
    ua[k] = std::cos(a / 2) * identity - i * std::sin(a / 2) * xx[k];
    ub[k] = std::cos(b / 2) * identity - i * std::sin(b / 2) * yy[k];
  }
  return multiply(ua, ub);
}

/// m terms whose orbits under the channel's realized delta span are complete (steady state).
inline Sum steady_state_sum(const Channel& channel, std::size_t m, std::mt19937_64& rng) {
  const PreparedChannel<kWidth> table = prepare_channel<kWidth>(channel, Direction::heisenberg);
  std::vector<Key> span = {Key{}};
  for (const Key& delta : table.deltas) {
    const std::size_t before = span.size();
    bool present = false;
    for (std::size_t k = 0; k < before; ++k) present |= span[k] == delta;
    if (present) continue;
    for (std::size_t k = 0; k < before; ++k) span.push_back(span[k] ^ delta);
  }
  std::normal_distribution<double> normal;
  std::vector<Sum::Term> terms;
  terms.reserve(m);
  while (terms.size() < m) {
    Key rest;
    for (int w = 0; w < kWidth; ++w) {
      rest.x[w] = rng();
      rest.z[w] = rng();
    }
    for (const Key& s : span) {
      if (terms.size() < m) terms.push_back({rest ^ s, normal(rng)});
    }
  }
  return Sum::from_terms(kQubits, std::move(terms));
}

/// Best-of-3 triad bandwidth (GB/s) with `threads` OpenMP threads over three 256 MiB arrays.
inline double triad_bandwidth(int threads) {
  using Clock = std::chrono::steady_clock;
  const std::size_t n = (std::size_t{256} << 20) / sizeof(double);
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
  double best = 0.0;
  for (int trial = 0; trial < 3; ++trial) {
    const auto start = Clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5 * c[i];
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, 3.0 * static_cast<double>(n * sizeof(double)) / seconds / 1e9);
  }
  if (a[n / 2] != 2.0) std::printf("# triad check failed\n");
  return best;
}

struct LayerTiming {
  double ns_per_term = 0.0;     ///< per input term per layer
  double bytes_per_term = 0.0;  ///< input read + output written, kTermBytes per term
};

/// Times `repeat` applications of one layer on any layer engine (size(), apply_layer(table, policy))
/// after one untimed application that brings its buffers to their steady capacity.
template <class Engine>
LayerTiming time_layers(Engine& engine, const PreparedChannel<kWidth>& table, int repeat) {
  using Clock = std::chrono::steady_clock;
  const Truncation none;
  engine.apply_layer(table, none);
  std::size_t terms_in = 0, terms_out = 0;
  const auto start = Clock::now();
  for (int r = 0; r < repeat; ++r) {
    terms_in += engine.size();
    engine.apply_layer(table, none);
    terms_out += engine.size();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return {seconds * 1e9 / static_cast<double>(terms_in),
          kTermBytes * static_cast<double>(terms_in + terms_out) / static_cast<double>(terms_in)};
}

/// The single-layer cells by name: rotation_zz, cnot, gu2q (sparse PTM), su4 (Haar), depolarize.
inline std::map<std::string, Channel> layer_cells(std::mt19937_64& rng) {
  return {
      {"rotation_zz", Channel::rzz(0.3, kQubitA, kQubitB)},
      {"cnot", Channel::cnot(kQubitA, kQubitB)},
      {"gu2q", Channel::unitary_2q(kQubitA, kQubitB, sparse_two_qubit_unitary(0.3, 0.7))},
      {"su4", Channel::unitary_2q(kQubitA, kQubitB, haar_unitary(rng))},
      {"depolarize", Channel::depolarize(0.01, kQubitA)},
  };
}

}  // namespace paulistrings::bench
