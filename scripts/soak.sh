#!/usr/bin/env bash
# The soak (issue 14): ridgeline-server on 127.0.0.1 under the load
# generator's mixed load (valid, invalid and client-cancelled Analyze calls,
# streamed Sweeps) for a given duration, with the server's RSS sampled.
# Prints requests, outcomes by code, p99, RSS start/end and growth; exits 1
# when a call ended with a code its kind should not end with, when RSS grew
# by more than --max-growth-percent, or when the server did not exit 0 on
# SIGTERM.
#
#   scripts/soak.sh [--duration SECONDS] [--build DIR] [--concurrency N]
#                   [--sample-seconds N] [--max-growth-percent P] [--mix V:I:C:S]
#
# RSS "start" is taken after a warm-up (a tenth of the run, at most 60 s),
# when gRPC's and the allocator's pools have reached their working size;
# before that RSS grows by design, not by leaking.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=600
build=build
concurrency=8
sample=5
max_growth=5
mix=10:3:3:4
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --sample-seconds) sample="$2"; shift 2 ;;
    --max-growth-percent) max_growth="$2"; shift 2 ;;
    --mix) mix="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
server_bin="$build/service/ridgeline-server"
loadgen_bin="$build/bench/ridgeline_loadgen"
for f in "$server_bin" "$loadgen_bin"; do
  [ -x "$f" ] || { echo "soak.sh: $f not built (ninja -C $build ridgeline-server ridgeline_loadgen)" >&2; exit 2; }
done

work="$(mktemp -d)"
server_pid=""
sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$server_bin" --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0 \
  --plugin-dir="$build/plugins" --profile-dir=profiles \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
port=""
for _ in $(seq 1 200); do
  port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/server.out")"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "soak.sh: the server printed no port" >&2; exit 1; }
metrics="$(sed -n 's/^metrics listening on \(127\.0\.0\.1:[0-9]*\)$/\1/p' "$work/server.out")"
# Ready once the plugins are loaded (the server logs "serving: N plugins").
for _ in $(seq 1 600); do
  grep -q "serving: " "$work/server.err" && break
  sleep 0.1
done
grep "serving: " "$work/server.err" || { echo "soak.sh: the server did not start serving" >&2; cat "$work/server.err" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status"; }
echo "soak: ${duration} s, concurrency $concurrency, mix (valid:invalid:cancelled:sweep) $mix, server pid $server_pid on 127.0.0.1:$port"
echo "soak: RSS before load $(rss_kib) KiB"
(
  t=0
  while kill -0 "$server_pid" 2>/dev/null; do
    echo "$t $(rss_kib)" >>"$work/rss"
    sleep "$sample"
    t=$((t + sample))
  done
) &
sampler_pid=$!

set +e
"$loadgen_bin" --mode mixed --mix "$mix" --target "127.0.0.1:$port" \
  ${metrics:+--metrics "$metrics"} --duration "$duration" \
  --requests 1000000000 --concurrency "$concurrency" --channels 4 \
  --view basic | tee "$work/loadgen.out"
load_rc=${PIPESTATUS[0]}
set -e
echo "$duration $(rss_kib)" >>"$work/rss"
kill "$sampler_pid" 2>/dev/null || true
sampler_pid=""

warm=$((duration / 10))
[ "$warm" -gt 60 ] && warm=60
read -r start_t start_rss < <(awk -v w="$warm" '$1 >= w {print; exit}' "$work/rss")
read -r end_t end_rss < <(tail -n 1 "$work/rss")
peak_rss="$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$work/rss")"
growth="$(awk -v a="$start_rss" -v b="$end_rss" 'BEGIN {printf "%.2f", (b - a) * 100 / a}')"
echo "soak: RSS start $start_rss KiB (at ${start_t} s), end $end_rss KiB (at ${end_t} s), peak $peak_rss KiB, growth ${growth}% ($(wc -l <"$work/rss") samples every ${sample} s)"

kill -TERM "$server_pid"
set +e
wait "$server_pid"
server_rc=$?
set -e
server_pid=""
echo "soak: server exit code after SIGTERM: $server_rc"

rc=0
[ "$load_rc" -eq 0 ] || { echo "soak: FAIL: calls ended with codes their kind should not (above)"; rc=1; }
awk -v g="$growth" -v m="$max_growth" 'BEGIN {exit !(g > m)}' &&
  { echo "soak: FAIL: RSS grew ${growth}% > ${max_growth}%"; rc=1; }
[ "$server_rc" -eq 0 ] || { echo "soak: FAIL: server exit code $server_rc"; rc=1; }
[ "$rc" -eq 0 ] && echo "soak: pass"
exit "$rc"
