// The SUE instance on its own: two instances, A and B, port p of one cabled to port p of the
// other, the test owning the wire and the clock (as any embedding does). Checked against the
// seeds' rules: Fig. 21's packing order, WRR weights across VCs, one PDU one destination and one
// VC, credits never negative, LLR replays in order, failover that loses and repeats nothing, a
// peer unreachable on every plane answered with an error instead of resends without end, the
// command interface's credits per {destination, VC} and in aggregate, management packets in the
// data path, registers, SUE Lite end to end, and the configurations the library refuses.
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/transport/instance.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

namespace {

namespace t = scaleup::transport;
namespace pk = scaleup::pack;
namespace w = scaleup::wire;

using small_t = t::instance_sizing<4, 4, 4, 64, 4096, 1024, 4096, 64, 64 * 1024, pk::heap_storage>;
using inst = t::sue_instance<small_t>;

std::vector<std::uint8_t> write_cmd(std::uint16_t tag, std::size_t data, std::uint8_t fill = 0) {
  std::vector<std::uint8_t> c(12 + data);
  REQUIRE(w::encode(pk::cmd_write{.type = pk::code::write_full_posted,
                                  .dlen = static_cast<std::uint8_t>(data - 1),
                                  .tag = tag,
                                  .addr = 0x1000u + tag},
                    w::mutable_bytes(c.data(), 12)));
  for (std::size_t i = 12; i < c.size(); ++i) c[i] = static_cast<std::uint8_t>(fill + i);
  return c;
}
[[maybe_unused]] std::vector<std::uint8_t> barrier_cmd() {
  std::vector<std::uint8_t> c(4);
  REQUIRE(w::encode(pk::cmd_barrier{}, c));
  return c;
}

// What a PDU's payload carries, command by command.
std::vector<std::vector<std::uint8_t>> commands_of(w::bytes payload) {
  std::vector<std::vector<std::uint8_t>> out;
  pk::unpacker u(pk::default_profile, payload);
  pk::command_view c;
  while (u.next(c)) out.emplace_back(c.control.data(), c.control.data() + c.size());
  CHECK_FALSE(u.error_found());
  return out;
}

// Two instances and the wire between them. Each port sends one frame per `gap` ns (its
// serialisation), delivered `delay` ns later unless `fate` says otherwise; link messages
// (LLR ACK/NACK, credits) take `delay` too.
struct twin {
  struct in_flight {
    std::uint64_t at;
    int to;  // 0: A, 1: B
    std::uint8_t port;
    std::vector<std::uint8_t> bytes;
    t::link_info link;
    bool message = false;
    t::link_message msg{};
  };
  // corrupt: the receiving MAC's FCS check fails; flip: a byte changes and nothing below the
  // frame notices (what an R-CRC or a management FCS must catch).
  enum class fate { deliver, drop, corrupt, flip };

  std::array<std::unique_ptr<inst>, 2> x;
  std::uint64_t now = 0, delay = 200, gap = 20;
  std::array<std::array<std::uint64_t, 4>, 2> busy{};
  std::deque<in_flight> wire;
  std::function<fate(int from, std::uint8_t port, const t::instance_frame&)> judge;
  std::array<std::vector<t::instance_frame>, 2> sent;
  std::array<std::vector<std::uint8_t>, 2> sent_port;
  std::array<std::vector<t::instance_note>, 2> notes;
  // Delivered payloads per side, as (source, vc, commands...).
  struct got {
    std::uint16_t src;
    std::uint8_t vc;
    std::uint8_t port;
    std::vector<std::vector<std::uint8_t>> commands;
  };
  std::array<std::vector<got>, 2> delivered;
  std::array<std::vector<std::vector<std::uint8_t>>, 2> management;
  std::array<std::uint8_t, 4096 + 200> buf{};

  twin(t::instance_config a, t::instance_config b) {
    x[0] = std::make_unique<inst>(a);
    x[1] = std::make_unique<inst>(b);
    for (int i : {0, 1}) {
      REQUIRE_FALSE(x[i]->config_error());
      x[i]->set_notes({&notes[i], [](void* c, const t::instance_note& n) {
                         static_cast<std::vector<t::instance_note>*>(c)->push_back(n);
                       }});
    }
  }

  void handle(int i, const t::instance_actions& a, std::uint8_t port) {
    if (a.delivered.valid) {
      if (a.delivered.management)
        management[i].emplace_back(a.delivered.payload.begin(), a.delivered.payload.end());
      else
        delivered[i].push_back(
            {a.delivered.src, a.delivered.vc, a.delivered.port, commands_of(a.delivered.payload)});
    }
    (void)port;
    // Link messages go to the link peer.
    auto& ns = notes[i];
    for (auto it = ns.begin(); it != ns.end();) {
      if (it->kind == t::note_kind::link_message) {
        wire.push_back({now + delay, 1 - i, it->port, {}, {}, true, it->message});
        it = ns.erase(it);
      } else {
        ++it;
      }
    }
  }

  t::instance_actions step(int i, const t::instance_event& e) {
    const auto a = x[i]->step(now, e);
    handle(i, a, e.port);
    return a;
  }

