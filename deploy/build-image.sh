#!/usr/bin/env bash
# Builds the Ridgeline server image with no registry, then smoke-tests it.
#
#   1. Bootstraps a Debian 12 minbase from the package mirror (mmdebstrap,
#      merged-/usr, no docs/man/locales, apt caches cleaned) and imports it as
#      the local base image (buildah from scratch + add + commit).
#   2. Builds deploy/Dockerfile on that base (buildah bud --isolation=chroot
#      --pull=never): a build stage compiling the server, CLI and plugins, and
#      a runtime stage with only their runtime libraries, running as uid 10001.
#   3. Smoke test in the image (buildah run): the server's --help and a real
#      analysis by the installed CLI in-process; then, on a read-only bind
#      mount of the image's root filesystem, the server starts, loads its
#      plugins and serves, and the CLI analyses again. Prints
#      "smoke test: pass" and the image size and build time.
#
# usage: deploy/build-image.sh [IMAGE]       (default localhost/ridgeline:dev)
# env:   DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR  package mirrors
#        RIDGELINE_REUSE_BASE=1                 keep an existing base image
# Needs root (CI runs as root), mmdebstrap and buildah
# (scripts/install-deps.sh --image), and the right to create mount and PID
# namespaces; a missing capability stops the script with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-localhost/ridgeline:dev}"
base="localhost/ridgeline-base:bookworm"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

fail() { echo "build-image: FAIL: $*" >&2; exit 1; }
step() { echo "build-image: [$((SECONDS - start))s] $*"; }
start=$SECONDS

# ---- preflight: every capability the build needs, checked up front --------
[ "$(id -u)" -eq 0 ] || fail "run as root: mmdebstrap (root mode), buildah and the read-only check mount file systems"
for tool in mmdebstrap buildah unshare chroot; do
  command -v "$tool" >/dev/null || fail "$tool not found; run scripts/install-deps.sh --image"
done
unshare --mount --pid --fork true 2>/dev/null ||
  fail "cannot create mount/PID namespaces here (unshare --mount --pid); the build and smoke test need them"
buildah info >/dev/null 2>&1 || fail "buildah cannot initialise its storage: $(buildah info 2>&1 | tail -1)"

