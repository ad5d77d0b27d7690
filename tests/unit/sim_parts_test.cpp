// The pieces the fabric is built from (sim/): the calendar event queue against a reference
// heap of (time, sequence), the ring and the index map as they grow, the buffer pool's reuse,
// and read_pdu over every SUE encapsulation the library emits.
#include <scaleup/sim/buffer_pool.hpp>
#include <scaleup/sim/event_queue.hpp>
#include <scaleup/sim/index_map.hpp>
#include <scaleup/sim/read_pdu.hpp>
#include <scaleup/sim/ring.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

namespace {

namespace sm = scaleup::sim;
namespace w = scaleup::wire;

struct ev {
  std::uint64_t at;
  std::uint32_t id;
};

// The order a heap of (time, insertion number) gives: what the calendar must reproduce.
struct reference {
  using item = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>;
  std::priority_queue<item, std::vector<item>, std::greater<>> heap;
  std::uint64_t seq = 0;
  void push(ev e) { heap.push({e.at, seq++, e.id}); }
  ev pop() {
    const auto [at, s, id] = heap.top();
    heap.pop();
    return {at, id};
  }
};

template <class Q>
void check_against_reference(std::uint64_t seed, std::uint64_t spread, int rounds) {
  Q q;
  reference r;
  std::mt19937_64 rng(seed);
  std::uint32_t id = 0;
  std::uint64_t now = 0;
  for (int round = 0; round < rounds; ++round) {
    // A burst of pushes at or after the present: equal times, near ones, far ones.
    const int n = static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t kind = rng() % 10;
      const std::uint64_t at = kind < 3   ? now                           // this very instant
                               : kind < 8 ? now + rng() % spread          // soon
                                          : now + rng() % (64 * spread);  // far ahead
      q.push(ev{at, id});
      r.push(ev{at, id});
      ++id;
    }
    // Then take some, checking the next time before each.
    const int m = static_cast<int>(rng() % 8);
    for (int i = 0; i < m && !r.heap.empty(); ++i) {
      REQUIRE(q.size() == r.heap.size());
      REQUIRE(q.next_time() == std::get<0>(r.heap.top()));
      const ev a = q.pop();
      const ev b = r.pop();
      REQUIRE(a.at == b.at);
      REQUIRE(a.id == b.id);  // first in, first out among equal times
      now = a.at;
    }
  }
  while (!r.heap.empty()) {
    const ev a = q.pop();
    const ev b = r.pop();
    REQUIRE(a.at == b.at);
    REQUIRE(a.id == b.id);
  }
  CHECK(q.empty());
  CHECK(q.next_time() == Q::never);
}

}  // namespace

