// A fabric harness: N XPUs on one switch, each with 1, 2 or 4 ports (one plane each), running
// the library's packer, go-back-N and frame code over links with delay, loss, corruption,
// duplication, reordering and failures. A discrete-event simulation for tests, examples and
// the CLI; a seed makes a run reproducible.
//
// Unlike the machines it drives, the harness opts into the heap (event queue, buffers): it is
// simulation scaffolding, included only by those who run simulations.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <span>
#include <variant>
#include <vector>

#include "scaleup/dissect/engine.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"
#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/wire/frame.hpp"

namespace scaleup::sim {

struct link_event {
  std::uint64_t at = 0;  // ns
  std::uint16_t xpu = 0;
  std::uint8_t port = 0;
  bool up = false;
};

struct fabric_config {
  std::uint16_t xpus = 4;
  std::uint8_t ports = 1;          // per XPU: 1, 2 or 4 (R2 1.1), one plane each
  bool unordered = false;          // spread PDUs over ports (R2 4.4); strict pins a connection
  std::uint8_t vcs = 2;            // requests on VC0, responses on VC1 (R2 3.2.2)
  double instance_gbps = 800;      // per SUE instance, split over its ports (R2 Table 6)
  std::uint64_t link_delay = 125;  // ns per link: SUE 100 + 5 m of fibre (R2 Appendix A)
  // Per-link overrides, one way, indexed xpu * 4 + port (0 or missing: link_delay), for
  // fabrics whose cables differ (R2 Appendix A: 3 m of twinax to 10 m of fibre).
  std::vector<std::uint64_t> link_delays;
  std::uint64_t switch_delay = 250;                          // ns (R2 Appendix A)
  double loss = 0, corrupt = 0, duplicate = 0, reorder = 0;  // per frame, on the way out
  std::uint64_t reorder_delay = 400;                         // ns added to a reordered frame
  std::vector<link_event> link_events;
  std::uint64_t seed = 1;
  wire::encap encap = wire::encap::udp4;
  transport::gbn_config gbn{};
  transport::keying keys = transport::keying::port_peer_vc;
};

struct fabric_stats {
  std::uint64_t offered = 0, delivered = 0, duplicates = 0, out_of_order = 0;
  std::array<std::uint64_t, 4> frames_per_port{};
  std::uint64_t frames = 0, pdus = 0, retransmissions = 0, nacks = 0, acks = 0;
  std::uint64_t lost = 0, corrupted = 0, duplicated = 0, reordered = 0, dropped_link_down = 0;
  std::uint64_t failovers = 0, moved = 0, unreachable = 0;
  std::uint64_t delivered_bytes = 0;  // command bytes handed to XPUs
  std::uint64_t first_offer = 0, last_delivery = 0;

  double goodput_gbps() const {
    const std::uint64_t span = last_delivery > first_offer ? last_delivery - first_offer : 0;
    return span ? static_cast<double>(delivered_bytes) * 8.0 / static_cast<double>(span) : 0.0;
  }
};

// One command offered to the fabric: from `src` to `dst` on `vc` at time `at`.
struct offer {
  std::uint64_t at = 0;
  std::uint16_t src = 0, dst = 0;
  std::uint8_t vc = 0;
  std::uint16_t data = 64;  // bytes of write data
};

// One command handed to its destination XPU, reported once (a duplicate is counted, not
// reported): when it was offered and when it arrived, for latency distributions.
struct delivery {
  std::uint64_t offered_at = 0, delivered_at = 0;  // ns
  std::uint16_t src = 0, dst = 0;
  std::uint8_t vc = 0;
  std::uint64_t seq = 0;  // per {src, dst, vc}: 0, 1, 2, ... in offer order
};

class fabric {
 public:
  static constexpr std::size_t max_xpus = 64;
  static constexpr std::size_t max_ports = 4;
  static constexpr std::size_t max_vcs = 4;
  using conn = transport::connection<16>;
  using frame_sink = std::function<void(std::uint64_t ns, std::span<const std::uint8_t>)>;
  using delivery_sink = std::function<void(const delivery&)>;

