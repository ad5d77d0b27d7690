// The Tofu routing header (tofu/routing_header.hpp; 003 IV.E, Figs. 4-6): golden bytes worked out
// by hand from the widths, the paper's field order, and the coordinate rules (003 II.A) on encode
// and decode.
#include <scaleup/tofu/routing_header.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace tf = scaleup::tofu;
namespace w = scaleup::wire;
using scaleup::test::byte_array;
using scaleup::test::hex;

// 1 | LEN 5 | DABC1 (A 1, B 2, C 0) | DX 0x12 | DY 0x05 | DZ 0x17 | DABC2 (A 0, B 1, C 1) | DI 5 |
// B 1 | S 0 | 0 | VC 2 | PAT 1 | STAT 0b0010 | SEQ 0x2A5. Bit by bit, eight to a byte:
//   1 000101 1            = 1000 1011 = 8B
//   10 0 00010            = 1000 0010 = 82   (B, C, DX's top five)
//   010 00000             = 0100 0000 = 40   (DX's low three, DY's top five)
//   101 00010             = 1010 0010 = A2   (DY's low three, DZ's top five)
//   111 0 01 1 1          = 1110 0111 = E7   (DZ's low three, DABC2, DI's top bit)
//   01 1 0 0 10 0         = 0110 0100 = 64   (DI's low two, B, S, 0, VC, PAT's top bit)
//   01 0010 10            = 0100 1010 = 4A   (PAT's low two, STAT, SEQ's top two)
//   1010 0101             = A5               (SEQ's low eight)
constexpr tf::routing_header golden{.one = 1,
                                    .len = 5,
                                    .dabc1_a = 1,
                                    .dabc1_b = 2,
                                    .dabc1_c = 0,
                                    .dx = 0x12,
                                    .dy = 0x05,
                                    .dz = 0x17,
                                    .dabc2_a = 0,
                                    .dabc2_b = 1,
                                    .dabc2_c = 1,
                                    .di = 5,
                                    .b = 1,
                                    .s = 0,
                                    .zero = 0,
                                    .vc = 2,
                                    .pat = 1,
                                    .stat = 0b0010,
                                    .seq = 0x2A5};
constexpr byte_array<8> golden_bytes{0x8B, 0x82, 0x40, 0xA2, 0xE7, 0x64, 0x4A, 0xA5};

}  // namespace

TEST_CASE("tofu routing header: golden bytes") {
  byte_array<8> out{};
  const auto n = tf::encode_header(golden, out);
  REQUIRE(n.ok());
  CHECK(*n == 8);
  CHECK(hex(out) == hex(golden_bytes));

  const auto back = tf::decode_header(golden_bytes);
  REQUIRE(back.ok());
  CHECK(*back == golden);

  const auto v = w::view<tf::routing_header>::make(golden_bytes);
  REQUIRE(v.ok());
  CHECK(v->get<&tf::routing_header::len>() == 5);
  CHECK(v->get<&tf::routing_header::dx>() == 0x12);
  CHECK(v->get<&tf::routing_header::pat>() == 1);
  CHECK(v->get<&tf::routing_header::stat>() == 2);
  CHECK(v->get<&tf::routing_header::seq>() == 0x2A5);
  CHECK(tf::destination(*back) == tf::coordinates{0x12, 0x05, 0x17, {0, 1, 1}});
  CHECK(tf::xyz_leg(*back) == tf::abc{1, 2, 0});
  static_assert(w::to_bytes(golden).value == golden_bytes);
}

