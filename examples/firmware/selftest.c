/* The loop a NIC's firmware runs, on one connection: pack four writes, frame each PDU, lose the
 * second on the way, receive with go-back-N, NACK, resend from the lost PSN, and unpack. */
#include "firmware.h"

enum { pdus = 4 };

/* The PDUs as sent (kept for resend) and what the receiver made of them. */
static uint8_t wire[pdus][256];
static size_t wire_len[pdus];
static int delivered, commands;

/* The receiver takes PDU i: R-CRC, RH, go-back-N, unpack. False on a malformed PDU. */
static bool receive(int i, uint64_t now) {
  size_t end = 0;
  uint16_t x = 0, p = 0, a = 0;
  uint8_t o = 0, v = 0;
  if (!fw_pdu_check(wire[i], wire_len[i], &end)) return false;
  if (!fw_rh_decode(wire[i], &x, &p, &a, &o, &v)) return false;
  if (!fw_gbn_receive(p, now)) return true; /* dropped by go-back-N: not an error */
  ++delivered;
  commands += fw_unpack_count(wire[i] + 8, end - 8);
  return true;
}

int fw_selftest(void) {
  uint8_t data[64];
  for (size_t i = 0; i < sizeof data; ++i) data[i] = (uint8_t)i;

  /* 1. RH round trip. */
  uint8_t rh[8];
  uint16_t xpuid = 0, npsn = 0, apsn = 0;
  uint8_t op = 0, vc = 0;
  if (!fw_rh_encode(42, 7, 6, 0, 1, rh) || !fw_rh_decode(rh, &xpuid, &npsn, &apsn, &op, &vc) ||
      xpuid != 42 || npsn != 7 || apsn != 6 || vc != 1)
    return 1;

  /* The CRC-32 the R-CRC uses, however its tables are sliced: the catalogued check value of
   * CRC-32/ISO-HDLC over "123456789". */
  static const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  if (fw_crc32_of(check, sizeof check) != 0xCBF43926u) return 14;

  /* 2. Pack four writes to four destinations: four payloads, one command each. */
  for (int i = 0; i < pdus; ++i)
    if (!fw_pack_write((uint16_t)(i + 1), 0, 0x1000u * (uint64_t)(i + 1), data)) return 2;
  for (int i = 0; i < pdus; ++i) {
    uint8_t payload[128] = {0};
    uint16_t dst = 0;
    uint8_t pvc = 0;
    const size_t n = fw_pack_next(payload, sizeof payload, &dst, &pvc);
    if (n != 76) return 3;
    const int psn = fw_gbn_send(); /* 3. go-back-N gives each PDU its PSN */
    if (psn != i) return 4;
    if (!fw_rh_encode(5, (uint16_t)psn, 0, 3 /* none */, pvc, rh)) return 5;
    wire_len[i] = fw_pdu_emit(rh, payload, n, wire[i], sizeof wire[i]);
    if (wire_len[i] != 8 + 76 + 4) return 6;
  }

  /* 4. The receiver sees PDU 0, loses PDU 1, sees 2 and 3 (dropped as a gap): NACK 1. */
  if (!receive(0, 100) || !receive(2, 300) || !receive(3, 400)) return 7;
  if (delivered != 1) return 8;
  if (!fw_gbn_pending_ack(&op, &apsn) || op != 1 /* NACK */ || apsn != 1) return 9;

  /* 5. The sender goes back to PSN 1 and resends 1, 2 and 3. */
  uint32_t resend = 0;
  uint16_t from = 0;
  fw_gbn_sender_ack(apsn, true, &resend, &from);
  if (resend != 3 || from != 1) return 10;
  for (uint32_t k = 0; k < resend; ++k)
    if (!receive((int)(from + k), 500 + k)) return 11;
  if (delivered != pdus || commands != pdus) return 12;

  /* 6. A corrupted PDU fails its R-CRC. */
  wire[0][20] ^= 0x10;
  size_t end = 0;
  if (fw_pdu_check(wire[0], wire_len[0], &end)) return 13;

  /* 7. The whole SUE instance, as the firmware embeds it. */
  const int r = fw_instance_selftest();
  if (r != 0) return 20 + r;
  return 0;
}
