// Frames, slices and their reassembly (tofu/frame.hpp, slice.hpp, slicer.hpp; 003 IV.E,
// Figs. 4-6; decisions.md "Tofu-style slices"), and the readers of records and frames
// (tofu/receive.hpp).
//
// The goldens are written by hand: which 8-byte word of a small frame (LEN = 0: a 32-byte TLP,
// 16-byte DLLP, 8-byte other control, seven words in all) goes to which lane in each mode, the
// zero pad that ends each slice on a 16-byte beat, and the FCS from the test suite's own bitwise
// CRC-32 (support.hpp), which shares no code with the library.
#include <scaleup/tofu/frame.hpp>
#include <scaleup/tofu/receive.hpp>
#include <scaleup/tofu/slice.hpp>
#include <scaleup/tofu/slicer.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "support.hpp"

namespace {

namespace tf = scaleup::tofu;
namespace w = scaleup::wire;
using scaleup::test::byte_vector;
using scaleup::test::bytes_of;
using scaleup::test::cat;
using scaleup::test::hex;
using scaleup::test::ramp;
using scaleup::test::ref_crc32;
using scaleup::test::tofu_lane1_record;
using scaleup::test::with_tofu_fcs;

byte_vector zeros(std::size_t n) { return byte_vector(n, 0); }

// RH of the small frame: 1, LEN 0, every coordinate 0, PAT as given, STAT 0, SEQ 1.
//   1 000000 0 | 0 x 32 | 0000 0 00 (DI B S 0 VC) PAT's top bit | PAT's low two, STAT, SEQ | SEQ
// PAT 1: ... 00 | 01 0000 00 | 0000 0001  ->  80 00 00 00 00 00 40 01
// PAT 0:                                  ->  80 00 00 00 00 00 00 01
// PAT 2: ... 00 | 10 0000 00 | ...        ->  80 00 00 00 00 00 80 01
byte_vector small_rh(std::uint8_t pat) {
  return {0x80, 0, 0, 0, 0, 0, static_cast<std::uint8_t>(pat << 6), 0x01};
}

// TLP 00..1F, DLLP D0..DF, other control C0..C7: every byte says where it came from.
byte_vector small_frame(std::uint8_t pat) {
  return cat({small_rh(pat), ramp(32, 0x00), ramp(16, 0xD0), ramp(8, 0xC0)});
}

tf::routing_header small_header(std::uint8_t pat) {
  tf::routing_header h;
  h.pat = pat;
  h.seq = 1;
  return h;
}

// A random frame with a valid header.
byte_vector random_frame(std::mt19937_64& rng, std::uint8_t pat) {
  tf::routing_header h;
  h.len = static_cast<std::uint8_t>(rng() % 64);
  h.dx = static_cast<std::uint16_t>(rng() % 256);
  h.dy = static_cast<std::uint16_t>(rng() % 256);
  h.dz = static_cast<std::uint16_t>(rng() % 256);
  h.dabc1_b = static_cast<std::uint8_t>(rng() % 3);
  h.dabc2_b = static_cast<std::uint8_t>(rng() % 3);
  h.dabc2_a = static_cast<std::uint8_t>(rng() % 2);
  h.vc = static_cast<std::uint8_t>(rng() % 4);
  h.stat = static_cast<std::uint8_t>(rng() % 16);
  h.seq = static_cast<std::uint16_t>(rng() % 1024);
  h.pat = pat;
  byte_vector tlp(tf::tlp_size(h.len)), dllp(16), oc(8);
  for (auto* v : {&tlp, &dllp, &oc})
    for (auto& b : *v) b = static_cast<std::uint8_t>(rng());
  byte_vector f(tf::frame_size(h.len));
  const auto n = tf::emit_frame(h, tlp, dllp, oc, f);
  REQUIRE(n.ok());
  return f;
}

template <std::size_t L>
std::array<w::bytes, L> spans_of(const std::array<byte_vector, L>& v) {
  std::array<w::bytes, L> s{};
  for (std::size_t i = 0; i < L; ++i) s[i] = v[i];
  return s;
}

template <std::size_t L>
std::array<byte_vector, L> slices_of(const byte_vector& frame) {
  tf::slice_set<L> set;
  REQUIRE(!tf::slice_frame<L>(frame, set));
  std::array<byte_vector, L> out;
  for (std::size_t l = 0; l < L; ++l) out[l] = bytes_of(set[l]);
  return out;
}

}  // namespace

