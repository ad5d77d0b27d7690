// The efficiency model (tofu/efficiency.hpp) against the paper's figures (003 Table I, IV, V).
// Tolerances: the paper rounds throughputs to 0.01 GB/s (6.35, 38.1) or 0.1 GB/s and
// efficiencies to whole percent, so the model must land within 1 % of each throughput and within
// half a percentage point of each efficiency.
#include <scaleup/tofu/efficiency.hpp>

#include <doctest/doctest.h>

#include <cmath>

namespace {

namespace tf = scaleup::tofu;

bool within_rel(double model, double paper, double tol) {
  return std::fabs(model - paper) <= tol * paper;
}

}  // namespace

TEST_CASE("tofu efficiency: lane and link bandwidth") {
  // 28.05 Gbps x 64/66 = 27.2 Gbps = 3.4 GB/s a lane; two lanes = 6.8 GB/s (Table I).
  CHECK(tf::lane_rate() == doctest::Approx(3.4).epsilon(1e-12));
  CHECK(tf::link_bandwidth(2) == doctest::Approx(tf::paper::link_bandwidth).epsilon(1e-12));
  CHECK(tf::paper::tnis * tf::link_bandwidth(2) ==
        doctest::Approx(tf::paper::injection_bandwidth).epsilon(1e-12));
  CHECK(tf::octet_time_ps(1088) == 320'000);
  CHECK(tf::octet_time_ps(17) == 5'000);
}

TEST_CASE("tofu efficiency: the largest frame in split mode reproduces Tables IV and V") {
  const tf::frame_cost c = tf::cost(63, 2, 2);
  // Lane 0: 8 preamble + 8 RH + 130 words (1040) + 12 pad + 4 FCS + 16 gap = 1088 octets.
  // Lane 1: 129 words, 4 pad: 1072 octets. The frame takes lane 0's 1088 / 3.4 = 320 ns.
  CHECK(c.line[0] == 1088);
  CHECK(c.line[1] == 1072);
  CHECK(c.longest == 1088);
  CHECK(c.wire_bytes == 2160);
  CHECK(c.line_bits == doctest::Approx(2160 * 8 * 66.0 / 64));
  CHECK(c.tlp == 2048);
  CHECK(c.payload == 2032);
  CHECK(c.time_ns == doctest::Approx(320.0));
  CHECK(within_rel(c.throughput, tf::paper::put_throughput, 0.01));
  CHECK(std::fabs(c.efficiency - tf::paper::put_efficiency) <= 0.005);
  const double injection = tf::paper::tnis * c.throughput;
  CHECK(within_rel(injection, tf::paper::injection_rate, 0.01));
  CHECK(std::fabs(injection / tf::paper::injection_bandwidth - tf::paper::injection_efficiency) <=
        0.005);
}

TEST_CASE("tofu efficiency: duplicate mode halves the rate; small frames cost more") {
  const tf::frame_cost d = tf::cost(63, 1, 2);
  // 8 + 8 + 259 words (2072) + 4 pad + 4 FCS + 16 = 2112 octets on each lane.
  CHECK(d.line[0] == 2112);
  CHECK(d.line[1] == 2112);
  CHECK(d.time_ns == doctest::Approx(2112 / 3.4));
  CHECK(d.efficiency == doctest::Approx(2032 / (2112 / 3.4) / 6.8));
  CHECK(d.efficiency < 0.5);

  // LEN 0: split lane 0 = 8 + 8 + 32 + 12 + 4 + 16 = 80 octets; duplicate 8 + 8 + 56 + 4 + 4 +
  // 16 = 96.
  CHECK(tf::cost(0, 2, 2).longest == 80);
  CHECK(tf::cost(0, 1, 2).longest == 96);
  CHECK(tf::cost(0, 2, 2).payload == 16);
  CHECK(tf::cost(0, 2, 2).efficiency < tf::cost(63, 2, 2).efficiency);
}

TEST_CASE("tofu efficiency: a quad-lane link") {
  const tf::frame_cost q = tf::cost(63, 4, 4);
  // 259 words: lanes 0-2 take 65 (odd: 4 pad), lane 3 takes 64 (even: 12 pad), so every lane
  // spends 8 + 8 + 520 + 4 + 4 + 16 = 8 + 8 + 512 + 12 + 4 + 16 = 560.
  CHECK(q.line[0] == 560);
  CHECK(q.line[3] == 560);
  CHECK(q.longest == 560);
  CHECK(q.time_ns == doctest::Approx(560 / 3.4));
  CHECK(q.efficiency > 0.9);
  CHECK(tf::link_bandwidth(4) == doctest::Approx(13.6));
  // Split in 2 over four lanes runs at the dual-rail rate.
  CHECK(tf::cost(63, 2, 4).longest == tf::cost(63, 2, 2).longest);
}
