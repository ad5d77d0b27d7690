#include <array>

#include "firmware.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace fw {

bool rh_encode(std::uint16_t xpuid, std::uint16_t npsn, std::uint16_t apsn, std::uint8_t op,
               std::uint8_t vc, std::uint8_t out[8]) {
  const scaleup::wire::reliability_header rh{
      .op = op, .xpuid = xpuid, .npsn = npsn, .vc = vc, .apsn = apsn};
  return scaleup::wire::encode(rh, scaleup::wire::mutable_bytes(out, 8)).ok();
}

bool rh_decode(const std::uint8_t in[8], std::uint16_t& xpuid, std::uint16_t& npsn,
               std::uint16_t& apsn, std::uint8_t& op, std::uint8_t& vc) {
  const auto r =
      scaleup::wire::decode<scaleup::wire::reliability_header>(scaleup::wire::bytes(in, 8));
  if (!r.ok()) return false;
  xpuid = r->xpuid, npsn = r->npsn, apsn = r->apsn, op = r->op, vc = r->vc;
  return true;
}

}  // namespace fw
