// Dynamic packet slicing and its inverse (003 IV.E, Figs. 4-6; decisions.md "Tofu-style
// slices"). The slicer reads the pattern from the frame's own RH (the data link layer has already
// chosen it: lane_quality.hpp) and deals the frame's 8-byte words: word k goes to every lane l
// with l mod ways == k mod ways. The RH goes to every lane unchanged.
//
// The reassembler takes one slice per lane (empty = nothing arrived) and rebuilds the frame from,
// for each class of words, the lowest-numbered lane whose slice passed every check. In duplicate
// mode that is whichever copy is good ("A receiver in duplicate mode uses whichever copy is
// good", decisions.md); in split mode a class whose only lane failed makes the frame fail, and
// the error names that lane. Every lane's verdict comes back either way: they feed the lane
// quality monitor, which counts errors on copies the frame did not need as well.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "scaleup/tofu/frame.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::tofu {

// ---- slicing -------------------------------------------------------------------------------

// Lane `lane`'s slice of `frame` (RH through FCS) into `out`; returns its size.
constexpr wire::result<std::size_t> write_slice(wire::bytes frame, std::size_t lane,
                                                std::size_t lanes,
                                                wire::mutable_bytes out) noexcept {
  const auto f = frame_view::make(frame);
  if (!f) return f.err;
  const routing_header& rh = f->rh();
  if (lanes == 0 || lanes > max_lanes || lane >= lanes)
    return wire::error{.code = wire::errc::bad_value,
                       .layer = "tofu.slice",
                       .what = "no such lane",
                       .field = "tofu.slice.lane",
                       .value = lane};
  if (!pattern_fits(rh.pat, lanes))
    return wire::error{.code = wire::errc::unsupported,
                       .layer = "tofu.rh",
                       .offset = 6,
                       .what = "PAT is reserved or splits wider than the link",
                       .field = "tofu.rh.pat",
                       .value = rh.pat};
  const unsigned ways = ways_of(rh.pat);
  const std::size_t words = lane_words(rh.len, ways, lane);
  const std::size_t n = slice_size(rh.len, ways, lane);
  if (out.size() < n)
    return wire::error{.code = wire::errc::no_space,
                       .layer = "tofu.slice",
                       .needed = static_cast<std::uint32_t>(n),
                       .available = static_cast<std::uint32_t>(out.size()),
                       .what = "output buffer too small"};
  // Whole words at a time (each an 8-byte move; duplicate mode, one run for the whole body).
  std::size_t at = rh_size;
  wire::copy_bytes(out.data(), frame.data(), rh_size);
  if (ways == 1) {
    wire::copy_bytes(out.data() + at, frame.data() + rh_size, words * word_size);
    at += words * word_size;
  } else {
    for (std::size_t j = 0; j < words; ++j, at += word_size)
      wire::copy_bytes(out.data() + at, f->word(lane % ways + j * ways).data(), word_size);
  }
  while (at < n - fcs_size) out[at++] = 0;
  wire::store_be32(out.data() + at, wire::crc32(out.first(at)));
  return n;
}

// The slices of one frame, one fixed buffer per lane. Lanes is the link's width: 2 (dual-rail,
// the paper's link) or 4 (the quad-lane link PAT was sized for).
template <std::size_t Lanes>
struct slice_set {
  static_assert(Lanes == 2 || Lanes == 4, "a link has 2 or 4 lanes (003 IV.E)");
  static constexpr std::size_t lanes = Lanes;
  std::array<std::array<std::uint8_t, max_slice_size>, Lanes> buf{};
  std::array<std::size_t, Lanes> size{};

  constexpr wire::bytes operator[](std::size_t lane) const noexcept {
    return wire::bytes(buf[lane].data(), size[lane]);
  }
  constexpr wire::mutable_bytes slice(std::size_t lane) noexcept {
    return wire::mutable_bytes(buf[lane].data(), size[lane]);
  }
  constexpr std::array<wire::bytes, Lanes> spans() const noexcept {
    std::array<wire::bytes, Lanes> out{};
    for (std::size_t l = 0; l < Lanes; ++l) out[l] = (*this)[l];
    return out;
  }
};

