// The baselines of the frame rows (bench/baselines.cpp): emitting and reading three
// encapsulations of a SUE PDU (RH, payload, R-CRC) written by hand for speed, each for its one
// encapsulation and with the defaults of wire::frame_params, and with the checks the library
// makes (its emitters': values that fit their fields, room in the output; its reader's, as a
// receiver configures it, transport::sue_receive_options: no FCS, SUE on the UDP port the
// sender writes and on no other, the IPv4 and UDP checksums checked only when asked).
//
//   udp4:      Ethernet, IPv4 (20 bytes, DF), UDP (its checksum computed when emitting), PDU
//   afh1-shim: AFH Gen 1 addresses, Ethertype 0x88B6, the 16-byte shim, PDU
//   afh2c:     the 6-byte compressed AFH Gen 2 header, Ethertype 0x88B5, PDU
//
// Every field position is written here from the seeds' drawings (docs/wire-format.md), not
// taken from the library's field tables, so that checking the two against each other (the
// benchmark does before timing) compares two readings. Shared with the library: only the CRC-32
// of the R-CRC (wire::crc32, the fastest this machine has: carry-less multiplication), which a
// hand-written emitter would call as it is, and the types of the results.
#pragma once

#include <scaleup/wire/checksum.hpp>
#include <scaleup/wire/failover.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/ip.hpp>
#include <scaleup/wire/pdu.hpp>

#include <boost/endian/conversion.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "hand_rh.hpp"

namespace scaleup::bench {

namespace be = boost::endian;

// ---- the Internet checksum (RFC 1071) ------------------------------------------------------

// Big-endian 32-bit words summed in 64 bits (a ones'-complement sum of 32-bit words folds to
// that of 16-bit words), then the 0-3 bytes left; `p` starts a 16-bit word.
[[gnu::always_inline]] inline std::uint64_t hand_sum(const std::uint8_t* p, std::size_t n,
                                                     std::uint64_t acc = 0) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) acc += be::load_big_u32(p + i);
  if (i + 2 <= n) {
    acc += be::load_big_u16(p + i);
    i += 2;
  }
  if (i < n) acc += std::uint64_t{p[i]} << 8;
  return acc;
}
[[gnu::always_inline]] inline std::uint16_t hand_fold(std::uint64_t acc) {
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<std::uint16_t>(acc);
}

// ---- emitting ------------------------------------------------------------------------------

// RH fields that fit their widths (R2 Table 5): what the library's encode refuses otherwise.
[[gnu::always_inline]] inline bool hand_rh_fits(const wire::reliability_header& h) {
  return (h.ver | h.op | h.rsv | h.vc) <= 3 && h.rsvd <= 15 && (h.xpuid | h.partition) <= 0x3FF;
}

// RH, payload, R-CRC at `pdu`; returns the PDU's size.
[[gnu::always_inline]] inline std::size_t hand_emit_pdu(const wire::reliability_header& rh,
                                                        const std::uint8_t* payload,
                                                        std::size_t len, std::uint8_t* pdu) {
  hand_encode(rh, pdu);
  std::memcpy(pdu + 8, payload, len);
  be::store_big_u32(pdu + 8 + len, wire::crc32(wire::bytes(pdu, 8 + len)));
  return 8 + len + 4;
}

// Zeros to the 60-byte Ethernet minimum; the frame's length.
[[gnu::always_inline]] inline std::size_t hand_pad(std::uint8_t* out, std::size_t n) {
  if (n >= 60) return n;
  std::memset(out + n, 0, 60 - n);
  return 60;
}