TEST_CASE("tofu frame: RH, TLP, DLLP, other control, no padding") {
  byte_vector f(tf::max_frame_size);
  const auto n = tf::emit_frame(small_header(1), ramp(32, 0x00), ramp(16, 0xD0), ramp(8, 0xC0), f);
  REQUIRE(n.ok());
  CHECK(*n == 64);
  f.resize(*n);
  CHECK(hex(f) == hex(small_frame(1)));
  CHECK(tf::frame_size(0) == 64);
  CHECK(tf::frame_size(63) == 2080);
  CHECK(tf::body_words(0) == 7);
  CHECK(tf::body_words(63) == 259);

  const auto v = tf::frame_view::make(f);
  REQUIRE(v.ok());
  CHECK(hex(v->tlp()) == hex(ramp(32, 0x00)));
  CHECK(hex(v->dllp()) == hex(ramp(16, 0xD0)));
  CHECK(hex(v->other_control()) == hex(ramp(8, 0xC0)));
  CHECK(hex(v->word(6)) == hex(ramp(8, 0xC0)));

  byte_vector out(100);
  CHECK(tf::emit_frame(small_header(1), ramp(31, 0), ramp(16, 0), ramp(8, 0), out).err.code ==
        w::errc::bad_length);
  CHECK(tf::emit_frame(small_header(1), ramp(32, 0), ramp(15, 0), ramp(8, 0), out).err.code ==
        w::errc::bad_length);
  CHECK(tf::emit_frame(small_header(1), ramp(32, 0), ramp(16, 0), ramp(9, 0), out).err.code ==
        w::errc::bad_length);
  byte_vector tiny(63);
  CHECK(tf::emit_frame(small_header(1), ramp(32, 0), ramp(16, 0), ramp(8, 0), tiny).err.code ==
        w::errc::no_space);
  CHECK(tf::frame_view::make(std::span(f).first(63)).err.code == w::errc::bad_length);

  // restamp rewrites PAT, STAT and SEQ only.
  REQUIRE(!tf::restamp(f, 0, 0b1001, 0x3FF));
  const auto rh = tf::decode_header(f);
  CHECK(rh->pat == 0);
  CHECK(rh->stat == 9);
  CHECK(rh->seq == 0x3FF);
  CHECK(rh->len == 0);
}

TEST_CASE("tofu slice: split mode, two lanes (Fig. 6)") {
  // Words: 0 TLP 0-7, 1 TLP 8-15, 2 TLP 16-23, 3 TLP 24-31, 4 DLLP 0-7, 5 DLLP 8-15, 6 other.
  // Lane 0 takes 0, 2, 4, 6: 8 + 32 = 40 bytes, + 8 preamble + 4 FCS = 52 -> 12 zeros to 64.
  // Lane 1 takes 1, 3, 5: 8 + 24 = 32, + 12 = 44 -> 4 zeros to 48.
  const byte_vector lane0 = with_tofu_fcs(
      cat({small_rh(1), ramp(8, 0x00), ramp(8, 0x10), ramp(8, 0xD0), ramp(8, 0xC0), zeros(12)}));
  const byte_vector lane1 =
      with_tofu_fcs(cat({small_rh(1), ramp(8, 0x08), ramp(8, 0x18), ramp(8, 0xD8), zeros(4)}));
  const auto s = slices_of<2>(small_frame(1));
  CHECK(hex(s[0]) == hex(lane0));
  CHECK(hex(s[1]) == hex(lane1));
  CHECK(s[0].size() == tf::slice_size(0, 2, 0));
  CHECK(s[1].size() == tf::slice_size(0, 2, 1));
}

TEST_CASE("tofu slice: duplicate mode, two lanes (Fig. 5)") {
  // All seven words on both lanes: 8 + 56 + 8 + 4 = 76 -> 4 zeros to 80, as Fig. 5 ends in a
  // row of zeros and then the FCS.
  const byte_vector whole =
      with_tofu_fcs(cat({small_rh(0), ramp(32, 0x00), ramp(16, 0xD0), ramp(8, 0xC0), zeros(4)}));
  const auto s = slices_of<2>(small_frame(0));
  CHECK(hex(s[0]) == hex(whole));
  CHECK(hex(s[1]) == hex(whole));
}

