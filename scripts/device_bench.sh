#!/usr/bin/env bash
# Builds the Release benchmark programs on the GPU machine (16+ cores) and runs the CPU-engine
# benchmarks that need many cores, writing logs under $OUT (or ./bench-out). One device-tool call.
#
# usage: scripts/device_bench.sh [cells|kicked|all]   (default: all)
#   cells  — paulistrings-bench at 10^6 and 10^7 terms, 1/2/4/8/16 threads
#   kicked — the 127-qubit kicked-Ising workloads (5 steps 2^-12 at 1–16 threads; 20 steps 2^-14)
set -uo pipefail
cd "$(dirname "$0")/.."
mode="${1:-all}"
out="${OUT:-bench-out}"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)"
  g++ --version | head -1; cmake --version | head -1
} > "$out/machine.txt" 2>&1
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAULISTRINGS_BUILD_TESTS=OFF > "$out/build.log" 2>&1 &&
  cmake --build build-device --target paulistrings-kicked-ising paulistrings-bench >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }

if [[ $mode == cells || $mode == all ]]; then
  build-device/paulistrings-bench --terms 1000000,10000000 --threads 1,2,4,8,16 --repeat 3 2>&1 | tee "$out/cells.txt"
fi
if [[ $mode == kicked || $mode == all ]]; then
  bin=build-device/paulistrings-kicked-ising
  {
    echo "# 5 steps, theta_h = 5pi/16, |c| > 2^-12 (seed: 0.70 s on 1 thread)"
    for t in 1 2 4 8 16; do /usr/bin/time -f "rss_kb %M" $bin 5 0.9817477042468103 0.000244140625 cpu $t 2>&1 | tail -2; done
    echo "# 20 steps, theta_h = 7pi/32, |c| > 2^-14 (seed: 202 s on 1 thread)"
    for t in 16 1; do timeout 240 /usr/bin/time -f "rss_kb %M" $bin 20 0.6872233929727672 0.00006103515625 cpu $t 2>&1 | tail -3; done
  } 2>&1 | tee "$out/kicked_ising.txt"
fi
