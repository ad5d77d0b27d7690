// The SUE instance for C: a transport::sue_instance of a sizing, built in memory the caller
// provides. The firmware sizing keeps everything there; the fabric sizing grows its tables from
// the caller's allocator, and from nothing else: no heap unless the caller passes an allocator.
#include <memory>

#include "c_abi.hpp"
#include "profile.hpp"
#include "scaleup/transport/instance.hpp"
#include "sizing.hpp"

namespace pack = scaleup::pack;
namespace t = scaleup::transport;
namespace w = scaleup::wire;
using scaleup::capi::in;
using scaleup::capi::out;
using scaleup::capi::report;
using scaleup::capi::to_c;
using scaleup::capi::to_cpp;

static_assert(t::link_never == SCALEUP_NO_DEADLINE);
static_assert(static_cast<int>(t::keying::port_peer) == SCALEUP_KEYING_PORT_PEER);
static_assert(static_cast<int>(t::instance_input::tick) == SCALEUP_INPUT_TICK);
static_assert(static_cast<int>(t::link_message::kind::cbfc_update) ==
              SCALEUP_LINK_MESSAGE_CBFC_UPDATE);
static_assert(static_cast<int>(t::frame_kind::pfc) == SCALEUP_FRAME_KIND_PFC);
static_assert(static_cast<int>(t::instance_drop::management) == SCALEUP_INSTANCE_DROP_MANAGEMENT);
static_assert(static_cast<int>(t::note_kind::nack_in) == SCALEUP_NOTE_NACK_IN);
static_assert(static_cast<int>(w::rh_op::none) == SCALEUP_RH_OP_NONE);
static_assert(t::reg::id == SCALEUP_REG_ID && t::reg::congestion == SCALEUP_REG_CONGESTION &&
              t::reg::peers_unreachable == SCALEUP_REG_PEERS_UNREACHABLE &&
              t::reg::port_base == SCALEUP_REG_PORT_BASE &&
              t::reg::port_stride == SCALEUP_REG_PORT_STRIDE &&
              t::reg::link_status == SCALEUP_REG_LINK_STATUS &&
              t::reg::frames_sent == SCALEUP_REG_FRAMES_SENT &&
              t::reg::frames_received == SCALEUP_REG_FRAMES_RECEIVED &&
              t::reg::llr_replays == SCALEUP_REG_LLR_REPLAYS &&
              t::reg::credit_stalls == SCALEUP_REG_CREDIT_STALLS &&
              t::reg::pfc_paused == SCALEUP_REG_PFC_PAUSED &&
              t::reg::credits == SCALEUP_REG_CREDITS);
// The C config says the link as link_config_of(llr, cbfc_credits): the C++ default is that of
// (false, 0).
static_assert(!t::instance_config{}.link.llr && !t::instance_config{}.link.cbfc);
static_assert(t::instance_config{}.weights.size() == 4);
// A NULL profile in the C config is the C++ default.
static_assert(t::instance_config{}.profile == &pack::default_profile);

// The opaque handle of scaleup.h: which sizing and where notes go, then the instance
// (c_instance).
struct scaleup_instance {
  std::uint8_t sizing;
  void (*note_fn)(void* context, const scaleup_instance_note* n);
  void* note_context;
};

