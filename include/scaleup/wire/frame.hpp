// Encapsulations: the network header SUE builds from {destination XPU, VC} around a PDU
// (R2 3.5.1, 4.2 step 5) and the SUE Lite frame (R2 3.4, Fig. 10). This is the emit side;
// receive.hpp reads frames back (read_frame).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/pdu.hpp"

namespace scaleup::wire {

enum class encap : std::uint8_t {
  udp4,
  udp6,
  afh1,
  afh1_vlan,
  afh1_shim,
  afh1_vlan_shim,
  afh2,
  afh2c,
  lite,
};

inline constexpr std::array<std::string_view, 9> encap_names{
    "udp4", "udp6", "afh1", "afh1-vlan", "afh1-shim", "afh1-vlan-shim", "afh2", "afh2c", "lite"};

constexpr std::string_view to_string(encap e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < encap_names.size() ? encap_names[i] : std::string_view("unknown");
}

constexpr std::optional<encap> encap_from_string(std::string_view s) noexcept {
  for (std::size_t i = 0; i < encap_names.size(); ++i)
    if (encap_names[i] == s) return static_cast<encap>(i);
  return std::nullopt;
}

// Addresses derived from XPU ids for the standard encapsulation: 10.0.0.0/8 and fd53:5545::/64
// (private and unique-local ranges), MAC 02:00 followed by the 32-bit id. IPv4 has room for
// ids below 2^24 (wrap_in_place refuses larger ones).
inline constexpr std::uint32_t xpu_ipv4_max = 0xFFFFFF;
constexpr std::uint32_t xpu_ipv4(std::uint32_t xpu) noexcept {
  return 0x0A000000u | (xpu & xpu_ipv4_max);
}
constexpr ipv6_address xpu_ipv6(std::uint32_t xpu) noexcept {
  return {0xFD,
          0x53,
          0x55,
          0x45,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          static_cast<std::uint8_t>(xpu >> 24),
          static_cast<std::uint8_t>(xpu >> 16),
          static_cast<std::uint8_t>(xpu >> 8),
          static_cast<std::uint8_t>(xpu)};
}
constexpr std::uint64_t xpu_mac(std::uint32_t xpu) noexcept { return 0x020000000000ull | xpu; }

// The inverses, for a receiver that follows the same addressing plan: the XPU id of an address
// in it, or none. The plan is the caller's choice; read_frame reports addresses as carried.
constexpr std::optional<std::uint32_t> xpu_of_ipv4(std::uint32_t address) noexcept {
  if ((address & ~xpu_ipv4_max) != xpu_ipv4(0)) return std::nullopt;
  return address & xpu_ipv4_max;
}
constexpr std::optional<std::uint32_t> xpu_of_ipv6(const ipv6_address& address) noexcept {
  constexpr ipv6_address plan = xpu_ipv6(0);
  for (std::size_t i = 0; i < 12; ++i)
    if (address[i] != plan[i]) return std::nullopt;
  return load_be32(address.data() + 12);
}

// What the network layer needs to wrap a PDU. Defaults follow decisions.md; each is a
// parameter because a vendor could reasonably differ.
struct frame_params {
  encap kind = encap::udp4;
  std::uint32_t src_xpu = 0;
  std::uint32_t dst_xpu = 0;
  std::uint8_t tc = 0;  // traffic class: the VC unless mapped otherwise
  std::uint16_t udp_src_port = emit_udp_port;
  std::uint16_t udp_dst_port = emit_udp_port;
  bool udp4_checksum = true;  // IPv4 allows 0 = none; IPv6 always has one
  std::uint8_t hop_limit = 64;
  std::uint16_t vlan_id = 1;
  std::uint32_t entropy = 0;  // a flow hash: each header keeps the low bits it has room for
  bool multicast = false;     // AFH Gen 2's M bit; other encapsulations refuse it
  std::uint32_t afh1_prefix = afh1_default_prefix;
  std::uint16_t sue_ethertype = ethertype::sue;
  std::uint16_t shim_ethertype = ethertype::afh1_shim;
  std::uint8_t shim_next_header = shim_next_sue;  // the transport the AFH Gen 1 shim names
  bool pad = true;                                // zero-pad to the 60-byte Ethernet minimum
};

constexpr bool has_vlan(encap e) noexcept {
  return e == encap::afh1_vlan || e == encap::afh1_vlan_shim;
}
constexpr bool has_shim(encap e) noexcept {
  return e == encap::afh1_shim || e == encap::afh1_vlan_shim;
}

// Bytes in front of the carried PDU (or SUE Lite payload).
constexpr std::size_t header_size(encap e) noexcept {
  switch (e) {
    case encap::udp4:
      return 14 + 20 + 8;
    case encap::udp6:
      return 14 + 40 + 8;
    case encap::afh1:
      return 14;
    case encap::afh1_vlan:
      return 18;
    case encap::afh1_shim:
      return 14 + 16;
    case encap::afh1_vlan_shim:
      return 18 + 16;
    case encap::afh2:
      return 12 + 2;
    case encap::afh2c:
      return 6 + 2;
    case encap::lite:
      return 6;
  }
  return 0;
}

namespace detail {

constexpr error frame_error(errc code, std::string_view what, std::size_t needed = 0,
                            std::size_t available = 0) noexcept {
  return error{
      code, "frame", 0, static_cast<std::uint32_t>(needed), static_cast<std::uint32_t>(available),
      what};
}

// Inlined for speed: the error (88 bytes) is then built only where encode refuses, not returned
// and tested for every header.
template <class T>
SCALEUP_SPEED_INLINE constexpr error put(const T& h, mutable_bytes out, std::size_t& at) noexcept {
  const auto r = encode(h, out.subspan(at));
  if (!r) return r.err;
  at += r.value;
  return {};
}

// Calls f(kind) with the encapsulation as a compile-time constant, std::integral_constant<encap,
// K>, which converts to encap: each encapsulation's emitter is then a function of its own, in
// which the compiler decides every test of the kind and inlines each header's encode. Through
// one body for all of them, an afh2c frame took the udp4, AFH Gen 1 and SUE Lite tests, and a
// call returning an 88-byte error per header, to write 8 bytes (valgrind, GCC 12 -O2: 468
// instructions a frame, 308 this way; the hand-written emitter of bench/hand_frames.hpp 264).
// When compiling for size, f(e): one body, as many bytes of code as before (a Cortex-M4
// image took 30 KB more with one body per encapsulation).
template <class F>
SCALEUP_ALWAYS_INLINE constexpr auto with_encap(encap e, F&& f) {
#if SCALEUP_FOR_SPEED
  switch (e) {
    case encap::udp4:
      return f(std::integral_constant<encap, encap::udp4>{});
    case encap::udp6:
      return f(std::integral_constant<encap, encap::udp6>{});
    case encap::afh1:
      return f(std::integral_constant<encap, encap::afh1>{});
    case encap::afh1_vlan:
      return f(std::integral_constant<encap, encap::afh1_vlan>{});
    case encap::afh1_shim:
      return f(std::integral_constant<encap, encap::afh1_shim>{});
    case encap::afh1_vlan_shim:
      return f(std::integral_constant<encap, encap::afh1_vlan_shim>{});
    case encap::afh2:
      return f(std::integral_constant<encap, encap::afh2>{});
    case encap::afh2c:
      return f(std::integral_constant<encap, encap::afh2c>{});
    case encap::lite:
      return f(std::integral_constant<encap, encap::lite>{});
  }
  // A value outside the enum: no header, as header_size() says.
  return f(std::integral_constant<encap, static_cast<encap>(0xFF)>{});
#else
  return f(e);
#endif
}

// wrap_in_place for p's encapsulation, given as `kind` (an encap, or a constant that converts to
// one: with_encap).
template <class Kind>
SCALEUP_SPEED_INLINE constexpr result<std::size_t> wrap_as(Kind kind, const frame_params& p,
                                                           std::size_t inner_len,
                                                           mutable_bytes out) noexcept {
  const encap k = kind;
  const std::size_t hs = header_size(k);
  std::size_t total = hs + inner_len;
  const std::size_t padded = p.pad && total < ethernet_min_frame ? ethernet_min_frame : total;
  if (out.size() < padded)
    return detail::frame_error(errc::no_space, "output buffer too small", padded, out.size());
  if (k == encap::lite && inner_len > sue_lite_max_payload)
    return detail::frame_error(errc::value_too_big, "SUE Lite payload over 1024 bytes");
  // R2 3.4, Fig. 10: a SUE Lite payload starts where a switch reads the source MAC; bit 0 of its
  // first byte is that address's I/G bit, and a source must never look like a group address.
  if (k == encap::lite && inner_len > 0 && (out[hs] & 1u) != 0)
    return detail::frame_error(errc::bad_value,
                               "SUE Lite payload's first byte has bit 0 set: the source MAC a "
                               "switch reads would be a group address");
  // Nothing the caller asked for is dropped: a value with no place in this encapsulation is
  // refused.
  const bool afh2_family = k == encap::afh2 || k == encap::afh2c || k == encap::lite;
  if (p.multicast && !afh2_family)
    return detail::frame_error(errc::unsupported, "only AFH Gen 2 carries a multicast bit");
  if (k == encap::afh1 && p.tc != 0)
    return detail::frame_error(errc::unsupported,
                               "AFH Gen 1 without tag or shim has no traffic class field");
  if (k == encap::udp4 && (p.src_xpu > xpu_ipv4_max || p.dst_xpu > xpu_ipv4_max))
    return detail::frame_error(errc::value_too_big, "XPU id does not fit an IPv4 address");
  std::size_t at = 0;
  error e{};
  switch (k) {
    case encap::udp4:
    case encap::udp6: {
      const bool v6 = k == encap::udp6;
      const std::size_t udp_len = 8 + inner_len;
      if (udp_len > 0xFFFF || (!v6 && udp_len + 20 > 0xFFFF))
        return detail::frame_error(errc::value_too_big, "datagram over 65535 bytes");
      if ((e = detail::put(ethernet_header{xpu_mac(p.dst_xpu), xpu_mac(p.src_xpu),
                                           v6 ? ethertype::ipv6 : ethertype::ipv4},
                           out, at)))
        return e;
      const std::size_t ip_at = at;
      ones_sum pseudo;
      if (v6) {
        if (p.tc > 63) return detail::frame_error(errc::value_too_big, "traffic class over 63");
        ipv6_header ip{};
        ip.tclass = static_cast<std::uint8_t>(p.tc << 2);
        ip.flow = p.entropy & 0xFFFFF;
        ip.payload_length = static_cast<std::uint16_t>(udp_len);
        ip.hop_limit = p.hop_limit;
        ip.src = xpu_ipv6(p.src_xpu);
        ip.dst = xpu_ipv6(p.dst_xpu);
        if ((e = detail::put(ip, out, at))) return e;
        pseudo = udp_pseudo_header(ip, udp_len);
      } else {
        ipv4_header ip{};
        ip.dscp = p.tc;  // encode rejects a class over 63
        ip.total_length = static_cast<std::uint16_t>(20 + udp_len);
        ip.flag_df = 1;
        ip.ttl = p.hop_limit;
        ip.src = xpu_ipv4(p.src_xpu);
        ip.dst = xpu_ipv4(p.dst_xpu);
        if ((e = detail::put(ip, out, at))) return e;
        store_be16(out.data() + ip_at + 10,
                   ones_sum{}.add(bytes(out.data() + ip_at, 20)).checksum());
        pseudo = udp_pseudo_header(ip, udp_len);
      }
      const std::size_t udp_at = at;
      if ((e = detail::put(
               udp_header{p.udp_src_port, p.udp_dst_port, static_cast<std::uint16_t>(udp_len), 0},
               out, at)))
        return e;
      if (v6 || p.udp4_checksum) {
        std::uint16_t c = pseudo.add(bytes(out.data() + udp_at, udp_len)).checksum();
        if (c == 0) c = 0xFFFF;  // RFC 768: a computed zero is sent as all ones
        store_be16(out.data() + udp_at + 6, c);
      }
      break;
    }
    case encap::afh1:
    case encap::afh1_vlan:
    case encap::afh1_shim:
    case encap::afh1_vlan_shim: {
      if (p.src_xpu > 0xFFFF || p.dst_xpu > 0xFFFF)
        return detail::frame_error(errc::value_too_big, "AFH Gen 1 XPU ids are 16 bits");
      const std::uint16_t inner_type = has_shim(k) ? p.shim_ethertype : p.sue_ethertype;
      if ((e = detail::put(afh1_addresses{p.afh1_prefix, static_cast<std::uint16_t>(p.dst_xpu),
                                          p.afh1_prefix, static_cast<std::uint16_t>(p.src_xpu)},
                           out, at)))
        return e;
      if (has_vlan(k)) {
        store_be16(out.data() + at, ethertype::vlan);
        at += 2;
        if ((e = detail::put(vlan_tag{p.tc, 0, p.vlan_id, inner_type}, out, at))) return e;
      } else {
        store_be16(out.data() + at, inner_type);
        at += 2;
      }
      // A prefix whose first octet has AFH Gen 2's signature, with an Ethertype that completes
      // AFH Gen 2's shape, makes a frame every receiver reads as AFH Gen 2 (R2 3.5.2): refused,
      // not sent to be misread.
      if (recognise_afh2(bytes(out.data(), at), false, p.sue_ethertype, p.shim_ethertype).form !=
          afh2_form::none)
        return detail::frame_error(errc::bad_value,
                                   "AFH Gen 1 prefix: its first octet has the AFH Gen 2 signature, "
                                   "and the frame would read as AFH Gen 2");
      if (has_shim(k)) {
        if (inner_len > 0xFFFF)
          return detail::frame_error(errc::value_too_big, "shim length over 65535");
        afh1_shim s{};
        s.tc = p.tc;
        s.hop_limit = p.hop_limit;
        s.length = static_cast<std::uint16_t>(inner_len);
        s.entropy = p.entropy & 0xFFFFF;
        s.src_xpu = p.src_xpu;
        s.dst_xpu = p.dst_xpu;
        s.next_header = p.shim_next_header;
        if ((e = detail::put(s, out, at))) return e;
      }
      break;
    }
    case encap::afh2: {
      afh2_normal h{};
      h.m = p.multicast ? 1 : 0;
      h.hop_count = p.hop_limit;
      h.dst_xpu = p.dst_xpu;
      h.tc = p.tc;
      h.entropy = static_cast<std::uint8_t>(p.entropy);
      h.src_xpu = p.src_xpu;
      if ((e = detail::put(h, out, at))) return e;
      if ((e = detail::put(afh2_ethertype{p.sue_ethertype}, out, at))) return e;
      break;
    }
    case encap::afh2c:
    case encap::lite: {
      if (p.src_xpu > 0xFFFF || p.dst_xpu > 0xFFFF)
        return detail::frame_error(errc::value_too_big, "compressed AFH Gen 2 ids are 16 bits");
      afh2_compressed h{};
      h.m = p.multicast ? 1 : 0;
      h.tc = p.tc;
      h.src_xpu = static_cast<std::uint16_t>(p.src_xpu);
      h.dst_xpu = static_cast<std::uint16_t>(p.dst_xpu);
      if ((e = detail::put(h, out, at))) return e;
      if (k == encap::afh2c && (e = detail::put(afh2_ethertype{p.sue_ethertype}, out, at)))
        return e;
      break;
    }
    default:  // a value outside the enum: no header
      break;
  }
  for (std::size_t i = total; i < padded; ++i) out[i] = 0;
  return padded;
}

}  // namespace detail

// Writes the headers around `inner_len` bytes that the caller already placed at
// out[header_size(p.kind)], fills in lengths and checksums, pads, and returns the frame length.
constexpr result<std::size_t> wrap_in_place(const frame_params& p, std::size_t inner_len,
                                            mutable_bytes out) noexcept {
  return detail::with_encap(p.kind,
                            [&](auto kind) { return detail::wrap_as(kind, p, inner_len, out); });
}

// Wraps arbitrary carried bytes: a PDU built elsewhere, a SUE Lite payload, or a deliberately
// malformed PDU for tests.
constexpr result<std::size_t> emit_frame(const frame_params& p, bytes inner,
                                         mutable_bytes out) noexcept {
  const std::size_t hs = header_size(p.kind);
  if (out.size() < hs + inner.size())
    return detail::frame_error(errc::no_space, "output buffer too small", hs + inner.size(),
                               out.size());
  move_bytes(out.data() + hs, inner.data(), inner.size());
  return wrap_in_place(p, inner.size(), out);
}

// A whole SUE frame: network header, RH, payload, R-CRC, padding. For speed, one function per
// encapsulation (with_encap), into which the PDU's writing and wrap_in_place are inlined.
constexpr result<std::size_t> emit_sue_frame(const frame_params& p, const reliability_header& rh,
                                             bytes payload, mutable_bytes out) noexcept {
  return detail::with_encap(p.kind, [&](auto kind) -> result<std::size_t> {
    const encap k = kind;
    if (k == encap::lite)
      return detail::frame_error(errc::unsupported, "SUE Lite carries no RH (use emit_frame)");
    const std::size_t hs = header_size(k);
    const std::size_t need = hs + pdu_size(payload.size());
    if (payload.size() <= sue_max_payload && out.size() < need)
      return detail::frame_error(errc::no_space, "output buffer too small", need, out.size());
    const auto pdu = emit_pdu(rh, payload, out.subspan(hs < out.size() ? hs : out.size()));
    if (!pdu) return pdu.err;
    return detail::wrap_as(kind, p, pdu.value, out);
  });
}

}  // namespace scaleup::wire
