// The limit for `scaleup dump` and `scaleup stats` (issue 10, item 6): a bare libpcap read loop
// that touches every frame's bytes and nothing else. Prints the frame and byte counts.
//
//   pcap_read FILE
#include <pcap/pcap.h>

#include <cstdint>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pcap_read FILE\n");
    return 2;
  }
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(argv[1], err);
  if (p == nullptr) {
    std::fprintf(stderr, "pcap_read: %s\n", err);
    return 1;
  }
  std::uint64_t frames = 0, bytes = 0, sum = 0;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int r = 0;
  while ((r = pcap_next_ex(p, &h, &data)) == 1) {
    ++frames;
    bytes += h->caplen;
    if (h->caplen > 0) sum += data[h->caplen - 1];
  }
  const bool ok = r == PCAP_ERROR_BREAK;
  if (!ok) std::fprintf(stderr, "pcap_read: %s\n", pcap_geterr(p));
  pcap_close(p);
  std::printf("%llu frames, %llu bytes (%llu)\n", static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(sum & 0xFF));
  return ok ? 0 : 1;
}
