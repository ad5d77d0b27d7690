// Link layers read_frame reads before the network headers: Linux cooked
// captures v1 (113) and v2 (276), BSD loopback (0, either byte order) and LINKTYPE_LOOP (108),
// and Ethernet with a stack of 802.1Q / 802.1ad tags. Frames are hand-written bytes: each header
// as LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2 and LINKTYPE_NULL lay it out, the golden RH
// (13 FF 12 34 C3 FF BE EF, support.hpp), IP and UDP checksums and the R-CRC by the suite's own
// references.
#include <scaleup/dissect/engine.hpp>
#include <scaleup/wire/receive.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace w = scaleup::wire;
namespace d = scaleup::dissect;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::fix_udp4_checksum;
using scaleup::test::ref_crc32;
using scaleup::test::ref_sum;
using scaleup::test::rh_golden;
using w::errc;
using w::layer_kind;

// RH (rh_golden), four payload bytes, R-CRC: 16 bytes.
byte_vector pdu() {
  byte_vector p{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF, 0xDE, 0xAD, 0xBE, 0xEF};
  const std::uint32_t c = ref_crc32(p.data(), p.size());
  for (int i = 3; i >= 0; --i) p.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
  return p;
}

// 127.0.0.1 -> 127.0.0.1, UDP 40000 -> 50000 (no port of SUE's: the heuristic finds it).
byte_vector ipv4_udp_pdu() {
  byte_vector ip{0x45, 0x00, 0x00, 44,   0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
                 0x00, 0x00, 0x7F, 0x00, 0x00, 0x01, 0x7F, 0x00, 0x00, 0x01,
                 0x9C, 0x40, 0xC3, 0x50, 0x00, 24,   0x00, 0x00};
  byte_vector out = cat({ip, pdu()});
  fix_ipv4_checksum(out, 0);
  fix_udp4_checksum(out, 0, 20);
  return out;
}

// ::1 -> ::1, UDP 40000 -> 50000, checksum over the RFC 8200 pseudo-header.
byte_vector ipv6_udp_pdu() {
  byte_vector ip{0x60, 0x00, 0x00, 0x00, 0x00, 24, 0x11, 64};
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 15; ++k) ip.push_back(0);
    ip.push_back(1);
  }
  byte_vector out = cat({ip, {0x9C, 0x40, 0xC3, 0x50, 0x00, 24, 0x00, 0x00}, pdu()});
  const std::uint8_t tail[8] = {0, 0, 0, 24, 0, 0, 0, 0x11};
  std::uint32_t acc = ref_sum(out.data() + 8, 32);
  acc = ref_sum(tail, 8, acc);
  const auto c = static_cast<std::uint16_t>(~ref_sum(out.data() + 40, 24, acc) & 0xFFFF);
  out[46] = static_cast<std::uint8_t>(c >> 8);
  out[47] = static_cast<std::uint8_t>(c);
  return out;
}

// LINKTYPE_LINUX_SLL: sent by us (4), ARPHRD_LOOPBACK (772), a 6-byte address of zeros, the
// protocol last.
byte_vector sll(std::uint16_t protocol) {
  return {0x00,
          0x04,
          0x03,
          0x04,
          0x00,
          0x06,
          0x00,
          0x00,
          0x00,
          0x00,
          0x00,
          0x00,
          0x00,
          0x00,
          static_cast<std::uint8_t>(protocol >> 8),
          static_cast<std::uint8_t>(protocol)};
}

// LINKTYPE_LINUX_SLL2: the protocol first, reserved, interface index 3, ARPHRD_ETHER (1),
// to us (0), address length 6, 02:00:00:00:00:07, two unused bytes.
byte_vector sll2(std::uint16_t protocol) {
  return {static_cast<std::uint8_t>(protocol >> 8),
          static_cast<std::uint8_t>(protocol),
          0x00,
          0x00,
          0x00,
          0x00,
          0x00,
          0x03,
          0x00,
          0x01,
          0x00,
          0x06,
          0x02,
          0x00,
          0x00,
          0x00,
          0x00,
          0x07,
          0x00,
          0x00};
}

