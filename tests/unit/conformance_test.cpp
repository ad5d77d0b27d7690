// The conformance rules (include/scaleup/dissect/conformance.hpp): for every rule a capture
// written here, frame by frame, that breaks it exactly once, caught at that frame with no
// other rule firing; and conformant captures that break nothing.
#include <scaleup/dissect/conformance.hpp>
#include <scaleup/dissect/engine.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/transport/pfc.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
namespace p = scaleup::pack;
using d::rule;
using scaleup::test::byte_vector;

using scaleup::test::op_ack;
using scaleup::test::op_nack;
using scaleup::test::op_none;

// A capture written by hand: XPU 1 sends to XPU 2 on VC 0 (AFH Gen 2 compressed, which names
// both XPUs); XPU 2 answers on the same VC with stand-alone ACKs and NACKs.
struct judged_capture {
  std::unique_ptr<d::large_tree> tree = std::make_unique<d::large_tree>();
  d::conformance c;
  std::uint64_t frame = 0;
  w::encap kind = w::encap::afh2c;

  explicit judged_capture(d::check_config cfg = {}) : c(std::move(cfg)) {}

  static byte_vector command() {
    const auto c = w::to_bytes(p::cmd_read{.dlen = 63, .tag = 2});
    return byte_vector(c.value.begin(), c.value.end());
  }
  static byte_vector build(const w::frame_params& fp, const w::reliability_header& rh,
                           const byte_vector& payload) {
    byte_vector out(payload.size() + 256);
    const auto n = w::emit_sue_frame(fp, rh, payload, out);
    REQUIRE(n);
    out.resize(n.value);
    return out;
  }
  static w::frame_params params(std::uint32_t src, std::uint32_t dst, std::uint8_t tc = 0,
                                w::encap e = w::encap::afh2c) {
    w::frame_params fp;
    fp.kind = e;
    fp.src_xpu = src;
    fp.dst_xpu = dst;
    fp.tc = tc;
    return fp;
  }
  void add(const byte_vector& f) { add_at(f, static_cast<std::int64_t>(frame + 1) * 1000); }
  void add_at(const byte_vector& f, std::int64_t time_ns) {
    d::dissect_frame(*tree, w::bytes(f.data(), f.size()), d::link_ethernet);
    ++frame;
    c.add(*tree, w::bytes(f.data(), f.size()), frame, time_ns);
  }
  byte_vector pdu_frame(std::uint16_t psn, std::uint8_t tc = 0) const {
    return build(params(1, 2, tc, kind), {.op = op_none, .xpuid = 1, .npsn = psn}, command());
  }
  void pdu(std::uint16_t psn) { add(pdu_frame(psn)); }
  void ack(std::uint16_t apsn, std::uint8_t op = op_ack) {
    add(build(params(2, 1, 0, kind), {.op = op, .xpuid = 2, .npsn = 7, .apsn = apsn}, {}));
  }
  void nack(std::uint16_t apsn) { ack(apsn, op_nack); }
  // An 802.1Qbb PFC frame from `station`: `quanta` for each priority in `priorities`.
  void pfc(std::uint64_t station, std::initializer_list<std::uint8_t> priorities,
           std::uint16_t quanta) {
    add(pfc_frame(station, priorities, quanta));
  }
  static byte_vector pfc_frame(std::uint64_t station,
                               std::initializer_list<std::uint8_t> priorities,
                               std::uint16_t quanta) {
    scaleup::transport::pfc_frame f{.src = station};
    for (const auto p : priorities) f.pdu.set(p, quanta);
    byte_vector out(scaleup::transport::pfc_frame_size);
    REQUIRE(scaleup::transport::encode_pfc_frame(f, out));
    return out;
  }
};

// Every rule's tally: `r` violated once, at `at`; every other rule not at all.
void only(judged_capture& cap, rule r, std::uint64_t at) {
  cap.c.finish();
  for (const auto& info : d::rules) {
    CAPTURE(info.id);
    const auto& t = cap.c.tally(info.which);
    if (info.which == r) {
      CHECK(t.violations == 1);
      REQUIRE(!t.first.empty());
      CHECK(t.first[0].frame == at);
      CHECK(t.first[0].which == r);
      CHECK(!t.first[0].expected.empty());
      CHECK(!t.first[0].seen.empty());
    } else {
      CHECK(t.violations == 0);
    }
  }
  CHECK(cap.c.violations() == 1);
  CHECK(!cap.c.conformant());
}

void none(judged_capture& cap) {
  cap.c.finish();
  for (const auto& info : d::rules) {
    CAPTURE(info.id);
    CHECK(cap.c.tally(info.which).violations == 0);
  }
  CHECK(cap.c.conformant());
}

}  // namespace

