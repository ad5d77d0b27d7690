// The typed receive path (wire/receive.hpp, pack/receive.hpp): read_frame against every emitter
// for every encapsulation, with and without FCS, padded and not; frames written by scapy; every
// error path of the reader.
//
// Expected values come from the parameters the frames were emitted with (frame_test.cpp pins
// the emitted bytes to hand-written goldens), from scapy, or from bytes patched here at offsets
// worked out by hand, with checksums fixed by the suite's own reference sums (support.hpp).
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/receive.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/receive.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace w = scaleup::wire;
namespace pk = scaleup::pack;
using scaleup::test::be16;
using scaleup::test::be32;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::fix_udp4_checksum;
using scaleup::test::params_for;
using scaleup::test::ramp;
using scaleup::test::ref_crc32;
using scaleup::test::set16;
using scaleup::test::test_rh;
using scaleup::test::with_ethernet_fcs;
using w::errc;
using w::layer_kind;

using scaleup::test::all_encaps;

constexpr bool afh2_family(w::encap e) {
  return e == w::encap::afh2 || e == w::encap::afh2c || e == w::encap::lite;
}

// ---- frames -------------------------------------------------------------------------------

byte_vector emit(const w::frame_params& p, const w::reliability_header& rh,
                 const byte_vector& payload) {
  byte_vector out(16384);
  const auto r = p.kind == w::encap::lite ? w::emit_frame(p, payload, out)
                                          : w::emit_sue_frame(p, rh, payload, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}

void set32(byte_vector& f, std::size_t at, std::uint32_t v) {
  set16(f, at, static_cast<std::uint16_t>(v >> 16));
  set16(f, at + 2, static_cast<std::uint16_t>(v));
}

using scaleup::test::ip4_at;
using scaleup::test::pdu4_at;
using scaleup::test::udp4_at;

// The R-CRC of the PDU at [at, end - 4) written at end - 4, by the reference CRC.
void fix_rcrc(byte_vector& f, std::size_t at, std::size_t end) {
  set32(f, end - 4, ref_crc32(f.data() + at, end - 4 - at));
}

// Commands of the default profile, by hand (pack/default_profile.hpp): a barrier (type 12, no
// data, tag 1) and a message (type 10, 4 data bytes so byte 1 = 3, tag 2, queue 5) whose data
// ends in zeros, which a reader must not take for padding.
const byte_vector kCommands{0x12, 0x00, 0x00, 0x01, 0x10, 0x03, 0x00,
                            0x02, 0x00, 0x05, 0x07, 0x00, 0x00, 0x00};
const byte_vector kOpaque{0xAA, 0xBB, 0xCC};

w::received_frame read(const byte_vector& f, std::uint32_t link = w::link_ethernet,
                       const w::receive_options& o = {}) {
  return w::read_frame(f, link, o);
}
// No port is SUE's by default: a PDU that cannot pass for one (an RH alone, cut off, damaged)
// on the goldens' port is read as SUE when the port is named, as `--udp-port 4793` does.
const w::receive_options on_golden_port = [] {
  w::receive_options o;
  o.add_udp_port(scaleup::test::golden_udp_port);
  return o;
}();

w::received_frame read_with_profile(const byte_vector& f, std::uint32_t link = w::link_ethernet,
                                    const w::receive_options& o = {}) {
  return pk::read_frame(f, link, &pk::default_profile, o);
}

std::vector<layer_kind> kinds(const w::received_frame& f) {
  std::vector<layer_kind> v;
  for (const auto& l : f.layer_list()) v.push_back(l.kind);
  return v;
}

const w::layer_ref* layer(const w::received_frame& f, layer_kind k) {
  for (const auto& l : f.layer_list())
    if (l.kind == k) return &l;
  return nullptr;
}

// The network layers each encapsulation is read as, in order.
std::vector<layer_kind> header_layers(w::encap e) {
  using L = layer_kind;
  switch (e) {
    case w::encap::udp4:
      return {L::ethernet, L::ipv4, L::udp};
    case w::encap::udp6:
      return {L::ethernet, L::ipv6, L::udp};
    case w::encap::afh1:
      return {L::ethernet, L::afh1};
    case w::encap::afh1_vlan:
      return {L::ethernet, L::vlan, L::afh1};
    case w::encap::afh1_shim:
      return {L::ethernet, L::afh1, L::afh1_shim};
    case w::encap::afh1_vlan_shim:
      return {L::ethernet, L::vlan, L::afh1, L::afh1_shim};
    case w::encap::afh2:
      return {L::afh2, L::afh2_ethertype};
    case w::encap::afh2c:
      return {L::afh2c, L::afh2_ethertype};
    case w::encap::lite:
      return {L::afh2c};
  }
  return {};
}

// Every header as the emitter wrote it from `p` around a PDU (or SUE Lite payload) of `inner`
// bytes.
void check_headers(const w::received_frame& f, const w::frame_params& p, std::size_t inner) {
  const w::encap e = p.kind;
  CAPTURE(w::to_string(e));
  const bool ip = e == w::encap::udp4 || e == w::encap::udp6;
  if (ip) {
    REQUIRE(f.eth);
    CHECK(f.eth->offset == 0);
    CHECK(f.eth->value ==
          w::ethernet_header{w::xpu_mac(p.dst_xpu), w::xpu_mac(p.src_xpu),
                             e == w::encap::udp4 ? std::uint16_t{0x0800} : std::uint16_t{0x86DD}});
    // Over IP the frame carries addresses, not XPU ids: the plan maps them back.
    CHECK_FALSE(f.src_xpu);
    CHECK_FALSE(f.dst_xpu);
    REQUIRE(f.udp);
    CHECK(f.udp->value.src_port == p.udp_src_port);
    CHECK(f.udp->value.dst_port == p.udp_dst_port);
    CHECK(f.udp->value.length == 8 + inner);
  }
  if (e == w::encap::udp4) {
    REQUIRE(f.ipv4);
    CHECK(f.ipv4->offset == 14);
    const auto& h = f.ipv4->value;
    CHECK(h.ihl == 5);
    CHECK(h.dscp == p.tc);
    CHECK(h.total_length == 20 + 8 + inner);
    CHECK(h.flag_df == 1);
    CHECK(h.ttl == p.hop_limit);
    CHECK(h.protocol == 17);
    CHECK(h.src == w::xpu_ipv4(p.src_xpu));
    CHECK(h.dst == w::xpu_ipv4(p.dst_xpu));
    CHECK(w::xpu_of_ipv4(h.src) == p.src_xpu);
    CHECK(w::xpu_of_ipv4(h.dst) == p.dst_xpu);
    CHECK(f.udp->offset == 34);
    CHECK(f.ipv4_options.empty());
    CHECK_FALSE(f.ipv6);
  }
  if (e == w::encap::udp6) {
    REQUIRE(f.ipv6);
    CHECK(f.ipv6->offset == 14);
    const auto& h = f.ipv6->value;
    CHECK(h.tclass == p.tc << 2);
    CHECK(h.flow == (p.entropy & 0xFFFFF));
    CHECK(h.payload_length == 8 + inner);
    CHECK(h.next_header == 17);
    CHECK(h.hop_limit == p.hop_limit);
    CHECK(w::xpu_of_ipv6(h.src) == p.src_xpu);
    CHECK(w::xpu_of_ipv6(h.dst) == p.dst_xpu);
    CHECK(f.udp->offset == 54);
    CHECK_FALSE(f.ipv4);
  }
  if (!ip && !afh2_family(e)) {
    const bool vlan = w::has_vlan(e), shim = w::has_shim(e);
    REQUIRE(f.eth);
    CHECK(f.eth->value.dst == ((std::uint64_t{p.afh1_prefix} << 16) | p.dst_xpu));
    CHECK(f.eth->value.src == ((std::uint64_t{p.afh1_prefix} << 16) | p.src_xpu));
    const std::uint16_t inner_type = shim ? p.shim_ethertype : p.sue_ethertype;
    CHECK(f.eth->value.type == (vlan ? std::uint16_t{0x8100} : inner_type));
    REQUIRE(f.vlan_count == (vlan ? 1u : 0u));
    if (vlan) {
      CHECK(f.vlan[0].offset == 14);
      CHECK(f.vlan[0].value == w::vlan_tag{p.tc, 0, p.vlan_id, inner_type});
    }
    REQUIRE(f.afh1);
    CHECK(f.afh1->offset == 0);
    CHECK(f.afh1->value == w::afh1_addresses{p.afh1_prefix, static_cast<std::uint16_t>(p.dst_xpu),
                                             p.afh1_prefix, static_cast<std::uint16_t>(p.src_xpu)});
    CHECK(f.shim.has_value() == shim);
    if (shim) {
      CHECK(f.shim->offset == (vlan ? 18u : 14u));
      const auto& s = f.shim->value;
      CHECK(s.tc == p.tc);
      CHECK(s.hop_limit == p.hop_limit);
      CHECK(s.next_header == w::shim_next_sue);
      CHECK(s.length == inner);
      CHECK(s.entropy == (p.entropy & 0xFFFFF));
      CHECK(s.src_xpu == p.src_xpu);
      CHECK(s.dst_xpu == p.dst_xpu);
    }
    CHECK(f.src_xpu == p.src_xpu);
    CHECK(f.dst_xpu == p.dst_xpu);
  }
  if (e == w::encap::afh2) {
    REQUIRE(f.afh2);
    const auto& h = f.afh2->value;
    CHECK(h.m == 0);
    CHECK(h.hop_count == p.hop_limit);
    CHECK(h.tc == p.tc);
    CHECK(h.entropy == (p.entropy & 0xFF));
    CHECK(h.src_xpu == p.src_xpu);
    CHECK(h.dst_xpu == p.dst_xpu);
    REQUIRE(f.afh2_type);
    CHECK(f.afh2_type->offset == 12);
    CHECK(f.afh2_type->value.type == p.sue_ethertype);
    CHECK_FALSE(f.afh2c);
  }
  if (e == w::encap::afh2c || e == w::encap::lite) {
    REQUIRE(f.afh2c);
    CHECK(f.afh2c->offset == 0);
    const auto& h = f.afh2c->value;
    CHECK(h.w == 1);
    CHECK(h.tc == p.tc);
    CHECK(h.src_xpu == p.src_xpu);
    CHECK(h.dst_xpu == p.dst_xpu);
    CHECK(f.afh2_type.has_value() == (e == w::encap::afh2c));
    if (f.afh2_type) CHECK(f.afh2_type->offset == 6);
    CHECK_FALSE(f.afh2);
  }
  if (afh2_family(e)) {
    CHECK_FALSE(f.eth);
    CHECK(f.src_xpu == p.src_xpu);
    CHECK(f.dst_xpu == p.dst_xpu);
  }
}

// ---- read_frame against the emitters --------------------------------------------------------

TEST_CASE("read_frame: every encapsulation reads back what emit_sue_frame wrote") {
  const byte_vector big = ramp(300, 1);
  for (const w::encap e : all_encaps) {
    if (e == w::encap::lite) continue;
    for (const byte_vector* payload :
         {&kOpaque, &kCommands, &big, static_cast<const byte_vector*>(nullptr)}) {
      const byte_vector pl = payload ? *payload : byte_vector{};
      w::frame_params p = params_for(e);
      p.entropy = 0xABCDE;
      w::reliability_header rh = test_rh();
      rh.npsn = static_cast<std::uint16_t>(pl.size());
      const byte_vector frame = emit(p, rh, pl);
      const std::size_t hs = w::header_size(e);
      const std::size_t pdu = 8 + pl.size() + 4;
      const bool exact = e == w::encap::udp4 || e == w::encap::udp6 || w::has_shim(e);
      // Layer 2 pads after the R-CRC, a datagram or shim after what it counts.
      const std::size_t pad = exact || hs + pdu >= 60 ? 0 : 60 - hs - pdu;
      for (const bool fcs : {false, true}) {
        for (const std::uint32_t link : {w::link_ethernet, w::link_afh2}) {
          if (link == w::link_afh2 && (!afh2_family(e) || fcs)) continue;
          for (const bool profile : {false, true}) {
            CAPTURE(w::to_string(e));
            CAPTURE(pl.size());
            CAPTURE(fcs);
            CAPTURE(link);
            CAPTURE(profile);
            const byte_vector bytes = fcs ? with_ethernet_fcs(frame) : frame;
            const auto f = profile ? read_with_profile(bytes, link) : read(bytes, link);
            CHECK(f.errors.empty());
            CHECK(f.ok());
            CHECK(f.accepted());
            REQUIRE(f.kind == e);
            CHECK(f.name() == w::to_string(e));
            CHECK(f.link == link);
            CHECK(f.frame.data() == bytes.data());
            CHECK(f.length == frame.size());
            CHECK(f.fcs.present == fcs);
            CHECK(f.fcs.good == fcs);
            if (fcs) CHECK(f.fcs.value == ref_crc32(frame.data(), frame.size()));
            check_headers(f, p, pdu);
            CHECK(f.pdu_offset == hs);
            REQUIRE(f.rh);
            CHECK(*f.rh == rh);
            const auto v = f.rh_view();
            REQUIRE(v.ok());
            CHECK(v->raw().data() == bytes.data() + hs);
            CHECK(v->get<&w::reliability_header::npsn>() == pl.size());
            CHECK(byte_vector(f.payload.begin(), f.payload.end()) == pl);
            CHECK(f.payload.data() == bytes.data() + hs + 8);
            CHECK(f.bounds.status == w::rcrc_status::good);
            CHECK(f.bounds.payload_end == 8 + pl.size());
            CHECK(f.bounds.pad == pad);
            CHECK(f.bounds.rcrc == be32(frame, hs + 8 + pl.size()));
            CHECK(f.bounds.computed == ref_crc32(frame.data() + hs, 8 + pl.size()));
            std::vector<layer_kind> want = header_layers(e);
            for (const layer_kind k :
                 {layer_kind::sue_rh, layer_kind::sue_payload, layer_kind::sue_rcrc})
              want.push_back(k);
            if (pad) want.push_back(layer_kind::sue_pad);
            if (fcs) want.push_back(layer_kind::fcs);
            CHECK(kinds(f) == want);
            const auto* pl_layer = layer(f, layer_kind::sue_payload);
            REQUIRE(pl_layer);
            CHECK(pl_layer->offset == hs + 8);
            CHECK(pl_layer->length == pl.size());
            if (pad) CHECK(layer(f, layer_kind::sue_pad)->offset == hs + pdu);
            if (fcs) CHECK(layer(f, layer_kind::fcs)->offset == frame.size());
          }
        }
      }
    }
  }
}

TEST_CASE("emit_sue_frame: an AFH Gen 1 frame is refused where it would read as AFH Gen 2") {
  // Every first octet of the prefix, in every AFH Gen 1 encapsulation: a frame emitted reads
  // back as the encapsulation asked for; a refused one has the AFH Gen 2 signature there.
  std::size_t refused = 0;
  for (unsigned octet = 0; octet < 256; ++octet) {
    for (const w::encap e :
         {w::encap::afh1, w::encap::afh1_vlan, w::encap::afh1_shim, w::encap::afh1_vlan_shim}) {
      w::frame_params p = params_for(e);
      p.afh1_prefix = (std::uint32_t{octet} << 24) | 0x535545;
      byte_vector out(256);
      const auto r = w::emit_sue_frame(p, test_rh(), kCommands, out);
      INFO("prefix " << p.afh1_prefix << " " << w::to_string(e));
      if (!r) {
        ++refused;
        CHECK(r.err.code == errc::bad_value);
        CHECK(std::string_view(r.err.what).find("AFH Gen 2") != std::string_view::npos);
        CHECK(w::has_afh2_signature(static_cast<std::uint8_t>(octet)));
        continue;
      }
      out.resize(r.value);
      const auto f = w::read_frame(out, w::link_ethernet);
      CHECK(f.kind == e);
      CHECK(f.accepted());
    }
  }
  // Plain AFH Gen 1 ends its addresses with the SUE Ethertype: the normal format's shape.
  CHECK(refused > 0);
}

TEST_CASE("read_frame: AFH Gen 2 on an Ethernet link can be left to Ethernet") {
  // afh2_on_ethernet off, as Wireshark's Ethertype handoff reads a frame: the normal format's
  // header is Ethernet's addresses and the SUE Ethertype, so the frame reads as AFH Gen 1; the
  // compressed one and SUE Lite as Ethernet frames of another Ethertype. Every reader agrees.
  for (const w::encap e : {w::encap::afh2, w::encap::afh2c, w::encap::lite}) {
    const byte_vector frame = emit(params_for(e), test_rh(), kCommands);
    w::receive_options o;
    for (const bool on : {true, false}) {
      o.afh2_on_ethernet = on;
      INFO(w::to_string(e) << (on ? " on" : " off"));
      for (const bool predict : {true, false}) {
        const auto f = w::detail::read_frame_with(frame, w::link_ethernet, o, 0, predict);
        CHECK(f.afh2.has_value() == (on && e == w::encap::afh2));
        CHECK(f.afh2c.has_value() == (on && e != w::encap::afh2));
        CHECK(f.eth.has_value() == !on);
        if (on) {
          CHECK(f.kind == e);
        } else if (e == w::encap::afh2) {
          CHECK(f.kind == w::encap::afh1);
          CHECK(f.accepted());
        } else {
          CHECK_FALSE(f.kind);
        }
      }
      // On the AFH Gen 2 link type the frame is AFH Gen 2 whatever the option says.
      CHECK(w::read_frame(frame, w::link_afh2, o).kind == e);
    }
  }
}

TEST_CASE("read_frame: a SUE Lite payload, its padding told apart by the profile's commands") {
  const w::frame_params p = params_for(w::encap::lite);
  const byte_vector frame = emit(p, {}, kCommands);  // 6 + 14 bytes, padded to 60
  REQUIRE(frame.size() == 60);
  for (const std::uint32_t link : {w::link_ethernet, w::link_afh2}) {
    CAPTURE(link);
    // With the profile: the message's trailing zero data bytes are its own, the rest is pad.
    const auto f = read_with_profile(frame, link);
    CHECK(f.errors.empty());
    REQUIRE(f.kind == w::encap::lite);
    check_headers(f, p, kCommands.size());
    CHECK_FALSE(f.rh);
    CHECK_FALSE(f.accepted());  // no RH, no R-CRC: nothing for the SUE transport to take
    CHECK(f.pdu_offset == 6);
    CHECK(byte_vector(f.payload.begin(), f.payload.end()) == kCommands);
    CHECK(f.bounds.status == w::rcrc_status::missing);
    CHECK(f.bounds.payload_end == kCommands.size());
    CHECK(f.bounds.pad == 60 - 6 - kCommands.size());
    CHECK(kinds(f) == std::vector<layer_kind>{layer_kind::afh2c, layer_kind::sue_lite});
    CHECK(layer(f, layer_kind::sue_lite)->length == kCommands.size());
    CHECK(f.command_errors_at == 0);
    CHECK(f.rh_view().err.code == errc::truncated);
    // Without it padding cannot be told from payload: all of it is payload.
    const auto opaque = read(frame, link);
    CHECK(opaque.payload.size() == 54);
    CHECK(opaque.bounds.pad == 0);
  }
  // Commands that do not parse: all of it is payload, as the unpacker would say.
  byte_vector bad = frame;
  bad[6] = 0xEE;  // not a type of the default profile
  CHECK(read_with_profile(bad).payload.size() == 54);
}

// R2 3.4, Fig. 10: the SUE Lite payload follows the 6-byte compressed header, so its first byte
// is the first octet of the source MAC a standard switch reads; bit 0 there is the I/G bit.
TEST_CASE("SUE Lite: the first payload byte never makes the source MAC a group address") {
  const w::frame_params p = params_for(w::encap::lite);
  // Every command type of the default profile is even: none sets the I/G bit.
  for (const auto& t : pk::default_profile.types()) CHECK((t.code & 1u) == 0);
  // The emitter refuses a payload that would (an odd first byte), and says why.
  std::array<std::uint8_t, 64> out{};
  const byte_vector odd{0x01, 0x00, 0x00, 0x01};
  const auto refused = w::emit_frame(p, odd, out);
  CHECK(refused.err.code == errc::bad_value);
  CHECK(refused.err.what.find("group address") != std::string_view::npos);
  CHECK(w::emit_frame(p, kCommands, out).ok());
  // A frame that does so anyway is read, with a warning at the payload's first byte.
  byte_vector frame = emit(p, {}, kCommands);
  frame[6] |= 1u;
  const auto f = read(frame, w::link_afh2);
  REQUIRE(f.kind == w::encap::lite);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].code == errc::bad_value);
  CHECK(f.errors[0].layer == "sue_lite");
  CHECK(f.errors[0].offset == 6);
  CHECK(f.errors[0].value == 0x13);
  CHECK(f.errors[0].level == w::severity::warning);
  CHECK(f.ok());
}

