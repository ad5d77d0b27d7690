// What read_frame (receive.hpp) gives: a frame's reading as a value. The options a receiver
// reads with, the link types it reads, and received_frame: each network header decoded with its
// place in the frame, the XPU ids, the RH, the packed payload, the R-CRC's verdict, the layers in
// the order found and every problem found on the way.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/bsd_loopback.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/failover.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/ip_fragment.hpp"
#include "scaleup/wire/linux_sll.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/reliability_header.hpp"
#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::wire {

// Link types (pcap LINKTYPE_*): Ethernet, and USER0 for bare AFH Gen 2 frames (no Ethernet
// header: the frame starts with the AFH Gen 2 header, R2 3.5.2).
inline constexpr std::uint32_t link_ethernet = 1;
inline constexpr std::uint32_t link_afh2 = 147;
// Frames that start with an IP header: LINKTYPE_RAW (the version nibble tells IPv4 from IPv6),
// LINKTYPE_IPV4 and LINKTYPE_IPV6 (what a tunnel interface or a reassembled datagram gives).
inline constexpr std::uint32_t link_raw = 101;
inline constexpr std::uint32_t link_ipv4 = 228;
inline constexpr std::uint32_t link_ipv6 = 229;
// What libpcap writes where there is no link-layer header to keep: BSD loopback (LINKTYPE_NULL,
// the family in the capturing host's byte order; LINKTYPE_LOOP, in network byte order) and
// Linux cooked captures (LINKTYPE_LINUX_SLL and LINKTYPE_LINUX_SLL2: `tcpdump -i any`).
inline constexpr std::uint32_t link_null = 0;
inline constexpr std::uint32_t link_loop = 108;
inline constexpr std::uint32_t link_linux_sll = 113;
inline constexpr std::uint32_t link_linux_sll2 = 276;

// What a receiver is configured with. Every default follows decisions.md; each is a parameter
// because a fabric could reasonably differ.
struct receive_options {
  // UDP ports the user names as SUE, on either side of a datagram: decoded as SUE whatever they
  // hold. None by default: no port is assigned to SUE (R2 3.5.1 gives none), and 4793, the
  // port once assumed, is Ultra Ethernet Transport's (docs/wire-format.md, "Ethernet, IP, UDP").
  std::array<std::uint16_t, 16> udp_ports{};
  std::size_t udp_port_count = 0;
  // SUE on any other UDP port when the payload passes for a PDU (plausible_pdu): "the dissector
  // also finds SUE on other ports heuristically" (decisions.md "Network headers").
  bool heuristics = true;
  // Flows found SUE by that test, whose later datagrams stay SUE (udp_flow.hpp); null: each
  // datagram is judged alone. Consulted and updated by read_frame.
  flow_binding* flows = nullptr;
  fcs_mode fcs = fcs_mode::detect;  // Ethernet link only
  // IPv4 header and UDP checksums: checked only when asked, and then a mismatch is a warning
  // (ip.hpp checksum_status). A sending host's capture holds checksums left to the NIC; the
  // R-CRC is SUE's own integrity check and is always checked.
  bool check_checksums = false;
  std::uint16_t sue_ethertype = ethertype::sue;
  std::uint16_t shim_ethertype = ethertype::afh1_shim;
  std::uint8_t shim_next_sue = wire::shim_next_sue;  // the shim's next header naming SUE
  // AFH Gen 2 on an Ethernet link, told from Ethernet by the SLAP signature of the first octet
  // and the Ethertype after the header (recognise_afh2; decisions.md "Network headers"). Off:
  // every frame of an Ethernet link is read as Ethernet (an AFH Gen 2 frame of the normal
  // format then reads as AFH Gen 1: the same bytes as addresses), as Wireshark reads one after
  // its Ethernet dissector has taken the frame.
  bool afh2_on_ethernet = true;
  // Where the commands of a payload end, for the PDU end rule of minimum-size Layer 2 frames and
  // the padding of SUE Lite payloads (pdu.hpp); pack/receive.hpp supplies it from a command
  // profile. Null: every byte boundary is a candidate, and a SUE Lite payload has no padding.
  const command_boundaries* commands = nullptr;
  // Read a UDP datagram only as far as whether it carries SUE (is_sue_datagram, which asks and
  // teaches `flows`), and no further: for a pass whose one use is to teach the flow table, such
  // as the rest of a cut file's first pass once it is certain to be read again: that pass builds no
  // layers.
  bool flows_only = false;

