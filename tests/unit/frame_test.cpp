// Emit side of the encapsulations (include/scaleup/wire/frame.hpp).
//
// Every golden frame below is written byte by byte from decisions.md and the header tables'
// documented layouts, never produced by the code under test. The only computed constants are
// the R-CRC and the IPv4/UDP checksums; their values were worked out outside the library and
// are cross-checked here by a bitwise reference CRC-32 and a reference ones'-complement sum
// that share no code with scaleup (support.hpp).
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace w = scaleup::wire;
using scaleup::test::be16;
using scaleup::test::be32;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::hex;
using scaleup::test::params_for;
using scaleup::test::ref_crc32;
using scaleup::test::ref_sum;
using scaleup::test::test_rh;

byte_vector zeros(std::size_t n) { return byte_vector(n, 0); }

// ---- the PDU every golden carries ---------------------------------------------------------

// test_rh() (support.hpp): ver 0, op ACK (0), rsv 0, xpuid 1 | npsn 0x1234 | vc 1, rsvd 0,
// partition 5 | apsn 0x0042. Word 0: 00 00 00 0000000001 -> 0x0001; word 1: 01 0000 0000000101
// -> 0x4005.
const byte_vector kRh{0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42};
const byte_vector kPayload{0xAA, 0xBB, 0xCC};
const byte_vector kRcrc{0x63, 0x23, 0xB8, 0x80};  // CRC-32 of kRh + kPayload, big-endian
const byte_vector kPdu = cat({kRh, kPayload, kRcrc});

