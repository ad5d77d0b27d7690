// Link Layer Retransmission (LLR) between the two ends of one link (R2 3.5.5; R2 2.1: "a switch
// feature that retransmits packets when the FCS checksum fails at the receiver"; seed digest E).
// SUE runs its own go-back-N above LLR; SUE Lite has no transport and relies on LLR alone for
// reliability (R2 2.2, Table 2: "Hop-by-hop LLR only"), so this is the only retransmission a SUE
// Lite frame gets.
//
// The seeds say what LLR is for and nothing of how it works: no sequence width, no header, no
// ACK/NACK encoding, no timers. Ultra Ethernet defines an LLR of its own, but its format is not
// in the seeds and this file does not reproduce it. What follows is designed after the classic
// link-level retry of the PCIe data link layer (sequence-numbered frames, a replay buffer, ACK
// and NAK, a replay timer, a replay counter that gives up on a dead link), with the ACK/NACK
// meaning the SUE transport already uses (decisions.md "SUE transport"):
//
//   ACK  seq = the last frame received in order (cumulative).
//   NACK seq = the frame the receiver expects; the sender replays from it.
//
// Both ends are pure machines: step(state, event, now) -> (state, actions), time is an input
// and the caller keeps the frames. The sender only numbers them and says which to send again.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "scaleup/transport/psn.hpp"
#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::transport {

// ---- wire formats (not in the seeds: every bit here is this library's choice) --------------

// The first four bits are the same in both formats, so one look at the first byte tells a data
// frame's header from a control frame.
enum class llr_type : std::uint8_t { data = 0, ack = 1, nack = 2 };  // 3 reserved

inline constexpr std::array<wire::value_name, 4> llr_type_names{{
    {0, "data"},
    {1, "ACK"},
    {2, "NACK"},
    {3, "reserved"},
}};

// Carried with every data frame and covered by that frame's FCS, so a receiver trusts `seq` only
// when the FCS is good. Where a PHY or MAC puts these four bytes (a prefix, the preamble, a tag)
// is outside the seeds; the codec does not care.
struct llr_header {
  std::uint8_t ver = 0;
  std::uint8_t type = static_cast<std::uint8_t>(llr_type::data);
  std::uint16_t rsvd = 0;
  std::uint16_t seq = 0;
  friend constexpr bool operator==(const llr_header&, const llr_header&) = default;
};

// ACK or NACK, sent on its own towards the data's sender. It may travel without an FCS of its
// own (between frames, like a PCIe DLLP), so it carries a CRC over its first four bytes: a
// corrupted ACK must read as lost, never as another sequence number.
struct llr_control {
  std::uint8_t ver = 0;
  std::uint8_t type = static_cast<std::uint8_t>(llr_type::ack);
  std::uint16_t rsvd = 0;
  std::uint16_t seq = 0;
  std::uint32_t crc = 0;
  friend constexpr bool operator==(const llr_control&, const llr_control&) = default;
};

}  // namespace scaleup::transport

