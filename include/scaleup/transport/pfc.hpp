// Priority-based flow control (R2 3.5.6; IEEE 802.1Qbb, frame format IEEE 802.3 Annex 31D):
// the other way SUE's links are made lossless for go-back-N (R2 2.1).
//
// R2 3.5.6: "The SUE must use at least two lossless PFC classes - one for requests, and one for
// acknowledgments - so that requests do not block acknowledgments and cause a deadlock." The
// default map below does that: requests (VC0, R2 3.2.2) on priority 3; responses (VC1) and
// stand-alone acknowledgements on priority 4, so a receiver that pauses requests because its
// XPU is slow to drain them still lets the completions through that free the requester's
// resources. VC2 and VC3, when used, get priorities 2 and 5 of their own: VCs are independent
// traffic classes (R2 Table 1) and would not be if they shared a pause.
//
// The sender side obeys PFC frames: a priority is paused for quanta x 512 bit times at the link
// speed, a new frame replaces the running pause, quanta 0 resumes at once, and a pause that
// is not refreshed expires. The receiver side sends them: per priority, XOFF when its buffer
// occupancy reaches the XOFF threshold, XON when it has fallen to the XON threshold
// (hysteresis, so a buffer hovering at one level does not send a frame per packet), and a
// refresh of a running pause before the peer's timer runs out.
//
// Both machines are pure: step(state, event, now) -> (state, actions). `now` is the caller's
// clock; `time_unit_ps` says how long one unit is (nanoseconds by default, as the transport's
// timers), and pause durations are rounded up to whole units so a pause never ends early.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <utility>

#include "scaleup/wire/error.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::transport {

inline constexpr std::size_t pfc_priorities = 8;  // IEEE 802.1Q priorities (R2 3.5.7: "8")
inline constexpr std::size_t pfc_vcs = 4;         // R2 Table 1: up to 4 VCs
inline constexpr std::uint16_t mac_control_ethertype = 0x8808;  // IEEE 802.3 31.4.1.3
inline constexpr std::uint16_t pfc_opcode = 0x0101;             // IEEE 802.3 Annex 31D
inline constexpr std::uint16_t pause_opcode = 0x0001;           // 802.3x PAUSE, Annex 31B
// The MAC Control reserved multicast address every PFC frame is sent to (IEEE 802.3 31B.1).
inline constexpr std::uint64_t pfc_destination = 0x0180C2000001;
inline constexpr std::uint32_t pause_quantum_bits = 512;
inline constexpr std::uint64_t pfc_never = ~std::uint64_t{0};

// ---- the PFC frame -----------------------------------------------------------------------

// The MAC Control PDU after the Ethertype. Annex 31D draws the class-enable vector as two
// octets whose first is reserved; e[n], priority n's bit, is bit n of the second counted from
// its least significant bit. Eight times follow in priority order.
struct pfc_pdu {
  std::uint16_t opcode = pfc_opcode;
  std::uint8_t rsvd = 0;
  std::uint8_t enable = 0;
  std::uint16_t time0 = 0, time1 = 0, time2 = 0, time3 = 0;
  std::uint16_t time4 = 0, time5 = 0, time6 = 0, time7 = 0;

  constexpr bool enabled(std::size_t p) const noexcept {
    return p < pfc_priorities && ((enable >> p) & 1u) != 0;
  }
  constexpr std::uint16_t time(std::size_t p) const noexcept {
    const std::array<std::uint16_t, pfc_priorities> t{time0, time1, time2, time3,
                                                      time4, time5, time6, time7};
    return p < pfc_priorities ? t[p] : 0;
  }
  // Sets e[p] and time[p]: quanta 0 is XON for p.
  constexpr pfc_pdu& set(std::size_t p, std::uint16_t quanta) noexcept {
    std::uint16_t* t[pfc_priorities] = {&time0, &time1, &time2, &time3,
                                        &time4, &time5, &time6, &time7};
    if (p >= pfc_priorities) return *this;
    enable = static_cast<std::uint8_t>(enable | (1u << p));
    *t[p] = quanta;
    return *this;
  }
  friend constexpr bool operator==(const pfc_pdu&, const pfc_pdu&) = default;
};

}  // namespace scaleup::transport