TEST_CASE("tofu slice: split in 4 over four lanes, and in 2 over four lanes") {
  // Words k to lane k mod 4: lane 0 {0, 4}, lane 1 {1, 5}, lane 2 {2, 6}, lane 3 {3}.
  const auto s = slices_of<4>(small_frame(2));
  CHECK(hex(s[0]) ==
        hex(with_tofu_fcs(cat({small_rh(2), ramp(8, 0x00), ramp(8, 0xD0), zeros(12)}))));
  CHECK(hex(s[1]) ==
        hex(with_tofu_fcs(cat({small_rh(2), ramp(8, 0x08), ramp(8, 0xD8), zeros(12)}))));
  CHECK(hex(s[2]) ==
        hex(with_tofu_fcs(cat({small_rh(2), ramp(8, 0x10), ramp(8, 0xC0), zeros(12)}))));
  CHECK(hex(s[3]) == hex(with_tofu_fcs(cat({small_rh(2), ramp(8, 0x18), zeros(4)}))));

  // PAT 1 on four lanes: lanes 0 and 2 carry the even words, lanes 1 and 3 the odd ones.
  const auto t = slices_of<4>(small_frame(1));
  const auto two = slices_of<2>(small_frame(1));
  CHECK(hex(t[0]) == hex(two[0]));
  CHECK(hex(t[2]) == hex(two[0]));
  CHECK(hex(t[1]) == hex(two[1]));
  CHECK(hex(t[3]) == hex(two[1]));
}

TEST_CASE("tofu slice: patterns a link cannot carry are refused") {
  byte_vector out(tf::max_slice_size);
  CHECK(tf::write_slice(small_frame(2), 0, 2, out).err.code == w::errc::unsupported);
  for (std::uint8_t pat = 3; pat < 8; ++pat) {
    byte_vector f = small_frame(1);
    REQUIRE(!tf::restamp(f, pat, 0, 1));
    CHECK(tf::write_slice(f, 0, 4, out).err.field == "tofu.rh.pat");
  }
  CHECK(tf::write_slice(small_frame(1), 2, 2, out).err.field == "tofu.slice.lane");
  byte_vector small(10);
  CHECK(tf::write_slice(small_frame(1), 0, 2, small).err.code == w::errc::no_space);
  CHECK(!tf::pattern_fits(2, 2));
  CHECK(tf::pattern_fits(1, 4));
  CHECK(tf::pattern_fits(0, 2));
}

TEST_CASE("tofu slice: every slice ends on a 16-byte beat, preamble through FCS") {
  for (unsigned len = 0; len <= tf::max_len; ++len)
    for (unsigned lanes : {2u, 4u})
      for (unsigned ways = 1; ways <= lanes; ways *= 2)
        for (std::size_t lane = 0; lane < lanes; ++lane) {
          CAPTURE(len);
          CAPTURE(ways);
          CAPTURE(lane);
          const std::size_t n = tf::slice_size(len, ways, lane);
          CHECK((tf::preamble_size + n) % 16 == 0);
          CHECK(tf::line_size(len, ways, lane) % 16 == 0);
          CHECK(tf::slice_pad(tf::lane_words(len, ways, lane)) < 16);
        }
  std::size_t words = 0;
  for (std::size_t lane = 0; lane < 4; ++lane) words += tf::lane_words(63, 4, lane);
  CHECK(words == tf::body_words(63));
  CHECK(tf::max_slice_size == 2088);
  CHECK(tf::slice_size(63, 2, 0) == 1064);
  CHECK(tf::slice_size(63, 2, 1) == 1048);
}

