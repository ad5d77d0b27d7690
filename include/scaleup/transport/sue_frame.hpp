// What a SUE receiver (an instance, a switch) needs of a frame, read once through wire's typed
// receive path (wire::read_frame, the reader the dissector builds its trees from): where it is
// going and where from, the SUE PDU it carries with the R-CRC's verdict, a SUE Lite payload, or
// that it is none of these (a PFC frame, a control message of the instance's failover exchange,
// a management packet).
//
// The destination is what the frame carries: AFH Gen 1 and Gen 2 carry XPU ids; over IP the
// addresses are mapped with the library's addressing plan (wire::addressing_plan), the map its
// frames are written with. SUE over UDP is on the port the sender writes (named to the reader,
// so that a corrupted PDU is still read as one, its R-CRC then bad).
//
// The control messages of the failover exchange ride in a carrier that names their transport
// (wire/failover.hpp); the frame reader finds them, and a SUE PDU's reader sees no SUE in them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/wire/failover.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/receive.hpp"
#include "scaleup/wire/xpu_map.hpp"

namespace scaleup::transport {

inline constexpr std::uint16_t mac_control_type = 0x8808;  // PFC frames (IEEE 802.3 31.4.1.3)

struct sue_frame {
  std::optional<wire::encap> kind;       // none: no SUE PDU or SUE Lite payload this reader knows
  std::optional<std::uint32_t> src_xpu;  // from the frame's addressing
  std::optional<std::uint32_t> dst_xpu;
  std::optional<wire::reliability_header> rh;
  wire::bytes payload{};  // the packed commands: between RH and R-CRC, or SUE Lite's
  wire::rcrc_status status = wire::rcrc_status::missing;
  std::uint8_t tc = 0;           // the traffic class the carrier has (AFH Gen 2, shim, IP, PCP)
  std::uint16_t ether_type = 0;  // after any VLAN tags (0: none read)
  wire::bytes control{};         // a control message of the failover exchange, if that is it

  // What a receiver accepts as a PDU (the receive API's rule): an RH whose R-CRC is good.
  constexpr bool good() const noexcept { return rh && status == wire::rcrc_status::good; }
  constexpr bool lite() const noexcept { return kind == wire::encap::lite; }
};

// The receive options an instance reads with: its own UDP port named, no guessing by content
// (a frame that is not on the port is not SUE), Ethernet frames without an FCS.
constexpr wire::receive_options sue_receive_options(std::uint16_t udp_port = wire::emit_udp_port) {
  wire::receive_options o;
  o.add_udp_port(udp_port);
  o.heuristics = false;
  o.fcs = wire::fcs_mode::absent;
  return o;
}

constexpr sue_frame read_sue_frame(wire::bytes f, const wire::receive_options& o) noexcept {
  const wire::received_frame rf = wire::read_frame(f, wire::link_ethernet, o);
  sue_frame r;
  r.src_xpu = rf.src_xpu;
  r.dst_xpu = rf.dst_xpu;
  if (rf.ipv4) {
    if (!r.dst_xpu)
      r.dst_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v4(rf.ipv4->value.dst));
    if (!r.src_xpu)
      r.src_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v4(rf.ipv4->value.src));
    r.tc = rf.ipv4->value.dscp;
  } else if (rf.ipv6) {
    if (!r.dst_xpu)
      r.dst_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v6(rf.ipv6->value.dst));
    if (!r.src_xpu)
      r.src_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v6(rf.ipv6->value.src));
    r.tc = static_cast<std::uint8_t>(rf.ipv6->value.tclass >> 2);
  }
  if (rf.shim) r.tc = rf.shim->value.tc;
  if (rf.afh2) r.tc = rf.afh2->value.tc;
  if (rf.afh2c) r.tc = rf.afh2c->value.tc;
  if (rf.vlan_count > 0) r.tc = rf.vlan[0].value.pcp;
  if (rf.eth) {
    r.ether_type = rf.eth->value.type;
    if (rf.vlan_count > 0) r.ether_type = rf.vlan[rf.vlan_count - 1].value.type;
  }
  // A control message of the failover exchange, as the reader found it.
  if (rf.failover) {
    r.control = rf.frame.subspan(rf.failover->offset, wire::layout<wire::failover_message>::size);
    return r;
  }
  if (rf.kind) {
    r.kind = rf.kind;
    r.rh = rf.rh;
    r.status = rf.bounds.status;
    r.payload = rf.payload;
  }
  return r;
}

}  // namespace scaleup::transport
