// The capture reader (pcap and pcapng) over the input as a file's bytes: every packet it
// returns lies within the input and its limits, belongs to an interface the file described,
// and the reader ends with end or error after finitely many packets.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common.hpp"
#include "scaleup/pcap/reader.hpp"

namespace cap = scaleup::pcap;  // not `pcap`: libpcap has a struct of that name
namespace fuzz = scaleup::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  std::string err;
  auto r = cap::reader::open(std::make_unique<cap::memory_source>(input), "input", err);
  if (!r) {
    fuzz::check(!err.empty(), "capture: refused without a message");
    return 0;
  }
  (void)r->link();
  (void)r->snaplen();
  cap::packet pkt{};
  for (std::uint64_t n = 1;; ++n) {
    const auto st = r->next(pkt);
    if (st != cap::reader::status::packet) {
      fuzz::check(st == cap::reader::status::end || !r->error().empty(),
                  "capture: an error without a message");
      fuzz::check(r->next(pkt) == st, "capture: the final status changed");
      break;
    }
    fuzz::check(pkt.number == n, "capture: packets misnumbered");
    fuzz::check(pkt.data.size() == pkt.caplen, "capture: data and caplen differ");
    fuzz::check(pkt.caplen <= cap::max_record, "capture: caplen above the reader's limit");
    fuzz::check(pkt.caplen <= size, "capture: packet larger than the file");
    fuzz::check(pkt.precision <= cap::nano_digits, "capture: precision beyond nanoseconds");
    const auto ifaces = r->interfaces();
    fuzz::check(pkt.interface < ifaces.size(), "capture: packet on an undescribed interface");
    fuzz::check(pkt.link == ifaces[pkt.interface].link, "capture: link type not the interface's");
    // The packet's bytes are the input's bytes (the reader copies, never invents); touching
    // every one lets AddressSanitizer check the span.
    fuzz::check(pkt.data.empty() || std::search(input.begin(), input.end(), pkt.data.begin(),
                                                pkt.data.end()) != input.end(),
                "capture: packet bytes not found in the file");
    fuzz::check(n <= size, "capture: more packets than bytes");
  }
  return 0;
}
