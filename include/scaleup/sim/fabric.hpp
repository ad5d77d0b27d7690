// A fabric: N XPUs (up to 1024, R2 Table 1), each one SUE instance (transport/instance.hpp) with
// 1, 2 or 4 ports (one plane each), on one switch, over links the caller models. Everything an
// XPU's SUE does (queueing, packing, scheduling, the RH and its ACKs, go-back-N, CBFC, LLR,
// failover) is the instance's; the fabric adds what is outside an XPU:
//
//   - the switch: it forwards each frame on the destination the frame carries (read with the
//     same reader as the XPUs'), per plane, through a FIFO egress per port that serialises
//     frames at the port's rate; each of its ports runs the same link layer as an XPU's port
//     (transport/link_port.hpp: LLR, CBFC with credits returned when a frame leaves the switch);
//   - links: a link_model decides each frame's fate on each link (link_model.hpp); the default
//     draws loss, corruption, duplication and reordering from the configuration; the link
//     layer's own messages (LLR ACK/NACK, credit updates) travel beside the frames, in the
//     link's delay;
//   - time: next_event_time() and advance(now) let an outside event loop drive the fabric;
//     run(until) is that loop;
//   - link status: a link going down tells its XPU (its instance fails over); one coming up
//     tells every XPU (the plane reaches that XPU again, R2 3.5.8);
//   - observation: the frames the switch receives (on_wire), every command delivered
//     (on_delivery), and a trace of every transmission, retransmission, ACK, NACK, drop,
//     failover and peer declared unreachable (on_trace).
//
// Delivery is checked by the fabric: each PDU in flight carries a tag naming the commands packed
// into it (the simulation's bookkeeping, like an ns-3 packet tag), and the commands an XPU gets
// are counted against it: exactly once, and in order per {source, destination, VC} in strict
// mode.
//
// Scale: an instance is made for an XPU when the run first uses it, and holds state only for the
// peers and connections it uses (heap-grown tables); the switch likewise makes a port's state on
// its first frame. Unlike the machines it drives, the fabric opts into the heap: it is
// simulation scaffolding, included only by those who run simulations.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"
#include "scaleup/sim/buffer_pool.hpp"
#include "scaleup/sim/event_queue.hpp"
#include "scaleup/sim/index_map.hpp"
#include "scaleup/sim/link_model.hpp"
#include "scaleup/sim/read_pdu.hpp"
#include "scaleup/sim/ring.hpp"
#include "scaleup/sim/slot_pool.hpp"
#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/transport/instance.hpp"
#include "scaleup/transport/link_port.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/transport/sue_frame.hpp"
#include "scaleup/wire/frame.hpp"

namespace scaleup::sim {

// A link going down or coming back at a known time (link status per port, R2 3.5.8).
struct link_event {
  std::uint64_t at = 0;  // ns
  std::uint16_t xpu = 0;
  std::uint8_t port = 0;
  bool up = false;
};

// An instance that breaks one conformance rule once (transport::misbehaviour): the fabric gives
// it to XPU 0.
using misbehaviour = transport::misbehaviour;

// The rule id each misbehaviour breaks (dissect/conformance.hpp's ids), for `gen session
// --misbehave RULE`.
inline constexpr std::array<std::pair<misbehaviour, std::string_view>, 4> misbehaviour_rules{{
    {misbehaviour::ack_unsent, "ack.unsent"},
    {misbehaviour::ack_monotonic, "ack.monotonic"},
    {misbehaviour::nack_once, "nack.once"},
    {misbehaviour::gbn_resend, "gbn.resend"},
}};

struct fabric_config {
  std::uint16_t xpus = 4;          // 2 to 1024 (R2 Table 1; the RH's xpuid is 10 bits)
  std::uint8_t ports = 1;          // per XPU: 1, 2 or 4 (R2 Table 1), one plane each
  bool unordered = false;          // spread PDUs over ports (R2 4.4); strict pins a stream
  std::uint8_t vcs = 2;            // requests on VC0, responses on VC1 (R2 3.2.2)
  double instance_gbps = 800;      // per SUE instance, split over its ports (R2 Table 6)
  std::uint64_t link_delay = 125;  // ns per link: SUE 100 + 5 m of fibre (R2 Appendix A)
  // Per-link overrides, one way, indexed xpu * 4 + port (0 or missing: link_delay), for
  // fabrics whose cables differ (R2 Appendix A: 3 m of twinax to 10 m of fibre).
  std::vector<std::uint64_t> link_delays;
  std::uint64_t switch_delay = 250;  // ns (R2 Appendix A)
  // The default link model (probabilistic_links): per frame on the switch's way out. Ignored
  // when the caller supplies a model.
  double loss = 0, corrupt = 0, duplicate = 0, reorder = 0;
  std::uint64_t reorder_delay = 400;  // ns added to a reordered frame
  std::vector<link_event> link_events;
  std::uint64_t seed = 1;
  wire::encap encap = wire::encap::udp4;
  transport::gbn_config gbn{};
  transport::keying keys = transport::keying::port_peer_vc;
  // The traffic class each frame carries (VLAN PCP, DSCP, AFH Gen 2 / shim TC), from the PFC map
  // (transport/pfc.hpp, R2 3.5.6): a data PDU its VC's priority, a stand-alone ACK/NACK (an RH
  // only) the acknowledgements' own, so requests never block acknowledgements. AFH Gen 1 without
  // a tag carries none.
  transport::pfc_config priorities{};
  // The commands' framing: offers are checked against it, receivers walk payloads with it.
  const pack::profile* profile = &pack::default_profile;
  std::size_t pack_limit = pack::sue_pack_limit;     // payload bytes per PDU (R2 3.3)
  std::array<std::uint16_t, 4> weights{1, 1, 1, 1};  // WRR across VCs (R2 4.2 step 3)
  // Credit-based flow control on every link (R2 3.5.7): the credits (64-byte cells) each
  // receiver grants per VC and for acknowledgements; 0: off. Returned by the receiver: the
  // switch as a frame leaves it, an XPU as it takes a frame.
  std::uint32_t cbfc_credits = 0;
  bool llr = false;  // Link Layer Retransmission on every link (R2 3.5.5)
  // A peer unreachable on every plane this long has its commands failed (the instance's).
  std::uint64_t unreachable_after = transport::instance_config{}.unreachable_after;
  // Failed commands a stream remembers, since a frame on its way may still bring one (its first
  // delivery, not a duplicate), before the fabric forgets those no frame can bring any more.
  std::size_t failed_memory = 4096;
  misbehaviour misbehave = misbehaviour::none;  // once, by XPU 0

  // What the library refuses: Table 1's 1, 2 or 4 ports; SUE Lite (no RH) for a fabric of PDUs;
  // CBFC credits that cannot carry the largest frame, and CBFC over links that lose or
  // duplicate frames without LLR (credits a lost frame took never come back); LLR over links
  // that reorder frames.
  // (Unordered mode with one port runs strict: there is nothing to spread over.)
  wire::error check() const noexcept;
  // The fewest CBFC credits (64-byte cells, transport/cbfc.hpp) per VC that carry the largest
  // frame of this encapsulation and pack limit: with fewer it would never be sent.
  std::uint32_t least_cbfc_credits() const noexcept {
    const std::size_t payload =
        std::clamp<std::size_t>(pack_limit, pack::max_command_bytes, wire::sue_max_payload);
    return static_cast<std::uint32_t>((wire::header_size(encap) + wire::pdu_size(payload) + 63) /
                                      64);
  }
};

struct fabric_stats {
  std::uint64_t offered = 0, delivered = 0, duplicates = 0, out_of_order = 0;
  std::array<std::uint64_t, 4> frames_per_port{};
  std::uint64_t frames = 0, pdus = 0, retransmissions = 0, nacks = 0, acks = 0;
  std::uint64_t lost = 0, corrupted = 0, duplicated = 0, reordered = 0, dropped_link_down = 0;
  std::uint64_t failovers = 0, moved = 0, unreachable = 0;
  std::uint64_t bad_rcrc = 0;         // frames a receiver dropped: R-CRC bad or missing, not SUE
  std::uint64_t misaddressed = 0;     // frames a switch could not route or an XPU was not meant
  std::uint64_t mismatched = 0;       // delivered PDUs whose commands differ from their tag: 0
  std::uint64_t delivered_bytes = 0;  // command bytes handed to XPUs
  std::uint64_t first_offer = 0, last_delivery = 0;
  std::uint64_t failed = 0;  // commands an instance failed (peer unreachable)
  // Failed commands that arrived after all, after their failure (their PDU was on its way when
  // the sender gave up): counted in `delivered` too. (One that arrived before it failed, only
  // its acknowledgement lost, is counted in both without being told apart.)
  std::uint64_t failed_then_delivered = 0;
  std::uint64_t peers_unreachable = 0;  // times an instance declared a peer unreachable
  std::uint64_t llr_replays = 0;        // frames LLR sent again, every link end
  std::uint64_t llr_dropped = 0;        // frames LLR refused at a receiver (FCS, sequence)
  std::uint64_t llr_links_down = 0;     // links taken down as LLR ran out of replays, either end
  std::uint64_t credit_stalls = 0;      // times a link end waited for CBFC credits
  std::uint64_t control = 0;            // failover requests and replies

