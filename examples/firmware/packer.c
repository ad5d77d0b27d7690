#include "firmware.h"
#include "scaleup/scaleup.h"

/* The packer's firmware sizing (16 destinations, 2 VCs, 16 queued commands), no heap, with
 * payloads of up to 128 bytes: a firmware's PDU buffers are small. */
static scaleup_packer* the_packer;

size_t fw_pack_init(void* storage, size_t size) {
  scaleup_packer_config cfg;
  scaleup_packer_config_init(&cfg);
  cfg.limit = 128;
  the_packer = scaleup_packer_sized_init(storage, size, SCALEUP_PACKER_SIZING_FIRMWARE, &cfg);
  return the_packer ? scaleup_packer_sized_size(SCALEUP_PACKER_SIZING_FIRMWARE) : 0;
}

/* The control is copied into the packer's pool; the 64 data bytes are borrowed: the caller
 * keeps them until fw_pack_next() has packed the command. */
bool fw_pack_write(uint16_t dst, uint8_t vc, uint64_t addr, const uint8_t* data) {
  scaleup_packer* p = the_packer;
  uint8_t control[SCALEUP_CMD_WRITE_SIZE];
  scaleup_cmd_write w;
  scaleup_queued_command c = {0};
  scaleup_cmd_write_init(&w);
  w.tag = 1;
  w.addr = addr;
  if (!p || scaleup_cmd_write_encode(&w, control, sizeof control, NULL) != 0) return false;
  c.destination = dst;
  c.vc = vc;
  c.control = control;
  c.control_len = sizeof control;
  c.data = data;
  c.data_len = 64;
  return scaleup_packer_push(p, &c, NULL) == 0;
}

size_t fw_pack_next(uint8_t* out, size_t cap, uint16_t* dst, uint8_t* vc) {
  scaleup_packer* p = the_packer;
  scaleup_packed_pdu pdu;
  if (!p || scaleup_packer_next(p, out, cap, &pdu, NULL, 0, NULL) != 0 || pdu.commands == 0)
    return 0;
  *dst = pdu.destination;
  *vc = pdu.vc;
  return pdu.bytes;
}

int fw_unpack_count(const uint8_t* payload, size_t n) {
  scaleup_unpacker u;
  scaleup_command c;
  int count = 0;
  scaleup_unpacker_init(&u, payload, n, 0);
  while (scaleup_unpacker_next(&u, &c)) ++count;
  return scaleup_unpacker_error(&u, NULL) != 0 ? -1 : count;
}
