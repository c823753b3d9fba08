#!/bin/sh
# The Python binding's tests (tests/test_python.py, or the file RECIO_PY_TEST names: see
# test_python_handles.sh) with Debian's /usr/bin/python3 and python3-numpy, run by tests/run.sh from
# `make test`. Where they cannot run it says why on a summary line that counts them as skipped (never
# as passed).
PY=${RECIO_PYTHON:-/usr/bin/python3}
here=$(dirname "$0")
test=${RECIO_PY_TEST:-test_python.py}
skip() { echo "skip: python binding: $1"; echo "${test%.py}: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ -z "${RECIO_PY_SKIP:-}" ] || skip "$RECIO_PY_SKIP"
[ -x "$PY" ] || skip "$PY is missing (apt-get install python3 python3-numpy)"
"$PY" -c 'import numpy' 2>/dev/null || skip "python3-numpy is missing (run 'sudo apt-get install python3-numpy', or make test as root)"
if [ -n "${RECIO_PY_PRELOAD:-}" ]; then  # a sanitizer build: its runtime first, no leak report for Python
  LD_PRELOAD="$RECIO_PY_PRELOAD${LD_PRELOAD:+ $LD_PRELOAD}" ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    exec "$PY" "$here/$test"
fi
exec "$PY" "$here/$test"
