// A sliced link under errors (sim/tofu_link.hpp): seeded bit errors per lane must never lose or
// corrupt a frame in adaptive mode; a lane that goes bad sends the link to duplicate mode and it
// comes back to split after the clean period, without flapping on isolated errors (003 IV.E; the
// recovery Tofu2's lane degradation lacked). Also the capture records the run hands out.
#include <scaleup/sim/tofu_link.hpp>
#include <scaleup/tofu/slicer.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace {

namespace sm = scaleup::sim;
namespace tf = scaleup::tofu;
namespace w = scaleup::wire;

const auto ignore = [](const sm::tofu_slice_info&, w::bytes) {};

// The pattern of each new (not replayed) transmission, with its time.
struct mode_log {
  struct entry {
    std::uint64_t time_ns;
    std::uint8_t pat;
  };
  std::vector<entry> changes;
  void operator()(const sm::tofu_slice_info& s, w::bytes) {
    if (s.lane != 0 || s.replay) return;
    if (changes.empty() || changes.back().pat != s.pat) changes.push_back({s.time_ns, s.pat});
  }
};

}  // namespace

TEST_CASE("tofu link: a clean link splits every frame and loses nothing") {
  sm::tofu_link_config c;
  c.frames = 500;
  const auto st = sm::simulate_tofu_link<2>(
      c, [](const sm::tofu_slice_info&, w::mutable_bytes) { return false; }, ignore);
  CHECK(st.delivered == 500);
  CHECK(st.lost == 0);
  CHECK(st.split_frames == 500);
  CHECK(st.duplicate_frames == 0);
  CHECK(st.mode_switches == 0);
  CHECK(st.replays == 0);
  CHECK(st.misdelivered == 0);
  CHECK(st.final_pat == 1);
}

TEST_CASE("tofu link: seeded random errors per lane lose no frame (adaptive)") {
  struct setting {
    std::array<double, 4> ber;
  };
  const setting settings[] = {
      {{1e-7, 1e-7, 1e-7, 1e-7}},
      {{0, 1e-5, 0, 0}},
      {{1e-6, 1e-6, 1e-6, 1e-6}},
      {{0, 3e-4, 0, 1e-6}},
  };
  for (std::uint64_t seed : {1u, 2u}) {
    for (const auto& s : settings) {
      CAPTURE(seed);
      CAPTURE(s.ber[1]);
      sm::tofu_link_config c;
      c.frames = 2000;
      c.len_max = 31;
      c.seed = seed;
      {
        std::mt19937_64 rng(seed);
        const auto st =
            sm::simulate_tofu_link<2>(c, rng, std::array<double, 2>{s.ber[0], s.ber[1]}, ignore);
        CHECK(st.delivered == c.frames);
        CHECK(st.lost == 0);
        CHECK(st.misdelivered == 0);
        CHECK(st.link_resets == 0);
        CHECK(st.split_frames + st.duplicate_frames == st.transmissions);
        if (s.ber[1] >= 1e-5) CHECK(st.injected_slices > 0);
      }
      {
        std::mt19937_64 rng(seed);
        const auto st = sm::simulate_tofu_link<4>(c, rng, s.ber, ignore);
        CHECK(st.delivered == c.frames);
        CHECK(st.lost == 0);
        CHECK(st.misdelivered == 0);
      }
    }
  }
}

TEST_CASE("tofu link: the same seed gives the same run") {
  sm::tofu_link_config c;
  c.frames = 1500;
  std::mt19937_64 a(42), b(42);
  const auto x = sm::simulate_tofu_link<2>(c, a, std::array<double, 2>{2e-6, 2e-5}, ignore);
  const auto y = sm::simulate_tofu_link<2>(c, b, std::array<double, 2>{2e-6, 2e-5}, ignore);
  CHECK(x.transmissions == y.transmissions);
  CHECK(x.injected_slices == y.injected_slices);
  CHECK(x.mode_switches == y.mode_switches);
  CHECK(x.duration_ns == y.duration_ns);
}

