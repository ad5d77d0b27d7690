// Transfer descriptors: what a processor writes to a write channel to start a transfer
// (Thesis 2, Fig. 2.3; 3.1, Fig. 3.1; 3.6.1).
//
// The thesis gives the sizes (256 or 512 bits, one or two Transfer Table lines), the fields
// (source and destination address, size, priority, completion-notification fields) and two
// rules: a transfer of at most 32 bytes may carry its payload in the descriptor (8 bytes fit
// the short form), and each line holds an "enq to sched FIFO" bit telling the AXI slave whether
// the line is the descriptor's last (Thesis 3.6.1). Its figures with the bit positions are
// lost, so the layout below is this library's:
//
//   line 0, word 0: source address, or payload bytes 0-7 of an inline transfer
//   line 0, word 1: destination address (its top 16 bits are the destination's coordinates)
//   line 0, word 2: size(32) priority(4) inline(1) cm(1) multipath(1) notify(1) rsvd(24)
//   line 0, word 3: rsvd(63) enq(1)
//   line 1 (64-byte forms only):
//     memory transfer with notification: notification address, notification value, rsvd(64),
//       rsvd(63) enq(1)
//     inline transfer of 9-32 bytes: payload bytes 8-31 (three words), rsvd(63) enq(1)
//
// `enq` is the last bit of each line, so the AXI slave finds it without knowing the kind of
// descriptor. Completion-notification fields live in line 1, which the thesis says holds "all
// the control packet fields" (Thesis 3.10); an inline transfer uses line 1 for payload and so
// has no completion notification.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "scaleup/wire/field.hpp"