// Ethernet addresses 02:00:00:00:00:02 <- 02:00:00:00:00:01.
byte_vector eth_addresses() {
  return {0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
}

std::vector<layer_kind> kinds(const w::received_frame& f) {
  std::vector<layer_kind> out;
  for (const auto& l : f.layer_list()) out.push_back(l.kind);
  return out;
}

// The golden PDU behind whatever came first, recognised and taken.
void check_pdu(const w::received_frame& f, std::size_t at) {
  REQUIRE(f.rh);
  CHECK(f.pdu_offset == at);
  CHECK(f.rh->xpuid == 0x3FF);
  CHECK(f.rh->npsn == 0x1234);
  CHECK(f.rh->apsn == 0xBEEF);
  CHECK(f.payload.size() == 4);
  CHECK(f.accepted());
}

}  // namespace

TEST_CASE("link layers: Linux cooked capture v1 (113)") {
  SUBCASE("IPv4, UDP, SUE") {
    const byte_vector frame = cat({sll(0x0800), ipv4_udp_pdu()});
    const auto f = w::read_frame(frame, w::link_linux_sll);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::udp4);
    REQUIRE(f.sll);
    CHECK(f.sll->offset == 0);
    CHECK(f.sll->value ==
          w::linux_sll{.pkttype = 4, .hatype = 772, .halen = 6, .protocol = 0x0800});
    CHECK_FALSE(f.eth);
    REQUIRE(f.ipv4);
    CHECK(f.ipv4->offset == 16);
    CHECK(kinds(f) == std::vector<layer_kind>{layer_kind::sll, layer_kind::ipv4, layer_kind::udp,
                                              layer_kind::sue_rh, layer_kind::sue_payload,
                                              layer_kind::sue_rcrc});
    CHECK_FALSE(f.fcs.present);  // no Ethernet, no FCS
    check_pdu(f, 16 + 28);
  }
  SUBCASE("SUE's Ethertype: the PDU straight after the header, no Ethernet addresses") {
    const byte_vector frame = cat({sll(0x88B5), pdu()});
    const auto f = w::read_frame(frame, w::link_linux_sll);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::afh1);
    CHECK_FALSE(f.afh1);  // the addresses are not in a cooked capture
    CHECK_FALSE(f.src_xpu);
    CHECK_FALSE(f.dst_xpu);
    CHECK(kinds(f) == std::vector<layer_kind>{layer_kind::sll, layer_kind::sue_rh,
                                              layer_kind::sue_payload, layer_kind::sue_rcrc});
    check_pdu(f, 16);
  }
  SUBCASE("a minimum-size Ethernet frame's padding, 2 bytes further on") {
    // 46 bytes after the header: as an Ethernet frame 60 bytes, so zeros after the R-CRC are
    // padding. With 47 the frame was longer than the minimum, and its last 4 bytes the R-CRC.
    byte_vector frame = cat({sll(0x88B5), pdu(), byte_vector(30, 0)});
    auto f = w::read_frame(frame, w::link_linux_sll);
    CHECK(f.errors.empty());
    check_pdu(f, 16);
    CHECK(f.bounds.pad == 30);
    CHECK(kinds(f).back() == layer_kind::sue_pad);
    frame.push_back(0);
    f = w::read_frame(frame, w::link_linux_sll);
    CHECK(f.bounds.status == w::rcrc_status::bad);
  }
  SUBCASE("tags after the header") {
    const byte_vector frame =
        cat({sll(0x8100), {0x20, 0x0A, 0x08, 0x00}, ipv4_udp_pdu()});  // PCP 1, VID 10
    const auto f = w::read_frame(frame, w::link_linux_sll);
    CHECK(f.errors.empty());
    REQUIRE(f.vlan_count == 1);
    CHECK(f.vlan[0].offset == 16);
    CHECK(f.vlan[0].value.vid == 10);
    CHECK(f.vlan[0].value.pcp == 1);
    check_pdu(f, 20 + 28);
  }
  SUBCASE("another protocol is not SUE, and no problem") {
    for (const std::uint16_t protocol : {0x0806, 0x0004, 0x0600}) {  // ARP, 802.2 LLC, ...
      CAPTURE(protocol);
      const byte_vector frame = cat({sll(protocol), pdu()});
      const auto f = w::read_frame(frame, w::link_linux_sll);
      CHECK(f.errors.empty());
      CHECK_FALSE(f.kind);
      CHECK(f.name() == "sll");
      CHECK(kinds(f) == std::vector<layer_kind>{layer_kind::sll});
    }
  }
  SUBCASE("cut off inside the header") {
    const byte_vector frame = sll(0x0800);
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{15}}) {
      CAPTURE(n);
      const auto f = w::read_frame(w::bytes(frame).first(n), w::link_linux_sll);
      REQUIRE(f.errors.size() == 1);
      CHECK(f.errors[0].code == errc::truncated);
      CHECK(f.errors[0].layer == "sll");
      CHECK(f.errors[0].needed == 16);
      CHECK(f.errors[0].available == n);
      CHECK_FALSE(f.sll);
      CHECK(f.layer_count == 0);
      CHECK(f.name() == "sll");
    }
  }
}