namespace scaleup::wire {

template <>
struct layout<transport::pfc_pdu> {
  using T = transport::pfc_pdu;
  static constexpr std::string_view name = "pfc";
  static constexpr std::string_view title = "Priority-based Flow Control";
  static constexpr std::string_view seed = "R2 3.5.6; IEEE 802.1Qbb, IEEE 802.3 Annex 31D";
  static constexpr std::size_t size = 20;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::opcode, {.name = "opcode", .filter = "pfc.opcode", .bit = 0, .width = 16,
                          .type = kind::hex, .description = "MAC Control opcode: PFC",
                          .seed = "IEEE 802.3 Annex 31D", .check = rule::fixed,
                          .expect = 0x0101}),
      member(&T::rsvd, {.name = "reserved", .filter = "pfc.cev.rsvd", .bit = 16, .width = 8,
                        .description = "First octet of the class-enable vector",
                        .seed = "IEEE 802.3 Annex 31D", .check = rule::reserved}),
      member(&T::enable, {.name = "class-enable vector", .filter = "pfc.cev", .bit = 24,
                          .width = 8, .type = kind::hex,
                          .description = "Bit n (from the LSB) set: time[n] applies to "
                                         "priority n",
                          .seed = "R2 3.5.6; IEEE 802.3 Annex 31D"}),
      member(&T::time0, {.name = "time[0]", .filter = "pfc.time0", .bit = 32, .width = 16,
                         .description = "Pause for priority 0, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time1, {.name = "time[1]", .filter = "pfc.time1", .bit = 48, .width = 16,
                         .description = "Pause for priority 1, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time2, {.name = "time[2]", .filter = "pfc.time2", .bit = 64, .width = 16,
                         .description = "Pause for priority 2, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time3, {.name = "time[3]", .filter = "pfc.time3", .bit = 80, .width = 16,
                         .description = "Pause for priority 3, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time4, {.name = "time[4]", .filter = "pfc.time4", .bit = 96, .width = 16,
                         .description = "Pause for priority 4, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time5, {.name = "time[5]", .filter = "pfc.time5", .bit = 112, .width = 16,
                         .description = "Pause for priority 5, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time6, {.name = "time[6]", .filter = "pfc.time6", .bit = 128, .width = 16,
                         .description = "Pause for priority 6, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
      member(&T::time7, {.name = "time[7]", .filter = "pfc.time7", .bit = 144, .width = 16,
                         .description = "Pause for priority 7, in quanta of 512 bit times",
                         .seed = "IEEE 802.3 Annex 31D"}),
  };
  // clang-format on
};
static_assert(tiles<transport::pfc_pdu>());

}  // namespace scaleup::wire

