// The 4-byte header of BSD loopback captures: the address family of the packet that follows
// (LINKTYPE_NULL, 0) in the byte order of the host that captured it, or in network byte order
// (LINKTYPE_LOOP, 108, OpenBSD). Filter name tshark's (`null.family`, for both link types).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

// The BSD AF_ values of IP: AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD, OpenBSD), 28
// (FreeBSD, DragonFly) or 30 (macOS) depending on the system that wrote the capture.
namespace bsd_family {
inline constexpr std::uint32_t inet = 2;
inline constexpr std::uint32_t inet6_bsd = 24;
inline constexpr std::uint32_t inet6_freebsd = 28;
inline constexpr std::uint32_t inet6_darwin = 30;
}  // namespace bsd_family

inline constexpr std::array<value_name, 4> bsd_family_names{{{bsd_family::inet, "IP"},
                                                             {bsd_family::inet6_bsd, "IPv6"},
                                                             {bsd_family::inet6_freebsd, "IPv6"},
                                                             {bsd_family::inet6_darwin, "IPv6"}}};

// `family` is the value after the byte-order rule (bsd_family_of): what the header means, the
// value tshark shows; the table reads and writes it big-endian, LINKTYPE_LOOP's order.
struct bsd_loopback {
  std::uint32_t family = bsd_family::inet;
  friend constexpr bool operator==(const bsd_loopback&, const bsd_loopback&) = default;
};

template <>
struct layout<bsd_loopback> {
  using T = bsd_loopback;
  static constexpr std::string_view name = "null";
  static constexpr std::string_view title = "Null/Loopback";
  static constexpr std::string_view seed = "LINKTYPE_NULL, LINKTYPE_LOOP";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::family, {.name = "family", .filter = "null.family", .bit = 0, .width = 32,
                        .names = bsd_family_names,
                        .description = "Address family (BSD AF_ value) of the packet",
                        .seed = "LINKTYPE_NULL, LINKTYPE_LOOP"}),
  };
  // clang-format on
};
static_assert(tiles<bsd_loopback>());

// LINKTYPE_NULL's family is in the capturing host's byte order, which the file does not say.
// AF_ values are small: read big-endian, a value above 0xFFFF was written little-endian (as
// libpcap and tshark tell them apart), and is swapped back.
constexpr std::uint32_t bsd_family_of(std::uint32_t big_endian) noexcept {
  if (big_endian <= 0xFFFF) return big_endian;
  return (big_endian >> 24) | ((big_endian >> 8) & 0xFF00) | ((big_endian << 8) & 0xFF0000) |
         (big_endian << 24);
}

constexpr bool is_bsd_inet6(std::uint32_t family) noexcept {
  return family == bsd_family::inet6_bsd || family == bsd_family::inet6_freebsd ||
         family == bsd_family::inet6_darwin;
}

}  // namespace scaleup::wire
