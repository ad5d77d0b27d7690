// The Transfer Metadata Table entry (Thesis 3.2): per transfer, what the segmenter and the
// message handler share: blocks issued, blocks outstanding, the flow's TIDs, and what the
// completion notification's control packet needs.
//
// The thesis states 75 bits and lists fields adding up to 76; every listed field keeps its
// width, in the listed order, and the entry is padded to 80 bits (10 bytes).
//
// Total ACKs are not stored: block number - outstanding blocks (Thesis 3.2, 3.9.2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/wire/field.hpp"

namespace scaleup::rdma {

struct transfer_metadata {
  std::uint16_t flow_id = 0;
  std::uint16_t tid_bitmap = 0;
  std::uint8_t next_tid = 0;
  std::uint8_t in_sched_fifo = 0;
  std::uint32_t block_number = 0;
  std::uint8_t outstanding = 0;
  std::uint8_t last_issued = 0;
  std::uint8_t last_acked = 0;
  std::uint16_t last_tid = 0;
  std::uint16_t last_seq = 0;
  std::uint8_t pad = 0;

  constexpr std::uint32_t total_acks() const noexcept { return block_number - outstanding; }
  friend constexpr bool operator==(const transfer_metadata&, const transfer_metadata&) = default;
};

}  // namespace scaleup::rdma

namespace scaleup::wire {

template <>
struct layout<rdma::transfer_metadata> {
  using T = rdma::transfer_metadata;
  static constexpr std::string_view name = "rdma.meta";
  static constexpr std::string_view title = "RDMA transfer metadata entry";
  static constexpr std::string_view seed = "Thesis 3.2";
  static constexpr std::size_t size = 10;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::flow_id, {.name = "flow ID", .filter = "rdma.meta.flow_id", .bit = 0,
                         .width = 9, .description = "FID (first of 4 when multipath)",
                         .seed = "Thesis 3.2, 3.8"}),
      member(&T::tid_bitmap, {.name = "TID bitmap", .filter = "rdma.meta.tid_bitmap", .bit = 9,
                            .width = 16, .type = kind::hex,
                            .description = "Which of the flow's TIDs await an ACK",
                            .seed = "Thesis 3.2, 3.11"}),
      member(&T::next_tid, {.name = "next TID", .filter = "rdma.meta.next_tid", .bit = 25,
                          .width = 4, .description = "Place of the next block's TID in the flow",
                          .seed = "Thesis 3.2, 3.9.2"}),
      member(&T::in_sched_fifo, {.name = "isInSchedulingFIFO", .filter = "rdma.meta.in_queue",
                               .bit = 29, .width = 1, .type = kind::flag,
                               .description = "The transfer is in a scheduling queue (at most once)",
                               .seed = "Thesis 3.2, 3.11"}),
      member(&T::block_number, {.name = "block number", .filter = "rdma.meta.block_number",
                              .bit = 30, .width = 18, .description = "Blocks issued so far",
                              .seed = "Thesis 3.2"}),
      member(&T::outstanding, {.name = "outstanding blocks", .filter = "rdma.meta.outstanding",
                             .bit = 48, .width = 4, .description = "Issued and not yet ACKed",
                             .seed = "Thesis 3.2 (\"outstanding blocks left\"), 3.9.2"}),
      member(&T::last_issued, {.name = "last block issued", .filter = "rdma.meta.last_issued",
                             .bit = 52, .width = 1, .type = kind::flag,
                             .description = "For the completion-notification condition",
                             .seed = "Thesis 3.2"}),
      member(&T::last_acked, {.name = "last block ACKed", .filter = "rdma.meta.last_acked",
                            .bit = 53, .width = 1, .type = kind::flag,
                            .description = "For the completion-notification condition",
                            .seed = "Thesis 3.2"}),
      member(&T::last_tid, {.name = "last transaction ID", .filter = "rdma.meta.last_tid",
                          .bit = 54, .width = 10, .description = "For the control packet header",
                          .seed = "Thesis 3.2"}),
      member(&T::last_seq, {.name = "last sequence number", .filter = "rdma.meta.last_seq",
                          .bit = 64, .width = 12,
                          .description = "For the control packet header: the last block's identity",
                          .seed = "Thesis 3.2; identity: scaleup"}),
      member(&T::pad, {.name = "padding", .filter = "rdma.meta.pad", .bit = 76, .width = 4,
                     .description = "To a whole number of bytes",
                     .seed = "Thesis 3.2 (75 stated, 76 listed); scaleup",
                     .check = rule::reserved}),
  };
  // clang-format on
};

static_assert(tiles<rdma::transfer_metadata>());

}  // namespace scaleup::wire
