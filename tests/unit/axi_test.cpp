// The AXI4 mapping of R2 3.2.2: USER bits, AW + W -> write (full, partial, posted), AR -> RD,
// R -> RD_RSP, B -> WR_RSP and back, every refusal, and the per-channel credit counters.
//
// Golden values are worked out by hand (arithmetic in the comments). Byte lane i of a B-byte
// bus carries the byte whose address is i modulo B; WSTRB bit i enables lane i.
#include <scaleup/pack/axi.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/signal_interface.hpp>
#include <scaleup/wire/error.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "support.hpp"

namespace {

namespace p = scaleup::pack;
namespace w = scaleup::wire;
using w::errc;

using scaleup::test::byte_array;
using scaleup::test::bytes_of;

template <std::size_t B>
w::result<p::command_value> write_of(const p::axi_aw& aw, const std::vector<p::axi_w<B>>& beats) {
  return p::from_axi_write<B>(aw, std::span<const p::axi_w<B>>(beats));
}

template <std::size_t B>
w::result<p::command_value> read_rsp_of(const p::axi_ar& ar, const std::vector<p::axi_r<B>>& r) {
  return p::from_axi_read_response<B>(ar, std::span<const p::axi_r<B>>(r));
}

template <class S>
std::vector<typename S::value_type> to_vec(const S& s) {
  return {s.begin(), s.end()};
}

p::command_value command(std::uint16_t xpuid, std::uint8_t vc, w::bytes control, w::bytes data) {
  const auto c = p::make_command(p::default_profile, xpuid, vc, control, data);
  REQUIRE(c.ok());
  return *c;
}

// Four full beats on a 16-byte bus from 0x2000: lane i of beat k holds 16k + i.
std::vector<p::axi_w<16>> four_full_beats() {
  std::vector<p::axi_w<16>> v(4);
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::size_t i = 0; i < 16; ++i) v[k].data[i] = static_cast<std::uint8_t>(16 * k + i);
    v[k].strb = {0xFF, 0xFF};
  }
  v[3].last = true;
  return v;
}

// USER = length - 1 [25:18] | type [17:10] | xpuid [9:0].
// 63 << 18 = 0xFC0000, WR_FULL 4 << 10 = 0x1000, xpuid 0x2A.
constexpr std::uint32_t full_user = 0x00FC102A;
constexpr p::axi_aw full_aw{
    .id = 7, .addr = 0x2000, .len = 3, .size = 4, .burst = 1, .user = full_user};

}  // namespace

TEST_CASE("axi: USER bits golden") {
  // 0xFF << 18 = 0x03FC0000, RD_RSP 6 << 10 = 0x1800, xpuid 0x155.
  CHECK(p::encode_user({.length = 0xFF, .type = 0x06, .xpuid = 0x155}).value == 0x03FC1955);
  CHECK(p::encode_user({.length = 0xFF, .type = 0xFF, .xpuid = 0x3FF}).value == 0x03FFFFFF);
  // 3 << 18 = 0xC0000, 2 << 10 = 0x800, 1.
  const p::axi_user u{.length = 3, .type = 2, .xpuid = 1};
  CHECK(p::encode_user(u).value == 0x000C0801);
  CHECK(*p::decode_user(0x000C0801) == u);
  const auto image = w::to_bytes(u);
  REQUIRE(image.ok());
  CHECK(*image == byte_array<4>{0x00, 0x0C, 0x08, 0x01});
  // Reserved [31:26] are kept in the value but do not stop the decode.
  const auto r = p::decode_user(0xFC0C0801);
  REQUIRE(r.ok());
  CHECK(r->rsvd == 0x3F);
  CHECK(r->length == 3);
  CHECK(r->type == 2);
  CHECK(r->xpuid == 1);
  const auto e = p::encode_user({.xpuid = 1024}).err;
  CHECK(e.code == errc::value_too_big);
  CHECK(e.field == "axi.user.xpuid");
  CHECK(p::encode_user({.rsvd = 0x40}).err.code == errc::value_too_big);
  static_assert(w::tiles<p::axi_user>());
}

TEST_CASE("axi: four full beats make one WR_FULL on VC0") {
  const auto beats = four_full_beats();
  const auto c = write_of<16>(full_aw, beats);
  REQUIRE(c.ok());
  CHECK(c->type->name == "WR_FULL");
  CHECK(c->vc == 0);
  CHECK(c->xpuid == 0x2A);
  // 02 | 63 = 0x3F | tag 0x0007 | address 0x2000 in 64 bits.
  CHECK(bytes_of(c->control_bytes()) ==
        std::vector<std::uint8_t>{0x04, 0x3F, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0x20, 0x00});
  REQUIRE(c->data_size == 64);
  for (std::size_t i = 0; i < 64; ++i) CHECK(c->data[i] == i);

  const auto back = p::to_axi_write<16>(*c);
  REQUIRE(back.ok());
  CHECK(back->aw == full_aw);
  CHECK(to_vec(back->beats()) == beats);
}

