// The FIFO command interface of R2 3.2.1 (Tables 3 and 4): golden cycles written by hand,
// round trips for every default command type on 16- to 128-byte buses, every refusal of
// to_beats and from_beats, and the tx_credit / rx_credit word and counters.
//
// Every golden value below was worked out by hand from the seed tables and the default
// profile's layout (the arithmetic is in the comments); none comes from the code under test.
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/signal_interface.hpp>
#include <scaleup/wire/error.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace p = scaleup::pack;
namespace w = scaleup::wire;
using w::errc;

using scaleup::test::byte_array;

// The control of a 64-byte WR_FULL, tag 0x1234, address 0x0000'0001'0000'0040, laid out as the
// default profile draws cmd_write: type, data length - 1, tag (16), address (64), big-endian.
constexpr byte_array<12> write64_control{0x04, 0x3F, 0x12, 0x34, 0x00, 0x00,
                                         0x00, 0x01, 0x00, 0x00, 0x00, 0x40};

template <std::size_t N>
std::vector<std::uint8_t> image_of(const p::tx_beat<N>& b) {
  std::array<std::uint8_t, w::layout<p::tx_beat<N>>::size> out{};
  const auto r = w::encode(b, out);
  REQUIRE(r.ok());
  return {out.begin(), out.end()};
}

template <std::size_t N, p::direction D>
std::vector<p::beat<N, D>> to_vector(const p::beat_sequence<N, D>& s) {
  return {s.beats.begin(), s.beats.begin() + static_cast<std::ptrdiff_t>(s.count)};
}

template <std::size_t N, p::direction D>
w::result<p::command_value> decode(const std::vector<p::beat<N, D>>& v) {
  return p::from_beats<N, D>(p::default_profile, std::span<const p::beat<N, D>>(v));
}

// A valid 64-byte WR_FULL on a 32-byte bus, as two TX cycles, for the error tests to spoil.
std::vector<p::tx_beat<32>> write64_beats() {
  std::array<std::uint8_t, 64> data{};
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i);
  const auto s = p::to_beats<32>(p::default_profile, 0x155, 1, write64_control, data);
  REQUIRE(s.ok());
  return to_vector(*s);
}

}  // namespace

TEST_CASE("signal interface: bus widths the 4-bit cycle counter allows") {
  // ceil(256 / N) <= 16 cycles  <=>  N >= 16 bytes.
  static_assert(p::supported_bus_width<16>);
  static_assert(p::supported_bus_width<32>);
  static_assert(p::supported_bus_width<128>);
  static_assert(p::supported_bus_width<256>);
  static_assert(!p::supported_bus_width<15>);
  static_assert(!p::supported_bus_width<8>);
  static_assert(!p::supported_bus_width<257>);
  CHECK(p::beat_sequence<16>::capacity == 16);
  CHECK(p::beat_sequence<32>::capacity == 8);
  CHECK(p::beat_sequence<64>::capacity == 4);
  CHECK(p::beat_sequence<128>::capacity == 2);
  CHECK(p::beat_sequence<256>::capacity == 1);
  // Image: 4+2+2+10+1+5 bits, then 18 control bytes, then N data bytes.
  CHECK(w::layout<p::tx_beat<32>>::size == 3 + 18 + 32);
  static_assert(w::tiles<p::tx_beat<16>>());
  static_assert(w::tiles<p::tx_beat<256>>());
  static_assert(w::tiles<p::rx_beat<64>>());
}

