// The RDMA QoS engine (qos_engine.hpp; seed 004, the RDMA QoS thesis): block formulas against
// hand-worked examples, TID and FID allocation, the queue hierarchy and head-of-line freedom,
// outstanding blocks, completion notification, status reads, selective retransmission and
// sequence-number wraparound. Tests drive the machine event by event and play the network
// themselves (ACKs and NACKs built from what the engine issued).
//
// The thesis's sizes are used wherever a scenario allows (the engine then lives on the heap:
// it is a few hundred kilobytes); a small engine is used where exhaustion or wraparound must
// come quickly.
#include <scaleup/rdma/qos_engine.hpp>
#include <scaleup/rdma/segmenter.hpp>
#include <scaleup/rdma/transaction_ids.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace {

namespace r = scaleup::rdma;
using r::output;
using r::status;

using engine = r::qos_engine<>;

constexpr std::uint32_t BS = 65536;

std::unique_ptr<engine> make() { return std::make_unique<engine>(); }

// Page p, write channel k.
constexpr std::uint16_t chan(std::uint32_t p, std::uint32_t k) { return engine::channel_of(p, k); }

r::transfer mem(std::uint64_t dst, std::uint32_t size, std::uint8_t prio = 0, bool cm = false,
                bool mp = false, bool notify = false) {
  return r::transfer{.src = 0x4000'0000'0000 + dst,
                     .dst = dst,
                     .size = size,
                     .priority = prio,
                     .cm = cm,
                     .multipath = mp,
                     .notify = notify,
                     .notify_addr = notify ? 0x0001'0000'0000'F000u : 0u,
                     .notify_value = notify ? 0x1234u : 0u};
}

template <class E>
r::actions post(E& e, std::uint16_t c, const r::transfer& t, std::uint64_t now = 0) {
  return r::advance(e, r::event::post(c, t), now);
}
template <class E>
r::actions sched(E& e, std::uint64_t now = 0, const r::config& cfg = {}) {
  return r::advance(e, r::event::schedule(), now, cfg);
}

r::response_header response_to(const r::actions& issued, bool nack = false) {
  r::response_header h;
  h.type = static_cast<std::uint8_t>(nack ? r::packet_type::nack : r::packet_type::ack);
  h.tid = issued.tid;
  h.seq = issued.pending.seq;
  h.block_seq = issued.pending.block_seq;
  return h;
}
template <class E>
r::actions ack(E& e, const r::actions& issued, std::uint64_t now = 0, const r::config& cfg = {}) {
  return r::advance(e, r::event::respond(response_to(issued)), now, cfg);
}
template <class E>
r::actions nack(E& e, const r::actions& issued, std::uint64_t now = 0, const r::config& cfg = {}) {
  return r::advance(e, r::event::respond(response_to(issued, true)), now, cfg);
}

// ---- segmentation (Thesis 3.9, Fig. 3.10) ----------------------------------------------------

struct block_case {
  std::uint64_t dst, size, first, total, last;
};

TEST_CASE("rdma: first, last and total blocks against hand-worked examples") {
  // first = BS - dst % BS (at most size); total = (dst+size)/BS - dst/BS (+1 on a remainder);
  // last = (size - first) % BS, 0 meaning a full block.
  const block_case cases[] = {
      {0, 65536, 65536, 1, 65536},        // one aligned block exactly
      {0, 200000, 65536, 4, 3392},        // 3 x 65536 = 196608, 3392 left
      {4096, 65536, 61440, 2, 4096},      // unaligned: 61440 to the boundary, 4096 after
      {100, 50, 50, 1, 50},               // smaller than a block, inside one block
      {65000, 1000, 536, 2, 464},         // small, straddling a boundary
      {131072, 262144, 65536, 4, 65536},  // aligned exact multiple: last block full
      {4096, 196608, 61440, 4, 4096},     // unaligned size multiple: one more block
      {3 * 65536 - 1, 2, 1, 2, 1},        // two bytes either side of a boundary
      {0x1'0000'0000, 1, 1, 1, 1},        // one byte
  };
  for (const auto& c : cases) {
    CAPTURE(c.dst);
    CAPTURE(c.size);
    CHECK(r::first_block_size(c.dst, c.size, BS) == c.first);
    CHECK(r::total_blocks(c.dst, c.size, BS) == c.total);
    CHECK(r::last_block_size(c.dst, c.size, BS) == c.last);
    std::uint64_t sum = 0;
    for (std::uint64_t k = 0; k < c.total; ++k) {
      CHECK(r::block_offset(c.dst, c.size, BS, k) == sum);
      // Every block after the first starts on a destination boundary.
      if (k > 0) CHECK((c.dst + sum) % BS == 0);
      sum += r::block_bytes(c.dst, c.size, BS, k);
    }
    CHECK(sum == c.size);
  }
  CHECK(r::packets_in(65536, 1024) == 64);
  CHECK(r::packets_in(1025, 1024) == 2);
}

