// The SUE PDU: RH, packed payload, R-CRC (R2 3.3, Fig. 9). The RH has no length, so where a
// PDU ends is the carrier's business (decisions.md "R-CRC and the end of a PDU").
#pragma once

#include <cstddef>
#include <cstdint>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::wire {

inline constexpr std::size_t rcrc_size = 4;
inline constexpr std::size_t sue_max_payload = 4096;       // R2 3.3: "up to 4096 bytes"
inline constexpr std::size_t sue_lite_max_payload = 1024;  // R2 3.4: "up to 1K bytes"
inline constexpr std::size_t ethernet_min_frame = 60;      // without the FCS

constexpr std::size_t pdu_size(std::size_t payload) noexcept {
  return layout<reliability_header>::size + payload + rcrc_size;
}

// Writes RH, payload and the R-CRC (CRC-32 over RH and payload, big-endian). Inlined for speed:
// a caller's own checks (emit_sue_frame's room for the frame) then cover these, and its result
// (an 88-byte error, zeroed on success) is not stored and read back.
SCALEUP_SPEED_INLINE constexpr result<std::size_t> emit_pdu(const reliability_header& rh,
                                                            bytes payload,
                                                            mutable_bytes out) noexcept {
  if (payload.size() > sue_max_payload)
    return error{errc::value_too_big,
                 "sue",
                 0,
                 static_cast<std::uint32_t>(sue_max_payload),
                 static_cast<std::uint32_t>(payload.size()),
                 "SUE payload over 4096 bytes"};
  const std::size_t n = pdu_size(payload.size());
  if (out.size() < n)
    return error{errc::no_space,
                 "sue",
                 0,
                 static_cast<std::uint32_t>(n),
                 static_cast<std::uint32_t>(out.size()),
                 "output buffer too small"};
  if (const auto r = encode(rh, out); !r) return r.err;
  // One block move, not a loop of bytes (five instructions a byte: a third of the instructions
  // of emitting a udp4 frame of 64 bytes); a move, since a payload may already be in place
  // (the transport endpoint's stored PDUs are stamped so).
  move_bytes(out.data() + 8, payload.data(), payload.size());
  store_be32(out.data() + 8 + payload.size(), crc32(bytes(out.data(), 8 + payload.size())));
  return n;
}

// The R-CRC as a one-field header, so that it is described like every other field.
struct rcrc_trailer {
  std::uint32_t value = 0;
  friend constexpr bool operator==(const rcrc_trailer&, const rcrc_trailer&) = default;
};

template <>
struct layout<rcrc_trailer> {
  using T = rcrc_trailer;
  static constexpr std::string_view name = "sue.rcrc";
  static constexpr std::string_view title = "SUE R-CRC";
  static constexpr std::string_view seed = "R2 3.3, Fig. 9";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::value, {.name = "R-CRC", .filter = "sue.rcrc", .bit = 0, .width = 32,
                       .type = kind::hex,
                       .description = "CRC-32 (ISO-HDLC) over RH and payload, big-endian",
                       .seed = "R2 3.3; algorithm: decisions.md"}),
  };
  // clang-format on
};
static_assert(tiles<rcrc_trailer>());

// not_captured: the PDU on the wire is longer than the capture kept (a snapshot length), so
// the R-CRC cannot be checked; no fault of the PDU (docs/wire-format.md, "Snapshot length").
enum class rcrc_status : std::uint8_t { good, bad, missing, not_captured };

constexpr std::string_view to_string(rcrc_status s) noexcept {
  switch (s) {
    case rcrc_status::good:
      return "good";
    case rcrc_status::bad:
      return "bad";
    case rcrc_status::missing:
      return "missing";
    case rcrc_status::not_captured:
      return "not_captured";
  }
  return "missing";
}

// Where the R-CRC sits in a carrier payload that holds one PDU, and what it says.
// payload_end: bytes from the start of the PDU to the R-CRC (RH + packed payload).
// pad: zero bytes after the R-CRC (Layer 2 padding to the minimum frame).
struct pdu_bounds {
  std::size_t payload_end = 0;
  std::size_t pad = 0;
  rcrc_status status = rcrc_status::missing;
  std::uint32_t rcrc = 0;      // as found on the wire
  std::uint32_t computed = 0;  // over RH and payload
};

