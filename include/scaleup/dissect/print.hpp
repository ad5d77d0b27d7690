// Text and JSON renderings of a dissection tree. Output goes to a sink callable taking
// std::string_view, so nothing here allocates; the caller decides where bytes go.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <string_view>

#include "scaleup/dissect/tree.hpp"

namespace scaleup::dissect {

namespace detail {

template <class Out>
void put_uint(Out& out, std::uint64_t v) {
  std::array<char, 24> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size(), v);
  out(std::string_view(b.data(), static_cast<std::size_t>(r.ptr - b.data())));
}

// Right-aligned in `width` columns.
template <class Out>
void put_uint_right(Out& out, std::uint64_t v, std::size_t width) {
  std::array<char, 24> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size(), v);
  const auto n = static_cast<std::size_t>(r.ptr - b.data());
  for (std::size_t i = n; i < width; ++i) out(" ");
  out(std::string_view(b.data(), n));
}

template <class Out>
void put_hex(Out& out, std::uint64_t v, unsigned digits) {
  std::array<char, 20> b{};
  static constexpr char hexd[] = "0123456789abcdef";
  b[0] = '0';
  b[1] = 'x';
  if (digits == 0) digits = 1;
  for (unsigned i = 0; i < digits && i < 16; ++i)
    b[2 + digits - 1 - i] = hexd[(v >> (4 * i)) & 0xF];
  out(std::string_view(b.data(), 2 + digits));
}

template <class Out>
void put_mac(Out& out, std::uint64_t v) {
  static constexpr char hexd[] = "0123456789abcdef";
  std::array<char, 17> b{};
  for (int i = 0; i < 6; ++i) {
    const auto byte = static_cast<unsigned>(v >> (8 * (5 - i))) & 0xFF;
    b[3 * i] = hexd[byte >> 4];
    b[3 * i + 1] = hexd[byte & 0xF];
    if (i < 5) b[3 * i + 2] = ':';
  }
  out(std::string_view(b.data(), b.size()));
}

template <class Out>
void put_ipv4(Out& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) {
    if (i) out(".");
    put_uint(out, (v >> (8 * (3 - i))) & 0xFF);
  }
}

// RFC 5952: lowercase, the longest run (two groups or more) of zero groups shown as "::".
template <class Out>
void put_ipv6(Out& out, const std::uint8_t* a) {
  std::array<unsigned, 8> g{};
  for (int i = 0; i < 8; ++i) g[i] = (unsigned{a[2 * i]} << 8) | a[2 * i + 1];
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) best = i, best_len = j - i;
    i = j == i ? i + 1 : j;
  }
  static constexpr char hexd[] = "0123456789abcdef";
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out("::");
      i += best_len - 1;
      continue;
    }
    if (i && i != best + best_len) out(":");
    std::array<char, 4> b{};
    int n = 0;
    bool lead = true;
    for (int s = 12; s >= 0; s -= 4) {
      const unsigned d = (g[i] >> s) & 0xF;
      if (lead && d == 0 && s) continue;
      lead = false;
      b[n++] = hexd[d];
    }
    out(std::string_view(b.data(), static_cast<std::size_t>(n)));
  }
}

template <class Out>
void put_json_string(Out& out, std::string_view s) {
  out("\"");
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out(s.substr(start, i - start));
    if (c == '"' || c == '\\') {
      const char esc[2] = {'\\', static_cast<char>(c)};
      out(std::string_view(esc, 2));
    } else {
      out("\\u00");
      static constexpr char hexd[] = "0123456789abcdef";
      const char h[2] = {hexd[c >> 4], hexd[c & 0xF]};
      out(std::string_view(h, 2));
    }
    start = i + 1;
  }
  out(s.substr(start));
  out("\"");
}

}  // namespace detail

// The value as a person reads it: numbers in decimal, hex kinds as 0x.., addresses in their
// usual notation, labels by name.
template <class Out>
void put_value(Out& out, const field_node& f) {
  using wire::kind;
  switch (f.info->type) {
    case kind::uint:
    case kind::flag:
      detail::put_uint(out, f.value);
      break;
    case kind::hex:
      detail::put_hex(out, f.value, (f.info->width + 3) / 4);
      break;
    case kind::mac:
      detail::put_mac(out, f.value);
      break;
    case kind::ipv4:
      detail::put_ipv4(out, f.value);
      break;
    case kind::ipv6:
      if (f.raw) detail::put_ipv6(out, f.raw);
      break;
    case kind::label:
      out(f.value_name());
      break;
  }
}

