// Ethernet II header and the IEEE 802.1Q tag (R2 3.5.1 "Standard Ethernet formats"; the tag's
// PCP carries the traffic class when AFH Gen 1 is used without the shim, R2 3.5.3).
#pragma once

#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

namespace ethertype {
inline constexpr std::uint16_t ipv4 = 0x0800;
inline constexpr std::uint16_t vlan = 0x8100;
inline constexpr std::uint16_t ipv6 = 0x86DD;
// IEEE 802 local experimental Ethertypes 1 and 2: defaults, every one is a parameter
// (decisions.md "Network headers").
inline constexpr std::uint16_t sue = 0x88B5;        // a SUE PDU follows
inline constexpr std::uint16_t afh1_shim = 0x88B6;  // an AFH Gen 1 shim header follows
}  // namespace ethertype

struct ethernet_header {
  std::uint64_t dst = 0;
  std::uint64_t src = 0;
  std::uint16_t type = 0;
  friend constexpr bool operator==(const ethernet_header&, const ethernet_header&) = default;
};

template <>
struct layout<ethernet_header> {
  using T = ethernet_header;
  static constexpr std::string_view name = "eth";
  static constexpr std::string_view title = "Ethernet II";
  static constexpr std::string_view seed = "R2 3.5.1";
  static constexpr std::size_t size = 14;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::dst, {.name = "destination", .filter = "eth.dst", .bit = 0, .width = 48,
                     .type = kind::mac, .description = "Destination MAC address",
                     .seed = "IEEE 802.3"}),
      member(&T::src, {.name = "source", .filter = "eth.src", .bit = 48, .width = 48,
                     .type = kind::mac, .description = "Source MAC address",
                     .seed = "IEEE 802.3"}),
      member(&T::type, {.name = "type", .filter = "eth.type", .bit = 96, .width = 16,
                      .type = kind::hex, .description = "Ethertype", .seed = "IEEE 802.3"}),
  };
  // clang-format on
};
static_assert(tiles<ethernet_header>());

// The four bytes after an 0x8100 Ethertype: TCI and the inner Ethertype.
struct vlan_tag {
  std::uint8_t pcp = 0;
  std::uint8_t dei = 0;
  std::uint16_t vid = 0;
  std::uint16_t type = 0;
  friend constexpr bool operator==(const vlan_tag&, const vlan_tag&) = default;
};

template <>
struct layout<vlan_tag> {
  using T = vlan_tag;
  static constexpr std::string_view name = "vlan";
  static constexpr std::string_view title = "802.1Q Virtual LAN";
  static constexpr std::string_view seed = "R2 3.5.3, 3.5.6";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::pcp, {.name = "PCP", .filter = "vlan.priority", .bit = 0, .width = 3,
                     .description = "Priority code point: the traffic class",
                     .seed = "R2 3.5.3, 3.5.6"}),
      member(&T::dei, {.name = "DEI", .filter = "vlan.dei", .bit = 3, .width = 1,
                     .type = kind::flag, .description = "Drop eligible indicator",
                     .seed = "IEEE 802.1Q"}),
      member(&T::vid, {.name = "VID", .filter = "vlan.id", .bit = 4, .width = 12,
                     .description = "VLAN identifier", .seed = "IEEE 802.1Q"}),
      member(&T::type, {.name = "type", .filter = "vlan.etype", .bit = 16, .width = 16,
                      .type = kind::hex, .description = "Inner Ethertype",
                      .seed = "IEEE 802.1Q"}),
  };
  // clang-format on
};
static_assert(tiles<vlan_tag>());

}  // namespace scaleup::wire
