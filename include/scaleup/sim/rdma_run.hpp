// An end-to-end run: the QoS engine, a send unit, a lossy link each way and the receiver
// model, driven by simulated time from a list of transfer requests. For tests, examples and a
// CLI, to show transfers completing exactly once when data packets, ACKs, NACKs and control
// packets are lost. Deterministic: a seed fixes every loss.
//
// What the run models, with the thesis's numbers as defaults:
//   * the clock (150 MHz) and the 512-bit datapath: a packet takes a header cycle, a footer
//     cycle and one cycle per 64 payload bytes, so 1 KB packets reach 16/18 of 76.8 Gbps,
//     68.3 Gbps (Thesis 4.3);
//   * the segmenter serves one transfer per cycle while the send unit has room: at most
//     `send_queue_blocks` blocks waiting or being cut into packets (the Transaction Table's
//     valid/ready handshake, Thesis 3.9.3) and `packet_queue` inline or control packets
//     (the Packet FIFO, Thesis 3.9.4), which go out first, between a block's packets;
//   * the send unit sends an issue only while it is the latest at its TID (it reads the
//     Transaction Table when it sends): a re-issue made moot by an ACK, or an issue
//     superseded by a newer one, is dropped, even half sent;
//   * the timeout scan runs every `scan_period_ns` (1024 entries take 5.12 us at 200 MHz,
//     Thesis 2), so a lost block is re-sent 20 to 25 us after it went out;
//   * each direction is a link with a fixed delay that loses packets at random, never reorders
//     them; responses are serialised on the way back like any packet;
//   * after a completion the run reads the channel's status once, as polling software would,
//     which returns the channel to IDLE.
// Simulation scaffolding only: no heap, but the rdma_testbed is large (it holds a full engine);
// keep it in static or heap storage.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/rdma/qos_engine.hpp"
#include "scaleup/rdma/receiver.hpp"
#include "scaleup/rdma/send_unit.hpp"
#include "scaleup/sim/splitmix.hpp"

namespace scaleup::sim {

struct rdma_run_config {
  rdma::config engine{};
  std::uint16_t receiver_coord = 1;
  std::uint32_t clock_mhz = 150;      // Thesis 4.1, 4.3
  std::uint32_t datapath_bits = 512;  // Thesis 4.3
  std::uint64_t link_delay_ns = 250;  // one way
  std::uint32_t send_queue_blocks = 2;
  std::uint32_t packet_queue = 16;
  std::uint64_t scan_period_ns = 5'120;
  double loss_data = 0;  // write and inline packets
  double loss_ack = 0;
  double loss_nack = 0;
  double loss_control = 0;
  std::uint64_t seed = 1;
  std::uint64_t time_limit_ns = 1'000'000'000;
};

struct rdma_request {
  std::uint64_t at_ns = 0;
  std::uint16_t channel = 0;
  rdma::transfer xfer{};
};

struct rdma_transfer_outcome {
  std::uint16_t channel = 0;
  std::uint32_t size = 0;
  std::uint8_t priority = 0;
  rdma::transfer_class cls = rdma::transfer_class::tid_only;
  bool is_inline = false;
  bool notify = false;
  bool accepted = false;
  std::uint64_t posted_ns = 0, first_issue_ns = 0, completed_ns = 0;
  rdma::status final_status = rdma::status::busy;
  rdma::status read_status = rdma::status::idle;  // what the status read after completion returned
  std::uint32_t completions = 0;
  std::uint32_t notifications = 0;
  std::uint32_t order = 0;  // 1 = completed first
  std::uint32_t blocks_expected = 0, blocks_delivered = 0;
  std::uint64_t bytes_delivered = 0;
  std::uint32_t reissues = 0;

  constexpr std::uint64_t latency_ns() const noexcept { return completed_ns - posted_ns; }
  // Completed exactly once, every byte delivered once, the notification (if asked) once.
  constexpr bool exactly_once() const noexcept {
    return accepted && completions == 1 && final_status == rdma::status::done &&
           read_status == rdma::status::done && bytes_delivered == size &&
           blocks_delivered == blocks_expected && notifications == (notify ? 1u : 0u);
  }
};

template <std::size_t N>
struct rdma_run_report {
  std::array<rdma_transfer_outcome, N> transfers{};
  std::size_t count = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t data_packets = 0, data_lost = 0, control_packets = 0, control_lost = 0;
  std::uint64_t acks = 0, acks_lost = 0, nacks = 0, nacks_lost = 0;
  std::uint64_t payload_bytes = 0;  // sent, re-sent blocks included
  std::uint64_t reissues = 0, timeouts = 0;
  std::uint64_t superseded = 0;  // issues the send unit dropped: a newer issue or block came
  bool timed_out = false;        // hit time_limit_ns
  bool overflow = false;         // a link held more packets than the rdma_testbed's rings
  rdma::engine_stats engine{};
  rdma::receiver_stats receiver{};

