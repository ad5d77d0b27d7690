// The receiver model and end-to-end runs of the RDMA QoS engine over lossy links
// (rdma/receiver.hpp, sim/rdma_run.hpp; seed 004, the RDMA QoS thesis, and its future work on
// retransmission). The receiver is driven packet by packet first; then whole runs check that
// every transfer completes exactly once, with every byte delivered once and every requested
// notification created once, while data packets, ACKs, NACKs and control packets are lost.
#include <scaleup/rdma/exajet_packet.hpp>
#include <scaleup/rdma/receiver.hpp>
#include <scaleup/sim/rdma_figures.hpp>
#include <scaleup/sim/rdma_run.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace {

namespace r = scaleup::rdma;
namespace sm = scaleup::sim;
using r::packet_type;

constexpr std::uint32_t block_size = 65536;

// ---- receiver ---------------------------------------------------------------------------------

r::packet data(std::uint16_t tid, std::uint16_t seq, std::uint16_t block_seq, std::uint8_t pkt,
               std::uint8_t pkts, bool notify = false) {
  r::packet p;
  p.type = packet_type::write;
  p.data = r::data_header{.last = static_cast<std::uint8_t>(pkt + 1 == pkts ? 1 : 0),
                          .notify = static_cast<std::uint8_t>(notify ? 1 : 0),
                          .tid = tid,
                          .seq = seq,
                          .block_seq = block_seq,
                          .pkt = pkt,
                          .len = 1024,
                          .dst_addr = 0x1000u + pkt * 1024u};
  p.footer = r::packet_footer{.src_coord = 5, .channel = 9, .pkts = pkts};
  p.payload_len = 1024;
  return p;
}

r::packet control(std::uint16_t tid, std::uint16_t seq, std::uint16_t block_seq) {
  r::packet p;
  p.type = packet_type::control;
  p.control = r::control_header{
      .tid = tid, .seq = seq, .block_seq = block_seq, .blocks = 2, .notify_addr = 0xF000};
  p.footer = r::packet_footer{.src_coord = 5, .channel = 9};
  p.payload_len = 8;
  return p;
}

const std::uint8_t atomic_operand[8] = {0, 0, 0, 0, 0, 0, 0x12, 0x34};

TEST_CASE("rdma receiver: a block is delivered once and ACKed, duplicates re-ACKed per issue") {
  r::receiver<> rx;
  rx.coord = 1;
  auto a = rx.advance(data(3, 10, 10, 0, 2));
  CHECK(!a.deliver);
  CHECK(!a.respond);
  a = rx.advance(data(3, 10, 10, 1, 2));
  CHECK(a.deliver);
  CHECK(a.bytes == 2048);
  CHECK(a.channel == 9);
  REQUIRE(a.respond);
  CHECK(a.response.type == packet_type::ack);
  CHECK(a.response.response.tid == 3);
  CHECK(a.response.response.seq == 10);
  CHECK(a.response.response.block_seq == 10);
  CHECK(a.response.response.dst_coord == 5);
  CHECK(a.response.footer.src_coord == 1);
  // The same issue again: nothing.
  a = rx.advance(data(3, 10, 10, 1, 2));
  CHECK(!a.deliver);
  CHECK(!a.respond);
  // A re-issue of the delivered block (its ACK was lost): ACK again, once, deliver nothing.
  a = rx.advance(data(3, 11, 10, 0, 2));
  CHECK(!a.deliver);
  CHECK(a.respond);
  CHECK(a.response.response.seq == 11);
  a = rx.advance(data(3, 11, 10, 1, 2));
  CHECK(!a.respond);
  CHECK(rx.stats.blocks == 1);
  // A new block on the same TID (another identity) is delivered.
  rx.advance(data(3, 12, 12, 0, 2));
  CHECK(rx.advance(data(3, 12, 12, 1, 2)).deliver);
}

