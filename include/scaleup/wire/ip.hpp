// IPv4, IPv6 and UDP: the standard encapsulation of a SUE PDU (R2 3.5.1, Fig. 11). SUE is
// found by UDP port; none is assigned, so 4793 is the default (decisions.md).
#pragma once

#include <array>
#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

inline constexpr std::uint16_t default_sue_udp_port = 4793;
inline constexpr std::uint8_t ip_proto_udp = 17;

struct ipv4_header {
  std::uint8_t version = 4;
  std::uint8_t ihl = 5;
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;
  std::uint16_t total_length = 0;
  std::uint16_t id = 0;
  std::uint8_t flag_rb = 0;
  std::uint8_t flag_df = 0;
  std::uint8_t flag_mf = 0;
  std::uint16_t frag_offset = 0;
  std::uint8_t ttl = 64;
  std::uint8_t protocol = ip_proto_udp;
  std::uint16_t checksum = 0;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  friend constexpr bool operator==(const ipv4_header&, const ipv4_header&) = default;
};

template <>
struct layout<ipv4_header> {
  using T = ipv4_header;
  static constexpr std::string_view name = "ip";
  static constexpr std::string_view title = "Internet Protocol Version 4";
  static constexpr std::string_view seed = "R2 3.5.1; RFC 791";
  static constexpr std::size_t size = 20;  // options, if any, follow (ihl > 5)
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::version, {.name = "version", .filter = "ip.version", .bit = 0, .width = 4,
                         .seed = "RFC 791", .check = rule::fixed, .expect = 4}),
      member(&T::ihl, {.name = "IHL", .filter = "ip.hdr_len", .bit = 4, .width = 4,
                     .description = "Header length in 32-bit words", .seed = "RFC 791"}),
      member(&T::dscp, {.name = "DSCP", .filter = "ip.dsfield.dscp", .bit = 8, .width = 6,
                      .seed = "RFC 2474"}),
      member(&T::ecn, {.name = "ECN", .filter = "ip.dsfield.ecn", .bit = 14, .width = 2,
                     .seed = "RFC 3168"}),
      member(&T::total_length, {.name = "total length", .filter = "ip.len", .bit = 16,
                              .width = 16, .seed = "RFC 791"}),
      member(&T::id, {.name = "identification", .filter = "ip.id", .bit = 32, .width = 16,
                    .type = kind::hex, .seed = "RFC 791"}),
      member(&T::flag_rb, {.name = "reserved flag", .filter = "ip.flags.rb", .bit = 48,
                         .width = 1, .type = kind::flag, .seed = "RFC 791",
                         .check = rule::reserved}),
      member(&T::flag_df, {.name = "don't fragment", .filter = "ip.flags.df", .bit = 49,
                         .width = 1, .type = kind::flag, .seed = "RFC 791"}),
      member(&T::flag_mf, {.name = "more fragments", .filter = "ip.flags.mf", .bit = 50,
                         .width = 1, .type = kind::flag, .seed = "RFC 791"}),
      member(&T::frag_offset, {.name = "fragment offset", .filter = "ip.frag_offset", .bit = 51,
                             .width = 13, .description = "In 8-byte units", .seed = "RFC 791"}),
      member(&T::ttl, {.name = "TTL", .filter = "ip.ttl", .bit = 64, .width = 8,
                     .seed = "RFC 791"}),
      member(&T::protocol, {.name = "protocol", .filter = "ip.proto", .bit = 72, .width = 8,
                          .seed = "RFC 791"}),
      member(&T::checksum, {.name = "header checksum", .filter = "ip.checksum", .bit = 80,
                          .width = 16, .type = kind::hex, .seed = "RFC 791"}),
      member(&T::src, {.name = "source", .filter = "ip.src", .bit = 96, .width = 32,
                     .type = kind::ipv4, .seed = "RFC 791"}),
      member(&T::dst, {.name = "destination", .filter = "ip.dst", .bit = 128, .width = 32,
                     .type = kind::ipv4, .seed = "RFC 791"}),
  };
  // clang-format on
};
static_assert(tiles<ipv4_header>());

