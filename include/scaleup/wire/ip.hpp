// IPv4, IPv6 and UDP: the standard encapsulation of a SUE PDU (R2 3.5.1, Fig. 11). R2 says SUE
// is found by UDP port and assigns none: readers find it by the ports a user names and by its
// content (receive.hpp), never by a port of their own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

// The port the library's emitters write SUE to unless told otherwise (frame_params), and so the
// port of every capture `scaleup gen` writes. From IANA's dynamic range (49152-65535, never
// assigned), above Linux's ephemeral ports (32768-60999), and dissected by no Wireshark
// dissector: not 4793, Ultra Ethernet Transport's (docs/wire-format.md, "Ethernet, IP, UDP").
inline constexpr std::uint16_t emit_udp_port = 61793;
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
  std::uint16_t src_port = emit_udp_port;
  std::uint16_t dst_port = emit_udp_port;
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

// ---- what the tables cannot state: lengths, checksums, fragments --------------------------
//
// The rules a receiver applies after a header's fields are read. Each takes the buffer `b` the
// header was read from, cut where the bytes present end, `wire_size`, how long b is on the wire
// (more than b.size() when the capture kept only the first bytes of the frame: its snapshot
// length), and the `offset` in b where the header starts; problems go to `report` (a callable
// taking wire::error), placed from the start of b, in the order they are found. Lengths are
// checked against the wire: a length the wire holds is no fault of the packet even where the
// capture stops short of it. A rule that finds the header unusable says so in what it returns;
// the other problems are reported and reading goes on.

// Whether a checksum was checked and what it said. tshark's numbering (proto.h
// PROTO_CHECKSUM_E_BAD, _GOOD, _UNVERIFIED, _NOT_PRESENT), so that `ip.checksum.status` and
// `udp.checksum.status` read as tshark's. IP and UDP checksums are checked only when asked: a
// sending host's capture holds checksums left to the NIC (offload), as tshark assumes by default.
enum class checksum_status : std::uint8_t { bad, good, unverified, not_present };

// The IPv4 header's length (RFC 791: IHL in 32-bit words, options included), or 0 when it is
// unusable: an IHL below 5, or options that run past the frame on the wire. Whether all of it
// was captured is the caller's to see.
template <class Report>
constexpr std::size_t ipv4_header_length(const ipv4_header& ip, std::size_t wire_size,
                                         std::size_t offset, Report&& report) noexcept {
  const std::size_t hl = std::size_t{ip.ihl} * 4;
  const std::size_t available = wire_size > offset ? wire_size - offset : 0;
  if (hl < layout<ipv4_header>::size) {
    report(error{.code = errc::bad_value,
                 .layer = "ip",
                 .offset = static_cast<std::uint32_t>(offset),
                 .what = "IHL below 5",
                 .field = "ip.hdr_len",
                 .value = ip.ihl});
    return 0;
  }
  if (hl > available) {
    report(truncated("ip", offset, hl, available, "IPv4 options cut off"));
    return 0;
  }
  return hl;
}

// Where an IP or UDP datagram ends and whether it is whole.
struct ip_extent {
  std::size_t end = 0;    // in b: where the length field says, cut to the frame on the wire
  bool fragment = false;  // IPv4: MF or a fragment offset set, a part of a datagram
  bool usable = false;    // false: the lengths contradict each other; nothing after is read
  checksum_status checksum = checksum_status::unverified;  // IPv4 header, UDP
};

// An IPv4 datagram whose header (`header_length` bytes, from ipv4_header_length, all in b)
// starts at b[offset]: the header checksum (RFC 791 3.1; with `check_checksum` only, a mismatch
// a warning), total length against the header and the frame on the wire, and whether it is a
// fragment (left to the caller: reassembly is not a rule of the header).
template <class Report>
constexpr ip_extent ipv4_datagram(const ipv4_header& ip, bytes b, std::size_t wire_size,
                                  std::size_t offset, std::size_t header_length,
                                  bool check_checksum, Report&& report) noexcept {
  ip_extent x;
  if (check_checksum) {
    const bool good = ones_sum{}.add(b.subspan(offset, header_length)).checksum() == 0;
    x.checksum = good ? checksum_status::good : checksum_status::bad;
    if (!good)
      report(error{.code = errc::bad_checksum,
                   .layer = "ip",
                   .offset = static_cast<std::uint32_t>(offset + 10),
                   .what = "IPv4 header checksum does not match",
                   .field = "ip.checksum",
                   .value = ip.checksum,
                   .level = severity::warning});
  }
  if (ip.total_length < header_length) {
    report(error{.code = errc::bad_length,
                 .layer = "ip",
                 .offset = static_cast<std::uint32_t>(offset + 2),
                 .what = "total length below header length",
                 .field = "ip.len",
                 .value = ip.total_length});
    return x;
  }
  x.end = offset + ip.total_length;
  if (x.end > wire_size) {
    report(error{.code = errc::truncated,
                 .layer = "ip",
                 .offset = static_cast<std::uint32_t>(offset),
                 .needed = ip.total_length,
                 .available = static_cast<std::uint32_t>(wire_size - offset),
                 .what = "IPv4 datagram longer than the frame",
                 .field = "ip.len",
                 .value = ip.total_length});
    x.end = wire_size;
  }
  x.fragment = ip.flag_mf != 0 || ip.frag_offset != 0;
  x.usable = true;
  return x;
}

