// One end of one Ethernet link, between the MAC and the frames it carries: Link Layer
// Retransmission (R2 3.5.5), credit-based flow control per class (R2 3.5.7) and PFC (R2 3.5.6),
// each the machine of its own header (llr.hpp, cbfc.hpp, pfc.hpp), with the frame store LLR
// replays from. A SUE instance runs one per port; a switch model runs one per port too, so both
// ends of a link run the same code.
//
// What crosses the link besides the frames: the LLR sequence number and the CBFC class a frame
// consumed travel with it below the frames a capture holds (link_info: a MAC adds and strips
// them, as UEC's LLR puts its sequence in the preamble), and the link's own messages (LLR ACK and
// NACK, CBFC credit updates) travel between frames (link_message). The seeds give neither
// format; llr_control and cbfc_update are the library's encodings of them for a caller that
// carries them as bytes. PFC frames are real frames (MAC Control, IEEE 802.3 Annex 31D): the
// owner sends the ones pfc_out() holds and hands received ones to pfc_in().
//
// Credits and LLR (R2 3.5.5, 3.5.7): a frame consumes its class's credits once, when first sent;
// an LLR replay of it does not again. The receiver counts a frame in its buffer when LLR accepts
// it (in sequence, FCS good) and frees it when the owner drains it. A frame lost or damaged on
// the wire is replayed and accepted once, so its credits come back once: CBFC stays whole on a
// lossy link with LLR on, and without LLR a frame the link loses keeps its credits for good.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/pack/storage.hpp"
#include "scaleup/transport/cbfc.hpp"
#include "scaleup/transport/llr.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::transport {

inline constexpr std::uint64_t link_never = ~std::uint64_t{0};

struct link_config {
  bool llr = false;
  llr_sender_config llr_tx{};
  llr_receiver_config llr_rx{};
  // Bytes of frames kept for replay, at most (the store's compile-time bound caps it). A frame
  // that would not fit waits: LLR's buffer is full, as when its sequence window is.
  std::size_t replay_bytes = 64 * 1024;
  bool cbfc = false;
  // What this end grants its peer per class, and the link's agreement (cell size, VC to class):
  // by default the classes of the four VCs and of acknowledgements (ack_class) get 1024 cells.
  cbfc_receiver_config cbfc_rx = [] {
    cbfc_receiver_config c;
    c.capacity[4] = c.capacity[0];
    return c;
  }();
  // The class of frames that carry no VC of their own: stand-alone ACKs and NACKs, control
  // frames. Not a VC's: R2 3.5.6 asks that requests never block acknowledgements.
  std::uint8_t ack_class = 4;
  // PFC: the priorities and link speed the peer's pause times are read with (always obeyed);
  // pfc_send: this end also pauses its peer from its own buffer (pfc_rx's thresholds).
  pfc_config pfc{};
  bool pfc_send = false;
  pfc_receiver_config pfc_rx{};

  constexpr wire::error check() const noexcept {
    if (cbfc) {
      if (const wire::error e = cbfc_rx.check()) return e;
      if (ack_class >= cbfc_classes)
        return wire::error{.code = wire::errc::value_too_big,
                           .layer = "cbfc",
                           .what = "acknowledgement class above 31",
                           .field = "cbfc.class",
                           .value = ack_class};
    }
    if (pfc_send) return pfc_rx.check();
    return pfc.check();
  }
};

// What travels with a frame below the capture: its LLR sequence (when the sender runs LLR), the
// CBFC class it consumed, and the receiving MAC's verdict on its FCS.
struct link_info {
  bool llr = false;
  std::uint16_t seq = 0;
  std::uint8_t cls = 0;
  bool fcs_ok = true;
};

// A message of the link layer itself, from one end of a link to the other.
struct link_message {
  enum class kind : std::uint8_t { llr_ack, llr_nack, cbfc_update };
  kind what = kind::llr_ack;
  std::uint16_t seq = 0;  // LLR: last in order (ACK), expected (NACK)
  cbfc_update update{};
};

// A link with none of them: what a port is made with before it is configured.
inline constexpr link_config no_link_features{};