TEST_CASE("axi: partial first and last words make WR_PART with byte enables") {
  // 0x3000, two 16-byte beats. Beat 0 strobes lanes 0, 1, 3..15 (WSTRB 0xFFFB); beat 1 lanes
  // 0..9, 11, 12 (0x1BFF). Written: 0x3000..0x301C except 0x3002 and 0x301A. Words 0x3000 ..
  // 0x301F (4 words, 32 bytes); first word bytes 0, 1, 3..7 -> be_first 1111 1011 = 0xFB; last
  // word 0x3018 bytes 0, 1, 3, 4 -> be_last 0001 1011 = 0x1B.
  // AWUSER: length 31 << 18 = 0x7C0000, WR_PART 8 << 10 = 0x2000, xpuid 5.
  const p::axi_aw aw{.id = 9, .addr = 0x3000, .len = 1, .size = 4, .user = 0x007C2005};
  std::vector<p::axi_w<16>> beats(2);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < 16; ++i)
      beats[k].data[i] = static_cast<std::uint8_t>(0x80 + 16 * k + i);
  beats[0].strb = {0xFB, 0xFF};
  beats[1].strb = {0xFF, 0x1B};
  beats[1].last = true;

  const auto c = write_of<16>(aw, beats);
  REQUIRE(c.ok());
  CHECK(c->type->name == "WR_PART");
  CHECK(bytes_of(c->control_bytes()) == std::vector<std::uint8_t>{0x08, 0x1F, 0x00, 0x09, 0, 0, 0,
                                                                  0, 0, 0, 0x30, 0x00, 0xFB, 0x1B,
                                                                  0, 0});
  REQUIRE(c->data_size == 32);
  for (std::size_t i = 0; i < 32; ++i) {
    CAPTURE(i);
    // Unstrobed bytes travel as zero, whatever the lanes held.
    const bool clear = i == 2 || i == 26 || i >= 29;
    CHECK(c->data[i] == (clear ? 0 : 0x80 + i));
  }

  const auto back = p::to_axi_write<16>(*c);
  REQUIRE(back.ok());
  CHECK(back->aw == aw);
  auto expect = beats;
  for (const std::size_t lane : {2}) expect[0].data[lane] = 0;
  for (const std::size_t lane : {10, 13, 14, 15}) expect[1].data[lane] = 0;
  CHECK(to_vec(back->beats()) == expect);

  // WR_FULL in AWUSER asks for non-posted only: the strobes still make it partial.
  p::axi_aw as_full = aw;
  as_full.user = 0x007C1005;  // 31 << 18 | 4 << 10 | 5
  const auto c2 = write_of<16>(as_full, beats);
  REQUIRE(c2.ok());
  CHECK(c2->type->name == "WR_PART");
  CHECK(*c2 == *c);

  // Without the gaps (lanes 3..15, then 0..12) the written bytes 0x3003..0x301C are one run:
  // WR_FULL at 0x3003, 26 bytes. AWUSER: 25 << 18 = 0x640000 | 8 << 10 | 5.
  auto run = beats;
  run[0].strb = {0xF8, 0xFF};
  run[1].strb = {0xFF, 0x1F};
  p::axi_aw run_aw = aw;
  run_aw.user = 0x00642005;
  const auto f = write_of<16>(run_aw, run);
  REQUIRE(f.ok());
  CHECK(f->type->name == "WR_FULL");
  CHECK(bytes_of(f->control_bytes()) ==
        std::vector<std::uint8_t>{0x04, 0x19, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0x30, 0x03});
  CHECK(f->data[0] == 0x83);
  CHECK(f->data[25] == 0x9C);
  CHECK(write_of<16>(aw, run).err.field == "axi.user.length");  // 31 is the partial's length
}

TEST_CASE("axi: a one-word partial write, posted") {
  // 32-byte bus, one beat at 0x1000, lanes 1 and 6: be_first 0100 0010 = 0x42, be_last 0.
  // AWUSER: 7 << 18 = 0x1C0000, WR_PART_P 6 << 10 = 0x1800, xpuid 0.
  const p::axi_aw aw{.id = 0x0102, .addr = 0x1000, .len = 0, .size = 5, .user = 0x001C1800};
  std::vector<p::axi_w<32>> beats(1);
  beats[0].data[1] = 0x11;
  beats[0].data[6] = 0x66;
  beats[0].strb = {0x42, 0x00, 0x00, 0x00};
  beats[0].last = true;
  const auto c = write_of<32>(aw, beats);
  REQUIRE(c.ok());
  CHECK(c->type->name == "WR_PART_P");
  CHECK(bytes_of(c->control_bytes()) == std::vector<std::uint8_t>{0x06, 0x07, 0x01, 0x02, 0, 0, 0,
                                                                  0, 0, 0, 0x10, 0x00, 0x42, 0x00,
                                                                  0, 0});
  CHECK(bytes_of(c->data_bytes()) == std::vector<std::uint8_t>{0, 0x11, 0, 0, 0, 0, 0x66, 0});
  const auto back = p::to_axi_write<32>(*c);
  REQUIRE(back.ok());
  CHECK(back->aw == aw);
  CHECK(to_vec(back->beats()) == beats);

  // Posted: the B built locally (WR_RSP 0x0E << 10 = 0x3800, xpuid 0); transport/posted_writes.hpp
  // releases it once the receiver ACKs (posted_writes_test.cpp).
  const auto b = p::posted_write_response(aw);
  REQUIRE(b.ok());
  CHECK(*b == p::axi_b{.id = 0x0102, .resp = 0, .user = 0x3800});
  CHECK(p::posted_write_response(full_aw).err.code == errc::bad_value);

  // A posted full write: WR_FULL_P (2 << 10 = 0x800).
  p::axi_aw posted = full_aw;
  posted.user = 0x00FC082A;
  const auto f = write_of<16>(posted, four_full_beats());
  REQUIRE(f.ok());
  CHECK(f->type->name == "WR_FULL_P");
  CHECK(f->control[0] == 0x02);
}