TEST_CASE("signal interface: golden 64-byte write on a 32-byte bus") {
  std::array<std::uint8_t, 64> data{};
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i);
  // Byte 1 is given wrong on purpose: the framing rule sets it from the data length.
  byte_array<12> control = write64_control;
  control[1] = 0x00;
  const auto s = p::to_beats<32>(p::default_profile, 0x155, 1, control, data);
  REQUIRE(s.ok());
  REQUIRE(s->count == 2);

  byte_array<18> control0{};
  for (std::size_t i = 0; i < 12; ++i) control0[i] = write64_control[i];
  byte_array<32> data0{};
  byte_array<32> data1{};
  for (std::size_t i = 0; i < 32; ++i) {
    data0[i] = static_cast<std::uint8_t>(i);
    data1[i] = static_cast<std::uint8_t>(32 + i);
  }
  const p::tx_beat<32> want0{
      .cycle = 0, .valid = 2, .vc = 1, .xpuid = 0x155, .control = control0, .data = data0};
  const p::tx_beat<32> want1{.cycle = 1, .valid = 2, .vc = 1, .xpuid = 0x155, .data = data1};
  CHECK((*s)[0] == want0);
  CHECK((*s)[1] == want1);

  // The trace image. Byte 0 = cycle(4) valid(2) vc(2): 0000 10 01 = 0x09, then 0001 10 01 =
  // 0x19. xpuid 0x155 = 01 0101 0101: byte 1 = 0101 0101 = 0x55, byte 2 = 01, err 0, pad 00000
  // = 0100 0000 = 0x40.
  std::vector<std::uint8_t> image0{0x09, 0x55, 0x40};
  image0.insert(image0.end(), control0.begin(), control0.end());
  image0.insert(image0.end(), data0.begin(), data0.end());
  CHECK(image_of((*s)[0]) == image0);
  std::vector<std::uint8_t> image1{0x19, 0x55, 0x40};
  image1.resize(3 + 18, 0);
  image1.insert(image1.end(), data1.begin(), data1.end());
  CHECK(image_of((*s)[1]) == image1);

  const auto back = p::from_beats(p::default_profile, *s);
  REQUIRE(back.ok());
  CHECK(back->type == p::default_profile.find(p::code::write_full));
  CHECK(back->xpuid == 0x155);
  CHECK(back->vc == 1);
  CHECK(std::vector<std::uint8_t>(back->control_bytes().begin(), back->control_bytes().end()) ==
        std::vector<std::uint8_t>(write64_control.begin(), write64_control.end()));
  CHECK(std::vector<std::uint8_t>(back->data_bytes().begin(), back->data_bytes().end()) ==
        std::vector<std::uint8_t>(data.begin(), data.end()));
}

TEST_CASE("signal interface: golden read request and a 33-byte message") {
  // RD, read length 8 (byte 1 = 7, kept: RD carries no data), tag 0xBEEF, address 0x10.
  constexpr byte_array<12> rd{0x0A, 0x07, 0xBE, 0xEF, 0, 0, 0, 0, 0, 0, 0, 0x10};
  const auto r = p::to_beats<16>(p::default_profile, 0x3FF, 0, rd, {});
  REQUIRE(r.ok());
  REQUIRE(r->count == 1);
  byte_array<18> c{};
  for (std::size_t i = 0; i < rd.size(); ++i) c[i] = rd[i];
  const p::tx_beat<16> want{.cycle = 0, .valid = 1, .vc = 0, .xpuid = 0x3FF, .control = c};
  CHECK((*r)[0] == want);

  // MSG to queue 0x0102 with 33 bytes on a 32-byte bus: two cycles, the second holds one data
  // byte and 31 zeros. Control: 08, 33 - 1 = 0x20, tag 0x0001, queue 0x0102.
  constexpr byte_array<6> msg{0x10, 0x20, 0x00, 0x01, 0x01, 0x02};
  std::array<std::uint8_t, 33> data{};
  data.fill(0xEE);
  const auto m = p::to_beats<32, p::direction::rx>(p::default_profile, 7, 3, msg, data);
  REQUIRE(m.ok());
  REQUIRE(m->count == 2);
  CHECK((*m)[1].cycle == 1);
  CHECK((*m)[1].valid == 2);
  CHECK((*m)[1].vc == 3);
  CHECK((*m)[1].data[0] == 0xEE);
  for (std::size_t i = 1; i < 32; ++i) CHECK((*m)[1].data[i] == 0);
  for (std::size_t i = 6; i < 18; ++i) CHECK((*m)[0].control[i] == 0);
  // The RX image: its error bit is a fixed zero, same position.
  std::array<std::uint8_t, w::layout<p::rx_beat<32>>::size> img{};
  REQUIRE(w::encode((*m)[1], img).ok());
  // 0001 10 11 = 0x1B; xpuid 7 = 00 0000 0111: 0000 0001, then 11 0 00000 = 0xC0.
  CHECK(img[0] == 0x1B);
  CHECK(img[1] == 0x01);
  CHECK(img[2] == 0xC0);
}

