// The Pending Transactions Table entry (Thesis 3.5): created when a block or an inline packet
// is issued, invalidated by its ACK, read by the timeout scan. Indexed by TID, like the
// Transaction Table it extends.
//
// The thesis states 144 bits and lists fields adding up to 121; every listed field keeps its
// place and width, and the 23 missing bits are padding at the end. Two listed fields say
// nothing of their contents, so this library fills them:
//   QoS (22 bits): the transfer's scheduling class and FID, which the ACK path needs to return
//     IDs without another table read;
//   reserved (19 bits): what retransmission needs, the thesis's future work (Thesis 5): the
//     block's first sequence number (its identity across re-issues) and a retry count.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/wire/field.hpp"

namespace scaleup::rdma {

// Scheduling class, as the queues and the ID FIFOs see a transfer (Thesis 3.8, 3.9.1).
enum class transfer_class : std::uint8_t { tid_only = 0, unipath = 1, multipath = 2 };

inline constexpr std::array<wire::value_name, 3> transfer_class_names{{
    {0, "TID only"},
    {1, "1xFID"},
    {2, "4xFID"},
}};

struct pending_entry {
  std::uint8_t valid = 0;
  std::uint32_t issue_time = 0;  // ns, modulo 2^32
  std::uint16_t seq = 0;
  std::uint16_t transfer = 0;
  std::uint8_t priority = 0;
  std::uint8_t qos_class = 0;
  std::uint16_t qos_fid = 0;
  std::uint16_t qos_rsvd = 0;
  std::uint32_t total_blocks = 0;
  std::uint8_t last = 0;
  std::uint8_t has_notification = 0;
  std::uint16_t block_seq = 0;
  std::uint8_t retries = 0;
  std::uint8_t rsvd = 0;
  std::uint32_t pad = 0;
  friend constexpr bool operator==(const pending_entry&, const pending_entry&) = default;
};

}  // namespace scaleup::rdma

namespace scaleup::wire {

template <>
struct layout<rdma::pending_entry> {
  using T = rdma::pending_entry;
  static constexpr std::string_view name = "rdma.pend";
  static constexpr std::string_view title = "RDMA pending transaction entry";
  static constexpr std::string_view seed = "Thesis 3.5";
  static constexpr std::size_t size = 18;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::valid, {.name = "valid", .filter = "rdma.pend.valid", .bit = 0, .width = 1,
                       .type = kind::flag, .description = "Cleared by the block's ACK",
                       .seed = "Thesis 3.5"}),
      member(&T::issue_time, {.name = "issue time", .filter = "rdma.pend.issue_time", .bit = 1,
                            .width = 32,
                            .description = "When the block last went out (ns, modulo 2^32)",
                            .seed = "Thesis 3.5; unit: scaleup"}),
      member(&T::seq, {.name = "sequence number", .filter = "rdma.pend.seq", .bit = 33,
                     .width = 12,
                     .description = "Of the block's latest issue; an ACK must match",
                     .seed = "Thesis 3.5, 3.13"}),
      member(&T::transfer, {.name = "transfer ID", .filter = "rdma.pend.transfer", .bit = 45,
                          .width = 11, .description = "Channel (Transfer Table index)",
                          .seed = "Thesis 3.5"}),
      member(&T::priority, {.name = "transfer priority", .filter = "rdma.pend.priority",
                          .bit = 56, .width = 4,
                          .description = "Intra-priority, to re-enqueue on ACK",
                          .seed = "Thesis 3.5"}),
      member(&T::qos_class, {.name = "QoS: class", .filter = "rdma.pend.qos.class", .bit = 60,
                           .width = 2, .names = rdma::transfer_class_names,
                           .description = "Scheduling class",
                           .seed = "Thesis 3.5 (QoS, 22 bits); content: scaleup"}),
      member(&T::qos_fid, {.name = "QoS: FID", .filter = "rdma.pend.qos.fid", .bit = 62,
                         .width = 9, .description = "Flow ID (first of 4 when multipath)",
                         .seed = "Thesis 3.5 (QoS), 3.8; content: scaleup"}),
      member(&T::qos_rsvd, {.name = "QoS: reserved", .filter = "rdma.pend.qos.rsvd", .bit = 71,
                          .width = 11, .description = "Reserved",
                          .seed = "Thesis 3.5 (QoS); scaleup", .check = rule::reserved}),
      member(&T::total_blocks, {.name = "total blocks", .filter = "rdma.pend.total_blocks",
                              .bit = 82, .width = 18,
                              .description = "Blocks of the transfer (computed at issue)",
                              .seed = "Thesis 3.5"}),
      member(&T::last, {.name = "last", .filter = "rdma.pend.last", .bit = 100, .width = 1,
                      .type = kind::flag, .description = "The transfer's last block",
                      .seed = "Thesis 3.5"}),
      member(&T::has_notification,
           {.name = "has notification", .filter = "rdma.pend.has_notification", .bit = 101,
            .width = 1, .type = kind::flag,
            .description = "Last block of a transfer with a completion notification",
            .seed = "Thesis 3.5"}),
      member(&T::block_seq, {.name = "reserved: block sequence", .filter = "rdma.pend.block_seq",
                           .bit = 102, .width = 12,
                           .description = "Sequence number of the first issue: the block's identity",
                           .seed = "Thesis 3.5 (reserved, 19 bits), 5; use: scaleup"}),
      member(&T::retries, {.name = "reserved: retries", .filter = "rdma.pend.retries",
                         .bit = 114, .width = 4, .description = "Re-issues after a NACK or timeout",
                         .seed = "Thesis 3.5 (reserved), 5; use: scaleup"}),
      member(&T::rsvd, {.name = "reserved", .filter = "rdma.pend.rsvd", .bit = 118, .width = 3,
                      .description = "Reserved", .seed = "Thesis 3.5",
                      .check = rule::reserved}),
      member(&T::pad, {.name = "padding", .filter = "rdma.pend.pad", .bit = 121, .width = 23,
                     .description = "The 23 bits the listed fields leave of the stated 144",
                     .seed = "Thesis 3.5 (144 stated, 121 listed); scaleup",
                     .check = rule::reserved}),
  };
  // clang-format on
};

static_assert(tiles<rdma::pending_entry>());

}  // namespace scaleup::wire
