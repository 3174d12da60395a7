#!/usr/bin/env bash
# Builds the CUDA engine on the GPU machine and runs its tests and benchmarks in one device-tool call,
# writing logs under $OUT (or ./gpu-out).
#
# usage: scripts/gpu_device.sh MODE[,MODE...]   (default: tests,cells)
#   tests     — the GPU tests (GpuEngine*: 300 seeded circuits against the reference engine, large sums
#               against the CPU engine) and the rest of the unit suite on this machine
#   sanitize  — compute-sanitizer memcheck and racecheck on a small subset of the GPU tests
#   cells     — paulistrings-gpu-bench: cells at 10^6, 10^7, 10^8 terms on the GPU and 16 CPU threads
#   quick     — cells at 10^6 and 10^7 only
#   big       — rotation_zz, cnot, gu2q, su4 at 10^8 only
#   kicked    — the 127-qubit kicked-Ising workloads end to end on the GPU
#   workloads — tfim_2d L = 18 (and tfim_chain, heisenberg_chain) on the GPU and on 16 CPU threads
#   ladder    — tfim_2d L = 6, 8, …, 18 (21 steps) on the GPU and on 16 CPU threads; 1 thread and the
#               engine before narrowed keys and blocks (--keys wide --blocks off) at a few sides; the
#               chains on 1 and 16 threads and the GPU; transpiled_brickwork with and without blocks
#               on 1 and 16 threads, and on the GPU (ladder.txt)
#   grow      — the growth run to 2^30 ≈ 1.07·10^9 terms at W = 2
#   python    — the Python package's GPU tests (python/tests/test_gpu.py) on this machine's python3;
#               PYTHON_K=EXPR selects tests (pytest -k); PYTHON_FIRST=EXPR runs the tests matching pytest -k EXPR alone first (under gdb if present)
#   partition — GPU partitions: their tests (PartitionGpu*: partitions on device r mod the device count,
#               ranks with one device each) and paulistrings-partition-bench with every partition on a
#               GPU, in-process P = 1, 2, 4 and mpirun -np 2 (host-staged; with 2+ GPUs also over NCCL);
#               PARTITION_TERMS sets the cells' m (default 4·10^6); PARTITION_MEMCHECK=0 skips memcheck
#               (PARTITION_MEMCHECK_FILTER: the tests it runs),
#               PARTITION_TESTS=0 the tests; PARTITION_PROFILE=1 reruns the in-process cells with
#               PAULISTRINGS_GPU_PROFILE=1 (each device sum's phase times, partition_profile.txt);
#               PARTITION_BENCH=nccl runs only the NCCL bench, =inprocess only the in-process one, =none none;
#               PARTITION_ROUTE_AB=1 first compares the remote-layer plans, alternating: the default plans
#               (permutations appended, general tables merged: GPU partitions route orbits only when asked)
#               and every routable general table routed (PAULISTRINGS_ROUTE_ORBITS_FROM=0): in-process
#               cells PARTITION_ROUTE_AB_CELLS (su4,gu2q,cnot), PARTITION_ROUTE_AB_ROUNDS rounds (2) of
#               PARTITION_AB_REPEAT runs a cell (5; median reported), the plans PARTITION_ROUTE_AB_PLANS
#               (\"default route_all\") (partition_route_ab.txt)
#   cpu_partition — partitions on this machine's CPU cores (the 16-core partition runs): in-process P = 1,
#               2, 4 and mpirun -np 2, 4 (each rank bound to cores/np cores), kicked Ising random vs
#               cut rows and the cells at CPU_PARTITION_TERMS terms (default 4·10^6) on CPU_PARTITION_CORES
#               cores (default all)
#   route_ab  — CPU partitions' remote general layers with orbit routing (PartitionOptions::route_orbits_from
#               default) and without (max), alternating, ROUTE_AB_ROUNDS rounds (2): in-process P = 1, 2, 4 on
#               every core and mpirun -np 2 (half the cores each), cells ROUTE_AB_CELLS (su4,gu2q) at
#               ROUTE_AB_TERMS terms (2·10^6), 3 runs a cell (route_ab.txt)
#   receive_ab — mpirun -np 2 (half the cores each) CPU partitions receiving into kept buffers (ByteBuffer)
#               and into a fresh vector per exchange (PAULISTRINGS_BENCH_FRESH_RECEIVE=1), alternating,
#               RECEIVE_AB_ROUNDS rounds (3), cells RECEIVE_AB_CELLS (su4,rotation_zz) at ROUTE_AB_TERMS terms
#               (receive_ab.txt)
#   oom       — out of device memory: the fault-injection tests (GpuOutOfMemory*, AllocationFaults*), one of
#               them under compute-sanitizer memcheck, Python's test_memory.py, and the repro
#               scripts/repro/kicked_ising_w17_grows_past_gpu_memory.json (or OOM_REPRO) through the
#               command: plain (expected: exit 1, one line) and under --memory-limit OOM_LIMIT (default 60G of
#               device memory; expected: completes with its cuts reported) (oom.txt)
#   host_oom  — the out-of-memory repro (OOM_REPRO) on the host's CPU, every thread, the default host guard
#               (expected: exit 1 with the guard's one line, never a signal), cut at HOST_OOM_TIMEOUT (200 s)
#               (host_oom.txt)
#   load      — scripts/bench_under_load.sh on the host's cores: the kicked Ising and a 10^6-term cell on 1
#               and every thread, alone and beside 1 and then half the cores' worth of busy loops (load.txt)
#   guard     — where the Python host memory guard misfires: the failing test_memory.py call in plain
#               Python and under pytest, with and without OMP_WAIT_POLICY in the environment (guard.txt)
#   probe     — variants of a crashing Python case in subprocesses with a SIGSEGV backtrace (scripts/probe)
#   profile   — where the time of tfim_2d L = 18 and the kicked Ising goes, per phase of a layer
#               (PAULISTRINGS_GPU_PROFILE=1: a synchronization after every phase)
#   blocks_ab — the GPU engine's blocks of rotations on and off (--blocks on|off, one binary), unprofiled,
#               alternating, BLOCKS_AB_ROUNDS rounds (2): tfim_2d L = 18 (every host thread), the chains,
#               and the kicked Ising 5 and 20 steps (blocks_ab.txt)
#   ab        — before/after in one call: the tree in build-base-src/ (an earlier commit's source, made with
#               `git archive REF | tar -x -C build-base-src` and carried by the device tool) built into
#               build-base, then AB_ROUNDS rounds (2), base and current alternating: GPU cells at 10^6 and
#               10^7 (rotation_zz, cnot, gu2q, su4, depolarize; 16 CPU threads beside them) and at 10^8,
#               the workloads on the GPU and on 16 threads, the kicked Ising on the GPU, and the CPU cells at
#               10^6 on 1 and 16 threads (ab.txt); AB_PARTS picks among cells,workloads,cpu (default all)
#               and host (the host's CPU alone: the chains on 1 thread, tfim_2d L = 18 on 16, and
#               PauliPropagation.jl's sweep on 1; with CPU_ONLY=1 both trees build without CUDA)
#   sweep     — parameter sweeps on this machine's cores (paulistrings-sweep-bench): PauliPropagation.jl's
#               sweep (20 steps, 20 angles, 10^-4, weight ≤ 8) as one sweep and as 20 runs, and the θh sweep
#               from 0 to π/2 (K = 20, 20 steps, 2^-14) against its separate runs, on SWEEP_THREADS threads
#               (default: all cores), with a gradient column; SWEEP_TIMEOUT (240 s) caps each command (sweep.txt)
#   threads   — small layers against threads (a layer takes one thread per PropagateOptions::parallel_threshold
#               weighted terms, engine/options.h): PauliPropagation.jl's sweep (layers of ≤ 74,000 rows) and its 20 runs
#               on 1, 4 and every core under the thresholds THREADS_THRESHOLDS; the kicked Ising from the
#               command (20 steps, 10^-4, weight ≤ 8) on 1, 4 and every core; the CPU cells at 4096, 16384
#               and 65536 terms on 1, 4 and every core at the default grain 4096 and THREADS_CELL_GRAINS (16384 0)
#               (threads.txt)
#   column_phase — the CPU engine with its column phase (docs/design.md §7.5) and without
#               (--column-phase off), alternating, COLUMN_PHASE_ROUNDS rounds (3): the chains on 1 thread,
#               tfim_2d L = 6 on 1 thread and L = 18 on every core, the 5-step kicked Ising through the
#               command on 1 thread (column_phase.txt)
#   kicked_cpu — the 127-qubit kicked Ising through the command on the host's CPU, end to end (the
#               results' wall_time_s: propagation, export, read-out): 5 steps at 2^-12 on 1 and every thread
#               (KICKED_REPEAT runs each, 3), 20 steps at 2^-14 on every thread (2 runs) and on one (once); with
#               build-base-src/ present the same runs (but the one-thread 20 steps) of that tree's command
#               too, base and current alternating (kicked_cpu.txt)
#   spin      — OpenMP waiting on every core: passive (what the command and Python choose) against
#               GOMP_SPINCOUNT=N (SPIN_COUNTS, default "passive 1000 10000 100000 300000"), SPIN_ROUNDS rounds
#               (2): PauliPropagation.jl's sweep, the 5-step kicked Ising (command), tfim_2d L = 18 and the
#               20-step kicked Ising at 2^-14, alone; the first two again beside SPIN_BUSY (8) busy loops
#               (spin.txt)
#   build     — every target the other modes use (a first call that later, warm calls reuse)
#   base_bg   — with ab to come in a later call: starts the build of build-base-src/ in the background
#               (setsid: it outlives this call while the machine stays warm); ab waits for it
# GPU_DEBUG_INFO=1 builds with -g on top of Release (for backtraces). CPU_ONLY=1 builds without CUDA.
set -uo pipefail
cd "$(dirname "$0")/.."
modes="${1:-tests,cells}"
out="${OUT:-gpu-out}"
mkdir -p "$out"
has() { [[ ",$modes," == *",$1,"* ]]; }
# Progress with times, in a file that comes back even when the call runs out of time.
note() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$out/progress.txt"; }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (working tree may differ)"
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)|Socket|NUMA node\(s\)"
  nvcc --version | tail -1; g++ --version | head -1; cmake --version | head -1
} > "$out/machine.txt" 2>&1
export PATH=/usr/local/cuda/bin:$PATH
targets=()
(has cells || has quick || has big || has kicked || has grow || has profile || has blocks_ab || has workloads || has ab ||
  has ladder) &&
  targets+=(paulistrings-gpu-bench paulistrings-workloads)