namespace scaleup::wire {

template <>
struct layout<transport::llr_header> {
  using T = transport::llr_header;
  static constexpr std::string_view name = "llr";
  static constexpr std::string_view title = "LLR frame header (scaleup format)";
  static constexpr std::string_view seed = "R2 3.5.5, 2.1, 2.2 (no format in the seeds)";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::ver, {.name = "ver", .filter = "llr.ver", .bit = 0, .width = 2,
                     .description = "Version; 0 today", .seed = "scaleup",
                     .check = rule::fixed, .expect = 0}),
      member(&T::type, {.name = "type", .filter = "llr.type", .bit = 2, .width = 2,
                      .names = transport::llr_type_names,
                      .description = "0: a data frame follows", .seed = "scaleup",
                      .check = rule::fixed, .expect = 0}),
      member(&T::rsvd, {.name = "rsvd", .filter = "llr.rsvd", .bit = 4, .width = 12,
                      .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
      member(&T::seq, {.name = "seq", .filter = "llr.seq", .bit = 16, .width = 16,
                     .description = "Frame sequence number, right-aligned (12 bits by default)",
                     .seed = "R2 3.5.5; width: scaleup"}),
  };
  // clang-format on
};

template <>
struct layout<transport::llr_control> {
  using T = transport::llr_control;
  static constexpr std::string_view name = "llr.ctl";
  static constexpr std::string_view title = "LLR ACK/NACK control frame (scaleup format)";
  static constexpr std::string_view seed = "R2 3.5.5 (no format in the seeds)";
  static constexpr std::size_t size = 8;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::ver, {.name = "ver", .filter = "llr.ctl.ver", .bit = 0, .width = 2,
                     .description = "Version; 0 today", .seed = "scaleup",
                     .check = rule::fixed, .expect = 0}),
      member(&T::type, {.name = "type", .filter = "llr.ctl.type", .bit = 2, .width = 2,
                      .names = transport::llr_type_names,
                      .description = "ACK or NACK", .seed = "scaleup"}),
      member(&T::rsvd, {.name = "rsvd", .filter = "llr.ctl.rsvd", .bit = 4, .width = 12,
                      .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
      member(&T::seq, {.name = "seq", .filter = "llr.ctl.seq", .bit = 16, .width = 16,
                     .description = "ACK: last frame received in order; NACK: frame expected",
                     .seed = "scaleup; meaning as decisions.md SUE transport"}),
      member(&T::crc, {.name = "crc", .filter = "llr.ctl.crc", .bit = 32, .width = 32,
                     .type = kind::hex,
                     .description = "CRC-32 (as the R-CRC) over the first four bytes",
                     .seed = "scaleup; CRC: decisions.md R-CRC"}),
  };
  // clang-format on
};

static_assert(tiles<transport::llr_header>());
static_assert(tiles<transport::llr_control>());

}  // namespace scaleup::wire

namespace scaleup::transport {

// The CRC a control frame must carry. Computed over the table's own encoding (crc field zeroed,
// then cut off) so no bit position is written twice.
constexpr std::uint32_t llr_control_crc(llr_control c) noexcept {
  c.crc = 0;
  const auto image = wire::to_bytes(c);
  if (!image) return 0;  // a field too wide: encode refuses the frame anyway
  return wire::crc32(wire::bytes(image->data(), 4));
}

// The checks wire::decode cannot make from the table: the type must be ACK or NACK and the CRC
// must match. A frame failing either is to be treated as lost.
constexpr wire::error llr_check_control(const llr_control& c) noexcept {
  using wire::errc;
  if (c.type != static_cast<std::uint8_t>(llr_type::ack) &&
      c.type != static_cast<std::uint8_t>(llr_type::nack))
    return wire::error{.code = errc::bad_value,
                       .layer = "llr.ctl",
                       .what = "not an ACK or NACK",
                       .field = "llr.ctl.type",
                       .value = c.type};
  const std::uint32_t want = llr_control_crc(c);
  if (c.crc != want)
    return wire::error{.code = errc::bad_checksum,
                       .layer = "llr.ctl",
                       .offset = 4,
                       .what = "control CRC mismatch",
                       .field = "llr.ctl.crc",
                       .value = want};
  return {};
}

// ---- sequence numbers ----------------------------------------------------------------------

// The project's one serial-number type (decisions.md practice 7): compared with wraparound, never
// with `<`.
template <unsigned Bits>
using llr_seq = psn<Bits>;

// What a control frame says, once decoded (llr_event_of) or before it is encoded
// (llr_control_for).
template <unsigned SeqBits = 12>
struct llr_control_msg {
  llr_type type = llr_type::ack;
  llr_seq<SeqBits> seq{};
  friend constexpr bool operator==(const llr_control_msg&, const llr_control_msg&) = default;
};

// The caller's frame store has Capacity slots. An entry of the replay buffer is a sequence
// number and the slot its frame sits in.
template <unsigned Bits>
struct llr_entry {
  llr_seq<Bits> seq{};
  std::size_t slot = 0;
  friend constexpr bool operator==(const llr_entry&, const llr_entry&) = default;
};

// Consecutive replay-buffer entries: what an ACK frees, what a replay resends, what a failure
// loses. Go-back-N only ever frees from the front and resends a suffix, so a run is always
// contiguous in sequence and (modulo Capacity) in slot; iterating yields the entries in order.
template <unsigned Bits, std::size_t Capacity>
struct llr_run {
  llr_seq<Bits> first{};
  std::size_t first_slot = 0;
  std::size_t count = 0;

  constexpr bool empty() const noexcept { return count == 0; }
  constexpr std::size_t size() const noexcept { return count; }
  constexpr llr_entry<Bits> operator[](std::size_t i) const noexcept {
    return {first + static_cast<std::uint32_t>(i), (first_slot + i) % Capacity};
  }

