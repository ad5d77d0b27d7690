// Text and JSON renderings of a dissection tree. Output goes to a sink callable taking
// std::string_view, so nothing here allocates; the caller decides where bytes go. A frame's
// pieces are gathered on the stack first (detail::chunked), so the sink sees few, large writes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

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
  out("\"");
  out(wire::to_string(e.level));
  out("\"");
  out("}");
}

namespace detail {

// The fields of the layers selected by `pick`, as `"filter":value` members; a name seen more
// than once among them holds an array (two VLAN tags). put_json's general path, for a layer with
// more fields than put_json_range indexes; the same members as put_json_picked writes.
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

namespace detail {

// Collects a frame's output in a local buffer: the many short pieces of a JSON object become
// copies, and the sink sees a few large writes (a frame of random commands is ~1.6 KB of JSON
// in hundreds of pieces).
template <class Out>
class chunked {
 public:
  static constexpr std::size_t capacity = 4096;

  // One byte stored, not 4 KB cleared: GCC 12 (-O1, sanitizers) otherwise warns that flush()
  // may pass the sink bytes never written, not seeing that n_ counts the written ones.
  explicit chunked(Out& out) noexcept : out_(out) { buf_[0] = '\0'; }
  chunked(const chunked&) = delete;
  chunked& operator=(const chunked&) = delete;
  ~chunked() { flush(); }

  void operator()(std::string_view s) {
    if (s.size() > capacity - n_) {
      flush();
      if (s.size() > capacity) {
        out_(s);
        return;
      }
    }
    std::memcpy(buf_.data() + n_, s.data(), s.size());
    n_ += s.size();
  }

  void put(char c) {
    if (n_ == capacity) flush();
    buf_[n_++] = c;
  }

  void number(std::uint64_t v) {
    if (v < 10) return put(static_cast<char>('0' + v));  // flags and small counts: most fields
    char* const p = room(20);
    commit(std::to_chars(p, p + 20, v).ptr);
  }

  // `s` in quotes; a string that needs escapes goes the general way.
  void quoted(std::string_view s) {
    if (s.size() + 2 <= capacity) {
      char* const p = room(s.size() + 2);
      *p = '"';
      if (copy_plain(p + 1, s)) {
        p[s.size() + 1] = '"';
        return commit(p + s.size() + 2);
      }
    }
    put_json_string(*this, s);
  }

  // `,"s":` (no comma when first): the name of a member.
  void key(std::string_view s, bool first) {
    if (s.size() + 4 <= capacity) {
      char* p = room(s.size() + 4);
      if (!first) *p++ = ',';
      *p++ = '"';
      if (copy_plain(p, s)) {
        p += s.size();
        p[0] = '"';
        p[1] = ':';
        return commit(p + 2);
      }
    }
    if (!first) put(',');
    put_json_string(*this, s);
    put(':');
  }

  void flush() {
    if (n_) out_(std::string_view(buf_.data(), n_));
    n_ = 0;
  }

 private:
  char* room(std::size_t k) {
    if (k > capacity - n_) flush();
    return buf_.data() + n_;
  }
  void commit(char* end) { n_ = static_cast<std::size_t>(end - buf_.data()); }

  // Copies `s` to `p`, or returns false when it needs an escape (a control character, '"' or
  // '\\'). Eight bytes at a time: the names are mostly longer than that, and checking them a
  // byte at a time cost more than the rest of a member.
  static bool copy_plain(char* p, std::string_view s) noexcept {
    const char* const q = s.data();
    const std::size_t n = s.size();
    if (n < 8) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(q[i]);
        if (c < 0x20 || c == '"' || c == '\\') return false;
        p[i] = q[i];
      }
      return true;
    }
    std::uint64_t w = 0;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, q + i, 8);
      if (needs_escape(w)) return false;
      std::memcpy(p + i, &w, 8);
    }
    std::memcpy(&w, q + n - 8, 8);  // the last eight, overlapping the words before
    if (needs_escape(w)) return false;
    std::memcpy(p + n - 8, &w, 8);
    return true;
  }

  // Whether any of the eight bytes is below 0x20, '"' or '\\' (exact, in any byte order).
  static constexpr bool needs_escape(std::uint64_t x) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101u, highs = ones * 0x80;
    const auto below = [&](std::uint64_t v, std::uint64_t c) {
      return (v - ones * c) & ~v & highs;
    };
    return (below(x, 0x20) | below(x ^ (ones * '"'), 1) | below(x ^ (ones * '\\'), 1)) != 0;
  }

  Out& out_;
  std::size_t n_ = 0;
  std::array<char, capacity> buf_;
};

template <class Out>
void put_json_value(chunked<Out>& w, const field_node& f) {
  using wire::kind;
  switch (f.info->type) {
    case kind::uint:
    case kind::flag:
    case kind::hex:
      w.number(f.value);
      break;
    default:
      w.put('"');
      put_value(w, f);
      w.put('"');
  }
}

