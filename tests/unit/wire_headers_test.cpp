// Fixed-size wire headers: golden bytes written by hand from the seed tables and
// decisions.md, views, encode/decode errors, reserved and fixed fields, random round trips and
// the field-table tiling check.
//
// Every golden byte array below was computed by hand (the bit arithmetic is in the comment
// next to it); none was produced by the code under test. Bits are numbered as the specs draw
// them: bit 0 is the most significant bit of the first byte.
#include <scaleup/wire/afh_gen1.hpp>
#include <scaleup/wire/afh_gen2.hpp>
#include <scaleup/wire/bits.hpp>
#include <scaleup/wire/error.hpp>
#include <scaleup/wire/ethernet.hpp>
#include <scaleup/wire/field.hpp>
#include <scaleup/wire/ip.hpp>
#include <scaleup/wire/pdu.hpp>
#include <scaleup/wire/reliability_header.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support.hpp"

namespace {

namespace w = scaleup::wire;
using w::errc;
using w::layout;
using w::severity;

using scaleup::test::byte_array;
using scaleup::test::hex;

template <class T>
using wire_bytes = byte_array<layout<T>::size>;

// A copy of v with one member changed.
template <class T, class M, class V>
T with(T v, M T::*member, V x) {
  v.*member = static_cast<M>(x);
  return v;
}

// Reference bit writer, one bit at a time and independent of scaleup's put_bits: bit 0 is the
// most significant bit of p[0].
void ref_put(std::uint8_t* p, std::size_t bit, unsigned width, std::uint64_t v) {
  for (unsigned i = 0; i < width; ++i) {
    const std::size_t b = bit + i;
    const bool one = ((v >> (width - 1 - i)) & 1u) != 0;
    const auto mask = static_cast<std::uint8_t>(0x80u >> (b % 8));
    if (one)
      p[b / 8] = static_cast<std::uint8_t>(p[b / 8] | mask);
    else
      p[b / 8] = static_cast<std::uint8_t>(p[b / 8] & ~mask);
  }
}

constexpr std::uint64_t mask_of(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

std::vector<w::error> warnings_of(const auto& v, w::error* hard = nullptr) {
  std::vector<w::error> out;
  const w::error e = w::validate(v, 0, [&](const w::error& x) { out.push_back(x); });
  if (hard) *hard = e;
  return out;
}

// ---- generic checks ----------------------------------------------------------------------

// encode gives exactly `expected`, writes nothing past the header, decode and the view give
// back `v`, and the value has nothing to warn about.
template <class T>
void check_golden(const T& v, const wire_bytes<T>& expected) {
  constexpr std::size_t n = layout<T>::size;
  CAPTURE(layout<T>::name);

  byte_array<n + 3> out{};
  out.fill(0xEE);
  const auto r = w::encode(v, out);
  REQUIRE(r.ok());
  CHECK(*r == n);
  CHECK(hex(w::bytes(out).first(n)) == hex(expected));
  for (std::size_t i = n; i < out.size(); ++i) CHECK(out[i] == 0xEE);

  const auto tb = w::to_bytes(v);
  REQUIRE(tb.ok());
  CHECK(hex(*tb) == hex(expected));

  const auto d = w::decode<T>(expected);
  REQUIRE(d.ok());
  CHECK(*d == v);

  const auto vw = w::view<T>::make(expected);
  REQUIRE(vw.ok());
  CHECK(vw->value() == v);
  CHECK(vw->raw().data() == expected.data());
  CHECK(vw->raw().size() == n);

  w::error hard{};
  CHECK(warnings_of(v, &hard).empty());
  CHECK_FALSE(hard);
}

// A buffer one byte short: view::make and decode both say truncated, with where and how much.
template <class T>
void check_truncated(const wire_bytes<T>& full) {
  constexpr std::size_t n = layout<T>::size;
  CAPTURE(layout<T>::name);
  const w::bytes short_by_one = w::bytes(full).first(n - 1);

  const auto vw = w::view<T>::make(short_by_one);
  CHECK_FALSE(vw.ok());
  CHECK(vw.err.code == errc::truncated);
  CHECK(vw.err.layer == layout<T>::name);
  CHECK(vw.err.needed == n);
  CHECK(vw.err.available == n - 1);
  CHECK(vw.err.offset == 0);
  CHECK(vw.err.level == severity::error);

  // At an offset: the header starts there, and a failure is placed from the buffer's start.
  std::vector<std::uint8_t> prefixed(34, 0xEE);
  prefixed.insert(prefixed.end(), short_by_one.begin(), short_by_one.end());
  const auto at = w::view<T>::make(prefixed, 34);
  CHECK(at.err.code == errc::truncated);
  CHECK(at.err.offset == 34);
  CHECK(at.err.needed == n);
  CHECK(at.err.available == n - 1);
  prefixed.push_back(full[n - 1]);
  const auto whole = w::view<T>::make(prefixed, 34);
  REQUIRE(whole.ok());
  CHECK(whole->raw().data() == prefixed.data() + 34);
  CHECK(hex(whole->raw()) == hex(full));
  // An offset at or past the end: nothing available, never a read.
  for (const std::size_t past : {prefixed.size(), prefixed.size() + 1, std::size_t{1} << 40}) {
    const auto none = w::view<T>::make(prefixed, past);
    CHECK(none.err.code == errc::truncated);
    CHECK(none.err.offset == static_cast<std::uint32_t>(past));
    CHECK(none.err.available == 0);
    CHECK(w::decode<T>(prefixed, past).err.code == errc::truncated);
  }

  const auto d = w::decode<T>(short_by_one);
  CHECK(d.err.code == errc::truncated);
  CHECK(d.err.layer == layout<T>::name);
  CHECK(d.err.needed == n);
  CHECK(d.err.available == n - 1);

  const auto empty = w::view<T>::make(w::bytes{});
  CHECK(empty.err.code == errc::truncated);
  CHECK(empty.err.available == 0);

  CHECK(w::view<T>::make(w::bytes(full)).ok());
}

// encode refuses `v` (one field over its width) with value_too_big naming the field, and
// writes nothing.
template <class T>
void check_too_big(const T& v, std::string_view field, std::uint64_t value,
                   std::uint32_t byte_offset) {
  constexpr std::size_t n = layout<T>::size;
  CAPTURE(field);
  byte_array<n> out{};
  out.fill(0xEE);
  const auto r = w::encode(v, out);
  CHECK_FALSE(r.ok());
  CHECK(r.err.code == errc::value_too_big);
  CHECK(r.err.layer == layout<T>::name);
  CHECK(r.err.field == field);
  CHECK(r.err.value == value);
  CHECK(r.err.offset == byte_offset);
  for (const std::uint8_t b : out) CHECK(b == 0xEE);
  CHECK(w::to_bytes(v).err.code == errc::value_too_big);
}

// Decoding bytes whose fixed field is wrong: bad_value naming the field, error severity. The
// decoded value is still handed back (lax decoding).
template <class T>
void check_fixed_decode(const wire_bytes<T>& b, std::string_view field, std::uint64_t value,
                        std::uint32_t byte_offset) {
  CAPTURE(field);
  const auto d = w::decode<T>(b);
  CHECK_FALSE(d.ok());
  CHECK(d.err.code == errc::bad_value);
  CHECK(d.err.layer == layout<T>::name);
  CHECK(d.err.field == field);
  CHECK(d.err.value == value);
  CHECK(d.err.offset == byte_offset);
  CHECK(d.err.level == severity::error);
  // At an offset the header is decoded there, and the error is placed from the start of the
  // caller's buffer.
  std::vector<std::uint8_t> prefixed(100, 0x00);
  prefixed.insert(prefixed.end(), b.begin(), b.end());
  const auto at = w::decode<T>(prefixed, 100);
  CHECK(at.err.code == errc::bad_value);
  CHECK(at.err.field == field);
  CHECK(at.err.offset == 100 + byte_offset);
  CHECK(at.value == d.value);
  // validate() says the same about the decoded value.
  w::error hard{};
  (void)warnings_of(d.value, &hard);
  CHECK(hard.code == errc::bad_value);
  CHECK(hard.field == field);
}

// Encoding a value whose fixed field is wrong (but fits its width): bad_value, nothing written.
template <class T>
void check_fixed_encode(const T& v, std::string_view field, std::uint64_t value) {
  constexpr std::size_t n = layout<T>::size;
  CAPTURE(field);
  byte_array<n> out{};
  out.fill(0xEE);
  const auto r = w::encode(v, out);
  CHECK_FALSE(r.ok());
  CHECK(r.err.code == errc::bad_value);
  CHECK(r.err.field == field);
  CHECK(r.err.value == value);
  for (const std::uint8_t b : out) CHECK(b == 0xEE);
}

struct expected_warning {
  std::string_view field;
  std::uint64_t value;
  std::uint32_t offset;
};

// Reserved fields: decode accepts and keeps the value, re-encoding gives the same bytes, and
// validate() warns about each named field.
template <class T>
void check_reserved(const wire_bytes<T>& b, const T& expected, std::vector<expected_warning> want) {
  CAPTURE(layout<T>::name);
  const auto d = w::decode<T>(b);
  REQUIRE(d.ok());
  CHECK(*d == expected);
  const auto again = w::to_bytes(*d);
  REQUIRE(again.ok());
  CHECK(hex(*again) == hex(b));

  w::error hard{};
  const auto got = warnings_of(*d, &hard);
  CHECK_FALSE(hard);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(want[i].field);
    CHECK(got[i].code == errc::reserved_nonzero);
    CHECK(got[i].level == severity::warning);
    CHECK(got[i].layer == layout<T>::name);
    CHECK(got[i].field == want[i].field);
    CHECK(got[i].value == want[i].value);
    CHECK(got[i].offset == want[i].offset);
  }
}

template <class T>
void check_no_space(const T& v) {
  constexpr std::size_t n = layout<T>::size;
  CAPTURE(layout<T>::name);
  byte_array<n> out{};
  out.fill(0xEE);
  const auto r = w::encode(v, w::mutable_bytes(out).first(n - 1));
  CHECK_FALSE(r.ok());
  CHECK(r.err.code == errc::no_space);
  CHECK(r.err.layer == layout<T>::name);
  CHECK(r.err.needed == n);
  CHECK(r.err.available == n - 1);
  for (const std::uint8_t b : out) CHECK(b == 0xEE);
  CHECK(w::encode(v, w::mutable_bytes{}).err.code == errc::no_space);
}

// 10000 random values per header. Each field gets a random value masked to its width (a
// quarter of the time 0, a quarter its maximum), fixed fields their fixed value; the expected
// bytes come from the reference bit writer above. Then random bytes with the fixed fields
// patched in: decode -> encode must give the same bytes.
template <class T>
void check_random_round_trips(std::uint64_t seed) {
  CAPTURE(layout<T>::name);
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int iter = 0; iter < 10000 && failures == 0; ++iter) {
    T v{};
    wire_bytes<T> ref{};
    std::apply(
        [&](const auto&... f) {
          (([&] {
             using M = std::remove_cvref_t<decltype(v.*(f.member))>;
             if constexpr (w::is_byte_array_v<M>) {
               auto& a = v.*(f.member);
               for (std::size_t k = 0; k < a.size(); ++k) {
                 a[k] = static_cast<std::uint8_t>(rng());
                 ref[f.bit / 8 + k] = a[k];
               }
             } else {
               std::uint64_t x = 0;
               if (f.check == w::rule::fixed) {
                 x = f.expect;
               } else {
                 switch (rng() % 4) {
                   case 0:
                     x = 0;
                     break;
                   case 1:
                     x = mask_of(f.width);
                     break;
                   default:
                     x = rng() & mask_of(f.width);
                     break;
                 }
               }
               v.*(f.member) = static_cast<M>(x);
               ref_put(ref.data(), f.bit, f.width, x);
             }
           }()),
           ...);
        },
        layout<T>::fields);

    const auto enc = w::to_bytes(v);
    const auto dec = w::decode<T>(ref);
    const bool ok = enc.ok() && *enc == ref && dec.ok() && *dec == v;
    if (!ok) {
      ++failures;
      CAPTURE(iter);
      CAPTURE(hex(ref));
      CHECK(enc.ok());
      CHECK(hex(enc.value) == hex(ref));
      CHECK(dec.ok());
      CHECK(dec.value == v);
    }

    wire_bytes<T> raw{};
    for (auto& b : raw) b = static_cast<std::uint8_t>(rng());
    std::apply(
        [&](const auto&... f) {
          ((f.check == w::rule::fixed ? ref_put(raw.data(), f.bit, f.width, f.expect) : void()),
           ...);
        },
        layout<T>::fields);
    const auto d2 = w::decode<T>(raw);
    const auto e2 = w::to_bytes(d2.value);
    if (!(d2.ok() && e2.ok() && e2.value == raw)) {
      ++failures;
      CAPTURE(iter);
      CAPTURE(hex(raw));
      CHECK(d2.ok());
      CHECK(e2.ok());
      CHECK(hex(e2.value) == hex(raw));
    }
  }
  CHECK(failures == 0);
}

