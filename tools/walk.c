/* recio list's folder walk: which files, in which order, with which labels (as MXNet's im2rec). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "pack.h"
#include "walk.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct strvec {
    char **v;
    size_t n, cap;
} strvec;

static int strvec_push(strvec *s, char *str) {
    if (!str) return -1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **v = (char **)realloc(s->v, cap * sizeof *v);
        if (!v) return free(str), -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    return 0;
}

static void strvec_free(strvec *s) {
    size_t i;
    for (i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Case-insensitive suffix match against a comma-separated list such as ".jpg,.jpeg,.png" (the dots
   may be left out: "jpg,png"). */
static int has_ext(const char *name, const char *exts) {
    const char *dot = strrchr(name, '.');
    size_t n;
    if (!dot) return 0;
    n = strlen(++dot);
    while (*exts) {
        const char *end = strchr(exts, ',');
        size_t k = end ? (size_t)(end - exts) : strlen(exts), i;
        const char *e = exts + (*exts == '.');
        if (k - (size_t)(e - exts) == n) {
            for (i = 0; i < n && (dot[i] | 0x20) == (e[i] | 0x20); i++) {}
            if (i == n) return 1;
        }
        exts += k + (end != NULL);
    }
    return 0;
}

/* A tab, newline or carriage return in a name would break the list's line format: "7<TAB>ok.jpg" reads
   back as label 7 for another file, a newline makes the whole list unreadable. Such a file or
   folder is left out, and said so (tabs and line breaks shown as \t, \n, \r). */
static int unlistable(const char *path, const char *name) {
    char shown[1024];
    size_t n = 0;
    if (!strpbrk(name, "\t\n\r")) return 0;
    for (; *path && n + 3 < sizeof shown; path++) {
        const char *esc = *path == '\t' ? "\\t" : *path == '\n' ? "\\n" : *path == '\r' ? "\\r" : NULL;
        if (esc) shown[n++] = esc[0], shown[n++] = esc[1];
        else shown[n++] = *path;
    }
    shown[n] = 0;
    cli_err("%s: skipped: a tab or line break in the name does not fit the .lst format", shown);
    return 1;
}

/* Names in DIR (relative path rel under root): image files into files, sub-folders into dirs;
   both sorted. Symbolic links are followed, as im2rec's os.walk(followlinks=True) does. */
static int read_dir(const char *root, const char *rel, const char *exts, strvec *files, strvec *dirs, strvec *links) {
    char *full = pack_join(root, rel);
    DIR *d = full ? opendir(full) : NULL;
    struct dirent *e;
    int rc = 0;
    if (!d) {
        cli_err("%s: cannot open folder: %s", full ? full : rel, strerror(errno));
        free(full);
        return -1;
    }
    while (!rc && (e = readdir(d)) != NULL) {
        struct stat st;
        char *p;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        p = pack_join(full, e->d_name);
        if (!p || stat(p, &st) != 0) {
            free(p);
            continue; /* a dangling link or a file gone meanwhile: not an image we can list */
        }
        if (S_ISDIR(st.st_mode) && dirs && !unlistable(p, e->d_name)) {
            struct stat lst;
            int link = links && lstat(p, &lst) == 0 && S_ISLNK(lst.st_mode);
            rc = strvec_push(link ? links : dirs, pack_join(rel, e->d_name));
        }
        else if (S_ISREG(st.st_mode) && has_ext(e->d_name, exts) && !unlistable(p, e->d_name))
            rc = strvec_push(files, pack_join(rel, e->d_name));
        free(p);
    }
    closedir(d);
    free(full);
    if (rc) cli_err("out of memory");
    if (files->n > 1) qsort(files->v, files->n, sizeof(char *), cmp_str);
    if (dirs && dirs->n > 1) qsort(dirs->v, dirs->n, sizeof(char *), cmp_str);
    if (links && links->n > 1) qsort(links->v, links->n, sizeof(char *), cmp_str);
    return rc;
}

/* The folders walked so far, by (device, inode): a set with open addressing. With links followed, a
   loop (a link to a parent) or a lattice of links (two links to one folder, at every level) would
   make the walk endless or exponential; each folder is walked once instead. */
typedef struct dirset {
    struct dirkey {
        unsigned long long dev, ino;
        int used;
    } *v;
    size_t n, cap;
} dirset;

static size_t dirset_slot(const dirset *s, unsigned long long dev, unsigned long long ino) {
    size_t i = (size_t)((dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full)) & (s->cap - 1);
    while (s->v[i].used && (s->v[i].dev != dev || s->v[i].ino != ino)) i = (i + 1) & (s->cap - 1);
    return i;
}

/* 1 when root/rel was walked before, 0 when it is new (now recorded), -1 when out of memory. A folder
   that cannot be looked at counts as new: reading it then says why. */
