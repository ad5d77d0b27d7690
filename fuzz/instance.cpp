// The SUE instance as an embedder runs it: two instances, A (XPU 1) and B (XPU 2), port p of one
// cabled to port p of the other, the bytes deciding what happens next: a command offered (to the
// other XPU, or to XPU 3, which no cable reaches), a port given the chance to transmit (the frame
// then delivered, dropped, corrupted below the frame, changed inside its PDU, or duplicated), the
// next frame or link message on a link arriving, time passing, a link going down or up (at both
// ends, losing what is on it; so too a link an instance finds down), a plane reported down or up, a
// management packet sent, and frames forged by a third party on the wire (a frame the other side
// sent, its RH or payload changed and its R-CRC made good again, or bytes of the input). The first
// two bytes pick the ports (1, 2, 4), strict or unordered mode, LLR, CBFC, the connection keying,
// the encapsulation (udp4, afh1-shim, afh2c or SUE Lite), the window and the timeouts; the third
// the command credits (per {destination, VC} and in all).
//
// After every step: nothing refused was numbered, and the numbers of each {destination, VC}
// run 0, 1, 2, ...; a port offered a transmit that had nothing to send is not ready until
// another event (an embedder's "while ready, transmit" ends); the deadline is never in the past
// (an embedder stepping at it makes progress); the instance's queues stay within its sizing.
// Until a frame is forged: every command delivered is one offered to that XPU from that source
// on that VC, at most once, and in strict mode in the order offered (less commands that failed
// in between; SUE Lite per plane); a command reported completed was delivered (SUE Lite reports it
// completed once it is on the link); completed and failed never exceed what was accepted. At the
// end every link comes up and delivers everything, time runs on, and every command accepted must be
// reported completed or failed within a bounded time and number of steps: crafted traffic, lost
// links and a missing route end in an answer, not in resends without end.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "common.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/receive.hpp"
#include "scaleup/transport/instance.hpp"
#include "scaleup/transport/sue_frame.hpp"
#include "scaleup/wire/checksum.hpp"

namespace {

using namespace scaleup;
namespace tr = scaleup::transport;

// Small bounds, so that the fuzzer reaches them: 4 peers, 4 ports, 2 VCs, 16 PDUs in flight per
// connection, 1024 payload bytes, 64 commands queued, 256 PDUs kept, 16 frames of LLR replay.
using sizing = tr::instance_sizing<4, 4, 2, 16, 1024, 64, 256, 16, 16 * 1024, pack::heap_storage>;
using inst = tr::sue_instance<sizing>;

constexpr std::uint16_t xpu_of_side[2] = {1, 2};
constexpr std::uint16_t nowhere = 3;  // an XPU no cable reaches
constexpr std::size_t max_commands = 4096;
// Frames on one cable at once, at most: more than an input's transmits, so that the cable never
// drops one of its own accord (a CBFC link without LLR would lose its credits for good).
constexpr std::size_t max_on_cable = 8192;

struct cable_item {
  std::vector<std::uint8_t> bytes;
  tr::link_info link{};
  bool message = false;
  tr::link_message msg{};
};

// What one side sent to one {destination, VC}, and what came of it.
struct stream {
  std::uint64_t accepted = 0;               // commands numbered
  std::uint64_t completed = 0;              // reported completed
  std::uint64_t failed = 0;                 // reported failed
  std::uint64_t delivered = 0;              // delivered at the destination (distinct commands)
  std::uint64_t after = 0;                  // one past the highest number delivered
  std::array<std::uint64_t, 4> after_on{};  // the same, per port it arrived on (SUE Lite)
  std::vector<bool> seen;                   // which numbers were delivered
};

struct harness {
  std::array<std::unique_ptr<inst>, 2> x;
  std::array<tr::instance_config, 2> cfg;
  std::uint64_t now = 0;
  // links[to][port]: frames and link messages on their way to side `to`, in order.
  std::array<std::array<std::deque<cable_item>, 4>, 2> links;
  std::array<std::vector<tr::instance_note>, 2> notes;
  // streams[side][peer slot][vc]; peer slot 0: the other side, 1: XPU 3.
  std::array<std::array<std::array<stream, 2>, 2>, 2> streams;
  std::array<std::vector<std::uint8_t>, 2> last_sent;  // each side's last frame, for forgeries
  std::array<std::uint8_t, 4096> buf{};
  std::size_t commands = 0;
  bool forged = false;
  bool unordered = false;
  bool lite = false;  // SUE Lite: no RH, no R-CRC, no go-back-N; done once handed to the link