namespace {

template <std::size_t N>
void round_trip_every_type(std::mt19937& rng) {
  CAPTURE(N);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : p::default_types) {
    CAPTURE(t.name);
    std::vector<std::size_t> lengths{0};
    if (t.has_data) lengths = {1, N - 1, N, N + 1, 200, 255, 256};
    for (const std::size_t len : lengths) {
      CAPTURE(len);
      std::vector<std::uint8_t> control(t.control_bytes());
      for (auto& b : control) b = static_cast<std::uint8_t>(byte(rng));
      control[0] = t.code;
      std::vector<std::uint8_t> data(len);
      for (auto& b : data) b = static_cast<std::uint8_t>(byte(rng));
      const auto xpuid = static_cast<std::uint16_t>(byte(rng) * 4 + 3);
      const auto vc = static_cast<std::uint8_t>(byte(rng) % 4);

      const auto s = p::to_beats<N>(p::default_profile, xpuid, vc, control, data);
      REQUIRE(s.ok());
      const std::size_t cycles = len == 0 ? 1 : (len + N - 1) / N;
      REQUIRE(s->count == cycles);
      for (std::size_t k = 0; k < cycles; ++k) {
        const auto& b = (*s)[k];
        CHECK(b.cycle == k);
        CHECK(b.valid == (t.has_data ? 2 : 1));
        CHECK(b.vc == vc);
        CHECK(b.xpuid == xpuid);
        CHECK(b.err == 0);
        for (std::size_t i = 0; i < N; ++i)
          CHECK(b.data[i] == (k * N + i < len ? data[k * N + i] : 0));
        for (std::size_t i = (k == 0 ? control.size() : 0); i < 18; ++i) CHECK(b.control[i] == 0);
      }
      // Left-aligned as given, except byte 1 of a type with data: the data length - 1.
      for (std::size_t i = 0; i < control.size(); ++i)
        CHECK((*s)[0].control[i] == (i == 1 && t.has_data ? len - 1 : control[i]));

      const auto back = p::from_beats(p::default_profile, *s);
      REQUIRE(back.ok());
      CHECK(back->type == &t);
      CHECK(back->xpuid == xpuid);
      CHECK(back->vc == vc);
      CHECK(back->data_size == len);
      for (std::size_t i = 0; i < len; ++i) CHECK(back->data[i] == data[i]);
      // And again through the value, and in the other direction.
      const auto again = p::to_beats<N>(p::default_profile, *back);
      REQUIRE(again.ok());
      CHECK(to_vector(*again) == to_vector(*s));
      const auto rx = p::to_beats<N, p::direction::rx>(p::default_profile, *back);
      REQUIRE(rx.ok());
      const auto rx_back = p::from_beats(p::default_profile, *rx);
      REQUIRE(rx_back.ok());
      CHECK(*rx_back == *back);
    }
  }
}

}  // namespace

TEST_CASE("signal interface: every default type round-trips on 16- to 128-byte buses") {
  std::mt19937 rng(20250607);
  round_trip_every_type<16>(rng);
  round_trip_every_type<32>(rng);
  round_trip_every_type<64>(rng);
  round_trip_every_type<128>(rng);
}

TEST_CASE("signal interface: to_beats refuses what the signals cannot carry") {
  std::array<std::uint8_t, 64> data{};
  const auto bad = [&](std::uint16_t xpuid, std::uint8_t vc, w::bytes control, w::bytes d) {
    return p::to_beats<32>(p::default_profile, xpuid, vc, control, d).err;
  };
  auto e = bad(1024, 0, write64_control, data);
  CHECK(e.code == errc::value_too_big);
  CHECK(e.field == "sue.fifo.xpuid");
  CHECK(e.value == 1024);
  e = bad(0, 4, write64_control, data);
  CHECK(e.code == errc::value_too_big);
  CHECK(e.field == "sue.fifo.tx_vc");

  byte_array<12> unknown = write64_control;
  unknown[0] = 0x7F;
  CHECK(bad(0, 0, unknown, data).code == errc::bad_value);
  unknown[0] = 0x00;  // padding is never a command
  CHECK(bad(0, 0, unknown, data).code == errc::bad_value);
  CHECK(bad(0, 0, w::bytes(write64_control).first(10), data).code == errc::bad_length);
  CHECK(bad(0, 0, {}, data).code == errc::truncated);
  CHECK(bad(0, 0, write64_control, {}).code == errc::bad_length);  // WR_FULL needs data
  std::array<std::uint8_t, 257> big{};
  CHECK(bad(0, 0, write64_control, big).code == errc::bad_length);
  constexpr byte_array<4> barrier{0x12, 0x00, 0x00, 0x01};
  CHECK(bad(0, 0, barrier, data).code == errc::bad_length);  // BARRIER carries none
  CHECK(bad(0, 0, barrier, {}).code == errc::none);
}

