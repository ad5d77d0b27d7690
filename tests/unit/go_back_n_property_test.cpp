// Go-back-N under random faults: a small discrete-event simulation, written here and sharing
// nothing with the library but the machines under test (decisions.md "SUE transport").
//
// Two endpoints, A and B, each hold a sender and a receiver for one connection per direction,
// so ACKs and NACKs ride on reverse data when there is some and go stand-alone when there is
// none. Each direction has a channel with a fixed delay that loses, corrupts (the receiver
// drops the PDU, as a failing R-CRC would), duplicates and reorders (a bounded extra delay).
// The caller keeps the buffers: an array indexed by PSN holding the application sequence
// number, from which it resends what the sender names.
//
// Checked after every event: each application message is delivered exactly once and in order;
// a PDU is released only after the peer delivered it; no PSN is resent after its release; a
// PSN is never reused while in flight; in_flight <= window; exactly one NACK per gap, with the
// expected PSN; ACKs carry the last PSN delivered, and duplicates are ACKed again; the sender
// goes back on a NACK inside its window and on a timeout. At the end: everything delivered and
// acknowledged, within a time bound, or (a dead link) the sender reports the peer unreachable
// after max_retries timeouts.
//
// Packet lifetime: a copy is at most `delay + reorder_max` old when it arrives, and
// reorder_max < delay. A sender cannot get more than two windows ahead of a PDU (or an RH)
// while it is in flight (its window moves only on feedback, which takes at least `delay` each
// way), so with window < half the PSN space an old PSN never passes for a new one. That is the
// bound any serial-number protocol needs; the exhaustive test shows what happens without it.
#include <scaleup/transport/go_back_n.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;

struct faults {
  double loss = 0, corrupt = 0, duplicate = 0, reorder = 0;
};

struct scenario {
  t::gbn_config config{};
  std::array<std::uint64_t, 2> messages{};  // [0]: A to B, [1]: B to A
  std::array<faults, 2> channel{};          // [0]: the channel A to B, [1]: B to A
  std::uint64_t delay = 1'000;              // ns, one way
  std::uint64_t reorder_max = 500;          // extra delay of a reordered copy; below `delay`
  std::uint64_t dead_after = std::numeric_limits<std::uint64_t>::max();  // A to B drops all
  std::uint64_t seed = 1;
  std::uint64_t time_limit = 0;  // ns; 0: derived from the message count (see bound())
};

struct endpoint_stats {
  std::uint64_t offered = 0, released = 0, delivered = 0;  // delivered: messages from the peer
  std::uint64_t sent = 0, resent = 0, nacks = 0, timeouts = 0, retries = 0;
  std::uint64_t unreachable_reports = 0, duplicates = 0, dropped_gap = 0;
  std::uint64_t acks_sent = 0, nacks_sent = 0, standalone = 0;
  bool unreachable = false, idle = false;  // idle: nothing in flight
};

struct outcome {
  std::string failure;  // the first violated property, with when and where
  std::uint64_t failures = 0;
  std::uint64_t end_time = 0, events = 0;
  bool drained = false;  // the event queue emptied: nothing left to happen
  std::array<endpoint_stats, 2> ep{};
  std::uint64_t packets = 0, lost = 0, corrupted = 0, duplicated = 0, reordered = 0;
};

// A generous upper bound on the completion time of a run that makes progress: every message
// may stall for a few timeouts. A livelock or a lost wake-up blows through it.
std::uint64_t bound(const scenario& sc) {
  const std::uint64_t per_stall = sc.config.rto + 4 * (sc.delay + sc.reorder_max);
  return 100 * per_stall + 4 * std::max(sc.messages[0], sc.messages[1]) * per_stall;
}

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t n) { return rng() % n; }
bool chance(std::mt19937_64& rng, double p) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53 < p;
}

template <unsigned Bits>
class simulation {
 public:
  using psn_t = t::psn<Bits>;
  static constexpr std::uint32_t space = std::uint32_t{1} << Bits;
  static constexpr std::uint64_t free_slot = std::numeric_limits<std::uint64_t>::max();

  explicit simulation(const scenario& sc) : sc_(sc), rng_(sc.seed) {
    for (std::size_t e = 0; e < 2; ++e) {
      ep_[e].buffer.assign(space, free_slot);
      ep_[e].total = sc.messages[e];
    }
    if (sc_.time_limit == 0) sc_.time_limit = bound(sc_);
  }

