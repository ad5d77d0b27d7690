// ExaJet network packets: a 128-bit header, up to 1024 bytes of payload, a 128-bit footer
// (Thesis Terminology "packet", 4.2.1, 4.3). Block data, inline payload, ACK, NACK and the
// completion-notification control packet all take this shape.
//
// The thesis names what the packets carry (Thesis 3.10, 3.11, 3.13): the TID and sequence
// number in every header; ACK or NACK in a response's header; the last TID and sequence
// number in a control packet's header; destination coordinates in the top bits of the
// destination address. It gives no bit layout, so the layouts here are this library's:
//
//   every header, bits 0-3: type; bits 64-79: the destination's coordinates (the top of
//     the destination address, or the node a response or control packet goes to), so a
//     switch reads the route at one place whatever the type;
//   data (write, inline): flags, TID, sequence number, block sequence (the block's first
//     sequence number, which stays the same when the block is re-sent), packet index and
//     payload length, then the packet's destination address;
//   ACK/NACK: TID, sequence number and block sequence of the block answered, a NACK cause;
//   control: the last block's TID, sequence number and block sequence, the transfer's block
//     count, then the notification address; its payload is the 8-byte notification value;
//   footer: the sender's coordinates (where responses go), protection domain, channel,
//     packets in the block, priority, and a CRC-32 over header and payload (the CRC of the
//     SUE R-CRC, decisions.md), so corruption reads as loss.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::rdma {

enum class packet_type : std::uint8_t {
  write = 0,         // a packet of a block (RDMA write)
  inline_write = 1,  // an inline-payload transfer, one packet
  ack = 2,
  nack = 3,
  control = 4,  // completion notification
};

inline constexpr std::array<wire::value_name, 5> packet_type_names{{
    {0, "write"},
    {1, "inline write"},
    {2, "ACK"},
    {3, "NACK"},
    {4, "control"},
}};

// Why a receiver NACKs (scaleup; the thesis has NACKs without causes).
enum class nack_cause : std::uint8_t { none = 0, missing_packet = 1, bad_crc = 2 };

inline constexpr std::array<wire::value_name, 3> nack_cause_names{{
    {0, "none"},
    {1, "missing packet"},
    {2, "bad CRC"},
}};

inline constexpr std::size_t header_size = 16;
inline constexpr std::size_t footer_size = 16;
inline constexpr std::size_t max_payload = 1024;        // Thesis Terminology "packet"
inline constexpr std::size_t control_payload_size = 8;  // the notification value

struct data_header {
  std::uint8_t type = static_cast<std::uint8_t>(packet_type::write);
  std::uint8_t last = 0;
  std::uint8_t notify = 0;
  std::uint8_t cm = 0;
  std::uint8_t multipath = 0;
  std::uint16_t tid = 0;
  std::uint16_t seq = 0;
  std::uint16_t block_seq = 0;
  std::uint8_t pkt = 0;
  std::uint16_t len = 0;
  std::uint64_t dst_addr = 0;
  friend constexpr bool operator==(const data_header&, const data_header&) = default;
};

struct response_header {
  std::uint8_t type = static_cast<std::uint8_t>(packet_type::ack);
  std::uint8_t cause = 0;
  std::uint16_t tid = 0;
  std::uint16_t seq = 0;
  std::uint16_t block_seq = 0;
  std::uint32_t rsvd = 0;
  std::uint16_t dst_coord = 0;
  std::uint64_t rsvd2 = 0;
  friend constexpr bool operator==(const response_header&, const response_header&) = default;
};

struct control_header {
  std::uint8_t type = static_cast<std::uint8_t>(packet_type::control);
  std::uint8_t rsvd = 0;
  std::uint16_t tid = 0;
  std::uint16_t seq = 0;
  std::uint16_t block_seq = 0;
  std::uint32_t blocks = 0;
  std::uint64_t notify_addr = 0;
  friend constexpr bool operator==(const control_header&, const control_header&) = default;
};

// The control packet's payload, described like a header so it dissects field by field.
struct control_payload {
  std::uint64_t value = 0;
  friend constexpr bool operator==(const control_payload&, const control_payload&) = default;
};

struct packet_footer {
  std::uint16_t src_coord = 0;
  std::uint16_t pd = 0;
  std::uint16_t channel = 0;
  std::uint8_t pkts = 0;
  std::uint8_t priority = 0;
  std::uint64_t rsvd = 0;
  std::uint32_t crc = 0;
  friend constexpr bool operator==(const packet_footer&, const packet_footer&) = default;
};

}  // namespace scaleup::rdma

