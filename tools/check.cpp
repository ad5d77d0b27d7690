// `scaleup check`: does a capture conform to SUE? Every rule of dissect/conformance.hpp (the
// table the Wireshark plugin's sue.check.* expert infos and docs/conformance.md come from), per
// rule what was examined, what could not be, the violations and the first violating frames.
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/core.h>

#include "capture_options.hpp"
#include "cli.hpp"
#include "scaleup/dissect/conformance.hpp"

namespace scaleup::cli {

namespace {

// Exit statuses, so that a script can tell a violation from a failure: 0 conformant, 1 unreadable
// input, 2 usage, 3 a rule violated.
constexpr int exit_violated = 3;

// --rules LIST: comma-separated rule ids; a prefix ending in '.' selects a family ("ack.").
std::optional<std::string> parse_rules(std::string_view list, dissect::rule_set& out) {
  out.reset();
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view id = list.substr(start, comma - start);
    bool found = false;
    for (const auto& r : dissect::rules)
      if (r.id == id || (!id.empty() && id.back() == '.' && r.id.starts_with(id))) {
        out.set(static_cast<std::size_t>(r.which));
        found = true;
      }
    if (!found) return "--rules: unknown rule '" + std::string(id) + "' (see docs/conformance.md)";
    start = comma + 1;
  }
  return std::nullopt;
}

// --partitions FILE: lines `XPU PARTITION...` (partitions a source XPU may use), # comments.
std::optional<std::string> read_partitions(const std::string& path, dissect::partition_policy& p) {
  std::ifstream in(path);
  if (!in) return path + ": cannot read";
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string w;
    std::optional<std::uint16_t> src;
    while (words >> w) {
      const auto v = parse_number<std::uint16_t>(w);
      if (!v || *v >= transport::partitions)
        return "--partitions: " + path + ":" + std::to_string(n) + ": '" + w +
               "' is not an XPU or partition from 0 to 1023";
      if (!src) {
        src = *v;
        p.listed.set(*v);
      } else {
        p.allowed->allow(*src, *v);
      }
    }
  }
  return std::nullopt;
}

constexpr std::string_view ports_note =
    "checked as one port: if the capture holds several ports of a SUE instance (a fabric of 2 "
    "or 4 ports), their PSN spaces mix and break the per-connection rules by themselves; check "
    "it with --ports 2 or 4, or --port-by-interface where each capture interface is a port "
    "(docs/conformance.md, \"Connections\")";

void print_text(stdout_sink& out, const std::string& file, std::uint64_t frames,
                const dissect::conformance& c, const report_notes& notes) {
  const auto verdict = c.conformant() ? std::string("conformant")
                                      : std::to_string(c.violations()) + " violation" +
                                            (c.violations() == 1 ? "" : "s");
  out(file + ": " + std::to_string(frames) + " frames, " + std::to_string(c.pdus()) +
      " SUE PDUs, " + std::to_string(c.lite_frames()) + " SUE Lite frames: " + verdict + "\n");
  notes.put_text(out, "judged by the per-connection rules");
  out(fmt::format("  {:<18} {:>10} {:>10} {:>10}  {}\n", "rule", "examined", "not exam.",
                  "violations", "seed"));
  for (const auto& r : dissect::rules) {
    if (!c.selected(r.which)) continue;
    const auto& t = c.tally(r.which);
    out(fmt::format("  {:<18} {:>10} {:>10} {:>10}  {}\n", r.id, t.examined, t.not_examinable,
                    t.violations, r.seed));
  }
  for (const auto& r : dissect::rules) {
    const auto& t = c.tally(r.which);
    if (!c.selected(r.which) || t.violations == 0) continue;
    out("\n" + std::string(r.id) + ": " + std::string(r.sentence) + "\n");
    for (const auto& v : t.first)
      out("  frame " + std::to_string(v.frame) + ": expected " + v.expected + "; seen " + v.seen +
          "\n");
    if (t.violations > t.first.size())
      out("  ... and " + std::to_string(t.violations - t.first.size()) + " more\n");
  }
  if (c.ports_may_mix()) out("\nnote: " + std::string(ports_note) + "\n");
}

