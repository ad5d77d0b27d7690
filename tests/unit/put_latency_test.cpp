// Tofu D's one-way Put latency composed from the paper's stated figures (003 V.B, Table III).
#include <doctest/doctest.h>

#include "scaleup/tofu/put_latency.hpp"

namespace tf = scaleup::tofu;

TEST_CASE("Tofu D Put latency: Tofu2's less the PCS penalty; far CMGs add their penalty") {
  CHECK(tf::put_latency_us(false) == doctest::Approx(0.51));
  CHECK(tf::put_latency_us(true) == doctest::Approx(0.56));
  CHECK(tf::put_latency_us(true) - tf::put_latency_us(false) ==
        doctest::Approx(tf::paper::put_latency_far_us - tf::paper::put_latency_near_us));
  CHECK(tf::put_latency_us(false, {.pcs_saving_us = 0}) == doctest::Approx(0.71));
}
