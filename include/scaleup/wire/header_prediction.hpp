// read_frame's fast path, header prediction as TCP receivers have done it since Van Jacobson's
// 4.3BSD code: nearly every frame of a fabric or a capture takes one path through the reader
// (receive.hpp) and breaks no rule on it, and on that path the reading is written straight into
// the value, without the bookkeeping that places each problem between the layers it was found
// between. It reads an Ethernet frame, whole and without an FCS, with the same rules as the
// full reader (each header's table, ip.hpp's lengths and checksums, afh_gen1.hpp's shim length,
// pdu.hpp's end of a PDU and of a SUE Lite payload), and leaves the frame to the full reader at
// the first problem of any severity, and at what it does not read: an IP fragment, an IPv6
// extension header, a message of the failover exchange, a UDP flow that the full reader would
// bind as SUE. Where it reads a frame, its value is the full reader's (same_reading), which the
// tests and the read_frame fuzz target check frame by frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/failover.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/received_frame.hpp"
#include "scaleup/wire/reliability_header.hpp"
#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::wire::detail {

class predicted_reader {
 public:
  // `f` holds the frame (f.frame, f.length: no FCS) and nothing read yet.
  constexpr predicted_reader(received_frame& f, const receive_options& o) noexcept
      : f_(f), o_(o), b_(f.frame.first(f.length)) {}

  // False: the frame is the full reader's, and `f` is as it was given.
  constexpr bool ethernet_link() noexcept {
    if (o_.flows_only) return false;
    const afh2_recognition a = o_.afh2_of_ethernet(b_);
    const bool read = a.form != afh2_form::none ? afh2(a) : ethernet();
    if (!read) forget();
    return read;
  }

 private:
  // A problem of any severity: the full reader's to report.
  struct found {
    bool& any;
    constexpr void operator()(const error&) const noexcept { any = true; }
  };

  SCALEUP_ALWAYS_INLINE constexpr void push(layer_kind k, std::size_t offset,
                                            std::size_t length) noexcept {
    f_.layers.set(f_.layer_count++, layer_ref{k, static_cast<std::uint32_t>(offset),
                                              static_cast<std::uint32_t>(length), 0, 0});
  }

  // Header T at b_[at], in a part of the frame that ends at `end` (all of it captured): decoded
  // in place with every rule of its table, recorded as a layer.
  template <class T>
  SCALEUP_ALWAYS_INLINE constexpr bool take(T& into, layer_kind k, std::size_t at,
                                            std::size_t end) noexcept {
    const auto vw = view<T>::make(b_.first(end), at);
    if (!vw) return false;
    vw->read(into);
    bool broken = false;
    (void)report_rules(into, at, found{broken});
    if (broken) return false;
    push(k, at, layout<T>::size);
    return true;
  }
  template <class T>
  SCALEUP_ALWAYS_INLINE constexpr bool take(std::optional<located<T>>& into, layer_kind k,
                                            std::size_t at, std::size_t end) noexcept {
    located<T>& slot = into.emplace();
    slot.offset = at;
    return take(slot.value, k, at, end);
  }

  // What the reader may have written, put back as it was given.
  constexpr void forget() noexcept {
    f_.kind.reset();
    f_.net = carrier::unknown;
    f_.eth.reset();
    f_.vlan_count = 0;
    f_.afh1.reset();
    f_.shim.reset();
    f_.ipv4.reset();
    f_.ipv4_options = {};
    f_.ipv6.reset();
    f_.udp.reset();
    f_.ipv4_checksum = checksum_status::unverified;
    f_.udp_checksum = checksum_status::unverified;
    f_.afh2.reset();
    f_.afh2c.reset();
    f_.afh2_type.reset();
    f_.src_xpu.reset();
    f_.dst_xpu.reset();
    f_.pdu_offset = 0;
    f_.rh.reset();
    f_.payload = {};
    f_.bounds = {};
    f_.layer_count = 0;
  }

  // ---- AFH Gen 2 (R2 3.5.2) --------------------------------------------------------------

