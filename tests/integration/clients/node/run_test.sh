#!/usr/bin/env bash
# Runs the Node foreign-client test. Installs @grpc/grpc-js and
# @grpc/proto-loader (pinned by package-lock.json) when node_modules is
# absent. A missing node/npm or an unreachable registry FAILS the test with a
# message naming what is missing.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null; then
  echo "MISSING: node (Node.js >= 18) is not installed; the Node client test cannot run" >&2
  exit 1
fi
if [ ! -d node_modules/@grpc/grpc-js ] || [ ! -d node_modules/@grpc/proto-loader ]; then
  if ! command -v npm >/dev/null; then
    echo "MISSING: npm is not installed and node_modules is absent" >&2
    exit 1
  fi
  # Concurrent ctest runs share this folder: one installer at a time.
  exec 9>"${TMPDIR:-/tmp}/ridgeline-npm-install.lock"
  flock 9
  if [ ! -d node_modules/@grpc/grpc-js ] || [ ! -d node_modules/@grpc/proto-loader ]; then
    if ! npm ci --no-audit --no-fund --ignore-scripts >&2; then
      echo "MISSING: npm ci failed (npm registry unreachable?); need @grpc/grpc-js and @grpc/proto-loader" >&2
      exit 1
    fi
  fi
  flock -u 9
fi
exec node --test-reporter=spec client_test.js "$@"
