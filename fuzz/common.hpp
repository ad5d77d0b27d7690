// Shared bits of the fuzz targets: a sink that discards, a checked abort, and for the
// state-machine targets an input reader and a bounded FIFO.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace scaleup::fuzz {

// An output sink for the printers that keeps nothing (but touches every byte it is given).
struct null_sink {
  std::size_t bytes = 0;
  void operator()(std::string_view s) noexcept {
    for (const char c : s) bytes += static_cast<unsigned char>(c) != 0 ? 1 : 0;
  }
};

// A broken invariant: crash loudly so both libFuzzer and the replay driver see it.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

// The input read a byte at a time; zeros once it runs out, so an event may take its arguments
// from the bytes after it without a length check.
struct reader {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t at = 0;

  bool more() const noexcept { return at < size; }
  std::uint8_t byte() noexcept { return at < size ? data[at++] : 0; }
};

// A bounded FIFO without allocation: a link's frames in flight. push_back refuses (returns
// false) when full; push_front puts a copy back at the head (a duplicate right behind it).
template <class T, std::size_t N>
class ring {
 public:
  bool empty() const noexcept { return count_ == 0; }
  bool full() const noexcept { return count_ == N; }
  std::size_t size() const noexcept { return count_; }
  T& front() noexcept { return items_[head_]; }
  T& operator[](std::size_t i) noexcept { return items_[(head_ + i) % N]; }
  bool push_back(const T& v) noexcept {
    if (full()) return false;
    items_[(head_ + count_) % N] = v;
    ++count_;
    return true;
  }
  bool push_front(const T& v) noexcept {
    if (full()) return false;
    head_ = (head_ + N - 1) % N;
    items_[head_] = v;
    ++count_;
    return true;
  }
  void pop_front() noexcept {
    if (count_ == 0) return;
    head_ = (head_ + 1) % N;
    --count_;
  }
  void clear() noexcept { head_ = count_ = 0; }

 private:
  std::array<T, N> items_{};
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace scaleup::fuzz