namespace scaleup::wire {

template <>
struct layout<rdma::data_header> {
  using T = rdma::data_header;
  static constexpr std::string_view name = "rdma.pkt";
  static constexpr std::string_view title = "ExaJet data packet header";
  static constexpr std::string_view seed = "Thesis Terminology, 3.11, 3.13; layout: scaleup";
  static constexpr std::size_t size = 16;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::type, {.name = "type", .filter = "rdma.pkt.type", .bit = 0, .width = 4,
                      .names = rdma::packet_type_names,
                      .description = "Block data (write) or inline payload",
                      .seed = "Thesis 2, 3.9; codes: scaleup"}),
      member(&T::last, {.name = "last", .filter = "rdma.pkt.last", .bit = 4, .width = 1,
                      .type = kind::flag, .description = "Last packet of its block",
                      .seed = "Thesis 3.13; scaleup"}),
      member(&T::notify, {.name = "notify", .filter = "rdma.pkt.notify", .bit = 5, .width = 1,
                        .type = kind::flag,
                        .description = "Block has a completion notification: ACK after the control packet",
                        .seed = "Thesis 3.3 (notification enable), 3.10"}),
      member(&T::cm, {.name = "congestion managed", .filter = "rdma.pkt.cm", .bit = 6,
                    .width = 1, .type = kind::flag,
                    .description = "Block of a flow (TID from a FID)", .seed = "Thesis 3.3, 3.8"}),
      member(&T::multipath, {.name = "multipath", .filter = "rdma.pkt.multipath", .bit = 7,
                           .width = 1, .type = kind::flag,
                           .description = "Flow of a 4xFID transfer", .seed = "Thesis 3.8"}),
      member(&T::tid, {.name = "TID", .filter = "rdma.pkt.tid", .bit = 8, .width = 10,
                     .description = "Transaction ID: the block's Transaction Table entry",
                     .seed = "Thesis 3.8, 3.11"}),
      member(&T::seq, {.name = "sequence number", .filter = "rdma.pkt.seq", .bit = 18,
                     .width = 14,
                     .description = "This issue of the block; older issues are ignored",
                     .seed = "Thesis 3.13; width: 3.3"}),
      member(&T::block_seq, {.name = "block sequence", .filter = "rdma.pkt.block_seq",
                           .bit = 32, .width = 14,
                           .description = "Sequence number of the block's first issue: its identity",
                           .seed = "Thesis 5 (retransmission); scaleup"}),
      member(&T::pkt, {.name = "packet index", .filter = "rdma.pkt.index", .bit = 46,
                     .width = 6, .description = "Packet of the block, 0 to 63",
                     .seed = "Thesis 2 (64 packets per block); scaleup"}),
      member(&T::len, {.name = "length", .filter = "rdma.pkt.len", .bit = 52, .width = 12,
                     .description = "Payload bytes, 0 to 1024",
                     .seed = "Thesis Terminology; scaleup"}),
      member(&T::dst_addr, {.name = "destination address", .filter = "rdma.pkt.dst_addr",
                          .bit = 64, .width = 64, .type = kind::hex,
                          .description = "Of this packet's payload; top 16 bits: coordinates",
                          .seed = "Thesis 3.10 (coordinates in the MS bits)"}),
  };
  // clang-format on
};

