// Typed readers for what a Tofu link's receiver sees (003 IV.E, Figs. 4-6): a capture record of
// one slice (pseudo-header, RH, the lane's words, pad, FCS; slice.hpp) and a frame image
// (RH, TLP, DLLP, other control; frame.hpp). The inverses of write_record and emit_frame.
//
// Lax, like wire::read_frame: what can be decoded is, and every problem found on the way is in
// `errors`, in the order found. slicer.hpp's check_slice is the reassembler's verdict on a lane
// (FCS first, then nothing else is trusted); these readers report everything, for a person or a
// tool looking at the slice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/tofu/frame.hpp"
#include "scaleup/tofu/routing_header.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::tofu {

namespace detail {

// The routing header at b[offset] with its table's rules and the coordinate rules the table
// cannot state, each problem to `report`.
template <class Report>
constexpr wire::result<routing_header> read_routing(wire::bytes b, std::size_t offset,
                                                    Report&& report) noexcept {
  const auto rh = wire::decode_reported<routing_header>(b, offset, report);
  if (rh.err.code == wire::errc::truncated) return rh;
  if (wire::error e = check_coordinates(*rh)) {
    e.offset += static_cast<std::uint32_t>(offset);
    report(e);
  }
  return rh;
}

}  // namespace detail

// One capture record, as far as it could be read.
struct received_slice {
  std::optional<record_header> header;  // the pseudo-header
  bool link_ok = false;                 // 2 or 4 lanes, and the lane below them
  std::optional<routing_header> rh;     // at record_header_size
  unsigned ways = 0;                    // from PAT; 0 when PAT does not fit the link
  bool length_ok = false;               // as long as LEN, PAT and the lane make a slice
  std::size_t words = 0;                // 8-byte frame words in the slice (when length_ok)
  std::size_t first_word = 0;           // the frame word the first of them is
  // In the record: the words, and the zero pad after them (when length_ok). When the length is
  // wrong the words run to the FCS, as nothing says where they end.
  std::size_t words_offset = 0;
  std::size_t words_length = 0;
  std::size_t pad_offset = 0;
  std::size_t pad_length = 0;
  bool has_fcs = false;        // room for RH and FCS
  std::uint32_t fcs = 0;       // as carried
  std::uint32_t computed = 0;  // over RH, words and pad
  bool fcs_good = false;
  wire::error_list<12> errors;
  // Entries of `errors` found before the RH, the words and the FCS: where each problem goes
  // between the parts, for a consumer that shows them together (the dissection tree). They never
  // decrease: a part not reached has its predecessor's.
  std::size_t errors_before_rh = 0;
  std::size_t errors_before_words = 0;
  std::size_t errors_before_fcs = 0;

  constexpr bool ok() const noexcept { return errors.ok(); }
};

