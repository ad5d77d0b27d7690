// The typed receive path: a frame's bytes and its link type in, a typed value out. The inverse of
// emit_sue_frame and emit_frame (frame.hpp): the encapsulation found, each network header as
// decoded with its place in the frame, the XPU ids where the frame carries them, the RH, the
// packed payload, the R-CRC's verdict, the padding, the FCS, and every problem found on the way
// (lax: what could be read is, and the error that stopped the reading is the last one).
//
// The rules applied live with their formats: IPv4, IPv6 and UDP lengths and checksums in ip.hpp,
// AFH Gen 1's shim length in afh_gen1.hpp, AFH Gen 2 recognition in afh_gen2.hpp, the FCS in
// ethernet.hpp, the end of a PDU in pdu.hpp. This file only chains them, by link type first
// (one table, link_readers) and then by what each header says comes next. A whole Ethernet
// frame without an FCS is offered first to the fast path (header_prediction.hpp), which reads the
// path nearly every frame takes and gives the same value.
//
// Consumers below dissect/ read frames only through read_frame; the dissection tree
// (dissect/engine.hpp) is built from its value. A receiver accepts a PDU when
// `f.rh && f.bounds.status == rcrc_status::good` (received_frame::accepted).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/bsd_loopback.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/failover.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/header_prediction.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/ip_fragment.hpp"
#include "scaleup/wire/linux_sll.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/received_frame.hpp"
#include "scaleup/wire/reliability_header.hpp"
#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::wire {

namespace detail {

// One frame's reading: each step reads one header (or the PDU) and goes on to what it says
// follows. Headers are read from `b_`, the frame without its FCS.
class frame_reader {
 public:
  // `wire`: how long the frame is on the wire without its FCS; b_ holds what was captured of it.
  // Every `end` below is on the wire: the bytes present end at min(end, b_.size()).
  constexpr frame_reader(received_frame& f, const receive_options& o, std::size_t wire) noexcept
      : f_(f), o_(o), b_(f.frame.first(f.length)), w_(wire > f.length ? wire : f.length) {}

 private:
  // Defined ahead of their callers: clang 14 does not instantiate a member template used in a
  // constant expression before the caller's definition.
  constexpr void report(const error& e) noexcept { f_.errors.add(e); }

  constexpr void push(layer_kind k, std::size_t offset, std::size_t length) noexcept {
    push(k, offset, length, f_.errors.size());
  }
  constexpr void push(layer_kind k, std::size_t offset, std::size_t length,
                      std::size_t errors_before, std::size_t not_captured = 0) noexcept {
    if (f_.layer_count == f_.layers.size()) return;  // not reached: no path has more layers
    f_.layers.set(f_.layer_count++, layer_ref{k, static_cast<std::uint32_t>(offset),
                                              static_cast<std::uint32_t>(length),
                                              static_cast<std::uint32_t>(errors_before),
                                              static_cast<std::uint32_t>(not_captured)});
  }

  constexpr std::size_t present(std::size_t end) const noexcept {
    return end < b_.size() ? end : b_.size();
  }

  // What read() found: the header as decoded, where the reader keeps it (null: not read, as
  // it is cut off), and whether no error of error severity was found in it.
  template <class T>
  struct got {
    const T* value = nullptr;
    bool ok = false;
    constexpr explicit operator bool() const noexcept { return ok; }
    constexpr const T& operator*() const noexcept { return *value; }
    constexpr const T* operator->() const noexcept { return value; }
  };

  // Header T at b_[at] in a frame whose part at hand ends at `end` on the wire: decoded into
  // `into` with every rule of its table (problems reported), recorded as a layer. A header the
  // wire holds whole but the capture does not is not read, and that is no error of the frame
  // (its note says how much was not captured): it comes back unread, unreported. Decoded in
  // place: a value built aside and copied into the result was read back with wide loads of what
  // narrow stores had just written, which stalled every header of every frame.
  template <class T>
  constexpr got<T> read(T& into, layer_kind k, std::size_t at, std::size_t end) noexcept {
    const auto vw = view<T>::make(b_.first(present(end)), at);
    if (!vw) {
      const bool cut = at + layout<T>::size > b_.size() && at + layout<T>::size <= end;
      if (!cut) report(vw.err);
      return {};
    }
    const std::size_t before = f_.errors.size();
    vw->read(into);
    const bool ok = !report_rules(into, at, [this](const error& e) { report(e); });
    push(k, at, layout<T>::size, before);
    return {&into, ok};
  }
  template <class T>
  constexpr got<T> read(std::optional<T>& into, layer_kind k, std::size_t at,
                        std::size_t end) noexcept {
    const auto r = read(into.emplace(), k, at, end);
    if (!r.value) into.reset();
    return r;
  }
  template <class T>
  constexpr got<T> read(std::optional<located<T>>& into, layer_kind k, std::size_t at,
                        std::size_t end) noexcept {
    located<T>& slot = into.emplace();
    slot.offset = at;
    const auto r = read(slot.value, k, at, end);
    if (!r.value) into.reset();
    return r;
  }