namespace {

// The sizing of a handle scaleup_instance_fini has finished: no SCALEUP_SIZING_*.
constexpr std::uint8_t finished = 0xFF;

template <class Sizing>
struct c_instance : scaleup_instance {
  c_instance(const t::instance_config& c, const pack::allocator& a) noexcept
      : scaleup_instance{scaleup::capi::sizing_of<Sizing>, nullptr, nullptr}, impl(c, a) {}
  t::sue_instance<Sizing> impl;
};

template <class Tag>
using instance_of = c_instance<typename Tag::type>;

template <class F>
decltype(auto) with(scaleup_instance* i, F&& f) noexcept {
  return scaleup::capi::by_sizing<c_instance>(i, f);
}
template <class F>
decltype(auto) with(const scaleup_instance* i, F&& f) noexcept {
  return scaleup::capi::by_sizing<c_instance>(i, f);
}

w::error bad(std::string_view what, std::string_view field, std::uint64_t value) noexcept {
  return w::error{
      .code = w::errc::bad_value, .layer = "sue", .what = what, .field = field, .value = value};
}

// What the C config can hold and the C++ one cannot: refused before the casts.
w::error c_check(const scaleup_instance_config& c) noexcept {
  if (!scaleup::capi::known_encap(c.frame.encap))
    return scaleup::capi::unknown_encap(c.frame.encap);
  if (c.keys > SCALEUP_KEYING_PORT_PEER) return bad("unknown keying", "keys", c.keys);
  return {};
}

t::instance_config cpp(const scaleup_instance_config& c) noexcept {
  t::instance_config x;
  x.xpuid = c.xpuid;
  x.ports = c.ports;
  x.vcs = c.vcs;
  x.unordered = c.unordered;
  x.lite = c.lite;
  x.frame = to_cpp(c.frame);
  x.profile = &scaleup::capi::profile_of(c.profile);
  x.pack_limit = c.pack_limit;
  for (std::size_t v = 0; v < x.weights.size(); ++v) x.weights[v] = c.weights[v];
  x.gbn = to_cpp(c.gbn);
  x.keys = static_cast<t::keying>(c.keys);
  x.partition = c.partition;
  x.link = t::link_config_of(c.llr, c.cbfc_credits);
  x.credits_per_destination = c.credits_per_destination;
  x.credits_aggregate = c.credits_aggregate;
  x.unreachable_after = c.unreachable_after;
  return x;
}

template <class Sizing>
w::error check(const scaleup_instance_config& c) noexcept {
  if (const w::error e = c_check(c)) return e;
  return t::sue_instance<Sizing>::check(cpp(c));
}

template <class Sizing>
scaleup_instance* build(void* storage, std::size_t size, const scaleup_instance_config& c,
                        const pack::allocator& mem, scaleup_error* err) noexcept {
  using object = c_instance<Sizing>;
  if (const w::error e = check<Sizing>(c)) {
    report(e, err);
    return nullptr;
  }
  auto* i = scaleup::capi::place<object>(storage, size, cpp(c), mem);
  report(i ? w::error{} : scaleup::capi::no_room("sue", scaleup::capi::room_for<object>(), size),
         err);
  return i;
}

scaleup_link_info c_link(const t::link_info& l) noexcept { return {l.llr, l.seq, l.cls, l.fcs_ok}; }
scaleup_link_message c_message(const t::link_message& m) noexcept {
  return {static_cast<std::uint8_t>(m.what), m.seq, m.update.cls, m.update.rsvd, m.update.limit};
}

void relay(void* context, const t::instance_note& n) {
  const auto* h = static_cast<const scaleup_instance*>(context);
  if (!h->note_fn) return;
  const scaleup_instance_note c{static_cast<std::uint8_t>(n.kind),
                                n.port,
                                n.to_port,
                                n.vc,
                                n.peer,
                                n.psn,
                                n.first_seq,
                                n.count,
                                static_cast<std::uint8_t>(n.why),
                                to_c(n.error),
                                c_message(n.message)};
  h->note_fn(h->note_context, &c);
}

// An event C can describe and C++ cannot (an unknown input or message kind) is refused here.
w::error event_of(const scaleup_instance_event& e, t::instance_event& x) noexcept {
  if (e.input > SCALEUP_INPUT_TICK)
    return bad("unknown instance input (SCALEUP_INPUT_*)", "input", e.input);
  if (e.input == SCALEUP_INPUT_LINK_MESSAGE && e.message.kind > SCALEUP_LINK_MESSAGE_CBFC_UPDATE)
    return bad("unknown link message (SCALEUP_LINK_MESSAGE_*)", "message.kind", e.message.kind);
  x.input = static_cast<t::instance_input>(e.input);
  x.port = e.port;
  x.peer = e.peer;
  x.vc = e.vc;
  x.send_now = e.send_now;
  x.up = e.up;
  x.control = in(e.control, e.control_len);
  x.data = in(e.data, e.data_len);
  x.bytes = in(e.bytes, e.bytes_len);
  x.link = t::link_info{e.link.llr, e.link.seq, e.link.cls, e.link.fcs_ok};
  x.out = out(e.out, e.out_len);
  x.message.what = static_cast<t::link_message::kind>(e.message.kind);
  x.message.seq = e.message.seq;
  x.message.update =
      t::cbfc_update{e.message.cbfc_class, e.message.cbfc_rsvd, e.message.cbfc_limit};
  return {};
}

int actions_of(const t::instance_actions& r, scaleup_instance_actions* a) noexcept {
  if (!a) return static_cast<int>(r.error.code);
  const t::instance_frame& f = r.frame;
  const t::instance_delivery& d = r.delivered;
  a->seq = r.seq;
  a->frame = scaleup_transmitted_frame{f.size,        static_cast<std::uint8_t>(f.kind),
                                       f.peer,        f.vc,
                                       f.psn,         static_cast<std::uint8_t>(f.op),
                                       f.apsn,        f.first_seq,
                                       f.commands,    f.moved,
                                       c_link(f.link)};
  a->delivered = scaleup_instance_delivery{d.valid, d.management,     d.src,           d.vc,
                                           d.port,  d.payload.data(), d.payload.size()};
  return report(r.error, &a->error);
}

int step(scaleup_instance* inst, std::uint64_t now, const t::instance_event& e,
         scaleup_instance_actions* a) noexcept {
  return with(inst, [&](auto& o) { return actions_of(o.impl.step(now, e), a); });
}

}  // namespace