TEST_CASE("read_frame: R-CRC at the first command boundary of a padded minimum frame") {
  // afh1: 14 + RH + 14 command bytes + R-CRC = 40, padded with 20 zeros. The profile's
  // boundaries are asked; without them the byte rule finds the same R-CRC.
  const w::frame_params p = params_for(w::encap::afh1);
  const byte_vector frame = emit(p, test_rh(), kCommands);
  REQUIRE(frame.size() == 60);
  for (const bool profile : {false, true}) {
    const auto f = profile ? read_with_profile(frame) : read(frame);
    CHECK(f.accepted());
    CHECK(f.bounds.payload_end == 8 + kCommands.size());
    CHECK(f.bounds.pad == 20);
  }

  // The hook is what pdu_bounds_l2 walks: a profile whose commands are all 2 bytes long puts
  // the boundaries at even offsets only.
  struct pairs final : w::command_boundaries {
    mutable int calls = 0;
    constexpr std::size_t command_size(w::bytes at) const noexcept override {
      ++calls;
      return at.size() >= 2 ? 2 : 0;
    }
  } two;
  w::receive_options o;
  o.commands = &two;
  const auto f = read(frame, w::link_ethernet, o);
  CHECK(f.accepted());
  CHECK(f.bounds.pad == 20);
  CHECK(two.calls == 7);  // boundaries 8, 10, ..., 20 did not hold the R-CRC; 22 did

  // A hook that knows no command: the walk stops at once and the byte rule decides.
  struct none final : w::command_boundaries {
    constexpr std::size_t command_size(w::bytes) const noexcept override { return 0; }
  } no_commands;
  o.commands = &no_commands;
  CHECK(read(frame, w::link_ethernet, o).bounds.pad == 20);

  // profile_boundaries: a command's size by the profile's framing, 0 where none starts.
  const pk::profile_boundaries b(pk::default_profile);
  CHECK(b.command_size(kCommands) == 4);
  CHECK(b.command_size(w::bytes(kCommands).subspan(4)) == 10);
  CHECK(b.command_size(w::bytes(kCommands).subspan(4, 9)) == 0);  // data cut off
  const byte_vector zero{0x00, 0x00, 0x00, 0x00};
  CHECK(b.command_size(zero) == 0);  // type 0 is padding, never a command
}

