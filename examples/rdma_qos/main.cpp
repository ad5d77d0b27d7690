// Runs transfers of every class and several priorities through the RDMA QoS engine (seed 004,
// the RDMA QoS thesis) at the thesis's sizes, prints who completes when, sets the model's
// numbers beside the thesis's where they measure the same thing, and finishes with a lossy run
// in which every transfer must still complete exactly once.
#include <scaleup/sim/rdma_figures.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

namespace r = scaleup::rdma;
namespace sm = scaleup::sim;

using testbed = sm::rdma_testbed<>;  // 16 pages x 128 channels, 1024 transactions
using engine = r::qos_engine<>;

const char* class_name(const sm::rdma_transfer_outcome& t) {
  if (t.is_inline) return "inline";
  switch (t.cls) {
    case r::transfer_class::tid_only:
      return "TID only";
    case r::transfer_class::unipath:
      return "1xFID";
    case r::transfer_class::multipath:
      return "4xFID";
  }
  return "?";
}

sm::rdma_request make(std::uint32_t page, std::uint32_t ch, std::uint32_t size, std::uint8_t prio,
                      bool cm, bool mp, bool notify = false) {
  return sm::rdma_write(page, ch, size, prio, cm, mp, notify);
}

// Everything posted at once: the hierarchy decides who goes first.
bool priorities(testbed& tb) {
  std::vector<sm::rdma_request> reqs{
      make(0, 0, 1 << 20, 15, true, true),         // 4xFID, intra 15
      make(0, 2, 1 << 20, 0, true, true),          // 4xFID, intra 0
      make(0, 4, 256 << 10, 7, true, false),       // 1xFID, intra 7
      make(0, 6, 256 << 10, 0, true, false),       // 1xFID, intra 0
      make(0, 8, 64 << 10, 3, true, false, true),  // 1xFID, intra 3, with notification
      make(0, 12, 4 << 10, 0, false, false),       // not congestion managed
  };
  sm::rdma_request in = make(0, 14, 8, 0, false, false);
  in.xfer.is_inline = true;
  reqs.push_back(in);
  const auto rep = sm::run_rdma<8>(tb, reqs, sm::rdma_run_config{});
  std::printf("Priorities: all posted at t = 0, lossless (order = completion order)\n");
  std::printf("  chan  class     intra      bytes  first issue (ns)  done (ns)  order\n");
  for (const auto& t : rep.list())
    std::printf("  %4u  %-8s  %5u  %9u  %16llu  %9llu  %5u\n", t.channel, class_name(t), t.priority,
                t.size, static_cast<unsigned long long>(t.first_issue_ns),
                static_cast<unsigned long long>(t.completed_ns), t.order);
  return rep.all_exactly_once();
}

// The model beside the thesis's measurements, where the two measure the same thing, by the code
// docs/reproduction.md checks (sim/rdma_figures.hpp).
bool reference(testbed& tb) {
  const sm::rdma_run_config rc{};
  std::printf("\nReference numbers (model at 150 MHz, 512-bit datapath, %llu ns links)\n",
              static_cast<unsigned long long>(rc.link_delay_ns));
  const auto curve = sm::rdma_throughput_by_size(tb, rc);
  std::printf("  %u outstanding transfers of each size (Gb/s):", sm::rdma_outstanding);
  std::size_t shown = 0;
  for (const auto& p : curve) {
    if (p.gbps == 0) return false;
    if (shown++ % 7 == 0) std::printf("\n   ");
    if (p.size < 1024)
      std::printf(" %u B %.1f", p.size, p.gbps);
    else
      std::printf(" %u KB %.1f", p.size / 1024, p.gbps);
  }
  std::printf("\n");
  std::printf(
      "  line (16/18 x 76.8 = %.2f Gb/s, 4.3) within 5 %% from %u KB; thesis: from 16 KB, its\n"
      "    ARM core also writing every descriptor; 128 B: thesis 21.6 Gb/s\n",
      sm::rdma_line_gbps(rc), sm::rdma_line_rate_size(curve, rc) / 1024);
  const auto small = sm::rdma_small(tb, rc);
  std::printf("  16 inline transfers issued at %.0f M/s; thesis 150 MOP/s (1, 4.2.1)\n",
              small.mops);
  std::printf("  inline 8 B: issued %llu ns after its post, done after %llu ns over the links\n",
              static_cast<unsigned long long>(small.inline_issue_ns),
              static_cast<unsigned long long>(small.inline_latency_ns));
  const auto local = sm::rdma_small(tb, {.link_delay_ns = 0});
  std::printf(
      "  512 B intra-node (no link delay): engine %llu ns, seen by polling software at a\n"
      "    %llu ns PS-PL round trip %llu ns; thesis 360 ns, \"2-3 RTTs\" (4.3)\n",
      static_cast<unsigned long long>(local.latency_512_ns),
      static_cast<unsigned long long>(sm::thesis_ps_pl_rtt_ns),
      static_cast<unsigned long long>(local.polled_512_ns));
  return small.ok && local.ok;
}