// An IPv6 packet whose fixed header starts at offset in a frame of `wire_size` bytes on the
// wire: the payload length against them (RFC 8200 3). Extension headers are the caller's:
// next_header names the first.
template <class Report>
constexpr ip_extent ipv6_datagram(const ipv6_header& ip, std::size_t wire_size, std::size_t offset,
                                  Report&& report) noexcept {
  ip_extent x{.end = offset + layout<ipv6_header>::size + ip.payload_length, .usable = true};
  if (x.end > wire_size) {
    report(
        error{.code = errc::truncated,
              .layer = "ipv6",
              .offset = static_cast<std::uint32_t>(offset),
              .needed = static_cast<std::uint32_t>(layout<ipv6_header>::size + ip.payload_length),
              .available = static_cast<std::uint32_t>(wire_size - offset),
              .what = "IPv6 payload longer than the frame",
              .field = "ipv6.plen",
              .value = ip.payload_length});
    x.end = wire_size;
  }
  return x;
}

// The UDP checksum's pseudo-header (RFC 768; RFC 8200 8.1): addresses, protocol, UDP length.
constexpr ones_sum udp_pseudo_header(const ipv4_header& ip, std::size_t udp_length) noexcept {
  return ones_sum{}
      .add32(ip.src)
      .add32(ip.dst)
      .add16(ip_proto_udp)
      .add16(static_cast<std::uint16_t>(udp_length));
}
constexpr ones_sum udp_pseudo_header(const ipv6_header& ip, std::size_t udp_length) noexcept {
  return ones_sum{}
      .add(ip.src)
      .add(ip.dst)
      .add32(static_cast<std::uint32_t>(udp_length))
      .add16(ip_proto_udp);
}

// A UDP datagram whose header starts at b[offset] (b and wire_size end where the IP datagram
// does): where it ends, usable unless its length is below the header's 8 bytes. With
// `check_checksum` the checksum is checked when it has one (0 = none, IPv4 only: RFC 768;
// always over IPv6: RFC 8200 8.1) and the whole datagram was captured, a mismatch a warning;
// `pseudo` is udp_pseudo_header's for its IP header.
template <class Report>
constexpr ip_extent udp_datagram(const udp_header& u, bytes b, std::size_t wire_size,
                                 std::size_t offset, const ones_sum& pseudo, bool v6,
                                 bool check_checksum, Report&& report) noexcept {
  ip_extent x;
  if (u.length < layout<udp_header>::size) {
    report(error{.code = errc::bad_length,
                 .layer = "udp",
                 .offset = static_cast<std::uint32_t>(offset + 4),
                 .what = "UDP length below 8",
                 .field = "udp.length",
                 .value = u.length});
    return x;
  }
  x.usable = true;
  x.end = offset + u.length;
  if (x.end > wire_size) {
    report(error{.code = errc::truncated,
                 .layer = "udp",
                 .offset = static_cast<std::uint32_t>(offset),
                 .needed = u.length,
                 .available = static_cast<std::uint32_t>(wire_size - offset),
                 .what = "UDP datagram longer than the frame",
                 .field = "udp.length",
                 .value = u.length});
    x.end = wire_size;
    return x;
  }
  if (u.checksum == 0 && !v6) {
    x.checksum = checksum_status::not_present;
    return x;
  }
  if (!check_checksum || x.end > b.size()) return x;  // not asked, or not all captured
  const bool good = ones_sum(pseudo).add(b.subspan(offset, u.length)).checksum() == 0;
  x.checksum = good ? checksum_status::good : checksum_status::bad;
  if (!good)
    report(error{.code = errc::bad_checksum,
                 .layer = "udp",
                 .offset = static_cast<std::uint32_t>(offset + 6),
                 .what = "UDP checksum does not match",
                 .field = "udp.checksum",
                 .value = u.checksum,
                 .level = severity::warning});
  return x;
}

}  // namespace scaleup::wire