  constexpr bool afh2(const afh2_recognition& a) noexcept {
    const std::size_t n = b_.size();
    if (a.form == afh2_form::compressed) {
      f_.kind = encap::afh2c;
      if (!take(f_.afh2c, layer_kind::afh2c, 0, n)) return false;
      f_.src_xpu = f_.afh2c->value.src_xpu;
      f_.dst_xpu = f_.afh2c->value.dst_xpu;
      constexpr std::size_t at = layout<afh2_compressed>::size;
      if (!a.sue_follows) return lite(at);
      return take(f_.afh2_type, layer_kind::afh2_ethertype, at, n) &&
             sue_pdu(at + layout<afh2_ethertype>::size, n, false);
    }
    if (!a.sue_follows) return false;  // another transport: a warning
    f_.kind = encap::afh2;
    if (!take(f_.afh2, layer_kind::afh2, 0, n)) return false;
    f_.src_xpu = f_.afh2->value.src_xpu;
    f_.dst_xpu = f_.afh2->value.dst_xpu;
    constexpr std::size_t at = layout<afh2_normal>::size;
    return take(f_.afh2_type, layer_kind::afh2_ethertype, at, n) &&
           sue_pdu(at + layout<afh2_ethertype>::size, n, false);
  }

  // SUE Lite (R2 3.4): the commands straight after the compressed header; the padding told from
  // them by the commands' boundaries.
  constexpr bool lite(std::size_t at) noexcept {
    f_.kind = encap::lite;
    f_.pdu_offset = at;
    const bytes carried = b_.subspan(at);
    const std::size_t used = packed_length(carried, o_.commands);
    // A first byte with the group bit set, or a payload over the profile's limit: warnings.
    if ((!carried.empty() && (carried[0] & 1u) != 0) || used > sue_lite_max_payload) return false;
    f_.payload = carried.first(used);
    f_.bounds = pdu_bounds{.payload_end = used, .pad = carried.size() - used};
    push(layer_kind::sue_lite, at, used);
    return true;
  }

  // ---- Ethernet, AFH Gen 1 (R2 3.5.1, 3.5.3) ----------------------------------------------

  constexpr bool ethernet() noexcept {
    f_.net = carrier::ethernet;
    const std::size_t n = b_.size();
    if (!take(f_.eth, layer_kind::ethernet, 0, n)) return false;
    std::size_t at = layout<ethernet_header>::size;
    std::uint16_t type = f_.eth->value.type;
    while (is_tag_ethertype(type)) {
      if (f_.vlan_count == received_frame::max_vlan_tags) return false;
      const auto kind = type == ethertype::qinq ? layer_kind::service_tag : layer_kind::vlan;
      vlan_tag t{};
      if (!take(t, kind, at, n)) return false;
      f_.vlan.set(f_.vlan_count++, located<vlan_tag>{t, at});
      at += layout<vlan_tag>::size;
      type = t.type;
    }
    if (type == o_.sue_ethertype || type == o_.shim_ethertype) return afh1(at, type);
    if (type == ethertype::ipv4) return ipv4(at);
    if (type == ethertype::ipv6) return ipv6(at);
    return true;  // a protocol none of SUE's carriers: read
  }

  constexpr bool afh1(std::size_t at, std::uint16_t type) noexcept {
    const std::size_t n = b_.size();
    const bool shim = type == o_.shim_ethertype;
    const bool tagged = f_.vlan_count > 0;
    f_.kind = shim ? (tagged ? encap::afh1_vlan_shim : encap::afh1_shim)
                   : (tagged ? encap::afh1_vlan : encap::afh1);
    if (!take(f_.afh1, layer_kind::afh1, 0, n)) return false;
    f_.src_xpu = f_.afh1->value.src_xpu;
    f_.dst_xpu = f_.afh1->value.dst_xpu;
    if (!shim) return sue_pdu(at, n, false);
    if (!take(f_.shim, layer_kind::afh1_shim, at, n)) return false;
    const afh1_shim& s = f_.shim->value;
    f_.src_xpu = s.src_xpu;
    f_.dst_xpu = s.dst_xpu;
    if (s.next_header != o_.shim_next_sue) return false;  // the failover exchange, or a warning
    bool broken = false;
    const std::size_t end = shim_payload_end(s, n, at, found{broken});
    return !broken && sue_pdu(at + layout<afh1_shim>::size, end, true);
  }

  // ---- IP and UDP (R2 3.5.1, Fig. 11) -----------------------------------------------------

