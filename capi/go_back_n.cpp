// The go-back-N machines for C: transport::gbn_sender<16> and gbn_receiver<16> as plain C
// values, copied in, stepped by transport::step and copied back.
#include "scaleup/transport/go_back_n.hpp"
#include "c_abi.hpp"

namespace t = scaleup::transport;
namespace w = scaleup::wire;
using scaleup::capi::report;
using scaleup::capi::to_cpp;

static_assert(static_cast<int>(t::sender_input::tick) == SCALEUP_GBN_SENDER_TICK);
static_assert(static_cast<int>(t::receiver_input::ack_sent) == SCALEUP_GBN_RECEIVER_ACK_SENT);
static_assert(static_cast<int>(w::rh_op::nack) == SCALEUP_RH_OP_NACK);

namespace {

using psn = t::psn<16>;

t::gbn_sender<16> cpp(const scaleup_gbn_sender& c) noexcept {
  t::gbn_sender<16> s;
  s.next = psn(c.next);
  s.una = psn(c.una);
  s.timing = c.timing;
  s.deadline = c.deadline;
  s.retries = c.retries;
  s.unreachable = c.unreachable;
  s.sent = c.sent;
  s.resent = c.resent;
  s.nacks = c.nacks;
  s.timeouts = c.timeouts;
  return s;
}
scaleup_gbn_sender c_of(const t::gbn_sender<16>& s) noexcept {
  return {s.next.value,  s.una.value, s.timing, s.deadline, s.retries,
          s.unreachable, s.sent,      s.resent, s.nacks,    s.timeouts};
}

t::gbn_receiver<16> cpp(const scaleup_gbn_receiver& c) noexcept {
  t::gbn_receiver<16> r;
  r.expected = psn(c.expected);
  r.nacked = c.nacked;
  r.nack_due = c.nack_due;
  r.ack_due = c.ack_due;
  r.unacked = c.unacked;
  r.ack_timing = c.ack_timing;
  r.ack_deadline = c.ack_deadline;
  r.delivered = c.delivered;
  r.duplicates = c.duplicates;
  r.dropped_gap = c.dropped_gap;
  r.dropped_partition = c.dropped_partition;
  r.acks_sent = c.acks_sent;
  r.nacks_sent = c.nacks_sent;
  return r;
}
scaleup_gbn_receiver c_of(const t::gbn_receiver<16>& r) noexcept {
  return {r.expected.value,    r.nacked,       r.nack_due,  r.ack_due,    r.unacked,
          r.ack_timing,        r.ack_deadline, r.delivered, r.duplicates, r.dropped_gap,
          r.dropped_partition, r.acks_sent,    r.nacks_sent};
}

t::gbn_config config(const scaleup_gbn_config* c) noexcept {
  return c ? to_cpp(*c) : t::gbn_config{};
}

w::error unknown_input(int input) noexcept {
  return w::error{.code = w::errc::bad_value,
                  .layer = "sue",
                  .what = "unknown go-back-N input",
                  .field = "input",
                  .value = static_cast<std::uint64_t>(input)};
}

}  // namespace

extern "C" {

void scaleup_gbn_sender_init(scaleup_gbn_sender* s) { *s = c_of(t::gbn_sender<16>{}); }
void scaleup_gbn_receiver_init(scaleup_gbn_receiver* r) { *r = c_of(t::gbn_receiver<16>{}); }

int scaleup_gbn_sender_step(scaleup_gbn_sender* s, int input, std::uint16_t apsn, std::uint64_t now,
                            const scaleup_gbn_config* c, scaleup_gbn_sender_actions* a) {
  if (input < 0 || input > SCALEUP_GBN_SENDER_TICK) return report(unknown_input(input), nullptr);
  const auto [next, r] = t::step(
      cpp(*s), t::sender_event<16>{static_cast<t::sender_input>(input), psn(apsn)}, now, config(c));
  *s = c_of(next);
  if (a)
    *a = {r.assigned, r.psn_assigned.value, r.window_full, r.released, r.released_from.value,
          r.resend,   r.resend_from.value,  r.unreachable};
  return 0;
}

int scaleup_gbn_receiver_step(scaleup_gbn_receiver* rx, int input, std::uint16_t npsn,
                              bool partition_ok, std::uint64_t now, const scaleup_gbn_config* c,
                              scaleup_gbn_receiver_actions* a) {
  if (input < 0 || input > SCALEUP_GBN_RECEIVER_ACK_SENT)
    return report(unknown_input(input), nullptr);
  const auto [next, r] =
      t::step(cpp(*rx),
              t::receiver_event<16>{static_cast<t::receiver_input>(input), psn(npsn), partition_ok},
              now, config(c));
  *rx = c_of(next);
  if (a) *a = {r.deliver, static_cast<std::uint8_t>(r.dropped), r.ack_now};
  return 0;
}

int scaleup_gbn_pending_ack(const scaleup_gbn_receiver* r, std::uint16_t* apsn) {
  const auto [op, p] = t::pending_ack(cpp(*r));
  if (apsn) *apsn = op == w::rh_op::none ? 0 : p.value;
  return static_cast<int>(op);
}

}  // extern "C"