// The carrier gives the exact PDU length (UDP, the AFH Gen 1 shim): the last four bytes are
// the R-CRC. A PDU of just an RH has none ("missing"): what captures by peers without R-CRC
// contain. Written into `b` field by field: a reader that keeps the bounds in a larger value (a
// received_frame) writes them in place, where assigning a returned pdu_bounds would read it back
// with wide loads of the narrow stores just made, which wait for those stores (a stall a frame).
SCALEUP_SPEED_INLINE constexpr void pdu_bounds_exact_in(pdu_bounds& b, bytes pdu) noexcept {
  b.pad = 0;
  if (pdu.size() < 8 + rcrc_size) {
    b.payload_end = pdu.size();
    b.status = rcrc_status::missing;
    b.rcrc = 0;
    b.computed = 0;
    return;
  }
  const std::size_t end = pdu.size() - rcrc_size;
  const std::uint32_t sent = load_be32(pdu.data() + end);
  const std::uint32_t computed = crc32(pdu.first(end));
  b.payload_end = end;
  b.rcrc = sent;
  b.computed = computed;
  b.status = sent == computed ? rcrc_status::good : rcrc_status::bad;
}

constexpr pdu_bounds pdu_bounds_exact(bytes pdu) noexcept {
  pdu_bounds b;
  pdu_bounds_exact_in(b, pdu);
  return b;
}

// A PDU of `wire_size` bytes on the wire of which the capture kept fewer: where its R-CRC is
// by the carrier's length (the last four bytes, as pdu_bounds_exact), not checked. Below an RH
// and an R-CRC there is none ("missing"), as for a whole PDU.
constexpr pdu_bounds pdu_bounds_not_captured(std::size_t wire_size) noexcept {
  if (wire_size < layout<reliability_header>::size + rcrc_size)
    return pdu_bounds{.payload_end = wire_size};
  return pdu_bounds{.payload_end = wire_size - rcrc_size, .status = rcrc_status::not_captured};
}

// A command profile's framing, as wire/ needs it without including pack/ (a layer above): where
// each command packed in a payload ends. pack/receive.hpp implements it from a profile
// (pack::profile_boundaries); read_frame takes it in receive_options. Commands are
// self-delimiting (decisions.md "Commands inside a PDU"), and only a profile knows their sizes.
class command_boundaries {
 public:
  // Bytes of the command that starts at at[0] (`at` runs to the end of the payload and is not
  // empty), or 0 when none does: a type the profile lacks (padding's type 0 included), or a
  // command cut off.
  virtual constexpr std::size_t command_size(bytes at) const noexcept = 0;

 protected:
  constexpr command_boundaries() = default;
  constexpr command_boundaries(const command_boundaries&) = default;
  constexpr command_boundaries& operator=(const command_boundaries&) = default;
  constexpr ~command_boundaries() = default;
};

constexpr bool all_zero(bytes b) noexcept {
  for (const std::uint8_t x : b)
    if (x != 0) return false;
  return true;
}