  // Runs until nothing is left to do or `until`.
  static constexpr std::uint64_t forever = 100'000'000;
  void run(std::uint64_t until = forever) {
    for (;;) {
      // Every port that has something and is free sends now.
      bool sent_any = false;
      for (int i : {0, 1})
        for (std::uint8_t p = 0; p < x[i]->config().ports; ++p) {
          if (!((x[i]->ready_ports() >> p) & 1u) || busy[i][p] > now) continue;
          const auto a = step(i, t::instance_event::transmit(p, buf));
          if (a.frame.size == 0) continue;
          sent_any = true;
          sent[i].push_back(a.frame);
          sent_port[i].push_back(p);
          busy[i][p] = now + gap;
          const fate f = judge ? judge(i, p, a.frame) : fate::deliver;
          if (f == fate::drop) continue;
          in_flight m{
              now + delay, 1 - i, p, {buf.begin(), buf.begin() + a.frame.size}, a.frame.link};
          if (f == fate::corrupt || f == fate::flip) {
            m.bytes[m.bytes.size() / 2] ^= 0x10;
            m.link.fcs_ok = f == fate::flip;
          }
          wire.push_back(std::move(m));
        }
      if (sent_any) continue;
      // The next thing to happen.
      std::uint64_t next = std::min(x[0]->deadline(), x[1]->deadline());
      for (const auto& m : wire) next = std::min(next, m.at);
      for (int i : {0, 1})
        for (std::uint8_t p = 0; p < x[i]->config().ports; ++p)
          if ((x[i]->ready_ports() >> p) & 1u) next = std::min(next, busy[i][p]);
      if (next == t::link_never || next > until) {
        if (until != forever) now = std::max(now, until);  // the time asked for has passed
        break;
      }
      now = std::max(now, next);
      // Arrivals due, in order.
      std::stable_sort(wire.begin(), wire.end(),
                       [](const in_flight& a, const in_flight& b) { return a.at < b.at; });
      while (!wire.empty() && wire.front().at <= now) {
        const in_flight m = wire.front();
        wire.pop_front();
        if (m.message)
          step(m.to, t::instance_event::message_in(m.port, m.msg));
        else
          step(m.to, t::instance_event::frame(m.port, m.bytes, m.link));
      }
      for (int i : {0, 1})
        if (x[i]->deadline() <= now) step(i, t::instance_event::tick());
    }
  }

  // Offers a command from side i; returns its number.
  std::uint64_t offer(int i, std::uint16_t dst, std::uint8_t vc, const std::vector<std::uint8_t>& c,
                      bool send_now = false) {
    const std::size_t ctrl = pk::default_profile.framing(c[0]) & pk::profile::control_mask;
    const auto a =
        step(i, t::instance_event::command(dst, vc, w::bytes(c.data(), ctrl),
                                           w::bytes(c.data() + ctrl, c.size() - ctrl), send_now));
    if (a.error)
      std::fprintf(stderr, "offer refused at %llu: %.*s\n", static_cast<unsigned long long>(now),
                   static_cast<int>(a.error.what.size()), a.error.what.data());
    REQUIRE_FALSE(a.error);
    return a.seq;
  }

  std::size_t count(int i, t::note_kind k) const {
    return static_cast<std::size_t>(std::count_if(
        notes[i].begin(), notes[i].end(), [&](const t::instance_note& n) { return n.kind == k; }));
  }
  // Commands delivered at side i from `src` on `vc`, in order.
  std::vector<std::vector<std::uint8_t>> stream(int i, std::uint16_t src, std::uint8_t vc) const {
    std::vector<std::vector<std::uint8_t>> out;
    for (const auto& g : delivered[i])
      if (g.src == src && g.vc == vc) out.insert(out.end(), g.commands.begin(), g.commands.end());
    return out;
  }
};

t::instance_config config(std::uint16_t xpu, std::uint8_t ports = 1) {
  t::instance_config c;
  c.xpuid = xpu;
  c.ports = ports;
  c.vcs = 4;
  return c;
}

}  // namespace

TEST_CASE("instance: two instances deliver every command once, in order, with ACKs") {
  twin tw(config(1), config(2));
  std::vector<std::vector<std::uint8_t>> want;
  for (std::uint16_t i = 0; i < 500; ++i) {
    want.push_back(write_cmd(i, 1 + i % 200, static_cast<std::uint8_t>(i)));
    CHECK(tw.offer(0, 2, 0, want.back()) == i);
    if (i % 50 == 0) tw.run(tw.now + 1000);
  }
  tw.run();
  CHECK(tw.stream(1, 1, 0) == want);
  CHECK(tw.x[0]->stats().completed == 500);
  CHECK(tw.x[0]->in_flight() == 0);
  CHECK(tw.x[0]->buffers_in_use() == 0);
  CHECK(tw.count(0, t::note_kind::completed) > 0);
  CHECK(tw.x[1]->stats().acks_only > 0);  // nothing flows back: ACKs go stand-alone
}

namespace {

// An instance on its own: the frames it writes, read back.
struct lone {
  inst x;
  std::array<std::uint8_t, 4096 + 200> buf{};
  std::vector<t::instance_note> notes;
  explicit lone(const t::instance_config& c) : x(c) {
    REQUIRE_FALSE(x.config_error());
    x.set_notes({&notes, [](void* c, const t::instance_note& n) {
                   static_cast<std::vector<t::instance_note>*>(c)->push_back(n);
                 }});
  }
  std::uint64_t offer(std::uint16_t dst, std::uint8_t vc, const std::vector<std::uint8_t>& c,
                      bool send_now = false, std::uint64_t now = 0) {
    const std::size_t ctrl = pk::default_profile.framing(c[0]) & pk::profile::control_mask;
    const auto a = x.step(
        now, t::instance_event::command(dst, vc, w::bytes(c.data(), ctrl),
                                        w::bytes(c.data() + ctrl, c.size() - ctrl), send_now));
    REQUIRE_FALSE(a.error);
    return a.seq;
  }
  // The next frame on port p, read; kind none when nothing went.
  std::pair<t::instance_frame, t::sue_frame> send(std::uint8_t p = 0, std::uint64_t now = 0) {
    const auto a = x.step(now, t::instance_event::transmit(p, buf));
    t::sue_frame r;
    if (a.frame.size)
      r = t::read_sue_frame(w::bytes(buf.data(), a.frame.size), t::sue_receive_options());
    return {a.frame, r};
  }
};

}  // namespace

TEST_CASE("instance: Fig. 21, A..E to four destinations go out as A, B, C+E, D") {
  lone l(config(0));
  const std::uint16_t dest[] = {1, 2, 3, 4, 3};
  std::vector<std::vector<std::uint8_t>> cmd;
  for (std::uint16_t i = 0; i < 5; ++i) {
    cmd.push_back(write_cmd(static_cast<std::uint16_t>('A' + i), 8));
    l.offer(dest[i], 0, cmd.back());
  }
  const std::vector<std::pair<std::uint32_t, std::vector<int>>> want = {
      {1, {0}}, {2, {1}}, {3, {2, 4}}, {4, {3}}};
  for (const auto& [dst, idx] : want) {
    const auto [f, r] = l.send();
    REQUIRE(f.kind == t::frame_kind::pdu);
    CHECK(r.good());
    CHECK(r.dst_xpu == dst);
    CHECK(f.peer == dst);
    std::vector<std::vector<std::uint8_t>> expect;
    for (const int k : idx) expect.push_back(cmd[static_cast<std::size_t>(k)]);
    CHECK(commands_of(r.payload) == expect);
  }
  CHECK(l.send().first.kind == t::frame_kind::none);
}

