// What every source of the C ABI shares: scaleup.h with its functions exported, and the
// conversions between the C structs and the C++ values they mirror.
#pragma once

#include "scaleup/wire/error.hpp"
#include "scaleup/wire/reliability_header.hpp"

#include <cstddef>
#include <cstdint>

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

}  // namespace scaleup::capi
