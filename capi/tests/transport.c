/* The transport of the C ABI from C: two go-back-N endpoints, then two SUE instances, over a
 * wire that loses one PDU; every payload arrives once and in order, and the loss was repaired by
 * a retransmission. Then the refusals: storage too small, an unknown sizing, a bad config. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "scaleup/scaleup.h"

/* ---- a wire: PDUs or frames in flight towards each of two ends, copied ------------------- */

#define WIRE_SLOTS 64
#define WIRE_BYTES 512

typedef struct wire {
  uint8_t bytes[WIRE_SLOTS][WIRE_BYTES];
  size_t len[WIRE_SLOTS];
  size_t head, count;
} wire;

static void wire_put(wire* w, const uint8_t* bytes, size_t len) {
  size_t at = (w->head + w->count) % WIRE_SLOTS;
  CHECK(w->count < WIRE_SLOTS && len <= WIRE_BYTES);
  if (w->count == WIRE_SLOTS || len > WIRE_BYTES) return;
  memcpy(w->bytes[at], bytes, len);
  w->len[at] = len;
  ++w->count;
}

/* The oldest in flight, copied to out; 0 when none. */
static size_t wire_take(wire* w, uint8_t* out) {
  size_t len;
  if (w->count == 0) return 0;
  len = w->len[w->head];
  memcpy(out, w->bytes[w->head], len);
  w->head = (w->head + 1) % WIRE_SLOTS;
  --w->count;
  return len;
}

/* ---- the go-back-N endpoint ------------------------------------------------------------- */

#define PAYLOADS 20

static unsigned char endpoint_storage[2][1 << 13];

/* A payload of 16 bytes numbered n: its first byte says which, for the order check. */
static void payload_of(uint8_t n, uint8_t* p) {
  size_t i;
  for (i = 0; i < 16; ++i) p[i] = (uint8_t)(n + i * 3);
}

/* An endpoint's PDUs onto the wire to its peer; the PDU carrying payload `lose` is lost once. */
static void endpoint_out(const scaleup_endpoint_actions* a, wire* to_peer, int* lose) {
  size_t i;
  for (i = 0; i < a->transmit_count; ++i) {
    const scaleup_outgoing_pdu* p = &a->transmit[i];
    CHECK(p->bytes_len == SCALEUP_RH_SIZE + p->payload_len + SCALEUP_RCRC_SIZE);
    CHECK(scaleup_rcrc_check(p->bytes, p->bytes_len, NULL) == SCALEUP_RCRC_GOOD);
    if (*lose >= 0 && p->payload_len > 0 && p->payload[0] == (uint8_t)*lose) {
      *lose = -1;
      continue;
    }
    wire_put(to_peer, p->bytes, p->bytes_len);
  }
}