  double goodput_gbps() const {
    const std::uint64_t span = last_delivery > first_offer ? last_delivery - first_offer : 0;
    return span ? static_cast<double>(delivered_bytes) * 8.0 / static_cast<double>(span) : 0.0;
  }
};

// One command offered to the fabric: from `src` to `dst` on `vc` at time `at`.
struct offer {
  std::uint64_t at = 0;  // ns; earlier than now() is now
  std::uint16_t src = 0, dst = 0;
  std::uint8_t vc = 0;
  // The fabric's own command, a posted full write (WR_FULL_P) of this many data bytes (1-256)
  // whose tag and address name its stream and sequence, so a capture shows them...
  std::uint16_t data = 64;
  // ...or the caller's: control then data, framed by config().profile (copied at add()).
  wire::bytes command{};
  bool send_now = false;  // close the PDU after this command (R2 4.3 step 2)
};

// One command handed to its destination XPU, reported once (a duplicate is counted, not
// reported): when it was offered and when it arrived, for latency distributions.
struct delivery {
  std::uint64_t offered_at = 0, delivered_at = 0;  // ns
  std::uint16_t src = 0, dst = 0;
  std::uint8_t vc = 0;
  std::uint64_t seq = 0;  // per {src, dst, vc}: 0, 1, 2, ... in offer order
  wire::bytes command{};  // as received: control then data (valid during the call only)
};

enum class trace_kind : std::uint8_t {
  transmit,     // a data PDU's first transmission on its connection
  retransmit,   // a data PDU sent again on its connection (go-back-N)
  ack,          // an RH carrying an ACK went out (piggybacked or stand-alone)
  nack,         // an RH carrying a NACK went out
  drop,         // a frame was lost or refused; `reason` says why
  unreachable,  // a sender hit the retry limit: its peer is unreachable on that port
  failover,     // a connection's outstanding work moved to `to_port`
  link_down,
  link_up,
  peer_unreachable,  // an XPU declared `peer` unreachable on every port: its commands failed
};

enum class drop_reason : std::uint8_t {
  none,
  link_model,    // the link model dropped it (`where`: which link)
  link_down,     // sent into a link that went down, or towards a port that is down
  unroutable,    // the switch found no XPU of the fabric as its destination
  bad_rcrc,      // the receiver's R-CRC check failed (corruption), or no SUE PDU in it
  misaddressed,  // the receiver is not its destination
  duplicate,     // go-back-N: a PSN already delivered (re-ACKed)
  gap,           // go-back-N: a PSN after a missing one (NACKed once per gap)
  llr,           // the link layer refused it: a bad FCS, or out of LLR sequence (replayed)
  partition,     // a partition not allowed for its source
};

struct trace_event {
  trace_kind kind = trace_kind::transmit;
  std::uint64_t at = 0;   // ns
  std::uint16_t xpu = 0;  // the sender; for a drop, the XPU at the link's end or receiving
  std::uint8_t port = 0;
  std::uint16_t peer = 0;  // the other end of the connection (0 when unknown)
  std::uint8_t vc = 0;
  std::uint16_t psn = 0;  // transmit/retransmit: the PDU's PSN; ack/nack: the apsn
  drop_reason reason = drop_reason::none;
  hop where = hop::up;       // drop: the link it happened on (receiver drops: hop::down)
  std::uint8_t to_port = 0;  // failover: where the work went
  std::uint32_t moved = 0;   // failover: PDUs moved
  wire::bytes frame{};       // transmit, retransmit, ack, nack, drop: the frame (during the call)
};

inline wire::error fabric_config::check() const noexcept {
  if (ports != 1 && ports != 2 && ports != 4)
    return wire::error{.code = wire::errc::bad_value,
                       .layer = "sim",
                       .what = "an XPU has 1, 2 or 4 ports (R2 Table 1)",
                       .field = "sue.ports",
                       .value = ports};
  if (encap == wire::encap::lite)
    return wire::error{.code = wire::errc::unsupported,
                       .layer = "sim",
                       .what = "encap lite carries no RH: a fabric of SUE PDUs cannot use it",
                       .field = "sue.encap",
                       .value = static_cast<std::uint64_t>(encap)};
  if (cbfc_credits > 0 && cbfc_credits < least_cbfc_credits())
    return wire::error{.code = wire::errc::bad_value,
                       .layer = "sim",
                       .what = "CBFC credits per VC (64-byte cells) must carry the largest frame",
                       .field = "sue.cbfc",
                       .value = least_cbfc_credits()};
  // A frame the link loses keeps the credits it took (nothing returns them), one it duplicates
  // returns them twice: CBFC on such a link needs LLR, which numbers and replays frames.
  if (cbfc_credits > 0 && !llr && (loss > 0 || duplicate > 0))
    return wire::error{.code = wire::errc::unsupported,
                       .layer = "sim",
                       .what =
                           "CBFC over links that lose or duplicate frames needs LLR: a lost "
                           "frame's credits come back only through LLR's replay",
                       .field = "sue.cbfc"};
  // LLR numbers the frames of one link and replays them in order (R2 3.5.5): a link keeps its
  // frames in order. Over the model's reordering (its frames held back on the way out of the
  // switch), every late frame is a gap, replays never end, commands are failed that arrive
  // after all, and some arrive twice.
  if (llr && reorder > 0)
    return wire::error{.code = wire::errc::unsupported,
                       .layer = "sim",
                       .what =
                           "LLR needs links that keep frames in order: it cannot run over "
                           "links that reorder them",
                       .field = "sue.llr"};
  return {};
}

class fabric {
 public:
  using instance = transport::sue_instance<transport::fabric_sizing>;
  static constexpr std::size_t max_xpus = 1024;  // R2 Table 1; the RH's xpuid has 10 bits
  static constexpr std::size_t max_ports = 4;
  static constexpr std::size_t max_vcs = 4;
  static constexpr std::uint64_t never = ~std::uint64_t{0};
  using frame_sink = std::function<void(std::uint64_t ns, wire::bytes)>;
  // The same with the port the frame came in on: its plane, the switch's (a capture interface).
  using port_frame_sink = std::function<void(std::uint64_t ns, std::uint8_t port, wire::bytes)>;
  using delivery_sink = std::function<void(const delivery&)>;
  using trace_sink = std::function<void(const trace_event&)>;

  // `links`: the caller's link model (it must outlive the fabric); none: probabilistic_links
  // over the configuration's probabilities.
  explicit fabric(fabric_config cfg, link_model* links = nullptr) : cfg_(std::move(cfg)) {
    if (cfg_.ports == 1) cfg_.unordered = false;  // nothing to spread over (R2 4.4)
    error_ = cfg_.check();
    cfg_.xpus = std::clamp<std::uint16_t>(cfg_.xpus, 2, max_xpus);
    cfg_.vcs = std::clamp<std::uint8_t>(cfg_.vcs, 1, max_vcs);
    cfg_.pack_limit =
        std::clamp<std::size_t>(cfg_.pack_limit, pack::max_command_bytes, wire::sue_max_payload);
    if (cfg_.profile == nullptr) cfg_.profile = &pack::default_profile;
    if (links == nullptr) {
      own_links_ = std::make_unique<probabilistic_links>(
          cfg_.loss, cfg_.corrupt, cfg_.duplicate, cfg_.reorder, cfg_.reorder_delay, cfg_.seed);
      links = own_links_.get();
      perfect_links_ =
          !(cfg_.loss > 0) && !(cfg_.corrupt > 0) && !(cfg_.duplicate > 0) && !(cfg_.reorder > 0);
    }
    links_ = links;
    icfg_ = instance_config_of(cfg_);
    if (!error_) error_ = instance::check(icfg_);
    if (error_) return;
    lcfg_ = icfg_.link;
    xpus_.resize(cfg_.xpus);
    switch_.resize(std::size_t{cfg_.xpus} * max_ports);
    port_ns_per_byte_ = 8.0 * cfg_.ports / cfg_.instance_gbps;
    for (std::size_t i = 0; i < cfg_.link_events.size(); ++i)
      schedule(cfg_.link_events[i].at, ev::link, 0, 0, static_cast<std::uint32_t>(i));
  }

