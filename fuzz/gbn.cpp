// Go-back-N: the bytes drive a sender and a receiver over a tiny lossy, reordering channel.
// After every step: nothing is delivered twice or out of order, in_flight <= window, and the
// receiver never runs ahead of what the sender has assigned.
#include <array>
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/transport/go_back_n.hpp"

namespace {

using namespace scaleup;
using namespace scaleup::transport;

constexpr unsigned bits = 8;  // a small PSN space, so wrap-around is reached quickly
using psn_t = psn<bits>;

// A channel of a few slots each way; a slot holds one PSN (data) or one ACK/NACK.
struct slot {
  bool used = false;
  bool nack = false;
  psn_t p{};
  std::uint64_t born = 0;  // PDUs assigned when it was sent: older ones have left the network
};

// A real network bounds how long a packet lives; PSNs are only unambiguous within that bound.
constexpr std::uint64_t max_age = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  gbn_config c;
  c.window = 1 + data[0] % 16;  // well below half the PSN space
  c.rto = 50;
  c.max_retries = 1000000;
  c.ack_every = 1 + (data[0] >> 4) % 4;
  c.ack_delay = 10;
  gbn_sender<bits> s;
  gbn_receiver<bits> r;
  std::array<slot, 4> to_rx{}, to_tx{};
  std::uint64_t now = 0;
  std::uint64_t assigned = 0;   // PDUs given a PSN so far (an absolute count)
  std::uint64_t delivered = 0;  // PDUs delivered so far; each must be the next in order
  std::uint64_t una_abs = 0;    // absolute count acknowledged

  const auto put = [](std::array<slot, 4>& ch, std::size_t i, slot v) { ch[i % ch.size()] = v; };

  for (std::size_t k = 1; k < size; ++k) {
    const std::uint8_t b = data[k];
    const std::size_t i = (b >> 3) & 3;
    switch (b & 7) {
      case 0: {  // the caller has a new PDU
        const auto [s2, a] = step(s, sender_event<bits>{sender_input::send, {}}, now, c);
        s = s2;
        if (a.assigned) {
          fuzz::check(a.psn_assigned == psn_t(static_cast<std::uint32_t>(assigned)),
                      "gbn: PSN assigned out of sequence");
          ++assigned;
          put(to_rx, i, slot{true, false, a.psn_assigned, assigned});
        }
        break;
      }
      case 1:  // a data slot arrives at the receiver
      case 2: {
        slot& sl = to_rx[i];
        if (!sl.used) break;
        if (assigned - sl.born > max_age) {
          sl.used = false;
          break;
        }
        if (b & 0x20) sl.used = false;  // otherwise it stays: a duplicate may follow
        const auto [r2, a] =
            step(r, receiver_event<bits>{receiver_input::pdu, sl.p, (b & 0xc0) != 0xc0}, now, c);
        r = r2;
        if (a.deliver) {
          fuzz::check(sl.p == psn_t(static_cast<std::uint32_t>(delivered)),
                      "gbn: delivered out of order or twice");
          ++delivered;
          fuzz::check(delivered <= assigned, "gbn: delivered a PDU never sent");
        }
        break;
      }
      case 3: {  // the receiver sends its pending ACK/NACK
        const auto [op, apsn] = pending_ack(r);
        if (op != wire::rh_op::none)
          put(to_tx, i, slot{true, op == wire::rh_op::nack, apsn, assigned});
        r = step(r, receiver_event<bits>{receiver_input::ack_sent, {}}, now, c).first;
        break;
      }
      case 4: {  // an ACK/NACK arrives at the sender
        slot& sl = to_tx[i];
        if (!sl.used) break;
        if (assigned - sl.born > max_age) {
          sl.used = false;
          break;
        }
        sl.used = false;
        const auto in = sl.nack ? sender_input::nack : sender_input::ack;
        const auto [s2, a] = step(s, sender_event<bits>{in, sl.p}, now, c);
        s = s2;
        una_abs += a.released;
        fuzz::check(una_abs <= delivered, "gbn: released PDUs not yet delivered");
        if (a.resend > 0) {
          fuzz::check(a.resend <= s.in_flight(), "gbn: resends more than in flight");
          put(to_rx, i, slot{true, false, a.resend_from, assigned});
        }
        break;
      }
      case 5: {  // time passes; both timers may fire
        now += 1 + (b >> 3);
        const auto [s2, a] = step(s, sender_event<bits>{sender_input::tick, {}}, now, c);
        s = s2;
        if (a.resend > 0) put(to_rx, i, slot{true, false, a.resend_from, assigned});
        r = step(r, receiver_event<bits>{receiver_input::tick, {}}, now, c).first;
        break;
      }
      case 6:  // loss
        to_rx[i].used = false;
        break;
      default:
        to_tx[i].used = false;
        break;
    }
    fuzz::check(s.in_flight() <= c.window, "gbn: in_flight above the window");
    fuzz::check(s.in_flight() == assigned - una_abs, "gbn: in_flight disagrees with the counts");
    fuzz::check(r.delivered == delivered, "gbn: receiver count disagrees");
  }
  return 0;
}
