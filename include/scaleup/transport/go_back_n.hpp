// The SUE reliable transport: go-back-N per connection (R2 2.1, 4.2 steps 4 and 8;
// decisions.md "SUE transport"). Pure machines: step(state, event, now) -> (state, actions).
// Time is an input; the caller keeps the PDUs (the sender says which PSNs to send again).
//
//   ACK  apsn = the highest PSN delivered in order (cumulative).
//   NACK apsn = the PSN the receiver expects; the sender goes back to it.
// The receiver NACKs once per gap and drops everything until the expected PSN arrives; it
// re-ACKs duplicates so a sender whose ACK was lost learns where it stands.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "scaleup/transport/psn.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::transport {

// Defaults for a single switch hop with a round trip under 2 us (R2 Table 1).
struct gbn_config {
  std::uint32_t window = 256;       // PDUs in flight per connection; below half the PSN space
  std::uint64_t rto = 8'000;        // ns without progress before going back to the oldest PDU
  std::uint32_t max_retries = 7;    // timeouts in a row, then the peer is unreachable
  std::uint32_t ack_every = 8;      // a stand-alone ACK after this many unacknowledged PDUs...
  std::uint64_t ack_delay = 1'000;  // ...or this long after the first one (ns)
};

// ---- sender ------------------------------------------------------------------------------

template <unsigned Bits = 16>
struct gbn_sender {
  using psn_t = psn<Bits>;
  psn_t next{};  // the PSN the next new PDU gets
  psn_t una{};   // the oldest PDU not yet acknowledged
  bool timing = false;
  std::uint64_t deadline = 0;
  std::uint32_t retries = 0;
  bool unreachable = false;
  // What a capture analysis would count.
  std::uint64_t sent = 0, resent = 0, nacks = 0, timeouts = 0;

  constexpr std::uint32_t in_flight() const noexcept { return distance(una, next); }
};

enum class sender_input : std::uint8_t {
  send,  // the caller has a new PDU: give it a PSN, or say the window is full
  ack,   // an RH carried ACK apsn
  nack,  // an RH carried NACK apsn
  tick,  // time passed: the retransmit timer may fire
};

template <unsigned Bits = 16>
struct sender_event {
  sender_input input = sender_input::tick;
  psn<Bits> apsn{};
};

template <unsigned Bits = 16>
struct sender_actions {
  bool assigned = false;  // send: the new PDU carries `psn`
  psn<Bits> psn_assigned{};
  bool window_full = false;    // send refused: keep the PDU queued
  std::uint32_t released = 0;  // PDUs acknowledged by this event: drop their buffers
  psn<Bits> released_from{};   // ...the first of them
  std::uint32_t resend = 0;    // go back: send these again, in order...
  psn<Bits> resend_from{};     // ...starting here
  bool unreachable = false;    // the retry limit was hit: move the work elsewhere
};

namespace detail {

template <unsigned Bits>
constexpr void acknowledge(gbn_sender<Bits>& s, sender_actions<Bits>& a, psn<Bits> upto,
                           std::uint64_t now, const gbn_config& c) noexcept {
  // `upto` is delivered in order; everything from una to it can go.
  const std::uint32_t n = distance(s.una, upto + 1);
  if (n == 0 || n > s.in_flight()) return;  // stale, duplicate or from the future
  a.released = n;
  a.released_from = s.una;
  s.una = upto + 1;
  s.retries = 0;
  s.timing = s.in_flight() > 0;
  s.deadline = now + c.rto;
}

template <unsigned Bits>
constexpr void go_back(gbn_sender<Bits>& s, sender_actions<Bits>& a, psn<Bits> from,
                       std::uint64_t now, const gbn_config& c) noexcept {
  a.resend_from = from;
  a.resend = distance(from, s.next);
  s.resent += a.resend;
  s.timing = a.resend > 0;
  s.deadline = now + c.rto;
}

}  // namespace detail

template <unsigned Bits>
constexpr std::pair<gbn_sender<Bits>, sender_actions<Bits>> step(
    gbn_sender<Bits> s, const sender_event<Bits>& e, std::uint64_t now,
    const gbn_config& c = {}) noexcept {
  sender_actions<Bits> a;
  switch (e.input) {
    case sender_input::send:
      if (s.unreachable || s.in_flight() >= c.window) {
        a.window_full = true;
        a.unreachable = s.unreachable;
        break;
      }
      a.assigned = true;
      a.psn_assigned = s.next;
      ++s.next;
      ++s.sent;
      if (!s.timing) {
        s.timing = true;
        s.deadline = now + c.rto;
      }
      break;
    case sender_input::ack:
      if (!s.unreachable) detail::acknowledge(s, a, e.apsn, now, c);
      break;
    case sender_input::nack:
      // The receiver expects apsn: everything before it is delivered. A NACK from outside the
      // window is stale (an old duplicate) and changes nothing.
      if (s.unreachable || !within(e.apsn, s.una, s.in_flight() + 1)) break;
      detail::acknowledge(s, a, e.apsn - 1, now, c);
      ++s.nacks;
      s.retries = 0;
      detail::go_back(s, a, e.apsn, now, c);
      break;
    case sender_input::tick:
      if (!s.timing || now < s.deadline) break;
      ++s.timeouts;
      if (++s.retries > c.max_retries) {
        s.unreachable = true;
        s.timing = false;
        a.unreachable = true;
        break;
      }
      detail::go_back(s, a, s.una, now, c);
      break;
  }
  return {s, a};
}

// ---- receiver ----------------------------------------------------------------------------