namespace scaleup::rdma {

// ---- the formats ---------------------------------------------------------------------------

// 32 bytes: a memory-to-memory transfer without completion notification.
struct memory_descriptor {
  std::uint64_t src_addr = 0;
  std::uint64_t dst_addr = 0;
  std::uint32_t size = 0;
  std::uint8_t priority = 0;
  std::uint8_t is_inline = 0;
  std::uint8_t cm = 0;
  std::uint8_t multipath = 0;
  std::uint8_t notify = 0;
  std::uint32_t rsvd = 0;
  std::uint64_t rsvd_w3 = 0;
  std::uint8_t enq = 1;
  friend constexpr bool operator==(const memory_descriptor&, const memory_descriptor&) = default;
};

// 64 bytes: a memory-to-memory transfer with completion notification.
struct memory_descriptor_notify {
  std::uint64_t src_addr = 0;
  std::uint64_t dst_addr = 0;
  std::uint32_t size = 0;
  std::uint8_t priority = 0;
  std::uint8_t is_inline = 0;
  std::uint8_t cm = 0;
  std::uint8_t multipath = 0;
  std::uint8_t notify = 1;
  std::uint32_t rsvd = 0;
  std::uint64_t rsvd_w3 = 0;
  std::uint8_t enq = 0;
  std::uint64_t notify_addr = 0;
  std::uint64_t notify_value = 0;
  std::uint64_t rsvd_w6 = 0;
  std::uint64_t rsvd_w7 = 0;
  std::uint8_t enq1 = 1;
  friend constexpr bool operator==(const memory_descriptor_notify&,
                                   const memory_descriptor_notify&) = default;
};

// 32 bytes: inline payload of at most 8 bytes.
struct inline_descriptor {
  std::uint64_t payload = 0;  // bytes 0-7, first byte most significant
  std::uint64_t dst_addr = 0;
  std::uint32_t size = 0;
  std::uint8_t priority = 0;
  std::uint8_t is_inline = 1;
  std::uint8_t cm = 0;
  std::uint8_t multipath = 0;
  std::uint8_t notify = 0;
  std::uint32_t rsvd = 0;
  std::uint64_t rsvd_w3 = 0;
  std::uint8_t enq = 1;
  friend constexpr bool operator==(const inline_descriptor&, const inline_descriptor&) = default;
};

// 64 bytes: inline payload of 9 to 32 bytes.
struct inline_descriptor_long {
  std::uint64_t payload = 0;
  std::uint64_t dst_addr = 0;
  std::uint32_t size = 0;
  std::uint8_t priority = 0;
  std::uint8_t is_inline = 1;
  std::uint8_t cm = 0;
  std::uint8_t multipath = 0;
  std::uint8_t notify = 0;
  std::uint32_t rsvd = 0;
  std::uint64_t rsvd_w3 = 0;
  std::uint8_t enq = 0;
  std::uint64_t payload_w4 = 0;  // bytes 8-15
  std::uint64_t payload_w5 = 0;  // bytes 16-23
  std::uint64_t payload_w6 = 0;  // bytes 24-31
  std::uint64_t rsvd_w7 = 0;
  std::uint8_t enq1 = 1;
  friend constexpr bool operator==(const inline_descriptor_long&,
                                   const inline_descriptor_long&) = default;
};

namespace detail {

using wire::field_info;
using wire::rule;

// One entry per field shared by the four forms, so each bit position is written once.
// clang-format off
inline constexpr field_info desc_src{.name = "source address", .filter = "rdma.desc.src_addr",
    .bit = 0, .width = 64, .type = wire::kind::hex,
    .description = "Where the RDMA engine reads the data", .seed = "Thesis 2; place: scaleup"};
inline constexpr field_info desc_payload{.name = "payload", .filter = "rdma.desc.payload",
    .bit = 0, .width = 64, .type = wire::kind::hex,
    .description = "Inline payload bytes 0-7 (in place of the source address)",
    .seed = "Thesis 2, Fig. 2.3; place: scaleup"};
inline constexpr field_info desc_dst{.name = "destination address", .filter = "rdma.desc.dst_addr",
    .bit = 64, .width = 64, .type = wire::kind::hex,
    .description = "Where the data goes; top 16 bits: destination coordinates",
    .seed = "Thesis 2, 3.10; place: scaleup"};
inline constexpr field_info desc_size{.name = "size", .filter = "rdma.desc.size", .bit = 128,
    .width = 32, .description = "Transfer size in bytes (1 to 4 GiB - 1)",
    .seed = "Thesis 2 (up to 4 GB per channel)"};
inline constexpr field_info desc_priority{.name = "priority", .filter = "rdma.desc.priority",
    .bit = 160, .width = 4, .description = "Intra-priority, 0 served first",
    .seed = "Thesis 2, Fig. 2.4, 3.9.1"};
inline constexpr field_info desc_inline_mem{.name = "inline", .filter = "rdma.desc.inline",
    .bit = 164, .width = 1, .type = wire::kind::flag,
    .description = "0: the payload is in memory", .seed = "Thesis 2, Fig. 2.3",
    .check = rule::fixed, .expect = 0};
inline constexpr field_info desc_inline_inl{.name = "inline", .filter = "rdma.desc.inline",
    .bit = 164, .width = 1, .type = wire::kind::flag,
    .description = "1: the payload is in the descriptor", .seed = "Thesis 2, Fig. 2.3",
    .check = rule::fixed, .expect = 1};
inline constexpr field_info desc_cm{.name = "congestion managed", .filter = "rdma.desc.cm",
    .bit = 165, .width = 1, .type = wire::kind::flag,
    .description = "Blocks go in flows (FIDs) under congestion management",
    .seed = "Thesis 3.8, 3.9.1"};
inline constexpr field_info desc_cm_inl{.name = "congestion managed", .filter = "rdma.desc.cm",
    .bit = 165, .width = 1, .type = wire::kind::flag,
    .description = "Inline transfers take the TID-only queue", .seed = "Thesis 3.9.1",
    .check = rule::fixed, .expect = 0};
inline constexpr field_info desc_mp{.name = "multipath", .filter = "rdma.desc.multipath",
    .bit = 166, .width = 1, .type = wire::kind::flag,
    .description = "Congestion managed over 4 FIDs (4xFID)", .seed = "Thesis 2, 3.8"};
inline constexpr field_info desc_mp_inl{.name = "multipath", .filter = "rdma.desc.multipath",
    .bit = 166, .width = 1, .type = wire::kind::flag,
    .description = "Inline transfers are not congestion managed", .seed = "Thesis 3.9.1",
    .check = rule::fixed, .expect = 0};
inline constexpr field_info desc_notify_off{.name = "notify", .filter = "rdma.desc.notify",
    .bit = 167, .width = 1, .type = wire::kind::flag,
    .description = "0: no completion notification (the 32-byte form has no room for one)",
    .seed = "Thesis 2, 3.10", .check = rule::fixed, .expect = 0};
inline constexpr field_info desc_notify_on{.name = "notify", .filter = "rdma.desc.notify",
    .bit = 167, .width = 1, .type = wire::kind::flag,
    .description = "1: a control packet signals the receiver at the end",
    .seed = "Thesis 2, 3.10", .check = rule::fixed, .expect = 1};
inline constexpr field_info desc_rsvd{.name = "reserved", .filter = "rdma.desc.rsvd", .bit = 168,
    .width = 24, .description = "Reserved", .seed = "scaleup", .check = rule::reserved};
inline constexpr field_info desc_rsvd_w3{.name = "reserved", .filter = "rdma.desc.rsvd_w3",
    .bit = 192, .width = 63, .description = "Reserved", .seed = "scaleup",
    .check = rule::reserved};
inline constexpr field_info desc_enq_last{.name = "enq to sched FIFO", .filter = "rdma.desc.enq",
    .bit = 255, .width = 1, .type = wire::kind::flag,
    .description = "1: last line; writing it enqueues the transfer",
    .seed = "Thesis 3.6.1, Fig. 3.1", .check = rule::fixed, .expect = 1};
inline constexpr field_info desc_enq_more{.name = "enq to sched FIFO", .filter = "rdma.desc.enq",
    .bit = 255, .width = 1, .type = wire::kind::flag,
    .description = "0: a second line follows", .seed = "Thesis 3.6.1, Fig. 3.1",
    .check = rule::fixed, .expect = 0};
inline constexpr field_info desc_enq1{.name = "enq to sched FIFO", .filter = "rdma.desc.enq",
    .bit = 511, .width = 1, .type = wire::kind::flag,
    .description = "1: last line; writing it enqueues the transfer",
    .seed = "Thesis 3.6.1, Fig. 3.1", .check = rule::fixed, .expect = 1};
// clang-format on

}  // namespace detail
}  // namespace scaleup::rdma

