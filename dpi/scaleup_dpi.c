/* scaleup's DPI-C wrapper: the C ABI (scaleup/scaleup.h) as SystemVerilog imports
 * (dpi/scaleup_dpi.svh, package scaleup_dpi), so that a test bench uses the library as its
 * reference model.
 *
 * Byte buffers cross as open arrays (`byte unsigned a[]` in SystemVerilog, svOpenArrayHandle
 * here) with an explicit length beside each: a bench passes a fixed-size unpacked array, which
 * every simulator (Verilator 5 included) hands to an open-array argument, and the length says
 * how much of it counts. Open arrays are read and written through svdpi.h only: the whole array
 * by svGetArrayPtr when the simulator keeps it contiguous, else element by element with
 * svGetArrElemPtr1, which IEEE 1800 requires of every simulator.
 *
 * Every function returns 0 or a SCALEUP_ERRC_* code (a negative one for a DPI misuse: an array
 * too small, a length out of range, a handle not open); scaleup_dpi_errc_name names either.
 * Nothing is allocated except the packer's storage, once, and each open endpoint's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scaleup/scaleup.h"
#include "svdpi.h"

/* Errors of the wrapper itself, below zero so as not to collide with SCALEUP_ERRC_*. */
enum {
  SCALEUP_DPI_ARRAY_TOO_SMALL = -1,   /* an open array holds fewer elements than needed */
  SCALEUP_DPI_BAD_LENGTH = -2,        /* a length or index is negative or beyond its array */
  SCALEUP_DPI_NO_MEMORY = -3,         /* the packer's or an endpoint's storage: no heap */
  SCALEUP_DPI_BAD_HANDLE = -4,        /* not an open endpoint's handle */
  SCALEUP_DPI_TOO_MANY_ENDPOINTS = -5 /* every slot of the endpoint table is open */
};

/* The largest buffer a call handles: an Ethernet jumbo frame's worth. */
#define SCALEUP_DPI_MAX_BYTES 16384

/* ---- open arrays --------------------------------------------------------------------------- */

static int array_len(const svOpenArrayHandle h) { return h ? svSize(h, 1) : 0; }

/* Copies n elements of elem_size bytes between an open array and buf: into buf when `in`, else
 * out of it. The array's own storage when the simulator gives it whole, else element by element. */
static int array_copy(const svOpenArrayHandle h, void* buf, int n, size_t elem_size, int in) {
  void* whole;
  int i, lo;
  if (n < 0) return SCALEUP_DPI_BAD_LENGTH;
  if (n == 0) return 0;
  if (array_len(h) < n) return SCALEUP_DPI_ARRAY_TOO_SMALL;
  whole = svGetArrayPtr(h);
  if (whole) {
    if (in)
      memcpy(buf, whole, (size_t)n * elem_size);
    else
      memcpy(whole, buf, (size_t)n * elem_size);
    return 0;
  }
  lo = svLow(h, 1);
  for (i = 0; i < n; ++i) {
    void* e = svGetArrElemPtr1(h, lo + i);
    unsigned char* b = (unsigned char*)buf + (size_t)i * elem_size;
    if (!e) return SCALEUP_DPI_ARRAY_TOO_SMALL;
    if (in)
      memcpy(b, e, elem_size);
    else
      memcpy(e, b, elem_size);
  }
  return 0;
}

static int array_in(const svOpenArrayHandle h, void* out, int n, size_t elem_size) {
  return array_copy(h, out, n, elem_size, 1);
}

static int array_out(const svOpenArrayHandle h, const void* in, int n, size_t elem_size) {
  return array_copy(h, (void*)in, n, elem_size, 0);
}

/* The first `len` bytes of an open array, copied to buf (len at most SCALEUP_DPI_MAX_BYTES). */
static int bytes_in(const svOpenArrayHandle h, int len, uint8_t* buf) {
  if (len < 0 || len > SCALEUP_DPI_MAX_BYTES) return SCALEUP_DPI_BAD_LENGTH;
  return array_in(h, buf, len, 1);
}

/* ---- names --------------------------------------------------------------------------------- */

