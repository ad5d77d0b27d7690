// Transaction IDs (TIDs) and Flow IDs (FIDs) (Thesis 3.8, 3.14).
//
// A TID names a Transaction Table entry, so it is what a block is acknowledged by. Transfers
// that are not congestion managed, and inline ones, take any free TID from the TID FIFO and
// give it back on the block's ACK. Congestion-managed transfers take a flow: one FID
// (unipath) or `paths` consecutive FIDs at once (multipath, one dequeue of the 4xFID FIFO),
// and their blocks use the flow's TIDs in a fixed order, TID in [FID << 2, (FID << 2) + 3],
// so that blocks of one flow share a path and a rate limiter. FIDs go back at the end of
// the transfer.
//
// Multipath order ("frog-leap", Thesis 3.8): consecutive blocks change FID, so each takes a
// different path; the slot inside the flow advances once every `paths` blocks. With base FID
// 192: 768, 772, 776, 780, 769, 773, ..., 783.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>

namespace scaleup::rdma {

// A FIFO of IDs, full after reset as the ID FIFO initializer leaves it (Thesis 3.14).
template <std::size_t N>
struct id_fifo {
  std::array<std::uint16_t, N> ring{};
  std::uint32_t head = 0;
  std::uint32_t count = 0;

  constexpr bool empty() const noexcept { return count == 0; }
  constexpr bool full() const noexcept { return count == N; }
  constexpr std::uint32_t size() const noexcept { return count; }
  constexpr bool push(std::uint16_t id) noexcept {
    if (full()) return false;
    ring[(head + count) % N] = id;
    ++count;
    return true;
  }
  constexpr std::uint16_t front() const noexcept { return ring[head]; }
  constexpr std::uint16_t pop() noexcept {
    const std::uint16_t id = ring[head];
    head = static_cast<std::uint32_t>((head + 1) % N);
    --count;
    return id;
  }
  // Fills with first, first + step, ... (N entries): the initializer's sequential enqueues.
  constexpr void fill(std::uint16_t first, std::uint16_t step = 1) noexcept {
    head = 0;
    count = 0;
    for (std::size_t i = 0; i < N; ++i) push(static_cast<std::uint16_t>(first + i * step));
  }
};

// The TID of block k of a unipath flow with FID `fid`: the flow's TIDs in order, wrapping
// when the transfer has more blocks than a flow (Thesis 3.8).
constexpr std::uint16_t unipath_tid(std::uint32_t fid, std::uint64_t k,
                                    std::uint32_t flow_blocks) noexcept {
  return static_cast<std::uint16_t>(fid * flow_blocks + k % flow_blocks);
}

// The TID of block k of a multipath transfer holding FIDs base .. base + paths - 1.
constexpr std::uint16_t multipath_tid(std::uint32_t base, std::uint64_t k,
                                      std::uint32_t flow_blocks, std::uint32_t paths) noexcept {
  const auto fid = static_cast<std::uint32_t>(base + k % paths);
  return static_cast<std::uint16_t>(fid * flow_blocks + (k / paths) % flow_blocks);
}

// Bit of the metadata TID bitmap for a flow TID: its place among the transfer's TIDs
// (16 bits hold 4 FIDs x 4 TIDs, Thesis 3.2).
constexpr std::uint32_t tid_bit(std::uint16_t tid, std::uint32_t base_fid,
                                std::uint32_t flow_blocks) noexcept {
  return tid - base_fid * flow_blocks;
}

static_assert(unipath_tid(128, 0, 4) == 512 && unipath_tid(128, 3, 4) == 515 &&
              unipath_tid(128, 4, 4) == 512);
static_assert(multipath_tid(192, 0, 4, 4) == 768 && multipath_tid(192, 1, 4, 4) == 772 &&
              multipath_tid(192, 4, 4, 4) == 769 && multipath_tid(192, 15, 4, 4) == 783);

}  // namespace scaleup::rdma
