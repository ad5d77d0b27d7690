// The lane-quality controller (tofu/lane_quality.hpp; 003 IV.E): per-lane error counting with
// hysteresis, the STAT it reports, the pattern the sender picks from the peer's STAT, and the
// rule that replays go in duplicate mode. Hand-worked event sequences; the seeded link runs are in
// tofu_link_test.cpp.
#include <scaleup/tofu/lane_quality.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <utility>

namespace {

namespace tf = scaleup::tofu;

constexpr tf::lane_config cfg{.bad_errors = 3, .window = 1'000, .clean_period = 10'000};

template <std::size_t L>
struct driver {
  tf::lane_controller<L> s{};
  tf::lane_actions last{};
  tf::lane_actions feed(const tf::lane_event& e, std::uint64_t now) {
    auto [n, a] = step(s, e, now, cfg);
    s = n;
    last = a;
    return a;
  }
};

}  // namespace

TEST_CASE("tofu lanes: starts split, clean") {
  tf::lane_controller<2> two;
  tf::lane_controller<4> four;
  CHECK(two.pat == 1);
  CHECK(four.pat == 2);
  CHECK(two.stat() == 0);
  CHECK(!tf::next_deadline(two, cfg));
}

TEST_CASE("tofu lanes: isolated errors never degrade a lane") {
  driver<2> d;
  // One error every 2 us on lane 1 (a window is 1 us): counted, never a burst.
  for (std::uint64_t t = 0; t < 100'000; t += 100) {
    const bool err = t % 2'000 == 0;
    const auto a =
        d.feed(tf::lane_event::slice(1, err ? tf::rx_error::fcs : tf::rx_error::none), t);
    CHECK(!a.stat);
    CHECK(!a.degraded);
    d.feed(tf::lane_event::slice(0), t);
  }
  CHECK(d.s.lanes[1].errors == 50);
  CHECK(d.s.lanes[1].fcs_errors == 50);
  CHECK(d.s.lanes[1].slices == 1000);
  CHECK(d.s.lanes[1].degradations == 0);
  CHECK(d.s.stat() == 0);
  // Two close together are still not three.
  d.feed(tf::lane_event::slice(1, tf::rx_error::fcs), 200'000);
  d.feed(tf::lane_event::slice(1, tf::rx_error::length), 200'500);
  CHECK(d.s.stat() == 0);
  CHECK(d.s.lanes[1].other_errors == 1);
}

TEST_CASE("tofu lanes: a burst degrades the lane; a clean period restores it") {
  driver<2> d;
  d.feed(tf::lane_event::slice(1, tf::rx_error::fcs), 1'000);
  d.feed(tf::lane_event::slice(1, tf::rx_error::framing), 1'300);
  const auto a = d.feed(tf::lane_event::slice(1, tf::rx_error::fcs), 1'600);
  REQUIRE(a.stat);
  CHECK(*a.stat == 0b10);  // lane 1 -> value bit 1
  CHECK(a.degraded == 0b10);
  CHECK(d.s.lanes[1].degradations == 1);
  CHECK(tf::next_deadline(d.s, cfg) == 11'600);

  // Another error restarts the clean period.
  CHECK(!d.feed(tf::lane_event::slice(1, tf::rx_error::fcs), 5'000).stat);
  CHECK(tf::next_deadline(d.s, cfg) == 15'000);
  CHECK(!d.feed(tf::lane_event::tick(), 14'999).stat);
  const auto clean = d.feed(tf::lane_event::tick(), 15'000);
  REQUIRE(clean.stat);
  CHECK(*clean.stat == 0);
  CHECK(clean.cleaned == 0b10);
  CHECK(d.s.lanes[1].errors == 4);
}

TEST_CASE("tofu lanes: the sender follows the peer's STAT, without flapping on repeats") {
  driver<2> d;
  auto a = d.feed(tf::lane_event::peer(0), 0);
  CHECK(!a.pat);
  a = d.feed(tf::lane_event::peer(0b01), 100);
  REQUIRE(a.pat);
  CHECK(*a.pat == 0);  // duplicate
  CHECK(!d.feed(tf::lane_event::peer(0b01), 200).pat);
  CHECK(!d.feed(tf::lane_event::peer(0b11), 300).pat);
  a = d.feed(tf::lane_event::peer(0), 400);
  REQUIRE(a.pat);
  CHECK(*a.pat == 1);
  CHECK(d.s.mode_switches == 2);
  // Bits for lanes the link does not have are ignored.
  CHECK(!d.feed(tf::lane_event::peer(0b1100), 500).pat);
  CHECK(d.s.peer_stat == 0);
}

TEST_CASE("tofu lanes: quad-lane patterns") {
  CHECK(tf::choose_ways<4>(0) == 4);
  CHECK(tf::choose_ways<4>(0b0001) == 2);  // lanes 0/2 and 1/3 each keep a clean lane
  CHECK(tf::choose_ways<4>(0b0100) == 2);
  CHECK(tf::choose_ways<4>(0b0011) == 2);
  CHECK(tf::choose_ways<4>(0b0101) == 1);  // lanes 0 and 2 both degraded: even words at risk
  CHECK(tf::choose_ways<4>(0b1010) == 1);
  CHECK(tf::choose_ways<4>(0b1111) == 1);
  CHECK(tf::choose_ways<2>(0) == 2);
  CHECK(tf::choose_ways<2>(0b01) == 1);
  CHECK(tf::choose_ways<2>(0b10) == 1);

  driver<4> d;
  auto a = d.feed(tf::lane_event::peer(0b0010), 0);
  REQUIRE(a.pat);
  CHECK(*a.pat == 1);
  a = d.feed(tf::lane_event::peer(0b1010), 1);
  REQUIRE(a.pat);
  CHECK(*a.pat == 0);
  a = d.feed(tf::lane_event::peer(0), 2);
  REQUIRE(a.pat);
  CHECK(*a.pat == 2);
}

TEST_CASE("tofu lanes: a replay goes in duplicate mode whatever the link's mode") {
  tf::lane_controller<2> s;
  CHECK(tf::pat_to_send(s, false) == 1);
  CHECK(tf::pat_to_send(s, true) == 0);
  tf::lane_controller<4> q;
  CHECK(tf::pat_to_send(q, false) == 2);
  CHECK(tf::pat_to_send(q, true) == 0);
}

TEST_CASE("tofu lanes: slice verdicts map to receive errors") {
  CHECK(tf::rx_error_of(tf::slice_status::good) == tf::rx_error::none);
  CHECK(tf::rx_error_of(tf::slice_status::bad_fcs) == tf::rx_error::fcs);
  CHECK(tf::rx_error_of(tf::slice_status::missing) == tf::rx_error::missing);
  CHECK(tf::rx_error_of(tf::slice_status::bad_length) == tf::rx_error::length);
  CHECK(tf::rx_error_of(tf::slice_status::bad_header) == tf::rx_error::header);
  CHECK(tf::rx_error_of(tf::slice_status::bad_pattern) == tf::rx_error::pattern);
  driver<2> d;
  d.feed(tf::lane_event::slice(7, tf::rx_error::fcs), 0);  // no such lane: ignored
  CHECK(d.s.lanes[0].errors + d.s.lanes[1].errors == 0);
}
