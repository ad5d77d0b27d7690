// Credit-based flow control (R2 3.5.7; R2 4.2 step 2 for the eligibility hook): the credit
// update's bytes written by hand, the sender's all-or-nothing consumption, absolute credit
// returns that survive lost, repeated and reordered updates, the VC-to-class map, the receiver's
// buffer accounting and update generation by threshold, by time and by refresh, seeded random
// runs over a lossy update channel, and a packer whose eligibility is the CBFC adapter.
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/packer.hpp>
#include <scaleup/transport/cbfc.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <vector>

namespace scaleup::transport {
// Failure messages show the update, not "{?}".
static std::ostream& operator<<(std::ostream& os, const cbfc_update& u) {
  return os << "{class " << unsigned{u.cls} << ", rsvd " << unsigned{u.rsvd} << ", limit "
            << u.limit << "}";
}
}  // namespace scaleup::transport

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;
namespace pk = scaleup::pack;
using w::errc;

// Drives a sender the way a caller would: one event at a time, state kept between them.
struct sender {
  t::cbfc_sender s;
  t::cbfc_sender_actions send(std::uint8_t vc, std::size_t bytes, std::uint64_t now = 0) {
    auto [n, a] = t::step(s, t::cbfc_send(vc, bytes), now);
    s = n;
    return a;
  }
  t::cbfc_sender_actions credit(std::uint8_t cls, std::uint32_t limit, std::uint64_t now = 0) {
    auto [n, a] = t::step(s, t::cbfc_credit({cls, 0, limit}), now);
    s = n;
    return a;
  }
};

struct receiver {
  t::cbfc_receiver r;
  t::cbfc_receiver_actions last;
  t::cbfc_receiver_actions operator()(const t::cbfc_receiver_event& e, std::uint64_t now) {
    auto [n, a] = t::step(r, e, now);
    r = n;
    return last = a;
  }
};

std::vector<t::cbfc_update> updates_of(const t::cbfc_receiver_actions& a) {
  return {a.updates.begin(), a.updates.begin() + a.update_count};
}

}  // namespace

TEST_CASE("cbfc: credit update golden bytes and field table") {
  // class 5 = 00101, rsvd 000 -> 0x28; limit 0x012345 in the next three bytes.
  const auto b = w::to_bytes(t::cbfc_update{5, 0, 0x012345});
  REQUIRE(b.ok());
  CHECK(b.value == std::array<std::uint8_t, 4>{0x28, 0x01, 0x23, 0x45});
  // class 31 = 11111 -> 0xF8; the largest limit.
  const auto top = w::to_bytes(t::cbfc_update{31, 0, 0xFFFFFF});
  REQUIRE(top.ok());
  CHECK(top.value == std::array<std::uint8_t, 4>{0xF8, 0xFF, 0xFF, 0xFF});

  const std::array<std::uint8_t, 4> in{0x28, 0x01, 0x23, 0x45};
  const auto d = w::decode<t::cbfc_update>(in);
  REQUIRE(d.ok());
  CHECK(*d == t::cbfc_update{5, 0, 0x012345});

  // Reserved bits are kept (re-encoding gives the same bytes) and are not an error.
  const std::array<std::uint8_t, 4> rsv{0x2F, 0x00, 0x00, 0x07};
  const auto r = w::decode<t::cbfc_update>(rsv);
  REQUIRE(r.ok());
  CHECK(r->cls == 5);
  CHECK(r->rsvd == 7);
  CHECK(r->limit == 7);

  const auto big = w::to_bytes(t::cbfc_update{32, 0, 0});
  CHECK(big.err.code == errc::value_too_big);
  CHECK(big.err.field == "cbfc.class");
  const auto wide = w::to_bytes(t::cbfc_update{0, 0, 0x1000000});
  CHECK(wide.err.code == errc::value_too_big);
  CHECK(wide.err.field == "cbfc.limit");
  const std::array<std::uint8_t, 3> shorter{0x28, 0x01, 0x23};
  CHECK(w::decode<t::cbfc_update>(shorter).err.code == errc::truncated);

  static_assert(w::field_infos<t::cbfc_update>[0].width == 5);
  static_assert(w::field_infos<t::cbfc_update>[2].width == t::cbfc_counter_bits);
}