  constexpr void set_xpus(std::uint32_t src, std::uint32_t dst) noexcept {
    f_.src_xpu = src;
    f_.dst_xpu = dst;
  }

 public:
  // ---- link types: the first step for each ----------------------------------------------

  constexpr void ethernet_link() noexcept {
    const auto a = o_.afh2_of_ethernet(b_);
    if (a.form != afh2_form::none) return afh2(a);
    ethernet();
  }

  constexpr void afh2_link() noexcept {
    f_.net = carrier::afh2;
    if (b_.empty() && w_ > 0) return;  // not captured
    if (b_.empty())
      return report(truncated("afh2", 0, layout<afh2_compressed>::size, 0, "empty frame"));
    if (!has_afh2_signature(b_[0]))
      return report(error{.code = errc::bad_value,
                          .layer = "afh2",
                          .what = "first octet lacks the AFH Gen 2 SLAP signature",
                          .field = "afh2.x",
                          .value = b_[0]});
    afh2(recognise_afh2(b_, true, o_.sue_ethertype, o_.shim_ethertype));
  }

  // An IP header first: its version nibble says which (LINKTYPE_RAW).
  constexpr void raw_ip_link() noexcept {
    if (b_.empty() && w_ > 0) return;  // not captured
    if (b_.empty()) return report(truncated("ip", 0, 1, 0, "empty frame"));
    const unsigned version = b_[0] >> 4;
    if (version == 4) return ipv4(0, w_);
    if (version == 6) return ipv6(0, w_);
    report(error{.code = errc::unsupported,
                 .layer = "ip",
                 .what = "raw IP frame of neither version 4 nor 6",
                 .field = "ip.version",
                 .value = version});
  }
  constexpr void ipv4_link() noexcept { ipv4(0, w_); }
  constexpr void ipv6_link() noexcept { ipv6(0, w_); }

  // A Linux cooked header, then what its protocol names, as after an Ethernet header.
  constexpr void linux_sll_link() noexcept {
    f_.net = carrier::linux_sll;
    const auto h = read(f_.sll, layer_kind::sll, 0, w_);
    if (!h) return;
    cooked(layout<linux_sll>::size, h->protocol);
  }
  constexpr void linux_sll2_link() noexcept {
    f_.net = carrier::linux_sll;
    const auto h = read(f_.sll2, layer_kind::sll2, 0, w_);
    if (!h) return;
    cooked(layout<linux_sll2>::size, h->protocol);
  }

  // BSD loopback: the family in the capturing host's byte order (LINKTYPE_NULL) or big-endian
  // (LINKTYPE_LOOP), then an IP packet.
  constexpr void null_link() noexcept { loopback(false); }
  constexpr void loop_link() noexcept { loopback(true); }

  // ---- the PDU ---------------------------------------------------------------------------

