// One XPU's SUE instance (R2 4.2, Fig. 18; SUE Lite R2 4.3, Fig. 19) as one component: commands
// in, frames out, frames in, commands delivered; time an input, nothing done behind the caller's
// back. Built from the library's own parts, each unchanged and tested on its own:
//
//   commands    typed commands (control + data, checked against the command profile); the
//               signal interface's beats and the AXI mapping convert into them (instance_io.hpp)
//   packing     pack::packer: one queue per {destination, VC}, weighted round robin across VCs,
//               arrival order within a VC (R2 4.2 step 3), never waiting to fill a PDU (R2 4.5);
//               one packer per port in strict mode (a stream is pinned to a port), one shared by
//               every port in unordered mode (R2 4.4: each PDU to the port that is free)
//   transport   go-back-N (go_back_n.hpp) per connection {port, peer, VC} (or {port, peer}, R1's
//               keying), the RH carrying the ACK or NACK the receiver owes (R2 4.2 step 4), a
//               stand-alone RH-only PDU when nothing else carries it; partitions (R2 Table 5)
//   the link    per port a link_port: LLR (R2 3.5.5), CBFC per class with credits returned by the
//               link peer (R2 3.5.7), PFC obeyed (R2 3.5.6); link status (R2 3.5.8)
//   failover    a plane that stops reaching a peer (go-back-N's retry limit, the link status) is
//               remembered as such until the link status says otherwise; its work moves to a
//               plane that reaches the peer through the failover exchange (wire/failover.hpp); a
//               peer no plane reaches past `unreachable_after` is declared unreachable: its
//               commands fail with errc::unreachable (the XPU's SLVERR on AXI) and nothing more is
//               resent
//   management  packets the XPU builds go out with an FCS at the management rate, merged into the
//               data path (R2 4.2 step 3a); frames that are not SUE's are demultiplexed to it on
//               receive (step 7); registers (link status, congestion state, counters, R2 3.1)
//
// The caller owns the wire and the clock. step(now, event) takes one event: a command, a frame
// that arrived on a port (with what its link layer carried beside it), a port free to transmit
// (the frame is written into the caller's buffer), a link-layer message, a change of link
// status, a management packet, or the passing of time; deadline() says when to step again with
// nothing else to do, and ready_ports() which ports have something to send. Everything else the
// instance has to say (commands completed or failed, drops, failovers, the link messages for the
// link peer) goes to the notes sink, as it happens.
//
// Sizing (instance_sizing): peers, ports, VCs, window and the pools are compile-time bounds; with
// pack::fixed_storage everything is inside the object (a firmware's one peer), with
// pack::heap_storage tables grow from the caller's allocator as a run uses them, so a fabric
// of 1024 XPUs holds state for the connections it uses only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "scaleup/pack/binary_heap.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"
#include "scaleup/pack/receive.hpp"
#include "scaleup/pack/storage.hpp"
#include "scaleup/transport/byte_pool.hpp"
#include "scaleup/transport/congestion.hpp"
#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/transport/link_port.hpp"
#include "scaleup/transport/management.hpp"
#include "scaleup/transport/partition.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/transport/sue_frame.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::transport {

// ---- sizing ----------------------------------------------------------------------------------

// Compile-time bounds of an instance: peers it keeps state for, ports, VCs, PDUs in flight per
// connection, payload bytes per PDU, commands queued at once, PDUs kept for retransmission at
// once, and per port LLR's replay store (frames, bytes); and where the tables live.
template <std::size_t Peers, std::size_t Ports, std::size_t VCs, std::size_t Window,
          std::size_t MaxPayload, std::size_t Commands, std::size_t Kept, std::size_t ReplayFrames,
          std::size_t ReplayBytes, pack::storage_kind Storage>
struct instance_sizing {
  static_assert(Peers >= 1 && Peers <= 1023, "1 to 1023 peers: the RH's xpuid has 10 bits");
  static_assert(Ports == 1 || Ports == 2 || Ports == 4, "1, 2 or 4 ports (R2 Table 1)");
  static_assert(VCs >= 1 && VCs <= 4, "up to 4 VCs (R2 Table 1)");
  static_assert(Window >= 1 && Window < psn<16>::half, "a window below half the PSN space");
  static_assert(MaxPayload >= pack::max_command_bytes && MaxPayload <= wire::sue_max_payload,
                "a PDU holds at least one largest command and at most 4096 bytes (R2 3.3)");
  static constexpr std::size_t peers = Peers;
  static constexpr std::size_t ports = Ports;
  static constexpr std::size_t vcs = VCs;
  static constexpr std::size_t window = Window;
  static constexpr std::size_t max_payload = MaxPayload;
  static constexpr std::size_t commands = Commands;
  static constexpr std::size_t kept = Kept;
  static constexpr std::size_t replay_frames = ReplayFrames;
  static constexpr std::size_t replay_bytes = ReplayBytes;
  using storage = Storage;
};

// A firmware's instance: one peer, one port, 2 VCs, 8 PDUs in flight of up to 256 bytes, 16
// commands queued; no heap.
using firmware_sizing = instance_sizing<1, 1, 2, 8, 274, 16, 16, 8, 4096, pack::fixed_storage>;
// A fabric's: any of 1023 peers on 4 ports and 4 VCs, the default window and limit; tables grown
// as used.
using fabric_sizing =
    instance_sizing<1023, 4, 4, 256, wire::sue_max_payload, 16384, std::size_t{1023} * 4 * 4 * 256,
                    256, 256 * 1024, pack::heap_storage>;

// ---- configuration -----------------------------------------------------------------------------

// An instance that breaks one conformance rule once (docs/conformance.md), so that a capture of
// it tests `scaleup check` and the plugin's sue.check expert infos. As a receiver, right after an
// ACK or NACK it sends one stand-alone RH more that a conformant receiver never sends (its peer's
// go-back-N ignores it: an ACK from the past or the future changes nothing, a second NACK of the
// same PSN goes back where the first did). As a sender, one go-back leaves out its first PSN,
// which the receiver, waiting for it, never ACKs until the timeout resends it.
enum class misbehaviour : std::uint8_t {
  none,
  ack_unsent,     // an ACK of a PSN 1000 beyond the last delivered: never sent
  ack_monotonic,  // after an ACK, one of the PSN before it: apsn moves backwards
  nack_once,      // after a NACK, the same NACK again: a gap NACKed twice
  gbn_resend,     // a sender's go-back that leaves out its first PSN (the timeout repairs it)
};

struct instance_config {
  std::uint16_t xpuid = 0;  // this XPU (the RH's xpuid, 10 bits)
  std::uint8_t ports = 1;   // 1, 2 or 4 (R2 Table 1); at most the sizing's
  std::uint8_t vcs = 2;     // requests on VC0, responses on VC1 (R2 3.2.2); at most the sizing's
  bool unordered = false;   // spread PDUs over ports (R2 4.4); needs more than one port
  bool lite = false;        // SUE Lite (R2 2.2, 3.4): no RH, no go-back-N, LLR only
  // The encapsulation and its parameters (kind, UDP ports, VLAN, AFH prefix...); the XPU ids and
  // the traffic class are set per frame. SUE Lite: encap::lite.
  wire::frame_params frame{};
  const pack::profile* profile = &pack::default_profile;
  // Payload bytes per PDU (R2 3.3: 4096; SUE Lite 1024); 0: the most the sizing holds.
  std::size_t pack_limit = 0;
  std::array<std::uint16_t, 4> weights{1, 1, 1, 1};  // WRR across VCs (R2 4.2 step 3)
  gbn_config gbn{};
  keying keys = keying::port_peer_vc;
  std::uint16_t partition = 0;  // in every RH this instance sends
  // Which partitions each source may use towards this XPU (R2 4.1); none: only our own.
  const partition_table<>* partitions = nullptr;
  // The traffic class of each VC on the wire and of stand-alone acknowledgements (R2 3.5.6).
  pfc_config priorities{};
  link_config link{};  // LLR, CBFC, PFC on every port
  // Flow control at the command interface (R2 3.2.1: "per {destination, VC} basis and on an
  // aggregate rate basis using a credit mechanism"): commands queued per {destination, VC} and in
  // all; 0: as many as the pool holds.
  std::uint32_t credits_per_destination = 0;
  std::uint32_t credits_aggregate = 0;
  // How long a peer may be unreachable on every plane before its commands fail (R2 3.5.8 gives
  // no time: the default covers a link that retrains, a millisecond).
  std::uint64_t unreachable_after = 1'000'000;
  management_config management{};
  misbehaviour misbehave = misbehaviour::none;  // once
};

// ---- events and what a step does ----------------------------------------------------------------

enum class instance_input : std::uint8_t {
  command,       // a command for `peer` on `vc`: control then data (copied), send_now
  frame,         // `bytes` arrived on `port`, with `link` (LLR sequence, class, FCS verdict)
  transmit,      // `port` can take a frame now: the next one is written into `out`
  link_message,  // the link peer of `port` sent `message` (LLR ACK/NACK, credits)
  link_status,   // `port`'s link went `up` or down
  peer_status,   // `peer`'s port `port` (its plane) went `up` or down, as the fabric reports it
  management,    // the XPU sends `bytes` (an Ethernet frame without FCS) on the management path
  tick,          // time passed
};

struct instance_event {
  instance_input input = instance_input::tick;
  std::uint8_t port = 0;
  std::uint16_t peer = 0;
  std::uint8_t vc = 0;
  bool send_now = false;  // command: close the PDU after it (R2 4.3 step 2)
  bool up = true;
  wire::bytes control{};            // command
  wire::bytes data{};               // command
  wire::bytes bytes{};              // frame, management
  link_info link{};                 // frame
  const sue_frame* read = nullptr;  // frame: the caller's reading of it, if it has one
  wire::mutable_bytes out{};        // transmit
  link_message message{};           // link_message

  static constexpr instance_event command(std::uint16_t peer, std::uint8_t vc, wire::bytes control,
                                          wire::bytes data = {}, bool send_now = false) noexcept {
    instance_event e;
    e.input = instance_input::command;
    e.peer = peer;
    e.vc = vc;
    e.control = control;
    e.data = data;
    e.send_now = send_now;
    return e;
  }
  static constexpr instance_event frame(std::uint8_t port, wire::bytes bytes,
                                        const link_info& link = {}) noexcept {
    instance_event e;
    e.input = instance_input::frame;
    e.port = port;
    e.bytes = bytes;
    e.link = link;
    return e;
  }
  static constexpr instance_event transmit(std::uint8_t port, wire::mutable_bytes out) noexcept {
    instance_event e;
    e.input = instance_input::transmit;
    e.port = port;
    e.out = out;
    return e;
  }
  static constexpr instance_event message_in(std::uint8_t port, const link_message& m) noexcept {
    instance_event e;
    e.input = instance_input::link_message;
    e.port = port;
    e.message = m;
    return e;
  }
  static constexpr instance_event link_status(std::uint8_t port, bool up) noexcept {
    instance_event e;
    e.input = instance_input::link_status;
    e.port = port;
    e.up = up;
    return e;
  }
  static constexpr instance_event peer_status(std::uint16_t peer, std::uint8_t port,
                                              bool up) noexcept {
    instance_event e;
    e.input = instance_input::peer_status;
    e.peer = peer;
    e.port = port;
    e.up = up;
    return e;
  }
  static constexpr instance_event management_packet(wire::bytes frame) noexcept {
    instance_event e;
    e.input = instance_input::management;
    e.bytes = frame;
    return e;
  }
  static constexpr instance_event tick() noexcept { return {}; }
};

enum class frame_kind : std::uint8_t {
  none,
  pdu,             // a data PDU's first transmission on its connection
  retransmission,  // a data PDU sent again (go-back-N)
  ack,             // a stand-alone RH-only PDU carrying an ACK or NACK
  control,         // a failover request or reply
  management,      // a packet of the XPU's management path
  lite,            // a SUE Lite frame
  replay,          // a frame sent again by LLR
  pfc,             // a PFC frame
};

// What a transmit step wrote into the caller's buffer.
struct instance_frame {
  std::size_t size = 0;  // bytes written (0: nothing to send on this port now)
  frame_kind kind = frame_kind::none;
  std::uint16_t peer = 0;
  std::uint8_t vc = 0;
  std::uint16_t psn = 0;               // pdu, retransmission: its PSN
  wire::rh_op op = wire::rh_op::none;  // the acknowledgement its RH carries
  std::uint16_t apsn = 0;
  std::uint64_t first_seq = 0;  // pdu, retransmission, lite: the commands it carries,
  std::uint32_t commands = 0;   // numbered per {peer, VC} in offer order
  bool moved = false;           // pdu: first sent on this connection, moved here by a failover
  link_info link{};             // what travels with it below the capture
};

// What an arriving frame delivered to the XPU: a PDU's payload (commands, for pack::unpacker),
// or a management packet. The view is into the event's bytes: valid while they are.
struct instance_delivery {
  bool valid = false;
  bool management = false;
  std::uint16_t src = 0;
  std::uint8_t vc = 0;
  std::uint8_t port = 0;
  wire::bytes payload{};
};

struct instance_actions {
  wire::error error{};            // the event was refused: what and why
  std::uint64_t seq = 0;          // command: its number in {peer, VC}, 0, 1, 2, ... in offer order
  instance_frame frame{};         // transmit
  instance_delivery delivered{};  // frame
};

// Why an arriving frame was not delivered.
enum class instance_drop : std::uint8_t {
  none,
  link_down,     // the port is down
  link,          // the link layer refused it: bad FCS, or LLR (out of sequence, a duplicate)
  bad_rcrc,      // no good R-CRC: corrupted, or no SUE PDU in it
  misaddressed,  // not for this XPU, or from an XPU that cannot be
  version,       // an RH of another version
  partition,     // a partition not allowed for its source (R2 4.1)
  duplicate,     // go-back-N: a PSN already delivered (re-ACKed); a failover request overtaken
  gap,           // go-back-N: a PSN after a missing one (NACKed once per gap)
  no_room,       // a peer beyond the sizing's
  management,    // a management packet whose FCS is bad
};