TEST_CASE("cbfc: a frame costs whole cells") {
  constexpr t::cbfc_config c{};
  static_assert(c.cell_bytes == 64);
  static_assert(c.cost(0) == 0);
  static_assert(c.cost(1) == 1);
  static_assert(c.cost(64) == 1);
  static_assert(c.cost(65) == 2);
  static_assert(c.cost(4160) == 65);
  constexpr t::cbfc_config bytes{.cell_bytes = 1};
  static_assert(bytes.cost(1500) == 1500);
  constexpr t::cbfc_config zero{.cell_bytes = 0};
  static_assert(zero.cost(77) == 77);
  static_assert(t::cbfc_receiver_config{}.check().code == errc::none);
}

TEST_CASE("cbfc: both machines run in constant expressions") {
  static_assert([] {
    const auto [s1, a1] = t::step(t::cbfc_sender{}, t::cbfc_credit({0, 0, 10}), 0);
    const auto [s2, a2] = t::step(s1, t::cbfc_send(0, 65), 1);
    return s2.available(0) == 8 && a1.credits == 10 && a2.credits == 2;
  }());
  static_assert([] {
    const auto [r1, a1] = t::step(t::cbfc_receiver{}, t::cbfc_tick(), 0);
    return a1.update_count == 4 && a1.updates[3] == t::cbfc_update{3, 0, 1024} &&
           r1.advertised == 0xF;
  }());
}

TEST_CASE("cbfc: a sender stops at zero credits and resumes on return") {
  sender s;
  // No credit before the receiver's first update.
  CHECK(s.s.available(0) == 0);
  CHECK_FALSE(s.s.can_send(0, 1));
  auto a = s.send(0, 1);
  CHECK(a.err.code == errc::no_space);
  CHECK(a.err.field == "cbfc.class");
  CHECK(a.err.needed == 1);
  CHECK(a.err.available == 0);

  a = s.credit(0, 10, 5);
  CHECK(!a.err);
  CHECK(a.credits == 10);
  CHECK(s.s.heard_at[0] == 5);
  CHECK(s.s.available(0) == 10);

  a = s.send(0, 600);  // 10 cells
  CHECK(!a.err);
  CHECK(a.credits == 10);
  CHECK(a.cls == 0);
  CHECK(s.s.available(0) == 0);

  // Refused, and nothing changes: credits never go negative.
  const t::cbfc_sender before = s.s;
  a = s.send(0, 64);
  CHECK(a.err.code == errc::no_space);
  CHECK(s.s.consumed == before.consumed);
  CHECK(s.s.available(0) == 0);
  CHECK(s.s.refused == 2);

  a = s.credit(0, 12);
  CHECK(a.credits == 2);
  CHECK(s.s.can_send(0, 128));
  CHECK_FALSE(s.s.can_send(0, 129));
  CHECK(!s.send(0, 128).err);
  CHECK(s.s.frames == 2);

  // A frame larger than the credits is refused whole, not sent in part.
  CHECK(s.credit(0, 20).credits == 8);
  CHECK(s.send(0, 9 * 64).err.code == errc::no_space);
  CHECK(s.s.available(0) == 8);
}

