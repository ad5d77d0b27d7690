// Buffers of bytes named by a handle, for what a SUE instance keeps: commands waiting to be
// packed, PDUs kept for go-back-N, management frames waiting to go. A buffer stays where it is
// until given back (the packer borrows command data by pointer until it packs it).
//
//   fixed_storage: Slots buffers of SlotBytes each, inside the object;
//   heap_storage:  buffers from the caller's allocator in power-of-two sizes from 64 bytes up to
//                  SlotBytes, each size with its own free list, so a small command never takes a
//                  large buffer and, once a run has warmed up, nothing is allocated per command.
//                  At most Slots buffers are handed out at once.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "scaleup/pack/storage.hpp"
#include "scaleup/wire/bits.hpp"

namespace scaleup::transport {

inline constexpr std::uint32_t no_buffer = 0xFFFFFFFFu;

template <std::size_t Slots, std::size_t SlotBytes, pack::storage_kind Storage>
class byte_pool;

template <std::size_t Slots, std::size_t SlotBytes>
class byte_pool<Slots, SlotBytes, pack::fixed_storage> {
 public:
  constexpr byte_pool() noexcept {
    for (std::size_t i = 0; i < Slots; ++i) free_[i] = static_cast<std::uint32_t>(Slots - 1 - i);
  }
  constexpr explicit byte_pool(const pack::allocator&) noexcept : byte_pool() {}

  // A buffer of n bytes (at most SlotBytes), or no_buffer.
  constexpr std::uint32_t take(std::size_t n) noexcept {
    if (n > SlotBytes || free_count_ == 0) return no_buffer;
    const std::uint32_t h = free_[--free_count_];
    len_[h] = static_cast<std::uint32_t>(n);
    return h;
  }
  constexpr void give(std::uint32_t h) noexcept { free_[free_count_++] = h; }
  constexpr std::uint8_t* data(std::uint32_t h) noexcept { return slots_[h].data(); }
  constexpr const std::uint8_t* data(std::uint32_t h) const noexcept { return slots_[h].data(); }
  constexpr std::size_t size(std::uint32_t h) const noexcept { return len_[h]; }
  constexpr wire::bytes bytes(std::uint32_t h) const noexcept {
    return wire::bytes(slots_[h].data(), len_[h]);
  }
  constexpr std::size_t in_use() const noexcept { return Slots - free_count_; }
  constexpr std::size_t memory() const noexcept { return sizeof(*this); }

 private:
  std::array<std::array<std::uint8_t, SlotBytes>, Slots> slots_{};
  std::array<std::uint32_t, Slots> len_{};
  std::array<std::uint32_t, Slots> free_{};
  std::size_t free_count_ = Slots;
};

template <std::size_t Slots, std::size_t SlotBytes>
class byte_pool<Slots, SlotBytes, pack::heap_storage> {
  static constexpr std::size_t min_size = 64;
  static constexpr std::size_t classes =
      std::bit_width(std::bit_ceil(SlotBytes < min_size ? min_size : SlotBytes) / min_size);

 public:
  byte_pool() noexcept : byte_pool(pack::allocator{}) {}
  explicit byte_pool(const pack::allocator& mem) noexcept : alloc_(mem), bufs_(mem) {
    if (!alloc_.allocate || !alloc_.release) alloc_ = pack::malloc_allocator();
    free_.fill(no_buffer);
  }
  byte_pool(const byte_pool&) = delete;
  byte_pool& operator=(const byte_pool&) = delete;
  ~byte_pool() {
    // The first buffer of each allocation owns it (chunk > 0: the buffers it holds).
    for (std::size_t i = 0; i < count_; ++i)
      if (bufs_[i].chunk > 0)
        alloc_.release(alloc_.context, bufs_[i].block,
                       bufs_[i].chunk * (std::size_t{min_size} << bufs_[i].cls));
  }

  std::uint32_t take(std::size_t n) noexcept {
    if (n > SlotBytes || in_use_ == Slots) return no_buffer;
    const std::size_t cls = class_of(n);
    std::uint32_t h = free_[cls];
    if (h != no_buffer) {
      free_[cls] = bufs_[h].next;
    } else {
      // An allocation of a kilobyte's worth of this size (one buffer for the larger sizes);
      // all but the first go on the free list.
      const std::size_t size = std::size_t{min_size} << cls;
      std::size_t k = size >= 1024 ? 1 : 1024 / size;
      if (k > Slots - count_) k = Slots - count_;
      if (k == 0 || !bufs_.reserve(count_ + k)) return no_buffer;
      auto* block = static_cast<std::uint8_t*>(alloc_.allocate(alloc_.context, k * size));
      if (!block) return no_buffer;
      h = static_cast<std::uint32_t>(count_);
      for (std::size_t i = 0; i < k; ++i)
        bufs_[count_ + i] = buffer{block + i * size, 0, no_buffer, static_cast<std::uint8_t>(cls),
                                   static_cast<std::uint32_t>(i == 0 ? k : 0)};
      for (std::size_t i = k; i > 1; --i) {
        bufs_[count_ + i - 1].next = free_[cls];
        free_[cls] = static_cast<std::uint32_t>(count_ + i - 1);
      }
      count_ += k;
    }
    bufs_[h].len = static_cast<std::uint32_t>(n);
    ++in_use_;
    return h;
  }
  void give(std::uint32_t h) noexcept {
    buffer& b = bufs_[h];
    b.next = free_[b.cls];
    free_[b.cls] = h;
    --in_use_;
  }
  std::uint8_t* data(std::uint32_t h) noexcept { return bufs_[h].block; }
  const std::uint8_t* data(std::uint32_t h) const noexcept { return bufs_[h].block; }
  std::size_t size(std::uint32_t h) const noexcept { return bufs_[h].len; }
  wire::bytes bytes(std::uint32_t h) const noexcept {
    return wire::bytes(bufs_[h].block, bufs_[h].len);
  }
  std::size_t in_use() const noexcept { return in_use_; }
  std::size_t memory() const noexcept {
    std::size_t n = sizeof(*this) + bufs_.bytes();
    for (std::size_t i = 0; i < count_; ++i) n += std::size_t{min_size} << bufs_[i].cls;
    return n;
  }

 private:
  static std::size_t class_of(std::size_t n) noexcept {
    const std::size_t cap = std::bit_ceil(n < min_size ? min_size : n);
    return static_cast<std::size_t>(std::countr_zero(cap) - std::countr_zero(min_size));
  }
  struct buffer {
    std::uint8_t* block = nullptr;
    std::uint32_t len = 0;
    std::uint32_t next = no_buffer;  // the next free buffer of its size
    std::uint8_t cls = 0;
    std::uint32_t chunk = 0;  // the first of an allocation: how many buffers it holds
  };
  pack::allocator alloc_;
  pack::table<buffer, Slots, pack::heap_storage> bufs_;
  std::array<std::uint32_t, classes> free_{};
  std::size_t count_ = 0;
  std::size_t in_use_ = 0;
};

}  // namespace scaleup::transport
