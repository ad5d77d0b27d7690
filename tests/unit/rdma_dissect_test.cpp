// Dissection of ExaJet packets (dissect/rdma.hpp) into the tree the CLI and the Wireshark
// plugin read: layers, field values, computed fields and errors, for packets the library
// encodes and for damaged ones.
#include <scaleup/dissect/rdma.hpp>
#include <scaleup/dissect/tree.hpp>
#include <scaleup/rdma/exajet_packet.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string_view>

namespace {

namespace r = scaleup::rdma;
namespace d = scaleup::dissect;
namespace w = scaleup::wire;
using w::errc;

template <std::size_t N>
d::tree dissect(const std::array<std::uint8_t, N>& buf, std::size_t n) {
  d::tree t;
  t.frame_length = static_cast<std::uint32_t>(n);
  d::dissect_rdma_packet(t, w::bytes(buf.data(), n));
  return t;
}

std::uint64_t value(const d::tree& t, std::string_view filter) {
  const auto* f = t.find(filter);
  REQUIRE(f != nullptr);
  return f->value;
}

TEST_CASE("rdma dissect: a re-issued data packet, field by field") {
  r::packet p;
  p.type = r::packet_type::write;
  p.data = r::data_header{.last = 1,
                          .cm = 1,
                          .tid = 513,
                          .seq = 40,
                          .block_seq = 33,
                          .pkt = 2,
                          .len = 5,
                          .dst_addr = 0x0002000000000800};
  p.footer = r::packet_footer{.src_coord = 1, .pd = 3, .channel = 200, .pkts = 3, .priority = 4};
  const std::array<std::uint8_t, 5> payload{1, 2, 3, 4, 5};
  std::array<std::uint8_t, 64> buf{};
  const auto n = r::encode_packet(p, payload, buf);
  REQUIRE(n);
  const auto t = dissect(buf, *n);
  CHECK(t.encap == "rdma");
  REQUIRE(t.layer_count == 3);
  CHECK(t.layers[0].name == "rdma.pkt");
  CHECK(t.layers[1].name == "rdma.payload");
  CHECK(t.layers[1].offset == 16);
  CHECK(t.layers[1].length == 5);
  CHECK(t.layers[2].name == "rdma.ftr");
  CHECK(t.layers[2].offset == 21);
  CHECK(value(t, "rdma.pkt.tid") == 513);
  CHECK(value(t, "rdma.pkt.seq") == 40);
  CHECK(value(t, "rdma.pkt.block_seq") == 33);
  CHECK(value(t, "rdma.pkt.reissue") == 1);
  CHECK(value(t, "rdma.pkt.dst_addr") == 0x0002000000000800);
  CHECK(value(t, "rdma.payload.len") == 5);
  CHECK(value(t, "rdma.ftr.channel") == 200);
  CHECK(value(t, "rdma.ftr.crc.status") == 0);
  CHECK(t.error_count == 0);
  CHECK(t.find("rdma.pkt.tid")->bit == 8);
  CHECK(t.find("rdma.ftr.crc")->bit == (21 + 12) * 8);

  // A flipped payload bit: the CRC says so, with the value it should have had.
  auto bad = buf;
  bad[17] ^= 0x10;
  const auto tb = dissect(bad, *n);
  CHECK(value(tb, "rdma.ftr.crc.status") == 1);
  REQUIRE(tb.error_count == 1);
  CHECK(tb.errors[0].code == errc::bad_checksum);
  CHECK(tb.errors[0].field == "rdma.ftr.crc");
}

TEST_CASE("rdma dissect: control and ACK packets, damaged packets") {
  r::packet c;
  c.type = r::packet_type::control;
  c.control = r::control_header{
      .tid = 7, .seq = 9, .block_seq = 8, .blocks = 2, .notify_addr = 0x0001000000F00000};
  const std::array<std::uint8_t, 8> v{0, 0, 0, 0, 0xCA, 0xFE, 0xF0, 0x0D};
  std::array<std::uint8_t, 64> buf{};
  const auto n = r::encode_packet(c, v, buf);
  REQUIRE(n);
  auto t = dissect(buf, *n);
  REQUIRE(t.layer_count == 3);
  CHECK(t.layers[0].name == "rdma.ctl");
  CHECK(t.layers[1].name == "rdma.ctl.payload");
  CHECK(value(t, "rdma.ctl.value") == 0xCAFEF00D);
  CHECK(value(t, "rdma.ctl.blocks") == 2);
  CHECK(t.error_count == 0);

  r::packet a;
  a.type = r::packet_type::nack;
  a.response = r::response_header{.cause = 1, .tid = 7, .seq = 9, .block_seq = 8, .dst_coord = 1};
  const auto m = r::encode_packet(a, {}, buf);
  REQUIRE(m);
  t = dissect(buf, *m);
  REQUIRE(t.layer_count == 2);
  CHECK(t.layers[0].name == "rdma.ack");
  CHECK(t.find("rdma.ack.type")->value_name() == "NACK");
  CHECK(t.find("rdma.ack.cause")->value_name() == "missing packet");

  t = dissect(buf, 20);
  REQUIRE(t.error_count == 1);
  CHECK(t.errors[0].code == errc::truncated);

  auto unknown = buf;
  unknown[0] = 0xF0;
  t = dissect(unknown, *m);
  CHECK(t.has_errors());
  CHECK(t.errors[0].field == "rdma.pkt.type");

  // An ACK with payload bytes: the length is wrong, the rest still shows.
  std::array<std::uint8_t, 64> longer{};
  for (std::size_t i = 0; i < 16; ++i) longer[i] = buf[i];
  t = dissect(longer, 36);
  CHECK(t.find("rdma.ack.tid") != nullptr);
  CHECK(t.find("rdma.payload.len") != nullptr);
  bool length_error = false;
  for (const auto& e : t.error_list()) length_error = length_error || e.code == errc::bad_length;
  CHECK(length_error);
}

}  // namespace