TEST_CASE("tofu link: a lane that goes bad -> duplicate; back to split after the clean period") {
  // Lane 1 runs at a bit error rate of 1e-4 (most 1 KiB slices fail) for transmissions 1500 to
  // 2500; lane 0 has an isolated error every 700 transmissions throughout, each far more than a
  // window from the next.
  sm::tofu_link_config c;
  c.frames = 5000;
  c.len_min = c.len_max = 63;  // 320 ns a frame in split mode, 621 ns in duplicate
  std::mt19937_64 rng(5);
  sm::tofu_ber_channel<std::mt19937_64, 2> bad_lane(rng, {0, 1e-4});
  std::uint64_t bad_end_ns = 0;
  const auto channel = [&](const sm::tofu_slice_info& s, w::mutable_bytes b) {
    const bool bad_period = s.transmission >= 1500 && s.transmission < 2500;
    if (s.lane == 1 && bad_period) {
      const bool hit = bad_lane(s, b);
      if (hit) bad_end_ns = s.time_ns;
      return hit;
    }
    if (s.lane == 0 && s.transmission % 700 == 350) {
      b[30] ^= 0x04;
      return true;
    }
    return false;
  };
  mode_log log;
  const auto st = sm::simulate_tofu_link<2>(c, channel, log);
  CHECK(st.delivered == c.frames);
  CHECK(st.lost == 0);
  CHECK(st.misdelivered == 0);
  CHECK(st.replays > 0);  // the isolated errors cost a replay each, not a mode switch
  REQUIRE(log.changes.size() == 3);
  CHECK(log.changes[0].pat == 1);
  CHECK(log.changes[1].pat == 0);
  CHECK(log.changes[2].pat == 1);
  CHECK(st.mode_switches == 2);
  CHECK(st.final_pat == 1);
  // Into duplicate soon after the lane went bad (1500 split frames take 480 us)...
  CHECK(log.changes[1].time_ns > 1500 * 320);
  CHECK(log.changes[1].time_ns < 1500 * 320 + 50'000);
  // ...and back only once the last error is a clean period old.
  CHECK(log.changes[2].time_ns >= bad_end_ns + c.quality.clean_period);
  CHECK(log.changes[2].time_ns < bad_end_ns + c.quality.clean_period + 5'000);
  CHECK(st.duplicate_frames > 1000);  // the bad period and the clean period after it
}

TEST_CASE("tofu link: split mode forced onto a dead lane loses frames; adaptive does not") {
  sm::tofu_link_config c;
  c.frames = 400;
  c.policy = sm::tofu_mode_policy::split;
  std::mt19937_64 rng(9);
  const auto split = sm::simulate_tofu_link<2>(c, rng, std::array<double, 2>{0, 1e-2}, ignore);
  CHECK(split.lost > 0);
  CHECK(split.delivered + split.lost == c.frames);
  CHECK(split.link_resets > 0);
  CHECK(split.duplicate_frames == 0);
  CHECK(split.misdelivered == 0);

  c.policy = sm::tofu_mode_policy::adaptive;
  const auto adaptive = sm::simulate_tofu_link<2>(c, rng, std::array<double, 2>{0, 1e-2}, ignore);
  CHECK(adaptive.lost == 0);
  CHECK(adaptive.delivered == c.frames);
  CHECK(adaptive.mode_switches == 1);
  CHECK(adaptive.final_pat == 0);

  c.policy = sm::tofu_mode_policy::duplicate;
  const auto dup = sm::simulate_tofu_link<2>(c, rng, std::array<double, 2>{0, 1e-2}, ignore);
  CHECK(dup.lost == 0);
  CHECK(dup.split_frames == 0);
  CHECK(dup.replays == 0);
}

TEST_CASE("tofu link: capture records are the slices as received, lane 0 first") {
  sm::tofu_link_config c;
  c.frames = 50;
  std::mt19937_64 rng(3);
  std::uint64_t records = 0, injected = 0, bad_fcs = 0, complete = 0, rebuilt = 0;
  std::size_t expect_lane = 0;
  tf::record_collector col;
  tf::frame_buffer frame{};
  const auto on = [&](const sm::tofu_slice_info& s, w::bytes rec) {
    ++records;
    CHECK(s.lane == expect_lane);
    expect_lane = (expect_lane + 1) % 2;
    const auto h = w::decode<tf::record_header>(rec);
    REQUIRE(h.ok());
    CHECK(h->lane == s.lane);
    CHECK(h->lanes == 2);
    CHECK(h->replay == (s.replay ? 1 : 0));
    CHECK(h->injected == (s.injected ? 1 : 0));
    const w::bytes slice = rec.subspan(tf::record_header_size);
    if (s.injected) ++injected;
    if (tf::check_slice(slice, s.lane, 2).status == tf::slice_status::bad_fcs) ++bad_fcs;
    if (col.push(rec).complete) {
      ++complete;
      if (col.reassemble(frame).ok()) ++rebuilt;
    }
  };
  const auto st = sm::simulate_tofu_link<2>(c, rng, std::array<double, 2>{1e-5, 1e-5}, on);
  CHECK(records == st.slices);
  CHECK(records == 2 * st.transmissions);
  CHECK(injected == st.injected_slices);
  CHECK(bad_fcs == st.failed_slices);
  CHECK(complete == st.transmissions);
  CHECK(rebuilt == st.transmissions - st.failed_frames);
}

TEST_CASE("tofu link: frames are made the same way every time") {
  tf::frame_buffer a{}, b{};
  const std::size_t n = sm::make_tofu_frame(7, 123, 0, 63, a);
  CHECK(sm::make_tofu_frame(7, 123, 0, 63, b) == n);
  CHECK(a == b);
  REQUIRE(tf::frame_view::make(w::bytes(a.data(), n)).ok());
  CHECK(!tf::check_coordinates(tf::frame_view::make(w::bytes(a.data(), n))->rh()));
  CHECK(sm::make_tofu_frame(7, 124, 5, 5, b) == tf::frame_size(5));
}
