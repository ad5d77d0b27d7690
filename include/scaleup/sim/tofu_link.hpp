// One direction of a sliced link, simulated frame by frame: frames -> slicer -> a channel per lane
// -> reassembler -> lane quality monitor, with the link-level replay that keeps frames until they
// are acknowledged (tofu/lane_quality.hpp explains why that makes mode switches lossless). It
// exists to show the mechanism of 003 IV.E at work and to feed captures: every slice, as received,
// goes to a callback as a capture record (tofu/slice.hpp).
//
// What is modelled and what is not:
//   - Time: a transmission occupies the link for its longest slice (tofu/efficiency.hpp); the clock
//     is in picoseconds, the machines see nanoseconds.
//   - The channel corrupts slice bytes (RH through FCS); preamble and gap are not modelled.
//   - The reverse direction is not simulated octet by octet: what the receiver sends back (its
//     STAT in the RH of its own frames, ACK/NACK for the replay machine, which would ride in a
//     DLLP) reaches the sender `feedback_delay` later, intact. The forward frames' STAT is 0:
//     it reports the reverse lanes, which nothing corrupts here.
//   - Frames are generated from (seed, frame index), so a replay rebuilds the same bytes and the
//     receiver can check each delivered frame against what was sent.
// The replay machine is transport/llr.hpp's go-back-N with the RH's 10-bit SEQ as its sequence.
// If it gives up (a pattern that cannot get through, e.g. split mode forced onto a dead lane),
// the frames it held are counted lost and both ends are reset, as a link would retrain.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "scaleup/sim/splitmix.hpp"
#include "scaleup/tofu/efficiency.hpp"
#include "scaleup/tofu/frame.hpp"
#include "scaleup/tofu/lane_quality.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/tofu/slicer.hpp"
#include "scaleup/transport/llr.hpp"
#include "scaleup/transport/psn.hpp"

