// A receiver's reading of a frame (transport::read_sue_frame): its fast path gives, frame by
// frame, what the full reader's reading gives (detail::project of wire::read_frame), over every
// encapsulation the library emits, as emitted, with an FCS, cut at every length and with each
// byte changed, under the options a receiver, the fabric and a capture reader use; and it does
// read the frames a fabric carries, not only leave them to the full reader.
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/receive.hpp>
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
  sets.push_back(t::sue_receive_options());  // an instance's: no FCS, no guessing
  w::receive_options fabric;                 // the fabric's switch: an FCS looked for
  (void)fabric.add_udp_port(w::emit_udp_port);
  sets.push_back(fabric);
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
using scaleup::test::with_ethernet_fcs;

// Frames of each encapsulation: RH-only (padded to the minimum frame), a command's worth and
// a longer payload; SUE Lite carries the commands alone.
std::vector<std::vector<std::uint8_t>> emitted(w::encap kind) {
  static constexpr std::array<std::uint8_t, 16> write{0x12, 0, 0, 8, 1, 2,  3,  4,
                                                      5,    6, 7, 8, 9, 10, 11, 12};
  std::vector<std::uint8_t> data(200);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  std::vector<std::vector<std::uint8_t>> out;
  const w::reliability_header rh{.op = 0, .xpuid = 517, .npsn = 4242, .vc = 1, .apsn = 99};
  w::frame_params p;
  p.kind = kind;
  p.src_xpu = 517;
  p.dst_xpu = 1000;
  p.tc = kind == w::encap::afh1 ? 0 : 2;
  for (const std::size_t len : {std::size_t{0}, write.size(), data.size()}) {
    std::vector<std::uint8_t> f(512);
    const w::bytes payload = len == write.size() ? w::bytes(write) : w::bytes(data.data(), len);
    const auto n =
        kind == w::encap::lite ? w::emit_frame(p, write, f) : w::emit_sue_frame(p, rh, payload, f);
    REQUIRE(n);
    f.resize(n.value);
    out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("read_sue_frame: the fast path reads what the full reader reads, frame by frame") {
  const auto sets = option_sets();
  tally n;
  for (const w::encap kind : all_encaps) {
    CAPTURE(w::to_string(kind));
    for (auto f : emitted(kind)) {
      // With its FCS too, as a capture with FCSs has it.
      const auto with_fcs = with_ethernet_fcs(f);
      for (const auto& frame : {f, with_fcs}) {
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
    // What the fast path leaves to the full reader: tags, IPv6, SUE Lite.
    const bool fast = kind == w::encap::udp4 || kind == w::encap::afh1 ||
                      kind == w::encap::afh1_shim || kind == w::encap::afh2 ||
                      kind == w::encap::afh2c;
    for (const auto& f : emitted(kind)) {
      const auto r = t::read_sue_frame_fast(f, o);
      CHECK(r.has_value() == fast);
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