  struct iterator {
    const llr_run* run = nullptr;
    std::size_t i = 0;
    constexpr llr_entry<Bits> operator*() const noexcept { return (*run)[i]; }
    constexpr iterator& operator++() noexcept {
      ++i;
      return *this;
    }
    friend constexpr bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.i == b.i;
    }
  };
  constexpr iterator begin() const noexcept { return {this, 0}; }
  constexpr iterator end() const noexcept { return {this, count}; }

  friend constexpr bool operator==(const llr_run& a, const llr_run& b) noexcept {
    return a.count == b.count &&
           (a.count == 0 || (a.first == b.first && a.first_slot == b.first_slot));
  }
};

// ---- timing --------------------------------------------------------------------------------

// One link, not a path: cable <= 10 m (~50 ns) and a MAC/PHY at each end (~100 ns each, the
// per-device figure of the R2 latency budget) make a round trip near 500 ns, well inside the
// 2 us end-to-end budget (seed digest E). Times are nanoseconds.
struct llr_sender_config {
  std::uint64_t replay_timeout = 1'500;  // ns without progress before replaying everything
  std::uint32_t max_replays = 4;  // replays in a row without progress; one more = link failure
};

struct llr_receiver_config {
  std::uint32_t ack_every = 8;    // an ACK after this many frames received in order...
  std::uint64_t ack_delay = 200;  // ...or this long after the first one not yet ACKed (ns)
};
// The two sides are configured on different devices; the sender's timeout must exceed the
// round trip plus the receiver's ack_delay, or a quiet link replays for nothing (harmless:
// the receiver drops the duplicates and re-ACKs; only bandwidth is lost).

// ---- sender --------------------------------------------------------------------------------

enum class llr_refusal : std::uint8_t {
  none,
  buffer_full,  // every replay-buffer slot is in use: hold the frame (back-pressure, not loss)
  link_down,    // the link has failed: nothing is sent until it is reset
};

enum class llr_failure : std::uint8_t {
  none,
  retry_limit,  // max_replays replays in a row made no progress: the link is declared down
  // The link was reset (retrained): both ends start again at sequence 0. The caller resets
  // both while the link is quiet, so no frame numbered before the reset is still on the wire
  // to be taken for a new one (as PCIe resets its counters only with the link down).
  link_reset,
};

enum class llr_sender_input : std::uint8_t {
  send,   // the caller has a new frame: number it, or refuse
  ack,    // an ACK arrived
  nack,   // a NACK arrived
  tick,   // time passed: the replay timer may have expired
  reset,  // the link was reset
};

template <unsigned SeqBits = 12>
struct llr_sender_event {
  llr_sender_input input = llr_sender_input::tick;
  llr_seq<SeqBits> seq{};

  static constexpr llr_sender_event send() noexcept { return {llr_sender_input::send, {}}; }
  static constexpr llr_sender_event ack(llr_seq<SeqBits> s) noexcept {
    return {llr_sender_input::ack, s};
  }
  static constexpr llr_sender_event nack(llr_seq<SeqBits> s) noexcept {
    return {llr_sender_input::nack, s};
  }
  static constexpr llr_sender_event tick() noexcept { return {llr_sender_input::tick, {}}; }
  static constexpr llr_sender_event reset() noexcept { return {llr_sender_input::reset, {}}; }
  // The receiver's message as the sender sees it (a link that carries no bytes, as in tests).
  static constexpr llr_sender_event from(const llr_control_msg<SeqBits>& m) noexcept {
    return {m.type == llr_type::nack ? llr_sender_input::nack : llr_sender_input::ack, m.seq};
  }
};

// In the order the caller acts on them: free `release`, send `replay` in order, then `transmit`.
template <unsigned SeqBits, std::size_t Capacity>
struct llr_sender_actions {
  std::optional<llr_entry<SeqBits>> transmit;  // send: the new frame's sequence and slot
  llr_refusal refused = llr_refusal::none;     // send: why there is no `transmit`
  llr_run<SeqBits, Capacity> release{};        // acknowledged: these slots are free again
  llr_run<SeqBits, Capacity> replay{};         // send these frames again, in this order
  llr_failure failure = llr_failure::none;
  llr_run<SeqBits, Capacity> lost{};  // failure: frames LLR will not deliver
};