template <>
struct layout<rdma::response_header> {
  using T = rdma::response_header;
  static constexpr std::string_view name = "rdma.ack";
  static constexpr std::string_view title = "ExaJet ACK/NACK header";
  static constexpr std::string_view seed = "Thesis 3.11; layout: scaleup";
  static constexpr std::size_t size = 16;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::type, {.name = "type", .filter = "rdma.ack.type", .bit = 0, .width = 4,
                      .names = rdma::packet_type_names, .description = "ACK or NACK",
                      .seed = "Thesis 3.11; codes: scaleup"}),
      member(&T::cause, {.name = "cause", .filter = "rdma.ack.cause", .bit = 4, .width = 4,
                       .names = rdma::nack_cause_names, .description = "Why a NACK; 0 in an ACK",
                       .seed = "scaleup"}),
      member(&T::tid, {.name = "TID", .filter = "rdma.ack.tid", .bit = 8, .width = 10,
                     .description = "The block answered: index to the Pending Transactions Table",
                     .seed = "Thesis 3.11"}),
      member(&T::seq, {.name = "sequence number", .filter = "rdma.ack.seq", .bit = 18,
                     .width = 14, .description = "The issue answered",
                     .seed = "Thesis 3.11"}),
      member(&T::block_seq, {.name = "block sequence", .filter = "rdma.ack.block_seq",
                           .bit = 32, .width = 14,
                           .description = "The block answered (its first issue's sequence number)",
                           .seed = "Thesis 5 (retransmission); scaleup"}),
      member(&T::rsvd, {.name = "reserved", .filter = "rdma.ack.rsvd", .bit = 46, .width = 18,
                      .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
      member(&T::dst_coord, {.name = "destination coordinates", .filter = "rdma.ack.dst_coord",
                           .bit = 64, .width = 16,
                           .description = "The block's sender",
                           .seed = "Thesis 3.10 (coordinates); place: scaleup"}),
      member(&T::rsvd2, {.name = "reserved", .filter = "rdma.ack.rsvd2", .bit = 80, .width = 48,
                       .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
  };
  // clang-format on
};

template <>
struct layout<rdma::control_header> {
  using T = rdma::control_header;
  static constexpr std::string_view name = "rdma.ctl";
  static constexpr std::string_view title =
      "ExaJet control packet header (completion notification)";
  static constexpr std::string_view seed = "Thesis 3.2, 3.9.2, 3.10, Terminology; layout: scaleup";
  static constexpr std::size_t size = 16;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::type, {.name = "type", .filter = "rdma.ctl.type", .bit = 0, .width = 4,
                      .names = rdma::packet_type_names, .description = "Control",
                      .seed = "Thesis Terminology; code: scaleup",
                      .check = rule::fixed, .expect = 4}),
      member(&T::rsvd, {.name = "reserved", .filter = "rdma.ctl.rsvd", .bit = 4, .width = 4,
                      .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
      member(&T::tid, {.name = "last TID", .filter = "rdma.ctl.tid", .bit = 8, .width = 10,
                     .description = "TID of the transfer's last block", .seed = "Thesis 3.2"}),
      member(&T::seq, {.name = "last sequence number", .filter = "rdma.ctl.seq", .bit = 18,
                     .width = 14, .description = "Sequence number of the last block's latest issue",
                     .seed = "Thesis 3.2"}),
      member(&T::block_seq, {.name = "last block sequence", .filter = "rdma.ctl.block_seq",
                           .bit = 32, .width = 14,
                           .description = "The last block's identity: the receiver pairs them by it",
                           .seed = "Thesis 3.10, 5; scaleup"}),
      member(&T::blocks, {.name = "total blocks", .filter = "rdma.ctl.blocks", .bit = 46,
                        .width = 18, .description = "Blocks in the transfer",
                        .seed = "Thesis 3.5 (total blocks)"}),
      member(&T::notify_addr, {.name = "notification address", .filter = "rdma.ctl.notify_addr",
                             .bit = 64, .width = 64, .type = kind::hex,
                             .description = "Where the receiver writes the notification; top 16 bits: coordinates",
                             .seed = "Thesis 3.10; scaleup"}),
  };
  // clang-format on
};

template <>
struct layout<rdma::control_payload> {
  using T = rdma::control_payload;
  static constexpr std::string_view name = "rdma.ctl.payload";
  static constexpr std::string_view title = "ExaJet control packet payload";
  static constexpr std::string_view seed = "Thesis 3.10; scaleup";
  static constexpr std::size_t size = 8;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::value, {.name = "notification value", .filter = "rdma.ctl.value", .bit = 0,
                       .width = 64, .type = kind::hex,
                       .description = "From the descriptor's second line",
                       .seed = "Thesis 3.10; scaleup"}),
  };
  // clang-format on
};

template <>
struct layout<rdma::packet_footer> {
  using T = rdma::packet_footer;
  static constexpr std::string_view name = "rdma.ftr";
  static constexpr std::string_view title = "ExaJet packet footer";
  static constexpr std::string_view seed = "Thesis Terminology; layout: scaleup";
  static constexpr std::size_t size = 16;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::src_coord, {.name = "source coordinates", .filter = "rdma.ftr.src_coord",
                           .bit = 0, .width = 16, .description = "The sender: where responses go",
                           .seed = "Thesis 3.10 (coordinates); scaleup"}),
      member(&T::pd, {.name = "protection domain ID", .filter = "rdma.ftr.pd", .bit = 16,
                    .width = 16, .description = "Page of the transfer",
                    .seed = "Thesis 3.3"}),
      member(&T::channel, {.name = "transfer ID", .filter = "rdma.ftr.channel", .bit = 32,
                         .width = 11, .description = "Sender's channel (Transfer Table index)",
                         .seed = "Thesis 3.5"}),
      member(&T::pkts, {.name = "packets in block", .filter = "rdma.ftr.pkts", .bit = 43,
                      .width = 7, .description = "1 to 64 for data; 0 otherwise",
                      .seed = "Thesis 2; scaleup"}),
      member(&T::priority, {.name = "priority", .filter = "rdma.ftr.priority", .bit = 50,
                          .width = 4, .description = "Transfer's intra-priority",
                          .seed = "Thesis 3.5"}),
      member(&T::rsvd, {.name = "reserved", .filter = "rdma.ftr.rsvd", .bit = 54, .width = 42,
                      .description = "Reserved", .seed = "scaleup", .check = rule::reserved}),
      member(&T::crc, {.name = "CRC", .filter = "rdma.ftr.crc", .bit = 96, .width = 32,
                     .type = kind::hex, .description = "CRC-32 over header and payload",
                     .seed = "scaleup; CRC: decisions.md R-CRC"}),
  };
  // clang-format on
};

