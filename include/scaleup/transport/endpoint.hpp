// A go-back-N endpoint: one connection's sender and receiver, its retransmit store and its PDU
// bytes, driven by one step function (R2 2.1, 4.2 steps 4 and 8; docs/wire-format.md, "Go-back-N
// endpoint"). The machines underneath are go_back_n.hpp's, unchanged and pure; the
// endpoint adds what every user of them otherwise writes by hand:
//
//   - a retransmit store indexed by PSN: Window slots of one PDU each, fixed, no heap;
//   - the PDU bytes: RH, payload, R-CRC (wire::emit_pdu), with the receiver's pending ACK or NACK
//     in the RH of the next PDU out (R2 4.2 step 4: "If there is an ACK or NACK to be sent, this
//     is added to the RH"), or in a stand-alone RH-only PDU when nothing else goes out;
//   - the reading of a PDU that arrived: R-CRC (wire::pdu_bounds_exact), RH (wire::decode),
//     the ACK or NACK it carries, then its payload, delivered in order or dropped;
//   - the timers: every step fires what is due at `now`, and deadline() says when the next is.
//
//   transport::endpoint<64, 256> ep({.xpuid = 1});          // window 64, payloads up to 256 B
//   auto a = ep.step({endpoint_input::send, payload}, now);  // a.transmit: PDUs for the wire
//   auto b = ep.step({endpoint_input::arrived, pdu}, now);   // b.delivered: in order, once
//   if (ep.deadline() <= now) ep.step({endpoint_input::tick}, now);
//
// The caller owns the carrier: it frames the PDUs (or hands their bytes to UDP), delivers what
// arrives for this connection (the peer's XPU id and VC pick the endpoint), and calls step again
// by deadline(). One connection, one peer, one VC: a node keeps one endpoint per connection
// (per {port, peer, VC} by default, go_back_n.hpp "connections").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/transport/psn.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::transport {

// deadline() when no timer runs.
inline constexpr std::uint64_t no_deadline = ~std::uint64_t{0};

struct endpoint_config {
  std::uint16_t xpuid = 0;      // this end's XPU id: the RH carries the source (R2 Table 5)
  std::uint8_t vc = 0;          // the connection's VC, in every RH (R2 Table 5)
  std::uint16_t partition = 0;  // in every RH; a PDU from the peer in another one is dropped
  gbn_config gbn{};             // timers and coalescing; the window is capped at Window
};

enum class endpoint_input : std::uint8_t {
  send,     // bytes: a payload (packed commands, 1..MaxPayload bytes) for the peer; copied
  arrived,  // bytes: a PDU from the peer, RH through R-CRC, as its carrier delimits it
  tick,     // nothing happened but time: fire the timers due at `now`
};

struct endpoint_event {
  endpoint_input input = endpoint_input::tick;
  wire::bytes bytes{};
};

// A PDU to put on the wire: its bytes, or its parts for a caller that frames it itself
// (wire::emit_sue_frame(params, rh, payload, out) writes the same RH, payload and R-CRC).
struct outgoing_pdu {
  wire::bytes bytes{};  // RH, payload, R-CRC
  wire::reliability_header rh{};
  wire::bytes payload{};  // empty: a stand-alone ACK or NACK
};

// What one step did. Its views point into the endpoint, which copied what they show (the
// payload sent, the payload delivered): valid until the endpoint's next step, whatever became of
// the event's bytes (decisions.md practice 15: nothing is kept by reference unless the type says
// so).
struct endpoint_actions {
  std::span<const outgoing_pdu> transmit{};  // put these on the wire, in this order
  wire::bytes delivered{};  // arrived: the payload to hand up, in PSN order, exactly once
  bool accepted = false;    // send: the payload is PSN `sent_psn`, kept until acknowledged
  psn<16> sent_psn{};
  bool window_full = false;    // send refused: offer the payload again once `released` > 0
  std::uint32_t released = 0;  // PDUs the peer acknowledged in this step: room in the window
  drop_reason dropped = drop_reason::none;  // arrived: why its payload was not delivered
  bool unreachable = false;  // the retry limit was hit (now or before): the peer is not answering
  wire::error error{};       // the event was refused: a bad payload, a damaged or foreign PDU
};

