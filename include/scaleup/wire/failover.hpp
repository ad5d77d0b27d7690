// The failover exchange between two SUE instances (R2 3.5.8: "SUE determines when a remote XPU is
// not reachable over a specific port/plane. When detected, SUE moves the associated work to
// another port"). The seeds say what, not how; this is the library's design.
//
// Moving work without losing or repeating any needs the receiver's word: which of the PDUs the
// sender still keeps were delivered on the failed connection (their ACKs may have been lost with
// the plane). So the sender asks, over a plane that works: a request names the connection (the
// failed port and the VC key; the sender is the frame's source) and the PSN it will continue
// from, well past anything still in flight. The receiver answers with the PSN it expected on that
// connection and, at the same instant, starts expecting the new one: whatever arrives late on
// the old plane is then a duplicate, dropped and never delivered twice. The sender releases what
// was delivered and sends the rest again on the new connection. A request is repeated on the
// retransmit timeout until answered; a repeat (the same generation) gets the same answer and
// resets nothing, and an older attempt that arrives after a newer one (its base behind what the
// receiver now expects) is dropped: acted on, it would move the receiver back. The same exchange
// resynchronises a connection whose work was failed when its peer was declared unreachable.
//
// Wire format (scaleup's; 12 bytes): ver(2) type(2) port(2) vc(2) generation(8) rsvd(6)
// xpuid(10) base(16) expected(16) crc(32). The CRC (CRC-32 as the R-CRC, over the first eight
// bytes) is the message's own: its carrier may have no checksum that is checked (UDP's is
// optional, AFH has none), and a PSN read wrong would release PDUs never delivered.
//
// The carrier names the control transport, so that no reader takes a message for SUE (its 12
// bytes have an RH-only PDU's shape, CRC included): UDP port 61794 over IP (from the dynamic
// range, RFC 6335), and in every AFH deployment AFH Gen 1's shim with next header 254 (RFC
// 3692's second experimental number). An AFH Gen 2 header, normal or compressed, has no place
// to name another transport that a reader of an Ethernet link can tell from SUE Lite's payload,
// so messages there take the shim form too. The frame reader (receive.hpp) shows them as this
// layer; a UDP port the user names as SUE's is read as SUE.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

inline constexpr std::uint16_t failover_udp_port = 61794;
inline constexpr std::uint8_t shim_next_failover = 254;

enum class failover_type : std::uint8_t { request = 1, reply = 2 };

inline constexpr std::array<value_name, 4> failover_type_names{{
    {0, "reserved"},
    {1, "request"},
    {2, "reply"},
    {3, "reserved"},
}};

struct failover_message {
  std::uint8_t ver = 0;
  std::uint8_t type = static_cast<std::uint8_t>(failover_type::request);
  std::uint8_t port = 0;        // the failed connection's port (its plane)
  std::uint8_t vc = 0;          // the failed connection's VC key
  std::uint8_t generation = 0;  // which attempt: a repeat of one is answered, not acted on again
  std::uint8_t rsvd = 0;
  std::uint16_t xpuid = 0;     // the sender of this message
  std::uint16_t base = 0;      // the PSN the connection continues from
  std::uint16_t expected = 0;  // reply: the PSN the receiver expected before it moved to base
  std::uint32_t crc = 0;       // over the eight bytes before it (failover_crc)
  friend constexpr bool operator==(const failover_message&, const failover_message&) = default;
};

template <>
struct layout<failover_message> {
  using T = failover_message;
  static constexpr std::string_view name = "sue.failover";
  static constexpr std::string_view title = "SUE failover request/reply (scaleup format)";
  static constexpr std::string_view seed = "R2 3.5.8 (no format in the seeds)";
  static constexpr std::size_t size = 12;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::ver, {.name = "ver", .filter = "sue.failover.ver", .bit = 0, .width = 2,
                       .description = "Version; 0 today", .seed = "scaleup",
                       .check = rule::fixed, .expect = 0}),
      member(&T::type, {.name = "type", .filter = "sue.failover.type", .bit = 2, .width = 2,
                        .names = failover_type_names,
                        .description = "Request or reply", .seed = "scaleup"}),
      member(&T::port, {.name = "port", .filter = "sue.failover.port", .bit = 4, .width = 2,
                        .description = "Port (plane) of the connection that failed",
                        .seed = "R2 3.5.8; R2 Table 1 (4 ports)"}),
      member(&T::vc, {.name = "vc", .filter = "sue.failover.vc", .bit = 6, .width = 2,
                      .description = "VC key of the connection", .seed = "R2 Table 5"}),
      member(&T::generation, {.name = "generation", .filter = "sue.failover.generation",
                              .bit = 8, .width = 8,
                              .description = "Attempt number: a repeat is answered again",
                              .seed = "scaleup"}),
      member(&T::rsvd, {.name = "rsvd", .filter = "sue.failover.rsvd", .bit = 16, .width = 6,
                        .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
      member(&T::xpuid, {.name = "xpuid", .filter = "sue.failover.xpuid", .bit = 22,
                         .width = 10, .description = "Sender XPU", .seed = "R2 Table 5"}),
      member(&T::base, {.name = "base", .filter = "sue.failover.base", .bit = 32, .width = 16,
                        .description = "PSN the connection continues from",
                        .seed = "scaleup"}),
      member(&T::expected, {.name = "expected", .filter = "sue.failover.expected", .bit = 48,
                            .width = 16,
                            .description = "Reply: PSN the receiver expected (what was "
                                           "delivered ends before it)",
                            .seed = "scaleup"}),
      member(&T::crc, {.name = "crc", .filter = "sue.failover.crc", .bit = 64, .width = 32,
                       .type = kind::hex,
                       .description = "CRC-32 (as the R-CRC) over the first eight bytes",
                       .seed = "scaleup; CRC: decisions.md R-CRC"}),
  };
  // clang-format on
};
static_assert(tiles<failover_message>());

// The CRC a message must carry, over its own encoding with the CRC cut off.
constexpr std::uint32_t failover_crc(failover_message m) noexcept {
  m.crc = 0;
  const auto image = to_bytes(m);
  if (!image) return 0;  // a field too wide: encode refuses the message anyway
  return crc32(bytes(image->data(), 8));
}

// A message as sent: its CRC filled in.
constexpr failover_message sealed(failover_message m) noexcept {
  m.crc = failover_crc(m);
  return m;
}

// A received message, or why it is to be dropped (a bad CRC, a version other than 0).
constexpr result<failover_message> read_failover(bytes b) noexcept {
  const auto m = decode<failover_message>(b);
  if (!m) return m.err;
  if (m->ver != 0)
    return error{.code = errc::unsupported,
                 .layer = "sue.failover",
                 .what = "failover message of another version",
                 .field = "sue.failover.ver",
                 .value = m->ver};
  if (m->crc != failover_crc(*m))
    return error{.code = errc::bad_checksum,
                 .layer = "sue.failover",
                 .offset = 8,
                 .what = "failover message CRC mismatch: dropped",
                 .field = "sue.failover.crc",
                 .value = failover_crc(*m)};
  return *m;
}

}  // namespace scaleup::wire
