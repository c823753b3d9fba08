#!/usr/bin/env bash
# Writes docs/footprint.md: recio's own bytes in a linked program (.text with read-only data and
# unwind tables / .data / .bss), per feature set and target, read from the linker's map: the
# implementation is its own object (-ffunction-sections -fdata-sections), a small main uses a
# feature set, and the program is linked with --gc-sections. The last rows keep the whole object.
# usage: tools/footprint.sh [OUT.md]   (make footprint)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/footprint.md}
stb=${STB:-/usr/include/stb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

targets=("x86-64|gcc|-Os" "x86-64 no unwind|gcc|-Os -fno-asynchronous-unwind-tables" "armhf thumb|arm-linux-gnueabihf-gcc|-mthumb -Os" \
         "Cortex-M4|arm-none-eabi-gcc|-mcpu=cortex-m4 -mthumb -Os --specs=nosys.specs")

reader='recio_reader *r; static const unsigned char f[8] = {0x0a,0x23,0xd7,0xce,0,0,0,0};
  if (recio_reader_open_mem(&r, f, sizeof f)) return 1;
  while (recio_reader_next(r, &rec) == RECIO_OK) n += rec.size; recio_reader_close(r);'
writer='recio_buffer b; recio_writer *w; recio_writer_desc wd; memset(&b, 0, sizeof b); memset(&wd, 0, sizeof wd); wd.mem = &b;
  if (recio_writer_open_desc(&w, NULL, &wd)) return 1;
  recio_writer_write(w, argv[0], strlen(argv[0])); recio_writer_close(w); recio_buffer_free(&b);'
split='recio_index idx; recio_index_desc id; recio_split *s; recio_split_desc sd; recio_fs fs; memset(&id, 0, sizeof id); memset(&sd, 0, sizeof sd);
  id.text = "0\t0\n", id.size = 4; recio_index_load(&idx, "x.idx", &id); recio_index_free(&idx); memset(&fs, 0, sizeof fs); fs.open_read = op; sd.fs = &fs;
  if (recio_split_open_desc(&s, "a.rec;b.rec", 0, 2, &sd) == RECIO_OK) { while (recio_split_next(s, &rec) == RECIO_OK) n++; }
  recio_split_close(s);'
splitfn='static recio_err op(void *u, const char *p, recio_io *io, char *why) { (void)u, (void)p, (void)io, (void)why; return RECIO_ERR_IO; }'
image='{ recio_image img, a, c, f, o; static const float m[4] = {0.5f,0.5f,0.5f,0}, sd4[4] = {0.2f,0.2f,0.2f,1};
  memset(&a, 0, sizeof a); memset(&f, 0, sizeof f); memset(&o, 0, sizeof o);
  if (recio_image_decode(&img, argv[0], strlen(argv[0]), 3) == RECIO_OK) {
    recio_image_resize_short(&img, &a, 72, RECIO_LINEAR); recio_image_center_crop(&a, &c, 64, 64);
    recio_image_normalize(&c, &f, m, sd4); recio_image_to_chw(&f, &o);
    recio_image_free(&o); recio_image_free(&f); recio_image_free(&a); recio_image_free(&img); } }'

# prog NAME DEFINES BODY [EXTRA_TOP]: NAME_impl.c (the implementation) and NAME.c (a main using it)
prog() {
  printf '%s\n' $2 | sed -n 's/^-D\(.*\)/#define \1/p' | sed 's/=/ /' > "$tmp/$1.h"
  { cat "$tmp/$1.h"; printf '#define RECIO_IMPLEMENTATION\n#include "recio.h"\n'; } > "$tmp/$1_impl.c"
  { cat "$tmp/$1.h"; printf '#include "recio.h"\n#include <stdlib.h>\n#include <string.h>\n%s\n' "${4:-}"
    printf 'int main(int argc, char **argv) { recio_record rec; size_t n = 0; (void)argc;\n%s\nreturn (int)n; }\n' "$3"
  } > "$tmp/$1.c"
}
prog reader "-DRECIO_NO_STDIO -DRECIO_NO_IMAGE" "$reader"
prog writer "-DRECIO_NO_STDIO -DRECIO_NO_IMAGE" "$reader $writer"
prog split "-DRECIO_NO_STDIO -DRECIO_NO_IMAGE" "$reader $writer $split" "$splitfn"
prog image "-DRECIO_NO_STDIO -DSTBI_ONLY_JPEG -DSTBI_ONLY_PNG" "$reader $writer $split $image" "$splitfn"
prog noimg "-DRECIO_NO_IMAGE" "(void)argv;"
prog board "-DRECIO_NO_STDIO -DRECIO_NO_IMAGE" "(void)argv;"
prog all "" "(void)argv;"