TEST_CASE("conformance: the rule table is the contract") {
  // Ids are unique, each names its seed and says what it requires.
  for (std::size_t i = 0; i < d::rules.size(); ++i) {
    CAPTURE(d::rules[i].id);
    CHECK(!d::rules[i].seed.empty());
    CHECK(!d::rules[i].sentence.empty());
    CHECK(!d::rules[i].cannot.empty());
    CHECK(d::rule_by_id(d::rules[i].id) == d::rules[i].which);
    for (std::size_t j = 0; j < i; ++j) CHECK(d::rules[j].id != d::rules[i].id);
  }
  CHECK(d::rule_by_id("psn.next") == rule::psn_next);
  CHECK(!d::rule_by_id("psn"));
  CHECK(d::rule_info_of(rule::llr_replay).id == "llr.replay");
}

TEST_CASE("conformance: go-back-N with a NACK, a timeout and duplicates is conformant") {
  judged_capture cap;
  for (std::uint16_t s = 10; s < 14; ++s) cap.pdu(s);  // 10..13
  cap.ack(11);
  cap.nack(12);                                        // 12 lost after the capture point
  for (std::uint16_t s = 12; s < 14; ++s) cap.pdu(s);  // go back to 12, in order
  cap.pdu(14);
  cap.ack(14);
  cap.pdu(15);
  cap.pdu(16);
  cap.pdu(15);  // a timeout: back to the oldest unacknowledged
  cap.pdu(16);
  cap.ack(16);
  cap.ack(16);  // a re-ACK of a duplicate
  cap.pdu(14);  // an ACK the sender had not yet received: already acknowledged, resent
  cap.pdu(15);
  cap.pdu(16);
  cap.pdu(17);
  none(cap);
  CHECK(cap.c.tally(rule::psn_next).examined == 7);  // 11 to 17, each new once
  CHECK(cap.c.tally(rule::gbn_resend).examined >= 7);
  CHECK(cap.c.tally(rule::nack_once).examined == 1);
  CHECK(cap.c.tally(rule::rcrc_good).examined == cap.frame);
  CHECK(cap.c.pdus() == cap.frame);
}

TEST_CASE("conformance: PSNs wrap around 65535 without a violation") {
  judged_capture cap;
  for (std::uint32_t s = 65533; s < 65540; ++s) cap.pdu(static_cast<std::uint16_t>(s));
  cap.ack(2);
  none(cap);
}

TEST_CASE("conformance: psn.next, a skipped PSN") {
  judged_capture cap;
  cap.pdu(1);
  cap.pdu(2);
  cap.pdu(4);
  only(cap, rule::psn_next, 3);
  CHECK(cap.c.tally(rule::psn_next).first[0].expected == "npsn 3 sent");
  CHECK(cap.c.tally(rule::psn_next).first[0].seen == "npsn 3 never sent");
}

TEST_CASE("conformance: psn.next keeps the first skips by frame, across connections") {
  // XPU 3's connection skips at frame 2, XPU 1's (the lower key) at frame 4: with one kept,
  // the one kept is frame 2's, whatever order the connections are held in.
  d::check_config cfg;
  cfg.keep = 1;
  judged_capture cap(cfg);
  const auto from = [&](std::uint32_t xpu, std::uint16_t psn) {
    return judged_capture::build(
        judged_capture::params(xpu, 2),
        {.op = op_none, .xpuid = static_cast<std::uint16_t>(xpu), .npsn = psn},
        judged_capture::command());
  };
  cap.add(from(3, 1));
  cap.add(from(3, 3));  // frame 2: 2 skipped
  cap.add(from(1, 1));
  cap.add(from(1, 3));  // frame 4: 2 skipped
  cap.c.finish();
  const auto& t = cap.c.tally(rule::psn_next);
  CHECK(t.violations == 2);
  REQUIRE(t.first.size() == 1);
  CHECK(t.first[0].frame == 2);
}

TEST_CASE("conformance: psn.next, PSNs the capture missed are no skip once they show up") {
  // A capture behind a lossy link: 3 and 4 missed, then resent (a NACK of 3, go back).
  judged_capture resent;
  for (const std::uint16_t s : {1, 2, 5}) resent.pdu(s);
  resent.nack(3);
  for (const std::uint16_t s : {3, 4, 5}) resent.pdu(s);
  none(resent);
  // ...or acknowledged: the receiver got them.
  judged_capture acked;
  for (const std::uint16_t s : {1, 2, 5}) acked.pdu(s);
  acked.ack(5);
  none(acked);
  // Half shown: the other half was skipped.
  judged_capture half;
  for (const std::uint16_t s : {1, 2, 6}) half.pdu(s);
  half.ack(3);
  only(half, rule::psn_next, 3);
  CHECK(half.c.tally(rule::psn_next).first[0].seen == "npsn 4 to 5 never sent");
}