void test_endpoint(void) {
  static wire to[2]; /* to[i]: PDUs heading for endpoint i */
  scaleup_endpoint* ep[2];
  scaleup_endpoint_config cfg;
  scaleup_endpoint_actions a;
  scaleup_endpoint_event e;
  scaleup_endpoint_counters n;
  scaleup_error err;
  uint8_t payload[16], pdu[WIRE_BYTES];
  uint8_t sent = 0, got = 0;
  int lose = 5, i;
  uint64_t now;

  CHECK(scaleup_endpoint_size(SCALEUP_SIZING_FIRMWARE) <= sizeof endpoint_storage[0]);
  CHECK(scaleup_endpoint_size(SCALEUP_SIZING_FABRIC) > (size_t)256 * 4096);
  CHECK(scaleup_endpoint_size(7) == 0);
  scaleup_endpoint_config_init(&cfg);
  CHECK(cfg.gbn.window == 256 && cfg.gbn.rto == 8000 && cfg.gbn.max_retries == 7);
  for (i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    ep[i] = scaleup_endpoint_init(endpoint_storage[i] + 1, sizeof endpoint_storage[i] - 1,
                                  SCALEUP_SIZING_FIRMWARE, &cfg, &err);
    CHECK(ep[i] != NULL && err.code == SCALEUP_ERRC_NONE);
    if (!ep[i]) return;
  }

  /* Endpoint 0 sends PAYLOADS payloads to endpoint 1, which acknowledges them. */
  /* Until every payload is delivered and acknowledged (the last ACK is a coalesced one). */
  for (now = 0; (got < PAYLOADS || scaleup_endpoint_deadline(ep[0]) != SCALEUP_NO_DEADLINE) &&
                now < 10000000;
       now += 100) {
    if (sent < PAYLOADS && scaleup_endpoint_can_send(ep[0])) {
      memset(&e, 0, sizeof e);
      e.input = SCALEUP_ENDPOINT_SEND;
      payload_of(sent, payload);
      e.bytes = payload;
      e.bytes_len = sizeof payload;
      CHECK(scaleup_endpoint_step(ep[0], now, &e, &a) == 0);
      CHECK(a.accepted && a.sent_psn == sent && a.transmit_count >= 1);
      CHECK(a.transmit[a.transmit_count - 1].rh.xpuid == 1);
      CHECK(a.transmit[a.transmit_count - 1].rh.npsn == sent);
      ++sent;
      endpoint_out(&a, &to[1], &lose);
    }
    for (i = 0; i < 2; ++i)
      if (scaleup_endpoint_deadline(ep[i]) <= now) {
        CHECK(scaleup_endpoint_step(ep[i], now, NULL, &a) == 0);
        endpoint_out(&a, &to[1 - i], &lose);
      }
    /* The wire delivers everything in flight at once, both ways, until it is quiet. */
    while (to[0].count + to[1].count > 0)
      for (i = 0; i < 2; ++i) {
        size_t len = wire_take(&to[i], pdu);
        if (len == 0) continue;
        memset(&e, 0, sizeof e);
        e.input = SCALEUP_ENDPOINT_ARRIVED;
        e.bytes = pdu;
        e.bytes_len = len;
        CHECK(scaleup_endpoint_step(ep[i], now, &e, &a) == 0);
        if (a.delivered_len > 0) {
          CHECK(i == 1 && a.delivered_len == 16);
          payload_of(got, payload);
          CHECK(memcmp(a.delivered, payload, 16) == 0); /* once, in order */
          ++got;
        }
        endpoint_out(&a, &to[1 - i], &lose);
      }
  }
  CHECK(sent == PAYLOADS && got == PAYLOADS && lose == -1);
  scaleup_endpoint_stats(ep[0], &n);
  CHECK(n.sent == PAYLOADS && n.resent > 0 && n.in_flight == 0 && !n.unreachable);
  scaleup_endpoint_stats(ep[1], &n);
  CHECK(n.delivered == PAYLOADS && n.dropped_gap > 0 && n.rejected == 0);
  CHECK(scaleup_endpoint_deadline(ep[0]) == SCALEUP_NO_DEADLINE);

  /* A damaged PDU is refused, with the reason; an empty payload is not sent. */
  memset(&e, 0, sizeof e);
  e.input = SCALEUP_ENDPOINT_SEND;
  payload_of(0, payload);
  e.bytes = payload;
  e.bytes_len = sizeof payload;
  CHECK(scaleup_endpoint_step(ep[0], now, &e, &a) == 0 && a.transmit_count == 1);
  memcpy(pdu, a.transmit[0].bytes, a.transmit[0].bytes_len);
  pdu[SCALEUP_RH_SIZE] ^= 1;
  e.input = SCALEUP_ENDPOINT_ARRIVED;
  e.bytes = pdu;
  e.bytes_len = a.transmit[0].bytes_len;
  CHECK(scaleup_endpoint_step(ep[1], now, &e, &a) == SCALEUP_ERRC_BAD_CHECKSUM);
  CHECK(same(a.error.layer, a.error.layer_len, "sue.rcrc") && a.delivered_len == 0);
  e.input = SCALEUP_ENDPOINT_SEND;
  e.bytes_len = 0;
  CHECK(scaleup_endpoint_step(ep[0], now, &e, &a) == SCALEUP_ERRC_BAD_LENGTH && !a.accepted);
  e.input = 9;
  CHECK(scaleup_endpoint_step(ep[0], now, &e, &a) == SCALEUP_ERRC_BAD_VALUE);

  /* Refusals at init: storage too small, an unknown sizing, an xpuid wider than 10 bits. */
  CHECK(scaleup_endpoint_init(endpoint_storage[0], 64, SCALEUP_SIZING_FIRMWARE, NULL, &err) ==
        NULL);
  CHECK(err.code == SCALEUP_ERRC_NO_SPACE && err.available == 64);
  CHECK(scaleup_endpoint_init(endpoint_storage[0], sizeof endpoint_storage[0], 7, NULL, &err) ==
        NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && err.value == 7);
  scaleup_endpoint_config_init(&cfg);
  cfg.xpuid = 1024;
  CHECK(scaleup_endpoint_init(endpoint_storage[0], sizeof endpoint_storage[0],
                              SCALEUP_SIZING_FIRMWARE, &cfg, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_VALUE_TOO_BIG && err.value == 1024);
}

void test_instance(void) {}