enum class note_kind : std::uint8_t {
  completed,         // peer, vc, first_seq, count: acknowledged by the peer (R2 4.1)
  failed,            // peer, vc, first_seq, count, error: will not be delivered
  dropped,           // port, peer, vc, psn, why: an arriving frame not delivered
  unreachable,       // port, peer, vc: go-back-N's retry limit on this plane
  peer_unreachable,  // peer: no plane reached it for unreachable_after; its work failed
  peer_reachable,    // peer: a plane reaches it again
  failover,          // port, to_port, peer, vc (key), count: PDUs moved to another connection
  link_message,      // port, message: for the link peer of `port`
  link_down,         // port: the link status went down, or LLR gave up on the link
  link_up,           // port
  ack_in,            // port, peer, vc, psn: an ACK arrived (apsn in psn)
  nack_in,           // port, peer, vc, psn: a NACK arrived
};

struct instance_note {
  note_kind kind = note_kind::completed;
  std::uint8_t port = 0;
  std::uint8_t to_port = 0;
  std::uint8_t vc = 0;
  std::uint16_t peer = 0;
  std::uint16_t psn = 0;
  std::uint64_t first_seq = 0;
  std::uint32_t count = 0;
  instance_drop why = instance_drop::none;
  wire::error error{};
  link_message message{};
};

// Where notes go: a function and its context (C and test benches pass their own).
struct note_sink {
  void* context = nullptr;
  void (*call)(void* context, const instance_note& n) = nullptr;
};

struct instance_stats {
  std::uint64_t commands = 0, refused = 0;  // commands accepted, refused
  std::uint64_t pdus = 0, retransmissions = 0, acks_only = 0, frames = 0;
  std::uint64_t acks_sent = 0, nacks_sent = 0;
  std::uint64_t delivered = 0, delivered_bytes = 0;  // PDUs (Lite frames) delivered, payload bytes
  std::uint64_t completed = 0, failed = 0;           // commands
  std::uint64_t dropped = 0, duplicates = 0, gaps = 0, bad_rcrc = 0, partition = 0;
  std::uint64_t unreachable = 0;  // retry limits hit (per connection and plane)
  std::uint64_t peers_unreachable = 0;
  std::uint64_t failovers = 0, moved = 0, control_sent = 0;
  std::uint64_t management_sent = 0, management_received = 0, management_refused = 0;
};

// Register map (R2 3.1 "Register access is provided"): 32-bit words.
namespace reg {
inline constexpr std::uint32_t id = 0x000;          // xpuid(10) | ports(3) << 16 | vcs(3) << 20 |
                                                    // unordered << 24 | lite << 25
inline constexpr std::uint32_t congestion = 0x004;  // the congestion_state word (R2 4.4)
inline constexpr std::uint32_t peers_unreachable = 0x008;  // peers declared unreachable now
inline constexpr std::uint32_t port_base = 0x100;          // + port * port_stride:
inline constexpr std::uint32_t port_stride = 0x40;
inline constexpr std::uint32_t link_status = 0x00;  // bit 0 up, bit 1 LLR gave up, bit 2 LLR on,
                                                    // bit 3 CBFC on (writable: bit 0 sets it)
inline constexpr std::uint32_t frames_sent = 0x04;
inline constexpr std::uint32_t frames_received = 0x08;
inline constexpr std::uint32_t llr_replays = 0x0C;
inline constexpr std::uint32_t credit_stalls = 0x10;
inline constexpr std::uint32_t pfc_paused = 0x14;
inline constexpr std::uint32_t credits = 0x20;  // + 4 * VC: CBFC credits the port holds for it
}  // namespace reg

// ---- the instance
// --------------------------------------------------------------------------------

template <class Sizing>
class sue_instance {
  using S = typename Sizing::storage;
  static constexpr std::size_t max_ports = Sizing::ports;
  static constexpr std::size_t max_vcs = Sizing::vcs;
  static constexpr std::size_t max_peers = Sizing::peers;
  static constexpr std::size_t max_conns = max_peers * max_ports * max_vcs;
  static constexpr std::size_t owners =
      max_ports + 2 * (max_conns > max_peers ? max_conns : max_peers);
  static constexpr std::uint32_t nil = 0xFFFFFFFFu;
  static constexpr std::uint16_t no_peer = 0xFFFF;
  static constexpr std::uint8_t no_port = 0xFF;
  // Management packets waiting for the management rate: 16 a port, or 2 for a firmware's one
  // peer (2 KiB each, and a microcontroller has tens of KiB of RAM in all).
  static constexpr std::size_t mgmt_slots = max_peers == 1 ? 2 * max_ports : 16 * max_ports;
  static constexpr std::size_t mgmt_bytes = 2048;
  static constexpr std::size_t max_frame = 64 + wire::pdu_size(Sizing::max_payload);

  using packer_t = pack::packer<max_peers, max_vcs, Sizing::commands, S>;
  using link_t = link_port<Sizing::replay_frames, Sizing::replay_bytes, S>;

 public:
  using sizing = Sizing;

  explicit sue_instance(const instance_config& c, const pack::allocator& mem = {}) noexcept
      : cfg_(resolved(c)),
        peer_of_(mem),
        peers_(mem),
        conns_(mem),
        kept_(mem),
        cmd_meta_(mem),
        cmd_bytes_(mem),
        kept_bytes_(mem),
        mgmt_bytes_(mem),
        packers_(make_packers(resolved(c), mem, std::make_index_sequence<max_ports>{})),
        ports_(make_ports(mem, std::make_index_sequence<max_ports>{})),
        timers_(mem),
        timer_pos_(mem) {
    error_ = check(cfg_);
    if (error_) return;
    if (cfg_.gbn.window > Sizing::window)
      cfg_.gbn.window = static_cast<std::uint32_t>(Sizing::window);
    if (cfg_.gbn.window == 0) cfg_.gbn.window = 1;
    for (std::size_t p = 0; p < cfg_.ports; ++p) ports_[p].link.configure(cfg_.link);
    receive_ = sue_receive_options(cfg_.frame.udp_dst_port);
    if (cfg_.lite) receive_.commands = &boundaries_;
    receive_.sue_ethertype = cfg_.frame.sue_ethertype;
    receive_.shim_ethertype = cfg_.frame.shim_ethertype;
    // Each port's link layer starts at the first step (CBFC advertises its buffer then).
    for (std::size_t p = 0; p < cfg_.ports; ++p) arm(owner_of_port(p), 0);
  }
  sue_instance(const sue_instance&) = delete;
  sue_instance& operator=(const sue_instance&) = delete;

  // What the configuration cannot be, checked once: every step of an instance configured wrong
  // refuses with this error, instead of failing deep in the data path.
  // The configuration with its defaults filled in: the packing limit (0) the most the sizing
  // holds, up to 4096 bytes (1024 for SUE Lite).
  static constexpr instance_config resolved(instance_config c) noexcept {
    if (c.pack_limit == 0) {
      const std::size_t most = c.lite ? wire::sue_lite_max_payload : wire::sue_max_payload;
      c.pack_limit = most < Sizing::max_payload ? most : Sizing::max_payload;
    }
    return c;
  }

  static constexpr wire::error check(const instance_config& config) noexcept {
    const instance_config c = resolved(config);
    const auto bad = [](std::string_view what, std::string_view field, std::uint64_t value,
                        wire::errc code = wire::errc::bad_value) {
      return wire::error{
          .code = code, .layer = "sue", .what = what, .field = field, .value = value};
    };
    if (c.ports != 1 && c.ports != 2 && c.ports != 4)
      return bad("an instance has 1, 2 or 4 ports (R2 Table 1)", "sue.ports", c.ports);
    if (c.ports > max_ports)
      return bad("more ports than the instance is sized for", "sue.ports", c.ports,
                 wire::errc::value_too_big);
    if (c.vcs < 1 || c.vcs > max_vcs)
      return bad("VCs: 1 to 4, and at most the instance's sizing (R2 Table 1)", "sue.rh.vc", c.vcs,
                 wire::errc::value_too_big);
    if (c.xpuid > 1023)
      return bad("xpuid is 10 bits (R2 Table 5)", "sue.rh.xpuid", c.xpuid,
                 wire::errc::value_too_big);
    if (c.partition > 1023)
      return bad("partition is 10 bits (R2 Table 5)", "sue.rh.partition", c.partition,
                 wire::errc::value_too_big);
    if (c.unordered && c.ports == 1)
      return bad("unordered mode needs 2 or 4 ports (R2 4.4)", "sue.ports", c.ports);
    if (!c.profile) return bad("no command profile", pack::type_field.filter, 0);
    if (c.lite) {
      if (c.frame.kind != wire::encap::lite)
        return bad(
            "SUE Lite frames are AFH Gen 2 compressed with no Ethertype (encap lite, "
            "R2 3.4)",
            "sue.encap", static_cast<std::uint64_t>(c.frame.kind));
      if (c.pack_limit > wire::sue_lite_max_payload)
        return bad("SUE Lite packs up to 1024 bytes (R2 3.4)", "sue_lite.len", c.pack_limit,
                   wire::errc::value_too_big);
      // A Lite payload's first byte sits where a switch reads the source MAC's I/G bit.
      for (const auto& t : c.profile->types())
        if ((t.code & 1u) != 0)
          return bad(
              "SUE Lite needs even command type codes: the first payload byte is the "
              "source MAC's I/G bit (R2 3.4)",
              pack::type_field.filter, t.code);
    } else {
      if (c.frame.kind == wire::encap::lite)
        return bad("encap lite carries no RH: configure the instance for SUE Lite", "sue.encap",
                   static_cast<std::uint64_t>(c.frame.kind));
    }
    const std::size_t least = pack::max_command_bytes;
    if (c.pack_limit < least || c.pack_limit > Sizing::max_payload)
      return bad("packing limit: room for one largest command, at most the sizing's payload",
                 "sue.payload.len", c.pack_limit, wire::errc::value_too_big);
    if (const wire::error e = c.link.check()) return e;
    if (c.link.cbfc) {
      // Every class a frame may need must be granted room for the largest frame, or it waits
      // for good (the packer asks credits for the largest PDU it could build).
      const std::size_t largest = wire::header_size(c.frame.kind) + wire::pdu_size(c.pack_limit);
      const auto& rx = c.link.cbfc_rx;
      for (std::size_t v = 0; v < c.vcs; ++v) {
        const std::uint8_t cls = rx.link.vc_class[v];
        if (rx.capacity[cls] < rx.link.cost(largest))
          return bad("CBFC: a VC's class must hold the largest frame's credits", "cbfc.class", cls);
      }
      if (rx.capacity[c.link.ack_class] < rx.link.cost(wire::ethernet_min_frame + 64))
        return bad("CBFC: the acknowledgement class holds no credits", "cbfc.class",
                   c.link.ack_class);
    }
    return {};
  }

  const wire::error& config_error() const noexcept { return error_; }
  const instance_config& config() const noexcept { return cfg_; }
  const instance_stats& stats() const noexcept { return stats_; }
  void set_notes(const note_sink& s) noexcept { sink_ = s; }

  // One event at `now` (ns, never decreasing), then the timers due at `now`.
  instance_actions step(std::uint64_t now, const instance_event& e) noexcept {
    instance_actions a;
    if (error_) {
      a.error = error_;
      return a;
    }
    if (now > now_) now_ = now;
    if (e.input != instance_input::transmit) stalled_ = 0;
    const bool on_a_port =
        e.input == instance_input::frame || e.input == instance_input::transmit ||
        e.input == instance_input::link_message || e.input == instance_input::link_status ||
        e.input == instance_input::peer_status;
    if (on_a_port && e.port >= cfg_.ports) {
      // A port the instance does not have: the embedder's mistake, said rather than dropped in
      // silence, the event not taken (the timers due still run).
      a.error = wire::error{.code = wire::errc::bad_value,
                            .layer = "sue",
                            .what = "no such port: the instance has config.ports ports",
                            .field = "sue.port",
                            .value = e.port};
      run_timers();
      return a;
    }
    switch (e.input) {
      case instance_input::command:
        offer(e, a);
        break;
      case instance_input::frame:
        arrived(e, a);
        break;
      case instance_input::transmit:
        transmit(e.port, e.out, a);
        queues_changed(e.port);
        packer_changed(lane(e.port));
        break;
      case instance_input::link_message: {
        const bool was_down = ports_[e.port].link.down();
        ports_[e.port].link.message(e.message, now_);
        link_messages(e.port);
        // A NACK spends LLR's replays as its timer does: the last one takes the link down.
        if (!was_down && ports_[e.port].link.down()) link_failed(e.port);
        arm_port(e.port);
        break;
      }
      case instance_input::link_status:
        link_status(e.port, e.up);
        break;
      case instance_input::peer_status:
        peer_status(e.peer, e.port, e.up);
        break;
      case instance_input::management:
        management_send(e, a);
        break;
      case instance_input::tick:
        break;
    }
    run_timers();
    return a;
  }

  // When to step next with nothing else to do (link_never: no timer runs).
  std::uint64_t deadline() const noexcept { return timer_count_ ? timers_[0].at : link_never; }