TEST_CASE("cbfc: absolute credit returns tolerate lost, repeated and reordered updates") {
  sender s;
  CHECK(s.credit(2, 100).credits == 100);
  for (int i = 0; i < 100; ++i) REQUIRE(!s.send(2, 64).err);
  CHECK(s.s.available(2) == 0);

  // The receiver frees 30, 30 and 40 and sends limits 130, 160, 200: the first two are lost.
  // The third carries all of it; an incremental "+40" would have left 60 credits lost for good.
  const auto a = s.credit(2, 200);
  CHECK(a.credits == 100);
  CHECK(s.s.available(2) == 100);

  // The lost ones turn up late, out of order: older than the limit held, ignored.
  auto late = s.credit(2, 160);
  CHECK(late.stale);
  CHECK(late.credits == 0);
  CHECK(!late.err);
  late = s.credit(2, 130);
  CHECK(late.stale);
  CHECK(s.s.available(2) == 100);
  CHECK(s.s.stale == 2);

  // A repeat of the newest (a refresh) changes nothing.
  const auto again = s.credit(2, 200);
  CHECK(!again.stale);
  CHECK(again.credits == 0);
  CHECK(s.s.available(2) == 100);
}

TEST_CASE("cbfc: a lost last update is repaired by the receiver's refresh") {
  receiver r;
  r.r.cfg.capacity = {};
  r.r.cfg.capacity[0] = 8;
  r.r.cfg.threshold = 4;
  r.r.cfg.max_delay = 100;
  r.r.cfg.refresh = 1000;
  sender s;

  auto a = r(t::cbfc_tick(), 0);
  REQUIRE(a.update_count == 1);
  CHECK(a.updates[0] == t::cbfc_update{0, 0, 8});
  s.credit(0, a.updates[0].limit);
  for (int i = 0; i < 8; ++i) {
    REQUIRE(!s.send(0, 64).err);
    REQUIRE(!r(t::cbfc_arrive(0, 64), 1).err);
  }
  CHECK(s.s.available(0) == 0);
  // The XPU drains everything; the update that says so is lost on the link.
  for (int i = 0; i < 8; ++i) r(t::cbfc_drain(0, 64), 10);
  CHECK(updates_of(r.last) == std::vector<t::cbfc_update>{{0, 0, 16}});
  CHECK(r.r.occupied[0] == 0);
  // Nothing more is freed, so nothing new would be said; the refresh says it again.
  CHECK(r.last.next_deadline == 10 + 1000);
  CHECK(r(t::cbfc_tick(), 1009).update_count == 0);
  a = r(t::cbfc_tick(), 1010);
  REQUIRE(a.update_count == 1);
  CHECK(a.updates[0] == t::cbfc_update{0, 0, 16});
  CHECK(s.credit(0, a.updates[0].limit).credits == 8);
  CHECK(s.s.available(0) == 8);
}

TEST_CASE("cbfc: counters wrap at 2^24") {
  sender s;
  s.s.consumed[1] = 0xFFFFF0;
  s.s.limit[1] = 0xFFFFF0;
  // Limit 0x000010 is 32 ahead of 0xFFFFF0 across the wrap.
  CHECK(s.credit(1, 0x000010).credits == 32);
  CHECK(s.s.available(1) == 32);
  CHECK(!s.send(1, 20 * 64).err);
  CHECK(s.s.consumed[1] == 0x000004);
  CHECK(s.s.available(1) == 12);
  // 0xFFFFF8 is behind 0x000010 now: stale.
  CHECK(s.credit(1, 0xFFFFF8).stale);
  CHECK(s.s.available(1) == 12);

  receiver r;
  r.r.cfg.capacity = {};
  r.r.cfg.capacity[1] = 16;
  r.r.freed[1] = 0xFFFFF8;
  CHECK(r.r.limit(1) == 0x000008);
}

TEST_CASE("cbfc: impossible updates are refused and change nothing") {
  sender s;
  s.credit(0, 50);
  for (int i = 0; i < 40; ++i) REQUIRE(!s.send(0, 64).err);
  const t::cbfc_sender before = s.s;
  // More than half the space ahead of what was consumed: no buffer is that large.
  auto a = s.credit(0, 40 + t::cbfc_counter_half);
  CHECK(a.err.code == errc::bad_value);
  CHECK(a.err.field == "cbfc.limit");
  CHECK(s.s.limit == before.limit);
  a = s.credit(32, 60);
  CHECK(a.err.code == errc::value_too_big);
  CHECK(a.err.field == "cbfc.class");
  a = s.credit(0, 0x1000000);
  CHECK(a.err.code == errc::value_too_big);
  CHECK(a.err.field == "cbfc.limit");
  CHECK(s.s.bad == 3);
  CHECK(s.s.available(0) == 10);
  CHECK(s.send(4, 64).err.code == errc::value_too_big);
}

