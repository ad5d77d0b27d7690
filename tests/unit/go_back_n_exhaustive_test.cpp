// Go-back-N, every interleaving: explicit-state model checking of one connection (A sends N
// messages to B, B answers with stand-alone ACKs and NACKs) with 3-bit PSNs, so that a few
// messages cross the PSN space (decisions.md "SUE transport").
//
// The model. A state holds the library's sender and receiver (deadlines and statistics
// abstracted away), the caller's buffers (per PSN, the message it carries) and transmit cursor,
// the count of messages given a PSN and delivered, and two channels: bounded multisets of
// PDUs A to B and RHs B to A. From each state every enabled event is a transition:
//   - A transmits: the next PDU to resend if a go-back left some, else a new message (if the
//     window takes it);
//   - a channel delivers any PDU or RH in it (any order: reordering), drops any (loss, at most
//     `drops` in a run), or copies any (duplication, at most `duplicates`);
//   - B's ACK timer fires (at any time: the delay is arbitrary) and B sends its pending ACK or
//     NACK stand-alone;
//   - A's retransmit timer fires. Freely when the system is quiet (both channels empty,
//     nothing left to resend, B with nothing to say): a timeout longer than any round trip.
//     Anywhere else at most `early_timeouts` times: a timer that fires too soon.
// Time is abstract: every deadline is "now", and the order of events is the adversary's.
//
// Packet lifetime. With reordering and no bound on how long a PDU may stay in the network, no
// PSN space is big enough: a stale copy of PSN p outlives the wrap and passes for p + 2^bits.
// Real networks bound the lifetime and the window keeps the sender within it; here that bound
// is `lifetime`: A may give out a new PSN only while everything in flight (a PDU's message
// number, an RH's delivered count) is less than `lifetime` PSNs behind it. The cases hold with
// 2^bits - 1; one more, and the checker finds a stale ACK or PDU taken for a new one.
//
// Checked in every state: B delivered a prefix of 0..N-1, in order, each once; una <= next
// (as in_flight <= window < half the space); una is at most what B delivered (nothing released
// before delivery); B's expected PSN is the delivered count mod 2^bits; the caller's buffers
// hold exactly the PDUs in flight; A never gives up (max_retries is set to the most timeouts in
// a row the adversary can make fruitless, see explorer()). On transitions: a PDU is resent only
// while held; exactly one NACK per gap, with the expected PSN; ACKs carry the last PSN delivered,
// and duplicates are ACKed again; A goes back to the NACKed PSN or (timeout) to the oldest. Then,
// backwards from the states where all N messages are delivered and acknowledged: every
// reachable state can still get there (no deadlock, no livelock the adversary cannot leave).
#include <scaleup/transport/go_back_n.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;

constexpr unsigned bits = 3;
using psn_t = t::psn<bits>;
constexpr std::uint32_t space = std::uint32_t{1} << bits;
constexpr std::size_t max_capacity = 3;
constexpr std::uint8_t free_slot = 0xFF;
constexpr std::uint32_t unbounded = 0xFFFF;

struct bounds {
  std::uint32_t messages = 10;  // N: 0..N-1, more than the 8 PSNs
  std::uint32_t window = 3;     // below half the space
  std::uint32_t capacity = 2;   // PDUs (RHs) in flight per channel
  std::uint32_t drops = 2;      // losses in a run
  std::uint32_t duplicates = 1;
  std::uint32_t early_timeouts = 1;
  std::uint32_t lifetime = space - 1;  // in PSNs; `unbounded` for none
  std::uint32_t ack_every = 2;
  std::uint32_t spare_retries = 1;  // max_retries = drops + early_timeouts + this
};

// One state, packed in bytes: hashed and compared as such.
struct state {
  // sender
  std::uint8_t next = 0, una = 0, timing = 0, retries = 0, unreachable = 0;
  // receiver
  std::uint8_t expected = 0, nacked = 0, nack_due = 0, ack_due = 0, unacked = 0, ack_timing = 0;
  // the caller and the world
  std::uint8_t assigned = 0;   // messages given a PSN (message i gets PSN i mod 2^bits)
  std::uint8_t delivered = 0;  // messages B delivered
  std::uint8_t cursor = 0;     // the next message A transmits (below `assigned`: a resend)
  std::uint8_t drops = 0, dups = 0, early = 0;  // what the adversary has left
  std::uint8_t nack_mark = 0;                   // 1 + `delivered` when B NACKed this gap, else 0
  std::uint8_t n_ab = 0, n_ba = 0;
  std::array<std::uint8_t, space> buffer{};  // per PSN: the message it carries, or free_slot
  // Channels, sorted (multisets). A to B: message << 3 | npsn. B to A: nack << 7 | delivered
  // count when sent << 3 | apsn.
  std::array<std::uint8_t, max_capacity> ab{}, ba{};
  bool operator==(const state&) const = default;
};
static_assert(std::has_unique_object_representations_v<state>);