// The replay buffer is a ring of Capacity slots whose entries are always consecutive sequence
// numbers (see llr_run), so the state holds it as its head and length: copying a state costs
// the same whatever the capacity. Capacity is the window; serial comparison needs it below half
// the sequence space.
template <unsigned SeqBits = 12, std::size_t Capacity = 256>
struct llr_sender {
  static_assert(SeqBits >= 2 && SeqBits <= 16, "the wire carries 16 bits of sequence");
  static_assert(Capacity >= 1 && Capacity < (std::size_t{1} << (SeqBits - 1)),
                "the window must stay below half the sequence space");
  using seq_type = llr_seq<SeqBits>;
  using run_type = llr_run<SeqBits, Capacity>;
  using event = llr_sender_event<SeqBits>;
  using actions = llr_sender_actions<SeqBits, Capacity>;
  static constexpr std::size_t capacity = Capacity;

  seq_type next{};            // the sequence the next new frame gets
  seq_type oldest{};          // the oldest frame not yet acknowledged (== next when empty)
  std::size_t in_flight = 0;  // frames in the replay buffer
  std::size_t head_slot = 0;  // the slot of `oldest`
  std::uint32_t replays = 0;  // replays since the last progress
  bool timing = false;        // the replay timer runs while anything is unacknowledged
  std::uint64_t deadline = 0;
  bool down = false;
  // What a link monitor would count.
  std::uint64_t sent = 0, resent = 0, nacks = 0, timeouts = 0, stale = 0;

  constexpr run_type outstanding() const noexcept { return {oldest, head_slot, in_flight}; }
  constexpr bool full() const noexcept { return in_flight == Capacity; }
  friend constexpr bool operator==(const llr_sender&, const llr_sender&) = default;
};

namespace detail {

template <unsigned B, std::size_t C>
constexpr void llr_release(llr_sender<B, C>& s, llr_sender_actions<B, C>& a, std::uint32_t n,
                           std::uint64_t now, const llr_sender_config& c) noexcept {
  if (n == 0) return;
  a.release = {s.oldest, s.head_slot, n};
  s.oldest = s.oldest + n;
  s.head_slot = (s.head_slot + n) % C;
  s.in_flight -= n;
  s.replays = 0;  // progress: PCIe clears REPLAY_NUM on every ACK that frees something
  s.timing = s.in_flight > 0;
  s.deadline = now + c.replay_timeout;
}

// Frames still held are reported, then forgotten: above LLR the SUE transport recovers them
// (R2 1.2: "the SUE transport provides retransmission should an unrecoverable error occur");
// SUE Lite reports them to the XPU.
template <unsigned B, std::size_t C>
constexpr void llr_give_up(llr_sender<B, C>& s, llr_sender_actions<B, C>& a,
                           llr_failure why) noexcept {
  a.failure = why;
  a.lost = s.outstanding();
  s.oldest = s.next;
  s.head_slot = (s.head_slot + s.in_flight) % C;
  s.in_flight = 0;
  s.timing = false;
}

template <unsigned B, std::size_t C>
constexpr void llr_replay_all(llr_sender<B, C>& s, llr_sender_actions<B, C>& a, std::uint64_t now,
                              const llr_sender_config& c) noexcept {
  if (s.in_flight == 0) return;
  if (s.replays >= c.max_replays) {
    s.down = true;
    llr_give_up(s, a, llr_failure::retry_limit);
    return;
  }
  ++s.replays;
  a.replay = s.outstanding();
  s.resent += s.in_flight;
  s.timing = true;
  s.deadline = now + c.replay_timeout;
}

}  // namespace detail

