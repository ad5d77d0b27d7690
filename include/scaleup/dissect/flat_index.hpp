// Keys numbered in the order they were first seen, found by hash: the table of UDP flows a
// capture showed SUE on and the analysis' and conformance rules' tables of connections. Every
// frame asks it once or twice, so a lookup is one probe of a flat array of 64-bit slots (open
// addressing, linear probing, a power of two of them, at most half full), not a walk through
// std::unordered_set's nodes and a division by a prime. Opt-in state on the heap, like the
// tables that use it.
//
// The keys come from the network, so the hash is keyed (wire/siphash.hpp) with the process's
// key (hash_key.hpp) or one given: Hash{}(key, k) is SipHash-1-3 of k's words. Linear probing
// is only as good as its hash: keys that share a slot make one run that every insert walks to
// its end, quadratic in the keys. probe_stats() counts the slots each lookup examined, so that
// tests (and fuzz targets) can hold a table to a bound.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "scaleup/dissect/hash_key.hpp"
#include "scaleup/wire/siphash.hpp"

namespace scaleup::dissect {

// Slots examined by the lookups of one kind: with a good hash at most half full, about 1.5 for
// a key present and 2.5 for one absent on average (Knuth, TAOCP 6.4), whatever the keys.
struct probe_count {
  std::uint64_t lookups = 0;
  std::uint64_t probes = 0;   // slots examined, all lookups
  std::uint64_t longest = 0;  // slots examined by one lookup, at most
  double mean() const noexcept {
    return lookups ? static_cast<double>(probes) / static_cast<double>(lookups) : 0.0;
  }
  probe_count& operator+=(const probe_count& o) noexcept {
    lookups += o.lookups;
    probes += o.probes;
    longest = std::max(longest, o.longest);
    return *this;
  }
};

struct probe_stats {
  probe_count inserts;  // insert(): a key new or not
  probe_count finds;    // find(), contains()
  probe_stats& operator+=(const probe_stats& o) noexcept {
    inserts += o.inserts;
    finds += o.finds;
    return *this;
  }
};

namespace detail {

// A counter a const lookup may add to. Only one thread changes a table, but another may copy
// it meanwhile (the parallel readers' copies of the flow table): relaxed atomics make that no
// data race, and cost what plain loads and stores do (no locked instruction).
class probe_counter {
 public:
  probe_counter() = default;
  probe_counter(const probe_counter& o) noexcept { *this = o; }
  probe_counter& operator=(const probe_counter& o) noexcept {
    lookups_.store(o.lookups_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    probes_.store(o.probes_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    longest_.store(o.longest_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }
  void add(std::uint64_t probes) const noexcept {
    lookups_.store(lookups_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    probes_.store(probes_.load(std::memory_order_relaxed) + probes, std::memory_order_relaxed);
    if (probes > longest_.load(std::memory_order_relaxed))
      longest_.store(probes, std::memory_order_relaxed);
  }
  probe_count get() const noexcept {
    return {lookups_.load(std::memory_order_relaxed), probes_.load(std::memory_order_relaxed),
            longest_.load(std::memory_order_relaxed)};
  }

 private:
  mutable std::atomic<std::uint64_t> lookups_{0}, probes_{0}, longest_{0};
};

}  // namespace detail

template <class Key, class Hash>
class flat_index {
 public:
  static constexpr std::uint32_t npos = 0xFFFFFFFFu;

  // Keyed with the process's key, or with `key`.
  flat_index() : flat_index(process_hash_key()) {}
  explicit flat_index(const wire::hash_key& key) noexcept : key_(key) {}

  // k's number, or npos.
  std::uint32_t find(const Key& k) const noexcept {
    if (count_ == 0) {
      finds_.add(0);  // no slot to examine
      return npos;
    }
    const std::uint64_t h = hash(k);
    std::uint64_t n = 1;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_, ++n) {
      const std::uint64_t s = slots_[i];
      if (s == 0) {
        finds_.add(n);
        return npos;
      }
      if ((s >> 32) == (h >> 32) && keys_[number_of(s)] == k) {
        finds_.add(n);
        return number_of(s);
      }
    }
  }
  bool contains(const Key& k) const noexcept { return find(k) != npos; }

  // k's number, and whether k is new (then numbered size() - 1). `k` may also stand for a key
  // without being one (a connection named from its other end, analysis.hpp): Hash takes it, a
  // key compares equal to it, and the key is made from it (Key(k)) only when it is new.
  template <class K = Key>
  std::pair<std::uint32_t, bool> insert(const K& k) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const std::uint64_t h = hash(k);
    std::size_t i = h & mask_;
    for (std::uint64_t probes = 1;; i = (i + 1) & mask_, ++probes) {
      const std::uint64_t s = slots_[i];
      if (s == 0) {
        inserts_.add(probes);
        break;
      }
      if ((s >> 32) == (h >> 32) && keys_[number_of(s)] == k) {
        inserts_.add(probes);
        return {number_of(s), false};
      }
    }
    const auto n = static_cast<std::uint32_t>(count_++);
    keys_.push_back(Key(k));
    slots_[i] = slot(h, n);
    return {n, true};
  }

  // The keys, by number.
  const std::vector<Key>& keys() const noexcept { return keys_; }
  std::size_t size() const noexcept { return count_; }
  // The slots examined by every lookup since the table was made (clear() keeps them).
  dissect::probe_stats probe_stats() const noexcept { return {inserts_.get(), finds_.get()}; }
  const wire::hash_key& key() const noexcept { return key_; }
  void clear() noexcept {
    keys_.clear();
    count_ = 0;
    slots_.assign(slots_.size(), 0);
  }

 private:
  // Its low bits pick the slot, its top half is kept in the slot (a key is compared only when
  // they match). Rehashing with the same key keeps each key where its hash says.
  template <class K>
  std::uint64_t hash(const K& k) const noexcept {
    return Hash{}(key_, k);
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
      const std::uint64_t h = hash(keys_[k]);
      std::size_t i = h & mask_;
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = slot(h, k);
    }
  }

  wire::hash_key key_;
  std::vector<Key> keys_;
  std::size_t count_ = 0;  // keys_.size(), without a division by the key's size each lookup
  std::vector<std::uint64_t> slots_;
  std::size_t mask_ = 0;
  detail::probe_counter inserts_, finds_;
};

}  // namespace scaleup::dissect
