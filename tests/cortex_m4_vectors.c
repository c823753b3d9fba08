/* The vector table a Cortex-M4 boots from, for running the freestanding programs under QEMU's MPS2
   AN386 board (make freestanding). The core reads its first stack pointer and its reset address
   from address 0, where the link puts this table (-Wl,--section-start=.vectors=0); newlib's rdimon
   start code (_start, from --specs=rdimon.specs) does the rest: it takes the stack and heap from
   the semihosting HEAPINFO call, clears .bss and calls main, and exit() hands the status to QEMU
   through semihosting. printf goes out the same way. Any other exception (a fault: a bad access or
   an undefined instruction) ends the run with status 2 instead of spinning until the timeout. */
#include <unistd.h>

extern void _start(void);

static void t_unexpected(void) {
    static const char msg[] = "cortex-m4: unexpected exception (a fault?)\n";
    write(1, msg, sizeof msg - 1);
    _exit(2);
}

/* Initial stack pointer (the top of the 4 MiB SRAM at 0x20000000; the start code moves it to
   what HEAPINFO reports), reset, then NMI, HardFault, MemManage, BusFault, UsageFault, four
   reserved, SVCall, DebugMonitor, reserved, PendSV, SysTick. */
__attribute__((section(".vectors"), used)) static void (*const t_vectors[16])(void) = {
    (void (*)(void))0x20400000u, _start, t_unexpected, t_unexpected, t_unexpected, t_unexpected, t_unexpected, 0,
    0, 0, 0, t_unexpected, t_unexpected, 0, t_unexpected, t_unexpected};