std::uint64_t hash_of(const state& s) {
  std::array<unsigned char, sizeof(state)> b;
  std::memcpy(b.data(), &s, sizeof s);
  std::uint64_t h = 1469598103934665603u;
  for (const unsigned char c : b) h = (h ^ c) * 1099511628211u;
  h = (h ^ (h >> 33)) * 0xFF51AFD7ED558CCDu;  // the low bits must depend on every byte
  return h ^ (h >> 33);
}

std::uint8_t ab_item(std::uint32_t message, psn_t p) {
  return static_cast<std::uint8_t>(message << bits | p.value);
}
std::uint32_t ab_message(std::uint8_t i) { return i >> bits; }
psn_t ab_psn(std::uint8_t i) { return psn_t(i); }
std::uint8_t ba_item(w::rh_op op, std::uint32_t delivered, psn_t apsn) {
  return static_cast<std::uint8_t>((op == w::rh_op::nack ? 0x80 : 0) | delivered << bits |
                                   apsn.value);
}
bool ba_nack(std::uint8_t i) { return (i & 0x80) != 0; }
std::uint32_t ba_delivered(std::uint8_t i) { return (i & 0x7F) >> bits; }
psn_t ba_apsn(std::uint8_t i) { return psn_t(i); }

template <std::size_t N>
void insert(std::array<std::uint8_t, N>& a, std::uint8_t& n, std::uint8_t v) {
  a[n++] = v;
  std::sort(a.begin(), a.begin() + n);
}
template <std::size_t N>
void erase(std::array<std::uint8_t, N>& a, std::uint8_t& n, std::size_t at) {
  std::copy(a.begin() + static_cast<std::ptrdiff_t>(at) + 1, a.begin() + n,
            a.begin() + static_cast<std::ptrdiff_t>(at));
  a[--n] = 0;
}

t::gbn_sender<bits> sender_of(const state& s) {
  t::gbn_sender<bits> x;
  x.next = psn_t(s.next);
  x.una = psn_t(s.una);
  x.timing = s.timing != 0;
  x.retries = s.retries;
  x.unreachable = s.unreachable != 0;
  return x;  // deadline 0: every timer is due whenever the adversary says so
}
void store(state& s, const t::gbn_sender<bits>& x) {
  s.next = static_cast<std::uint8_t>(x.next.value);
  s.una = static_cast<std::uint8_t>(x.una.value);
  s.timing = x.timing;
  s.retries = static_cast<std::uint8_t>(std::min<std::uint32_t>(x.retries, 255));
  s.unreachable = x.unreachable;
}
t::gbn_receiver<bits> receiver_of(const state& s) {
  t::gbn_receiver<bits> r;
  r.expected = psn_t(s.expected);
  r.nacked = s.nacked != 0;
  r.nack_due = s.nack_due != 0;
  r.ack_due = s.ack_due != 0;
  r.unacked = s.unacked;
  r.ack_timing = s.ack_timing != 0;
  return r;
}
void store(state& s, const t::gbn_receiver<bits>& r) {
  s.expected = static_cast<std::uint8_t>(r.expected.value);
  s.nacked = r.nacked;
  s.nack_due = r.nack_due;
  s.ack_due = r.ack_due;
  s.unacked = static_cast<std::uint8_t>(std::min<std::uint32_t>(r.unacked, 255));
  s.ack_timing = r.ack_timing;
}

enum class move : std::uint8_t {
  transmit,
  deliver_ab,
  drop_ab,
  dup_ab,
  deliver_ba,
  drop_ba,
  dup_ba,
  timeout,
  early_timeout,
  ack_timer,
  send_ack,
};

struct label {
  move m = move::transmit;
  std::uint8_t item = 0;
};

