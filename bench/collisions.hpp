// Keys that collide, and frames that carry them. The hash the tables of flows and connections
// used before they were keyed (wire/siphash.hpp) is kept here only to attack it: a linear mix
// of the address' words, w0 * k1 + w1 * k2 + version * k3, so that for any first word a second
// word lands on any chosen hash. The keys it makes collide are the test of the keyed tables
// (tests/unit/hash_test.cpp) and the crafted capture of `./run bench` (crafted_capture.cpp); its
// cost per lookup is the baseline of the keyed one (micro.cpp). Not a hash to use.
#pragma once

#include <scaleup/dissect/analysis.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/wire/checksum.hpp>
#include <scaleup/wire/field.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/ip.hpp>
#include <scaleup/wire/ip_address.hpp>
#include <scaleup/wire/siphash.hpp>
#include <scaleup/wire/udp_flow.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace scaleup::collisions {

namespace old_mix {

inline constexpr std::uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full,
                               k3 = 0x165667B19E3779F9ull;

constexpr std::uint64_t of(const wire::ip_address& a) noexcept {
  return a.raw_word(0) * k1 + a.raw_word(1) * k2 + a.version * k3;
}
constexpr std::uint64_t pair(std::uint64_t x, std::uint64_t y) noexcept {
  return x ^ (y << 29 | y >> 35) * k3;
}
constexpr std::uint64_t of(const wire::udp_flow& f) noexcept {
  const std::uint64_t ports = std::uint64_t{f.port_a} << 16 | f.port_b;
  return pair(of(f.a), of(f.b)) ^ ports * k1;
}
constexpr std::uint64_t of(const dissect::endpoint& e) noexcept {
  return e.type == dissect::endpoint::kind::ip ? of(e.ip) : e.xpu * k2 + 1;
}
constexpr std::uint64_t of(const dissect::connection_key& k) noexcept {
  const std::uint64_t place = (std::uint64_t{k.port} << 8 | k.vc) * k1;
  return pair(of(k.src), of(k.dst)) ^ place;
}

// What flat_index did to the hash before it picked a slot (fmix64 of MurmurHash3): a bijection,
// so keys whose mix collides still collide after it.
constexpr std::uint64_t fmix64(std::uint64_t h) noexcept {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// The old hashes as flat_index takes a hash (the key is ignored: there was none).
struct flow_hash {
  constexpr std::uint64_t operator()(const wire::hash_key&,
                                     const wire::udp_flow& f) const noexcept {
    return fmix64(of(f));
  }
};
struct connection_hash {
  constexpr std::uint64_t operator()(const wire::hash_key&,
                                     const dissect::connection_key& k) const noexcept {
    return fmix64(of(k));
  }
};

}  // namespace old_mix

// x^-1 mod 2^64 for an odd x (Newton's iteration: each step doubles the bits that are right).
constexpr std::uint64_t inverse(std::uint64_t x) noexcept {
  std::uint64_t y = x;  // right in the low 3 bits for any odd x
  for (int i = 0; i < 5; ++i) y *= 2 - x * y;
  return y;
}

// The IPv6 address whose first word (as raw_word(0) reads it) is `w0` and whose of() is
// `target`: w1 = (target - w0 k1 - 6 k3) / k2, k2 being odd.
constexpr wire::ip_address colliding_v6(std::uint64_t w0, std::uint64_t target) noexcept {
  using namespace old_mix;
  const std::uint64_t w1 = (target - w0 * k1 - 6 * k3) * inverse(k2);
  return wire::ip_address::v6(std::bit_cast<wire::ipv6_address>(std::array{w0, w1}));
}

// The first word (as raw_word(0) reads it) of an address in 2001:db8::/32 (RFC 3849, for
// documentation) whose next 32 bits are `n`: many distinct addresses of one prefix.
constexpr std::uint64_t documentation_word(std::uint32_t n) noexcept {
  return std::bit_cast<std::uint64_t>(
      std::array<std::uint8_t, 8>{0x20, 0x01, 0x0d, 0xb8, static_cast<std::uint8_t>(n >> 24),
                                  static_cast<std::uint8_t>(n >> 16),
                                  static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)});
}

// An Ethernet/UDP/IPv6 frame from `src` to `dst` (ports 49152 and 61793, neither named SUE's)
// that holds a valid SUE PDU: an RH with PSN `npsn` and one read command, its R-CRC and UDP
// checksum right. Each source a flow, and over IP with no XPU map each a connection.
inline std::optional<std::vector<std::uint8_t>> udp6_pdu(const wire::ip_address& src,
                                                         const wire::ip_address& dst,
                                                         std::uint16_t npsn) {
  const auto command = wire::to_bytes(pack::cmd_read{.dlen = 63, .tag = 2});
  wire::frame_params p;
  p.kind = wire::encap::udp6;
  p.udp_src_port = 49152;
  const wire::reliability_header rh{.op = 2, .xpuid = 1, .npsn = npsn};
  std::vector<std::uint8_t> frame(256);
  const auto n = wire::emit_sue_frame(p, rh, command.value, frame);
  if (!n) return std::nullopt;
  frame.resize(n.value);
  // The addresses the frame is to carry, then the UDP checksum over them (RFC 8200 8.1).
  constexpr std::size_t ip_at = 14, udp_at = 14 + 40;
  const auto decoded = wire::decode<wire::ipv6_header>(frame, ip_at);
  if (!decoded) return std::nullopt;
  wire::ipv6_header ip = *decoded;
  ip.src = src.bytes;
  ip.dst = dst.bytes;
  if (!wire::encode(ip, wire::mutable_bytes(frame).subspan(ip_at))) return std::nullopt;
  const std::size_t udp_len = ip.payload_length;
  wire::store_be16(frame.data() + udp_at + 6, 0);
  std::uint16_t c = wire::udp_pseudo_header(ip, udp_len)
                        .add(wire::bytes(frame.data() + udp_at, udp_len))
                        .checksum();
  if (c == 0) c = 0xFFFF;
  wire::store_be16(frame.data() + udp_at + 6, c);
  return frame;
}

}  // namespace scaleup::collisions
