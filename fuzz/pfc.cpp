// Priority-based flow control: the bytes drive a PFC receiver (XOFF/XON from its buffer) and the
// peer's PFC sender (which obeys the frames) over a link that carries the PFC frames in order
// as their 60 encoded bytes and may lose them; other frames, some not PFC, are thrown at the
// sender too. The first four bytes pick the link speed and time unit, the pause length, the
// lossless priorities, the thresholds and the VC-to-priority map.
//
// After every step: a paused VC or acknowledgement priority is never eligible to send; each
// priority's pause ends exactly when the last frame naming it said (a new time replaces the
// old, 0 resumes, a lossy priority is never paused, a non-PFC opcode changes nothing), and never
// before quanta x 512 bit times; the paused/resumed reports and next expiry match; the receiver
// holds what arrived minus what drained within its buffer (a frame without room is dropped, a
// drain of more than is held refused), is in XOFF at or above the XOFF threshold and in XON at
// or below the XON threshold, sends a frame exactly when a priority changes or a refresh is due
// and names in it just those priorities, and the frame decodes as sent; once the last frame
// naming a priority has reached the sender, the sender is paused on it while the receiver's
// XOFF runs and not after its XON; the counters add up.
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "common.hpp"
#include "scaleup/transport/pfc.hpp"

