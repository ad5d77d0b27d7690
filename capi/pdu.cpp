// The SUE PDU for C: RH, payload and R-CRC written (wire::emit_pdu), the R-CRC computed
// (wire::crc32) and checked where the carrier gives the PDU's length (wire::pdu_bounds_exact).
#include "c_abi.hpp"

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/pdu.hpp"

namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::out;
using scaleup::capi::report;

static_assert(w::rcrc_size == SCALEUP_RCRC_SIZE);
static_assert(w::sue_max_payload == SCALEUP_SUE_MAX_PAYLOAD);
static_assert(w::sue_lite_max_payload == SCALEUP_SUE_LITE_MAX_PAYLOAD);
static_assert(static_cast<int>(w::rcrc_status::not_captured) == SCALEUP_RCRC_NOT_CAPTURED);

extern "C" {

std::uint32_t scaleup_rcrc_compute(const std::uint8_t* bytes, std::size_t len) {
  return w::crc32(in(bytes, len));
}

int scaleup_rcrc_check(const std::uint8_t* pdu, std::size_t pdu_len, scaleup_pdu_bounds* o) {
  const w::pdu_bounds b = w::pdu_bounds_exact(in(pdu, pdu_len));
  if (o) *o = {b.payload_end, b.pad, static_cast<std::uint8_t>(b.status), b.rcrc, b.computed};
  return static_cast<int>(b.status);
}

int scaleup_pdu_emit(const scaleup_rh* rh, const std::uint8_t* payload, std::size_t payload_len,
                     std::uint8_t* o, std::size_t out_len, std::size_t* written,
                     scaleup_error* err) {
  const auto r = w::emit_pdu(scaleup::capi::to_cpp(*rh), in(payload, payload_len), out(o, out_len));
  if (written) *written = r.ok() ? r.value : 0;
  return report(r.err, err);
}

}  // extern "C"
