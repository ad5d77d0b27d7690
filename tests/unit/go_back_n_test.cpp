// Go-back-N by hand: each case walks the machines event by event and states what the spec
// (R2 4.2 steps 4 and 8, decisions.md "SUE transport") says must happen.
#include <scaleup/transport/go_back_n.hpp>
#include <scaleup/transport/partition.hpp>

#include <doctest/doctest.h>

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;
using P = t::psn<16>;

struct sender {
  t::gbn_sender<16> s;
  t::gbn_config c;
  t::sender_actions<16> last;
  t::sender_actions<16> operator()(t::sender_input in, std::uint64_t now, std::uint32_t apsn = 0) {
    auto [n, a] = t::step(s, t::sender_event<16>{in, P(apsn)}, now, c);
    s = n;
    return last = a;
  }
};

struct receiver {
  t::gbn_receiver<16> r;
  t::gbn_config c;
  t::receiver_actions operator()(t::receiver_input in, std::uint64_t now, std::uint32_t npsn = 0,
                                 bool partition_ok = true) {
    auto [n, a] = t::step(r, t::receiver_event<16>{in, P(npsn), partition_ok}, now, c);
    r = n;
    return a;
  }
  t::receiver_actions pdu(std::uint32_t npsn, std::uint64_t now = 0) {
    return (*this)(t::receiver_input::pdu, now, npsn);
  }
};

}  // namespace

TEST_CASE("psn: serial-number order across wraparound") {
  static_assert(before(P(0xFFFF), P(0)));
  static_assert(before(P(0xFFF0), P(0x0010)));
  static_assert(!before(P(0x0010), P(0xFFF0)));
  static_assert(!before(P(5), P(5)));
  static_assert(distance(P(0xFFFE), P(1)) == 3);
  static_assert(within(P(0), P(0xFFFE), 3));
  static_assert(!within(P(1), P(0xFFFE), 3));
  using S = t::psn<3>;  // 8 values
  static_assert(before(S(7), S(1)) && !before(S(1), S(5)) && before(S(1), S(4)));
}

TEST_CASE("psn: distance, before and within are reachable qualified") {
  static_assert(t::distance(P(0xFFFE), P(1)) == 3);
  static_assert(t::before(P(0xFFFF), P(0)) && !t::before(P(0), P(0xFFFF)));
  static_assert(t::within(P(0), P(0xFFFE), 3) && !t::within(P(1), P(0xFFFE), 3));
  // Ordinary function templates: their addresses can be taken, unlike hidden friends'.
  constexpr auto* d = &t::distance<16>;
  static_assert(d(P(1), P(4)) == 3);
}

TEST_CASE("gbn sender: window, cumulative ACK, release") {
  sender s;
  s.c.window = 3;
  for (std::uint32_t i = 0; i < 3; ++i) {
    const auto a = s(t::sender_input::send, 10);
    CHECK(a.assigned);
    CHECK(a.psn_assigned == P(i));
  }
  CHECK(s(t::sender_input::send, 11).window_full);
  CHECK(s.s.in_flight() == 3);
  const auto a = s(t::sender_input::ack, 20, 1);  // 0 and 1 delivered
  CHECK(a.released == 2);
  CHECK(a.released_from == P(0));
  CHECK(s.s.una == P(2));
  CHECK(s(t::sender_input::send, 21).psn_assigned == P(3));
  // An old ACK changes nothing; an ACK for a PSN never sent changes nothing.
  CHECK(s(t::sender_input::ack, 22, 0).released == 0);
  CHECK(s(t::sender_input::ack, 22, 9).released == 0);
  CHECK(s.s.una == P(2));
}

TEST_CASE("gbn sender: NACK goes back to the NACKed PSN") {
  sender s;
  for (int i = 0; i < 5; ++i) s(t::sender_input::send, 0);
  const auto a = s(t::sender_input::nack, 100, 2);  // receiver has 0, 1 and wants 2
  CHECK(a.released == 2);
  CHECK(a.resend_from == P(2));
  CHECK(a.resend == 3);  // 2, 3, 4
  CHECK(s.s.nacks == 1);
  CHECK(s.s.resent == 3);
  // A NACK outside the window is stale.
  CHECK(s(t::sender_input::nack, 101, 1).resend == 0);
  CHECK(s(t::sender_input::nack, 101, 9).resend == 0);
}

TEST_CASE("gbn sender: timeout goes back to the oldest, then the peer is unreachable") {
  sender s;
  s.c.rto = 100;
  s.c.max_retries = 2;
  s(t::sender_input::send, 0);
  s(t::sender_input::send, 0);
  CHECK(s(t::sender_input::tick, 99).resend == 0);  // not yet
  auto a = s(t::sender_input::tick, 100);
  CHECK(a.resend == 2);
  CHECK(a.resend_from == P(0));
  CHECK(s(t::sender_input::tick, 150).resend == 0);  // the timer restarted at 100
  CHECK(s(t::sender_input::tick, 200).resend == 2);
  a = s(t::sender_input::tick, 300);
  CHECK(a.unreachable);
  CHECK(a.resend == 0);
  CHECK(s.s.unreachable);
  CHECK(s(t::sender_input::send, 301).window_full);
  // Progress resets the count: an ACK between timeouts starts it again.
  sender u;
  u.c.rto = 100;
  u.c.max_retries = 1;
  u(t::sender_input::send, 0);
  u(t::sender_input::send, 0);
  u(t::sender_input::tick, 100);
  u(t::sender_input::ack, 150, 0);
  CHECK(u.s.retries == 0);
  CHECK(u(t::sender_input::tick, 250).resend == 1);
  CHECK_FALSE(u.s.unreachable);
}

