// What a SUE receiver (an instance, a switch) needs of a frame, read once through wire's typed
// receive path (wire::read_frame, the reader the dissector builds its trees from): where it is
// going and where from, the SUE PDU it carries with the R-CRC's verdict, a SUE Lite payload, or
// that it is none of these (a PFC frame, a control message of the instance's failover exchange,
// a management packet).
//
// The destination is what the frame carries: AFH Gen 1 and Gen 2 carry XPU ids; over IP the
// addresses are mapped with the library's addressing plan (wire::addressing_plan), the map its
// frames are written with. SUE over UDP is on the port the sender writes (named to the reader,
// so that a corrupted PDU is still read as one, its R-CRC then bad).
//
// The control messages of the failover exchange ride in a carrier that names their transport
// (wire/failover.hpp); the frame reader finds them, and a SUE PDU's reader sees no SUE in them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "scaleup/wire/failover.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/receive.hpp"
#include "scaleup/wire/xpu_map.hpp"

namespace scaleup::transport {

inline constexpr std::uint16_t mac_control_type = 0x8808;  // PFC frames (IEEE 802.3 31.4.1.3)

struct sue_frame {
  std::optional<wire::encap> kind;       // none: no SUE PDU or SUE Lite payload this reader knows
  std::optional<std::uint32_t> src_xpu;  // from the frame's addressing
  std::optional<std::uint32_t> dst_xpu;
  std::optional<wire::reliability_header> rh;
  wire::bytes payload{};  // the packed commands: between RH and R-CRC, or SUE Lite's
  wire::rcrc_status status = wire::rcrc_status::missing;
  std::uint8_t tc = 0;           // the traffic class the carrier has (AFH Gen 2, shim, IP, PCP)
  std::uint16_t ether_type = 0;  // after any VLAN tags (0: none read)
  wire::bytes control{};         // a control message of the failover exchange, if that is it

  // What a receiver accepts as a PDU (the receive API's rule): an RH whose R-CRC is good.
  constexpr bool good() const noexcept { return rh && status == wire::rcrc_status::good; }
  constexpr bool lite() const noexcept { return kind == wire::encap::lite; }

  // The same reading of the same frame: the spans view the same bytes.
  friend constexpr bool operator==(const sue_frame& a, const sue_frame& b) noexcept {
    const auto same = [](wire::bytes x, wire::bytes y) {
      return x.size() == y.size() && (x.empty() || x.data() == y.data());
    };
    return a.kind == b.kind && a.src_xpu == b.src_xpu && a.dst_xpu == b.dst_xpu && a.rh == b.rh &&
           same(a.payload, b.payload) && a.status == b.status && a.tc == b.tc &&
           a.ether_type == b.ether_type && same(a.control, b.control);
  }
};

// The receive options an instance reads with: its own UDP port named, no guessing by content
// (a frame that is not on the port is not SUE), Ethernet frames without an FCS.
constexpr wire::receive_options sue_receive_options(std::uint16_t udp_port = wire::emit_udp_port) {
  wire::receive_options o;
  o.add_udp_port(udp_port);
  o.heuristics = false;
  o.fcs = wire::fcs_mode::absent;
  return o;
}

namespace detail {

// What an IP header gives a receiver: the XPUs its addresses map to (where the frame carries no
// XPU ids of its own) and the traffic class (the DSCP).
SCALEUP_ALWAYS_INLINE constexpr void from_ip(sue_frame& r, const wire::ipv4_header& ip) noexcept {
  if (!r.dst_xpu) r.dst_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v4(ip.dst));
  if (!r.src_xpu) r.src_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v4(ip.src));
  r.tc = ip.dscp;
}
SCALEUP_ALWAYS_INLINE constexpr void from_ip(sue_frame& r, const wire::ipv6_header& ip) noexcept {
  if (!r.dst_xpu) r.dst_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v6(ip.dst));
  if (!r.src_xpu) r.src_xpu = wire::addressing_plan.xpu_of(wire::ip_address::v6(ip.src));
  r.tc = static_cast<std::uint8_t>(ip.tclass >> 2);
}

