// Deployment arithmetic of SUE (R2 1.1, Table 1, 3.5 Tables 6-7): how an instance's bandwidth
// divides into Ethernet ports on a SerDes lane speed, and what a switched fabric of many
// instances gives a pair of XPUs. Pure functions, so the specification's examples can be
// recomputed (docs/reproduction.md) and a fabric's configuration checked before it is built.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace scaleup::transport {

struct port_config {
  std::uint32_t port_gbps = 0;
  std::uint32_t ports = 0;      // per SUE instance: 1, 2, 4 or (1.6T) 8
  std::uint32_t lane_gbps = 0;  // SerDes lane speed: 100 or 200 (R2 Table 1; 50G too)
  std::uint32_t lanes_per_port = 0;

  friend constexpr bool operator==(const port_config&, const port_config&) = default;
};

// An instance has a fixed set of SerDes lanes: four for an 800G instance (4 x 200G), eight for a
// 1.6T one; on 100G lanes the same lanes carry half (R2 3.5: Table 6 lists 1 x 400G on 100G lanes
// for the "800G" instance). The lanes divide evenly among the ports, at most four lanes a port
// (the widest IEEE port of the tables), and no port faster than the XPU interface behind it (the
// 1.6T instance of Table 7 has a 4 x 400G XPU interface). None when the split does not come out.
struct instance_shape {
  std::uint32_t lanes = 4;
  std::uint32_t max_port_gbps = 800;
};
inline constexpr instance_shape sue_800g{4, 800};   // R2 Table 6
inline constexpr instance_shape sue_1600g{8, 400};  // R2 Table 7: 4 x 400G XPU interface

constexpr std::optional<port_config> configure_ports(const instance_shape& s, std::uint32_t ports,
                                                     std::uint32_t lane_gbps) noexcept {
  if (ports == 0 || lane_gbps == 0 || s.lanes % ports != 0) return std::nullopt;
  const std::uint32_t lanes = s.lanes / ports;
  const std::uint32_t port = lanes * lane_gbps;
  if (lanes > 4 || port > s.max_port_gbps) return std::nullopt;
  return port_config{port, ports, lane_gbps, lanes};
}

// Every configuration the rule allows on 200G and 100G lanes with 1, 2, 4 or 8 ports, in the
// tables' order (fastest lanes first, then more ports); `n` says how many.
struct port_configs {
  std::array<port_config, 8> list{};
  std::size_t n = 0;
};
constexpr port_configs all_port_configs(const instance_shape& s) noexcept {
  port_configs r;
  for (const std::uint32_t lane : {200u, 100u})
    for (const std::uint32_t ports : {1u, 2u, 4u, 8u})
      if (const auto c = configure_ports(s, ports, lane)) r.list[r.n++] = *c;
  return r;
}

// R2 3.5 Table 6 (800G instance) and Table 7 (1.6T instance, 4x400G XPU interface), as stated.
inline constexpr std::array<port_config, 6> table6{{{800, 1, 200, 4},
                                                    {400, 2, 200, 2},
                                                    {200, 4, 200, 1},
                                                    {400, 1, 100, 4},
                                                    {200, 2, 100, 2},
                                                    {100, 4, 100, 1}}};
inline constexpr std::array<port_config, 5> table7{
    {{400, 4, 200, 2}, {200, 8, 200, 1}, {400, 2, 100, 4}, {200, 4, 100, 2}, {100, 8, 100, 1}}};

// A single-hop switched deployment (R2 1.1, Fig. 1): every XPU has `instances` SUE instances, and
// instance k of every XPU goes to switch k (one plane per instance).
struct switched_fabric {
  std::uint32_t xpus = 64;
  std::uint32_t instances = 12;  // per XPU
  std::uint32_t instance_gbps = 800;
  std::uint32_t switch_ports = 64;  // per switch

  // One switch per instance, when each switch has a port for every XPU.
  constexpr std::uint32_t switches() const noexcept { return instances; }
  constexpr bool fits() const noexcept { return xpus <= switch_ports; }
  // Bandwidth between any pair of XPUs with fully switched connectivity: all instances at once.
  constexpr double pair_tbps() const noexcept {
    return fits() ? static_cast<double>(instances) * instance_gbps / 1000.0 : 0.0;
  }
};

}  // namespace scaleup::transport
