// Big-endian bit access in constant expressions.
//
// Bits are numbered as the specs draw them: bit 0 is the most significant bit of the first
// byte on the wire (decisions.md, "Byte and bit order"). Boost.Endian's load/store helpers
// are not constexpr in 1.74, so the constexpr path is written here; at run time the 16/32/64-bit
// loads and stores go through Boost.Endian (one unaligned access and a byte swap).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include <boost/endian/conversion.hpp>

// Hot-path helpers that must not be left as calls (a few instructions each, but a call and a
// returned result<> cost more than the work), and error paths kept out of them. GCC and Clang;
// elsewhere plain inline.
#if defined(__GNUC__) || defined(__clang__)
#define SCALEUP_ALWAYS_INLINE [[gnu::always_inline]] inline
#define SCALEUP_COLD [[gnu::cold]]
#else
#define SCALEUP_ALWAYS_INLINE inline
#define SCALEUP_COLD
#endif
// Larger bodies inlined for speed where each call site gains from it (the compiler then folds
// what the caller knows), but not when compiling for size (-Os, as a microcontroller's firmware
// is): there, one body.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__OPTIMIZE_SIZE__)
#define SCALEUP_SPEED_INLINE [[gnu::always_inline]] inline
#define SCALEUP_FOR_SPEED 1
#else
#define SCALEUP_SPEED_INLINE inline
#define SCALEUP_FOR_SPEED 0
#endif

namespace scaleup::wire {

using bytes = std::span<const std::uint8_t>;
using mutable_bytes = std::span<std::uint8_t>;

// The largest value a field of `width` bits holds (width 1..64).
constexpr std::uint64_t max_value(unsigned width) noexcept {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

// Reads `width` (1..64) bits starting `offset` bits after p[0]'s most significant bit.
// The caller has checked that the bits lie inside the buffer.
constexpr std::uint64_t get_bits(const std::uint8_t* p, std::size_t offset,
                                 unsigned width) noexcept {
  std::uint64_t v = 0;
  while (width > 0) {
    const unsigned in_byte = static_cast<unsigned>(offset % 8);
    const unsigned avail = 8 - in_byte;
    const unsigned take = avail < width ? avail : width;
    const unsigned chunk =
        (static_cast<unsigned>(p[offset / 8]) >> (avail - take)) & ((1u << take) - 1u);
    v = (take == 64 ? 0 : v << take) | chunk;
    offset += take;
    width -= take;
  }
  return v;
}

// Writes the low `width` bits of v at `offset`; other bits of the touched bytes are kept.
constexpr void put_bits(std::uint8_t* p, std::size_t offset, unsigned width,
                        std::uint64_t v) noexcept {
  while (width > 0) {
    const unsigned in_byte = static_cast<unsigned>(offset % 8);
    const unsigned avail = 8 - in_byte;
    const unsigned take = avail < width ? avail : width;
    const unsigned shift = avail - take;
    const unsigned mask = ((1u << take) - 1u) << shift;
    const unsigned chunk = static_cast<unsigned>(v >> (width - take)) & ((1u << take) - 1u);
    std::uint8_t& b = p[offset / 8];
    b = static_cast<std::uint8_t>((b & ~mask) | (chunk << shift));
    offset += take;
    width -= take;
  }
}

SCALEUP_ALWAYS_INLINE constexpr std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  if (!std::is_constant_evaluated()) return boost::endian::load_big_u16(p);
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

SCALEUP_ALWAYS_INLINE constexpr std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  if (!std::is_constant_evaluated()) return boost::endian::load_big_u32(p);
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

SCALEUP_ALWAYS_INLINE constexpr std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  if (!std::is_constant_evaluated()) return boost::endian::load_big_u64(p);
  return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}

SCALEUP_ALWAYS_INLINE constexpr void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  if (!std::is_constant_evaluated()) return boost::endian::store_big_u16(p, v);
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

SCALEUP_ALWAYS_INLINE constexpr void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  if (!std::is_constant_evaluated()) return boost::endian::store_big_u32(p, v);
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

SCALEUP_ALWAYS_INLINE constexpr void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
  if (!std::is_constant_evaluated()) return boost::endian::store_big_u64(p, v);
  store_be32(p, static_cast<std::uint32_t>(v >> 32));
  store_be32(p + 4, static_cast<std::uint32_t>(v));
}

// Copies n bytes between buffers that do not overlap: a loop in constant expressions, one
// memcpy at run time.
constexpr void copy_bytes(std::uint8_t* out, const std::uint8_t* in, std::size_t n) noexcept {
  if (std::is_constant_evaluated()) {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
  } else if (n != 0) {
    std::memcpy(out, in, n);
  }
}

