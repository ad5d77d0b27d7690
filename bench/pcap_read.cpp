// The limit for `scaleup dump` and `scaleup stats`: a bare read loop that
// touches every frame's bytes and nothing else, through libpcap (the baseline) or through the
// library's own capture reader (what dump and stats use). Prints the frame and byte
// counts.
//
//   pcap_read [--reader] FILE
#include <pcap/pcap.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "scaleup/pcap/reader.hpp"

namespace {

struct counts {
  std::uint64_t frames = 0, bytes = 0, sum = 0;
  void add(const std::uint8_t* data, std::uint32_t caplen) {
    ++frames;
    bytes += caplen;
    if (caplen > 0) sum += data[caplen - 1];
  }
};

bool with_libpcap(const char* path, counts& c) {
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(path, err);
  if (p == nullptr) {
    std::fprintf(stderr, "pcap_read: %s\n", err);
    return false;
  }
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int r = 0;
  while ((r = pcap_next_ex(p, &h, &data)) == 1) c.add(data, h->caplen);
  const bool ok = r == PCAP_ERROR_BREAK;
  if (!ok) std::fprintf(stderr, "pcap_read: %s\n", pcap_geterr(p));
  pcap_close(p);
  return ok;
}

bool with_reader(const char* path, counts& c) {
  namespace cap = scaleup::pcap;
  std::string err;
  auto r = cap::reader::open(path, err);
  if (!r) {
    std::fprintf(stderr, "pcap_read: %s\n", err.c_str());
    return false;
  }
  cap::packet p;
  cap::reader::status st;
  while ((st = r->next(p)) == cap::reader::status::packet) c.add(p.data.data(), p.caplen);
  if (st == cap::reader::status::error) std::fprintf(stderr, "pcap_read: %s\n", r->error().c_str());
  return st == cap::reader::status::end;
}

}  // namespace

int main(int argc, char** argv) {
  const bool reader = argc == 3 && std::strcmp(argv[1], "--reader") == 0;
  if (argc != 2 && !reader) {
    std::fprintf(stderr, "usage: pcap_read [--reader] FILE\n");
    return 2;
  }
  counts c;
  const bool ok = reader ? with_reader(argv[2], c) : with_libpcap(argv[1], c);
  std::printf("%llu frames, %llu bytes (%llu)\n", static_cast<unsigned long long>(c.frames),
              static_cast<unsigned long long>(c.bytes),
              static_cast<unsigned long long>(c.sum & 0xFF));
  return ok ? 0 : 1;
}
