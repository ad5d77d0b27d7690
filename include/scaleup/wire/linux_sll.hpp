// Linux cooked capture headers: what libpcap writes in place of a link-layer header when it
// captures on the "any" device (or on a device whose link layer it cannot hand over), version 1
// (LINKTYPE_LINUX_SLL, 113, 16 bytes) and version 2 (LINKTYPE_LINUX_SLL2, 276, 20 bytes). Both
// name what follows by an Ethertype (`protocol`); values up to 1536 are Linux's own protocol
// numbers (802.2 LLC, ...), not Ethertypes. Filter names are tshark's (`sll.*`), so `dump` and
// Wireshark agree on what a frame holds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

// sll_pkttype: where the packet went (the direction Wireshark shows).
inline constexpr std::array<value_name, 5> sll_pkttype_names{{{0, "Unicast to us"},
                                                              {1, "Broadcast"},
                                                              {2, "Multicast"},
                                                              {3, "Unicast to another host"},
                                                              {4, "Sent by us"}}};
// sll_hatype: the ARPHRD_ type of the interface, the ones a SUE capture meets.
inline constexpr std::array<value_name, 4> sll_hatype_names{
    {{1, "Ethernet"}, {772, "Loopback"}, {776, "IPv6-in-IPv4"}, {65534, "None"}}};

// The largest protocol value that is one of Linux's own numbers, not an Ethertype ("yes, 1536 -
// that's how Linux does it", libpcap and Wireshark).
inline constexpr std::uint16_t sll_max_linux_protocol = 1536;

// Version 1. The address field is 8 bytes, `halen` of them used: read as an Ethernet address
// and two unused bytes, as tshark shows it for the 6-byte addresses of Ethernet and loopback.
struct linux_sll {
  std::uint16_t pkttype = 0;
  std::uint16_t hatype = 1;
  std::uint16_t halen = 6;
  std::uint64_t address = 0;
  std::uint16_t unused = 0;
  std::uint16_t protocol = 0;
  friend constexpr bool operator==(const linux_sll&, const linux_sll&) = default;
};

template <>
struct layout<linux_sll> {
  using T = linux_sll;
  static constexpr std::string_view name = "sll";
  static constexpr std::string_view title = "Linux cooked capture v1";
  static constexpr std::string_view seed = "LINKTYPE_LINUX_SLL";
  static constexpr std::size_t size = 16;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::pkttype, {.name = "packet type", .filter = "sll.pkttype", .bit = 0, .width = 16,
                         .names = sll_pkttype_names, .description = "Direction of the packet",
                         .seed = "LINKTYPE_LINUX_SLL"}),
      member(&T::hatype, {.name = "address type", .filter = "sll.hatype", .bit = 16,
                        .width = 16, .names = sll_hatype_names,
                        .description = "ARPHRD_ type of the interface",
                        .seed = "LINKTYPE_LINUX_SLL"}),
      member(&T::halen, {.name = "address length", .filter = "sll.halen", .bit = 32,
                       .width = 16, .description = "Bytes of the address field in use",
                       .seed = "LINKTYPE_LINUX_SLL"}),
      member(&T::address, {.name = "source", .filter = "sll.src.eth", .bit = 48, .width = 48,
                         .type = kind::mac,
                         .description = "Source link-layer address (first 6 bytes)",
                         .seed = "LINKTYPE_LINUX_SLL"}),
      member(&T::unused, {.name = "unused", .filter = "sll.unused", .bit = 96, .width = 16,
                        .type = kind::hex,
                        .description = "Address bytes past a 6-byte address",
                        .seed = "LINKTYPE_LINUX_SLL"}),
      member(&T::protocol, {.name = "protocol", .filter = "sll.etype", .bit = 112,
                          .width = 16, .type = kind::hex,
                          .description = "Ethertype of what follows; up to 1536 a Linux protocol number",
                          .seed = "LINKTYPE_LINUX_SLL"}),
  };
  // clang-format on
};
static_assert(tiles<linux_sll>());

// Version 2: the protocol first, an interface index, a one-byte packet type and address length.
struct linux_sll2 {
  std::uint16_t protocol = 0;
  std::uint16_t reserved = 0;
  std::uint32_t ifindex = 0;
  std::uint16_t hatype = 1;
  std::uint8_t pkttype = 0;
  std::uint8_t halen = 6;
  std::uint64_t address = 0;
  std::uint16_t unused = 0;
  friend constexpr bool operator==(const linux_sll2&, const linux_sll2&) = default;
};

template <>
struct layout<linux_sll2> {
  using T = linux_sll2;
  static constexpr std::string_view name = "sll2";
  static constexpr std::string_view title = "Linux cooked capture v2";
  static constexpr std::string_view seed = "LINKTYPE_LINUX_SLL2";
  static constexpr std::size_t size = 20;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::protocol, {.name = "protocol", .filter = "sll.etype", .bit = 0, .width = 16,
                          .type = kind::hex, .description = "Ethertype of what follows",
                          .seed = "LINKTYPE_LINUX_SLL2"}),
      member(&T::reserved, {.name = "reserved", .filter = "sll.reserved", .bit = 16,
                          .width = 16, .description = "Must be zero",
                          .seed = "LINKTYPE_LINUX_SLL2", .check = rule::reserved}),
      member(&T::ifindex, {.name = "interface index", .filter = "sll.ifindex", .bit = 32,
                         .width = 32, .description = "Index of the capturing interface",
                         .seed = "LINKTYPE_LINUX_SLL2"}),
      member(&T::hatype, {.name = "address type", .filter = "sll.hatype", .bit = 64,
                        .width = 16, .names = sll_hatype_names,
                        .description = "ARPHRD_ type of the interface",
                        .seed = "LINKTYPE_LINUX_SLL2"}),
      member(&T::pkttype, {.name = "packet type", .filter = "sll.pkttype", .bit = 80,
                         .width = 8, .names = sll_pkttype_names,
                         .description = "Direction of the packet",
                         .seed = "LINKTYPE_LINUX_SLL2"}),
      member(&T::halen, {.name = "address length", .filter = "sll.halen", .bit = 88,
                       .width = 8, .description = "Bytes of the address field in use",
                       .seed = "LINKTYPE_LINUX_SLL2"}),
      member(&T::address, {.name = "source", .filter = "sll.src.eth", .bit = 96, .width = 48,
                         .type = kind::mac,
                         .description = "Source link-layer address (first 6 bytes)",
                         .seed = "LINKTYPE_LINUX_SLL2"}),
      member(&T::unused, {.name = "unused", .filter = "sll.unused", .bit = 144, .width = 16,
                        .type = kind::hex,
                        .description = "Address bytes past a 6-byte address",
                        .seed = "LINKTYPE_LINUX_SLL2"}),
  };
  // clang-format on
};
static_assert(tiles<linux_sll2>());

}  // namespace scaleup::wire