has ab && targets+=(paulistrings-bench paulistrings-sweep-bench)
(has sweep || has build) && targets+=(paulistrings-sweep-bench)
has threads && targets+=(paulistrings-sweep-bench paulistrings-bench paulistrings-cli)
has load && targets+=(paulistrings-bench paulistrings-cli)
has host_oom && targets+=(paulistrings-cli)
(has tests || has sanitize || (has partition && [[ ${PARTITION_TESTS:-1} != 0 ]])) && targets+=(paulistrings-tests paulistrings-cli)
has oom && targets+=(paulistrings-tests paulistrings-cli)
has build && targets+=(paulistrings-tests paulistrings-cli paulistrings-gpu-bench paulistrings-workloads paulistrings-bench)
has kicked_cpu && targets+=(paulistrings-cli)
has spin && targets+=(paulistrings-cli paulistrings-workloads paulistrings-sweep-bench)
has column_phase && targets+=(paulistrings-workloads paulistrings-cli)
(has partition || has cpu_partition || has route_ab || has receive_ab) && targets+=(paulistrings-partition-bench)
python=(-DPAULISTRINGS_BUILD_PYTHON=OFF)
if has python || has probe || has oom || has guard || has build; then
  # The GPU machine's python3 (a virtual environment) carries pybind11 as a package, not as a system CMake
  # package: point CMake at that interpreter and at its pybind11.
  python=(-DPAULISTRINGS_BUILD_PYTHON=ON -DPython3_EXECUTABLE="$(command -v python3)")
  pybind11_dir=$(python3 -c "import pybind11; print(pybind11.get_cmake_dir())" 2>/dev/null) &&
    python+=(-Dpybind11_DIR="$pybind11_dir")
  targets+=(paulistrings-python paulistrings-cli)
