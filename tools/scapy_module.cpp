// scaleup_docgen --scapy: a scapy module from the field tables of the frames `scaleup dump`
// reads. Every field (name, place, width, value names, default) comes from a table; every
// binding (Ethertypes, UDP ports and heuristic, SLAP signature, tags, link types) from the
// dissector's own constants and defaults, gathered in the one block below. What the tables
// cannot say (where a PDU ends, which class follows which) is Python written once for all the
// tables, in the module's template (python/scaleup_scapy.py.in): this file fills in its @@name@@
// places.
#include "scapy_module.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "generator_text.hpp"
#include "scaleup/dissect/address_text.hpp"
#include "scaleup/dissect/profile_loader.hpp"
#include "scaleup/dissect/registry.hpp"

namespace scaleup::docgen {

namespace {

using wire::field_info;

// ---- how `scaleup dump` recognises frames (dissect/engine.hpp), in one place ---------------
//
// The dissector's defaults: UDP ports, the heuristic, SUE's and the shim's Ethertypes, the shim's
// next header. A change of the port policy there reaches the module through these.
const dissect::options dump_defaults{};
// detail::ethertype_next reads a stack of tags, 802.1Q, 802.1ad or 0x9100 (wire::is_tag_ethertype),
// before the Ethertype it acts on.
constexpr std::array<std::uint16_t, 3> tag_ethertypes{wire::ethertype::vlan, wire::ethertype::qinq,
                                                      wire::ethertype::qinq_old};
static_assert(wire::is_tag_ethertype(tag_ethertypes[0]) &&
              wire::is_tag_ethertype(tag_ethertypes[1]) &&
              wire::is_tag_ethertype(tag_ethertypes[2]));
constexpr std::size_t max_tags = wire::received_frame::max_vlan_tags;
// detail::plausible_pdu wants the RH's version zero besides its reserved fields.
constexpr std::string_view heuristic_version = "sue.rh.ver";
// The layer detail::afh2 names the packed payload of a SUE Lite frame.
constexpr std::string_view lite_layer = "sue_lite";
// The layers detail::commands makes of a packed payload: each command one in a list, which
// `dump --json` writes as an array of objects under the list's name; trailing zeros one of
// padding.
constexpr std::string_view command_layer = "sue.cmd";
constexpr std::string_view command_list = "sue.cmds";
constexpr std::string_view pad_layer = "sue.pad";
// Link types: Ethernet, bare AFH Gen 2, Tofu slice records, ExaJet packets.
constexpr std::uint32_t link_ethernet = dissect::link_ethernet;
constexpr std::uint32_t link_afh2 = dissect::link_afh2;
constexpr std::uint32_t link_tofu = tofu::link_tofu;
constexpr std::uint32_t link_rdma = rdma::link_rdma;

// ---- the classes ---------------------------------------------------------------------------

// A field table, or one field of it, with the defaults of its struct.
struct part {
  dissect::table table;
  std::vector<std::uint8_t> defaults;  // the struct, default-constructed and encoded
  std::string_view only;               // a single field's filter name; empty: every field
};

template <class T>
part part_of(std::string_view only = {}) {
  const auto bytes = wire::to_bytes(T{});
  return {dissect::table_of<T>(dissect::table_group::frame),
          std::vector<std::uint8_t>(bytes.value.begin(), bytes.value.end()), only};
}

// A trailer that ends the PDU its header opens, with a CRC-32 over header and payload.
struct trailer {
  std::string_view cls;      // the trailer's class
  const field_info* status;  // the field dump computes from it: good, bad (, missing)
};

struct layer {
  std::string_view cls;
  std::string_view base;  // ScaleupPacket or one of the runtime's subclasses of it
  std::vector<part> parts;
  std::optional<trailer> closed_by{};
  // The tables dump reads the class's bytes with, each from its first bit, in dump's order;
  // empty: those of `parts`.
  std::vector<std::string_view> read_as{};
};

// Payload lengths the module fills in when a field is left None: the bytes between the header and
// its trailer. `bounds`: dissection also ends the payload there (the shim's length is the PDU's).
struct length_field {
  const field_info* field;
  bool bounds;
};

const std::array<length_field, 2> lengths{{
    {&wire::info_of<wire::afh1_shim, &wire::afh1_shim::length>(), true},
    {&wire::info_of<rdma::data_header, &rdma::data_header::len>(), false},
}};

// Fields the module copies from a layer under this one when left None (layer class, its field):
// with the shim, receivers take the XPU ids from the shim's fields rather than the AFH Gen 1
// addresses (wire/receive.hpp), so a shim built over AFH1 says what its addresses say.
struct copied_field {
  const field_info* field;
  std::string_view layer, source;
};

const std::array<copied_field, 2> copied{{
    {&wire::info_of<wire::afh1_shim, &wire::afh1_shim::src_xpu>(), "AFH1", "src_xpu"},
    {&wire::info_of<wire::afh1_shim, &wire::afh1_shim::dst_xpu>(), "AFH1", "dst_xpu"},
}};

// The trailers' CRCs: computed when left None.
const field_info& rcrc_field = wire::info_of<wire::rcrc_trailer, &wire::rcrc_trailer::value>();
const field_info& tofu_fcs_field = wire::info_of<tofu::fcs_trailer, &tofu::fcs_trailer::value>();
const field_info& rdma_crc_field = wire::info_of<rdma::packet_footer, &rdma::packet_footer::crc>();

// In the registry's order. The SUE PDU is named for the protocol: its class is what a user
// stacks on UDP or an AFH.
std::vector<layer> layers() {
  const trailer rcrc{"SUERCRC", &dissect::computed_fields::rcrc_status};
  const trailer tofu_fcs{"TofuFCS", &dissect::tofu_computed_fields::fcs_status};
  const trailer footer{"ExaJetFooter", &dissect::rdma_computed_fields::crc_status};
  return {
      {"SUE", "_PDU", {part_of<wire::reliability_header>()}, rcrc},
      // AFH Gen 1 takes Ethernet's place: the Ethertype comes with it. dump reads its 14 bytes
      // as an Ethernet header too (wire/receive.hpp), then as the addresses.
      {"AFH1",
       "ScaleupPacket",
       {part_of<wire::afh1_addresses>(),
        part_of<wire::ethernet_header>(
            wire::info_of<wire::ethernet_header, &wire::ethernet_header::type>().filter)},
       std::nullopt,
       {wire::layout<wire::ethernet_header>::name, wire::layout<wire::afh1_addresses>::name}},
      {"AFH1Shim", "ScaleupPacket", {part_of<wire::afh1_shim>()}},
      {"AFH2", "ScaleupPacket", {part_of<wire::afh2_normal>()}},
      {"AFH2C", "_AFH2C", {part_of<wire::afh2_compressed>()}},
      {"AFH2Type", "ScaleupPacket", {part_of<wire::afh2_ethertype>()}},
      {"SUERCRC", "ScaleupPacket", {part_of<wire::rcrc_trailer>()}},
      {"SUEFailover", "ScaleupPacket", {part_of<wire::failover_message>()}},
      {"TofuSlice", "ScaleupPacket", {part_of<tofu::record_header>()}},
      {"TofuRH", "ScaleupPacket", {part_of<tofu::routing_header>()}, tofu_fcs},
      {"TofuFCS", "ScaleupPacket", {part_of<tofu::fcs_trailer>()}},
      {"ExaJetData", "ScaleupPacket", {part_of<rdma::data_header>()}, footer},
      {"ExaJetAck", "ScaleupPacket", {part_of<rdma::response_header>()}, footer},
      {"ExaJetControl", "ScaleupPacket", {part_of<rdma::control_header>()}, footer},
      {"ExaJetControlPayload", "ScaleupPacket", {part_of<rdma::control_payload>()}},
      {"ExaJetFooter", "ScaleupPacket", {part_of<rdma::packet_footer>()}},
  };
}

// Frame tables scapy has classes of its own for: table, class, the module that defines it.
constexpr std::array<std::array<std::string_view, 3>, 10> scapy_own{{
    {"sll", "CookedLinux", "scapy.layers.l2"},
    {"sll2", "CookedLinuxV2", "scapy.layers.l2"},
    {"null", "Loopback", "scapy.layers.l2"},
    {"eth", "Ether", "scapy.layers.l2"},
    {"vlan", "Dot1Q", "scapy.layers.l2"},
    {"ieee8021ad", "Dot1AD", "scapy.layers.l2"},
    {"ip", "IP", "scapy.layers.inet"},
    {"ipv6", "IPv6", "scapy.layers.inet6"},
    {"ipv6.fraghdr", "IPv6ExtHdrFragment", "scapy.layers.inet6"},
    {"udp", "UDP", "scapy.layers.inet"},
}};

// The encapsulations dump names frames by (wire::encap, wire::carrier): the module's constant
// for each.
struct encap_constant {
  std::string_view python;
  std::string_view name;
};
const std::array<encap_constant, 18> encap_constants{{
    {"ENCAP_UDP4", wire::to_string(wire::encap::udp4)},
    {"ENCAP_UDP6", wire::to_string(wire::encap::udp6)},
    {"ENCAP_AFH1", wire::to_string(wire::encap::afh1)},
    {"ENCAP_AFH1_VLAN", wire::to_string(wire::encap::afh1_vlan)},
    {"ENCAP_AFH1_SHIM", wire::to_string(wire::encap::afh1_shim)},
    {"ENCAP_AFH1_VLAN_SHIM", wire::to_string(wire::encap::afh1_vlan_shim)},
    {"ENCAP_AFH2", wire::to_string(wire::encap::afh2)},
    {"ENCAP_AFH2C", wire::to_string(wire::encap::afh2c)},
    {"ENCAP_LITE", wire::to_string(wire::encap::lite)},
    {"CARRIER_UNKNOWN", wire::to_string(wire::carrier::unknown)},
    {"CARRIER_ETH", wire::to_string(wire::carrier::ethernet)},
    {"CARRIER_IPV4", wire::to_string(wire::carrier::ipv4)},
    {"CARRIER_IPV6", wire::to_string(wire::carrier::ipv6)},
    {"CARRIER_IPV4_UDP", wire::to_string(wire::carrier::ipv4_udp)},
    {"CARRIER_IPV6_UDP", wire::to_string(wire::carrier::ipv6_udp)},
    {"CARRIER_AFH2", wire::to_string(wire::carrier::afh2)},
    {"CARRIER_SLL", wire::to_string(wire::carrier::linux_sll)},
    {"CARRIER_NULL", wire::to_string(wire::carrier::null)},
}};

// ExaJet packet types and the header class each is read with (rdma::dissect_packet).
struct exajet_type {
  rdma::packet_type type;
  std::string_view cls;
};
constexpr std::array<exajet_type, 5> exajet_types{{
    {rdma::packet_type::write, "ExaJetData"},
    {rdma::packet_type::inline_write, "ExaJetData"},
    {rdma::packet_type::ack, "ExaJetAck"},
    {rdma::packet_type::nack, "ExaJetAck"},
    {rdma::packet_type::control, "ExaJetControl"},
}};
const field_info& exajet_type_field = wire::info_of<rdma::data_header, &rdma::data_header::type>();

// ---- Python text -------------------------------------------------------------------------

std::string py_str(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A Python tuple of the given element texts.
std::string py_tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + (items.size() == 1 ? ",)" : ")");
}

// Items separated by commas, wrapped before 100 columns with a four-space indent: the lines
// between an opening and a closing bracket.
std::string wrapped(const std::vector<std::string>& items) {
  std::string out, line = "   ";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + item.size() > 99) {
      out += line + "\n";
      line = "   ";
    }
    line += " " + item;
  }
  return out + line;
}