// Window: PDUs in flight (a power of two below half the PSN space); MaxPayload: payload bytes
// per PDU, sent or received. The store is Window x (MaxPayload + 12) bytes inside the object:
// with the defaults (256 PDUs of up to 4096 bytes) about 1 MB, for static storage or the heap,
// not the stack.
template <std::size_t Window = 256, std::size_t MaxPayload = wire::sue_max_payload>
class endpoint {
  static_assert(Window >= 1 && Window < psn<16>::half && (Window & (Window - 1)) == 0,
                "Window: a power of two below half the 16-bit PSN space");
  static_assert(MaxPayload >= 1 && MaxPayload <= wire::sue_max_payload,
                "MaxPayload: 1 to 4096 bytes (R2 3.3)");

 public:
  static constexpr std::size_t slot_bytes = wire::pdu_size(MaxPayload);

  constexpr explicit endpoint(const endpoint_config& c = {}) noexcept : cfg_(c) {
    if (cfg_.gbn.window > Window) cfg_.gbn.window = static_cast<std::uint32_t>(Window);
    // Every RH this end writes holds these values: an xpuid or partition too wide for its field
    // is refused once, here, and every step reports it instead of sending.
    std::array<std::uint8_t, 8> rh{};
    if (const auto r = wire::encode(stamp(wire::rh_op::none, {}, {}), rh); !r)
      config_error_ = r.err;
  }

  // One event at `now` (ns, never decreasing), then every timer due at `now`.
  // The machines are reached qualified (transport::step): this member hides the name.
  [[nodiscard]] constexpr endpoint_actions step(const endpoint_event& e,
                                                std::uint64_t now) noexcept {
    endpoint_actions a;
    run_ = false;
    if (config_error_) {
      a.error = config_error_;
      return a;
    }
    switch (e.input) {
      case endpoint_input::send:
        send(e.bytes, now, a);
        break;
      case endpoint_input::arrived:
        arrived(e.bytes, now, a);
        break;
      case endpoint_input::tick:
        break;
    }
    // The timers (R2 4.2 step 4b: go back on a timeout; a coalesced ACK's delay).
    apply(transport::step(tx_, sender_event<16>{sender_input::tick, {}}, now, cfg_.gbn), a);
    rx_ = transport::step(rx_, receiver_event<16>{receiver_input::tick, {}, true}, now, cfg_.gbn)
              .first;
    a.transmit = emit_all();
    a.unreachable = tx_.unreachable;
    return a;
  }

  // When to step next with nothing else to do (a tick): no_deadline while no timer runs.
  constexpr std::uint64_t deadline() const noexcept {
    std::uint64_t t = no_deadline;
    if (tx_.timing) t = tx_.deadline;
    if (rx_.ack_timing && rx_.ack_deadline < t) t = rx_.ack_deadline;
    return t;
  }

  constexpr std::uint32_t in_flight() const noexcept { return tx_.in_flight(); }
  constexpr bool can_send() const noexcept {
    return !config_error_ && !tx_.unreachable && tx_.in_flight() < cfg_.gbn.window;
  }
  // The machines' state and counters (sent, resent, nacks, timeouts; delivered, duplicates, ...).
  constexpr const gbn_sender<16>& sender() const noexcept { return tx_; }
  constexpr const gbn_receiver<16>& receiver() const noexcept { return rx_; }
  constexpr const endpoint_config& config() const noexcept { return cfg_; }
  constexpr const wire::error& config_error() const noexcept { return config_error_; }
  constexpr std::uint64_t rejected() const noexcept { return rejected_; }  // refused PDUs

