/* The SUE instance as a firmware runs it (the C ABI's scaleup_instance, firmware sizing: one
 * peer, one port, no heap): this XPU and, for the self-test, its peer, each in the storage given,
 * exchange posted writes over a wire that loses one frame; go-back-N repairs it and every write
 * arrives once and in order. */
#include "firmware.h"
#include "scaleup/scaleup.h"

enum { writes = 12 };

static uint8_t frame[512];

/* A posted write of 8 bytes, its tag the number n: control then data in cmd. */
static bool posted_write(uint16_t n, uint8_t cmd[SCALEUP_CMD_WRITE_SIZE + 8]) {
  scaleup_cmd_write w;
  scaleup_cmd_write_init(&w);
  w.type = SCALEUP_CMD_WRITE_FULL_POSTED;
  w.dlen = 7;
  w.tag = n;
  for (int k = 0; k < 8; ++k) cmd[SCALEUP_CMD_WRITE_SIZE + k] = 0;
  return scaleup_cmd_write_encode(&w, cmd, SCALEUP_CMD_WRITE_SIZE, NULL) == 0;
}

int fw_instance_selftest(void* storage, size_t size) {
  const size_t each = scaleup_instance_size(SCALEUP_SIZING_FIRMWARE);
  const size_t room = scaleup_instance_frame_room(SCALEUP_SIZING_FIRMWARE);
  scaleup_instance* xpu[2];
  scaleup_instance_config cfg;
  scaleup_instance_config_init(&cfg);
  if (size < 2 * each || room > sizeof frame) return 5;
  for (int i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    xpu[i] = scaleup_instance_init((unsigned char*)storage + i * each, each,
                                   SCALEUP_SIZING_FIRMWARE, &cfg, NULL, NULL);
    if (!xpu[i]) return 5;
  }

  uint16_t sent[2] = {0, 0}, got[2] = {0, 0};
  int lost = 0;
  for (uint64_t now = 0; (got[0] < writes || got[1] < writes) && now < 10000000; now += 50)
    for (int i = 0; i < 2; ++i) {
      uint8_t cmd[SCALEUP_CMD_WRITE_SIZE + 8];
      scaleup_instance_actions t, r;
      if (!posted_write(sent[i], cmd)) return 1;
      if (sent[i] < writes &&
          scaleup_instance_command(xpu[i], now, (uint16_t)(2 - i), 0, cmd, SCALEUP_CMD_WRITE_SIZE,
                                   cmd + SCALEUP_CMD_WRITE_SIZE, 8, false, NULL) == 0)
        ++sent[i];
      if (scaleup_instance_deadline(xpu[i]) <= now) scaleup_instance_tick(xpu[i], now, NULL);
      scaleup_instance_transmit(xpu[i], now, 0, frame, room, &t);
      if (t.frame.size == 0) continue;
      if (i == 0 && t.frame.commands > 0 && lost++ == 2) continue; /* the third PDU is lost */
      /* The wire: the peer takes the frame at once. */
      scaleup_instance_frame(xpu[1 - i], now, 0, frame, t.frame.size, &r);
      if (!r.delivered.valid) continue;
      scaleup_unpacker u;
      scaleup_command c;
      scaleup_unpacker_init(&u, r.delivered.payload, r.delivered.payload_len, 0);
      for (; scaleup_unpacker_next(&u, &c); ++got[1 - i]) {
        scaleup_cmd_write w;
        if (scaleup_cmd_write_decode(c.control, c.control_len, &w, NULL) != 0 ||
            w.tag != got[1 - i])
          return 2; /* out of order or damaged */
      }
    }
  if (got[0] != writes || got[1] != writes) return 3;
  scaleup_instance_counters n;
  scaleup_instance_stats(xpu[0], &n);
  if (n.retransmissions == 0) return 4; /* the lost PDU was sent again */
  return 0;
}
