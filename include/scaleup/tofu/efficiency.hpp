// Bytes on the wire and time per frame in each split mode, at the paper's figures, so that its
// link bandwidth and Put efficiency can be reproduced (003 IV.C Table I, V.C Table IV, V.D
// Table V; seed digest F).
//
// The model:
//   - a lane runs at 28.05 Gbps (Table I) with 64b/66b coding, so it moves 3.4 bytes/ns of
//     octets; a dual-rail link moves 6.8 GB/s, the paper's link bandwidth (Table I). The coding
//     is assumed from the Ethernet-derived PCS (IV.E); it is the one that turns 28.05 into 6.8.
//   - a lane spends preamble + slice + inter-frame gap on each slice (slice.hpp); all lanes start
//     a frame together, so a frame takes as long as its longest slice.
//   - a Put's payload is the TLP less one 16-byte datapath beat of transport header: the paper
//     puts Tofu2's lower efficiency down to its 32-byte alignment against TofuD's 16 (V.D), i.e.
//     the header costs one alignment unit.
// With the largest frame (LEN = 63, a 2048-byte TLP) split in two this gives 2032 bytes every
// 320 ns = 6.35 GB/s, the paper's Put throughput, and 93.4 % of 6.8 GB/s (paper: 93 %); six
// TNIs at that rate inject 38.1 GB/s of 40.8 (Table IV).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/tofu/slice.hpp"

namespace scaleup::tofu {

// The figures the paper states, for comparison.
namespace paper {
inline constexpr double lane_gbps = 28.05;            // Table I, data rate
inline constexpr unsigned link_lanes = 2;             // 20 lanes per node, 10 ports (IV.A, II.A)
inline constexpr double link_bandwidth = 6.8;         // GB/s, Table I
inline constexpr double put_throughput = 6.35;        // GB/s, Table V
inline constexpr double put_efficiency = 0.93;        // Table V
inline constexpr unsigned tnis = 6;                   // Table I
inline constexpr double injection_bandwidth = 40.8;   // GB/s, Table I
inline constexpr double injection_rate = 38.1;        // GB/s, Table IV
inline constexpr double injection_efficiency = 0.93;  // Table IV
}  // namespace paper

struct phy {
  double lane_gbps = paper::lane_gbps;
  unsigned code_data = 64;         // 64b/66b: data bits per block
  unsigned code_block = 66;        // bits on the line per block
  unsigned transport_header = 16;  // TLP bytes that are not payload: one datapath beat (V.D)
};

// Octets per nanosecond one lane moves after coding (GB/s).
constexpr double lane_rate(const phy& p = {}) noexcept {
  return p.lane_gbps * p.code_data / p.code_block / 8.0;
}

constexpr double link_bandwidth(unsigned lanes, const phy& p = {}) noexcept {
  return lanes * lane_rate(p);
}

// Picoseconds a lane needs for `octets` octets (integer, for simulations that add times up).
constexpr std::uint64_t octet_time_ps(std::size_t octets, const phy& p = {}) noexcept {
  return static_cast<std::uint64_t>(static_cast<double>(octets) * 1000.0 / lane_rate(p) + 0.5);
}

struct frame_cost {
  unsigned len = 0;
  unsigned ways = 0;
  unsigned lanes = 0;
  std::array<std::size_t, max_lanes> line{};  // per lane: preamble + slice + gap, octets
  std::size_t longest = 0;                    // octets of the busiest lane: the frame's time
  std::size_t wire_bytes = 0;                 // octets on all lanes together
  double line_bits = 0;                       // bits on all lanes after 64b/66b coding
  std::size_t tlp = 0;
  std::size_t payload = 0;  // TLP less the transport header
  double time_ns = 0;       // serialisation time of the frame
  double throughput = 0;    // payload GB/s with frames back to back
  double efficiency = 0;    // throughput / link bandwidth
};

// A frame of LEN `len` split `ways` ways over `lanes` lanes (ways = 1: duplicate mode).
constexpr frame_cost cost(unsigned len, unsigned ways, unsigned lanes, const phy& p = {}) noexcept {
  frame_cost c;
  c.len = len;
  c.ways = ways;
  c.lanes = lanes;
  for (unsigned l = 0; l < lanes && l < max_lanes; ++l) {
    c.line[l] = line_size(len, ways, l);
    c.wire_bytes += c.line[l];
    if (c.line[l] > c.longest) c.longest = c.line[l];
  }
  c.line_bits = static_cast<double>(c.wire_bytes) * 8.0 * p.code_block / p.code_data;
  c.tlp = tlp_size(len);
  c.payload = c.tlp > p.transport_header ? c.tlp - p.transport_header : 0;
  c.time_ns = static_cast<double>(c.longest) / lane_rate(p);
  c.throughput = static_cast<double>(c.payload) / c.time_ns;
  c.efficiency = c.throughput / link_bandwidth(lanes, p);
  return c;
}

}  // namespace scaleup::tofu
