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

// Counters a link keeps (the instance's registers show them per port).
struct link_counters {
  std::uint64_t frames_sent = 0, frames_received = 0;
  std::uint64_t llr_replays = 0;    // frames sent again by LLR
  std::uint64_t llr_dropped = 0;    // frames LLR refused: bad FCS, out of sequence, duplicate
  std::uint64_t credit_stalls = 0;  // times a frame waited for credits that were not there
  std::uint64_t pfc_paused = 0;     // times a frame waited for a paused priority
  std::uint64_t messages_sent = 0;  // LLR ACK/NACK and credit updates sent
};

template <std::size_t ReplayFrames = 64, std::size_t ReplayBytes = 64 * 1024,
          pack::storage_kind Storage = pack::fixed_storage>
class link_port {
  static_assert(ReplayFrames >= 1 && ReplayFrames < 2048,
                "LLR's window must stay below half of its 12-bit sequence space");

 public:
  using sender = llr_sender<12, ReplayFrames>;
  using receiver = llr_receiver<12>;
  static constexpr std::size_t max_messages = cbfc_classes + 2;

  explicit link_port(const link_config& c = {}, const pack::allocator& mem = {}) noexcept
      : store_(mem) {
    configure(c);
  }
  link_port(const link_port&) = delete;
  link_port& operator=(const link_port&) = delete;

  // Sets the configuration (before the link carries anything).
  void configure(const link_config& c) noexcept {
    cfg_ = c;
    if (cfg_.replay_bytes > ReplayBytes) cfg_.replay_bytes = ReplayBytes;
    error_ = cfg_.check();
    cbfc_tx_.cfg = cfg_.cbfc_rx.link;
    cbfc_rx_.cfg = cfg_.cbfc_rx;
    pfc_tx_.cfg = cfg_.pfc;
    pfc_rx_.cfg = cfg_.pfc_rx;
  }

  const link_config& config() const noexcept { return cfg_; }
  const wire::error& config_error() const noexcept { return error_; }
  const link_counters& counters() const noexcept { return n_; }
  bool down() const noexcept { return cfg_.llr && tx_.down; }

  // The link came up (or is starting): CBFC advertises this end's buffer at once.
  void start(std::uint64_t now) noexcept {
    if (cfg_.cbfc) credit_updates(step(cbfc_rx_, cbfc_tick(), now).second, now);
  }

  // Whether a new frame of `bytes` may go now in class `cls` with priority `priority` (its
  // traffic class on the wire): credits, room to keep it for replay, no pause. A refusal is
  // counted once per stall.
  bool can_send(std::uint8_t cls, std::uint8_t priority, std::size_t bytes,
                std::uint64_t now) noexcept {
    if (pfc_tx_.paused(priority, now)) {
      if (!pfc_stalled_) ++n_.pfc_paused;
      pfc_stalled_ = true;
      return false;
    }
    pfc_stalled_ = false;
    if (cfg_.cbfc && cls < cbfc_classes && cbfc_tx_.cfg.cost(bytes) > cbfc_tx_.available(cls)) {
      if (!credit_stalled_) ++n_.credit_stalls;
      credit_stalled_ = true;
      return false;
    }
    credit_stalled_ = false;
    if (cfg_.llr && (tx_.down || tx_.full() || !room(bytes))) return false;
    return true;
  }
  // Whether LLR could keep a frame of `bytes` now (its sequence window and its store).
  bool llr_room(std::size_t bytes) noexcept {
    return !cfg_.llr || (!tx_.down && !tx_.full() && room(bytes));
  }
  // Whether class `cls` has credit for a frame of `bytes` (the packer's eligibility). A class
  // found without is a credit stall, counted once until it has credit again.
  bool has_credit(std::uint8_t cls, std::size_t bytes) noexcept {
    if (!cfg_.cbfc || cls >= cbfc_classes) return true;
    const std::uint32_t bit = std::uint32_t{1} << cls;
    if (cbfc_tx_.cfg.cost(bytes) <= cbfc_tx_.available(cls)) {
      class_stalled_ &= ~bit;
      return true;
    }
    if ((class_stalled_ & bit) == 0) ++n_.credit_stalls;
    class_stalled_ |= bit;
    return false;
  }
  bool paused(std::uint8_t priority, std::uint64_t now) const noexcept {
    return pfc_tx_.paused(priority, now);
  }