TEST_CASE("axi: narrow and unaligned writes") {
  // Narrow: 4-byte beats on a 16-byte bus from 0x1004. Beat k covers 0x1004 + 4k on lanes
  // 4..7, 8..11, 12..15, then 0..3 (0x1010 % 16). Lane i of beat k holds 16k + i.
  // AWUSER: 15 << 18 = 0x3C0000, 4 << 10 = 0x1000, xpuid 1.
  const p::axi_aw aw{.id = 1, .addr = 0x1004, .len = 3, .size = 2, .user = 0x003C1001};
  std::vector<p::axi_w<16>> beats(4);
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < 16; ++i) beats[k].data[i] = static_cast<std::uint8_t>(16 * k + i);
  beats[0].strb = {0xF0, 0x00};
  beats[1].strb = {0x00, 0x0F};
  beats[2].strb = {0x00, 0xF0};
  beats[3].strb = {0x0F, 0x00};
  beats[3].last = true;
  const auto c = write_of<16>(aw, beats);
  REQUIRE(c.ok());
  CHECK(c->type->name == "WR_FULL");
  CHECK(bytes_of(c->control_bytes()) ==
        std::vector<std::uint8_t>{0x04, 0x0F, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x10, 0x04});
  CHECK(bytes_of(c->data_bytes()) == std::vector<std::uint8_t>{0x04, 0x05, 0x06, 0x07, 0x18, 0x19,
                                                               0x1A, 0x1B, 0x2C, 0x2D, 0x2E, 0x2F,
                                                               0x30, 0x31, 0x32, 0x33});
  // A strobe on a lane the beat does not cover.
  auto outside = beats;
  outside[0].strb = {0xF1, 0x00};
  const auto e = write_of<16>(aw, outside).err;
  CHECK(e.code == errc::bad_value);
  CHECK(e.field == "axi.wstrb");
  CHECK(e.value == 0);
  CHECK(e.item == 1);

  // Unaligned full width: 0x100A, two 16-byte beats: lanes 10..15 then 0..15, 22 bytes.
  // AWUSER: 21 << 18 = 0x540000, 4 << 10, xpuid 1.
  const p::axi_aw un{.id = 2, .addr = 0x100A, .len = 1, .size = 4, .user = 0x00541001};
  std::vector<p::axi_w<16>> ub(2);
  ub[0].strb = {0x00, 0xFC};
  ub[1].strb = {0xFF, 0xFF};
  ub[1].last = true;
  for (std::size_t i = 10; i < 16; ++i) ub[0].data[i] = static_cast<std::uint8_t>(i);
  for (std::size_t i = 0; i < 16; ++i) ub[1].data[i] = static_cast<std::uint8_t>(0x40 + i);
  const auto u = write_of<16>(un, ub);
  REQUIRE(u.ok());
  CHECK(u->type->name == "WR_FULL");
  CHECK(u->data_size == 22);
  CHECK(u->control[1] == 21);
  CHECK(u->control[11] == 0x0A);
  CHECK(u->data[0] == 10);
  CHECK(u->data[6] == 0x40);
  const auto back = p::to_axi_write<16>(*u);
  REQUIRE(back.ok());
  CHECK(back->aw == un);
  CHECK(to_vec(back->beats()) == ub);
}

TEST_CASE("axi: the 256-byte limit and holes") {
  // 64 narrow 4-byte beats from 0x1004 cover exactly 256 bytes: one WR_FULL.
  // AWUSER: 255 << 18 = 0x3FC0000, 4 << 10, xpuid 0.
  p::axi_aw aw{.id = 3, .addr = 0x1004, .len = 63, .size = 2, .user = 0x03FC1000};
  std::vector<p::axi_w<16>> beats(64);
  for (std::size_t k = 0; k < 64; ++k)
    for (std::size_t i = 0; i < 4; ++i) p::set_strobe(beats[k], (4 + 4 * k + i) % 16);
  beats[63].last = true;
  const auto c = write_of<16>(aw, beats);
  REQUIRE(c.ok());
  CHECK(c->data_size == 256);
  CHECK(c->type->name == "WR_FULL");

  // The same burst with byte 0x1005 unwritten: whole words 0x1000..0x1107 would be 264 bytes.
  auto holed = beats;
  p::set_strobe(holed[0], 5, false);
  const auto e = write_of<16>(aw, holed).err;
  CHECK(e.code == errc::bad_length);
  CHECK(e.available == 264);

  // A burst covering 17 x 16 = 272 bytes.
  const p::axi_aw big{.id = 3, .addr = 0x1000, .len = 16, .size = 4, .user = 0x03FC1000};
  std::vector<p::axi_w<16>> bb(17);
  for (auto& b : bb) b.strb = {0xFF, 0xFF};
  bb[16].last = true;
  CHECK(write_of<16>(big, bb).err.code == errc::bad_length);

  // A hole in a middle word: 0x3000, 32 bytes, all strobed but 0x300A (beat 0, lane 10).
  const p::axi_aw aw2{.id = 9, .addr = 0x3000, .len = 1, .size = 4, .user = 0x007C2005};
  std::vector<p::axi_w<16>> h(2);
  h[0].strb = {0xFF, 0xFB};
  h[1].strb = {0xFF, 0xFF};
  h[1].last = true;
  const auto he = write_of<16>(aw2, h).err;
  CHECK(he.code == errc::unsupported);
  CHECK(he.value == 0x300A);
  // The same gap in the first word is a byte enable, not a hole.
  h[0].strb = {0xFB, 0xFF};
  const auto ok = write_of<16>(aw2, h);
  REQUIRE(ok.ok());
  CHECK(ok->control[12] == 0xFB);
  CHECK(ok->control[13] == 0xFF);
}

