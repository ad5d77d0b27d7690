// Scheduling FIFO queues in one dynamically shared space (Thesis 3.7, Figs. 3.7-3.8,
// Algorithms 1-2) and the queue hierarchy the segmenter serves them in (Thesis 2, Fig. 2.4,
// 3.9.1).
//
// Every transfer appears in the queues at most once, so the node of a queue is the transfer's
// channel index itself and one next-pointer array serves all queues: no queue can run out of
// room while another sits on unused entries.
//
// Hierarchy, highest first (Thesis 3.9.1):
//   control (completion notifications), TID-only (inline and not congestion managed),
//   1xFID with FID, 1xFID without FID, 4xFID with FID, 4xFID without FID,
// each congestion-managed category split into intra-priorities (0 first). Transfers that
// already hold a FID have their own queues so that, when the FID FIFOs are empty, the ones
// still waiting for a FID block nobody behind them (no head-of-line blocking).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>

namespace scaleup::rdma {

enum class queue_category : std::uint8_t {
  control,
  tid_only,
  unipath_has_fid,
  unipath_no_fid,
  multipath_has_fid,
  multipath_no_fid,
};

// Queue index in hierarchy order: lower is served first.
constexpr std::uint32_t queue_index(queue_category c, std::uint32_t intra,
                                    std::uint32_t intra_count) noexcept {
  switch (c) {
    case queue_category::control:
      return 0;
    case queue_category::tid_only:
      return 1;
    case queue_category::unipath_has_fid:
      return 2 + intra;
    case queue_category::unipath_no_fid:
      return 2 + intra_count + intra;
    case queue_category::multipath_has_fid:
      return 2 + 2 * intra_count + intra;
    case queue_category::multipath_no_fid:
      return 2 + 3 * intra_count + intra;
  }
  return 0;
}

constexpr queue_category category_of(std::uint32_t q, std::uint32_t intra_count) noexcept {
  if (q == 0) return queue_category::control;
  if (q == 1) return queue_category::tid_only;
  const std::uint32_t band = (q - 2) / intra_count;
  switch (band) {
    case 0:
      return queue_category::unipath_has_fid;
    case 1:
      return queue_category::unipath_no_fid;
    case 2:
      return queue_category::multipath_has_fid;
    default:
      return queue_category::multipath_no_fid;
  }
}

constexpr std::uint32_t intra_of(std::uint32_t q, std::uint32_t intra_count) noexcept {
  return q < 2 ? 0 : (q - 2) % intra_count;
}

// Nodes: transfer-table indices; Queues: 2 + 4 x intra-priorities.
template <std::size_t Nodes, std::size_t Queues>
struct scheduling_queues {
  std::array<std::uint16_t, Nodes> next{};  // the next-pointer memory (Thesis 3.7)
  std::array<std::uint16_t, Queues> head{};
  std::array<std::uint16_t, Queues> tail{};
  std::array<bool, Queues> is_empty = [] {
    std::array<bool, Queues> e{};
    e.fill(true);
    return e;
  }();
  // The extra bit held with a queue entry: the transfer's first block has gone out
  // (Thesis 3.9.1), which saves initialising the metadata on every new descriptor.
  std::array<bool, Nodes> started{};

  constexpr bool empty(std::size_t q) const noexcept { return is_empty[q]; }
  constexpr std::uint16_t front(std::size_t q) const noexcept { return head[q]; }

  // Algorithm 1.
  constexpr void enqueue(std::uint16_t x, std::size_t q) noexcept {
    if (is_empty[q]) {
      head[q] = x;
      tail[q] = x;
      is_empty[q] = false;
    } else {
      next[tail[q]] = x;
      tail[q] = x;
    }
  }

  // Algorithm 2; the caller has checked that q is not empty.
  constexpr std::uint16_t dequeue(std::size_t q) noexcept {
    const std::uint16_t prev = head[q];
    if (head[q] == tail[q])
      is_empty[q] = true;
    else
      head[q] = next[head[q]];
    return prev;
  }

  // Takes x out of q wherever it is. Not a hardware operation: the model needs it when a
  // transfer ends (ERROR, or DONE while its control packet still waits) so that the channel
  // can take a new transfer at once. Returns false when x is not in q.
  constexpr bool remove(std::uint16_t x, std::size_t q) noexcept {
    if (is_empty[q]) return false;
    if (head[q] == x) {
      dequeue(q);
      return true;
    }
    for (std::uint16_t p = head[q]; p != tail[q]; p = next[p]) {
      if (next[p] != x) continue;
      if (tail[q] == x) tail[q] = p;
      next[p] = next[x];
      return true;
    }
    return false;
  }

  // Entries of q, walking the list (tests: each transfer appears at most once).
  constexpr std::size_t length(std::size_t q) const noexcept {
    if (is_empty[q]) return 0;
    std::size_t n = 1;
    for (std::uint16_t p = head[q]; p != tail[q] && n <= Nodes; p = next[p]) ++n;
    return n;
  }

  constexpr std::size_t occurrences(std::uint16_t x) const noexcept {
    std::size_t n = 0;
    for (std::size_t q = 0; q < Queues; ++q) {
      if (is_empty[q]) continue;
      std::size_t steps = 0;
      for (std::uint16_t p = head[q];; p = next[p]) {
        if (p == x) ++n;
        if (p == tail[q] || ++steps > Nodes) break;
      }
    }
    return n;
  }
};

}  // namespace scaleup::rdma