TEST_CASE("rdma: issued block descriptors follow the destination alignment") {
  auto e = make();
  const r::transfer t = mem(4096, 196608);
  REQUIRE(post(*e, chan(0, 0), t).accepted);
  std::vector<r::block_descriptor> blocks;
  for (int i = 0; i < 4; ++i) {
    auto a = sched(*e);
    REQUIRE(a.out == output::block);
    CHECK(a.block_index == static_cast<std::uint32_t>(i));
    blocks.push_back(a.block);
    ack(*e, a);
  }
  CHECK(blocks[0].dst_addr == 4096);
  CHECK(blocks[0].src_addr == t.src);
  CHECK(r::block_size_bytes(blocks[0].block_size) == 61440);
  CHECK(blocks[1].dst_addr == 65536);
  CHECK(blocks[1].src_addr == t.src + 61440);
  CHECK(blocks[1].block_size == 0);  // a full 64 KB block
  CHECK(blocks[2].dst_addr == 131072);
  CHECK(blocks[3].dst_addr == 196608);
  CHECK(blocks[3].block_size == 4096);
  CHECK(blocks[3].pd == 0);
  CHECK(e->status_of(chan(0, 0)) == status::done);
}

// ---- TIDs and FIDs (Thesis 3.8) --------------------------------------------------------------

TEST_CASE("rdma: id_fifo is full after reset and hands IDs out in order") {
  r::id_fifo<4> f;
  f.fill(10);
  CHECK(f.full());
  CHECK(f.pop() == 10);
  CHECK(f.pop() == 11);
  CHECK(f.push(10));
  CHECK(f.pop() == 12);
  CHECK(f.pop() == 13);
  CHECK(f.pop() == 10);
  CHECK(f.empty());
  r::id_fifo<16> groups;
  groups.fill(192, 4);
  CHECK(groups.front() == 192);
  CHECK(groups.ring[15] == 252);  // the last FID stored: the thesis's FID range ends at 252
}

TEST_CASE("rdma: the TID FIFO runs out at 512 blocks and refills on ACK") {
  auto e = make();
  // 300 transfers of two blocks, not congestion managed: 600 blocks wanted, 512 TIDs.
  std::vector<std::uint16_t> channels;
  for (std::uint32_t i = 0; i < 300; ++i) channels.push_back(chan(i / 64, i % 64));
  for (auto c : channels) REQUIRE(post(*e, c, mem(0, 2 * BS)).accepted);
  std::vector<r::actions> issued;
  for (;;) {
    auto a = sched(*e);
    if (a.out == output::none) break;
    CHECK(a.tid == issued.size());  // TIDs leave the FIFO in order
    issued.push_back(a);
  }
  CHECK(issued.size() == 512);
  CHECK(e->tid_fifo.empty());
  // Each transfer got its first block before any got a second (one queue, FIFO).
  CHECK(issued[299].channel == channels[299]);
  CHECK(issued[300].channel == channels[0]);
  CHECK(issued[300].block_index == 1);
  // Return one TID: the next transfer in line takes exactly that one.
  CHECK(ack(*e, issued[7]).outcome == r::response_outcome::acked);
  CHECK(e->tid_fifo.size() == 1);
  auto a = sched(*e);
  REQUIRE(a.out == output::block);
  CHECK(a.tid == 7);
  CHECK(a.channel == channels[212]);
  CHECK(sched(*e).out == output::none);
}

