#!/bin/sh
# The Python package installed as users install it (make test runs it; RECIO_BUILD names the build
# folder, and everything this writes goes to RECIO_BUILD/test_pip_install, removed when all pass):
#  1. `python3 -m venv v && v/bin/pip install --no-build-isolation .` with Debian's python3 and nothing
#     else (no package index here: the build backend needs no Python package), then `import recio` from /
#     finds the library built into the package, with recio.h's version (records work without NumPy);
#  2. `pip wheel --no-build-isolation -w dist .` gives one wheel, which installs into a second venv (with
#     --system-site-packages for Debian's NumPy) and imports and decodes from /, its own library first
#     even with RECIO_LIBRARY set; libjpeg-turbo is linked when the compiler can link it, and libcurl
#     likewise (the backend's probe), so that remote paths are read (RECIO_CURL=yes|no to choose);
#  3. the backend's sdist installs into a third venv; RECIO_JPEG=stb RECIO_CURL=no builds without
#     libjpeg and libcurl; a missing stb_image.h stops the build with a message that says what to
#     install;
#  4. `make install DESTDIR=... PREFIX=/usr/local` puts the package in a folder on /usr/bin/python3's
#     sys.path, where it imports and finds PREFIX/lib/librecio.so.
set -u
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${RECIO_BUILD:-build}
T=$SRC/$BUILD/test_pip_install
PY=${RECIO_PYTHON:-/usr/bin/python3}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
skip() { echo "skip: pip install: $1"; echo "pip_install: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ -z "${RUN:-}" ] || skip "a cross build: the host builds its own library here"
case "${RECIO_CFLAGS:-}" in *-fsanitize*) skip "sanitizer builds: pip builds its own library with plain flags (the plain make test runs this)" ;; esac
[ -x "$PY" ] || skip "$PY is missing"
"$PY" -c 'import ensurepip' 2>/dev/null || skip "python3-venv is missing (apt-get install python3-venv, or make test as root)"
rm -rf "$T" && mkdir -p "$T"
V=$(sed -n 's/^#define RECIO_VERSION_MAJOR \([0-9]*\)$/\1/p' recio.h).$(sed -n 's/^#define RECIO_VERSION_MINOR \([0-9]*\)$/\1/p' recio.h).0
PIP="--disable-pip-version-check --no-cache-dir -q"
# what a user's program does, run from / (not the tree): prints version, package file, library
CHECK='import sys, recio
with recio.Writer(sys.argv[1]) as w:
    w.write(b"abc")
assert list(recio.Reader(sys.argv[1])) == [b"abc"]
print(recio.__version__, recio.__file__, recio.library_path)'
# libjpeg-turbo can be linked: then the bundled library must link it (the backend's probe, the Makefile's)
if printf '#include <stdio.h>\n#include <jpeglib.h>\nint main(void){struct jpeg_decompress_struct d;JDIMENSION x=0,w=1;jpeg_crop_scanline(&d,&x,&w);return 0;}\n' \
   | ${CC:-cc} -x c - -o "$T/probe" -ljpeg 2>/dev/null; then TURBO=1; else TURBO=0; fi
