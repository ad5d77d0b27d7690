// The default command profile: the transaction types of R2 Table 2 (write full and partial,
// posted and non-posted; read; read response; write response; message; barrier; atomic) with
// the AXI mapping of R2 3.2.2 (requests on VC0, responses on VC1). The seeds leave the byte
// layout to the XPU (R2 1.2: "The set operations and structure of the commands are XPU-specific
// and transparent to SUE"); this one is scaleup's, drawn in docs/wire-format.md.
#pragma once

#include <array>
#include <cstdint>

#include "scaleup/pack/command.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::pack {

namespace code {
// Even codes only: in a SUE Lite frame the first command's type byte is the first octet of the
// source MAC a standard switch reads (R2 3.4, Fig. 10: the payload follows the 6-byte compressed
// AFH Gen 2 header, in the place of the SA), and bit 0 of that octet is the I/G bit. An odd code
// would make the source look like a group address, which the SLAP addressing must never do
// (docs/decisions.md, AFH Gen 2).
inline constexpr std::uint8_t write_full_posted = 0x02;
inline constexpr std::uint8_t write_full = 0x04;  // non-posted: a write response comes back
inline constexpr std::uint8_t write_partial_posted = 0x06;
inline constexpr std::uint8_t write_partial = 0x08;
inline constexpr std::uint8_t read = 0x0A;
inline constexpr std::uint8_t read_response = 0x0C;
inline constexpr std::uint8_t write_response = 0x0E;
inline constexpr std::uint8_t message = 0x10;
inline constexpr std::uint8_t barrier = 0x12;
inline constexpr std::uint8_t atomic = 0x14;
inline constexpr std::uint8_t atomic_response = 0x16;
}  // namespace code

// AXI response codes (AMBA AXI4 RRESP/BRESP), so the AXI mapping carries them unchanged.
inline constexpr std::array<wire::value_name, 4> status_names{
    {{0, "OKAY"}, {1, "EXOKAY"}, {2, "SLVERR"}, {3, "DECERR"}}};

inline constexpr std::array<wire::value_name, 8> atomic_op_names{{{0, "ADD"},
                                                                  {1, "SWAP"},
                                                                  {2, "CAS"},
                                                                  {3, "AND"},
                                                                  {4, "OR"},
                                                                  {5, "XOR"},
                                                                  {6, "MIN"},
                                                                  {7, "MAX"}}};

// What byte 1 of a control holds.
enum class second_byte : std::uint8_t { data_length, read_length, reserved };

// The bindings every control starts with: the type byte, byte 1, the tag. Written once, used by
// every shape.
template <class S>
constexpr auto control_head(second_byte b) noexcept {
  constexpr wire::field_info dlen{.name = "data length - 1",
                                  .filter = "sue.cmd.dlen",
                                  .bit = 8,
                                  .width = 8,
                                  .description = "Data bytes that follow, minus one",
                                  .seed = "R2 4.2 step 2a; scaleup framing"};
  constexpr wire::field_info rlen{.name = "read length - 1",
                                  .filter = "sue.cmd.rlen",
                                  .bit = 8,
                                  .width = 8,
                                  .description = "Bytes to read, minus one; no data follows",
                                  .seed = "R2 Table 2 (256B transactions)"};
  constexpr wire::field_info rsvd{.name = "reserved",
                                  .filter = "sue.cmd.rsvd",
                                  .bit = 8,
                                  .width = 8,
                                  .seed = "scaleup framing",
                                  .check = wire::rule::reserved};
  // clang-format off
  return std::tuple{
      wire::member(&S::type, type_field),
      wire::member(&S::dlen, b == second_byte::data_length   ? dlen
                           : b == second_byte::read_length ? rlen
                                                           : rsvd),
      wire::member(&S::tag, {.name = "tag", .filter = "sue.cmd.tag", .bit = 16, .width = 16,
                           .description = "Matches a response to its request",
                           .seed = "R2 1.2 (command/response); AXI ID"}),
  };
  // clang-format on
}

// The 64-bit address right after the head (reads and writes): written once.
template <class S>
constexpr auto address_after_head() noexcept {
  return std::tuple{wire::member(&S::addr, {.name = "address",
                                            .filter = "sue.cmd.addr",
                                            .bit = 32,
                                            .width = 64,
                                            .type = wire::kind::hex,
                                            .description = "Remote memory address",
                                            .seed = "R2 4.1 (shared memory, load/store)"})};
}

// Status and a reserved byte after the head (read, atomic and write responses).
template <class S>
constexpr auto response_tail() noexcept {
  return std::tuple{wire::member(&S::status, {.name = "status",
                                              .filter = "sue.cmd.status",
                                              .bit = 32,
                                              .width = 8,
                                              .names = status_names,
                                              .description = "AXI response code",
                                              .seed = "R2 3.2.2 (B and R channels)"}),
                    wire::member(&S::rsvd, {.name = "reserved",
                                            .filter = "sue.cmd.rsvd2",
                                            .bit = 40,
                                            .width = 8,
                                            .seed = "scaleup default profile",
                                            .check = wire::rule::reserved})};
}

