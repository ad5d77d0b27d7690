// The go-back-N endpoint (transport/endpoint.hpp): PDU bytes written by hand from R2 Table 5,
// ACKs piggybacked and stand-alone, one NACK per gap and the go-back that follows, the
// retransmit timer and the retry limit, the window, every refused event, and two endpoints over
// lossy, duplicating, reordering channels across PSN wraparound.
#include <scaleup/transport/endpoint.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "support.hpp"

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;
using scaleup::test::be16;
using scaleup::test::byte_vector;
using scaleup::test::bytes_of;
using scaleup::test::cat;
using scaleup::test::ref_crc32;
using ep_t = t::endpoint<8, 16>;
using in = t::endpoint_input;

// The R-CRC a PDU must end with: CRC-32 of everything before it, big-endian, by the test's own
// bitwise CRC.
byte_vector with_rcrc(byte_vector pdu) {
  const std::uint32_t c = ref_crc32(pdu.data(), pdu.size());
  for (int s = 24; s >= 0; s -= 8) pdu.push_back(static_cast<std::uint8_t>(c >> s));
  return pdu;
}

std::vector<byte_vector> sent(const t::endpoint_actions& a) {
  std::vector<byte_vector> v;
  for (const auto& p : a.transmit) v.push_back(bytes_of(p.bytes));
  return v;
}

// What A (XPU 5) and B (XPU 6) share: VC 1, partition 3.
constexpr t::endpoint_config config_a{.xpuid = 5, .vc = 1, .partition = 3};
constexpr t::endpoint_config config_b{.xpuid = 6, .vc = 1, .partition = 3};

// A PDU as the peer would write it, for the error cases.
byte_vector pdu_of(const w::reliability_header& rh, const byte_vector& payload) {
  byte_vector out(w::pdu_size(payload.size()));
  REQUIRE(w::emit_pdu(rh, payload, out).ok());
  return out;
}

}  // namespace

TEST_CASE("endpoint: a new PDU, byte for byte") {
  ep_t a(config_a);
  CHECK(a.deadline() == t::no_deadline);
  const byte_vector payload{0xAA, 0xBB};
  const auto r = a.step({in::send, payload}, 0);
  CHECK(r.accepted);
  CHECK(r.sent_psn == t::psn<16>(0));
  CHECK_FALSE(r.window_full);
  CHECK_FALSE(r.error);
  REQUIRE(r.transmit.size() == 1);
  // ver 0, op 2 (no ACK), rsv 0, xpuid 5: 0010 0000 0000 0101 = 20 05; npsn 00 00;
  // vc 1, rsvd 0, partition 3: 0100 0000 0000 0011 = 40 03; apsn 00 00; payload; R-CRC.
  CHECK(sent(r)[0] == with_rcrc({0x20, 0x05, 0x00, 0x00, 0x40, 0x03, 0x00, 0x00, 0xAA, 0xBB}));
  // The parts, for a caller that frames the PDU itself, give the same bytes.
  const t::outgoing_pdu& o = r.transmit[0];
  CHECK(o.rh == w::reliability_header{.xpuid = 5, .vc = 1, .partition = 3});
  CHECK(bytes_of(o.payload) == payload);
  byte_vector frame(128);
  const auto f = w::emit_sue_frame(
      w::frame_params{.kind = w::encap::udp4, .src_xpu = 5, .dst_xpu = 6}, o.rh, o.payload, frame);
  REQUIRE(f.ok());
  CHECK(byte_vector(frame.begin() + 42, frame.begin() + 42 + 14) == bytes_of(o.bytes));
  // Kept for a resend; the retransmit timer runs.
  CHECK(a.in_flight() == 1);
  CHECK(a.deadline() == t::gbn_config{}.rto);
}

