// IP reassembly: the input is a script of fragments. The first byte sets the limits (pending
// datagrams, bytes held, age); then each fragment is 6 bytes: flags (bit 0 IPv6, bit 1 MF,
// bits 2-3 which of four datagram ids, bit 4 cut short by the capture), the offset in 8-byte
// units (2 bytes), the data length (2 bytes, to 2 KiB) and the time step. Each fragment is
// written as a frame (IPv4 header or IPv6 with a Fragment header), read by read_frame and pushed.
// A fragment's bytes are a function of its datagram and of the place they take in it, so a
// datagram put together from the wrong bytes or in the wrong place is seen.
//
// Invariants after every push: the bytes held and the datagrams pending within their limits;
// a completed datagram is header + payload with its lengths right, fragment fields cleared, its
// IPv4 checksum good, every payload byte the one the fragments carried, and its fragments
// tiling it in offset order.
#include <array>
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/ip_reassembly.hpp"
#include "scaleup/wire/receive.hpp"

namespace {

using namespace scaleup;

constexpr std::size_t slots = 8;
constexpr std::size_t max_fragments = 16;
using reassembler = wire::ip_reassembler<slots, max_fragments>;

// The byte at `at` of datagram `id`'s payload.
std::uint8_t pattern(std::uint32_t id, std::size_t at) {
  return static_cast<std::uint8_t>(id * 37 + at * 11 + (at >> 8));
}

std::size_t put_ipv4(std::uint8_t* f, std::uint32_t id, std::size_t offset_units, bool more,
                     std::size_t data) {
  const std::size_t total = 20 + data;
  const std::array<std::uint8_t, 20> h{
      0x45,
      0,
      static_cast<std::uint8_t>(total >> 8),
      static_cast<std::uint8_t>(total),
      static_cast<std::uint8_t>(id >> 8),
      static_cast<std::uint8_t>(id),
      static_cast<std::uint8_t>((more ? 0x20 : 0) | (offset_units >> 8)),
      static_cast<std::uint8_t>(offset_units),
      64,
      17,
      0,
      0,
      10,
      0,
      0,
      1,
      10,
      0,
      0,
      2};
  for (std::size_t i = 0; i < h.size(); ++i) f[i] = h[i];
  const std::uint16_t c = wire::ones_sum{}.add(wire::bytes(f, 20)).checksum();
  f[10] = static_cast<std::uint8_t>(c >> 8);
  f[11] = static_cast<std::uint8_t>(c);
  return 20;
}

std::size_t put_ipv6(std::uint8_t* f, std::uint32_t id, std::size_t offset_units, bool more,
                     std::size_t data) {
  const std::size_t plen = 8 + data;
  for (std::size_t i = 0; i < 48; ++i) f[i] = 0;
  f[0] = 0x60;
  f[4] = static_cast<std::uint8_t>(plen >> 8);
  f[5] = static_cast<std::uint8_t>(plen);
  f[6] = 44;
  f[7] = 64;
  f[8] = f[24] = 0xFD;
  f[23] = 1;
  f[39] = 2;
  f[40] = 17;
  const std::size_t fo = (offset_units << 3) | (more ? 1 : 0);
  f[42] = static_cast<std::uint8_t>(fo >> 8);
  f[43] = static_cast<std::uint8_t>(fo);
  f[44] = static_cast<std::uint8_t>(id >> 24);
  f[45] = static_cast<std::uint8_t>(id >> 16);
  f[46] = static_cast<std::uint8_t>(id >> 8);
  f[47] = static_cast<std::uint8_t>(id);
  return 48;
}

void check_complete(const reassembler::result& got) {
  const wire::bytes d = got.datagram;
  const std::size_t h = got.v6 ? 40 : 20;
  fuzz::check(d.size() >= h, "reassembly: datagram shorter than its header");
  const std::size_t payload = d.size() - h;
  if (got.v6) {
    fuzz::check(((d[4] << 8) | d[5]) == static_cast<int>(payload), "reassembly: IPv6 length");
    fuzz::check(d[6] == 17, "reassembly: IPv6 next header not the Fragment header's");
  } else {
    fuzz::check(((d[2] << 8) | d[3]) == static_cast<int>(d.size()), "reassembly: IPv4 length");
    fuzz::check((d[6] & 0x3F) == 0 && d[7] == 0, "reassembly: fragment fields not cleared");
    fuzz::check(wire::ones_sum{}.add(d.first(20)).checksum() == 0, "reassembly: IPv4 checksum");
  }
  std::size_t next = 0;
  for (const auto& f : got.fragments) {
    fuzz::check(f.offset == next, "reassembly: fragments do not tile the datagram");
    next += f.length;
  }
  fuzz::check(next == payload, "reassembly: fragments do not cover the datagram");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  fuzz::reader in{data, size};
  const std::uint8_t l = in.byte();
  static reassembler r;
  const wire::reassembly_limits limits{.datagrams = std::size_t{1} + (l & 7),
                                       .bytes = std::size_t{512} << ((l >> 3) & 7),
                                       .age_ns = std::int64_t{100} << (l >> 6)};
  r = reassembler(limits);
  static std::array<std::uint8_t, 48 + 2048> frame{};
  std::int64_t now = 0;
  std::uint64_t number = 0;
  while (in.more()) {
    const std::uint8_t flags = in.byte();
    const std::size_t offset_units = ((std::size_t{in.byte()} << 8) | in.byte()) & 0x1FFF;
    const std::size_t len = ((std::size_t{in.byte()} << 8) | in.byte()) & 0x7FF;
    now += in.byte();
    const bool v6 = flags & 1, more = flags & 2;
    const std::uint32_t id = 0x100u * ((flags >> 2) & 3) + 1;
    const std::size_t h = v6 ? put_ipv6(frame.data(), id, offset_units, more, len)
                             : put_ipv4(frame.data(), id, offset_units, more, len);
    for (std::size_t i = 0; i < len; ++i) frame[h + i] = pattern(id, offset_units * 8 + i);
    // Cut short: the frame ends before the length its header gives.
    const std::size_t present = (flags & 0x10) && len > 0 ? h + len - 1 : h + len;
    const auto f = wire::read_frame(wire::bytes(frame.data(), present),
                                    v6 ? wire::link_ipv6 : wire::link_ipv4);
    if (!f.fragment) continue;  // offset 0 and no MF: a whole datagram
    const auto& got = r.push(*f.fragment, ++number, now);
    fuzz::check(r.bytes_held() <= limits.bytes, "reassembly: bytes held over the limit");
    fuzz::check(r.pending() <= limits.datagrams, "reassembly: datagrams over the limit");
    if (got.state != wire::fragment_state::complete) continue;
    check_complete(got);
    const std::size_t hl = got.v6 ? 40 : 20;
    // Every payload byte is the one its fragment carried, in its place.
    const std::uint32_t done_id = f.fragment->key.id;
    for (std::size_t i = hl; i < got.datagram.size(); ++i)
      fuzz::check(got.datagram[i] == pattern(done_id, i - hl), "reassembly: a byte moved");
  }
  return 0;
}
