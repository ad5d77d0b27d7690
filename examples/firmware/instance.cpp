// Until the C ABI has the SUE instance: the C++ library's, behind the C interface.
// The SUE instance as a firmware runs it (transport::sue_instance with firmware_sizing: one
// peer, one port, no heap): this XPU and, for the self-test, its peer, each in static storage,
// exchange posted writes over a wire that loses one frame; go-back-N repairs it and every write
// arrives once and in order.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/receive.hpp>
#include <scaleup/transport/instance.hpp>

#define _Noreturn [[noreturn]]
extern "C" {
#include "firmware.h"
}

namespace {

using namespace scaleup;
using sue = transport::sue_instance<transport::firmware_sizing>;

std::array<std::uint8_t, 512> frame{};

}  // namespace

extern "C" int fw_instance_selftest(void* storage, std::size_t size) {
  void* at = storage;
  if (!std::align(alignof(sue), 2 * sizeof(sue), at, size)) return 5;
  auto* s = static_cast<std::uint8_t*>(at);
  sue* xpu[2] = {new (s) sue({.xpuid = 1}), new (s + sizeof(sue)) sue({.xpuid = 2})};
  constexpr std::uint16_t writes = 12;
  std::uint16_t sent[2]{}, got[2]{};
  int lost = 0;
  for (std::uint64_t now = 0; (got[0] < writes || got[1] < writes) && now < 10'000'000; now += 50)
    for (int i : {0, 1}) {
      std::uint8_t cmd[12 + 8]{};  // a posted write of 8 bytes, its tag the number
      if (!wire::encode(
              pack::cmd_write{.type = pack::code::write_full_posted, .dlen = 7, .tag = sent[i]},
              wire::mutable_bytes(cmd, 12)))
        return 1;
      using transport::instance_event;
      if (sent[i] < writes &&
          !xpu[i]
               ->step(now, instance_event::command(static_cast<std::uint16_t>(2 - i), 0, {cmd, 12},
                                                   {cmd + 12, 8}))
               .error)
        ++sent[i];
      if (xpu[i]->deadline() <= now) xpu[i]->step(now, instance_event::tick());
      const auto t = xpu[i]->step(now, instance_event::transmit(0, frame));
      if (t.frame.size == 0) continue;
      if (i == 0 && t.frame.commands > 0 && lost++ == 2) continue;  // the third PDU is lost
      // The wire: the peer takes the frame at once.
      const auto r = xpu[1 - i]->step(now, instance_event::frame(0, {frame.data(), t.frame.size}));
      pack::unpacker u(pack::default_profile, r.delivered.payload);
      for (pack::command_view c; r.delivered.valid && u.next(c); ++got[1 - i]) {
        const auto w = wire::decode<pack::cmd_write>(c.control);
        if (!w || w->tag != got[1 - i]) return 2;  // out of order or damaged
      }
    }
  if (got[0] != writes || got[1] != writes) return 3;
  if (xpu[0]->stats().retransmissions == 0) return 4;  // the lost PDU was sent again
  return 0;
}
