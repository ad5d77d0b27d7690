// Frames dissected with IP reassembly, as tshark does it (packet-ip.c, packet-ipv6.c): a
// fragment's frame shows its own layers and a note; the frame that completes a datagram shows
// its own layers, then the reassembled datagram ("ip.reassembled" / "ipv6.reassembled": the
// frames its fragments came from, their count, its length) and what the datagram carries (UDP,
// the SUE PDU), whose offsets count from the datagram's first byte. `scaleup dump` and
// `scaleup stats` read captures through this; the Wireshark plugin never sees fragments
// (Wireshark reassembles them itself and hands over the whole UDP payload).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/dissect/engine.hpp"
#include "scaleup/wire/ip_reassembly.hpp"

namespace scaleup::dissect {

// The reassembled datagram's computed fields, under Wireshark's names.
namespace reassembly_computed_fields {
// clang-format off
inline constexpr field_info ip_fragment{
    .name = "fragment in frame", .filter = "ip.fragment", .width = 32,
    .description = "A frame that carried a fragment of the datagram, in offset order",
    .seed = "RFC 791 3.2; Wireshark packet-ip.c"};
inline constexpr field_info ip_fragment_count{
    .name = "fragment count", .filter = "ip.fragment.count", .width = 16,
    .description = "Fragments the datagram was reassembled from", .seed = "RFC 791 3.2"};
inline constexpr field_info ip_reassembled_length{
    .name = "reassembled length", .filter = "ip.reassembled.length", .width = 16,
    .description = "Bytes of the reassembled datagram, header included", .seed = "RFC 791 3.2"};
inline constexpr field_info ipv6_fragment{
    .name = "fragment in frame", .filter = "ipv6.fragment", .width = 32,
    .description = "A frame that carried a fragment of the packet, in offset order",
    .seed = "RFC 8200 4.5; Wireshark packet-ipv6.c"};
inline constexpr field_info ipv6_fragment_count{
    .name = "fragment count", .filter = "ipv6.fragment.count", .width = 16,
    .description = "Fragments the packet was reassembled from", .seed = "RFC 8200 4.5"};
inline constexpr field_info ipv6_reassembled_length{
    .name = "reassembled length", .filter = "ipv6.reassembled.length", .width = 16,
    .description = "Bytes of the reassembled packet, header included", .seed = "RFC 8200 4.5"};
// clang-format on
inline constexpr std::array<const field_info*, 6> all{
    &ip_fragment,   &ip_fragment_count,   &ip_reassembled_length,
    &ipv6_fragment, &ipv6_fragment_count, &ipv6_reassembled_length};
}  // namespace reassembly_computed_fields

// Where a frame's fragment stands, as a note on the frame: a warning (the frame is not at fault)
// of code `unsupported` (what the frame carries is not decoded in it), as read_frame reported an
// IPv4 fragment before reassembly.
inline constexpr std::string_view fragment_held_note =
    "fragment held for reassembly: the datagram is dissected in the frame that completes it";
inline constexpr std::string_view fragment_duplicate_note =
    "fragment's bytes already held: ignored as a duplicate";

// Dissects one frame into `t` (cleared first) like dissect_frame, joining IP fragments in `r`:
// `number` and `time_ns` are the frame's, for the reassembler's references and age limit.
template <class Tree, class Reassembler>
constexpr void dissect_frame(Tree& t, wire::bytes frame, std::uint32_t link, const options& o,
                             Reassembler& r, std::uint64_t number, std::int64_t time_ns,
                             std::size_t wire_length = 0) noexcept {
  if (link == tofu::link_tofu || link == rdma::link_rdma)
    return dissect_frame(t, frame, link, o, wire_length);
  t.clear();
  const wire::received_frame f = pack::read_frame(frame, link, o.profile, o, wire_length);
  // With flows_only, no tree: the reassembled datagram is read only for the flow table.
  if (!o.flows_only) detail::tree_of(t, f, o);
  if (!f.fragment) return;
  const auto& got = r.push(*f.fragment, number, time_ns);
  for (const auto& d : got.report_list()) t.add_error(d.problem);
  const bool v6 = f.fragment->key.v6;
  // The note points at the identification field: IPv4 header byte 4, Fragment header byte 4.
  const std::size_t id_at = (v6 ? f.ipv6_frag->offset : f.ipv4->offset) + 4;
  const auto note = [&](std::string_view what, wire::errc code) {
    t.add_error(wire::error{.code = code,
                            .layer = v6 ? "ipv6" : "ip",
                            .offset = static_cast<std::uint32_t>(id_at),
                            .what = what,
                            .field = v6 ? "ipv6.fraghdr.ident" : "ip.id",
                            .value = f.fragment->key.id,
                            .level = wire::severity::warning});
  };
  switch (got.state) {
    case wire::fragment_state::held:
      return note(fragment_held_note, wire::errc::unsupported);
    case wire::fragment_state::duplicate:
      return note(fragment_duplicate_note, wire::errc::unsupported);
    case wire::fragment_state::rejected:
      if (got.report_count == 0) note(got.problem.what, got.problem.code);
      return;
    case wire::fragment_state::complete:
      break;
  }
  namespace cf = reassembly_computed_fields;
  const wire::received_frame d =
      pack::read_frame(got.datagram, v6 ? wire::link_ipv6 : wire::link_ipv4, o.profile, o);
  if (o.flows_only) return;
  if (!o.nodes) {  // the summary and the problems only (options::nodes)
    detail::build_layers(t, d, o);
    t.encap = d.name();
    return;
  }
  const auto l =
      t.add_layer(v6 ? "ipv6.reassembled" : "ip.reassembled",
                  v6 ? "Reassembled IPv6 packet; the offsets below count from its first byte"
                     : "Reassembled IPv4 datagram; the offsets below count from its first byte",
                  0, got.datagram.size());
  for (const auto& p : got.fragments)
    add_generated(t, l, v6 ? cf::ipv6_fragment : cf::ip_fragment, p.frame);
  add_generated(t, l, v6 ? cf::ipv6_fragment_count : cf::ip_fragment_count, got.fragments.size());
  add_generated(t, l, v6 ? cf::ipv6_reassembled_length : cf::ip_reassembled_length,
                got.datagram.size());
  // The datagram's IP header is the frame's, shown above: its layers start after it.
  std::size_t first = 0;
  while (first < d.layer_count && (d.layers[first].kind == wire::layer_kind::ipv4 ||
                                   d.layers[first].kind == wire::layer_kind::ipv4_options ||
                                   d.layers[first].kind == wire::layer_kind::ipv6))
    ++first;
  detail::build_layers(t, d, o, first);
  t.encap = d.name();
}

}  // namespace scaleup::dissect
