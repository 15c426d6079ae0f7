#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer:
# every library, executable, test and plugin .so (dlopen'ed ones included)
# built with clang, -fsanitize=address,undefined -fno-sanitize-recover=undefined
# (cmake/Sanitizers.cmake), in the build folder scripts/fuzz.sh uses (the
# fuzz build is a sanitized build plus libFuzzer's coverage counters), so
# each reuses the other's objects. Benchmarks are not built.
# usage: scripts/sanitize.sh      env: BUILD_DIR (default build-fuzz), JOBS
set -euo pipefail
cd "$(dirname "$0")/.."
export BUILD_DIR="${BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-2}"
start=$(date +%s)
scripts/fuzz.sh --configure-only
cmake --build "$BUILD_DIR" -j "$JOBS"
built=$(date +%s)
# Leaks fail the test that leaked; any UB aborts at once (no recovery).
# handle_segv=0: a segfault still kills the process, by its signal, which
# the plugin isolation tests expect of their crashing fixture plugins.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:handle_segv=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900 || rc=$?
echo "sanitize.sh: build $(( built - start )) s, tests $(( $(date +%s) - built )) s, ctest exit $rc"
exit "$rc"
