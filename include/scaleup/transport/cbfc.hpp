// Credit-based flow control between link peers (R2 3.5.7, "standardized in the Ultra Ethernet
// Consortium"): the lossless service that go-back-N relies on (R2 2.1, "the network will be
// configured to enable lossless operation ... by using PFC or the newer CBFC").
//
// R2 says what CBFC is for: 32 classes, the VC mapped to a class, and a sender that "knows the
// credit usage of each VC" so the buffer function can use it for eligibility (R2 4.2 step 2,
// "based on packing and flow control state (for example, CBFC input)"). UEC's CBFC messages
// and their encoding are not in the seeds; what follows is scaleup's model of the same idea,
// with its own wire format for the credit update (docs/wire-format.md, "Flow control").
//
//   Credits count cells: a frame of B bytes costs ceil(B / cell_bytes) credits (64-byte cells
//   by default; cell_bytes = 1 counts bytes). Cells bound the counters' width and match how
//   switch buffers are carved, at the price of rounding each frame up to a whole cell.
//
//   Credit returns are ABSOLUTE: the receiver sends a class's credit limit, the total number of
//   credits the sender may have consumed since the link came up (modulo 2^24). The sender's
//   available credit is limit - consumed. An update that is lost is repaired by the next one,
//   which carries everything the lost one did; an incremental "+n" would leak those n credits
//   for good, and on a link where CBFC frames can be corrupted and dropped (R2 3.5.5: LLR exists
//   because they can) the class would slowly starve. Absolute values also make a duplicated or
//   reordered update harmless: one older than the limit already held is ignored.
//
// Counters wrap at 2^24 and are compared with serial-number arithmetic, so a class's buffer
// must stay below 2^23 credits (512 MiB of 64-byte cells). Both machines are pure:
// step(state, event, now) -> (state, actions); `now` is the caller's clock, in the unit of its
// other timers (nanoseconds, as the transport's).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <utility>

#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::transport {

inline constexpr std::size_t cbfc_classes = 32;  // R2 3.5.7: "CBFC supports 32 classes"
inline constexpr std::size_t cbfc_vcs = 4;       // R2 Table 1: up to 4 VCs
inline constexpr unsigned cbfc_counter_bits = 24;
inline constexpr std::uint32_t cbfc_counter_mask = (std::uint32_t{1} << cbfc_counter_bits) - 1;
inline constexpr std::uint32_t cbfc_counter_half = std::uint32_t{1} << (cbfc_counter_bits - 1);
inline constexpr std::uint64_t cbfc_never = ~std::uint64_t{0};

// Steps from `from` forward to `to` on the wrapping counter.
constexpr std::uint32_t cbfc_distance(std::uint32_t from, std::uint32_t to) noexcept {
  return (to - from) & cbfc_counter_mask;
}

// ---- the credit update on the wire -------------------------------------------------------

// One class's credit limit. A carrier frame holds one or more of them back to back; the
// carrier (Ethertype or MAC Control opcode) is a deployment parameter, as UEC's is not in the
// seeds.
struct cbfc_update {
  std::uint8_t cls = 0;
  std::uint8_t rsvd = 0;
  std::uint32_t limit = 0;  // credits the sender may have consumed since start, mod 2^24
  friend constexpr bool operator==(const cbfc_update&, const cbfc_update&) = default;
};

}  // namespace scaleup::transport

namespace scaleup::wire {

template <>
struct layout<transport::cbfc_update> {
  using T = transport::cbfc_update;
  static constexpr std::string_view name = "cbfc";
  static constexpr std::string_view title = "CBFC credit update (scaleup format)";
  static constexpr std::string_view seed =
      "R2 3.5.7 (32 classes, VC to class); format: scaleup, UEC's is not in the seeds";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::cls, {.name = "class", .filter = "cbfc.class", .bit = 0, .width = 5,
                       .description = "CBFC class the credits are for (0-31)",
                       .seed = "R2 3.5.7"}),
      member(&T::rsvd, {.name = "reserved", .filter = "cbfc.rsvd", .bit = 5, .width = 3,
                        .description = "Reserved", .seed = "scaleup format",
                        .check = rule::reserved}),
      member(&T::limit, {.name = "credit limit", .filter = "cbfc.limit", .bit = 8, .width = 24,
                         .description = "Absolute: cells the sender may have sent since start, "
                                        "mod 2^24; a lost update is repaired by the next",
                         .seed = "R2 3.5.7; absolute counter: scaleup"}),
  };
  // clang-format on
};
static_assert(tiles<transport::cbfc_update>());

}  // namespace scaleup::wire

