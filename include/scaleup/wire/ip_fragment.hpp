// IP fragments: the IPv6 Fragment extension header (RFC 8200 4.5) and what a receiver knows of
// one fragment of an IPv4 (RFC 791) or IPv6 datagram once its headers are read. read_frame
// (receive.hpp) fills an ip_fragment; ip_reassembler (ip_reassembly.hpp) joins them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

// The next-header value naming the Fragment header (RFC 8200 4.5).
inline constexpr std::uint8_t ip_proto_ipv6_fragment = 44;

struct ipv6_fragment_header {
  std::uint8_t next_header = 17;
  std::uint8_t reserved = 0;
  std::uint16_t offset = 0;  // in 8-byte units
  std::uint8_t reserved_bits = 0;
  std::uint8_t more = 0;
  std::uint32_t id = 0;
  friend constexpr bool operator==(const ipv6_fragment_header&,
                                   const ipv6_fragment_header&) = default;
};

template <>
struct layout<ipv6_fragment_header> {
  using T = ipv6_fragment_header;
  static constexpr std::string_view name = "ipv6.fraghdr";
  static constexpr std::string_view title = "IPv6 Fragment header";
  static constexpr std::string_view seed = "RFC 8200 4.5";
  static constexpr std::size_t size = 8;
  // Filter names as Wireshark's packet-ipv6.c registers them.
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::next_header, {.name = "next header", .filter = "ipv6.fraghdr.nxt", .bit = 0,
                             .width = 8, .seed = "RFC 8200 4.5"}),
      member(&T::reserved, {.name = "reserved octet", .filter = "ipv6.fraghdr.reserved_octet",
                          .bit = 8, .width = 8, .type = kind::hex, .seed = "RFC 8200 4.5",
                          .check = rule::reserved}),
      member(&T::offset, {.name = "fragment offset", .filter = "ipv6.fraghdr.offset", .bit = 16,
                        .width = 13, .description = "In 8-byte units", .seed = "RFC 8200 4.5"}),
      member(&T::reserved_bits, {.name = "reserved bits", .filter = "ipv6.fraghdr.reserved_bits",
                               .bit = 29, .width = 2, .seed = "RFC 8200 4.5",
                               .check = rule::reserved}),
      member(&T::more, {.name = "more fragments", .filter = "ipv6.fraghdr.more", .bit = 31,
                      .width = 1, .type = kind::flag, .seed = "RFC 8200 4.5"}),
      member(&T::id, {.name = "identification", .filter = "ipv6.fraghdr.ident", .bit = 32,
                    .width = 32, .type = kind::hex, .seed = "RFC 8200 4.5"}),
  };
  // clang-format on
};
static_assert(tiles<ipv6_fragment_header>());

// One fragment as read from a frame. The datagram it belongs to is named by its key: IPv4
// (source, destination, protocol, identification: RFC 791 3.2), IPv6 (source, destination,
// identification: RFC 8200 4.5); `protocol` is 0 in an IPv6 key.
struct datagram_key {
  bool v6 = false;
  std::array<std::uint8_t, 16> src{};  // IPv4: the first 4 bytes, big-endian
  std::array<std::uint8_t, 16> dst{};
  std::uint8_t protocol = 0;
  std::uint32_t id = 0;
  friend constexpr bool operator==(const datagram_key&, const datagram_key&) = default;
};

struct ip_fragment {
  datagram_key key{};
  // What the reassembled datagram carries: IPv4's protocol, or the Fragment header's next header.
  std::uint8_t next_header = 0;
  std::size_t offset = 0;  // where `data` goes in the datagram's payload, in bytes
  bool more = false;       // MF / M: not the last fragment
  // The unfragmentable part as this fragment carries it: the IPv4 header with its options, or
  // the IPv6 fixed header (the Fragment header is the first extension header read).
  bytes header{};
  bytes data{};       // the fragment's bytes present in the frame
  bool whole = true;  // false: the frame holds fewer bytes than the IP length says
};

constexpr std::array<std::uint8_t, 16> ipv4_key_address(std::uint32_t a) noexcept {
  return {static_cast<std::uint8_t>(a >> 24), static_cast<std::uint8_t>(a >> 16),
          static_cast<std::uint8_t>(a >> 8), static_cast<std::uint8_t>(a)};
}

}  // namespace scaleup::wire