// A link with LLR on or off and, when `cbfc_credits` > 0, CBFC that grants that many credits to
// every VC's class and to the acknowledgements' class, and sends updates once a quarter of the
// buffer is free again, so that a small buffer turns over.
constexpr link_config link_config_of(bool llr, std::uint32_t cbfc_credits) noexcept {
  link_config c;
  c.llr = llr;
  if (cbfc_credits > 0) {
    c.cbfc = true;
    c.cbfc_rx.capacity.fill(0);
    for (const std::uint8_t cls : c.cbfc_rx.link.vc_class) c.cbfc_rx.capacity[cls] = cbfc_credits;
    c.cbfc_rx.capacity[c.ack_class] = cbfc_credits;
    c.cbfc_rx.threshold = cbfc_credits / 4 > 0 ? cbfc_credits / 4 : 1;
  }
  return c;
}

// Counters a link keeps (the instance's registers show them per port).
struct link_counters {
  std::uint64_t frames_sent = 0, frames_received = 0;
  std::uint64_t llr_replays = 0;    // frames sent again by LLR
  std::uint64_t llr_dropped = 0;    // frames LLR refused: bad FCS, out of sequence, duplicate
  std::uint64_t credit_stalls = 0;  // times a frame waited for credits that were not there
  std::uint64_t pfc_paused = 0;     // times a frame waited for a paused priority
  std::uint64_t messages_sent = 0;  // LLR ACK/NACK and credit updates sent
};

// The configuration is the owner's, by reference (instance_config::link, a fabric's): it must
// outlive the port. A link with neither LLR, CBFC nor PFC frames of its own keeps no more than
// what obeys a peer's PFC and its counters: the rest (machines, replay store, messages) lives in
// a block taken (heap_storage) or placed (fixed_storage) when one of them is configured.
template <std::size_t ReplayFrames = 64, std::size_t ReplayBytes = 64 * 1024,
          pack::storage_kind Storage = pack::fixed_storage>
class link_port {
  static_assert(ReplayFrames >= 1 && ReplayFrames < 2048,
                "LLR's window must stay below half of its 12-bit sequence space");

 public:
  using sender = llr_sender<12, ReplayFrames>;
  using receiver = llr_receiver<12>;
  static constexpr std::size_t max_messages = cbfc_classes + 2;

  explicit link_port(const link_config& c = no_link_features,
                     const pack::allocator& mem = {}) noexcept
      : flow_(mem), store_(mem) {
    configure(c);
  }
  link_port(const link_port&) = delete;
  link_port& operator=(const link_port&) = delete;

  // Sets the configuration (before the link carries anything); `c` is kept by reference.
  void configure(const link_config& c) noexcept {
    cfg_ = &c;
    error_ = c.check();
    pfc_tx_.cfg = c.pfc;
    on_ = c.llr || c.cbfc || c.pfc_send;
    if (!on_) return;
    if (!flow_.reserve(1)) {
      error_ = wire::error{.code = wire::errc::no_space,
                           .layer = "link",
                           .what = "no memory for the link layer's state"};
      on_ = false;
      return;
    }
    flow_[0] = flow_state{};
    f().cbfc_tx.cfg = c.cbfc_rx.link;
    f().cbfc_rx.cfg = c.cbfc_rx;
    f().pfc_rx.cfg = c.pfc_rx;
  }

  const link_config& config() const noexcept { return *cfg_; }
  const wire::error& config_error() const noexcept { return error_; }
  const link_counters& counters() const noexcept { return n_; }
  bool down() const noexcept { return cfg_->llr && f().tx.down; }
  // The frames LLR may still send again: those not yet acknowledged (none without LLR).
  typename sender::run_type replayable() const noexcept {
    return cfg_->llr && on_ ? f().tx.outstanding() : typename sender::run_type{};
  }

  // The link came up (or is starting): CBFC advertises this end's buffer at once.
  void start(std::uint64_t now) noexcept {
    if (cfg_->cbfc) credit_updates(step(f().cbfc_rx, cbfc_tick(), now).second);
  }

