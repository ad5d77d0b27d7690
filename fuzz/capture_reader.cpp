// The capture reader on a file holding the input: every packet it returns lies within its
// limits, and it ends with end or error after finitely many packets.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common.hpp"
#include "scaleup/pcap/capture.hpp"

namespace {

// One temporary file per process, rewritten for each input and removed at exit. The name lives
// in a plain array: it must outlive every destructor, since the exit handler reads it.
char temp_name[4096];

const char* temp_path() {
  if (temp_name[0] == 0) {
    const std::string p =
        (std::filesystem::temp_directory_path() / "scaleup-fuzz-capture-XXXXXX").string();
    if (p.size() >= sizeof temp_name) scaleup::fuzz::fail("temporary directory name too long");
    p.copy(temp_name, p.size());
    const int fd = mkstemp(temp_name);
    if (fd < 0) scaleup::fuzz::fail("cannot create a temporary file");
    close(fd);
    std::atexit([] { std::remove(temp_name); });
  }
  return temp_name;
}

}  // namespace

namespace cap = scaleup::pcap;  // not `pcap`: libpcap has a struct of that name
namespace fuzz = scaleup::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = temp_path();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fuzz::fail("cannot write the temporary file");
    if (size > 0 && std::fwrite(data, 1, size, f) != size) fuzz::fail("short write");
    std::fclose(f);
  }
  std::string err;
  auto r = cap::reader::open(path, err);
  if (!r) return 0;
  (void)r->link();
  cap::packet pkt{};
  for (std::uint64_t n = 1;; ++n) {
    const auto st = r->next(pkt);
    if (st != cap::reader::status::packet) break;
    fuzz::check(pkt.number == n, "capture: packets misnumbered");
    fuzz::check(pkt.data.size() == pkt.caplen, "capture: data and caplen differ");
    fuzz::check(pkt.caplen <= cap::max_snaplen, "capture: caplen above the maximum");
    fuzz::check(pkt.caplen <= size, "capture: packet larger than the file");
    std::size_t sum = 0;
    for (const auto byte : pkt.data) sum += byte;
    (void)sum;
    fuzz::check(n <= size, "capture: more packets than bytes");
  }
  return 0;
}