// Addresses: src XPU 1, dst XPU 2.
const byte_vector kMacDst{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};  // 02:00 + 32-bit id
const byte_vector kMacSrc{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
const byte_vector kAfh1Da{0x42, 0x53, 0x55, 0x45, 0x00, 0x02};  // prefix 0x42535545 + 16-bit id
const byte_vector kAfh1Sa{0x42, 0x53, 0x55, 0x45, 0x00, 0x01};
const byte_vector kIp6Src{0xFD, 0x53, 0x55, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x01};
const byte_vector kIp6Dst{0xFD, 0x53, 0x55, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x02};

// AFH Gen 1 shim, version 0, tc 3, hop limit 64, next header 253, length 15, entropy 0:
// 0000 | 0000 0011 | 0100 0000 | 1111 1101 | 0000 0000 0000 1111 | 20 x 0, then the 32-bit ids.
const byte_vector kShim{0x00, 0x34, 0x0F, 0xD0, 0x00, 0xF0, 0x00, 0x00,
                        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02};

// 802.1Q TCI: PCP 3, DEI 0, VID 1 -> 011 0 0000 0000 0001.
const byte_vector kTci{0x60, 0x01};

struct golden_case {
  w::encap kind;
  byte_vector bytes;
};

std::vector<golden_case> goldens() {
  return {
      // Ethernet | IPv4 (DSCP 3, total length 20+8+15 = 43, DF, TTL 64, UDP, checksum 0x26B4,
      // 10.0.0.1 -> 10.0.0.2) | UDP 4793 -> 4793, length 23, checksum 0x58F7 | PDU | 3 zeros
      {w::encap::udp4, cat({kMacDst,
                            kMacSrc,
                            {0x08, 0x00},
                            {0x45, 0x0C, 0x00, 0x2B, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                             0x26, 0xB4, 0x0A, 0x00, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x02},
                            {0x12, 0xB9, 0x12, 0xB9, 0x00, 0x17, 0x58, 0xF7},
                            kPdu,
                            zeros(3)})},
      // Ethernet | IPv6 (traffic class 3 << 2 = 0x0C, flow 0, payload length 23, UDP, hop 64,
      // fd53:5545::1 -> fd53:5545::2) | UDP, length 23, checksum 0xC7C4 | PDU; 77 bytes, no pad
      {w::encap::udp6, cat({kMacDst,
                            kMacSrc,
                            {0x86, 0xDD},
                            {0x60, 0xC0, 0x00, 0x00, 0x00, 0x17, 0x11, 0x40},
                            kIp6Src,
                            kIp6Dst,
                            {0x12, 0xB9, 0x12, 0xB9, 0x00, 0x17, 0xC7, 0xC4},
                            kPdu})},
      // DA, SA, Ethertype 0x88B5 | PDU | 60 - 29 = 31 zeros
      {w::encap::afh1, cat({kAfh1Da, kAfh1Sa, {0x88, 0xB5}, kPdu, zeros(31)})},
      // DA, SA, 0x8100, TCI, 0x88B5 | PDU | 60 - 33 = 27 zeros
      {w::encap::afh1_vlan,
       cat({kAfh1Da, kAfh1Sa, {0x81, 0x00}, kTci, {0x88, 0xB5}, kPdu, zeros(27)})},
      // DA, SA, 0x88B6 | shim | PDU | 60 - 45 = 15 zeros
      {w::encap::afh1_shim, cat({kAfh1Da, kAfh1Sa, {0x88, 0xB6}, kShim, kPdu, zeros(15)})},
      // DA, SA, 0x8100, TCI, 0x88B6 | shim | PDU | 60 - 49 = 11 zeros
      {w::encap::afh1_vlan_shim,
       cat({kAfh1Da, kAfh1Sa, {0x81, 0x00}, kTci, {0x88, 0xB6}, kShim, kPdu, zeros(11)})},
      // AFH Gen 2 normal: octet 0 = rsv 00, W 0, V 0, Z 0, Y 0, X 1, M 0 = 0x02; hop count 64;
      // dst XPU 32 bits; octet 6 = tc 00011, spare 0, SA U/L 1, SA I/G 0 = 0x1A; entropy 0;
      // src XPU 32 bits | Ethertype 0x88B5 | PDU | 60 - 29 = 31 zeros
      {w::encap::afh2,
       cat({{0x02, 0x40, 0x00, 0x00, 0x00, 0x02, 0x1A, 0x00, 0x00, 0x00, 0x00, 0x01},
            {0x88, 0xB5},
            kPdu,
            zeros(31)})},
      // AFH Gen 2 compressed: octet 0 = W 1, X 1 = 0x22; octet 1 = tc 00011, spare 000 = 0x18;
      // src 16 bits, dst 16 bits | 0x88B5 | PDU | 60 - 23 = 37 zeros
      {w::encap::afh2c, cat({{0x22, 0x18, 0x00, 0x01, 0x00, 0x02}, {0x88, 0xB5}, kPdu, zeros(37)})},
      // SUE Lite: the compressed header, then the payload straight away | 60 - 9 = 51 zeros
      {w::encap::lite, cat({{0x22, 0x18, 0x00, 0x01, 0x00, 0x02}, kPayload, zeros(51)})},
  };
}

// Emits into a buffer pre-filled with 0xEE, so that padding must really be written as zeros
// and nothing may be written past the returned length.
byte_vector emit(const w::frame_params& p, std::size_t cap = 256) {
  byte_vector out(cap, 0xEE);
  const auto r = p.kind == w::encap::lite ? w::emit_frame(p, kPayload, out)
                                          : w::emit_sue_frame(p, test_rh(), kPayload, out);
  INFO("error: " << std::string(r.err.what));
  REQUIRE(r.ok());
  REQUIRE(r.value <= cap);
  CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(r.value), out.end(),
                    [](std::uint8_t b) { return b == 0xEE; }));
  out.resize(r.value);
  return out;
}

void check_error(const w::error& e, w::errc code, std::string_view layer) {
  CHECK(w::to_string(e.code) == w::to_string(code));
  CHECK(e.layer == layer);
  CHECK(e.level == w::severity::error);
  CHECK_FALSE(e.what.empty());
}

}  // namespace

// ---- the hand-written goldens are self-consistent ------------------------------------------

TEST_CASE("frame: reference checks of the hand-written goldens") {
  CHECK(ref_crc32(reinterpret_cast<const std::uint8_t*>("123456789"), 9) == 0xCBF43926u);
  CHECK(ref_crc32(kPdu.data(), 11) == be32(kPdu, 11));
  // The library's CRC agrees with the reference on the check string and on the PDU.
  const std::string_view check = "123456789";
  CHECK(w::crc32(w::bytes(reinterpret_cast<const std::uint8_t*>(check.data()), check.size())) ==
        0xCBF43926u);
  CHECK(w::crc32(w::bytes(kPdu.data(), 11)) == 0x6323B880u);

  for (const auto& g : goldens()) {
    CAPTURE(w::to_string(g.kind));
    CHECK(g.bytes.size() == (g.kind == w::encap::udp6 ? 77u : 60u));
  }
  const auto all = goldens();
  {  // udp4: IPv4 header sums to 0xFFFF; UDP over the pseudo-header sums to 0xFFFF
    const byte_vector& f = all[0].bytes;
    CHECK(ref_sum(f.data() + 14, 20) == 0xFFFF);
    std::uint32_t acc = ref_sum(f.data() + 26, 8);                      // source and destination
    acc = ref_sum(byte_vector{0x00, 0x11, 0x00, 0x17}.data(), 4, acc);  // zero, protocol, length
    CHECK(ref_sum(f.data() + 34, 23, acc) == 0xFFFF);
  }
  {  // udp6: pseudo-header = addresses, 32-bit length, 3 zero bytes, next header
    const byte_vector& f = all[1].bytes;
    std::uint32_t acc = ref_sum(f.data() + 22, 32);
    acc = ref_sum(byte_vector{0, 0, 0x00, 0x17, 0, 0, 0, 0x11}.data(), 8, acc);
    CHECK(ref_sum(f.data() + 54, 23, acc) == 0xFFFF);
  }
}

