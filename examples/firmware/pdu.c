#include "firmware.h"
#include "scaleup/scaleup.h"

size_t fw_pdu_emit(const uint8_t rh[8], const uint8_t* payload, size_t n, uint8_t* out,
                   size_t cap) {
  scaleup_rh h;
  size_t written = 0;
  if (scaleup_rh_decode(rh, SCALEUP_RH_SIZE, &h, NULL) != 0) return 0;
  return scaleup_pdu_emit(&h, payload, n, out, cap, &written, NULL) == 0 ? written : 0;
}

bool fw_pdu_check(const uint8_t* pdu, size_t n, size_t* payload_end) {
  scaleup_pdu_bounds b;
  const int status = scaleup_rcrc_check(pdu, n, &b);
  *payload_end = b.payload_end;
  return status == SCALEUP_RCRC_GOOD;
}

uint32_t fw_crc32_of(const uint8_t* data, size_t n) { return scaleup_rcrc_compute(data, n); }
