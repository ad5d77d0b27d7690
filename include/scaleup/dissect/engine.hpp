// The dissection engine: one frame in, one tree out, in lax mode (everything decodable is
// decoded; the error that stopped it, and every problem seen on the way, is in the tree).
// The CLI and the Wireshark plugin both run this; see docs/wire-format.md for the rules it
// applies where the seeds are silent (how each encapsulation is recognised, where a PDU ends).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scaleup/dissect/build.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/rdma/dissect.hpp"
#include "scaleup/tofu/dissect.hpp"
#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/pdu.hpp"

namespace scaleup::dissect {

// Link types (pcap LINKTYPE_*): Ethernet, and USER0 for bare AFH Gen 2 frames.
inline constexpr std::uint32_t link_ethernet = 1;
inline constexpr std::uint32_t link_afh2 = 147;

enum class fcs_mode : std::uint8_t { detect, present, absent };

struct options {
  std::array<std::uint16_t, 16> udp_ports{wire::default_sue_udp_port};
  std::size_t udp_port_count = 1;
  bool heuristics = true;  // SUE on other UDP ports when the payload is a plausible RH
  fcs_mode fcs = fcs_mode::detect;
  std::uint16_t sue_ethertype = wire::ethertype::sue;
  std::uint16_t shim_ethertype = wire::ethertype::afh1_shim;
  std::uint8_t shim_next_sue = wire::shim_next_sue;
  // How packed commands are read; nullptr leaves payloads opaque.
  const pack::profile* profile = &pack::default_profile;
  // false: commands are walked and checked as always (framing, fixed and reserved values: the
  // same errors, in the same order) but add no layers or fields to the tree. For a consumer
  // that reads only the headers and the errors (`scaleup stats`).
  bool command_nodes = true;

