// The packer for C: a pack::packer over the default profile with fixed storage (no heap), built
// in memory the caller provides. Destinations are the RH's 10-bit XPU ids; 1024 commands may
// wait at once.
#include "c_abi.hpp"

#include <type_traits>

#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"

namespace pack = scaleup::pack;
namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::out;
using scaleup::capi::report;

using c_packer = pack::packer<SCALEUP_PACKER_DESTINATIONS, SCALEUP_PACKER_VCS,
                              SCALEUP_PACKER_CAPACITY, pack::fixed_storage>;

// The opaque handle of scaleup.h.
struct scaleup_packer {
  scaleup_packer(const pack::profile& p, const c_packer::config& c) noexcept : impl(p, c) {}
  c_packer impl;
};

// Dropping the caller's storage is the only cleanup: nothing to destroy.
static_assert(std::is_trivially_destructible_v<scaleup_packer>);
static_assert(pack::sue_pack_limit == SCALEUP_SUE_PACK_LIMIT);
static_assert(pack::lite_pack_limit == SCALEUP_LITE_PACK_LIMIT);
static_assert(static_cast<int>(pack::within_vc::round_robin) == SCALEUP_WITHIN_VC_ROUND_ROBIN);

extern "C" {

void scaleup_packer_config_init(scaleup_packer_config* c) {
  const c_packer::config d{};
  *c = scaleup_packer_config{};
  for (std::size_t v = 0; v < SCALEUP_PACKER_VCS; ++v) c->weights[v] = d.weights[v];
  c->order = static_cast<std::uint8_t>(d.order);
  c->limit = d.limit;
}

// Room for the object and for aligning it inside storage of any alignment.
std::size_t scaleup_packer_size(void) { return scaleup::capi::room_for<scaleup_packer>(); }

scaleup_packer* scaleup_packer_init(void* storage, std::size_t size,
                                    const scaleup_packer_config* c) {
  c_packer::config cfg{};
  if (c) {
    if (c->limit == 0 || c->order > SCALEUP_WITHIN_VC_ROUND_ROBIN) return nullptr;
    for (std::size_t v = 0; v < SCALEUP_PACKER_VCS; ++v) cfg.weights[v] = c->weights[v];
    cfg.order = static_cast<pack::within_vc>(c->order);
    cfg.limit = c->limit;
  }
  return scaleup::capi::place<scaleup_packer>(storage, size, pack::default_profile, cfg);
}

int scaleup_packer_push(scaleup_packer* p, const scaleup_queued_command* c, scaleup_error* err) {
  const pack::queued_command q{c->destination,
                               c->vc,
                               in(c->control, c->control_len),
                               pack::borrow(in(c->data, c->data_len)),
                               c->send_now,
                               c->cookie};
  return report(p->impl.push(q), err);
}

int scaleup_packer_next(scaleup_packer* p, std::uint8_t* o, std::size_t out_len,
                        scaleup_packed_pdu* pdu, std::uint64_t* cookies, std::size_t cookies_cap,
                        scaleup_error* err) {
  const std::span<std::uint64_t> cs =
      cookies ? std::span<std::uint64_t>(cookies, cookies_cap) : std::span<std::uint64_t>();
  const auto r = p->impl.next(out(o, out_len), pack::always_eligible{}, cs);
  if (pdu) *pdu = {r.value.destination, r.value.vc, r.value.bytes, r.value.commands};
  return report(r.err, err);
}

std::size_t scaleup_packer_queued(const scaleup_packer* p) { return p->impl.queued(); }

}  // extern "C"
