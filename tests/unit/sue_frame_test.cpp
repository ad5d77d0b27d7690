// The two fast paths of reading a frame against the full reader, frame by frame: a receiver's
// reading (transport::read_sue_frame) gives what the full reader's gives (detail::project of
// wire::read_frame), and read_frame's own header prediction (wire/header_prediction.hpp) gives
// the full reader's whole value (wire::same_reading). Over every encapsulation the library
// emits, as emitted, with an FCS, cut at every length and with each byte changed, under the
// options a receiver, the fabric and a capture reader use; and each does read the frames a
// fabric carries, not only leave them to the full reader.
#include <scaleup/dissect/flow_table.hpp>
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
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::ip4_at;
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

namespace {

struct reading_tally {
  std::size_t frames = 0;
  std::size_t tried = 0;      // given to the fast path itself (no FCS to look for)
  std::size_t predicted = 0;  // and read by it
  std::size_t differ = 0;
};

// The fast path on its own, given a whole frame as read_frame gives it one (no FCS to look for):
// whether it read the frame into `p`.
bool predicted(w::bytes f, const w::receive_options& o, w::received_frame& p) {
  p.link = w::link_ethernet;
  p.frame = f;
  p.length = p.wire_length = p.length_on_wire = f.size();
  return w::detail::predicted_reader(p, o).ethernet_link();
}

// One frame: read_frame gives the full reader's reading; and where the options leave no FCS to
// look for, the fast path on its own either leaves the frame or reads exactly that.
void compare_reading(w::bytes f, const w::receive_options& o, reading_tally& n) {
  ++n.frames;
  const w::received_frame full = w::detail::read_frame_with(f, w::link_ethernet, o, 0, false);
  bool same = w::same_reading(w::read_frame(f, w::link_ethernet, o), full);
  if (o.fcs == w::fcs_mode::absent) {
    ++n.tried;
    w::received_frame p;
    if (predicted(f, o, p)) {
      ++n.predicted;
      same = same && w::same_reading(p, full);
    } else {
      // Left as it was given.
      same = same && !p.kind && !p.eth && !p.rh && p.layer_count == 0 && p.payload.empty();
    }
  }
  if (!same && ++n.differ <= 5)
    FAIL_CHECK("read_frame's fast path differs from the full reader on " << scaleup::test::hex(f));
}

// What the fast path reads besides SUE's frames as emitted: IPv4 options, another IP protocol,
// another Ethertype, the failover exchange's port, IPv6 with a Fragment header.
std::vector<byte_vector> other_frames() {
  std::vector<byte_vector> out;
  const byte_vector udp4 = emitted(w::encap::udp4)[1];
  byte_vector options = udp4;  // four NOP options: IHL 6
  options.insert(options.begin() + ip4_at + 20, {0x01, 0x01, 0x01, 0x01});
  options[ip4_at] = 0x46;
  scaleup::test::set16(options, ip4_at + 2, scaleup::test::be16(options, ip4_at + 2) + 4);
  fix_ipv4_checksum(options, ip4_at);
  out.push_back(options);
  byte_vector tcp = udp4;
  tcp[ip4_at + 9] = 6;
  fix_ipv4_checksum(tcp, ip4_at);
  out.push_back(tcp);
  byte_vector arp = udp4;
  scaleup::test::set16(arp, 12, 0x0806);
  out.push_back(arp);
  byte_vector failover = udp4;
  scaleup::test::set16(failover, ip4_at + 22, w::failover_udp_port);
  out.push_back(failover);
  byte_vector fragment = emitted(w::encap::udp6)[1];  // next header 44: a Fragment header
  fragment[14 + 6] = 44;
  out.push_back(fragment);
  return out;
}

}  // namespace

