// Bare-metal entry for a Cortex-M: the vector table, a reset handler that zeroes .bss, copies
// .data and runs the self-test, and a result word a debugger (or a semihosting harness) reads.
#include <cstddef>
#include <cstdint>

#include "firmware.hpp"

extern "C" {
extern std::uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();
volatile std::int32_t selftest_result = -1;

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
  for (auto* f = __init_array_start; f < __init_array_end; ++f) (*f)();
  selftest_result = fw::selftest();
  for (;;) {
  }
}

[[noreturn]] void Default_Handler() {
  for (;;) {
  }
}

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