extern "C" {

void scaleup_instance_config_init(scaleup_instance_config* c) {
  const t::instance_config d{};
  *c = scaleup_instance_config{};
  c->xpuid = d.xpuid;
  c->ports = d.ports;
  c->vcs = d.vcs;
  c->unordered = d.unordered;
  c->lite = d.lite;
  c->frame = to_c(d.frame);
  c->profile = nullptr;  // the default profile, d.profile
  c->pack_limit = d.pack_limit;
  for (std::size_t v = 0; v < d.weights.size(); ++v) c->weights[v] = d.weights[v];
  c->gbn = to_c(d.gbn);
  c->keys = static_cast<std::uint8_t>(d.keys);
  c->partition = d.partition;
  c->llr = d.link.llr;
  c->cbfc_credits = 0;
  c->credits_per_destination = d.credits_per_destination;
  c->credits_aggregate = d.credits_aggregate;
  c->unreachable_after = d.unreachable_after;
}

std::size_t scaleup_instance_size(int sizing) {
  return scaleup::capi::for_sizing(sizing, std::size_t{0}, [](auto tag) {
    return scaleup::capi::room_for<instance_of<decltype(tag)>>();
  });
}

// The instance's max_frame: the largest header in front of a PDU of the sizing's payload bound.
std::size_t scaleup_instance_frame_room(int sizing) {
  return scaleup::capi::for_sizing(sizing, std::size_t{0}, [](auto tag) {
    return 64 + w::pdu_size(decltype(tag)::type::max_payload);
  });
}

int scaleup_instance_check(int sizing, const scaleup_instance_config* c, scaleup_error* err) {
  scaleup_instance_config d;
  if (!c) {
    scaleup_instance_config_init(&d);
    c = &d;
  }
  return report(
      scaleup::capi::for_sizing(sizing, scaleup::capi::unknown_sizing("sue", sizing),
                                [c](auto tag) { return check<typename decltype(tag)::type>(*c); }),
      err);
}

scaleup_instance* scaleup_instance_init(void* storage, std::size_t size, int sizing,
                                        const scaleup_instance_config* c,
                                        const scaleup_allocator* allocator, scaleup_error* err) {
  scaleup_instance_config d;
  if (!c) {
    scaleup_instance_config_init(&d);
    c = &d;
  }
  scaleup_instance* i = nullptr;
  const bool known = scaleup::capi::for_sizing(sizing, false, [&](auto tag) {
    using sizing_t = typename decltype(tag)::type;
    pack::allocator mem{};
    if constexpr (sizing_t::storage::grows) {
      if (!allocator || !allocator->allocate || !allocator->release) {
        // heap_storage would fall back to malloc: a C caller opts in to a heap by passing one.
        report(w::error{.code = w::errc::bad_value,
                        .layer = "sue",
                        .what = "the fabric sizing takes memory only from an allocator the "
                                "caller passes",
                        .field = "allocator"},
               err);
        return true;
      }
      mem = pack::allocator{allocator->context, allocator->allocate, allocator->release};
    }
    i = build<sizing_t>(storage, size, *c, mem, err);
    return true;
  });
  if (!known) report(scaleup::capi::unknown_sizing("sue", sizing), err);
  return i;
}

void scaleup_instance_fini(scaleup_instance* inst) {
  if (!inst || inst->sizing == finished) return;
  with(inst, [](auto& o) { std::destroy_at(&o); });
  // The storage holds a handle that says so: a second fini (a cleanup path run twice) gives
  // nothing back twice.
  ::new (static_cast<void*>(inst)) scaleup_instance{finished, nullptr, nullptr};
}

void scaleup_instance_set_note_sink(scaleup_instance* inst,
                                    void (*fn)(void* context, const scaleup_instance_note* n),
                                    void* context) {
  inst->note_fn = fn;
  inst->note_context = context;
  with(inst, [&](auto& o) { o.impl.set_notes(fn ? t::note_sink{inst, relay} : t::note_sink{}); });
}

int scaleup_instance_step(scaleup_instance* inst, std::uint64_t now,
                          const scaleup_instance_event* e, scaleup_instance_actions* a) {
  t::instance_event x;
  if (e) {
    if (const w::error bad_event = event_of(*e, x)) {
      if (a) *a = scaleup_instance_actions{};
      return report(bad_event, a ? &a->error : nullptr);
    }
  }
  return step(inst, now, x, a);
}

int scaleup_instance_command(scaleup_instance* inst, std::uint64_t now, std::uint16_t peer,
                             std::uint8_t vc, const std::uint8_t* control, std::size_t control_len,
                             const std::uint8_t* data, std::size_t data_len, bool send_now,
                             scaleup_instance_actions* a) {
  return step(
      inst, now,
      t::instance_event::command(peer, vc, in(control, control_len), in(data, data_len), send_now),
      a);
}

int scaleup_instance_frame(scaleup_instance* inst, std::uint64_t now, std::uint8_t port,
                           const std::uint8_t* bytes, std::size_t len,
                           scaleup_instance_actions* a) {
  return step(inst, now, t::instance_event::frame(port, in(bytes, len)), a);
}

int scaleup_instance_transmit(scaleup_instance* inst, std::uint64_t now, std::uint8_t port,
                              std::uint8_t* o, std::size_t out_len, scaleup_instance_actions* a) {
  return step(inst, now, t::instance_event::transmit(port, out(o, out_len)), a);
}

int scaleup_instance_tick(scaleup_instance* inst, std::uint64_t now, scaleup_instance_actions* a) {
  return step(inst, now, t::instance_event::tick(), a);
}

void scaleup_instance_event_init(scaleup_instance_event* e) {
  const t::instance_event d{};
  *e = scaleup_instance_event{};
  e->input = static_cast<std::uint8_t>(d.input);
  e->up = d.up;
  e->link = c_link(d.link);
  e->message = c_message(d.message);
}

std::uint64_t scaleup_instance_deadline(const scaleup_instance* inst) {
  return with(inst, [](const auto& o) { return o.impl.deadline(); });
}

bool scaleup_instance_port_ready(const scaleup_instance* inst, std::uint8_t port) {
  return with(inst, [port](const auto& o) {
    return port < o.impl.config().ports && o.impl.port_ready(port);
  });
}

std::uint8_t scaleup_instance_ready_ports(const scaleup_instance* inst) {
  return with(inst, [](const auto& o) { return o.impl.ready_ports(); });
}

std::uint32_t scaleup_instance_credits(const scaleup_instance* inst, std::uint16_t peer,
                                       std::uint8_t vc) {
  return with(inst, [&](const auto& o) { return o.impl.credits(peer, vc); });
}

void scaleup_instance_stats(const scaleup_instance* inst, scaleup_instance_counters* out) {
  with(inst, [out](const auto& o) {
    const t::instance_stats& s = o.impl.stats();
    *out = scaleup_instance_counters{s.commands,          s.refused,         s.pdus,
                                     s.retransmissions,   s.acks_only,       s.frames,
                                     s.acks_sent,         s.nacks_sent,      s.delivered,
                                     s.delivered_bytes,   s.completed,       s.failed,
                                     s.dropped,           s.duplicates,      s.gaps,
                                     s.bad_rcrc,          s.partition,       s.unreachable,
                                     s.peers_unreachable, s.failovers,       s.moved,
                                     s.control_sent,      s.management_sent, s.management_received,
                                     s.management_refused};
  });
}

bool scaleup_instance_read_register(const scaleup_instance* inst, std::uint32_t address,
                                    std::uint32_t* value) {
  const auto r = with(inst, [address](const auto& o) { return o.impl.read_register(address); });
  if (r && value) *value = *r;
  return r.has_value();
}

bool scaleup_instance_write_register(scaleup_instance* inst, std::uint64_t now,
                                     std::uint32_t address, std::uint32_t value) {
  return with(inst, [&](auto& o) { return o.impl.write_register(now, address, value); });
}

}  // extern "C"
