// CRC-32/ISO-HDLC by carry-less multiplication (PCLMULQDQ) for x86-64: Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al., 2009), in
// the bit-reflected form zlib and Chromium use. checksum.hpp calls it for the bulk of a long
// buffer when the CPU has the instructions; everything else (other targets, constant
// evaluation, short buffers, the tail) stays on the tables.
//
// Only GCC and Clang on x86-64: the kernel is compiled for PCLMUL and SSE4.1 through a function
// target attribute, so the rest of the program keeps the default -march and still runs on a
// CPU without them; crc32_clmul_available() asks the CPU once.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#ifndef SCALEUP_CRC32_CLMUL
#define SCALEUP_CRC32_CLMUL 1
#endif

#if SCALEUP_CRC32_CLMUL && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCALEUP_CRC32_HAS_CLMUL 1

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace scaleup::wire::detail {

// The kernel needs four 16-byte blocks to start its four-way fold.
inline constexpr std::size_t crc32_clmul_min = 64;

// Whether this CPU runs the kernel. Decided on first use, so even a static initializer that
// runs before libgcc's CPU probe gets the right answer (__builtin_cpu_init is idempotent).
inline bool crc32_clmul_available() noexcept {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  }();
  return ok;
}

// The folding constants, each (x^n mod P) bit-reflected over 33 bits, for the reflected
// polynomial P = 0x104C11DB7: k1 = x^(4*128+32), k2 = x^(4*128-32) fold 64 bytes ahead,
// k3 = x^(128+32), k4 = x^(128-32) fold 16 bytes ahead, k5 = x^64 takes 128 bits to 64.
// P' is P reflected and u' = floor(x^64 / P) reflected, for the final Barrett reduction.
// The unit tests recompute them and hold the kernel against the tables.
inline constexpr std::uint64_t crc32_k1 = 0x154442bd4, crc32_k2 = 0x1c6e41596;
inline constexpr std::uint64_t crc32_k3 = 0x1751997d0, crc32_k4 = 0x0ccaa009e;
inline constexpr std::uint64_t crc32_k5 = 0x163cd6124;
inline constexpr std::uint64_t crc32_p = 0x1db710641, crc32_u = 0x1f7011641;

__attribute__((target("pclmul,sse4.1"))) inline __m128i crc32_clmul_pair(std::uint64_t lo,
                                                                         std::uint64_t hi) {
  return _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
}

// x * (the 64-bit halves' constants) folded onto `next`: the low half of x times the low
// constant, the high half times the high one, both xored into the block 16 (or 64) bytes on.
__attribute__((target("pclmul,sse4.1"))) inline __m128i crc32_fold(__m128i x, __m128i k,
                                                                   __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

// Advances the running (not yet inverted) CRC register `crc` over p[0, n): n >= 64 and a
// multiple of 16. Unaligned loads only, and none past p + n.
__attribute__((target("pclmul,sse4.1"))) inline std::uint32_t crc32_clmul(std::uint32_t crc,
                                                                          const std::uint8_t* p,
                                                                          std::size_t n) noexcept {
  const auto load = [](const std::uint8_t* q) {
    return _mm_loadu_si128(static_cast<const __m128i*>(static_cast<const void*>(q)));
  };
  __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x2 = load(p + 16);
  __m128i x3 = load(p + 32);
  __m128i x4 = load(p + 48);
  p += 64;
  n -= 64;

  // Four independent chains, so the multiplier's latency is hidden.
  const __m128i k12 = crc32_clmul_pair(crc32_k1, crc32_k2);
  for (; n >= 64; p += 64, n -= 64) {
    x1 = crc32_fold(x1, k12, load(p));
    x2 = crc32_fold(x2, k12, load(p + 16));
    x3 = crc32_fold(x3, k12, load(p + 32));
    x4 = crc32_fold(x4, k12, load(p + 48));
  }

  const __m128i k34 = crc32_clmul_pair(crc32_k3, crc32_k4);
  x1 = crc32_fold(x1, k34, x2);
  x1 = crc32_fold(x1, k34, x3);
  x1 = crc32_fold(x1, k34, x4);
  for (; n >= 16; p += 16, n -= 16) x1 = crc32_fold(x1, k34, load(p));

  // 128 -> 64 bits: the low half times k4 onto the high half; then the low 32 bits times k5
  // onto the rest.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k34, 0x10));
  const __m128i k5 = crc32_clmul_pair(crc32_k5, 0);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
                     _mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5, 0x00));

  // Barrett: q = (low 32 bits * u') mod x^32, then x1 ^= q * P' leaves the CRC in bits 32-63.
  const __m128i pu = crc32_clmul_pair(crc32_p, crc32_u);
  __m128i q = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), pu, 0x10);
  q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), pu, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x1, q), 1));
}

}  // namespace scaleup::wire::detail

#else
#define SCALEUP_CRC32_HAS_CLMUL 0
#endif