const char* scaleup_dpi_errc_name(int code) {
  switch (code) {
    case SCALEUP_DPI_ARRAY_TOO_SMALL:
      return "dpi_array_too_small";
    case SCALEUP_DPI_BAD_LENGTH:
      return "dpi_bad_length";
    case SCALEUP_DPI_NO_MEMORY:
      return "dpi_no_memory";
    case SCALEUP_DPI_BAD_HANDLE:
      return "dpi_bad_handle";
    case SCALEUP_DPI_TOO_MANY_ENDPOINTS:
      return "dpi_too_many_endpoints";
    default:
      return scaleup_errc_name(code);
  }
}

/* ---- the RH ---------------------------------------------------------------------------------- */

static scaleup_rh rh_of(unsigned char op, unsigned short xpuid, unsigned short npsn,
                        unsigned char vc, unsigned short partition, unsigned short apsn) {
  scaleup_rh h;
  scaleup_rh_init(&h);
  h.op = op;
  h.xpuid = xpuid;
  h.npsn = npsn;
  h.vc = vc;
  h.partition = partition;
  h.apsn = apsn;
  return h;
}

static void rh_out(const scaleup_rh* h, unsigned char* op, unsigned short* xpuid,
                   unsigned short* npsn, unsigned char* vc, unsigned short* partition,
                   unsigned short* apsn) {
  *op = h->op;
  *xpuid = h->xpuid;
  *npsn = h->npsn;
  *vc = h->vc;
  *partition = h->partition;
  *apsn = h->apsn;
}

/* ---- the PDU and its R-CRC ------------------------------------------------------------------ */

unsigned int scaleup_dpi_rcrc_compute(const svOpenArrayHandle bytes, int len) {
  static uint8_t buf[SCALEUP_DPI_MAX_BYTES];
  if (bytes_in(bytes, len, buf) != 0) return 0;
  return scaleup_rcrc_compute(buf, (size_t)len);
}

int scaleup_dpi_pdu_emit(unsigned char op, unsigned short xpuid, unsigned short npsn,
                         unsigned char vc, unsigned short partition, unsigned short apsn,
                         const svOpenArrayHandle payload, int payload_len,
                         const svOpenArrayHandle pdu, int* pdu_len) {
  static uint8_t in[SCALEUP_DPI_MAX_BYTES], out[SCALEUP_DPI_MAX_BYTES];
  scaleup_rh h = rh_of(op, xpuid, npsn, vc, partition, apsn);
  size_t written = 0;
  int rc;
  *pdu_len = 0;
  if ((rc = bytes_in(payload, payload_len, in)) != 0) return rc;
  rc = scaleup_pdu_emit(&h, in, (size_t)payload_len, out, sizeof out, &written, NULL);
  if (rc != 0) return rc;
  if ((rc = array_out(pdu, out, (int)written, 1)) != 0) return rc;
  *pdu_len = (int)written;
  return 0;
}

int scaleup_dpi_pdu_check(const svOpenArrayHandle pdu, int pdu_len, unsigned char* op,
                          unsigned short* xpuid, unsigned short* npsn, unsigned char* vc,
                          unsigned short* partition, unsigned short* apsn, int* rcrc_status,
                          unsigned int* rcrc_found, unsigned int* rcrc_computed, int* payload_len) {
  static uint8_t buf[SCALEUP_DPI_MAX_BYTES];
  scaleup_rh h;
  scaleup_pdu_bounds b;
  int rc;
  scaleup_rh_init(&h);
  memset(&b, 0, sizeof b);
  *rcrc_status = SCALEUP_RCRC_MISSING;
  *payload_len = 0;
  if ((rc = bytes_in(pdu, pdu_len, buf)) != 0) {
    rh_out(&h, op, xpuid, npsn, vc, partition, apsn);
    *rcrc_found = *rcrc_computed = 0;
    return rc;
  }
  rc = scaleup_rh_decode(buf, (size_t)pdu_len, &h, NULL);
  *rcrc_status = scaleup_rcrc_check(buf, (size_t)pdu_len, &b);
  rh_out(&h, op, xpuid, npsn, vc, partition, apsn);
  *rcrc_found = b.rcrc;
  *rcrc_computed = b.computed;
  if (b.payload_end >= SCALEUP_RH_SIZE) *payload_len = (int)(b.payload_end - SCALEUP_RH_SIZE);
  return rc;
}

/* ---- frames ---------------------------------------------------------------------------------- */

