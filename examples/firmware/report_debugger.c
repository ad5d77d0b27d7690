/* How the bare-metal self-test reports on a board without a host connection: result words a
 * debugger reads (`selftest_result`: 0 when every check passed, else the failing step;
 * `selftest_stack_used`: the stack's high-water mark in bytes). */
#include "firmware.h"

volatile int32_t selftest_result = -1;
volatile uint32_t selftest_stack_used = 0;

_Noreturn void fw_report(int result, uint32_t stack_used) {
  selftest_result = result;
  selftest_stack_used = stack_used;
  for (;;) {
  }
}
