// Which XPU an IP address belongs to. Over IP a SUE frame carries no destination XPU id: the
// sender builds the network header from the destination XPU by a lookup whose contents R2 3.5.1
// leaves out, and the RH carries only the source (xpuid). A receiver or a capture reader that
// wants XPU ids over IP is given the lookup: this interface. The library's own addressing plan
// (frame.hpp: 10.0.0.0/8 and fd53:5545::/64) is one such map, what the simulations write their
// frames with; a capture of a real fabric comes with the user's (dissect/xpu_table.hpp reads one
// from a file).
#pragma once

#include <cstdint>
#include <optional>

#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/ip_address.hpp"

namespace scaleup::wire {

class xpu_map {
 public:
  // The XPU id the address stands for, or none when the map does not know it.
  virtual constexpr std::optional<std::uint32_t> xpu_of(const ip_address& a) const noexcept = 0;

 protected:
  constexpr xpu_map() = default;
  constexpr xpu_map(const xpu_map&) = default;
  constexpr xpu_map& operator=(const xpu_map&) = default;
  constexpr ~xpu_map() = default;
};

// The addressing plan of frame.hpp as a map: xpu_of_ipv4 and xpu_of_ipv6.
class addressing_plan_map final : public xpu_map {
 public:
  constexpr std::optional<std::uint32_t> xpu_of(const ip_address& a) const noexcept override {
    return a.version == 4 ? xpu_of_ipv4(a.ipv4()) : xpu_of_ipv6(a.bytes);
  }
};

inline constexpr addressing_plan_map addressing_plan{};

}  // namespace scaleup::wire