  // A new frame goes out (can_send said yes): its credits are taken and, with LLR, it is
  // numbered and kept for replay. The returned info travels with it.
  link_info sent(wire::bytes frame, std::uint8_t cls, std::uint64_t now) noexcept {
    link_info info{.cls = cls};
    ++n_.frames_sent;
    if (cfg_.cbfc && cls < cbfc_classes) {
      cbfc_sender_event e = cbfc_send(0, frame.size());
      // The machine takes a VC; the class is mapped here, so send on a VC of that class or
      // charge the class directly.
      const auto [s, a] = charge(e, cls, now);
      cbfc_tx_ = s;
      (void)a;
    }
    if (!cfg_.llr) return info;
    const auto [s, a] = step(tx_, sender::event::send(), now, cfg_.llr_tx);
    tx_ = s;
    if (!a.transmit) return info;  // refused: can_send was not asked
    info.llr = true;
    info.seq = a.transmit->seq.value;
    keep(a.transmit->slot, frame, cls);
    return info;
  }

  // LLR: whether frames are waiting to be sent again; they go before any new frame.
  bool replay_pending() const noexcept { return replay_left_ > 0; }
  // The next frame to send again, written to `out`; its length (0: none) and its info.
  std::size_t replay(wire::mutable_bytes out, link_info& info) noexcept {
    if (replay_left_ == 0) return 0;
    const std::size_t slot = replay_slot_;
    const slot_info& m = slots_[slot];
    if (out.size() < m.len) return 0;
    wire::copy_bytes(out.data(), &store_[m.at], m.len);
    info = link_info{.llr = true, .seq = replay_seq_, .cls = m.cls};
    replay_seq_ = static_cast<std::uint16_t>((replay_seq_ + 1) & 0xFFF);
    replay_slot_ = (replay_slot_ + 1) % ReplayFrames;
    --replay_left_;
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
    if (cfg_.llr) {
      const auto ev = info.llr ? receiver::event::frame(llr_seq<12>(info.seq), info.fcs_ok)
                               : receiver::event::corrupt();
      const auto [r, a] = step(rx_, ev, now, cfg_.llr_rx);
      rx_ = r;
      if (a.control) llr_answer(*a.control);
      if (!a.deliver) {
        ++n_.llr_dropped;
        return false;
      }
    } else if (!info.fcs_ok) {
      return false;
    }
    if (cfg_.cbfc && info.cls < cbfc_classes) {
      const auto [r, a] = step(cbfc_rx_, cbfc_arrive(info.cls, bytes), now);
      cbfc_rx_ = r;
      credit_updates(a, now);
    }
    if (cfg_.pfc_send && priority < pfc_priorities) {
      const auto [r, a] =
          step(pfc_rx_, pfc_arrive(priority, static_cast<std::uint32_t>(bytes)), now);
      pfc_rx_ = r;
      pause_frame(a);
    }
    return true;
  }

  // A frame handed up left this end's buffer: its credits go back to the peer, its bytes leave
  // the PFC buffer.
  void drained(const link_info& info, std::size_t bytes, std::uint8_t priority,
               std::uint64_t now) noexcept {
    if (cfg_.cbfc && info.cls < cbfc_classes) {
      const auto [r, a] = step(cbfc_rx_, cbfc_drain(info.cls, bytes), now);
      cbfc_rx_ = r;
      credit_updates(a, now);
    }
    if (cfg_.pfc_send && priority < pfc_priorities) {
      const auto [r, a] =
          step(pfc_rx_, pfc_drain(priority, static_cast<std::uint32_t>(bytes)), now);
      pfc_rx_ = r;
      pause_frame(a);
    }
  }

  // A message from the other end of the link.
  void message(const link_message& m, std::uint64_t now) noexcept {
    if (m.what == link_message::kind::cbfc_update) {
      if (cfg_.cbfc) cbfc_tx_ = step(cbfc_tx_, cbfc_credit(m.update), now).first;
      return;
    }
    if (!cfg_.llr) return;
    const auto ev = m.what == link_message::kind::llr_ack ? sender::event::ack(llr_seq<12>(m.seq))
                                                          : sender::event::nack(llr_seq<12>(m.seq));
    sender_actions(step(tx_, ev, now, cfg_.llr_tx));
  }

  // A PFC frame from the peer (decoded): pauses or resumes priorities here.
  void pfc_in(const pfc_pdu& p, std::uint64_t now) noexcept {
    pfc_tx_ = step(pfc_tx_, pfc_received(p), now).first;
  }
  // A PFC frame this end should send its peer, if any (taken once).
  std::optional<pfc_pdu> pfc_out() noexcept {
    std::optional<pfc_pdu> p = pfc_pending_;
    pfc_pending_.reset();
    return p;
  }