int scaleup_dpi_frame_emit(int encap, unsigned int src_xpu, unsigned int dst_xpu,
                           const svOpenArrayHandle pdu, int pdu_len, const svOpenArrayHandle frame,
                           int* frame_len) {
  static uint8_t in[SCALEUP_DPI_MAX_BYTES], out[SCALEUP_DPI_MAX_BYTES];
  scaleup_frame_params p;
  size_t written = 0;
  int rc;
  *frame_len = 0;
  if ((rc = bytes_in(pdu, pdu_len, in)) != 0) return rc;
  scaleup_frame_params_init(&p, encap);
  p.src_xpu = src_xpu;
  p.dst_xpu = dst_xpu;
  rc = scaleup_frame_emit(&p, in, (size_t)pdu_len, out, sizeof out, &written, NULL);
  if (rc != 0) return rc;
  if ((rc = array_out(frame, out, (int)written, 1)) != 0) return rc;
  *frame_len = (int)written;
  return 0;
}

int scaleup_dpi_frame_check(const svOpenArrayHandle frame, int frame_len, int* encap,
                            unsigned int* src_xpu, unsigned int* dst_xpu, unsigned char* op,
                            unsigned short* xpuid, unsigned short* npsn, unsigned char* vc,
                            unsigned short* partition, unsigned short* apsn, int* rcrc_status,
                            int* pdu_offset, int* payload_len, unsigned char* accepted) {
  static uint8_t buf[SCALEUP_DPI_MAX_BYTES];
  static scaleup_received_frame f; /* large: kept off the simulator's stack */
  scaleup_rh none;
  int rc;
  scaleup_rh_init(&none);
  memset(&f, 0, sizeof f);
  *encap = -1;
  *src_xpu = *dst_xpu = 0;
  *rcrc_status = SCALEUP_RCRC_MISSING;
  *pdu_offset = *payload_len = 0;
  *accepted = 0;
  if ((rc = bytes_in(frame, frame_len, buf)) != 0) {
    rh_out(&none, op, xpuid, npsn, vc, partition, apsn);
    return rc;
  }
  rc = scaleup_frame_read(buf, (size_t)frame_len, SCALEUP_LINK_ETHERNET, NULL, 0, &f);
  if (f.is_sue) *encap = f.encap;
  if (f.has_src_xpu) *src_xpu = f.src_xpu;
  if (f.has_dst_xpu) *dst_xpu = f.dst_xpu;
  rh_out(f.has_rh ? &f.rh : &none, op, xpuid, npsn, vc, partition, apsn);
  *rcrc_status = f.bounds.status;
  *pdu_offset = (int)f.pdu_offset;
  *payload_len = (int)f.payload_length;
  *accepted = f.accepted;
  return rc;
}

/* ---- commands: the packer ------------------------------------------------------------------- */

/* One packer for the program, built once in heap storage and emptied by every call. */
static scaleup_packer* packer(void) {
  static void* storage;
  static scaleup_packer* p;
  if (!p) {
    size_t n = scaleup_packer_size();
    storage = malloc(n);
    if (storage) p = scaleup_packer_init(storage, n, NULL);
  }
  return p;
}

