/* The commands' shared argument checks, in a file of their own so that the fuzz harness
   (tests/fuzz/fuzz_cli.c) reaches the very code the commands run. */
#include "cli.h"
#include <errno.h>
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
