// Conformance of a capture to SUE: every rule the seeds state that can be seen on the wire,
// each with a stable id, the seed section it rests on and one sentence. The rule
// table below is the single source of the `scaleup check` report, its JSON, the Wireshark
// plugin's expert infos (`sue.check.<id>`) and docs/conformance.md's table.
//
// The checker is fed frames in capture order, as dissected by the engine, and judges each
// against what the capture showed before it. Like the sequence analysis (analysis.hpp), whose
// facts it reads, it is opt-in state that grows with the capture, so it uses the heap.
//
// What the wire can and cannot say (docs/conformance.md):
// - A capture limit is never a violation. A frame the snapshot length cut, or a capture that
//   does not say which port a frame crossed, is "not examinable" for the rules that need the
//   missing bytes or facts, and counted as such.
// - Which frames the transport rules see: those a receiver would accept (facts_of: no bad
//   R-CRC, no error in the network headers or the RH). A PDU dropped on the way is no PDU of
//   the connection; its faults are the PDU rules'.
// - A capture taken behind a lossy link (at a receiver) misses PDUs that were sent: a PSN a new
//   PDU skipped is the sender's fault only if the capture never shows it afterwards, neither a
//   copy nor an ACK of it. psn.next is therefore judged when the capture ends (finish()), or
//   once the skip is half the PSN space behind the highest PSN sent (a connection keeps at most
//   psn_horizon / 2 skips: so many could not all lie within the PSNs it can still tell apart).
// - State is bounded: at most check_config::max_connections connections (limits.hpp; a frame
//   naming a new one beyond is not judged by the per-connection rules and is counted by
//   not_analysed_frames()), the same number of stations that sent PFC frames, and per
//   connection at most psn_horizon PSNs of each kind it remembers (psn_ordered.hpp).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "scaleup/dissect/address_text.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flat_index.hpp"
#include "scaleup/dissect/psn_ordered.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/transport/partition.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/linux_sll.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::dissect {

// ---- the rules ---------------------------------------------------------------------------

enum class rule : std::uint8_t {
  psn_next,
  gbn_resend,
  nack_once,
  ack_past_gap,
  ack_monotonic,
  ack_unsent,
  pdu_one_dst,
  pdu_one_vc,
  cmd_profile,
  pdu_size,
  vc_range,
  rcrc_good,
  pad_after_rcrc,
  reserved_zero,
  rh_version,
  partition_allowed,
  lite_no_rh,
  lite_size,
  cbfc_credit,
  pfc_paused,
  llr_replay,
};

struct rule_info {
  rule which;
  std::string_view id;        // the contract: `scaleup check --rules`, `sue.check.<id>`
  std::string_view seed;      // the seed section it rests on
  std::string_view sentence;  // what it requires, in one sentence
  std::string_view examines;  // what a frame must be for the rule to look at it
  std::string_view config;    // the configuration it takes (flags of `scaleup check`)
  std::string_view cannot;    // what a capture cannot show of it, and why
};

