// The Wireshark plugin: every format `scaleup dump` reads, dissected by the library's engine
// (dissect/engine.hpp) and shown by walking its tree, plus the go-back-N sequence analysis of
// dissect/analysis.hpp. It hooks in where Wireshark hands over each encapsulation:
//   UDP            port preference and Decode As (no port by default: none is SUE's), a heuristic
//                  on any port, and the conversations the heuristic found SUE on
//   AFH Gen 1      the SUE and shim Ethertype preferences (after Ethernet and 802.1Q)
//   AFH Gen 2      a heuristic that looks at an Ethernet frame before Ethernet does (the SLAP
//                  signature of the first octet), and the user link type 147 (USER0)
//   Tofu, RDMA     the user link types 148 and 149 (USER1, USER2); Tofu slices are also
//                  reassembled into frames, as `scaleup dump` does
// The frame is dissected whole whenever the hook's bytes lie in the captured frame, so the
// tree is the one `scaleup dump` prints; otherwise (a tunnel, a reassembled datagram) the PDU
// is dissected on its own.
#include <wireshark.h>

#include <epan/address.h>
#include <epan/conversation.h>
#include <epan/conversation_table.h>
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/tap.h>
#include <wiretap/wtap.h>
#include <ws_version.h>
#include <wsutil/report_message.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/profile_file.hpp"
#include "app/tofu_frames.hpp"
#include "registry.hpp"
#include "render.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/hash_key.hpp"
#include "scaleup/dissect/summary.hpp"
#include "scaleup/dissect/xpu_table.hpp"
#include "scaleup/pack/profiles.hpp"
#include "scaleup/tofu/slicer.hpp"
#include "scaleup/wire/frame.hpp"
#include "version_compat.hpp"  // what Wireshark's plugin loader looks up, and the API's types

