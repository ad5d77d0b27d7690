// IP reassembly (wire/ip_reassembly.hpp, dissect/ip_reassembly.hpp): fragments written here byte
// by byte from RFC 791 3.1 and RFC 8200 3 and 4.5, read by read_frame and joined; every rule
// (any order, duplicates, overlaps, lengths) and every limit (datagrams, bytes, age, fragments).
//
// The datagram of most cases: IPv4 10.0.0.1 -> 10.0.0.2, id 0x4242, carrying UDP 4793 -> 4793
// with a SUE PDU (RH 13 FF 12 34 C3 FF BE EF, 28 payload bytes, R-CRC): 8 + 40 = 48 payload
// bytes, cut into three fragments of 16 (offsets 0, 2 and 4 in 8-byte units).
#include <scaleup/dissect/ip_reassembly.hpp>
#include <scaleup/wire/ip_reassembly.hpp>
#include <scaleup/wire/receive.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
using scaleup::test::be16;
using scaleup::test::byte_vector;
using scaleup::test::bytes_of;
using scaleup::test::cat;
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::ramp;
using scaleup::test::ref_crc32;
using scaleup::test::ref_sum;
using scaleup::test::set16;

// The UDP datagram that is fragmented: header (length 48, checksum 0 = none) and the PDU.
byte_vector udp_datagram() {
  byte_vector pdu = cat({{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF}, ramp(28, 1)});
  const std::uint32_t crc = ref_crc32(pdu.data(), pdu.size());
  for (int i = 3; i >= 0; --i) pdu.push_back(static_cast<std::uint8_t>(crc >> (8 * i)));
  return cat({{0x12, 0xB9, 0x12, 0xB9, 0x00, 0x30, 0x00, 0x00}, pdu});
}

// An IPv4 fragment (RFC 791 3.1): version 4, IHL 5, total length, id, flags (MF = 0x2000) and
// offset in 8-byte units, TTL 64, protocol 17, checksum, 10.0.0.1 -> 10.0.0.2.
byte_vector v4_fragment(std::uint16_t id, std::uint16_t offset_units, bool more,
                        const byte_vector& data) {
  byte_vector f = cat({{0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x11,
                        0x00, 0x00, 0x0A, 0x00, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x02},
                       data});
  set16(f, 2, static_cast<std::uint16_t>(f.size()));
  set16(f, 4, id);
  set16(f, 6, static_cast<std::uint16_t>((more ? 0x2000 : 0) | offset_units));
  fix_ipv4_checksum(f, 0);
  return f;
}

byte_vector slice(const byte_vector& v, std::size_t at, std::size_t n) {
  return byte_vector(v.begin() + static_cast<std::ptrdiff_t>(at),
                     v.begin() + static_cast<std::ptrdiff_t>(at + n));
}

// The three fragments of the datagram above.
std::vector<byte_vector> v4_fragments(std::uint16_t id = 0x4242) {
  const byte_vector u = udp_datagram();
  return {v4_fragment(id, 0, true, slice(u, 0, 16)), v4_fragment(id, 2, true, slice(u, 16, 16)),
          v4_fragment(id, 4, false, slice(u, 32, 16))};
}

// What the reassembler must give back: the header with total length 68, no flags, no offset,
// its checksum made right, then the UDP datagram.
byte_vector v4_expected() {
  byte_vector want = cat({{0x45, 0x00, 0x00, 0x44, 0x42, 0x42, 0x00, 0x00, 0x40, 0x11,
                           0x00, 0x00, 0x0A, 0x00, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x02},
                          udp_datagram()});
  fix_ipv4_checksum(want, 0);
  return want;
}

w::ip_fragment fragment_of(const byte_vector& frame, std::uint32_t link = w::link_ipv4) {
  const auto f = w::read_frame(frame, link);
  REQUIRE(f.fragment);
  return *f.fragment;
}

using small = w::ip_reassembler<4, 8>;

std::unique_ptr<small> make(w::reassembly_limits l = {}) { return std::make_unique<small>(l); }