  // Its instances and switch ports keep references into it: it stays where it was made.
  fabric(const fabric&) = delete;
  fabric& operator=(const fabric&) = delete;

  // Why the fabric refuses to run (1, 2 or 4 ports, ...): every add() then returns it.
  const wire::error& config_error() const noexcept { return error_; }

  // Every frame as the switch receives it (retransmissions included; with LLR, the frames the
  // switch's link layer accepted), for a capture.
  void on_wire(port_frame_sink s) { wire_sink_ = std::move(s); }
  void on_wire(frame_sink s) {
    if (!s) return on_wire(port_frame_sink());
    on_wire([s = std::move(s)](std::uint64_t ns, std::uint8_t, wire::bytes b) { s(ns, b); });
  }
  // Every command as it is delivered.
  void on_delivery(delivery_sink s) { delivery_sink_ = std::move(s); }
  // Every transmission, retransmission, ACK, NACK, drop, failover and link change.
  void on_trace(trace_sink s) { trace_sink_ = std::move(s); }

  // Queues a command for time o.at. Refused (an error, nothing queued): an XPU or VC the
  // fabric does not have, src == dst, or a command the profile does not frame.
  wire::error add(const offer& o) {
    if (error_) return error_;
    if (o.src >= cfg_.xpus || o.dst >= cfg_.xpus || o.src == o.dst || o.vc >= cfg_.vcs)
      return wire::error{.code = wire::errc::value_too_big,
                         .layer = "sim",
                         .what = o.vc >= cfg_.vcs ? "VC out of range"
                                 : o.src == o.dst ? "source and destination are one XPU"
                                                  : "XPU out of range",
                         .value = o.vc >= cfg_.vcs ? std::uint64_t{o.vc} : std::max(o.src, o.dst)};
    pending_offer p{o.src, o.dst, o.vc, o.send_now, 0, none};
    if (o.command.empty()) {
      if (o.data < 1 || o.data > pack::max_data_bytes)
        return wire::error{.code = wire::errc::bad_length,
                           .layer = "sim",
                           .what = "write data must be 1 to 256 bytes",
                           .field = "sue.cmd.data_len",
                           .value = o.data};
      p.size = static_cast<std::uint16_t>(default_control + o.data);
    } else {
      // An unknown type frames as its first byte: check_command then names the type.
      const std::size_t ctrl = std::max<std::size_t>(
          cfg_.profile->framing(o.command[0]) & pack::profile::control_mask, 1);
      const wire::bytes control = o.command.first(std::min(ctrl, o.command.size()));
      const wire::bytes data = o.command.subspan(control.size());
      if (const wire::error e = pack::check_command(*cfg_.profile, control, data)) return e;
      p.size = static_cast<std::uint16_t>(o.command.size());
      p.slot = bytes_.take(p.size);
      pack::write_checked_command(control, data, bytes_.data(p.slot));
    }
    if (p.size > cfg_.pack_limit) {
      if (p.slot != none) bytes_.give(p.slot);
      return wire::error{.code = wire::errc::value_too_big,
                         .layer = "sim",
                         .needed = static_cast<std::uint32_t>(cfg_.pack_limit),
                         .available = p.size,
                         .what = "command larger than the packing limit"};
    }
    offer_queue_.push(event{std::max(o.at, now_), offers_.add(p), 0, 0, ev::offer});
    return {};
  }

  // A frame a link model took (link_verdict::fate::take), arriving at XPU `xpu`'s port `port`
  // at time `at` (not before now()) with the tag it left with: the caller's network carried it.
  void receive_frame(std::uint16_t xpu, std::uint8_t port, wire::bytes frame, const pdu_tag& tag,
                     std::uint64_t at) {
    if (error_ || xpu >= cfg_.xpus || port >= cfg_.ports) return;
    const std::uint32_t f = frames_.take(frame.size());
    std::copy(frame.begin(), frame.end(), frames_.data(f));
    tag_of(f) = frame_tag{};
    tag_of(f).pdu = tag;
    tag_of(f).to = xpu;
    tag_of(f).port = port;
    tag_of(f).epoch = xpus_[xpu].ports[port].epoch;
    schedule(std::max(at, now_), ev::at_xpu, xpu, port, f);
  }

  // The earliest time something happens (never: nothing is waiting).
  std::uint64_t next_event_time() const {
    return std::min(events_.next_time(), offer_queue_.next_time());
  }
  // Runs everything due at or before `t`, then sets the clock to `t`: for an outside event
  // loop, which calls it at next_event_time() (or later) and adds offers and frames between.
  void advance(std::uint64_t t) {
    process(t);
    if (t != never && t > now_) now_ = t;
  }
  // Runs until nothing is left to do (or `until`); the clock stays at the last event run.
  const fabric_stats& run(std::uint64_t until = never) {
    process(until);
    return stats();
  }

  const fabric_stats& stats() const {
    gather_link_counts();
    return stats_;
  }
  std::uint64_t now() const { return now_; }
  const fabric_config& config() const { return cfg_; }
  // The instance of XPU x, if the run has made it.
  const instance* xpu(std::uint16_t x) const {
    return x < xpus_.size() ? xpus_[x].sue.get() : nullptr;
  }
  // What the run holds: connections (every instance's) and streams made, buffers in use (every
  // instance's and the fabric's own).
  std::size_t connections() const {
    std::size_t n = 0;
    for (const auto& x : xpus_)
      if (x.sue) n += x.sue->connections();
    return n;
  }
  std::size_t streams() const { return streams_.size(); }
  // Failed commands remembered in case one still arrives (every stream's).
  std::size_t failed_remembered() const {
    std::size_t n = 0;
    for (const auto& s : streams_) n += s.failed_unseen.size();
    return n;
  }
  std::size_t buffers_in_use() const {
    std::size_t n = frames_.in_use() + bytes_.in_use();
    for (const auto& x : xpus_)
      if (x.sue) n += x.sue->buffers_in_use();
    return n;
  }
  // Bytes of state: the instances', the switch ports', the streams'.
  std::size_t memory() const {
    std::size_t n = sizeof(*this) + xpus_.capacity() * sizeof(xpu_state) +
                    switch_.capacity() * sizeof(std::unique_ptr<switch_port>) +
                    streams_.capacity() * sizeof(stream_state);
    for (const auto& x : xpus_)
      if (x.sue) n += x.sue->memory();
    for (const auto& s : switch_)
      if (s) n += sizeof(switch_port) + s->link.memory();
    for (const auto& s : streams_)
      n += s.entries.size() * sizeof(command_entry) +
           s.failed_unseen.size() * (sizeof(std::pair<const std::uint64_t, command_entry>) + 32);
    return n;
  }

 private:
  static constexpr std::uint32_t none = 0xFFFFFFFFu;
  static constexpr std::size_t default_control = 12;  // pack::cmd_write
  using link_t = transport::link_port<transport::fabric_sizing::replay_frames,
                                      transport::fabric_sizing::replay_bytes, pack::heap_storage>;

  static transport::instance_config instance_config_of(const fabric_config& c) {
    transport::instance_config i;
    i.ports = c.ports;
    i.vcs = c.vcs;
    i.unordered = c.unordered;
    i.frame.kind = c.encap;
    i.profile = c.profile;
    i.pack_limit = c.pack_limit;
    i.weights = c.weights;
    i.gbn = c.gbn;
    i.keys = c.keys;
    i.priorities = c.priorities;
    i.unreachable_after = c.unreachable_after;
    i.link = transport::link_config_of(c.llr, c.cbfc_credits);
    i.link.pfc = c.priorities;
    // CBFC's refresh repairs a lost credit update (R2 3.5.7). Here link messages are never lost
    // (only frames cross the link model; a link going down resets both ends, which advertise
    // afresh): a refresh would repair nothing, and its timers would keep idle links busy, so
    // that a run never ended.
    i.link.cbfc_rx.refresh = 0;
    return i;
  }

  // ---- events ----------------------------------------------------------------------------
  enum class ev : std::uint8_t {
    offer,      // a command's time came
    port_free,  // an XPU port finished sending: it may send the next frame
    at_switch,  // a frame reaches the switch
    at_xpu,     // a frame reaches an XPU
    xpu_timer,  // an instance's deadline
    sw_timer,   // a switch port's link layer deadline
    to_switch,  // a link message reaches a switch port
    to_xpu,     // a link message reaches an XPU port
    link,       // a link event
  };
  struct event {
    std::uint64_t at;
    std::uint32_t ref;  // offer, frame, link event or message, by kind
    std::uint16_t xpu;
    std::uint8_t port;
    ev kind;
  };