  // Ports with something to send now (bit p): offer them a transmit. A port that was offered one
  // and had nothing sendable (a window full, no credits) is not ready again until another event.
  // Read from masks kept as the queues change, not from every port's queues: an embedder asks
  // after each of its steps.
  std::uint8_t ready_ports() const noexcept {
    auto r = static_cast<std::uint8_t>(work() & up_ & ~stalled_);
    if (cfg_.link.llr || extra_.due)  // LLR's replays and the misbehaviour's RH: port by port
      for (std::uint8_t p = 0; p < cfg_.ports; ++p)
        if (port_ready(p)) r = static_cast<std::uint8_t>(r | (1u << p));
    return r;
  }
  bool port_ready(std::uint8_t p) const noexcept {
    const auto bit = static_cast<std::uint8_t>(1u << p);
    if ((up_ & bit) == 0 || (stalled_ & bit) != 0) return false;
    return (work() & bit) != 0 || (cfg_.link.llr && ports_[p].link.replay_pending()) ||
           (extra_.due && conns_[extra_.conn].port == p);
  }

  // ---- the command interface's credits (R2 3.2.1) ----
  // Commands `peer` may still be given on `vc`: the lesser of its {destination, VC} credits and
  // the aggregate ones.
  std::uint32_t credits(std::uint16_t peer, std::uint8_t vc) const noexcept {
    const std::uint32_t agg = aggregate_credits();
    if (peer > 1023 || vc >= cfg_.vcs) return 0;
    const std::uint16_t pi = peer_at(peer);
    const std::uint32_t queued = pi == no_peer ? 0 : peers_[pi].queued[vc];
    const std::uint32_t per = per_destination_bound();
    const std::uint32_t left = queued >= per ? 0 : per - queued;
    return left < agg ? left : agg;
  }
  std::uint32_t aggregate_credits() const noexcept {
    const std::uint32_t bound = aggregate_bound();
    return queued_ >= bound ? 0 : static_cast<std::uint32_t>(bound - queued_);
  }
  // The tx_credit word's view (per VC, R2 Table 3): what any destination may still take.
  std::uint32_t vc_credits(std::uint8_t vc) const noexcept {
    return vc < cfg_.vcs ? aggregate_credits() : 0;
  }

  // ---- registers (R2 3.1) ----
  std::optional<std::uint32_t> read_register(std::uint32_t address) const noexcept {
    if (address == reg::id)
      return std::uint32_t{cfg_.xpuid} | std::uint32_t{cfg_.ports} << 16 |
             std::uint32_t{cfg_.vcs} << 20 | std::uint32_t{cfg_.unordered} << 24 |
             std::uint32_t{cfg_.lite} << 25;
    if (address == reg::congestion) {
      std::array<std::uint8_t, 4> b{};
      const congestion_state s = congestion();
      if (!wire::encode(s, b)) return std::nullopt;
      return wire::load_be32(b.data());
    }
    if (address == reg::peers_unreachable) return declared_;
    if (address < reg::port_base) return std::nullopt;
    const std::uint32_t p = (address - reg::port_base) / reg::port_stride;
    const std::uint32_t off = (address - reg::port_base) % reg::port_stride;
    if (p >= cfg_.ports) return std::nullopt;
    const port_state& ps = ports_[p];
    const link_counters& n = ps.link.counters();
    const auto lo = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
    switch (off) {
      case reg::link_status:
        return std::uint32_t{ps.up} | std::uint32_t{ps.link.down()} << 1 |
               std::uint32_t{cfg_.link.llr} << 2 | std::uint32_t{cfg_.link.cbfc} << 3;
      case reg::frames_sent:
        return lo(n.frames_sent);
      case reg::frames_received:
        return lo(n.frames_received);
      case reg::llr_replays:
        return lo(n.llr_replays);
      case reg::credit_stalls:
        return lo(n.credit_stalls);
      case reg::pfc_paused:
        return lo(n.pfc_paused);
      default:
        break;
    }
    if (off >= reg::credits && off < reg::credits + 4 * 4 && (off - reg::credits) % 4 == 0) {
      const std::size_t vc = (off - reg::credits) / 4;
      if (vc >= cfg_.vcs) return std::nullopt;
      return ps.link.cbfc_tx().available_vc(static_cast<std::uint8_t>(vc));
    }
    return std::nullopt;
  }
  // The one writable register: a port's link status (bit 0), as an administrator sets it down
  // or up. Refused (false) for any other address.
  bool write_register(std::uint64_t now, std::uint32_t address, std::uint32_t value) noexcept {
    if (error_ || address < reg::port_base) return false;
    const std::uint32_t p = (address - reg::port_base) / reg::port_stride;
    if (p >= cfg_.ports || (address - reg::port_base) % reg::port_stride != reg::link_status)
      return false;
    step(now, instance_event::link_status(static_cast<std::uint8_t>(p), (value & 1u) != 0));
    return true;
  }
  // The congestion state this instance reports (R2 4.4).
  congestion_state congestion() const noexcept {
    std::uint32_t up = 0;
    for (std::size_t p = 0; p < cfg_.ports; ++p) up += ports_[p].up && !ports_[p].link.down();
    return report_congestion(up, queued_bytes_, in_flight_);
  }

  // ---- what the instance holds ----
  std::size_t peers() const noexcept { return peer_count_; }
  std::size_t connections() const noexcept { return conn_count_; }
  std::size_t queued() const noexcept { return queued_; }
  std::size_t in_flight() const noexcept { return in_flight_; }
  // Buffers in use: queued commands' bytes, kept PDUs', management packets'.
  std::size_t buffers_in_use() const noexcept {
    return cmd_bytes_.in_use() + kept_bytes_.in_use() + mgmt_bytes_.in_use();
  }
  std::size_t memory() const noexcept {
    std::size_t n =
        sizeof(*this) + cmd_bytes_.memory() + kept_bytes_.memory() + mgmt_bytes_.memory();
    if constexpr (S::grows) {
      n += peers_.bytes() + conns_.bytes() + kept_.bytes() + cmd_meta_.bytes() + timers_.bytes() +
           timer_pos_.bytes();
      for (std::size_t p = 0; p < max_ports; ++p)
        n += packers_[p].memory() - sizeof(packer_t) + ports_[p].link.memory() - sizeof(link_t) +
             ports_[p].acks.bytes() + ports_[p].resends.bytes() + ports_[p].control.bytes() +
             ports_[p].mgmt.bytes();
    }
    return n;
  }
  bool port_up(std::uint8_t p) const noexcept { return p < cfg_.ports && ports_[p].up; }
  const link_t& link(std::uint8_t p) const noexcept { return ports_[p].link; }
  // Whether `peer` can be reached on plane `port` as far as this instance knows.
  bool reachable(std::uint16_t peer, std::uint8_t port) const noexcept {
    if (peer > 1023 || port >= cfg_.ports || !ports_[port].up) return false;
    const std::uint16_t pi = peer_at(peer);
    return pi == no_peer || ((peers_[pi].unreachable >> port) & 1u) == 0;
  }
  bool peer_declared_unreachable(std::uint16_t peer) const noexcept {
    if (peer > 1023) return false;
    const std::uint16_t pi = peer_at(peer);
    return pi != no_peer && peers_[pi].declared;
  }
  // The go-back-N machines of a connection, if it exists (tests, registers).
  const connection<16>* connection_state(std::uint8_t port, std::uint16_t peer,
                                         std::uint8_t vc) const noexcept {
    if (peer > 1023 || port >= cfg_.ports || vc >= cfg_.vcs) return nullptr;
    const std::uint16_t pi = peer_at(peer);
    if (pi == no_peer) return nullptr;
    const std::uint32_t c = peers_[pi].conn[port * max_vcs + key(vc)];
    return c == nil ? nullptr : &conns_[c].m;
  }

 private:
  // ---- state ----
  struct peer_state {
    std::uint16_t xpuid = 0;
    std::uint8_t unreachable = 0;  // planes this peer cannot be reached on (bit per port)
    bool declared = false;         // unreachable on every plane past the limit: work failed
    bool all_down = false;         // the limit's timer runs
    std::uint64_t all_down_at = 0;
    std::array<std::uint8_t, max_vcs> pin{};  // strict: the port each VC's stream uses
    std::array<bool, max_vcs> pinned{};
    std::array<std::uint32_t, max_vcs> queued{};            // commands queued per VC (credits)
    std::array<std::uint64_t, max_vcs> next_seq{};          // the number of the next command per VC
    std::array<std::uint32_t, max_ports * max_vcs> conn{};  // per port and VC key; nil: none yet
  };
  struct list {
    std::uint32_t head = nil, tail = nil, count = 0;
  };
  struct conn_state {
    connection<16> m{};
    std::uint32_t peer = 0;
    std::uint8_t port = 0, key = 0;
    bool ack_queued = false, resend_queued = false;
    bool failing = false;      // a failover exchange is under way
    bool needs_sync = false;   // its work was failed: resynchronise before sending again
    bool waiting = false;      // work to move and no plane to move it to
    std::uint8_t to_port = 0;  // failing: where the work goes
    std::uint8_t generation = 0;
    std::uint8_t tries = 0;
    psn<16> base{};             // failing: the PSN the connection continues from
    std::uint64_t fail_at = 0;  // failing: when the request is to be sent (again)
    bool request_queued = false;
    psn<16> resend_next{};  // resend_queued: the next PSN to send again, up to tx.next
    list kept{};            // PDUs una .. next - 1, in PSN order
    list backlog{};         // moved here by a failover, waiting for window
    // The receiving side of the exchange: the last request answered.
    bool synced_any = false;
    psn<16> synced_expected{};
    psn<16> synced_base{};
  };
  struct kept_pdu {
    std::uint32_t next = nil;
    std::uint32_t buf = no_buffer;  // no_buffer: the payload is in `small`
    std::uint16_t size = 0;
    std::uint8_t vc = 0;
    bool sent = false;   // on its connection
    bool moved = false;  // moved here by a failover
    std::uint64_t first_seq = 0;
    std::uint32_t count = 0;
    std::array<std::uint8_t, 16> small{};
  };
  struct cmd_meta {
    std::uint64_t seq = 0;
    std::uint16_t peer = 0;
    std::uint8_t vc = 0;
  };
  struct control_item {
    std::uint32_t conn = nil;
    wire::failover_message msg{};
    std::uint16_t to = 0;
  };
  struct port_state {
    bool up = true;
    link_t link;
    pack::ring<std::uint32_t, max_conns, S> acks;     // connections owing an ACK or NACK
    pack::ring<std::uint32_t, max_conns, S> resends;  // connections with PDUs to send again
    pack::ring<control_item, 2 * max_conns, S> control;
    pack::ring<std::uint32_t, mgmt_slots, S> mgmt;  // management packets' buffers
    explicit port_state(const pack::allocator& mem) noexcept
        : link(no_link_features, mem), acks(mem), resends(mem), control(mem), mgmt(mem) {}
  };
  struct timer_entry {
    std::uint64_t at = 0;
    std::uint32_t owner = 0;
  };

  template <std::size_t... I>
  static std::array<packer_t, max_ports> make_packers(const instance_config& c,
                                                      const pack::allocator& mem,
                                                      std::index_sequence<I...>) noexcept {
    typename packer_t::config pc;
    for (std::size_t v = 0; v < max_vcs; ++v) pc.weights[v] = c.weights[v];
    pc.limit = c.pack_limit;
    if (pc.limit < pack::max_command_bytes) pc.limit = pack::max_command_bytes;
    if (pc.limit > Sizing::max_payload) pc.limit = Sizing::max_payload;
    const pack::profile& prof = c.profile ? *c.profile : pack::default_profile;
    return {{(static_cast<void>(I), packer_t(prof, pc, mem))...}};
  }
  template <std::size_t... I>
  static std::array<port_state, max_ports> make_ports(const pack::allocator& mem,
                                                      std::index_sequence<I...>) noexcept {
    return {{(static_cast<void>(I), port_state(mem))...}};
  }

  std::uint8_t key(std::uint8_t vc) const noexcept {
    return cfg_.keys == keying::port_peer ? 0 : vc;
  }
  std::size_t lane(std::size_t p) const noexcept { return cfg_.unordered ? 0 : p; }
  std::uint32_t per_destination_bound() const noexcept {
    return cfg_.credits_per_destination ? cfg_.credits_per_destination
                                        : static_cast<std::uint32_t>(Sizing::commands);
  }
  std::uint32_t aggregate_bound() const noexcept {
    const auto pool = static_cast<std::uint32_t>(Sizing::commands);
    return cfg_.credits_aggregate && cfg_.credits_aggregate < pool ? cfg_.credits_aggregate : pool;
  }
  std::uint8_t all_ports() const noexcept {
    return static_cast<std::uint8_t>((1u << cfg_.ports) - 1);
  }

  // ---- which ports have work: bit masks kept where the queues change ----
  // Ports whose packer holds commands (unordered mode: one packer serves every port) or whose
  // queues of ACKs, resends, control frames or management packets are not empty.
  std::uint8_t work() const noexcept {
    const std::uint8_t packed = cfg_.unordered ? ((packed_ & 1u) != 0 ? all_ports() : 0) : packed_;
    return static_cast<std::uint8_t>(packed | queued_work_);
  }
  // After packer l's queues changed.
  void packer_changed(std::size_t l) noexcept {
    const auto bit = static_cast<std::uint8_t>(1u << l);
    packed_ = static_cast<std::uint8_t>(packers_[l].queued() > 0 ? packed_ | bit : packed_ & ~bit);
  }
  // After something was taken from port p's queues.
  void queues_changed(std::uint8_t p) noexcept {
    const port_state& ps = ports_[p];
    const auto bit = static_cast<std::uint8_t>(1u << p);
    const bool any =
        !ps.acks.empty() || !ps.resends.empty() || !ps.control.empty() || !ps.mgmt.empty();
    queued_work_ = static_cast<std::uint8_t>(any ? queued_work_ | bit : queued_work_ & ~bit);
  }
  // After something was put in port p's queues.
  void queued_on(std::uint8_t p) noexcept {
    queued_work_ = static_cast<std::uint8_t>(queued_work_ | (1u << p));
  }