  static std::size_t slot_of(std::uint16_t peer) { return peer == nowhere ? 1 : 0; }

  void take_notes(int i) {
    unsigned downs = 0;  // ports whose link this side found down (LLR gave up on it)
    for (const tr::instance_note& n : notes[i]) {
      if (n.kind == tr::note_kind::link_down && n.port < cfg[i].ports) downs |= 1u << n.port;
      if (n.kind == tr::note_kind::link_message) {
        if (n.port < cfg[i].ports)
          links[1 - i][n.port].push_back(cable_item{{}, {}, true, n.message});
        continue;
      }
      if (n.kind != tr::note_kind::completed && n.kind != tr::note_kind::failed) continue;
      fuzz::check(n.peer == xpu_of_side[1 - i] || n.peer == nowhere,
                  "instance: a command reported for a peer never given one");
      fuzz::check(n.vc < cfg[i].vcs, "instance: a command reported on a VC out of range");
      stream& s = streams[i][slot_of(n.peer)][n.vc];
      (n.kind == tr::note_kind::completed ? s.completed : s.failed) += n.count;
      fuzz::check(s.completed + s.failed <= s.accepted,
                  "instance: more commands completed or failed than accepted");
      fuzz::check(n.first_seq + n.count <= s.accepted,
                  "instance: a command reported that was never numbered");
      if (n.kind == tr::note_kind::completed && !forged && !lite && n.peer != nowhere) {
        const stream& d = streams[i][0][n.vc];
        for (std::uint64_t q = n.first_seq; q < n.first_seq + n.count; ++q)
          fuzz::check(q < d.seen.size() && d.seen[q],
                      "instance: a command reported completed that was never delivered");
      }
    }
    notes[i].clear();
    // The owner of the wire takes such a link down at both ends, as a retraining link is: what
    // was on it is gone (LLR numbers from 0 again once it is up).
    for (std::uint8_t p = 0; p < cfg[i].ports; ++p) {
      if (((downs >> p) & 1u) == 0) continue;
      links[0][p].clear();
      links[1][p].clear();
      if (x[1 - i]->port_up(p)) step(1 - i, tr::instance_event::link_status(p, false));
    }
  }

  // A PDU's payload delivered at side i: every command one that side `src` offered on `vc`.
  void delivered(int i, const tr::instance_delivery& d) {
    if (d.management) return;
    fuzz::check(d.vc < cfg[i].vcs, "instance: delivered on a VC out of range");
    pack::unpacker u(pack::default_profile, d.payload);
    pack::command_view cv;
    while (u.next(cv)) {
      if (forged) continue;
      fuzz::check(d.src == xpu_of_side[1 - i], "instance: delivered from an XPU that sent none");
      const auto w = wire::decode<pack::cmd_write>(cv.control);
      fuzz::check(w.ok() && w->type == pack::code::write_full_posted,
                  "instance: delivered a command never offered");
      const std::uint64_t seq = w->addr & 0xFFFFFFFFFFull;
      fuzz::check((w->addr >> 48) == d.src && ((w->addr >> 40) & 0xFF) == d.vc,
                  "instance: delivered a command of another stream");
      stream& s = streams[1 - i][0][d.vc];
      fuzz::check(seq < s.accepted, "instance: delivered a command not yet accepted");
      if (s.seen.size() <= seq) s.seen.resize(seq + 1);
      fuzz::check(!s.seen[seq], "instance: a command delivered twice");
      // In order, less the commands that failed (a peer declared unreachable) in between. SUE
      // Lite has no sequence of its own: its order holds per plane (R2 2.2), and a stream moved
      // to another plane may overtake what its old plane still replays.
      std::uint64_t& mark = lite ? s.after_on[d.port & 3] : s.after;
      if (!unordered) fuzz::check(seq >= mark, "instance: delivered out of order");
      mark = std::max(mark, seq + 1);
      s.seen[seq] = true;
      ++s.delivered;
    }
    if (!forged)
      fuzz::check(!u.error_found(), "instance: delivered a payload that does not unpack");
  }