TEST_CASE("conformance: gbn.resend, a resend that skips a PSN or stops short") {
  SUBCASE("skips") {
    judged_capture cap;
    for (std::uint16_t s = 1; s <= 4; ++s) cap.pdu(s);
    cap.nack(2);
    cap.pdu(2);
    cap.pdu(4);  // 3 skipped
    only(cap, rule::gbn_resend, 7);
  }
  SUBCASE("selective repeat: goes back to a PSN nobody NACKed, past the oldest unacknowledged") {
    judged_capture cap;
    for (std::uint16_t s = 1; s <= 4; ++s) cap.pdu(s);
    cap.ack(1);
    cap.pdu(3);
    only(cap, rule::gbn_resend, 6);
  }
  SUBCASE("stops short: a new PSN before the resend reached the highest sent") {
    judged_capture cap;
    for (std::uint16_t s = 1; s <= 4; ++s) cap.pdu(s);
    cap.nack(2);
    cap.pdu(2);
    cap.pdu(5);
    only(cap, rule::gbn_resend, 7);
  }
}

TEST_CASE("conformance: nack.once, a gap NACKed twice") {
  judged_capture cap;
  for (std::uint16_t s = 1; s <= 4; ++s) cap.pdu(s);
  cap.nack(2);
  cap.nack(2);
  only(cap, rule::nack_once, 6);
  // Once the PSN was sent again, a new NACK of it is a new gap.
  judged_capture again;
  for (std::uint16_t s = 1; s <= 4; ++s) again.pdu(s);
  again.nack(2);
  again.pdu(2);
  again.nack(2);
  none(again);
}

TEST_CASE("conformance: ack.past_gap, an ACK past a NACKed PSN") {
  // Frames 1 us apart: with a bound of 8 us on the way to the receiver, PSN 2's copy of frame 2
  // may still arrive after the NACK of frame 5, so the ACK is not judged...
  judged_capture late;
  for (std::uint16_t s = 1; s <= 4; ++s) late.pdu(s);
  late.nack(2);
  late.ack(3);
  none(late);
  // ...with a bound of 2.5 us it cannot: the receiver ACKed past its gap.
  judged_capture cap(d::check_config{.rto_ns = 2500});
  for (std::uint16_t s = 1; s <= 4; ++s) cap.pdu(s);
  cap.nack(2);
  cap.ack(3);
  only(cap, rule::ack_past_gap, 6);
  CHECK(cap.c.tally(rule::ack_past_gap).first[0].seen == "ACK apsn 3");
}

TEST_CASE("conformance: ack.monotonic, an apsn that moves backwards") {
  judged_capture cap;
  for (std::uint16_t s = 1; s <= 4; ++s) cap.pdu(s);
  cap.ack(3);
  cap.ack(2);
  only(cap, rule::ack_monotonic, 6);
  judged_capture nack;  // a NACK of 2 says 1 was the last delivered: behind an ACK of 3
  for (std::uint16_t s = 1; s <= 4; ++s) nack.pdu(s);
  nack.ack(3);
  nack.nack(2);
  only(nack, rule::ack_monotonic, 6);
}

TEST_CASE("conformance: ack.unsent, an ACK of a PSN never sent") {
  judged_capture cap;
  cap.ack(0);  // before any PDU: the capture may have started late
  CHECK(cap.c.tally(rule::ack_unsent).not_examinable == 1);
  cap.pdu(1);
  cap.pdu(2);
  cap.ack(3);
  only(cap, rule::ack_unsent, 4);
}

TEST_CASE("conformance: the transport rules need the port when a fabric has several") {
  judged_capture cap(d::check_config{.ports = 2});
  cap.pdu(1);
  cap.pdu(5);
  none(cap);
  CHECK(cap.c.tally(rule::psn_next).not_examinable == 2);
  CHECK(cap.c.tally(rule::psn_next).examined == 0);
}

TEST_CASE("conformance: a per-connection violation on one port may be ports that mix") {
  judged_capture one;
  one.pdu(1);
  one.pdu(2);
  one.ack(2);
  CHECK(!one.c.ports_may_mix());
  one.ack(1);  // backwards: a device's fault, or a second port's ACKs
  only(one, rule::ack_monotonic, 4);
  CHECK(one.c.ports_may_mix());
  // A violation of another kind says nothing of ports; nor does a capture that names them.
  judged_capture vc(d::check_config{.vcs = 1});
  vc.add(judged_capture::build(judged_capture::params(1, 2),
                               {.op = op_none, .xpuid = 1, .npsn = 1, .vc = 1},
                               judged_capture::command()));
  only(vc, rule::vc_range, 1);
  CHECK(!vc.c.ports_may_mix());
  judged_capture named(d::check_config{.port_known = true});
  named.pdu(1);
  named.ack(1);
  named.ack(0);
  only(named, rule::ack_monotonic, 3);
  CHECK(!named.c.ports_may_mix());
}

