// A fabric harness: N XPUs (up to 1024, R2 Table 1) on one switch, each with 1, 2 or 4 ports
// (one plane each), running the library's command framing, go-back-N and frame code over links
// the caller models. A discrete-event simulation for tests, examples, the CLI and embedding in
// other simulators:
//
//   - links: a link_model decides each frame's fate on each link (link_model.hpp); the default
//     draws loss, corruption, duplication and reordering from the configuration;
//   - commands: any command profile; the caller offers its own command bytes or lets the
//     harness build posted full writes;
//   - time: next_event_time() and advance(now) let an outside event loop drive the fabric;
//     run(until) is that loop;
//   - observation: the frames the switch receives (on_wire), every command delivered
//     (on_delivery), and a trace of every transmission, retransmission, ACK, NACK, drop and
//     failover (on_trace).
//
// Scale: state exists only for what a run uses. A connection {XPU, port, peer, VC} and a stream
// {source, destination, VC} are created on first use; each connection's retransmit and ACK
// timers are one deadline in the event queue; frames and kept PDUs live in pooled buffers. The
// harness checks delivery itself: each PDU in flight carries a tag naming the commands packed
// into it (stream and sequence numbers), the simulation's bookkeeping, like an ns-3 packet
// tag; the receiver walks the commands it got with the profile and counts them against it.
//
// Unlike the machines it drives, the harness opts into the heap: it is simulation scaffolding,
// included only by those who run simulations.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
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
#include "scaleup/transport/pfc.hpp"
#include "scaleup/wire/frame.hpp"

namespace scaleup::sim {

// A link going down or coming back at a known time (link status per port, R2 3.5.8).
struct link_event {
  std::uint64_t at = 0;  // ns
  std::uint16_t xpu = 0;
  std::uint8_t port = 0;
  bool up = false;
};

// An endpoint that breaks one conformance rule once (docs/conformance.md), so that a capture of
// it tests `scaleup check` and the plugin's sue.check expert infos. A receiver: right after an
// ACK or NACK it sends one stand-alone RH more that a conformant receiver never sends; the
// peer's go-back-N ignores it (an ACK from the past or the future changes nothing; a second
// NACK of the same PSN goes back where the first did). A sender: one go-back leaves out its
// first PSN, which the receiver, waiting for it, never ACKs, until the timeout resends it. Either
// way nothing else in the run changes.
enum class misbehaviour : std::uint8_t {
  none,
  ack_unsent,     // an ACK of a PSN 1000 beyond the peer's next: never sent
  ack_monotonic,  // after an ACK, one of the PSN before it: apsn moves backwards
  nack_once,      // after a NACK, the same NACK again: a gap NACKed twice
  gbn_resend,     // a sender's go-back that leaves out its first PSN (the timeout repairs it)
};

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
  std::uint8_t ports = 1;          // per XPU: 1, 2 or 4 (R2 1.1), one plane each
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
  std::size_t pack_limit = pack::sue_pack_limit;  // payload bytes per PDU (R2 3.3)
  misbehaviour misbehave = misbehaviour::none;    // once, by the first receiver that can
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
  // The harness's own command, a posted full write (WR_FULL_P) of this many data bytes (1-256)
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

class fabric {
 public:
  static constexpr std::size_t max_xpus = 1024;  // R2 Table 1; the RH's xpuid has 10 bits
  static constexpr std::size_t max_ports = 4;
  static constexpr std::size_t max_vcs = 4;
  static constexpr std::uint64_t never = ~std::uint64_t{0};
  using frame_sink = std::function<void(std::uint64_t ns, wire::bytes)>;
  using delivery_sink = std::function<void(const delivery&)>;
  using trace_sink = std::function<void(const trace_event&)>;

  // `links`: the caller's link model (it must outlive the fabric); none: probabilistic_links
  // over the configuration's probabilities.
  explicit fabric(fabric_config cfg, link_model* links = nullptr) : cfg_(std::move(cfg)) {
    cfg_.xpus = std::clamp<std::uint16_t>(cfg_.xpus, 2, max_xpus);
    cfg_.ports = std::clamp<std::uint8_t>(cfg_.ports, 1, max_ports);
    cfg_.vcs = std::clamp<std::uint8_t>(cfg_.vcs, 1, max_vcs);
    cfg_.pack_limit =
        std::clamp<std::size_t>(cfg_.pack_limit, pack::max_command_bytes, wire::sue_max_payload);
    if (cfg_.profile == nullptr) cfg_.profile = &pack::default_profile;
    if (cfg_.ports == 1) cfg_.unordered = false;  // unordered needs more than one port (R2 1.2)
    if (links == nullptr) {
      own_links_ = std::make_unique<probabilistic_links>(
          cfg_.loss, cfg_.corrupt, cfg_.duplicate, cfg_.reorder, cfg_.reorder_delay, cfg_.seed);
      links = own_links_.get();
      perfect_links_ =
          !(cfg_.loss > 0) && !(cfg_.corrupt > 0) && !(cfg_.duplicate > 0) && !(cfg_.reorder > 0);
    }
    links_ = links;
    xpus_.resize(cfg_.xpus);
    egress_busy_.assign(std::size_t{cfg_.xpus} * max_ports, 0);
    port_ns_per_byte_ = 8.0 * cfg_.ports / cfg_.instance_gbps;
    for (std::size_t i = 0; i < cfg_.link_events.size(); ++i)
      schedule(cfg_.link_events[i].at, ev::link, 0, 0, static_cast<std::uint32_t>(i));
  }

  // Every frame as the switch receives it (retransmissions included), for a capture.
  void on_wire(frame_sink s) { wire_sink_ = std::move(s); }
  // Every command as it is delivered.
  void on_delivery(delivery_sink s) { delivery_sink_ = std::move(s); }
  // Every transmission, retransmission, ACK, NACK, drop, failover and link change.
  void on_trace(trace_sink s) { trace_sink_ = std::move(s); }

  // Queues a command for time o.at. Refused (an error, nothing queued): an XPU or VC the
  // fabric does not have, src == dst, or a command the profile does not frame.
  wire::error add(const offer& o) {
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
    if (xpu >= cfg_.xpus || port >= cfg_.ports) return;
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
    return stats_;
  }