// clang-format off
inline constexpr std::array<rule_info, 21> rules{{
    {rule::psn_next, "psn.next", "R2 4.2 step 4; decisions.md \"SUE transport\"",
     "A new PDU's PSN is one above the highest PSN its connection sent before: no PSN is "
     "skipped and never sent.",
     "data PDUs with a PSN above the highest sent", "--ports",
     "The port a frame crossed: a pcap of a fabric of several ports mixes their PSN spaces "
     "(not examinable unless --ports 1). A PSN the capture missed (taken behind a lossy link) "
     "is told by a later copy or ACK of it, so a skip is judged when the capture ends, and a "
     "skipped PSN sent later after all cannot be told from a loss. The first PDU of a "
     "connection may take any PSN."},
    {rule::gbn_resend, "gbn.resend", "R2 2.1, 4.2 step 4b; decisions.md \"SUE transport\"",
     "A retransmission goes back to a NACKed PSN or the oldest unacknowledged one and resends "
     "in order up to the highest sent (go-back-N).",
     "data PDUs with a PSN sent before, and the first new PDU after a resend", "--ports",
     "Timer expiry is not on the wire: a go-back to any unacknowledged PSN is taken for a "
     "timeout. The sender may not have received an ACK the capture saw: going back further "
     "than the capture's oldest unacknowledged PSN is allowed. A capture behind a lossy link "
     "(at a receiver) misses the first PDU of a go-back when the network lost it: the go-back "
     "then looks like one that left that PDU out, as a faulty sender's does."},
    {rule::nack_once, "nack.once", "R2 4.2 step 8; decisions.md \"SUE transport\"",
     "A receiver NACKs a gap once: no second NACK of a PSN before that PSN was sent again.",
     "NACKs", "--ports",
     "Whether the receiver got the PDUs after the capture point: a NACK the network lost is "
     "repaired by a timeout, which resends the PSN and opens the gap anew."},
    {rule::ack_past_gap, "ack.past_gap", "R2 4.2 step 8; decisions.md \"SUE transport\"",
     "After NACKing PSN p a receiver neither ACKs nor delivers p or beyond until p was sent "
     "again.",
     "ACKs after a NACK", "--ports, --rto",
     "Delivery to the XPU is not on the wire: an ACK is its only evidence. A gap the receiver "
     "did not NACK (a PDU lost after the capture point) cannot be told from a delivery, nor "
     "can a copy of the PSN sent less than --rto before the NACK (reordered or delayed, it may "
     "arrive after it): after such a copy an ACK is not judged."},
    {rule::ack_monotonic, "ack.monotonic", "R2 Table 5; decisions.md \"SUE transport\"",
     "ACK and NACK apsn never move backwards: what an ACK or NACK says was delivered in order "
     "never shrinks.",
     "ACKs and NACKs", "--ports", "Nothing beyond the port (see psn.next)."},
    {rule::ack_unsent, "ack.unsent", "R2 Table 5; decisions.md \"SUE transport\"",
     "No ACK or NACK covers a PSN its connection never sent.",
     "ACKs and NACKs of a connection whose PDUs were captured", "--ports",
     "PDUs sent before the capture started: an ACK before the connection's first captured PDU "
     "is not examinable."},
    {rule::pdu_one_dst, "pdu.one_dst", "R2 4.2 step 2 \"destined to a single XPU\"",
     "A PDU goes to one XPU: no group address, and the carrier names one destination XPU.",
     "PDUs (frames with an RH)", "",
     "Which XPU each packed command was meant for: commands carry no destination. Over IP a "
     "frame names an address, one destination by construction."},
    {rule::pdu_one_vc, "pdu.one_vc", "R2 4.2 step 2 \"on a single traffic class\", Table 5",
     "A PDU travels on one VC: every data PDU of a connection rides the same traffic class.",
     "data PDUs whose carrier has a traffic class (VLAN PCP, DSCP, AFH)", "",
     "Which VC each packed command was queued on: commands carry no VC. The VC-to-class map is "
     "the deployment's: only its consistency is checked. Plain AFH Gen 1 has no class."},
    {rule::cmd_profile, "cmd.profile", "R2 3.3, 4.2 step 2a; decisions.md \"Commands inside a PDU\"",
     "Every packed command is one of the command profile's, with its fixed values.",
     "PDUs and SUE Lite frames with a payload", "--profile",
     "Commands cut by the snapshot length; a payload read without a profile (--profile none)."},
    {rule::pdu_size, "pdu.size", "R2 3.3 \"up to 4096 bytes\", 4.5; decisions.md \"Commands inside a PDU\"",
     "A PDU's packed payload is within the packing limit (4096 bytes, or the configured one).",
     "PDUs", "--max-pdu", "Nothing: the length on the wire is known even when cut."},
    {rule::vc_range, "vc.range", "R2 Table 1 \"up to 4 VCs\", Table 5",
     "A PDU's VC is within the configured number of VCs.", "PDUs", "--vcs",
     "Nothing with 4 VCs: the 2-bit field cannot name a fifth."},
    {rule::rcrc_good, "rcrc.good", "R2 3.3, Fig. 9; decisions.md \"R-CRC and the end of a PDU\"",
     "Every PDU ends in an R-CRC over its RH and payload, and it is good.", "PDUs", "",
     "An R-CRC the snapshot length cut (not examinable)."},
    {rule::pad_after_rcrc, "pad.after_rcrc", "R2 Fig. 9; decisions.md \"R-CRC and the end of a PDU\"",
     "Padding comes only after the R-CRC and only up to the 60-byte minimum frame.",
     "PDUs", "", "Padding the snapshot length cut (not examinable)."},
    {rule::reserved_zero, "reserved.zero", "R2 Table 5; decisions.md \"SUE Reliability Header\"",
     "Reserved bits are sent as zero, in the RH and in every header and command.",
     "frames with an RH or a SUE Lite payload", "", "Nothing."},
    {rule::rh_version, "rh.version", "R2 Table 5; decisions.md \"SUE Reliability Header\"",
     "The RH's version is 0.", "PDUs", "", "Nothing."},
    {rule::partition_allowed, "partition.allowed", "R2 Table 5, 4.1; decisions.md \"SUE transport\"",
     "No PDU whose partition is not allowed for its source is acknowledged.",
     "ACKs covering PDUs from a source the partition table lists", "--partitions",
     "Without a partition table nothing is examinable: which partitions a receiver allows is "
     "its configuration, not on the wire."},
    {rule::lite_no_rh, "lite.no_rh", "R2 3.4, Fig. 10",
     "A SUE Lite frame carries no RH and no R-CRC.", "SUE Lite frames",
     "",
     "An RH is told by its shape (version 0, reserved bits zero, a good R-CRC at the end), "
     "which a payload could mimic with odds of 2^-32."},
    {rule::lite_size, "lite.size", "R2 3.4 \"up to 1K bytes\"",
     "A SUE Lite frame's packed payload is within 1024 bytes (or the configured limit).",
     "SUE Lite frames", "--max-lite", "Nothing: the length on the wire is known."},
    {rule::cbfc_credit, "cbfc.credit", "R2 3.5.7, 4.2 step 2",
     "A sender never sends beyond the credit its peer advertised.", "nothing", "",
     "The seeds name CBFC (UEC's credit-based flow control) but do not give its credit-update "
     "frames' format or carrier. The project's own credit update (docs/wire-format.md, "
     "\"Flow control\") models the idea for the simulator; a device's capture would carry "
     "UEC's, so there is nothing to read the advertised credit from."},
    {rule::pfc_paused, "pfc.paused", "R2 3.5.6; IEEE 802.1Qbb, IEEE 802.3 Annex 31D",
     "No frame of a paused priority leaves after the pause took effect (with the link's "
     "reaction time).",
     "frames sent by the link peer of a station that sent a PFC frame",
     "--link-gbps, --pfc-reaction",
     "A capture of one link is assumed (a tap, or a port mirror of both directions): a frame's "
     "sender is its source MAC, and the peer of a station that paused is every other sender. A "
     "frame's priority is its VLAN PCP, else its IP DSCP's top three bits, else its VC through "
     "the PFC map of R2 3.5.6 (VC0 3, VC1 4, VC2 2, VC3 5; stand-alone ACKs and NACKs 4), else "
     "0: a device that maps otherwise needs a tagged capture. Times are the capture point's: "
     "the reaction time covers the frame already on the wire, the peer's MAC and the "
     "timestamps' error. A frame with no source MAC (a cooked capture without one) is not "
     "examinable. PFC frames reach `scaleup check`, not the Wireshark plugin (Wireshark's own "
     "dissector reads them)."},
    {rule::llr_replay, "llr.replay", "R2 3.5.5",
     "An LLR replay starts at the NACKed sequence and runs in order.", "nothing", "",
     "The seeds describe LLR (retransmission between link peers on an FCS error) but not its "
     "sequence numbers' or control frames' format, which the link layer adds and strips below "
     "the frames a capture holds: there is nothing to read a replay from."},
}};
// clang-format on

static_assert([] {
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (static_cast<std::size_t>(rules[i].which) != i) return false;
  return true;
}());

constexpr const rule_info& rule_info_of(rule r) noexcept {
  return rules[static_cast<std::size_t>(r)];
}

constexpr std::optional<rule> rule_by_id(std::string_view id) noexcept {
  for (const auto& r : rules)
    if (r.id == id) return r.which;
  return std::nullopt;
}

// The expert-info and display-filter name of a rule: "sue.check." + id.
inline constexpr std::string_view check_filter = "sue.check";

using rule_set = std::bitset<rules.size()>;

// ---- configuration -------------------------------------------------------------------------

// Which partitions each source XPU may use (--partitions FILE, lines `XPU PARTITION...`); a
// source the file does not list is not examinable.
struct partition_policy {
  std::unique_ptr<transport::partition_table<>> allowed =
      std::make_unique<transport::partition_table<>>();
  std::bitset<1024> listed;
};

struct check_config {
  std::uint32_t max_pdu = wire::sue_max_payload;        // packing limit of a SUE PDU
  std::uint32_t max_lite = wire::sue_lite_max_payload;  // of a SUE Lite frame
  std::uint8_t vcs = 4;                                 // R2 Table 1: up to 4
  // How long a PDU may be on its way from the capture point to the receiver, at most: a copy of
  // a NACKed PSN sent this long before the NACK may still arrive after it (ack.past_gap). The
  // retransmit timeout's default: a sender waits that long for a PDU's fate.
  std::uint64_t rto_ns = transport::gbn_config{}.rto;
  // Ports per XPU. Above 1 a capture that does not say which port a frame crossed (port 0 for
  // all) mixes connections, and the transport rules cannot examine it.
  std::uint8_t ports = 1;
  bool port_known = false;  // the caller passes each frame's port (a capture interface)
  const partition_policy* partitions = nullptr;
  // pfc.paused: the link's speed makes a pause's quanta a time (512 bit times each), and its
  // pause takes effect this long after the capture shows the PFC frame. 10 us: a project
  // default (the seeds give none) that covers the frame already on the wire (a 9 KB jumbo frame
  // takes 0.74 us at 100 Gb/s), the peer's MAC and a software timestamp's error.
  std::uint32_t link_mbps = transport::pfc_config{}.link_mbps;
  std::uint64_t pfc_reaction_ns = 10'000;
  rule_set selected = rule_set{}.set();
  // Payloads are read with a command profile; false (--profile none): cmd.profile cannot look.
  bool profile = true;
  // Which PSN space a PDU belongs to: per {source, destination, port, VC} (the receiver's key of
  // R2 4.2 step 8, and the library's connections), or per {source, destination, port}, for a
  // device that numbers PDUs per {output port, destination XPU} across its VCs, as R2 4.2 step
  // 4 reads literally (scaleup check --keying port-destination).
  bool keying_per_vc = true;
  std::size_t keep = 10;   // violations kept per rule (the first ones)
  bool per_frame = false;  // keep every violation by frame (the Wireshark plugin)
  // Connections (and PFC stations) kept at most; limits.hpp.
  std::size_t max_connections = default_max_connections;
};

