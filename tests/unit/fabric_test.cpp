// The fabric harness end to end: commands through the packer, go-back-N, frames, a switch with
// lossy links and failing ports, and back through the dissection engine. The harness counts
// every command delivered to an XPU; the invariants are the issue's: nothing lost, nothing
// delivered twice, order kept per {source, destination, VC} in strict mode.
#include <scaleup/sim/fabric.hpp>

#include <doctest/doctest.h>

#include <random>

namespace {

namespace t = scaleup::sim;
namespace w = scaleup::wire;

struct run_result {
  t::fabric_stats stats;
  std::uint64_t frames_seen = 0;
  std::uint64_t end = 0;
};

run_result run(t::fabric_config cfg, std::uint32_t commands, std::uint64_t gap = 3) {
  t::fabric f(cfg);
  run_result r;
  f.on_wire([&](std::uint64_t, std::span<const std::uint8_t>) { ++r.frames_seen; });
  std::mt19937_64 rng(cfg.seed * 7 + 1);
  for (std::uint32_t i = 0; i < commands; ++i) {
    const auto src = static_cast<std::uint16_t>(rng() % cfg.xpus);
    const auto dst = static_cast<std::uint16_t>((src + 1 + rng() % (cfg.xpus - 1u)) % cfg.xpus);
    f.add({.at = i * gap,
           .src = src,
           .dst = dst,
           .vc = static_cast<std::uint8_t>(rng() % cfg.vcs),
           .data = static_cast<std::uint16_t>(1 + rng() % 256)});
  }
  r.stats = f.run();
  r.end = f.now();
  return r;
}

void check_invariants(const run_result& r, std::uint32_t commands) {
  CHECK(r.stats.offered == commands);
  CHECK(r.stats.delivered == commands);
  CHECK(r.stats.duplicates == 0);
  CHECK(r.stats.out_of_order == 0);
  // The switch sees every frame sent, but those sent into a link that went down.
  CHECK(r.frames_seen + r.stats.dropped_link_down >= r.stats.frames);
  CHECK(r.frames_seen <= r.stats.frames);
}

}  // namespace

TEST_CASE("fabric: a clean fabric delivers everything once, in order, without retransmission") {
  t::fabric_config cfg;
  cfg.xpus = 6;
  // All offered at once: queues build up, so PDUs carry several commands.
  const auto r = run(cfg, 5000, 0);
  check_invariants(r, 5000);
  CHECK(r.stats.retransmissions == 0);
  CHECK(r.stats.nacks == 0);
  CHECK(r.stats.goodput_gbps() > 0);
  CHECK(r.frames_seen == r.stats.frames);
  CHECK(r.stats.pdus * 2 < r.stats.delivered);  // packing: fewer PDUs than commands
  // Arriving slower than the links drain them, commands go out alone: nothing waits to pack.
  const auto slow = run(cfg, 500, 100);
  check_invariants(slow, 500);
  CHECK(slow.stats.pdus == 500);
}

TEST_CASE("fabric: loss, corruption, duplication and reordering up to 20 percent") {
  for (const double p : {0.01, 0.05, 0.2}) {
    for (const std::uint8_t ports : {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{4}}) {
      t::fabric_config cfg;
      cfg.xpus = 5;
      cfg.ports = ports;
      cfg.loss = cfg.corrupt = cfg.duplicate = cfg.reorder = p;
      cfg.seed = 11 + ports;
      CAPTURE(p);
      CAPTURE(ports);
      const auto r = run(cfg, 3000);
      check_invariants(r, 3000);
      CHECK(r.stats.retransmissions > 0);
      CHECK(r.stats.lost > 0);
      CHECK(r.stats.corrupted > 0);
      CHECK(r.stats.duplicated > 0);
    }
  }
}

TEST_CASE("fabric: unordered mode spreads PDUs over every port and loses nothing") {
  t::fabric_config cfg;
  cfg.xpus = 2;  // one peer, one VC: strict mode would pin everything to one port
  cfg.vcs = 1;
  cfg.ports = 4;
  cfg.loss = 0.05;
  const auto strict = run(cfg, 4000, 0);
  check_invariants(strict, 4000);
  int used = 0;
  for (const auto n : strict.stats.frames_per_port) used += n > 0;
  CHECK(used == 2);  // one port each way
  cfg.unordered = true;
  const auto spread = run(cfg, 4000, 0);
  CHECK(spread.stats.delivered == 4000);
  CHECK(spread.stats.duplicates == 0);
  for (const auto n : spread.stats.frames_per_port) CHECK(n > 20);
}