std::string one_line(std::string_view s) {
  std::string out;
  for (const char c : s) out += c == '\n' || c == '\r' ? ' ' : c;
  return out;
}

std::vector<std::string_view> components(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    const auto dot = s.find('.');
    out.push_back(s.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    s.remove_prefix(dot + 1);
  }
}

// The field's name in its class: the filter's components after those it shares with the layer
// name (at least the first is dropped), dots as underscores; the last component when none remain.
std::string field_name(std::string_view layer_name, std::string_view filter) {
  const auto f = components(filter);
  const auto l = components(layer_name);
  std::size_t shared = 0;
  while (shared < f.size() && shared < l.size() && f[shared] == l[shared]) ++shared;
  if (shared == 0) shared = 1;
  if (shared >= f.size()) return std::string(f.back());
  std::string out;
  for (std::size_t i = shared; i < f.size(); ++i) {
    if (!out.empty()) out += '_';
    out += f[i];
  }
  return out;
}

std::string enum_dict(const field_info& f) {
  std::string out = "{";
  for (const auto& n : f.names) {
    if (out.size() > 1) out += ", ";
    out += std::to_string(n.value) + ": " + py_str(n.name);
  }
  return out + "}";
}

bool is_length(const field_info& f) {
  for (const auto& l : lengths)
    if (l.field->filter == f.filter) return true;
  return false;
}