// ---- what the checker reports ----------------------------------------------------------------

struct violation {
  rule which{};
  std::uint64_t frame = 0;
  std::string expected;
  std::string seen;
};

// A violation as kept for its frame (check_config::per_frame): its texts are in the checker's
// store, and valid while the checker is.
struct frame_violation {
  rule which{};
  std::uint64_t frame = 0;
  std::string_view expected;
  std::string_view seen;
};

struct rule_tally {
  std::uint64_t examined = 0;
  std::uint64_t not_examinable = 0;
  std::uint64_t violations = 0;
  std::vector<violation> first;  // up to check_config::keep
};

namespace detail {

// The fields the PDU rules read, found by identity in one walk (as analysis.hpp's facts).
enum check_slot : std::size_t {
  c_ver,
  c_vc,
  c_afh2_m,
  c_afh2c_m,
  c_afh1_dst,
  c_shim_dst,
  c_pcp,
  c_dscp,
  c_tclass,
  c_shim_tc,
  c_afh2_tc,
  c_afh2c_tc,
  c_partition,
  c_payload,
  c_lite,
  c_rcrc,
  c_op,
  c_eth_src,
  c_sll_src,
  c_sll2_src,
  check_slot_count
};

inline constexpr std::array<const field_info*, check_slot_count> check_fields{{
    &wire::info_of<wire::reliability_header, &wire::reliability_header::ver>(),
    &wire::info_of<wire::reliability_header, &wire::reliability_header::vc>(),
    &wire::info_of<wire::afh2_normal, &wire::afh2_normal::m>(),
    &wire::info_of<wire::afh2_compressed, &wire::afh2_compressed::m>(),
    &wire::info_of<wire::afh1_addresses, &wire::afh1_addresses::dst_xpu>(),
    &wire::info_of<wire::afh1_shim, &wire::afh1_shim::dst_xpu>(),
    &wire::info_of<wire::vlan_tag, &wire::vlan_tag::pcp>(),
    &wire::info_of<wire::ipv4_header, &wire::ipv4_header::dscp>(),
    &wire::info_of<wire::ipv6_header, &wire::ipv6_header::tclass>(),
    &wire::info_of<wire::afh1_shim, &wire::afh1_shim::tc>(),
    &wire::info_of<wire::afh2_normal, &wire::afh2_normal::tc>(),
    &wire::info_of<wire::afh2_compressed, &wire::afh2_compressed::tc>(),
    &wire::info_of<wire::reliability_header, &wire::reliability_header::partition>(),
    &computed_fields::payload_len,
    &computed_fields::lite_len,
    &computed_fields::rcrc_status,
    &wire::info_of<wire::reliability_header, &wire::reliability_header::op>(),
    &wire::info_of<wire::ethernet_header, &wire::ethernet_header::src>(),
    &wire::info_of<wire::linux_sll, &wire::linux_sll::address>(),
    &wire::info_of<wire::linux_sll2, &wire::linux_sll2::address>(),
}};

using check_nodes = std::array<const field_node*, check_slot_count>;

// The slot of a field, found by its entry's address in one probe or two rather than by
// comparing it with every slot's: every field of every frame is looked up.
class check_slot_table {
 public:
  check_slot_table() noexcept {
    for (std::size_t i = 0; i < check_slot_count; ++i) {
      std::size_t h = home(check_fields[i]);
      while (key_[h]) h = (h + 1) % size;
      key_[h] = check_fields[i];
      slot_[h] = static_cast<std::uint8_t>(i);
    }
  }
  // check_slot_count: not a field the rules read.
  std::size_t find(const field_info* f) const noexcept {
    for (std::size_t h = home(f);; h = (h + 1) % size) {
      if (key_[h] == f) return slot_[h];
      if (!key_[h]) return check_slot_count;
    }
  }

 private:
  static constexpr std::size_t size = 64;  // a power of two, over twice check_slot_count
  static_assert(size >= 2 * check_slot_count);
  static std::size_t home(const field_info* f) noexcept {
    return static_cast<std::size_t>(entry_hash(f) >> 58);  // the top six bits
  }
  std::array<const field_info*, size> key_{};
  std::array<std::uint8_t, size> slot_{};
};

inline const check_slot_table& check_slots() noexcept {
  static const check_slot_table table;
  return table;
}

template <class Tree>
check_nodes find_check_fields(const Tree& t) {
  check_nodes out{};
  const check_slot_table& slots = check_slots();
  // Commands come after every field read here but the R-CRC status, which closes the PDU: the
  // walk skips their layers' fields rather than looking each up.
  for (const auto& f : t.field_list()) {
    if (t.layers[f.layer].name == "sue.cmd") continue;
    const std::size_t i = slots.find(f.info);
    if (i < check_slot_count && !out[i]) out[i] = &f;
  }
  return out;
}

inline std::string num(std::int64_t v) { return std::to_string(v); }

inline std::string mac_text(std::uint64_t mac) {
  std::string out;
  auto append = [&](std::string_view v) { out += v; };
  put_mac(append, mac);
  return out;
}

// A PSN as the capture shows it (16 bits) from its unwrapped count.
inline std::string psn_text(std::int64_t u) {
  return std::to_string(((u % 65536) + 65536) % 65536);
}

// What a frame looks like as a SUE PDU where the reader took it for something else: version 0,
// reserved bits zero and a good R-CRC where the bytes end or where only zero padding follows.
constexpr bool looks_like_pdu(wire::bytes b) noexcept {
  if (b.size() < wire::pdu_size(0)) return false;
  const auto rh = wire::view<wire::reliability_header>::make(b).value;
  if (rh.get<&wire::reliability_header::ver>() != 0 ||
      rh.get<&wire::reliability_header::rsv>() != 0 ||
      rh.get<&wire::reliability_header::rsvd>() != 0)
    return false;
  return wire::pdu_bounds_l2(b, 0).status == wire::rcrc_status::good;
}

// The rules judged per connection {source, destination, port, VC}: a capture that mixes the
// ports of one SUE instance under one port mixes their PSN spaces, which breaks them by itself.
inline constexpr std::array<rule, 6> connection_rules{rule::psn_next,      rule::gbn_resend,
                                                      rule::nack_once,     rule::ack_past_gap,
                                                      rule::ack_monotonic, rule::ack_unsent};

}  // namespace detail

