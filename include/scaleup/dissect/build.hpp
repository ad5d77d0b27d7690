// Building a dissection tree from field tables: the three steps every dissector takes (the
// engine's frames, Tofu slices, RDMA packets), written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "scaleup/dissect/tree.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::dissect {

// One header from its table, at byte `at` of `frame` (which may not run past `end`): a layer,
// a node per field, the table's rules checked (warnings and the hard error go to the tree).
template <class T, class Tree>
constexpr wire::result<T> add_header(Tree& t, wire::bytes frame, std::size_t at,
                                     std::size_t end) noexcept {
  const auto vw = wire::view<T>::make(frame.first(end), at);
  if (!vw) {
    t.add_error(vw.err);
    return vw.err;
  }
  const std::uint16_t layer =
      t.add_layer(wire::layout<T>::name, wire::layout<T>::title, at, wire::layout<T>::size);
  const T v = vw->value();
  std::apply(
      [&](const auto&... f) {
        (t.add_field(field_node{&static_cast<const wire::field_info&>(f), layer,
                                static_cast<std::uint32_t>(at * 8 + f.bit), false,
                                wire::as_u64(v.*(f.member)),
                                wire::is_byte_array_v<std::remove_cvref_t<decltype(v.*(f.member))>>
                                    ? frame.data() + at + f.bit / 8
                                    : nullptr}),
         ...);
      },
      wire::layout<T>::fields);
  const wire::error hard = wire::validate(v, at, [&](const wire::error& e) { t.add_error(e); });
  if (hard) {
    t.add_error(hard);
    return wire::result<T>(v, hard);
  }
  return v;
}

// A computed field (not on the wire), placed at its layer's start.
template <class Tree>
constexpr void add_generated(Tree& t, std::uint16_t layer, const wire::field_info& info,
                             std::uint64_t value) noexcept {
  t.add_field(field_node{&info, layer, t.layers[layer].offset * 8, true, value, nullptr});
}

template <class Tree>
constexpr void add_problem(Tree& t, wire::errc code, std::string_view layer, std::size_t offset,
                           std::string_view what, std::string_view field = {},
                           std::uint64_t value = 0, std::size_t needed = 0,
                           std::size_t available = 0, wire::severity level = wire::severity::error,
                           std::uint32_t item = 0) noexcept {
  t.add_error(wire::error{code, layer, static_cast<std::uint32_t>(offset),
                          static_cast<std::uint32_t>(needed), static_cast<std::uint32_t>(available),
                          what, field, value, level, item});
}

}  // namespace scaleup::dissect
