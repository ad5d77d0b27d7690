// Two go-back-N endpoints over the user's own lossy channel: each sends the other 10 000
// numbered payloads, one PDU in ten is lost each way, and each side must receive every number
// exactly once and in order (the exit status says whether it did). The code between the
// markers is the README's, line for line (the test example_endpoint_readme compares them).
// README: begin
#include <cstdio>
#include <deque>
#include <random>
#include <scaleup/transport/endpoint.hpp>
#include <vector>
using namespace scaleup;
using ep_t = transport::endpoint<64, 4>;  // 64 PDUs in flight, payloads of up to 4 bytes

struct channel {  // one way: 500 ns of delay, one PDU in ten lost
  std::minstd_rand rng{7};
  std::deque<std::pair<std::uint64_t, std::vector<std::uint8_t>>> q;
  void put(std::uint64_t now, std::span<const transport::outgoing_pdu> pdus) {
    for (const auto& p : pdus)
      if (rng() % 10 != 0) q.push_back({now + 500, {p.bytes.begin(), p.bytes.end()}});
  }
};
int main() {
  constexpr std::uint32_t n = 10'000;
  ep_t ep[2] = {ep_t({.xpuid = 1}), ep_t({.xpuid = 2})};
  channel to[2];  // to[i]: from ep[i] to the other
  std::uint32_t sent[2]{}, received[2]{}, wrong = 0;
  for (std::uint64_t now = 0; received[0] + received[1] < 2 * n && now < 10'000'000'000; now += 50)
    for (int i : {0, 1}) {
      for (auto& in = to[1 - i].q; !in.empty() && in.front().first <= now; in.pop_front()) {
        auto r = ep[i].step({transport::endpoint_input::arrived, in.front().second}, now);
        if (!r.delivered.empty()) wrong += wire::load_be32(r.delivered.data()) != received[i]++;
        to[i].put(now, r.transmit);
      }
      std::uint8_t number[4];
      wire::store_be32(number, sent[i]);
      using enum transport::endpoint_input;          // a full window refuses a send: try again
      if (sent[i] < n || ep[i].deadline() <= now) {  // deadline: a retransmit or an ACK is due
        auto r = ep[i].step({sent[i] < n ? send : tick, number}, now);
        sent[i] += r.accepted;
        to[i].put(now, r.transmit);
      }
    }
  std::printf("received %u and %u, %u out of order\n", received[0], received[1], wrong);
  return received[0] == n && received[1] == n && wrong == 0 ? 0 : 1;
}
// README: end