// ---- the checker -----------------------------------------------------------------------------

class conformance {
 public:
  explicit conformance(check_config cfg = {}) : cfg_(std::move(cfg)) {
    for (const auto& r : rules)
      if (r.which == rule::cbfc_credit || r.which == rule::llr_replay)
        cfg_.selected.reset(static_cast<std::size_t>(r.which));
  }

  const check_config& config() const noexcept { return cfg_; }
  const rule_tally& tally(rule r) const noexcept { return tallies_[static_cast<std::size_t>(r)]; }
  bool selected(rule r) const noexcept { return cfg_.selected.test(static_cast<std::size_t>(r)); }
  std::uint64_t violations() const noexcept {
    std::uint64_t n = 0;
    for (const auto& t : tallies_) n += t.violations;
    return n;
  }
  bool conformant() const noexcept { return violations() == 0; }
  // Whether the per-connection rules' violations may come from the capture rather than the
  // device: checked as one port (--ports 1, no port per frame), a capture of several ports of an
  // instance mixes their PSN spaces. The report then says so (the check cannot tell).
  bool ports_may_mix() const noexcept {
    if (cfg_.ports != 1 || cfg_.port_known) return false;
    for (const rule r : detail::connection_rules)
      if (tally(r).violations) return true;
    return false;
  }
  std::uint64_t pdus() const noexcept { return pdus_; }
  std::uint64_t lite_frames() const noexcept { return lite_; }
  // Frames the per-connection rules (or pfc.paused) did not judge, or not wholly, because they
  // named a new connection (or PFC station) beyond check_config::max_connections.
  std::uint64_t not_analysed_frames() const noexcept { return not_analysed_; }

  // What the per-connection state holds, in all, and the skips that copies and ACKs have looked
  // at (each at most once more than it is taken away: the tests count them).
  struct held {
    std::size_t connections = 0, psns = 0, skips = 0, denied = 0;
    std::uint64_t skip_visits = 0;
    std::uint64_t pause_looks = 0;  // pauses pfc.paused looked at, all frames
  };
  held holding() const {
    held h{conns_.size(), 0, 0, 0, skip_visits_, pause_looks_};
    for (const auto& c : conns_) {
      h.psns += c.sent_ns.size();
      h.skips += c.gaps ? c.gaps->size() : 0;
      h.denied += c.denied ? c.denied->size() : 0;
    }
    return h;
  }

  // The slots the table of connections examined (flat_index::probe_stats).
  dissect::probe_stats probe_stats() const noexcept { return index_.probe_stats(); }

  // The violations found in a frame (check_config::per_frame), for a frame seen before.
  std::span<const frame_violation> of_frame(std::uint64_t frame) const noexcept {
    if (const auto it = late_.find(frame); it != late_.end()) return it->second;
    // Most often asked: the frame just judged, whose violations are the last ones if any.
    if (by_frame_.empty() || by_frame_.back().frame < frame) return {};
    auto hi = by_frame_.end(), lo = hi;
    while (lo != by_frame_.begin() && std::prev(lo)->frame == frame) --lo;
    if (lo == hi) std::tie(lo, hi) = std::equal_range(by_frame_.begin(), hi, frame, by_number{});
    return {lo, hi};
  }
  bool seen(std::uint64_t frame) const noexcept { return frame != 0 && frame <= last_frame_; }

  // The capture is over: PSNs skipped and never sent afterwards are psn.next's violations, at
  // the frame that skipped them (until then a later copy could show the capture missed them).
  // Called by the caller at the end, or by add() when a frame comes again (a second pass).
  void finish() {
    if (finished_) return;
    finished_ = true;
    // In frame order, whatever order the connections are kept in: the first ones are reported.
    std::vector<gap> gaps;
    for (const auto& c : conns_)
      if (c.gaps)
        for (const auto& [from, g] : *c.gaps) gaps.push_back({from, g.to, g.frame});
    std::stable_sort(gaps.begin(), gaps.end(),
                     [](const auto& a, const auto& b) { return a.frame < b.frame; });
    for (const auto& g : gaps) never_sent(g);
    for (auto& t : tallies_)
      std::stable_sort(t.first.begin(), t.first.end(),
                       [](const violation& a, const violation& b) { return a.frame < b.frame; });
  }

  // Judges one frame, in capture order: `t` its tree (the engine's), `frame` its bytes, `port`
  // the port it crossed where the caller knows it (check_config::port_known). A frame seen
  // before (Wireshark's second pass) is not judged again.
  template <class Tree>
  void add(const Tree& t, wire::bytes frame, std::uint64_t number, std::int64_t time_ns,
           std::uint16_t port = 0) {
    if (number != 0 && number <= last_frame_) {
      finish();  // a frame seen before: the first pass is over
      return;
    }
    last_frame_ = std::max(last_frame_, number);
    number_ = number;
    const bool rh = t.find_layer("sue.rh") != nullptr;
    const bool lite = t.find_layer("sue_lite") != nullptr;
    const bool paused = on(rule::pfc_paused) && !pausers_.empty();
    if (const layer_node* pfc = t.find_layer("pfc"); pfc && on(rule::pfc_paused)) {
      pause(t, frame, *pfc, time_ns);
      return;
    }
    if (!rh && !lite && !paused) return;
    const detail::check_nodes n = detail::find_check_fields(t);
    if (paused) pfc_rule(n, rh, time_ns);
    if (!rh && !lite) return;
    if (lite) {
      ++lite_;
      lite_rules(t, frame, n);
    }
    if (!rh) return;
    ++pdus_;
    pdu_rules(t, frame, n);
    if (const auto f = facts_of(t, number, time_ns, port)) transport_rules(t, *f, n);
  }

 private:
  // ---- recording ----
  bool on(rule r) const { return selected(r); }
  void examined(rule r) { ++tallies_[static_cast<std::size_t>(r)].examined; }
  void not_examinable(rule r) { ++tallies_[static_cast<std::size_t>(r)].not_examinable; }
  // Examined, and violated when `bad`: `expected` and `seen` are built only then.
  template <class Expected, class Seen>
  void judge(rule r, bool bad, Expected&& expected, Seen&& seen) {
    if (!on(r)) return;
    examined(r);
    if (bad) record(r, expected(), seen());
  }
  void record(rule r, std::string expected, std::string seen) {
    record(r, number_, std::move(expected), std::move(seen));
  }
  void record(rule r, std::uint64_t frame, std::string expected, std::string seen) {
    auto& t = tallies_[static_cast<std::size_t>(r)];
    ++t.violations;
    if (cfg_.per_frame) keep_by_frame({r, frame, texts_.keep(expected), texts_.keep(seen)});
    violation v{r, frame, std::move(expected), std::move(seen)};
    if (t.first.size() < cfg_.keep) return t.first.push_back(std::move(v));
    // The first frames are kept, whatever order they are found in (psn.next's come late).
    const auto last =
        std::max_element(t.first.begin(), t.first.end(),
                         [](const auto& a, const auto& b) { return a.frame < b.frame; });
    if (last != t.first.end() && frame < last->frame) *last = std::move(v);
  }

