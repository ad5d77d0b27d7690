/* The C ABI from a C11 program: golden bytes written by hand from the spec (the same as
 * tests/unit/wire_headers_test.cpp and wire_pdu_test.cpp, so that they do not come from this
 * library), a round trip of every header, a frame emitted and read back for every
 * encapsulation, a PDU packed and unpacked (with the default profile and a caller's), and the
 * error each misuse returns; with transport.c, the go-back-N endpoint and the SUE instance over a
 * lossy wire. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "scaleup/scaleup.h"

int failures = 0;

/* ---- golden bytes ------------------------------------------------------------------------ */

/* R2 Table 5. ver 0, op 1, rsv 0, xpuid 0x3FF: 00 01 00 11|1111 1111 = 13 FF; npsn 12 34;
 * vc 3, rsvd 0, partition 0x3FF: 11 0000 11|1111 1111 = C3 FF; apsn BE EF. */
static const uint8_t rh_golden_bytes[8] = {0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};

static scaleup_rh rh_golden(void) {
  scaleup_rh h;
  scaleup_rh_init(&h);
  h.ver = 0;
  h.op = SCALEUP_RH_OP_NACK;
  h.xpuid = 0x3FF;
  h.npsn = 0x1234;
  h.vc = 3;
  h.partition = 0x3FF;
  h.apsn = 0xBEEF;
  return h;
}

static int rh_equal(const scaleup_rh* a, const scaleup_rh* b) {
  return a->ver == b->ver && a->op == b->op && a->rsv == b->rsv && a->xpuid == b->xpuid &&
         a->npsn == b->npsn && a->vc == b->vc && a->rsvd == b->rsvd &&
         a->partition == b->partition && a->apsn == b->apsn;
}