  // RH, payload, R-CRC between at and end (on the wire). `exact`: the carrier says where the PDU
  // ends (UDP, the shim); otherwise it runs to the end of the frame and may be followed by
  // padding. A PDU the capture cut short is read as far as it goes: its R-CRC, where the
  // carrier's length puts it, is not_captured.
  constexpr void sue_pdu(std::size_t at, std::size_t end, bool exact) noexcept {
    constexpr std::size_t rh_size = layout<reliability_header>::size;
    f_.pdu_offset = at;
    const auto rh = read(f_.rh, layer_kind::sue_rh, at, end);
    if (!rh.value) return;
    if (rh->ver != 0)
      report(error{.code = errc::unsupported,
                   .layer = layout<reliability_header>::name,
                   .offset = static_cast<std::uint32_t>(at),
                   .what = "RH version is not 0: read as version 0 (R2 Table 5)",
                   .field = info_of<reliability_header, &reliability_header::ver>().filter,
                   .value = rh->ver,
                   .level = severity::warning});
    const bool cut = end > b_.size();
    const bytes pdu = b_.subspan(at, present(end) - at);
    // The frame's length as it was on Ethernet (on the wire), where the minimum-size rule
    // applies: a cooked header stands for 14 bytes whatever its own size.
    // Assigned on each branch, not through one conditional: that built the bounds aside and
    // copied them with wide loads of what narrow stores had just written (a stall per PDU).
    if (cut)
      f_.bounds = pdu_bounds_not_captured(end - at);
    else if (exact)
      pdu_bounds_exact_in(f_.bounds, pdu);
    else
      pdu_bounds_l2_in(f_.bounds, pdu, w_ - cooked_extra_, o_.commands);
    const std::size_t payload = f_.bounds.payload_end - rh_size;
    const std::size_t kept = payload < pdu.size() - rh_size ? payload : pdu.size() - rh_size;
    f_.payload = pdu.subspan(rh_size, kept);
    push(layer_kind::sue_payload, at + rh_size, kept, f_.errors.size(), payload - kept);
    if (payload > sue_max_payload)
      report(error{.code = errc::bad_length,
                   .layer = "sue.payload",
                   .offset = static_cast<std::uint32_t>(at + rh_size),
                   .what = "payload over 4096 bytes (R2 3.3)",
                   .field = "sue.payload.len",
                   .value = payload,
                   .level = severity::warning});
    f_.command_errors_at = f_.errors.size();
    if (f_.bounds.status == rcrc_status::missing || f_.bounds.status == rcrc_status::not_captured)
      return;
    const std::size_t crc_at = at + f_.bounds.payload_end;
    push(layer_kind::sue_rcrc, crc_at, rcrc_size);
    if (f_.bounds.status == rcrc_status::bad)
      report(error{.code = errc::bad_checksum,
                   .layer = "sue.rcrc",
                   .offset = static_cast<std::uint32_t>(crc_at),
                   .what = "R-CRC does not match; value is the CRC computed over RH and payload",
                   .field = "sue.rcrc",
                   .value = f_.bounds.computed});
    if (f_.bounds.pad > 0) push(layer_kind::sue_pad, crc_at + rcrc_size, f_.bounds.pad);
  }

  constexpr void fcs() noexcept {
    push(layer_kind::fcs, f_.length, fcs_size);
    if (!f_.fcs.good)
      report(error{.code = errc::bad_checksum,
                   .layer = "eth.fcs",
                   .offset = static_cast<std::uint32_t>(f_.length),
                   .what = "FCS does not match the frame",
                   .field = "eth.fcs",
                   .value = f_.fcs.computed});
  }

 private:
  // ---- AFH Gen 2 (R2 3.5.2) --------------------------------------------------------------

  constexpr void afh2(const afh2_recognition& a) noexcept {
    const std::size_t n = w_;
    if (a.form == afh2_form::compressed) {
      f_.kind = encap::afh2c;
      const auto h = read(f_.afh2c, layer_kind::afh2c, 0, n);
      if (h.value) set_xpus(h->src_xpu, h->dst_xpu);
      if (!h) return;
      constexpr std::size_t at = layout<afh2_compressed>::size;
      // The capture ends before the two bytes that tell a PDU (the SUE Ethertype) from SUE Lite:
      // which it is was not captured, and is not guessed (their layer is the cut one).
      if (!a.sue_follows && b_.size() < at + layout<afh2_ethertype>::size &&
          n >= at + layout<afh2_ethertype>::size)
        return (void)read(f_.afh2_type, layer_kind::afh2_ethertype, at, n);
      if (!a.sue_follows) return lite(at);
      (void)read(f_.afh2_type, layer_kind::afh2_ethertype, at, n);
      return sue_pdu(at + layout<afh2_ethertype>::size, n, false);
    }
    f_.kind = encap::afh2;
    const auto h = read(f_.afh2, layer_kind::afh2, 0, n);
    if (h.value) set_xpus(h->src_xpu, h->dst_xpu);
    if (!h) return;
    constexpr std::size_t at = layout<afh2_normal>::size;
    const auto type = read(f_.afh2_type, layer_kind::afh2_ethertype, at, n);
    if (!type) return;
    if (!a.sue_follows)
      return report(error{.code = errc::unsupported,
                          .layer = "afh2.etype",
                          .offset = static_cast<std::uint32_t>(at),
                          .what = "transport is not SUE",
                          .field = "afh2.type",
                          .value = type->type,
                          .level = severity::warning});
    sue_pdu(at + layout<afh2_ethertype>::size, n, false);
  }

