// Frames for C, the emit side (wire/frame.hpp): wire::frame_params, emit_frame and
// emit_sue_frame for every encapsulation.
#include "c_abi.hpp"

#include "scaleup/wire/frame.hpp"

namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::known_encap;
using scaleup::capi::out;
using scaleup::capi::report;
using scaleup::capi::unknown_encap;

static_assert(static_cast<int>(w::encap::lite) == SCALEUP_ENCAP_LITE);
static_assert(w::encap_names.size() == SCALEUP_ENCAP_COUNT);

namespace {

// NUL-terminated, in encap's order (checked against wire::encap_names below).
constexpr std::array<const char*, SCALEUP_ENCAP_COUNT> encap_names{
    "udp4", "udp6", "afh1", "afh1-vlan", "afh1-shim", "afh1-vlan-shim", "afh2", "afh2c", "lite"};
static_assert([] {
  for (std::size_t i = 0; i < encap_names.size(); ++i)
    if (w::encap_names[i] != encap_names[i]) return false;
  return true;
}());

int done(const w::result<std::size_t>& r, std::size_t* written, scaleup_error* err) {
  if (written) *written = r.ok() ? r.value : 0;
  return report(r.err, err);
}

}  // namespace

extern "C" {

const char* scaleup_encap_name(int encap) {
  return known_encap(encap) ? encap_names[static_cast<std::size_t>(encap)] : "unknown";
}

std::size_t scaleup_frame_header_size(int encap) {
  return known_encap(encap) ? w::header_size(static_cast<w::encap>(encap)) : 0;
}

void scaleup_frame_params_init(scaleup_frame_params* c, int encap) {
  *c = scaleup::capi::to_c(w::frame_params{});
  c->encap = static_cast<std::uint8_t>(encap);
}

int scaleup_frame_emit(const scaleup_frame_params* p, const std::uint8_t* inner,
                       std::size_t inner_len, std::uint8_t* o, std::size_t out_len,
                       std::size_t* written, scaleup_error* err) {
  if (!known_encap(p->encap)) return done(unknown_encap(p->encap), written, err);
  return done(w::emit_frame(scaleup::capi::to_cpp(*p), in(inner, inner_len), out(o, out_len)),
              written, err);
}

int scaleup_sue_frame_emit(const scaleup_frame_params* p, const scaleup_rh* rh,
                           const std::uint8_t* payload, std::size_t payload_len, std::uint8_t* o,
                           std::size_t out_len, std::size_t* written, scaleup_error* err) {
  if (!known_encap(p->encap)) return done(unknown_encap(p->encap), written, err);
  return done(w::emit_sue_frame(scaleup::capi::to_cpp(*p), scaleup::capi::to_cpp(*rh),
                                in(payload, payload_len), out(o, out_len)),
              written, err);
}

}  // extern "C"