// ---- goldens --------------------------------------------------------------------------------

TEST_CASE("frame: header sizes") {
  CHECK(w::header_size(w::encap::udp4) == 42);
  CHECK(w::header_size(w::encap::udp6) == 62);
  CHECK(w::header_size(w::encap::afh1) == 14);
  CHECK(w::header_size(w::encap::afh1_vlan) == 18);
  CHECK(w::header_size(w::encap::afh1_shim) == 30);
  CHECK(w::header_size(w::encap::afh1_vlan_shim) == 34);
  CHECK(w::header_size(w::encap::afh2) == 14);
  CHECK(w::header_size(w::encap::afh2c) == 8);
  CHECK(w::header_size(w::encap::lite) == 6);
}

TEST_CASE("frame: each encapsulation matches its hand-written golden") {
  for (const auto& g : goldens()) {
    CAPTURE(w::to_string(g.kind));
    const byte_vector got = emit(params_for(g.kind));
    INFO("got:\n" << hex(got, 16) << "\nwant:\n" << hex(g.bytes, 16));
    CHECK(got == g.bytes);
  }
}

// decode<T>(b, offset) decodes at offset: once it decoded at byte 0 and used offset only to
// place errors, and a caller asking for the RH 42 bytes into a udp4 frame got the Ethernet
// header read as an RH, with success.
TEST_CASE("frame: decode and view at an offset read the header there") {
  const byte_vector udp4 = goldens().front().bytes;
  constexpr std::size_t rh_at = 14 + 20 + 8;
  REQUIRE(byte_vector(udp4.begin() + rh_at, udp4.begin() + rh_at + 8) == kRh);
  const auto rh = w::decode<w::reliability_header>(udp4, rh_at);
  REQUIRE(rh.ok());
  CHECK(*rh == test_rh());
  const auto v = w::view<w::reliability_header>::make(udp4, rh_at);
  REQUIRE(v.ok());
  CHECK(v->get<&w::reliability_header::npsn>() == 0x1234);
  CHECK(v->raw().data() == udp4.data() + rh_at);
  // At byte 0 it is the MAC address that comes back: a different header.
  CHECK(w::decode<w::reliability_header>(udp4).value != test_rh());
  // The R-CRC four bytes before the padding, placed from the frame's start when cut off.
  const std::size_t crc_at = rh_at + 8 + kPayload.size();
  CHECK(w::decode<w::rcrc_trailer>(udp4, crc_at)->value == 0x6323B880);
  const auto cut = w::decode<w::rcrc_trailer>(w::bytes(udp4).first(crc_at + 2), crc_at);
  CHECK(cut.err.code == w::errc::truncated);
  CHECK(cut.err.offset == crc_at);
  CHECK(cut.err.available == 2);
}

TEST_CASE("frame: emit_frame and wrap_in_place give the same bytes as emit_sue_frame") {
  for (const auto& g : goldens()) {
    CAPTURE(w::to_string(g.kind));
    const w::frame_params p = params_for(g.kind);
    const byte_vector& inner = g.kind == w::encap::lite ? kPayload : kPdu;
    {
      byte_vector out(200, 0xEE);
      const auto r = w::emit_frame(p, inner, out);
      REQUIRE(r.ok());
      out.resize(r.value);
      CHECK(out == g.bytes);
    }
    {
      byte_vector out(200, 0xEE);
      std::copy(inner.begin(), inner.end(),
                out.begin() + static_cast<std::ptrdiff_t>(w::header_size(p.kind)));
      const auto r = w::wrap_in_place(p, inner.size(), out);
      REQUIRE(r.ok());
      out.resize(r.value);
      CHECK(out == g.bytes);
    }
  }
}