// What a receiver takes of the full reading.
constexpr sue_frame project(const wire::received_frame& rf) noexcept {
  sue_frame r;
  r.src_xpu = rf.src_xpu;
  r.dst_xpu = rf.dst_xpu;
  if (rf.ipv4)
    from_ip(r, rf.ipv4->value);
  else if (rf.ipv6)
    from_ip(r, rf.ipv6->value);
  if (rf.shim) r.tc = rf.shim->value.tc;
  if (rf.afh2) r.tc = rf.afh2->value.tc;
  if (rf.afh2c) r.tc = rf.afh2c->value.tc;
  if (rf.vlan_count > 0) r.tc = rf.vlan[0].value.pcp;
  if (rf.eth) {
    r.ether_type = rf.eth->value.type;
    if (rf.vlan_count > 0) r.ether_type = rf.vlan[rf.vlan_count - 1].value.type;
  }
  // A control message of the failover exchange, as the reader found it.
  if (rf.failover) {
    r.control = rf.frame.subspan(rf.failover->offset, wire::layout<wire::failover_message>::size);
    return r;
  }
  if (rf.kind) {
    r.kind = rf.kind;
    r.rh = rf.rh;
    r.status = rf.bounds.status;
    r.payload = rf.payload;
  }
  return r;
}

// The fast path (header prediction, as TCP receivers have done it since Van Jacobson's 4.3BSD
// code): the frames a fabric carries nearly always take one path through the reader (a named UDP
// port, no FCS to look for, nothing cut or broken), and on it a receiver needs a handful of
// fields, not every header decoded with its place and every problem listed. This reads that path
// with the same rules (each header's table, ip.hpp's lengths, afh_gen1.hpp's shim length,
// pdu.hpp's end of a PDU and of a SUE Lite payload) and gives up, leaving the frame to the full
// reader, at anything else: an IPv6 extension header, an IP fragment, a rule of error severity
// broken, a message of the failover exchange, a port not named, an FCS found. Where it reads a
// frame its answer is the full reader's (project(read_frame(...))), which the tests and the
// read_frame fuzz target check frame by frame.
class fast_reader {
 public:
  constexpr fast_reader(wire::bytes f, const wire::receive_options& o) noexcept : b_(f), o_(o) {}

  // False: not read here.
  SCALEUP_ALWAYS_INLINE constexpr bool read(sue_frame& r) noexcept {
    if (o_.flows_only || o_.fcs == wire::fcs_mode::present) return false;
    // An FCS the full reader would find changes the frame's length: left to it.
    if (o_.fcs == wire::fcs_mode::detect && wire::detail::may_end_in_fcs(b_, o_) &&
        wire::find_fcs(b_, o_.fcs).present)
      return false;
    const auto a = o_.afh2_of_ethernet(b_);
    if (a.form != wire::afh2_form::none) return afh2(a, r);
    wire::ethernet_header eth;
    if (!take(b_, 0, eth)) return false;
    std::size_t at = wire::layout<wire::ethernet_header>::size;
    std::uint16_t type = eth.type;
    // Tags (802.1Q, 802.1ad) in a row: the first one's priority is the traffic class, the last
    // one's Ethertype says what follows.
    std::size_t tags = 0;
    std::uint8_t pcp = 0;
    while (wire::is_tag_ethertype(type)) {
      wire::vlan_tag t;
      if (tags == wire::received_frame::max_vlan_tags || !take(b_, at, t)) return false;
      if (tags++ == 0) pcp = t.pcp;
      at += wire::layout<wire::vlan_tag>::size;
      type = t.type;
    }
    r.ether_type = type;
    bool read = true;  // a protocol none of SUE's carriers (a PFC frame) is its Ethertype
    if (type == o_.sue_ethertype || type == o_.shim_ethertype)
      read = afh1(at, type, tags > 0, r);
    else if (type == wire::ethertype::ipv4)
      read = ipv4(at, r);
    else if (type == wire::ethertype::ipv6)
      read = ipv6(at, r);
    if (tags > 0) r.tc = pcp;
    return read;
  }