TEST_CASE("cbfc: the VC-to-class map") {
  sender d;  // default: VC v -> class v
  for (std::uint8_t v = 0; v < 4; ++v) CHECK(d.s.cfg.vc_class[v] == v);
  d.credit(3, 5);
  CHECK(d.s.can_send(3, 64));
  CHECK_FALSE(d.s.can_send(0, 64));
  CHECK(d.send(3, 64).cls == 3);

  sender s;
  s.s.cfg.vc_class = {7, 7, 20, 31};
  s.credit(7, 4);
  CHECK(s.s.can_send(0, 64));
  CHECK(s.s.can_send(1, 64));
  CHECK_FALSE(s.s.can_send(2, 64));
  CHECK_FALSE(s.s.can_send(3, 64));
  // VC0 and VC1 share class 7: what one takes the other no longer has.
  auto a = s.send(1, 3 * 64);
  CHECK(a.cls == 7);
  CHECK(s.s.available_vc(0) == 1);
  CHECK_FALSE(s.s.can_send(0, 65));
  s.credit(31, 2);
  CHECK(s.send(3, 128).cls == 31);
  CHECK(s.s.available(31) == 0);
  CHECK(s.s.available(20) == 0);

  t::cbfc_receiver_config bad{};
  bad.link.vc_class[2] = 32;
  CHECK(bad.check().code == errc::value_too_big);
  t::cbfc_receiver_config huge{};
  huge.capacity[9] = t::cbfc_counter_half;
  CHECK(huge.check().code == errc::value_too_big);
  CHECK(huge.check().value == 9);
}

TEST_CASE("cbfc: receiver buffer accounting and credit return by threshold") {
  receiver r;
  r.r.cfg.capacity = {};
  r.r.cfg.capacity[4] = 100;
  r.r.cfg.threshold = 10;
  r.r.cfg.max_delay = 1000;
  r.r.cfg.refresh = 0;

  // The first step advertises the whole buffer.
  auto a = r(t::cbfc_tick(), 0);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{4, 0, 100}});
  CHECK(a.next_deadline == t::cbfc_never);

  for (int i = 0; i < 5; ++i) {
    a = r(t::cbfc_arrive(4, 128), 1);  // 2 cells each
    CHECK(!a.err);
    CHECK(a.update_count == 0);
  }
  CHECK(r.r.occupied[4] == 10);
  CHECK(r.r.frames == 5);

  // Freed credits wait until the threshold...
  for (int i = 0; i < 4; ++i) CHECK(r(t::cbfc_drain(4, 128), 10).update_count == 0);
  CHECK(r.r.unsent(4) == 8);
  CHECK(r.last.next_deadline == 1000);
  // ...and go as soon as it is reached.
  a = r(t::cbfc_drain(4, 100), 11);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{4, 0, 110}});
  CHECK(r.r.occupied[4] == 0);
  CHECK(r.r.unsent(4) == 0);

  // A frame beyond the buffer is dropped and reported: the sender broke the contract.
  a = r(t::cbfc_arrive(4, 100 * 64), 20);
  CHECK(!a.err);
  a = r(t::cbfc_arrive(4, 1), 21);
  CHECK(a.err.code == errc::no_space);
  CHECK(a.dropped);
  CHECK(a.err.needed == 1);
  CHECK(a.err.available == 0);
  CHECK(r.r.overflows == 1);
  CHECK(r.r.occupied[4] == 100);
  // Draining more than is held is an error and changes nothing.
  r.r.occupied[4] = 1;
  a = r(t::cbfc_drain(4, 65), 22);
  CHECK(a.err.code == errc::bad_value);
  CHECK(r.r.occupied[4] == 1);
  CHECK(r(t::cbfc_arrive(40, 64), 23).err.code == errc::value_too_big);
}

