// AI Forwarding Header Gen 2 (R2 3.5.2, Figs. 13-15): an IEEE 802c-2017 SLAP address in the
// Administratively Assigned Identifier quadrant replaces DA, SA, Ethertype, IP and UDP.
// First octet, least significant bit first: M (I/G), X (U/L) = 1, Y = 0, Z = 0, V = 0, W,
// then two reserved bits (decisions.md). W = 0: normal 12-byte format with hop count and
// entropy, 32-bit XPU ids; W = 1: compressed 6-byte format, 16-bit ids.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

inline constexpr std::array<value_name, 2> afh2_m_names{{{0, "unicast"}, {1, "multicast"}}};
inline constexpr std::array<value_name, 2> afh2_w_names{{{0, "normal"}, {1, "compressed"}}};

// The SLAP signature of the first octet: reserved bits, V, Z and Y zero, X one.
inline constexpr std::uint8_t afh2_signature_mask = 0xDE;
inline constexpr std::uint8_t afh2_signature = 0x02;
inline constexpr std::uint8_t afh2_w_bit = 0x20;

constexpr bool has_afh2_signature(std::uint8_t first_octet) noexcept {
  return (first_octet & afh2_signature_mask) == afh2_signature;
}

// The first octet, the same in both formats: one set of bindings for any header struct S with
// members rsv, w, v, z, y, x, m; `w` is the format's fixed W value.
template <class S>
constexpr auto afh2_first_octet(std::uint64_t w) noexcept {
  // clang-format off
  return std::tuple{
      member(&S::rsv, {.name = "reserved", .filter = "afh2.rsv", .bit = 0, .width = 2,
                     .seed = "decisions.md", .check = rule::reserved}),
      member(&S::w, {.name = "W", .filter = "afh2.w", .bit = 2, .width = 1, .type = kind::flag,
                   .names = afh2_w_names, .description = "Format: 0 = normal, 1 = compressed",
                   .seed = "R2 3.5.2", .check = rule::fixed, .expect = w}),
      member(&S::v, {.name = "V", .filter = "afh2.v", .bit = 3, .width = 1, .type = kind::flag,
                   .description = "Version: 0 = current", .seed = "R2 3.5.2",
                   .check = rule::fixed, .expect = 0}),
      member(&S::z, {.name = "Z", .filter = "afh2.z", .bit = 4, .width = 1, .type = kind::flag,
                   .description = "SLAP: 0 for AAI", .seed = "R2 3.5.2; IEEE 802c",
                   .check = rule::fixed, .expect = 0}),
      member(&S::y, {.name = "Y", .filter = "afh2.y", .bit = 5, .width = 1, .type = kind::flag,
                   .description = "SLAP: 0 for AAI", .seed = "R2 3.5.2; IEEE 802c",
                   .check = rule::fixed, .expect = 0}),
      member(&S::x, {.name = "X", .filter = "afh2.x", .bit = 6, .width = 1, .type = kind::flag,
                   .description = "U/L: 1 = locally administered", .seed = "R2 3.5.2",
                   .check = rule::fixed, .expect = 1}),
      member(&S::m, {.name = "M", .filter = "afh2.m", .bit = 7, .width = 1, .type = kind::flag,
                   .names = afh2_m_names, .description = "I/G: multicast", .seed = "R2 3.5.2"}),
  };
  // clang-format on
}

struct afh2_normal {
  std::uint8_t rsv = 0;
  std::uint8_t w = 0;
  std::uint8_t v = 0;
  std::uint8_t z = 0;
  std::uint8_t y = 0;
  std::uint8_t x = 1;
  std::uint8_t m = 0;
  std::uint8_t hop_count = 0;
  std::uint32_t dst_xpu = 0;
  std::uint8_t tc = 0;
  std::uint8_t spare = 0;
  std::uint8_t sa_ul = 1;
  std::uint8_t sa_ig = 0;
  std::uint8_t entropy = 0;
  std::uint32_t src_xpu = 0;
  friend constexpr bool operator==(const afh2_normal&, const afh2_normal&) = default;
};

