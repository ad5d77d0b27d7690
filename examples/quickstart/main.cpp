// The README's code, as a program the test suite runs: encoding and decoding an RH, packing
// commands and reading them back.
#include <array>
#include <cstdint>
#include <cstdio>
#include <span>

#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/packer.hpp>
#include <scaleup/wire/reliability_header.hpp>

using namespace scaleup;

static int rh_round_trip() {
  using namespace scaleup::wire;
  reliability_header rh{.op = 0 /* ACK */, .xpuid = 42, .npsn = 7, .vc = 1, .apsn = 6};
  std::array<std::uint8_t, 8> buf{};
  if (auto n = encode(rh, buf); !n) return 1;
  auto back = decode<reliability_header>(buf);   // result<reliability_header>, never throws
  auto v = view<reliability_header>::make(buf);  // length checked once...
  std::uint16_t psn = v->get<&reliability_header::npsn>();  // ...then accessors cannot fail
  static_assert(
      decode<reliability_header>(to_bytes(reliability_header{.xpuid = 5}).value).value.xpuid == 5);
  std::printf("RH %02x %02x %02x %02x %02x %02x %02x %02x: xpuid %u npsn %u\n", buf[0], buf[1],
              buf[2], buf[3], buf[4], buf[5], buf[6], buf[7], back->xpuid, psn);
  reliability_header too_big{.xpuid = 1024};
  const auto refused = encode(too_big, buf);
  std::printf("xpuid 1024: %.*s (%.*s)\n", static_cast<int>(refused.err.what.size()),
              refused.err.what.data(), static_cast<int>(refused.err.field.size()),
              refused.err.field.data());
  return back.ok() && back->xpuid == 42 && psn == 7 && !refused.ok() ? 0 : 1;
}

static int rh_batch() {
  using namespace scaleup::wire;
  std::array<reliability_header, 3> many{{{.xpuid = 1}, {.xpuid = 2}, {.xpuid = 1024}}};
  std::array<std::uint8_t, 3 * 8> out{};
  auto k = encode_all<reliability_header>(many, out);  // encode, header after header
  // Refused: k.value is the first refused header's index, k.err encode's error for it.
  std::printf("encode_all: header %zu refused, %.*s (item %u, offset %u)\n", k.value,
              static_cast<int>(k.err.field.size()), k.err.field.data(), k.err.item, k.err.offset);
  return !k.ok() && k.value == 2 && k.err.item == 3 ? 0 : 1;
}

static int pack_and_unpack() {
  std::array<std::uint8_t, 64> my_64_bytes{};
  static pack::packer<1024> packer(pack::default_profile);  // 1024 destinations, 4 VCs
  // A typed command: encoded into the packer's pool. The data is borrowed until packed.
  if (packer.push(pack::queued<pack::cmd_write>{.destination = 7,
                                                .control = {.tag = 1, .addr = 0x1000},
                                                .data = pack::borrow(my_64_bytes)}))
    return 1;
  // Control bytes are copied at push: a temporary is fine.
  if (packer.push({.destination = 7,
                   .control = wire::to_bytes(pack::cmd_read{.dlen = 63, .tag = 2}).value}))
    return 1;
  std::array<std::uint8_t, 4096> payload;
  auto pdu = packer.next(payload);  // {destination 7, VC 0, 88 bytes, 2 commands}: never waits
  std::printf("PDU to %u on VC %u: %zu bytes, %zu command(s)\n", pdu->destination, pdu->vc,
              pdu->bytes, pdu->commands);
  pack::unpacker u(pack::default_profile, std::span(payload).first(pdu->bytes));
  int n = 0;
  for (pack::command_view c; u.next(c); ++n)  // views into the payload, no copy
    std::printf("  %.*s: control %zu bytes, data %zu bytes\n",
                static_cast<int>(c.type->name.size()), c.type->name.data(), c.control.size(),
                c.data.size());
  return pdu->bytes == 88 && n == 2 && !u.error_found() ? 0 : 1;
}

int main() { return rh_round_trip() | rh_batch() | pack_and_unpack(); }
