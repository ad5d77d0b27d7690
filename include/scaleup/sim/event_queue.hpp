// The simulation's agenda: events ordered by time (integer nanoseconds), first in first out
// among equal times, for a clock that never goes back. The order is the one a heap of (time,
// sequence number) gives, at a constant cost per event:
//
//   - event_queue: a calendar of one slot per nanosecond over the next `window` ns, each slot
//     a FIFO list of the events of that time, found through a two-level bitmap; events further
//     ahead wait in a radix_queue and move into the calendar as time reaches them.
//   - radix_queue: a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990): an event sits in the
//     bucket of the highest bit in which its time differs from the last time taken, so adding
//     one is a push onto a vector, and taking one moves each event only towards bucket 0, at
//     most once per bit. Events of equal time always share a bucket and keep their order.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scaleup/sim/slot_pool.hpp"

namespace scaleup::sim {

// E has a std::uint64_t member `at`.
template <class E>
class radix_queue {
 public:
  static constexpr std::uint64_t never = ~std::uint64_t{0};

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // The time of the last event taken: nothing earlier can be added any more.
  std::uint64_t floor() const noexcept { return last_; }

  // Adds e; a time before floor() is taken as floor() (the past is over).
  void push(E e) {
    if (e.at < last_) e.at = last_;
    put(e);
    ++size_;
  }

  // The earliest time waiting (never when empty).
  std::uint64_t next_time() const noexcept {
    if (head0_ < buckets_[0].size()) return last_;
    return occupied_ == 0 ? never : min_[1 + std::countr_zero(occupied_)];
  }

  // Takes the earliest event (the first added among equal times). Not on an empty queue.
  E pop() {
    if (head0_ == buckets_[0].size()) refill();
    const E e = buckets_[0][head0_++];
    if (head0_ == buckets_[0].size()) {
      buckets_[0].clear();
      head0_ = 0;
    }
    --size_;
    return e;
  }

 private:
  void put(const E& e) {
    if (e.at == last_) {
      buckets_[0].push_back(e);
      return;
    }
    const auto b = static_cast<std::size_t>(64 - std::countl_zero(e.at ^ last_));
    if (buckets_[b].empty()) {
      occupied_ |= std::uint64_t{1} << (b - 1);
      min_[b] = e.at;
    } else if (e.at < min_[b]) {
      min_[b] = e.at;
    }
    buckets_[b].push_back(e);
  }

  // Bucket 0 is used up: the first non-empty bucket holds the earliest time, which becomes the
  // last time; that bucket's events spread, in their order, over the buckets below it.
  void refill() {
    const std::size_t b = 1 + static_cast<std::size_t>(std::countr_zero(occupied_));
    last_ = min_[b];
    occupied_ &= ~(std::uint64_t{1} << (b - 1));
    moving_.clear();
    moving_.swap(buckets_[b]);  // capacities circulate: nothing is allocated once warm
    for (const E& e : moving_) put(e);
  }

  std::array<std::vector<E>, 65> buckets_{};
  std::array<std::uint64_t, 65> min_{};  // the earliest time in each bucket 1..64 that is used
  std::uint64_t occupied_ = 0;           // bit b - 1: bucket b is not empty
  std::vector<E> moving_;
  std::size_t head0_ = 0;  // bucket 0 is taken from the front
  std::size_t size_ = 0;
  std::uint64_t last_ = 0;
};

// E has a std::uint64_t member `at`.
template <class E>
class event_queue {
 public:
  static constexpr std::uint64_t never = ~std::uint64_t{0};
  static constexpr std::size_t window = 4096;  // ns the calendar covers

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  std::uint64_t floor() const noexcept { return cur_; }

  // Adds e; a time before floor() is taken as floor() (the past is over).
  void push(E e) {
    if (e.at < cur_) e.at = cur_;
    ++size_;
    if (e.at < next_) next_ = e.at;
    if (e.at - cur_ < window)
      link(e);
    else
      far_.push(e);
  }

  // The earliest time waiting (never when empty).
  std::uint64_t next_time() const noexcept {
    if (next_ == unknown) next_ = near_ == 0 ? far_.next_time() : time_of(first_slot());
    return next_;
  }