TEST_CASE("frame: lengths, checksums and padding, field by field") {
  const auto all = goldens();
  SUBCASE("udp4") {
    const byte_vector f = emit(params_for(w::encap::udp4));
    REQUIRE(f.size() == 60);
    CHECK(be16(f, 16) == 43);      // IPv4 total length: 20 + 8 + 15
    CHECK(be16(f, 38) == 23);      // UDP length: 8 + 15
    CHECK(be16(f, 24) == 0x26B4);  // IPv4 header checksum
    CHECK(ref_sum(f.data() + 14, 20) == 0xFFFF);
    CHECK(be16(f, 40) == 0x58F7);  // UDP checksum
    CHECK(std::all_of(f.begin() + 57, f.end(), [](std::uint8_t b) { return b == 0; }));
  }
  SUBCASE("udp6: payload length, checksum over the IPv6 pseudo-header, no padding") {
    const byte_vector f = emit(params_for(w::encap::udp6));
    REQUIRE(f.size() == 77);
    CHECK(be16(f, 18) == 23);  // payload length = UDP length
    CHECK(be16(f, 58) == 23);
    CHECK(be16(f, 60) == 0xC7C4);
  }
  SUBCASE("shim length counts the PDU, not the padding") {
    const byte_vector f = emit(params_for(w::encap::afh1_shim));
    // length is bits 28..43 of the shim (at byte 14)
    CHECK((((f[14 + 3] & 0x0F) << 12) | (f[14 + 4] << 4) | (f[14 + 5] >> 4)) == 15);
  }
  SUBCASE("no padding when pad = false") {
    w::frame_params p = params_for(w::encap::afh1);
    p.pad = false;
    const byte_vector f = emit(p);
    CHECK(f == cat({kAfh1Da, kAfh1Sa, {0x88, 0xB5}, kPdu}));
    p = params_for(w::encap::lite);
    p.pad = false;
    CHECK(emit(p) == cat({{0x22, 0x18, 0x00, 0x01, 0x00, 0x02}, kPayload}));
  }
  SUBCASE("a frame already at 60 bytes or longer is not padded") {
    w::frame_params p = params_for(w::encap::afh1);
    const byte_vector payload(46 - 12, 0x5A);  // 14 + 8 + 34 + 4 = 60
    byte_vector out(100, 0xEE);
    const auto r = w::emit_sue_frame(p, test_rh(), payload, out);
    REQUIRE(r.ok());
    CHECK(r.value == 60);
    CHECK(be32(out, 56) == ref_crc32(out.data() + 14, 8 + payload.size()));
  }
}

