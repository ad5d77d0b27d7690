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

#include "scaleup/transport/sue_frame.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/receive.hpp"

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

// The transport's reading (transport::read_sue_frame), as a PDU: nothing for SUE Lite, which
// carries no RH.
constexpr pdu_read read_pdu(wire::bytes f) noexcept {
  const transport::sue_frame s = transport::read_sue_frame(f, fabric_receive);
  pdu_read r;
  if (!s.kind || s.lite()) return r;
  r.kind = s.kind;
  r.dst_xpu = s.dst_xpu;
  r.rh = s.rh;
  r.status = s.status;
  r.payload = s.payload;
  return r;
}

}  // namespace scaleup::sim
