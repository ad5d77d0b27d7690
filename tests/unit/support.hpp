// Helpers shared by the unit tests (namespace scaleup::test): one copy of each, instead of
// one per test file.
//
// Everything but the frame fixtures at the end is written without scaleup: the reference
// checksums and byte-order helpers share no code with the library, so a test that checks the
// library against them is not checking the library against itself.
#pragma once

#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/reliability_header.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace scaleup::test {

// ---- byte containers ----------------------------------------------------------------------

// The owned byte buffer most tests build frames, commands and expectations in.
using byte_vector = std::vector<std::uint8_t>;

// Fixed-size golden bytes, e.g. the image of one header.
template <std::size_t N>
using byte_array = std::array<std::uint8_t, N>;

// A copy of any run of bytes (a span the library hands back, an array, ...), so that it can be
// compared with a byte_vector as a whole.
inline byte_vector bytes_of(std::span<const std::uint8_t> s) {
  return byte_vector(s.begin(), s.end());
}

// The parts one after another: frames and payloads written as a list of named pieces.
inline byte_vector cat(std::initializer_list<byte_vector> parts) {
  byte_vector out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// n bytes that are easy to tell apart: first, first + step, first + 2 * step, ... (mod 256).
inline byte_vector ramp(std::size_t n, std::uint8_t first, std::uint8_t step = 1) {
  byte_vector v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(first + i * step);
  return v;
}

// The RH's op field as the tests write it into frames: ACK 0, NACK 1, no acknowledgement 2.
inline constexpr std::uint8_t op_ack = 0, op_nack = 1, op_none = 2;

// Commands in the default profile's layout, written by hand (docs/wire-format.md):
// WR_FULL, type 04, dlen 04, tag 0x1234, address 0x1000, 5 data bytes A1..A5; and BARRIER,
// type 12, reserved 00, tag 0x0007.
inline const byte_vector write5{0x04, 0x04, 0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0x00,
                                0x00, 0x10, 0x00, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5};
inline const byte_vector barrier{0x12, 0x00, 0x00, 0x07};

// ---- text ---------------------------------------------------------------------------------

// Bytes as upper-case hex pairs separated by spaces ("0A BC 00"), for expected strings and
// failure messages; with per_line > 0, a line break instead of the space after every per_line
// bytes, for dumps of whole frames.
inline std::string hex(std::span<const std::uint8_t> b, std::size_t per_line = 0) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i) s += (per_line != 0 && i % per_line == 0) ? '\n' : ' ';
    s += digits[b[i] >> 4];
    s += digits[b[i] & 0xF];
  }
  return s;
}

// Whether needle occurs in haystack: for error messages and printer output, whose full text
// a test does not pin.
inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The sink the printers write to in tests. One named type for every call, so that a test file
// instantiates each printer once rather than once per call (a lambda here would be a new type
// for every render<Fn>, and the printers are templates on their sink).
struct string_sink {
  std::string* s;
  void operator()(std::string_view v) const { s->append(v.data(), v.size()); }
};

// What a printer writes to its sink, as one string: fn is called with the sink.
template <class Fn>
std::string render(Fn&& fn) {
  std::string s;
  string_sink sink{&s};
  fn(sink);
  return s;
}

// ---- big-endian access, independent of the library's bits.hpp -----------------------------

// Read and patch header fields of emitted frames at offsets worked out by hand.
inline std::uint16_t be16(std::span<const std::uint8_t> v, std::size_t at) {
  return static_cast<std::uint16_t>((v[at] << 8) | v[at + 1]);
}
inline std::uint32_t be32(std::span<const std::uint8_t> v, std::size_t at) {
  return (std::uint32_t{v[at]} << 24) | (std::uint32_t{v[at + 1]} << 16) |
         (std::uint32_t{v[at + 2]} << 8) | std::uint32_t{v[at + 3]};
}
inline void set16(std::span<std::uint8_t> v, std::size_t at, std::uint16_t x) {
  v[at] = static_cast<std::uint8_t>(x >> 8);
  v[at + 1] = static_cast<std::uint8_t>(x);
}

// ---- independent references ---------------------------------------------------------------

// CRC-32/ISO-HDLC (the R-CRC and the Ethernet FCS), bit by bit: reflected polynomial
// 0xEDB88320, init and xorout 0xFFFFFFFF. Independent of the library: shares no code with
// wire/checksum.hpp's table-driven CRC, so goldens and emitted frames can be checked with it.
constexpr std::uint32_t ref_crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
  }
  return c ^ 0xFFFFFFFFu;
}

// RFC 1071 sum of 16-bit big-endian words (odd byte padded with zero), folded, NOT inverted;
// acc carries a partial sum over, e.g. from a pseudo-header. Independent of the library: shares
// no code with wire/checksum.hpp, so IPv4 and UDP checksums can be checked and fixed with it.
constexpr std::uint32_t ref_sum(const std::uint8_t* p, std::size_t n, std::uint32_t acc = 0) {
  for (std::size_t i = 0; i < n; i += 2) {
    const std::uint32_t hi = p[i];
    const std::uint32_t lo = i + 1 < n ? p[i + 1] : 0;
    acc += (hi << 8) | lo;
  }
  while (acc >> 16) acc = (acc & 0xFFFFu) + (acc >> 16);
  return acc;
}

