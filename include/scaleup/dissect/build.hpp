// Building a dissection tree from what the typed readers found (wire::read_frame, Tofu's and the
// RDMA engine's readers): the steps every tree builder takes, written once.
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

// One header from its table, as a reader decoded it at byte `at` of `frame`: a layer and a node
// per field. The rules were checked by the reader; its problems come to the tree with
// copy_errors. Returns the layer's index.
template <class T, class Tree>
constexpr std::uint16_t add_fields(Tree& t, wire::bytes frame, std::size_t at,
                                   const T& v) noexcept {
  const std::uint16_t layer =
      t.add_layer(wire::layout<T>::name, wire::layout<T>::title, at, wire::layout<T>::size);
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
  return layer;
}

// A reader's problems, entries [from, to) of its list, into the tree; returns `to`. Readers
// say how many problems they found before each layer, so that the tree gets them in the same
// order, between the same layers, as when it was built while reading.
template <class Tree, class Errors>
constexpr std::size_t copy_errors(Tree& t, const Errors& errors, std::size_t from,
                                  std::size_t to) noexcept {
  for (std::size_t i = from; i < to && i < errors.size(); ++i) t.add_error(errors[i]);
  return to > from ? to : from;
}

// A computed field (not on the wire), placed at its layer's start.
template <class Tree>
constexpr void add_generated(Tree& t, std::uint16_t layer, const wire::field_info& info,
                             std::uint64_t value) noexcept {
  t.add_field(field_node{&info, layer, t.layers[layer].offset * 8, true, value, nullptr});
}

}  // namespace scaleup::dissect