fi
# GPU_DEBUG_INFO=1: -g on top of Release (native backtraces under gdb; same optimisation).
debug=()
[[ ${GPU_DEBUG_INFO:-0} != 0 ]] && debug=(-DCMAKE_CXX_FLAGS=-g -DCMAKE_CUDA_FLAGS=-g)
start=$(date +%s)
# Without CUDA there is no GPU bench to build.
if [[ ${CPU_ONLY:-0} != 0 ]]; then
  kept=()
  for t in "${targets[@]}"; do [[ $t == paulistrings-gpu-bench ]] || kept+=("$t"); done
  targets=("${kept[@]}")
fi
# Position-independent code always (the Python module needs it): ab's two trees are built alike whichever
# modes a call has.
# CPU_ONLY=1: no CUDA (the modes that run only on the host's cores, threads and sweep, build in a fraction).
cuda=ON
[[ ${CPU_ONLY:-0} != 0 ]] && cuda=OFF
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAULISTRINGS_CUDA=$cuda -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  "${python[@]}" "${debug[@]}" \
  > "$out/build.log" 2>&1 &&
  cmake --build build-gpu --target "${targets[@]}" >> "$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log"; exit 1; }
note "build: $(( $(date +%s) - start )) s"
# The build's longest edges (seconds, from ninja's log): what a cold build waits for.
awk 'NR > 1 { printf "%7.1f %s\n", ($2 - $1) / 1000, $4 }' build-gpu/.ninja_log 2>/dev/null | sort -rn | head -12 \
  > "$out/build_times.txt"
export OMP_PROC_BIND=close OMP_PLACES=cores
# The tree in build-base-src/ (ab's "before") built into build-base/.
build_base() {
  local base_targets=(paulistrings-workloads paulistrings-bench paulistrings-sweep-bench) base_cuda=ON
  if [[ ${CPU_ONLY:-0} != 0 ]]; then base_cuda=OFF; else base_targets+=(paulistrings-gpu-bench); fi
  [[ ",${modes:-}," == *",kicked_cpu,"* ]] && base_targets+=(paulistrings-cli)  # (base_bg: modes unset)
  cmake -S build-base-src -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAULISTRINGS_CUDA=$base_cuda \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DPAULISTRINGS_BUILD_PYTHON=OFF -DPAULISTRINGS_BUILD_TESTS=OFF &&
    cmake --build build-base --target "${base_targets[@]}"
}
if has base_bg && [[ -d build-base-src ]]; then
  touch build-base.running
  export -f build_base
  setsid bash -c 'start=$(date +%s); build_base > build-base.log 2>&1; echo "exit $? after $(( $(date +%s) - start )) s" >> build-base.log; rm -f build-base.running' \
    < /dev/null > /dev/null 2>&1 &
  note "base_bg: base build started in the background"
fi

if has tests; then
  # Shards at once (GPU_TEST_SHARDS, 4): the reference engine the GPU is checked against runs on the CPU,
  # one core each. GPU_TEST_FILTER (default *Gpu*) selects the tests.
  shards=${GPU_TEST_SHARDS:-4}
  for shard in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard build-gpu/paulistrings-tests \
      --gtest_filter="${GPU_TEST_FILTER:-*Gpu*}" --gtest_brief=1 > "$out/gpu_tests_$shard.txt" 2>&1 &
  done
  wait
  grep -h -E "^\[  (FAILED|PASSED|SKIPPED) |tests? from .* ran" "$out"/gpu_tests_*.txt | tee "$out/gpu_tests.txt"
fi
if has partition; then
  gpus=$(nvidia-smi -L | wc -l)
  # With `tests` the GPU-partition tests already ran (*Gpu* matches PartitionGpu*).
  if [[ ${PARTITION_TESTS:-1} != 0 ]] && ! has tests; then
    note "partition tests"
    timeout 300 build-gpu/paulistrings-tests --gtest_filter='*PartitionGpu*:PartitionedDistributed.*' --gtest_brief=1 \
      > "$out/partition_tests.txt" 2>&1
    note "partition tests: exit $?"
    tail -15 "$out/partition_tests.txt"
  fi
  if [[ ${PARTITION_TESTS:-1} != 0 && ${PARTITION_MEMCHECK:-1} != 0 ]]; then
    timeout "${PARTITION_MEMCHECK_TIMEOUT:-600}" compute-sanitizer --tool memcheck --error-exitcode 3 build-gpu/paulistrings-tests \
      --gtest_filter="${PARTITION_MEMCHECK_FILTER:-PartitionGpu.RanksWithOneDeviceEach*:PartitionGpu.RealW1Coeff*:PartitionGpu.RemoteLayersFused*:PartitionGpu.OrbitsRouted*:PartitionGpu/EngineEquivalence.*/1*}" --gtest_brief=1 \
      2>&1 | tail -6 | tee -a "$out/partition_tests.txt"
  fi
  terms=${PARTITION_TERMS:-4000000}
  if [[ ${PARTITION_ROUTE_AB:-0} != 0 ]]; then
    note "partition route A/B"
    for round in $(seq "${PARTITION_ROUTE_AB_ROUNDS:-2}"); do
      for plan in ${PARTITION_ROUTE_AB_PLANS:-default route_all}; do
        plan_env=()
        [[ $plan == route_all ]] && plan_env=(PAULISTRINGS_ROUTE_ORBITS_FROM=0)
        echo "# round $round, plans: $plan ${plan_env[*]}" >> "$out/partition_route_ab.txt"
        env "${plan_env[@]}" PAULISTRINGS_BENCH_CELLS="${PARTITION_ROUTE_AB_CELLS:-su4,gu2q,cnot}" \
          timeout 200 build-gpu/paulistrings-partition-bench 0 "$terms" 0 "$gpus" 0 "${PARTITION_AB_REPEAT:-5}" \
          >> "$out/partition_route_ab.txt" 2>&1
        note "route A/B round $round $plan done"
      done
    done
  fi
  note "partition bench"
  : > "$out/partition_bench.txt"
  if [[ ${PARTITION_BENCH:-all} != nccl && ${PARTITION_BENCH:-all} != none ]]; then  # nccl: only the NCCL run below
    echo "# in-process, $gpus GPU(s): partition r on device r mod $gpus" | tee -a "$out/partition_bench.txt"
    build-gpu/paulistrings-partition-bench 5 "$terms" 0 "$gpus" 2>&1 | tee -a "$out/partition_bench.txt"
  fi
  if [[ ${PARTITION_PROFILE:-0} != 0 ]]; then  # the same run, a synchronization after every phase
    note "partition profile"
    PAULISTRINGS_GPU_PROFILE=1 build-gpu/paulistrings-partition-bench 0 "$terms" 0 "$gpus" \
      > "$out/partition_profile.txt" 2>&1
  fi
  # MPI ranks unbound: OMP_PROC_BIND (exported above) would pin both ranks' main threads to core 0.
  if command -v mpirun > /dev/null && [[ ${PARTITION_BENCH:-all} == all ]]; then
    echo "# mpirun -np 2, rank r on device r mod $gpus (host-staged exchange)" | tee -a "$out/partition_bench.txt"
    env -u OMP_PROC_BIND -u OMP_PLACES mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to none \
      build-gpu/paulistrings-partition-bench 5 "$terms" 8 "$gpus" 2>&1 | tee -a "$out/partition_bench.txt"
  fi
  if command -v mpirun > /dev/null && [[ $gpus -ge 2 && ${PARTITION_BENCH:-all} != inprocess && ${PARTITION_BENCH:-all} != none ]]; then
    note "NCCL bench"
    echo "# mpirun -np 2, one GPU per rank, NCCL exchange" | tee -a "$out/partition_bench.txt"
    env -u OMP_PROC_BIND -u OMP_PLACES timeout 180 mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to none \
      build-gpu/paulistrings-partition-bench 5 "$terms" 8 "$gpus" 1 2>&1 | tee -a "$out/partition_bench.txt"
  fi
  note "partition done"