TEST_CASE("axi: a partial write whose enables leave no gap returns as WR_FULL") {
  // WR_PART, 16 bytes at 0x1000, be_first 0xF0 (bytes 4..7), be_last 0x0F (bytes 0..3):
  // the written bytes 0x1004..0x100B are one run, so they come back as WR_FULL at 0x1004, 8
  // bytes, on any bus.
  const byte_array<16> c{0x08, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x10, 0x00, 0xF0, 0x0F, 0, 0};
  std::array<std::uint8_t, 16> d{};
  for (std::size_t i = 4; i < 12; ++i) d[i] = static_cast<std::uint8_t>(i);
  const auto cmd = command(0, 0, c, d);
  const std::vector<std::uint8_t> want{0x04, 0x07, 0, 1, 0, 0, 0, 0, 0, 0, 0x10, 0x04};
  const auto a16 = p::to_axi_write<16>(cmd);
  REQUIRE(a16.ok());
  const auto b16 = p::from_axi_write<16>(a16->aw, a16->beats());
  // AWUSER still says 15 (the partial's whole words); the run is 8 bytes.
  CHECK(b16.err.field == "axi.user.length");
  auto aw = a16->aw;
  aw.user = *p::encode_user({.length = 7, .type = 8, .xpuid = 0});
  const auto r16 = p::from_axi_write<16>(aw, a16->beats());
  REQUIRE(r16.ok());
  CHECK(bytes_of(r16->control_bytes()) == want);
  CHECK(bytes_of(r16->data_bytes()) == std::vector<std::uint8_t>{4, 5, 6, 7, 8, 9, 10, 11});
  const auto a32 = p::to_axi_write<32>(cmd);
  REQUIRE(a32.ok());
  aw = a32->aw;
  aw.user = *p::encode_user({.length = 7, .type = 8, .xpuid = 0});
  const auto r32 = p::from_axi_write<32>(aw, a32->beats());
  REQUIRE(r32.ok());
  CHECK(bytes_of(r32->control_bytes()) == want);
}

TEST_CASE("axi: AW and W refusals") {
  const auto beats = four_full_beats();
  auto aw = full_aw;
  SUBCASE("beat count") {
    auto v = beats;
    v.pop_back();
    v.back().last = true;
    const auto e = write_of<16>(aw, v).err;
    CHECK(e.code == errc::bad_length);
    CHECK(e.needed == 4);
    CHECK(e.available == 3);
  }
  SUBCASE("WLAST") {
    auto v = beats;
    v[3].last = false;
    CHECK(write_of<16>(aw, v).err.field == "axi.wlast");
    v[3].last = true;
    v[1].last = true;
    CHECK(write_of<16>(aw, v).err.item == 2);
  }
  SUBCASE("burst kinds") {
    aw.burst = p::axi_burst_fixed;
    CHECK(write_of<16>(aw, beats).err.code == errc::unsupported);
    aw.burst = p::axi_burst_wrap;
    CHECK(write_of<16>(aw, beats).err.code == errc::unsupported);
    aw.burst = 4;
    CHECK(write_of<16>(aw, beats).err.code == errc::value_too_big);
  }
  SUBCASE("size") {
    aw.size = 5;  // 32 bytes on a 16-byte bus
    CHECK(write_of<16>(aw, beats).err.code == errc::bad_value);
    aw.size = 8;
    CHECK(write_of<16>(aw, beats).err.code == errc::value_too_big);
  }
  SUBCASE("4 KB boundary") {
    aw.addr = 0xFF0;  // 0xFF0 + 64 > 0x1000
    const auto e = write_of<16>(aw, beats).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.field == "axi.awaddr");
  }
  SUBCASE("no strobe") {
    auto v = beats;
    for (auto& b : v) b.strb = {0, 0};
    CHECK(write_of<16>(aw, v).err.code == errc::bad_value);
  }
  SUBCASE("USER type and length") {
    aw.user = 0x00FC282A;  // type RD
    CHECK(write_of<16>(aw, beats).err.field == "axi.user.type");
    aw.user = 0x00F8102A;  // length 62
    const auto e = write_of<16>(aw, beats).err;
    CHECK(e.code == errc::bad_length);
    CHECK(e.field == "axi.user.length");
  }
}

