// `scaleup gen tofu`: a dual-rail Tofu-style link, simulated frame by frame (slicer, lanes with
// bit errors, reassembler, lane-quality controller), written as one capture record per slice.
#include <cstdio>
#include <random>
#include <string>

#include <fmt/core.h>

#include "cli.hpp"
#include "scaleup/sim/tofu_link.hpp"

namespace scaleup::cli {

namespace {

struct tofu_settings {
  gen_settings gen;
  sim::tofu_mode_policy policy = sim::tofu_link_config{}.policy;
  double error_rate = 0;
  std::uint64_t frames = 1000;
};

int run_gen_tofu(const tofu_settings& s) {
  const std::string& out = s.gen.out;
  sim::tofu_link_config cfg;
  cfg.frames = s.frames;
  cfg.policy = s.policy;
  cfg.seed = s.gen.seed;
  const double error_rate = s.error_rate;
  const bool json = s.gen.json;
  capture_file w;
  if (!w.open(out, cap::link_type::tofu)) return 1;
  std::mt19937_64 rng(cfg.seed);
  bool write_failed = false;
  // Both lanes see the same bit error rate.
  const auto st = sim::simulate_tofu_link<2>(
      cfg, rng, std::array<double, 2>{error_rate, error_rate},
      [&](const sim::tofu_slice_info& s, wire::bytes record) {
        if (!write_failed && !w.write(record, capture_epoch_ns + s.time_ns)) write_failed = true;
      });
  if (write_failed || !w.close()) {
    fmt::print(stderr, "scaleup: {}\n", w.error().c_str());
    return 1;
  }
  const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  if (json) {
    stdout_sink out;
    dissect::json_writer<stdout_sink>(out)
        .object()
        .member("frames", st.frames)
        .member("delivered", st.delivered)
        .member("lost", st.lost)
        .member("split_frames", st.split_frames)
        .member("duplicate_frames", st.duplicate_frames)
        .member("mode_switches", st.mode_switches)
        .member("replays", st.replays)
        .member("slices", st.slices)
        .member("failed_slices", st.failed_slices)
        .member("misdelivered", st.misdelivered)
        .member("duration_ns", st.duration_ns)
        .end()
        .raw("\n");
  } else
    fmt::print(
        "tofu link: 2 lanes, bit error rate {:.3g}\n"
        "  frames offered        {}\n"
        "  delivered             {}\n"
        "  lost                  {}\n"
        "  split / duplicate     {} / {} transmissions\n"
        "  mode switches         {}\n"
        "  replays               {}\n"
        "  slices (bad)          {} ({})\n"
        "  capture               {} (link type 148)\n",
        error_rate, n(st.frames), n(st.delivered), n(st.lost), n(st.split_frames),
        n(st.duplicate_frames), n(st.mode_switches), n(st.replays), n(st.slices),
        n(st.failed_slices), out.c_str());
  return 0;
}

}  // namespace

void add_gen_tofu(CLI::App& parent, commands& out) {
  auto s = std::make_shared<tofu_settings>();
  CLI::App* app = parent.add_subcommand(
      "tofu",
      "Simulate a dual-rail Tofu-style link: frames sliced over two lanes (split, duplicate, or "
      "adaptive: the lane-quality controller chooses), bit errors on each lane, replays of "
      "failed frames. Writes one record per slice on link type 148.");
  add_gen_options(app, s->gen);
  add_choice<sim::tofu_mode_policy>(app, "--mode", s->policy,
                                    {{"split", sim::tofu_mode_policy::split},
                                     {"duplicate", sim::tofu_mode_policy::duplicate},
                                     {"adaptive", sim::tofu_mode_policy::adaptive}},
                                    "how frames are sliced: split, duplicate or adaptive");
  app->add_option("--error-rate", s->error_rate, "bit error rate on each lane")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app->add_option("--frames,--count", s->frames, "frames to send")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}))
      ->capture_default_str();
  out.push_back({app, [s] { return run_gen_tofu(*s); }});
}

}  // namespace scaleup::cli