// JSON: numbers for every integer kind (hex included), strings for addresses and labels.
template <class Out>
void put_json_value(Out& out, const field_node& f) {
  using wire::kind;
  switch (f.info->type) {
    case kind::uint:
    case kind::flag:
    case kind::hex:
      detail::put_uint(out, f.value);
      break;
    default:
      out("\"");
      put_value(out, f);
      out("\"");
  }
}

inline bool shown_in_json(const field_node& f) {
  // Reserved fields appear only through a warning when they are not zero.
  return f.info->check != wire::rule::reserved;
}

template <class Out>
void put_json_error(Out& out, const error& e) {
  out("{\"layer\":");
  detail::put_json_string(out, e.layer);
  out(",\"offset\":");
  detail::put_uint(out, e.offset);
  out(",\"needed\":");
  detail::put_uint(out, e.needed);
  out(",\"available\":");
  detail::put_uint(out, e.available);
  out(",\"code\":");
  detail::put_json_string(out, wire::to_string(e.code));
  out(",\"what\":");
  detail::put_json_string(out, e.what);
  if (!e.field.empty()) {
    out(",\"field\":");
    detail::put_json_string(out, e.field);
    out(",\"value\":");
    detail::put_uint(out, e.value);
  }
  if (e.item) {
    out(",\"index\":");
    detail::put_uint(out, e.item);
  }
  out(",\"severity\":");
  out(e.level == wire::severity::error ? "\"error\"" : "\"warning\"");
  out("}");
}

namespace detail {

// The fields of the layers selected by `in_list` ("" = not in a list), as `"filter":value`
// members; a name seen more than once among them holds an array (two VLAN tags).
template <class Out, class Tree, class Pick>
void put_json_members(Out& out, const Tree& t, Pick&& pick, bool& first) {
  const auto all = t.field_list();
  // Only the span from the first picked field to the last can hold a repeat: one command's
  // fields are a few neighbours, not the whole tree (scanning the whole tree for each field of
  // each command made a frame of many commands quadratic in its fields).
  std::size_t lo = 0, hi = all.size();
  while (lo < hi && !pick(all[lo])) ++lo;
  while (hi > lo && !pick(all[hi - 1])) --hi;
  const auto fields = all.subspan(lo, hi - lo);
  // That span still holds every command's fields for the frame's own members (the R-CRC comes
  // after the commands), so the picked fields are indexed once and the repeat checks walk only
  // them; a layer with more than the index holds is walked through the span.
  std::array<std::uint16_t, 256> picked{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < fields.size() && n <= picked.size(); ++i)
    if (pick(fields[i])) {
      if (n < picked.size()) picked[n] = static_cast<std::uint16_t>(i);
      ++n;
    }
  const bool indexed = n <= picked.size();
  // Calls fn(j) for every picked field j, in order, while fn returns true.
  const auto each = [&](auto&& fn) {
    if (indexed) {
      for (std::size_t k = 0; k < n; ++k)
        if (!fn(std::size_t{picked[k]})) return;
    } else {
      for (std::size_t j = 0; j < fields.size(); ++j)
        if (pick(fields[j]) && !fn(j)) return;
    }
  };
  each([&](std::size_t i) {
    const auto& f = fields[i];
    if (!shown_in_json(f)) return true;
    bool seen_before = false, repeated = false;
    each([&](std::size_t j) {
      if (j == i || fields[j].info->filter != f.info->filter) return true;
      seen_before = j < i;
      repeated = true;
      return !seen_before;
    });
    if (seen_before) return true;
    if (!first) out(",");
    first = false;
    put_json_string(out, f.info->filter);
    out(":");
    if (!repeated) {
      put_json_value(out, f);
      return true;
    }
    out("[");
    bool first_value = true;
    each([&](std::size_t j) {
      if (j < i || fields[j].info->filter != f.info->filter) return true;
      if (!first_value) out(",");
      first_value = false;
      put_json_value(out, fields[j]);
      return true;
    });
    out("]");
    return true;
  });
}

}  // namespace detail

