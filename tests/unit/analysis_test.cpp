// The go-back-N sequence analysis (include/scaleup/dissect/analysis.hpp), frame by frame: each
// case writes what a capture shows and states what the analysis must make of it, the way
// Wireshark's TCP analysis flags segments.
#include <scaleup/dissect/analysis.hpp>
#include <scaleup/dissect/engine.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/xpu_map.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
using d::flag;
using d::result_value;

using scaleup::test::op_ack;
using scaleup::test::op_nack;
using scaleup::test::op_none;

// A connection between XPUs, as AFH frames name its ends.
d::connection_key key(std::uint32_t src, std::uint32_t dst, std::uint16_t port, std::uint8_t vc) {
  return {d::endpoint::of_xpu(src), d::endpoint::of_xpu(dst), port, vc};
}

// A capture written by hand: XPU 1 sends to XPU 2 on VC 0; XPU 2 answers on the same VC.
struct capture {
  d::analysis a;
  std::uint64_t frame = 0;
  std::int64_t now = 0;

  explicit capture(d::analysis_config c = {}) : a(c) {}

  const d::frame_result& pdu(std::uint16_t psn, std::int64_t dt = 1000) {
    return add(key(1, 2, 0, 0), op_none, psn, 0, true, dt);
  }
  const d::frame_result& ack(std::uint16_t apsn, std::uint8_t op = op_ack, std::int64_t dt = 1000) {
    return add(key(2, 1, 0, 0), op, 0x5555, apsn, false, dt);
  }
  const d::frame_result& add(d::connection_key k, std::uint8_t op, std::uint16_t npsn,
                             std::uint16_t apsn, bool data, std::int64_t dt) {
    now += dt;
    d::frame_facts f;
    f.frame = ++frame;
    f.time_ns = now;
    f.key = k;
    f.op = op;
    f.npsn = npsn;
    f.apsn = apsn;
    f.data = data;
    f.length = 100;
    return a.add(f);
  }
  const d::connection& forward() const { return a.connections().at(0); }
};

std::uint64_t value(const d::frame_result& r, result_value v) { return r.get(v).value_or(~0ull); }

}  // namespace

TEST_CASE("analysis: in-order PDUs, a cumulative ACK and its RTT") {
  capture c;
  for (std::uint16_t p = 100; p < 104; ++p) {
    const auto& r = c.pdu(p);
    CHECK(r.flags == 0);
    CHECK(value(r, result_value::connection) == 0);
    CHECK(value(r, result_value::in_flight) == p - 99u);
  }
  // Frame 5 acknowledges 100..102; PSN 102 was first sent in frame 3, 2000 ns earlier.
  const auto& r = c.ack(102);
  CHECK(r.flags == 0);
  CHECK(value(r, result_value::acked_connection) == 0);
  CHECK(value(r, result_value::acks_frame) == 3);
  CHECK(value(r, result_value::ack_rtt) == 2000);
  CHECK_FALSE(r.get(result_value::connection));            // an RH-only ACK is not a PDU of its own
  CHECK(value(c.pdu(104), result_value::in_flight) == 2);  // 103 and 104
  const auto& f = c.forward();
  CHECK(f.pdus == 5);
  CHECK(f.acks == 1);
  CHECK(f.retransmissions() == 0);
  CHECK(f.ack_rtt().count() == 1);
  CHECK(f.ack_rtt().min() == 2000);
  CHECK(f.ack_rtt().max() == 2000);
  CHECK(c.a.connections().size() == 1);  // the ACK's own direction sent no PDU
}