namespace scaleup::transport {

// ---- configuration -----------------------------------------------------------------------

// What both ends of a link must agree on.
struct cbfc_config {
  std::uint32_t cell_bytes = 64;  // one credit; 0 is taken as 1 (byte credits)
  // R2 3.5.7: "The VC is used to map to the CBFC class." Default VC v -> class v.
  std::array<std::uint8_t, cbfc_vcs> vc_class{0, 1, 2, 3};

  constexpr std::uint64_t cost(std::size_t frame_bytes) const noexcept {
    const std::uint64_t cell = cell_bytes == 0 ? 1 : cell_bytes;
    return (std::uint64_t{frame_bytes} + cell - 1) / cell;
  }
};

// The receiver's buffer per class and when it returns credits. Defaults: 1024 cells (64 KiB)
// for the classes the default VC map uses, enough to keep an 800G port (R2 Table 1) sending
// across a credit loop of about 650 ns (10 m of cable both ways, the update coalescing below,
// both peers' pipelines); no buffer for the others, which are then never granted credit.
struct cbfc_receiver_config {
  cbfc_config link{};
  std::array<std::uint32_t, cbfc_classes> capacity = [] {
    std::array<std::uint32_t, cbfc_classes> c{};
    for (std::size_t i = 0; i < cbfc_vcs; ++i) c[i] = 1024;
    return c;
  }();
  // An update goes out as soon as this many credits were freed since the last one (about one
  // full SUE PDU of 64-byte cells: the sender is never held for a whole PDU's worth)...
  std::uint32_t threshold = 64;
  // ...or, with fewer freed, no later than this after the previous update: coalescing bounds
  // the update rate without holding credit back for long.
  std::uint64_t max_delay = 200;
  // Every class's limit is sent again after this long without an update, new credit or not:
  // the repair for a lost LAST update, which no later one would otherwise cover. 0: never.
  std::uint64_t refresh = 2'000;

  constexpr wire::error check() const noexcept {
    for (std::size_t c = 0; c < cbfc_classes; ++c)
      if (capacity[c] >= cbfc_counter_half)
        return wire::error{.code = wire::errc::value_too_big,
                           .layer = "cbfc",
                           .what = "class buffer must stay below 2^23 credits",
                           .field = "cbfc.class",
                           .value = c};
    for (std::size_t v = 0; v < cbfc_vcs; ++v)
      if (link.vc_class[v] >= cbfc_classes)
        return wire::error{.code = wire::errc::value_too_big,
                           .layer = "cbfc",
                           .what = "VC mapped to a class above 31",
                           .field = "cbfc.class",
                           .value = link.vc_class[v]};
    return {};
  }
};

// ---- sender ------------------------------------------------------------------------------

struct cbfc_sender {
  cbfc_config cfg{};
  std::array<std::uint32_t, cbfc_classes> consumed{};  // credits sent since start, mod 2^24
  std::array<std::uint32_t, cbfc_classes> limit{};     // the newest limit heard, mod 2^24
  std::array<std::uint64_t, cbfc_classes> heard_at{};  // when the limit last moved
  // What a capture analysis would count.
  std::uint64_t frames = 0, refused = 0, stale = 0, bad = 0;

