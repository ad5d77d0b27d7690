// Computes every row of docs/reproduction.md whose model exists and prints it as `id value`, one
// row a line. check.py compares these with the table: the model figure written there, and the seed
// figure within the row's tolerance. A row the models cannot compute is not printed.
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "scaleup/pack/router_sizing.hpp"
#include "scaleup/rdma/params.hpp"
#include "scaleup/sim/fabric.hpp"
#include "scaleup/sim/rdma_figures.hpp"
#include "scaleup/tofu/efficiency.hpp"
#include "scaleup/tofu/put_latency.hpp"
#include "scaleup/transport/deployment.hpp"
#include "scaleup/transport/latency_budget.hpp"
#include "scaleup/transport/management.hpp"

namespace {

namespace t = scaleup::transport;
namespace tf = scaleup::tofu;

void row(const char* id, double value) { std::printf("%s %.6g\n", id, value); }

double latency(t::cable_kind c, double metres) {
  return t::one_way_latency({.cable = c, .metres = metres}).total();
}

// The rows of a stated table the configuration rule gives, in order, when it gives exactly those
// rows and no others; 0 otherwise.
template <class Table>
double reproduced(const Table& table, const t::instance_shape& s) {
  const auto all = t::all_port_configs(s);
  if (all.n != table.size()) return 0;
  for (std::size_t i = 0; i < all.n; ++i)
    if (!(all.list[i] == table[i])) return 0;
  return static_cast<double>(all.n);
}

// The largest fabric the harness builds (asked for more, it gives what the RH's 10-bit xpuid
// can name), counted only if a command crosses it between its lowest and highest XPU, both ways.
double largest_fabric() {
  scaleup::sim::fabric_config cfg;
  cfg.xpus = 5000;
  scaleup::sim::fabric f(cfg);
  const auto top = static_cast<std::uint16_t>(f.config().xpus - 1);
  if (f.add({.src = 0, .dst = top}) || f.add({.src = top, .dst = 0})) return 0;
  const auto& st = f.run();
  return st.delivered == 2 && st.misaddressed == 0 ? f.config().xpus : 0;
}

void sue() {
  using enum t::cable_kind;
  row("sue.latency.smf10", latency(single_mode_fiber, 10));
  row("sue.latency.hcf10", latency(hollow_core_fiber, 10));
  row("sue.latency.smf5", latency(single_mode_fiber, 5));
  row("sue.latency.hcf5", latency(hollow_core_fiber, 5));
  row("sue.latency.twx5", latency(twinax_copper, 5));
  row("sue.latency.twx3", latency(twinax_copper, 3));
  row("sue.rtt.smf10", t::one_way_latency({.metres = 10}).round_trip());
  row("sue.cable.max", t::max_cable_metres(single_mode_fiber));
  row("sue.ports.table6", reproduced(t::table6, t::sue_800g));
  row("sue.ports.table7", reproduced(t::table7, t::sue_1600g));
  const t::switched_fabric fig1{};
  row("sue.fig1.switches", fig1.switches());
  row("sue.fig1.pair_tbps", fig1.pair_tbps());
  // The management path offered a 64-byte packet every 10 us for 10 s: what gets through a second.
  std::array<std::uint8_t, 64> pkt{};
  std::array<std::uint8_t, 68> out{};
  t::management_port port;
  for (std::uint64_t now = 0; now < 10'000'000'000; now += 10'000)
    port = t::send_management(port, pkt, out, now).port;
  row("sue.mgmt.rate", static_cast<double>(port.sent) / 10);
  row("sue.max_xpus", largest_fabric());
}

void tofu() {
  const auto c = tf::cost(63, 2, 2);  // the largest frame split over both lanes
  row("tofu.link_bandwidth", tf::link_bandwidth(2));
  row("tofu.put_throughput", c.throughput);
  row("tofu.put_efficiency", c.efficiency * 100);
  row("tofu.injection_rate", c.throughput * tf::paper::tnis);
  row("tofu.put_latency.near", tf::put_latency_us(false));
  row("tofu.put_latency.far", tf::put_latency_us(true));
  row("tofu.injection_efficiency",
      c.throughput * tf::paper::tnis / tf::paper::injection_bandwidth * 100);
}

// The send unit's line: a 512-bit datapath at the QoS engine's 150 MHz, and a packet of one header
// word, one footer word and the payload's 512-bit words (Thesis 4.2.2).
void rdma() {
  const scaleup::sim::rdma_run_config rc{};  // 512-bit datapath at 150 MHz (Thesis 4.2.2)
  row("rdma.line_gbps", static_cast<double>(rc.datapath_bits) * rc.clock_mhz / 1000);
  row("rdma.max_throughput", scaleup::sim::rdma_line_gbps(rc));
  // The engine's run (sim/rdma_figures.hpp): the testbed holds a whole engine, so on the heap.
  const auto tb = std::make_unique<scaleup::sim::rdma_testbed<>>();
  // Intra-node, BRAM to BRAM, "excluding network" (Thesis 1): links of no delay.
  const auto small = scaleup::sim::rdma_small(*tb, {.link_delay_ns = 0});
  if (!small.ok) return;  // a run that lost a transfer computes nothing
  row("rdma.latency.small", static_cast<double>(small.polled_512_ns));
  row("rdma.mops", small.mops);
  row("rdma.small_throughput", scaleup::sim::rdma_outstanding_gbps(*tb, 128));
  const auto curve = scaleup::sim::rdma_throughput_by_size(*tb);
  row("rdma.line_rate_size", scaleup::sim::rdma_line_rate_size(curve) / 1024.0);
}

// The patent's two routers against three crossbars, at its 256-byte payload example.
void patent() {
  const auto s = scaleup::pack::size_routers({.payload_bytes = 256});
  row("patent.wire_reduction", s.wire_reduction());
  row("patent.header_rate", s.header_rate);
}

}  // namespace

int main() {
  patent();
  sue();
  tofu();
  rdma();
}