// 0: refused (a value that does not fit, or no room).
inline std::size_t hand_emit_udp4(std::uint32_t src_xpu, std::uint32_t dst_xpu, std::uint8_t tc,
                                  const wire::reliability_header& rh, const std::uint8_t* payload,
                                  std::size_t len, std::uint8_t* out, std::size_t room) {
  const std::size_t pdu = 8 + len + 4;
  const std::size_t n = 42 + pdu;
  if (len > 4096 || (n < 60 ? 60 : n) > room || src_xpu > 0xFFFFFF || dst_xpu > 0xFFFFFF ||
      tc > 63 || !hand_rh_fits(rh))
    return 0;
  hand_emit_pdu(rh, payload, len, out + 42);
  // Ethernet: MACs 02:00 and the 32-bit XPU id (frame.hpp's plan), IPv4.
  be::store_big_u16(out, 0x0200);
  be::store_big_u32(out + 2, dst_xpu);
  be::store_big_u16(out + 6, 0x0200);
  be::store_big_u32(out + 8, src_xpu);
  be::store_big_u16(out + 12, 0x0800);
  // IPv4 (RFC 791): version 4, IHL 5, DSCP = the traffic class, DF, TTL 64, UDP; 10.0.0.0/8.
  std::uint8_t* ip = out + 14;
  const std::uint32_t src = 0x0A000000u | src_xpu, dst = 0x0A000000u | dst_xpu;
  be::store_big_u16(ip, static_cast<std::uint16_t>(0x4500 | tc << 2));
  be::store_big_u16(ip + 2, static_cast<std::uint16_t>(20 + 8 + pdu));
  be::store_big_u32(ip + 4, 0x00004000);  // id 0, DF, offset 0
  be::store_big_u32(ip + 8, 0x40110000);  // TTL 64, UDP, checksum 0 until summed
  be::store_big_u32(ip + 12, src);
  be::store_big_u32(ip + 16, dst);
  be::store_big_u16(ip + 10, static_cast<std::uint16_t>(~hand_fold(hand_sum(ip, 20))));
  // UDP (RFC 768) on the sender's port both ways; checksum over the pseudo-header and datagram.
  std::uint8_t* udp = ip + 20;
  const auto ulen = static_cast<std::uint16_t>(8 + pdu);
  be::store_big_u32(udp, std::uint32_t{wire::emit_udp_port} << 16 | wire::emit_udp_port);
  be::store_big_u32(udp + 4, std::uint32_t{ulen} << 16);
  const std::uint64_t pseudo = std::uint64_t{src} + dst + wire::ip_proto_udp + ulen;
  std::uint16_t c = static_cast<std::uint16_t>(~hand_fold(hand_sum(udp, ulen, pseudo)));
  if (c == 0) c = 0xFFFF;
  be::store_big_u16(udp + 6, c);
  return hand_pad(out, n);
}

inline std::size_t hand_emit_afh1_shim(std::uint32_t src_xpu, std::uint32_t dst_xpu,
                                       std::uint8_t tc, const wire::reliability_header& rh,
                                       const std::uint8_t* payload, std::size_t len,
                                       std::uint8_t* out, std::size_t room) {
  const std::size_t pdu = 8 + len + 4;
  const std::size_t n = 30 + pdu;
  if (len > 4096 || (n < 60 ? 60 : n) > room || src_xpu > 0xFFFF || dst_xpu > 0xFFFF ||
      !hand_rh_fits(rh))
    return 0;
  hand_emit_pdu(rh, payload, len, out + 30);
  // AFH Gen 1 (R2 3.5.3): each address the prefix "BSUE" and a 16-bit XPU id; the shim's type.
  be::store_big_u32(out, wire::afh1_default_prefix);
  be::store_big_u16(out + 4, static_cast<std::uint16_t>(dst_xpu));
  be::store_big_u32(out + 6, wire::afh1_default_prefix);
  be::store_big_u16(out + 10, static_cast<std::uint16_t>(src_xpu));
  be::store_big_u16(out + 12, 0x88B6);
  // The shim: version 0 (4 bits), traffic class (8), hop limit 64 (8), next header 253 (8),
  // length (16), entropy 0 (20), then the 32-bit source and destination XPU ids.
  be::store_big_u64(out + 14, std::uint64_t{tc} << 52 | std::uint64_t{64} << 44 |
                                  std::uint64_t{wire::shim_next_sue} << 36 |
                                  std::uint64_t{pdu} << 20);
  be::store_big_u32(out + 22, src_xpu);
  be::store_big_u32(out + 26, dst_xpu);
  return hand_pad(out, n);
}