  explicit fabric(fabric_config cfg) : cfg_(std::move(cfg)), rng_(cfg_.seed) {
    cfg_.xpus = std::clamp<std::uint16_t>(cfg_.xpus, 2, max_xpus);
    cfg_.ports = std::clamp<std::uint8_t>(cfg_.ports, 1, max_ports);
    cfg_.vcs = std::clamp<std::uint8_t>(cfg_.vcs, 1, max_vcs);
    if (cfg_.ports == 1) cfg_.unordered = false;  // unordered needs more than one port (R2 1.2)
    xpus_.resize(cfg_.xpus);
    for (auto& x : xpus_) {
      x.packer = std::make_unique<pack::packer<max_xpus, max_vcs, 4096>>(pack::default_profile);
      x.conns =
          std::make_unique<transport::connection_table<max_ports, max_xpus, max_vcs>>(cfg_.keys);
      x.pin.fill(0xFF);
    }
    for (const auto& l : cfg_.link_events) schedule(l.at, ev_link{l});
  }

  // Every frame as the switch receives it (retransmissions included), for a capture.
  void on_wire(frame_sink s) { sink_ = std::move(s); }
  // Every command as it is delivered.
  void on_delivery(delivery_sink s) { delivery_sink_ = std::move(s); }

  void add(const offer& o) {
    if (o.src >= cfg_.xpus || o.dst >= cfg_.xpus || o.src == o.dst || o.vc >= cfg_.vcs) return;
    schedule(o.at, ev_offer{o});
  }

  // Runs until nothing is left to do (or `until`); returns the statistics.
  const fabric_stats& run(std::uint64_t until = ~std::uint64_t{0}) {
    while (!events_.empty() && events_.top().at <= until) {
      const event e = events_.top();
      events_.pop();
      const payload what = std::move(slots_[e.slot]);
      free_slots_.push_back(e.slot);
      now_ = e.at;
      std::visit([&](const auto& v) { handle(v); }, what);
    }
    return stats_;
  }

  const fabric_stats& stats() const { return stats_; }
  std::uint64_t now() const { return now_; }
  const fabric_config& config() const { return cfg_; }

