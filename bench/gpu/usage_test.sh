#!/bin/sh
# The GPU benchmarks' command line, checked without a GPU: --help exits 0 with
# the usage on stdout; bad flags exit 2 naming the flag, before any CUDA call.
# Usage: usage_test.sh BINARY...
set -u
fail=0
check() {  # expected-exit expected-text args...
  want_rc=$1; want=$2; shift 2
  out=$("$bin" "$@" 2>&1); rc=$?
  if [ "$rc" != "$want_rc" ] || ! printf '%s' "$out" | grep -qF -- "$want"; then
    echo "FAIL: $bin $*: exit $rc (want $want_rc), output: $out"; fail=1
  fi
}
for bin in "$@"; do
  name=$(basename "$bin")
  check 0 "usage: $name --hardware-id ID" --help
  check 2 "unknown flag --bogus" --hardware-id x --bogus
  check 2 "--hardware-id is required" --repeats 3
  check 2 "--repeats: must be an integer in [1, 100000], got \"0\"" --hardware-id x --repeats 0
  check 2 "--warmup: must be an integer in [0, 100000], got \"ten\"" --hardware-id x --warmup=ten
  check 2 "--out needs a value" --hardware-id x --out
done
exit $fail