bool is_copied(const field_info& f) {
  for (const auto& c : copied)
    if (c.field->filter == f.filter) return true;
  return false;
}

bool is_crc(const field_info& f) {
  for (const auto* c : {&rcrc_field, &tofu_fcs_field, &rdma_crc_field})
    if (c->filter == f.filter) return true;
  return false;
}

// The default of an address field, in the text form scapy takes: as `scaleup dump` writes it.
std::string address_default(const field_info& f, const std::vector<std::uint8_t>& d) {
  const std::size_t at = f.bit / 8;
  std::string out;
  auto sink = [&out](std::string_view s) { out += s; };
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < f.width / 8 && f.type != wire::kind::ipv6; ++i)
    v = v << 8 | d[at + i];
  if (f.type == wire::kind::ipv4)
    dissect::detail::put_ipv4(sink, v);
  else if (f.type == wire::kind::mac)
    dissect::detail::put_mac(sink, v);
  else
    dissect::detail::put_ipv6(sink, d.data() + at);
  return py_str(out);
}

// One entry of fields_desc. `bit`: where the field starts in the class (alignment decides
// between the byte-sized fields and BitField).
std::string field_decl(const field_info& f, std::string_view name, std::size_t bit,
                       const std::vector<std::uint8_t>& defaults) {
  const std::string n = py_str(name);
  const bool aligned = bit % 8 == 0;
  if (aligned && f.type == wire::kind::mac && f.width == 48)
    return "MACField(" + n + ", " + address_default(f, defaults) + ")";
  if (aligned && f.type == wire::kind::ipv4 && f.width == 32)
    return "IPField(" + n + ", " + address_default(f, defaults) + ")";
  if (aligned && f.type == wire::kind::ipv6 && f.width == 128)
    return "IP6Field(" + n + ", " + address_default(f, defaults) + ")";
  const bool computed = is_length(f) || is_crc(f) || is_copied(f);
  const std::string def = computed ? "None" : [&] {
    const std::uint64_t v = wire::get_bits(defaults.data(), f.bit, f.width);
    return f.type == wire::kind::hex ? hex(v) : std::to_string(v);
  }();
  const bool named = !f.names.empty();
  const bool x = f.type == wire::kind::hex;
  if (aligned && (f.width == 8 || f.width == 16 || f.width == 32)) {
    const std::string_view size = f.width == 8 ? "Byte" : f.width == 16 ? "Short" : "Int";
    if (named) return std::string(size) + "EnumField(" + n + ", " + def + ", " + enum_dict(f) + ")";
    return (x ? "X" : "") + std::string(size) + "Field(" + n + ", " + def + ")";
  }
  if (aligned && f.width == 64 && !named)
    return std::string(x ? "X" : "") + "LongField(" + n + ", " + def + ")";
  if (named)
    return "BitEnumField(" + n + ", " + def + ", " + std::to_string(f.width) + ", " + enum_dict(f) +
           ")";
  return std::string(x ? "X" : "") + "BitField(" + n + ", " + def + ", " + std::to_string(f.width) +
         ")";
}