TEST_CASE("analysis: a NACK, then go back N") {
  capture c;
  for (std::uint16_t p = 0; p < 5; ++p) c.pdu(p);  // frames 1-5: PSN 1 is lost downstream
  const auto& n = c.ack(1, op_nack);               // frame 6
  CHECK(n.has(flag::nack));
  CHECK_FALSE(n.get(result_value::ack_rtt));  // RTTs come from ACKs only
  for (std::uint16_t p = 1; p < 5; ++p) {
    const auto& r = c.pdu(p);  // frames 7-10
    CHECK(r.has(flag::retransmission));
    CHECK_FALSE(r.has(flag::duplicate));  // the NACK said PSN 1 on had not arrived
    CHECK(value(r, result_value::first_frame) == p + 1u);
  }
  const auto& f = c.forward();
  CHECK(f.retransmissions() == 4);
  CHECK(f.nacks() == 1);
  CHECK(f.duplicates() == 0);
  // The ACK after the resends covers PSN 4: timed from its first transmission (frame 5).
  const auto& a = c.ack(4);
  CHECK(value(a, result_value::acks_frame) == 5);
  CHECK(value(a, result_value::ack_rtt) == 6000);
}

TEST_CASE("analysis: a resent PSN already acknowledged is a duplicate") {
  capture c;
  c.pdu(7);
  c.pdu(8);
  c.ack(8);  // the capture saw the ACK; the sender did not (lost after the capture point)
  const auto& r = c.pdu(7);
  CHECK(r.has(flag::retransmission));
  CHECK(r.has(flag::duplicate));
  CHECK(c.forward().duplicates() == 1);
  CHECK(c.forward().retransmissions() == 1);
  CHECK(c.ack(8).flags == 0);  // acknowledges nothing new: no RTT either
  CHECK(c.forward().ack_rtt().count() == 1);
}

TEST_CASE("analysis: a gap, then the missing PSN arrives out of order") {
  capture c;
  c.pdu(10);
  const auto& g = c.pdu(14);
  CHECK(g.has(flag::gap));
  CHECK(value(g, result_value::missing) == 3);
  const auto& late = c.pdu(12);
  CHECK(late.has(flag::out_of_order));
  CHECK_FALSE(late.has(flag::retransmission));
  CHECK(c.pdu(12).has(flag::retransmission));  // now it has been seen
  const auto& f = c.forward();
  CHECK(f.gaps() == 1);
  CHECK(f.missing() == 3);
  CHECK(f.out_of_order() == 1);
}

TEST_CASE("analysis: PSNs wrap around without a gap") {
  capture c;
  for (const std::uint16_t p : {65533, 65534, 65535, 0, 1}) CHECK(c.pdu(p).flags == 0);
  const auto& a = c.ack(0);  // covers 65533..0
  CHECK(value(a, result_value::acks_frame) == 4);
  CHECK(value(c.pdu(2), result_value::in_flight) == 2);
  CHECK(c.pdu(65535).has(flag::duplicate));  // before the ACKed 0, across the wrap
}

TEST_CASE("analysis: the window fills") {
  d::analysis_config cfg;
  cfg.window = 3;
  capture c(cfg);
  CHECK_FALSE(c.pdu(0).has(flag::window_full));
  CHECK_FALSE(c.pdu(1).has(flag::window_full));
  CHECK(c.pdu(2).has(flag::window_full));
  CHECK_FALSE(c.pdu(0).has(flag::window_full));  // a resend adds nothing in flight
  c.ack(0);
  CHECK(c.pdu(3).has(flag::window_full));  // 1, 2, 3
  CHECK(c.forward().window_full() == 2);
  CHECK(d::analysis_config{}.window == 256);  // gbn_config's default
}

TEST_CASE("analysis: a frame seen again gets its first result (Wireshark's second pass)") {
  capture c;
  c.pdu(0);
  c.pdu(1);
  c.ack(1, op_nack);
  const d::frame_result first = c.pdu(1);  // frame 4: a retransmission
  REQUIRE(first.has(flag::retransmission));
  const auto before = c.forward().pdus;
  // Frame 4 again, as a second pass would hand it over: same result, no double counting.
  d::frame_facts again;
  again.frame = 4;
  again.key = key(1, 2, 0, 0);
  again.op = op_none;
  again.npsn = 1;
  again.data = true;
  const auto& r = c.a.add(again);
  CHECK(r.flags == first.flags);
  CHECK(r.values == first.values);
  CHECK(c.forward().pdus == before);
  CHECK(c.a.result(4) == &r);
  CHECK(c.a.result(99) == nullptr);
}

