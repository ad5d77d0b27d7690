// The RH codec written by hand (micro.cpp's RH rows, and the hand-written frames of
// baselines.cpp).
#pragma once

#include <scaleup/wire/reliability_header.hpp>

#include <boost/endian/conversion.hpp>

#include <cstdint>

namespace scaleup::bench {

// The baseline of the RH codec: the best hand-written code for the same job.
// The header is one big-endian 64-bit word (R2 3.3, Table 5: ver 2 bits, op 2, rsv 2, xpuid 10,
// npsn 16, vc 2, rsvd 4, partition 10, apsn 16, from the most significant bit); decode is one
// load, then a shift and a mask per field, encode the reverse and one store. The positions are
// written here from the table of the seed, not taken from the library's field table, so that
// checking one codec against the other (check_hand_codec) compares two independent readings.
// Unlike the library, it checks nothing: encode masks each value to its field instead of
// refusing one too big, and neither side is given a length to check.
[[gnu::always_inline]] inline wire::reliability_header hand_decode(const std::uint8_t* p) {
  const std::uint64_t x = boost::endian::load_big_u64(p);
  wire::reliability_header h;
  h.ver = static_cast<std::uint8_t>(x >> 62);
  h.op = static_cast<std::uint8_t>((x >> 60) & 0x3);
  h.rsv = static_cast<std::uint8_t>((x >> 58) & 0x3);
  h.xpuid = static_cast<std::uint16_t>((x >> 48) & 0x3FF);
  h.npsn = static_cast<std::uint16_t>(x >> 32);
  h.vc = static_cast<std::uint8_t>((x >> 30) & 0x3);
  h.rsvd = static_cast<std::uint8_t>((x >> 26) & 0xF);
  h.partition = static_cast<std::uint16_t>((x >> 16) & 0x3FF);
  h.apsn = static_cast<std::uint16_t>(x);
  return h;
}

[[gnu::always_inline]] inline void hand_encode(const wire::reliability_header& h, std::uint8_t* p) {
  const std::uint64_t x = (std::uint64_t{h.ver & 0x3u} << 62) | (std::uint64_t{h.op & 0x3u} << 60) |
                          (std::uint64_t{h.rsv & 0x3u} << 58) |
                          (std::uint64_t{h.xpuid & 0x3FFu} << 48) | (std::uint64_t{h.npsn} << 32) |
                          (std::uint64_t{h.vc & 0x3u} << 30) |
                          (std::uint64_t{h.rsvd & 0xFu} << 26) |
                          (std::uint64_t{h.partition & 0x3FFu} << 16) | std::uint64_t{h.apsn};
  boost::endian::store_big_u64(p, x);
}

}  // namespace scaleup::bench
