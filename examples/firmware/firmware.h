/* The firmware example's components, each in its own translation unit so that the bare-metal
 * build can print code size per component. C11 over the C ABI (scaleup/scaleup.h); nothing here
 * allocates. The C ABI builds its objects in memory the caller gives (its size functions say how
 * much): the packer, the go-back-N endpoints and the SUE instances are built in storage the
 * self-test hands them, one static arena that its two phases share (selftest.c), so that the
 * image fits a Cortex-M4's 64 KB of RAM. Each init returns the bytes it took, 0 when the
 * storage is too small. */
#ifndef SCALEUP_EXAMPLE_FIRMWARE_H
#define SCALEUP_EXAMPLE_FIRMWARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RH: encode one reliability header into 8 bytes and decode it back. */
bool fw_rh_encode(uint16_t xpuid, uint16_t npsn, uint16_t apsn, uint8_t op, uint8_t vc,
                  uint8_t out[8]);
bool fw_rh_decode(const uint8_t in[8], uint16_t* xpuid, uint16_t* npsn, uint16_t* apsn, uint8_t* op,
                  uint8_t* vc);

/* PDU: RH + payload + R-CRC, and the check of a received PDU of known length. */
size_t fw_pdu_emit(const uint8_t rh[8], const uint8_t* payload, size_t n, uint8_t* out, size_t cap);
bool fw_pdu_check(const uint8_t* pdu, size_t n, size_t* payload_end);
uint32_t fw_crc32_of(const uint8_t* data, size_t n); /* the R-CRC's CRC-32 */

/* Packer: queue a 64-byte write for a destination (the data stays the caller's until packed);
 * take the next packed payload; count the commands in a payload. */
size_t fw_pack_init(void* storage, size_t size);
bool fw_pack_write(uint16_t dst, uint8_t vc, uint64_t addr, const uint8_t* data);
size_t fw_pack_next(uint8_t* out, size_t cap, uint16_t* dst, uint8_t* vc);
int fw_unpack_count(const uint8_t* payload, size_t n);

/* Go-back-N: the two ends of one connection, end 0 (this XPU, 1) and end 1 (its peer, 2). Each
 * call is one event at `now` (ns, never decreasing); the PDUs the end puts on the wire, RH
 * through R-CRC, are appended to *out. */
#define FW_PDUS 4
#define FW_PDU_BYTES (8 + 128 + 4)
typedef struct fw_pdus {
  uint8_t bytes[FW_PDUS][FW_PDU_BYTES];
  size_t len[FW_PDUS];
  size_t count;
} fw_pdus;
size_t fw_gbn_init(void* storage, size_t size);
/* A payload for the peer: the PSN its PDU took, or -1 when refused (window full). */
int fw_gbn_send(int end, const uint8_t* payload, size_t n, uint64_t now, fw_pdus* out);
/* A PDU arrived: false when the end refused it (damaged); *delivered is the payload to hand up,
 * in PSN order and once, or NULL (a gap, a duplicate, an ACK or NACK alone). */
bool fw_gbn_arrive(int end, const uint8_t* pdu, size_t n, uint64_t now, fw_pdus* out,
                   const uint8_t** delivered, size_t* delivered_len);
uint64_t fw_gbn_resent(int end); /* PDUs the end sent again */

/* The SUE instance: two of them, in the storage given, exchange writes over a wire that loses one
 * frame. 0 when every write arrived once and in order, else the number of the check that
 * failed. */
int fw_instance_selftest(void* storage, size_t size);

/* The whole loop: pack, frame, lose one PDU, go back, receive, unpack; then the instance. 0 on
 * success, else the number of the step that failed. */
int fw_selftest(void);

/* The bare-metal image's report of the self-test's result and its stack high-water mark
 * (report_debugger.c or report_semihosting.c). */
_Noreturn void fw_report(int result, uint32_t stack_used);

#endif /* SCALEUP_EXAMPLE_FIRMWARE_H */