TEST_CASE("conformance: pdu.one_dst, a group address") {
  judged_capture cap;
  auto fp = judged_capture::params(1, 2);
  fp.multicast = true;
  cap.add(
      judged_capture::build(fp, {.op = op_none, .xpuid = 1, .npsn = 1}, judged_capture::command()));
  only(cap, rule::pdu_one_dst, 1);
}

TEST_CASE("conformance: pdu.one_dst, an AFH Gen 1 address and shim that name two XPUs") {
  judged_capture cap;
  auto fp = judged_capture::params(1, 2);
  fp.kind = w::encap::afh1_shim;
  cap.add(
      judged_capture::build(fp, {.op = op_none, .xpuid = 1, .npsn = 1}, judged_capture::command()));
  byte_vector f =
      judged_capture::build(fp, {.op = op_none, .xpuid = 1, .npsn = 2}, judged_capture::command());
  f[5] ^= 0x01;  // the destination XPU in the DA's last two bytes: 3, where the shim says 2
  cap.add(f);
  only(cap, rule::pdu_one_dst, 2);
  CHECK(scaleup::test::contains(cap.c.tally(rule::pdu_one_dst).first[0].seen, "XPU 3"));
}

TEST_CASE("conformance: pdu.one_vc, a data PDU on another traffic class") {
  judged_capture cap;
  cap.add(cap.pdu_frame(1, 3));
  cap.add(cap.pdu_frame(2, 3));
  cap.add(cap.pdu_frame(3, 4));
  only(cap, rule::pdu_one_vc, 3);
}

TEST_CASE("conformance: pdu.size, vc.range, lite.size: the configured limits") {
  byte_vector big;
  for (int i = 0; i < 20; ++i) {
    const auto c = judged_capture::command();
    big.insert(big.end(), c.begin(), c.end());
  }
  SUBCASE("pdu.size") {
    judged_capture cap(d::check_config{.max_pdu = static_cast<std::uint32_t>(big.size() - 1)});
    cap.add(judged_capture::build(judged_capture::params(1, 2),
                                  {.op = op_none, .xpuid = 1, .npsn = 1}, big));
    only(cap, rule::pdu_size, 1);
    judged_capture fits(d::check_config{.max_pdu = static_cast<std::uint32_t>(big.size())});
    fits.add(judged_capture::build(judged_capture::params(1, 2),
                                   {.op = op_none, .xpuid = 1, .npsn = 1}, big));
    none(fits);
  }
  SUBCASE("vc.range") {
    judged_capture cap(d::check_config{.vcs = 2});
    cap.add(judged_capture::build(judged_capture::params(1, 2),
                                  {.op = op_none, .xpuid = 1, .npsn = 1, .vc = 1},
                                  judged_capture::command()));
    cap.add(judged_capture::build(judged_capture::params(1, 2),
                                  {.op = op_none, .xpuid = 1, .npsn = 1, .vc = 2},
                                  judged_capture::command()));
    only(cap, rule::vc_range, 2);
  }
  SUBCASE("lite.size") {
    judged_capture cap(d::check_config{.max_lite = static_cast<std::uint32_t>(big.size() - 1)});
    w::frame_params fp = judged_capture::params(1, 2);
    fp.kind = w::encap::lite;
    byte_vector out(big.size() + 64);
    const auto n = w::emit_frame(fp, big, out);
    REQUIRE(n);
    out.resize(n.value);
    cap.add(out);
    only(cap, rule::lite_size, 1);
    CHECK(cap.c.lite_frames() == 1);
  }
}

TEST_CASE("conformance: lite.no_rh, a SUE Lite frame that carries a PDU") {
  judged_capture cap;
  w::frame_params fp = judged_capture::params(1, 2);
  fp.kind = w::encap::lite;
  byte_vector pdu(64);
  const auto n =
      w::emit_pdu({.op = op_none, .xpuid = 1, .npsn = 1}, judged_capture::command(), pdu);
  REQUIRE(n);
  pdu.resize(n.value);
  byte_vector out(128);
  const auto f = w::emit_frame(fp, pdu, out);
  REQUIRE(f);
  out.resize(f.value);
  cap.add(out);
  // The RH's bytes are no commands of the profile either, but lite.no_rh is the rule this
  // frame breaks: its payload is not judged as commands.
  only(cap, rule::lite_no_rh, 1);
  // A Lite frame of commands is fine.
  judged_capture ok;
  byte_vector out2(128);
  const auto g = w::emit_frame(fp, judged_capture::command(), out2);
  REQUIRE(g);
  out2.resize(g.value);
  ok.add(out2);
  none(ok);
  CHECK(ok.c.tally(rule::lite_no_rh).examined == 1);
}