// One JSON object (no newline): "frame", "encap", "len", every field under its filter name,
// repeated layers (the commands) as a list of objects under their list name ("sue.cmds"),
// then "errors".
template <class Out, class Tree>
void put_json(Out& out, const Tree& t, std::uint64_t frame_number) {
  out("{\"frame\":");
  detail::put_uint(out, frame_number);
  out(",\"encap\":");
  detail::put_json_string(out, t.encap);
  out(",\"len\":");
  detail::put_uint(out, t.frame_length);
  bool first = false;
  detail::put_json_members(
      out, t, [&](const field_node& f) { return t.layers[f.layer].list.empty(); }, first);
  // Each list once, in order of its first layer; each of its layers one object.
  const auto layers = t.layer_list();
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const std::string_view list = layers[li].list;
    bool listed_before = list.empty();
    for (std::size_t k = 0; k < li && !listed_before; ++k) listed_before = layers[k].list == list;
    if (listed_before) continue;
    out(",");
    detail::put_json_string(out, list);
    out(":[");
    for (std::size_t k = li; k < layers.size(); ++k) {
      if (layers[k].list != list) continue;
      if (k != li) out(",");
      out("{");
      bool first_member = true;
      detail::put_json_members(
          out, t, [&](const field_node& f) { return f.layer == k; }, first_member);
      out("}");
    }
    out("]");
  }
  out(",\"errors\":[");
  bool first_error = true;
  for (const auto& e : t.error_list()) {
    if (!first_error) out(",");
    first_error = false;
    put_json_error(out, e);
  }
  out("]}");
}

template <class Out>
void put_error_text(Out& out, const error& e) {
  out(e.level == wire::severity::error ? "error: " : "warning: ");
  out(e.layer);
  if (e.item) {
    out(" #");
    detail::put_uint(out, e.item);
  }
  out(" at byte ");
  detail::put_uint(out, e.offset);
  out(": ");
  out(wire::to_string(e.code));
  out(": ");
  out(e.what);
  if (e.needed || e.available) {
    out(" (needed ");
    detail::put_uint(out, e.needed);
    out(", available ");
    detail::put_uint(out, e.available);
    out(")");
  }
  if (!e.field.empty()) {
    out(" [");
    out(e.field);
    out(" = ");
    detail::put_uint(out, e.value);
    out("]");
  }
}

// One line per frame: number, encapsulation, length, then what matters for the layer found.
template <class Out, class Tree>
void put_summary(Out& out, const Tree& t, std::uint64_t frame_number) {
  detail::put_uint_right(out, frame_number, 6);
  out("  ");
  out(t.encap);
  if (t.encap.size() < 15) out(std::string_view("               ", 15 - t.encap.size()));
  detail::put_uint_right(out, t.frame_length, 5);
  out(" B");
  const auto show = [&](std::string_view label, std::string_view filter) {
    if (const auto* f = t.find(filter)) {
      out(" ");
      out(label);
      out("=");
      if (!f->value_name().empty() && f->info->type != wire::kind::label) {
        out(f->value_name());
      } else {
        put_value(out, *f);
      }
    }
  };
  if (t.find("sue.rh.ver")) {
    out("  SUE");
    show("op", "sue.rh.op");
    show("xpuid", "sue.rh.xpuid");
    show("npsn", "sue.rh.npsn");
    if (const auto* op = t.find("sue.rh.op"); op && op->value <= 1) show("apsn", "sue.rh.apsn");
    show("vc", "sue.rh.vc");
    show("partition", "sue.rh.partition");
    show("payload", "sue.payload.len");
    show("rcrc", "sue.rcrc.status");
  } else if (t.find("tofu.rh.one")) {
    out(t.find("tofu.slice.lane") ? "  Tofu slice" : "  Tofu frame");
    show("lane", "tofu.slice.lane");
    show("LEN", "tofu.rh.len");
    show("pat", "tofu.rh.pat");
    show("stat", "tofu.rh.stat");
    show("seq", "tofu.rh.seq");
    show("fcs", "tofu.slice.fcs.status");
    show("tlp", "tofu.tlp.len");
  } else if (t.find("rdma.ftr.crc")) {
    out("  ExaJet");
    show("type", "rdma.pkt.type");
    show("type", "rdma.ack.type");
    show("type", "rdma.ctl.type");
    show("tid", "rdma.pkt.tid");
    show("tid", "rdma.ack.tid");
    show("seq", "rdma.pkt.seq");
    show("seq", "rdma.ack.seq");
    show("block", "rdma.pkt.block_seq");
    show("block", "rdma.ack.block_seq");
    show("payload", "rdma.payload.len");
    show("crc", "rdma.ftr.crc.status");
  } else if (t.find("sue_lite.len")) {
    out("  SUE Lite");
    show("src", "afh2c.src_xpu");
    show("dst", "afh2c.dst_xpu");
    show("tc", "afh2c.tc");
    show("payload", "sue_lite.len");
  } else {
    show("src", "ip.src");
    show("dst", "ip.dst");
    show("src", "ipv6.src");
    show("dst", "ipv6.dst");
  }
  std::size_t commands = 0;
  for (const auto& l : t.layer_list()) commands += l.list == "sue.cmds";
  if (commands) {
    out(" cmds=");
    detail::put_uint(out, commands);
  }
  std::size_t errors = 0;
  for (const auto& e : t.error_list()) errors += e.level == wire::severity::error;
  if (t.error_count) {
    out("  [");
    detail::put_uint(out, errors);
    out(errors == 1 ? " error" : " errors");
    if (t.error_count > errors) {
      out(", ");
      detail::put_uint(out, t.error_count - errors);
      out(t.error_count - errors == 1 ? " warning" : " warnings");
    }
    out("]");
  }
  // One line per command: its name, control and data lengths.
  std::size_t n = 0;
  for (std::size_t li = 0; li < t.layer_count; ++li) {
    if (t.layers[li].list != "sue.cmds") continue;
    out("\n          cmd ");
    detail::put_uint_right(out, ++n, 4);
    const auto member = [&](std::string_view filter) -> const field_node* {
      for (const auto& f : t.field_list())
        if (f.layer == li && f.info->filter == filter) return &f;
      return nullptr;
    };
    out("  ");
    if (const auto* f = member("sue.cmd.name")) {
      out(f->value_name());
      if (f->value_name().size() < 10)
        out(std::string_view("          ", 10 - f->value_name().size()));
    }
    if (const auto* f = member("sue.cmd.control_len")) {
      out(" ctrl=");
      detail::put_uint(out, f->value);
    }
    if (const auto* f = member("sue.cmd.data_len")) {
      out(" data=");
      detail::put_uint(out, f->value);
    }
  }
}