namespace scaleup::transport {

// A whole PFC frame: Ethernet header (no 802.1Q tag: MAC Control frames are untagged), PDU,
// zero padding to the 60-byte minimum. No FCS: the MAC appends it (and captures may or may not
// hold it, decisions.md).
struct pfc_frame {
  std::uint64_t dst = pfc_destination;
  std::uint64_t src = 0;
  pfc_pdu pdu{};
  friend constexpr bool operator==(const pfc_frame&, const pfc_frame&) = default;
};

inline constexpr std::size_t pfc_frame_size = 60;  // 14 + 20 + 26 bytes of padding
inline constexpr std::size_t pfc_frame_min = 14 + wire::layout<pfc_pdu>::size;

constexpr wire::result<std::size_t> encode_pfc_frame(const pfc_frame& f,
                                                     wire::mutable_bytes out) noexcept {
  if (out.size() < pfc_frame_size)
    return wire::error{.code = wire::errc::no_space,
                       .layer = "pfc",
                       .needed = static_cast<std::uint32_t>(pfc_frame_size),
                       .available = static_cast<std::uint32_t>(out.size()),
                       .what = "output buffer too small"};
  const auto eth = wire::encode(wire::ethernet_header{f.dst, f.src, mac_control_ethertype}, out);
  if (!eth) return eth.err;
  const auto pdu = wire::encode(f.pdu, out.subspan(eth.value));
  if (!pdu) return pdu.err;
  for (std::size_t i = eth.value + pdu.value; i < pfc_frame_size; ++i) out[i] = 0;
  return pfc_frame_size;
}

// Decodes a frame as captured: padding and FCS, if present, are not looked at (802.3 ignores
// the reserved bytes of a MAC Control frame). The destination is kept, not checked: 802.3 lets a
// station accept MAC Control frames sent to its own unicast address as well.
constexpr wire::result<pfc_frame> decode_pfc_frame(wire::bytes frame) noexcept {
  const auto eth = wire::decode<wire::ethernet_header>(frame);
  if (!eth) return eth.err;
  if (eth->type != mac_control_ethertype)
    return wire::error{.code = wire::errc::bad_value,
                       .layer = "pfc",
                       .offset = 12,
                       .what = "not a MAC Control frame",
                       .field = "eth.type",
                       .value = eth->type};
  const std::size_t at = wire::layout<wire::ethernet_header>::size;
  if (frame.size() >= at + 2 && wire::load_be16(frame.data() + at) == pause_opcode)
    return wire::error{.code = wire::errc::unsupported,
                       .layer = "pfc",
                       .offset = static_cast<std::uint32_t>(at),
                       .what = "802.3x PAUSE, not PFC",
                       .field = "pfc.opcode",
                       .value = pause_opcode};
  const auto pdu = wire::decode<pfc_pdu>(frame, at);
  pfc_frame out{eth->dst, eth->src, pdu.value};
  if (!pdu) return {out, pdu.err};
  return out;
}

// ---- configuration -----------------------------------------------------------------------

struct pfc_config {
  std::uint32_t link_mbps = 100'000;   // the port speed: R2 Table 1 ports run 100G to 800G
  std::uint32_t time_unit_ps = 1'000;  // one unit of `now`: 1 ns
  std::array<std::uint8_t, pfc_vcs> vc_priority{3, 4, 2, 5};
  std::uint8_t ack_priority = 4;  // stand-alone acknowledgements (RH-only PDUs)
  std::uint8_t lossless = 0x3C;   // bit p: PFC enabled on priority p (2, 3, 4, 5)

  constexpr bool is_lossless(std::size_t p) const noexcept {
    return p < pfc_priorities && ((lossless >> p) & 1u) != 0;
  }
  // R2 3.5.6: requests and acknowledgements on two different lossless priorities.
  constexpr wire::error check() const noexcept {
    for (std::size_t v = 0; v < pfc_vcs; ++v)
      if (vc_priority[v] >= pfc_priorities)
        return wire::error{.code = wire::errc::value_too_big,
                           .layer = "pfc",
                           .what = "VC mapped to a priority above 7",
                           .field = "vlan.priority",
                           .value = vc_priority[v]};
    if (!is_lossless(vc_priority[0]) || !is_lossless(ack_priority))
      return wire::error{.code = wire::errc::bad_value,
                         .layer = "pfc",
                         .what = "requests and acknowledgements need lossless priorities",
                         .field = "vlan.priority",
                         .value = is_lossless(vc_priority[0]) ? ack_priority : vc_priority[0]};
    if (vc_priority[0] == ack_priority)
      return wire::error{.code = wire::errc::bad_value,
                         .layer = "pfc",
                         .what = "requests would block acknowledgements: one priority for both",
                         .field = "vlan.priority",
                         .value = ack_priority};
    return {};
  }
  // quanta x 512 bit times, in units of `now`, rounded up. A zero speed or unit is taken as 1
  // rather than divided by.
  constexpr std::uint64_t pause_time(std::uint16_t quanta) const noexcept {
    const std::uint64_t den =
        std::uint64_t{link_mbps == 0 ? 1 : link_mbps} * (time_unit_ps == 0 ? 1 : time_unit_ps);
    const std::uint64_t num = std::uint64_t{quanta} * pause_quantum_bits * 1'000'000;
    return (num + den - 1) / den;
  }
};

// ---- sender: obeys the peer's PFC frames -------------------------------------------------

struct pfc_sender {
  pfc_config cfg{};
  std::array<std::uint64_t, pfc_priorities> paused_until{};
  std::uint8_t reported = 0;  // priorities paused as of the last step's actions
  std::uint64_t frames = 0, pauses = 0, resumes = 0, expiries = 0;