namespace scaleup::sim {

enum class tofu_mode_policy : std::uint8_t {
  adaptive,   // tofu/lane_quality.hpp decides; replays in duplicate mode
  split,      // always the link's full split, replays too (what a link without 003 IV.E does)
  duplicate,  // always duplicate
};

inline constexpr unsigned tofu_link_seq_bits = 10;    // SEQ's width (tofu/routing_header.hpp)
inline constexpr std::size_t tofu_link_window = 128;  // frames held for replay; below 2^9
using tofu_link_sender = transport::llr_sender<tofu_link_seq_bits, tofu_link_window>;
using tofu_link_receiver = transport::llr_receiver<tofu_link_seq_bits>;

struct tofu_link_config {
  std::uint64_t frames = 1000;
  tofu_mode_policy policy = tofu_mode_policy::adaptive;
  std::uint8_t len_min = 0;  // each frame's LEN is drawn from [len_min, len_max]
  std::uint8_t len_max = tofu::max_len;
  std::uint64_t seed = 1;  // frame contents; the channel has its own randomness
  // The receiver's STAT and ACK/NACK take this long to reach the sender: a 10 m link each way
  // plus a MAC/PHY at each end, as transport/llr.hpp sizes its round trip.
  std::uint64_t feedback_delay = 500;
  tofu::lane_config quality{};
  transport::llr_sender_config replay{};
  transport::llr_receiver_config ack{};
  tofu::phy timing{};
};

struct tofu_link_stats {
  std::uint64_t frames = 0;            // offered
  std::uint64_t delivered = 0;         // handed up by the receiver, in order
  std::uint64_t lost = 0;              // given up by the replay machine (or stranded)
  std::uint64_t split_frames = 0;      // transmissions with ways > 1 (replays included)
  std::uint64_t duplicate_frames = 0;  // transmissions in duplicate mode (replays included)
  std::uint64_t mode_switches = 0;     // pattern changes for new frames (adaptive only)
  std::uint64_t transmissions = 0;
  std::uint64_t replays = 0;
  std::uint64_t slices = 0;
  std::uint64_t injected_slices = 0;  // slices the channel changed
  std::uint64_t failed_slices = 0;    // slices the receiver found bad
  std::uint64_t failed_frames = 0;    // transmissions that could not be reassembled
  std::uint64_t link_resets = 0;
  std::uint64_t misdelivered = 0;  // delivered out of order or with other bytes than sent: a bug
  std::uint64_t duration_ns = 0;
  std::uint8_t final_pat = 0;  // the pattern new frames would get at the end
  std::array<std::uint64_t, tofu::max_lanes> lane_errors{};
};

// What the callbacks learn about a slice besides its bytes.
struct tofu_slice_info {
  std::uint64_t transmission = 0;  // 0-based, counting replays
  std::uint64_t frame = 0;         // 0-based frame index; a replay repeats it
  std::uint64_t time_ns = 0;       // when the frame's slices start on the wire
  std::uint8_t lane = 0;
  std::uint8_t lanes = 0;
  std::uint8_t pat = 0;
  bool replay = false;
  bool injected = false;  // set once the channel has run
};

// ---- frames ---------------------------------------------------------------------------------

// Frame `index` of a run: LEN in [len_min, len_max], a random valid destination (X, Y, Z below
// 24, any A-B-C), random TLP, DLLP and other-control bytes; PAT, STAT and SEQ 0 (the link stamps
// them). The same arguments always give the same frame, which is what lets a replay be rebuilt.
constexpr std::size_t make_tofu_frame(std::uint64_t seed, std::uint64_t index, std::uint8_t len_min,
                                      std::uint8_t len_max, wire::mutable_bytes out) noexcept {
  std::uint64_t x = seed ^ (index * 0xD1342543DE82EF95ull);
  const unsigned lo = len_min > tofu::max_len ? tofu::max_len : len_min;
  const unsigned hi = len_max < lo ? lo : (len_max > tofu::max_len ? tofu::max_len : len_max);
  tofu::routing_header rh;
  rh.len = static_cast<std::uint8_t>(lo + splitmix64(x) % (hi - lo + 1));
  const std::uint64_t r = splitmix64(x);
  rh.dx = static_cast<std::uint16_t>(r % 24);
  rh.dy = static_cast<std::uint16_t>((r >> 8) % 24);
  rh.dz = static_cast<std::uint16_t>((r >> 16) % 24);
  rh.dabc1_a = static_cast<std::uint8_t>((r >> 24) & 1);
  rh.dabc1_b = static_cast<std::uint8_t>(((r >> 25) & 0xFF) % 3);
  rh.dabc1_c = static_cast<std::uint8_t>((r >> 33) & 1);
  rh.dabc2_a = static_cast<std::uint8_t>((r >> 34) & 1);
  rh.dabc2_b = static_cast<std::uint8_t>(((r >> 35) & 0xFF) % 3);
  rh.dabc2_c = static_cast<std::uint8_t>((r >> 43) & 1);
  rh.di = static_cast<std::uint8_t>(((r >> 44) & 0xFF) % 6);
  rh.vc = static_cast<std::uint8_t>((r >> 52) & 3);
  const std::size_t n = tofu::frame_size(rh.len);
  if (out.size() < n || !tofu::encode_header(rh, out)) return 0;
  for (std::size_t i = tofu::rh_size; i < n; i += 8) {
    const std::uint64_t v = splitmix64(x);
    for (std::size_t b = 0; b < 8; ++b) out[i + b] = static_cast<std::uint8_t>(v >> (8 * b));
  }
  return n;
}

// ---- a channel with independent bit errors per lane -----------------------------------------

// Flips each bit of a lane's slices with probability ber[lane], independently (a binary
// symmetric channel), drawing the gap to the next error instead of a number per bit. Rng is a
// 64-bit generator such as std::mt19937_64, whose output the standard fixes, so a seed gives the
// same errors everywhere (std:: distributions would not).
template <class Rng, std::size_t Lanes>
class tofu_ber_channel {
  static_assert(Rng::max() == std::numeric_limits<std::uint64_t>::max() && Rng::min() == 0,
                "a 64-bit generator");

 public:
  tofu_ber_channel(Rng& rng, const std::array<double, Lanes>& ber) : rng_(&rng), ber_(ber) {
    for (std::size_t l = 0; l < Lanes; ++l) gap_[l] = draw(ber_[l]);
  }

