#!/bin/sh
# Consumers (make test runs it; RECIO_BUILD names the build folder): `make install` into a scratch
# prefix gives librecio.so with its SONAME and version, recio.1 made from every command's --help, and
# the docs; a tiny CMake program (tests/cmake_consumer) builds and runs against recio through
# add_subdirectory(recio), through find_package(recio) after a CMake install, and through
# find_package(recio) after that make install. Without cmake those three are skipped with a line.
set -u
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${RECIO_BUILD:-build}
T=$SRC/$BUILD/test_install
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
done_() {
  if [ $skip -gt 0 ]; then echo "install: $pass passed, $fail failed, $skip skipped"; else echo "install: $pass passed, $fail failed"; fi
  [ $fail -eq 0 ]; exit $?
}
if [ -n "${RUN:-}" ]; then
  echo "skip: a cross build's library and programs are not for this host"; skip=5; done_
fi
rm -rf "$T" && mkdir -p "$T"
MK="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory"

# 1. make install: the library with SONAME librecio.so.MAJOR, the man page, the docs
P=$T/prefix
if $MK install BUILD="$BUILD" PREFIX="$P" >"$T/install.log" 2>&1; then
  so=$(readlink "$P/lib/librecio.so")
  if [ -L "$P/lib/librecio.so" ] && [ -f "$P/lib/$so" ] && readelf -d "$P/lib/$so" | grep -q "SONAME.*\[librecio\.so\.[0-9]*\]" \
     && [ "$(readlink "$P/lib/librecio.so.$(sed -n 's/^#define RECIO_VERSION_MAJOR //p' recio.h)")" = "$so" ]; then ok; else bad "librecio.so: no SONAME or version link ($so)"; fi
  man=$P/share/man/man1/recio.1 missing=""
  for cmd in $("$P/bin/recio" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
    "$P/bin/recio" "$cmd" --help | grep -v '\\' | while IFS= read -r line; do
      case $line in .*|\'*) continue ;; esac
      grep -qxF -- "$line" "$man" || { echo "$cmd: $line"; break; }
    done >>"$T/man-missing.txt"
  done
  if [ -s "$man" ] && [ ! -s "$T/man-missing.txt" ] && grep -q '^\.SS recio pack' "$man" && \
     [ -f "$P/share/doc/recio/README.md" ] && [ -f "$P/share/doc/recio/pack.md" ]; then ok
  else bad "recio.1 or the docs: $(head -3 "$T/man-missing.txt" 2>/dev/null)"; fi
else
  bad "make install: $(tail -5 "$T/install.log")"; bad "make install (nothing to check)"
fi

# 2. CMake consumers
if ! command -v cmake >/dev/null 2>&1; then
  echo "skip: cmake is missing (add_subdirectory, find_package after cmake --install and after make install)"
  skip=3; done_
fi
# Sanitizer builds: the consumer links the same runtime as the library it uses.
# (CMake takes CFLAGS and LDFLAGS from the environment when it first configures a build folder.)
CFLAGS=${RECIO_CFLAGS:-} LDFLAGS=${RECIO_LDFLAGS:-}
export CFLAGS LDFLAGS
consumer() { # NAME CMAKE-ARGS...: configure, build and run tests/cmake_consumer
  name=$1; shift
  cmake -S tests/cmake_consumer -B "$T/$name" "$@" >"$T/$name.log" 2>&1 && cmake --build "$T/$name" >>"$T/$name.log" 2>&1 \
    && "$T/$name/consumer" >>"$T/$name.log" 2>&1 && grep -q 'consumer: ok' "$T/$name.log"
}
if consumer sub -DRECIO_SOURCE_DIR="$SRC" -DRECIO_BUILD_TOOLS=OFF; then ok; else bad "add_subdirectory: $(tail -5 "$T/sub.log")"; fi
if cmake -S . -B "$T/lib" -DCMAKE_INSTALL_PREFIX="$T/cprefix" -DRECIO_IMAGE=OFF >"$T/lib.log" 2>&1 \
   && cmake --build "$T/lib" >>"$T/lib.log" 2>&1 && cmake --install "$T/lib" >>"$T/lib.log" 2>&1 \
   && consumer cfind -DCMAKE_PREFIX_PATH="$T/cprefix"; then ok
else bad "find_package after cmake --install: $(tail -5 "$T/lib.log" "$T/cfind.log" 2>/dev/null)"; fi
if consumer mfind -DCMAKE_PREFIX_PATH="$P"; then ok; else bad "find_package after make install: $(tail -5 "$T/mfind.log")"; fi
done_