// ---- golden values (hand-computed bytes) -------------------------------------------------

using rh_t = w::reliability_header;

// rh_golden (support.hpp, shared with wire_pdu_test.cpp):
// Word 0: ver=0 op=1 rsv=0 xpuid=0x3FF -> 00 01 00 11 1111 1111 = 0001 0011 1111 1111 = 13 FF
//         npsn=0x1234 -> 12 34
// Word 1: vc=3 rsvd=0 partition=0x3FF -> 11 0000 11 1111 1111 = 1100 0011 1111 1111 = C3 FF
//         apsn=0xBEEF -> BE EF
using scaleup::test::rh_golden;
constexpr wire_bytes<rh_t> rh_golden_bytes{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};

// Alternating bits, so that a field shifted by one bit cannot go unnoticed:
// ver=3 op=2 rsv=0 xpuid=0x155 (01 0101 0101) -> 11 10 00 01 | 0101 0101 = E1 55; npsn FE DC
// vc=1 rsvd=0 partition=0x2AA (10 1010 1010) -> 01 0000 10 | 1010 1010 = 42 AA; apsn 00 01
constexpr rh_t rh_alt{.ver = 3,
                      .op = 2,
                      .rsv = 0,
                      .xpuid = 0x155,
                      .npsn = 0xFEDC,
                      .vc = 1,
                      .rsvd = 0,
                      .partition = 0x2AA,
                      .apsn = 0x0001};
constexpr wire_bytes<rh_t> rh_alt_bytes{0xE1, 0x55, 0xFE, 0xDC, 0x42, 0xAA, 0x00, 0x01};

static_assert(w::to_bytes(rh_golden).value == rh_golden_bytes);
static_assert(w::decode<rh_t>(rh_golden_bytes).ok());
static_assert(w::decode<rh_t>(rh_golden_bytes).value == rh_golden);
static_assert(w::to_bytes(rh_alt).value == rh_alt_bytes);
static_assert(w::decode<rh_t>(rh_alt_bytes).value == rh_alt);
static_assert(w::view<rh_t>::make(rh_golden_bytes)->get<&rh_t::xpuid>() == 0x3FF);
static_assert(w::view<rh_t>::make(rh_golden_bytes)->get<&rh_t::partition>() == 0x3FF);

using eth_t = w::ethernet_header;
// dst 42:53:55:45:03:FF, src FE:DC:BA:98:76:54, type 0x88B5: the bytes in order.
constexpr eth_t eth_golden{.dst = 0x4253'5545'03FFull, .src = 0xFEDC'BA98'7654ull, .type = 0x88B5};
constexpr wire_bytes<eth_t> eth_golden_bytes{0x42, 0x53, 0x55, 0x45, 0x03, 0xFF, 0xFE,
                                             0xDC, 0xBA, 0x98, 0x76, 0x54, 0x88, 0xB5};
static_assert(w::to_bytes(eth_golden).value == eth_golden_bytes);
static_assert(w::decode<eth_t>(eth_golden_bytes).value == eth_golden);

using vlan_t = w::vlan_tag;
// pcp=7 dei=1 vid=0xABC -> 111 1 1010 1011 1100 = 1111 1010 1011 1100 = FA BC; type 08 00
constexpr vlan_t vlan_golden{.pcp = 7, .dei = 1, .vid = 0xABC, .type = 0x0800};
constexpr wire_bytes<vlan_t> vlan_golden_bytes{0xFA, 0xBC, 0x08, 0x00};
// pcp=5 dei=0 vid=0x001 -> 101 0 0000 0000 0001 = A0 01; type 86 DD
constexpr vlan_t vlan_alt{.pcp = 5, .dei = 0, .vid = 0x001, .type = 0x86DD};
constexpr wire_bytes<vlan_t> vlan_alt_bytes{0xA0, 0x01, 0x86, 0xDD};
static_assert(w::to_bytes(vlan_golden).value == vlan_golden_bytes);
static_assert(w::decode<vlan_t>(vlan_golden_bytes).value == vlan_golden);
static_assert(w::to_bytes(vlan_alt).value == vlan_alt_bytes);

using ip4_t = w::ipv4_header;
// A real header (UDP, 192.168.0.1 -> 192.168.0.199, DF, checksum b861):
// 45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00 01 c0 a8 00 c7
// 0x45: version 4, IHL 5. 0x00: DSCP 0, ECN 0. 0x40 0x00: 0 1 0 | 0 0000 0000 0000: rb 0 df 1
// mf 0 offset 0.
constexpr ip4_t ip4_real{.version = 4,
                         .ihl = 5,
                         .dscp = 0,
                         .ecn = 0,
                         .total_length = 0x0073,
                         .id = 0x0000,
                         .flag_rb = 0,
                         .flag_df = 1,
                         .flag_mf = 0,
                         .frag_offset = 0,
                         .ttl = 0x40,
                         .protocol = 0x11,
                         .checksum = 0xB861,
                         .src = 0xC0A80001,
                         .dst = 0xC0A800C7};
constexpr wire_bytes<ip4_t> ip4_real_bytes{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40,
                                           0x00, 0x40, 0x11, 0xB8, 0x61, 0xC0, 0xA8,
                                           0x00, 0x01, 0xC0, 0xA8, 0x00, 0xC7};
// Distinctive values:
// version 4, IHL 15 -> 0100 1111 = 4F
// DSCP 0x2E (101110), ECN 3 (11) -> 1011 1011 = BB
// total length 05 DC, id AB CD
// rb 0 df 0 mf 1 offset 0x1FFF (1 1111 1111 1111) -> 001 11111 | 1111 1111 = 3F FF
// ttl FF, protocol FD, checksum 12 34, src 0A 00 00 01, dst FF FF FF FF
constexpr ip4_t ip4_golden{.version = 4,
                           .ihl = 15,
                           .dscp = 0x2E,
                           .ecn = 3,
                           .total_length = 0x05DC,
                           .id = 0xABCD,
                           .flag_rb = 0,
                           .flag_df = 0,
                           .flag_mf = 1,
                           .frag_offset = 0x1FFF,
                           .ttl = 0xFF,
                           .protocol = 0xFD,
                           .checksum = 0x1234,
                           .src = 0x0A000001,
                           .dst = 0xFFFFFFFF};