fi
if has oom; then
  note "oom"
  repro=${OOM_REPRO:-scripts/repro/kicked_ising_w17_grows_past_gpu_memory.json}
  {
    echo "# host memory as the guard reads it"
    grep -E "MemTotal|MemAvailable" /proc/meminfo
    cat /proc/self/cgroup
    grep cgroup /proc/self/mountinfo
    build-gpu/paulistrings-tests --gtest_filter='MemoryGuard.*:HostMemory*:MemoryBudget.*' --gtest_brief=1 2>&1 | tail -3
    echo "# a small host run with the default guard (expected: exit 0)"
    build-gpu/paulistrings kicked-ising --steps 2 --theta-h 0.7 -q --threads 4 > /dev/null; echo "exit $?"
    # One test at a time under its own limit (OOM_TEST_TIMEOUT, 120 s), with the GPU's utilization when
    # one runs out of it (busy: a kernel that does not end; idle: the host).
    build-gpu/paulistrings-tests --gtest_filter='AllocationFaults.*:GpuOutOfMemoryRun.*' --gtest_brief=1 2>&1 | tail -3
    for t in $(build-gpu/paulistrings-tests --gtest_list_tests --gtest_filter='GpuOutOfMemory.*' | awk '/^ /{print s $1} /^[^ ]/{s=$1}'); do
      started=$(date +%s)
      build-gpu/paulistrings-tests --gtest_filter="$t" > "$out/oom_test.txt" 2>&1 &
      pid=$!
      while kill -0 $pid 2> /dev/null && (( $(date +%s) - started < ${OOM_TEST_TIMEOUT:-120} )); do sleep 1; done
      if kill -0 $pid 2> /dev/null; then
        echo "$t: still running after $(( $(date +%s) - started )) s; GPU: $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader)"
        kill -9 $pid
      fi
      wait $pid
      echo "$t: exit $? after $(( $(date +%s) - started )) s"
      grep -E "^\[ faults|Failure|FAILED|error" "$out/oom_test.txt" | head -12
    done
    echo "# memcheck"
    timeout 400 compute-sanitizer --tool memcheck --error-exitcode 3 build-gpu/paulistrings-tests \
      --gtest_filter='GpuOutOfMemory.TheHostEntryPointNamesTheLayerAndLeavesTheHostSum' --gtest_brief=1 2>&1 | tail -8
    echo "# python test_memory.py"
    PYTHONPATH=build-gpu/python OMP_WAIT_POLICY=passive timeout 300 python3 -m pytest -q -rA -p no:cacheprovider \
      python/tests/test_memory.py > "$out/oom_python.txt" 2>&1
    grep -E "^E  |^(PASSED|FAILED) |passed|failed" "$out/oom_python.txt" | head -16
    echo "# the guard as Python reads it: MemAvailable in the process, then a CPU run under the default guard"
    PYTHONPATH=build-gpu/python timeout 60 python3 -c "
import paulistrings as p
print([l for l in open('/proc/meminfo') if l.startswith('MemAvailable')])
c = p.Circuit(4); c.rx(0.7, 0)
try:
    print(len(p.PauliSum.from_strings({'ZZZZ': 1.0}, num_qubits=4).propagate(c, threads=1)), 'terms: no misfire')
except MemoryError as e:
    print('misfire:', e)
print([l for l in open('/proc/meminfo') if l.startswith('MemAvailable')])
" 2>&1 | tail -6
    if [[ -f $repro ]]; then
      echo "# repro, plain (expected: exit 1 and one line)"
      /usr/bin/time -f "%e s wall, %M KiB peak host" timeout 300 build-gpu/paulistrings run "$repro" --device gpu -q \
        --out "$out/oom_repro.json"
      echo "exit $?"
      echo "# repro under --memory-limit ${OOM_LIMIT:-60G} (expected: completes, cuts reported)"
      /usr/bin/time -f "%e s wall, %M KiB peak host" timeout 400 build-gpu/paulistrings run "$repro" --device gpu -q \
        --memory-limit "${OOM_LIMIT:-60G}" --out "$out/oom_repro_limited.json"
      echo "exit $?"
    else
      echo "# no repro file at $repro"
    fi
  } > "$out/oom.txt" 2>&1
  note "oom done"