TEST_CASE("read_frame: emit_frame's arbitrary PDUs and lengths") {
  // A PDU of just an RH over UDP: no R-CRC ("missing"), as peers' captures without one hold.
  w::frame_params p = params_for(w::encap::udp4);
  byte_vector rh_only(8);
  REQUIRE(w::encode(test_rh(), rh_only));
  byte_vector out(128);
  auto n = w::emit_frame(p, rh_only, out);
  REQUIRE(n.ok());
  out.resize(*n);
  CHECK_FALSE(read(out).kind);  // no R-CRC: nothing says SUE but a named port
  auto f = read(out, w::link_ethernet, on_golden_port);
  CHECK(f.kind == w::encap::udp4);
  REQUIRE(f.rh);
  CHECK(*f.rh == test_rh());
  CHECK(f.bounds.status == w::rcrc_status::missing);
  CHECK(f.payload.empty());
  CHECK_FALSE(f.accepted());
  CHECK(f.ok());
  CHECK(kinds(f).back() == layer_kind::sue_payload);

  // A payload over the 4096 bytes of R2 3.3 over UDP: read, and warned about.
  const byte_vector huge_payload = ramp(5000, 3);
  byte_vector inner(8 + huge_payload.size() + 4);
  REQUIRE(w::encode(test_rh(), inner));
  std::copy(huge_payload.begin(), huge_payload.end(), inner.begin() + 8);
  set32(inner, 8 + huge_payload.size(), ref_crc32(inner.data(), 8 + huge_payload.size()));
  out.assign(8192, 0);
  n = w::emit_frame(p, inner, out);
  REQUIRE(n.ok());
  out.resize(*n);
  f = read(out);
  CHECK(f.accepted());
  CHECK(f.payload.size() == 5000);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].code == errc::bad_length);
  CHECK(f.errors[0].layer == "sue.payload");
  CHECK(f.errors[0].field == "sue.payload.len");
  CHECK(f.errors[0].value == 5000);
  CHECK(f.errors[0].level == w::severity::warning);
  CHECK(f.ok());
  CHECK(f.command_errors_at == 1);  // commands' problems would follow the length warning
}

TEST_CASE("read_frame: works in constant expressions") {
  static constexpr auto frame = [] {
    std::array<std::uint8_t, 60> out{};
    const std::array<std::uint8_t, 3> payload{0xAA, 0xBB, 0xCC};
    const auto n =
        w::emit_sue_frame(w::frame_params{.kind = w::encap::afh2c, .src_xpu = 3, .dst_xpu = 9},
                          w::reliability_header{.xpuid = 3, .npsn = 7}, payload, out);
    return std::pair{out, n.value};
  }();
  static_assert(frame.second == 60);
  constexpr auto f = w::read_frame(frame.first, w::link_ethernet);
  static_assert(f.kind == w::encap::afh2c && f.accepted() && f.rh->npsn == 7);
  static_assert(*f.src_xpu == 3 && *f.dst_xpu == 9 && f.bounds.pad == 60 - 8 - 15);
#if defined(__SANITIZE_ADDRESS__)
  // GCC's sanitizer builds cannot compare a global's address with null in a constant expression
  // (the profile pointer's check): there the same call runs at run time.
  CHECK(pk::read_frame(frame.first, w::link_afh2, &pk::default_profile).accepted());
#else
  static_assert(pk::read_frame(frame.first, w::link_afh2, &pk::default_profile).accepted());
#endif
  CHECK(f.payload.size() == 3);
}

// ---- frames written by scapy ---------------------------------------------------------------
//
// Made with scapy 2.5.0 (Debian python3-scapy) by:
//
//   def rh(op=0, xpuid=0, npsn=0, vc=0, partition=0, apsn=0):
//       return struct.pack(">II", (op << 28) | (xpuid << 16) | npsn,
//                          (vc << 30) | (partition << 16) | apsn)
//   def pdu(h, payload):
//       p = h + payload
//       return p + struct.pack(">I", zlib.crc32(p))
//   P = pdu(rh(op=1, xpuid=7, npsn=300, vc=2, partition=9, apsn=299), bytes(range(1, 11)))
//   m7, m8 = "02:00:00:00:00:07", "02:00:00:00:00:08"
//   udp4 = Ether(src=m7, dst=m8) / IP(src="10.0.0.7", dst="10.0.0.8", tos=0x08, ttl=5,
//          id=0x1234) / UDP(sport=4793, dport=4793) / Raw(P)
//   udp6 = Ether(src=m7, dst=m8) / IPv6(src="fd53:5545::7", dst="fd53:5545::8", tc=0x0C,
//          fl=0x12345, hlim=9) / UDP(sport=1234, dport=4793) / Raw(P)
//   afh1_vlan = Ether(src="42:53:55:45:00:07", dst="42:53:55:45:00:08") /
//               Dot1Q(prio=2, vlan=100, type=0x88B5) / Raw(P)
//   ip_options = Ether(src=m7, dst=m8) / IP(src="10.0.0.7", dst="10.0.0.8",
//                options=IPOption(b"\x01\x01\x01\x00")) / UDP(sport=4793, dport=4793) / Raw(P)
//   fragment = Ether(src=m7, dst=m8) / IP(src="10.0.0.7", dst="10.0.0.8", flags="MF", id=7) /
//              UDP(sport=4793, dport=4793) / Raw(P)
//   dns = Ether(src=m7, dst=m8) / IP(src="10.0.0.7", dst="10.0.0.8") /
//         UDP(sport=5353, dport=53) / DNS(rd=1, qd=DNSQR(qname="sue.example"))
//   print(bytes(frame).hex()) for each
//
// scapy computes the IPv4 and UDP checksums and lengths itself: nothing below comes from
// scaleup.

// clang-format off
const byte_vector kScapyUdp4{
    0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 0x08, 0x00, 0x45, 0x08,
    0x00, 0x32, 0x12, 0x34, 0x00, 0x00, 0x05, 0x11, 0x8F, 0x71, 0x0A, 0x00, 0x00, 0x07, 0x0A, 0x00,
    0x00, 0x08, 0x12, 0xB9, 0x12, 0xB9, 0x00, 0x1E, 0xAD, 0x76, 0x10, 0x07, 0x01, 0x2C, 0x80, 0x09,
    0x01, 0x2B, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0xF6, 0x26, 0x77, 0x0E};
