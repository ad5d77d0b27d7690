// Priority-based flow control (R2 3.5.6; IEEE 802.1Qbb, IEEE 802.3 Annex 31D): PFC frames as
// bytes written by hand from Annex 31D, decode errors, pause quanta at link speeds, the sender's
// pause, replacement, resume and expiry, the receiver's XOFF/XON hysteresis and refresh, and the
// two lossless classes that let acknowledgements flow while requests are paused.
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/packer.hpp>
#include <scaleup/transport/pfc.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <vector>

#include "support.hpp"

namespace scaleup::transport {
// Failure messages show the frame, not "{?}".
static std::ostream& operator<<(std::ostream& os, const pfc_pdu& p) {
  os << "{opcode " << p.opcode << ", cev " << unsigned{p.enable} << ", time";
  for (std::size_t i = 0; i < pfc_priorities; ++i) os << ' ' << p.time(i);
  return os << '}';
}
}  // namespace scaleup::transport

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;
namespace pk = scaleup::pack;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::hex;
using w::errc;

struct sender {
  t::pfc_sender s;
  t::pfc_sender_actions frame(const t::pfc_pdu& pdu, std::uint64_t now) {
    auto [n, a] = t::step(s, t::pfc_received(pdu), now);
    s = n;
    return a;
  }
  t::pfc_sender_actions tick(std::uint64_t now) {
    auto [n, a] = t::step(s, t::pfc_sender_tick(), now);
    s = n;
    return a;
  }
};

struct receiver {
  t::pfc_receiver r;
  t::pfc_receiver_actions operator()(const t::pfc_receiver_event& e, std::uint64_t now) {
    auto [n, a] = t::step(r, e, now);
    r = n;
    return a;
  }
};

constexpr t::pfc_pdu pause(std::size_t p, std::uint16_t quanta) {
  return t::pfc_pdu{}.set(p, quanta);
}

// 100 Gb/s with `now` in picoseconds: one quantum is exactly 5.12 ns.
constexpr t::pfc_config ps_100g{.link_mbps = 100'000, .time_unit_ps = 1};

}  // namespace

TEST_CASE("pfc: golden frame bytes (IEEE 802.3 Annex 31D)") {
  // Pause priority 3 for the longest time and release priority 4, in one frame.
  t::pfc_frame f{.src = 0x020000000001, .pdu = t::pfc_pdu{}.set(3, 0xFFFF).set(4, 0)};
  const byte_vector golden = cat({
      {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01},  // DA: MAC Control reserved multicast
      {0x02, 0x00, 0x00, 0x00, 0x00, 0x01},  // SA
      {0x88, 0x08},                          // Ethertype: MAC Control
      {0x01, 0x01},                          // opcode: PFC
      {0x00, 0x18},                          // class-enable vector: e[3] and e[4]
      {0x00, 0x00, 0x00, 0x00, 0x00, 0x00},  // time[0..2]
      {0xFF, 0xFF},                          // time[3]
      {0x00, 0x00},                          // time[4]: XON
      {0x00, 0x00, 0x00, 0x00, 0x00, 0x00},  // time[5..7]
      byte_vector(26, 0x00),                 // padding to 60 bytes
  });
  REQUIRE(golden.size() == 60);
  std::array<std::uint8_t, 64> out{};
  out.fill(0xEE);
  const auto n = t::encode_pfc_frame(f, out);
  REQUIRE(n.ok());
  CHECK(*n == 60);
  CHECK(hex(w::bytes(out.data(), 60)) == hex(golden));
  CHECK(out[60] == 0xEE);

  const auto d = t::decode_pfc_frame(golden);
  REQUIRE(d.ok());
  CHECK(*d == f);
  CHECK(d->pdu.enabled(3));
  CHECK(d->pdu.enabled(4));
  CHECK_FALSE(d->pdu.enabled(5));
  CHECK(d->pdu.time(3) == 0xFFFF);
  CHECK(d->pdu.time(4) == 0);

  // Every priority, each with its own time, so a swapped pair would show.
  t::pfc_frame all{.src = 0x0A0B0C0D0E0F, .pdu = {}};
  for (std::size_t p = 0; p < 8; ++p) all.pdu.set(p, static_cast<std::uint16_t>(0x1111 * (p + 1)));
  const byte_vector golden_all = cat({
      {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x88, 0x08},
      {0x01, 0x01, 0x00, 0xFF},
      {0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44},
      {0x55, 0x55, 0x66, 0x66, 0x77, 0x77, 0x88, 0x88},
      byte_vector(26, 0x00),
  });
  REQUIRE(t::encode_pfc_frame(all, out).ok());
  CHECK(hex(w::bytes(out.data(), 60)) == hex(golden_all));
  const auto da = t::decode_pfc_frame(golden_all);
  REQUIRE(da.ok());
  CHECK(*da == all);

  // The table: 20 bytes after the Ethertype, time[n] at byte 4 + 2n.
  static_assert(w::layout<t::pfc_pdu>::size == 20);
  static_assert(w::field_infos<t::pfc_pdu>[2].filter == "pfc.cev");
  static_assert(w::field_infos<t::pfc_pdu>[3 + 5].bit == 8 * (4 + 2 * 5));
}

