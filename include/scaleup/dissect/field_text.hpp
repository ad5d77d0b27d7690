// A field's value, a field's line and an error as a person reads them, for any sink: what the
// summary line, the field tree and the Wireshark plugin's labels are made of.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "scaleup/dissect/address_text.hpp"
// Before the printers below: given the frames' writer, their numbers go through its in-place
// overloads of put_uint and put_seconds.
#include "scaleup/dissect/chunked.hpp"
#include "scaleup/dissect/text_format.hpp"
#include "scaleup/dissect/tree.hpp"

namespace scaleup::dissect {

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

// An error as one line: severity, layer (and item), byte offset, code, message, then the
// lengths or the field concerned.
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

namespace detail {

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

}  // namespace detail
}  // namespace scaleup::dissect
