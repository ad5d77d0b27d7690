// Sizing the two routers of the header/data split (patent US 12,388,770 B1, FIGS. 1-2) from a
// traffic mix, against the three full-bandwidth crossbars they replace. header_data_split.hpp
// models the split cycle by cycle; this is the arithmetic behind the patent's argument:
//
//   "The data router may be configured to match the peak data bandwidth of the network
//    switching fabric (e.g., 800 Gb/s)."  "The header router may be configured to meet all TPS
//    constraints of the network switching fabric."  "the number of wires on each port of the
//    network switching fabric can be reduced by a factor of two."
//
// Every read or write operation is two transactions (patent: "a request and a response"), and
// whichever it is, it has two headers (request and response) and the payload's data flits once
// (a write's with the request, a read's with the response). So a port that moves its peak data
// bandwidth also moves 2 / (data flits per operation) header flits a cycle: the header router's
// rate follows from the smallest payload the fabric must run at full rate, not from the peak
// bandwidth. Cost is counted as crosspoints x wires (ports^2 x flit width for a crossbar that
// takes one flit a port a cycle), the usual first-order area of a crossbar.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>

namespace scaleup::pack {

struct router_mix {
  std::uint32_t ports = 64;
  std::uint32_t data_flit_bits = 512;    // one data beat (the patent's 800 Gb/s port, e.g. 512b)
  std::uint32_t header_flit_bits = 128;  // command, address, tag, length: one header flit
  std::uint32_t payload_bytes = 256;     // per operation (patent: "e.g., 256 bytes")
  double read_fraction = 0.5;            // reads among operations; the headers do not depend on it
};

struct router_sizing {
  double data_flits_per_op = 0;      // payload beats per operation
  double header_flits_per_op = 2;    // request + response header
  double header_rate = 0;            // header flits a port a cycle at peak data bandwidth
  double ops_per_cycle = 0;          // operations a port a cycle at peak data bandwidth
  double crossbar_cost_three = 0;    // FIG. 1: Req, Rd Rsp and Wr Rsp routers, full width each
  double crossbar_cost_split = 0;    // FIG. 2: data router + header router at its rate
  std::uint32_t channels_three = 4;  // FIG. 1 port: req, data, rsp, wrsp channels
  std::uint32_t channels_split = 2;  // FIG. 2 port: one header channel, one data channel
  constexpr double wire_reduction() const noexcept {
    return static_cast<double>(channels_three) / channels_split;
  }
  constexpr double cost_ratio() const noexcept {
    return crossbar_cost_three > 0 ? crossbar_cost_split / crossbar_cost_three : 0;
  }
};

constexpr router_sizing size_routers(const router_mix& m) noexcept {
  router_sizing s;
  const std::uint32_t flit_bytes = m.data_flit_bits / 8;
  const std::uint32_t flits = flit_bytes ? (m.payload_bytes + flit_bytes - 1) / flit_bytes : 0;
  s.data_flits_per_op = flits;
  // Operations without data are paced by the header router alone: one header lane, two headers
  // an operation.
  s.ops_per_cycle = flits ? 1.0 / flits : 1.0 / s.header_flits_per_op;
  s.header_rate = s.header_flits_per_op * s.ops_per_cycle;
  const double ports2 = static_cast<double>(m.ports) * m.ports;
  // FIG. 1: each of the three routers carries header and data at the full data width, since
  // "the traffic type for any given port could theoretically reach the maximum throughput".
  s.crossbar_cost_three = 3 * ports2 * m.data_flit_bits;
  // FIG. 2: the data router at full width; the header router at the header width, replicated
  // to take `header_rate` flits a port a cycle (a rate below one still needs one lane).
  const double header_lanes = s.header_rate <= 1 ? 1 : s.header_rate;
  s.crossbar_cost_split = ports2 * m.data_flit_bits + ports2 * m.header_flit_bits * header_lanes;
  return s;
}

}  // namespace scaleup::pack