// The bits of a sub-byte field drawn like tshark: "..01 0110 = name: value".
template <class Out>
void put_bit_pattern(Out& out, const field_node& f) {
  const std::uint32_t first = f.bit / 8 * 8;
  const std::uint32_t last = (f.bit + f.info->width + 7) / 8 * 8;
  for (std::uint32_t b = first; b < last; ++b) {
    if (b != first && (b - first) % 4 == 0) out(" ");
    if (b < f.bit || b >= f.bit + f.info->width) {
      out(".");
    } else {
      const auto shift = f.bit + f.info->width - 1 - b;
      out(((f.value >> shift) & 1) ? "1" : "0");
    }
  }
  out(" = ");
}

// A field tree like `tshark -V`: a heading per layer, an indented line per field.
template <class Out, class Tree>
void put_verbose(Out& out, const Tree& t, std::uint64_t frame_number) {
  out("Frame ");
  detail::put_uint(out, frame_number);
  out(": ");
  detail::put_uint(out, t.frame_length);
  out(" bytes, encap ");
  out(t.encap);
  out("\n");
  const auto fields = t.field_list();
  for (std::size_t li = 0; li < t.layer_count; ++li) {
    const auto& l = t.layers[li];
    out(l.title);
    out(" (");
    out(l.name);
    out("), bytes ");
    detail::put_uint(out, l.offset);
    out("-");
    detail::put_uint(out, l.length ? l.offset + l.length - 1 : l.offset);
    out("\n");
    for (const auto& f : fields) {
      if (f.layer != li) continue;
      out("    ");
      const bool sub_byte = !f.generated && (f.bit % 8 || f.info->width % 8) && f.info->width <= 32;
      if (sub_byte) put_bit_pattern(out, f);
      if (f.generated) out("[");
      out(f.info->name);
      out(": ");
      put_value(out, f);
      if (f.info->type != wire::kind::label && !f.value_name().empty()) {
        out(" (");
        out(f.value_name());
        out(")");
      }
      if (f.generated) out("]");
      out("  {");
      out(f.info->filter);
      out("}\n");
    }
  }
  for (const auto& e : t.error_list()) {
    out("    [");
    put_error_text(out, e);
    out("]\n");
  }
}

}  // namespace scaleup::dissect