TEST_CASE("analysis: connections are told apart by source, destination, port and VC") {
  capture c;
  c.add(key(1, 2, 0, 0), op_none, 5, 0, true, 1);
  c.add(key(1, 2, 0, 1), op_none, 900, 0, true, 1);  // VC 1: its own PSN space
  c.add(key(1, 3, 0, 0), op_none, 40, 0, true, 1);
  c.add(key(1, 2, 1, 0), op_none, 77, 0, true, 1);  // port 1
  for (const auto& conn : c.a.connections()) CHECK(conn.pdus == 1);
  CHECK(c.a.connections().size() == 4);
  // An RH of XPU 2 on VC 1 acknowledges connection 1 -> 2 on VC 1.
  const auto& r = c.add(key(2, 1, 0, 1), op_ack, 0, 900, false, 1);
  CHECK(value(r, result_value::acked_connection) == 1);
}

// A frame from XPU 5 to XPU 9, VC 1, ACK 299, PSN 300, on encapsulation `e`.
std::vector<std::uint8_t> frame_5_to_9(w::encap e, const std::vector<std::uint8_t>& payload) {
  w::frame_params p;
  p.kind = e;
  p.src_xpu = 5;
  p.dst_xpu = 9;
  p.tc = e == w::encap::afh1 ? 0 : 1;
  auto rh = scaleup::test::test_rh();
  rh.xpuid = 5;
  rh.vc = 1;
  rh.op = op_ack;
  rh.npsn = 300;
  rh.apsn = 299;
  std::vector<std::uint8_t> frame(payload.size() + 256);
  const auto n = w::emit_sue_frame(p, rh, payload, frame);
  REQUIRE(n);
  frame.resize(n.value);
  return frame;
}

TEST_CASE("analysis: facts come from a dissected frame, and never from a damaged one") {
  for (const auto e : {w::encap::udp4, w::encap::udp6, w::encap::afh1, w::encap::afh1_vlan_shim,
                       w::encap::afh2, w::encap::afh2c}) {
    CAPTURE(w::to_string(e));
    const std::vector<std::uint8_t> payload{0x02, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0xAA};
    std::vector<std::uint8_t> frame = frame_5_to_9(e, payload);
    auto t = std::make_unique<d::tree>();
    // The port the frames were written to, named: a damaged PDU is still read as one.
    d::options o;
    o.add_udp_port(w::emit_udp_port);
    d::dissect_frame(*t, frame, d::link_ethernet, o);
    auto f = d::facts_of(*t, 3, 42);
    REQUIRE(f);
    const bool ip = e == w::encap::udp4 || e == w::encap::udp6;
    if (ip) {
      // Over IP the frame names no XPU: the ends are its addresses, the RH's xpuid kept.
      const auto addr = [&](std::uint32_t x) {
        return e == w::encap::udp4 ? w::ip_address::v4(w::xpu_ipv4(x))
                                   : w::ip_address::v6(w::xpu_ipv6(x));
      };
      CHECK(f->key.src == d::endpoint::of_ip(addr(5)));
      CHECK(f->key.dst == d::endpoint::of_ip(addr(9)));
      CHECK(f->xpuid == 5);
      CHECK_FALSE(d::destination_xpu(*t));
      // With the addressing plan as the XPU map: XPU ids, the destination a generated field.
      o.xpus = &w::addressing_plan;
      d::dissect_frame(*t, frame, d::link_ethernet, o);
      CHECK(t->find("sue.dst_xpu") != nullptr);
      CHECK(d::destination_xpu(*t) == 9u);
      f = d::facts_of(*t, 3, 42);
      REQUIRE(f);
    } else {
      CHECK(t->find("sue.dst_xpu") == nullptr);  // the frame carries its own
    }
    CHECK(f->key.src == d::endpoint::of_xpu(5));
    CHECK(f->key.dst == d::endpoint::of_xpu(9));
    CHECK(f->key.vc == 1);
    CHECK(f->op == op_ack);
    CHECK(f->npsn == 300);
    CHECK(f->apsn == 299);
    CHECK(f->data);
    CHECK(f->frame == 3);
    // One bit flipped in the payload: the R-CRC fails, the receiver would drop the frame, and
    // so does the analysis.
    frame[w::header_size(e) + 8 + payload.size() - 1] ^= 0x01;
    d::dissect_frame(*t, frame, d::link_ethernet, o);
    REQUIRE(t->has_errors());
    CHECK_FALSE(d::facts_of(*t, 3, 42));
  }
}