  void schedule(std::uint64_t at, ev kind, std::uint16_t xpu, std::uint8_t port,
                std::uint32_t ref) {
    events_.push(event{at, ref, xpu, port, kind});
  }

  // Offers have their own queue and go first among events of one time: the order of a run
  // is then the same whether the caller adds its offers upfront or as their time comes.
  void process(std::uint64_t until) {
    for (;;) {
      event e{};
      const std::uint64_t t_offer = offer_queue_.empty() ? never : offer_queue_.next_time();
      if (t_offer == 0 || !events_.take_until(std::min(until, t_offer - 1), e)) {
        if (t_offer > until || t_offer == never) break;
        e = offer_queue_.pop();
      }
      now_ = e.at;
      switch (e.kind) {
        case ev::offer:
          on_offer(e.ref);
          break;
        case ev::port_free:
          xpus_[e.xpu].ports[e.port].free_pending = false;
          kick(e.xpu);
          break;
        case ev::at_switch:
          at_switch(e.ref);
          break;
        case ev::at_xpu:
          at_xpu(e.ref);
          break;
        case ev::xpu_timer:
          if (xpus_[e.xpu].timer_at == e.at) {
            xpus_[e.xpu].timer_at = never;
            step(e.xpu, transport::instance_event::tick());
          }
          break;
        case ev::sw_timer:
          if (switch_port* s = switch_[e.ref].get(); s && s->timer_at == e.at) {
            s->timer_at = never;
            s->link.tick(now_);
            switch_ran(e.ref);
          }
          break;
        case ev::to_switch: {
          const message m = messages_[e.ref];
          messages_.remove(e.ref);
          if (switch_port* s = port_of_switch(m.x, m.p)) {
            if (m.epoch == xpus_[m.x].ports[m.p].epoch) s->link.message(m.msg, now_);
            switch_ran(index_of(m.x, m.p));
          }
          break;
        }
        case ev::to_xpu: {
          const message m = messages_[e.ref];
          messages_.remove(e.ref);
          if (m.epoch == xpus_[m.x].ports[m.p].epoch)
            step(m.x, transport::instance_event::message_in(m.p, m.msg));
          break;
        }
        case ev::link:
          on_link(cfg_.link_events[e.ref]);
          break;
      }
    }
  }

  // What the link ends count themselves (CBFC's credit stalls), gathered when asked for: every
  // XPU port's and every switch port's. Only CBFC counts stalls; an outside event loop calls
  // advance() once per event time, and a walk over every link end each time cost more than
  // the events of a large fabric.
  void gather_link_counts() const {
    if (!lcfg_.cbfc) return;
    std::uint64_t stalls = 0;
    for (const auto& x : xpus_)
      if (x.sue)
        for (std::uint8_t p = 0; p < cfg_.ports; ++p)
          stalls += x.sue->link(p).counters().credit_stalls;
    for (const auto& s : switch_)
      if (s) stalls += s->link.counters().credit_stalls;
    stats_.credit_stalls = stalls;
  }

  // ---- state -----------------------------------------------------------------------------
  // A frame in flight, beside its bytes: where it goes, what it carries, what its link layer
  // carries beside it, and the switch's reading of it (kept for the receiver, unless the way
  // down changes the bytes).
  struct frame_tag {
    pdu_tag pdu{};
    std::uint64_t epoch = 0;  // of the link it is on
    std::uint16_t from = 0, to = 0;
    std::uint8_t port = 0;
    bool damaged = false;     // the link model flipped bits of it on its last link
    bool read_valid = false;  // `read` is a reading of the bytes as they are now
    transport::link_info link{};
    transport::sue_frame read{};
  };
  struct pending_offer {
    std::uint16_t src, dst;
    std::uint8_t vc;
    bool send_now;
    std::uint16_t size;  // command bytes
    std::uint32_t slot;  // the caller's command bytes; none: the fabric's write
  };
  // A command of a stream from its offer to its delivery (or failure).
  struct command_entry {
    std::uint64_t offered_at = 0;
    std::uint16_t size = 0;
    bool delivered = false;
    bool failed = false;
    bool refused = false;  // failed before the instance took it: no frame ever carries it
  };
  struct stream_state {
    std::uint16_t src = 0, dst = 0;
    std::uint8_t vc = 0;
    std::uint64_t base = 0;  // the oldest command not yet delivered (entries' front)
    std::uint64_t next = 0;  // the next command to be offered
    // Commands the instance refused for good (its peer declared unreachable): the instance
    // numbers what it takes, so its numbers are the stream's less these. (A declaration fails
    // every command taken before it, so none taken before a refusal is delivered after it.)
    std::uint64_t refused = 0;
    ring<command_entry> entries;  // [base, next)
    // Failed commands taken off the front before they arrived: one may arrive still, which is
    // its first delivery, not a duplicate. Bounded by forget_failed.
    std::map<std::uint64_t, command_entry> failed_unseen;
    std::size_t forget_at = 0;  // its size when forget_failed looks again
  };
  // A command on its way to the XPU's instance, held while it has no credit for it.
  struct waiting_offer {
    std::uint32_t stream;
    std::uint64_t seq;   // in the stream
    std::uint32_t slot;  // its bytes (the fabric's own write is built again)
    std::uint16_t size;
    bool send_now;
  };
  struct port_state {
    bool up = true;
    bool free_pending = false;  // a port_free event is scheduled
    std::uint64_t busy_until = 0;
    std::uint64_t epoch = 0;        // bumps on link down: frames on the wire are lost
    std::vector<pdu_tag> llr_tags;  // with LLR: each frame's tag by its sequence, for replays
  };
  struct xpu_state {
    std::unique_ptr<instance> sue;
    std::array<port_state, max_ports> ports{};
    std::uint64_t timer_at = never;  // the xpu_timer event scheduled
    ring<waiting_offer> waiting;     // commands held back for credits, in order
    std::uint8_t next_port = 0;      // unordered: where the search for a free port starts
  };
  // A switch port: the link layer of the switch's end of XPU x's port p, and its egress.
  struct switch_port {
    link_t link;
    ring<std::uint32_t> queue;  // frames waiting to leave (credits, LLR's store)
    std::uint64_t busy_until = 0;
    std::uint64_t timer_at = never;
    std::vector<pdu_tag> llr_tags;  // with LLR: each frame's tag by its sequence, for replays
    explicit switch_port(const transport::link_config& c) : link(c) {}
  };
  static constexpr std::size_t llr_slots = transport::fabric_sizing::replay_frames;
  static_assert(4096 % llr_slots == 0, "an LLR sequence names its slot");
  static void remember(std::vector<pdu_tag>& tags, const transport::link_info& info,
                       const pdu_tag& tag) {
    if (!info.llr) return;
    if (tags.empty()) tags.resize(llr_slots);
    tags[info.seq % llr_slots] = tag;
  }
  static pdu_tag recall(const std::vector<pdu_tag>& tags, const transport::link_info& info) {
    return info.llr && !tags.empty() ? tags[info.seq % llr_slots] : pdu_tag{};
  }
  struct message {
    std::uint16_t x;
    std::uint8_t p;
    std::uint64_t epoch;
    transport::link_message msg;
  };

  frame_tag& tag_of(std::uint32_t f) { return frames_.meta(f); }
  std::uint64_t delay_of(std::uint16_t x, std::uint8_t p) const {
    const std::size_t i = std::size_t{x} * max_ports + p;
    return i < cfg_.link_delays.size() && cfg_.link_delays[i] ? cfg_.link_delays[i]
                                                              : cfg_.link_delay;
  }
  std::uint64_t serialise(std::size_t bytes) const {
    // Preamble, SFD and inter-frame gap: 20 bytes on the wire besides the frame and its FCS.
    return static_cast<std::uint64_t>(static_cast<double>(bytes + 4 + 20) * port_ns_per_byte_) + 1;
  }
  static std::uint32_t index_of(std::uint16_t x, std::uint8_t p) {
    return static_cast<std::uint32_t>(std::size_t{x} * max_ports + p);
  }
  switch_port* port_of_switch(std::uint16_t x, std::uint8_t p) {
    std::unique_ptr<switch_port>& s = switch_[index_of(x, p)];
    if (!s) {
      s = std::make_unique<switch_port>(lcfg_);
      s->link.start(now_);
      switch_messages(index_of(x, p));
      arm_switch(index_of(x, p));
    }
    return s.get();
  }

