// Where a component keeps its tables: inside the object, sized at compile time (fixed_storage:
// firmware, no heap), or in memory taken from the caller's allocator as they grow, up to the same
// compile-time bound (heap_storage: a simulation of a large fabric, where state must follow what
// a run uses, not the product of every dimension). The packer and the SUE instance take either;
// the code that uses a table is the same for both.
//
// heap_storage is the opt-in to the heap: an `allocator` of the caller's (two function pointers
// and a context, so that a C program or a test bench can pass its own), malloc and free when none
// is given. Nothing here throws: a table that cannot grow (its bound reached, or the allocator
// out of memory) says so, and the component refuses what would not fit, as it would with fixed
// storage. Tables hold trivially copyable values, moved as bytes when a table grows: a reference
// into a growing table is valid until its next reserve().
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

namespace scaleup::pack {

// The caller's memory: allocate(context, bytes) returns memory aligned for any fundamental type
// (as malloc does) or null; release(context, p, bytes) gives it back.
struct allocator {
  void* context = nullptr;
  void* (*allocate)(void* context, std::size_t bytes) = nullptr;
  void (*release)(void* context, void* p, std::size_t bytes) = nullptr;
};

// malloc and free: the C library's, so that a component built this way needs no C++ runtime.
inline allocator malloc_allocator() noexcept {
  return allocator{nullptr, [](void*, std::size_t n) -> void* { return std::malloc(n); },
                   [](void*, void* p, std::size_t) { std::free(p); }};
}

struct fixed_storage {
  static constexpr bool grows = false;
};
struct heap_storage {
  static constexpr bool grows = true;
};

template <class S>
concept storage_kind = std::is_same_v<S, fixed_storage> || std::is_same_v<S, heap_storage>;

template <class T, std::size_t N, class S>
class table;

// Room for N values inside the object.
template <class T, std::size_t N>
class table<T, N, fixed_storage> {
 public:
  constexpr table() noexcept = default;
  constexpr explicit table(const allocator&) noexcept {}

  // Room for the first n values: always, up to N.
  constexpr bool reserve(std::size_t n) noexcept { return n <= N; }
  constexpr std::size_t size() const noexcept { return N; }
  static constexpr std::size_t bound() noexcept { return N; }
  constexpr T& operator[](std::size_t i) noexcept { return items_[i]; }
  constexpr const T& operator[](std::size_t i) const noexcept { return items_[i]; }
  constexpr std::size_t bytes() const noexcept { return sizeof(items_); }

 private:
  std::array<T, N> items_{};
};

// Room for up to N values, taken from the allocator as reserve() asks for more: at least
// doubling, so that a table reaches its working size in a few steps and then allocates nothing.
// New values are value-initialised.
template <class T, std::size_t N>
class table<T, N, heap_storage> {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "a growing table moves its values as bytes");

 public:
  table() noexcept : alloc_(malloc_allocator()) {}
  explicit table(const allocator& a) noexcept : alloc_(a) {
    if (!alloc_.allocate || !alloc_.release) alloc_ = malloc_allocator();
  }
  table(const table&) = delete;
  table& operator=(const table&) = delete;
  ~table() {
    if (raw_) alloc_.release(alloc_.context, raw_, raw_bytes_);
  }

  bool reserve(std::size_t n) noexcept {
    if (n <= size_) return true;
    if (n > N) return false;
    std::size_t grown = size_ < 4 ? 4 : 2 * size_;
    if (grown < n) grown = n;
    if (grown > N) grown = N;
    // A value aligned beyond what the allocator promises (a cache line) gets room to be placed.
    const std::size_t slack = alignof(T) > alignof(std::max_align_t) ? alignof(T) : 0;
    const std::size_t raw_bytes = grown * sizeof(T) + slack;
    void* raw = alloc_.allocate(alloc_.context, raw_bytes);
    if (!raw) return false;
    void* at = raw;
    std::size_t room = raw_bytes;
    if (slack && !std::align(alignof(T), grown * sizeof(T), at, room)) {
      alloc_.release(alloc_.context, raw, raw_bytes);
      return false;
    }
    T* items = static_cast<T*>(at);
    if (size_ > 0) std::memcpy(static_cast<void*>(items), items_, size_ * sizeof(T));
    for (std::size_t i = size_; i < grown; ++i) std::construct_at(items + i);
    if (raw_) alloc_.release(alloc_.context, raw_, raw_bytes_);
    raw_ = raw;
    raw_bytes_ = raw_bytes;
    items_ = items;
    size_ = grown;
    return true;
  }
  std::size_t size() const noexcept { return size_; }
  static constexpr std::size_t bound() noexcept { return N; }
  T& operator[](std::size_t i) noexcept { return items_[i]; }
  const T& operator[](std::size_t i) const noexcept { return items_[i]; }
  std::size_t bytes() const noexcept { return raw_bytes_; }

 private:
  T* items_ = nullptr;
  std::size_t size_ = 0;
  void* raw_ = nullptr;
  std::size_t raw_bytes_ = 0;
  allocator alloc_;
};

// A first-in first-out queue of up to N values in a table: fixed, or grown from the allocator
// (heap_storage) as it fills. push_back says false when it cannot take one more.
template <class T, std::size_t N, class S>
class ring {
 public:
  constexpr ring() noexcept = default;
  constexpr explicit ring(const allocator& mem) noexcept : items_(mem) {}

  constexpr bool empty() const noexcept { return count_ == 0; }
  constexpr std::size_t size() const noexcept { return count_; }
  constexpr T& front() noexcept { return items_[head_]; }
  constexpr const T& front() const noexcept { return items_[head_]; }
  constexpr T& operator[](std::size_t i) noexcept { return items_[(head_ + i) % items_.size()]; }
  constexpr const T& operator[](std::size_t i) const noexcept {
    return items_[(head_ + i) % items_.size()];
  }
  constexpr bool push_back(const T& v) noexcept {
    if (count_ == items_.size() && !grow()) return false;
    items_[(head_ + count_) % items_.size()] = v;
    ++count_;
    return true;
  }
  constexpr void pop_front() noexcept {
    head_ = (head_ + 1) % items_.size();
    --count_;
  }
  constexpr void clear() noexcept { head_ = count_ = 0; }
  constexpr std::size_t bytes() const noexcept { return items_.bytes(); }

 private:
  // More room: the values from the head to the old end move up to the new end, so that the
  // order holds whatever the new size.
  constexpr bool grow() noexcept {
    const std::size_t old = items_.size();
    if (!items_.reserve(old + 1)) return false;
    const std::size_t added = items_.size() - old;
    if (count_ > 0 && head_ + count_ > old) {
      for (std::size_t i = old; i > head_; --i) items_[i - 1 + added] = items_[i - 1];
      head_ += added;
    }
    return true;
  }

  table<T, N, S> items_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace scaleup::pack