template <std::size_t Lanes>
constexpr wire::error slice_frame(wire::bytes frame, slice_set<Lanes>& out) noexcept {
  for (std::size_t l = 0; l < Lanes; ++l) {
    const auto r = write_slice(frame, l, Lanes, out.buf[l]);
    if (!r) {
      out.size = {};
      return r.err;
    }
    out.size[l] = *r;
  }
  return {};
}

// ---- checking one slice --------------------------------------------------------------------

enum class slice_status : std::uint8_t {
  good,
  missing,      // nothing arrived on the lane
  bad_fcs,      // the FCS does not match: nothing in the slice can be trusted
  bad_length,   // FCS good, but the length is not what LEN, PAT and the lane make it
  bad_header,   // FCS good, but no routing header (first bit 0) or a different RH than the rest
  bad_pattern,  // FCS good, but PAT is reserved or does not fit the link
};

inline constexpr std::array<wire::value_name, 6> slice_status_names{{
    {0, "good"},
    {1, "missing"},
    {2, "bad FCS"},
    {3, "bad length"},
    {4, "bad header"},
    {5, "bad pattern"},
}};

constexpr std::string_view to_string(slice_status s) noexcept {
  return slice_status_names[static_cast<std::size_t>(s)].name;
}

struct slice_check {
  slice_status status = slice_status::missing;
  routing_header rh{};  // as read, when the slice holds one (even if it failed)
  unsigned ways = 0;
  std::uint32_t fcs = 0;       // as carried
  std::uint32_t computed = 0;  // over RH, words and pad
  std::size_t expected = 0;    // the length LEN, PAT and the lane call for (0 if unknown)
};

// The checks one lane can make alone, FCS first because it covers everything else.
constexpr slice_check check_slice(wire::bytes slice, std::size_t lane, std::size_t lanes) noexcept {
  slice_check c;
  if (slice.empty()) return c;
  if (slice.size() >= rh_size) c.rh = wire::view<routing_header>::make(slice)->value();
  if (slice.size() < rh_size + fcs_size) {
    c.status = slice_status::bad_length;
    return c;
  }
  c.fcs = carried_fcs(slice);
  c.computed = slice_fcs(slice);
  if (c.fcs != c.computed) {
    c.status = slice_status::bad_fcs;
    return c;
  }
  if (c.rh.one != 1) {
    c.status = slice_status::bad_header;
    return c;
  }
  if (!pattern_fits(c.rh.pat, lanes) || lane >= lanes) {
    c.status = slice_status::bad_pattern;
    return c;
  }
  c.ways = ways_of(c.rh.pat);
  c.expected = slice_size(c.rh.len, c.ways, lane);
  c.status = slice.size() == c.expected ? slice_status::good : slice_status::bad_length;
  return c;
}

// ---- reassembly ----------------------------------------------------------------------------

// Every lane's verdict, which lane each class of words came from, and the frame's RH.
struct reassembly {
  std::size_t lanes = 0;
  std::array<slice_status, max_lanes> lane{};
  std::array<std::int8_t, max_lanes> source{-1, -1, -1, -1};  // per class of words; -1 = none
  unsigned ways = 0;
  std::size_t size = 0;  // frame bytes written
  routing_header rh{};

  // Lanes whose slice failed or never came: bit i (2^i) = lane i, as STAT counts lanes.
  constexpr std::uint8_t failed() const noexcept {
    std::uint8_t m = 0;
    for (std::size_t l = 0; l < lanes; ++l)
      if (lane[l] != slice_status::good) m = static_cast<std::uint8_t>(m | (1u << l));
    return m;
  }
};

// A lane named by an error of the reassembler, or -1. error.item counts from 1 (error.hpp), so
// it holds lane + 1.
constexpr int failed_lane(const wire::error& e) noexcept {
  return e && e.layer == "tofu.slice" && e.item > 0 ? static_cast<int>(e.item) - 1 : -1;
}

