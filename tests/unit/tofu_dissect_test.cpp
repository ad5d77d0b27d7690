// Dissection of Tofu slice records and reassembled frames (dissect/tofu.hpp) into the library's
// dissection tree, and the printers on top of it. Records are built by hand from the small frame
// of tofu_slice_test.cpp (LEN 0) with the suite's own CRC-32.
#include <scaleup/dissect/field_tree.hpp>
#include <scaleup/dissect/frame_json.hpp>
#include <scaleup/dissect/tofu.hpp>
#include <scaleup/dissect/tree.hpp>
#include <scaleup/tofu/slicer.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace tf = scaleup::tofu;
namespace w = scaleup::wire;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::contains;
using scaleup::test::ramp;
using scaleup::test::ref_crc32;
using scaleup::test::render;
using scaleup::test::tofu_lane1_record;
using scaleup::test::with_tofu_fcs;

// RH of LEN 0, PAT 1 (split in 2), SEQ 1: see tofu_slice_test.cpp.
const byte_vector rh_split{0x80, 0, 0, 0, 0, 0, 0x40, 0x01};

std::uint64_t value(const d::tree& t, std::string_view filter) {
  const auto* f = t.find(filter);
  REQUIRE(f != nullptr);
  return f->value;
}

}  // namespace

TEST_CASE("tofu dissect: a good split slice") {
  const byte_vector rec = tofu_lane1_record();
  d::tree t;
  d::dissect_tofu_record(t, rec);
  CHECK(t.encap == "tofu");
  CHECK(t.error_count == 0);
  CHECK(value(t, "tofu.slice.lane") == 1);
  CHECK(value(t, "tofu.slice.lanes") == 2);
  CHECK(value(t, "tofu.rh.one") == 1);
  CHECK(value(t, "tofu.rh.len") == 0);
  CHECK(value(t, "tofu.rh.pat") == 1);
  CHECK(value(t, "tofu.rh.seq") == 1);
  CHECK(value(t, "tofu.slice.ways") == 2);
  CHECK(value(t, "tofu.slice.words") == 3);
  CHECK(value(t, "tofu.slice.first_word") == 1);
  CHECK(value(t, "tofu.slice.pad") == 4);
  CHECK(value(t, "tofu.slice.fcs.status") == 0);
  CHECK(value(t, "tofu.slice.fcs") == ref_crc32(rec.data() + 2, rec.size() - 6));
  const auto* words = t.find_layer("tofu.slice.words");
  REQUIRE(words != nullptr);
  CHECK(words->offset == 10);
  CHECK(words->length == 24);
  const auto* fcs = t.find_layer("tofu.slice.fcs");
  REQUIRE(fcs != nullptr);
  CHECK(fcs->offset == rec.size() - 4);
  // Field positions are absolute in the record: LEN is bits 1-6 of the RH, 2 bytes in.
  CHECK(t.find("tofu.rh.len")->bit == 2 * 8 + 1);

  const std::string text = render([&](auto& out) { d::put_verbose(out, t, 1); });
  CHECK(contains(text, "split in 2"));
  const std::string json = render([&](auto& out) { d::put_json(out, t, 1); });
  CHECK(contains(json, "tofu.rh.len"));
}

TEST_CASE("tofu dissect: a corrupted slice names its lane") {
  byte_vector rec = tofu_lane1_record();
  rec[12] ^= 0x01;
  d::tree t;
  d::dissect_tofu_record(t, rec);
  CHECK(value(t, "tofu.slice.fcs.status") == 1);
  REQUIRE(t.error_count == 1);
  CHECK(t.errors[0].code == w::errc::bad_checksum);
  CHECK(t.errors[0].field == "tofu.slice.fcs");
  CHECK(t.errors[0].item == 2);  // lane 1, counted from 1
  CHECK(t.errors[0].value == ref_crc32(rec.data() + 2, rec.size() - 6));
}

TEST_CASE("tofu dissect: coordinates, length and pseudo-header problems") {
  {  // DABC2 B = 3: byte 4 of the RH, bits 36-37.
    byte_vector rec = tofu_lane1_record();
    rec[2 + 4] |= 0x0C;
    rec.resize(rec.size() - 4);
    rec = cat({{rec[0], rec[1]}, with_tofu_fcs(byte_vector(rec.begin() + 2, rec.end()))});
    d::tree t;
    d::dissect_tofu_record(t, rec);
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].field == "tofu.rh.dabc2.b");
    CHECK(t.errors[0].offset == 6);
    CHECK(value(t, "tofu.slice.fcs.status") == 0);
  }
  {  // The record says lane 0, but the slice is lane 1's: 16 bytes short of lane 0's.
    byte_vector rec = tofu_lane1_record();
    rec[0] = 0x02;
    d::tree t;
    d::dissect_tofu_record(t, rec);
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].code == w::errc::bad_length);
    CHECK(t.errors[0].needed == 56);
    CHECK(t.errors[0].available == 40);
  }
  {  // Lane 3 of 2.
    byte_vector rec = tofu_lane1_record();
    rec[0] = 0x32;
    d::tree t;
    d::dissect_tofu_record(t, rec);
    CHECK(t.has_errors());
    CHECK(t.errors[0].field == "tofu.slice.lane");
  }
  {  // Nonzero pad (FCS recomputed): a warning.
    byte_vector rec = tofu_lane1_record();
    rec[rec.size() - 5] = 0x01;
    rec.resize(rec.size() - 4);
    rec = cat({{rec[0], rec[1]}, with_tofu_fcs(byte_vector(rec.begin() + 2, rec.end()))});
    d::tree t;
    d::dissect_tofu_record(t, rec);
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].code == w::errc::reserved_nonzero);
    CHECK(!t.has_errors());
  }
  {  // Too short for anything.
    d::tree t;
    d::dissect_tofu_record(t, byte_vector{0x12, 0x00, 0x80});
    CHECK(t.errors[0].code == w::errc::truncated);
  }
}

TEST_CASE("tofu dissect: a reassembled frame") {
  const byte_vector frame = cat({rh_split, ramp(32, 0x00), ramp(16, 0xD0), ramp(8, 0xC0)});
  d::tree t;
  d::dissect_tofu_frame(t, frame);
  CHECK(t.error_count == 0);
  CHECK(value(t, "tofu.tlp.len") == 32);
  const auto* dllp = t.find_layer("tofu.dllp");
  REQUIRE(dllp != nullptr);
  CHECK(dllp->offset == 40);
  CHECK(dllp->length == 16);
  const auto* other = t.find_layer("tofu.other");
  REQUIRE(other != nullptr);
  CHECK(other->offset == 56);
  CHECK(other->length == 8);

  d::tree cut;
  d::dissect_tofu_frame(cut, std::span(frame).first(50));
  CHECK(cut.errors[0].code == w::errc::bad_length);
}
