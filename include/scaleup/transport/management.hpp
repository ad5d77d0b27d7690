// The management interface's packet path (R2 3.1): "the control interface can be used to send and
// receive packets. The XPU builds the full packet with SUE adding the Ethernet FCS. This transport
// is unreliable. It supports rates up to 10K packets per second."
//
// So: the XPU hands SUE a whole Ethernet frame without FCS; SUE appends the FCS (CRC-32, as IEEE
// 802.3 sends it: least significant byte first) and sends it, once. Nothing is acknowledged or
// retransmitted. The rate is held to the limit by a token bucket (pure: time is an input): a
// packet offered without a token is refused with an error, not queued, since an unreliable path
// has no promise to keep it. The bucket's depth (a burst allowance) is scaleup's choice: 16
// packets by default. On receipt SUE checks and strips the FCS and hands the frame up; a frame
// whose FCS fails is dropped and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/pdu.hpp"

namespace scaleup::transport {

struct management_config {
  std::uint32_t packets_per_second = 10'000;  // R2 3.1
  std::uint32_t burst = 16;                   // tokens the bucket holds
};

struct management_port {
  std::uint64_t tokens_milli = 0;  // thousandths of a packet, so refills stay integral
  std::uint64_t last = 0;          // ns of the last refill
  bool started = false;
  std::uint64_t sent = 0, refused = 0, received = 0, bad_fcs = 0;
};

inline constexpr std::size_t fcs_size = 4;

namespace detail {
constexpr management_port refill(management_port p, std::uint64_t now,
                                 const management_config& c) noexcept {
  const std::uint64_t cap = std::uint64_t{c.burst} * 1000;
  if (!p.started) {
    p.started = true;
    p.tokens_milli = cap;
  } else if (now > p.last) {
    // packets_per_second x 1000 milli-tokens each, per 1e9 ns.
    const std::uint64_t add = (now - p.last) * c.packets_per_second / 1'000'000;
    p.tokens_milli = p.tokens_milli + add > cap ? cap : p.tokens_milli + add;
  }
  p.last = now > p.last ? now : p.last;
  return p;
}
}  // namespace detail

struct management_send {
  management_port port;
  wire::result<std::size_t> frame;  // bytes written to `out` (frame + FCS), or why not sent
};

// The XPU offers `frame` (Ethernet header onwards, no FCS) at `now`; SUE writes it with its FCS
// to `out` if the rate allows.
constexpr management_send send_management(management_port p, wire::bytes frame,
                                          wire::mutable_bytes out, std::uint64_t now,
                                          const management_config& c = {}) noexcept {
  p = detail::refill(p, now, c);
  if (frame.size() < 14)
    return {p, wire::error{.code = wire::errc::truncated,
                           .layer = "eth",
                           .needed = 14,
                           .available = static_cast<std::uint32_t>(frame.size()),
                           .what = "a management packet starts with its Ethernet header"}};
  if (out.size() < frame.size() + fcs_size)
    return {p, wire::error{.code = wire::errc::no_space,
                           .layer = "eth",
                           .needed = static_cast<std::uint32_t>(frame.size() + fcs_size),
                           .available = static_cast<std::uint32_t>(out.size()),
                           .what = "output buffer too small"}};
  if (p.tokens_milli < 1000) {
    ++p.refused;
    return {p, wire::error{.code = wire::errc::no_space,
                           .layer = "mgmt",
                           .what = "over the management interface's packet rate (R2 3.1)"}};
  }
  p.tokens_milli -= 1000;
  ++p.sent;
  for (std::size_t i = 0; i < frame.size(); ++i) out[i] = frame[i];
  const std::uint32_t fcs = wire::crc32(frame);
  for (std::size_t i = 0; i < fcs_size; ++i)
    out[frame.size() + i] = static_cast<std::uint8_t>(fcs >> (8 * i));
  return {p, frame.size() + fcs_size};
}

struct management_receive {
  management_port port;
  wire::result<std::size_t> frame;  // length of the frame handed up (FCS stripped)
};

// A frame with its FCS arrived on the management path: checked, stripped, counted.
constexpr management_receive receive_management(management_port p, wire::bytes frame) noexcept {
  if (frame.size() < 14 + fcs_size) {
    ++p.bad_fcs;
    return {p, wire::error{.code = wire::errc::truncated,
                           .layer = "eth",
                           .needed = 14 + fcs_size,
                           .available = static_cast<std::uint32_t>(frame.size()),
                           .what = "shorter than an Ethernet header and FCS"}};
  }
  const std::size_t n = frame.size() - fcs_size;
  std::uint32_t fcs = 0;
  for (std::size_t i = 0; i < fcs_size; ++i) fcs |= std::uint32_t{frame[n + i]} << (8 * i);
  if (wire::crc32(frame.first(n)) != fcs) {
    ++p.bad_fcs;
    return {p, wire::error{.code = wire::errc::bad_checksum,
                           .layer = "eth.fcs",
                           .offset = static_cast<std::uint32_t>(n),
                           .what = "FCS does not match: dropped (the path is unreliable)"}};
  }
  ++p.received;
  return {p, n};
}

}  // namespace scaleup::transport
