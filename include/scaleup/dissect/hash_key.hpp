// The process's key for the tables keyed by packet contents (flat_index.hpp: the UDP flows, the
// analysis' and the conformance rules' connections). Drawn once from the operating system
// (std::random_device) on first use, so that nobody who crafts a capture knows which keys
// collide (wire/siphash.hpp). One key for the whole process: a table copied to another thread,
// or two tables filled from the same frames, hash a key alike.
//
// An embedding that wants reproducible runs, or runs where std::random_device has no source
// (firmware has none), sets the key with set_hash_key before it makes a table; a table takes
// the key when it is made, so one made before keeps its own. A table may also be given a key
// of its own (flat_index's constructor).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>

#include "scaleup/wire/siphash.hpp"

namespace scaleup::dissect {

namespace detail {

// A sequence lock: 0 before any key, odd while one is written, even once written.
struct key_store {
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> k0{0}, k1{0};
};

inline key_store& process_key_store() noexcept {
  static key_store s;
  return s;
}

// 128 bits from std::random_device. Should it have no source (it throws, or there are no
// exceptions and it would), a key from what differs between runs (the clock, the addresses the
// loader chose, the thread) is better than a fixed one, though guessable on the same machine.
inline wire::hash_key draw_hash_key() noexcept {
  const auto from_device = [](wire::hash_key& k) {
    std::random_device rd;
    const auto word = [&] { return std::uint64_t{rd()} << 32 | rd(); };
    k.k0 = word();
    k.k1 = word();
  };
  wire::hash_key k;
#if defined(__cpp_exceptions)
  try {
    from_device(k);
    return k;
  } catch (...) {
  }
#else
  (void)from_device;
#endif
  const auto t = static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  const auto stack = static_cast<std::uint64_t>(std::bit_cast<std::uintptr_t>(&k));
  const auto image =
      static_cast<std::uint64_t>(std::bit_cast<std::uintptr_t>(&process_key_store()));
  const auto thread =
      static_cast<std::uint64_t>(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  const wire::hash_key mix{0x5bd1e9955bd1e995ull, 0x27d4eb2f165667c5ull};
  return {wire::keyed_hash(mix, t, stack, image, thread),
          wire::keyed_hash(mix, thread, image, stack, t)};
}

// Writes `k` once the sequence is at an even `from` (0: only if no key was ever written).
inline bool store_key(key_store& s, std::uint64_t from, const wire::hash_key& k) noexcept {
  if (!s.seq.compare_exchange_strong(from, from + 1, std::memory_order_acquire)) return false;
  s.k0.store(k.k0, std::memory_order_relaxed);
  s.k1.store(k.k1, std::memory_order_relaxed);
  s.seq.store(from + 2, std::memory_order_release);
  return true;
}

}  // namespace detail

// Sets the key that tables made from now on take (process_hash_key). Thread-safe.
inline void set_hash_key(const wire::hash_key& k) noexcept {
  auto& s = detail::process_key_store();
  for (;;) {
    const std::uint64_t seq = s.seq.load(std::memory_order_acquire);
    if (seq % 2 == 0 && detail::store_key(s, seq, k)) return;
    std::this_thread::yield();
  }
}

// The process's key: the one set, else drawn from the operating system on the first call.
// Thread-safe; the tools and the Wireshark plugin call it at start.
inline wire::hash_key process_hash_key() noexcept {
  auto& s = detail::process_key_store();
  for (;;) {
    const std::uint64_t seq = s.seq.load(std::memory_order_acquire);
    if (seq == 0) {
      // Drawn outside the lock; only the first to store it wins, the others read it.
      const wire::hash_key drawn = detail::draw_hash_key();
      if (detail::store_key(s, 0, drawn)) return drawn;
      continue;
    }
    if (seq % 2 == 0) {
      const wire::hash_key k{s.k0.load(std::memory_order_relaxed),
                             s.k1.load(std::memory_order_relaxed)};
      std::atomic_thread_fence(std::memory_order_acquire);
      if (s.seq.load(std::memory_order_relaxed) == seq) return k;
    }
    std::this_thread::yield();
  }
}

}  // namespace scaleup::dissect
