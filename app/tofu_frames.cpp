// Tofu frames from their slices (tofu_frames.hpp).
#include "app/tofu_frames.hpp"

#include "scaleup/dissect/tofu.hpp"

namespace scaleup::app {

std::optional<wire::result<wire::bytes>> tofu_frames::push(std::span<const std::uint8_t> slice) {
  if (!lanes_.push(slice).complete) return std::nullopt;
  if (!frame_) frame_ = std::make_unique<tofu::frame_buffer>();
  const auto r = lanes_.reassemble(*frame_);
  if (!r) return wire::result<wire::bytes>{{}, r.err};
  return wire::result<wire::bytes>{wire::bytes(frame_->data(), r->size), {}};
}

const dissect::large_tree* tofu_frames::push_dissected(std::span<const std::uint8_t> slice) {
  const auto frame = push(slice);
  if (!frame) return nullptr;
  if (!tree_) tree_ = std::make_unique<dissect::large_tree>();
  dissect::large_tree& t = *tree_;
  t.clear();
  bytes_ = *frame ? frame->value : wire::bytes{};
  if (*frame) {
    dissect::dissect_tofu_frame(t, frame->value);
    t.frame_length = static_cast<std::uint32_t>(frame->value.size());
  } else {
    t.encap = "tofu";
    t.add_error(frame->err);
  }
  t.encap = "tofu.frame";
  return &t;
}

}  // namespace scaleup::app