  void after(int i, const tr::instance_actions& a) {
    if (a.delivered.valid) delivered(i, a.delivered);
    take_notes(i);
    const std::uint64_t d = x[i]->deadline();
    fuzz::check(d == tr::link_never || d > now, "instance: a deadline in the past after a step");
    fuzz::check(x[i]->queued() <= sizing::commands, "instance: more commands queued than sized");
    fuzz::check(x[i]->in_flight() <= sizing::kept, "instance: more PDUs kept than sized");
  }

  tr::instance_actions step(int i, const tr::instance_event& e) {
    const tr::instance_actions a = x[i]->step(now, e);
    after(i, a);
    return a;
  }

  void offer(int i, std::uint16_t dst, std::uint8_t vc, std::size_t data, bool send_now) {
    if (commands == max_commands || vc >= cfg[i].vcs) return;
    stream& s = streams[i][slot_of(dst)][vc];
    std::array<std::uint8_t, 12 + 256> c{};
    const std::uint64_t seq = s.accepted;
    const auto w = wire::encode(pack::cmd_write{.type = pack::code::write_full_posted,
                                                .dlen = static_cast<std::uint8_t>(data - 1),
                                                .tag = static_cast<std::uint16_t>(seq),
                                                .addr = std::uint64_t{xpu_of_side[i]} << 48 |
                                                        std::uint64_t{vc} << 40 | seq},
                                wire::mutable_bytes(c.data(), 12));
    fuzz::check(w.ok(), "instance: the harness's command does not encode");
    for (std::size_t k = 0; k < data; ++k) c[12 + k] = static_cast<std::uint8_t>(seq + k);
    const auto a = step(i, tr::instance_event::command(dst, vc, wire::bytes(c.data(), 12),
                                                       wire::bytes(c.data() + 12, data), send_now));
    ++commands;
    if (a.error) return;
    fuzz::check(a.seq == seq, "instance: a command numbered out of offer order");
    ++s.accepted;
  }

  // Port p of side i transmits, if it has something; `fate` decides what the cable does.
  void transmit(int i, std::uint8_t p, std::uint8_t fate, std::uint8_t where) {
    if (p >= cfg[i].ports) return;
    const bool ready = ((x[i]->ready_ports() >> p) & 1u) != 0;
    const tr::instance_actions a = step(i, tr::instance_event::transmit(p, buf));
    if (a.frame.size == 0) {
      fuzz::check(!x[i]->port_ready(p), "instance: a port with nothing to send stays ready");
      return;
    }
    fuzz::check(ready, "instance: a port not ready sent a frame");
    fuzz::check(a.frame.size <= buf.size(), "instance: a frame larger than the buffer");
    cable_item m{{buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(a.frame.size)},
                 a.frame.link};
    last_sent[i] = m.bytes;
    if (!x[1 - i]->port_up(p)) return;  // the far end is down: lost
    // CBFC without LLR: a frame lost or repeated on the link is one its credits never come back
    // for, or come back for twice (the CLI refuses --loss and --duplicate there, as a deployment
    // must); a damaged frame still arrives.
    if (cfg[i].link.cbfc && !cfg[i].link.llr && ((fate & 7) == 4 || (fate & 7) == 7)) fate = 0;
    // SUE Lite has no R-CRC: what guards its payload is the FCS, and without LLR nothing tells
    // a frame from its duplicate.
    if (lite && (fate & 7) == 6) fate = 5;
    if (lite && !cfg[i].link.llr && (fate & 7) == 7) fate = 0;
    switch (fate & 7) {
      case 4:  // lost
        return;
      case 5:  // the receiving MAC's FCS check fails
        m.bytes[where % m.bytes.size()] ^= 0x40;
        m.link.fcs_ok = false;
        break;
      case 6: {  // a byte of the PDU changes and nothing below the frame notices
        const std::size_t h = std::min(wire::header_size(cfg[i].frame.kind), m.bytes.size() - 1);
        m.bytes[h + where % (m.bytes.size() - h)] ^= 0x01;
        break;
      }
      case 7:  // duplicated by the link: not what a cable does, but what a broken switch may
        if (links[1 - i][p].size() < max_on_cable) links[1 - i][p].push_back(m);
        break;
      default:
        break;
    }
    if (links[1 - i][p].size() < max_on_cable) links[1 - i][p].push_back(std::move(m));
  }