namespace {

using namespace scaleup;
using rh_t = wire::reliability_header;

ws::registry reg;
int proto_sue = -1;
int sue_tap = -1;

// ---- preferences -------------------------------------------------------------------------

gint pref_profile = 0;  // index into pack::shipped_profiles; one past the end: none
gint pref_fcs = 0;
guint pref_ethertype = wire::ethertype::sue;
guint pref_shim_ethertype = wire::ethertype::afh1_shim;
guint pref_shim_next = wire::shim_next_sue;
ws::pref_bool pref_analyze = true;
guint pref_window = transport::gbn_config{}.window;
// dissect/limits.hpp: what fits in about 1 GB. A uint preference; 0 takes the default.
guint pref_max_connections = static_cast<guint>(dissect::default_max_connections);
ws::pref_bool pref_port_by_interface = false;
const char* pref_xpu_map = "";
// A command profile file (`scaleup dump --profile FILE`'s form); when set, it is the profile.
const char* pref_profile_file = "";
std::unique_ptr<dissect::runtime_profile> file_profile;
// The map the preference names, as last loaded (none: the file is unset or could not be read).
std::optional<dissect::xpu_table> xpu_map;
ws::pref_bool pref_check_checksums = false;

std::vector<enum_val_t> profile_enum;
std::vector<std::string> profile_strings;
const enum_val_t fcs_enum[] = {
    {"auto", "Detect (the last 4 bytes are the CRC-32 of the rest)", 0},
    {"yes", "Always", 1},
    {"no", "Never", 2},
    {nullptr, nullptr, 0},
};

dissect::options current_options() {
  dissect::options o;
  const auto n = static_cast<gint>(pack::shipped_profiles.size());
  o.profile =
      pref_profile >= 0 && pref_profile < n ? pack::shipped_profiles[pref_profile] : nullptr;
  if (file_profile) o.profile = &file_profile->profile();
  o.fcs = pref_fcs == 1   ? dissect::fcs_mode::present
          : pref_fcs == 2 ? dissect::fcs_mode::absent
                          : dissect::fcs_mode::detect;
  o.sue_ethertype = static_cast<std::uint16_t>(pref_ethertype);
  o.shim_ethertype = static_cast<std::uint16_t>(pref_shim_ethertype);
  o.shim_next_sue = static_cast<std::uint8_t>(pref_shim_next);
  o.xpus = xpu_map ? &*xpu_map : nullptr;
  o.check_checksums = pref_check_checksums != FALSE;
  return o;
}

// The XPU map preference: read again whenever the preferences change; an unreadable file is
// reported once and leaves no map (destinations over IP are then the addresses).
void load_xpu_map() {
  static std::string loaded;
  const std::string path = pref_xpu_map ? pref_xpu_map : "";
  if (path == loaded) return;
  loaded = path;
  xpu_map.reset();
  if (path.empty()) return;
  auto m = dissect::read_xpu_map(path);
  if (!m) {
    report_failure("SUE XPU map %s:%u: %.*s", path.c_str(), static_cast<unsigned>(m.err.item),
                   static_cast<int>(m.err.what.size()), m.err.what.data());
    return;
  }
  xpu_map = std::move(m.value);
}

// ---- per-capture state -------------------------------------------------------------------

std::unique_ptr<dissect::analysis> analysis;
// The conformance rules (dissect/conformance.hpp), judged on the first pass and kept per frame
// for every later one: each violation is expert info sue.check.<rule id>.
std::unique_ptr<dissect::conformance> conformance;

// Tofu slices make a frame only together: the first pass gathers them as `scaleup dump` does
// and keeps each reassembled frame (or why it failed) under the number of its last slice.
struct tofu_reassembly {
  app::tofu_frames lanes;
  std::map<std::uint32_t, std::vector<std::uint8_t>> frames;
  std::map<std::uint32_t, wire::error> failed;
};
std::unique_ptr<tofu_reassembly> tofu_state;

// UDP ports a whole datagram was found SUE on by the heuristic, each with the first frame that
// showed it: a datagram the capture cut (no R-CRC to confirm it) with a plausible RH is SUE on
// such a port from that frame on, as `scaleup dump` takes it (wire/udp_flow.hpp, port_bound);
// by frame number, so every pass shows the same frames.
std::map<std::uint16_t, std::uint32_t> heuristic_ports;

void init_capture() {
  dissect::analysis_config c;
  c.window =
      pref_window == 0 || pref_window >= 32768 ? transport::gbn_config{}.window : pref_window;
  c.max_connections =
      pref_max_connections == 0 ? dissect::default_max_connections : pref_max_connections;
  analysis = std::make_unique<dissect::analysis>(c);
  dissect::check_config k;
  k.port_known = pref_port_by_interface != FALSE;
  k.profile = current_options().profile != nullptr;
  k.keep = 0;
  k.per_frame = true;
  k.max_connections = c.max_connections;
  conformance = std::make_unique<dissect::conformance>(std::move(k));
  tofu_state = std::make_unique<tofu_reassembly>();
  heuristic_ports.clear();
}

void cleanup_capture() {
  analysis.reset();
  conformance.reset();
  tofu_state.reset();
}

// What the conversation table counts, per SUE PDU: its connection's ends as the frames name them.
struct tap_info {
  dissect::endpoint src, dst;
  guint32 vc, length;
};

// ---- trees -------------------------------------------------------------------------------

// Most frames fit the small tree; a PDU packed with tiny commands needs the large one.
dissect::tree& small_tree() {
  static const auto t = std::make_unique<dissect::tree>();
  return *t;
}
dissect::large_tree& large_tree() {
  static const auto t = std::make_unique<dissect::large_tree>();
  return *t;
}

template <class Fill, class Use>
int with_tree(Fill&& fill, Use&& use) {
  auto& s = small_tree();
  fill(s);
  if (!s.overflow) return use(s);
  auto& l = large_tree();
  fill(l);
  return use(l);
}

// The captured bytes of `tvb`, for the library. In an AddressSanitizer build (SCALEUP_SANITIZE,
// with GCC) they are a copy of exactly that size in the packet's pool: tshark keeps a frame in
// a larger buffer, where a read past its end would go unnoticed. (Wireshark's pools then need
// WIRESHARK_DEBUG_WMEM_OVERRIDE=simple, one allocation each, as the tests set it.)
wire::bytes bytes_of(tvbuff_t* tvb, [[maybe_unused]] packet_info* pinfo) {
  const guint n = tvb_captured_length(tvb);
  if (n == 0) return {};
#if defined(__SANITIZE_ADDRESS__)
  return wire::bytes(static_cast<const std::uint8_t*>(tvb_memdup(pinfo->pool, tvb, 0, n)), n);
#else
  return wire::bytes(tvb_get_ptr(tvb, 0, static_cast<gint>(n)), n);
#endif
}

// ---- showing a tree ----------------------------------------------------------------------

// `dst`: the destination where the frame or the XPU map names one: an XPU id (shown bare, as the
// source's), else the IP address; "?" when neither is known. Written into `out` a piece at a
// time, as the tree's labels are: a frame's summary costs no allocation.
template <class Tree, class Out>
void put_info(Out& out, const Tree& t, const std::optional<dissect::endpoint>& dst) {
  using dissect::detail::put_uint;
  const auto value = [&](const wire::field_info& entry) -> std::optional<std::uint64_t> {
    if (const auto* f = t.find(entry)) return f->value;
    return std::nullopt;
  };
  const auto from_to = [&](std::uint64_t src) {
    out("XPU ");
    put_uint(out, src);
    out(" \xe2\x86\x92 ");  // an arrow
    if (!dst)
      out("?");
    else if (dst->is_xpu())
      put_uint(out, dst->xpu);
    else
      dissect::put_endpoint(out, *dst);
  };
  if (const auto src = value(wire::info_of<rh_t, &rh_t::xpuid>())) {
    from_to(*src);
    if (const auto vc = value(wire::info_of<rh_t, &rh_t::vc>())) {
      out(" VC ");
      put_uint(out, *vc);
    }
    const auto payload = value(dissect::computed_fields::payload_len);
    const auto op = value(wire::info_of<rh_t, &rh_t::op>());
    const auto apsn = value(wire::info_of<rh_t, &rh_t::apsn>());
    if (payload && *payload > 0)
      if (const auto npsn = value(wire::info_of<rh_t, &rh_t::npsn>())) {
        out(" PSN ");
        put_uint(out, *npsn);
      }
    if (op && apsn && *op <= 1) {
      out(*op == 0 ? " ACK " : " NACK ");
      put_uint(out, *apsn);
    }
    if (payload && *payload) {
      out(" Len=");
      put_uint(out, *payload);
    } else if (payload) {
      out(" (RH only)");
    }
  } else if (const auto* src =
                 t.find(wire::info_of<wire::afh2_compressed, &wire::afh2_compressed::src_xpu>())) {
    from_to(src->value);
    if (const auto tc = value(wire::info_of<wire::afh2_compressed, &wire::afh2_compressed::tc>())) {
      out(" TC ");
      put_uint(out, *tc);
    }
    if (const auto len = value(dissect::computed_fields::lite_len)) {
      out(" Len=");
      put_uint(out, *len);
    }
  } else {
    // Other formats: the summary line `scaleup dump` prints, without its frame columns.
    std::string line;
    ws::string_sink all{line};
    dissect::put_summary(all, t, 0);
    line = line.substr(0, line.find('\n'));
    if (const auto cols = line.find(" B  "); cols != std::string::npos) out(line.substr(cols + 4));
    return;
  }
  std::size_t items = 0;
  for (const auto& l : t.layer_list()) items += !l.list.empty();
  if (items) {
    out(", ");
    put_uint(out, items);
    out(items == 1 ? " command" : " commands");
  }
  std::size_t errors = 0;
  for (const auto& e : t.error_list()) errors += e.level == wire::severity::error;
  if (errors == 1) {
    out(" [1 error]");
  } else if (errors) {
    out(" [");
    put_uint(out, errors);
    out(" errors]");
  }
}

void show_analysis(const dissect::frame_result& res, const ws::rendered& r, tvbuff_t* tvb,
                   packet_info* pinfo) {
  proto_tree* parent = r.rh_tree ? r.rh_tree : r.first_tree;
  proto_item* ai = proto_tree_add_item(parent, reg.hf_analysis, tvb, 0, 0, ENC_NA);
  proto_item_set_generated(ai);
  proto_tree* at = proto_item_add_subtree(ai, reg.ett_analysis);
  for (std::size_t i = 0; i < dissect::analysis_values.size(); ++i) {
    const auto& v = dissect::analysis_values[i];
    const auto x = res.get(v.which);
    if (!x) continue;
    proto_item* item = nullptr;
    if (v.kind == dissect::unit::nanoseconds) {
      nstime_t ts;
      ts.secs = static_cast<time_t>(*x / 1'000'000'000);
      ts.nsecs = static_cast<int>(*x % 1'000'000'000);
      item = proto_tree_add_time(at, reg.hf_values[i], tvb, 0, 0, &ts);
    } else {
      item = proto_tree_add_uint(at, reg.hf_values[i], tvb, 0, 0, static_cast<guint32>(*x));
    }
    proto_item_set_generated(item);
  }
  std::string tags;
  for (const auto& f : dissect::analysis_flags) {
    if (!res.has(f.bit)) continue;
    if (expert_field* ei = reg.expert_for(f.bit)) proto_tree_add_expert(at, pinfo, ei, tvb, 0, 0);
    tags += "[SUE " + std::string(f.summary.substr(0, f.summary.find(':'))) + "] ";
  }
  if (!tags.empty()) col_prepend_fence_fstr(pinfo->cinfo, COL_INFO, "%s", tags.c_str());
}

// AFH Gen 2 replaces the MAC addresses: the XPU ids are what the address columns should show.
template <class Tree>
void set_xpu_addresses(const Tree& t, packet_info* pinfo) {
  if (t.encap != wire::to_string(wire::encap::afh2) &&
      t.encap != wire::to_string(wire::encap::afh2c) &&
      t.encap != wire::to_string(wire::encap::lite))
    return;
  const auto* src = t.find(wire::info_of<wire::afh2_normal, &wire::afh2_normal::src_xpu>());
  if (!src) src = t.find(wire::info_of<wire::afh2_compressed, &wire::afh2_compressed::src_xpu>());
  const auto dst = dissect::destination_xpu(t);
  if (!src || !dst) return;
  auto* ids = wmem_alloc_array(pinfo->pool, guint32, 2);
  ids[0] = static_cast<guint32>(src->value);
  ids[1] = *dst;
  set_address(&pinfo->src, AT_NUMERIC, 4, &ids[0]);
  set_address(&pinfo->dst, AT_NUMERIC, 4, &ids[1]);
  copy_address_shallow(&pinfo->dl_src, &pinfo->src);
  copy_address_shallow(&pinfo->dl_dst, &pinfo->dst);
}

// Renders `t` and runs the analysis; returns the bytes taken, 0 when nothing was ours.
template <class Tree>
int show(const Tree& t, const ws::placement& at, packet_info* pinfo, proto_tree* root,
         const ws::protocol* expected, std::uint32_t expected_at, bool whole_frame,
         const dissect::carrier_hint& hint = {}) {
  const ws::rendered r = ws::render(reg, t, at, pinfo, root, expected, expected_at, whole_frame);
  if (!r.any) return 0;
  set_xpu_addresses(t, pinfo);
  const bool has_rh = t.find_layer(wire::layout<rh_t>::name) != nullptr;
  std::optional<dissect::frame_facts> facts;
  std::uint16_t port = 0;
  if (pref_port_by_interface && pinfo->rec && (pinfo->rec->presence_flags & WTAP_HAS_INTERFACE_ID))
    port = dissect::port_of_interface(pinfo->rec->rec_header.packet_header.interface_id);
  const std::int64_t ns =
      static_cast<std::int64_t>(pinfo->abs_ts.secs) * 1'000'000'000 + pinfo->abs_ts.nsecs;
  // A frame cut by the snapshot length counts too: the engine read it against the length on
  // the wire (the tvb's reported length), as `scaleup stats` does with pcap's.
  if (pref_analyze && has_rh) facts = dissect::facts_of(t, pinfo->num, ns, port, hint);
  if (pref_analyze && (has_rh || t.find_layer("sue_lite"))) {
    if (!conformance) init_capture();
    conformance->add(t, bytes_of(at.tvb, pinfo), pinfo->num, ns, port);
    proto_tree* parent = r.rh_tree ? r.rh_tree : r.first_tree;
    const auto len = [](std::string_view v) { return static_cast<int>(v.size()); };
    for (const auto& v : conformance->of_frame(pinfo->num))
      if (expert_field* ei = reg.expert_for(v.which)) {
        const std::string_view id = dissect::rule_info_of(v.which).id;
        proto_tree_add_expert_format(
            parent, pinfo, ei, at.tvb, 0, 0, "%.*s: expected %.*s; seen %.*s", len(id), id.data(),
            len(v.expected), v.expected.data(), len(v.seen), v.seen.data());
      }
  }
  // The facts hold the destination (the tree's, else the hint): the search is done once.
  std::optional<dissect::endpoint> dst;
  if (facts)
    dst = facts->key.dst;
  else if (const auto ends = dissect::endpoints_of(t, hint))
    dst = ends->second;
  else if (const auto x = dissect::destination_xpu(t))
    dst = dissect::endpoint::of_xpu(*x);
  col_set_str(pinfo->cinfo, COL_PROTOCOL,
              proto_get_protocol_short_name(find_protocol_by_id(r.last->id)));
  char text[ITEM_LABEL_LENGTH];
  ws::detail::label_sink line{text};
  put_info(line, t, dst);
  std::string longer;  // the rare line longer than a label: Wireshark cuts it
  if (line.full) {
    ws::string_sink all{longer};
    put_info(all, t, dst);
  }
  const char* info = line.full ? longer.c_str() : text;
  text[line.size] = '\0';
  col_clear(pinfo->cinfo, COL_INFO);
  col_add_str(pinfo->cinfo, COL_INFO, info);
  col_set_fence(pinfo->cinfo, COL_INFO);
  if (r.rh_item) proto_item_append_text(r.rh_item, ", %s", info);
  if (!facts) return static_cast<int>(tvb_captured_length(at.tvb));
  if (!analysis) init_capture();
  show_analysis(analysis->add(*facts), r, at.tvb, pinfo);
  auto* ti = wmem_new(pinfo->pool, tap_info);
  *ti = tap_info{facts->key.src, facts->key.dst, facts->key.vc, facts->length};
  tap_queue_packet(sue_tap, pinfo, ti);
  return static_cast<int>(tvb_captured_length(at.tvb));
}

// The captured frame `tvb` lies in, when Wireshark's first data source is that frame and its
// link type is one the engine reads: then the whole frame is dissected, as `scaleup dump` does.
struct enclosing {
  tvbuff_t* tvb;
  wire::bytes bytes;
  std::uint32_t link;
  std::uint32_t offset;       // of `tvb` in the frame
  std::uint32_t wire_length;  // the frame's reported length: on the wire, captured or not
};

// The pcap link types scaleup writes besides Ethernet: LINKTYPE_USER0 to USER2, a site's own.
// Each is claimed for the protocol its frames start with.
struct user_link {
  int encap;
  std::uint32_t link;
  std::string_view protocol;
};
constexpr user_link user_links[] = {
    {WTAP_ENCAP_USER0, dissect::link_afh2, wire::layout<wire::afh2_normal>::name},  // 147
    {WTAP_ENCAP_USER1, tofu::link_tofu, "tofu"},                                    // 148
    {WTAP_ENCAP_USER2, rdma::link_rdma, "rdma"},                                    // 149
};

std::uint32_t link_of(int encap) {
  if (encap == WTAP_ENCAP_ETHERNET) return dissect::link_ethernet;
  for (const auto& u : user_links)
    if (u.encap == encap) return u.link;
  return 0;
}

std::optional<enclosing> enclosing_frame(tvbuff_t* tvb, packet_info* pinfo) {
  if (!pinfo->rec || pinfo->rec->rec_type != REC_TYPE_PACKET || !pinfo->data_src)
    return std::nullopt;
  const std::uint32_t link = link_of(pinfo->rec->rec_header.packet_header.pkt_encap);
  if (!link) return std::nullopt;
  tvbuff_t* frame =
      get_data_source_tvb(static_cast<const struct data_source*>(pinfo->data_src->data));
  if (!frame || tvb_get_ds_tvb(tvb) != frame) return std::nullopt;
  const gint offset = tvb_raw_offset(tvb) - tvb_raw_offset(frame);
  if (offset < 0 || static_cast<guint>(offset) > tvb_captured_length(frame)) return std::nullopt;
  return enclosing{frame, bytes_of(frame, pinfo), link, static_cast<std::uint32_t>(offset),
                   tvb_reported_length(frame)};
}

template <class Tree>
std::uint32_t end_of_ours(const Tree& t) {
  std::uint32_t end = 0;
  for (const auto& l : t.layer_list())
    if (reg.protocol_of(l.name)) end = std::max(end, l.offset + l.length);
  // A frame cut by the snapshot length: ours runs on past the capture, to the end on the wire.
  if (end == t.frame_length && t.length_on_wire() > t.frame_length) end = t.length_on_wire();
  return end;
}

// Ethernet shows what follows our PDU (an FCS, a trailer) once it knows where the PDU ends.
void end_payload_at(tvbuff_t* tvb, std::uint32_t end, std::uint32_t offset) {
  if (end > offset && end - offset < tvb_reported_length(tvb)) set_actual_length(tvb, end - offset);
}

// Dissects the enclosing frame whole; -1 when the engine found nothing of ours at the hook's
// offset, not even an error (it reads the frame differently from the dissectors that led here).
// `end`, when given, receives where the last of our layers ends in the frame.
int show_frame(const enclosing& fr, const dissect::options& o, packet_info* pinfo, proto_tree* root,
               const ws::protocol* expected, std::uint32_t* end = nullptr) {
  return with_tree(
      [&](auto& t) { dissect::dissect_frame(t, fr.bytes, fr.link, o, fr.wire_length); },
      [&](auto& t) {
        if (end) *end = end_of_ours(t);
        bool found = false;
        for (const auto& l : t.layer_list())
          found = found || (l.offset == fr.offset && reg.protocol_of(l.name));
        for (const auto& e : t.error_list())
          found = found || (e.offset >= fr.offset && reg.protocol_of(e.layer));
        if (!found) return -1;
        // A hook at the first byte has the frame to itself.
        return show(t, ws::placement{fr.tvb, 0}, pinfo, root, expected, fr.offset, fr.offset == 0);
      });
}

const ws::protocol* sue_protocol() { return reg.protocol_named("sue"); }
const ws::protocol* afh2_protocol() {
  return reg.protocol_named(wire::layout<wire::afh2_normal>::name);
}

// ---- the hooks ---------------------------------------------------------------------------

std::optional<wire::ip_address> ip_of(const address& a) {
  if (a.type == AT_IPv4 && a.len == 4)
    return wire::ip_address::v4(wire::load_be32(static_cast<const std::uint8_t*>(a.data)));
  if (a.type == AT_IPv6 && a.len == 16) {
    wire::ipv6_address v6{};
    std::copy_n(static_cast<const std::uint8_t*>(a.data), 16, v6.begin());
    return wire::ip_address::v6(v6);
  }
  return std::nullopt;
}

// A PDU dissected on its own: its addresses are the ones Wireshark has (IP's), and the XPU map
// may name its destination XPU.
dissect::carrier_hint hint_of(const packet_info* pinfo, const dissect::options& o) {
  dissect::carrier_hint h{ip_of(pinfo->src), ip_of(pinfo->dst), std::nullopt};
  if (o.xpus && h.dst) h.dst_xpu = o.xpus->xpu_of(*h.dst);
  return h;
}

// `ports`: taken as SUE for this datagram (the port Wireshark matched, or both ports of a
// conversation found SUE before).
int dissect_udp_pdu(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root,
                    std::initializer_list<std::uint16_t> ports) {
  // UDP-Lite (RFC 3828) reaches UDP's ports, heuristics and conversations too, but SUE is
  // carried over UDP (R2 3.5.1): `scaleup dump` does not look inside it, nor does the plugin.
  if (proto_is_frame_protocol(pinfo->layers, "udplite")) return 0;
  dissect::options o = current_options();
  for (const std::uint16_t port : ports)
    if (port) o.add_udp_port(port);
  if (const auto fr = enclosing_frame(tvb, pinfo)) {
    const int n = show_frame(*fr, o, pinfo, root, sue_protocol());
    if (n >= 0) return n > 0 ? static_cast<int>(tvb_captured_length(tvb)) : 0;
  }
  const wire::bytes b = bytes_of(tvb, pinfo);
  return with_tree(
      [&](auto& t) {
        t = std::remove_cvref_t<decltype(t)>{};
        t.encap = "udp";
        t.frame_length = static_cast<std::uint32_t>(b.size());
        t.wire_length = tvb_reported_length(tvb);
        dissect::dissect_pdu(t, b, o, tvb_reported_length(tvb));
      },
      [&](auto& t) {
        return show(t, ws::placement{tvb, 0}, pinfo, root, sue_protocol(), 0, false,
                    hint_of(pinfo, o));
      });
}

// A port the user named (the port preference, Decode As).
int dissect_udp(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  return dissect_udp_pdu(tvb, pinfo, root, {static_cast<std::uint16_t>(pinfo->match_uint)});
}

// The failover exchange's port (wire/failover.hpp): its messages have an RH-only PDU's shape,
// so the heuristic must not see them; the engine reads them as their own layer.
int dissect_failover_udp(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  if (const auto fr = enclosing_frame(tvb, pinfo)) {
    const int n = show_frame(*fr, current_options(), pinfo, root, sue_protocol());
    if (n > 0) return static_cast<int>(tvb_captured_length(tvb));
  }
  return 0;
}

// A datagram of a conversation the heuristic found SUE on: SUE whatever it holds, so that a
// corrupted PDU shows as SUE with a bad R-CRC (wire/udp_flow.hpp).
int dissect_udp_bound(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  return dissect_udp_pdu(
      tvb, pinfo, root,
      {static_cast<std::uint16_t>(pinfo->srcport), static_cast<std::uint16_t>(pinfo->destport)});
}
dissector_handle_t udp_bound_handle;

// Any other port: SUE when the payload passes for a PDU, and then its conversation is bound to
// SUE, as Wireshark does after a heuristic match.
// A datagram the capture cut is taken on a port found SUE before (heuristic_ports).
ws::heur_result heur_udp(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  const wire::bytes b = bytes_of(tvb, pinfo);
  if (pinfo->srcport == wire::failover_udp_port || pinfo->destport == wire::failover_udp_port)
    return FALSE;
  const bool cut = tvb_captured_length(tvb) < tvb_reported_length(tvb);
  const auto seen_before = [&](std::uint32_t port) {
    const auto it = heuristic_ports.find(static_cast<std::uint16_t>(port));
    return it != heuristic_ports.end() && it->second < pinfo->num;
  };
  if (cut ? !wire::plausible_rh(b) || !(seen_before(pinfo->srcport) || seen_before(pinfo->destport))
          : !dissect::plausible_pdu(b))
    return FALSE;
  if (dissect_udp_pdu(tvb, pinfo, root, {}) <= 0) return FALSE;
  if (!cut) {
    for (const std::uint32_t port : {pinfo->srcport, pinfo->destport}) {
      const auto [it, fresh] =
          heuristic_ports.emplace(static_cast<std::uint16_t>(port), pinfo->num);
      if (!fresh) it->second = std::min(it->second, pinfo->num);
    }
  }
  // From this frame on, as `scaleup dump` binds it: the same frames are SUE on every pass.
  conversation_set_dissector_from_frame_number(find_or_create_conversation(pinfo), pinfo->num,
                                               udp_bound_handle);
  return TRUE;
}

int dissect_ethertype(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  // Ethernet has read the frame's header: here it is Ethernet, also where its first octet has
  // AFH Gen 2's signature (afh2_eth, which takes such frames before Ethernet, is disabled).
  dissect::options o = current_options();
  o.afh2_on_ethernet = false;
  if (const auto fr = enclosing_frame(tvb, pinfo); fr && fr->link == dissect::link_ethernet) {
    std::uint32_t end = 0;
    const int n = show_frame(*fr, o, pinfo, root, sue_protocol(), &end);
    if (n > 0) end_payload_at(tvb, end, fr->offset);
    if (n >= 0) return n > 0 ? static_cast<int>(tvb_captured_length(tvb)) : 0;
  }
  // Not in a frame the engine can read whole: give it one, the addresses from the Ethernet
  // header Wireshark has already read, the Ethertype it matched, then these bytes.
  constexpr int header = 14;
  std::vector<std::uint8_t> frame(header + tvb_captured_length(tvb), 0);
  if (pinfo->dl_dst.type == AT_ETHER && pinfo->dl_dst.len == 6)
    std::copy_n(static_cast<const std::uint8_t*>(pinfo->dl_dst.data), 6, frame.begin());
  if (pinfo->dl_src.type == AT_ETHER && pinfo->dl_src.len == 6)
    std::copy_n(static_cast<const std::uint8_t*>(pinfo->dl_src.data), 6, frame.begin() + 6);
  wire::store_be16(frame.data() + 12, static_cast<std::uint16_t>(pinfo->match_uint));
  const wire::bytes b = bytes_of(tvb, pinfo);
  std::copy(b.begin(), b.end(), frame.begin() + header);
  dissect::options no_fcs = o;
  no_fcs.fcs = dissect::fcs_mode::absent;  // Ethernet has taken it off already
  return with_tree(
      [&](auto& t) {
        dissect::dissect_frame(t, wire::bytes(frame), dissect::link_ethernet, no_fcs,
                               header + tvb_reported_length(tvb));
      },
      [&](auto& t) {
        const int n =
            show(t, ws::placement{tvb, -header}, pinfo, root, sue_protocol(), header, false);
        if (n > 0) end_payload_at(tvb, end_of_ours(t), header);
        return n > 0 ? static_cast<int>(tvb_captured_length(tvb)) : 0;
      });
}

// AFH Gen 2 replaces the Ethernet header: seen on an Ethernet link, the frame must be taken
// before Ethernet reads its first 14 bytes as addresses and a type.
ws::heur_result heur_eth(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  const wire::bytes frame = bytes_of(tvb, pinfo);
  if (frame.empty() || !wire::has_afh2_signature(frame[0])) return FALSE;
  const dissect::options o = current_options();
  // W = 0, the normal format, has the signature of many locally administered MACs: the engine
  // takes such a frame for AFH Gen 2 only when the SUE Ethertype is in bytes 12-13 (an FCS
  // only shortens the frame). Without it the frame is plain Ethernet, known without
  // dissecting it whole (its checksums included) for every frame of an ordinary capture.
  if (!(frame[0] & wire::afh2_w_bit) &&
      (frame.size() < 14 || wire::load_be16(frame.data() + 12) != o.sue_ethertype))
    return FALSE;
  // The engine decides, exactly as for `scaleup dump`; commands are not needed to decide.
  dissect::options quick = o;
  quick.profile = nullptr;
  dissect::basic_tree<8, 48, 4> probe;
  dissect::dissect_frame(probe, frame, dissect::link_ethernet, quick);
  if (probe.encap != wire::to_string(wire::encap::afh2) &&
      probe.encap != wire::to_string(wire::encap::afh2c) &&
      probe.encap != wire::to_string(wire::encap::lite))
    return FALSE;
  const enclosing fr{tvb, frame, dissect::link_ethernet, 0, tvb_reported_length(tvb)};
  return show_frame(fr, o, pinfo, root, afh2_protocol()) > 0;
}

// Tofu slices: once every lane of a frame is in, the frame too, in a data source of its own.
void show_reassembled_tofu(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root,
                           const ws::protocol* expected) {
  if (!tofu_state) init_capture();
  if (const auto r =
          PINFO_FD_VISITED(pinfo) ? std::nullopt : tofu_state->lanes.push(bytes_of(tvb, pinfo))) {
    if (*r)
      tofu_state->frames[pinfo->num].assign(r->value.begin(), r->value.end());
    else
      tofu_state->failed[pinfo->num] = r->err;
  }
  if (const auto it = tofu_state->frames.find(pinfo->num); it != tofu_state->frames.end()) {
    const auto& f = it->second;
    const auto size = static_cast<gint>(f.size());
    tvbuff_t* frame = tvb_new_child_real_data(tvb, f.data(), size, size);
    add_new_data_source(pinfo, frame, "Reassembled Tofu frame");
    with_tree(
        [&](auto& t) {
          t = std::remove_cvref_t<decltype(t)>{};
          dissect::dissect_tofu_frame(t, wire::bytes(f.data(), f.size()));
          t.frame_length = static_cast<std::uint32_t>(f.size());
        },
        [&](auto& t) {
          return ws::render(reg, t, ws::placement{frame, 0}, pinfo, root).any;
        });
  } else if (const auto bad = tofu_state->failed.find(pinfo->num);
             bad != tofu_state->failed.end()) {
    dissect::tree& t = small_tree();
    t = dissect::tree{};
    t.add_error(bad->second);
    ws::render(reg, t, ws::placement{tvb, 0}, pinfo, root, expected, 0);
  }
}

// A user link type: the frame is ours from its first byte. Errors alone (an empty frame, no
// SLAP signature) are shown too.
int dissect_user_link(tvbuff_t* tvb, packet_info* pinfo, proto_tree* root, void*) {
  const std::uint32_t link = link_of(pinfo->rec ? pinfo->rec->rec_header.packet_header.pkt_encap
                                                : static_cast<int>(pinfo->match_uint));
  const user_link* u = nullptr;
  for (const auto& x : user_links)
    if (x.link == link) u = &x;
  if (!u) return 0;
  const ws::protocol* expected = reg.protocol_named(u->protocol);
  if (!expected) expected = sue_protocol();
  const enclosing fr{tvb, bytes_of(tvb, pinfo), link, 0, tvb_reported_length(tvb)};
  with_tree(
      [&](auto& t) {
        dissect::dissect_frame(t, fr.bytes, fr.link, current_options(), fr.wire_length);
      },
      [&](auto& t) {
        return show(t, ws::placement{tvb, 0}, pinfo, root, expected, 0, true);
      });
  if (link == tofu::link_tofu) show_reassembled_tofu(tvb, pinfo, root, expected);
  return static_cast<int>(tvb_captured_length(tvb));
}

// ---- conversations -----------------------------------------------------------------------

// A conversation is a pair of ends on one VC, both directions: a connection and the reverse one
// that carries its ACKs. Ends are as the frames name them: XPU ids where the destination XPU is
// known, else IP addresses. The VC is part of the address, as "XPU 3 VC 1" or "10.1.2.3 VC 1":
// tshark prints port columns for TCP, UDP and SCTP only.
const char* no_filter(conv_item_t*, conv_filter_type_e) { return CONV_FILTER_INVALID; }
const char* no_endpoint_filter(endpoint_item_t*, conv_filter_type_e) { return CONV_FILTER_INVALID; }
ct_dissector_info_t conv_info = {&no_filter};
et_dissector_info_t endpoint_info = {&no_endpoint_filter};

struct endpoint_name {
  char text[64];
  address addr;
  endpoint_name(const dissect::endpoint& e, guint32 vc) {
    std::snprintf(text, sizeof text, "%s VC %u", dissect::to_string(e).c_str(), vc);
    set_address(&addr, AT_STRINGZ, static_cast<int>(std::strlen(text) + 1), text);
  }
};

tap_packet_status conv_packet(void* table, packet_info* pinfo, epan_dissect_t*, const void* data,
                              tap_flags_t flags) {
  auto* hash = static_cast<conv_hash_t*>(table);
  hash->flags = flags;
  const auto* ti = static_cast<const tap_info*>(data);
  const endpoint_name src(ti->src, ti->vc), dst(ti->dst, ti->vc);
  add_conversation_table_data(hash, &src.addr, &dst.addr, 0, 0, 1, static_cast<int>(ti->length),
                              &pinfo->rel_ts, &pinfo->abs_ts, &conv_info, CONVERSATION_NONE);
  return TAP_PACKET_REDRAW;
}

tap_packet_status endpoint_packet(void* table, packet_info*, epan_dissect_t*, const void* data,
                                  tap_flags_t flags) {
  auto* hash = static_cast<conv_hash_t*>(table);
  hash->flags = flags;
  const auto* ti = static_cast<const tap_info*>(data);
  const endpoint_name src(ti->src, ti->vc), dst(ti->dst, ti->vc);
  add_endpoint_table_data(hash, &src.addr, 0, TRUE, 1, static_cast<int>(ti->length), &endpoint_info,
                          ENDPOINT_NONE);
  add_endpoint_table_data(hash, &dst.addr, 0, FALSE, 1, static_cast<int>(ti->length),
                          &endpoint_info, ENDPOINT_NONE);
  return TAP_PACKET_REDRAW;
}

// ---- registration ------------------------------------------------------------------------

dissector_handle_t ethertype_handle;
guint registered_ethertype = 0;
guint registered_shim_ethertype = 0;

// The profile file preference: read again whenever the preferences change; its fields are
// registered then (Wireshark 4.0 takes hf arrays after its start). An unreadable or broken file
// is reported once, naming the entry and the rule, and leaves the enum preference's profile.
void load_profile_file() {
  static std::string loaded;
  const std::string path = pref_profile_file ? pref_profile_file : "";
  if (path == loaded) return;
  loaded = path;
  file_profile.reset();
  if (path.empty()) return;
  std::string error;
  file_profile = app::load_profile_file(path, error);
  if (!file_profile) {
    report_failure("SUE command profile %s", error.c_str());
    return;
  }
  reg.register_profile(file_profile->profile());
}

void handoff() {
  load_xpu_map();
  load_profile_file();
  static bool done = false;
  if (!done) {
    const dissector_handle_t udp = create_dissector_handle(dissect_udp, proto_sue);
    // No port by default: none is assigned to SUE, and 4793 is Ultra Ethernet Transport's.
    dissector_add_uint_range_with_preference("udp.port", "", udp);
    // A name and description of its own: two handles of one protocol in a table, both called
    // by the protocol's name, make Wireshark warn at every start (and Decode As list two "SUE").
    dissector_add_uint("udp.port", wire::failover_udp_port,
                       create_dissector_handle_with_name_and_description(
                           dissect_failover_udp, proto_sue, "sue_failover", "SUE failover"));
    udp_bound_handle = create_dissector_handle(dissect_udp_bound, proto_sue);
    heur_dissector_add("udp", heur_udp, "SUE over UDP on any port", "sue_udp", proto_sue,
                       HEURISTIC_ENABLE);
    const ws::protocol* afh2 = reg.protocol_named(wire::layout<wire::afh2_normal>::name);
    const int afh2_id = afh2 ? afh2->id : proto_sue;
    heur_dissector_add("eth", heur_eth, "AFH Gen 2 on an Ethernet link", "afh2_eth", afh2_id,
                       HEURISTIC_ENABLE);
    // These replace Wireshark's "DLT User" table for the three user link types scaleup writes.
    for (const auto& u : user_links) {
      const ws::protocol* p = reg.protocol_named(u.protocol);
      dissector_add_uint("wtap_encap", static_cast<guint32>(u.encap),
                         create_dissector_handle(dissect_user_link, p ? p->id : proto_sue));
    }
    ethertype_handle = create_dissector_handle(dissect_ethertype, proto_sue);
    done = true;
  } else {
    dissector_delete_uint("ethertype", registered_ethertype, ethertype_handle);
    dissector_delete_uint("ethertype", registered_shim_ethertype, ethertype_handle);
  }
  registered_ethertype = pref_ethertype & 0xFFFF;
  registered_shim_ethertype = pref_shim_ethertype & 0xFFFF;
  dissector_add_uint("ethertype", registered_ethertype, ethertype_handle);
  dissector_add_uint("ethertype", registered_shim_ethertype, ethertype_handle);
}

void register_protocols() {
  // The per-capture tables of connections are keyed by it (dissect/hash_key.hpp): drawn once,
  // at start, not when the first capture is opened.
  dissect::process_hash_key();
  proto_sue = reg.register_all();

  for (std::size_t i = 0; i < pack::shipped_profiles.size(); ++i)
    profile_strings.emplace_back(pack::shipped_profiles[i]->name());
  for (std::size_t i = 0; i < profile_strings.size(); ++i)
    profile_enum.push_back(
        {profile_strings[i].c_str(), profile_strings[i].c_str(), static_cast<gint>(i)});
  profile_enum.push_back(
      {"none", "none (payloads opaque)", static_cast<gint>(pack::shipped_profiles.size())});
  profile_enum.push_back({nullptr, nullptr, 0});

  module_t* m = prefs_register_protocol(proto_sue, handoff);
  prefs_register_enum_preference(m, "profile", "Command profile",
                                 "How the commands packed in a payload are read (decisions.md: "
                                 "the XPU-specific prefix); none leaves payloads opaque",
                                 &pref_profile, profile_enum.data(), FALSE);
  prefs_register_filename_preference(
      m, "profile_file", "Command profile file",
      "A vendor's command profile as a JSON file (the form of `scaleup dump --profile FILE`, "
      "profiles/default.json); when set it is used instead of the profile above. Its control "
      "fields are registered as filters when the preference is applied; name them sue.cmd.*",
      &pref_profile_file, FALSE);
  prefs_register_enum_preference(m, "fcs", "Ethernet frames end in an FCS",
                                 "Whether captured Ethernet frames hold the 4-byte FCS", &pref_fcs,
                                 fcs_enum, FALSE);
  prefs_register_uint_preference(m, "ethertype", "SUE Ethertype",
                                 "The Ethertype of a SUE PDU after AFH Gen 1 (and after AFH "
                                 "Gen 2 headers); 0x88B5 is IEEE Local Experimental 1",
                                 16, &pref_ethertype);
  prefs_register_uint_preference(m, "shim_ethertype", "AFH Gen 1 shim Ethertype",
                                 "The Ethertype of the AFH Gen 1 shim header", 16,
                                 &pref_shim_ethertype);
  prefs_register_uint_preference(m, "shim_next_header", "Shim next header for SUE",
                                 "The shim's next-header value that means a SUE PDU follows", 10,
                                 &pref_shim_next);
  prefs_register_bool_preference(m, "analyze_sequence", "Analyze PSNs",
                                 "Go-back-N sequence analysis per connection {source, "
                                 "destination, port, VC}, the ends XPU ids where the frame or "
                                 "the XPU map names them, else IP addresses, as Wireshark "
                                 "does for TCP",
                                 &pref_analyze);
  prefs_register_uint_preference(m, "window", "Go-back-N window",
                                 "PDUs in flight that make a connection's window full", 10,
                                 &pref_window);
  prefs_register_uint_preference(
      m, "max_connections", "Connections analysed at most",
      "Connections the sequence analysis and the conformance rules keep at most (about 400 bytes "
      "each); a frame of a new connection beyond is marked sue.analysis.not_analysed and left "
      "out of them, as `scaleup stats --max-connections` does. 0: the default",
      10, &pref_max_connections);
  prefs_register_filename_preference(
      m, "xpu_map", "XPU map file",
      "Which XPU each IP address is, one line ADDRESS XPU ('#' comments), as `scaleup dump "
      "--xpu-map` reads it: over IP a frame carries no destination XPU id. Unset: connections "
      "and the info column show the IP destination",
      &pref_xpu_map, FALSE);
  prefs_register_bool_preference(m, "port_by_interface", "Capture interface is the port",
                                 "Tell connections apart by the capture interface (a frame "
                                 "does not say which port it crossed; off: port 0)",
                                 &pref_port_by_interface);
  prefs_register_bool_preference(m, "check_checksums", "Validate IP and UDP checksums",
                                 "Check the IPv4 header and UDP checksums of SUE frames; a "
                                 "mismatch is a warning and the PDU stays in the analysis. Off "
                                 "by default, as tshark's: a sending host's capture holds "
                                 "checksums left to the NIC. The R-CRC is always checked",
                                 &pref_check_checksums);

  sue_tap = register_tap("sue");
  register_conversation_table(proto_sue, TRUE, conv_packet, endpoint_packet);
  register_init_routine(init_capture);
  register_cleanup_routine(cleanup_capture);
}

}  // namespace

void plugin_register(void) {
  static proto_plugin plugin;
  plugin.register_protoinfo = register_protocols;
  plugin.register_handoff = handoff;
  proto_register_plugin(&plugin);
}