std::string describe(label l) {
  const auto pdu = [&] {
    return "PSN " + std::to_string(ab_psn(l.item).value) + " (message " +
           std::to_string(ab_message(l.item)) + ")";
  };
  const auto rh = [&] {
    return std::string(ba_nack(l.item) ? "NACK " : "ACK ") + std::to_string(ba_apsn(l.item).value);
  };
  switch (l.m) {
    case move::transmit:
      return "A transmits " + pdu();
    case move::deliver_ab:
      return "B receives " + pdu();
    case move::drop_ab:
      return "the channel loses " + pdu();
    case move::dup_ab:
      return "the channel copies " + pdu();
    case move::deliver_ba:
      return "A receives " + rh();
    case move::drop_ba:
      return "the channel loses " + rh();
    case move::dup_ba:
      return "the channel copies " + rh();
    case move::timeout:
      return "A times out (quiet system)";
    case move::early_timeout:
      return "A times out early";
    case move::ack_timer:
      return "B's ACK timer fires";
    case move::send_ack:
      return "B sends " + rh();
  }
  return "?";
}

struct result {
  std::uint64_t states = 0, transitions = 0, complete = 0, stuck = 0, depth = 0;
  double seconds = 0;
  std::string violation;  // empty: every check held
  std::vector<std::string> trace;
};

class explorer {
 public:
  explicit explorer(const bounds& b) : b_(b) {
    cfg_.window = b.window;
    cfg_.ack_every = b.ack_every;
    // A run of timeouts without progress costs the adversary a drop or an early timeout for
    // each but one (the first can follow a reordering alone: B dropped a PDU as a gap and then
    // cancelled the NACK when the PSN it was waiting for came). With this many retries A never
    // gives up, so every run can still complete; with one fewer, the checker finds A giving up.
    cfg_.max_retries = b.drops + b.early_timeouts + b.spare_retries;
  }

  result run() {
    const auto t0 = std::chrono::steady_clock::now();
    state init;
    init.drops = static_cast<std::uint8_t>(b_.drops);
    init.dups = static_cast<std::uint8_t>(b_.duplicates);
    init.early = static_cast<std::uint8_t>(b_.early_timeouts);
    init.buffer.fill(free_slot);
    slots_.assign(1 << 16, empty);
    intern(init, none, {});
    std::vector<std::uint32_t> next;
    succ_begin_.push_back(0);
    for (std::uint32_t i = 0; i < states_.size() && res_.violation.empty(); ++i) {
      check_state(i);
      next.clear();
      expand(i, next);
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      succ_.insert(succ_.end(), next.begin(), next.end());
      succ_begin_.push_back(static_cast<std::uint32_t>(succ_.size()));
    }
    res_.states = states_.size();
    res_.transitions = succ_.size();
    if (res_.violation.empty()) check_progress();
    res_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res_;
  }

 private:
  static constexpr std::uint32_t none = 0xFFFFFFFF;
  static constexpr std::uint64_t empty = ~std::uint64_t{0};

  // ---- the visited set: open addressing over indices into states_, each slot tagged with
  // the upper half of the hash so that a probe rarely has to look at a state ----