  constexpr bool add_udp_port(std::uint16_t port) noexcept {
    if (udp_port_count == udp_ports.size()) return false;
    udp_ports[udp_port_count++] = port;
    return true;
  }
  constexpr bool is_sue_port(std::uint16_t port) const noexcept {
    for (std::size_t i = 0; i < udp_port_count; ++i)
      if (udp_ports[i] == port) return true;
    return false;
  }
};

// Fields the engine computes rather than reads; described like table fields so that every
// consumer (printers, JSON, Wireshark) treats them alike.
namespace generated {
// clang-format off
inline constexpr std::array<wire::value_name, 3> rcrc_status_names{
    {{0, "good"}, {1, "bad"}, {2, "missing"}}};
inline constexpr field_info rcrc_status{
    .name = "R-CRC status", .filter = "sue.rcrc.status", .width = 2, .type = wire::kind::label,
    .names = rcrc_status_names, .description = "good, bad, or missing (PDU of an RH only)",
    .seed = "R2 3.3; decisions.md"};
inline constexpr field_info payload_len{
    .name = "payload length", .filter = "sue.payload.len", .width = 16,
    .description = "Bytes between RH and R-CRC", .seed = "R2 3.3"};
inline constexpr field_info lite_len{
    .name = "payload length", .filter = "sue_lite.len", .width = 16,
    .description = "Bytes after the AFH Gen 2 header", .seed = "R2 3.4, Fig. 10"};
inline constexpr field_info control_len{
    .name = "control length", .filter = "sue.cmd.control_len", .width = 8,
    .description = "Control bytes: 2 x the profile's units", .seed = "R2 4.2 step 2a"};
inline constexpr field_info data_len{
    .name = "data length", .filter = "sue.cmd.data_len", .width = 16,
    .description = "Data bytes after the control (0 to 256)", .seed = "R2 4.2 step 2a"};
inline constexpr field_info fcs{
    .name = "FCS", .filter = "eth.fcs", .width = 32, .type = wire::kind::hex,
    .description = "Ethernet frame check sequence, as sent", .seed = "IEEE 802.3"};
// clang-format on
inline constexpr std::array<const field_info*, 6> all{&rcrc_status, &payload_len, &lite_len,
                                                      &control_len, &data_len,    &fcs};
}  // namespace generated

// Ethertypes that mark a frame starting with a SLAP-looking MAC as ordinary Ethernet. A SUE Lite
// payload must not carry one in its bytes 6-7 (frame bytes 12-13) on an Ethernet link.
constexpr bool is_common_ethertype(std::uint16_t type, const options& o) noexcept {
  switch (type) {
    case wire::ethertype::ipv4:
    case wire::ethertype::ipv6:
    case wire::ethertype::vlan:
    case 0x0806:  // ARP
    case 0x88A8:  // 802.1ad
    case 0x88CC:  // LLDP
    case 0x8808:  // MAC control (pause, PFC)
      return true;
    default:
      return type == o.sue_ethertype || type == o.shim_ethertype;
  }
}

namespace detail {

using wire::bytes;
using wire::errc;
using wire::layout;

using dissect::add_generated;
using dissect::add_header;
using dissect::add_problem;

template <class Tree>
constexpr void add_command_error(Tree& t, const pack::command_view& c, const field_info& f,
                                 std::uint64_t v) noexcept {
  if (error e = wire::check_rule("sue.cmd", c.offset, f, v)) {
    e.item = c.index;
    t.add_error(e);
  }
}

// The packed commands of a payload, each its own layer in the list "sue.cmds". Returns the
// bytes the commands took (trailing zero padding excluded).
template <class Tree>
constexpr std::size_t commands(Tree& t, bytes frame, std::size_t at, std::size_t len,
                               const options& o) noexcept {
  if (!o.profile) return len;
  pack::unpacker u(*o.profile, frame.subspan(at, len), at);
  pack::command_view c;
  while (!o.command_nodes && u.next(c))
    for (const auto& f : c.type->fields)
      if (f.check != wire::rule::any) add_command_error(t, c, f, c.field(f));
  while (o.command_nodes && u.next(c)) {
    const auto l = t.add_layer("sue.cmd", c.type->description, c.offset, c.size(), "sue.cmds");
    for (const auto& f : c.type->fields) {
      const std::uint64_t v = c.field(f);
      t.add_field(
          field_node{&f, l, static_cast<std::uint32_t>(c.offset * 8 + f.bit), false, v, nullptr});
      add_command_error(t, c, f, v);
    }
    add_generated(t, l, o.profile->name_field(), c.code());
    add_generated(t, l, generated::control_len, c.control.size());
    add_generated(t, l, generated::data_len, c.data.size());
  }
  if (u.error_found()) t.add_error(u.error_found());
  if (u.padding()) t.add_layer("sue.pad", "Padding", at + u.consumed(), u.padding());
  return u.error_found() ? len : u.consumed();
}

// Over Layer 2 a minimum-size frame may hold padding after the R-CRC: with a profile, the R-CRC
// is at the first command boundary where the running CRC matches and only zeros follow
// (decisions.md). Without one, or when the commands do not parse, every byte is a candidate.
constexpr wire::pdu_bounds pdu_bounds_by_commands(bytes pdu, std::size_t frame_len,
                                                  const options& o) noexcept {
  constexpr std::size_t rh = layout<wire::reliability_header>::size;
  if (!o.profile || frame_len > wire::ethernet_min_frame || pdu.size() < rh + wire::rcrc_size)
    return wire::pdu_bounds_l2(pdu, frame_len);
  std::uint32_t running = wire::crc32_update(wire::crc32_init, pdu.first(rh));
  std::size_t pos = rh;
  for (std::uint32_t index = 1; pos + wire::rcrc_size <= pdu.size(); ++index) {
    const std::uint32_t want = wire::crc32_final(running);
    bool zeros = true;
    for (std::size_t i = pos + wire::rcrc_size; i < pdu.size() && zeros; ++i) zeros = pdu[i] == 0;
    if (zeros && wire::load_be32(pdu.data() + pos) == want)
      return wire::pdu_bounds{pos, pdu.size() - pos - wire::rcrc_size, wire::rcrc_status::good,
                              want, want};
    std::size_t size = 0;
    const pack::command_type* type = nullptr;
    if (pack::frame_command(*o.profile, pdu.subspan(pos), pos, index, size, type)) break;
    running = wire::crc32_update(running, pdu.subspan(pos, size));
    pos += size;
  }
  return wire::pdu_bounds_l2(pdu, frame_len);
}

// RH, payload, R-CRC. `exact`: the carrier says where the PDU ends (UDP, shim); otherwise it
// runs to the end of the frame and may be followed by padding.
template <class Tree>
constexpr void sue_pdu(Tree& t, bytes frame, std::size_t at, std::size_t end, bool exact,
                       const options& o) noexcept {
  const auto rh = add_header<wire::reliability_header>(t, frame, at, end);
  if (rh.err.code == errc::truncated) return;
  const bytes pdu = frame.subspan(at, end - at);
  const wire::pdu_bounds b =
      exact ? wire::pdu_bounds_exact(pdu) : pdu_bounds_by_commands(pdu, frame.size(), o);
  const std::size_t payload = b.payload_end - layout<wire::reliability_header>::size;
  const auto pl = t.add_layer("sue.payload", o.profile ? "SUE payload" : "SUE payload (opaque)",
                              at + 8, payload);
  add_generated(t, pl, generated::payload_len, payload);
  if (payload > wire::sue_max_payload)
    add_problem(t, errc::bad_length, "sue.payload", at + 8, "payload over 4096 bytes (R2 3.3)",
                generated::payload_len.filter, payload, 0, 0, wire::severity::warning);
  (void)commands(t, frame, at + 8, payload, o);
  std::uint16_t status_layer = pl;
  if (b.status != wire::rcrc_status::missing) {
    const std::size_t crc_at = at + b.payload_end;
    (void)add_header<wire::rcrc_trailer>(t, frame, crc_at, end);
    status_layer = static_cast<std::uint16_t>(t.layer_count - 1);
    if (b.status == wire::rcrc_status::bad)
      add_problem(t, errc::bad_checksum, "sue.rcrc", crc_at,
                  "R-CRC does not match; value is the CRC computed over RH and payload", "sue.rcrc",
                  b.computed);
    if (b.pad > 0) t.add_layer("sue.pad", "Padding", crc_at + wire::rcrc_size, b.pad);
  }
  add_generated(t, status_layer, generated::rcrc_status, static_cast<std::uint64_t>(b.status));
}

// A UDP payload that would pass for a PDU: version 0, reserved bits zero, R-CRC good.
constexpr bool plausible_pdu(bytes payload) noexcept {
  if (payload.size() < 12) return false;
  const auto rh = wire::view<wire::reliability_header>::make(payload).value;
  return rh.get<&wire::reliability_header::ver>() == 0 &&
         rh.get<&wire::reliability_header::rsv>() == 0 &&
         rh.get<&wire::reliability_header::rsvd>() == 0 &&
         wire::pdu_bounds_exact(payload).status == wire::rcrc_status::good;
}

template <class Tree>
constexpr void udp(Tree& t, bytes frame, std::size_t at, std::size_t end, wire::ones_sum pseudo,
                   bool v6, const options& o) noexcept {
  t.encap = v6 ? "ipv6/udp" : "ipv4/udp";
  const auto u = add_header<wire::udp_header>(t, frame, at, end);
  if (!u) return;
  const std::size_t len = u->length;
  if (len < 8) {
    add_problem(t, errc::bad_length, "udp", at + 4, "UDP length below 8", "udp.length", len);
    return;
  }
  std::size_t udp_end = at + len;
  if (udp_end > end) {
    add_problem(t, errc::truncated, "udp", at, "UDP datagram longer than the bytes present",
                "udp.length", len, len, end - at);
    udp_end = end;
  } else if (u->checksum != 0 || v6) {
    pseudo.add32(static_cast<std::uint32_t>(len)).add16(wire::ip_proto_udp);
    if (pseudo.add(frame.subspan(at, len)).checksum() != 0)
      add_problem(t, errc::bad_checksum, "udp", at + 6, "UDP checksum does not match",
                  "udp.checksum", u->checksum);
  }
  const bytes payload = frame.subspan(at + 8, udp_end - at - 8);
  if (o.is_sue_port(u->dst_port) || o.is_sue_port(u->src_port) ||
      (o.heuristics && plausible_pdu(payload))) {
    t.encap = v6 ? "udp6" : "udp4";
    sue_pdu(t, frame, at + 8, udp_end, true, o);
  }
}

template <class Tree>
constexpr void ipv4(Tree& t, bytes frame, std::size_t at, std::size_t end,
                    const options& o) noexcept {
  t.encap = "ipv4";
  const auto ip = add_header<wire::ipv4_header>(t, frame, at, end);
  if (!ip) return;
  const std::size_t hl = std::size_t{ip->ihl} * 4;
  if (hl < 20) {
    add_problem(t, errc::bad_value, "ip", at, "IHL below 5", "ip.hdr_len", ip->ihl);
    return;
  }
  if (at + hl > end) {
    add_problem(t, errc::truncated, "ip", at, "IPv4 options cut off", {}, 0, hl, end - at);
    return;
  }
  if (hl > 20) t.add_layer("ip.options", "IPv4 options", at + 20, hl - 20);
  if (wire::ones_sum{}.add(frame.subspan(at, hl)).checksum() != 0)
    add_problem(t, errc::bad_checksum, "ip", at + 10, "IPv4 header checksum does not match",
                "ip.checksum", ip->checksum);
  std::size_t ip_end = at + ip->total_length;
  if (ip->total_length < hl) {
    add_problem(t, errc::bad_length, "ip", at + 2, "total length below header length", "ip.len",
                ip->total_length);
    return;
  }
  if (ip_end > end) {
    add_problem(t, errc::truncated, "ip", at, "IPv4 datagram longer than the bytes present",
                "ip.len", ip->total_length, ip->total_length, end - at);
    ip_end = end;
  }
  if (ip->flag_mf || ip->frag_offset) {
    add_problem(t, errc::unsupported, "ip", at + 6, "IPv4 fragment: not reassembled", {}, 0, 0, 0,
                wire::severity::warning);
    return;
  }
  if (ip->protocol != wire::ip_proto_udp) return;
  wire::ones_sum pseudo;
  pseudo.add32(ip->src).add32(ip->dst);
  udp(t, frame, at + hl, ip_end, pseudo, false, o);
}

template <class Tree>
constexpr void ipv6(Tree& t, bytes frame, std::size_t at, std::size_t end,
                    const options& o) noexcept {
  t.encap = "ipv6";
  const auto ip = add_header<wire::ipv6_header>(t, frame, at, end);
  if (!ip) return;
  std::size_t ip_end = at + 40 + ip->payload_length;
  if (ip_end > end) {
    add_problem(t, errc::truncated, "ipv6", at, "IPv6 payload longer than the bytes present",
                "ipv6.plen", ip->payload_length, 40 + ip->payload_length, end - at);
    ip_end = end;
  }
  if (ip->next_header != wire::ip_proto_udp) return;  // extension headers: not SUE's
  wire::ones_sum pseudo;
  pseudo.add(frame.subspan(at + 8, 32));
  udp(t, frame, at + 40, ip_end, pseudo, true, o);
}

// AFH Gen 2, recognised by the SLAP signature of the first octet. A normal-format signature
// is also what any locally administered AAI MAC looks like, so W = 0 counts only when the SUE
// Ethertype follows; on the bare link type it always counts. Returns false to fall back to
// plain Ethernet.
template <class Tree>
constexpr bool afh2(Tree& t, bytes frame, bool bare, const options& o) noexcept {
  const std::size_t n = frame.size();
  if (frame[0] & wire::afh2_w_bit) {
    const bool sue_follows = n >= 8 && wire::load_be16(frame.data() + 6) == o.sue_ethertype;
    // 22:.. and 23:.. are also locally administered MACs: a frame whose bytes 12-13 hold a
    // common Ethertype is taken as ordinary Ethernet unless SUE's Ethertype follows the header.
    if (!bare && !sue_follows && n >= 14 &&
        is_common_ethertype(wire::load_be16(frame.data() + 12), o))
      return false;
    t.encap = "afh2c";
    if (!add_header<wire::afh2_compressed>(t, frame, 0, n)) return true;
    if (sue_follows) {
      (void)add_header<wire::afh2_ethertype>(t, frame, 6, n);
      sue_pdu(t, frame, 8, n, false, o);
    } else {
      // No Ethertype: the SUE Lite profile, packed payload straight after the header.
      t.encap = "lite";
      const auto l = t.add_layer("sue_lite", "SUE Lite payload", 6, n - 6);
      // Padding cannot be told from opaque payload; commands delimit it.
      const std::size_t used = commands(t, frame, 6, n - 6, o);
      t.layers[l].length = static_cast<std::uint32_t>(used);
      add_generated(t, l, generated::lite_len, used);
      if (used > wire::sue_lite_max_payload)
        add_problem(t, errc::bad_length, "sue_lite", 6, "payload over 1024 bytes (R2 3.4)",
                    generated::lite_len.filter, used, 0, 0, wire::severity::warning);
    }
    return true;
  }
  const bool sue_follows = n >= 14 && wire::load_be16(frame.data() + 12) == o.sue_ethertype;
  if (!bare && !sue_follows) return false;
  t.encap = "afh2";
  if (!add_header<wire::afh2_normal>(t, frame, 0, n)) return true;
  const auto et = add_header<wire::afh2_ethertype>(t, frame, 12, n);
  if (!et) return true;
  if (!sue_follows) {
    add_problem(t, errc::unsupported, "afh2.etype", 12, "transport is not SUE", "afh2.type",
                et->type, 0, 0, wire::severity::warning);
    return true;
  }
  sue_pdu(t, frame, 14, n, false, o);
  return true;
}

template <class Tree>
constexpr void ethernet(Tree& t, bytes frame, const options& o) noexcept {
  const std::size_t n = frame.size();
  t.encap = "eth";
  const auto eth = add_header<wire::ethernet_header>(t, frame, 0, n);
  if (!eth) return;
  std::size_t at = 14;
  std::uint16_t type = eth->type;
  bool tagged = false;
  for (int tags = 0; tags < 2 && (type == wire::ethertype::vlan || type == 0x88A8); ++tags) {
    const auto tag = add_header<wire::vlan_tag>(t, frame, at, n);
    if (!tag) return;
    at += 4;
    type = tag->type;
    tagged = true;
  }
  if (type == o.sue_ethertype || type == o.shim_ethertype) {
    const bool shim = type == o.shim_ethertype;
    t.encap = shim ? (tagged ? "afh1-vlan-shim" : "afh1-shim") : (tagged ? "afh1-vlan" : "afh1");
    (void)add_header<wire::afh1_addresses>(t, frame, 0, n);
    if (!shim) return sue_pdu(t, frame, at, n, false, o);
    const auto s = add_header<wire::afh1_shim>(t, frame, at, n);
    if (!s) return;
    at += 16;
    if (s->next_header != o.shim_next_sue)
      return add_problem(t, errc::unsupported, "afh1.shim", at - 16 + 2, "transport is not SUE",
                         "afh1.shim.next_header", s->next_header, 0, 0, wire::severity::warning);
    std::size_t end = at + s->length;
    if (end > n) {
      add_problem(t, errc::truncated, "afh1.shim", at - 16 + 3, "shim length runs past the frame",
                  "afh1.shim.length", s->length, s->length, n - at);
      end = n;
    }
    return sue_pdu(t, frame, at, end, true, o);
  }
  if (type == wire::ethertype::ipv4) return ipv4(t, frame, at, n, o);
  if (type == wire::ethertype::ipv6) return ipv6(t, frame, at, n, o);
}

// A capture's frame may end in the 4-byte FCS (little-endian CRC-32 of the rest).
constexpr bool ends_in_fcs(bytes frame) noexcept {
  if (frame.size() < 18) return false;
  const std::size_t n = frame.size() - 4;
  const std::uint32_t fcs = std::uint32_t{frame[n]} | (std::uint32_t{frame[n + 1]} << 8) |
                            (std::uint32_t{frame[n + 2]} << 16) |
                            (std::uint32_t{frame[n + 3]} << 24);
  return wire::crc32(frame.first(n)) == fcs;
}

}  // namespace detail

// A SUE PDU on its own (RH, commands, R-CRC), for a carrier the engine does not read itself,
// such as a tunnel: `t` is not cleared, layers are numbered from the PDU's first byte.
template <class Tree>
constexpr void dissect_pdu(Tree& t, wire::bytes pdu, const options& o = {}) noexcept {
  detail::sue_pdu(t, pdu, 0, pdu.size(), true, o);
}

// Whether bytes on an unknown UDP port pass for a SUE PDU: version 0, reserved bits zero,
// R-CRC good (the heuristic the engine applies).
constexpr bool plausible_pdu(wire::bytes payload) noexcept {
  return detail::plausible_pdu(payload);
}

// Dissects one frame into `t` (cleared first).
template <class Tree>
constexpr void dissect_frame(Tree& t, wire::bytes frame, std::uint32_t link,
                             const options& o = {}) noexcept {
  t.clear();
  std::size_t n = frame.size();
  bool fcs = false;
  bool fcs_bad = false;
  if (link == link_ethernet && o.fcs != fcs_mode::absent) {
    const bool good = detail::ends_in_fcs(frame);
    fcs = o.fcs == fcs_mode::present ? n >= 4 : good;
    fcs_bad = fcs && !good;
    if (fcs) n -= 4;
  }
  const wire::bytes f = frame.first(n);
  t.frame_length = static_cast<std::uint32_t>(n);
  if (link == link_ethernet) {
    if (n == 0 || !wire::has_afh2_signature(f[0]) || !detail::afh2(t, f, false, o))
      detail::ethernet(t, f, o);
  } else if (link == link_afh2) {
    t.encap = "afh2";
    if (n == 0)
      detail::add_problem(t, wire::errc::truncated, "afh2", 0, "empty frame", {}, 0, 6, 0);
    else if (!wire::has_afh2_signature(f[0]))
      detail::add_problem(t, wire::errc::bad_value, "afh2", 0,
                          "first octet lacks the AFH Gen 2 SLAP signature", "afh2.x", f[0]);
    else
      detail::afh2(t, f, true, o);
  } else if (link == tofu::link_tofu) {
    tofu::dissect_record(t, f);  // Tofu-style slices: no Ethernet, no FCS
  } else if (link == rdma::link_rdma) {
    rdma::dissect_packet(t, f);  // ExaJet packets: header, payload, footer
  } else {
    t.encap = "unknown";
    detail::add_problem(t, wire::errc::unsupported, "frame", 0, "link type not decoded", {}, link);
  }
  if (fcs) {
    const auto l = t.add_layer("eth.fcs", "Frame check sequence", n, 4);
    detail::add_generated(t, l, generated::fcs,
                          std::uint64_t{frame[n]} | (std::uint64_t{frame[n + 1]} << 8) |
                              (std::uint64_t{frame[n + 2]} << 16) |
                              (std::uint64_t{frame[n + 3]} << 24));
    if (fcs_bad)
      detail::add_problem(t, wire::errc::bad_checksum, "eth.fcs", n, "FCS does not match the frame",
                          "eth.fcs", wire::crc32(frame.first(n)));
  }
}

}  // namespace scaleup::dissect