template <>
struct layout<afh2_normal> {
  using T = afh2_normal;
  static constexpr std::string_view name = "afh2";
  static constexpr std::string_view title = "AI Forwarding Header Gen 2, normal format";
  static constexpr std::string_view seed = "R2 3.5.2, Figs. 14-15";
  static constexpr std::size_t size = 12;
  // clang-format off
  static constexpr auto fields = std::tuple_cat(afh2_first_octet<T>(0), std::tuple{
      member(&T::hop_count, {.name = "hop count", .filter = "afh2.hop_count", .bit = 8,
                           .width = 8, .seed = "R2 3.5.2 (W = 0); place: decisions.md"}),
      member(&T::dst_xpu, {.name = "destination XPU", .filter = "afh2.dst_xpu", .bit = 16,
                         .width = 32, .description = "Ends the DA, where a switch looks",
                         .seed = "R2 Fig. 15"}),
      member(&T::tc, {.name = "traffic class", .filter = "afh2.tc", .bit = 48, .width = 5,
                    .description = "Up to the 32 CBFC classes", .seed = "R2 Fig. 15, 3.5.7"}),
      member(&T::spare, {.name = "spare", .filter = "afh2.spare", .bit = 53, .width = 1,
                       .seed = "R2 Fig. 15", .check = rule::reserved}),
      member(&T::sa_ul, {.name = "SA U/L", .filter = "afh2.sa_ul", .bit = 54, .width = 1,
                       .type = kind::flag, .description = "Source half: locally administered",
                       .seed = "decisions.md", .check = rule::fixed, .expect = 1}),
      member(&T::sa_ig, {.name = "SA I/G", .filter = "afh2.sa_ig", .bit = 55, .width = 1,
                       .type = kind::flag,
                       .description = "Source half: never a group address",
                       .seed = "decisions.md", .check = rule::fixed, .expect = 0}),
      member(&T::entropy, {.name = "entropy", .filter = "afh2.entropy", .bit = 56, .width = 8,
                         .type = kind::hex, .seed = "R2 3.5.2 (W = 0), Fig. 15"}),
      member(&T::src_xpu, {.name = "source XPU", .filter = "afh2.src_xpu", .bit = 64,
                         .width = 32, .seed = "R2 Fig. 15"}),
  });
  // clang-format on
};
static_assert(tiles<afh2_normal>());

struct afh2_compressed {
  std::uint8_t rsv = 0;
  std::uint8_t w = 1;
  std::uint8_t v = 0;
  std::uint8_t z = 0;
  std::uint8_t y = 0;
  std::uint8_t x = 1;
  std::uint8_t m = 0;
  std::uint8_t tc = 0;
  std::uint8_t spare = 0;
  std::uint16_t src_xpu = 0;
  std::uint16_t dst_xpu = 0;
  friend constexpr bool operator==(const afh2_compressed&, const afh2_compressed&) = default;
};

template <>
struct layout<afh2_compressed> {
  using T = afh2_compressed;
  static constexpr std::string_view name = "afh2c";
  static constexpr std::string_view title = "AI Forwarding Header Gen 2, compressed format";
  static constexpr std::string_view seed = "R2 3.4, 3.5.2, Figs. 10, 15";
  static constexpr std::size_t size = 6;
  // clang-format off
  static constexpr auto fields = std::tuple_cat(afh2_first_octet<T>(1), std::tuple{
      member(&T::tc, {.name = "traffic class", .filter = "afh2c.tc", .bit = 8, .width = 5,
                    .description = "Carries the VC (SUE Lite needs only DA, SA and VC)",
                    .seed = "R2 3.4, Fig. 10"}),
      member(&T::spare, {.name = "spare", .filter = "afh2c.spare", .bit = 13, .width = 3,
                       .seed = "decisions.md", .check = rule::reserved}),
      member(&T::src_xpu, {.name = "source XPU", .filter = "afh2c.src_xpu", .bit = 16,
                         .width = 16, .seed = "R2 3.4, Fig. 10"}),
      member(&T::dst_xpu, {.name = "destination XPU", .filter = "afh2c.dst_xpu", .bit = 32,
                         .width = 16, .description = "Ends the 6 bytes a switch reads as DA",
                         .seed = "R2 3.4, Fig. 10"}),
  });
  // clang-format on
};
static_assert(tiles<afh2_compressed>());