  constexpr std::span<const rdma_transfer_outcome> list() const noexcept {
    return {transfers.data(), count};
  }
  constexpr bool all_exactly_once() const noexcept {
    if (timed_out || overflow) return false;
    for (const auto& t : list())
      if (!t.exactly_once()) return false;
    return true;
  }
};

// What crosses a link, for captures: the packet, its payload and whether the link lost it.
struct rdma_wire_record {
  std::uint64_t at_ns = 0;  // when its last byte left the sender
  bool to_receiver = true;
  bool lost = false;
  const rdma::packet* pkt = nullptr;
  wire::bytes payload{};
};

struct rdma_no_sink {
  constexpr void operator()(const rdma_wire_record&) const noexcept {}
};

// Block payload as a capture shows it: a byte pattern of the destination address (the one
// address a data packet carries), so a re-sent packet carries the same bytes as the first.
constexpr std::uint8_t rdma_memory_byte(std::uint64_t addr) noexcept {
  return static_cast<std::uint8_t>((addr * 0x9Du) ^ (addr >> 8) ^ 0x5Au);
}

template <rdma::params P = rdma::params{}>
struct rdma_testbed {
  static constexpr std::size_t max_jobs = 16;
  static constexpr std::size_t max_packets = 64;
  static constexpr std::size_t link_capacity = 1024;

  struct job {
    rdma::block_descriptor block{};
    rdma::pending_entry pending{};
    std::uint16_t tid = 0;
    std::uint32_t next = 0, pkts = 0;
  };
  struct queued_packet {
    rdma::packet pkt{};
    std::array<std::uint8_t, rdma::inline_max> small{};  // inline or control payload
  };
  struct in_flight {
    std::uint64_t at = 0;  // ps: arrival
    rdma::packet pkt{};
    std::array<std::uint8_t, rdma::inline_max> small{};
  };
  template <class T, std::size_t C>
  struct ring {
    std::array<T, C> slot{};
    std::size_t head = 0, count = 0;
    constexpr bool empty() const noexcept { return count == 0; }
    constexpr bool full() const noexcept { return count == C; }
    constexpr T& front() noexcept { return slot[head]; }
    constexpr T& back() noexcept { return slot[(head + count - 1) % C]; }
    constexpr bool push(const T& v) noexcept {
      if (full()) return false;
      slot[(head + count) % C] = v;
      ++count;
      return true;
    }
    constexpr void pop() noexcept {
      head = (head + 1) % C;
      --count;
    }
    constexpr void clear() noexcept { head = count = 0; }
  };

