#!/usr/bin/env bash
# Installs the Debian 12 packages Ridgeline builds and tests with. Idempotent.
# usage: scripts/install-deps.sh [--image]   (--image: also mmdebstrap, buildah)
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libboost-dev prometheus-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-grpcio python3-protobuf prometheus binutils curl
  # The HTTP port: Boost.Beast/Asio (libboost-dev, above, headers only),
  # zlib1g-dev for gzip/deflate bodies, libssl-dev for its TLS
  # (service/src/http_tls.cc); cpp-httplib is the tests' and loadgen's HTTP
  # client; openssl makes the tests' certificates.
  libcpp-httplib-dev zlib1g-dev libssl-dev openssl
  # The web UI's browser test drives Debian's headless chromium.
  chromium
)
# Node 20 (for the grpc-js client test) usually ships with the image; Debian's
# nodejs/npm would conflict with it, so they are only installed when absent.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
# The Helm chart tests read rendered YAML (helm itself comes from npm).
packages+=(python3-yaml)
# The ridgeline Python package: built offline by pip with setuptools/wheel,
# tested in a venv (clients/python, tests/integration/clients).
packages+=(python3-setuptools python3-wheel python3-pip python3-venv)
# The fuzz targets and the sanitized build (scripts/fuzz.sh,
# scripts/sanitize.sh): clang with libFuzzer, llvm-symbolizer for readable
# reports, ccache for rebuilds.
packages+=(clang-14 llvm-14 ccache)
# --image: what deploy/build-image.sh needs (CI's image step).
[ "${1:-}" = "--image" ] && packages+=(mmdebstrap buildah)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
fi