TEST_CASE("signal interface: from_beats refuses broken cycle runs") {
  const auto good = write64_beats();
  REQUIRE(decode(good).ok());

  SUBCASE("no cycles") {
    const auto e = decode(std::vector<p::tx_beat<32>>{}).err;
    CHECK(e.code == errc::truncated);
  }
  SUBCASE("last cycle missing") {
    auto v = good;
    v.pop_back();
    const auto e = decode(v).err;
    CHECK(e.code == errc::truncated);
    CHECK(e.needed == 2);
    CHECK(e.available == 1);
  }
  SUBCASE("middle cycle missing") {
    std::array<std::uint8_t, 96> data{};
    const auto s = p::to_beats<32>(p::default_profile, 1, 0, write64_control, data);
    REQUIRE(s.ok());
    auto v = to_vector(*s);
    v.erase(v.begin() + 1);
    const auto e = decode(v).err;
    CHECK(e.code == errc::truncated);
    CHECK(e.field == "sue.fifo.tx_cycle");
    CHECK(e.value == 1);
    CHECK(e.item == 2);
  }
  SUBCASE("first cycle missing") {
    auto v = good;
    v.erase(v.begin());
    const auto e = decode(v).err;
    CHECK(e.code == errc::truncated);
    CHECK(e.value == 0);
  }
  SUBCASE("out of order") {
    auto v = good;
    std::swap(v[0], v[1]);
    const auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.what == "cycles out of order or repeated");
    CHECK(e.item == 1);
  }
  SUBCASE("repeated cycle") {
    auto v = good;
    v[1].cycle = 0;
    const auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.what == "cycles out of order or repeated");
    CHECK(e.item == 2);
  }
  SUBCASE("more cycles than the length byte needs") {
    auto v = good;
    v.push_back(v[1]);
    v[2].cycle = 2;
    const auto e = decode(v).err;
    CHECK(e.code == errc::bad_length);
    CHECK(e.needed == 2);
    CHECK(e.available == 3);
  }
  SUBCASE("length byte asks for more cycles than sent") {
    auto v = good;
    v[0].control[1] = 99;  // 100 bytes: 4 cycles of 32
    const auto e = decode(v).err;
    CHECK(e.code == errc::truncated);
    CHECK(e.needed == 4);
    CHECK(e.available == 2);
  }
  SUBCASE("length byte asks for fewer cycles than sent") {
    auto v = good;
    v[0].control[1] = 9;  // 10 bytes: 1 cycle
    CHECK(decode(v).err.code == errc::bad_length);
  }
  SUBCASE("tx_err: uncorrectable ECC rejects the command") {
    auto v = good;
    v[1].err = 1;
    const auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.field == "sue.fifo.tx_err");
    CHECK(e.item == 2);
    CHECK(std::string_view(e.what).find("ECC") != std::string_view::npos);
    CHECK(std::string_view(e.what).find("rejected") != std::string_view::npos);
  }
  SUBCASE("rx beats have no error signal") {
    std::array<std::uint8_t, 64> data{};
    const auto s =
        p::to_beats<32, p::direction::rx>(p::default_profile, 1, 0, write64_control, data);
    REQUIRE(s.ok());
    auto v = to_vector(*s);
    v[0].err = 1;
    const auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.field == "sue.fifo.rx_rsvd");
  }
  SUBCASE("signal wider than its width") {
    auto v = good;
    v[1].cycle = 16;
    auto e = decode(v).err;
    CHECK(e.code == errc::value_too_big);
    CHECK(e.field == "sue.fifo.tx_cycle");
    CHECK(e.item == 2);
    v = good;
    v[0].valid = 4;
    CHECK(decode(v).err.field == "sue.fifo.tx_valid");
    CHECK(decode(v).err.code == errc::value_too_big);
    v = good;
    v[0].vc = 4;
    CHECK(decode(v).err.field == "sue.fifo.tx_vc");
    v = good;
    v[0].xpuid = 1024;
    CHECK(decode(v).err.field == "sue.fifo.xpuid");
    CHECK(decode(v).err.code == errc::value_too_big);
    v = good;
    v[0].err = 2;
    CHECK(decode(v).err.code == errc::value_too_big);
    v = good;
    v[0].pad = 1;
    CHECK(decode(v).err.field == "sue.fifo.pad");
  }
  SUBCASE("valid none and valid 3") {
    auto v = good;
    v[0].valid = 0;
    v[1].valid = 0;
    auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.value == 0);
    v[0].valid = 3;
    v[1].valid = 3;
    e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.value == 3);
  }
  SUBCASE("valid, vc or xpuid changing mid-command") {
    auto v = good;
    v[1].valid = 1;
    CHECK(decode(v).err.field == "sue.fifo.tx_valid");
    v = good;
    v[1].vc = 2;
    CHECK(decode(v).err.field == "sue.fifo.tx_vc");
    v = good;
    v[1].xpuid = 0x154;
    CHECK(decode(v).err.field == "sue.fifo.xpuid");
    CHECK(decode(v).err.item == 2);
  }
  SUBCASE("valid disagrees with the type's data") {
    auto v = good;
    for (auto& b : v) b.valid = 1;
    auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.what == "valid says command only, but the type carries data");
    constexpr byte_array<4> barrier{0x12, 0x00, 0x00, 0x01};
    const auto s = p::to_beats<32>(p::default_profile, 1, 0, barrier, {});
    REQUIRE(s.ok());
    auto b = to_vector(*s);
    b[0].valid = 2;
    e = decode(b).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.what == "valid says command with data, but the type carries none");
  }
  SUBCASE("control not matching the profile") {
    auto v = good;
    v[0].control[0] = 0x7F;
    auto e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.field == "sue.cmd.type");
    v = good;
    v[0].control[12] = 1;  // WR_FULL's control is 12 bytes: the rest must be zero
    e = decode(v).err;
    CHECK(e.code == errc::bad_value);
    CHECK(e.field == "sue.fifo.tx_control");
    CHECK(e.value == 12);
  }
  SUBCASE("what a receiver ignores") {
    // tx_control is sampled on cycle 0 only; lanes past the data length carry nothing.
    std::array<std::uint8_t, 40> data{};
    const auto s = p::to_beats<32>(p::default_profile, 1, 0, write64_control, data);
    REQUIRE(s.ok());
    auto v = to_vector(*s);
    v[1].control.fill(0xAA);
    v[1].data[31] = 0xAA;
    const auto back = decode(v);
    REQUIRE(back.ok());
    CHECK(back->data_size == 40);
  }
}