 private:
  // ---- events --------------------------------------------------------------------------
  struct ev_offer {
    offer o;
  };
  struct ev_port_free {
    std::uint16_t xpu;
    std::uint8_t port;
  };
  struct ev_at_switch {
    std::uint16_t from;
    std::uint8_t port;
    std::uint64_t epoch;
    std::shared_ptr<std::vector<std::uint8_t>> bytes;
  };
  struct ev_at_xpu {
    std::uint16_t to;
    std::uint8_t port;
    std::uint64_t epoch;
    std::shared_ptr<std::vector<std::uint8_t>> bytes;
  };
  struct ev_tick {
    std::uint16_t xpu;
  };
  struct ev_link {
    link_event l;
  };
  struct ev_failover {
    std::uint16_t xpu;
    std::uint8_t from, to;
    std::uint16_t peer;
    std::uint8_t vc;
  };
  using payload =
      std::variant<ev_offer, ev_port_free, ev_at_switch, ev_at_xpu, ev_tick, ev_link, ev_failover>;
  // The queue orders small keys; each payload waits in a slot until its turn (moving variants
  // that hold shared_ptrs through the heap draws false GCC 12 "may be uninitialised" warnings).
  struct event {
    std::uint64_t at;
    std::uint64_t seq;
    std::uint32_t slot;
    bool operator>(const event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  // ---- endpoint state --------------------------------------------------------------------
  struct stored_pdu {  // what the caller keeps for go-back-N: the packed commands
    std::vector<std::uint8_t> commands;
  };
  struct pending_tx {  // a port's transmit queue entry
    std::uint16_t peer;
    std::uint8_t vc;
    bool ack_only;  // an RH-only PDU carrying the pending ACK/NACK
    std::uint16_t psn;
  };
  struct port_state {
    bool up = true;
    std::uint64_t busy_until = 0;
    std::uint64_t epoch = 0;  // bumps on link down: frames on the wire are lost
    std::deque<pending_tx> queue;
    bool transmitting = false;
  };
  struct xpu_state {
    std::unique_ptr<pack::packer<max_xpus, max_vcs, 4096>> packer;
    std::unique_ptr<transport::connection_table<max_ports, max_xpus, max_vcs>> conns;
    std::array<port_state, max_ports> ports{};
    // Retransmission buffers per connection, by PSN (the caller's, R2 4.2 step 4).
    std::map<std::uint32_t, std::map<std::uint16_t, stored_pdu>> kept;
    std::array<std::uint8_t, max_xpus * max_vcs> pin{};  // strict mode: {peer, VC} -> port
    std::vector<std::vector<std::uint8_t>> offered;      // command bytes, owned while queued
    std::set<std::uint32_t> failing;  // {port, peer, VC} whose work is being moved
    std::uint64_t tick_at = 0;
  };

  static std::uint32_t key(std::uint8_t port, std::uint16_t peer, std::uint8_t vc) {
    return (std::uint32_t{port} << 24) | (std::uint32_t{peer} << 8) | vc;
  }
  std::uint8_t vc_key(std::uint8_t vc) const {
    return cfg_.keys == transport::keying::port_peer ? 0 : vc;
  }
  conn& connection_of(std::uint16_t x, std::uint8_t port, std::uint16_t peer, std::uint8_t vc) {
    return xpus_[x].conns->at(port, peer, vc);
  }
  std::uint64_t delay_of(std::uint16_t x, std::uint8_t p) const {
    const std::size_t i = std::size_t{x} * max_ports + p;
    return i < cfg_.link_delays.size() && cfg_.link_delays[i] ? cfg_.link_delays[i]
                                                              : cfg_.link_delay;
  }
  double port_gbps() const { return cfg_.instance_gbps / cfg_.ports; }
  std::uint64_t serialise(std::size_t bytes) const {
    // Preamble, SFD and inter-frame gap: 20 bytes on the wire besides the frame and its FCS.
    return static_cast<std::uint64_t>(static_cast<double>(bytes + 4 + 20) * 8.0 / port_gbps()) + 1;
  }

  template <class E>
  void schedule(std::uint64_t at, E e) {
    std::uint32_t slot = 0;
    if (free_slots_.empty()) {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back(std::move(e));
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slots_[slot] = payload{std::move(e)};
    }
    events_.push(event{at, seq_++, slot});
  }
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  // ---- offering commands -----------------------------------------------------------------
  void handle(const ev_offer& e) {
    const offer& o = e.o;
    xpu_state& x = xpus_[o.src];
    if (stats_.offered++ == 0) stats_.first_offer = now_;
    // A WR_FULL whose address names the stream and its sequence, so that delivery can be
    // checked: exactly once, and in order per {source, destination, VC}.
    const std::uint64_t seq = next_seq_[stream(o.src, o.dst, o.vc)]++;
    offered_at_[stream(o.src, o.dst, o.vc)].push_back(now_);
    const std::uint64_t addr = (std::uint64_t{o.src} << 48) | (std::uint64_t{o.vc} << 40) | seq;
    std::vector<std::uint8_t> cmd(12 + o.data);
    const auto ctrl = wire::to_bytes(pack::cmd_write{.type = pack::code::write_full_posted,
                                                     .tag = static_cast<std::uint16_t>(seq),
                                                     .addr = addr});
    std::copy(ctrl.value.begin(), ctrl.value.end(), cmd.begin());
    cmd[1] = static_cast<std::uint8_t>(o.data - 1);
    for (std::size_t i = 12; i < cmd.size(); ++i) cmd[i] = static_cast<std::uint8_t>(seq + i);
    x.offered.push_back(std::move(cmd));
    const auto& c = x.offered.back();
    // Storage must not move while the packer holds views: offered never shrinks mid-run, and
    // reserve keeps the elements' buffers where they are (vectors of vectors move the headers,
    // not the heap buffers the views point into).
    (void)x.packer->push({.destination = o.dst,
                          .vc = o.vc,
                          .control = std::span<const std::uint8_t>(c.data(), 12),
                          .data = std::span<const std::uint8_t>(c.data() + 12, c.size() - 12)});
    for (std::uint8_t p = 0; p < cfg_.ports; ++p) pump(o.src, p);
  }

  std::uint32_t stream(std::uint16_t s, std::uint16_t d, std::uint8_t vc) const {
    return (std::uint32_t{s} << 16) | (std::uint32_t{d} << 4) | vc;
  }

  // The port a new PDU for {peer, vc} goes out on, or none.
  int port_for(std::uint16_t x, std::uint16_t peer, std::uint8_t vc) {
    xpu_state& xs = xpus_[x];
    if (!cfg_.unordered) {
      std::uint8_t& p = xs.pin[peer * max_vcs + vc];
      if (p == 0xFF || !xs.ports[p].up || connection_of(x, p, peer, vc).tx.unreachable) p = 0xFF;
      if (p == 0xFF) {
        // Pin to the first usable port, starting from a spread so peers share the planes.
        for (std::uint8_t k = 0; k < cfg_.ports && p == 0xFF; ++k) {
          const auto q = static_cast<std::uint8_t>((peer + vc + k) % cfg_.ports);
          if (xs.ports[q].up && !connection_of(x, q, peer, vc).tx.unreachable) p = q;
        }
      }
      return p == 0xFF ? -1 : p;
    }
    // Unordered: the usable port with the least work ahead of it (R2 4.4: "based on available
    // bandwidth"), whose connection has window left.
    int best = -1;
    std::uint64_t best_free = 0;
    for (std::uint8_t q = 0; q < cfg_.ports; ++q) {
      const port_state& ps = xs.ports[q];
      const conn& c = connection_of(x, q, peer, vc);
      if (!ps.up || c.tx.unreachable || c.tx.in_flight() >= cfg_.gbn.window) continue;
      const std::uint64_t free_at = std::max(ps.busy_until, now_) + ps.queue.size() * 1000;
      if (best < 0 || free_at < best_free) best = q, best_free = free_at;
    }
    return best;
  }

  // Keeps port p of XPU x busy: retransmissions and ACKs first, then new PDUs from the packer.
  void pump(std::uint16_t x, std::uint8_t p) {
    xpu_state& xs = xpus_[x];
    port_state& ps = xs.ports[p];
    if (!ps.up || ps.transmitting) return;
    if (ps.queue.empty()) {
      std::array<std::uint8_t, 4096> buf{};
      const auto eligible = [&](std::uint16_t peer, std::uint8_t vc) {
        // While a stream's outstanding PDUs are being moved, newer ones wait: strict order.
        if (!cfg_.unordered && moving_stream(x, peer, vc)) return false;
        return port_for(x, peer, vc) == p &&
               connection_of(x, p, peer, vc).tx.in_flight() < cfg_.gbn.window;
      };
      const auto r = xs.packer->next(buf, eligible);
      if (!r || r->commands == 0) return;
      conn& c = connection_of(x, p, r->destination, r->vc);
      auto [tx, act] = step(c.tx, transport::sender_event<16>{transport::sender_input::send, {}},
                            now_, cfg_.gbn);
      c.tx = tx;
      if (!act.assigned) return;  // cannot happen: eligibility checked the window
      xs.kept[key(p, r->destination, vc_key(r->vc))][act.psn_assigned.value] =
          stored_pdu{std::vector<std::uint8_t>(buf.begin(), buf.begin() + r->bytes)};
      ps.queue.push_back({r->destination, r->vc, false, act.psn_assigned.value});
      ++stats_.pdus;
      arm_tick(x);
    }
    transmit(x, p);
  }

  void transmit(std::uint16_t x, std::uint8_t p) {
    xpu_state& xs = xpus_[x];
    port_state& ps = xs.ports[p];
    while (!ps.queue.empty()) {
      const pending_tx t = ps.queue.front();
      ps.queue.pop_front();
      const std::uint8_t vk = vc_key(t.vc);
      conn& c = connection_of(x, p, t.peer, t.vc);
      const stored_pdu* pdu = nullptr;
      if (!t.ack_only) {
        auto& kept = xs.kept[key(p, t.peer, vk)];
        const auto it = kept.find(t.psn);
        if (it == kept.end()) continue;  // released meanwhile (an ACK overtook the resend)
        pdu = &it->second;
      }
      wire::reliability_header rh{};
      rh.xpuid = x;
      rh.vc = t.vc;
      rh.npsn = t.ack_only ? c.tx.next.value : t.psn;
      const auto [op, apsn] = transport::pending_ack(c.rx);
      if (t.ack_only && op == wire::rh_op::none) continue;  // already carried by a data PDU
      rh.op = static_cast<std::uint8_t>(op);
      rh.apsn = apsn.value;
      if (op != wire::rh_op::none) {
        c.rx =
            step(c.rx, transport::receiver_event<16>{transport::receiver_input::ack_sent, {}, true},
                 now_, cfg_.gbn)
                .first;
        if (op == wire::rh_op::nack) ++stats_.nacks;
        if (op == wire::rh_op::ack) ++stats_.acks;
      }
      wire::frame_params fp;
      fp.kind = cfg_.encap;
      fp.src_xpu = x;
      fp.dst_xpu = t.peer;
      fp.tc = cfg_.encap == wire::encap::afh1 ? 0 : t.vc;
      auto frame =
          std::make_shared<std::vector<std::uint8_t>>((pdu ? pdu->commands.size() : 0) + 128);
      // A stand-alone ACK/NACK is an RH-only PDU: it takes no PSN of its own, and a receiver
      // reads only its op and apsn (its npsn is the sender's next, for information).
      const auto r = wire::emit_sue_frame(
          fp, rh,
          pdu ? std::span<const std::uint8_t>(pdu->commands) : std::span<const std::uint8_t>{},
          *frame);
      if (!r) continue;
      frame->resize(r.value);
      ++stats_.frames;
      ++stats_.frames_per_port[p];
      const std::uint64_t start = std::max(now_, ps.busy_until);
      ps.busy_until = start + serialise(frame->size());
      ps.transmitting = true;
      schedule(ps.busy_until + delay_of(x, p), ev_at_switch{x, p, ps.epoch, frame});
      schedule(ps.busy_until, ev_port_free{x, p});
      return;
    }
  }

  void handle(const ev_port_free& e) {
    xpus_[e.xpu].ports[e.port].transmitting = false;
    pump(e.xpu, e.port);
  }

  // ---- the switch ----------------------------------------------------------------------
  void handle(const ev_at_switch& e) {
    if (e.epoch != xpus_[e.from].ports[e.port].epoch) {
      ++stats_.dropped_link_down;
      return;
    }
    if (sink_) sink_(now_, *e.bytes);
    // The destination is in the frame; the harness knows it from the encapsulation's
    // addressing, read back with the dissection engine like any receiver would.
    dissect::dissect_frame(*tree_, *e.bytes, dissect::link_ethernet, no_commands());
    const auto* dst = tree_->find(dst_field());
    if (!dst) return;
    // IPv4 and the XPU-id fields hold the id in their low bits; IPv6 in its last four bytes.
    const std::uint64_t id = dst->raw ? wire::load_be32(dst->raw + 12) : dst->value;
    const auto to = static_cast<std::uint16_t>(id & 0xFFFF);
    if (to >= cfg_.xpus) return;
    port_state& out = xpus_[to].ports[e.port];  // same plane
    if (!out.up) {
      ++stats_.dropped_link_down;
      return;
    }
    if (chance(cfg_.loss)) {
      ++stats_.lost;
      return;
    }
    auto bytes = e.bytes;
    if (chance(cfg_.corrupt)) {
      bytes = std::make_shared<std::vector<std::uint8_t>>(*e.bytes);
      const std::size_t bit =
          std::uniform_int_distribution<std::size_t>(0, bytes->size() * 8 - 1)(rng_);
      (*bytes)[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      ++stats_.corrupted;
    }
    // The egress port serialises frames in the order they leave the switch: FIFO per plane
    // and destination, and frames converging on one XPU queue behind each other (incast).
    std::uint64_t& egress = egress_busy_[to * max_ports + e.port];
    egress = std::max(now_ + cfg_.switch_delay, egress) + serialise(bytes->size());
    std::uint64_t at = egress + delay_of(to, e.port);
    if (chance(cfg_.reorder)) {
      at += cfg_.reorder_delay;
      ++stats_.reordered;
    }
    schedule(at, ev_at_xpu{to, e.port, out.epoch, bytes});
    if (chance(cfg_.duplicate)) {
      ++stats_.duplicated;
      schedule(at + 1, ev_at_xpu{to, e.port, out.epoch, bytes});
    }
  }

  std::string_view dst_field() const {
    switch (cfg_.encap) {
      case wire::encap::udp4:
        return "ip.dst";
      case wire::encap::udp6:
        return "ipv6.dst";
      case wire::encap::afh1:
      case wire::encap::afh1_vlan:
        return "afh1.dst_xpu";
      case wire::encap::afh1_shim:
      case wire::encap::afh1_vlan_shim:
        return "afh1.shim.dst_xpu";
      case wire::encap::afh2:
        return "afh2.dst_xpu";
      default:
        return "afh2c.dst_xpu";
    }
  }
  static dissect::options no_commands() {
    dissect::options o;
    o.profile = nullptr;
    return o;
  }

  // ---- receiving -----------------------------------------------------------------------
  void handle(const ev_at_xpu& e) {
    xpu_state& xs = xpus_[e.to];
    if (e.epoch != xs.ports[e.port].epoch || !xs.ports[e.port].up) {
      ++stats_.dropped_link_down;
      return;
    }
    dissect::dissect_frame(*tree_, *e.bytes, dissect::link_ethernet, no_commands());
    const auto* status = tree_->find("sue.rcrc.status");
    const auto* rh_layer = tree_->find_layer("sue.rh");
    if (!status || !rh_layer || status->value != 0) return;  // the R-CRC failed: dropped
    const auto rh = wire::decode<wire::reliability_header>(
        std::span<const std::uint8_t>(*e.bytes).subspan(rh_layer->offset));
    if (!rh) return;
    const auto* len = tree_->find("sue.payload.len");
    const std::size_t payload_len = len ? len->value : 0;
    const std::uint16_t peer = rh->xpuid;
    const std::uint8_t vc = rh->vc;
    if (peer >= cfg_.xpus || vc >= cfg_.vcs) return;
    conn& c = connection_of(e.to, e.port, peer, vc);
    // The reverse direction's acknowledgement, carried in this RH.
    if (rh->op == 0 || rh->op == 1) {
      const auto in = rh->op == 0 ? transport::sender_input::ack : transport::sender_input::nack;
      auto [tx, act] =
          step(c.tx, transport::sender_event<16>{in, transport::psn<16>(rh->apsn)}, now_, cfg_.gbn);
      c.tx = tx;
      apply_sender(e.to, e.port, peer, vc, act);
    }
    if (payload_len == 0) return;  // an RH-only ACK/NACK: no PDU of its own
    auto [rx, ract] = step(c.rx,
                           transport::receiver_event<16>{transport::receiver_input::pdu,
                                                         transport::psn<16>(rh->npsn), true},
                           now_, cfg_.gbn);
    c.rx = rx;
    if (ract.deliver)
      deliver(e.to,
              std::span<const std::uint8_t>(*e.bytes).subspan(rh_layer->offset + 8, payload_len));
    if (ract.ack_now) queue_ack(e.to, e.port, peer, vc);
    arm_tick(e.to);
  }

  void deliver(std::uint16_t to, std::span<const std::uint8_t> commands) {
    pack::unpacker u(pack::default_profile, commands);
    for (pack::command_view cv; u.next(cv);) {
      const std::uint64_t addr = wire::get_bits(cv.control.data(), 32, 64);
      const auto src = static_cast<std::uint16_t>(addr >> 48);
      const auto vc = static_cast<std::uint8_t>((addr >> 40) & 0xFF);
      const std::uint64_t seq = addr & 0xFFFFFFFFFFull;
      auto& seen = delivered_[stream(src, to, vc)];
      if (seq < seen.size() && seen[seq]) {
        ++stats_.duplicates;
        continue;
      }
      if (seq >= seen.size()) seen.resize(seq + 1, false);
      seen[seq] = true;
      auto& next = next_delivery_[stream(src, to, vc)];
      // Strict mode keeps order per {source, destination, VC}; unordered mode does not
      // promise it across ports (R2 1.2), only per connection, which go-back-N guarantees.
      if (seq != next && !cfg_.unordered) ++stats_.out_of_order;
      while (next < seen.size() && seen[next]) ++next;
      ++stats_.delivered;
      stats_.delivered_bytes += cv.size();
      stats_.last_delivery = now_;
      if (delivery_sink_) {
        const auto& offered = offered_at_[stream(src, to, vc)];
        delivery_sink_(delivery{seq < offered.size() ? offered[seq] : 0, now_, src, to, vc, seq});
      }
    }
  }

  void apply_sender(std::uint16_t x, std::uint8_t p, std::uint16_t peer, std::uint8_t vc,
                    const transport::sender_actions<16>& a) {
    xpu_state& xs = xpus_[x];
    auto& kept = xs.kept[key(p, peer, vc_key(vc))];
    for (std::uint32_t i = 0; i < a.released; ++i) kept.erase((a.released_from + i).value);
    if (a.resend) {
      stats_.retransmissions += a.resend;
      for (std::uint32_t i = 0; i < a.resend; ++i)
        xs.ports[p].queue.push_back({peer, vc, false, (a.resend_from + i).value});
    }
    if (a.unreachable) {
      ++stats_.unreachable;
      start_failover(x, p, peer, vc);
    }
    pump(x, p);
  }

  void queue_ack(std::uint16_t x, std::uint8_t p, std::uint16_t peer, std::uint8_t vc) {
    auto& q = xpus_[x].ports[p].queue;
    q.push_front({peer, vc, true, 0});
    pump(x, p);
  }

  // ---- timers --------------------------------------------------------------------------
  void arm_tick(std::uint16_t x) {
    // One tick event per XPU at its earliest deadline; a stale one finds nothing to do.
    std::uint64_t t = 0;
    xpu_state& xs = xpus_[x];
    for (std::uint8_t p = 0; p < cfg_.ports; ++p)
      for (std::uint16_t peer = 0; peer < cfg_.xpus; ++peer)
        for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc) {
          const conn& c = connection_of(x, p, peer, vc);
          const std::uint64_t d = transport::next_deadline(c.tx, c.rx);
          if (d && (t == 0 || d < t)) t = d;
        }
    if (t && (xs.tick_at == 0 || t < xs.tick_at || xs.tick_at <= now_)) {
      // Never at the present instant again: a deadline that is due has been handled.
      xs.tick_at = std::max(t, now_ + 1);
      schedule(xs.tick_at, ev_tick{x});
    }
  }

  void handle(const ev_tick& e) {
    xpu_state& xs = xpus_[e.xpu];
    if (xs.tick_at != now_) return;
    xs.tick_at = 0;
    for (std::uint8_t p = 0; p < cfg_.ports; ++p)
      for (std::uint16_t peer = 0; peer < cfg_.xpus; ++peer)
        for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc) {
          if (cfg_.keys == transport::keying::port_peer && vc) continue;
          conn& c = connection_of(e.xpu, p, peer, vc);
          if (transport::next_deadline(c.tx, c.rx) == 0 ||
              transport::next_deadline(c.tx, c.rx) > now_)
            continue;
          auto [tx, act] = step(
              c.tx, transport::sender_event<16>{transport::sender_input::tick, {}}, now_, cfg_.gbn);
          c.tx = tx;
          auto [rx, ract] =
              step(c.rx, transport::receiver_event<16>{transport::receiver_input::tick, {}, true},
                   now_, cfg_.gbn);
          c.rx = rx;
          if (ract.ack_now) queue_ack(e.xpu, p, peer, vc);
          apply_sender(e.xpu, p, peer, vc, act);
        }
    arm_tick(e.xpu);
  }