template <unsigned B, std::size_t C>
constexpr std::pair<llr_sender<B, C>, llr_sender_actions<B, C>> step(
    llr_sender<B, C> s, const llr_sender_event<B>& e, std::uint64_t now,
    const llr_sender_config& c = {}) noexcept {
  llr_sender_actions<B, C> a;
  switch (e.input) {
    case llr_sender_input::send:
      if (s.down) {
        a.refused = llr_refusal::link_down;
        break;
      }
      if (s.full()) {
        a.refused = llr_refusal::buffer_full;
        break;
      }
      a.transmit = llr_entry<B>{s.next, (s.head_slot + s.in_flight) % C};
      s.next = s.next + 1;
      ++s.in_flight;
      ++s.sent;
      if (!s.timing) {
        s.timing = true;
        s.deadline = now + c.replay_timeout;
      }
      break;
    case llr_sender_input::ack: {
      if (s.down) break;
      // Frees oldest..seq. An ACK naming anything outside [oldest - 1, next - 1] is stale (an
      // earlier lap) or bogus, and changes nothing.
      const std::uint32_t n = distance(s.oldest, e.seq + 1);
      if (n > s.in_flight) {
        ++s.stale;
        break;
      }
      detail::llr_release(s, a, n, now, c);
      break;
    }
    case llr_sender_input::nack: {
      if (s.down) break;
      // The receiver expects seq: everything before it arrived, everything from it on goes again.
      const std::uint32_t n = distance(s.oldest, e.seq);
      if (n > s.in_flight) {
        ++s.stale;
        break;
      }
      ++s.nacks;
      detail::llr_release(s, a, n, now, c);
      detail::llr_replay_all(s, a, now, c);
      break;
    }
    case llr_sender_input::tick:
      if (s.down || !s.timing || now < s.deadline) break;
      ++s.timeouts;
      // No ACK and no NACK: either may have been lost, so resend all, oldest first.
      detail::llr_replay_all(s, a, now, c);
      break;
    case llr_sender_input::reset: {
      // After a retry-limit failure nothing is held any more: `lost` was reported then.
      detail::llr_give_up(s, a, llr_failure::link_reset);
      llr_sender<B, C> fresh;  // counters survive, as an interface's do
      fresh.sent = s.sent;
      fresh.resent = s.resent;
      fresh.nacks = s.nacks;
      fresh.timeouts = s.timeouts;
      fresh.stale = s.stale;
      s = fresh;
      break;
    }
  }
  return {s, a};
}

// When the sender wants its next tick, if at all.
template <unsigned B, std::size_t C>
constexpr std::optional<std::uint64_t> next_deadline(const llr_sender<B, C>& s) noexcept {
  if (s.timing && !s.down) return s.deadline;
  return std::nullopt;
}

// ---- receiver ------------------------------------------------------------------------------

enum class llr_receiver_input : std::uint8_t {
  frame,  // a data frame arrived: its header's seq, and whether the caller's FCS check passed
  tick,   // time passed: a coalesced ACK may be due
  reset,  // the link was reset
};

template <unsigned SeqBits = 12>
struct llr_receiver_event {
  llr_receiver_input input = llr_receiver_input::tick;
  llr_seq<SeqBits> seq{};  // ignored when !fcs_ok: the FCS covers it
  bool fcs_ok = true;

  static constexpr llr_receiver_event frame(llr_seq<SeqBits> s, bool fcs_ok = true) noexcept {
    return {llr_receiver_input::frame, s, fcs_ok};
  }
  static constexpr llr_receiver_event corrupt() noexcept {
    return {llr_receiver_input::frame, {}, false};
  }
  static constexpr llr_receiver_event tick() noexcept {
    return {llr_receiver_input::tick, {}, true};
  }
  static constexpr llr_receiver_event reset() noexcept {
    return {llr_receiver_input::reset, {}, true};
  }
};

enum class llr_drop : std::uint8_t {
  none,
  bad_fcs,       // the FCS failed: nothing in the frame can be trusted
  out_of_order,  // a good frame ahead of the expected one: an earlier frame was lost
  duplicate,     // a good frame already delivered (a replay crossed an ACK)
};

template <unsigned SeqBits = 12>
struct llr_receiver_actions {
  std::optional<llr_seq<SeqBits>> deliver;  // hand this frame up
  llr_drop dropped = llr_drop::none;
  std::optional<llr_control_msg<SeqBits>> control;  // send this ACK or NACK to the peer now
};

template <unsigned SeqBits = 12>
struct llr_receiver {
  static_assert(SeqBits >= 2 && SeqBits <= 16, "the wire carries 16 bits of sequence");
  using seq_type = llr_seq<SeqBits>;
  using event = llr_receiver_event<SeqBits>;
  using actions = llr_receiver_actions<SeqBits>;

  seq_type expected{};
  bool nacked = false;        // this error burst has had its NACK: wait for `expected`
  std::uint32_t unacked = 0;  // delivered since the last ACK or NACK went out
  std::uint64_t ack_deadline = 0;
  std::uint64_t delivered = 0, bad_fcs = 0, out_of_order = 0, duplicates = 0;
  std::uint64_t acks_sent = 0, nacks_sent = 0;
  friend constexpr bool operator==(const llr_receiver&, const llr_receiver&) = default;
};