  // The texts of the violations kept by frame, together: an allocation per 64 KB of them rather
  // than two per violation, at addresses that do not move.
  class text_store {
   public:
    std::string_view keep(std::string_view s) {
      if (s.size() > room_) {
        const std::size_t n = std::max(s.size(), chunk);
        chunks_.emplace_back(new char[n]);
        next_ = chunks_.back().get();
        room_ = n;
      }
      if (!s.empty()) std::memcpy(next_, s.data(), s.size());
      const std::string_view kept(next_, s.size());
      next_ += s.size();
      room_ -= s.size();
      return kept;
    }

   private:
    static constexpr std::size_t chunk = 64 * 1024;
    std::vector<std::unique_ptr<char[]>> chunks_;
    char* next_ = nullptr;
    std::size_t room_ = 0;
  };

  // Frames come in order, and so do nearly all of their violations: those are appended, rather
  // than a node and a list allocated for each frame. A violation found late (psn.next's, judged
  // after its frame) goes with the rest of its frame's into late_.
  struct by_number {
    bool operator()(const frame_violation& v, std::uint64_t n) const noexcept {
      return v.frame < n;
    }
    bool operator()(std::uint64_t n, const frame_violation& v) const noexcept {
      return n < v.frame;
    }
  };
  void keep_by_frame(const frame_violation& v) {
    if (const auto it = late_.find(v.frame); it != late_.end()) return it->second.push_back(v);
    if (by_frame_.empty() || by_frame_.back().frame <= v.frame) return by_frame_.push_back(v);
    const auto [lo, hi] =
        std::equal_range(by_frame_.begin(), by_frame_.end(), v.frame, by_number{});
    auto& all = late_[v.frame];
    all.assign(lo, hi);
    all.push_back(v);
  }

  // ---- psn.next's skips ----
  struct gap {
    std::int64_t from, to;
    std::uint64_t frame;
  };
  void never_sent(const gap& g) {
    using detail::psn_text;
    record(rule::psn_next, g.frame, "npsn " + psn_text(g.from) + " sent",
           g.from == g.to ? "npsn " + psn_text(g.from) + " never sent"
                          : "npsn " + psn_text(g.from) + " to " + psn_text(g.to) + " never sent");
  }

  // ---- PFC (R2 3.5.6; IEEE 802.1Qbb) ----
  // What a station's PFC frames asked of its link peer, per priority: no frame in [from, until).
  struct pause_state {
    std::array<std::int64_t, transport::pfc_priorities> from{}, until{};
    std::array<std::uint64_t, transport::pfc_priorities> frame{};  // the PFC frame that paused
    std::array<std::int64_t, transport::pfc_priorities> at{};      // ...and when
    std::array<std::uint16_t, transport::pfc_priorities> quanta{};
  };

  static std::optional<std::uint64_t> sender_of(const detail::check_nodes& n) {
    using namespace detail;
    for (const std::size_t i : {c_eth_src, c_sll_src, c_sll2_src})
      if (n[i]) return n[i]->value;
    return std::nullopt;
  }

  // The priority a frame rides (rule table: pfc.paused says why in this order).
  std::uint8_t priority_of(const detail::check_nodes& n, bool rh) const {
    using namespace detail;
    if (n[c_pcp]) return static_cast<std::uint8_t>(n[c_pcp]->value);
    if (n[c_dscp]) return static_cast<std::uint8_t>(n[c_dscp]->value >> 3);
    if (n[c_tclass]) return static_cast<std::uint8_t>(n[c_tclass]->value >> 5);
    if (!rh || !n[c_vc]) return 0;
    const transport::pfc_config map{};
    const bool ack = n[c_op] && n[c_op]->value != static_cast<std::uint64_t>(wire::rh_op::none);
    if (ack && (!n[c_payload] || n[c_payload]->value == 0)) return map.ack_priority;
    return map.vc_priority[n[c_vc]->value % transport::pfc_vcs];
  }

  // A PFC frame: from when, and until when, its sender's peer may not send on each priority it
  // names. A new time replaces a running one (802.3 Annex 31D); quanta 0 ends it at once.
  template <class Tree>
  void pause(const Tree& t, wire::bytes frame, const layer_node& l, std::int64_t time_ns) {
    const auto pdu = wire::decode<transport::pfc_pdu>(frame, l.offset);
    const auto sender = sender_of(detail::find_check_fields(t));
    if (!pdu || !sender) return;  // a malformed PFC frame pauses nothing
    transport::pfc_config link;
    link.link_mbps = cfg_.link_mbps;
    auto at = pausers_.find(*sender);
    if (at == pausers_.end()) {
      if (pausers_.size() >= cfg_.max_connections) {
        ++not_analysed_;  // a new station beyond the limit: its pause is not known
        return;
      }
      at = pausers_.emplace(*sender, pause_state{}).first;
    }
    pause_state& s = at->second;
    const std::uint64_t station = at->first;
    const std::int64_t effect = time_ns + static_cast<std::int64_t>(cfg_.pfc_reaction_ns);
    for (std::size_t p = 0; p < transport::pfc_priorities; ++p) {
      if (!pdu->enabled(p)) continue;
      const std::uint16_t q = pdu->time(p);
      pausing_[p].erase({s.until[p], station});
      if (q == 0) {
        s.until[p] = std::min(s.until[p], time_ns);
      } else {
        if (s.until[p] <= time_ns) s.from[p] = effect;  // not running: starts after the reaction
        s.until[p] = effect + static_cast<std::int64_t>(link.pause_time(q));
        s.frame[p] = number_;
        s.at[p] = time_ns;
        s.quanta[p] = q;
      }
      if (s.from[p] < s.until[p]) pausing_[p].insert({s.until[p], station});
    }
  }

  // A frame of the peer of a station that paused, on a priority its pause holds.
  void pfc_rule(const detail::check_nodes& n, bool rh, std::int64_t time_ns) {
    const auto sender = sender_of(n);
    if (!sender) return not_examinable(rule::pfc_paused);
    const std::uint8_t p = priority_of(n, rh) & 7u;
    const pause_state* hit = nullptr;
    std::uint64_t by = 0;
    // The pauses of p that end after this frame, latest end first: those that ended before it
    // are never looked at. Most captures have a pause or two running at a time; one that shows
    // more pauses not yet begun than max_pause_looks is not examined rather than walked (its
    // PFC frames' times run ahead of its other frames').
    std::size_t looked = 0;
    for (auto it = pausing_[p].rbegin(); it != pausing_[p].rend() && it->first > time_ns; ++it) {
      if (++looked > max_pause_looks) return not_examinable(rule::pfc_paused);
      ++pause_looks_;
      const pause_state& s = pausers_.find(it->second)->second;
      if (it->second != *sender && s.from[p] <= time_ns) {
        hit = &s;
        by = it->second;
        break;
      }
    }
    judge(
        rule::pfc_paused, hit != nullptr,
        [&] {
          const std::int64_t at = hit->at[p];
          return "no frame of priority " + detail::num(p) + " from " +
                 detail::num(hit->from[p] - at) + " to " + detail::num(hit->until[p] - at) +
                 " ns after frame " + detail::num(static_cast<std::int64_t>(hit->frame[p])) +
                 " (PFC from " + detail::mac_text(by) + ": " + detail::num(hit->quanta[p]) +
                 " quanta at " + detail::num(cfg_.link_mbps) + " Mb/s)";
        },
        [&] {
          return "a frame of priority " + detail::num(p) + " from " + detail::mac_text(*sender) +
                 " " + detail::num(time_ns - hit->at[p]) + " ns after it";
        });
  }