  // No credit is assumed before the receiver's first update: its buffer is its to declare.
  constexpr std::uint32_t available(std::uint8_t cls) const noexcept {
    return cls < cbfc_classes ? cbfc_distance(consumed[cls], limit[cls]) : 0;
  }
  constexpr std::uint32_t available_vc(std::uint8_t vc) const noexcept {
    return vc < cbfc_vcs ? available(cfg.vc_class[vc]) : 0;
  }
  // The query behind the packer's eligibility (R2 4.2 step 2).
  constexpr bool can_send(std::uint8_t vc, std::size_t frame_bytes) const noexcept {
    return vc < cbfc_vcs && cfg.cost(frame_bytes) <= available_vc(vc);
  }
};

enum class cbfc_sender_input : std::uint8_t {
  send,    // a frame of frame_bytes on vc is about to go: take its credits, or refuse
  update,  // a credit update arrived
};

struct cbfc_sender_event {
  cbfc_sender_input input = cbfc_sender_input::send;
  std::uint8_t vc = 0;
  std::size_t frame_bytes = 0;
  cbfc_update update{};
};

constexpr cbfc_sender_event cbfc_send(std::uint8_t vc, std::size_t frame_bytes) noexcept {
  return {cbfc_sender_input::send, vc, frame_bytes, {}};
}
constexpr cbfc_sender_event cbfc_credit(const cbfc_update& u) noexcept {
  return {cbfc_sender_input::update, 0, 0, u};
}

struct cbfc_sender_actions {
  // send: no_space when the class lacks credits (needed/available in credits: keep the frame
  // queued), value_too_big for a VC above 3. update: bad_value for a limit behind the credits
  // already consumed (a corrupt update or a peer that restarted), value_too_big for a class or
  // limit that does not fit its field. The state is unchanged whenever err is set.
  wire::error err{};
  std::uint8_t cls = 0;
  std::uint32_t credits = 0;  // send: consumed; update: gained
  bool stale = false;         // update: older than the limit held, ignored
};

namespace detail {

constexpr wire::error cbfc_error(wire::errc code, std::string_view what, std::string_view field,
                                 std::uint64_t value, std::uint64_t needed = 0,
                                 std::uint64_t available = 0) noexcept {
  return wire::error{.code = code,
                     .layer = "cbfc",
                     .needed = static_cast<std::uint32_t>(needed),
                     .available = static_cast<std::uint32_t>(available),
                     .what = what,
                     .field = field,
                     .value = value};
}

}  // namespace detail

constexpr std::pair<cbfc_sender, cbfc_sender_actions> step(cbfc_sender s,
                                                           const cbfc_sender_event& e,
                                                           std::uint64_t now) noexcept {
  cbfc_sender_actions a;
  switch (e.input) {
    case cbfc_sender_input::send: {
      if (e.vc >= cbfc_vcs) {
        a.err = detail::cbfc_error(wire::errc::value_too_big, "VC out of range", "sue.rh.vc", e.vc);
        ++s.refused;
        break;
      }
      a.cls = s.cfg.vc_class[e.vc];
      const std::uint64_t cost = s.cfg.cost(e.frame_bytes);
      const std::uint32_t avail = s.available(a.cls);
      // Credits never go negative: a frame is all or nothing.
      if (cost > avail) {
        a.err = detail::cbfc_error(wire::errc::no_space, "not enough credits for the frame",
                                   "cbfc.class", a.cls, cost, avail);
        ++s.refused;
        break;
      }
      a.credits = static_cast<std::uint32_t>(cost);
      s.consumed[a.cls] = (s.consumed[a.cls] + a.credits) & cbfc_counter_mask;
      ++s.frames;
      break;
    }
    case cbfc_sender_input::update: {
      const cbfc_update& u = e.update;
      if (u.cls >= cbfc_classes || u.limit > cbfc_counter_mask) {
        a.err = u.cls >= cbfc_classes
                    ? detail::cbfc_error(wire::errc::value_too_big, "class above 31", "cbfc.class",
                                         u.cls)
                    : detail::cbfc_error(wire::errc::value_too_big, "limit over 24 bits",
                                         "cbfc.limit", u.limit);
        ++s.bad;
        break;
      }
      a.cls = u.cls;
      const std::uint32_t gain = cbfc_distance(s.limit[u.cls], u.limit);
      if (gain == 0) break;  // a repeat (refresh): nothing new
      if (gain >= cbfc_counter_half) {
        a.stale = true;  // overtaken by a newer update already applied
        ++s.stale;
        break;
      }
      // A good receiver never grants more than its buffer, which is below half the space.
      if (cbfc_distance(s.consumed[u.cls], u.limit) >= cbfc_counter_half) {
        a.err = detail::cbfc_error(wire::errc::bad_value,
                                   "limit behind the credits consumed or beyond any buffer",
                                   "cbfc.limit", u.limit);
        ++s.bad;
        break;
      }
      s.limit[u.cls] = u.limit;
      s.heard_at[u.cls] = now;
      a.credits = gain;
      break;
    }
  }
  return {s, a};
}

// The packer's eligibility hook (pack::packer::next): a queue is served only when its VC's
// class holds credits for the largest frame the packer could build from it, so no PDU is
// packed that then has to wait. frame_bytes_max = network header + RH + packing limit + R-CRC
// (+ FCS if the receiver buffers it), in the same bytes the sender later consumes for. CBFC is
// per link, not per destination: every destination on a VC shares its class's credits.
struct cbfc_eligibility {
  const cbfc_sender* s = nullptr;
  std::size_t frame_bytes_max = 0;
  constexpr bool operator()(std::uint16_t /*destination*/, std::uint8_t vc) const noexcept {
    return s->can_send(vc, frame_bytes_max);
  }
};

// ---- receiver ----------------------------------------------------------------------------

struct cbfc_receiver {
  cbfc_receiver_config cfg{};
  std::array<std::uint32_t, cbfc_classes> occupied{};    // credits held by undrained frames
  std::array<std::uint32_t, cbfc_classes> freed{};       // credits freed since start, mod 2^24
  std::array<std::uint32_t, cbfc_classes> sent_limit{};  // the limit last sent
  std::array<std::uint64_t, cbfc_classes> sent_at{};
  std::uint32_t advertised = 0;  // bit c: class c's first update has gone out
  std::uint64_t frames = 0, overflows = 0;

