#!/bin/sh
# Guest instructions per image of each kernel op, best column against scalar, under qemu-user with
# the bench/qemu_insns.c plugin: bench_kernels --once OP COLUMN minus the same run with OP -1 (load
# only), divided by the photo count. Under QEMU, NEON is emulated with helper calls, so its times are
# not a core's; executed instructions are the same on QEMU as on a board.
#   qemu_count.sh QEMU_COMMAND PLUGIN.so BENCH_KERNELS LIST.lst N BEST_COLUMN
set -e
qemu=$1 plugin=$2 bench=$3 lst=$4 n=$5 best=$6
count() { $qemu -plugin "$plugin" "$bench" --once "$1" "$2" "$lst" "$n" 2>&1 >/dev/null | sed -n 's/^guest instructions: //p'; }
echo "guest instructions per image (checksum: per 3x224x224 f32 tensor, x20), $n photos, $best against scalar"
printf '%-46s %14s %14s %8s\n' "op" "scalar" "$best" "ratio"
base_s=$(count -1 scalar); base_b=$(count -1 "$best")
for op in 0 1 2 3 4; do
  s=$(count $op scalar); b=$(count $op "$best")
  case $op in 0) name="resize to 224x224, LINEAR";; 1) name="normalize chw of 224x224 u8";; 2) name="eval chain on decoded pixels";;
    3) name="train chain on decoded pixels";; 4) name="recio_checksum of 3x224x224 f32";; esac
  reps=$n; [ $op = 4 ] && reps=$((n * 20))
  awk -v name="$name" -v s="$s" -v bs="$base_s" -v b="$b" -v bb="$base_b" -v n="$reps" \
    'BEGIN { x = (s - bs) / n; y = (b - bb) / n; printf "%-46s %14.0f %14.0f %7.2fx\n", name, x, y, x / y }'
done