struct placed {
  const field_info* info;
  std::string name;
  std::size_t bit;  // in the class
  const part* from;
};

std::vector<placed> fields_of(const layer& l) {
  std::vector<placed> out;
  std::size_t bit = 0;
  for (const auto& p : l.parts)
    for (const auto& f : p.table.fields) {
      if (!p.only.empty() && f.filter != p.only) continue;
      out.push_back({&f, field_name(p.table.name, f.filter), bit, &p});
      bit += f.width;
    }
  return out;
}

std::size_t size_of(const layer& l) {
  std::size_t bits = 0;
  for (const auto& f : fields_of(l)) bits += f.info->width;
  return bits / 8;
}

std::string class_text(const layer& l) {
  const auto& t = l.parts.front().table;
  const auto fs = fields_of(l);
  std::string out = "class " + std::string(l.cls) + "(" + std::string(l.base) + "):\n";
  out += "    \"\"\"" + one_line(t.title) + " (" + one_line(t.seed) + "), " +
         std::to_string(size_of(l)) + " bytes.\"\"\"\n\n";
  out += "    name = " + py_str(t.title) + "\n";
  out += "    scaleup_layer = " + py_str(t.name) + "\n";
  out += "    scaleup_fields = {\n";
  for (const auto& f : fs)
    out += "        " + py_str(f.name) + ": " + py_str(f.info->filter) + ",\n";
  out += "    }\n";
  std::vector<std::string> reserved;
  std::string fixed;
  for (const auto& f : fs) {
    if (f.info->check == wire::rule::reserved) reserved.push_back(py_str(f.name));
    if (f.info->check == wire::rule::fixed)
      fixed += (fixed.empty() ? "" : ", ") + py_str(f.name) + ": " + std::to_string(f.info->expect);
  }
  if (!reserved.empty()) out += "    scaleup_reserved = " + py_tuple(reserved) + "\n";
  if (!fixed.empty()) out += "    scaleup_fixed = {" + fixed + "}\n";
  for (const auto& f : fs)
    for (const auto& len : lengths)
      if (len.field->filter == f.info->filter) {
        out += "    scaleup_lengths = {" + py_str(f.name) + ": (" + std::to_string(f.bit) + ", " +
               std::to_string(f.info->width) + ")}\n";
        if (len.bounds) out += "    scaleup_bounds = " + py_str(f.name) + "\n";
      }
  std::string copies;
  for (const auto& f : fs)
    for (const auto& c : copied)
      if (c.field->filter == f.info->filter)
        copies += (copies.empty() ? "" : ", ") + py_str(f.name) + ": (" + std::to_string(f.bit) +
                  ", " + std::to_string(f.info->width) + ", " + py_str(c.layer) + ", " +
                  py_str(c.source) + ")";
  if (!copies.empty()) out += "    scaleup_copied = {" + copies + "}\n";
  for (const auto& f : fs)
    if (is_crc(*f.info))
      out += "    scaleup_crc = (" + py_str(f.name) + ", " + std::to_string(f.bit / 8) + ")\n";
  if (l.closed_by) {
    std::vector<std::string> names;
    for (const auto& n : l.closed_by->status->names) names.push_back(py_str(n.name));
    out += "    scaleup_status = " + py_str(l.closed_by->status->filter) + "\n";
    out += "    scaleup_status_names = " + py_tuple(names) + "\n";
  }
  out += "    fields_desc = [\n";
  for (const auto& f : fs) {
    std::string comment = std::string(f.info->filter);
    if (!f.info->description.empty()) comment += ": " + one_line(f.info->description);
    if (!f.info->seed.empty()) comment += " (" + one_line(f.info->seed) + ")";
    out += "        " + field_decl(*f.info, f.name, f.bit, f.from->defaults) + ",  # " + comment +
           "\n";
  }
  return out + "    ]\n";
}