TEST_CASE("tofu routing header: the paper's fields in the paper's order, 64 bits") {
  constexpr std::array<std::string_view, 19> order{
      "1",       "LEN", "DABC1 A", "DABC1 B", "DABC1 C", "DX", "DY",  "DZ",   "DABC2 A", "DABC2 B",
      "DABC2 C", "DI",  "B",       "S",       "0",       "VC", "PAT", "STAT", "SEQ"};
  const auto& infos = w::field_infos<tf::routing_header>;
  REQUIRE(infos.size() == order.size());
  unsigned bits = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    CAPTURE(i);
    CHECK(infos[i].name == order[i]);
    CHECK(infos[i].filter.substr(0, 8) == "tofu.rh.");
    CHECK(!infos[i].seed.empty());
    bits += infos[i].width;
  }
  CHECK(bits == 64);
  CHECK(w::info_of<tf::routing_header, &tf::routing_header::pat>().width == 3);
  CHECK(w::info_of<tf::routing_header, &tf::routing_header::len>().filter == "tofu.rh.len");
  CHECK(w::info_of<tf::routing_header, &tf::routing_header::dx>().filter == "tofu.rh.dx");
  CHECK(w::info_of<tf::routing_header, &tf::routing_header::pat>().filter == "tofu.rh.pat");
}

TEST_CASE("tofu routing header: PAT codes") {
  CHECK(tf::ways_of(0) == 1);
  CHECK(tf::ways_of(1) == 2);
  CHECK(tf::ways_of(2) == 4);
  for (std::uint8_t p = 3; p < 8; ++p) CHECK(tf::ways_of(p) == 0);
  CHECK(tf::pat_for(1) == 0);
  CHECK(tf::pat_for(2) == 1);
  CHECK(tf::pat_for(4) == 2);
  const auto& pat = w::info_of<tf::routing_header, &tf::routing_header::pat>();
  CHECK(pat.name_of(0) == "duplicate");
  CHECK(pat.name_of(2) == "split in 4");
  CHECK(pat.name_of(5) == "reserved");
}

TEST_CASE("tofu routing header: the leading 1 and the 0 bit") {
  byte_array<8> b = golden_bytes;
  b[0] &= 0x7F;  // first bit 0: not a routing header
  const auto r = tf::decode_header(b);
  CHECK(r.err.code == w::errc::bad_value);
  CHECK(r.err.field == "tofu.rh.one");

  b = golden_bytes;
  b[5] |= 0x08;  // bit 44, the drawn 0: reported by the dissector, not refused
  const auto z = tf::decode_header(b);
  CHECK(z.ok());
  CHECK(z->zero == 1);

  tf::routing_header h = golden;
  h.one = 0;
  byte_array<8> out{};
  CHECK(tf::encode_header(h, out).err.code == w::errc::bad_value);
}

TEST_CASE("tofu routing header: coordinates out of range are refused on encode") {
  byte_array<8> out{};
  const auto refused = [&](tf::routing_header h, w::errc code, std::string_view field,
                           tf::geometry g = {}) {
    out.fill(0xEE);
    const auto r = tf::encode_header(h, out, g);
    CHECK(r.err.code == code);
    CHECK(r.err.field == field);
    CHECK(out[0] == 0xEE);  // nothing written
  };
  tf::routing_header h = golden;
  h.dabc1_b = 3;
  refused(h, w::errc::bad_value, "tofu.rh.dabc1.b");
  h = golden;
  h.dabc2_b = 3;
  refused(h, w::errc::bad_value, "tofu.rh.dabc2.b");
  h = golden;
  h.dabc1_a = 2;
  refused(h, w::errc::bad_value, "tofu.rh.dabc1.a");
  h = golden;
  h.dabc2_c = 2;
  refused(h, w::errc::bad_value, "tofu.rh.dabc2.c");
  h = golden;
  h.dx = 256;  // wider than the field: refused, not truncated
  refused(h, w::errc::value_too_big, "tofu.rh.dx");
  h = golden;
  h.dz = 24;  // inside the field, outside a 24 x 23 x 24 system
  refused(h, w::errc::bad_value, "tofu.rh.dz", tf::geometry{24, 23, 24});
  h.dz = 23;
  CHECK(tf::encode_header(h, out, tf::geometry{24, 23, 24}).ok());
  h.dy = 23;
  refused(h, w::errc::bad_value, "tofu.rh.dy", tf::geometry{24, 23, 24});
  h = golden;
  h.len = 64;
  refused(h, w::errc::value_too_big, "tofu.rh.len");

  // set_route checks before it writes anything.
  tf::routing_header r = golden;
  CHECK(!tf::set_route(r, {1, 2, 3, {1, 2, 1}}, {0, 1, 0}));
  CHECK(tf::destination(r) == tf::coordinates{1, 2, 3, {1, 2, 1}});
  CHECK(tf::xyz_leg(r) == tf::abc{0, 1, 0});
  const tf::routing_header before = r;
  const w::error e = tf::set_route(r, {1, 2, 3, {0, 3, 0}}, {0, 0, 0});
  CHECK(e.code == w::errc::bad_value);
  CHECK(e.field == "tofu.rh.dabc2.b");
  CHECK(r == before);
}