  void note(const instance_note& n) noexcept {
    if (sink_.call) sink_.call(sink_.context, n);
  }

  // ---- peers and connections ----
  std::uint16_t peer_index(std::uint16_t xpuid, bool create) noexcept {
    if (xpuid > 1023) return no_peer;
    std::uint16_t pi = peer_at(xpuid);
    if (pi != no_peer || !create) return pi;
    if (peer_count_ == max_peers || !peer_of_.reserve(1024) || !peers_.reserve(peer_count_ + 1) ||
        !timer_pos_.reserve(owner_of_peer(peer_count_) + 1))
      return no_peer;
    pi = static_cast<std::uint16_t>(peer_count_++);
    peer_state& ps = peers_[pi];
    ps = peer_state{};
    ps.xpuid = xpuid;
    ps.conn.fill(nil);
    timer_pos_[owner_of_peer(pi)] = nil;
    peer_of_[xpuid] = static_cast<std::uint16_t>(pi + 1);
    // A peer first named while every plane is down is unreachable from now on, as one known
    // before the links went down: its clock starts, or its commands would wait for ever.
    reachability(pi);
    return pi;
  }
  // The peer slot of an XPU, no_peer when it has none (the table holds slot + 1, 0 for none).
  std::uint16_t peer_at(std::uint16_t xpuid) const noexcept {
    if (xpuid > 1023 || peer_of_.size() == 0) return no_peer;
    const std::uint16_t v = peer_of_[xpuid];
    return v == 0 ? no_peer : static_cast<std::uint16_t>(v - 1);
  }
  std::uint32_t conn_of(std::uint16_t pi, std::uint8_t port, std::uint8_t k,
                        bool create = true) noexcept {
    std::uint32_t& slot = peers_[pi].conn[port * max_vcs + k];
    if (slot != nil || !create) return slot;
    if (!conns_.reserve(conn_count_ + 1) || !timer_pos_.reserve(owner_of_conn(conn_count_) + 1))
      return nil;
    const auto c = static_cast<std::uint32_t>(conn_count_++);
    conns_[c] = conn_state{};
    conns_[c].peer = pi;
    conns_[c].port = port;
    conns_[c].key = k;
    timer_pos_[owner_of_conn(c)] = nil;
    peers_[pi].conn[port * max_vcs + k] = c;
    return c;
  }

  // ---- the kept-PDU pool: lists through `next` ----
  std::uint32_t kept_take() noexcept {
    if (kept_free_ == nil) {
      const std::size_t old = kept_size_;
      if (!kept_.reserve(old + 1)) return nil;
      kept_size_ = kept_.size();
      for (std::size_t i = kept_size_; i > old; --i) {
        kept_[i - 1].next = kept_free_;
        kept_free_ = static_cast<std::uint32_t>(i - 1);
      }
    }
    const std::uint32_t k = kept_free_;
    kept_free_ = kept_[k].next;
    kept_[k] = kept_pdu{};
    return k;
  }
  void kept_give(std::uint32_t k) noexcept {
    if (kept_[k].buf != no_buffer) kept_bytes_.give(kept_[k].buf);
    kept_[k].buf = no_buffer;
    kept_[k].next = kept_free_;
    kept_free_ = k;
  }
  void append(list& l, std::uint32_t k) noexcept {
    kept_[k].next = nil;
    if (l.tail == nil)
      l.head = k;
    else
      kept_[l.tail].next = k;
    l.tail = k;
    ++l.count;
  }
  std::uint32_t pop(list& l) noexcept {
    const std::uint32_t k = l.head;
    l.head = kept_[k].next;
    if (l.head == nil) l.tail = nil;
    --l.count;
    return k;
  }
  wire::bytes payload_of(const kept_pdu& k) const noexcept {
    return k.buf == no_buffer ? wire::bytes(k.small.data(), k.size) : kept_bytes_.bytes(k.buf);
  }

  // ---- timers: an indexed heap of owners (ports, connections, peers), one entry each ----
  static constexpr std::uint32_t owner_of_port(std::size_t p) noexcept {
    return static_cast<std::uint32_t>(p);
  }
  static constexpr std::uint32_t owner_of_conn(std::size_t c) noexcept {
    return static_cast<std::uint32_t>(max_ports + 2 * c);
  }
  static constexpr std::uint32_t owner_of_peer(std::size_t p) noexcept {
    return static_cast<std::uint32_t>(max_ports + 2 * p + 1);
  }
  // Sets an owner's time: earlier than the one held, the entry moves up; later, the entry stays
  // (it fires early, and the owner's time is looked at again then); never: nothing to add.
  void arm(std::uint32_t owner, std::uint64_t at) noexcept {
    if (at == link_never) return;
    // Never due at the instant being run again: what was due has been handled.
    if (in_timers_ && at <= now_) at = now_ + 1;
    if (!timer_pos_.reserve(owner + 1)) return;
    std::uint32_t& pos = timer_pos_[owner];
    if (pos != nil && pos < timer_count_ && timers_[pos].owner == owner) {
      if (at >= timers_[pos].at) return;
      timers_[pos].at = at;
      sift_up(pos);
      return;
    }
    if (!timers_.reserve(timer_count_ + 1)) return;
    pos = static_cast<std::uint32_t>(timer_count_++);
    timers_[pos] = timer_entry{at, owner};
    sift_up(pos);
  }
  static constexpr std::uint64_t at_of(const timer_entry& t) noexcept { return t.at; }
  void sift_up(std::size_t i) noexcept {
    pack::heap_sift_up(timers_, i, timer_entry{timers_[i]}, at_of, placed());
  }
  void sift_down(std::size_t i) noexcept {
    pack::heap_sift_down(timers_, timer_count_, i, timer_entry{timers_[i]}, at_of, placed());
  }
  // Each timer owner knows where its entry is.
  auto placed() noexcept {
    return [this](std::size_t i) { timer_pos_[timers_[i].owner] = static_cast<std::uint32_t>(i); };
  }
  timer_entry pop_timer() noexcept {
    const timer_entry top = timers_[0];
    timer_pos_[top.owner] = nil;
    if (--timer_count_ > 0) {
      timers_[0] = timers_[timer_count_];
      sift_down(0);
    }
    return top;
  }
  // Every owner whose time has come looks at its state again and sets its next time.
  void run_timers() noexcept {
    in_timers_ = true;
    while (timer_count_ > 0 && timers_[0].at <= now_) {
      const timer_entry t = pop_timer();
      if (t.owner < max_ports) {
        port_timer(static_cast<std::uint8_t>(t.owner));
      } else if ((t.owner - max_ports) % 2 == 0) {
        conn_timer((t.owner - max_ports) / 2);
      } else {
        peer_timer(static_cast<std::uint16_t>((t.owner - max_ports) / 2));
      }
    }
    in_timers_ = false;
  }
  void arm_conn(std::uint32_t c) noexcept {
    const conn_state& cs = conns_[c];
    std::uint64_t t = link_never;
    if (cs.m.tx.timing && !cs.failing && !cs.waiting) t = cs.m.tx.deadline;
    if (cs.m.rx.ack_timing && cs.m.rx.ack_deadline < t) t = cs.m.rx.ack_deadline;
    if (cs.failing && cs.fail_at < t) t = cs.fail_at;
    arm(owner_of_conn(c), t);
  }
  void arm_port(std::uint8_t p) noexcept { arm(owner_of_port(p), ports_[p].link.deadline()); }

  void conn_timer(std::uint32_t c) noexcept {
    conn_state& cs = conns_[c];
    // While its work moves (or waits for a plane to move to), the connection's go-back-N
    // timer is the exchange's business, not a reason to give up on another plane.
    if (cs.m.tx.timing && now_ >= cs.m.tx.deadline && !cs.failing && !cs.waiting) {
      const auto r =
          transport::step(cs.m.tx, sender_event<16>{sender_input::tick, {}}, now_, cfg_.gbn);
      conns_[c].m.tx = r.first;
      apply_sender(c, r.second);
    }
    conn_state& cs2 = conns_[c];
    if (cs2.m.rx.ack_timing && now_ >= cs2.m.rx.ack_deadline) {
      const auto [rx, ra] = transport::step(
          cs2.m.rx, receiver_event<16>{receiver_input::tick, {}, true}, now_, cfg_.gbn);
      cs2.m.rx = rx;
      if (ra.ack_now) queue_ack(c);
    }
    conn_state& cs3 = conns_[c];
    if (cs3.failing && now_ >= cs3.fail_at) failover_retry(c);
    arm_conn(c);
  }
  void port_timer(std::uint8_t p) noexcept {
    if (p >= cfg_.ports) return;
    port_state& ps = ports_[p];
    const bool was_down = ps.link.down();
    ps.link.tick(now_);
    link_messages(p);
    if (!was_down && ps.link.down()) link_failed(p);
    arm_port(p);
  }
  void peer_timer(std::uint16_t pi) noexcept {
    peer_state& ps = peers_[pi];
    if (!ps.all_down || ps.declared) return;
    if (now_ < ps.all_down_at + cfg_.unreachable_after) {
      arm(owner_of_peer(pi), ps.all_down_at + cfg_.unreachable_after);
      return;
    }
    declare_unreachable(pi);
  }

  // ---- commands in ----
  void offer(const instance_event& e, instance_actions& a) noexcept {
    const auto refuse = [&](wire::error err) {
      ++stats_.refused;
      a.error = err;
    };
    if (e.peer > 1023 || e.peer == cfg_.xpuid)
      return refuse(wire::error{.code = wire::errc::value_too_big,
                                .layer = "sue",
                                .what = e.peer == cfg_.xpuid ? "a command to this XPU itself"
                                                             : "destination XPU out of range",
                                .field = "sue.fifo.xpuid",
                                .value = e.peer});
    if (e.vc >= cfg_.vcs)
      return refuse(wire::error{.code = wire::errc::value_too_big,
                                .layer = "sue",
                                .what = "VC out of range",
                                .field = "sue.rh.vc",
                                .value = e.vc});
    const std::uint16_t pi = peer_index(e.peer, true);
    if (pi == no_peer)
      return refuse(wire::error{.code = wire::errc::no_space,
                                .layer = "sue",
                                .what = "more peers than the instance is sized for",
                                .field = "sue.fifo.xpuid",
                                .value = e.peer});
    peer_state& ps = peers_[pi];
    if (ps.declared)
      return refuse(wire::error{.code = wire::errc::unreachable,
                                .layer = "sue",
                                .what = "the destination is unreachable on every port",
                                .field = "sue.fifo.xpuid",
                                .value = e.peer});
    if (ps.queued[e.vc] >= per_destination_bound())
      return refuse(wire::error{.code = wire::errc::no_space,
                                .layer = "sue",
                                .needed = 1,
                                .what = "no credit for this {destination, VC} (R2 3.2.1)",
                                .field = "sue.fifo.credit",
                                .value = e.peer});
    if (queued_ >= aggregate_bound())
      return refuse(wire::error{.code = wire::errc::no_space,
                                .layer = "sue",
                                .needed = 1,
                                .what = "no aggregate credit (R2 3.2.1)",
                                .field = "sue.fifo.credit",
                                .value = queued_});
    if (const wire::error err = pack::check_command(*cfg_.profile, e.control, e.data))
      return refuse(err);
    const std::size_t n = e.control.size() + e.data.size();
    if (n > cfg_.pack_limit)
      return refuse(wire::error{.code = wire::errc::value_too_big,
                                .layer = "pack",
                                .needed = static_cast<std::uint32_t>(cfg_.pack_limit),
                                .available = static_cast<std::uint32_t>(n),
                                .what = "command larger than the packing limit"});
    const std::uint32_t h = cmd_bytes_.take(n);
    if (h == no_buffer || !cmd_meta_.reserve(std::size_t{h} + 1))
      return refuse(wire::error{.code = wire::errc::no_space,
                                .layer = "sue",
                                .what = "command buffers full",
                                .field = "sue.fifo.credit"});
    std::uint8_t* bytes = cmd_bytes_.data(h);
    const std::size_t written = pack::write_checked_command(e.control, e.data, bytes);
    const std::size_t ctrl = e.control.size();
    const std::uint8_t lane_of = static_cast<std::uint8_t>(cfg_.unordered ? 0 : pin(pi, e.vc));
    const wire::error pe = packers_[lane_of].push(pack::queued_command{
        pi, e.vc, wire::bytes(bytes, ctrl), pack::borrow(wire::bytes(bytes + ctrl, written - ctrl)),
        e.send_now, h});
    if (pe) {
      cmd_bytes_.give(h);
      return refuse(pe);
    }
    packed_ = static_cast<std::uint8_t>(packed_ | (1u << lane_of));
    peer_state& ps2 = peers_[pi];
    cmd_meta_[h] = cmd_meta{ps2.next_seq[e.vc], pi, e.vc};
    a.seq = ps2.next_seq[e.vc]++;
    ++ps2.queued[e.vc];
    ++queued_;
    queued_bytes_ += n;
    ++stats_.commands;
  }

  // Strict mode: the port {peer, vc}'s stream uses, chosen once (spread over source, destination
  // and VC so that the streams into one XPU share its planes) and kept while it is usable.
  std::uint8_t pin(std::uint16_t pi, std::uint8_t vc) noexcept {
    peer_state& ps = peers_[pi];
    if (ps.pinned[vc]) return ps.pin[vc];
    std::uint8_t p = static_cast<std::uint8_t>((cfg_.xpuid + ps.xpuid + vc) % cfg_.ports);
    for (std::uint8_t k = 0; k < cfg_.ports; ++k) {
      const auto q = static_cast<std::uint8_t>((cfg_.xpuid + ps.xpuid + vc + k) % cfg_.ports);
      if (usable(pi, q)) {
        p = q;
        break;
      }
    }
    ps.pin[vc] = p;
    ps.pinned[vc] = true;
    return p;
  }
  bool usable(std::uint16_t pi, std::uint8_t q) const noexcept {
    return q < cfg_.ports && ports_[q].up && !ports_[q].link.down() &&
           ((peers_[pi].unreachable >> q) & 1u) == 0;
  }