// Block loss, lost ACKs, NACKs and control packets: retransmission (the thesis's future work)
// still completes each transfer once.
bool lossy(testbed& tb) {
  std::vector<sm::rdma_request> reqs;
  std::uint64_t x = 12345;
  auto rnd = [&x](std::uint64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % n;
  };
  for (std::uint32_t i = 0; i < 32; ++i) {
    const auto kind = static_cast<std::uint32_t>(rnd(4));
    const auto size = static_cast<std::uint32_t>(1 + rnd(512 << 10));
    const auto prio = static_cast<std::uint8_t>(rnd(16));
    const bool notify = rnd(2) == 0;
    sm::rdma_request q = make(i % 16, 2 * (i / 16), size, prio, kind >= 1, kind == 2, notify);
    q.xfer.dst += rnd(65536);  // unaligned destinations
    q.at_ns = rnd(20'000);
    reqs.push_back(q);
  }
  sm::rdma_run_config rc;
  rc.seed = 7;
  rc.loss_data = 0.01;
  rc.loss_ack = 0.05;
  rc.loss_nack = 0.05;
  rc.loss_control = 0.05;
  const auto rep = sm::run_rdma<32>(tb, reqs, rc);
  std::printf(
      "\nLossy run: 32 transfers, 1%% of data packets and 5%% of ACKs, NACKs and\n"
      "control packets lost (seed %llu)\n",
      static_cast<unsigned long long>(rc.seed));
  std::printf(
      "  data packets %llu (%llu lost), ACKs %llu (%llu lost), NACKs %llu (%llu lost),"
      " control %llu (%llu lost)\n",
      static_cast<unsigned long long>(rep.data_packets),
      static_cast<unsigned long long>(rep.data_lost), static_cast<unsigned long long>(rep.acks),
      static_cast<unsigned long long>(rep.acks_lost), static_cast<unsigned long long>(rep.nacks),
      static_cast<unsigned long long>(rep.nacks_lost),
      static_cast<unsigned long long>(rep.control_packets),
      static_cast<unsigned long long>(rep.control_lost));
  std::printf(
      "  blocks re-issued: %llu on NACK, %llu on timeout; duplicates dropped by the"
      " receiver: %llu\n",
      static_cast<unsigned long long>(rep.engine.reissued_nack),
      static_cast<unsigned long long>(rep.engine.reissued_timeout),
      static_cast<unsigned long long>(rep.receiver.duplicates));
  std::uint32_t once = 0, notified = 0, wanted = 0;
  for (const auto& t : rep.list()) {
    once += t.exactly_once();
    wanted += t.notify;
    notified += t.notifications;
  }
  std::printf("  completed exactly once: %u of %zu; notifications %u of %u; last done at %llu ns\n",
              once, rep.count, notified, wanted, static_cast<unsigned long long>(rep.end_ns));
  return rep.all_exactly_once();
}

}  // namespace

int main() {
  auto tb = std::make_unique<testbed>();
  const bool ok = priorities(*tb) && reference(*tb) && lossy(*tb);
  return ok ? 0 : 1;
}