TEST_CASE("frame: entropy, multicast and parameters land where the tables say") {
  SUBCASE("shim entropy keeps its low 20 bits") {
    w::frame_params p = params_for(w::encap::afh1_shim);
    p.entropy = 0x123456;
    const byte_vector f = emit(p);
    CHECK(f[14 + 5] == 0xF2);  // length low nibble 1111, entropy 0010
    CHECK(f[14 + 6] == 0x34);
    CHECK(f[14 + 7] == 0x56);
  }
  SUBCASE("IPv6 flow label keeps its low 20 bits") {
    w::frame_params p = params_for(w::encap::udp6);
    p.entropy = 0x123456;
    const byte_vector f = emit(p);
    CHECK(f[14] == 0x60);
    CHECK(f[15] == 0xC2);  // tclass low nibble 1100, flow 0010
    CHECK(f[16] == 0x34);
    CHECK(f[17] == 0x56);
  }
  SUBCASE("AFH Gen 2 normal: entropy byte, multicast bit, 32-bit ids") {
    w::frame_params p = params_for(w::encap::afh2);
    p.entropy = 0x123456;
    p.multicast = true;
    p.src_xpu = 0xA1B2C3D4;
    p.dst_xpu = 0x01020304;
    p.hop_limit = 7;
    const byte_vector f = emit(p);
    CHECK(f == cat({{0x03, 0x07, 0x01, 0x02, 0x03, 0x04, 0x1A, 0x56, 0xA1, 0xB2, 0xC3, 0xD4},
                    {0x88, 0xB5},
                    kPdu,
                    zeros(31)}));
  }
  SUBCASE("AFH Gen 2 compressed: multicast bit, tc 31") {
    w::frame_params p = params_for(w::encap::afh2c);
    p.multicast = true;
    p.tc = 31;
    p.src_xpu = 0xFFFF;
    p.dst_xpu = 0x8001;
    const byte_vector f = emit(p);
    CHECK(byte_vector(f.begin(), f.begin() + 8) ==
          byte_vector{0x23, 0xF8, 0xFF, 0xFF, 0x80, 0x01, 0x88, 0xB5});
  }
  SUBCASE("UDP ports, VLAN id, Ethertypes and AFH Gen 1 prefix are parameters") {
    w::frame_params p = params_for(w::encap::afh1_vlan_shim);
    p.vlan_id = 0xABC;
    p.tc = 7;
    p.afh1_prefix = 0x06112233;
    p.shim_ethertype = 0x1234;
    const byte_vector f = emit(p);
    CHECK(byte_vector(f.begin(), f.begin() + 18) ==
          byte_vector{0x06, 0x11, 0x22, 0x33, 0x00, 0x02, 0x06, 0x11, 0x22, 0x33, 0x00, 0x01, 0x81,
                      0x00, 0xEA, 0xBC, 0x12, 0x34});
    w::frame_params q = params_for(w::encap::udp4);
    q.udp_src_port = 0x1111;
    q.udp_dst_port = 9999;
    q.tc = 0;
    const byte_vector g = emit(q);
    CHECK(be16(g, 34) == 0x1111);
    CHECK(be16(g, 36) == 9999);
    std::uint32_t acc = ref_sum(g.data() + 26, 8);
    acc = ref_sum(byte_vector{0x00, 0x11, 0x00, 0x17}.data(), 4, acc);
    CHECK(ref_sum(g.data() + 34, 23, acc) == 0xFFFF);
  }
}

TEST_CASE("frame: address derivation from XPU ids") {
  CHECK(w::xpu_ipv4(1) == 0x0A000001u);
  CHECK(w::xpu_ipv4(0x00ABCDEF) == 0x0AABCDEFu);
  CHECK(w::xpu_mac(0xDEADBEEF) == 0x0200DEADBEEFull);
  CHECK(w::xpu_ipv6(0x01020304) ==
        w::ipv6_address{0xFD, 0x53, 0x55, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0x03, 0x04});
}

TEST_CASE("frame: UDP checksum") {
  SUBCASE("a computed zero is sent as 0xFFFF over IPv4") {
    // Two payload bytes 0xC665 make the ones'-complement sum over pseudo-header, header and
    // data 0xFFFF, i.e. a computed checksum of 0.
    w::frame_params p = params_for(w::encap::udp4);
    p.tc = 0;
    const byte_vector inner{0xC6, 0x65};
    byte_vector out(100, 0xEE);
    const auto r = w::emit_frame(p, inner, out);
    REQUIRE(r.ok());
    out.resize(r.value);
    const byte_vector want = cat({kMacDst,
                                  kMacSrc,
                                  {0x08, 0x00},
                                  {0x45, 0x00, 0x00, 0x1E, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                   0x26, 0xCD, 0x0A, 0x00, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x02},
                                  {0x12, 0xB9, 0x12, 0xB9, 0x00, 0x0A, 0xFF, 0xFF},
                                  inner,
                                  zeros(16)});
    INFO("got:\n" << hex(out, 16));
    CHECK(out == want);
    // With 0xFFFF in the field, the whole still sums to 0xFFFF (a receiver accepts it).
    std::uint32_t acc = ref_sum(want.data() + 26, 8);
    acc = ref_sum(byte_vector{0x00, 0x11, 0x00, 0x0A}.data(), 4, acc);
    CHECK(ref_sum(want.data() + 34, 10, acc) == 0xFFFF);
  }
  SUBCASE("a computed zero is sent as 0xFFFF over IPv6") {
    w::frame_params p = params_for(w::encap::udp6);
    p.tc = 0;
    const byte_vector inner{0x35, 0x33};
    byte_vector out(100, 0xEE);
    const auto r = w::emit_frame(p, inner, out);
    REQUIRE(r.ok());
    out.resize(r.value);
    const byte_vector want = cat({kMacDst,
                                  kMacSrc,
                                  {0x86, 0xDD},
                                  {0x60, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x11, 0x40},
                                  kIp6Src,
                                  kIp6Dst,
                                  {0x12, 0xB9, 0x12, 0xB9, 0x00, 0x0A, 0xFF, 0xFF},
                                  inner});
    INFO("got:\n" << hex(out, 16));
    CHECK(out == want);
  }
  SUBCASE("udp4_checksum = false sends 0 (IPv4 only); IPv6 ignores it") {
    w::frame_params p = params_for(w::encap::udp4);
    p.udp4_checksum = false;
    const byte_vector f = emit(p);
    CHECK(be16(f, 40) == 0x0000);
    CHECK(be16(f, 24) == 0x26B4);  // the IPv4 header checksum is still there
    w::frame_params q = params_for(w::encap::udp6);
    q.udp4_checksum = false;
    CHECK(be16(emit(q), 60) == 0xC7C4);
  }
}