TEST_CASE("tofu slice: preamble, SFD, terminate and idles around a slice") {
  const auto s = slices_of<2>(small_frame(1));
  byte_vector line(tf::max_line_size);
  const auto n = tf::emit_line(s[1], line);
  REQUIRE(n.ok());
  line.resize(*n);
  CHECK(*n == 8 + 40 + 16);
  CHECK(hex(std::span(line).first(8)) == "FB 55 55 55 55 55 55 D5");
  CHECK(hex(std::span(line).last(16)) == "FD 07 07 07 07 07 07 07 07 07 07 07 07 07 07 07");

  const auto back = tf::strip_line(line, 1, 2);
  REQUIRE(back.ok());
  CHECK(hex(*back) == hex(s[1]));

  byte_vector bad = line;
  bad[3] = 0x54;
  CHECK(tf::strip_line(bad, 1, 2).err.what == "bad preamble");
  bad = line;
  bad[7] = 0x55;
  CHECK(tf::strip_line(bad, 1, 2).err.what == "bad SFD");
  bad = line;
  bad[8 + 40] = 0x07;
  CHECK(tf::strip_line(bad, 1, 2).err.what == "no terminate after the FCS");
  bad = line;
  bad.back() = 0x00;
  CHECK(tf::strip_line(bad, 1, 2).err.offset == *n - 1);
  CHECK(tf::strip_line(std::span(line).first(20), 1, 2).err.code == w::errc::truncated);
}

TEST_CASE("tofu reassembly: random frames in every mode, two and four lanes") {
  std::mt19937_64 rng(7);
  byte_vector out(tf::max_frame_size);
  for (int i = 0; i < 300; ++i) {
    for (std::uint8_t pat : {0, 1}) {
      const byte_vector f = random_frame(rng, pat);
      const auto s = slices_of<2>(f);
      const auto r = tf::reassemble<2>(spans_of(s), out);
      REQUIRE(r.ok());
      CHECK(r->size == f.size());
      CHECK(r->ways == tf::ways_of(pat));
      CHECK(r->failed() == 0);
      CHECK(hex(std::span(out).first(r->size)) == hex(f));
    }
    for (std::uint8_t pat : {0, 1, 2}) {
      const byte_vector f = random_frame(rng, pat);
      const auto s = slices_of<4>(f);
      const auto r = tf::reassemble<4>(spans_of(s), out);
      REQUIRE(r.ok());
      CHECK(r->size == f.size());
      CHECK(hex(std::span(out).first(r->size)) == hex(f));
    }
  }
}

TEST_CASE("tofu reassembly: duplicate mode uses whichever copy passes its FCS") {
  std::mt19937_64 rng(11);
  byte_vector out(tf::max_frame_size);
  for (std::size_t bad = 0; bad < 2; ++bad) {
    const byte_vector f = random_frame(rng, 0);
    auto s = slices_of<2>(f);
    s[bad][20] ^= 0x01;
    const auto r = tf::reassemble<2>(spans_of(s), out);
    REQUIRE(r.ok());
    CHECK(r->lane[bad] == tf::slice_status::bad_fcs);
    CHECK(r->lane[1 - bad] == tf::slice_status::good);
    CHECK(r->source[0] == static_cast<int>(1 - bad));
    CHECK(r->failed() == (1u << bad));
    CHECK(hex(std::span(out).first(r->size)) == hex(f));
  }
  // Both copies bad: nothing to rebuild from.
  const byte_vector f = random_frame(rng, 0);
  auto s = slices_of<2>(f);
  s[0][9] ^= 0x80;
  s[1].back() ^= 0x01;
  const auto r = tf::reassemble<2>(spans_of(s), out);
  CHECK(r.err.code == w::errc::bad_checksum);
  CHECK(tf::failed_lane(r.err) == 0);
  CHECK(r->failed() == 3);
}

TEST_CASE("tofu reassembly: split mode names the lane that failed") {
  std::mt19937_64 rng(13);
  byte_vector out(tf::max_frame_size);
  for (std::size_t bad = 0; bad < 2; ++bad) {
    const byte_vector f = random_frame(rng, 1);
    auto s = slices_of<2>(f);
    s[bad][s[bad].size() / 2] ^= 0x10;
    const auto r = tf::reassemble<2>(spans_of(s), out);
    CHECK(r.err.code == w::errc::bad_checksum);
    CHECK(r.err.layer == "tofu.slice");
    CHECK(r.err.field == "tofu.slice.fcs");
    CHECK(r.err.item == bad + 1);
    CHECK(tf::failed_lane(r.err) == static_cast<int>(bad));
    CHECK(r->lane[bad] == tf::slice_status::bad_fcs);
    CHECK(r->lane[1 - bad] == tf::slice_status::good);
  }
  // A lane that delivered nothing.
  const byte_vector f = random_frame(rng, 1);
  auto s = slices_of<2>(f);
  s[1].clear();
  const auto r = tf::reassemble<2>(spans_of(s), out);
  CHECK(r.err.code == w::errc::truncated);
  CHECK(tf::failed_lane(r.err) == 1);
  CHECK(r->lane[1] == tf::slice_status::missing);
}