TEST_CASE("rdma: unipath FID 128 uses TIDs 512, 513, 514, 515 and wraps") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 6 * BS, 0, true)).accepted);
  auto b0 = sched(*e);
  auto b1 = sched(*e);
  CHECK(b0.tid == 512);
  CHECK(b0.pending.qos_fid == 128);
  CHECK(b1.tid == 513);
  CHECK(sched(*e).out == output::none);  // two outstanding
  ack(*e, b0);
  auto b2 = sched(*e);
  CHECK(b2.tid == 514);
  ack(*e, b1);
  auto b3 = sched(*e);
  CHECK(b3.tid == 515);
  ack(*e, b2);
  auto b4 = sched(*e);
  CHECK(b4.tid == 512);  // the flow wraps to its first TID
  ack(*e, b3);
  auto b5 = sched(*e);
  CHECK(b5.tid == 513);
  // Flow flags of the block descriptors (Thesis 3.3).
  CHECK(b0.block.cm == 1);
  CHECK(b0.block.chained == 0);
  CHECK(b0.block.has_next == 1);
  CHECK(b5.block.chained == 1);
  CHECK(b5.block.has_next == 0);
  CHECK(e->fid1.size() == 63);
  ack(*e, b4);
  CHECK(ack(*e, b5).completed);
  CHECK(e->fid1.size() == 64);  // the FID comes back at the end of the transfer
}

TEST_CASE("rdma: a flow TID still awaiting its ACK holds the transfer back") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 8 * BS, 0, true)).accepted);
  auto b0 = sched(*e);
  auto b1 = sched(*e);
  ack(*e, b1);
  auto b2 = sched(*e);
  ack(*e, b2);
  auto b3 = sched(*e);
  ack(*e, b3);
  CHECK(b3.tid == 515);
  // Block 4 would take TID 512, whose block 0 is not yet ACKed: nothing to issue, and the
  // transfer is not left in a queue where it would block others.
  CHECK(sched(*e).out == output::none);
  CHECK(e->queued(chan(0, 0)) == 0);
  CHECK(e->ch[chan(0, 0)].md.tid_bitmap == 0x1);
  ack(*e, b0);
  auto b4 = sched(*e);
  CHECK(b4.tid == 512);
  CHECK(b4.block_index == 4);
}

TEST_CASE("rdma: multipath base FID 192 leaps 768, 772, 776, 780, 769, ... 783") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 16 * BS, 0, true, true)).accepted);
  std::vector<std::uint16_t> tids;
  r::actions prev{};
  for (int k = 0; k < 16; ++k) {
    auto a = sched(*e);
    REQUIRE(a.out == output::block);
    tids.push_back(a.tid);
    CHECK(a.pending.qos_fid == 192);
    CHECK(a.pending.qos_class == 2);
    if (k > 0) ack(*e, prev);  // keep one block outstanding
    prev = a;
  }
  const std::vector<std::uint16_t> thesis{768, 772, 776, 780, 769, 773, 777, 781,
                                          770, 774, 778, 782, 771, 775, 779, 783};
  CHECK(tids == thesis);
  CHECK(e->fid4.size() == 15);
  CHECK(ack(*e, prev).completed);
  CHECK(e->fid4.size() == 16);
}

// ---- queue hierarchy (Thesis 2, Fig. 2.4, 3.9.1) ----------------------------------------------

TEST_CASE("rdma: the segmenter serves queues in the thesis's hierarchy") {
  using qc = r::queue_category;
  CHECK(r::queue_index(qc::control, 0, 16) == 0);
  CHECK(r::queue_index(qc::tid_only, 0, 16) == 1);
  CHECK(r::queue_index(qc::unipath_has_fid, 15, 16) == 17);
  CHECK(r::queue_index(qc::unipath_no_fid, 0, 16) == 18);
  CHECK(r::queue_index(qc::multipath_has_fid, 0, 16) == 34);
  CHECK(r::queue_index(qc::multipath_no_fid, 15, 16) == 65);
  CHECK(r::category_of(65, 16) == qc::multipath_no_fid);
  CHECK(engine::queues == 66);

  auto e = make();
  const auto A = chan(0, 0), B = chan(0, 1), C = chan(0, 2), D = chan(0, 4), E = chan(0, 6);
  REQUIRE(post(*e, A, mem(0, 2 * BS, 3, true)).accepted);              // 1xFID, intra 3
  REQUIRE(post(*e, B, mem(0, 2 * BS, 1, true)).accepted);              // 1xFID, intra 1
  REQUIRE(post(*e, C, mem(0, 2 * BS, 0, true, true)).accepted);        // 4xFID, intra 0
  REQUIRE(post(*e, D, mem(0, 1000, 9, false, false, true)).accepted);  // TID only, notified
  r::transfer in{.dst = 0x40, .size = 8, .is_inline = true};
  REQUIRE(post(*e, E, in).accepted);  // inline: TID only
  std::vector<std::pair<std::uint16_t, output>> order;
  for (;;) {
    auto a = sched(*e);
    if (a.out == output::none) break;
    order.emplace_back(a.channel, a.out);
  }
  const std::vector<std::pair<std::uint16_t, output>> want{
      {D, output::block},           // TID-only queue, in posting order
      {D, output::control_packet},  // its one block is out and 0 = N-1 ACKs are in
      {E, output::inline_packet},   // TID-only queue
      {B, output::block},           // 1xFID without FID: intra 1 before intra 3
      {B, output::block},           // ... now holding a FID: above every 1xFID without
      {A, output::block},          {A, output::block}, {C, output::block},  // 4xFID last
      {C, output::block},
  };
  CHECK(order == want);
}