TEST_CASE("endpoint: an ACK rides on reverse traffic") {
  ep_t a(config_a), b(config_b);
  const auto r = a.step({in::send, byte_vector{1}}, 0);
  const byte_vector p0 = sent(r)[0];
  const auto got = b.step({in::arrived, p0}, 100);
  CHECK(bytes_of(got.delivered) == byte_vector{1});
  CHECK(got.transmit.empty());                             // not due yet: coalesced
  CHECK(b.deadline() == 100 + t::gbn_config{}.ack_delay);  // ...for at most 1 us

  // B's own PDU carries the ACK: op 0, apsn 0. 0000 0000 0000 0110 = 00 06.
  const auto back = b.step({in::send, byte_vector{2}}, 200);
  REQUIRE(back.transmit.size() == 1);
  CHECK(sent(back)[0] == with_rcrc({0x00, 0x06, 0x00, 0x00, 0x40, 0x03, 0x00, 0x00, 0x02}));
  CHECK(b.receiver().acks_sent == 1);
  CHECK(b.deadline() == 200 + t::gbn_config{}.rto);  // only B's retransmit timer now

  // The arrived bytes are a temporary, gone after this line: the delivered payload is the
  // endpoint's copy.
  const auto at_a = a.step({in::arrived, sent(back)[0]}, 300);
  CHECK(at_a.released == 1);
  CHECK(a.in_flight() == 0);
  CHECK(bytes_of(at_a.delivered) == byte_vector{2});
}

TEST_CASE("endpoint: a stand-alone ACK after the delay, or after 8 PDUs") {
  ep_t a(config_a), b(config_b);
  const auto p0 = sent(a.step({in::send, byte_vector{1}}, 0))[0];
  CHECK(b.step({in::arrived, p0}, 100).transmit.empty());
  CHECK(b.step({in::tick}, 1099).transmit.empty());
  const auto due = b.step({in::tick}, 1100);
  REQUIRE(due.transmit.size() == 1);
  // RH only: op ACK, apsn 0; npsn is B's next PSN (0), for information; then the R-CRC.
  CHECK(sent(due)[0] == with_rcrc({0x00, 0x06, 0x00, 0x00, 0x40, 0x03, 0x00, 0x00}));
  CHECK(due.transmit[0].payload.empty());
  CHECK(b.deadline() == t::no_deadline);
  CHECK(a.step({in::arrived, sent(due)[0]}, 1200).released == 1);

  // Eight PDUs unacknowledged: the ACK goes at once, apsn 8 (PSNs 1..8).
  std::size_t acks = 0;
  for (std::uint8_t i = 0; i < 8; ++i) {
    const auto p = sent(a.step({in::send, byte_vector{i}}, 2000 + i))[0];
    const auto r = b.step({in::arrived, p}, 2100 + i);
    CHECK(r.delivered.size() == 1);
    if (!r.transmit.empty()) {
      ++acks;
      CHECK(i == 7);
      CHECK(sent(r)[0] == with_rcrc({0x00, 0x06, 0x00, 0x00, 0x40, 0x03, 0x00, 0x08}));
    }
  }
  CHECK(acks == 1);
}

TEST_CASE("endpoint: a lost PDU gets one NACK, then the sender goes back") {
  ep_t a(config_a), b(config_b);
  std::vector<byte_vector> p;
  for (std::uint8_t i = 0; i < 4; ++i) p.push_back(sent(a.step({in::send, byte_vector{i}}, i))[0]);
  CHECK(bytes_of(b.step({in::arrived, p[0]}, 100).delivered) == byte_vector{0});
  // PSN 1 is lost: 2 opens a gap. NACK apsn 1: op 1 -> 0001 0000 0000 0110 = 10 06.
  const auto gap = b.step({in::arrived, p[2]}, 102);
  CHECK(gap.dropped == t::drop_reason::gap);
  CHECK(gap.delivered.empty());
  REQUIRE(gap.transmit.size() == 1);
  CHECK(sent(gap)[0] == with_rcrc({0x10, 0x06, 0x00, 0x00, 0x40, 0x03, 0x00, 0x01}));
  const auto again = b.step({in::arrived, p[3]}, 103);
  CHECK(again.dropped == t::drop_reason::gap);
  CHECK(again.transmit.empty());  // one NACK per gap

  // The NACK acknowledges PSN 0 and sends 1, 2, 3 again, in order, each a whole PDU.
  const auto back = a.step({in::arrived, sent(gap)[0]}, 200);
  CHECK(back.released == 1);
  REQUIRE(back.transmit.size() == 3);
  for (std::uint16_t k = 0; k < 3; ++k) {
    CHECK(sent(back)[k] == p[k + 1]);  // A had nothing to acknowledge: the same bytes
    CHECK(back.transmit[k].rh.npsn == k + 1);
    const auto r = b.step({in::arrived, sent(back)[k]}, 300 + k);
    CHECK(bytes_of(r.delivered) == byte_vector{static_cast<std::uint8_t>(k + 1)});
  }
  CHECK(a.sender().resent == 3);
  CHECK(b.receiver().delivered == 4);
}

