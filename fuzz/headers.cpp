// Every wire header of the registry: decode; when decoding succeeds, encode the value and check
// the round trip: the encoding decodes to a value that encodes to the same bytes, and input
// already in canonical form (no bits set outside the fields) comes back byte for byte.
#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>

#include "common.hpp"
#include "scaleup/dissect/registry.hpp"
#include "scaleup/wire/field.hpp"

namespace {

using namespace scaleup;

// The registry's list of tables, as types: a header added there is fuzzed here.
using header_types = dissect::table_types;

// The bits of a layout that belong to some field (bit 0 is the first byte's most significant).
template <class T>
constexpr std::array<std::uint8_t, wire::layout<T>::size> field_mask() {
  std::array<std::uint8_t, wire::layout<T>::size> m{};
  for (const auto& f : wire::field_infos<T>)
    for (std::size_t k = f.bit; k < std::size_t{f.bit} + f.width; ++k)
      m[k / 8] = static_cast<std::uint8_t>(m[k / 8] | (0x80u >> (k % 8)));
  return m;
}

template <class T>
void round_trip(wire::bytes b) {
  constexpr std::size_t size = wire::layout<T>::size;
  const auto d = wire::decode<T>(b);
  if (b.size() < size) {
    fuzz::check(!d, "headers: short input decoded");
    return;
  }
  // The view reads every field whatever the validation says.
  const auto v = wire::view<T>::make(b);
  fuzz::check(static_cast<bool>(v), "headers: view refused a long enough input");
  (void)v->value();
  if (!d) return;
  const auto e1 = wire::to_bytes(*d);
  fuzz::check(static_cast<bool>(e1), "headers: a decoded value does not encode");
  const auto d2 = wire::decode<T>(wire::bytes(e1->data(), e1->size()));
  fuzz::check(static_cast<bool>(d2), "headers: an encoding does not decode");
  const auto e2 = wire::to_bytes(*d2);
  fuzz::check(static_cast<bool>(e2) && *e2 == *e1, "headers: encode(decode(x)) not stable");
  // Canonical input: every bit outside the fields is zero. Such input must come back byte for
  // byte; any other input must come back with exactly its non-field bits cleared.
  static constexpr auto mask = field_mask<T>();
  for (std::size_t i = 0; i < size; ++i)
    fuzz::check((*e1)[i] == (b[i] & mask[i]), "headers: a field bit did not round-trip");
}

template <std::size_t... I>
void dispatch(std::size_t which, wire::bytes b, std::index_sequence<I...>) {
  ((which == I ? round_trip<typename std::tuple_element_t<I, header_types>::type>(b) : void()),
   ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  constexpr std::size_t n = std::tuple_size_v<header_types>;
  dispatch(data[0] % n, wire::bytes(data + 1, size - 1), std::make_index_sequence<n>{});
  return 0;
}