const byte_vector kScapyUdp6{
    0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 0x86, 0xDD, 0x60, 0xC1,
    0x23, 0x45, 0x00, 0x1E, 0x11, 0x09, 0xFD, 0x53, 0x55, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xFD, 0x53, 0x55, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x04, 0xD2, 0x12, 0xB9, 0x00, 0x1E, 0x2A, 0x2B, 0x10, 0x07,
    0x01, 0x2C, 0x80, 0x09, 0x01, 0x2B, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A,
    0xF6, 0x26, 0x77, 0x0E};
const byte_vector kScapyAfh1Vlan{
    0x42, 0x53, 0x55, 0x45, 0x00, 0x08, 0x42, 0x53, 0x55, 0x45, 0x00, 0x07, 0x81, 0x00, 0x40, 0x64,
    0x88, 0xB5, 0x10, 0x07, 0x01, 0x2C, 0x80, 0x09, 0x01, 0x2B, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
    0x07, 0x08, 0x09, 0x0A, 0xF6, 0x26, 0x77, 0x0E};
const byte_vector kScapyIpOptions{
    0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 0x08, 0x00, 0x46, 0x00,
    0x00, 0x36, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x63, 0xA7, 0x0A, 0x00, 0x00, 0x07, 0x0A, 0x00,
    0x00, 0x08, 0x01, 0x01, 0x01, 0x00, 0x12, 0xB9, 0x12, 0xB9, 0x00, 0x1E, 0xAD, 0x76, 0x10, 0x07,
    0x01, 0x2C, 0x80, 0x09, 0x01, 0x2B, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A,
    0xF6, 0x26, 0x77, 0x0E};
const byte_vector kScapyFragment{
    0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 0x08, 0x00, 0x45, 0x00,
    0x00, 0x32, 0x00, 0x07, 0x20, 0x00, 0x40, 0x11, 0x46, 0xA6, 0x0A, 0x00, 0x00, 0x07, 0x0A, 0x00,
    0x00, 0x08, 0x12, 0xB9, 0x12, 0xB9, 0x00, 0x1E, 0xAD, 0x76, 0x10, 0x07, 0x01, 0x2C, 0x80, 0x09,
    0x01, 0x2B, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0xF6, 0x26, 0x77, 0x0E};
const byte_vector kScapyDns{
    0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07, 0x08, 0x00, 0x45, 0x00,
    0x00, 0x39, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x66, 0xA5, 0x0A, 0x00, 0x00, 0x07, 0x0A, 0x00,
    0x00, 0x08, 0x14, 0xE9, 0x00, 0x35, 0x00, 0x25, 0x01, 0x02, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x73, 0x75, 0x65, 0x07, 0x65, 0x78, 0x61, 0x6D, 0x70,
    0x6C, 0x65, 0x00, 0x00, 0x01, 0x00, 0x01};
// clang-format on

// The RH of P: op NACK, xpuid 7, npsn 300, vc 2, partition 9, apsn 299.
void check_scapy_pdu(const w::received_frame& f, std::size_t at) {
  REQUIRE(f.rh);
  CHECK(f.rh->op == 1);
  CHECK(f.rh->xpuid == 7);
  CHECK(f.rh->npsn == 300);
  CHECK(f.rh->vc == 2);
  CHECK(f.rh->partition == 9);
  CHECK(f.rh->apsn == 299);
  CHECK(f.pdu_offset == at);
  CHECK(byte_vector(f.payload.begin(), f.payload.end()) == ramp(10, 1));
  CHECK(f.bounds.status == w::rcrc_status::good);
  CHECK(f.bounds.rcrc == 0xF626770E);
  CHECK(f.accepted());
}

TEST_CASE("read_frame: frames written by scapy") {
  SUBCASE("IPv4, UDP 4793") {
    const auto f = read(kScapyUdp4);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::udp4);
    REQUIRE(f.ipv4);
    CHECK(f.ipv4->value.dscp == 2);  // tos 0x08
    CHECK(f.ipv4->value.ttl == 5);
    CHECK(f.ipv4->value.id == 0x1234);
    CHECK(f.ipv4->value.checksum == 0x8F71);
    CHECK(w::xpu_of_ipv4(f.ipv4->value.src) == 7u);
    CHECK(w::xpu_of_ipv4(f.ipv4->value.dst) == 8u);
    CHECK(f.udp->value.checksum == 0xAD76);
    check_scapy_pdu(f, 42);
  }
  SUBCASE("IPv6, UDP to 4793") {
    const auto f = read(kScapyUdp6);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::udp6);
    REQUIRE(f.ipv6);
    CHECK(f.ipv6->value.tclass == 0x0C);
    CHECK(f.ipv6->value.flow == 0x12345);
    CHECK(f.ipv6->value.hop_limit == 9);
    CHECK(w::xpu_of_ipv6(f.ipv6->value.src) == 7u);
    CHECK(f.udp->value.src_port == 1234);
    check_scapy_pdu(f, 62);
  }
  SUBCASE("AFH Gen 1 with an 802.1Q tag") {
    const auto f = read(kScapyAfh1Vlan);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::afh1_vlan);
    REQUIRE(f.vlan_count == 1);
    CHECK(f.vlan[0].value == w::vlan_tag{2, 0, 100, 0x88B5});
    CHECK(f.src_xpu == 7u);
    CHECK(f.dst_xpu == 8u);
    check_scapy_pdu(f, 18);
    CHECK(f.bounds.pad == 0);  // 40 bytes and no pad: the PDU ends at the frame's end
  }
  SUBCASE("IPv4 options") {
    const auto f = read(kScapyIpOptions);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::udp4);
    CHECK(f.ipv4->value.ihl == 6);
    CHECK(byte_vector(f.ipv4_options.begin(), f.ipv4_options.end()) ==
          byte_vector{0x01, 0x01, 0x01, 0x00});
    const auto* opt = layer(f, layer_kind::ipv4_options);
    REQUIRE(opt);
    CHECK(opt->offset == 34);
    CHECK(opt->length == 4);
    CHECK(f.udp->offset == 38);
    check_scapy_pdu(f, 46);
  }
  SUBCASE("an IPv4 fragment is reported for reassembly, not read further") {
    const auto f = read(kScapyFragment);
    CHECK_FALSE(f.kind);
    CHECK(f.net == w::carrier::ipv4);
    CHECK(f.name() == "ipv4");
    CHECK_FALSE(f.udp);
    CHECK(f.errors.empty());
    REQUIRE(f.fragment);
    CHECK(f.fragment->key.id == 7);
    CHECK(f.fragment->key.protocol == 17);
    CHECK(f.fragment->offset == 0);
    CHECK(f.fragment->more);
    CHECK(f.fragment->whole);
    CHECK(f.fragment->header.data() == kScapyFragment.data() + 14);
    CHECK(f.fragment->data.size() == kScapyFragment.size() - 34);
  }
  SUBCASE("the same datagrams without Ethernet: raw IP, IPv4 and IPv6 link types") {
    // scapy's IP(...) / UDP / Raw(P) alone is the frame without its 14 Ethernet bytes.
    const byte_vector v4(kScapyUdp4.begin() + 14, kScapyUdp4.end());
    const byte_vector v6(kScapyUdp6.begin() + 14, kScapyUdp6.end());
    for (const std::uint32_t link : {w::link_raw, w::link_ipv4}) {
      const auto f = read(v4, link);
      CHECK(f.errors.empty());
      CHECK(f.kind == w::encap::udp4);
      CHECK_FALSE(f.eth);
      REQUIRE(f.ipv4);
      CHECK(f.ipv4->offset == 0);
      CHECK(f.ipv4->value.checksum == 0x8F71);
      CHECK(kinds(f).front() == layer_kind::ipv4);
      CHECK_FALSE(f.fcs.present);  // no Ethernet, no FCS
      check_scapy_pdu(f, 28);
    }
    for (const std::uint32_t link : {w::link_raw, w::link_ipv6}) {
      const auto f = read(v6, link);
      CHECK(f.errors.empty());
      CHECK(f.kind == w::encap::udp6);
      REQUIRE(f.ipv6);
      CHECK(f.ipv6->offset == 0);
      check_scapy_pdu(f, 48);
    }
    // The version nibble decides on LINKTYPE_RAW; on LINKTYPE_IPV4 an IPv6 header is a bad IPv4
    // version.
    byte_vector v5 = v4;
    v5[0] = 0x55;
    auto f = read(v5, w::link_raw);
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::unsupported);
    CHECK(f.errors[0].field == "ip.version");
    CHECK(f.errors[0].value == 5);
    CHECK(f.name() == "unknown");
    f = read(v6, w::link_ipv4);
    CHECK_FALSE(f.kind);
    CHECK_FALSE(f.ok());
    f = read(byte_vector{}, w::link_raw);
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::truncated);
    CHECK(f.errors[0].what == "empty frame");
  }
  SUBCASE("DNS is not SUE, by port or by heuristic") {
    const auto f = read(kScapyDns);
    CHECK(f.errors.empty());
    CHECK_FALSE(f.kind);
    CHECK(f.net == w::carrier::ipv4_udp);
    CHECK(f.name() == "ipv4/udp");
    REQUIRE(f.udp);
    CHECK(f.udp->value.dst_port == 53);
    CHECK_FALSE(f.rh);
    CHECK_FALSE(f.accepted());
  }
}

// ---- every error path ------------------------------------------------------------------------

const w::error* find_error(const w::received_frame& f, std::string_view what) {
  for (const auto& e : f.errors)
    if (e.what == what) return &e;
  return nullptr;
}

