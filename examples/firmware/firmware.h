/* The firmware example's components, each in its own translation unit so that the bare-metal
 * build can print code size per component. C11 over the C ABI (scaleup/scaleup.h); nothing here
 * allocates. */
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
bool fw_pack_write(uint16_t dst, uint8_t vc, uint64_t addr, const uint8_t* data);
size_t fw_pack_next(uint8_t* out, size_t cap, uint16_t* dst, uint8_t* vc);
int fw_unpack_count(const uint8_t* payload, size_t n);

/* Go-back-N: one sender and one receiver connection. */
int fw_gbn_send(void); /* the PSN given to a new PDU, or -1 when the window is full */
void fw_gbn_sender_ack(uint16_t apsn, bool nack, uint32_t* resend, uint16_t* from);
bool fw_gbn_receive(uint16_t npsn, uint64_t now); /* true: deliver */
bool fw_gbn_pending_ack(uint8_t* op, uint16_t* apsn);

/* The SUE instance: two of them, in static storage, exchange writes over a wire that loses one
 * frame. 0 when every write arrived once and in order, else the number of the check that
 * failed. */
int fw_instance_selftest(void);

/* The whole loop: pack, frame, lose one PDU, go back, receive, unpack; then the instance. 0 on
 * success, else the number of the step that failed. */
int fw_selftest(void);

/* The bare-metal image's report of the self-test's result and its stack high-water mark
 * (report_debugger.c or report_semihosting.c). */
_Noreturn void fw_report(int result, uint32_t stack_used);

#endif /* SCALEUP_EXAMPLE_FIRMWARE_H */