template <unsigned Bits = 16>
struct gbn_receiver {
  using psn_t = psn<Bits>;
  psn_t expected{};
  bool nacked = false;        // this gap has had its NACK: wait for `expected`
  bool nack_due = false;      // ...which has not gone out yet
  bool ack_due = false;       // an ACK should go out now, stand-alone if nothing carries it
  std::uint32_t unacked = 0;  // delivered since the last ACK went out
  bool ack_timing = false;
  std::uint64_t ack_deadline = 0;
  std::uint64_t delivered = 0, duplicates = 0, dropped_gap = 0, dropped_partition = 0;
  std::uint64_t acks_sent = 0, nacks_sent = 0;
};

enum class receiver_input : std::uint8_t {
  pdu,       // a PDU arrived with PSN npsn (R-CRC good)
  tick,      // time passed: a coalesced ACK may be due
  ack_sent,  // the pending ACK/NACK went out, piggybacked or stand-alone
};

template <unsigned Bits = 16>
struct receiver_event {
  receiver_input input = receiver_input::tick;
  psn<Bits> npsn{};
  bool partition_ok = true;  // the PDU's partition is allowed for its source
};

enum class drop_reason : std::uint8_t { none, duplicate, gap, partition };

struct receiver_actions {
  bool deliver = false;  // hand the PDU's commands to the XPU
  drop_reason dropped = drop_reason::none;
  bool ack_now = false;  // an ACK or NACK is due: piggyback it, or send an RH-only PDU
};

// What the next RH towards the peer should carry: op and apsn (op none when nothing to say).
template <unsigned Bits>
constexpr std::pair<wire::rh_op, psn<Bits>> pending_ack(const gbn_receiver<Bits>& r) noexcept {
  if (r.nack_due) return {wire::rh_op::nack, r.expected};
  if (r.ack_due || r.unacked > 0) return {wire::rh_op::ack, r.expected - 1};
  return {wire::rh_op::none, {}};
}

template <unsigned Bits>
constexpr std::pair<gbn_receiver<Bits>, receiver_actions> step(gbn_receiver<Bits> r,
                                                               const receiver_event<Bits>& e,
                                                               std::uint64_t now,
                                                               const gbn_config& c = {}) noexcept {
  receiver_actions a;
  switch (e.input) {
    case receiver_input::pdu:
      if (!e.partition_ok) {
        // Multi-tenant isolation: dropped and counted, never delivered, never acknowledged.
        a.dropped = drop_reason::partition;
        ++r.dropped_partition;
        break;
      }
      if (e.npsn == r.expected) {
        a.deliver = true;
        ++r.delivered;
        ++r.expected;
        r.nacked = r.nack_due = false;
        if (++r.unacked >= c.ack_every) {
          r.ack_due = true;
          r.ack_timing = false;  // due now: the delay no longer matters
        } else if (!r.ack_timing && !r.ack_due) {
          r.ack_timing = true;
          r.ack_deadline = now + c.ack_delay;
        }
      } else if (before(e.npsn, r.expected)) {
        a.dropped = drop_reason::duplicate;
        ++r.duplicates;
        r.ack_due = true;  // the sender may have missed our ACK: say it again
      } else {
        a.dropped = drop_reason::gap;
        ++r.dropped_gap;
        if (!r.nacked) r.nacked = r.nack_due = true;
      }
      break;
    case receiver_input::tick:
      if (r.ack_timing && now >= r.ack_deadline) {
        r.ack_due = true;
        r.ack_timing = false;  // fired: an ACK waiting for a busy link must not re-arm it
      }
      break;
    case receiver_input::ack_sent: {
      const auto [op, apsn] = pending_ack(r);
      (void)apsn;
      if (op == wire::rh_op::nack) ++r.nacks_sent;
      if (op == wire::rh_op::ack) ++r.acks_sent;
      r.nack_due = r.ack_due = r.ack_timing = false;
      r.unacked = 0;
      break;
    }
  }
  a.ack_now = r.nack_due || r.ack_due;
  return {r, a};
}

// The earliest time either machine wants a tick (0: none).
template <unsigned Bits>
constexpr std::uint64_t next_deadline(const gbn_sender<Bits>& s,
                                      const gbn_receiver<Bits>& r) noexcept {
  std::uint64_t t = 0;
  if (s.timing) t = s.deadline;
  if (r.ack_timing && (t == 0 || r.ack_deadline < t)) t = r.ack_deadline;
  return t;
}

// ---- connections -------------------------------------------------------------------------

// Which connection a PDU belongs to (decisions.md): per {port, peer, VC} by default, so
// requests and responses on different VCs never block each other; per {port, peer} as R1 had.
enum class keying : std::uint8_t { port_peer_vc, port_peer };

template <unsigned Bits = 16>
struct connection {
  gbn_sender<Bits> tx;
  gbn_receiver<Bits> rx;
};

// A fixed table of connections, one per key.
template <std::size_t Ports, std::size_t Peers, std::size_t VCs = 4, unsigned Bits = 16>
class connection_table {
 public:
  constexpr explicit connection_table(keying k = keying::port_peer_vc) noexcept : keying_(k) {}
  constexpr keying key_mode() const noexcept { return keying_; }
  constexpr connection<Bits>& at(std::size_t port, std::size_t peer, std::size_t vc) noexcept {
    return table_[index(port, peer, vc)];
  }
  constexpr const connection<Bits>& at(std::size_t port, std::size_t peer,
                                       std::size_t vc) const noexcept {
    return table_[index(port, peer, vc)];
  }

 private:
  constexpr std::size_t index(std::size_t port, std::size_t peer, std::size_t vc) const noexcept {
    return (port * Peers + peer) * VCs + (keying_ == keying::port_peer ? 0 : vc);
  }
  keying keying_;
  std::array<connection<Bits>, Ports * Peers * VCs> table_{};
};

}  // namespace scaleup::transport