  const fabric_stats& stats() const { return stats_; }
  std::uint64_t now() const { return now_; }
  const fabric_config& config() const { return cfg_; }
  // What the run holds: connections and streams created, buffers in use.
  std::size_t connections() const { return conns_.size(); }
  std::size_t streams() const { return streams_.size(); }
  std::size_t buffers_in_use() const { return frames_.in_use() + bytes_.in_use(); }

 private:
  static constexpr std::uint32_t none = 0xFFFFFFFFu;
  static constexpr std::uint8_t no_port = 0xFF;
  static constexpr std::size_t default_control = 12;  // pack::cmd_write

  // ---- events ----------------------------------------------------------------------------
  enum class ev : std::uint8_t { offer, port_free, at_switch, at_xpu, tick, link, failover };
  struct event {
    std::uint64_t at;
    std::uint32_t ref;  // offer, frame, connection, link event or failover, by kind
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
      // Events before the next offer first; then the offer, if it is due.
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
          pump(e.xpu, e.port);
          break;
        case ev::at_switch:
          at_switch(e.ref);
          break;
        case ev::at_xpu:
          at_xpu(e.ref);
          break;
        case ev::tick:
          on_tick(e.ref, e.at);
          break;
        case ev::link:
          on_link(cfg_.link_events[e.ref]);
          break;
        case ev::failover:
          on_failover(e.ref);
          break;
      }
    }
  }

  // ---- state -----------------------------------------------------------------------------
  // A frame in flight, beside its bytes: where it goes, what it carries, and what the switch
  // read of it (kept for the receiver, unless the way down changes the bytes).
  struct frame_tag {
    pdu_tag pdu{};
    std::uint64_t epoch = 0;       // of the link it is on
    std::uint32_t rx_conn = none;  // the receiving end's connection, as the sender knows it
    std::uint16_t from = 0, to = 0;
    std::uint8_t port = 0;
    bool read_valid = false;  // the fields below are a reading of the bytes as they are now
    bool good = false;        // an RH and a good R-CRC
    std::uint16_t payload_at = 0, payload_len = 0;
    std::uint32_t dst = none;  // the destination the frame carries (none: none found)
    wire::reliability_header rh{};
  };
  struct pending_offer {
    std::uint16_t src, dst;
    std::uint8_t vc;
    bool send_now;
    std::uint16_t size;  // command bytes
    std::uint32_t slot;  // the caller's command bytes; none: the harness's write
  };
  // A command of a stream from its offer to its delivery.
  struct command_entry {
    std::uint64_t offered_at = 0;
    std::uint32_t slot = none;
    std::uint16_t size = 0;
    bool send_now = false;
    bool delivered = false;
  };
  struct stream_state {
    std::uint16_t src = 0, dst = 0;
    std::uint8_t vc = 0;
    std::uint8_t pin = no_port;   // strict: the port it is pinned to
    std::uint8_t where = idle;    // idle, ready (in a port's list), parked, stranded
    std::uint8_t ready_on = 0;    // the port whose ready list holds it
    std::uint64_t base = 0;       // the oldest command not yet delivered (entries' front)
    std::uint64_t packed = 0;     // the next command to pack
    std::uint64_t next = 0;       // the next command to be offered
    ring<command_entry> entries;  // [base, next)
    std::array<std::uint32_t, max_ports> conn{none, none, none, none};
  };
  static constexpr std::uint8_t idle = 0, ready = 1, parked = 2, stranded = 3;

  // What the sender keeps for go-back-N: the packed commands (R2 4.2 step 4); a few bytes
  // (a read, a response, a barrier) in place, more in a buffer.
  struct kept_pdu {
    static constexpr std::size_t in_place = 16;
    pdu_tag tag{};
    std::uint32_t buf = none;  // none: the payload is in `small`
    std::uint16_t size = 0;
    std::uint8_t vc = 0;
    bool sent = false;  // on this connection
    std::array<std::uint8_t, in_place> small{};
  };
  wire::bytes payload_of(const kept_pdu& k) const {
    return k.buf == none ? wire::bytes(k.small.data(), k.size) : bytes_.bytes(k.buf);
  }
  void release(const kept_pdu& k) {
    if (k.buf != none) bytes_.give(k.buf);
  }
  struct connection_state {
    transport::connection<16> m{};
    std::uint16_t xpu = 0, peer = 0;
    std::uint8_t port = 0, vc = 0;  // vc: the VC key (0 for every VC when keyed per peer)
    bool ack_queued = false;
    bool failing = false;
    std::uint32_t far = none;            // the peer's end of this connection, once looked up
    std::uint64_t tick_at = 0;           // the pending timer event (0: none)
    ring<kept_pdu> kept;                 // PSNs una .. next - 1, in order
    ring<kept_pdu> backlog;              // moved here by a failover, waiting for window
    std::vector<std::uint32_t> waiting;  // streams parked until the window opens
  };
  struct resend_run {  // PDUs of one connection to send, in order
    std::uint32_t conn;
    std::uint16_t psn;
    std::uint16_t count;
  };
  struct port_state {
    bool up = true;
    bool free_pending = false;  // a port_free event is scheduled
    std::uint64_t busy_until = 0;
    std::uint64_t epoch = 0;   // bumps on link down: frames on the wire are lost
    ring<std::uint32_t> acks;  // connections owing an ACK or NACK
    ring<resend_run> resend;
    std::array<ring<std::uint32_t>, max_vcs> ready{};  // streams with commands to pack
    std::uint8_t next_vc = 0;
    std::size_t queued_streams = 0;
  };
  struct xpu_state {
    std::array<port_state, max_ports> ports{};
    std::vector<std::uint32_t> conns;     // this XPU's connections
    std::vector<std::uint32_t> stranded;  // streams with no usable port
    std::uint32_t failing = 0;            // connections being failed over
    std::uint8_t next_port = 0;           // unordered: where pump_any starts looking
  };
  struct extra_rh {
    std::uint32_t conn;
    wire::rh_op op;
    transport::psn<16> apsn;
  };
  struct failover_move {
    std::uint32_t conn;
    std::uint8_t to;
  };

  frame_tag& tag_of(std::uint32_t f) { return frames_.meta(f); }
  std::uint8_t vc_key(std::uint8_t vc) const {
    return cfg_.keys == transport::keying::port_peer ? 0 : vc;
  }
  std::uint64_t delay_of(std::uint16_t x, std::uint8_t p) const {
    const std::size_t i = std::size_t{x} * max_ports + p;
    return i < cfg_.link_delays.size() && cfg_.link_delays[i] ? cfg_.link_delays[i]
                                                              : cfg_.link_delay;
  }
  std::uint64_t serialise(std::size_t bytes) const {
    // Preamble, SFD and inter-frame gap: 20 bytes on the wire besides the frame and its FCS.
    return static_cast<std::uint64_t>(static_cast<double>(bytes + 4 + 20) * port_ns_per_byte_) + 1;
  }

  std::uint32_t conn_of(std::uint16_t x, std::uint8_t p, std::uint16_t peer, std::uint8_t vc) {
    const std::uint8_t k = vc_key(vc);
    const std::uint64_t key =
        (((std::uint64_t{x} * max_ports + p) * max_xpus + peer) * max_vcs) + k;
    return conn_index_.find_or_add(key, [&] {
      const auto i = static_cast<std::uint32_t>(conns_.size());
      conns_.emplace_back();
      connection_state& c = conns_.back();
      c.xpu = x;
      c.peer = peer;
      c.port = p;
      c.vc = k;
      xpus_[x].conns.push_back(i);
      return i;
    });
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
  std::uint32_t stream_conn(std::uint32_t s, std::uint8_t p) {
    std::uint32_t& c = streams_[s].conn[p];
    if (c == none) c = conn_of(streams_[s].src, p, streams_[s].dst, streams_[s].vc);
    return c;
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
    release_frame(f);
  }
  void release_frame(std::uint32_t f) { frames_.give(f); }

  // Reads frame f (read_pdu) into its tag: the destination, the RH, where the payload is, and
  // whether a receiver would accept it.
  void read_into(std::uint32_t f, frame_tag& t) {
    const wire::bytes b = frames_.bytes(f);
    const pdu_read r = read_pdu(b);
    t.read_valid = true;
    t.good = r.good();
    t.dst = r.dst_xpu ? *r.dst_xpu : none;
    t.rh = r.rh ? *r.rh : wire::reliability_header{};
    t.payload_at = static_cast<std::uint16_t>(r.payload.data() ? r.payload.data() - b.data() : 0);
    t.payload_len = static_cast<std::uint16_t>(r.payload.size());
  }

  // ---- offering commands -----------------------------------------------------------------
  void on_offer(std::uint32_t ref) {
    const pending_offer o = offers_[ref];
    offers_.remove(ref);
    if (stats_.offered++ == 0) stats_.first_offer = now_;
    const std::uint32_t s = stream_of(o.src, o.dst, o.vc);
    stream_state& st = streams_[s];
    st.entries.push_back(command_entry{now_, o.slot, o.size, o.send_now, false});
    ++st.next;
    if (st.where == idle) make_ready(s);
  }

  // The port a new PDU of stream s goes out on, or no_port.
  std::uint8_t port_for(std::uint32_t s) {
    stream_state& st = streams_[s];
    xpu_state& xs = xpus_[st.src];
    const auto usable = [&](std::uint8_t q) {
      return xs.ports[q].up && !conns_[stream_conn(s, q)].m.tx.unreachable;
    };
    if (!cfg_.unordered) {
      if (st.pin != no_port && usable(st.pin)) return st.pin;
      // Pin to the first usable port, starting from a spread over source, destination and VC,
      // so that the streams into one XPU share its planes too.
      st.pin = no_port;
      for (std::uint8_t k = 0; k < cfg_.ports && st.pin == no_port; ++k) {
        const auto q = static_cast<std::uint8_t>((st.src + st.dst + st.vc + k) % cfg_.ports);
        if (usable(q)) st.pin = q;
      }
      return st.pin;
    }
    // Unordered: any usable port will do; the ports share one ready list per VC and whichever
    // is free takes the next PDU (R2 4.4: "based on available bandwidth").
    for (std::uint8_t q = 0; q < cfg_.ports; ++q)
      if (usable(q)) return q;
    return no_port;
  }

  // Unordered mode: whether a port other than p can take a new PDU of stream s now.
  bool other_port_open(std::uint32_t s, std::uint8_t p) {
    for (std::uint8_t q = 0; q < cfg_.ports; ++q) {
      if (q == p || !xpus_[streams_[s].src].ports[q].up) continue;
      const connection_state& cq = conns_[stream_conn(s, q)];
      if (!cq.m.tx.unreachable && !cq.failing && cq.backlog.empty() &&
          cq.m.tx.in_flight() < cfg_.gbn.window)
        return true;
    }
    return false;
  }

  // The ready lists a port serves: its own in strict mode, the XPU's shared ones (kept in port
  // 0's state) in unordered mode.
  std::uint8_t lane(std::uint8_t p) const { return cfg_.unordered ? 0 : p; }

  void make_ready(std::uint32_t s) {
    stream_state& st = streams_[s];
    if (st.packed == st.next) {
      st.where = idle;
      return;
    }
    const std::uint8_t p = port_for(s);
    if (p == no_port) {
      st.where = stranded;
      xpus_[st.src].stranded.push_back(s);
      return;
    }
    enqueue(s, lane(p));
    if (cfg_.unordered)
      pump_any(st.src);
    else
      pump(st.src, p);
  }

  // Unordered mode: every port may take the XPU's next PDU; the first free one does, looking
  // from a port that turns, so idle ports share the work.
  void pump_any(std::uint16_t x) {
    const std::uint8_t first = xpus_[x].next_port;
    xpus_[x].next_port = static_cast<std::uint8_t>((first + 1) % cfg_.ports);
    for (std::uint8_t k = 0; k < cfg_.ports; ++k)
      pump(x, static_cast<std::uint8_t>((first + k) % cfg_.ports));
  }

  void enqueue(std::uint32_t s, std::uint8_t l) {
    stream_state& st = streams_[s];
    st.where = ready;
    st.ready_on = l;
    port_state& ls = xpus_[st.src].ports[l];
    ls.ready[st.vc].push_back(s);
    ++ls.queued_streams;
  }

  void park(std::uint32_t s, std::uint32_t c) {
    streams_[s].where = parked;
    conns_[c].waiting.push_back(s);
  }
  void wake(std::uint32_t c) {
    if (conns_[c].waiting.empty()) return;
    std::vector<std::uint32_t> w;
    w.swap(conns_[c].waiting);
    for (const std::uint32_t s : w)
      if (streams_[s].where == parked) make_ready(s);
    w.clear();
    if (conns_[c].waiting.empty()) conns_[c].waiting.swap(w);  // keep the capacity
  }

  // Strict order holds across a failover: while a connection the stream may have used is being
  // moved, its newer commands wait for it (the connection, or none).
  std::uint32_t moving(std::uint32_t s) const {
    const stream_state& st = streams_[s];
    if (xpus_[st.src].failing == 0) return none;
    for (std::uint8_t q = 0; q < cfg_.ports; ++q)
      if (st.conn[q] != none && conns_[st.conn[q]].failing) return st.conn[q];
    return none;
  }

  // Streams of XPU x that found no usable port try again (a link came up, a failover ended).
  void unstrand(std::uint16_t x) {
    if (xpus_[x].stranded.empty()) return;
    std::vector<std::uint32_t> waiting;
    waiting.swap(xpus_[x].stranded);
    for (const std::uint32_t s : waiting)
      if (streams_[s].where == stranded) make_ready(s);
  }

  // ---- transmitting ----------------------------------------------------------------------
  // Keeps port p of XPU x busy: ACKs and NACKs first, then PDUs to send again, then new PDUs.
  void pump(std::uint16_t x, std::uint8_t p) {
    port_state& ps = xpus_[x].ports[p];
    if (!ps.up) return;
    if (ps.busy_until > now_) {
      if (!ps.free_pending) {
        ps.free_pending = true;
        schedule(ps.busy_until, ev::port_free, x, p, 0);
      }
      return;
    }
    if (extra_ && conns_[extra_->conn].xpu == x && conns_[extra_->conn].port == p) {
      const extra_rh e = *extra_;
      extra_.reset();
      send(e.conn, nullptr, {}, &e);
      return;
    }
    while (!ps.acks.empty()) {
      const std::uint32_t c = ps.acks.front();
      ps.acks.pop_front();
      conns_[c].ack_queued = false;
      // Already carried by a data PDU: nothing left to say.
      if (transport::pending_ack(conns_[c].m.rx).first == wire::rh_op::none) continue;
      send(c, nullptr, {});
      return;
    }
    while (!ps.resend.empty()) {
      resend_run& r = ps.resend.front();
      const std::uint32_t c = r.conn;
      const transport::psn<16> psn(r.psn);
      const bool more = r.count > 1;
      r.psn = static_cast<std::uint16_t>(r.psn + 1);
      if (--r.count == 0) ps.resend.pop_front();
      const auto& tx = conns_[c].m.tx;
      if (!within(psn, tx.una, tx.in_flight())) continue;  // acknowledged meanwhile
      if (skip_resend(more, psn, tx.una)) continue;
      send(c, &conns_[c].kept[distance(tx.una, psn)], psn);
      return;
    }
    port_state& ls = xpus_[x].ports[lane(p)];
    for (std::uint8_t k = 0; k < cfg_.vcs; ++k) {
      const auto vc = static_cast<std::uint8_t>((ps.next_vc + k) % cfg_.vcs);
      ring<std::uint32_t>& list = ls.ready[vc];
      // Each stream is looked at once: in unordered mode one this port cannot take goes back
      // for the others.
      for (std::size_t budget = list.size(); budget > 0 && !list.empty(); --budget) {
        const std::uint32_t s = list.front();
        list.pop_front();
        --ls.queued_streams;
        stream_state& st = streams_[s];
        if (st.where != ready || st.ready_on != lane(p)) continue;  // re-homed meanwhile
        st.where = idle;
        if (st.packed == st.next) continue;
        // Strict: still pinned here? Its pin moves on a failover, a link down, unreachable.
        if (!cfg_.unordered &&
            !(st.pin == p && ps.up && !conns_[stream_conn(s, p)].m.tx.unreachable) &&
            port_for(s) != p) {
          make_ready(s);
          continue;
        }
        const std::uint32_t c = stream_conn(s, p);
        const connection_state& cs = conns_[c];
        const bool closed = cs.m.tx.unreachable || cs.failing || !cs.backlog.empty() ||
                            cs.m.tx.in_flight() >= cfg_.gbn.window;
        if (cfg_.unordered && closed) {
          if (other_port_open(s, p))
            enqueue(s, lane(p));
          else
            park(s, c);  // woken when this connection's window opens or its failover ends
          continue;
        }
        // Strict: wait for a failover of a connection the stream used, for PDUs moved here to
        // go first, or for window; each wakes the stream when it is over.
        if (const std::uint32_t m = cfg_.unordered ? none : moving(s); m != none) {
          park(s, m);
          continue;
        }
        if (closed) {
          park(s, c);
          continue;
        }
        ps.next_vc = static_cast<std::uint8_t>((vc + 1) % cfg_.vcs);
        send_new(s, c);
        if (streams_[s].packed != streams_[s].next && streams_[s].where == idle) {
          enqueue(s, lane(p));              // round robin among the VC's streams
          if (cfg_.unordered) pump_any(x);  // a free port takes its next PDU
        }
        return;
      }
    }
  }

  // Packs the stream's oldest commands (up to the limit, or a send_now) into a new PDU on
  // connection c, keeps it and sends it.
  void send_new(std::uint32_t s, std::uint32_t c) {
    stream_state& st = streams_[s];
    std::size_t bytes = 0;
    std::uint32_t n = 0;
    for (std::uint64_t q = st.packed; q < st.next; ++q) {
      const command_entry& e = st.entries[q - st.base];
      if (bytes + e.size > cfg_.pack_limit) break;
      bytes += e.size;
      ++n;
      if (e.send_now) break;
    }
    connection_state& cs = conns_[c];
    cs.kept.push_back(kept_pdu{});  // cannot be refused: the window was checked
    kept_pdu& k = cs.kept.back();
    k.tag = pdu_tag{s, n, st.packed};
    k.size = static_cast<std::uint16_t>(bytes);
    k.vc = st.vc;
    if (bytes > kept_pdu::in_place) k.buf = bytes_.take(bytes);
    std::uint8_t* out = k.buf == none ? k.small.data() : bytes_.data(k.buf);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t seq = st.packed + i;
      command_entry& e = st.entries[seq - st.base];
      if (e.slot == none) {
        write_own_command(st, seq, e.size, out);
      } else {
        wire::copy_short(out, bytes_.data(e.slot), e.size);
        bytes_.give(e.slot);
        e.slot = none;
      }
      out += e.size;
    }
    st.packed += n;
    auto [tx, act] = step(cs.m.tx, transport::sender_event<16>{transport::sender_input::send, {}},
                          now_, cfg_.gbn);
    cs.m.tx = tx;
    ++stats_.pdus;
    send(c, &k, act.psn_assigned);
    arm(c);
  }

  // The harness's command: WR_FULL_P whose tag and address name the stream and its sequence
  // (the address: source in bits 63-48, VC in 47-40, sequence below), data a byte pattern.
  static void write_own_command(const stream_state& st, std::uint64_t seq, std::size_t size,
                                std::uint8_t* out) {
    const pack::cmd_write w{.type = pack::code::write_full_posted,
                            .dlen = static_cast<std::uint8_t>(size - default_control - 1),
                            .tag = static_cast<std::uint16_t>(seq),
                            .addr = (std::uint64_t{st.src} << 48) | (std::uint64_t{st.vc} << 40) |
                                    (seq & 0xFFFFFFFFFFull)};
    (void)wire::encode(w, wire::mutable_bytes(out, default_control));
    for (std::size_t i = default_control; i < size; ++i)
      out[i] = static_cast<std::uint8_t>(seq + i);
  }

  // Sends a frame on connection c: the kept PDU `k` with PSN `psn`, or (k null) an RH-only PDU
  // carrying the pending ACK/NACK. Every RH carries what the receiver has to say.
  // `forced`: a misbehaving receiver's extra RH (fabric_config::misbehave) in place of what the
  // receiver has to say, which stays owed.
  void send(std::uint32_t c, kept_pdu* k, transport::psn<16> psn,
            const extra_rh* forced = nullptr) {
    if (conns_[c].far == none) {  // before references: it may add a connection
      const connection_state& near = conns_[c];
      const std::uint32_t far = conn_of(near.peer, near.port, near.xpu, near.vc);
      conns_[c].far = far;
    }
    connection_state& cs = conns_[c];
    const std::uint16_t x = cs.xpu;
    const std::uint8_t p = cs.port;
    port_state& ps = xpus_[x].ports[p];
    wire::reliability_header rh{};
    rh.xpuid = x;
    rh.vc = k ? k->vc : cs.vc;
    // A stand-alone ACK/NACK takes no PSN of its own, and a receiver reads only its op and
    // apsn (its npsn is the sender's next, for information).
    rh.npsn = k ? psn.value : cs.m.tx.next.value;
    const auto [owed_op, owed_apsn] = transport::pending_ack(cs.m.rx);
    const wire::rh_op op = forced ? forced->op : owed_op;
    const transport::psn<16> apsn = forced ? forced->apsn : owed_apsn;
    rh.op = static_cast<std::uint8_t>(op);
    rh.apsn = apsn.value;
    if (!forced && op != wire::rh_op::none) misbehave_after(c, op, apsn);
    if (!forced && op != wire::rh_op::none)
      cs.m.rx = step(cs.m.rx,
                     transport::receiver_event<16>{transport::receiver_input::ack_sent, {}, true},
                     now_, cfg_.gbn)
                    .first;
    const wire::bytes payload = k ? payload_of(*k) : wire::bytes{};
    const std::size_t need = std::max(
        wire::header_size(cfg_.encap) + wire::pdu_size(payload.size()), wire::ethernet_min_frame);
    const std::uint32_t f = frames_.take(need);
    wire::frame_params fp;
    fp.kind = cfg_.encap;
    fp.src_xpu = x;
    fp.dst_xpu = cs.peer;
    fp.tc = cfg_.encap == wire::encap::afh1 ? 0
            : k                             ? cfg_.priorities.vc_priority[rh.vc]
                                            : cfg_.priorities.ack_priority;
    const auto r =
        wire::emit_sue_frame(fp, rh, payload, wire::mutable_bytes(frames_.data(f), need));
    if (!r) {  // cannot happen for the fabric's own parameters: nothing to send
      frames_.give(f);
      return;
    }
    frames_.resize(f, r.value);
    frame_tag& t = tag_of(f);
    t = frame_tag{};
    t.rx_conn = cs.far;
    t.from = x;
    t.to = cs.peer;
    t.port = p;
    t.epoch = ps.epoch;
    if (k) t.pdu = k->tag;
    ++stats_.frames;
    ++stats_.frames_per_port[p];
    const trace_kind kind = !k        ? trace_kind::ack
                            : k->sent ? trace_kind::retransmit
                                      : trace_kind::transmit;
    if (k) {
      if (k->sent) ++stats_.retransmissions;
      k->sent = true;
    }
    if (op == wire::rh_op::ack) ++stats_.acks;
    if (op == wire::rh_op::nack) ++stats_.nacks;
    if (trace_sink_) {
      trace_event te{.kind = kind,
                     .at = now_,
                     .xpu = x,
                     .port = p,
                     .peer = cs.peer,
                     .vc = rh.vc,
                     .psn = rh.npsn,
                     .frame = frames_.bytes(f)};
      if (k) trace(te);
      if (op == wire::rh_op::ack || op == wire::rh_op::nack) {
        te.kind = op == wire::rh_op::ack ? trace_kind::ack : trace_kind::nack;
        te.psn = rh.apsn;
        trace(te);
      }
    }
    ps.busy_until = std::max(now_, ps.busy_until) + serialise(r.value);
    cross(f, hop::up, x, p, ps.busy_until, ps.busy_until + delay_of(x, p));
    if (!ps.acks.empty() || !ps.resend.empty() || xpus_[x].ports[lane(p)].queued_streams > 0 ||
        extra_)
      pump(x, p);
  }

  // A misbehaving sender (misbehaviour::gbn_resend) leaves out the first PSN of a go-back, once
  // in a run: its resend starts past the oldest unacknowledged PSN. More of the run follows.
  bool skip_resend(bool more, transport::psn<16> psn, transport::psn<16> una) {
    if (misbehaved_ || cfg_.misbehave != misbehaviour::gbn_resend) return false;
    if (psn != una || !more) return false;
    misbehaved_ = true;
    return true;
  }

  // The extra RH a misbehaving receiver sends after this ACK or NACK, once in a run.
  void misbehave_after(std::uint32_t c, wire::rh_op op, transport::psn<16> apsn) {
    if (misbehaved_ || cfg_.misbehave == misbehaviour::none) return;
    const bool ack = op == wire::rh_op::ack;
    switch (cfg_.misbehave) {
      case misbehaviour::ack_unsent:
        if (!ack) return;
        extra_ = extra_rh{c, op, conns_[conns_[c].far].m.tx.next + 1000};
        break;
      case misbehaviour::ack_monotonic:
        if (!ack) return;
        extra_ = extra_rh{c, op, apsn - 1};
        break;
      case misbehaviour::nack_once:
        if (ack) return;
        extra_ = extra_rh{c, op, apsn};
        break;
      case misbehaviour::gbn_resend:  // a sender's (skip_resend)
      case misbehaviour::none:
        return;
    }
    misbehaved_ = true;
  }

  // A frame enters a link: the link model decides what arrives where and when.
  void cross(std::uint32_t f, hop h, std::uint16_t xpu, std::uint8_t port, std::uint64_t sent,
             std::uint64_t arrival) {
    const ev kind = h == hop::up ? ev::at_switch : ev::at_xpu;
    if (perfect_links_) {  // the default model with nothing to draw: every frame arrives
      schedule(std::max(arrival, now_), kind, xpu, port, f);
      return;
    }
    frame_tag& t = tag_of(f);
    const link_verdict v =
        links_->on_frame(link_frame{sent, arrival, xpu, port, h, frames_.bytes(f), t.pdu});
    if (v.what == link_verdict::fate::drop) {
      ++stats_.lost;
      drop(f, drop_reason::link_model, h, xpu, port);
      return;
    }
    if (v.what == link_verdict::fate::take) {
      release_frame(f);
      return;
    }
    if (v.flips > 0) {
      std::uint8_t* b = frames_.data(f);
      const std::size_t bits = frames_.size(f) * 8;
      for (std::uint8_t i = 0; i < v.flips && i < link_verdict::max_flips; ++i)
        if (v.flip[i] < bits)
          b[v.flip[i] / 8] ^= static_cast<std::uint8_t>(0x80u >> (v.flip[i] % 8));
      t.read_valid = false;
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

  // ---- the switch ------------------------------------------------------------------------
  void at_switch(std::uint32_t f) {
    frame_tag& t = tag_of(f);
    if (t.epoch != xpus_[t.from].ports[t.port].epoch) {
      ++stats_.dropped_link_down;
      drop(f, drop_reason::link_down, hop::up, t.from, t.port);
      return;
    }
    if (wire_sink_) wire_sink_(now_, frames_.bytes(f));
    // A switch forwards on the destination the frame carries; the receiver's reading of the
    // same bytes is kept, unless the way down changes them.
    read_into(f, t);
    if (t.dst >= cfg_.xpus) {
      ++stats_.misaddressed;
      drop(f, drop_reason::unroutable, hop::up, t.from, t.port);
      return;
    }
    t.to = static_cast<std::uint16_t>(t.dst);
    const port_state& out = xpus_[t.to].ports[t.port];  // same plane
    if (!out.up) {
      ++stats_.dropped_link_down;
      drop(f, drop_reason::link_down, hop::down, t.to, t.port);
      return;
    }
    // The egress port serialises frames in the order they leave the switch: FIFO per plane
    // and destination, and frames converging on one XPU queue behind each other (incast).
    std::uint64_t& egress = egress_busy_[std::size_t{t.to} * max_ports + t.port];
    egress = std::max(now_ + cfg_.switch_delay, egress) + serialise(frames_.size(f));
    t.epoch = out.epoch;
    cross(f, hop::down, t.to, t.port, egress, egress + delay_of(t.to, t.port));
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
    if (!t.read_valid) read_into(f, t);
    if (!t.good) {
      ++stats_.bad_rcrc;
      drop(f, drop_reason::bad_rcrc, hop::down, to, p);
      return;
    }
    const wire::reliability_header rh = t.rh;
    if (t.dst != to || rh.xpuid >= cfg_.xpus || rh.xpuid == to || rh.vc >= cfg_.vcs) {
      ++stats_.misaddressed;
      drop(f, drop_reason::misaddressed, hop::down, to, p);
      return;
    }
    const std::uint16_t peer = rh.xpuid;
    // The sender named this end of the connection; a frame from elsewhere is looked up.
    const std::uint32_t c = t.rx_conn != none && conns_[t.rx_conn].xpu == to &&
                                    conns_[t.rx_conn].port == p && conns_[t.rx_conn].peer == peer &&
                                    conns_[t.rx_conn].vc == vc_key(rh.vc)
                                ? t.rx_conn
                                : conn_of(to, p, peer, rh.vc);
    const pdu_tag tag = t.pdu;
    const wire::bytes payload(frames_.data(f) + t.payload_at, t.payload_len);
    // The reverse direction's acknowledgement, carried in this RH.
    if (rh.op == 0 || rh.op == 1) {
      const auto in = rh.op == 0 ? transport::sender_input::ack : transport::sender_input::nack;
      auto [tx, act] =
          step(conns_[c].m.tx, transport::sender_event<16>{in, transport::psn<16>(rh.apsn)}, now_,
               cfg_.gbn);
      conns_[c].m.tx = tx;
      apply_sender(c, act);
    }
    if (payload.empty()) {  // an RH-only ACK/NACK: no PDU of its own
      release_frame(f);
      return;
    }
    connection_state& cs = conns_[c];
    auto [rx, ract] = step(cs.m.rx,
                           transport::receiver_event<16>{transport::receiver_input::pdu,
                                                         transport::psn<16>(rh.npsn), true},
                           now_, cfg_.gbn);
    cs.m.rx = rx;
    if (ract.deliver) {
      deliver(to, rh.vc, tag, payload);
    } else if (trace_sink_) {
      trace(trace_event{.kind = trace_kind::drop,
                        .at = now_,
                        .xpu = to,
                        .port = p,
                        .peer = peer,
                        .vc = rh.vc,
                        .psn = rh.npsn,
                        .reason = ract.dropped == transport::drop_reason::duplicate
                                      ? drop_reason::duplicate
                                      : drop_reason::gap,
                        .where = hop::down,
                        .frame = frames_.bytes(f)});
    }
    if (ract.ack_now) queue_ack(c);
    arm(c);
    release_frame(f);
  }

  // Hands a PDU's commands to XPU `to`, checking them against the PDU's tag: exactly once, and
  // in order per {source, destination, VC} in strict mode.
  void deliver(std::uint16_t to, std::uint8_t vc, const pdu_tag& tag, wire::bytes payload) {
    if (tag.stream == none || tag.stream >= streams_.size()) {
      ++stats_.mismatched;
      return;
    }
    stream_state& st = streams_[tag.stream];
    if (st.dst != to || st.vc != vc) ++stats_.mismatched;
    pack::unpacker u(*cfg_.profile, payload);
    pack::command_view cv;
    for (std::uint32_t i = 0; i < tag.count; ++i) {
      if (!u.next(cv)) {
        ++stats_.mismatched;
        break;
      }
      const std::uint64_t seq = tag.first_seq + i;
      if (seq < st.base || st.entries[seq - st.base].delivered) {
        ++stats_.duplicates;
        continue;
      }
      command_entry& e = st.entries[seq - st.base];
      if (e.size != cv.size()) ++stats_.mismatched;
      e.delivered = true;
      // Strict mode keeps order per {source, destination, VC}; unordered mode does not
      // promise it across ports (R2 1.2), only per connection, which go-back-N guarantees.
      if (seq != st.base && !cfg_.unordered) ++stats_.out_of_order;
      ++stats_.delivered;
      stats_.delivered_bytes += cv.size();
      stats_.last_delivery = now_;
      if (delivery_sink_)
        delivery_sink_(delivery{e.offered_at, now_, st.src, st.dst, st.vc, seq,
                                wire::bytes(cv.control.data(), cv.size())});
      while (!st.entries.empty() && st.entries.front().delivered) {
        st.entries.pop_front();
        ++st.base;
      }
    }
    if (u.next(cv) || u.error_found()) ++stats_.mismatched;  // more, or other, than packed
  }

  void apply_sender(std::uint32_t c, const transport::sender_actions<16>& a) {
    // By value: waking streams may add connections, and conns_ may move.
    const std::uint16_t x = conns_[c].xpu, peer = conns_[c].peer;
    const std::uint8_t p = conns_[c].port, vc = conns_[c].vc;
    ring<kept_pdu>& kept = conns_[c].kept;
    for (std::uint32_t i = 0; i < a.released && !kept.empty(); ++i) {
      release(kept.front());
      kept.pop_front();
    }
    if (a.resend > 0)
      xpus_[x].ports[p].resend.push_back(
          resend_run{c, a.resend_from.value, static_cast<std::uint16_t>(a.resend)});
    if (a.released > 0) {
      drain_backlog(c);
      wake(c);
    }
    if (a.unreachable) {
      ++stats_.unreachable;
      trace(trace_event{.kind = trace_kind::unreachable,
                        .at = now_,
                        .xpu = x,
                        .port = p,
                        .peer = peer,
                        .vc = vc});
      start_failover(c);
    }
    pump(x, p);
  }

  void queue_ack(std::uint32_t c) {
    connection_state& cs = conns_[c];
    if (!cs.ack_queued) {
      cs.ack_queued = true;
      xpus_[cs.xpu].ports[cs.port].acks.push_back(c);
    }
    pump(cs.xpu, cs.port);
  }

  // ---- timers ----------------------------------------------------------------------------
  // One timer event per connection at its earliest deadline; a stale one finds nothing to do.
  void arm(std::uint32_t c) {
    connection_state& cs = conns_[c];
    const std::uint64_t d = transport::next_deadline(cs.m.tx, cs.m.rx);
    if (d == 0) return;
    if (cs.tick_at == 0 || d < cs.tick_at || cs.tick_at <= now_) {
      // Never at the present instant again: a deadline that is due has been handled.
      cs.tick_at = std::max(d, now_ + 1);
      schedule(cs.tick_at, ev::tick, 0, 0, c);
    }
  }

  void on_tick(std::uint32_t c, std::uint64_t at) {
    connection_state& cs = conns_[c];
    if (cs.tick_at != at) return;
    cs.tick_at = 0;
    const std::uint64_t d = transport::next_deadline(cs.m.tx, cs.m.rx);
    if (d != 0 && d <= now_) {
      auto [tx, act] = step(cs.m.tx, transport::sender_event<16>{transport::sender_input::tick, {}},
                            now_, cfg_.gbn);
      cs.m.tx = tx;
      auto [rx, ract] =
          step(cs.m.rx, transport::receiver_event<16>{transport::receiver_input::tick, {}, true},
               now_, cfg_.gbn);
      cs.m.rx = rx;
      if (ract.ack_now) queue_ack(c);
      apply_sender(c, act);
    }
    arm(c);
  }

  // ---- link status and failover (R2 3.5.8) -----------------------------------------------
  void on_link(const link_event& l) {
    if (l.xpu >= cfg_.xpus || l.port >= cfg_.ports) return;
    xpu_state& xs = xpus_[l.xpu];
    port_state& ps = xs.ports[l.port];
    if (ps.up == l.up) return;
    ps.up = l.up;
    trace(trace_event{.kind = l.up ? trace_kind::link_up : trace_kind::link_down,
                      .at = now_,
                      .xpu = l.xpu,
                      .port = l.port});
    if (l.up) {
      // Work stranded while no port was usable restarts now.
      for (const std::uint32_t c : xs.conns) {
        const connection_state& cs = conns_[c];
        if (cs.m.tx.in_flight() > 0 && (!xs.ports[cs.port].up || cs.m.tx.unreachable))
          start_failover(c);
      }
      unstrand(l.xpu);
      for (std::uint8_t p = 0; p < cfg_.ports; ++p) pump(l.xpu, p);
      return;
    }
    ++ps.epoch;  // everything on this link is lost
    ps.busy_until = now_;
    for (std::size_t i = 0; i < ps.acks.size(); ++i) conns_[ps.acks[i]].ack_queued = false;
    ps.acks.clear();
    ps.resend.clear();
    // Strict mode: streams waiting for this port go to another. (Unordered ports share
    // lists, which the ports still up keep serving.)
    std::vector<std::uint32_t> moved;
    if (!cfg_.unordered) {
      for (auto& list : ps.ready) {
        while (!list.empty()) {
          moved.push_back(list.front());
          list.pop_front();
        }
      }
      ps.queued_streams = 0;
    }
    // Link down: every connection of this port moves its outstanding work now.
    const std::vector<std::uint32_t> conns = xs.conns;
    for (const std::uint32_t c : conns)
      if (conns_[c].port == l.port) {
        if (conns_[c].m.tx.in_flight() > 0) start_failover(c);
        wake(c);
      }
    for (const std::uint32_t s : moved)
      if (streams_[s].where == ready && streams_[s].ready_on == l.port) make_ready(s);
  }

  // Moves a connection's outstanding work to another usable port (the same one, once it is up
  // again, when there is no other). Without a usable port the work waits for a link to come up.
  void start_failover(std::uint32_t c) {
    connection_state& cs = conns_[c];
    if (cs.failing) return;  // already on its way
    for (std::uint8_t i = 1; i <= cfg_.ports; ++i) {
      const auto to = static_cast<std::uint8_t>((cs.port + i) % cfg_.ports);
      if (!xpus_[cs.xpu].ports[to].up) continue;
      // Ask the peer, over the surviving plane (a management exchange, R2 3.1), how far it got
      // on the failed connection: one round trip.
      cs.failing = true;
      ++xpus_[cs.xpu].failing;
      const std::uint32_t ref = failovers_.add(failover_move{c, to});
      schedule(now_ + 2 * (delay_of(cs.xpu, to) + delay_of(cs.peer, to) + cfg_.switch_delay),
               ev::failover, cs.xpu, to, ref);
      return;
    }
  }

  void on_failover(std::uint32_t ref) {
    const failover_move mv = failovers_[ref];
    failovers_.remove(ref);
    const std::uint32_t c = mv.conn;
    const std::uint16_t x = conns_[c].xpu, peer = conns_[c].peer;
    const std::uint8_t from = conns_[c].port, vk = conns_[c].vc;
    const std::uint32_t far = conn_of(peer, from, x, vk);
    const std::uint32_t to = conn_of(x, mv.to, peer, vk);
    connection_state& cs = conns_[c];
    // What the peer delivered on the failed connection is done; the rest moves. Reading the
    // peer's expected PSN and restarting both ends happen at one instant, so nothing that
    // arrives late on the old connection can be delivered as well as moved.
    const transport::psn<16> expected = conns_[far].m.rx.expected;
    std::uint32_t moved = 0;
    transport::psn<16> p = cs.m.tx.una;
    for (std::size_t i = 0; i < cs.kept.size(); ++i, ++p) {
      kept_pdu k = cs.kept[i];
      if (before(p, expected)) {
        release(k);
        continue;
      }
      k.sent = false;  // transmitted anew on its new connection
      conns_[to].backlog.push_back(k);
      ++moved;
      // Strict mode: a stream whose PDUs moved follows them, so its newer ones come after.
      if (!cfg_.unordered && k.tag.stream < streams_.size()) streams_[k.tag.stream].pin = mv.to;
    }
    cs.kept.clear();
    // Restart both ends far ahead of anything still in flight: late arrivals are duplicates.
    const transport::psn<16> base = cs.m.tx.next + 2 * cfg_.gbn.window;
    cs.m.tx = transport::gbn_sender<16>{};
    cs.m.tx.next = cs.m.tx.una = base;
    conns_[far].m.rx = transport::gbn_receiver<16>{};
    conns_[far].m.rx.expected = base;
    cs.failing = false;
    --xpus_[x].failing;
    ++stats_.failovers;
    stats_.moved += moved;
    trace(trace_event{.kind = trace_kind::failover,
                      .at = now_,
                      .xpu = x,
                      .port = from,
                      .peer = peer,
                      .vc = vk,
                      .to_port = mv.to,
                      .moved = moved});
    // Strict mode: so do the connection's streams pinned to the failed port with nothing in
    // flight (a stream of another VC pinned elsewhere stays: its PDUs are there).
    if (!cfg_.unordered)
      for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc)
        if (vc_key(vc) == vk)
          if (const std::uint32_t s =
                  stream_index_.find((std::uint64_t{x} * max_xpus + peer) * max_vcs + vc);
              s != index_map::absent && streams_[s].pin == from)
            streams_[s].pin = mv.to;
    drain_backlog(to);
    wake(c);
    unstrand(x);
    arm(to);
    for (std::uint8_t q = 0; q < cfg_.ports; ++q) pump(x, q);
  }

  // Moved PDUs take PSNs on their new connection as its window allows, in order, and go out.
  void drain_backlog(std::uint32_t c) {
    connection_state& cs = conns_[c];
    if (cs.backlog.empty()) return;
    const transport::psn<16> first = cs.m.tx.next;
    std::uint16_t n = 0;
    while (!cs.backlog.empty()) {
      auto [tx, act] = step(cs.m.tx, transport::sender_event<16>{transport::sender_input::send, {}},
                            now_, cfg_.gbn);
      if (!act.assigned) break;
      cs.m.tx = tx;
      cs.kept.push_back(cs.backlog.front());
      cs.backlog.pop_front();
      ++n;
    }
    if (n > 0) xpus_[cs.xpu].ports[cs.port].resend.push_back(resend_run{c, first.value, n});
    if (cs.backlog.empty()) wake(c);
  }

  fabric_config cfg_;
  std::unique_ptr<link_model> own_links_;
  link_model* links_ = nullptr;
  double port_ns_per_byte_ = 0;
  std::vector<xpu_state> xpus_;
  std::vector<std::uint64_t> egress_busy_;  // per destination XPU and plane
  std::vector<connection_state> conns_;
  index_map conn_index_;
  std::vector<stream_state> streams_;
  index_map stream_index_;
  slot_pool<pending_offer> offers_;     // waiting for their time
  slot_pool<failover_move> failovers_;  // moves under way
  buffer_pool<frame_tag> frames_;       // frames in flight, each with its tag
  buffer_pool<> bytes_;                 // kept PDUs' payloads, commands waiting to be packed
  // fabric_config::misbehave: the extra RH due, and whether it was sent.
  std::optional<extra_rh> extra_;
  bool misbehaved_ = false;
  bool perfect_links_ = false;  // the default model, all its probabilities 0
  event_queue<event> events_;
  event_queue<event> offer_queue_;
  std::uint64_t now_ = 0;
  fabric_stats stats_;
  frame_sink wire_sink_;
  delivery_sink delivery_sink_;
  trace_sink trace_sink_;
};

}  // namespace scaleup::sim