TEST_CASE("read_frame: empty frames, unknown link types, missing signatures") {
  const byte_vector none;
  auto f = read(none);
  CHECK(f.net == w::carrier::ethernet);
  CHECK(f.name() == "eth");
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].code == errc::truncated);
  CHECK(f.errors[0].layer == "eth");
  CHECK(f.errors[0].needed == 14);
  CHECK(f.errors[0].available == 0);
  CHECK(f.layer_count == 0);
  CHECK_FALSE(f.ok());

  f = read(none, w::link_afh2);
  CHECK(f.name() == "afh2");
  CHECK_FALSE(f.kind);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].code == errc::truncated);
  CHECK(f.errors[0].layer == "afh2");
  CHECK(f.errors[0].what == "empty frame");
  CHECK(f.errors[0].needed == 6);

  const byte_vector frame = emit(params_for(w::encap::udp4), test_rh(), kOpaque);
  byte_vector unsigned_frame = frame;
  unsigned_frame[0] = 0x00;
  f = read(unsigned_frame, w::link_afh2);
  CHECK_FALSE(f.kind);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].code == errc::bad_value);
  CHECK(f.errors[0].field == "afh2.x");
  CHECK(f.errors[0].value == 0);
  CHECK(f.errors[0].what == "first octet lacks the AFH Gen 2 SLAP signature");

  CHECK_FALSE(w::reads_link(12345));
  CHECK(w::reads_link(w::link_ethernet));
  CHECK(w::reads_link(w::link_afh2));
  CHECK(w::reads_link(w::link_raw));
  CHECK(w::reads_link(w::link_ipv4));
  CHECK(w::reads_link(w::link_ipv6));
  f = read(frame, 12345);
  CHECK(f.name() == "unknown");
  CHECK(f.layer_count == 0);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].code == errc::unsupported);
  CHECK(f.errors[0].layer == "frame");
  CHECK(f.errors[0].what == "link type not decoded");
  CHECK(f.errors[0].value == 12345);
  CHECK_FALSE(f.fcs.present);
}

TEST_CASE("read_frame: cut off inside each header") {
  struct cut {
    w::encap e;
    std::size_t at;
    std::uint32_t link;
    std::string_view layer;  // the header reported cut off
    std::size_t needed;
  };
  for (const cut c : {cut{w::encap::udp4, 10, w::link_ethernet, "eth", 14},
                      cut{w::encap::udp4, 20, w::link_ethernet, "ip", 20},
                      cut{w::encap::udp4, 38, w::link_ethernet, "udp", 8},
                      cut{w::encap::udp4, 45, w::link_ethernet, "sue.rh", 8},
                      cut{w::encap::udp6, 40, w::link_ethernet, "ipv6", 40},
                      cut{w::encap::afh1_vlan, 16, w::link_ethernet, "vlan", 4},
                      cut{w::encap::afh1_shim, 20, w::link_ethernet, "afh1.shim", 16},
                      cut{w::encap::afh1, 18, w::link_ethernet, "sue.rh", 8},
                      cut{w::encap::afh2, 8, w::link_afh2, "afh2", 12},
                      cut{w::encap::afh2, 13, w::link_afh2, "afh2.etype", 2},
                      cut{w::encap::afh2c, 4, w::link_ethernet, "afh2c", 6},
                      cut{w::encap::lite, 4, w::link_afh2, "afh2c", 6}}) {
    CAPTURE(w::to_string(c.e));
    CAPTURE(c.at);
    byte_vector f = emit(params_for(c.e), test_rh(), kOpaque);
    f.resize(c.at);
    const auto r = read(f, c.link, on_golden_port);
    const w::error* e = nullptr;
    for (const auto& x : r.errors)
      if (x.code == errc::truncated && x.layer == c.layer) e = &x;
    REQUIRE(e);
    CHECK(e->needed == c.needed);
    CHECK_FALSE(r.ok());
    CHECK_FALSE(r.accepted());
    CHECK_FALSE(r.rh);
  }

  // Every cut of every encapsulation: nothing read outside the bytes, every layer inside them,
  // and a PDU accepted only when it is the one emitted (a cut in the Layer 2 padding leaves it
  // whole).
  for (const w::encap e : all_encaps) {
    const byte_vector full = with_ethernet_fcs(emit(params_for(e), test_rh(), kCommands));
    for (std::size_t n = 0; n <= full.size(); ++n) {
      CAPTURE(w::to_string(e));
      CAPTURE(n);
      const byte_vector f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      for (const std::uint32_t link : {w::link_ethernet, w::link_afh2}) {
        const auto r = read_with_profile(f, link);
        for (const auto& l : r.layer_list()) CHECK(l.offset + l.length <= n);
        CHECK(r.length <= n);
        CHECK(r.payload.size() <= n);
        std::size_t before = 0;
        for (const auto& l : r.layer_list()) {
          CHECK(l.errors_before >= before);
          before = l.errors_before;
        }
        CHECK(before <= r.errors.size());
        if (r.accepted()) {
          CHECK(byte_vector(r.payload.begin(), r.payload.end()) == kCommands);
          CHECK(*r.rh == test_rh());
        }
      }
    }
  }
}

TEST_CASE("read_frame: IPv4 rules") {
  const byte_vector good = emit(params_for(w::encap::udp4), test_rh(), kOpaque);  // 60 bytes
  SUBCASE("IHL below 5") {
    byte_vector f = good;
    f[ip4_at] = 0x44;
    fix_ipv4_checksum(f, ip4_at);  // over 16 bytes: the sum of a 4-word header
    const auto r = read(f);
    CHECK(r.net == w::carrier::ipv4);
    CHECK(r.ipv4);
    CHECK_FALSE(r.udp);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_value);
    CHECK(r.errors[0].what == "IHL below 5");
    CHECK(r.errors[0].field == "ip.hdr_len");
    CHECK(r.errors[0].value == 4);
    CHECK(r.errors[0].offset == ip4_at);
  }
  SUBCASE("options cut off") {
    byte_vector f = good;
    f[ip4_at] = 0x4F;  // 60 bytes of header; 46 present
    const auto r = read(f);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::truncated);
    CHECK(r.errors[0].what == "IPv4 options cut off");
    CHECK(r.errors[0].needed == 60);
    CHECK(r.errors[0].available == 46);
    CHECK_FALSE(layer(r, layer_kind::ipv4_options));
  }
  SUBCASE("total length below the header") {
    byte_vector f = good;
    set16(f, ip4_at + 2, 10);
    fix_ipv4_checksum(f, ip4_at);
    const auto r = read(f);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_length);
    CHECK(r.errors[0].offset == ip4_at + 2);
    CHECK(r.errors[0].what == "total length below header length");
    CHECK(r.errors[0].value == 10);
    CHECK_FALSE(r.udp);
  }
  SUBCASE("datagram longer than the bytes present") {
    byte_vector f = good;
    set16(f, ip4_at + 2, 1000);
    fix_ipv4_checksum(f, ip4_at);
    const auto r = read(f);
    const auto* e = find_error(r, "IPv4 datagram longer than the frame");
    REQUIRE(e);
    CHECK(e->code == errc::truncated);
    CHECK(e->needed == 1000);
    CHECK(e->available == 46);
    // Read on to the end of the frame: the UDP length still says where the PDU ends.
    CHECK(r.kind == w::encap::udp4);
    CHECK(r.accepted());
  }
  SUBCASE("bad header checksum: checked only when asked, then a warning; reading goes on") {
    byte_vector f = good;
    f[ip4_at + 10] ^= 0x01;
    CHECK(read(f).errors.empty());
    CHECK(read(f).ipv4_checksum == w::checksum_status::unverified);
    w::receive_options check;
    check.check_checksums = true;
    const auto r = read(f, w::link_ethernet, check);
    CHECK(r.ipv4_checksum == w::checksum_status::bad);
    CHECK(read(good, w::link_ethernet, check).ipv4_checksum == w::checksum_status::good);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_checksum);
    CHECK(r.errors[0].level == w::severity::warning);
    CHECK(r.errors[0].layer == "ip");
    CHECK(r.errors[0].offset == ip4_at + 10);
    CHECK(r.errors[0].value == be16(f, ip4_at + 10));
    CHECK(r.kind == w::encap::udp4);
    CHECK(r.accepted());
    CHECK(r.ok());
  }
  SUBCASE("version other than 4 stops the reading") {
    byte_vector f = good;
    f[ip4_at] = 0x55;
    const auto r = read(f);
    CHECK(r.ipv4);  // the header as read, with its error
    CHECK_FALSE(r.udp);
    REQUIRE(r.errors.size() >= 1);
    CHECK(r.errors[0].field == "ip.version");
  }
  SUBCASE("reserved flag: a warning") {
    byte_vector f = good;
    f[ip4_at + 6] |= 0x80;
    fix_ipv4_checksum(f, ip4_at);
    const auto r = read(f);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::reserved_nonzero);
    CHECK(r.errors[0].level == w::severity::warning);
    CHECK(r.accepted());
    CHECK(r.ok());
  }
  SUBCASE("not UDP") {
    byte_vector f = good;
    f[ip4_at + 9] = 6;
    fix_ipv4_checksum(f, ip4_at);
    const auto r = read(f);
    CHECK(r.errors.empty());
    CHECK(r.net == w::carrier::ipv4);
    CHECK_FALSE(r.udp);
  }
}

