// The command profile's part in receiving a frame. wire::read_frame (wire/receive.hpp) cannot
// include pack/, a layer above it, yet two of its rules need command boundaries: the end of a PDU
// in a minimum-size Layer 2 frame (the R-CRC is at the first command boundary where the running
// CRC matches and only zeros follow, decisions.md "R-CRC and the end of a PDU") and the padding
// after a SUE Lite payload. A profile supplies them through wire::command_boundaries.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scaleup/pack/command.hpp"
#include "scaleup/wire/receive.hpp"

namespace scaleup::pack {

// The boundaries a profile's framing rules draw (frame_command, the one place they are read).
// Holds the profile by pointer: it must outlive the object.
class profile_boundaries final : public wire::command_boundaries {
 public:
  constexpr explicit profile_boundaries(const profile& p) noexcept : profile_(&p) {}

  constexpr std::size_t command_size(bytes at) const noexcept override {
    std::size_t size = 0;
    const command_type* type = nullptr;
    return frame_command(*profile_, at, 0, 0, size, type) ? 0 : size;
  }

 private:
  const profile* profile_;
};

// read_frame with a profile's command boundaries (none when `prof` is null); o.commands is
// replaced. `wire_length` as for wire::read_frame.
constexpr wire::received_frame read_frame(bytes frame, std::uint32_t link, const profile* prof,
                                          wire::receive_options o = {},
                                          std::size_t wire_length = 0) noexcept {
  if (!prof) {
    o.commands = nullptr;
    return wire::read_frame(frame, link, o, wire_length);
  }
  const profile_boundaries boundaries(*prof);
  o.commands = &boundaries;
  return wire::read_frame(frame, link, o, wire_length);
}

}  // namespace scaleup::pack
