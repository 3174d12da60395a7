// paulistrings-gpu-bench: the cells of docs/design.md §8 (bench_cells.h: W = 2, real, steady state) on one
// GPU and, in the same run, on the same machine's CPU threads; the device's copy bandwidth; the 127-qubit
// kicked-Ising workloads end to end on the GPU (upload and download included); and a growth run that
// doubles a sum by rotations until it reaches --grow-to terms.
//
// usage: paulistrings-gpu-bench [--terms N,...] [--cells a,b,...] [--cpu-threads T] [--repeat R]
//                               [--device D] [--kicked] [--blocks on|off] [--grow-to N]
// Rows: cell, terms, engine, ns per input term per layer, bytes moved per term (input read + output
// written at 40 B per term), the bandwidth that implies and its fraction of the measured bandwidth
// (device copy bandwidth for the GPU, triad for the CPU), and the GPU/CPU ratio.
// --blocks off runs the kicked Ising one layer at a time (PropagateOptions::gate_blocks).
// PAULISTRINGS_GPU_PROFILE (set) turns on GpuEngineOptions::profile: every device sum prints its phase
// times to stderr when it is destroyed.

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/bench_cells.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/readout/product_state.h"
#include "paulistrings/run/propagate.h"

namespace paulistrings {
namespace {

using Clock = std::chrono::steady_clock;
using bench::kWidth;
using bench::Sum;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Best-of-5 device-to-device copy of 2 GiB: bytes read + written per second (GB/s).
double device_bandwidth(int device) {
  cudaSetDevice(device);
  const std::size_t bytes = std::size_t{2} << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return 0.0;
  cudaMemset(a, 1, bytes);
  double best = 0.0;
  for (int trial = 0; trial < 5; ++trial) {
    cudaDeviceSynchronize();
    const auto start = Clock::now();
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds_since(start) / 1e9);
  }
  cudaFree(a);
  cudaFree(b);
  return best;
}


std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

/// The engine's options for every device sum of this run (PAULISTRINGS_GPU_PROFILE).
GpuEngineOptions engine_options() {
  GpuEngineOptions options;
  options.profile = std::getenv("PAULISTRINGS_GPU_PROFILE") != nullptr;
  return options;
}

/// ⟨Z62⟩ of the 127-qubit kicked Ising after `steps` steps (θJ = −π/2), Heisenberg, |c| > cutoff, on the
/// GPU end to end: upload, propagation, download, read-out.
void kicked_ising(int device, std::size_t steps, double theta_h, double cutoff, bool blocks) {
  const Circuit circuit = kicked_ising_circuit(steps, theta_h);
  const auto start = Clock::now();
  auto sum = PauliSum<2, double>::from_labels(circuit.num_qubits(), {{"Z62", 1.0}});
  PropagateOptions options;
  options.direction = Direction::heisenberg;
  options.truncation = Truncation::coeff(cutoff);
  options.device = device;
  options.gpu = engine_options();
  options.gate_blocks = blocks;
  options.keep_layer_records = false;
  const PropagationStats stats = propagate(sum, circuit, options);
  const double value = ProductState::parse("z+", circuit.num_qubits()).expectation(sum);
  std::printf(
      "kicked_ising steps=%zu theta_h=%.6f cutoff=%.3g engine=gpu%d blocks=%s wall_s=%.4f <Z62>=%.12f "
      "peak_terms=%zu final_terms=%zu\n",
      steps, theta_h, cutoff, device, blocks ? "on" : "off", seconds_since(start), value, stats.peak_terms,
      stats.final_terms);
  std::fflush(stdout);
}

/// X on every qubit, then rz on qubits 0, 1, … : each rotation doubles the sum (every term anticommutes
/// and no partner exists) until it holds ≥ target terms; then two layers at that size (a rotation whose
/// partners are present, a cnot) and one doubling too many, which must fail cleanly.
void grow(int device, std::size_t target) {
  std::string label(127, 'X');
  auto host = PauliSum<2, double>::from_labels(127, {{label, 1.0}});
  gpu::DeviceSum<2, double> sum(host, device, engine_options());
  const Truncation none;
  const auto start = Clock::now();
  Qubit q = 0;
  while (sum.size() < target) {
    const auto layer = Clock::now();
    sum.apply_layer(prepare_channel<2>(Channel::rz(0.3, q), Direction::heisenberg), none);
    std::printf("grow layer rz(q%zu): terms=%zu layer_s=%.4f device_gib=%.2f peak_gib=%.2f\n", q, sum.size(),
                seconds_since(layer), static_cast<double>(sum.device_bytes()) / (1 << 30),
                static_cast<double>(sum.peak_device_bytes()) / (1 << 30));
    std::fflush(stdout);
    ++q;
  }
  std::printf("grow reached %zu terms in %.3f s\n", sum.size(), seconds_since(start));
  for (const Channel& channel : {Channel::rz(0.2, 0), Channel::cnot(0, 100)}) {
    const auto layer = Clock::now();
    const std::size_t in = sum.size();
    sum.apply_layer(prepare_channel<2>(channel, Direction::heisenberg), none);
    std::printf("at size: %s terms %zu -> %zu, %.4f s (%.3f ns/term)\n", channel.description().c_str(), in,
                sum.size(), seconds_since(layer), seconds_since(layer) * 1e9 / static_cast<double>(in));
  }
  try {
    sum.apply_layer(prepare_channel<2>(Channel::rz(0.3, q), Direction::heisenberg), none);
    std::printf("one more doubling fit: %zu terms\n", sum.size());
  } catch (const std::exception& e) {
    std::printf("one more doubling refused: %s; the sum still holds %zu terms\n", e.what(), sum.size());
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace paulistrings

int main(int argc, char** argv) {
  using namespace paulistrings;
  std::vector<std::size_t> sizes = {1000000, 10000000, 100000000};
  std::vector<std::string> cells = {"rotation_zz", "cnot", "gu2q", "su4", "depolarize"};
  int cpu_threads = available_cpus();
  int repeat = 5;
  int device = 0;
  bool kicked = false;
  bool blocks = true;
  std::size_t grow_to = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--kicked") {
      kicked = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "missing value after %s\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    try {  // strict numbers (core/text.h): "--terms 1e7" is 10^7 terms, "1.5" or "-1" an error
      if (flag == "--terms") {
        sizes.clear();
        for (const auto& v : split(value)) sizes.push_back(parse_count(v));
      } else if (flag == "--cells") {
        cells = value == "none" ? std::vector<std::string>{} : split(value);
      } else if (flag == "--cpu-threads") {
        cpu_threads = static_cast<int>(parse_count(value, INT_MAX));
      } else if (flag == "--repeat") {
        repeat = static_cast<int>(parse_count(value, INT_MAX));
      } else if (flag == "--device") {
        device = static_cast<int>(parse_count(value, INT_MAX));
      } else if (flag == "--blocks") {
        if (value != "on" && value != "off") throw std::invalid_argument("--blocks takes on or off");
        blocks = value == "on";
      } else if (flag == "--grow-to") {
        grow_to = parse_count(value);
      } else {
        std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
        return 2;
      }
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "%s: %s\n", flag.c_str(), e.what());
      return 2;
    }
  }
  if (gpu::device_count() == 0) {
    std::printf("# no GPU: %s\n", gpu::unavailable_reason().c_str());
    return 1;
  }
  std::printf("# device %d: %s\n", device, gpu::describe_device(device).c_str());
  if (!cells.empty()) {
    const double gpu_bw = device_bandwidth(device);
    const double cpu_bw = cpu_threads > 0 ? bench::triad_bandwidth(cpu_threads) : 0.0;
    std::printf("# device copy bandwidth %.0f GB/s; CPU triad bandwidth, %d threads: %.1f GB/s\n", gpu_bw,
                cpu_threads, cpu_bw);
    std::printf("%-12s %10s %8s %9s %10s %9s %8s %8s\n", "cell", "terms", "engine", "ns/term", "bytes/term", "GB/s",
                "of_bw", "gpu/cpu");
    std::mt19937_64 rng(20261129);
    const auto layer_cells = bench::layer_cells(rng);
    for (const std::string& cell : cells) {
      if (!layer_cells.count(cell)) {
        std::fprintf(stderr, "unknown cell %s\n", cell.c_str());
        return 2;
      }
      const PreparedChannel<kWidth> table = prepare_channel<kWidth>(layer_cells.at(cell), Direction::heisenberg);
      for (std::size_t m : sizes) {
        const Sum sum = bench::steady_state_sum(layer_cells.at(cell), m, rng);
        bench::LayerTiming gpu_timing, cpu_timing;
        {
          gpu::DeviceSum<kWidth, double> device_sum(sum, device, engine_options());
          gpu_timing = bench::time_layers(device_sum, table, repeat);
        }
        std::printf("%-12s %10zu %8s %9.4f %10.1f %9.1f %8.3f %8s\n", cell.c_str(), m, "gpu", gpu_timing.ns_per_term,
                    gpu_timing.bytes_per_term, gpu_timing.bytes_per_term / gpu_timing.ns_per_term,
                    gpu_timing.bytes_per_term / gpu_timing.ns_per_term / gpu_bw, "");
        std::fflush(stdout);
        if (cpu_threads > 0) {
          CpuEngineOptions options;
          options.threads = cpu_threads;
          CpuEngine<kWidth, double> engine(sum, options);
          cpu_timing = bench::time_layers(engine, table, repeat);
          std::printf("%-12s %10zu %8s %9.4f %10.1f %9.1f %8.3f %8.1f\n", cell.c_str(), m,
                      std::string("cpu").append(std::to_string(cpu_threads)).c_str(), cpu_timing.ns_per_term, cpu_timing.bytes_per_term,
                      cpu_timing.bytes_per_term / cpu_timing.ns_per_term,
                      cpu_timing.bytes_per_term / cpu_timing.ns_per_term / cpu_bw,
                      cpu_timing.ns_per_term / gpu_timing.ns_per_term);
          std::fflush(stdout);
        }
      }
    }
  }
  if (kicked) {
    kicked_ising(device, 5, 5 * std::numbers::pi / 16, std::ldexp(1.0, -12), blocks);
    kicked_ising(device, 20, 7 * std::numbers::pi / 32, std::ldexp(1.0, -14), blocks);
  }
  if (grow_to > 0) grow(device, grow_to);
  return 0;
}
