// Byte buffers reused from a pool, named by index: frames in flight, PDUs kept for
// retransmission, commands waiting to be packed. Buffers come in power-of-two sizes from 64
// bytes, each size with its own free list, so a buffer is never reallocated and a small frame
// never takes a large buffer: once a run has warmed up nothing is allocated per frame. A Meta
// (what the caller records about a buffer, e.g. a frame's tag) sits in the same block, just
// before the bytes, so that reading one brings the other into the cache.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "scaleup/wire/bits.hpp"

namespace scaleup::sim {

struct no_meta {};

template <class Meta = no_meta>
class buffer_pool {
  static_assert(std::is_trivially_destructible_v<Meta>, "blocks are freed as bytes");

 public:
  // A buffer of n bytes (contents unspecified; a new block's Meta is value-initialised, a
  // reused one's is what it was).
  std::uint32_t take(std::size_t n) {
    const std::size_t cls = class_of(n);
    std::uint32_t i = 0;
    if (free_[cls].empty()) {
      i = static_cast<std::uint32_t>(bufs_.size());
      auto block = std::make_unique_for_overwrite<std::uint8_t[]>(meta_bytes +
                                                                  (std::size_t{min_size} << cls));
      Meta* m = nullptr;
      if constexpr (meta_bytes > 0) m = new (block.get()) Meta{};
      bufs_.push_back(buffer{std::move(block), m, static_cast<std::uint32_t>(n),
                             static_cast<std::uint8_t>(cls)});
    } else {
      i = free_[cls].back();
      free_[cls].pop_back();
      bufs_[i].len = static_cast<std::uint32_t>(n);
    }
    return i;
  }
  void give(std::uint32_t i) { free_[bufs_[i].cls].push_back(i); }

  std::uint8_t* data(std::uint32_t i) noexcept { return bufs_[i].block.get() + meta_bytes; }
  const std::uint8_t* data(std::uint32_t i) const noexcept {
    return bufs_[i].block.get() + meta_bytes;
  }
  Meta& meta(std::uint32_t i) noexcept { return *bufs_[i].meta; }
  std::size_t size(std::uint32_t i) const noexcept { return bufs_[i].len; }
  // Shortens a buffer to what was written (n at most what it was taken for).
  void resize(std::uint32_t i, std::size_t n) noexcept {
    bufs_[i].len = static_cast<std::uint32_t>(n);
  }
  wire::bytes bytes(std::uint32_t i) const noexcept { return wire::bytes(data(i), bufs_[i].len); }
  wire::mutable_bytes span(std::uint32_t i) noexcept {
    return wire::mutable_bytes(data(i), bufs_[i].len);
  }
  // Calls f(i) for each buffer handed out and not given back: a walk over every buffer the
  // pool has made.
  template <class F>
  void for_each_in_use(F&& f) const {
    std::vector<bool> given(bufs_.size());
    for (const auto& l : free_)
      for (const std::uint32_t i : l) given[i] = true;
    for (std::uint32_t i = 0; i < bufs_.size(); ++i)
      if (!given[i]) f(i);
  }
  // Buffers handed out and not given back.
  std::size_t in_use() const noexcept {
    std::size_t free = 0;
    for (const auto& f : free_) free += f.size();
    return bufs_.size() - free;
  }

 private:
  static constexpr std::size_t min_size = 64;
  static constexpr std::size_t classes = 12;  // 64 B to 128 KiB
  // The Meta's room, in whole cache lines.
  static constexpr std::size_t meta_bytes =
      std::is_empty_v<Meta> ? 0 : (sizeof(Meta) + 63) / 64 * 64;

  static std::size_t class_of(std::size_t n) noexcept {
    const std::size_t cap = std::bit_ceil(n < min_size ? min_size : n);
    return static_cast<std::size_t>(std::countr_zero(cap) - std::countr_zero(min_size));
  }

  struct buffer {
    std::unique_ptr<std::uint8_t[]> block;  // the Meta's room, then the bytes
    Meta* meta = nullptr;
    std::uint32_t len = 0;
    std::uint8_t cls = 0;
  };
  std::vector<buffer> bufs_;
  std::array<std::vector<std::uint32_t>, classes> free_{};
};

}  // namespace scaleup::sim
