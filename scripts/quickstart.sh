#!/usr/bin/env bash
# Installs dependencies, builds and installs Ridgeline with every in-tree
# plugin, starts ridgeline-server on 127.0.0.1 (gRPC, metrics, and the
# HTTP/JSON API with the web UI on 127.0.0.1:8080, RIDGELINE_HTTP_LISTEN
# moves it) and shows a real analysis through it. Stop the server with:
# kill $(cat "$PREFIX/ridgeline-server.pid")
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${PREFIX:-$PWD/install}"
# Its own build folder, without tests and benchmarks (scripts/test.sh builds
# those in build/), so quickstart then test works in either order.
BUILD_DIR="${BUILD_DIR:-build-quickstart}"
JOBS="${JOBS:-$(nproc)}"
LISTEN="${RIDGELINE_LISTEN:-127.0.0.1:50051}"
METRICS="${RIDGELINE_METRICS_LISTEN:-127.0.0.1:9464}"
HTTP="${RIDGELINE_HTTP_LISTEN:-127.0.0.1:8080}"

scripts/install-deps.sh
source scripts/ccache.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DRIDGELINE_BUILD_TESTS=OFF -DRIDGELINE_BUILD_BENCH=OFF
cmake --build "$BUILD_DIR" -j "$JOBS"
cmake --install "$BUILD_DIR" >/dev/null

# The installed server finds its plugins and profiles without flags.
if [ -f "$PREFIX/ridgeline-server.pid" ]; then
  kill "$(cat "$PREFIX/ridgeline-server.pid")" 2>/dev/null || true
  sleep 1
fi
"$PREFIX/bin/ridgeline-server" --listen "$LISTEN" --metrics-listen "$METRICS" \
  --http-listen "$HTTP" >"$PREFIX/ridgeline-server.log" 2>&1 &
echo $! >"$PREFIX/ridgeline-server.pid"
# Wait until it serves, not only listens: the plugins load after the port
# opens, and until then every analysis is UNAVAILABLE ("still loading").
log="$PREFIX/ridgeline-server.log"
for _ in $(seq 1 300); do
  grep -q "^ridgeline-server: serving:" "$log" 2>/dev/null && break
  if grep -q "^ridgeline-server: not ready" "$log" 2>/dev/null ||
     ! kill -0 "$(cat "$PREFIX/ridgeline-server.pid")" 2>/dev/null; then
    cat "$log" >&2
    echo "quickstart: ridgeline-server did not become ready (log above)" >&2
    exit 1
  fi
  sleep 0.2
done
if ! grep -q "^ridgeline-server: serving:" "$log"; then
  cat "$log" >&2
  echo "quickstart: ridgeline-server not serving after 60 s (log above)" >&2
  exit 1
fi
echo "ridgeline-server running (pid $(cat "$PREFIX/ridgeline-server.pid")), gRPC $LISTEN, metrics http://$METRICS/metrics"
echo "Web UI:   http://$HTTP/?model=llama-3-8b&hardware=nvidia-h100-sxm-80gb&batch=16&prompt=1024&gen=128"
echo "JSON API: curl -s http://$HTTP/v1/Analyze --json '{\"model\":{\"catalogId\":\"llama-3-8b\"},\"hardware\":{\"platformId\":\"nvidia-h100-sxm-80gb\"}}'"
echo
"$PREFIX/bin/ridgeline" --server "$LISTEN" analyze --model llama-3-8b \
  --hardware nvidia-h100-sxm-80gb --batch 16 --prompt 1024 --gen 128