constexpr wire_bytes<ip4_t> ip4_golden_bytes{0x4F, 0xBB, 0x05, 0xDC, 0xAB, 0xCD, 0x3F,
                                             0xFF, 0xFF, 0xFD, 0x12, 0x34, 0x0A, 0x00,
                                             0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF};
static_assert(w::to_bytes(ip4_real).value == ip4_real_bytes);
static_assert(w::decode<ip4_t>(ip4_real_bytes).value == ip4_real);
static_assert(w::to_bytes(ip4_golden).value == ip4_golden_bytes);
static_assert(w::decode<ip4_t>(ip4_golden_bytes).value == ip4_golden);

using ip6_t = w::ipv6_header;
// version 6, tclass 0xB8 (1011 1000), flow 0xFFFFF:
//   0110 1011 | 1000 1111 | 1111 1111 | 1111 1111 = 6B 8F FF FF
// payload length 01 23, next header 11, hop limit FF
// src 2001:db8::1, dst fe80::211:22ff:fe33:4455
constexpr ip6_t ip6_golden{
    .version = 6,
    .tclass = 0xB8,
    .flow = 0xFFFFF,
    .payload_length = 0x0123,
    .next_header = 0x11,
    .hop_limit = 0xFF,
    .src = {0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01},
    .dst = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xFF, 0xFE, 0x33, 0x44, 0x55}};
constexpr wire_bytes<ip6_t> ip6_golden_bytes{
    0x6B, 0x8F, 0xFF, 0xFF, 0x01, 0x23, 0x11, 0xFF,                                      //
    0x20, 0x01, 0x0D, 0xB8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
    0x00, 0x01,                                                                          //
    0xFE, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x11, 0x22, 0xFF, 0xFE, 0x33,  //
    0x44, 0x55};
// tclass 0x0F, flow 0x12345: 0110 0000 | 1111 0001 | 0010 0011 | 0100 0101 = 60 F1 23 45
constexpr ip6_t ip6_alt{.version = 6,
                        .tclass = 0x0F,
                        .flow = 0x12345,
                        .payload_length = 0,
                        .next_header = 0,
                        .hop_limit = 0,
                        .src = {},
                        .dst = {}};
constexpr wire_bytes<ip6_t> ip6_alt_bytes{0x60, 0xF1, 0x23, 0x45};  // the rest zero
static_assert(w::to_bytes(ip6_golden).value == ip6_golden_bytes);
static_assert(w::decode<ip6_t>(ip6_golden_bytes).value == ip6_golden);
static_assert(w::to_bytes(ip6_alt).value == ip6_alt_bytes);

using udp_t = w::udp_header;
// src 4793 = 0x12B9, dst FF FF, length 00 1C, checksum AB CD
constexpr udp_t udp_golden{
    .src_port = 4793, .dst_port = 0xFFFF, .length = 0x001C, .checksum = 0xABCD};
constexpr wire_bytes<udp_t> udp_golden_bytes{0x12, 0xB9, 0xFF, 0xFF, 0x00, 0x1C, 0xAB, 0xCD};
static_assert(w::to_bytes(udp_golden).value == udp_golden_bytes);
static_assert(w::decode<udp_t>(udp_golden_bytes).value == udp_golden);

using afh1_t = w::afh1_addresses;
// 42 53 55 45 | FF FF | 42 53 55 45 | 12 34
constexpr afh1_t afh1_golden{
    .da_prefix = 0x42535545, .dst_xpu = 0xFFFF, .sa_prefix = 0x42535545, .src_xpu = 0x1234};
constexpr wire_bytes<afh1_t> afh1_golden_bytes{0x42, 0x53, 0x55, 0x45, 0xFF, 0xFF,
                                               0x42, 0x53, 0x55, 0x45, 0x12, 0x34};
static_assert(w::to_bytes(afh1_golden).value == afh1_golden_bytes);
static_assert(w::decode<afh1_t>(afh1_golden_bytes).value == afh1_golden);

using shim_t = w::afh1_shim;
// version 0 (4) | tc 0xFF (8) | hop 0x3F (8) | next 0xFD (8) | length 0x1234 (16) |
// entropy 0xFFFFF (20), as nibbles: 0 | F F | 3 F | F D | 1 2 3 4 | F F F F F
//   -> 0F F3 FF D1 23 4F FF FF; src DE AD BE EF; dst 01 02 03 04
constexpr shim_t shim_golden{.version = 0,
                             .tc = 0xFF,
                             .hop_limit = 0x3F,
                             .next_header = 0xFD,
                             .length = 0x1234,
                             .entropy = 0xFFFFF,
                             .src_xpu = 0xDEADBEEF,
                             .dst_xpu = 0x01020304};
constexpr wire_bytes<shim_t> shim_golden_bytes{0x0F, 0xF3, 0xFF, 0xD1, 0x23, 0x4F, 0xFF, 0xFF,
                                               0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04};
// tc A5, hop 01, next 11, length 0040, entropy 12345:
//   nibbles 0 | A 5 | 0 1 | 1 1 | 0 0 4 0 | 1 2 3 4 5 -> 0A 50 11 10 04 01 23 45
constexpr shim_t shim_alt{.version = 0,
                          .tc = 0xA5,
                          .hop_limit = 0x01,
                          .next_header = 0x11,
                          .length = 0x0040,
                          .entropy = 0x12345,
                          .src_xpu = 0,
                          .dst_xpu = 0};
constexpr wire_bytes<shim_t> shim_alt_bytes{0x0A, 0x50, 0x11, 0x10, 0x04, 0x01, 0x23, 0x45};
static_assert(w::to_bytes(shim_golden).value == shim_golden_bytes);
static_assert(w::decode<shim_t>(shim_golden_bytes).value == shim_golden);
static_assert(w::to_bytes(shim_alt).value == shim_alt_bytes);

using afh2_t = w::afh2_normal;
// octet 0: rsv 00 W 0 V 0 Z 0 Y 0 X 1 M 1 -> 0000 0011 = 03; hop count 07
// dst 12 34 56 78
// octet 6: tc 11111 spare 0 SA-U/L 1 SA-I/G 0 -> 1111 1010 = FA; entropy A5
// src CA FE F0 0D
constexpr afh2_t afh2_golden{.rsv = 0,
                             .w = 0,
                             .v = 0,
                             .z = 0,
                             .y = 0,
                             .x = 1,
                             .m = 1,
                             .hop_count = 0x07,
                             .dst_xpu = 0x12345678,
                             .tc = 0x1F,
                             .spare = 0,
                             .sa_ul = 1,
                             .sa_ig = 0,
                             .entropy = 0xA5,
                             .src_xpu = 0xCAFEF00D};
constexpr wire_bytes<afh2_t> afh2_golden_bytes{0x03, 0x07, 0x12, 0x34, 0x56, 0x78,
                                               0xFA, 0xA5, 0xCA, 0xFE, 0xF0, 0x0D};
// M 0, tc 0x0A (01010): octet 0 = 0000 0010 = 02; octet 6 = 01010 0 1 0 = 0101 0010 = 52
constexpr afh2_t afh2_alt{.rsv = 0,
                          .w = 0,
                          .v = 0,
                          .z = 0,
                          .y = 0,
                          .x = 1,
                          .m = 0,
                          .hop_count = 0xFF,
                          .dst_xpu = 0xFFFFFFFF,
                          .tc = 0x0A,
                          .spare = 0,
                          .sa_ul = 1,
                          .sa_ig = 0,
                          .entropy = 0x00,
                          .src_xpu = 0x00000001};
constexpr wire_bytes<afh2_t> afh2_alt_bytes{0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                            0x52, 0x00, 0x00, 0x00, 0x00, 0x01};
static_assert(w::to_bytes(afh2_golden).value == afh2_golden_bytes);
static_assert(w::decode<afh2_t>(afh2_golden_bytes).value == afh2_golden);
static_assert(w::to_bytes(afh2_alt).value == afh2_alt_bytes);

using afh2c_t = w::afh2_compressed;
// octet 0: rsv 00 W 1 V 0 Z 0 Y 0 X 1 M 1 -> 0010 0011 = 23
// octet 1: tc 11111 spare 000 -> 1111 1000 = F8; src 12 34; dst FF FF
constexpr afh2c_t afh2c_golden{.rsv = 0,
                               .w = 1,
                               .v = 0,
                               .z = 0,
                               .y = 0,
                               .x = 1,
                               .m = 1,
                               .tc = 0x1F,
                               .spare = 0,
                               .src_xpu = 0x1234,
                               .dst_xpu = 0xFFFF};
constexpr wire_bytes<afh2c_t> afh2c_golden_bytes{0x23, 0xF8, 0x12, 0x34, 0xFF, 0xFF};
// M 0 -> 0010 0010 = 22; tc 5 (00101) spare 000 -> 0010 1000 = 28; src 00 01; dst 80 00
constexpr afh2c_t afh2c_alt{.rsv = 0,
                            .w = 1,
                            .v = 0,
                            .z = 0,
                            .y = 0,
                            .x = 1,
                            .m = 0,
                            .tc = 5,
                            .spare = 0,
                            .src_xpu = 0x0001,
                            .dst_xpu = 0x8000};
