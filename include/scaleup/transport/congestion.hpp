// Congestion state per SUE instance, and a load balancer above SUE that uses it (R2 4.4, Fig. 20:
// "Load balancing across the SUE instances can be handled in software or by including a hardware
// block in the XPU that distributes the operations across the SUE modules. Each SUE instance
// provides congestion state to enable this option."; R2 2.2: "the load balancing layer must
// spread traffic across all the planes of all its scale-up interfaces. This is done above SUE.")
//
// The seeds give no format. What scaleup fixes (docs/wire-format.md, "Transport"):
//   - the state is one 32-bit status register an instance exposes on its management interface
//     (R2 3.1: "Register access is provided"): level(2) ports_up(4) queued(14, in 256-byte units,
//     saturating) in_flight(12, PDUs, saturating), MSB first like every other scaleup format;
//   - level summarises it: 0 idle, 1 light, 2 heavy (over a threshold of queued bytes or PDUs in
//     flight), 3 blocked (no usable port);
//   - the balancer keeps each {destination, VC} flow on one instance while it has operations
//     outstanding there, since SUE orders only within an instance (R2 1.2: in order per source and
//     destination "on a particular VC" of one SUE); a flow with nothing outstanding goes to the
//     least congested instance: lowest level, then fewest queued bytes, then fewest PDUs in
//     flight, then the lowest index. A blocked instance is never chosen.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>

#include "scaleup/wire/field.hpp"

namespace scaleup::transport {

struct congestion_state {
  std::uint8_t level = 0;       // 0 idle, 1 light, 2 heavy, 3 blocked
  std::uint8_t ports_up = 0;    // usable ports of the instance (up to 8: R2 Table 7)
  std::uint16_t queued = 0;     // commands accepted, not yet packed: 256-byte units, saturating
  std::uint16_t in_flight = 0;  // PDUs sent and not yet acknowledged, all connections, saturating
  friend constexpr bool operator==(const congestion_state&, const congestion_state&) = default;
};

}  // namespace scaleup::transport

namespace scaleup::wire {
template <>
struct layout<transport::congestion_state> {
  using T = transport::congestion_state;
  static constexpr std::string_view name = "sue.congestion";
  static constexpr std::string_view title = "SUE instance congestion state";
  static constexpr std::string_view seed = "R2 4.4, Fig. 20 (format: scaleup)";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr std::array<value_name, 4> level_names{
      {{0, "idle"}, {1, "light"}, {2, "heavy"}, {3, "blocked"}}};
  static constexpr auto fields = std::tuple{
      member(&T::level, {.name = "level", .filter = "sue.congestion.level", .bit = 0, .width = 2,
                         .type = kind::label, .names = level_names,
                         .description = "Summary: idle, light, heavy, blocked (no usable port)",
                         .seed = "R2 4.4; levels: scaleup"}),
      member(&T::ports_up, {.name = "ports up", .filter = "sue.congestion.ports_up", .bit = 2,
                            .width = 4, .description = "Usable ports of the instance",
                            .seed = "R2 1.1, 3.5.8"}),
      member(&T::queued, {.name = "queued", .filter = "sue.congestion.queued", .bit = 6,
                          .width = 14,
                          .description = "Accepted, unpacked command bytes / 256, saturating",
                          .seed = "R2 4.4; scaleup"}),
      member(&T::in_flight, {.name = "in flight", .filter = "sue.congestion.in_flight",
                             .bit = 20, .width = 12,
                             .description = "PDUs awaiting an ACK, saturating",
                             .seed = "R2 4.4; scaleup"}),
  };
  // clang-format on
};
static_assert(tiles<transport::congestion_state>());
}  // namespace scaleup::wire

namespace scaleup::transport {

struct congestion_thresholds {
  std::uint32_t heavy_queued_bytes = 64 * 1024;
  std::uint32_t heavy_in_flight = 512;
};

// The register an instance reports from its counters.
constexpr congestion_state report_congestion(std::uint32_t ports_up, std::uint64_t queued_bytes,
                                             std::uint64_t in_flight,
                                             const congestion_thresholds& t = {}) noexcept {
  congestion_state s;
  s.ports_up = static_cast<std::uint8_t>(ports_up > 15 ? 15 : ports_up);
  const std::uint64_t units = (queued_bytes + 255) / 256;
  s.queued = static_cast<std::uint16_t>(units > 0x3FFF ? 0x3FFF : units);
  s.in_flight = static_cast<std::uint16_t>(in_flight > 0xFFF ? 0xFFF : in_flight);
  if (ports_up == 0)
    s.level = 3;
  else if (queued_bytes >= t.heavy_queued_bytes || in_flight >= t.heavy_in_flight)
    s.level = 2;
  else
    s.level = queued_bytes || in_flight ? 1 : 0;
  return s;
}

// The XPU's balancer of Fig. 20 over `Instances` SUE instances, for flows to up to `Peers`
// destinations on up to 4 VCs. No heap.
template <std::size_t Instances, std::size_t Peers>
class instance_balancer {
 public:
  constexpr void update(std::size_t instance, const congestion_state& s) noexcept {
    if (instance < Instances) state_[instance] = s;
  }
  constexpr const congestion_state& state(std::size_t instance) const noexcept {
    return state_[instance];
  }

  // The instance the next operation of {peer, vc} goes to, or none when every instance is
  // blocked (or the flow's own instance is, while operations are outstanding on it).
  constexpr std::optional<std::size_t> choose(std::size_t peer, std::uint8_t vc) const noexcept {
    const flow& f = flows_[index(peer, vc)];
    if (f.outstanding > 0) {
      if (state_[f.instance].level == 3) return std::nullopt;  // order: wait, do not jump
      return f.instance;
    }
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < Instances; ++i) {
      if (state_[i].level == 3) continue;
      if (!best || key(state_[i]) < key(state_[*best])) best = i;
    }
    return best;
  }

  // An operation of {peer, vc} was handed to `instance` / completed there.
  constexpr void issued(std::size_t peer, std::uint8_t vc, std::size_t instance) noexcept {
    flow& f = flows_[index(peer, vc)];
    f.instance = static_cast<std::uint16_t>(instance);
    ++f.outstanding;
  }
  constexpr void completed(std::size_t peer, std::uint8_t vc) noexcept {
    flow& f = flows_[index(peer, vc)];
    if (f.outstanding > 0) --f.outstanding;
  }
  constexpr std::uint32_t outstanding(std::size_t peer, std::uint8_t vc) const noexcept {
    return flows_[index(peer, vc)].outstanding;
  }

 private:
  struct flow {
    std::uint16_t instance = 0;
    std::uint32_t outstanding = 0;
  };
  static constexpr std::size_t index(std::size_t peer, std::uint8_t vc) noexcept {
    return (peer % Peers) * 4 + (vc & 3);
  }
  static constexpr std::tuple<std::uint8_t, std::uint16_t, std::uint16_t> key(
      const congestion_state& s) noexcept {
    return {s.level, s.queued, s.in_flight};
  }
  std::array<congestion_state, Instances> state_{};
  std::array<flow, Peers * 4> flows_{};
};

}  // namespace scaleup::transport