TEST_CASE("cbfc: credit return by time, then refresh") {
  receiver r;
  r.r.cfg.capacity = {};
  r.r.cfg.capacity[0] = 64;
  r.r.cfg.capacity[1] = 64;
  r.r.cfg.threshold = 32;
  r.r.cfg.max_delay = 1000;
  r.r.cfg.refresh = 5000;

  auto a = r(t::cbfc_tick(), 0);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{0, 0, 64}, {1, 0, 64}});
  CHECK(a.next_deadline == 5000);

  r(t::cbfc_arrive(1, 192), 50);
  a = r(t::cbfc_drain(1, 192), 100);  // 3 cells: under the threshold
  CHECK(a.update_count == 0);
  CHECK(a.next_deadline == 1000);
  CHECK(r(t::cbfc_tick(), 999).update_count == 0);
  a = r(t::cbfc_tick(), 1000);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{1, 0, 67}});
  // Class 0 refreshes at 5000, class 1 at 6000.
  CHECK(a.next_deadline == 5000);
  a = r(t::cbfc_tick(), 5000);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{0, 0, 64}});
  CHECK(a.next_deadline == 6000);
  a = r(t::cbfc_tick(), 6000);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{1, 0, 67}});

  // Coalescing: right after an update, freed credits wait max_delay from it.
  r(t::cbfc_arrive(1, 64), 6001);
  a = r(t::cbfc_drain(1, 64), 6002);
  CHECK(a.update_count == 0);
  CHECK(a.next_deadline == 7000);
  CHECK(updates_of(r(t::cbfc_tick(), 7000)) == std::vector<t::cbfc_update>{{1, 0, 68}});
  // Long after the last update, the first freed credit goes at once.
  CHECK(r(t::cbfc_arrive(0, 64), 9000).update_count == 0);
  a = r(t::cbfc_drain(0, 64), 9000);
  CHECK(updates_of(a) == std::vector<t::cbfc_update>{{0, 0, 65}});
}