TEST_CASE("pfc: decode errors") {
  t::pfc_frame f{.src = 0x020000000001, .pdu = pause(3, 100)};
  std::array<std::uint8_t, 64> good{};
  REQUIRE(t::encode_pfc_frame(f, good).ok());

  // With the FCS (or anything else) behind the padding: still the same frame.
  CHECK(t::decode_pfc_frame(good).ok());
  // Padding is not needed to read it; the PDU is.
  CHECK(t::decode_pfc_frame(w::bytes(good.data(), 34)).ok());
  auto r = t::decode_pfc_frame(w::bytes(good.data(), 33));
  CHECK(r.err.code == errc::truncated);
  CHECK(r.err.offset == 14);
  CHECK(t::decode_pfc_frame(w::bytes(good.data(), 10)).err.code == errc::truncated);

  auto other = good;
  other[13] = 0x00;  // Ethertype 0x8800
  r = t::decode_pfc_frame(other);
  CHECK(r.err.code == errc::bad_value);
  CHECK(r.err.field == "eth.type");

  auto pause_frame = good;
  pause_frame[14] = 0x00;  // opcode 0x0001: 802.3x PAUSE
  r = t::decode_pfc_frame(pause_frame);
  CHECK(r.err.code == errc::unsupported);
  CHECK(r.err.field == "pfc.opcode");

  auto odd = good;
  odd[15] = 0x02;  // opcode 0x0102
  r = t::decode_pfc_frame(odd);
  CHECK(r.err.code == errc::bad_value);
  CHECK(r.err.field == "pfc.opcode");
  CHECK(r.err.offset == 14);

  auto rsv = good;
  rsv[16] = 0x80;  // the reserved octet of the class-enable vector: kept, not rejected
  r = t::decode_pfc_frame(rsv);
  REQUIRE(r.ok());
  CHECK(r->pdu.rsvd == 0x80);

  std::array<std::uint8_t, 59> small{};
  CHECK(t::encode_pfc_frame(f, small).err.code == errc::no_space);
  t::pfc_frame bad_opcode = f;
  bad_opcode.pdu.opcode = t::pause_opcode;
  CHECK(t::encode_pfc_frame(bad_opcode, good).err.code == errc::bad_value);
}

