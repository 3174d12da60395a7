#!/usr/bin/env bash
# Runs every test: the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (debug-asan
# build), then the whole suite on the Release build. Output ends with ctest's summary line; the exit
# status is non-zero if any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0

scripts/build.sh debug-asan || exit 1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --preset debug-asan || status=1

scripts/build.sh release || exit 1
ctest --preset release || status=1
exit $status