 private:
  // Header T at b[at], when it is all there and breaks no rule of error severity.
  template <class T>
  static constexpr bool take(wire::bytes b, std::size_t at, T& out) noexcept {
    const auto vw = wire::view<T>::make(b, at);
    if (!vw) return false;
    vw->read(out);
    return wire::holds_rules(out);
  }

  // A report callback that notes whether a problem of error severity was found.
  struct sink {
    bool& broken;
    constexpr void operator()(const wire::error& e) const noexcept {
      if (e.level == wire::severity::error) broken = true;
    }
  };

  SCALEUP_ALWAYS_INLINE constexpr bool afh2(const wire::afh2_recognition& a,
                                            sue_frame& r) noexcept {
    if (a.form == wire::afh2_form::compressed)
      return a.sue_follows ? afh2<wire::afh2_compressed>(wire::encap::afh2c, r) : lite(r);
    // A normal header naming another transport: the full reader's.
    return a.sue_follows && afh2<wire::afh2_normal>(wire::encap::afh2, r);
  }

  // An AFH Gen 2 header of form H at the frame's start: the encapsulation it begins, its XPU
  // ids and traffic class.
  template <class H>
  SCALEUP_ALWAYS_INLINE constexpr bool afh2_header(wire::encap kind, sue_frame& r) noexcept {
    H h;
    if (!take(b_, 0, h)) return false;
    r.kind = kind;
    r.src_xpu = h.src_xpu;
    r.dst_xpu = h.dst_xpu;
    r.tc = h.tc;
    return true;
  }

  // SUE Lite (R2 3.4): the commands straight after the compressed header, no RH, no R-CRC;
  // the padding to the minimum frame told from them by the commands' boundaries.
  SCALEUP_ALWAYS_INLINE constexpr bool lite(sue_frame& r) noexcept {
    if (!afh2_header<wire::afh2_compressed>(wire::encap::lite, r)) return false;
    const wire::bytes carried = b_.subspan(wire::layout<wire::afh2_compressed>::size);
    r.payload = carried.first(wire::packed_length(carried, o_.commands));
    return true;
  }
  // Either form of the header, its Ethertype (SUE's), the PDU to the end of the frame.
  template <class H>
  SCALEUP_ALWAYS_INLINE constexpr bool afh2(wire::encap kind, sue_frame& r) noexcept {
    if (!afh2_header<H>(kind, r)) return false;
    constexpr std::size_t at = wire::layout<H>::size;
    wire::afh2_ethertype type;
    if (!take(b_, at, type)) return false;
    return pdu(at + wire::layout<wire::afh2_ethertype>::size, b_.size(), false, r);
  }

  SCALEUP_ALWAYS_INLINE constexpr bool afh1(std::size_t at, std::uint16_t type, bool tagged,
                                            sue_frame& r) noexcept {
    // The addresses' rules stop nothing in the full reader: their ids are taken as they are.
    const auto addr = wire::view<wire::afh1_addresses>::make(b_);
    r.src_xpu = addr->get<&wire::afh1_addresses::src_xpu>();
    r.dst_xpu = addr->get<&wire::afh1_addresses::dst_xpu>();
    if (type != o_.shim_ethertype) {
      r.kind = tagged ? wire::encap::afh1_vlan : wire::encap::afh1;
      return pdu(at, b_.size(), false, r);
    }
    wire::afh1_shim s;
    if (!take(b_, at, s) || s.next_header != o_.shim_next_sue) return false;
    r.kind = tagged ? wire::encap::afh1_vlan_shim : wire::encap::afh1_shim;
    r.src_xpu = s.src_xpu;
    r.dst_xpu = s.dst_xpu;
    r.tc = s.tc;
    bool broken = false;
    const std::size_t end = wire::shim_payload_end(s, b_.size(), at, sink{broken});
    return !broken && pdu(at + wire::layout<wire::afh1_shim>::size, end, true, r);
  }