  // Timers: LLR's replay and ACK coalescing, CBFC's update coalescing and refresh, PFC's
  // expiries and refreshes.
  void tick(std::uint64_t now) noexcept {
    if (cfg_.llr) {
      if (tx_.timing && now >= tx_.deadline)
        sender_actions(step(tx_, sender::event::tick(), now, cfg_.llr_tx));
      if (rx_.unacked > 0 && now >= rx_.ack_deadline) {
        const auto [r, a] = step(rx_, receiver::event::tick(), now, cfg_.llr_rx);
        rx_ = r;
        if (a.control) llr_answer(*a.control);
      }
    }
    if (cfg_.cbfc && now >= cbfc_deadline_)
      credit_updates(step(cbfc_rx_, cbfc_tick(), now).second, now);
    if (cfg_.pfc_send && now >= pfc_refresh_) {
      const auto [r, a] = step(pfc_rx_, pfc_receiver_tick(), now);
      pfc_rx_ = r;
      pause_frame(a);
    }
    if (pfc_tx_.reported != 0) pfc_tx_ = step(pfc_tx_, pfc_sender_tick(), now).first;
  }
  std::uint64_t deadline() const noexcept {
    std::uint64_t t = link_never;
    if (cfg_.llr) {
      if (tx_.timing && !tx_.down) t = tx_.deadline;
      if (rx_.unacked > 0 && rx_.ack_deadline < t) t = rx_.ack_deadline;
    }
    if (cfg_.cbfc && cbfc_deadline_ < t) t = cbfc_deadline_;
    if (cfg_.pfc_send && pfc_refresh_ < t) t = pfc_refresh_;
    for (std::size_t p = 0; p < pfc_priorities; ++p)
      if (((pfc_tx_.reported >> p) & 1u) && pfc_tx_.paused_until[p] < t)
        t = pfc_tx_.paused_until[p];
    return t;
  }

  // Messages for the other end, oldest first, until taken.
  std::span<const link_message> messages() const noexcept { return {out_.data(), out_count_}; }
  void clear_messages() noexcept { out_count_ = 0; }

  // Frames LLR gave up on (its retry limit: the link is declared down), until taken.
  std::size_t lost() const noexcept { return lost_; }
  void clear_lost() noexcept { lost_ = 0; }

  // The link was reset (down and up again): LLR starts over at sequence 0 on both ends, frames
  // still held are gone; credits start over with the peer's next advertisement.
  void reset(std::uint64_t now) noexcept {
    if (cfg_.llr) {
      const auto [s, a] = step(tx_, sender::event::reset(), now, cfg_.llr_tx);
      tx_ = s;
      lost_ += a.lost.size();
      rx_ = step(rx_, receiver::event::reset(), now, cfg_.llr_rx).first;
      head_ = tail_ = used_ = 0;
      replay_left_ = 0;
    }
    if (cfg_.cbfc) {
      cbfc_sender fresh_tx;
      fresh_tx.cfg = cbfc_tx_.cfg;
      cbfc_tx_ = fresh_tx;
      cbfc_receiver fresh_rx;
      fresh_rx.cfg = cbfc_rx_.cfg;
      cbfc_rx_ = fresh_rx;
      cbfc_deadline_ = 0;
    }
    pfc_tx_.paused_until = {};
    out_count_ = 0;
  }

  // The machines, for tests and registers.
  const sender& llr_tx() const noexcept { return tx_; }
  const receiver& llr_rx() const noexcept { return rx_; }
  const cbfc_sender& cbfc_tx() const noexcept { return cbfc_tx_; }
  const cbfc_receiver& cbfc_rx() const noexcept { return cbfc_rx_; }
  const pfc_sender& pfc_tx() const noexcept { return pfc_tx_; }
  std::size_t memory() const noexcept {
    return sizeof(*this) + (Storage::grows ? store_.bytes() : 0);
  }

 private:
  struct slot_info {
    std::uint32_t at = 0;
    std::uint16_t len = 0;
    std::uint8_t cls = 0;
  };

  // cbfc_sender charges a VC's class; frames of a class no VC maps to (acknowledgements) are
  // charged through a VC temporarily mapped to it.
  std::pair<cbfc_sender, cbfc_sender_actions> charge(cbfc_sender_event e, std::uint8_t cls,
                                                     std::uint64_t now) const noexcept {
    cbfc_sender s = cbfc_tx_;
    const std::uint8_t keep = s.cfg.vc_class[0];
    s.cfg.vc_class[0] = cls;
    e.vc = 0;
    auto r = step(s, e, now);
    r.first.cfg.vc_class[0] = keep;
    return r;
  }