  // ---- SUE Lite ----
  template <class Tree>
  void lite_rules(const Tree& t, wire::bytes frame, const detail::check_nodes& n) {
    using namespace detail;
    const layer_node* l = t.find_layer("sue_lite");
    if (n[c_lite])
      judge(
          rule::lite_size, n[c_lite]->value > cfg_.max_lite,
          [&] { return "at most " + num(cfg_.max_lite) + " payload bytes"; },
          [&] { return num(static_cast<std::int64_t>(n[c_lite]->value)) + " bytes"; });
    // An RH where the commands should start: the payload is a PDU, not commands to judge.
    const std::size_t end = std::min<std::size_t>(t.frame_length, frame.size());
    const bool cut = l->offset >= end || t.wire_length > t.frame_length;
    const bool pdu = !cut && looks_like_pdu(frame.subspan(l->offset, end - l->offset));
    if (cut && on(rule::lite_no_rh))
      not_examinable(rule::lite_no_rh);
    else
      judge(
          rule::lite_no_rh, pdu, [] { return std::string("no RH"); },
          [] { return std::string("an RH and a good R-CRC after the AFH Gen 2 header"); });
    payload_rules(t, !pdu && n[c_lite] && n[c_lite]->value > 0);
  }

  // reserved.zero over every header and command; cmd.profile over a payload's commands.
  template <class Tree>
  void payload_rules(const Tree& t, bool payload) {
    using detail::num;
    bool cut = false, profile_fault = false, reserved = false;
    std::string what_profile, what_reserved;
    for (const auto& e : t.error_list()) {
      if (e.code == wire::errc::not_captured) cut = true;
      if (e.code == wire::errc::reserved_nonzero && !reserved) {
        reserved = true;
        what_reserved = std::string(e.field.empty() ? e.layer : e.field) + " = " + num(e.value);
      } else if ((e.layer == "sue.opaque" || e.layer == "sue.cmd") && !profile_fault) {
        profile_fault = true;
        what_profile = std::string(e.what) + " at byte " + num(e.offset);
      }
    }
    judge(
        rule::reserved_zero, reserved, [] { return std::string("reserved bits zero"); },
        [&] { return what_reserved; });
    if (!payload || !on(rule::cmd_profile)) return;
    if (!cfg_.profile || (cut && !profile_fault))
      not_examinable(rule::cmd_profile);
    else
      judge(
          rule::cmd_profile, profile_fault, [] { return std::string("commands of the profile"); },
          [&] { return what_profile; });
  }

  // ---- the PDU ----
  template <class Tree>
  void pdu_rules(const Tree& t, wire::bytes frame, const detail::check_nodes& n) {
    using namespace detail;
    if (n[c_ver])
      judge(
          rule::rh_version, n[c_ver]->value != 0, [] { return std::string("ver 0"); },
          [&] { return "ver " + num(static_cast<std::int64_t>(n[c_ver]->value)); });
    if (n[c_vc])
      judge(
          rule::vc_range, n[c_vc]->value >= cfg_.vcs, [&] { return "vc below " + num(cfg_.vcs); },
          [&] { return "vc " + num(static_cast<std::int64_t>(n[c_vc]->value)); });
    if (n[c_payload])
      judge(
          rule::pdu_size, n[c_payload]->value > cfg_.max_pdu,
          [&] { return "at most " + num(cfg_.max_pdu) + " payload bytes"; },
          [&] { return num(static_cast<std::int64_t>(n[c_payload]->value)) + " bytes"; });
    one_destination(n);
    end_of_pdu(t, frame, n);
    // The commands of a PDU whose R-CRC is bad are not what was sent: cmd.profile skips them.
    const bool intact =
        !n[c_rcrc] || n[c_rcrc]->value == static_cast<std::uint64_t>(wire::rcrc_status::good) ||
        n[c_rcrc]->value == static_cast<std::uint64_t>(wire::rcrc_status::not_captured);
    payload_rules(t, intact && n[c_payload] && n[c_payload]->value > 0);
  }

  void one_destination(const detail::check_nodes& n) {
    using namespace detail;
    if (!on(rule::pdu_one_dst)) return;
    const field_node* m = n[c_afh2_m] ? n[c_afh2_m] : n[c_afh2c_m];
    if (m && m->value) {
      judge(
          rule::pdu_one_dst, true, [] { return std::string("one destination XPU (M = 0)"); },
          [] { return std::string("a group address (M = 1)"); });
    } else if (n[c_afh1_dst] && n[c_shim_dst]) {
      const std::uint64_t a = n[c_afh1_dst]->value, s = n[c_shim_dst]->value;
      judge(
          rule::pdu_one_dst, a != (s & 0xFFFF),
          [&] { return "the shim's destination XPU " + num(static_cast<std::int64_t>(s)); },
          [&] { return "the address's destination XPU " + num(static_cast<std::int64_t>(a)); });
    } else {
      examined(rule::pdu_one_dst);
    }
  }

  // rcrc.good and pad.after_rcrc: where the PDU ends and what follows it.
  template <class Tree>
  void end_of_pdu(const Tree& t, wire::bytes frame, const detail::check_nodes& n) {
    using namespace detail;
    if (!n[c_rcrc]) return;
    const auto status = static_cast<wire::rcrc_status>(n[c_rcrc]->value);
    if (status == wire::rcrc_status::not_captured) {
      if (on(rule::rcrc_good)) not_examinable(rule::rcrc_good);
      if (on(rule::pad_after_rcrc)) not_examinable(rule::pad_after_rcrc);
      return;
    }
    // Zero bytes between the commands and the R-CRC: padding before it.
    const layer_node* crc = t.find_layer("sue.rcrc");
    std::optional<std::uint32_t> pad_before;
    for (const auto& l : t.layer_list())
      if (l.name == "sue.pad" && crc && l.offset < crc->offset) pad_before = l.length;
    // A bad R-CRC where a good one comes earlier with only zeros after it: a PDU padded where
    // it may not be (beyond the 60-byte minimum, or inside a datagram).
    std::optional<std::size_t> pad_after;
    const layer_node* rh = t.find_layer("sue.rh");
    if (status == wire::rcrc_status::bad && rh && crc) {
      const std::size_t end = std::min<std::size_t>(frame.size(), crc->offset + crc->length);
      if (rh->offset < end) {
        const auto b = wire::pdu_bounds_l2(frame.subspan(rh->offset, end - rh->offset), 0);
        if (b.status == wire::rcrc_status::good && b.pad > 0) pad_after = b.pad;
      }
    }
    judge(
        rule::pad_after_rcrc, pad_before || pad_after,
        [] { return std::string("padding only after the R-CRC, up to the 60-byte frame"); },
        [&] {
          return pad_before ? num(*pad_before) + " zero bytes before the R-CRC"
                            : num(static_cast<std::int64_t>(*pad_after)) +
                                  " zero bytes after the R-CRC in a frame of " +
                                  num(t.frame_length) + " bytes";
        });
    judge(
        rule::rcrc_good,
        status == wire::rcrc_status::missing || (status == wire::rcrc_status::bad && !pad_after),
        [] { return std::string("a good R-CRC"); },
        [&] {
          return status == wire::rcrc_status::missing ? std::string("no R-CRC (an RH only)")
                                                      : std::string("a bad R-CRC");
        });
  }