TEST_CASE("cbfc: credits never go negative under random send/return sequences") {
  // A sender and a receiver joined by a link whose frames arrive at once and whose credit
  // updates are delayed, reordered and sometimes lost. Seeded and long.
  for (const std::uint32_t seed : {0xCBFC0001u, 0xCBFC0002u, 0xCBFC0003u}) {
    std::mt19937 rng(seed);
    receiver r;
    r.r.cfg.capacity = {};
    for (std::size_t c = 0; c < 4; ++c) r.r.cfg.capacity[c] = 100 + 37 * static_cast<uint32_t>(c);
    r.r.cfg.threshold = 16;
    r.r.cfg.max_delay = 50;
    r.r.cfg.refresh = 400;
    sender s;
    s.s.cfg.vc_class = {0, 1, 2, 3};
    // Start near the wrap so the run crosses it.
    for (std::size_t c = 0; c < 4; ++c) {
      s.s.consumed[c] = s.s.limit[c] = 0xFFFF00;
      r.r.freed[c] = 0xFFFF00;
    }
    struct in_flight {
      std::uint64_t at;
      t::cbfc_update u;
    };
    std::vector<in_flight> channel;
    std::array<std::deque<std::size_t>, 4> buffered{};  // frame sizes, in arrival order
    std::uint64_t now = 0, sent = 0, refused = 0, lost = 0;

    for (int i = 0; i < 60'000; ++i) {
      now += rng() % 7;
      const auto op = rng() % 10;
      if (op < 5) {
        const auto vc = static_cast<std::uint8_t>(rng() % 4);
        const std::size_t bytes = 1 + rng() % 1100;
        const bool could = s.s.can_send(vc, bytes);
        const auto a = s.send(vc, bytes, now);
        REQUIRE(could == !a.err);
        if (a.err) {
          REQUIRE(a.err.code == errc::no_space);
          ++refused;
          continue;
        }
        ++sent;
        const auto ra = r(t::cbfc_arrive(vc, bytes), now);
        REQUIRE(!ra.err);  // the receiver never overflows
        buffered[vc].push_back(bytes);
        for (std::size_t k = 0; k < ra.update_count; ++k)
          channel.push_back({now + rng() % 300, ra.updates[k]});
      } else if (op < 8) {
        const auto cls = static_cast<std::uint8_t>(rng() % 4);
        if (buffered[cls].empty()) continue;
        const auto ra = r(t::cbfc_drain(cls, buffered[cls].front()), now);
        REQUIRE(!ra.err);
        buffered[cls].pop_front();
        for (std::size_t k = 0; k < ra.update_count; ++k)
          channel.push_back({now + rng() % 300, ra.updates[k]});
      } else {
        const auto ra = r(t::cbfc_tick(), now);
        for (std::size_t k = 0; k < ra.update_count; ++k)
          channel.push_back({now + rng() % 300, ra.updates[k]});
      }
      // Deliver what is due, in the channel's (shuffled) order; a fifth is lost.
      for (std::size_t k = 0; k < channel.size();) {
        if (channel[k].at > now) {
          ++k;
          continue;
        }
        if (rng() % 5 == 0) {
          ++lost;
        } else {
          const auto a = s.credit(channel[k].u.cls, channel[k].u.limit, now);
          REQUIRE(!a.err);
        }
        channel[k] = channel.back();
        channel.pop_back();
      }
      for (std::uint8_t c = 0; c < 4; ++c) {
        // Never negative, never more than the buffer, and never more than is free there.
        REQUIRE(s.s.available(c) <= r.r.cfg.capacity[c]);
        REQUIRE(s.s.available(c) <= r.r.cfg.capacity[c] - r.r.occupied[c]);
        // What the sender consumed is what the receiver holds plus what it freed.
        REQUIRE(t::cbfc_distance(r.r.freed[c], s.s.consumed[c]) == r.r.occupied[c]);
      }
    }
    CHECK(sent > 10'000);
    CHECK(refused > 1'000);
    CHECK(lost > 100);

    // Drain everything and let time pass: refreshes restore every credit despite the losses.
    for (std::uint8_t c = 0; c < 4; ++c)
      for (const std::size_t b : buffered[c]) REQUIRE(!r(t::cbfc_drain(c, b), now).err);
    for (int k = 0; k < 4; ++k) {
      now += 1000;
      const auto ra = r(t::cbfc_tick(), now);
      for (std::size_t j = 0; j < ra.update_count; ++j)
        REQUIRE(!s.credit(ra.updates[j].cls, ra.updates[j].limit, now).err);
    }
    for (std::uint8_t c = 0; c < 4; ++c) CHECK(s.s.available(c) == r.r.cfg.capacity[c]);
  }
}

TEST_CASE("cbfc: random updates never make credits negative or unbounded") {
  std::mt19937 rng(0xCBFC0100u);
  sender s;
  std::uint64_t accepted = 0, stale = 0, bad = 0;
  for (int i = 0; i < 100'000; ++i) {
    const auto cls = static_cast<std::uint8_t>(rng() % 3);
    const t::cbfc_sender before = s.s;
    const bool is_send = rng() % 2 == 0;
    t::cbfc_sender_actions a;
    if (is_send) {
      a = s.send(cls, rng() % 2000, static_cast<std::uint64_t>(i));
    } else {
      // Anything at all (some too wide for the field), or something near the current limit.
      const std::uint32_t limit =
          rng() % 4 == 0 ? rng() & 0x1FFFFFF : (s.s.limit[cls] + rng() % 200 - 60) & 0xFFFFFF;
      a = s.credit(cls, limit, static_cast<std::uint64_t>(i));
      accepted += !a.err && !a.stale && a.credits > 0;
      stale += a.stale;
      bad += a.err ? 1 : 0;
    }
    if (a.err || a.stale) {
      REQUIRE(s.s.consumed == before.consumed);
      REQUIRE(s.s.limit == before.limit);
    } else if (is_send) {
      REQUIRE(s.s.available(cls) == before.available(cls) - a.credits);
    } else {
      REQUIRE(s.s.available(cls) == before.available(cls) + a.credits);
    }
    for (std::uint8_t c = 0; c < 3; ++c) REQUIRE(s.s.available(c) < t::cbfc_counter_half);
  }
  CHECK(accepted > 1000);
  CHECK(stale > 1000);
  CHECK(bad > 1000);
}

TEST_CASE("cbfc: a packer behind the CBFC adapter serves only VCs with credits") {
  // Two destinations, four VCs; barriers (4-byte controls, no data) make small PDUs whose size
  // is easy to count. The frame the adapter reserves for is the largest one the packer can
  // build: 64 bytes of headers and R-CRC plus the packing limit.
  constexpr std::size_t overhead = 64;
  auto p = std::make_unique<pk::packer<2, 4, 64>>(pk::default_profile);
  const std::size_t frame_max = overhead + p->settings().limit;
  const std::uint64_t max_cost = t::cbfc_config{}.cost(frame_max);
  REQUIRE(max_cost == 65);

  const std::array<std::uint8_t, 4> barrier{pk::code::barrier, 0, 0, 0};
  std::uint64_t cookie = 0;
  std::set<std::uint64_t> pushed;
  for (int i = 0; i < 6; ++i)
    for (std::uint16_t d = 0; d < 2; ++d)
      for (std::uint8_t vc = 0; vc < 2; ++vc) {
        // send_now closes each PDU after one command: one credit-consuming frame each.
        REQUIRE(!p->push({d, vc, w::bytes(barrier), {}, true, ++cookie}));
        pushed.insert(cookie);
      }

  // VC0: one worst-case frame and 6 cells more. Each barrier frame (68 bytes) costs 2 cells,
  // so VC0 is eligible at 71, 69, 67 and 65 credits and held at 63. VC1 has none.
  sender s;
  s.credit(0, static_cast<std::uint32_t>(max_cost + 6));
  std::vector<std::uint8_t> out(p->settings().limit);
  std::array<std::uint64_t, 1> cookies{};
  std::set<std::uint64_t> seen;
  std::array<int, 4> per_vc{};

  const auto serve = [&] {
    const auto r = p->next(out, t::cbfc_eligibility{&s.s, frame_max}, cookies);
    REQUIRE(r.ok());
    if (r->commands == 0) return false;
    // Eligibility promised the worst case, so the actual (smaller) frame always has credits.
    const auto a = s.send(r->vc, overhead + r->bytes);
    REQUIRE(!a.err);
    CHECK(seen.insert(cookies[0]).second);
    ++per_vc[r->vc];
    return true;
  };

  while (serve()) {
  }
  CHECK(per_vc[0] == 4);
  CHECK(per_vc[1] == 0);
  CHECK(s.s.available_vc(0) == 63);
  CHECK(p->queued(0, 0) + p->queued(1, 0) == 8);
  CHECK(p->queued(0, 1) + p->queued(1, 1) == 12);

  // Credits for VC1 come back: the held VC is served, and VC0's backlog on the next return.
  s.credit(1, static_cast<std::uint32_t>(100 * max_cost));
  while (serve()) {
  }
  CHECK(per_vc[1] == 12);
  CHECK(per_vc[0] == 4);
  s.credit(0, static_cast<std::uint32_t>(100 * max_cost));
  while (serve()) {
  }
  CHECK(per_vc[0] == 12);
  CHECK(p->queued() == 0);
  CHECK(seen == pushed);  // nothing lost, nothing twice
}
