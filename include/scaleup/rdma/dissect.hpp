// Dissection of bare ExaJet packets (header | payload | footer; exajet_packet.hpp) into the
// format-neutral tree of dissect/tree.hpp, the one the CLI prints and the Wireshark plugin
// walks. Lax, like the other dissectors: what can be decoded is, and every problem found on
// the way is in the tree.
//
// Captures carry one packet per record on a link type of their own, proposed as 149
// (LINKTYPE_USER2, the next private type after AFH Gen 2's 147 and Tofu's 148): the packets
// have no Ethernet framing, and the ExaJet network of the thesis is not Ethernet.
//
// Only dissect/build.hpp and dissect/tree.hpp are included, so that dissect/engine.hpp can
// include this file to serve the link type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/dissect/build.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::rdma {

inline constexpr std::uint32_t link_rdma = 149;  // LINKTYPE_USER2 (proposed)

// Fields the dissector computes rather than reads, described like table fields.
namespace generated {
// clang-format off
inline constexpr std::array<wire::value_name, 2> crc_status_names{{{0, "good"}, {1, "bad"}}};
inline constexpr wire::field_info crc_status{
    .name = "CRC status", .filter = "rdma.ftr.crc.status", .width = 1, .type = wire::kind::label,
    .names = crc_status_names, .description = "Whether the CRC matches header and payload",
    .seed = "scaleup"};
inline constexpr wire::field_info reissue{
    .name = "re-issue", .filter = "rdma.pkt.reissue", .width = 1, .type = wire::kind::flag,
    .description = "Sequence number differs from block sequence: the block sent again",
    .seed = "Thesis 3.13, 5; scaleup"};
inline constexpr wire::field_info payload_len{
    .name = "payload length", .filter = "rdma.payload.len", .width = 11,
    .description = "Bytes between header and footer", .seed = "Thesis Terminology"};
// clang-format on
inline constexpr std::array<const wire::field_info*, 3> all{&crc_status, &reissue, &payload_len};
}  // namespace generated

// One packet. Appends to `t` (the caller clears it and sets frame_length, as
// dissect::dissect_frame does for its link types).
template <class Tree>
constexpr void dissect_packet(Tree& t, wire::bytes b) noexcept {
  using wire::errc;
  t.encap = "rdma";
  const std::size_t n = b.size();
  if (n < header_size + footer_size) {
    dissect::add_problem(t, errc::truncated, "rdma.pkt", 0,
                         "shorter than an ExaJet header and footer", {}, 0,
                         header_size + footer_size, n);
    return;
  }
  const std::size_t f = n - footer_size;
  const std::size_t len = f - header_size;
  // The type nibble is the same field in every header; read it through the data table.
  const auto type =
      static_cast<packet_type>(wire::view<data_header>::make(b)->get<&data_header::type>());
  std::size_t want = len;
  switch (type) {
    case packet_type::write:
    case packet_type::inline_write: {
      const auto h = dissect::add_header<data_header>(t, b, 0, f);
      const auto l = static_cast<std::uint16_t>(t.layer_count - 1);
      dissect::add_generated(t, l, generated::reissue, h->seq != h->block_seq ? 1 : 0);
      want = h->len;
      if (want > max_payload)
        dissect::add_problem(t, errc::bad_value, "rdma.pkt", 6, "payload length over 1024",
                             "rdma.pkt.len", want);
      break;
    }
    case packet_type::ack:
    case packet_type::nack:
      (void)dissect::add_header<response_header>(t, b, 0, f);
      want = 0;
      break;
    case packet_type::control:
      (void)dissect::add_header<control_header>(t, b, 0, f);
      want = control_payload_size;
      break;
    default:
      t.add_layer("rdma.pkt", "ExaJet packet header (unknown type)", 0, header_size);
      dissect::add_problem(t, errc::bad_value, "rdma.pkt", 0, "unknown ExaJet packet type",
                           "rdma.pkt.type", static_cast<std::uint64_t>(type));
      break;
  }
  if (type == packet_type::control && len == control_payload_size) {
    (void)dissect::add_header<control_payload>(t, b, header_size, f);
  } else if (len > 0) {
    const auto l = t.add_layer("rdma.payload", "Payload", header_size, len);
    dissect::add_generated(t, l, generated::payload_len, len);
  }
  if (want != len)
    dissect::add_problem(t, errc::bad_length, "rdma.pkt", header_size,
                         "payload length disagrees with the header", {}, 0, want, len);
  const auto ftr = dissect::add_header<packet_footer>(t, b, f, n);
  const auto l = static_cast<std::uint16_t>(t.layer_count - 1);
  const std::uint32_t crc = wire::crc32(b.first(f));
  const bool good = crc == ftr->crc;
  dissect::add_generated(t, l, generated::crc_status, good ? 0 : 1);
  if (!good)
    dissect::add_problem(t, errc::bad_checksum, "rdma.ftr", f + 12,
                         "CRC does not match; value is the CRC over header and payload",
                         "rdma.ftr.crc", crc);
}

}  // namespace scaleup::rdma