links_jpeg() { readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libjpeg'; }
# libcurl >= 7.75 can be linked (the Makefile's probe): then the bundled library must read remote paths
if printf '#include <curl/curl.h>\nint main(void){return (int)curl_easy_setopt(curl_easy_init(),CURLOPT_AWS_SIGV4,"aws:amz");}\n' \
   | ${CC:-cc} -x c - -o "$T/probe" -lcurl 2>/dev/null; then CURL=1; else CURL=0; fi
links_curl() { readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libcurl'; }
# a remote path's error (nothing listens on port 9: refused, retried, then said): what the build has
REMOTE='import recio
try:
    recio.Reader("http://127.0.0.1:9/x.rec")
except recio.Error as e:
    print(e)'
NOCURL="http://127.0.0.1:9/x.rec: offset 0: cannot open: this build has no remote filesystems (built without RECIO_CURL)"

# 1. the issue's command in a venv of Debian's python3
if "$PY" -m venv "$T/v1" >"$T/v1.log" 2>&1 && (cd "$T" && v1/bin/pip install $PIP --no-build-isolation "$SRC") >>"$T/v1.log" 2>&1; then
  site=$("$T/v1/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  out=$(cd / && env -u RECIO_LIBRARY "$T/v1/bin/python" -c "$CHECK" "$T/v1.rec" 2>&1)
  if [ "$out" = "$V $site/recio/__init__.py $site/recio/librecio.so" ] && [ -f "$site/recio/py.typed" ] && \
     [ -f "$site/recio/mx/recordio.py" ] && [ -f "$site/recio-$V.dist-info/RECORD" ]; then ok
  else bad "fresh venv: import from / printed '$out' (want '$V $site/recio/__init__.py $site/recio/librecio.so'), or files missing"; fi
else
  bad "python3 -m venv + pip install --no-build-isolation .: $(tail -5 "$T/v1.log")"; bad "(nothing installed to check)"
fi

# 2. pip wheel, then a second venv installs the wheel and decodes from /
if (cd "$T" && v1/bin/pip wheel $PIP --no-build-isolation -w "$T/dist" "$SRC") >"$T/wheel.log" 2>&1 && \
   [ "$(ls "$T/dist")" = "$(cd "$T/dist" && ls recio-$V-py3-none-*.whl 2>/dev/null)" ]; then ok
else bad "pip wheel: $(ls "$T/dist" 2>&1) $(tail -5 "$T/wheel.log")"; fi
if "$PY" -m venv --system-site-packages "$T/v2" >"$T/v2.log" 2>&1 && "$T/v2/bin/pip" install $PIP --no-index "$T"/dist/recio-*.whl >>"$T/v2.log" 2>&1; then
  site2=$("$T/v2/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  out=$(cd / && RECIO_LIBRARY=/nonexistent/librecio.so "$T/v2/bin/python" -c "$CHECK
import recio.mx as mx
print(mx.image.imdecode(open(sys.argv[2], 'rb').read()).asnumpy().shape)" "$T/v2.rec" "$SRC/tests/data/photos/chelsea-500x375.jpg" 2>&1)
  if [ "$out" = "$V $site2/recio/__init__.py $site2/recio/librecio.so
(375, 500, 3)" ]; then ok; else bad "wheel in a second venv, from /: '$out'"; fi
  if [ $TURBO = 1 ] && ! links_jpeg "$site2/recio/librecio.so"; then bad "libjpeg-turbo links here, but the wheel's library does not use it"
  elif [ $TURBO = 0 ] && links_jpeg "$site2/recio/librecio.so"; then bad "the wheel's library links libjpeg, which the probe could not link"
  else ok; fi
  out=$(cd / && "$T/v2/bin/python" -c "$REMOTE" 2>&1)
  case $CURL:$out in
    1:"http://127.0.0.1:9/x.rec: offset 0: cannot open: "*) [ "$out" != "$NOCURL" ] && links_curl "$site2/recio/librecio.so" && ok ||
      bad "libcurl links here, but the wheel's library has no remote paths: '$out'" ;;
    0:"$NOCURL") ok ;;
    *) bad "a remote path from the wheel (libcurl probe $CURL): '$out'" ;;
  esac
else
  bad "the wheel into a second venv: $(tail -5 "$T/v2.log")"; bad "(nothing installed to check)"
fi

# 3. the sdist builds in a venv; RECIO_JPEG=stb; no stb_image.h
if [ -x "$T/v1/bin/python" ] && sdist=$("$T/v1/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import recio_backend as b
print(b.build_sdist(sys.argv[2]))' "$SRC/python/backend" "$T/sdist" 2>"$T/sdist.log") && \
   "$PY" -m venv "$T/v3" >>"$T/sdist.log" 2>&1 && "$T/v3/bin/pip" install $PIP --no-build-isolation "$T/sdist/$sdist" >>"$T/sdist.log" 2>&1 && \
   out=$(cd / && env -u RECIO_LIBRARY "$T/v3/bin/python" -c "$CHECK" "$T/v3.rec" 2>&1) && [ "${out%% *}" = "$V" ]; then ok
else bad "sdist ($sdist): $(tail -5 "$T/sdist.log") $out"; fi
if (cd "$T" && RECIO_JPEG=stb RECIO_CURL=no v1/bin/pip wheel $PIP --no-build-isolation -w "$T/stb" "$SRC") >"$T/stb.log" 2>&1 && \
   "$PY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2], "wb").write(z.read("recio/librecio.so"))' \
     "$(ls "$T"/stb/recio-*.whl)" "$T/stb.so" && readelf -d "$T/stb.so" | grep -q NEEDED && ! links_jpeg "$T/stb.so" && \
   ! links_curl "$T/stb.so"; then ok
else bad "RECIO_JPEG=stb RECIO_CURL=no: a library without libjpeg and libcurl: $(tail -5 "$T/stb.log")"; fi
if (cd "$T" && RECIO_STB=/nonexistent v1/bin/pip install $PIP --no-build-isolation "$SRC") >"$T/nostb.log" 2>&1; then
  bad "no stb_image.h: pip install succeeded"
elif grep -q "recio: cannot build the C library: stb_image.h not found (looked in /nonexistent)" "$T/nostb.log" && \
     grep -q "apt-get install libstb-dev" "$T/nostb.log"; then ok
else bad "no stb_image.h: no clear message: $(tail -8 "$T/nostb.log")"; fi

# 4. make install: on /usr/bin/python3's path
MK="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory"
if $MK install BUILD="$BUILD" PREFIX=/usr/local DESTDIR="$T/dest" >"$T/install.log" 2>&1; then
  pkg=$(cd "$T/dest" && ls -d usr/local/lib/python3*/*-packages/recio 2>/dev/null | head -1)
  dir=/${pkg%/recio}
  if [ -n "$pkg" ] && "$PY" -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$dir"; then ok
  else bad "make install put the package in '$dir', not on $PY's sys.path"; fi
  out=$(cd / && env -u RECIO_LIBRARY PYTHONPATH="$T/dest$dir" "$PY" -c "$CHECK" "$T/dest.rec" 2>&1)
  if [ "$out" = "$V $T/dest$dir/recio/__init__.py $T/dest/usr/local/lib/librecio.so" ]; then ok
  else bad "make install's package from /: '$out'"; fi
else
  bad "make install: $(tail -5 "$T/install.log")"; bad "(nothing installed to check)"
fi

if [ $fail -eq 0 ]; then rm -rf "$T"; else echo "pip_install: kept $T"; fi
echo "pip_install: $pass passed, $fail failed"
[ $fail -eq 0 ]
