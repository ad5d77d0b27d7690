// How the bare-metal self-test reports on QEMU's mps2-an386 board (a Cortex-M4): through Arm
// semihosting, a line of text and an exit status QEMU passes on (0 when every check passed, 1
// otherwise), so that ctest runs the image and fails when a check fails; an image that never
// finishes is stopped by the test's timeout.
#include <cstdint>

#include "firmware.hpp"

namespace {

// Arm semihosting: operation in r0, argument in r1, `bkpt 0xAB` on M-profile.
int semihost(int op, const void* arg) {
  register int r0 asm("r0") = op;
  register const void* r1 asm("r1") = arg;
  asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
constexpr int sys_write0 = 0x04;
constexpr int sys_exit = 0x18;
constexpr std::uintptr_t application_exit = 0x20026;  // ADP_Stopped_ApplicationExit: status 0
constexpr std::uintptr_t runtime_error = 0x20023;     // ADP_Stopped_RunTimeErrorUnknown: 1

void print(const char* s) { semihost(sys_write0, s); }
void print(std::uint32_t v) {
  char buf[12];
  char* p = buf + sizeof buf - 1;
  *p = 0;
  do *--p = static_cast<char>('0' + v % 10);
  while ((v /= 10) != 0);
  print(p);
}

}  // namespace

namespace fw {

[[noreturn]] void report(int result, std::uint32_t stack_used) {
#ifdef FW_FORCE_FAIL
  result = 99;  // the harness's own check: a failing self-test must fail the test
#endif
  if (result == 0) {
    print(
        "firmware self-test on Cortex-M4 (QEMU mps2-an386): RH, PDU, packer, go-back-N, SUE "
        "instance: ok\n");
  } else {
    print("firmware self-test on Cortex-M4 (QEMU mps2-an386) FAILED at step ");
    print(static_cast<std::uint32_t>(result));
    print("\n");
  }
  print("stack high-water mark: ");
  print(stack_used);
  print(" bytes\n");
  semihost(sys_exit, reinterpret_cast<const void*>(result == 0 ? application_exit : runtime_error));
  for (;;) {
  }
}

}  // namespace fw
