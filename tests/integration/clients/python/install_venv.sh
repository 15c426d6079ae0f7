#!/bin/sh
# install_venv.sh PYTHON VENV WHEEL: a fresh venv that sees the system's
# site-packages (Debian python3-grpcio, python3-protobuf) with the ridgeline
# wheel installed offline, then a check that it imports from there.
set -eu
python=$1 venv=$2 wheel=$3
rm -rf "$venv"
# --without-pip: the system pip (Debian python3-pip, visible through the
# system site-packages) installs into the venv; ensurepip is slow.
"$python" -m venv --system-site-packages --without-pip "$venv"
"$venv/bin/python" -m pip install --quiet --no-index --no-deps \
  --no-cache-dir "$wheel"
cd /  # not the source tree: the import must come from the venv
"$venv/bin/python" -c 'import ridgeline, sys; print("ridgeline", ridgeline.__version__, "from", ridgeline.__file__); assert ridgeline.__file__.startswith(sys.prefix)'
