/* libFuzzer harness: `recio list --recursive`'s folder walk (tools/walk.c, compiled in here) over a
   tree the input builds: folders, image and other files, and links (to ".", "..", a sibling, a file,
   nowhere, the root), with any bytes in the names (tabs, line breaks, non-UTF-8). A crash, a hang
   (libFuzzer's -timeout), a listed path that is not a file under the root, a name that breaks the
   .lst format, or more entries than the tree has files and links is a failure. Everything is made
   under one temporary folder and never through a link. POSIX only. */
#define _POSIX_C_SOURCE 200809L
#include "../../tools/pack_files.c"
#include "../../tools/walk.c"
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_err(const char *fmt, ...) { (void)fmt; } /* the walk's messages are not under test here */

static char base[80];

static void remove_base(void) {
    rmdir(base);
    *strrchr(base, '/') = 0;
    rmdir(base);
}

/* Remove path and everything under it, never following links. */
static void rm_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char *p;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if ((p = pack_join(path, e->d_name)) != NULL) rm_tree(p), free(p);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* The next name from the input: 1..12 bytes, '/' and NUL made '_' ("." and ".." become "d"). */
static const uint8_t *take_name(const uint8_t *p, const uint8_t *end, char *name) {
    size_t n = p < end ? (size_t)(*p++ % 12) + 1 : 1, i;
    for (i = 0; i < n; i++) {
        char c = p < end ? (char)*p++ : 'x';
        name[i] = c == '/' || c == 0 ? '_' : c;
    }
    name[n] = 0;
    if (!strcmp(name, ".") || !strcmp(name, "..")) strcpy(name, "d");
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const targets[] = {".", "..", "../..", "x", "x/y", "/nonexistent", "a.jpg", ""};
    static const char *const exts[] = {".jpg", ".png", ".txt", ".JPG", ""};
    const uint8_t *p = data, *end = data + size;
    char root[128], cur[4096], last[4096], name[16], *path;
    list_item *items = NULL;
    size_t n = 0, i, made = 0;
    int ops = 0;
    if (!base[0]) {
        strcpy(base, "/tmp/recio-fuzzwalk-XXXXXX");
        if (!mkdtemp(base)) abort();
        strcat(base, "/a"); /* the root two below the temporary folder: "../.." stays inside it */
        if (mkdir(base, 0755) != 0) abort();
        atexit(remove_base);
    }
    snprintf(root, sizeof root, "%s/t", base);
    rm_tree(root);
    if (mkdir(root, 0755) != 0) abort();
    strcpy(cur, root);
    last[0] = 0;
    while (p < end && ops++ < 64) {
        int op = *p++ % 6;
        p = take_name(p, end, name);
        if (!(path = pack_join(cur, name))) break;
        if (op == 0 && mkdir(path, 0755) == 0) snprintf(last, sizeof last, "%s", path);
        else if (op == 1 || op == 2) { /* a file, an image by its name or not */
            char file[4200];
            int fd;
            snprintf(file, sizeof file, "%s%s", path, exts[(p < end ? *p++ : 0) % 5]);
            /* O_EXCL: never through a link made earlier (one to "/nonexistent" would create it) */
            if ((fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0) {
                if (write(fd, "x", 1) == 1) made++;
                close(fd);
            }
        } else if (op == 3) { /* a link */
            const char *t = targets[(p < end ? *p++ : 0) % 8];
            if (!*t) t = root;
            if (symlink(t, path) == 0) made++;
        } else if (op == 4 && last[0] && strlen(last) < 512) {
            strcpy(cur, last);
        } else if (op == 5 && strcmp(cur, root) != 0) {
            *strrchr(cur, '/') = 0;
        }
        free(path);
    }
    if (walk_collect(root, 1, ".jpg,.png", &items, &n, NULL) == 0) {
        if (n > made) abort(); /* every entry is a file made, or a link made */
        for (i = 0; i < n; i++) {
            struct stat st;
            char *full = pack_join(root, items[i].path);
            if (strpbrk(items[i].path, "\t\n\r") || !full || stat(full, &st) != 0 || !S_ISREG(st.st_mode)) abort();
            free(full);
        }
    }
    for (i = 0; i < n; i++) free(items[i].path);
    free(items);
    rm_tree(root);
    return 0;
}