namespace detail {
// pdu_bounds_l2's search for the R-CRC before the padding of a minimum-size frame.
constexpr pdu_bounds pdu_bounds_padded(bytes pdu, const command_boundaries* commands) noexcept {
  constexpr std::size_t rh = layout<reliability_header>::size;
  if (commands) {
    std::uint32_t running = crc32_update(crc32_init, pdu.first(rh));
    for (std::size_t pos = rh; pos + rcrc_size <= pdu.size();) {
      const std::uint32_t want = crc32_final(running);
      if (all_zero(pdu.subspan(pos + rcrc_size)) && load_be32(pdu.data() + pos) == want)
        return pdu_bounds{pos, pdu.size() - pos - rcrc_size, rcrc_status::good, want, want};
      const std::size_t size = commands->command_size(pdu.subspan(pos));
      if (size == 0) break;
      running = crc32_update(running, pdu.subspan(pos, size));
      pos += size;
    }
  }
  std::size_t last_nonzero = pdu.size();
  while (last_nonzero > 0 && pdu[last_nonzero - 1] == 0) --last_nonzero;
  std::size_t first = last_nonzero >= rcrc_size ? last_nonzero - rcrc_size : 0;
  if (first < rh) first = rh;
  std::uint32_t running = crc32_update(crc32_init, pdu.first(first));
  for (std::size_t end = first; end + rcrc_size <= pdu.size(); ++end) {
    if (end > first) running = crc32_update(running, pdu.subspan(end - 1, 1));
    const std::uint32_t want = crc32_final(running);
    if (load_be32(pdu.data() + end) == want)
      return pdu_bounds{end, pdu.size() - end - rcrc_size, rcrc_status::good, want, want};
  }
  return pdu_bounds_exact(pdu);  // no candidate matched: report the last four bytes as bad
}
}  // namespace detail

// The PDU runs to the end of a Layer 2 frame, FCS already removed. When the frame is at the
// 60-byte minimum the sender may have padded with zeros after the R-CRC: the R-CRC is then at
// the first boundary where the running CRC matches and only zeros follow (decisions.md "R-CRC
// and the end of a PDU"). With `commands` the boundaries are those of the packed commands;
// without them, or when the commands do not parse, every byte boundary is a candidate.
// frame_len: the whole frame's length, to know whether padding was possible. Written into `b`
// (as pdu_bounds_exact_in): in place for every frame over the minimum, nearly every frame.
SCALEUP_SPEED_INLINE constexpr void pdu_bounds_l2_in(pdu_bounds& b, bytes pdu,
                                                     std::size_t frame_len,
                                                     const command_boundaries* commands) noexcept {
  if (frame_len > ethernet_min_frame || pdu.size() < layout<reliability_header>::size + rcrc_size)
    pdu_bounds_exact_in(b, pdu);
  else
    b = detail::pdu_bounds_padded(pdu, commands);
}

constexpr pdu_bounds pdu_bounds_l2(bytes pdu, std::size_t frame_len,
                                   const command_boundaries* commands = nullptr) noexcept {
  pdu_bounds b;
  pdu_bounds_l2_in(b, pdu, frame_len, commands);
  return b;
}

// How many bytes of a packed payload that runs to the end of a Layer 2 frame are commands: the
// rest is zero padding that starts at a command boundary (a minimum-size frame; the SUE Lite
// profile has no R-CRC to end it). Without `commands`, or when they do not parse, all of it.
constexpr std::size_t packed_length(bytes payload, const command_boundaries* commands) noexcept {
  if (!commands) return payload.size();
  std::size_t pos = 0;
  while (pos < payload.size() && !all_zero(payload.subspan(pos))) {
    const std::size_t size = commands->command_size(payload.subspan(pos));
    if (size == 0) return payload.size();
    pos += size;
  }
  return pos;
}

// The RH's own test, without the R-CRC: version 0 and the reserved bits zero (R2 3.3, Fig. 7).
// Eight bits of evidence: alone it confirms nothing (a random datagram passes one time in 256).
constexpr bool plausible_rh(bytes payload) noexcept {
  if (payload.size() < layout<reliability_header>::size) return false;
  const auto rh = view<reliability_header>::make(payload).value;
  return rh.get<&reliability_header::ver>() == 0 && rh.get<&reliability_header::rsv>() == 0 &&
         rh.get<&reliability_header::rsvd>() == 0;
}

// Whether bytes on a UDP port not taken for SUE pass for a PDU (the heuristic of decisions.md
// "Network headers"): version 0, reserved bits zero, R-CRC good.
constexpr bool plausible_pdu(bytes payload) noexcept {
  return payload.size() >= layout<reliability_header>::size + rcrc_size && plausible_rh(payload) &&
         pdu_bounds_exact(payload).status == rcrc_status::good;
}

}  // namespace scaleup::wire
