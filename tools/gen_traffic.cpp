// `scaleup gen traffic`: commands queued per {destination, VC}, packed by the library's packer
// and scheduler, written as SUE PDUs or SUE Lite frames.
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/pack/packer.hpp"
#include "scaleup/pack/random_command.hpp"

namespace scaleup::cli {

namespace {

enum class pattern { uniform, incast, fig21 };

struct traffic {
  const pack::profile* prof = &pack::default_profile;
  pattern pat = pattern::uniform;
  std::uint32_t destinations = 8;
  std::uint8_t vcs = 2;
  std::uint32_t count = 64;
};

struct command {
  std::uint16_t src = 0, dst = 0;
  std::uint8_t vc = 0;
  std::array<std::uint8_t, pack::max_command_bytes> bytes{};
  std::size_t size = 0;
};

// Each source XPU has its own SUE instance, so its own packer. Uniform traffic has one source
// and many destinations; incast many sources and one destination.
using wide_packer = pack::packer<1024, 4, 4096>;
using narrow_packer = pack::packer<1, 4, 512>;

template <class Packer>
int run(const traffic& tr, wire::encap e, std::mt19937_64& rng, capture_out& cap) {
  const bool lite = e == wire::encap::lite;
  typename Packer::config cfg;
  cfg.limit = lite ? pack::lite_pack_limit : pack::sue_pack_limit;
  const auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };

  // The commands, in arrival order; they stay here while queued (the packer holds views).
  std::vector<command> cmds(tr.pat == pattern::fig21 ? 5 : tr.count);
  static constexpr std::array<std::uint16_t, 5> fig21_dst{1, 2, 3, 4, 3};  // A..E; C and E share
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    command& c = cmds[i];
    if (tr.pat == pattern::fig21) {
      c.src = 0, c.dst = fig21_dst[i], c.vc = 0;
    } else if (tr.pat == pattern::uniform) {
      c.src = 0, c.dst = static_cast<std::uint16_t>(pick(1, tr.destinations));
      c.vc = static_cast<std::uint8_t>(pick(0, tr.vcs - 1u));
    } else {
      c.src = static_cast<std::uint16_t>(pick(1, tr.destinations)), c.dst = 0;
      c.vc = static_cast<std::uint8_t>(pick(0, tr.vcs - 1u));
    }
    const auto r = pack::random_command(*tr.prof, rng, pack::max_command_bytes, c.bytes);
    if (!r || r.value == 0) {
      fmt::print(stderr, "scaleup: profile {} has no command that fits\n", tr.prof->name());
      return 1;
    }
    c.size = r.value;
  }

  std::map<std::uint16_t, std::unique_ptr<Packer>> packers;
  std::map<std::uint32_t, std::uint16_t> psn;  // per {source, destination, VC}
  std::vector<std::uint8_t> payload(cfg.limit);
  std::array<std::uint64_t, 1100> cookies{};
  std::vector<command_note> notes;

  const auto push = [&](std::size_t i) -> bool {
    command& c = cmds[i];
    auto& pk = packers[c.src];
    if (!pk) pk = std::make_unique<Packer>(*tr.prof, cfg);
    const pack::command_type* t = tr.prof->find(c.bytes[0]);
    const std::size_t ctrl = t->control_bytes();
    const auto err =
        pk->push({.destination =
                      static_cast<std::uint16_t>(std::is_same_v<Packer, narrow_packer> ? 0 : c.dst),
                  .vc = c.vc,
                  .control = wire::bytes(c.bytes.data(), ctrl),
                  .data = pack::borrow(wire::bytes(c.bytes.data() + ctrl, c.size - ctrl)),
                  .cookie = i});
    if (err) fmt::print(stderr, "scaleup: command {}: {}\n", i + 1, err.what);
    return !err;
  };

  // Drains one PDU from every source that has commands queued.
  const auto send_round = [&]() -> bool {
    for (auto& [src, pk] : packers) {
      if (pk->queued() == 0) continue;
      const auto r = pk->next(payload, pack::always_eligible{}, cookies);
      if (!r || r->commands == 0) continue;
      notes.clear();
      const command& first = cmds[cookies[0]];
      for (std::size_t k = 0; k < r->commands; ++k)
        notes.push_back(note_of(
            *tr.prof,
            std::span<const std::uint8_t>(cmds[cookies[k]].bytes.data(), cmds[cookies[k]].size)));
      wire::frame_params p;
      p.kind = e;
      p.src_xpu = first.src;
      p.dst_xpu = first.dst;
      p.tc = e == wire::encap::afh1 ? 0 : r->vc;
      const std::span<const std::uint8_t> pl(payload.data(), r->bytes);
      if (lite) {
        if (!cap.write(p, nullptr, pl, notes)) return false;
        continue;
      }
      wire::reliability_header rh{};
      rh.xpuid = first.src;
      rh.vc = r->vc;
      rh.npsn = psn[(std::uint32_t{first.src} << 16) | (std::uint32_t{first.dst} << 2) | r->vc]++;
      if (!cap.write(p, &rh, pl, notes)) return false;
    }
    return true;
  };