  void arrive(int i, std::uint8_t p) {
    if (p >= cfg[i].ports || links[i][p].empty()) return;
    const cable_item m = std::move(links[i][p].front());
    links[i][p].pop_front();
    if (m.message)
      step(i, tr::instance_event::message_in(p, m.msg));
    else
      step(i, tr::instance_event::frame(p, m.bytes, m.link));
  }

  void tick() {
    for (int i : {0, 1})
      if (x[i]->deadline() <= now) step(i, tr::instance_event::tick());
  }

  void link(std::uint8_t p, bool up) {
    if (p >= cfg[0].ports) return;
    for (int i : {0, 1}) {
      if (!up) links[i][p].clear();  // a link that goes down loses what is on it
      step(i, tr::instance_event::link_status(p, up));
    }
  }

  // A third party's frame on side i's port p: the other side's last frame with a byte of its
  // RH or payload set and the R-CRC made good again, or bytes of the input as they are.
  void forge(int i, std::uint8_t p, fuzz::reader& in, bool raw) {
    if (p >= cfg[i].ports) return;
    std::vector<std::uint8_t> f;
    if (raw) {
      const std::size_t n = in.byte();
      for (std::size_t k = 0; k < n; ++k) f.push_back(in.byte());
    } else {
      f = last_sent[1 - i];
      const std::uint8_t at = in.byte(), value = in.byte();
      const auto s = tr::read_sue_frame(f, tr::sue_receive_options(cfg[i].frame.udp_dst_port));
      if (!s.rh || s.status == wire::rcrc_status::missing) return;
      const std::size_t pdu = static_cast<std::size_t>(s.payload.data() - f.data()) - 8;
      const std::size_t covered = 8 + s.payload.size();
      if (pdu + covered + 4 > f.size()) return;
      f[pdu + at % covered] = value;
      const std::uint32_t crc = wire::crc32(wire::bytes(f.data() + pdu, covered));
      for (std::size_t k = 0; k < 4; ++k)
        f[pdu + covered + k] = static_cast<std::uint8_t>(crc >> (24 - 8 * k));
    }
    forged = true;
    tr::link_info li;
    li.fcs_ok = true;
    step(i, tr::instance_event::frame(p, f, li));
  }

  // Every link up and delivering, time running on: every command accepted must get its answer.
  void drain() {
    for (std::uint8_t p = 0; p < cfg[0].ports; ++p)
      for (int i : {0, 1})
        if (!x[i]->port_up(p)) step(i, tr::instance_event::link_status(p, true));
    const std::uint64_t until = now + 200'000'000;  // 200 ms: past every retry and failover
    for (std::size_t steps = 0; steps < 400'000; ++steps) {
      bool busy = false;
      for (int i : {0, 1})
        for (std::uint8_t p = 0; p < cfg[i].ports; ++p) {
          if (((x[i]->ready_ports() >> p) & 1u) != 0) {
            transmit(i, p, 0, 0);
            busy = true;
          }
          if (!links[i][p].empty()) {
            arrive(i, p);
            busy = true;
          }
        }
      if (busy) continue;
      if (answered()) return;
      const std::uint64_t next = std::min(x[0]->deadline(), x[1]->deadline());
      fuzz::check(next != tr::link_never && next <= until,
                  "instance: commands without an answer 200 ms after every link came up");
      now = next;
      tick();
    }
    fuzz::fail("instance: still busy after 400 000 steps with every link up");
  }