  rdma::qos_engine<P> sender{};
  rdma::receiver<P> rx{};
  ring<job, max_jobs> jobs{};
  ring<queued_packet, max_packets> packets{};
  ring<in_flight, link_capacity> forward{};
  ring<in_flight, link_capacity> backward{};
  std::array<std::int32_t, P.channels()> request_of{};
  std::array<std::uint8_t, rdma::max_payload> buffer{};
};

template <std::size_t N, rdma::params P, class Sink = rdma_no_sink>
rdma_run_report<N> run_rdma(rdma_testbed<P>& tb, std::span<const rdma_request> reqs,
                            const rdma_run_config& rc, Sink&& sink = {}) {
  constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();
  constexpr bool capture = !std::is_same_v<std::remove_cvref_t<Sink>, rdma_no_sink>;
  rdma_run_report<N> rep;
  tb.sender.reset();
  tb.rx.reset(rc.receiver_coord);
  tb.jobs.clear();
  tb.packets.clear();
  tb.forward.clear();
  tb.backward.clear();
  tb.request_of.fill(-1);
  std::uint64_t rng = rc.seed;

  const std::size_t n = std::min(reqs.size(), N);
  rep.count = n;
  std::array<std::uint32_t, N> order{};
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n),
                   [&](std::uint32_t a, std::uint32_t b) { return reqs[a].at_ns < reqs[b].at_ns; });
  for (std::size_t i = 0; i < n; ++i) {
    const rdma::transfer& x = reqs[i].xfer;
    auto& o = rep.transfers[i];
    o.channel = reqs[i].channel;
    o.size = x.size;
    o.priority = x.priority;
    o.cls = !x.cm ? rdma::transfer_class::tid_only
                  : (x.multipath ? rdma::transfer_class::multipath : rdma::transfer_class::unipath);
    o.is_inline = x.is_inline;
    o.notify = x.notify;
    o.blocks_expected =
        x.is_inline ? 1
                    : static_cast<std::uint32_t>(rdma::total_blocks(x.dst, x.size, P.block_size));
  }

  const std::uint64_t cycle = 1'000'000 / rc.clock_mhz;  // ps
  const std::uint64_t delay = rc.link_delay_ns * 1000;
  const std::uint64_t period = rc.scan_period_ns * 1000;
  const auto packet_time = [&](std::uint32_t len) {
    return (2 + (std::uint64_t{len} * 8 + rc.datapath_bits - 1) / rc.datapath_bits) * cycle;
  };
  std::size_t cursor = 0;
  std::uint64_t now = 0, next_sched = 0, tx_free = 0, back_free = 0, next_tick = period;
  bool sched_wanted = false;
  std::uint32_t completed = 0;
  const rdma::config& cfg = rc.engine;

  const auto outcome_of = [&](std::uint16_t c) -> rdma_transfer_outcome* {
    if (c >= tb.request_of.size() || tb.request_of[c] < 0) return nullptr;
    return &rep.transfers[static_cast<std::size_t>(tb.request_of[c])];
  };
  const auto on_completion = [&](const rdma::actions& a) {
    if (!a.completed) return;
    const auto r =
        advance(tb.sender,
                rdma::event::read(static_cast<std::uint16_t>(a.channel / P.channels_per_page()),
                                  static_cast<std::uint16_t>(a.channel % P.channels_per_page())),
                now / 1000, cfg);
    if (auto* o = outcome_of(a.channel)) {
      ++o->completions;
      o->final_status = a.final_status;
      o->read_status = static_cast<rdma::status>(r.status_bits);
      o->completed_ns = now / 1000;
      o->order = ++completed;
    }
  };
  const auto send_back = [&](const rdma::packet& resp) {
    const std::uint64_t start = std::max(now, back_free);
    back_free = start + packet_time(0);
    const bool nack = resp.type == rdma::packet_type::nack;
    const bool lost = splitmix_chance(rng, nack ? rc.loss_nack : rc.loss_ack);
    if (nack) {
      ++rep.nacks;
      rep.nacks_lost += lost;
    } else {
      ++rep.acks;
      rep.acks_lost += lost;
    }
    if constexpr (capture) sink(rdma_wire_record{back_free / 1000, false, lost, &resp, {}});
    if (!lost && !tb.backward.push({back_free + delay, resp, {}})) rep.overflow = true;
  };

  for (;;) {
    const bool room = tb.jobs.count < std::min<std::size_t>(rc.send_queue_blocks, tb.max_jobs) &&
                      tb.packets.count < std::min<std::size_t>(rc.packet_queue, tb.max_packets);
    const std::uint64_t t_back = tb.backward.empty() ? never : tb.backward.front().at;
    const std::uint64_t t_fwd = tb.forward.empty() ? never : tb.forward.front().at;
    const std::uint64_t t_post = cursor < n ? reqs[order[cursor]].at_ns * 1000 : never;
    if (next_tick < now) next_tick = (now / period + 1) * period;
    const std::uint64_t t_tick = cfg.retransmit && tb.sender.live_entries > 0 ? next_tick : never;
    const std::uint64_t t_sched = sched_wanted && room ? std::max(now, next_sched) : never;
    const std::uint64_t t_tx =
        tb.packets.empty() && tb.jobs.empty() ? never : std::max(now, tx_free);
    const std::uint64_t t = std::min({t_back, t_fwd, t_post, t_tick, t_sched, t_tx});
    if (t == never) break;
    if (t / 1000 > rc.time_limit_ns) {
      rep.timed_out = true;
      break;
    }
    now = t;
    const std::uint64_t ns = now / 1000;

    if (t == t_back) {  // a response reaches the engine (Thesis 3.11)
      const rdma::packet p = tb.backward.front().pkt;
      tb.backward.pop();
      const rdma::actions a = advance(tb.sender, rdma::event::respond(p.response), ns, cfg);
      on_completion(a);
      sched_wanted = true;
    } else if (t == t_fwd) {  // a packet reaches the receiver
      const auto f = tb.forward.front();
      tb.forward.pop();
      const rdma::receiver_actions ra = tb.rx.advance(
          f.pkt, wire::bytes(f.small.data(),
                             f.pkt.payload_len <= rdma::inline_max ? f.pkt.payload_len : 0));
      if (auto* o = outcome_of(ra.channel)) {
        if (ra.deliver) {
          ++o->blocks_delivered;
          o->bytes_delivered += ra.bytes;
        }
        if (ra.notification) ++o->notifications;
      }
      if (ra.respond) send_back(ra.response);
    } else if (t == t_post) {
      const std::uint32_t i = order[cursor++];
      const rdma::actions a =
          advance(tb.sender, rdma::event::post(reqs[i].channel, reqs[i].xfer), ns, cfg);
      auto& o = rep.transfers[i];
      o.accepted = a.accepted;
      o.posted_ns = ns;
      if (a.accepted) {
        tb.request_of[reqs[i].channel] = static_cast<std::int32_t>(i);
        sched_wanted = true;
      }
    } else if (t == t_tick) {
      const rdma::actions a = advance(tb.sender, rdma::event::tick(), ns, cfg);
      rep.timeouts += a.expired;
      next_tick = now + period;
      if (a.expired) sched_wanted = true;
    } else if (t == t_sched) {
      const rdma::actions a = advance(tb.sender, rdma::event::schedule(), ns, cfg);
      next_sched = now + cycle;
      on_completion(a);
      if (a.out == rdma::output::none && !a.completed) sched_wanted = false;
      if (a.out != rdma::output::none) {
        if (auto* o = outcome_of(a.channel)) {
          if (o->first_issue_ns == 0 && a.reason == rdma::issue_reason::first)
            o->first_issue_ns = ns;
          if (a.reason != rdma::issue_reason::first) ++o->reissues;
        }
        if (a.reason != rdma::issue_reason::first) ++rep.reissues;
      }
      if (a.out == rdma::output::block)
        tb.jobs.push(
            {a.block, a.pending, a.tid, 0,
             rdma::packets_in(rdma::block_size_bytes(a.block.block_size), P.packet_payload)});
      if (a.out == rdma::output::inline_packet || a.out == rdma::output::control_packet)
        tb.packets.push({a.pkt, a.payload});
    } else {  // the send unit puts one packet on the link
      typename rdma_testbed<P>::in_flight f;
      bool have = false;
      // It sends an issue only while it is its TID's latest, as it would by reading the
      // Transaction Table when sending (qos_engine::current).
      while (!have && !tb.packets.empty()) {
        const auto& q = tb.packets.front();
        have = q.pkt.type == rdma::packet_type::control
                   ? tb.sender.control_current(q.pkt.footer.channel, q.pkt.control.block_seq)
                   : tb.sender.current(q.pkt.data.tid, q.pkt.data.seq);
        if (have) {
          f.pkt = q.pkt;
          f.small = q.small;
        } else {
          ++rep.superseded;
        }
        tb.packets.pop();
      }
      while (!have && !tb.jobs.empty()) {
        auto& j = tb.jobs.front();
        if (!tb.sender.current(j.tid, j.pending.seq)) {
          ++rep.superseded;
          tb.jobs.pop();
          continue;
        }
        f.pkt = rdma::block_packet(j.block, j.pending, j.tid, cfg.coord, j.next, P.packet_payload);
        if (++j.next == j.pkts) tb.jobs.pop();
        have = true;
      }
      sched_wanted = true;
      if (!have) continue;
      tx_free = now + packet_time(f.pkt.payload_len);
      const bool ctl = f.pkt.type == rdma::packet_type::control;
      const bool lost = splitmix_chance(rng, ctl ? rc.loss_control : rc.loss_data);
      if (ctl) {
        ++rep.control_packets;
        rep.control_lost += lost;
      } else {
        ++rep.data_packets;
        rep.data_lost += lost;
        rep.payload_bytes += f.pkt.payload_len;
      }
      if constexpr (capture) {
        wire::bytes payload(f.small.data(), f.pkt.payload_len);
        if (f.pkt.type == rdma::packet_type::write) {
          for (std::size_t k = 0; k < f.pkt.payload_len; ++k)
            tb.buffer[k] = rdma_memory_byte(f.pkt.data.dst_addr + k);
          payload = wire::bytes(tb.buffer.data(), f.pkt.payload_len);
        }
        sink(rdma_wire_record{tx_free / 1000, true, lost, &f.pkt, payload});
      }
      if (!lost) {
        f.at = tx_free + delay;
        if (!tb.forward.push(f)) rep.overflow = true;
      }
    }
  }
  rep.end_ns = now / 1000;
  rep.engine = tb.sender.stats;
  rep.receiver = tb.rx.stats;
  return rep;
}

}  // namespace scaleup::sim