template <unsigned B>
constexpr std::pair<llr_receiver<B>, llr_receiver_actions<B>> step(
    llr_receiver<B> r, const llr_receiver_event<B>& e, std::uint64_t now,
    const llr_receiver_config& c = {}) noexcept {
  llr_receiver_actions<B> a;
  // A NACK for `expected` also tells the sender that everything before it arrived, so it
  // settles the ACK debt too.
  const auto nack = [&] {
    if (r.nacked) return;  // one NACK per error burst; a lost NACK is the replay timer's job
    r.nacked = true;
    r.unacked = 0;
    ++r.nacks_sent;
    a.control = llr_control_msg<B>{llr_type::nack, r.expected};
  };
  const auto ack = [&] {
    r.unacked = 0;
    ++r.acks_sent;
    a.control = llr_control_msg<B>{llr_type::ack, r.expected - 1};
  };
  switch (e.input) {
    case llr_receiver_input::frame:
      if (!e.fcs_ok) {
        a.dropped = llr_drop::bad_fcs;
        ++r.bad_fcs;
        nack();
      } else if (e.seq == r.expected) {
        a.deliver = e.seq;
        ++r.delivered;
        r.expected = r.expected + 1;
        r.nacked = false;
        if (++r.unacked >= (c.ack_every == 0 ? 1 : c.ack_every))
          ack();
        else if (r.unacked == 1)
          r.ack_deadline = now + c.ack_delay;
      } else if (before(e.seq, r.expected)) {
        // The sender replayed what we had: its ACK was lost or a NACK crossed it. Say again
        // where we stand, at once, so it stops replaying.
        a.dropped = llr_drop::duplicate;
        ++r.duplicates;
        ack();
      } else {
        a.dropped = llr_drop::out_of_order;
        ++r.out_of_order;
        nack();
      }
      break;
    case llr_receiver_input::tick:
      if (r.unacked > 0 && now >= r.ack_deadline) ack();
      break;
    case llr_receiver_input::reset: {
      llr_receiver<B> fresh;
      fresh.delivered = r.delivered;
      fresh.bad_fcs = r.bad_fcs;
      fresh.out_of_order = r.out_of_order;
      fresh.duplicates = r.duplicates;
      fresh.acks_sent = r.acks_sent;
      fresh.nacks_sent = r.nacks_sent;
      r = fresh;
      break;
    }
  }
  return {r, a};
}

template <unsigned B>
constexpr std::optional<std::uint64_t> next_deadline(const llr_receiver<B>& r) noexcept {
  if (r.unacked > 0) return r.ack_deadline;
  return std::nullopt;
}

// ---- between the machines and the wire -----------------------------------------------------

template <unsigned B>
constexpr llr_header llr_header_for(llr_seq<B> s) noexcept {
  return llr_header{0, static_cast<std::uint8_t>(llr_type::data), 0, s.value};
}

template <unsigned B>
constexpr llr_control llr_control_for(const llr_control_msg<B>& m) noexcept {
  llr_control c{0, static_cast<std::uint8_t>(m.type), 0, m.seq.value, 0};
  c.crc = llr_control_crc(c);
  return c;
}

// A decoded header's sequence, refused when it does not fit this link's width (a peer
// configured differently).
template <unsigned B>
constexpr wire::result<llr_seq<B>> llr_seq_of(const llr_header& h) noexcept {
  if (h.seq > wire::max_value(B))
    return wire::error{.code = wire::errc::value_too_big,
                       .layer = "llr",
                       .offset = 2,
                       .what = "sequence wider than the link's",
                       .field = "llr.seq",
                       .value = h.seq};
  return llr_seq<B>(h.seq);
}

// A decoded control frame as a sender event; a frame that fails the checks is to be dropped.
template <unsigned B>
constexpr wire::result<llr_sender_event<B>> llr_event_of(const llr_control& c) noexcept {
  if (const wire::error e = llr_check_control(c)) return e;
  if (c.seq > wire::max_value(B))
    return wire::error{.code = wire::errc::value_too_big,
                       .layer = "llr.ctl",
                       .offset = 2,
                       .what = "sequence wider than the link's",
                       .field = "llr.ctl.seq",
                       .value = c.seq};
  return llr_sender_event<B>::from({static_cast<llr_type>(c.type), llr_seq<B>(c.seq)});
}

}  // namespace scaleup::transport