// ---- errors ---------------------------------------------------------------------------------

TEST_CASE("frame: no_space when the buffer is too small") {
  for (const auto& g : goldens()) {
    CAPTURE(w::to_string(g.kind));
    const w::frame_params p = params_for(g.kind);
    const std::size_t need = g.bytes.size();
    {  // exactly enough works
      byte_vector out(need, 0xEE);
      const auto r = g.kind == w::encap::lite ? w::emit_frame(p, kPayload, out)
                                              : w::emit_sue_frame(p, test_rh(), kPayload, out);
      REQUIRE(r.ok());
      CHECK(out == g.bytes);
    }
    {  // one byte short: the padding counts
      const byte_vector& inner = g.kind == w::encap::lite ? kPayload : kPdu;
      byte_vector out(need - 1, 0xEE);
      const auto r = w::emit_frame(p, inner, out);
      REQUIRE_FALSE(r.ok());
      check_error(r.err, w::errc::no_space, "frame");
      CHECK(r.err.needed == need);
      CHECK(r.err.available == need - 1);
      if (g.kind != w::encap::lite) {
        // emit_sue_frame fails too; where the frame is unpadded (udp6) the PDU writer is the
        // one that runs out, and it reports against the PDU (see the subcase below).
        const auto s = w::emit_sue_frame(p, test_rh(), kPayload, out);
        REQUIRE_FALSE(s.ok());
        CHECK(s.err.code == w::errc::no_space);
      }
    }
  }
  SUBCASE("emit_frame: header and inner bytes do not fit") {
    byte_vector out(20);
    const auto r = w::emit_frame(params_for(w::encap::udp4), kPdu, out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::no_space, "frame");
    CHECK(r.err.needed == 42 + 15);
    CHECK(r.err.available == 20);
  }
  SUBCASE("emit_sue_frame: the PDU does not fit after the header") {
    byte_vector out(50);
    const auto r = w::emit_sue_frame(params_for(w::encap::udp4), test_rh(), kPayload, out);
    REQUIRE_FALSE(r.ok());
    // Sizes are of the whole frame: 42 header bytes + 8 RH + 3 payload + 4 R-CRC.
    check_error(r.err, w::errc::no_space, "frame");
    CHECK(r.err.needed == 42 + 15);
    CHECK(r.err.available == 50);
  }
  SUBCASE("emit_sue_frame: not even the header fits") {
    byte_vector out(10);
    const auto r = w::emit_sue_frame(params_for(w::encap::udp6), test_rh(), kPayload, out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::no_space, "frame");
  }
  SUBCASE("empty buffer") {
    const auto r = w::emit_sue_frame(params_for(w::encap::afh2c), test_rh(), kPayload, {});
    REQUIRE_FALSE(r.ok());
    CHECK(r.err.code == w::errc::no_space);
    const auto r2 = w::emit_frame(params_for(w::encap::lite), kPayload, {});
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.err.code == w::errc::no_space);
  }
}

