/* The commands' shared argument checks, in a file of their own so that the fuzz harness
   (tests/fuzz/fuzz_cli.c) reaches the very code the commands run. */
#include "cli.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int cli_is_help(const char *a) { return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0; }

/* Decimal digits only: strtoull alone would also take a leading space or sign, and " -1" would
   become 18446744073709551615. */
int cli_parse_u64(const char *s, unsigned long long *out) {
    char *end;
    if (!s || *s < '0' || *s > '9') return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return (errno || *end) ? -1 : 0;
}

/* A '-' before the digits, nothing else: strtol would also take " 5", "+5" and "5 ". */
int cli_parse_int(const char *s, long long lo, long long hi, long long *out) {
    unsigned long long u;
    long long x;
    int neg = s && *s == '-';
    if (!s || cli_parse_u64(s + neg, &u) || u > (unsigned long long)LLONG_MAX) return -1;
    x = neg ? -(long long)u : (long long)u;
    if (x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

/* The grammar first, strtod after: strtod alone takes leading spaces, '+', hex ("0x1p-1"), "nan",
   "inf" and "" (as 0, when the caller forgets to check the end), none of which a user means. */
static int real_syntax(const char *p) {
    int digits = 0;
    if (*p == '-') p++;
    for (; *p >= '0' && *p <= '9'; p++) digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) digits++;
    if (!digits) return -1;
    if (*p == 'e' || *p == 'E') {
        p += p[1] == '+' || p[1] == '-' ? 2 : 1;
        if (*p < '0' || *p > '9') return -1;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p ? -1 : 0;
}

int cli_parse_real(const char *s, double lo, double hi, double *out) {
    char *end;
    double v;
    if (!s || real_syntax(s)) return -1;
    v = strtod(s, &end);
    if (*end || !(v >= lo && v <= hi)) return -1; /* also an overflow to infinity */
    *out = v;
    return 0;
}

int cli_int_opt(const char *cmd, const char *name, const char *v, long long lo, long long hi, long long *out) {
    if (!v) return cli_usage_error(cmd, "%s needs a value", name);
    if (cli_parse_int(v, lo, hi, out)) return cli_usage_error(cmd, "bad value '%s' for %s: a whole number from %lld to %lld", v, name, lo, hi);
    return 0;
}

int cli_real_opt(const char *cmd, const char *name, const char *v, double lo, double hi, double *out) {
    if (!v) return cli_usage_error(cmd, "%s needs a value", name);
    if (cli_parse_real(v, lo, hi, out)) return cli_usage_error(cmd, "bad value '%s' for %s: a number from %g to %g", v, name, lo, hi);
    return 0;
}
