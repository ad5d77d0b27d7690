// Keyed hashing of the tables that packet contents fill (wire/siphash.hpp, dissect/hash_key.hpp,
// dissect/flat_index.hpp): SipHash against its published vectors, the process key, and the
// attack the key is for. Keys are built from the hash functions themselves so that they all
// collide: under the old linear mix by its algebra (any key), under SipHash with one known key
// by brute force. A table keyed with another key then examines as few slots per insert as with
// random keys; the old mix, or a known key, makes every insert walk one run (quadratic). What is
// asserted is the count of slots examined (probe_stats), never a time.
#include <scaleup/dissect/analysis.hpp>
#include <scaleup/dissect/conformance.hpp>
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/flat_index.hpp>
#include <scaleup/dissect/flow_table.hpp>
#include <scaleup/dissect/hash_key.hpp>
#include <scaleup/dissect/tree.hpp>
#include <scaleup/wire/siphash.hpp>
#include <scaleup/wire/udp_flow.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "../../bench/collisions.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
namespace c = scaleup::collisions;
namespace om = scaleup::collisions::old_mix;

// ---- SipHash's vectors ---------------------------------------------------------------------

// The reference's key (bytes 00..0f) and message (bytes 00, 01, 02, ...) of every test vector.
constexpr w::hash_key reference_key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
constexpr std::uint64_t message_word(std::size_t i) {
  std::uint64_t m = 0;
  for (std::size_t b = 0; b < 8; ++b) m |= std::uint64_t{8 * i + b} << (8 * b);
  return m;
}
template <class Sip>
constexpr std::uint64_t of_message(std::size_t words) {
  Sip h(reference_key);
  for (std::size_t i = 0; i < words; ++i) h.add(message_word(i));
  return h.finish();
}

// The vectors of the messages of 0, 8, 16, ... 56 bytes (whole words). SipHash-2-4: the
// reference implementation's vectors.h (vectors_sip64), Aumasson and Bernstein. SipHash-1-3:
// Rust's core library, library/core/tests/hash/sip.rs (test_siphash_1_3), each read as the
// little-endian u64 that test compares.
constexpr std::array<std::uint64_t, 8> sip24_vectors{
    0x726fdb47dd0e0e31ull, 0x93f5f5799a932462ull, 0x3f2acc7f57c29bdbull, 0xb8ad50c6f649af94ull,
    0x7127512f72f27cceull, 0x0e3ea96b5304a7d0ull, 0xe612a3cb9ecba951ull, 0xb78dbfaf3a8d83bdull};
constexpr std::array<std::uint64_t, 8> sip13_vectors{
    0xabac0158050fc4dcull, 0x369095118d299a8eull, 0xcc4fdd1a7d908b66ull, 0xf464aeb267349c8cull,
    0x81157b6c16a7b60dull, 0xc1d2363299e41531ull, 0x9f3143f8df074c46ull, 0xb4bcc0db243c6d75ull};

// Worked out at compile time too: a hash is the same in a constant expression.
static_assert(of_message<w::siphash24>(2) == sip24_vectors[2]);
static_assert(of_message<w::siphash13>(7) == sip13_vectors[7]);

// ---- what a table may examine --------------------------------------------------------------

// The most slots one insert of n keys may examine in a table at most half full with a good hash,
// but for a chance below 1e-9: a run of k slots at load a has a chance of about (a e^(1-a))^k,
// 0.82^k at a half (Knuth, TAOCP 6.4), so n (a e^(1-a))^k < 1e-9. About 160 for 20 000 keys; a
// run of colliding keys is as long as the keys.
std::uint64_t longest_bound(std::size_t n) {
  const double a = 0.5, per_slot = -std::log(a * std::exp(1 - a));
  return static_cast<std::uint64_t>(std::ceil((std::log(double(n)) + std::log(1e9)) / per_slot));
}

// A keyed table, whatever its keys: about 1.8 slots per new key on average (a half full at
// most; 1.77 +- 0.02 over random keys for 20 000 and 5000 keys), and no run near the bound.
void flat(const d::probe_count& p, std::size_t keys) {
  CAPTURE(p.lookups);
  CAPTURE(p.probes);
  CAPTURE(p.longest);
  CHECK(p.lookups >= keys);
  CHECK(p.mean() <= 2.0);
  CHECK(p.longest <= longest_bound(keys));
}

// Whether a table has gone quadratic: 4 slots an insert on average, and a thousand more. The
// loops below stop then, so that a table that lost its key fails at once (its run has a few
// thousand keys) instead of after minutes of walking one run of 20 000.
bool runaway(const d::probe_stats& s) { return s.inserts.probes > 4 * s.inserts.lookups + 1000; }

// ---- keys that collide under the old mix, for any key ----------------------------------------