// ---- the template's places -------------------------------------------------------------

using places = std::map<std::string, std::string, std::less<>>;

// Lines joined by newlines (no newline after the last).
std::string lines(const std::vector<std::string>& ls) {
  std::string out;
  for (const auto& l : ls) out += (out.empty() ? "" : "\n") + l;
  return out;
}

// ---- what dump --json writes: the tables each class is read with --------------------------

// A field as dump --json writes it: (filter, bit, width, kind, value names or None).
std::string dump_field(const field_info& f) {
  return "(" + py_str(f.filter) + ", " + std::to_string(f.bit) + ", " + std::to_string(f.width) +
         ", " + py_str(dissect::kind_names[static_cast<std::size_t>(f.type)]) + ", " +
         (f.names.empty() ? std::string("None") : enum_dict(f)) + ")";
}

// Every frame table, its fields dump writes (reserved ones it leaves out of its JSON).
std::string dump_tables() {
  std::vector<std::string> out;
  for (const auto& t : dissect::tables) {
    if (t.group != dissect::table_group::frame) continue;
    out.push_back("    " + py_str(t.name) + ": (");
    for (const auto& f : t.fields)
      if (f.check != wire::rule::reserved) out.push_back("        " + dump_field(f) + ",");
    out.push_back("    ),");
  }
  return lines(out);
}