  instance& sue(std::uint16_t x) {
    xpu_state& xs = xpus_[x];
    if (!xs.sue) {
      transport::instance_config c = icfg_;
      c.xpuid = x;
      c.misbehave = x == 0 ? cfg_.misbehave : misbehaviour::none;
      xs.sue = std::make_unique<instance>(c);
      xs.sue->set_notes({this, [](void* self, const transport::instance_note& n) {
                           static_cast<fabric*>(self)->on_note(n);
                         }});
      // Its notes are its own, whichever XPU's step made it (a command or a frame for it).
      const std::uint16_t outer = std::exchange(stepping_, x);
      for (std::uint8_t p = 0; p < cfg_.ports; ++p)
        if (!xs.ports[p].up) xs.sue->step(now_, transport::instance_event::link_status(p, false));
      stepping_ = outer;
    }
    return *xs.sue;
  }

  std::uint32_t stream_of(std::uint16_t src, std::uint16_t dst, std::uint8_t vc) {
    const std::uint64_t key = (std::uint64_t{src} * max_xpus + dst) * max_vcs + vc;
    return stream_index_.find_or_add(key, [&] {
      const auto i = static_cast<std::uint32_t>(streams_.size());
      streams_.emplace_back();
      streams_.back().src = src;
      streams_.back().dst = dst;
      streams_.back().vc = vc;
      return i;
    });
  }
  std::uint32_t find_stream(std::uint16_t src, std::uint16_t dst, std::uint8_t vc) const {
    return stream_index_.find((std::uint64_t{src} * max_xpus + dst) * max_vcs + vc);
  }

  void trace(const trace_event& t) {
    if (trace_sink_) trace_sink_(t);
  }
  void drop(std::uint32_t f, drop_reason why, hop where, std::uint16_t xpu, std::uint8_t port) {
    if (trace_sink_)
      trace(trace_event{.kind = trace_kind::drop,
                        .at = now_,
                        .xpu = xpu,
                        .port = port,
                        .reason = why,
                        .where = where,
                        .frame = frames_.bytes(f)});
    frames_.give(f);
  }

  // ---- the instances ---------------------------------------------------------------------
  // The XPU whose instance is being stepped, and the frame it is given (for the notes).
  std::uint16_t stepping_ = 0;
  std::uint32_t stepping_frame_ = none;

  transport::instance_actions step(std::uint16_t x, const transport::instance_event& e) {
    instance& s = sue(x);
    stepping_ = x;
    const transport::instance_actions a = s.step(now_, e);
    settle(x);
    return a;
  }

  // After any step of XPU x's instance: its free ports send, its timer is set.
  void settle(std::uint16_t x) {
    kick(x);
    xpu_state& xs = xpus_[x];
    const std::uint64_t d = xs.sue->deadline();
    if (d != transport::link_never && (xs.timer_at == never || d < xs.timer_at)) {
      xs.timer_at = std::max(d, now_);
      schedule(xs.timer_at, ev::xpu_timer, x, 0, 0);
    }
  }

  // Every port of XPU x that is free and has something to send sends it; a busy one is woken
  // when it is free.
  void kick(std::uint16_t x) {
    xpu_state& xs = xpus_[x];
    if (!xs.sue) return;
    // Commands held for credits go first: sending may have freed some.
    if (!xs.waiting.empty()) retry_waiting(x);
    const std::uint8_t ready = xs.sue->ready_ports();
    if (ready == 0) return;
    // A free port sends one frame now and is then busy until it is on the wire; a busy port
    // is woken when it is free. Unordered mode: the first free port takes the next PDU, looking
    // from a port that turns, so that idle ports share the work (R2 4.4: "based on available
    // bandwidth").
    const std::uint8_t first = xs.next_port;
    if (cfg_.unordered) xs.next_port = static_cast<std::uint8_t>((first + 1) % cfg_.ports);
    bool sent = false;
    for (std::uint8_t k = 0; k < cfg_.ports; ++k) {
      const auto p = static_cast<std::uint8_t>((first + k) % cfg_.ports);
      if (((ready >> p) & 1u) == 0) continue;
      port_state& ps = xs.ports[p];
      if (!ps.up) continue;
      if (ps.busy_until <= now_) {
        if (!transmit(x, p)) continue;
        sent = true;
        if (!xs.sue->port_ready(p)) continue;  // nothing more for it: no need to wake it
      }
      if (!ps.free_pending) {
        ps.free_pending = true;
        schedule(ps.busy_until, ev::port_free, x, p, 0);
      }
    }
    if (sent && !xs.waiting.empty()) retry_waiting(x);
  }

  // Port p of XPU x takes the instance's next frame.
  bool transmit(std::uint16_t x, std::uint8_t p) {
    xpu_state& xs = xpus_[x];
    stepping_ = x;
    const transport::instance_actions a =
        xs.sue->step(now_, transport::instance_event::transmit(p, scratch_));
    const transport::instance_frame& fr = a.frame;
    if (fr.size == 0) return false;
    const std::uint32_t f = pooled(fr.size);
    frame_tag& t = tag_of(f);
    t = frame_tag{};
    t.from = x;
    t.to = fr.peer;
    t.port = p;
    t.epoch = xs.ports[p].epoch;
    t.link = fr.link;
    using transport::frame_kind;
    if (fr.commands > 0 && (fr.kind == frame_kind::pdu || fr.kind == frame_kind::retransmission ||
                            fr.kind == frame_kind::lite)) {
      const std::uint32_t s = find_stream(x, fr.peer, fr.vc);
      t.pdu = s == index_map::absent ? pdu_tag{none, fr.commands, fr.first_seq}
                                     : pdu_tag{s, fr.commands, fr.first_seq + streams_[s].refused};
    }
    // LLR: a frame sent again carries the tag it had the first time.
    if (fr.kind == frame_kind::replay) {
      t.pdu = recall(xs.ports[p].llr_tags, fr.link);
      ++stats_.llr_replays;
    } else {
      remember(xs.ports[p].llr_tags, fr.link, t.pdu);
    }
    ++stats_.frames;
    ++stats_.frames_per_port[p];
    if (fr.kind == frame_kind::pdu && !fr.moved) ++stats_.pdus;
    if (fr.kind == frame_kind::retransmission) ++stats_.retransmissions;
    if (fr.kind == frame_kind::control) ++stats_.control;
    if (fr.op == wire::rh_op::ack) ++stats_.acks;
    if (fr.op == wire::rh_op::nack) ++stats_.nacks;
    if (trace_sink_) {
      trace_event te{.at = now_,
                     .xpu = x,
                     .port = p,
                     .peer = fr.peer,
                     .vc = fr.vc,
                     .psn = fr.psn,
                     .frame = frames_.bytes(f)};
      if (fr.kind == frame_kind::pdu || fr.kind == frame_kind::retransmission) {
        te.kind = fr.kind == frame_kind::pdu ? trace_kind::transmit : trace_kind::retransmit;
        trace(te);
      }
      if (fr.op == wire::rh_op::ack || fr.op == wire::rh_op::nack) {
        te.kind = fr.op == wire::rh_op::ack ? trace_kind::ack : trace_kind::nack;
        te.psn = fr.apsn;
        trace(te);
      }
    }
    port_state& ps = xs.ports[p];
    ps.busy_until = std::max(now_, ps.busy_until) + serialise(fr.size);
    cross(f, hop::up, x, p, ps.busy_until, ps.busy_until + delay_of(x, p));
    return true;
  }