TEST_CASE("read_frame: UDP and IPv6 rules") {
  const byte_vector good = emit(params_for(w::encap::udp4), test_rh(), kOpaque);
  SUBCASE("length below 8") {
    byte_vector f = good;
    set16(f, udp4_at + 4, 4);
    const auto r = read(f);
    CHECK(r.net == w::carrier::ipv4_udp);
    CHECK(r.udp);
    CHECK_FALSE(r.kind);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_length);
    CHECK(r.errors[0].offset == udp4_at + 4);
    CHECK(r.errors[0].what == "UDP length below 8");
    CHECK(r.errors[0].value == 4);
  }
  SUBCASE("datagram longer than the IP datagram") {
    byte_vector f = good;
    set16(f, udp4_at + 4, 200);
    const auto r = read(f);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::truncated);
    CHECK(r.errors[0].what == "UDP datagram longer than the frame");
    CHECK(r.errors[0].needed == 200);
    CHECK(r.errors[0].available == 23);  // the IP datagram's 43 bytes less its header
    CHECK(r.kind == w::encap::udp4);     // the PDU runs to the IP datagram's end
    CHECK(r.accepted());
  }
  w::receive_options check;
  check.check_checksums = true;
  SUBCASE("bad checksum: checked only when asked, then a warning") {
    byte_vector f = good;
    f[udp4_at + 6] ^= 0x10;
    CHECK(read(f).errors.empty());
    CHECK(read(f).udp_checksum == w::checksum_status::unverified);
    const auto r = read(f, w::link_ethernet, check);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_checksum);
    CHECK(r.errors[0].level == w::severity::warning);
    CHECK(r.errors[0].layer == "udp");
    CHECK(r.errors[0].offset == udp4_at + 6);
    CHECK(r.udp_checksum == w::checksum_status::bad);
    CHECK(r.accepted());  // the R-CRC covers the PDU
    CHECK(r.ok());
    CHECK(read(good, w::link_ethernet, check).udp_checksum == w::checksum_status::good);
  }
  SUBCASE("no checksum over IPv4; always one over IPv6") {
    byte_vector f = good;
    set16(f, udp4_at + 6, 0);
    CHECK(read(f, w::link_ethernet, check).errors.empty());
    CHECK(read(f, w::link_ethernet, check).udp_checksum == w::checksum_status::not_present);
    byte_vector f6 = emit(params_for(w::encap::udp6), test_rh(), kOpaque);
    set16(f6, 54 + 6, 0);
    CHECK(read(f6).errors.empty());
    const auto r = read(f6, w::link_ethernet, check);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_checksum);
    CHECK(r.errors[0].level == w::severity::warning);
  }
  SUBCASE("IPv6 payload longer than the bytes present") {
    byte_vector f6 = emit(params_for(w::encap::udp6), test_rh(), kOpaque);
    set16(f6, 14 + 4, 1000);
    const auto r = read(f6);
    const auto* e = find_error(r, "IPv6 payload longer than the frame");
    REQUIRE(e);
    CHECK(e->code == errc::truncated);
    CHECK(e->layer == "ipv6");
    CHECK(e->needed == 1040);
    CHECK(e->available == f6.size() - 14);
  }
  SUBCASE("IPv6 next header other than UDP") {
    byte_vector f6 = emit(params_for(w::encap::udp6), test_rh(), kOpaque);
    f6[14 + 6] = 0;  // hop-by-hop options
    const auto r = read(f6);
    CHECK(r.errors.empty());
    CHECK(r.net == w::carrier::ipv6);
    CHECK_FALSE(r.udp);
  }
  SUBCASE("not SUE: other ports, no heuristic") {
    w::frame_params p = params_for(w::encap::udp4);
    p.udp_src_port = p.udp_dst_port = 9999;
    const byte_vector f = emit(p, test_rh(), kOpaque);
    CHECK(read(f).kind == w::encap::udp4);  // the heuristic: a plausible PDU
    w::receive_options o;
    o.heuristics = false;
    const auto r = read(f, w::link_ethernet, o);
    CHECK_FALSE(r.kind);
    CHECK(r.name() == "ipv4/udp");
    CHECK_FALSE(r.rh);
    CHECK(r.errors.empty());
    REQUIRE(o.add_udp_port(9999));
    CHECK(read(f, w::link_ethernet, o).kind == w::encap::udp4);
    // A payload that does not pass for a PDU stays UDP even with the heuristic.
    byte_vector broken = f;
    broken[pdu4_at + 9] ^= 1;
    fix_udp4_checksum(broken, ip4_at, udp4_at);
    CHECK_FALSE(read(broken).kind);
    CHECK(read(broken).errors.empty());
  }
}

TEST_CASE("read_frame: a failover message is its own layer, never a SUE PDU") {
  // By hand from the table (wire/failover.hpp): ver 0, type 1 (request), port 2, VC 1 -> 0x19;
  // generation 3; rsvd 0 and xpuid 5; base 0x1234; expected 0; then the CRC of those 8 bytes.
  // An RH-only PDU has this shape, R-CRC included: only the carrier tells them apart.
  byte_vector msg{0x19, 0x03, 0x00, 0x05, 0x12, 0x34, 0x00, 0x00, 0, 0, 0, 0};
  set32(msg, 8, ref_crc32(msg.data(), 8));
  const auto framed = [&](w::frame_params p) {
    byte_vector out(256);
    const auto r = w::emit_frame(p, msg, out);
    REQUIRE(r.ok());
    out.resize(r.value);
    return out;
  };
  const auto check_message = [&](const w::received_frame& r, std::size_t at) {
    CHECK_FALSE(r.kind);
    CHECK_FALSE(r.rh);
    REQUIRE(r.failover);
    CHECK(r.failover->offset == at);
    CHECK(r.failover->value.type == 1);
    CHECK(r.failover->value.port == 2);
    CHECK(r.failover->value.vc == 1);
    CHECK(r.failover->value.generation == 3);
    CHECK(r.failover->value.xpuid == 5);
    CHECK(r.failover->value.base == 0x1234);
    CHECK(r.layer_list().back().kind == layer_kind::failover);
  };
  w::frame_params udp = params_for(w::encap::udp4);
  udp.udp_src_port = udp.udp_dst_port = w::failover_udp_port;
  const byte_vector u = framed(udp);
  SUBCASE("over UDP, on the exchange's port") {
    const auto r = read(u);
    CHECK(r.errors.empty());
    check_message(r, pdu4_at);
  }
  SUBCASE("the port named as SUE's is read as SUE") {
    w::receive_options o;
    o.add_udp_port(w::failover_udp_port);
    const auto r = read(u, w::link_ethernet, o);
    CHECK(r.kind == w::encap::udp4);
    CHECK_FALSE(r.failover);
  }
  SUBCASE("on another port the heuristic takes one for an RH-only NACK") {
    // Port 0, VC 0 and a base below 0x400 leave the bits an RH reserves clear (0x10: op 1,
    // NACK), as the failover requests of a session do.
    byte_vector m = msg;
    m[0] = 0x10;
    m[4] = 0x02;
    set32(m, 8, ref_crc32(m.data(), 8));
    w::frame_params other = udp;
    other.udp_src_port = other.udp_dst_port = 5000;
    byte_vector out(256);
    const auto e = w::emit_frame(other, m, out);
    REQUIRE(e.ok());
    out.resize(e.value);
    const auto r = read(out);
    CHECK(r.kind == w::encap::udp4);
    REQUIRE(r.rh);
    CHECK(r.rh->op == 1);
    CHECK_FALSE(r.failover);
  }
  SUBCASE("a damaged message: its CRC is reported") {
    byte_vector f = u;
    f[pdu4_at + 5] ^= 0x01;  // base
    fix_udp4_checksum(f, ip4_at, udp4_at);
    const auto r = read(f);
    REQUIRE(r.failover);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_checksum);
    CHECK(r.errors[0].layer == "sue.failover");
    CHECK(r.errors[0].offset == pdu4_at + 8);
    CHECK(r.errors[0].value == ref_crc32(f.data() + pdu4_at, 8));
  }
  SUBCASE("cut short on the wire") {
    byte_vector f = u;
    set16(f, udp4_at + 4, 8 + 6);  // the datagram holds 6 of its 12 bytes
    fix_udp4_checksum(f, ip4_at, udp4_at);
    const auto r = read(f);
    CHECK_FALSE(r.failover);
    CHECK_FALSE(r.kind);
    REQUIRE_FALSE(r.errors.empty());
    CHECK(r.errors[0].code == errc::truncated);
  }
  SUBCASE("in AFH Gen 1's shim, next header 254") {
    w::frame_params shim = params_for(w::encap::afh1_shim);
    shim.shim_next_header = w::shim_next_failover;
    const auto r = read(framed(shim));
    CHECK(r.errors.empty());
    check_message(r, 14 + w::layout<w::afh1_shim>::size);
  }
}