  // Takes the earliest event (the first added among equal times). Not on an empty queue.
  E pop() {
    E e{};
    (void)take_until(never, e);
    return e;
  }

  // Takes the earliest event into `out` if its time is `limit` or earlier.
  bool take_until(std::uint64_t limit, E& out) {
    if (size_ == 0) return false;
    const std::uint64_t t = next_time();
    if (t > limit) return false;
    if (near_ == 0) {  // only far events: the calendar jumps to the first of them
      cur_ = t;
      pull();
    }
    // Each slot holds one time: the earliest time names its slot.
    const std::size_t s = t & mask;
    slot& sl = slots_[s];
    const std::uint32_t n = sl.head;
    out = nodes_[n].e;
    sl.head = nodes_[n].next;
    if (sl.head == nil) {
      words_[s >> 6] &= ~(std::uint64_t{1} << (s & 63));
      if (words_[s >> 6] == 0) summary_ &= ~(std::uint64_t{1} << (s >> 6));
      next_ = unknown;  // found in the bitmap when next asked
    }
    nodes_.remove(n);
    --near_;
    --size_;
    if (out.at != cur_) {
      cur_ = out.at;
      pull();  // the calendar moved: what was far may now be near
    }
    return true;
  }

 private:
  static constexpr std::size_t mask = window - 1;
  static constexpr std::uint32_t nil = 0xFFFFFFFFu;
  // next_ not known. (A time of 0 is then looked up each time it is asked for: still right.)
  static constexpr std::uint64_t unknown = 0;
  static_assert(window == 64 * 64, "two bitmap levels of 64 bits");

  struct node {
    E e;
    std::uint32_t next;
  };
  struct slot {
    std::uint32_t head = nil, tail = nil;
  };

  void link(const E& e) {
    const std::uint32_t n = nodes_.add(node{e, nil});
    const std::size_t s = e.at & mask;
    slot& sl = slots_[s];
    if (sl.head == nil) {
      sl.head = n;
      words_[s >> 6] |= std::uint64_t{1} << (s & 63);
      summary_ |= std::uint64_t{1} << (s >> 6);
    } else {
      nodes_[sl.tail].next = n;
    }
    sl.tail = n;
    ++near_;
  }

  // Far events now within the window join the calendar, in their order (after anything of the
  // same time already there: those were added later, when their time was already near).
  void pull() {
    while (!far_.empty() && far_.next_time() - cur_ < window) link(far_.pop());
  }

  // The time of the events in slot s.
  std::uint64_t time_of(std::size_t s) const noexcept {
    return cur_ + ((s - (cur_ & mask)) & mask);
  }

  // The first used slot at or after the current time's, going round.
  std::size_t first_slot() const noexcept {
    const std::size_t c = cur_ & mask;
    const std::size_t w = c >> 6;
    // The rest of the current word, then the words after it, then from the start.
    const std::uint64_t here = words_[w] & (~std::uint64_t{0} << (c & 63));
    if (here != 0) return (w << 6) | static_cast<std::size_t>(std::countr_zero(here));
    const std::uint64_t after = w == 63 ? 0 : summary_ & (~std::uint64_t{0} << (w + 1));
    const std::size_t v = static_cast<std::size_t>(std::countr_zero(after != 0 ? after : summary_));
    return (v << 6) | static_cast<std::size_t>(std::countr_zero(words_[v]));
  }

  std::array<slot, window> slots_{};
  std::array<std::uint64_t, 64> words_{};  // bit s & 63 of word s >> 6: slot s is used
  std::uint64_t summary_ = 0;              // bit w: word w is not zero
  slot_pool<node> nodes_;
  radix_queue<E> far_;
  std::uint64_t cur_ = 0;  // the time of the last event taken
  // The earliest time waiting, kept between calls (the fabric asks for it, then takes, at each
  // event): a push can only lower it; taking the last event of a slot makes it unknown. Events
  // that move from far to near are later than it.
  mutable std::uint64_t next_ = never;
  std::size_t near_ = 0;  // events in the calendar
  std::size_t size_ = 0;
};

}  // namespace scaleup::sim