// The payload of the test PDU is not commands of any profile: shown as opaque bytes.
d::options opaque() {
  d::options o;
  o.profile = nullptr;
  return o;
}

}  // namespace

TEST_CASE("read_frame reports an IPv4 fragment with what reassembly needs") {
  const auto frags = v4_fragments();
  const auto f = w::read_frame(frags[1], w::link_ipv4);
  CHECK(f.errors.empty());
  CHECK(f.name() == "ipv4");
  CHECK_FALSE(f.udp);
  REQUIRE(f.fragment);
  CHECK_FALSE(f.fragment->key.v6);
  CHECK(f.fragment->key.src == std::array<std::uint8_t, 16>{10, 0, 0, 1});
  CHECK(f.fragment->key.dst == std::array<std::uint8_t, 16>{10, 0, 0, 2});
  CHECK(f.fragment->key.protocol == 17);
  CHECK(f.fragment->key.id == 0x4242);
  CHECK(f.fragment->offset == 16);
  CHECK(f.fragment->more);
  CHECK(f.fragment->whole);
  CHECK(f.fragment->header.size() == 20);
  CHECK(bytes_of(f.fragment->data) == slice(udp_datagram(), 16, 16));
  // Cut by the capture: the reassembler refuses it.
  const byte_vector cut = slice(frags[1], 0, 30);
  const auto c = w::read_frame(cut, w::link_ipv4);
  REQUIRE(c.fragment);
  CHECK_FALSE(c.fragment->whole);
  auto r = make();
  const auto& got = r->push(*c.fragment, 1, 0);
  CHECK(got.state == w::fragment_state::rejected);
  CHECK(got.problem.what == "fragment cut short by the capture: not reassembled");
  CHECK(r->counters().rejected == 1);
  CHECK(r->pending() == 0);
}

TEST_CASE("IPv4 fragments in any order give back the datagram") {
  const auto frags = v4_fragments();
  const std::vector<std::vector<std::size_t>> orders{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}};
  for (const auto& order : orders) {
    CAPTURE(order[0]);
    CAPTURE(order[1]);
    auto r = make();
    for (std::size_t k = 0; k < 2; ++k) {
      const auto& got = r->push(fragment_of(frags[order[k]]), order[k] + 1, 1000);
      CHECK(got.state == w::fragment_state::held);
      CHECK(got.held_fragments == k + 1);
      CHECK(got.held_bytes == 16 * (k + 1));
    }
    CHECK(r->pending() == 1);
    CHECK(r->bytes_held() == 32);
    const auto& got = r->push(fragment_of(frags[order[2]]), order[2] + 1, 2000);
    REQUIRE(got.state == w::fragment_state::complete);
    CHECK_FALSE(got.v6);
    CHECK(bytes_of(got.datagram) == v4_expected());
    REQUIRE(got.fragments.size() == 3);
    for (std::size_t k = 0; k < 3; ++k) {
      CHECK(got.fragments[k].frame == k + 1);  // in offset order, whatever the arrival order
      CHECK(got.fragments[k].offset == 16 * k);
      CHECK(got.fragments[k].length == 16);
    }
    CHECK(r->pending() == 0);
    CHECK(r->bytes_held() == 0);
    CHECK(r->counters().completed == 1);
    // The datagram reads as a whole one: UDP and the SUE PDU behind it.
    const auto f = w::read_frame(got.datagram, w::link_ipv4);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::udp4);
    REQUIRE(f.rh);
    CHECK(f.rh->npsn == 0x1234);
    CHECK(f.rh->apsn == 0xBEEF);
    CHECK(f.accepted());
  }
}