TEST_CASE("tofu reassembly: four lanes, split in 4 and split in 2") {
  std::mt19937_64 rng(17);
  byte_vector out(tf::max_frame_size);
  {  // Split in 4: any bad lane fails the frame, and is named.
    const byte_vector f = random_frame(rng, 2);
    auto s = slices_of<4>(f);
    s[2][12] ^= 0xFF;
    const auto r = tf::reassemble<4>(spans_of(s), out);
    CHECK(tf::failed_lane(r.err) == 2);
  }
  {  // Split in 2: lanes 1 and 3 carry the same words, so losing lane 1 costs nothing...
    const byte_vector f = random_frame(rng, 1);
    auto s = slices_of<4>(f);
    s[1][12] ^= 0xFF;
    const auto r = tf::reassemble<4>(spans_of(s), out);
    REQUIRE(r.ok());
    CHECK(r->source[0] == 0);
    CHECK(r->source[1] == 3);
    CHECK(hex(std::span(out).first(r->size)) == hex(f));
    // ...but losing lane 3 as well does, and the first lane of that class is named.
    s[3][12] ^= 0xFF;
    const auto r2 = tf::reassemble<4>(spans_of(s), out);
    CHECK(tf::failed_lane(r2.err) == 1);
  }
}

TEST_CASE("tofu reassembly: slices that do not belong together") {
  std::mt19937_64 rng(19);
  byte_vector out(tf::max_frame_size);
  const byte_vector a = random_frame(rng, 0);
  const byte_vector b = random_frame(rng, 0);
  auto s = slices_of<2>(a);
  s[1] = slices_of<2>(b)[1];  // a good slice of another frame
  const auto r = tf::reassemble<2>(spans_of(s), out);
  REQUIRE(r.ok());  // lane 0 is whole on its own
  CHECK(r->lane[1] == tf::slice_status::bad_header);
  CHECK(hex(std::span(out).first(r->size)) == hex(a));

  // A slice cut short whose FCS still matches (the length disagrees with LEN).
  auto t = slices_of<2>(a);
  t[0] = with_tofu_fcs(byte_vector(t[0].begin(), t[0].end() - 12));
  const auto r2 = tf::reassemble<2>(spans_of(t), out);
  CHECK(r2->lane[0] == tf::slice_status::bad_length);
  CHECK(r2.ok());

  std::array<w::bytes, 3> three{};
  CHECK(tf::reassemble(std::span<const w::bytes>(three), out).err.code == w::errc::unsupported);
}

TEST_CASE("tofu records: pseudo-header, then the slice; collected back into frames") {
  const auto s = slices_of<2>(small_frame(1));
  byte_vector rec(tf::max_record_size);
  const auto n = tf::write_record({.lane = 1, .lanes = 2, .replay = 1, .injected = 0}, s[1], rec);
  REQUIRE(n.ok());
  rec.resize(*n);
  // lane 1 | lanes 2 -> 0001 0010; replay, injected, reserved -> 1000 0000.
  CHECK(hex(std::span(rec).first(2)) == "12 80");
  CHECK(hex(std::span(rec).subspan(2)) == hex(s[1]));

  tf::record_collector c;
  byte_vector r0(tf::max_record_size);
  r0.resize(*tf::write_record({.lane = 0, .lanes = 2}, s[0], r0));
  CHECK(!c.push(r0).complete);
  const auto o = c.push(rec);
  CHECK(o.complete);
  byte_vector out(tf::max_frame_size);
  const auto r = c.reassemble(out);
  REQUIRE(r.ok());
  CHECK(hex(std::span(out).first(r->size)) == hex(small_frame(1)));

  // A new frame's lane 0 while one is unfinished drops what was gathered.
  CHECK(!c.push(r0).complete);
  const auto again = c.push(r0);
  CHECK(again.dropped == 1);
  CHECK(!again.complete);
  const auto partial = c.reassemble(out);
  CHECK(tf::failed_lane(partial.err) == 1);  // lane 1 is missing

  byte_vector junk{0x52};  // lane 5 of 2
  CHECK(c.push(junk).err.code == w::errc::truncated);
  junk.push_back(0);
  CHECK(c.push(junk).err.code == w::errc::bad_value);
}