TEST_CASE("rdma receiver: a gap is NACKed once per issue; a new issue starts over") {
  r::receiver<> rx;
  rx.advance(data(4, 20, 20, 0, 4));
  auto a = rx.advance(data(4, 20, 20, 2, 4));  // packet 1 lost
  REQUIRE(a.respond);
  CHECK(a.response.type == packet_type::nack);
  CHECK(a.response.response.cause == static_cast<std::uint8_t>(r::nack_cause::missing_packet));
  CHECK(a.response.response.seq == 20);
  CHECK(!rx.advance(data(4, 20, 20, 3, 4)).respond);  // one NACK per gap
  // The re-issue (seq 21) collects afresh: packets 0, 2 and 3 of the issue with seq 20 do not
  // count.
  for (std::uint8_t k = 0; k < 3; ++k) CHECK(!rx.advance(data(4, 21, 20, k, 4)).deliver);
  a = rx.advance(data(4, 21, 20, 3, 4));
  CHECK(a.deliver);
  CHECK(a.bytes == 4096);
  CHECK(a.response.type == packet_type::ack);
  CHECK(a.response.response.seq == 21);
  // Numbers are compared for equality only: after the counter wraps, a re-issue numbered
  // lower than the issue before it is still the newer one.
  rx.advance(data(6, 4095, 4090, 0, 2));
  rx.advance(data(6, 2, 4090, 0, 2));
  a = rx.advance(data(6, 2, 4090, 1, 2));
  CHECK(a.deliver);
  CHECK(a.response.response.seq == 2);
}

TEST_CASE("rdma receiver: a notified block is ACKed with its control packet, notified once") {
  r::receiver<> rx;
  rx.advance(data(7, 30, 30, 0, 2, true));
  auto a = rx.advance(data(7, 30, 30, 1, 2, true));
  CHECK(a.deliver);
  CHECK(!a.respond);  // waits for the control packet
  a = rx.advance(control(7, 30, 30), atomic_operand);
  CHECK(a.notification);
  CHECK(a.notify_addr == 0xF000);
  CHECK(a.notify_value == 0x1234);
  REQUIRE(a.respond);
  CHECK(a.response.type == packet_type::ack);
  // Control re-sent (the ACK was lost): ACK again, no second notification.
  a = rx.advance(control(7, 30, 30), atomic_operand);
  CHECK(!a.notification);
  CHECK(a.respond);
  CHECK(rx.stats.notifications == 1);

  // Control first, then the data (the Packet queue overtakes blocks at the sender).
  a = rx.advance(control(8, 40, 40), atomic_operand);
  CHECK(!a.respond);
  rx.advance(data(8, 40, 40, 0, 2, true));
  a = rx.advance(data(8, 40, 40, 1, 2, true));
  CHECK(a.deliver);
  CHECK(a.notification);
  CHECK(a.respond);
}

// ---- runs ---------------------------------------------------------------------------------

template <std::size_t N>
void check_exactly_once(const sm::rdma_run_report<N>& rep) {
  CHECK(!rep.timed_out);
  CHECK(!rep.overflow);
  for (const auto& t : rep.list()) {
    CAPTURE(t.channel);
    CHECK(t.accepted);
    CHECK(t.completions == 1);
    CHECK(t.final_status == r::status::done);
    CHECK(t.read_status == r::status::done);
    CHECK(t.bytes_delivered == t.size);
    CHECK(t.blocks_delivered == t.blocks_expected);
    CHECK(t.notifications == (t.notify ? 1u : 0u));
  }
  CHECK(rep.all_exactly_once());
}

TEST_CASE("rdma run: lossless transfers complete once, at the thesis's line rate") {
  static sm::rdma_testbed<> tb;  // the thesis's sizes; static: it is large
  const sm::rdma_request one[] = {{0, 0, r::transfer{.src = 0, .dst = 0, .size = 1 << 20}}};
  const auto rep = sm::run_rdma<1>(tb, one, sm::rdma_run_config{});
  check_exactly_once(rep);
  CHECK(rep.reissues == 0);
  CHECK(rep.data_packets == 1024);
  // 1 KB packets: 16 payload words of 18 cycles at 150 MHz x 512 bits = 68.3 Gbps
  // (Thesis 4.3). The transfer spends a link delay and an ACK beyond its packets.
  const double gbps = 8.0 * (1 << 20) / static_cast<double>(rep.transfers[0].latency_ns());
  CHECK(gbps > 66.0);
  CHECK(gbps < 68.3);
}

