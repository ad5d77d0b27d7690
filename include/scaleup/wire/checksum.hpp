// The checksums the formats need: CRC-32 for the R-CRC (and the Ethernet FCS it shares its
// polynomial with) and the Internet checksum for IPv4 and UDP.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/crc32_clmul.hpp"

namespace scaleup::wire {

// CRC-32/ISO-HDLC: reflected, polynomial 0x04C11DB7, init and final xor 0xFFFFFFFF
// (decisions.md "R-CRC"). Slicing-by-16: sixteen 256-entry tables built at compile time, 16
// bytes per step as two little-endian 64-bit loads (the reflected CRC takes each word's bytes
// in address order), then 8 bytes at a time, then bytewise. The tables take 16 KB; where memory
// is tight (a microcontroller's flash), define SCALEUP_CRC32_SLICES as 8 for slicing-by-8 and
// 8 KB (about 30 % slower on a desktop core) or as 1 for one table of 1 KB, a byte at a time,
// the same in every translation unit.
//
// On x86-64 with GCC or Clang, buffers of 64 bytes or more are folded by carry-less
// multiplication (PCLMULQDQ, wire/crc32_clmul.hpp: ~0.45 instructions a byte against ~3.8)
// when the CPU has it, asked once at run time; the last 0-15 bytes, shorter buffers and
// constant evaluation take the tables. Define SCALEUP_CRC32_CLMUL as 0 to keep the tables
// only, the same in every translation unit.
#ifndef SCALEUP_CRC32_SLICES
#define SCALEUP_CRC32_SLICES 16
#endif
static_assert(SCALEUP_CRC32_SLICES == 1 || SCALEUP_CRC32_SLICES == 8 || SCALEUP_CRC32_SLICES == 16,
              "SCALEUP_CRC32_SLICES is 1, 8 or 16");
namespace detail {
inline constexpr std::size_t crc32_slices = SCALEUP_CRC32_SLICES;
inline constexpr auto crc32_tables = [] {
  std::array<std::array<std::uint32_t, 256>, crc32_slices> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (std::size_t s = 1; s < crc32_slices; ++s)
      t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}();

// A little-endian word of 4 or 8 bytes; byte by byte in a constant expression.
template <class T>
SCALEUP_ALWAYS_INLINE constexpr T load_le(const std::uint8_t* p) noexcept {
  static_assert(std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>);
  if (!std::is_constant_evaluated()) {
    if constexpr (sizeof(T) == 8)
      return boost::endian::load_little_u64(p);
    else
      return boost::endian::load_little_u32(p);
  }
  T v = 0;
  for (int i = sizeof(T) - 1; i >= 0; --i) v = static_cast<T>(v << 8) | p[i];
  return v;
}

// The eight table lookups for one 64-bit word whose first byte is `first` slices from the end.
template <std::size_t First>
SCALEUP_ALWAYS_INLINE constexpr std::uint32_t crc32_word(std::uint64_t w) noexcept {
  const auto& t = crc32_tables;
  return t[First][w & 0xFF] ^ t[First - 1][(w >> 8) & 0xFF] ^ t[First - 2][(w >> 16) & 0xFF] ^
         t[First - 3][(w >> 24) & 0xFF] ^ t[First - 4][(w >> 32) & 0xFF] ^
         t[First - 5][(w >> 40) & 0xFF] ^ t[First - 6][(w >> 48) & 0xFF] ^ t[First - 7][w >> 56];
}

// The table path of crc32_update, on its own so tests can hold it against the PCLMUL path.
constexpr std::uint32_t crc32_update_tables(std::uint32_t crc, const std::uint8_t* p,
                                            std::size_t n) noexcept {
  if constexpr (detail::crc32_slices == 16) {
    for (; n >= 16; p += 16, n -= 16)
      crc = detail::crc32_word<15>(detail::load_le<std::uint64_t>(p) ^ crc) ^
            detail::crc32_word<7>(detail::load_le<std::uint64_t>(p + 8));
  }
  if constexpr (detail::crc32_slices >= 8) {
    for (; n >= 8; p += 8, n -= 8)
      crc = detail::crc32_word<7>(detail::load_le<std::uint64_t>(p) ^ crc);
    // Four of the last 4-7 bytes in one step: four lookups side by side, where a byte at a time
    // is four in a chain.
    if (n >= 4) {
      const auto& t = detail::crc32_tables;
      const std::uint32_t w = detail::load_le<std::uint32_t>(p) ^ crc;
      crc = t[3][w & 0xFF] ^ t[2][(w >> 8) & 0xFF] ^ t[1][(w >> 16) & 0xFF] ^ t[0][w >> 24];
      p += 4;
      n -= 4;
    }
  }
  for (; n > 0; ++p, --n) crc = (crc >> 8) ^ detail::crc32_tables[0][(crc ^ *p) & 0xFF];
  return crc;
}
}  // namespace detail

// Running CRC: start with crc32_init, feed, then crc32_final.
inline constexpr std::uint32_t crc32_init = 0xFFFFFFFFu;

constexpr std::uint32_t crc32_update(std::uint32_t crc, bytes data) noexcept {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
#if SCALEUP_CRC32_HAS_CLMUL
  if (!std::is_constant_evaluated() && n >= detail::crc32_clmul_min &&
      detail::crc32_clmul_available()) {
    const std::size_t bulk = n & ~std::size_t{15};
    crc = detail::crc32_clmul(crc, p, bulk);
    p += bulk;
    n -= bulk;
  }
#endif
  return detail::crc32_update_tables(crc, p, n);
}

constexpr std::uint32_t crc32_final(std::uint32_t crc) noexcept { return crc ^ 0xFFFFFFFFu; }

constexpr std::uint32_t crc32(bytes data) noexcept {
  return crc32_final(crc32_update(crc32_init, data));
}

// Internet checksum (RFC 1071): a ones'-complement sum folded to 16 bits. Pieces may have any
// length: a piece that ends on an odd byte leaves the next piece starting mid-word.
struct ones_sum {
  std::uint32_t acc = 0;
  bool odd = false;  // the last byte added was the high byte of a word