  // ---- link status and failover (R2 3.5.8) ---------------------------------------------
  bool moving_stream(std::uint16_t x, std::uint16_t peer, std::uint8_t vc) const {
    for (std::uint8_t p = 0; p < cfg_.ports; ++p)
      if (xpus_[x].failing.count(key(p, peer, vc_key(vc)))) return true;
    return false;
  }

  void handle(const ev_link& e) {
    const link_event& l = e.l;
    if (l.xpu >= cfg_.xpus || l.port >= cfg_.ports) return;
    port_state& ps = xpus_[l.xpu].ports[l.port];
    ps.up = l.up;
    if (l.up) {
      // Work stranded while no port was usable restarts now.
      for (std::uint8_t p = 0; p < cfg_.ports; ++p)
        for (std::uint16_t peer = 0; peer < cfg_.xpus; ++peer)
          for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc)
            if (connection_of(l.xpu, p, peer, vc).tx.in_flight() > 0 &&
                (!xpus_[l.xpu].ports[p].up || connection_of(l.xpu, p, peer, vc).tx.unreachable))
              start_failover(l.xpu, p, peer, vc);
      for (std::uint8_t p = 0; p < cfg_.ports; ++p) pump(l.xpu, p);
      return;
    }
    ++ps.epoch;  // everything on this link is lost
    ps.queue.clear();
    ps.transmitting = false;
    // Link down: every connection of this port moves its outstanding work now.
    for (std::uint16_t peer = 0; peer < cfg_.xpus; ++peer)
      for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc)
        if (connection_of(l.xpu, l.port, peer, vc).tx.in_flight() > 0)
          start_failover(l.xpu, l.port, peer, vc);
  }