TEST_CASE("pfc: one quantum is 512 bit times at the link speed") {
  static_assert(ps_100g.pause_time(1) == 5'120);  // 5.12 ns
  static_assert(t::pfc_config{.link_mbps = 400'000, .time_unit_ps = 1}.pause_time(1) == 1'280);
  static_assert(t::pfc_config{.link_mbps = 800'000, .time_unit_ps = 1}.pause_time(1) == 640);
  static_assert(t::pfc_config{.link_mbps = 25'000, .time_unit_ps = 1}.pause_time(1) == 20'480);
  // In nanoseconds (the default unit) a pause is rounded up, never cut short.
  constexpr t::pfc_config ns{};
  static_assert(ns.pause_time(0) == 0);
  static_assert(ns.pause_time(1) == 6);
  static_assert(ns.pause_time(1000) == 5'120);
  static_assert(ns.pause_time(0xFFFF) == 335'540);  // 335539.2 ns
  static_assert(t::pfc_config{.link_mbps = 800'000}.pause_time(0xFFFF) == 41'943);
}

TEST_CASE("pfc: both machines run in constant expressions") {
  static_assert([] {
    const auto [s1, a1] = t::step(t::pfc_sender{}, t::pfc_received(pause(3, 1000)), 0);
    return a1.paused == 0x08 && a1.next_expiry == 5'120 && s1.vc_paused(0, 5'119);
  }());
  static_assert([] {
    const auto [r1, a1] = t::step(t::pfc_receiver{}, t::pfc_arrive(4, 64 * 1024), 0);
    return a1.send && a1.frame == pause(4, 0xFFFF) && r1.xoff_sent == 0x10;
  }());
}

TEST_CASE("pfc: pause, expiry, replacement and resume at 100 Gb/s") {
  sender s;
  s.s.cfg = ps_100g;

  // 100 quanta at t = 1000 ps: paused until 1000 + 100 x 5120.
  auto a = s.frame(pause(3, 100), 1'000);
  CHECK(a.paused == 0x08);
  CHECK(a.resumed == 0);
  CHECK(a.next_expiry == 513'000);
  CHECK(s.s.paused(3, 512'999));
  CHECK_FALSE(s.s.paused(3, 513'000));
  CHECK(s.s.vc_paused(0, 2'000));  // VC0 (requests) is on priority 3
  CHECK_FALSE(s.s.vc_paused(1, 2'000));
  a = s.tick(512'999);
  CHECK(a.resumed == 0);
  CHECK(a.paused == 0);
  a = s.tick(513'000);
  CHECK(a.resumed == 0x08);
  CHECK(a.next_expiry == t::pfc_never);
  CHECK(s.s.expiries == 1);

  // A new time replaces the running one, even when it is shorter.
  a = s.frame(pause(4, 1000), 1'000'000);
  CHECK(a.paused == 0x10);
  CHECK(a.next_expiry == 6'120'000);
  a = s.frame(pause(4, 10), 2'000'000);
  CHECK(a.paused == 0);  // already paused: nothing new to report
  CHECK(a.next_expiry == 2'051'200);
  CHECK(s.tick(2'051'199).resumed == 0);
  CHECK(s.tick(2'051'200).resumed == 0x10);
  CHECK(s.s.expiries == 2);

  // Quanta 0 resumes at once.
  s.frame(pause(3, 0xFFFF), 3'000'000);
  CHECK(s.s.paused(3, 3'000'100));
  a = s.frame(pause(3, 0), 3'000'100);
  CHECK(a.resumed == 0x08);
  CHECK_FALSE(s.s.paused(3, 3'000'100));
  CHECK(s.s.resumes == 1);
  CHECK(s.s.expiries == 2);

  // Only enabled priorities are touched: time[4] without e[4] is ignored.
  t::pfc_pdu only3 = pause(3, 10);
  only3.time4 = 500;
  a = s.frame(only3, 4'000'000);
  CHECK(a.paused == 0x08);
  CHECK_FALSE(s.s.paused(4, 4'000'001));

  // Priorities without PFC here are not obeyed, and are reported.
  a = s.frame(pause(0, 500).set(7, 500), 5'000'000);
  CHECK(a.ignored == 0x81);
  CHECK(a.paused == 0);
  CHECK(a.resumed == 0x08);  // priority 3's 10 quanta ran out meanwhile
  CHECK_FALSE(s.s.paused(0, 5'000'001));

  t::pfc_pdu classic{};
  classic.opcode = t::pause_opcode;
  CHECK(s.frame(classic, 6'000'000).err.code == errc::unsupported);
  CHECK(s.s.pauses == 5);
}

TEST_CASE("pfc: XOFF/XON hysteresis and pause refresh") {
  receiver r;
  r.r.cfg.capacity[3] = 10'000;
  r.r.cfg.xoff[3] = 6'000;
  r.r.cfg.xon[3] = 3'000;
  REQUIRE(!r.r.cfg.check());
  const std::uint64_t refresh = r.r.cfg.refresh();
  CHECK(refresh == 335'540 / 2);  // 100 Gb/s, nanoseconds

  for (int i = 0; i < 3; ++i) CHECK_FALSE(r(t::pfc_arrive(3, 1'500), 10).send);
  auto a = r(t::pfc_arrive(3, 1'500), 20);  // 6000: XOFF
  REQUIRE(a.send);
  CHECK(a.frame == pause(3, 0xFFFF));
  CHECK(a.next_refresh == 20 + refresh);
  CHECK_FALSE(r(t::pfc_arrive(3, 1'500), 30).send);  // 7500: already paused

  // Between the thresholds nothing is said, going down...
  CHECK_FALSE(r(t::pfc_drain(3, 1'500), 40).send);  // 6000
  CHECK_FALSE(r(t::pfc_drain(3, 1'500), 50).send);  // 4500
  CHECK_FALSE(r(t::pfc_drain(3, 1'000), 60).send);  // 3500
  a = r(t::pfc_drain(3, 500), 70);                  // 3000: XON
  REQUIRE(a.send);
  CHECK(a.frame == pause(3, 0));
  CHECK(a.frame.enable == 0x08);
  CHECK(a.next_refresh == t::pfc_never);
  // ...and going up.
  CHECK_FALSE(r(t::pfc_arrive(3, 2'000), 80).send);  // 5000
  CHECK_FALSE(r(t::pfc_drain(3, 1'000), 90).send);   // 4000
  a = r(t::pfc_arrive(3, 2'000), 100);               // 6000: XOFF again
  CHECK(a.frame == pause(3, 0xFFFF));

  // A running pause is sent again before the peer's timer runs out.
  CHECK_FALSE(r(t::pfc_receiver_tick(), 100 + refresh - 1).send);
  a = r(t::pfc_receiver_tick(), 100 + refresh);
  REQUIRE(a.send);
  CHECK(a.frame == pause(3, 0xFFFF));
  CHECK(a.next_refresh == 100 + 2 * refresh);
  CHECK(r.r.pause_frames == 4);

  // Headroom exceeded: dropped, and said so.
  a = r(t::pfc_arrive(3, 4'001), 200);
  CHECK(a.dropped);
  CHECK(a.err.code == errc::no_space);
  CHECK(r.r.drops == 1);
  CHECK(r(t::pfc_drain(3, 7'000), 210).err.code == errc::bad_value);
  CHECK(r(t::pfc_arrive(8, 1), 220).err.code == errc::value_too_big);

  // A lossy priority never pauses anyone; it drops when full.
  r.r.cfg.capacity[0] = 100;
  CHECK_FALSE(r(t::pfc_arrive(0, 100), 300).send);
  CHECK(r(t::pfc_arrive(0, 1), 310).dropped);
}

TEST_CASE("pfc: changes of several priorities share one frame") {
  receiver r;
  r.r.cfg.capacity[2] = r.r.cfg.capacity[5] = 1'000;
  r.r.cfg.xoff[2] = r.r.cfg.xoff[5] = 500;
  r.r.cfg.xon[2] = r.r.cfg.xon[5] = 100;
  r.r.cfg.pause_quanta = 1'000;  // 5120 ns at 100 Gb/s
  REQUIRE(r.r.cfg.refresh() == 2'560);

  CHECK(r(t::pfc_arrive(2, 600), 0).frame == pause(2, 1'000));
  CHECK(r(t::pfc_arrive(5, 600), 1'000).frame == pause(5, 1'000));
  CHECK_FALSE(r(t::pfc_receiver_tick(), 2'559).send);
  // Priority 2's refresh is due: priority 5's, not yet due, rides along.
  auto a = r(t::pfc_receiver_tick(), 2'560);
  CHECK(a.frame == pause(2, 1'000).set(5, 1'000));
  CHECK(a.next_refresh == 5'120);
  // Priority 5 falls to XON just as both refreshes are due: one frame says all of it.
  a = r(t::pfc_drain(5, 550), 5'120);
  CHECK(a.frame == pause(2, 1'000).set(5, 0));
  CHECK(r.r.xoff_sent == 0x04);
  CHECK(r.r.pause_frames == 4);
}

TEST_CASE("pfc: the default map keeps requests and acknowledgements apart") {
  constexpr t::pfc_config c{};
  static_assert(c.vc_priority[0] == 3 && c.vc_priority[1] == 4);
  static_assert(c.ack_priority == 4);
  static_assert(c.is_lossless(3) && c.is_lossless(4));
  static_assert(c.check().code == errc::none);
  static_assert(t::pfc_receiver_config{}.check().code == errc::none);

  t::pfc_config same = c;
  same.ack_priority = 3;
  CHECK(same.check().code == errc::bad_value);
  t::pfc_config lossy = c;
  lossy.lossless = 0x08;
  CHECK(lossy.check().code == errc::bad_value);
  CHECK(lossy.check().value == 4);
  t::pfc_config far = c;
  far.vc_priority[2] = 8;
  CHECK(far.check().code == errc::value_too_big);
  t::pfc_receiver_config inverted{};
  inverted.xon[4] = inverted.xoff[4];
  CHECK(inverted.check().code == errc::bad_value);
  CHECK(inverted.check().value == 4);
}

TEST_CASE("pfc: requests are paused while acknowledgements flow") {
  // The peer's receiver: its XPU is slow to take requests (priority 3) and quick with
  // responses and acknowledgements (priority 4).
  receiver peer;
  sender us;
  std::uint64_t now = 0;
  const auto deliver = [&](const t::pfc_receiver_actions& a) {
    if (!a.send) return;
    std::array<std::uint8_t, 60> frame{};
    REQUIRE(t::encode_pfc_frame({.src = 0x020000000002, .pdu = a.frame}, frame).ok());
    const auto d = t::decode_pfc_frame(frame);
    REQUIRE(d.ok());
    us.frame(d->pdu, now);
  };

  const std::uint32_t req_prio = us.s.cfg.vc_priority[0];
  const std::uint32_t rsp_prio = us.s.cfg.vc_priority[1];
  for (int i = 0; i < 64; ++i) {
    now += 10;
    deliver(peer(t::pfc_arrive(static_cast<std::uint8_t>(req_prio), 1'024), now));
    deliver(peer(t::pfc_arrive(static_cast<std::uint8_t>(rsp_prio), 1'024), now));
    deliver(peer(t::pfc_drain(static_cast<std::uint8_t>(rsp_prio), 1'024), now));
  }
  CHECK(peer.r.xoff_sent == 0x08);
  CHECK(us.s.vc_paused(0, now));
  CHECK_FALSE(us.s.vc_paused(1, now));
  CHECK_FALSE(us.s.ack_paused(now));

  // The packer behind PFC: responses (VC1) go, requests (VC0) wait, nothing is lost.
  auto p = std::make_unique<pk::packer<2, 4, 64>>(pk::default_profile);
  const std::array<std::uint8_t, 12> read{pk::code::read, 63, 0, 1, 0, 0, 0, 0, 0, 0, 0x10, 0};
  const std::array<std::uint8_t, 6> wr_rsp{pk::code::write_response, 0, 0, 1, 0, 0};
  std::set<std::uint64_t> pushed, seen;
  std::uint64_t cookie = 0;
  for (std::uint16_t d = 0; d < 2; ++d)
    for (int i = 0; i < 4; ++i) {
      REQUIRE(!p->push({d, 0, w::bytes(read), {}, true, ++cookie}));
      pushed.insert(cookie);
      REQUIRE(!p->push({d, 1, w::bytes(wr_rsp), {}, true, ++cookie}));
      pushed.insert(cookie);
    }
  std::vector<std::uint8_t> out(p->settings().limit);
  std::array<std::uint64_t, 1> cookies{};
  std::array<int, 4> per_vc{};
  const auto serve = [&] {
    const auto r = p->next(out, t::pfc_eligibility{&us.s, now}, cookies);
    REQUIRE(r.ok());
    if (r->commands == 0) return false;
    CHECK(seen.insert(cookies[0]).second);
    ++per_vc[r->vc];
    return true;
  };
  while (serve()) {
  }
  CHECK(per_vc[1] == 8);
  CHECK(per_vc[0] == 0);

  // The XPU catches up: below XON the peer releases requests.
  for (int i = 0; i < 32; ++i) {
    now += 10;
    deliver(peer(t::pfc_drain(static_cast<std::uint8_t>(req_prio), 1'024), now));
  }
  CHECK(peer.r.xoff_sent == 0);
  CHECK_FALSE(us.s.vc_paused(0, now));
  while (serve()) {
  }
  CHECK(per_vc[0] == 8);
  CHECK(seen == pushed);
}
