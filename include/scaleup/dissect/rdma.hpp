// Dissection of bare ExaJet packets (header | payload | footer; rdma/exajet_packet.hpp, link
// type rdma::link_rdma) into the format-neutral tree of dissect/tree.hpp, the one the CLI prints
// and the Wireshark plugin walks. Built from the typed reader rdma::read_packet, which finds
// every problem.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "scaleup/dissect/build.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::dissect {

// Fields the dissector computes rather than reads, described like table fields.
namespace rdma_computed_fields {
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
}  // namespace rdma_computed_fields

// One packet. Appends to `t` (the caller clears it and sets frame_length, as dissect_frame does
// for its link types).
template <class Tree>
constexpr void dissect_rdma_packet(Tree& t, wire::bytes b) noexcept {
  namespace cf = rdma_computed_fields;
  t.encap = "rdma";
  const rdma::received_packet d = rdma::read_packet(b);
  if (b.size() < rdma::header_size + rdma::footer_size) {
    copy_errors(t, d.errors, 0, d.errors.size());
    return;
  }
  const std::size_t f = rdma::header_size + d.payload.size();
  if (rdma::is_data(d.p.type)) {
    const auto l = add_fields(t, b, 0, d.p.data);
    add_generated(t, l, cf::reissue, d.p.data.seq != d.p.data.block_seq ? 1 : 0);
  } else if (rdma::is_response(d.p.type)) {
    add_fields(t, b, 0, d.p.response);
  } else if (d.p.type == rdma::packet_type::control) {
    add_fields(t, b, 0, d.p.control);
  } else {
    t.add_layer("rdma.pkt", "ExaJet packet header (unknown type)", 0, rdma::header_size);
  }
  std::size_t copied = copy_errors(t, d.errors, 0, d.errors_before_payload);
  if (d.notification) {
    add_fields(t, b, rdma::header_size, *d.notification);
  } else if (!d.payload.empty()) {
    const auto l = t.add_layer("rdma.payload", "Payload", rdma::header_size, d.payload.size());
    add_generated(t, l, cf::payload_len, d.payload.size());
  }
  copied = copy_errors(t, d.errors, copied, d.errors_before_footer);
  const auto l = add_fields(t, b, f, d.p.footer);
  add_generated(t, l, cf::crc_status, d.crc_ok ? 0 : 1);
  copy_errors(t, d.errors, copied, d.errors.size());
}

}  // namespace scaleup::dissect
