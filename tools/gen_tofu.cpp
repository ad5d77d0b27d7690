// `scaleup gen tofu`: a dual-rail Tofu-style link, simulated frame by frame (slicer, lanes with
// bit errors, reassembler, lane-quality controller), written as one capture record per slice.
#include <cstdio>
#include <random>
#include <string>

#include "cli.hpp"
#include "scaleup/sim/tofu_link.hpp"

namespace scaleup::cli {

int gen_tofu(std::span<const std::string_view> argv) {
  std::string out;
  sim::tofu_link_config cfg;
  cfg.frames = 1000;
  double error_rate = 0;
  bool json = false;
  args a(argv);
  while (!a.done()) {
    const std::string_view f = a.flag();
    if (const auto taken = gen_option(f, a, out, cfg.seed, json)) {
      if (!taken->empty()) return fail_usage(*taken);
    } else if (f == "--mode") {
      const std::string_view v = a.value().value_or("");
      if (v == "split")
        cfg.policy = sim::tofu_mode_policy::split;
      else if (v == "duplicate")
        cfg.policy = sim::tofu_mode_policy::duplicate;
      else if (v == "adaptive")
        cfg.policy = sim::tofu_mode_policy::adaptive;
      else
        return fail_usage("gen: --mode takes split, duplicate or adaptive");
    } else if (f == "--error-rate") {
      const auto p = a.fraction();
      if (!p) return fail_usage("gen: --error-rate needs a bit error rate from 0 to 1");
      error_rate = *p;
    } else if (f == "--frames" || f == "--count") {
      const auto n = a.number<std::uint64_t>();
      if (!n || *n == 0 || *n > 1'000'000)
        return fail_usage("gen: --frames needs a number from 1 to 1000000");
      cfg.frames = *n;
    } else {
      return fail_usage("gen: unknown option '" + std::string(f) + "'");
    }
  }
  if (out.empty()) return fail_usage("gen: -o FILE is required");
  std::string err;
  auto w = cap::writer::create(out, cap::link_type::tofu, 65535, err);
  if (!w) {
    std::fprintf(stderr, "scaleup: %s\n", err.c_str());
    return 1;
  }
  std::mt19937_64 rng(cfg.seed);
  bool write_failed = false;
  // Both lanes see the same bit error rate.
  const auto st = sim::simulate_tofu_link<2>(
      cfg, rng, std::array<double, 2>{error_rate, error_rate},
      [&](const sim::tofu_slice_info& s, wire::bytes record) {
        if (!write_failed && !w->write(record, capture_epoch_ns + s.time_ns)) write_failed = true;
      });
  if (write_failed || !w->close()) {
    std::fprintf(stderr, "scaleup: %s\n", w->error().c_str());
    return 1;
  }
  const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  if (json)
    std::printf(
        "{\"frames\":%llu,\"delivered\":%llu,\"lost\":%llu,\"split_frames\":%llu,"
        "\"duplicate_frames\":%llu,\"mode_switches\":%llu,\"replays\":%llu,\"slices\":%llu,"
        "\"failed_slices\":%llu,\"misdelivered\":%llu,\"duration_ns\":%llu}\n",
        n(st.frames), n(st.delivered), n(st.lost), n(st.split_frames), n(st.duplicate_frames),
        n(st.mode_switches), n(st.replays), n(st.slices), n(st.failed_slices), n(st.misdelivered),
        n(st.duration_ns));
  else
    std::printf(
        "tofu link: 2 lanes, bit error rate %.3g\n"
        "  frames offered        %llu\n"
        "  delivered             %llu\n"
        "  lost                  %llu\n"
        "  split / duplicate     %llu / %llu transmissions\n"
        "  mode switches         %llu\n"
        "  replays               %llu\n"
        "  slices (bad)          %llu (%llu)\n"
        "  capture               %s (link type 148)\n",
        error_rate, n(st.frames), n(st.delivered), n(st.lost), n(st.split_frames),
        n(st.duplicate_frames), n(st.mode_switches), n(st.replays), n(st.slices),
        n(st.failed_slices), out.c_str());
  return 0;
}

}  // namespace scaleup::cli
