// What every source of the C ABI shares: scaleup.h with its functions exported, and the
// conversions between the C structs and the C++ values they mirror.
#pragma once

#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/reliability_header.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

// The library is compiled with hidden visibility: only what scaleup.h declares is exported
// (the version script says the same for the linker).
#pragma GCC visibility push(default)
#include "scaleup/scaleup.h"
#pragma GCC visibility pop

namespace scaleup::capi {

static_assert(static_cast<int>(wire::errc::unreachable) == SCALEUP_ERRC_UNREACHABLE);
static_assert(static_cast<int>(wire::severity::note) == SCALEUP_SEVERITY_NOTE);

// A C buffer as a span; a null pointer is an empty buffer whatever its length says, so that a
// C caller's (NULL, n) cannot be read.
inline wire::bytes in(const std::uint8_t* p, std::size_t n) noexcept {
  return p ? wire::bytes(p, n) : wire::bytes();
}
inline wire::mutable_bytes out(std::uint8_t* p, std::size_t n) noexcept {
  return p ? wire::mutable_bytes(p, n) : wire::mutable_bytes();
}

inline scaleup_error to_c(const wire::error& e) noexcept {
  scaleup_error c{};
  c.code = static_cast<std::uint8_t>(e.code);
  c.level = static_cast<std::uint8_t>(e.level);
  c.layer = e.layer.data();
  c.layer_len = e.layer.size();
  c.offset = e.offset;
  c.needed = e.needed;
  c.available = e.available;
  c.what = e.what.data();
  c.what_len = e.what.size();
  c.field = e.field.data();
  c.field_len = e.field.size();
  c.value = e.value;
  c.item = e.item;
  return c;
}

// The RH crosses most calls (headers, PDUs, frames): one pair of copies for all.
inline wire::reliability_header to_cpp(const scaleup_rh& c) noexcept {
  return {c.ver, c.op, c.rsv, c.xpuid, c.npsn, c.vc, c.rsvd, c.partition, c.apsn};
}
inline scaleup_rh to_c(const wire::reliability_header& v) noexcept {
  return {v.ver, v.op, v.rsv, v.xpuid, v.npsn, v.vc, v.rsvd, v.partition, v.apsn};
}

// The int a C function returns for `e`, with the whole error to *err when asked (a success
// clears it, so that a caller never reads a stale error).
inline int report(const wire::error& e, scaleup_error* err) noexcept {
  if (err) *err = to_c(e);
  return static_cast<int>(e.code);
}

// An encapsulation the C++ enum does not have cannot be cast to it: refused before.
inline bool known_encap(int encap) noexcept { return encap >= 0 && encap < SCALEUP_ENCAP_COUNT; }
inline wire::error unknown_encap(int encap) noexcept {
  return wire::error{.code = wire::errc::unsupported,
                     .layer = "frame",
                     .what = "unknown encapsulation",
                     .field = "encap",
                     .value = static_cast<std::uint64_t>(encap)};
}

// The caller checks known_encap(c.encap) first.
inline wire::frame_params to_cpp(const scaleup_frame_params& c) noexcept {
  wire::frame_params p;
  p.kind = static_cast<wire::encap>(c.encap);
  p.src_xpu = c.src_xpu;
  p.dst_xpu = c.dst_xpu;
  p.tc = c.tc;
  p.udp_src_port = c.udp_src_port;
  p.udp_dst_port = c.udp_dst_port;
  p.udp4_checksum = c.udp4_checksum;
  p.hop_limit = c.hop_limit;
  p.vlan_id = c.vlan_id;
  p.entropy = c.entropy;
  p.multicast = c.multicast;
  p.afh1_prefix = c.afh1_prefix;
  p.sue_ethertype = c.sue_ethertype;
  p.shim_ethertype = c.shim_ethertype;
  p.shim_next_header = c.shim_next_header;
  p.pad = c.pad;
  return p;
}

inline scaleup_frame_params to_c(const wire::frame_params& p) noexcept {
  scaleup_frame_params c{};
  c.encap = static_cast<std::uint8_t>(p.kind);
  c.src_xpu = p.src_xpu;
  c.dst_xpu = p.dst_xpu;
  c.tc = p.tc;
  c.udp_src_port = p.udp_src_port;
  c.udp_dst_port = p.udp_dst_port;
  c.udp4_checksum = p.udp4_checksum;
  c.hop_limit = p.hop_limit;
  c.vlan_id = p.vlan_id;
  c.entropy = p.entropy;
  c.multicast = p.multicast;
  c.afh1_prefix = p.afh1_prefix;
  c.sue_ethertype = p.sue_ethertype;
  c.shim_ethertype = p.shim_ethertype;
  c.shim_next_header = p.shim_next_header;
  c.pad = p.pad;
  return c;
}

inline transport::gbn_config to_cpp(const scaleup_gbn_config& c) noexcept {
  return {c.window, c.rto, c.max_retries, c.ack_every, c.ack_delay};
}
inline scaleup_gbn_config to_c(const transport::gbn_config& c) noexcept {
  return {c.window, c.rto, c.max_retries, c.ack_every, c.ack_delay};
}

// ---- objects built in the caller's memory ----

// Room for a T and for aligning it inside storage of any alignment.
template <class T>
constexpr std::size_t room_for() noexcept {
  return sizeof(T) + alignof(T) - 1;
}

// A T built in storage[0, size), aligned inside it; null when it does not fit.
template <class T, class... A>
T* place(void* storage, std::size_t size, A&&... args) noexcept {
  void* at = storage;
  std::size_t room = size;
  // Strictly what the size function says, not what a given alignment happens to leave room for:
  // storage that fits today by its alignment would not after a change of the caller's layout.
  if (!storage || size < room_for<T>() || !std::align(alignof(T), sizeof(T), at, room))
    return nullptr;
  return ::new (at) T{std::forward<A>(args)...};
}

// What a refused init says when the storage is too small.
inline wire::error no_room(std::string_view layer, std::size_t needed,
                           std::size_t available) noexcept {
  return wire::error{.code = wire::errc::no_space,
                     .layer = layer,
                     .needed = static_cast<std::uint32_t>(needed),
                     .available = static_cast<std::uint32_t>(available),
                     .what = "storage smaller than the object's size function says"};
}

}  // namespace scaleup::capi