  constexpr bool add_udp_port(std::uint16_t port) noexcept {
    if (udp_port_count == udp_ports.size()) return false;
    udp_ports[udp_port_count++] = port;
    return true;
  }
  // What a frame of an Ethernet link reads as: AFH Gen 2 (recognise_afh2), or, with none, or
  // with afh2_on_ethernet off, Ethernet.
  constexpr afh2_recognition afh2_of_ethernet(bytes frame) const noexcept {
    if (!afh2_on_ethernet) return {};
    return recognise_afh2(frame, false, sue_ethertype, shim_ethertype);
  }
  constexpr bool is_sue_port(std::uint16_t port) const noexcept {
    for (std::size_t i = 0; i < udp_port_count; ++i)
      if (udp_ports[i] == port) return true;
    return false;
  }
};

// The layers of a frame, in the order they were found: each decoded header, and the parts of the
// PDU around them.
enum class layer_kind : std::uint8_t {
  ethernet,
  vlan,
  afh1,  // AFH Gen 1's reading of the Ethernet addresses (offset 0, found after the tags)
  afh1_shim,
  ipv4,
  ipv4_options,
  ipv6,
  ipv6_fragment,
  udp,
  afh2,  // normal format
  afh2c,
  afh2_ethertype,
  sue_rh,
  sue_payload,  // between RH and R-CRC
  sue_rcrc,
  sue_pad,   // zeros after the R-CRC, to the minimum frame
  sue_lite,  // a SUE Lite payload, padding excluded
  fcs,
  service_tag,  // a tag announced by 802.1ad's 0x88A8 (in `vlan`, shown as wire::service_tag)
  sll,          // Linux cooked capture v1
  sll2,         // Linux cooked capture v2
  null,         // BSD loopback (LINKTYPE_NULL, LINKTYPE_LOOP)
  failover,     // a message of the failover exchange (failover.hpp)
};

struct layer_ref {
  layer_kind kind = layer_kind::ethernet;
  std::uint32_t offset = 0;
  std::uint32_t length = 0;  // bytes of the layer in the capture
  // Entries of `errors` found before this layer: with it, a consumer can put each problem
  // between the layers it was found between (the dissection tree does).
  std::uint32_t errors_before = 0;
  // Bytes of the layer on the wire after `length`, which the capture did not keep (its
  // snapshot length cut the frame there).
  std::uint32_t not_captured = 0;
};

// A header as decoded, and where it starts in the frame.
template <class T>
struct located {
  T value{};
  std::size_t offset = 0;
};

// How far a frame that is not (or not yet) SUE was read: what its outermost recognised protocol
// is. A SUE frame is named by its encap instead.
enum class carrier : std::uint8_t {
  unknown,
  ethernet,
  ipv4,
  ipv6,
  ipv4_udp,
  ipv6_udp,
  afh2,
  linux_sll,  // either version: what follows is not one the reader knows
  null,
};

inline constexpr std::array<std::string_view, 9> carrier_names{
    "unknown", "eth", "ipv4", "ipv6", "ipv4/udp", "ipv6/udp", "afh2", "sll", "null"};

constexpr std::string_view to_string(carrier c) noexcept {
  return carrier_names[static_cast<std::size_t>(c)];
}

struct received_frame {
  // 802.1Q or 802.1ad tags read in a row; a frame of more is reported (errc::unsupported).
  static constexpr std::size_t max_vlan_tags = 8;
  static constexpr std::size_t max_layers = 24;
  static constexpr std::size_t max_errors = 16;

  std::uint32_t link = 0;
  bytes frame{};           // the bytes given, FCS included: the spans below point into them
  std::size_t length = 0;  // bytes before the FCS, what the headers were read from
  // The frame on the wire (pcap's original length), FCS included as in `frame`, and how many of
  // its bytes the capture did not keep: lengths are checked against the wire, and what was not
  // captured is no fault of the frame (one note in `errors` says how much is missing).
  std::size_t wire_length = 0;
  std::size_t not_captured = 0;
  std::size_t length_on_wire = 0;  // `length`'s counterpart on the wire: the bytes before the FCS

  // The SUE encapsulation recognised from the network headers, whether or not a PDU could be
  // read behind them (the RH cut off, or a shim or AFH Gen 2 Ethertype naming another
  // transport, which a warning reports); none: not a SUE frame, see `net`.
  std::optional<encap> kind;
  carrier net = carrier::unknown;

