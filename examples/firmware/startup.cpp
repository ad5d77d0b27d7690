// Bare-metal entry for a Cortex-M: the vector table, a reset handler that zeroes .bss, copies
// .data, paints the free stack, runs the self-test and hands the result and the stack's
// high-water mark to fw::report (report_debugger.cpp for a board, report_semihosting.cpp for
// QEMU).
#include <cstddef>
#include <cstdint>

#include "firmware.hpp"

extern "C" {
extern std::uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();

// A freestanding image brings its own memcpy, memset and strlen: compiled code calls them.
void* memcpy(void* d, const void* s, std::size_t n) {
  auto* o = static_cast<unsigned char*>(d);
  const auto* i = static_cast<const unsigned char*>(s);
  while (n--) *o++ = *i++;
  return d;
}
void* memset(void* d, int v, std::size_t n) {
  auto* o = static_cast<unsigned char*>(d);
  while (n--) *o++ = static_cast<unsigned char>(v);
  return d;
}

std::size_t strlen(const char* s) {
  std::size_t n = 0;
  while (s[n]) ++n;
  return n;
}

[[noreturn]] void Reset_Handler() {
  for (std::uint32_t* p = &_sbss; p < &_ebss;) *p++ = 0;
  const std::uint32_t* s = &_sidata;
  for (std::uint32_t* d = &_sdata; d < &_edata;) *d++ = *s++;
  // Paint the free stack below this handler's own frame (with a margin); what the self-test
  // leaves unpainted is the stack it needed.
  constexpr std::uint32_t paint = 0x5CA1E0FFu;
  std::uint32_t* sp = nullptr;
  asm volatile("mov %0, sp" : "=r"(sp));
  for (std::uint32_t* p = &_ebss; p < sp - 16; ++p) *p = paint;
  for (auto* f = __init_array_start; f < __init_array_end; ++f) (*f)();
  const int result = fw::selftest();
  const std::uint32_t* low = &_ebss;
  while (low < sp && *low == paint) ++low;
  fw::report(result, static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&_estack) -
                                                reinterpret_cast<std::uintptr_t>(low)));
}

// A fault (or any unexpected exception) reports step 100.
[[noreturn]] void Default_Handler() { fw::report(100, 0); }

__attribute__((section(".isr_vector"), used)) void (*const vector_table[16])() = {
    reinterpret_cast<void (*)()>(&_estack),
    Reset_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    Default_Handler,
    Default_Handler,
    nullptr,
    Default_Handler,
    Default_Handler};
}