namespace detail {

constexpr wire::error lane_error(slice_status s, std::size_t lane, std::string_view what,
                                 std::uint64_t value) noexcept {
  wire::errc code = wire::errc::bad_value;
  std::string_view field = "tofu.slice.lane";
  switch (s) {
    case slice_status::missing:
      code = wire::errc::truncated;
      break;
    case slice_status::bad_fcs:
      code = wire::errc::bad_checksum;
      field = "tofu.slice.fcs";
      break;
    case slice_status::bad_length:
      code = wire::errc::bad_length;
      break;
    case slice_status::bad_header:
      code = wire::errc::bad_value;
      field = "tofu.rh";
      break;
    case slice_status::bad_pattern:
      code = wire::errc::unsupported;
      field = "tofu.rh.pat";
      break;
    case slice_status::good:
      break;
  }
  return wire::error{.code = code,
                     .layer = "tofu.slice",
                     .what = what,
                     .field = field,
                     .value = value,
                     .item = static_cast<std::uint32_t>(lane + 1)};
}

}  // namespace detail

// Rebuilds the frame from one slice per lane (slices.size() = the link's lanes, 2 or 4). The
// result carries the verdicts even when it carries an error; the error names (item = lane + 1)
// the first lane whose failure left a class of words with no good copy.
constexpr wire::result<reassembly> reassemble(std::span<const wire::bytes> slices,
                                              wire::mutable_bytes frame) noexcept {
  reassembly r;
  r.lanes = slices.size();
  if (r.lanes != 2 && r.lanes != 4)
    return wire::error{.code = wire::errc::unsupported,
                       .layer = "tofu.slice",
                       .what = "a link has 2 or 4 lanes",
                       .field = "tofu.slice.lanes",
                       .value = r.lanes};
  std::array<slice_check, max_lanes> c{};
  int ref = -1;  // the lowest good lane: its RH is the frame's
  for (std::size_t l = 0; l < r.lanes; ++l) {
    c[l] = check_slice(slices[l], l, r.lanes);
    if (c[l].status == slice_status::good && ref < 0) ref = static_cast<int>(l);
  }
  // A good slice whose RH differs from the reference's belongs to another frame.
  for (std::size_t l = 0; ref >= 0 && l < r.lanes; ++l)
    if (c[l].status == slice_status::good && !(c[l].rh == c[static_cast<std::size_t>(ref)].rh))
      c[l].status = slice_status::bad_header;
  for (std::size_t l = 0; l < r.lanes; ++l) r.lane[l] = c[l].status;
  if (ref < 0)
    return wire::result<reassembly>(
        r, detail::lane_error(c[0].status, 0, "no lane delivered a good slice", c[0].computed));
  const auto& head = c[static_cast<std::size_t>(ref)];
  r.rh = head.rh;
  r.ways = head.ways;
  for (std::size_t k = 0; k < r.ways; ++k) {
    for (std::size_t l = k; l < r.lanes && r.source[k] < 0; l += r.ways)
      if (c[l].status == slice_status::good) r.source[k] = static_cast<std::int8_t>(l);
    if (r.source[k] >= 0) continue;
    std::size_t l = k;  // every lane of the class failed: name the first
    return wire::result<reassembly>(
        r, detail::lane_error(c[l].status, l,
                              r.ways == 1 ? "every copy failed"
                                          : "split mode: this lane's words have no good copy",
                              c[l].computed));
  }
  const std::size_t n = frame_size(r.rh.len);
  if (frame.size() < n)
    return wire::result<reassembly>(
        r, wire::error{.code = wire::errc::no_space,
                       .layer = "tofu.frame",
                       .needed = static_cast<std::uint32_t>(n),
                       .available = static_cast<std::uint32_t>(frame.size()),
                       .what = "output buffer too small"});
  const wire::bytes first = slices[static_cast<std::size_t>(ref)];
  wire::copy_bytes(frame.data(), first.data(), rh_size);
  for (std::size_t k = 0; k < r.ways; ++k) {
    const wire::bytes s = slices[static_cast<std::size_t>(r.source[k])];
    const std::size_t words = lane_words(r.rh.len, r.ways, k);
    if (r.ways == 1) {  // duplicate mode: the body is one run
      wire::copy_bytes(frame.data() + rh_size, s.data() + rh_size, words * word_size);
      continue;
    }
    for (std::size_t j = 0; j < words; ++j)
      wire::copy_bytes(frame.data() + rh_size + (k + j * r.ways) * word_size,
                       s.data() + rh_size + j * word_size, word_size);
  }
  r.size = n;
  return r;
}