// Read request: address and the length wanted (in dlen, though no data follows).
struct cmd_read {
  std::uint8_t type = code::read;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint64_t addr = 0;
  friend constexpr bool operator==(const cmd_read&, const cmd_read&) = default;
};

// Full writes (posted and not): address; the data is the bytes to write.
struct cmd_write {
  std::uint8_t type = code::write_full;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint64_t addr = 0;
  friend constexpr bool operator==(const cmd_write&, const cmd_write&) = default;
};

// Partial writes: byte enables of the first and last 8-byte word, as PCIe does per DW.
struct cmd_write_partial {
  std::uint8_t type = code::write_partial;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint64_t addr = 0;
  std::uint8_t be_first = 0xFF;
  std::uint8_t be_last = 0xFF;
  std::uint16_t rsvd = 0;
  friend constexpr bool operator==(const cmd_write_partial&, const cmd_write_partial&) = default;
};

// Read and atomic responses, write responses: a status; read data follows where there is some.
struct cmd_response {
  std::uint8_t type = code::write_response;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint8_t status = 0;
  std::uint8_t rsvd = 0;
  friend constexpr bool operator==(const cmd_response&, const cmd_response&) = default;
};

// Message: a destination queue; the data is the message.
struct cmd_message {
  std::uint8_t type = code::message;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint16_t queue = 0;
  friend constexpr bool operator==(const cmd_message&, const cmd_message&) = default;
};

// Barrier: orders what came before it on its {destination, VC}; no data.
struct cmd_barrier {
  std::uint8_t type = code::barrier;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  friend constexpr bool operator==(const cmd_barrier&, const cmd_barrier&) = default;
};

// Atomic: operation and address; the data is the operand(s).
struct cmd_atomic {
  std::uint8_t type = code::atomic;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint8_t op = 0;
  std::uint8_t rsvd = 0;
  std::uint64_t addr = 0;
  friend constexpr bool operator==(const cmd_atomic&, const cmd_atomic&) = default;
};

// Read and atomic responses: the write response's shape, but byte 1 is the data length.
struct cmd_response_data {
  std::uint8_t type = code::read_response;
  std::uint8_t dlen = 0;
  std::uint16_t tag = 0;
  std::uint8_t status = 0;
  std::uint8_t rsvd = 0;
  friend constexpr bool operator==(const cmd_response_data&, const cmd_response_data&) = default;
};

}  // namespace scaleup::pack

namespace scaleup::wire {

// clang-format off
template <>
struct layout<pack::cmd_read> {
  using T = pack::cmd_read;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: read request";
  static constexpr std::string_view seed = "R2 Table 2; scaleup default profile";
  static constexpr std::size_t size = 12;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::read_length), pack::address_after_head<T>());
};

template <>
struct layout<pack::cmd_write> {
  using T = pack::cmd_write;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: full write";
  static constexpr std::string_view seed = "R2 Table 2; scaleup default profile";
  static constexpr std::size_t size = 12;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::data_length), pack::address_after_head<T>());
};

template <>
struct layout<pack::cmd_write_partial> {
  using T = pack::cmd_write_partial;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: partial write";
  static constexpr std::string_view seed = "R2 Table 2; scaleup default profile";
  static constexpr std::size_t size = 16;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::data_length), pack::address_after_head<T>(), std::tuple{
      member(&T::be_first, {.name = "first byte enables", .filter = "sue.cmd.be_first", .bit = 96,
                          .width = 8, .type = kind::hex,
                          .description = "Bytes written in the first 8-byte word",
                          .seed = "R2 Table 2 (partial write); AXI WSTRB"}),
      member(&T::be_last, {.name = "last byte enables", .filter = "sue.cmd.be_last", .bit = 104,
                         .width = 8, .type = kind::hex,
                         .description = "Bytes written in the last 8-byte word",
                         .seed = "R2 Table 2 (partial write); AXI WSTRB"}),
      member(&T::rsvd, {.name = "reserved", .filter = "sue.cmd.rsvd16", .bit = 112, .width = 16,
                      .seed = "scaleup default profile", .check = rule::reserved})});
};

template <>
struct layout<pack::cmd_response> {
  using T = pack::cmd_response;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: write response";
  static constexpr std::string_view seed = "R2 Table 2, 3.2.2; scaleup default profile";
  static constexpr std::size_t size = 6;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::reserved), pack::response_tail<T>());
};

template <>
struct layout<pack::cmd_response_data> {
  using T = pack::cmd_response_data;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: read or atomic response";
  static constexpr std::string_view seed = "R2 Table 2, 3.2.2; scaleup default profile";
  static constexpr std::size_t size = 6;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::data_length), pack::response_tail<T>());
};

