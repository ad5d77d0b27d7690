// The typed readers: wire::read_frame (through pack::read_frame, with or without a profile's
// command boundaries), tofu::read_record and tofu::read_frame, rdma::read_packet. The first byte
// picks the link type (Ethernet, AFH Gen 2, Tofu slices, ExaJet RDMA, a cooked, loopback or raw
// IP capture, or one no reader knows)
// and a few options; the rest is the frame. Beyond not crashing, what is read must lie inside
// the bytes, the layers and problems must be in order, an accepted PDU's R-CRC must hold, and
// the dissection tree must report exactly the reader's problems when no commands are walked, and
// read_frame's fast path and a receiver's must read a frame as the full reader does.
// The custom mutator (selected_frame.hpp) keeps the frame a SUE frame with a good R-CRC.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/receive.hpp"
#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/tofu/receive.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/transport/sue_frame.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/receive.hpp"
#include "selected_frame.hpp"

namespace {

using namespace scaleup;

constexpr std::array<std::uint32_t, 4> sue_links{wire::link_ethernet, wire::link_afh2,
                                                 tofu::link_tofu, rdma::link_rdma};
// With both high bits set: the link types without an Ethernet header, or one no reader knows.
constexpr std::array<std::uint32_t, 8> other_links{
    4000,           wire::link_null,       wire::link_loop, wire::link_linux_sll,
    wire::link_raw, wire::link_linux_sll2, wire::link_ipv4, wire::link_ipv6};

std::uint32_t link_of(std::uint8_t sel) {
  return (sel & 0x80) && (sel & 0x40) ? other_links[(sel >> 2) & 7] : sue_links[sel & 3];
}

dissect::options read_options_of(std::uint8_t sel) {
  dissect::options o;
  o.fcs = static_cast<wire::fcs_mode>((sel >> 2) % 3);
  o.heuristics = (sel & 0x20) == 0;
  if (sel & 0x40) o.profile = nullptr;
  if (sel & 0x80) (void)o.add_udp_port(4791);
  o.check_checksums = (sel & 0x08) != 0;
  // No port is SUE's by default; the seeds were written to 4793, named on this bit so that their
  // damaged PDUs still reach the SUE path (on the others only a plausible RH does).
  if (sel & 0x10) (void)o.add_udp_port(4793);
  return o;
}

}  // namespace

// The mutator reads frames as the target will.
fuzz::mutator_config fuzz::selected_frame_config(std::uint8_t sel) {
  const dissect::options o = read_options_of(sel);
  fuzz::mutator_config c;
  c.link = link_of(sel);
  c.profile = o.profile;
  c.receive = o;
  c.fcs = c.link == wire::link_ethernet && o.fcs == wire::fcs_mode::present;
  return c;
}