  // Moves a connection's outstanding work to another usable port (the same one, once it is up
  // again, when there is no other). Without a usable port the work waits for a link to come up.
  void start_failover(std::uint16_t x, std::uint8_t from, std::uint16_t peer, std::uint8_t vc) {
    xpu_state& xs = xpus_[x];
    const std::uint32_t k = key(from, peer, vc_key(vc));
    if (xs.failing.count(k)) return;  // already on its way
    for (std::uint8_t i = 1; i <= cfg_.ports; ++i) {
      const auto to = static_cast<std::uint8_t>((from + i) % cfg_.ports);
      if (!xs.ports[to].up) continue;
      // Ask the peer, over the surviving plane (a management exchange, R2 3.1), how far it got
      // on the failed connection: one round trip.
      xs.failing.insert(k);
      schedule(now_ + 2 * (delay_of(x, to) + delay_of(peer, to) + cfg_.switch_delay),
               ev_failover{x, from, to, peer, vc});
      return;
    }
  }

  void handle(const ev_failover& e) {
    xpu_state& xs = xpus_[e.xpu];
    conn& c = connection_of(e.xpu, e.from, e.peer, e.vc);
    conn& far = connection_of(e.peer, e.from, e.xpu, e.vc);
    // What the peer delivered on the failed connection is done; the rest moves. Reading the
    // peer's expected PSN and restarting both ends happen at one instant, so nothing that
    // arrives late on the old connection can be delivered as well as moved.
    const transport::psn<16> expected = far.rx.expected;
    auto& kept = xs.kept[key(e.from, e.peer, vc_key(e.vc))];
    std::vector<stored_pdu> moving;
    for (transport::psn<16> p = c.tx.una; p != c.tx.next; ++p) {
      const auto it = kept.find(p.value);
      if (it == kept.end()) continue;
      if (!before(p, expected)) moving.push_back(std::move(it->second));
      kept.erase(it);
    }
    // Restart both ends far ahead of anything still in flight: late arrivals are duplicates.
    const transport::psn<16> base = c.tx.next + 2 * cfg_.gbn.window;
    c.tx = transport::gbn_sender<16>{};
    c.tx.next = c.tx.una = base;
    far.rx = transport::gbn_receiver<16>{};
    far.rx.expected = base;
    ++stats_.failovers;
    xs.failing.erase(key(e.from, e.peer, vc_key(e.vc)));
    // The moved PDUs go out, in order, on the new port's connection with new PSNs.
    conn& to = connection_of(e.xpu, e.to, e.peer, e.vc);
    if (!cfg_.unordered) xs.pin[e.peer * max_vcs + e.vc] = e.to;
    for (auto& m : moving) {
      auto [tx, act] = step(to.tx, transport::sender_event<16>{transport::sender_input::send, {}},
                            now_, cfg_.gbn);
      to.tx = tx;
      if (!act.assigned) {
        // The new connection's window is full: hand the commands back to the packer instead.
        requeue(e.xpu, e.peer, e.vc, m.commands);
        continue;
      }
      xs.kept[key(e.to, e.peer, vc_key(e.vc))][act.psn_assigned.value] = std::move(m);
      xs.ports[e.to].queue.push_back({e.peer, e.vc, false, act.psn_assigned.value});
      ++stats_.moved;
    }
    arm_tick(e.xpu);
    for (std::uint8_t p = 0; p < cfg_.ports; ++p) pump(e.xpu, p);
  }

