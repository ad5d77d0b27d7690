// Go-back-N sequence analysis of a capture, after Wireshark's TCP analysis (packet-tcp.c): each
// data PDU is judged against what the capture showed of its connection before it, and each ACK
// or NACK against the PDUs it covers. `scaleup stats` and the Wireshark plugin both run this,
// so a capture reads the same in both.
//
// Unlike the wire formats this is opt-in state that grows with the capture (a table of
// connections, a result per frame unless told not to keep them), so it uses the heap.
//
// What a capture can tell, and so what the results mean (docs/wire-format.md):
// - A connection is {source, destination, port, VC} (decisions.md "SUE transport"), each end as
//   the frame names it: XPU ids where the destination XPU is known (AFH Gen 1
//   and Gen 2 carry it; over IP the user's XPU map may give it, the engine's options.xpus), the
//   source then being the RH xpuid; otherwise, over IP, the two IP addresses, the RH xpuid kept
//   as the connection's source XPU. A frame does not say which port it crossed: the caller
//   passes what it knows (a capture interface), else 0.
// - Only a PDU with a payload takes a PSN. A stand-alone ACK/NACK (an RH only) carries the
//   sender's next PSN for information; it is read only for its acknowledgement.
// - The ACK or NACK in an RH belongs to the reverse connection on the same VC.
// - Which frames count: every frame whose RH was captured, unless a
//   receiver would drop it before its payload is handed on: a bad R-CRC, a bad FCS, or another
//   error (not a warning or a note) in the frame, its network headers or the RH (a datagram
//   longer than the frame, ...). Not reasons to leave a PDU out: the capture's snapshot length
//   (an R-CRC not_captured: lengths come from the wire), IP and UDP checksums (warnings, and
//   only when asked: a sending host's capture holds offloaded ones), and whatever is inside
//   the packed commands: a payload the command profile cannot parse (a warning) and fixed or
//   reserved values of a command that did parse (errors of that command, the XPU's business
//   once the transport has accepted the PDU). counts_against_pdu says which problems count.
// - Results are cached per frame number: a frame analysed again (Wireshark's second pass, or a
//   frame clicked in any order) gets what the first pass computed (analysis_config::
//   keep_results; off, what is kept grows with the connections, not the frames: a connection's
//   RTTs in a histogram of bounded size, its PSNs not yet acknowledged (at most half the PSN
//   space: psn_ordered.hpp), and with record_events a trace of bounded size).
// - At most analysis_config::max_connections connections are kept (limits.hpp): a frame that
//   names a new one beyond it is not analysed for it (flag not_analysed, counted by
//   not_analysed_frames()); what it says of a connection already kept still counts, and nothing
//   counted before changes.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "scaleup/dissect/address_text.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flat_index.hpp"
#include "scaleup/dissect/limits.hpp"
#include "scaleup/dissect/psn_ordered.hpp"
#include "scaleup/dissect/psn_trace.hpp"
#include "scaleup/dissect/rtt_histogram.hpp"
#include "scaleup/dissect/text_format.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/transport/psn.hpp"
#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/ip_address.hpp"
#include "scaleup/wire/reliability_header.hpp"
#include "scaleup/wire/siphash.hpp"
#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::dissect {

// One end of a connection as the frames name it: an XPU id, or an IP address.
struct endpoint {
  enum class kind : std::uint8_t { xpu, ip };
  kind type = kind::xpu;
  std::uint32_t xpu = 0;  // kind::xpu
  wire::ip_address ip{};  // kind::ip

  static constexpr endpoint of_xpu(std::uint32_t x) noexcept { return {kind::xpu, x, {}}; }
  static constexpr endpoint of_ip(const wire::ip_address& a) noexcept { return {kind::ip, 0, a}; }
  // The same, made in place, member by member: a value made on the stack and copied in is
  // stored in narrow pieces and loaded back whole, before the stores reach the cache (a stall).
  constexpr void set_xpu(std::uint32_t x) noexcept {
    type = kind::xpu;
    xpu = x;
    ip = {};
  }
  constexpr void set_ip(const wire::ip_address& a) noexcept {
    type = kind::ip;
    xpu = 0;
    ip = a;
  }
  constexpr bool is_xpu() const noexcept { return type == kind::xpu; }
  friend constexpr auto operator<=>(const endpoint&, const endpoint&) = default;
};