  // The SUE Lite profile (R2 3.4, Fig. 10): the packed payload straight after the compressed
  // header, no RH, no R-CRC; padding to the minimum frame is told from it by the commands.
  constexpr void lite(std::size_t at) noexcept {
    f_.kind = encap::lite;
    f_.pdu_offset = at;
    const bytes carried = b_.subspan(at);
    // Cut by the snapshot: the payload runs to the end of the frame on the wire, its padding
    // (if any) not told apart.
    const bool cut = w_ > b_.size();
    const std::size_t used = cut ? carried.size() : packed_length(carried, o_.commands);
    const std::size_t wire_used = cut ? w_ - at : used;
    f_.payload = carried.first(used);
    f_.bounds = pdu_bounds{.payload_end = wire_used, .pad = carried.size() - used};
    push(layer_kind::sue_lite, at, used, f_.errors.size(), wire_used - used);
    // Bit 0 of the first payload byte is the I/G bit of the source MAC a switch reads.
    if (!carried.empty() && (carried[0] & 1u) != 0)
      report(error{.code = errc::bad_value,
                   .layer = "sue_lite",
                   .offset = static_cast<std::uint32_t>(at),
                   .what = "first byte has bit 0 set: the source MAC a switch reads is a group "
                           "address",
                   .value = carried[0],
                   .level = severity::warning});
    f_.command_errors_at = f_.errors.size();
    if (wire_used > sue_lite_max_payload)
      report(error{.code = errc::bad_length,
                   .layer = "sue_lite",
                   .offset = static_cast<std::uint32_t>(at),
                   .what = "payload over 1024 bytes (R2 3.4)",
                   .field = "sue_lite.len",
                   .value = wire_used,
                   .level = severity::warning});
  }

  // ---- Ethernet, AFH Gen 1 (R2 3.5.1, 3.5.3) ----------------------------------------------

  constexpr void ethernet() noexcept {
    f_.net = carrier::ethernet;
    const auto eth = read(f_.eth, layer_kind::ethernet, 0, w_);
    if (!eth) return;
    ethertype_next(layout<ethernet_header>::size, eth->type);
  }

  // What an Ethertype at `at` - 2 names: VLAN tags (any stack of 802.1Q and 802.1ad, up to
  // max_vlan_tags), then AFH Gen 1 (SUE's or the shim's Ethertype), IPv4 or IPv6. Any other
  // protocol is not SUE's and ends the reading without a problem.
  constexpr void ethertype_next(std::size_t at, std::uint16_t type) noexcept {
    const std::size_t n = w_;
    while (is_tag_ethertype(type)) {
      if (f_.vlan_count == received_frame::max_vlan_tags)
        return report(error{.code = errc::unsupported,
                            .layer = "vlan",
                            .offset = static_cast<std::uint32_t>(at),
                            .what = "more VLAN tags than are read (8): the rest is not decoded",
                            .field = "vlan.etype",
                            .value = type});
      const auto kind = type == ethertype::qinq ? layer_kind::service_tag : layer_kind::vlan;
      vlan_tag t{};
      const auto tag = read(t, kind, at, n);
      if (!tag) return;
      f_.vlan.set(f_.vlan_count++, located<vlan_tag>{t, at});
      at += layout<vlan_tag>::size;
      type = tag->type;
    }
    if (type == o_.sue_ethertype || type == o_.shim_ethertype) return afh1(at, type);
    if (type == ethertype::ipv4) return ipv4(at, n);
    if (type == ethertype::ipv6) return ipv6(at, n);
  }

  // ---- link headers that stand in for Ethernet's ------------------------------------------

  // After a cooked header of `size` bytes: the protocol is an Ethertype above 1536. The frame
  // was an Ethernet frame (or a loopback one) without its 14-byte header.
  constexpr void cooked(std::size_t size, std::uint16_t protocol) noexcept {
    cooked_extra_ = size - layout<ethernet_header>::size;
    if (protocol <= sll_max_linux_protocol) return;  // 802.2 LLC, CAN, ...: not SUE's
    ethertype_next(size, protocol);
  }

