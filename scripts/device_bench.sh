#!/usr/bin/env bash
# Builds the Release benchmark programs on the GPU machine (16+ cores) and runs the CPU-engine
# benchmarks that need many cores, writing logs under $OUT (or ./bench-out). One device-tool call.
#
# usage: scripts/device_bench.sh MODE[,MODE...]   (default: cells,kicked)
#   cells     — paulistrings-bench, every cell at 10^6 and 10^7 terms on 1/2/4/8/16 threads
#   compare   — the alternative formulations at 10^6 terms (gu2q/su4 gather-sort-merge beside the
#               orbit grouping, rotation_zz through the orbit path beside the in-place update)
#   quick     — cells at 1 and 16 threads, tfim_chain / heisenberg_chain / tfim_2d L=18, kicked Ising
#   steps     — the tfim_step and heavyhex_step cells only (1/2/4/8/16 threads)
#   knobs     — target_bucket_len / min_buckets sweep and the small-sum parallel threshold
#   workloads — the published cross-engine workloads (tfim_chain, heisenberg_chain on 1 thread;
#               tfim_2d L = 6…18 on 16 threads)
#   kicked    — the 127-qubit kicked-Ising workloads (5 steps 2^-12 at 1–16 threads; 20 steps 2^-14)
#   tests     — the Release unit tests (thread determinism on 16 cores)
set -uo pipefail
cd "$(dirname "$0")/.."
modes="${1:-cells,kicked}"
out="${OUT:-bench-out}"
mkdir -p "$out"
has() { [[ ",$modes," == *",$1,"* ]]; }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (working tree may differ)"
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)"
  g++ --version | head -1; cmake --version | head -1
} > "$out/machine.txt" 2>&1
tests=OFF
targets=(paulistrings-bench paulistrings-workloads paulistrings-kicked-ising)
has tests && tests=ON && targets+=(paulistrings-tests paulistrings-cli)
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAULISTRINGS_BUILD_TESTS=$tests -DPAULISTRINGS_BUILD_PYTHON=OFF > "$out/build.log" 2>&1 &&
  cmake --build build-device --target "${targets[@]}" >> "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
export OMP_PROC_BIND=close OMP_PLACES=cores

if has tests; then
  (cd build-device && ctest -j 8 --output-on-failure 2>&1 | tail -15) | tee "$out/tests.txt"
fi
if has cells; then
  build-device/paulistrings-bench --terms 1000000,10000000 --threads 1,2,4,8,16 --repeat 3 2>&1 |
    tee "$out/cells.txt"
fi
if has steps; then
  build-device/paulistrings-bench --threads 1,2,4,8,16 --cells tfim_step,heavyhex_step 2>&1 | tee "$out/steps.txt"
fi
if has quick; then
  # One call's worth: cells at 1 and 16 threads, the end-to-end workloads, the kicked-Ising cells.
  build-device/paulistrings-bench --terms 1000000,10000000 --threads 1,16 --repeat 3 2>&1 | tee "$out/quick_cells.txt"
  {
    build-device/paulistrings-workloads tfim_chain --threads 1
    build-device/paulistrings-workloads heisenberg_chain --threads 1
    build-device/paulistrings-workloads tfim_2d --side 18 --threads 16
    for t in 1 16; do /usr/bin/time -f "rss_kb %M" build-device/paulistrings-kicked-ising 5 0.9817477042468103 0.000244140625 cpu $t 2>&1 | tail -2; done
    for t in 16 1; do timeout 200 /usr/bin/time -f "rss_kb %M" build-device/paulistrings-kicked-ising 20 0.6872233929727672 0.00006103515625 cpu $t 2>&1 | tail -2; done
  } 2>&1 | tee "$out/quick_workloads.txt"
fi
if has compare; then
  build-device/paulistrings-bench --terms 1000000 --threads 1,16 --repeat 1 --compare --cells rotation_zz,gu2q,su4 2>&1 |
    tee "$out/compare.txt"
fi
if has knobs; then
  {
    for len in 256 512 1024 2048 4096; do
      build-device/paulistrings-bench --terms 10000000 --threads 1,16 --repeat 3 --cells rotation_zz,su4 \
        --bucket-len $len | grep -v "^#"
    done
    echo "# small sums: 1 vs 16 threads"
    build-device/paulistrings-bench --terms 1000,4000,16000,64000 --threads 1,16 --repeat 50 --cells rotation_zz,su4
  } 2>&1 | tee "$out/knobs.txt"
fi
if has workloads; then
  w=build-device/paulistrings-workloads
  {
    for r in in_place orbit; do
      $w tfim_chain --threads 1 --rotations $r
      $w heisenberg_chain --threads 1 --rotations $r
    done
    $w tfim_chain --threads 16
    $w heisenberg_chain --threads 16
    for side in 6 12 18; do timeout 80 $w tfim_2d --side $side --threads 16 || echo "tfim_2d L=$side: stopped after 80 s"; done
  } 2>&1 | tee "$out/workloads.txt"
fi
if has kicked; then
  bin=build-device/paulistrings-kicked-ising
  {
    echo "# 5 steps, theta_h = 5pi/16, |c| > 2^-12 (seed: 0.70 s on 1 thread)"
    for t in 1 2 4 8 16; do /usr/bin/time -f "rss_kb %M" $bin 5 0.9817477042468103 0.000244140625 cpu $t 2>&1 | tail -2; done
    echo "# 20 steps, theta_h = 7pi/32, |c| > 2^-14 (seed: 202 s on 1 thread)"
    for t in 16 1; do timeout 240 /usr/bin/time -f "rss_kb %M" $bin 20 0.6872233929727672 0.00006103515625 cpu $t 2>&1 | tail -3; done
  } 2>&1 | tee "$out/kicked_ising.txt"
fi
