// A FIFO that grows by doubling and never shrinks: the queues of a simulation, which reach their
// working size once and then allocate nothing per element (sim/ opts into the heap; this keeps
// that opt-in off the per-frame path).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstddef>
#include <vector>

namespace scaleup::sim {

template <class T>
class ring {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // The i-th element from the front.
  T& operator[](std::size_t i) noexcept { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  const T& operator[](std::size_t i) const noexcept {
    return buf_[(head_ + i) & (buf_.size() - 1)];
  }
  T& front() noexcept { return buf_[head_]; }
  T& back() noexcept { return (*this)[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  void pop_front() noexcept {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void clear() noexcept { head_ = size_ = 0; }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 4 : 2 * buf_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buf_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> buf_;  // a power of two long
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace scaleup::sim
