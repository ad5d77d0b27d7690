// A map from 64-bit keys to 32-bit indices, open addressing with linear probing: how the fabric
// finds a connection or a stream from its identity. Entries are created on first use and never
// removed, so memory follows what a run uses, not the product of every dimension.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scaleup::sim {

class index_map {
 public:
  static constexpr std::uint32_t absent = 0xFFFFFFFFu;

  std::size_t size() const noexcept { return used_; }

  std::uint32_t find(std::uint64_t key) const noexcept {
    if (slots_.empty()) return absent;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == empty) return absent;
    }
  }

  // The key's value; `make()` gives it one when the key is new.
  template <class Make>
  std::uint32_t find_or_add(std::uint64_t key, Make&& make) {
    if (2 * (used_ + 1) > slots_.size()) rehash(slots_.empty() ? 64 : 2 * slots_.size());
    std::size_t i = home(key);
    for (; slots_[i].key != empty; i = (i + 1) & mask_)
      if (slots_[i].key == key) return slots_[i].value;
    slots_[i] = {key, make()};
    ++used_;
    return slots_[i].value;
  }

 private:
  static constexpr std::uint64_t empty = ~std::uint64_t{0};  // not a key the fabric makes
  struct slot {
    std::uint64_t key = empty;
    std::uint32_t value = absent;
  };

  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void rehash(std::size_t n) {
    std::vector<slot> old;
    old.swap(slots_);
    slots_.assign(n, slot{});
    mask_ = n - 1;
    shift_ = 64;
    for (std::size_t m = n; m > 1; m >>= 1) --shift_;
    for (const slot& s : old)
      if (s.key != empty) {
        std::size_t i = home(s.key);
        while (slots_[i].key != empty) i = (i + 1) & mask_;
        slots_[i] = s;
      }
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t used_ = 0;
};

}  // namespace scaleup::sim
