// Slices: what each lane's PCS sends (003 IV.E, Figs. 5-6). "The routing header is duplicated to
// the two slices, TLP and DLLP are split or duplicated, and the padding is removed. Finally, the
// two slices are distributed to two PCSs and each PCS adds a preamble, a CRC code called FCS, and
// inter-frame gap to the slice."
//
// On one lane, as the PCS sends it (XGMII-style octets, before 64b/66b coding):
//
//   preamble FB 55 55 55 55 55 55 D5 | RH | the lane's words | zero pad | FCS | FD 07 07 .. 07
//
//   - Preamble: the 40/100 Gb Ethernet start block, start character 0xFB then preamble octets
//     and the SFD. The figure text has nine bit groups (1111 1011, seven of 1010 1010, then
//     1010 1011), but Figs. 5-6 draw the preamble as one 8-byte row above the 8-byte RH row, so
//     it is taken as eight octets; 0x55 and 0xD5 are drawn in transmission order (LSB first).
//   - The lane's words: the frame's words k with k mod ways == lane mod ways, in order (split
//     mode, Fig. 6); every word when ways = 1 (duplicate mode, Fig. 5). A frame has an odd
//     number of words, so in a 2-way split lane 0 carries one more (the other-control word) and
//     its slice is 16 bytes longer than lane 1's. Fig. 6's garbled rows may show the two slices
//     equally long, with DLLP and other control interleaved in 4-byte halves (digest F: the last
//     DLLP rows of slice 1 are uncertain); decisions.md's word rule is followed instead.
//   - Zero pad, then a 4-byte FCS: Fig. 5 ends the slice with a row "DLLP +12 .. +15, FCS"
//     after a row ending in zeros, and the datapath is 128 bits with 16-byte alignment (V.D).
//     So the pad is the fewest zero bytes (4 or 12) that make preamble through FCS a multiple of
//     16 bytes; with it the duplicate-mode slice is exactly as long as Fig. 5 draws it.
//   - FCS: CRC-32/ISO-HDLC (the Ethernet polynomial, as the R-CRC) over RH, words and pad,
//     appended big-endian like every multi-byte field here (decisions.md "Byte and bit order").
//   - Inter-frame gap: the terminate character 0xFD, then idles 0x07, 16 bytes in all: the
//     Ethernet minimum of 12 rounded up to the 16-byte datapath beat. Figs. 5-6 draw idle rows
//     of 0000 0111; their first octet reads 1111 1011 in the garbled text and is taken as the
//     terminate.
//
// A capture record (pcap LINKTYPE_USER1 = 148) holds one slice from the RH through the FCS,
// after a 2-byte pseudo-header: the lane is not in the slice's bytes (the RH is the same in
// every slice of a frame), so the record says which lane it was captured on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/tofu/frame.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::tofu {

inline constexpr std::array<std::uint8_t, 8> preamble{0xFB, 0x55, 0x55, 0x55,
                                                      0x55, 0x55, 0x55, 0xD5};
inline constexpr std::uint8_t terminate_char = 0xFD;
inline constexpr std::uint8_t idle_char = 0x07;
inline constexpr std::size_t preamble_size = preamble.size();
inline constexpr std::size_t fcs_size = 4;
inline constexpr std::size_t datapath_bytes = 16;  // 128-bit datapath, 16-byte alignment (V.D)
inline constexpr std::size_t ifg_size = 16;

// Words lane `lane` carries of a frame of LEN `len` split `ways` ways. With an odd number of
// words the low-numbered lanes carry one more: lane 0 takes the other-control word in a 2-way
// split, and sets the frame's time on the wire.
constexpr std::size_t lane_words(unsigned len, unsigned ways, std::size_t lane) noexcept {
  if (ways == 0) return 0;
  const std::size_t w = body_words(len);
  const std::size_t r = lane % ways;
  return w > r ? (w - r + ways - 1) / ways : 0;
}

constexpr std::size_t slice_pad(std::size_t words) noexcept {
  const std::size_t used = preamble_size + rh_size + words * word_size + fcs_size;
  return (datapath_bytes - used % datapath_bytes) % datapath_bytes;
}