  // Whether a new frame of `bytes` may go now in class `cls` with priority `priority` (its
  // traffic class on the wire): credits, room to keep it for replay, no pause. A refusal is
  // counted once per stall.
  bool can_send(std::uint8_t cls, std::uint8_t priority, std::size_t bytes,
                std::uint64_t now) noexcept {
    if (pfc_tx_.reported != 0 && pfc_tx_.paused(priority, now)) {
      if (!pfc_stalled_) ++n_.pfc_paused;
      pfc_stalled_ = true;
      return false;
    }
    pfc_stalled_ = false;
    if (!on_) return true;
    if (cfg_->cbfc && cls < cbfc_classes &&
        f().cbfc_tx.cfg.cost(bytes) > f().cbfc_tx.available(cls)) {
      if (!credit_stalled_) ++n_.credit_stalls;
      credit_stalled_ = true;
      return false;
    }
    credit_stalled_ = false;
    if (cfg_->llr && (f().tx.down || f().tx.full() || !room(bytes))) return false;
    return true;
  }
  // Whether LLR could keep a frame of `bytes` now (its sequence window and its store).
  bool llr_room(std::size_t bytes) noexcept {
    return !cfg_->llr || (!f().tx.down && !f().tx.full() && room(bytes));
  }
  // Whether class `cls` has credit for a frame of `bytes` (the packer's eligibility). A class
  // found without is a credit stall, counted once until it has credit again.
  bool has_credit(std::uint8_t cls, std::size_t bytes) noexcept {
    if (!cfg_->cbfc || cls >= cbfc_classes) return true;
    const std::uint32_t bit = std::uint32_t{1} << cls;
    if (f().cbfc_tx.cfg.cost(bytes) <= f().cbfc_tx.available(cls)) {
      class_stalled_ &= ~bit;
      return true;
    }
    if ((class_stalled_ & bit) == 0) ++n_.credit_stalls;
    class_stalled_ |= bit;
    return false;
  }
  bool paused(std::uint8_t priority, std::uint64_t now) const noexcept {
    return pfc_tx_.reported != 0 && pfc_tx_.paused(priority, now);
  }

  // A new frame goes out (can_send said yes): its credits are taken and, with LLR, it is
  // numbered and kept for replay. The returned info travels with it.
  link_info sent(wire::bytes frame, std::uint8_t cls, std::uint64_t now) noexcept {
    link_info info{.cls = cls};
    ++n_.frames_sent;
    if (!on_) return info;
    if (cfg_->cbfc && cls < cbfc_classes) f().cbfc_tx = charge(frame.size(), cls, now);
    if (!cfg_->llr) return info;
    const auto [s, a] = step(f().tx, sender::event::send(), now, cfg_->llr_tx);
    f().tx = s;
    if (!a.transmit) return info;  // refused: can_send was not asked
    info.llr = true;
    info.seq = a.transmit->seq.value;
    keep(a.transmit->slot, frame, cls);
    return info;
  }

  // LLR: whether frames are waiting to be sent again; they go before any new frame.
  bool replay_pending() const noexcept { return on_ && f().replay_left > 0; }
  // The next frame to send again, written to `out`; its length (0: none) and its info.
  std::size_t replay(wire::mutable_bytes out, link_info& info) noexcept {
    if (!replay_pending()) return 0;
    flow_state& x = f();
    const slot_info& m = x.slots[x.replay_slot];
    if (out.size() < m.len) return 0;
    wire::copy_bytes(out.data(), &store_[m.at], m.len);
    info = link_info{.llr = true, .seq = x.replay_seq, .cls = m.cls};
    x.replay_seq = static_cast<std::uint16_t>((x.replay_seq + 1) & 0xFFF);
    x.replay_slot = (x.replay_slot + 1) % ReplayFrames;
    --x.replay_left;
    ++n_.llr_replays;
    ++n_.frames_sent;
    return m.len;
  }

  // A frame arrived with its info. true: hand it up (the owner drains it later with drained());
  // false: LLR dropped it (bad FCS, out of sequence, a duplicate), or, without LLR, its FCS is
  // bad. Control answers (ACK, NACK) go to messages().
  bool arrived(const link_info& info, std::size_t bytes, std::uint8_t priority,
               std::uint64_t now) noexcept {
    ++n_.frames_received;
    if (!on_) return info.fcs_ok;
    if (cfg_->llr) {
      const auto ev = info.llr ? receiver::event::frame(llr_seq<12>(info.seq), info.fcs_ok)
                               : receiver::event::corrupt();
      const auto [r, a] = step(f().rx, ev, now, cfg_->llr_rx);
      f().rx = r;
      if (a.control) llr_answer(*a.control);
      if (!a.deliver) {
        ++n_.llr_dropped;
        return false;
      }
    } else if (!info.fcs_ok) {
      // Nothing sends it again without LLR: the buffer it took is free at once, and its credits
      // go back, or each damaged frame would take its credits from the class for good.
      if (cfg_->cbfc && info.cls < cbfc_classes) {
        f().cbfc_rx = step(f().cbfc_rx, cbfc_arrive(info.cls, bytes), now).first;
        const auto [r, a] = step(f().cbfc_rx, cbfc_drain(info.cls, bytes), now);
        f().cbfc_rx = r;
        credit_updates(a);
      }
      return false;
    }
    if (cfg_->cbfc && info.cls < cbfc_classes) {
      const auto [r, a] = step(f().cbfc_rx, cbfc_arrive(info.cls, bytes), now);
      f().cbfc_rx = r;
      credit_updates(a);
    }
    if (cfg_->pfc_send && priority < pfc_priorities) {
      const auto [r, a] =
          step(f().pfc_rx, pfc_arrive(priority, static_cast<std::uint32_t>(bytes)), now);
      f().pfc_rx = r;
      pause_frame(a);
    }
    return true;
  }