namespace {

using namespace scaleup;
using namespace scaleup::transport;

constexpr std::array<std::uint32_t, 4> speeds{100'000, 400'000, 25'000, 0};  // 0 is taken as 1
constexpr std::array<std::uint32_t, 4> units{1'000, 1, 0, 100};              // ps per unit of `now`
constexpr std::array<std::uint16_t, 16> quanta{0xFFFF, 1,   2,    3,    7,     10,    64,    100,
                                               255,    256, 1000, 4096, 10000, 30000, 65534, 512};
constexpr std::array<std::array<std::uint8_t, pfc_vcs>, 4> vc_priorities{{
    {3, 4, 2, 5},
    {0, 1, 2, 3},
    {7, 7, 7, 7},
    {3, 3, 4, 4},
}};

struct pfc_wire {
  std::array<std::uint8_t, pfc_frame_size> bytes{};
  std::uint8_t names = 0;  // the priorities it names (its class-enable vector)
  std::uint64_t n = 0;     // the receiver's frames numbered from 1
};

std::uint8_t bit(std::size_t p) { return static_cast<std::uint8_t>(1u << p); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  fuzz::reader in{data, size, 4};

  pfc_receiver_config rc;
  rc.link.link_mbps = speeds[data[0] & 3];
  rc.link.time_unit_ps = units[(data[0] >> 2) & 3];
  rc.pause_quanta = quanta[data[0] >> 4];
  rc.link.lossless = data[1];
  rc.link.vc_priority = vc_priorities[data[3] & 3];
  rc.link.ack_priority = static_cast<std::uint8_t>((data[3] >> 2) & 7);
  const std::uint32_t cap = 1'000 + (data[2] & 15) * 500u;
  const std::uint32_t xoff = cap - (data[2] >> 4) * 60u;
  const std::uint32_t xon = (xoff * ((data[3] >> 5) + 1)) / 9;  // 1/9 to 8/9 of xoff
  rc.capacity.fill(cap);
  rc.xoff.fill(xoff);
  rc.xon.fill(xon);
  const pfc_config& lc = rc.link;
  const std::uint64_t refresh = rc.refresh();

  pfc_sender s;
  s.cfg = lc;
  pfc_receiver r;
  r.cfg = rc;
  fuzz::ring<pfc_wire, 32> link;
  std::uint64_t now = 0;

  // The model of the sender: when each priority's pause ends.
  std::array<std::uint64_t, pfc_priorities> until{};
  std::uint8_t reported = 0;
  std::uint64_t frames = 0, pauses = 0, resumes = 0, expiries = 0;
  // Out of step: per priority, the newest receiver frame naming it that was lost (0: none), and
  // the priorities a foreign frame named since the sender last heard the receiver on them. A
  // later frame that reaches the sender replaces what either did.
  std::array<std::uint64_t, pfc_priorities> lost_at{};
  std::uint8_t foreign = 0;
  std::uint64_t numbered = 0;
  const auto lose = [&](const pfc_wire& w) {
    for (std::size_t q = 0; q < pfc_priorities; ++q)
      if ((w.names & bit(q)) && w.n > lost_at[q]) lost_at[q] = w.n;
  };
  // The model of the receiver.
  std::array<std::uint32_t, pfc_priorities> occupied{};
  std::uint64_t arrived = 0, drops = 0, sent = 0;

  const auto sender_step = [&](const pfc_pdu& pdu) {
    const auto [s2, a] = step(s, pfc_received(pdu), now);
    s = s2;
    std::uint8_t xon = 0, ignored = 0;
    if (pdu.opcode != pfc_opcode) {
      fuzz::check(a.err.code == wire::errc::unsupported, "pfc: a non-PFC opcode obeyed");
    } else {
      fuzz::check(!a.err, "pfc: a PFC frame refused");
      ++frames;
      for (std::size_t p = 0; p < pfc_priorities; ++p) {
        if (!pdu.enabled(p)) continue;
        if (!lc.is_lossless(p)) {
          ignored |= bit(p);
          continue;
        }
        const std::uint16_t q = pdu.time(p);
        if (q == 0) {
          xon |= bit(p);
          if (now < until[p]) ++resumes;
          until[p] = now;
        } else {
          ++pauses;
          const std::uint64_t t = lc.pause_time(q);
          const std::uint64_t den = std::uint64_t{lc.link_mbps == 0 ? 1 : lc.link_mbps} *
                                    (lc.time_unit_ps == 0 ? 1 : lc.time_unit_ps);
          const std::uint64_t need = std::uint64_t{q} * pause_quantum_bits * 1'000'000;
          fuzz::check(t * den >= need && (t - 1) * den < need,
                      "pfc: a pause not quanta x 512 bit times, rounded up");
          until[p] = now + t;
        }
      }
    }
    fuzz::check(a.ignored == ignored, "pfc: ignored priorities disagree");
    return std::pair{a, xon};
  };

  const auto sender_check = [&](const pfc_sender_actions& a, std::uint8_t xon) {
    std::uint8_t paused = 0;
    std::uint64_t expiry = pfc_never;
    for (std::size_t p = 0; p < pfc_priorities; ++p) {
      fuzz::check(s.paused_until[p] == until[p], "pfc: a pause ends at another time");
      if (now >= until[p]) continue;
      paused |= bit(p);
      if (until[p] < expiry) expiry = until[p];
    }
    fuzz::check((paused & ~lc.lossless) == 0, "pfc: a lossy priority paused");
    fuzz::check(a.paused == (paused & ~reported), "pfc: paused report disagrees");
    fuzz::check(a.resumed == (reported & ~paused), "pfc: resumed report disagrees");
    fuzz::check(a.next_expiry == expiry, "pfc: next expiry disagrees");
    for (std::size_t p = 0; p < pfc_priorities; ++p)
      if ((a.resumed & ~xon) & bit(p)) ++expiries;
    reported = paused;
    fuzz::check(s.reported == reported, "pfc: the sender's report state disagrees");
    fuzz::check(
        s.frames == frames && s.pauses == pauses && s.resumes == resumes && s.expiries == expiries,
        "pfc: sender counters disagree");
    for (std::size_t vc = 0; vc < pfc_vcs; ++vc) {
      const bool eligible = pfc_eligibility{&s, now}(0, static_cast<std::uint8_t>(vc));
      fuzz::check(eligible == ((paused & bit(lc.vc_priority[vc])) == 0),
                  "pfc: a paused VC eligible to send, or a free one held");
    }
    fuzz::check(s.ack_paused(now) == ((paused & bit(lc.ack_priority)) != 0),
                "pfc: acknowledgements paused other than their priority");
  };

  const auto receiver_step = [&](const pfc_receiver_event& e) {
    const pfc_receiver prev = r;
    const auto [r2, a] = step(r, e, now);
    r = r2;
    const std::size_t p = e.priority;
    if (e.input == pfc_receiver_input::arrive) {
      const std::uint32_t room = cap - occupied[p];
      fuzz::check(a.dropped == (e.bytes > room) && (!a.err) == (e.bytes <= room),
                  "pfc: a frame dropped with room, or kept without");
      if (e.bytes > room) {
        ++drops;
      } else {
        occupied[p] += e.bytes;
        ++arrived;
      }
    } else if (e.input == pfc_receiver_input::drain) {
      fuzz::check((!a.err) == (e.bytes <= occupied[p]), "pfc: a drain refused or over-drained");
      if (e.bytes <= occupied[p]) occupied[p] -= e.bytes;
    }
    bool refresh_due = false;
    for (std::size_t q = 0; q < pfc_priorities; ++q)
      if ((prev.xoff_sent & bit(q)) && now >= prev.pause_sent_at[q] + refresh) refresh_due = true;
    std::uint64_t next = pfc_never;
    for (std::size_t q = 0; q < pfc_priorities; ++q) {
      fuzz::check(r.occupied[q] == occupied[q] && occupied[q] <= cap,
                  "pfc: the receiver holds other than arrived minus drained");
      const bool was = (prev.xoff_sent & bit(q)) != 0;
      const bool is = (r.xoff_sent & bit(q)) != 0;
      if (!lc.is_lossless(q)) {
        fuzz::check(!is && !a.frame.enabled(q), "pfc: a lossy priority paused");
        continue;
      }
      if (occupied[q] >= xoff) fuzz::check(is, "pfc: at the XOFF threshold, not paused");
      if (occupied[q] <= xon) fuzz::check(!is, "pfc: at the XON threshold, still paused");
      if (!was && is) {
        fuzz::check(
            a.frame.enabled(q) && a.frame.time(q) == rc.pause_quanta && r.pause_sent_at[q] == now,
            "pfc: XOFF not sent");
      } else if (was && !is) {
        fuzz::check(a.frame.enabled(q) && a.frame.time(q) == 0, "pfc: XON not sent");
      } else if (was && is && refresh_due) {
        fuzz::check(
            a.frame.enabled(q) && a.frame.time(q) == rc.pause_quanta && r.pause_sent_at[q] == now,
            "pfc: a running pause not refreshed");
      } else {
        fuzz::check(!a.frame.enabled(q), "pfc: a priority named without a change");
        fuzz::check(r.pause_sent_at[q] == prev.pause_sent_at[q], "pfc: pause time moved");
      }
      if (is && r.pause_sent_at[q] + refresh < next) next = r.pause_sent_at[q] + refresh;
    }
    fuzz::check(a.next_refresh == next, "pfc: next refresh disagrees");
    fuzz::check(a.next_refresh == pfc_never || a.next_refresh > now || refresh == 0,
                "pfc: a refresh due not sent");
    fuzz::check(
        a.send == (a.frame.enable != 0) && a.frame.opcode == pfc_opcode && a.frame.rsvd == 0,
        "pfc: a frame sent without content or withheld");
    if (a.send) {
      ++sent;
      pfc_wire w;
      const auto n = encode_pfc_frame({.src = 0x020000000002, .pdu = a.frame}, w.bytes);
      fuzz::check(n.ok() && *n == pfc_frame_size, "pfc: a frame does not encode");
      w.names = a.frame.enable;
      w.n = ++numbered;
      if (!link.push_back(w)) lose(w);  // the link is full: dropped
    }
    fuzz::check(r.frames == arrived && r.drops == drops && r.pause_frames == sent,
                "pfc: receiver counters disagree");
  };

  // Once the sender has the receiver's last word on a priority, it obeys it: paused while XOFF
  // runs (at least until the pause sent last would end), not paused after XON.
  const auto agree = [&] {
    std::uint8_t in_flight = 0;
    for (std::size_t i = 0; i < link.size(); ++i) in_flight |= link[i].names;
    for (std::size_t q = 0; q < pfc_priorities; ++q) {
      if (!lc.is_lossless(q) || ((foreign | in_flight) & bit(q)) || lost_at[q] != 0) continue;
      if (r.xoff_sent & bit(q))
        fuzz::check(s.paused_until[q] >= r.pause_sent_at[q] + lc.pause_time(rc.pause_quanta),
                    "pfc: the sender's pause ends before the receiver's XOFF");
      else
        fuzz::check(!s.paused(q, now), "pfc: the sender paused after the receiver's XON");
    }
  };

  while (in.more()) {
    const std::uint8_t b = in.byte();
    switch (b & 7) {
      case 0:    // a frame on a VC, if its priority may send
      case 1: {  // a stand-alone acknowledgement, on its own priority
        const std::uint8_t vc = (b >> 3) & 3;
        const bool ack = (b & 7) == 1;
        const std::uint8_t p = ack ? lc.ack_priority : lc.vc_priority[vc];
        const bool may = ack ? !s.ack_paused(now) : pfc_eligibility{&s, now}(0, vc);
        fuzz::check(may == !(now < until[p] && lc.is_lossless(p)), "pfc: sent while paused");
        if (!may) break;
        // Sizes 0 to 5: 64-384 bytes plus the next byte; 6 and 7: just below and exactly up to
        // the XOFF threshold, where an off-by-one would show.
        const std::uint32_t k = b >> 5;
        const std::uint32_t to = k == 7 ? xoff : xoff - 1;
        receiver_step(pfc_arrive(
            p, k < 6 ? 64u * (1 + k) + in.byte() : (occupied[p] < to ? to - occupied[p] : 1)));
        break;
      }
      case 2: {  // the XPU drains a priority: some of what it holds; more than that; exactly
                 // down to the XON threshold; or just above it
        const std::uint8_t p = (b >> 3) & 7;
        const std::uint32_t want = 64u * (1 + in.byte());
        const std::uint32_t to = (b >> 6) == 2 ? xon : xon + 1;
        receiver_step(pfc_drain(p, (b >> 6) == 0   ? (want < occupied[p] ? want : occupied[p])
                                   : (b >> 6) == 1 ? want
                                                   : (occupied[p] > to ? occupied[p] - to : 0)));
        break;
      }
      case 3: {  // the next PFC frame reaches the sender
        if (link.empty()) break;
        const pfc_wire w = link.front();
        link.pop_front();
        const auto d = decode_pfc_frame(wire::bytes(w.bytes));
        fuzz::check(d.ok() && d->dst == pfc_destination && d->pdu.enable == w.names,
                    "pfc: a frame does not decode as sent");
        foreign &= static_cast<std::uint8_t>(~w.names);
        for (std::size_t q = 0; q < pfc_priorities; ++q)
          if ((w.names & bit(q)) && w.n > lost_at[q]) lost_at[q] = 0;
        const auto [a, x] = sender_step(d->pdu);
        sender_check(a, x);
        break;
      }
      case 4: {  // time passes for both
        now += (1u + (b >> 6)) * (std::uint64_t{1} << (((b >> 3) & 7) * 3));
        const auto [s2, a] = step(s, pfc_sender_tick(), now);
        s = s2;
        sender_check(a, 0);
        receiver_step(pfc_receiver_tick());
        break;
      }
      case 5:  // a PFC frame lost
        if (!link.empty()) lose(link.front());
        link.pop_front();
        break;
      case 6: {  // a frame from elsewhere: any opcode, enable vector and times
        pfc_pdu pdu;
        const std::uint8_t o = in.byte();
        pdu.opcode = (o & 3) == 3   ? pause_opcode
                     : (o & 3) == 2 ? std::uint16_t{0x0102}
                                    : pfc_opcode;
        pdu.enable = in.byte();
        std::array<std::uint16_t, pfc_priorities> t{};
        for (auto& v : t)
          v = (b & 8) ? quanta[in.byte() & 15] : static_cast<std::uint16_t>(in.byte() & 1);
        pdu.time0 = t[0];
        pdu.time1 = t[1];
        pdu.time2 = t[2];
        pdu.time3 = t[3];
        pdu.time4 = t[4];
        pdu.time5 = t[5];
        pdu.time6 = t[6];
        pdu.time7 = t[7];
        if (pdu.opcode == pfc_opcode) foreign |= pdu.enable;
        const auto [a, x] = sender_step(pdu);
        sender_check(a, x);
        break;
      }
      default:  // time passes for one of them only
        now += (1u + (b >> 6)) * (std::uint64_t{1} << (((b >> 3) & 7) * 3));
        if (b & 0x20) {
          const auto [s2, a] = step(s, pfc_sender_tick(), now);
          s = s2;
          sender_check(a, 0);
        } else {
          receiver_step(pfc_receiver_tick());
        }
        break;
    }
    agree();
  }
  return 0;
}