// An ACK's connection is looked up from the frame's own key, its ends swapped in the lookup
// rather than in a key built for it (reversed_key): it must find what the built key finds, and
// number a connection it has not seen under the swapped key.
TEST_CASE("analysis: a connection looked up from its other end is the one its key names") {
  d::flat_index<d::connection_key, d::connection_key_hash> index;
  const auto v4 = [](std::uint32_t a) { return d::endpoint::of_ip(w::ip_address::v4(a)); };
  const d::connection_key ab{v4(0x0A000001), v4(0x0A000002), 4793, 1};
  const d::connection_key ba{ab.dst, ab.src, ab.port, ab.vc};
  const d::connection_key other_vc{ab.dst, ab.src, ab.port, 2};
  CHECK(index.insert(ab) == std::pair<std::uint32_t, bool>{0, true});
  CHECK(index.insert(ba) == std::pair<std::uint32_t, bool>{1, true});
  // Seen from each end, each is the other.
  CHECK(index.insert(d::reversed_key{ba}) == std::pair<std::uint32_t, bool>{0, false});
  CHECK(index.insert(d::reversed_key{ab}) == std::pair<std::uint32_t, bool>{1, false});
  CHECK(ba == d::reversed_key{ab});
  CHECK_FALSE(ab == d::reversed_key{ab});
  CHECK_FALSE(ab == d::reversed_key{other_vc});
  // A new one is kept under the key it stands for.
  CHECK(index.insert(d::reversed_key{other_vc}) == std::pair<std::uint32_t, bool>{2, true});
  CHECK(index.keys()[2] == d::connection_key{ab.src, ab.dst, ab.port, 2});
  CHECK(index.find(d::connection_key{ab.src, ab.dst, ab.port, 2}) == 2);
  // The same over XPU ends, and through the analysis: an ACK from 2 to 1 finds 1 -> 2.
  capture c;
  c.pdu(10);
  CHECK(value(c.ack(10), result_value::acked_connection) == 0);
  CHECK(c.a.connections().size() == 1);
}

// set_facts writes what facts_of returns, and says false (for facts_of: nothing) for a frame
// without an RH.
TEST_CASE("analysis: set_facts fills what facts_of returns") {
  const std::vector<std::uint8_t> payload{0x02, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0xAA};
  const std::vector<std::uint8_t> frame = frame_5_to_9(w::encap::udp4, payload);
  auto t = std::make_unique<d::tree>();
  d::options o;
  o.add_udp_port(w::emit_udp_port);
  d::dissect_frame(*t, frame, d::link_ethernet, o);
  d::frame_facts f;
  REQUIRE(d::set_facts(*t, 7, 99, f, 4793));
  const auto v = d::facts_of(*t, 7, 99, 4793);
  REQUIRE(v);
  CHECK(f.key == v->key);
  CHECK(f.key.port == 4793);
  CHECK(f.frame == 7);
  CHECK(f.time_ns == 99);
  CHECK(f.npsn == v->npsn);
  CHECK(f.length == v->length);
  CHECK(d::endpoints_of(*t) == std::pair{f.key.src, f.key.dst});
  // A frame cut before its RH: no facts, and the ends are not asked for.
  d::dissect_frame(*t, std::span(frame).first(w::header_size(w::encap::udp4)), d::link_ethernet, o);
  d::frame_facts g;
  CHECK_FALSE(d::set_facts(*t, 7, 99, g));
  CHECK_FALSE(d::facts_of(*t, 7, 99));
  CHECK_FALSE(d::endpoints_of(*t));
}