TEST_CASE("rdma run: randomized lossy runs complete every transfer exactly once") {
  static sm::rdma_testbed<> tb;
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    std::vector<sm::rdma_request> reqs;
    for (std::uint32_t i = 0; i < 48; ++i) {
      sm::rdma_request q;
      q.at_ns = rng() % 50'000;
      q.channel = r::qos_engine<>::channel_of(i % 16, 2 * (i / 16));
      const std::uint32_t kind = static_cast<std::uint32_t>(rng() % 5);
      q.xfer.priority = static_cast<std::uint8_t>(rng() % 16);
      if (kind == 0) {
        q.xfer.is_inline = true;
        q.xfer.size = static_cast<std::uint32_t>(1 + rng() % 32);
      } else {
        q.xfer.size = static_cast<std::uint32_t>(1 + rng() % (1 << 20));
        q.xfer.cm = kind >= 2;
        q.xfer.multipath = kind == 3;
        q.xfer.notify = rng() % 2 == 0;
        q.xfer.notify_addr = 0x0001'0000'0000'0000u + i;
      }
      q.xfer.src = (std::uint64_t{i} << 32);
      q.xfer.dst = (std::uint64_t{1} << 48) | (std::uint64_t{i} << 24) | (rng() % block_size);
      reqs.push_back(q);
    }
    sm::rdma_run_config rc;
    rc.seed = seed;
    rc.loss_data = 0.005;
    rc.loss_ack = 0.05;
    rc.loss_nack = 0.2;
    rc.loss_control = 0.2;
    const auto rep = sm::run_rdma<48>(tb, reqs, rc);
    check_exactly_once(rep);
    CHECK(rep.data_lost > 0);
    CHECK(rep.acks_lost > 0);
    CHECK(rep.reissues > 0);
    CHECK(rep.engine.reissued_nack > 0);
    CHECK(rep.engine.reissued_timeout > 0);
    CHECK(rep.receiver.duplicates > 0);
    // Same seed, same run.
    const auto again = sm::run_rdma<48>(tb, reqs, rc);
    CHECK(again.end_ns == rep.end_ns);
    CHECK(again.reissues == rep.reissues);
  }
}

// 4-bit sequence numbers wrap every 16 issues; 4 KB blocks keep the run short.
constexpr r::params small_seq{.pages = 4,
                              .write_channels = 16,
                              .read_channels = 16,
                              .block_size = 4096,
                              .transactions = 128,
                              .unipath_fids = 8,
                              .multipath_groups = 2,
                              .intra_priorities = 4,
                              .seq_bits = 4};
static_assert(small_seq.valid());

