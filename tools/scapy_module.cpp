// scaleup_docgen --scapy: a scapy module from the field tables of the frames `scaleup dump`
// reads. Every field (name, place, width, value names, default) comes from a table; every
// binding (Ethertypes, UDP ports and heuristic, SLAP signature, tags, link types) from the
// dissector's own constants and defaults, gathered in the one block below. What the tables
// cannot say (where a PDU ends, which class follows which) is the Python text of this file,
// written once for all the tables.
#include "scapy_module.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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

// The trailers' CRCs: computed when left None.
const field_info& rcrc_field = wire::info_of<wire::rcrc_trailer, &wire::rcrc_trailer::value>();
const field_info& tofu_fcs_field = wire::info_of<tofu::fcs_trailer, &tofu::fcs_trailer::value>();
const field_info& rdma_crc_field = wire::info_of<rdma::packet_footer, &rdma::packet_footer::crc>();

// In the registry's order. The SUE PDU is named for the protocol: its class is what a user
// stacks on UDP or an AFH.
std::vector<layer> layers() {
  const trailer rcrc{"SUERCRC", &dissect::generated::rcrc_status};
  const trailer tofu_fcs{"TofuFCS", &dissect::tofu_generated::fcs_status};
  const trailer footer{"ExaJetFooter", &dissect::rdma_generated::crc_status};
  return {
      {"SUE", "_PDU", {part_of<wire::reliability_header>()}, rcrc},
      // AFH Gen 1 takes Ethernet's place: the Ethertype comes with it.
      {"AFH1",
       "ScaleupPacket",
       {part_of<wire::afh1_addresses>(),
        part_of<wire::ethernet_header>(
            wire::info_of<wire::ethernet_header, &wire::ethernet_header::type>().filter)}},
      {"AFH1Shim", "ScaleupPacket", {part_of<wire::afh1_shim>()}},
      {"AFH2", "ScaleupPacket", {part_of<wire::afh2_normal>()}},
      {"AFH2C", "_AFH2C", {part_of<wire::afh2_compressed>()}},
      {"AFH2Type", "ScaleupPacket", {part_of<wire::afh2_ethertype>()}},
      {"SUERCRC", "ScaleupPacket", {part_of<wire::rcrc_trailer>()}},
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

// Frame tables scapy has classes of its own for.
constexpr std::array<std::array<std::string_view, 2>, 10> scapy_own{{
    {"sll", "CookedLinux"},
    {"sll2", "CookedLinuxV2"},
    {"null", "Loopback"},
    {"eth", "Ether"},
    {"vlan", "Dot1Q"},
    {"ieee8021ad", "Dot1AD"},
    {"ip", "IP"},
    {"ipv6", "IPv6"},
    {"ipv6.fraghdr", "IPv6ExtHdrFragment"},
    {"udp", "UDP"},
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

std::string hex(std::uint64_t v, int digits = 0) {
  static constexpr char d[] = "0123456789ABCDEF";
  std::string s;
  do {
    s.insert(s.begin(), d[v & 0xF]);
    v >>= 4;
  } while (v != 0 || static_cast<int>(s.size()) < digits);
  return "0x" + s;
}

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

// `open` items `close`, wrapped before 100 columns with a four-space indent.
std::string wrapped(std::string_view open, const std::vector<std::string>& items,
                    std::string_view close) {
  std::string out(open), line = "   ";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + item.size() > 99) {
      out += "\n" + line;
      line = "   ";
    }
    line += " " + item;
  }
  return out + "\n" + line + "\n" + std::string(close);
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

bool is_crc(const field_info& f) {
  for (const auto* c : {&rcrc_field, &tofu_fcs_field, &rdma_crc_field})
    if (c->filter == f.filter) return true;
  return false;
}

// The default of an address field, in the text form scapy takes.
std::string address_default(const field_info& f, const std::vector<std::uint8_t>& d) {
  static constexpr char digits[] = "0123456789abcdef";
  const std::size_t at = f.bit / 8;
  std::string out;
  if (f.type == wire::kind::ipv4) {
    for (std::size_t i = 0; i < 4; ++i) out += (i ? "." : "") + std::to_string(d[at + i]);
    return py_str(out);
  }
  // MAC: 6 bytes as xx:xx:..; IPv6: 8 groups of 2 bytes, uncompressed.
  const std::size_t group = f.type == wire::kind::mac ? 1 : 2;
  for (std::size_t i = 0; i < f.width / 8; ++i) {
    if (i && i % group == 0) out += ':';
    out += digits[d[at + i] >> 4];
    out += digits[d[at + i] & 0xF];
  }
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
  const bool computed = is_length(f) || is_crc(f);
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

// ---- the module's fixed text ---------------------------------------------------------------

constexpr std::string_view imports = R"py(
import struct
import zlib

from scapy.config import conf
from scapy.fields import (BitEnumField, BitField, ByteEnumField, ByteField, IntEnumField,
                          IntField, IP6Field, IPField, LongField, MACField, ShortEnumField,
                          ShortField, XBitField, XByteField, XIntField, XLongField, XShortField)
from scapy.layers.inet import UDP
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
from scapy.packet import NoPayload, Packet, Raw, bind_bottom_up, bind_layers, bind_top_down
)py";

constexpr std::string_view runtime = R"py(

def _crc32(data):
    """CRC-32/ISO-HDLC: the R-CRC, the Tofu slice FCS and the ExaJet CRC."""
    return zlib.crc32(bytes(data)) & 0xFFFFFFFF


def _be16(data, at):
    return (data[at] << 8) | data[at + 1]


def _get_bits(data, bit, width):
    """`width` bits from bit `bit` (0: the first byte's most significant bit)."""
    first, last = bit // 8, (bit + width - 1) // 8
    word = int.from_bytes(bytes(data[first:last + 1]), "big")
    return (word >> ((last + 1) * 8 - bit - width)) & ((1 << width) - 1)


def _put_bits(data, bit, width, value):
    """data with `width` bits from bit `bit` set to value."""
    first, last = bit // 8, (bit + width - 1) // 8
    shift = (last + 1) * 8 - bit - width
    mask = ((1 << width) - 1) << shift
    word = int.from_bytes(data[first:last + 1], "big")
    word = (word & ~mask) | ((value << shift) & mask)
    return data[:first] + word.to_bytes(last + 1 - first, "big") + data[last + 1:]


class ScaleupPacket(Packet):
    """A field table of the library as a scapy layer.

    A header whose PDU ends in a trailer (scaleup_trailer) is read with the trailer as the last
    layer: the payload between them is the header's payload. When built, a missing trailer is
    added with its defaults, a trailer CRC left None is computed over header and payload, and a
    length of scaleup_lengths left None is set to the payload's size.
    """

    scaleup_layer = ""      # the table's name: the dissector's layer
    scaleup_fields = {}     # field -> display-filter name, the JSON key of `scaleup dump --json`
    scaleup_reserved = ()   # reserved fields: dump shows them only in a warning when not zero
    scaleup_fixed = {}      # field -> the value the table requires (dump reports others)
    scaleup_lengths = {}    # field -> (bit, width) of a payload length, computed when None
    scaleup_bounds = None   # the length of scaleup_lengths that ends the payload when read
    scaleup_trailer = None  # the class of the trailer that ends the PDU
    scaleup_crc = None      # a trailer's CRC: (field, byte offset)
    scaleup_status = None   # the field dump computes from the trailer's CRC
    scaleup_status_names = ()
    scaleup_payload_sizes = {}  # payload size -> the class of a payload of that size

    def post_build(self, pkt, pay):
        cls = self.scaleup_trailer
        trailer = self.payload.getlayer(cls) if cls else None
        end = len(pay)
        if trailer is not None:
            end -= len(trailer.do_build())
        elif cls is not None:
            pay += cls().do_build()
        for name, (bit, width) in self.scaleup_lengths.items():
            if self.getfieldval(name) is None:
                pkt = _put_bits(pkt, bit, width, end)
        if cls is not None and (trailer is None or trailer.getfieldval(cls.scaleup_crc[0]) is None):
            at = end + cls.scaleup_crc[1]
            pay = pay[:at] + struct.pack(">I", _crc32(pkt + pay[:end])) + pay[at + 4:]
        return pkt + pay

    def extract_padding(self, s):
        if self.scaleup_bounds is None:
            return s, None
        n = self.getfieldval(self.scaleup_bounds)
        return s[:n], s[n:]

    def guess_payload_class(self, payload):
        return self.scaleup_payload_sizes.get(len(payload)) or \
            super().guess_payload_class(payload)

    def do_dissect_payload(self, s):
        cls = self.scaleup_trailer
        size = len(cls()) if cls else 0
        if cls is None or len(s) < size:
            return super().do_dissect_payload(s)
        super().do_dissect_payload(s[:len(s) - size])
        self.add_payload(cls(s[len(s) - size:], _internal=1, _underlayer=self))

    def scaleup_check(self):
        """What dump computes into scaleup_status: "good" when the trailer's CRC matches header
        and payload, "bad" when not, "missing" (SUE) or None (dump has no status then) when
        there is no trailer. Reads the layers as they are: call it on a dissected packet (or
        one built and read back)."""
        cls = self.scaleup_trailer
        if cls is None:
            return None
        trailer = self.payload.getlayer(cls)
        if trailer is None:
            names = self.scaleup_status_names
            return names[2] if len(names) > 2 else None
        body, tail = self.do_build(), trailer.do_build()
        data = body[:len(body) - len(tail)]
        at = cls.scaleup_crc[1]
        good = tail[at:at + 4] == struct.pack(">I", _crc32(data))
        return self.scaleup_status_names[0 if good else 1]


def _offset(layer):
    """Bytes of the frame before `layer`: the headers below it, as read."""
    n, under = 0, layer.underlayer
    while under is not None:
        n += len(under.raw_packet_cache or b"")
        under = under.underlayer
    return n


def pdu_end_l2(pdu, frame_len):
    """Where a SUE PDU that runs to the end of a Layer 2 frame ends, its R-CRC included
    (wire::pdu_bounds_l2): the frame's end, except in a frame of the Ethernet minimum, whose
    sender may have padded with zeros after the R-CRC; the R-CRC is then at the first place from
    the last non-zero bytes on where it matches. frame_len: the whole frame's length."""
    if frame_len > ETHERNET_MIN_FRAME or len(pdu) < RH_SIZE + RCRC_SIZE:
        return len(pdu)
    last = len(pdu)
    while last > 0 and pdu[last - 1] == 0:
        last -= 1
    for end in range(max(last - RCRC_SIZE, RH_SIZE), len(pdu) - RCRC_SIZE + 1):
        if bytes(pdu[end:end + RCRC_SIZE]) == struct.pack(">I", _crc32(pdu[:end])):
            return end + RCRC_SIZE
    return len(pdu)


def plausible_pdu(payload):
    """Whether a UDP payload on a port that is not SUE's passes for a SUE PDU, as dump's
    heuristic decides: an RH whose version and reserved bits are zero, and a good R-CRC."""
    if len(payload) < RH_SIZE + RCRC_SIZE:
        return False
    if any(_get_bits(payload, bit, width) for bit, width in PLAUSIBLE_ZERO):
        return False
    return bytes(payload[-RCRC_SIZE:]) == struct.pack(">I", _crc32(payload[:-RCRC_SIZE]))


class _PDU(ScaleupPacket):
    """A SUE PDU: RH, payload, R-CRC. Over UDP and the AFH Gen 1 shim the carrier says where it
    ends (the R-CRC is the last 4 bytes; a PDU of an RH only has none); over Layer 2 it runs to
    the end of the frame, less the padding of a minimum-size frame (pdu_end_l2)."""

    def extract_padding(self, s):
        under = self.underlayer
        if under is None or isinstance(under, (UDP, AFH1Shim)):
            return s, None
        rh = self.raw_packet_cache or b""
        end = pdu_end_l2(rh + s, _offset(self) + len(rh) + len(s)) - len(rh)
        return s[:end], s[end:]


class _AFH2C(ScaleupPacket):
    """A compressed AFH Gen 2 header: SUE's Ethertype and a PDU follow, or SUE Lite's packed
    payload straight away."""

    def guess_payload_class(self, payload):
        if len(payload) >= 2 and _be16(payload, 0) == SUE_ETHERTYPE:
            return AFH2Type
        return SUELite


class SUELite(Raw):
    """The packed payload of a SUE Lite frame (R2 3.4, Fig. 10): commands, no RH, no R-CRC."""

    name = "SUE Lite payload"
    scaleup_layer = LITE_LAYER
    scaleup_fields = {}
)py";

constexpr std::string_view dispatch = R"py(

def ethernet_class(frame):
    """The class a frame on an Ethernet link is read with, as dump decides: AFH Gen 2 by the
    SLAP signature of the first octet (compressed unless the bytes where an Ethertype would be
    hold a common one and SUE's does not follow the header; normal only when SUE's Ethertype
    follows it), AFH Gen 1 when SUE's or the shim's Ethertype follows the tags, else Ether."""
    n = len(frame)
    if n and (frame[0] & AFH2_SIGNATURE_MASK) == AFH2_SIGNATURE:
        if frame[0] & AFH2_W_BIT:
            sue_follows = n >= 8 and _be16(frame, 6) == SUE_ETHERTYPE
            if sue_follows or not (n >= 14 and _be16(frame, 12) in COMMON_ETHERTYPES):
                return AFH2C
        elif n >= 14 and _be16(frame, 12) == SUE_ETHERTYPE:
            return AFH2
    at, tags = 12, 0
    while n >= at + 2:
        kind = _be16(frame, at)
        if kind in (SUE_ETHERTYPE, SHIM_ETHERTYPE):
            return AFH1
        if kind not in TAG_ETHERTYPES or tags == MAX_TAGS:
            break
        at, tags = at + 4, tags + 1
    return Ether


class ScaleupEthernet(Packet):
    """A record of an Ethernet link (conf.l2types[1]): read with ethernet_class's choice."""

    name = "Ethernet link (scaleup)"

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        return ethernet_class(_pkt) if _pkt else Ether


class ScaleupAFH2Link(Packet):
    """A record of link type 147: a bare AFH Gen 2 frame, its format said by W."""

    name = "AFH Gen 2 link (scaleup)"

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        if not _pkt or (_pkt[0] & AFH2_SIGNATURE_MASK) != AFH2_SIGNATURE:
            return Raw
        return AFH2C if _pkt[0] & AFH2_W_BIT else AFH2


class ExaJet(Packet):
    """A record of link type 149: an ExaJet packet, read with the header class of its type."""

    name = "ExaJet packet"

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        if not _pkt:
            return ExaJetData
        if len(_pkt) < EXAJET_MIN_SIZE:
            return Raw
        return EXAJET_TYPES.get(_get_bits(_pkt, *EXAJET_TYPE_BITS), Raw)


_dot1q_guess = getattr(Dot1Q.guess_payload_class, "scaleup_original",
                       Dot1Q.guess_payload_class)


def _dot1q_guess_payload_class(self, payload):
    """SUE's or the shim's Ethertype after the tags of an AFH Gen 1 frame, MAX_TAGS at most
    (ethernet_class reads a frame of more tags as Ether, as dump does)."""
    under, tags = self.underlayer, 1
    while isinstance(under, Dot1Q):
        under, tags = under.underlayer, tags + 1
    if isinstance(under, AFH1) and tags <= MAX_TAGS:
        cls = {SUE_ETHERTYPE: SUE, SHIM_ETHERTYPE: AFH1Shim}.get(self.type)
        if cls is not None:
            return cls
    return _dot1q_guess(self, payload)


_dot1q_guess_payload_class.scaleup_original = _dot1q_guess
Dot1Q.guess_payload_class = _dot1q_guess_payload_class

_udp_guess = getattr(UDP.guess_payload_class, "scaleup_original", UDP.guess_payload_class)


def _udp_guess_payload_class(self, payload):
    """SUE on SUE_UDP_PORTS (source or destination), then on any port when plausible_pdu."""
    if self.dport in SUE_UDP_PORTS or self.sport in SUE_UDP_PORTS or \
            (SUE_UDP_HEURISTIC and plausible_pdu(payload)):
        return SUE
    return _udp_guess(self, payload)


_udp_guess_payload_class.scaleup_original = _udp_guess
UDP.guess_payload_class = _udp_guess_payload_class


def dump_fields(pkt, other=None):
    """The fields of pkt's scaleup layers under the names `scaleup dump --json` gives them:
    {filter name: value}, a name met in two layers holding a list. Reserved fields are left out,
    as dump leaves them out. other(layer), when given, names more fields of a layer (of scapy's
    own layers, say): {filter name: value}, merged in layer order."""
    out = {}
    layer = pkt
    while not isinstance(layer, NoPayload):
        named = {key: layer.getfieldval(name)
                 for name, key in getattr(layer, "scaleup_fields", {}).items()
                 if name not in layer.scaleup_reserved}
        named.update(other(layer) if other else {})
        for key, value in named.items():
            if key not in out:
                out[key] = value
            elif isinstance(out[key], list):
                out[key].append(value)
            else:
                out[key] = [out[key], value]
        layer = layer.payload
    return out
)py";

// ---- the module --------------------------------------------------------------------------

std::string docstring(const std::vector<layer>& ls) {
  const auto& o = dump_defaults;
  std::string ports;
  for (std::size_t i = 0; i < o.udp_port_count; ++i)
    ports += (i ? ", " : "") + std::to_string(o.udp_ports[i]);
  std::string tags;
  for (const auto t : tag_ethertypes) tags += (tags.empty() ? "" : ", ") + hex(t, 4);
  std::string out =
      R"py("""scapy layers for the scaleup wire formats, generated from the library's field tables.

Import the module and scapy reads captures as `scaleup dump` does; build frames with the
classes below and dump reads them back.

    import sys; sys.path.insert(0, "python")   # this directory of the scaleup tree
    from scapy.all import IP, UDP, Ether, rdpcap, wrpcap
    from scaleup_scapy import SUE, AFH2C, AFH2Type, dump_fields
    wrpcap("x.pcap", [Ether() / IP() / UDP() / SUE(op=0, xpuid=5, npsn=7, apsn=6),
                      AFH2C(src_xpu=1, dst_xpu=2) / AFH2Type() / SUE(xpuid=1)])
    for p in rdpcap("x.pcap"):
        print(dump_fields(p), p[SUE].scaleup_check())   # {"sue.rh.xpuid": 5, ...} good

How frames are recognised (the dissector's rules, dissect/engine.hpp):
)py";
  out += "  SUE over UDP   the ports in SUE_UDP_PORTS (" +
         (ports.empty() ? std::string("none by default") : ports) +
         "; dump --udp-port names them),\n"
         "                 source or destination;\n"
         "                 any other port when the payload passes for a PDU"
         " (SUE_UDP_HEURISTIC,\n"
         "                 plausible_pdu: version 0, reserved bits zero, R-CRC good)\n";
  out += "  AFH Gen 1      Ethertype " + hex(o.sue_ethertype, 4) + " (a PDU) or " +
         hex(o.shim_ethertype, 4) + " (the shim) after up to " + std::to_string(max_tags) +
         " tags (" + tags +
         ");\n"
         "                 AFH1 replaces Ether; the shim's next header " +
         std::to_string(o.shim_next_sue) + " is SUE\n";
  out += "  AFH Gen 2      on an Ethernet link, by the SLAP signature of the first octet (mask " +
         hex(wire::afh2_signature_mask, 2) + ",\n                 value " +
         hex(wire::afh2_signature, 2) + "; W " + hex(wire::afh2_w_bit, 2) +
         " = compressed), see ethernet_class; bare on link type " + std::to_string(link_afh2) +
         "\n";
  out += "  SUE Lite       a compressed AFH Gen 2 header not followed by SUE's Ethertype\n";
  out += "  link types     " + std::to_string(link_ethernet) + " ScaleupEthernet, " +
         std::to_string(link_afh2) + " ScaleupAFH2Link, " + std::to_string(link_tofu) +
         " TofuSlice, " + std::to_string(link_rdma) + " ExaJet (conf.l2types)\n";
  out += "                 " + std::to_string(wire::link_null) + " and " +
         std::to_string(wire::link_loop) + " Loopback, " + std::to_string(wire::link_linux_sll) +
         " CookedLinux, " + std::to_string(wire::link_linux_sll2) +
         " CookedLinuxV2: scapy's own classes\n";
  out += R"py(
Classes, one per field table (scaleup_layer: the table's name, the dissector's layer):
)py";
  for (const auto& l : ls) {
    std::string c = "  " + std::string(l.cls);
    c.resize(24, ' ');
    std::string t(l.parts.front().table.name);
    t.resize(18, ' ');
    out += c + t + one_line(l.parts.front().table.title) + "\n";
  }
  out += R"py(
Field names. scaleup_fields maps each field of a class to its display-filter name, which is
the JSON key of `scaleup dump --json` and the Wireshark field. A field is named after its
filter name: the components it shares with its table's name are dropped (at least the first),
the rest joined by "_", or the last component kept when nothing remains. So sue.rh.xpuid ->
SUE.xpuid, tofu.rh.dabc1.a -> TofuRH.dabc1_a, sue.rcrc -> SUERCRC.rcrc, afh2.w -> AFH2C.w,
rdma.ctl.value -> ExaJetControlPayload.value. AFH1 also holds the Ethertype of the Ethernet
header it replaces (eth.type -> AFH1.type). FILTERS maps every filter name to the (class,
field) pairs that hold it; dump_fields(pkt) gives a packet's values under those names.

Values are the field's number, as dump --json writes integers. Reserved fields are scapy
fields but not JSON keys (dump reports them only when they are not zero). Fields dump computes
(COMPUTED: sue.rcrc.status, sue.payload.len, ...) are no scapy fields; scaleup_check() gives
the CRC status a trailer's header class computes, under the names dump uses.

Trailers. SUE, TofuRH and the ExaJet headers open a PDU that a trailer (SUERCRC, TofuFCS,
ExaJetFooter) closes, with a CRC-32/ISO-HDLC over header and payload, big-endian. Read, the
trailer is the last layer; built, a trailer left out is added, a CRC left None is computed,
and AFH1Shim.length and ExaJetData.len left None are the payload's size. A SUE PDU of an RH
only (captures of peers without R-CRC) reads without SUERCRC and gains one when rebuilt.
Frames must not end in an Ethernet FCS (dump detects one; this module does not).
"""
)py";
  return out;
}

std::string constants() {
  const auto& o = dump_defaults;
  std::string out = "\n# ---- bindings: how `scaleup dump` recognises frames ----\n\n";
  out += "SUE_ETHERTYPE = " + hex(o.sue_ethertype, 4) + "\n";
  out += "SHIM_ETHERTYPE = " + hex(o.shim_ethertype, 4) + "\n";
  out += "SHIM_NEXT_SUE = " + std::to_string(o.shim_next_sue) + "\n";
  std::string ports;
  for (std::size_t i = 0; i < o.udp_port_count; ++i)
    ports += (i ? ", " : "") + std::to_string(o.udp_ports[i]);
  out += "SUE_UDP_PORTS = " + (ports.empty() ? std::string("set()") : "{" + ports + "}") +
         "  # add a port as dump --udp-port does\n";
  out += std::string("SUE_UDP_HEURISTIC = ") + (o.heuristics ? "True" : "False") +
         "  # False: as dump --no-heuristics\n";
  std::string tags;
  for (const auto t : tag_ethertypes) tags += hex(t, 4) + ", ";
  out += "TAG_ETHERTYPES = (" + tags.substr(0, tags.size() - 2) + ")\n";
  out += "MAX_TAGS = " + std::to_string(max_tags) + "\n";
  // Every Ethertype the engine takes for ordinary Ethernet after a SLAP-looking first octet.
  std::vector<std::string> common;
  for (std::uint32_t t = 0; t <= 0xFFFF; ++t)
    if (wire::is_common_ethertype(static_cast<std::uint16_t>(t), o.sue_ethertype, o.shim_ethertype))
      common.push_back(hex(t, 4));
  out += wrapped("COMMON_ETHERTYPES = frozenset({", common, "})\n");
  out += "AFH2_SIGNATURE_MASK = " + hex(wire::afh2_signature_mask, 2) + "\n";
  out += "AFH2_SIGNATURE = " + hex(wire::afh2_signature, 2) + "\n";
  out += "AFH2_W_BIT = " + hex(wire::afh2_w_bit, 2) + "\n";
  out += "LINK_ETHERNET = " + std::to_string(link_ethernet) + "\n";
  out += "LINK_AFH2 = " + std::to_string(link_afh2) + "\n";
  out += "LINK_TOFU = " + std::to_string(link_tofu) + "\n";
  out += "LINK_RDMA = " + std::to_string(link_rdma) + "\n";
  out += "LITE_LAYER = " + py_str(lite_layer) + "\n";
  out += "ETHERNET_MIN_FRAME = " + std::to_string(wire::ethernet_min_frame) + "\n";
  out += "RH_SIZE = " + std::to_string(wire::layout<wire::reliability_header>::size) + "\n";
  out += "RCRC_SIZE = " + std::to_string(wire::rcrc_size) + "\n";
  // The RH bits the heuristic wants zero: the version and every reserved field.
  std::string zero;
  for (const auto& f : wire::field_infos<wire::reliability_header>)
    if (f.filter == heuristic_version || f.check == wire::rule::reserved)
      zero += "(" + std::to_string(f.bit) + ", " + std::to_string(f.width) + "), ";
  out += "PLAUSIBLE_ZERO = (" + zero.substr(0, zero.size() - 2) + ")  # (bit, width) in the RH\n";
  out += "EXAJET_MIN_SIZE = " + std::to_string(rdma::header_size + rdma::footer_size) + "\n";
  out += "EXAJET_TYPE_BITS = (" + std::to_string(exajet_type_field.bit) + ", " +
         std::to_string(exajet_type_field.width) + ")  # (bit, width) of every header's type\n";
  return out;
}

std::string bindings(const std::vector<layer>& ls) {
  const std::string sue = "SUE_ETHERTYPE", shim = "SHIM_ETHERTYPE";
  std::string out = "\n\n# ---- which class follows which ----\n\n";
  for (const auto& l : ls)
    if (l.closed_by)
      out += std::string(l.cls) + ".scaleup_trailer = " + std::string(l.closed_by->cls) + "\n";
  out += "ExaJetControl.scaleup_payload_sizes = {" + std::to_string(rdma::control_payload_size) +
         ": ExaJetControlPayload}\n";
  out += "EXAJET_TYPES = {\n";
  for (const auto& t : exajet_types)
    out +=
        "    " + std::to_string(static_cast<unsigned>(t.type)) + ": " + std::string(t.cls) + ",\n";
  out += "}\n\n";
  // Read only in an AFH Gen 1 frame (after the tags: _dot1q_guess_payload_class), as
  // ethernet_class picks AFH1 for every frame dump takes for one; built on Ether too. (Dot1Q
  // reads with Ether's bindings as well as its own.)
  for (const std::string_view below : {"Ether", "AFH1", "Dot1Q", "Dot1AD"}) {
    const std::string bind = below == "AFH1" ? "bind_layers(" : "bind_top_down(";
    out += bind + std::string(below) + ", SUE, type=" + sue + ")\n";
    out += bind + std::string(below) + ", AFH1Shim, type=" + shim + ")\n";
  }
  out += "bind_layers(AFH1, Dot1Q, type=" + hex(tag_ethertypes[0], 4) + ")\n";
  out += "bind_layers(AFH1, Dot1AD, type=" + hex(tag_ethertypes[1], 4) + ")\n";
  // The service tag's Ethertype before 802.1ad's, which scapy does not bind: read as a VLAN tag,
  // as dump and tshark read it (bottom up only: Ether() / Dot1Q() still builds 0x8100).
  for (const std::string_view below : {"Ether", "AFH1", "Dot1Q", "Dot1AD"})
    out += "bind_bottom_up(" + std::string(below) + ", Dot1Q, type=" + hex(tag_ethertypes[2], 4) +
           ")\n";
  out += "bind_layers(AFH1Shim, SUE, next_header=SHIM_NEXT_SUE)\n";
  out += "bind_layers(AFH2, AFH2Type)\n";
  out += "bind_layers(AFH2Type, SUE, type=" + sue + ")\n";
  out += "bind_layers(TofuSlice, TofuRH)\n";
  // Built on UDP, a PDU goes from and to the port the library's emitters (and `scaleup gen`) write.
  const std::string port = std::to_string(wire::emit_udp_port);
  out += "bind_top_down(UDP, SUE, sport=" + port + ", dport=" + port + ")\n";
  out += "\nconf.l2types.register_num2layer(LINK_ETHERNET, ScaleupEthernet)\n";
  out += "conf.l2types.register_num2layer(LINK_AFH2, ScaleupAFH2Link)\n";
  out += "conf.l2types.register_num2layer(LINK_TOFU, TofuSlice)\n";
  out += "conf.l2types.register_num2layer(LINK_RDMA, ExaJet)\n";
  for (const std::string_view c : {"AFH1", "AFH2", "AFH2C"})
    out += "conf.l2types.register_layer2num(LINK_ETHERNET, " + std::string(c) + ")\n";
  out += "conf.l2types.register_layer2num(LINK_TOFU, TofuSlice)\n";
  for (const std::string_view c : {"ExaJetData", "ExaJetAck", "ExaJetControl"})
    out += "conf.l2types.register_layer2num(LINK_RDMA, " + std::string(c) + ")\n";

  out += "\n# ---- names ----\n\n";
  out += "FILTERS = {}  # display-filter name -> ((class, field), ...)\n";
  std::vector<std::string> classes;
  for (const auto& l : ls) classes.emplace_back(l.cls);
  out += wrapped("for _cls in (", classes, "):\n");
  out += "    for _field, _key in _cls.scaleup_fields.items():\n";
  out += "        FILTERS[_key] = FILTERS.get(_key, ()) + ((_cls, _field),)\n";
  out += "\n# Fields dump computes rather than reads: not scapy fields.\n";
  out += "COMPUTED = frozenset({\n";
  std::set<std::string_view> computed;
  for (const auto* f : dissect::computed) computed.insert(f->filter);
  for (const auto c : computed) out += "    " + py_str(c) + ",\n";
  out += "})\n";
  return out;
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

std::string scapy_module() {
  const auto ls = layers();
  if (!complete(ls)) return {};
  std::string out =
      "# Generated by scaleup_docgen --scapy from the library's field tables: do not edit.\n"
      "# Regenerate with: scaleup_docgen --update-scapy python/scaleup_scapy.py\n";
  out += docstring(ls);
  out += imports;
  out += constants();
  out += runtime;
  for (const auto& l : ls) out += "\n\n" + class_text(l);
  out += dispatch;
  out += bindings(ls);
  return out;
}

}  // namespace scaleup::docgen