  // ---- the transport ----
  // Its flags side by side (one word with tc): 112 bytes, with the gaps and
  // denied PSNs out of line until there are any (232 when they were inline).
  struct conn_state {
    bool sent_any = false;
    bool acked_any = false;
    bool resending = false;
    bool nack_open = false;  // a NACK of nacked, and nacked not sent since
    bool nacked_any = false;
    bool listed = false;  // its source is in the partition table
    // The class its data PDUs ride (pdu.one_vc), per VC: with --keying port-destination the
    // VCs share one connection.
    std::array<std::optional<std::uint16_t>, 4> tc;
    std::int64_t hi = 0;           // highest PSN sent
    std::int64_t covered = 0;      // highest PSN an ACK or NACK said was delivered in order
    std::int64_t resend_next = 0;  // the PSN a go-back-N resend sends next
    std::int64_t nacked = 0;
    std::int64_t nack_ns = 0;           // when the capture saw that NACK
    psn_ordered<std::int64_t> sent_ns;  // PSN above `covered` -> when it was last sent
    // PSNs a new PDU skipped, not yet seen since: psn.next's violations if they never are. By
    // first PSN, disjoint; made at the first skip. A copy or an ACK takes away only the skips it
    // meets (a crafted capture of many skips costs a logarithm a frame, not their number).
    struct gap_end {
      std::int64_t to;
      std::uint64_t frame;
    };
    std::unique_ptr<std::map<std::int64_t, gap_end>> gaps;
    // PSNs from..to shown sent (a copy, or an ACK that covers them): no gap of the sender's.
    // Returns how many skips it looked at.
    std::size_t sent_again(std::int64_t from, std::int64_t to) {
      if (!gaps || gaps->empty()) return 0;
      auto it = gaps->upper_bound(from);
      if (it != gaps->begin() && std::prev(it)->second.to >= from) --it;
      std::size_t visits = 0;
      while (it != gaps->end() && it->first <= to) {
        ++visits;
        const std::int64_t start = it->first;
        const gap_end g = it->second;
        it = gaps->erase(it);
        if (start < from) gaps->emplace_hint(it, start, gap_end{from - 1, g.frame});
        if (g.to > to) {
          gaps->emplace_hint(it, to + 1, gap_end{g.to, g.frame});
          break;
        }
      }
      return visits;
    }
    // PSN -> frame: partition not allowed; made at the first. Holds at most psn_horizon PSNs:
    // one further below the highest sent cannot be acknowledged by name any more (a conformant
    // sender's window is below half the PSN space, so it was acknowledged or not long before).
    std::unique_ptr<std::map<std::int64_t, std::uint64_t>> denied;

    std::int64_t unwrap(std::uint16_t raw) const noexcept {
      if (!sent_any && !acked_any) return raw;
      return unwrap_psn(sent_any ? hi : covered, raw);
    }
  };

  // The connection's state, made if new; nullptr for a new one beyond max_connections (the
  // frame then counts as not analysed). Valid until the next call: a new connection may move
  // the others.
  conn_state* state_of(const connection_key& k) {
    if (conns_.size() >= cfg_.max_connections) {
      const auto i = index_.find(k);
      if (i != index_.npos) return &conns_[i];
      refused_ = true;
      return nullptr;
    }
    const auto [i, fresh] = index_.insert(k);
    if (fresh) conns_.emplace_back();
    return &conns_[i];
  }

  static std::optional<std::uint16_t> traffic_class(const detail::check_nodes& n) {
    using namespace detail;
    for (const std::size_t i : {c_shim_tc, c_afh2_tc, c_afh2c_tc, c_pcp, c_dscp, c_tclass})
      if (n[i]) return static_cast<std::uint16_t>(n[i]->value);
    return std::nullopt;
  }

  template <class Tree>
  void transport_rules(const Tree&, const frame_facts& f, const detail::check_nodes& n) {
    if (cfg_.ports > 1 && !cfg_.port_known) {
      for (const rule r : detail::connection_rules)
        if (on(r)) not_examinable(r);
      return;
    }
    refused_ = false;
    frame_facts g = f;
    if (!cfg_.keying_per_vc) g.key.vc = 0;  // one PSN space for the VCs
    if (g.data) on_pdu(g, n, f.key.vc);
    if (g.op == static_cast<std::uint8_t>(wire::rh_op::ack) ||
        g.op == static_cast<std::uint8_t>(wire::rh_op::nack))
      on_ack(g);
    not_analysed_ += refused_;
  }