  constexpr void loopback(bool network_order) noexcept {
    f_.net = carrier::null;
    const std::size_t n = w_;
    const auto h = read(f_.null, layer_kind::null, 0, n);
    if (!h.value) return;
    if (!network_order) f_.null->value.family = bsd_family_of(h->family);
    constexpr std::size_t at = layout<bsd_loopback>::size;
    if (h->family == bsd_family::inet) return ipv4(at, n);
    if (is_bsd_inet6(h->family)) return ipv6(at, n);
    report(error{.code = errc::unsupported,
                 .layer = "null",
                 .what = "address family is neither IPv4 nor IPv6",
                 .field = "null.family",
                 .value = h->family});
  }

  // The Ethertype after the addresses (and tags) names SUE or the shim: AFH Gen 1. Behind a
  // cooked header the addresses are gone (only the source's is kept, in the cooked header).
  constexpr void afh1(std::size_t at, std::uint16_t type) noexcept {
    const std::size_t n = w_;
    const bool shim = type == o_.shim_ethertype;
    const bool tagged = f_.vlan_count > 0;
    f_.kind = shim ? (tagged ? encap::afh1_vlan_shim : encap::afh1_shim)
                   : (tagged ? encap::afh1_vlan : encap::afh1);
    if (f_.eth) {
      const auto a = read(f_.afh1, layer_kind::afh1, 0, n);
      if (a.value) set_xpus(a->src_xpu, a->dst_xpu);  // always: the Ethernet header holds it
    }
    if (!shim) return sue_pdu(at, n, false);
    const auto s = read(f_.shim, layer_kind::afh1_shim, at, n);
    if (s.value) set_xpus(s->src_xpu, s->dst_xpu);
    if (!s) return;
    if (s->next_header == shim_next_failover && s->next_header != o_.shim_next_sue) {
      f_.kind.reset();  // no SUE behind this shim
      return failover(at + layout<afh1_shim>::size,
                      shim_payload_end(*s, w_, at, [this](const error& e) { report(e); }));
    }
    if (s->next_header != o_.shim_next_sue)
      return report(error{.code = errc::unsupported,
                          .layer = "afh1.shim",
                          .offset = static_cast<std::uint32_t>(at + 2),
                          .what = "transport is not SUE",
                          .field = "afh1.shim.next_header",
                          .value = s->next_header,
                          .level = severity::warning});
    const std::size_t end = shim_payload_end(*s, w_, at, [this](const error& e) { report(e); });
    sue_pdu(at + layout<afh1_shim>::size, end, true);
  }

  // ---- IP and UDP (R2 3.5.1, Fig. 11) -----------------------------------------------------

  constexpr void ipv4(std::size_t at, std::size_t end) noexcept {
    f_.net = carrier::ipv4;
    const auto ip = read(f_.ipv4, layer_kind::ipv4, at, end);
    if (!ip) return;
    const auto sink = [this](const error& e) { report(e); };
    const std::size_t hl = ipv4_header_length(*ip, end, at, sink);
    if (hl == 0 || at + hl > b_.size()) return;  // unusable, or options not captured
    constexpr std::size_t fixed = layout<ipv4_header>::size;
    if (hl > fixed) {
      push(layer_kind::ipv4_options, at + fixed, hl - fixed);
      f_.ipv4_options = b_.subspan(at + fixed, hl - fixed);
    }
    const ip_extent x =
        ipv4_datagram(*ip, b_.first(present(end)), end, at, hl, o_.check_checksums, sink);
    f_.ipv4_checksum = x.checksum;
    if (!x.usable) return;
    if (x.fragment) {
      f_.fragment = ip_fragment{.key = {.src = ipv4_key_address(ip->src),
                                        .dst = ipv4_key_address(ip->dst),
                                        .protocol = ip->protocol,
                                        .id = ip->id},
                                .next_header = ip->protocol,
                                .offset = std::size_t{ip->frag_offset} * 8,
                                .more = ip->flag_mf != 0,
                                .header = b_.subspan(at, hl),
                                .data = b_.subspan(at + hl, present(x.end) - at - hl),
                                .whole = at + ip->total_length <= b_.size()};
      return;
    }
    if (ip->protocol != ip_proto_udp) return;
    udp(at + hl, x.end, false);
  }