  // Strict mode: moves a stream's queued commands to port `to`'s packer (a failover or a link
  // down); their numbers and order are kept, behind nothing (the stream's queue there is empty).
  void repin(std::uint16_t pi, std::uint8_t vc, std::uint8_t to) noexcept {
    peer_state& ps = peers_[pi];
    if (cfg_.unordered || !ps.pinned[vc] || ps.pin[vc] == to) {
      ps.pin[vc] = to;
      ps.pinned[vc] = true;
      return;
    }
    const std::uint8_t from = ps.pin[vc];
    ps.pin[vc] = to;
    packers_[from].drain(pi, vc, [&](const pack::queued_command& q) {
      (void)packers_[to].push(q);  // the same command, already checked; the pool has room
    });
    packer_changed(from);
    packer_changed(to);
  }

  // ---- transmit ----
  void transmit(std::uint8_t p, wire::mutable_bytes out, instance_actions& a) noexcept {
    port_state& ps = ports_[p];
    instance_frame& f = a.frame;
    if (!ps.up || ps.link.down() || out.size() < max_frame) {
      stalled_ = static_cast<std::uint8_t>(stalled_ | (1u << p));
      return;
    }
    if (ps.link.replay_pending()) {
      f.size = ps.link.replay(out, f.link);
      f.kind = frame_kind::replay;
      if (f.size) {
        ++stats_.frames;
        arm_port(p);
        return;
      }
    }
    if (send_extra(p, out, f) || send_control(p, out, f) || send_management(p, out, f) ||
        send_ack(p, out, f) || send_resend(p, out, f) || send_new(p, out, f)) {
      ++stats_.frames;
      arm_port(p);
      return;
    }
    stalled_ = static_cast<std::uint8_t>(stalled_ | (1u << p));
  }

  std::uint8_t vc_class(std::uint8_t vc) const noexcept {
    return cfg_.link.cbfc_rx.link.vc_class[vc & 3];
  }
  std::uint8_t vc_priority(std::uint8_t vc) const noexcept {
    return cfg_.priorities.vc_priority[vc & 3];
  }
  std::uint8_t wire_tc(std::uint8_t priority) const noexcept {
    return cfg_.frame.kind == wire::encap::afh1 ? 0 : priority;
  }
  static constexpr std::size_t frame_bytes(wire::encap kind, std::size_t inner) noexcept {
    const std::size_t n = wire::header_size(kind) + inner;
    return n < wire::ethernet_min_frame ? wire::ethernet_min_frame : n;
  }

  // The RH of the next PDU on connection c: this end's identity, the PSN, and whatever the
  // receiver owes the peer (R2 4.2 step 4), which is then said.
  wire::reliability_header stamp(std::uint32_t c, std::uint8_t vc, psn<16> npsn) noexcept {
    conn_state& cs = conns_[c];
    const auto [op, apsn] = pending_ack(cs.m.rx);
    if (op != wire::rh_op::none) {
      cs.m.rx = transport::step(cs.m.rx, receiver_event<16>{receiver_input::ack_sent, {}, true},
                                now_, cfg_.gbn)
                    .first;
      if (op == wire::rh_op::ack) ++stats_.acks_sent;
      if (op == wire::rh_op::nack) ++stats_.nacks_sent;
      if (cfg_.misbehave != misbehaviour::none && !misbehaved_) misbehave_after(c, op, apsn);
    }
    return wire::reliability_header{.op = static_cast<std::uint8_t>(op),
                                    .xpuid = cfg_.xpuid,
                                    .npsn = npsn.value,
                                    .vc = vc,
                                    .partition = cfg_.partition,
                                    .apsn = apsn.value};
  }
  wire::frame_params params(std::uint16_t peer_xpu, std::uint8_t tc) const noexcept {
    wire::frame_params fp = cfg_.frame;
    fp.src_xpu = cfg_.xpuid;
    fp.dst_xpu = peer_xpu;
    fp.tc = tc;
    return fp;
  }
  // Writes the PDU (kept k with PSN psn, or an RH-only one) of connection c into out.
  std::size_t emit(std::uint32_t c, const kept_pdu* k, psn<16> psn_, wire::mutable_bytes out,
                   instance_frame& f) noexcept {
    const conn_state& cs0 = conns_[c];
    const std::uint16_t peer_xpu = peers_[cs0.peer].xpuid;
    const std::uint8_t vc = k ? k->vc : cs0.key;
    const wire::reliability_header rh = stamp(c, vc, k ? psn_ : conns_[c].m.tx.next);
    const std::uint8_t prio = k ? vc_priority(vc) : cfg_.priorities.ack_priority;
    const auto r = wire::emit_sue_frame(params(peer_xpu, wire_tc(prio)), rh,
                                        k ? payload_of(*k) : wire::bytes{}, out);
    if (!r) return 0;
    f.size = r.value;
    f.peer = peer_xpu;
    f.vc = vc;
    f.psn = rh.npsn;
    f.op = static_cast<wire::rh_op>(rh.op);
    f.apsn = rh.apsn;
    if (k) {
      f.first_seq = k->first_seq;
      f.commands = k->count;
    }
    return r.value;
  }

  // misbehaviour: the one stand-alone RH a conformant receiver never sends, right after the
  // ACK or NACK it follows.
  void misbehave_after(std::uint32_t c, wire::rh_op op, psn<16> apsn) noexcept {
    const bool ack = op == wire::rh_op::ack;
    switch (cfg_.misbehave) {
      case misbehaviour::ack_unsent:
        if (!ack) return;
        extra_ = extra_rh{true, c, op, apsn + 1000};
        break;
      case misbehaviour::ack_monotonic:
        if (!ack) return;
        extra_ = extra_rh{true, c, op, apsn - 1};
        break;
      case misbehaviour::nack_once:
        if (ack) return;
        extra_ = extra_rh{true, c, op, apsn};
        break;
      case misbehaviour::gbn_resend:  // a sender's (send_resend)
      case misbehaviour::none:
        return;
    }
    misbehaved_ = true;
  }
  bool send_extra(std::uint8_t p, wire::mutable_bytes out, instance_frame& f) noexcept {
    if (!extra_.due || conns_[extra_.conn].port != p) return false;
    const std::size_t bytes = frame_bytes(cfg_.frame.kind, wire::pdu_size(0));
    port_state& ps = ports_[p];
    if (!ps.link.can_send(cfg_.link.ack_class, cfg_.priorities.ack_priority, bytes, now_))
      return false;
    extra_.due = false;
    const conn_state& cs = conns_[extra_.conn];
    const wire::reliability_header rh{.op = static_cast<std::uint8_t>(extra_.op),
                                      .xpuid = cfg_.xpuid,
                                      .npsn = cs.m.tx.next.value,
                                      .vc = cs.key,
                                      .partition = cfg_.partition,
                                      .apsn = extra_.apsn.value};
    const std::uint16_t peer = peers_[cs.peer].xpuid;
    const auto r =
        wire::emit_sue_frame(params(peer, wire_tc(cfg_.priorities.ack_priority)), rh, {}, out);
    if (!r) return false;
    f.size = r.value;
    f.kind = frame_kind::ack;
    f.peer = peer;
    f.vc = cs.key;
    f.psn = rh.npsn;
    f.op = extra_.op;
    f.apsn = rh.apsn;
    f.link = ps.link.sent(wire::bytes(out.data(), f.size), cfg_.link.ack_class, now_);
    return true;
  }

  bool send_ack(std::uint8_t p, wire::mutable_bytes out, instance_frame& f) noexcept {
    port_state& ps = ports_[p];
    while (!ps.acks.empty()) {
      const std::uint32_t c = ps.acks.front();
      if (pending_ack(conns_[c].m.rx).first == wire::rh_op::none) {
        ps.acks.pop_front();  // already carried by a data PDU
        conns_[c].ack_queued = false;
        continue;
      }
      const std::size_t bytes = frame_bytes(cfg_.frame.kind, wire::pdu_size(0));
      if (!ps.link.can_send(cfg_.link.ack_class, cfg_.priorities.ack_priority, bytes, now_))
        return false;
      ps.acks.pop_front();
      conns_[c].ack_queued = false;
      if (!emit(c, nullptr, {}, out, f)) return false;
      f.kind = frame_kind::ack;
      f.link = ps.link.sent(wire::bytes(out.data(), f.size), cfg_.link.ack_class, now_);
      ++stats_.acks_only;
      arm_conn(c);
      return true;
    }
    return false;
  }

  // Go-back-N's resends (and PDUs moved here by a failover), oldest first.
  bool send_resend(std::uint8_t p, wire::mutable_bytes out, instance_frame& f) noexcept {
    port_state& ps = ports_[p];
    while (!ps.resends.empty()) {
      const std::uint32_t c = ps.resends.front();
      conn_state& cs = conns_[c];
      const auto& tx = cs.m.tx;
      if (!cs.resend_queued || cs.failing || !within(cs.resend_next, tx.una, tx.in_flight())) {
        ps.resends.pop_front();
        cs.resend_queued = false;
        continue;
      }
      // The kept PDU with that PSN: the list runs from una in order.
      std::uint32_t k = cs.kept.head;
      for (std::uint32_t i = distance(tx.una, cs.resend_next); i > 0 && k != nil; --i)
        k = kept_[k].next;
      if (k == nil) {
        ps.resends.pop_front();
        cs.resend_queued = false;
        continue;
      }
      // misbehaviour::gbn_resend: once, a go-back that leaves out its first PSN.
      if (cfg_.misbehave == misbehaviour::gbn_resend && !misbehaved_ && kept_[k].sent &&
          cs.resend_next == tx.una && cs.resend_next + 1 != tx.next) {
        misbehaved_ = true;
        cs.resend_next = cs.resend_next + 1;
        continue;
      }
      const std::uint8_t vc = kept_[k].vc;
      const std::size_t bytes = frame_bytes(cfg_.frame.kind, wire::pdu_size(kept_[k].size));
      if (!ps.link.can_send(vc_class(vc), vc_priority(vc), bytes, now_)) return false;
      const psn<16> at = cs.resend_next;
      if (!emit(c, &kept_[k], at, out, f)) return false;
      conn_state& cs2 = conns_[c];
      f.kind = kept_[k].sent ? frame_kind::retransmission : frame_kind::pdu;
      f.moved = !kept_[k].sent && kept_[k].moved;
      if (kept_[k].sent)
        ++stats_.retransmissions;
      else if (!kept_[k].moved)
        ++stats_.pdus;
      kept_[k].sent = true;
      kept_[k].moved = false;
      f.link = ps.link.sent(wire::bytes(out.data(), f.size), vc_class(vc), now_);
      cs2.resend_next = at + 1;
      if (cs2.resend_next == cs2.m.tx.next) {
        ps.resends.pop_front();
        cs2.resend_queued = false;
      }
      arm_conn(c);
      return true;
    }
    return false;
  }

  // Which queues port p may serve now: the VC's class has credits for the largest PDU and its
  // priority is not paused (the link), and the connection takes a new PDU (the transport).
  struct eligibility {
    sue_instance* self;
    std::uint8_t port;
    bool vc_eligible(std::uint8_t vc) const noexcept {
      link_t& l = self->ports_[port].link;
      const std::size_t largest = frame_bytes(
          self->cfg_.frame.kind,
          self->cfg_.lite ? self->cfg_.pack_limit : wire::pdu_size(self->cfg_.pack_limit));
      return !l.paused(self->vc_priority(vc), self->now_) &&
             l.has_credit(self->vc_class(vc), largest) && self->ports_[port].link.llr_room(largest);
    }
    bool operator()(std::uint16_t pi, std::uint8_t vc) const noexcept {
      return self->open(pi, vc, port);
    }
  };
  // Whether stream {pi, vc} may put a new PDU on port p.
  bool open(std::uint16_t pi, std::uint8_t vc, std::uint8_t p) const noexcept {
    const peer_state& ps = peers_[pi];
    if (ps.declared || ((ps.unreachable >> p) & 1u) != 0) return false;
    if (!cfg_.unordered && ps.pin[vc] != p) return false;
    if (cfg_.lite) return true;
    const std::uint8_t k = key(vc);
    const std::uint32_t c = ps.conn[p * max_vcs + k];
    if (c != nil) {
      const conn_state& cs = conns_[c];
      if (cs.failing || cs.needs_sync || cs.backlog.count > 0 ||
          cs.m.tx.in_flight() >= cfg_.gbn.window || cs.m.tx.unreachable)
        return false;
    }
    // Strict order across ports: while a connection of the stream on another port still has
    // work (PDUs unacknowledged, moved there and waiting, being moved), the stream waits for
    // it; its PDUs then reach the peer in the order they were packed.
    if (!cfg_.unordered)
      for (std::size_t q = 0; q < cfg_.ports; ++q) {
        const std::uint32_t o = ps.conn[q * max_vcs + k];
        if (q == p || o == nil) continue;
        const conn_state& os = conns_[o];
        if (os.failing || os.waiting || os.kept.count > 0 || os.backlog.count > 0) return false;
      }
    return true;
  }

