// The reset signals of the XPU command interface (R2 Tables 3-4): tx_reset_in / rx_reset_in
// ("Reset.", an input of SUE) and tx_reset_out / rx_reset_out ("Indicates SUE is in reset.", an
// output). One machine per direction, pure: step(state, event, now) -> (state, actions).
//
// The seed gives the signals and nothing of their timing. What scaleup fixes (docs/wire-format.md,
// "Command interface"):
//   - reset_in high puts that direction of SUE in reset at once: reset_out goes high on the same
//     cycle, commands queued in that direction are discarded, and its credits are withdrawn (the
//     credit word shows no valid credit), so neither side may start a command;
//   - while reset_in stays high SUE stays in reset; when it falls, SUE needs `recovery` cycles to
//     initialise its queues, then reset_out falls and the initial credits are granted again;
//   - a beat offered while reset_out is high is refused with an error (never half-accepted);
//   - the two directions reset independently (each table has its own pair of signals).
#pragma once

#include <cstdint>
#include <utility>

#include "scaleup/wire/error.hpp"

namespace scaleup::pack {

struct reset_config {
  std::uint32_t recovery = 16;  // cycles from reset_in falling to reset_out falling
};

struct interface_reset {
  bool reset_in = false;         // as last driven by the XPU
  bool reset_out = false;        // as SUE drives it
  std::uint32_t recovering = 0;  // cycles left before reset_out falls
  std::uint64_t resets = 0;
};

enum class reset_input : std::uint8_t {
  assert_reset,    // reset_in rises
  deassert_reset,  // reset_in falls
  clock,           // one cycle passes
};

struct reset_actions {
  bool discard_queued = false;    // drop every command queued in this direction
  bool withdraw_credits = false;  // the credit word carries no valid credit from now
  bool grant_credits = false;     // out of reset: grant the initial credits again
  bool reset_out = false;         // the value of reset_out after this event
};

constexpr std::pair<interface_reset, reset_actions> step(interface_reset s, reset_input in,
                                                         const reset_config& c = {}) noexcept {
  reset_actions a;
  switch (in) {
    case reset_input::assert_reset:
      if (!s.reset_out) {
        a.discard_queued = a.withdraw_credits = true;
        ++s.resets;
      }
      s.reset_in = s.reset_out = true;
      s.recovering = 0;
      break;
    case reset_input::deassert_reset:
      if (s.reset_in) s.recovering = c.recovery;
      s.reset_in = false;
      if (s.reset_out && s.recovering == 0) {
        s.reset_out = false;
        a.grant_credits = true;
      }
      break;
    case reset_input::clock:
      if (s.reset_out && !s.reset_in && s.recovering > 0 && --s.recovering == 0) {
        s.reset_out = false;
        a.grant_credits = true;
      }
      break;
  }
  a.reset_out = s.reset_out;
  return {s, a};
}

// Whether a beat may be taken now: refused while SUE is in reset.
constexpr wire::error accepts_beats(const interface_reset& s) noexcept {
  if (!s.reset_out) return {};
  return wire::error{.code = wire::errc::unsupported,
                     .layer = "xpu_if",
                     .what = "SUE is in reset (reset_out high): no command is taken",
                     .field = "tx_reset_out",
                     .value = 1};
}

}  // namespace scaleup::pack