// The Ethertype that follows an AFH Gen 2 header to name the transport (R2 3.5.1: "The
// Ethertype field is used to disambiguate multiple transport headers"). SUE Lite omits it.
struct afh2_ethertype {
  std::uint16_t type = 0;
  friend constexpr bool operator==(const afh2_ethertype&, const afh2_ethertype&) = default;
};

template <>
struct layout<afh2_ethertype> {
  using T = afh2_ethertype;
  static constexpr std::string_view name = "afh2.etype";
  static constexpr std::string_view title = "AFH Gen 2 transport Ethertype";
  static constexpr std::string_view seed = "R2 3.5.1";
  static constexpr std::size_t size = 2;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::type, {.name = "type", .filter = "afh2.type", .bit = 0, .width = 16,
                      .type = kind::hex, .description = "Transport; 0x88B5 = SUE",
                      .seed = "R2 3.5.1; decisions.md"}),
  };
  // clang-format on
};
static_assert(tiles<afh2_ethertype>());

// ---- recognition ---------------------------------------------------------------------------
//
// AFH Gen 2 replaces the Ethernet header, so a frame on an Ethernet link is AFH Gen 2 only by
// its first octet's SLAP signature (decisions.md "Network headers": "Frames captured on an
// ordinary Ethernet link must still be recognised (by the SLAP signature)"). The signature is
// also what many locally administered MACs look like, hence the two rules below
// (docs/wire-format.md, "AFH Gen 2": recognising AFH Gen 2 on an Ethernet link).

// Ethertypes that mark a frame starting with a SLAP-looking MAC as ordinary Ethernet. A SUE Lite
// payload must not carry one in its bytes 6-7 (frame bytes 12-13) on an Ethernet link.
constexpr bool is_common_ethertype(std::uint16_t type, std::uint16_t sue_ethertype,
                                   std::uint16_t shim_ethertype) noexcept {
  switch (type) {
    case ethertype::ipv4:
    case ethertype::ipv6:
    case ethertype::vlan:
    case 0x0806:  // ARP
    case ethertype::qinq:
    case 0x88CC:  // LLDP
    case 0x8808:  // MAC control (pause, PFC)
      return true;
    default:
      return type == sue_ethertype || type == shim_ethertype;
  }
}

enum class afh2_form : std::uint8_t { none, normal, compressed };

struct afh2_recognition {
  afh2_form form = afh2_form::none;
  bool sue_follows = false;  // the SUE Ethertype follows the header (else SUE Lite, or another
                             // transport)
};

// What a frame reads as. `bare`: on the AFH Gen 2 link type, where every frame with the
// signature is one. On an Ethernet link the normal format (W = 0) counts only when the SUE
// Ethertype follows it, and the compressed one (W = 1) not when frame bytes 12-13 hold a common
// Ethertype and SUE's does not follow the header: such a frame is ordinary Ethernet.
constexpr afh2_recognition recognise_afh2(bytes frame, bool bare, std::uint16_t sue_ethertype,
                                          std::uint16_t shim_ethertype) noexcept {
  const std::size_t n = frame.size();
  if (n == 0 || !has_afh2_signature(frame[0])) return {};
  const auto type_at = [&](std::size_t at) { return load_be16(frame.data() + at); };  // n > at + 1
  constexpr std::size_t normal_end = layout<afh2_normal>::size;
  constexpr std::size_t compressed_end = layout<afh2_compressed>::size;
  if (frame[0] & afh2_w_bit) {
    const bool sue = n >= compressed_end + 2 && type_at(compressed_end) == sue_ethertype;
    if (!bare && !sue && n >= normal_end + 2 &&
        is_common_ethertype(type_at(normal_end), sue_ethertype, shim_ethertype))
      return {};
    return {afh2_form::compressed, sue};
  }
  const bool sue = n >= normal_end + 2 && type_at(normal_end) == sue_ethertype;
  if (!bare && !sue) return {};
  return {afh2_form::normal, sue};
}

}  // namespace scaleup::wire
