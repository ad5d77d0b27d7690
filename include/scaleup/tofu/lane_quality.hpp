// Lane quality and the choice of split mode (003 IV.E; decisions.md "Tofu-style slices").
//
// "The data link layer monitors the receiver-side PCS's detection frequencies of CRC and other
// transmission errors and adds the transmission quality status information to the packet as
// well. The data link layer determines the split mode of the packet, depending on the received
// transmission quality status information." Tofu2 instead dropped a failing lane for good ("once
// the link degraded, the number of lanes never recovered"); here a degraded lane keeps carrying
// duplicate copies, so its recovery is seen and the link goes back to splitting.
//
// One machine per link end holds both halves:
//   - receive side: per-lane error counters fed with every slice's verdict (slicer.hpp), and the
//     STAT this end sends in its own frames (bit i = lane i degraded; routing_header.hpp);
//   - send side: the pattern for the frames it sends, from the STAT its peer reports.
// The hysteresis sits where the errors are seen, so that a STAT is already a settled judgement:
// a lane becomes degraded when `bad_errors` errors fall within one `window`, and clean again only
// after `clean_period` without any error. An isolated error therefore never changes the mode,
// and a lane that errs now and then does not make the link flap.
//
// No frame is lost on the way: the link keeps every frame until the peer acknowledges it (the
// replay buffer of transport/llr.hpp, keyed by the RH's SEQ). A frame whose split slices fail is
// NACKed and sent again, and pat_to_send() sends every replay in duplicate mode, so a lane that
// has just failed cannot lose the same frame twice; frames already in flight when STAT turns are
// covered the same way. The switch itself only changes the pattern of frames not yet sent.
//
// Pure: step(state, event, now) -> (state, actions); times are nanoseconds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "scaleup/tofu/routing_header.hpp"
#include "scaleup/tofu/slicer.hpp"

namespace scaleup::tofu {

// What a receiver saw on a lane. `fcs` is the "CRC" error of 003 IV.E; the rest are its "other
// transmission errors".
enum class rx_error : std::uint8_t {
  none,
  fcs,      // the slice's FCS failed
  length,   // the slice is not as long as its RH says
  header,   // no routing header, or not the RH the other lanes carried
  pattern,  // PAT reserved or wider than the link
  framing,  // preamble, SFD or inter-frame gap damaged (strip_line)
  missing,  // the lane delivered no slice when the others did
};

constexpr rx_error rx_error_of(slice_status s) noexcept {
  switch (s) {
    case slice_status::good:
      return rx_error::none;
    case slice_status::missing:
      return rx_error::missing;
    case slice_status::bad_fcs:
      return rx_error::fcs;
    case slice_status::bad_length:
      return rx_error::length;
    case slice_status::bad_header:
      return rx_error::header;
    case slice_status::bad_pattern:
      return rx_error::pattern;
  }
  return rx_error::header;
}

// Defaults sized to the paper's link: a 2 KiB frame takes 320 ns (efficiency.hpp), so a window
// spans about 60 full frames and the clean period about 600.
struct lane_config {
  std::uint32_t bad_errors = 3;          // errors within one window that make a lane degraded
  std::uint64_t window = 20'000;         // ns; a window opens at the first error after the last
  std::uint64_t clean_period = 200'000;  // ns without an error before a degraded lane is clean
};

struct lane_record {
  std::uint64_t slices = 0;
  std::uint64_t errors = 0;
  std::uint64_t fcs_errors = 0;
  std::uint64_t other_errors = 0;
  std::uint64_t degradations = 0;  // times the lane became degraded
  std::uint64_t window_start = 0;
  std::uint32_t in_window = 0;
  std::uint64_t last_error = 0;
  bool degraded = false;
  friend constexpr bool operator==(const lane_record&, const lane_record&) = default;
};

// The widest split in which every class of words still has a clean lane. With no degraded lane
// that is the full width; on a quad-lane link one degraded lane still allows a 2-way split with
// each half on two lanes (PAT 1); with none clean at all, duplicate is the best there is.
template <std::size_t Lanes>
constexpr unsigned choose_ways(std::uint8_t degraded) noexcept {
  const unsigned bad = degraded & ((1u << Lanes) - 1);
  if (bad == 0) return Lanes;
  for (unsigned ways = Lanes / 2; ways > 1; ways /= 2) {
    bool every_class = true;
    for (unsigned k = 0; k < ways && every_class; ++k) {
      bool clean = false;
      for (unsigned l = k; l < Lanes; l += ways) clean = clean || !(bad & (1u << l));
      every_class = clean;
    }
    if (every_class) return ways;
  }
  return 1;
}

template <std::size_t Lanes>
struct lane_controller {
  static_assert(Lanes == 2 || Lanes == 4, "a link has 2 or 4 lanes (003 IV.E)");
  std::array<lane_record, Lanes> lanes{};
  std::uint8_t peer_stat = 0;                                // as last reported
  std::uint8_t pat = pat_for(static_cast<unsigned>(Lanes));  // for new frames
  std::uint64_t mode_switches = 0;

