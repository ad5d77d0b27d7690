// What the capture says of a frame beside its bytes, and the frame.* names it answers to: the
// frame output (JSON, summary, field tree, -T fields) and the field-name check share these.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "scaleup/wire/version.hpp"

namespace scaleup::dissect {

// What the capture says of a frame beside its bytes: tshark's frame.* fields. As tshark, the
// fields (JSON, -V, -T fields) have nine decimals whatever the capture recorded, and the summary
// line's Time column the decimals the capture recorded (`digits`: 6 for microseconds, 9 for
// nanoseconds).
struct frame_meta {
  std::uint64_t number = 0;
  std::uint64_t time_ns = 0;     // frame.time_epoch, in nanoseconds since 1970
  std::int64_t relative_ns = 0;  // frame.time_relative: since the first frame
  std::int64_t delta_ns = 0;     // frame.time_delta: since the frame before
  std::uint8_t digits = 9;
  std::uint32_t len = 0;        // frame.len: on the wire
  std::uint32_t cap_len = 0;    // frame.cap_len: captured
  bool has_interface = false;   // pcapng (and live captures) name the interface
  std::uint32_t interface = 0;  // frame.interface_id
};

// The decimals of the frame.time_* fields (tshark 4.0's, for every file).
inline constexpr unsigned field_digits = 9;

// The frame.* names frame_meta answers to, besides the tree's fields.
inline constexpr std::array<std::string_view, 7> frame_fields{
    "frame.number", "frame.time_epoch", "frame.time_relative", "frame.time_delta",
    "frame.len",    "frame.cap_len",    "frame.interface_id"};

}  // namespace scaleup::dissect
