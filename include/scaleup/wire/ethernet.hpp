// Ethernet II header and the IEEE 802.1Q tag (R2 3.5.1 "Standard Ethernet formats"; the tag's
// PCP carries the traffic class when AFH Gen 1 is used without the shim, R2 3.5.3).
#pragma once

#include <cstddef>
#include <cstdint>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

namespace ethertype {
inline constexpr std::uint16_t ipv4 = 0x0800;
inline constexpr std::uint16_t vlan = 0x8100;
inline constexpr std::uint16_t qinq = 0x88A8;  // 802.1ad service tag, read like 802.1Q's
// The service tag's Ethertype before 802.1ad assigned one; tshark still reads it as a tag.
inline constexpr std::uint16_t qinq_old = 0x9100;
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

// The four bytes after a tag Ethertype (0x8100, 0x88A8, 0x9100): TCI and the inner Ethertype.
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

// An 802.1ad service tag (S-TAG, announced by 0x88A8): the four bytes of a VLAN tag, under the
// names tshark gives them (`ieee8021ad.*`, and `ieee8021ah.etype` for the Ethertype after it), so
// that a tag stack reads the same in `dump` and in tshark. Read with vlan_tag's table (the bits
// are the same); as_service_tag gives the value this table shows.
struct service_tag {
  std::uint8_t pcp = 0;
  std::uint8_t dei = 0;
  std::uint16_t vid = 0;
  std::uint16_t type = 0;
  friend constexpr bool operator==(const service_tag&, const service_tag&) = default;
};

template <>
struct layout<service_tag> {
  using T = service_tag;
  static constexpr std::string_view name = "ieee8021ad";
  static constexpr std::string_view title = "IEEE 802.1ad service tag";
  static constexpr std::string_view seed = "IEEE 802.1ad";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::pcp, {.name = "PCP", .filter = "ieee8021ad.priority", .bit = 0, .width = 3,
                     .description = "Priority code point", .seed = "IEEE 802.1ad"}),
      member(&T::dei, {.name = "DEI", .filter = "ieee8021ad.dei", .bit = 3, .width = 1,
                     .type = kind::flag, .description = "Drop eligible indicator",
                     .seed = "IEEE 802.1ad"}),
      member(&T::vid, {.name = "VID", .filter = "ieee8021ad.id", .bit = 4, .width = 12,
                     .description = "Service VLAN identifier", .seed = "IEEE 802.1ad"}),
      member(&T::type, {.name = "type", .filter = "ieee8021ah.etype", .bit = 16, .width = 16,
                      .type = kind::hex, .description = "Inner Ethertype (tshark's name)",
                      .seed = "IEEE 802.1ad"}),
  };
  // clang-format on
};
static_assert(tiles<service_tag>());

constexpr service_tag as_service_tag(const vlan_tag& t) noexcept {
  return {t.pcp, t.dei, t.vid, t.type};
}

// An Ethertype that a VLAN tag follows: 802.1Q's, 802.1ad's, or the older 0x9100 (IEEE 802.1Q,
// 802.1ad; tshark's vlan dissector takes all three).
constexpr bool is_tag_ethertype(std::uint16_t type) noexcept {
  return type == ethertype::vlan || type == ethertype::qinq || type == ethertype::qinq_old;
}

// ---- the frame check sequence --------------------------------------------------------------
//
// A capture may or may not keep the 4-byte FCS that ends an Ethernet frame (decisions.md
// "Network headers": handle both): the CRC-32 of everything before it, sent least significant
// byte first (IEEE 802.3 3.2.9).

inline constexpr std::size_t fcs_size = 4;

// Whether the frames of a capture end in an FCS: `detect` takes the last four bytes for one when
// they are the CRC of the rest (and the frame holds an Ethernet header besides), `present`
// always (then a mismatch is an error), `absent` never.
enum class fcs_mode : std::uint8_t { detect, present, absent };

struct fcs_check {
  bool present = false;        // the frame's last four bytes are taken for the FCS
  bool good = false;           // and they match the CRC of the rest
  std::uint32_t value = 0;     // as sent
  std::uint32_t computed = 0;  // CRC-32 of the rest
};

constexpr fcs_check find_fcs(bytes frame, fcs_mode mode) noexcept {
  fcs_check c;
  if (mode == fcs_mode::absent || frame.size() < fcs_size) return c;
  const std::size_t n = frame.size() - fcs_size;
  c.value = std::uint32_t{frame[n]} | (std::uint32_t{frame[n + 1]} << 8) |
            (std::uint32_t{frame[n + 2]} << 16) | (std::uint32_t{frame[n + 3]} << 24);
  c.computed = crc32(frame.first(n));
  c.good = c.value == c.computed;
  c.present = mode == fcs_mode::present ||
              (c.good && frame.size() >= layout<ethernet_header>::size + fcs_size);
  if (!c.present) c = fcs_check{};
  return c;
}

// Appends the FCS of frame[0, length) at frame[length] (find_fcs's inverse): the frame's size
// with it, or 0 when the four bytes do not fit.
constexpr std::size_t put_fcs(mutable_bytes frame, std::size_t length) noexcept {
  if (length > frame.size() || frame.size() - length < fcs_size) return 0;
  const std::uint32_t crc = crc32(frame.first(length));
  for (std::size_t i = 0; i < fcs_size; ++i)
    frame[length + i] = static_cast<std::uint8_t>(crc >> (8 * i));
  return length + fcs_size;
}

}  // namespace scaleup::wire
