// `scaleup gen rdma`: transfers through the RDMA QoS engine over lossy links (seed 004, with
// the selective retransmission of its future work), written packet by packet on link type 149.
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli.hpp"
#include "scaleup/sim/rdma_run.hpp"

namespace scaleup::cli {

namespace {
using testbed = sim::rdma_testbed<>;  // the thesis's sizes
using engine = rdma::qos_engine<>;
constexpr std::size_t max_transfers = 64;
constexpr std::uint64_t coord_shift = 48;  // destination coordinates: an address's top 16 bits
}  // namespace

struct rdma_settings {
  gen_settings gen;
  std::uint32_t transfers = 16;
  double loss = 0;
};

int run_gen_rdma(const rdma_settings& s) {
  const std::string& out = s.gen.out;
  const std::uint32_t transfers = s.transfers;
  const double loss = s.loss;
  const std::uint64_t seed = s.gen.seed;
  const bool json = s.gen.json;
  capture_file w;
  if (!w.open(out, cap::link_type::rdma)) return 1;
  // Transfers of every class (TID only, inline, unipath, multipath) at random priorities, on
  // write channels of different pages, with unaligned destinations.
  std::mt19937_64 rng(seed);
  std::vector<sim::rdma_request> reqs;
  for (std::uint32_t i = 0; i < transfers; ++i) {
    const auto page = i % 16, ch = 2 * (i / 16);
    const auto kind = rng() % 4;
    sim::rdma_request q;
    q.channel = engine::channel_of(page, ch);
    q.at_ns = rng() % 20'000;
    q.xfer.src = std::uint64_t{page} << 32 | std::uint64_t{ch} << 24;
    q.xfer.dst = (std::uint64_t{1} << coord_shift) | std::uint64_t{page} << 32 |
                 std::uint64_t{ch} << 24 | (rng() % 65536);
    q.xfer.size = kind == 0 ? static_cast<std::uint32_t>(1 + rng() % 32)
                            : static_cast<std::uint32_t>(1 + rng() % (256 << 10));
    q.xfer.is_inline = kind == 0;
    q.xfer.priority = static_cast<std::uint8_t>(rng() % 16);
    q.xfer.cm = kind >= 2;
    q.xfer.multipath = kind == 3;
    q.xfer.notify = kind != 0 && rng() % 2 == 0;
    q.xfer.notify_addr = (std::uint64_t{1} << coord_shift) | 0xF000;
    q.xfer.notify_value = q.channel;
    reqs.push_back(q);
  }
  sim::rdma_run_config rc;
  rc.seed = seed;
  rc.loss_data = rc.loss_ack = rc.loss_nack = rc.loss_control = loss;
  auto tb = std::make_unique<testbed>();
  std::vector<std::uint8_t> bytes(4096);
  bool write_failed = false;
  // Every packet as it leaves its sender, those the link then loses included.
  const auto rep = sim::run_rdma<max_transfers>(*tb, reqs, rc, [&](const sim::rdma_wire_record& r) {
    const auto n = rdma::encode_packet(*r.pkt, r.payload, bytes);
    if (!n || write_failed) return;
    if (!w.write(std::span<const std::uint8_t>(bytes.data(), n.value), capture_epoch_ns + r.at_ns))
      write_failed = true;
  });
  if (write_failed || !w.close()) {
    fmt::print(stderr, "scaleup: {}\n", w.error().c_str());
    return 1;
  }
  std::size_t once = 0;
  for (const auto& t : rep.list()) once += t.exactly_once();
  const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  if (json) {
    stdout_sink out;
    dissect::json_writer<stdout_sink>(out)
        .object()
        .member("transfers", rep.count)
        .member("completed_exactly_once", once)
        .member("data_packets", rep.data_packets)
        .member("data_lost", rep.data_lost)
        .member("acks", rep.acks)
        .member("nacks", rep.nacks)
        .member("control_packets", rep.control_packets)
        .member("reissues", rep.reissues)
        .member("timeouts", rep.timeouts)
        .member("end_ns", rep.end_ns)
        .end()
        .raw("\n");
  } else
    fmt::print(
        "rdma engine: {} transfers, loss {:.3g}\n"
        "  completed exactly once  {}\n"
        "  data packets (lost)     {} ({})\n"
        "  ACKs / NACKs / control  {} / {} / {}\n"
        "  blocks re-issued        {} ({} on timeout)\n"
        "  capture                 {} (link type 149)\n",
        u(rep.count), loss, u(once), u(rep.data_packets), u(rep.data_lost), u(rep.acks),
        u(rep.nacks), u(rep.control_packets), u(rep.reissues), u(rep.timeouts), out.c_str());
  return 0;
}

void add_gen_rdma(CLI::App& parent, commands& out) {
  auto s = std::make_shared<rdma_settings>();
  CLI::App* app = parent.add_subcommand(
      "rdma",
      "Run transfers of every class through the RDMA QoS engine (seed 004) over links that lose "
      "packets, with selective retransmission; writes every ExaJet packet on link type 149.");
  add_gen_options(app, s->gen);
  app->add_option("--transfers", s->transfers, "transfers to run")
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{max_transfers}))
      ->capture_default_str();
  app->add_option("--loss", s->loss, "probability that a packet is lost (below 1)")
      ->check(CLI::Range(0.0, 0.999999))
      ->capture_default_str();
  out.push_back({app, [s] { return run_gen_rdma(*s); }});
}

}  // namespace scaleup::cli