static void test_rh(void) {
  uint8_t buf[8];
  scaleup_error err;
  scaleup_rh h = rh_golden(), back;
  CHECK(scaleup_rh_encode(&h, buf, sizeof buf, &err) == 0);
  CHECK(err.code == SCALEUP_ERRC_NONE);
  CHECK(memcmp(buf, rh_golden_bytes, 8) == 0);
  CHECK(scaleup_rh_decode(rh_golden_bytes, 8, &back, &err) == 0);
  CHECK(rh_equal(&back, &h));

  /* Alternating bits: ver 3 op 2 xpuid 0x155 -> E1 55; npsn FE DC; vc 1 partition 0x2AA ->
   * 42 AA; apsn 00 01. */
  {
    static const uint8_t alt[8] = {0xE1, 0x55, 0xFE, 0xDC, 0x42, 0xAA, 0x00, 0x01};
    CHECK(scaleup_rh_decode(alt, 8, &back, NULL) == 0);
    CHECK(back.ver == 3 && back.op == 2 && back.xpuid == 0x155 && back.npsn == 0xFEDC &&
          back.vc == 1 && back.partition == 0x2AA && back.apsn == 1);
    CHECK(scaleup_rh_encode(&back, buf, sizeof buf, NULL) == 0);
    CHECK(memcmp(buf, alt, 8) == 0);
  }

  /* Too short to decode: needed and available say by how much. */
  CHECK(scaleup_rh_decode(rh_golden_bytes, 5, &back, &err) == SCALEUP_ERRC_TRUNCATED);
  CHECK(err.code == SCALEUP_ERRC_TRUNCATED && err.needed == 8 && err.available == 5);
  CHECK(same(err.layer, err.layer_len, "sue.rh"));
  CHECK(scaleup_rh_decode(NULL, 0, &back, &err) == SCALEUP_ERRC_TRUNCATED);
  CHECK(err.needed == 8 && err.available == 0);

  /* Too small to encode into. */
  CHECK(scaleup_rh_encode(&h, buf, 4, &err) == SCALEUP_ERRC_NO_SPACE);
  CHECK(err.needed == 8 && err.available == 4);

  /* A value too big for its field is refused, not truncated. */
  h.xpuid = 1024;
  CHECK(scaleup_rh_encode(&h, buf, sizeof buf, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
  CHECK(same(err.field, err.field_len, "sue.rh.xpuid") && err.value == 1024);
  CHECK(strcmp(scaleup_errc_name(err.code), "value_too_big") == 0);
}

static void test_afh1(void) {
  /* 42 53 55 45 | FF FF | 42 53 55 45 | 12 34 */
  static const uint8_t addr_bytes[12] = {0x42, 0x53, 0x55, 0x45, 0xFF, 0xFF,
                                         0x42, 0x53, 0x55, 0x45, 0x12, 0x34};
  /* version 0 | tc FF | hop 3F | next FD | length 1234 | entropy FFFFF, by nibbles:
   * 0F F3 FF D1 23 4F FF FF; src DE AD BE EF; dst 01 02 03 04 */
  static const uint8_t shim_bytes[16] = {0x0F, 0xF3, 0xFF, 0xD1, 0x23, 0x4F, 0xFF, 0xFF,
                                         0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04};
  uint8_t buf[16];
  scaleup_error err;
  scaleup_afh1_addresses a, a2;
  scaleup_afh1_shim s, s2;

  scaleup_afh1_addresses_init(&a);
  CHECK(a.da_prefix == 0x42535545 && a.sa_prefix == 0x42535545);
  a.dst_xpu = 0xFFFF;
  a.src_xpu = 0x1234;
  CHECK(scaleup_afh1_addresses_encode(&a, buf, sizeof buf, &err) == 0);
  CHECK(memcmp(buf, addr_bytes, 12) == 0);
  CHECK(scaleup_afh1_addresses_decode(addr_bytes, 12, &a2, &err) == 0);
  CHECK(a2.da_prefix == a.da_prefix && a2.dst_xpu == a.dst_xpu && a2.sa_prefix == a.sa_prefix &&
        a2.src_xpu == a.src_xpu);
  CHECK(scaleup_afh1_addresses_decode(addr_bytes, 11, &a2, &err) == SCALEUP_ERRC_TRUNCATED);
  CHECK(err.needed == 12 && err.available == 11);

  scaleup_afh1_shim_init(&s);
  CHECK(s.next_header == 253 && s.hop_limit == 1);
  s.tc = 0xFF;
  s.hop_limit = 0x3F;
  s.next_header = 0xFD;
  s.length = 0x1234;
  s.entropy = 0xFFFFF;
  s.src_xpu = 0xDEADBEEF;
  s.dst_xpu = 0x01020304;
  CHECK(scaleup_afh1_shim_encode(&s, buf, sizeof buf, &err) == 0);
  CHECK(memcmp(buf, shim_bytes, 16) == 0);
  CHECK(scaleup_afh1_shim_decode(shim_bytes, 16, &s2, &err) == 0);
  CHECK(s2.version == 0 && s2.tc == 0xFF && s2.hop_limit == 0x3F && s2.next_header == 0xFD &&
        s2.length == 0x1234 && s2.entropy == 0xFFFFF && s2.src_xpu == 0xDEADBEEF &&
        s2.dst_xpu == 0x01020304);
  s.entropy = 0x100000; /* 21 bits */
  CHECK(scaleup_afh1_shim_encode(&s, buf, sizeof buf, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
  CHECK(same(err.field, err.field_len, "afh1.shim.entropy") && err.value == 0x100000);
}

static void test_afh2(void) {
  /* octet 0: rsv 00 W 0 V 0 Z 0 Y 0 X 1 M 1 = 03; hop 07; dst 12 34 56 78;
   * octet 6: tc 11111 spare 0 SA-U/L 1 SA-I/G 0 = FA; entropy A5; src CA FE F0 0D */
  static const uint8_t normal_bytes[12] = {0x03, 0x07, 0x12, 0x34, 0x56, 0x78,
                                           0xFA, 0xA5, 0xCA, 0xFE, 0xF0, 0x0D};
  /* SUE Lite's header. octet 0: W 1, X 1, M 1 = 23; tc 11111 spare 000 = F8; src 12 34;
   * dst FF FF */
  static const uint8_t compressed_bytes[6] = {0x23, 0xF8, 0x12, 0x34, 0xFF, 0xFF};
  uint8_t buf[12];
  scaleup_error err;
  scaleup_afh2_normal n, n2;
  scaleup_afh2_compressed c, c2;

  scaleup_afh2_normal_init(&n);
  CHECK(n.x == 1 && n.w == 0 && n.sa_ul == 1 && n.sa_ig == 0);
  n.m = 1;
  n.hop_count = 7;
  n.dst_xpu = 0x12345678;
  n.tc = 0x1F;
  n.entropy = 0xA5;
  n.src_xpu = 0xCAFEF00D;
  CHECK(scaleup_afh2_normal_encode(&n, buf, sizeof buf, &err) == 0);
  CHECK(memcmp(buf, normal_bytes, 12) == 0);
  CHECK(scaleup_afh2_normal_decode(normal_bytes, 12, &n2, &err) == 0);
  CHECK(n2.m == 1 && n2.x == 1 && n2.w == 0 && n2.hop_count == 7 && n2.dst_xpu == 0x12345678 &&
        n2.tc == 0x1F && n2.sa_ul == 1 && n2.sa_ig == 0 && n2.entropy == 0xA5 &&
        n2.src_xpu == 0xCAFEF00D);

  scaleup_afh2_compressed_init(&c);
  CHECK(c.x == 1 && c.w == 1);
  c.m = 1;
  c.tc = 0x1F;
  c.src_xpu = 0x1234;
  c.dst_xpu = 0xFFFF;
  CHECK(scaleup_afh2_compressed_encode(&c, buf, sizeof buf, &err) == 0);
  CHECK(memcmp(buf, compressed_bytes, 6) == 0);
  CHECK(scaleup_afh2_compressed_decode(compressed_bytes, 6, &c2, &err) == 0);
  CHECK(c2.m == 1 && c2.w == 1 && c2.x == 1 && c2.tc == 0x1F && c2.src_xpu == 0x1234 &&
        c2.dst_xpu == 0xFFFF);

  /* A fixed bit off its value: decode says which, and still gives what it read. */
  {
    uint8_t bad[12];
    memcpy(bad, normal_bytes, 12);
    bad[0] = 0x01; /* X = 0: not locally administered */
    CHECK(scaleup_afh2_normal_decode(bad, 12, &n2, &err) == SCALEUP_ERRC_BAD_VALUE);
    CHECK(same(err.field, err.field_len, "afh2.x") && err.value == 0 && err.offset == 0);
    CHECK(n2.x == 0 && n2.dst_xpu == 0x12345678);
  }
  /* The compressed format's W is fixed at 1: an encoder cannot send the normal one's. */
  c.w = 0;
  CHECK(scaleup_afh2_compressed_encode(&c, buf, sizeof buf, &err) == SCALEUP_ERRC_BAD_VALUE);
  CHECK(same(err.field, err.field_len, "afh2.w"));
  CHECK(scaleup_afh2_compressed_decode(compressed_bytes, 3, &c2, &err) == SCALEUP_ERRC_TRUNCATED);
  CHECK(err.needed == 6 && err.available == 3);
}

/* ---- the PDU and its R-CRC --------------------------------------------------------------- */

static void test_pdu(void) {
  static const uint8_t payload[3] = {0xAA, 0xBB, 0xCC};
  uint8_t pdu[64];
  size_t n = 0;
  scaleup_error err;
  scaleup_pdu_bounds b;
  scaleup_rh h = rh_golden();

  /* zlib.crc32(13FF1234C3FFBEEF AABBCC) = 0x47B31BDD, appended big-endian. */
  CHECK(scaleup_pdu_emit(&h, payload, 3, pdu, sizeof pdu, &n, &err) == 0);
  CHECK(n == 15);
  CHECK(memcmp(pdu, rh_golden_bytes, 8) == 0 && memcmp(pdu + 8, payload, 3) == 0);
  CHECK(pdu[11] == 0x47 && pdu[12] == 0xB3 && pdu[13] == 0x1B && pdu[14] == 0xDD);
  CHECK(scaleup_rcrc_compute(pdu, 11) == 0x47B31BDDu);
  CHECK(scaleup_rcrc_check(pdu, n, &b) == SCALEUP_RCRC_GOOD);
  CHECK(b.status == SCALEUP_RCRC_GOOD && b.payload_end == 11 && b.rcrc == 0x47B31BDDu &&
        b.computed == 0x47B31BDDu);
  pdu[9] ^= 1;
  CHECK(scaleup_rcrc_check(pdu, n, &b) == SCALEUP_RCRC_BAD);
  CHECK(b.rcrc == 0x47B31BDDu && b.computed != b.rcrc);
  CHECK(scaleup_rcrc_check(pdu, 8, NULL) == SCALEUP_RCRC_MISSING);

  /* An RH alone: zlib.crc32(13FF1234C3FFBEEF) = 0x8F0C179D. */
  CHECK(scaleup_pdu_emit(&h, NULL, 0, pdu, sizeof pdu, &n, NULL) == 0);
  CHECK(n == 12 && pdu[8] == 0x8F && pdu[9] == 0x0C && pdu[10] == 0x17 && pdu[11] == 0x9D);

  /* The check string: CRC-32/ISO-HDLC("123456789") = 0xCBF43926. */
  CHECK(scaleup_rcrc_compute((const uint8_t*)"123456789", 9) == 0xCBF43926u);

  CHECK(scaleup_pdu_emit(&h, payload, 3, pdu, 14, &n, &err) == SCALEUP_ERRC_NO_SPACE);
  CHECK(err.needed == 15 && err.available == 14 && n == 0);
  {
    static uint8_t big[SCALEUP_SUE_MAX_PAYLOAD + 1];
    CHECK(scaleup_pdu_emit(&h, big, sizeof big, pdu, sizeof pdu, &n, &err) ==
          SCALEUP_ERRC_VALUE_TOO_BIG);
    CHECK(err.available == SCALEUP_SUE_MAX_PAYLOAD + 1 && err.needed == SCALEUP_SUE_MAX_PAYLOAD);
  }
}

/* ---- commands ---------------------------------------------------------------------------- */

/* A command of the default profile: its control (byte 0 the code, the rest zero; byte 1, the
 * data length, is the packer's to set) and its data. */
static size_t control_of(uint8_t code, uint8_t* control) {
  bool has_data = false;
  size_t n = scaleup_command_control_size(code, &has_data);
  memset(control, 0, SCALEUP_MAX_CONTROL_BYTES);
  control[0] = code;
  return n;
}

/* Packs a write (64 bytes of data), a read and a message (5 bytes) for XPU 9 on VC 0 and
 * returns the payload's length. */
static size_t pack_three(uint8_t* payload, size_t payload_cap, const uint8_t* write_data,
                         const uint8_t* msg_data) {
  static unsigned char storage[1 << 20];
  uint8_t controls[3][SCALEUP_MAX_CONTROL_BYTES];
  const uint8_t codes[3] = {SCALEUP_CMD_WRITE_FULL_POSTED, SCALEUP_CMD_READ, SCALEUP_CMD_MESSAGE};
  const uint8_t* data[3] = {write_data, NULL, msg_data};
  const size_t data_len[3] = {64, 0, 5};
  uint64_t cookies[8] = {0};
  scaleup_packer_config cfg;
  scaleup_packer* p;
  scaleup_packed_pdu pdu;
  scaleup_error err;
  size_t i;

  CHECK(scaleup_packer_size() <= sizeof storage);
  CHECK(scaleup_packer_init(storage, 100, NULL) == NULL); /* too small */
  scaleup_packer_config_init(&cfg);
  CHECK(cfg.limit == SCALEUP_SUE_PACK_LIMIT && cfg.weights[0] == 1 &&
        cfg.order == SCALEUP_WITHIN_VC_ARRIVAL_ORDER);
  cfg.limit = 0;
  CHECK(scaleup_packer_init(storage, sizeof storage, &cfg) == NULL);
  scaleup_packer_config_init(&cfg);
  /* Storage one byte off any alignment: init aligns inside it. */
  p = scaleup_packer_init(storage + 1, scaleup_packer_size(), &cfg);
  CHECK(p != NULL);
  if (!p) return 0;

  for (i = 0; i < 3; ++i) {
    scaleup_queued_command c;
    memset(&c, 0, sizeof c);
    c.destination = 9;
    c.vc = 0;
    c.control = controls[i];
    c.control_len = control_of(codes[i], controls[i]);
    c.data = data[i];
    c.data_len = data_len[i];
    c.cookie = 100 + i;
    CHECK(scaleup_packer_push(p, &c, &err) == 0);
  }
  CHECK(scaleup_packer_queued(p) == 3);

  /* Refusals: a VC SUE does not have, a control of the wrong length, data on a read. */
  {
    scaleup_queued_command c;
    memset(&c, 0, sizeof c);
    c.destination = 9;
    c.vc = 4;
    c.control = controls[1];
    c.control_len = control_of(SCALEUP_CMD_READ, controls[1]);
    CHECK(scaleup_packer_push(p, &c, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
    CHECK(same(err.field, err.field_len, "sue.rh.vc") && err.value == 4);
    c.vc = 0;
    c.control_len -= 2;
    CHECK(scaleup_packer_push(p, &c, &err) == SCALEUP_ERRC_BAD_LENGTH);
    CHECK(err.needed == err.available + 2);
    c.control_len += 2;
    c.data = msg_data;
    c.data_len = 5;
    CHECK(scaleup_packer_push(p, &c, &err) == SCALEUP_ERRC_BAD_LENGTH);
    CHECK(same(err.field, err.field_len, "sue.cmd.data_len"));
  }

  CHECK(scaleup_packer_next(p, payload, 100, &pdu, NULL, 0, &err) == SCALEUP_ERRC_NO_SPACE);
  CHECK(err.needed == SCALEUP_SUE_PACK_LIMIT && err.available == 100);
  CHECK(scaleup_packer_next(p, payload, payload_cap, &pdu, cookies, 8, &err) == 0);
  CHECK(pdu.destination == 9 && pdu.vc == 0 && pdu.commands == 3);
  CHECK(cookies[0] == 100 && cookies[1] == 101 && cookies[2] == 102);
  CHECK(scaleup_packer_queued(p) == 0);
  {
    scaleup_packed_pdu none;
    CHECK(scaleup_packer_next(p, payload + pdu.bytes, payload_cap - pdu.bytes, &none, NULL, 0,
                              NULL) == 0 ||
          payload_cap - pdu.bytes < SCALEUP_SUE_PACK_LIMIT);
  }
  return pdu.bytes;
}

/* A full write's control: R2 Table 2 and the default profile (type, data length - 1, tag,
 * address, big-endian), a round trip, and a tag too short a buffer cannot hold. */
static void test_cmd_write(void) {
  static const uint8_t golden[SCALEUP_CMD_WRITE_SIZE] = {0x02, 0x3F, 0x12, 0x34, 0x01, 0x02,
                                                         0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  uint8_t buf[SCALEUP_CMD_WRITE_SIZE];
  scaleup_cmd_write w, back;
  scaleup_error err;
  scaleup_cmd_write_init(&w);
  CHECK(w.type == SCALEUP_CMD_WRITE_FULL && w.tag == 0 && w.addr == 0);
  w.type = SCALEUP_CMD_WRITE_FULL_POSTED;
  w.dlen = 63;
  w.tag = 0x1234;
  w.addr = 0x0102030405060708u;
  CHECK(scaleup_cmd_write_encode(&w, buf, sizeof buf, &err) == 0);
  CHECK(memcmp(buf, golden, sizeof golden) == 0);
  CHECK(scaleup_cmd_write_decode(golden, sizeof golden, &back, &err) == 0);
  CHECK(back.type == w.type && back.dlen == 63 && back.tag == 0x1234 && back.addr == w.addr);
  CHECK(scaleup_cmd_write_encode(&w, buf, 11, &err) == SCALEUP_ERRC_NO_SPACE);
  CHECK(scaleup_cmd_write_decode(golden, 11, &back, &err) == SCALEUP_ERRC_TRUNCATED);
  CHECK(err.needed == 12 && err.available == 11);
}

/* The firmware sizing: a packer of a few KB that a firmware's static storage holds, the calls
 * of the full one, destinations and VCs beyond its sizing refused. */
static void test_firmware_packer(void) {
  static unsigned char storage[8192];
  static const uint8_t data[64] = {0};
  uint8_t control[SCALEUP_MAX_CONTROL_BYTES], payload[256];
  const size_t size = scaleup_packer_sized_size(SCALEUP_PACKER_SIZING_FIRMWARE);
  scaleup_packer_config cfg;
  scaleup_queued_command c;
  scaleup_packed_pdu pdu;
  scaleup_error err;
  scaleup_packer* p;
  int i;

  CHECK(scaleup_packer_sized_size(SCALEUP_PACKER_SIZING_FULL) == scaleup_packer_size());
  CHECK(size > 0 && size <= SCALEUP_PACKER_FIRMWARE_SIZE && size < scaleup_packer_size() / 16);
  CHECK(scaleup_packer_sized_size(7) == 0);
  CHECK(scaleup_packer_sized_init(storage, sizeof storage, 7, NULL) == NULL);
  CHECK(scaleup_packer_sized_init(storage, size - 64, SCALEUP_PACKER_SIZING_FIRMWARE, NULL) ==
        NULL);
  scaleup_packer_config_init(&cfg);
  cfg.limit = 128;
  p = scaleup_packer_sized_init(storage + 1, size, SCALEUP_PACKER_SIZING_FIRMWARE, &cfg);
  CHECK(p != NULL);
  if (!p) return;

  memset(&c, 0, sizeof c);
  c.control = control;
  c.control_len = control_of(SCALEUP_CMD_WRITE_FULL_POSTED, control);
  c.data = data;
  c.data_len = sizeof data;
  c.destination = SCALEUP_PACKER_FIRMWARE_DESTINATIONS;
  CHECK(scaleup_packer_push(p, &c, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
  c.destination = 3;
  c.vc = SCALEUP_PACKER_FIRMWARE_VCS;
  CHECK(scaleup_packer_push(p, &c, &err) == SCALEUP_ERRC_VALUE_TOO_BIG);
  CHECK(same(err.field, err.field_len, "sue.rh.vc"));
  c.vc = 1;
  for (i = 0; i < SCALEUP_PACKER_FIRMWARE_CAPACITY; ++i)
    CHECK(scaleup_packer_push(p, &c, &err) == 0);
  CHECK(scaleup_packer_push(p, &c, &err) != 0); /* every command of the pool is queued */
  CHECK(scaleup_packer_queued(p) == SCALEUP_PACKER_FIRMWARE_CAPACITY);
  /* 128 bytes a payload: one write of 64 bytes and its 12-byte control. */
  CHECK(scaleup_packer_next(p, payload, sizeof payload, &pdu, NULL, 0, &err) == 0);
  CHECK(pdu.destination == 3 && pdu.vc == 1 && pdu.commands == 1 && pdu.bytes == 76);
  CHECK(scaleup_packer_queued(p) == SCALEUP_PACKER_FIRMWARE_CAPACITY - 1);
}

/* Walks a payload of pack_three and checks what comes out. */
static void check_three(const uint8_t* payload, size_t len, const uint8_t* write_data,
                        const uint8_t* msg_data) {
  scaleup_unpacker u;
  scaleup_command c;
  scaleup_error err;
  scaleup_unpacker_init(&u, payload, len, 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(c.code == SCALEUP_CMD_WRITE_FULL_POSTED && c.index == 1 && c.offset == 0);
  CHECK(c.data_len == 64 && memcmp(c.data, write_data, 64) == 0);
  CHECK(c.control_len == scaleup_command_control_size(c.code, NULL));
  CHECK(c.control[1] == 63); /* the data length - 1, set by the packer */
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(c.code == SCALEUP_CMD_READ && c.index == 2 && c.data_len == 0 && c.vc == 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(c.code == SCALEUP_CMD_MESSAGE && c.data_len == 5 && memcmp(c.data, msg_data, 5) == 0);
  CHECK(c.offset + c.control_len + c.data_len == len);
  CHECK(scaleup_unpacker_next(&u, &c) == 0);
  CHECK(scaleup_unpacker_error(&u, &err) == 0 && err.code == SCALEUP_ERRC_NONE);
  CHECK(scaleup_unpacker_count(&u) == 3 && scaleup_unpacker_padding(&u) == 0);
}

static void test_pack(void) {
  uint8_t write_data[64], msg_data[5] = {1, 2, 3, 4, 5};
  static uint8_t payload[SCALEUP_SUE_PACK_LIMIT + 64];
  size_t i, n;
  scaleup_unpacker u;
  scaleup_command c;
  scaleup_error err;

  for (i = 0; i < sizeof write_data; ++i) write_data[i] = (uint8_t)(i * 7);
  n = pack_three(payload, sizeof payload, write_data, msg_data);
  CHECK(n > 64 + 5);
  check_three(payload, n, write_data, msg_data);

  /* Zeros after the commands are padding, not commands. */
  memset(payload + n, 0, 6);
  scaleup_unpacker_init(&u, payload, n + 6, 0);
  while (scaleup_unpacker_next(&u, &c)) {
  }
  CHECK(scaleup_unpacker_error(&u, NULL) == 0 && scaleup_unpacker_padding(&u) == 6);

  /* The last command cut short: the walk stops there, saying which and by how much. */
  scaleup_unpacker_init(&u, payload, n - 2, 1000);
  CHECK(scaleup_unpacker_next(&u, &c) == 1 && c.offset == 1000);
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(scaleup_unpacker_next(&u, &c) == 0);
  CHECK(scaleup_unpacker_error(&u, &err) == SCALEUP_ERRC_TRUNCATED);
  CHECK(err.item == 3 && err.available + 2 == err.needed);
  CHECK(same(err.layer, err.layer_len, "sue.cmd"));

  /* A type the profile lacks. */
  {
    static const uint8_t odd[4] = {0x03, 0, 0, 0};
    scaleup_unpacker_init(&u, odd, sizeof odd, 0);
    CHECK(scaleup_unpacker_next(&u, &c) == 0);
    CHECK(scaleup_unpacker_error(&u, &err) == SCALEUP_ERRC_BAD_VALUE);
    CHECK(err.value == 3 && err.item == 1);
  }
}

/* ---- frames ------------------------------------------------------------------------------ */

static void test_frames(void) {
  uint8_t write_data[64], msg_data[5] = {9, 8, 7, 6, 5};
  static uint8_t payload[SCALEUP_SUE_PACK_LIMIT];
  uint8_t frame[2048];
  size_t payload_len, i;
  int e;

  for (i = 0; i < sizeof write_data; ++i) write_data[i] = (uint8_t)(255 - i);
  payload_len = pack_three(payload, sizeof payload, write_data, msg_data);

  for (e = 0; e < SCALEUP_ENCAP_COUNT; ++e) {
    scaleup_frame_params p;
    scaleup_received_frame f;
    scaleup_error err;
    scaleup_rh h = rh_golden();
    size_t n = 0;
    const int lite = e == SCALEUP_ENCAP_LITE;
    const int afh2_family = e == SCALEUP_ENCAP_AFH2 || e == SCALEUP_ENCAP_AFH2C || lite;
    const int carries_ids =
        afh2_family || (e >= SCALEUP_ENCAP_AFH1 && e <= SCALEUP_ENCAP_AFH1_VLAN_SHIM);
    const uint32_t link = afh2_family ? SCALEUP_LINK_AFH2 : SCALEUP_LINK_ETHERNET;

    scaleup_frame_params_init(&p, e);
    p.src_xpu = 5;
    p.dst_xpu = 9;
    p.tc = e == SCALEUP_ENCAP_AFH1 ? 0 : 1; /* AFH Gen 1 bare has no place for a class */
    if (lite)
      CHECK(scaleup_frame_emit(&p, payload, payload_len, frame, sizeof frame, &n, &err) == 0);
    else
      CHECK(scaleup_sue_frame_emit(&p, &h, payload, payload_len, frame, sizeof frame, &n, &err) ==
            0);
    if (err.code) fprintf(stderr, "%s: %.*s\n", scaleup_encap_name(e), (int)err.what_len, err.what);
    CHECK(n == scaleup_frame_header_size(e) + payload_len + (lite ? 0 : 8 + 4));

    CHECK(scaleup_frame_read(frame, n, link, NULL, 0, &f) == 0);
    if (f.error_count)
      fprintf(stderr, "%s: %.*s\n", scaleup_encap_name(e), (int)f.errors[0].what_len,
              f.errors[0].what);
    CHECK(f.is_sue && f.encap == e && f.link == link);
    CHECK(f.has_rh == !lite && f.accepted == !lite);
    if (!lite) CHECK(rh_equal(&f.rh, &h) && f.bounds.status == SCALEUP_RCRC_GOOD);
    CHECK(f.pdu_offset == scaleup_frame_header_size(e));
    CHECK(f.payload_offset == f.pdu_offset + (lite ? 0 : 8));
    CHECK(f.payload_length == payload_len);
    CHECK(memcmp(frame + f.payload_offset, payload, payload_len) == 0);
    CHECK(f.has_src_xpu == carries_ids && f.has_dst_xpu == carries_ids);
    if (carries_ids) CHECK(f.src_xpu == 5 && f.dst_xpu == 9);
    check_three(frame + f.payload_offset, f.payload_length, write_data, msg_data);
  }

  /* A frame too short for the encapsulation's headers: the reader says where it stopped. */
  {
    scaleup_frame_params p;
    scaleup_received_frame f;
    scaleup_error err;
    scaleup_rh h = rh_golden();
    size_t n = 0;
    scaleup_frame_params_init(&p, SCALEUP_ENCAP_UDP4);
    CHECK(scaleup_sue_frame_emit(&p, &h, payload, payload_len, frame, sizeof frame, &n, NULL) == 0);
    CHECK(scaleup_frame_read(frame, 14 + 10, SCALEUP_LINK_ETHERNET, NULL, 0, &f) ==
          SCALEUP_ERRC_TRUNCATED);
    CHECK(f.error_count >= 1);
    CHECK(f.errors[f.error_count - 1].code == SCALEUP_ERRC_TRUNCATED &&
          f.errors[f.error_count - 1].needed == 20 && f.errors[f.error_count - 1].available == 10);
    CHECK(!f.accepted && !f.has_rh);

    /* A damaged R-CRC. No UDP port is SUE's by default, and the heuristic wants a good R-CRC:
     * the datagram is not taken for SUE until its port is named. */
    frame[n - 1] ^= 0xFF;
    CHECK(scaleup_frame_read(frame, n, SCALEUP_LINK_ETHERNET, NULL, 0, &f) == 0);
    CHECK(!f.is_sue && f.carrier == SCALEUP_CARRIER_IPV4_UDP);
    {
      scaleup_receive_options o;
      scaleup_receive_options_init(&o);
      o.udp_ports[0] = p.udp_dst_port;
      o.udp_port_count = 1;
      CHECK(scaleup_frame_read(frame, n, SCALEUP_LINK_ETHERNET, &o, 0, &f) ==
            SCALEUP_ERRC_BAD_CHECKSUM);
      CHECK(f.is_sue && f.has_rh && !f.accepted && f.bounds.status == SCALEUP_RCRC_BAD);
      CHECK(f.errors[f.error_count - 1].code == SCALEUP_ERRC_BAD_CHECKSUM);
    }

    /* Output too small, and an encapsulation that does not exist. */
    CHECK(scaleup_sue_frame_emit(&p, &h, payload, payload_len, frame, 60, &n, &err) ==
          SCALEUP_ERRC_NO_SPACE);
    CHECK(err.needed == 42 + 8 + payload_len + 4 && err.available == 60 && n == 0);
    p.encap = 99;
    CHECK(scaleup_frame_emit(&p, payload, payload_len, frame, sizeof frame, &n, &err) ==
          SCALEUP_ERRC_UNSUPPORTED);
    CHECK(err.value == 99 && scaleup_frame_header_size(99) == 0);
    CHECK(strcmp(scaleup_encap_name(99), "unknown") == 0);
    CHECK(strcmp(scaleup_encap_name(SCALEUP_ENCAP_AFH1_VLAN_SHIM), "afh1-vlan-shim") == 0);

    /* SUE Lite carries no RH; AFH Gen 1 ids are 16 bits. */
    scaleup_frame_params_init(&p, SCALEUP_ENCAP_LITE);
    CHECK(scaleup_sue_frame_emit(&p, &h, payload, payload_len, frame, sizeof frame, &n, &err) ==
          SCALEUP_ERRC_UNSUPPORTED);
    scaleup_frame_params_init(&p, SCALEUP_ENCAP_AFH1);
    p.dst_xpu = 0x10000;
    CHECK(scaleup_sue_frame_emit(&p, &h, payload, payload_len, frame, sizeof frame, &n, &err) ==
          SCALEUP_ERRC_VALUE_TOO_BIG);
  }

  /* A link type the reader does not know. */
  {
    scaleup_received_frame f;
    CHECK(scaleup_frame_read(frame, 60, 9999, NULL, 0, &f) == SCALEUP_ERRC_UNSUPPORTED);
    CHECK(f.error_count == 1 && f.errors[0].value == 9999 && !f.is_sue);
  }
}

/* ---- a caller's command profile ---------------------------------------------------------- */

/* Two vendor types: 0x40, a 4-byte control (2 units) with data, on VC 0; 0x42, a 2-byte control
 * (1 unit) without, on VC 1. Neither is in the default profile. */
static const scaleup_command_type vendor_types[2] = {{0x40, "vendor-write", 2, true, 0},
                                                     {0x42, "vendor-fence", 1, false, 1}};

/* A 0x40 with control AB CD and data 01 02 03 (byte 1, the data length - 1, is 02), then a
 * 0x42 with control byte 07: written by hand from the framing rules (R2 4.2 step 2a). */
static const uint8_t vendor_golden[9] = {0x40, 0x02, 0xAB, 0xCD, 0x01, 0x02, 0x03, 0x42, 0x07};
static const uint8_t vendor_data[3] = {0x01, 0x02, 0x03};

static unsigned char profile_storage[1 << 16];

static const scaleup_profile* vendor_profile(void) {
  static const scaleup_profile* p;
  scaleup_error err;
  if (!p) {
    CHECK(scaleup_profile_size() <= sizeof profile_storage);
    /* Storage one byte off any alignment: init aligns inside it. */
    p = scaleup_profile_init(profile_storage + 1, sizeof profile_storage - 1, "vendor",
                             vendor_types, 2, &err);
    CHECK(p != NULL && err.code == SCALEUP_ERRC_NONE);
  }
  return p;
}

/* Pushes the two vendor commands for XPU 9 on VC 0 and packs them into payload[0, cap): the
 * payload's length, 0 when the packer refused. */
static size_t pack_vendor(scaleup_packer* p, uint8_t* payload, size_t cap, scaleup_error* err) {
  uint8_t write_control[4] = {0x40, 0x00, 0xAB, 0xCD}, fence_control[2] = {0x42, 0x07};
  scaleup_queued_command c;
  scaleup_packed_pdu pdu;
  memset(&c, 0, sizeof c);
  c.destination = 9;
  c.control = write_control;
  c.control_len = sizeof write_control;
  c.data = vendor_data;
  c.data_len = sizeof vendor_data;
  if (scaleup_packer_push(p, &c, err) != 0) return 0;
  c.control = fence_control;
  c.control_len = sizeof fence_control;
  c.data = NULL;
  c.data_len = 0;
  if (scaleup_packer_push(p, &c, err) != 0) return 0;
  if (scaleup_packer_next(p, payload, cap, &pdu, NULL, 0, err) != 0) return 0;
  CHECK(pdu.destination == 9 && pdu.vc == 0 && pdu.commands == 2);
  return pdu.bytes;
}

static void test_profile_pack(void) {
  static unsigned char storage[1 << 18];
  const scaleup_profile* prof = vendor_profile();
  const int sizings[2] = {SCALEUP_PACKER_SIZING_FULL, SCALEUP_PACKER_SIZING_FIRMWARE};
  uint8_t payload[SCALEUP_SUE_PACK_LIMIT];
  scaleup_packer_config cfg;
  scaleup_unpacker u;
  scaleup_command c;
  scaleup_error err;
  scaleup_packer* p;
  int i;

  scaleup_packer_config_init(&cfg);
  CHECK(cfg.profile == NULL);
  /* The default profile refuses the first vendor command... */
  CHECK(scaleup_packer_size() <= sizeof storage);
  p = scaleup_packer_init(storage, sizeof storage, &cfg);
  CHECK(p != NULL);
  if (p) {
    CHECK(pack_vendor(p, payload, sizeof payload, &err) == 0);
    CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && err.value == 0x40);
    CHECK(same(err.field, err.field_len, "sue.cmd.type"));
  }
  /* ...the caller's packs both, byte for byte, in either sizing. */
  cfg.profile = prof;
  cfg.limit = 128;
  for (i = 0; i < 2; ++i) {
    size_t n;
    p = scaleup_packer_sized_init(storage, sizeof storage, sizings[i], &cfg);
    CHECK(p != NULL);
    if (!p) continue;
    memset(payload, 0xEE, sizeof payload);
    n = pack_vendor(p, payload, sizeof payload, &err);
    CHECK(n == sizeof vendor_golden && memcmp(payload, vendor_golden, n) == 0);
  }

  /* The unpacker walks the golden payload with the caller's profile... */
  scaleup_unpacker_init_with(&u, prof, vendor_golden, sizeof vendor_golden, 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(c.code == 0x40 && c.control_len == 4 && c.control[2] == 0xAB && c.index == 1);
  CHECK(c.data_len == 3 && memcmp(c.data, vendor_data, 3) == 0 && c.vc == 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(c.code == 0x42 && c.control_len == 2 && c.control[1] == 0x07 && c.data_len == 0);
  CHECK(c.offset == 7 && c.index == 2 && c.vc == 1);
  CHECK(scaleup_unpacker_next(&u, &c) == 0);
  CHECK(scaleup_unpacker_error(&u, &err) == 0 && scaleup_unpacker_count(&u) == 2);
  /* ...and stops at its first command with the default one, as with a NULL profile. */
  scaleup_unpacker_init(&u, vendor_golden, sizeof vendor_golden, 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 0);
  CHECK(scaleup_unpacker_error(&u, &err) == SCALEUP_ERRC_BAD_VALUE);
  CHECK(err.value == 0x40 && err.item == 1 && err.offset == 0);
  scaleup_unpacker_init_with(&u, NULL, vendor_golden, sizeof vendor_golden, 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 0 && scaleup_unpacker_error(&u, NULL) != 0);
}

/* The golden payload in minimum-size frames, zero-padded to 60 bytes. Ethernet gives no
 * length: in a SUE PDU (AFH Gen 1: 14 + 8 + 9 + 4 = 35 bytes) the R-CRC is at the first command
 * boundary where the CRC matches and only zeros follow; a SUE Lite payload (AFH Gen 2
 * compressed: 6 + 9 bytes) has no R-CRC, and only the profile's boundaries tell its commands
 * from the padding (R2 3.4). */
static void test_profile_frame_read(void) {
  const scaleup_profile* prof = vendor_profile();
  scaleup_frame_params p;
  scaleup_receive_options o;
  scaleup_received_frame f;
  scaleup_rh h = rh_golden();
  uint8_t frame[128];
  size_t n = 0;

  scaleup_receive_options_init(&o);
  CHECK(o.profile == NULL && o.default_profile);
  o.profile = prof;
  scaleup_frame_params_init(&p, SCALEUP_ENCAP_AFH1);
  CHECK(scaleup_sue_frame_emit(&p, &h, vendor_golden, sizeof vendor_golden, frame, sizeof frame, &n,
                               NULL) == 0);
  CHECK(n == 60);
  CHECK(scaleup_frame_read(frame, n, SCALEUP_LINK_ETHERNET, &o, 0, &f) == 0);
  CHECK(f.is_sue && f.accepted && f.bounds.status == SCALEUP_RCRC_GOOD);
  CHECK(f.payload_offset == 14 + 8 && f.payload_length == sizeof vendor_golden);
  CHECK(f.bounds.payload_end == 8 + sizeof vendor_golden && f.bounds.pad == 60 - 35);

  scaleup_frame_params_init(&p, SCALEUP_ENCAP_LITE);
  CHECK(scaleup_frame_emit(&p, vendor_golden, sizeof vendor_golden, frame, sizeof frame, &n,
                           NULL) == 0);
  CHECK(n == 60);
  CHECK(scaleup_frame_read(frame, n, SCALEUP_LINK_AFH2, &o, 0, &f) == 0);
  CHECK(f.is_sue && f.encap == SCALEUP_ENCAP_LITE && f.payload_offset == 6);
  CHECK(f.payload_length == sizeof vendor_golden);
  /* The default profile draws no boundary after 0x40: the padding counts as payload. */
  o.profile = NULL;
  CHECK(scaleup_frame_read(frame, n, SCALEUP_LINK_AFH2, &o, 0, &f) == 0);
  CHECK(f.payload_length == 60 - 6);
}

/* Every table profile::check() refuses, and storage that cannot hold a profile. */
static void test_profile_refusals(void) {
  static unsigned char storage[1 << 16];
  scaleup_command_type t[3];
  scaleup_error err;
  const size_t size = sizeof storage;

  memcpy(t, vendor_types, sizeof vendor_types);
  t[2] = vendor_types[0]; /* 0x40 twice */
  CHECK(scaleup_profile_init(storage, size, "dup", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && same(err.layer, err.layer_len, "profile"));
  CHECK(same(err.what, err.what_len, "a command type code appears twice"));
  t[2].code = 0;
  CHECK(scaleup_profile_init(storage, size, "zero", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && same(err.what, err.what_len, "type 0 is padding"));
  t[2].code = 0x44;
  t[2].control_units = 0;
  CHECK(scaleup_profile_init(storage, size, "units0", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE &&
        same(err.what, err.what_len, "control length outside 1..9 units"));
  t[2].control_units = 10;
  CHECK(scaleup_profile_init(storage, size, "units10", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE &&
        same(err.what, err.what_len, "control length outside 1..9 units"));
  t[2].control_units = 9; /* the most: a 144-bit tx_control (R2 Table 3) */
  t[2].vc = 4;            /* the RH's vc is two bits */
  CHECK(scaleup_profile_init(storage, size, "vc4", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE && same(err.what, err.what_len, "a VC is 0 to 3"));
  t[2].vc = 3;
  CHECK(scaleup_profile_init(storage, size, NULL, t, 3, &err) != NULL && err.code == 0);

  /* Storage short, by far or by one byte (however it is aligned: what the size function says),
   * or none; more types than a code can name; no table. */
  CHECK(scaleup_profile_init(storage, 1024, "v", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_NO_SPACE && err.needed == scaleup_profile_size() &&
        err.available == 1024);
  CHECK(scaleup_profile_init(storage, scaleup_profile_size() - 1, "v", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_NO_SPACE);
  CHECK(scaleup_profile_init(storage, scaleup_profile_size(), "v", t, 3, &err) != NULL);
  CHECK(scaleup_profile_init(NULL, size, "v", t, 3, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_NO_SPACE);
  CHECK(scaleup_profile_init(storage, size, "v", t, SCALEUP_MAX_COMMAND_TYPES + 1, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_VALUE_TOO_BIG && err.value == 256);
  CHECK(scaleup_profile_init(storage, size, "v", NULL, 2, &err) == NULL);
  CHECK(err.code == SCALEUP_ERRC_BAD_VALUE);
  /* An empty table is a profile (of no commands). */
  CHECK(scaleup_profile_init(storage, size, "none", NULL, 0, &err) != NULL && err.code == 0);
}

/* Two firmware instances with the caller's profile: XPU 1's vendor command reaches XPU 2 whole.
 * One with the default profile refuses it. */
static void test_profile_instance(void) {
  static unsigned char storage[2][1 << 15];
  static uint8_t frame[4096];
  uint8_t control[4] = {0x40, 0x00, 0xAB, 0xCD};
  const size_t room = scaleup_instance_frame_room(SCALEUP_SIZING_FIRMWARE);
  scaleup_instance_config cfg;
  scaleup_instance_actions a, r;
  scaleup_instance* xpu[2];
  scaleup_unpacker u;
  scaleup_command c;
  scaleup_error err;
  int i;

  CHECK(scaleup_instance_size(SCALEUP_SIZING_FIRMWARE) <= sizeof storage[0] && room <= 4096);
  scaleup_instance_config_init(&cfg);
  CHECK(cfg.profile == NULL);
  cfg.xpuid = 1;
  xpu[0] = scaleup_instance_init(storage[0], sizeof storage[0], SCALEUP_SIZING_FIRMWARE, &cfg, NULL,
                                 &err);
  CHECK(xpu[0] != NULL);
  if (!xpu[0]) return;
  CHECK(scaleup_instance_command(xpu[0], 0, 2, 0, control, sizeof control, vendor_data,
                                 sizeof vendor_data, true, &a) == SCALEUP_ERRC_BAD_VALUE);
  CHECK(a.error.value == 0x40);
  scaleup_instance_fini(xpu[0]);

  cfg.profile = vendor_profile();
  for (i = 0; i < 2; ++i) {
    cfg.xpuid = (uint16_t)(1 + i);
    xpu[i] = scaleup_instance_init(storage[i], sizeof storage[i], SCALEUP_SIZING_FIRMWARE, &cfg,
                                   NULL, &err);
    CHECK(xpu[i] != NULL);
    if (!xpu[i]) return;
  }
  CHECK(scaleup_instance_command(xpu[0], 0, 2, 0, control, sizeof control, vendor_data,
                                 sizeof vendor_data, true, &a) == 0);
  CHECK(scaleup_instance_transmit(xpu[0], 0, 0, frame, room, &a) == 0);
  CHECK(a.frame.kind == SCALEUP_FRAME_KIND_PDU && a.frame.commands == 1);
  CHECK(scaleup_instance_frame(xpu[1], 0, 0, frame, a.frame.size, &r) == 0);
  CHECK(r.delivered.valid && r.delivered.src == 1 && r.delivered.vc == 0);
  scaleup_unpacker_init_with(&u, cfg.profile, r.delivered.payload, r.delivered.payload_len, 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 1);
  CHECK(c.code == 0x40 && c.control_len == 4 && c.control[1] == 2 && c.control[3] == 0xCD);
  CHECK(c.data_len == 3 && memcmp(c.data, vendor_data, 3) == 0);
  CHECK(scaleup_unpacker_next(&u, &c) == 0 && scaleup_unpacker_error(&u, NULL) == 0);
  for (i = 0; i < 2; ++i) scaleup_instance_fini(xpu[i]);
}

int main(void) {
  test_rh();
  test_afh1();
  test_afh2();
  test_pdu();
  test_pack();
  test_cmd_write();
  test_firmware_packer();
  test_frames();
  test_profile_pack();
  test_profile_frame_read();
  test_profile_refusals();
  test_profile_instance();
  test_go_back_n();
  test_endpoint();
  test_instance();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C ABI round trip: all checks passed\n");
  return 0;
}
