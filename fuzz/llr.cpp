// Link-level retry: the bytes drive an LLR sender and receiver over a link that loses,
// duplicates and corrupts frames in both directions but never reorders them (a link does not).
// Data frames carry their header through the wire codec; ACK/NACK frames travel as their 8
// encoded bytes, some with bits flipped. The first byte picks the sequence width and window
// (3/3, 4/7, 5/15, 6/20), the retry limit and the ACK coalescing; the second the timers.
//
// After every step: each frame is delivered at most once, in order, and only if it was sent;
// nothing is released before it was delivered; the replay buffer holds exactly the frames sent
// and neither released nor lost, within its capacity, in the slots the caller was told; replays
// resend exactly what is held; a corrupted control frame is refused by its CRC; an ACK or NACK
// outside the window changes nothing; a clean link never NACKs; the counters add up.
#include <array>
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/transport/llr.hpp"
#include "scaleup/wire/field.hpp"

namespace {

using namespace scaleup;
using namespace scaleup::transport;

struct data_frame {
  std::array<std::uint8_t, 4> header{};  // the encoded LLR header
  std::uint64_t app = 0;                 // the caller's frame number: its payload
};

using control_frame = std::array<std::uint8_t, 8>;

template <unsigned B, std::size_t C>
void run(fuzz::reader& in, std::uint8_t shape, std::uint8_t timing) {
  using S = llr_sender<B, C>;
  using R = llr_receiver<B>;
  using seq_t = llr_seq<B>;
  constexpr std::uint32_t space = std::uint32_t{1} << B;

  const std::uint32_t limit_choice = (shape >> 2) & 7;
  llr_sender_config sc;
  sc.replay_timeout = 8 + (timing & 0x0f) * 8;
  // Choice 0: no limit in practice; 1: max_replays 0, the first timeout fails the link.
  sc.max_replays = limit_choice == 0 ? 1'000'000 : limit_choice - 1;
  llr_receiver_config rc;
  rc.ack_every = (shape >> 5) & 7;  // 0 behaves as 1
  rc.ack_delay = (timing >> 4) * 4;
  const std::uint32_t ack_every = rc.ack_every == 0 ? 1 : rc.ack_every;

  S s;
  R r;
  fuzz::ring<data_frame, 64> fwd;
  fuzz::ring<control_frame, 64> rev;
  std::uint64_t now = 0;

  // The caller's frame store: what each slot holds.
  std::array<bool, C> held{};
  std::array<std::uint32_t, C> held_seq{};
  std::array<std::uint64_t, C> held_app{};
  std::size_t held_count = 0;

  // Since the last reset (sequence numbers restart there): frames numbered, delivered,
  // released by ACK or NACK, given up on. App numbers are global and strictly increasing.
  std::uint64_t next_app = 0, base = 0;
  std::uint64_t assigned = 0, delivered = 0, released = 0, lost = 0;
  bool damaged = false;  // a data frame was lost or corrupted since the reset
  // Over the whole run, as the machines' counters (which survive resets) see it.
  std::uint64_t sent_total = 0, resent_total = 0, delivered_total = 0, stale_total = 0;

  const auto put_data = [&](seq_t sq, std::uint64_t app) {
    const auto h = wire::to_bytes(llr_header_for(sq));
    fuzz::check(h.ok(), "llr: a data header does not encode");
    if (!fwd.push_back(data_frame{*h, app})) damaged = true;  // the link dropped it
  };
  const auto take = [&](llr_entry<B> e, const char* what) {
    fuzz::check(held[e.slot] && held_seq[e.slot] == e.seq.value, what);
    held[e.slot] = false;
    --held_count;
  };

  const auto on_sender = [&](const S& sb, const typename S::actions& a) {
    for (const auto e : a.release) {
      fuzz::check(held_app[e.slot] == base + released + lost, "llr: released out of order");
      take(e, "llr: released a slot not held");
      ++released;
    }
    if (!a.release.empty()) {
      fuzz::check(a.release.first == sb.oldest && a.release.first_slot == sb.head_slot,
                  "llr: a release not from the oldest frame");
      fuzz::check(released <= delivered, "llr: released a frame not yet delivered");
    }
    if (!a.replay.empty()) {
      fuzz::check(a.replay == s.outstanding(), "llr: a replay other than everything held");
      for (const auto e : a.replay) {
        fuzz::check(held[e.slot] && held_seq[e.slot] == e.seq.value,
                    "llr: replayed a slot not held");
        put_data(e.seq, held_app[e.slot]);
        ++resent_total;
      }
    }
    if (a.transmit) {
      const auto e = *a.transmit;
      fuzz::check(e.seq == sb.next, "llr: numbered out of sequence");
      fuzz::check(e.slot == (sb.head_slot + sb.in_flight) % C, "llr: an unexpected slot");
      fuzz::check(!held[e.slot], "llr: a new frame given a slot in use");
      fuzz::check(a.refused == llr_refusal::none, "llr: transmitted and refused");
      held[e.slot] = true;
      held_seq[e.slot] = e.seq.value;
      held_app[e.slot] = next_app;
      ++held_count;
      put_data(e.seq, next_app++);
      ++assigned;
      ++sent_total;
    }
    for (const auto e : a.lost) {
      fuzz::check(held_app[e.slot] == base + released + lost, "llr: lost out of order");
      take(e, "llr: lost a slot not held");
      ++lost;
    }
    fuzz::check(a.lost.empty() || a.failure != llr_failure::none, "llr: lost without a failure");
    if (a.failure == llr_failure::retry_limit)
      fuzz::check(s.down && !sb.down && sb.replays >= sc.max_replays,
                  "llr: a retry-limit failure before the limit");
    fuzz::check(s.down == (sb.down || a.failure == llr_failure::retry_limit) ||
                    a.failure == llr_failure::link_reset,
                "llr: down without a failure");
  };

  const auto on_receiver = [&](const R& rb, const typename R::actions& a, const data_frame* f,
                               bool fcs_ok, seq_t sq) {
    fuzz::check(!(a.deliver && a.dropped != llr_drop::none), "llr: delivered and dropped");
    if (f != nullptr)
      fuzz::check(a.deliver || a.dropped != llr_drop::none, "llr: neither delivered nor dropped");
    else
      fuzz::check(!a.deliver && a.dropped == llr_drop::none, "llr: a tick delivered or dropped");
    if (a.deliver) {
      fuzz::check(f != nullptr && fcs_ok, "llr: delivered a frame that did not arrive intact");
      fuzz::check(*a.deliver == sq, "llr: delivered another sequence than arrived");
      fuzz::check(f->app == base + delivered, "llr: delivered out of order or twice");
      fuzz::check(f->app < next_app, "llr: delivered a frame never sent");
      ++delivered;
      ++delivered_total;
      fuzz::check(delivered <= assigned, "llr: delivered more than was numbered");
    }
    switch (a.dropped) {
      case llr_drop::none:
        break;
      case llr_drop::bad_fcs:
        fuzz::check(!fcs_ok, "llr: a good frame dropped as bad");
        break;
      case llr_drop::duplicate:
        fuzz::check(fcs_ok && before(sq, rb.expected), "llr: a duplicate that is not one");
        break;
      case llr_drop::out_of_order:
        fuzz::check(fcs_ok && sq != rb.expected && !before(sq, rb.expected),
                    "llr: out of order but expected or behind");
        break;
    }
    if (!damaged)
      fuzz::check(a.dropped != llr_drop::out_of_order && a.dropped != llr_drop::bad_fcs,
                  "llr: a clean link lost a frame");
    if (a.control) {
      if (a.control->type == llr_type::nack) {
        fuzz::check(a.control->seq == r.expected, "llr: a NACK for another than the expected");
        fuzz::check(damaged, "llr: a NACK on a clean link");
      } else {
        fuzz::check(a.control->type == llr_type::ack && a.control->seq == r.expected - 1,
                    "llr: an ACK for another than the last delivered");
      }
      const auto img = wire::to_bytes(llr_control_for(*a.control));
      fuzz::check(img.ok(), "llr: a control frame does not encode");
      (void)rev.push_back(*img);  // a full link drops it: as good as lost
    }
  };

  const auto invariants = [&] {
    fuzz::check(s.in_flight <= C, "llr: in_flight above the capacity");
    fuzz::check(held_count == s.in_flight, "llr: the caller's store disagrees with in_flight");
    fuzz::check(s.in_flight == assigned - released - lost, "llr: in_flight disagrees");
    fuzz::check(s.next == seq_t(static_cast<std::uint32_t>(assigned)), "llr: next disagrees");
    fuzz::check(s.oldest == seq_t(static_cast<std::uint32_t>(released + lost)),
                "llr: oldest disagrees");
    fuzz::check(s.head_slot == (released + lost) % C, "llr: head slot disagrees");
    fuzz::check(released <= delivered && delivered <= assigned, "llr: counts out of order");
    fuzz::check(s.replays <= sc.max_replays, "llr: replays above the limit");
    if (s.down)
      fuzz::check(s.in_flight == 0 && !next_deadline(s), "llr: down yet holding frames");
    else
      fuzz::check(next_deadline(s).has_value() == (s.in_flight > 0),
                  "llr: the replay timer disagrees with what is held");
    fuzz::check(s.sent == sent_total && s.resent == resent_total && s.stale == stale_total,
                "llr: sender counters disagree");
    fuzz::check(r.expected == seq_t(static_cast<std::uint32_t>(delivered)),
                "llr: the receiver expects another frame");
    fuzz::check(r.delivered == delivered_total, "llr: receiver count disagrees");
    fuzz::check(r.unacked < ack_every, "llr: an ACK owed past ack_every");
    fuzz::check(next_deadline(r).has_value() == (r.unacked > 0), "llr: ACK timer disagrees");
  };

  while (in.more()) {
    const std::uint8_t b = in.byte();
    switch (b & 7) {
      case 0: {  // the caller has a new frame
        const S prev = s;
        const auto [s2, a] = step(s, S::event::send(), now, sc);
        s = s2;
        fuzz::check(a.transmit.has_value() == (a.refused == llr_refusal::none),
                    "llr: neither sent nor refused");
        if (a.refused == llr_refusal::buffer_full)
          fuzz::check(prev.full() && !prev.down, "llr: refused with room");
        if (a.refused == llr_refusal::link_down) fuzz::check(prev.down, "llr: refused, link up");
        if (a.refused != llr_refusal::none) fuzz::check(s == prev, "llr: a refusal changed state");
        on_sender(prev, a);
        break;
      }
      case 1: {  // the head data frame arrives; bits 3-4 both set: its FCS fails
        if (fwd.empty()) break;
        const data_frame f = fwd.front();
        fwd.pop_front();
        const bool fcs_ok = ((b >> 3) & 3) != 3;
        if (!fcs_ok) damaged = true;
        seq_t sq{};
        auto ev = R::event::corrupt();
        if (fcs_ok) {
          const auto h = wire::decode<llr_header>(wire::bytes(f.header));
          fuzz::check(h.ok(), "llr: a data header does not decode");
          const auto q = llr_seq_of<B>(*h);
          fuzz::check(q.ok(), "llr: a sequence wider than the link's");
          sq = *q;
          ev = R::event::frame(sq);
        }
        const R prev = r;
        const auto [r2, a] = step(r, ev, now, rc);
        r = r2;
        on_receiver(prev, a, &f, fcs_ok, sq);
        break;
      }
      case 2: {  // the head control frame arrives, with 0-3 bits flipped
        if (rev.empty()) break;
        control_frame c = rev.front();
        rev.pop_front();
        const control_frame clean = c;
        for (unsigned k = 0; k < ((b >> 3) & 3u); ++k) {
          const std::uint8_t bit = in.byte() & 63;
          c[bit / 8] = static_cast<std::uint8_t>(c[bit / 8] ^ (0x80u >> (bit % 8)));
        }
        const bool flipped = c != clean;
        const auto d = wire::decode<llr_control>(wire::bytes(c));
        if (!d.ok()) {
          fuzz::check(flipped, "llr: a clean control frame does not decode");
          break;
        }
        const auto ev = llr_event_of<B>(*d);
        fuzz::check(ev.ok() != flipped, "llr: a control frame with bit errors accepted");
        if (!ev.ok()) break;
        const S prev = s;
        const auto [s2, a] = step(s, *ev, now, sc);
        s = s2;
        fuzz::check(s.stale == prev.stale, "llr: a control frame in order taken as stale");
        on_sender(prev, a);
        break;
      }
      case 3: {  // time passes for both ends; both timers may fire
        now += 1 + (b >> 3) * 4u;
        const S sb = s;
        const auto [s2, sa] = step(s, S::event::tick(), now, sc);
        s = s2;
        on_sender(sb, sa);
        const R rb = r;
        const auto [r2, ra] = step(r, R::event::tick(), now, rc);
        r = r2;
        on_receiver(rb, ra, nullptr, false, seq_t{});
        break;
      }
      case 4:  // loss of the head frame
        if (b & 8) {
          if (!fwd.empty()) damaged = true;
          fwd.pop_front();
        } else {
          rev.pop_front();
        }
        break;
      case 5:  // the head frame duplicated (the copy right behind it)
        if (b & 8) {
          if (!fwd.empty()) (void)fwd.push_front(fwd.front());
        } else {
          if (!rev.empty()) (void)rev.push_front(rev.front());
        }
        break;
      case 6: {  // an ACK or NACK from an earlier lap (outside the window): nothing changes
        const std::uint32_t room = space - static_cast<std::uint32_t>(s.in_flight) - 1;
        const std::uint32_t d = static_cast<std::uint32_t>(s.in_flight) + 1 + (b >> 4) % room;
        const bool nack = (b & 8) != 0;
        const auto ev = nack ? S::event::nack(s.oldest + d) : S::event::ack(s.oldest + d - 1);
        const S prev = s;
        const auto [s2, a] = step(s, ev, now, sc);
        S expect = prev;
        if (!prev.down) {
          ++expect.stale;
          ++stale_total;
        }
        fuzz::check(s2 == expect, "llr: a control frame outside the window changed state");
        fuzz::check(
            a.release.empty() && a.replay.empty() && !a.transmit && a.failure == llr_failure::none,
            "llr: a control frame outside the window acted");
        s = s2;
        break;
      }
      default: {
        if ((b & 0x38) == 0x38) {  // the link is reset while quiet: both ends start again
          fwd.clear();
          rev.clear();
          const S prev = s;
          const auto [s2, a] = step(s, S::event::reset(), now, sc);
          s = s2;
          fuzz::check(a.failure == llr_failure::link_reset, "llr: a reset not reported");
          fuzz::check(a.lost == prev.outstanding(), "llr: a reset lost other than was held");
          on_sender(prev, a);
          fuzz::check(held_count == 0 && !s.down && s.in_flight == 0, "llr: a reset kept frames");
          r = step(r, R::event::reset(), now, rc).first;
          base = next_app;
          assigned = delivered = released = lost = 0;
          damaged = false;
        } else {  // time passes for the sender alone
          now += 1 + (b >> 6) * 32u;
          const S prev = s;
          const auto [s2, a] = step(s, S::event::tick(), now, sc);
          s = s2;
          on_sender(prev, a);
        }
        break;
      }
    }
    invariants();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  fuzz::reader in{data, size, 2};
  switch (data[0] & 3) {
    case 0:
      run<3, 3>(in, data[0], data[1]);
      break;
    case 1:
      run<4, 7>(in, data[0], data[1]);
      break;
    case 2:
      run<5, 15>(in, data[0], data[1]);
      break;
    default:
      run<6, 20>(in, data[0], data[1]);
      break;
  }
  return 0;
}
