#!/usr/bin/env bash
# scripts/bench_under_load.sh [BUILD_DIR]: a run on N threads beside another CPU-bound process
# (docs/PERFORMANCE.md, "robust under load"). Times the kicked Ising (`paulistrings kicked-ising --steps 20
# --theta-h 2pi/16`) and the rotation_zz cell at 10^6 terms (`paulistrings-bench`), on 1 and on all cores,
# alone and beside BUSY (default 1) busy loops, under two OpenMP wait policies:
#   chosen  — what the command picks when the user sets nothing (passive waiting, cli/wait_policy.h);
#   spin    — libgomp's own default (idle threads spin 300,000 times before they sleep: GOMP_SPINCOUNT).
# paulistrings-bench does not choose a policy, so it gets OMP_WAIT_POLICY=passive for "chosen".
# Prints one line per measurement: workload, policy, threads, load, and the best of REPEAT (default 3) wall
# times of the command, or the cell's ns per term per layer as paulistrings-bench reports it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeat=${REPEAT:-3}
cores=$(nproc)

best_of() {  # best_of CMD...: the smallest wall time of $repeat runs, in seconds
  local best=""
  for _ in $(seq "$repeat"); do
    local start end t
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.6f", b - a }')
    if [[ -z $best ]] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
  done
  printf '%.3f' "$best"
}

busy=()
start_load() {
  for _ in $(seq "${BUSY:-1}"); do
    (while :; do :; done) &
    busy+=($!)
  done
}
stop_load() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  busy=()
}
trap stop_load EXIT

for load in alone "beside_${BUSY:-1}_busy_loops"; do
  [[ $load != alone ]] && start_load
  for policy in chosen spin; do
    if [[ $policy == chosen ]]; then
      envs=(env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT)
      bench_envs=(env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive)
    else
      envs=(env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=300000)
      bench_envs=("${envs[@]}")
    fi
    for threads in 1 "$cores"; do
      t=$(best_of "${envs[@]}" "$build/paulistrings" kicked-ising --steps 20 --theta-h 2pi/16 --threads "$threads" -q)
      echo "kicked_ising_20_steps $policy threads=$threads $load ${t}s"
      ns=$("${bench_envs[@]}" "$build/paulistrings-bench" --terms 1000000 --threads "$threads" \
        --cells rotation_zz --repeat "$repeat" | awk '$1 == "rotation_zz" {print $4}')
      echo "rotation_zz_1e6 $policy threads=$threads $load ${ns}ns/term"
    done
  done
  stop_load
done
