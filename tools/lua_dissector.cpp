// scaleup_docgen --lua: the Lua dissector, from its template (wireshark/scaleup.lua.in) and the
// library. Every field a Wireshark user filters on (name, place, width, type, value names) comes
// from a table, as the plugin registers it (wireshark/registry.cpp); every constant the reading
// needs (Ethertypes, sizes, link types, the command profiles) from the library's own. What the
// tables cannot say (which header follows which, where a PDU ends, how slices make a frame) is
// the template's Lua, written once for all of them, as the plugin's is its engine.
#include "lua_dissector.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "generator_text.hpp"
#include "scaleup/dissect/registered_fields.hpp"
#include "scaleup/dissect/registry.hpp"

namespace scaleup::docgen {
namespace {

using wire::field_info;

// ---- Lua text ------------------------------------------------------------------------------

std::string lua_str(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string_view kind_name(wire::kind k) {
  switch (k) {
    case wire::kind::uint:
      return "uint";
    case wire::kind::hex:
      return "hex";
    case wire::kind::flag:
      return "flag";
    case wire::kind::mac:
      return "mac";
    case wire::kind::ipv4:
      return "ipv4";
    case wire::kind::ipv6:
      return "ipv6";
    case wire::kind::label:
      return "label";
  }
  return "uint";
}

// Value names as a Lua table keyed by value. No table names a value past 2^53, the largest
// integer every Lua number holds exactly (Lua 5.2 has no other).
std::string names_of(std::span<const wire::value_name> names) {
  std::string out = "{";
  for (const auto& n : names) {
    if (out.size() > 1) out += ", ";
    out += "[" + num(n.value) + "] = " + lua_str(n.name);
  }
  return out + "}";
}

bool names_fit(std::span<const wire::value_name> names) {
  return std::all_of(names.begin(), names.end(),
                     [](const wire::value_name& n) { return n.value < (std::uint64_t{1} << 53); });
}

// One field as decode reads it: where, how wide, what kind, and the rule its value keeps.
std::string placed_field(const field_info& f) {
  std::string out = "{" + lua_str(f.filter) + ", " + num(f.bit) + ", " + num(f.width) + ", " +
                    lua_str(kind_name(f.type));
  if (f.check == wire::rule::fixed) out += ", check = \"fixed\", expect = " + num(f.expect);
  if (f.check == wire::rule::reserved) out += ", check = \"reserved\"";
  return out + "}";
}

std::string table_text(std::string_view name, std::string_view title, std::size_t size,
                       std::span<const field_info> fields) {
  std::string out = "{name = " + lua_str(name) + ", title = " + lua_str(title) +
                    ", size = " + num(size) + ", fields = {\n";
  for (const auto& f : fields) out += "    " + placed_field(f) + ",\n";
  return out + "  }}";
}

// ---- what the plugin registers, in its order (dissect/registered_fields.hpp) --------------

std::string_view prefix_of(std::string_view filter) { return filter.substr(0, filter.find('.')); }

std::string protocols_text(const std::vector<dissect::registered_field>& fields) {
  // "sue" first (it owns the preferences and the expert infos), then each prefix as it first
  // appears, named as a person looks for it or after its first table.
  std::vector<std::string_view> prefixes{"sue"};
  for (const auto& f : fields) {
    const std::string_view p = prefix_of(f.filter);
    if (std::find(prefixes.begin(), prefixes.end(), p) == prefixes.end()) prefixes.push_back(p);
  }
  std::string out = "G.protocols = {\n";
  for (const auto p : prefixes) {
    std::string full, short_name;
    for (const auto& k : dissect::protocol_names)
      if (k.prefix == p) full = std::string(k.full), short_name = std::string(k.short_name);
    if (full.empty()) {
      for (const auto& t : dissect::tables)
        if (full.empty() && prefix_of(t.name) == p) full = std::string(t.title);
      if (full.empty()) full = "Scale-Up " + std::string(p);
      for (const char c : p) short_name += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    }
    out += "  {prefix = " + lua_str(p) + ", full = " + lua_str(full) +
           ", short = " + lua_str(short_name) + "},\n";
  }
  return out + "}\n";
}

std::string fields_text(const std::vector<dissect::registered_field>& fields) {
  std::string out = "G.fields = {\n";
  for (const auto& f : fields) {
    out += "  {" + lua_str(f.filter) + ", " + lua_str(f.name) + ", " + lua_str(kind_name(f.kind)) +
           ", " + num(f.width);
    if (!f.names.empty() && names_fit(f.names)) out += ", names = " + names_of(f.names);
    if (const std::uint32_t mask = f.bitmask())
      out += ", mask = " + num(mask) + ", shift = " + num(f.shift());
    out += ", blurb = " + lua_str(f.blurb) + "},\n";
  }
  return out + "}\n";
}

// ---- the tables, fields and constants the reading names, by role ---------------------------

template <class T>
std::string table_of() {
  return table_text(wire::layout<T>::name, wire::layout<T>::title, wire::layout<T>::size,
                    wire::field_infos<T>);
}

std::string tables_text() {
  const std::vector<std::pair<std::string_view, std::string>> roles{
      {"rh", table_of<wire::reliability_header>()},
      {"eth", table_of<wire::ethernet_header>()},
      {"vlan", table_of<wire::vlan_tag>()},
      {"service_tag", table_of<wire::service_tag>()},
      {"ipv4", table_of<wire::ipv4_header>()},
      {"ipv6", table_of<wire::ipv6_header>()},
      {"ipv6_fragment", table_of<wire::ipv6_fragment_header>()},
      {"udp", table_of<wire::udp_header>()},
      {"afh1", table_of<wire::afh1_addresses>()},
      {"shim", table_of<wire::afh1_shim>()},
      {"afh2", table_of<wire::afh2_normal>()},
      {"afh2c", table_of<wire::afh2_compressed>()},
      {"afh2_type", table_of<wire::afh2_ethertype>()},
      {"rcrc", table_of<wire::rcrc_trailer>()},
      {"failover", table_of<wire::failover_message>()},
      {"tofu_record", table_of<tofu::record_header>()},
      {"tofu_rh", table_of<tofu::routing_header>()},
      {"tofu_fcs", table_of<tofu::fcs_trailer>()},
      {"rdma_data", table_of<rdma::data_header>()},
      {"rdma_response", table_of<rdma::response_header>()},
      {"rdma_control", table_of<rdma::control_header>()},
      {"rdma_control_payload", table_of<rdma::control_payload>()},
      {"rdma_footer", table_of<rdma::packet_footer>()},
  };
  std::string out = "G.tables = {\n";
  for (const auto& [role, text] : roles) out += std::string(role) + " = " + text + ",\n";
  return out + "}\n";
}

template <class T, auto Member>
std::pair<std::string_view, std::string_view> role(std::string_view name) {
  return {name, wire::info_of<T, Member>().filter};
}

std::string names_text() {
  using namespace wire;
  using tofu::routing_header;
  const std::vector<std::pair<std::string_view, std::string_view>> roles{
      role<reliability_header, &reliability_header::ver>("rh_ver"),
      role<reliability_header, &reliability_header::op>("rh_op"),
      role<reliability_header, &reliability_header::rsv>("rh_rsv"),
      role<reliability_header, &reliability_header::xpuid>("rh_xpuid"),
      role<reliability_header, &reliability_header::npsn>("rh_npsn"),
      role<reliability_header, &reliability_header::vc>("rh_vc"),
      role<reliability_header, &reliability_header::rsvd>("rh_rsvd"),
      role<reliability_header, &reliability_header::partition>("rh_partition"),
      role<reliability_header, &reliability_header::apsn>("rh_apsn"),
      role<ethernet_header, &ethernet_header::type>("eth_type"),
      role<vlan_tag, &vlan_tag::type>("vlan_type"),
      role<ipv4_header, &ipv4_header::version>("ipv4_version"),
      role<ipv4_header, &ipv4_header::ihl>("ipv4_ihl"),
      role<ipv4_header, &ipv4_header::total_length>("ipv4_length"),
      role<ipv4_header, &ipv4_header::id>("ipv4_id"),
      role<ipv4_header, &ipv4_header::flag_mf>("ipv4_mf"),
      role<ipv4_header, &ipv4_header::frag_offset>("ipv4_frag_offset"),
      role<ipv4_header, &ipv4_header::protocol>("ipv4_protocol"),
      role<ipv4_header, &ipv4_header::checksum>("ipv4_checksum"),
      role<ipv4_header, &ipv4_header::src>("ipv4_src"),
      role<ipv4_header, &ipv4_header::dst>("ipv4_dst"),
      role<ipv6_header, &ipv6_header::version>("ipv6_version"),
      role<ipv6_header, &ipv6_header::payload_length>("ipv6_length"),
      role<ipv6_header, &ipv6_header::next_header>("ipv6_next"),
      role<ipv6_header, &ipv6_header::src>("ipv6_src"),
      role<ipv6_header, &ipv6_header::dst>("ipv6_dst"),
      role<ipv6_fragment_header, &ipv6_fragment_header::next_header>("ipv6_fragment_next"),
      role<ipv6_fragment_header, &ipv6_fragment_header::offset>("ipv6_fragment_offset"),
      role<ipv6_fragment_header, &ipv6_fragment_header::more>("ipv6_fragment_more"),
      role<udp_header, &udp_header::src_port>("udp_src"),
      role<udp_header, &udp_header::dst_port>("udp_dst"),
      role<udp_header, &udp_header::length>("udp_length"),
      role<udp_header, &udp_header::checksum>("udp_checksum"),
      role<afh1_addresses, &afh1_addresses::src_xpu>("afh1_src"),
      role<afh1_addresses, &afh1_addresses::dst_xpu>("afh1_dst"),
      role<afh1_shim, &afh1_shim::next_header>("shim_next"),
      role<afh1_shim, &afh1_shim::length>("shim_length"),
      role<afh1_shim, &afh1_shim::src_xpu>("shim_src"),
      role<afh1_shim, &afh1_shim::dst_xpu>("shim_dst"),
      role<afh2_normal, &afh2_normal::src_xpu>("afh2_src"),
      role<afh2_normal, &afh2_normal::dst_xpu>("afh2_dst"),
      role<afh2_normal, &afh2_normal::x>("afh2_x"),
      role<afh2_compressed, &afh2_compressed::src_xpu>("afh2c_src"),
      role<afh2_compressed, &afh2_compressed::dst_xpu>("afh2c_dst"),
      role<afh2_compressed, &afh2_compressed::tc>("afh2c_tc"),
      role<afh2_ethertype, &afh2_ethertype::type>("afh2_type"),
      role<rcrc_trailer, &rcrc_trailer::value>("rcrc"),
      role<failover_message, &failover_message::ver>("failover_ver"),
      role<failover_message, &failover_message::type>("failover_type"),
      role<failover_message, &failover_message::port>("failover_port"),
      role<failover_message, &failover_message::vc>("failover_vc"),
      role<failover_message, &failover_message::generation>("failover_generation"),
      role<failover_message, &failover_message::xpuid>("failover_xpuid"),
      role<failover_message, &failover_message::base>("failover_base"),
      role<failover_message, &failover_message::expected>("failover_expected"),
      role<failover_message, &failover_message::crc>("failover_crc"),
      role<tofu::record_header, &tofu::record_header::lane>("tofu_lane"),
      role<tofu::record_header, &tofu::record_header::lanes>("tofu_lanes"),
      role<routing_header, &routing_header::one>("tofu_one"),
      role<routing_header, &routing_header::len>("tofu_len"),
      role<routing_header, &routing_header::dabc1_a>("tofu_dabc1_a"),
      role<routing_header, &routing_header::dabc1_b>("tofu_dabc1_b"),
      role<routing_header, &routing_header::dabc1_c>("tofu_dabc1_c"),
      role<routing_header, &routing_header::dx>("tofu_dx"),
      role<routing_header, &routing_header::dy>("tofu_dy"),
      role<routing_header, &routing_header::dz>("tofu_dz"),
      role<routing_header, &routing_header::dabc2_a>("tofu_dabc2_a"),
      role<routing_header, &routing_header::dabc2_b>("tofu_dabc2_b"),
      role<routing_header, &routing_header::dabc2_c>("tofu_dabc2_c"),
      role<routing_header, &routing_header::pat>("tofu_pat"),
      role<tofu::fcs_trailer, &tofu::fcs_trailer::value>("tofu_fcs"),
      role<rdma::data_header, &rdma::data_header::type>("rdma_type"),
      role<rdma::data_header, &rdma::data_header::seq>("rdma_seq"),
      role<rdma::data_header, &rdma::data_header::block_seq>("rdma_block_seq"),
      role<rdma::data_header, &rdma::data_header::len>("rdma_len"),
      role<rdma::packet_footer, &rdma::packet_footer::crc>("rdma_crc"),
      role<pack::cmd_write, &pack::cmd_write::type>("cmd_type"),
      role<routing_header, &routing_header::stat>("tofu_stat"),
      role<routing_header, &routing_header::seq>("tofu_seq"),
      role<rdma::data_header, &rdma::data_header::tid>("rdma_tid"),
      role<rdma::response_header, &rdma::response_header::type>("rdma_ack_type"),
      role<rdma::response_header, &rdma::response_header::tid>("rdma_ack_tid"),
      role<rdma::response_header, &rdma::response_header::seq>("rdma_ack_seq"),
      role<rdma::response_header, &rdma::response_header::block_seq>("rdma_ack_block_seq"),
      role<rdma::control_header, &rdma::control_header::type>("rdma_ctl_type"),
  };
  std::string out = "G.names = {\n";
  for (const auto& [name, filter] : roles)
    out += "  " + std::string(name) + " = " + lua_str(filter) + ",\n";
  return out + "}\n";
}

std::string computed_text() {
  namespace c = dissect::computed_fields;
  namespace t = dissect::tofu_computed_fields;
  namespace r = dissect::rdma_computed_fields;
  const std::vector<std::pair<std::string_view, const field_info*>> roles{
      {"rcrc_status", &c::rcrc_status},
      {"ip_checksum_status", &c::ip_checksum_status},
      {"udp_checksum_status", &c::udp_checksum_status},
      {"payload_len", &c::payload_len},
      {"lite_len", &c::lite_len},
      {"control_len", &c::control_len},
      {"data_len", &c::data_len},
      {"fcs", &c::fcs},
      {"dst_xpu", &c::dst_xpu},
      {"tofu_fcs_status", &t::fcs_status},
      {"tofu_ways", &t::ways},
      {"tofu_words", &t::words},
      {"tofu_first_word", &t::first_word},
      {"tofu_pad", &t::pad},
      {"tofu_tlp_len", &t::tlp_len},
      {"rdma_crc_status", &r::crc_status},
      {"rdma_reissue", &r::reissue},
      {"rdma_payload_len", &r::payload_len},
  };
  std::string out = "G.computed = {\n";
  for (const auto& [name, f] : roles) {
    out += "  " + std::string(name) + " = {" + lua_str(f->filter) + ", " + num(f->width) + ", " +
           lua_str(kind_name(f->type));
    if (!f->names.empty()) out += ", names = " + names_of(f->names);
    out += "},\n";
  }
  return out + "}\n";
}

std::string profiles_text() {
  std::string out = "G.profiles = {\n";
  for (const auto* p : pack::shipped_profiles) {
    out += "  {name = " + lua_str(p->name()) + ", name_field = " + lua_str(p->name_field().filter) +
           ", types = {\n";
    for (const auto& t : p->types()) {
      out += "    {code = " + hex(t.code, 4) + ", name = " + lua_str(t.name) +
             ", control = " + num(t.control_bytes()) +
             ", data = " + (t.has_data ? "true" : "false") + ", title = " + lua_str(t.description) +
             ", fields = {\n";
      for (const auto& f : t.fields) out += "      " + placed_field(f) + ",\n";
      out += "    }},\n";
    }
    out += "  }},\n";
  }
  return out + "}\n";
}

std::string constants_text() {
  namespace e = wire::ethertype;
  std::vector<std::pair<std::string_view, std::uint64_t>> c{
      {"ethertype_ipv4", e::ipv4},
      {"ethertype_ipv6", e::ipv6},
      {"ethertype_vlan", e::vlan},
      {"ethertype_qinq", e::qinq},
      {"ethertype_qinq_old", e::qinq_old},
      {"ethertype_sue", e::sue},
      {"ethertype_shim", e::afh1_shim},
      {"shim_next_sue", wire::shim_next_sue},
      {"shim_next_failover", wire::shim_next_failover},
      {"failover_udp_port", wire::failover_udp_port},
      {"max_vlan_tags", wire::received_frame::max_vlan_tags},
      {"ip_proto_udp", wire::ip_proto_udp},
      {"ip_proto_ipv6_fragment", wire::ip_proto_ipv6_fragment},
      {"afh2_signature_mask", wire::afh2_signature_mask},
      {"afh2_signature", wire::afh2_signature},
      {"afh2_w_bit", wire::afh2_w_bit},
      {"rcrc_size", wire::rcrc_size},
      {"sue_max_payload", wire::sue_max_payload},
      {"sue_lite_max_payload", wire::sue_lite_max_payload},
      {"ethernet_min_frame", wire::ethernet_min_frame},
      {"fcs_size", wire::fcs_size},
      {"link_ethernet", dissect::link_ethernet},
      {"link_afh2", dissect::link_afh2},
      {"link_tofu", tofu::link_tofu},
      {"link_rdma", rdma::link_rdma},
      {"padding_type", pack::padding_type},
      {"rcrc_good", static_cast<std::uint64_t>(wire::rcrc_status::good)},
      {"rcrc_bad", static_cast<std::uint64_t>(wire::rcrc_status::bad)},
      {"rcrc_missing", static_cast<std::uint64_t>(wire::rcrc_status::missing)},
      {"rcrc_not_captured", static_cast<std::uint64_t>(wire::rcrc_status::not_captured)},
      {"checksum_bad", static_cast<std::uint64_t>(wire::checksum_status::bad)},
      {"checksum_good", static_cast<std::uint64_t>(wire::checksum_status::good)},
      {"checksum_unverified", static_cast<std::uint64_t>(wire::checksum_status::unverified)},
      {"checksum_not_present", static_cast<std::uint64_t>(wire::checksum_status::not_present)},
      {"tofu_record_size", tofu::record_header_size},
      {"tofu_rh_size", tofu::rh_size},
      {"tofu_word_size", tofu::word_size},
      {"tofu_dllp_size", tofu::dllp_size},
      {"tofu_other_control_size", tofu::other_control_size},
      {"tofu_fcs_size", tofu::fcs_size},
      {"tofu_preamble_size", tofu::preamble_size},
      {"tofu_datapath_bytes", tofu::datapath_bytes},
      {"tofu_max_lanes", tofu::max_lanes},
      {"tofu_max_slice_size", tofu::max_slice_size},
      {"tofu_x", tofu::geometry{}.x},
      {"tofu_y", tofu::geometry{}.y},
      {"tofu_z", tofu::geometry{}.z},
      {"rdma_header_size", rdma::header_size},
      {"rdma_footer_size", rdma::footer_size},
      {"rdma_max_payload", rdma::max_payload},
      {"rdma_control_payload_size", rdma::control_payload_size},
      {"rdma_write", static_cast<std::uint64_t>(rdma::packet_type::write)},
      {"rdma_inline_write", static_cast<std::uint64_t>(rdma::packet_type::inline_write)},
      {"rdma_ack", static_cast<std::uint64_t>(rdma::packet_type::ack)},
      {"rdma_nack", static_cast<std::uint64_t>(rdma::packet_type::nack)},
      {"rdma_control", static_cast<std::uint64_t>(rdma::packet_type::control)},
  };
  std::string out = "G.const = {\n";
  for (const auto& [name, v] : c) out += "  " + std::string(name) + " = " + num(v) + ",\n";
  out += "}\n";
  // Ethertypes that make a frame whose first octet has the SLAP signature ordinary Ethernet,
  // besides the SUE and shim Ethertypes of the preferences (wire::is_common_ethertype).
  out += "G.common_ethertypes = {";
  bool first = true;
  for (std::uint32_t t = 1; t <= 0xFFFF; ++t)
    if (wire::is_common_ethertype(static_cast<std::uint16_t>(t), 0, 0)) {
      out += std::string(first ? "" : ", ") + "[" + hex(t, 4) + "] = true";
      first = false;
    }
  out += "}\n";
  // Tofu: the ways a frame is split, by PAT (0: PAT reserved).
  out += "G.tofu_ways = {";
  for (unsigned pat = 0;
       pat < (1u << wire::info_of<tofu::routing_header, &tofu::routing_header::pat>().width); ++pat)
    out += std::string(pat ? ", " : "") + "[" + num(pat) +
           "] = " + num(tofu::ways_of(static_cast<std::uint8_t>(pat)));
  out += "}\n";
  return out;
}

// Expert infos of the errors the library reports: one per code and severity, grouped as the
// plugin groups them (wireshark/registry.cpp, group_of).
std::string experts_text() {
  const auto group_of = [](wire::errc code) -> std::string_view {
    switch (code) {
      case wire::errc::not_captured:
      case wire::errc::unsupported:
      case wire::errc::no_space:
        return "UNDECODED";
      case wire::errc::truncated:
      case wire::errc::bad_length:
      case wire::errc::value_too_big:
        return "MALFORMED";
      case wire::errc::bad_checksum:
        return "CHECKSUM";
      default:
        return "PROTOCOL";
    }
  };
  std::string out = "G.errors = {\n";
  for (int c = 1; c < 256; ++c) {
    const auto code = static_cast<wire::errc>(c);
    const std::string_view n = wire::to_string(code);
    if (n == "unknown") break;
    out += "  [" + num(static_cast<unsigned>(c)) + "] = {" + lua_str(n) + ", " +
           lua_str(group_of(code)) + "},\n";
  }
  out += "}\n";
  out += "G.severities = {";
  for (const auto s : {wire::severity::error, wire::severity::warning, wire::severity::note})
    out += std::string(s == wire::severity::error ? "" : ", ") + lua_str(wire::to_string(s));
  return out + "}\n";
}

std::string generated() {
  dissect::registered_fields registered;
  registered.collect_shipped();
  const auto& fields = registered.list();
  std::string out = "local G = {}\n\n";
  out += protocols_text(fields) + "\n";
  out += fields_text(fields) + "\n";
  out += tables_text() + "\n";
  out += names_text() + "\n";
  out += computed_text() + "\n";
  out += profiles_text() + "\n";
  out += constants_text() + "\n";
  out += experts_text();
  return out;
}

}  // namespace

std::string lua_dissector(std::string_view template_text) {
  std::string out =
      "-- Generated by scaleup_docgen --lua from wireshark/scaleup.lua.in and the library's field\n"
      "-- tables: do not edit. Regenerate with\n"
      "--   scaleup_docgen --update-lua wireshark/scaleup.lua.in wireshark/scaleup.lua\n";
  std::size_t markers = 0;
  std::string_view rest = template_text;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    if (line == lua_marker) {
      ++markers;
      out += generated();
    } else {
      out += line;
      if (eol != std::string_view::npos) out += '\n';
    }
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
  }
  if (markers != 1) {
    std::cerr << "scaleup_docgen: the Lua template must hold the line \"" << lua_marker
              << "\" once (found " << markers << ")\n";
    return {};
  }
  return out;
}

}  // namespace scaleup::docgen