namespace scaleup::wire {

template <>
struct layout<rdma::memory_descriptor> {
  using T = rdma::memory_descriptor;
  static constexpr std::string_view name = "rdma.desc";
  static constexpr std::string_view title = "RDMA transfer descriptor, memory, 32 bytes";
  static constexpr std::string_view seed = "Thesis 2, Fig. 2.3; 3.1; layout: scaleup";
  static constexpr std::size_t size = 32;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::src_addr, rdma::detail::desc_src),
      member(&T::dst_addr, rdma::detail::desc_dst),
      member(&T::size, rdma::detail::desc_size),
      member(&T::priority, rdma::detail::desc_priority),
      member(&T::is_inline, rdma::detail::desc_inline_mem),
      member(&T::cm, rdma::detail::desc_cm),
      member(&T::multipath, rdma::detail::desc_mp),
      member(&T::notify, rdma::detail::desc_notify_off),
      member(&T::rsvd, rdma::detail::desc_rsvd),
      member(&T::rsvd_w3, rdma::detail::desc_rsvd_w3),
      member(&T::enq, rdma::detail::desc_enq_last),
  };
  // clang-format on
};

template <>
struct layout<rdma::memory_descriptor_notify> {
  using T = rdma::memory_descriptor_notify;
  static constexpr std::string_view name = "rdma.desc";
  static constexpr std::string_view title =
      "RDMA transfer descriptor, memory with notification, 64 bytes";
  static constexpr std::string_view seed = "Thesis 2, Fig. 2.3; 3.1, 3.10; layout: scaleup";
  static constexpr std::size_t size = 64;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::src_addr, rdma::detail::desc_src),
      member(&T::dst_addr, rdma::detail::desc_dst),
      member(&T::size, rdma::detail::desc_size),
      member(&T::priority, rdma::detail::desc_priority),
      member(&T::is_inline, rdma::detail::desc_inline_mem),
      member(&T::cm, rdma::detail::desc_cm),
      member(&T::multipath, rdma::detail::desc_mp),
      member(&T::notify, rdma::detail::desc_notify_on),
      member(&T::rsvd, rdma::detail::desc_rsvd),
      member(&T::rsvd_w3, rdma::detail::desc_rsvd_w3),
      member(&T::enq, rdma::detail::desc_enq_more),
      member(&T::notify_addr, {.name = "notification address", .filter = "rdma.desc.notify_addr",
                             .bit = 256, .width = 64, .type = kind::hex,
                             .description = "Where the receiver writes the completion notification",
                             .seed = "Thesis 2, 3.10; place: scaleup"}),
      member(&T::notify_value, {.name = "notification value", .filter = "rdma.desc.notify_value",
                              .bit = 320, .width = 64, .type = kind::hex,
                              .description = "What the notification says (the control packet's payload)",
                              .seed = "Thesis 3.10; content: scaleup"}),
      member(&T::rsvd_w6, {.name = "reserved", .filter = "rdma.desc.rsvd_w6", .bit = 384,
                         .width = 64, .description = "Reserved", .seed = "scaleup",
                         .check = rule::reserved}),
      member(&T::rsvd_w7, {.name = "reserved", .filter = "rdma.desc.rsvd_w7", .bit = 448,
                         .width = 63, .description = "Reserved", .seed = "scaleup",
                         .check = rule::reserved}),
      member(&T::enq1, rdma::detail::desc_enq1),
  };
  // clang-format on
};