inline std::size_t hand_emit_afh2c(std::uint32_t src_xpu, std::uint32_t dst_xpu, std::uint8_t tc,
                                   const wire::reliability_header& rh, const std::uint8_t* payload,
                                   std::size_t len, std::uint8_t* out, std::size_t room) {
  const std::size_t pdu = 8 + len + 4;
  const std::size_t n = 8 + pdu;
  if (len > 4096 || (n < 60 ? 60 : n) > room || src_xpu > 0xFFFF || dst_xpu > 0xFFFF || tc > 31 ||
      !hand_rh_fits(rh))
    return 0;
  hand_emit_pdu(rh, payload, len, out + 8);
  // R2 3.5.2, Fig. 15: the first octet 0x22 (W = 1 compressed, X = 1 locally administered,
  // unicast), the traffic class in the top 5 bits of the next, the 16-bit ids; SUE's Ethertype.
  out[0] = 0x22;
  out[1] = static_cast<std::uint8_t>(tc << 3);
  be::store_big_u16(out + 2, static_cast<std::uint16_t>(src_xpu));
  be::store_big_u16(out + 4, static_cast<std::uint16_t>(dst_xpu));
  be::store_big_u16(out + 6, 0x88B5);
  return hand_pad(out, n);
}

// ---- reading -------------------------------------------------------------------------------

// What a hand-written reader finds; compared with wire::received_frame.
struct hand_read {
  std::optional<wire::encap> kind;  // none: not a frame of the reader's encapsulation
  bool ok = true;                   // no problem of error severity
  std::optional<std::uint32_t> src_xpu, dst_xpu;
  std::optional<wire::reliability_header> rh;
  std::size_t pdu_offset = 0;
  std::size_t payload_length = 0;  // between RH and R-CRC
  wire::rcrc_status status = wire::rcrc_status::missing;
  wire::checksum_status ipv4_checksum = wire::checksum_status::unverified;
  wire::checksum_status udp_checksum = wire::checksum_status::unverified;
};

// The PDU between `at` and `end` (`exact`: the carrier says where it ends; otherwise it runs to
// the end of the frame, and a minimum-size frame may pad it: the R-CRC is then at the first
// place, from the last non-zero byte back four, where it matches, decisions.md "R-CRC and the
// end of a PDU").
[[gnu::always_inline]] inline void hand_sue_pdu(hand_read& r, const std::uint8_t* p, std::size_t at,
                                                std::size_t end, bool exact,
                                                std::size_t frame_len) {
  r.pdu_offset = at;
  if (end - at < 8) {
    r.ok = false;  // no RH
    return;
  }
  const std::uint8_t* pdu = p + at;
  const std::size_t size = end - at;
  r.rh = hand_decode(pdu);
  r.payload_length = size - 8;
  if (size < 12) return;  // no R-CRC: missing
  if (!exact && frame_len <= 60) {
    std::size_t last = size;
    while (last > 0 && pdu[last - 1] == 0) --last;
    std::size_t first = last >= 4 ? last - 4 : 0;
    if (first < 8) first = 8;
    std::uint32_t running = wire::crc32_update(wire::crc32_init, wire::bytes(pdu, first));
    for (std::size_t e = first; e + 4 <= size; ++e) {
      if (e > first) running = wire::crc32_update(running, wire::bytes(pdu + e - 1, 1));
      if (be::load_big_u32(pdu + e) == wire::crc32_final(running)) {
        r.payload_length = e - 8;
        r.status = wire::rcrc_status::good;
        return;
      }
    }
  }
  r.payload_length = size - 12;
  const bool good = be::load_big_u32(pdu + size - 4) == wire::crc32(wire::bytes(pdu, size - 4));
  r.status = good ? wire::rcrc_status::good : wire::rcrc_status::bad;
  if (!good) r.ok = false;
}

// An Ethernet frame (at least 14 bytes) that is one of compressed AFH Gen 2 with SUE's
// Ethertype: its first octet has the signature and W set, and 0x88B5 follows the 6-byte header.
[[gnu::always_inline]] inline bool hand_afh2c_sue(const std::uint8_t* p) {
  return (p[0] & 0xFE) == 0x22 && be::load_big_u16(p + 6) == 0x88B5;
}