  outcome run() {
    for (int e = 0; e < 2; ++e) settle(e, 0);
    const std::uint64_t max_events = 200'000'000;
    while (!queue_.empty() && out_.failures == 0) {
      const event ev = queue_.top();
      queue_.pop();
      if (ev.time > sc_.time_limit || ++out_.events > max_events) {
        fail(ev.time, ev.at, "the run did not terminate within its bound");
        break;
      }
      if (ev.tick) {
        on_tick(ev.at, ev.time);
      } else {
        on_arrival(ev.at, ev.p, ev.time);
      }
      check_state(ev.at, ev.time);
      out_.end_time = ev.time;
    }
    out_.drained = queue_.empty();
    for (std::size_t e = 0; e < 2; ++e) {
      const endpoint& x = ep_[e];
      endpoint_stats& s = out_.ep[e];
      s.offered = x.offered;
      s.released = x.released;
      s.delivered = x.delivered;
      s.sent = x.tx.sent;
      s.resent = x.tx.resent;
      s.nacks = x.tx.nacks;
      s.timeouts = x.tx.timeouts;
      s.retries = x.tx.retries;
      s.unreachable_reports = x.unreachable_reports;
      s.unreachable = x.tx.unreachable;
      s.idle = x.tx.in_flight() == 0;
      s.duplicates = x.rx.duplicates;
      s.dropped_gap = x.rx.dropped_gap;
      s.acks_sent = x.rx.acks_sent;
      s.nacks_sent = x.rx.nacks_sent;
      s.standalone = x.standalone;
    }
    return out_;
  }

