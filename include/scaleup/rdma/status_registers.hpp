// Transfer status per write channel and the two ways a processor reads it (Thesis 3.4,
// Fig. 3.2, 3.6.2, Fig. 3.6).
//
// A single read returns one channel; a collective read returns 32 channels, half the write
// channels of a page, in one 64-bit load, so that software that issued a broadcast polls it
// with two loads instead of 64. Both reads turn DONE and ERROR into IDLE: reading is how
// software acknowledges a completion, and a channel takes a new descriptor only when IDLE.
//
// The hardware keeps three one-hot bits per channel and converts them to two on read; the
// codes of the two-bit form are not in the thesis: IDLE 0, BUSY 1, DONE 2, ERROR 3, channel i
// of a collective read in bits 2i+1..2i (channel 0 least significant).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scaleup::rdma {

enum class status : std::uint8_t { idle = 0, busy = 1, done = 2, error = 3 };

constexpr std::string_view to_string(status s) noexcept {
  switch (s) {
    case status::idle:
      return "IDLE";
    case status::busy:
      return "BUSY";
    case status::done:
      return "DONE";
    case status::error:
      return "ERROR";
  }
  return "?";
}

inline constexpr std::uint32_t collective_channels = 32;  // 32 x 2 bits = one 64-bit load

// N: write channels of all pages (pages x write channels per page), page-major.
template <std::size_t N>
struct status_registers {
  std::array<status, N> s{};

  constexpr status peek(std::size_t i) const noexcept { return s[i]; }
  constexpr void set(std::size_t i, status v) noexcept { s[i] = v; }

  constexpr status read_single(std::size_t i) noexcept {
    const status v = s[i];
    if (v == status::done || v == status::error) s[i] = status::idle;
    return v;
  }

  // Channels first .. first + count - 1 (count at most 32): the address selects half a page.
  constexpr std::uint64_t read_collective(std::size_t first,
                                          std::size_t count = collective_channels) noexcept {
    std::uint64_t bits = 0;
    for (std::size_t k = 0; k < count && k < collective_channels && first + k < N; ++k)
      bits |= std::uint64_t{static_cast<std::uint8_t>(read_single(first + k))} << (2 * k);
    return bits;
  }
};

// Channel k's status in a collective read's value.
constexpr status status_at(std::uint64_t bits, std::uint32_t k) noexcept {
  return static_cast<status>((bits >> (2 * k)) & 3u);
}

}  // namespace scaleup::rdma