TEST_CASE("frame: value_too_big, never a silent truncation") {
  byte_vector out(6000, 0xEE);
  const auto sue = [&](const w::frame_params& p) {
    return w::emit_sue_frame(p, test_rh(), kPayload, out);
  };

  SUBCASE("AFH Gen 1 ids are 16 bits") {
    for (w::encap e :
         {w::encap::afh1, w::encap::afh1_vlan, w::encap::afh1_shim, w::encap::afh1_vlan_shim}) {
      CAPTURE(w::to_string(e));
      w::frame_params p = params_for(e);
      p.src_xpu = 0x10000;
      auto r = sue(p);
      REQUIRE_FALSE(r.ok());
      check_error(r.err, w::errc::value_too_big, "frame");
      p = params_for(e);
      p.dst_xpu = 0x10000;
      r = sue(p);
      REQUIRE_FALSE(r.ok());
      check_error(r.err, w::errc::value_too_big, "frame");
      p = params_for(e);
      p.src_xpu = 0xFFFF;  // the largest that fits
      p.dst_xpu = 0xFFFF;
      CHECK(sue(p).ok());
    }
  }
  SUBCASE("compressed AFH Gen 2 and SUE Lite ids are 16 bits") {
    w::frame_params p = params_for(w::encap::afh2c);
    p.dst_xpu = 0x10000;
    auto r = sue(p);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
    p = params_for(w::encap::lite);
    p.dst_xpu = 0x10000;
    r = w::emit_frame(p, kPayload, out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
    p = params_for(w::encap::lite);
    p.src_xpu = 0x10000;
    r = w::emit_frame(p, kPayload, out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
  }
  SUBCASE("AFH Gen 2 traffic class is 5 bits") {
    w::frame_params p = params_for(w::encap::afh2);
    p.tc = 32;
    auto r = sue(p);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "afh2");
    CHECK(r.err.field == "afh2.tc");
    CHECK(r.err.value == 32);
    p.tc = 31;
    CHECK(sue(p).ok());
    p = params_for(w::encap::afh2c);
    p.tc = 32;
    r = sue(p);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "afh2c");
    CHECK(r.err.field == "afh2c.tc");
    p = params_for(w::encap::lite);
    p.tc = 40;
    r = w::emit_frame(p, kPayload, out);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err.field == "afh2c.tc");
    CHECK(r.err.value == 40);
  }
  SUBCASE("the VLAN PCP is 3 bits") {
    for (w::encap e : {w::encap::afh1_vlan, w::encap::afh1_vlan_shim}) {
      CAPTURE(w::to_string(e));
      w::frame_params p = params_for(e);
      p.tc = 8;
      auto r = sue(p);
      REQUIRE_FALSE(r.ok());
      check_error(r.err, w::errc::value_too_big, "vlan");
      CHECK(r.err.field == "vlan.priority");
      CHECK(r.err.value == 8);
      p.tc = 7;
      CHECK(sue(p).ok());
      p.tc = 0;
      p.vlan_id = 0x1000;  // 12 bits
      r = sue(p);
      REQUIRE_FALSE(r.ok());
      CHECK(r.err.field == "vlan.id");
    }
  }
  SUBCASE("IP traffic class is 6 bits") {
    w::frame_params p = params_for(w::encap::udp4);
    p.tc = 64;
    auto r = sue(p);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "ip");
    CHECK(r.err.field == "ip.dsfield.dscp");
    p = params_for(w::encap::udp6);
    p.tc = 64;
    r = sue(p);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
    p.tc = 63;
    CHECK(sue(p).ok());
  }
  SUBCASE("RH fields that do not fit") {
    w::reliability_header rh = test_rh();
    rh.xpuid = 0x400;  // 10 bits
    const auto r = w::emit_sue_frame(params_for(w::encap::udp4), rh, kPayload, out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "sue.rh");
    CHECK(r.err.field == "sue.rh.xpuid");
  }
  SUBCASE("SUE payload over 4096 bytes") {
    const byte_vector big(4097, 0x11);
    const auto r = w::emit_sue_frame(params_for(w::encap::udp4), test_rh(), big, out);
    REQUIRE_FALSE(r.ok());
    // The PDU writer does the check (it applies to every carrier), so the layer is "sue".
    check_error(r.err, w::errc::value_too_big, "sue");
    const byte_vector max(4096, 0x11);
    const auto ok = w::emit_sue_frame(params_for(w::encap::udp4), test_rh(), max, out);
    REQUIRE(ok.ok());
    CHECK(ok.value == 42 + 8 + 4096 + 4);
  }
  SUBCASE("SUE Lite payload over 1024 bytes") {
    const byte_vector big(1025, 0x22);
    const auto r = w::emit_frame(params_for(w::encap::lite), big, out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
    const byte_vector max(1024, 0x22);
    const auto ok = w::emit_frame(params_for(w::encap::lite), max, out);
    REQUIRE(ok.ok());
    CHECK(ok.value == 6 + 1024);
  }
  SUBCASE("UDP datagram over 65535 bytes") {
    byte_vector huge_out(70000);
    const byte_vector huge(65535 - 8 - 20 + 1, 0);  // 20 + 8 + this = 65536
    const auto r = w::emit_frame(params_for(w::encap::udp4), huge, huge_out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
    const byte_vector fits(65535 - 28, 0);
    CHECK(w::emit_frame(params_for(w::encap::udp4), fits, huge_out).ok());
    const byte_vector huge6(65535 - 8 + 1, 0);
    const auto r6 = w::emit_frame(params_for(w::encap::udp6), huge6, huge_out);
    REQUIRE_FALSE(r6.ok());
    check_error(r6.err, w::errc::value_too_big, "frame");
  }
  SUBCASE("shim length over 65535") {
    byte_vector huge_out(70000);
    const byte_vector huge(65536, 0);
    const auto r = w::emit_frame(params_for(w::encap::afh1_shim), huge, huge_out);
    REQUIRE_FALSE(r.ok());
    check_error(r.err, w::errc::value_too_big, "frame");
  }
}

// An id of 2^24 or more has no room in 10.0.0.0/8: it must not alias another XPU.
TEST_CASE("frame: udp4 rejects XPU ids that do not fit 10.0.0.0/8") {
  byte_vector out(200);
  w::frame_params p = params_for(w::encap::udp4);
  p.src_xpu = 0x01000001;
  const auto r = w::emit_sue_frame(p, test_rh(), kPayload, out);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err.code == w::errc::value_too_big);
}