TEST_CASE("analysis: which problems leave a PDU out") {
  const auto counts = [](std::string_view layer, w::errc code, w::severity level) {
    return d::counts_against_pdu(w::error{.code = code, .layer = layer, .level = level});
  };
  // A receiver drops these before its payload is handed on.
  CHECK(counts("sue.rcrc", w::errc::bad_checksum, w::severity::error));
  CHECK(counts("eth.fcs", w::errc::bad_checksum, w::severity::error));
  CHECK(counts("udp", w::errc::truncated, w::severity::error));
  CHECK(counts("sue.rh", w::errc::bad_value, w::severity::error));
  // Not these: offloaded checksums, the snapshot length, what is inside the commands.
  CHECK_FALSE(counts("ip", w::errc::bad_checksum, w::severity::warning));
  CHECK_FALSE(counts("udp", w::errc::bad_checksum, w::severity::warning));
  CHECK_FALSE(counts("frame", w::errc::not_captured, w::severity::note));
  CHECK_FALSE(counts("sue.opaque", w::errc::bad_value, w::severity::warning));
  CHECK_FALSE(counts("sue.cmd", w::errc::bad_value, w::severity::error));
  CHECK_FALSE(counts("sue.cmd", w::errc::reserved_nonzero, w::severity::warning));
}

TEST_CASE("analysis: a frame cut by the snapshot length gives the facts of the whole frame") {
  for (const w::encap e : {w::encap::udp4, w::encap::udp6, w::encap::afh1, w::encap::afh2}) {
    CAPTURE(w::to_string(e));
    const std::vector<std::uint8_t> payload(200, 0x11);  // not commands: opaque either way
    const std::vector<std::uint8_t> frame = frame_5_to_9(e, payload);
    auto t = std::make_unique<d::tree>();
    // A cut frame holds no R-CRC for the heuristic: its port is named, as a header-only
    // capture is read with --udp-port.
    d::options named;
    REQUIRE(named.add_udp_port(w::emit_udp_port));
    d::dissect_frame(*t, frame, d::link_ethernet);
    const auto whole = d::facts_of(*t, 1, 0);
    REQUIRE(whole);
    CHECK(whole->length == frame.size());
    const std::size_t rh_end = w::header_size(e) + 8;
    for (const std::size_t snap : {rh_end, std::size_t{64}, std::size_t{80}, std::size_t{128}}) {
      CAPTURE(snap);
      if (snap < rh_end) continue;  // the RH of udp6 ends at 70
      d::dissect_frame(*t, w::bytes(frame).first(snap), d::link_ethernet, named, frame.size());
      const auto* status = t->find("sue.rcrc.status");
      REQUIRE(status);
      CHECK(status->value_name() == "not_captured");
      CHECK(t->find("sue.payload.len")->value == payload.size());
      const auto cut = d::facts_of(*t, 1, 0);
      REQUIRE(cut);
      CHECK(cut->key == whole->key);
      CHECK(cut->npsn == whole->npsn);
      CHECK(cut->apsn == whole->apsn);
      CHECK(cut->op == whole->op);
      CHECK(cut->data == whole->data);
      CHECK(cut->length == whole->length);
    }
    // The RH not captured: nothing to analyse, and still no error.
    d::dissect_frame(*t, w::bytes(frame).first(rh_end - 1), d::link_ethernet, named, frame.size());
    CHECK_FALSE(d::facts_of(*t, 1, 0));
    CHECK_FALSE(t->has_errors());
  }
}

TEST_CASE("analysis: RTT percentiles by nearest rank") {
  d::rtt_histogram h;
  for (int i = 100; i >= 1; --i) h.add(i);  // below 2^8: every value has its own bucket
  const auto s = d::summarize(h);
  CHECK(s.count == 100);
  CHECK(s.min == 1);
  CHECK(s.p50 == 50);
  CHECK(s.p90 == 90);
  CHECK(s.p99 == 99);
  CHECK(s.max == 100);
  CHECK(d::summarize(d::rtt_histogram{}).count == 0);
  CHECK(d::summarize(d::rtt_histogram{}).p99 == 0);
  d::rtt_histogram one;
  one.add(7);
  CHECK(d::summarize(one).p99 == 7);
}