TEST_CASE("read_frame: its fast path reads what the full reader reads, frame by frame") {
  auto sets = option_sets();
  scaleup::dissect::flow_table flows;  // a capture reader's: SUE found on a flow stays SUE
  w::receive_options bound;
  bound.flows = &flows;
  sets.push_back(bound);
  w::receive_options no_guessing;  // no port named, no guessing
  no_guessing.heuristics = false;
  no_guessing.fcs = w::fcs_mode::absent;
  sets.push_back(no_guessing);
  w::receive_options checked = t::sue_receive_options();
  checked.check_checksums = true;
  sets.push_back(checked);
  std::vector<byte_vector> frames = other_frames();
  for (const w::encap kind : all_encaps) {
    for (const auto& f : emitted(kind)) {
      frames.push_back(f);
      frames.push_back(with_ethernet_fcs(f));
      if (kind == w::encap::afh1_vlan || kind == w::encap::afh1_vlan_shim) {
        frames.push_back(with_service_tags(f, 1));
        frames.push_back(with_service_tags(f, 7));  // eight tags in all: the most read
        frames.push_back(with_service_tags(f, 8));
      }
    }
  }
  reading_tally n;
  for (const auto& frame : frames) {
    for (const auto& o : sets) {
      for (std::size_t k = 0; k <= frame.size(); ++k)
        compare_reading(w::bytes(frame.data(), k), o, n);
      auto changed = frame;
      for (std::size_t i = 0; i < changed.size(); ++i)
        for (const std::uint8_t x : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
          changed[i] ^= x;
          compare_reading(changed, o, n);
          changed[i] ^= x;
        }
    }
  }
  CHECK(n.differ == 0);
  MESSAGE(n.predicted << " of " << n.tried << " frames given to the fast path read by it, of "
                      << n.frames);
  // Most changed or cut frames break a rule (an R-CRC, a length) and are the full reader's.
  CHECK(n.predicted * 10 > n.tried);
}

TEST_CASE("read_frame: what its fast path reads and what it leaves") {
  const auto o = t::sue_receive_options();
  const auto predicted = [](w::bytes f, const w::receive_options& opts) {
    w::received_frame p;
    return ::predicted(f, opts, p);
  };
  // Every encapsulation as emitted, and frames of other protocols.
  for (const w::encap kind : all_encaps) {
    CAPTURE(w::to_string(kind));
    for (const auto& f : emitted(kind)) CHECK(predicted(f, o));
  }
  const auto others = other_frames();
  CHECK(predicted(others[0], o));  // IPv4 options
  CHECK(predicted(others[1], o));  // TCP
  CHECK(predicted(others[2], o));  // ARP
  // The failover exchange's port, on a datagram whose other port is not named as SUE's.
  CHECK(predicted(others[3], o));
  w::receive_options unnamed;
  unnamed.fcs = w::fcs_mode::absent;
  CHECK(!predicted(others[3], unnamed));
  CHECK(!predicted(others[4], o));  // an IPv6 Fragment header
  // A problem of any severity is the full reader's: a bad R-CRC, a warning (checksums checked
  // and wrong).
  auto bad = emitted(w::encap::udp4)[1];
  bad[bad.size() - 1] ^= 1;
  CHECK(!predicted(bad, o));
  CHECK(!w::read_frame(bad, w::link_ethernet, o).ok());
  auto wrong_sum = emitted(w::encap::udp4)[1];
  wrong_sum[ip4_at + 10] ^= 1;
  CHECK(predicted(wrong_sum, o));
  w::receive_options checked = o;
  checked.check_checksums = true;
  CHECK(!predicted(wrong_sum, checked));
  // A flow bound before reads fast; the datagram that binds it is the full reader's.
  scaleup::dissect::flow_table flows;
  w::receive_options guessing;
  guessing.flows = &flows;
  guessing.fcs = w::fcs_mode::absent;
  const auto udp4 = emitted(w::encap::udp4)[1];
  CHECK(!predicted(udp4, guessing));
  CHECK(w::read_frame(udp4, w::link_ethernet, guessing).kind == w::encap::udp4);
  CHECK(predicted(udp4, guessing));
}