TEST_CASE("link layers: Linux cooked capture v2 (276)") {
  SUBCASE("IPv6, UDP, SUE") {
    const byte_vector frame = cat({sll2(0x86DD), ipv6_udp_pdu()});
    const auto f = w::read_frame(frame, w::link_linux_sll2);
    CHECK(f.errors.empty());
    CHECK(f.kind == w::encap::udp6);
    REQUIRE(f.sll2);
    CHECK(f.sll2->value == w::linux_sll2{.protocol = 0x86DD,
                                         .ifindex = 3,
                                         .hatype = 1,
                                         .pkttype = 0,
                                         .halen = 6,
                                         .address = 0x020000000007});
    REQUIRE(f.ipv6);
    CHECK(f.ipv6->offset == 20);
    CHECK(kinds(f).front() == layer_kind::sll2);
    check_pdu(f, 20 + 48);
  }
  SUBCASE("IPv4; a reserved field that is not zero is a warning") {
    byte_vector frame = cat({sll2(0x0800), ipv4_udp_pdu()});
    frame[3] = 0x01;
    const auto f = w::read_frame(frame, w::link_linux_sll2);
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::reserved_nonzero);
    CHECK(f.errors[0].field == "sll.reserved");
    CHECK(f.errors[0].level == w::severity::warning);
    CHECK(f.kind == w::encap::udp4);
    check_pdu(f, 20 + 28);
  }
  SUBCASE("padding of a minimum-size frame, 6 bytes further on") {
    const byte_vector frame = cat({sll2(0x88B5), pdu(), byte_vector(30, 0)});
    const auto f = w::read_frame(frame, w::link_linux_sll2);
    check_pdu(f, 20);
    CHECK(f.bounds.pad == 30);
  }
  SUBCASE("cut off inside the header") {
    const byte_vector frame = sll2(0x0800);
    const auto f = w::read_frame(w::bytes(frame).first(19), w::link_linux_sll2);
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::truncated);
    CHECK(f.errors[0].layer == "sll2");
    CHECK(f.errors[0].needed == 20);
    CHECK(f.errors[0].available == 19);
  }
  SUBCASE("cut off after the header, inside IPv4") {
    const byte_vector frame = cat({sll2(0x0800), ipv4_udp_pdu()});
    const auto f = w::read_frame(w::bytes(frame).first(30), w::link_linux_sll2);
    REQUIRE_FALSE(f.errors.empty());
    CHECK(f.errors[f.errors.size() - 1].code == errc::truncated);
    CHECK(f.errors[f.errors.size() - 1].offset == 20);
    CHECK(f.sll2);
    CHECK_FALSE(f.ipv4);
  }
}