constexpr wire_bytes<afh2c_t> afh2c_alt_bytes{0x22, 0x28, 0x00, 0x01, 0x80, 0x00};
static_assert(w::to_bytes(afh2c_golden).value == afh2c_golden_bytes);
static_assert(w::decode<afh2c_t>(afh2c_golden_bytes).value == afh2c_golden);
static_assert(w::to_bytes(afh2c_alt).value == afh2c_alt_bytes);

using etype_t = w::afh2_ethertype;
constexpr etype_t etype_golden{.type = 0x88B5};
constexpr wire_bytes<etype_t> etype_golden_bytes{0x88, 0xB5};
static_assert(w::to_bytes(etype_golden).value == etype_golden_bytes);
static_assert(w::decode<etype_t>(etype_golden_bytes).value == etype_golden);

using rcrc_t = w::rcrc_trailer;
constexpr rcrc_t rcrc_golden{.value = 0xCBF43926};
constexpr wire_bytes<rcrc_t> rcrc_golden_bytes{0xCB, 0xF4, 0x39, 0x26};
static_assert(w::to_bytes(rcrc_golden).value == rcrc_golden_bytes);
static_assert(w::decode<rcrc_t>(rcrc_golden_bytes).value == rcrc_golden);

// ---- tiling ------------------------------------------------------------------------------

static_assert(w::tiles<rh_t>());
static_assert(w::tiles<eth_t>());
static_assert(w::tiles<vlan_t>());
static_assert(w::tiles<ip4_t>());
static_assert(w::tiles<ip6_t>());
static_assert(w::tiles<udp_t>());
static_assert(w::tiles<afh1_t>());
static_assert(w::tiles<shim_t>());
static_assert(w::tiles<afh2_t>());
static_assert(w::tiles<afh2c_t>());
static_assert(w::tiles<etype_t>());
static_assert(w::tiles<rcrc_t>());

// Deliberately broken tables, and one good one so the check is seen to pass too.
struct tile_good {
  std::uint8_t a = 0;
  std::uint16_t b = 0;
};
struct tile_gap {
  std::uint8_t a = 0;
  std::uint8_t b = 0;
};
struct tile_overlap {
  std::uint8_t a = 0;
  std::uint16_t b = 0;
};
struct tile_short {
  std::uint8_t a = 0;
};
struct tile_past_end {
  std::uint16_t a = 0;
};
struct tile_narrow_member {
  std::uint8_t a = 0;
  std::uint8_t b = 0;
};
struct tile_misaligned_array {
  std::uint8_t a = 0;
  std::array<std::uint8_t, 1> b{};
  std::uint8_t c = 0;
};

}  // namespace

namespace scaleup::wire {

template <>
struct layout<tile_good> {  // 4 + 12 = 16 bits
  using T = tile_good;
  [[maybe_unused]] static constexpr std::string_view name = "t.good";
  static constexpr std::size_t size = 2;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.good.a", .bit = 0, .width = 4}),
      member(&T::b, {.name = "b", .filter = "t.good.b", .bit = 4, .width = 12}),
  };
};

template <>
struct layout<tile_gap> {  // bits 4..7 belong to nobody
  using T = tile_gap;
  [[maybe_unused]] static constexpr std::string_view name = "t.gap";
  static constexpr std::size_t size = 2;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.gap.a", .bit = 0, .width = 4}),
      member(&T::b, {.name = "b", .filter = "t.gap.b", .bit = 8, .width = 8}),
  };
};

template <>
struct layout<tile_overlap> {  // bits 4..7 belong to both
  using T = tile_overlap;
  [[maybe_unused]] static constexpr std::string_view name = "t.overlap";
  static constexpr std::size_t size = 2;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.overlap.a", .bit = 0, .width = 8}),
      member(&T::b, {.name = "b", .filter = "t.overlap.b", .bit = 4, .width = 12}),
  };
};

template <>
struct layout<tile_short> {  // the second byte is not covered
  using T = tile_short;
  [[maybe_unused]] static constexpr std::string_view name = "t.short";
  static constexpr std::size_t size = 2;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.short.a", .bit = 0, .width = 8}),
  };
};

template <>
struct layout<tile_past_end> {  // 16 bits in a 1-byte header
  using T = tile_past_end;
  [[maybe_unused]] static constexpr std::string_view name = "t.past";
  static constexpr std::size_t size = 1;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.past.a", .bit = 0, .width = 16}),
  };
};

template <>
struct layout<tile_narrow_member> {  // a 12-bit field in a uint8_t
  using T = tile_narrow_member;
  [[maybe_unused]] static constexpr std::string_view name = "t.narrow";
  static constexpr std::size_t size = 2;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.narrow.a", .bit = 0, .width = 4}),
      member(&T::b, {.name = "b", .filter = "t.narrow.b", .bit = 4, .width = 12}),
  };
};

template <>
struct layout<tile_misaligned_array> {  // a byte array not on a byte boundary
  using T = tile_misaligned_array;
  [[maybe_unused]] static constexpr std::string_view name = "t.misaligned";
  static constexpr std::size_t size = 2;
  static constexpr auto fields = std::tuple{
      member(&T::a, {.name = "a", .filter = "t.misaligned.a", .bit = 0, .width = 4}),
      member(&T::b, {.name = "b", .filter = "t.misaligned.b", .bit = 4, .width = 8}),
      member(&T::c, {.name = "c", .filter = "t.misaligned.c", .bit = 12, .width = 4}),
  };
};

}  // namespace scaleup::wire

namespace {

static_assert(w::tiles<tile_good>());
static_assert(!w::tiles<tile_gap>());
static_assert(!w::tiles<tile_overlap>());
static_assert(!w::tiles<tile_short>());
static_assert(!w::tiles<tile_past_end>());
static_assert(!w::tiles<tile_narrow_member>());
static_assert(!w::tiles<tile_misaligned_array>());

TEST_CASE("tiles: every wire header tiles; broken tables are detected") {
  CHECK(w::tiles<rh_t>());
  CHECK(w::tiles<eth_t>());
  CHECK(w::tiles<vlan_t>());
  CHECK(w::tiles<ip4_t>());
  CHECK(w::tiles<ip6_t>());
  CHECK(w::tiles<udp_t>());
  CHECK(w::tiles<afh1_t>());
  CHECK(w::tiles<shim_t>());
  CHECK(w::tiles<afh2_t>());
  CHECK(w::tiles<afh2c_t>());
  CHECK(w::tiles<etype_t>());
  CHECK(w::tiles<rcrc_t>());

  CHECK(w::tiles<tile_good>());
  CHECK_FALSE(w::tiles<tile_gap>());
  CHECK_FALSE(w::tiles<tile_overlap>());
  CHECK_FALSE(w::tiles<tile_short>());
  CHECK_FALSE(w::tiles<tile_past_end>());
  CHECK_FALSE(w::tiles<tile_narrow_member>());
  CHECK_FALSE(w::tiles<tile_misaligned_array>());
}

// ---- bits.hpp ----------------------------------------------------------------------------

TEST_CASE("bits: get_bits and put_bits, big-endian bit numbering") {
  // 13 FF = 0001 0011 1111 1111: bits 6..15 are 11 1111 1111 = 0x3FF; bits 2..3 are 01.
  constexpr std::array<std::uint8_t, 2> rh_word{0x13, 0xFF};
  CHECK(w::get_bits(rh_word.data(), 6, 10) == 0x3FFu);
  CHECK(w::get_bits(rh_word.data(), 2, 2) == 1u);
  CHECK(w::get_bits(rh_word.data(), 0, 16) == 0x13FFu);
  static_assert(w::get_bits(rh_word.data(), 6, 10) == 0x3FF);

  // put_bits keeps the other bits of the bytes it touches.
  // FF FF FF, bits 6..15 := 0 -> 1111 1100 | 0000 0000 | 1111 1111 = FC 00 FF
  std::array<std::uint8_t, 3> ones{0xFF, 0xFF, 0xFF};
  w::put_bits(ones.data(), 6, 10, 0);
  CHECK(hex(ones) == "FC 00 FF");
  // 00 00 00, bits 4..15 := 0xABC -> 0000 1010 | 1011 1100 | 0 = 0A BC 00
  std::array<std::uint8_t, 3> zeros{};
  w::put_bits(zeros.data(), 4, 12, 0xABC);
  CHECK(hex(zeros) == "0A BC 00");
  // Only the low `width` bits of the value are written: bits 5..7 := 0b101 from 0xFD.
  // 00 -> 0000 0101 = 05
  std::array<std::uint8_t, 1> one{};
  w::put_bits(one.data(), 5, 3, 0xFD);
  CHECK(one[0] == 0x05u);
  // 64 bits across 9 bytes at offset 4.
  std::array<std::uint8_t, 9> wide{};
  w::put_bits(wide.data(), 4, 64, 0x0123456789ABCDEFull);
  CHECK(hex(wide) == "00 12 34 56 78 9A BC DE F0");
  CHECK(w::get_bits(wide.data(), 4, 64) == 0x0123456789ABCDEFull);

  // Random: against the reference writer, over random existing bytes.
  std::mt19937_64 rng(0xB175);
  int failures = 0;
  for (int iter = 0; iter < 10000 && failures == 0; ++iter) {
    std::array<std::uint8_t, 10> a{};
    for (auto& b : a) b = static_cast<std::uint8_t>(rng());
    auto ref = a;
    const unsigned width = 1 + static_cast<unsigned>(rng() % 64);
    const std::size_t bit = rng() % (a.size() * 8 - width + 1);
    const std::uint64_t v = rng() & mask_of(width);
    w::put_bits(a.data(), bit, width, v);
    ref_put(ref.data(), bit, width, v);
    if (a != ref || w::get_bits(a.data(), bit, width) != v) {
      ++failures;
      CAPTURE(bit);
      CAPTURE(width);
      CHECK(hex(a) == hex(ref));
      CHECK(w::get_bits(a.data(), bit, width) == v);
    }
  }
  CHECK(failures == 0);
}

// get_bits over a span loads its word from the field's first byte, from the buffer's last eight,
// or, for a field running past the end (or a buffer under eight bytes), puts it together from
// narrower loads, with zeros past the end. Every buffer size to 20, every offset and every
// width up to 64: the same value as the byte-at-a-time reader over the buffer followed by zeros.
TEST_CASE("bits: get_bits over a span reads every field the byte-at-a-time reader does") {
  std::array<std::uint8_t, 20 + 8> padded{};  // the buffer, then zeros for the reference
  std::size_t failures = 0;
  for (std::size_t size = 1; size <= 20; ++size) {
    padded.fill(0);
    for (std::size_t i = 0; i < size; ++i)
      padded[i] = static_cast<std::uint8_t>(0x9D * (i + 1) + size);
    // A copy exactly `size` long: a read past it is an over-read ASan reports.
    const std::vector<std::uint8_t> buf(padded.begin(),
                                        padded.begin() + static_cast<std::ptrdiff_t>(size));
    for (std::size_t bit = 0; bit < size * 8; ++bit)
      for (unsigned width = 1; width <= 64 && (bit % 8) + width <= 64; ++width) {
        const std::uint64_t want = w::get_bits(padded.data(), bit, width);
        if (w::get_bits(std::span<const std::uint8_t>(buf), bit, width) != want) {
          if (++failures <= 5) {
            CAPTURE(size);
            CAPTURE(bit);
            CAPTURE(width);
            CHECK(w::get_bits(std::span<const std::uint8_t>(buf), bit, width) == want);
          }
        }
      }
  }
  CHECK(failures == 0);
}

// copy_short takes a different set of moves below 2, 4, 8 and 16 bytes and beyond (overlapping
// pieces): every length to 300, from and to several alignments in a 16-byte line, copies exactly
// the n bytes and writes nothing either side; the same in a constant expression.
TEST_CASE("bits: copy_short copies exactly n bytes at every length and alignment") {
  std::size_t failures = 0;
  for (std::size_t n = 0; n <= 300; ++n)
    for (std::size_t from = 0; from < 16; from += 5)
      for (std::size_t to = 0; to < 16; to += 3) {
        const auto src = scaleup::test::ramp(n + 32, 1, 7);
        std::vector<std::uint8_t> dst(n + 32, 0xEE);
        w::copy_short(dst.data() + to, src.data() + from, n);
        bool ok = true;
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= to && i < to + n;
          ok = ok && dst[i] == (inside ? src[from + i - to] : 0xEE);
        }
        if (!ok) {
          ++failures;
          CAPTURE(n);
          CAPTURE(from);
          CAPTURE(to);
          CHECK(ok);
        }
      }
  CHECK(failures == 0);
  static_assert([] {
    std::array<std::uint8_t, 70> a{}, b{};
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i + 1);
    w::copy_short(b.data() + 1, a.data(), 52);
    return b[0] == 0 && b[1] == 1 && b[52] == 52 && b[53] == 0;
  }());
}

