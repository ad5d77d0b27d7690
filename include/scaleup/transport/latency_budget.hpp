// SUE's end-to-end one-way latency budget (R2 Appendix A.1, Fig. 22) as a function of the cable,
// the FEC and the switch, so that the budget's rows can be recomputed and other fabrics costed
// against the <2 us round trip of R2 Table 1.
//
// The budget is a sum of five stages: the sending SUE (100 ns), the cable to the switch, the
// switch (250 ns), the cable to the receiver, the receiving SUE (100 ns). Cables cost their
// propagation delay per metre: 4.96 ns/m single-mode fibre and 4.6 ns/m twinax copper (stated),
// 3.5 ns/m hollow-core fibre (inferred: the appendix charges 35.0 ns for 10 m). FEC is not a
// separate line of the appendix; R2 3.5.4 says RS-272 has lower latency than the standard
// RS-544 without a figure, so extra FEC latency is a parameter that defaults to zero (the
// appendix's totals) and is charged once per link (two links per one-way trip).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>

namespace scaleup::transport {

enum class cable_kind : std::uint8_t { single_mode_fiber, hollow_core_fiber, twinax_copper };

// Propagation delay per metre (R2 Appendix A.1).
constexpr double ns_per_metre(cable_kind c) noexcept {
  switch (c) {
    case cable_kind::single_mode_fiber:
      return 4.96;  // stated
    case cable_kind::hollow_core_fiber:
      return 3.5;  // inferred: "10m Hollow Core Fiber ... 35.0"
    case cable_kind::twinax_copper:
      return 4.6;  // stated
  }
  return 4.96;
}

struct latency_budget_params {
  cable_kind cable = cable_kind::single_mode_fiber;
  double metres = 10;        // each of the two cables; R2 Table 1: "Up to 10m from SUE to switch"
  double sue_tx_ns = 100;    // R2 Fig. 22: SUE on the sending side
  double sue_rx_ns = 100;    // ...and on the receiving side
  double switch_ns = 250;    // one switch hop (R2 1.1: "a single switch hop")
  double fec_extra_ns = 0;   // per link, beyond what the SUE and switch figures include
  unsigned switch_hops = 1;  // a mesh (R2 Fig. 2) has 0 switches and one cable
};

struct latency_budget {
  double sue_tx = 0, cable_in = 0, fec = 0, switches = 0, cable_out = 0, sue_rx = 0;
  constexpr double total() const noexcept {
    return sue_tx + cable_in + fec + switches + cable_out + sue_rx;
  }
  // Round trip for a request and its ACK over the same path, against R2 Table 1's <2 us.
  constexpr double round_trip() const noexcept { return 2 * total(); }
};

constexpr latency_budget one_way_latency(const latency_budget_params& p = {}) noexcept {
  latency_budget b;
  const double cable = p.metres * ns_per_metre(p.cable);
  const unsigned links = p.switch_hops + 1;
  b.sue_tx = p.sue_tx_ns;
  b.sue_rx = p.sue_rx_ns;
  b.switches = p.switch_hops * p.switch_ns;
  // The appendix has two cables of the same length: the first link and the last; a mesh has one.
  b.cable_in = cable;
  b.cable_out = links > 1 ? cable * (links - 1) : 0;
  b.fec = p.fec_extra_ns * links;
  return b;
}

// The longest cable of one kind that keeps the round trip under `rtt_ns` (R2 Table 1: 2 us).
constexpr double max_cable_metres(cable_kind c, double rtt_ns = 2000,
                                  latency_budget_params p = {}) noexcept {
  p.cable = c;
  p.metres = 0;
  const double fixed = one_way_latency(p).round_trip();
  const double per_metre = 2 * (p.switch_hops + 1) * ns_per_metre(c);
  return fixed >= rtt_ns ? 0 : (rtt_ns - fixed) / per_metre;
}

}  // namespace scaleup::transport