rows=("record reader (memory: recio_reader_open_mem, next, close)|reader" "+ writer (memory)|writer" \
      "+ .idx parsing and the split (through a recio_fs of your own)|split" \
      "+ image ops: decode (stb, JPEG and PNG only), resize_short, center_crop, normalize, to_chw|image" \
      "everything but images (RECIO_NO_IMAGE: files, split, iterator; whole object)|noimg" \
      "everything but images and files (RECIO_NO_IMAGE RECIO_NO_STDIO: memory and your I/O hooks, as a board builds it; whole object)|board" \
      "everything (all of recio.h: files, every stb format, transforms, iterator; whole object)|all")

# own MAP OBJ [ONLY]: "text data bss" of the input sections of OBJ that the link kept (with ONLY, a
# regular expression, only the sections whose names match it: the prose's parts of a cell)
own() {
  awk -v obj="$2" -v only="${3:-}" '
    /^Linker script and memory map/ { m = 1; next }
    !m { next }
    /^ [^ ]+$/ { name = $1; next }
    /^ [^ *][^ ]* +0x[0-9a-f]+ +0x[0-9a-f]+ / { name = $1; size = $3; file = $4; add(); name = ""; next }
    /^ +0x[0-9a-f]+ +0x[0-9a-f]+ [^ ]/ { if (name != "") { size = $2; file = $3; add() } name = ""; next }
    { name = "" }
    function hex(h,  i, v) { v = 0; h = tolower(substr(h, 3)); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
    function add(  n) {
      if (index(file, obj) == 0 || name ~ /^\.(comment|debug|note|ARM\.attributes|stab|gnu\.attributes)/) return
      if (only != "" && name !~ only) return
      n = hex(size)
      if (name ~ /^\.(bss|tbss)/ || name == "COMMON") b += n
      else if (name ~ /^\.(data|tdata|init_array|fini_array)/) d += n
      else t += n
    }
    END { printf "%d %d %d\n", t, d, b }' "$1"
}

declare -A cell vers
for t in "${targets[@]}"; do
  IFS='|' read -r tname cc flags <<<"$t"
  command -v "$cc" >/dev/null || { echo "footprint: $cc missing (make cross ARCH=armhf / make freestanding install it)"; exit 1; }
  for r in reader writer split image noimg board all; do
    gc=-Wl,--gc-sections
    case $r in noimg|board|all) gc=-Wl,--no-gc-sections ;; esac
    "$cc" -std=c99 -I. -I"$stb" $flags -ffunction-sections -fdata-sections -c "$tmp/${r}_impl.c" -o "$tmp/${r}_impl.o"
    "$cc" -std=c99 -I. -I"$stb" $flags -ffunction-sections -fdata-sections "$tmp/$r.c" "$tmp/${r}_impl.o" \
      -o "$tmp/$r.elf" $gc -Wl,-Map="$tmp/$r.map" -lm
    read -r tx dx bx <<<"$(own "$tmp/$r.map" "${r}_impl.o")"
    cell["$r|$tname"]="$tx / $dx / $bx"
    if [ "$r|$tname" = "reader|x86-64" ]; then # the parts the prose names
      read -r reader_eh _ <<<"$(own "$tmp/$r.map" "${r}_impl.o" '^\.eh_frame')"
      read -r reader_ro _ <<<"$(own "$tmp/$r.map" "${r}_impl.o" '^\.rodata')"
      read -r reader_fmt _ <<<"$(own "$tmp/$r.map" "${r}_impl.o" 'recio__fmt_args')"
    fi
  done
  vers["$tname"]="$("$cc" --version | head -1)"
done

# unwind: the least and most share of x86-64's .text (first column) that the second drops, in %
unwind() {
  local row x y p lo=100 hi=0
  for row in reader writer split image noimg all; do
    x=${cell["$row|x86-64"]%% *}; y=${cell["$row|x86-64 no unwind"]%% *}; p=$(( (100 * (x - y) + x / 2) / x ))
    [ "$p" -lt "$lo" ] && lo=$p; [ "$p" -gt "$hi" ] && hi=$p
  done
  echo "$lo-$hi%"
}

