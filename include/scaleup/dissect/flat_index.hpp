// Keys numbered in the order they were first seen, found by hash: the table of UDP flows a
// capture showed SUE on and the analysis' table of connections. Every frame asks it once or
// twice, so a lookup is one probe of a flat array of 64-bit slots (open addressing, a power of
// two of them, at most half full), not a walk through std::unordered_set's nodes and a division
// by a prime. Opt-in state on the heap, like the tables that use it.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace scaleup::dissect {

template <class Key, class Hash>
class flat_index {
 public:
  static constexpr std::uint32_t npos = 0xFFFFFFFFu;

  // k's number, or npos.
  std::uint32_t find(const Key& k) const noexcept {
    if (count_ == 0) return npos;
    const std::uint64_t h = mixed(k);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const std::uint64_t s = slots_[i];
      if (s == 0) return npos;
      if ((s >> 32) == (h >> 32) && keys_[number_of(s)] == k) return number_of(s);
    }
  }
  bool contains(const Key& k) const noexcept { return find(k) != npos; }

  // k's number, and whether k is new (then numbered size() - 1). `k` may also stand for a key
  // without being one (a connection named from its other end, analysis.hpp): Hash takes it, a
  // key compares equal to it, and the key is made from it (Key(k)) only when it is new.
  template <class K = Key>
  std::pair<std::uint32_t, bool> insert(const K& k) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const std::uint64_t h = mixed(k);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const std::uint64_t s = slots_[i];
      if (s == 0) break;
      if ((s >> 32) == (h >> 32) && keys_[number_of(s)] == k) return {number_of(s), false};
    }
    const auto n = static_cast<std::uint32_t>(count_++);
    keys_.push_back(Key(k));
    slots_[i] = slot(h, n);
    return {n, true};
  }

  // The keys, by number.
  const std::vector<Key>& keys() const noexcept { return keys_; }
  std::size_t size() const noexcept { return count_; }
  void clear() noexcept {
    keys_.clear();
    count_ = 0;
    slots_.assign(slots_.size(), 0);
  }

 private:
  // The caller's hash, its bits spread so that the low ones pick the slot (fmix64 of MurmurHash3).
  template <class K>
  static std::uint64_t mixed(const K& k) noexcept {
    std::uint64_t h = static_cast<std::uint64_t>(Hash{}(k));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
  }
  // A slot: the hash's top half, then the number plus one (0 is an empty slot).
  static std::uint64_t slot(std::uint64_t h, std::uint32_t n) noexcept {
    return (h & 0xFFFFFFFF00000000ull) | (std::uint64_t{n} + 1);
  }
  static std::uint32_t number_of(std::uint64_t s) noexcept {
    return static_cast<std::uint32_t>(s) - 1;
  }

  void grow() {
    const std::size_t n = slots_.empty() ? 64 : 2 * slots_.size();
    slots_.assign(n, 0);
    mask_ = n - 1;
    for (std::uint32_t k = 0; k < count_; ++k) {
      const std::uint64_t h = mixed(keys_[k]);
      std::size_t i = h & mask_;
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = slot(h, k);
    }
  }

  std::vector<Key> keys_;
  std::size_t count_ = 0;  // keys_.size(), without a division by the key's size each lookup
  std::vector<std::uint64_t> slots_;
  std::size_t mask_ = 0;
};

}  // namespace scaleup::dissect