 private:
  constexpr wire::reliability_header stamp(wire::rh_op op, psn<16> npsn,
                                           psn<16> apsn) const noexcept {
    return wire::reliability_header{.op = static_cast<std::uint8_t>(op),
                                    .xpuid = cfg_.xpuid,
                                    .npsn = npsn.value,
                                    .vc = cfg_.vc,
                                    .partition = cfg_.partition,
                                    .apsn = apsn.value};
  }

  static constexpr std::size_t slot(psn<16> p) noexcept { return p.value & (Window - 1); }

  // PSNs from `from` to the sender's next go out (again). Every run ends there: a new PDU takes
  // the next PSN, and going back resends up to it; so two runs in one step are one.
  constexpr void run_from(psn<16> from) noexcept {
    if (!run_ || before(from, run_start_)) run_start_ = from;
    run_ = true;
  }

  constexpr void apply(const std::pair<gbn_sender<16>, sender_actions<16>>& r,
                       endpoint_actions& a) noexcept {
    tx_ = r.first;
    a.released += r.second.released;  // their slots are free: nothing to do
    if (r.second.resend > 0) run_from(r.second.resend_from);
  }

  constexpr void send(wire::bytes payload, std::uint64_t now, endpoint_actions& a) noexcept {
    if (payload.empty() || payload.size() > MaxPayload) {
      // An empty payload would read as a stand-alone ACK and take no PSN.
      a.error =
          wire::error{.code = payload.empty() ? wire::errc::bad_length : wire::errc::value_too_big,
                      .layer = "sue",
                      .needed = static_cast<std::uint32_t>(MaxPayload),
                      .available = static_cast<std::uint32_t>(payload.size()),
                      .what = payload.empty() ? "empty payload" : "payload over MaxPayload"};
      return;
    }
    const auto [tx, sa] =
        transport::step(tx_, sender_event<16>{sender_input::send, {}}, now, cfg_.gbn);
    tx_ = tx;
    if (!sa.assigned) {
      a.window_full = true;
      return;
    }
    a.accepted = true;
    a.sent_psn = sa.psn_assigned;
    const std::size_t s = slot(sa.psn_assigned);
    len_[s] = static_cast<std::uint16_t>(payload.size());
    wire::copy_bytes(store_[s].data() + 8, payload.data(), payload.size());
    run_from(sa.psn_assigned);
  }

  constexpr void arrived(wire::bytes pdu, std::uint64_t now, endpoint_actions& a) noexcept {
    // RH, then R-CRC: a PDU of its own needs both, a stand-alone ACK has no payload between.
    const std::size_t least = wire::pdu_size(0);
    if (pdu.size() < least) {
      a.error = wire::truncated("sue", 0, least, pdu.size(), "PDU shorter than RH and R-CRC");
      ++rejected_;
      return;
    }
    const wire::pdu_bounds b = wire::pdu_bounds_exact(pdu);
    if (b.status != wire::rcrc_status::good) {
      a.error = wire::error{.code = wire::errc::bad_checksum,
                            .layer = "sue.rcrc",
                            .offset = static_cast<std::uint32_t>(b.payload_end),
                            .what = "R-CRC does not match: the PDU is dropped",
                            .field = "sue.rcrc",
                            .value = b.rcrc};
      ++rejected_;
      return;
    }
    const auto rh = wire::decode<wire::reliability_header>(pdu);
    if (!rh || rh->ver != 0) {
      a.error = !rh ? rh.err
                    : wire::error{.code = wire::errc::unsupported,
                                  .layer = "sue.rh",
                                  .what = "RH version other than 0",
                                  .field = "sue.rh.ver",
                                  .value = rh->ver};
      ++rejected_;
      return;
    }
    const std::size_t payload = b.payload_end - wire::layout<wire::reliability_header>::size;
    if (payload > MaxPayload) {
      // The peer packs more than this end holds: a configuration mismatch, reported.
      a.error = wire::error{.code = wire::errc::value_too_big,
                            .layer = "sue",
                            .offset = 8,
                            .needed = static_cast<std::uint32_t>(MaxPayload),
                            .available = static_cast<std::uint32_t>(payload),
                            .what = "payload over MaxPayload"};
      ++rejected_;
      return;
    }
    const bool has_payload = payload > 0;
    if (rh->partition != cfg_.partition) {
      // Isolation (R2 4.1): nothing of it is believed, its ACK included; a payload is counted.
      a.dropped = drop_reason::partition;
      if (has_payload)
        rx_ =
            transport::step(rx_, receiver_event<16>{receiver_input::pdu, psn<16>(rh->npsn), false},
                            now, cfg_.gbn)
                .first;
      return;
    }
    // The reverse direction's acknowledgement, carried in this RH.
    if (rh->carries_ack() || rh->carries_nack()) {
      const sender_input in = rh->carries_ack() ? sender_input::ack : sender_input::nack;
      apply(transport::step(tx_, sender_event<16>{in, psn<16>(rh->apsn)}, now, cfg_.gbn), a);
    }
    if (!has_payload) return;  // a stand-alone ACK/NACK takes no PSN
    const auto [rx, ra] = transport::step(
        rx_, receiver_event<16>{receiver_input::pdu, psn<16>(rh->npsn), true}, now, cfg_.gbn);
    rx_ = rx;
    a.dropped = ra.dropped;
    if (ra.deliver) {
      wire::copy_bytes(delivered_.data(), pdu.data() + 8, payload);
      a.delivered = wire::bytes(delivered_.data(), payload);
    }
  }