TEST_CASE("a fragment already held is a duplicate; one in part held abandons the datagram") {
  const auto frags = v4_fragments();
  const byte_vector u = udp_datagram();
  SUBCASE("duplicate") {
    auto r = make();
    CHECK(r->push(fragment_of(frags[0]), 1, 0).state == w::fragment_state::held);
    CHECK(r->push(fragment_of(frags[1]), 2, 0).state == w::fragment_state::held);
    // The same bytes again, and bytes wholly inside those held (offset 8, 16 bytes).
    const auto& dup = r->push(fragment_of(frags[1]), 3, 0);
    CHECK(dup.state == w::fragment_state::duplicate);
    CHECK(dup.held_fragments == 2);
    CHECK(r->push(fragment_of(v4_fragment(0x4242, 1, true, slice(u, 8, 16))), 4, 0).state ==
          w::fragment_state::duplicate);
    CHECK(r->counters().duplicates == 2);
    const auto& got = r->push(fragment_of(frags[2]), 5, 0);
    REQUIRE(got.state == w::fragment_state::complete);
    CHECK(bytes_of(got.datagram) == v4_expected());
    CHECK(got.fragments.size() == 3);
    CHECK(got.fragments[1].frame == 2);  // the first copy is kept
  }
  SUBCASE("overlap") {
    auto r = make();
    CHECK(r->push(fragment_of(frags[0]), 1, 0).state == w::fragment_state::held);
    // Bytes 8 to 24: 8 held, 8 not.
    const auto& got = r->push(fragment_of(v4_fragment(0x4242, 1, true, slice(u, 8, 16))), 2, 0);
    CHECK(got.state == w::fragment_state::rejected);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::overlap);
    CHECK(got.reports[0].key.id == 0x4242);
    CHECK(got.reports[0].first_frame == 1);
    CHECK(got.reports[0].bytes == 16);
    CHECK(got.reports[0].problem.layer == "ip");
    CHECK(got.reports[0].problem.field == "ip.id");
    CHECK(got.reports[0].problem.value == 0x4242);
    CHECK(got.problem.what == got.reports[0].problem.what);
    CHECK(r->pending() == 0);
    CHECK(r->bytes_held() == 0);
    CHECK(r->counters().dropped[static_cast<std::size_t>(w::reassembly_drop::overlap)] == 1);
    // The rest now starts a new datagram, which never completes without its first bytes.
    CHECK(r->push(fragment_of(frags[1]), 3, 0).state == w::fragment_state::held);
    CHECK(r->push(fragment_of(frags[2]), 4, 0).state == w::fragment_state::held);
  }
}

TEST_CASE("fragments that break the length rules") {
  const byte_vector u = udp_datagram();
  auto r = make();
  SUBCASE("a fragment other than the last must carry a multiple of 8 bytes") {
    const auto& got = r->push(fragment_of(v4_fragment(1, 0, true, slice(u, 0, 12))), 1, 0);
    CHECK(got.state == w::fragment_state::rejected);
    CHECK(got.problem.code == w::errc::bad_length);
    CHECK(got.problem.value == 1);
    CHECK(got.report_count == 0);
    CHECK(r->pending() == 0);
  }
  SUBCASE("two last fragments that disagree") {
    CHECK(r->push(fragment_of(v4_fragment(1, 4, false, slice(u, 32, 16))), 1, 0).state ==
          w::fragment_state::held);
    // A last fragment ending at byte 24, not 48.
    const auto& got = r->push(fragment_of(v4_fragment(1, 1, false, slice(u, 8, 16))), 2, 0);
    CHECK(got.state == w::fragment_state::rejected);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::length);
    CHECK(r->pending() == 0);
  }
  SUBCASE("a fragment past the end a last fragment set") {
    CHECK(r->push(fragment_of(v4_fragment(1, 2, false, slice(u, 16, 16))), 1, 0).state ==
          w::fragment_state::held);
    const auto& got = r->push(fragment_of(v4_fragment(1, 4, true, slice(u, 32, 16))), 2, 0);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::length);
  }
  SUBCASE("a datagram over 65535 bytes") {
    // Offset 8190 x 8 = 65520 plus a 20-byte header and 16 bytes.
    const auto& got = r->push(fragment_of(v4_fragment(1, 8190, false, slice(u, 0, 16))), 1, 0);
    CHECK(got.state == w::fragment_state::rejected);
    CHECK(got.problem.what == "fragment past the largest datagram (65535 bytes): ignored");
  }
}