template <>
struct layout<pack::cmd_message> {
  using T = pack::cmd_message;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: message";
  static constexpr std::string_view seed = "R2 Table 2; scaleup default profile";
  static constexpr std::size_t size = 6;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::data_length), std::tuple{
      member(&T::queue, {.name = "queue", .filter = "sue.cmd.queue", .bit = 32, .width = 16,
                       .description = "Receive queue at the destination XPU",
                       .seed = "R2 Table 2 (message)"})});
};

template <>
struct layout<pack::cmd_barrier> {
  using T = pack::cmd_barrier;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: barrier";
  static constexpr std::string_view seed = "R2 Table 2; scaleup default profile";
  static constexpr std::size_t size = 4;
  static constexpr auto fields = pack::control_head<T>(pack::second_byte::reserved);
};

template <>
struct layout<pack::cmd_atomic> {
  using T = pack::cmd_atomic;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: atomic";
  static constexpr std::string_view seed = "R2 Table 2, 4.1; scaleup default profile";
  static constexpr std::size_t size = 14;
  static constexpr auto fields = std::tuple_cat(pack::control_head<T>(pack::second_byte::data_length), std::tuple{
      member(&T::op, {.name = "operation", .filter = "sue.cmd.op", .bit = 32, .width = 8,
                    .names = pack::atomic_op_names, .description = "Atomic operation",
                    .seed = "R2 4.1 (put, get, atomic)"}),
      member(&T::rsvd, {.name = "reserved", .filter = "sue.cmd.rsvd2", .bit = 40, .width = 8,
                      .seed = "scaleup default profile", .check = rule::reserved}),
      member(&T::addr, {.name = "address", .filter = "sue.cmd.addr", .bit = 48, .width = 64,
                      .type = kind::hex, .description = "Remote memory address",
                      .seed = "R2 4.1"})});
};
// clang-format on

static_assert(tiles<pack::cmd_read>());
static_assert(tiles<pack::cmd_write>());
static_assert(tiles<pack::cmd_write_partial>());
static_assert(tiles<pack::cmd_response>());
static_assert(tiles<pack::cmd_response_data>());
static_assert(tiles<pack::cmd_message>());
static_assert(tiles<pack::cmd_barrier>());
static_assert(tiles<pack::cmd_atomic>());

}  // namespace scaleup::wire

namespace scaleup::pack {

template <class T>
constexpr std::uint8_t units_of() noexcept {
  return static_cast<std::uint8_t>(wire::layout<T>::size / 2);
}

// clang-format off
inline constexpr std::array<command_type, 11> default_types{{
    {code::write_full_posted, "WR_FULL_P", units_of<cmd_write>(), true,
     wire::field_infos<cmd_write>, "Full write, posted (no response)", "R2 Table 2", 0},
    {code::write_full, "WR_FULL", units_of<cmd_write>(), true,
     wire::field_infos<cmd_write>, "Full write, non-posted (write response)", "R2 Table 2", 0},
    {code::write_partial_posted, "WR_PART_P", units_of<cmd_write_partial>(), true,
     wire::field_infos<cmd_write_partial>, "Partial write, posted", "R2 Table 2", 0},
    {code::write_partial, "WR_PART", units_of<cmd_write_partial>(), true,
     wire::field_infos<cmd_write_partial>, "Partial write, non-posted", "R2 Table 2", 0},
    {code::read, "RD", units_of<cmd_read>(), false,
     wire::field_infos<cmd_read>, "Read request (AXI AR)", "R2 Table 2, 3.2.2", 0},
    {code::read_response, "RD_RSP", units_of<cmd_response_data>(), true,
     wire::field_infos<cmd_response_data>, "Read response with data (AXI R)", "R2 3.2.2", 1},
    {code::write_response, "WR_RSP", units_of<cmd_response>(), false,
     wire::field_infos<cmd_response>, "Write response (AXI B)", "R2 3.2.2", 1},
    {code::message, "MSG", units_of<cmd_message>(), true,
     wire::field_infos<cmd_message>, "Message", "R2 Table 2", 0},
    {code::barrier, "BARRIER", units_of<cmd_barrier>(), false,
     wire::field_infos<cmd_barrier>, "Barrier", "R2 Table 2", 0},
    {code::atomic, "ATOMIC", units_of<cmd_atomic>(), true,
     wire::field_infos<cmd_atomic>, "Atomic operation; data = operands", "R2 Table 2, 4.1", 0},
    {code::atomic_response, "ATOMIC_RSP", units_of<cmd_response_data>(), true,
     wire::field_infos<cmd_response_data>, "Atomic response; data = old value", "R2 4.1", 1},
}};
// clang-format on

inline constexpr profile default_profile{
    "default", default_types,
    "R2 Table 2 transaction types with the AXI mapping of R2 3.2.2 (scaleup layout; even codes "
    "only, so a SUE Lite payload never sets the source MAC's I/G bit, R2 3.4)"};
static_assert(default_profile.check().empty(), "default profile breaks the framing rules");

}  // namespace scaleup::pack