# verdict ROW LIMIT [COLUMN]: where (every column, or the one named) ROW's .text is under LIMIT
verdict() {
  local t ok="" over="" tx label
  for t in "x86-64" "x86-64 no unwind" "armhf thumb" "Cortex-M4"; do
    [ -z "${3:-}" ] || [ "$3" = "$t" ] || continue
    tx=${cell["$1|$t"]%% *}
    case $t in "x86-64") label="x86-64 -Os" ;; "x86-64 no unwind") label="x86-64 without unwind tables" ;;
      "armhf thumb") label=armhf ;; *) label=$t ;; esac
    if [ "$tx" -lt "$2" ]; then ok="$ok, $label ($tx)"; else over="$over, $label ($tx)"; fi
  done
  if [ -z "$over" ]; then echo "met: ${ok#, }"
  elif [ -z "$ok" ]; then echo "not met: ${over#, }"
  else echo "met on ${ok#, }; not on ${over#, }"; fi
}

{
  echo "# Footprint"
  echo
  echo "recio's own bytes in a linked program, as \`.text / .data / .bss\` (.text counts read-only data"
  echo "and unwind tables too). Made by \`make footprint\` (\`tools/footprint.sh\`), read from the linker's map:"
  echo "the implementation is one object built with \`-ffunction-sections -fdata-sections\`, a small \`main\`"
  echo "uses a feature set, and the program is linked with \`--gc-sections\`. The first four rows build with"
  echo "\`RECIO_NO_STDIO\` (memory and your own hooks, as on a board) and, but the fourth, \`RECIO_NO_IMAGE\`."
  echo "The last three keep the whole object, without \`RECIO_THREADS\`: the default configuration but for"
  echo "what their row names."
  echo "The C library functions recio calls (malloc, realloc, memcpy, strtod, libm for images) come on top"
  echo "where they are not in the program already. The reader and the writer take no 64-bit division from"
  echo "libgcc; the split and the iterator divide 64-bit counts (\`__aeabi_uldivmod\` on 32-bit ARM)."
  echo
  printf '| | %s | %s | %s | %s |\n' "x86-64 \`-Os\`" "x86-64 \`-Os -fno-asynchronous-unwind-tables\`" \
    "armhf \`-mthumb -Os\`" "Cortex-M4 \`-mcpu=cortex-m4 -mthumb -Os\`"
  echo "|---|---|---|---|---|"
  for row in "${rows[@]}"; do
    IFS='|' read -r label key <<<"$row"
    printf '| %s | %s | %s | %s | %s |\n' "$label" "${cell[$key|x86-64]}" "${cell[$key|x86-64 no unwind]}" \
      "${cell[$key|armhf thumb]}" "${cell[$key|Cortex-M4]}"
  done
  echo
  echo "Compilers: ${vers[x86-64]}; ${vers[armhf thumb]}; ${vers[Cortex-M4]}."
  echo
  echo "Targets (issue 13):"
  echo "- a record reader under 3 KB (3072 bytes): $(verdict reader 3072);"
  echo "- everything but images under 30 KB (30720 bytes) on Cortex-M4: $(verdict noimg 30720 Cortex-M4); without"
  echo "  the file backend too (RECIO_NO_STDIO, the board configuration): $(verdict board 30720 Cortex-M4)."
  echo
  echo "A program that reads only memory links none of the streaming reader's buffering and I/O (it is"
  echo "reached through pointers that only the streaming open sets). On x86-64 the resampler picks its"
  echo "AVX2 column with cpuid, so a program without image ops carries no CPU detection"
  echo "(\`__builtin_cpu_supports\` would bring libgcc's, about 4.5 KB, into any program linking recio)."
  echo "On x86-64 gcc emits unwind tables (.eh_frame) by default, and the first column counts them:"
  echo "$(unwind) of each row's .text, which \`-fno-asynchronous-unwind-tables\` drops (second column)."
  echo "For the memory reader they are ${reader_eh} of its ${cell[reader|x86-64]%% *} bytes: one entry per function, so its"
  echo "path is few functions (recio_reader_next holds a record's parts, their checks and the join; the"
  echo "formatter is one loop for text, strings and digits). Its messages (\"FILE: offset N: what\") are"
  echo "${reader_ro} bytes of read-only data, nearly all text, and recio's own formatter ${reader_fmt} bytes (code and"
  echo "its constant strings)."
} > "$out"
cat "$out"
