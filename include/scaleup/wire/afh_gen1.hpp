// AI Forwarding Header Gen 1 (R2 3.5.1, 3.5.3): ordinary Ethernet II whose locally
// administered addresses carry 16-bit XPU ids in their last two bytes, so a switch forwards
// on 16 bits. An optional 802.1Q tag carries priority; the optional shim carries IP-like
// fields (decisions.md "Network headers"; the seed's Figs. 16-17 are lost).
#pragma once

#include <cstddef>
#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

// The default 32-bit address prefix: 0x42 is locally administered (U/L = 1), unicast, in the
// SLAP AAI quadrant, with bit 6 set so that it never carries the AFH Gen 2 signature (whose
// bits 6-7 are 0). 53:55:45 is "SUE" in ASCII. A parameter, like every address choice.
inline constexpr std::uint32_t afh1_default_prefix = 0x42535545;

// The address part of the Ethernet header, read again as AFH Gen 1. The Ethertype (and the
// optional tag) stay in the Ethernet layer.
struct afh1_addresses {
  std::uint32_t da_prefix = afh1_default_prefix;
  std::uint16_t dst_xpu = 0;
  std::uint32_t sa_prefix = afh1_default_prefix;
  std::uint16_t src_xpu = 0;
  friend constexpr bool operator==(const afh1_addresses&, const afh1_addresses&) = default;
};

template <>
struct layout<afh1_addresses> {
  using T = afh1_addresses;
  static constexpr std::string_view name = "afh1";
  static constexpr std::string_view title = "AI Forwarding Header Gen 1";
  static constexpr std::string_view seed = "R2 3.5.1, 3.5.3";
  static constexpr std::size_t size = 12;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::da_prefix,
           {.name = "DA prefix", .filter = "afh1.da_prefix", .bit = 0, .width = 32,
            .type = kind::hex, .description = "First four bytes of the destination MAC",
            .seed = "R2 3.5.3; decisions.md"}),
      member(&T::dst_xpu, {.name = "destination XPU", .filter = "afh1.dst_xpu", .bit = 32,
                         .width = 16, .description = "The 16 bits a switch forwards on",
                         .seed = "R2 3.5.3 (\"XPU-id is mapped into a 16-bit destination\")"}),
      member(&T::sa_prefix,
           {.name = "SA prefix", .filter = "afh1.sa_prefix", .bit = 48, .width = 32,
            .type = kind::hex, .description = "First four bytes of the source MAC",
            .seed = "R2 3.5.3; decisions.md"}),
      member(&T::src_xpu, {.name = "source XPU", .filter = "afh1.src_xpu", .bit = 80,
                         .width = 16, .seed = "R2 3.5.3; decisions.md"}),
  };
  // clang-format on
};
static_assert(tiles<afh1_addresses>());

// Protocol number 253 (RFC 3692, for experimentation) names the SUE transport in the shim.
inline constexpr std::uint8_t shim_next_sue = 253;

struct afh1_shim {
  std::uint8_t version = 0;
  std::uint8_t tc = 0;
  std::uint8_t hop_limit = 1;
  std::uint8_t next_header = shim_next_sue;
  std::uint16_t length = 0;
  std::uint32_t entropy = 0;
  std::uint32_t src_xpu = 0;
  std::uint32_t dst_xpu = 0;
  friend constexpr bool operator==(const afh1_shim&, const afh1_shim&) = default;
};

template <>
struct layout<afh1_shim> {
  using T = afh1_shim;
  static constexpr std::string_view name = "afh1.shim";
  static constexpr std::string_view title = "AFH Gen 1 shim header";
  static constexpr std::string_view seed = "R2 3.5.3, Fig. 17 (lost); decisions.md";
  static constexpr std::size_t size = 16;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::version, {.name = "version", .filter = "afh1.shim.version", .bit = 0,
                         .width = 4, .description = "Shim version; 0 today",
                         .seed = "decisions.md", .check = rule::fixed, .expect = 0}),
      member(&T::tc, {.name = "traffic class", .filter = "afh1.shim.tc", .bit = 4, .width = 8,
                    .seed = "decisions.md; R2 3.5.3 (\"similar to an IP header\")"}),
      member(&T::hop_limit, {.name = "hop limit", .filter = "afh1.shim.hop_limit", .bit = 12,
                           .width = 8, .seed = "decisions.md"}),
      member(&T::next_header,
           {.name = "next header", .filter = "afh1.shim.next_header", .bit = 20, .width = 8,
            .description = "Transport that follows; 253 = SUE",
            .seed = "decisions.md; R2 3.5.1 (disambiguate transports)"}),
      member(&T::length, {.name = "length", .filter = "afh1.shim.length", .bit = 28, .width = 16,
                        .description = "Bytes after the shim, padding excluded",
                        .seed = "decisions.md"}),
      member(&T::entropy, {.name = "entropy", .filter = "afh1.shim.entropy", .bit = 44,
                         .width = 20, .type = kind::hex,
                         .description = "Load-balancing entropy, like the IPv6 flow label",
                         .seed = "decisions.md"}),
      member(&T::src_xpu, {.name = "source XPU", .filter = "afh1.shim.src_xpu", .bit = 64,
                         .width = 32, .seed = "decisions.md"}),
      member(&T::dst_xpu, {.name = "destination XPU", .filter = "afh1.shim.dst_xpu", .bit = 96,
                         .width = 32, .seed = "decisions.md"}),
  };
  // clang-format on
};
static_assert(tiles<afh1_shim>());

// Where the bytes the shim at `offset` announces end: its length counts what follows it,
// padding excluded (decisions.md), so a Layer 2 pad after the PDU is not read as part of it. A
// length past the frame on the wire (`wire_size` bytes; the capture may hold fewer) is reported
// (to `report`, placed from the start of the frame) and cut to it.
template <class Report>
constexpr std::size_t shim_payload_end(const afh1_shim& s, std::size_t wire_size,
                                       std::size_t offset, Report&& report) noexcept {
  const std::size_t at = offset + layout<afh1_shim>::size;
  const std::size_t available = wire_size > at ? wire_size - at : 0;
  if (s.length <= available) return at + s.length;
  report(error{.code = errc::truncated,
               .layer = "afh1.shim",
               .offset = static_cast<std::uint32_t>(offset + 3),
               .needed = s.length,
               .available = static_cast<std::uint32_t>(available),
               .what = "shim length runs past the frame",
               .field = "afh1.shim.length",
               .value = s.length});
  return at + available;
}

}  // namespace scaleup::wire