constexpr received_slice read_record(wire::bytes record) noexcept {
  using wire::errc;
  received_slice s;
  const auto report = [&s](const wire::error& e) { s.errors.add(e); };
  const std::size_t n = record.size();
  const auto h = wire::decode_reported<record_header>(record, 0, report);
  if (h.err.code == errc::truncated) return s;
  s.header = h.value;
  const std::size_t lane = h->lane;
  const std::size_t lanes = h->lanes;
  s.link_ok = (lanes == 2 || lanes == 4) && lane < lanes;
  if (!s.link_ok)
    report(wire::error{.code = errc::bad_value,
                       .layer = "tofu.slice",
                       .what = "lane count is not 2 or 4, or the lane is not below it",
                       .field = "tofu.slice.lane",
                       .value = lane});
  s.errors_before_rh = s.errors_before_words = s.errors_before_fcs = s.errors.size();
  constexpr std::size_t at = record_header_size;
  const auto rh = detail::read_routing(record, at, report);
  if (rh.err.code == errc::truncated) return s;
  s.rh = rh.value;
  const wire::bytes slice = record.subspan(at);
  s.has_fcs = slice.size() >= rh_size + fcs_size;
  const std::size_t fcs_at = s.has_fcs ? n - fcs_size : n;

  // Where the words end and the pad begins, if LEN, PAT and the lane say.
  const bool fits = s.link_ok && pattern_fits(rh->pat, lanes);
  if (!fits && s.link_ok)
    report(wire::error{.code = errc::unsupported,
                       .layer = "tofu.rh",
                       .offset = static_cast<std::uint32_t>(at + 6),
                       .what = "PAT is reserved or splits wider than the link",
                       .field = "tofu.rh.pat",
                       .value = rh->pat});
  s.ways = fits ? ways_of(rh->pat) : 0;
  const std::size_t want = fits ? slice_size(rh->len, s.ways, lane) : 0;
  s.length_ok = fits && slice.size() == want;
  if (fits && !s.length_ok)
    report(wire::error{.code = errc::bad_length,
                       .layer = "tofu.slice",
                       .offset = static_cast<std::uint32_t>(at),
                       .needed = static_cast<std::uint32_t>(want),
                       .available = static_cast<std::uint32_t>(slice.size()),
                       .what = "slice length is not what LEN, PAT and the lane make it",
                       .field = "tofu.rh.len",
                       .value = rh->len,
                       .item = static_cast<std::uint32_t>(lane + 1)});
  s.errors_before_words = s.errors_before_fcs = s.errors.size();
  s.words = s.length_ok ? lane_words(rh->len, s.ways, lane) : 0;
  s.first_word = s.length_ok ? lane % s.ways : 0;
  const std::size_t words_end = s.length_ok ? at + rh_size + s.words * word_size : fcs_at;
  s.words_offset = at + rh_size < words_end ? at + rh_size : words_end;
  s.words_length = words_end - s.words_offset;
  if (s.length_ok) {
    s.pad_offset = words_end;
    s.pad_length = fcs_at - words_end;
    for (std::size_t i = words_end; i < fcs_at; ++i)
      if (record[i] != 0) {
        report(wire::error{.code = errc::reserved_nonzero,
                           .layer = "tofu.slice.pad",
                           .offset = static_cast<std::uint32_t>(i),
                           .what = "pad is not zero",
                           .field = "tofu.slice.pad",
                           .value = record[i],
                           .level = wire::severity::warning});
        break;
      }
  }
  s.errors_before_fcs = s.errors.size();
  if (!s.has_fcs) {
    report(wire::truncated("tofu.slice", at, rh_size + fcs_size, slice.size(),
                           "no room for RH and FCS"));
    return s;
  }
  s.fcs = carried_fcs(slice);
  s.computed = slice_fcs(slice);
  s.fcs_good = s.fcs == s.computed;
  if (!s.fcs_good)
    report(
        wire::error{.code = errc::bad_checksum,
                    .layer = "tofu.slice",
                    .offset = static_cast<std::uint32_t>(fcs_at),
                    .what = "FCS does not match; value is the CRC computed over RH, words and pad",
                    .field = "tofu.slice.fcs",
                    .value = s.computed,
                    .item = static_cast<std::uint32_t>(lane + 1)});
  return s;
}

// A frame image (reassembled, or as built), as far as it could be read.
struct received_frame {
  std::optional<routing_header> rh;
  // The parts LEN places, as far as the image holds them (cut short, or empty, when it is
  // shorter than LEN says).
  wire::bytes tlp{};
  wire::bytes dllp{};
  wire::bytes other_control{};
  wire::error_list<8> errors;

  constexpr bool ok() const noexcept { return errors.ok(); }
};

constexpr received_frame read_frame(wire::bytes frame) noexcept {
  received_frame f;
  const auto rh = detail::read_routing(frame, 0, [&f](const wire::error& e) { f.errors.add(e); });
  if (rh.err.code == wire::errc::truncated) return f;
  f.rh = rh.value;
  const std::size_t want = frame_size(rh->len);
  if (frame.size() != want)
    f.errors.add(wire::error{.code = wire::errc::bad_length,
                             .layer = "tofu.frame",
                             .needed = static_cast<std::uint32_t>(want),
                             .available = static_cast<std::uint32_t>(frame.size()),
                             .what = "frame length disagrees with LEN",
                             .field = "tofu.rh.len",
                             .value = rh->len});
  const auto part = [&](std::size_t from, std::size_t len) {
    const std::size_t a = from < frame.size() ? from : frame.size();
    const std::size_t b = from + len < frame.size() ? from + len : frame.size();
    return frame.subspan(a, b - a);
  };
  const std::size_t tlp = tlp_size(rh->len);
  f.tlp = part(rh_size, tlp);
  f.dllp = part(rh_size + tlp, dllp_size);
  f.other_control = part(rh_size + tlp + dllp_size, other_control_size);
  return f;
}

}  // namespace scaleup::tofu