TEST_CASE("analysis: results not kept, the frames are analysed once each") {
  d::analysis_config cfg;
  cfg.keep_results = false;
  capture c(cfg);
  c.pdu(0);
  CHECK(c.a.result(1) == nullptr);  // nothing cached per frame
  const auto& r = c.ack(0);
  CHECK(c.a.result(2) == nullptr);
  CHECK(r.get(result_value::ack_rtt) == 1000u);  // the result of the call is still whole
  CHECK(c.forward().ack_rtt().count() == 1);
  // Frame 1 again: analysed anew (a duplicate of an acknowledged PSN), not its first result.
  d::frame_facts again;
  again.frame = 1;
  again.time_ns = c.now + 1;
  again.key = key(1, 2, 0, 0);
  again.op = op_none;
  again.data = true;
  CHECK(c.a.add(again).has(flag::duplicate));
}

TEST_CASE("analysis: a connection's own bytes stay small (docs/robustness.md, Limits)") {
  // Its key and trace are the analysis', its RTTs sparse, its counters of what went wrong and
  // its rare parts out of line: 384 bytes before, 144 now (on x86-64 with libstdc++).
  CHECK(sizeof(d::connection) <= 144);
  capture c;
  c.pdu(1);
  c.ack(1);
  // One RTT: kept in the connection (the dense histogram touched 8 KiB, a block took 40 bytes).
  CHECK(c.forward().ack_rtt().count() == 1);
  CHECK(c.forward().ack_rtt().heap_bytes() == 0);
  CHECK(c.forward().retransmissions() == 0);
  // A second, in another bucket (5 us against 1): a block with room for both.
  c.pdu(2);
  c.ack(2, op_ack, 5000);
  CHECK(c.forward().ack_rtt().count() == 2);
  CHECK(c.forward().ack_rtt().heap_bytes() == 48);
}

TEST_CASE("analysis: at most max_connections; a frame naming a new one beyond is left out") {
  const auto run = [](std::size_t most) {
    d::analysis_config cfg;
    cfg.max_connections = most;
    auto c = std::make_unique<capture>(cfg);
    std::vector<std::uint16_t> flags;
    const auto pdu = [&](std::uint16_t port, std::uint16_t psn) {
      flags.push_back(c->add(key(1, 2, port, 0), op_none, psn, 0, true, 1000).flags);
    };
    pdu(0, 10);
    pdu(1, 20);
    pdu(2, 30);
    pdu(3, 40);  // a fourth connection
    pdu(0, 11);  // the first again
    // An ACK for the fourth (the reverse of its key), then for the first.
    flags.push_back(c->add(key(2, 1, 3, 0), op_ack, 0, 40, false, 1000).flags);
    flags.push_back(c->add(key(2, 1, 0, 0), op_ack, 0, 10, false, 1000).flags);
    // Data on a fifth connection carrying an ACK for the first: the ACK still counts.
    flags.push_back(c->add(key(2, 1, 0, 0), op_ack, 77, 11, true, 1000).flags);
    return std::pair{std::move(c), flags};
  };
  const auto [limited, flags] = run(3);
  const auto [free, free_flags] = run(100);
  const auto& a = limited->a;
  CHECK(a.connections().size() == 3);
  CHECK(free->a.connections().size() == 5);
  CHECK(a.not_analysed_frames() == 3);
  CHECK(free->a.not_analysed_frames() == 0);
  const auto left_out = static_cast<std::uint16_t>(flag::not_analysed);
  CHECK(flags == std::vector<std::uint16_t>{0, 0, 0, left_out, 0, left_out, 0, left_out});
  for (const auto f : free_flags) CHECK((f & left_out) == 0);
  // What the kept connections counted is what they count without a limit.
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const auto &x = a.connections()[i], &y = free->a.connections()[i];
    CHECK(a.key(i) == free->a.key(i));
    CHECK(x.pdus == y.pdus);
    CHECK(x.acks == y.acks);
    CHECK(x.frames == y.frames);
    CHECK(x.bytes == y.bytes);
    CHECK(x.ack_rtt().count() == y.ack_rtt().count());
  }
  CHECK(a.connections()[0].acks == 2);
}

