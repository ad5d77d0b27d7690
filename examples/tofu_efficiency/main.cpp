// The efficiency model of Tofu-style sliced links (include/scaleup/tofu/efficiency.hpp) next to
// the Tofu Interconnect D paper's figures: link bandwidth (Table I), Put throughput and
// efficiency (Table V), injection rate (Table IV). Exits 1 if the model strays from the paper by
// more than it rounds to.
#include <cmath>
#include <cstdio>

#include <scaleup/tofu/efficiency.hpp>

using namespace scaleup::tofu;

namespace {

const char* mode_name(unsigned ways, unsigned lanes) {
  if (ways == 1) return "duplicate";
  if (ways == lanes) return ways == 2 ? "split in 2" : "split in 4";
  return "split in 2 (x2)";
}

void row(unsigned len, unsigned ways, unsigned lanes) {
  const frame_cost c = cost(len, ways, lanes);
  std::printf("  %-16s %5u %3u %6zu %6zu %7zu %9.1f %7.3f %6.1f %%\n", mode_name(ways, lanes),
              lanes, len, c.tlp, c.longest, c.wire_bytes, c.time_ns, c.throughput,
              100 * c.efficiency);
}

bool compare(const char* what, double model, double paper, double tolerance, const char* unit) {
  const bool ok = std::fabs(model - paper) <= tolerance;
  std::printf("  %-38s %8.3f %8.3f %s  (within %.3f: %s)\n", what, model, paper, unit, tolerance,
              ok ? "yes" : "NO");
  return ok;
}

}  // namespace

int main() {
  std::printf("Tofu-style slices: %.2f Gbps lanes, 64b/66b, %zu-byte preamble, %zu-byte FCS,\n",
              paper::lane_gbps, preamble_size, fcs_size);
  std::printf(
      "%zu-byte inter-frame gap, slices padded to %zu-byte beats, %u-byte transport "
      "header.\n\n",
      ifg_size, datapath_bytes, phy{}.transport_header);
  std::printf("  %-16s %5s %3s %6s %6s %7s %9s %7s %8s\n", "mode", "lanes", "LEN", "TLP", "lane B",
              "wire B", "time ns", "GB/s", "eff.");
  for (const unsigned len : {0u, 7u, 31u, 63u}) {
    row(len, 1, 2);
    row(len, 2, 2);
  }
  std::printf("\n");
  for (const unsigned len : {0u, 63u}) {
    row(len, 1, 4);
    row(len, 2, 4);
    row(len, 4, 4);
  }
  std::printf(
      "\n  (lane B: octets on the busiest lane, preamble to gap; wire B: on all lanes)\n\n");

  const frame_cost best = cost(max_len, 2, paper::link_lanes);
  std::printf("  %-38s %8s %8s\n", "dual-rail link, LEN 63, split", "model", "paper");
  bool ok = true;
  ok &= compare("link bandwidth (Table I)", link_bandwidth(paper::link_lanes),
                paper::link_bandwidth, 0.05, "GB/s");
  ok &= compare("Put throughput (Table V)", best.throughput, paper::put_throughput, 0.01 * 6.35,
                "GB/s");
  ok &= compare("Put efficiency (Table V)", 100 * best.efficiency, 100 * paper::put_efficiency, 0.5,
                "%");
  ok &= compare("injection bandwidth, 6 TNIs (Table I)",
                paper::tnis * link_bandwidth(paper::link_lanes), paper::injection_bandwidth, 0.05,
                "GB/s");
  ok &= compare("injection rate, 6 TNIs (Table IV)", paper::tnis * best.throughput,
                paper::injection_rate, 0.01 * 38.1, "GB/s");
  ok &= compare("injection efficiency (Table IV)",
                100 * paper::tnis * best.throughput / paper::injection_bandwidth,
                100 * paper::injection_efficiency, 0.5, "%");
  std::printf("\n%s\n", ok ? "model agrees with the paper" : "model DISAGREES with the paper");
  return ok ? 0 : 1;
}
