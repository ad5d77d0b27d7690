// What the sequence analyses keep per PSN of one connection (analysis.hpp: the first sending of
// each PSN not yet acknowledged; conformance.hpp: the last sending of each), in PSN order. PSNs
// are unwrapped (64-bit, analysis.hpp unwrap_psn), so order holds across wraparound.
//
// New PSNs come rising and are appended to a vector; an ACK or NACK takes everything up to the PSN
// it covers from its front (an index moves; the dead part is dropped once it is half). Bisected
// for lookups. (The std::map this replaces spent 13 % of `stats` erasing acknowledged PSNs one node
// at a time.) A PSN below the highest one, which is no resend (a first transmission out of order,
// rare), goes to a std::map beside it: inserting it into the vector would move the entries after
// it, and a capture whose PSNs fall frame by frame would make that quadratic. Grows with the PSNs
// in flight, not the frames, and at most to psn_horizon of them (keep_within): PSNs are 16 bits,
// so a PSN half the space or more below the highest one sent can never be named again (a new
// one that looks like it is read as a PSN ahead: serial-number arithmetic).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace scaleup::dissect {

// Half the 16-bit PSN space: how far below the highest PSN a PSN can still be told apart.
inline constexpr std::int64_t psn_horizon = 32768;

template <class T>
class psn_ordered {
 public:
  const T* find(std::int64_t psn) const noexcept {
    const auto it = lower(psn);
    if (it != v_.end() && it->psn == psn) return &it->value;
    if (!aside_ || aside_->empty()) return nullptr;
    const auto a = aside_->find(psn);
    return a == aside_->end() ? nullptr : &a->second;
  }
  T* find(std::int64_t psn) noexcept {
    return const_cast<T*>(std::as_const(*this).find(psn));  // one search for both
  }

  // The entry of `psn`, made with `value` when there was none; and whether it was made.
  std::pair<T*, bool> try_emplace(std::int64_t psn, const T& value) {
    if (v_.size() == head_ || v_.back().psn < psn) {
      v_.push_back({psn, value});
      return {&v_.back().value, true};
    }
    if (T* there = find(psn)) return {there, false};
    if (!aside_) aside_ = std::make_unique<std::map<std::int64_t, T>>();
    return {&aside_->emplace(psn, value).first->second, true};
  }
  void insert_or_assign(std::int64_t psn, const T& value) {
    const auto [at, made] = try_emplace(psn, value);
    if (!made) *at = value;
  }

  // Drops every PSN up to and including `psn`.
  void erase_through(std::int64_t psn) noexcept {
    const auto end = std::upper_bound(live(), v_.cend(), psn,
                                      [](std::int64_t p, const entry& e) { return p < e.psn; });
    head_ = static_cast<std::size_t>(end - v_.cbegin());
    if (head_ == v_.size()) {
      // All acknowledged: a small buffer goes back (a million idle connections of a short
      // capture held 64 MB in buffers of two entries); a larger one is kept for the next PSNs
      // rather than grown again from one entry each time the connection drains.
      if (v_.capacity() <= small_buffer)
        std::vector<entry>().swap(v_);
      else
        v_.clear();
      head_ = 0;
    } else if (head_ >= 64 && 2 * head_ >= v_.size()) {  // each entry moves at most once
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    if (aside_ && !aside_->empty()) aside_->erase(aside_->begin(), aside_->upper_bound(psn));
  }

  // At most psn_horizon PSNs, the newest: those above `highest` - psn_horizon. Called as the
  // highest PSN sent rises; those below could never be found again (see the top of the file).
  void keep_within(std::int64_t highest) noexcept {
    if (size() > static_cast<std::size_t>(psn_horizon)) erase_through(highest - psn_horizon);
  }

  std::size_t size() const noexcept { return v_.size() - head_ + (aside_ ? aside_->size() : 0); }
  bool empty() const noexcept { return size() == 0; }

 private:
  struct entry {
    std::int64_t psn;
    T value;
  };
  static constexpr std::size_t small_buffer = 4;
  std::vector<entry> v_;
  std::size_t head_ = 0;  // the entries before it are dropped
  // PSNs that came below the vector's highest, first sent; made when the first one comes.
  std::unique_ptr<std::map<std::int64_t, T>> aside_;

  typename std::vector<entry>::const_iterator live() const noexcept {
    return v_.cbegin() + static_cast<std::ptrdiff_t>(head_);
  }
  typename std::vector<entry>::const_iterator lower(std::int64_t psn) const noexcept {
    return std::lower_bound(live(), v_.cend(), psn,
                            [](const entry& e, std::int64_t p) { return e.psn < p; });
  }
};

}  // namespace scaleup::dissect
