// Tofu slices: the input is a series of records (2-byte little-endian length, then the record)
// fed to a record_collector, reassembling whenever a frame is complete; the first byte also
// picks a direct reassemble() of the remaining input cut into 2 or 4 slices.
#include <array>
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/tofu/slicer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scaleup;
  if (size == 0) return 0;
  static tofu::record_collector collector;
  static tofu::frame_buffer frame{};
  collector = tofu::record_collector{};
  const std::uint8_t mode = data[0];
  const wire::bytes in(data + 1, size - 1);
  if (mode & 0x80) {
    // Direct: cut into equal slices.
    const std::size_t lanes = (mode & 1) ? 4 : 2;
    const std::size_t each = in.size() / lanes;
    std::array<wire::bytes, 4> s{};
    for (std::size_t l = 0; l < lanes; ++l) s[l] = in.subspan(l * each, each);
    const auto r = tofu::reassemble(std::span<const wire::bytes>(s.data(), lanes),
                                    wire::mutable_bytes(frame.data(), frame.size()));
    if (r) fuzz::check(r->size <= frame.size(), "tofu: frame larger than its buffer");
    return 0;
  }
  std::size_t at = 0;
  while (at + 2 <= in.size()) {
    const std::size_t len = std::size_t{in[at]} | (std::size_t{in[at + 1]} << 8);
    at += 2;
    const std::size_t n = len < in.size() - at ? len : in.size() - at;
    const auto got = collector.push(in.subspan(at, n));
    at += n;
    if (got.err) fuzz::check(!got.complete, "tofu: complete despite an error");
    if (!got.complete) continue;
    fuzz::check(collector.complete(), "tofu: outcome and collector disagree");
    const auto r = collector.reassemble(wire::mutable_bytes(frame.data(), frame.size()));
    if (r) fuzz::check(r->size <= frame.size(), "tofu: frame larger than its buffer");
  }
  return 0;
}