TEST_CASE("instance: weighted round robin across VCs, arrival order within one") {
  t::instance_config c = config(0);
  c.weights = {1, 2, 3, 4};
  lone l(c);
  // Every VC backlogged with one-command PDUs to one peer; and on VC 1 two peers whose
  // commands arrive interleaved, served in arrival order.
  for (int i = 0; i < 60; ++i)
    for (std::uint8_t vc = 0; vc < 4; ++vc)
      l.offer(static_cast<std::uint16_t>(vc == 1 ? 1 + i % 2 : 1), vc,
              write_cmd(static_cast<std::uint16_t>(i * 4 + vc), 4), true);
  std::array<int, 4> n{};
  std::vector<std::uint32_t> vc1_dst;
  for (int k = 1; k <= 60; ++k) {
    const auto [f, r] = l.send();
    REQUIRE(f.kind == t::frame_kind::pdu);
    ++n[f.vc];
    if (f.vc == 1) vc1_dst.push_back(*r.dst_xpu);
    if (k % 10 == 0)
      for (int v = 0; v < 4; ++v) CHECK(n[static_cast<std::size_t>(v)] == (v + 1) * k / 10);
  }
  // VC 1's peers alternate, as their commands arrived.
  for (std::size_t i = 0; i < vc1_dst.size(); ++i) CHECK(vc1_dst[i] == 1 + i % 2);
}

TEST_CASE("instance: one PDU carries one destination's commands on one VC") {
  lone l(config(0));
  std::mt19937 rng(3);
  // The tag names destination and VC.
  for (std::uint16_t i = 0; i < 2000; ++i) {
    const auto d = static_cast<std::uint16_t>(1 + rng() % 3);
    const auto vc = static_cast<std::uint8_t>(rng() % 4);
    l.offer(d, vc, write_cmd(static_cast<std::uint16_t>(d << 8 | vc), 1 + rng() % 64));
    if (rng() % 4 == 0) (void)l.send();
  }
  std::size_t pdus = 0, commands = 0;
  for (;;) {
    const auto [f, r] = l.send();
    if (f.kind == t::frame_kind::none) break;
    ++pdus;
    for (const auto& cmd : commands_of(r.payload)) {
      const auto wr = w::decode<pk::cmd_write>(cmd);
      REQUIRE(wr);
      const std::uint32_t dst = wr->tag >> 8, vc = wr->tag & 0xFFu;
      CHECK(dst == *r.dst_xpu);
      CHECK(vc == r.rh->vc);
      ++commands;
    }
  }
  CHECK(pdus > 0);
  CHECK(commands <= 2000);
}

namespace {

// Commands from A (XPU 1) to B (XPU 2): `n` writes on `vcs` VCs, offered `spacing` ns apart.
std::array<std::vector<std::vector<std::uint8_t>>, 4> traffic(twin& tw, int n, std::uint8_t vcs,
                                                              std::uint64_t spacing,
                                                              std::uint32_t seed = 1) {
  std::array<std::vector<std::vector<std::uint8_t>>, 4> want;
  std::mt19937 rng(seed);
  for (int i = 0; i < n; ++i) {
    const auto vc = static_cast<std::uint8_t>(rng() % vcs);
    want[vc].push_back(
        write_cmd(static_cast<std::uint16_t>(i), 1 + rng() % 128, static_cast<std::uint8_t>(i)));
    tw.offer(0, 2, vc, want[vc].back());
    tw.run(tw.now + spacing);
  }
  return want;
}

void check_delivered(const twin& tw,
                     const std::array<std::vector<std::vector<std::uint8_t>>, 4>& want,
                     bool in_order = true) {
  std::size_t total = 0;
  for (std::uint8_t vc = 0; vc < 4; ++vc) {
    auto got = tw.stream(1, 1, vc);
    total += got.size();
    if (in_order) {
      CHECK(got == want[vc]);
    } else {
      auto a = got, b = want[vc];
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      CHECK(a == b);
    }
  }
  std::size_t offered = 0;
  for (const auto& v : want) offered += v.size();
  CHECK(total == offered);
}

}  // namespace

TEST_CASE("instance: go-back-N repairs loss end to end, nothing lost or repeated") {
  twin tw(config(1), config(2));
  std::mt19937 rng(5);
  tw.judge = [&](int, std::uint8_t, const t::instance_frame&) {
    return rng() % 10 == 0 ? twin::fate::drop : twin::fate::deliver;
  };
  const auto want = traffic(tw, 2000, 4, 30);
  tw.run();
  check_delivered(tw, want);
  CHECK(tw.x[0]->stats().retransmissions > 0);
  CHECK(tw.x[1]->stats().gaps > 0);
  CHECK(tw.x[0]->stats().completed == 2000);
  CHECK(tw.x[0]->buffers_in_use() == 0);
  CHECK(tw.x[0]->deadline() == t::link_never);  // nothing left to time
}

TEST_CASE("instance: LLR replays damaged frames in order, hop by hop, so go-back-N resends none") {
  t::instance_config a = config(1), b = config(2);
  a.link.llr = b.link.llr = true;
  twin tw(a, b);
  std::mt19937 rng(7);
  tw.judge = [&](int, std::uint8_t, const t::instance_frame&) {
    const auto r = rng() % 20;
    return r == 0 ? twin::fate::corrupt : r == 1 ? twin::fate::drop : twin::fate::deliver;
  };
  const auto want = traffic(tw, 2000, 2, 30);
  tw.run();
  check_delivered(tw, want);
  CHECK(tw.x[0]->stats().retransmissions == 0);  // the transport never saw a loss
  CHECK(tw.x[0]->link(0).counters().llr_replays > 0);
  CHECK(tw.x[1]->link(0).counters().llr_dropped > 0);
  // Replays go in order: after a frame sent again with sequence s, the next replayed one (if
  // any before a new frame) is s + 1.
  std::size_t replays = 0;
  for (std::size_t i = 1; i < tw.sent[0].size(); ++i) {
    const auto& prev = tw.sent[0][i - 1];
    const auto& f = tw.sent[0][i];
    if (f.kind != t::frame_kind::replay) continue;
    ++replays;
    if (prev.kind == t::frame_kind::replay && prev.link.seq != 0xFFF)
      CHECK((f.link.seq == ((prev.link.seq + 1) & 0xFFF) || f.link.seq <= prev.link.seq));
  }
  CHECK(replays > 0);
  // Every frame's sequence, first sends only, counts up by one.
  std::uint16_t next = 0;
  for (const auto& f : tw.sent[0])
    if (f.kind != t::frame_kind::replay) {
      CHECK(f.link.seq == next);
      next = static_cast<std::uint16_t>((next + 1) & 0xFFF);
    }
}