TEST_CASE("conformance: rcrc.good, rh.version, reserved.zero: bytes of the PDU") {
  // AFH Gen 2 compressed: 6 bytes, its Ethertype 2, then the RH.
  constexpr std::size_t rh = 8;
  SUBCASE("rcrc.good") {
    // Four commands: a frame above the 60-byte minimum, so the R-CRC is its last four bytes.
    byte_vector payload;
    for (int i = 0; i < 4; ++i) {
      const auto c = judged_capture::command();
      payload.insert(payload.end(), c.begin(), c.end());
    }
    byte_vector f = judged_capture::build(judged_capture::params(1, 2),
                                          {.op = op_none, .xpuid = 1, .npsn = 1}, payload);
    REQUIRE(f.size() > w::ethernet_min_frame);
    f[rh + 8 + 6] ^= 0x01;  // a bit of the first command's address: the R-CRC no longer matches
    judged_capture cap;
    cap.add(f);
    only(cap, rule::rcrc_good, 1);
  }
  SUBCASE("rh.version and reserved.zero, each with a good R-CRC") {
    judged_capture cap;
    cap.add(judged_capture::build(judged_capture::params(1, 2),
                                  {.ver = 1, .op = op_none, .xpuid = 1, .npsn = 1},
                                  judged_capture::command()));
    only(cap, rule::rh_version, 1);
    judged_capture res;
    res.add(judged_capture::build(judged_capture::params(1, 2),
                                  {.op = op_none, .xpuid = 1, .npsn = 1, .rsvd = 3},
                                  judged_capture::command()));
    only(res, rule::reserved_zero, 1);
    CHECK(scaleup::test::contains(res.c.tally(rule::reserved_zero).first[0].seen, "rsvd"));
  }
}

TEST_CASE("conformance: pad.after_rcrc, padding before the R-CRC or past the minimum") {
  SUBCASE("zeros between the commands and the R-CRC") {
    judged_capture cap;
    byte_vector payload = judged_capture::command();
    payload.resize(payload.size() + 8, 0);
    cap.add(judged_capture::build(judged_capture::params(1, 2),
                                  {.op = op_none, .xpuid = 1, .npsn = 1}, payload));
    only(cap, rule::pad_after_rcrc, 1);
  }
  SUBCASE("zeros after the R-CRC in a frame above 60 bytes") {
    judged_capture cap;
    auto fp = judged_capture::params(1, 2);
    fp.pad = false;
    byte_vector f = judged_capture::build(fp, {.op = op_none, .xpuid = 1, .npsn = 1},
                                          judged_capture::command());
    REQUIRE(f.size() < w::ethernet_min_frame);
    f.resize(w::ethernet_min_frame + 8, 0);
    cap.add(f);
    only(cap, rule::pad_after_rcrc, 1);
  }
  SUBCASE("zeros after the R-CRC up to the minimum are right") {
    judged_capture cap;
    cap.ack(0);  // an RH-only PDU padded to 60 bytes
    none(cap);
    CHECK(cap.c.tally(rule::pad_after_rcrc).examined == 1);
  }
}

TEST_CASE("conformance: partition.allowed, an ACK of a PDU its partition should have dropped") {
  d::partition_policy table;
  table.listed.set(1);
  table.allowed->allow(1, 5);
  judged_capture cap(d::check_config{.partitions = &table});
  cap.add(judged_capture::build(judged_capture::params(1, 2),
                                {.op = op_none, .xpuid = 1, .npsn = 1, .partition = 5},
                                judged_capture::command()));
  cap.ack(1);
  cap.add(judged_capture::build(judged_capture::params(1, 2),
                                {.op = op_none, .xpuid = 1, .npsn = 2, .partition = 6},
                                judged_capture::command()));
  cap.ack(2);
  only(cap, rule::partition_allowed, 4);
  CHECK(cap.c.tally(rule::partition_allowed).examined == 2);
  // Without a table: nothing to examine.
  judged_capture none_given;
  none_given.pdu(1);
  none_given.ack(1);
  CHECK(none_given.c.tally(rule::partition_allowed).examined == 0);
}

TEST_CASE("conformance: cmd.profile, a payload the profile cannot parse") {
  judged_capture cap;
  cap.add(judged_capture::build(judged_capture::params(1, 2),
                                {.op = op_none, .xpuid = 1, .npsn = 1},
                                byte_vector{0xEE, 1, 2, 3, 4, 5}));
  only(cap, rule::cmd_profile, 1);
  judged_capture opaque(d::check_config{.profile = false});
  opaque.add(judged_capture::build(judged_capture::params(1, 2),
                                   {.op = op_none, .xpuid = 1, .npsn = 1},
                                   judged_capture::command()));
  CHECK(opaque.c.tally(rule::cmd_profile).not_examinable == 1);
}