// "XPU 7", "192.168.1.10", "fd00::1".
template <class Out>
void put_endpoint(Out& out, const endpoint& e) {
  if (e.is_xpu()) {
    out("XPU ");
    detail::put_uint(out, e.xpu);
  } else if (e.ip.version == 4) {
    detail::put_ipv4(out, e.ip.ipv4());
  } else {
    detail::put_ipv6(out, e.ip.bytes.data());
  }
}
inline std::string to_string(const endpoint& e) {
  std::string s;
  const auto out = [&](std::string_view v) { s.append(v); };
  put_endpoint(out, e);
  return s;
}

struct connection_key {
  endpoint src{};  // what sends the PDUs
  endpoint dst{};  // what receives them
  std::uint16_t port = 0;
  std::uint8_t vc = 0;
  friend constexpr auto operator<=>(const connection_key&, const connection_key&) = default;
};

// The port of a frame taken on capture interface `interface` (a pcapng of a fabric's planes,
// one interface per port): what connections are keyed by when interfaces are ports. Interfaces
// beyond the last port number share it, in every tool alike: a wrapped number would put a frame
// of interface 65536 on port 0's connections.
constexpr std::uint16_t port_of_interface(std::uint32_t interface) noexcept {
  return static_cast<std::uint16_t>(interface < 0xFFFF ? interface : 0xFFFF);
}

// The key of the connection an ACK acknowledges: the frame's own, its ends swapped. Looked up
// as it is (flat_index::insert), not built: a key assembled field by field on the stack and read
// back at once with wide loads stalled every ACK (store forwarding fails).
struct reversed_key {
  const connection_key& of;
  explicit constexpr operator connection_key() const noexcept {
    return {of.dst, of.src, of.port, of.vc};
  }
  friend constexpr bool operator==(const connection_key& k, const reversed_key& r) noexcept {
    return k.src == r.of.dst && k.dst == r.of.src && k.port == r.of.port && k.vc == r.of.vc;
  }
};

// Every frame looks its connection up (a PDU carrying an ACK, the one it acknowledges too, until
// the analysis keeps that one's number beside its own: analysis::reverse_): hashed, not a search
// through a tree of keys that compares 16-byte addresses at every step. The hash is keyed
// (flat_index.hpp): the ends' addresses, then one word of the rest. An end is an XPU, its address
// zero, or an address, its XPU zero (endpoint::of_xpu, of_ip): the XPU shares the address' first
// word. The addresses' second words are left out when both are zero (wire::keyed_hash_of_ends).
struct connection_key_hash {
  static constexpr std::uint64_t of(const wire::hash_key& key, const endpoint& src,
                                    const endpoint& dst, std::uint16_t port,
                                    std::uint8_t vc) noexcept {
    const std::uint64_t rest =
        std::uint64_t{static_cast<std::uint8_t>(src.type)} | std::uint64_t{src.ip.version} << 8 |
        std::uint64_t{static_cast<std::uint8_t>(dst.type)} << 16 |
        std::uint64_t{dst.ip.version} << 24 | std::uint64_t{port} << 32 | std::uint64_t{vc} << 48;
    return wire::keyed_hash_of_ends(key, src.ip.raw_word(0) ^ src.xpu, src.ip.raw_word(1),
                                    dst.ip.raw_word(0) ^ dst.xpu, dst.ip.raw_word(1), rest);
  }
  constexpr std::uint64_t operator()(const wire::hash_key& key,
                                     const connection_key& k) const noexcept {
    return of(key, k.src, k.dst, k.port, k.vc);
  }
  constexpr std::uint64_t operator()(const wire::hash_key& key,
                                     const reversed_key& r) const noexcept {
    return of(key, r.of.dst, r.of.src, r.of.port, r.of.vc);
  }
};

// ---- what the analysis reports, described once for every consumer ------------------------

enum class flag : std::uint16_t {
  retransmission = 1u << 0,
  out_of_order = 1u << 1,
  gap = 1u << 2,
  duplicate = 1u << 3,
  nack = 1u << 4,
  window_full = 1u << 5,
  not_analysed = 1u << 6,
};