TEST_CASE("axi: write requests back to AW and W, refusals") {
  // WR_PART control: 08, dlen, tag, address (8 bytes), be_first, be_last, reserved (2).
  const auto part = [](std::uint64_t addr, std::size_t n, std::uint8_t bf, std::uint8_t bl) {
    byte_array<16> c{0x08, 0, 0, 1};
    for (int i = 0; i < 8; ++i) c[4 + i] = static_cast<std::uint8_t>(addr >> (56 - 8 * i));
    c[12] = bf;
    c[13] = bl;
    std::vector<std::uint8_t> d(n);
    return p::to_axi_write<16>(command(0, 0, c, d)).err;
  };
  CHECK(part(0x1000, 16, 0xFF, 0xFF).code == errc::none);
  CHECK(part(0x1004, 16, 0xFF, 0xFF).code == errc::bad_value);   // address not on a word
  CHECK(part(0x1000, 12, 0xFF, 0xFF).code == errc::bad_length);  // not whole words
  CHECK(part(0x1000, 16, 0x00, 0xFF).field == "sue.cmd.be_first");
  CHECK(part(0x1000, 16, 0xFF, 0x00).field == "sue.cmd.be_last");
  CHECK(part(0x1000, 8, 0xFF, 0x01).field == "sue.cmd.be_last");  // one word: be_last 0
  CHECK(part(0x1000, 8, 0x81, 0x00).code == errc::none);

  // 0xFF8 + 16 crosses 0x1000.
  const byte_array<12> cross{0x04, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x0F, 0xF8};
  std::array<std::uint8_t, 16> d{};
  CHECK(p::to_axi_write<16>(command(0, 0, cross, d)).err.code == errc::unsupported);
  const byte_array<6> msg{0x10, 0, 0, 1, 0, 1};
  const auto e = p::to_axi_write<16>(command(0, 0, msg, d)).err;
  CHECK(e.code == errc::unsupported);
  CHECK(e.value == 0x10);
  const byte_array<4> barrier{0x12, 0, 0, 1};
  CHECK(p::to_axi_read<16>(command(0, 0, barrier, {})).err.code == errc::unsupported);
  const byte_array<14> atomic{0x14, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(p::to_axi_write<16>(command(0, 0, atomic, d)).err.code == errc::unsupported);
}

namespace {

template <std::size_t B>
void write_round_trips(std::mt19937& rng) {
  CAPTURE(B);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int iter = 0; iter < 200; ++iter) {
    // The four write types: WR_FULL_P, WR_FULL, WR_PART_P, WR_PART.
    constexpr std::array<std::uint8_t, 4> writes{p::code::write_full_posted, p::code::write_full,
                                                 p::code::write_partial_posted,
                                                 p::code::write_partial};
    const std::uint8_t type = writes[static_cast<std::size_t>(iter) % 4];
    const bool partial = type == p::code::write_partial || type == p::code::write_partial_posted;
    const std::size_t n = partial ? 8 * (1 + byte(rng) % 32) : 1 + byte(rng);
    std::uint64_t addr = 0x12345000ull + static_cast<std::uint64_t>(byte(rng)) * 8 +
                         (partial ? 0 : static_cast<std::uint64_t>(byte(rng) % 8));
    if ((addr & 0xFFF) + n > 0x1000) addr -= 0x400;
    byte_array<16> c{type, 0, static_cast<std::uint8_t>(iter), 0x5A};
    for (int i = 0; i < 8; ++i) c[4 + i] = static_cast<std::uint8_t>(addr >> (56 - 8 * i));
    std::vector<std::uint8_t> data(n);
    for (auto& x : data) x = static_cast<std::uint8_t>(byte(rng));
    if (partial) {
      c[12] = static_cast<std::uint8_t>(1 + byte(rng) % 255);
      c[13] = n == 8 ? 0 : static_cast<std::uint8_t>(1 + byte(rng) % 255);
      for (std::size_t i = 0; i < 8; ++i) {
        if (!((c[12] >> i) & 1)) data[i] = 0;
        if (n > 8 && !((c[13] >> i) & 1)) data[n - 8 + i] = 0;
      }
    }
    const auto cmd = command(static_cast<std::uint16_t>(byte(rng) * 4), 0,
                             w::bytes(c).first(partial ? 16 : 12), data);
    CAPTURE(iter);
    CAPTURE(addr);
    CAPTURE(n);
    const auto axi = p::to_axi_write<B>(cmd);
    REQUIRE(axi.ok());
    CHECK(axi->aw.size == p::axi_size_of<B>());
    CHECK(axi->count == axi->aw.len + 1u);
    // A partial write whose enables leave no gap returns as a full one, and AWUSER must
    // then give the run's length: count the enabled bytes to know which case this is.
    std::size_t written = 0;
    std::size_t first = n;
    std::size_t last = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool on = !partial || (i < 8        ? ((c[12] >> i) & 1) != 0
                                   : i >= n - 8 ? ((c[13] >> (i - (n - 8))) & 1) != 0
                                                : true);
      if (!on) continue;
      ++written;
      first = std::min(first, i);
      last = i;
    }
    const bool run = written == last - first + 1;
    auto aw = axi->aw;
    if (partial && run)
      aw.user = *p::encode_user(
          {.length = static_cast<std::uint8_t>(written - 1), .type = type, .xpuid = cmd.xpuid});
    const auto back = p::from_axi_write<B>(aw, axi->beats());
    REQUIRE(back.ok());
    CHECK(back->xpuid == cmd.xpuid);
    if (!partial || !run) {
      CHECK(*back == cmd);
      CHECK(back->type == cmd.type);
    } else {
      // A partial write without a gap comes back full, posted or not as it was.
      CHECK(back->code() == (cmd.code() == p::code::write_partial ? p::code::write_full
                                                                  : p::code::write_full_posted));
      CHECK(back->data_size == written);
      for (std::size_t i = 0; i < written; ++i) CHECK(back->data[i] == data[first + i]);
    }
    const auto again = p::to_axi_write<B>(*back);
    REQUIRE(again.ok());
    CHECK(again->aw.len == axi->aw.len);
    CHECK(again->aw.id == axi->aw.id);
    CHECK(to_vec(again->beats()) == to_vec(axi->beats()));
    if (!partial || !run) CHECK(again->aw == axi->aw);
  }
}