fi
if has cpu_partition; then
  note "cpu_partition"
  cores=${CPU_PARTITION_CORES:-$(nproc)}
  terms=${CPU_PARTITION_TERMS:-4000000}
  # In-process partitions pin themselves to contiguous core blocks (the bench); OpenMP must not place
  # their teams itself.
  echo "# in-process, $cores threads" | tee "$out/cpu_partition.txt"
  env -u OMP_PROC_BIND -u OMP_PLACES taskset -c "0-$(( cores - 1 ))" \
    build-gpu/paulistrings-partition-bench 5 "$terms" "$cores" 2>&1 |
    tee -a "$out/cpu_partition.txt"
  if command -v mpirun > /dev/null; then
    for np in 2 4; do  # np 1 is the in-process P = 1 above
      per=$(( cores / np ))
      echo "# mpirun -np $np, $per cores and threads per rank" | tee -a "$out/cpu_partition.txt"
      env -u OMP_PROC_BIND -u OMP_PLACES mpirun --allow-run-as-root --oversubscribe -np "$np" \
        --map-by "slot:PE=$per" --bind-to core \
        build-gpu/paulistrings-partition-bench 5 "$terms" "$per" 2>&1 | tee -a "$out/cpu_partition.txt"
    done
  fi
fi
if has route_ab; then
  note "route_ab"
  cores=$(nproc)
  terms=${ROUTE_AB_TERMS:-2000000}
  for round in $(seq "${ROUTE_AB_ROUNDS:-2}"); do
    for from in max ""; do
      echo "# round $round, PAULISTRINGS_ROUTE_ORBITS_FROM=${from:-(default)}, in-process, $cores threads" >> "$out/route_ab.txt"
      env -u OMP_PROC_BIND -u OMP_PLACES PAULISTRINGS_ROUTE_ORBITS_FROM="$from" \
        PAULISTRINGS_BENCH_CELLS="${ROUTE_AB_CELLS:-su4,gu2q}" timeout 150 \
        build-gpu/paulistrings-partition-bench 0 "$terms" "$cores" 0 0 3 >> "$out/route_ab.txt" 2>&1
      if command -v mpirun > /dev/null; then
        per=$(( cores / 2 ))
        echo "# round $round, PAULISTRINGS_ROUTE_ORBITS_FROM=${from:-(default)}, mpirun -np 2, $per cores each" >> "$out/route_ab.txt"
        env -u OMP_PROC_BIND -u OMP_PLACES timeout 100 mpirun --allow-run-as-root --oversubscribe -np 2 \
          --map-by "slot:PE=$per" --bind-to core -x PAULISTRINGS_ROUTE_ORBITS_FROM="$from" \
          -x PAULISTRINGS_BENCH_CELLS="${ROUTE_AB_CELLS:-su4,gu2q}" \
          build-gpu/paulistrings-partition-bench 0 "$terms" "$per" 0 0 3 >> "$out/route_ab.txt" 2>&1
      fi
      note "route_ab round $round ${from:-default} done"
    done
  done
fi
if has receive_ab && command -v mpirun > /dev/null; then
  note "receive_ab"
  per=$(( $(nproc) / 2 ))
  for round in $(seq "${RECEIVE_AB_ROUNDS:-3}"); do
    for fresh in 1 0; do
      echo "# round $round, PAULISTRINGS_BENCH_FRESH_RECEIVE=$fresh, mpirun -np 2, $per cores each" >> "$out/receive_ab.txt"
      env -u OMP_PROC_BIND -u OMP_PLACES timeout 100 mpirun --allow-run-as-root --oversubscribe -np 2 \
        --map-by "slot:PE=$per" --bind-to core -x PAULISTRINGS_BENCH_FRESH_RECEIVE="$fresh" \
        -x PAULISTRINGS_BENCH_CELLS="${RECEIVE_AB_CELLS:-su4,rotation_zz}" \
        build-gpu/paulistrings-partition-bench 0 "${ROUTE_AB_TERMS:-2000000}" "$per" 0 0 3 >> "$out/receive_ab.txt" 2>&1
      note "receive_ab round $round fresh=$fresh done"
    done
  done
fi
if has blocks_ab; then
  for round in $(seq "${BLOCKS_AB_ROUNDS:-2}"); do
    order="on off"
    (( round % 2 == 0 )) && order="off on"  # alternating which goes first
    for b in $order; do
      echo "## round $round: blocks $b"
      timeout 120 build-gpu/paulistrings-workloads tfim_2d --side 18 --device 0 --threads "$(nproc)" --blocks "$b"
      for w in tfim_chain heisenberg_chain; do
        timeout 60 build-gpu/paulistrings-workloads "$w" --device 0 --threads "$(nproc)" --blocks "$b"
      done
      timeout 120 build-gpu/paulistrings-gpu-bench --cells none --kicked --blocks "$b"
      note "blocks_ab round $round $b done"
    done
  done 2>&1 | tee "$out/blocks_ab.txt"
fi
if has profile; then
  {
    PAULISTRINGS_GPU_PROFILE=1 build-gpu/paulistrings-workloads tfim_2d --side 18 --device 0
    PAULISTRINGS_GPU_PROFILE=1 build-gpu/paulistrings-gpu-bench --cells none --kicked
  } 2>&1 | tee "$out/profile.txt"
fi
if has sanitize; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 3 build-gpu/paulistrings-tests \
      --gtest_filter='GpuEngine.EveryChannelKind*:GpuEngine.TopnTie*:GpuEngine.Resident*:Gpu/EngineEquivalence.SameResultAsTheBaseline/1*' \
      --gtest_brief=1 2>&1 | tail -15 | tee "$out/sanitize_$tool.txt"
  done
fi
if has cells; then
  build-gpu/paulistrings-gpu-bench --terms 1e6,1e7,1e8 --cells rotation_zz,cnot,gu2q,su4 --repeat 3 --cpu-threads 16 2>&1 | tee "$out/cells.txt"
  build-gpu/paulistrings-gpu-bench --terms 1e6,1e7 --cells depolarize --repeat 3 --cpu-threads 16 2>&1 | grep -v "^#" | tee -a "$out/cells.txt"
fi
if has quick; then
  build-gpu/paulistrings-gpu-bench --terms 1e6,1e7 --repeat 3 --cpu-threads 16 2>&1 | tee "$out/quick.txt"
fi
if has big; then
  build-gpu/paulistrings-gpu-bench --terms 1e8 --cells rotation_zz,cnot,gu2q,su4 --repeat 2 --cpu-threads 16 2>&1 |
    tee "$out/big.txt"