// ---- SUE Reliability Header --------------------------------------------------------------

TEST_CASE("sue.rh: the field table is R2 Table 5") {
  // Table 5, in order: ver 2, op 2, rsv 2, xpuid 10, npsn 16, Ve (vc) 2, rsvd 4,
  // partition 10, apsn 16.
  struct row {
    std::string_view name;
    std::uint16_t bit, width;
  };
  constexpr std::array<row, 9> table5{{{"ver", 0, 2},
                                       {"op", 2, 2},
                                       {"rsv", 4, 2},
                                       {"xpuid", 6, 10},
                                       {"npsn", 16, 16},
                                       {"vc", 32, 2},
                                       {"rsvd", 34, 4},
                                       {"partition", 38, 10},
                                       {"apsn", 48, 16}}};
  const auto& infos = w::field_infos<rh_t>;
  REQUIRE(infos.size() == table5.size());
  for (std::size_t i = 0; i < table5.size(); ++i) {
    CAPTURE(table5[i].name);
    CHECK(infos[i].name == table5[i].name);
    CHECK(infos[i].bit == table5[i].bit);
    CHECK(infos[i].width == table5[i].width);
  }
  CHECK(layout<rh_t>::size == 8);
  CHECK(infos[2].check == w::rule::reserved);
  CHECK(infos[6].check == w::rule::reserved);
}

TEST_CASE("sue.rh: golden bytes") {
  check_golden(rh_golden, rh_golden_bytes);
  check_golden(rh_alt, rh_alt_bytes);
  // Op codes (decisions.md): ACK 0, NACK 1, none 2 (and 3).
  CHECK(static_cast<int>(w::rh_op::ack) == 0);
  CHECK(static_cast<int>(w::rh_op::nack) == 1);
  CHECK(static_cast<int>(w::rh_op::none) == 2);
  CHECK(rh_golden.carries_nack());
  CHECK_FALSE(rh_golden.carries_ack());
  // A default RH encodes op "none" = 2: 00 10 00 00 ... = 20 00 00 00 00 00 00 00
  const auto def = w::to_bytes(rh_t{});
  REQUIRE(def.ok());
  CHECK(hex(*def) == "20 00 00 00 00 00 00 00");
}

TEST_CASE("sue.rh: view accessors") {
  const auto vw = w::view<rh_t>::make(rh_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&rh_t::ver>() == 0u);
  CHECK(vw->get<&rh_t::op>() == 1u);
  CHECK(vw->get<&rh_t::rsv>() == 0u);
  CHECK(vw->get<&rh_t::xpuid>() == 0x3FFu);
  CHECK(vw->get<&rh_t::npsn>() == 0x1234u);
  CHECK(vw->get<&rh_t::vc>() == 3u);
  CHECK(vw->get<&rh_t::rsvd>() == 0u);
  CHECK(vw->get<&rh_t::partition>() == 0x3FFu);
  CHECK(vw->get<&rh_t::apsn>() == 0xBEEFu);
  const auto alt = w::view<rh_t>::make(rh_alt_bytes);
  REQUIRE(alt.ok());
  CHECK(alt->get<&rh_t::ver>() == 3u);
  CHECK(alt->get<&rh_t::op>() == 2u);
  CHECK(alt->get<&rh_t::xpuid>() == 0x155u);
  CHECK(alt->get<&rh_t::vc>() == 1u);
  CHECK(alt->get<&rh_t::partition>() == 0x2AAu);
  check_truncated<rh_t>(rh_golden_bytes);
}

TEST_CASE("sue.rh: encode refuses values too big for their fields") {
  check_too_big(with(rh_golden, &rh_t::ver, 4), "sue.rh.ver", 4, 0);
  check_too_big(with(rh_golden, &rh_t::op, 4), "sue.rh.op", 4, 0);
  check_too_big(with(rh_golden, &rh_t::rsv, 4), "sue.rh.rsv", 4, 0);
  check_too_big(with(rh_golden, &rh_t::xpuid, 1024), "sue.rh.xpuid", 1024, 0);
  check_too_big(with(rh_golden, &rh_t::xpuid, 0xFFFF), "sue.rh.xpuid", 0xFFFF, 0);
  check_too_big(with(rh_golden, &rh_t::vc, 4), "sue.rh.vc", 4, 4);
  check_too_big(with(rh_golden, &rh_t::rsvd, 16), "sue.rh.rsvd", 16, 4);
  check_too_big(with(rh_golden, &rh_t::partition, 1024), "sue.rh.partition", 1024, 4);
  check_no_space(rh_golden);
}

TEST_CASE("sue.rh: reserved fields are kept and reported") {
  // rsv=3: 00 01 11 11 = 1F (xpuid's top bits stay 11); rsvd=15: 11 1111 11 = FF
  {
    rh_t want = rh_golden;
    want.rsv = 3;
    want.rsvd = 15;
    check_reserved<rh_t>({0x1F, 0xFF, 0x12, 0x34, 0xFF, 0xFF, 0xBE, 0xEF}, want,
                         {{"sue.rh.rsv", 3, 0}, {"sue.rh.rsvd", 15, 4}});
  }
  // rsvd=5 only: vc 11, rsvd 0101, partition top 11 -> 1101 0111 = D7
  check_reserved<rh_t>({0x13, 0xFF, 0x12, 0x34, 0xD7, 0xFF, 0xBE, 0xEF},
                       with(rh_golden, &rh_t::rsvd, 5), {{"sue.rh.rsvd", 5, 4}});
  // rsv=1 only: 00 01 01 11 = 17
  check_reserved<rh_t>({0x17, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF},
                       with(rh_golden, &rh_t::rsv, 1), {{"sue.rh.rsv", 1, 0}});
}

TEST_CASE("sue.rh: random round trips") { check_random_round_trips<rh_t>(0x5EE0001); }

// ---- Ethernet and 802.1Q -----------------------------------------------------------------

