#!/usr/bin/env bash
# Runs every test: the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (debug-asan
# build; the seeded sweeps there run their first seeds only, CMakeLists.txt says which, and a few slow
# cases a subset of their inputs, testing/sanitizers.h), then the whole suite on the Release build. The
# exit status is non-zero if any run failed.
# ctest runs one entry per GoogleTest suite (cmake/GTestGroups.cmake); the counts below are of test
# cases: every GoogleTest case, plus each other ctest entry (pytest suite, MPI runs, examples) as one.
# The output ends with one summary line over both runs: "N passed, N failed", the skipped ones (GPU
# tests without a GPU) counted on the line before, after one line per reason they gave.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
passed=0 failed=0 skipped=0
reasons=$(mktemp)
trap 'rm -f "$reasons"' EXIT

# Runs one ctest preset whose build is in directory $2, echoing its output, and adds its counts to the
# totals. GoogleTest entries are counted by case from ctest's log of their output (a case that started
# and never ended, or an entry that failed after its cases passed, e.g. a leak report at exit, counts as
# one failure); other entries by ctest's verdict.
run_ctest() {
  local log rc line counts
  log=$(mktemp)
  ctest --preset "$1" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  if [[ -z "$line" || ! -f "$2/Testing/Temporary/LastTest.log" ]]; then
    echo "test.sh: ctest --preset $1 printed no summary" >&2
    failed=$((failed + 1))
    status=1
  else
    # One awk over the console (failed and skipped entry names) and the log (each entry's output).
    counts=$(awk -v reasons="$reasons" '
      FNR == 1 { file++ }
      file == 1 && /tests passed, [0-9]+ tests? failed out of [0-9]+/ {
        entries = $NF; sub(/.*passed, /, ""); entry_fails = $1 + 0
      }
      file == 1 && /^The following tests FAILED:/ { section = "failed"; next }
      file == 1 && /^The following tests did not run:/ { section = "skipped"; next }
      file == 1 && section != "" && /^[[:space:]]+[0-9]+ - / {
        name = $0; sub(/^[[:space:]]+[0-9]+ - /, "", name); sub(/ \([^()]*\)$/, "", name)
        if (section == "failed") bad[name] = 1; else if ($0 ~ /\((Skipped|Disabled)\)$/) { entry_skips++; off[name] = 1 }
        next
      }
      file == 1 && section != "" && !/^[[:space:]]/ { section = "" }
      file == 2 && /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, ""); name = $0; gtest = 0; next }
      file == 2 && /^Command: / { gtest = ($0 ~ /"--gtest_filter=/); if (gtest) { gentries++; ok = fail = skip = run = 0; reason = "" } next }
      file == 2 && gtest && /^\[ RUN      \] / { run++; reason = ""; next }
      file == 2 && gtest && /^\[       OK \] .* \([0-9]+ ms\)$/ { ok++; next }
      file == 2 && gtest && /^\[  FAILED  \] .* \([0-9]+ ms\)$/ { fail++; next }
      file == 2 && gtest && /: Skipped$/ { want_reason = 1; next }
      file == 2 && gtest && want_reason { reason = $0; want_reason = 0; next }
      file == 2 && gtest && /^\[  SKIPPED \] .* \([0-9]+ ms\)$/ { skip++; why[reason == "" ? "(no reason given)" : reason]++; next }
      file == 2 && gtest && /^<end of output>$/ {
        unfinished = run - ok - fail - skip
        fail += unfinished
        if (name in bad) { gbad++; if (fail == 0) fail = 1 }
        if (name in off) gskipped++
        cases_ok += ok; cases_fail += fail; cases_skip += skip
        gtest = 0
      }
      END {
        for (r in why) printf "%d\t%s\n", why[r], r >> reasons
        other_fail = entry_fails - gbad; other_skip = entry_skips - gskipped
        other_pass = entries - gentries - other_fail - other_skip
        print cases_ok + other_pass, cases_fail + other_fail, cases_skip + other_skip
      }' "$log" "$2/Testing/Temporary/LastTest.log")
    read -r p f s <<< "$counts"
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))
  fi
  rm -f "$log"
  [[ $rc -ne 0 ]] && status=1
  return 0
}

scripts/build.sh debug-asan || exit 1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest debug-asan build-asan

scripts/build.sh release || exit 1
run_ctest release build

if [[ -s "$reasons" ]]; then
  echo "test.sh: skipped test cases, by the reason they gave:"
  awk -F'\t' '{ n[$2] += $1 } END { for (r in n) printf "  %5d  %s\n", n[r], r }' "$reasons" | sort -rn
fi
echo "test.sh: both runs (sanitizers, then Release): $skipped skipped (GPU tests without a GPU)"
echo "$passed passed, $failed failed"
exit $status