// Each class (scapy's own and the module's) and the tables dump reads its bytes with.
std::string dump_reads(const std::vector<layer>& ls) {
  std::vector<std::string> out;
  for (const auto& s : scapy_own)
    out.push_back("    " + std::string(s[1]) + ": (" + py_str(s[0]) + ",),");
  for (const auto& l : ls) {
    std::vector<std::string> names;
    if (!l.read_as.empty())
      for (const auto n : l.read_as) names.push_back(py_str(n));
    else
      for (const auto& p : l.parts) names.push_back(py_str(p.table.name));
    out.push_back("    " + std::string(l.cls) + ": " + py_tuple(names) + ",");
  }
  return lines(out);
}

// scapy's classes the module reads with its tables, imported from their modules.
std::string own_imports() {
  std::map<std::string_view, std::vector<std::string_view>> by_module;
  for (const auto& s : scapy_own) by_module[s[2]].push_back(s[1]);
  std::vector<std::string> out;
  for (auto& [module, names] : by_module) {
    std::sort(names.begin(), names.end());
    std::string line = "from " + std::string(module) + " import ";
    for (std::size_t i = 0; i < names.size(); ++i) line += (i ? ", " : "") + std::string(names[i]);
    out.push_back(line);
  }
  return lines(out);
}

// The default command profile as a profile file (profiles/default.json), which the module reads
// as it reads a user's: one reader for both. Empty when the text cannot sit in a raw string.
std::string default_profile_json() {
  std::string text;
  auto sink = [&text](std::string_view s) { text += s; };
  dissect::put_profile_json(sink, pack::default_profile);
  if (text.find("'''") != std::string::npos) {
    std::cerr << "scaleup_docgen: the default profile's text holds ''', which would end the "
                 "module's raw string\n";
    return {};
  }
  return text;
}