TEST_CASE("eth: golden, view, errors, round trips") {
  check_golden(eth_golden, eth_golden_bytes);
  // All-ones addresses (48-bit maximum) and a zero type.
  check_golden(eth_t{.dst = 0xFFFF'FFFF'FFFFull, .src = 0xFFFF'FFFF'FFFFull, .type = 0},
               wire_bytes<eth_t>{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                 0xFF, 0x00, 0x00});
  const auto vw = w::view<eth_t>::make(eth_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&eth_t::dst>() == 0x4253'5545'03FFull);
  CHECK(vw->get<&eth_t::src>() == 0xFEDC'BA98'7654ull);
  CHECK(vw->get<&eth_t::type>() == 0x88B5u);
  check_truncated<eth_t>(eth_golden_bytes);
  check_too_big(with(eth_golden, &eth_t::dst, 0x1'0000'0000'0000ull), "eth.dst",
                0x1'0000'0000'0000ull, 0);
  check_too_big(with(eth_golden, &eth_t::src, ~std::uint64_t{0}), "eth.src", ~std::uint64_t{0}, 6);
  check_no_space(eth_golden);
  check_random_round_trips<eth_t>(0xE7E0001);
}

TEST_CASE("vlan: golden, view, errors, round trips") {
  check_golden(vlan_golden, vlan_golden_bytes);
  check_golden(vlan_alt, vlan_alt_bytes);
  const auto vw = w::view<vlan_t>::make(vlan_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&vlan_t::pcp>() == 7u);
  CHECK(vw->get<&vlan_t::dei>() == 1u);
  CHECK(vw->get<&vlan_t::vid>() == 0xABCu);
  CHECK(vw->get<&vlan_t::type>() == 0x0800u);
  check_truncated<vlan_t>(vlan_golden_bytes);
  check_too_big(with(vlan_golden, &vlan_t::pcp, 8), "vlan.priority", 8, 0);
  check_too_big(with(vlan_golden, &vlan_t::dei, 2), "vlan.dei", 2, 0);
  check_too_big(with(vlan_golden, &vlan_t::vid, 0x1000), "vlan.id", 0x1000, 0);
  check_no_space(vlan_golden);
  check_random_round_trips<vlan_t>(0x71A0001);
}

// ---- IPv4, IPv6, UDP ---------------------------------------------------------------------

TEST_CASE("ip: golden, view, errors") {
  check_golden(ip4_real, ip4_real_bytes);
  check_golden(ip4_golden, ip4_golden_bytes);
  const auto vw = w::view<ip4_t>::make(ip4_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&ip4_t::version>() == 4u);
  CHECK(vw->get<&ip4_t::ihl>() == 15u);
  CHECK(vw->get<&ip4_t::dscp>() == 0x2Eu);
  CHECK(vw->get<&ip4_t::ecn>() == 3u);
  CHECK(vw->get<&ip4_t::flag_rb>() == 0u);
  CHECK(vw->get<&ip4_t::flag_df>() == 0u);
  CHECK(vw->get<&ip4_t::flag_mf>() == 1u);
  CHECK(vw->get<&ip4_t::frag_offset>() == 0x1FFFu);
  CHECK(vw->get<&ip4_t::protocol>() == 0xFDu);
  CHECK(vw->get<&ip4_t::src>() == 0x0A000001u);
  CHECK(vw->get<&ip4_t::dst>() == 0xFFFFFFFFu);
  const auto real = w::view<ip4_t>::make(ip4_real_bytes);
  REQUIRE(real.ok());
  CHECK(real->get<&ip4_t::flag_df>() == 1u);
  CHECK(real->get<&ip4_t::checksum>() == 0xB861u);
  CHECK(real->get<&ip4_t::total_length>() == 0x73u);
  check_truncated<ip4_t>(ip4_golden_bytes);

  check_too_big(with(ip4_golden, &ip4_t::version, 16), "ip.version", 16, 0);
  check_too_big(with(ip4_golden, &ip4_t::ihl, 16), "ip.hdr_len", 16, 0);
  check_too_big(with(ip4_golden, &ip4_t::dscp, 64), "ip.dsfield.dscp", 64, 1);
  check_too_big(with(ip4_golden, &ip4_t::ecn, 4), "ip.dsfield.ecn", 4, 1);
  check_too_big(with(ip4_golden, &ip4_t::flag_rb, 2), "ip.flags.rb", 2, 6);
  check_too_big(with(ip4_golden, &ip4_t::flag_df, 2), "ip.flags.df", 2, 6);
  check_too_big(with(ip4_golden, &ip4_t::flag_mf, 2), "ip.flags.mf", 2, 6);
  check_too_big(with(ip4_golden, &ip4_t::frag_offset, 0x2000), "ip.frag_offset", 0x2000, 6);
  check_no_space(ip4_golden);

  // version is fixed at 4: 0x55 = version 5, IHL 5; 0x65 = version 6.
  {
    auto b = ip4_real_bytes;
    b[0] = 0x55;
    check_fixed_decode<ip4_t>(b, "ip.version", 5, 0);
    b[0] = 0x65;
    check_fixed_decode<ip4_t>(b, "ip.version", 6, 0);
  }
  check_fixed_encode(with(ip4_real, &ip4_t::version, 6), "ip.version", 6);
  check_fixed_encode(with(ip4_real, &ip4_t::version, 0), "ip.version", 0);

  // The reserved flag: octet 6 = 0x40 (DF) -> 0xC0 (RB and DF).
  {
    auto b = ip4_real_bytes;
    b[6] = 0xC0;
    check_reserved<ip4_t>(b, with(ip4_real, &ip4_t::flag_rb, 1), {{"ip.flags.rb", 1, 6}});
  }
}

TEST_CASE("ip: random round trips") { check_random_round_trips<ip4_t>(0x1F40001); }

TEST_CASE("ipv6: golden, view, errors, round trips") {
  check_golden(ip6_golden, ip6_golden_bytes);
  check_golden(ip6_alt, ip6_alt_bytes);
  const auto vw = w::view<ip6_t>::make(ip6_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&ip6_t::version>() == 6u);
  CHECK(vw->get<&ip6_t::tclass>() == 0xB8u);
  CHECK(vw->get<&ip6_t::flow>() == 0xFFFFFu);
  CHECK(vw->get<&ip6_t::payload_length>() == 0x0123u);
  CHECK(vw->get<&ip6_t::next_header>() == 0x11u);
  CHECK(vw->get<&ip6_t::hop_limit>() == 0xFFu);
  CHECK(vw->get<&ip6_t::src>() == ip6_golden.src);
  CHECK(vw->get<&ip6_t::dst>() == ip6_golden.dst);
  const auto alt = w::view<ip6_t>::make(ip6_alt_bytes);
  REQUIRE(alt.ok());
  CHECK(alt->get<&ip6_t::tclass>() == 0x0Fu);
  CHECK(alt->get<&ip6_t::flow>() == 0x12345u);
  check_truncated<ip6_t>(ip6_golden_bytes);

  check_too_big(with(ip6_golden, &ip6_t::version, 16), "ipv6.version", 16, 0);
  check_too_big(with(ip6_golden, &ip6_t::flow, 0x100000), "ipv6.flow", 0x100000, 1);
  check_no_space(ip6_golden);

  {
    auto b = ip6_golden_bytes;
    b[0] = 0x4B;  // version 4, tclass high nibble B
    check_fixed_decode<ip6_t>(b, "ipv6.version", 4, 0);
  }
  check_fixed_encode(with(ip6_golden, &ip6_t::version, 4), "ipv6.version", 4);

  check_random_round_trips<ip6_t>(0x1F60001);
}

TEST_CASE("udp: golden, view, errors, round trips") {
  check_golden(udp_golden, udp_golden_bytes);
  const auto vw = w::view<udp_t>::make(udp_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&udp_t::src_port>() == 4793u);
  CHECK(vw->get<&udp_t::dst_port>() == 0xFFFFu);
  CHECK(vw->get<&udp_t::length>() == 0x1Cu);
  CHECK(vw->get<&udp_t::checksum>() == 0xABCDu);
  check_truncated<udp_t>(udp_golden_bytes);
  check_no_space(udp_golden);
  // Every UDP field is exactly as wide as its member: no too-big value exists.
  check_random_round_trips<udp_t>(0x0DB0001);
}

// ---- AFH Gen 1 ---------------------------------------------------------------------------

TEST_CASE("afh1: golden, view, errors, round trips") {
  check_golden(afh1_golden, afh1_golden_bytes);
  // The default prefix is "B" "S" "U" "E" = 42 53 55 45.
  CHECK(w::afh1_default_prefix == 0x42535545u);
  const auto vw = w::view<afh1_t>::make(afh1_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&afh1_t::da_prefix>() == 0x42535545u);
  CHECK(vw->get<&afh1_t::dst_xpu>() == 0xFFFFu);
  CHECK(vw->get<&afh1_t::sa_prefix>() == 0x42535545u);
  CHECK(vw->get<&afh1_t::src_xpu>() == 0x1234u);
  check_truncated<afh1_t>(afh1_golden_bytes);
  check_no_space(afh1_golden);
  check_random_round_trips<afh1_t>(0xAF10001);
}

TEST_CASE("afh1.shim: golden, view, errors, round trips") {
  check_golden(shim_golden, shim_golden_bytes);
  check_golden(shim_alt, shim_alt_bytes);
  const auto vw = w::view<shim_t>::make(shim_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&shim_t::version>() == 0u);
  CHECK(vw->get<&shim_t::tc>() == 0xFFu);
  CHECK(vw->get<&shim_t::hop_limit>() == 0x3Fu);
  CHECK(vw->get<&shim_t::next_header>() == 0xFDu);
  CHECK(vw->get<&shim_t::length>() == 0x1234u);
  CHECK(vw->get<&shim_t::entropy>() == 0xFFFFFu);
  CHECK(vw->get<&shim_t::src_xpu>() == 0xDEADBEEFu);
  CHECK(vw->get<&shim_t::dst_xpu>() == 0x01020304u);
  const auto alt = w::view<shim_t>::make(shim_alt_bytes);
  REQUIRE(alt.ok());
  CHECK(alt->get<&shim_t::tc>() == 0xA5u);
  CHECK(alt->get<&shim_t::next_header>() == 0x11u);
  CHECK(alt->get<&shim_t::length>() == 0x40u);
  CHECK(alt->get<&shim_t::entropy>() == 0x12345u);
  check_truncated<shim_t>(shim_golden_bytes);

  check_too_big(with(shim_golden, &shim_t::version, 16), "afh1.shim.version", 16, 0);
  check_too_big(with(shim_golden, &shim_t::entropy, 0x100000), "afh1.shim.entropy", 0x100000, 5);
  check_no_space(shim_golden);

  {
    auto b = shim_golden_bytes;
    b[0] = 0x1F;  // version 1, tc high nibble F
    check_fixed_decode<shim_t>(b, "afh1.shim.version", 1, 0);
    b[0] = 0xFF;  // version 15
    check_fixed_decode<shim_t>(b, "afh1.shim.version", 15, 0);
  }
  check_fixed_encode(with(shim_golden, &shim_t::version, 1), "afh1.shim.version", 1);

  check_random_round_trips<shim_t>(0x5A110001);
}

// ---- AFH Gen 2 ---------------------------------------------------------------------------

TEST_CASE("afh2: golden, view, errors") {
  check_golden(afh2_golden, afh2_golden_bytes);
  check_golden(afh2_alt, afh2_alt_bytes);
  const auto vw = w::view<afh2_t>::make(afh2_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&afh2_t::w>() == 0u);
  CHECK(vw->get<&afh2_t::x>() == 1u);
  CHECK(vw->get<&afh2_t::m>() == 1u);
  CHECK(vw->get<&afh2_t::hop_count>() == 7u);
  CHECK(vw->get<&afh2_t::dst_xpu>() == 0x12345678u);
  CHECK(vw->get<&afh2_t::tc>() == 0x1Fu);
  CHECK(vw->get<&afh2_t::sa_ul>() == 1u);
  CHECK(vw->get<&afh2_t::sa_ig>() == 0u);
  CHECK(vw->get<&afh2_t::entropy>() == 0xA5u);
  CHECK(vw->get<&afh2_t::src_xpu>() == 0xCAFEF00Du);
  check_truncated<afh2_t>(afh2_golden_bytes);

  check_too_big(with(afh2_golden, &afh2_t::rsv, 4), "afh2.rsv", 4, 0);
  check_too_big(with(afh2_golden, &afh2_t::w, 2), "afh2.w", 2, 0);
  check_too_big(with(afh2_golden, &afh2_t::v, 2), "afh2.v", 2, 0);
  check_too_big(with(afh2_golden, &afh2_t::z, 2), "afh2.z", 2, 0);
  check_too_big(with(afh2_golden, &afh2_t::y, 2), "afh2.y", 2, 0);
  check_too_big(with(afh2_golden, &afh2_t::x, 2), "afh2.x", 2, 0);
  check_too_big(with(afh2_golden, &afh2_t::m, 2), "afh2.m", 2, 0);
  check_too_big(with(afh2_golden, &afh2_t::tc, 32), "afh2.tc", 32, 6);
  check_too_big(with(afh2_golden, &afh2_t::spare, 2), "afh2.spare", 2, 6);
  check_too_big(with(afh2_golden, &afh2_t::sa_ul, 2), "afh2.sa_ul", 2, 6);
  check_too_big(with(afh2_golden, &afh2_t::sa_ig, 2), "afh2.sa_ig", 2, 6);
  check_no_space(afh2_golden);

  // Fixed fields on decode. Octet 0 is rsv(2) W V Z Y X M; the golden is 0000 0011.
  const auto patched = [](std::size_t at, std::uint8_t v) {
    auto b = afh2_golden_bytes;
    b[at] = v;
    return b;
  };
  check_fixed_decode<afh2_t>(patched(0, 0x23), "afh2.w", 1, 0);  // 0010 0011
  check_fixed_decode<afh2_t>(patched(0, 0x13), "afh2.v", 1, 0);  // 0001 0011
  check_fixed_decode<afh2_t>(patched(0, 0x0B), "afh2.z", 1, 0);  // 0000 1011
  check_fixed_decode<afh2_t>(patched(0, 0x07), "afh2.y", 1, 0);  // 0000 0111
  check_fixed_decode<afh2_t>(patched(0, 0x01), "afh2.x", 0, 0);  // 0000 0001
  // Octet 6 is tc(5) spare SA-U/L SA-I/G; the golden is 11111 0 1 0.
  check_fixed_decode<afh2_t>(patched(6, 0xF8), "afh2.sa_ul", 0, 6);  // 11111 0 0 0
  check_fixed_decode<afh2_t>(patched(6, 0xFB), "afh2.sa_ig", 1, 6);  // 11111 0 1 1
  {
    // Lax decoding hands back what was read.
    const auto d = w::decode<afh2_t>(patched(0, 0x23));
    CHECK(d.value.w == 1u);
    CHECK(d.value.dst_xpu == 0x12345678u);
  }

  check_fixed_encode(with(afh2_golden, &afh2_t::w, 1), "afh2.w", 1);
  check_fixed_encode(with(afh2_golden, &afh2_t::v, 1), "afh2.v", 1);
  check_fixed_encode(with(afh2_golden, &afh2_t::z, 1), "afh2.z", 1);
  check_fixed_encode(with(afh2_golden, &afh2_t::y, 1), "afh2.y", 1);
  check_fixed_encode(with(afh2_golden, &afh2_t::x, 0), "afh2.x", 0);
  check_fixed_encode(with(afh2_golden, &afh2_t::sa_ul, 0), "afh2.sa_ul", 0);
  check_fixed_encode(with(afh2_golden, &afh2_t::sa_ig, 1), "afh2.sa_ig", 1);

  // Reserved: octet 0 = 1100 0011 (rsv 3); octet 6 = 11111 1 1 0 = FE (spare 1).
  check_reserved<afh2_t>(patched(0, 0xC3), with(afh2_golden, &afh2_t::rsv, 3),
                         {{"afh2.rsv", 3, 0}});
  check_reserved<afh2_t>(patched(6, 0xFE), with(afh2_golden, &afh2_t::spare, 1),
                         {{"afh2.spare", 1, 6}});

  // A hard error and a warning together: validate() returns the error, warns about the rest.
  {
    std::vector<w::error> warns;
    const w::error e = w::validate(with(with(afh2_golden, &afh2_t::rsv, 1), &afh2_t::w, 1), 0,
                                   [&](const w::error& x) { warns.push_back(x); });
    CHECK(e.code == errc::bad_value);
    CHECK(e.field == "afh2.w");
    REQUIRE(warns.size() == 1);
    CHECK(warns[0].field == "afh2.rsv");
  }
}

TEST_CASE("afh2: random round trips") { check_random_round_trips<afh2_t>(0xAF20001); }

TEST_CASE("afh2c: golden, view, errors, round trips") {
  check_golden(afh2c_golden, afh2c_golden_bytes);
  check_golden(afh2c_alt, afh2c_alt_bytes);
  const auto vw = w::view<afh2c_t>::make(afh2c_golden_bytes);
  REQUIRE(vw.ok());
  CHECK(vw->get<&afh2c_t::w>() == 1u);
  CHECK(vw->get<&afh2c_t::x>() == 1u);
  CHECK(vw->get<&afh2c_t::m>() == 1u);
  CHECK(vw->get<&afh2c_t::tc>() == 0x1Fu);
  CHECK(vw->get<&afh2c_t::spare>() == 0u);
  CHECK(vw->get<&afh2c_t::src_xpu>() == 0x1234u);
  CHECK(vw->get<&afh2c_t::dst_xpu>() == 0xFFFFu);
  const auto alt = w::view<afh2c_t>::make(afh2c_alt_bytes);
  REQUIRE(alt.ok());
  CHECK(alt->get<&afh2c_t::m>() == 0u);
  CHECK(alt->get<&afh2c_t::tc>() == 5u);
  CHECK(alt->get<&afh2c_t::dst_xpu>() == 0x8000u);
  check_truncated<afh2c_t>(afh2c_golden_bytes);

  check_too_big(with(afh2c_golden, &afh2c_t::rsv, 4), "afh2.rsv", 4, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::w, 2), "afh2.w", 2, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::v, 2), "afh2.v", 2, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::z, 2), "afh2.z", 2, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::y, 2), "afh2.y", 2, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::x, 2), "afh2.x", 2, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::m, 2), "afh2.m", 2, 0);
  check_too_big(with(afh2c_golden, &afh2c_t::tc, 32), "afh2c.tc", 32, 1);
  check_too_big(with(afh2c_golden, &afh2c_t::spare, 8), "afh2c.spare", 8, 1);
  check_no_space(afh2c_golden);

  const auto patched = [](std::size_t at, std::uint8_t v) {
    auto b = afh2c_golden_bytes;
    b[at] = v;
    return b;
  };
  check_fixed_decode<afh2c_t>(patched(0, 0x03), "afh2.w", 0, 0);  // 0000 0011
  check_fixed_decode<afh2c_t>(patched(0, 0x33), "afh2.v", 1, 0);  // 0011 0011
  check_fixed_decode<afh2c_t>(patched(0, 0x2B), "afh2.z", 1, 0);  // 0010 1011
  check_fixed_decode<afh2c_t>(patched(0, 0x27), "afh2.y", 1, 0);  // 0010 0111
  check_fixed_decode<afh2c_t>(patched(0, 0x21), "afh2.x", 0, 0);  // 0010 0001
  check_fixed_encode(with(afh2c_golden, &afh2c_t::w, 0), "afh2.w", 0);
  check_fixed_encode(with(afh2c_golden, &afh2c_t::v, 1), "afh2.v", 1);
  check_fixed_encode(with(afh2c_golden, &afh2c_t::z, 1), "afh2.z", 1);
  check_fixed_encode(with(afh2c_golden, &afh2c_t::y, 1), "afh2.y", 1);
  check_fixed_encode(with(afh2c_golden, &afh2c_t::x, 0), "afh2.x", 0);

  // Reserved: octet 0 = 1010 0011 (rsv 2); octet 1 = 11111 111 (spare 7).
  check_reserved<afh2c_t>(patched(0, 0xA3), with(afh2c_golden, &afh2c_t::rsv, 2),
                          {{"afh2.rsv", 2, 0}});
  check_reserved<afh2c_t>(patched(1, 0xFF), with(afh2c_golden, &afh2c_t::spare, 7),
                          {{"afh2c.spare", 7, 1}});

  check_random_round_trips<afh2c_t>(0xAF2C0001);
}

