// The go-back-N endpoint for C: a transport::endpoint with the window and payload bound of a
// sizing, built in memory the caller provides. The C++ endpoint hands out its PDUs as a span of
// outgoing_pdu; the C handle keeps the same list as scaleup_outgoing_pdu beside it.
#include <array>

#include "c_abi.hpp"
#include "scaleup/transport/endpoint.hpp"
#include "sizing.hpp"

namespace t = scaleup::transport;
namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::report;
using scaleup::capi::to_c;
using scaleup::capi::to_cpp;

static_assert(t::no_deadline == SCALEUP_NO_DEADLINE);
static_assert(static_cast<int>(t::endpoint_input::tick) == SCALEUP_ENDPOINT_TICK);
static_assert(static_cast<int>(t::drop_reason::partition) == SCALEUP_DROP_PARTITION);

// The opaque handle of scaleup.h: which sizing, then the endpoint (c_endpoint).
struct scaleup_endpoint {
  std::uint8_t sizing;
};

namespace {

template <class Sizing>
struct c_endpoint : scaleup_endpoint {
  explicit c_endpoint(const t::endpoint_config& c) noexcept
      : scaleup_endpoint{scaleup::capi::sizing_of<Sizing>}, impl(c) {}
  t::endpoint<Sizing::window, Sizing::max_payload> impl;
  std::array<scaleup_outgoing_pdu, Sizing::window + 1> transmit{};
};

// Dropping the caller's storage is the only cleanup.
static_assert(std::is_trivially_destructible_v<c_endpoint<t::firmware_sizing>>);
static_assert(std::is_trivially_destructible_v<c_endpoint<t::fabric_sizing>>);

template <class Tag>
using endpoint_of = c_endpoint<typename Tag::type>;

template <class F>
decltype(auto) with(scaleup_endpoint* e, F&& f) noexcept {
  return scaleup::capi::by_sizing<c_endpoint>(e, f);
}
template <class F>
decltype(auto) with(const scaleup_endpoint* e, F&& f) noexcept {
  return scaleup::capi::by_sizing<c_endpoint>(e, f);
}

template <class Sizing>
scaleup_endpoint* build(void* storage, std::size_t size, const t::endpoint_config& cfg,
                        scaleup_error* err) noexcept {
  using object = c_endpoint<Sizing>;
  auto* e = scaleup::capi::place<object>(storage, size, cfg);
  if (!e) {
    report(scaleup::capi::no_room("sue", scaleup::capi::room_for<object>(), size), err);
    return nullptr;
  }
  report(e->impl.config_error(), err);
  return e->impl.config_error() ? nullptr : e;
}

template <class Sizing>
int step(c_endpoint<Sizing>& o, std::uint64_t now, const scaleup_endpoint_event* e,
         scaleup_endpoint_actions* a) noexcept {
  t::endpoint_event ev;
  if (e) {
    if (e->input > SCALEUP_ENDPOINT_TICK) {
      const w::error bad{.code = w::errc::bad_value,
                         .layer = "sue",
                         .what = "unknown endpoint input (SCALEUP_ENDPOINT_*)",
                         .field = "input",
                         .value = e->input};
      if (a) *a = scaleup_endpoint_actions{};
      return report(bad, a ? &a->error : nullptr);
    }
    ev.input = static_cast<t::endpoint_input>(e->input);
    ev.bytes = in(e->bytes, e->bytes_len);
  }
  const t::endpoint_actions r = o.impl.step(ev, now);
  std::size_t n = 0;
  for (const t::outgoing_pdu& p : r.transmit)
    o.transmit[n++] = scaleup_outgoing_pdu{p.bytes.data(), p.bytes.size(), to_c(p.rh),
                                           p.payload.data(), p.payload.size()};
  if (!a) return static_cast<int>(r.error.code);
  *a = scaleup_endpoint_actions{};
  a->transmit = o.transmit.data();
  a->transmit_count = n;
  a->delivered = r.delivered.data();
  a->delivered_len = r.delivered.size();
  a->accepted = r.accepted;
  a->sent_psn = r.sent_psn.value;
  a->window_full = r.window_full;
  a->released = r.released;
  a->dropped = static_cast<std::uint8_t>(r.dropped);
  a->unreachable = r.unreachable;
  return report(r.error, &a->error);
}

}  // namespace

extern "C" {

void scaleup_gbn_config_init(scaleup_gbn_config* c) { *c = to_c(t::gbn_config{}); }

void scaleup_endpoint_config_init(scaleup_endpoint_config* c) {
  const t::endpoint_config d{};
  *c = scaleup_endpoint_config{d.xpuid, d.vc, d.partition, to_c(d.gbn)};
}

std::size_t scaleup_endpoint_size(int sizing) {
  return scaleup::capi::for_sizing(sizing, std::size_t{0}, [](auto tag) {
    return scaleup::capi::room_for<endpoint_of<decltype(tag)>>();
  });
}

scaleup_endpoint* scaleup_endpoint_init(void* storage, std::size_t size, int sizing,
                                        const scaleup_endpoint_config* c, scaleup_error* err) {
  t::endpoint_config cfg{};
  if (c) cfg = t::endpoint_config{c->xpuid, c->vc, c->partition, to_cpp(c->gbn)};
  scaleup_endpoint* e = nullptr;
  const bool known = scaleup::capi::for_sizing(sizing, false, [&](auto tag) {
    e = build<typename decltype(tag)::type>(storage, size, cfg, err);
    return true;
  });
  if (!known) report(scaleup::capi::unknown_sizing("sue", sizing), err);
  return e;
}

int scaleup_endpoint_step(scaleup_endpoint* ep, std::uint64_t now, const scaleup_endpoint_event* e,
                          scaleup_endpoint_actions* a) {
  return with(ep, [&](auto& o) { return step(o, now, e, a); });
}

std::uint64_t scaleup_endpoint_deadline(const scaleup_endpoint* ep) {
  return with(ep, [](const auto& o) { return o.impl.deadline(); });
}

bool scaleup_endpoint_can_send(const scaleup_endpoint* ep) {
  return with(ep, [](const auto& o) { return o.impl.can_send(); });
}

void scaleup_endpoint_stats(const scaleup_endpoint* ep, scaleup_endpoint_counters* out) {
  with(ep, [out](const auto& o) {
    const auto& tx = o.impl.sender();
    const auto& rx = o.impl.receiver();
    *out = scaleup_endpoint_counters{
        tx.sent,       tx.resent,     tx.nacks,          tx.timeouts,
        rx.delivered,  rx.duplicates, rx.dropped_gap,    rx.dropped_partition,
        rx.acks_sent,  rx.nacks_sent, o.impl.rejected(), tx.in_flight(),
        tx.unreachable};
  });
}

}  // extern "C"