// What goes in each @@name@@ of the template: the dissector's constants, and what is written
// once per table, trailer or computed field.
places values(const std::vector<layer>& ls) {
  const auto& o = dump_defaults;
  places v;

  std::string ports;
  for (std::size_t i = 0; i < o.udp_port_count; ++i)
    ports += (i ? ", " : "") + std::to_string(o.udp_ports[i]);
  v["udp_ports_text"] = ports.empty() ? std::string("none by default") : ports;
  v["udp_port_set"] = ports.empty() ? std::string("set()") : "{" + ports + "}";
  v["udp_heuristic"] = o.heuristics ? "True" : "False";
  v["sue_ethertype"] = hex(o.sue_ethertype, 4);
  v["shim_ethertype"] = hex(o.shim_ethertype, 4);
  v["shim_next_sue"] = std::to_string(o.shim_next_sue);
  v["shim_next_failover"] = std::to_string(wire::shim_next_failover);
  v["failover_udp_port"] = std::to_string(wire::failover_udp_port);
  std::string tags;
  for (const auto t : tag_ethertypes) tags += (tags.empty() ? "" : ", ") + hex(t, 4);
  v["tag_ethertypes"] = tags;
  v["vlan_ethertype"] = hex(tag_ethertypes[0], 4);
  v["qinq_ethertype"] = hex(tag_ethertypes[1], 4);
  v["qinq_old_ethertype"] = hex(tag_ethertypes[2], 4);
  v["max_tags"] = std::to_string(max_tags);
  // Every Ethertype the engine takes for ordinary Ethernet after a SLAP-looking first octet.
  std::vector<std::string> common;
  for (std::uint32_t t = 0; t <= 0xFFFF; ++t)
    if (wire::is_common_ethertype(static_cast<std::uint16_t>(t), o.sue_ethertype, o.shim_ethertype))
      common.push_back(hex(t, 4));
  v["common_ethertypes"] = wrapped(common);
  v["afh2_signature_mask"] = hex(wire::afh2_signature_mask, 2);
  v["afh2_signature"] = hex(wire::afh2_signature, 2);
  v["afh2_w_bit"] = hex(wire::afh2_w_bit, 2);
  v["link_ethernet"] = std::to_string(link_ethernet);
  v["link_afh2"] = std::to_string(link_afh2);
  v["link_tofu"] = std::to_string(link_tofu);
  v["link_rdma"] = std::to_string(link_rdma);
  v["link_null"] = std::to_string(wire::link_null);
  v["link_loop"] = std::to_string(wire::link_loop);
  v["link_linux_sll"] = std::to_string(wire::link_linux_sll);
  v["link_linux_sll2"] = std::to_string(wire::link_linux_sll2);
  v["lite_layer"] = py_str(lite_layer);
  v["ethernet_min_frame"] = std::to_string(wire::ethernet_min_frame);
  v["rh_size"] = std::to_string(wire::layout<wire::reliability_header>::size);
  v["rcrc_size"] = std::to_string(wire::rcrc_size);
  // The RH bits the heuristic wants zero: the version and every reserved field.
  std::vector<std::string> zero;
  for (const auto& f : wire::field_infos<wire::reliability_header>)
    if (f.filter == heuristic_version || f.check == wire::rule::reserved)
      zero.push_back("(" + std::to_string(f.bit) + ", " + std::to_string(f.width) + ")");
  v["plausible_zero"] = py_tuple(zero);
  v["exajet_min_size"] = std::to_string(rdma::header_size + rdma::footer_size);
  v["exajet_type_bits"] =
      std::to_string(exajet_type_field.bit) + ", " + std::to_string(exajet_type_field.width);
  v["control_payload_size"] = std::to_string(rdma::control_payload_size);
  v["emit_udp_port"] = std::to_string(wire::emit_udp_port);

  // Commands (pack/command.hpp), the layers dump makes of them, and what it computes.
  v["command_layer"] = py_str(command_layer);
  v["command_list"] = py_str(command_list);
  v["pad_layer"] = py_str(pad_layer);
  v["padding_type"] = std::to_string(pack::padding_type);
  v["max_control_units"] = std::to_string(pack::max_control_units);
  v["max_types"] = std::to_string(pack::max_types);
  v["name_filter"] = py_str(pack::name_filter);
  v["control_len_filter"] = py_str(pack::control_len_filter);
  v["data_len_filter"] = py_str(pack::data_len_filter);
  std::vector<std::string> kinds, rules;
  for (const auto k : dissect::kind_names) kinds.push_back(py_str(k));
  for (const auto r : dissect::rule_names) rules.push_back(py_str(r));
  v["kind_names"] = py_tuple(kinds);
  v["rule_names"] = py_tuple(rules);
  v["rule_reserved"] = py_str(dissect::rule_names[static_cast<std::size_t>(wire::rule::reserved)]);
  v["rule_fixed"] = py_str(dissect::rule_names[static_cast<std::size_t>(wire::rule::fixed)]);
  v["null_family"] =
      py_str(wire::info_of<wire::bsd_loopback, &wire::bsd_loopback::family>().filter);
  const std::string profile = default_profile_json();
  if (profile.empty()) return {};
  v["default_profile"] = profile;
  v["payload_len_filter"] = py_str(dissect::computed_fields::payload_len.filter);
  v["lite_len_filter"] = py_str(dissect::computed_fields::lite_len.filter);
  v["ip_checksum_status"] = py_str(dissect::computed_fields::ip_checksum_status.filter);
  v["udp_checksum_status"] = py_str(dissect::computed_fields::udp_checksum_status.filter);
  const auto status_name = [](wire::checksum_status s) {
    for (const auto& n : dissect::computed_fields::checksum_status_names)
      if (n.value == static_cast<std::uint64_t>(s)) return py_str(n.name);
    return std::string("None");
  };
  v["checksum_unverified"] = status_name(wire::checksum_status::unverified);
  v["checksum_not_present"] = status_name(wire::checksum_status::not_present);
  std::vector<std::string> encaps;
  for (const auto& e : encap_constants)
    encaps.push_back(std::string(e.python) + " = " + py_str(e.name));
  v["encap_names"] = lines(encaps);
  v["own_imports"] = own_imports();
  v["dump_tables"] = dump_tables();
  v["dump_reads"] = dump_reads(ls);

  std::vector<std::string> class_list, classes, trailers, class_names;
  for (const auto& l : ls) {
    std::string c = "  " + std::string(l.cls);
    c.resize(24, ' ');
    std::string t(l.parts.front().table.name);
    t.resize(18, ' ');
    class_list.push_back(c + t + one_line(l.parts.front().table.title));
    std::string text = class_text(l);
    text.pop_back();  // the newline after the last line: lines() puts one between classes
    classes.push_back(std::move(text) + (classes.size() + 1 < ls.size() ? "\n\n" : ""));
    if (l.closed_by)
      trailers.push_back(std::string(l.cls) +
                         ".scaleup_trailer = " + std::string(l.closed_by->cls));
    class_names.emplace_back(l.cls);
  }
  v["class_list"] = lines(class_list);
  v["classes"] = lines(classes);  // two empty lines between classes, as PEP 8 has them
  v["trailers"] = lines(trailers);
  v["class_names"] = wrapped(class_names);

  std::vector<std::string> types;
  for (const auto& t : exajet_types)
    types.push_back("    " + std::to_string(static_cast<unsigned>(t.type)) + ": " +
                    std::string(t.cls) + ",");
  v["exajet_types"] = lines(types);

  std::set<std::string_view> computed;
  for (const auto* f : dissect::computed) computed.insert(f->filter);
  std::vector<std::string> names;
  for (const auto c : computed) names.push_back("    " + py_str(c) + ",");
  v["computed"] = lines(names);
  return v;
}