  // What the sender may have consumed: everything freed plus the whole buffer.
  constexpr std::uint32_t limit(std::uint8_t cls) const noexcept {
    return (freed[cls] + cfg.capacity[cls]) & cbfc_counter_mask;
  }
  constexpr std::uint32_t unsent(std::uint8_t cls) const noexcept {
    return cbfc_distance(sent_limit[cls], limit(cls));
  }
};

enum class cbfc_receiver_input : std::uint8_t {
  arrive,  // a frame of frame_bytes for class cls was buffered
  drain,   // the XPU took a frame of frame_bytes of class cls out of the buffer
  tick,    // time passed: a coalesced update or a refresh may be due
};

struct cbfc_receiver_event {
  cbfc_receiver_input input = cbfc_receiver_input::tick;
  std::uint8_t cls = 0;
  std::size_t frame_bytes = 0;
};

struct cbfc_receiver_actions {
  // arrive: no_space when the frame exceeds the buffer (the sender broke the credit contract:
  // the frame is dropped, dropped = true); drain: bad_value when more is drained than held.
  wire::error err{};
  bool dropped = false;
  std::array<cbfc_update, cbfc_classes> updates{};  // send these to the peer, in order
  std::uint8_t update_count = 0;
  std::uint64_t next_deadline = cbfc_never;  // tick by then
};

constexpr std::pair<cbfc_receiver, cbfc_receiver_actions> step(cbfc_receiver r,
                                                               const cbfc_receiver_event& e,
                                                               std::uint64_t now) noexcept {
  cbfc_receiver_actions a;
  if (e.input != cbfc_receiver_input::tick) {
    const std::uint64_t cost = r.cfg.link.cost(e.frame_bytes);
    if (e.cls >= cbfc_classes) {
      a.err = detail::cbfc_error(wire::errc::value_too_big, "class above 31", "cbfc.class", e.cls);
      a.dropped = e.input == cbfc_receiver_input::arrive;
    } else if (e.input == cbfc_receiver_input::arrive) {
      const std::uint32_t room = r.cfg.capacity[e.cls] - r.occupied[e.cls];
      if (cost > room) {
        a.err = detail::cbfc_error(wire::errc::no_space, "frame beyond the credits granted",
                                   "cbfc.class", e.cls, cost, room);
        a.dropped = true;
        ++r.overflows;
      } else {
        r.occupied[e.cls] += static_cast<std::uint32_t>(cost);
        ++r.frames;
      }
    } else if (cost > r.occupied[e.cls]) {
      a.err = detail::cbfc_error(wire::errc::bad_value, "drained more than the class holds",
                                 "cbfc.class", e.cls, cost, r.occupied[e.cls]);
    } else {
      r.occupied[e.cls] -= static_cast<std::uint32_t>(cost);
      r.freed[e.cls] = (r.freed[e.cls] + static_cast<std::uint32_t>(cost)) & cbfc_counter_mask;
    }
  }

  for (std::uint8_t c = 0; c < cbfc_classes; ++c) {
    if (r.cfg.capacity[c] == 0) continue;
    const std::uint32_t bit = std::uint32_t{1} << c;
    const std::uint32_t pending = r.unsent(c);
    const std::uint64_t since = now >= r.sent_at[c] ? now - r.sent_at[c] : 0;
    const bool due = (r.advertised & bit) == 0 ||
                     (pending > 0 && (pending >= r.cfg.threshold || since >= r.cfg.max_delay)) ||
                     (r.cfg.refresh != 0 && since >= r.cfg.refresh);
    if (due) {
      a.updates[a.update_count++] = cbfc_update{c, 0, r.limit(c)};
      r.sent_limit[c] = r.limit(c);
      r.sent_at[c] = now;
      r.advertised |= bit;
    }
    // The earliest tick at which this class would send.
    std::uint64_t t = cbfc_never;
    if (r.unsent(c) > 0) t = r.sent_at[c] + r.cfg.max_delay;
    if (r.cfg.refresh != 0 && r.sent_at[c] + r.cfg.refresh < t) t = r.sent_at[c] + r.cfg.refresh;
    if (t < a.next_deadline) a.next_deadline = t;
  }
  return {r, a};
}

constexpr cbfc_receiver_event cbfc_arrive(std::uint8_t cls, std::size_t frame_bytes) noexcept {
  return {cbfc_receiver_input::arrive, cls, frame_bytes};
}
constexpr cbfc_receiver_event cbfc_drain(std::uint8_t cls, std::size_t frame_bytes) noexcept {
  return {cbfc_receiver_input::drain, cls, frame_bytes};
}
constexpr cbfc_receiver_event cbfc_tick() noexcept { return {}; }

}  // namespace scaleup::transport