TEST_CASE("rdma: no head-of-line blocking when the unipath FIDs run out") {
  auto e = make();
  // 64 unipath transfers (intra 15) take every 1xFID.
  std::vector<std::uint16_t> holders;
  for (std::uint32_t i = 0; i < 64; ++i) holders.push_back(chan(1, i));
  for (auto c : holders) REQUIRE(post(*e, c, mem(0, 3 * BS, 15, true)).accepted);
  std::vector<r::actions> first_block(2048);
  for (;;) {
    auto a = sched(*e);
    if (a.out == output::none) break;
    if (a.block_index == 0) first_block[a.channel] = a;
  }
  CHECK(e->fid1.empty());
  // X needs a FID (intra 0, the best intra-priority); Y is not congestion managed; Z is
  // multipath.
  const auto X = chan(2, 0), Y = chan(2, 1), Z = chan(2, 2);
  REQUIRE(post(*e, X, mem(0, 2 * BS, 0, true)).accepted);
  REQUIRE(post(*e, Y, mem(0, BS)).accepted);
  REQUIRE(post(*e, Z, mem(0, BS, 0, true, true)).accepted);
  ack(*e, first_block[holders[5]]);  // a FID holder may issue its third block
  std::vector<std::uint16_t> served;
  for (;;) {
    auto a = sched(*e);
    if (a.out == output::none) break;
    served.push_back(a.channel);
  }
  CHECK(served == std::vector<std::uint16_t>{Y, holders[5], Z});
  CHECK(e->queued(X) == 1);  // waiting in its own queue, blocking nobody

  // A holder finishes: its FID comes back and X takes it.
  const auto h = holders[5];
  const std::uint16_t fid = e->ch[h].md.flow_id;
  for (std::uint16_t t = 0; t < engine::tids; ++t)
    if (e->pending[t].valid && e->pending[t].transfer == h) {
      r::actions fake;
      fake.tid = t;
      fake.pending = e->pending[t];
      ack(*e, fake);
    }
  CHECK(e->status_of(h) == status::done);
  auto x = sched(*e);
  CHECK(x.channel == X);
  CHECK(x.pending.qos_fid == fid);
}

// ---- outstanding blocks and queue membership (Thesis 3.2, 3.9.2, 3.11) ------------------------

TEST_CASE("rdma: at most two outstanding blocks, and a transfer queued at most once") {
  auto e = make();
  const auto c = chan(0, 0);
  REQUIRE(post(*e, c, mem(0, 10 * BS)).accepted);
  CHECK(e->queued(c) == 1);
  auto b0 = sched(*e);
  CHECK(e->queued(c) == 1);  // re-enqueued for its second outstanding block
  auto b1 = sched(*e);
  CHECK(e->queued(c) == 0);
  CHECK(e->ch[c].md.outstanding == 2);
  CHECK(sched(*e).out == output::none);
  ack(*e, b0);
  CHECK(e->queued(c) == 1);
  ack(*e, b1);  // already queued: not queued again
  CHECK(e->queued(c) == 1);
  CHECK(e->ch[c].md.in_sched_fifo == 1);
  sched(*e);
  sched(*e);
  CHECK(e->ch[c].md.outstanding == 2);
  CHECK(e->ch[c].md.block_number == 4);
  CHECK(e->ch[c].md.total_acks() == 2);
}

