/* How the bare-metal self-test reports on QEMU's mps2-an386 board (a Cortex-M4): through Arm
 * semihosting, a line of text and an exit status QEMU passes on (0 when every check passed, 1
 * otherwise), so that ctest runs the image and fails when a check fails; an image that never
 * finishes is stopped by the test's timeout. */
#include "firmware.h"

/* Arm semihosting: operation in r0, argument in r1, `bkpt 0xAB` on M-profile. */
static int semihost(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
enum { sys_write0 = 0x04, sys_exit = 0x18 };
#define APPLICATION_EXIT 0x20026u /* ADP_Stopped_ApplicationExit: status 0 */
#define RUNTIME_ERROR 0x20023u    /* ADP_Stopped_RunTimeErrorUnknown: 1 */

static void print(const char* s) { semihost(sys_write0, s); }
static void print_number(uint32_t v) {
  char buf[12];
  char* p = buf + sizeof buf - 1;
  *p = 0;
  do *--p = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  print(p);
}

_Noreturn void fw_report(int result, uint32_t stack_used) {
#ifdef FW_FORCE_FAIL
  result = 99; /* the harness's own check: a failing self-test must fail the test */
#endif
  if (result == 0) {
    print(
        "firmware self-test on Cortex-M4 (QEMU mps2-an386): RH, PDU, packer, go-back-N, SUE "
        "instance: ok\n");
  } else {
    print("firmware self-test on Cortex-M4 (QEMU mps2-an386) FAILED at step ");
    print_number((uint32_t)result);
    print("\n");
  }
  print("stack high-water mark: ");
  print_number(stack_used);
  print(" bytes\n");
  semihost(sys_exit, (const void*)(uintptr_t)(result == 0 ? APPLICATION_EXIT : RUNTIME_ERROR));
  for (;;) {
  }
}
