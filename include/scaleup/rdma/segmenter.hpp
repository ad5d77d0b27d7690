// Transfer segmentation into blocks aligned to the destination address (Thesis 3.9, Fig. 3.10,
// 3.9.2, 3.9.3). Blocks are aligned to the destination, not the source, because the receiver
// acknowledges per block and its buffers are what the block boundaries protect.
//
// The thesis's formulas, with BS the block size:
//   first  = BS - (dst % BS)
//   total  = (dst + size) / BS - dst / BS, plus one if (dst + size) % BS != 0
//   last   = (size - first) % BS
//   offset = first + (k - 1) * BS          for block k >= 1 (source and destination alike)
// Two readings the formulas leave open, made explicit here: a transfer that ends before the
// first boundary is one block of `size` bytes (the formula's `first` would overrun it), and a
// `last` of 0 means a full block (the transfer ends on a boundary).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>

namespace scaleup::rdma {

constexpr std::uint64_t first_block_size(std::uint64_t dst, std::uint64_t size,
                                         std::uint64_t bs) noexcept {
  const std::uint64_t room = bs - dst % bs;
  return size < room ? size : room;
}

constexpr std::uint64_t total_blocks(std::uint64_t dst, std::uint64_t size,
                                     std::uint64_t bs) noexcept {
  if (size == 0) return 0;
  const std::uint64_t end = dst + size;
  return end / bs - dst / bs + (end % bs != 0 ? 1 : 0);
}

constexpr std::uint64_t last_block_size(std::uint64_t dst, std::uint64_t size,
                                        std::uint64_t bs) noexcept {
  if (total_blocks(dst, size, bs) <= 1) return size;
  const std::uint64_t r = (size - first_block_size(dst, size, bs)) % bs;
  return r == 0 ? bs : r;
}

// Offset of block k from the start of the transfer, the same for source and destination.
constexpr std::uint64_t block_offset(std::uint64_t dst, std::uint64_t size, std::uint64_t bs,
                                     std::uint64_t k) noexcept {
  return k == 0 ? 0 : first_block_size(dst, size, bs) + (k - 1) * bs;
}

constexpr std::uint64_t block_bytes(std::uint64_t dst, std::uint64_t size, std::uint64_t bs,
                                    std::uint64_t k) noexcept {
  const std::uint64_t n = total_blocks(dst, size, bs);
  if (k >= n) return 0;
  if (k == 0) return first_block_size(dst, size, bs);
  if (k == n - 1) return last_block_size(dst, size, bs);
  return bs;
}

// Packets the send unit cuts a block into (Thesis 2: 64 packets of 1 KB per 64 KB block).
constexpr std::uint32_t packets_in(std::uint64_t bytes, std::uint32_t payload) noexcept {
  return bytes == 0 ? 1 : static_cast<std::uint32_t>((bytes + payload - 1) / payload);
}

}  // namespace scaleup::rdma