// RH through FCS: what the FCS closes and what a capture record holds.
constexpr std::size_t slice_size(unsigned len, unsigned ways, std::size_t lane) noexcept {
  const std::size_t w = lane_words(len, ways, lane);
  return rh_size + w * word_size + slice_pad(w) + fcs_size;
}

// Preamble through the inter-frame gap: what the lane spends on the slice.
constexpr std::size_t line_size(unsigned len, unsigned ways, std::size_t lane) noexcept {
  return preamble_size + slice_size(len, ways, lane) + ifg_size;
}

inline constexpr std::size_t max_slice_size = slice_size(max_len, 1, 0);
inline constexpr std::size_t max_line_size = preamble_size + max_slice_size + ifg_size;

// Whether a link of `lanes` lanes can carry pattern `pat`: its ways must divide the lanes.
constexpr bool pattern_fits(std::uint8_t pat, std::size_t lanes) noexcept {
  const unsigned ways = ways_of(pat);
  return ways != 0 && ways <= lanes && lanes % ways == 0;
}

// The FCS as a one-field table, so that it is described, printed and filtered like every field.
struct fcs_trailer {
  std::uint32_t value = 0;
  friend constexpr bool operator==(const fcs_trailer&, const fcs_trailer&) = default;
};

// The capture record's pseudo-header (this library's; no seed has captures). The lane and the
// link's width let a reader put slices back together; the two flags are what only the sender or
// a channel emulator knows. A real capture leaves them 0.
struct record_header {
  std::uint8_t lane = 0;      // 0-based lane the slice travelled on
  std::uint8_t lanes = 2;     // lanes in the link: 2 or 4
  std::uint8_t replay = 0;    // the frame is a retransmission
  std::uint8_t injected = 0;  // the generator flipped bits in this slice on purpose
  std::uint8_t reserved = 0;
  friend constexpr bool operator==(const record_header&, const record_header&) = default;
};

inline constexpr std::size_t record_header_size = 2;
inline constexpr std::uint32_t link_tofu = 148;  // the records' link type: LINKTYPE_USER1
inline constexpr std::size_t max_record_size = record_header_size + max_slice_size;

}  // namespace scaleup::tofu

namespace scaleup::wire {

template <>
struct layout<tofu::fcs_trailer> {
  using T = tofu::fcs_trailer;
  static constexpr std::string_view name = "tofu.slice.fcs";
  static constexpr std::string_view title = "Tofu slice FCS";
  static constexpr std::string_view seed = "003 IV.E, Figs. 5-6";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::value, {.name = "FCS", .filter = "tofu.slice.fcs", .bit = 0, .width = 32,
                       .type = kind::hex,
                       .description = "CRC-32 (ISO-HDLC) over RH, words and pad, big-endian",
                       .seed = "003 IV.E (\"a CRC code called FCS\"); algorithm: scaleup"}),
  };
  // clang-format on
};

template <>
struct layout<tofu::record_header> {
  using T = tofu::record_header;
  static constexpr std::string_view name = "tofu.slice";
  static constexpr std::string_view title = "Tofu slice record (scaleup pseudo-header)";
  static constexpr std::string_view seed = "scaleup (captures of 003 IV.E slices)";
  static constexpr std::size_t size = tofu::record_header_size;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::lane, {.name = "lane", .filter = "tofu.slice.lane", .bit = 0, .width = 4,
                      .description = "Lane the slice was captured on, from 0",
                      .seed = "003 IV.E (one PCS per lane); field: scaleup"}),
      member(&T::lanes, {.name = "lanes", .filter = "tofu.slice.lanes", .bit = 4, .width = 4,
                       .description = "Lanes in the link (2, or 4 for a quad-lane link)",
                       .seed = "003 IV.E (dual-rail; PAT sized for quad-lane); field: scaleup"}),
      member(&T::replay, {.name = "replay", .filter = "tofu.slice.replay", .bit = 8, .width = 1,
                        .type = kind::flag,
                        .description = "Sender: this frame is being sent again",
                        .seed = "scaleup (lane_quality.hpp recovery)"}),
      member(&T::injected, {.name = "injected", .filter = "tofu.slice.injected", .bit = 9,
                          .width = 1, .type = kind::flag,
                          .description = "Generator: bits of this slice were flipped on purpose",
                          .seed = "scaleup"}),
      member(&T::reserved, {.name = "reserved", .filter = "tofu.slice.reserved", .bit = 10,
                          .width = 6, .description = "Reserved", .seed = "scaleup",
                          .check = rule::reserved}),
  };
  // clang-format on
};