template <>
struct layout<rdma::inline_descriptor> {
  using T = rdma::inline_descriptor;
  static constexpr std::string_view name = "rdma.desc";
  static constexpr std::string_view title = "RDMA transfer descriptor, inline, 32 bytes";
  static constexpr std::string_view seed = "Thesis 2, Fig. 2.3; 3.1; layout: scaleup";
  static constexpr std::size_t size = 32;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::payload, rdma::detail::desc_payload),
      member(&T::dst_addr, rdma::detail::desc_dst),
      member(&T::size, rdma::detail::desc_size),
      member(&T::priority, rdma::detail::desc_priority),
      member(&T::is_inline, rdma::detail::desc_inline_inl),
      member(&T::cm, rdma::detail::desc_cm_inl),
      member(&T::multipath, rdma::detail::desc_mp_inl),
      member(&T::notify, rdma::detail::desc_notify_off),
      member(&T::rsvd, rdma::detail::desc_rsvd),
      member(&T::rsvd_w3, rdma::detail::desc_rsvd_w3),
      member(&T::enq, rdma::detail::desc_enq_last),
  };
  // clang-format on
};

template <>
struct layout<rdma::inline_descriptor_long> {
  using T = rdma::inline_descriptor_long;
  static constexpr std::string_view name = "rdma.desc";
  static constexpr std::string_view title = "RDMA transfer descriptor, inline, 64 bytes";
  static constexpr std::string_view seed = "Thesis 2, Fig. 2.3; 3.1, 3.6.1; layout: scaleup";
  static constexpr std::size_t size = 64;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::payload, rdma::detail::desc_payload),
      member(&T::dst_addr, rdma::detail::desc_dst),
      member(&T::size, rdma::detail::desc_size),
      member(&T::priority, rdma::detail::desc_priority),
      member(&T::is_inline, rdma::detail::desc_inline_inl),
      member(&T::cm, rdma::detail::desc_cm_inl),
      member(&T::multipath, rdma::detail::desc_mp_inl),
      member(&T::notify, rdma::detail::desc_notify_off),
      member(&T::rsvd, rdma::detail::desc_rsvd),
      member(&T::rsvd_w3, rdma::detail::desc_rsvd_w3),
      member(&T::enq, rdma::detail::desc_enq_more),
      member(&T::payload_w4, {.name = "payload (cont.)", .filter = "rdma.desc.payload_w4",
                            .bit = 256, .width = 64, .type = kind::hex,
                            .description = "Inline payload bytes 8-15",
                            .seed = "Thesis 2, 3.1, Fig. 3.4; place: scaleup"}),
      member(&T::payload_w5, {.name = "payload (cont.)", .filter = "rdma.desc.payload_w5",
                            .bit = 320, .width = 64, .type = kind::hex,
                            .description = "Inline payload bytes 16-23",
                            .seed = "Thesis 2, 3.1, Fig. 3.4; place: scaleup"}),
      member(&T::payload_w6, {.name = "payload (cont.)", .filter = "rdma.desc.payload_w6",
                            .bit = 384, .width = 64, .type = kind::hex,
                            .description = "Inline payload bytes 24-31",
                            .seed = "Thesis 2, 3.1, Fig. 3.4; place: scaleup"}),
      member(&T::rsvd_w7, {.name = "reserved", .filter = "rdma.desc.rsvd_w7", .bit = 448,
                         .width = 63, .description = "Reserved", .seed = "scaleup",
                         .check = rule::reserved}),
      member(&T::enq1, rdma::detail::desc_enq1),
  };
  // clang-format on
};

