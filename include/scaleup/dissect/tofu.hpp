// Dissection of Tofu slice records (pcap LINKTYPE_USER1 = 148; tofu/slice.hpp) and of frames
// put back together from them (tofu/slicer.hpp), into the format-neutral tree of
// dissect/tree.hpp: the same layers, fields and errors the CLI prints and the Wireshark plugin
// walks. Built from the typed readers of tofu/receive.hpp, which find every problem.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scaleup/dissect/build.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/tofu/frame.hpp"
#include "scaleup/tofu/receive.hpp"
#include "scaleup/tofu/routing_header.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::dissect {

// Fields the dissector computes rather than reads, described like table fields.
namespace tofu_computed_fields {
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
}  // namespace tofu_computed_fields

// One capture record: pseudo-header, RH, the lane's words, pad, FCS. Appends to `t` (the caller
// clears it and sets frame_length, as dissect_frame does for the other link types).
template <class Tree>
constexpr void dissect_tofu_record(Tree& t, wire::bytes record) noexcept {
  namespace cf = tofu_computed_fields;
  t.encap = "tofu";
  const tofu::received_slice s = tofu::read_record(record);
  std::size_t copied = 0;
  const auto rest = [&] { copy_errors(t, s.errors, copied, s.errors.size()); };
  if (!s.header) return rest();
  add_fields(t, record, 0, *s.header);
  copied = copy_errors(t, s.errors, copied, s.errors_before_rh);
  if (!s.rh) return rest();
  add_fields(t, record, tofu::record_header_size, *s.rh);
  copied = copy_errors(t, s.errors, copied, s.errors_before_words);
  const auto wl = t.add_layer("tofu.slice.words",
                              s.ways > 1    ? "Words (split)"
                              : s.ways == 1 ? "Words (whole frame)"
                                            : "Words",
                              s.words_offset, s.words_length);
  if (s.length_ok) {
    add_generated(t, wl, cf::ways, s.ways);
    add_generated(t, wl, cf::words, s.words);
    add_generated(t, wl, cf::first_word, s.first_word);
    const auto pl = t.add_layer("tofu.slice.pad", "Pad", s.pad_offset, s.pad_length);
    add_generated(t, pl, cf::pad, s.pad_length);
  }
  copied = copy_errors(t, s.errors, copied, s.errors_before_fcs);
  if (!s.has_fcs) return rest();
  const auto fl = add_fields(t, record, record.size() - tofu::fcs_size, tofu::fcs_trailer{s.fcs});
  add_generated(t, fl, cf::fcs_status, s.fcs_good ? 0 : 1);
  rest();
}

// A frame image (reassembled, or as built): RH, TLP, DLLP, other control. Appends to `t`.
template <class Tree>
constexpr void dissect_tofu_frame(Tree& t, wire::bytes frame) noexcept {
  t.encap = "tofu";
  const tofu::received_frame f = tofu::read_frame(frame);
  if (f.rh) add_fields(t, frame, 0, *f.rh);
  copy_errors(t, f.errors, 0, f.errors.size());
  if (!f.rh) return;
  const auto part = [&](std::string_view name, std::string_view title, wire::bytes p) {
    return t.add_layer(name, title, static_cast<std::size_t>(p.data() - frame.data()), p.size());
  };
  const auto tl = part("tofu.tlp", "Transport layer packet", f.tlp);
  add_generated(t, tl, tofu_computed_fields::tlp_len, tofu::tlp_size(f.rh->len));
  part("tofu.dllp", "Data link layer packet", f.dllp);
  part("tofu.other", "Other control", f.other_control);
}

}  // namespace scaleup::dissect
