// The patent's sizing argument (US 12,388,770 B1): the data router for peak bandwidth, the
// header router for transactions per second, against three full-bandwidth crossbars.
#include <doctest/doctest.h>

#include "scaleup/pack/router_sizing.hpp"

namespace p = scaleup::pack;

TEST_CASE("router sizing: headers per cycle follow the payload, not the read/write mix") {
  // 256-byte payloads in 64-byte beats: 4 data flits and 2 headers an operation.
  const auto s = p::size_routers({.payload_bytes = 256});
  CHECK(s.data_flits_per_op == 4);
  CHECK(s.ops_per_cycle == doctest::Approx(0.25));
  CHECK(s.header_rate == doctest::Approx(0.5));
  CHECK(p::size_routers({.payload_bytes = 256, .read_fraction = 1}).header_rate ==
        doctest::Approx(0.5));
  CHECK(p::size_routers({.payload_bytes = 256, .read_fraction = 0}).header_rate ==
        doctest::Approx(0.5));
  // Short payloads need the header router faster than the data router: it is sized by TPS.
  CHECK(p::size_routers({.payload_bytes = 64}).header_rate == doctest::Approx(2));
  CHECK(p::size_routers({.payload_bytes = 65}).data_flits_per_op == 2);
  // Header-only operations: paced by one header lane.
  CHECK(p::size_routers({.payload_bytes = 0}).ops_per_cycle == doctest::Approx(0.5));
}

TEST_CASE("router sizing: the split against three full crossbars, and the port's wires") {
  const auto s = p::size_routers(
      {.ports = 4, .data_flit_bits = 512, .header_flit_bits = 128, .payload_bytes = 256});
  CHECK(s.crossbar_cost_three == doctest::Approx(3 * 16 * 512));
  CHECK(s.crossbar_cost_split == doctest::Approx(16 * 512 + 16 * 128));
  CHECK(s.cost_ratio() == doctest::Approx((512.0 + 128) / (3 * 512)));
  CHECK(s.wire_reduction() == 2);  // "reduced by a factor of two"
  // At 64-byte payloads the header router takes two lanes: still under the three crossbars.
  const auto small = p::size_routers({.ports = 4, .payload_bytes = 64});
  CHECK(small.crossbar_cost_split == doctest::Approx(16 * 512 + 2 * 16 * 128));
  CHECK(small.cost_ratio() < 1);
}
