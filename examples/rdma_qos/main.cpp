// Runs transfers of every class and several priorities through the RDMA QoS engine (seed 004,
// the RDMA QoS thesis) at the thesis's sizes, prints who completes when, sets the model's
// numbers beside the thesis's where they measure the same thing, and finishes with a lossy run
// in which every transfer must still complete exactly once.
#include <scaleup/sim/rdma_run.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

namespace r = scaleup::rdma;
namespace sm = scaleup::sim;

using testbed = sm::rdma_testbed<>;  // 16 pages x 128 channels, 1024 transactions
using engine = r::qos_engine<>;

constexpr std::uint64_t coord_shift = 48;  // destination coordinates: the top 16 bits

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
  sm::rdma_request q;
  q.channel = engine::channel_of(page, ch);
  q.xfer.src = std::uint64_t{page} << 32 | std::uint64_t{ch} << 24;
  q.xfer.dst =
      std::uint64_t{1} << coord_shift | std::uint64_t{page} << 32 | std::uint64_t{ch} << 24;
  q.xfer.size = size;
  q.xfer.priority = prio;
  q.xfer.cm = cm;
  q.xfer.multipath = mp;
  q.xfer.notify = notify;
  q.xfer.notify_addr = std::uint64_t{1} << coord_shift | 0xF000;
  q.xfer.notify_value = q.channel;
  return q;
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

// The model beside the thesis's measurements, where the two measure the same thing.
bool reference(testbed& tb) {
  const sm::rdma_run_config rc{};
  std::printf("\nReference numbers (model at 150 MHz, 512-bit datapath, %llu ns links)\n",
              static_cast<unsigned long long>(rc.link_delay_ns));

  const sm::rdma_request big[] = {make(0, 0, 1 << 20, 0, false, false)};
  const auto line = sm::run_rdma<1>(tb, big, rc);
  const double gbps = 8.0 * (1 << 20) / static_cast<double>(line.transfers[0].latency_ns());
  std::printf("  1 MB transfer: %.1f Gb/s; thesis maximum 16/18 x 76.8 = 68.3 Gb/s (4.3)\n", gbps);

  // 64 outstanding 128-byte transfers in one page, polled collectively (Thesis 4.3).
  std::vector<sm::rdma_request> small;
  for (std::uint32_t c = 0; c < 64; ++c) small.push_back(make(1, c, 128, 0, false, false));
  const auto many = sm::run_rdma<64>(tb, small, rc);
  std::uint64_t last = 0;
  for (const auto& t : many.list()) last = t.completed_ns > last ? t.completed_ns : last;
  std::printf(
      "  64 outstanding 128 B transfers: %.1f Gb/s; thesis 21.6 Gb/s, whose ARM core also\n"
      "    wrote every descriptor over AXI (4.3)\n",
      64.0 * 128 * 8 / static_cast<double>(last));

  // Segmenter rate: back-to-back inline transfers leave one per cycle until the Packet FIFO
  // fills (Thesis 4.2.1: 150 MOP/s, held to one per two cycles by the 128-bit AXI port).
  std::vector<sm::rdma_request> inl;
  for (std::uint32_t c = 0; c < 16; ++c) {
    sm::rdma_request q = make(2, c, 8, 0, false, false);
    q.xfer.is_inline = true;
    inl.push_back(q);
  }
  const auto rate = sm::run_rdma<16>(tb, inl, rc);
  const std::uint64_t span = rate.transfers[15].first_issue_ns - rate.transfers[0].first_issue_ns;
  std::printf("  16 inline transfers issued in %llu ns: %.0f M/s; thesis 150 MOP/s (1, 4.2.1)\n",
              static_cast<unsigned long long>(span), 15.0 * 1000.0 / static_cast<double>(span));
  const auto& one = rate.transfers[0];
  std::printf(
      "  inline 8 B: issued %llu ns after its post, done after %llu ns; thesis 360 ns for\n"
      "    <= 512 B, BRAM to BRAM, with PS-PL round trips instead of links (4.3)\n",
      static_cast<unsigned long long>(one.first_issue_ns - one.posted_ns),
      static_cast<unsigned long long>(one.latency_ns()));
  return line.all_exactly_once() && many.all_exactly_once() && rate.all_exactly_once();
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