TEST_CASE("read_frame: AFH Gen 1 shim and AFH Gen 2 rules") {
  SUBCASE("shim naming another transport") {
    byte_vector f = emit(params_for(w::encap::afh1_shim), test_rh(), kOpaque);
    // next header: bits 20-27 of the shim, the low nibble of byte 2 and high of byte 3
    f[14 + 2] = static_cast<std::uint8_t>((f[14 + 2] & 0xF0) | 0x01);
    f[14 + 3] = static_cast<std::uint8_t>((f[14 + 3] & 0x0F) | 0x10);  // 17
    const auto r = read(f);
    CHECK(r.kind == w::encap::afh1_shim);
    CHECK_FALSE(r.rh);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::unsupported);
    CHECK(r.errors[0].what == "transport is not SUE");
    CHECK(r.errors[0].layer == "afh1.shim");
    CHECK(r.errors[0].offset == 16);
    CHECK(r.errors[0].value == 17);
    CHECK(r.errors[0].level == w::severity::warning);
    w::receive_options o;
    o.shim_next_sue = 17;
    CHECK(read(f, w::link_ethernet, o).rh);
  }
  SUBCASE("shim length past the frame") {
    byte_vector f = emit(params_for(w::encap::afh1_shim), test_rh(), kOpaque);  // 45 + 15 pad
    // length: bits 28-43, the low nibble of byte 3, byte 4, the high nibble of byte 5
    const std::uint16_t len = 200;
    f[14 + 3] = static_cast<std::uint8_t>((f[14 + 3] & 0xF0) | (len >> 12));
    f[14 + 4] = static_cast<std::uint8_t>(len >> 4);
    f[14 + 5] = static_cast<std::uint8_t>((f[14 + 5] & 0x0F) | ((len & 0xF) << 4));
    const auto r = read(f);
    REQUIRE(r.shim);
    CHECK(r.shim->value.length == 200);
    const auto* e = find_error(r, "shim length runs past the frame");
    REQUIRE(e);
    CHECK(e->code == errc::truncated);
    CHECK(e->offset == 17);
    CHECK(e->needed == 200);
    CHECK(e->available == 30);
    // The PDU then runs to the frame's end, the pad included: its last four bytes are no R-CRC.
    CHECK(r.bounds.status == w::rcrc_status::bad);
    CHECK(find_error(r, "R-CRC does not match; value is the CRC computed over RH and payload"));
  }
  SUBCASE("AFH Gen 2 naming another transport") {
    byte_vector f = emit(params_for(w::encap::afh2), test_rh(), kOpaque);
    set16(f, 12, 0x0800);
    auto r = read(f, w::link_afh2);
    CHECK(r.kind == w::encap::afh2);
    CHECK_FALSE(r.rh);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].layer == "afh2.etype");
    CHECK(r.errors[0].field == "afh2.type");
    CHECK(r.errors[0].value == 0x0800);
    CHECK(r.errors[0].level == w::severity::warning);
    // On an Ethernet link the normal format counts only with SUE's Ethertype: this is Ethernet.
    r = read(f);
    CHECK_FALSE(r.afh2);
    CHECK(r.eth);
  }
  SUBCASE("a compressed-looking MAC before a common Ethertype is Ethernet") {
    byte_vector f = emit(params_for(w::encap::udp4), test_rh(), kOpaque);
    f[0] = 0x22;  // W = 1: the compressed format's signature; bytes 12-13 hold IPv4
    const auto r = read(f);
    CHECK(r.kind == w::encap::udp4);
    CHECK_FALSE(r.afh2c);
    CHECK(w::recognise_afh2(f, false, 0x88B5, 0x88B6).form == w::afh2_form::none);
    CHECK(w::recognise_afh2(f, true, 0x88B5, 0x88B6).form == w::afh2_form::compressed);
  }
  SUBCASE("fixed fields of AFH Gen 2 stop the reading") {
    byte_vector f = emit(params_for(w::encap::afh2), test_rh(), kOpaque);
    f[6] ^= 0x02;  // SA U/L: must be 1
    const auto r = read(f, w::link_afh2);
    REQUIRE(r.afh2);  // as read
    CHECK_FALSE(r.afh2_type);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].field == "afh2.sa_ul");
    CHECK(r.errors[0].code == errc::bad_value);
  }
  SUBCASE("other Ethertypes, as configured") {
    w::frame_params p = params_for(w::encap::afh1);
    p.sue_ethertype = 0x1234;
    const byte_vector f = emit(p, test_rh(), kOpaque);
    CHECK_FALSE(read(f).kind);
    w::receive_options o;
    o.sue_ethertype = 0x1234;
    CHECK(read(f, w::link_ethernet, o).accepted());
  }
  SUBCASE("two tags, and a third") {
    // Long enough to need no padding: the PDU runs to the frame's end however many tags.
    const byte_vector one = emit(params_for(w::encap::afh1_vlan), test_rh(), ramp(50, 1));
    byte_vector two(one.begin(), one.begin() + 12);
    for (const std::uint8_t x : {0x88, 0xA8, 0x00, 0x07}) two.push_back(x);  // 802.1ad, VID 7
    two.insert(two.end(), one.begin() + 12, one.end());
    auto r = read(two);
    CHECK(r.kind == w::encap::afh1_vlan);
    REQUIRE(r.vlan_count == 2);
    CHECK(r.vlan[0].value.vid == 7);
    CHECK(r.vlan[0].value.type == 0x8100);
    CHECK(r.vlan[1].offset == 18);
    CHECK(r.vlan[1].value.type == 0x88B5);
    CHECK(r.accepted());
    byte_vector three(two.begin(), two.begin() + 16);
    for (const std::uint8_t x : {0x81, 0x00, 0x00, 0x09}) three.push_back(x);
    three.insert(three.end(), two.begin() + 16, two.end());
    r = read(three);
    CHECK(r.vlan_count == 3);
    CHECK(r.vlan[1].value.vid == 9);
    CHECK(r.vlan[2].offset == 22);
    CHECK(r.kind == w::encap::afh1_vlan);
    CHECK(r.accepted());
  }
}

TEST_CASE("read_frame: the PDU's own problems") {
  SUBCASE("bad R-CRC: the computed value is reported") {
    byte_vector f = emit(params_for(w::encap::afh1), test_rh(), byte_vector(60, 0x5A));
    f[14 + 8 + 10] ^= 0x01;
    const auto r = read(f);
    CHECK(r.rh);
    CHECK(r.bounds.status == w::rcrc_status::bad);
    CHECK_FALSE(r.accepted());
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_checksum);
    CHECK(r.errors[0].layer == "sue.rcrc");
    CHECK(r.errors[0].offset == 14 + 8 + 60);
    CHECK(r.errors[0].value == ref_crc32(f.data() + 14, 68));
  }
  SUBCASE("RH reserved bits and a version not 0: a warning each; the version as carried") {
    byte_vector f = emit(params_for(w::encap::afh1), test_rh(), byte_vector(60, 0x5A));
    f[14] |= 0x40 | 0x0C;  // ver 1, rsv 3
    fix_rcrc(f, 14, f.size());
    const auto r = read(f);
    REQUIRE(r.rh);
    CHECK(r.rh->ver == 1);
    CHECK(r.rh->rsv == 3);
    CHECK(r.accepted());
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].code == errc::reserved_nonzero);
    CHECK(r.errors[0].field == "sue.rh.rsv");
    CHECK(r.errors[0].offset == 14);
    CHECK(r.errors[0].level == w::severity::warning);
    CHECK(r.errors[1].code == errc::unsupported);
    CHECK(r.errors[1].field == "sue.rh.ver");
    CHECK(r.errors[1].value == 1);
    CHECK(r.errors[1].offset == 14);
    CHECK(r.errors[1].level == w::severity::warning);
    CHECK(r.ok());
  }
  SUBCASE("SUE Lite payload over 1024 bytes") {
    byte_vector f(6, 0);
    REQUIRE(w::encode(w::afh2_compressed{.tc = 1, .src_xpu = 1, .dst_xpu = 2}, f));
    const byte_vector payload = ramp(1100, 2);
    f.insert(f.end(), payload.begin(), payload.end());
    const auto r = read(f, w::link_afh2);
    CHECK(r.kind == w::encap::lite);
    CHECK(r.payload.size() == 1100);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].layer == "sue_lite");
    CHECK(r.errors[0].field == "sue_lite.len");
    CHECK(r.errors[0].value == 1100);
    CHECK(r.errors[0].level == w::severity::warning);
    CHECK(r.command_errors_at == 0);  // commands' problems go before the length warning
  }
  SUBCASE("FCS") {
    const byte_vector f = emit(params_for(w::encap::udp4), test_rh(), kOpaque);
    byte_vector bad = with_ethernet_fcs(f);
    bad.back() ^= 0x80;
    // Detected only when it matches: a bad one is then part of the frame.
    auto r = read(bad);
    CHECK_FALSE(r.fcs.present);
    CHECK(r.length == bad.size());
    CHECK(r.accepted());
    w::receive_options o;
    o.fcs = w::fcs_mode::present;
    r = read(bad, w::link_ethernet, o);
    CHECK(r.fcs.present);
    CHECK_FALSE(r.fcs.good);
    CHECK(r.fcs.computed == ref_crc32(f.data(), f.size()));
    CHECK(r.length == f.size());
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::bad_checksum);
    CHECK(r.errors[0].layer == "eth.fcs");
    CHECK(r.errors[0].offset == f.size());
    CHECK(r.errors[0].value == ref_crc32(f.data(), f.size()));
    CHECK(kinds(r).back() == layer_kind::fcs);
    CHECK(r.layers[r.layer_count - 1].errors_before == 0);  // the error follows the layer
    o.fcs = w::fcs_mode::absent;
    r = read(with_ethernet_fcs(f), w::link_ethernet, o);
    CHECK_FALSE(r.fcs.present);
    CHECK(r.length == f.size() + 4);
    // No FCS on the AFH Gen 2 link type.
    const byte_vector c = with_ethernet_fcs(emit(params_for(w::encap::afh2c), test_rh(), kOpaque));
    CHECK_FALSE(read(c, w::link_afh2).fcs.present);
  }
}

TEST_CASE("read_frame: problems are placed between the layers they were found between") {
  byte_vector f = emit(params_for(w::encap::udp4), test_rh(), ramp(40, 1));
  f[ip4_at + 10] ^= 0x01;      // IPv4 checksum
  f[pdu4_at + 8 + 5] ^= 0x01;  // a payload byte: R-CRC and UDP checksum
  w::receive_options check = on_golden_port;
  check.check_checksums = true;
  const auto r = read(f, w::link_ethernet, check);
  REQUIRE(r.errors.size() == 3);
  CHECK(r.errors[0].layer == "ip");
  CHECK(r.errors[1].layer == "udp");
  CHECK(r.errors[2].layer == "sue.rcrc");
  REQUIRE(kinds(r) == std::vector<layer_kind>{layer_kind::ethernet, layer_kind::ipv4,
                                              layer_kind::udp, layer_kind::sue_rh,
                                              layer_kind::sue_payload, layer_kind::sue_rcrc});
  CHECK(r.layers[0].errors_before == 0);
  CHECK(r.layers[1].errors_before == 0);
  CHECK(r.layers[2].errors_before == 1);  // the IPv4 checksum, found after its header
  CHECK(r.layers[3].errors_before == 2);
  CHECK(r.layers[5].errors_before == 2);  // the R-CRC's error follows its layer
  CHECK(r.command_errors_at == 2);
}