  bool send_new(std::uint8_t p, wire::mutable_bytes out, instance_frame& f) noexcept {
    packer_t& pk = packers_[lane(p)];
    if (pk.queued() == 0) return false;
    port_state& ps = ports_[p];
    // Room to keep what is packed, before packing it.
    const std::uint32_t k = cfg_.lite ? nil : kept_take();
    if (!cfg_.lite && k == nil) return false;
    std::uint64_t first_seq = 0;
    std::uint32_t count = 0;
    std::size_t bytes_freed = 0;
    // Packed where the frame will carry it: after the network header and the RH. Emitting the
    // frame then copies the payload onto itself.
    const std::size_t at = wire::header_size(cfg_.frame.kind) + (cfg_.lite ? 0 : 8);
    const auto r = pk.next(out.subspan(at), eligibility{this, p}, [&](std::uint64_t h) {
      const auto hh = static_cast<std::uint32_t>(h);
      if (count++ == 0) first_seq = cmd_meta_[hh].seq;
      bytes_freed += cmd_bytes_.size(hh);
      const cmd_meta& m = cmd_meta_[hh];
      --peers_[m.peer].queued[m.vc];
      cmd_bytes_.give(hh);
    });
    if (!r || r->commands == 0) {
      if (k != nil) kept_give(k);
      return false;
    }
    queued_ -= count;
    queued_bytes_ -= bytes_freed;
    const std::uint16_t pi = r->destination;
    const std::uint8_t vc = r->vc;
    const wire::bytes payload(out.data() + at, r->bytes);
    if (cfg_.lite) return emit_lite(p, pi, vc, payload, first_seq, count, out, f);
    // The PDU: kept until acknowledged, then sent.
    kept_pdu& kp = kept_[k];
    kp.vc = vc;
    kp.size = static_cast<std::uint16_t>(payload.size());
    kp.first_seq = first_seq;
    kp.count = count;
    if (payload.size() <= kp.small.size()) {
      wire::copy_short(kp.small.data(), payload.data(), payload.size());
    } else {
      kp.buf = kept_bytes_.take(payload.size());
      if (kp.buf == no_buffer) {
        // Nothing to keep it in: the commands fail rather than vanish.
        fail_run(pi, vc, first_seq, count, wire::errc::no_space);
        kept_give(k);
        return false;
      }
      wire::copy_bytes(kept_bytes_.data(kp.buf), payload.data(), payload.size());
    }
    const std::uint32_t c = conn_of(pi, p, key(vc));
    if (c == nil) {
      fail_run(pi, vc, first_seq, count, wire::errc::no_space);
      kept_give(k);
      return false;
    }
    const auto [tx, sa] =
        transport::step(conns_[c].m.tx, sender_event<16>{sender_input::send, {}}, now_, cfg_.gbn);
    conns_[c].m.tx = tx;
    append(conns_[c].kept, k);
    ++in_flight_;
    kept_[k].sent = true;
    ++stats_.pdus;
    const std::size_t need = frame_bytes(cfg_.frame.kind, wire::pdu_size(payload.size()));
    if (!ps.link.can_send(vc_class(vc), vc_priority(vc), need, now_) ||
        !emit(c, &kept_[k], sa.psn_assigned, out, f)) {
      // Kept with its PSN but not sent now: it goes out as a resend when the port can.
      kept_[k].sent = false;
      --stats_.pdus;
      queue_resend(c, sa.psn_assigned);
      f = instance_frame{};
      arm_conn(c);
      return false;
    }
    f.kind = frame_kind::pdu;
    f.link = ps.link.sent(wire::bytes(out.data(), f.size), vc_class(vc), now_);
    arm_conn(c);
    return true;
  }

  bool emit_lite(std::uint8_t p, std::uint16_t pi, std::uint8_t vc, wire::bytes payload,
                 std::uint64_t first_seq, std::uint32_t count, wire::mutable_bytes out,
                 instance_frame& f) noexcept {
    // SUE Lite: the VC in the AFH Gen 2 header's traffic class (R2 3.4: "the only information SUE
    // Lite uses are the Destination, Source XPU address, and VC").
    port_state& ps = ports_[p];
    const auto r = wire::emit_frame(params(peers_[pi].xpuid, vc), payload, out);
    // The packer's eligibility asked the link for room for the largest frame: this one fits.
    if (!r || !ps.link.can_send(vc_class(vc), vc_priority(vc), r.value, now_)) {
      fail_run(pi, vc, first_seq, count, r ? wire::errc::no_space : r.err.code);
      return false;
    }
    f.size = r.value;
    f.kind = frame_kind::lite;
    f.peer = peers_[pi].xpuid;
    f.vc = vc;
    f.first_seq = first_seq;
    f.commands = count;
    f.link = ps.link.sent(wire::bytes(out.data(), f.size), vc_class(vc), now_);
    ++stats_.pdus;
    // No end-to-end acknowledgement in SUE Lite: handed to the link, the commands are done.
    complete_run(pi, vc, first_seq, count);
    return true;
  }

  // ---- control frames (the failover exchange) and management packets ----
  bool send_control(std::uint8_t p, wire::mutable_bytes out, instance_frame& f) noexcept {
    port_state& ps = ports_[p];
    while (!ps.control.empty()) {
      const control_item it = ps.control.front();
      if (it.conn != nil) {
        // A request: still wanted?
        conn_state& cs = conns_[it.conn];
        if (!cs.failing || cs.generation != it.msg.generation || cs.to_port != p) {
          ps.control.pop_front();
          continue;
        }
        cs.request_queued = false;
      }
      wire::frame_params fp = params(it.to, wire_tc(cfg_.priorities.ack_priority));
      switch (fp.kind) {
        case wire::encap::udp4:
        case wire::encap::udp6:
          fp.udp_dst_port = fp.udp_src_port = wire::failover_udp_port;
          break;
        case wire::encap::afh1:
          fp.kind = wire::encap::afh1_shim;
          fp.shim_next_header = wire::shim_next_failover;
          break;
        case wire::encap::afh1_vlan:
          fp.kind = wire::encap::afh1_vlan_shim;
          fp.shim_next_header = wire::shim_next_failover;
          break;
        case wire::encap::afh1_vlan_shim:
          fp.shim_next_header = wire::shim_next_failover;
          break;
        default:  // AFH Gen 1's shim, AFH Gen 2 of either form (see sue_frame.hpp)
          fp.kind = wire::encap::afh1_shim;
          fp.shim_next_header = wire::shim_next_failover;
          break;
      }
      std::array<std::uint8_t, wire::layout<wire::failover_message>::size> msg{};
      if (!wire::encode(wire::sealed(it.msg), msg)) {
        ps.control.pop_front();
        continue;
      }
      const std::size_t bytes = frame_bytes(fp.kind, msg.size());
      if (!ps.link.can_send(cfg_.link.ack_class, cfg_.priorities.ack_priority, bytes, now_))
        return false;
      ps.control.pop_front();
      const auto r = wire::emit_frame(fp, msg, out);
      if (!r) continue;
      f.size = r.value;
      f.kind = frame_kind::control;
      f.peer = it.to;
      f.vc = it.msg.vc;
      f.link = ps.link.sent(wire::bytes(out.data(), f.size), cfg_.link.ack_class, now_);
      ++stats_.control_sent;
      return true;
    }
    return false;
  }

  bool send_management(std::uint8_t p, wire::mutable_bytes out, instance_frame& f) noexcept {
    port_state& ps = ports_[p];
    if (ps.mgmt.empty()) return false;
    const std::uint32_t h = ps.mgmt.front();
    const wire::bytes b = mgmt_bytes_.bytes(h);
    if (!ps.link.can_send(cfg_.link.ack_class, 0, b.size(), now_) || out.size() < b.size())
      return false;
    ps.mgmt.pop_front();
    wire::copy_bytes(out.data(), b.data(), b.size());
    mgmt_bytes_.give(h);
    f.size = b.size();
    f.kind = frame_kind::management;
    f.link = ps.link.sent(wire::bytes(out.data(), f.size), cfg_.link.ack_class, now_);
    ++stats_.management_sent;
    return true;
  }

  // The XPU's management packet (R2 3.1): SUE adds the FCS, holds the rate, and merges it into
  // the data path of the first port that is up (R2 4.2 step 3a).
  void management_send(const instance_event& e, instance_actions& a) noexcept {
    std::uint8_t p = no_port;
    for (std::uint8_t q = 0; q < cfg_.ports && p == no_port; ++q)
      if (ports_[q].up && !ports_[q].link.down()) p = q;
    if (p == no_port) {
      a.error = wire::error{.code = wire::errc::unreachable,
                            .layer = "mgmt",
                            .what = "no port is up for the management packet"};
      ++stats_.management_refused;
      return;
    }
    const std::uint32_t h = mgmt_bytes_.take(e.bytes.size() + fcs_size);
    if (h == no_buffer) {
      a.error = wire::error{.code = wire::errc::no_space,
                            .layer = "mgmt",
                            .needed = static_cast<std::uint32_t>(e.bytes.size() + fcs_size),
                            .what = "management packets waiting: none more until they go"};
      ++stats_.management_refused;
      return;
    }
    const auto r = transport::send_management(
        mgmt_, e.bytes, wire::mutable_bytes(mgmt_bytes_.data(h), e.bytes.size() + fcs_size), now_,
        cfg_.management);
    mgmt_ = r.port;
    if (!r.frame || !ports_[p].mgmt.push_back(h)) {
      a.error = r.frame ? wire::error{.code = wire::errc::no_space,
                                      .layer = "mgmt",
                                      .what = "management queue full"}
                        : r.frame.err;
      mgmt_bytes_.give(h);
      ++stats_.management_refused;
      return;
    }
    queued_on(p);
  }

  // ---- frames in ----
  void drop(std::uint8_t p, instance_drop why, std::uint16_t peer = 0, std::uint8_t vc = 0,
            std::uint16_t psn_ = 0) noexcept {
    ++stats_.dropped;
    note(instance_note{
        .kind = note_kind::dropped, .port = p, .vc = vc, .peer = peer, .psn = psn_, .why = why});
  }

  void arrived(const instance_event& e, instance_actions& a) noexcept {
    const std::uint8_t p = e.port;
    if (p >= cfg_.ports) return;
    port_state& ps = ports_[p];
    if (!ps.up) return drop(p, instance_drop::link_down);
    const std::size_t size = e.bytes.size();
    if (!ps.link.arrived(e.link, size, 0, now_)) {
      link_messages(p);
      arm_port(p);
      return drop(p, instance_drop::link);
    }
    sue_frame own;
    const sue_frame* s = e.read;
    if (!s) {
      own = read_sue_frame(e.bytes, receive_);
      s = &own;
    }
    if (s->ether_type == mac_control_type && !s->kind) {
      if (const auto pf = decode_pfc_frame(e.bytes)) ps.link.pfc_in(pf->pdu, now_);
    } else if (!s->control.empty()) {
      control_in(p, *s);
    } else if (cfg_.lite && s->lite()) {
      lite_in(p, *s, a);
    } else if (s->rh || s->kind) {
      pdu_in(p, *s, a);
    } else {
      management_in(p, e.bytes, a);
    }
    ports_[p].link.drained(e.link, size, 0, now_);
    link_messages(p);
    arm_port(p);
  }

  void lite_in(std::uint8_t p, const sue_frame& s, instance_actions& a) noexcept {
    if (!s.dst_xpu || *s.dst_xpu != cfg_.xpuid || !s.src_xpu || *s.src_xpu > 1023)
      return drop(p, instance_drop::misaddressed);
    if (s.tc >= cfg_.vcs) return drop(p, instance_drop::misaddressed);
    a.delivered =
        instance_delivery{true, false, static_cast<std::uint16_t>(*s.src_xpu), s.tc, p, s.payload};
    ++stats_.delivered;
    stats_.delivered_bytes += s.payload.size();
  }

  void management_in(std::uint8_t p, wire::bytes frame, instance_actions& a) noexcept {
    const auto r = transport::receive_management(mgmt_, frame);
    mgmt_ = r.port;
    if (!r.frame) return drop(p, instance_drop::management);
    ++stats_.management_received;
    a.delivered = instance_delivery{true, true, 0, 0, p, frame.first(r.frame.value)};
  }

  void pdu_in(std::uint8_t p, const sue_frame& s, instance_actions& a) noexcept {
    if (!s.good()) {
      ++stats_.bad_rcrc;
      return drop(p, instance_drop::bad_rcrc);
    }
    const wire::reliability_header& rh = *s.rh;
    if ((s.dst_xpu && *s.dst_xpu != cfg_.xpuid) || rh.xpuid == cfg_.xpuid || rh.vc >= cfg_.vcs)
      return drop(p, instance_drop::misaddressed, rh.xpuid, rh.vc, rh.npsn);
    if (rh.ver != 0) return drop(p, instance_drop::version, rh.xpuid, rh.vc, rh.npsn);
    const std::uint16_t pi = peer_index(rh.xpuid, true);
    if (pi == no_peer) return drop(p, instance_drop::no_room, rh.xpuid, rh.vc, rh.npsn);
    const std::uint32_t c = conn_of(pi, p, key(rh.vc));
    if (c == nil) return drop(p, instance_drop::no_room, rh.xpuid, rh.vc, rh.npsn);
    const bool allowed = cfg_.partitions ? cfg_.partitions->allowed(rh.xpuid, rh.partition)
                                         : rh.partition == cfg_.partition;
    if (!allowed) {
      // Isolation (R2 4.1): nothing of it is believed, its ACK included.
      if (!s.payload.empty())
        conns_[c].m.rx =
            transport::step(conns_[c].m.rx,
                            receiver_event<16>{receiver_input::pdu, psn<16>(rh.npsn), false}, now_,
                            cfg_.gbn)
                .first;
      ++stats_.partition;
      return drop(p, instance_drop::partition, rh.xpuid, rh.vc, rh.npsn);
    }
    // The reverse direction's acknowledgement, carried in this RH.
    if (rh.carries_ack() || rh.carries_nack()) {
      note(instance_note{.kind = rh.carries_ack() ? note_kind::ack_in : note_kind::nack_in,
                         .port = p,
                         .vc = rh.vc,
                         .peer = rh.xpuid,
                         .psn = rh.apsn});
      const sender_input in = rh.carries_ack() ? sender_input::ack : sender_input::nack;
      const auto r =
          transport::step(conns_[c].m.tx, sender_event<16>{in, psn<16>(rh.apsn)}, now_, cfg_.gbn);
      conns_[c].m.tx = r.first;
      apply_sender(c, r.second);
    }
    if (!s.payload.empty()) {
      const auto [rx, ra] = transport::step(
          conns_[c].m.rx, receiver_event<16>{receiver_input::pdu, psn<16>(rh.npsn), true}, now_,
          cfg_.gbn);
      conns_[c].m.rx = rx;
      if (ra.deliver) {
        a.delivered = instance_delivery{true, false, rh.xpuid, rh.vc, p, s.payload};
        ++stats_.delivered;
        stats_.delivered_bytes += s.payload.size();
      } else {
        const bool dup = ra.dropped == drop_reason::duplicate;
        ++(dup ? stats_.duplicates : stats_.gaps);
        drop(p, dup ? instance_drop::duplicate : instance_drop::gap, rh.xpuid, rh.vc, rh.npsn);
      }
      if (ra.ack_now) queue_ack(c);
    }
    arm_conn(c);
  }