  constexpr bool paused(std::size_t p, std::uint64_t now) const noexcept {
    return p < pfc_priorities && now < paused_until[p];
  }
  constexpr bool vc_paused(std::size_t vc, std::uint64_t now) const noexcept {
    return vc < pfc_vcs && paused(cfg.vc_priority[vc], now);
  }
  constexpr bool ack_paused(std::uint64_t now) const noexcept {
    return paused(cfg.ack_priority, now);
  }
};

enum class pfc_sender_input : std::uint8_t {
  frame,  // a PFC frame arrived (decoded)
  tick,   // time passed: pauses may have expired
};

struct pfc_sender_event {
  pfc_sender_input input = pfc_sender_input::tick;
  pfc_pdu pdu{};
};

struct pfc_sender_actions {
  std::uint8_t paused = 0;   // priorities that stopped since the last step
  std::uint8_t resumed = 0;  // ...and that may send again (XON or expiry)
  // Priorities a frame named though PFC is not enabled on them here: a misconfigured peer. They
  // are not obeyed: a lossy priority drops rather than pushes back.
  std::uint8_t ignored = 0;
  std::uint64_t next_expiry = pfc_never;  // tick by then
  wire::error err{};                      // a frame whose opcode is not PFC: ignored
};

constexpr std::pair<pfc_sender, pfc_sender_actions> step(pfc_sender s, const pfc_sender_event& e,
                                                         std::uint64_t now) noexcept {
  pfc_sender_actions a;
  std::uint8_t xon = 0;  // resumed by this frame, as opposed to by expiry
  if (e.input == pfc_sender_input::frame) {
    if (e.pdu.opcode != pfc_opcode) {
      a.err = wire::error{.code = wire::errc::unsupported,
                          .layer = "pfc",
                          .what = "MAC Control opcode is not PFC",
                          .field = "pfc.opcode",
                          .value = e.pdu.opcode};
    } else {
      ++s.frames;
      for (std::size_t p = 0; p < pfc_priorities; ++p) {
        if (!e.pdu.enabled(p)) continue;
        if (!s.cfg.is_lossless(p)) {
          a.ignored = static_cast<std::uint8_t>(a.ignored | (1u << p));
          continue;
        }
        // A new time replaces the running one; it does not add to it (802.3 Annex 31D).
        const std::uint16_t q = e.pdu.time(p);
        if (q == 0 && s.paused(p, now)) ++s.resumes;
        if (q == 0) xon = static_cast<std::uint8_t>(xon | (1u << p));
        if (q != 0) ++s.pauses;
        s.paused_until[p] = q == 0 ? now : now + s.cfg.pause_time(q);
      }
    }
  }
  std::uint8_t now_paused = 0;
  for (std::size_t p = 0; p < pfc_priorities; ++p) {
    if (!s.paused(p, now)) continue;
    now_paused = static_cast<std::uint8_t>(now_paused | (1u << p));
    if (s.paused_until[p] < a.next_expiry) a.next_expiry = s.paused_until[p];
  }
  a.paused = static_cast<std::uint8_t>(now_paused & ~s.reported);
  a.resumed = static_cast<std::uint8_t>(s.reported & ~now_paused);
  for (std::size_t p = 0; p < pfc_priorities; ++p)
    if (((a.resumed & ~xon) >> p) & 1u) ++s.expiries;
  s.reported = now_paused;
  return {s, a};
}

constexpr pfc_sender_event pfc_received(const pfc_pdu& pdu) noexcept {
  return {pfc_sender_input::frame, pdu};
}
constexpr pfc_sender_event pfc_sender_tick() noexcept { return {}; }

// The packer's eligibility hook (pack::packer::next): a queue is served while its VC's priority
// is not paused at `now`. PFC is per link and priority: every destination on a paused VC waits.
struct pfc_eligibility {
  const pfc_sender* s = nullptr;
  std::uint64_t now = 0;
  constexpr bool operator()(std::uint16_t /*destination*/, std::uint8_t vc) const noexcept {
    return !s->vc_paused(vc, now);
  }
};

// ---- receiver: sends PFC frames from its buffer occupancy --------------------------------

namespace detail {
constexpr std::array<std::uint32_t, pfc_priorities> pfc_filled(std::uint32_t v) noexcept {
  std::array<std::uint32_t, pfc_priorities> a{};
  a.fill(v);
  return a;
}
}  // namespace detail

// Thresholds in bytes of buffer per priority. capacity - xoff is the headroom: it must hold
// what is still coming after XOFF is decided, i.e. a frame in progress on each side, the cable
// both ways and the peer's reaction time (IEEE 802.1Qbb Annex N). The defaults leave 64 KiB,
// enough for an 800G port over R2's 10 m (R2 Table 1) with 802.3's reaction allowance.
struct pfc_receiver_config {
  pfc_config link{};
  std::array<std::uint32_t, pfc_priorities> capacity = detail::pfc_filled(128 * 1024);
  std::array<std::uint32_t, pfc_priorities> xoff = detail::pfc_filled(64 * 1024);
  std::array<std::uint32_t, pfc_priorities> xon = detail::pfc_filled(32 * 1024);
  std::uint16_t pause_quanta = 0xFFFF;  // the longest pause: refreshed, then ended by XON