fi
if has kicked; then
  build-gpu/paulistrings-gpu-bench --cells none --kicked 2>&1 | tee "$out/kicked.txt"
fi
if has workloads; then
  w=build-gpu/paulistrings-workloads
  {
    $w tfim_2d --side 18 --device 0
    $w tfim_chain --device 0
    $w heisenberg_chain --device 0
    $w tfim_2d --side 18 --threads 16
  } 2>&1 | tee "$out/workloads.txt"
fi
if has ladder; then
  # Every side on the GPU and on 16 threads; the wide keys without blocks (the engine before narrowed keys
  # and blocks) and 1 thread at L = 6, 10, 18 (LADDER_SIDES_1 / LADDER_SIDES_WIDE to change).
  w=build-gpu/paulistrings-workloads
  {
    for side in 6 8 10 12 14 16 18; do
      $w tfim_2d --side "$side" --device 0
      $w tfim_2d --side "$side" --threads 16
    done
    for side in ${LADDER_SIDES_WIDE:-6 10 18}; do
      $w tfim_2d --side "$side" --threads 16 --keys wide --blocks off
    done
    for side in ${LADDER_SIDES_1:-6 10 18}; do
      $w tfim_2d --side "$side" --threads 1
      $w tfim_2d --side "$side" --threads 1 --keys wide --blocks off
    done
    for chain in tfim_chain heisenberg_chain; do
      $w "$chain" --threads 1
      $w "$chain" --threads 1 --blocks off
      $w "$chain" --threads 16
    done
    $w tfim_chain --device 0
    $w heisenberg_chain --device 0
    for threads in 1 16; do
      for blocks in on off; do $w transpiled_brickwork --threads "$threads" --blocks "$blocks"; done
    done
    $w transpiled_brickwork --device 0
  } 2>&1 | tee "$out/ladder.txt"
  note "ladder done"
fi
if has ab; then
  note "ab: base build"
  if [[ ! -d build-base-src ]]; then
    echo "ab: no build-base-src/ (carry an earlier commit's source there)" | tee "$out/ab.txt"
  else
    start=$(date +%s)
    # A background build started by base_bg in an earlier call: wait for it, then finish (a no-op if done).
    while [[ -f build-base.running ]]; do sleep 5; done
    build_base >> "$out/build_base.log" 2>&1 || tail -20 "$out/build_base.log"
    [[ -f build-base.log ]] && cp build-base.log "$out/build_base_bg.log"
    note "ab: base build $(( $(date +%s) - start )) s"
    part() { [[ ",${AB_PARTS:-cells,workloads,cpu}," == *",$1,"* ]]; }
    for round in $(seq "${AB_ROUNDS:-2}"); do
      trees="base gpu"
      (( round % 2 == 0 )) && trees="gpu base"  # alternating which goes first
      for tree in $trees; do
        b=build-$tree
        note "ab: round $round $tree"
        {
          echo "## round $round: $tree"
          if part cells; then
            $b/paulistrings-gpu-bench --terms 1e6,1e7 --cells rotation_zz,cnot,gu2q,su4,depolarize --repeat 3 \
              --cpu-threads 16
            $b/paulistrings-gpu-bench --terms 1e8 --cells rotation_zz,cnot,gu2q,su4 --repeat 2
          fi
          if part workloads; then
            $b/paulistrings-gpu-bench --cells none --kicked
            for w in "tfim_2d --side 18" tfim_chain heisenberg_chain; do
              $b/paulistrings-workloads $w --device 0
            done
            $b/paulistrings-workloads tfim_2d --side 18 --threads 16
            $b/paulistrings-workloads tfim_chain --threads 1
          fi
          part cpu && $b/paulistrings-bench --terms 1000000 --threads 1,16 --repeat 3
          if part host; then
            export OMP_WAIT_POLICY=passive
            $b/paulistrings-workloads tfim_chain --threads 1
            $b/paulistrings-workloads heisenberg_chain --threads 1
            $b/paulistrings-workloads tfim_2d --side 18 --threads 16
            $b/paulistrings-sweep-bench --steps 20 --columns 20 --coeff 1e-4 --weight 8 --separate off \
              --threads 1 | head -1
            unset OMP_WAIT_POLICY
          fi
        } >> "$out/ab.txt" 2>&1
      done
    done
  fi
fi
if has probe; then
  # Variants of the crashing Python GPU-partition case, each in a subprocess with a SIGSEGV backtrace
  # preload (scripts/probe): which option makes it crash, and where.
  note "probe"
  gcc -shared -fPIC -O1 -o build-gpu/segv_backtrace.so scripts/probe/segv_backtrace.c -ldl &&
    PYTHONPATH=build-gpu/python OMP_WAIT_POLICY=passive timeout 400 \
      python3 scripts/probe/probe.py "$PWD/build-gpu/segv_backtrace.so" > "$out/probe.txt" 2>&1
  note "probe: exit $?"
  # How the module was linked (which C++ runtime it carries).
  so=$(cd build-gpu && ls python/paulistrings/_core*.so)
  {
    echo "# ldd"; ldd "build-gpu/$so"
    echo "# libstdc++ symbols defined in the module"; nm -C --defined-only "build-gpu/$so" | grep -c -E "std::locale::|std::ios_base::|codecvt"
    echo "# link command"; ninja -C build-gpu -t commands "$so" | tail -1
  } > "$out/linkage.txt" 2>&1
fi
if has python; then
  # PYTHON_FIRST=EXPR: the tests matching the pytest -k expression EXPR alone first, under gdb when
  # the machine has it (a native backtrace of every thread if it crashes), then the whole file.
  if [[ -n ${PYTHON_FIRST:-} ]]; then
    note "python first: $PYTHON_FIRST"
    first=(python3 -X faulthandler -m pytest -v -p no:cacheprovider python/tests/test_gpu.py -k "$PYTHON_FIRST")
    command -v gdb > /dev/null &&
      first=(gdb -q -batch -ex run -ex "info threads" -ex "thread apply all bt 25" --args "${first[@]}")
    PYTHONPATH=build-gpu/python PAULISTRINGS_CLI=build-gpu/paulistrings OMP_WAIT_POLICY=passive \
      timeout 240 "${first[@]}" > "$out/python_first.txt" 2>&1
    note "python first: exit $?"
  fi
  note "python"
  PYTHONPATH=build-gpu/python PAULISTRINGS_CLI=build-gpu/paulistrings OMP_WAIT_POLICY=passive timeout 400 \
    python3 -X faulthandler -m pytest -v -p no:cacheprovider python/tests/test_gpu.py ${PYTHON_K:+-k "$PYTHON_K"} \
    > "$out/python_gpu.txt" 2>&1
  grep -E "FAILED|ERROR|Fatal|passed|failed" "$out/python_gpu.txt" | tail -30
