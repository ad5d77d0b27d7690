// Partitions: which partitions each source XPU may use towards this receiver (R2 Table 5,
// 4.1: "a partition field that can be used for access control"; decisions.md: a receiver
// accepts a PDU only if its partition is allowed for that source). A fixed bitmap, no heap.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>

namespace scaleup::transport {

inline constexpr std::size_t partitions = 1024;  // the RH's 10-bit partition field

template <std::size_t Sources = 1024>
class partition_table {
 public:
  // Everything denied until allowed: isolation is the default, access the exception.
  constexpr void allow(std::uint16_t source, std::uint16_t partition) noexcept {
    if (source < Sources && partition < partitions) bits_[source][partition / 64] |= bit(partition);
  }
  constexpr void deny(std::uint16_t source, std::uint16_t partition) noexcept {
    if (source < Sources && partition < partitions)
      bits_[source][partition / 64] &= ~bit(partition);
  }
  constexpr void allow_all(std::uint16_t source) noexcept {
    if (source < Sources) bits_[source].fill(~std::uint64_t{0});
  }
  // The verdict step(receiver, {pdu, npsn, partition_ok}) takes.
  constexpr bool allowed(std::uint16_t source, std::uint16_t partition) const noexcept {
    return source < Sources && partition < partitions &&
           (bits_[source][partition / 64] & bit(partition)) != 0;
  }

 private:
  static constexpr std::uint64_t bit(std::uint16_t p) noexcept {
    return std::uint64_t{1} << (p % 64);
  }
  std::array<std::array<std::uint64_t, partitions / 64>, Sources> bits_{};
};

}  // namespace scaleup::transport
