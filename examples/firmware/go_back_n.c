/* Go-back-N: the two ends of one connection, this XPU's and its peer's, each a go-back-N endpoint
 * of the firmware sizing (a window of 8 PDUs) in the storage given. An endpoint writes its PDUs
 * itself (RH, payload, R-CRC) and carries its receiver's ACK or NACK in them, or in a stand-alone
 * RH when nothing else goes out. */
#include "firmware.h"
#include "scaleup/scaleup.h"

static scaleup_endpoint* ends[2];

size_t fw_gbn_init(void* storage, size_t size) {
  const size_t each = scaleup_endpoint_size(SCALEUP_SIZING_FIRMWARE);
  scaleup_endpoint_config cfg;
  scaleup_endpoint_config_init(&cfg);
  cfg.gbn.window = 8;
  if (size < 2 * each) return 0;
  for (int i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    ends[i] = scaleup_endpoint_init((unsigned char*)storage + i * each, each,
                                    SCALEUP_SIZING_FIRMWARE, &cfg, NULL);
    if (!ends[i]) return 0;
  }
  return 2 * each;
}

/* The PDUs a step put on the wire, copied (the endpoint's own are valid until its next step). */
static bool copy_out(const scaleup_endpoint_actions* a, fw_pdus* out) {
  for (size_t i = 0; i < a->transmit_count; ++i) {
    const scaleup_outgoing_pdu* p = &a->transmit[i];
    if (out->count == FW_PDUS || p->bytes_len > FW_PDU_BYTES) return false;
    for (size_t k = 0; k < p->bytes_len; ++k) out->bytes[out->count][k] = p->bytes[k];
    out->len[out->count++] = p->bytes_len;
  }
  return true;
}

int fw_gbn_send(int end, const uint8_t* payload, size_t n, uint64_t now, fw_pdus* out) {
  scaleup_endpoint_event e = {.input = SCALEUP_ENDPOINT_SEND, .bytes = payload, .bytes_len = n};
  scaleup_endpoint_actions a;
  if (scaleup_endpoint_step(ends[end], now, &e, &a) != 0 || !a.accepted || !copy_out(&a, out))
    return -1;
  return a.sent_psn;
}

bool fw_gbn_arrive(int end, const uint8_t* pdu, size_t n, uint64_t now, fw_pdus* out,
                   const uint8_t** delivered, size_t* delivered_len) {
  scaleup_endpoint_event e = {.input = SCALEUP_ENDPOINT_ARRIVED, .bytes = pdu, .bytes_len = n};
  scaleup_endpoint_actions a;
  if (scaleup_endpoint_step(ends[end], now, &e, &a) != 0) return false;
  *delivered = a.delivered_len > 0 ? a.delivered : NULL;
  *delivered_len = a.delivered_len;
  return copy_out(&a, out);
}

uint64_t fw_gbn_resent(int end) {
  scaleup_endpoint_counters c;
  scaleup_endpoint_stats(ends[end], &c);
  return c.resent;
}