TEST_CASE("endpoint: a resend carries the ACK that is pending when it goes") {
  ep_t a(config_a), b(config_b);
  const auto lost = sent(a.step({in::send, byte_vector{7}}, 0))[0];
  // Meanwhile B sends A a PDU, which A delivers and has not acknowledged yet.
  const auto from_b = sent(b.step({in::send, byte_vector{9}}, 10))[0];
  CHECK(a.step({in::arrived, from_b}, 20).transmit.empty());
  // A's timer fires: PSN 0 again, now with ACK apsn 0 in its RH and a fresh R-CRC.
  const auto r = a.step({in::tick}, t::gbn_config{}.rto);
  REQUIRE(r.transmit.size() == 1);
  CHECK(sent(r)[0] != lost);
  CHECK(sent(r)[0] == with_rcrc({0x00, 0x05, 0x00, 0x00, 0x40, 0x03, 0x00, 0x00, 0x07}));
  const auto at_b = b.step({in::arrived, sent(r)[0]}, t::gbn_config{}.rto + 100);
  CHECK(at_b.released == 1);
  CHECK(bytes_of(at_b.delivered) == byte_vector{7});
}

TEST_CASE("endpoint: the retransmit timer, then the peer is unreachable") {
  t::endpoint_config c = config_a;
  c.gbn.rto = 1000;
  c.gbn.max_retries = 2;
  ep_t a(c);
  const auto first = sent(a.step({in::send, byte_vector{1, 2, 3}}, 0))[0];
  CHECK(a.deadline() == 1000);
  CHECK(a.step({in::tick}, 999).transmit.empty());
  for (std::uint64_t at : {1000u, 2000u}) {
    const auto r = a.step({in::tick}, at);
    REQUIRE(r.transmit.size() == 1);
    CHECK(sent(r)[0] == first);
    CHECK_FALSE(r.unreachable);
    CHECK(a.deadline() == at + 1000);
  }
  const auto gone = a.step({in::tick}, 3000);
  CHECK(gone.unreachable);
  CHECK(gone.transmit.empty());
  CHECK(a.deadline() == t::no_deadline);
  CHECK_FALSE(a.can_send());
  const auto refused = a.step({in::send, byte_vector{4}}, 3100);
  CHECK(refused.window_full);
  CHECK(refused.unreachable);
  CHECK_FALSE(refused.accepted);
  CHECK(refused.transmit.empty());
  CHECK(a.sender().timeouts == 3);
}

TEST_CASE("endpoint: a full window refuses, an ACK makes room") {
  t::endpoint<4, 8> a(config_a), b(config_b);
  CHECK(a.config().gbn.window == 4);  // capped at the store's Window
  std::vector<byte_vector> p;
  for (std::uint8_t i = 0; i < 4; ++i) {
    const auto r = a.step({in::send, byte_vector{i}}, i);
    REQUIRE(r.accepted);
    p.push_back(sent(r)[0]);
  }
  CHECK_FALSE(a.can_send());
  const auto full = a.step({in::send, byte_vector{4}}, 10);
  CHECK(full.window_full);
  CHECK_FALSE(full.accepted);
  CHECK_FALSE(full.unreachable);
  CHECK(full.transmit.empty());
  for (const auto& x : p) (void)b.step({in::arrived, x}, 20);
  const auto ack = b.step({in::tick}, b.deadline());
  REQUIRE(ack.transmit.size() == 1);
  CHECK(ack.transmit[0].rh.apsn == 3);
  CHECK(a.step({in::arrived, sent(ack)[0]}, 1100).released == 4);
  const auto now_ok = a.step({in::send, byte_vector{4}}, 1200);
  CHECK(now_ok.accepted);
  CHECK(now_ok.sent_psn == t::psn<16>(4));
  // PSN 4 sits in the slot PSN 0 had: the store is indexed by PSN modulo the window.
  CHECK(bytes_of(b.step({in::arrived, sent(now_ok)[0]}, 1300).delivered) == byte_vector{4});
}