// The template with every @@name@@ replaced and its own comments (lines that begin with "#%")
// left out. Empty, with the reason on stderr, when it names a place `v` does not fill or leaves
// one of them unused: the template and this file have drifted apart.
std::string fill(std::string_view text, const places& v) {
  std::string out;
  std::set<std::string, std::less<>> used;
  bool ok = true;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1);
    text.remove_prefix(line.size());
    if (line.substr(0, 2) == "#%") continue;
    for (auto at = line.find("@@"); at != std::string_view::npos; at = line.find("@@")) {
      const auto end = line.find("@@", at + 2);
      if (end == std::string_view::npos) break;
      const std::string_view name = line.substr(at + 2, end - at - 2);
      out += line.substr(0, at);
      line.remove_prefix(end + 2);
      if (const auto it = v.find(name); it != v.end()) {
        out += it->second;
        used.insert(it->first);
      } else {
        std::cerr << "scaleup_docgen: the scapy template names @@" << name
                  << "@@, which tools/scapy_module.cpp does not fill\n";
        ok = false;
      }
    }
    out += line;
  }
  for (const auto& [name, value] : v)
    if (!used.contains(name)) {
      std::cerr << "scaleup_docgen: the scapy template has no @@" << name << "@@\n";
      ok = false;
    }
  return ok ? out : std::string();
}

// Every frame table of the registry has a class here or in scapy; no class has a name twice.
bool complete(const std::vector<layer>& ls) {
  bool ok = true;
  for (const auto& t : dissect::tables) {
    if (t.group != dissect::table_group::frame) continue;
    bool found = false;
    for (const auto& l : ls) found = found || l.parts.front().table.name == t.name;
    for (const auto& s : scapy_own) found = found || s[0] == t.name;
    if (!found) {
      std::cerr << "scaleup_docgen: frame table " << t.name
                << " has no scapy class: add it to layers() in tools/scapy_module.cpp\n";
      ok = false;
    }
  }
  for (const auto& l : ls) {
    std::set<std::string> names;
    std::size_t bits = 0;
    for (const auto& f : fields_of(l)) {
      bits += f.info->width;
      if (!names.insert(f.name).second) {
        std::cerr << "scaleup_docgen: class " << l.cls << " has two fields named " << f.name
                  << "\n";
        ok = false;
      }
    }
    if (bits % 8 != 0) {
      std::cerr << "scaleup_docgen: class " << l.cls << " is not a whole number of bytes\n";
      ok = false;
    }
  }
  return ok;
}

}  // namespace

std::string scapy_module(std::string_view template_text) {
  const auto ls = layers();
  if (!complete(ls)) return {};
  const auto v = values(ls);
  if (v.empty()) return {};
  return fill(template_text, v);
}

}  // namespace scaleup::docgen
