#include "scaleup/wire/pdu.hpp"
#include "firmware.hpp"

namespace fw {

std::size_t pdu_emit(const std::uint8_t rh[8], const std::uint8_t* payload, std::size_t n,
                     std::uint8_t* out, std::size_t cap) {
  using namespace scaleup::wire;
  const auto h = decode<reliability_header>(bytes(rh, 8));
  if (!h.ok()) return 0;
  const auto r = emit_pdu(*h, bytes(payload, n), mutable_bytes(out, cap));
  return r.ok() ? r.value : 0;
}

bool pdu_check(const std::uint8_t* pdu, std::size_t n, std::size_t& payload_end) {
  const auto b = scaleup::wire::pdu_bounds_exact(scaleup::wire::bytes(pdu, n));
  payload_end = b.payload_end;
  return b.status == scaleup::wire::rcrc_status::good;
}

std::uint32_t crc32_of(const std::uint8_t* data, std::size_t n) {
  return scaleup::wire::crc32(scaleup::wire::bytes(data, n));
}

}  // namespace fw