  std::uint32_t intern(const state& s, std::uint32_t from, label l) {
    if (states_.size() * 2 >= slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    const std::uint64_t h = hash_of(s);
    const std::uint64_t tag = h & ~std::uint64_t{0xFFFFFFFF};
    for (std::size_t at = h & mask;; at = (at + 1) & mask) {
      const std::uint64_t slot = slots_[at];
      if (slot == empty) {
        const auto id = static_cast<std::uint32_t>(states_.size());
        slots_[at] = tag | id;
        states_.push_back(s);
        parent_.push_back(from);
        how_.push_back(l);
        depth_.push_back(from == none ? 0 : depth_[from] + 1);
        res_.depth = std::max<std::uint64_t>(res_.depth, depth_.back());
        return id;
      }
      const auto id = static_cast<std::uint32_t>(slot);
      if ((slot & ~std::uint64_t{0xFFFFFFFF}) == tag && states_[id] == s) return id;
    }
  }
  void grow() {
    slots_.assign(slots_.size() * 2, empty);
    const std::size_t mask = slots_.size() - 1;
    for (std::uint32_t id = 0; id < states_.size(); ++id) {
      const std::uint64_t h = hash_of(states_[id]);
      std::size_t at = h & mask;
      while (slots_[at] != empty) at = (at + 1) & mask;
      slots_[at] = (h & ~std::uint64_t{0xFFFFFFFF}) | id;
    }
  }

  // ---- checks ----

  void violate(std::uint32_t at, const std::string& what, const label* last = nullptr) {
    if (!res_.violation.empty()) return;
    res_.violation = what;
    std::vector<std::string> rev;
    if (last) rev.push_back(describe(*last));
    for (std::uint32_t i = at; parent_[i] != none; i = parent_[i]) rev.push_back(describe(how_[i]));
    res_.trace.assign(rev.rbegin(), rev.rend());
  }

  void check_state(std::uint32_t i) {
    const state& s = states_[i];
    const t::gbn_sender<bits> x = sender_of(s);
    const std::uint32_t in_flight = x.in_flight();
    if (s.assigned > b_.messages || s.delivered > s.assigned) violate(i, "counts out of range");
    if (x.next != psn_t(s.assigned)) violate(i, "next is not the count of PSNs given out");
    if (in_flight > b_.window) violate(i, "in_flight above the window");
    if (in_flight > s.assigned) violate(i, "una before the first PSN");
    const std::uint32_t una = s.assigned - std::min<std::uint32_t>(in_flight, s.assigned);
    if (!(x.una == x.next || before(x.una, x.next))) violate(i, "una after next");
    if (una > s.delivered) violate(i, "A released a PDU B has not delivered");
    if (psn_t(s.expected) != psn_t(s.delivered)) violate(i, "expected is not delivered mod 2^3");
    if (s.cursor < una || s.cursor > s.assigned) violate(i, "transmit cursor outside the window");
    for (std::uint32_t p = 0; p < space; ++p) {
      bool held = false;
      for (std::uint32_t m = una; m < s.assigned; ++m) {
        if (psn_t(m) == psn_t(p)) {
          held = true;
          if (s.buffer[p] != m) violate(i, "a buffer lost its PDU");
        }
      }
      if (!held && s.buffer[p] != free_slot) violate(i, "a buffer outlived its PDU");
    }
    if (s.unreachable) violate(i, "A gave up though the channel lost little");
    if (s.delivered == b_.messages && s.assigned == b_.messages && in_flight == 0) {
      ++res_.complete;
    }
  }

  // Whether A may give out the PSN for message `assigned`: nothing in flight is `lifetime`
  // or more PSNs behind it.
  bool young_enough(const state& s) const {
    if (b_.lifetime == unbounded) return true;
    const std::uint32_t next = s.assigned + 1u;
    for (std::uint8_t k = 0; k < s.n_ab; ++k) {
      if (ab_message(s.ab[k]) + b_.lifetime < next) return false;
    }
    for (std::uint8_t k = 0; k < s.n_ba; ++k) {
      if (ba_delivered(s.ba[k]) + b_.lifetime < next) return false;
    }
    return true;
  }

  // The caller's part after the sender stepped: free what was released, move the cursor
  // back for a go-back (checking every PSN to resend is still held).
  bool apply(std::uint32_t i, state& s, const t::sender_actions<bits>& a, std::uint32_t una,
             const label& l) {
    if (a.released > 0) {
      if (a.released_from != psn_t(una)) {
        violate(i, "release does not start at una", &l);
        return false;
      }
      for (std::uint32_t k = 0; k < a.released; ++k) {
        std::uint8_t& slot = s.buffer[psn_t(una + k).value];
        if (slot != una + k || una + k >= s.delivered) {
          violate(i, "A released a PDU B has not delivered", &l);
          return false;
        }
        slot = free_slot;
      }
      una += a.released;
    }
    s.cursor = static_cast<std::uint8_t>(std::max<std::uint32_t>(s.cursor, una));
    if (a.resend > 0) {
      for (std::uint32_t k = 0; k < a.resend; ++k) {
        if (s.buffer[(a.resend_from + k).value] == free_slot) {
          violate(i, "resend of a PSN already released", &l);
          return false;
        }
      }
      s.cursor = static_cast<std::uint8_t>(una + distance(psn_t(una), a.resend_from));
    }
    return true;
  }

  void add(std::uint32_t i, state s, label l, std::vector<std::uint32_t>& out) {
    if (s.nack_mark != s.delivered + 1) s.nack_mark = 0;  // an old gap: forget it
    out.push_back(intern(s, i, l));
  }

  void expand(std::uint32_t i, std::vector<std::uint32_t>& out) {
    const state s = states_[i];
    const t::gbn_sender<bits> tx = sender_of(s);
    const t::gbn_receiver<bits> rx = receiver_of(s);
    const std::uint32_t una = s.assigned - tx.in_flight();

    // A transmits: a pending resend first, else a new message.
    if (!s.unreachable && s.n_ab < b_.capacity) {
      state n = s;
      if (s.cursor < s.assigned) {
        const psn_t p(s.cursor);
        const label l{move::transmit, ab_item(s.cursor, p)};
        if (s.buffer[p.value] != s.cursor) return violate(i, "resending a buffer not held", &l);
        insert(n.ab, n.n_ab, l.item);
        ++n.cursor;
        add(i, n, l, out);
      } else if (s.assigned < b_.messages && young_enough(s)) {
        const auto [x, a] = t::step(tx, t::sender_event<bits>{t::sender_input::send}, 0, cfg_);
        if (a.assigned) {
          const label l{move::transmit, ab_item(s.assigned, a.psn_assigned)};
          if (a.psn_assigned != psn_t(s.assigned)) return violate(i, "PSN not +1 per PDU", &l);
          if (s.buffer[a.psn_assigned.value] != free_slot) {
            return violate(i, "a PSN reused while in flight", &l);
          }
          store(n, x);
          n.buffer[a.psn_assigned.value] = s.assigned;
          insert(n.ab, n.n_ab, l.item);
          n.cursor = ++n.assigned;
          add(i, n, l, out);
        }
      }
    }

    // The channel A to B.
    for (std::uint8_t k = 0; k < s.n_ab; ++k) {
      if (k > 0 && s.ab[k] == s.ab[k - 1]) continue;
      const std::uint8_t item = s.ab[k];
      {
        state n = s;
        erase(n.ab, n.n_ab, k);
        const label l{move::deliver_ab, item};
        const auto [r, a] = t::step(
            rx, t::receiver_event<bits>{t::receiver_input::pdu, ab_psn(item), true}, 0, cfg_);
        store(n, r);
        // The first PDU past a gap brings its NACK; a duplicate brings an ACK.
        if (a.dropped == t::drop_reason::gap && s.nack_mark != s.delivered + 1 &&
            t::pending_ack(r).first != w::rh_op::nack) {
          return violate(i, "a gap without a NACK", &l);
        }
        if (a.dropped == t::drop_reason::duplicate && !a.ack_now) {
          return violate(i, "a duplicate not acknowledged again", &l);
        }
        if (a.deliver) {
          if (ab_message(item) != s.delivered) {
            return violate(i,
                           "B delivered message " + std::to_string(ab_message(item)) + " where " +
                               std::to_string(s.delivered) + " was next",
                           &l);
          }
          ++n.delivered;
        }
        add(i, n, l, out);
      }
      if (s.drops > 0) {
        state n = s;
        erase(n.ab, n.n_ab, k);
        --n.drops;
        add(i, n, {move::drop_ab, item}, out);
      }
      if (s.dups > 0 && s.n_ab < b_.capacity) {
        state n = s;
        insert(n.ab, n.n_ab, item);
        --n.dups;
        add(i, n, {move::dup_ab, item}, out);
      }
    }

    // The channel B to A.
    for (std::uint8_t k = 0; k < s.n_ba; ++k) {
      if (k > 0 && s.ba[k] == s.ba[k - 1]) continue;
      const std::uint8_t item = s.ba[k];
      {
        state n = s;
        erase(n.ba, n.n_ba, k);
        const label l{move::deliver_ba, item};
        const t::sender_input in = ba_nack(item) ? t::sender_input::nack : t::sender_input::ack;
        const psn_t apsn = ba_apsn(item);
        const auto [x, a] = t::step(tx, t::sender_event<bits>{in, apsn}, 0, cfg_);
        if (in == t::sender_input::nack && !tx.unreachable &&
            within(apsn, tx.una, tx.in_flight() + 1) &&
            (a.resend_from != apsn || a.resend != distance(apsn, tx.next))) {
          return violate(i, "A did not go back to the NACKed PSN", &l);
        }
        store(n, x);
        if (!apply(i, n, a, una, l)) return;
        add(i, n, l, out);
      }
      if (s.drops > 0) {
        state n = s;
        erase(n.ba, n.n_ba, k);
        --n.drops;
        add(i, n, {move::drop_ba, item}, out);
      }
      if (s.dups > 0 && s.n_ba < b_.capacity) {
        state n = s;
        insert(n.ba, n.n_ba, item);
        --n.dups;
        add(i, n, {move::dup_ba, item}, out);
      }
    }

    // A's retransmit timer.
    if (tx.timing && !tx.unreachable) {
      const bool quiet = s.n_ab == 0 && s.n_ba == 0 && s.cursor == s.assigned &&
                         t::pending_ack(rx).first == w::rh_op::none;
      if (quiet || s.early > 0) {
        state n = s;
        if (!quiet) --n.early;
        const label l{quiet ? move::timeout : move::early_timeout, 0};
        const auto [x, a] = t::step(tx, t::sender_event<bits>{t::sender_input::tick}, 0, cfg_);
        if (!a.unreachable && (a.resend == 0 || a.resend_from != tx.una)) {
          return violate(i, "a timeout did not go back to una", &l);
        }
        store(n, x);
        if (!apply(i, n, a, una, l)) return;
        add(i, n, l, out);
      }
    }

    // B's ACK timer, and B's stand-alone RH.
    if (rx.ack_timing && !rx.ack_due) {
      state n = s;
      const auto [r, a] = t::step(rx, t::receiver_event<bits>{t::receiver_input::tick}, 0, cfg_);
      (void)a;
      store(n, r);
      add(i, n, {move::ack_timer, 0}, out);
    }
    if ((rx.ack_due || rx.nack_due) && s.n_ba < b_.capacity) {
      const auto [op, apsn] = t::pending_ack(rx);
      const label l{move::send_ack, ba_item(op, s.delivered, apsn)};
      if (op == w::rh_op::none) return violate(i, "an ACK is due with nothing to say", &l);
      if (op == w::rh_op::nack && apsn != psn_t(s.delivered)) {
        return violate(i, "NACK apsn is not the expected PSN", &l);
      }
      if (op == w::rh_op::ack && apsn != psn_t(s.delivered) - 1) {
        return violate(i, "ACK apsn is not the last PSN delivered", &l);
      }
      if (op == w::rh_op::nack && s.nack_mark == s.delivered + 1) {
        return violate(i, "a second NACK for one gap", &l);
      }
      state n = s;
      if (op == w::rh_op::nack) n.nack_mark = static_cast<std::uint8_t>(s.delivered + 1);
      const auto [r, a] =
          t::step(rx, t::receiver_event<bits>{t::receiver_input::ack_sent}, 0, cfg_);
      (void)a;
      store(n, r);
      insert(n.ba, n.n_ba, l.item);
      add(i, n, l, out);
    }
  }

  // Backwards from the complete states over the reversed transitions: whatever is not reached
  // cannot complete.
  void check_progress() {
    const std::size_t n = states_.size();
    std::vector<std::uint32_t> rbegin(n + 1, 0), rsucc(succ_.size());
    for (const std::uint32_t to : succ_) ++rbegin[to + 1];
    for (std::size_t k = 0; k < n; ++k) rbegin[k + 1] += rbegin[k];
    std::vector<std::uint32_t> fill(rbegin.begin(), rbegin.end() - 1);
    for (std::uint32_t from = 0; from < n; ++from) {
      for (std::uint32_t e = succ_begin_[from]; e < succ_begin_[from + 1]; ++e) {
        rsucc[fill[succ_[e]]++] = from;
      }
    }
    std::vector<std::uint8_t> good(n, 0);
    std::vector<std::uint32_t> work;
    for (std::uint32_t k = 0; k < n; ++k) {
      const state& s = states_[k];
      if (s.delivered == b_.messages && s.assigned == b_.messages && s.next == s.una) {
        good[k] = 1;
        work.push_back(k);
      }
    }
    while (!work.empty()) {
      const std::uint32_t to = work.back();
      work.pop_back();
      for (std::uint32_t e = rbegin[to]; e < rbegin[to + 1]; ++e) {
        if (!good[rsucc[e]]) {
          good[rsucc[e]] = 1;
          work.push_back(rsucc[e]);
        }
      }
    }
    std::uint32_t first = none;
    for (std::uint32_t k = 0; k < n; ++k) {
      if (good[k]) continue;
      ++res_.stuck;
      if (first == none) first = k;  // the shallowest: states are numbered breadth-first
    }
    if (first != none) violate(first, "a reachable state from which no run completes");
  }

  bounds b_;
  t::gbn_config cfg_;
  std::vector<state> states_;
  std::vector<std::uint32_t> parent_, depth_;
  std::vector<label> how_;
  std::vector<std::uint64_t> slots_;
  std::vector<std::uint32_t> succ_begin_, succ_;
  result res_;
};

std::string describe(const bounds& b) {
  return "3-bit PSNs, " + std::to_string(b.messages) + " messages, window " +
         std::to_string(b.window) + ", channel capacity " + std::to_string(b.capacity) +
         ", at most " + std::to_string(b.drops) + " losses, " + std::to_string(b.duplicates) +
         " copies, " + std::to_string(b.early_timeouts) + " early timeouts, ACK every " +
         std::to_string(b.ack_every) + ", max_retries " +
         std::to_string(b.drops + b.early_timeouts + b.spare_retries) + ", lifetime " +
         (b.lifetime == unbounded ? std::string("unbounded") : std::to_string(b.lifetime)) +
         " PSNs";
}

std::string joined(const std::vector<std::string>& trace) {
  std::string s;
  for (const auto& step : trace) s += "\n  " + step;
  return s;
}

result explore(const bounds& b) {
  const result r = explorer(b).run();
  MESSAGE(describe(b), ": ", r.states, " states, ", r.transitions, " transitions, ", r.complete,
          " complete, depth ", r.depth, ", ", r.seconds, " s");
  return r;
}

void check_all_good(const bounds& b, const result& r, std::uint64_t floor) {
  INFO(describe(b));
  INFO(r.violation, "; trace:", joined(r.trace));
  CHECK(r.violation == "");
  CHECK(r.stuck == 0);
  CHECK(r.states > floor);  // a model that prunes everything proves nothing
  CHECK(r.complete > 0);
}

}  // namespace