static int dirset_seen(dirset *s, const char *root, const char *rel) {
    struct stat st;
    char *full = pack_join(root, rel);
    size_t i;
    int ok = full && stat(full, &st) == 0;
    free(full);
    if (!ok) return 0;
    if (2 * (s->n + 1) > s->cap) { /* grow: keep the load under one half */
        dirset g = {NULL, 0, s->cap ? 2 * s->cap : 64};
        if (!(g.v = (struct dirkey *)calloc(g.cap, sizeof *g.v))) return -1;
        for (i = 0; i < s->cap; i++)
            if (s->v[i].used) g.v[dirset_slot(&g, s->v[i].dev, s->v[i].ino)] = s->v[i], g.n++;
        free(s->v);
        *s = g;
    }
    i = dirset_slot(s, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    if (s->v[i].used) return 1;
    s->v[i].dev = (unsigned long long)st.st_dev, s->v[i].ino = (unsigned long long)st.st_ino, s->v[i].used = 1;
    s->n++;
    return 0;
}

/* The folders under rel, depth first, into out; links to folders are not entered but queued in links,
   so a folder in the tree is always named by its own path, never by a link's. */
static int all_dirs(const char *root, const char *rel, const char *exts, strvec *out, strvec *links, dirset *seen, int depth) {
    strvec files = {0}, dirs = {0};
    size_t i;
    int rc, k;
    if (depth > 64) return cli_err("%s: folders nested deeper than 64", rel), -1;
    rc = read_dir(root, rel, exts, &files, &dirs, links);
    strvec_free(&files);
    for (i = 0; !rc && i < dirs.n; i++) {
        if ((k = dirset_seen(seen, root, dirs.v[i])) < 0) rc = -1, cli_err("out of memory");
        else if (k == 0 && !(rc = strvec_push(out, pack_cat(dirs.v[i], "")))) /* k: walked already, in a link's tree */
            rc = all_dirs(root, dirs.v[i], exts, out, links, seen, depth + 1);
    }
    strvec_free(&dirs);
    return rc;
}

static int depth_of(const char *rel) {
    int d = 1;
    for (; *rel; rel++) d += *rel == '/';
    return d;
}

/* Every folder under root (root itself as ""), each once: the tree itself, then what its links lead
   to that the tree does not hold (as im2rec, links are followed; unlike os.walk, a link loop or a
   second link to a folder does not walk it again: said once, with a count). Sorted afterwards. */
static int every_dir(const char *root, const char *exts, strvec *out) {
    strvec links = {0};
    dirset seen = {NULL, 0, 0};
    size_t i, again = 0;
    int rc = dirset_seen(&seen, root, "") < 0 ? -1 : all_dirs(root, "", exts, out, &links, &seen, 0), k;
    for (i = 0; !rc && i < links.n; i++) {
        if ((k = dirset_seen(&seen, root, links.v[i])) < 0) rc = -1, cli_err("out of memory");
        else if (k > 0 && again++ == 0) cli_err("%s/%s: a link to a folder listed already: not followed", root, links.v[i]);
        else if (k == 0 && !(rc = strvec_push(out, pack_cat(links.v[i], ""))))
            rc = all_dirs(root, links.v[i], exts, out, &links, &seen, depth_of(links.v[i]));
    }
    if (again > 1) cli_err("%zu links to folders listed already were not followed", again);
    strvec_free(&links);
    free(seen.v);
    return rc;
}

static int push_item(list_item **items, size_t *n, size_t *cap, const char *path, unsigned label) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        list_item *v = (list_item *)realloc(*items, c * sizeof *v);
        if (!v) return -1;
        *items = v;
        *cap = c;
    }
    (*items)[*n].index = *n;
    (*items)[*n].label = label;
    (*items)[*n].path = pack_cat(path, "");
    (*items)[*n].mask = NULL;
    return (*items)[(*n)++].path ? 0 : -1;
}

int walk_collect(const char *root, int recursive, const char *exts, list_item **items, size_t *count, FILE *labels) {
    strvec dirs = {0};
    size_t i, j, cap = 0;
    unsigned label = 0;
    int rc = strvec_push(&dirs, pack_cat("", ""));
    *items = NULL;
    *count = 0;
    if (!rc && recursive) rc = every_dir(root, exts, &dirs);
    if (!rc) qsort(dirs.v, dirs.n, sizeof(char *), cmp_str); /* im2rec sorts folders by path */
    for (i = 0; !rc && i < dirs.n; i++) {
        strvec files = {0};
        rc = read_dir(root, dirs.v[i], exts, &files, NULL, NULL);
        for (j = 0; !rc && j < files.n; j++) rc = push_item(items, count, &cap, files.v[j], label);
        if (!rc && files.n && recursive && labels) fprintf(labels, "%s\t%u\n", *dirs.v[i] ? dirs.v[i] : ".", label);
        if (!rc && files.n && recursive) label++;
        strvec_free(&files);
    }
    strvec_free(&dirs);
    return rc;
}

