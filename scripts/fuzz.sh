#!/usr/bin/env bash
# scripts/fuzz.sh SECONDS [TARGET...]: fuzzes the readers with libFuzzer (src/paulistrings/testing/README.md).
# Configures build-fuzz/ once (clang, -DPAULISTRINGS_FUZZ=ON: libFuzzer coverage, ASan and UBSan on every
# file, asserts on), builds the targets — every src/paulistrings/<layer>/<TARGET>.fuzz.cc: task, checkpoint,
# label, qasm, stim — and runs each named one (default: all) for SECONDS, one after another (0: build only).
#   - Each target starts from its corpus in the repository, tests/fuzz/<TARGET>/, and adds what it finds
#     to build-fuzz/corpus/<TARGET>/ (kept between runs; the repository's corpus is never written).
#   - tests/fuzz/<TARGET>.dict, where it exists, is handed to libFuzzer as a dictionary.
#   - A finding (crash, undocumented exception, leak, UB, a run over FUZZ_TIMEOUT seconds or over
#     FUZZ_RSS_MB MiB) stops that target and is saved as build-fuzz/artifacts/<TARGET>/crash-… (or leak-,
#     timeout-, oom-); reproduce it with build-fuzz/paulistrings-fuzz-<TARGET> FILE. Fix it, then add the
#     file to tests/fuzz/<TARGET>/ so the ordinary test suite replays it (testing/fuzz_corpus.test.cc).
#   - The log of each run is build-fuzz/fuzz-<TARGET>.log; the last lines say executions and coverage.
# Environment: FUZZ_BUILD_DIR (build-fuzz), FUZZ_TIMEOUT (10 s per input), FUZZ_RSS_MB (2048),
# FUZZ_JOBS (build parallelism, 2). Exit status 1 when any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
fi
seconds=$1
shift
build=${FUZZ_BUILD_DIR:-build-fuzz}
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for source in src/paulistrings/*/*.fuzz.cc; do
    name=$(basename "$source" .fuzz.cc)
    targets+=("$name")
  done
fi

if [[ ! -f $build/build.ninja ]]; then
  if ! command -v clang++ >/dev/null; then
    echo "fuzz.sh: needs clang with libFuzzer: apt-get install clang libclang-rt-14-dev (Debian 12)" >&2
    exit 1
  fi
  mkdir -p "$build"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DPAULISTRINGS_FUZZ=ON -DPAULISTRINGS_BUILD_TESTS=OFF \
    -DPAULISTRINGS_BUILD_EXAMPLES=OFF -DPAULISTRINGS_BUILD_PYTHON=OFF -DPAULISTRINGS_CUDA=OFF \
    -DPAULISTRINGS_MPI=OFF "${launcher[@]}" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; rm -f "$build/build.ninja"; exit 1; }
fi
binaries=()
for t in "${targets[@]}"; do binaries+=("paulistrings-fuzz-$t"); done
ninja -C "$build" -j "${FUZZ_JOBS:-2}" "${binaries[@]}" || exit 1

[[ $seconds -eq 0 ]] && exit 0  # libFuzzer would read -max_total_time=0 as "no limit"
status=0
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
  options=(-max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}"
           -print_final_stats=1 -artifact_prefix="$build/artifacts/$t/")
  [[ -f tests/fuzz/$t.dict ]] && options+=(-dict="tests/fuzz/$t.dict")
  echo "fuzz.sh: $t for $seconds s"
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/paulistrings-fuzz-$t" "${options[@]}" "$build/corpus/$t" "tests/fuzz/$t" >"$build/fuzz-$t.log" 2>&1
  rc=$?
  done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$build/fuzz-$t.log" | tail -1)
  [[ -z $done_line ]] && done_line=$(grep -E "^#[0-9]+" "$build/fuzz-$t.log" | tail -1)
  if [[ $rc -ne 0 ]]; then
    status=1
    tail -40 "$build/fuzz-$t.log"
    summary+=("$t: FOUND SOMETHING (exit $rc), see $build/fuzz-$t.log and $build/artifacts/$t/; last: $done_line")
  else
    summary+=("$t: nothing found; $done_line")
  fi
done
printf 'fuzz.sh: %s\n' "${summary[@]}"
exit $status