  // What an instance had to say, as it happened.
  void on_note(const transport::instance_note& n) {
    using transport::note_kind;
    const std::uint16_t x = stepping_;
    switch (n.kind) {
      case note_kind::completed:
        break;
      case note_kind::link_down:
        // LLR gave up on the link (the fabric's own link status is already down otherwise):
        // its other end, the switch's, goes down with it.
        if (xpus_[x].ports[n.port].up) {
          ++stats_.llr_links_down;
          take_down(x, n.port, false);
        }
        break;
      case note_kind::failed: {
        const std::uint32_t s = find_stream(x, n.peer, n.vc);
        stats_.failed += n.count;
        if (s == index_map::absent) break;
        stream_state& st = streams_[s];
        for (std::uint32_t i = 0; i < n.count; ++i) {
          const std::uint64_t seq = n.first_seq + st.refused + i;
          if (seq >= st.base && seq < st.next) st.entries[seq - st.base].failed = true;
        }
        advance_base(s);
        break;
      }
      case note_kind::dropped: {
        drop_reason why = drop_reason::misaddressed;
        switch (n.why) {
          case transport::instance_drop::bad_rcrc:
            why = drop_reason::bad_rcrc;
            ++stats_.bad_rcrc;
            break;
          case transport::instance_drop::duplicate:
            why = drop_reason::duplicate;
            break;
          case transport::instance_drop::gap:
            why = drop_reason::gap;
            break;
          case transport::instance_drop::link:
            why = drop_reason::llr;
            ++stats_.llr_dropped;
            break;
          case transport::instance_drop::link_down:
            why = drop_reason::link_down;
            ++stats_.dropped_link_down;
            break;
          case transport::instance_drop::partition:
            why = drop_reason::partition;
            break;
          default:
            ++stats_.misaddressed;
            break;
        }
        if (trace_sink_)
          trace(trace_event{
              .kind = trace_kind::drop,
              .at = now_,
              .xpu = x,
              .port = n.port,
              .peer = n.peer,
              .vc = n.vc,
              .psn = n.psn,
              .reason = why,
              .where = hop::down,
              .frame = stepping_frame_ != none ? frames_.bytes(stepping_frame_) : wire::bytes{}});
        break;
      }
      case note_kind::unreachable:
        ++stats_.unreachable;
        trace(trace_event{.kind = trace_kind::unreachable,
                          .at = now_,
                          .xpu = x,
                          .port = n.port,
                          .peer = n.peer,
                          .vc = n.vc});
        break;
      case note_kind::peer_unreachable:
        ++stats_.peers_unreachable;
        trace(trace_event{
            .kind = trace_kind::peer_unreachable, .at = now_, .xpu = x, .peer = n.peer});
        break;
      case note_kind::failover:
        ++stats_.failovers;
        stats_.moved += n.count;
        trace(trace_event{.kind = trace_kind::failover,
                          .at = now_,
                          .xpu = x,
                          .port = n.port,
                          .peer = n.peer,
                          .vc = n.vc,
                          .to_port = n.to_port,
                          .moved = n.count});
        break;
      case note_kind::link_message: {
        const std::uint32_t m =
            messages_.add(message{x, n.port, xpus_[x].ports[n.port].epoch, n.message});
        schedule(now_ + delay_of(x, n.port), ev::to_switch, x, n.port, m);
        break;
      }
      default:
        break;
    }
  }

  // The switch port's link layer messages go to XPU x's port p.
  void switch_messages(std::uint32_t i) {
    switch_port& s = *switch_[i];
    const auto x = static_cast<std::uint16_t>(i / max_ports);
    const auto p = static_cast<std::uint8_t>(i % max_ports);
    for (const transport::link_message& msg : s.link.messages()) {
      const std::uint32_t m = messages_.add(message{x, p, xpus_[x].ports[p].epoch, msg});
      schedule(now_ + delay_of(x, p), ev::to_xpu, x, p, m);
    }
    s.link.clear_messages();
  }
  void arm_switch(std::uint32_t i) {
    switch_port& s = *switch_[i];
    const std::uint64_t d = s.link.deadline();
    if (d != transport::link_never && (s.timer_at == never || d < s.timer_at)) {
      s.timer_at = std::max(d, now_);
      schedule(s.timer_at, ev::sw_timer, static_cast<std::uint16_t>(i / max_ports),
               static_cast<std::uint8_t>(i % max_ports), i);
    }
  }

  // ---- offering commands -----------------------------------------------------------------
  void on_offer(std::uint32_t ref) {
    const pending_offer o = offers_[ref];
    offers_.remove(ref);
    if (stats_.offered++ == 0) stats_.first_offer = now_;
    const std::uint32_t s = stream_of(o.src, o.dst, o.vc);
    stream_state& st = streams_[s];
    st.entries.push_back(command_entry{now_, o.size, false, false});
    ++st.next;
    sue(o.src);
    xpu_state& xs = xpus_[o.src];
    const waiting_offer w{s, st.next - 1, o.slot, o.size, o.send_now};
    if (!xs.waiting.empty() || !hand_over(o.src, w)) {
      xs.waiting.push_back(w);
      return;
    }
    settle(o.src);
  }

  // Gives a command to its XPU's instance; false: no credit yet (it waits, in order).
  bool hand_over(std::uint16_t x, const waiting_offer& w) {
    std::array<std::uint8_t, pack::max_command_bytes> own;  // written up to w.size below
    wire::bytes cmd;
    if (w.slot == none) {
      write_own_command(streams_[w.stream], w.seq, w.size, own.data());
      cmd = wire::bytes(own.data(), w.size);
    } else {
      cmd = bytes_.bytes(w.slot);
    }
    const stream_state& st = streams_[w.stream];
    const std::size_t ctrl =
        std::max<std::size_t>(cfg_.profile->framing(cmd[0]) & pack::profile::control_mask, 1);
    stepping_ = x;
    const transport::instance_actions a =
        xpus_[x].sue->step(now_, transport::instance_event::command(st.dst, st.vc, cmd.first(ctrl),
                                                                    cmd.subspan(ctrl), w.send_now));
    if (a.error.code == wire::errc::no_space) return false;  // credits: later
    if (w.slot != none) bytes_.give(w.slot);
    stream_state& s2 = streams_[w.stream];
    if (a.error) {
      // Refused for good (the destination declared unreachable): the command failed.
      ++stats_.failed;
      ++s2.refused;
      if (w.seq >= s2.base && w.seq < s2.next) {
        s2.entries[w.seq - s2.base].failed = true;
        s2.entries[w.seq - s2.base].refused = true;
      }
      advance_base(w.stream);
      return true;
    }
    if (a.seq + s2.refused != w.seq) ++stats_.mismatched;
    return true;
  }
  void retry_waiting(std::uint16_t x) {
    xpu_state& xs = xpus_[x];
    while (!xs.waiting.empty()) {
      if (!hand_over(x, xs.waiting.front())) return;
      xs.waiting.pop_front();
    }
  }

  // The fabric's command: WR_FULL_P whose tag and address name the stream and its sequence
  // (the address: source in bits 63-48, VC in 47-40, sequence below), data a byte pattern.
  static void write_own_command(const stream_state& st, std::uint64_t seq, std::size_t size,
                                std::uint8_t* out) {
    const pack::cmd_write w{.type = pack::code::write_full_posted,
                            .dlen = static_cast<std::uint8_t>(size - default_control - 1),
                            .tag = static_cast<std::uint16_t>(seq),
                            .addr = (std::uint64_t{st.src} << 48) | (std::uint64_t{st.vc} << 40) |
                                    (seq & 0xFFFFFFFFFFull)};
    (void)wire::encode(w, wire::mutable_bytes(out, default_control));
    // Byte i is (seq + i) mod 256: a run of the ramp below, copied rather than counted out.
    std::copy_n(byte_ramp.data() + ((seq + default_control) & 0xFF), size - default_control,
                out + default_control);
  }
  // 0, 1, ..., 255, 0, 1, ..., 255: any 256 bytes of it from offset k are k, k + 1, ... mod 256.
  static constexpr std::array<std::uint8_t, 512> byte_ramp = [] {
    std::array<std::uint8_t, 512> r{};
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(i);
    return r;
  }();

  // ---- links -----------------------------------------------------------------------------
  // A frame enters a link: the link model decides what arrives where and when.
  void cross(std::uint32_t f, hop h, std::uint16_t xpu, std::uint8_t port, std::uint64_t sent,
             std::uint64_t arrival) {
    const ev kind = h == hop::up ? ev::at_switch : ev::at_xpu;
    frame_tag& t = tag_of(f);
    t.damaged = false;
    if (perfect_links_) {  // the default model with nothing to draw: every frame arrives
      schedule(std::max(arrival, now_), kind, xpu, port, f);
      return;
    }
    const link_verdict v =
        links_->on_frame(link_frame{sent, arrival, xpu, port, h, frames_.bytes(f), t.pdu});
    if (v.what == link_verdict::fate::drop) {
      ++stats_.lost;
      drop(f, drop_reason::link_model, h, xpu, port);
      return;
    }
    if (v.what == link_verdict::fate::take) {
      links_took_ = true;
      frames_.give(f);
      return;
    }
    if (v.flips > 0) {
      std::uint8_t* b = frames_.data(f);
      const std::size_t bits = frames_.size(f) * 8;
      for (std::uint8_t i = 0; i < v.flips && i < link_verdict::max_flips; ++i)
        if (v.flip[i] < bits)
          b[v.flip[i] / 8] ^= static_cast<std::uint8_t>(0x80u >> (v.flip[i] % 8));
      t.read_valid = false;
      t.damaged = true;
      ++stats_.corrupted;
    }
    const std::uint64_t at = std::max(v.at ? v.at : arrival, now_);
    if (at > arrival) ++stats_.reordered;
    schedule(at, kind, xpu, port, f);
    if (v.duplicate) {  // a copy of its own: the two may meet different fates
      ++stats_.duplicated;
      const std::uint32_t d = frames_.take(frames_.size(f));
      std::copy_n(frames_.data(f), frames_.size(f), frames_.data(d));
      tag_of(d) = t;
      tag_of(d).read_valid = false;
      schedule(std::max(v.duplicate_at ? v.duplicate_at : at + 1, now_), kind, xpu, port, d);
    }
  }