TEST_CASE("rdma: invariants hold under random ACK order (thesis sizes)") {
  auto e = make();
  std::mt19937_64 rng(2024);
  std::vector<std::uint16_t> chans;
  for (std::uint32_t i = 0; i < 60; ++i) {
    const auto c = chan(i % 16, 2 * (i / 16));
    chans.push_back(c);
    const std::uint32_t kind = static_cast<std::uint32_t>(rng() % 4);
    const std::uint64_t dst = rng() % (4 * BS);
    const auto size = static_cast<std::uint32_t>(1 + rng() % (6 * BS));
    const auto prio = static_cast<std::uint8_t>(rng() % 16);
    r::transfer t = mem(dst, size, prio, kind >= 1, kind == 2, kind == 3);
    REQUIRE(post(*e, c, t).accepted);
  }
  std::vector<r::actions> out;
  std::vector<int> completions(2048, 0);
  std::uint64_t now = 0;
  for (int step = 0; step < 20000 && e->live_transfers > 0; ++step) {
    ++now;
    if (out.empty() || rng() % 3 == 0) {
      auto a = sched(*e, now);
      if (a.out == output::block || a.out == output::inline_packet) out.push_back(a);
    } else {
      const std::size_t i = rng() % out.size();
      const auto a = ack(*e, out[i], now);
      CHECK(a.outcome == r::response_outcome::acked);
      if (a.completed) ++completions[a.channel];
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (auto c : chans) {
      REQUIRE(e->queued(c) <= 1);
      REQUIRE(e->ch[c].md.outstanding <= 2);
    }
  }
  CHECK(e->live_transfers == 0);
  for (auto c : chans) {
    CHECK(completions[c] == 1);
    CHECK(e->status_of(c) == status::done);
  }
  CHECK(e->tid_fifo.full());
  CHECK(e->fid1.full());
  CHECK(e->fid4.full());
}

// ---- completion notification (Thesis 2, 3.9.2, 3.11) ------------------------------------------

TEST_CASE("rdma: the control packet goes when N-1 ACKs are in and the last block is out") {
  auto e = make();
  const auto c = chan(0, 0);
  REQUIRE(post(*e, c, mem(0, 3 * BS, 0, false, false, true)).accepted);
  CHECK(e->ch[chan(0, 1)].held);  // the 64-byte descriptor's second line
  CHECK(!post(*e, chan(0, 1), mem(0, 10)).accepted);
  auto b0 = sched(*e);
  auto b1 = sched(*e);
  ack(*e, b0);
  auto b2 = sched(*e);  // the last block, with 1 ACK of 3 in
  CHECK(b2.block.notify == 1);
  CHECK(b2.pending.last == 1);
  CHECK(b2.pending.has_notification == 1);
  CHECK(b1.block.notify == 0);
  CHECK(sched(*e).out == output::none);  // 1 != N-1
  ack(*e, b1);                           // 2 = N-1 ACKs
  auto ctl = sched(*e);
  REQUIRE(ctl.out == output::control_packet);
  CHECK(ctl.pkt.type == r::packet_type::control);
  CHECK(ctl.pkt.control.tid == b2.tid);
  CHECK(ctl.pkt.control.seq == b2.pending.seq);
  CHECK(ctl.pkt.control.block_seq == b2.pending.block_seq);
  CHECK(ctl.pkt.control.blocks == 3);
  CHECK(ctl.pkt.control.notify_addr == 0x0001'0000'0000'F000);
  CHECK(ctl.pkt.payload_len == 8);
  CHECK(ctl.payload[6] == 0x12);
  CHECK(ctl.payload[7] == 0x34);
  CHECK(e->status_of(c) == status::busy);
  const auto done = ack(*e, b2);
  CHECK(done.completed);
  CHECK(done.final_status == status::done);
  CHECK(!e->ch[chan(0, 1)].held);
}

TEST_CASE("rdma: the control packet follows the last block when N-1 ACKs came first") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 3 * BS, 0, false, false, true)).accepted);
  auto b0 = sched(*e);
  auto b1 = sched(*e);
  ack(*e, b0);
  ack(*e, b1);
  auto b2 = sched(*e);
  CHECK(b2.block_index == 2);
  auto ctl = sched(*e);
  CHECK(ctl.out == output::control_packet);
  CHECK(sched(*e).out == output::none);
  // Without a notification there is never a control packet.
  REQUIRE(post(*e, chan(0, 4), mem(0, 1000)).accepted);
  auto s = sched(*e);
  CHECK(s.out == output::block);
  CHECK(sched(*e).out == output::none);
  CHECK(ack(*e, s).completed);
}

// ---- status reads (Thesis 3.4, 3.6.2) ----------------------------------------------------------