using ipv6_address = std::array<std::uint8_t, 16>;

struct ipv6_header {
  std::uint8_t version = 6;
  std::uint8_t tclass = 0;
  std::uint32_t flow = 0;
  std::uint16_t payload_length = 0;
  std::uint8_t next_header = ip_proto_udp;
  std::uint8_t hop_limit = 64;
  ipv6_address src{};
  ipv6_address dst{};
  friend constexpr bool operator==(const ipv6_header&, const ipv6_header&) = default;
};

template <>
struct layout<ipv6_header> {
  using T = ipv6_header;
  static constexpr std::string_view name = "ipv6";
  static constexpr std::string_view title = "Internet Protocol Version 6";
  static constexpr std::string_view seed = "R2 3.5.1; RFC 8200";
  static constexpr std::size_t size = 40;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::version, {.name = "version", .filter = "ipv6.version", .bit = 0, .width = 4,
                         .seed = "RFC 8200", .check = rule::fixed, .expect = 6}),
      member(&T::tclass, {.name = "traffic class", .filter = "ipv6.tclass", .bit = 4,
                        .width = 8, .type = kind::hex, .seed = "RFC 8200"}),
      member(&T::flow, {.name = "flow label", .filter = "ipv6.flow", .bit = 12, .width = 20,
                      .type = kind::hex, .seed = "RFC 8200"}),
      member(&T::payload_length, {.name = "payload length", .filter = "ipv6.plen", .bit = 32,
                                .width = 16, .seed = "RFC 8200"}),
      member(&T::next_header, {.name = "next header", .filter = "ipv6.nxt", .bit = 48,
                             .width = 8, .seed = "RFC 8200"}),
      member(&T::hop_limit, {.name = "hop limit", .filter = "ipv6.hlim", .bit = 56, .width = 8,
                           .seed = "RFC 8200"}),
      member(&T::src, {.name = "source", .filter = "ipv6.src", .bit = 64, .width = 128,
                     .type = kind::ipv6, .seed = "RFC 8200"}),
      member(&T::dst, {.name = "destination", .filter = "ipv6.dst", .bit = 192, .width = 128,
                     .type = kind::ipv6, .seed = "RFC 8200"}),
  };
  // clang-format on
};
static_assert(tiles<ipv6_header>());

struct udp_header {
  std::uint16_t src_port = default_sue_udp_port;
  std::uint16_t dst_port = default_sue_udp_port;
  std::uint16_t length = 0;
  std::uint16_t checksum = 0;
  friend constexpr bool operator==(const udp_header&, const udp_header&) = default;
};

template <>
struct layout<udp_header> {
  using T = udp_header;
  static constexpr std::string_view name = "udp";
  static constexpr std::string_view title = "User Datagram Protocol";
  static constexpr std::string_view seed = "R2 3.5.1; RFC 768";
  static constexpr std::size_t size = 8;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::src_port, {.name = "source port", .filter = "udp.srcport", .bit = 0,
                          .width = 16, .seed = "RFC 768"}),
      member(&T::dst_port, {.name = "destination port", .filter = "udp.dstport", .bit = 16,
                          .width = 16, .seed = "RFC 768"}),
      member(&T::length, {.name = "length", .filter = "udp.length", .bit = 32, .width = 16,
                        .description = "Header and payload, in bytes", .seed = "RFC 768"}),
      member(&T::checksum, {.name = "checksum", .filter = "udp.checksum", .bit = 48, .width = 16,
                          .type = kind::hex,
                          .description = "Over the pseudo-header; 0 = none (IPv4 only)",
                          .seed = "RFC 768, RFC 8200 8.1"}),
  };
  // clang-format on
};
static_assert(tiles<udp_header>());

}  // namespace scaleup::wire
