# recio: `make` builds the library, the CLI and the examples under build/.
#   make test       run the test suite (installs libstb-dev first when missing)
#   make demo       the main job, end to end, on the sample data
#   make sanitize   the tests under ASan + UBSan        make tsan   threaded tests under TSan
#   make bench      benchmarks (tables with ratios; docs/bench.md), on the set `make bench-data` makes
#   make bench-cross ARCH=aarch64   kernel columns under qemu  make cross ARCH=aarch64|armhf|s390x
#   make install PREFIX=/usr/local                      make clean
CC      ?= cc
CXX     ?= c++
# JPEG decoding: libjpeg-turbo (RECIO_TURBOJPEG, -ljpeg) by default, installed when missing and allowed;
# `make JPEG=stb` builds the stb_image-only decoder, into build/stb.
JPEG    ?= turbo
BUILD   ?= build$(if $(filter stb,$(JPEG)),/stb)
OPT     ?= -O2
STB     ?= /usr/include/stb
PREFIX  ?= /usr/local
RUN     ?=
WARN     = -Wall -Wextra -Wpedantic -Werror
CPPFLAGS = -I. -I$(STB) -D_FILE_OFFSET_BITS=64 -DRECIO_THREADS $(JPEG_CFLAGS)
CFLAGS_R = -std=c99 $(WARN) $(OPT) $(EXTRA_CFLAGS)
LDLIBS   = $(JPEG_LIBS) -lm -lpthread
HDR      = recio.h

