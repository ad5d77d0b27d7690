// RDMA QoS formats (seed 004, the RDMA QoS thesis): golden bytes for every field table, worked
// out by hand from the tables' bit positions (bit 0 = most significant bit of byte 0), plus
// descriptor emit/parse, the send unit's packets and the ExaJet packet codec. CRC values come
// from the independent bit-by-bit CRC in support.hpp, not from the library.
#include <scaleup/rdma/exajet_packet.hpp>
#include <scaleup/rdma/pending_transactions.hpp>
#include <scaleup/rdma/send_unit.hpp>
#include <scaleup/rdma/transaction_table.hpp>
#include <scaleup/rdma/transfer_descriptor.hpp>
#include <scaleup/rdma/transfer_metadata.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "support.hpp"

namespace {

namespace r = scaleup::rdma;
namespace w = scaleup::wire;
using scaleup::test::byte_vector;
using scaleup::test::ref_crc32;
using w::errc;

template <std::size_t N>
byte_vector vec(const std::array<std::uint8_t, N>& a) {
  return byte_vector(a.begin(), a.end());
}

template <class T>
byte_vector image(const T& v) {
  const auto b = w::to_bytes(v);
  REQUIRE(b);
  return vec(*b);
}

// ---- transfer descriptors (Thesis 2, Fig. 2.3; layout: scaleup) ----------------------------

// src 0x0011223344556677, dst 0x0002000000001000 (coordinates 2), size 0x00030000;
// byte 20 = priority 0101, inline 0, cm 1, multipath 0, notify 0 = 0x54; enq = bit 255 = 1.
const byte_vector memory_golden{
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
    0x00, 0x03, 0x00, 0x00, 0x54, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};

TEST_CASE("rdma: 32-byte memory descriptor golden bytes") {
  const r::memory_descriptor d{.src_addr = 0x0011223344556677,
                               .dst_addr = 0x0002000000001000,
                               .size = 0x30000,
                               .priority = 5,
                               .cm = 1};
  CHECK(image(d) == memory_golden);
  const auto back = w::decode<r::memory_descriptor>(memory_golden);
  REQUIRE(back);
  CHECK(*back == d);

  const r::transfer t{.src = 0x0011223344556677,
                      .dst = 0x0002000000001000,
                      .size = 0x30000,
                      .priority = 5,
                      .cm = true};
  CHECK(r::descriptor_size(t) == 32);
  std::array<std::uint8_t, 64> out{};
  const auto n = r::emit_descriptor(t, out);
  REQUIRE(n);
  CHECK(*n == 32);
  CHECK(byte_vector(out.begin(), out.begin() + 32) == memory_golden);
  const auto parsed = r::parse_descriptor(memory_golden);
  REQUIRE(parsed);
  CHECK(*parsed == t);
}

// Byte 20 = priority 1111, inline 0, cm 1, multipath 1, notify 1 = 0xF7; line 0's enq (byte
// 31) is 0 since a line follows; line 1: notification address, value, 64 reserved bits, 63
// reserved bits and enq = 1.
const byte_vector notify_golden{
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,
    0x00, 0x00, 0x00, 0x64, 0xF7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x00, 0xCA, 0xFE, 0xBA, 0xBE, 0x12, 0x34, 0x56, 0x78,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};

TEST_CASE("rdma: 64-byte memory descriptor with notification golden bytes") {
  const r::transfer t{.src = 0x1000,
                      .dst = 0x0001000000002000,
                      .size = 100,
                      .priority = 15,
                      .cm = true,
                      .multipath = true,
                      .notify = true,
                      .notify_addr = 0x000100000000F000,
                      .notify_value = 0xCAFEBABE12345678};
  CHECK(r::descriptor_size(t) == 64);
  std::array<std::uint8_t, 64> out{};
  REQUIRE(r::emit_descriptor(t, out));
  CHECK(vec(out) == notify_golden);
  const auto parsed = r::parse_descriptor(notify_golden);
  REQUIRE(parsed);
  CHECK(*parsed == t);
  // Line 0 alone: the enq bit says a second line is due.
  const auto cut = r::parse_descriptor(w::bytes(notify_golden.data(), 32));
  CHECK(cut.err.code == errc::truncated);
}

// "hello" in word 0; byte 20 = priority 0000, inline 1 = 0x08.
const byte_vector inline_golden{
    0x68, 0x65, 0x6C, 0x6C, 0x6F, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
    0x00, 0x00, 0x00, 0x05, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};

// Payload 01..14 (20 bytes): bytes 1-8 in word 0, 9-20 at the start of line 1; byte 20 =
// priority 0011, inline 1 = 0x38.
const byte_vector inline_long_golden{
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
    0x00, 0x00, 0x00, 0x14, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};

TEST_CASE("rdma: inline descriptors golden bytes (8 and 20 bytes of payload)") {
  r::transfer s{.dst = 0x0003000000000040, .size = 5, .is_inline = true};
  s.payload = {'h', 'e', 'l', 'l', 'o'};
  std::array<std::uint8_t, 64> out{};
  const auto n = r::emit_descriptor(s, out);
  REQUIRE(n);
  CHECK(*n == 32);
  CHECK(byte_vector(out.begin(), out.begin() + 32) == inline_golden);
  const auto ps = r::parse_descriptor(inline_golden);
  REQUIRE(ps);
  CHECK(*ps == s);

  r::transfer l{.dst = 0x0003000000000080, .size = 20, .priority = 3, .is_inline = true};
  for (std::uint8_t i = 0; i < 20; ++i) l.payload[i] = static_cast<std::uint8_t>(i + 1);
  CHECK(r::descriptor_size(l) == 64);
  REQUIRE(r::emit_descriptor(l, out));
  CHECK(vec(out) == inline_long_golden);
  const auto pl = r::parse_descriptor(inline_long_golden);
  REQUIRE(pl);
  CHECK(*pl == l);
}

TEST_CASE("rdma: descriptor refusals and checks") {
  std::array<std::uint8_t, 64> out{};
  r::transfer big{.size = 33, .is_inline = true};
  CHECK(r::emit_descriptor(big, out).err.code == errc::value_too_big);
  r::transfer flow{.size = 8, .is_inline = true, .cm = true};
  CHECK(!r::emit_descriptor(flow, out));

  // A short inline descriptor claiming 9 bytes: only 8 fit.
  byte_vector bad = inline_golden;
  bad[19] = 9;
  CHECK(r::parse_descriptor(bad).err.code == errc::bad_length);
  // Reserved bits set: decoded with a warning left to the dissector (value kept).
  byte_vector rsvd = memory_golden;
  rsvd[24] = 0x80;
  CHECK(r::parse_descriptor(rsvd));
  // Too short for a line.
  CHECK(r::parse_descriptor(w::bytes(memory_golden.data(), 31)).err.code == errc::truncated);
}

// ---- Transaction Table entry (Thesis 3.3) -------------------------------------------------

// pd 3 -> bytes 16-17; seq 341 (14 bits 00000101010101) and bytes sent 0xABCD share bytes
// 18-21: 0x05, 0x56, 0xAF, then 001101 + cm 1 + initialized 0 = 0x36; byte 23 = unused0's last
// bit, done 0, notify 1, chained 1, block size 0001 = 0x31; block size 0x1234 ends in byte 25
// (0x23, 0x40); has next = bit 216 = 0x80 in byte 27.
TEST_CASE("rdma: block descriptor golden bytes and padding") {
  const r::block_descriptor b{.src_addr = 0x10000000,
                              .dst_addr = 0x0002000000010000,
                              .pd = 3,
                              .seq = 341,
                              .bytes_sent = 0xABCD,
                              .cm = 1,
                              .notify = 1,
                              .chained = 1,
                              .block_size = 0x1234,
                              .has_next = 1};
  const byte_vector golden{
      0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
      0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x05, 0x56, 0xAF, 0x36,
      0x00, 0x31, 0x23, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00,
  };
  CHECK(image(b) == golden);
  const auto back = w::decode<r::block_descriptor>(golden);
  REQUIRE(back);
  CHECK(*back == b);
  // 248 listed bits + 8 of padding = the stated 256.
  CHECK(w::layout<r::block_descriptor>::size * 8 == 256);
  CHECK(w::field_infos<r::block_descriptor>.back().width == 8);
  CHECK(r::block_size_bytes(r::block_size_field(65536)) == 65536);
  CHECK(r::block_size_field(65536) == 0);
}

// ---- Pending Transactions Table entry (Thesis 3.5) ----------------------------------------

// valid 1 | issue time 0x89ABCDEF | seq 0xABC | transfer 1023 | priority 7 | QoS: class 1, FID
// 130, reserved 0 | total blocks 70000 | last 1 | has notification 1 | block sequence 0x123 |
// retries 5 | reserved 0 | 23 bits of padding.
TEST_CASE("rdma: pending transaction entry golden bytes (121 listed bits in 144)") {
  const r::pending_entry p{.valid = 1,
                           .issue_time = 0x89ABCDEF,
                           .seq = 0xABC,
                           .transfer = 1023,
                           .priority = 7,
                           .qos_class = 1,
                           .qos_fid = 130,
                           .total_blocks = 70000,
                           .last = 1,
                           .has_notification = 1,
                           .block_seq = 0x123,
                           .retries = 5};
  const byte_vector golden{0xC4, 0xD5, 0xE6, 0xF7, 0xD5, 0xE3, 0xFF, 0x75, 0x04,
                           0x00, 0x11, 0x17, 0x0C, 0x48, 0xD4, 0x00, 0x00, 0x00};
  CHECK(image(p) == golden);
  const auto back = w::decode<r::pending_entry>(golden);
  REQUIRE(back);
  CHECK(*back == p);
  CHECK(w::layout<r::pending_entry>::size * 8 == 144);
  CHECK(w::field_infos<r::pending_entry>.back().width == 23);
  // Padding set: kept, reported as a warning, not an error.
  byte_vector pad = golden;
  pad[17] = 0x01;
  const auto warned = w::decode<r::pending_entry>(pad);
  CHECK(warned);
  CHECK(warned->pad == 1);
}

// ---- Transfer Metadata Table entry (Thesis 3.2) -------------------------------------------

// flow ID 192 | bitmap 0x8421 | next TID 9 | in queue 1 | block number 65537 | outstanding 2 |
// last issued 1 | last ACKed 0 | last TID 783 | last seq 0xFED | 4 bits of padding.
TEST_CASE("rdma: transfer metadata golden bytes (76 listed bits, padded to 80)") {
  const r::transfer_metadata m{.flow_id = 192,
                               .tid_bitmap = 0x8421,
                               .next_tid = 9,
                               .in_sched_fifo = 1,
                               .block_number = 65537,
                               .outstanding = 2,
                               .last_issued = 1,
                               .last_tid = 783,
                               .last_seq = 0xFED};
  CHECK(image(m) == byte_vector{0x60, 0x42, 0x10, 0xCD, 0x00, 0x01, 0x2B, 0x0F, 0xFE, 0xD0});
  CHECK(m.total_acks() == 65535);
}

// ---- ExaJet packets (Thesis Terminology; layout: scaleup) ----------------------------------

// type 0000, last 1, notify 0, cm 1, multipath 1 = 0x0B; TID 770 (1100000010) and seq 0x1ABC
// fill bytes 1-3 (0xC0 0x9A 0xBC); block seq 0x155, index 63 and length 1024 fill bytes 4-7
// (0x05 0x57 0xF4 0x00); then the destination address.
const byte_vector data_golden{0x0B, 0xC0, 0x9A, 0xBC, 0x05, 0x57, 0xF4, 0x00,
                              0x00, 0x02, 0x00, 0x00, 0x00, 0xFF, 0xFC, 0x00};

// source coordinates 1, pd 15, channel 2047, 64 packets, priority 9 (bytes 4-6: 0xFF 0xF0
// 0x24), reserved, CRC.
const byte_vector footer_golden{0x00, 0x01, 0x00, 0x0F, 0xFF, 0xF0, 0x24, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0xDE, 0xAD, 0xBE, 0xEF};

TEST_CASE("rdma: ExaJet data header and footer golden bytes") {
  const r::data_header h{.last = 1,
                         .cm = 1,
                         .multipath = 1,
                         .tid = 770,
                         .seq = 0x1ABC,
                         .block_seq = 0x155,
                         .pkt = 63,
                         .len = 1024,
                         .dst_addr = 0x0002000000FFFC00};
  CHECK(image(h) == data_golden);
  const auto back = w::decode<r::data_header>(data_golden);
  REQUIRE(back);
  CHECK(*back == h);

  const r::packet_footer f{
      .src_coord = 1, .pd = 15, .channel = 2047, .pkts = 64, .priority = 9, .crc = 0xDEADBEEF};
  CHECK(image(f) == footer_golden);
  // The destination coordinates sit in header bits 64-79 whatever the type.
  CHECK(scaleup::test::be16(data_golden, 8) == 2);
}

// NACK 0011, cause 1 = 0x31; TID 515 and seq 0x0FFF, block seq 0x0FFE; coordinates 7 in bits
// 64-79.
TEST_CASE("rdma: ExaJet ACK/NACK header golden bytes") {
  const r::response_header h{
      .type = 3, .cause = 1, .tid = 515, .seq = 0x0FFF, .block_seq = 0x0FFE, .dst_coord = 7};
  CHECK(image(h) == byte_vector{0x31, 0x80, 0xCF, 0xFF, 0x3F, 0xF8, 0x00, 0x00, 0x00, 0x07, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x00});
  CHECK(w::decode<r::response_header>(image(h))->tid == 515);
}

// control 0100, TID 1023, seq 4095, block seq 4094, 65537 blocks, notification address.
TEST_CASE("rdma: ExaJet control header golden bytes") {
  const r::control_header h{.tid = 1023,
                            .seq = 4095,
                            .block_seq = 4094,
                            .blocks = 65537,
                            .notify_addr = 0x0002000000ABC000};
  CHECK(image(h) == byte_vector{0x40, 0xFF, 0xCF, 0xFF, 0x3F, 0xF9, 0x00, 0x01, 0x00, 0x02, 0x00,
                                0x00, 0x00, 0xAB, 0xC0, 0x00});
  r::control_header wrong = h;
  wrong.type = 2;
  std::array<std::uint8_t, 16> out{};
  CHECK(w::encode(wrong, out).err.code == errc::bad_value);
}

TEST_CASE("rdma: encode_packet writes header | payload | footer with the CRC") {
  r::packet p;
  p.type = r::packet_type::write;
  p.data = r::data_header{.tid = 5, .seq = 9, .block_seq = 9, .len = 4, .dst_addr = 0x10};
  p.footer = r::packet_footer{.src_coord = 1, .channel = 3, .pkts = 1};
  const byte_vector payload{0xAA, 0xBB, 0xCC, 0xDD};
  std::array<std::uint8_t, 64> out{};
  const auto n = r::encode_packet(p, payload, out);
  REQUIRE(n);
  CHECK(*n == 36);
  // Header by hand: type 0, flags 0; TID 5 = 0000000101 then seq 9 = 00000000001001:
  // 0x00 0x01 0x40 0x09; block seq 9 = bytes 4-5 0x00 0x24; index 0, length 4 = 0x00 0x04.
  const byte_vector header{0x00, 0x01, 0x40, 0x09, 0x00, 0x24, 0x00, 0x04,
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
  CHECK(byte_vector(out.begin(), out.begin() + 16) == header);
  CHECK(byte_vector(out.begin() + 16, out.begin() + 20) == payload);
  const std::uint32_t crc = ref_crc32(out.data(), 20);
  CHECK(scaleup::test::be32(out, 32) == crc);

  const auto d = r::decode_packet(w::bytes(out.data(), 36));
  CHECK(d.ok());
  CHECK(d.crc_ok);
  CHECK(d.errors.empty());
  CHECK(d.p.type == r::packet_type::write);
  CHECK(d.p.data == p.data);
  CHECK(d.p.footer.crc == crc);
  CHECK(d.p.payload_len == 4);

  // Refusals: payload length disagreeing with the header; more than 1024 bytes.
  CHECK(r::encode_packet(p, w::bytes(payload.data(), 3), out).err.code == errc::bad_length);
  r::packet huge = p;
  huge.data.len = 1025;
  CHECK(r::encode_packet(huge, {}, out).err.code == errc::value_too_big);
}

TEST_CASE("rdma: decode_packet reports truncation, types, lengths, CRC and reserved bits") {
  CHECK(r::decode_packet(w::bytes(data_golden.data(), 16)).errors[0].code == errc::truncated);

  r::packet ack;
  ack.type = r::packet_type::ack;
  ack.response = r::response_header{.tid = 7, .seq = 3, .block_seq = 2, .dst_coord = 1};
  std::array<std::uint8_t, 32> out{};
  REQUIRE(r::encode_packet(ack, {}, out));
  auto d = r::decode_packet(out);
  CHECK(d.ok());
  CHECK(d.p.type == r::packet_type::ack);
  CHECK(d.p.response.tid == 7);

  auto bad_crc = out;
  bad_crc[31] ^= 1;
  d = r::decode_packet(bad_crc);
  CHECK(!d.ok());
  CHECK(!d.crc_ok);
  CHECK(d.errors[0].code == errc::bad_checksum);

  auto rsvd = out;
  rsvd[15] = 1;  // reserved bits of the response header
  d = r::decode_packet(rsvd);
  CHECK(d.errors[0].code == errc::reserved_nonzero);
  CHECK(d.errors[0].level == w::severity::warning);

  auto unknown = out;
  unknown[0] = 0x90;
  d = r::decode_packet(unknown);
  CHECK(d.errors[0].code == errc::bad_value);
  CHECK(d.errors[0].field == "rdma.pkt.type");

  // A control packet must carry its 8-byte notification value.
  r::packet ctl;
  ctl.type = r::packet_type::control;
  ctl.control = r::control_header{.tid = 1, .blocks = 1};
  std::array<std::uint8_t, 40> cbuf{};
  const byte_vector value{1, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE(r::encode_packet(ctl, value, cbuf));
  CHECK(r::decode_packet(cbuf).ok());
  CHECK(r::decode_packet(w::bytes(cbuf.data(), 32)).errors[0].code == errc::bad_length);
  CHECK(w::decode<r::control_payload>(w::bytes(cbuf.data() + 16, 8))->value == 0x0102030405060708);
}

TEST_CASE("rdma: read_packet, the inverse of encode_packet") {
  r::packet p;
  p.type = r::packet_type::inline_write;
  p.data = r::data_header{.tid = 77, .seq = 12, .block_seq = 10, .len = 6, .dst_addr = 0x40};
  p.footer = r::packet_footer{.src_coord = 2, .pd = 1, .channel = 9, .pkts = 3, .priority = 5};
  const byte_vector payload{1, 2, 3, 4, 5, 6};
  std::array<std::uint8_t, 64> out{};
  const auto n = r::encode_packet(p, payload, out);
  REQUIRE(n);
  const auto d = r::read_packet(w::bytes(out.data(), *n));
  CHECK(d.errors.empty());
  CHECK(d.ok());
  CHECK(d.known_type());
  CHECK(d.p.type == r::packet_type::inline_write);
  r::data_header want = p.data;
  want.type = static_cast<std::uint8_t>(r::packet_type::inline_write);
  CHECK(d.p.data == want);
  CHECK(d.payload_offset == 16);
  CHECK(d.payload.data() == out.data() + 16);
  CHECK(byte_vector(d.payload.begin(), d.payload.end()) == payload);
  CHECK_FALSE(d.notification);
  CHECK(d.p.footer.channel == 9);
  CHECK(d.p.footer.crc == ref_crc32(out.data(), 22));
  CHECK(d.crc_ok);
  CHECK(d.crc_computed == d.p.footer.crc);

  // A control packet's 8-byte value, read as its own header.
  r::packet ctl;
  ctl.type = r::packet_type::control;
  ctl.control = r::control_header{.tid = 1, .blocks = 1};
  const byte_vector value{1, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE(r::encode_packet(ctl, value, out));
  const auto c = r::read_packet(w::bytes(out.data(), 40));
  REQUIRE(c.notification);
  CHECK(c.notification->value == 0x0102030405060708);
  CHECK(c.ok());

  // Where each problem was found: header, payload, footer. An ACK carries no payload; this one
  // has 8 bytes, a reserved bit set and a CRC off by one.
  r::packet ack;
  ack.type = r::packet_type::ack;
  ack.response = r::response_header{.tid = 7, .seq = 3, .block_seq = 2, .dst_coord = 1};
  std::array<std::uint8_t, 32> a{};
  REQUIRE(r::encode_packet(ack, {}, a));
  byte_vector bad(a.begin(), a.begin() + 16);
  bad[7] |= 0x01;  // bit 63: the last of rdma.ack.rsvd
  bad.insert(bad.end(), 8, 0x99);
  bad.insert(bad.end(), a.begin() + 16, a.end());
  const std::uint32_t crc = ref_crc32(bad.data(), 24) ^ 1;
  for (int i = 0; i < 4; ++i) bad[36 + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  const auto e = r::read_packet(bad);
  REQUIRE(e.errors.size() == 3);
  CHECK(e.errors[0].code == errc::reserved_nonzero);
  CHECK(e.errors[1].code == errc::bad_length);
  CHECK(e.errors[2].code == errc::bad_checksum);
  CHECK(e.errors[2].what == "CRC does not match; value is the CRC over header and payload");
  CHECK(e.errors[2].value == (crc ^ 1));
  CHECK(e.errors_before_payload == 1);
  CHECK(e.errors_before_footer == 2);
  CHECK(e.payload.size() == 8);

  // Unknown type: only the type nibble is read.
  auto unknown = out;
  unknown[0] = 0xF0;
  const auto u = r::read_packet(w::bytes(unknown.data(), 40));
  CHECK_FALSE(u.known_type());
  CHECK(u.errors[0].field == "rdma.pkt.type");
  CHECK(u.errors[0].value == 15);

  // The names it had: decode_packet reads the same.
  CHECK(r::decode_packet(w::bytes(out.data(), 40)).p == c.p);
}

TEST_CASE("rdma: the send unit cuts a block into 1 KB packets") {
  const r::block_descriptor b{
      .dst_addr = 0x0001000000000400, .pd = 2, .seq = 17, .cm = 1, .block_size = 2500};
  const r::pending_entry p{
      .valid = 1, .seq = 17, .transfer = 130, .priority = 4, .qos_class = 2, .block_seq = 12};
  const auto p0 = r::block_packet(b, p, 770, 9, 0);
  const auto p2 = r::block_packet(b, p, 770, 9, 2);
  CHECK(p0.data.len == 1024);
  CHECK(p0.data.last == 0);
  CHECK(p0.data.dst_addr == 0x0001000000000400);
  CHECK(p0.footer.pkts == 3);
  CHECK(p2.data.len == 452);
  CHECK(p2.data.last == 1);
  CHECK(p2.data.pkt == 2);
  CHECK(p2.data.dst_addr == 0x0001000000000400 + 2048);
  CHECK(p2.data.seq == 17);
  CHECK(p2.data.block_seq == 12);
  CHECK(p2.data.multipath == 1);
  CHECK(p2.footer.channel == 130);
  CHECK(p2.footer.src_coord == 9);
  CHECK(p2.footer.pd == 2);
  // A full block: 64 packets of 1024 bytes.
  const r::block_descriptor full{.block_size = 0};
  CHECK(r::block_packet(full, p, 1, 0, 63).data.len == 1024);
  CHECK(r::block_packet(full, p, 1, 0, 63).footer.pkts == 64);
  CHECK(r::block_packet(full, p, 1, 0, 63).data.last == 1);
}

}  // namespace