TEST_CASE("sim: the calendar event queue takes events as a (time, sequence) heap does") {
  // Spreads below, around and far above the calendar's 4096 ns, so that events land in the
  // calendar, in the radix heap behind it, and move from one to the other.
  for (const std::uint64_t spread : {1ull, 50ull, 4'000ull, 5'000ull, 100'000ull}) {
    CAPTURE(spread);
    check_against_reference<sm::event_queue<ev>>(spread, spread, 3'000);
    check_against_reference<sm::radix_queue<ev>>(spread + 1, spread, 3'000);
  }
}

TEST_CASE("sim: the event queue's edges") {
  sm::event_queue<ev> q;
  CHECK(q.next_time() == sm::event_queue<ev>::never);
  q.push({10'000'000, 1});  // far ahead: the calendar jumps to it
  q.push({10'000'000, 2});
  CHECK(q.next_time() == 10'000'000);
  ev e{};
  CHECK(!q.take_until(9'999'999, e));  // not due yet: nothing taken
  CHECK(q.size() == 2);
  CHECK(q.take_until(10'000'000, e));
  CHECK(e.id == 1);
  q.push({5, 3});  // the past is over: taken as now
  CHECK(q.next_time() == 10'000'000);
  CHECK(q.pop().id == 2);
  CHECK(q.pop().id == 3);
  CHECK(q.floor() == 10'000'000);
  // The calendar's slots go round: times across the 4096 ns boundary keep their order.
  for (std::uint32_t i = 0; i < 20; ++i) q.push({10'000'000 + 4'090 + i, i});
  for (std::uint32_t i = 0; i < 20; ++i) CHECK(q.pop().id == i);
}

TEST_CASE("sim: ring and index_map keep their contents as they grow") {
  sm::ring<int> r;
  for (int i = 0; i < 3; ++i) r.push_back(i);
  r.pop_front();
  for (int i = 3; i < 100; ++i) r.push_back(i);  // grows while wrapped round
  REQUIRE(r.size() == 99);
  for (int i = 0; i < 99; ++i) CHECK(r[static_cast<std::size_t>(i)] == i + 1);
  CHECK(r.front() == 1);
  CHECK(r.back() == 99);
  r.clear();
  CHECK(r.empty());

  sm::index_map m;
  CHECK(m.find(7) == sm::index_map::absent);
  std::uint32_t made = 0;
  for (std::uint64_t k = 0; k < 5'000; ++k)
    CHECK(m.find_or_add(k * 1'000'003, [&] { return made++; }) == k);
  CHECK(m.size() == 5'000);
  for (std::uint64_t k = 0; k < 5'000; ++k) CHECK(m.find(k * 1'000'003) == k);
  CHECK(m.find_or_add(42 * 1'000'003, [&] { return made++; }) == 42);  // found, not made
  CHECK(made == 5'000);
  CHECK(m.find(1) == sm::index_map::absent);
}

TEST_CASE("sim: the buffer pool reuses a buffer of the same size class, with its meta") {
  struct meta {
    int mark = 0;
  };
  sm::buffer_pool<meta> p;
  const auto a = p.take(60);
  p.meta(a).mark = 7;
  p.data(a)[59] = 0xAB;
  const auto b = p.take(1000);  // another size class
  CHECK(b != a);
  CHECK(p.in_use() == 2);
  p.give(a);
  const auto c = p.take(64);  // the same class as 60 bytes: the buffer given back
  CHECK(c == a);
  CHECK(p.meta(c).mark == 7);  // the meta stays with its buffer
  CHECK(p.size(c) == 64);
  const auto d = p.take(65);  // the next class up: a new buffer
  CHECK(d != a);
  CHECK(p.bytes(b).size() == 1000);
  p.resize(b, 10);
  CHECK(p.size(b) == 10);
  p.give(b);
  p.give(c);
  p.give(d);
  CHECK(p.in_use() == 0);
}

TEST_CASE("sim: read_pdu reads every SUE encapsulation back: destination, RH, payload") {
  std::array<std::uint8_t, 20> payload{};
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i + 1);
  const w::reliability_header rh{.op = 0, .xpuid = 517, .npsn = 4242, .vc = 1, .apsn = 99};
  for (const auto kind :
       {w::encap::udp4, w::encap::udp6, w::encap::afh1, w::encap::afh1_vlan, w::encap::afh1_shim,
        w::encap::afh1_vlan_shim, w::encap::afh2, w::encap::afh2c}) {
    CAPTURE(w::to_string(kind));
    for (const std::size_t len : {std::size_t{0}, std::size_t{4}, payload.size()}) {
      CAPTURE(len);
      w::frame_params p;
      p.kind = kind;
      p.src_xpu = 517;
      p.dst_xpu = 1023;
      p.tc = kind == w::encap::afh1 ? 0 : 1;
      std::array<std::uint8_t, 256> f{};
      const auto n = w::emit_sue_frame(p, rh, w::bytes(payload.data(), len), f);
      REQUIRE(n);
      const auto r = sm::read_pdu(w::bytes(f.data(), n.value));
      REQUIRE(r.kind);
      CHECK(*r.kind == kind);
      CHECK(r.dst_xpu == 1023u);
      REQUIRE(r.rh);
      CHECK(*r.rh == rh);
      CHECK(r.status == w::rcrc_status::good);
      CHECK(r.good());
      CHECK(std::equal(r.payload.begin(), r.payload.end(), payload.begin(), payload.begin() + len));
      CHECK(r.payload.size() == len);
      // One flipped bit in the PDU (here in the RH's npsn): the R-CRC says so.
      f[w::header_size(kind) + 3] ^= 0x10;
      const auto bad = sm::read_pdu(w::bytes(f.data(), n.value));
      CHECK(!bad.good());
      CHECK(bad.status == w::rcrc_status::bad);
    }
  }
}

TEST_CASE("sim: read_pdu finds nothing in what is not a SUE PDU") {
  // SUE Lite: a compressed AFH Gen 2 header and commands, no RH.
  std::array<std::uint8_t, 128> f{};
  w::frame_params p;
  p.kind = w::encap::lite;
  p.dst_xpu = 3;
  const std::array<std::uint8_t, 4> cmds{0x12, 0, 0, 1};
  const auto n = w::emit_frame(p, cmds, f);
  REQUIRE(n);
  CHECK(!sm::read_pdu(w::bytes(f.data(), n.value)).rh);
  CHECK(!sm::read_pdu(w::bytes(f.data(), n.value)).kind);
  // UDP to another port than SUE's: SUE only when the payload passes for a PDU (the receive
  // path's heuristic, as dump applies it), so a damaged one is not SUE at all.
  p.kind = w::encap::udp4;
  p.udp_src_port = p.udp_dst_port = 80;
  const w::reliability_header rh{};
  const auto u = w::emit_sue_frame(p, rh, {}, f);
  REQUIRE(u);
  CHECK(sm::read_pdu(w::bytes(f.data(), u.value)).good());
  f[w::header_size(p.kind) + 8 + 3] ^= 1;  // the R-CRC's last byte (padding follows)
  CHECK(!sm::read_pdu(w::bytes(f.data(), u.value)).kind);
  p.udp_src_port = p.udp_dst_port = w::emit_udp_port;
  const auto v = w::emit_sue_frame(p, rh, {}, f);
  REQUIRE(v);
  CHECK(sm::read_pdu(w::bytes(f.data(), v.value)).good());
  w::store_be16(f.data() + 12, 0x0806);  // ARP
  CHECK(!sm::read_pdu(w::bytes(f.data(), v.value)).kind);
  // Cut short: a frame cut anywhere before the PDU's end reads without going past it, and is
  // not a good PDU; cutting only the padding off leaves the PDU whole (the shim's length).
  p.kind = w::encap::afh1_vlan_shim;
  const auto s = w::emit_sue_frame(p, rh, cmds, f);
  REQUIRE(s);
  const std::size_t end = w::header_size(p.kind) + w::pdu_size(cmds.size());
  REQUIRE(end < s.value);  // padded to the minimum frame
  for (std::size_t k = 0; k < end; ++k) CHECK(!sm::read_pdu(w::bytes(f.data(), k)).good());
  for (std::size_t k = end; k <= s.value; ++k) CHECK(sm::read_pdu(w::bytes(f.data(), k)).good());
  // Addresses outside the library's plan name no XPU.
  CHECK(w::xpu_of_ipv4(0x0A000102) == 0x102u);
  CHECK(!w::xpu_of_ipv4(0x0B000102));
  CHECK(w::xpu_of_ipv6(w::xpu_ipv6(70'000)) == 70'000u);
  auto other = w::xpu_ipv6(5);
  other[0] = 0xFE;
  CHECK(!w::xpu_of_ipv6(other));
}
