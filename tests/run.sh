#!/usr/bin/env bash
# Runs every test binary given (through $RUN, e.g. qemu), sums their "N passed, N failed" lines.
set -u
passed=0 failed=0 skipped=0 times=""
[ -z "${RUN:-}" ] || export RECIO_TEST_EMULATED=1  # binaries run under qemu or wine: see the tests
for t in "$@"; do
  t0=$(date +%s)
  case $t in  # scripts run on the host; binaries through $RUN
    *.sh|*.py) out=$("$t" 2>&1); rc=$? ;;
    *) out=$(${RUN:-} "$t" 2>&1); rc=$? ;;
  esac
  printf '%s\n' "$out"
  line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(printf '%s' "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  f=$(printf '%s' "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
  s=$(printf '%s' "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+')
  [ -n "$line" ] || { echo "$t: no summary line (exit $rc)"; f=$((f+1)); }
  [ $rc -eq 0 ] || [ "${f:-0}" -gt 0 ] || { echo "$t: exit status $rc"; f=$((f+1)); }
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
  times="$times$(( $(date +%s) - t0 )) ${t##*/}
"
done
# The slowest five, so that CI's time budget (.ci/run) has a place to look.
printf 'slowest: %s\n' "$(printf '%s' "$times" | sort -rn | head -n 5 | awk '{printf "%s %ss  ", $2, $1}')"
if [ "$skipped" -gt 0 ]; then echo "${passed} passed, ${failed} failed, ${skipped} skipped"; else echo "${passed} passed, ${failed} failed"; fi
[ "$failed" -eq 0 ]
