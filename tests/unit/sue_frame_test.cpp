// A receiver's reading of a frame (transport::read_sue_frame): its fast path gives, frame by
// frame, what the full reader's reading gives (detail::project of wire::read_frame), over every
// encapsulation the library emits, as emitted, with an FCS, cut at every length and with each
// byte changed, under the options a receiver, the fabric and a capture reader use; and it does
// read the frames a fabric carries, not only leave them to the full reader.
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/receive.hpp>
#include <scaleup/sim/read_pdu.hpp>
#include <scaleup/transport/sue_frame.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;

struct tally {
  std::size_t frames = 0;
  std::size_t fast = 0;
  std::size_t differ = 0;
};

// One frame: the fast path, when it reads it, agrees with the full reader.
void compare(w::bytes f, const w::receive_options& o, tally& n) {
  ++n.frames;
  const auto fast = t::read_sue_frame_fast(f, o);
  if (!fast) return;
  ++n.fast;
  if (*fast == t::detail::project(w::read_frame(f, w::link_ethernet, o))) return;
  if (++n.differ <= 5)
    FAIL_CHECK("fast path differs from the full reader on " << scaleup::test::hex(f));
}

const scaleup::pack::profile_boundaries boundaries(scaleup::pack::default_profile);

std::vector<w::receive_options> option_sets() {
  std::vector<w::receive_options> sets;
  sets.push_back(t::sue_receive_options());               // an instance's: no FCS, no guessing
  sets.push_back(scaleup::sim::fabric_receive);           // the fabric's tests: an FCS looked for
  w::receive_options profile = t::sue_receive_options();  // command boundaries, checksums
  profile.commands = &boundaries;
  profile.check_checksums = true;
  sets.push_back(profile);
  w::receive_options present = t::sue_receive_options();
  present.fcs = w::fcs_mode::present;
  sets.push_back(present);
  w::receive_options unnamed;  // a capture reader's defaults: no port named
  sets.push_back(unnamed);
  return sets;
}

using scaleup::test::all_encaps;
using scaleup::test::barrier;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::ramp;
using scaleup::test::with_ethernet_fcs;
using scaleup::test::write5;

// Frames of each encapsulation: RH-only (padded to the minimum frame), two commands of the
// default profile (a write whose data ends in zeros, a barrier) and a longer payload; SUE Lite
// carries the two commands alone, padded.
std::vector<byte_vector> emitted(w::encap kind) {
  const byte_vector commands = cat({write5, barrier});
  const byte_vector data = ramp(200, 1, 7);
  std::vector<byte_vector> out;
  const w::reliability_header rh{.op = 0, .xpuid = 517, .npsn = 4242, .vc = 1, .apsn = 99};
  w::frame_params p;
  p.kind = kind;
  p.src_xpu = 517;
  p.dst_xpu = 1000;
  p.tc = kind == w::encap::afh1 ? 0 : 2;
  for (const auto& payload : {byte_vector{}, commands, data}) {
    byte_vector f(512);
    const auto n = kind == w::encap::lite ? w::emit_frame(p, commands, f)
                                          : w::emit_sue_frame(p, rh, payload, f);
    REQUIRE(n);
    f.resize(n.value);
    out.push_back(f);
  }
  return out;
}

// A tagged frame with `n` outer 802.1ad service tags (priority 5, VLAN 7) before its own tag.
byte_vector with_service_tags(byte_vector f, std::size_t n) {
  const byte_vector tag{0x88, 0xA8, 0xA0, 0x07};
  for (std::size_t i = 0; i < n; ++i) f.insert(f.begin() + 12, tag.begin(), tag.end());
  return f;
}

}  // namespace

TEST_CASE("read_sue_frame: the fast path reads what the full reader reads, frame by frame") {
  const auto sets = option_sets();
  tally n;
  for (const w::encap kind : all_encaps) {
    CAPTURE(w::to_string(kind));
    const bool tagged = kind == w::encap::afh1_vlan || kind == w::encap::afh1_vlan_shim;
    for (const auto& f : emitted(kind)) {
      // With its FCS too, as a capture with FCSs has it; a tagged one with two tags, and with
      // nine (one more than the reader reads).
      std::vector<byte_vector> frames{f, with_ethernet_fcs(f)};
      if (tagged) {
        frames.push_back(with_service_tags(f, 1));
        frames.push_back(with_service_tags(f, 8));
      }
      for (const auto& frame : frames) {
        for (const auto& o : sets) {
          for (std::size_t k = 0; k <= frame.size(); ++k) compare(w::bytes(frame.data(), k), o, n);
          auto changed = frame;
          for (std::size_t i = 0; i < changed.size(); ++i)
            for (const std::uint8_t x :
                 {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
              changed[i] ^= x;
              compare(changed, o, n);
              changed[i] ^= x;
            }
        }
      }
    }
  }
  CHECK(n.differ == 0);
  // Not a comparison that only the full reader ever answered.
  MESSAGE(n.fast << " of " << n.frames << " frames read by the fast path");
  CHECK(n.fast * 4 > n.frames);
}

TEST_CASE("read_sue_frame: the frames a fabric carries take the fast path") {
  const auto o = t::sue_receive_options();
  for (const w::encap kind : all_encaps) {
    CAPTURE(w::to_string(kind));
    for (const auto& f : emitted(kind)) {
      const auto r = t::read_sue_frame_fast(f, o);
      CHECK(r.has_value());
      const t::sue_frame s = t::read_sue_frame(f, o);
      CHECK(s.kind == kind);
      CHECK(s.dst_xpu == 1000u);
      CHECK(s.src_xpu == 517u);
      CHECK(s.tc == (kind == w::encap::afh1 ? 0 : 2));
      if (kind != w::encap::lite) CHECK(s.good());
    }
  }
  // A frame of another protocol (a PFC frame) is its Ethertype, read fast; one cut inside the
  // Ethernet header is the full reader's.
  std::array<std::uint8_t, 60> pfc{};
  w::store_be16(pfc.data() + 12, t::mac_control_type);
  const auto r = t::read_sue_frame_fast(pfc, o);
  REQUIRE(r);
  CHECK(r->ether_type == t::mac_control_type);
  CHECK(!r->kind);
  CHECK(!t::read_sue_frame_fast(w::bytes(pfc).first(13), o));
}
