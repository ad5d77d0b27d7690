/* The transport of the C ABI from C: the go-back-N machines, then two endpoints and two SUE
 * instances over a wire that loses one PDU; every payload arrives once and in order, and the
 * loss was repaired by a retransmission. Then the refusals: storage too small, an unknown
 * sizing, a bad config. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- the go-back-N machines -------------------------------------------------------------- */

/* As the firmware's self-test drives them: four PDUs, the second lost; the receiver NACKs it
 * once, the sender goes back to it, and the ACK of the last releases the rest; then a timeout. */
void test_go_back_n(void) {
  scaleup_gbn_config cfg;
  scaleup_gbn_sender tx;
  scaleup_gbn_receiver rx;
  scaleup_gbn_sender_actions sa;
  scaleup_gbn_receiver_actions ra;
  uint16_t apsn = 0, p;
  int delivered = 0;

  scaleup_gbn_config_init(&cfg);
  cfg.window = 8;
  scaleup_gbn_sender_init(&tx);
  scaleup_gbn_receiver_init(&rx);
  for (p = 0; p < 4; ++p) {
    CHECK(scaleup_gbn_sender_step(&tx, SCALEUP_GBN_SENDER_SEND, 0, 0, &cfg, &sa) == 0);
    CHECK(sa.assigned && sa.psn_assigned == p);
  }
  CHECK(tx.next == 4 && tx.una == 0 && tx.timing && tx.deadline == cfg.rto);
  for (p = 0; p < 4; ++p) {
    if (p == 1) continue; /* lost */
    CHECK(scaleup_gbn_receiver_step(&rx, SCALEUP_GBN_RECEIVER_PDU, p, true, 100, &cfg, &ra) == 0);
    delivered += ra.deliver;
    CHECK(ra.dropped == (p == 0 ? SCALEUP_DROP_NONE : SCALEUP_DROP_GAP));
  }
  CHECK(delivered == 1 && rx.dropped_gap == 2 && ra.ack_now);
  CHECK(scaleup_gbn_pending_ack(&rx, &apsn) == SCALEUP_RH_OP_NACK && apsn == 1);
  CHECK(scaleup_gbn_receiver_step(&rx, SCALEUP_GBN_RECEIVER_ACK_SENT, 0, true, 100, &cfg, NULL) ==
        0);
  CHECK(rx.nacks_sent == 1 && scaleup_gbn_pending_ack(&rx, &apsn) == SCALEUP_RH_OP_NONE);

  CHECK(scaleup_gbn_sender_step(&tx, SCALEUP_GBN_SENDER_NACK, 1, 200, &cfg, &sa) == 0);
  CHECK(sa.resend == 3 && sa.resend_from == 1 && sa.released == 1 && sa.released_from == 0);
  for (p = 1; p < 4; ++p) {
    CHECK(scaleup_gbn_receiver_step(&rx, SCALEUP_GBN_RECEIVER_PDU, p, true, 300, &cfg, &ra) == 0);
    delivered += ra.deliver;
  }
  CHECK(delivered == 4 && scaleup_gbn_pending_ack(&rx, &apsn) == SCALEUP_RH_OP_ACK && apsn == 3);
  CHECK(scaleup_gbn_sender_step(&tx, SCALEUP_GBN_SENDER_ACK, apsn, 400, &cfg, &sa) == 0);
  CHECK(sa.released == 3 && tx.una == 4 && !tx.timing);

  /* A partition not allowed: dropped and counted, never delivered. */
  CHECK(scaleup_gbn_receiver_step(&rx, SCALEUP_GBN_RECEIVER_PDU, 4, false, 400, &cfg, &ra) == 0);
  CHECK(!ra.deliver && ra.dropped == SCALEUP_DROP_PARTITION && rx.dropped_partition == 1);

  /* One more PDU, no answer: at the RTO the sender goes back to it. */
  CHECK(scaleup_gbn_sender_step(&tx, SCALEUP_GBN_SENDER_SEND, 0, 1000, &cfg, &sa) == 0);
  CHECK(scaleup_gbn_sender_step(&tx, SCALEUP_GBN_SENDER_TICK, 0, 1000 + cfg.rto - 1, &cfg, &sa) ==
        0);
  CHECK(sa.resend == 0);
  CHECK(scaleup_gbn_sender_step(&tx, SCALEUP_GBN_SENDER_TICK, 0, 1000 + cfg.rto, NULL, &sa) == 0);
  CHECK(sa.resend == 1 && sa.resend_from == 4 && tx.timeouts == 1 && tx.resent == 4);
  CHECK(scaleup_gbn_sender_step(&tx, 4, 0, 0, NULL, &sa) == SCALEUP_ERRC_BAD_VALUE);
  CHECK(scaleup_gbn_receiver_step(&rx, -1, 0, true, 0, NULL, &ra) == SCALEUP_ERRC_BAD_VALUE);
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

  /* The fabric sizing's endpoint (about 1 MB: the heap, here) takes a payload of 4096 bytes,
   * which the firmware's refuses. */
  {
    static uint8_t big[4096];
    void* storage = malloc(scaleup_endpoint_size(SCALEUP_SIZING_FABRIC));
    scaleup_endpoint* fabric =
        storage ? scaleup_endpoint_init(storage, scaleup_endpoint_size(SCALEUP_SIZING_FABRIC),
                                        SCALEUP_SIZING_FABRIC, NULL, &err)
                : NULL;
    CHECK(fabric != NULL);
    e.input = SCALEUP_ENDPOINT_SEND;
    e.bytes = big;
    e.bytes_len = sizeof big;
    if (fabric) {
      CHECK(scaleup_endpoint_step(fabric, 0, &e, &a) == 0 && a.accepted);
      CHECK(a.transmit_count == 1 && a.transmit[0].bytes_len == 4096 + 12);
    }
    CHECK(scaleup_endpoint_step(ep[0], now, &e, &a) == SCALEUP_ERRC_VALUE_TOO_BIG);
    free(storage);
  }

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

/* ---- the SUE instance -------------------------------------------------------------------- */

#define WRITES 12

/* What the notes of one instance said, and the link messages it has for its link peer. */
typedef struct notes {
  uint64_t completed; /* commands acknowledged by the peer */
  uint64_t next_seq;  /* ...which come in offer order */
  int out_of_order;
  scaleup_instance_note messages[64];
  size_t message_count, messages_relayed;
} notes;

static void on_note(void* context, const scaleup_instance_note* n) {
  notes* s = (notes*)context;
  if (n->kind == SCALEUP_NOTE_LINK_MESSAGE) {
    CHECK(s->message_count < 64);
    if (s->message_count < 64) s->messages[s->message_count++] = *n;
    return;
  }
  if (n->kind != SCALEUP_NOTE_COMPLETED) return;
  if (n->first_seq != s->next_seq) s->out_of_order = 1;
  s->next_seq = n->first_seq + n->count;
  s->completed += n->count;
}

/* The link layer's messages (LLR ACK/NACK, CBFC credits) to the link peer, until none is left:
 * taking one may make the peer say something. */
static void relay_messages(scaleup_instance* xpu[2], notes note[2], uint64_t now) {
  int i, moved = 1;
  while (moved)
    for (moved = 0, i = 0; i < 2; ++i)
      while (note[i].message_count > 0) {
        scaleup_instance_event e;
        scaleup_instance_actions a;
        scaleup_instance_event_init(&e);
        e.input = SCALEUP_INPUT_LINK_MESSAGE;
        e.port = note[i].messages[0].port;
        e.message = note[i].messages[0].message;
        memmove(note[i].messages, note[i].messages + 1,
                --note[i].message_count * sizeof note[i].messages[0]);
        CHECK(scaleup_instance_step(xpu[1 - i], now, &e, &a) == 0);
        ++note[i].messages_relayed;
        moved = 1;
      }
}

/* A posted write of 8 bytes numbered n (in its first data byte) from the C ABI's command sizes:
 * the library sets the data length. */
static size_t posted_write(uint8_t n, uint8_t* control, uint8_t* data) {
  bool has_data = false;
  size_t len = scaleup_command_control_size(SCALEUP_CMD_WRITE_FULL_POSTED, &has_data);
  memset(control, 0, SCALEUP_MAX_CONTROL_BYTES);
  control[0] = SCALEUP_CMD_WRITE_FULL_POSTED;
  memset(data, 0xA5, 8);
  data[0] = n;
  return len;
}

/* Two instances, XPUs 1 and 2 on one port each, exchange WRITES posted writes each way over a
 * wire that loses the third frame of XPU 1 that carries commands (-1: none lost); every write
 * must arrive once and in order, and be completed (acknowledged) at its sender. Returns the
 * writes each received, in got[]. As transport::sue_instance's firmware example does in C++. */
static void exchange(scaleup_instance* xpu[2], size_t room, int lose, bool link, notes note[2],
                     int got[2]) {
  static uint8_t frame[8192];
  uint8_t control[SCALEUP_MAX_CONTROL_BYTES], data[8];
  int sent[2] = {0, 0}, carried = 0, i;
  uint64_t now;
  CHECK(room <= sizeof frame);
  got[0] = got[1] = 0;
  for (i = 0; i < 2; ++i) {
    memset(&note[i], 0, sizeof note[i]);
    scaleup_instance_set_note_sink(xpu[i], on_note, &note[i]);
  }
  for (now = 0; (note[0].completed < WRITES || note[1].completed < WRITES) && now < 10000000;
       now += 50)
    for (i = 0; i < 2; ++i) {
      scaleup_instance_actions a, r;
      scaleup_instance_event e;
      if (sent[i] < WRITES) {
        size_t clen = posted_write((uint8_t)sent[i], control, data);
        if (scaleup_instance_command(xpu[i], now, (uint16_t)(2 - i), 0, control, clen, data, 8,
                                     false, &a) == 0) {
          CHECK(a.seq == (uint64_t)sent[i]);
          ++sent[i];
        }
      }
      if (scaleup_instance_deadline(xpu[i]) <= now)
        CHECK(scaleup_instance_tick(xpu[i], now, NULL) == 0);
      relay_messages(xpu, note, now);
      CHECK(scaleup_instance_transmit(xpu[i], now, 0, frame, room, &a) == 0);
      if (a.frame.size == 0) continue;
      if (i == 0 && a.frame.commands > 0 && carried++ == lose) continue; /* lost */
      /* The wire: the peer takes the frame at once (XPU 2 through the wrapper, XPU 1 through
       * the event it fills). */
      if (i == 0 && !link) {
        CHECK(scaleup_instance_frame(xpu[1], now, 0, frame, a.frame.size, &r) == 0);
      } else {
        scaleup_instance_event_init(&e);
        e.input = SCALEUP_INPUT_FRAME;
        e.port = 0;
        e.bytes = frame;
        e.bytes_len = a.frame.size;
        e.link = a.frame.link; /* LLR's sequence and the class travel with the frame */
        CHECK(scaleup_instance_step(xpu[1 - i], now, &e, &r) == 0);
      }
      if (r.delivered.valid) {
        scaleup_unpacker u;
        scaleup_command c;
        CHECK(r.delivered.src == 1 + i && r.delivered.vc == 0 && !r.delivered.management);
        scaleup_unpacker_init(&u, r.delivered.payload, r.delivered.payload_len, 0);
        while (scaleup_unpacker_next(&u, &c)) {
          CHECK(c.code == SCALEUP_CMD_WRITE_FULL_POSTED && c.data_len == 8);
          CHECK(c.data[0] == got[1 - i]); /* once, in order */
          ++got[1 - i];
        }
        CHECK(scaleup_unpacker_error(&u, NULL) == 0);
      }
      relay_messages(xpu, note, now);
    }
  for (i = 0; i < 2; ++i) {
    CHECK(sent[i] == WRITES && got[i] == WRITES);
    CHECK(note[i].completed == WRITES && !note[i].out_of_order);
  }
}

static unsigned char instance_storage[2][1 << 15];

static void test_firmware_pair(void) {
  scaleup_instance* xpu[2];
  scaleup_instance_config cfg;
  scaleup_instance_counters n;
  scaleup_error err;
  notes note[2];
  int got[2], i;
  size_t room = scaleup_instance_frame_room(SCALEUP_SIZING_FIRMWARE);
  uint32_t v = 0;

  CHECK(scaleup_instance_size(SCALEUP_SIZING_FIRMWARE) <= sizeof instance_storage[0]);
  scaleup_instance_config_init(&cfg);
  CHECK(cfg.ports == 1 && cfg.vcs == 2 && cfg.frame.encap == SCALEUP_ENCAP_UDP4);
  CHECK(cfg.gbn.window == 256 && cfg.unreachable_after == 1000000 && cfg.weights[3] == 1);
  for (i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    xpu[i] = scaleup_instance_init(instance_storage[i] + 3, sizeof instance_storage[i] - 3,
                                   SCALEUP_SIZING_FIRMWARE, &cfg, NULL, &err);
    CHECK(xpu[i] != NULL && err.code == SCALEUP_ERRC_NONE);
    if (!xpu[i]) return;
  }
  exchange(xpu, room, 2, false, note, got);
  scaleup_instance_stats(xpu[0], &n);
  CHECK(n.commands == WRITES && n.completed == WRITES && n.retransmissions > 0);
  scaleup_instance_stats(xpu[1], &n);
  CHECK(n.delivered > 0 && n.gaps > 0 && n.failed == 0);

  /* A buffer one byte short of the room: the port is treated as busy, nothing written. */
  {
    static uint8_t frame[4096];
    scaleup_instance_actions a;
    uint8_t control[SCALEUP_MAX_CONTROL_BYTES], data[8];
    size_t clen = posted_write(0, control, data);
    CHECK(scaleup_instance_command(xpu[0], 20000000, 2, 1, control, clen, data, 8, true, &a) == 0);
    CHECK(scaleup_instance_port_ready(xpu[0], 0) && scaleup_instance_ready_ports(xpu[0]) == 1);
    CHECK(!scaleup_instance_port_ready(xpu[0], 3));
    CHECK(scaleup_instance_transmit(xpu[0], 20000000, 0, frame, room - 1, &a) == 0);
    CHECK(a.frame.size == 0 && !scaleup_instance_port_ready(xpu[0], 0));
    CHECK(scaleup_instance_transmit(xpu[0], 20000000, 0, frame, room, &a) == 0);
    CHECK(a.frame.size > 0 && a.frame.kind == SCALEUP_FRAME_KIND_PDU && a.frame.vc == 1);
    CHECK(a.frame.peer == 2 && a.frame.commands == 1 && a.frame.first_seq == 0);
  }

  /* Refusals in a step: a command to this XPU itself, an input C++ does not have. */
  {
    scaleup_instance_actions a;
    scaleup_instance_event e;
    uint8_t control[SCALEUP_MAX_CONTROL_BYTES], data[8];
    size_t clen = posted_write(0, control, data);
    CHECK(scaleup_instance_command(xpu[0], 20000000, 1, 0, control, clen, data, 8, false, &a) ==
          SCALEUP_ERRC_VALUE_TOO_BIG);
    CHECK(same(a.error.field, a.error.field_len, "sue.fifo.xpuid") && a.error.value == 1);
    scaleup_instance_event_init(&e);
    CHECK(e.input == SCALEUP_INPUT_TICK && e.up && e.link.fcs_ok);
    e.input = 42;
    CHECK(scaleup_instance_step(xpu[0], 20000000, &e, &a) == SCALEUP_ERRC_BAD_VALUE);
    CHECK(a.error.value == 42);
  }

  /* Registers: the identity, a port's counters, its link status written down. */
  CHECK(scaleup_instance_read_register(xpu[0], SCALEUP_REG_ID, &v));
  CHECK(v == (1u | 1u << 16 | 2u << 20));
  CHECK(
      scaleup_instance_read_register(xpu[0], SCALEUP_REG_PORT_BASE + SCALEUP_REG_FRAMES_SENT, &v));
  scaleup_instance_stats(xpu[0], &n);
  CHECK(v == n.frames);
  CHECK(!scaleup_instance_read_register(xpu[0], 0x50, &v));
  CHECK(!scaleup_instance_write_register(xpu[0], 20000000, SCALEUP_REG_ID, 0));
  CHECK(scaleup_instance_write_register(xpu[0], 20000000,
                                        SCALEUP_REG_PORT_BASE + SCALEUP_REG_LINK_STATUS, 0));
  CHECK(
      scaleup_instance_read_register(xpu[0], SCALEUP_REG_PORT_BASE + SCALEUP_REG_LINK_STATUS, &v));
  CHECK((v & 1u) == 0);
  for (i = 0; i < 2; ++i) scaleup_instance_fini(xpu[i]);
}

/* The same with LLR and CBFC on the link (16 credits of 64-byte cells: two or three frames, so
 * that credits must come back): the lost frame is replayed by LLR, and nothing moves unless the
 * link messages the notes carry reach the link peer. */
static void test_link_layer(void) {
  scaleup_instance* xpu[2];
  scaleup_instance_config cfg;
  scaleup_error err;
  notes note[2];
  int got[2], i;
  uint32_t replays = 0;

  scaleup_instance_config_init(&cfg);
  cfg.llr = true;
  cfg.cbfc_credits = 16;
  for (i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    xpu[i] = scaleup_instance_init(instance_storage[i], sizeof instance_storage[i],
                                   SCALEUP_SIZING_FIRMWARE, &cfg, NULL, &err);
    CHECK(xpu[i] != NULL && err.code == SCALEUP_ERRC_NONE);
    if (!xpu[i]) return;
  }
  exchange(xpu, scaleup_instance_frame_room(SCALEUP_SIZING_FIRMWARE), 2, true, note, got);
  CHECK(note[0].messages_relayed > 0 && note[1].messages_relayed > 0);
  CHECK(scaleup_instance_read_register(xpu[0], SCALEUP_REG_PORT_BASE + SCALEUP_REG_LLR_REPLAYS,
                                       &replays));
  CHECK(replays > 0);
  CHECK(scaleup_instance_read_register(xpu[0], SCALEUP_REG_PORT_BASE + SCALEUP_REG_LINK_STATUS,
                                       &replays));
  CHECK(replays == (1u | 1u << 2 | 1u << 3)); /* up, LLR on, CBFC on */
  for (i = 0; i < 2; ++i) scaleup_instance_fini(xpu[i]);
}

/* The caller's allocator for the fabric sizing: counts what is live. */
typedef struct counting {
  size_t live, allocations, releases;
} counting;

static void* counting_allocate(void* context, size_t bytes) {
  counting* c = (counting*)context;
  void* p = malloc(bytes);
  if (p) {
    c->live += bytes;
    ++c->allocations;
  }
  return p;
}

static void counting_release(void* context, void* p, size_t bytes) {
  counting* c = (counting*)context;
  c->live -= bytes;
  ++c->releases;
  free(p);
}

static void test_fabric_pair(void) {
  counting count = {0, 0, 0};
  static uint8_t instance_frame[8192];
  scaleup_instance_actions a;
  scaleup_allocator mem;
  scaleup_instance* xpu[2];
  scaleup_instance_config cfg;
  scaleup_instance_counters n;
  scaleup_error err;
  notes note[2];
  int got[2], i;

  mem.context = &count;
  mem.allocate = counting_allocate;
  mem.release = counting_release;
  CHECK(scaleup_instance_size(SCALEUP_SIZING_FABRIC) <= sizeof instance_storage[0]);
  scaleup_instance_config_init(&cfg);
  for (i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    xpu[i] = scaleup_instance_init(instance_storage[i], sizeof instance_storage[i],
                                   SCALEUP_SIZING_FABRIC, &cfg, &mem, &err);
    CHECK(xpu[i] != NULL && err.code == SCALEUP_ERRC_NONE);
    if (!xpu[i]) return;
  }
  exchange(xpu, scaleup_instance_frame_room(SCALEUP_SIZING_FABRIC), 2, false, note, got);
  scaleup_instance_stats(xpu[0], &n);
  CHECK(n.completed == WRITES && n.retransmissions > 0);
  CHECK(count.allocations > 0 && count.live > 0);
  /* An event on a port the instance does not have (it has one): refused, said, not taken. */
  CHECK(scaleup_instance_transmit(xpu[0], 0, 1, instance_frame, sizeof instance_frame, &a) ==
        SCALEUP_ERRC_BAD_VALUE);
  CHECK(same(a.error.field, a.error.field_len, "sue.port") && a.error.value == 1);
  CHECK(scaleup_instance_frame(xpu[0], 0, 250, instance_frame, 60, &a) == SCALEUP_ERRC_BAD_VALUE);
  for (i = 0; i < 2; ++i) scaleup_instance_fini(xpu[i]);
  CHECK(count.live == 0 && count.releases == count.allocations); /* every byte given back */
  /* A second fini (a cleanup path run twice) gives nothing back twice. */
  scaleup_instance_fini(xpu[0]);
  scaleup_instance_fini(NULL);
  CHECK(count.live == 0 && count.releases == count.allocations);
}

static void test_instance_refusals(void) {
  scaleup_instance_config cfg;
  scaleup_allocator mem = {NULL, NULL, NULL};
  scaleup_error err;
  unsigned char* storage = instance_storage[0];
  size_t size = sizeof instance_storage[0];

  CHECK(scaleup_instance_size(9) == 0 && scaleup_instance_frame_room(9) == 0);
  /* Storage too small. */
  CHECK(scaleup_instance_init(storage, 100, SCALEUP_SIZING_FIRMWARE, NULL, NULL, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_NO_SPACE && err.available == 100 &&
        err.needed == scaleup_instance_size(SCALEUP_SIZING_FIRMWARE));
  /* The fabric sizing without an allocator, or with one that has no functions. */
  CHECK(scaleup_instance_init(storage, size, SCALEUP_SIZING_FABRIC, NULL, NULL, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && same(err.field, err.field_len, "allocator"));
  CHECK(scaleup_instance_init(storage, size, SCALEUP_SIZING_FABRIC, NULL, &mem, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE);
  CHECK(scaleup_instance_init(storage, size, 9, NULL, NULL, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && err.value == 9);
  /* Configurations sue_instance::check refuses: 3 ports; 2 ports on the firmware's one; a VC
   * beyond the sizing's; and one C cannot cast: an unknown encapsulation. */
  scaleup_instance_config_init(&cfg);
  cfg.ports = 3;
  CHECK(scaleup_instance_init(storage, size, SCALEUP_SIZING_FIRMWARE, &cfg, NULL, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && same(err.field, err.field_len, "sue.ports") &&
        err.value == 3 && same(err.layer, err.layer_len, "sue"));
  cfg.ports = 2;
  CHECK(scaleup_instance_check(SCALEUP_SIZING_FIRMWARE, &cfg, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
  CHECK(scaleup_instance_check(SCALEUP_SIZING_FABRIC, &cfg, &err) == 0);
  scaleup_instance_config_init(&cfg);
  cfg.vcs = 3;
  CHECK(scaleup_instance_check(SCALEUP_SIZING_FIRMWARE, &cfg, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
  CHECK(same(err.field, err.field_len, "sue.rh.vc") && err.value == 3);
  scaleup_instance_config_init(&cfg);
  cfg.frame.encap = 77;
  CHECK(scaleup_instance_check(SCALEUP_SIZING_FIRMWARE, &cfg, &err) == SCALEUP_ERRC_UNSUPPORTED);
  CHECK(scaleup_instance_check(SCALEUP_SIZING_FIRMWARE, NULL, &err) == 0);
}

void test_instance(void) {
  test_firmware_pair();
  test_link_layer();
  test_fabric_pair();
  test_instance_refusals();
}
