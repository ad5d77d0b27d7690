// The RDMA QoS thesis's measurements, taken on the model the way the thesis took them on the
// hardware, so that examples/rdma_qos prints them and docs/reproduction.md checks them with the
// same code:
//   * completion time of a small transfer (Thesis 1, 4.3: 360 ns for transfers up to 512 B,
//     intra-node, BRAM to BRAM);
//   * operations per second (Thesis 1, 4.2.1: 150 MOP/s, one transfer per segmenter cycle held
//     to one per two cycles by the 128-bit AXI port);
//   * throughput of outstanding transfers by size (Thesis 4.3, Fig. 4.5/4.6: 21.6 Gb/s for
//     outstanding 128 B transfers, the line rate 16/18 x 76.8 = 68.3 Gb/s from 16 KB).
// What the model leaves out, and so where it differs: the ARM core that writes each descriptor
// over AXI and polls the status (the thesis's small-transfer throughput includes it), and the
// PS-PL round trips of an intra-node transfer, for which the model has its links.
#pragma once

#include <cstdint>
#include <vector>

#include "scaleup/sim/rdma_run.hpp"

namespace scaleup::sim {

// Destination coordinates sit in the top 16 bits of an address (rdma_run's receiver is 1).
inline constexpr std::uint64_t rdma_coord_shift = 48;

// A write of `size` bytes from channel `ch` of page `page` to the same place at the receiver.
template <rdma::params P = rdma::params{}>
rdma_request rdma_write(std::uint32_t page, std::uint32_t ch, std::uint32_t size,
                        std::uint8_t priority = 0, bool cm = false, bool multipath = false,
                        bool notify = false) {
  rdma_request q;
  q.channel = rdma::qos_engine<P>::channel_of(page, ch);
  q.xfer.src = std::uint64_t{page} << 32 | std::uint64_t{ch} << 24;
  q.xfer.dst =
      std::uint64_t{1} << rdma_coord_shift | std::uint64_t{page} << 32 | std::uint64_t{ch} << 24;
  q.xfer.size = size;
  q.xfer.priority = priority;
  q.xfer.cm = cm;
  q.xfer.multipath = multipath;
  q.xfer.notify = notify;
  q.xfer.notify_addr = std::uint64_t{1} << rdma_coord_shift | 0xF000;
  q.xfer.notify_value = q.channel;
  return q;
}

// Outstanding transfers the throughput figures keep in flight: the thesis's 128 B point polls a
// page of outstanding transfers collectively (Thesis 4.3); one page has 64 write channels.
inline constexpr std::uint32_t rdma_outstanding = 64;

// Gb/s of `rdma_outstanding` transfers of `size` bytes posted together: bytes over the time to
// the last completion. 0 when a transfer did not complete exactly once.
template <rdma::params P>
double rdma_outstanding_gbps(rdma_testbed<P>& tb, std::uint32_t size,
                             const rdma_run_config& rc = {}) {
  std::vector<rdma_request> reqs;
  for (std::uint32_t c = 0; c < rdma_outstanding; ++c) reqs.push_back(rdma_write<P>(1, c, size));
  const auto rep = run_rdma<rdma_outstanding>(tb, reqs, rc);
  if (!rep.all_exactly_once()) return 0;
  std::uint64_t last = 0;
  for (const auto& t : rep.list()) last = t.completed_ns > last ? t.completed_ns : last;
  return 8.0 * rdma_outstanding * size / static_cast<double>(last);
}

// The line the thesis reaches: a 512-bit datapath at 150 MHz carrying 1 KB packets of a header
// and a footer word, 16/18 x 76.8 = 68.3 Gb/s (Thesis 4.3).
inline double rdma_line_gbps(const rdma_run_config& rc = {}) {
  const double words = static_cast<double>(rdma::thesis.packet_payload) * 8 / rc.datapath_bits;
  return words / (words + 2) * rc.datapath_bits * rc.clock_mhz / 1000;
}

// "Reaching the line throughput": within this fraction of it (the thesis reads its Fig. 4.5 by
// eye; 95 % is where a curve visibly meets its asymptote).
inline constexpr double rdma_line_fraction = 0.95;

struct rdma_size_point {
  std::uint32_t size = 0;
  double gbps = 0;
};

// Throughput of outstanding transfers at each power of two from 128 B to 1 MB.
template <rdma::params P>
std::vector<rdma_size_point> rdma_throughput_by_size(rdma_testbed<P>& tb,
                                                     const rdma_run_config& rc = {}) {
  std::vector<rdma_size_point> v;
  for (std::uint32_t s = 128; s <= (1u << 20); s *= 2)
    v.push_back({s, rdma_outstanding_gbps(tb, s, rc)});
  return v;
}

// The smallest size of those that reaches the line (rdma_line_fraction of it); 0 if none does.
inline std::uint32_t rdma_line_rate_size(const std::vector<rdma_size_point>& curve,
                                         const rdma_run_config& rc = {}) {
  for (const auto& p : curve)
    if (p.gbps >= rdma_line_fraction * rdma_line_gbps(rc)) return p.size;
  return 0;
}

// How the thesis's software sees a transfer complete (Thesis 4.3): the processor writes the two
// descriptor words (posted: they reach the engine half a PS-PL round trip later) and at once
// reads the channel's status, again and again, each read one round trip, until a read returns
// DONE. A read samples the status at the engine, half a round trip after it was issued. So a
// transfer the engine completes `engine_ns` after its descriptor arrived is seen complete after
// the first read that samples it done: 2 round trips when the engine takes less than one, "2-3
// RTTs" in the thesis's words.
constexpr std::uint64_t polled_completion_ns(std::uint64_t engine_ns,
                                             std::uint64_t rtt_ns) noexcept {
  if (rtt_ns == 0) return engine_ns;
  // Read k samples at (k - 1) * rtt + rtt / 2 and the engine is done at rtt / 2 + engine_ns.
  const std::uint64_t k = (engine_ns + rtt_ns - 1) / rtt_ns + 1;
  return k * rtt_ns;
}

// The PS-PL round trip the thesis measured on its MPSoC: 120 to 150 ns (Thesis 4.3); the middle.
inline constexpr std::uint64_t thesis_ps_pl_rtt_ns = 135;

struct rdma_small_figures {
  std::uint64_t inline_issue_ns = 0;    // an 8 B inline transfer: post to first issue
  std::uint64_t inline_latency_ns = 0;  // ... and to its completion
  std::uint64_t latency_512_ns = 0;     // a 512 B write alone: post to completion
  std::uint64_t polled_512_ns = 0;      // ... as the thesis's polling software sees it
  double mops = 0;                      // back-to-back inline transfers issued per microsecond
  bool ok = false;                      // every transfer completed exactly once
};

// The small-transfer figures: the completion time of a lone transfer and the issue rate of 16
// inline transfers posted together (the segmenter serves one per cycle until its Packet FIFO
// fills).
template <rdma::params P>
rdma_small_figures rdma_small(rdma_testbed<P>& tb, const rdma_run_config& rc = {}) {
  rdma_small_figures f;
  std::vector<rdma_request> inl;
  for (std::uint32_t c = 0; c < 16; ++c) {
    rdma_request q = rdma_write<P>(2, c, 8);
    q.xfer.is_inline = true;
    inl.push_back(q);
  }
  const auto rate = run_rdma<16>(tb, inl, rc);
  const std::uint64_t span = rate.transfers[15].first_issue_ns - rate.transfers[0].first_issue_ns;
  f.mops = span ? 15.0 * 1000.0 / static_cast<double>(span) : 0;
  f.inline_issue_ns = rate.transfers[0].first_issue_ns - rate.transfers[0].posted_ns;
  f.inline_latency_ns = rate.transfers[0].latency_ns();
  const rdma_request one[] = {rdma_write<P>(3, 0, 512)};
  const auto lone = run_rdma<1>(tb, one, rc);
  f.latency_512_ns = lone.transfers[0].latency_ns();
  f.polled_512_ns = polled_completion_ns(f.latency_512_ns, thesis_ps_pl_rtt_ns);
  f.ok = rate.all_exactly_once() && lone.all_exactly_once();
  return f;
}

}  // namespace scaleup::sim
