// What the RDMA send unit does with a block descriptor: cut it into ExaJet packets of up to
// 1 KB (Thesis 2: "The send unit is responsible to further segment the block into network
// packets"; the send unit itself is another work, Thesis [10]). Kept apart from the QoS engine
// so that a capture generator, the run helper and tests build the same packets.
#pragma once

#include <cstdint>

#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/rdma/pending_transactions.hpp"
#include "scaleup/rdma/segmenter.hpp"
#include "scaleup/rdma/transaction_table.hpp"

namespace scaleup::rdma {

// Packet `index` of the block in Transaction Table entry `tid`. The pending entry, indexed by
// the same TID, supplies what the block descriptor does not hold: the block's identity, the
// channel, the priority and the class.
constexpr packet block_packet(const block_descriptor& b, const pending_entry& p, std::uint16_t tid,
                              std::uint16_t src_coord, std::uint32_t index,
                              std::uint32_t payload = max_payload) noexcept {
  const std::uint32_t bytes = block_size_bytes(b.block_size);
  const std::uint32_t pkts = packets_in(bytes, payload);
  const std::uint32_t off = index * payload;
  const std::uint32_t len = bytes - off < payload ? bytes - off : payload;
  packet out;
  out.type = packet_type::write;
  out.data.type = static_cast<std::uint8_t>(packet_type::write);
  out.data.last = index + 1 == pkts ? 1 : 0;
  out.data.notify = b.notify;
  out.data.cm = b.cm;
  out.data.multipath = p.qos_class == static_cast<std::uint8_t>(transfer_class::multipath) ? 1 : 0;
  out.data.tid = tid;
  out.data.seq = b.seq;
  out.data.block_seq = p.block_seq;
  out.data.pkt = static_cast<std::uint8_t>(index);
  out.data.len = static_cast<std::uint16_t>(len);
  out.data.dst_addr = b.dst_addr + off;
  out.footer.src_coord = src_coord;
  out.footer.pd = b.pd;
  out.footer.channel = p.transfer;
  out.footer.pkts = static_cast<std::uint8_t>(pkts);
  out.footer.priority = p.priority;
  out.payload_len = static_cast<std::uint16_t>(len);
  return out;
}

}  // namespace scaleup::rdma