TEST_CASE("gbn receiver: in order, one NACK per gap, drop until expected, re-ACK duplicates") {
  receiver r;
  r.c.ack_every = 100;
  CHECK(r.pdu(0).deliver);
  CHECK(r.pdu(1).deliver);
  auto a = r.pdu(3);  // 2 lost
  CHECK_FALSE(a.deliver);
  CHECK(a.dropped == t::drop_reason::gap);
  CHECK(a.ack_now);
  CHECK(t::pending_ack(r.r).first == w::rh_op::nack);
  CHECK(t::pending_ack(r.r).second == P(2));
  r(t::receiver_input::ack_sent, 0);
  a = r.pdu(4);  // still in the gap: dropped, no second NACK
  CHECK(a.dropped == t::drop_reason::gap);
  CHECK_FALSE(a.ack_now);
  CHECK(r.r.nacks_sent == 1);
  CHECK(r.pdu(2).deliver);  // the retransmission
  CHECK(r.pdu(3).deliver);
  a = r.pdu(1);  // a duplicate: dropped and ACKed again
  CHECK(a.dropped == t::drop_reason::duplicate);
  CHECK(a.ack_now);
  CHECK(t::pending_ack(r.r).first == w::rh_op::ack);
  CHECK(t::pending_ack(r.r).second == P(3));
}

TEST_CASE("gbn receiver: ACK coalescing by count and by delay; partitions") {
  receiver r;
  r.c.ack_every = 3;
  r.c.ack_delay = 50;
  CHECK_FALSE(r.pdu(0, 10).ack_now);
  CHECK_FALSE(r.pdu(1, 20).ack_now);
  CHECK(t::pending_ack(r.r).first == w::rh_op::ack);  // piggybacking is always welcome
  CHECK(r.pdu(2, 30).ack_now);                        // the third: a stand-alone ACK is due
  r(t::receiver_input::ack_sent, 31);
  CHECK(t::pending_ack(r.r).first == w::rh_op::none);
  CHECK_FALSE(r.pdu(3, 40).ack_now);
  CHECK_FALSE(r(t::receiver_input::tick, 89).ack_now);
  CHECK(r(t::receiver_input::tick, 90).ack_now);  // 50 ns after the first unacknowledged
  r(t::receiver_input::ack_sent, 90);
  // A PDU whose partition is not allowed: dropped, counted, not delivered, not acknowledged.
  const auto a = r(t::receiver_input::pdu, 100, 4, false);
  CHECK(a.dropped == t::drop_reason::partition);
  CHECK_FALSE(a.deliver);
  CHECK_FALSE(a.ack_now);
  CHECK(r.r.expected == P(4));
  CHECK(r.r.dropped_partition == 1);
  CHECK(t::pending_ack(r.r).first == w::rh_op::none);
}

TEST_CASE("connection table: keyed per {port, peer, VC} or per {port, peer}") {
  static t::connection_table<2, 4, 4> vc_keyed;
  vc_keyed.at(1, 2, 3).tx.next = P(7);
  CHECK(vc_keyed.at(1, 2, 0).tx.next == P(0));
  static t::connection_table<2, 4, 4> peer_keyed(t::keying::port_peer);
  peer_keyed.at(1, 2, 3).tx.next = P(7);
  CHECK(peer_keyed.at(1, 2, 0).tx.next == P(7));
  CHECK(peer_keyed.at(0, 2, 0).tx.next == P(0));
}

TEST_CASE("partition table: denied until allowed, per source") {
  static t::partition_table<8> p;
  CHECK_FALSE(p.allowed(1, 5));
  p.allow(1, 5);
  CHECK(p.allowed(1, 5));
  CHECK_FALSE(p.allowed(2, 5));  // another source
  CHECK_FALSE(p.allowed(1, 6));  // another partition
  p.allow(1, 1023);
  CHECK(p.allowed(1, 1023));
  CHECK_FALSE(p.allowed(1, 1024));  // no such partition
  CHECK_FALSE(p.allowed(8, 5));     // no such source
  p.deny(1, 5);
  CHECK_FALSE(p.allowed(1, 5));
  p.allow_all(3);
  CHECK(p.allowed(3, 0));
  CHECK(p.allowed(3, 777));
  // The verdict feeds the receiver: a denied partition is dropped, never delivered.
  t::gbn_receiver<16> r;
  const auto [n, a] =
      t::step(r, t::receiver_event<16>{t::receiver_input::pdu, P(0), p.allowed(2, 9)}, 0);
  CHECK(a.dropped == t::drop_reason::partition);
  CHECK(n.expected == P(0));
}