  // A frame handed up left this end's buffer: its credits go back to the peer, its bytes leave
  // the PFC buffer.
  void drained(const link_info& info, std::size_t bytes, std::uint8_t priority,
               std::uint64_t now) noexcept {
    if (!on_) return;
    if (cfg_->cbfc && info.cls < cbfc_classes) {
      const auto [r, a] = step(f().cbfc_rx, cbfc_drain(info.cls, bytes), now);
      f().cbfc_rx = r;
      credit_updates(a);
    }
    if (cfg_->pfc_send && priority < pfc_priorities) {
      const auto [r, a] =
          step(f().pfc_rx, pfc_drain(priority, static_cast<std::uint32_t>(bytes)), now);
      f().pfc_rx = r;
      pause_frame(a);
    }
  }

  // A message from the other end of the link.
  void message(const link_message& m, std::uint64_t now) noexcept {
    if (!on_) return;
    if (m.what == link_message::kind::cbfc_update) {
      if (cfg_->cbfc) f().cbfc_tx = step(f().cbfc_tx, cbfc_credit(m.update), now).first;
      return;
    }
    if (!cfg_->llr) return;
    const auto ev = m.what == link_message::kind::llr_ack ? sender::event::ack(llr_seq<12>(m.seq))
                                                          : sender::event::nack(llr_seq<12>(m.seq));
    sender_actions(step(f().tx, ev, now, cfg_->llr_tx));
  }

  // A PFC frame from the peer (decoded): pauses or resumes priorities here.
  void pfc_in(const pfc_pdu& p, std::uint64_t now) noexcept {
    pfc_tx_ = step(pfc_tx_, pfc_received(p), now).first;
  }
  // A PFC frame this end should send its peer, if any (taken once).
  std::optional<pfc_pdu> pfc_out() noexcept {
    if (!on_) return std::nullopt;
    std::optional<pfc_pdu> p = f().pfc_pending;
    f().pfc_pending.reset();
    return p;
  }

  // Timers: LLR's replay and ACK coalescing, CBFC's update coalescing and refresh, PFC's
  // expiries and refreshes.
  void tick(std::uint64_t now) noexcept {
    if (pfc_tx_.reported != 0) pfc_tx_ = step(pfc_tx_, pfc_sender_tick(), now).first;
    if (!on_) return;
    flow_state& x = f();
    if (cfg_->llr) {
      if (x.tx.timing && now >= x.tx.deadline)
        sender_actions(step(x.tx, sender::event::tick(), now, cfg_->llr_tx));
      if (f().rx.unacked > 0 && now >= f().rx.ack_deadline) {
        const auto [r, a] = step(f().rx, receiver::event::tick(), now, cfg_->llr_rx);
        f().rx = r;
        if (a.control) llr_answer(*a.control);
      }
    }
    if (cfg_->cbfc && now >= f().cbfc_deadline)
      credit_updates(step(f().cbfc_rx, cbfc_tick(), now).second);
    if (cfg_->pfc_send && now >= f().pfc_refresh) {
      const auto [r, a] = step(f().pfc_rx, pfc_receiver_tick(), now);
      f().pfc_rx = r;
      pause_frame(a);
    }
  }
  std::uint64_t deadline() const noexcept {
    std::uint64_t t = link_never;
    for (std::size_t p = 0; pfc_tx_.reported != 0 && p < pfc_priorities; ++p)
      if (((pfc_tx_.reported >> p) & 1u) && pfc_tx_.paused_until[p] < t)
        t = pfc_tx_.paused_until[p];
    if (!on_) return t;
    const flow_state& x = f();
    if (cfg_->llr) {
      if (x.tx.timing && !x.tx.down && x.tx.deadline < t) t = x.tx.deadline;
      if (x.rx.unacked > 0 && x.rx.ack_deadline < t) t = x.rx.ack_deadline;
    }
    if (cfg_->cbfc && x.cbfc_deadline < t) t = x.cbfc_deadline;
    if (cfg_->pfc_send && x.pfc_refresh < t) t = x.pfc_refresh;
    return t;
  }