enum class concern : std::uint8_t { note, warning };

struct flag_info {
  flag bit;
  std::string_view filter;
  std::string_view summary;
  concern level;
};

inline constexpr std::string_view analysis_filter = "sue.analysis";

// Severities follow Wireshark's TCP analysis: what the protocol does by design (retransmit,
// NACK, fill its window) is a note; what the capture cannot explain is a warning.
inline constexpr std::array<flag_info, 7> analysis_flags{{
    {flag::retransmission, "sue.analysis.retransmission",
     "Retransmission: this PSN was sent before on this connection", concern::note},
    {flag::out_of_order, "sue.analysis.out_of_order",
     "Out of order: a PSN below the highest sent that was not seen before", concern::warning},
    {flag::gap, "sue.analysis.gap", "Gap: PSNs skipped; the PDUs before this one were not captured",
     concern::warning},
    {flag::duplicate, "sue.analysis.duplicate",
     "Duplicate: this PSN was already acknowledged, the receiver has it", concern::note},
    {flag::nack, "sue.analysis.nack",
     "NACK: the receiver asks for every PDU from apsn on again (go back N)", concern::note},
    {flag::window_full, "sue.analysis.window_full",
     "Window full: PDUs in flight reached the go-back-N window", concern::note},
    {flag::not_analysed, "sue.analysis.not_analysed",
     "Not analysed: a new connection beyond the connection limit (its PDU or ACK left out)",
     concern::warning},
}};

enum class unit : std::uint8_t { index, count, frame, nanoseconds };

enum class result_value : std::uint8_t {
  connection,
  acked_connection,
  missing,
  in_flight,
  first_frame,
  acks_frame,
  ack_rtt,
};

struct result_field {
  result_value which;
  std::string_view name;
  std::string_view filter;
  std::string_view description;
  unit kind;
};

inline constexpr std::array<result_field, 7> analysis_values{{
    {result_value::connection, "connection", "sue.analysis.connection",
     "The PDU's connection, numbered in order of first appearance", unit::index},
    {result_value::acked_connection, "acknowledged connection", "sue.analysis.acked_connection",
     "The connection this frame's ACK or NACK is for (the reverse direction)", unit::index},
    {result_value::missing, "missing PSNs", "sue.analysis.missing", "PSNs skipped before this PDU",
     unit::count},
    {result_value::in_flight, "PDUs in flight", "sue.analysis.in_flight",
     "PSNs sent and not yet acknowledged, this one included", unit::count},
    {result_value::first_frame, "first sent in frame", "sue.analysis.first_frame",
     "Where this retransmitted PSN was first sent", unit::frame},
    {result_value::acks_frame, "acknowledges frame", "sue.analysis.acks_frame",
     "Where the PSN this ACK covers was first sent", unit::frame},
    {result_value::ack_rtt, "ACK RTT", "sue.analysis.ack_rtt",
     "From the first transmission of a PSN to the ACK that covers it", unit::nanoseconds},
}};

struct frame_result {
  std::uint16_t flags = 0;
  std::uint16_t present = 0;  // bit i: values[i] is set
  bool analysed = false;      // a PDU of ours went through the analysis in this frame
  std::array<std::uint64_t, analysis_values.size()> values{};

  constexpr bool has(flag f) const noexcept { return flags & static_cast<std::uint16_t>(f); }
  constexpr std::optional<std::uint64_t> get(result_value v) const noexcept {
    const auto i = static_cast<std::size_t>(v);
    if (!(present & (1u << i))) return std::nullopt;
    return values[i];
  }
  constexpr void set(flag f) noexcept { flags |= static_cast<std::uint16_t>(f); }
  constexpr void set(result_value v, std::uint64_t x) noexcept {
    const auto i = static_cast<std::size_t>(v);
    present = static_cast<std::uint16_t>(present | (1u << i));
    values[i] = x;
  }
};

// ---- what a frame tells the analysis -------------------------------------------------------

struct frame_facts {
  std::uint64_t frame = 0;  // 1-based, as Wireshark numbers frames
  std::int64_t time_ns = 0;
  connection_key key{};     // the direction the frame travels
  std::uint16_t xpuid = 0;  // the RH's: the source XPU, whatever the key's ends are
  std::uint8_t op = 2;
  std::uint16_t npsn = 0;
  std::uint16_t apsn = 0;
  bool data = false;  // has a payload, so its npsn is a PSN of its own
  std::uint32_t length = 0;
};

