// The frame the data link layer builds before slicing (003 IV.E, Fig. 4): routing header, TLP,
// then the space where the DLLP and the "other control" word go. The image held here is that
// frame with its padding removed, as the slices carry it:
//
//   RH (8) | TLP (32 x (LEN + 1)) | DLLP (16) | other control (8)      = 32 x (LEN + 2) bytes
//
// Everything after the RH is a run of 8-byte words, the unit the slicer deals between lanes
// (decisions.md "Tofu-style slices": "8-byte word k of TLP and DLLP goes to slice k mod 2").
// The DLLP and the other-control word are opaque here: the paper draws their bytes (Figs. 5-6,
// "DLLP +0 .. +15", "other control +0 .. +7") but not what they hold.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "scaleup/tofu/routing_header.hpp"
#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::tofu {

inline constexpr std::size_t rh_size = wire::layout<routing_header>::size;
inline constexpr std::size_t word_size = 8;           // the rows of Figs. 4-6 (+0 .. +7)
inline constexpr std::size_t dllp_size = 16;          // "DLLP +0" .. "DLLP +15" (Figs. 5-6)
inline constexpr std::size_t other_control_size = 8;  // "other control +0 .. +7" (Figs. 5-6)

constexpr std::size_t frame_size(unsigned len) noexcept {
  return rh_size + tlp_size(len) + dllp_size + other_control_size;
}

// The words after the RH: TLP words first, then two DLLP words, then the other-control word.
constexpr std::size_t body_words(unsigned len) noexcept {
  return (frame_size(len) - rh_size) / word_size;
}

inline constexpr std::size_t max_frame_size = frame_size(max_len);
using frame_buffer = std::array<std::uint8_t, max_frame_size>;

// A frame image checked once: long enough for its RH, first bit 1, exactly as long as LEN says.
// The coordinates are not checked here (a frame is still sliced and carried with a bad one; the
// dissector reports it): call check_coordinates on rh() where it matters.
class frame_view {
 public:
  static constexpr wire::result<frame_view> make(wire::bytes b) noexcept {
    const auto rh = wire::decode<routing_header>(b);
    if (!rh) return rh.err;
    const std::size_t want = frame_size(rh->len);
    if (b.size() != want)
      return wire::error{.code = wire::errc::bad_length,
                         .layer = "tofu.frame",
                         .needed = static_cast<std::uint32_t>(want),
                         .available = static_cast<std::uint32_t>(b.size()),
                         .what = "frame length disagrees with LEN",
                         .field = "tofu.rh.len",
                         .value = rh->len};
    return frame_view(b, *rh);
  }

  constexpr frame_view() = default;

  constexpr const routing_header& rh() const noexcept { return rh_; }
  constexpr wire::bytes raw() const noexcept { return b_; }
  constexpr wire::bytes body() const noexcept { return b_.subspan(rh_size); }
  constexpr wire::bytes tlp() const noexcept { return b_.subspan(rh_size, tlp_size(rh_.len)); }
  constexpr wire::bytes dllp() const noexcept {
    return b_.subspan(rh_size + tlp_size(rh_.len), dllp_size);
  }
  constexpr wire::bytes other_control() const noexcept {
    return b_.subspan(b_.size() - other_control_size, other_control_size);
  }
  constexpr wire::bytes word(std::size_t k) const noexcept {
    return b_.subspan(rh_size + k * word_size, word_size);
  }

 private:
  constexpr frame_view(wire::bytes b, const routing_header& rh) : b_(b), rh_(rh) {}
  wire::bytes b_{};
  routing_header rh_{};
};

// Builds a frame image. The TLP must be exactly 32 x (LEN + 1) bytes: a shorter one would leave
// the receiver reading padding as data, so it is refused rather than padded.
constexpr wire::result<std::size_t> emit_frame(const routing_header& rh, wire::bytes tlp,
                                               wire::bytes dllp, wire::bytes other_control,
                                               wire::mutable_bytes out,
                                               const geometry& g = {}) noexcept {
  const auto bad_len = [](std::string_view what, std::size_t want, std::size_t have) {
    return wire::error{.code = wire::errc::bad_length,
                       .layer = "tofu.frame",
                       .needed = static_cast<std::uint32_t>(want),
                       .available = static_cast<std::uint32_t>(have),
                       .what = what};
  };
  if (rh.len > max_len) return encode_header(rh, out, g);  // value_too_big, from the table
  if (tlp.size() != tlp_size(rh.len))
    return bad_len("TLP is not 32 x (LEN + 1) bytes", tlp_size(rh.len), tlp.size());
  if (dllp.size() != dllp_size) return bad_len("DLLP is not 16 bytes", dllp_size, dllp.size());
  if (other_control.size() != other_control_size)
    return bad_len("other control is not 8 bytes", other_control_size, other_control.size());
  const std::size_t n = frame_size(rh.len);
  if (out.size() < n)
    return wire::error{.code = wire::errc::no_space,
                       .layer = "tofu.frame",
                       .needed = static_cast<std::uint32_t>(n),
                       .available = static_cast<std::uint32_t>(out.size()),
                       .what = "output buffer too small"};
  if (const auto r = encode_header(rh, out, g); !r) return r.err;
  std::size_t at = rh_size;
  for (const wire::bytes part : {tlp, dllp, other_control})
    for (const std::uint8_t x : part) out[at++] = x;
  return n;
}

// Rewrites the RH fields the link layer owns at send time: the pattern chosen for this
// transmission, the quality status it reports and its sequence number (003 IV.E: "the data link
// layer adds information to the packet"). Everything else in the frame stays as built.
constexpr wire::error restamp(wire::mutable_bytes frame, std::uint8_t pat, std::uint8_t stat,
                              std::uint16_t seq) noexcept {
  const auto vw = wire::view<routing_header>::make(frame);
  if (!vw) return vw.err;
  routing_header rh = vw->value();
  rh.pat = pat;
  rh.stat = stat;
  rh.seq = seq;
  const auto r = wire::encode(rh, frame);
  return r.err;
}

}  // namespace scaleup::tofu
