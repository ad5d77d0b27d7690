// Frames for C, the read side: pack::read_frame (wire::read_frame with a profile's command
// boundaries, the caller's or the default, or without) and what of its received_frame a C user
// needs.
#include "c_abi.hpp"

#include "profile.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/receive.hpp"
#include "scaleup/wire/receive.hpp"

namespace w = scaleup::wire;
namespace pack = scaleup::pack;
using scaleup::capi::in;
using scaleup::capi::to_c;

static_assert(w::link_linux_sll2 == SCALEUP_LINK_LINUX_SLL2 && w::link_afh2 == SCALEUP_LINK_AFH2);
static_assert(static_cast<int>(w::fcs_mode::absent) == SCALEUP_FCS_ABSENT);
static_assert(static_cast<int>(w::carrier::null) == SCALEUP_CARRIER_NULL);
static_assert(w::received_frame::max_errors == SCALEUP_FRAME_MAX_ERRORS);
static_assert(std::tuple_size_v<decltype(w::receive_options{}.udp_ports)> == SCALEUP_MAX_UDP_PORTS);

namespace {

w::receive_options cpp(const scaleup_receive_options& c) {
  w::receive_options o;
  const std::size_t n =
      c.udp_port_count < SCALEUP_MAX_UDP_PORTS ? c.udp_port_count : SCALEUP_MAX_UDP_PORTS;
  for (std::size_t i = 0; i < n; ++i) o.add_udp_port(c.udp_ports[i]);
  o.heuristics = c.heuristics;
  // A mode the C++ enum lacks reads as the default, detection.
  o.fcs = c.fcs <= SCALEUP_FCS_ABSENT ? static_cast<w::fcs_mode>(c.fcs) : w::fcs_mode::detect;
  o.check_checksums = c.check_checksums;
  o.sue_ethertype = c.sue_ethertype;
  o.shim_ethertype = c.shim_ethertype;
  o.shim_next_sue = c.shim_next_sue;
  return o;
}

}  // namespace

extern "C" {

void scaleup_receive_options_init(scaleup_receive_options* c) {
  const w::receive_options o{};
  *c = scaleup_receive_options{};
  c->udp_port_count = 0;
  c->heuristics = o.heuristics;
  c->fcs = static_cast<std::uint8_t>(o.fcs);
  c->check_checksums = o.check_checksums;
  c->sue_ethertype = o.sue_ethertype;
  c->shim_ethertype = o.shim_ethertype;
  c->shim_next_sue = o.shim_next_sue;
  c->default_profile = true;
  c->profile = nullptr;
}

int scaleup_frame_read(const std::uint8_t* frame, std::size_t frame_len, std::uint32_t link,
                       const scaleup_receive_options* o, std::size_t wire_length,
                       scaleup_received_frame* out) {
  scaleup_receive_options defaults;
  if (!o) {
    scaleup_receive_options_init(&defaults);
    o = &defaults;
  }
  const w::bytes b = in(frame, frame_len);
  const pack::profile* prof = o->profile           ? &o->profile->impl
                              : o->default_profile ? &pack::default_profile
                                                   : nullptr;
  const w::received_frame f = pack::read_frame(b, link, prof, cpp(*o), wire_length);

  scaleup_received_frame& c = *out;
  c = scaleup_received_frame{};
  c.link = f.link;
  c.is_sue = f.kind.has_value();
  c.encap = f.kind ? static_cast<std::uint8_t>(*f.kind) : 0;
  c.carrier = static_cast<std::uint8_t>(f.net);
  c.has_src_xpu = f.src_xpu.has_value();
  c.src_xpu = f.src_xpu.value_or(0);
  c.has_dst_xpu = f.dst_xpu.has_value();
  c.dst_xpu = f.dst_xpu.value_or(0);
  c.has_rh = f.rh.has_value();
  if (f.rh) c.rh = to_c(*f.rh);
  c.pdu_offset = f.pdu_offset;
  // The payload is a span into the frame: its place is its distance from the frame's start.
  c.payload_offset = f.payload.data() && b.data()
                         ? static_cast<std::size_t>(f.payload.data() - b.data())
                         : f.pdu_offset;
  c.payload_length = f.payload.size();
  c.bounds = {f.bounds.payload_end, f.bounds.pad, static_cast<std::uint8_t>(f.bounds.status),
              f.bounds.rcrc, f.bounds.computed};
  c.accepted = f.accepted();
  c.fcs_present = f.fcs.present;
  c.fcs_good = f.fcs.good;
  c.wire_length = f.wire_length;
  c.not_captured = f.not_captured;
  c.error_count = f.errors.size();
  c.errors_overflow = f.errors.overflow;
  int status = SCALEUP_ERRC_NONE;
  for (std::size_t i = 0; i < f.errors.size(); ++i) {
    c.errors[i] = to_c(f.errors[i]);
    if (status == SCALEUP_ERRC_NONE && f.errors[i].level == w::severity::error)
      status = static_cast<int>(f.errors[i].code);
  }
  // A list that overflowed may have dropped an error (received_frame::ok() says so): its first
  // entry stands for it.
  if (status == SCALEUP_ERRC_NONE && f.errors.overflow) status = c.errors[0].code;
  return status;
}

}  // extern "C"
