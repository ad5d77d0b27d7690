// The packer for C: a pack::packer over the default profile or a caller's, with fixed storage (no
// heap), built in memory the caller provides, in one of two sizings: any of the RH's 10-bit XPU ids
// with 1024 commands waiting at once, or a firmware's 16 destinations, 2 VCs and 16 commands.
#include "c_abi.hpp"

#include <type_traits>

#include "profile.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"

namespace pack = scaleup::pack;
namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::out;
using scaleup::capi::report;

using full_packer = pack::packer<SCALEUP_PACKER_DESTINATIONS, SCALEUP_PACKER_VCS,
                                 SCALEUP_PACKER_CAPACITY, pack::fixed_storage>;
using firmware_packer =
    pack::packer<SCALEUP_PACKER_FIRMWARE_DESTINATIONS, SCALEUP_PACKER_FIRMWARE_VCS,
                 SCALEUP_PACKER_FIRMWARE_CAPACITY, pack::fixed_storage>;

// The opaque handle of scaleup.h: which sizing, then the packer of that sizing (sized_packer).
struct scaleup_packer {
  int sizing;
};

namespace {

template <class P>
struct sized_packer : scaleup_packer {
  sized_packer(int s, const pack::profile& p, const typename P::config& c) noexcept
      : scaleup_packer{s}, impl(p, c) {}
  P impl;
};

// Dropping the caller's storage is the only cleanup: nothing to destroy.
static_assert(std::is_trivially_destructible_v<sized_packer<full_packer>>);
static_assert(std::is_trivially_destructible_v<sized_packer<firmware_packer>>);

// The call `f` on the packer of p's sizing (p: const or not).
template <class P, class H, class F>
decltype(auto) as(H* p, F&& f) {
  using held = std::conditional_t<std::is_const_v<H>, const sized_packer<P>, sized_packer<P>>;
  return f(static_cast<held*>(p)->impl);
}
template <class H, class F>
decltype(auto) with(H* p, F&& f) {
  return p->sizing == SCALEUP_PACKER_SIZING_FIRMWARE ? as<firmware_packer>(p, f)
                                                     : as<full_packer>(p, f);
}

template <class P>
constexpr std::size_t size_of() {
  return scaleup::capi::room_for<sized_packer<P>>();
}

template <class P>
scaleup_packer* init(void* storage, std::size_t size, int sizing, const scaleup_packer_config* c) {
  typename P::config cfg{};
  const scaleup_profile* prof = nullptr;
  if (c) {
    if (c->limit == 0 || c->order > SCALEUP_WITHIN_VC_ROUND_ROBIN) return nullptr;
    for (std::size_t v = 0; v < cfg.weights.size(); ++v) cfg.weights[v] = c->weights[v];
    cfg.order = static_cast<pack::within_vc>(c->order);
    cfg.limit = c->limit;
    prof = c->profile;
  }
  return scaleup::capi::place<sized_packer<P>>(storage, size, sizing,
                                               scaleup::capi::profile_of(prof), cfg);
}

}  // namespace

static_assert(size_of<firmware_packer>() <= SCALEUP_PACKER_FIRMWARE_SIZE);
static_assert(pack::sue_pack_limit == SCALEUP_SUE_PACK_LIMIT);
static_assert(pack::lite_pack_limit == SCALEUP_LITE_PACK_LIMIT);
static_assert(static_cast<int>(pack::within_vc::round_robin) == SCALEUP_WITHIN_VC_ROUND_ROBIN);

extern "C" {

void scaleup_packer_config_init(scaleup_packer_config* c) {
  const full_packer::config d{};
  *c = scaleup_packer_config{};
  for (std::size_t v = 0; v < SCALEUP_PACKER_VCS; ++v) c->weights[v] = d.weights[v];
  c->order = static_cast<std::uint8_t>(d.order);
  c->limit = d.limit;
  c->profile = nullptr;  // the default profile
}

std::size_t scaleup_packer_size(void) { return size_of<full_packer>(); }

scaleup_packer* scaleup_packer_init(void* storage, std::size_t size,
                                    const scaleup_packer_config* c) {
  return init<full_packer>(storage, size, SCALEUP_PACKER_SIZING_FULL, c);
}

std::size_t scaleup_packer_sized_size(int sizing) {
  switch (sizing) {
    case SCALEUP_PACKER_SIZING_FULL:
      return size_of<full_packer>();
    case SCALEUP_PACKER_SIZING_FIRMWARE:
      return size_of<firmware_packer>();
    default:
      return 0;
  }
}

scaleup_packer* scaleup_packer_sized_init(void* storage, std::size_t size, int sizing,
                                          const scaleup_packer_config* c) {
  switch (sizing) {
    case SCALEUP_PACKER_SIZING_FULL:
      return init<full_packer>(storage, size, sizing, c);
    case SCALEUP_PACKER_SIZING_FIRMWARE:
      return init<firmware_packer>(storage, size, sizing, c);
    default:
      return nullptr;
  }
}

int scaleup_packer_push(scaleup_packer* p, const scaleup_queued_command* c, scaleup_error* err) {
  const pack::queued_command q{c->destination,
                               c->vc,
                               in(c->control, c->control_len),
                               pack::borrow(in(c->data, c->data_len)),
                               c->send_now,
                               c->cookie};
  return report(with(p, [&](auto& impl) { return impl.push(q); }), err);
}

int scaleup_packer_next(scaleup_packer* p, std::uint8_t* o, std::size_t out_len,
                        scaleup_packed_pdu* pdu, std::uint64_t* cookies, std::size_t cookies_cap,
                        scaleup_error* err) {
  const std::span<std::uint64_t> cs =
      cookies ? std::span<std::uint64_t>(cookies, cookies_cap) : std::span<std::uint64_t>();
  const auto r =
      with(p, [&](auto& impl) { return impl.next(out(o, out_len), pack::always_eligible{}, cs); });
  if (pdu) *pdu = {r.value.destination, r.value.vc, r.value.bytes, r.value.commands};
  return report(r.err, err);
}

std::size_t scaleup_packer_queued(const scaleup_packer* p) {
  return with(p, [](const auto& impl) { return impl.queued(); });
}

}  // extern "C"