int scaleup_dpi_pack_writes(int count, int posted, unsigned short destination, unsigned char vc,
                            const svOpenArrayHandle addr, const svOpenArrayHandle tag,
                            const svOpenArrayHandle data_len, const svOpenArrayHandle data,
                            const svOpenArrayHandle payload, int* payload_len) {
  static uint8_t flat[SCALEUP_DPI_MAX_BYTES], out[SCALEUP_SUE_PACK_LIMIT];
  static uint64_t addrs[SCALEUP_SUE_PACK_LIMIT], cookies[SCALEUP_SUE_PACK_LIMIT];
  static unsigned short tags[SCALEUP_SUE_PACK_LIMIT];
  static int lens[SCALEUP_SUE_PACK_LIMIT];
  static uint8_t controls[SCALEUP_SUE_PACK_LIMIT][SCALEUP_MAX_CONTROL_BYTES];
  scaleup_packer* p = packer();
  scaleup_packed_pdu pdu;
  const uint8_t code = posted ? SCALEUP_CMD_WRITE_FULL_POSTED : SCALEUP_CMD_WRITE_FULL;
  const size_t control_len = scaleup_command_control_size(code, NULL);
  size_t data_at = 0;
  int i, rc;
  *payload_len = 0;
  if (!p) return SCALEUP_DPI_NO_MEMORY;
  if (count < 0 || count > SCALEUP_SUE_PACK_LIMIT) return SCALEUP_DPI_BAD_LENGTH;
  if ((rc = array_in(addr, addrs, count, sizeof addrs[0])) != 0) return rc;
  if ((rc = array_in(tag, tags, count, sizeof tags[0])) != 0) return rc;
  if ((rc = array_in(data_len, lens, count, sizeof lens[0])) != 0) return rc;
  for (i = 0; i < count; ++i) {
    if (lens[i] < 0 || data_at + (size_t)lens[i] > sizeof flat) return SCALEUP_DPI_BAD_LENGTH;
    data_at += (size_t)lens[i];
  }
  if ((rc = array_in(data, flat, (int)data_at, 1)) != 0) return rc;

  data_at = 0;
  for (i = 0; i < count; ++i) {
    scaleup_queued_command c;
    uint8_t* ctl = controls[i];
    int k;
    memset(ctl, 0, SCALEUP_MAX_CONTROL_BYTES);
    ctl[0] = code;
    ctl[2] = (uint8_t)(tags[i] >> 8);
    ctl[3] = (uint8_t)tags[i];
    for (k = 0; k < 8; ++k) ctl[4 + k] = (uint8_t)(addrs[i] >> (56 - 8 * k));
    memset(&c, 0, sizeof c);
    c.destination = destination;
    c.vc = vc;
    c.control = ctl;
    c.control_len = control_len;
    c.data = flat + data_at;
    c.data_len = (size_t)lens[i];
    c.cookie = (uint64_t)i;
    data_at += (size_t)lens[i];
    if ((rc = scaleup_packer_push(p, &c, NULL)) != 0) {
      /* Empty the packer for the next call before reporting. */
      while (scaleup_packer_queued(p) > 0 &&
             scaleup_packer_next(p, out, sizeof out, &pdu, NULL, 0, NULL) == 0) {
      }
      return rc;
    }
  }
  rc = scaleup_packer_next(p, out, sizeof out, &pdu, cookies, (size_t)count, NULL);
  if (rc == 0 && pdu.commands != (size_t)count) rc = SCALEUP_ERRC_NO_SPACE; /* beyond a PDU */
  while (scaleup_packer_queued(p) > 0 &&
         scaleup_packer_next(p, flat, sizeof flat, &pdu, NULL, 0, NULL) == 0) {
  }
  if (rc != 0) return rc;
  if ((rc = array_out(payload, out, (int)pdu.bytes, 1)) != 0) return rc;
  *payload_len = (int)pdu.bytes;
  return 0;
}

/* ---- commands: the unpacker ----------------------------------------------------------------- */

/* Where a command type of the default profile keeps its address; 0 for types without one. */
static int address_at(uint8_t code) {
  switch (code) {
    case SCALEUP_CMD_WRITE_FULL_POSTED:
    case SCALEUP_CMD_WRITE_FULL:
    case SCALEUP_CMD_WRITE_PARTIAL_POSTED:
    case SCALEUP_CMD_WRITE_PARTIAL:
    case SCALEUP_CMD_READ:
      return 4;
    case SCALEUP_CMD_ATOMIC:
      return 6;
    default:
      return 0;
  }
}