constexpr std::size_t crafted = 20000;
constexpr std::uint64_t target = 0x5ca1ab1e0ddba11ull;            // any value will do
const w::ip_address far_end = w::ip_address::v6(w::xpu_ipv6(2));  // fd53:5545::2

// Distinct addresses in 2001:db8::/32 whose old hash is the same.
std::vector<w::ip_address> colliding_addresses(std::size_t n) {
  std::vector<w::ip_address> out;
  for (std::uint32_t i = 0; i < n; ++i)
    out.push_back(c::colliding_v6(c::documentation_word(i), target));
  return out;
}
// A flow from each (to the same end, on the same ports): ordered alike, so that the old pair()
// sees (address, far end) in every one.
std::vector<w::udp_flow> colliding_flows(std::size_t n) {
  std::vector<w::udp_flow> out;
  for (const auto& a : colliding_addresses(n))
    out.push_back(w::udp_flow::make(a, 49152, far_end, w::emit_udp_port));
  return out;
}
std::vector<d::connection_key> colliding_connections(std::size_t n) {
  std::vector<d::connection_key> out;
  for (const auto& a : colliding_addresses(n))
    out.push_back({d::endpoint::of_ip(a), d::endpoint::of_ip(far_end), 0, 0});
  return out;
}

}  // namespace

TEST_CASE("siphash: the published vectors, 1-3 and 2-4") {
  for (std::size_t words = 0; words < 8; ++words) {
    CAPTURE(words);
    CHECK(of_message<w::siphash13>(words) == sip13_vectors[words]);
    CHECK(of_message<w::siphash24>(words) == sip24_vectors[words]);
  }
  // keyed_hash is SipHash-1-3 of its words.
  CHECK(w::keyed_hash(reference_key, message_word(0), message_word(1)) == sip13_vectors[2]);
  CHECK(w::keyed_hash(reference_key) == sip13_vectors[0]);
  // Every bit of the key counts.
  for (int bit = 0; bit < 128; ++bit) {
    w::hash_key k = reference_key;
    (bit < 64 ? k.k0 : k.k1) ^= std::uint64_t{1} << (bit % 64);
    CAPTURE(bit);
    CHECK(w::keyed_hash(k, message_word(0)) != sip13_vectors[1]);
  }
}

TEST_CASE("siphash: a flow hashed at compile time is hashed alike at run time") {
  // The words hashed are the address bytes in the host's order in both.
  constexpr w::ip_address a = w::ip_address::v4(0xC0A8010A);
  constexpr w::ip_address b = w::ip_address::v6(w::xpu_ipv6(0x00010203));
  constexpr w::udp_flow f = w::udp_flow::make(a, 1, b, 2);
  constexpr std::uint64_t h = w::udp_flow_hash{}(reference_key, f);
  w::udp_flow rf = f;  // not a constant: hashed at run time
  CHECK(w::udp_flow_hash{}(reference_key, rf) == h);
  CHECK(w::udp_flow_hash{}(reference_key, w::udp_flow::make(b, 2, a, 1)) == h);  // either way
  CHECK(w::udp_flow_hash{}(reference_key, w::udp_flow::make(a, 2, b, 1)) != h);
  CHECK(w::udp_flow_hash{}({1, 2}, rf) != h);
  constexpr std::uint64_t w0 = a.raw_word(0);
  std::uint64_t loaded = 0;
  std::memcpy(&loaded, rf.a.bytes.data(), 8);
  CHECK(w0 == loaded);
  // A connection's hash leaves the addresses' second words out only when both are zero: ends
  // that differ there alone hash apart.
  w::ipv6_address first_half{};
  std::copy_n(b.bytes.begin(), 8, first_half.begin());
  REQUIRE(w::ip_address::v6(first_half).raw_word(1) == 0);
  REQUIRE(b.raw_word(1) != 0);
  const d::connection_key_hash ch;
  CHECK(ch(reference_key, {d::endpoint::of_ip(b), d::endpoint::of_ip(a), 0, 0}) !=
        ch(reference_key,
           {d::endpoint::of_ip(w::ip_address::v6(first_half)), d::endpoint::of_ip(a), 0, 0}));
}

