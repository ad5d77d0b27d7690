// Per-instance congestion state and the balancer above SUE (R2 4.4, Fig. 20).
#include <doctest/doctest.h>

#include <array>

#include "scaleup/transport/congestion.hpp"

namespace t = scaleup::transport;
namespace w = scaleup::wire;

TEST_CASE("congestion state: the register, bit by bit, and its levels") {
  // level 2, 3 ports, 5 units queued (1025..1280 bytes), 7 PDUs in flight:
  // 10 0011 00000000000101 000000000111 = 1000 1100 0000 0000 0101 0000 0000 0111
  const auto s = t::report_congestion(3, 1100, 7, {.heavy_queued_bytes = 1000});
  CHECK(s == t::congestion_state{2, 3, 5, 7});
  const auto b = w::to_bytes(s);
  REQUIRE(b.ok());
  CHECK(b.value == std::array<std::uint8_t, 4>{0x8C, 0x00, 0x50, 0x07});
  CHECK(w::decode<t::congestion_state>(b.value).value == s);
  CHECK(t::report_congestion(2, 0, 0).level == 0);
  CHECK(t::report_congestion(2, 1, 0).level == 1);
  CHECK(t::report_congestion(2, 0, 512).level == 2);
  CHECK(t::report_congestion(0, 0, 0).level == 3);
  // Saturating, never wrapping.
  const auto big = t::report_congestion(20, 1ull << 40, 1ull << 20);
  CHECK(big.ports_up == 15);
  CHECK(big.queued == 0x3FFF);
  CHECK(big.in_flight == 0xFFF);
}

TEST_CASE("balancer: new flows to the least congested instance, busy flows stay put") {
  t::instance_balancer<3, 8> lb;
  lb.update(0, t::report_congestion(1, 200'000, 10));  // heavy
  lb.update(1, t::report_congestion(1, 4096, 3));      // light
  lb.update(2, t::report_congestion(1, 1024, 3));      // light, less queued
  CHECK(lb.choose(5, 0) == 2u);
  lb.issued(5, 0, 2);
  // Instance 2 becomes heavy: the flow keeps its instance while an operation is outstanding
  // there (order within one SUE), a new flow does not.
  lb.update(2, t::report_congestion(1, 300'000, 3));
  CHECK(lb.choose(5, 0) == 2u);
  CHECK(lb.choose(6, 0) == 1u);
  CHECK(lb.choose(5, 1) == 1u);  // another VC is another flow
  lb.completed(5, 0);
  CHECK(lb.outstanding(5, 0) == 0);
  CHECK(lb.choose(5, 0) == 1u);  // free to move now
}

TEST_CASE("balancer: a blocked instance is never chosen; a flow pinned to one waits") {
  t::instance_balancer<2, 4> lb;
  lb.update(0, t::report_congestion(1, 0, 0));
  lb.update(1, t::report_congestion(1, 0, 0));
  lb.issued(1, 0, 0);
  lb.update(0, t::report_congestion(0, 0, 0));  // its ports went down
  CHECK(lb.choose(1, 0) == std::nullopt);       // would break order to jump
  CHECK(lb.choose(2, 0) == 1u);
  lb.update(1, t::report_congestion(0, 0, 0));
  CHECK(lb.choose(2, 0) == std::nullopt);
}