TEST_CASE("rdma: single status read returns DONE once and frees the channel") {
  auto e = make();
  const auto c = chan(1, 3);
  REQUIRE(post(*e, c, mem(0, 100)).accepted);
  CHECK(r::advance(*e, r::event::read(1, 3), 0).status_bits == 1);  // BUSY, unchanged
  CHECK(r::advance(*e, r::event::read(1, 3), 0).status_bits == 1);
  const auto a = sched(*e);
  CHECK(ack(*e, a).completed);
  const auto again = post(*e, c, mem(0, 100));  // DONE is not IDLE: read it first
  CHECK(!again.accepted);
  CHECK(again.refused.code == scaleup::wire::errc::bad_value);
  CHECK(r::advance(*e, r::event::read(1, 3), 0).status_bits == 2);  // DONE ...
  CHECK(r::advance(*e, r::event::read(1, 3), 0).status_bits == 0);  // ... then IDLE
  CHECK(post(*e, c, mem(0, 100)).accepted);
  // Read channels take no descriptors (remote reads are not modelled).
  CHECK(post(*e, chan(0, 64), mem(0, 100)).refused.code == scaleup::wire::errc::unsupported);
}

TEST_CASE("rdma: collective read returns 32 channels and clears DONE and ERROR") {
  auto e = make();
  const r::config thesis_mode{.retransmit = false};
  auto finish = [&](std::uint32_t k, bool fail) {
    REQUIRE(post(*e, chan(2, k), mem(0, 100)).accepted);
    const auto a = sched(*e);
    const auto done = fail ? nack(*e, a, 0, thesis_mode) : ack(*e, a);
    CHECK(done.completed);
  };
  finish(0, false);
  finish(5, false);
  finish(7, true);  // a NACK, as built, is an ERROR
  finish(31, false);
  finish(40, false);                                    // in the other half
  REQUIRE(post(*e, chan(2, 9), mem(0, 100)).accepted);  // stays BUSY
  const std::uint64_t want = (std::uint64_t{2} << 0) | (std::uint64_t{2} << 10) |
                             (std::uint64_t{3} << 14) | (std::uint64_t{1} << 18) |
                             (std::uint64_t{2} << 62);
  const auto first = r::advance(*e, r::event::read_collective(2, 0), 0).status_bits;
  CHECK(first == want);
  CHECK(r::status_at(first, 7) == status::error);
  CHECK(r::advance(*e, r::event::read_collective(2, 0), 0).status_bits ==
        (std::uint64_t{1} << 18));  // only BUSY is left
  CHECK(r::advance(*e, r::event::read_collective(2, 1), 0).status_bits ==
        (std::uint64_t{2} << 16));  // channel 40 = bit pair 8 of the second half
  CHECK(r::advance(*e, r::event::read_collective(2, 1), 0).status_bits == 0);
}

// ---- selective retransmission (Thesis 5; scaleup) ----------------------------------------------

TEST_CASE("rdma: a NACK re-issues exactly that block with a new sequence number") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 2 * BS)).accepted);
  auto b0 = sched(*e, 10);
  auto b1 = sched(*e, 11);
  CHECK(nack(*e, b0, 20).outcome == r::response_outcome::retransmit);
  auto again = sched(*e, 30);
  REQUIRE(again.out == output::block);
  CHECK(again.reason == r::issue_reason::nack);
  CHECK(again.tid == b0.tid);
  CHECK(again.block.dst_addr == b0.block.dst_addr);
  CHECK(again.block.block_size == b0.block.block_size);
  CHECK(again.pending.seq == (b1.pending.seq + 1) % 4096);
  CHECK(again.block.seq == again.pending.seq);
  CHECK(again.pending.block_seq == b0.pending.block_seq);
  CHECK(again.pending.retries == 1);
  CHECK(e->stats.reissued_nack == 1);
  // A NACK of the superseded issue changes nothing; an ACK of any issue of the block counts.
  CHECK(nack(*e, b0, 40).outcome == r::response_outcome::stale);
  CHECK(sched(*e, 41).out == output::none);
  CHECK(ack(*e, b0, 50).outcome == r::response_outcome::acked);
  CHECK(ack(*e, again, 51).outcome == r::response_outcome::stale);  // already ACKed
  CHECK(ack(*e, b1, 60).completed);
}