static_assert(tiles<rdma::memory_descriptor>());
static_assert(tiles<rdma::memory_descriptor_notify>());
static_assert(tiles<rdma::inline_descriptor>());
static_assert(tiles<rdma::inline_descriptor_long>());

}  // namespace scaleup::wire

namespace scaleup::rdma {

// ---- the transfer as a value ---------------------------------------------------------------

inline constexpr std::size_t short_inline_max = 8;  // what the 32-byte form holds (Thesis 3.1)
inline constexpr std::size_t inline_max = 32;       // Thesis 2

// What a descriptor says, whichever form it takes; what the engine is posted.
struct transfer {
  std::uint64_t src = 0;  // unused when is_inline
  std::uint64_t dst = 0;
  std::uint32_t size = 0;
  std::uint8_t priority = 0;
  bool is_inline = false;
  bool cm = false;
  bool multipath = false;
  bool notify = false;
  std::uint64_t notify_addr = 0;
  std::uint64_t notify_value = 0;
  std::array<std::uint8_t, inline_max> payload{};  // the first `size` bytes, when is_inline
  friend constexpr bool operator==(const transfer&, const transfer&) = default;
};

// 32 or 64 bytes: the form a transfer needs.
constexpr std::size_t descriptor_size(const transfer& t) noexcept {
  if (t.is_inline) return t.size <= short_inline_max ? 32 : 64;
  return t.notify ? 64 : 32;
}

namespace detail {

// Inline payload words are the payload bytes in order, the first byte most significant, so the
// descriptor's bytes on the bus are the payload's bytes.
constexpr std::uint64_t word_of(const std::array<std::uint8_t, inline_max>& p,
                                std::size_t at) noexcept {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < 8; ++i) w = (w << 8) | p[at + i];
  return w;
}

constexpr void put_word(std::array<std::uint8_t, inline_max>& p, std::size_t at,
                        std::uint64_t w) noexcept {
  for (std::size_t i = 0; i < 8; ++i) p[at + i] = static_cast<std::uint8_t>(w >> (56 - 8 * i));
}

template <class D>
constexpr void fill_line0(D& d, const transfer& t) noexcept {
  d.dst_addr = t.dst;
  d.size = t.size;
  d.priority = t.priority;
  d.cm = t.cm ? 1 : 0;
  d.multipath = t.multipath ? 1 : 0;
}

template <class D>
constexpr void read_line0(const D& d, transfer& t) noexcept {
  t.dst = d.dst_addr;
  t.size = d.size;
  t.priority = d.priority;
  t.cm = d.cm != 0;
  t.multipath = d.multipath != 0;
  t.notify = d.notify != 0;
}

}  // namespace detail

