// A receiver of ExaJet packets from one sender: it collects each block's packets, delivers a
// block once, answers with ACK or NACK, and creates the completion notification (Thesis 3.11,
// 3.13; Terminology "control packet"). The thesis's receiver belongs to another work, so this
// is the model the engine is tested against, written to the contract the engine relies on:
//
//   * per TID, one context: the block (by its identity, the block sequence), the latest issue
//     seen (by sequence number), the packets of that issue;
//   * a packet with another sequence number than the latest issue's starts collecting that
//     issue afresh. The thesis ignores packets with a lower number (Thesis 3.13); after
//     wraparound "lower" is ambiguous, and with the order guarantee below a different number
//     is always the newer issue, so numbers are only compared for equality;
//   * a block with another identity on the same TID is a new block: the sender reuses a TID
//     only after the previous block's ACK (or its end in ERROR), and never with the identity
//     of the TID's last issued or last ACKed block;
//   * a missing packet (a gap in the packet index of one issue) is NACKed once per issue; a
//     lost last packet is left to the sender's timeout;
//   * a block is ACKed once complete; a duplicate of a delivered block is ACKed again once per
//     issue (its earlier ACK may have been lost) and never delivered twice;
//   * a block flagged `notify` is ACKed only when the control packet naming it has arrived
//     too; then, and only once, the notification is created.
//
// Order guarantee: packets of one TID arrive in the order they were sent (a flow keeps one
// path, Thesis 3.8), and the sender sends nothing of an issue once a newer issue or a newer
// block exists at that TID (qos_engine::current). Under it, exactly-once delivery holds for
// any counter width. The one case left open is a TID on which two blocks in a row ended in
// ERROR, the first partly delivered and the second never seen: a later block there could
// reuse the first one's identity (one chance in the sequence space).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/rdma/params.hpp"

namespace scaleup::rdma {

enum class rx_drop : std::uint8_t { none, duplicate, bad_packet };

struct receiver_actions {
  bool deliver = false;  // a block (or inline payload) is complete: its bytes are now in memory
  std::uint16_t channel = 0;
  std::uint16_t tid = 0;
  std::uint16_t block_seq = 0;
  std::uint64_t bytes = 0;
  bool respond = false;  // send `response` (an ACK or NACK packet, header and footer)
  packet response{};
  bool notification = false;  // the completion notification is created (once per transfer)
  std::uint64_t notify_addr = 0;
  std::uint64_t notify_value = 0;
  rx_drop dropped = rx_drop::none;
};

struct receiver_stats {
  std::uint64_t packets = 0, blocks = 0, bytes = 0, notifications = 0;
  std::uint64_t acks = 0, nacks = 0, duplicates = 0;
};

template <params P = params{}>
struct receiver {
  struct context {
    bool used = false;
    std::uint16_t block_seq = 0;
    std::uint16_t issue = 0;  // the latest issue seen
    std::uint64_t got = 0;    // packets of that issue, by index
    std::uint64_t bytes = 0;
    std::uint8_t next = 0;  // the packet index expected next in that issue
    std::uint8_t pkts = 0;  // packets in the block (0: not known yet)
    bool nacked = false;    // this issue's gap has had its NACK
    bool acked = false;     // this issue has had its ACK
    bool complete = false;  // delivered
    bool notify = false;    // waits for a control packet
    bool ctl_seen = false;
    bool notified = false;
    std::uint16_t channel = 0, src_coord = 0, pd = 0;
    std::uint8_t priority = 0;
    std::uint64_t notify_addr = 0, notify_value = 0;
  };

  std::uint16_t coord = 0;  // this node: the source coordinates of its responses
  std::array<context, P.transactions> ctx{};
  receiver_stats stats{};

  constexpr void reset(std::uint16_t node) noexcept {
    coord = node;
    ctx.fill(context{});
    stats = {};
  }

  constexpr receiver_actions advance(const packet& p, wire::bytes payload = {}) noexcept {
    receiver_actions a;
    ++stats.packets;
    if (is_data(p.type))
      on_data(p, a);
    else if (p.type == packet_type::control)
      on_control(p, payload, a);
    else
      a.dropped = rx_drop::bad_packet;
    return a;
  }