fi
if has host_oom; then
  note "host_oom"
  repro=${OOM_REPRO:-scripts/repro/kicked_ising_w17_grows_past_gpu_memory.json}
  {
    echo "# paulistrings run $repro --threads $(nproc) (the default host guard), at most ${HOST_OOM_TIMEOUT:-200} s"
    grep -E "^(MemTotal|MemAvailable)" /proc/meminfo
    # -k: the command takes SIGTERM as a request to stop after its layer, which a large layer makes long.
    /usr/bin/time -f "%e s wall, %M KiB peak host" timeout -k 5 "${HOST_OOM_TIMEOUT:-200}" build-gpu/paulistrings \
      run "$repro" --threads "$(nproc)" -q --trace host_oom_trace.csv > /dev/null 2> host_oom.err
    echo "exit $?"
    tail -c 1500 host_oom.err
    echo "# the trace's last layers"; tail -3 host_oom_trace.csv
  } > "$out/host_oom.txt" 2>&1
  cat "$out/host_oom.txt"
fi
if has load; then
  note "load"
  for busy in 1 $(( $(nproc) / 2 )); do
    echo "# BUSY=$busy scripts/bench_under_load.sh build-gpu"
    BUSY=$busy REPEAT=3 timeout 250 scripts/bench_under_load.sh build-gpu 2>&1
  done > "$out/load.txt"
  cat "$out/load.txt"
fi
if has guard; then
  note "guard"
  mkdir -p guard_probe
  cat > guard_probe/probe.py <<'PY'