// Writes the descriptor bytes of t (32 or 64). Refuses what no form can carry.
constexpr wire::result<std::size_t> emit_descriptor(const transfer& t,
                                                    wire::mutable_bytes out) noexcept {
  if (t.is_inline && (t.size > inline_max || t.cm || t.multipath || t.notify))
    return wire::error{.code = wire::errc::value_too_big,
                       .layer = "rdma.desc",
                       .what = "inline transfers carry at most 32 bytes, no flow, no notification",
                       .field = "rdma.desc.size",
                       .value = t.size};
  if (t.is_inline && t.size <= short_inline_max) {
    inline_descriptor d;
    detail::fill_line0(d, t);
    d.payload = detail::word_of(t.payload, 0);
    return wire::encode(d, out);
  }
  if (t.is_inline) {
    inline_descriptor_long d;
    detail::fill_line0(d, t);
    d.payload = detail::word_of(t.payload, 0);
    d.payload_w4 = detail::word_of(t.payload, 8);
    d.payload_w5 = detail::word_of(t.payload, 16);
    d.payload_w6 = detail::word_of(t.payload, 24);
    return wire::encode(d, out);
  }
  if (t.notify) {
    memory_descriptor_notify d;
    detail::fill_line0(d, t);
    d.src_addr = t.src;
    d.notify_addr = t.notify_addr;
    d.notify_value = t.notify_value;
    return wire::encode(d, out);
  }
  memory_descriptor d;
  detail::fill_line0(d, t);
  d.src_addr = t.src;
  return wire::encode(d, out);
}

// Reads a descriptor: the inline bit and line 0's enq bit pick the form. Errors say what and
// where; a descriptor that decodes with only reserved-bit warnings is returned as ok.
constexpr wire::result<transfer> parse_descriptor(wire::bytes in) noexcept {
  const auto line0 = wire::view<memory_descriptor>::make(in);
  if (!line0) return line0.err;
  const bool is_inline = line0->get<&memory_descriptor::is_inline>() != 0;
  const bool two_lines = line0->get<&memory_descriptor::enq>() == 0;
  transfer t;
  t.is_inline = is_inline;
  if (is_inline && !two_lines) {
    const auto d = wire::decode<inline_descriptor>(in);
    if (!d) return d.err;
    detail::read_line0(*d, t);
    detail::put_word(t.payload, 0, d->payload);
    if (t.size > short_inline_max)
      return {t, wire::error{.code = wire::errc::bad_length,
                             .layer = "rdma.desc",
                             .offset = 16,
                             .what = "a 32-byte inline descriptor holds at most 8 bytes",
                             .field = "rdma.desc.size",
                             .value = t.size}};
    return t;
  }
  if (is_inline) {
    const auto d = wire::decode<inline_descriptor_long>(in);
    if (!d) return d.err;
    detail::read_line0(*d, t);
    detail::put_word(t.payload, 0, d->payload);
    detail::put_word(t.payload, 8, d->payload_w4);
    detail::put_word(t.payload, 16, d->payload_w5);
    detail::put_word(t.payload, 24, d->payload_w6);
    if (t.size > inline_max)
      return {t, wire::error{.code = wire::errc::bad_length,
                             .layer = "rdma.desc",
                             .offset = 16,
                             .what = "inline payload is at most 32 bytes",
                             .field = "rdma.desc.size",
                             .value = t.size}};
    return t;
  }
  if (two_lines) {
    const auto d = wire::decode<memory_descriptor_notify>(in);
    if (!d) return d.err;
    detail::read_line0(*d, t);
    t.src = d->src_addr;
    t.notify_addr = d->notify_addr;
    t.notify_value = d->notify_value;
    return t;
  }
  const auto d = wire::decode<memory_descriptor>(in);
  if (!d) return d.err;
  detail::read_line0(*d, t);
  t.src = d->src_addr;
  return t;
}

}  // namespace scaleup::rdma