TOOLS    = $(BUILD)/recio
EXAMPLES = $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out examples/mpi_%,$(wildcard examples/*.c)))
FUZZERS  = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
TESTS    = $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c)) $(BUILD)/tests/test_cpp \
           $(patsubst %,$(BUILD)/tests/fuzz_%,$(FUZZERS))
BENCHES  = $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/bench_*.c))
BENCHES_CV = $(patsubst bench/%.cpp,$(BUILD)/bench/%,$(wildcard bench/bench_*.cpp))

.PHONY: all deps turbo-deps test demo sanitize tsan bench bench-data bench-cross torchvision opencv cross cross-tools install clean fuzz
all: deps $(BUILD)/librecio.a $(BUILD)/librecio.so $(TOOLS) $(EXAMPLES)

# Debian's libstb-dev carries stb_image(_resize,_write).h. Install it when missing and allowed.
deps: $(STB)/stb_image.h turbo-deps
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
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(LDLIBS)
$(BUILD)/recio: $(wildcard tools/*.c) tools/cli.h $(BUILD)/librecio.a
	$(CC) $(CPPFLAGS) -Itools $(CFLAGS_R) $(wildcard tools/*.c) -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
$(BUILD)/examples/%: examples/%.c $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
$(BUILD)/tests/%: tests/%.c tests/test.h $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
# libjpeg-turbo (its libjpeg API, -ljpeg) is probed with $(CC) when a recipe runs, after turbo-deps has
# installed libjpeg62-turbo-dev where it may (root, apt, native build). Where $(CC) cannot link it (a
# cross compiler without the target's library) the build says so and decodes JPEG with stb_image;
# the RECIO_TURBOJPEG tests are then reported as skipped.
TURBO_PROBE = printf '\043include <stdio.h>\n\043include <jpeglib.h>\nint main(void){struct jpeg_decompress_struct d;JDIMENSION x=0,w=1;jpeg_crop_scanline(&d,&x,&w);return 0;}\n' | $(CC) -x c - -o /dev/null -ljpeg 2>/dev/null
TURBO_IF = $(shell $(TURBO_PROBE) && echo $(1))
JPEG_CFLAGS = $(if $(filter turbo,$(JPEG)),$(call TURBO_IF,-DRECIO_TURBOJPEG))
JPEG_LIBS   = $(if $(filter turbo,$(JPEG)),$(call TURBO_IF,-ljpeg))
turbo-deps:
	@$(TURBO_PROBE) || [ -n "$(RUN)" ] || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1 || \
	  { echo "recio: installing libjpeg62-turbo-dev (the fast JPEG decoder)"; \
	    apt-get install -y -qq libjpeg62-turbo-dev >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libjpeg62-turbo-dev >/dev/null; } || true; }
	@[ "$(JPEG)" != turbo ] || $(TURBO_PROBE) || \
	  echo "recio: libjpeg-turbo cannot be linked with $(CC): JPEGs decode through stb_image (install libjpeg62-turbo-dev for the target, or say JPEG=stb)"
$(BUILD)/tests/test_image_turbo: tests/test_image_turbo.c tests/test.h $(BUILD)/librecio.a | turbo-deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS) $(call TURBO_IF,-DRECIO_TEST_TURBO -ljpeg)
# The header, implementation included, must also be clean C++.
$(BUILD)/tests/test_cpp: tests/cpp_unit.cpp tests/test.h $(HDR) | deps
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(WARN) $(OPT) $(EXTRA_CFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)
# Each libFuzzer harness also builds as a test that replays its corpus (tests/data/fuzz/NAME).
$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) -DFUZZ_NAME='"$*"' $< tests/fuzz/replay.c -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS)
$(BUILD)/bench/%: bench/%.c bench/bench.h $(BUILD)/librecio.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_R) $< -o $@ $(BUILD)/librecio.a $(LDFLAGS) $(LDLIBS) $(BENCH_LIBS)

# The MPI example is built only on request (OpenMPI from Debian's libopenmpi-dev).
.PHONY: mpi-example
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
NOIMG_TESTS = $(patsubst %,$(NOIMG)/tests/%,test_recordio test_split_compat test_split_props test_prefetch test_iter \
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

test: all $(TESTS) $(NOIMG_TESTS) $(NOIMG)/copy_records
	@RUN="$(RUN)" RECIO="$(RUN) $(abspath $(TOOLS))" tests/run.sh $(TESTS) $(NOIMG_TESTS)

demo: all
	@RECIO=$(BUILD)/recio sh examples/demo.sh

sanitize:
	$(MAKE) test BUILD=build/asan$(if $(filter stb,$(JPEG)),-stb) OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" LDFLAGS="-fsanitize=address,undefined"

tsan:
	$(MAKE) test BUILD=build/tsan$(if $(filter stb,$(JPEG)),-stb) OPT="-O1 -g" EXTRA_CFLAGS="-fsanitize=thread" LDFLAGS="-fsanitize=thread"

bench: all bench-data $(BENCHES) $(BENCHES_CV)
	@for b in $(BENCHES) $(BENCHES_CV); do echo "== $$b"; $$b || exit 1; done

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
	  -o $(BENCH_DATA)/gen_photos build/librecio.a $(LDFLAGS) $(call TURBO_IF,-ljpeg) -lm -lpthread
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
# regression in tests/data/fuzz/NAME/ once fixed.
FUZZ_SECONDS ?= 60
# Images fuzz through libjpeg-turbo too when it is installed; a small pixel cap keeps a lying header
# from spending the run on one 2^28-pixel grey image.
FUZZ_FLAGS = -DRECIO_MAX_PIXELS=4000000 $(call TURBO_IF,-DRECIO_TURBOJPEG -ljpeg)
fuzz: deps turbo-deps
	@command -v clang >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq clang >/dev/null; } \
	  || { echo "recio: install clang for libFuzzer"; exit 1; }
	@for f in $(FUZZERS); do mkdir -p build/fuzz/$$f build/fuzz/corpus-$$f; \
	  clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(CPPFLAGS) tests/fuzz/fuzz_$$f.c recio_impl.c -o build/fuzz/fuzz_$$f $(LDLIBS) $(FUZZ_FLAGS) || exit 1; \
	  echo "== fuzz_$$f for $(FUZZ_SECONDS) s"; \
	  build/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=build/fuzz/$$f/ -print_final_stats=1 \
	    build/fuzz/corpus-$$f tests/data/fuzz/$$f tests/data/compat tests/data/photos 2>&1 | tail -4 || exit 1; done

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
cross: deps cross-tools
	$(MAKE) test BUILD=build/$(ARCH) CC=$(TRIPLE)-gcc CXX=$(TRIPLE)-g++ AR=$(TRIPLE)-ar \
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

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 recio.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/librecio.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/librecio.so $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/recio $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e "s|@JPEG_LIBS@|$(JPEG_LIBS)|" recio.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/recio.pc

clean:
	rm -rf build

# The iterator tests share their cases through headers.
$(BUILD)/tests/test_iter $(BUILD)/tests/test_iter_nothreads: tests/iter_cases.h tests/iter_util.h
$(BUILD)/tests/test_iter_images: tests/iter_util.h
