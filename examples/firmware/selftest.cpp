// The loop a NIC's firmware runs, on one connection: pack four writes, frame each PDU, lose the
// second on the way, receive with go-back-N, NACK, resend from the lost PSN, and unpack.
#include <array>

#include "firmware.hpp"

namespace fw {

int selftest() {
  std::array<std::uint8_t, 64> data{};
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i);

  // 1. RH round trip.
  std::uint8_t rh[8];
  std::uint16_t xpuid = 0, npsn = 0, apsn = 0;
  std::uint8_t op = 0, vc = 0;
  if (!rh_encode(42, 7, 6, 0, 1, rh) || !rh_decode(rh, xpuid, npsn, apsn, op, vc) || xpuid != 42 ||
      npsn != 7 || apsn != 6 || vc != 1)
    return 1;

  // The CRC-32 the R-CRC uses, however its tables are sliced: the catalogued check value of
  // CRC-32/ISO-HDLC over "123456789".
  const std::uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  if (crc32_of(check, sizeof check) != 0xCBF43926u) return 14;

  // 2. Pack four writes to four destinations: four payloads, one command each.
  constexpr int pdus = 4;
  std::array<std::array<std::uint8_t, 256>, pdus> wire{};  // the PDUs as sent (kept for resend)
  std::array<std::size_t, pdus> wire_len{};
  for (int i = 0; i < pdus; ++i)
    if (!pack_write(static_cast<std::uint16_t>(i + 1), 0, 0x1000u * (i + 1), data.data())) return 2;
  for (int i = 0; i < pdus; ++i) {
    std::array<std::uint8_t, 128> payload{};
    std::uint16_t dst = 0;
    std::uint8_t pvc = 0;
    const std::size_t n = pack_next(payload.data(), payload.size(), dst, pvc);
    if (n != 76) return 3;
    const int psn = gbn_send();  // 3. go-back-N gives each PDU its PSN
    if (psn != i) return 4;
    if (!rh_encode(5, static_cast<std::uint16_t>(psn), 0, 3 /* none */, pvc, rh)) return 5;
    wire_len[i] = pdu_emit(rh, payload.data(), n, wire[i].data(), wire[i].size());
    if (wire_len[i] != 8 + 76 + 4) return 6;
  }

  // 4. The receiver sees PDU 0, loses PDU 1, sees 2 and 3 (dropped as a gap): NACK 1.
  int delivered = 0, commands = 0;
  const auto receive = [&](int i, std::uint64_t now) {
    std::size_t end = 0;
    if (!pdu_check(wire[i].data(), wire_len[i], end)) return false;
    std::uint16_t x = 0, p = 0, a = 0;
    std::uint8_t o = 0, v = 0;
    if (!rh_decode(wire[i].data(), x, p, a, o, v)) return false;
    if (!gbn_receive(p, now)) return true;  // dropped by go-back-N: not an error
    ++delivered;
    commands += unpack_count(wire[i].data() + 8, end - 8);
    return true;
  };
  if (!receive(0, 100) || !receive(2, 300) || !receive(3, 400)) return 7;
  if (delivered != 1) return 8;
  if (!gbn_pending_ack(op, apsn) || op != 1 /* NACK */ || apsn != 1) return 9;

  // 5. The sender goes back to PSN 1 and resends 1, 2 and 3.
  std::uint32_t resend = 0;
  std::uint16_t from = 0;
  gbn_sender_ack(apsn, true, resend, from);
  if (resend != 3 || from != 1) return 10;
  for (std::uint32_t k = 0; k < resend; ++k)
    if (!receive(static_cast<int>(from + k), 500 + k)) return 11;
  if (delivered != pdus || commands != pdus) return 12;

  // 6. A corrupted PDU fails its R-CRC.
  wire[0][20] ^= 0x10;
  std::size_t end = 0;
  if (pdu_check(wire[0].data(), wire_len[0], end)) return 13;

  // 7. The whole SUE instance, as the firmware embeds it.
  if (const int r = instance_selftest(); r != 0) return 20 + r;
  return 0;
}

}  // namespace fw