TEST_CASE("link layers: BSD loopback (0) and LINKTYPE_LOOP (108)") {
  SUBCASE("AF_INET written little-endian and big-endian: both are 2") {
    for (const byte_vector& header : {byte_vector{0x02, 0x00, 0x00, 0x00},  // x86 host
                                      byte_vector{0x00, 0x00, 0x00, 0x02}}) {
      const byte_vector frame = cat({header, ipv4_udp_pdu()});
      const auto f = w::read_frame(frame, w::link_null);
      CHECK(f.errors.empty());
      REQUIRE(f.null);
      CHECK(f.null->value.family == 2);
      CHECK(f.kind == w::encap::udp4);
      CHECK(f.ipv4->offset == 4);
      CHECK(kinds(f).front() == layer_kind::null);
      check_pdu(f, 4 + 28);
    }
  }
  SUBCASE("AF_INET6 of each BSD, either byte order") {
    for (const std::uint8_t family : {24, 28, 30}) {
      CAPTURE(int{family});
      for (const byte_vector& header :
           {byte_vector{family, 0x00, 0x00, 0x00}, byte_vector{0x00, 0x00, 0x00, family}}) {
        const auto f = w::read_frame(cat({header, ipv6_udp_pdu()}), w::link_null);
        CHECK(f.errors.empty());
        CHECK(f.null->value.family == family);
        CHECK(f.kind == w::encap::udp6);
        check_pdu(f, 4 + 48);
      }
    }
  }
  SUBCASE("LINKTYPE_LOOP is big-endian only") {
    auto f = w::read_frame(cat({{0x00, 0x00, 0x00, 0x02}, ipv4_udp_pdu()}), w::link_loop);
    CHECK(f.errors.empty());
    CHECK(f.null->value.family == 2);
    check_pdu(f, 4 + 28);
    // Little-endian bytes on link type 108 are family 0x02000000: not one of IP's.
    f = w::read_frame(cat({{0x02, 0x00, 0x00, 0x00}, ipv4_udp_pdu()}), w::link_loop);
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::unsupported);
    CHECK(f.errors[0].value == 0x02000000);
    CHECK_FALSE(f.rh);
  }
  SUBCASE("a family other than IP's") {
    const auto f = w::read_frame(cat({{0x07, 0x00, 0x00, 0x00}, pdu()}), w::link_null);
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::unsupported);
    CHECK(f.errors[0].layer == "null");
    CHECK(f.errors[0].field == "null.family");
    CHECK(f.errors[0].value == 7);
    CHECK(f.null->value.family == 7);
    CHECK(f.name() == "null");
    CHECK(kinds(f) == std::vector<layer_kind>{layer_kind::null});
  }
  SUBCASE("cut off inside the header") {
    const byte_vector frame{0x02, 0x00, 0x00};
    for (const std::uint32_t link : {w::link_null, w::link_loop}) {
      const auto f = w::read_frame(frame, link);
      REQUIRE(f.errors.size() == 1);
      CHECK(f.errors[0].code == errc::truncated);
      CHECK(f.errors[0].layer == "null");
      CHECK(f.errors[0].needed == 4);
      CHECK(f.errors[0].available == 3);
      CHECK_FALSE(f.null);
    }
  }
  SUBCASE("the byte-order rule") {
    static_assert(w::bsd_family_of(2) == 2);
    static_assert(w::bsd_family_of(0x02000000) == 2);
    static_assert(w::bsd_family_of(0x1E000000) == 30);
    static_assert(w::bsd_family_of(0xFFFF) == 0xFFFF);
    static_assert(w::bsd_family_of(0x00010000) == 0x00000100);
    CHECK(w::reads_link(w::link_null));
    CHECK(w::reads_link(w::link_loop));
    CHECK(w::reads_link(w::link_linux_sll));
    CHECK(w::reads_link(w::link_linux_sll2));
  }
}

