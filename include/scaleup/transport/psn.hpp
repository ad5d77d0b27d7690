// Packet sequence numbers compared with serial-number arithmetic (RFC 1982), so that order
// survives wraparound (decisions.md "SUE transport": 16-bit PSNs, +1 per PDU, window below
// 2^15). The width is a template parameter: small widths let tests cross wraparound often and
// explore every state.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>
#include <type_traits>

namespace scaleup::transport {

template <unsigned Bits = 16>
struct psn {
  static_assert(Bits >= 2 && Bits <= 31, "PSN width");
  using rep = std::conditional_t<(Bits <= 16), std::uint16_t, std::uint32_t>;
  static constexpr std::uint32_t mask = (std::uint32_t{1} << Bits) - 1;
  static constexpr std::uint32_t half = std::uint32_t{1} << (Bits - 1);

  rep value = 0;

  constexpr psn() = default;
  constexpr explicit psn(std::uint32_t v) noexcept : value(static_cast<rep>(v & mask)) {}

  constexpr psn operator+(std::uint32_t n) const noexcept { return psn(value + n); }
  constexpr psn operator-(std::uint32_t n) const noexcept { return psn(value - n); }
  constexpr psn& operator++() noexcept { return *this = *this + 1; }
  friend constexpr bool operator==(psn, psn) = default;
};

// Ordinary functions, not hidden friends: callable qualified (transport::distance) as well as
// by argument-dependent lookup.

// Steps forward from `from` to `to`, modulo the space.
template <unsigned Bits>
constexpr std::uint32_t distance(psn<Bits> from, psn<Bits> to) noexcept {
  return (std::uint32_t{to.value} - from.value) & psn<Bits>::mask;
}

// a comes before b: b is less than half the space ahead. No raw `<` on PSNs (decisions.md practice
// 7).
template <unsigned Bits>
constexpr bool before(psn<Bits> a, psn<Bits> b) noexcept {
  const std::uint32_t d = distance(a, b);
  return d != 0 && d < psn<Bits>::half;
}

// x lies in [lo, lo + n).
template <unsigned Bits>
constexpr bool within(psn<Bits> x, psn<Bits> lo, std::uint32_t n) noexcept {
  return distance(lo, x) < n;
}

}  // namespace scaleup::transport