  // A running pause is sent again at half its length, so one lost refresh does not let the
  // peer resume while the buffer is still above XON.
  constexpr std::uint64_t refresh() const noexcept { return link.pause_time(pause_quanta) / 2; }

  constexpr wire::error check() const noexcept {
    for (std::size_t p = 0; p < pfc_priorities; ++p)
      if (link.is_lossless(p) && !(xon[p] < xoff[p] && xoff[p] <= capacity[p]))
        return wire::error{.code = wire::errc::bad_value,
                           .layer = "pfc",
                           .what = "thresholds must satisfy xon < xoff <= capacity",
                           .value = p};
    if (pause_quanta == 0)
      return wire::error{.code = wire::errc::bad_value,
                         .layer = "pfc",
                         .what = "a pause of 0 quanta is an XON",
                         .field = "pfc.time0"};
    return link.check();
  }
};

struct pfc_receiver {
  pfc_receiver_config cfg{};
  std::array<std::uint32_t, pfc_priorities> occupied{};  // bytes buffered per priority
  std::uint8_t xoff_sent = 0;  // priorities the peer has been asked to pause
  std::array<std::uint64_t, pfc_priorities> pause_sent_at{};
  std::uint64_t frames = 0, drops = 0, pause_frames = 0;
};

enum class pfc_receiver_input : std::uint8_t {
  arrive,  // a frame of `bytes` with priority `priority` (its PCP, or DSCP mapped, R2 3.5.6)
  drain,   // `bytes` of that priority left the buffer
  tick,    // time passed: a running pause may need refreshing
};

struct pfc_receiver_event {
  pfc_receiver_input input = pfc_receiver_input::tick;
  std::uint8_t priority = 0;
  std::uint32_t bytes = 0;
};

struct pfc_receiver_actions {
  bool send = false;  // send `frame` (encode_pfc_frame) to the peer
  pfc_pdu frame{};
  // arrive: no_space when the buffer is full; the frame is dropped (dropped = true): on a
  // lossless priority that means the headroom is too small for the link. drain: bad_value when
  // more is drained than held. Priority above 7: value_too_big.
  wire::error err{};
  bool dropped = false;
  std::uint64_t next_refresh = pfc_never;  // tick by then
};

constexpr std::pair<pfc_receiver, pfc_receiver_actions> step(pfc_receiver r,
                                                             const pfc_receiver_event& e,
                                                             std::uint64_t now) noexcept {
  pfc_receiver_actions a;
  const std::size_t p = e.priority;
  if (e.input != pfc_receiver_input::tick && p >= pfc_priorities) {
    a.err = wire::error{.code = wire::errc::value_too_big,
                        .layer = "pfc",
                        .what = "priority above 7",
                        .field = "vlan.priority",
                        .value = p};
    a.dropped = e.input == pfc_receiver_input::arrive;
  } else if (e.input == pfc_receiver_input::arrive) {
    const std::uint32_t room = r.cfg.capacity[p] - r.occupied[p];
    if (e.bytes > room) {
      a.err = wire::error{.code = wire::errc::no_space,
                          .layer = "pfc",
                          .needed = e.bytes,
                          .available = room,
                          .what = "priority buffer full",
                          .field = "vlan.priority",
                          .value = p};
      a.dropped = true;
      ++r.drops;
    } else {
      r.occupied[p] += e.bytes;
      ++r.frames;
    }
  } else if (e.input == pfc_receiver_input::drain) {
    if (e.bytes > r.occupied[p])
      a.err = wire::error{.code = wire::errc::bad_value,
                          .layer = "pfc",
                          .needed = e.bytes,
                          .available = r.occupied[p],
                          .what = "drained more than the priority holds",
                          .field = "vlan.priority",
                          .value = p};
    else
      r.occupied[p] -= e.bytes;
  }

  // One frame carries every priority's change: that is what the class-enable vector is for.
  const std::uint64_t refresh = r.cfg.refresh();
  bool refresh_due = false;
  for (std::size_t q = 0; q < pfc_priorities; ++q)
    if (((r.xoff_sent >> q) & 1u) != 0 && now >= r.pause_sent_at[q] + refresh) refresh_due = true;
  for (std::size_t q = 0; q < pfc_priorities; ++q) {
    if (!r.cfg.link.is_lossless(q)) continue;
    const auto bit = static_cast<std::uint8_t>(1u << q);
    const bool off = (r.xoff_sent & bit) != 0;
    if (!off && r.occupied[q] >= r.cfg.xoff[q]) {
      a.frame.set(q, r.cfg.pause_quanta);
      r.xoff_sent = static_cast<std::uint8_t>(r.xoff_sent | bit);
      r.pause_sent_at[q] = now;
    } else if (off && r.occupied[q] <= r.cfg.xon[q]) {
      a.frame.set(q, 0);
      r.xoff_sent = static_cast<std::uint8_t>(r.xoff_sent & ~bit);
    } else if (off && refresh_due) {
      a.frame.set(q, r.cfg.pause_quanta);
      r.pause_sent_at[q] = now;
    }
  }
  a.send = a.frame.enable != 0;
  if (a.send) ++r.pause_frames;
  for (std::size_t q = 0; q < pfc_priorities; ++q)
    if (((r.xoff_sent >> q) & 1u) != 0 && r.pause_sent_at[q] + refresh < a.next_refresh)
      a.next_refresh = r.pause_sent_at[q] + refresh;
  return {r, a};
}

constexpr pfc_receiver_event pfc_arrive(std::uint8_t priority, std::uint32_t bytes) noexcept {
  return {pfc_receiver_input::arrive, priority, bytes};
}
constexpr pfc_receiver_event pfc_drain(std::uint8_t priority, std::uint32_t bytes) noexcept {
  return {pfc_receiver_input::drain, priority, bytes};
}
constexpr pfc_receiver_event pfc_receiver_tick() noexcept { return {}; }

}  // namespace scaleup::transport