 private:
  constexpr void respond(const context& x, std::uint16_t tid, packet_type type, nack_cause why,
                         receiver_actions& a) noexcept {
    a.respond = true;
    a.response = packet{};
    a.response.type = type;
    a.response.response.type = static_cast<std::uint8_t>(type);
    a.response.response.cause = static_cast<std::uint8_t>(why);
    a.response.response.tid = tid;
    a.response.response.seq = x.issue;
    a.response.response.block_seq = x.block_seq;
    a.response.response.dst_coord = x.src_coord;
    a.response.footer.src_coord = coord;
    a.response.footer.pd = x.pd;
    a.response.footer.channel = x.channel;
    a.response.footer.priority = x.priority;
    if (type == packet_type::ack)
      ++stats.acks;
    else
      ++stats.nacks;
  }

  // Finds or starts the context of (tid, block) for an issue.
  constexpr void enter(std::uint16_t tid, std::uint16_t block_seq, std::uint16_t seq,
                       const packet_footer& f) noexcept {
    context& x = ctx[tid];
    if (!x.used || x.block_seq != block_seq) {
      x = context{};
      x.used = true;
      x.block_seq = block_seq;
      x.issue = seq;
    } else if (seq != x.issue) {
      x.issue = seq;  // a re-issue: collect again (Thesis 3.13)
      x.got = 0;
      x.bytes = 0;
      x.next = 0;
      x.nacked = false;
      x.acked = false;
    }
    x.channel = f.channel;
    x.src_coord = f.src_coord;
    x.pd = f.pd;
    x.priority = f.priority;
  }

  // The block and its notification are both in: notify once, then ACK.
  constexpr void settle(std::uint16_t tid, receiver_actions& a) noexcept {
    context& x = ctx[tid];
    if (!x.complete || x.acked) return;
    if (x.notify && !x.ctl_seen) return;
    if (x.notify && !x.notified) {
      x.notified = true;
      a.notification = true;
      a.notify_addr = x.notify_addr;
      a.notify_value = x.notify_value;
      a.channel = x.channel;
      ++stats.notifications;
    }
    x.acked = true;
    respond(x, tid, packet_type::ack, nack_cause::none, a);
  }

  constexpr void on_data(const packet& p, receiver_actions& a) noexcept {
    const data_header& h = p.data;
    const std::uint16_t tid = static_cast<std::uint16_t>(h.tid % P.transactions);
    enter(tid, h.block_seq, h.seq, p.footer);
    context& x = ctx[tid];
    a.tid = tid;
    a.block_seq = x.block_seq;
    a.channel = x.channel;
    if (h.notify) x.notify = true;
    if (x.complete) {
      a.dropped = rx_drop::duplicate;
      ++stats.duplicates;
      settle(tid, a);
      return;
    }
    const std::uint64_t bit = std::uint64_t{1} << (h.pkt % 64);
    if (x.got & bit) {
      a.dropped = rx_drop::duplicate;
      ++stats.duplicates;
      return;
    }
    if (x.pkts == 0) x.pkts = p.footer.pkts;
    x.got |= bit;
    x.bytes += h.len;
    const bool gap = h.pkt > x.next;
    if (h.pkt >= x.next) x.next = static_cast<std::uint8_t>(h.pkt + 1);
    if (x.pkts != 0 && static_cast<std::uint32_t>(std::popcount(x.got)) >= x.pkts) {
      x.complete = true;
      a.deliver = true;
      a.bytes = x.bytes;
      ++stats.blocks;
      stats.bytes += x.bytes;
      settle(tid, a);
    } else if (gap && !x.nacked) {
      x.nacked = true;
      respond(x, tid, packet_type::nack, nack_cause::missing_packet, a);
    }
  }

  constexpr void on_control(const packet& p, wire::bytes payload, receiver_actions& a) noexcept {
    const control_header& h = p.control;
    const std::uint16_t tid = static_cast<std::uint16_t>(h.tid % P.transactions);
    enter(tid, h.block_seq, h.seq, p.footer);
    context& x = ctx[tid];
    a.tid = tid;
    a.block_seq = x.block_seq;
    a.channel = x.channel;
    if (x.ctl_seen && x.complete && x.acked) {
      // A re-sent control packet: its block's ACK may have been lost.
      x.acked = false;
      a.dropped = rx_drop::duplicate;
      ++stats.duplicates;
    }
    x.notify = true;
    x.ctl_seen = true;
    x.notify_addr = h.notify_addr;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < control_payload_size && i < payload.size(); ++i)
      v = (v << 8) | payload[i];
    x.notify_value = v;
    settle(tid, a);
  }
};

}  // namespace scaleup::rdma
