// The fixed-size headers for C: wire::encode and wire::decode<T> of the RH, AFH Gen 1 (addresses
// and shim), AFH Gen 2 (normal, and compressed, which is also SUE Lite's header) and a full
// write's command control. Each C struct is copied field by field to and from its C++ value: no
// layout is assumed shared.
#include "c_abi.hpp"

#include "scaleup/pack/default_profile.hpp"
#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace {

namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::out;
using scaleup::capi::report;

static_assert(w::layout<w::reliability_header>::size == SCALEUP_RH_SIZE);
static_assert(w::layout<w::afh1_addresses>::size == SCALEUP_AFH1_ADDRESSES_SIZE);
static_assert(w::layout<w::afh1_shim>::size == SCALEUP_AFH1_SHIM_SIZE);
static_assert(w::layout<w::afh2_normal>::size == SCALEUP_AFH2_NORMAL_SIZE);
static_assert(w::layout<w::afh2_compressed>::size == SCALEUP_AFH2_COMPRESSED_SIZE);
static_assert(w::layout<scaleup::pack::cmd_write>::size == SCALEUP_CMD_WRITE_SIZE);

w::reliability_header cpp(const scaleup_rh& c) { return scaleup::capi::to_cpp(c); }
scaleup_rh c_of(const w::reliability_header& v) { return scaleup::capi::to_c(v); }

w::afh1_addresses cpp(const scaleup_afh1_addresses& c) {
  return {c.da_prefix, c.dst_xpu, c.sa_prefix, c.src_xpu};
}
scaleup_afh1_addresses c_of(const w::afh1_addresses& v) {
  return {v.da_prefix, v.dst_xpu, v.sa_prefix, v.src_xpu};
}

w::afh1_shim cpp(const scaleup_afh1_shim& c) {
  return {c.version, c.tc, c.hop_limit, c.next_header, c.length, c.entropy, c.src_xpu, c.dst_xpu};
}
scaleup_afh1_shim c_of(const w::afh1_shim& v) {
  return {v.version, v.tc, v.hop_limit, v.next_header, v.length, v.entropy, v.src_xpu, v.dst_xpu};
}

w::afh2_normal cpp(const scaleup_afh2_normal& c) {
  return {c.rsv,     c.w,  c.v,     c.z,     c.y,     c.x,       c.m,      c.hop_count,
          c.dst_xpu, c.tc, c.spare, c.sa_ul, c.sa_ig, c.entropy, c.src_xpu};
}
scaleup_afh2_normal c_of(const w::afh2_normal& v) {
  return {v.rsv,     v.w,  v.v,     v.z,     v.y,     v.x,       v.m,      v.hop_count,
          v.dst_xpu, v.tc, v.spare, v.sa_ul, v.sa_ig, v.entropy, v.src_xpu};
}

w::afh2_compressed cpp(const scaleup_afh2_compressed& c) {
  return {c.rsv, c.w, c.v, c.z, c.y, c.x, c.m, c.tc, c.spare, c.src_xpu, c.dst_xpu};
}
scaleup_afh2_compressed c_of(const w::afh2_compressed& v) {
  return {v.rsv, v.w, v.v, v.z, v.y, v.x, v.m, v.tc, v.spare, v.src_xpu, v.dst_xpu};
}

scaleup::pack::cmd_write cpp(const scaleup_cmd_write& c) { return {c.type, c.dlen, c.tag, c.addr}; }
scaleup_cmd_write c_of(const scaleup::pack::cmd_write& v) {
  return {v.type, v.dlen, v.tag, v.addr};
}

template <class C>
int encode_c(const C* h, std::uint8_t* o, std::size_t n, scaleup_error* err) {
  const auto r = w::encode(cpp(*h), out(o, n));
  return report(r.err, err);
}

// decode<T> keeps the value read beside a fixed-field error: so does the C call.
template <class T, class C>
int decode_c(const std::uint8_t* i, std::size_t n, C* o, scaleup_error* err) {
  const auto r = w::decode<T>(in(i, n));
  if (o) *o = c_of(r.value);
  return report(r.err, err);
}

}  // namespace

extern "C" {

void scaleup_rh_init(scaleup_rh* h) { *h = c_of(w::reliability_header{}); }
void scaleup_afh1_addresses_init(scaleup_afh1_addresses* h) { *h = c_of(w::afh1_addresses{}); }
void scaleup_afh1_shim_init(scaleup_afh1_shim* h) { *h = c_of(w::afh1_shim{}); }
void scaleup_afh2_normal_init(scaleup_afh2_normal* h) { *h = c_of(w::afh2_normal{}); }
void scaleup_afh2_compressed_init(scaleup_afh2_compressed* h) { *h = c_of(w::afh2_compressed{}); }
void scaleup_cmd_write_init(scaleup_cmd_write* c) { *c = c_of(scaleup::pack::cmd_write{}); }

int scaleup_rh_encode(const scaleup_rh* h, std::uint8_t* o, std::size_t n, scaleup_error* err) {
  return encode_c(h, o, n, err);
}
int scaleup_rh_decode(const std::uint8_t* i, std::size_t n, scaleup_rh* o, scaleup_error* err) {
  return decode_c<w::reliability_header>(i, n, o, err);
}
int scaleup_afh1_addresses_encode(const scaleup_afh1_addresses* h, std::uint8_t* o, std::size_t n,
                                  scaleup_error* err) {
  return encode_c(h, o, n, err);
}
int scaleup_afh1_addresses_decode(const std::uint8_t* i, std::size_t n, scaleup_afh1_addresses* o,
                                  scaleup_error* err) {
  return decode_c<w::afh1_addresses>(i, n, o, err);
}
int scaleup_afh1_shim_encode(const scaleup_afh1_shim* h, std::uint8_t* o, std::size_t n,
                             scaleup_error* err) {
  return encode_c(h, o, n, err);
}
int scaleup_afh1_shim_decode(const std::uint8_t* i, std::size_t n, scaleup_afh1_shim* o,
                             scaleup_error* err) {
  return decode_c<w::afh1_shim>(i, n, o, err);
}
int scaleup_afh2_normal_encode(const scaleup_afh2_normal* h, std::uint8_t* o, std::size_t n,
                               scaleup_error* err) {
  return encode_c(h, o, n, err);
}
int scaleup_afh2_normal_decode(const std::uint8_t* i, std::size_t n, scaleup_afh2_normal* o,
                               scaleup_error* err) {
  return decode_c<w::afh2_normal>(i, n, o, err);
}
int scaleup_afh2_compressed_encode(const scaleup_afh2_compressed* h, std::uint8_t* o, std::size_t n,
                                   scaleup_error* err) {
  return encode_c(h, o, n, err);
}
int scaleup_afh2_compressed_decode(const std::uint8_t* i, std::size_t n, scaleup_afh2_compressed* o,
                                   scaleup_error* err) {
  return decode_c<w::afh2_compressed>(i, n, o, err);
}

int scaleup_cmd_write_encode(const scaleup_cmd_write* c, std::uint8_t* o, std::size_t n,
                             scaleup_error* err) {
  return encode_c(c, o, n, err);
}
int scaleup_cmd_write_decode(const std::uint8_t* i, std::size_t n, scaleup_cmd_write* o,
                             scaleup_error* err) {
  return decode_c<scaleup::pack::cmd_write>(i, n, o, err);
}

}  // extern "C"