int scaleup_dpi_unpack(const svOpenArrayHandle payload, int payload_len, int max_commands,
                       const svOpenArrayHandle code, const svOpenArrayHandle tag,
                       const svOpenArrayHandle addr, const svOpenArrayHandle data_offset,
                       const svOpenArrayHandle data_len, int* count) {
  static uint8_t buf[SCALEUP_DPI_MAX_BYTES];
  static uint8_t codes[SCALEUP_SUE_PACK_LIMIT];
  static unsigned short tags[SCALEUP_SUE_PACK_LIMIT];
  static uint64_t addrs[SCALEUP_SUE_PACK_LIMIT];
  static int offsets[SCALEUP_SUE_PACK_LIMIT], lens[SCALEUP_SUE_PACK_LIMIT];
  scaleup_unpacker u;
  scaleup_command c;
  int n = 0, rc;
  *count = 0;
  if (max_commands < 0 || max_commands > SCALEUP_SUE_PACK_LIMIT) return SCALEUP_DPI_BAD_LENGTH;
  if ((rc = bytes_in(payload, payload_len, buf)) != 0) return rc;
  scaleup_unpacker_init(&u, buf, (size_t)payload_len, 0);
  while (n < max_commands && scaleup_unpacker_next(&u, &c)) {
    uint64_t a = 0;
    int k;
    codes[n] = c.code;
    tags[n] = c.control_len >= 4 ? (unsigned short)(c.control[2] << 8 | c.control[3]) : 0;
    /* The default profile's address: bytes 4 to 11 of reads and writes, 6 to 13 of atomics. */
    {
      const int at = address_at(c.code);
      if (at > 0 && c.control_len >= (size_t)at + 8)
        for (k = 0; k < 8; ++k) a = a << 8 | c.control[at + k];
    }
    addrs[n] = a;
    offsets[n] = c.data ? (int)(c.data - buf) : (int)(c.offset + c.control_len);
    lens[n] = (int)c.data_len;
    ++n;
  }
  if ((rc = array_out(code, codes, n, 1)) != 0 || (rc = array_out(tag, tags, n, 2)) != 0 ||
      (rc = array_out(addr, addrs, n, 8)) != 0 ||
      (rc = array_out(data_offset, offsets, n, sizeof(int))) != 0 ||
      (rc = array_out(data_len, lens, n, sizeof(int))) != 0)
    return rc;
  *count = n;
  return scaleup_unpacker_error(&u, NULL);
}

/* ---- the go-back-N endpoint ----------------------------------------------------------------- */

/* Endpoints open at once; a bench keeps one per connection it models. */
#define SCALEUP_DPI_MAX_ENDPOINTS 16

/* A bench holds an endpoint by its index in this table rather than by a chandle to it: every
 * call checks the index, so a handle never opened or already closed (until an open takes its
 * slot again) is DPI_BAD_HANDLE rather than a wild pointer inside C; and an int prints.
 * Beside each endpoint the table keeps what SystemVerilog reads after a step, a piece a call:
 * the step's actions, whose PDUs and delivered payload point into the endpoint (valid until its
 * next step, which only this wrapper takes), and the last ACK or NACK its RHs carried out. The
 * endpoint's own storage is from the heap: a fabric-sized one is about 1 MB. */
typedef struct dpi_endpoint {
  void* storage;
  scaleup_endpoint* ep;
  scaleup_endpoint_actions last;
  unsigned char ack_op;
  unsigned short ack_apsn;
} dpi_endpoint;

static dpi_endpoint endpoints[SCALEUP_DPI_MAX_ENDPOINTS];

static dpi_endpoint* endpoint_at(int handle) {
  if (handle < 0 || handle >= SCALEUP_DPI_MAX_ENDPOINTS || !endpoints[handle].ep) return NULL;
  return &endpoints[handle];
}

void scaleup_dpi_endpoint_defaults(unsigned int* window, unsigned long long* rto,
                                   unsigned int* max_retries, unsigned int* ack_every,
                                   unsigned long long* ack_delay) {
  scaleup_endpoint_config c;
  scaleup_endpoint_config_init(&c);
  *window = c.gbn.window;
  *rto = c.gbn.rto;
  *max_retries = c.gbn.max_retries;
  *ack_every = c.gbn.ack_every;
  *ack_delay = c.gbn.ack_delay;
}

int scaleup_dpi_endpoint_open(int sizing, unsigned short xpuid, unsigned char vc,
                              unsigned short partition, unsigned int window, unsigned long long rto,
                              unsigned int max_retries, unsigned int ack_every,
                              unsigned long long ack_delay, int* handle) {
  scaleup_endpoint_config c;
  scaleup_error err;
  dpi_endpoint* d = NULL;
  size_t size;
  int i;
  *handle = -1;
  for (i = 0; i < SCALEUP_DPI_MAX_ENDPOINTS && !d; ++i)
    if (!endpoints[i].ep) d = &endpoints[i];
  if (!d) return SCALEUP_DPI_TOO_MANY_ENDPOINTS;
  size = scaleup_endpoint_size(sizing);
  if (size == 0) return SCALEUP_ERRC_BAD_VALUE; /* an unknown sizing */
  memset(d, 0, sizeof *d);
  if (!(d->storage = malloc(size))) return SCALEUP_DPI_NO_MEMORY;
  scaleup_endpoint_config_init(&c);
  c.xpuid = xpuid;
  c.vc = vc;
  c.partition = partition;
  c.gbn.window = window;
  c.gbn.rto = rto;
  c.gbn.max_retries = max_retries;
  c.gbn.ack_every = ack_every;
  c.gbn.ack_delay = ack_delay;
  d->ep = scaleup_endpoint_init(d->storage, size, sizing, &c, &err);
  if (!d->ep) {
    free(d->storage);
    d->storage = NULL;
    return err.code;
  }
  d->ack_op = SCALEUP_RH_OP_NONE;
  *handle = (int)(d - endpoints);
  return 0;
}