// Frames are 1000 ns apart (judged_capture::add). At 100 Gb/s a quantum (512 bit times) is 5.12 ns:
// 1000 quanta pause for 5120 ns.
TEST_CASE("conformance: pfc.paused, a frame of a paused priority while the pause holds") {
  constexpr std::uint64_t station = 0x02AA00000002;  // the receiver's port: it pauses
  d::check_config cfg;
  cfg.pfc_reaction_ns = 500;
  judged_capture cap(cfg);
  cap.kind = w::encap::afh1;  // untagged, no IP: VC0's priority through the PFC map, 3
  cap.pdu(1);
  cap.pfc(station, {3}, 1000);  // frame 2 at 2000 ns: priority 3 paused from 2500 to 7620
  cap.pdu(2);                   // frame 3 at 3000 ns: inside the pause
  cap.ack(2);                   // a stand-alone ACK rides priority 4: not paused
  cap.pfc(station, {3}, 0);     // frame 5: XON, the pause ends at once
  cap.pdu(3);
  cap.ack(3);
  only(cap, rule::pfc_paused, 3);
  const auto& t = cap.c.tally(rule::pfc_paused);
  CHECK(t.examined == 4);  // the frames after the first PFC frame
  CHECK(t.first[0].expected ==
        "no frame of priority 3 from 500 to 5620 ns after frame 2 (PFC from 02:aa:00:00:00:02: "
        "1000 quanta at 100000 Mb/s)");
  CHECK(t.first[0].seen == "a frame of priority 3 from 42:53:55:45:00:01 1000 ns after it");
}

TEST_CASE(
    "conformance: pfc.paused, the reaction time, the pauser's own frames, a pause that ran out") {
  d::check_config cfg;
  cfg.pfc_reaction_ns = 1500;
  judged_capture cap(cfg);
  cap.kind = w::encap::afh1_vlan;  // the VLAN PCP is the priority: the tc here
  cap.pdu(1);
  // XPU 1's own pause: its frames are not judged by it, XPU 2's would be.
  cap.pfc(0x425355450001, {0}, 65535);  // XPU 1's AFH Gen 1 address: "BSUE", then its id
  cap.pfc(0x02AA00000002, {0}, 100);    // frame 3 at 3000 ns: from 4500 to 5012
  cap.pdu(2);                           // 4000 ns: within the reaction time
  cap.pdu(3);                           // 5000 ns: paused
  cap.pdu(4);                           // 6000 ns: the pause ran out
  only(cap, rule::pfc_paused, 5);
  // A refresh before it ran out keeps the pause from its start; another priority is free.
  judged_capture more(cfg);
  more.kind = w::encap::afh1_vlan;
  more.pfc(0x02AA00000002, {1}, 200);  // frame 1 at 1000 ns: from 2500 to 3524
  more.pfc(0x02AA00000002, {1}, 200);  // frame 2 at 2000 ns: to 4524, still from 2500
  more.pdu(2);                         // 3000 ns, priority 0: free
  // 4000 ns on priority 1 (another connection, 3 to 2: one class per connection): paused only
  // because of the refresh.
  more.add(judged_capture::build(judged_capture::params(3, 2, 1, more.kind),
                                 {.op = op_none, .xpuid = 3, .npsn = 1},
                                 judged_capture::command()));
  only(more, rule::pfc_paused, 4);
}

TEST_CASE("conformance: --rules selects, and the rules without a wire format are never examined") {
  d::check_config cfg;
  cfg.selected.reset();
  cfg.selected.set(static_cast<std::size_t>(rule::ack_unsent));
  judged_capture cap(cfg);
  cap.pdu(1);
  cap.pdu(3);  // psn.next, not selected
  cap.ack(4);
  only(cap, rule::ack_unsent, 3);
  CHECK(cap.c.tally(rule::psn_next).examined == 0);
  judged_capture all;
  all.pdu(1);
  for (const rule r : {rule::cbfc_credit, rule::llr_replay}) {
    CHECK(!all.c.selected(r));
    CHECK(all.c.tally(r).examined == 0);
  }
}