static_assert(tiles<rdma::data_header>());
static_assert(tiles<rdma::response_header>());
static_assert(tiles<rdma::control_header>());
static_assert(tiles<rdma::control_payload>());
static_assert(tiles<rdma::packet_footer>());

}  // namespace scaleup::wire

namespace scaleup::rdma {

// One packet as values; the payload bytes are the caller's (block data lives in memory).
struct packet {
  packet_type type = packet_type::write;
  data_header data{};          // write, inline_write
  response_header response{};  // ack, nack
  control_header control{};    // control
  packet_footer footer{};
  std::uint16_t payload_len = 0;
  friend constexpr bool operator==(const packet&, const packet&) = default;
};

constexpr std::size_t packet_size(std::size_t payload) noexcept {
  return header_size + payload + footer_size;
}

constexpr bool is_data(packet_type t) noexcept {
  return t == packet_type::write || t == packet_type::inline_write;
}
constexpr bool is_response(packet_type t) noexcept {
  return t == packet_type::ack || t == packet_type::nack;
}

// Header | payload | footer, the footer's CRC computed here. payload.size() must be what the
// header says (a data header's len; 0 for responses; 8 for control).
constexpr wire::result<std::size_t> encode_packet(const packet& p, wire::bytes payload,
                                                  wire::mutable_bytes out) noexcept {
  using wire::errc;
  std::size_t want = 0;
  if (is_data(p.type)) {
    want = p.data.len;
    if (want > max_payload)
      return wire::error{.code = errc::value_too_big,
                         .layer = "rdma.pkt",
                         .offset = 6,
                         .what = "ExaJet payload over 1024 bytes",
                         .field = "rdma.pkt.len",
                         .value = want};
  } else if (p.type == packet_type::control) {
    want = control_payload_size;
  } else if (!is_response(p.type)) {
    return wire::error{.code = errc::bad_value,
                       .layer = "rdma.pkt",
                       .what = "unknown packet type",
                       .field = "rdma.pkt.type",
                       .value = static_cast<std::uint64_t>(p.type)};
  }
  if (payload.size() != want)
    return wire::error{.code = errc::bad_length,
                       .layer = "rdma.pkt",
                       .offset = static_cast<std::uint32_t>(header_size),
                       .needed = static_cast<std::uint32_t>(want),
                       .available = static_cast<std::uint32_t>(payload.size()),
                       .what = "payload length disagrees with the header"};
  const std::size_t n = packet_size(want);
  if (out.size() < n)
    return wire::error{.code = errc::no_space,
                       .layer = "rdma.pkt",
                       .needed = static_cast<std::uint32_t>(n),
                       .available = static_cast<std::uint32_t>(out.size()),
                       .what = "output buffer too small"};
  wire::result<std::size_t> h;
  switch (p.type) {
    case packet_type::write:
    case packet_type::inline_write: {
      data_header d = p.data;
      d.type = static_cast<std::uint8_t>(p.type);
      h = wire::encode(d, out);
      break;
    }
    case packet_type::ack:
    case packet_type::nack: {
      response_header r = p.response;
      r.type = static_cast<std::uint8_t>(p.type);
      h = wire::encode(r, out);
      break;
    }
    case packet_type::control:
      h = wire::encode(p.control, out);
      break;
  }
  if (!h) return h.err;
  for (std::size_t i = 0; i < want; ++i) out[header_size + i] = payload[i];
  packet_footer f = p.footer;
  f.crc = wire::crc32(wire::bytes(out.data(), header_size + want));
  if (const auto r = wire::encode(f, out.subspan(header_size + want)); !r) return r.err;
  return n;
}

// Captures carry one packet per record on a link type of their own, proposed as 149
// (LINKTYPE_USER2, the next private type after AFH Gen 2's 147 and Tofu's 148): the packets
// have no Ethernet framing, and the ExaJet network of the thesis is not Ethernet.
inline constexpr std::uint32_t link_rdma = 149;

// What read_packet found: the packet's fields, its payload, the CRC it should carry, and every
// problem (errors and reserved-bit warnings) in the order found, so a dissector can show all of
// it. Reading stops only when the bytes cannot hold a header and a footer. The inverse of
// encode_packet.
struct received_packet {
  packet p{};
  std::size_t payload_offset = header_size;
  wire::bytes payload{};                        // between header and footer
  std::optional<control_payload> notification;  // a control packet's 8-byte value, when it has it
  std::uint32_t crc_computed = 0;
  bool crc_ok = false;
  wire::error_list<12> errors;
  // Entries of `errors` found before the payload and before the footer: where each problem goes
  // between the parts, for a consumer that shows them together (the dissection tree).
  std::size_t errors_before_payload = 0;
  std::size_t errors_before_footer = 0;