// The destination XPU where the frame carries one or the XPU map gave one (pdu_summary).
template <class Tree>
constexpr std::optional<std::uint32_t> destination_xpu(const Tree& t) noexcept {
  return t.pdu.dst_xpu;
}

// What a caller knows of a PDU dissected on its own, whose tree has no network header (a tunnel,
// a reassembled datagram): the addresses it came with, and the destination XPU where the frame
// carries one or the user's map gives one.
struct carrier_hint {
  std::optional<wire::ip_address> src;
  std::optional<wire::ip_address> dst;
  std::optional<std::uint32_t> dst_xpu;
};

// The ends of a frame's connection (source, destination) into `key`: XPU ids when the
// destination XPU is known, the source being the RH xpuid; else the IP addresses; else false,
// and `key` is left as it was. Written in place, not returned: a key (60 bytes) built field by
// field and then copied is read back with wide loads before its narrow stores have reached the
// cache, a stall per frame (store forwarding fails) that was 5 % of `scaleup stats`.
template <class Tree>
constexpr bool set_endpoints(const Tree& t, const carrier_hint& hint,
                             connection_key& key) noexcept {
  const pdu_summary& p = t.pdu;
  if (!p.rh) return false;
  if (const auto& to = p.dst_xpu ? p.dst_xpu : hint.dst_xpu) {
    key.src.set_xpu(p.rh->xpuid);
    key.dst.set_xpu(*to);
    return true;
  }
  const bool own = p.src_ip && p.dst_ip;
  const std::optional<wire::ip_address>& from = own ? p.src_ip : hint.src;
  const std::optional<wire::ip_address>& at = own ? p.dst_ip : hint.dst;
  if (!from || !at) return false;
  key.src.set_ip(*from);
  key.dst.set_ip(*at);
  return true;
}

// The ends of a frame's connection (source, destination), as set_endpoints finds them.
template <class Tree>
constexpr std::optional<std::pair<endpoint, endpoint>> endpoints_of(
    const Tree& t, const carrier_hint& hint = {}) noexcept {
  connection_key k;
  if (!set_endpoints(t, hint, k)) return std::nullopt;
  return std::pair{k.src, k.dst};
}

// What the analysis needs from a dissected frame into `f`, or false when the frame holds no RH
// or a receiver would drop it (pdu_summary::dropped); `f` is then not all written. `hint`
// stands in for the network header when the tree has none (a PDU dissected on its own, its
// addresses known to the caller). In place, for the reason set_endpoints gives.
template <class Tree>
constexpr bool set_facts(const Tree& t, std::uint64_t frame, std::int64_t time_ns, frame_facts& f,
                         std::uint16_t port = 0, const carrier_hint& hint = {}) noexcept {
  const pdu_summary& p = t.pdu;
  if (!p.rh || p.dropped || !set_endpoints(t, hint, f.key)) return false;
  f.frame = frame;
  f.time_ns = time_ns;
  f.key.port = port;
  f.key.vc = p.rh->vc;
  f.xpuid = p.rh->xpuid;
  f.op = p.rh->op;
  f.npsn = p.rh->npsn;
  f.apsn = p.rh->apsn;
  f.data = p.payload_length > 0;
  f.length = t.length_on_wire();
  return true;
}

// The same as a value, or nothing.
template <class Tree>
constexpr std::optional<frame_facts> facts_of(const Tree& t, std::uint64_t frame,
                                              std::int64_t time_ns, std::uint16_t port = 0,
                                              const carrier_hint& hint = {}) noexcept {
  std::optional<frame_facts> f(std::in_place);
  if (!set_facts(t, frame, time_ns, *f, port, hint)) f.reset();
  return f;
}

// ---- the analysis --------------------------------------------------------------------------