TEST_CASE("instance: LLR that gives up on NACKs takes the link down, as on its timer") {
  t::instance_config a = config(1), b = config(2);
  for (auto* c : {&a, &b}) {
    c->link.llr = true;
    c->link.llr_tx.max_replays = 1;
    c->link.llr_tx.replay_timeout = 300;  // shorter than the NACK's way back
  }
  twin tw(a, b);
  // Every data frame from A fails its FCS at B. A's timer replays it once (its limit); then
  // B's NACK for it arrives, and the replay it asks for is one too many: the NACK, not the
  // timer, finds the limit.
  tw.judge = [&](int i, std::uint8_t, const t::instance_frame&) {
    return i == 0 ? twin::fate::corrupt : twin::fate::deliver;
  };
  tw.offer(0, 2, 0, write_cmd(1, 8));
  tw.run(100'000);
  CHECK(tw.x[0]->link(0).counters().llr_replays == 1);
  CHECK(tw.count(0, t::note_kind::link_down) == 1);
  CHECK_FALSE(tw.x[0]->port_up(0));
  CHECK_FALSE(tw.x[0]->reachable(2, 0));
}

TEST_CASE("instance: CBFC credits never go negative, and are returned by the receiver") {
  t::instance_config a = config(1), b = config(2);
  for (auto* c : {&a, &b}) {
    c->link.cbfc = true;
    c->link.llr = true;  // a frame the link loses returns its credits only through its replay
    c->link.cbfc_rx.capacity.fill(0);
    for (std::size_t k = 0; k < 5; ++k) c->link.cbfc_rx.capacity[k] = 140;  // two 4 KB frames
  }
  twin tw(a, b);
  std::uint64_t worst = 0;
  std::mt19937 rng(9);
  tw.judge = [&](int i, std::uint8_t, const t::instance_frame&) {
    const auto& l = tw.x[1 - i]->link(0);
    for (std::uint8_t cls = 0; cls < 5; ++cls) {
      // What the receiver holds never exceeds what it granted; the sender's view never wraps.
      CHECK(l.cbfc_rx().occupied[cls] <= 140);
      worst = std::max<std::uint64_t>(worst, tw.x[i]->link(0).cbfc_tx().available(cls));
    }
    return rng() % 50 == 0 ? twin::fate::drop : twin::fate::deliver;
  };
  const auto want = traffic(tw, 3000, 2, 5);
  tw.run();
  check_delivered(tw, want);
  CHECK(worst <= 140);
  CHECK(tw.x[0]->link(0).counters().credit_stalls > 0);  // the sender did wait for credits
  CHECK(*tw.x[0]->read_register(t::reg::port_base + t::reg::credit_stalls) ==
        tw.x[0]->link(0).counters().credit_stalls);
}

TEST_CASE("instance: CBFC without LLR: a frame the MAC finds damaged gives its credits back") {
  t::instance_config a = config(1), b = config(2);
  for (auto* c : {&a, &b}) {
    c->link.cbfc = true;
    c->link.cbfc_rx.capacity.fill(0);
    for (std::size_t k = 0; k < 5; ++k) c->link.cbfc_rx.capacity[k] = 140;  // two 4 KB frames
  }
  twin tw(a, b);
  std::mt19937 rng(11);
  std::size_t damaged = 0;
  tw.judge = [&](int, std::uint8_t, const t::instance_frame&) {
    if (rng() % 10 != 0) return twin::fate::deliver;
    ++damaged;
    return twin::fate::corrupt;  // dropped by the receiving MAC: nothing replays it
  };
  const auto want = traffic(tw, 1000, 2, 100);
  tw.run();
  // Go-back-N resends what the MAC dropped; had the dropped frames kept their credits, the
  // classes would have run dry after a few of them and the rest waited for ever.
  CHECK(damaged > 40);
  check_delivered(tw, want);
  for (int i : {0, 1})
    for (std::uint8_t cls = 0; cls < 5; ++cls)
      CHECK(tw.x[i]->link(0).cbfc_tx().available(cls) == 140);
}

TEST_CASE("instance: a plane that dies silently fails over; nothing lost, nothing repeated") {
  for (const bool unordered : {false, true}) {
    CAPTURE(unordered);
    t::instance_config a = config(1, 2), b = config(2, 2);
    a.unordered = b.unordered = unordered;
    twin tw(a, b);
    // Port 0 loses every frame, both ways, from 20 us on; no link status says so.
    tw.judge = [&](int, std::uint8_t p, const t::instance_frame&) {
      return p == 0 && tw.now >= 20'000 ? twin::fate::drop : twin::fate::deliver;
    };
    const auto want = traffic(tw, 3000, 2, 20);
    tw.run();
    check_delivered(tw, want, !unordered);
    CHECK(tw.count(0, t::note_kind::unreachable) >= 1);
    CHECK(tw.count(0, t::note_kind::failover) >= 1);
    CHECK(tw.x[0]->stats().moved > 0);
    CHECK_FALSE(tw.x[0]->reachable(2, 0));  // remembered: no link status said otherwise
    CHECK(tw.x[0]->stats().failed == 0);
    for (const auto& n : tw.notes[0])
      if (n.kind == t::note_kind::failover) CHECK(n.to_port != n.port);  // never the failing port
    // The plane is not tried again after the failover: one retry-limit cycle per connection,
    // not one every eight timeouts.
    CHECK(tw.x[0]->stats().unreachable <= 4);
  }
}

TEST_CASE("instance: reachability per plane lasts until the link status says otherwise") {
  t::instance_config a = config(1, 2), b = config(2, 2);
  twin tw(a, b);
  bool dead = true;
  tw.judge = [&](int, std::uint8_t p, const t::instance_frame&) {
    return p == 0 && dead && tw.now >= 5'000 ? twin::fate::drop : twin::fate::deliver;
  };
  auto want = traffic(tw, 1000, 2, 20);
  tw.run();
  REQUIRE_FALSE(tw.x[0]->reachable(2, 0));
  dead = false;  // the plane works again, but nothing has said so
  const std::size_t before = tw.sent[0].size();
  const auto more = traffic(tw, 500, 2, 20, 2);
  tw.run();
  std::size_t on0 = 0, on1 = 0;
  for (std::size_t i = before; i < tw.sent[0].size(); ++i)
    if (tw.sent[0][i].kind == t::frame_kind::pdu) ++(tw.sent_port[0][i] == 0 ? on0 : on1);
  CHECK(on0 == 0);  // the plane stays out of use...
  CHECK(on1 > 0);
  CHECK(tw.x[0]->stats().unreachable <= 4);  // ...and is not retried
  const std::size_t later = tw.sent[0].size();
  // The fabric reports B's plane 0 up: A uses it again.
  tw.step(0, t::instance_event::peer_status(2, 0, true));
  CHECK(tw.x[0]->reachable(2, 0));
  for (std::uint8_t vc = 0; vc < 4; ++vc)
    want[vc].insert(want[vc].end(), more[vc].begin(), more[vc].end());
  const auto last = traffic(tw, 500, 4, 20, 3);  // VC 3 pins to port 0, now usable
  tw.run();
  for (std::uint8_t vc = 0; vc < 4; ++vc)
    want[vc].insert(want[vc].end(), last[vc].begin(), last[vc].end());
  check_delivered(tw, want);
  std::size_t back_on0 = 0;
  for (std::size_t i = later; i < tw.sent[0].size(); ++i)
    back_on0 += tw.sent[0][i].kind == t::frame_kind::pdu && tw.sent_port[0][i] == 0;
  CHECK(back_on0 > 0);
}

namespace {

// Plane 0 dies at 5 us (its work moves to plane 1 some 70 us later, after go-back-N's retry
// limit); plane 1 dies at 120 us, with work moved there; plane 0 is reported up at 300 us. A
// sends 2000 commands on two VCs meanwhile; `watch` sees every frame sent. Returns them by VC.
std::array<std::vector<std::vector<std::uint8_t>>, 4> planes_fail_and_return(
    twin& tw, std::function<void(int, std::uint8_t, const t::instance_frame&)> watch = {}) {
  tw.judge = [&tw, watch](int from, std::uint8_t p, const t::instance_frame& f) {
    if (watch) watch(from, p, f);
    const bool dead0 = p == 0 && tw.now >= 5'000 && tw.now < 300'000;
    const bool dead1 = p == 1 && tw.now >= 120'000;
    return dead0 || dead1 ? twin::fate::drop : twin::fate::deliver;
  };
  auto want = traffic(tw, 2000, 2, 100);
  tw.run(300'000);
  for (int i : {0, 1})
    tw.step(i, t::instance_event::peer_status(static_cast<std::uint16_t>(2 - i), 0, true));
  tw.run();
  return want;
}

}  // namespace

TEST_CASE("instance: work moved to a plane that then fails too does not stall there") {
  t::instance_config a = config(1, 2), b = config(2, 2);
  twin tw(a, b);
  const auto want = planes_fail_and_return(tw);
  check_delivered(tw, want);
  CHECK(tw.x[0]->stats().failovers >= 2);
  CHECK(tw.x[0]->stats().failed == 0);
  CHECK(tw.x[0]->buffers_in_use() == 0);
}

TEST_CASE("instance: a failover request overtaken by a newer one moves the receiver back no more") {
  t::instance_config a = config(1, 2), b = config(2, 2);
  twin tw(a, b);
  // Planes fail and come back as above; A's failover requests and PDUs are kept as they went on
  // the wire.
  struct kept {
    std::uint8_t port;
    std::vector<std::uint8_t> bytes;
    t::link_info link;
  };
  std::vector<kept> requests, pdus;
  const auto want = planes_fail_and_return(tw, [&](int from, std::uint8_t p,
                                                   const t::instance_frame& f) {
    const kept k{p, {tw.buf.begin(), tw.buf.begin() + static_cast<std::ptrdiff_t>(f.size)}, f.link};
    if (from == 0 && f.kind == t::frame_kind::control) requests.push_back(k);
    if (from == 0 && (f.kind == t::frame_kind::pdu || f.kind == t::frame_kind::retransmission))
      pdus.push_back(k);
  });
  check_delivered(tw, want);
  REQUIRE(tw.x[0]->stats().failovers >= 2);
  REQUIRE(!requests.empty());
  // An older attempt of A's last request, as a plane could have held it back: an earlier
  // generation, and a base behind the one B moved to, at PDUs A sent on the failed plane before
  // (and B delivered). It arrives now, after B acted on the newer one: B drops it, answers
  // nothing, and stays where it is...
  kept old = requests.back();
  const auto read = w::read_frame(w::bytes(old.bytes.data(), old.bytes.size()), w::link_ethernet);
  REQUIRE(read.failover);
  w::failover_message m = read.failover->value;
  REQUIRE(m.generation >= 2);
  std::optional<std::uint16_t> last_sent;  // on the failed connection, before the base
  for (const kept& k : pdus) {
    const auto r = w::read_frame(w::bytes(k.bytes.data(), k.bytes.size()), w::link_ethernet);
    REQUIRE(r.rh);
    if (k.port == m.port && r.rh->vc == m.vc && r.rh->npsn < m.base)
      last_sent = std::max(last_sent.value_or(0), r.rh->npsn);
  }
  REQUIRE(last_sent >= 4);
  --m.generation;
  m.base = static_cast<std::uint16_t>(*last_sent - 3);
  REQUIRE(w::encode(w::sealed(m), w::mutable_bytes(old.bytes.data() + read.failover->offset,
                                                   w::layout<w::failover_message>::size)));
  const auto duplicates = [&] {
    return std::count_if(tw.notes[1].begin(), tw.notes[1].end(), [](const t::instance_note& n) {
      return n.kind == t::note_kind::dropped && n.why == t::instance_drop::duplicate;
    });
  };
  const auto before = duplicates();
  const std::size_t answers = tw.sent[1].size();
  tw.step(1, t::instance_event::frame(old.port, old.bytes, old.link));
  tw.run();
  CHECK(duplicates() == before + 1);
  for (std::size_t i = answers; i < tw.sent[1].size(); ++i)
    CHECK(tw.sent[1][i].kind != t::frame_kind::control);
  // ...so every PDU A sent, arriving again, delivers nothing twice.
  for (const kept& k : pdus) tw.step(1, t::instance_event::frame(k.port, k.bytes, k.link));
  tw.run();
  check_delivered(tw, want);
}

TEST_CASE("instance: commands queued for a plane lost when no other worked move once one does") {
  t::instance_config a = config(1, 2), b = config(2, 2);
  a.unreachable_after = b.unreachable_after = 10'000'000;  // never declared in this test
  twin tw(a, b);
  // Plane 0's link is down from the start, so both VCs' streams are pinned to plane 1. VC 1's
  // first commands are delivered there; then plane 1 loses everything, and VC 0's traffic finds
  // it unreachable (go-back-N's retry limit) with no other plane to move to. VC 1, with nothing
  // in flight, has no failover of its own to move it. Then plane 0's link comes up.
  tw.judge = [&](int, std::uint8_t p, const t::instance_frame&) {
    return p == 1 && tw.now >= 20'000 ? twin::fate::drop : twin::fate::deliver;
  };
  for (int i : {0, 1}) tw.step(i, t::instance_event::link_status(0, false));
  std::array<std::vector<std::vector<std::uint8_t>>, 4> want;
  const auto vc1 = [&](std::uint16_t k) {
    want[1].push_back(write_cmd(static_cast<std::uint16_t>(1000 + k), 8));
    tw.offer(0, 2, 1, want[1].back());
  };
  for (std::uint16_t k = 0; k < 5; ++k) vc1(k);
  tw.run(10'000);
  CHECK(tw.x[0]->stats().completed == 5);
  want[0] = traffic(tw, 300, 1, 500)[0];
  CHECK_FALSE(tw.x[0]->reachable(2, 1));
  for (std::uint16_t k = 5; k < 25; ++k) vc1(k);
  tw.run(tw.now + 10'000);
  CHECK(tw.x[0]->queued() > 0);
  for (int i : {0, 1}) tw.step(i, t::instance_event::link_status(0, true));
  tw.run();
  check_delivered(tw, want);
  CHECK(tw.x[0]->stats().failed == 0);
  CHECK(tw.x[0]->queued() == 0);
}

TEST_CASE("instance: a peer unreachable on every plane is an answer, not a loop") {
  t::instance_config a = config(1), b = config(2);
  a.unreachable_after = b.unreachable_after = 200'000;
  twin tw(a, b);
  // A missing route: nothing from A reaches B, ever.
  tw.judge = [&](int i, std::uint8_t, const t::instance_frame&) {
    return i == 0 ? twin::fate::drop : twin::fate::deliver;
  };
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < 100; ++i)
    seqs.push_back(tw.offer(0, 2, 0, write_cmd(static_cast<std::uint16_t>(i), 32)));
  tw.run();  // returns: nothing is left to do
  CHECK(tw.x[0]->peer_declared_unreachable(2));
  CHECK(tw.count(0, t::note_kind::peer_unreachable) == 1);
  // Every command failed, once, with the error the XPU sees.
  std::set<std::uint64_t> failed;
  for (const auto& n : tw.notes[0])
    if (n.kind == t::note_kind::failed) {
      CHECK(n.error.code == w::errc::unreachable);
      for (std::uint32_t k = 0; k < n.count; ++k) CHECK(failed.insert(n.first_seq + k).second);
    }
  CHECK(failed.size() == 100);
  CHECK(tw.x[0]->stats().completed == 0);
  // Bounded: the retry limit's resends, then nothing.
  const auto& st = tw.x[0]->stats();
  CHECK(st.retransmissions <= std::uint64_t{a.gbn.max_retries} * 100);
  CHECK(tw.x[0]->deadline() == t::link_never);
  CHECK(tw.x[0]->buffers_in_use() == 0);
  // New commands are refused with the reason, not queued.
  const auto cmd = write_cmd(7, 8);
  const auto r = tw.step(
      0, t::instance_event::command(2, 0, w::bytes(cmd.data(), 12), w::bytes(cmd.data() + 12, 8)));
  CHECK(r.error.code == w::errc::unreachable);
  // The route comes back and the link status says so: the peer is reachable, the connection
  // resynchronises, and new commands are delivered.
  tw.judge = nullptr;
  tw.step(0, t::instance_event::link_status(0, false));
  tw.step(0, t::instance_event::link_status(0, true));
  CHECK_FALSE(tw.x[0]->peer_declared_unreachable(2));
  std::vector<std::vector<std::uint8_t>> later;
  for (int i = 0; i < 50; ++i) {
    later.push_back(write_cmd(static_cast<std::uint16_t>(500 + i), 16));
    tw.offer(0, 2, 0, later.back());
  }
  tw.run();
  CHECK(tw.stream(1, 1, 0) == later);
}

TEST_CASE("instance: the command interface's credits per {destination, VC} and in aggregate") {
  t::instance_config c = config(0);
  c.credits_per_destination = 3;
  c.credits_aggregate = 5;
  lone l(c);
  const auto cmd = write_cmd(1, 4);
  const auto offer = [&](std::uint16_t d, std::uint8_t vc) {
    return l.x.step(0, t::instance_event::command(d, vc, w::bytes(cmd.data(), 12),
                                                  w::bytes(cmd.data() + 12, 4)));
  };
  CHECK(l.x.credits(1, 0) == 3);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(offer(1, 0).error);
  CHECK(l.x.credits(1, 0) == 0);
  const auto full = offer(1, 0);
  CHECK(full.error.code == w::errc::no_space);
  CHECK(full.error.value == 1);  // names the destination
  // Another destination, or another VC, still has credit: one slow peer does not hold the rest.
  CHECK_FALSE(offer(2, 0).error);
  CHECK_FALSE(offer(1, 1).error);
  CHECK(l.x.aggregate_credits() == 0);
  CHECK(offer(3, 0).error.code == w::errc::no_space);  // the aggregate's
  // Packing them returns the credits.
  while (l.send().first.kind != t::frame_kind::none) {
  }
  CHECK(l.x.credits(1, 0) == 3);
  CHECK(l.x.aggregate_credits() == 5);
}

TEST_CASE("instance: management packets are merged into the data path and demultiplexed") {
  twin tw(config(1), config(2));
  // An Ethernet frame the XPU builds itself (here: an ARP-like frame to B's MAC).
  std::vector<std::uint8_t> pkt(60, 0);
  w::store_be16(pkt.data() + 12, 0x0806);
  for (std::size_t i = 0; i < 6; ++i)
    pkt[i] = static_cast<std::uint8_t>(w::xpu_mac(2) >> (40 - 8 * i));
  for (std::size_t i = 14; i < pkt.size(); ++i) pkt[i] = static_cast<std::uint8_t>(i);
  // The rate (R2 3.1, 10 K packets a second) allows a burst of 16; the 17th waits its token.
  int sent = 0, refused = 0;
  for (int i = 0; i < 17; ++i) {
    const auto a = tw.step(0, t::instance_event::management_packet(pkt));
    (a.error ? refused : sent)++;
    if (a.error) CHECK(a.error.layer == "mgmt");
  }
  CHECK(sent == 16);
  CHECK(refused == 1);
  // With data interleaved: both get through.
  auto want = traffic(tw, 50, 1, 10);
  tw.run();
  check_delivered(tw, want);
  REQUIRE(tw.management[1].size() == 16);
  for (const auto& m : tw.management[1])
    CHECK(m == pkt);  // FCS added by A, checked and stripped by B
  CHECK(tw.x[0]->stats().management_sent == 16);
  CHECK(tw.x[1]->stats().management_received == 16);
  // A management frame damaged on the way fails its FCS at B and is dropped.
  tw.judge = [&](int, std::uint8_t, const t::instance_frame& f) {
    return f.kind == t::frame_kind::management ? twin::fate::flip : twin::fate::deliver;
  };
  tw.now += 10'000'000;  // tokens again
  CHECK_FALSE(tw.step(0, t::instance_event::management_packet(pkt)).error);
  tw.run();
  CHECK(tw.management[1].size() == 16);
  bool dropped = false;
  for (const auto& n : tw.notes[1])
    dropped = dropped || (n.kind == t::note_kind::dropped && n.why == t::instance_drop::management);
  CHECK(dropped);
}

TEST_CASE("instance: registers: link status, counters, the congestion state") {
  t::instance_config c = config(3, 2);
  lone l(c);
  const auto id = l.x.read_register(t::reg::id);
  REQUIRE(id);
  CHECK((*id & 0x3FF) == 3);
  CHECK(((*id >> 16) & 7) == 2);
  CHECK(*l.x.read_register(t::reg::port_base + t::reg::link_status) == 1u);
  {
    t::instance_config f = c;
    f.link.cbfc = f.link.llr = true;
    const inst flow(f);
    CHECK(*flow.read_register(t::reg::port_base + t::reg::link_status) == (1u | 4u | 8u));
  }
  for (int i = 0; i < 10; ++i) l.offer(5, 0, write_cmd(static_cast<std::uint16_t>(i), 200));
  t::congestion_state s;
  {
    const auto word = *l.x.read_register(t::reg::congestion);
    std::array<std::uint8_t, 4> b{};
    w::store_be32(b.data(), word);
    s = *w::decode<t::congestion_state>(b);
  }
  CHECK(s.ports_up == 2);
  CHECK(s.queued == (10 * 212 + 255) / 256);
  CHECK(s.level == 1);
  // Writable: a port set down by its register is down, and says so.
  CHECK(l.x.write_register(0, t::reg::port_base + t::reg::port_stride + t::reg::link_status, 0));
  CHECK_FALSE(l.x.port_up(1));
  CHECK((*l.x.read_register(t::reg::port_base + t::reg::port_stride) & 1u) == 0);
  CHECK(std::any_of(l.notes.begin(), l.notes.end(), [](const t::instance_note& n) {
    return n.kind == t::note_kind::link_down && n.port == 1;
  }));
  CHECK_FALSE(l.x.write_register(0, t::reg::congestion, 1));                    // read-only
  CHECK_FALSE(l.x.read_register(t::reg::port_base + 2 * t::reg::port_stride));  // no port 2
  // Frames counted per port.
  (void)l.send(0);
  CHECK(*l.x.read_register(t::reg::port_base + t::reg::frames_sent) == 1);
}

TEST_CASE("instance: SUE Lite end to end: no RH, LLR only, packing up to 1 KB") {
  t::instance_config a = config(1), b = config(2);
  for (auto* c : {&a, &b}) {
    c->lite = true;
    c->frame.kind = w::encap::lite;
    c->pack_limit = pk::lite_pack_limit;
    c->link.llr = true;
  }
  twin tw(a, b);
  std::mt19937 rng(11);
  tw.judge = [&](int, std::uint8_t, const t::instance_frame& f) {
    CHECK(f.kind != t::frame_kind::pdu);  // no RH, no transport PDU
    return rng() % 15 == 0 ? twin::fate::corrupt : twin::fate::deliver;
  };
  const auto want = traffic(tw, 1500, 2, 10);
  tw.run();
  check_delivered(tw, want);  // in order per plane: LLR repaired every damaged frame
  CHECK(tw.x[0]->link(0).counters().llr_replays > 0);
  std::size_t lite = 0;
  for (const auto& f : tw.sent[0]) {
    lite += f.kind == t::frame_kind::lite;
    CHECK(f.size <= 6 + pk::lite_pack_limit + 60);
  }
  CHECK(lite > 0);
  CHECK(tw.x[0]->stats().retransmissions == 0);
}

TEST_CASE("instance: configurations the library refuses, with the reason") {
  const auto refused = [](t::instance_config c) { return inst::check(c); };
  t::instance_config c = config(1);
  c.ports = 3;
  CHECK(refused(c).what.find("1, 2 or 4 ports") != std::string_view::npos);
  c = config(1, 1);
  c.unordered = true;
  CHECK(refused(c).what.find("unordered") != std::string_view::npos);
  c = config(1);
  c.frame.kind = w::encap::lite;
  CHECK(refused(c).code == w::errc::bad_value);  // Lite frames without Lite mode
  c = config(1);
  c.lite = true;  // Lite mode with an RH's encapsulation
  CHECK(refused(c).what.find("SUE Lite") != std::string_view::npos);
  c.frame.kind = w::encap::lite;
  c.pack_limit = 2048;
  CHECK(refused(c).code == w::errc::value_too_big);
  c.pack_limit = 1024;
  CHECK_FALSE(refused(c));
  // A profile with an odd type code cannot be SUE Lite's.
  static constexpr std::array<pk::command_type, 1> odd{
      {{.code = 0x41, .name = "ODD", .control_units = 1, .has_data = false}}};
  static const pk::profile odd_profile("odd", odd);
  c.profile = &odd_profile;
  CHECK(refused(c).field == "sue.cmd.type");
  c = config(1);
  c.xpuid = 1024;
  CHECK(refused(c).code == w::errc::value_too_big);
  c = config(1);
  c.link.cbfc = true;
  c.link.cbfc_rx.capacity.fill(8);  // 512 bytes: no 4 KB PDU would ever fit
  CHECK(refused(c).what.find("largest frame") != std::string_view::npos);
  // An instance configured wrong refuses every step with the same error.
  c.ports = 3;
  inst x(c);
  CHECK(x.config_error());
  CHECK(x.step(0, t::instance_event::tick()).error.what == x.config_error().what);
  // More ports than the sizing has.
  t::instance_config one = config(1, 2);
  CHECK(t::sue_instance<t::firmware_sizing>::check(one).code == w::errc::value_too_big);
}

TEST_CASE("instance: a PDU of a partition not allowed for its source is dropped, never ACKed") {
  t::instance_config a = config(1), b = config(2);
  a.partition = 7;
  b.partition = 5;
  twin tw(a, b);
  (void)traffic(tw, 20, 1, 10);
  tw.run(100'000);
  CHECK(tw.delivered[1].empty());
  CHECK(tw.x[1]->stats().partition > 0);
  CHECK(tw.x[0]->stats().completed == 0);
  // Allowed by B's table: delivered.
  t::partition_table<> allowed;
  allowed.allow(1, 7);
  b.partitions = &allowed;
  twin ok(a, b);
  const auto want = traffic(ok, 20, 1, 10);
  ok.run();
  check_delivered(ok, want);
}

TEST_CASE("instance: R1's keying, one PSN space per {port, peer} shared by the VCs") {
  t::instance_config a = config(1), b = config(2);
  a.keys = b.keys = t::keying::port_peer;
  twin tw(a, b);
  std::mt19937 rng(13);
  tw.judge = [&](int, std::uint8_t, const t::instance_frame&) {
    return rng() % 12 == 0 ? twin::fate::drop : twin::fate::deliver;
  };
  const auto want = traffic(tw, 1000, 4, 20);
  tw.run();
  check_delivered(tw, want);
  // New PDUs count up by one whatever their VC.
  std::uint16_t next = 0;
  std::set<std::uint8_t> vcs;
  for (const auto& f : tw.sent[0])
    if (f.kind == t::frame_kind::pdu) {
      CHECK(f.psn == next);
      next = static_cast<std::uint16_t>(f.psn + 1);
      vcs.insert(f.vc);
    }
  CHECK(vcs.size() == 4);
}

TEST_CASE("instance: acknowledgements ride in the RH of reverse traffic") {
  twin tw(config(1), config(2));
  for (int i = 0; i < 400; ++i) {
    tw.offer(0, 2, 0, write_cmd(static_cast<std::uint16_t>(i), 16), true);
    tw.offer(1, 1, 0, write_cmd(static_cast<std::uint16_t>(i), 16), true);
    tw.run(tw.now + 40);
  }
  tw.run();
  std::size_t piggybacked = 0;
  for (const auto& f : tw.sent[0])
    piggybacked += f.kind == t::frame_kind::pdu && f.op == w::rh_op::ack;
  CHECK(piggybacked > 100);
  CHECK(tw.x[0]->stats().completed == 400);
  CHECK(tw.x[1]->stats().completed == 400);
}

TEST_CASE("instance: ready_ports follows its queues: commands, transmissions, links down and up") {
  const auto cmd = barrier_cmd();
  std::vector<std::uint8_t> out(8192);
  t::instance_config c;
  c.xpuid = 0;
  c.ports = 4;
  inst a(c);
  const auto command = [&](inst& x, std::uint16_t peer) {
    CHECK_FALSE(x.step(0, t::instance_event::command(peer, 0, w::bytes(cmd), {}, true)).error);
  };
  CHECK(a.ready_ports() == 0);
  command(a, 1);  // strict: the stream is pinned to port (xpuid + peer + VC) % 4 = 1
  CHECK(a.ready_ports() == 0b0010);
  CHECK(a.port_ready(1));
  CHECK_FALSE(a.port_ready(0));
  CHECK(a.step(0, t::instance_event::transmit(1, out)).frame.size > 0);
  CHECK(a.ready_ports() == 0);  // its one command went out
  command(a, 1);
  command(a, 2);  // port 2
  CHECK(a.ready_ports() == 0b0110);
  a.step(1, t::instance_event::link_status(2, false));
  CHECK(a.ready_ports() == 0b1010);  // the stream left its plane for the next one, with its command
  CHECK_FALSE(a.port_ready(2));
  CHECK(a.step(1, t::instance_event::transmit(3, out)).frame.size > 0);
  CHECK(a.step(1, t::instance_event::transmit(1, out)).frame.size > 0);
  CHECK(a.ready_ports() == 0);

  // One port: a command waits while its link is down, and is ready again when it comes up.
  c.ports = 1;
  inst b(c);
  command(b, 1);
  CHECK(b.ready_ports() == 1);
  b.step(1, t::instance_event::link_status(0, false));
  CHECK(b.ready_ports() == 0);
  CHECK_FALSE(b.port_ready(0));
  b.step(2, t::instance_event::link_status(0, true));
  CHECK(b.ready_ports() == 1);
  CHECK(b.step(2, t::instance_event::transmit(0, out)).frame.size > 0);
  CHECK(b.ready_ports() == 0);
}
