// The checksums the formats need: CRC-32 for the R-CRC (and the Ethernet FCS it shares its
// polynomial with) and the Internet checksum for IPv4 and UDP.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/wire/bits.hpp"

namespace scaleup::wire {

// CRC-32/ISO-HDLC: reflected, polynomial 0x04C11DB7, init and final xor 0xFFFFFFFF
// (decisions.md "R-CRC"). Slicing-by-4 tables built at compile time.
namespace detail {
inline constexpr auto crc32_tables = [] {
  std::array<std::array<std::uint32_t, 256>, 4> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (std::size_t s = 1; s < 4; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}();
}  // namespace detail

// Running CRC: start with crc32_init, feed, then crc32_final.
inline constexpr std::uint32_t crc32_init = 0xFFFFFFFFu;

constexpr std::uint32_t crc32_update(std::uint32_t crc, bytes data) noexcept {
  const auto& t = detail::crc32_tables;
  std::size_t i = 0;
  for (; i + 4 <= data.size(); i += 4) {
    crc ^= std::uint32_t{data[i]} | (std::uint32_t{data[i + 1]} << 8) |
           (std::uint32_t{data[i + 2]} << 16) | (std::uint32_t{data[i + 3]} << 24);
    crc = t[3][crc & 0xFF] ^ t[2][(crc >> 8) & 0xFF] ^ t[1][(crc >> 16) & 0xFF] ^ t[0][crc >> 24];
  }
  for (; i < data.size(); ++i) crc = (crc >> 8) ^ t[0][(crc ^ data[i]) & 0xFF];
  return crc;
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
    for (; i + 1 < data.size(); i += 2) acc += load_be16(data.data() + i);
    if (i < data.size()) {
      acc += std::uint32_t{data[i]} << 8;
      odd = true;
    }
    fold();
    return *this;
  }
  constexpr ones_sum& add16(std::uint16_t v) noexcept {
    const std::uint8_t b[2] = {static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
    return add(bytes(b, 2));
  }
  constexpr ones_sum& add32(std::uint32_t v) noexcept {
    return add16(static_cast<std::uint16_t>(v >> 16)).add16(static_cast<std::uint16_t>(v));
  }
  constexpr void fold() noexcept {
    while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  }
  // The value to put in a checksum field.
  constexpr std::uint16_t checksum() const noexcept {
    return static_cast<std::uint16_t>(~acc & 0xFFFF);
  }
};

}  // namespace scaleup::wire
