// How the fabric reads a frame: where it is going and the SUE PDU it carries, with the R-CRC's
// verdict, taken from wire's typed receive path (wire::read_frame), the same reader the
// dissector builds its trees from: the harness never reads frames any other way.
//
// The destination is what the frame carries: AFH Gen 1 and Gen 2 carry XPU ids; over IP the
// fabric maps the address with the library's addressing plan (wire::addressing_plan), the map
// its frames are written with. SUE over UDP is on the port the fabric writes (wire::emit_udp_port),
// named to the reader so that a corrupted PDU is still read as one (its R-CRC then bad).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/receive.hpp"
#include "scaleup/wire/xpu_map.hpp"

namespace scaleup::sim {

struct pdu_read {
  std::optional<wire::encap> kind;       // none: not a SUE frame this reader knows
  std::optional<std::uint32_t> dst_xpu;  // the destination, from the frame's addressing
  std::optional<wire::reliability_header> rh;
  wire::bytes payload{};  // the packed commands between RH and R-CRC
  wire::rcrc_status status = wire::rcrc_status::missing;

  // What a receiver accepts (the receive API's rule): an RH whose R-CRC is good.
  constexpr bool good() const noexcept { return rh && status == wire::rcrc_status::good; }
};

inline constexpr wire::receive_options fabric_receive = [] {
  wire::receive_options o;
  o.add_udp_port(wire::emit_udp_port);
  return o;
}();

constexpr pdu_read read_pdu(wire::bytes f) noexcept {
  const wire::received_frame rf = wire::read_frame(f, wire::link_ethernet, fabric_receive);
  pdu_read r;
  if (!rf.kind || *rf.kind == wire::encap::lite) return r;  // SUE Lite carries no RH
  r.kind = rf.kind;
  if (rf.dst_xpu)
    r.dst_xpu = rf.dst_xpu;
  else if (rf.ipv4)
    r.dst_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v4(rf.ipv4->value.dst));
  else if (rf.ipv6)
    r.dst_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v6(rf.ipv6->value.dst));
  r.rh = rf.rh;
  r.status = rf.bounds.status;
  r.payload = rf.payload;
  return r;
}

}  // namespace scaleup::sim