import os, sys
import paulistrings as p
from paulistrings import truncation
def run(tag):
    c = p.Circuit(10)
    for r in range(3):
        for q in range(10):
            c.rx(0.7, q)
        for q in range(r % 2, 9, 2):
            c.pauli_rotation("ZZ", [q, q + 1], 0.9)
    meminfo = [l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemAvailable")]
    print(tag, "the guard reads", p._core._host_memory(), flush=True)
    try:
        n = len(p.PauliSum.from_strings({"Z" * 10: 1.0}, num_qubits=10).propagate(c, truncation.coeff(1e-9), threads=1))
        print(tag, "MemAvailable kB", meminfo, "->", n, "terms: no misfire", flush=True)
        return True
    except MemoryError as e:
        print(tag, "MemAvailable kB", meminfo, "-> misfire:", e, flush=True)
        return False
if __name__ == "__main__":
    run("python " + " ".join(sys.argv[1:]))
PY
  cat > guard_probe/test_probe.py <<'PY'
import probe
def test_probe():
    assert probe.run("pytest")
PY
  {
    echo "# python3 $(python3 --version 2>&1), pytest $(python3 -m pytest --version 2>&1 | head -1)"
    PYTHONPATH=build-gpu/python timeout 60 python3 guard_probe/probe.py plain
    PYTHONPATH=build-gpu/python OMP_WAIT_POLICY=passive timeout 60 python3 guard_probe/probe.py OMP_WAIT_POLICY=passive
    PYTHONPATH=build-gpu/python:guard_probe timeout 60 python3 -c "import pytest, probe; probe.run('python after import pytest')"
    echo "# pytest on the probe alone, without then with OMP_WAIT_POLICY"
    PYTHONPATH=build-gpu/python:guard_probe timeout 60 python3 -m pytest -q -s -p no:cacheprovider guard_probe/test_probe.py 2>&1 | grep -E "pytest|passed|failed"
    PYTHONPATH=build-gpu/python:guard_probe OMP_WAIT_POLICY=passive timeout 60 python3 -m pytest -q -s -p no:cacheprovider guard_probe/test_probe.py 2>&1 | grep -E "pytest|passed|failed"
    echo "# test_memory.py, without then with OMP_WAIT_POLICY"
    PYTHONPATH=build-gpu/python timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_memory.py 2>&1 | tail -1
    PYTHONPATH=build-gpu/python OMP_WAIT_POLICY=passive timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_memory.py 2>&1 | tail -1
    python3 -c "import sys; print(sys.version)"; env | grep -E "^(LANG|LC_|PYTHON|LD_)" || true
  } > "$out/guard.txt" 2>&1
  cat "$out/guard.txt"
  rm -rf guard_probe
fi
if has column_phase; then
  note "column phase on / off"
  cores=$(nproc)
  {
    for round in $(seq 1 "${COLUMN_PHASE_ROUNDS:-3}"); do
      for phase in on off; do
        for args in "tfim_chain --threads 1" "heisenberg_chain --threads 1" "tfim_2d --side 6 --threads 1" \
                    "tfim_2d --side 18 --threads $cores"; do
          echo "round $round phase $phase: $(OMP_WAIT_POLICY=passive build-gpu/paulistrings-workloads $args \
            --column-phase $phase)"
        done
        OMP_WAIT_POLICY=passive build-gpu/paulistrings kicked-ising --steps 5 --theta-h 5pi/16 \
          --coeff 0.000244140625 --threads 1 --device cpu -q --column-phase $phase --out "$out/kicked.json" &&
          echo "round $round phase $phase: kicked 5 steps $(python3 -c "import json; d = json.load(open('$out/kicked.json'));
print('wall_time_s', d['wall_time_s'], 'value', d['observables']['Z62']['value'], 'column_layers',
      d['observables']['Z62'].get('column_layers'))")"
      done
    done
  } 2>&1 | tee "$out/column_phase.txt"
fi
if has spin; then
  note "spin counts"
  cores=$(nproc)
  # One policy: passive (what the command and Python choose), or GOMP_SPINCOUNT=N with no OMP_WAIT_POLICY.
  policy_env() {
    if [[ $1 == passive ]]; then echo "env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive"
    else echo "env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=$1"; fi
  }
  kicked_wall() {  # kicked_wall POLICY ARGS...: the command's wall_time_s
    local p=$1; shift
    $(policy_env "$p") build-gpu/paulistrings kicked-ising "$@" --device cpu -q --out "$out/spin.json" > /dev/null &&
      python3 -c "import json; print(json.load(open('$out/spin.json'))['wall_time_s'])"
  }
  busy=()
  {
    for load in 0 "${SPIN_BUSY:-8}"; do
      for _ in $(seq "$load"); do (while :; do :; done) & busy+=($!); done
      for round in $(seq 1 "${SPIN_ROUNDS:-2}"); do
        for p in ${SPIN_COUNTS:-passive 1000 10000 100000 300000}; do
          e=$(policy_env "$p")
          echo "busy $load round $round policy $p: sweep $($e build-gpu/paulistrings-sweep-bench --steps 20 --columns 20 \
            --coeff 1e-4 --weight 8 --separate off --threads "$cores" 2>&1 | head -1 | grep -o 'sweep [0-9.]* s')"
          echo "busy $load round $round policy $p: kicked 5 steps, $cores threads $(kicked_wall "$p" --steps 5 \
            --theta-h 5pi/16 --coeff 0.000244140625 --threads "$cores") s"
          if [[ $load == 0 ]]; then
            echo "busy $load round $round policy $p: $($e build-gpu/paulistrings-workloads tfim_2d --side 18 \
              --threads "$cores" 2>&1 | tail -1)"
            echo "busy $load round $round policy $p: kicked 20 steps, $cores threads $(kicked_wall "$p" --steps 20 \
              --theta-h 7pi/32 --coeff 0.00006103515625 --threads "$cores") s"
          fi
        done
      done
      for pid in "${busy[@]}"; do kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null; done
      busy=()
    done
  } 2>&1 | tee "$out/spin.txt"
fi
if has kicked_cpu; then
  note "kicked_cpu"
  trees=(build-gpu)
  if [[ -d build-base-src ]]; then
    start=$(date +%s)
    build_base >> "$out/build_base.log" 2>&1 || tail -20 "$out/build_base.log"
    note "kicked_cpu: base build $(( $(date +%s) - start )) s"
    [[ -x build-base/paulistrings ]] && trees=(build-base build-gpu)
  fi
  all=$(nproc)
  kicked_wall() {  # TREE THREADS ARGS...: one run's wall_time_s and value from its results
    local tree=$1 threads=$2
    shift 2
    OMP_WAIT_POLICY=passive timeout 200 "$tree/paulistrings" kicked-ising "$@" --threads "$threads" --device cpu -q \
      --out kicked_cpu.json > /dev/null 2>&1 || { echo "$tree threads $threads $*: exit $?"; return; }
    python3 -c "import json,sys; d=json.load(open('kicked_cpu.json')); o=d['observables']['Z62']
print(sys.argv[1], 'threads', sys.argv[2], ' '.join(sys.argv[3:]), 'wall_time_s %.4f' % d['wall_time_s'],
      'final_terms', d['final_terms'], 'value %.15f' % o['value'])" "$tree" "$threads" "$@"
  }
  {
    for round in $(seq "${KICKED_REPEAT:-3}"); do
      for tree in "${trees[@]}"; do
        for threads in 1 "$all"; do kicked_wall "$tree" "$threads" --steps 5 --theta-h 5pi/16 --coeff 0.000244140625; done
      done
    done
    for round in 1 2; do
      for tree in "${trees[@]}"; do kicked_wall "$tree" "$all" --steps 20 --theta-h 7pi/32 --coeff 0.00006103515625; done
    done
    kicked_wall build-gpu 1 --steps 20 --theta-h 7pi/32 --coeff 0.00006103515625
  } 2>&1 | tee "$out/kicked_cpu.txt"
  rm -f kicked_cpu.json
  note "kicked_cpu done"
fi
if has threads; then
  note "threads"
  all=$(nproc)
  (
    export OMP_WAIT_POLICY=passive  # what the command and the Python package choose
    for cores in 1 4 "$all"; do
      for th in ${THREADS_THRESHOLDS:-4096 32768 131072 1000000000}; do
        echo "# threads $cores, parallel threshold $th: $(timeout 60 build-gpu/paulistrings-sweep-bench --steps 20 \
          --columns 20 --coeff 1e-4 --weight 8 --separate on --threads "$cores" --parallel-threshold "$th" 2>&1 |
          head -1)"
      done
    done
    for cores in 1 4 "$all"; do
      /usr/bin/time -f "kicked-ising --steps 20 --theta-h 0.7853981633974483 --coeff 1e-4 --weight 8 --threads $cores: %e s" \
        timeout 60 build-gpu/paulistrings kicked-ising --steps 20 --theta-h 0.7853981633974483 --coeff 1e-4 --weight 8 \
        --threads "$cores" -q > /dev/null
    done
    # The cells at the default grain and at THREADS_CELL_GRAINS (0: every thread on every layer).
    for grain in 4096 ${THREADS_CELL_GRAINS:-16384 0}; do
      timeout 300 build-gpu/paulistrings-bench --terms 4096,16384,65536 --threads "1,4,$all" --repeat 5 \
        --cells rotation_zz,cnot,gu2q,su4,depolarize --parallel-threshold "$grain"
    done
  ) > "$out/threads.txt" 2>&1
  note "threads done"
fi
if has sweep; then
  threads=${SWEEP_THREADS:-$(nproc)}
  for args in "--steps 20 --columns 20 --coeff 1e-4 --weight 8 --separate on --gradient on" \
              "--steps 20 --columns 20 --coeff 0.00006103515625 --separate on --gradient on"; do
    note "sweep: $args --threads $threads"
    echo "# paulistrings-sweep-bench $args --threads $threads" >> "$out/sweep.txt"
    OMP_WAIT_POLICY=passive timeout "${SWEEP_TIMEOUT:-240}" build-gpu/paulistrings-sweep-bench $args \
      --threads "$threads" >> "$out/sweep.txt" 2>&1
    echo "# exit $?" >> "$out/sweep.txt"
  done
  tail -30 "$out/sweep.txt"
fi
if has grow; then
  build-gpu/paulistrings-gpu-bench --cells none --grow-to 1e9 2>&1 | tee "$out/grow.txt"
fi
