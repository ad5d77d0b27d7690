// A UDP flow, and the hook through which a capture reader remembers the flows it found SUE on.
// No UDP port is SUE's (R2 3.5.1 says SUE is identified by a UDP port and gives no number): a
// datagram on a port the user did not name is SUE when its payload passes for a PDU (version 0,
// reserved bits zero, R-CRC good: plausible_pdu). Once a flow has been recognised so, its later
// datagrams are SUE whatever they hold, as Wireshark binds a conversation to the dissector whose
// heuristic matched: a corrupted PDU of a known flow is then shown as SUE with a bad R-CRC, not as
// anonymous UDP. read_frame consults the hook; dissect/flow_table.hpp implements it for the CLI.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scaleup/wire/ip_address.hpp"
#include "scaleup/wire/siphash.hpp"

namespace scaleup::wire {

// Addresses and ports of both ends, in either direction: make() puts the lower end first, so a
// datagram and its reply name the same flow.
struct udp_flow {
  ip_address a{};
  ip_address b{};
  std::uint16_t port_a = 0;
  std::uint16_t port_b = 0;

  static constexpr udp_flow make(const ip_address& src, std::uint16_t sport, const ip_address& dst,
                                 std::uint16_t dport) noexcept {
    if (dst < src || (dst == src && dport < sport)) return {dst, src, dport, sport};
    return {src, dst, sport, dport};
  }
  // make() of two IPv4 addresses, ordered as make() orders them (an IPv4 address's words are
  // the address, then zeros), without building each address aside and copying it.
  static constexpr udp_flow make_v4(std::uint32_t src, std::uint16_t sport, std::uint32_t dst,
                                    std::uint16_t dport) noexcept {
    const bool swap = dst < src || (dst == src && dport < sport);
    udp_flow f;
    f.a.bytes = ip_address::v4_bytes(swap ? dst : src);
    f.b.bytes = ip_address::v4_bytes(swap ? src : dst);
    f.port_a = swap ? dport : sport;
    f.port_b = swap ? sport : dport;
    return f;
  }
  friend constexpr auto operator<=>(const udp_flow&, const udp_flow&) = default;
};

// The keyed hash (wire/siphash.hpp) of two ends, each two words, and one word of the rest of a
// key. The ends' second words are left out when both are zero (IPv4 addresses, XPUs): a
// message of three words, not five, is two rounds of SipHash fewer, and it still holds the
// whole key.
constexpr std::uint64_t keyed_hash_of_ends(const hash_key& k, std::uint64_t a0, std::uint64_t a1,
                                           std::uint64_t b0, std::uint64_t b1,
                                           std::uint64_t rest) noexcept {
  if ((a1 | b1) == 0) return keyed_hash(k, a0, b0, rest);
  return keyed_hash(k, a0, a1, b0, b1, rest);
}

// A flow's hash under a table's key: its addresses' words, then their versions and the ports in
// one word. Every field in its own bits, so that only equal flows give equal words.
struct udp_flow_hash {
  constexpr std::uint64_t operator()(const hash_key& k, const udp_flow& f) const noexcept {
    const std::uint64_t rest = std::uint64_t{f.a.version} | std::uint64_t{f.b.version} << 8 |
                               std::uint64_t{f.port_a} << 16 | std::uint64_t{f.port_b} << 32;
    return keyed_hash_of_ends(k, f.a.raw_word(0), f.a.raw_word(1), f.b.raw_word(0), f.b.raw_word(1),
                              rest);
  }
};

class flow_binding {
 public:
  // Whether the flow was recognised as SUE before.
  virtual bool bound(const udp_flow& f) const noexcept = 0;
  // The flow has been recognised as SUE (by its payload): its later datagrams are SUE too.
  virtual void bind(const udp_flow& f) noexcept = 0;
  // Whether a flow on this port has been recognised: a datagram the capture cut (its R-CRC not
  // captured) is taken for SUE on such a port when its RH is plausible, so that a header-only
  // capture still shows SUE.
  virtual bool port_bound(std::uint16_t port) const noexcept = 0;
  // A cut datagram held a plausible RH that nothing confirmed (its port unnamed, no flow or
  // port recognised yet): it stays UDP, and the reader says so, so that a tool can read the
  // capture again with what the whole capture taught it (dissect/flow_table.hpp).
  virtual void unconfirmed(const udp_flow& f) noexcept = 0;

 protected:
  constexpr flow_binding() = default;
  constexpr flow_binding(const flow_binding&) = default;
  constexpr flow_binding& operator=(const flow_binding&) = default;
  constexpr ~flow_binding() = default;
};

}  // namespace scaleup::wire
