// `scaleup gen session`: runs a fabric of SUE instances (packing, go-back-N, CBFC, LLR, failover)
// on a switch with lossy links and writes the wire as the switch sees it, every transmission
// and retransmission included. The command drives the fabric as an outside event loop would: it
// adds each command when its time comes and advances the fabric from one event to the next.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include <fmt/core.h>

#include "cli.hpp"
#include "scaleup/sim/fabric.hpp"

namespace scaleup::cli {

namespace {

// XPU:PORT:DOWN[:UP] in ns.
std::optional<std::pair<sim::link_event, std::optional<sim::link_event>>> link_failure(
    std::string_view s) {
  std::array<std::uint64_t, 4> v{};
  std::size_t n = 0;
  for (std::size_t start = 0; start <= s.size() && n < 4;) {
    const std::size_t colon = std::min(s.find(':', start), s.size());
    const auto x = parse_number<std::uint64_t>(s.substr(start, colon - start));
    if (!x) return std::nullopt;
    v[n++] = *x;
    start = colon + 1;
  }
  if (n < 3 || v[0] > 0xFFFF || v[1] > 3) return std::nullopt;
  const auto xpu = static_cast<std::uint16_t>(v[0]);
  const auto port = static_cast<std::uint8_t>(v[1]);
  std::optional<sim::link_event> up;
  if (n == 4) up = sim::link_event{v[3], xpu, port, true};
  return std::pair{sim::link_event{v[2], xpu, port, false}, up};
}

struct session_settings {
  gen_settings gen;
  sim::fabric_config cfg = [] {
    sim::fabric_config c;
    c.xpus = 8;
    return c;
  }();
  unsigned xpus = 8, ports = 1;
  std::vector<std::string> fail_links;
  std::string encap = "udp4";
  std::uint32_t commands = 10'000;
  double load = 0.5;
  std::string misbehave;
  std::uint32_t cbfc = 0;
  bool keying_per_vc = true;
};

int run_gen_session(const CLI::App& app, const session_settings& set) {
  const std::string& out = set.gen.out;
  sim::fabric_config cfg = set.cfg;
  cfg.seed = set.gen.seed;
  cfg.xpus = static_cast<std::uint16_t>(set.xpus);
  cfg.ports = static_cast<std::uint8_t>(set.ports);
  cfg.keys = set.keying_per_vc ? transport::keying::port_peer_vc : transport::keying::port_peer;
  const std::uint32_t commands = set.commands;
  const double load = set.load;
  const bool json = set.gen.json;
  for (const auto& f : set.fail_links) {
    const auto l = link_failure(f);
    if (!l) return fail_usage(app, "--fail-link takes XPU:PORT:DOWN_NS[:UP_NS], not '" + f + "'");
    cfg.link_events.push_back(l->first);
    if (l->second) cfg.link_events.push_back(*l->second);
  }
  const auto e = wire::encap_from_string(set.encap);
  if (!e || *e == wire::encap::lite)
    return fail_usage(app, "--encap takes one SUE encapsulation (not lite: it has no RH)");
  cfg.encap = *e;
  if (!set.misbehave.empty()) {
    // An endpoint that breaks one conformance rule once, for `scaleup check`'s tests.
    const auto m = std::find_if(sim::misbehaviour_rules.begin(), sim::misbehaviour_rules.end(),
                                [&](const auto& r) { return r.second == set.misbehave; });
    if (m == sim::misbehaviour_rules.end())
      return fail_usage(app,
                        "--misbehave takes ack.unsent, ack.monotonic, nack.once or gbn.resend");
    cfg.misbehave = m->first;
  }
  // R2 4.4: the unordered mode spreads work over ports; with one there is nothing to spread, and
  // running strict under the name "unordered" would misreport the capture.
  if (cfg.unordered && cfg.ports == 1)
    return fail_usage(app,
                      "--unordered needs --ports 2 or 4 (R2 4.4: only with more than one port)");
  for (const auto& l : cfg.link_events)
    if (l.xpu >= cfg.xpus || l.port >= cfg.ports)
      return fail_usage(app, "--fail-link names an XPU or port the fabric does not have");
  if (set.cbfc > 0) {
    cfg.cbfc_credits = set.cbfc;
    if (set.cbfc < cfg.least_cbfc_credits())
      return fail_usage(app, fmt::format("--cbfc takes at least {} credits (64-byte cells): the "
                                         "largest frame must fit",
                                         cfg.least_cbfc_credits()));
  }

  capture_file w;
  if (!w.open(out, cap::link_type::ethernet, cfg.ports)) return 1;
  sim::fabric fab(cfg);
  if (fab.config_error()) return fail_usage(app, std::string(fab.config_error().what));
  bool write_failed = false;
  fab.on_wire([&](std::uint64_t ns, std::uint8_t port, std::span<const std::uint8_t> frame) {
    if (!write_failed && !w.write(frame, capture_epoch_ns + ns, port)) write_failed = true;
  });
  // Commands between random pairs, on VC0 (requests) or VC1 (responses), 1 to 256 bytes of
  // data, arriving evenly at `load` of the fabric's capacity. Each is added when its time comes.
  std::mt19937_64 rng(cfg.seed);
  const double mean_bits = 8.0 * (12 + 128.5);
  const double gap = mean_bits / (load * cfg.instance_gbps * cfg.xpus);
  std::uint32_t added = 0;
  const auto offer_until = [&](std::uint64_t t) {
    for (; added < commands && static_cast<std::uint64_t>(added * gap) <= t; ++added) {
      const auto src = static_cast<std::uint16_t>(rng() % cfg.xpus);
      const auto dst = static_cast<std::uint16_t>((src + 1 + rng() % (cfg.xpus - 1u)) % cfg.xpus);
      (void)fab.add({.at = static_cast<std::uint64_t>(added * gap),
                     .src = src,
                     .dst = dst,
                     .vc = static_cast<std::uint8_t>(rng() % 2),
                     .data = static_cast<std::uint16_t>(1 + rng() % 256)});
    }
  };
  // A long run shows how far it got, on a terminal only. A fabric that cannot deliver the rest
  // (a single port that never comes back) is given up on after a generous time.
  const bool progress = isatty(2);
  const std::uint64_t end = static_cast<std::uint64_t>(commands * gap);
  const std::uint64_t give_up = end * 1000 + 100'000'000;
  std::uint64_t shown = 0, steps = 0;
  for (;;) {
    const std::uint64_t next_offer =
        added < commands ? static_cast<std::uint64_t>(added * gap) : sim::fabric::never;
    const std::uint64_t t = std::min(fab.next_event_time(), next_offer);
    if (t == sim::fabric::never || t > give_up) break;
    offer_until(t);
    fab.advance(t);
    // (Every 1024th event time: stats() walks every link end of the fabric.)
    if (progress && (++steps & 1023) == 0) {
      if (const std::uint64_t d = fab.stats().delivered; d >= shown + commands / 100 + 1) {
        shown = d;
        fmt::print(stderr, "\rscaleup: {} of {} commands delivered",
                   static_cast<unsigned long long>(shown), commands);
      }
    }
  }
  if (progress) fmt::print(stderr, "\r{:>60}\r", "");
  if (write_failed || !w.close()) {
    fmt::print(stderr, "scaleup: {}\n", w.error().c_str());
    return 1;
  }
  const auto& s = fab.stats();
  if (json) {
    stdout_sink out;
    dissect::json_writer<stdout_sink>(out)
        .object()
        .member("offered", s.offered)
        .member("delivered", s.delivered)
        .member("duplicates", s.duplicates)
        .member("out_of_order", s.out_of_order)
        .member("retransmissions", s.retransmissions)
        .member("nacks", s.nacks)
        .number_text("goodput_gbps", fmt::format("{:.3f}", s.goodput_gbps()))
        .member("frames", s.frames)
        .member("acks", s.acks)
        .member("lost", s.lost)
        .member("corrupted", s.corrupted)
        .member("failovers", s.failovers)
        .member("moved", s.moved)
        .member("unreachable", s.unreachable)
        .member("peers_unreachable", s.peers_unreachable)
        .member("failed", s.failed)
        .member("failed_then_delivered", s.failed_then_delivered)
        .member("llr_replays", s.llr_replays)
        .member("llr_links_down", s.llr_links_down)
        .member("llr_dropped", s.llr_dropped)
        .member("credit_stalls", s.credit_stalls)
        .member("control", s.control)
        .member("duration_ns", fab.now())
        .end()
        .raw("\n");
  } else {
    fmt::print(
        "session: {} XPUs x {} port{} ({}), loss {:.3g}, corruption {:.3g}, {}\n"
        "  commands offered      {}\n"
        "  delivered             {}\n"
        "  duplicates            {} (must be 0)\n"
        "  out of order          {} (must be 0)\n"
        "  frames on the wire    {} ({} ACK/NACK carried)\n"
        "  retransmissions       {}\n"
        "  NACKs                 {}\n"
        "  lost / corrupted      {} / {}\n"
        "  failovers             {} ({} PDUs moved)\n"
        "  peers unreachable     {} ({} commands failed)\n"
        "  LLR replays           {} ({} links given up)\n"
        "  CBFC credit stalls    {}\n"
        "  goodput               {:.1f} Gb/s over {:.1f} us\n"
        "  capture               {}\n",
        unsigned{cfg.xpus}, unsigned{cfg.ports}, cfg.ports == 1 ? "" : "s",
        fab.config().unordered ? "unordered" : "strict", cfg.loss, cfg.corrupt,
        std::string(wire::to_string(cfg.encap)).c_str(), static_cast<unsigned long long>(s.offered),
        static_cast<unsigned long long>(s.delivered), static_cast<unsigned long long>(s.duplicates),
        static_cast<unsigned long long>(s.out_of_order), static_cast<unsigned long long>(s.frames),
        static_cast<unsigned long long>(s.acks), static_cast<unsigned long long>(s.retransmissions),
        static_cast<unsigned long long>(s.nacks), static_cast<unsigned long long>(s.lost),
        static_cast<unsigned long long>(s.corrupted), static_cast<unsigned long long>(s.failovers),
        static_cast<unsigned long long>(s.moved),
        static_cast<unsigned long long>(s.peers_unreachable),
        static_cast<unsigned long long>(s.failed), static_cast<unsigned long long>(s.llr_replays),
        static_cast<unsigned long long>(s.llr_links_down),
        static_cast<unsigned long long>(s.credit_stalls), s.goodput_gbps(),
        static_cast<double>(fab.now()) / 1000.0, out.c_str());
  }
  return 0;
}

}  // namespace

void add_gen_session(CLI::App& parent, commands& out) {
  auto s = std::make_shared<session_settings>();
  CLI::App* app = parent.add_subcommand(
      "session",
      "Run the fabric harness: XPUs on one switch, go-back-N over links that lose, corrupt, "
      "duplicate or reorder frames, links failing at given times. Writes every frame the switch "
      "receives (retransmissions included) and prints delivery statistics. A capture named "
      "*.pcapng has an interface per port, portN, for `check --port-by-interface`.");
  add_gen_options(app, s->gen);
  app->add_option("--xpus", s->xpus, "XPUs on the switch")
      ->check(CLI::Range(2u, unsigned{sim::fabric::max_xpus}))
      ->capture_default_str();
  app->add_option("--ports", s->ports, "ports per XPU, one plane each")
      ->check(CLI::IsMember({1u, 2u, 4u}))
      ->capture_default_str();
  app->add_flag("--unordered", s->cfg.unordered, "spread PDUs over the ports (R2 4.4)");
  for (const auto& [name, field] : {std::pair{"--loss", &sim::fabric_config::loss},
                                    {"--corrupt", &sim::fabric_config::corrupt},
                                    {"--duplicate", &sim::fabric_config::duplicate},
                                    {"--reorder", &sim::fabric_config::reorder}})
    app->add_option(name, s->cfg.*field, "probability per frame")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
  app->add_option("--fail-link", s->fail_links, "XPU:PORT:DOWN_NS[:UP_NS] (repeatable)")
      ->allow_extra_args(false);
  app->add_option("--commands", s->commands, "commands offered")
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{10'000'000}))
      ->capture_default_str();
  app->add_option("--load", s->load, "offered load, a fraction of capacity above 0")
      ->check(CLI::Range(1e-9, 1.0))
      ->capture_default_str();
  app->add_option("--encap", s->encap, "one SUE encapsulation")->capture_default_str();
  app->add_option("--misbehave", s->misbehave,
                  "one endpoint breaks this conformance rule once (ack.unsent, ack.monotonic, "
                  "nack.once, gbn.resend): a capture for `scaleup check`");
  app->add_option("--cbfc", s->cbfc,
                  "credit-based flow control on every link (R2 3.5.7): the credits, in 64-byte "
                  "cells, each receiver grants per VC and returns as it takes frames")
      ->check(CLI::Range(1u, 1u << 22));
  app->add_flag("--llr", s->cfg.llr,
                "Link Layer Retransmission on every link (R2 3.5.5): a damaged or lost frame is "
                "replayed by the link, not resent end to end. A replay goes back to the first "
                "frame not acknowledged, so above about one damaged frame in a link's frames "
                "in flight (some hundreds at 800 Gbps) replays rarely get through and the "
                "end-to-end timer resends too. Not with --reorder: LLR needs links that keep "
                "frames in order");
  add_choice<bool>(app, "--keying", s->keying_per_vc,
                   {{"source-vc", true}, {"port-destination", false}},
                   "PSN spaces per {port, peer, VC} (the default), or per {port, peer} across "
                   "VCs as R1 had it (check its capture with `scaleup check --keying "
                   "port-destination`)");
  out.push_back({app, [app, s] { return run_gen_session(*app, *s); }});
}

}  // namespace scaleup::cli