TEST_CASE("fabric: a link going down moves its outstanding work to another port") {
  for (const bool unordered : {false, true}) {
    t::fabric_config cfg;
    cfg.xpus = 4;
    cfg.ports = 2;
    cfg.unordered = unordered;
    cfg.loss = 0.01;
    // XPU 1's port 0 fails while traffic flows and comes back later.
    cfg.link_events = {{2'000, 1, 0, false}, {40'000, 1, 0, true}};
    CAPTURE(unordered);
    const auto r = run(cfg, 20'000, 1);
    check_invariants(r, 20'000);
    CHECK(r.stats.failovers > 0);
    CHECK(r.stats.moved > 0);
    CHECK(r.stats.dropped_link_down > 0);
  }
}

TEST_CASE("fabric: with one port, work waits for the link to come back") {
  t::fabric_config cfg;
  cfg.xpus = 3;
  cfg.ports = 1;
  cfg.link_events = {{1'000, 2, 0, false}, {300'000, 2, 0, true}};
  const auto r = run(cfg, 5'000, 1);
  check_invariants(r, 5'000);
  CHECK(r.stats.unreachable > 0);  // peers gave up on XPU 2 while its link was down...
  CHECK(r.stats.failovers > 0);    // ...and resumed through a failover once it was back
  CHECK(r.end >= 300'000);
}

TEST_CASE("fabric: every encapsulation and both keyings carry the session") {
  for (const auto e : {w::encap::udp4, w::encap::udp6, w::encap::afh1_vlan, w::encap::afh1_shim,
                       w::encap::afh2, w::encap::afh2c}) {
    t::fabric_config cfg;
    cfg.xpus = 3;
    cfg.encap = e;
    cfg.loss = 0.02;
    CAPTURE(w::to_string(e));
    check_invariants(run(cfg, 1000), 1000);
  }
  t::fabric_config cfg;
  cfg.xpus = 3;
  cfg.vcs = 2;
  cfg.keys = scaleup::transport::keying::port_peer;
  cfg.loss = 0.05;
  check_invariants(run(cfg, 2000), 2000);
}

TEST_CASE("fabric: a seed makes a run reproducible") {
  t::fabric_config cfg;
  cfg.xpus = 4;
  cfg.loss = cfg.corrupt = 0.05;
  cfg.seed = 99;
  const auto a = run(cfg, 2000);
  const auto b = run(cfg, 2000);
  CHECK(a.stats.retransmissions == b.stats.retransmissions);
  CHECK(a.stats.frames == b.stats.frames);
  CHECK(a.end == b.end);
  cfg.seed = 100;
  CHECK(run(cfg, 2000).stats.frames != a.stats.frames);
}

TEST_CASE("fabric: each link can have its own delay") {
  // Two XPUs, one far away: the far one's commands take longer, and nothing else changes.
  t::fabric_config cfg;
  cfg.xpus = 2;
  cfg.link_delay = 100;
  const auto near = run(cfg, 200, 50);
  cfg.link_delays = {0, 0, 0, 0, 5'000};  // XPU 1, port 0: 5 us each way
  const auto far = run(cfg, 200, 50);
  check_invariants(near, 200);
  check_invariants(far, 200);
  // Every command crosses XPU 1's link one way: deliveries end at least 5 us later.
  CHECK(far.stats.last_delivery >= near.stats.last_delivery + 4'900);
}

TEST_CASE("fabric: every delivery is reported once, with its own offer time") {
  t::fabric_config cfg;
  cfg.xpus = 4;
  cfg.loss = 0.05;
  cfg.seed = 5;
  t::fabric f(cfg);
  // Offers at known times: source s sends its k-th command to s+1 at 1000*k + s.
  for (std::uint16_t k = 0; k < 50; ++k)
    for (std::uint16_t s = 0; s < 4; ++s)
      f.add({.at = 1000u * k + s, .src = s, .dst = static_cast<std::uint16_t>((s + 1) % 4)});
  std::vector<t::delivery> got;
  f.on_delivery([&](const t::delivery& d) { got.push_back(d); });
  const auto& st = f.run();
  CHECK(st.retransmissions > 0);  // the loss made some go round again
  REQUIRE(got.size() == 200);
  CHECK(st.delivered == got.size());
  std::array<std::uint64_t, 4> next{};
  for (const auto& d : got) {
    CHECK(d.dst == (d.src + 1) % 4);
    CHECK(d.seq == next[d.src]++);                 // strict mode: in order per stream
    CHECK(d.offered_at == 1000u * d.seq + d.src);  // the time this command was offered
    CHECK(d.delivered_at > d.offered_at);
    CHECK(d.delivered_at <= st.last_delivery);
  }
}