int scaleup_dpi_endpoint_close(int handle) {
  dpi_endpoint* d = endpoint_at(handle);
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  free(d->storage); /* the endpoint has nothing to release (scaleup.h) */
  memset(d, 0, sizeof *d);
  return 0;
}

/* One step, its actions kept for scaleup_dpi_endpoint_transmit, the last ACK or NACK noted. */
static int endpoint_step(dpi_endpoint* d, unsigned long long now, int input, const uint8_t* bytes,
                         size_t len, int* transmit_count) {
  scaleup_endpoint_event e;
  size_t i;
  int rc;
  memset(&e, 0, sizeof e);
  e.input = (uint8_t)input;
  e.bytes = bytes;
  e.bytes_len = len;
  rc = scaleup_endpoint_step(d->ep, now, &e, &d->last);
  for (i = 0; i < d->last.transmit_count; ++i) {
    const scaleup_rh* h = &d->last.transmit[i].rh;
    if (h->op == SCALEUP_RH_OP_ACK || h->op == SCALEUP_RH_OP_NACK) {
      d->ack_op = h->op;
      d->ack_apsn = h->apsn;
    }
  }
  *transmit_count = (int)d->last.transmit_count;
  return rc;
}

static int pdu_out(const scaleup_outgoing_pdu* p, const svOpenArrayHandle pdu, int* pdu_len) {
  int rc = array_out(pdu, p->bytes, (int)p->bytes_len, 1);
  if (rc == 0) *pdu_len = (int)p->bytes_len;
  return rc;
}

int scaleup_dpi_endpoint_send(int handle, unsigned long long now, const svOpenArrayHandle payload,
                              int payload_len, const svOpenArrayHandle pdu, int* pdu_len,
                              unsigned short* psn, unsigned char* accepted, int* transmit_count) {
  static uint8_t buf[SCALEUP_DPI_MAX_BYTES];
  dpi_endpoint* d = endpoint_at(handle);
  int rc, i;
  *pdu_len = 0;
  *psn = 0;
  *accepted = 0;
  *transmit_count = 0;
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  if ((rc = bytes_in(payload, payload_len, buf)) != 0) return rc;
  /* Checked before the step, which cannot be taken back: the PDU is the payload and 12 bytes. */
  if (array_len(pdu) < SCALEUP_RH_SIZE + payload_len + SCALEUP_RCRC_SIZE)
    return SCALEUP_DPI_ARRAY_TOO_SMALL;
  rc = endpoint_step(d, now, SCALEUP_ENDPOINT_SEND, buf, (size_t)payload_len, transmit_count);
  if (rc != 0 || !d->last.accepted) return rc;
  *accepted = 1;
  *psn = d->last.sent_psn;
  /* The new PDU ends the step's run; PDUs before it are ones sent again. */
  for (i = (int)d->last.transmit_count - 1; i >= 0; --i) {
    const scaleup_outgoing_pdu* p = &d->last.transmit[i];
    if (p->payload_len > 0 && p->rh.npsn == d->last.sent_psn) return pdu_out(p, pdu, pdu_len);
  }
  return 0;
}

int scaleup_dpi_endpoint_arrived(int handle, unsigned long long now, const svOpenArrayHandle pdu,
                                 int pdu_len, const svOpenArrayHandle delivered, int* delivered_len,
                                 int* dropped, int* transmit_count) {
  static uint8_t buf[SCALEUP_DPI_MAX_BYTES];
  dpi_endpoint* d = endpoint_at(handle);
  const int most = pdu_len - SCALEUP_RH_SIZE - SCALEUP_RCRC_SIZE; /* a payload it may deliver */
  int rc;
  *delivered_len = 0;
  *dropped = SCALEUP_DROP_NONE;
  *transmit_count = 0;
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  if ((rc = bytes_in(pdu, pdu_len, buf)) != 0) return rc;
  if (most > 0 && array_len(delivered) < most) return SCALEUP_DPI_ARRAY_TOO_SMALL;
  rc = endpoint_step(d, now, SCALEUP_ENDPOINT_ARRIVED, buf, (size_t)pdu_len, transmit_count);
  *dropped = d->last.dropped;
  if (d->last.delivered_len > 0) {
    const int r = array_out(delivered, d->last.delivered, (int)d->last.delivered_len, 1);
    if (r != 0) return r;
    *delivered_len = (int)d->last.delivered_len;
  }
  return rc;
}