void print_json(stdout_sink& out, const std::string& file, std::uint64_t frames,
                const dissect::conformance& c, const report_notes& notes) {
  dissect::json_writer<stdout_sink> j(out);
  j.object()
      .member("file", file)
      .member("frames", frames)
      .member("pdus", c.pdus())
      .member("lite_frames", c.lite_frames())
      .member_bool("conformant", c.conformant())
      .member("violations", c.violations())
      .member_bool("ports_may_mix", c.ports_may_mix());
  notes.put_json(j);
  j.array("rules");
  for (const auto& r : dissect::rules) {
    if (!c.selected(r.which)) continue;
    const auto& t = c.tally(r.which);
    j.object()
        .member("id", r.id)
        .member("seed", r.seed)
        .member("sentence", r.sentence)
        .member("examined", t.examined)
        .member("not_examinable", t.not_examinable)
        .member("violations", t.violations)
        .array("first");
    for (const auto& v : t.first)
      j.object()
          .member("frame", v.frame)
          .member("expected", v.expected)
          .member("seen", v.seen)
          .end();
    j.end().end();
  }
  j.end().end().raw("\n");
  j.flush();
}

struct check_settings {
  app::session_settings session;
  bool json = false;
  std::string rules;
  std::uint32_t max_pdu = dissect::check_config{}.max_pdu;
  std::uint32_t max_lite = dissect::check_config{}.max_lite;
  unsigned vcs = dissect::check_config{}.vcs;
  unsigned ports = dissect::check_config{}.ports;
  std::uint64_t rto_ns = dissect::check_config{}.rto_ns;
  std::string partitions;
  unsigned link_gbps = dissect::check_config{}.link_mbps / 1000;
  std::uint64_t pfc_reaction_ns = dissect::check_config{}.pfc_reaction_ns;
  bool keying_per_vc = true;
};

// Every frame through the rules, in frame order; each reading (a cut file may be read twice)
// starts afresh.
class check_report final : public app::frame_consumer {
 public:
  check_report(const dissect::check_config& cfg, const app::engine_settings& engine)
      : cfg_(cfg), engine_(engine) {}
  void start(const app::reading& r) override {
    name = r.name;
    c.emplace(cfg_);
    frames = 0;
  }
  void take(const app::frame_out& f) override {
    ++frames;
    c->add(*f.tree, f.in.pkt.data, f.in.pkt.number, f.in.ns, app::port_of(engine_, f.in.pkt));
  }

  // Written at every frame by take: apart from the start of the object (frame_consumer::look).
  alignas(64) std::optional<dissect::conformance> c;
  std::uint64_t frames = 0;
  std::string name;

 private:
  const dissect::check_config& cfg_;
  const app::engine_settings& engine_;
};