TEST_CASE("afh2.etype and sue.rcrc: golden, view, errors, round trips") {
  check_golden(etype_golden, etype_golden_bytes);
  {
    const auto vw = w::view<etype_t>::make(etype_golden_bytes);
    REQUIRE(vw.ok());
    CHECK(vw->get<&etype_t::type>() == 0x88B5u);
  }
  check_truncated<etype_t>(etype_golden_bytes);
  check_no_space(etype_golden);
  check_random_round_trips<etype_t>(0xE7E20001);

  check_golden(rcrc_golden, rcrc_golden_bytes);
  {
    const auto vw = w::view<rcrc_t>::make(rcrc_golden_bytes);
    REQUIRE(vw.ok());
    CHECK(vw->get<&rcrc_t::value>() == 0xCBF43926u);
  }
  check_truncated<rcrc_t>(rcrc_golden_bytes);
  check_no_space(rcrc_golden);
  check_random_round_trips<rcrc_t>(0xC4C0001);
}

TEST_CASE("has_afh2_signature") {
  // rsv 00, V Z Y 0, X 1; W and M free.
  CHECK(w::has_afh2_signature(0x02));        // 0000 0010: normal, unicast
  CHECK(w::has_afh2_signature(0x03));        // 0000 0011: normal, multicast
  CHECK(w::has_afh2_signature(0x22));        // 0010 0010: compressed, unicast
  CHECK(w::has_afh2_signature(0x23));        // 0010 0011: compressed, multicast
  CHECK_FALSE(w::has_afh2_signature(0x42));  // 0100 0010: AFH Gen 1 default prefix (rsv bit)
  CHECK_FALSE(w::has_afh2_signature(0x06));  // 0000 0110: Y = 1 (SAI quadrant)
  CHECK_FALSE(w::has_afh2_signature(0x0A));  // 0000 1010: Z = 1 (ELI quadrant)
  CHECK_FALSE(w::has_afh2_signature(0x12));  // 0001 0010: V = 1
  CHECK_FALSE(w::has_afh2_signature(0x00));  // 0000 0000: universally administered
  CHECK_FALSE(w::has_afh2_signature(0x01));  // 0000 0001: X = 0
  CHECK_FALSE(w::has_afh2_signature(0x82));  // 1000 0010: rsv bit
  CHECK_FALSE(w::has_afh2_signature(0xFF));
  CHECK_FALSE(w::has_afh2_signature(static_cast<std::uint8_t>(w::afh1_default_prefix >> 24)));
  // The goldens carry it.
  CHECK(w::has_afh2_signature(afh2_golden_bytes[0]));
  CHECK(w::has_afh2_signature(afh2c_golden_bytes[0]));
  // Exhaustively: exactly the four octets above.
  int count = 0;
  for (unsigned o = 0; o < 256; ++o) count += w::has_afh2_signature(static_cast<std::uint8_t>(o));
  CHECK(count == 4);
}

