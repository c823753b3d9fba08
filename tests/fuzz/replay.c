/* Without libFuzzer: run a harness over its corpus (tests/data/fuzz/NAME/, the saved regressions and
   seeds) and the golden files, so `make test` replays them under any compiler and sanitizer.
   With file arguments, runs those instead. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    long sz;
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = (uint8_t *)malloc(sz > 0 ? (size_t)sz : 1);
    if (fread(b, 1, (size_t)sz, f) != (size_t)sz) sz = 0;
    fclose(f);
    LLVMFuzzerTestOneInput(b, (size_t)sz); /* a failure traps or a sanitizer aborts */
    free(b);
    return 1;
}

static int run_dir(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        n += run_file(path);
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    int i, n = 0;
    for (i = 1; i < argc; i++) n += run_file(argv[i]);
    if (argc == 1) {
        n += run_dir("tests/data/fuzz/" FUZZ_NAME);
        n += run_dir("tests/data/compat");
    }
    printf("fuzz replay %s: %d inputs\n", FUZZ_NAME, n);
    printf("%s: %d passed, %d failed\n", FUZZ_NAME, n > 0, n == 0);
    return n == 0;
}
