// The sizes of the RDMA QoS engine (seed 004, the RDMA QoS thesis; cited below as "Thesis
// <section>"). Every number the thesis gives is the default of a compile-time parameter, so
// that a test can shrink the engine to a size where wraparound and exhaustion come quickly,
// and a vendor with another table size changes one value.
//
// Sizes are a template parameter (they size the engine's arrays); behaviour that does not
// size anything (the timeout, the retry limit, whether retransmission is on) is a run-time
// `config`, like the transport machines' configs.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>

namespace scaleup::rdma {

struct params {
  std::uint32_t pages = 16;             // protection domains (Thesis 2, 3.1)
  std::uint32_t write_channels = 64;    // per page (Thesis 2, 3.1)
  std::uint32_t read_channels = 64;     // per page; remote reads are future work (Thesis 5)
  std::uint32_t block_size = 65536;     // bytes; BLOCKSIZE of Thesis 3.9, Fig. 3.10
  std::uint32_t packet_payload = 1024;  // bytes per ExaJet packet (Thesis 2, Terminology)
  std::uint32_t flow_blocks = 4;        // blocks, hence TIDs, per flow (Thesis 3.8)
  std::uint32_t paths = 4;              // FIDs a multipath transfer holds at once (Thesis 3.8)
  std::uint32_t max_outstanding = 2;    // blocks per transfer awaiting an ACK (Thesis 3.9.2)
  std::uint32_t transactions = 1024;    // Transaction and Pending tables (Thesis 3.3, 3.5)
  std::uint32_t unipath_fids = 64;      // 1xFID FIFO (Thesis 3.8)
  std::uint32_t multipath_groups = 16;  // 4xFID FIFO: groups of `paths` FIDs (Thesis 3.8)
  std::uint32_t intra_priorities = 16;  // per congestion-managed class (Thesis 2, 3.9.1)
  std::uint32_t inline_max = 32;        // bytes of payload a descriptor carries (Thesis 2)
  unsigned seq_bits = 12;               // the sequence number the engine compares (Thesis 3.5)

  // Derived sizes, each as the thesis derives it.
  constexpr std::uint32_t channels_per_page() const noexcept {
    return write_channels + read_channels;
  }
  constexpr std::uint32_t channels() const noexcept { return pages * channels_per_page(); }
  constexpr std::uint32_t status_channels() const noexcept { return pages * write_channels; }
  // "half the size of the Transaction Table" (Thesis 3.8): the TID FIFO's IDs; the other half
  // belongs to the flows.
  constexpr std::uint32_t fifo_tids() const noexcept { return transactions / 2; }
  // "half the Transaction Table size over the number of blocks in a flow" (Thesis 3.8); the
  // first FID is the one whose TIDs start where the FIFO's end, 512 / 4 = 128.
  constexpr std::uint32_t fids() const noexcept { return fifo_tids() / flow_blocks; }
  constexpr std::uint32_t first_fid() const noexcept { return fifo_tids() / flow_blocks; }
  constexpr std::uint32_t first_multipath_fid() const noexcept {
    return first_fid() + unipath_fids;
  }
  // "Total queue count = 2 + (4 x intra priority count)" (Thesis 3.9.1).
  constexpr std::uint32_t queues() const noexcept { return 2 + 4 * intra_priorities; }
  constexpr std::uint32_t flow_tids() const noexcept { return paths * flow_blocks; }
  constexpr std::uint32_t seq_space() const noexcept { return std::uint32_t{1} << seq_bits; }

  // What the formats and the engine's arrays can hold. The widths on the right are the
  // thesis's field widths (Thesis 3.2, 3.3, 3.5).
  constexpr bool valid() const noexcept {
    return pages >= 1 && write_channels >= 1 && channels() <= 2048  // transfer ID: 11 bits
           && block_size >= packet_payload && packet_payload >= 1 && packet_payload <= 1024 &&
           block_size / packet_payload <= 64             // packet index: 6 bits
           && block_size <= 65536                        // block size: 16 bits, 0 meaning 64 KB
           && transactions >= 4 && transactions <= 1024  // TID: 10 bits
           && transactions % 2 == 0 && flow_blocks >= 1 && paths >= 1 &&
           fifo_tids() % flow_blocks == 0 && flow_tids() <= 16  // TID bitmap: 16 bits
           && unipath_fids + multipath_groups * paths == fids() &&
           first_fid() + fids() <= 512                         // flow ID: 9 bits
           && max_outstanding >= 1 && max_outstanding <= 15    // outstanding: 4 bits
           && intra_priorities >= 1 && intra_priorities <= 16  // priority: 4 bits
           && inline_max <= 32 && seq_bits >= 3 && seq_bits <= 12;
  }
};

inline constexpr params thesis{};
static_assert(thesis.valid());
static_assert(thesis.channels() == 2048 && thesis.status_channels() == 1024);
static_assert(thesis.fifo_tids() == 512 && thesis.fids() == 128 && thesis.first_fid() == 128);
static_assert(thesis.first_multipath_fid() == 192 && thesis.queues() == 66);

// Run-time behaviour. Defaults: the thesis's timeout, and retransmission on (its future work,
// Thesis 5); `retransmit = false` is the engine as the thesis built it, where a NACK or a
// mismatched ACK sets the channel to ERROR (Thesis 3.4, 3.11).
struct config {
  std::uint64_t timeout = 20'000;  // ns without an ACK before a block is sent again (Thesis 2)
  std::uint32_t max_retries = 15;  // re-issues of a block, then ERROR; at most 15 (4 bits)
  bool retransmit = true;
  std::uint16_t coord = 0;  // this node's coordinates: where ACKs come back to
};

}  // namespace scaleup::rdma
