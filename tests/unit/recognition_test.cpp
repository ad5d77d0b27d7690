// SUE over UDP without taking other protocols, and endpoints as the frame carries them: no port is
// SUE's by default; the heuristic and the flows it binds; an RH of another version on a named port;
// Ultra Ethernet Transport on its port 4793; IP addresses, the XPU map read from text, and the
// analysis keyed by what the frame names.
#include <scaleup/dissect/analysis.hpp>
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/flow_table.hpp>
#include <scaleup/dissect/xpu_table.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/ip_address.hpp>
#include <scaleup/wire/receive.hpp>
#include <scaleup/wire/xpu_map.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "support.hpp"
#include "tree_support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::fix_udp4_checksum;
using scaleup::test::params_for;
using scaleup::test::test_rh;

using scaleup::test::ip4_at;
using scaleup::test::pdu4_at;
using scaleup::test::rcrc_status;
using scaleup::test::udp4_at;
constexpr std::uint16_t uet_port = 4793;  // packet-uet.c: UDP_PORT_UET

// A SUE frame over IPv4 from 192.168.1.10 to 192.168.1.20 (ordinary addresses, outside the
// library's plan), UDP sport -> dport, the RH given and one opaque payload byte.
byte_vector sue_frame(std::uint16_t sport, std::uint16_t dport, w::reliability_header rh,
                      std::uint32_t src = 0xC0A8010A, std::uint32_t dst = 0xC0A80114) {
  w::frame_params p = params_for(w::encap::udp4);
  p.udp_src_port = sport;
  p.udp_dst_port = dport;
  byte_vector out(256);
  const byte_vector payload{0xAA};
  const auto r = w::emit_sue_frame(p, rh, payload, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  w::store_be32(out.data() + ip4_at + 12, src);
  w::store_be32(out.data() + ip4_at + 16, dst);
  fix_ipv4_checksum(out, ip4_at);
  fix_udp4_checksum(out, ip4_at, udp4_at);
  return out;
}

// The same frame with its payload byte flipped: the R-CRC no longer matches.
byte_vector damaged(byte_vector f) {
  f[pdu4_at + 8] ^= 0xFF;
  fix_udp4_checksum(f, ip4_at, udp4_at);
  return f;
}

// Any datagram over IPv4 with the given UDP payload.
byte_vector udp_frame(std::uint16_t sport, std::uint16_t dport, const byte_vector& inner) {
  w::frame_params p = params_for(w::encap::udp4);
  p.udp_src_port = sport;
  p.udp_dst_port = dport;
  byte_vector out(512);
  const auto r = w::emit_frame(p, inner, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}

// An Ultra Ethernet Transport packet as packet-uet.c reads it (UE 1.0): the PDS prologue, 16
// bits big-endian, type(5) next header(4) flags(7); for a RUD/ROD request then clear PSN offset
// (2), PSN (4), source PDC id (2), destination PDC id (2); with next header 3 the standard SES
// request header (44 bytes: opcode, flags, message id, index generation, job id, PID on FEP,
// resource index, buffer offset, initiator, match bits, header data, request length); then data.
byte_vector uet_pds(std::uint8_t type, std::uint8_t next, std::uint32_t psn) {
  const std::uint16_t prologue = static_cast<std::uint16_t>(type << 11 | next << 7);
  byte_vector b{static_cast<std::uint8_t>(prologue >> 8), static_cast<std::uint8_t>(prologue)};
  const byte_vector rest{0x00,
                         0x00,  // clear PSN offset
                         static_cast<std::uint8_t>(psn >> 24),
                         static_cast<std::uint8_t>(psn >> 16),
                         static_cast<std::uint8_t>(psn >> 8),
                         static_cast<std::uint8_t>(psn),
                         0x00,
                         0x11,  // source PDC id
                         0x00,
                         0x22};  // destination PDC id
  b.insert(b.end(), rest.begin(), rest.end());
  byte_vector ses(44, 0);
  ses[0] = 0x01;  // UET_WRITE
  ses[1] = 0x03;  // SOM, EOM
  ses[3] = 0x07;  // message id 7
  ses[43] = 16;   // request length
  b.insert(b.end(), ses.begin(), ses.end());
  for (std::uint8_t i = 0; i < 16; ++i) b.push_back(static_cast<std::uint8_t>(0x40 + i));
  return b;
}

// The payloads here are opaque bytes, not commands of a profile.
d::options opaque() {
  d::options o;
  o.profile = nullptr;
  return o;
}

std::unique_ptr<d::tree> dissect(const byte_vector& f, const d::options& o) {
  auto t = std::make_unique<d::tree>();
  d::dissect_frame(*t, w::bytes(f.data(), f.size()), d::link_ethernet, o);
  return t;
}

}  // namespace

TEST_CASE("recognition: UDP flows are the same either way round") {
  const auto a = w::ip_address::v4(0xC0A8010A), b = w::ip_address::v4(0xC0A80114);
  CHECK(w::udp_flow::make(a, 40000, b, 50000) == w::udp_flow::make(b, 50000, a, 40000));
  CHECK(w::udp_flow::make(a, 40000, b, 50000) != w::udp_flow::make(a, 40001, b, 50000));
  CHECK(w::udp_flow::make(a, 1, a, 2) == w::udp_flow::make(a, 2, a, 1));  // one host, two ports
  const auto f = w::udp_flow::make(b, 9, a, 7);
  CHECK(f.a == a);
  CHECK(f.port_a == 7);
  // The IPv4 reader's maker orders the ends as make() does, whichever end is the lesser, and
  // the flows hash alike (a table finds either).
  const std::uint32_t ends[] = {0, 1, 0x0A000001, 0x0A000100, 0xC0A8010A, 0xFFFFFFFF};
  const std::uint16_t ports[] = {0, 7, 4793, 65535};
  for (const std::uint32_t s : ends)
    for (const std::uint32_t d : ends)
      for (const std::uint16_t sp : ports)
        for (const std::uint16_t dp : ports) {
          const auto v4 = w::udp_flow::make_v4(s, sp, d, dp);
          const auto gen = w::udp_flow::make(w::ip_address::v4(s), sp, w::ip_address::v4(d), dp);
          CHECK(v4 == gen);
          CHECK(w::udp_flow_hash{}({1, 2}, v4) == w::udp_flow_hash{}({1, 2}, gen));
        }
  // Flows that differ only where a short message leaves words out hash apart.
  const auto v6 =
      w::ip_address::v6(w::ipv6_address{0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  const auto v6_high = w::ip_address::v6(w::ipv6_address{0xFD});
  CHECK(w::udp_flow_hash{}({1, 2}, w::udp_flow::make(v6, 1, a, 2)) !=
        w::udp_flow_hash{}({1, 2}, w::udp_flow::make(v6_high, 1, a, 2)));
}

TEST_CASE("recognition: a flow found SUE stays SUE, its damaged PDUs included") {
  const auto rh = test_rh();
  const byte_vector good = sue_frame(40000, 50000, rh);
  const byte_vector bad = damaged(good);
  d::options o = opaque();  // no port named
  REQUIRE(o.udp_port_count == 0);

  SUBCASE("without a flow table each datagram is judged alone") {
    CHECK(dissect(good, o)->encap == "udp4");
    CHECK(dissect(bad, o)->encap == "ipv4/udp");
  }
  SUBCASE("with one, the flow's later datagrams are SUE whatever they hold") {
    d::flow_table flows;
    o.flows = &flows;
    CHECK(dissect(bad, o)->encap == "ipv4/udp");  // before the flow is known: UDP
    CHECK(flows.size() == 0);
    auto t = dissect(good, o);
    CHECK(t->encap == "udp4");
    CHECK(rcrc_status(*t) == "good");
    CHECK(flows.size() == 1);
    t = dissect(bad, o);
    CHECK(t->encap == "udp4");
    CHECK(rcrc_status(*t) == "bad");
    const auto* e = t->error_list().empty() ? nullptr : &t->error_list().back();
    REQUIRE(e);
    CHECK(e->code == w::errc::bad_checksum);
    CHECK(e->layer == "sue.rcrc");
    // The reply direction is the same flow.
    const byte_vector reply = damaged(sue_frame(50000, 40000, rh, 0xC0A80114, 0xC0A8010A));
    CHECK(dissect(reply, o)->encap == "udp4");
    // Another flow (another source port, another host) is not.
    CHECK(dissect(damaged(sue_frame(40001, 50000, rh)), o)->encap == "ipv4/udp");
    CHECK(dissect(damaged(sue_frame(40000, 50000, rh, 0xC0A8010B)), o)->encap == "ipv4/udp");
    CHECK(flows.size() == 1);
  }
  SUBCASE("heuristics off: nothing is found, so nothing is bound") {
    d::flow_table flows;
    o.flows = &flows;
    o.heuristics = false;
    CHECK(dissect(good, o)->encap == "ipv4/udp");
    CHECK(flows.size() == 0);
  }
  SUBCASE("a named port needs no binding") {
    d::flow_table flows;
    o.flows = &flows;
    o.add_udp_port(50000);
    CHECK(dissect(bad, o)->encap == "udp4");
    CHECK(flows.size() == 0);
  }
}

TEST_CASE("recognition: a datagram the capture cut is SUE on a flow or port seen SUE before") {
  // A header-only capture keeps the RH but not the R-CRC: the heuristic cannot confirm the
  // datagram by itself.
  w::reliability_header rh = test_rh();
  // The RH and the payload byte, not the R-CRC.
  const auto cut_of = [](const byte_vector& f) { return w::bytes(f.data(), pdu4_at + 8 + 1); };
  const auto dissect_cut = [&](const byte_vector& f, const d::options& o) {
    auto t = std::make_unique<d::tree>();
    d::dissect_frame(*t, cut_of(f), d::link_ethernet, o, f.size());
    return t;
  };
  const byte_vector data = sue_frame(40000, 50000, rh);
  d::options o = opaque();
  d::flow_table flows;
  o.flows = &flows;

  // Nothing seen before: the datagram stays UDP, with a note that says why and what to do.
  auto t = dissect_cut(data, o);
  CHECK(t->encap == "ipv4/udp");
  const auto& errs = t->error_list();
  REQUIRE(errs.size() == 2);  // the snapshot note and this one, no error
  const auto& e = errs[0].layer == "udp" ? errs[0] : errs[1];
  CHECK(e.layer == "udp");
  CHECK(e.level == w::severity::note);
  CHECK(e.code == w::errc::not_captured);
  CHECK(e.offset == pdu4_at);
  CHECK(e.needed == 8 + 1 + 4);
  CHECK(e.available == 9);
  CHECK(std::string(e.what).find("--udp-port") != std::string::npos);
  CHECK(flows.unconfirmed_count() == 1);
  CHECK_FALSE(flows.worth_rereading());
  // A cut datagram whose RH is not plausible is not counted.
  rh.ver = 1;
  CHECK(dissect_cut(sue_frame(40000, 50000, rh), o)->encap == "ipv4/udp");
  CHECK(flows.unconfirmed_count() == 1);
  rh.ver = 0;

  // A whole datagram on another port shows nothing about this one: no second reading.
  CHECK(dissect(sue_frame(40003, 50003, rh, 0xC0A8010D), o)->encap == "udp4");
  CHECK(flows.size() == 1);
  CHECK_FALSE(flows.worth_rereading());
  // A whole datagram of another flow on the same port shows the port SUE.
  const byte_vector other = sue_frame(40001, 50000, rh, 0xC0A8010B);
  CHECK(dissect(other, o)->encap == "udp4");
  CHECK(flows.worth_rereading());
  t = dissect_cut(data, o);
  CHECK(t->encap == "udp4");
  CHECK(rcrc_status(*t) == "not_captured");
  CHECK(t->error_list().size() == 1);
  CHECK(flows.size() == 3);  // bound by it
  // Whole and damaged on a port alone: the R-CRC still decides.
  CHECK(dissect(damaged(sue_frame(40002, 50000, rh, 0xC0A8010C)), o)->encap == "ipv4/udp");
  flows.reset_unconfirmed();
  CHECK(flows.unconfirmed_count() == 0);
  CHECK_FALSE(flows.worth_rereading());
}

TEST_CASE("recognition: an RH of another version on a named port, with a warning") {
  auto rh = test_rh();
  rh.ver = 1;
  const byte_vector f = sue_frame(40000, 50000, rh);
  d::options o = opaque();
  CHECK(dissect(f, o)->encap == "ipv4/udp");  // the heuristic wants version 0
  o.add_udp_port(50000);
  const auto t = dissect(f, o);
  CHECK(t->encap == "udp4");
  CHECK(rcrc_status(*t) == "good");
  CHECK(t->find("sue.rh.ver")->value == 1);
  CHECK(t->find("sue.rh.xpuid")->value == rh.xpuid);
  REQUIRE(t->error_list().size() == 1);
  const auto& e = t->error_list()[0];
  CHECK(e.code == w::errc::unsupported);
  CHECK(e.level == w::severity::warning);
  CHECK(e.layer == "sue.rh");
  CHECK(e.field == "sue.rh.ver");
  CHECK(e.value == 1);
  CHECK(e.offset == pdu4_at);
  CHECK_FALSE(t->has_errors());  // a warning: the PDU stays in the analysis
  CHECK(d::facts_of(*t, 1, 0));
}

TEST_CASE("recognition: Ultra Ethernet Transport on 4793 is never SUE") {
  // RUD request (type 2) with next header 3: the first byte 0x11 reads as RH version 0, op 1,
  // reserved bits zero, and the PSN 0x1000 leaves the RH's rsvd bits zero too: only the R-CRC
  // tells it from SUE.
  const byte_vector lookalike = uet_pds(2, 3, 0x1000);
  CHECK(lookalike[0] == 0x11);
  CHECK(lookalike[1] == 0x80);
  const auto as_rh = w::decode<w::reliability_header>(w::bytes(lookalike.data(), 8));
  REQUIRE(as_rh);
  CHECK(as_rh->ver == 0);
  CHECK(as_rh->rsv == 0);
  CHECK(as_rh->rsvd == 0);
  CHECK_FALSE(w::plausible_pdu(w::bytes(lookalike.data(), lookalike.size())));
  const std::vector<byte_vector> uet{lookalike, uet_pds(3, 3, 0x1000),  // ROD request
                                     uet_pds(7, 0, 5)};                 // ACK
  d::flow_table flows;
  d::options o = opaque();
  o.flows = &flows;
  for (const auto& pds : uet) {
    CAPTURE(pds[0]);
    for (const auto& f : {udp_frame(50000, uet_port, pds), udp_frame(uet_port, 50000, pds)}) {
      const auto t = dissect(f, o);
      CHECK(t->encap == "ipv4/udp");
      CHECK(t->find_layer("sue.rh") == nullptr);
      CHECK(t->error_list().empty());
      CHECK_FALSE(d::facts_of(*t, 1, 0));
    }
  }
  CHECK(flows.size() == 0);
}

TEST_CASE("ip_address: the text forms of RFC 791 and RFC 4291") {
  CHECK(w::parse_ip_address("192.168.1.10") == w::ip_address::v4(0xC0A8010A));
  CHECK(w::parse_ip_address("0.0.0.0") == w::ip_address::v4(0));
  CHECK(w::parse_ip_address("255.255.255.255") == w::ip_address::v4(0xFFFFFFFF));
  w::ipv6_address one{};
  one[15] = 1;
  CHECK(w::parse_ip_address("::1") == w::ip_address::v6(one));
  CHECK(w::parse_ip_address("::") == w::ip_address::v6({}));
  const w::ipv6_address plan = w::xpu_ipv6(0x00010203);
  CHECK(w::parse_ip_address("fd53:5545::1:203") == w::ip_address::v6(plan));
  CHECK(w::parse_ip_address("FD53:5545:0:0:0:0:1:203") == w::ip_address::v6(plan));
  w::ipv6_address lead{};
  lead[0] = 0x20;
  lead[1] = 0x01;
  CHECK(w::parse_ip_address("2001::") == w::ip_address::v6(lead));
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4 ", "a.b.c.d",
                          "1:2", ":1", "1:", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9",
                          "1:2:3:4:5:6:7", "1:2:3:4::5:6:7:8", "g::1"}) {
    CAPTURE(bad);
    CHECK_FALSE(w::parse_ip_address(bad));
  }
  static_assert(w::parse_ip_address("10.0.0.7")->ipv4() == 0x0A000007);
}

TEST_CASE("xpu map: the addressing plan is one map among others") {
  const w::xpu_map& plan = w::addressing_plan;
  CHECK(plan.xpu_of(w::ip_address::v4(w::xpu_ipv4(70))) == 70u);
  CHECK(plan.xpu_of(w::ip_address::v6(w::xpu_ipv6(70'000))) == 70'000u);
  CHECK_FALSE(plan.xpu_of(w::ip_address::v4(0xC0A8010A)));
  static_assert(w::addressing_plan.xpu_of(w::ip_address::v4(0x0A000102)) == 0x102u);
}

TEST_CASE("xpu map: read from text, every error naming its line") {
  SUBCASE("addresses, ids, comments and blank lines") {
    const auto m = d::parse_xpu_map(
        "# lab fabric\n"
        "192.168.1.10  7\n"
        "\n"
        "192.168.1.20\t0x14   # hexadecimal\r\n"
        "   fd00::14 20\n"
        "192.168.1.21 20\n"      // one XPU, two addresses (two ports)
        "192.168.1.10 7\n"       // the same line again: no conflict
        "10.0.0.9 4294967295");  // no final newline
    REQUIRE(m);
    CHECK(m->size() == 5);
    CHECK(m->xpu_of(w::ip_address::v4(0xC0A8010A)) == 7u);
    CHECK(m->xpu_of(w::ip_address::v4(0xC0A80114)) == 20u);
    CHECK(m->xpu_of(*w::parse_ip_address("fd00::14")) == 20u);
    CHECK(m->xpu_of(w::ip_address::v4(0x0A000009)) == 0xFFFFFFFFu);
    CHECK_FALSE(m->xpu_of(w::ip_address::v4(0x0A000007)));
    CHECK(d::parse_xpu_map("")->size() == 0);
  }
  // The text, the line at fault, what is wrong, the value reported, the lines read before.
  struct bad_case {
    const char* text;
    std::uint32_t line;
    std::string_view what;
    std::uint64_t value;
    std::size_t entries;
  };
  constexpr std::string_view bad_id = "XPU id is not a number from 0 to 4294967295";
  for (const auto& c : {
           bad_case{"10.0.0.1 1\n10.0.0.300 2\n", 2, "not an IPv4 or IPv6 address", 0, 1},
           bad_case{"# x\n\n10.0.0.1\n", 3, "an address without an XPU id", 0, 0},
           bad_case{"10.0.0.1 # 5\n", 1, "an address without an XPU id", 0, 0},
           bad_case{"10.0.0.1 seven\n", 1, bad_id, 0, 0},
           bad_case{"10.0.0.1 4294967296\n", 1, bad_id, 0, 0},
           bad_case{"10.0.0.1 0x\n", 1, bad_id, 0, 0},
           bad_case{"10.0.0.1 -1\n", 1, bad_id, 0, 0},
           bad_case{"10.0.0.1 1 2\n", 1, "more than an address and an XPU id", 0, 0},
           bad_case{"10.0.0.1 1\nfd00::1 2\n10.0.0.1 3\n", 3,
                    "address mapped to another XPU on an earlier line", 3, 2},
       }) {
    CAPTURE(c.text);
    const auto m = d::parse_xpu_map(c.text);
    CHECK_FALSE(m);
    CHECK(m.err.code == w::errc::bad_value);
    CHECK(m.err.layer == "xpu_map");
    CHECK(m.err.item == c.line);
    CHECK(m.err.what == c.what);
    CHECK(m.err.value == c.value);
    CHECK(m.value.size() == c.entries);
  }
  SUBCASE("a file") {
    const std::string path = "recognition_test_xpu_map.txt";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fputs("192.168.1.20 9\n", f);
    std::fclose(f);
    const auto m = d::read_xpu_map(path);
    std::remove(path.c_str());
    REQUIRE(m);
    CHECK(m->xpu_of(w::ip_address::v4(0xC0A80114)) == 9u);
    const auto none = d::read_xpu_map("no/such/xpu_map.txt");
    CHECK_FALSE(none);
    CHECK(none.err.item == 0);
    CHECK(none.err.what == "cannot open the file");
  }
}

TEST_CASE("endpoints: over IP the addresses, a destination XPU only from the map") {
  auto rh = test_rh();
  rh.xpuid = 7;
  rh.op = 2;
  const byte_vector f = sue_frame(40000, 50000, rh);
  d::options o = opaque();
  SUBCASE("no map: no destination XPU anywhere") {
    const auto t = dissect(f, o);
    CHECK(t->find("sue.dst_xpu") == nullptr);
    CHECK_FALSE(d::destination_xpu(*t));
    const auto facts = d::facts_of(*t, 1, 0);
    REQUIRE(facts);
    CHECK(facts->key.src == d::endpoint::of_ip(w::ip_address::v4(0xC0A8010A)));
    CHECK(facts->key.dst == d::endpoint::of_ip(w::ip_address::v4(0xC0A80114)));
    CHECK(facts->xpuid == 7);
    CHECK(d::to_string(facts->key.src) == "192.168.1.10");
    // The library's plan does not know these addresses either.
    o.xpus = &w::addressing_plan;
    CHECK(dissect(f, o)->find("sue.dst_xpu") == nullptr);
  }
  SUBCASE("the user's map names the destination") {
    const auto m = d::parse_xpu_map("192.168.1.10 7\n192.168.1.20 9\n");
    REQUIRE(m);
    o.xpus = &m.value;
    const auto t = dissect(f, o);
    const auto* dst = t->find("sue.dst_xpu");
    REQUIRE(dst);
    CHECK(dst->value == 9);
    CHECK(dst->generated);
    CHECK(t->layers[dst->layer].name == "sue.rh");
    const auto facts = d::facts_of(*t, 1, 0);
    REQUIRE(facts);
    CHECK(facts->key.src == d::endpoint::of_xpu(7));
    CHECK(facts->key.dst == d::endpoint::of_xpu(9));
    CHECK(d::to_string(facts->key.dst) == "XPU 9");
  }
  SUBCASE("IPv6 addresses as text") {
    w::ipv6_address a{};
    a[0] = 0xFD;
    a[15] = 0x14;
    CHECK(d::to_string(d::endpoint::of_ip(w::ip_address::v6(a))) == "fd00::14");
  }
}

TEST_CASE("analysis: connections between IP addresses, ACKs on the reverse direction") {
  // 192.168.1.10 (XPU 7) sends PSNs 1 and 2 to 192.168.1.20 (XPU 9), which ACKs 2.
  const byte_vector here_to_there[] = {
      sue_frame(40000, 50000, {.op = 2, .xpuid = 7, .npsn = 1}),
      sue_frame(40000, 50000, {.op = 2, .xpuid = 7, .npsn = 2}),
  };
  const byte_vector ack =
      sue_frame(50000, 40000, {.op = 0, .xpuid = 9, .npsn = 0, .apsn = 2}, 0xC0A80114, 0xC0A8010A);
  d::analysis an;
  std::uint64_t n = 0;
  d::options o = opaque();
  for (const auto& f : here_to_there) {
    const auto t = dissect(f, o);
    ++n;
    const auto facts = d::facts_of(*t, n, static_cast<std::int64_t>(n) * 100);
    REQUIRE(facts);
    an.add(*facts);
  }
  const auto t = dissect(ack, o);
  const auto facts = d::facts_of(*t, ++n, 1000);
  REQUIRE(facts);
  const auto& r = an.add(*facts);
  CHECK(r.get(d::result_value::acked_connection) == 0u);
  CHECK(r.get(d::result_value::ack_rtt) == 800u);  // from PSN 2's first transmission at 200
  // The ACK carries a payload byte here, so it is also a PDU of the reverse connection.
  REQUIRE(an.connections().size() == 2);
  const auto& c = an.connections()[0];
  CHECK(an.key(0).src == d::endpoint::of_ip(w::ip_address::v4(0xC0A8010A)));
  CHECK(an.key(0).dst == d::endpoint::of_ip(w::ip_address::v4(0xC0A80114)));
  CHECK(c.src_xpu == 7);
  CHECK(c.pdus == 2);
  CHECK(c.acks == 1);
  CHECK(an.connections()[1].src_xpu == 9);
}

TEST_CASE("flow_table: at most max_flows flows remembered; their ports still are") {
  const auto flow = [](std::uint16_t a, std::uint16_t b) {
    return w::udp_flow::make(w::ip_address::v4(0x7F000001), a, w::ip_address::v4(0x7F000001), b);
  };
  d::flow_table t(2);
  t.bind(flow(1000, 4793));
  t.bind(flow(1001, 4793));
  const auto v = t.version();
  t.bind(flow(1002, 4793));  // a third: not remembered, its ports are
  CHECK(t.size() == 2);
  CHECK(t.not_remembered() == 1);
  CHECK(!t.bound(flow(1002, 4793)));
  CHECK(t.port_bound(1002));
  CHECK(t.version() == v + 1);
  t.bind(flow(1002, 4793));  // again: nothing the table answers changes
  CHECK(t.version() == v + 1);
  CHECK(t.not_remembered() == 2);
  t.bind(flow(1000, 4793));  // a remembered one: nothing
  CHECK(t.not_remembered() == 2);
  // A cut datagram's flow left unconfirmed: worth reading again once a port of it is bound.
  t.unconfirmed(flow(2000, 3000));
  CHECK(!t.worth_rereading());
  t.bind(flow(3000, 5000));
  CHECK(t.worth_rereading());
  t.reset_unconfirmed();
  CHECK(!t.worth_rereading());
}
