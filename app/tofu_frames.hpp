// Tofu slices make a frame only together (tofu/slicer.hpp): what the capture session and the
// Wireshark plugin keep of a capture's slices to put its frames back together.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "scaleup/dissect/tree.hpp"
#include "scaleup/tofu/frame.hpp"
#include "scaleup/tofu/slicer.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::app {

class tofu_frames {
 public:
  // When `slice` is the last one its frame waited for: the frame put together (its bytes, valid
  // until the next push) or why it could not be.
  std::optional<wire::result<wire::bytes>> push(std::span<const std::uint8_t> slice);
  // The same frame dissected into a tree of this object's (encap "tofu.frame"; the error alone
  // when it could not be put together), valid until the next push; null until a frame is
  // complete.
  const dissect::large_tree* push_dissected(std::span<const std::uint8_t> slice);
  // The bytes of the frame push_dissected() last gave (none when it could not be put together):
  // what a display filter's `frame contains` reads.
  wire::bytes dissected_bytes() const noexcept { return bytes_; }

 private:
  tofu::record_collector lanes_;
  std::unique_ptr<tofu::frame_buffer> frame_;
  std::unique_ptr<dissect::large_tree> tree_;
  wire::bytes bytes_{};
};

}  // namespace scaleup::app