  // What the link layer at the receiving end makes of a frame: its FCS check is the model's
  // damage when the link runs LLR (the link layer catches it); without LLR a damaged frame
  // is passed on as the old fabric did, for the R-CRC to catch.
  transport::link_info arriving(const frame_tag& t) const {
    transport::link_info info = t.link;
    info.fcs_ok = !(cfg_.llr && t.damaged);
    return info;
  }

  // ---- the switch ------------------------------------------------------------------------
  void at_switch(std::uint32_t f) {
    frame_tag& t = tag_of(f);
    if (t.epoch != xpus_[t.from].ports[t.port].epoch) {
      ++stats_.dropped_link_down;
      drop(f, drop_reason::link_down, hop::up, t.from, t.port);
      return;
    }
    const std::uint32_t in = index_of(t.from, t.port);
    switch_port& ingress = *port_of_switch(t.from, t.port);
    const transport::link_info info = arriving(t);
    if (!ingress.link.arrived(info, frames_.size(f), 0, now_)) {
      ++stats_.llr_dropped;
      switch_messages(in);
      arm_switch(in);
      drop(f, drop_reason::llr, hop::up, t.from, t.port);
      return;
    }
    switch_messages(in);
    arm_switch(in);
    if (wire_sink_) wire_sink_(now_, t.port, frames_.bytes(f));
    // A switch forwards on the destination the frame carries; the receiver's reading of the
    // same bytes is kept, unless the way down changes them. AFH Gen 1 control frames are
    // forwarded on the address bits, as R2 3.5.3 has the switch look at them.
    t.read = transport::read_sue_frame(frames_.bytes(f), receive_);
    t.read_valid = true;
    t.link = info;
    std::optional<std::uint32_t> dst = t.read.dst_xpu;
    if (!dst) dst = afh1_destination(frames_.bytes(f));
    if (!dst || *dst >= cfg_.xpus) {
      ++stats_.misaddressed;
      ingress.link.drained(info, frames_.size(f), 0, now_);
      switch_messages(in);
      drop(f, drop_reason::unroutable, hop::up, t.from, t.port);
      return;
    }
    t.to = static_cast<std::uint16_t>(*dst);
    if (!xpus_[t.to].ports[t.port].up) {  // same plane
      ++stats_.dropped_link_down;
      ingress.link.drained(info, frames_.size(f), 0, now_);
      switch_messages(in);
      drop(f, drop_reason::link_down, hop::down, t.to, t.port);
      return;
    }
    // The egress port serialises frames in the order they leave the switch: FIFO per plane
    // and destination, and frames converging on one XPU queue behind each other (incast).
    const std::uint32_t out = index_of(t.to, t.port);
    switch_port& eg = *port_of_switch(t.to, t.port);
    t.epoch = xpus_[t.to].ports[t.port].epoch;
    if (eg.queue.empty() && eg.link.can_send(t.link.cls, 0, frames_.size(f), now_)) {
      forward(out, f);
    } else {
      eg.queue.push_back(f);
      egress(out);
    }
  }

  // Frames waiting at switch port i leave as its link layer lets them (credits, replays first).
  void egress(std::uint32_t i) {
    switch_port& s = *switch_[i];
    const auto x = static_cast<std::uint16_t>(i / max_ports);
    const auto p = static_cast<std::uint8_t>(i % max_ports);
    if (!xpus_[x].ports[p].up) return;
    for (;;) {
      if (s.link.replay_pending()) {
        transport::link_info info{};
        const std::size_t n = s.link.replay(scratch_, info);
        if (n == 0) return;
        const std::uint32_t f = pooled(n);
        frame_tag& t = tag_of(f);
        t = frame_tag{};
        t.to = x;
        t.port = p;
        t.epoch = xpus_[x].ports[p].epoch;
        t.link = info;
        t.pdu = recall(s.llr_tags, info);
        ++stats_.llr_replays;
        depart(i, f);
        continue;
      }
      if (s.queue.empty()) return;
      const std::uint32_t f = s.queue.front();
      if (!s.link.can_send(tag_of(f).link.cls, 0, frames_.size(f), now_)) return;
      s.queue.pop_front();
      forward(i, f);
    }
  }
  // Frame f leaves the switch on port i: its ingress buffer frees its credits, its egress link
  // layer numbers it (LLR) and takes its credits.
  void forward(std::uint32_t i, std::uint32_t f) {
    frame_tag& t = tag_of(f);
    if (lcfg_.cbfc || lcfg_.llr) {
      release_ingress(f);
      t.link = switch_[i]->link.sent(frames_.bytes(f), t.link.cls, now_);
      remember(switch_[i]->llr_tags, t.link, t.pdu);
    }
    depart(i, f);
  }
  // Frame f no longer takes room in the buffer of the switch port it came in on: its credits go
  // back to the sender (CBFC).
  void release_ingress(std::uint32_t f) {
    if (!(lcfg_.cbfc || lcfg_.llr)) return;
    const frame_tag& t = tag_of(f);
    const std::uint32_t in = index_of(t.from, t.port);
    switch_[in]->link.drained(t.link, frames_.size(f), 0, now_);
    switch_messages(in);
    arm_switch(in);
  }
  void depart(std::uint32_t i, std::uint32_t f) {
    switch_port& s = *switch_[i];
    frame_tag& t = tag_of(f);
    s.busy_until = std::max(now_ + cfg_.switch_delay, s.busy_until) + serialise(frames_.size(f));
    if (lcfg_.cbfc || lcfg_.llr) arm_switch(i);
    cross(f, hop::down, t.to, t.port, s.busy_until, s.busy_until + delay_of(t.to, t.port));
  }

  // AFH Gen 1's destination from the address bits (R2 3.5.3: the switch looks at 16 to 32 bits
  // of the address), for frames whose transport the reader does not read.
  std::optional<std::uint32_t> afh1_destination(wire::bytes b) const {
    if (b.size() < 6 || cfg_.encap == wire::encap::udp4 || cfg_.encap == wire::encap::udp6)
      return std::nullopt;
    if (wire::load_be32(b.data()) != wire::afh1_default_prefix) return std::nullopt;
    return wire::load_be16(b.data() + 4);
  }

  // ---- receiving -------------------------------------------------------------------------
  void at_xpu(std::uint32_t f) {
    frame_tag& t = tag_of(f);
    const std::uint16_t to = t.to;
    const std::uint8_t p = t.port;
    const port_state& ps = xpus_[to].ports[p];
    if (t.epoch != ps.epoch || !ps.up) {
      ++stats_.dropped_link_down;
      drop(f, drop_reason::link_down, hop::down, to, p);
      return;
    }
    transport::instance_event e =
        transport::instance_event::frame(p, frames_.bytes(f), arriving(t));
    if (t.read_valid) e.read = &t.read;
    stepping_frame_ = f;
    const transport::instance_actions a = step(to, e);
    stepping_frame_ = none;
    if (a.delivered.valid && !a.delivered.management) deliver(to, a.delivered, t.pdu);
    frames_.give(f);
  }