 private:
  struct packet {
    bool data = false;     // false: an RH-only PDU carrying an ACK or NACK
    bool corrupt = false;  // the receiver's R-CRC check fails
    psn_t npsn{};
    std::uint64_t app = 0;  // the application sequence number (the payload)
    w::rh_op op = w::rh_op::none;
    psn_t apsn{};
  };
  struct event {
    std::uint64_t time = 0, seq = 0;
    bool tick = false;
    int at = 0;  // the endpoint it happens at
    packet p{};
  };
  struct later {
    bool operator()(const event& a, const event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  struct endpoint {
    t::gbn_sender<Bits> tx{};
    t::gbn_receiver<Bits> rx{};
    std::vector<std::uint64_t> buffer;  // per PSN: the application message it carries
    std::uint64_t total = 0;            // messages to send
    std::uint64_t offered = 0;          // messages given a PSN
    std::uint64_t released = 0;         // messages acknowledged
    std::uint64_t delivered = 0;        // messages received from the peer, in order
    bool ack_now = false;               // the receiver said an ACK or NACK is due
    bool nacked = false;                // a NACK went out while `delivered` was nack_at
    std::uint64_t nack_at = 0;
    bool armed = false;  // a tick is queued at arm_time (older ones are stale)
    std::uint64_t arm_time = 0;
    std::uint64_t unreachable_reports = 0, standalone = 0;
  };

  void fail(std::uint64_t now, int at, const std::string& what) {
    if (out_.failures++ == 0) {
      out_.failure = what + " (seed " + std::to_string(sc_.seed) + ", t=" + std::to_string(now) +
                     " ns, at " + (at == 0 ? "A" : "B") + ")";
    }
  }

  // ---- the channel ----

  void emit(int from, const packet& p, std::uint64_t now) {
    const faults& f = sc_.channel[from];
    ++out_.packets;
    if ((from == 0 && now >= sc_.dead_after) || chance(rng_, f.loss)) {
      ++out_.lost;
      return;
    }
    const int copies = chance(rng_, f.duplicate) ? 2 : 1;
    out_.duplicated += copies - 1;
    for (int i = 0; i < copies; ++i) {
      event ev;
      ev.p = p;
      ev.p.corrupt = chance(rng_, f.corrupt);
      ev.time = now + sc_.delay;
      if (chance(rng_, f.reorder)) {
        ++out_.reordered;
        ev.time += 1 + draw(rng_, sc_.reorder_max);
      }
      ev.seq = seq_++;
      ev.at = 1 - from;
      queue_.push(ev);
    }
  }

  // Puts a PDU on the wire from endpoint e with whatever ACK/NACK its receiver has pending.
  void transmit(int e, bool data, psn_t npsn, std::uint64_t app, std::uint64_t now) {
    endpoint& x = ep_[e];
    packet p;
    p.data = data;
    p.npsn = npsn;
    p.app = app;
    const auto [op, apsn] = t::pending_ack(x.rx);
    if (op != w::rh_op::none) {
      p.op = op;
      p.apsn = apsn;
      if (op == w::rh_op::nack) {
        if (apsn != psn_t(static_cast<std::uint32_t>(x.delivered))) {
          fail(now, e, "NACK apsn is not the expected PSN");
        }
        if (x.nacked && x.nack_at == x.delivered) fail(now, e, "a second NACK for one gap");
        x.nacked = true;
        x.nack_at = x.delivered;
      } else if (apsn != psn_t(static_cast<std::uint32_t>(x.delivered)) - 1) {
        fail(now, e, "ACK apsn is not the last PSN delivered in order");
      }
      const auto [r, a] =
          t::step(x.rx, t::receiver_event<Bits>{t::receiver_input::ack_sent}, now, sc_.config);
      x.rx = r;
      x.ack_now = a.ack_now;
    } else if (!data) {
      fail(now, e, "a stand-alone RH with nothing to say");
    }
    emit(e, p, now);
  }

  // ---- the endpoints ----

  void apply(int e, const t::sender_actions<Bits>& a, std::uint64_t now) {
    endpoint& x = ep_[e];
    if (a.released > 0) {
      if (a.released_from != psn_t(static_cast<std::uint32_t>(x.released))) {
        fail(now, e, "release does not start at the oldest PDU in flight");
      }
      for (std::uint32_t i = 0; i < a.released; ++i) {
        std::uint64_t& slot = x.buffer[(a.released_from + i).value];
        if (slot != x.released + i) {
          fail(now, e, "released a PSN that was not in flight");
        } else if (slot >= ep_[1 - e].delivered) {
          fail(now, e, "released a PDU the peer has not delivered");
        }
        slot = free_slot;
      }
      x.released += a.released;
    }
    for (std::uint32_t i = 0; i < a.resend; ++i) {
      const psn_t p = a.resend_from + i;
      const std::uint64_t slot = x.buffer[p.value];
      if (slot == free_slot) {
        fail(now, e, "resend of a PSN already released");
        return;
      }
      transmit(e, true, p, slot, now);
    }
    if (a.unreachable) ++x.unreachable_reports;
  }

  void sender_step(int e, t::sender_input in, psn_t apsn, std::uint64_t now) {
    endpoint& x = ep_[e];
    const t::gbn_sender<Bits> before = x.tx;
    const auto [s, a] = t::step(x.tx, t::sender_event<Bits>{in, apsn}, now, sc_.config);
    x.tx = s;
    // The receiver expects apsn: a NACK inside the window sends everything from apsn again.
    if (in == t::sender_input::nack && !before.unreachable &&
        within(apsn, before.una, before.in_flight() + 1) &&
        (a.resend_from != apsn || a.resend != distance(apsn, before.next))) {
      fail(now, e, "the sender did not go back to the NACKed PSN");
    }
    apply(e, a, now);
  }

  void on_arrival(int e, const packet& p, std::uint64_t now) {
    endpoint& x = ep_[e];
    if (p.corrupt) {
      ++out_.corrupted;  // R-CRC failed: neither the RH nor the data can be trusted
      return;
    }
    if (p.op == w::rh_op::ack) sender_step(e, t::sender_input::ack, p.apsn, now);
    if (p.op == w::rh_op::nack) sender_step(e, t::sender_input::nack, p.apsn, now);
    if (p.data) {
      const auto [r, a] = t::step(
          x.rx, t::receiver_event<Bits>{t::receiver_input::pdu, p.npsn, true}, now, sc_.config);
      x.rx = r;
      x.ack_now = a.ack_now;
      // The first PDU past a gap brings its NACK (pending NACKs go out at once, below); a
      // duplicate brings an ACK.
      if (a.dropped == t::drop_reason::gap && !(x.nacked && x.nack_at == x.delivered) &&
          t::pending_ack(x.rx).first != w::rh_op::nack) {
        fail(now, e, "a gap without a NACK");
      }
      if (a.dropped == t::drop_reason::duplicate && !a.ack_now) {
        fail(now, e, "a duplicate not acknowledged again");
      }
      if (a.deliver) {
        if (p.app != x.delivered) {
          fail(now, e,
               "delivered message " + std::to_string(p.app) + " where " +
                   std::to_string(x.delivered) + " was next");
        }
        ++x.delivered;
      }
    }
    settle(e, now);
  }

  void on_tick(int e, std::uint64_t now) {
    endpoint& x = ep_[e];
    if (!x.armed || x.arm_time != now) return;  // superseded
    x.armed = false;
    const t::gbn_sender<Bits> before = x.tx;
    const auto [s, a] =
        t::step(x.tx, t::sender_event<Bits>{t::sender_input::tick}, now, sc_.config);
    x.tx = s;
    if (a.resend > 0 && (a.resend_from != before.una || a.resend != before.in_flight())) {
      fail(now, e, "a timeout did not go back to the oldest PDU in flight");
    }
    apply(e, a, now);
    const auto [r, ra] =
        t::step(x.rx, t::receiver_event<Bits>{t::receiver_input::tick}, now, sc_.config);
    x.rx = r;
    x.ack_now = ra.ack_now;
    settle(e, now);
  }

  // After any event: send what the window allows, then a stand-alone RH if an ACK or NACK is
  // still due, then ask for a tick at the next deadline.
  void settle(int e, std::uint64_t now) {
    endpoint& x = ep_[e];
    while (x.offered < x.total) {
      const auto [s, a] =
          t::step(x.tx, t::sender_event<Bits>{t::sender_input::send}, now, sc_.config);
      x.tx = s;
      if (!a.assigned) break;  // window full, or the peer is unreachable
      if (a.psn_assigned != psn_t(static_cast<std::uint32_t>(x.offered))) {
        fail(now, e, "PSNs are not assigned +1 per PDU");
      }
      std::uint64_t& slot = x.buffer[a.psn_assigned.value];
      if (slot != free_slot) fail(now, e, "a PSN reused while still in flight");
      slot = x.offered;
      transmit(e, true, a.psn_assigned, x.offered, now);
      ++x.offered;
      if (x.tx.in_flight() > sc_.config.window) fail(now, e, "window exceeded");
    }
    if (x.ack_now) {
      ++x.standalone;
      transmit(e, false, psn_t{}, 0, now);
    }
    const std::uint64_t due = t::next_deadline(x.tx, x.rx);
    if (due != 0 && (!x.armed || x.arm_time != due)) {
      x.armed = true;
      x.arm_time = std::max(due, now);
      event ev;
      ev.time = x.arm_time;
      ev.seq = seq_++;
      ev.tick = true;
      ev.at = e;
      queue_.push(ev);
    }
  }

  void check_state(int e, std::uint64_t now) {
    const endpoint& x = ep_[e];
    const std::uint32_t in_flight = x.tx.in_flight();
    if (in_flight > sc_.config.window) fail(now, e, "in_flight above the window");
    if (in_flight != x.offered - x.released) fail(now, e, "in_flight disagrees with the caller");
    if (x.tx.una != psn_t(static_cast<std::uint32_t>(x.released))) fail(now, e, "una drifted");
    if (x.rx.expected != psn_t(static_cast<std::uint32_t>(x.delivered))) {
      fail(now, e, "expected PSN is not the delivered count");
    }
    if (x.rx.delivered != x.delivered) fail(now, e, "receiver delivered count drifted");
  }

  scenario sc_;
  std::mt19937_64 rng_;
  std::array<endpoint, 2> ep_{};
  std::priority_queue<event, std::vector<event>, later> queue_;
  std::uint64_t seq_ = 0;
  outcome out_{};
};

template <unsigned Bits>
outcome simulate(const scenario& sc) {
  return simulation<Bits>(sc).run();
}

// Everything offered was delivered once, in order, and acknowledged; nobody gave up.
void check_complete(const scenario& sc, const outcome& o) {
  INFO("seed ", sc.seed, ", window ", sc.config.window);
  CHECK(o.failure == "");
  if (!o.failure.empty()) return;  // the rest would only repeat it
  CHECK(o.drained);
  for (std::size_t e = 0; e < 2; ++e) {
    const endpoint_stats& x = o.ep[e];
    CHECK(x.offered == sc.messages[e]);
    CHECK(x.released == sc.messages[e]);
    CHECK(o.ep[1 - e].delivered == sc.messages[e]);
    CHECK(x.idle);
    CHECK_FALSE(x.unreachable);
    CHECK(x.unreachable_reports == 0);
  }
}

faults uniform_faults(double p) { return faults{p, p, p, p}; }

}  // namespace

TEST_CASE("gbn property: a perfect channel needs no recovery") {
  scenario sc;
  sc.config.window = 16;
  sc.messages = {5'001, 2'999};  // not multiples of ack_every: the last ACKs wait for the delay
  const outcome o = simulate<16>(sc);
  check_complete(sc, o);
  for (const auto& x : o.ep) {
    CHECK(x.resent == 0);
    CHECK(x.nacks == 0);
    CHECK(x.timeouts == 0);
    CHECK(x.duplicates == 0);
    CHECK(x.dropped_gap == 0);
  }
}

TEST_CASE("gbn property: random faults up to 20 % each, PSN widths 16 and 5") {
  std::mt19937_64 pick(2024);
  std::uint64_t runs = 0, messages = 0, packets = 0, lost = 0, corrupted = 0, duplicated = 0,
                reordered = 0, resent = 0, nacks = 0, timeouts = 0;
  const auto account = [&](const scenario& sc, const outcome& o) {
    ++runs;
    messages += sc.messages[0] + sc.messages[1];
    packets += o.packets;
    lost += o.lost;
    corrupted += o.corrupted;
    duplicated += o.duplicated;
    reordered += o.reordered;
    for (const auto& x : o.ep) {
      resent += x.resent;
      nacks += x.nacks;
      timeouts += x.timeouts;
    }
  };
  for (std::uint64_t seed = 1; seed <= 48; ++seed) {
    scenario sc;
    sc.seed = seed;
    sc.config.max_retries = 60;  // losing 60 go-backs in a row is not a random event here
    sc.config.ack_every = 1 + static_cast<std::uint32_t>(draw(pick, 8));
    sc.config.ack_delay = 200 + draw(pick, 1'500);
    for (auto& f : sc.channel) {
      f.loss = 0.2 * static_cast<double>(draw(pick, 101)) / 100;
      f.corrupt = 0.2 * static_cast<double>(draw(pick, 101)) / 100;
      f.duplicate = 0.2 * static_cast<double>(draw(pick, 101)) / 100;
      f.reorder = 0.2 * static_cast<double>(draw(pick, 101)) / 100;
    }
    if (seed % 8 == 0) sc.channel = {uniform_faults(0.2), uniform_faults(0.2)};  // all at 20 %
    sc.messages = {1 + draw(pick, 1'500), draw(pick, 1'500)};
    if (seed % 2 == 0) {
      sc.config.window = 1 + static_cast<std::uint32_t>(draw(pick, 15));  // 1..15 of 32
      const outcome o = simulate<5>(sc);
      check_complete(sc, o);
      account(sc, o);
    } else {
      sc.config.window = 1 + static_cast<std::uint32_t>(draw(pick, 64));
      const outcome o = simulate<16>(sc);
      check_complete(sc, o);
      account(sc, o);
    }
  }
  MESSAGE(runs, " runs, ", messages, " messages, ", packets, " PDUs: ", lost, " lost, ", corrupted,
          " corrupted, ", duplicated, " duplicated, ", reordered, " reordered; ", resent,
          " resent, ", nacks, " NACKs, ", timeouts, " timeouts");
  CHECK(lost > 0);
  CHECK(corrupted > 0);
  CHECK(duplicated > 0);
  CHECK(reordered > 0);
  CHECK(nacks > 0);
  CHECK(timeouts > 0);
}

TEST_CASE("gbn property: 200k messages each way cross the 16-bit PSN space 3 times") {
  scenario sc;
  sc.seed = 16;
  sc.config.window = 64;
  sc.config.max_retries = 60;
  sc.messages = {200'000, 200'000};
  sc.channel = {faults{0.01, 0.01, 0.01, 0.02}, faults{0.01, 0.01, 0.01, 0.02}};
  const outcome o = simulate<16>(sc);
  check_complete(sc, o);
  CHECK(sc.messages[0] / (1u << 16) >= 3);
  for (const auto& x : o.ep) {
    CHECK(x.nacks > 0);
    CHECK(x.timeouts > 0);
  }
  MESSAGE("width 16: ", o.packets, " PDUs, ", o.ep[0].resent + o.ep[1].resent, " resent, ",
          o.ep[0].nacks + o.ep[1].nacks, " NACKs, ", o.ep[0].timeouts + o.ep[1].timeouts,
          " timeouts, simulated ", o.end_time / 1'000, " us");
}

TEST_CASE("gbn property: a 5-bit PSN wraps thousands of times, window up to 15 of 32") {
  for (const std::uint32_t window : {15u, 7u, 1u}) {
    scenario sc;
    sc.seed = 500 + window;
    sc.config.window = window;
    sc.config.max_retries = 60;
    sc.messages = {60'000, 60'000};
    sc.channel = {uniform_faults(0.1), faults{0.2, 0.05, 0.2, 0.2}};
    const outcome o = simulate<5>(sc);
    check_complete(sc, o);
    CHECK(sc.messages[0] / 32 >= 1'000);
    MESSAGE("width 5, window ", window, ": ", sc.messages[0] / 32, " wraps each way, ", o.packets,
            " PDUs, ", o.ep[0].resent + o.ep[1].resent, " resent");
  }
}

TEST_CASE("gbn property: one direction silent, stand-alone ACKs carry everything") {
  for (std::uint64_t seed = 0; seed <= 6; ++seed) {
    scenario sc;
    sc.seed = 900 + seed;
    sc.config.window = seed % 2 == 0 ? 15 : 200;
    sc.config.max_retries = 60;
    sc.config.ack_every = seed % 3 == 0 ? 1 : 8;
    sc.messages = {20'000, 0};
    if (seed > 0) sc.channel = {uniform_faults(0.1), uniform_faults(seed <= 3 ? 0.0 : 0.2)};
    const outcome o = seed % 2 == 0 ? simulate<5>(sc) : simulate<16>(sc);
    check_complete(sc, o);
    CHECK(o.ep[1].sent == 0);  // B never sent data: every ACK and NACK went stand-alone
    CHECK(o.ep[1].standalone == o.ep[1].acks_sent + o.ep[1].nacks_sent);
    CHECK(o.ep[1].acks_sent > 0);
    CHECK(o.ep[0].standalone == 0);  // A's receiver never had anything to acknowledge
    if (seed > 0) CHECK(o.ep[1].nacks_sent > 0);
  }
  // Coalescing, on a clean channel: one ACK per ack_every PDUs (duplicates, which a lossy
  // channel brings, are each re-ACKed at once).
  scenario sc;
  sc.config.window = 64;
  sc.config.ack_every = 8;
  sc.messages = {20'003, 0};
  const outcome o = simulate<16>(sc);
  check_complete(sc, o);
  CHECK(o.ep[1].acks_sent <= sc.messages[0] / 8 + 1);
  CHECK(o.ep[1].nacks_sent == 0);
  CHECK(o.ep[0].timeouts == 0);  // the last 3 PDUs were acknowledged after ack_delay
}

TEST_CASE("gbn property: a dead link ends in unreachable after max_retries timeouts") {
  for (const std::uint64_t dead_after : {std::uint64_t{0}, std::uint64_t{40'000}}) {
    scenario sc;
    sc.seed = 77 + dead_after;
    sc.config.window = 8;
    sc.config.max_retries = 5;
    sc.messages = {1'000, 1'000};
    sc.dead_after = dead_after;  // from then on, A to B drops everything
    const outcome o = simulate<16>(sc);
    INFO("dead after ", dead_after, " ns");
    CHECK(o.failure == "");  // in particular: nothing delivered twice, nothing out of order
    CHECK(o.drained);        // the run ends: nobody retries forever
    for (const auto& x : o.ep) {
      CHECK(x.unreachable);
      CHECK(x.unreachable_reports == 1);
      CHECK(x.timeouts == sc.config.max_retries + 1);  // max_retries go-backs, then give up
      CHECK_FALSE(x.idle);
    }
    // A's data never reaches B; B's data reaches A, but A's ACKs do not get back, so B resends
    // and A drops the copies as duplicates.
    CHECK(o.ep[0].released <= o.ep[1].delivered);
    CHECK(o.ep[1].delivered < sc.messages[0]);
    CHECK(o.ep[0].delivered < sc.messages[1]);
    CHECK(o.ep[0].duplicates > 0);
    if (dead_after == 0) {
      CHECK(o.ep[1].delivered == 0);
      CHECK(o.ep[0].resent == sc.config.max_retries * sc.config.window);
    } else {
      CHECK(o.ep[1].delivered > 0);
    }
  }
}