  if (tr.pat == pattern::fig21) {
    // All five are queued before the scheduler runs: A, B, C+E, D (R2 4.5).
    for (std::size_t i = 0; i < cmds.size(); ++i)
      if (!push(i)) return 1;
  }
  std::size_t next = tr.pat == pattern::fig21 ? cmds.size() : 0;
  for (;;) {
    // Commands arrive in bursts faster than the link drains them (R2 4.5), so queues build up
    // and the packer has something to pack; it never waits for more.
    for (std::size_t b = pick(1, 8); b > 0 && next < cmds.size(); --b)
      if (!push(next++)) return 1;
    bool queued = false;
    for (auto& [src, pk] : packers) queued = queued || pk->queued() > 0;
    if (!queued && next == cmds.size()) break;
    if (!send_round()) return 1;
  }
  return 0;
}

struct traffic_settings {
  gen_settings gen;
  std::string encaps = "udp4,lite";
  std::string profile = "default";
  std::uint32_t link = dissect::link_ethernet;
  traffic tr;
};

int run_gen_traffic(const CLI::App& app, const traffic_settings& s) {
  const std::string& out = s.gen.out;
  const std::uint64_t seed = s.gen.seed;
  const bool json = s.gen.json;
  const std::uint32_t link = s.link;
  traffic tr = s.tr;
  scaleup::app::profile_choice chosen;  // a profile file stays loaded while the packers use it
  if (const auto why = chosen.resolve(s.profile, false))
    return fail_usage(app, "--profile: " + *why);
  tr.prof = chosen.profile();
  std::vector<wire::encap> list;
  const auto allowed = [&](wire::encap e) {
    return link == dissect::link_ethernet || e == wire::encap::afh2 || e == wire::encap::afh2c ||
           e == wire::encap::lite;
  };
  if (const auto bad = parse_encaps(s.encaps, allowed, list))
    return fail_usage(app, "--encap: " + *bad);

  capture_out cap(out, link, json);
  if (!cap.open()) return 1;
  std::mt19937_64 rng(seed);
  for (const wire::encap e : list) {
    const int rc = tr.pat == pattern::incast ? run<narrow_packer>(tr, e, rng, cap)
                                             : run<wide_packer>(tr, e, rng, cap);
    if (rc) return rc;
  }
  return cap.close() ? 0 : 1;
}

}  // namespace

void add_gen_traffic(CLI::App& parent, commands& out) {
  auto s = std::make_shared<traffic_settings>();
  CLI::App* app = parent.add_subcommand(
      "traffic",
      "Queue commands per {destination, VC}, pack them with the packer and scheduler, and write "
      "the PDUs (RH, commands, R-CRC; SUE Lite: commands only).");
  add_gen_options(app, s->gen);
  app->add_option("--profile", s->profile,
                  "command profile: a name (" + profile_names() + ") or a profile file")
      ->capture_default_str();
  add_choice<pattern>(
      app, "--pattern", s->tr.pat,
      {{"uniform", pattern::uniform}, {"incast", pattern::incast}, {"fig21", pattern::fig21}},
      "uniform (one XPU to many), incast (many to one) or fig21 (R2 Fig. 21)");
  app->add_option("--destinations", s->tr.destinations, "XPUs on the many side")
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{1023}))
      ->capture_default_str();
  app->add_option("--vcs", s->tr.vcs, "VCs used")->check(CLI::Range(1, 4))->capture_default_str();
  app->add_option("--count", s->tr.count, "commands per encapsulation")
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{1'000'000}))
      ->capture_default_str();
  app->add_option("--encap", s->encaps, "comma-separated encapsulations, or all")
      ->capture_default_str();
  add_link_option(app, s->link);
  out.push_back({app, [app, s] { return run_gen_traffic(*app, *s); }});
}

}  // namespace scaleup::cli