struct analysis_config {
  std::uint32_t window = transport::gbn_config{}.window;
  bool record_events = false;  // trace transmissions, ACKs and NACKs (for graphs: psn_trace)
  // Keep each frame's result, so that a frame analysed again (Wireshark's second pass, a frame
  // clicked out of order) gets its first one: a frame_result per frame of the capture. A tool
  // that reads a capture once (`scaleup stats`) turns it off, and its memory then grows with
  // the connections only.
  bool keep_results = true;
  // Connections kept at most (limits.hpp); a frame naming a new one beyond is not analysed.
  std::size_t max_connections = default_max_connections;
};

// A 16-bit PSN as a 64-bit count: the value nearest `ref` (an unwrapped PSN known before) in
// serial-number arithmetic, so that order and distances hold across wraparound.
constexpr std::int64_t unwrap_psn(std::int64_t ref, std::uint16_t raw) noexcept {
  const transport::psn<16> r(static_cast<std::uint32_t>(((ref % 65536) + 65536) % 65536));
  const transport::psn<16> p(raw);
  return before(p, r) ? ref - distance(p, r) : ref + distance(r, p);
}

// What the analysis keeps of a connection; its key is the analysis' (analysis::key), its trace
// too (analysis::events, with record_events). 144 bytes on x86-64 (a test keeps it so), plus its
// PSNs in flight, its RTTs from the second and its counters of what went wrong where it has any
// (docs/robustness.md, "Limits").
struct connection {
 private:
  friend class analysis;
  // First: in the same word as src_xpu.
  bool sent_any_ = false;
  bool acked_any_ = false;

 public:
  // The RH xpuid of its first PDU: the source XPU, also where the key's ends are IP addresses.
  std::optional<std::uint16_t> src_xpu;
  std::uint64_t pdus = 0;    // data PDUs, retransmissions included
  std::uint64_t acks = 0;    // ACKs received for this connection
  std::uint64_t frames = 0;  // frames of either direction that concern it
  std::uint64_t bytes = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;

  // What goes wrong, counted out of line (connection::rare): most connections never see any.
  std::uint64_t retransmissions() const noexcept { return rare_ ? rare_->retransmissions : 0; }
  // Retransmissions of PSNs already acknowledged.
  std::uint64_t duplicates() const noexcept { return rare_ ? rare_->duplicates : 0; }
  std::uint64_t out_of_order() const noexcept { return rare_ ? rare_->out_of_order : 0; }
  std::uint64_t gaps() const noexcept { return rare_ ? rare_->gaps : 0; }  // PDUs after a skip...
  std::uint64_t missing() const noexcept { return rare_ ? rare_->missing : 0; }  // ...PSNs skipped
  std::uint64_t nacks() const noexcept { return rare_ ? rare_->nacks : 0; }      // NACKs received
  std::uint64_t window_full() const noexcept { return rare_ ? rare_->window_full : 0; }

  // ACK RTTs in ns, from each PSN's first transmission to the ACK that covers it.
  const rtt_record& ack_rtt() const noexcept { return rtt_; }
  // PSNs sent and not yet acknowledged that it remembers: at most psn_horizon.
  std::size_t psns_kept() const noexcept { return outstanding_.size(); }

  // PSNs unwrapped into a 64-bit count (serial arithmetic against the newest known PSN), so
  // that order and distances hold across wraparound; the first PSN seen keeps its value.
  std::int64_t unwrap(std::uint16_t raw) const noexcept {
    if (!sent_any_ && !acked_any_) return raw;
    return unwrap_psn(sent_any_ ? highest_ : acked_, raw);
  }

 private:
  struct sent {
    std::uint64_t frame;
    std::int64_t time_ns;
  };
  // The counters of what goes wrong: on the heap from the first such event, so that a
  // connection without any (most of a short capture's) is 56 bytes smaller.
  struct rare {
    std::uint64_t retransmissions = 0, duplicates = 0, out_of_order = 0, gaps = 0, missing = 0,
                  nacks = 0, window_full = 0;
  };
  std::unique_ptr<rare> rare_;
  rare& went_wrong() {
    if (!rare_) rare_ = std::make_unique<rare>();
    return *rare_;
  }
  std::int64_t highest_ = 0;       // highest PSN sent
  std::int64_t acked_ = 0;         // highest PSN acknowledged (cumulative)
  std::int64_t una_ = 0;           // oldest PSN not acknowledged
  psn_ordered<sent> outstanding_;  // first transmissions not yet acknowledged
  // Sparse: the first RTT in a word, then a few words on the heap (rtt_histogram.hpp). A dense
  // histogram a connection (58 KiB, two pages touched by one sample) was 8 KiB of resident
  // memory for each connection that saw an ACK.
  rtt_record rtt_;

