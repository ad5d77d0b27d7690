// Dissection of Tofu slice records (pcap LINKTYPE_USER1 = 148; slice.hpp) and of frames put
// back together from them (slicer.hpp), into the format-neutral tree of dissect/tree.hpp: the
// same layers, fields and errors the CLI prints and the Wireshark plugin walks.
//
// Only dissect/tree.hpp is included, not dissect/engine.hpp, so that the engine can include this
// file to serve link type 148. Lax, like the engine: what can be decoded is, and every problem
// found on the way is in the tree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/dissect/build.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/tofu/frame.hpp"
#include "scaleup/tofu/routing_header.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/tofu/slicer.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::tofu {

inline constexpr std::uint32_t link_tofu = 148;  // LINKTYPE_USER1, as pcap/capture.hpp names it

// Fields the dissector computes rather than reads, described like table fields.
namespace generated {
// clang-format off
inline constexpr std::array<wire::value_name, 2> fcs_status_names{{{0, "good"}, {1, "bad"}}};
inline constexpr wire::field_info fcs_status{
    .name = "FCS status", .filter = "tofu.slice.fcs.status", .width = 1, .type = wire::kind::label,
    .names = fcs_status_names, .description = "Whether the FCS matches RH, words and pad",
    .seed = "003 IV.E"};
inline constexpr wire::field_info ways{
    .name = "ways", .filter = "tofu.slice.ways", .width = 3,
    .description = "Ways the frame is split (1 = duplicate), from PAT",
    .seed = "003 IV.E; PAT codes: scaleup"};
inline constexpr wire::field_info words{
    .name = "words", .filter = "tofu.slice.words", .width = 16,
    .description = "8-byte words of TLP, DLLP and other control in this slice",
    .seed = "003 Figs. 5-6; decisions.md"};
inline constexpr wire::field_info first_word{
    .name = "first word", .filter = "tofu.slice.first_word", .width = 3,
    .description = "Frame word this slice's first word is; the next is that plus ways",
    .seed = "003 Fig. 6; decisions.md (word k to slice k mod 2)"};
inline constexpr wire::field_info pad{
    .name = "pad", .filter = "tofu.slice.pad", .width = 8,
    .description = "Zero bytes before the FCS that end the slice on a 16-byte beat",
    .seed = "003 Fig. 5 (zeros before FCS), V.D (16-byte alignment)"};
inline constexpr wire::field_info tlp_len{
    .name = "TLP length", .filter = "tofu.tlp.len", .width = 16,
    .description = "TLP bytes: 32 x (LEN + 1)", .seed = "003 Figs. 4-6"};
// clang-format on
inline constexpr std::array<const wire::field_info*, 6> all{&fcs_status, &ways, &words,
                                                            &first_word, &pad,  &tlp_len};
}  // namespace generated

namespace detail {

using dissect::add_generated;
using dissect::add_problem;

// The routing header and the range rules the table cannot state.
template <class Tree>
constexpr wire::result<routing_header> routing(Tree& t, wire::bytes data, std::size_t at) noexcept {
  const auto rh = dissect::add_header<routing_header>(t, data, at, data.size());
  if (rh.err.code == wire::errc::truncated) return rh;
  if (wire::error e = check_coordinates(*rh)) {
    e.offset += static_cast<std::uint32_t>(at);
    t.add_error(e);
  }
  return rh;
}

}  // namespace detail