  void requeue(std::uint16_t x, std::uint16_t peer, std::uint8_t vc,
               const std::vector<std::uint8_t>& commands) {
    xpu_state& xs = xpus_[x];
    pack::unpacker u(pack::default_profile, commands);
    for (pack::command_view cv; u.next(cv);) {
      xs.offered.emplace_back(cv.control.begin(), cv.data.end());
      const auto& c = xs.offered.back();
      const std::size_t ctrl = cv.control.size();
      (void)xs.packer->push(
          {.destination = peer,
           .vc = vc,
           .control = std::span<const std::uint8_t>(c.data(), ctrl),
           .data = std::span<const std::uint8_t>(c.data() + ctrl, c.size() - ctrl)});
      ++stats_.moved;
    }
  }

  fabric_config cfg_;
  std::mt19937_64 rng_;
  std::vector<xpu_state> xpus_;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  std::vector<payload> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t seq_ = 0;
  std::uint64_t now_ = 0;
  fabric_stats stats_;
  frame_sink sink_;
  delivery_sink delivery_sink_;
  std::unique_ptr<dissect::tree> tree_ = std::make_unique<dissect::tree>();
  std::array<std::uint64_t, max_xpus * max_ports> egress_busy_{};
  std::map<std::uint32_t, std::uint64_t> next_seq_;
  std::map<std::uint32_t, std::vector<std::uint64_t>> offered_at_;  // per stream, by seq
  std::map<std::uint32_t, std::vector<bool>> delivered_;
  std::map<std::uint32_t, std::uint64_t> next_delivery_;
};

}  // namespace scaleup::sim