template <std::size_t B>
void read_round_trips(std::mt19937& rng) {
  CAPTURE(B);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int iter = 0; iter < 100; ++iter) {
    const std::size_t n = 1 + byte(rng);
    std::uint64_t addr = 0xABC000ull + static_cast<std::uint64_t>(byte(rng)) * 13;
    if ((addr & 0xFFF) + n > 0x1000) addr -= 0x400;
    byte_array<12> rd{0x0A, static_cast<std::uint8_t>(n - 1), 0x00,
                      static_cast<std::uint8_t>(iter)};
    for (int i = 0; i < 8; ++i) rd[4 + i] = static_cast<std::uint8_t>(addr >> (56 - 8 * i));
    const auto xpuid = static_cast<std::uint16_t>(byte(rng) + 700);
    const auto req = command(xpuid, 0, rd, {});
    CAPTURE(iter);
    const auto ar = p::to_axi_read<B>(req);
    REQUIRE(ar.ok());
    const auto req2 = p::from_axi_read<B>(*ar);
    REQUIRE(req2.ok());
    CHECK(*req2 == req);

    std::vector<std::uint8_t> data(n);
    for (auto& x : data) x = static_cast<std::uint8_t>(byte(rng));
    const byte_array<6> rsp{
        0x0C, 0, 0x00, static_cast<std::uint8_t>(iter), static_cast<std::uint8_t>(iter % 4), 0};
    const auto resp = command(xpuid, 1, rsp, data);
    const auto r = p::to_axi_read_response<B>(*ar, resp);
    REQUIRE(r.ok());
    CHECK(r->count == ar->len + 1u);
    const auto resp2 = p::from_axi_read_response<B>(*ar, r->beats());
    REQUIRE(resp2.ok());
    CHECK(*resp2 == resp);
  }
}

}  // namespace

TEST_CASE("axi: every AXI-mapped type round-trips on 8- to 128-byte buses") {
  std::mt19937 rng(3221);
  write_round_trips<8>(rng);
  write_round_trips<16>(rng);
  write_round_trips<32>(rng);
  write_round_trips<64>(rng);
  write_round_trips<128>(rng);
  read_round_trips<8>(rng);
  read_round_trips<16>(rng);
  read_round_trips<32>(rng);
  read_round_trips<64>(rng);
  read_round_trips<128>(rng);
}

TEST_CASE("axi: AR and R golden, read response on VC1") {
  // RD: tag 0x21, 64 bytes from 0x4010, to XPU 9. Control 05 3F 00 21 + address.
  const byte_array<12> rd{0x0A, 0x3F, 0x00, 0x21, 0, 0, 0, 0, 0, 0, 0x40, 0x10};
  const auto req = command(9, 0, rd, {});
  // 32-byte bus: beats 0x4000 (from 0x4010), 0x4020, 0x4040 -> ARLEN 2, ARSIZE 5.
  // ARUSER: 63 << 18 = 0xFC0000, RD 0x0A << 10 = 0x2800, xpuid 9.
  const p::axi_ar want{.id = 0x21, .addr = 0x4010, .len = 2, .size = 5, .user = 0x00FC2809};
  const auto ar = p::to_axi_read<32>(req);
  REQUIRE(ar.ok());
  CHECK(*ar == want);
  const auto back = p::from_axi_read<32>(want);
  REQUIRE(back.ok());
  CHECK(back->type->name == "RD");
  CHECK(back->vc == 0);
  CHECK(bytes_of(back->control_bytes()) == bytes_of(rd));

  std::array<std::uint8_t, 64> data{};
  for (std::size_t i = 0; i < 64; ++i) data[i] = static_cast<std::uint8_t>(i);
  const byte_array<6> ok_rsp{0x0C, 0x3F, 0x00, 0x21, 0x00, 0x00};
  const auto rsp = command(9, 1, ok_rsp, data);
  const auto r = p::to_axi_read_response<32>(want, rsp);
  REQUIRE(r.ok());
  REQUIRE(r->count == 3);
  // RUSER: 63 << 18, RD_RSP 0x0C << 10 = 0x3000, xpuid 9.
  std::vector<p::axi_r<32>> beats(3);
  for (auto& b : beats) {
    b.id = 0x21;
    b.user = 0x00FC3009;
  }
  for (std::size_t i = 16; i < 32; ++i) beats[0].data[i] = static_cast<std::uint8_t>(i - 16);
  for (std::size_t i = 0; i < 32; ++i) beats[1].data[i] = static_cast<std::uint8_t>(16 + i);
  for (std::size_t i = 0; i < 16; ++i) beats[2].data[i] = static_cast<std::uint8_t>(48 + i);
  beats[2].last = true;
  CHECK(to_vec(r->beats()) == beats);

  const auto got = read_rsp_of<32>(want, beats);
  REQUIRE(got.ok());
  CHECK(got->type->name == "RD_RSP");
  CHECK(got->vc == 1);
  CHECK(got->xpuid == 9);
  CHECK(*got == rsp);

  // The command's one status is the worst beat's: SLVERR (2) in beat 1.
  auto slv = beats;
  slv[1].resp = p::axi_resp_slverr;
  const auto s = read_rsp_of<32>(want, slv);
  REQUIRE(s.ok());
  CHECK(bytes_of(s->control_bytes()) ==
        std::vector<std::uint8_t>{0x0C, 0x3F, 0x00, 0x21, 0x02, 0x00});
}