  constexpr void ipv6(std::size_t at, std::size_t end) noexcept {
    f_.net = carrier::ipv6;
    const auto ip = read(f_.ipv6, layer_kind::ipv6, at, end);
    if (!ip) return;
    const ip_extent x = ipv6_datagram(*ip, end, at, [this](const error& e) { report(e); });
    constexpr std::size_t fixed = layout<ipv6_header>::size;
    if (ip->next_header == ip_proto_ipv6_fragment) return ipv6_fragment(at, x.end);
    if (ip->next_header != ip_proto_udp) return;  // other extension headers: not SUE's
    udp(at + fixed, x.end, true);
  }

  // The Fragment header as the first extension header (RFC 8200 4.5). One that holds the whole
  // datagram (offset 0, M clear: an atomic fragment, RFC 6946) is read through.
  constexpr void ipv6_fragment(std::size_t at, std::size_t datagram_end) noexcept {
    constexpr std::size_t fixed = layout<ipv6_header>::size;
    constexpr std::size_t fh = layout<ipv6_fragment_header>::size;
    const auto h = read(f_.ipv6_frag, layer_kind::ipv6_fragment, at + fixed, datagram_end);
    if (!h.value) return;
    if (h->offset == 0 && h->more == 0) {
      if (h->next_header != ip_proto_udp) return;
      return udp(at + fixed + fh, datagram_end, true);
    }
    const auto& ip = f_.ipv6->value;
    f_.fragment =
        ip_fragment{.key = {.v6 = true, .src = ip.src, .dst = ip.dst, .id = h->id},
                    .next_header = h->next_header,
                    .offset = std::size_t{h->offset} * 8,
                    .more = h->more != 0,
                    .header = b_.subspan(at, fixed),
                    .data = b_.subspan(at + fixed + fh, present(datagram_end) - at - fixed - fh),
                    .whole = at + fixed + ip.payload_length <= b_.size()};
  }

  constexpr void udp(std::size_t at, std::size_t end, bool v6) noexcept {
    f_.net = v6 ? carrier::ipv6_udp : carrier::ipv4_udp;
    const auto u = read(f_.udp, layer_kind::udp, at, end);
    if (!u) return;
    const ip_extent x =
        udp_datagram(*u, b_.first(present(end)), end, at, pseudo_header_of(f_, *u, v6, o_), v6,
                     o_.check_checksums, [this](const error& e) { report(e); });
    f_.udp_checksum = x.checksum;
    if (!x.usable) return;
    constexpr std::size_t header = layout<udp_header>::size;
    if (failover_datagram(*u, o_)) {
      if (!o_.flows_only) failover(at + header, x.end);
      return;
    }
    if (!is_sue_datagram(*u, b_.subspan(at + header, present(x.end) - at - header), v6, at + header,
                         x.end - at - header) ||
        o_.flows_only)
      return;
    f_.kind = v6 ? encap::udp6 : encap::udp4;
    sue_pdu(at + header, x.end, true);
  }

  // A message of the failover exchange: decoded with its table's rules, its own CRC checked.
  constexpr void failover(std::size_t at, std::size_t end) noexcept {
    const auto m = read(f_.failover, layer_kind::failover, at, end);
    if (!m.value) return;
    const std::uint32_t want = failover_crc(*m);
    if (m->crc != want)
      report(error{.code = errc::bad_checksum,
                   .layer = "sue.failover",
                   .offset = static_cast<std::uint32_t>(at + 8),
                   .what = "failover message CRC mismatch",
                   .field = "sue.failover.crc",
                   .value = want});
  }