TEST_CASE("tofu routing header: coordinates out of range are reported on decode") {
  byte_array<8> b = golden_bytes;
  b[1] |= 0xC0;                                              // DABC1 B = 3 (bits 8-9)
  std::vector<std::uint8_t> in_buffer(10 + b.size(), 0xEE);  // the header 10 bytes into a buffer
  std::copy(b.begin(), b.end(), in_buffer.begin() + 10);
  const auto r = tf::decode_header(in_buffer, 10);
  CHECK(!r.ok());
  CHECK(r.err.code == w::errc::bad_value);
  CHECK(r.err.field == "tofu.rh.dabc1.b");
  CHECK(r.err.value == 3);
  CHECK(r.err.offset == 11);  // byte 1 of a header found 10 bytes into the buffer
  CHECK(r->dabc1_b == 3);     // the header comes back as read, for the dissector

  b = golden_bytes;
  b[4] |= 0x0C;  // DABC2 B = 3 (bits 36-37)
  CHECK(tf::decode_header(b).err.field == "tofu.rh.dabc2.b");

  b = golden_bytes;  // DX 0x12 outside a 16-wide system
  const auto g = tf::decode_header(b, 0, tf::geometry{16, 16, 16});
  CHECK(g.err.field == "tofu.rh.dx");
  CHECK(g.err.value == 0x12);

  CHECK(tf::decode_header(std::span(golden_bytes).first(7)).err.code == w::errc::truncated);
}

TEST_CASE("tofu routing header: random headers round-trip") {
  std::mt19937_64 rng(20240605);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t r = rng();
    tf::routing_header h;
    h.len = static_cast<std::uint8_t>(r & 63);
    h.dabc1_a = static_cast<std::uint8_t>((r >> 6) & 1);
    h.dabc1_b = static_cast<std::uint8_t>(((r >> 7) & 3) % 3);
    h.dabc1_c = static_cast<std::uint8_t>((r >> 9) & 1);
    h.dx = static_cast<std::uint16_t>((r >> 10) & 0xFF);
    h.dy = static_cast<std::uint16_t>((r >> 18) & 0xFF);
    h.dz = static_cast<std::uint16_t>((r >> 26) & 0xFF);
    h.dabc2_a = static_cast<std::uint8_t>((r >> 34) & 1);
    h.dabc2_b = static_cast<std::uint8_t>(((r >> 35) & 3) % 3);
    h.dabc2_c = static_cast<std::uint8_t>((r >> 37) & 1);
    h.di = static_cast<std::uint8_t>((r >> 38) & 7);
    h.b = static_cast<std::uint8_t>((r >> 41) & 1);
    h.s = static_cast<std::uint8_t>((r >> 42) & 1);
    h.vc = static_cast<std::uint8_t>((r >> 43) & 3);
    h.pat = static_cast<std::uint8_t>((r >> 45) & 7);
    h.stat = static_cast<std::uint8_t>((r >> 48) & 15);
    h.seq = static_cast<std::uint16_t>((r >> 52) & 0x3FF);
    byte_array<8> out{};
    REQUIRE(tf::encode_header(h, out).ok());
    const auto back = tf::decode_header(out);
    REQUIRE(back.ok());
    CHECK(*back == h);
  }
}
