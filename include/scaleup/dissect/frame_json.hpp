// A dissection tree as JSON: one object per frame, every field under its filter name, the
// layers of a list (the commands) as an array of objects, then the errors. Written through
// detail::chunked; the members of a frame are the hot loop of `dump --json`.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>

#include "scaleup/dissect/chunked.hpp"
#include "scaleup/dissect/field_text.hpp"
#include "scaleup/dissect/frame_meta.hpp"
#include "scaleup/dissect/tree.hpp"

namespace scaleup::dissect {

// JSON: numbers for every integer kind (hex included), strings for addresses and labels.
constexpr bool json_number(wire::kind k) noexcept {
  return k == wire::kind::uint || k == wire::kind::flag || k == wire::kind::hex;
}
template <class Out>
void put_json_value(Out& out, const field_node& f) {
  if (json_number(f.info->type)) return detail::put_uint(out, f.value);
  out("\"");
  put_value(out, f);
  out("\"");
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

template <class Out>
SCALEUP_ALWAYS_INLINE void put_json_value(chunked<Out>& w, const field_node& f) {
  using wire::kind;
  if (json_number(f.info->type)) return w.number(f.value);
  switch (f.info->type) {
    case kind::label:  // a profile file's value names are anybody's text
      w.quoted(f.value_name());
      break;
    case kind::ipv4:
      w.put('"');
      w.ipv4(static_cast<std::uint32_t>(f.value));
      w.put('"');
      break;
    case kind::mac:
      w.put('"');
      w.mac(f.value);
      w.put('"');
      break;
    default:
      w.put('"');
      put_value(w, f);
      w.put('"');
  }
}

// put_json_picked where a name appears more than once: its fields gathered in one array.
template <class Out>
void put_json_repeated(chunked<Out>& w, std::span<const field_node> all,
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
    keys[k] = info->key;
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
    w.name(f.info->filter, first);
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

// Whether a name repeats among the fields at `picked`, by the names' keys: a bit each of
// 64 x Words first, so that most fields are compared with no other. One word for a command's
// few fields (a register: nothing to clear), 16 for a frame's own members (a bit each of 1024;
// cleared two words at a time, as `seen{}` became a `rep stos` whose start-up alone was 6 % of
// put_json_picked).
template <std::size_t Words>
bool names_repeat(std::span<const field_node> all, std::span<const std::uint32_t> picked) {
  constexpr unsigned shift = 64 - std::bit_width(Words * 64 - 1);
  std::array<std::uint64_t, Words> seen;
  for (std::size_t i = 0; i < Words; i += 2) {
    seen[i] = 0;
    if (i + 1 < Words) seen[i + 1] = 0;
  }
  for (std::size_t k = 0; k < picked.size(); ++k) {
    const field_info* const info = all[picked[k]].info;
    const auto h = static_cast<unsigned>(info->key >> shift);
    const std::uint64_t bit = std::uint64_t{1} << (h & 63);
    if (seen[h >> 6] & bit)
      for (std::size_t m = 0; m < k; ++m) {
        const field_info* const other = all[picked[m]].info;
        if (other->key == info->key && (other == info || other->filter == info->filter))
          return true;
      }
    seen[h >> 6] |= bit;
  }
  return false;
}

// n fields, the k-th at(k), as `"filter":value` members, no name repeating among them.
template <class Out, class At>
SCALEUP_ALWAYS_INLINE void put_json_distinct(chunked<Out>& w, std::size_t n, At&& at, bool& first) {
  // Members whose value is a number, the most, are written through a pointer held here (see
  // chunked::end()); any other member through the writer, which the pointer is handed back to.
  using writer = chunked<Out>;
  char* p = w.room(0);
  char* end = w.end();
  for (std::size_t k = 0; k < n; ++k) {
    const field_node& f = at(k);
    if (!shown_in_json(f)) continue;
    const std::string_view name = f.info->filter;
    const std::size_t most = name.size() + 4 + writer::max_digits;
    if (json_number(f.info->type) && most <= writer::capacity) {
      if (static_cast<std::size_t>(end - p) < most) {
        w.commit(p);
        p = w.room(most);
        end = w.end();
      }
      p = writer::digits(writer::name_at(p, name, first), f.value);
    } else {
      w.commit(p);
      w.name(name, first);
      put_json_value(w, f);
      p = w.room(0);
      end = w.end();
    }
    first = false;
  }
  w.commit(p);
}

// The fields at `picked` (indices into `all`, in order) as `"filter":value` members; a name
// seen more than once among them holds an array (two VLAN tags). A name's first field decides
// whether it is shown; every field of the name gives a value.
template <class Out>
void put_json_picked(chunked<Out>& w, std::span<const field_node> all,
                     std::span<const std::uint32_t> picked, bool& first) {
  // A name that repeats (nearly never: two VLAN tags) takes the way that gathers its fields.
  const std::size_t n = picked.size();
  if (n <= 16 ? names_repeat<1>(all, picked) : names_repeat<16>(all, picked))
    return put_json_repeated(w, all, picked, first);
  put_json_distinct(
      w, n, [&](std::size_t k) -> const field_node& { return all[picked[k]]; }, first);
}

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

// A time as a JSON string: nine decimals do not survive a double, so the text is exact.
template <class Out>
void put_json_seconds(chunked<Out>& w, std::string_view key, std::int64_t ns, unsigned digits) {
  w.name(key, false);
  w.put('"');
  put_seconds(w, ns, digits);
  w.put('"');
}

// Whether two names are the same: at once when they are the same string (a list's name is one
// constant for all its layers).
inline bool same(std::string_view a, std::string_view b) noexcept {
  return (a.data() == b.data() && a.size() == b.size()) || a == b;
}

template <class Out, class Tree>
void put_json_frame(chunked<Out>& w, const Tree& t, std::uint64_t frame_number,
                    const frame_meta* meta = nullptr) {
  w("{\"frame\":");
  w.number(frame_number);
  w(",\"encap\":");
  w.quoted(t.encap);
  if (meta) {
    // The capture's own account of the frame, under tshark's names.
    put_json_seconds(w, "frame.time_epoch", static_cast<std::int64_t>(meta->time_ns), field_digits);
    put_json_seconds(w, "frame.time_relative", meta->relative_ns, field_digits);
    put_json_seconds(w, "frame.time_delta", meta->delta_ns, field_digits);
    w(",\"frame.len\":");
    w.number(meta->len);
    w(",\"frame.cap_len\":");
    w.number(meta->cap_len);
    if (meta->has_interface) {
      w(",\"frame.interface_id\":");
      w.number(meta->interface);
    }
  } else {
    // tshark's frame.len and frame.cap_len: the length on the wire, and what was captured when
    // that is less.
    w(",\"len\":");
    w.number(t.length_on_wire());
    if (t.length_on_wire() > t.frame_length) {
      w(",\"cap_len\":");
      w.number(t.frame_length);
    }
  }
  const auto fields = t.field_list();
  const auto layers = t.layer_list();
  // One pass over the fields: the frame's own members (the fields of layers in no list), and
  // where each listed layer's fields lie (a command's are neighbours).
  constexpr std::size_t most_layers = std::tuple_size_v<decltype(t.layers)>;
  std::array<std::uint32_t, 256> top;
  std::size_t n_top = 0;
  // [lo, hi) holds every field of a listed layer, and `count` of them are its own (all, for a
  // command: its fields are added together).
  std::array<std::uint32_t, most_layers> lo, hi, count;
  std::fill_n(hi.begin(), layers.size(), std::uint32_t{0});
  std::fill_n(count.begin(), layers.size(), std::uint32_t{0});
  // By runs of one layer's fields (a header's, a command's): the run's ends are noted once, not
  // at each field through memory, and the test of the layer is made once a run.
  for (std::size_t i = 0, end = 0; i < fields.size(); i = end) {
    const std::uint16_t l = fields[i].layer;
    for (end = i + 1; end < fields.size() && fields[end].layer == l;) ++end;
    if (l >= layers.size() || layers[l].list.empty()) {
      for (std::size_t j = i; j < end; ++j, ++n_top)
        if (n_top < top.size()) top[n_top] = static_cast<std::uint32_t>(j);
      continue;
    }
    if (hi[l] == 0) lo[l] = static_cast<std::uint32_t>(i);
    hi[l] = static_cast<std::uint32_t>(end);
    count[l] += static_cast<std::uint32_t>(end - i);
  }
  bool first = false;
  const auto own = [&](const field_node& f) {
    return f.layer >= layers.size() || layers[f.layer].list.empty();
  };
  if (n_top <= top.size())
    put_json_picked(w, fields, std::span<const std::uint32_t>(top.data(), n_top), first);
  else
    put_json_members(w, t, own, first);
  // Each list once, in order of its first layer; each of its layers one object.
  std::array<std::string_view, 8> lists;  // the lists written (a frame has one: the commands)
  std::size_t n_lists = 0;
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const std::string_view list = layers[li].list;
    if (list.empty()) continue;
    bool listed_before = false;
    for (std::size_t k = 0; k < n_lists && !listed_before; ++k)
      listed_before = same(lists[k], list);
    if (!listed_before && n_lists == lists.size())  // more lists than kept: look back
      for (std::size_t k = 0; k < li && !listed_before; ++k)
        listed_before = same(layers[k].list, list);
    if (listed_before) continue;
    if (n_lists < lists.size()) lists[n_lists++] = list;
    w.name(list, false);
    w.put('[');
    for (std::size_t k = li; k < layers.size(); ++k) {
      if (!same(layers[k].list, list)) continue;
      if (k != li) w.put(',');
      w.put('{');
      bool first_member = true;
      if (hi[k] == 0) {
        // no fields
      } else if (hi[k] - lo[k] == count[k] && layers[k].distinct_names) {
        // Its fields one after the other, whose maker says that no name repeats: written as
        // they lie.
        const field_node* const at = fields.data() + lo[k];
        put_json_distinct(
            w, count[k], [at](std::size_t j) -> const field_node& { return at[j]; }, first_member);
      } else {
        put_json_range(
            w, t, lo[k], hi[k], [k](const field_node& f) { return f.layer == k; }, first_member);
      }
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

// The same object with the frame's time and lengths from the capture (frame_meta) in place of
// "len" and "cap_len": "frame.time_epoch", "frame.time_relative", "frame.time_delta" (strings:
// exact decimals), "frame.len", "frame.cap_len" and, for pcapng, "frame.interface_id".
template <class Out, class Tree>
void put_json(Out& out, const Tree& t, const frame_meta& meta) {
  detail::chunked<Out> w(out);
  detail::put_json_frame(w, t, meta.number, &meta);
}

}  // namespace scaleup::dissect
