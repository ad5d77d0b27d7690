#include "firmware.h"
#include "scaleup/scaleup.h"

bool fw_rh_encode(uint16_t xpuid, uint16_t npsn, uint16_t apsn, uint8_t op, uint8_t vc,
                  uint8_t out[8]) {
  scaleup_rh rh;
  scaleup_rh_init(&rh);
  rh.op = op;
  rh.xpuid = xpuid;
  rh.npsn = npsn;
  rh.vc = vc;
  rh.apsn = apsn;
  return scaleup_rh_encode(&rh, out, SCALEUP_RH_SIZE, NULL) == 0;
}

bool fw_rh_decode(const uint8_t in[8], uint16_t* xpuid, uint16_t* npsn, uint16_t* apsn, uint8_t* op,
                  uint8_t* vc) {
  scaleup_rh rh;
  if (scaleup_rh_decode(in, SCALEUP_RH_SIZE, &rh, NULL) != 0) return false;
  *xpuid = rh.xpuid, *npsn = rh.npsn, *apsn = rh.apsn, *op = rh.op, *vc = rh.vc;
  return true;
}