TEST_CASE("conformance: per-frame violations for the plugin, and a second pass changes nothing") {
  judged_capture cap(d::check_config{.per_frame = true});
  cap.pdu(1);
  cap.pdu(3);
  cap.ack(7);  // an ACK of a PSN never sent: judged at once
  REQUIRE(cap.c.of_frame(3).size() == 1);
  CHECK(cap.c.of_frame(3)[0].which == rule::ack_unsent);
  CHECK(cap.c.of_frame(1).empty());
  CHECK(cap.c.of_frame(2).empty());  // the skip of 2 is judged when the first pass is over
  // Frame 2 again (Wireshark's second pass): the first pass is over, nothing judged twice.
  const byte_vector f = cap.pdu_frame(3);
  d::dissect_frame(*cap.tree, w::bytes(f.data(), f.size()), d::link_ethernet);
  cap.c.add(*cap.tree, w::bytes(f.data(), f.size()), 2, 2000);
  REQUIRE(cap.c.of_frame(2).size() == 1);
  CHECK(cap.c.of_frame(2)[0].which == rule::psn_next);
  CHECK(cap.c.tally(rule::psn_next).violations == 1);
  CHECK(cap.c.tally(rule::ack_unsent).violations == 1);
  cap.c.finish();
  CHECK(cap.c.tally(rule::psn_next).violations == 1);
  CHECK(cap.c.seen(2));
  CHECK(!cap.c.seen(4));
}

TEST_CASE("conformance: a violation judged after its frame joins the frame's others") {
  judged_capture cap(d::check_config{.per_frame = true});
  cap.pdu(1);
  cap.add(cap.pdu_frame(3, 4));  // frame 2: another traffic class, and PSN 2 skipped
  cap.pdu(4);
  cap.ack(9);  // frame 4: an ACK of a PSN never sent
  REQUIRE(cap.c.of_frame(2).size() == 1);
  cap.c.finish();  // the skip is judged now, at frame 2
  const auto two = cap.c.of_frame(2);
  REQUIRE(two.size() == 2);
  CHECK(two[0].which == rule::pdu_one_vc);
  CHECK(two[0].seen == "traffic class 4");
  CHECK(two[1].which == rule::psn_next);
  CHECK(two[1].expected == "npsn 2 sent");
  CHECK(two[1].seen == "npsn 2 never sent");
  CHECK(cap.c.of_frame(1).empty());
  CHECK(cap.c.of_frame(3).empty());
  REQUIRE(cap.c.of_frame(4).size() == 1);
  CHECK(cap.c.of_frame(4)[0].which == rule::ack_unsent);
  CHECK(cap.c.of_frame(5).empty());
}

TEST_CASE("conformance: the texts of many frames' violations stay where they were kept") {
  judged_capture cap(d::check_config{.per_frame = true});
  cap.pdu(1);
  // An ACK of a PSN never sent in each, each apsn its own: over 64 KB of texts, more than one
  // block of them. Each frame's texts as read right after it, against the same read at the end.
  constexpr std::uint16_t acks = 2000;
  std::vector<std::string> read;
  for (std::uint16_t i = 0; i < acks; ++i) {
    cap.ack(static_cast<std::uint16_t>(9 + i));
    const auto v = cap.c.of_frame(cap.frame);
    REQUIRE(v.size() == 1);
    read.push_back(std::string(v[0].expected) + "; " + std::string(v[0].seen));
  }
  CHECK(cap.c.tally(rule::ack_unsent).violations == acks);
  CHECK(read[0] != read[1]);
  for (std::uint64_t f = 2; f <= acks + 1; ++f) {
    const auto v = cap.c.of_frame(f);
    REQUIRE(v.size() == 1);
    CHECK(v[0].frame == f);
    CHECK(std::string(v[0].expected) + "; " + std::string(v[0].seen) == read[f - 2]);
  }
}

TEST_CASE("conformance: a connection's state stays bounded, and skips cost a visit each") {
  judged_capture cap(
      d::check_config{.selected = d::rule_set{}.set(static_cast<std::size_t>(rule::psn_next))});
  // PSN 0, then every other PSN: M skips, more than half the PSN space can hold.
  constexpr int M = 20'000;
  cap.pdu(0);
  for (int k = 1; k <= M; ++k) cap.pdu(static_cast<std::uint16_t>(2 * k));
  auto h = cap.c.holding();
  CHECK(h.connections == 1);
  CHECK(h.skips == 16384);  // the older ones were judged as they fell out of reach
  CHECK(cap.c.tally(rule::psn_next).violations == M - 16384);
  CHECK(h.psns <= 32768);
  // Copies of the newest 1000 skipped PSNs: each looks at its own skip only.
  for (int k = M; k > M - 1000; --k) cap.pdu(static_cast<std::uint16_t>(2 * k - 1));
  h = cap.c.holding();
  CHECK(h.skips == 16384 - 1000);
  CHECK(h.skip_visits == 1000);
  // An ACK of everything takes the rest, each looked at once.
  cap.ack(static_cast<std::uint16_t>(2 * M));
  h = cap.c.holding();
  CHECK(h.skips == 0);
  CHECK(h.skip_visits == 16384);
  cap.c.finish();
  CHECK(cap.c.tally(rule::psn_next).violations == M - 16384);
  // The first frames are reported, though found in no order: frame 2 skipped PSN 1.
  REQUIRE(!cap.c.tally(rule::psn_next).first.empty());
  CHECK(cap.c.tally(rule::psn_next).first.front().frame == 2);
}

