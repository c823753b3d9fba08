#!/bin/sh
# The s3:// and http(s):// tests (tests/remote/test_remote.c) against s3rver and nginx on 127.0.0.1,
# started and stopped by tests/remote/servers.py, tests/test_split_mpi --s3 (MPI ranks over s3://
# shards) and tests/test_python_remote.py (Python) under the same servers. Where they cannot run it
# says why on a summary line
# that counts them as skipped (never as passed).
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${RECIO_BUILD:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
skip() { echo "skip: remote filesystems: $1"; echo "test_remote: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ -z "${RUN:-}" ] || skip "a cross build's test cannot reach this machine's servers"
[ "${RECIO_HAS_CURL:-1}" = 1 ] || skip "this build has no libcurl (RECIO_CURL): install libcurl4-openssl-dev"
[ -x "$build/tests/remote/test_remote" ] || skip "$build/tests/remote/test_remote is not built (make test builds it)"
[ -x "$build/tests/remote/test_remote_parts" ] || skip "$build/tests/remote/test_remote_parts is not built (make test builds it)"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is missing"
command -v node >/dev/null 2>&1 || skip "nodejs is missing (apt-get install nodejs, or make test as root)"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || skip "nginx is missing (apt-get install nginx, or make test as root)"
command -v curl >/dev/null 2>&1 || skip "curl is missing (apt-get install curl)"
[ -f "$root/build/s3rver/node_modules/s3rver/package.json" ] || skip "s3rver is not installed in build/s3rver (make remote-deps)"
PATH=$PATH:/usr/sbin
# Under the same servers: test_remote, test_remote_parts (the S3 writer's parts grow), then
# tests/test_split_mpi --s3 (MPI ranks over s3:// shards),
# then the Python surfaces over s3:// and http:// (tests/test_python_remote.py, through
# tests/test_python.sh: its skips and a sanitizer build's preload), and one summary line of all
# (tests/run.sh reads the last).
cd "$root" || exit 1
out=$(/usr/bin/python3 tests/remote/servers.py "$build/remote-servers" -- /bin/sh -c \
  '"$1"; echo "exit status $?"; "$4"; echo "exit status $?"; if [ -x "$2" ]; then "$2" --s3; echo "exit status $?"; fi
   RECIO_PY_TESTS=test_python_remote.py "$3"; echo "exit status $?"' sh \
  "$build/tests/remote/test_remote" "$build/tests/test_split_mpi" "$here/test_python.sh" \
  "$build/tests/remote/test_remote_parts" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v '^exit status 0$'
# test_python.sh repeats pytest's summary line "test_python: ..." as its last: counted once
printf '%s\n' "$out" | awk -v rc=$rc '
  /^test_python: / { if (seen++) next }
  /[0-9]+ passed, [0-9]+ failed/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^skipped/) s += $i } }
  /^exit status [1-9]/ { bad = 1 }
  END { if (f == 0 && (bad || rc != 0)) f = 1; printf "test_remote: %d passed, %d failed%s\n", p, f, s ? ", " s " skipped" : ""; exit f > 0 }'
