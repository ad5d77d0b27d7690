// The captures of the hash-flooding rows of `./run bench`: N frames over Ethernet/UDP/IPv6, each
// a valid SUE PDU (RH, one command, R-CRC) from a source address of its own to one destination,
// so each frame is a UDP flow and a connection of its own. `crafted`: sources whose hash under
// the tables' old linear mix is one value (collisions.hpp), the worst case of that mix; `random`:
// sources drawn at random from the same prefix. With keyed tables the two read alike.
//
//   crafted_capture crafted|random N FILE
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "collisions.hpp"
#include "scaleup/pcap/writer.hpp"

int main(int argc, char** argv) {
  namespace c = scaleup::collisions;
  namespace w = scaleup::wire;
  const std::string_view kind = argc == 4 ? argv[1] : "";
  if (kind != "crafted" && kind != "random") {
    std::fprintf(stderr, "usage: crafted_capture crafted|random N FILE\n");
    return 2;
  }
  const unsigned long n = std::strtoul(argv[2], nullptr, 10);
  std::string error;
  auto out =
      scaleup::pcap::writer::create(argv[3], scaleup::pcap::link_type::ethernet, 65535, error);
  if (!out) {
    std::fprintf(stderr, "crafted_capture: %s\n", error.c_str());
    return 1;
  }
  const w::ip_address dst = w::ip_address::v6(w::xpu_ipv6(2));
  std::mt19937_64 rng(1);
  for (unsigned long i = 0; i < n; ++i) {
    const std::uint64_t w0 = c::documentation_word(static_cast<std::uint32_t>(i));
    const w::ip_address src =
        kind == "crafted"
            ? c::colliding_v6(w0, 0x5ca1ab1e0ddba11ull)
            : w::ip_address::v6(std::bit_cast<w::ipv6_address>(std::array{w0, rng()}));
    const auto frame = c::udp6_pdu(src, dst, static_cast<std::uint16_t>(i));
    if (!frame || !out->write(*frame, 1'700'000'000'000'000'000ull + i * 1000)) {
      std::fprintf(stderr, "crafted_capture: %s\n", frame ? out->error().c_str() : "frame");
      return 1;
    }
  }
  return out->close() ? 0 : 1;
}