TEST_CASE("rdma: the timeout scan re-issues blocks without an ACK for 20 us") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 2 * BS)).accepted);
  auto b0 = sched(*e, 1'000);
  auto b1 = sched(*e, 6'000);
  CHECK(r::advance(*e, r::event::tick(), 20'999).expired == 0);
  CHECK(r::advance(*e, r::event::tick(), 21'000).expired == 1);
  CHECK(r::advance(*e, r::event::tick(), 21'500).expired == 0);  // already queued
  auto again = sched(*e, 22'000);
  CHECK(again.reason == r::issue_reason::timeout);
  CHECK(again.tid == b0.tid);
  CHECK(r::advance(*e, r::event::tick(), 26'000).expired == 1);  // b1 now
  auto again1 = sched(*e, 26'001);
  CHECK(again1.tid == b1.tid);
  CHECK(r::advance(*e, r::event::tick(), 41'999).expired == 0);
  CHECK(r::advance(*e, r::event::tick(), 42'000).expired == 1);  // b0's second issue
  // The issue time wraps at 2^32 ns without a spurious timeout.
  ack(*e, b0);
  ack(*e, b1);
  REQUIRE(post(*e, chan(0, 2), mem(0, 100)).accepted);
  const std::uint64_t t0 = (std::uint64_t{1} << 32) - 5'000;
  sched(*e, t0);
  CHECK(r::advance(*e, r::event::tick(), t0 + 19'999).expired == 0);
  CHECK(r::advance(*e, r::event::tick(), t0 + 20'000).expired == 1);
}

TEST_CASE("rdma: a notified last block re-sends its control packet on timeout") {
  auto e = make();
  REQUIRE(post(*e, chan(0, 0), mem(0, 100, 0, false, false, true)).accepted);
  auto b = sched(*e, 0);
  CHECK(sched(*e, 1).out == output::control_packet);
  CHECK(r::advance(*e, r::event::tick(), 20'000).expired == 1);
  CHECK(sched(*e, 20'001).out == output::control_packet);
  auto again = sched(*e, 20'002);
  CHECK(again.out == output::block);
  CHECK(again.reason == r::issue_reason::timeout);
  CHECK(ack(*e, b).completed);
}

TEST_CASE("rdma: the retry limit ends a transfer in ERROR and frees its IDs") {
  auto e = make();
  const r::config cfg{.max_retries = 2};
  REQUIRE(post(*e, chan(0, 0), mem(0, 2 * BS, 0, true)).accepted);
  auto b0 = sched(*e, 0, cfg);
  auto b1 = sched(*e, 0, cfg);
  auto cur = b0;
  for (int i = 0; i < 2; ++i) {
    nack(*e, cur, 0, cfg);
    cur = sched(*e, 0, cfg);
    CHECK(cur.reason == r::issue_reason::nack);
  }
  nack(*e, cur, 0, cfg);
  const auto end = sched(*e, 0, cfg);
  CHECK(end.completed);
  CHECK(end.final_status == status::error);
  CHECK(e->status_of(chan(0, 0)) == status::error);
  CHECK(e->fid1.full());
  CHECK(e->live_entries == 0);
  CHECK(ack(*e, b1, 0, cfg).outcome == r::response_outcome::stale);
}

TEST_CASE("rdma: with retransmission off, NACK and mismatched ACK are ERROR (as built)") {
  auto e = make();
  const r::config off{.retransmit = false};
  REQUIRE(post(*e, chan(0, 0), mem(0, BS)).accepted);
  auto b = sched(*e, 0, off);
  CHECK(r::advance(*e, r::event::tick(), 1'000'000, off).expired == 0);  // no timeouts
  auto wrong = response_to(b);
  wrong.seq = static_cast<std::uint16_t>(wrong.seq + 1);
  const auto a = r::advance(*e, r::event::respond(wrong), 0, off);
  CHECK(a.outcome == r::response_outcome::error);
  CHECK(a.final_status == status::error);
}

// ---- sequence numbers and wraparound (Thesis 3.13; scaleup) -----------------------------------

// 16 sequence numbers, 32 FIFO TIDs, 4 KB blocks: wraparound every 16 issues.
constexpr r::params tiny{.pages = 1,
                         .write_channels = 8,
                         .read_channels = 0,
                         .block_size = 4096,
                         .transactions = 64,
                         .unipath_fids = 4,
                         .multipath_groups = 1,
                         .intra_priorities = 2,
                         .seq_bits = 4};
static_assert(tiny.valid());

TEST_CASE("rdma: sequence numbers wrap, and a TID never repeats its last block's identity") {
  r::qos_engine<tiny> e;
  std::vector<int> last_id(64, -1);
  std::vector<std::uint16_t> seqs;
  for (int i = 0; i < 200; ++i) {
    REQUIRE(post(e, 0, mem(0, 100)).accepted);
    auto a = sched(e, static_cast<std::uint64_t>(i));
    REQUIRE(a.out == output::block);
    CHECK(a.pending.seq < 16);
    CHECK(static_cast<int>(a.pending.block_seq) != last_id[a.tid]);
    last_id[a.tid] = a.pending.block_seq;
    seqs.push_back(a.pending.seq);
    CHECK(ack(e, a).completed);
    CHECK(r::advance(e, r::event::read(0, 0), 0).status_bits == 2);
  }
  // Every 32 transfers a TID comes back when the counter is where it was: one number skipped.
  CHECK(seqs[1] == 1);
  CHECK(seqs[15] == 15);
  CHECK(seqs[16] == 0);
  CHECK(seqs[32] == 1);  // TID 0 again, whose last identity was 0
}

TEST_CASE("rdma: a block survives the counter wrapping past it several times") {
  r::qos_engine<tiny> e;
  REQUIRE(post(e, 0, mem(0, 2 * 4096)).accepted);
  const auto stuck = sched(e);  // seq 0, its ACK slow to come
  const auto other = sched(e);
  CHECK(stuck.pending.seq == 0);
  for (int i = 0; i < 40; ++i) {  // 40 issues: the 4-bit counter wraps twice and more
    REQUIRE(post(e, 2, mem(0, 100)).accepted);
    const auto a = sched(e);
    CHECK(ack(e, a).completed);
    r::advance(e, r::event::read(0, 2), 0);
  }
  CHECK(e.next_seq.value == (2 + 40) % 16);
  // Its NACK still names its latest issue, and the re-issue keeps its identity.
  CHECK(nack(e, stuck).outcome == r::response_outcome::retransmit);
  const auto again = sched(e);
  CHECK(again.tid == stuck.tid);
  CHECK(again.pending.block_seq == 0);
  CHECK(again.pending.seq == 42 % 16);
  CHECK(e.current(again.tid, again.pending.seq));
  CHECK(!e.current(stuck.tid, stuck.pending.seq));  // the send unit drops the old issue
  // An ACK of either issue acknowledges the block.
  CHECK(ack(e, stuck).outcome == r::response_outcome::acked);
  CHECK(ack(e, other).completed);
}

// 4 FIFO TIDs and 8 sequence numbers: TIDs and numbers come round quickly.
constexpr r::params mini{.pages = 1,
                         .write_channels = 8,
                         .read_channels = 0,
                         .block_size = 4096,
                         .flow_blocks = 2,
                         .paths = 1,
                         .transactions = 8,
                         .unipath_fids = 1,
                         .multipath_groups = 1,
                         .intra_priorities = 1,
                         .seq_bits = 3};
static_assert(mini.valid());

TEST_CASE("rdma: after an ERROR a TID avoids both identities the receiver may hold") {
  r::qos_engine<mini> e;
  const r::config off{.retransmit = false};
  auto one = [&](bool fail) {
    REQUIRE(post(e, 0, mem(0, 100)).accepted);
    const auto a = sched(e, 0, off);
    const auto end = fail ? nack(e, a, 0, off) : ack(e, a, 0, off);
    CHECK(end.completed);
    r::advance(e, r::event::read(0, 0), 0);
    return a;
  };
  CHECK(one(false).pending.seq == 0);  // TID 0, ACKed: the receiver holds identity 0
  for (int i = 1; i <= 3; ++i) one(false);
  const auto b = one(true);  // TID 0 again, seq 4, ends in ERROR: maybe never seen
  CHECK(b.tid == 0);
  CHECK(b.pending.seq == 4);
  for (int i = 1; i <= 3; ++i) one(false);
  const auto c = one(false);  // TID 0, counter back at 0: the receiver may still hold 0
  CHECK(c.tid == 0);
  CHECK(c.pending.seq == 1);
}

TEST_CASE("rdma: a collective read covers what a smaller page has") {
  r::qos_engine<tiny> e;  // 8 write channels: one short half
  REQUIRE(post(e, 3, mem(0, 100)).accepted);
  CHECK(ack(e, sched(e)).completed);
  CHECK(r::advance(e, r::event::read_collective(0, 0), 0).status_bits == (2u << 6));
  CHECK(r::advance(e, r::event::read_collective(0, 0), 0).status_bits == 0);
  CHECK(r::advance(e, r::event::read_collective(0, 1), 0).status_bits == 0);  // no second half
}

TEST_CASE("rdma: step is advance by value") {
  r::qos_engine<tiny> e;
  const auto [e1, a1] = r::step(e, r::event::post(0, mem(0, 100)), 0);
  CHECK(a1.accepted);
  CHECK(e.status_of(0) == status::idle);  // the original is untouched
  CHECK(e1.status_of(0) == status::busy);
  const auto [e2, a2] = r::step(e1, r::event::schedule(), 1);
  CHECK(a2.out == output::block);
  CHECK(e2.live_entries == 1);
}

}  // namespace
