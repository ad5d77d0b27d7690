// The reset signals of R2 Tables 3-4: reset_in puts a direction in reset at once; reset_out falls
// `recovery` cycles after reset_in does.
#include <doctest/doctest.h>

#include "scaleup/pack/interface_reset.hpp"

namespace p = scaleup::pack;

TEST_CASE("interface reset: in at once, out after recovery, credits withdrawn and granted") {
  p::interface_reset s;
  CHECK(!p::accepts_beats(s));  // out of reset: beats are taken
  auto [s1, a1] = p::step(s, p::reset_input::assert_reset, {.recovery = 3});
  CHECK(a1.reset_out);
  CHECK(a1.discard_queued);
  CHECK(a1.withdraw_credits);
  CHECK(p::accepts_beats(s1).code == scaleup::wire::errc::unsupported);
  // Held in reset: clocks change nothing.
  auto [s2, a2] = p::step(s1, p::reset_input::clock, {.recovery = 3});
  CHECK(a2.reset_out);
  // Asserting again while in reset does not discard twice.
  auto [s3, a3] = p::step(s2, p::reset_input::assert_reset, {.recovery = 3});
  CHECK(!a3.discard_queued);
  CHECK(s3.resets == 1);
  auto [s4, a4] = p::step(s3, p::reset_input::deassert_reset, {.recovery = 3});
  CHECK(a4.reset_out);  // still initialising
  p::interface_reset cur = s4;
  int cycles = 0;
  for (bool out = true; out; ++cycles) {
    auto [n, a] = p::step(cur, p::reset_input::clock, {.recovery = 3});
    cur = n;
    out = a.reset_out;
    CHECK(a.grant_credits == !out);
  }
  CHECK(cycles == 3);
  CHECK(!p::accepts_beats(cur));
}

TEST_CASE("interface reset: no recovery time, and a reset during recovery starts over") {
  auto [s1, a1] = p::step({}, p::reset_input::assert_reset, {.recovery = 0});
  auto [s2, a2] = p::step(s1, p::reset_input::deassert_reset, {.recovery = 0});
  CHECK(!a2.reset_out);
  CHECK(a2.grant_credits);
  auto [r1, b1] = p::step({}, p::reset_input::assert_reset, {.recovery = 4});
  auto [r2, b2] = p::step(r1, p::reset_input::deassert_reset, {.recovery = 4});
  auto [r3, b3] = p::step(r2, p::reset_input::clock, {.recovery = 4});
  auto [r4, b4] = p::step(r3, p::reset_input::assert_reset, {.recovery = 4});
  CHECK(b4.reset_out);
  CHECK(!b4.discard_queued);  // still in reset: nothing new was queued
  CHECK(r4.recovering == 0);
  (void)a1, (void)b1, (void)b2, (void)b3, (void)s2;
}
