// The management interface's packet path (R2 3.1): SUE adds the FCS, sends once, at most 10K
// packets a second.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "scaleup/transport/management.hpp"

namespace t = scaleup::transport;
namespace w = scaleup::wire;

namespace {
// DA 02:00:00:00:00:01, SA 02:00:00:00:00:02, Ethertype 0x88B5, two bytes of payload.
constexpr std::array<std::uint8_t, 16> frame{0x02, 0, 0, 0, 0,    1,    0x02, 0,
                                             0,    0, 0, 2, 0x88, 0xB5, 0xDE, 0xAD};
}  // namespace

TEST_CASE("management path: SUE appends the FCS as IEEE 802.3 sends it") {
  std::array<std::uint8_t, 32> out{};
  const auto r = t::send_management({}, frame, out, 0);
  REQUIRE(r.frame.ok());
  CHECK(r.frame.value == 20);
  // CRC-32 of the 16 bytes is 0x8804A740 (zlib.crc32), sent least significant byte first.
  CHECK(std::vector<std::uint8_t>(out.begin() + 16, out.begin() + 20) ==
        std::vector<std::uint8_t>{0x40, 0xA7, 0x04, 0x88});
  CHECK(r.port.sent == 1);
  // Received back: checked and stripped.
  const auto back = t::receive_management({}, w::bytes(out.data(), 20));
  REQUIRE(back.frame.ok());
  CHECK(back.frame.value == 16);
  CHECK(back.port.received == 1);
  // One bit flipped: dropped and counted, never handed up.
  out[3] ^= 0x10;
  const auto bad = t::receive_management({}, w::bytes(out.data(), 20));
  CHECK(bad.frame.err.code == w::errc::bad_checksum);
  CHECK(bad.port.bad_fcs == 1);
  CHECK(t::receive_management({}, w::bytes(out.data(), 17)).frame.err.code == w::errc::truncated);
}

TEST_CASE("management path: a burst, then no more than 10K packets a second") {
  std::array<std::uint8_t, 32> out{};
  t::management_port p;
  // A burst of 16 at one instant passes; the 17th is refused, not queued.
  for (int i = 0; i < 16; ++i) {
    auto r = t::send_management(p, frame, out, 1000);
    REQUIRE(r.frame.ok());
    p = r.port;
  }
  auto r = t::send_management(p, frame, out, 1000);
  CHECK(r.frame.err.code == w::errc::no_space);
  p = r.port;
  CHECK(p.refused == 1);
  // Offered every 10 us for 2 s (10x the rate): 20 000 in 2 s plus the burst pass.
  for (std::uint64_t now = 1000; now <= 2'000'001'000; now += 10'000) {
    r = t::send_management(p, frame, out, now);
    p = r.port;
  }
  CHECK(p.sent == 16 + 20'000);
  CHECK(p.refused == 1 + 200'001 - 20'000);
}

TEST_CASE("management path: frames too short for a header, outputs too small") {
  std::array<std::uint8_t, 32> out{};
  CHECK(t::send_management({}, w::bytes(frame.data(), 13), out, 0).frame.err.code ==
        w::errc::truncated);
  CHECK(t::send_management({}, frame, w::mutable_bytes(out.data(), 19), 0).frame.err.code ==
        w::errc::no_space);
}