static_assert(tiles<tofu::fcs_trailer>());
static_assert(tiles<tofu::record_header>());

}  // namespace scaleup::wire

namespace scaleup::tofu {

// The FCS a slice must end with: over everything before it.
constexpr std::uint32_t slice_fcs(wire::bytes slice) noexcept {
  return slice.size() < fcs_size ? 0 : wire::crc32(slice.first(slice.size() - fcs_size));
}

constexpr std::uint32_t carried_fcs(wire::bytes slice) noexcept {
  return slice.size() < fcs_size ? 0 : wire::load_be32(slice.data() + slice.size() - fcs_size);
}

// Preamble, slice, terminate and idles: a lane's octets for one slice.
constexpr wire::result<std::size_t> emit_line(wire::bytes slice, wire::mutable_bytes out) noexcept {
  const std::size_t n = preamble_size + slice.size() + ifg_size;
  if (out.size() < n)
    return wire::error{.code = wire::errc::no_space,
                       .layer = "tofu.line",
                       .needed = static_cast<std::uint32_t>(n),
                       .available = static_cast<std::uint32_t>(out.size()),
                       .what = "output buffer too small"};
  std::size_t at = 0;
  for (const std::uint8_t x : preamble) out[at++] = x;
  for (const std::uint8_t x : slice) out[at++] = x;
  out[at++] = terminate_char;
  while (at < n) out[at++] = idle_char;
  return n;
}

// The slice inside a lane's octets that start at a preamble. The slice's length is known only
// from its RH (LEN, PAT) and the lane, so both are needed. A damaged preamble, SFD or gap is a
// framing error: one of the "other transmission errors" the link monitors beside CRC errors
// (003 IV.E). The slice itself is not checked here (check_slice, slicer.hpp).
constexpr wire::result<wire::bytes> strip_line(wire::bytes line, std::size_t lane,
                                               std::size_t lanes) noexcept {
  const auto framing = [](std::size_t at, std::uint64_t v, std::string_view what) {
    return wire::error{.code = wire::errc::bad_value,
                       .layer = "tofu.line",
                       .offset = static_cast<std::uint32_t>(at),
                       .what = what,
                       .value = v};
  };
  if (line.size() < preamble_size + rh_size)
    return wire::truncated("tofu.line", 0, preamble_size + rh_size, line.size());
  for (std::size_t i = 0; i < preamble_size; ++i)
    if (line[i] != preamble[i])
      return framing(i, line[i], i + 1 == preamble_size ? "bad SFD" : "bad preamble");
  const auto rh = wire::view<routing_header>::make(line, preamble_size);
  const std::uint8_t pat = rh->get<&routing_header::pat>();
  if (!pattern_fits(pat, lanes) || lane >= lanes)
    return framing(preamble_size, pat, "PAT does not fit the link: slice length unknown");
  const std::size_t n = slice_size(rh->get<&routing_header::len>(), ways_of(pat), lane);
  if (line.size() < preamble_size + n + ifg_size)
    return wire::truncated("tofu.line", 0, preamble_size + n + ifg_size, line.size());
  const std::size_t gap = preamble_size + n;
  if (line[gap] != terminate_char) return framing(gap, line[gap], "no terminate after the FCS");
  for (std::size_t i = gap + 1; i < gap + ifg_size; ++i)
    if (line[i] != idle_char) return framing(i, line[i], "inter-frame gap is not idle");
  return line.subspan(preamble_size, n);
}

}  // namespace scaleup::tofu
