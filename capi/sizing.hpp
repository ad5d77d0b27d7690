// The sizings the C ABI's transport objects are built with (transport/instance.hpp), chosen by
// an int at init: SCALEUP_SIZING_FIRMWARE, SCALEUP_SIZING_FABRIC.
//
// A build with SCALEUP_C_FABRIC=0 (a firmware's) has the firmware sizing alone: the fabric
// sizing's code is not compiled, nor the heap it may fall back to (malloc), and
// SCALEUP_SIZING_FABRIC is refused as an unknown sizing.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "c_abi.hpp"
#include "scaleup/transport/instance.hpp"

#ifndef SCALEUP_C_FABRIC
#define SCALEUP_C_FABRIC 1
#endif

namespace scaleup::capi {

inline wire::error unknown_sizing(std::string_view layer, int sizing) noexcept {
  return wire::error{.code = wire::errc::bad_value,
                     .layer = layer,
                     .what = "unknown sizing (SCALEUP_SIZING_*)",
                     .field = "sizing",
                     .value = static_cast<std::uint64_t>(sizing)};
}

template <class Sizing>
inline constexpr std::uint8_t sizing_of =
    std::is_same_v<Sizing, transport::fabric_sizing> ? SCALEUP_SIZING_FABRIC
                                                     : SCALEUP_SIZING_FIRMWARE;

// f(std::type_identity<Sizing>{}) for the sizing `sizing` names; `none` for another.
template <class R, class F>
R for_sizing(int sizing, R none, F&& f) noexcept {
  if (sizing == SCALEUP_SIZING_FIRMWARE) return f(std::type_identity<transport::firmware_sizing>{});
#if SCALEUP_C_FABRIC
  if (sizing == SCALEUP_SIZING_FABRIC) return f(std::type_identity<transport::fabric_sizing>{});
#endif
  return none;
}

// The C handle `Base` is the first part of an Object<Sizing> whose `sizing` member says which
// (a handle init returned): f is called with the whole object, const if the handle is.
template <template <class> class Object, class Base, class F>
decltype(auto) by_sizing(Base* b, F&& f) noexcept {
  using firmware = Object<transport::firmware_sizing>;
  using fw = std::conditional_t<std::is_const_v<Base>, const firmware, firmware>;
#if SCALEUP_C_FABRIC
  using fabric = Object<transport::fabric_sizing>;
  using fab = std::conditional_t<std::is_const_v<Base>, const fabric, fabric>;
  if (b->sizing == SCALEUP_SIZING_FABRIC) return f(*static_cast<fab*>(b));
#endif
  return f(*static_cast<fw*>(b));
}

}  // namespace scaleup::capi