// One capture record: pseudo-header, RH, the lane's words, pad, FCS. Appends to `t` (the caller
// clears it and sets frame_length, as dissect_frame does for the other link types).
template <class Tree>
constexpr void dissect_record(Tree& t, wire::bytes record) noexcept {
  using wire::errc;
  t.encap = "tofu";
  const std::size_t n = record.size();
  const auto h = dissect::add_header<record_header>(t, record, 0, n);
  if (h.err.code == errc::truncated) return;
  const std::size_t lane = h->lane;
  const std::size_t lanes = h->lanes;
  const bool link_ok = (lanes == 2 || lanes == 4) && lane < lanes;
  if (!link_ok)
    detail::add_problem(t, errc::bad_value, "tofu.slice", 0,
                        "lane count is not 2 or 4, or the lane is not below it", "tofu.slice.lane",
                        lane);
  constexpr std::size_t at = record_header_size;
  const auto rh = detail::routing(t, record, at);
  if (rh.err.code == errc::truncated) return;
  const wire::bytes slice = record.subspan(at);
  const bool has_fcs = slice.size() >= rh_size + fcs_size;
  const std::size_t fcs_at = has_fcs ? n - fcs_size : n;

  // Where the words end and the pad begins, if LEN, PAT and the lane say.
  const bool fits = link_ok && pattern_fits(rh->pat, lanes);
  if (!fits && link_ok)
    detail::add_problem(t, errc::unsupported, "tofu.rh", at + 6,
                        "PAT is reserved or splits wider than the link", "tofu.rh.pat", rh->pat);
  const unsigned ways = fits ? ways_of(rh->pat) : 0;
  const std::size_t want = fits ? slice_size(rh->len, ways, lane) : 0;
  const bool length_ok = fits && slice.size() == want;
  if (fits && !length_ok)
    detail::add_problem(t, errc::bad_length, "tofu.slice", at,
                        "slice length is not what LEN, PAT and the lane make it", "tofu.rh.len",
                        rh->len, want, slice.size(), wire::severity::error,
                        static_cast<std::uint32_t>(lane + 1));
  const std::size_t words = length_ok ? lane_words(rh->len, ways, lane) : 0;
  const std::size_t words_end = length_ok ? at + rh_size + words * word_size : fcs_at;
  const std::size_t words_at = at + rh_size < words_end ? at + rh_size : words_end;
  const auto wl = t.add_layer("tofu.slice.words",
                              ways > 1    ? "Words (split)"
                              : ways == 1 ? "Words (whole frame)"
                                          : "Words",
                              words_at, words_end - words_at);
  if (length_ok) {
    detail::add_generated(t, wl, generated::ways, ways);
    detail::add_generated(t, wl, generated::words, words);
    detail::add_generated(t, wl, generated::first_word, lane % ways);
    const std::size_t pad = fcs_at - words_end;
    const auto pl = t.add_layer("tofu.slice.pad", "Pad", words_end, pad);
    detail::add_generated(t, pl, generated::pad, pad);
    for (std::size_t i = words_end; i < fcs_at; ++i)
      if (record[i] != 0) {
        detail::add_problem(t, errc::reserved_nonzero, "tofu.slice.pad", i, "pad is not zero",
                            "tofu.slice.pad", record[i], 0, 0, wire::severity::warning);
        break;
      }
  }
  if (!has_fcs) {
    detail::add_problem(t, errc::truncated, "tofu.slice", at, "no room for RH and FCS", {}, 0,
                        rh_size + fcs_size, slice.size());
    return;
  }
  (void)dissect::add_header<fcs_trailer>(t, record, fcs_at, n);
  const auto fl = static_cast<std::uint16_t>(t.layer_count - 1);
  const bool good = carried_fcs(slice) == slice_fcs(slice);
  detail::add_generated(t, fl, generated::fcs_status, good ? 0 : 1);
  if (!good)
    detail::add_problem(t, errc::bad_checksum, "tofu.slice", fcs_at,
                        "FCS does not match; value is the CRC computed over RH, words and pad",
                        "tofu.slice.fcs", slice_fcs(slice), 0, 0, wire::severity::error,
                        static_cast<std::uint32_t>(lane + 1));
}

// A frame image (reassembled, or as built): RH, TLP, DLLP, other control. Appends to `t`.
template <class Tree>
constexpr void dissect_frame(Tree& t, wire::bytes frame) noexcept {
  t.encap = "tofu";
  const auto rh = detail::routing(t, frame, 0);
  if (rh.err.code == wire::errc::truncated) return;
  const std::size_t want = frame_size(rh->len);
  if (frame.size() != want)
    detail::add_problem(t, wire::errc::bad_length, "tofu.frame", 0,
                        "frame length disagrees with LEN", "tofu.rh.len", rh->len, want,
                        frame.size());
  const auto part = [&](std::string_view name, std::string_view title, std::size_t from,
                        std::size_t len) {
    const std::size_t a = from < frame.size() ? from : frame.size();
    const std::size_t b = from + len < frame.size() ? from + len : frame.size();
    return t.add_layer(name, title, a, b - a);
  };
  const std::size_t tlp = tlp_size(rh->len);
  const auto tl = part("tofu.tlp", "Transport layer packet", rh_size, tlp);
  detail::add_generated(t, tl, generated::tlp_len, tlp);
  part("tofu.dllp", "Data link layer packet", rh_size + tlp, dllp_size);
  part("tofu.other", "Other control", rh_size + tlp + dllp_size, other_control_size);
}

}  // namespace scaleup::tofu