  // Messages for the other end, oldest first, until taken.
  std::span<const link_message> messages() const noexcept {
    if (!on_) return {};
    return {f().out.data(), f().out_count};
  }
  void clear_messages() noexcept {
    if (on_) f().out_count = 0;
  }

  // Frames LLR gave up on (its retry limit: the link is declared down), until taken.
  std::size_t lost() const noexcept { return on_ ? f().lost : 0; }
  void clear_lost() noexcept {
    if (on_) f().lost = 0;
  }

  // The link was reset (down and up again): LLR starts over at sequence 0 on both ends, frames
  // still held are gone; credits start over with the peer's next advertisement.
  void reset(std::uint64_t now) noexcept {
    pfc_tx_.paused_until = {};
    pfc_tx_.reported = 0;
    if (!on_) return;
    flow_state& x = f();
    if (cfg_->llr) {
      const auto [s, a] = step(x.tx, sender::event::reset(), now, cfg_->llr_tx);
      x.tx = s;
      x.lost += a.lost.size();
      x.rx = step(x.rx, receiver::event::reset(), now, cfg_->llr_rx).first;
      x.head = x.tail = x.used = 0;
      x.replay_left = 0;
    }
    if (cfg_->cbfc) {
      cbfc_sender fresh_tx;
      fresh_tx.cfg = x.cbfc_tx.cfg;
      x.cbfc_tx = fresh_tx;
      cbfc_receiver fresh_rx;
      fresh_rx.cfg = x.cbfc_rx.cfg;
      x.cbfc_rx = fresh_rx;
      x.cbfc_deadline = 0;
    }
    x.out_count = 0;
  }

  // The machines, for tests and registers (the LLR and CBFC ones exist once configured).
  const sender& llr_tx() const noexcept { return f().tx; }
  const receiver& llr_rx() const noexcept { return f().rx; }
  const cbfc_sender& cbfc_tx() const noexcept { return f().cbfc_tx; }
  const cbfc_receiver& cbfc_rx() const noexcept { return f().cbfc_rx; }
  const pfc_sender& pfc_tx() const noexcept { return pfc_tx_; }
  bool flow_on() const noexcept { return on_; }
  std::size_t memory() const noexcept {
    return sizeof(*this) + (Storage::grows ? flow_.bytes() + store_.bytes() : 0);
  }

 private:
  struct slot_info {
    std::uint32_t at = 0;
    std::uint16_t len = 0;
    std::uint8_t cls = 0;
  };
  // What LLR, CBFC and a sending PFC keep.
  struct flow_state {
    sender tx{};
    receiver rx{};
    cbfc_sender cbfc_tx{};
    cbfc_receiver cbfc_rx{};
    pfc_receiver pfc_rx{};
    std::uint64_t cbfc_deadline = 0;
    std::uint64_t pfc_refresh = link_never;
    std::optional<pfc_pdu> pfc_pending;
    // The replay store: frame bytes in a ring (store_), and where each kept frame is, by slot.
    std::array<slot_info, ReplayFrames> slots{};
    std::size_t head = 0, tail = 0, used = 0;
    std::size_t replay_left = 0, replay_slot = 0;
    std::uint16_t replay_seq = 0;
    std::size_t lost = 0;
    std::array<link_message, max_messages> out{};
    std::size_t out_count = 0;
  };
  flow_state& f() noexcept { return flow_[0]; }
  const flow_state& f() const noexcept { return flow_[0]; }

  // cbfc_sender charges a VC's class; frames of a class no VC maps to (acknowledgements) are
  // charged through a VC temporarily mapped to it.
  cbfc_sender charge(std::size_t bytes, std::uint8_t cls, std::uint64_t now) const noexcept {
    cbfc_sender s = f().cbfc_tx;
    const std::uint8_t keep = s.cfg.vc_class[0];
    s.cfg.vc_class[0] = cls;
    s = step(s, cbfc_send(0, bytes), now).first;
    s.cfg.vc_class[0] = keep;
    return s;
  }