  void touch(const frame_facts& f) {
    if (frames++ == 0) first_ns = f.time_ns;
    last_ns = f.time_ns;
    bytes += f.length;
  }
};

class analysis {
 public:
  explicit analysis(analysis_config cfg = {}) : cfg_(cfg) {}

  const analysis_config& config() const noexcept { return cfg_; }
  const std::vector<connection>& connections() const noexcept { return conns_; }
  // Connection i's key {source, destination, port, VC}.
  const connection_key& key(std::size_t i) const noexcept { return index_.keys()[i]; }
  // Connection i's transmissions, ACKs and NACKs over time (analysis_config::record_events;
  // otherwise empty).
  const psn_trace& events(std::size_t i) const noexcept {
    static const psn_trace none;
    return i < traces_.size() ? traces_[i] : none;
  }
  // Frames not analysed, or not wholly, because they named a new connection beyond
  // analysis_config::max_connections (flag::not_analysed).
  std::uint64_t not_analysed_frames() const noexcept { return not_analysed_; }
  // The slots the table of connections examined (flat_index::probe_stats).
  dissect::probe_stats probe_stats() const noexcept { return index_.probe_stats(); }

  // The result of a frame analysed before, or nullptr.
  const frame_result* result(std::uint64_t frame) const noexcept {
    if (frame == 0 || frame > results_.size() || !results_[frame - 1].analysed) return nullptr;
    return &results_[frame - 1];
  }

  // Analyses a frame, in capture order; a frame seen before gets its first result again.
  const frame_result& add(const frame_facts& f) {
    if (const frame_result* r = result(f.frame)) return *r;
    frame_result r;
    r.analysed = true;
    const std::size_t own = f.data ? on_pdu(f, r) : refused;
    if (f.op == static_cast<std::uint8_t>(wire::rh_op::ack) ||
        f.op == static_cast<std::uint8_t>(wire::rh_op::nack))
      on_ack(f, r, own);
    not_analysed_ += r.has(flag::not_analysed);
    // Not a frame number, or not asked to: nothing to cache under.
    if (f.frame == 0 || !cfg_.keep_results) return scratch_ = r;
    // Grown some thousand frames at a time rather than one: the entries past the frame are not
    // analysed (result() answers nothing for them) until their frame comes.
    if (f.frame > results_.size())
      results_.resize(std::max<std::size_t>(f.frame, results_.size() + results_step));
    return results_[f.frame - 1] = r;
  }

 private:
  static constexpr std::size_t refused = flat_index<connection_key, connection_key_hash>::npos;

  // The connection's number, made if new; `refused` for a new one beyond max_connections.
  template <class K>
  std::size_t index_of(const K& k) {
    if (conns_.size() >= cfg_.max_connections) return index_.find(connection_key(k));
    const auto [i, fresh] = index_.insert(k);
    if (fresh) {
      conns_.emplace_back();
      reverse_.push_back(no_reverse);
      if (cfg_.record_events) traces_.emplace_back();
    }
    return i;
  }

  void note(const frame_facts& f, std::size_t i, std::int64_t psn, psn_event::kind k) {
    if (cfg_.record_events) traces_[i].add({f.time_ns, f.frame, psn, k});
  }