TEST_CASE("signal interface: credit word golden values") {
  // vc(2) | cmd(1) | cmd+data(1) | credits - 1 (2), MSB first.
  // vc 2, both pools, 4 credits: 10 1 1 11 = 0x2F.
  const p::credit_word both{.vc = 2, .command = 1, .command_data = 1, .count = 3};
  CHECK(p::encode_credit(both).value == 0x2F);
  // vc 1, command only, 1 credit: 01 1 0 00 = 0x18.
  const p::credit_word cmd{.vc = 1, .command = 1, .command_data = 0, .count = 0};
  CHECK(p::encode_credit(cmd).value == 0x18);
  // vc 3, command+data only, 2 credits: 11 0 1 01 = 0x35.
  const p::credit_word dat{.vc = 3, .command = 0, .command_data = 1, .count = 1};
  CHECK(p::encode_credit(dat).value == 0x35);
  CHECK(p::encode_credit({}).value == 0x00);
  CHECK(p::encode_credit({}).ok());
  CHECK(*p::decode_credit(0x2F) == both);
  CHECK(*p::decode_credit(0x18) == cmd);
  CHECK(*p::decode_credit(0x35) == dat);
  CHECK(*p::decode_credit(0x00) == p::credit_word{});

  // Every 6-bit word either decodes and re-encodes to itself or is an idle word with bits set.
  for (unsigned word = 0; word < 64; ++word) {
    CAPTURE(word);
    const auto d = p::decode_credit(static_cast<std::uint8_t>(word));
    const bool flagged = (word & 0x0C) != 0;
    CHECK(d.ok() == (flagged || word == 0));
    if (d.ok()) CHECK(p::encode_credit(*d).value == word);
  }

  auto e = p::decode_credit(0x40).err;
  CHECK(e.code == errc::value_too_big);
  e = p::decode_credit(0x01).err;  // a count with no pool
  CHECK(e.code == errc::bad_value);
  CHECK(p::decode_credit(0x30).err.code == errc::bad_value);  // a VC with no pool
  CHECK(p::encode_credit({.vc = 4, .command = 1}).err.code == errc::value_too_big);
  CHECK(p::encode_credit({.command = 1, .count = 4}).err.code == errc::value_too_big);
  CHECK(p::encode_credit({.command = 2}).err.code == errc::value_too_big);
  CHECK(p::encode_credit({.vc = 1}).err.code == errc::bad_value);
  CHECK(p::encode_credit({.pad = 1, .command = 1}).err.code == errc::bad_value);
}

