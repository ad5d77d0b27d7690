// The block descriptor: one Transaction Table entry, what the QoS engine hands the RDMA send
// unit for each 64 KB block (Thesis 3.3). The table is indexed by the block's TID, so a block
// is re-sent by re-issuing its entry.
//
// The thesis states 256 bits per entry and lists fields adding up to 248, in this order; every
// listed field keeps its place and width, and the 8 missing bits are padding at the end.
//
// `block size` is 16 bits but a full block is 65536 bytes: a full block is written as 0, which
// is what a 16-bit register holding 65536 reads as, and a block is never empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/wire/field.hpp"

namespace scaleup::rdma {

struct block_descriptor {
  std::uint64_t src_addr = 0;
  std::uint64_t dst_addr = 0;
  std::uint16_t pd = 0;
  std::uint16_t seq = 0;
  std::uint16_t bytes_sent = 0;
  std::uint8_t cm = 0;
  std::uint8_t initialized = 0;
  std::uint16_t unused0 = 0;
  std::uint8_t done = 0;
  std::uint8_t notify = 0;
  std::uint8_t chained = 0;
  std::uint16_t block_size = 0;
  std::uint16_t unused1 = 0;
  std::uint8_t has_next = 0;
  std::uint16_t unused2 = 0;
  std::uint32_t unused3 = 0;
  std::uint8_t pad = 0;
  friend constexpr bool operator==(const block_descriptor&, const block_descriptor&) = default;
};

// 16-bit `block size` <-> bytes (0 is a full 64 KB block).
constexpr std::uint16_t block_size_field(std::uint32_t bytes) noexcept {
  return static_cast<std::uint16_t>(bytes & 0xFFFFu);
}
constexpr std::uint32_t block_size_bytes(std::uint16_t field) noexcept {
  return field == 0 ? 65536u : field;
}

}  // namespace scaleup::rdma

namespace scaleup::wire {

template <>
struct layout<rdma::block_descriptor> {
  using T = rdma::block_descriptor;
  static constexpr std::string_view name = "rdma.blk";
  static constexpr std::string_view title = "RDMA block descriptor (Transaction Table entry)";
  static constexpr std::string_view seed = "Thesis 3.3";
  static constexpr std::size_t size = 32;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::src_addr, {.name = "source address", .filter = "rdma.blk.src_addr", .bit = 0,
                          .width = 64, .type = kind::hex,
                          .description = "Where the send unit reads this block",
                          .seed = "Thesis 3.3, 3.9.3"}),
      member(&T::dst_addr, {.name = "destination address", .filter = "rdma.blk.dst_addr",
                          .bit = 64, .width = 64, .type = kind::hex,
                          .description = "Where this block goes", .seed = "Thesis 3.3, 3.9.3"}),
      member(&T::pd, {.name = "protection domain ID", .filter = "rdma.blk.pd", .bit = 128,
                    .width = 16, .description = "The page the transfer was posted in",
                    .seed = "Thesis 3.3, 2"}),
      member(&T::seq, {.name = "sequence number", .filter = "rdma.blk.seq", .bit = 144,
                     .width = 14,
                     .description = "Global counter, new on every issue and re-issue",
                     .seed = "Thesis 3.3, 3.13"}),
      member(&T::bytes_sent, {.name = "bytes sent", .filter = "rdma.blk.bytes_sent", .bit = 158,
                            .width = 16, .description = "Send unit's progress; issued as 0",
                            .seed = "Thesis 3.3; issued value: scaleup"}),
      member(&T::cm, {.name = "congestion managed", .filter = "rdma.blk.cm", .bit = 174,
                    .width = 1, .type = kind::flag,
                    .description = "Transfer type 1xFID or 4xFID", .seed = "Thesis 3.3, 3.8"}),
      member(&T::initialized, {.name = "initialized", .filter = "rdma.blk.initialized",
                             .bit = 175, .width = 1, .type = kind::flag,
                             .description = "The QoS engine always issues 0",
                             .seed = "Thesis 3.3"}),
      member(&T::unused0, {.name = "not used 0", .filter = "rdma.blk.unused0", .bit = 176,
                         .width = 9, .description = "Not used", .seed = "Thesis 3.3",
                         .check = rule::reserved}),
      member(&T::done, {.name = "done", .filter = "rdma.blk.done", .bit = 185, .width = 1,
                      .type = kind::flag, .description = "The QoS engine always issues 0",
                      .seed = "Thesis 3.3"}),
      member(&T::notify, {.name = "notification enable", .filter = "rdma.blk.notify",
                        .bit = 186, .width = 1, .type = kind::flag,
                        .description = "Last block of a transfer with completion notification",
                        .seed = "Thesis 3.3"}),
      member(&T::chained, {.name = "chained", .filter = "rdma.blk.chained", .bit = 187,
                         .width = 1, .type = kind::flag,
                         .description = "Congestion managed and not the transfer's first block",
                         .seed = "Thesis 3.3"}),
      member(&T::block_size, {.name = "block size", .filter = "rdma.blk.size", .bit = 188,
                            .width = 16, .description = "Bytes in this block; 0 = 65536",
                            .seed = "Thesis 3.3; 0 = 64 KB: scaleup"}),
      member(&T::unused1, {.name = "not used 1", .filter = "rdma.blk.unused1", .bit = 204,
                         .width = 12, .description = "Not used", .seed = "Thesis 3.3",
                         .check = rule::reserved}),
      member(&T::has_next, {.name = "has next", .filter = "rdma.blk.has_next", .bit = 216,
                          .width = 1, .type = kind::flag,
                          .description = "Congestion managed and not the transfer's last block",
                          .seed = "Thesis 3.3"}),
      member(&T::unused2, {.name = "not used 2", .filter = "rdma.blk.unused2", .bit = 217,
                         .width = 11, .description = "Not used", .seed = "Thesis 3.3",
                         .check = rule::reserved}),
      member(&T::unused3, {.name = "not used 3", .filter = "rdma.blk.unused3", .bit = 228,
                         .width = 20, .description = "Not used", .seed = "Thesis 3.3",
                         .check = rule::reserved}),
      member(&T::pad, {.name = "padding", .filter = "rdma.blk.pad", .bit = 248, .width = 8,
                     .description = "The 8 bits the listed fields leave of the stated 256",
                     .seed = "Thesis 3.3 (256 stated, 248 listed); scaleup",
                     .check = rule::reserved}),
  };
  // clang-format on
};

static_assert(tiles<rdma::block_descriptor>());

}  // namespace scaleup::wire
