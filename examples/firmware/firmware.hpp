// The firmware example's components, each in its own translation unit so that the bare-metal
// build can print code size per component. Nothing here allocates or throws.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fw {

// RH: encode one reliability header into 8 bytes and decode it back.
bool rh_encode(std::uint16_t xpuid, std::uint16_t npsn, std::uint16_t apsn, std::uint8_t op,
               std::uint8_t vc, std::uint8_t out[8]);
bool rh_decode(const std::uint8_t in[8], std::uint16_t& xpuid, std::uint16_t& npsn,
               std::uint16_t& apsn, std::uint8_t& op, std::uint8_t& vc);

// PDU: RH + payload + R-CRC, and the check of a received PDU of known length.
std::size_t pdu_emit(const std::uint8_t rh[8], const std::uint8_t* payload, std::size_t n,
                     std::uint8_t* out, std::size_t cap);
bool pdu_check(const std::uint8_t* pdu, std::size_t n, std::size_t& payload_end);
std::uint32_t crc32_of(const std::uint8_t* data, std::size_t n);  // the R-CRC's CRC-32

// Packer: queue a 64-byte write for a destination (the data stays the caller's until packed);
// take the next packed payload; count the commands in a payload.
bool pack_write(std::uint16_t dst, std::uint8_t vc, std::uint64_t addr, const std::uint8_t* data);
std::size_t pack_next(std::uint8_t* out, std::size_t cap, std::uint16_t& dst, std::uint8_t& vc);
int unpack_count(const std::uint8_t* payload, std::size_t n);

// Go-back-N: one sender and one receiver connection.
int gbn_send();  // the PSN given to a new PDU, or -1 when the window is full
void gbn_sender_ack(std::uint16_t apsn, bool nack, std::uint32_t& resend, std::uint16_t& from);
bool gbn_receive(std::uint16_t npsn, std::uint64_t now);  // true: deliver
bool gbn_pending_ack(std::uint8_t& op, std::uint16_t& apsn);

// The SUE instance: two of them, in static storage, exchange writes over a wire that loses one
// frame. 0 when every write arrived once and in order, else the number of the check that failed.
int instance_selftest();

// The whole loop: pack, frame, lose one PDU, go back, receive, unpack; then the instance. 0 on
// success, else the number of the step that failed.
int selftest();

// The bare-metal image's report of the self-test's result and its stack high-water mark
// (report_debugger.cpp or report_semihosting.cpp).
[[noreturn]] void report(int result, std::uint32_t stack_used);

}  // namespace fw