  bool answered() const {
    for (const auto& side : streams)
      for (const auto& peer : side)
        for (const stream& s : peer)
          if (s.completed + s.failed != s.accepted) return false;
    return true;
  }
};

tr::instance_config config_of(std::uint16_t xpu, std::uint8_t shape, std::uint8_t timing) {
  constexpr std::uint8_t ports[4] = {1, 2, 4, 4};
  constexpr wire::encap encaps[4] = {wire::encap::udp4, wire::encap::afh1_shim, wire::encap::afh2c,
                                     wire::encap::lite};
  tr::instance_config c;
  c.xpuid = xpu;
  c.ports = ports[shape & 3];
  c.vcs = 2;
  c.unordered = (shape & 4) != 0 && c.ports > 1;
  c.frame.kind = encaps[(shape >> 5) & 3];
  c.lite = c.frame.kind == wire::encap::lite;
  c.keys = (shape & 0x80) != 0 ? tr::keying::port_peer : tr::keying::port_peer_vc;
  c.gbn.window = 1u + (timing & 0x0F);
  c.gbn.rto = 2'000u + 2'000u * ((timing >> 4) & 3);
  c.gbn.max_retries = 1u + ((timing >> 6) & 3);
  c.gbn.ack_every = 1u + (timing & 3);
  c.gbn.ack_delay = 500;
  c.unreachable_after = 50'000;
  if ((shape & 8) != 0) {
    c.link.llr = true;
    c.link.llr_tx.replay_timeout = 3'000;
    c.link.llr_tx.max_replays = 4;
  }
  if ((shape & 0x10) != 0) {
    c.link.cbfc = true;
    for (auto& cap : c.link.cbfc_rx.capacity) cap = cap == 0 ? 0 : 64;
  }
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  fuzz::reader in{data, size, 3};
  harness h;
  for (int i : {0, 1}) {
    h.cfg[i] = config_of(xpu_of_side[i], data[0], data[1]);
    h.cfg[i].credits_per_destination = data[2] & 0x0F;
    h.cfg[i].credits_aggregate = (data[2] >> 4) * 4u;
    h.x[i] = std::make_unique<inst>(h.cfg[i]);
    if (h.x[i]->config_error()) return 0;
    h.x[i]->set_notes({&h.notes[i], [](void* c, const tr::instance_note& n) {
                         static_cast<std::vector<tr::instance_note>*>(c)->push_back(n);
                       }});
  }
  h.unordered = h.cfg[0].unordered;
  h.lite = h.cfg[0].lite;
  h.tick();

  while (in.more()) {
    const std::uint8_t b = in.byte();
    const int side = (b >> 3) & 1;
    const auto p = static_cast<std::uint8_t>((b >> 4) & 3);
    switch (b & 7) {
      case 0: {  // a command: to the other side, or now and then to XPU 3
        const std::uint8_t arg = in.byte();
        const std::uint16_t dst = (arg & 0xC0) == 0xC0 ? nowhere : xpu_of_side[1 - side];
        h.offer(side, dst, static_cast<std::uint8_t>((b >> 4) & 1), std::size_t{1} + (arg & 0x3F),
                (b & 0x20) != 0);
        break;
      }
      case 1: {
        const std::uint8_t fate = in.byte();
        h.transmit(side, p, fate, in.byte());
        break;
      }
      case 2:
        h.arrive(side, p);
        break;
      case 3:  // time passes: up to about 65 us
        h.now += std::uint64_t{1} << ((b >> 3) & 15);
        h.tick();
        break;
      case 4:
        h.link(p, (b & 0x08) != 0);
        break;
      case 5: {  // the plane p of the other XPU reported down or up
        h.step(side, tr::instance_event::peer_status(xpu_of_side[1 - side], p, (b & 0x40) != 0));
        break;
      }
      case 6: {  // a management packet from side i: an Ethernet frame of the input's bytes
        std::array<std::uint8_t, 96> m{};
        const std::size_t n = 14 + in.byte() % 82;
        for (std::size_t k = 0; k < n; ++k) m[k] = in.byte();
        h.step(side, tr::instance_event::management_packet(wire::bytes(m.data(), n)));
        break;
      }
      case 7:
        h.forge(side, p, in, (b & 0x40) != 0);
        break;
    }
  }
  h.drain();
  return 0;
}
