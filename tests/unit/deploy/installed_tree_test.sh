#!/usr/bin/env bash
# An installed tree finds its plugins and profiles with no flags or
# environment, wherever the prefix is (here: installed, then moved).
# usage: installed_tree_test.sh BUILD_DIR
set -euo pipefail
build="$1"
tmp="$(mktemp -d)"
# Only a started server: `kill 0` would signal this whole process group
# (ctest and every test it runs) when a step fails before the server starts.
trap '[ -z "${server_pid:-}" ] || kill "$server_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/moved"
unset RIDGELINE_PLUGIN_DIR RIDGELINE_PROFILE_DIR
cd "$tmp"

"$tmp/moved/bin/ridgeline-server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --http-listen 127.0.0.1:0 >"$tmp/server.log" 2>&1 &
server_pid=$!
# Plugins load (each checked in a child process first) after the port is
# bound: wait for "serving", not only "listening on".
for _ in $(seq 1 300); do
  grep -q "serving: " "$tmp/server.log" && break
  sleep 0.1
done
address="$(sed -n 's/^listening on //p' "$tmp/server.log")"
[ -n "$address" ] || { cat "$tmp/server.log"; echo "FAIL: server did not start"; exit 1; }
# Plugins load (each checked in a child process first) before "serving:".
for _ in $(seq 1 300); do
  grep -q "ridgeline-server: serving:" "$tmp/server.log" && break
  sleep 0.1
done
# Every plugin came from the moved prefix.
for family in amd apple google intel npu nvidia pim; do
  grep -q "loaded family=$family .*path=$tmp/moved/lib/ridgeline/plugins/" "$tmp/server.log" || {
    cat "$tmp/server.log"; echo "FAIL: plugin $family not loaded from the moved prefix"; exit 1; }
done
# The installed CLI, through the installed server, finds a platform and the
# shipped profiles (a framework match names a fitted profile).
out="$("$tmp/moved/bin/ridgeline" --server "$address" analyze --model llama-2-7b \
  --hardware nvidia-rtx-4090 --framework llama.cpp-cuda --gen 2 --format json)"
echo "$out" | grep -q '"hardwareId":"nvidia-rtx-4090"' || { echo "$out" | head -c 600; echo "FAIL: no analysis"; exit 1; }
echo "$out" | grep -q '"profileName":"nvidia-rtx-4090.llama.cpp-cuda"' || { echo "$out" | head -c 600; echo "FAIL: no profile matched"; exit 1; }
# The web UI is served from the moved prefix too.
grep -q "web UI from $tmp/moved/share/ridgeline/web" "$tmp/server.log" || {
  cat "$tmp/server.log"; echo "FAIL: web UI not from the moved prefix"; exit 1; }
http="$(sed -n 's/^http listening on //p' "$tmp/server.log")"
curl -sf "http://$http/" | grep -q "<title>Ridgeline</title>" || { echo "FAIL: no UI at http://$http/"; exit 1; }
curl -sf "http://$http/vendor/d3.min.js" >/dev/null || { echo "FAIL: no vendored d3"; exit 1; }
kill "$server_pid"; wait "$server_pid" || true
echo "ok: installed tree at $tmp/moved serves with its own plugins and profiles"