TEST_CASE("hash key: drawn once per process, set by an embedding, taken by each table") {
  const w::hash_key drawn = d::process_hash_key();
  CHECK(d::process_hash_key() == drawn);
  // Two draws from the operating system are two keys (the chance of equal ones is 2^-128).
  CHECK(d::detail::draw_hash_key() != d::detail::draw_hash_key());
  CHECK(d::detail::draw_hash_key() != w::hash_key{});
  {
    d::flat_index<w::udp_flow, w::udp_flow_hash> t;
    CHECK(t.key() == drawn);
  }
  // An embedding sets one (for reproducible runs): tables made from then on take it, one made
  // before keeps its own, and a table may be given one of its own.
  d::flat_index<w::udp_flow, w::udp_flow_hash> before;
  d::set_hash_key(reference_key);
  CHECK(d::process_hash_key() == reference_key);
  d::flat_index<w::udp_flow, w::udp_flow_hash> after;
  CHECK(after.key() == reference_key);
  CHECK(before.key() == drawn);
  CHECK(d::flat_index<w::udp_flow, w::udp_flow_hash>(w::hash_key{3, 4}).key() == w::hash_key{3, 4});
  CHECK(
      d::flow_table(d::default_max_connections, w::hash_key{3, 4}).probe_stats().inserts.lookups ==
      0);
  // Copies (a thread's copy of the flow table) keep the key: equal keys find each other.
  const auto f = w::udp_flow::make(far_end, 1, w::ip_address::v4(1), 2);
  after.insert(f);
  d::set_hash_key(drawn);
  const auto copy = after;
  CHECK(copy.key() == reference_key);
  CHECK(copy.find(f) == 0);
  CHECK(d::process_hash_key() == drawn);
}

TEST_CASE("flat_index: probe_stats counts the slots each lookup examined") {
  // A hash that sends every key to one slot: the n-th new key examines n slots, a find of the
  // n-th key n, and a find of an absent one every key then the empty slot after them.
  struct one_slot {
    std::uint64_t operator()(const w::hash_key&, std::uint64_t) const noexcept { return 0; }
  };
  d::flat_index<std::uint64_t, one_slot> t(w::hash_key{});
  for (std::uint64_t k = 0; k < 10; ++k) CHECK(t.insert(k).second);
  auto s = t.probe_stats();
  CHECK(s.inserts.lookups == 10);
  CHECK(s.inserts.probes == 55);  // 1 + 2 + ... + 10
  CHECK(s.inserts.longest == 10);
  CHECK(s.finds.lookups == 0);
  CHECK(t.find(3) == 3);
  CHECK(t.find(99) == d::flat_index<std::uint64_t, one_slot>::npos);
  CHECK_FALSE(t.insert(std::uint64_t{9}).second);  // present: found in 10
  s = t.probe_stats();
  CHECK(s.finds.lookups == 2);
  CHECK(s.finds.probes == 4 + 11);
  CHECK(s.finds.longest == 11);
  CHECK(s.inserts.lookups == 11);
  CHECK(s.inserts.probes == 65);
  CHECK(s.inserts.mean() == doctest::Approx(65.0 / 11));
  // Growing rehashes without counting: only lookups count.
  for (std::uint64_t k = 10; k < 40; ++k) t.insert(k);
  CHECK(t.probe_stats().inserts.lookups == 41);
}

TEST_CASE("hash attack: addresses that collide under the old mix, whatever the key") {
  const auto flows = colliding_flows(crafted);
  const auto conns = colliding_connections(crafted);
  // They are distinct, and the old mix gives every one the same hash (so any table keyed on it,
  // with or without a key mixed in after it, put them in one slot).
  const std::uint64_t flow_hash = om::of(flows[0]), conn_hash = om::of(conns[0]);
  for (std::size_t i = 0; i < crafted; ++i) {
    REQUIRE(om::of(flows[i].a) == target);
    REQUIRE(om::of(flows[i]) == flow_hash);
    REQUIRE(om::of(conns[i]) == conn_hash);
    REQUIRE(flows[i].a == conns[i].src.ip);
    if (i) REQUIRE_FALSE(flows[i].a == flows[i - 1].a);
  }
  SUBCASE("the old mix: every insert walks the run of the keys before it") {
    // A table as the tools had it: n keys cost n^2 / 2 slots (asserted on 2000 of them).
    const std::size_t n = 2000;
    d::flat_index<w::udp_flow, om::flow_hash> old_flows(w::hash_key{});
    d::flat_index<d::connection_key, om::connection_hash> old_conns(w::hash_key{});
    for (std::size_t i = 0; i < n; ++i) {
      old_flows.insert(flows[i]);
      old_conns.insert(conns[i]);
    }
    for (const auto& p : {old_flows.probe_stats().inserts, old_conns.probe_stats().inserts}) {
      CHECK(p.probes == n * (n + 1) / 2);
      CHECK(p.longest == n);
    }
  }
  SUBCASE("keyed tables: as flat as with random keys") {
    d::flat_index<w::udp_flow, w::udp_flow_hash> keyed_flows;
    d::flat_index<d::connection_key, d::connection_key_hash> keyed_conns;
    for (std::size_t i = 0; i < crafted; ++i) {
      if (runaway(keyed_flows.probe_stats()) || runaway(keyed_conns.probe_stats())) break;
      REQUIRE(keyed_flows.insert(flows[i]).second);
      REQUIRE(keyed_conns.insert(conns[i]).second);
    }
    flat(keyed_flows.probe_stats().inserts, crafted);
    flat(keyed_conns.probe_stats().inserts, crafted);
    // And so are the finds of every one.
    for (std::size_t i = 0; i < keyed_flows.size(); ++i) REQUIRE(keyed_flows.find(flows[i]) == i);
    CHECK(keyed_flows.probe_stats().finds.mean() <= 2.0);
  }
  SUBCASE("the flow table (its unconfirmed ports are a bitset, no table)") {
    d::flow_table t;
    for (const auto& f : flows) {
      if (runaway(t.probe_stats())) break;
      CHECK_FALSE(t.bound(f));
      t.bind(f);
      t.unconfirmed(f);
    }
    const auto s = t.probe_stats();
    flat(s.inserts, crafted);
    CHECK(t.size() == crafted);
    CHECK(s.finds.lookups == crafted);
    CHECK(s.finds.mean() <= 2.0);  // each absent key examines what its insert then does
  }
  SUBCASE("the analysis: a connection each, and an ACK of each") {
    d::analysis a;
    std::uint64_t frame = 0;
    for (const auto& k : conns) {
      if (runaway(a.probe_stats())) break;
      d::frame_facts f{.frame = ++frame, .key = k, .op = 2, .npsn = 1, .data = true};
      a.add(f);
    }
    for (const auto& k : conns) {
      if (runaway(a.probe_stats())) break;
      d::frame_facts f{.frame = ++frame, .key = {k.dst, k.src, k.port, k.vc}, .op = 0, .apsn = 1};
      a.add(f);
    }
    CHECK(a.connections().size() == crafted);
    flat(a.probe_stats().inserts, 2 * crafted);
  }
}