TEST_CASE("analysis: PSNs in flight kept at most half the PSN space") {
  capture c;
  // 100 000 PDUs, none acknowledged: PSNs wrap, and those half the space behind are dropped.
  std::uint16_t psn = 0;
  for (int i = 0; i < 100'000; ++i) c.pdu(psn++);
  CHECK(c.forward().psns_kept() == 32768);
  CHECK(c.forward().pdus == 100'000);
  // A resend within the horizon is still told from a first transmission.
  const auto& r = c.pdu(static_cast<std::uint16_t>(psn - 100));
  CHECK(r.has(flag::retransmission));
  CHECK(value(r, result_value::first_frame) == 100'000 - 99);
  CHECK(c.forward().psns_kept() == 32768);
}

TEST_CASE(
    "analysis: ACKs riding on PDUs, peers interleaved, each for the connection the other way") {
  // XPU 1 talks with XPUs 2 and 3; every PDU after the first of a pair carries the ACK of the
  // other way's PDU before it. The analysis finds a ridden ACK's connection once and keeps it:
  // each ACK must still land on its own connection, whoever sent the frame before.
  for (const std::size_t most : {std::size_t{100}, std::size_t{3}}) {
    CAPTURE(most);
    d::analysis_config cfg;
    cfg.max_connections = most;
    capture c(cfg);
    std::uint16_t psn[4][4] = {};  // next PSN from each XPU to each
    const auto send = [&](std::uint32_t from, std::uint32_t to, bool with_ack) {
      const std::uint16_t p = psn[from][to]++;
      const std::uint16_t acked = static_cast<std::uint16_t>(psn[to][from] - 1);
      return c.add(key(from, to, 0, 0), with_ack ? op_ack : op_none, p, acked, true, 100);
    };
    send(1, 2, false);  // connections 0: 1->2
    send(1, 3, false);  //             1: 1->3
    for (int round = 0; round < 5; ++round) {
      const auto& a = send(2, 1, true);  // 2->1 (connection 2), ACKs 1->2
      const auto& b = send(3, 1, true);  // 3->1 (connection 3 when there is room), ACKs 1->3
      const auto& x = send(1, 2, true);  // ACKs 2->1
      const auto& y = send(1, 3, true);  // ACKs 3->1
      CHECK(value(a, result_value::acked_connection) == 0);
      CHECK(value(b, result_value::acked_connection) == 1);
      CHECK(value(x, result_value::acked_connection) == 2);
      if (most > 3) {
        CHECK(value(y, result_value::acked_connection) == 3);
      } else {
        // 3->1 was refused: its PDUs and the ACKs for it are not analysed, the rest is.
        CHECK(b.has(flag::not_analysed));
        CHECK(y.has(flag::not_analysed));
        CHECK_FALSE(x.has(flag::not_analysed));
      }
    }
    const auto& conns = c.a.connections();
    REQUIRE(conns.size() == std::min<std::size_t>(most, 4));
    CHECK(conns[0].acks == 5);  // 1->2, acknowledged by 2->1's PDUs
    CHECK(conns[1].acks == 5);  // 1->3, by 3->1's (analysed for 1->3 even when 3->1 is not)
    CHECK(conns[2].acks == 5);  // 2->1, by 1->2's
    if (most > 3) CHECK(conns[3].acks == 5);
    for (const auto& k : conns) CHECK(k.ack_rtt().count() == k.acks);
  }
}

TEST_CASE("analysis: a capture interface is the port its number names, the last port beyond") {
  CHECK(d::port_of_interface(0) == 0);
  CHECK(d::port_of_interface(3) == 3);
  CHECK(d::port_of_interface(0xFFFE) == 0xFFFE);
  CHECK(d::port_of_interface(0xFFFF) == 0xFFFF);
  // Not port 0 (a wrapped number): that port's connections are another plane's.
  CHECK(d::port_of_interface(0x10000) == 0xFFFF);
  CHECK(d::port_of_interface(0x10003) == 0xFFFF);
  CHECK(d::port_of_interface(0xFFFFFFFF) == 0xFFFF);
  static_assert(d::port_of_interface(70000) == 0xFFFF);
}
