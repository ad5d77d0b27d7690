// `scaleup dump`: reads a capture (a file, a pipe or an interface) and prints the dissection
// engine's tree for every frame, in the forms tshark has: a summary line, the field tree (-V),
// JSON Lines (--json, -T json) or chosen fields (-T fields -e NAME).
#include <unistd.h>

#include <cstdio>
#include <string>

#include <fmt/core.h>

#include "capture_options.hpp"
#include "cli.hpp"
#include "scaleup/dissect/field_tree.hpp"
#include "scaleup/dissect/frame_json.hpp"
#include "scaleup/dissect/registry.hpp"
#include "scaleup/dissect/summary.hpp"

namespace scaleup::cli {

namespace {

enum class format { summary, verbose, json, fields };

struct dump_settings {
  app::session_settings session;
  bool verbose = false, json = false, quiet = false;
  format as = format::summary;
  std::vector<std::string> fields;
  std::vector<std::string> field_options;  // -E
  std::string fcs = "auto";
};

// -E NAME=VALUE, as tshark reads it (epan/print.c, output_fields_set_option): the first
// character of the value decides; "/t" and "/s" are a tab and a space (the aggregator takes only
// "/s"), a '/' before anything else a backslash; a later -E overrides an earlier one.
std::optional<std::string> read_field_options(const std::vector<std::string>& opts,
                                              dissect::field_layout& out) {
  for (const auto& o : opts) {
    const auto eq = o.find('=');
    if (eq == o.npos || eq == 0)
      return "-E takes NAME=VALUE (bom, header, separator, occurrence, aggregator, quote, escape), "
             "not '" +
             o + "'";
    const std::string key = o.substr(0, eq), value = o.substr(eq + 1);
    if (value.empty()) return "-E " + key + "= needs a value";
    const char c = value[0], next = value.size() > 1 ? value[1] : '\0';
    const auto bad = [&](std::string_view takes) {
      return "-E " + key + "= takes " + std::string(takes) + ", not '" + value + "'";
    };
    if (key == "header" || key == "bom" || key == "escape") {
      if (c != 'y' && c != 'n') return bad("y or n");
      (key == "header" ? out.header : key == "bom" ? out.bom : out.escape) = c == 'y';
    } else if (key == "separator") {
      out.separator = c != '/' ? c : next == 't' ? '\t' : next == 's' ? ' ' : '\\';
    } else if (key == "aggregator") {
      out.aggregator = c != '/' ? c : next == 's' ? ' ' : '\\';
    } else if (key == "occurrence") {
      if (c != 'f' && c != 'l' && c != 'a') return bad("f (first), l (last) or a (all)");
      out.occurrence = static_cast<dissect::field_occurrence>(c);
    } else if (key == "quote") {
      if (c != 'd' && c != 's' && c != 'n') return bad("d (\"), s (') or n (none)");
      out.quote = c == 'd' ? '"' : c == 's' ? '\'' : '\0';
    } else {
      return "-E: no option is named '" + key +
             "' (bom, header, separator, occurrence, aggregator, quote, escape)";
    }
  }
  return std::nullopt;
}

// Each frame's output: written on the thread that dissected it (look), and sent out in frame
// order (take), with the Tofu frame a slice completes after it.
class dump_output final : public app::frame_consumer {
 public:
  dump_output(const dump_settings& s, const dissect::field_layout& layout, stdout_sink& out)
      : s_(s), layout_(layout), out_(out) {}

  void start(const app::reading& r) override {
    streaming_ = r.streaming;
    // -T fields' header, once the capture is open (none for one that is not).
    if (s_.as == format::fields) dissect::put_field_header(out_, s_.fields, layout_);
  }
  void look(const dissect::large_tree& t, const app::frame_in& f, text_buffer& text) override {
    print(text, t, f.meta);
  }
  void take(const app::frame_out& f) override {
    ++frames;
    out_.keep(f.text);
    if (f.tofu_frame) print(out_, *f.tofu_frame, f.in.meta);
    // Read as it happens: each frame's output goes out at once.
    if (streaming_) out_.flush();
  }
  void taken() override { out_.release(); }
  void flush() override { out_.flush(); }

 private:
  // One frame's output, to `out` or to a batch's text.
  template <class Out>
  void print(Out& out, const dissect::large_tree& t, const dissect::frame_meta& m) const {
    if (s_.quiet) return;
    switch (s_.as) {
      case format::json:
        dissect::put_json(out, t, m);
        break;
      case format::verbose:
        dissect::put_verbose(out, t, m);
        break;
      case format::summary:
        dissect::put_summary(out, t, m);
        break;
      case format::fields:
        dissect::put_field_row(out, t, m, s_.fields, layout_);
        break;
    }
    out("\n");
  }