TEST_CASE("hash attack: the conformance rules, over frames from colliding addresses") {
  // Frames as the crafted capture of `./run bench` holds them: a valid PDU each, over UDP/IPv6,
  // every source a connection of its own.
  const std::size_t n = 5000;
  d::conformance k;
  auto t = std::make_unique<d::large_tree>();
  const auto sources = colliding_addresses(n);
  for (std::size_t i = 0; i < n && !runaway(k.probe_stats()); ++i) {
    const auto frame = c::udp6_pdu(sources[i], far_end, static_cast<std::uint16_t>(i));
    REQUIRE(frame);
    d::dissect_frame(*t, *frame, d::link_ethernet);
    if (i == 0) {
      // A PDU found by the heuristic, nothing wrong with it, from the address crafted.
      REQUIRE_FALSE(t->has_errors());
      const auto facts = d::facts_of(*t, 1, 0);
      REQUIRE(facts);
      CHECK(facts->data);
      CHECK(facts->key.src == d::endpoint::of_ip(sources[0]));
      CHECK(facts->key.dst == d::endpoint::of_ip(far_end));
    }
    k.add(*t, *frame, i + 1, static_cast<std::int64_t>(i) * 1000);
  }
  k.finish();
  CHECK(k.pdus() == n);
  CHECK(k.conformant());
  flat(k.probe_stats().inserts, n);
}

TEST_CASE("hash attack: keys that collide under one known SipHash key, and no other") {
  // A fixed key, once known, is no better than the old mix: by brute force (about a thousand
  // tries a key), flows whose hash under it starts every table's run in its first 64 slots.
  // 5000 of them take about 2500 slots an insert with that key, and 1.8 with any other.
  const std::size_t n = 5000;
  const w::hash_key known{0x0123456789abcdefull, 0xfedcba9876543210ull};
  // Tries at most ten times what the search takes with a good hash, so that a hash which never
  // lands there fails rather than searches for ever.
  std::vector<w::udp_flow> flows;
  for (std::uint32_t i = 0; flows.size() < n && i < 10 * 1024 * n; ++i) {
    const auto a = w::ip_address::v6(
        std::bit_cast<w::ipv6_address>(std::array{c::documentation_word(i), std::uint64_t{i}}));
    const auto f = w::udp_flow::make(a, 49152, far_end, w::emit_udp_port);
    if ((w::udp_flow_hash{}(known, f) & 0xFFFF) < 64) flows.push_back(f);
  }
  REQUIRE(flows.size() == n);
  d::flat_index<w::udp_flow, w::udp_flow_hash> with_known(known);
  d::flat_index<w::udp_flow, w::udp_flow_hash> with_another;  // the process's key
  REQUIRE_FALSE(with_another.key() == known);
  for (const auto& f : flows) {
    REQUIRE(with_known.insert(f).second);
    if (!runaway(with_another.probe_stats())) REQUIRE(with_another.insert(f).second);
  }
  const auto quadratic = with_known.probe_stats().inserts;
  CAPTURE(quadratic.probes);
  CHECK(quadratic.mean() >= n / 4.0);
  CHECK(quadratic.longest >= n - 64);
  flat(with_another.probe_stats().inserts, n);
}