  constexpr bool ipv4(std::size_t at, sue_frame& r) noexcept {
    wire::ipv4_header ip;
    if (!take(b_, at, ip)) return false;
    bool broken = false;
    const std::size_t hl = wire::ipv4_header_length(ip, b_.size(), at, sink{broken});
    if (broken) return false;
    // The checksums are no part of what a receiver is given: not computed here.
    const wire::ip_extent x = wire::ipv4_datagram(ip, b_, b_.size(), at, hl, false, sink{broken});
    if (broken || !x.usable || x.fragment || ip.protocol != wire::ip_proto_udp) return false;
    r.kind = wire::encap::udp4;
    from_ip(r, ip);
    return udp(at + hl, x.end, false, r);
  }

  // UDP directly after the fixed header (a Fragment header or another extension header is
  // the full reader's).
  constexpr bool ipv6(std::size_t at, sue_frame& r) noexcept {
    wire::ipv6_header ip;
    if (!take(b_, at, ip)) return false;
    bool broken = false;
    const wire::ip_extent x = wire::ipv6_datagram(ip, b_.size(), at, sink{broken});
    if (broken || ip.next_header != wire::ip_proto_udp) return false;
    r.kind = wire::encap::udp6;
    from_ip(r, ip);
    return udp(at + wire::layout<wire::ipv6_header>::size, x.end, true, r);
  }

  // A UDP header at `at` in an IP datagram that ends at `end`, on a port named as SUE's: guessing
  // by content, and the failover exchange's port, are the full reader's.
  SCALEUP_ALWAYS_INLINE constexpr bool udp(std::size_t at, std::size_t end, bool v6,
                                           sue_frame& r) noexcept {
    wire::udp_header u;
    if (!take(b_.first(end), at, u)) return false;
    bool broken = false;
    const wire::ip_extent y =
        wire::udp_datagram(u, b_.first(end), end, at, wire::ones_sum{}, v6, false, sink{broken});
    if (broken || !y.usable || (!o_.is_sue_port(u.dst_port) && !o_.is_sue_port(u.src_port)))
      return false;
    return pdu(at + wire::layout<wire::udp_header>::size, y.end, true, r);
  }

  // RH, payload, R-CRC between at and end, all captured; `exact` as for the full reader.
  SCALEUP_ALWAYS_INLINE constexpr bool pdu(std::size_t at, std::size_t end, bool exact,
                                           sue_frame& r) noexcept {
    constexpr std::size_t rh_size = wire::layout<wire::reliability_header>::size;
    if (end > b_.size() || at > end || end - at < rh_size) return false;
    const wire::bytes p = b_.subspan(at, end - at);
    // The RH's rules stop nothing either: a receiver is given it as carried.
    wire::view<wire::reliability_header>::make(p)->read(r.rh.emplace());
    wire::pdu_bounds bounds;
    if (exact)
      wire::pdu_bounds_exact_in(bounds, p);
    else
      wire::pdu_bounds_l2_in(bounds, p, b_.size(), o_.commands);
    const std::size_t payload = bounds.payload_end - rh_size;
    r.payload = p.subspan(rh_size, payload < p.size() - rh_size ? payload : p.size() - rh_size);
    r.status = bounds.status;
    return true;
  }

  wire::bytes b_;
  const wire::receive_options& o_;
};

}  // namespace detail

// A frame read by the fast path, or nothing when it leaves the frame to the full reader.
constexpr std::optional<sue_frame> read_sue_frame_fast(wire::bytes f,
                                                       const wire::receive_options& o) noexcept {
  sue_frame r;
  if (!detail::fast_reader(f, o).read(r)) return std::nullopt;
  return r;
}

// A frame as a receiver reads it (Ethernet, no FCS or one `o` says how to find).
constexpr sue_frame read_sue_frame(wire::bytes f, const wire::receive_options& o) noexcept {
  // Built where the caller keeps it (one object returned on every path): a copy of an object
  // just written field by field reads it back with wide loads of narrow stores, a stall.
  sue_frame r;
  if (!detail::fast_reader(f, o).read(r))
    r = detail::project(wire::read_frame(f, wire::link_ethernet, o));
  return r;
}

}  // namespace scaleup::transport