// Ethernet, IPv4 (options allowed; a fragment is not read), UDP on the sender's port, the PDU
// where UDP's length says. `checksums`: the IPv4 header and UDP checksums are checked (a
// mismatch is a warning, as in the library).
template <bool Checksums>
inline hand_read hand_read_udp4(const std::uint8_t* p, std::size_t n) {
  hand_read r;
  if (n < 14) {
    r.ok = false;
    return r;
  }
  if (be::load_big_u16(p + 12) != 0x0800 || hand_afh2c_sue(p)) return r;
  const std::uint8_t* ip = p + 14;
  if (n < 34 || (ip[0] >> 4) != 4) {
    r.ok = false;
    return r;
  }
  const std::size_t hl = std::size_t{ip[0] & 0xFu} * 4;
  if (hl < 20 || 14 + hl > n) {
    r.ok = false;
    return r;
  }
  if constexpr (Checksums) {
    r.ipv4_checksum = hand_fold(hand_sum(ip, hl)) == 0xFFFF ? wire::checksum_status::good
                                                            : wire::checksum_status::bad;
  }
  const std::size_t total = be::load_big_u16(ip + 2);
  if (total < hl) {
    r.ok = false;
    return r;
  }
  std::size_t end = 14 + total;
  if (end > n) {
    r.ok = false;
    end = n;
  }
  if ((be::load_big_u16(ip + 6) & 0x3FFF) != 0 || ip[9] != wire::ip_proto_udp)
    return r;  // a fragment (MF or an offset), or not UDP
  const std::size_t u = 14 + hl;
  if (u + 8 > end) {
    r.ok = false;
    return r;
  }
  const std::uint8_t* udp = p + u;
  const std::size_t ulen = be::load_big_u16(udp + 4);
  if (ulen < 8) {
    r.ok = false;
    return r;
  }
  std::size_t uend = u + ulen;
  if (uend > end) {
    r.ok = false;
    uend = end;
  } else if (be::load_big_u16(udp + 6) == 0) {
    r.udp_checksum = wire::checksum_status::not_present;
  } else if constexpr (Checksums) {
    const std::uint64_t pseudo = std::uint64_t{be::load_big_u32(ip + 12)} +
                                 be::load_big_u32(ip + 16) + wire::ip_proto_udp + ulen;
    r.udp_checksum = hand_fold(hand_sum(udp, ulen, pseudo)) == 0xFFFF ? wire::checksum_status::good
                                                                      : wire::checksum_status::bad;
  }
  if (be::load_big_u16(udp) != wire::emit_udp_port &&
      be::load_big_u16(udp + 2) != wire::emit_udp_port)
    return r;
  r.kind = wire::encap::udp4;
  hand_sue_pdu(r, p, u + 8, uend, true, n);
  return r;
}

// AFH Gen 1 addresses, the shim's Ethertype, the shim (version 0, next header SUE), the PDU
// where the shim's length says.
inline hand_read hand_read_afh1_shim(const std::uint8_t* p, std::size_t n) {
  hand_read r;
  if (n < 14) {
    r.ok = false;
    return r;
  }
  if (be::load_big_u16(p + 12) != 0x88B6 || hand_afh2c_sue(p)) return r;
  r.kind = wire::encap::afh1_shim;
  r.dst_xpu = be::load_big_u16(p + 4);
  r.src_xpu = be::load_big_u16(p + 10);
  if (n < 30) {
    r.ok = false;
    return r;
  }
  const std::uint64_t w = be::load_big_u64(p + 14);
  r.src_xpu = be::load_big_u32(p + 22);
  r.dst_xpu = be::load_big_u32(p + 26);
  if ((w >> 60) != 0) {
    r.ok = false;  // version
    return r;
  }
  const auto next = static_cast<std::uint8_t>(w >> 36);
  if (next != wire::shim_next_sue) {
    if (next == wire::shim_next_failover) r.kind.reset();  // the failover exchange: not SUE
    return r;
  }
  const std::size_t length = (w >> 20) & 0xFFFF;
  std::size_t end = 30 + length;
  if (end > n) {
    r.ok = false;
    end = n;
  }
  hand_sue_pdu(r, p, 30, end, true, n);
  return r;
}

// The compressed AFH Gen 2 header (its signature, W set) and SUE's Ethertype, the PDU to the
// end of the frame.
inline hand_read hand_read_afh2c(const std::uint8_t* p, std::size_t n) {
  hand_read r;
  if (n < 8 || !hand_afh2c_sue(p)) return r;
  r.kind = wire::encap::afh2c;
  r.src_xpu = be::load_big_u16(p + 2);
  r.dst_xpu = be::load_big_u16(p + 4);
  hand_sue_pdu(r, p, 8, n, false, n);
  return r;
}

}  // namespace scaleup::bench
