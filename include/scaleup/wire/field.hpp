// Declarative field tables: the single source of truth for every fixed-size header.
//
// A header is a plain value struct T plus a specialisation of layout<T> holding
//   name, title, size (bytes) and `fields`, a std::tuple of field<T, M> entries.
// Each entry binds one member of T to its place on the wire (bit offset from the first bit of
// the header, width) and to what a person or a tool needs to know about it (filter name,
// value names, description, seed section). From that one table come: the zero-copy view's
// accessors, encode, decode with validation, the dissection tree (and so text, JSON and the
// Wireshark fields) and the docs diagrams. No bit position is written anywhere else.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::wire {

// How a value is shown; the wire encoding is always big-endian bits.
enum class kind : std::uint8_t {
  uint,   // unsigned decimal
  hex,    // unsigned, shown in hex (checksums, Ethertypes)
  flag,   // one bit
  mac,    // 48-bit MAC address
  ipv4,   // 32-bit IPv4 address
  ipv6,   // 128-bit IPv6 address (a std::array<uint8_t, 16> member)
  label,  // a code shown by its value name only (computed statuses such as sue.rcrc.status)
};

// What decode checks: `fixed` fields must hold `expect` (error otherwise); `reserved` fields
// should be zero (a warning otherwise: decisions.md, "reserved fields ... reported, not
// rejected").
enum class rule : std::uint8_t { any, reserved, fixed };

struct value_name {
  std::uint64_t value;
  std::string_view name;
};

struct field_info {
  std::string_view name;    // as the seed names it
  std::string_view filter;  // display-filter name, also the JSON key
  std::uint16_t bit = 0;    // offset from the first bit of the header
  std::uint16_t width = 0;  // in bits
  kind type = kind::uint;
  std::span<const value_name> names{};
  std::string_view description{};
  std::string_view seed{};
  rule check = rule::any;
  std::uint64_t expect = 0;

  constexpr std::string_view name_of(std::uint64_t v) const noexcept {
    for (const auto& n : names)
      if (n.value == v) return n.name;
    return {};
  }
};

template <class S, class M>
struct field : field_info {
  M S::*member;
};

template <class S, class M>
constexpr field<S, M> member(M S::*m, field_info info) noexcept {
  return field<S, M>{info, m};
}

template <class T>
struct layout;  // specialised next to each header

template <class M>
inline constexpr bool is_byte_array_v = false;
template <std::size_t N>
inline constexpr bool is_byte_array_v<std::array<std::uint8_t, N>> = true;

// ---- compile-time views of a table -------------------------------------------------------

template <class T>
inline constexpr std::size_t field_count = std::tuple_size_v<decltype(layout<T>::fields)>;

// The table without member pointers: what printing, docs and the Wireshark plugin iterate.
template <class T>
inline constexpr auto field_infos = std::apply(
    [](const auto&... f) { return std::array<field_info, sizeof...(f)>{f...}; }, layout<T>::fields);

// True when the fields, in table order, cover the header bit after bit: no gap, no overlap,
// nothing past the end; and each member type can hold its field.
template <class T>
constexpr bool tiles() {
  std::size_t next = 0;
  bool ok = true;
  std::apply(
      [&](const auto&... f) {
        ((
             ok = ok && f.bit == next && f.width > 0 &&
                  [&] {
                    using M = std::remove_cvref_t<decltype(std::declval<T>().*(f.member))>;
                    if constexpr (is_byte_array_v<M>)
                      return f.bit % 8 == 0 && f.width == 8 * std::tuple_size_v<M>;
                    else
                      return f.width <= 8 * sizeof(M);
                  }(),
             next += f.width),
         ...);
      },
      layout<T>::fields);
  return ok && next == layout<T>::size * 8;
}

// Index of the table entry bound to Member.
template <class T, auto Member>
constexpr std::size_t index_of() {
  std::size_t idx = field_count<T>;
  std::size_t i = 0;
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if constexpr (std::is_same_v<decltype(f.member), decltype(Member)>)
             if (f.member == Member) idx = i;
           ++i;
         }()),
         ...);
      },
      layout<T>::fields);
  return idx;
}

template <class T, auto Member>
constexpr const field_info& info_of() {
  constexpr std::size_t i = index_of<T, Member>();
  static_assert(i < field_count<T>, "member is not in the header's field table");
  return std::get<i>(layout<T>::fields);
}

// ---- one field ---------------------------------------------------------------------------

template <class M>
constexpr M read_field(const std::uint8_t* p, const field_info& f) noexcept {
  if constexpr (is_byte_array_v<M>) {
    M out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[f.bit / 8 + i];
    return out;
  } else {
    return static_cast<M>(get_bits(p, f.bit, f.width));
  }
}

template <class M>
constexpr void write_field(std::uint8_t* p, const field_info& f, const M& v) noexcept {
  if constexpr (is_byte_array_v<M>) {
    for (std::size_t i = 0; i < v.size(); ++i) p[f.bit / 8 + i] = v[i];
  } else {
    put_bits(p, f.bit, f.width, static_cast<std::uint64_t>(v));
  }
}

template <class M>
constexpr std::uint64_t as_u64(const M& v) noexcept {
  if constexpr (is_byte_array_v<M>)
    return 0;
  else
    return static_cast<std::uint64_t>(v);
}