  void set_ber(std::size_t lane, double p) {
    ber_[lane] = p;
    gap_[lane] = draw(p);
  }
  double ber(std::size_t lane) const { return ber_[lane]; }

  bool operator()(const tofu_slice_info& s, wire::mutable_bytes slice) {
    if (s.lane >= Lanes) return false;
    bool hit = false;
    std::uint64_t bits = slice.size() * 8ull;
    std::uint64_t at = 0;
    std::uint64_t& gap = gap_[s.lane];
    while (gap < bits - at) {
      at += gap;
      slice[at / 8] = static_cast<std::uint8_t>(slice[at / 8] ^ (0x80u >> (at % 8)));
      hit = true;
      ++at;
      gap = draw(ber_[s.lane]);
    }
    if (gap != never) gap -= bits - at;
    return hit;
  }

 private:
  static constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

  std::uint64_t draw(double p) {
    if (!(p > 0)) return never;
    if (p >= 1) return 0;
    const double u = static_cast<double>(((*rng_)() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
    const double g = std::floor(std::log(u) / std::log1p(-p));
    return g >= 1.8e19 ? never : static_cast<std::uint64_t>(g);
  }

  Rng* rng_;
  std::array<double, Lanes> ber_{};
  std::array<std::uint64_t, Lanes> gap_{};
};

// ---- the simulation -------------------------------------------------------------------------

namespace detail {

struct tofu_feedback {
  std::uint64_t due_ps = 0;
  std::uint8_t stat = 0;
  std::optional<transport::llr_control_msg<tofu_link_seq_bits>> control;
};

// Feedback in flight, oldest first; a fixed ring because nothing here allocates.
class tofu_feedback_queue {
 public:
  static constexpr std::size_t capacity = 256;
  bool empty() const { return n_ == 0; }
  bool full() const { return n_ == capacity; }
  const tofu_feedback& front() const { return q_[head_]; }
  void pop() {
    head_ = (head_ + 1) % capacity;
    --n_;
  }
  void push(const tofu_feedback& f) {
    q_[(head_ + n_) % capacity] = f;
    ++n_;
  }
  void clear() { head_ = n_ = 0; }

 private:
  std::array<tofu_feedback, capacity> q_{};
  std::size_t head_ = 0;
  std::size_t n_ = 0;
};

}  // namespace detail

// Runs c.frames frames from one end to the other. channel(const tofu_slice_info&, mutable_bytes
// slice) -> bool may change a slice's bytes and says whether it did; on_slice(const
// tofu_slice_info&, bytes record) receives each slice as received, as a capture record (2-byte
// pseudo-header, then RH through FCS), lane 0 first for every transmission.
template <std::size_t Lanes, class Channel, class OnSlice>
tofu_link_stats simulate_tofu_link(const tofu_link_config& c, Channel&& channel,
                                   OnSlice&& on_slice) {
  using seq_type = transport::llr_seq<tofu_link_seq_bits>;
  using entry_type = transport::llr_entry<tofu_link_seq_bits>;
  using run_type = transport::llr_run<tofu_link_seq_bits, tofu_link_window>;

  tofu_link_stats st;
  st.frames = c.frames;
  tofu_link_sender tx;
  tofu_link_receiver rx;
  tofu::lane_controller<Lanes> sender_end{};    // picks the pattern from the peer's STAT
  tofu::lane_controller<Lanes> receiver_end{};  // judges the lanes, reports STAT
  std::array<std::uint64_t, tofu_link_window> slot_frame{};
  std::array<std::uint64_t, std::size_t{1} << tofu_link_seq_bits> seq_frame{};
  detail::tofu_feedback_queue fb;
  run_type replay_run{};
  std::size_t replay_pos = 0;
  std::uint64_t next_frame = 0;     // the next new frame
  std::uint64_t next_delivery = 0;  // the frame the receiver must deliver next
  std::uint64_t now_ps = 0;
  tofu::frame_buffer frame{};
  tofu::frame_buffer got{};
  tofu::frame_buffer want{};
  tofu::slice_set<Lanes> slices{};
  std::array<std::uint8_t, tofu::max_record_size> record{};
  const std::uint64_t delay_ps = c.feedback_delay * 1000;
  const auto now_ns = [&] { return now_ps / 1000; };

  const auto reset_link = [&] {
    ++st.link_resets;
    tx = step(tx, tofu_link_sender::event::reset(), now_ns(), c.replay).first;
    rx = step(rx, tofu_link_receiver::event::reset(), now_ns(), c.ack).first;
    fb.clear();
    replay_run = {};
    replay_pos = 0;
    next_delivery = next_frame;
  };
  const auto on_tx = [&](const typename tofu_link_sender::actions& a) {
    if (!a.replay.empty()) {
      replay_run = a.replay;
      replay_pos = 0;
    }
    if (a.failure == transport::llr_failure::retry_limit) {
      for (const entry_type e : a.lost)
        if (slot_frame[e.slot] >= next_delivery) ++st.lost;
      reset_link();
    }
  };
  const auto apply = [&](const detail::tofu_feedback& f) {
    sender_end = step(sender_end, tofu::lane_event::peer(f.stat), now_ns(), c.quality).first;
    if (f.control) {
      const auto [t, a] = step(tx, tofu_link_sender::event::from(*f.control), now_ns(), c.replay);
      tx = t;
      on_tx(a);
    }
  };

  // Enough for every frame to fail max_replays times over; beyond it the run is stuck.
  const std::uint64_t budget = 64 * (c.frames + 16) * (c.replay.max_replays + 2);
  for (std::uint64_t iteration = 0; st.delivered + st.lost < c.frames; ++iteration) {
    if (iteration > budget) {
      st.lost = c.frames - st.delivered;
      break;
    }
    while (!fb.empty() && fb.front().due_ps <= now_ps) {
      const detail::tofu_feedback f = fb.front();
      fb.pop();
      apply(f);
    }
    {
      const auto [t, a] = step(tx, tofu_link_sender::event::tick(), now_ns(), c.replay);
      tx = t;
      on_tx(a);
    }
    {
      const auto [r, a] = step(rx, tofu_link_receiver::event::tick(), now_ns(), c.ack);
      rx = r;
      if (a.control && !fb.full()) fb.push({now_ps + delay_ps, receiver_end.stat(), a.control});
    }
    receiver_end = step(receiver_end, tofu::lane_event::tick(), now_ns(), c.quality).first;

    std::optional<entry_type> entry;
    bool replay = false;
    while (!entry && replay_pos < replay_run.size()) {
      const entry_type e = replay_run[replay_pos++];
      if (within(e.seq, tx.oldest, static_cast<std::uint32_t>(tx.in_flight))) {
        entry = e;
        replay = true;
      }
    }
    if (!entry && next_frame < c.frames && !tx.full() && !fb.full()) {
      const auto [t, a] = step(tx, tofu_link_sender::event::send(), now_ns(), c.replay);
      tx = t;
      if (a.transmit) {
        entry = *a.transmit;
        slot_frame[entry->slot] = next_frame++;
      }
    }
    if (!entry) {
      // Nothing to send: jump to the next thing that can happen.
      std::optional<std::uint64_t> next;
      const auto consider = [&](std::optional<std::uint64_t> t) {
        if (t && (!next || *t < *next)) next = t;
      };
      if (!fb.empty()) consider(fb.front().due_ps);
      if (const auto t = next_deadline(tx)) consider(*t * 1000);
      if (const auto t = next_deadline(rx)) consider(*t * 1000);
      if (!next) {
        st.lost = c.frames - st.delivered;  // nothing left that could deliver the rest
        break;
      }
      now_ps = *next > now_ps ? *next : now_ps + 1;
      continue;
    }

    // Send.
    const std::uint64_t index = slot_frame[entry->slot];
    seq_frame[entry->seq.value] = index;
    const std::size_t n = make_tofu_frame(c.seed, index, c.len_min, c.len_max, frame);
    const std::uint8_t pat = c.policy == tofu_mode_policy::split ? tofu::pat_for(Lanes)
                             : c.policy == tofu_mode_policy::duplicate
                                 ? std::uint8_t{0}
                                 : tofu::pat_to_send(sender_end, replay);
    (void)tofu::restamp(frame, pat, 0, entry->seq.value);
    if (tofu::slice_frame<Lanes>(wire::bytes(frame.data(), n), slices)) {
      st.lost = c.frames - st.delivered;  // cannot happen with the frames made here
      break;
    }
    ++st.transmissions;
    if (replay) ++st.replays;
    ++(tofu::ways_of(pat) > 1 ? st.split_frames : st.duplicate_frames);
    const std::uint64_t start_ns = now_ns();
    std::size_t longest = 0;
    for (std::size_t l = 0; l < Lanes; ++l) {
      tofu_slice_info info{st.transmissions - 1,
                           index,
                           start_ns,
                           static_cast<std::uint8_t>(l),
                           static_cast<std::uint8_t>(Lanes),
                           pat,
                           replay,
                           false};
      info.injected = channel(static_cast<const tofu_slice_info&>(info), slices.slice(l));
      ++st.slices;
      if (info.injected) ++st.injected_slices;
      const tofu::record_header h{info.lane, info.lanes, static_cast<std::uint8_t>(replay),
                                  static_cast<std::uint8_t>(info.injected), 0};
      if (const auto r = tofu::write_record(h, slices[l], record))
        on_slice(static_cast<const tofu_slice_info&>(info), wire::bytes(record.data(), *r));
      const std::size_t line = tofu::preamble_size + slices.size[l] + tofu::ifg_size;
      if (line > longest) longest = line;
    }
    now_ps += tofu::octet_time_ps(longest, c.timing);

    // Receive.
    const auto r = tofu::reassemble<Lanes>(slices.spans(), got);
    for (std::size_t l = 0; l < Lanes; ++l) {
      const tofu::rx_error e = tofu::rx_error_of(r->lane[l]);
      if (e != tofu::rx_error::none) {
        ++st.failed_slices;
        ++st.lane_errors[l];
      }
      receiver_end = step(receiver_end, tofu::lane_event::slice(l, e), now_ns(), c.quality).first;
    }
    if (!r) ++st.failed_frames;
    const auto event = r ? tofu_link_receiver::event::frame(seq_type(r->rh.seq))
                         : tofu_link_receiver::event::corrupt();
    const auto [rx2, ra] = step(rx, event, now_ns(), c.ack);
    rx = rx2;
    if (ra.deliver) {
      const std::uint64_t got_index = seq_frame[ra.deliver->value];
      const std::size_t m = make_tofu_frame(c.seed, got_index, c.len_min, c.len_max, want);
      (void)tofu::restamp(want, r->rh.pat, r->rh.stat, r->rh.seq);
      bool same = got_index == next_delivery && m == r->size;
      for (std::size_t i = 0; same && i < m; ++i) same = got[i] == want[i];
      if (!same) ++st.misdelivered;
      ++st.delivered;
      next_delivery = got_index + 1;
    }
    // STAT rides on every reverse frame; the ACK or NACK with it when there is one.
    if (!fb.full()) fb.push({now_ps + delay_ps, receiver_end.stat(), ra.control});
  }
  st.duration_ns = now_ns();
  st.mode_switches = c.policy == tofu_mode_policy::adaptive ? sender_end.mode_switches : 0;
  st.final_pat = c.policy == tofu_mode_policy::adaptive ? sender_end.pat
                 : c.policy == tofu_mode_policy::split  ? tofu::pat_for(Lanes)
                                                        : std::uint8_t{0};
  return st;
}

// The same over a tofu_ber_channel: independent bit errors at ber[lane], drawn from rng.
template <std::size_t Lanes, class Rng, class OnSlice>
tofu_link_stats simulate_tofu_link(const tofu_link_config& c, Rng& rng,
                                   const std::array<double, Lanes>& ber, OnSlice&& on_slice) {
  tofu_ber_channel<Rng, Lanes> channel(rng, ber);
  return simulate_tofu_link<Lanes>(c, channel, on_slice);
}

}  // namespace scaleup::sim
