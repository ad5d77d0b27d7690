// How the fabric reads a frame: where it is going and the SUE PDU it carries, with the R-CRC's
// verdict. The one place the harness reads frames, with wire/'s decoders only (never the
// dissection tree). It stands in for wire's typed receive path (wire::read_frame), to which it
// gives way once that exists: the fields below are the ones the fabric takes from it.
//
// Recognised as SUE, as the dissector does by default (docs/wire-format.md): AFH Gen 2 by the
// SLAP signature of the first octet, normal when W = 0 and the SUE Ethertype follows at byte
// 12, compressed when W = 1 and it follows at byte 6 (without it, SUE Lite: no RH); otherwise
// Ethernet II with an optional 802.1Q tag: IPv4 or IPv6 without extension headers and UDP to
// port 4793, the AFH Gen 1 shim (next header 253), or the SUE Ethertype (AFH Gen 1).
// The PDU's end: UDP's and the shim's length give it; the other Layer 2 frames run to the end,
// and a minimum-size frame may end in padding after the R-CRC (wire::pdu_bounds_l2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::sim {

// The library's addressing plan read backwards (wire::xpu_ipv4, wire::xpu_ipv6): the XPU an
// address names, or none when the address is outside the plan.
constexpr std::optional<std::uint32_t> xpu_of_ipv4(std::uint32_t a) noexcept {
  if ((a & ~wire::xpu_ipv4_max) != wire::xpu_ipv4(0)) return std::nullopt;
  return a & wire::xpu_ipv4_max;
}
constexpr std::optional<std::uint32_t> xpu_of_ipv6(const wire::ipv6_address& a) noexcept {
  const wire::ipv6_address base = wire::xpu_ipv6(0);
  for (std::size_t i = 0; i < 12; ++i)
    if (a[i] != base[i]) return std::nullopt;
  return wire::load_be32(a.data() + 12);
}

struct pdu_read {
  std::optional<wire::encap> kind;       // none: not a SUE frame this reader knows
  std::optional<std::uint32_t> dst_xpu;  // the destination, from the frame's addressing
  std::optional<wire::reliability_header> rh;
  wire::bytes payload{};  // the packed commands between RH and R-CRC
  wire::rcrc_status status = wire::rcrc_status::missing;

  // What a receiver accepts (the receive API's rule): an RH whose R-CRC is good.
  constexpr bool good() const noexcept { return rh && status == wire::rcrc_status::good; }
};

constexpr pdu_read read_pdu(wire::bytes f) noexcept {
  using namespace wire;
  pdu_read r;
  std::size_t at = 0;
  std::size_t end = f.size();
  bool exact = false;  // the carrier gives the PDU's length
  if (f.size() >= 8 && has_afh2_signature(f[0]) && (f[0] & afh2_w_bit) != 0) {
    if (load_be16(f.data() + 6) != ethertype::sue) return r;  // SUE Lite: no RH
    r.kind = encap::afh2c;
    r.dst_xpu = view<afh2_compressed>::make(f)->get<&afh2_compressed::dst_xpu>();
    at = 8;
  } else if (f.size() >= 14 && has_afh2_signature(f[0]) &&
             load_be16(f.data() + 12) == ethertype::sue) {
    r.kind = encap::afh2;
    r.dst_xpu = view<afh2_normal>::make(f)->get<&afh2_normal::dst_xpu>();
    at = 14;
  } else {
    if (f.size() < 14) return r;
    std::uint16_t type = load_be16(f.data() + 12);
    at = 14;
    const bool tagged = type == ethertype::vlan;
    if (tagged) {
      if (f.size() < 18) return r;
      type = load_be16(f.data() + 16);
      at = 18;
    }
    if (type == ethertype::sue) {
      r.kind = tagged ? encap::afh1_vlan : encap::afh1;
      r.dst_xpu = view<afh1_addresses>::make(f)->get<&afh1_addresses::dst_xpu>();
    } else if (type == ethertype::afh1_shim) {
      const auto v = view<afh1_shim>::make(f.subspan(at));
      if (!v || v->get<&afh1_shim::next_header>() != shim_next_sue) return r;
      r.kind = tagged ? encap::afh1_vlan_shim : encap::afh1_shim;
      r.dst_xpu = v->get<&afh1_shim::dst_xpu>();
      at += layout<afh1_shim>::size;
      end = at + v->get<&afh1_shim::length>();
      exact = true;
    } else if (type == ethertype::ipv4 && !tagged) {
      const auto ip = view<ipv4_header>::make(f.subspan(at));
      if (!ip || ip->get<&ipv4_header::protocol>() != ip_proto_udp) return r;
      const std::size_t ihl = 4u * ip->get<&ipv4_header::ihl>();
      if (ihl < 20) return r;
      r.dst_xpu = xpu_of_ipv4(ip->get<&ipv4_header::dst>());
      end = at + ip->get<&ipv4_header::total_length>();
      at += ihl;
      r.kind = encap::udp4;
    } else if (type == ethertype::ipv6 && !tagged) {
      const auto ip = view<ipv6_header>::make(f.subspan(at));
      if (!ip || ip->get<&ipv6_header::next_header>() != ip_proto_udp) return r;
      r.dst_xpu = xpu_of_ipv6(ip->get<&ipv6_header::dst>());
      at += layout<ipv6_header>::size;
      end = at + ip->get<&ipv6_header::payload_length>();
      r.kind = encap::udp6;
    } else {
      return r;
    }
    if (r.kind == encap::udp4 || r.kind == encap::udp6) {
      const auto udp = view<udp_header>::make(f.subspan(at < f.size() ? at : f.size()));
      if (!udp || udp->get<&udp_header::dst_port>() != default_sue_udp_port || end > f.size() ||
          at + udp->get<&udp_header::length>() != end) {
        r.kind.reset();
        return r;
      }
      at += layout<udp_header>::size;
      exact = true;
    }
  }
  if (end > f.size() || at > end) return r;
  const bytes pdu = f.subspan(at, end - at);
  const pdu_bounds b = exact ? pdu_bounds_exact(pdu) : pdu_bounds_l2(pdu, f.size());
  if (const auto rh = decode<reliability_header>(pdu)) r.rh = rh.value;
  r.status = b.status;
  if (b.payload_end >= 8) r.payload = pdu.subspan(8, b.payload_end - 8);
  return r;
}

}  // namespace scaleup::sim