  // This end's STAT: its receive-side judgement of each lane.
  constexpr std::uint8_t stat() const noexcept {
    std::uint8_t s = 0;
    for (std::size_t l = 0; l < Lanes; ++l)
      if (lanes[l].degraded) s = static_cast<std::uint8_t>(s | (1u << l));
    return s;
  }
  friend constexpr bool operator==(const lane_controller&, const lane_controller&) = default;
};

enum class lane_input : std::uint8_t {
  slice,      // a slice arrived on `lane` with verdict `error` (none = good)
  peer_stat,  // a frame from the peer carried STAT `stat` (take it only from a good RH)
  tick,       // time passed: a degraded lane may have served its clean period
};

struct lane_event {
  lane_input input = lane_input::tick;
  std::uint8_t lane = 0;
  rx_error error = rx_error::none;
  std::uint8_t stat = 0;

  static constexpr lane_event slice(std::size_t lane, rx_error e = rx_error::none) noexcept {
    return {lane_input::slice, static_cast<std::uint8_t>(lane), e, 0};
  }
  static constexpr lane_event peer(std::uint8_t stat) noexcept {
    return {lane_input::peer_stat, 0, rx_error::none, stat};
  }
  static constexpr lane_event tick() noexcept { return {}; }
};

struct lane_actions {
  std::optional<std::uint8_t> stat;  // this end's STAT changed: send this from now on
  std::optional<std::uint8_t> pat;   // the pattern for new frames changed
  std::uint8_t degraded = 0;         // lanes that became degraded (bit i = lane i)
  std::uint8_t cleaned = 0;          // lanes that served their clean period
};

// The pattern for one transmission: a replay goes in duplicate mode whatever the link's mode,
// because it exists only because a split transmission failed.
template <std::size_t Lanes>
constexpr std::uint8_t pat_to_send(const lane_controller<Lanes>& s, bool replay) noexcept {
  return replay ? static_cast<std::uint8_t>(pattern::duplicate) : s.pat;
}

template <std::size_t Lanes>
constexpr std::pair<lane_controller<Lanes>, lane_actions> step(lane_controller<Lanes> s,
                                                               const lane_event& e,
                                                               std::uint64_t now,
                                                               const lane_config& c = {}) noexcept {
  lane_actions a;
  const std::uint8_t stat_before = s.stat();
  for (std::size_t l = 0; l < Lanes; ++l) {
    lane_record& r = s.lanes[l];
    if (r.degraded && now - r.last_error >= c.clean_period) {
      r.degraded = false;
      a.cleaned = static_cast<std::uint8_t>(a.cleaned | (1u << l));
    }
  }
  switch (e.input) {
    case lane_input::slice: {
      if (e.lane >= Lanes) break;
      lane_record& r = s.lanes[e.lane];
      ++r.slices;
      if (e.error == rx_error::none) break;
      ++r.errors;
      ++(e.error == rx_error::fcs ? r.fcs_errors : r.other_errors);
      if (r.in_window == 0 || now - r.window_start >= c.window) {
        r.window_start = now;
        r.in_window = 0;
      }
      ++r.in_window;
      r.last_error = now;
      if (!r.degraded && r.in_window >= c.bad_errors) {
        r.degraded = true;
        ++r.degradations;
        a.degraded = static_cast<std::uint8_t>(a.degraded | (1u << e.lane));
        a.cleaned = static_cast<std::uint8_t>(a.cleaned & ~(1u << e.lane));
      }
      break;
    }
    case lane_input::peer_stat: {
      s.peer_stat = static_cast<std::uint8_t>(e.stat & ((1u << Lanes) - 1));
      const std::uint8_t pat = pat_for(choose_ways<Lanes>(s.peer_stat));
      if (pat != s.pat) {
        s.pat = pat;
        ++s.mode_switches;
        a.pat = pat;
      }
      break;
    }
    case lane_input::tick:
      break;
  }
  if (s.stat() != stat_before) a.stat = s.stat();
  return {s, a};
}

// When a degraded lane will have served its clean period, if any is degraded: when to tick.
template <std::size_t Lanes>
constexpr std::optional<std::uint64_t> next_deadline(const lane_controller<Lanes>& s,
                                                     const lane_config& c = {}) noexcept {
  std::optional<std::uint64_t> t;
  for (const lane_record& r : s.lanes)
    if (r.degraded && (!t || r.last_error + c.clean_period < *t)) t = r.last_error + c.clean_period;
  return t;
}

}  // namespace scaleup::tofu
