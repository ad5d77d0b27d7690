// SplitMix64 (Steele, Lea, Flood 2014): the small seeded generator the simulations use where a
// run must be the same on every platform (std:: distributions are not specified bit for bit).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>

namespace scaleup::sim {

// Advances `x` and returns the next 64 random bits.
constexpr std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// True with probability p, from the top 53 bits of the next draw.
constexpr bool splitmix_chance(std::uint64_t& x, double p) noexcept {
  if (p <= 0) return false;
  return static_cast<double>(splitmix64(x) >> 11) * 0x1.0p-53 < p;
}

}  // namespace scaleup::sim