TEST_CASE("link layers: a stack of VLAN tags") {
  // 802.1ad (PCP 5, VID 100), 802.1Q (DEI, VID 200), 802.1Q (VID 300).
  const byte_vector tags{0x88, 0xA8, 0xA0, 0x64, 0x81, 0x00, 0x10, 0xC8, 0x81, 0x00, 0x01, 0x2C};
  const auto check_tags = [](const w::received_frame& f) {
    REQUIRE(f.vlan_count == 3);
    CHECK(f.vlan[0].offset == 14);
    CHECK(f.vlan[0].value == w::vlan_tag{.pcp = 5, .dei = 0, .vid = 100, .type = 0x8100});
    CHECK(f.vlan[1].value == w::vlan_tag{.pcp = 0, .dei = 1, .vid = 200, .type = 0x8100});
    CHECK(f.vlan[2].offset == 22);
    CHECK(f.vlan[2].value.vid == 300);
  };
  SUBCASE("carrying IPv4, UDP, SUE") {
    const byte_vector frame = cat({eth_addresses(), tags, {0x08, 0x00}, ipv4_udp_pdu()});
    const auto f = w::read_frame(frame, w::link_ethernet, {.fcs = w::fcs_mode::absent});
    CHECK(f.errors.empty());
    check_tags(f);
    CHECK(f.vlan[2].value.type == 0x0800);
    CHECK(f.kind == w::encap::udp4);
    CHECK(f.ipv4->offset == 26);
    CHECK(kinds(f) == std::vector<layer_kind>{layer_kind::ethernet, layer_kind::service_tag,
                                              layer_kind::vlan, layer_kind::vlan, layer_kind::ipv4,
                                              layer_kind::udp, layer_kind::sue_rh,
                                              layer_kind::sue_payload, layer_kind::sue_rcrc});
    check_pdu(f, 26 + 28);
  }
  SUBCASE("carrying AFH Gen 1") {
    // 42:53:55:45 prefixes, destination XPU 2, source XPU 1; 50 payload bytes, no padding.
    byte_vector body{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};
    for (int i = 0; i < 50; ++i) body.push_back(static_cast<std::uint8_t>(i + 1));
    const std::uint32_t c = ref_crc32(body.data(), body.size());
    for (int i = 3; i >= 0; --i) body.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    const byte_vector frame =
        cat({{0x42, 0x53, 0x55, 0x45, 0x00, 0x02, 0x42, 0x53, 0x55, 0x45, 0x00, 0x01},
             tags,
             {0x88, 0xB5},
             body});
    const auto f = w::read_frame(frame, w::link_ethernet, {.fcs = w::fcs_mode::absent});
    CHECK(f.errors.empty());
    check_tags(f);
    CHECK(f.vlan[2].value.type == 0x88B5);
    CHECK(f.kind == w::encap::afh1_vlan);
    REQUIRE(f.afh1);
    CHECK(f.src_xpu == 1u);
    CHECK(f.dst_xpu == 2u);
    REQUIRE(f.rh);
    CHECK(f.pdu_offset == 26);  // 12 address bytes, 3 tags, the Ethertype
    CHECK(f.payload.size() == 50);
    CHECK(f.accepted());
  }
  SUBCASE("0x9100, the service tag before 802.1ad, is read as a tag too") {
    byte_vector frame = cat({eth_addresses(), tags, {0x08, 0x00}, ipv4_udp_pdu()});
    frame[12] = 0x91;
    frame[13] = 0x00;
    const auto f = w::read_frame(frame, w::link_ethernet, {.fcs = w::fcs_mode::absent});
    CHECK(f.vlan_count == 3);
    CHECK(f.eth->value.type == 0x9100);
    CHECK(kinds(f)[1] == layer_kind::vlan);  // a VLAN tag to tshark, not an 802.1ad one
    check_pdu(f, 26 + 28);
  }
  SUBCASE("eight tags are read; a ninth is reported and ends the reading") {
    const auto stack = [](std::size_t n) {
      byte_vector frame = eth_addresses();
      for (std::size_t i = 0; i < n; ++i)
        frame.insert(frame.end(), {0x81, 0x00, 0x00, static_cast<std::uint8_t>(i + 1)});
      return cat({frame, {0x08, 0x00}, ipv4_udp_pdu()});
    };
    auto f = w::read_frame(stack(8), w::link_ethernet, {.fcs = w::fcs_mode::absent});
    CHECK(f.errors.empty());
    CHECK(f.vlan_count == 8);
    CHECK(f.vlan[7].value.vid == 8);
    check_pdu(f, 14 + 32 + 20 + 8);
    f = w::read_frame(stack(9), w::link_ethernet, {.fcs = w::fcs_mode::absent});
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::unsupported);
    CHECK(f.errors[0].layer == "vlan");
    CHECK(f.errors[0].offset == 14 + 32);
    CHECK(f.errors[0].value == 0x8100);
    CHECK(f.errors[0].level == w::severity::error);
    CHECK(f.vlan_count == 8);
    CHECK_FALSE(f.rh);
    CHECK(f.name() == "eth");
  }
  SUBCASE("cut off inside the third tag") {
    const byte_vector frame = cat({eth_addresses(), tags, {0x08, 0x00}, ipv4_udp_pdu()});
    const auto f =
        w::read_frame(w::bytes(frame).first(24), w::link_ethernet, {.fcs = w::fcs_mode::absent});
    REQUIRE(f.errors.size() == 1);
    CHECK(f.errors[0].code == errc::truncated);
    CHECK(f.errors[0].layer == "vlan");
    CHECK(f.errors[0].offset == 22);
    CHECK(f.vlan_count == 2);
  }
}