  // Whether a datagram carries SUE: by a port the user named; else (if heuristics are allowed)
  // by its flow, recognised before, or by what it carries, which binds its flow. A datagram the
  // capture cut has no R-CRC to show: a plausible RH takes it on a flow or port recognised
  // before; otherwise it stays UDP with a note that says why, since an RH alone would take one
  // random datagram in 256. `payload` is what was captured of the `on_wire` bytes at `at`.
  constexpr bool is_sue_datagram(const udp_header& u, bytes payload, bool v6, std::size_t at,
                                 std::size_t on_wire) const noexcept {
    if (o_.is_sue_port(u.dst_port) || o_.is_sue_port(u.src_port)) return true;
    if (!o_.heuristics) return false;
    if (!o_.flows) return plausible_pdu(payload);
    const udp_flow flow = flow_of(f_, u, v6);
    if (o_.flows->bound(flow)) return true;
    if (payload.size() < on_wire && plausible_rh(payload)) {
      if (o_.flows->port_bound(u.dst_port) || o_.flows->port_bound(u.src_port)) {
        o_.flows->bind(flow);
        return true;
      }
      o_.flows->unconfirmed(flow);
      f_.errors.add(error{.code = errc::not_captured,
                          .layer = "udp",
                          .offset = static_cast<std::uint32_t>(at),
                          .needed = static_cast<std::uint32_t>(on_wire),
                          .available = static_cast<std::uint32_t>(payload.size()),
                          .what = "a plausible SUE RH, not confirmed: its R-CRC was not "
                                  "captured and no SUE was seen on this flow or port before "
                                  "(name the port with --udp-port)",
                          .level = severity::note});
      return false;
    }
    if (!plausible_pdu(payload)) return false;
    o_.flows->bind(flow);
    return true;
  }

  received_frame& f_;
  const receive_options& o_;
  bytes b_;
  std::size_t w_;  // b_'s length on the wire
  // Bytes a cooked header has beyond the Ethernet header it stands for.
  std::size_t cooked_extra_ = 0;
};

// The one note a frame cut by the capture gets: how many bytes were on the wire and not kept.
constexpr void note_not_captured(received_frame& f) noexcept {
  if (f.not_captured == 0) return;
  f.errors.add(error{.code = errc::not_captured,
                     .layer = "frame",
                     .offset = static_cast<std::uint32_t>(f.frame.size()),
                     .needed = static_cast<std::uint32_t>(f.wire_length),
                     .available = static_cast<std::uint32_t>(f.frame.size()),
                     .what = "frame cut short by the capture's snapshot length: the rest "
                             "was on the wire, not captured",
                     .value = f.not_captured,
                     .level = severity::note});
}

// Whether the last four bytes of an Ethernet frame may be an FCS, as far as its headers tell:
// not when the IP packet it carries (after any VLAN tags) ends exactly where the frame does,
// the usual capture with no trailer at all. Detecting an FCS otherwise takes a CRC over the
// whole frame, which cost as much as the R-CRC of the PDU inside it. An AFH Gen 2 frame and any
// other carries nothing that says where it ends: its FCS is looked for as before.
constexpr bool may_end_in_fcs(bytes frame, const receive_options& o) noexcept {
  if (o.afh2_of_ethernet(frame).form != afh2_form::none) return true;
  const auto eth = view<ethernet_header>::make(frame);
  if (!eth) return true;
  std::size_t at = layout<ethernet_header>::size;
  std::uint16_t type = eth->get<&ethernet_header::type>();
  for (std::size_t tags = 0; is_tag_ethertype(type) && tags < received_frame::max_vlan_tags;
       ++tags) {
    const auto tag = view<vlan_tag>::make(frame, at);
    if (!tag) return true;
    type = tag->get<&vlan_tag::type>();
    at += layout<vlan_tag>::size;
  }
  if (type == ethertype::ipv4) {
    const auto ip = view<ipv4_header>::make(frame, at);
    return !ip || at + ip->get<&ipv4_header::total_length>() != frame.size();
  }
  if (type == ethertype::ipv6) {
    const auto ip = view<ipv6_header>::make(frame, at);
    return !ip ||
           at + layout<ipv6_header>::size + ip->get<&ipv6_header::payload_length>() != frame.size();
  }
  return true;
}

// The link types read_frame knows: the step each starts with, and whether its frames may end in
// an Ethernet FCS. A new link type (Linux cooked capture, raw IP, ...) is a row and a step.
struct link_reader {
  std::uint32_t link = 0;
  bool may_have_fcs = false;
  void (frame_reader::*start)() noexcept = nullptr;
};

inline constexpr std::array<link_reader, 9> link_readers{{
    {link_ethernet, true, &frame_reader::ethernet_link},
    {link_afh2, false, &frame_reader::afh2_link},
    {link_raw, false, &frame_reader::raw_ip_link},
    {link_ipv4, false, &frame_reader::ipv4_link},
    {link_ipv6, false, &frame_reader::ipv6_link},
    {link_linux_sll, false, &frame_reader::linux_sll_link},
    {link_linux_sll2, false, &frame_reader::linux_sll2_link},
    {link_null, false, &frame_reader::null_link},
    {link_loop, false, &frame_reader::loop_link},
}};

}  // namespace detail