  const dump_settings& s_;
  const dissect::field_layout& layout_;
  stdout_sink& out_;
  bool streaming_ = false;

 public:
  // Written at every frame by take: apart from the start of the object and from the settings
  // look reads (frame_consumer::look).
  alignas(64) std::uint64_t frames = 0;
};

int run_dump(const CLI::App& app, dump_settings& s) {
  scaleup::app::session_settings ss = s.session;
  ss.engine.fcs = s.fcs == "yes"  ? dissect::fcs_mode::present
                  : s.fcs == "no" ? dissect::fcs_mode::absent
                                  : dissect::fcs_mode::detect;
  // The progress line only where it cannot mix with the frames on one terminal.
  ss.progress = !::isatty(1);
  scaleup::app::session se(ss);
  if (const auto bad = se.prepare()) return fail_usage(app, *bad);
  if (s.json) s.as = format::json;
  if (s.verbose && s.as == format::summary) s.as = format::verbose;
  if (s.as == format::fields && s.fields.empty())
    return fail_usage(app, "-T fields needs at least one -e NAME");
  if (s.as != format::fields && !s.fields.empty()) return fail_usage(app, "-e needs -T fields");
  for (const auto& f : s.fields)
    if (!dissect::is_field_name(f, se.options().profile))
      return fail_usage(app, "-e: no field is named '" + f + "'");
  dissect::field_layout layout;
  if (const auto bad = read_field_options(s.field_options, layout)) return fail_usage(app, *bad);

  stdout_sink out;
  dump_output d(s, layout, out);
  const auto end = se.run(d);
  out.flush();
  if (se.live()) {
    fmt::print(stderr, "{} frame{} captured\n", static_cast<unsigned long long>(d.frames),
               d.frames == 1 ? "" : "s");
    if (const auto drops = se.drops())
      fmt::print(stderr, "capture: {}\n", report_notes::drops_text(*drops));
  }
  // Frames are all dissected; what the flow limit changed is said, as the other reports do.
  if (se.flows().not_remembered())
    fmt::print(stderr, "scaleup: {}\n", report_notes::flows_text(se.flows()));
  return end == scaleup::app::read_end::whole ? 0 : 1;
}

}  // namespace

void add_dump(CLI::App& parent, commands& out) {
  auto s = std::make_shared<dump_settings>();
  CLI::App* app = parent.add_subcommand(
      "dump",
      "Dissect a capture: one summary line per frame (and one per packed command), a field tree "
      "with -V, JSON Lines with --json, chosen fields with -T fields -e NAME. No UDP port is "
      "SUE's: SUE over UDP is found on every --udp-port, and elsewhere when the payload is a "
      "plausible RH (unless --no-heuristics).");
  add_input_options(app, s->session.source);
  app->add_flag("-v,-V,--verbose", s->verbose, "the field tree of every frame");
  app->add_flag("--json", s->json, "JSON Lines: one object per frame (as -T json)");
  add_choice<format>(
      app, "-T", s->as,
      {{"text", format::summary}, {"json", format::json}, {"fields", format::fields}},
      "output format: text, json or fields");
  app->add_option("-e", s->fields, "a field for -T fields, by its display-filter name")
      ->allow_extra_args(false);
  app->add_option("-E", s->field_options,
                  "-T fields options as tshark's: header=y|n, separator=C|/t|/s, occurrence=f|l|a, "
                  "aggregator=C|/s, quote=d|s|n, escape=y|n, bom=y|n")
      ->allow_extra_args(false);
  app->add_flag("-q", s->quiet, "print no frames (with -i or -w: capture only)");
  add_engine_options(app, s->session.engine);
  app->add_option("--fcs", s->fcs, "whether Ethernet frames end in an FCS")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  add_thread_options(app, s->session);
  add_filter_option(app, s->session.filter, scaleup::app::filter_scope::shown,
                    "print only the frames it keeps, numbered as in the capture; the sequence "
                    "analysis (sue.analysis.*) and the conformance rules (sue.check.*) it names "
                    "are run over every frame, as tshark's one pass does");
  out.push_back({app, [app, s] { return run_dump(*app, *s); }});
}

}  // namespace scaleup::cli
