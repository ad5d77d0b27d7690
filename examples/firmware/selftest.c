/* The loop a NIC's firmware runs, on one connection: pack four writes, send each as a PDU, lose
 * the second on the way, receive with go-back-N, NACK, resend from the lost PSN, and unpack. */
#include "firmware.h"

enum { pdus = 4 };
#define FW_ARENA_BYTES (53 * 1024)

/* The memory of the components' C ABI objects, for the two phases in turn: the packer and two
 * go-back-N endpoints (about 10 KB), then two SUE instances (26 KB each on a Cortex-M4). */
static _Alignas(8) unsigned char arena[FW_ARENA_BYTES];

/* PDUs on the wire: from end 0 (the sender) to end 1, and back; and what end 1 delivered. */
static fw_pdus forth, resent, back;
static int delivered, commands;

static bool same(const uint8_t* a, const uint8_t* b, size_t n) {
  while (n--)
    if (*a++ != *b++) return false;
  return true;
}

/* End 1 takes a PDU: its R-CRC and RH read as a receive path does, then go-back-N; a payload
 * it delivers is unpacked. False on a malformed or refused PDU. */
static bool receive(const uint8_t* pdu, size_t len, uint64_t now) {
  size_t end = 0, n = 0;
  uint16_t x = 0, p = 0, a = 0;
  uint8_t o = 0, v = 0;
  const uint8_t* payload = NULL;
  if (!fw_pdu_check(pdu, len, &end)) return false;
  if (!fw_rh_decode(pdu, &x, &p, &a, &o, &v) || x != 1) return false;
  if (!fw_gbn_arrive(1, pdu, len, now, &back, &payload, &n)) return false;
  if (!payload) return true; /* dropped by go-back-N: not an error */
  ++delivered;
  commands += fw_unpack_count(payload, n);
  return n == end - 8;
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

  /* 2. Pack four writes for the peer (XPU 2): four payloads of one command each (128 bytes at
   * most, and a write takes 76). */
  const size_t packer_bytes = fw_pack_init(arena, sizeof arena);
  if (packer_bytes == 0 || fw_gbn_init(arena + packer_bytes, sizeof arena - packer_bytes) == 0)
    return 15;
  for (int i = 0; i < pdus; ++i)
    if (!fw_pack_write(2, 0, 0x1000u * (uint64_t)(i + 1), data)) return 2;
  for (int i = 0; i < pdus; ++i) {
    uint8_t payload[128] = {0}, pdu[FW_PDU_BYTES];
    uint16_t dst = 0;
    uint8_t pvc = 0;
    const size_t n = fw_pack_next(payload, sizeof payload, &dst, &pvc);
    if (n != 76 || dst != 2) return 3;
    /* 3. Go-back-N gives each PDU its PSN and writes it: the PDU pdu_emit writes for its RH. */
    if (fw_gbn_send(0, payload, n, 10 * (uint64_t)i, &forth) != i) return 4;
    if (forth.len[i] != 8 + 76 + 4 ||
        !fw_rh_decode(forth.bytes[i], &xpuid, &npsn, &apsn, &op, &vc) || npsn != i)
      return 5;
    if (fw_pdu_emit(forth.bytes[i], payload, n, pdu, sizeof pdu) != forth.len[i] ||
        !same(pdu, forth.bytes[i], forth.len[i]))
      return 6;
  }

  /* 4. The receiver sees PDU 0, loses PDU 1, sees 2 and 3 (dropped as a gap): one NACK of 1,
   * alone in an RH. */
  if (!receive(forth.bytes[0], forth.len[0], 100) || !receive(forth.bytes[2], forth.len[2], 300) ||
      !receive(forth.bytes[3], forth.len[3], 400))
    return 7;
  if (delivered != 1) return 8;
  if (back.count != 1 || back.len[0] != 8 + 4 ||
      !fw_rh_decode(back.bytes[0], &xpuid, &npsn, &apsn, &op, &vc) || op != 1 /* NACK */ ||
      apsn != 1)
    return 9;

  /* 5. The sender takes the NACK, goes back to PSN 1 and resends 1, 2 and 3. */
  const uint8_t* none = NULL;
  size_t none_len = 0;
  if (!fw_gbn_arrive(0, back.bytes[0], back.len[0], 500, &resent, &none, &none_len) || none ||
      resent.count != 3 || fw_gbn_resent(0) != 3 ||
      !fw_rh_decode(resent.bytes[0], &xpuid, &npsn, &apsn, &op, &vc) || npsn != 1)
    return 10;
  for (size_t k = 0; k < resent.count; ++k)
    if (!receive(resent.bytes[k], resent.len[k], 600 + k)) return 11;
  if (delivered != pdus || commands != pdus) return 12;

  /* 6. A corrupted PDU fails its R-CRC, and go-back-N refuses it. */
  forth.bytes[0][20] ^= 0x10;
  size_t end = 0;
  if (fw_pdu_check(forth.bytes[0], forth.len[0], &end) ||
      fw_gbn_arrive(1, forth.bytes[0], forth.len[0], 700, &back, &none, &none_len))
    return 13;

  /* 7. The whole SUE instance, as the firmware embeds it, in the arena the packer and the
   * endpoints are done with. */
  const int r = fw_instance_selftest(arena, sizeof arena);
  if (r != 0) return 20 + r;
  return 0;
}