TEST_CASE("gbn exhaustive: window 3 of 8 PSNs, 10 messages, 2 losses, a copy, reordering") {
  bounds b;
  b.messages = 10;
  b.window = 3;
  b.capacity = 2;
  b.drops = 2;
  b.duplicates = 1;
  b.early_timeouts = 0;
  b.ack_every = 2;
  check_all_good(b, explore(b), 1'500'000);
}

TEST_CASE("gbn exhaustive: a timer that fires too soon") {
  bounds b;
  b.messages = 9;
  b.window = 3;
  b.capacity = 2;
  b.drops = 1;
  b.duplicates = 0;
  b.early_timeouts = 1;
  b.ack_every = 2;
  check_all_good(b, explore(b), 800'000);
  b.window = 2;
  b.duplicates = 1;
  b.ack_every = 3;
  check_all_good(b, explore(b), 600'000);
}

TEST_CASE("gbn exhaustive: stop-and-wait, immediate ACKs, a deeper channel") {
  bounds b;
  b.messages = 9;
  b.window = 1;
  b.capacity = 3;
  b.drops = 2;
  b.duplicates = 2;
  b.early_timeouts = 1;
  b.ack_every = 1;
  check_all_good(b, explore(b), 150'000);
}

TEST_CASE("gbn exhaustive: a packet lifetime of 2^bits PSNs lets a stale PSN pass for a new one") {
  // Not a defect of the machines: every serial-number protocol needs the bound (the cases above
  // hold with 2^bits - 1). This shows the checker finds what goes wrong one step beyond it: a
  // stale ACK taken for a new one, or a stale PDU delivered as a new message.
  for (const std::uint32_t lifetime : {space, unbounded}) {
    for (const std::uint32_t duplicates : {0u, 1u}) {
      bounds b;
      b.lifetime = lifetime;
      b.drops = 0;
      b.duplicates = duplicates;
      b.early_timeouts = 0;
      const result r = explore(b);
      INFO(describe(b));
      INFO(r.violation, "; trace:", joined(r.trace));
      CHECK((r.violation == "A released a PDU B has not delivered" ||
             r.violation.find("B delivered message 0 where 8 was next") == 0));
      CHECK(r.trace.size() > 8);  // it takes a wrap
    }
  }
}

TEST_CASE("gbn exhaustive: one retry fewer and a reordering plus the budget make A give up") {
  bounds b;
  b.messages = 9;
  b.drops = 1;
  b.duplicates = 0;
  b.early_timeouts = 1;
  b.spare_retries = 0;
  const result r = explore(b);
  INFO(r.violation, "; trace:", joined(r.trace));
  CHECK(r.violation == "A gave up though the channel lost little");
}