// The check that encode and decode share: a value the field's rule forbids.
constexpr error check_rule(std::string_view layer, std::size_t base, const field_info& f,
                           std::uint64_t v) noexcept {
  if (f.check == rule::fixed && v != f.expect)
    return error{errc::bad_value,
                 layer,
                 static_cast<std::uint32_t>(base + f.bit / 8),
                 0,
                 0,
                 "field must hold its fixed value",
                 f.filter,
                 v,
                 severity::error};
  if (f.check == rule::reserved && v != 0)
    return error{errc::reserved_nonzero,
                 layer,
                 static_cast<std::uint32_t>(base + f.bit / 8),
                 0,
                 0,
                 "reserved field is not zero",
                 f.filter,
                 v,
                 severity::warning};
  return {};
}

// ---- the view: checked once, then accessors cannot fail ----------------------------------

template <class T>
class view {
 public:
  static constexpr std::size_t size = layout<T>::size;

  // The one length check; `offset` only places a failure within a larger buffer.
  static constexpr result<view> make(bytes b, std::size_t offset = 0) noexcept {
    if (b.size() < size) return truncated(layout<T>::name, offset, size, b.size());
    return view(b.data());
  }

  constexpr view() = default;

  template <auto Member>
  constexpr auto get() const noexcept {
    using M = std::remove_cvref_t<decltype(std::declval<T>().*Member)>;
    return read_field<M>(p_, info_of<T, Member>());
  }

  // Decodes every field; no validation (see decode()).
  constexpr T value() const noexcept {
    T out{};
    std::apply(
        [&](const auto&... f) {
          ((out.*(f.member) = read_field<std::remove_cvref_t<decltype(out.*(f.member))>>(p_, f)),
           ...);
        },
        layout<T>::fields);
    return out;
  }

  constexpr bytes raw() const noexcept { return bytes(p_, size); }

 private:
  constexpr explicit view(const std::uint8_t* p) : p_(p) {}
  const std::uint8_t* p_ = nullptr;
};

// Calls visit(field_info, value-as-u64, error-or-none) for each field; the dissector's walk.
template <class T, class Visit>
constexpr void for_each_field(const T& v, Visit&& visit) {
  std::apply(
      [&](const auto&... f) { (visit(static_cast<const field_info&>(f), v.*(f.member)), ...); },
      layout<T>::fields);
}

// Validation shared by decode and the dissector: every rule in the table. Warnings go to
// `warn` (a callable taking error); the first hard error is returned.
template <class T, class Warn>
constexpr error validate(const T& v, std::size_t base, Warn&& warn) {
  error first{};
  std::apply(
      [&](const auto&... f) {
        (([&] {
           const error e = check_rule(layout<T>::name, base, f, as_u64(v.*(f.member)));
           if (!e) return;
           if (e.level == severity::warning)
             warn(e);
           else if (!first)
             first = e;
         }()),
         ...);
      },
      layout<T>::fields);
  return first;
}

// Decode with validation. Reserved-but-nonzero values are kept in the value (so re-encoding
// gives the same bytes) and are not an error here; the dissector reports them.
template <class T>
constexpr result<T> decode(bytes b, std::size_t offset = 0) noexcept {
  const auto vw = view<T>::make(b, offset);
  if (!vw) return vw.err;
  T out = vw->value();
  if (const error e = validate(out, offset, [](const error&) {})) return result<T>(out, e);
  return out;
}

// Encode: every value must fit its field and satisfy the fixed rules; nothing is truncated.
template <class T>
constexpr result<std::size_t> encode(const T& v, mutable_bytes out) noexcept {
  constexpr std::size_t size = layout<T>::size;
  if (out.size() < size)
    return error{errc::no_space,
                 layout<T>::name,
                 0,
                 static_cast<std::uint32_t>(size),
                 static_cast<std::uint32_t>(out.size()),
                 "output buffer too small"};
  error bad{};
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if (bad) return;
           using M = std::remove_cvref_t<decltype(v.*(f.member))>;
           if constexpr (!is_byte_array_v<M>) {
             const auto x = static_cast<std::uint64_t>(v.*(f.member));
             if (x > max_value(f.width)) {
               bad = error{errc::value_too_big,
                           layout<T>::name,
                           static_cast<std::uint32_t>(f.bit / 8),
                           0,
                           0,
                           "value does not fit its field",
                           f.filter,
                           x};
               return;
             }
             if (f.check == rule::fixed && x != f.expect)
               bad = check_rule(layout<T>::name, 0, f, x);
           }
         }()),
         ...);
      },
      layout<T>::fields);
  if (bad) return bad;
  for (std::size_t i = 0; i < size; ++i) out[i] = 0;
  std::apply([&](const auto&... f) { (write_field(out.data(), f, v.*(f.member)), ...); },
             layout<T>::fields);
  return size;
}

// Encode into a fresh array: handy in constant expressions and tests.
template <class T>
constexpr result<std::array<std::uint8_t, layout<T>::size>> to_bytes(const T& v) noexcept {
  std::array<std::uint8_t, layout<T>::size> out{};
  const auto r = encode(v, out);
  if (!r) return r.err;
  return out;
}

}  // namespace scaleup::wire