  void sender_actions(const std::pair<sender, typename sender::actions>& r) noexcept {
    flow_state& x = f();
    x.tx = r.first;
    const auto& a = r.second;
    if (!a.release.empty()) {
      release(a.release);
      // A replay under way skips what the peer has now acknowledged.
      if (x.replay_left > 0) {
        const llr_seq<12> at(x.replay_seq);
        if (before(at, x.tx.oldest)) {
          const std::size_t skip = distance(at, x.tx.oldest);
          const std::size_t n = skip < x.replay_left ? skip : x.replay_left;
          x.replay_seq = (at + static_cast<std::uint32_t>(n)).value;
          x.replay_slot = (x.replay_slot + n) % ReplayFrames;
          x.replay_left -= n;
        }
      }
    }
    if (!a.replay.empty()) {
      x.replay_seq = a.replay.first.value;
      x.replay_slot = a.replay.first_slot;
      x.replay_left = a.replay.size();
    }
    if (a.failure != llr_failure::none) {
      x.lost += a.lost.size();
      x.replay_left = 0;
      x.head = x.tail = x.used = 0;
    }
  }

  void llr_answer(const llr_control_msg<12>& m) noexcept {
    push(link_message{.what = m.type == llr_type::nack ? link_message::kind::llr_nack
                                                       : link_message::kind::llr_ack,
                      .seq = m.seq.value});
  }
  void credit_updates(const cbfc_receiver_actions& a) noexcept {
    for (std::size_t i = 0; i < a.update_count; ++i)
      push(link_message{.what = link_message::kind::cbfc_update, .update = a.updates[i]});
    f().cbfc_deadline = a.next_deadline;
  }
  void pause_frame(const pfc_receiver_actions& a) noexcept {
    if (a.send) f().pfc_pending = a.frame;
    f().pfc_refresh = a.next_refresh;
  }
  void push(const link_message& m) noexcept {
    flow_state& x = f();
    if (x.out_count < x.out.size()) {
      x.out[x.out_count++] = m;
      ++n_.messages_sent;
    }
  }

  // ---- the replay store: a ring of bytes holding the frames LLR keeps, oldest first ----
  // Frames are kept whole: a frame goes after the newest, or at the start when the end is too
  // short (wrapped: the newest then ends before the oldest begins).
  static constexpr std::size_t npos = ~std::size_t{0};
  std::size_t capacity() const noexcept {
    return cfg_->replay_bytes < ReplayBytes ? cfg_->replay_bytes : ReplayBytes;
  }
  bool room(std::size_t bytes) noexcept {
    if (bytes > capacity()) return false;
    if (!store_.reserve(capacity())) return false;
    return fit(bytes) != npos;
  }
  std::size_t fit(std::size_t n) const noexcept {
    const flow_state& x = f();
    if (x.used == 0) return n <= capacity() ? 0 : npos;
    if (x.tail > x.head) {
      if (capacity() - x.tail >= n) return x.tail;
      return x.head >= n ? 0 : npos;
    }
    return x.head - x.tail >= n ? x.tail : npos;
  }
  void keep(std::size_t slot, wire::bytes frame, std::uint8_t cls) noexcept {
    const std::size_t at = fit(frame.size());
    if (at == npos) return;  // can_send said there was room
    flow_state& x = f();
    wire::copy_bytes(&store_[at], frame.data(), frame.size());
    x.slots[slot] =
        slot_info{static_cast<std::uint32_t>(at), static_cast<std::uint16_t>(frame.size()), cls};
    if (x.used == 0) x.head = at;
    x.tail = at + frame.size();
    x.used += frame.size();
  }
  // The oldest frames were acknowledged (or lost): their bytes are free.
  void release(const typename sender::run_type& run) noexcept {
    flow_state& x = f();
    for (const auto e : run) x.used -= x.slots[e.slot].len;
    if (x.used == 0) {
      x.head = x.tail = 0;
    } else {
      x.head = x.slots[x.tx.head_slot].at;  // the oldest frame still kept
    }
  }

  const link_config* cfg_ = nullptr;
  wire::error error_{};
  bool on_ = false;  // LLR, CBFC or PFC frames of its own: flow_ holds their state
  bool credit_stalled_ = false, pfc_stalled_ = false;
  std::uint32_t class_stalled_ = 0;
  pfc_sender pfc_tx_{};
  link_counters n_{};
  pack::table<flow_state, 1, Storage> flow_;
  pack::table<std::uint8_t, ReplayBytes, Storage> store_;
};

}  // namespace scaleup::transport