TEST_CASE("axi: narrow read response lanes") {
  // 4-byte beats on a 16-byte bus from 0x1004: lanes 4..7, 8..11, 12..15, 0..3.
  // ARUSER: 15 << 18 = 0x3C0000, RD 0x0A << 10 = 0x2800, xpuid 2.
  const p::axi_ar ar{.id = 3, .addr = 0x1004, .len = 3, .size = 2, .user = 0x003C2802};
  const auto req = p::from_axi_read<16>(ar);
  REQUIRE(req.ok());
  CHECK(bytes_of(req->control_bytes()) ==
        std::vector<std::uint8_t>{0x0A, 0x0F, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0x10, 0x04});
  std::array<std::uint8_t, 16> data{};
  for (std::size_t i = 0; i < 16; ++i) data[i] = static_cast<std::uint8_t>(0xA0 + i);
  const byte_array<6> rsp{0x0C, 0x0F, 0x00, 0x03, 0x00, 0x00};
  const auto r = p::to_axi_read_response<16>(ar, command(2, 1, rsp, data));
  REQUIRE(r.ok());
  REQUIRE(r->count == 4);
  CHECK(r->r[0].data[4] == 0xA0);
  CHECK(r->r[0].data[7] == 0xA3);
  CHECK(r->r[1].data[8] == 0xA4);
  CHECK(r->r[2].data[15] == 0xAB);
  CHECK(r->r[3].data[0] == 0xAC);
  CHECK(r->r[3].data[3] == 0xAF);
  CHECK(r->r[3].data[4] == 0x00);
  CHECK(r->r[0].data[0] == 0x00);
  const auto back = p::from_axi_read_response<16>(ar, r->beats());
  REQUIRE(back.ok());
  CHECK(bytes_of(back->data_bytes()) == bytes_of(data));
}

TEST_CASE("axi: AR and R refusals") {
  const p::axi_ar ar{.id = 0x21, .addr = 0x4010, .len = 2, .size = 5, .user = 0x00FC2809};
  auto a = ar;
  a.user = 0x00FC1009;  // type WR_FULL
  CHECK(p::from_axi_read<32>(a).err.field == "axi.user.type");
  a = ar;
  a.len = 0;  // one beat: 16 bytes from 0x4010, but ARUSER asks for 64
  CHECK(p::from_axi_read<32>(a).err.code == errc::bad_length);
  a = ar;
  a.user = 0x003C2809;  // 16 bytes: the third beat (0x4040) carries none of them
  CHECK(p::from_axi_read<32>(a).err.what == "ARUSER length leaves the last beat unused");
  a = ar;
  a.burst = p::axi_burst_wrap;
  CHECK(p::from_axi_read<32>(a).err.code == errc::unsupported);
  a = ar;
  a.size = 6;
  CHECK(p::from_axi_read<32>(a).err.field == "axi.arsize");
  a = ar;
  a.addr = 0x4FD0;  // 0xFD0 + 80 crosses 4 KB
  CHECK(p::from_axi_read<32>(a).err.field == "axi.araddr");
  // RD crossing 4 KB has no one AR.
  const byte_array<12> rd{0x0A, 0x1F, 0, 1, 0, 0, 0, 0, 0, 0, 0x0F, 0xF0};
  CHECK(p::to_axi_read<32>(command(1, 0, rd, {})).err.code == errc::unsupported);

  std::array<std::uint8_t, 64> data{};
  const byte_array<6> rsp{0x0C, 0x3F, 0x00, 0x21, 0x00, 0x00};
  const auto r = p::to_axi_read_response<32>(ar, command(9, 1, rsp, data));
  REQUIRE(r.ok());
  const auto good = to_vec(r->beats());
  REQUIRE(read_rsp_of<32>(ar, good).ok());
  auto v = good;
  v.pop_back();
  CHECK(read_rsp_of<32>(ar, v).err.code == errc::bad_length);
  v = good;
  v[1].id = 0x22;
  CHECK(read_rsp_of<32>(ar, v).err.field == "axi.rid");
  v = good;
  v[2].last = false;
  CHECK(read_rsp_of<32>(ar, v).err.field == "axi.rlast");
  v = good;
  v[1].user = 0x00FC300A;
  CHECK(read_rsp_of<32>(ar, v).err.field == "axi.ruser");
  v = good;
  for (auto& b : v) b.user = 0x00FC3809;  // type WR_RSP
  CHECK(read_rsp_of<32>(ar, v).err.field == "axi.user.type");
  v = good;
  for (auto& b : v) b.user = 0x00F83009;  // length 62
  CHECK(read_rsp_of<32>(ar, v).err.field == "axi.user.length");
  v = good;
  v[0].resp = 4;
  CHECK(read_rsp_of<32>(ar, v).err.code == errc::value_too_big);

  const byte_array<6> other_tag{0x0C, 0x3F, 0x00, 0x22, 0x00, 0x00};
  CHECK(p::to_axi_read_response<32>(ar, command(9, 1, other_tag, data)).err.field == "sue.cmd.tag");
  const byte_array<6> bad_status{0x0C, 0x3F, 0x00, 0x21, 0x04, 0x00};
  CHECK(p::to_axi_read_response<32>(ar, command(9, 1, bad_status, data)).err.code ==
        errc::value_too_big);
  CHECK(p::to_axi_read_response<32>(ar, command(9, 1, rsp, std::span(data).first(32))).err.code ==
        errc::bad_length);
  const byte_array<6> atomic_rsp{0x16, 0x3F, 0x00, 0x21, 0x00, 0x00};
  CHECK(p::to_axi_read_response<32>(ar, command(9, 1, atomic_rsp, data)).err.code ==
        errc::unsupported);
}