  // Hands a PDU's commands to XPU `to`, checking them against the PDU's tag: exactly once, and
  // in order per {source, destination, VC} in strict mode.
  void deliver(std::uint16_t to, const transport::instance_delivery& d, const pdu_tag& tag) {
    if (tag.stream == none || tag.stream >= streams_.size()) {
      ++stats_.mismatched;
      return;
    }
    stream_state& st = streams_[tag.stream];
    if (st.dst != to || st.vc != d.vc || st.src != d.src) ++stats_.mismatched;
    pack::unpacker u(*cfg_.profile, d.payload);
    pack::command_view cv;
    for (std::uint32_t i = 0; i < tag.count; ++i) {
      if (!u.next(cv)) {
        ++stats_.mismatched;
        break;
      }
      const std::uint64_t seq = tag.first_seq + i;
      command_entry late{};
      command_entry* entry = nullptr;
      if (seq >= st.base && seq < st.next) {
        if (!st.entries[seq - st.base].delivered) entry = &st.entries[seq - st.base];
      } else if (seq < st.base) {
        if (const auto it = st.failed_unseen.find(seq); it != st.failed_unseen.end()) {
          late = it->second;
          st.failed_unseen.erase(it);
          entry = &late;
          ++stats_.failed_then_delivered;
        }
      }
      if (entry == nullptr) {
        ++stats_.duplicates;
        continue;
      }
      command_entry& e = *entry;
      if (e.size != cv.size()) ++stats_.mismatched;
      e.delivered = true;
      // Strict mode keeps order per {source, destination, VC}, less the commands that failed;
      // unordered mode does not promise it across ports (R2 1.2), only per connection, which
      // go-back-N guarantees.
      if (seq != st.base && !cfg_.unordered && !e.failed) ++stats_.out_of_order;
      ++stats_.delivered;
      stats_.delivered_bytes += cv.size();
      stats_.last_delivery = now_;
      if (delivery_sink_)
        delivery_sink_(delivery{e.offered_at, now_, st.src, st.dst, st.vc, seq,
                                wire::bytes(cv.control.data(), cv.size())});
      advance_base(tag.stream);
    }
    if (u.next(cv) || u.error_found()) ++stats_.mismatched;  // more, or other, than packed
  }
  void advance_base(std::uint32_t s) {
    stream_state& st = streams_[s];
    while (!st.entries.empty() && (st.entries.front().delivered || st.entries.front().failed)) {
      const command_entry& e = st.entries.front();
      if (!e.delivered && !e.refused) st.failed_unseen.emplace(st.base, e);
      st.entries.pop_front();
      ++st.base;
    }
    if (st.failed_unseen.size() > std::max(st.forget_at, cfg_.failed_memory)) forget_failed(s);
  }
  // A failed command is never sent again, so only a frame on its way, or one an LLR has not seen
  // acknowledged and may replay, can still bring it: the failed commands of stream s that none of
  // those carries are forgotten. Looked at again once as many more are remembered as are left, so
  // the walk over the frames costs each failure a constant share. A link model that has taken
  // frames may give them back at any time (receive_frame): with one, nothing is forgotten.
  void forget_failed(std::uint32_t s) {
    stream_state& st = streams_[s];
    if (!links_took_) {
      held_.clear();
      const auto hold = [&](const pdu_tag& t) {
        if (t.stream == s && t.count > 0) held_.emplace_back(t.first_seq, t.first_seq + t.count);
      };
      // An LLR's tags of the frames it may still replay.
      const auto replayable = [&](const link_t& link, const std::vector<pdu_tag>& tags) {
        if (tags.empty()) return;
        const auto run = link.replayable();
        for (std::size_t i = 0; i < run.size(); ++i) hold(tags[run[i].seq.value % llr_slots]);
      };
      frames_.for_each_in_use([&](std::uint32_t f) { hold(tag_of(f).pdu); });
      for (const auto& x : xpus_)
        if (x.sue)
          for (std::uint8_t p = 0; p < cfg_.ports; ++p)
            replayable(x.sue->link(p), x.ports[p].llr_tags);
      for (const auto& sw : switch_)
        if (sw) replayable(sw->link, sw->llr_tags);
      std::sort(held_.begin(), held_.end());
      std::size_t h = 0;
      std::uint64_t covered_to = 0;  // the end of the ranges that start at or before seq
      for (auto it = st.failed_unseen.begin(); it != st.failed_unseen.end();) {
        for (; h < held_.size() && held_[h].first <= it->first; ++h)
          covered_to = std::max(covered_to, held_[h].second);
        it = it->first < covered_to ? std::next(it) : st.failed_unseen.erase(it);
      }
    }
    st.forget_at = 2 * st.failed_unseen.size();
  }

  // ---- link status (R2 3.5.8) ------------------------------------------------------------
  // XPU x's port p goes down at both ends: what is on the link is lost, what waits at the
  // switch for it is dropped (returning the credits of the links it came in on), and the
  // instance is told unless the news is its own (LLR gave up at its end).
  void take_down(std::uint16_t x, std::uint8_t p, bool tell) {
    port_state& ps = xpus_[x].ports[p];
    ps.up = false;
    trace(trace_event{.kind = trace_kind::link_down, .at = now_, .xpu = x, .port = p});
    ++ps.epoch;  // everything on this link is lost
    ps.busy_until = now_;
    if (switch_port* s = switch_[index_of(x, p)].get()) {
      while (!s->queue.empty()) {
        const std::uint32_t f = s->queue.front();
        s->queue.pop_front();
        release_ingress(f);
        ++stats_.dropped_link_down;
        drop(f, drop_reason::link_down, hop::down, x, p);
      }
      s->link.reset(now_);
      s->busy_until = now_;
    }
    if (tell && xpus_[x].sue) step(x, transport::instance_event::link_status(p, false));
  }
  // After switch port i's link layer took a message or a tick: its messages go to the XPU; then,
  // unless LLR gave up on the link, its waiting frames leave as they may and its timer is set.
  void switch_ran(std::uint32_t i) {
    switch_messages(i);
    if (gave_up(i)) return;
    egress(i);
    arm_switch(i);
  }
  // After switch port i's link layer ran: if LLR gave up on the link (its retry limit, R2
  // 3.5.5), the link goes down at both ends, as when its status says so.
  bool gave_up(std::uint32_t i) {
    const auto x = static_cast<std::uint16_t>(i / max_ports);
    const auto p = static_cast<std::uint8_t>(i % max_ports);
    if (!switch_[i]->link.down() || !xpus_[x].ports[p].up) return false;
    ++stats_.llr_links_down;
    take_down(x, p, true);
    return true;
  }
  void on_link(const link_event& l) {
    if (l.xpu >= cfg_.xpus || l.port >= cfg_.ports) return;
    port_state& ps = xpus_[l.xpu].ports[l.port];
    if (ps.up == l.up) return;
    if (!l.up) {
      take_down(l.xpu, l.port, true);
      return;
    }
    ps.up = true;
    trace(trace_event{.kind = trace_kind::link_up, .at = now_, .xpu = l.xpu, .port = l.port});
    const std::uint32_t i = index_of(l.xpu, l.port);
    if (switch_port* s = switch_[i].get()) {
      s->link.reset(now_);
      s->link.start(now_);
      switch_messages(i);
      arm_switch(i);
    }
    if (xpus_[l.xpu].sue) step(l.xpu, transport::instance_event::link_status(l.port, true));
    // Every other XPU learns that the plane reaches this one again.
    for (std::uint16_t x = 0; x < cfg_.xpus; ++x)
      if (x != l.xpu && xpus_[x].sue)
        step(x, transport::instance_event::peer_status(l.xpu, l.port, true));
  }

  static constexpr std::size_t max_frame = 64 + wire::pdu_size(wire::sue_max_payload);

  // A frame is written into scratch_, then copied into a pool buffer of its own size: a buffer
  // of the largest frame for each frame in flight took a fresh 8 KiB block (and its page
  // faults) for every 60-byte frame of a large fabric.
  std::uint32_t pooled(std::size_t n) {
    const std::uint32_t f = frames_.take(n);
    std::copy_n(scratch_.data(), n, frames_.data(f));
    return f;
  }
  std::array<std::uint8_t, max_frame> scratch_{};

  fabric_config cfg_;
  wire::error error_{};
  transport::instance_config icfg_{};
  transport::link_config lcfg_{};
  wire::receive_options receive_ = transport::sue_receive_options();
  std::unique_ptr<link_model> own_links_;
  link_model* links_ = nullptr;
  double port_ns_per_byte_ = 0;
  std::vector<xpu_state> xpus_;
  std::vector<std::unique_ptr<switch_port>> switch_;  // per XPU and port: the switch's end
  std::vector<stream_state> streams_;
  index_map stream_index_;
  slot_pool<pending_offer> offers_;  // waiting for their time
  slot_pool<message> messages_;      // link messages on their way
  buffer_pool<frame_tag> frames_;    // frames in flight, each with its tag
  bool links_took_ = false;          // the link model has taken a frame (forget_failed)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> held_;  // forget_failed's scratch
  buffer_pool<> bytes_;         // the caller's commands until their instance takes them
  bool perfect_links_ = false;  // the default model, all its probabilities 0
  event_queue<event> events_;
  event_queue<event> offer_queue_;
  std::uint64_t now_ = 0;
  mutable fabric_stats stats_;  // mutable: stats() gathers the link ends' counts
  port_frame_sink wire_sink_;
  delivery_sink delivery_sink_;
  trace_sink trace_sink_;
};

}  // namespace scaleup::sim
