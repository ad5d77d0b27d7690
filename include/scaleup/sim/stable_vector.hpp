// A vector whose elements never move: storage in fixed chunks, so a reference stays valid
// while the vector grows (the fabric holds a frame's tag while handling it, and handling it may
// send other frames). Indexing is a shift, a mask and two loads.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace scaleup::sim {

template <class T, std::size_t ChunkBits = 10>
class stable_vector {
 public:
  static constexpr std::size_t chunk = std::size_t{1} << ChunkBits;

  std::size_t size() const noexcept { return size_; }
  T& operator[](std::size_t i) noexcept { return (*chunks_[i >> ChunkBits])[i & (chunk - 1)]; }

  // Grows to hold index i; elements added are value-initialised.
  T& at_grow(std::size_t i) {
    while (i >= chunks_.size() * chunk) chunks_.push_back(std::make_unique<std::array<T, chunk>>());
    if (i >= size_) size_ = i + 1;
    return (*this)[i];
  }

 private:
  std::vector<std::unique_ptr<std::array<T, chunk>>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace scaleup::sim