TEST_CASE("axi: B and WR_RSP") {
  // WR_RSP: 0E, reserved, tag 0x0077, status SLVERR, reserved. BUSER: WR_RSP 0x0E << 10 = 0x3800
  // | xpuid 0x3FF = 0x3BFF.
  const byte_array<6> rsp{0x0E, 0x00, 0x00, 0x77, 0x02, 0x00};
  const auto cmd = command(0x3FF, 1, rsp, {});
  const auto b = p::to_axi_write_response(cmd);
  REQUIRE(b.ok());
  CHECK(*b == p::axi_b{.id = 0x77, .resp = 2, .user = 0x00003BFF});
  const auto back = p::from_axi_write_response(*b);
  REQUIRE(back.ok());
  CHECK(back->type->name == "WR_RSP");
  CHECK(back->vc == 1);
  CHECK(*back == cmd);

  CHECK(p::from_axi_write_response({.id = 1, .resp = 4, .user = 0x00003800}).err.code ==
        errc::value_too_big);
  CHECK(p::from_axi_write_response({.id = 1, .resp = 0, .user = 0x00003000}).err.field ==
        "axi.user.type");
  CHECK(p::from_axi_write_response({.id = 1, .resp = 0, .user = 0x00043800}).err.field ==
        "axi.user.length");
  const byte_array<6> bad{0x0E, 0x00, 0x00, 0x77, 0x05, 0x00};
  CHECK(p::to_axi_write_response(command(1, 1, bad, {})).err.code == errc::value_too_big);
  std::array<std::uint8_t, 4> d{};
  const byte_array<6> rd_rsp{0x0C, 0x03, 0x00, 0x77, 0x00, 0x00};
  CHECK(p::to_axi_write_response(command(1, 1, rd_rsp, d)).err.code == errc::unsupported);
}

TEST_CASE("axi: one credit per transaction per channel") {
  p::axi_credits s{};
  for (const auto ch : {p::axi_channel::aw, p::axi_channel::w, p::axi_channel::b,
                        p::axi_channel::ar, p::axi_channel::r}) {
    const auto e = p::consume(s, ch).err;
    CHECK(e.code == errc::no_space);
    CHECK(e.value == static_cast<std::uint64_t>(ch));
  }
  s = *p::return_credits(s, p::axi_channel::ar, 2);
  s = *p::return_credits(s, p::axi_channel::aw);
  CHECK(s.available(p::axi_channel::ar) == 2);
  CHECK(s.available(p::axi_channel::aw) == 1);
  CHECK(s.available(p::axi_channel::r) == 0);
  s = *p::consume(s, p::axi_channel::ar);
  s = *p::consume(s, p::axi_channel::ar);
  CHECK(p::consume(s, p::axi_channel::ar).err.code == errc::no_space);
  CHECK(s.available(p::axi_channel::aw) == 1);

  // A write needs AW and W together: with no W credit it takes neither.
  const auto none = p::consume_write(s);
  CHECK(none.err.code == errc::no_space);
  CHECK(s.available(p::axi_channel::aw) == 1);
  s = *p::return_credits(s, p::axi_channel::w);
  const auto wr = p::consume_write(s);
  REQUIRE(wr.ok());
  CHECK(wr->available(p::axi_channel::aw) == 0);
  CHECK(wr->available(p::axi_channel::w) == 0);

  p::axi_credits full{};
  full.count[2] = 65535;
  CHECK(p::return_credits(full, p::axi_channel::b).err.code == errc::value_too_big);
  CHECK(p::return_credits(full, p::axi_channel::r, 65535).ok());
}