// ---- reading slices and frames back (tofu/receive.hpp) ------------------------------------

namespace {

using w::errc;

// The record again with its FCS made good after a change to bytes before it.
byte_vector refresh_fcs(byte_vector rec) {
  rec.resize(rec.size() - 4);
  return cat({{rec[0], rec[1]}, with_tofu_fcs(byte_vector(rec.begin() + 2, rec.end()))});
}

template <std::size_t Lanes>
void check_round_trip(const byte_vector& frame) {
  tf::slice_set<Lanes> set;
  REQUIRE_FALSE(tf::slice_frame<Lanes>(frame, set));
  const auto rh = w::decode<tf::routing_header>(frame);
  REQUIRE(rh.ok());
  const unsigned ways = tf::ways_of(rh->pat);
  for (std::size_t lane = 0; lane < Lanes; ++lane) {
    CAPTURE(lane);
    const tf::record_header h{.lane = static_cast<std::uint8_t>(lane), .lanes = Lanes};
    byte_vector rec(tf::max_record_size);
    const auto n = tf::write_record(h, set[lane], rec);
    REQUIRE(n.ok());
    rec.resize(*n);
    const tf::received_slice s = tf::read_record(rec);
    CHECK(s.errors.empty());
    CHECK(s.ok());
    REQUIRE(s.header);
    CHECK(*s.header == h);
    CHECK(s.link_ok);
    REQUIRE(s.rh);
    CHECK(*s.rh == *rh);
    CHECK(s.ways == ways);
    CHECK(s.length_ok);
    CHECK(s.words == tf::lane_words(rh->len, ways, lane));
    CHECK(s.first_word == lane % ways);
    CHECK(s.words_offset == tf::record_header_size + tf::rh_size);
    CHECK(s.words_length == s.words * tf::word_size);
    // The words are the frame's words first_word, first_word + ways, ...
    for (std::size_t j = 0; j < s.words; ++j) {
      const std::size_t k = s.first_word + j * ways;
      const auto got = w::bytes(rec).subspan(s.words_offset + j * tf::word_size, tf::word_size);
      const auto want = w::bytes(frame).subspan(tf::rh_size + k * tf::word_size, tf::word_size);
      CHECK(byte_vector(got.begin(), got.end()) == byte_vector(want.begin(), want.end()));
    }
    CHECK(s.pad_offset == s.words_offset + s.words_length);
    CHECK(s.pad_length == tf::slice_pad(s.words));
    CHECK(s.pad_offset + s.pad_length + tf::fcs_size == rec.size());
    CHECK(s.has_fcs);
    CHECK(s.fcs_good);
    CHECK(s.fcs == s.computed);
    CHECK(s.fcs == ref_crc32(rec.data() + 2, rec.size() - 6));
  }
}

}  // namespace

TEST_CASE("tofu read_record: the inverse of write_slice and write_record") {
  std::mt19937_64 rng(20240611);
  for (int i = 0; i < 40; ++i) {
    check_round_trip<2>(random_frame(rng, 0));
    check_round_trip<2>(random_frame(rng, 1));
    check_round_trip<4>(random_frame(rng, 0));
    check_round_trip<4>(random_frame(rng, 1));
    check_round_trip<4>(random_frame(rng, 2));
  }
}

TEST_CASE("tofu read_record: a split slice written by hand") {
  const byte_vector rec = tofu_lane1_record();
  const auto s = tf::read_record(rec);
  CHECK(s.errors.empty());
  CHECK(s.header->lane == 1);
  CHECK(s.header->lanes == 2);
  CHECK(s.rh->pat == 1);
  CHECK(s.ways == 2);
  CHECK(s.words == 3);
  CHECK(s.first_word == 1);
  CHECK(s.words_offset == 10);
  CHECK(s.words_length == 24);
  CHECK(s.pad_offset == 34);
  CHECK(s.pad_length == 4);
  CHECK(s.fcs == ref_crc32(rec.data() + 2, rec.size() - 6));
  CHECK(s.fcs_good);
  CHECK(s.errors_before_rh == 0);
  CHECK(s.errors_before_words == 0);
  CHECK(s.errors_before_fcs == 0);
}

