#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer:
# every library, executable, test and plugin .so (dlopen'ed ones included)
# built with clang, -fsanitize=address,undefined -fno-sanitize-recover=undefined
# (cmake/Sanitizers.cmake), in the build folder scripts/fuzz.sh uses (the
# fuzz build is a sanitized build plus libFuzzer's coverage counters), so
# each reuses the other's objects. Benchmarks are not built.
#
# usage: scripts/sanitize.sh [--targets "T1 T2 ..."] [CTEST ARGS...]
#   --targets  build only these targets (default: all), e.g. CI's subset
#   CTEST ARGS passed to ctest, e.g. -L unit or -R '^Plugin'
#   env: BUILD_DIR (default build-fuzz), JOBS (default 2)
#
# Every sanitizer report of every process the tests start (servers, CLIs,
# the plugin-check children whose stderr is /dev/null) is also written to
# $BUILD_DIR/sanitizer-logs/; any report there fails the run, even when the
# test that started the process passed (a server killed with SIGKILL at the
# end of a test, say, or a report in a child whose exit status is ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
export BUILD_DIR="${BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-2}"
targets=(all)
if [ "${1:-}" = "--targets" ]; then
  read -r -d '' -a targets <<<"$2" || true  # any whitespace, newlines too
  shift 2
fi
start=$(date +%s)
scripts/fuzz.sh --configure-only
source scripts/ccache.sh  # the same hashing as fuzz.sh's configure
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}"
built=$(date +%s)

logs="$PWD/$BUILD_DIR/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
# Leaks fail the process that leaked; any UB aborts at once (no recovery).
# handle_segv=0: a segfault still kills the process, by its signal, which
# the plugin isolation tests expect of their crashing fixture plugins.
# log_path: each report also lands in $logs/<tool>.<pid> (see above).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:handle_segv=0}:log_path=$logs/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}:log_path=$logs/ubsan"
# Leaks that are not ours, each entry with its reason (tests/sanitizer/).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0}"
# Time limits in the tests are for an optimised build; the sanitized one runs
# 2-5x slower (tests/integration/server/server_process.h: TimeScale()).
export RIDGELINE_TEST_TIME_SCALE="${RIDGELINE_TEST_TIME_SCALE:-3}"
rc=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900 "$@" || rc=$?
tested=$(date +%s)

# A report is a log with an error in it (every ASan/LSan report has an
# "ERROR: ...Sanitizer" line, every UBSan one "runtime error:"). A log with
# only warnings (e.g. "ASan is ignoring requested __asan_handle_no_return",
# "LeakSanitizer has encountered a fatal error" in a process killed during
# its exit-time check) is printed whole, so it can be read, and counted
# apart: it is not a finding (a leak check that could not run also fails
# the exit status the tests check).
reports=""
notes=""
for f in $(find "$logs" -type f | sort); do
  if grep -qE 'ERROR: |runtime error:' "$f"; then
    reports="$reports $f"
  else
    notes="$notes $f"
  fi
done
for f in $notes; do
  echo "sanitize.sh: warning-only sanitizer log (not counted) $f:" >&2
  head -40 "$f" | sed 's/^/    /' >&2
done
if [ -n "$reports" ]; then
  echo "sanitize.sh: $(echo $reports | wc -w) sanitizer report(s) in $logs:" >&2
  for f in $reports; do
    echo "---- $f" >&2
    grep -E 'ERROR: |runtime error:|SUMMARY:|^    #[0-9]+ ' "$f" | head -25 >&2 || true
  done
  [ "$rc" -eq 0 ] && rc=1
fi
summary=$(ctest --test-dir "$BUILD_DIR" -N "$@" | sed -n 's/^Total Tests: //p')
echo "sanitize.sh: ${summary:-?} tests; build $(( built - start )) s, tests $(( tested - built )) s;" \
     "$(echo $reports | wc -w) sanitizer reports, $(echo $notes | wc -w) warning-only logs; exit $rc"
exit "$rc"