  // `vc`: the PDU's own (the key's is 0 when the VCs share a PSN space).
  void on_pdu(const frame_facts& f, const detail::check_nodes& n, std::uint8_t vc) {
    using namespace detail;
    conn_state* state = state_of(f.key);
    if (!state) return;
    conn_state& c = *state;
    // A minimum-size frame the capture cut before its R-CRC: whether it holds a payload at all
    // (a data PDU) was not captured, its R-CRC and padding possibly taken for one.
    const bool payload_unknown =
        n[c_rcrc] &&
        n[c_rcrc]->value == static_cast<std::uint64_t>(wire::rcrc_status::not_captured) &&
        f.length <= wire::ethernet_min_frame;
    if (const auto tc = traffic_class(n); tc && !payload_unknown) {
      std::optional<std::uint16_t>& ctc = c.tc[vc & 3u];
      if (!ctc) ctc = tc;
      const std::uint16_t held = *ctc;
      judge(
          rule::pdu_one_vc, held != *tc,
          [&] { return "traffic class " + num(held) + " of the connection's data PDUs"; },
          [&] { return "traffic class " + num(*tc); });
    } else if (on(rule::pdu_one_vc)) {
      not_examinable(rule::pdu_one_vc);
    }
    const std::int64_t u = c.unwrap(f.npsn);
    if (u > c.hi || !c.sent_any) {
      c.sent_ns.insert_or_assign(u, f.time_ns);
      c.sent_ns.keep_within(u);
    }
    if (cfg_.partitions && n[c_partition] && f.xpuid < cfg_.partitions->listed.size() &&
        cfg_.partitions->listed.test(f.xpuid)) {
      c.listed = true;
      const auto p = static_cast<std::uint16_t>(n[c_partition]->value);
      if (!cfg_.partitions->allowed->allowed(f.xpuid, p)) {
        if (!c.denied) c.denied = std::make_unique<std::map<std::int64_t, std::uint64_t>>();
        c.denied->try_emplace(u, f.frame);
        if (c.denied->size() > static_cast<std::size_t>(psn_horizon))
          c.denied->erase(c.denied->begin(),
                          c.denied->upper_bound(std::max(u, c.hi) - psn_horizon));
      }
    }
    if (!c.sent_any) {
      c.sent_any = true;
      c.hi = u;
      if (on(rule::psn_next)) not_examinable(rule::psn_next);  // any first PSN will do
      return;
    }
    if (u > c.hi) {
      // A new PSN; a resend that stopped short of the highest sent is no go-back-N.
      if (c.resending) {
        const std::int64_t next = std::max(c.resend_next, c.covered + 1);
        judge(
            rule::gbn_resend, next <= c.hi,
            [&] {
              return "npsn " + psn_text(next) + " (resend in order up to " + psn_text(c.hi) + ")";
            },
            [&] { return "new npsn " + psn_text(u); });
        c.resending = false;
      }
      // PSNs skipped: the sender's fault unless the capture missed them (taken at their
      // receiver, behind a lossy link), which a later copy or an ACK of them will show.
      if (on(rule::psn_next)) {
        examined(rule::psn_next);
        if (u != c.hi + 1) {
          if (!c.gaps) c.gaps = std::make_unique<std::map<std::int64_t, conn_state::gap_end>>();
          c.gaps->emplace_hint(c.gaps->end(), c.hi + 1, conn_state::gap_end{u - 1, f.frame});
          // Half the PSN space holds at most this many skips (each followed by a PSN sent): an
          // older one can only be shown sent by an ACK of a PSN the connection cannot name any
          // more. It is judged now.
          if (c.gaps->size() > static_cast<std::size_t>(psn_horizon / 2)) {
            const auto oldest = c.gaps->begin();
            never_sent({oldest->first, oldest->second.to, oldest->second.frame});
            c.gaps->erase(oldest);
          }
        }
      }
      c.hi = u;
      return;
    }
    skip_visits_ += c.sent_again(u, u);
    // A PSN sent before: the next of a resend, or the start of one.
    c.sent_ns.insert_or_assign(u, f.time_ns);
    if (c.nack_open && u == c.nacked) c.nack_open = false;
    const bool in_order = c.resending && u == c.resend_next;
    const bool start = (c.nacked_any && u == c.nacked) || !c.acked_any || u <= c.covered + 1;
    judge(
        rule::gbn_resend, !in_order && !start,
        [&] {
          return c.resending ? "npsn " + psn_text(c.resend_next) + " (in order) or a go-back to " +
                                   psn_text(c.covered + 1)
                             : "a go-back to npsn " + psn_text(c.covered + 1) +
                                   " (oldest unacknowledged) or a NACKed PSN";
        },
        [&] { return "npsn " + psn_text(u); });
    c.resending = u < c.hi;
    c.resend_next = u + 1;
  }

  void on_ack(const frame_facts& f) {
    using namespace detail;
    const connection_key k{f.key.dst, f.key.src, f.key.port, f.key.vc};
    conn_state* state = state_of(k);
    if (!state) return;
    conn_state& c = *state;
    const bool nack = f.op == static_cast<std::uint8_t>(wire::rh_op::nack);
    const std::int64_t u = c.unwrap(f.apsn);
    const std::int64_t covered = nack ? u - 1 : u;
    const char* what = nack ? "NACK apsn " : "ACK apsn ";
    if (c.sent_any)
      judge(
          rule::ack_unsent, covered > c.hi,
          [&] { return "apsn at most " + psn_text(nack ? c.hi + 1 : c.hi) + " (highest sent)"; },
          [&] { return what + psn_text(u); });
    else if (on(rule::ack_unsent))
      not_examinable(rule::ack_unsent);
    if (c.acked_any)
      judge(
          rule::ack_monotonic, covered < c.covered,
          [&] {
            return std::string(what) + "of at least " + psn_text(nack ? c.covered + 1 : c.covered);
          },
          [&] { return what + psn_text(u); });
    else
      examined(rule::ack_monotonic);
    if (nack) {
      judge(
          rule::nack_once, c.nack_open && u == c.nacked,
          [&] { return "one NACK of " + psn_text(u) + " until it is sent again"; },
          [&] { return "a second NACK apsn " + psn_text(u); });
      c.nack_open = true;
      c.nacked_any = true;
      c.nacked = u;
      c.nack_ns = f.time_ns;
    } else if (c.nack_open) {
      // A copy of the NACKed PSN sent shortly before the NACK (reordered, delayed) may reach
      // the receiver after it: then the ACK is right. Older copies cannot.
      const std::int64_t* sent = c.sent_ns.find(c.nacked);
      const bool on_its_way =
          sent != nullptr && *sent + static_cast<std::int64_t>(cfg_.rto_ns) >= c.nack_ns;
      judge(
          rule::ack_past_gap, u >= c.nacked && !on_its_way,
          [&] { return "no ACK of " + psn_text(c.nacked) + " or beyond before it is sent again"; },
          [&] { return "ACK apsn " + psn_text(u); });
      if (u >= c.nacked) c.nack_open = false;
    }
    if (c.listed && on(rule::partition_allowed)) {
      const bool any = c.denied && !c.denied->empty() && c.denied->begin()->first <= covered;
      judge(
          rule::partition_allowed, any,
          [&] {
            return "PSN " + psn_text(c.denied->begin()->first) + " (frame " +
                   num(static_cast<std::int64_t>(c.denied->begin()->second)) +
                   ", partition not allowed for its source) never acknowledged";
          },
          [&] { return what + psn_text(u); });
      if (any) c.denied->erase(c.denied->begin(), c.denied->upper_bound(covered));
    }
    // An ACK of a PSN never sent is no progress (a sender ignores it): it is reported once,
    // and what the connection knows as acknowledged stays.
    if (c.sent_any && covered > c.hi) return;
    if (!c.acked_any || covered > c.covered) c.covered = covered;
    c.acked_any = true;
    skip_visits_ += c.sent_again(std::numeric_limits<std::int64_t>::lowest(), c.covered);
    c.sent_ns.erase_through(c.covered);
  }

  check_config cfg_;
  std::array<rule_tally, rules.size()> tallies_{};
  std::vector<conn_state> conns_;
  flat_index<connection_key, connection_key_hash> index_;  // numbered as conns_
  std::map<std::uint64_t, pause_state> pausers_;
  // Per priority, the stations whose pause of it is not empty, by its end: pfc_rule looks only at
  // those that end after a frame.
  std::array<std::set<std::pair<std::int64_t, std::uint64_t>>, transport::pfc_priorities> pausing_;
  static constexpr std::size_t max_pause_looks = 64;
  std::uint64_t pause_looks_ = 0;          // by the MAC of the station that paused
  std::vector<frame_violation> by_frame_;  // in frame order
  std::map<std::uint64_t, std::vector<frame_violation>> late_;
  text_store texts_;
  std::uint64_t last_frame_ = 0;
  bool finished_ = false;
  std::uint64_t number_ = 0;
  std::uint64_t pdus_ = 0, lite_ = 0;
  std::uint64_t not_analysed_ = 0;
  std::uint64_t skip_visits_ = 0;
  bool refused_ = false;  // the current frame named a connection beyond max_connections
};

}  // namespace scaleup::dissect