TEST_CASE("signal interface: credit counters per VC and pool") {
  p::fifo_credits s{};
  for (std::uint8_t vc = 0; vc < 4; ++vc)
    for (const auto pool : {p::credit_pool::command, p::credit_pool::command_data}) {
      const auto e = p::consume(s, vc, pool).err;
      CHECK(e.code == errc::no_space);
      CHECK(e.value == vc);
    }

  // 0x2F: vc 2, four credits in each pool.
  const auto r = p::return_credits(s, 0x2F);
  REQUIRE(r.ok());
  s = *r;
  CHECK(s.available(2, p::credit_pool::command) == 4);
  CHECK(s.available(2, p::credit_pool::command_data) == 4);
  for (std::uint8_t vc : {0, 1, 3}) {
    CHECK(s.available(vc, p::credit_pool::command) == 0);
    CHECK(s.available(vc, p::credit_pool::command_data) == 0);
  }

  // Exhaust vc 2's command pool; its data pool and the other VCs do not move.
  for (int i = 0; i < 4; ++i) {
    const auto c = p::consume(s, 2, p::credit_pool::command);
    REQUIRE(c.ok());
    s = *c;
  }
  CHECK(s.available(2, p::credit_pool::command) == 0);
  CHECK(s.available(2, p::credit_pool::command_data) == 4);
  const auto none = p::consume(s, 2, p::credit_pool::command);
  CHECK(none.err.code == errc::no_space);
  CHECK(none.err.field == "sue.fifo.credit.cmd");
  CHECK(p::consume(s, 1, p::credit_pool::command_data).err.code == errc::no_space);
  CHECK(p::consume(s, 4, p::credit_pool::command).err.code == errc::value_too_big);

  // 0x18 gives vc 1 one command credit; the idle word changes nothing.
  s = *p::return_credits(s, 0x18);
  CHECK(s.available(1, p::credit_pool::command) == 1);
  CHECK(s.available(1, p::credit_pool::command_data) == 0);
  CHECK(*p::return_credits(s, 0x00) == s);
  CHECK(p::return_credits(s, 0x40).err.code == errc::value_too_big);
  CHECK(p::return_credits(s, 0x03).err.code == errc::bad_value);

  // A cycle run takes one credit, from the pool its valid names, however many cycles it has.
  p::fifo_credits t{};
  t = *p::return_credits(t, 0x17);  // 01 0 1 11: vc 1, data pool, 4
  std::array<std::uint8_t, 256> data{};
  const auto wr = p::to_beats<16>(p::default_profile, 5, 1, write64_control, data);
  REQUIRE(wr.ok());
  REQUIRE(wr->count == 16);
  const auto after = p::consume(t, *wr);
  REQUIRE(after.ok());
  CHECK(after->available(1, p::credit_pool::command_data) == 3);
  constexpr byte_array<4> barrier{0x12, 0x00, 0x00, 0x01};
  const auto bar = p::to_beats<16>(p::default_profile, 5, 1, barrier, {});
  REQUIRE(bar.ok());
  CHECK(p::consume(*after, *bar).err.code == errc::no_space);  // command pool of vc 1 is empty
  auto idle = to_vector(*bar);
  idle[0].valid = 0;
  CHECK(p::consume(*after, std::span<const p::tx_beat<16>>(idle)).err.code == errc::bad_value);

  // Counters stop at 65535 rather than wrap.
  p::fifo_credits full{};
  full.command[0] = 65534;
  CHECK(p::return_credits(full, 0x08).ok());                             // 00 1 0 00: +1
  CHECK(p::return_credits(full, 0x09).err.code == errc::value_too_big);  // +2
}