TEST_CASE("tofu read_record: every error path") {
  SUBCASE("no pseudo-header") {
    const auto s = tf::read_record(byte_vector{0x12});
    CHECK_FALSE(s.header);
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].code == errc::truncated);
    CHECK(s.errors[0].layer == "tofu.slice");
  }
  SUBCASE("no routing header") {
    const auto s = tf::read_record(byte_vector{0x12, 0x00, 0x80});
    CHECK(s.header);
    CHECK_FALSE(s.rh);
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].code == errc::truncated);
    CHECK(s.errors[0].layer == "tofu.rh");
    CHECK(s.errors[0].offset == 2);
    CHECK(s.errors[0].available == 1);
    // With a bad lane too: the marks of the parts never reached stay where reading stopped.
    const auto t = tf::read_record(byte_vector{0x32, 0x00, 0x80});
    REQUIRE(t.errors.size() == 2);
    CHECK(t.errors_before_rh == 1);
    CHECK(t.errors_before_words == 1);
    CHECK(t.errors_before_fcs == 1);
  }
  SUBCASE("lane out of range: the words run to the FCS") {
    byte_vector rec = tofu_lane1_record();
    rec[0] = 0x32;  // lane 3 of 2
    const auto s = tf::read_record(rec);
    CHECK_FALSE(s.link_ok);
    CHECK(s.ways == 0);
    CHECK_FALSE(s.length_ok);
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].code == errc::bad_value);
    CHECK(s.errors[0].field == "tofu.slice.lane");
    CHECK(s.errors[0].value == 3);
    CHECK(s.errors_before_rh == 1);
    CHECK(s.words_offset == 10);
    CHECK(s.words_length == rec.size() - 4 - 10);
    CHECK(s.fcs_good);  // the FCS still covers the bytes
  }
  SUBCASE("PAT reserved, or wider than the link") {
    for (const std::uint8_t pat : {std::uint8_t{3}, std::uint8_t{2}}) {
      byte_vector rec = tofu_lane1_record();
      rec[2 + 6] = static_cast<std::uint8_t>((rec[2 + 6] & 0x3F) | (pat << 6));
      rec = refresh_fcs(rec);
      const auto s = tf::read_record(rec);
      CAPTURE(pat);
      CHECK(s.ways == 0);
      REQUIRE(s.errors.size() == 1);
      CHECK(s.errors[0].code == errc::unsupported);
      CHECK(s.errors[0].field == "tofu.rh.pat");
      CHECK(s.errors[0].offset == 8);
      CHECK(s.errors[0].value == pat);
      CHECK(s.errors_before_words == 1);
    }
  }
  SUBCASE("length not what LEN, PAT and the lane make it") {
    byte_vector rec = tofu_lane1_record();
    rec[0] = 0x02;  // lane 0 of 2, whose slice is 16 bytes longer
    const auto s = tf::read_record(rec);
    CHECK_FALSE(s.length_ok);
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].code == errc::bad_length);
    CHECK(s.errors[0].needed == 56);
    CHECK(s.errors[0].available == 40);
    CHECK(s.errors[0].item == 1);  // lane 0, counted from 1
    CHECK(s.pad_length == 0);
  }
  SUBCASE("pad not zero: a warning") {
    byte_vector rec = tofu_lane1_record();
    rec[rec.size() - 5] = 0x01;
    rec = refresh_fcs(rec);
    const auto s = tf::read_record(rec);
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].code == errc::reserved_nonzero);
    CHECK(s.errors[0].offset == rec.size() - 5);
    CHECK(s.errors[0].level == w::severity::warning);
    CHECK(s.errors_before_words == 0);
    CHECK(s.errors_before_fcs == 1);
    CHECK(s.ok());
  }
  SUBCASE("no room for the FCS") {
    const byte_vector rec = cat({{0x12, 0x00}, small_rh(1), {0x00, 0x00}});
    const auto s = tf::read_record(rec);
    CHECK(s.rh);
    CHECK_FALSE(s.has_fcs);
    CHECK_FALSE(s.fcs_good);
    const auto& last = s.errors[s.errors.size() - 1];
    CHECK(last.code == errc::truncated);
    CHECK(last.what == "no room for RH and FCS");
    CHECK(last.needed == 12);
    CHECK(last.available == 10);
  }
  SUBCASE("bad FCS names the lane") {
    byte_vector rec = tofu_lane1_record();
    rec[12] ^= 0x01;
    const auto s = tf::read_record(rec);
    CHECK_FALSE(s.fcs_good);
    REQUIRE(s.errors.size() == 1);
    CHECK(s.errors[0].code == errc::bad_checksum);
    CHECK(s.errors[0].item == 2);
    CHECK(s.errors[0].value == ref_crc32(rec.data() + 2, rec.size() - 6));
    CHECK(s.errors[0].offset == rec.size() - 4);
    CHECK(tf::failed_lane(s.errors[0]) == 1);
  }
  SUBCASE("coordinates out of range, and reserved pseudo-header bits") {
    byte_vector rec = tofu_lane1_record();
    rec[1] = 0x01;       // reserved bits of the pseudo-header
    rec[2 + 4] |= 0x0C;  // DABC2 B = 3
    rec = refresh_fcs(rec);
    const auto s = tf::read_record(rec);
    REQUIRE(s.errors.size() == 2);
    CHECK(s.errors[0].code == errc::reserved_nonzero);
    CHECK(s.errors[0].field == "tofu.slice.reserved");
    CHECK(s.errors[1].field == "tofu.rh.dabc2.b");
    CHECK(s.errors[1].offset == 6);  // placed in the record
    CHECK(s.errors_before_rh == 1);
    CHECK(s.errors_before_words == 2);
  }
}