  // What a sender machine said: PDUs acknowledged (their commands complete), a go-back, or the
  // retry limit (this plane does not reach the peer).
  void apply_sender(std::uint32_t c, const sender_actions<16>& sa) noexcept {
    if (sa.released > 0) release(c, sa.released);
    if (sa.resend > 0) queue_resend(c, sa.resend_from);
    if (sa.unreachable) plane_unreachable(c);
  }

  // The oldest n kept PDUs of c were acknowledged.
  void release(std::uint32_t c, std::uint32_t n) noexcept {
    const std::uint16_t pi = static_cast<std::uint16_t>(conns_[c].peer);
    // Runs of one VC whose numbers follow on are reported as one.
    std::uint8_t vc = 0;
    std::uint64_t first = 0;
    std::uint32_t count = 0;
    for (std::uint32_t i = 0; i < n && conns_[c].kept.count > 0; ++i) {
      const std::uint32_t k = pop(conns_[c].kept);
      const kept_pdu& kp = kept_[k];
      if (count > 0 && (kp.vc != vc || kp.first_seq != first + count)) {
        complete_run(pi, vc, first, count);
        count = 0;
      }
      if (count == 0) {
        vc = kp.vc;
        first = kp.first_seq;
      }
      count += kp.count;
      kept_give(k);
      --in_flight_;
    }
    if (count > 0) complete_run(pi, vc, first, count);
    drain_backlog(c);
  }
  void complete_run(std::uint16_t pi, std::uint8_t vc, std::uint64_t first,
                    std::uint32_t n) noexcept {
    stats_.completed += n;
    note(instance_note{.kind = note_kind::completed,
                       .vc = vc,
                       .peer = peers_[pi].xpuid,
                       .first_seq = first,
                       .count = n});
  }
  void fail_run(std::uint16_t pi, std::uint8_t vc, std::uint64_t first, std::uint32_t n,
                wire::errc why) noexcept {
    stats_.failed += n;
    note(instance_note{
        .kind = note_kind::failed,
        .vc = vc,
        .peer = peers_[pi].xpuid,
        .first_seq = first,
        .count = n,
        .error = wire::error{.code = why,
                             .layer = "sue",
                             .what = why == wire::errc::unreachable
                                         ? "the destination is unreachable on every port"
                                         : "no room to keep the PDU for retransmission",
                             .value = peers_[pi].xpuid}});
  }

  void queue_resend(std::uint32_t c, psn<16> from) noexcept {
    conn_state& cs = conns_[c];
    if (cs.resend_queued) {
      if (before(from, cs.resend_next)) cs.resend_next = from;
      return;
    }
    cs.resend_next = from;
    if (ports_[cs.port].resends.push_back(c)) {
      cs.resend_queued = true;
      queued_on(cs.port);
    }
  }
  void queue_ack(std::uint32_t c) noexcept {
    conn_state& cs = conns_[c];
    if (cs.ack_queued) return;
    if (ports_[cs.port].acks.push_back(c)) {
      cs.ack_queued = true;
      queued_on(cs.port);
    }
  }

  // Moved PDUs take PSNs on their new connection as its window allows, in order, and go out.
  void drain_backlog(std::uint32_t c) noexcept {
    conn_state& cs = conns_[c];
    if (cs.backlog.count == 0 || cs.failing || cs.needs_sync) return;
    const psn<16> first = cs.m.tx.next;
    std::uint32_t n = 0;
    while (cs.backlog.count > 0) {
      const auto [tx, sa] =
          transport::step(cs.m.tx, sender_event<16>{sender_input::send, {}}, now_, cfg_.gbn);
      if (!sa.assigned) break;
      cs.m.tx = tx;
      append(cs.kept, pop(cs.backlog));
      ++in_flight_;
      ++n;
    }
    if (n > 0) queue_resend(c, first);
    arm_conn(c);
  }

  // ---- failover (R2 3.5.8) ----
  // Connection c's peer does not answer on its plane: the plane is marked, and the work of every
  // connection to the peer on that plane moves to one that reaches it.
  void plane_unreachable(std::uint32_t c) noexcept {
    const std::uint16_t pi = static_cast<std::uint16_t>(conns_[c].peer);
    const std::uint8_t p = conns_[c].port;
    ++stats_.unreachable;
    note(instance_note{
        .kind = note_kind::unreachable, .port = p, .vc = conns_[c].key, .peer = peers_[pi].xpuid});
    mark_plane(pi, p, true);
  }

