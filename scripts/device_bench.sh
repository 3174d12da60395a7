#!/usr/bin/env bash
# Builds the Release examples on the GPU machine (16+ cores) and runs the CPU-engine benchmarks that
# need many cores, writing logs under $OUT (or ./bench-out). One call of the device tool.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bench-out}"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)"
  g++ --version | head -1; cmake --version | head -1
} > "$out/machine.txt" 2>&1
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAULISTRINGS_BUILD_TESTS=OFF > "$out/build.log" 2>&1 &&
  cmake --build build-device --target paulistrings-kicked-ising >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
bin=build-device/paulistrings-kicked-ising
pi=3.141592653589793
{
  echo "# 5 steps, theta_h = 5pi/16, |c| > 2^-12 (seed: 0.70 s on 1 thread)"
  for t in 1 2 4 8 16; do /usr/bin/time -f "rss_kb %M" $bin 5 $(python3 -c "print(5*$pi/16)") 0.000244140625 cpu $t 2>&1 | tail -2; done
  echo "# 20 steps, theta_h = 7pi/32, |c| > 2^-14 (seed: 202 s on 1 thread)"
  for t in 16 1; do timeout 240 /usr/bin/time -f "rss_kb %M" $bin 20 $(python3 -c "print(7*$pi/32)") 0.00006103515625 cpu $t 2>&1 | tail -3; done
} 2>&1 | tee "$out/kicked_ising.txt"
