// Values kept by index, the index of one removed given to the next added: offers waiting for
// their time, failovers under way, the event queue's list nodes. Memory follows the most held
// at once, and nothing is allocated once a run has reached that.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>
#include <vector>

namespace scaleup::sim {

template <class T>
class slot_pool {
 public:
  std::uint32_t add(const T& v) {
    if (free_.empty()) {
      slots_.push_back(v);
      return static_cast<std::uint32_t>(slots_.size() - 1);
    }
    const std::uint32_t i = free_.back();
    free_.pop_back();
    slots_[i] = v;
    return i;
  }
  // The value stays readable until the index is given out again.
  void remove(std::uint32_t i) { free_.push_back(i); }

  T& operator[](std::uint32_t i) noexcept { return slots_[i]; }
  const T& operator[](std::uint32_t i) const noexcept { return slots_[i]; }
  std::size_t in_use() const noexcept { return slots_.size() - free_.size(); }

 private:
  std::vector<T> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace scaleup::sim