// Tells names apart without comparing them: equal names have equal keys (unequal keys, unequal
// names), so the repeat checks compare whole names only on a key match.
inline std::uint64_t name_key(std::string_view s) noexcept {
  std::uint64_t a = 0, b = 0;
  if (s.size() >= 8) {
    std::memcpy(&a, s.data(), 8);
    std::memcpy(&b, s.data() + s.size() - 8, 8);
  } else {
    for (const char c : s) a = a << 8 | static_cast<unsigned char>(c);
  }
  return (a ^ std::rotl(b, 29) ^ s.size()) * 0x9E3779B97F4A7C15u;
}

// The fields at `picked` (indices into `all`, in order) as `"filter":value` members; a name
// seen more than once among them holds an array (two VLAN tags). A name's first field decides
// whether it is shown; every field of the name gives a value.
template <class Out>
void put_json_picked(chunked<Out>& w, std::span<const field_node> all,
                     std::span<const std::uint32_t> picked, bool& first) {
  constexpr std::size_t most = 256;
  std::array<std::uint64_t, most> keys;
  std::array<std::uint16_t, most> first_of;  // the position of the name's first field
  std::array<bool, most> repeated;
  // The names so far by the top eight bits of their keys: a name whose bit is clear is new, so
  // most fields are not compared with the others at all.
  std::array<std::uint64_t, 4> seen{};
  const std::size_t n = picked.size();
  for (std::size_t k = 0; k < n; ++k) {
    const field_info* const info = all[picked[k]].info;
    keys[k] = name_key(info->filter);
    first_of[k] = static_cast<std::uint16_t>(k);
    repeated[k] = false;
    const auto top = keys[k] >> 56;
    const std::uint64_t bit = std::uint64_t{1} << (top & 63);
    const bool maybe_seen = seen[top >> 6] & bit;
    seen[top >> 6] |= bit;
    for (std::size_t m = 0; maybe_seen && m < k; ++m) {
      if (keys[m] != keys[k] || first_of[m] != m) continue;
      const field_info* const other = all[picked[m]].info;
      if (other != info && other->filter != info->filter) continue;
      first_of[k] = static_cast<std::uint16_t>(m);
      repeated[m] = true;
      break;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const auto& f = all[picked[k]];
    if (first_of[k] != k || !shown_in_json(f)) continue;
    w.key(f.info->filter, first);
    first = false;
    if (!repeated[k]) {
      put_json_value(w, f);
      continue;
    }
    w.put('[');
    for (std::size_t m = k; m < n; ++m) {
      if (first_of[m] != k) continue;
      if (m != k) w.put(',');
      put_json_value(w, all[picked[m]]);
    }
    w.put(']');
  }
}

// Where each layer's fields lie (a command's are neighbours), found in one pass: a walk over
// one layer's fields then costs its own span, not the frame (walking the whole frame for each
// of its layers made a frame of many commands quadratic).
template <class Tree>
struct layer_spans {
  static constexpr std::size_t most =
      std::tuple_size_v<std::remove_cvref_t<decltype(std::declval<const Tree&>().layers)>>;
  std::array<std::uint32_t, most> lo, hi;  // [lo, hi) holds every field of the layer

  explicit layer_spans(const Tree& t) noexcept {
    const auto fields = t.field_list();
    std::fill_n(lo.begin(), t.layer_list().size(), std::uint32_t{0});
    std::fill_n(hi.begin(), t.layer_list().size(), std::uint32_t{0});
    for (std::size_t i = fields.size(); i-- > 0;)
      if (fields[i].layer < most) lo[fields[i].layer] = static_cast<std::uint32_t>(i);
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].layer < most) hi[fields[i].layer] = static_cast<std::uint32_t>(i + 1);
  }
};

// The members of the layers selected by `pick`, the fields in [lo, hi): indexed once and
// written by put_json_picked, or by put_json_members when there are too many to index.
template <class Out, class Tree, class Pick>
void put_json_range(chunked<Out>& w, const Tree& t, std::size_t lo, std::size_t hi, Pick&& pick,
                    bool& first) {
  const auto all = t.field_list();
  std::array<std::uint32_t, 256> picked;
  std::size_t n = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    if (!pick(all[i])) continue;
    if (n == picked.size()) return put_json_members(w, t, pick, first);
    picked[n++] = static_cast<std::uint32_t>(i);
  }
  put_json_picked(w, all, std::span<const std::uint32_t>(picked.data(), n), first);
}