  // No hard error: the packet may be acted on (warnings allowed).
  constexpr bool ok() const noexcept { return errors.ok(); }
  // Whether the header read is one of the known types (else only the type nibble was read).
  constexpr bool known_type() const noexcept {
    return is_data(p.type) || is_response(p.type) || p.type == packet_type::control;
  }
};

constexpr received_packet read_packet(wire::bytes b) noexcept {
  using wire::errc;
  received_packet d;
  const auto report = [&d](const wire::error& e) { d.errors.add(e); };
  if (b.size() < header_size + footer_size) {
    report(wire::truncated("rdma.pkt", 0, header_size + footer_size, b.size(),
                           "shorter than an ExaJet header and footer"));
    return d;
  }
  const std::size_t payload_len = b.size() - header_size - footer_size;
  const std::size_t f = header_size + payload_len;
  const wire::bytes packet_bytes = b.first(f);  // the header may not claim the footer's bytes
  d.p.payload_len = static_cast<std::uint16_t>(payload_len);
  d.payload = b.subspan(header_size, payload_len);
  // The type nibble is the same field in every header; read it through the data table.
  const auto type = wire::view<data_header>::make(b)->get<&data_header::type>();
  d.p.type = static_cast<packet_type>(type);
  std::size_t want = payload_len;
  switch (d.p.type) {
    case packet_type::write:
    case packet_type::inline_write:
      d.p.data = wire::decode_reported<data_header>(packet_bytes, 0, report).value;
      want = d.p.data.len;
      if (want > max_payload)
        report(wire::error{.code = errc::bad_value,
                           .layer = "rdma.pkt",
                           .offset = 6,
                           .what = "payload length over 1024",
                           .field = "rdma.pkt.len",
                           .value = want});
      break;
    case packet_type::ack:
    case packet_type::nack:
      d.p.response = wire::decode_reported<response_header>(packet_bytes, 0, report).value;
      want = 0;
      break;
    case packet_type::control:
      d.p.control = wire::decode_reported<control_header>(packet_bytes, 0, report).value;
      want = control_payload_size;
      break;
    default:
      report(wire::error{.code = errc::bad_value,
                         .layer = "rdma.pkt",
                         .what = "unknown ExaJet packet type",
                         .field = "rdma.pkt.type",
                         .value = type});
      break;
  }
  d.errors_before_payload = d.errors.size();
  if (d.p.type == packet_type::control && payload_len == control_payload_size)
    d.notification =
        wire::decode_reported<control_payload>(packet_bytes, header_size, report).value;
  if (want != payload_len)
    report(wire::error{.code = errc::bad_length,
                       .layer = "rdma.pkt",
                       .offset = static_cast<std::uint32_t>(header_size),
                       .needed = static_cast<std::uint32_t>(want),
                       .available = static_cast<std::uint32_t>(payload_len),
                       .what = "payload length disagrees with the header"});
  d.errors_before_footer = d.errors.size();
  d.p.footer = wire::decode_reported<packet_footer>(b, f, report).value;
  d.crc_computed = wire::crc32(b.first(f));
  d.crc_ok = d.crc_computed == d.p.footer.crc;
  if (!d.crc_ok)
    report(wire::error{.code = errc::bad_checksum,
                       .layer = "rdma.ftr",
                       .offset = static_cast<std::uint32_t>(f + 12),
                       .what = "CRC does not match; value is the CRC over header and payload",
                       .field = "rdma.ftr.crc",
                       .value = d.crc_computed});
  return d;
}

// The names this reader had before the receive path was made uniform.
using decoded_packet = received_packet;
constexpr received_packet decode_packet(wire::bytes b) noexcept { return read_packet(b); }

}  // namespace scaleup::rdma
