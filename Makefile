# recio: `make` builds the library, the CLI and the examples under build/.
#   make test       run the test suite (installs libstb-dev first when missing)
#   make demo       the main job, end to end, on the sample data
#   make sanitize   the tests under ASan + UBSan (float casts too)  make tsan   threaded tests under TSan
#   make bench      benchmarks (tables with ratios; docs/bench.md), on the set `make bench-data` makes
#   make bench-cross ARCH=aarch64   kernel columns under qemu  make cross ARCH=aarch64|armhf|s390x|win64
#   make CROSS=aarch64-linux-gnu-   library, CLI and examples for a board, in build/aarch64-linux-gnu
#   make freestanding               Cortex-M4 (arm-none-eabi, newlib): libraries, programs, run under QEMU
#   make tcc                        the header built with tcc
#   make footprint                  docs/footprint.md: bytes per feature set and target
#   make install PREFIX=/usr/local (also the Python package, recio.1, the docs, the CMake package)
#   make clean                      CMake users: CMakeLists.txt (add_subdirectory or find_package)
# CROSS=PREFIX- builds with PREFIXgcc, PREFIXg++ and PREFIXar into build/PREFIX (README: "Building
# for a board"); the target's libjpeg-turbo is used when that compiler can link it, else stb_image.
CROSS   ?=
ifneq ($(CROSS),)
ifeq ($(origin CC),default)
CC       = $(CROSS)gcc
endif
ifeq ($(origin CXX),default)
CXX      = $(CROSS)g++
endif
ifeq ($(origin AR),default)
AR       = $(CROSS)ar
endif
endif
CC      ?= cc
CXX     ?= c++
# JPEG decoding: libjpeg-turbo (RECIO_TURBOJPEG, -ljpeg) by default, installed when missing and allowed;
# `make JPEG=stb` builds the stb_image-only decoder, into build/stb.
JPEG    ?= turbo
BUILD   ?= build$(if $(CROSS),/$(patsubst %-,%,$(CROSS)))$(if $(filter stb,$(JPEG)),/stb)
OPT     ?= -O2
STB     ?= /usr/include/stb
PREFIX  ?= /usr/local
RUN     ?=
WARN     = -Wall -Wextra -Wpedantic -Werror
CPPFLAGS = -I. -I$(STB) -D_FILE_OFFSET_BITS=64 -DRECIO_THREADS $(JPEG_CFLAGS) $(CURL_CFLAGS)
CFLAGS_R = -std=c99 $(WARN) $(OPT) $(EXTRA_CFLAGS)
LDLIBS   = $(JPEG_LIBS) $(CURL_LIBS) -lm -lpthread
HDR      = recio.h
# librecio.so is librecio.so.MAJOR.MINOR.PATCH with the SONAME librecio.so.MAJOR (recio.h's version).
VERSION_MAJOR := $(shell sed -n 's/^.define RECIO_VERSION_MAJOR //p' recio.h)
VERSION_MINOR := $(shell sed -n 's/^.define RECIO_VERSION_MINOR //p' recio.h)
VERSION_PATCH := $(shell sed -n 's/^.define RECIO_VERSION_PATCH //p' recio.h)
VERSION  = $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
SONAME   = librecio.so.$(VERSION_MAJOR)
SOFILE   = librecio.so.$(VERSION)

