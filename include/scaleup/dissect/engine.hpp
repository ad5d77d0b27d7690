// The dissection engine: one frame in, one tree out, in lax mode (everything decodable is
// decoded; the error that stopped it, and every problem seen on the way, is in the tree).
// The CLI and the Wireshark plugin both run this. The frame is read by the typed readers
// (wire::read_frame, and Tofu's and the RDMA engine's for their link types), which apply the
// rules of docs/wire-format.md; the tree is built from what they return, plus the packed
// commands, which a command profile delimits.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "scaleup/dissect/build.hpp"
#include "scaleup/dissect/rdma.hpp"
#include "scaleup/dissect/tofu.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/receive.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/receive.hpp"
#include "scaleup/wire/xpu_map.hpp"

namespace scaleup::dissect {

// Link types and FCS handling are the reader's (wire/receive.hpp); named here too for the
// engine's callers.
using wire::fcs_mode;
using wire::link_afh2;
using wire::link_ethernet;

// What the reader is told (UDP ports, heuristics, FCS, Ethertypes), and how commands are shown.
// `commands` is set from `profile` by dissect_frame.
struct options : wire::receive_options {
  // How packed commands are read; nullptr leaves payloads opaque.
  const pack::profile* profile = &pack::default_profile;
  // false: the tree holds no layers or fields at all, only what the readers found wrong and the
  // PDU's summary (tree.pdu); the commands are not walked. For a consumer that reads only the
  // summary (`scaleup stats`: the sequence analysis).
  bool nodes = true;
  // Which XPU an IP destination is (the user's map, or the library's addressing plan): a frame
  // over IP carries no destination XPU id (R2 3.5.1). Where it gives one, the RH layer gets a
  // generated sue.dst_xpu; null: none, the endpoints stay the IP addresses.
  const wire::xpu_map* xpus = nullptr;
};

// Fields the engine computes rather than reads; described like table fields so that every
// consumer (printers, JSON, Wireshark) treats them alike.
namespace computed_fields {
// clang-format off
inline constexpr std::array<wire::value_name, 4> rcrc_status_names{
    {{0, "good"}, {1, "bad"}, {2, "missing"}, {3, "not_captured"}}};
inline constexpr field_info rcrc_status{
    .name = "R-CRC status", .filter = "sue.rcrc.status", .width = 2, .type = wire::kind::label,
    .names = rcrc_status_names,
    .description = "good, bad, missing (PDU of an RH only), or not_captured (the capture's "
                   "snapshot length cut the PDU)",
    .seed = "R2 3.3; decisions.md; Wireshark packet-frame.c (a cut record is not malformed)"};
// tshark's names and numbers (proto.h PROTO_CHECKSUM_E_*): checked only when asked.
inline constexpr std::array<wire::value_name, 4> checksum_status_names{
    {{0, "bad"}, {1, "good"}, {2, "unverified"}, {3, "not_present"}}};
inline constexpr field_info ip_checksum_status{
    .name = "header checksum status", .filter = "ip.checksum.status", .width = 2,
    .type = wire::kind::label, .names = checksum_status_names,
    .description = "unverified unless checksums are checked (--check-checksums)",
    .seed = "RFC 791; Wireshark packet-ip.c (not checked by default)"};
inline constexpr field_info udp_checksum_status{
    .name = "checksum status", .filter = "udp.checksum.status", .width = 2,
    .type = wire::kind::label, .names = checksum_status_names,
    .description = "unverified unless checksums are checked (--check-checksums); not_present: 0 "
                   "over IPv4",
    .seed = "RFC 768; Wireshark packet-udp.c (not checked by default)"};
inline constexpr field_info payload_len{
    .name = "payload length", .filter = "sue.payload.len", .width = 16,
    .description = "Bytes between RH and R-CRC", .seed = "R2 3.3"};
inline constexpr field_info lite_len{
    .name = "payload length", .filter = "sue_lite.len", .width = 16,
    .description = "Bytes after the AFH Gen 2 header", .seed = "R2 3.4, Fig. 10"};
inline constexpr field_info control_len{
    .name = "control length", .filter = pack::control_len_filter, .width = 8,
    .description = "Control bytes: 2 x the profile's units", .seed = "R2 4.2 step 2a"};
inline constexpr field_info data_len{
    .name = "data length", .filter = pack::data_len_filter, .width = 16,
    .description = "Data bytes after the control (0 to 256)", .seed = "R2 4.2 step 2a"};
inline constexpr field_info fcs{
    .name = "FCS", .filter = "eth.fcs", .width = 32, .type = wire::kind::hex,
    .description = "Ethernet frame check sequence, as sent", .seed = "IEEE 802.3"};
// clang-format on
inline constexpr field_info dst_xpu{
    .name = "destination XPU",
    .filter = "sue.dst_xpu",
    .width = 32,
    .description = "The XPU the IP destination is, from the user's XPU map (not on the wire)",
    .seed = "R2 3.5.1 (no destination XPU id over IP)"};
inline constexpr std::array<const field_info*, 9> all{
    &rcrc_status, &payload_len, &lite_len,           &control_len,        &data_len,
    &fcs,         &dst_xpu,     &ip_checksum_status, &udp_checksum_status};
}  // namespace computed_fields

namespace detail {

using wire::bytes;
using wire::layout;

template <class Tree>
constexpr void add_command_error(Tree& t, const pack::command_view& c, const field_info& f,
                                 std::uint64_t v) noexcept {
  if (error e = wire::check_rule("sue.cmd", c.offset, f, v)) {
    e.item = c.index;
    t.add_error(e);
  }
}

// The packed commands of a payload, each its own layer in the list "sue.cmds". Returns the
// bytes the commands took (trailing zero padding excluded). What the profile cannot parse (a
// type it lacks, another vendor's commands, opaque bytes) is no fault of the PDU: the commands
// before it are shown, the rest is one "sue.opaque" layer, and a warning says where the parse
// stopped and why. `cut`: the capture kept only `len` bytes of the payload, so a command cut off
// at its end was cut by the snapshot length, and that is not even a warning. `end_unknown`: the
// capture cut the frame before where its payload ends was known (the R-CRC and padding of a
// minimum-size frame may lie in the bytes walked, read as commands), so neither what the walk
// cannot parse nor the rules of what it parsed are judged: no fault there is known to be the
// PDU's.
template <class Tree>
constexpr std::size_t commands(Tree& t, bytes frame, std::size_t at, std::size_t len,
                               const options& o, bool cut = false,
                               bool end_unknown = false) noexcept {
  if (!o.profile) return len;
  pack::unpacker u(*o.profile, frame.subspan(at, len), at);
  pack::command_view c;
  const bool distinct = o.profile->checked();
  const std::uint8_t* const frame_end = frame.data() + frame.size();
  while (u.next(c)) {
    const auto l =
        t.add_layer("sue.cmd", c.type->description, c.offset, c.size(), "sue.cmds", distinct);
    // A field inside the control is read by a load that may reach past the control into the
    // bytes that follow it in the frame (the bits taken are the field's alone): eight bytes are
    // then nearly always there, where a short control's fields were put together a piece at a
    // time. One a profile lets run past its control reads zeros there, as command_view::field.
    const bytes readable(c.control.data(), static_cast<std::size_t>(frame_end - c.control.data()));
    const std::size_t control_bits = c.control.size() * 8;
    for (const auto& f : c.type->fields) {
      const std::uint64_t v =
          f.bit + f.width <= control_bits && wire::fits_wide(readable.size(), f.bit, f.width)
              ? wire::get_bits_wide(readable.data(), f.bit, f.width)
              : c.field(f);
      t.add_field(
          field_node{&f, l, static_cast<std::uint32_t>(c.offset * 8 + f.bit), false, v, nullptr});
      if (f.check != wire::rule::any && !end_unknown) add_command_error(t, c, f, v);
    }
    add_generated(t, l, o.profile->name_field(), c.code());
    add_generated(t, l, computed_fields::control_len, c.control.size());
    add_generated(t, l, computed_fields::data_len, c.data.size());
  }
  if (error e = u.error_found()) {
    const std::size_t stop = at + u.consumed();
    const bool snapshot = (cut && e.code == wire::errc::truncated) || end_unknown;
    t.add_layer("sue.opaque",
                !snapshot ? "Opaque bytes: the command profile cannot parse them"
                : e.code == wire::errc::truncated
                    ? "Command cut by the capture's snapshot length"
                    : "Not examined: the capture ends before the PDU's end",
                stop, at + len - stop);
    if (!snapshot) {
      e.layer = "sue.opaque";
      e.level = wire::severity::warning;
      t.add_error(e);
    }
    return len;
  }
  if (u.padding()) t.add_layer("sue.pad", "Padding", at + u.consumed(), u.padding());
  return u.consumed();
}

// The destination XPU the options' map gives for a frame over IP; none where the frame carries
// its own (AFH Gen 1 and Gen 2: their fields show it) or the map does not know the address.
constexpr std::optional<std::uint32_t> mapped_destination(const wire::received_frame& f,
                                                          const options& o) noexcept {
  if (!o.xpus || f.dst_xpu) return std::nullopt;
  if (f.ipv4) return o.xpus->xpu_of(wire::ip_address::v4(f.ipv4->value.dst));
  if (f.ipv6) return o.xpus->xpu_of(wire::ip_address::v6(f.ipv6->value.dst));
  return std::nullopt;
}

// What the analysis reads of a frame (pdu_summary), from what the reader found; called for the
// frame and then for a datagram reassembled in it, so the first IP header's addresses stand.
template <class Tree>
constexpr void summarize(Tree& t, const wire::received_frame& f, const options& o) noexcept {
  pdu_summary& p = t.pdu;
  if (!p.src_ip) {
    if (f.ipv4) {
      // Made in place: an address made on the stack and copied in is stored in narrow pieces
      // and loaded back whole before the stores reach the cache, a stall a frame.
      wire::store_be32(p.src_ip.emplace().bytes.data(), f.ipv4->value.src);
      wire::store_be32(p.dst_ip.emplace().bytes.data(), f.ipv4->value.dst);
    } else if (f.ipv6) {
      p.src_ip = wire::ip_address::v6(f.ipv6->value.src);
      p.dst_ip = wire::ip_address::v6(f.ipv6->value.dst);
    }
  }
  if (f.rh) {
    p.rh = f.rh;
    p.payload_length = static_cast<std::uint32_t>(f.payload_length());
  }
  if (!p.dst_xpu)
    p.dst_xpu = f.dst_xpu ? f.dst_xpu : f.rh ? mapped_destination(f, o) : std::nullopt;
  p.dropped = p.dropped || f.errors.overflow;
  for (const error& e : f.errors)
    if (counts_against_pdu(e)) p.dropped = true;
}

// The tree of what the reader found: a layer for each layer it recorded, its problems between
// the layers they were found between, and the packed commands walked where the payload is.
// `t` is not cleared, and its encap and frame length are the caller's. Layers before
// `first_layer` are left out (a reassembled datagram's IP header, shown from the frame); the
// problems found before them are not.
template <class Tree>
constexpr void build_layers(Tree& t, const wire::received_frame& f, const options& o,
                            std::size_t first_layer = 0) noexcept {
  using wire::layer_kind;
  summarize(t, f, o);
  if (!o.nodes) {
    copy_errors(t, f.errors, 0, f.errors.size());
    return;
  }
  const bytes frame = f.frame;
  std::size_t copied = 0;
  std::size_t vlan = 0;
  // The R-CRC status closes the PDU: after its R-CRC, error and padding, before the FCS.
  std::uint16_t status_layer = 0;
  bool status_due = false;
  const auto add_status = [&] {
    if (status_due)
      add_generated(t, status_layer, computed_fields::rcrc_status,
                    static_cast<std::uint64_t>(f.bounds.status));
    status_due = false;
  };
  for (const wire::layer_ref& l : f.layer_list().subspan(std::min(first_layer, f.layer_count))) {
    copied = copy_errors(t, f.errors, copied, l.errors_before);
    const auto header = [&](const auto& h) { return add_fields(t, frame, l.offset, h->value); };
    switch (l.kind) {
      case layer_kind::sll:
        header(f.sll);
        break;
      case layer_kind::sll2:
        header(f.sll2);
        break;
      case layer_kind::null:
        header(f.null);
        break;
      case layer_kind::ethernet:
        header(f.eth);
        break;
      case layer_kind::vlan:
        header(&f.vlan[vlan++]);
        break;
      case layer_kind::service_tag:
        add_fields(t, frame, l.offset, wire::as_service_tag(f.vlan[vlan++].value));
        break;
      case layer_kind::afh1:
        header(f.afh1);
        break;
      case layer_kind::afh1_shim:
        header(f.shim);
        break;
      case layer_kind::ipv4:
        add_generated(t, header(f.ipv4), computed_fields::ip_checksum_status,
                      static_cast<std::uint64_t>(f.ipv4_checksum));
        break;
      case layer_kind::ipv4_options:
        t.add_layer("ip.options", "IPv4 options", l.offset, l.length);
        break;
      case layer_kind::ipv6:
        header(f.ipv6);
        break;
      case layer_kind::ipv6_fragment:
        header(f.ipv6_frag);
        break;
      case layer_kind::udp:
        add_generated(t, header(f.udp), computed_fields::udp_checksum_status,
                      static_cast<std::uint64_t>(f.udp_checksum));
        break;
      case layer_kind::afh2:
        header(f.afh2);
        break;
      case layer_kind::afh2c:
        header(f.afh2c);
        break;
      case layer_kind::afh2_ethertype:
        header(f.afh2_type);
        break;
      case layer_kind::failover:
        header(f.failover);
        break;
      case layer_kind::sue_rh: {
        const auto rh = add_fields(t, frame, l.offset, *f.rh);
        if (const auto dst = mapped_destination(f, o))
          add_generated(t, rh, computed_fields::dst_xpu, *dst);
        break;
      }
      case layer_kind::sue_payload: {
        const auto pl = t.add_layer(
            "sue.payload", o.profile ? "SUE payload" : "SUE payload (opaque)", l.offset, l.length);
        // The length on the wire; the layer spans what was captured.
        add_generated(t, pl, computed_fields::payload_len, l.length + l.not_captured);
        copied = copy_errors(t, f.errors, copied, f.command_errors_at);
        // A minimum-size Layer 2 frame the capture cut: its PDU ends where an R-CRC and the
        // padding after it are found (pdu.hpp), which the capture did not keep whole, so the
        // bytes taken for payload may hold them.
        const bool end_unknown =
            f.not_captured > 0 && !f.udp && !f.shim && f.length_on_wire <= wire::ethernet_min_frame;
        (void)commands(t, frame, l.offset, l.length, o, l.not_captured > 0, end_unknown);
        status_layer = pl;
        status_due = true;
        break;
      }
      case layer_kind::sue_rcrc:
        status_layer = add_fields(t, frame, l.offset, wire::rcrc_trailer{f.bounds.rcrc});
        break;
      case layer_kind::sue_pad:
        t.add_layer("sue.pad", "Padding", l.offset, l.length);
        break;
      case layer_kind::sue_lite: {
        // Padding cannot be told from opaque payload; commands delimit it (as the reader did).
        const std::size_t carried = f.length - l.offset;
        const auto ll = t.add_layer("sue_lite", "SUE Lite payload", l.offset, carried);
        copied = copy_errors(t, f.errors, copied, f.command_errors_at);
        const std::size_t used = commands(t, frame, l.offset, carried, o, l.not_captured > 0);
        t.layers[ll].length = static_cast<std::uint32_t>(used);
        add_generated(t, ll, computed_fields::lite_len, used + l.not_captured);
        break;
      }
      case layer_kind::fcs: {
        add_status();
        const auto fl = t.add_layer("eth.fcs", "Frame check sequence", l.offset, l.length);
        add_generated(t, fl, computed_fields::fcs, f.fcs.value);
        break;
      }
    }
  }
  copy_errors(t, f.errors, copied, f.errors.size());
  add_status();
}

// The Ethertype a frame that is not SUE's ends in, and where what it names starts: after the
// Ethernet header, the last VLAN tag or a cooked header. None for a SUE frame, a frame of IP or
// one whose link header has no Ethertype.
struct unread_type {
  std::uint16_t type = 0;
  std::size_t at = 0;
};
constexpr std::optional<unread_type> unread_ethertype(const wire::received_frame& f) noexcept {
  using wire::layer_kind;
  if (f.kind) return std::nullopt;
  for (std::size_t i = f.layer_count; i-- > 0;) {
    const wire::layer_ref& l = f.layers[i];
    const std::size_t at = l.offset + l.length;
    switch (l.kind) {
      case layer_kind::fcs:
        continue;
      case layer_kind::ethernet:
        return unread_type{f.eth->value.type, at};
      case layer_kind::vlan:
      case layer_kind::service_tag:
        return unread_type{f.vlan[f.vlan_count - 1].value.type, at};
      case layer_kind::sll:
        return unread_type{f.sll->value.protocol, at};
      case layer_kind::sll2:
        return unread_type{f.sll2->value.protocol, at};
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

// An 802.1Qbb PFC frame (MAC Control, Ethertype 0x8808, opcode 0x0101): no SUE frame, but the
// pauses a link tap or a port mirror shows decide which frames around them could be sent (R2
// 3.5.6; `scaleup check`'s pfc.paused). Other MAC Control frames (802.3x PAUSE) are left as the
// reader left them. A PFC frame the capture cut is shown as far as it goes by the reader's note.
template <class Tree>
constexpr void mac_control(Tree& t, const wire::received_frame& f) noexcept {
  const auto u = unread_ethertype(f);
  if (!u || u->type != transport::mac_control_ethertype) return;
  const std::size_t at = u->at;
  if (at + 2 > f.length || wire::load_be16(f.frame.data() + at) != transport::pfc_opcode) return;
  const wire::bytes b = f.frame.first(std::min(f.length, f.frame.size()));
  // Cut by the snapshot length: the reader's note says so, and a part of the times tells nothing.
  if (b.size() < at + wire::layout<transport::pfc_pdu>::size && f.not_captured > 0) return;
  const auto pdu =
      wire::decode_reported<transport::pfc_pdu>(b, at, [&](const error& e) { t.add_error(e); });
  if (!pdu && pdu.err.code == wire::errc::truncated) return;  // short on the wire: malformed
  add_fields(t, f.frame, at, pdu.value);
  t.encap = "pfc";
}

// The tree of a frame read whole: its encapsulation, lengths (captured and on the wire) and
// layers. `t` is not cleared.
template <class Tree>
constexpr void tree_of(Tree& t, const wire::received_frame& f, const options& o) noexcept {
  t.encap = f.name();
  t.frame_length = static_cast<std::uint32_t>(f.length);
  t.wire_length = static_cast<std::uint32_t>(f.length_on_wire);
  build_layers(t, f, o);
  if (o.nodes) mac_control(t, f);
}

}  // namespace detail

// A SUE PDU on its own (RH, commands, R-CRC), for a carrier the engine does not read itself,
// such as a tunnel: `t` is not cleared, layers are numbered from the PDU's first byte.
// `wire_length`: the PDU's length when the capture kept fewer bytes (wire::read_pdu).
template <class Tree>
constexpr void dissect_pdu(Tree& t, wire::bytes pdu, const options& o = {},
                           std::size_t wire_length = 0) noexcept {
  wire::receive_options r = o;
  const pack::profile_boundaries boundaries(o.profile ? *o.profile : pack::default_profile);
  r.commands = o.profile ? &boundaries : nullptr;
  detail::build_layers(t, wire::read_pdu(pdu, r, wire_length), o);
}

// Whether bytes on an unknown UDP port pass for a SUE PDU: version 0, reserved bits zero,
// R-CRC good (the heuristic the reader applies).
using wire::plausible_pdu;

// Dissects one frame into `t` (cleared first). `wire_length`: the frame's length on the wire
// (pcap's original length) when the capture kept fewer bytes; 0: the frame is whole.
template <class Tree>
constexpr void dissect_frame(Tree& t, wire::bytes frame, std::uint32_t link, const options& o = {},
                             std::size_t wire_length = 0) noexcept {
  t.clear();
  if (link == tofu::link_tofu || link == rdma::link_rdma) {
    t.frame_length = static_cast<std::uint32_t>(frame.size());  // no Ethernet, no FCS
    if (link == tofu::link_tofu)
      dissect_tofu_record(t, frame);  // Tofu-style slices
    else
      dissect_rdma_packet(t, frame);  // ExaJet packets: header, payload, footer
    return;
  }
  const wire::received_frame f = pack::read_frame(frame, link, o.profile, o, wire_length);
  if (!o.flows_only) detail::tree_of(t, f, o);  // else only the flow table learns
}

}  // namespace scaleup::dissect