TEST_CASE("each reassembly limit, when hit, is reported and counted") {
  const byte_vector u = udp_datagram();
  const auto first = [&](std::uint16_t id) { return v4_fragment(id, 0, true, slice(u, 0, 16)); };
  SUBCASE("pending datagrams: the oldest makes room") {
    auto r = make({.datagrams = 2});
    CHECK(r->push(fragment_of(first(1)), 1, 10).state == w::fragment_state::held);
    CHECK(r->push(fragment_of(first(2)), 2, 20).state == w::fragment_state::held);
    const auto& got = r->push(fragment_of(first(3)), 3, 30);
    CHECK(got.state == w::fragment_state::held);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::datagrams);
    CHECK(got.reports[0].key.id == 1);
    CHECK(got.reports[0].first_frame == 1);
    CHECK(got.reports[0].problem.level == w::severity::warning);
    CHECK(got.reports[0].problem.what ==
          "reassembly limit on pending datagrams hit: the oldest datagram given up");
    CHECK(r->pending() == 2);
    CHECK(r->counters().dropped[static_cast<std::size_t>(w::reassembly_drop::datagrams)] == 1);
  }
  SUBCASE("the capacity bounds the datagram limit") {
    auto r = make({.datagrams = 100});
    CHECK(r->limits().datagrams == 4);
    for (std::uint16_t id = 1; id <= 5; ++id) (void)r->push(fragment_of(first(id)), id, id);
    CHECK(r->pending() == 4);
    CHECK(r->counters().dropped[static_cast<std::size_t>(w::reassembly_drop::datagrams)] == 1);
  }
  SUBCASE("bytes held: the oldest other datagrams go first") {
    auto r = make({.bytes = 40});
    CHECK(r->push(fragment_of(first(1)), 1, 10).state == w::fragment_state::held);
    CHECK(r->push(fragment_of(v4_fragment(1, 2, true, slice(u, 16, 16))), 2, 11).state ==
          w::fragment_state::held);
    CHECK(r->bytes_held() == 32);
    const auto& got = r->push(fragment_of(first(2)), 3, 12);
    CHECK(got.state == w::fragment_state::held);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::bytes);
    CHECK(got.reports[0].key.id == 1);
    CHECK(got.reports[0].bytes == 32);
    CHECK(r->bytes_held() == 16);
    CHECK(r->pending() == 1);
  }
  SUBCASE("bytes held: a fragment larger than the limit gives up its own datagram") {
    auto r = make({.bytes = 8});
    const auto& got = r->push(fragment_of(first(1)), 1, 0);
    CHECK(got.state == w::fragment_state::rejected);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::bytes);
    CHECK(r->pending() == 0);
    CHECK(r->bytes_held() == 0);
  }
  SUBCASE("age: counted from a datagram's first fragment") {
    auto r = make({.age_ns = 1000});
    CHECK(r->push(fragment_of(first(1)), 1, 5000).state == w::fragment_state::held);
    CHECK(r->push(fragment_of(first(2)), 2, 5600).state == w::fragment_state::held);
    // At 6000 the first is exactly 1000 old: kept.
    CHECK(r->expire(6000).report_count == 0);
    const auto& got = r->push(fragment_of(v4_fragment(1, 2, true, slice(u, 16, 16))), 3, 6001);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::age);
    CHECK(got.reports[0].key.id == 1);
    CHECK(got.reports[0].first_frame == 1);
    // Its late fragment starts over.
    CHECK(got.state == w::fragment_state::held);
    CHECK(got.held_fragments == 1);
    const auto& later = r->expire(7002);
    REQUIRE(later.report_count == 2);
    CHECK(r->pending() == 0);
    CHECK(r->counters().dropped[static_cast<std::size_t>(w::reassembly_drop::age)] == 3);
  }
  SUBCASE("fragments per datagram") {
    const auto r = std::make_unique<w::ip_reassembler<2, 2>>();
    CHECK(r->push(fragment_of(first(1)), 1, 0).state == w::fragment_state::held);
    CHECK(r->push(fragment_of(v4_fragment(1, 2, true, slice(u, 16, 8))), 2, 0).state ==
          w::fragment_state::held);
    const auto& got = r->push(fragment_of(v4_fragment(1, 3, false, slice(u, 24, 24))), 3, 0);
    CHECK(got.state == w::fragment_state::rejected);
    REQUIRE(got.report_count == 1);
    CHECK(got.reports[0].why == w::reassembly_drop::fragments);
    CHECK(r->pending() == 0);
  }
}