template <class Out, class Tree>
void put_json_frame(chunked<Out>& w, const Tree& t, std::uint64_t frame_number) {
  w("{\"frame\":");
  w.number(frame_number);
  w(",\"encap\":");
  w.quoted(t.encap);
  // tshark's frame.len and frame.cap_len: the length on the wire, and what was captured when
  // that is less.
  w(",\"len\":");
  w.number(t.length_on_wire());
  if (t.length_on_wire() > t.frame_length) {
    w(",\"cap_len\":");
    w.number(t.frame_length);
  }
  const auto fields = t.field_list();
  const auto layers = t.layer_list();
  bool first = false;
  put_json_range(
      w, t, 0, fields.size(), [&](const field_node& f) { return t.layers[f.layer].list.empty(); },
      first);
  const layer_spans<Tree> spans(t);
  // Each list once, in order of its first layer; each of its layers one object.
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const std::string_view list = layers[li].list;
    bool listed_before = list.empty();
    for (std::size_t k = 0; k < li && !listed_before; ++k) listed_before = layers[k].list == list;
    if (listed_before) continue;
    w.key(list, false);
    w.put('[');
    for (std::size_t k = li; k < layers.size(); ++k) {
      if (layers[k].list != list) continue;
      if (k != li) w.put(',');
      w.put('{');
      bool first_member = true;
      put_json_range(
          w, t, spans.lo[k], spans.hi[k], [k](const field_node& f) { return f.layer == k; },
          first_member);
      w.put('}');
    }
    w.put(']');
  }
  w(",\"errors\":[");
  bool first_error = true;
  for (const auto& e : t.error_list()) {
    if (!first_error) w.put(',');
    first_error = false;
    put_json_error(w, e);
  }
  w("]}");
}

}  // namespace detail

// One JSON object (no newline): "frame", "encap", "len", every field under its filter name,
// repeated layers (the commands) as a list of objects under their list name ("sue.cmds"),
// then "errors".
template <class Out, class Tree>
void put_json(Out& out, const Tree& t, std::uint64_t frame_number) {
  detail::chunked<Out> w(out);
  detail::put_json_frame(w, t, frame_number);
}

template <class Out>
void put_error_text(Out& out, const error& e) {
  out(wire::to_string(e.level));
  out(": ");
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
void put_summary(Out& sink, const Tree& t, std::uint64_t frame_number) {
  detail::chunked<Out> out(sink);
  detail::put_uint_right(out, frame_number, 6);
  out("  ");
  out(t.encap);
  if (t.encap.size() < 15) out(std::string_view("               ", 15 - t.encap.size()));
  detail::put_uint_right(out, t.length_on_wire(), 5);
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
  std::size_t errors = 0, notes = 0;
  for (const auto& e : t.error_list()) {
    errors += e.level == wire::severity::error;
    notes += e.level == wire::severity::note;
  }
  const std::size_t warnings = t.error_count - errors - notes;
  if (t.error_count) {
    out("  [");
    detail::put_uint(out, errors);
    out(errors == 1 ? " error" : " errors");
    if (warnings) {
      out(", ");
      detail::put_uint(out, warnings);
      out(warnings == 1 ? " warning" : " warnings");
    }
    if (notes) {
      out(", ");
      detail::put_uint(out, notes);
      out(notes == 1 ? " note" : " notes");
    }
    out("]");
  }
  // One line per command: its name, control and data lengths.
  if (!commands) return;
  const detail::layer_spans<Tree> spans(t);
  const auto fields = t.field_list();
  std::size_t n = 0;
  for (std::size_t li = 0; li < t.layer_count; ++li) {
    if (t.layers[li].list != "sue.cmds") continue;
    out("\n          cmd ");
    detail::put_uint_right(out, ++n, 4);
    const auto member = [&](std::string_view filter) -> const field_node* {
      for (std::size_t i = spans.lo[li]; i < spans.hi[li]; ++i)
        if (fields[i].layer == li && fields[i].info->filter == filter) return &fields[i];
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

// A field's line in the field tree, without its filter name (the Wireshark plugin's item
// labels are these): bit pattern for a field that does not fill its bytes, name, value, and
// the value's name. A generated field has no bit pattern (it is not on the wire).
template <class Out>
void put_field_text(Out& out, const field_node& f) {
  const bool sub_byte = !f.generated && (f.bit % 8 || f.info->width % 8) && f.info->width <= 32;
  if (sub_byte) put_bit_pattern(out, f);
  out(f.info->name);
  out(": ");
  put_value(out, f);
  if (f.info->type != wire::kind::label && !f.value_name().empty()) {
    out(" (");
    out(f.value_name());
    out(")");
  }
}

// A field tree like `tshark -V`: a heading per layer, an indented line per field.
template <class Out, class Tree>
void put_verbose(Out& sink, const Tree& t, std::uint64_t frame_number) {
  detail::chunked<Out> out(sink);
  out("Frame ");
  detail::put_uint(out, frame_number);
  out(": ");
  detail::put_uint(out, t.length_on_wire());
  out(" bytes");
  if (t.length_on_wire() > t.frame_length) {
    out(" on the wire, ");
    detail::put_uint(out, t.frame_length);
    out(" captured");
  }
  out(", encap ");
  out(t.encap);
  out("\n");
  const auto fields = t.field_list();
  const detail::layer_spans<Tree> spans(t);
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
    for (const auto& f : fields.subspan(spans.lo[li], spans.hi[li] - spans.lo[li])) {
      if (f.layer != li) continue;
      out("    ");
      if (f.generated) out("[");
      put_field_text(out, f);
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