int scaleup_dpi_endpoint_tick(int handle, unsigned long long now, int* transmit_count) {
  dpi_endpoint* d = endpoint_at(handle);
  *transmit_count = 0;
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  return endpoint_step(d, now, SCALEUP_ENDPOINT_TICK, NULL, 0, transmit_count);
}

unsigned long long scaleup_dpi_endpoint_deadline(int handle) {
  const dpi_endpoint* d = endpoint_at(handle);
  return d ? scaleup_endpoint_deadline(d->ep) : SCALEUP_NO_DEADLINE;
}

int scaleup_dpi_endpoint_can_send(int handle) {
  const dpi_endpoint* d = endpoint_at(handle);
  return d && scaleup_endpoint_can_send(d->ep);
}

int scaleup_dpi_endpoint_transmit(int handle, int index, const svOpenArrayHandle pdu, int* pdu_len,
                                  unsigned char* op, unsigned short* npsn, unsigned short* apsn) {
  const dpi_endpoint* d = endpoint_at(handle);
  const scaleup_outgoing_pdu* p;
  *pdu_len = 0;
  *op = SCALEUP_RH_OP_NONE;
  *npsn = *apsn = 0;
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  if (index < 0 || (size_t)index >= d->last.transmit_count) return SCALEUP_DPI_BAD_LENGTH;
  p = &d->last.transmit[index];
  *op = p->rh.op;
  *npsn = p->rh.npsn;
  *apsn = p->rh.apsn;
  return pdu_out(p, pdu, pdu_len);
}

int scaleup_dpi_endpoint_ack(int handle, unsigned char* op, unsigned short* apsn) {
  const dpi_endpoint* d = endpoint_at(handle);
  *op = SCALEUP_RH_OP_NONE;
  *apsn = 0;
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  *op = d->ack_op;
  *apsn = d->ack_apsn;
  return 0;
}

/* The order of the package's COUNTER_* indices. */
enum {
  COUNTER_SENT,
  COUNTER_RESENT,
  COUNTER_NACKS,
  COUNTER_TIMEOUTS,
  COUNTER_DELIVERED,
  COUNTER_DUPLICATES,
  COUNTER_DROPPED_GAP,
  COUNTER_DROPPED_PARTITION,
  COUNTER_ACKS_SENT,
  COUNTER_NACKS_SENT,
  COUNTER_REJECTED,
  COUNTER_IN_FLIGHT,
  COUNTER_UNREACHABLE,
  COUNTERS
};

int scaleup_dpi_endpoint_counters(int handle, const svOpenArrayHandle counters) {
  const dpi_endpoint* d = endpoint_at(handle);
  scaleup_endpoint_counters n;
  unsigned long long c[COUNTERS];
  if (!d) return SCALEUP_DPI_BAD_HANDLE;
  scaleup_endpoint_stats(d->ep, &n);
  c[COUNTER_SENT] = n.sent;
  c[COUNTER_RESENT] = n.resent;
  c[COUNTER_NACKS] = n.nacks;
  c[COUNTER_TIMEOUTS] = n.timeouts;
  c[COUNTER_DELIVERED] = n.delivered;
  c[COUNTER_DUPLICATES] = n.duplicates;
  c[COUNTER_DROPPED_GAP] = n.dropped_gap;
  c[COUNTER_DROPPED_PARTITION] = n.dropped_partition;
  c[COUNTER_ACKS_SENT] = n.acks_sent;
  c[COUNTER_NACKS_SENT] = n.nacks_sent;
  c[COUNTER_REJECTED] = n.rejected;
  c[COUNTER_IN_FLIGHT] = n.in_flight;
  c[COUNTER_UNREACHABLE] = n.unreachable;
  return array_out(counters, c, COUNTERS, sizeof c[0]);
}