namespace {

// An IPv6 packet (RFC 8200 3): version 6, payload length, next header 44 (Fragment), hop limit
// 64, fd00::1 -> fd00::2; then the Fragment header (RFC 8200 4.5): next header 17, reserved,
// offset in 8-byte units << 3 | M, identification.
byte_vector v6_fragment(std::uint32_t id, std::uint16_t offset_units, bool more,
                        const byte_vector& data) {
  byte_vector f{0x60, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2C, 0x40};
  const byte_vector src{0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const byte_vector dst{0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  f = cat({f, src, dst, {0x11, 0x00, 0, 0}, {0, 0, 0, 0}, data});
  set16(f, 4, static_cast<std::uint16_t>(f.size() - 40));
  set16(f, 42, static_cast<std::uint16_t>((offset_units << 3) | (more ? 1 : 0)));
  for (int i = 0; i < 4; ++i) f[44 + i] = static_cast<std::uint8_t>(id >> (8 * (3 - i)));
  return f;
}

// The UDP datagram of the IPv4 cases with its checksum, mandatory over IPv6 (RFC 8200 8.1).
byte_vector udp6_datagram() {
  byte_vector u = udp_datagram();
  const byte_vector addrs = cat({{0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                                 {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}});
  std::uint32_t acc = ref_sum(addrs.data(), addrs.size());
  const std::uint8_t tail[8] = {0, 0, 0, 48, 0, 0, 0, 17};
  acc = ref_sum(tail, 8, acc);
  set16(u, 6, static_cast<std::uint16_t>(~ref_sum(u.data(), u.size(), acc) & 0xFFFF));
  return u;
}

}  // namespace

TEST_CASE("IPv6 fragments: the Fragment header is read and the packet reassembled") {
  const byte_vector u = udp6_datagram();
  const byte_vector a = v6_fragment(0xA1B2C3D4, 0, true, slice(u, 0, 24));
  const byte_vector b = v6_fragment(0xA1B2C3D4, 3, false, slice(u, 24, 24));
  const auto f = w::read_frame(b, w::link_ipv6);
  CHECK(f.errors.empty());
  REQUIRE(f.ipv6_frag);
  CHECK(f.ipv6_frag->offset == 40);
  CHECK(f.ipv6_frag->value.next_header == 17);
  CHECK(f.ipv6_frag->value.offset == 3);
  CHECK(f.ipv6_frag->value.more == 0);
  CHECK(f.ipv6_frag->value.id == 0xA1B2C3D4);
  REQUIRE(f.fragment);
  CHECK(f.fragment->key.v6);
  CHECK(f.fragment->key.id == 0xA1B2C3D4);
  CHECK(f.fragment->key.protocol == 0);
  CHECK(f.fragment->offset == 24);
  CHECK_FALSE(f.fragment->more);
  CHECK(f.fragment->header.size() == 40);
  CHECK(f.layer_list().back().kind == w::layer_kind::ipv6_fragment);
  CHECK_FALSE(f.udp);

  auto r = make();
  CHECK(r->push(*f.fragment, 2, 0).state == w::fragment_state::held);
  const auto& got = r->push(fragment_of(a, w::link_ipv6), 1, 0);
  REQUIRE(got.state == w::fragment_state::complete);
  CHECK(got.v6);
  // Fixed header with payload length 48 and next header 17 (the Fragment header's), then UDP.
  const byte_vector want =
      cat({{0x60, 0x00, 0x00, 0x00, 0x00, 0x30, 0x11, 0x40}, slice(a, 8, 32), u});
  CHECK(bytes_of(got.datagram) == want);
  const auto whole = w::read_frame(got.datagram, w::link_ipv6);
  CHECK(whole.errors.empty());
  CHECK(whole.kind == w::encap::udp6);
  REQUIRE(whole.rh);
  CHECK(whole.rh->npsn == 0x1234);
  CHECK(whole.accepted());
}

TEST_CASE("an atomic IPv6 fragment (offset 0, M clear) is read through to UDP") {
  const byte_vector f6 = v6_fragment(7, 0, false, udp6_datagram());
  const auto f = w::read_frame(f6, w::link_ipv6);
  CHECK(f.errors.empty());
  CHECK_FALSE(f.fragment);
  REQUIRE(f.ipv6_frag);
  REQUIRE(f.udp);
  CHECK(f.udp->offset == 48);
  CHECK(f.kind == w::encap::udp6);
  CHECK(f.accepted());
}

TEST_CASE("dissection with reassembly: the PDU in the frame that completes its datagram") {
  const auto frags = v4_fragments();
  auto r = make();
  d::large_tree t;
  // Frames 1 and 2 carry the last and first fragments: held, a note each.
  for (const std::size_t k : {std::size_t{2}, std::size_t{0}}) {
    d::dissect_frame(t, frags[k], w::link_ipv4, opaque(), *r, k == 2 ? 1 : 2, 0);
    CHECK(t.encap == "ipv4");
    CHECK(t.find("ip.frag_offset"));
    CHECK_FALSE(t.find("sue.rh.npsn"));
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].level == w::severity::warning);
    CHECK(t.errors[0].code == w::errc::unsupported);
    CHECK(t.errors[0].what == d::fragment_held_note);
    CHECK(t.errors[0].field == "ip.id");
    CHECK(t.errors[0].offset == 4);
    CHECK(t.errors[0].value == 0x4242);
  }
  // The same first fragment again: a duplicate.
  d::dissect_frame(t, frags[0], w::link_ipv4, opaque(), *r, 3, 0);
  REQUIRE(t.error_count == 1);
  CHECK(t.errors[0].what == d::fragment_duplicate_note);
  // Frame 4 completes it.
  d::dissect_frame(t, frags[1], w::link_ipv4, opaque(), *r, 4, 0);
  CHECK(t.encap == "udp4");
  CHECK(t.error_count == 0);
  CHECK(t.frame_length == 36);  // the frame's own bytes
  const auto* re = t.find_layer("ip.reassembled");
  REQUIRE(re);
  CHECK(re->offset == 0);
  CHECK(re->length == 68);
  std::vector<std::uint64_t> from;
  for (const auto& f : t.field_list())
    if (f.info->filter == "ip.fragment") from.push_back(f.value);
  CHECK(from == std::vector<std::uint64_t>{2, 4, 1});  // by offset
  CHECK(t.find("ip.fragment.count")->value == 3);
  CHECK(t.find("ip.reassembled.length")->value == 68);
  // One IP header (the frame's), then UDP and the PDU at their offsets in the datagram.
  std::size_t ip_layers = 0;
  for (const auto& l : t.layer_list()) ip_layers += l.name == "ip";
  CHECK(ip_layers == 1);
  CHECK(t.find_layer("udp")->offset == 20);
  CHECK(t.find_layer("sue.rh")->offset == 28);
  CHECK(t.find("sue.rh.npsn")->value == 0x1234);
  CHECK(t.find("sue.rcrc.status")->value_name() == "good");
  CHECK(t.find("ip.frag_offset")->value == 2);  // the completing frame's own header
}

TEST_CASE("dissection with reassembly: a limit hit is a warning on the frame that hit it") {
  auto r = make({.datagrams = 1});
  d::tree t;
  const auto a = v4_fragments(1), b = v4_fragments(2);
  d::dissect_frame(t, a[0], w::link_ipv4, opaque(), *r, 1, 0);
  d::dissect_frame(t, b[0], w::link_ipv4, opaque(), *r, 2, 0);
  REQUIRE(t.error_count == 2);
  CHECK(t.errors[0].what ==
        "reassembly limit on pending datagrams hit: the oldest datagram given up");
  CHECK(t.errors[0].value == 1);
  CHECK(t.errors[1].what == d::fragment_held_note);
  CHECK_FALSE(t.has_errors());
}