template <std::size_t Lanes>
constexpr wire::result<reassembly> reassemble(const std::array<wire::bytes, Lanes>& slices,
                                              wire::mutable_bytes frame) noexcept {
  return reassemble(std::span<const wire::bytes>(slices), frame);
}

// ---- capture records -----------------------------------------------------------------------

// A record (pseudo-header + slice) as the capture file holds it.
constexpr wire::result<std::size_t> write_record(const record_header& h, wire::bytes slice,
                                                 wire::mutable_bytes out) noexcept {
  const std::size_t n = record_header_size + slice.size();
  if (out.size() < n)
    return wire::error{.code = wire::errc::no_space,
                       .layer = "tofu.slice",
                       .needed = static_cast<std::uint32_t>(n),
                       .available = static_cast<std::uint32_t>(out.size()),
                       .what = "output buffer too small"};
  if (const auto r = wire::encode(h, out); !r) return r.err;
  for (std::size_t i = 0; i < slice.size(); ++i) out[record_header_size + i] = slice[i];
  return n;
}

// Gathers the records of one frame from a capture, where the generator writes a frame's slices
// one after another, lane 0 first (so grouping never depends on bytes that may be corrupt).
// A record of lane 0 starts a new frame; one that arrives while a frame is incomplete discards
// what was gathered (reported, so the reader can say so).
class record_collector {
 public:
  struct outcome {
    bool complete = false;     // every lane of the frame is in: call reassemble()
    std::uint8_t dropped = 0;  // lanes of an unfinished frame discarded (bit i = lane i)
    wire::error err{};         // the record's pseudo-header was unusable; nothing was kept
  };

  constexpr outcome push(wire::bytes record) noexcept {
    outcome o;
    const auto h = wire::decode<record_header>(record);
    if (!h || (h->lanes != 2 && h->lanes != 4) || h->lane >= h->lanes) {
      o.err = h ? wire::error{.code = wire::errc::bad_value,
                              .layer = "tofu.slice",
                              .what = "lane or lane count out of range",
                              .field = "tofu.slice.lane",
                              .value = h->lane}
                : h.err;
      return o;
    }
    const wire::bytes slice = record.subspan(record_header_size);
    if (slice.size() > max_slice_size) {
      o.err = wire::error{.code = wire::errc::bad_length,
                          .layer = "tofu.slice",
                          .needed = static_cast<std::uint32_t>(max_slice_size),
                          .available = static_cast<std::uint32_t>(slice.size()),
                          .what = "record longer than any slice"};
      return o;
    }
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << h->lane);
    if (h->lane == 0 || have_ & bit || h->lanes != lanes_) {
      if (have_ != 0 && !complete()) o.dropped = have_;
      have_ = 0;
      lanes_ = h->lanes;
      size_ = {};
    }
    for (std::size_t i = 0; i < slice.size(); ++i) buf_[h->lane][i] = slice[i];
    size_[h->lane] = slice.size();
    have_ = static_cast<std::uint8_t>(have_ | bit);
    o.complete = complete();
    return o;
  }

  constexpr bool complete() const noexcept {
    return lanes_ != 0 && have_ == static_cast<std::uint8_t>((1u << lanes_) - 1);
  }
  constexpr std::size_t lanes() const noexcept { return lanes_; }
  constexpr wire::bytes slice(std::size_t lane) const noexcept {
    return wire::bytes(buf_[lane].data(), size_[lane]);
  }

  // What has been gathered, lanes not (yet) seen counting as missing.
  constexpr wire::result<reassembly> reassemble(wire::mutable_bytes frame) const noexcept {
    std::array<wire::bytes, max_lanes> s{};
    for (std::size_t l = 0; l < lanes_; ++l)
      if (have_ & (1u << l)) s[l] = slice(l);
    return tofu::reassemble(std::span<const wire::bytes>(s.data(), lanes_ ? lanes_ : 2), frame);
  }

 private:
  std::array<std::array<std::uint8_t, max_slice_size>, max_lanes> buf_{};
  std::array<std::size_t, max_lanes> size_{};
  std::size_t lanes_ = 0;
  std::uint8_t have_ = 0;
};

}  // namespace scaleup::tofu