  // Strict: peer pi's streams pinned to a plane `leaving` names go to a plane that reaches the
  // peer, when one does.
  template <class Leaving>
  void repin_streams(std::uint16_t pi, Leaving leaving) noexcept {
    if (cfg_.unordered) return;
    for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc) {
      const peer_state& ps = peers_[pi];
      if (!ps.pinned[vc] || !leaving(ps.pin[vc])) continue;
      const std::uint8_t q = plane_for(pi, ps.pin[vc]);
      if (q != no_port) repin(pi, vc, q);
    }
  }

  // Sets or clears plane p of peer pi; on a change, work moves (down) or resumes (up).
  void mark_plane(std::uint16_t pi, std::uint8_t p, bool down) noexcept {
    peer_state& ps = peers_[pi];
    const auto bit = static_cast<std::uint8_t>(1u << p);
    const bool was = (ps.unreachable & bit) != 0;
    ps.unreachable = static_cast<std::uint8_t>(down ? ps.unreachable | bit : ps.unreachable & ~bit);
    if (down && !was) {
      for (std::uint8_t k = 0; k < max_vcs; ++k) {
        const std::uint32_t c = ps.conn[p * max_vcs + k];
        if (c != nil) move_work(c);
      }
      // Strict: streams pinned here go to a plane that reaches the peer.
      repin_streams(pi, [p](std::uint8_t pin) { return pin == p; });
    }
    if (!down) {
      // The link status says the plane works: what is in flight on it goes again now, with
      // a fresh count of tries (the timeouts counted while the plane was down say nothing of
      // it now).
      for (std::uint8_t k = 0; k < max_vcs; ++k) {
        const std::uint32_t c = peers_[pi].conn[p * max_vcs + k];
        if (c == nil) continue;
        conn_state& cs = conns_[c];
        if (cs.failing || cs.waiting || cs.m.tx.unreachable || cs.m.tx.in_flight() == 0) continue;
        cs.m.tx.retries = 0;
        cs.m.tx.deadline = now_ + cfg_.gbn.rto;
        queue_resend(c, cs.m.tx.una);
        arm_conn(c);
      }
      // So does a failover request on its way over this plane.
      for (std::size_t i = 0; i < cfg_.ports * max_vcs; ++i) {
        const std::uint32_t c = peers_[pi].conn[i];
        if (c == nil || !conns_[c].failing || conns_[c].to_port != p) continue;
        conns_[c].tries = 0;
        conns_[c].request_queued = false;
        send_request(c);
      }
    }
    if (!down && was) resume(pi);
    reachability(pi);
  }

  // A plane other than `from` that reaches peer pi, from the one after it; no_port if none.
  std::uint8_t plane_for(std::uint16_t pi, std::uint8_t from) const noexcept {
    for (std::uint8_t i = 1; i <= cfg_.ports; ++i) {
      const auto q = static_cast<std::uint8_t>((from + i) % cfg_.ports);
      if (q != from && usable(pi, q)) return q;
    }
    return no_port;
  }

  // Connection c's outstanding work (kept PDUs, a backlog) moves to a plane that reaches the
  // peer, through the failover exchange; with none, it waits for the link status to change.
  void move_work(std::uint32_t c) noexcept {
    conn_state& cs = conns_[c];
    if (cs.failing) {
      // Moving to a plane that itself stopped: choose again. The peer may have acted on a
      // request already and expect the base it named: the connection resynchronises before it
      // sends again, even with nothing outstanding.
      if (usable(static_cast<std::uint16_t>(cs.peer), cs.to_port)) return;
      cs.failing = false;
      cs.needs_sync = true;
    }
    if (cs.kept.count == 0 && cs.backlog.count == 0 && !cs.needs_sync) {
      cs.waiting = false;
      // Nothing in flight: the connection starts afresh on both ends only through an exchange;
      // with nothing outstanding there is nothing to lose, and the peer's receiver already
      // expects tx.next.
      return;
    }
    const std::uint16_t pi = static_cast<std::uint16_t>(cs.peer);
    std::uint8_t q = plane_for(pi, cs.port);
    // No other plane: the exchange goes over the connection's own, while its port is up and the
    // peer not declared unreachable. It resynchronises a plane that reaches the peer again, and
    // is the probe of one that may (loss, not a dead link, can exhaust the retries); the
    // declaration after unreachable_after bounds it.
    if (q == no_port && ports_[cs.port].up && !ports_[cs.port].link.down() && !peers_[pi].declared)
      q = cs.port;
    if (q == no_port) {
      cs.waiting = true;
      return;
    }
    start_failover(c, q);
  }

  void start_failover(std::uint32_t c, std::uint8_t q) noexcept {
    conn_state& cs = conns_[c];
    cs.waiting = false;
    cs.failing = true;
    cs.to_port = q;
    ++cs.generation;
    cs.tries = 0;
    // Far ahead of anything still on its way: the peer takes late arrivals for duplicates.
    cs.base = cs.m.tx.next + 2 * cfg_.gbn.window;
    cs.fail_at = now_;
    cs.resend_queued = false;
    send_request(c);
  }
  void send_request(std::uint32_t c) noexcept {
    conn_state& cs = conns_[c];
    control_item it;
    it.conn = c;
    it.to = peers_[cs.peer].xpuid;
    it.msg = wire::failover_message{.type = static_cast<std::uint8_t>(wire::failover_type::request),
                                    .port = cs.port,
                                    .vc = cs.key,
                                    .generation = cs.generation,
                                    .xpuid = cfg_.xpuid,
                                    .base = cs.base.value};
    if (!cs.request_queued && ports_[cs.to_port].control.push_back(it)) {
      cs.request_queued = true;
      queued_on(cs.to_port);
    }
    cs.fail_at = now_ + cfg_.gbn.rto;
    arm_conn(c);
  }
  // The request was not answered in time: again, up to the retry limit; then that plane does not
  // reach the peer either.
  void failover_retry(std::uint32_t c) noexcept {
    conn_state& cs = conns_[c];
    if (++cs.tries <= cfg_.gbn.max_retries) {
      cs.request_queued = false;
      send_request(c);
      return;
    }
    // The plane the request went over does not reach the peer either. A request that got
    // through may have moved the peer to the base it named, its reply lost: the connection
    // resynchronises before it sends again.
    const std::uint8_t q = cs.to_port;
    cs.failing = false;
    cs.needs_sync = true;
    cs.waiting = true;
    ++stats_.unreachable;
    note(instance_note{
        .kind = note_kind::unreachable, .port = q, .vc = cs.key, .peer = peers_[cs.peer].xpuid});
    const auto pi = static_cast<std::uint16_t>(cs.peer);
    mark_plane(pi, q, true);
    if (!conns_[c].failing) move_work(c);
  }

  void control_in(std::uint8_t p, const sue_frame& s) noexcept {
    const auto m = wire::read_failover(s.control);
    if (!m) return drop(p, instance_drop::bad_rcrc);  // damaged: the request is repeated
    if (!s.dst_xpu || *s.dst_xpu != cfg_.xpuid || m->xpuid == cfg_.xpuid || m->port >= cfg_.ports ||
        m->vc >= max_vcs)
      return drop(p, instance_drop::misaddressed);
    const std::uint16_t pi = peer_index(m->xpuid, true);
    if (pi == no_peer) return drop(p, instance_drop::no_room, m->xpuid);
    const std::uint32_t c = conn_of(pi, m->port, m->vc);
    if (c == nil) return drop(p, instance_drop::no_room, m->xpuid);
    if (m->type == static_cast<std::uint8_t>(wire::failover_type::request)) {
      conn_state& cs = conns_[c];
      // Acted on once per base: a request for the base already moved to (a repeat, or a new
      // attempt of a sender whose reply was lost, which has sent nothing since) gets the same
      // answer and moves nothing; answering it with the expected PSN of now, the base itself,
      // would tell the sender that everything it keeps was delivered.
      const bool repeat = cs.synced_any && cs.synced_base.value == m->base;
      if (!repeat) {
        // A sender's base is ahead of anything it sent (start_failover), so of what this end
        // expects: a request whose base is behind it is an older attempt (delayed on a plane, or
        // repeated by one) that a newer one overtook. Acting on it would move this end back, and
        // PDUs still on their way over the old plane, delivered since through the new one, would
        // be delivered again. The sender waits for the newer attempt's reply, not this one's.
        if (before(psn<16>(m->base), cs.m.rx.expected))
          return drop(p, instance_drop::duplicate, m->xpuid, m->vc, m->base);
        cs.synced_any = true;
        cs.synced_expected = cs.m.rx.expected;
        cs.synced_base = psn<16>(m->base);
        gbn_receiver<16> fresh;
        fresh.expected = psn<16>(m->base);
        fresh.delivered = cs.m.rx.delivered;
        fresh.duplicates = cs.m.rx.duplicates;
        fresh.dropped_gap = cs.m.rx.dropped_gap;
        cs.m.rx = fresh;
      }
      control_item it;
      it.to = m->xpuid;
      it.msg = wire::failover_message{.type = static_cast<std::uint8_t>(wire::failover_type::reply),
                                      .port = m->port,
                                      .vc = m->vc,
                                      .generation = m->generation,
                                      .xpuid = cfg_.xpuid,
                                      .base = cs.synced_base.value,
                                      .expected = cs.synced_expected.value};
      if (ports_[p].control.push_back(it)) queued_on(p);
      arm_conn(c);
      return;
    }
    if (m->type == static_cast<std::uint8_t>(wire::failover_type::reply)) failover_done(c, *m);
  }

  // The peer answered: what it delivered is done, the rest moves to the new connection.
  void failover_done(std::uint32_t c, const wire::failover_message& m) noexcept {
    conn_state& cs = conns_[c];
    if (!cs.failing || cs.generation != m.generation || cs.base.value != m.base) return;
    const auto pi = static_cast<std::uint16_t>(cs.peer);
    const std::uint8_t from = cs.port, to = cs.to_port, k = cs.key;
    const psn<16> expected(m.expected);
    // Delivered: everything before `expected` that is still kept.
    std::uint32_t done = 0;
    psn<16> at = cs.m.tx.una;
    for (std::uint32_t k2 = cs.kept.head; k2 != nil && before(at, expected);
         k2 = kept_[k2].next, ++at)
      ++done;
    if (done > 0) release_quiet(c, done);
    // The rest, and any backlog, move in order.
    list moved{};
    while (conns_[c].kept.count > 0) {
      const std::uint32_t x = pop(conns_[c].kept);
      kept_[x].sent = false;
      kept_[x].moved = true;
      --in_flight_;
      append(moved, x);
    }
    while (conns_[c].backlog.count > 0) append(moved, pop(conns_[c].backlog));
    conn_state& cs2 = conns_[c];
    gbn_sender<16> fresh;
    fresh.next = fresh.una = cs2.base;
    fresh.sent = cs2.m.tx.sent;
    fresh.resent = cs2.m.tx.resent;
    fresh.nacks = cs2.m.tx.nacks;
    fresh.timeouts = cs2.m.tx.timeouts;
    cs2.m.tx = fresh;
    cs2.failing = false;
    cs2.needs_sync = false;
    cs2.resend_queued = false;
    const std::uint32_t d = conn_of(pi, to, k);
    const std::uint32_t n = moved.count;
    if (d == nil) {
      // No room for the new connection: the work fails rather than vanishes.
      for (std::uint32_t x = moved.head; x != nil;) {
        const std::uint32_t next = kept_[x].next;
        fail_run(pi, kept_[x].vc, kept_[x].first_seq, kept_[x].count, wire::errc::no_space);
        kept_give(x);
        x = next;
      }
    } else {
      list& b = conns_[d].backlog;
      for (std::uint32_t x = moved.head; x != nil;) {
        const std::uint32_t next = kept_[x].next;
        append(b, x);
        x = next;
      }
    }
    ++stats_.failovers;
    stats_.moved += n;
    note(instance_note{.kind = note_kind::failover,
                       .port = from,
                       .to_port = to,
                       .vc = k,
                       .peer = peers_[pi].xpuid,
                       .count = n});
    // Strict: the streams of this connection pinned to the failed plane follow the work.
    if (!cfg_.unordered && from != to)
      for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc)
        if (key(vc) == k && peers_[pi].pinned[vc] && peers_[pi].pin[vc] == from) repin(pi, vc, to);
    if (d != nil) drain_backlog(d);
    arm_conn(c);
    // The peer answered over `to`: that plane reaches it.
    if ((peers_[pi].unreachable >> to) & 1u)
      mark_plane(pi, to, false);
    else
      reachability(pi);
  }
  // Acknowledged by the failover reply: like an ACK.
  void release_quiet(std::uint32_t c, std::uint32_t n) noexcept {
    const std::uint16_t pi = static_cast<std::uint16_t>(conns_[c].peer);
    for (std::uint32_t i = 0; i < n && conns_[c].kept.count > 0; ++i) {
      const std::uint32_t k = pop(conns_[c].kept);
      complete_run(pi, kept_[k].vc, kept_[k].first_seq, kept_[k].count);
      kept_give(k);
      --in_flight_;
    }
  }

  // A plane reaches peer pi again: stranded work moves.
  void resume(std::uint16_t pi) noexcept {
    // Strict: a stream left pinned to a plane that does not reach the peer (no other plane did
    // when it was lost) goes to one that does, or its queued commands wait there for good.
    repin_streams(pi, [&](std::uint8_t pin) { return !usable(pi, pin); });
    for (std::size_t i = 0; i < cfg_.ports * max_vcs; ++i) {
      const std::uint32_t c = peers_[pi].conn[i];
      if (c == nil) continue;
      conn_state& cs = conns_[c];
      if (cs.waiting || (cs.m.tx.unreachable && (cs.kept.count > 0 || cs.backlog.count > 0)) ||
          (cs.needs_sync && !cs.failing))
        move_work(c);
    }
  }

  // After any change of a peer's planes: all of them lost starts the clock of unreachable_after;
  // one back stops it, and a peer declared unreachable is reachable again.
  void reachability(std::uint16_t pi) noexcept {
    peer_state& ps = peers_[pi];
    bool any = false;
    for (std::uint8_t q = 0; q < cfg_.ports; ++q) any = any || usable(pi, q);
    if (!any) {
      if (!ps.all_down && !ps.declared) {
        ps.all_down = true;
        ps.all_down_at = now_;
        arm(owner_of_peer(pi), now_ + cfg_.unreachable_after);
      }
      return;
    }
    ps.all_down = false;
    if (ps.declared) {
      ps.declared = false;
      --declared_;
      note(instance_note{.kind = note_kind::peer_reachable, .peer = ps.xpuid});
      for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc) ps.pinned[vc] = false;
      resume(pi);
    }
  }

  // No plane reached peer pi for unreachable_after: everything for it fails, and nothing more is
  // sent until a plane reaches it again; its connections then resynchronise before carrying
  // anything.
  void declare_unreachable(std::uint16_t pi) noexcept {
    peer_state& ps = peers_[pi];
    ps.declared = true;
    ps.all_down = false;
    ++declared_;
    ++stats_.peers_unreachable;
    note(instance_note{.kind = note_kind::peer_unreachable, .peer = ps.xpuid});
    for (std::size_t i = 0; i < cfg_.ports * max_vcs; ++i) {
      const std::uint32_t c = peers_[pi].conn[i];
      if (c == nil) continue;
      for (list* l : {&conns_[c].kept, &conns_[c].backlog}) {
        const bool kept = l == &conns_[c].kept;
        while (l->count > 0) {
          const std::uint32_t k = pop(*l);
          fail_run(pi, kept_[k].vc, kept_[k].first_seq, kept_[k].count, wire::errc::unreachable);
          kept_give(k);
          if (kept) --in_flight_;
        }
      }
      conn_state& cs = conns_[c];
      gbn_sender<16> fresh;
      fresh.next = fresh.una = cs.m.tx.next;
      cs.m.tx = fresh;
      cs.failing = cs.waiting = cs.resend_queued = false;
      cs.needs_sync = true;
      arm_conn(c);
    }
    // Queued commands fail too, in their order.
    for (std::uint8_t vc = 0; vc < cfg_.vcs; ++vc)
      for (std::size_t l = 0; l < (cfg_.unordered ? 1 : cfg_.ports); ++l)
        packers_[l].drain(pi, vc, [&](const pack::queued_command& q) {
          const auto h = static_cast<std::uint32_t>(q.cookie);
          const cmd_meta m = cmd_meta_[h];
          --peers_[pi].queued[m.vc];
          --queued_;
          queued_bytes_ -= cmd_bytes_.size(h);
          cmd_bytes_.give(h);
          fail_run(pi, m.vc, m.seq, 1, wire::errc::unreachable);
        });
    for (std::size_t l = 0; l < cfg_.ports; ++l) packer_changed(l);
  }

  // ---- link status (R2 3.5.8) ----
  void link_status(std::uint8_t p, bool up) noexcept {
    port_state& ps = ports_[p];
    if (ps.up == up) return;
    ps.up = up;
    up_ = static_cast<std::uint8_t>(up ? up_ | (1u << p) : up_ & ~(1u << p));
    note(instance_note{.kind = up ? note_kind::link_up : note_kind::link_down, .port = p});
    ps.link.reset(now_);
    if (!up) {
      // Nothing of this port's goes out: owed ACKs are said again by the next PDU, resends are
      // the failover's, control items are repeated on their timers.
      while (!ps.acks.empty()) {
        conns_[ps.acks.front()].ack_queued = false;
        ps.acks.pop_front();
      }
      while (!ps.resends.empty()) {
        conns_[ps.resends.front()].resend_queued = false;
        ps.resends.pop_front();
      }
      while (!ps.control.empty()) {
        const control_item it = ps.control.front();
        if (it.conn != nil) conns_[it.conn].request_queued = false;
        ps.control.pop_front();
      }
      queues_changed(p);
      for (std::uint16_t pi = 0; pi < peer_count_; ++pi) plane_changed(pi, p);
      return;
    }
    ps.link.start(now_);
    link_messages(p);
    arm_port(p);
    // Up: every peer is reachable on it again, as far as this end knows.
    for (std::uint16_t pi = 0; pi < peer_count_; ++pi) mark_plane(pi, p, false);
    for (std::uint16_t pi = 0; pi < peer_count_; ++pi) resume(pi);
  }
  // This port went down: to every peer, the plane is gone.
  void plane_changed(std::uint16_t pi, std::uint8_t p) noexcept {
    peer_state& ps = peers_[pi];
    const auto bit = static_cast<std::uint8_t>(1u << p);
    const bool was = (ps.unreachable & bit) != 0;
    if (!was) {
      mark_plane(pi, p, true);
    } else {
      reachability(pi);
    }
  }
  // LLR gave up on the link (its retry limit): the link is down.
  void link_failed(std::uint8_t p) noexcept { link_status(p, false); }

  void peer_status(std::uint16_t peer, std::uint8_t p, bool up) noexcept {
    if (peer > 1023 || p >= cfg_.ports || peer == cfg_.xpuid) return;
    const std::uint16_t pi = peer_index(peer, false);
    if (pi == no_peer) return;
    mark_plane(pi, p, !up);
  }

  void link_messages(std::uint8_t p) noexcept {
    port_state& ps = ports_[p];
    for (const link_message& m : ps.link.messages())
      note(instance_note{.kind = note_kind::link_message, .port = p, .message = m});
    ps.link.clear_messages();
  }

  instance_config cfg_;
  wire::error error_{};
  wire::receive_options receive_{};
  pack::profile_boundaries boundaries_{cfg_.profile ? *cfg_.profile : pack::default_profile};
  pack::table<std::uint16_t, 1024, S> peer_of_;  // by XPU id: its peer slot + 1 (0: none)
  pack::table<peer_state, max_peers, S> peers_;
  std::size_t peer_count_ = 0;
  pack::table<conn_state, max_conns, S> conns_;
  std::size_t conn_count_ = 0;
  pack::table<kept_pdu, Sizing::kept, S> kept_;
  std::size_t kept_size_ = 0;
  std::uint32_t kept_free_ = nil;
  pack::table<cmd_meta, Sizing::commands, S> cmd_meta_;
  byte_pool<Sizing::commands, pack::max_command_bytes, S> cmd_bytes_;
  byte_pool<Sizing::kept, Sizing::max_payload, S> kept_bytes_;
  byte_pool<mgmt_slots, mgmt_bytes, S> mgmt_bytes_;
  std::array<packer_t, max_ports> packers_;
  std::array<port_state, max_ports> ports_;
  pack::table<timer_entry, owners, S> timers_;
  pack::table<std::uint32_t, owners, S> timer_pos_;
  std::size_t timer_count_ = 0;
  management_port mgmt_{};
  std::size_t queued_ = 0;
  std::uint64_t queued_bytes_ = 0;
  std::size_t in_flight_ = 0;
  std::uint32_t declared_ = 0;
  struct extra_rh {
    bool due = false;
    std::uint32_t conn = 0;
    wire::rh_op op = wire::rh_op::none;
    psn<16> apsn{};
  };
  extra_rh extra_{};
  bool misbehaved_ = false;
  std::uint8_t stalled_ = 0;
  // Bit p: port p is up; its lane's packer holds commands; its own queues hold something.
  std::uint8_t up_ = 0xFF;
  std::uint8_t packed_ = 0;
  std::uint8_t queued_work_ = 0;
  bool in_timers_ = false;
  std::uint64_t now_ = 0;
  instance_stats stats_{};
  note_sink sink_{};
};

}  // namespace scaleup::transport
