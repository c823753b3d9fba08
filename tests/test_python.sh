#!/bin/sh
# The Python tests under pytest (Debian's python3-pytest) with Debian's /usr/bin/python3, python3-numpy,
# python3-pil and python3-torch (make's python-deps installs them): the binding (tests/test_python.py),
# the handles under threads, fork, pickling and close (tests/test_python_handles.py), the map-style
# dataset, key ranges, skip_bad and error messages (tests/test_python_map.py), the package
# (tests/test_pypkg.py), docstrings and type hints of every public name (tests/test_python_api.py), recio.mx (tests/test_mx.py) and MXNet's own test_recordio.py
# (tests/mxnet/). Run by tests/run.sh from `make test`; their temporary files go to a folder under
# RECIO_BUILD (build/), removed after. Where they cannot run it says why on a summary line that counts
# them as skipped (never as passed). The last line is "test_python: N passed, N failed[, N skipped]".
PY=${RECIO_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "skip: python binding: $1"; echo "test_python: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ -z "${RECIO_PY_SKIP:-}" ] || skip "$RECIO_PY_SKIP"
[ -x "$PY" ] || skip "$PY is missing (apt-get install python3 python3-numpy python3-pytest)"
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (run 'sudo apt-get install python3-numpy', or make test as root)"
"$PY" -c 'import pytest' 2>/dev/null || skip "python3-pytest is missing (run 'sudo apt-get install python3-pytest', or make test as root)"
tmp=$here/../${RECIO_BUILD:-build}/pytest-tmp.$$
rm -rf "$tmp" && mkdir -p "$tmp"
# RECIO_PY_TESTS narrows the run to some of the files (make test JPEG=stb: the ones that decode)
files=${RECIO_PY_TESTS:-test_python.py test_python_handles.py test_python_map.py test_pypkg.py test_python_api.py test_mx.py mxnet}
for f in $files; do set -- "$@" "$here/$f"; done
if [ -n "${RECIO_PY_PRELOAD:-}" ]; then  # a sanitizer build: its runtime first, no leak report for Python
  out=$(cd "$here/.." && TMPDIR=$tmp LD_PRELOAD="$RECIO_PY_PRELOAD${LD_PRELOAD:+ $LD_PRELOAD}" \
    ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "$PY" -m pytest -q -p no:cacheprovider "$@" 2>&1)
else
  out=$(cd "$here/.." && TMPDIR=$tmp "$PY" -m pytest -q -p no:cacheprovider "$@" 2>&1)
fi
rc=$?
rm -rf "$tmp"
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep '^test_python: ' | tail -n 1)
[ -n "$line" ] || line="test_python: 0 passed, 1 failed (pytest exit $rc, no summary)"
echo "$line"
exit $rc
