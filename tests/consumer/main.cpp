// Builds against an installed scaleup: encodes a Reliability Header and links libpcap.
#include <cstdio>

#include <pcap/pcap.h>

#include <scaleup/wire/reliability_header.hpp>

int main() {
  scaleup::wire::reliability_header h{};
  h.xpuid = 5;
  h.npsn = 7;
  const auto bytes = scaleup::wire::to_bytes(h);
  if (!bytes.ok()) {
    std::fprintf(stderr, "to_bytes failed\n");
    return 1;
  }
  const auto& b = bytes.value;
  std::printf("rh = %02x %02x %02x %02x %02x %02x %02x %02x; %s\n", b[0], b[1], b[2], b[3], b[4],
              b[5], b[6], b[7], pcap_lib_version());
  if (b[1] != 0x05 || b[3] != 0x07) {
    std::fprintf(stderr, "unexpected encoding: byte 1 = 0x%02x, byte 3 = 0x%02x\n", b[1], b[3]);
    return 1;
  }
  return 0;
}