  // The RH of the next PDU out carries whatever the receiver has to say, once.
  constexpr wire::reliability_header next_rh(psn<16> npsn) noexcept {
    const auto [op, apsn] = pending_ack(rx_);
    if (op != wire::rh_op::none)
      rx_ =
          transport::step(rx_, receiver_event<16>{receiver_input::ack_sent, {}, true}, 0, cfg_.gbn)
              .first;
    return stamp(op, npsn, apsn);
  }

  // Writes the step's PDUs: the run (each slot's RH stamped afresh and its R-CRC recomputed in
  // place), or, when no PDU carries a due ACK or NACK, a stand-alone RH-only one.
  constexpr std::span<const outgoing_pdu> emit_all() noexcept {
    std::size_t n = 0;
    if (run_)
      for (psn<16> p = run_start_; p != tx_.next; ++p) {
        auto& s = store_[slot(p)];
        const wire::bytes payload(s.data() + 8, len_[slot(p)]);
        const wire::reliability_header rh = next_rh(p);
        // The payload is already in place: emit_pdu's copy of it onto itself changes nothing.
        const auto w = wire::emit_pdu(rh, payload, s);
        out_[n++] = outgoing_pdu{wire::bytes(s.data(), w.value), rh, payload};
      }
    if (n == 0 && (rx_.ack_due || rx_.nack_due)) {
      // Takes no PSN: its npsn is the sender's next, for information.
      const wire::reliability_header rh = next_rh(tx_.next);
      const auto w = wire::emit_pdu(rh, {}, ack_only_);
      out_[n++] = outgoing_pdu{wire::bytes(ack_only_.data(), w.value), rh, {}};
    }
    return std::span<const outgoing_pdu>(out_.data(), n);
  }

  endpoint_config cfg_;
  wire::error config_error_{};
  gbn_sender<16> tx_{};
  gbn_receiver<16> rx_{};
  std::uint64_t rejected_ = 0;
  bool run_ = false;
  psn<16> run_start_{};
  std::array<std::array<std::uint8_t, slot_bytes>, Window> store_{};
  std::array<std::uint16_t, Window> len_{};
  std::array<std::uint8_t, wire::pdu_size(0)> ack_only_{};
  std::array<std::uint8_t, MaxPayload> delivered_{};
  std::array<outgoing_pdu, Window + 1> out_{};
};

}  // namespace scaleup::transport