// ---- encode_all: many headers at once ----------------------------------------------------

// n headers alternating between two goldens, with npsn made to differ.
std::vector<rh_t> rh_batch(std::size_t n) {
  std::vector<rh_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = i % 2 == 0 ? rh_golden : rh_alt;
    v[i].npsn = static_cast<std::uint16_t>(i * 7919);
  }
  return v;
}

// Per-header encode of each, back to back: what encode_all must write.
template <class T>
std::vector<std::uint8_t> encode_each(const std::vector<T>& in) {
  constexpr std::size_t n = layout<T>::size;
  std::vector<std::uint8_t> out(in.size() * n);
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(w::encode(in[i], w::mutable_bytes(out.data() + i * n, n)).ok());
  return out;
}

TEST_CASE("encode_all: the same bytes as encode, header after header") {
  // Around the block size (64 headers per test), and none at all.
  for (const std::size_t n : {0u, 1u, 2u, 63u, 64u, 65u, 128u, 200u}) {
    CAPTURE(n);
    const auto in = rh_batch(n);
    std::vector<std::uint8_t> out(n * 8 + 3, 0xEE);
    const auto r = w::encode_all<rh_t>(in, out);
    REQUIRE(r.ok());
    CHECK(*r == n);
    CHECK(hex(w::bytes(out).first(n * 8)) == hex(encode_each(in)));
    for (std::size_t i = n * 8; i < out.size(); ++i) CHECK(out[i] == 0xEE);
  }
  // A header with byte arrays (IPv6 addresses) and one with a fixed field (IPv4 version).
  std::vector<w::ipv6_header> six(70);
  for (std::size_t i = 0; i < six.size(); ++i) {
    six[i].payload_length = static_cast<std::uint16_t>(i);
    six[i].src[15] = static_cast<std::uint8_t>(i);
    six[i].dst[0] = static_cast<std::uint8_t>(0xFF - i);
  }
  std::vector<std::uint8_t> out6(six.size() * layout<w::ipv6_header>::size);
  REQUIRE(w::encode_all<w::ipv6_header>(six, out6).ok());
  CHECK(out6 == encode_each(six));
  const std::vector<ip4_t> four(65, ip4_real);
  std::vector<std::uint8_t> out4(four.size() * layout<ip4_t>::size);
  REQUIRE(w::encode_all<ip4_t>(four, out4).ok());
  CHECK(out4 == encode_each(four));
}

TEST_CASE("encode_all: a refusal names the header and the field") {
  // One too-big value in the second block: index 70, xpuid (byte 0 of its header).
  auto in = rh_batch(200);
  in[70].xpuid = 1024;
  std::vector<std::uint8_t> out(in.size() * 8);
  const auto r = w::encode_all<rh_t>(in, out);
  CHECK_FALSE(r.ok());
  CHECK(r.value == 70);
  CHECK(r.err.code == errc::value_too_big);
  CHECK(r.err.layer == "sue.rh");
  CHECK(r.err.field == "sue.rh.xpuid");
  CHECK(r.err.value == 1024);
  CHECK(r.err.item == 71);
  CHECK(r.err.offset == 70 * 8);
  // The headers before it are encoded.
  in.resize(70);
  CHECK(hex(w::bytes(out).first(70 * 8)) == hex(encode_each(in)));

  // Several in one block: the first header, and in it the first field in table order, as encode.
  in = rh_batch(64);
  in[9].partition = 0xFFFF;  // byte 4 of its header
  in[9].vc = 4;              // also byte 4, but earlier in the table
  in[40].ver = 4;
  const auto r2 = w::encode_all<rh_t>(in, out);
  CHECK(r2.value == 9);
  CHECK(r2.err.field == "sue.rh.vc");
  CHECK(r2.err.value == 4);
  CHECK(r2.err.item == 10);
  CHECK(r2.err.offset == 9 * 8 + 4);
  // The last header of an incomplete block.
  in = rh_batch(67);
  in[66].rsvd = 16;
  const auto r3 = w::encode_all<rh_t>(in, out);
  CHECK(r3.value == 66);
  CHECK(r3.err.field == "sue.rh.rsvd");
  CHECK(r3.err.item == 67);

  // A fixed field off its value: bad_value, as encode.
  std::vector<ip4_t> four(3, ip4_real);
  four[2].version = 6;
  std::vector<std::uint8_t> out4(four.size() * layout<ip4_t>::size);
  const auto r4 = w::encode_all<ip4_t>(four, out4);
  CHECK(r4.value == 2);
  CHECK(r4.err.code == errc::bad_value);
  CHECK(r4.err.field == "ip.version");
  CHECK(r4.err.value == 6);
  CHECK(r4.err.item == 3);
  CHECK(r4.err.offset == 2 * layout<ip4_t>::size);
}

TEST_CASE("encode_all: too small an output writes nothing") {
  const auto in = rh_batch(10);
  std::vector<std::uint8_t> out(10 * 8, 0xEE);
  const auto r = w::encode_all<rh_t>(in, w::mutable_bytes(out).first(10 * 8 - 1));
  CHECK_FALSE(r.ok());
  CHECK(r.err.code == errc::no_space);
  CHECK(r.err.layer == "sue.rh");
  CHECK(r.err.needed == 80);
  CHECK(r.err.available == 79);
  for (const std::uint8_t b : out) CHECK(b == 0xEE);
  CHECK(w::encode_all<rh_t>({}, w::mutable_bytes{}).ok());
}

}  // namespace
