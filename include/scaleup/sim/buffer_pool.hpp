// Byte buffers reused from a pool, named by index: frames in flight and PDUs kept for
// retransmission. Buffers come in power-of-two sizes from 64 bytes, each size with its own
// free list, so a buffer is never reallocated and a small frame never takes a large buffer:
// once a run has warmed up nothing is allocated per frame. Each buffer has a Meta beside it
// (what the caller records about it), which stays where it is while the pool grows.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "scaleup/sim/stable_vector.hpp"
#include "scaleup/wire/bits.hpp"

namespace scaleup::sim {

template <class Meta>
class buffer_pool {
 public:
  // A buffer of n bytes (contents unspecified).
  std::uint32_t take(std::size_t n) {
    const std::size_t cls = class_of(n);
    std::uint32_t i = 0;
    if (free_[cls].empty()) {
      i = static_cast<std::uint32_t>(bufs_.size());
      bufs_.push_back(
          buffer{std::make_unique_for_overwrite<std::uint8_t[]>(std::size_t{min_size} << cls),
                 static_cast<std::uint32_t>(n), static_cast<std::uint8_t>(cls)});
      meta_.at_grow(i);
    } else {
      i = free_[cls].back();
      free_[cls].pop_back();
      bufs_[i].len = static_cast<std::uint32_t>(n);
    }
    return i;
  }
  void give(std::uint32_t i) { free_[bufs_[i].cls].push_back(i); }

  std::uint8_t* data(std::uint32_t i) noexcept { return bufs_[i].data.get(); }
  Meta& meta(std::uint32_t i) noexcept { return meta_[i]; }
  std::size_t size(std::uint32_t i) const noexcept { return bufs_[i].len; }
  // Shortens a buffer to what was written (n at most what it was taken for).
  void resize(std::uint32_t i, std::size_t n) noexcept {
    bufs_[i].len = static_cast<std::uint32_t>(n);
  }
  wire::bytes bytes(std::uint32_t i) const noexcept {
    return wire::bytes(bufs_[i].data.get(), bufs_[i].len);
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

  static std::size_t class_of(std::size_t n) noexcept {
    const std::size_t cap = std::bit_ceil(n < min_size ? min_size : n);
    return static_cast<std::size_t>(std::countr_zero(cap) - std::countr_zero(min_size));
  }

  struct buffer {
    std::unique_ptr<std::uint8_t[]> data;
    std::uint32_t len = 0;
    std::uint8_t cls = 0;
  };
  std::vector<buffer> bufs_;
  stable_vector<Meta> meta_;
  std::array<std::vector<std::uint32_t>, classes> free_{};
};

}  // namespace scaleup::sim