  // Each network header the frame carries, decoded (also when a fixed field is wrong: the
  // error is in `errors`), with its offset. Absent: not in the frame, or cut off.
  std::optional<located<linux_sll>> sll;    // link type 113
  std::optional<located<linux_sll2>> sll2;  // link type 276
  // Link types 0 and 108: the family after the byte-order rule (bsd_family_of).
  std::optional<located<bsd_loopback>> null;
  std::optional<located<ethernet_header>> eth;
  // Every tag, outermost first; the layer list says which were 802.1ad service tags.
  list_storage<located<vlan_tag>, max_vlan_tags> vlan;  // the first vlan_count
  std::size_t vlan_count = 0;
  std::optional<located<afh1_addresses>> afh1;
  std::optional<located<afh1_shim>> shim;
  std::optional<located<ipv4_header>> ipv4;
  bytes ipv4_options{};
  std::optional<located<ipv6_header>> ipv6;
  std::optional<located<ipv6_fragment_header>> ipv6_frag;
  std::optional<located<udp_header>> udp;
  checksum_status ipv4_checksum = checksum_status::unverified;  // with ipv4
  checksum_status udp_checksum = checksum_status::unverified;   // with udp
  std::optional<located<afh2_normal>> afh2;
  std::optional<located<afh2_compressed>> afh2c;
  std::optional<located<afh2_ethertype>> afh2_type;
  // A message of two SUE instances' failover exchange, in the carrier that names it (UDP port
  // failover_udp_port unless that port is named as SUE's; the shim's next header
  // shim_next_failover). Such a frame is not SUE: `kind` stays empty.
  std::optional<located<failover_message>> failover;

  // The endpoints exactly as the frame carries them: only AFH Gen 1 (addresses, then the shim's
  // 32-bit ids when there is one) and AFH Gen 2 carry XPU ids. Over IP the addresses are in
  // ipv4/ipv6; a fabric that follows frame.hpp's plan maps them with xpu_of_ipv4/xpu_of_ipv6.
  std::optional<std::uint32_t> src_xpu;
  std::optional<std::uint32_t> dst_xpu;

  // A fragment of an IP datagram (IPv4 MF or offset set; an IPv6 Fragment header that does not
  // hold the whole datagram): what ip_reassembler needs to join it. Nothing after the IP layer
  // (and the Fragment header) is read from such a frame.
  std::optional<ip_fragment> fragment;

  // The PDU: where the RH starts (or the SUE Lite payload), the RH, the packed payload (between
  // RH and R-CRC; for SUE Lite the payload before its padding), and where the PDU ends: the
  // R-CRC's place and verdict and the padding after it (bounds.payload_end counts from
  // pdu_offset, on the wire). `payload` holds the bytes captured: fewer than on the wire when the
  // snapshot length cut it (its layer's not_captured says how many are missing).
  std::size_t pdu_offset = 0;
  std::optional<reliability_header> rh;
  bytes payload{};
  pdu_bounds bounds{};

  fcs_check fcs{};

  list_storage<layer_ref, max_layers> layers;  // the first layer_count
  std::size_t layer_count = 0;
  error_list<max_errors> errors;
  // read_frame does not walk the commands of the payload (that takes pack/); a consumer that
  // does puts what it finds here in `errors`, after the payload's length warning and before the
  // R-CRC's verdict.
  std::size_t command_errors_at = 0;

  constexpr std::span<const layer_ref> layer_list() const noexcept {
    return {layers.data(), layer_count};
  }
  // No problem of error severity (warnings allowed).
  constexpr bool ok() const noexcept { return errors.ok(); }
  // The payload's length on the wire (what the analysis counts), captured or not.
  constexpr std::size_t payload_length() const noexcept {
    if (!rh) return payload.size();
    return bounds.payload_end - layout<reliability_header>::size;
  }
  // A PDU a receiver takes: an RH and an R-CRC that matches it and the payload.
  constexpr bool accepted() const noexcept {
    return rh.has_value() && bounds.status == rcrc_status::good;
  }
  // The RH in place, for field access without a copy.
  constexpr result<view<reliability_header>> rh_view() const noexcept {
    if (!rh)
      return truncated(layout<reliability_header>::name, pdu_offset,
                       layout<reliability_header>::size, 0, "no RH in this frame");
    return view<reliability_header>::make(frame, pdu_offset);
  }
  // "udp4", "afh2c", ... for SUE frames; "eth", "ipv4/udp", ... for others.
  constexpr std::string_view name() const noexcept {
    return kind ? to_string(*kind) : to_string(net);
  }
};

namespace detail {

// What both of read_frame's readers (receive.hpp, header_prediction.hpp) take from a frame read as
// far as its UDP header `u`, over f.ipv6 when `v6`, else f.ipv4.
// The datagram's flow, as a flow table keys it.
constexpr udp_flow flow_of(const received_frame& f, const udp_header& u, bool v6) noexcept {
  return v6 ? udp_flow::make(ip_address::v6(f.ipv6->value.src), u.src_port,
                             ip_address::v6(f.ipv6->value.dst), u.dst_port)
            : udp_flow::make_v4(f.ipv4->value.src, u.src_port, f.ipv4->value.dst, u.dst_port);
}
// The sum of its checksum's pseudo-header, which only a checked checksum needs.
constexpr ones_sum pseudo_header_of(const received_frame& f, const udp_header& u, bool v6,
                                    const receive_options& o) noexcept {
  if (!o.check_checksums) return {};
  return v6 ? udp_pseudo_header(f.ipv6->value, u.length)
            : udp_pseudo_header(f.ipv4->value, u.length);
}
// Whether it is a message of the failover exchange: on its port, unless that port is named SUE's.
constexpr bool failover_datagram(const udp_header& u, const receive_options& o) noexcept {
  return (u.dst_port == failover_udp_port || u.src_port == failover_udp_port) &&
         !o.is_sue_port(u.dst_port) && !o.is_sue_port(u.src_port);
}

}  // namespace detail