TEST_CASE("endpoint: a duplicate is dropped and acknowledged at once") {
  ep_t a(config_a), b(config_b);
  const auto p0 = sent(a.step({in::send, byte_vector{1}}, 0))[0];
  CHECK(b.step({in::arrived, p0}, 10).delivered.size() == 1);
  const auto dup = b.step({in::arrived, p0}, 20);
  CHECK(dup.dropped == t::drop_reason::duplicate);
  CHECK(dup.delivered.empty());
  REQUIRE(dup.transmit.size() == 1);
  CHECK(sent(dup)[0] == with_rcrc({0x00, 0x06, 0x00, 0x00, 0x40, 0x03, 0x00, 0x00}));
  CHECK(b.receiver().duplicates == 1);
}

TEST_CASE("endpoint: refused events change nothing and say why") {
  ep_t a(config_a), b(config_b);
  // Payloads: 1..16 bytes.
  auto r = a.step({in::send, byte_vector{}}, 0);
  CHECK(r.error.code == w::errc::bad_length);
  CHECK_FALSE(r.accepted);
  r = a.step({in::send, byte_vector(17, 1)}, 0);
  CHECK(r.error.code == w::errc::value_too_big);
  CHECK(r.error.needed == 16);
  CHECK(r.error.available == 17);
  CHECK(r.transmit.empty());
  CHECK(a.in_flight() == 0);
  CHECK(a.deadline() == t::no_deadline);

  const auto good = sent(a.step({in::send, byte_vector{5, 6}}, 10))[0];
  // Shorter than RH and R-CRC.
  r = b.step({in::arrived, w::bytes(good).first(11)}, 20);
  CHECK(r.error.code == w::errc::truncated);
  CHECK(r.error.needed == 12);
  CHECK(r.error.available == 11);
  // One bit flipped in the payload: the R-CRC no longer matches.
  byte_vector bad = good;
  bad[9] ^= 0x01;
  r = b.step({in::arrived, bad}, 30);
  CHECK(r.error.code == w::errc::bad_checksum);
  CHECK(r.error.field == "sue.rcrc");
  CHECK(r.error.offset == 10);
  CHECK(r.error.value == scaleup::test::be32(good, 10));
  // A version this library does not speak.
  r = b.step({in::arrived, pdu_of({.ver = 1, .xpuid = 5, .vc = 1, .partition = 3}, {1})}, 40);
  CHECK(r.error.code == w::errc::unsupported);
  CHECK(r.error.field == "sue.rh.ver");
  CHECK(b.rejected() == 3);
  CHECK(b.receiver().delivered == 0);
  CHECK(r.delivered.empty());
  CHECK(r.transmit.empty());
  CHECK(bytes_of(b.step({in::arrived, good}, 50).delivered) == byte_vector{5, 6});

  // Another partition: dropped and counted, its ACK not believed.
  const auto ack_elsewhere =
      pdu_of({.op = 0, .xpuid = 6, .npsn = 0, .vc = 1, .partition = 4, .apsn = 0}, {9});
  r = a.step({in::arrived, ack_elsewhere}, 60);
  CHECK(r.dropped == t::drop_reason::partition);
  CHECK(r.released == 0);
  CHECK(r.delivered.empty());
  CHECK(a.in_flight() == 1);
  CHECK(a.receiver().dropped_partition == 1);

  // A peer that packs more than this end holds (MaxPayload 32 against 16).
  t::endpoint<8, 32> big(config_a);
  r = b.step({in::arrived, sent(big.step({in::send, byte_vector(20, 1)}, 0))[0]}, 70);
  CHECK(r.error.code == w::errc::value_too_big);
  CHECK(r.error.needed == 16);
  CHECK(r.error.available == 20);
  CHECK(r.delivered.empty());
  CHECK(b.rejected() == 4);
}

TEST_CASE("endpoint: a configuration the RH cannot carry is refused at every step") {
  ep_t a({.xpuid = 1024});  // 10 bits
  CHECK(a.config_error().code == w::errc::value_too_big);
  CHECK(a.config_error().field == "sue.rh.xpuid");
  CHECK_FALSE(a.can_send());
  const auto r = a.step({in::send, byte_vector{1}}, 0);
  CHECK(r.error.field == "sue.rh.xpuid");
  CHECK_FALSE(r.accepted);
  CHECK(r.transmit.empty());
  CHECK(a.in_flight() == 0);
  ep_t p({.partition = 1024});
  CHECK(p.config_error().field == "sue.rh.partition");
}