TEST_CASE("tofu read_frame: the inverse of emit_frame") {
  const byte_vector frame = cat({small_rh(1), ramp(32, 0x00), ramp(16, 0xD0), ramp(8, 0xC0)});
  const auto f = tf::read_frame(frame);
  CHECK(f.errors.empty());
  REQUIRE(f.rh);
  CHECK(f.rh->pat == 1);
  CHECK(f.rh->seq == 1);
  CHECK(byte_vector(f.tlp.begin(), f.tlp.end()) == ramp(32, 0x00));
  CHECK(byte_vector(f.dllp.begin(), f.dllp.end()) == ramp(16, 0xD0));
  CHECK(byte_vector(f.other_control.begin(), f.other_control.end()) == ramp(8, 0xC0));

  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    const byte_vector r = random_frame(rng, static_cast<std::uint8_t>(i % 3));
    const auto g = tf::read_frame(r);
    CHECK(g.ok());
    const auto v = tf::frame_view::make(r);
    REQUIRE(v.ok());
    CHECK(*g.rh == v->rh());
    CHECK(g.tlp.data() == v->tlp().data());
    CHECK(g.tlp.size() == v->tlp().size());
    CHECK(g.dllp.data() == v->dllp().data());
    CHECK(g.other_control.data() == v->other_control().data());
  }

  SUBCASE("cut short: the parts as far as they go") {
    const auto c = tf::read_frame(w::bytes(frame).first(50));
    REQUIRE(c.errors.size() == 1);
    CHECK(c.errors[0].code == errc::bad_length);
    CHECK(c.errors[0].needed == 64);
    CHECK(c.errors[0].available == 50);
    CHECK(c.tlp.size() == 32);
    CHECK(c.dllp.size() == 10);
    CHECK(c.other_control.empty());
    CHECK(c.other_control.data() == frame.data() + 50);
  }
  SUBCASE("no routing header") {
    const auto c = tf::read_frame(w::bytes(frame).first(5));
    CHECK_FALSE(c.rh);
    REQUIRE(c.errors.size() == 1);
    CHECK(c.errors[0].code == errc::truncated);
  }
  SUBCASE("coordinates and the leading 1") {
    byte_vector bad = frame;
    bad[0] &= 0x7F;  // no routing header mark
    bad[4] |= 0x0C;  // DABC2 B = 3
    const auto c = tf::read_frame(bad);
    REQUIRE(c.rh);
    REQUIRE(c.errors.size() == 2);
    CHECK(c.errors[0].field == "tofu.rh.one");
    CHECK(c.errors[1].field == "tofu.rh.dabc2.b");
    CHECK_FALSE(c.ok());
  }
}