TEST_CASE("xpu_of_ipv4 and xpu_of_ipv6 invert the addressing plan") {
  for (const std::uint32_t x : {0u, 1u, 0x123456u, 0xFFFFFFu}) {
    CHECK(w::xpu_of_ipv4(w::xpu_ipv4(x)) == x);
    CHECK(w::xpu_of_ipv6(w::xpu_ipv6(x)) == x);
  }
  CHECK(w::xpu_of_ipv6(w::xpu_ipv6(0xFFFFFFFFu)) == 0xFFFFFFFFu);
  CHECK_FALSE(w::xpu_of_ipv4(0x0B000001));  // 11.0.0.1
  CHECK_FALSE(w::xpu_of_ipv4(0xC0000201));  // 192.0.2.1
  w::ipv6_address a = w::xpu_ipv6(5);
  a[7] = 1;
  CHECK_FALSE(w::xpu_of_ipv6(a));
  static_assert(w::xpu_of_ipv4(0x0A000007) == 7u);
}

TEST_CASE("read_pdu: a PDU on its own") {
  byte_vector pdu(8 + 3 + 4);
  REQUIRE(w::encode(test_rh(), pdu));
  std::copy(kOpaque.begin(), kOpaque.end(), pdu.begin() + 8);
  set32(pdu, 11, ref_crc32(pdu.data(), 11));
  const auto f = w::read_pdu(pdu);
  CHECK(f.accepted());
  CHECK_FALSE(f.kind);
  CHECK(f.pdu_offset == 0);
  CHECK(byte_vector(f.payload.begin(), f.payload.end()) == kOpaque);
  CHECK(kinds(f) ==
        std::vector<layer_kind>{layer_kind::sue_rh, layer_kind::sue_payload, layer_kind::sue_rcrc});
  CHECK(w::read_pdu(w::bytes(pdu).first(5)).errors[0].code == errc::truncated);
}

}  // namespace

namespace {

// ---- a frame cut by the capture's snapshot length ------------------------------------------

TEST_CASE("read_frame: a frame the snapshot length cut is read against its length on the wire") {
  // udp4: Ethernet 14, IPv4 20, UDP 8, RH 8 at 42, payload 100 at 50, R-CRC at 150; 154 bytes.
  const byte_vector whole = emit(params_for(w::encap::udp4), test_rh(), ramp(100, 1));
  REQUIRE(whole.size() == 154);
  const auto full = read(whole);
  REQUIRE(full.accepted());
  REQUIRE(full.errors.empty());
  CHECK(full.wire_length == 154);
  CHECK(full.not_captured == 0);
  CHECK(full.length_on_wire == 154);
  // No port is SUE's and the heuristic needs a good R-CRC, which a cut frame
  // does not hold: a header-only capture is read with its port named (--udp-port).
  const w::receive_options& named = on_golden_port;

  SUBCASE("an unnamed port: no R-CRC to confirm the RH, so the datagram stays UDP") {
    const auto r = w::read_frame(w::bytes(whole).first(80), w::link_ethernet, {}, whole.size());
    CHECK_FALSE(r.rh);
    CHECK(r.ok());
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::not_captured);
  }

  SUBCASE("cut in the payload: RH decoded, R-CRC not captured, one note and no error") {
    const w::bytes cut = w::bytes(whole).first(80);
    const auto r = w::read_frame(cut, w::link_ethernet, named, whole.size());
    CHECK(r.kind == w::encap::udp4);
    REQUIRE(r.rh);
    CHECK(*r.rh == *full.rh);
    CHECK(r.wire_length == 154);
    CHECK(r.not_captured == 74);
    CHECK(r.length == 80);
    CHECK(r.length_on_wire == 154);
    CHECK(r.bounds.status == w::rcrc_status::not_captured);
    CHECK(r.bounds.payload_end == 108);  // RH and payload, from the UDP length
    CHECK(r.payload_length() == 100);
    CHECK(r.payload.size() == 80 - 50);
    CHECK_FALSE(r.accepted());
    CHECK(r.ok());
    CHECK(kinds(r) == std::vector<layer_kind>{layer_kind::ethernet, layer_kind::ipv4,
                                              layer_kind::udp, layer_kind::sue_rh,
                                              layer_kind::sue_payload});
    CHECK(r.layers[4].length == 30);
    CHECK(r.layers[4].not_captured == 70);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == errc::not_captured);
    CHECK(r.errors[0].level == w::severity::note);
    CHECK(r.errors[0].layer == "frame");
    CHECK(r.errors[0].offset == 80);
    CHECK(r.errors[0].needed == 154);
    CHECK(r.errors[0].available == 80);
    CHECK(r.errors[0].value == 74);
    // The UDP checksum cannot be checked over bytes that were not captured: unverified, no
    // warning, even when asked.
    w::receive_options check = named;  // a copy
    check.check_checksums = true;
    const auto c = w::read_frame(cut, w::link_ethernet, check, whole.size());
    CHECK(c.udp_checksum == w::checksum_status::unverified);
    CHECK(c.ipv4_checksum == w::checksum_status::good);
    CHECK(c.errors.size() == 1);
  }
  SUBCASE("cut in the R-CRC: the payload whole, the R-CRC not") {
    const auto r = w::read_frame(w::bytes(whole).first(152), w::link_ethernet, named, whole.size());
    CHECK(r.bounds.status == w::rcrc_status::not_captured);
    CHECK(r.payload.size() == 100);
    CHECK(r.layers[4].not_captured == 0);
    CHECK(r.errors.size() == 1);
  }
  SUBCASE("cut inside a header: not decoded, and no error when the wire held it whole") {
    for (const std::size_t n :
         {std::size_t{10}, std::size_t{20}, std::size_t{38}, std::size_t{46}}) {
      CAPTURE(n);
      const w::bytes cut = w::bytes(whole).first(n);
      const auto r = w::read_frame(cut, w::link_ethernet, named, whole.size());
      CHECK_FALSE(r.rh);
      REQUIRE(r.errors.size() == 1);
      CHECK(r.errors[0].code == errc::not_captured);
      CHECK(r.errors[0].value == whole.size() - n);
      // The same bytes as a whole frame: the usual truncated error, the fault of the frame.
      const auto short_frame = read(byte_vector(cut.begin(), cut.end()));
      CHECK_FALSE(short_frame.ok());
      CHECK(short_frame.errors[0].code == errc::truncated);
    }
  }
  SUBCASE("lengths are still checked against the wire") {
    byte_vector f = whole;
    set16(f, ip4_at + 2, 400);  // more than the 140 bytes the wire holds after Ethernet
    fix_ipv4_checksum(f, ip4_at);
    const auto r = w::read_frame(w::bytes(f).first(80), w::link_ethernet, named, f.size());
    const auto* e = find_error(r, "IPv4 datagram longer than the frame");
    REQUIRE(e);
    CHECK(e->level == w::severity::error);
    CHECK(e->available == 140);
    CHECK_FALSE(r.ok());
  }
  SUBCASE("a wire length at or below the bytes captured: a whole frame") {
    const auto r = w::read_frame(whole, w::link_ethernet, {}, 100);
    CHECK(r.wire_length == 154);
    CHECK(r.not_captured == 0);
    CHECK(r.accepted());
    CHECK(r.errors.empty());
  }
  SUBCASE("Layer 2: a cut frame has no FCS in the capture") {
    const byte_vector l2 =
        with_ethernet_fcs(emit(params_for(w::encap::afh1), test_rh(), ramp(100, 1)));
    const auto r = w::read_frame(w::bytes(l2).first(64), w::link_ethernet, {}, l2.size());
    CHECK_FALSE(r.fcs.present);
    CHECK(r.kind == w::encap::afh1);
    CHECK(r.bounds.status == w::rcrc_status::not_captured);
    // Taken to have none (fcs detect): the PDU runs to the end of the wire length.
    CHECK(r.payload_length() == l2.size() - 14 - 8 - 4);
    w::receive_options present;
    present.fcs = w::fcs_mode::present;
    const auto p = w::read_frame(w::bytes(l2).first(64), w::link_ethernet, present, l2.size());
    CHECK_FALSE(p.fcs.present);
    CHECK(p.length_on_wire == l2.size() - 4);
    CHECK(p.payload_length() == 100);
    CHECK(p.errors.size() == 1);
    CHECK(p.errors[0].code == errc::not_captured);
  }
  SUBCASE("read_pdu: a PDU cut short") {
    const w::bytes pdu = w::bytes(whole).subspan(pdu4_at);
    const auto r = w::read_pdu(pdu.first(20), {}, pdu.size());
    CHECK(r.bounds.status == w::rcrc_status::not_captured);
    CHECK(r.payload_length() == 100);
    CHECK(r.ok());
  }
}

// ---- what a sending host's capture holds ---------------------------------------------------

TEST_CASE("read_frame: a UDP checksum left to offload is not an error") {
  byte_vector f = emit(params_for(w::encap::udp4), test_rh(), kOpaque);
  // Linux hands a UDP datagram to a NIC that computes its checksum (CHECKSUM_PARTIAL) with the
  // field holding the pseudo-header's sum only (udp4_hwcsum: ~csum_tcpudp_magic(...)), and a
  // capture on the sending host sees that. Worked out here word by word: source and destination
  // addresses, protocol 17, UDP length; folded, not complemented.
  std::uint32_t sum = 0;
  for (std::size_t i = ip4_at + 12; i < ip4_at + 20; i += 2) sum += be16(f, i);
  sum += 17;
  sum += be16(f, udp4_at + 4);
  while (sum > 0xFFFF) sum = (sum & 0xFFFF) + (sum >> 16);
  set16(f, udp4_at + 6, static_cast<std::uint16_t>(sum));
  REQUIRE(be16(f, udp4_at + 6) != 0);
  const auto r = read(f);
  CHECK(r.errors.empty());
  CHECK(r.accepted());
  CHECK(r.udp_checksum == w::checksum_status::unverified);
  w::receive_options check;
  check.check_checksums = true;
  const auto c = read(f, w::link_ethernet, check);
  CHECK(c.accepted());
  CHECK(c.ok());
  CHECK(c.udp_checksum == w::checksum_status::bad);
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].code == errc::bad_checksum);
  CHECK(c.errors[0].level == w::severity::warning);
  CHECK(c.errors[0].value == sum);
}

}  // namespace