// Whether read_frame reads frames of this link type.
constexpr bool reads_link(std::uint32_t link) noexcept {
  for (const auto& r : detail::link_readers)
    if (r.link == link) return true;
  return false;
}

namespace detail {

// read_frame, with or without its fast path (`predict`; the tests compare the two).
constexpr received_frame read_frame_with(bytes frame, std::uint32_t link, const receive_options& o,
                                         std::size_t wire_length, bool predict) noexcept {
  received_frame f;
  f.link = link;
  f.frame = frame;
  f.length = frame.size();
  f.wire_length = wire_length > frame.size() ? wire_length : frame.size();
  f.not_captured = f.wire_length - frame.size();
  // An index, not a pointer: GCC's sanitizer builds cannot compare the address of a global with
  // null in a constant expression, and read_frame is constexpr.
  std::size_t how = detail::link_readers.size();
  for (std::size_t i = 0; i < detail::link_readers.size(); ++i)
    if (detail::link_readers[i].link == link) {
      how = i;
      break;
    }
  if (how == detail::link_readers.size()) {
    f.errors.add(error{.code = errc::unsupported,
                       .layer = "frame",
                       .what = "link type not decoded",
                       .value = link});
    f.length_on_wire = f.wire_length;
    detail::note_not_captured(f);
    return f;
  }
  std::size_t wire = f.wire_length;
  if (detail::link_readers[how].may_have_fcs) {
    if (f.not_captured == 0) {
      if (o.fcs != fcs_mode::detect || detail::may_end_in_fcs(frame, o))
        f.fcs = find_fcs(frame, o.fcs);
      if (f.fcs.present) f.length -= fcs_size;
      wire = f.length;
    } else if (o.fcs == fcs_mode::present && wire >= fcs_size) {
      wire -= fcs_size;
      if (f.length > wire) f.length = wire;
    }
  }
  f.length_on_wire = wire;
  // A whole Ethernet frame without an FCS: nearly always the fast path's. Not when compiling for
  // size: a firmware image keeps the one reader (the fast path took 12 KB of Cortex-M4 code).
  if (SCALEUP_FOR_SPEED && predict && link == link_ethernet && f.not_captured == 0 &&
      !f.fcs.present && detail::predicted_reader(f, o).ethernet_link())
    return f;
  detail::frame_reader r(f, o, wire);
  (r.*(detail::link_readers[how].start))();
  if (f.fcs.present) r.fcs();
  detail::note_not_captured(f);
  return f;
}

}  // namespace detail

// One frame as captured on `link`. Never fails as a call: what it could not read is in
// f.errors (an unknown link type, an empty or cut-off frame, a bad checksum, ...).
// `wire_length`: the frame's length on the wire (pcap's original length, cap::packet::len) when
// the capture kept fewer bytes; 0 or anything below frame.size() means the frame is whole. The
// FCS of a cut frame is not in the capture: with fcs_mode::present its four bytes end the wire
// length, otherwise the frame is taken to have none.
constexpr received_frame read_frame(bytes frame, std::uint32_t link, const receive_options& o = {},
                                    std::size_t wire_length = 0) noexcept {
  return detail::read_frame_with(frame, link, o, wire_length, true);
}

// A SUE PDU on its own, its length given by its carrier (RH, payload, R-CRC): for a carrier
// read_frame does not read itself, such as a tunnel. Offsets count from the PDU's first byte;
// kind is empty. `wire_length` as for read_frame: the PDU's length when the capture kept less.
constexpr received_frame read_pdu(bytes pdu, const receive_options& o = {},
                                  std::size_t wire_length = 0) noexcept {
  received_frame f;
  f.frame = pdu;
  f.length = pdu.size();
  f.wire_length = wire_length > pdu.size() ? wire_length : pdu.size();
  f.not_captured = f.wire_length - pdu.size();
  f.length_on_wire = f.wire_length;
  detail::frame_reader(f, o, f.wire_length).sue_pdu(0, f.wire_length, true);
  detail::note_not_captured(f);
  return f;
}

}  // namespace scaleup::wire