// ---- patching frames, with the references above -------------------------------------------

// The frame followed by its Ethernet FCS: the CRC-32 of the frame, least significant byte first.
inline byte_vector with_ethernet_fcs(byte_vector f) {
  const std::uint32_t c = ref_crc32(f.data(), f.size());
  for (int i = 0; i < 4; ++i) f.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
  return f;
}

// A Tofu slice as its FCS closes it: the bytes, then their CRC-32 most significant byte first.
inline byte_vector with_tofu_fcs(byte_vector v) {
  const std::uint32_t c = ref_crc32(v.data(), v.size());
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(c >> s));
  return v;
}

// Lane 1 of the small Tofu frame split in 2 (RH: LEN 0, PAT 1, SEQ 1; tofu_slice_test.cpp spells
// it out): words 1, 3, 5 and a 4-byte pad, after a pseudo-header saying lane 1 of 2 (0x12) with
// no flags.
inline byte_vector tofu_lane1_record() {
  const byte_vector rh{0x80, 0, 0, 0, 0, 0, 0x40, 0x01};
  return cat({{0x12, 0x00},
              with_tofu_fcs(cat({rh, ramp(8, 0x08), ramp(8, 0x18), ramp(8, 0xD8), {0, 0, 0, 0}}))});
}

// Rewrites the checksum of the IPv4 header at `ip`, as long as its IHL says.
inline void fix_ipv4_checksum(std::span<std::uint8_t> f, std::size_t ip) {
  const std::size_t hl = std::size_t{f[ip] & 0x0Fu} * 4;
  set16(f, ip + 10, 0);
  set16(f, ip + 10, static_cast<std::uint16_t>(~ref_sum(f.data() + ip, hl) & 0xFFFF));
}

// Rewrites the checksum of the UDP datagram at `udp` over the IPv4 header at `ip`; the UDP
// length field says how much is covered.
inline void fix_udp4_checksum(std::span<std::uint8_t> f, std::size_t ip, std::size_t udp) {
  const std::size_t len = be16(f, udp + 4);
  set16(f, udp + 6, 0);
  std::uint32_t acc = ref_sum(f.data() + ip + 12, 8);
  const std::uint8_t tail[4] = {0x00, 0x11, static_cast<std::uint8_t>(len >> 8),
                                static_cast<std::uint8_t>(len)};
  acc = ref_sum(tail, 4, acc);
  std::uint16_t c = static_cast<std::uint16_t>(~ref_sum(f.data() + udp, len, acc) & 0xFFFF);
  if (c == 0) c = 0xFFFF;
  set16(f, udp + 6, c);
}

// ---- frame fixtures -----------------------------------------------------------------------

// Offsets in an untagged udp4 frame: IPv4 header, UDP header, the PDU.
inline constexpr std::size_t ip4_at = 14, udp4_at = 34, pdu4_at = 42;

// The reliability header of the header and PDU goldens: wire_headers_test.cpp works out its
// bytes bit by bit (13 FF 12 34 C3 FF BE EF), wire_pdu_test.cpp builds its golden PDU on it.
inline constexpr wire::reliability_header rh_golden{.ver = 0,
                                                    .op = 1,
                                                    .rsv = 0,
                                                    .xpuid = 0x3FF,
                                                    .npsn = 0x1234,
                                                    .vc = 3,
                                                    .rsvd = 0,
                                                    .partition = 0x3FF,
                                                    .apsn = 0xBEEF};

// The reliability header of every emitted test frame (frame_test.cpp pins the frames built
// from it to hand-written goldens, dissect_test.cpp reads them back):
// ver 0, op ACK (0), rsv 0, xpuid 1 | npsn 0x1234 | vc 1, rsvd 0, partition 5 | apsn 0x0042,
// i.e. 00 01 12 34 40 05 00 42 (worked out next to frame_test.cpp's kRh).
inline wire::reliability_header test_rh() {
  wire::reliability_header rh;
  rh.ver = 0;
  rh.op = 0;
  rh.xpuid = 1;
  rh.npsn = 0x1234;
  rh.vc = 1;
  rh.partition = 5;
  rh.apsn = 0x0042;
  return rh;
}

// The frame parameters of those frames: src XPU 1, dst XPU 2, traffic class 3, UDP port 4793
// both ways (the goldens' checksums were worked out for it; no port is SUE's, so a reader finds
// these frames by their content, or by the port when a test names it).
// Every encapsulation the library emits, in wire::encap's order.
inline constexpr std::array<wire::encap, 9> all_encaps{
    wire::encap::udp4,      wire::encap::udp6,      wire::encap::afh1,
    wire::encap::afh1_vlan, wire::encap::afh1_shim, wire::encap::afh1_vlan_shim,
    wire::encap::afh2,      wire::encap::afh2c,     wire::encap::lite};

inline constexpr std::uint16_t golden_udp_port = 4793;
inline wire::frame_params params_for(wire::encap e) {
  wire::frame_params p;
  p.kind = e;
  p.src_xpu = 1;
  p.dst_xpu = 2;
  p.udp_src_port = p.udp_dst_port = golden_udp_port;
  p.tc = e == wire::encap::afh1 ? 0 : 3;  // plain AFH Gen 1 has nowhere to carry a class
  return p;
}

}  // namespace scaleup::test
