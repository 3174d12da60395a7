#!/usr/bin/env bash
# Runs every test: the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (debug-asan
# build), then the whole suite on the Release build. The exit status is non-zero if any run failed.
# ctest lists the tests it skipped (GPU tests on a machine without a GPU) after its own summary, so
# the output ends with one summary line over both runs: "N passed, N failed" (skipped ones counted
# on the line before).
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
passed=0 failed=0 skipped=0

# Runs one ctest preset, echoing its output, and adds its counts to the totals.
run_ctest() {
  local log rc line total fails skips
  log=$(mktemp)
  ctest --preset "$1" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  if [[ -z "$line" ]]; then
    echo "test.sh: ctest --preset $1 printed no summary" >&2
    failed=$((failed + 1))
    status=1
  else
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<< "$line")
    fails=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<< "$line")
    skips=$(grep -cE "^[[:space:]]+[0-9]+ - .*\((Skipped|Disabled|Not Run)\)$" "$log")
    passed=$((passed + total - fails - skips))
    failed=$((failed + fails))
    skipped=$((skipped + skips))
  fi
  rm -f "$log"
  [[ $rc -ne 0 ]] && status=1
  return 0
}

scripts/build.sh debug-asan || exit 1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest debug-asan

scripts/build.sh release || exit 1
run_ctest release

echo "test.sh: both runs (sanitizers, then Release): $skipped skipped (GPU tests without a GPU)"
echo "$passed passed, $failed failed"
exit $status