namespace {

// One way of a channel: loss, duplication and reordering (a frame held back), from a seed.
struct channel {
  std::mt19937_64 rng;
  double loss, duplicate, reorder;
  std::deque<std::pair<std::uint64_t, byte_vector>> q;  // kept in arrival order
  std::uint64_t lost = 0;

  void put(std::uint64_t now, std::span<const t::outgoing_pdu> pdus) {
    std::uniform_real_distribution<double> u(0, 1);
    for (const auto& p : pdus) {
      if (u(rng) < loss) {
        ++lost;
        continue;
      }
      const std::uint64_t at = now + 300 + (u(rng) < reorder ? 700 : 0);
      const int copies = u(rng) < duplicate ? 2 : 1;
      for (int k = 0; k < copies; ++k) {
        const auto it = std::upper_bound(
            q.begin(), q.end(), at, [](std::uint64_t x, const auto& e) { return x < e.first; });
        q.insert(it, {at + k, bytes_of(p.bytes)});
      }
    }
  }
};

struct soak {
  std::uint32_t pdus;
  double loss, duplicate, reorder;
  std::uint64_t seed;
};

// Both ends send `pdus` numbered payloads; each must receive every number once, in order.
void run_soak(const soak& s) {
  using small = t::endpoint<16, 8>;
  small ep[2] = {small({.xpuid = 1}), small({.xpuid = 2})};
  channel to[2] = {{std::mt19937_64(s.seed), s.loss, s.duplicate, s.reorder, {}},
                   {std::mt19937_64(s.seed + 1), s.loss, s.duplicate, s.reorder, {}}};
  std::uint32_t next_out[2]{}, next_in[2]{};
  std::uint64_t now = 0;
  for (; (next_in[0] < s.pdus || next_in[1] < s.pdus) && now < 4'000'000'000; now += 40) {
    for (int i : {0, 1}) {
      auto& q = to[1 - i].q;
      for (; !q.empty() && q.front().first <= now; q.pop_front()) {
        const auto r = ep[i].step({in::arrived, q.front().second}, now);
        REQUIRE_FALSE(r.error);
        if (!r.delivered.empty()) {
          REQUIRE(r.delivered.size() == 4);
          REQUIRE(scaleup::test::be32(r.delivered, 0) == next_in[i]);
          ++next_in[i];
        }
        to[i].put(now, r.transmit);
      }
      std::uint8_t number[4] = {static_cast<std::uint8_t>(next_out[i] >> 24),
                                static_cast<std::uint8_t>(next_out[i] >> 16),
                                static_cast<std::uint8_t>(next_out[i] >> 8),
                                static_cast<std::uint8_t>(next_out[i])};
      if (next_out[i] < s.pdus || ep[i].deadline() <= now) {
        const auto r = ep[i].step({next_out[i] < s.pdus ? in::send : in::tick, number}, now);
        REQUIRE_FALSE(r.unreachable);
        next_out[i] += r.accepted;
        to[i].put(now, r.transmit);
      }
    }
  }
  CHECK(next_in[0] == s.pdus);
  CHECK(next_in[1] == s.pdus);
  for (const auto& e : ep) {
    CHECK(e.receiver().delivered == s.pdus);
    if (s.loss > 0) CHECK(e.sender().resent > 0);
    if (s.duplicate > 0) CHECK(e.receiver().duplicates > 0);
  }
  if (s.loss > 0) CHECK(to[0].lost + to[1].lost > 0);
}

}  // namespace

TEST_CASE("endpoint: two ends over lossy channels deliver everything once, in order") {
  const soak runs[] = {
      {2'000, 0.0, 0.0, 0.0, 1}, {2'000, 0.1, 0.0, 0.0, 2},
      {2'000, 0.3, 0.0, 0.0, 3}, {2'000, 0.05, 0.05, 0.1, 4},
      {2'000, 0.2, 0.1, 0.2, 5}, {70'000, 0.02, 0.01, 0.02, 6},  // past 65 536: PSNs wrap
  };
  for (const soak& s : runs) {
    CAPTURE(s.seed);
    run_soak(s);
  }
}