// A frame is judged against the pauses that end after it, not against every station that ever
// paused: pauses that ran out are never looked at again, and a capture whose PFC frames run
// ahead of its other frames (pauses not begun, of many stations) makes a frame not examinable
// rather than a walk of them all.
TEST_CASE("conformance: pfc.paused looks at the pauses running, not at every station") {
  d::check_config cfg;
  cfg.selected = d::rule_set{}.set(static_cast<std::size_t>(rule::pfc_paused));
  cfg.pfc_reaction_ns = 0;
  judged_capture cap(cfg);
  cap.kind = w::encap::afh1;  // VC0: priority 3
  // 5000 stations pause priority 3 for 100 quanta (512 ns) each, one after the other.
  constexpr int stations = 5000;
  for (int k = 0; k < stations; ++k)
    cap.add_at(judged_capture::pfc_frame(0x020000000000 + static_cast<std::uint64_t>(k), {3}, 100),
               std::int64_t{1000} * k);
  // Long after: every pause ran out; each frame looks at none.
  for (int k = 0; k < stations; ++k)
    cap.add_at(cap.pdu_frame(static_cast<std::uint16_t>(k)), std::int64_t{10'000'000} + k);
  CHECK(cap.c.holding().pause_looks == 0);
  CHECK(cap.c.tally(rule::pfc_paused).examined == stations);
  CHECK(cap.c.tally(rule::pfc_paused).violations == 0);
  // 5000 pauses that begin an hour from now: a frame before them is not examined, after at most
  // 64 looks, rather than walked through all of them.
  judged_capture ahead(cfg);
  ahead.kind = w::encap::afh1;
  constexpr std::int64_t hour = std::int64_t{3600} * 1'000'000'000;
  for (int k = 0; k < stations; ++k)
    ahead.add_at(
        judged_capture::pfc_frame(0x020000000000 + static_cast<std::uint64_t>(k), {3}, 100),
        hour + k);
  for (int k = 0; k < stations; ++k)
    ahead.add_at(ahead.pdu_frame(static_cast<std::uint16_t>(k)), k);
  CHECK(ahead.c.holding().pause_looks <= 64 * stations);
  CHECK(ahead.c.tally(rule::pfc_paused).not_examinable == stations);
  // Within one of those pauses, a frame of another station is paused: found at once.
  ahead.add_at(ahead.pdu_frame(stations), hour + stations + 10);
  CHECK(ahead.c.tally(rule::pfc_paused).violations == 1);
}

TEST_CASE("conformance: denied PSNs kept at most half the PSN space") {
  d::partition_policy table;
  table.listed.set(1);  // XPU 1 may use no partition at all
  judged_capture cap(d::check_config{.partitions = &table});
  for (int k = 0; k < 40'000; ++k)
    cap.add(
        judged_capture::build(judged_capture::params(1, 2),
                              {.op = op_none, .xpuid = 1, .npsn = static_cast<std::uint16_t>(k)},
                              judged_capture::command()));
  CHECK(cap.c.holding().denied == 32768);
  cap.ack(static_cast<std::uint16_t>(39'999));
  CHECK(cap.c.holding().denied == 0);
  CHECK(cap.c.tally(rule::partition_allowed).violations == 1);
}

TEST_CASE("conformance: at most max_connections connections and PFC stations") {
  judged_capture cap(d::check_config{.max_connections = 1});
  const auto from3 = [&](std::uint16_t psn) {
    cap.add(judged_capture::build(judged_capture::params(3, 2),
                                  {.op = op_none, .xpuid = 3, .npsn = psn},
                                  judged_capture::command()));
  };
  cap.pdu(1);
  cap.pdu(2);
  from3(1);  // a second connection: not judged
  from3(2);
  cap.add(judged_capture::build(judged_capture::params(2, 3),
                                {.op = op_ack, .xpuid = 2, .npsn = 7, .apsn = 2}, {}));  // its ACK
  cap.ack(2);  // the first's ACK: judged
  CHECK(cap.c.holding().connections == 1);
  CHECK(cap.c.not_analysed_frames() == 3);
  CHECK(cap.c.tally(rule::ack_monotonic).examined == 1);
  CHECK(cap.c.tally(rule::psn_next).examined == 1);
  cap.pfc(0x020000000001, {3}, 100);
  cap.pfc(0x020000000002, {3}, 100);  // a second station: its pause is not known
  CHECK(cap.c.not_analysed_frames() == 4);
  none(cap);
}