TEST_CASE("rdma run: sequence numbers wrap many times under loss, still exactly once") {
  auto tb = std::make_unique<sm::rdma_testbed<small_seq>>();
  std::mt19937_64 rng(99);
  std::vector<sm::rdma_request> reqs;
  for (std::uint32_t i = 0; i < 24; ++i) {
    sm::rdma_request q;
    q.at_ns = i * 10'000;
    q.channel = r::qos_engine<small_seq>::channel_of(i % 4, 2 * (i / 4));
    q.xfer.size = static_cast<std::uint32_t>(1 + rng() % 160'000);
    q.xfer.cm = i % 3 != 0;
    q.xfer.multipath = i % 3 == 2;
    q.xfer.notify = i % 4 == 0;
    q.xfer.priority = static_cast<std::uint8_t>(i % 4);
    q.xfer.dst = (std::uint64_t{1} << 48) | (std::uint64_t{i} << 20) | (rng() % 4096);
    reqs.push_back(q);
  }
  sm::rdma_run_config rc;
  rc.seed = 5;
  rc.loss_data = 0.02;
  rc.loss_ack = 0.1;
  rc.loss_nack = 0.1;
  rc.loss_control = 0.1;
  const auto rep = sm::run_rdma<24>(*tb, reqs, rc);
  check_exactly_once(rep);
  const std::uint64_t issues = rep.engine.blocks + rep.engine.inline_packets + rep.reissues;
  CHECK(issues > 16 * 16);  // the counter went round more than sixteen times
  CHECK(rep.reissues > 0);
}

TEST_CASE("rdma run: a capture sink sees every packet, and the codec reads it back") {
  auto tb = std::make_unique<sm::rdma_testbed<small_seq>>();
  sm::rdma_request reqs[2];
  reqs[0].xfer = r::transfer{.dst = 0x0001'0000'0000'0100,
                             .size = 5000,
                             .notify = true,
                             .notify_addr = 0x0001'0000'0000'F000,
                             .notify_value = 77};
  reqs[1].channel = 4;
  reqs[1].xfer = r::transfer{.dst = 0x40, .size = 12, .is_inline = true};
  reqs[1].xfer.payload[0] = 0xAB;
  std::size_t seen = 0, bad = 0, controls = 0, acks = 0;
  auto sink = [&](const sm::rdma_wire_record& w) {
    std::array<std::uint8_t, r::packet_size(r::max_payload)> buf{};
    const auto n = r::encode_packet(*w.pkt, w.payload, buf);
    if (!n) {
      ++bad;
      return;
    }
    const auto d = r::decode_packet(scaleup::wire::bytes(buf.data(), *n));
    if (!d.ok() || d.p.type != w.pkt->type) ++bad;
    if (d.p.type == packet_type::inline_write && buf[16] != 0xAB) ++bad;
    controls += d.p.type == packet_type::control;
    acks += d.p.type == packet_type::ack;
    ++seen;
  };
  const auto rep = sm::run_rdma<2>(*tb, reqs, sm::rdma_run_config{}, sink);
  check_exactly_once(rep);
  CHECK(bad == 0);
  CHECK(controls == 1);
  CHECK(seen == rep.data_packets + rep.control_packets + rep.acks + rep.nacks);
  CHECK(acks == 3);  // two blocks and the inline transfer
}

TEST_CASE("rdma run: without retransmission (as built) a loss leaves transfers unfinished") {
  auto tb = std::make_unique<sm::rdma_testbed<small_seq>>();
  std::vector<sm::rdma_request> reqs;
  for (std::uint16_t i = 0; i < 8; ++i)
    reqs.push_back(sm::rdma_request{0, static_cast<std::uint16_t>(2 * i),
                                    r::transfer{.dst = std::uint64_t{i} << 20, .size = 40'000}});
  sm::rdma_run_config rc;
  rc.engine.retransmit = false;
  rc.loss_data = 0.05;
  rc.seed = 3;
  const auto rep = sm::run_rdma<8>(*tb, reqs, rc);
  CHECK(!rep.all_exactly_once());
  for (const auto& t : rep.list()) CHECK(t.completions <= 1);
  CHECK(rep.reissues == 0);
}

}  // namespace

TEST_CASE("rdma figures: polling software sees a completion at its next status read") {
  using scaleup::sim::polled_completion_ns;
  // Descriptor at the engine after rtt/2; read k samples there at (k - 1) * rtt + rtt/2.
  CHECK(polled_completion_ns(0, 135) == 135);    // done as it arrives: the first read sees it
  CHECK(polled_completion_ns(79, 135) == 270);   // the model's 512 B write: 2 RTTs
  CHECK(polled_completion_ns(135, 135) == 270);  // sampled the moment it is done
  CHECK(polled_completion_ns(136, 135) == 405);  // one ns later: a third read, 3 RTTs
  CHECK(polled_completion_ns(79, 0) == 79);      // no round trip: the engine's own time
}

TEST_CASE("rdma figures: the thesis's measurements on the model") {
  auto tb = std::make_unique<scaleup::sim::rdma_testbed<>>();
  const auto local = scaleup::sim::rdma_small(*tb, {.link_delay_ns = 0});
  REQUIRE(local.ok);
  CHECK(local.latency_512_ns < 135);  // the engine alone is faster than one PS-PL round trip
  CHECK(local.polled_512_ns == 270);
  CHECK(local.mops > 140);  // one issue a cycle at 150 MHz, less the first
  CHECK(local.mops <= 150.0 * 16 / 15 + 1e-9);
  // Throughput rises with size and never passes the line.
  const auto curve = scaleup::sim::rdma_throughput_by_size(*tb);
  REQUIRE(curve.size() == 14);
  for (std::size_t i = 1; i < curve.size(); ++i) CHECK(curve[i].gbps >= curve[i - 1].gbps);
  // The run's cycle is whole picoseconds (6666 ps at 150 MHz): 0.005 % faster than the line.
  CHECK(curve.back().gbps <= scaleup::sim::rdma_line_gbps() * 1.0001);
  CHECK(curve.back().gbps > 0.99 * scaleup::sim::rdma_line_gbps());
  CHECK(scaleup::sim::rdma_line_rate_size(curve) == 2048);
  CHECK(scaleup::sim::rdma_line_rate_size({}) == 0);
}