// Whether two readings of the same bytes say the same: every header with its place, the layers,
// the PDU and every problem (spans compare where they point). What the tests hold read_frame's
// fast path to.
constexpr bool same_reading(const received_frame& a, const received_frame& b) noexcept {
  const auto same_span = [](bytes x, bytes y) {
    return x.size() == y.size() && (x.empty() || x.data() == y.data());
  };
  const auto same_at = [](const auto& x, const auto& y) {
    return x.has_value() == y.has_value() &&
           (!x || (x->offset == y->offset && x->value == y->value));
  };
  const auto same_layer = [](const layer_ref& x, const layer_ref& y) {
    return x.kind == y.kind && x.offset == y.offset && x.length == y.length &&
           x.errors_before == y.errors_before && x.not_captured == y.not_captured;
  };
  const auto same_error = [](const error& x, const error& y) {
    return x.code == y.code && x.layer == y.layer && x.offset == y.offset && x.needed == y.needed &&
           x.available == y.available && x.what == y.what && x.field == y.field &&
           x.value == y.value && x.level == y.level && x.item == y.item;
  };
  const auto same_fragment = [&](const std::optional<ip_fragment>& x,
                                 const std::optional<ip_fragment>& y) {
    return x.has_value() == y.has_value() &&
           (!x || (x->key == y->key && x->next_header == y->next_header && x->offset == y->offset &&
                   x->more == y->more && same_span(x->header, y->header) &&
                   same_span(x->data, y->data) && x->whole == y->whole));
  };
  bool same =
      a.link == b.link && same_span(a.frame, b.frame) && a.length == b.length &&
      a.wire_length == b.wire_length && a.not_captured == b.not_captured &&
      a.length_on_wire == b.length_on_wire && a.kind == b.kind && a.net == b.net &&
      same_at(a.sll, b.sll) && same_at(a.sll2, b.sll2) && same_at(a.null, b.null) &&
      same_at(a.eth, b.eth) && a.vlan_count == b.vlan_count && same_at(a.afh1, b.afh1) &&
      same_at(a.shim, b.shim) && same_at(a.ipv4, b.ipv4) &&
      same_span(a.ipv4_options, b.ipv4_options) && same_at(a.ipv6, b.ipv6) &&
      same_at(a.ipv6_frag, b.ipv6_frag) && same_at(a.udp, b.udp) &&
      a.ipv4_checksum == b.ipv4_checksum && a.udp_checksum == b.udp_checksum &&
      same_at(a.afh2, b.afh2) && same_at(a.afh2c, b.afh2c) && same_at(a.afh2_type, b.afh2_type) &&
      same_at(a.failover, b.failover) && a.src_xpu == b.src_xpu && a.dst_xpu == b.dst_xpu &&
      same_fragment(a.fragment, b.fragment) && a.pdu_offset == b.pdu_offset && a.rh == b.rh &&
      same_span(a.payload, b.payload) && a.bounds.payload_end == b.bounds.payload_end &&
      a.bounds.pad == b.bounds.pad && a.bounds.status == b.bounds.status &&
      a.bounds.rcrc == b.bounds.rcrc && a.bounds.computed == b.bounds.computed &&
      a.fcs.present == b.fcs.present && a.fcs.good == b.fcs.good && a.fcs.value == b.fcs.value &&
      a.fcs.computed == b.fcs.computed && a.layer_count == b.layer_count &&
      a.errors.size() == b.errors.size() && a.errors.overflow == b.errors.overflow &&
      a.command_errors_at == b.command_errors_at;
  for (std::size_t i = 0; same && i < a.vlan_count; ++i)
    same = a.vlan[i].offset == b.vlan[i].offset && a.vlan[i].value == b.vlan[i].value;
  for (std::size_t i = 0; same && i < a.layer_count; ++i)
    same = same_layer(a.layers[i], b.layers[i]);
  for (std::size_t i = 0; same && i < a.errors.size(); ++i)
    same = same_error(a.errors[i], b.errors[i]);
  return same;
}

}  // namespace scaleup::wire
