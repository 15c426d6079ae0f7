# Sourced by the build scripts: compile through ccache when it is installed
# (scripts/install-deps.sh installs it), with paths hashed relative to the
# checkout (CCACHE_BASEDIR) and not per build folder (CCACHE_NOHASHDIR), so
# scripts/test.sh's build/ reuses the objects scripts/quickstart.sh
# compiled into build-quickstart/ (CI runs both, in that order). Sets
# `launcher` to the CMake arguments (empty without ccache).
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
