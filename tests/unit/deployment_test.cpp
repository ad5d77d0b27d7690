// SUE's latency budget (R2 Appendix A.1) and deployment arithmetic (R2 1.1, Tables 1, 6, 7).
#include <doctest/doctest.h>

#include "scaleup/transport/deployment.hpp"
#include "scaleup/transport/latency_budget.hpp"

namespace t = scaleup::transport;

TEST_CASE("latency budget: the appendix's terms, one by one") {
  const auto b = t::one_way_latency({.cable = t::cable_kind::twinax_copper, .metres = 3});
  CHECK(b.sue_tx == 100);
  CHECK(b.cable_in == doctest::Approx(13.8));
  CHECK(b.switches == 250);
  CHECK(b.cable_out == doctest::Approx(13.8));
  CHECK(b.sue_rx == 100);
  CHECK(b.fec == 0);
  CHECK(b.total() == doctest::Approx(477.6));
  CHECK(b.round_trip() == doctest::Approx(955.2));
}

TEST_CASE("latency budget: FEC per link, a mesh without a switch, two hops") {
  // RS-544 against RS-272 (R2 3.5.4): the difference is charged on each of the two links.
  CHECK(t::one_way_latency({.metres = 10, .fec_extra_ns = 40}).total() ==
        doctest::Approx(549.2 + 80));
  // A mesh (R2 Fig. 2): one cable, no switch.
  const auto mesh = t::one_way_latency({.metres = 2, .switch_hops = 0});
  CHECK(mesh.switches == 0);
  CHECK(mesh.cable_out == 0);
  CHECK(mesh.total() == doctest::Approx(200 + 2 * 4.96));
  CHECK(t::one_way_latency({.metres = 1, .switch_hops = 2}).total() ==
        doctest::Approx(200 + 500 + 3 * 4.96));
}

TEST_CASE("latency budget: the longest cable under the round-trip requirement") {
  const double m = t::max_cable_metres(t::cable_kind::single_mode_fiber);
  CHECK(t::one_way_latency({.metres = m}).round_trip() == doctest::Approx(2000));
  CHECK(m > 10);  // R2 Table 1's 10 m fits
  // A budget whose fixed part already exceeds the round trip leaves no cable.
  CHECK(t::max_cable_metres(t::cable_kind::twinax_copper, 2000, {.switch_ns = 800}) == 0);
}

TEST_CASE("port configurations: the rule refuses what does not divide") {
  CHECK(t::configure_ports(t::sue_800g, 3, 200) == std::nullopt);   // 4 lanes, 3 ports
  CHECK(t::configure_ports(t::sue_800g, 8, 200) == std::nullopt);   // more ports than lanes
  CHECK(t::configure_ports(t::sue_1600g, 1, 200) == std::nullopt);  // 8 lanes in one port
  CHECK(t::configure_ports(t::sue_1600g, 2, 200) == std::nullopt);  // 800G over a 400G XPU port
  CHECK(t::configure_ports(t::sue_800g, 0, 200) == std::nullopt);
  CHECK(t::configure_ports(t::sue_800g, 2, 200) == t::port_config{400, 2, 200, 2});
  static_assert(t::all_port_configs(t::sue_800g).n == t::table6.size());
  static_assert(t::all_port_configs(t::sue_1600g).n == t::table7.size());
}

TEST_CASE("switched fabric: the 64-XPU example, and one that does not fit its switches") {
  constexpr t::switched_fabric fig1{};
  static_assert(fig1.switches() == 12);
  CHECK(fig1.pair_tbps() == doctest::Approx(9.6));
  constexpr t::switched_fabric big{.xpus = 65};
  static_assert(!big.fits());
  CHECK(big.pair_tbps() == 0);
}