  void sender_actions(const std::pair<sender, typename sender::actions>& r) noexcept {
    tx_ = r.first;
    const auto& a = r.second;
    if (!a.release.empty()) {
      release(a.release);
      // A replay under way skips what the peer has now acknowledged.
      if (replay_left_ > 0) {
        const llr_seq<12> at(replay_seq_);
        if (before(at, tx_.oldest)) {
          const std::size_t skip = distance(at, tx_.oldest);
          const std::size_t n = skip < replay_left_ ? skip : replay_left_;
          replay_seq_ = (at + static_cast<std::uint32_t>(n)).value;
          replay_slot_ = (replay_slot_ + n) % ReplayFrames;
          replay_left_ -= n;
        }
      }
    }
    if (!a.replay.empty()) {
      replay_seq_ = a.replay.first.value;
      replay_slot_ = a.replay.first_slot;
      replay_left_ = a.replay.size();
    }
    if (a.failure != llr_failure::none) {
      lost_ += a.lost.size();
      replay_left_ = 0;
      head_ = tail_ = used_ = 0;
    }
  }

  void llr_answer(const llr_control_msg<12>& m) noexcept {
    push(link_message{.what = m.type == llr_type::nack ? link_message::kind::llr_nack
                                                       : link_message::kind::llr_ack,
                      .seq = m.seq.value});
  }
  void credit_updates(const cbfc_receiver_actions& a, std::uint64_t) noexcept {
    for (std::size_t i = 0; i < a.update_count; ++i)
      push(link_message{.what = link_message::kind::cbfc_update, .update = a.updates[i]});
    cbfc_deadline_ = a.next_deadline;
  }
  void pause_frame(const pfc_receiver_actions& a) noexcept {
    if (a.send) pfc_pending_ = a.frame;
    pfc_refresh_ = a.next_refresh;
  }
  void push(const link_message& m) noexcept {
    if (out_count_ < out_.size()) {
      out_[out_count_++] = m;
      ++n_.messages_sent;
    }
  }

  // ---- the replay store: a ring of bytes holding the frames LLR keeps, oldest first ----
  // Frames are kept whole: a frame goes after the newest, or at the start when the end is too
  // short (wrapped: the newest then ends before the oldest begins).
  static constexpr std::size_t npos = ~std::size_t{0};
  bool room(std::size_t bytes) noexcept {
    if (bytes > cfg_.replay_bytes) return false;
    if (!store_.reserve(cfg_.replay_bytes)) return false;
    return fit(bytes) != npos;
  }
  std::size_t fit(std::size_t n) const noexcept {
    if (used_ == 0) return n <= cfg_.replay_bytes ? 0 : npos;
    if (tail_ > head_) {
      if (cfg_.replay_bytes - tail_ >= n) return tail_;
      return head_ >= n ? 0 : npos;
    }
    return head_ - tail_ >= n ? tail_ : npos;
  }
  void keep(std::size_t slot, wire::bytes frame, std::uint8_t cls) noexcept {
    const std::size_t at = fit(frame.size());
    if (at == npos) return;  // can_send said there was room
    wire::copy_bytes(&store_[at], frame.data(), frame.size());
    slots_[slot] =
        slot_info{static_cast<std::uint32_t>(at), static_cast<std::uint16_t>(frame.size()), cls};
    if (used_ == 0) head_ = at;
    tail_ = at + frame.size();
    used_ += frame.size();
  }
  // The oldest frames were acknowledged (or lost): their bytes are free.
  void release(const typename sender::run_type& run) noexcept {
    for (const auto e : run) used_ -= slots_[e.slot].len;
    if (used_ == 0) {
      head_ = tail_ = 0;
    } else {
      head_ = slots_[tx_.head_slot].at;  // the oldest frame still kept
    }
  }

  link_config cfg_;
  wire::error error_{};
  sender tx_{};
  receiver rx_{};
  cbfc_sender cbfc_tx_{};
  cbfc_receiver cbfc_rx_{};
  pfc_sender pfc_tx_{};
  pfc_receiver pfc_rx_{};
  std::uint64_t cbfc_deadline_ = 0;
  std::uint64_t pfc_refresh_ = link_never;
  std::optional<pfc_pdu> pfc_pending_;
  bool credit_stalled_ = false, pfc_stalled_ = false;
  std::uint32_t class_stalled_ = 0;
  link_counters n_{};
  // The replay store: frame bytes in a ring, and where each kept frame is, by LLR slot.
  pack::table<std::uint8_t, ReplayBytes, Storage> store_;
  std::array<slot_info, ReplayFrames> slots_{};
  std::size_t head_ = 0, tail_ = 0, used_ = 0;
  std::size_t replay_left_ = 0, replay_slot_ = 0;
  std::uint16_t replay_seq_ = 0;
  std::size_t lost_ = 0;
  std::array<link_message, max_messages> out_{};
  std::size_t out_count_ = 0;
};

}  // namespace scaleup::transport
