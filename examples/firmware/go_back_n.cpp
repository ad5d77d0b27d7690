// Until the C ABI has the go-back-N endpoint: the C++ library's, behind the C interface.
#include "scaleup/transport/go_back_n.hpp"
#define _Noreturn [[noreturn]]
extern "C" {
#include "firmware.h"
}

namespace {
using namespace scaleup::transport;
constexpr gbn_config config{.window = 8};
gbn_sender<16> tx;
gbn_receiver<16> rx;
std::uint64_t clock_ns = 0;
}  // namespace

extern "C" {

int fw_gbn_send() {
  const auto [s, a] = step(tx, sender_event<16>{sender_input::send, {}}, clock_ns, config);
  tx = s;
  return a.assigned ? a.psn_assigned.value : -1;
}

void fw_gbn_sender_ack(std::uint16_t apsn, bool nack, std::uint32_t* resend, std::uint16_t* from) {
  const auto [s, a] =
      step(tx, sender_event<16>{nack ? sender_input::nack : sender_input::ack, psn<16>(apsn)},
           clock_ns, config);
  tx = s;
  *resend = a.resend;
  *from = a.resend_from.value;
}

bool fw_gbn_receive(std::uint16_t npsn, std::uint64_t now) {
  clock_ns = now;
  const auto [r, a] = step(rx, receiver_event<16>{receiver_input::pdu, psn<16>(npsn)}, now, config);
  rx = r;
  return a.deliver;
}

bool fw_gbn_pending_ack(std::uint8_t* op, std::uint16_t* apsn) {
  const auto [o, p] = pending_ack(rx);
  if (o == scaleup::wire::rh_op::none) return false;
  *op = static_cast<std::uint8_t>(o);
  *apsn = p.value;
  rx = step(rx, receiver_event<16>{receiver_input::ack_sent, {}}, clock_ns, config).first;
  return true;
}
}
