#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan + UBSan) in their own
# build folder and runs each for a bounded time on its seed corpus; prints
# execs and findings per target. Exit 1 when any target found a crash, leak,
# UB, timeout or out-of-memory (the input is kept under
# $BUILD_DIR/fuzz-findings/<target>/; a fixed one belongs in
# tests/fuzz/corpus/<target>/finding-<what> so the suite replays it).
# usage: scripts/fuzz.sh [seconds-per-target]   (default 60)
#        scripts/fuzz.sh --configure-only         (scripts/sanitize.sh shares
#                                                  this build folder)
#   env: BUILD_DIR (default build-fuzz), JOBS (default 2), FUZZ_TARGETS
#        (space-separated subset), CC/CXX (default clang-14/clang++-14)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
configure_only=0
[ "$seconds" = "--configure-only" ] && configure_only=1
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-2}"
CC="${CC:-clang-14}"
CXX="${CXX:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "fuzz.sh: $CXX not found (scripts/install-deps.sh installs clang-14)" >&2; exit 2; }

source scripts/ccache.sh
# -O1 and line tables only: a quarter of RelWithDebInfo's compile time, and
# still symbolised stack traces. Tests and benches are not needed here.
start=$(date +%s)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" "${launcher[@]}" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DRIDGELINE_FUZZ=ON -DRIDGELINE_BUILD_BENCH=OFF >/dev/null
[ "$configure_only" = 1 ] && exit 0
cmake --build "$BUILD_DIR" -j "$JOBS" --target ridgeline_fuzz
echo "fuzz.sh: build took $(( $(date +%s) - start )) s"

targets="${FUZZ_TARGETS:-$(cd tests/fuzz/corpus && ls -d fuzz_* | tr '\n' ' ')}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=0
summary=()
for t in $targets; do
  exe="$BUILD_DIR/tests/fuzz/$t"
  work="$BUILD_DIR/fuzz-corpus/$t"        # new inputs; the seeds stay as they are
  findings="$BUILD_DIR/fuzz-findings/$t"
  log="$BUILD_DIR/fuzz-logs/$t.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  rc=0
  # -timeout: one input may take at most 25 s (the targets stop legit slow
  # requests within ~1 s); -rss_limit_mb: 2 GiB per process.
  "$exe" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
    -max_len=16384 -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
    "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  found=$(find "$findings" -type f | wc -l)
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
    failed=1
    echo "---- $t: FINDING (exit $rc); log $log" >&2
    grep -E 'ERROR: |runtime error:|SUMMARY:|^fuzz: |Test unit written' "$log" | head -20 >&2 || true
  fi
  summary+=("$(printf '%-24s %9s execs  cov %6s  %2d findings  (exit %d)' \
                "$t" "${execs:-?}" "${cov:-?}" "$found" "$rc")")
done
echo "fuzz.sh: ${seconds} s per target"
printf '%s\n' "${summary[@]}"
exit "$failed"