TEST_CASE("frame: emit_sue_frame refuses SUE Lite") {
  byte_vector out(200, 0xEE);
  const auto r = w::emit_sue_frame(params_for(w::encap::lite), test_rh(), kPayload, out);
  REQUIRE_FALSE(r.ok());
  check_error(r.err, w::errc::unsupported, "frame");
  CHECK(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xEE; }));
}

// ---- names ----------------------------------------------------------------------------------

TEST_CASE("frame: encapsulation names round-trip") {
  const std::vector<std::pair<w::encap, std::string_view>> names{
      {w::encap::udp4, "udp4"},           {w::encap::udp6, "udp6"},
      {w::encap::afh1, "afh1"},           {w::encap::afh1_vlan, "afh1-vlan"},
      {w::encap::afh1_shim, "afh1-shim"}, {w::encap::afh1_vlan_shim, "afh1-vlan-shim"},
      {w::encap::afh2, "afh2"},           {w::encap::afh2c, "afh2c"},
      {w::encap::lite, "lite"},
  };
  CHECK(w::encap_names.size() == names.size());
  for (const auto& entry : names) {
    const auto e = entry.first;
    const std::string_view name = entry.second;  // not a structured binding: CAPTURE is a lambda
    CAPTURE(name);
    CHECK(w::to_string(e) == name);
    const auto back = w::encap_from_string(name);
    REQUIRE(back.has_value());
    CHECK(*back == e);
  }
  static_assert(w::encap_from_string("afh1-vlan-shim") == w::encap::afh1_vlan_shim);
  static_assert(w::to_string(w::encap::lite) == "lite");
  for (std::string_view bad : {"", "udp", "UDP4", "afh1_vlan", "afh1-vlan ", "lite2", "ipv4"}) {
    CAPTURE(bad);
    CHECK_FALSE(w::encap_from_string(bad).has_value());
  }
}

TEST_CASE("frame: values with no place in the encapsulation are refused, not dropped") {
  byte_vector out(200);
  w::frame_params p = params_for(w::encap::udp4);
  p.multicast = true;
  auto r = w::emit_sue_frame(p, test_rh(), kPayload, out);
  REQUIRE_FALSE(r.ok());
  check_error(r.err, w::errc::unsupported, "frame");
  p = params_for(w::encap::afh1);
  p.tc = 1;
  r = w::emit_sue_frame(p, test_rh(), kPayload, out);
  REQUIRE_FALSE(r.ok());
  check_error(r.err, w::errc::unsupported, "frame");
  p.kind = w::encap::afh1_vlan;  // the tag's PCP carries it
  CHECK(w::emit_sue_frame(p, test_rh(), kPayload, out).ok());
  p = params_for(w::encap::afh2c);
  p.multicast = true;
  CHECK(w::emit_sue_frame(p, test_rh(), kPayload, out).ok());
  CHECK(w::to_string(static_cast<w::encap>(200)) == "unknown");
}