// The same where the buffers may overlap, or be one (a payload already in place): memmove.
// GCC 12, inlining it into a caller that has refused sizes that do not fit before the move,
// still follows the refused path and warns of a size over the largest object
// (-Wstringop-overflow): the move is taken only when n bytes are there.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
constexpr void move_bytes(std::uint8_t* out, const std::uint8_t* in, std::size_t n) noexcept {
  if (std::is_constant_evaluated()) {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
  } else if (n != 0) {
    std::memmove(out, in, n);
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// copy_bytes for short pieces (a packed command's control and data, a JSON member's name):
// fixed-size moves that the compiler inlines. A library memcpy per piece cost the packer more
// than the copying: the call, and the caller's registers saved and restored around it.
// GCC 12, inlining this where `in` is a short local array whose length it cannot bound, warns
// that the moves for longer pieces would read past it (-Warray-bounds): they are taken only when
// n says the bytes are there.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
template <class Byte>
requires(sizeof(Byte) == 1) SCALEUP_ALWAYS_INLINE
    constexpr void copy_short(Byte* out, const Byte* in, std::size_t n) noexcept {
  // Eight bytes or more first, then more than 16, or four or more: every length takes two tests
  // (16 first made a packed command's data under eight bytes take three and two jumps; 16-byte
  // commands, cache-resident: packing 2.04 -> 1.96 ns a command).
  if (std::is_constant_evaluated()) {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
  } else if (n >= 8) {
    if (n > 16) {
      // 16-byte pieces from the front; the last one ends at the end, overlapping the one before.
      for (std::size_t i = 0; i + 16 < n; i += 16) std::memcpy(out + i, in + i, 16);
      std::memcpy(out + n - 16, in + n - 16, 16);
    } else {
      std::memcpy(out, in, 8);
      std::memcpy(out + n - 8, in + n - 8, 8);
    }
  } else if (n >= 4) {
    std::memcpy(out, in, 4);
    std::memcpy(out + n - 4, in + n - 4, 4);
  } else if (n >= 2) {
    std::memcpy(out, in, 2);
    std::memcpy(out + n - 2, in + n - 2, 2);
  } else if (n == 1) {
    out[0] = in[0];
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Whether get_bits_wide may read a field of `width` bits at bit `offset` of a buffer of `size`
// bytes: the eight bytes from the field's first are there, and the field, from its first bit,
// fits in them.
SCALEUP_ALWAYS_INLINE constexpr bool fits_wide(std::size_t size, std::size_t offset,
                                               unsigned width) noexcept {
  return offset / 8 + 8 <= size && offset % 8 + width <= 64;
}

// get_bits where fits_wide holds: one load.
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t get_bits_wide(const std::uint8_t* p,
                                                            std::size_t offset,
                                                            unsigned width) noexcept {
  return (load_be64(p + offset / 8) << (offset % 8)) >> (64 - width);
}

// get_bits from a buffer whose length is known, so that at run time the bytes the field spans
// (at most eight) are loaded as one word rather than a byte at a time: a command's fields are
// read this way, a control of several 64-bit addresses a frame. The word is loaded from the
// buffer itself: where eight bytes from the field's first are not there, the last eight of the
// buffer, shifted further. (Copying fewer bytes into a zeroed word and loading that stalled
// every field: a load of eight bytes that two narrower stores have just written cannot take
// them from the stores, and waits for the cache.) A field that runs past the buffer's end, or
// one in a buffer under eight bytes, is put together in a register from narrower loads, the
// bytes past the end as zeros.
constexpr std::uint64_t get_bits(std::span<const std::uint8_t> b, std::size_t offset,
                                 unsigned width) noexcept {
  const std::size_t first = offset / 8, skip = offset % 8;
  if (std::is_constant_evaluated() || skip + width > 64 || first >= b.size())
    return get_bits(b.data(), offset, width);
  const std::size_t n = (skip + width + 7) / 8;  // bytes spanned, 1..8
  if (fits_wide(b.size(), offset, width)) return get_bits_wide(b.data(), offset, width);
  if (b.size() >= 8 && first + n <= b.size()) {
    const std::size_t back = first + 8 - b.size();  // where the field starts in the last eight
    return (load_be64(b.data() + b.size() - 8) << (8 * back + skip)) >> (64 - width);
  }
  // 1 to 7 bytes, by loads of 4, 2 and 1 put together in a register (no word in memory).
  const std::size_t r = n < b.size() - first ? n : b.size() - first;
  const std::uint8_t* const p = b.data() + first;
  std::uint64_t v = 0;
  std::size_t at = 0;
  if (r & 4) {
    v = std::uint64_t{load_be32(p)} << 32;
    at = 4;
  }
  if (r & 2) {
    v |= std::uint64_t{load_be16(p + at)} << (48 - 8 * at);
    at += 2;
  }
  if (r & 1) v |= std::uint64_t{p[at]} << (56 - 8 * at);
  return (v << skip) >> (64 - width);
}

}  // namespace scaleup::wire