namespace {

bool inside(wire::bytes part, wire::bytes whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void check_frame(wire::bytes b, std::uint32_t link, const dissect::options& o,
                 std::size_t wire_length) {
  const wire::received_frame f = pack::read_frame(b, link, o.profile, o, wire_length);
  fuzz::check(f.frame.data() == b.data() && f.frame.size() == b.size(), "frame: not the bytes");
  fuzz::check(f.wire_length >= b.size() && f.not_captured == f.wire_length - b.size(),
              "frame: wire length");
  fuzz::check(f.length_on_wire >= f.length && f.length_on_wire <= f.wire_length,
              "frame: length on the wire");
  fuzz::check(f.not_captured != 0 || f.length == b.size() - (f.fcs.present ? wire::fcs_size : 0),
              "frame: length");
  fuzz::check(f.not_captured == 0 || (!f.fcs.present && f.length <= b.size()),
              "frame: an FCS found in a cut frame");
  // A cut frame ends with its one note, unless the list overflowed.
  if (f.not_captured && !f.errors.overflow) {
    const auto& last = f.errors[f.errors.size() - 1];
    fuzz::check(last.code == wire::errc::not_captured && last.level == wire::severity::note &&
                    last.value == f.not_captured,
                "frame: a cut frame without its note");
  }
  fuzz::check(!f.name().empty(), "frame: no name");
  fuzz::check(f.layer_count <= f.layers.size(), "frame: layer count past its array");
  std::size_t before = 0;
  for (const auto& l : f.layer_list()) {
    const std::size_t end = l.kind == wire::layer_kind::fcs ? b.size() : f.length;
    fuzz::check(l.offset + l.length <= end, "frame: layer past the bytes");
    fuzz::check(l.errors_before >= before, "frame: problems out of order");
    before = l.errors_before;
  }
  fuzz::check(before <= f.errors.size(), "frame: layer after its problems");
  fuzz::check(f.command_errors_at <= f.errors.size(), "frame: command problems past the list");
  for (const auto& e : f.errors) fuzz::check(static_cast<bool>(e), "frame: empty problem kept");
  fuzz::check(inside(f.payload, b.first(f.length)), "frame: payload outside the frame");
  fuzz::check(inside(f.ipv4_options, b.first(f.length)), "frame: options outside the frame");
  if (f.fragment) {
    fuzz::check(inside(f.fragment->header, b.first(f.length)) &&
                    inside(f.fragment->data, b.first(f.length)),
                "frame: fragment outside the frame");
    fuzz::check(f.fragment->header.data() + f.fragment->header.size() <= f.fragment->data.data(),
                "frame: fragment data before its header");
  }
  if (f.rh) {
    const auto v = f.rh_view();
    fuzz::check(v.ok() && v->value() == *f.rh, "frame: RH view disagrees");
    fuzz::check(f.pdu_offset + f.bounds.payload_end <= f.length_on_wire,
                "frame: PDU past the frame");
    fuzz::check(f.pdu_offset + 8 + f.payload.size() <= f.length, "frame: payload past the bytes");
  }
  if (f.accepted()) {
    const wire::bytes covered = b.subspan(f.pdu_offset, f.bounds.payload_end);
    fuzz::check(wire::crc32(covered) == f.bounds.rcrc, "frame: accepted with a bad R-CRC");
    fuzz::check(f.payload.size() + 8 == f.bounds.payload_end, "frame: payload length");
    const std::size_t pad_at = f.pdu_offset + f.bounds.payload_end + wire::rcrc_size;
    fuzz::check(wire::all_zero(b.subspan(pad_at, f.bounds.pad)), "frame: padding not zero");
  }
  wire::receive_options ro = o;
  const pack::profile_boundaries boundaries(o.profile ? *o.profile : pack::default_profile);
  ro.commands = o.profile ? &boundaries : nullptr;
  // read_frame's fast path (header prediction) reads what its full reader does.
  fuzz::check(wire::same_reading(f, wire::detail::read_frame_with(b, link, ro, wire_length, false)),
              "frame: the fast path differs from the full reader");
  // A receiver's reading (an instance's, a switch's): where its fast path reads the frame, it
  // reads what the full reader does.
  if (link == wire::link_ethernet && f.not_captured == 0) {
    if (const auto fast = transport::read_sue_frame_fast(b, ro))
      fuzz::check(*fast == transport::detail::project(f),
                  "receiver: the fast path differs from the full reader");
  }
  // The tree is built from the reader: without commands, its problems are the reader's, then
  // those of a PFC frame (MAC Control, which the reader leaves to the tree) and nothing else.
  if (!o.profile) {
    static dissect::large_tree tree;
    dissect::dissect_frame(tree, b, link, o, wire_length);
    constexpr std::string_view pfc = wire::layout<transport::pfc_pdu>::name;
    bool same =
        tree.error_count >= f.errors.size() && (tree.encap == f.name() || tree.encap == pfc);
    for (std::size_t i = 0; same && i < f.errors.size(); ++i)
      same = tree.errors[i].what == f.errors[i].what && tree.errors[i].offset == f.errors[i].offset;
    for (std::size_t i = f.errors.size(); same && i < tree.error_count; ++i)
      same = tree.errors[i].layer == pfc;
    fuzz::check(same, "frame: the tree's problems are not the reader's");
  }
}

void check_tofu(wire::bytes b) {
  const tofu::received_slice s = tofu::read_record(b);
  fuzz::check(s.words_offset + s.words_length <= b.size(), "tofu: words past the record");
  fuzz::check(s.pad_offset + s.pad_length <= b.size(), "tofu: pad past the record");
  fuzz::check(s.errors_before_rh <= s.errors_before_words &&
                  s.errors_before_words <= s.errors_before_fcs &&
                  s.errors_before_fcs <= s.errors.size(),
              "tofu: problems out of order");
  fuzz::check(!s.fcs_good || (s.has_fcs && s.fcs == s.computed), "tofu: FCS verdict");
  if (s.length_ok) fuzz::check(s.ways != 0 && s.link_ok, "tofu: length known without a pattern");
  const tofu::received_frame f = tofu::read_frame(b);
  fuzz::check(inside(f.tlp, b) && inside(f.dllp, b) && inside(f.other_control, b),
              "tofu: frame parts outside the bytes");
}

void check_rdma(wire::bytes b) {
  const rdma::received_packet d = rdma::read_packet(b);
  fuzz::check(inside(d.payload, b), "rdma: payload outside the packet");
  fuzz::check(d.errors_before_payload <= d.errors_before_footer &&
                  d.errors_before_footer <= d.errors.size(),
              "rdma: problems out of order");
  fuzz::check(!d.crc_ok || d.crc_computed == d.p.footer.crc, "rdma: CRC verdict");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const wire::bytes b(data + 1, size - 1);
  const std::uint32_t link = link_of(sel);
  if (link == tofu::link_tofu) {
    check_tofu(b);
    return 0;
  }
  if (link == rdma::link_rdma) {
    check_rdma(b);
    return 0;
  }
  const dissect::options o = read_options_of(sel);
  // A last byte with its top bit set: the frame was cut by a snapshot length, and the byte's
  // other bits say how much is missing (the selector's bits are all taken).
  const std::size_t wire_length =
      !b.empty() && (b.back() & 0x80) ? b.size() + 1 + (b.back() & 0x7Fu) * 9 : 0;
  check_frame(b, link, o, wire_length);
  return 0;
}