TOOLS    = $(BUILD)/recio
EXAMPLES = $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out examples/mpi_%,$(wildcard examples/*.c)))
FUZZERS  = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
TESTS    = $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c)) $(BUILD)/tests/test_cpp \
           $(patsubst %,$(BUILD)/tests/fuzz_%,$(FUZZERS))
BENCHES  = $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/bench_*.c))
BENCHES_CV = $(patsubst bench/%.cpp,$(BUILD)/bench/%,$(wildcard bench/bench_*.cpp))

.PHONY: all deps turbo-deps curl-deps remote-deps python-deps test demo sanitize tsan bench bench-data bench-cross torchvision opencv cross cross-tools install clean fuzz
all: deps $(BUILD)/librecio.a $(BUILD)/librecio.so $(TOOLS) $(EXAMPLES)

# Debian's libstb-dev carries stb_image(_resize,_write).h. Install it when missing and allowed.
deps: $(STB)/stb_image.h turbo-deps curl-deps
$(STB)/stb_image.h:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "recio: installing libstb-dev"; apt-get update -qq && apt-get install -y -qq libstb-dev >/dev/null; \
	else echo "recio: $(STB)/stb_image.h is missing: run 'sudo apt-get install libstb-dev'"; exit 1; fi

$(BUILD)/obj/recio.o: recio_impl.c $(HDR) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) -fPIC -c $< -o $@
$(BUILD)/librecio.a: $(BUILD)/obj/recio.o
	$(AR) rcs $@ $^
$(BUILD)/librecio.so: $(BUILD)/obj/recio.o
	$(CC) -shared -Wl,-soname,$(SONAME) -o $(BUILD)/$(SOFILE) $^ $(LDFLAGS) $(LDLIBS)
	ln -sf $(SOFILE) $(BUILD)/$(SONAME)
	ln -sf $(SOFILE) $@
$(BUILD)/recio: $(wildcard tools/*.c) tools/cli.h $(BUILD)/librecio.a
	$(CC) $(CPPFLAGS) -Itools $(CFLAGS_R) $(wildcard tools/*.c) -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
$(BUILD)/examples/%$(EXE): examples/%.c $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
$(BUILD)/tests/%$(EXE): tests/%.c tests/test.h tests/cli_util.h tests/image_write.h tests/rec_util.h tests/img_desc.h $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
# The LD_PRELOAD fault shim of test_pack_faults (native POSIX builds only; never sanitized itself).
FAULTSHIM = $(if $(RUN)$(EXE),,$(BUILD)/tests/faultshim.so)
$(BUILD)/tests/faultshim.so: tests/faultshim.c
	@mkdir -p $(@D)
	$(CC) -std=c99 $(WARN) -O1 -fPIC -shared $< -o $@ -ldl
# libjpeg-turbo (its libjpeg API, -ljpeg) is probed with $(CC) when a recipe runs, after turbo-deps has
# installed libjpeg62-turbo-dev where it may (root, apt, native build). Where $(CC) cannot link it (a
# cross compiler without the target's library) the build says so and decodes JPEG with stb_image;
# the RECIO_TURBOJPEG tests are then reported as skipped.
TURBO_PROBE = printf '\043include <stdio.h>\n\043include <jpeglib.h>\nint main(void){struct jpeg_decompress_struct d;JDIMENSION x=0,w=1;jpeg_crop_scanline(&d,&x,&w);return 0;}\n' | $(CC) -x c - -o /dev/null -ljpeg 2>/dev/null
TURBO_IF = $(shell $(TURBO_PROBE) && echo $(1))
JPEG_CFLAGS = $(if $(filter turbo,$(JPEG)),$(call TURBO_IF,-DRECIO_TURBOJPEG))
JPEG_LIBS   = $(if $(filter turbo,$(JPEG)),$(call TURBO_IF,-ljpeg))
turbo-deps:
	@$(TURBO_PROBE) || [ -n "$(RUN)$(CROSS)" ] || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing libjpeg62-turbo-dev (the fast JPEG decoder)"; \
	    apt-get install -y -qq libjpeg62-turbo-dev >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libjpeg62-turbo-dev >/dev/null; } || true; }
	@[ "$(JPEG)" != turbo ] || $(TURBO_PROBE) || \
	  echo "recio: libjpeg-turbo cannot be linked with $(CC): JPEGs decode through stb_image (install libjpeg62-turbo-dev for the target, or say JPEG=stb)"
# libcurl (RECIO_CURL, -lcurl: s3:// and http(s):// paths) is built in by default as libjpeg-turbo is:
# probed when a recipe runs, after curl-deps has installed Debian's libcurl4-openssl-dev where it may.
# It needs libcurl >= 7.75 (CURLOPT_AWS_SIGV4). `make CURL=no` builds without: remote paths then say
# "this build has no remote filesystems (built without RECIO_CURL)".
CURL    ?= yes
CURL_PROBE = printf '\043include <curl/curl.h>\nint main(void){return (int)curl_easy_setopt(curl_easy_init(),CURLOPT_AWS_SIGV4,"aws:amz");}\n' | $(CC) -x c - -o /dev/null -lcurl 2>/dev/null
CURL_IF     = $(shell $(CURL_PROBE) && echo $(1))
CURL_CFLAGS = $(if $(filter yes,$(CURL)),$(call CURL_IF,-DRECIO_CURL))
CURL_LIBS   = $(if $(filter yes,$(CURL)),$(call CURL_IF,-lcurl))
curl-deps:
	@[ "$(CURL)" != yes ] || $(CURL_PROBE) || [ -n "$(RUN)$(CROSS)" ] || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing libcurl4-openssl-dev (s3:// and http(s):// paths)"; \
	    apt-get install -y -qq libcurl4-openssl-dev >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libcurl4-openssl-dev >/dev/null; } || true; }
	@[ "$(CURL)" != yes ] || $(CURL_PROBE) || \
	  echo "recio: libcurl (>= 7.75) cannot be linked with $(CC): no s3:// or http(s):// paths in this build (install libcurl4-openssl-dev)"

# The remote tests' servers (tests/remote): Debian's nginx, nodejs, npm, curl and openssl (the HTTPS
# test's self-signed certificate, made under build/ at each run), and s3rver from npm
# installed into build/s3rver; installed when missing and allowed. tests/test_remote.sh skips, saying
# why, where they cannot be had.
S3RVER_VERSION = 3.7.1
S3RVER = build/s3rver/node_modules/s3rver/package.json
remote-deps:
	@missing=""; for c in nginx:nginx node:nodejs npm:npm curl:curl openssl:openssl; do command -v $${c%%:*} >/dev/null 2>&1 || \
	  [ -x /usr/sbin/$${c%%:*} ] || missing="$$missing $${c##*:}"; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "recio: installing$$missing (the remote tests' servers)"; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } || true; fi
	@[ -f $(S3RVER) ] || ! command -v npm >/dev/null 2>&1 || { echo "recio: installing s3rver $(S3RVER_VERSION) into build/s3rver (npm)"; \
	  mkdir -p build/s3rver && timeout 600 npm install --prefix build/s3rver --no-audit --no-fund --loglevel=error s3rver@$(S3RVER_VERSION) >/dev/null || true; }
$(BUILD)/tests/remote/test_remote: tests/remote/test_remote.c tests/test.h $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
# recio compiled in, with its S3 parts doubling every 2 parts instead of 1000 (the test says why)
$(BUILD)/tests/remote/test_remote_parts: tests/remote/test_remote_parts.c tests/test.h $(HDR) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_image_turbo: tests/test_image_turbo.c tests/test.h $(BUILD)/librecio.a | turbo-deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS) $(call TURBO_IF,-DRECIO_TEST_TURBO -ljpeg)
# The header, implementation included, must also be clean C++.
$(BUILD)/tests/test_cpp$(EXE): tests/cpp_unit.cpp tests/test.h $(HDR) | deps
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(WARN) $(OPT) $(EXTRA_CFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)
# Each libFuzzer harness also builds as a test that replays its corpus (tests/data/fuzz/NAME); fuzz_walk
# (recio list's folder walk), fuzz_cli (the commands' option parsers) and fuzz_parts (POSIX mkdir) are POSIX-only.
$(BUILD)/tests/fuzz_%$(EXE): tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) -DFUZZ_NAME='"$*"' $< tests/fuzz/replay.c -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
# Harnesses that include the tool's own source (the code the command runs) rebuild when it changes.
$(patsubst %,$(BUILD)/tests/fuzz_%$(EXE),walk boxes salvage cli): $(wildcard tools/*.c) tools/cli.h
$(BUILD)/bench/%: bench/%.c bench/bench.h $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS) $(BENCH_LIBS)

# The MPI example is built only on request (OpenMPI from Debian's libopenmpi-dev); make test's
# tests/test_split_mpi runs it under mpirun, so OpenMPI is installed for it when missing and allowed.
.PHONY: mpi-example mpi-deps
mpi-deps:
	@{ command -v mpicc && command -v mpirun; } >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing libopenmpi-dev openmpi-bin (tests/test_split_mpi)"; \
	    apt-get update -qq && apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null || true; }
mpi-example: $(BUILD)/librecio.a
	@if ! command -v mpicc >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then echo "recio: installing libopenmpi-dev"; \
	    apt-get update -qq && apt-get install -y -qq libopenmpi-dev >/dev/null; \
	  else echo "recio: mpicc is missing: run 'sudo apt-get install libopenmpi-dev'"; exit 1; fi; fi
	@mkdir -p $(BUILD)/examples
	mpicc $(CPPFLAGS) $(CFLAGS_R) examples/mpi_split.c -o $(BUILD)/examples/mpi_split $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)

# RECIO_NO_IMAGE: the record half as a user who copies recio.h for records alone builds it, with no stb
# anywhere on the include path (-I. only): its tests, and the README's records example built in a
# folder holding nothing but recio.h, with a plain `cc` (no -lm).
NOIMG       = $(BUILD)/noimage
NOIMG_FLAGS = -I. -D_FILE_OFFSET_BITS=64 -DRECIO_THREADS -DRECIO_NO_IMAGE $(CFLAGS_R)
NOIMG_TESTS = $(patsubst %,$(NOIMG)/tests/%,test_recordio test_fs test_split_compat test_split_props test_prefetch test_iter \
              test_iter_nothreads test_config)
$(NOIMG)/recio.o: recio_impl.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(NOIMG_FLAGS) -c $< -o $@
$(NOIMG)/tests/%: tests/%.c tests/test.h $(NOIMG)/recio.o
	@mkdir -p $(@D)
	$(CC) $(NOIMG_FLAGS) $< -o $@ $(NOIMG)/recio.o $(LDFLAGS) -lm -lpthread
$(NOIMG)/tests/test_iter $(NOIMG)/tests/test_iter_nothreads: tests/iter_cases.h tests/iter_util.h
$(NOIMG)/copy_records: examples/copy_records.c $(HDR)
	@rm -rf $(NOIMG)/plain && mkdir -p $(NOIMG)/plain && cp $(HDR) $(NOIMG)/plain/
	@printf '#define RECIO_NO_IMAGE\n#define RECIO_IMPLEMENTATION\n#include "recio.h"\n' > $(NOIMG)/plain/copy.c
	@cat examples/copy_records.c >> $(NOIMG)/plain/copy.c
	cd $(NOIMG)/plain && $(CC) -std=c99 $(WARN) $(EXTRA_CFLAGS) copy.c -o ../copy_records $(LDFLAGS)

# The Python binding (python/recio) is tested with Debian's /usr/bin/python3 and python3-numpy against
# this build's librecio.so. Under ASan/UBSan their runtimes are preloaded into Python (leak checks off:
# the interpreter keeps its memory at exit); a cross build's library cannot be loaded by the host's
# Python, nor can TSan's runtime be started after the interpreter: those runs say so and skip it.
PY_SKIP = $(if $(RUN),a cross build's library is not for this CPU,$(if $(findstring -fsanitize=thread,$(EXTRA_CFLAGS)),ThreadSanitizer cannot be loaded into a running Python))
PY_PRELOAD = $(if $(findstring address,$(EXTRA_CFLAGS)),$(shell $(CC) -print-file-name=libasan.so)) $(if $(findstring undefined,$(EXTRA_CFLAGS)),$(shell $(CC) -print-file-name=libubsan.so))
# The packaging tests (make install, pip install) build their own library with plain flags: they run in
# the default build only, not again for JPEG=stb, a sanitizer or a cross build.
PACKAGING_TESTS = $(if $(filter build,$(BUILD)),tests/test_install.sh tests/test_pip_install.sh)
# A JPEG=stb build differs from the default in its decoder only: its Python run is the files that decode
# images (the rest ran against the default build), and the remote tests (no images) are not repeated.
STB_ONLY = $(filter stb,$(JPEG))
REMOTE_TESTS = $(if $(STB_ONLY),,$(if $(CURL_CFLAGS),$(BUILD)/tests/remote/test_remote $(BUILD)/tests/remote/test_remote_parts \
               $(if $(RUN),,remote-deps)))
# Nor are the tests that hold no image (records, split, files, MPI, the no-image build): their bytes do
# not pass through a decoder.
RECORDS_ONLY = $(patsubst %,$(BUILD)/tests/%,test_recordio test_split_compat test_split_props test_split_mpi test_split_cli \
               test_prefetch test_fs test_errors test_faults test_file_changes test_api_errors test_salvage test_segment \
               fuzz_reader fuzz_writer fuzz_split fuzz_parts fuzz_salvage fuzz_walk fuzz_text fuzz_cli fuzz_boxes)
RUN_TESTS = $(if $(STB_ONLY),$(filter-out $(RECORDS_ONLY),$(TESTS)),$(TESTS) $(NOIMG_TESTS))
test: all $(RUN_TESTS) $(if $(STB_ONLY),,$(NOIMG)/copy_records) $(BUILD)/examples/board_infer $(FAULTSHIM) python-deps \
      $(if $(RUN)$(STB_ONLY),,mpi-deps) $(REMOTE_TESTS) format-deps
	@RUN="$(RUN)" RECIO="$(RUN) $(abspath $(TOOLS))" RECIO_LIBRARY="$(abspath $(BUILD))/librecio.so" RECIO_PY_SKIP="$(PY_SKIP)" \
	  RECIO_PY_PRELOAD="$(strip $(PY_PRELOAD))" RECIO_BUILD="$(BUILD)" RECIO_TEST_JPEG="$(if $(JPEG_LIBS),turbo,stb)" RECIO_CFLAGS="$(EXTRA_CFLAGS)" RECIO_LDFLAGS="$(LDFLAGS)" \
	  RECIO_HAS_CURL="$(if $(CURL_CFLAGS),1)" $(if $(STB_ONLY),RECIO_PY_TESTS="test_python.py test_mx.py") \
	  tests/run.sh $(RUN_TESTS) $(BUILD)/examples/board_infer tests/test_python.sh tests/test_api_shape.py $(PACKAGING_TESTS) \
	  $(if $(STB_ONLY),,tests/test_remote.sh)

# Debian's clang-format (14 on Debian 12), for tests/test_api_shape.py's check that recio.h is as
# .clang-format formats it; installed when missing and allowed.
.PHONY: format-deps
format-deps:
	@command -v clang-format >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing clang-format (the header's format check)"; \
	    apt-get update -qq && apt-get install -y -qq clang-format >/dev/null || true; }

# The Python tests' packages (Debian's, for /usr/bin/python3), installed when one is missing and allowed
# (root, apt): NumPy, Pillow, PyTorch, pytest, OpenCV (the reference for recio.mx's image decoding and
# pack_img) and venv (tests/test_pip_install.sh), so that none of those tests skips on a fresh machine.
PY_DEPS = python3-numpy python3-pil python3-torch python3-pytest python3-opencv python3-venv
.PHONY: python-deps
python-deps:
	@[ -n "$(RUN)" ] || ! [ -x /usr/bin/python3 ] || /usr/bin/python3 -c 'import numpy, PIL, torch, pytest, cv2, ensurepip' 2>/dev/null || \
	  [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing $(PY_DEPS) (the Python tests)"; \
	    apt-get update -qq && apt-get install -y -qq $(PY_DEPS) >/dev/null || true; }

# board_infer builds its own private implementation (RECIO_STATIC, no stdio, no heap).
$(BUILD)/examples/board_infer$(EXE): examples/board_jpeg.h $(HDR)

demo: all
	@RECIO=$(BUILD)/recio sh examples/demo.sh

sanitize:
	$(MAKE) test BUILD=build/asan$(if $(filter stb,$(JPEG)),-stb) OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all" LDFLAGS="-fsanitize=address,undefined,float-cast-overflow"

tsan:
	$(MAKE) test BUILD=build/tsan$(if $(filter stb,$(JPEG)),-stb) OPT="-O1 -g" EXTRA_CFLAGS="-fsanitize=thread" LDFLAGS="-fsanitize=thread"

bench: all bench-data $(BENCHES) $(BENCHES_CV) python-deps python-bench-deps remote-deps
	@for b in $(BENCHES) $(BENCHES_CV); do echo "== $$b"; $$b || exit 1; done
	@echo "== bench/bench_python.py"; if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then \
	  RECIO_LIBRARY="$(abspath $(BUILD))/librecio.so" RECIO="$(abspath $(TOOLS))" /usr/bin/python3 bench/bench_python.py && \
	  echo "== bench/bench_python_mx.py" && RECIO_LIBRARY="$(abspath $(BUILD))/librecio.so" /usr/bin/python3 bench/bench_python_mx.py; \
	  else echo "skip: the Python benchmark needs /usr/bin/python3 with python3-numpy"; fi

# The Python benchmark compares with torchvision's DataLoader: python3-torchvision, a benchmark-only
# dependency, installed when missing and allowed (the comparison is skipped without it).
.PHONY: python-bench-deps
python-bench-deps:
	@! [ -x /usr/bin/python3 ] || /usr/bin/python3 -c 'import torchvision' 2>/dev/null || \
	  [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing python3-torchvision (the Python benchmark's comparison only)"; \
	    apt-get update -qq && apt-get install -y -qq python3-torchvision >/dev/null || true; }

# The realistic set of the pipeline benchmarks (docs/bench.md), generated under build/ (never in git):
# 1,000 JPEGs cut from the sample photos (shorter side 200-600 px, aspect ratios 1:2 to 2:1, fixed
# seed) in ten class folders, then listed and packed as im2rec packs ImageNet. Built with the default
# (libjpeg-turbo) tools whatever JPEG says, so that both builds measure the same bytes.
BENCH_DATA = build/bench-data
bench-data: $(BENCH_DATA)/imagenet1k.rec
$(BENCH_DATA)/imagenet1k.rec: bench/gen_photos.c | deps
	@$(MAKE) --no-print-directory JPEG=turbo BUILD=build build/librecio.a build/recio
	@mkdir -p $(BENCH_DATA)
	$(CC) -I. -I$(STB) -D_FILE_OFFSET_BITS=64 $(call TURBO_IF,-DRECIO_TURBOJPEG) $(CFLAGS_R) bench/gen_photos.c \
	  -o $(BENCH_DATA)/gen_photos build/librecio.a $(LDFLAGS) $(call TURBO_IF,-ljpeg) $(CURL_LIBS) -lm -lpthread
	rm -rf $(BENCH_DATA)/photos $(BENCH_DATA)/imagenet1k.*
	$(BENCH_DATA)/gen_photos tests/data/photos $(BENCH_DATA)/photos 1000 1
	build/recio list --recursive --seed 100 $(BENCH_DATA)/imagenet1k $(BENCH_DATA)/photos >/dev/null
	build/recio pack --resize 256 --quality 90 --num-thread 2 --quiet $(BENCH_DATA)/imagenet1k $(BENCH_DATA)/photos

# C++ benchmarks compare against OpenCV, a benchmark-only dependency installed here when missing.
# They compile recio themselves, with RECIO_TURBOJPEG when libjpeg-turbo is there.
$(BUILD)/bench/%: bench/%.cpp $(HDR) | opencv turbo-deps
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(WARN) $(OPT) $$(pkg-config --cflags opencv4) $< -o $@ $$(pkg-config --libs opencv4) $(call TURBO_IF,-DRECIO_BENCH_TURBO -ljpeg) $(LDFLAGS) $(LDLIBS)
# bench_pipeline and bench_kernels time several builds of recio in one process: bench/variant.c is
# compiled once per variant (a private copy each, RECIO_STATIC) with that variant's flags.
VARIANT_FLAGS_turbo  = $(call TURBO_IF,-DRECIO_TURBOJPEG)
VARIANT_FLAGS_stb    =
VARIANT_FLAGS_sse2   = -DRECIO_NO_AVX2
VARIANT_FLAGS_scalar = -DRECIO_NO_SIMD
KERNEL_VARIANTS = stb scalar $(if $(filter x86_64% i%86,$(shell $(CC) -dumpmachine)),sse2)
$(BUILD)/bench/variant_%.o: bench/variant.c bench/variant.h $(HDR) | deps turbo-deps
	@mkdir -p $(@D)
	$(CC) -I. -I$(STB) -D_FILE_OFFSET_BITS=64 -DRECIO_THREADS $(CFLAGS_R) -DBENCH_VARIANT=$* $(VARIANT_FLAGS_$*) -c $< -o $@
$(BUILD)/bench/bench_pipeline: bench/bench_pipeline.cpp bench/bench.h bench/opencv_chain.h bench/variant.h \
  $(BUILD)/bench/variant_turbo.o $(BUILD)/bench/variant_stb.o | opencv torchvision
	$(CXX) -I. $(call TURBO_IF,-DBENCH_LIBJPEG) $(WARN) $(OPT) $$(pkg-config --cflags opencv4) $< -o $@ \
	  $(BUILD)/bench/variant_turbo.o $(BUILD)/bench/variant_stb.o $$(pkg-config --libs opencv4) $(LDFLAGS) $(call TURBO_IF,-ljpeg) -lm -lpthread
$(BUILD)/bench/bench_kernels: bench/bench_kernels.c bench/bench.h bench/variant.h $(patsubst %,$(BUILD)/bench/variant_%.o,$(KERNEL_VARIANTS))
	$(CC) -I. -std=c99 $(WARN) $(OPT) $(EXTRA_CFLAGS) $< -o $@ $(filter %.o,$^) $(LDFLAGS) -lm -lpthread

# torchvision, the Python baseline of bench_pipeline (Debian's python3-torchvision, run by
# /usr/bin/python3), is installed here as root when missing; bench_pipeline skips it otherwise.
torchvision:
	@/usr/bin/python3 -c 'import torch, torchvision, PIL' 2>/dev/null || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "recio: installing python3-torchvision (benchmarks only)"; apt-get update -qq && apt-get install -y -qq python3-torchvision python3-torch python3-pil >/dev/null || true; \
	  else echo "recio: no torchvision (sudo apt-get install python3-torchvision): its bench lines are skipped"; fi; }
opencv:
	@pkg-config --exists opencv4 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "recio: installing libopencv-dev (benchmarks only)"; apt-get update -qq && apt-get install -y -qq libopencv-dev >/dev/null; \
	  else echo "recio: the benchmarks need OpenCV: run 'sudo apt-get install libopencv-dev'"; exit 1; fi; }

# libFuzzer (clang): make fuzz FUZZ_SECONDS=60. New crashes land in build/fuzz/NAME/; keep each as a
# regression in tests/data/fuzz/NAME/ once fixed. An input that runs over 10 s is reported as a hang.
FUZZ_SECONDS ?= 60
# Images fuzz through libjpeg-turbo too when it is installed; a small pixel cap keeps a lying header
# from spending the run on one 2^28-pixel grey image.
FUZZ_DEFS = -DRECIO_MAX_PIXELS=4000000
FUZZ_CC   = clang -g -O1 -fno-sanitize-recover=all
# The library is compiled once per decoder (instrumented, not linked to libFuzzer's main), and each
# harness only links against it: compiling recio_impl.c per harness took 8 of CI's minutes.
fuzz: deps turbo-deps
	@command -v clang >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq clang >/dev/null; } \
	  || { echo "recio: install clang for libFuzzer"; exit 1; }
	@mkdir -p build/fuzz
	@$(FUZZ_CC) -fsanitize=fuzzer-no-link,address,undefined $(CPPFLAGS) $(FUZZ_DEFS) -c recio_impl.c -o build/fuzz/recio_impl.o
	@$(FUZZ_CC) -fsanitize=fuzzer-no-link,address,undefined $(CPPFLAGS:-DRECIO_TURBOJPEG=) $(FUZZ_DEFS) -c recio_impl.c \
	  -o build/fuzz/recio_impl_stb.o
	@for f in $(FUZZERS); do mkdir -p build/fuzz/$$f build/fuzz/corpus-$$f; \
	  $(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(CPPFLAGS) $(FUZZ_DEFS) tests/fuzz/fuzz_$$f.c build/fuzz/recio_impl.o \
	    -o build/fuzz/fuzz_$$f $(LDLIBS) || exit 1; \
	  echo "== fuzz_$$f for $(FUZZ_SECONDS) s"; \
	  build/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/$$f/ -print_final_stats=1 \
	    build/fuzz/corpus-$$f tests/data/fuzz/$$f tests/data/compat tests/data/photos 2>&1 | tail -4 || exit 1; done
	@# stb's own JPEG decoder too: with libjpeg-turbo in the build above, stb never sees a JPEG
	@mkdir -p build/fuzz/image-stb build/fuzz/corpus-image-stb
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(CPPFLAGS:-DRECIO_TURBOJPEG=) $(FUZZ_DEFS) tests/fuzz/fuzz_image.c \
	  build/fuzz/recio_impl_stb.o -o build/fuzz/fuzz_image_stb $(CURL_LIBS) -lm -lpthread || exit 1
	@echo "== fuzz_image_stb for $(FUZZ_SECONDS) s"
	@build/fuzz/fuzz_image_stb -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/image-stb/ \
	  -print_final_stats=1 build/fuzz/corpus-image-stb tests/data/fuzz/image tests/data/photos 2>&1 | tail -4

# Windows (make cross ARCH=win64): the library and the part of the suite that is portable C (the
# command-line tool and the tests that drive it are POSIX-only), built with mingw-w64, linked
# statically and run under wine in its own prefix, made without questions on first use.
EXE ?=
PORTABLE_TESTS = $(patsubst %,$(BUILD)/tests/%$(EXE),test_config test_fs test_image test_image_spec test_image_turbo test_iter \
                 test_iter_nothreads test_kernels test_prefetch test_recordio test_split_compat test_split_props \
                 test_strict_c99 test_freestanding test_cpp) $(patsubst %,$(BUILD)/tests/fuzz_%$(EXE),$(filter-out walk cli parts,$(FUZZERS))) \
                 $(BUILD)/examples/board_infer$(EXE)
.PHONY: test-portable
test-portable: deps $(BUILD)/librecio.a $(PORTABLE_TESTS) $(if $(RECIO),$(TOOLS))
	@RUN="$(RUN)" RECIO="$(RECIO)" tests/run.sh $(PORTABLE_TESTS)
WINE = env WINEPREFIX=$(abspath build/wine) WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" wine

# Bare metal: a Cortex-M4 with newlib (Debian gcc-arm-none-eabi, libnewlib-arm-none-eabi, installed
# when missing and allowed). The implementation builds in three configurations (ISO stdio files,
# RECIO_NO_STDIO, RECIO_STATIC); the RECIO_NO_STDIO object must reference no OS call; RECIO_THREADS
# must stop at recio's one #error; examples/board_infer.c (decode and transform, arena, no heap) and a
# program holding the whole RECIO_NO_STDIO library (records, index, split, image ops, stb) link
# without --gc-sections. newlib's nosys stubs stand in for the board support package.
# Then both programs run on an emulated Cortex-M4 (QEMU's MPS2 AN386 board, Debian qemu-system-arm,
# installed when missing and allowed; skipped, saying why, when it cannot be): linked again with
# newlib's rdimon (semihosting: printf, heap, the exit status) and tests/cortex_m4_vectors.c (the
# vector table at address 0), each must print "N passed, 0 failed" and exit 0 within a minute.
FS_X     = arm-none-eabi-
FS_CC    = $(FS_X)gcc
FS       = build/cortex-m4
FS_FLAGS = -mcpu=cortex-m4 -mthumb -Os -std=c99 $(WARN) -I. -I$(STB)
FS_OS    = open close read write lseek fstat stat mmap munmap posix_madvise glob globfree opendir readdir closedir \
           fsync writev rename remove fopen fclose fread fwrite fseek pthread_create pthread_mutex_lock __aeabi_read_tp
FS_QEMU  = qemu-system-arm -M mps2-an386 -cpu cortex-m4 -display none -monitor none -serial null -semihosting -kernel
FS_RUN   = --specs=rdimon.specs -Wl,--section-start=.vectors=0 tests/cortex_m4_vectors.c
.PHONY: freestanding
freestanding: deps
	@if ! command -v $(FS_CC) >/dev/null 2>&1 || [ ! -f "$$($(FS_CC) -print-file-name=libc.a)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then echo "recio: installing gcc-arm-none-eabi libnewlib-arm-none-eabi"; \
	    apt-get update -qq && apt-get install -y -qq gcc-arm-none-eabi libnewlib-arm-none-eabi >/dev/null; \
	  else echo "recio: install gcc-arm-none-eabi libnewlib-arm-none-eabi"; exit 1; fi; fi
	@mkdir -p $(FS)
	$(FS_CC) $(FS_FLAGS) -c recio_impl.c -o $(FS)/recio_stdio.o
	$(FS_CC) $(FS_FLAGS) -DRECIO_STATIC -c recio_impl.c -o $(FS)/recio_static.o
	$(FS_CC) $(FS_FLAGS) -DRECIO_NO_STDIO -c recio_impl.c -o $(FS)/recio.o
	$(FS_X)ar rcs $(FS)/librecio.a $(FS)/recio.o
	@bad=$$($(FS_X)nm -u $(FS)/recio.o | awk '{print $$2}' | grep -xE '$(shell echo $(FS_OS) | tr ' ' '|')'); \
	  if [ -n "$$bad" ]; then echo "recio: RECIO_NO_STDIO still references: $$bad"; exit 1; fi; \
	  echo "recio: RECIO_NO_STDIO references no OS call"
	@if $(FS_CC) $(FS_FLAGS) -DRECIO_NO_STDIO -DRECIO_THREADS -c recio_impl.c -o $(FS)/threads.o 2>$(FS)/threads.err; then \
	  echo "recio: RECIO_THREADS built without threads"; exit 1; fi; \
	  if [ "$$(grep -c ': error:' $(FS)/threads.err)" != 1 ] || ! grep -q 'RECIO_THREADS needs POSIX or Win32 threads' $(FS)/threads.err; then \
	    cat $(FS)/threads.err; echo "recio: RECIO_THREADS should stop at one #error"; exit 1; fi; \
	  echo "recio: RECIO_THREADS stops at: $$(grep -m1 -o 'RECIO_THREADS needs[^:]*' $(FS)/threads.err)"
	$(FS_CC) $(FS_FLAGS) --specs=nosys.specs tests/test_freestanding.c $(FS)/recio.o -o $(FS)/freestanding.elf -lm
	$(FS_CC) $(FS_FLAGS) --specs=nosys.specs examples/board_infer.c -o $(FS)/board_infer.elf -lm
	@$(FS_X)size $(FS)/freestanding.elf $(FS)/board_infer.elf
	$(FS_CC) $(FS_FLAGS) $(FS_RUN) tests/test_freestanding.c $(FS)/recio.o -o $(FS)/freestanding_run.elf -lm
	$(FS_CC) $(FS_FLAGS) $(FS_RUN) examples/board_infer.c -o $(FS)/board_infer_run.elf -lm
	@if ! command -v qemu-system-arm >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "recio: installing qemu-system-arm"; \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-system-arm >/dev/null; } || true; fi; \
	if ! command -v qemu-system-arm >/dev/null 2>&1; then \
	  echo "recio: freestanding run skipped: qemu-system-arm is not installed (apt-get install qemu-system-arm)"; \
	else echo "recio: running on a Cortex-M4 (qemu-system-arm -M mps2-an386)"; \
	  RUN="timeout 60 $(FS_QEMU)" tests/run.sh $(FS)/freestanding_run.elf $(FS)/board_infer_run.elf; fi

# docs/footprint.md: recio's bytes per feature set on x86-64, armhf thumb and Cortex-M4 (-Os), read
# from linker maps (needs the armhf and arm-none-eabi compilers: make cross ARCH=armhf, freestanding).
.PHONY: footprint
footprint:
	tools/footprint.sh docs/footprint.md

# tcc (Debian tcc, installed when missing and allowed) builds the header as it is, threads and images
# included, and the strict-C99 test it builds passes.
.PHONY: tcc
tcc: deps
	@command -v tcc >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq tcc >/dev/null; } \
	  || { echo "recio: install tcc"; exit 1; }
	@mkdir -p build/tcc
	tcc -I. -I$(STB) -DRECIO_THREADS -c recio_impl.c -o build/tcc/recio.o
	tcc -I. -I$(STB) -DRECIO_THREADS tests/test_strict_c99.c -o build/tcc/test_strict_c99 -lm -lpthread
	@tests/run.sh build/tcc/test_strict_c99

# Cross builds run the test suite under qemu-user; s390x is big-endian.
ARCH ?= s390x
TRIPLE_aarch64 = aarch64-linux-gnu
TRIPLE_armhf   = arm-linux-gnueabihf
TRIPLE_s390x   = s390x-linux-gnu
QEMU_aarch64 = qemu-aarch64
QEMU_armhf   = qemu-arm
QEMU_s390x   = qemu-s390x
# Debian's armhf compiler defaults to VFP without NEON; boards with NEON (Cortex-A7 and up) build
# with -mfpu=neon, and so do these tests, so that the NEON kernel column runs under QEMU.
XFLAGS_armhf = -mfpu=neon
TRIPLE = $(TRIPLE_$(ARCH))
TRIPLE_win64 = x86_64-w64-mingw32
cross: deps
	@[ -n "$(TRIPLE)" ] || { echo "recio: ARCH must be aarch64, armhf, s390x or win64"; exit 2; }
	@if [ "$(ARCH)" = win64 ]; then $(MAKE) --no-print-directory cross-win64; else $(MAKE) --no-print-directory cross-linux; fi
.PHONY: cross-linux cross-win64
cross-win64:
	@if ! command -v $(TRIPLE)-gcc >/dev/null 2>&1 || ! command -v $(TRIPLE)-g++ >/dev/null 2>&1 || ! command -v wine >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64 >/dev/null; \
	  else echo "recio: install gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64"; exit 1; fi; fi
	@[ -d build/wine ] || { echo "recio: making a wine prefix in build/wine"; mkdir -p build/wine && $(WINE)boot -i >/dev/null 2>&1; }
	$(MAKE) test-portable BUILD=build/win64 EXE=.exe CC=$(TRIPLE)-gcc CXX=$(TRIPLE)-g++ AR=$(TRIPLE)-ar \
	  LDFLAGS=-static RUN="$(WINE)"
# Under qemu-user the portable C suite runs (the library's byte order and word size are its subject:
# records, index, split, image, iterator, kernels, the fuzz corpora); the command-line, Python and
# packaging suites, which add no byte-order path of their own, run natively. The whole suite under
# emulation took over ten of CI's minutes.
cross-linux: cross-tools
	$(MAKE) test-portable RECIO="$(QEMU_$(ARCH)) -L /usr/$(TRIPLE) $(abspath build/$(ARCH)/recio)" BUILD=build/$(ARCH) CC=$(TRIPLE)-gcc CXX=$(TRIPLE)-g++ AR=$(TRIPLE)-ar \
	  EXTRA_CFLAGS="$(XFLAGS_$(ARCH))" RUN="$(QEMU_$(ARCH)) -L /usr/$(TRIPLE)"
cross-tools:
	@[ -n "$(TRIPLE)" ] || { echo "recio: ARCH must be aarch64, armhf or s390x"; exit 2; }
	@if ! command -v $(TRIPLE)-gcc >/dev/null 2>&1 || ! command -v $(TRIPLE)-g++ >/dev/null 2>&1 || ! command -v $(QEMU_$(ARCH)) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq gcc-$(TRIPLE) g++-$(TRIPLE) qemu-user >/dev/null; \
	  else echo "recio: install gcc-$(TRIPLE) g++-$(TRIPLE) qemu-user"; exit 1; fi; fi
# The kernel columns of another architecture under qemu-user (make bench-cross ARCH=aarch64): the
# best column (NEON on ARM) against RECIO_NO_SIMD in one process, timed; then the guest instructions
# each executes per image (a QEMU plugin, bench/qemu_insns.c). QEMU emulates NEON with helper calls,
# so its times are not a board's: the instruction counts are the measure that carries over.
bench-cross: deps bench-data cross-tools
	@$(MAKE) --no-print-directory build/$(ARCH)/bench/bench_kernels BUILD=build/$(ARCH) CC=$(TRIPLE)-gcc AR=$(TRIPLE)-ar \
	  EXTRA_CFLAGS="$(XFLAGS_$(ARCH))" RUN="$(QEMU_$(ARCH))"
	$(QEMU_$(ARCH)) -L /usr/$(TRIPLE) build/$(ARCH)/bench/bench_kernels $(BENCH_DATA)/imagenet1k.lst 30 5
	@mkdir -p build/bench && $(CC) -std=c99 $(WARN) -O2 -shared -fPIC bench/qemu_insns.c -o build/bench/qemu_insns.so
	@bench/qemu_count.sh "$(QEMU_$(ARCH)) -L /usr/$(TRIPLE)" build/bench/qemu_insns.so build/$(ARCH)/bench/bench_kernels \
	  $(BENCH_DATA)/imagenet1k.lst 10 $(if $(filter s390x,$(ARCH)),scalar,neon)

# Also: the man page recio.1, made from the commands' own --help (tools/mkman.sh), the docs, a CMake
# package (find_package(recio) gives recio::recio; CMakeLists.txt builds and installs its own), and the
# Python package in PYDIR: the site-packages folder under PREFIX on $(PYTHON)'s own path (Debian:
# PREFIX=/usr/local -> /usr/local/lib/python3.X/dist-packages), else PREFIX's lib/python3.X/site-packages.
# It finds PREFIX/lib/librecio.so three folders up. (`pip install .` is the other way: docs/python.md.)
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYDIR  ?= $(shell $(PYTHON) -c 'import site, sys, sysconfig; p = sys.argv[1].rstrip("/"); \
  d = [s for s in site.getsitepackages() if s.startswith(p + "/lib/")]; \
  print(d[0] if d else sysconfig.get_path("purelib", "posix_prefix", vars={"base": p, "platbase": p}))' $(PREFIX) 2>/dev/null \
  || echo $(PREFIX)/lib/python3/dist-packages)
install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/lib/cmake/recio $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/recio
	install -m 644 recio.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/librecio.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/$(SOFILE) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(SOFILE) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SOFILE) $(DESTDIR)$(PREFIX)/lib/librecio.so
	install -m 755 $(BUILD)/recio $(DESTDIR)$(PREFIX)/bin/
	tools/mkman.sh "$(RUN) $(TOOLS)" $(PREFIX)/share/doc/recio > $(DESTDIR)$(PREFIX)/share/man/man1/recio.1
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/recio/
	sed -e 's|@SOFILE@|$(SOFILE)|' -e 's|@SONAME@|$(SONAME)|' cmake/recioConfig.make.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/recio/recioConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@MAJOR@|$(VERSION_MAJOR)|' cmake/recioConfigVersion.make.cmake.in \
	  > $(DESTDIR)$(PREFIX)/lib/cmake/recio/recioConfigVersion.cmake
	install -d $(DESTDIR)$(PYDIR)/recio/mx
	install -m 644 python/recio/*.py python/recio/py.typed $(DESTDIR)$(PYDIR)/recio/
	install -m 644 python/recio/mx/*.py $(DESTDIR)$(PYDIR)/recio/mx/
	printf '"""The version of recio.h, written by make install."""\n__version__ = "%s"\n' $(VERSION) > $(DESTDIR)$(PYDIR)/recio/_version.py
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e "s|@JPEG_LIBS@|$(JPEG_LIBS) $(CURL_LIBS)|" recio.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/recio.pc

clean:
	rm -rf build

# The iterator tests share their cases through headers.
$(BUILD)/tests/test_iter $(BUILD)/tests/test_iter_nothreads: tests/iter_cases.h tests/iter_util.h
$(BUILD)/tests/test_iter_images $(BUILD)/tests/test_iter_cache: tests/iter_util.h