  constexpr ones_sum& add(bytes data) noexcept {
    std::size_t i = 0;
    if (odd && !data.empty()) {
      acc += data[0];
      odd = false;
      i = 1;
    }
    // Eight bytes at a time, as two little-endian 32-bit words into 64 bits: a
    // ones'-complement sum of 32-bit words folds to the same 16 bits as one of 16-bit words, and
    // summing byte-swapped words gives the byte-swapped sum (RFC 1071 2(A), 2(B)); so no swap
    // per word, one at the end. 2^31 steps cannot carry out of 64 bits.
    std::uint64_t wide = 0;
    for (; i + 7 < data.size(); i += 8) {
      const std::uint64_t w = detail::load_le<std::uint64_t>(data.data() + i);
      wide += (w & 0xFFFFFFFF) + (w >> 32);
    }
    wide = fold16(wide);
    acc += static_cast<std::uint32_t>((wide & 0xFF) << 8 | wide >> 8);
    for (; i + 1 < data.size(); i += 2) acc += load_be16(data.data() + i);
    if (i < data.size()) {
      acc += std::uint32_t{data[i]} << 8;
      odd = true;
    }
    fold();
    return *this;
  }
  // The two bytes of v, big-endian, as add() takes them: a word of its own, or, after an odd
  // piece, the end of one word and the start of the next. (Through add(), the pseudo-header's
  // six words cost a tenth of emitting a udp4 frame.)
  constexpr ones_sum& add16(std::uint16_t v) noexcept {
    acc += odd ? (v >> 8) + (std::uint32_t{v & 0xFFu} << 8) : v;
    fold();
    return *this;
  }
  constexpr ones_sum& add32(std::uint32_t v) noexcept {
    return add16(static_cast<std::uint16_t>(v >> 16)).add16(static_cast<std::uint16_t>(v));
  }
  constexpr void fold() noexcept { acc = static_cast<std::uint32_t>(fold16(acc)); }
  // End-around carries until 16 bits are left.
  static constexpr std::uint64_t fold16(std::uint64_t x) noexcept {
    while (x >> 16) x = (x & 0xFFFF) + (x >> 16);
    return x;
  }
  // The value to put in a checksum field.
  constexpr std::uint16_t checksum() const noexcept {
    return static_cast<std::uint16_t>(~acc & 0xFFFF);
  }
};

}  // namespace scaleup::wire
