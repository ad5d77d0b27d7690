// Text built in place, a dissect::direct_sink: the printers write a frame's text where it is
// kept, and it is copied out once. A batch of frames dissected on one thread keeps its frames'
// output in one (session.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace scaleup::app {

class text_buffer {
 public:
  char* reserve(std::size_t n) {
    if (cap_ - size_ < n) grow(n);
    return data_.get() + size_;
  }
  void commit(char* end) noexcept { size_ = static_cast<std::size_t>(end - data_.get()); }
  void operator()(std::string_view s) {
    char* const p = reserve(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    size_ += s.size();
  }
  std::string_view view() const noexcept { return {data_.get(), size_}; }
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return cap_; }
  void clear() noexcept { size_ = 0; }

 private:
  void grow(std::size_t n) {
    const std::size_t cap = std::max({2 * cap_, size_ + n, std::size_t{1} << 16});
    std::unique_ptr<char[]> bigger(new char[cap]);  // not cleared: written before it is read
    if (size_) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    cap_ = cap;
  }
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

}  // namespace scaleup::app
