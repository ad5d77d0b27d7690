// 802.1Qbb PFC frames in a capture (for the rule pfc.paused): the engine decodes MAC Control
// frames of opcode 0x0101 by transport::pfc_pdu's table, tagged or not, behind Ethernet or a
// Linux cooked header; 802.3x PAUSE and other Ethertypes stay as the reader left them; a frame
// the snapshot length cut is no fault, one short on the wire is.
#include <scaleup/dissect/engine.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
using scaleup::test::byte_vector;
using scaleup::test::cat;

// Written by hand from IEEE 802.3 Annex 31D: to 01:80:C2:00:00:01 from 02:AA:00:00:00:02,
// Ethertype 8808, opcode 0101, class-enable vector 00 18 (priorities 3 and 4), time[3] 1000
// (0x03E8), time[4] 0 (XON), every other time 0, padding to 60 bytes.
const byte_vector header{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02,
                         0xAA, 0x00, 0x00, 0x00, 0x02, 0x88, 0x08};
const byte_vector control{0x01, 0x01, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                          0x03, 0xE8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

byte_vector padded(byte_vector f) {
  f.resize(60, 0);
  return f;
}

std::unique_ptr<d::tree> dissect(const byte_vector& f, std::uint32_t link = d::link_ethernet,
                                 std::size_t wire_length = 0) {
  auto t = std::make_unique<d::tree>();
  d::dissect_frame(*t, w::bytes(f.data(), f.size()), link, {}, wire_length);
  return t;
}

std::uint64_t value(const d::tree& t, std::string_view filter) {
  const auto* f = t.find(filter);
  REQUIRE(f != nullptr);
  return f->value;
}

}  // namespace

TEST_CASE("PFC frame: decoded by its table behind Ethernet") {
  const auto t = dissect(padded(cat({header, control})));
  CHECK(t->encap == "pfc");
  const auto* l = t->find_layer("pfc");
  REQUIRE(l != nullptr);
  CHECK(l->offset == 14);
  CHECK(value(*t, "pfc.opcode") == 0x0101);
  CHECK(value(*t, "pfc.cev") == 0x18);
  CHECK(value(*t, "pfc.time3") == 1000);
  CHECK(value(*t, "pfc.time4") == 0);
  CHECK(value(*t, "eth.src") == 0x02AA00000002);
  CHECK(t->error_list().empty());
}

TEST_CASE("PFC frame: behind a VLAN tag and behind a Linux cooked header") {
  // A tag (PCP 7, VID 1) between the addresses and 0x8808: the control follows the tag.
  byte_vector tagged(header.begin(), header.begin() + 12);
  tagged = cat({tagged, byte_vector{0x81, 0x00, 0xE0, 0x01, 0x88, 0x08}, control});
  auto t = dissect(padded(tagged));
  CHECK(t->encap == "pfc");
  CHECK(t->find_layer("pfc")->offset == 18);
  CHECK(value(*t, "pfc.time3") == 1000);
  // Linux cooked v1: packet type 4 (sent by us), ARPHRD_ETHER, 6 address bytes, the source
  // MAC padded to 8, protocol 0x8808.
  const byte_vector sll{0x00, 0x04, 0x00, 0x01, 0x00, 0x06, 0x02, 0xAA,
                        0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x88, 0x08};
  t = dissect(cat({sll, control}), w::link_linux_sll);
  CHECK(t->encap == "pfc");
  CHECK(t->find_layer("pfc")->offset == 16);
  CHECK(value(*t, "pfc.cev") == 0x18);
}

TEST_CASE("PFC frame: a reserved octet set, a short frame, a cut frame") {
  byte_vector bad = control;
  bad[2] = 0x80;  // the class-enable vector's first octet is reserved
  auto t = dissect(padded(cat({header, bad})));
  CHECK(t->encap == "pfc");
  REQUIRE(t->error_list().size() == 1);
  CHECK(t->error_list()[0].code == w::errc::reserved_nonzero);
  CHECK(t->error_list()[0].offset == 16);
  // Short on the wire: malformed, the times are not shown.
  const byte_vector shorter = cat({header, byte_vector(control.begin(), control.begin() + 10)});
  t = dissect(shorter);
  CHECK(t->encap == "eth");
  CHECK(t->find_layer("pfc") == nullptr);
  REQUIRE(t->error_list().size() == 1);
  CHECK(t->error_list()[0].code == w::errc::truncated);
  CHECK(t->error_list()[0].layer == std::string_view("pfc"));
  // The same bytes as a capture cut at 24 of 60: the snapshot length's note only.
  t = dissect(shorter, d::link_ethernet, 60);
  CHECK(t->find_layer("pfc") == nullptr);
  for (const auto& e : t->error_list()) CHECK(e.code == w::errc::not_captured);
}

TEST_CASE("PFC frame: 802.3x PAUSE and other protocols are not PFC") {
  byte_vector pause = control;
  pause[1] = 0x01;  // opcode 0x0001
  pause[0] = 0x00;
  auto t = dissect(padded(cat({header, pause})));
  CHECK(t->encap == "eth");
  CHECK(t->find_layer("pfc") == nullptr);
  CHECK(t->error_list().empty());
  byte_vector arp = header;
  arp[12] = 0x08;
  arp[13] = 0x06;
  t = dissect(padded(cat({arp, control})));
  CHECK(t->encap == "eth");
  CHECK(t->find_layer("pfc") == nullptr);
}