  // The PDU's connection, or `refused`.
  std::size_t on_pdu(const frame_facts& f, frame_result& r) {
    const std::size_t i = index_of(f.key);
    if (i == refused) {
      r.set(flag::not_analysed);
      return refused;
    }
    connection& c = conns_[i];
    r.set(result_value::connection, i);
    c.touch(f);
    if (!c.src_xpu) c.src_xpu = f.xpuid;
    ++c.pdus;
    const std::int64_t u = c.unwrap(f.npsn);
    bool fresh = true;
    if (!c.sent_any_) {
      c.sent_any_ = true;
      c.highest_ = u;
      if (!c.acked_any_) c.una_ = u;
    } else if (u > c.highest_) {
      if (u > c.highest_ + 1) {
        r.set(flag::gap);
        r.set(result_value::missing, static_cast<std::uint64_t>(u - c.highest_ - 1));
        connection::rare& w = c.went_wrong();
        ++w.gaps;
        w.missing += static_cast<std::uint64_t>(u - c.highest_ - 1);
      }
      c.highest_ = u;
      c.outstanding_.keep_within(u);
    } else if (c.acked_any_ && u <= c.acked_) {
      r.set(flag::retransmission);
      r.set(flag::duplicate);
      fresh = false;
    } else if (const connection::sent* first = c.outstanding_.find(u)) {
      r.set(flag::retransmission);
      r.set(result_value::first_frame, first->frame);
      fresh = false;
    } else {
      r.set(flag::out_of_order);
      ++c.went_wrong().out_of_order;
    }
    if (r.has(flag::retransmission)) {
      connection::rare& w = c.went_wrong();
      ++w.retransmissions;
      if (r.has(flag::duplicate)) ++w.duplicates;  // a duplicate is a retransmission too
    }
    const std::int64_t in_flight = std::max<std::int64_t>(0, c.highest_ - c.una_ + 1);
    r.set(result_value::in_flight, static_cast<std::uint64_t>(in_flight));
    if (fresh) {
      c.outstanding_.try_emplace(u, connection::sent{f.frame, f.time_ns});
      if (in_flight >= static_cast<std::int64_t>(cfg_.window)) {
        r.set(flag::window_full);
        ++c.went_wrong().window_full;
      }
    }
    note(f, i, u, fresh ? psn_event::kind::first : psn_event::kind::retransmission);
    return i;
  }

  // `own`: the connection of the PDU the ACK rode on, or `refused` (none, or not analysed).
  void on_ack(const frame_facts& f, frame_result& r, std::size_t own) {
    const reversed_key k{f.key};
    std::size_t i = own != refused ? reverse_[own] : no_reverse;
    if (i == no_reverse) {
      i = index_of(k);
      if (own != refused && i != refused) reverse_[own] = static_cast<std::uint32_t>(i);
    }
    if (i == refused) return r.set(flag::not_analysed);
    connection& c = conns_[i];
    r.set(result_value::acked_connection, i);
    if (!(f.data && f.key == k)) c.touch(f);  // a frame is counted once per connection
    const std::int64_t u = c.unwrap(f.apsn);
    const bool nack = f.op == static_cast<std::uint8_t>(wire::rh_op::nack);
    // A NACK asks for apsn again: everything before it has arrived.
    const std::int64_t covered = nack ? u - 1 : u;
    if (nack) {
      r.set(flag::nack);
      ++c.went_wrong().nacks;
    } else {
      ++c.acks;
    }
    note(f, i, u, nack ? psn_event::kind::nack : psn_event::kind::ack);
    if (c.acked_any_ && covered <= c.acked_) return;  // nothing new
    if (!nack) {
      if (const connection::sent* first = c.outstanding_.find(covered)) {
        const std::int64_t rtt = f.time_ns - first->time_ns;
        r.set(result_value::acks_frame, first->frame);
        r.set(result_value::ack_rtt, static_cast<std::uint64_t>(std::max<std::int64_t>(0, rtt)));
        c.rtt_.add(rtt);
      }
    }
    c.acked_any_ = true;
    c.acked_ = covered;
    c.una_ = std::max(c.una_, covered + 1);
    c.outstanding_.erase_through(covered);
  }

  analysis_config cfg_;
  std::vector<connection> conns_;
  flat_index<connection_key, connection_key_hash> index_;  // numbered as conns_
  // Numbered as conns_: the number of the connection the other way (its key reversed), once an
  // ACK rode on one of the connection's PDUs, so that such a frame, most of a busy capture's,
  // finds both connections with one lookup.
  static constexpr std::uint32_t no_reverse = 0xFFFFFFFFu;
  std::vector<std::uint32_t> reverse_;
  std::vector<psn_trace> traces_;  // numbered as conns_, with record_events
  static constexpr std::size_t results_step = 4096;
  std::vector<frame_result> results_;
  std::uint64_t not_analysed_ = 0;
  frame_result scratch_;
};

}  // namespace scaleup::dissect
