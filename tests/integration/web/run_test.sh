#!/usr/bin/env bash
# Runs the browser test of the web UI. Installs puppeteer-core (pinned by
# package-lock.json; no browser download: the test drives Debian's
# /usr/bin/chromium) when node_modules is absent. A missing node, npm or
# chromium FAILS the test with a message naming it.
set -euo pipefail
cd "$(dirname "$0")"
for tool in node /usr/bin/chromium; do
  if ! command -v "$tool" >/dev/null; then
    echo "MISSING: $tool is not installed (scripts/install-deps.sh installs it); the web UI test cannot run" >&2
    exit 1
  fi
done
if [ ! -d node_modules/puppeteer-core ]; then
  if ! command -v npm >/dev/null; then
    echo "MISSING: npm is not installed and node_modules is absent" >&2
    exit 1
  fi
  exec 9>"${TMPDIR:-/tmp}/ridgeline-npm-install-web.lock"
  flock 9
  if [ ! -d node_modules/puppeteer-core ]; then
    if ! PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts >&2; then
      echo "MISSING: npm ci failed (npm registry unreachable?); need puppeteer-core" >&2
      exit 1
    fi
  fi
  flock -u 9
fi
exec node --test-reporter=spec ui_test.js "$@"