int run_check(const CLI::App& app, const check_settings& s) {
  scaleup::app::session_settings ss = s.session;
  ss.reread = true;
  ss.progress = true;
  ss.trees_in_order = true;  // the rules read each frame's tree, in frame order
  scaleup::app::session se(ss);
  if (const auto bad = se.prepare()) return fail_usage(app, *bad);
  if (const auto* f = se.filter(); f && (f->needs_conformance() || f->needs_analysis()))
    return fail_usage(app,
                      "-Y: check judges the frames the filter keeps: the filter cannot name "
                      "what is judged of them (sue.check.*, sue.analysis.*); dump -Y can");
  dissect::check_config cfg;
  if (!s.rules.empty())
    if (const auto e = parse_rules(s.rules, cfg.selected)) return fail_usage(app, *e);
  cfg.max_pdu = s.max_pdu;
  cfg.max_lite = s.max_lite;
  cfg.vcs = static_cast<std::uint8_t>(s.vcs);
  cfg.ports = static_cast<std::uint8_t>(s.ports);
  cfg.rto_ns = s.rto_ns;
  cfg.link_mbps = s.link_gbps * 1000;
  cfg.pfc_reaction_ns = s.pfc_reaction_ns;
  cfg.keying_per_vc = s.keying_per_vc;
  dissect::partition_policy partitions;
  if (!s.partitions.empty()) {
    if (!std::ifstream(s.partitions)) {  // a file that cannot be read: 1, as for the capture
      fmt::print(stderr, "scaleup: {}: cannot read\n", s.partitions.c_str());
      return 1;
    }
    if (const auto e = read_partitions(s.partitions, partitions)) return fail_usage(app, *e);
    cfg.partitions = &partitions;
  }
  cfg.profile = se.options().profile != nullptr;
  cfg.max_connections = ss.engine.max_connections;
  cfg.port_known = ss.engine.port_by_interface;

  check_report r(cfg, ss.engine);
  const auto end = se.run(r);
  // A report on part of a capture could call it conformant: none.
  if (end != scaleup::app::read_end::whole) return 1;
  r.c->finish();
  stdout_sink out;
  const report_notes notes{r.c->not_analysed_frames(), cfg.max_connections, se.flows(), se.drops()};
  if (s.json)
    print_json(out, r.name, r.frames, *r.c, notes);
  else
    print_text(out, r.name, r.frames, *r.c, notes);
  return r.c->conformant() ? 0 : exit_violated;
}

}  // namespace

void add_check(CLI::App& parent, commands& out) {
  auto s = std::make_shared<check_settings>();
  CLI::App* app = parent.add_subcommand(
      "check",
      "Judge a capture by SUE's conformance rules (docs/conformance.md): per rule what was "
      "examined, what could not be, the violations and the first violating frames. Exit 0 "
      "conformant, 1 unreadable input, 2 usage error, 3 a rule violated.");
  add_input_options(app, s->session.source);
  app->add_flag("--json", s->json, "one JSON object");
  app->add_option("--rules", s->rules,
                  "rule ids to check, comma-separated; a prefix ending in '.' selects a family");
  app->add_option("--max-pdu", s->max_pdu, "the packing limit of a SUE PDU in bytes")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app->add_option("--max-lite", s->max_lite, "the limit of a SUE Lite payload in bytes")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app->add_option("--vcs", s->vcs, "VCs configured")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  app->add_option("--ports", s->ports, "ports of each SUE instance")
      ->check(CLI::IsMember({1u, 2u, 4u}))
      ->capture_default_str();
  app->add_option("--rto", s->rto_ns, "the retransmission timeout in nanoseconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--link-gbps", s->link_gbps,
                  "the link's speed in Gb/s: how long a PFC pause's quanta last")
      ->check(CLI::Range(1, 1600))
      ->capture_default_str();
  app->add_option("--pfc-reaction", s->pfc_reaction_ns,
                  "nanoseconds after a captured PFC frame before its pause holds")
      ->capture_default_str();
  app->add_option("--partitions", s->partitions,
                  "file of lines XPU PARTITION...: the partitions each source XPU may use");
  add_choice<bool>(app, "--keying", s->keying_per_vc,
                   {{"source-vc", true}, {"port-destination", false}},
                   "the PSN spaces: per {source, VC} (the default), or per {output port, "
                   "destination XPU} across VCs (R2 4.2 step 4 read literally)");
  add_engine_options(app, s->session.engine);
  add_thread_options(app, s->session);
  add_hold_option(app, s->session);
  add_filter_option(app, s->session.filter, scaleup::app::filter_scope::counted,
                    "judge and count only the frames it keeps, as if the capture held no other. "
                    "The transport rules follow each connection's PSNs and ACKs: keep both "
                    "directions of a conversation (sue.rh.vc == 1, ip.addr == A && ip.addr == B)");
  out.push_back({app, [app, s] { return run_check(*app, *s); }});
}

}  // namespace scaleup::cli