TEST_CASE("link layers: in the dissection tree, under tshark's field names") {
  const auto value_of = [](const d::tree& t, std::string_view filter) -> std::int64_t {
    for (std::size_t i = 0; i < t.field_count; ++i)
      if (t.fields[i].info->filter == filter) return static_cast<std::int64_t>(t.fields[i].value);
    return -1;
  };
  const auto layer_names = [](const d::tree& t) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < t.layer_count; ++i) out.push_back(t.layers[i].name);
    return out;
  };
  d::options o;
  o.profile = nullptr;  // opaque payload
  d::tree t;
  const byte_vector v1 = cat({sll(0x0800), ipv4_udp_pdu()});
  d::dissect_frame(t, v1, w::link_linux_sll, o);
  CHECK(t.encap == "udp4");
  CHECK(t.error_count == 0);
  CHECK(layer_names(t).front() == "sll");
  CHECK(value_of(t, "sll.pkttype") == 4);
  CHECK(value_of(t, "sll.hatype") == 772);
  CHECK(value_of(t, "sll.halen") == 6);
  CHECK(value_of(t, "sll.etype") == 0x0800);
  CHECK(value_of(t, "sue.rh.xpuid") == 0x3FF);

  const byte_vector v2 = cat({sll2(0x86DD), ipv6_udp_pdu()});
  d::dissect_frame(t, v2, w::link_linux_sll2, o);
  CHECK(layer_names(t).front() == "sll2");
  CHECK(value_of(t, "sll.ifindex") == 3);
  CHECK(value_of(t, "sll.src.eth") == 0x020000000007);
  CHECK(value_of(t, "sll.etype") == 0x86DD);

  const byte_vector lo = cat({{0x1E, 0x00, 0x00, 0x00}, ipv6_udp_pdu()});
  d::dissect_frame(t, lo, w::link_null, o);
  CHECK(layer_names(t).front() == "null");
  CHECK(value_of(t, "null.family") == 30);  // as tshark shows it, not 0x1E000000
  CHECK(t.encap == "udp6");

  const byte_vector tagged = cat({eth_addresses(),
                                  {0x88, 0xA8, 0xA0, 0x64, 0x81, 0x00, 0x10, 0xC8},
                                  {0x08, 0x00},
                                  ipv4_udp_pdu()});
  d::dissect_frame(t, tagged, w::link_ethernet, o);
  CHECK(layer_names(t) == std::vector<std::string_view>{"eth", "ieee8021ad", "vlan", "ip", "udp",
                                                        "sue.rh", "sue.payload", "sue.rcrc"});
  // The 802.1ad tag under tshark's names for it, the 802.1Q tag under vlan.*.
  CHECK(value_of(t, "ieee8021ad.priority") == 5);
  CHECK(value_of(t, "ieee8021ad.id") == 100);
  CHECK(value_of(t, "ieee8021ah.etype") == 0x8100);
  CHECK(value_of(t, "vlan.dei") == 1);
  CHECK(value_of(t, "vlan.id") == 200);
  CHECK(value_of(t, "vlan.etype") == 0x0800);
}