tmp="$(mktemp -d)"
ctr=""
cleanup() {
  [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---- 1. the base: Debian 12 minbase from the mirror -----------------------
if [ "${RIDGELINE_REUSE_BASE:-0}" = 1 ] && buildah inspect --type image "$base" >/dev/null 2>&1; then
  step "reusing base $base"
else
  step "bootstrapping Debian 12 minbase from $mirror"
  # dpkg path-exclude lands in /etc/dpkg/dpkg.cfg.d of the base, so packages
  # the Dockerfile installs later also skip docs, man pages and locales.
  mmdebstrap --mode=root --variant=minbase --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --aptopt='APT::Install-Recommends "false"' \
    --aptopt='Acquire::Languages "none"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*.log "$1"/var/log/apt/*' \
    bookworm "$tmp/base.tar" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb $security bookworm-security main"
  [ -e "$tmp/base.tar" ] || fail "mmdebstrap produced no tarball"
  # merged-/usr: /bin, /sbin and /lib are links into /usr.
  tar -tvf "$tmp/base.tar" | awk '$1 ~ /^l/ && ($(NF-2) == "./bin" || $(NF-2) == "bin") &&
    $NF == "usr/bin" {ok = 1} END {exit !ok}' ||
    fail "base is not merged-/usr: $(tar -tvf "$tmp/base.tar" | grep -E ' \.?/?bin( |$)' | head -3)"
  step "importing the base as $base ($(du -m "$tmp/base.tar" | cut -f1) MB tar)"
  bctr="$(buildah from scratch)"
  buildah add --quiet "$bctr" "$tmp/base.tar" / >/dev/null
  buildah config --env PATH=/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$bctr"
  buildah commit --quiet --rm "$bctr" "$base" >/dev/null
  rm -f "$tmp/base.tar"
fi

# ---- 2. the image ----------------------------------------------------------
step "building $image from deploy/Dockerfile"
buildah bud --isolation=chroot --pull=never --layers=false \
  --build-arg BASE_IMAGE="$base" -f deploy/Dockerfile -t "$image" .
build_seconds=$((SECONDS - start))

# ---- 3. smoke test -----------------------------------------------------------
step "smoke test"
ctr="$(buildah from --pull=never "$image")"
[ "$(buildah inspect --format '{{.OCIv1.Config.User}}' "$image")" = "10001:10001" ] ||
  fail "image user is not 10001:10001"
run() { buildah run --isolation=chroot --user 10001:10001 "$ctr" -- "$@"; }
help="$(run /opt/ridgeline/bin/ridgeline-server --help)" || fail "ridgeline-server --help failed"
grep -q -- '--listen' <<<"$help" || fail "server --help does not document --listen: $help"
# What the Helm chart's init containers use: a shell, cp, and the plugin and
# profile folders at the paths the chart names.
run /bin/sh -ec 'ls /opt/ridgeline/lib/ridgeline/plugins/*.so /opt/ridgeline/share/ridgeline/profiles/*.json >/dev/null
  command -v cp >/dev/null' || fail "the chart's paths (/opt/ridgeline/lib/ridgeline/plugins, .../share/ridgeline/profiles) or sh/cp are missing"
check_analysis() {  # $1: JSON of `ridgeline analyze`
  grep -q '"hardwareId":"nvidia-rtx-4090"' <<<"$1" || fail "no analysis: ${1:0:600}"
  grep -q '"profileName":"nvidia-rtx-4090.llama.cpp-cuda"' <<<"$1" ||
    fail "the image's profiles were not found: ${1:0:600}"
}
analyze=(/opt/ridgeline/bin/ridgeline analyze --model llama-2-7b --hardware nvidia-rtx-4090
         --framework llama.cpp-cuda --gen 2 --format json)
check_analysis "$(run "${analyze[@]}")"

# Read-only root filesystem: the image's tree bind-mounted read-only, uid
# 10001, in fresh mount and PID namespaces; the server must reach "serving"
# (plugins loaded) and the CLI must analyse without writing anything.
root="$(buildah mount "$ctr")"
mkdir -p "$tmp/ro"
unshare --mount --pid --fork bash -euo pipefail -c '
  root="$1"; ro="$2"; shift 2
  mount --make-rprivate /
  mount --bind "$root" "$ro"
  mount -o remount,bind,ro "$ro"
  mount -t proc proc "$ro/proc"
  mount --rbind /dev "$ro/dev"
  touch "$ro/opt/probe" 2>/dev/null && { echo "root is writable"; exit 1; }
  chroot --userspec=10001:10001 "$ro" /opt/ridgeline/bin/ridgeline-server \
    --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 >"'"$tmp"'/server.log" 2>&1 &
  for _ in $(seq 1 300); do
    grep -q "serving: " "'"$tmp"'/server.log" && break
    sleep 0.1
  done
  kill -TERM $! 2>/dev/null || true
  wait $! || true
  grep -q "serving: [1-9][0-9]* plugins" "'"$tmp"'/server.log" ||
    { cat "'"$tmp"'/server.log"; echo "server did not serve on a read-only root"; exit 1; }
  chroot --userspec=10001:10001 "$ro" "$@" >"'"$tmp"'/ro-analyze.json"
' ro-check "$root" "$tmp/ro" "${analyze[@]}" || fail "read-only root filesystem check"
check_analysis "$(cat "$tmp/ro-analyze.json")"
size_bytes="$(du -sbx "$root" | cut -f1)"  # the unpacked image
buildah umount "$ctr" >/dev/null
echo "smoke test: pass"
printf 'image: %s  size: %d MB  build time: %d s  total: %d s\n' "$image" \
  $((size_bytes / 1000000)) "$build_seconds" $((SECONDS - start))
