/* A QEMU TCG plugin that counts the guest instructions a program executes (prints
   "guest instructions: N" on stderr at exit): qemu-aarch64 -plugin ./qemu_insns.so PROGRAM ...
   Under QEMU, NEON code is emulated with helper calls and can take longer than plain C, so time
   says little about a real core; instruction counts are the portable measure (bench/qemu_count.sh).
   Debian ships no qemu-plugin.h, so the few declarations of the plugin API (version 1, QEMU 7.x)
   this file uses are written out here. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr, uint64_t imm);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;
static uint64_t insns;

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns(tb));
}

static void finished(qemu_plugin_id_t id, void *p) {
    (void)id, (void)p;
    fprintf(stderr, "guest instructions: %" PRIu64 "\n", insns);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info, (void)argc, (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, finished, NULL);
    return 0;
}
