/* Bare-metal entry for a Cortex-M: the vector table, a reset handler that zeroes .bss, copies
 * .data, paints the free stack, runs the self-test and hands the result and the stack's
 * high-water mark to fw_report (report_debugger.c for a board, report_semihosting.c for QEMU). */
#include "firmware.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
/* The C ABI's objects are C++: any constructor of theirs runs before the self-test. */
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

/* A freestanding image brings its own memcpy, memmove, memset and strlen: compiled code calls
 * them. */
void* memcpy(void* restrict d, const void* restrict s, size_t n);
void* memmove(void* d, const void* s, size_t n);
void* memset(void* d, int v, size_t n);
size_t strlen(const char* s);

void* memcpy(void* restrict d, const void* restrict s, size_t n) {
  unsigned char* o = d;
  const unsigned char* i = s;
  while (n--) *o++ = *i++;
  return d;
}
/* Overlapping buffers (a payload already in place) copy from the end when the destination is
 * after the source. */
void* memmove(void* d, const void* s, size_t n) {
  unsigned char* o = d;
  const unsigned char* i = s;
  if (o <= i || o >= i + n) {
    while (n--) *o++ = *i++;
  } else {
    while (n--) o[n] = i[n];
  }
  return d;
}
void* memset(void* d, int v, size_t n) {
  unsigned char* o = d;
  while (n--) *o++ = (unsigned char)v;
  return d;
}
size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

_Noreturn void Reset_Handler(void);
_Noreturn void Default_Handler(void);

_Noreturn void Reset_Handler(void) {
  for (uint32_t* p = &_sbss; p < &_ebss;) *p++ = 0;
  const uint32_t* s = &_sidata;
  for (uint32_t* d = &_sdata; d < &_edata;) *d++ = *s++;
  /* Paint the free stack below this handler's own frame (with a margin); what the self-test
   * leaves unpainted is the stack it needed. */
  const uint32_t paint = 0x5CA1E0FFu;
  uint32_t* sp = NULL;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (uint32_t* p = &_ebss; p < sp - 16; ++p) *p = paint;
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  const int result = fw_selftest();
  const uint32_t* low = &_ebss;
  while (low < sp && *low == paint) ++low;
  fw_report(result, (uint32_t)((uintptr_t)&_estack - (uintptr_t)low));
}

/* A fault (or any unexpected exception) reports step 100. */
_Noreturn void Default_Handler(void) { fw_report(100, 0); }

/* The initial stack pointer, then the handlers of the 15 system exceptions (ARMv7-M B1.5.3). */
__attribute__((section(".isr_vector"), used)) static const struct {
  const uint32_t* stack;
  void (*handler[15])(void);
} vector_table = {&_estack,
                  {Reset_Handler, Default_Handler, Default_Handler, Default_Handler,
                   Default_Handler, Default_Handler, NULL, NULL, NULL, NULL, Default_Handler,
                   Default_Handler, NULL, Default_Handler, Default_Handler}};
