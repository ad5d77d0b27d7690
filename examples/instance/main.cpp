// Two XPUs' SUE instances over the user's own channel: each offers the other 2 000 posted
// writes, one frame in ten is lost each way, and each side must receive every write exactly
// once and in order (the exit status says whether it did). The instance packs the commands,
// numbers and acknowledges the PDUs (go-back-N) and frames them (UDP over IPv4 here); the
// channel, the clock and the pace of the ports are the caller's. The code between the markers
// is the README's, line for line (the test example_instance_readme compares them).
// README: begin
#include <cstdio>
#include <deque>
#include <random>
#include <scaleup/transport/instance.hpp>
#include <vector>
using namespace scaleup;
using sue = transport::sue_instance<transport::firmware_sizing>;  // one peer, no heap

int main() {
  constexpr std::uint16_t n = 2'000;
  sue xpu[2] = {sue({.xpuid = 1}), sue({.xpuid = 2})};
  std::deque<std::pair<std::uint64_t, std::vector<std::uint8_t>>> wire[2];  // to xpu[i]
  std::minstd_rand rng(7);
  std::uint16_t sent[2]{}, got[2]{}, wrong = 0;
  for (std::uint64_t now = 0; (got[0] < n || got[1] < n) && now < 1'000'000'000; now += 50)
    for (int i : {0, 1}) {
      for (auto& in = wire[i]; !in.empty() && in.front().first <= now; in.pop_front()) {
        auto r = xpu[i].step(now, transport::instance_event::frame(0, in.front().second));
        pack::unpacker u(pack::default_profile, r.delivered.payload);  // the commands it carried
        for (pack::command_view c; r.delivered.valid && u.next(c); ++got[i])
          wrong += wire::decode<pack::cmd_write>(c.control)->tag != got[i];
      }
      std::uint8_t cmd[12 + 8]{};  // a posted write of 8 bytes, its tag the number
      (void)wire::encode(
          pack::cmd_write{.type = pack::code::write_full_posted, .dlen = 7, .tag = sent[i]}, cmd);
      using transport::instance_event;  // a command is refused while its credits are used up
      if (sent[i] < n &&
          !xpu[i].step(now, instance_event::command(2 - i, 0, {cmd, 12}, {cmd + 12, 8})).error)
        ++sent[i];
      if (xpu[i].deadline() <= now) xpu[i].step(now, instance_event::tick());  // timers due
      std::uint8_t frame[512];  // the port sends a frame every 50 ns: one in ten is lost
      auto t = xpu[i].step(now, instance_event::transmit(0, frame));
      if (t.frame.size && rng() % 10)
        wire[1 - i].push_back({now + 500, {frame, frame + t.frame.size}});
    }
  std::printf("received %u and %u, %u out of order\n", got[0], got[1], wrong);
  return got[0] == n && got[1] == n && wrong == 0 ? 0 : 1;
}
// README: end