  constexpr bool ipv4(std::size_t at) noexcept {
    f_.net = carrier::ipv4;
    const std::size_t n = b_.size();
    if (!take(f_.ipv4, layer_kind::ipv4, at, n)) return false;
    const ipv4_header& ip = f_.ipv4->value;
    bool broken = false;
    const std::size_t hl = ipv4_header_length(ip, n, at, found{broken});
    if (broken) return false;
    constexpr std::size_t fixed = layout<ipv4_header>::size;
    if (hl > fixed) {
      push(layer_kind::ipv4_options, at + fixed, hl - fixed);
      f_.ipv4_options = b_.subspan(at + fixed, hl - fixed);
    }
    const ip_extent x = ipv4_datagram(ip, b_, n, at, hl, o_.check_checksums, found{broken});
    if (broken || x.fragment) return false;
    f_.ipv4_checksum = x.checksum;
    if (ip.protocol != ip_proto_udp) return true;
    return udp(at + hl, x.end, false);
  }

  // UDP straight after the fixed header; an extension header (a Fragment header among them) is
  // the full reader's.
  constexpr bool ipv6(std::size_t at) noexcept {
    f_.net = carrier::ipv6;
    const std::size_t n = b_.size();
    if (!take(f_.ipv6, layer_kind::ipv6, at, n)) return false;
    const ipv6_header& ip = f_.ipv6->value;
    bool broken = false;
    const ip_extent x = ipv6_datagram(ip, n, at, found{broken});
    if (broken || ip.next_header == ip_proto_ipv6_fragment) return false;
    if (ip.next_header != ip_proto_udp) return true;
    return udp(at + layout<ipv6_header>::size, x.end, true);
  }

  constexpr bool udp(std::size_t at, std::size_t end, bool v6) noexcept {
    f_.net = v6 ? carrier::ipv6_udp : carrier::ipv4_udp;
    if (!take(f_.udp, layer_kind::udp, at, end)) return false;
    const udp_header& u = f_.udp->value;
    bool broken = false;
    const ip_extent x = udp_datagram(u, b_.first(end), end, at, pseudo_header_of(f_, u, v6, o_), v6,
                                     o_.check_checksums, found{broken});
    if (broken || failover_datagram(u, o_)) return false;
    f_.udp_checksum = x.checksum;
    constexpr std::size_t header = layout<udp_header>::size;
    if (!o_.is_sue_port(u.dst_port) && !o_.is_sue_port(u.src_port)) {
      if (!o_.heuristics) return true;  // not SUE
      // SUE by its flow, or by what it carries; a flow not bound yet that carries what passes for
      // a PDU is bound by the full reader.
      if (!o_.flows || !o_.flows->bound(flow_of(f_, u, v6))) {
        if (!plausible_pdu(b_.subspan(at + header, x.end - at - header))) return true;
        if (o_.flows) return false;
      }
    }
    f_.kind = v6 ? encap::udp6 : encap::udp4;
    return sue_pdu(at + header, x.end, true);
  }

  // ---- the PDU ---------------------------------------------------------------------------

  // RH, payload, R-CRC between at and end; `exact` as for the full reader.
  constexpr bool sue_pdu(std::size_t at, std::size_t end, bool exact) noexcept {
    constexpr std::size_t rh_size = layout<reliability_header>::size;
    f_.pdu_offset = at;
    if (!take(f_.rh.emplace(), layer_kind::sue_rh, at, end) || f_.rh->ver != 0) return false;
    const bytes pdu = b_.subspan(at, end - at);
    if (exact)
      pdu_bounds_exact_in(f_.bounds, pdu);
    else
      pdu_bounds_l2_in(f_.bounds, pdu, b_.size(), o_.commands);
    const std::size_t payload = f_.bounds.payload_end - rh_size;
    if (payload > sue_max_payload || f_.bounds.status == rcrc_status::bad) return false;
    const std::size_t kept = payload < pdu.size() - rh_size ? payload : pdu.size() - rh_size;
    f_.payload = pdu.subspan(rh_size, kept);
    f_.layers.set(
        f_.layer_count++,
        layer_ref{layer_kind::sue_payload, static_cast<std::uint32_t>(at + rh_size),
                  static_cast<std::uint32_t>(kept), 0, static_cast<std::uint32_t>(payload - kept)});
    if (f_.bounds.status == rcrc_status::missing) return true;
    const std::size_t crc_at = at + f_.bounds.payload_end;
    push(layer_kind::sue_rcrc, crc_at, rcrc_size);
    if (f_.bounds.pad > 0) push(layer_kind::sue_pad, crc_at + rcrc_size, f_.bounds.pad);
    return true;
  }

  received_frame& f_;
  const receive_options& o_;
  bytes b_;
};

}  // namespace scaleup::wire::detail
